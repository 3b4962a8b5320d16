//! The trailer (record kind 0x23), written when a log of whole objects is closed. Only its first
//! fields are understood; the rest is kept as bytes.
//!
//! ```text
//! +0x00 FILETIME  time of the first sample (local)
//! +0x08 FILETIME  time of the last sample (local)
//! +0x10 u32       number of samples
//! +0x14 u32       number of counter-list entries
//! +0x18 u32       length of the trailer
//! +0x1C u32       0x000005FF (meaning unknown)
//! +0x20           one "BL" 03 05 sub-record per entry (an 800-byte one for LogicalDisk, …); their
//!                 bodies start with two numbers that match the object's instance count (−1 for none)
//!                 and counter count, then lists that look like counter indexes and types: not decoded
//! ```

use super::read::{le_i64, le_u32};
use super::sample::{SAMPLE_SIGNATURE, SUB_RECORD_HEADER_LEN};
use crate::format::read::{fixed, Reader};
use crate::format::structure;
use crate::format::{DecodeError, ErrorKind};

/// Length of the trailer's fixed part.
pub const TRAILER_HEADER_LEN: usize = 0x20;

const S: &str = structure::PDH_TRAILER;

/// The trailer record.
#[derive(Clone, Copy, Debug)]
pub struct Trailer<'a> {
    data: &'a [u8],
}

impl<'a> Trailer<'a> {
    /// Parses and checks a trailer: the fixed part, and the framing of the sub-records that follow
    /// it up to the declared length. Offsets in errors are relative to `data`.
    pub fn parse(data: &'a [u8]) -> Result<Trailer<'a>, DecodeError> {
        let b = Reader::new(data);
        b.bytes(S, 0, TRAILER_HEADER_LEN)?;
        let end = (le_u32(data, 0x18) as usize).clamp(TRAILER_HEADER_LEN, data.len());
        let mut at = TRAILER_HEADER_LEN;
        while at < end {
            let head = b.bytes(S, at, 4).map(|b| fixed::<4>(b, 0))?;
            let len = b.u32(S, at + 4)? as usize;
            if head[..3] != SAMPLE_SIGNATURE {
                return Err(DecodeError::new(
                    S,
                    at,
                    ErrorKind::BadSignature {
                        field: "signature",
                        found: Box::new(head),
                        expected: "\"BL\" 03 followed by the sub-record kind",
                    },
                ));
            }
            if len < SUB_RECORD_HEADER_LEN || len > end - at {
                return Err(DecodeError::new(
                    S,
                    at,
                    ErrorKind::SizeExceedsParent {
                        size: len as u64,
                        available: (end - at) as u64,
                    },
                ));
            }
            at += len;
        }
        Ok(Trailer { data })
    }

    /// Time of the first sample (local FILETIME).
    pub fn first_time(&self) -> i64 {
        le_i64(self.data, 0)
    }

    /// Time of the last sample (local FILETIME).
    pub fn last_time(&self) -> i64 {
        le_i64(self.data, 8)
    }

    /// Number of samples the writer counted.
    pub fn samples(&self) -> u32 {
        le_u32(self.data, 0x10)
    }

    /// Number of counter-list entries.
    pub fn entries(&self) -> u32 {
        le_u32(self.data, 0x14)
    }

    /// The declared length of the trailer.
    pub fn length(&self) -> u32 {
        le_u32(self.data, 0x18)
    }

    /// The field at 0x1C (0x5FF in the one trailer seen).
    pub fn tag(&self) -> u32 {
        le_u32(self.data, 0x1C)
    }

    /// The sub-records after the fixed part: `(kind, body, offset of the body in the record)`.
    pub fn sub_records(&self) -> impl Iterator<Item = (u8, &'a [u8], usize)> + 'a {
        let data = self.data;
        let end = (le_u32(data, 0x18) as usize).clamp(TRAILER_HEADER_LEN, data.len());
        let mut at = TRAILER_HEADER_LEN;
        std::iter::from_fn(move || {
            if at + SUB_RECORD_HEADER_LEN > end {
                return None;
            }
            let kind = *data.get(at + 3)?;
            let len = le_u32(data, at + 4) as usize;
            if len < SUB_RECORD_HEADER_LEN || len > end - at {
                return None;
            }
            let body = data.get(at + SUB_RECORD_HEADER_LEN..at + len)?;
            let offset = at + SUB_RECORD_HEADER_LEN;
            at += len;
            Some((kind, body, offset))
        })
    }
}
