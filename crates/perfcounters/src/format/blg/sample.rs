//! Samples (record kind 0x22): one sub-record per counter-list entry, in list order.
//!
//! ```text
//! "BL" 03 00, u32 total length
//! then per entry: "BL" 03 kind, u32 length (8-byte header included), body:
//!   kind 1  PDH_RAW_COUNTER (40 bytes, natural alignment):
//!           u32 CStatus, FILETIME TimeStamp (local), 4 pad, i64 FirstValue, i64 SecondValue,
//!           u32 MultiCount, 4 pad
//!   kind 2  the instances of a wildcard counter:
//!           u32 size (the body's length), u32 count, u32 CStatus, u32 reserved, FILETIME TimeStamp,
//!           count × {u32 NameOffset (from the body's start), u32 MultiCount, i64 FirstValue,
//!           i64 SecondValue}, then the NUL-terminated UTF-16 instance names
//!   kind 5  a whole V1 PERF_DATA_BLOCK holding one object with all its instances
//! ```

use super::layout::{
    pdh_raw_counter as prc, raw_counter_array as rca, raw_counter_item as rci, sample as sl,
    sub_record as sr,
};
use super::read::{le_i64, le_u32, shift, utf16_lossy, utf16_terminated};
use crate::format::read::{check_min_size, check_size, fixed, Reader};
use crate::format::structure;
use crate::format::v1::PerfDataBlock;
use crate::format::{DecodeError, ErrorKind};
use crate::raw::RawCounter;
use crate::status::PdhStatus;

const SAMPLE: &str = structure::PDH_SAMPLE;
const SUB: &str = structure::PDH_SUB_RECORD;
const RAW: &str = structure::PDH_RAW_COUNTER;
const ARRAY: &str = structure::PDH_RAW_COUNTER_ARRAY;

/// A checked sample record: the framing of every sub-record and the fixed layouts of kinds 1 and 2
/// were validated when it was parsed, so iterating it cannot fail. V1 blocks (kind 5) are parsed when
/// asked for, with [`BlockRecord::parse`].
#[derive(Clone, Copy, Debug)]
pub struct PdhSample<'a> {
    data: &'a [u8],
    count: usize,
    trailing: usize,
}

impl<'a> PdhSample<'a> {
    /// Parses and checks a sample record. Offsets in errors are relative to `data`.
    pub fn parse(data: &'a [u8]) -> Result<PdhSample<'a>, DecodeError> {
        let b = Reader::new(data);
        let head = b.bytes(SAMPLE, 0, 4).map(|b| fixed::<4>(b, 0))?;
        if head[..3] != sl::SIGNATURE || head[sl::KIND] != 0 {
            return Err(DecodeError::new(
                SAMPLE,
                0,
                ErrorKind::BadSignature {
                    field: "signature",
                    found: Box::new(head),
                    expected: "\"BL\" 03 00",
                },
            ));
        }
        let total = b.u32(SAMPLE, sl::TOTAL)? as usize;
        check_min_size(SAMPLE, sl::TOTAL, total as u64, sl::LEN as u64)?;
        if total > data.len() {
            return Err(DecodeError::new(
                SAMPLE,
                0,
                ErrorKind::SizeExceedsParent {
                    size: total as u64,
                    available: data.len() as u64,
                },
            ));
        }
        let body = &data[..total];
        let mut at = sl::LEN;
        let mut count = 0usize;
        while at < total {
            let (kind, len) = match valid_sub_header(body, at) {
                Some(header) => header,
                None => sub_header(body, at)?,
            };
            let sub = &body[at + sr::LEN..at + len];
            let body_at = at + sr::LEN;
            if kind == sr::KIND_COUNTER && sub.len() != prc::LEN {
                return Err(DecodeError::new(
                    RAW,
                    body_at,
                    ErrorKind::InvalidValue {
                        field: "sub-record length",
                        value: len as i64,
                        rule: "not 48 (a 40-byte PDH_RAW_COUNTER and its header)",
                    },
                ));
            }
            if kind == sr::KIND_INSTANCES {
                InstanceArray::check(sub, body_at)?;
            }
            at += len;
            count += 1;
        }
        Ok(PdhSample {
            data: body,
            count,
            trailing: data.len() - total,
        })
    }

    /// Number of sub-records.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the sample has no sub-record.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes of the record after the sample's declared total length (0 in every log seen).
    pub fn trailing_bytes(&self) -> usize {
        self.trailing
    }

    /// The sub-records, in counter-list order.
    pub fn sub_records(&self) -> SubRecords<'a> {
        SubRecords {
            data: self.data,
            at: sl::LEN,
        }
    }
}

/// Reads and checks the sub-record header at `at`: its signature and a length between the header
/// length and the bytes left.
fn sub_header(data: &[u8], at: usize) -> Result<(u8, usize), DecodeError> {
    let b = Reader::new(data);
    let head = b.bytes(SUB, at, 4).map(|b| fixed::<4>(b, 0))?;
    if head[..3] != sl::SIGNATURE {
        return Err(DecodeError::new(
            SUB,
            at,
            ErrorKind::BadSignature {
                field: "signature",
                found: Box::new(head),
                expected: "\"BL\" 03 followed by the sub-record kind",
            },
        ));
    }
    let len = b.u32(SUB, at + sr::SIZE)? as usize;
    check_size(
        SUB,
        at,
        len as u64,
        sr::LEN as u64,
        false,
        b.remaining(at) as u64,
    )?;
    Ok((head[sr::KIND], len))
}

/// [`sub_header`]'s result when every one of its checks passes, read without its error paths
/// (they cost a tenth of decoding a sample); `None` otherwise, for [`sub_header`] to name the fault.
#[inline]
fn valid_sub_header(data: &[u8], at: usize) -> Option<(u8, usize)> {
    let head = data.get(at..at.checked_add(sr::LEN)?)?;
    let len = le_u32(head, sr::SIZE) as usize;
    (head[..3] == sl::SIGNATURE && len >= sr::LEN && len <= data.len() - at)
        .then_some((head[sr::KIND], len))
}

/// The sub-records of a [`PdhSample`].
#[derive(Clone, Debug)]
pub struct SubRecords<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Iterator for SubRecords<'a> {
    type Item = SubRecord<'a>;

    fn next(&mut self) -> Option<SubRecord<'a>> {
        // The framing (signatures, lengths within the sample) was checked by `PdhSample::parse`, so
        // only the kind and length are read here (the checks again cost a tenth of decoding a
        // sample); a length that does not frame a body still ends the iteration.
        let head = self.data.get(self.at..self.at + sr::LEN)?;
        let kind = head[sr::KIND];
        let len = le_u32(head, sr::SIZE) as usize;
        let offset = self.at + sr::LEN;
        let body = self.data.get(offset..self.at.checked_add(len)?)?;
        self.at += len;
        Some(match kind {
            sr::KIND_COUNTER => SubRecord::Counter(RawCounterRecord::read(body, offset)),
            sr::KIND_INSTANCES => SubRecord::Instances(InstanceArray::read(body, offset)),
            sr::KIND_BLOCK => SubRecord::Block(BlockRecord {
                bytes: body,
                offset,
            }),
            kind => SubRecord::Unknown { kind, body, offset },
        })
    }
}

impl std::iter::FusedIterator for SubRecords<'_> {}

/// One sub-record of a sample.
#[derive(Clone, Copy, Debug)]
pub enum SubRecord<'a> {
    /// Kind 1: one raw value.
    Counter(RawCounterRecord),
    /// Kind 2: the instances of a wildcard counter.
    Instances(InstanceArray<'a>),
    /// Kind 5: a whole V1 `PERF_DATA_BLOCK`.
    Block(BlockRecord<'a>),
    /// A kind this reader does not know.
    Unknown {
        /// The kind byte.
        kind: u8,
        /// The body.
        body: &'a [u8],
        /// Offset of the body in the record.
        offset: usize,
    },
}

impl SubRecord<'_> {
    /// The kind byte (1, 2, 5, or an unknown value).
    pub fn kind(&self) -> u8 {
        match self {
            SubRecord::Counter(_) => sr::KIND_COUNTER,
            SubRecord::Instances(_) => sr::KIND_INSTANCES,
            SubRecord::Block(_) => sr::KIND_BLOCK,
            SubRecord::Unknown { kind, .. } => *kind,
        }
    }
}

/// A stored `PDH_RAW_COUNTER`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawCounterRecord {
    /// `CStatus`.
    pub status: PdhStatus,
    /// `TimeStamp`: local time, a FILETIME.
    pub time_stamp: i64,
    /// `FirstValue`.
    pub first: i64,
    /// `SecondValue`.
    pub second: i64,
    /// `MultiCount`.
    pub multi_count: u32,
    /// Offset of the structure in the record.
    pub offset: usize,
}

impl RawCounterRecord {
    fn read(body: &[u8], offset: usize) -> RawCounterRecord {
        RawCounterRecord {
            status: PdhStatus(le_u32(body, prc::C_STATUS)),
            time_stamp: le_i64(body, prc::TIME_STAMP),
            first: le_i64(body, prc::FIRST_VALUE),
            second: le_i64(body, prc::SECOND_VALUE),
            multi_count: le_u32(body, prc::MULTI_COUNT),
            offset,
        }
    }

    /// The value as the calculator takes it (`time` left 0: the record time is the sample's).
    pub fn raw(&self) -> RawCounter {
        RawCounter::new(self.first, self.second).with_multi(self.multi_count)
    }
}

/// The instances of a wildcard counter in one sample (`PdhGetRawCounterArray`'s result, stored).
#[derive(Clone, Copy, Debug)]
pub struct InstanceArray<'a> {
    body: &'a [u8],
    /// Offset of the body in the record.
    pub offset: usize,
}

/// The bytes of the longest instance name with its terminator: `PERF_MAX_INSTANCE_NAME` (1,024)
/// UTF-16 code units and a NUL.
const LONGEST_NAME: usize = 2 * (crate::format::v2::PERF_MAX_INSTANCE_NAME as usize + 1);

impl<'a> InstanceArray<'a> {
    /// Checks the body: its size field, the item count against the bytes, every name offset and
    /// terminator. `offset` is the body's offset in the record, for errors.
    fn check(body: &[u8], offset: usize) -> Result<(), DecodeError> {
        Self::check_names_within(body, offset, LONGEST_NAME)
    }

    /// [`check`](Self::check), a name's terminator looked for at most `longest` bytes far.
    fn check_names_within(body: &[u8], offset: usize, longest: usize) -> Result<(), DecodeError> {
        let b = Reader::new(body);
        let relocate = |e: DecodeError| shift(e, offset);
        b.bytes(ARRAY, 0, rca::LEN).map_err(relocate)?;
        let size = le_u32(body, rca::SIZE) as usize;
        if size > body.len() || size < rca::LEN {
            return Err(DecodeError::new(
                ARRAY,
                offset,
                ErrorKind::InvalidValue {
                    field: "size",
                    value: size as i64,
                    rule: "not between the 24-byte header and the sub-record's length",
                },
            ));
        }
        let count = u64::from(le_u32(body, rca::COUNT));
        let fits = ((size - rca::LEN) / rci::LEN) as u64;
        if count > fits {
            return Err(DecodeError::new(
                ARRAY,
                offset + rca::COUNT,
                ErrorKind::CountTooLarge { count, fits },
            ));
        }
        let names_start = rca::LEN + count as usize * rci::LEN;
        for i in 0..count as usize {
            let item = rca::LEN + i * rci::LEN;
            let name_offset = le_u32(body, item + rci::NAME_OFFSET) as usize;
            if name_offset < names_start || name_offset >= size {
                return Err(DecodeError::new(
                    ARRAY,
                    offset + item,
                    ErrorKind::OffsetOutOfRange {
                        offset: name_offset as u32,
                    },
                ));
            }
            // A name is at most `PERF_MAX_INSTANCE_NAME` characters (PDH's `PDH_MAX_INSTANCE_NAME`
            // too): its terminator is looked for that far and no further, so that an array of many
            // items pointing into one long name is not read name by name to the end of it.
            let bound = size.min(name_offset.saturating_add(longest));
            if utf16_terminated(&body[name_offset..bound]).is_none() {
                return Err(DecodeError::new(
                    ARRAY,
                    offset + name_offset,
                    ErrorKind::UnterminatedString,
                ));
            }
        }
        Ok(())
    }

    fn read(body: &'a [u8], offset: usize) -> InstanceArray<'a> {
        let size = (le_u32(body, rca::SIZE) as usize).min(body.len());
        InstanceArray {
            body: &body[..size],
            offset,
        }
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        le_u32(self.body, rca::COUNT) as usize
    }

    /// Whether there is no instance.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `CStatus` of the whole array.
    pub fn status(&self) -> PdhStatus {
        PdhStatus(le_u32(self.body, rca::C_STATUS))
    }

    /// The field after the status (0 in every log seen).
    pub fn reserved(&self) -> u32 {
        le_u32(self.body, rca::RESERVED)
    }

    /// `TimeStamp`: local time, a FILETIME.
    pub fn time_stamp(&self) -> i64 {
        le_i64(self.body, rca::TIME_STAMP)
    }

    /// The bytes after the items, where their names are stored. Two arrays with the same count,
    /// the same name offsets ([`item_values`](Self::item_values)) and the same bytes here name the
    /// same instances in the same order.
    pub fn names_region(&self) -> &'a [u8] {
        let start = rca::LEN + self.len() * rci::LEN;
        self.body.get(start..).unwrap_or_default()
    }

    /// Each item's name offset (in the array's body) and value, in stored order, without reading
    /// the names: for a list of instances known to be the previous sample's.
    pub fn item_values(&self) -> impl ExactSizeIterator<Item = (u32, RawCounter)> + 'a {
        let body = self.body;
        (0..self.len()).map(move |i| {
            let at = rca::LEN + i * rci::LEN;
            let raw = RawCounter::new(
                le_i64(body, at + rci::FIRST_VALUE),
                le_i64(body, at + rci::SECOND_VALUE),
            )
            .with_multi(le_u32(body, at + rci::MULTI_COUNT));
            (le_u32(body, at + rci::NAME_OFFSET), raw)
        })
    }

    /// The instances in stored order.
    pub fn items(&self) -> InstanceItems<'a> {
        InstanceItems {
            body: self.body,
            next: 0,
            count: self.len(),
        }
    }
}

/// The items of an [`InstanceArray`].
#[derive(Clone, Debug)]
pub struct InstanceItems<'a> {
    body: &'a [u8],
    next: usize,
    count: usize,
}

impl<'a> Iterator for InstanceItems<'a> {
    type Item = InstanceItem<'a>;

    fn next(&mut self) -> Option<InstanceItem<'a>> {
        if self.next >= self.count {
            return None;
        }
        let at = rca::LEN + self.next * rci::LEN;
        self.next += 1;
        let name_offset = le_u32(self.body, at + rci::NAME_OFFSET) as usize;
        let name = self
            .body
            .get(name_offset..)
            .and_then(utf16_terminated)
            .unwrap_or_default();
        Some(InstanceItem {
            name,
            multi_count: le_u32(self.body, at + rci::MULTI_COUNT),
            first: le_i64(self.body, at + rci::FIRST_VALUE),
            second: le_i64(self.body, at + rci::SECOND_VALUE),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.count.saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for InstanceItems<'_> {}
impl std::iter::FusedIterator for InstanceItems<'_> {}

/// One instance of an [`InstanceArray`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceItem<'a> {
    name: &'a [u8],
    /// `MultiCount`.
    pub multi_count: u32,
    /// `FirstValue`.
    pub first: i64,
    /// `SecondValue`.
    pub second: i64,
}

impl InstanceItem<'_> {
    /// The instance name as stored (duplicates are not numbered).
    pub fn name(&self) -> String {
        utf16_lossy(self.name)
    }

    /// The name's UTF-16LE bytes, without the terminator.
    pub fn name_bytes(&self) -> &[u8] {
        self.name
    }

    /// The value as the calculator takes it.
    pub fn raw(&self) -> RawCounter {
        RawCounter::new(self.first, self.second).with_multi(self.multi_count)
    }
}

/// A whole V1 `PERF_DATA_BLOCK` stored as a sub-record.
#[derive(Clone, Copy, Debug)]
pub struct BlockRecord<'a> {
    /// The block's bytes.
    pub bytes: &'a [u8],
    /// Offset of the block in the record.
    pub offset: usize,
}

impl<'a> BlockRecord<'a> {
    /// Parses the block with the V1 decoder; offsets in errors are relative to the record.
    pub fn parse(&self) -> Result<PerfDataBlock<'a>, DecodeError> {
        PerfDataBlock::parse(self.bytes).map_err(|e| shift(e, self.offset))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// An array of one item named by `units` code units and a NUL.
    fn one_name(units: usize) -> Vec<u8> {
        let names_start = rca::LEN + rci::LEN;
        let mut body = vec![0u8; names_start];
        body.extend(std::iter::repeat_n([b'a', 0], units).flatten());
        body.extend_from_slice(&[0, 0]);
        let size = body.len() as u32;
        body[rca::SIZE..rca::SIZE + 4].copy_from_slice(&size.to_le_bytes());
        body[rca::COUNT..rca::COUNT + 4].copy_from_slice(&1u32.to_le_bytes());
        let at = rca::LEN + rci::NAME_OFFSET;
        body[at..at + 4].copy_from_slice(&(names_start as u32).to_le_bytes());
        body
    }

    #[test]
    fn instance_names_are_at_most_perf_max_instance_name_long() {
        let names_start = rca::LEN + rci::LEN;
        assert_eq!(InstanceArray::check(&one_name(1024), 100), Ok(()));
        let array = one_name(1024);
        let read = InstanceArray::read(&array, 100);
        assert_eq!(read.items().next().map(|i| i.name().len()), Some(1024));
        assert_eq!(
            InstanceArray::check(&one_name(1025), 100),
            Err(DecodeError::new(
                ARRAY,
                100 + names_start,
                ErrorKind::UnterminatedString
            ))
        );
    }

    proptest! {
        /// An instance array is accepted or refused, with the same error, as when every name is
        /// read to its terminator: arrays of up to four items whose names region (shorter than the
        /// longest name) holds NULs at random places (odd ones included), name offsets anywhere in
        /// or around it.
        #[test]
        fn instance_array_check_agrees_with_reading_every_name(
            count in 0usize..5,
            region in prop::collection::vec(prop::sample::select(vec![0u8, 0, 0, b'a', 1]), 0..24),
            offsets in prop::collection::vec(0usize..160, 4),
            cut in 0usize..4,
        ) {
            let names_start = rca::LEN + count * rci::LEN;
            let mut body = vec![0u8; names_start];
            body.extend_from_slice(&region);
            let size = body.len().saturating_sub(cut).max(rca::LEN);
            body[rca::SIZE..rca::SIZE + 4].copy_from_slice(&(size as u32).to_le_bytes());
            body[rca::COUNT..rca::COUNT + 4].copy_from_slice(&(count as u32).to_le_bytes());
            for (i, &o) in offsets.iter().take(count).enumerate() {
                // Mostly inside the names region, sometimes before it or past it.
                let o = if o < 140 { names_start + o % (region.len() + 1) } else { o - 140 + size - 10 };
                let at = rca::LEN + i * rci::LEN + rci::NAME_OFFSET;
                body[at..at + 4].copy_from_slice(&(o as u32).to_le_bytes());
            }
            // Arrays the header's checks refuse (size, count) never reach the names.
            let expected = if size > body.len() || size < rca::LEN || size < names_start {
                None
            } else {
                Some(InstanceArray::check_names_within(&body, 100, usize::MAX))
            };
            if let Some(expected) = expected {
                prop_assert_eq!(InstanceArray::check(&body, 100), expected);
            }
        }

        /// The quick sub-record header read succeeds exactly when the checked one does, with the
        /// same kind and length (headers of every signature, kind and length around the bytes
        /// left, at every offset).
        #[test]
        fn valid_sub_header_agrees_with_sub_header(
            tail in prop::collection::vec(any::<u8>(), 0..24),
            signature in any::<bool>(),
            kind in any::<u8>(),
            len in prop::sample::select(vec![0u32, 7, 8, 9, 16, 24, 31, 32, 40, u32::MAX]),
            at in 0usize..12,
        ) {
            let mut data = vec![0u8; at];
            if signature {
                data.extend_from_slice(&sl::SIGNATURE);
            } else {
                data.extend_from_slice(b"BL\x04");
            }
            data.push(kind);
            data.extend_from_slice(&len.to_le_bytes());
            data.extend_from_slice(&tail);
            for end in [at, at + 3, at + 7, data.len()] {
                let data = &data[..end.min(data.len())];
                for at in [0, at] {
                    prop_assert_eq!(valid_sub_header(data, at), sub_header(data, at).ok());
                }
            }
        }
    }
}
