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

use super::layout::{sample, sub_record, trailer as tl};
use super::read::{le_i64, le_u32};
use crate::format::read::{fixed, Reader};
use crate::format::structure;
use crate::format::{DecodeError, ErrorKind};

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
        b.bytes(S, 0, tl::LEN)?;
        let end = (le_u32(data, tl::SIZE) as usize).clamp(tl::LEN, data.len());
        let mut at = tl::LEN;
        while at < end {
            let head = b.bytes(S, at, 4).map(|b| fixed::<4>(b, 0))?;
            let len = b.u32(S, at + sub_record::SIZE)? as usize;
            if head[..3] != sample::SIGNATURE {
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
            if len < sub_record::LEN || len > end - at {
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
        le_i64(self.data, tl::FIRST_TIME)
    }

    /// Time of the last sample (local FILETIME).
    pub fn last_time(&self) -> i64 {
        le_i64(self.data, tl::LAST_TIME)
    }

    /// Number of samples the writer counted.
    pub fn samples(&self) -> u32 {
        le_u32(self.data, tl::SAMPLES)
    }

    /// Number of counter-list entries.
    pub fn entries(&self) -> u32 {
        le_u32(self.data, tl::ENTRIES)
    }

    /// The declared length of the trailer.
    pub fn length(&self) -> u32 {
        le_u32(self.data, tl::SIZE)
    }

    /// The field after the length ([`tl::FLAGS_SEEN`] in the one trailer seen).
    pub fn tag(&self) -> u32 {
        le_u32(self.data, tl::FLAGS)
    }

    /// The sub-records after the fixed part: `(kind, body, offset of the body in the record)`.
    pub fn sub_records(&self) -> impl Iterator<Item = (u8, &'a [u8], usize)> + 'a {
        let data = self.data;
        let end = (le_u32(data, tl::SIZE) as usize).clamp(tl::LEN, data.len());
        let mut at = tl::LEN;
        std::iter::from_fn(move || {
            if at + sub_record::LEN > end {
                return None;
            }
            let kind = *data.get(at + sub_record::KIND)?;
            let len = le_u32(data, at + sub_record::SIZE) as usize;
            if len < sub_record::LEN || len > end - at {
                return None;
            }
            let body = data.get(at + sub_record::LEN..at + len)?;
            let offset = at + sub_record::LEN;
            at += len;
            Some((kind, body, offset))
        })
    }
}
