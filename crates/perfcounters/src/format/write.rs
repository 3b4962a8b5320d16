//! The byte writer shared by every binary encoder of the crate: appends in a byte order, pads to 8,
//! and writes at earlier positions (size and offset fields known only after what follows is written).

use super::error::EncodeError;
use super::read::Endian;
use crate::snapshot::SystemTime;

/// A growable byte buffer with a byte order.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    buf: Vec<u8>,
    endian: Endian,
}

impl Writer {
    /// An empty writer in the given byte order.
    pub(crate) fn new(endian: Endian) -> Self {
        Writer {
            buf: Vec::new(),
            endian,
        }
    }

    /// A writer that appends to `buf` after clearing it (its allocation is reused; take it back
    /// with [`into_bytes`](Self::into_bytes)).
    pub(crate) fn reuse(mut buf: Vec<u8>, endian: Endian) -> Self {
        buf.clear();
        Writer { buf, endian }
    }

    /// The bytes written so far.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Forgets what was written, keeping the allocation.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
    }

    /// The bytes written.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// The number of bytes written: the position of the next one.
    pub(crate) fn pos(&self) -> usize {
        self.buf.len()
    }

    /// Appends a `u16`.
    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&self.endian.u16_bytes(v));
    }

    /// Appends a `u32`.
    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&self.endian.u32_bytes(v));
    }

    /// Appends a `u64`.
    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&self.endian.u64_bytes(v));
    }

    /// Appends an `i64`.
    pub(crate) fn i64(&mut self, v: i64) {
        self.u64(v as u64);
    }

    /// Appends bytes as they are.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Appends `n` zero bytes (room for a structure whose fields are written with the `put_*` methods).
    pub(crate) fn zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }

    /// `byte` up to `len` bytes in all (nothing when `len` bytes are already written).
    pub(crate) fn fill_to(&mut self, len: usize, byte: u8) {
        if len > self.buf.len() {
            self.buf.resize(len, byte);
        }
    }

    /// Zero bytes up to the next multiple of 8 (relative to the buffer start).
    pub(crate) fn pad8(&mut self) {
        let padded = self.buf.len().next_multiple_of(8);
        self.buf.resize(padded, 0);
    }

    /// Appends `s` as NUL-terminated UTF-16; a NUL inside `s` is [`EncodeError::InteriorNul`] for
    /// `structure`.
    pub(crate) fn utf16z(&mut self, s: &str, structure: &'static str) -> Result<(), EncodeError> {
        if s.contains('\0') {
            return Err(EncodeError::InteriorNul { structure });
        }
        self.utf16(s);
        self.u16(0);
        Ok(())
    }

    /// Appends the UTF-16 code units of `s` as they are (no terminator, no check).
    pub(crate) fn utf16(&mut self, s: &str) {
        for u in s.encode_utf16() {
            self.u16(u);
        }
    }

    /// Overwrites the bytes at `at` (already written). Callers write inside what they appended
    /// before; a range past the end is ignored.
    pub(crate) fn put(&mut self, at: usize, bytes: &[u8]) {
        let end = at.saturating_add(bytes.len());
        if let Some(dst) = self.buf.get_mut(at..end) {
            dst.copy_from_slice(bytes);
        }
    }

    /// Appends a `SYSTEMTIME` (8 × `WORD`).
    pub(crate) fn system_time(&mut self, t: &SystemTime) {
        self.bytes(&self.endian.system_time_bytes(t));
    }

    /// Overwrites the `SYSTEMTIME` at `at`.
    pub(crate) fn put_system_time(&mut self, at: usize, t: &SystemTime) {
        self.put(at, &self.endian.system_time_bytes(t));
    }

    /// Overwrites the `u16`s starting at `at`.
    pub(crate) fn put_u16s(&mut self, at: usize, v: &[u16]) {
        for (i, x) in v.iter().enumerate() {
            self.put(at + 2 * i, &self.endian.u16_bytes(*x));
        }
    }

    /// Overwrites the `u32` at `at`.
    pub(crate) fn put_u32(&mut self, at: usize, v: u32) {
        self.put(at, &self.endian.u32_bytes(v));
    }

    /// Overwrites the `i32` at `at`.
    pub(crate) fn put_i32(&mut self, at: usize, v: i32) {
        self.put_u32(at, v as u32);
    }

    /// Overwrites the `u64` at `at`.
    pub(crate) fn put_u64(&mut self, at: usize, v: u64) {
        self.put(at, &self.endian.u64_bytes(v));
    }

    /// Overwrites the `i64` at `at`.
    pub(crate) fn put_i64(&mut self, at: usize, v: i64) {
        self.put_u64(at, v as u64);
    }

    /// Overwrites the `u32` at `at` with the number of bytes written since `at` (a size field that
    /// starts its structure); [`EncodeError::TooLarge`] for `structure` past 4 GiB.
    pub(crate) fn put_size(
        &mut self,
        at: usize,
        structure: &'static str,
    ) -> Result<(), EncodeError> {
        let size = to_u32(self.pos().saturating_sub(at), structure)?;
        self.put_u32(at, size);
        Ok(())
    }
}

/// A length or count as a 32-bit field of `structure`; [`EncodeError::TooLarge`] if it does not fit.
pub(crate) fn to_u32(n: usize, structure: &'static str) -> Result<u32, EncodeError> {
    u32::try_from(n).map_err(|_| EncodeError::TooLarge { structure })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_pads_and_patches() {
        let mut w = Writer::new(Endian::Big);
        w.u32(0);
        w.u16(0x0102);
        w.pad8();
        assert_eq!(w.pos(), 8);
        w.put_size(0, "S").unwrap();
        let t = SystemTime {
            year: 2026,
            month: 11,
            day_of_week: 0,
            day: 22,
            hour: 9,
            minute: 30,
            second: 15,
            milliseconds: 250,
        };
        let mut st = Writer::default();
        st.zeros(2);
        st.system_time(&t);
        let bytes = st.into_bytes();
        assert_eq!(bytes.len(), 18);
        assert_eq!(Endian::Little.system_time_at(&bytes, 2), t);
        let mut st = Writer::new(Endian::Big);
        st.zeros(16);
        st.put_system_time(0, &t);
        assert_eq!(Endian::Big.system_time_at(&st.into_bytes(), 0), t);
        w.put_u16s(4, &[0xA0B0]);
        w.put_u32(6, 7); // past the end: ignored
        w.utf16z("a", "S").unwrap();
        assert_eq!(
            w.into_bytes(),
            [0, 0, 0, 8, 0xA0, 0xB0, 0, 0, 0, b'a', 0, 0]
        );
        let mut w = Writer::default();
        w.i64(-2);
        w.zeros(2);
        assert_eq!(w.pos(), 10);
        assert_eq!(
            w.utf16z("a\0", "S"),
            Err(EncodeError::InteriorNul { structure: "S" })
        );
        assert_eq!(to_u32(1 << 20, "S"), Ok(1 << 20));
    }
}
