//! Bounds-checked little-endian reads.
//!
//! Every read goes through [`Reader`], which checks the requested range against the buffer with checked
//! arithmetic and reports failures as a [`DecodeError`] naming the structure and the absolute byte offset
//! (from the start of the buffer handed to the decoder).

use std::fmt;

use crate::format::{DecodeError, ErrorKind};

/// A window `[start, end)` of a byte buffer. Offsets passed to its methods are absolute (indexes into
/// the whole buffer), so errors carry absolute offsets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl<'a> Reader<'a> {
    /// The whole buffer.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            start: 0,
            end: buf.len(),
        }
    }

    /// Bytes left in the window from `offset` on (0 if `offset` is past the end).
    pub(crate) fn remaining(&self, offset: usize) -> usize {
        self.end.saturating_sub(offset)
    }

    /// The bytes `[offset, offset + len)`, which must lie inside the window.
    pub(crate) fn bytes(
        &self,
        structure: &'static str,
        offset: usize,
        len: usize,
    ) -> Result<&'a [u8], DecodeError> {
        let truncated = || {
            DecodeError::new(
                structure,
                offset,
                ErrorKind::Truncated {
                    needed: len as u64,
                    available: self.remaining(offset) as u64,
                },
            )
        };
        if offset < self.start {
            return Err(truncated());
        }
        let end = offset.checked_add(len).ok_or_else(truncated)?;
        if end > self.end {
            return Err(truncated());
        }
        self.buf.get(offset..end).ok_or_else(truncated)
    }

    /// Checks that a structure of `len` bytes at `offset` fits in the window.
    pub(crate) fn need(
        &self,
        structure: &'static str,
        offset: usize,
        len: usize,
    ) -> Result<(), DecodeError> {
        self.bytes(structure, offset, len).map(|_| ())
    }

    /// A sub-window `[offset, offset + len)`; `len` comes from a size field of `structure`, so a range
    /// past the window is reported as [`ErrorKind::SizeExceedsParent`].
    pub(crate) fn sub(
        &self,
        structure: &'static str,
        offset: usize,
        len: u64,
    ) -> Result<Reader<'a>, DecodeError> {
        let available = self.remaining(offset) as u64;
        if len > available || offset < self.start {
            return Err(DecodeError::new(
                structure,
                offset,
                ErrorKind::SizeExceedsParent {
                    size: len,
                    available,
                },
            ));
        }
        // len <= available = end - offset, so this cannot overflow.
        let end = offset + len as usize;
        Ok(Reader {
            buf: self.buf,
            start: offset,
            end,
        })
    }

    pub(crate) fn u32(&self, s: &'static str, offset: usize) -> Result<u32, DecodeError> {
        let b = self.bytes(s, offset, 4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(u32::from_le_bytes(a))
    }

    pub(crate) fn u64(&self, s: &'static str, offset: usize) -> Result<u64, DecodeError> {
        let b = self.bytes(s, offset, 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub(crate) fn i64(&self, s: &'static str, offset: usize) -> Result<i64, DecodeError> {
        self.u64(s, offset).map(|v| v as i64)
    }
}

/// Reads a little-endian `u32` from a slice already known to hold `offset + 4` bytes; 0 otherwise.
pub(crate) fn le_u32(b: &[u8], offset: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = offset.checked_add(4).and_then(|end| b.get(offset..end)) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

/// Reads a little-endian `u64` from a slice already known to hold `offset + 8` bytes; 0 otherwise.
pub(crate) fn le_u64(b: &[u8], offset: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = offset.checked_add(8).and_then(|end| b.get(offset..end)) {
        a.copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

/// Checks a size field: at least `minimum`, optionally a multiple of 8, and within `available`.
pub(crate) fn check_size(
    structure: &'static str,
    offset: usize,
    size: u64,
    minimum: u64,
    aligned: bool,
    available: u64,
) -> Result<(), DecodeError> {
    if size < minimum {
        return Err(DecodeError::new(
            structure,
            offset,
            ErrorKind::SizeTooSmall { size, minimum },
        ));
    }
    if aligned && size % 8 != 0 {
        return Err(DecodeError::new(
            structure,
            offset,
            ErrorKind::SizeNotAligned { size },
        ));
    }
    if size > available {
        return Err(DecodeError::new(
            structure,
            offset,
            ErrorKind::SizeExceedsParent { size, available },
        ));
    }
    Ok(())
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
        let units = bytes.len() / 2;
        for i in 0..units {
            let at = i * 2;
            if bytes.get(at..at + 2) == Some(&[0, 0][..]) {
                return bytes.get(..at).map(|b| Utf16Str { bytes: b });
            }
        }
        None
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
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
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
