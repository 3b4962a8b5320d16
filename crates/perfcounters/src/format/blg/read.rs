//! Helpers of the `.blg` decoder on top of the shared reader ([`crate::format::read`]).

use crate::format::read::{utf16_until_nul, Endian, Utf16Str};
use crate::format::DecodeError;

/// The same error `base` bytes further into the file (a structure's offset in its buffer, event or
/// record turned into an offset in the enclosing one).
pub(crate) fn shift(e: DecodeError, base: usize) -> DecodeError {
    DecodeError::new(
        e.structure(),
        e.offset().saturating_add(base),
        e.kind().clone(),
    )
}

/// The little-endian `u32` at `at` of an already-checked structure (0 outside it).
#[inline]
pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    Endian::Little.u32_at(b, at)
}

/// The little-endian `i64` at `at` of an already-checked structure (0 outside it).
#[inline]
pub(crate) fn le_i64(b: &[u8], at: usize) -> i64 {
    Endian::Little.i64_at(b, at)
}

/// The UTF-16LE bytes of the NUL-terminated string at the start of `bytes` (without the NUL), or
/// `None` when no NUL code unit occurs in it.
pub(crate) fn utf16_terminated(bytes: &[u8]) -> Option<&[u8]> {
    Utf16Str::terminated(bytes).map(|s| s.as_bytes())
}

/// Decodes UTF-16LE bytes up to the first NUL (the whole slice when there is none), replacing
/// unpaired surrogates with U+FFFD.
pub(crate) fn utf16_lossy(bytes: &[u8]) -> String {
    utf16_until_nul(bytes, Endian::Little)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ErrorKind;

    #[test]
    fn helpers() {
        assert_eq!(utf16_terminated(b"a\0b\0\0\0c\0"), Some(&b"a\0b\0"[..]));
        assert_eq!(utf16_terminated(b"a\0b\0c"), None);
        assert_eq!(utf16_lossy(b"x\0\0\0y\0"), "x");
        assert_eq!(utf16_lossy(&[0x00, 0xD8, b'a', 0]), "\u{FFFD}a");
        assert_eq!(le_u32(&[1, 2], 0), 0);
        assert_eq!(le_i64(&[1, 0, 0, 0, 0, 0, 0, 0], 0), 1);
        let e = shift(DecodeError::new("X", 4, ErrorKind::UnterminatedString), 100);
        assert_eq!((e.structure(), e.offset()), ("X", 104));
    }
}
