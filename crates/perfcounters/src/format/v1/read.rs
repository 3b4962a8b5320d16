//! Bounds-checked little/big-endian reads on untrusted bytes.
//!
//! Every function returns `None` or a [`DecodeError`] instead of panicking: offsets are added with
//! checked arithmetic and slices are taken with `get`.

use crate::format::{DecodeError, ErrorKind};

/// Byte order of the integers in a block (`PERF_DATA_BLOCK.LittleEndian`).
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
}

/// Converts a 32-bit length or offset from the data to `usize` (saturating on targets narrower than
/// 32 bits, where it then fails the following bounds check).
#[inline]
pub(crate) fn to_usize(v: u32) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// The `len` bytes at `offset`, or `None` if they are not all inside `data`.
#[inline]
pub fn bytes_at(data: &[u8], offset: usize, len: usize) -> Option<&[u8]> {
    data.get(offset..offset.checked_add(len)?)
}

/// The `N` bytes at `offset` as a fixed-size array reference, or `None` if they are not inside `data`.
#[inline]
pub fn array_at<const N: usize>(data: &[u8], offset: usize) -> Option<&[u8; N]> {
    bytes_at(data, offset, N)?.try_into().ok()
}

/// Copies the `M` bytes at the constant field offset `at` of an already bounds-checked structure.
///
/// Callers only pass offsets with `at + M <= N`; if one did not, the result would be zeros rather than
/// a panic.
#[inline]
pub(crate) fn field<const N: usize, const M: usize>(s: &[u8; N], at: usize) -> [u8; M] {
    let mut out = [0u8; M];
    if let Some(src) = bytes_at(s, at, M) {
        out.copy_from_slice(src);
    }
    out
}

/// Reads a `u16` at `offset`; the error names `structure` at that offset.
pub fn u16_at(
    data: &[u8],
    offset: usize,
    endian: Endian,
    structure: &'static str,
) -> Result<u16, DecodeError> {
    array_at::<2>(data, offset)
        .map(|b| endian.u16(*b))
        .ok_or_else(|| out_of_bounds(data, offset, 2, structure))
}

/// Reads a `u32` at `offset`; the error names `structure` at that offset.
pub fn u32_at(
    data: &[u8],
    offset: usize,
    endian: Endian,
    structure: &'static str,
) -> Result<u32, DecodeError> {
    array_at::<4>(data, offset)
        .map(|b| endian.u32(*b))
        .ok_or_else(|| out_of_bounds(data, offset, 4, structure))
}

/// Reads a `u64` at `offset`; the error names `structure` at that offset.
pub fn u64_at(
    data: &[u8],
    offset: usize,
    endian: Endian,
    structure: &'static str,
) -> Result<u64, DecodeError> {
    array_at::<8>(data, offset)
        .map(|b| endian.u64(*b))
        .ok_or_else(|| out_of_bounds(data, offset, 8, structure))
}

fn out_of_bounds(data: &[u8], offset: usize, len: usize, structure: &'static str) -> DecodeError {
    DecodeError::new(
        structure,
        offset,
        ErrorKind::Truncated {
            needed: len as u64,
            available: data.len().saturating_sub(offset) as u64,
        },
    )
}

/// Decodes UTF-16 code units in `endian` order up to the first NUL (or the end), replacing unpaired
/// surrogates with U+FFFD. An odd trailing byte is ignored.
pub fn utf16_until_nul(bytes: &[u8], endian: Endian) -> String {
    let units = bytes
        .chunks_exact(2)
        .map(|c| {
            endian.u16([
                c.first().copied().unwrap_or(0),
                c.get(1).copied().unwrap_or(0),
            ])
        })
        .take_while(|&u| u != 0);
    char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked() {
        let data = [1u8, 0, 0, 0, 0, 0, 0, 2];
        assert_eq!(u32_at(&data, 0, Endian::Little, "X"), Ok(1));
        assert_eq!(u32_at(&data, 4, Endian::Big, "X"), Ok(2));
        assert_eq!(
            u64_at(&data, 0, Endian::Little, "X"),
            Ok(0x0200_0000_0000_0001)
        );
        assert_eq!(u16_at(&data, 6, Endian::Big, "X"), Ok(2));
        let e = u32_at(&data, 5, Endian::Little, "X").unwrap_err();
        assert_eq!(
            e.to_string(),
            "X at offset 5: truncated: needs 4 bytes, 3 available"
        );
        assert!(u32_at(&data, usize::MAX - 1, Endian::Little, "X").is_err());
        assert_eq!(bytes_at(&data, usize::MAX, 2), None);
        assert_eq!(array_at::<8>(&data, 1), None);
    }

    #[test]
    fn utf16_stops_at_nul() {
        let le = [b'a', 0, b'b', 0, 0, 0, b'c', 0, 7];
        assert_eq!(utf16_until_nul(&le, Endian::Little), "ab");
        let be = [0, b'x', 0xD8, 0x00, 0, b'y'];
        assert_eq!(utf16_until_nul(&be, Endian::Big), "x\u{FFFD}y");
    }
}
