//! Encoding helpers: a little-endian writer and 8-byte padding.

use crate::format::EncodeError;

/// A growable little-endian byte writer.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn pos(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Zero bytes up to the next multiple of 8 (relative to the buffer start).
    pub(crate) fn pad8(&mut self) {
        while self.buf.len() % 8 != 0 {
            self.buf.push(0);
        }
    }

    /// NUL-terminated UTF-16LE.
    pub(crate) fn utf16z(&mut self, s: &str, structure: &'static str) -> Result<(), EncodeError> {
        if s.contains('\0') {
            return Err(EncodeError::InteriorNul { structure });
        }
        for u in s.encode_utf16() {
            self.u16(u);
        }
        self.u16(0);
        Ok(())
    }

    /// Overwrites the `u32` at `at` with the number of bytes written since `at` (a size field).
    pub(crate) fn patch_size(
        &mut self,
        at: usize,
        structure: &'static str,
    ) -> Result<(), EncodeError> {
        let size = self.buf.len() - at;
        self.patch_u32(at, to_u32(size, structure)?);
        Ok(())
    }

    pub(crate) fn patch_u32(&mut self, at: usize, v: u32) {
        if let Some(slot) = self.buf.get_mut(at..at + 4) {
            slot.copy_from_slice(&v.to_le_bytes());
        }
    }
}

pub(crate) fn to_u32(n: usize, structure: &'static str) -> Result<u32, EncodeError> {
    u32::try_from(n).map_err(|_| EncodeError::TooLarge { structure })
}
