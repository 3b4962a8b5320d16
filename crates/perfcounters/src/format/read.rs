//! Bounds-checked reads of untrusted bytes, shared by every binary decoder of the crate.
//!
//! [`Reader`] is a window `[start, end)` of a buffer with a byte order. Its offsets are absolute
//! (indexes into the whole buffer), so a structure found anywhere in a nested walk reports the offset a
//! user sees in a hex dump. Every range is checked with checked arithmetic against the window; the
//! `Option` forms (`get`, `array`, `window`, `slice`) let a decoder attach its own [`ErrorKind`], the
//! `Result` forms report [`ErrorKind::Truncated`] or [`ErrorKind::SizeExceedsParent`].
//!
//! Fields of a structure whose bounds were already checked are read with [`Endian::u32_at`] and
//! friends on the structure's bytes.

use std::fmt;

use super::error::{DecodeError, ErrorKind};
use crate::snapshot::SystemTime;

/// Byte order of the integers of a block (`PERF_DATA_BLOCK.LittleEndian`; every other format of the
/// crate is little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Endian {
    /// `LittleEndian` ≠ 0: every integer and UTF-16 code unit is little-endian.
    #[default]
    Little,
    /// `LittleEndian` = 0: every integer and UTF-16 code unit is big-endian.
    Big,
}

impl Endian {
    /// Decodes a 2-byte unsigned integer.
    #[inline]
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }

    /// Decodes a 4-byte unsigned integer.
    #[inline]
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }

    /// Decodes an 8-byte unsigned integer.
    #[inline]
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// Encodes a 2-byte unsigned integer.
    #[inline]
    pub fn u16_bytes(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    /// Encodes a 4-byte unsigned integer.
    #[inline]
    pub fn u32_bytes(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    /// Encodes an 8-byte unsigned integer.
    #[inline]
    pub fn u64_bytes(self, v: u64) -> [u8; 8] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    /// The `u16` at `at` of a structure whose bytes were already bounds-checked; 0 if `at` is outside
    /// `b` (which a caller passing a constant field offset of the structure never does).
    #[inline]
    pub(crate) fn u16_at(self, b: &[u8], at: usize) -> u16 {
        self.u16(fixed(b, at))
    }

    /// The `u32` at `at` of an already-checked structure; see [`Endian::u16_at`].
    #[inline]
    pub(crate) fn u32_at(self, b: &[u8], at: usize) -> u32 {
        self.u32(fixed(b, at))
    }

    /// The `i32` at `at` of an already-checked structure; see [`Endian::u16_at`].
    #[inline]
    pub(crate) fn i32_at(self, b: &[u8], at: usize) -> i32 {
        self.u32_at(b, at) as i32
    }

    /// The `u64` at `at` of an already-checked structure; see [`Endian::u16_at`].
    #[inline]
    pub(crate) fn u64_at(self, b: &[u8], at: usize) -> u64 {
        self.u64(fixed(b, at))
    }

    /// The `i64` at `at` of an already-checked structure; see [`Endian::u16_at`].
    #[inline]
    pub(crate) fn i64_at(self, b: &[u8], at: usize) -> i64 {
        self.u64_at(b, at) as i64
    }

    /// The `SYSTEMTIME` (8 × `WORD`, in the order of [`SystemTime::from_words`]) at `at` of an
    /// already-checked structure; see [`Endian::u16_at`].
    pub(crate) fn system_time_at(self, b: &[u8], at: usize) -> SystemTime {
        SystemTime::from_words(std::array::from_fn(|i| {
            self.u16_at(b, at.saturating_add(2 * i))
        }))
    }

    /// The 16 bytes of `t` as a `SYSTEMTIME`, the words in the order [`Endian::system_time_at`]
    /// reads them.
    pub(crate) fn system_time_bytes(self, t: &SystemTime) -> [u8; 16] {
        let mut out = [0u8; 16];
        for (dst, w) in out.chunks_exact_mut(2).zip(t.to_words()) {
            dst.copy_from_slice(&self.u16_bytes(w));
        }
        out
    }
}

/// Copies the `N` bytes at `at` of an already bounds-checked structure; zeros if they are not all
/// inside `b`.
#[inline]
pub(crate) fn fixed<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(src) = bytes_at(b, at, N) {
        out.copy_from_slice(src);
    }
    out
}

/// Converts a 32-bit length or offset from the data to `usize` (saturating on targets narrower than
/// 32 bits, where it then fails the following bounds check).
#[inline]
pub(crate) fn to_usize(v: u32) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// The `len` bytes at `offset` of `data`, or `None` if they are not all inside it.
#[inline]
pub(crate) fn bytes_at(data: &[u8], offset: usize, len: usize) -> Option<&[u8]> {
    data.get(offset..offset.checked_add(len)?)
}

/// A window `[start, end)` of a byte buffer and the byte order of its integers. Offsets passed to its
/// methods are absolute (indexes into the whole buffer) unless a method says otherwise, so errors carry
/// absolute offsets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    start: usize,
    end: usize,
    endian: Endian,
}

impl<'a> Reader<'a> {
    /// The whole buffer, little-endian.
    #[inline]
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self::with_endian(buf, Endian::Little)
    }

    /// The whole buffer in the given byte order.
    #[inline]
    pub(crate) fn with_endian(buf: &'a [u8], endian: Endian) -> Self {
        Reader {
            buf,
            start: 0,
            end: buf.len(),
            endian,
        }
    }

    /// The byte order.
    #[inline]
    pub(crate) fn endian(&self) -> Endian {
        self.endian
    }

    /// Absolute offset of the window's first byte.
    #[inline]
    pub(crate) fn start(&self) -> usize {
        self.start
    }

    /// Absolute offset just past the window.
    #[inline]
    pub(crate) fn end(&self) -> usize {
        self.end
    }

    /// The window's length.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    /// The window's bytes.
    #[inline]
    pub(crate) fn as_bytes(&self) -> &'a [u8] {
        self.buf.get(self.start..self.end).unwrap_or(&[])
    }

    /// Bytes left in the window from `offset` on (0 if `offset` is past the end).
    #[inline]
    pub(crate) fn remaining(&self, offset: usize) -> usize {
        self.end.saturating_sub(offset)
    }

    /// The bytes `[offset, offset + len)` if they lie inside the window.
    #[inline]
    pub(crate) fn get(&self, offset: usize, len: usize) -> Option<&'a [u8]> {
        let end = offset.checked_add(len)?;
        if offset < self.start || end > self.end {
            return None;
        }
        self.buf.get(offset..end)
    }

    /// The `len` bytes at `rel` bytes from the window's start, if they lie inside the window.
    #[inline]
    pub(crate) fn slice(&self, rel: usize, len: usize) -> Option<&'a [u8]> {
        self.get(self.start.checked_add(rel)?, len)
    }

    /// The `N` bytes at `offset` as an array reference, if they lie inside the window.
    #[inline]
    pub(crate) fn array<const N: usize>(&self, offset: usize) -> Option<&'a [u8; N]> {
        self.get(offset, N)?.try_into().ok()
    }

    /// The sub-window `[offset, offset + len)`, if it lies inside this one.
    #[inline]
    pub(crate) fn window(&self, offset: usize, len: usize) -> Option<Reader<'a>> {
        let end = offset.checked_add(len)?;
        if offset < self.start || end > self.end {
            return None;
        }
        Some(Reader {
            start: offset,
            end,
            ..*self
        })
    }

    /// The bytes `[offset, offset + len)`, which must lie inside the window; otherwise
    /// [`ErrorKind::Truncated`] for `structure` at `offset`.
    #[inline]
    pub(crate) fn bytes(
        &self,
        structure: &'static str,
        offset: usize,
        len: usize,
    ) -> Result<&'a [u8], DecodeError> {
        self.get(offset, len).ok_or_else(|| {
            DecodeError::new(
                structure,
                offset,
                ErrorKind::Truncated {
                    needed: len as u64,
                    available: self.remaining(offset) as u64,
                },
            )
        })
    }

    /// Checks that a structure of `len` bytes at `offset` fits in the window.
    #[inline]
    pub(crate) fn need(
        &self,
        structure: &'static str,
        offset: usize,
        len: usize,
    ) -> Result<(), DecodeError> {
        self.bytes(structure, offset, len).map(|_| ())
    }

    /// The size field of a structure that states its own size: checks that the `fixed` bytes at
    /// `offset` are there, reads the `u32` at `offset + size_at` and checks it with [`check_size`]
    /// (at least `minimum`, a multiple of 8 if `aligned`, within what the window holds from `offset`).
    #[inline]
    pub(crate) fn size_field(
        &self,
        structure: &'static str,
        offset: usize,
        fixed: usize,
        size_at: usize,
        minimum: usize,
        aligned: bool,
    ) -> Result<u32, DecodeError> {
        self.need(structure, offset, fixed)?;
        let size = self.u32(structure, offset + size_at)?;
        check_size(
            structure,
            offset,
            u64::from(size),
            minimum as u64,
            aligned,
            self.remaining(offset) as u64,
        )?;
        Ok(size)
    }

    /// A sub-window `[offset, offset + len)`; `len` comes from a size field of `structure`, so a range
    /// past the window is reported as [`ErrorKind::SizeExceedsParent`].
    pub(crate) fn sub(
        &self,
        structure: &'static str,
        offset: usize,
        len: u64,
    ) -> Result<Reader<'a>, DecodeError> {
        usize::try_from(len)
            .ok()
            .and_then(|len| self.window(offset, len))
            .ok_or_else(|| {
                DecodeError::new(
                    structure,
                    offset,
                    ErrorKind::SizeExceedsParent {
                        size: len,
                        available: self.remaining(offset) as u64,
                    },
                )
            })
    }

    /// The byte at `offset`.
    #[inline]
    pub(crate) fn u8(&self, structure: &'static str, offset: usize) -> Result<u8, DecodeError> {
        let b = self.bytes(structure, offset, 1)?;
        Ok(b.first().copied().unwrap_or(0))
    }

    /// The `u16` at `offset`, in the window's byte order.
    #[inline]
    pub(crate) fn u16(&self, structure: &'static str, offset: usize) -> Result<u16, DecodeError> {
        let b = self.bytes(structure, offset, 2)?;
        Ok(self.endian.u16_at(b, 0))
    }

    /// The `i32` at `offset`, in the window's byte order.
    #[inline]
    pub(crate) fn i32(&self, structure: &'static str, offset: usize) -> Result<i32, DecodeError> {
        self.u32(structure, offset).map(|v| v as i32)
    }

    /// The `u32` at `offset`, in the window's byte order.
    #[inline]
    pub(crate) fn u32(&self, structure: &'static str, offset: usize) -> Result<u32, DecodeError> {
        let b = self.bytes(structure, offset, 4)?;
        Ok(self.endian.u32_at(b, 0))
    }

    /// The `u64` at `offset`, in the window's byte order.
    #[inline]
    pub(crate) fn u64(&self, structure: &'static str, offset: usize) -> Result<u64, DecodeError> {
        let b = self.bytes(structure, offset, 8)?;
        Ok(self.endian.u64_at(b, 0))
    }

    /// The `SYSTEMTIME` (16 bytes) at `offset`, in the window's byte order.
    pub(crate) fn system_time(
        &self,
        structure: &'static str,
        offset: usize,
    ) -> Result<SystemTime, DecodeError> {
        let b = self.bytes(structure, offset, 16)?;
        Ok(self.endian.system_time_at(b, 0))
    }

    /// The `i64` at `offset`, in the window's byte order.
    #[inline]
    pub(crate) fn i64(&self, structure: &'static str, offset: usize) -> Result<i64, DecodeError> {
        self.u64(structure, offset).map(|v| v as i64)
    }
}

/// Checks a size field: at least `minimum`, optionally a multiple of 8, and within `available`.
#[inline]
pub(crate) fn check_size(
    structure: &'static str,
    offset: usize,
    size: u64,
    minimum: u64,
    aligned: bool,
    available: u64,
) -> Result<(), DecodeError> {
    check_min_size(structure, offset, size, minimum)?;
    let kind = if aligned && !size.is_multiple_of(8) {
        ErrorKind::SizeNotAligned { size }
    } else if size > available {
        ErrorKind::SizeExceedsParent { size, available }
    } else {
        return Ok(());
    };
    Err(DecodeError::new(structure, offset, kind))
}

/// Checks that a size field of `structure` at `offset` is at least `minimum`
/// ([`ErrorKind::SizeTooSmall`] otherwise).
#[inline]
pub(crate) fn check_min_size(
    structure: &'static str,
    offset: usize,
    size: u64,
    minimum: u64,
) -> Result<(), DecodeError> {
    if size < minimum {
        return Err(DecodeError::new(
            structure,
            offset,
            ErrorKind::SizeTooSmall { size, minimum },
        ));
    }
    Ok(())
}

/// Decodes UTF-16 code units in `endian` order up to the first NUL (or the end), replacing unpaired
/// surrogates with U+FFFD. An odd trailing byte is ignored.
pub(crate) fn utf16_until_nul(bytes: &[u8], endian: Endian) -> String {
    let mut out = String::new();
    utf16_until_nul_into(bytes, endian, &mut out);
    out
}

/// [`utf16_until_nul`] appending to `out`, so a caller decoding many names can reuse one buffer.
///
/// Names in performance data are nearly always ASCII: those are copied one byte per code unit with
/// no further decoding; any other code unit switches to full UTF-16 decoding from that point on.
pub(crate) fn utf16_until_nul_into(bytes: &[u8], endian: Endian, out: &mut String) {
    out.reserve(bytes.len() / 2);
    let mut units = bytes
        .chunks_exact(2)
        .map(|c| match c {
            [a, b] => endian.u16([*a, *b]),
            _ => 0,
        })
        .take_while(|&u| u != 0);
    while let Some(u) = units.next() {
        match u8::try_from(u) {
            Ok(b) if b.is_ascii() => out.push(char::from(b)),
            _ => {
                // Decode everything from the first non-ASCII unit on.
                out.extend(
                    char::decode_utf16(std::iter::once(u).chain(units))
                        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER)),
                );
                return;
            }
        }
    }
}

/// A NUL-terminated UTF-16LE string borrowed from a buffer (without the terminator).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Utf16Str<'a> {
    bytes: &'a [u8],
}

impl<'a> Utf16Str<'a> {
    /// Finds the NUL-terminated string at the start of `bytes`. `None` if no NUL code unit occurs
    /// within `bytes` (an odd trailing byte is ignored).
    pub(crate) fn terminated(bytes: &'a [u8]) -> Option<Self> {
        let nul = bytes.chunks_exact(2).position(|c| c == [0, 0])?;
        bytes.get(..nul * 2).map(|b| Utf16Str { bytes: b })
    }

    /// The raw UTF-16LE bytes, without the terminator.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of UTF-16 code units (without the terminator).
    pub fn len(&self) -> usize {
        self.bytes.len() / 2
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The UTF-16 code units.
    pub fn units(&self) -> impl Iterator<Item = u16> + 'a {
        self.bytes
            .chunks_exact(2)
            .map(|c| Endian::Little.u16_at(c, 0))
    }

    /// The string, with unpaired surrogates replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        char::decode_utf16(self.units())
            .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }
}

impl fmt::Debug for Utf16Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Display for Utf16Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked() {
        let data = [1u8, 0, 0, 0, 0, 0, 0, 2];
        let le = Reader::new(&data);
        let be = Reader::with_endian(&data, Endian::Big);
        assert_eq!(le.u32("X", 0), Ok(1));
        assert_eq!(be.u32("X", 4), Ok(2));
        assert_eq!(le.u64("X", 0), Ok(0x0200_0000_0000_0001));
        assert_eq!(Endian::Big.u16_at(be.get(6, 2).unwrap(), 0), 2);
        let e = le.u32("X", 5).unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(
                "X",
                5,
                ErrorKind::Truncated {
                    needed: 4,
                    available: 3
                }
            )
        );
        assert_eq!(
            e.to_string(),
            "X at offset 5: truncated: needs 4 bytes, 3 available"
        );
        assert!(le.u32("X", usize::MAX - 1).is_err());
        assert_eq!(le.get(usize::MAX, 2), None);
        assert_eq!(le.array::<8>(1), None);
        assert_eq!(bytes_at(&data, usize::MAX, 2), None);
    }

    #[test]
    fn windows_keep_absolute_offsets() {
        let data: Vec<u8> = (0..16).collect();
        let r = Reader::new(&data);
        let w = r.window(4, 8).unwrap();
        assert_eq!((w.start(), w.end(), w.len()), (4, 12, 8));
        assert_eq!(w.as_bytes(), &data[4..12]);
        assert_eq!(w.get(4, 2), Some(&data[4..6]));
        assert_eq!(w.slice(0, 2), Some(&data[4..6]));
        assert_eq!(w.get(2, 4), None, "before the window");
        assert_eq!(w.get(10, 4), None, "past the window");
        assert_eq!(w.slice(usize::MAX, 1), None);
        assert_eq!(w.remaining(10), 2);
        assert!(r.window(12, 8).is_none());
        let e = w.sub("Y", 8, 8).unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(
                "Y",
                8,
                ErrorKind::SizeExceedsParent {
                    size: 8,
                    available: 4
                }
            )
        );
        assert_eq!(w.u32("Y", 4), Ok(u32::from_le_bytes([4, 5, 6, 7])));
        assert_eq!(Endian::Big.u32_at(&data, 4), 0x0405_0607);
        assert_eq!(Endian::Little.u32_at(&data, 14), 0, "outside: zero");
    }

    #[test]
    fn size_checks() {
        assert_eq!(check_size("S", 8, 16, 16, true, 16), Ok(()));
        let kind = |size, available| {
            check_size("S", 8, size, 16, true, available)
                .unwrap_err()
                .kind()
                .clone()
        };
        assert_eq!(
            kind(8, 64),
            ErrorKind::SizeTooSmall {
                size: 8,
                minimum: 16
            }
        );
        assert_eq!(kind(20, 64), ErrorKind::SizeNotAligned { size: 20 });
        assert_eq!(
            kind(72, 64),
            ErrorKind::SizeExceedsParent {
                size: 72,
                available: 64
            }
        );
    }

    #[test]
    fn utf16_stops_at_nul() {
        let le = [b'a', 0, b'b', 0, 0, 0, b'c', 0, 7];
        assert_eq!(utf16_until_nul(&le, Endian::Little), "ab");
        let be = [0, b'x', 0xD8, 0x00, 0, b'y'];
        assert_eq!(utf16_until_nul(&be, Endian::Big), "x\u{FFFD}y");
        let s = Utf16Str::terminated(&le).unwrap();
        assert_eq!((s.to_string(), s.len()), ("ab".to_string(), 2));
        assert_eq!(Utf16Str::terminated(&le[..3]), None);
        // ASCII, then other characters: the fast path hands over mid-name, surrogate pairs included.
        let units: Vec<u16> = "ab\u{e9}c\u{1F600}d\0z".encode_utf16().collect();
        let mixed_le: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
        let mixed_be: Vec<u8> = units.iter().flat_map(|u| u.to_be_bytes()).collect();
        assert_eq!(
            utf16_until_nul(&mixed_le, Endian::Little),
            "ab\u{e9}c\u{1F600}d"
        );
        assert_eq!(
            utf16_until_nul(&mixed_be, Endian::Big),
            "ab\u{e9}c\u{1F600}d"
        );
        let mut reused = String::from("old");
        reused.clear();
        utf16_until_nul_into(&mixed_le[4..], Endian::Little, &mut reused);
        assert_eq!(reused, "\u{e9}c\u{1F600}d");
        // A lone high surrogate right after ASCII, and a name of only non-ASCII units.
        let lone: Vec<u8> = [0x61u16, 0xD800, 0x62]
            .iter()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(utf16_until_nul(&lone, Endian::Little), "a\u{FFFD}b");
        let greek: Vec<u8> = "\u{3b1}\u{3b2}"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(utf16_until_nul(&greek, Endian::Little), "\u{3b1}\u{3b2}");
    }
}
