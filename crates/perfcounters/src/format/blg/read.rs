//! Bounds-checked little-endian reads on the bytes of one buffer, event or record.
//!
//! Offsets are relative to the slice handed to [`Bytes::new`]; the caller adds the slice's position
//! in the file when it reports an error.

use crate::format::{DecodeError, ErrorKind};

/// A byte slice with checked reads that name the structure being read on failure.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bytes<'a> {
    pub(crate) data: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }

    /// Bytes left from `offset` on (0 past the end).
    pub(crate) fn remaining(&self, offset: usize) -> usize {
        self.data.len().saturating_sub(offset)
    }

    /// The bytes `[offset, offset + len)`.
    pub(crate) fn bytes(
        &self,
        structure: &'static str,
        offset: usize,
        len: usize,
    ) -> Result<&'a [u8], DecodeError> {
        offset
            .checked_add(len)
            .and_then(|end| self.data.get(offset..end))
            .ok_or_else(|| {
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

    pub(crate) fn array<const N: usize>(
        &self,
        structure: &'static str,
        offset: usize,
    ) -> Result<[u8; N], DecodeError> {
        let b = self.bytes(structure, offset, N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    pub(crate) fn u8(&self, s: &'static str, offset: usize) -> Result<u8, DecodeError> {
        self.array::<1>(s, offset).map(|a| a[0])
    }

    pub(crate) fn u16(&self, s: &'static str, offset: usize) -> Result<u16, DecodeError> {
        self.array(s, offset).map(u16::from_le_bytes)
    }

    pub(crate) fn u32(&self, s: &'static str, offset: usize) -> Result<u32, DecodeError> {
        self.array(s, offset).map(u32::from_le_bytes)
    }

    pub(crate) fn i32(&self, s: &'static str, offset: usize) -> Result<i32, DecodeError> {
        self.array(s, offset).map(i32::from_le_bytes)
    }

    pub(crate) fn u64(&self, s: &'static str, offset: usize) -> Result<u64, DecodeError> {
        self.array(s, offset).map(u64::from_le_bytes)
    }

    pub(crate) fn i64(&self, s: &'static str, offset: usize) -> Result<i64, DecodeError> {
        self.array(s, offset).map(i64::from_le_bytes)
    }
}

/// The same error `base` bytes further into the file (a structure's offset in its buffer, event or
/// record turned into an offset in the enclosing one).
pub(crate) fn shift(e: DecodeError, base: usize) -> DecodeError {
    DecodeError::new(
        e.structure(),
        e.offset().saturating_add(base),
        e.kind().clone(),
    )
}

/// Reads a little-endian `u32` from a slice already known to hold `offset + 4` bytes; 0 otherwise.
#[inline]
pub(crate) fn le_u32(b: &[u8], offset: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = offset.checked_add(4).and_then(|end| b.get(offset..end)) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

/// Reads a little-endian `i64` from a slice already known to hold `offset + 8` bytes; 0 otherwise.
#[inline]
pub(crate) fn le_i64(b: &[u8], offset: usize) -> i64 {
    let mut a = [0u8; 8];
    if let Some(s) = offset.checked_add(8).and_then(|end| b.get(offset..end)) {
        a.copy_from_slice(s);
    }
    i64::from_le_bytes(a)
}

/// The UTF-16LE bytes of the NUL-terminated string at the start of `bytes` (without the NUL), or
/// `None` when no NUL code unit occurs in it.
pub(crate) fn utf16_terminated(bytes: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    while let Some(pair) = bytes.get(at..at + 2) {
        if pair == [0, 0] {
            return bytes.get(..at);
        }
        at += 2;
    }
    None
}

/// Decodes UTF-16LE bytes (an odd trailing byte is ignored), replacing unpaired surrogates with
/// U+FFFD.
pub(crate) fn utf16_lossy(bytes: &[u8]) -> String {
    let units = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]));
    char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Decodes a fixed-size UTF-16LE field up to its first NUL (the whole field when there is none).
pub(crate) fn utf16_field(bytes: &[u8]) -> String {
    utf16_lossy(utf16_terminated(bytes).unwrap_or(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked() {
        let b = Bytes::new(&[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(b.u32("X", 0), Ok(1));
        assert_eq!(b.i32("X", 4), Ok(-1));
        assert_eq!(b.u16("X", 6), Ok(0xffff));
        let e = b.u64("X", 1).unwrap_err();
        assert_eq!(
            e,
            DecodeError::new(
                "X",
                1,
                ErrorKind::Truncated {
                    needed: 8,
                    available: 7
                }
            )
        );
        assert!(b.u32("X", usize::MAX).is_err());
        assert_eq!(le_u32(&[1, 2], 0), 0);
        assert_eq!(le_i64(&[1, 0, 0, 0, 0, 0, 0, 0], 0), 1);
    }

    #[test]
    fn utf16_strings() {
        assert_eq!(utf16_terminated(b"a\0b\0\0\0c\0"), Some(&b"a\0b\0"[..]));
        assert_eq!(utf16_terminated(b"a\0b\0c"), None);
        assert_eq!(utf16_field(b"x\0\0\0y\0"), "x");
        assert_eq!(utf16_field(b"x\0y\0"), "xy");
        assert_eq!(utf16_lossy(&[0x00, 0xD8, b'a', 0]), "\u{FFFD}a");
    }
}
