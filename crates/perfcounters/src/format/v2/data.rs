//! `PerfQueryCounterData` results: `PERF_DATA_HEADER` and the blocks it contains.
//!
//! Layout (all little-endian, every block 8-byte aligned):
//!
//! ```text
//! PERF_DATA_HEADER (48)            dwTotalSize, dwNumCounters, PerfTimeStamp, PerfTime100NSec, PerfFreq, SystemTime
//!   PERF_COUNTER_HEADER (16) × dwNumCounters, each dwSize bytes: dwStatus, dwType, dwSize, Reserved
//!     dwType 0 PERF_ERROR_RETURN        nothing
//!     dwType 1 PERF_SINGLE_COUNTER      PERF_COUNTER_DATA
//!     dwType 2 PERF_MULTIPLE_COUNTERS   PERF_MULTI_COUNTERS + ids, then dwCounters × PERF_COUNTER_DATA
//!     dwType 4 PERF_MULTIPLE_INSTANCES  PERF_MULTI_INSTANCES: dwInstances × (PERF_INSTANCE_HEADER + 1 PERF_COUNTER_DATA)
//!     dwType 6 PERF_COUNTERSET          PERF_MULTI_COUNTERS + ids, PERF_MULTI_INSTANCES with dwCounters values each
//! ```

use super::layout;
use crate::format::read::{Endian::Little as LE, Reader, Utf16Str};
use crate::format::structure;
use crate::format::{DecodeError, ErrorKind};
use crate::snapshot::{SystemTime, Value};

/// `PERF_ERROR_RETURN`: no payload, `dwStatus` holds the error.
pub const PERF_ERROR_RETURN: u32 = 0;
/// `PERF_SINGLE_COUNTER`: one counter of a single-instance counterset.
pub const PERF_SINGLE_COUNTER: u32 = 1;
/// `PERF_MULTIPLE_COUNTERS`: several counters of a single-instance counterset.
pub const PERF_MULTIPLE_COUNTERS: u32 = 2;
/// `PERF_MULTIPLE_INSTANCES`: one counter of every matching instance.
pub const PERF_MULTIPLE_INSTANCES: u32 = 4;
/// `PERF_COUNTERSET`: several counters of every matching instance.
pub const PERF_COUNTERSET: u32 = 6;

/// Size of `PERF_DATA_HEADER`.
pub const DATA_HEADER_SIZE: usize = 48;
/// Size of `PERF_COUNTER_HEADER`.
pub const COUNTER_HEADER_SIZE: usize = 16;
/// Size of `PERF_MULTI_COUNTERS` (without the ids).
pub const MULTI_COUNTERS_SIZE: usize = 8;
/// Size of `PERF_MULTI_INSTANCES`.
pub const MULTI_INSTANCES_SIZE: usize = 8;
/// Size of `PERF_INSTANCE_HEADER` (without the name).
pub const INSTANCE_HEADER_SIZE: usize = 8;
/// Size of `PERF_COUNTER_DATA` (without the value).
pub const COUNTER_DATA_SIZE: usize = 8;
/// Smallest `PERF_COUNTER_DATA.dwSize` accepted: header plus 8 bytes, as Microsoft's consumer sample
/// checks.
pub const MIN_COUNTER_DATA_BLOCK: usize = 16;

/// A decoded `PERF_DATA_HEADER` block (the result of `PerfQueryCounterData`), borrowing the buffer.
#[derive(Clone, Copy, Debug)]
pub struct DataHeader<'a> {
    r: Reader<'a>,
    num_counters: u32,
    perf_time_stamp: i64,
    perf_time_100ns: i64,
    perf_freq: i64,
    system_time: SystemTime,
}

impl<'a> DataHeader<'a> {
    /// Decodes the header at the start of `buf` and checks `dwTotalSize` (≥ 48, a multiple of 8, within
    /// `buf`). The counter blocks are checked as they are iterated ([`DataHeader::counters`]) or all at
    /// once by [`DataHeader::validate`].
    pub fn parse(buf: &'a [u8]) -> Result<Self, DecodeError> {
        let whole = Reader::new(buf);
        let total = whole.size_field(
            structure::PERF_DATA_HEADER,
            0,
            DATA_HEADER_SIZE,
            layout::DATA_HEADER_SIZE_AT,
            DATA_HEADER_SIZE,
            true,
        )?;
        let r = whole.sub(structure::PERF_DATA_HEADER, 0, u64::from(total))?;
        Ok(DataHeader {
            r,
            num_counters: r.u32(structure::PERF_DATA_HEADER, 4)?,
            perf_time_stamp: r.i64(structure::PERF_DATA_HEADER, 8)?,
            perf_time_100ns: r.i64(structure::PERF_DATA_HEADER, 16)?,
            perf_freq: r.i64(structure::PERF_DATA_HEADER, 24)?,
            system_time: r.system_time(structure::PERF_DATA_HEADER, 32)?,
        })
    }

    /// `dwTotalSize`.
    pub fn total_size(&self) -> u32 {
        (self.r.len()) as u32
    }

    /// `dwNumCounters`: the number of `PERF_COUNTER_HEADER` blocks.
    pub fn num_counters(&self) -> u32 {
        self.num_counters
    }

    /// `PerfTimeStamp`: the high-resolution clock (QPC ticks).
    pub fn perf_time_stamp(&self) -> i64 {
        self.perf_time_stamp
    }

    /// `PerfTime100NSec`: 100 ns intervals since 1601-01-01 UTC.
    pub fn perf_time_100ns(&self) -> i64 {
        self.perf_time_100ns
    }

    /// `PerfFreq`: ticks per second of `PerfTimeStamp`.
    pub fn perf_freq(&self) -> i64 {
        self.perf_freq
    }

    /// `SystemTime`: when the data was collected (UTC).
    pub fn system_time(&self) -> SystemTime {
        self.system_time
    }

    /// The `PERF_COUNTER_HEADER` blocks, walked by `dwSize`. The iterator yields an error and stops at
    /// the first malformed block (including `dwNumCounters` larger than the data).
    pub fn counters(&self) -> CounterHeaders<'a> {
        CounterHeaders {
            r: self.r,
            offset: self.r.start() + DATA_HEADER_SIZE,
            left: self.num_counters,
            index: 0,
            failed: false,
        }
    }

    /// Walks every block, instance and value, returning the first error.
    pub fn validate(&self) -> Result<(), DecodeError> {
        for header in self.counters() {
            let header = header?;
            match header.block() {
                CounterBlock::Error => {}
                CounterBlock::Single(_) => {}
                CounterBlock::MultipleCounters { values, .. } => {
                    for v in values.iter() {
                        v?;
                    }
                }
                CounterBlock::MultipleInstances(mi)
                | CounterBlock::CounterSet { instances: mi, .. } => {
                    for inst in mi.iter() {
                        for v in inst?.values().iter() {
                            v?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Iterator over the `PERF_COUNTER_HEADER` blocks of a [`DataHeader`].
#[derive(Clone, Debug)]
pub struct CounterHeaders<'a> {
    r: Reader<'a>,
    offset: usize,
    left: u32,
    index: u32,
    failed: bool,
}

impl<'a> Iterator for CounterHeaders<'a> {
    type Item = Result<CounterHeader<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.left == 0 {
            return None;
        }
        let item = CounterHeader::parse(&self.r, self.offset, self.index);
        match &item {
            Ok(h) => {
                self.left -= 1;
                self.index += 1;
                self.offset += h.size as usize;
            }
            Err(_) => self.failed = true,
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.failed {
            (0, Some(0))
        } else {
            (0, Some(self.left as usize))
        }
    }
}

/// One `PERF_COUNTER_HEADER` block: the result of one query specification.
#[derive(Clone, Copy, Debug)]
pub struct CounterHeader<'a> {
    offset: usize,
    index: u32,
    status: u32,
    data_type: u32,
    size: u32,
    reserved: u32,
    block: CounterBlock<'a>,
}

impl<'a> CounterHeader<'a> {
    fn parse(parent: &Reader<'a>, offset: usize, index: u32) -> Result<Self, DecodeError> {
        let size = parent.size_field(
            structure::PERF_COUNTER_HEADER,
            offset,
            COUNTER_HEADER_SIZE,
            layout::COUNTER_HEADER_SIZE_AT,
            COUNTER_HEADER_SIZE,
            true,
        )?;
        let status = parent.u32(structure::PERF_COUNTER_HEADER, offset)?;
        let data_type = parent.u32(structure::PERF_COUNTER_HEADER, offset + 4)?;
        let reserved = parent.u32(structure::PERF_COUNTER_HEADER, offset + 12)?;
        let r = parent.sub(structure::PERF_COUNTER_HEADER, offset, u64::from(size))?;
        let body = offset + COUNTER_HEADER_SIZE;
        let block = match data_type {
            PERF_ERROR_RETURN => CounterBlock::Error,
            PERF_SINGLE_COUNTER => CounterBlock::Single(CounterData::parse(&r, body)?),
            PERF_MULTIPLE_COUNTERS => {
                let ids = MultiCounters::parse(&r, body)?;
                let values = CounterDataList {
                    r,
                    offset: body + ids.size as usize,
                    count: ids.count(),
                };
                CounterBlock::MultipleCounters { ids, values }
            }
            PERF_MULTIPLE_INSTANCES => {
                CounterBlock::MultipleInstances(MultiInstances::parse(&r, body, 1)?)
            }
            PERF_COUNTERSET => {
                let ids = MultiCounters::parse(&r, body)?;
                let instances = MultiInstances::parse(&r, body + ids.size as usize, ids.count())?;
                CounterBlock::CounterSet { ids, instances }
            }
            value => {
                return Err(DecodeError::new(
                    structure::PERF_COUNTER_HEADER,
                    offset,
                    ErrorKind::UnknownType { value },
                ))
            }
        };
        Ok(CounterHeader {
            offset,
            index,
            status,
            data_type,
            size,
            reserved,
            block,
        })
    }

    /// Absolute offset of the block in the buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Position of the block among the header's blocks (the `Index` of the matching
    /// `PERF_COUNTER_IDENTIFIER`).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `dwStatus`: a Win32 error code (0 = success).
    pub fn status(&self) -> u32 {
        self.status
    }

    /// `dwType` (one of the `PERF_*` data type constants of this module).
    pub fn data_type(&self) -> u32 {
        self.data_type
    }

    /// `dwSize`: header plus payload.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// `Reserved`.
    pub fn reserved(&self) -> u32 {
        self.reserved
    }

    /// The payload, typed by `dwType`.
    pub fn block(&self) -> CounterBlock<'a> {
        self.block
    }
}

/// The payload of a `PERF_COUNTER_HEADER` block.
#[derive(Clone, Copy, Debug)]
pub enum CounterBlock<'a> {
    /// `PERF_ERROR_RETURN`: no data; see [`CounterHeader::status`].
    Error,
    /// `PERF_SINGLE_COUNTER`: one value.
    Single(CounterData<'a>),
    /// `PERF_MULTIPLE_COUNTERS`: counter ids and one value per id.
    MultipleCounters {
        /// The counter ids.
        ids: MultiCounters<'a>,
        /// The values, in id order.
        values: CounterDataList<'a>,
    },
    /// `PERF_MULTIPLE_INSTANCES`: instances with one value each.
    MultipleInstances(MultiInstances<'a>),
    /// `PERF_COUNTERSET`: counter ids and instances with one value per id.
    CounterSet {
        /// The counter ids.
        ids: MultiCounters<'a>,
        /// The instances.
        instances: MultiInstances<'a>,
    },
}

/// A `PERF_MULTI_COUNTERS` block: `dwSize`, `dwCounters`, then `dwCounters` DWORD counter ids.
///
/// `dwSize` must cover the ids and fit in the enclosing block; it is not required to be a multiple of 8
/// (the documentation only says "structure plus ids"), and it is what locates the next structure.
#[derive(Clone, Copy, Debug)]
pub struct MultiCounters<'a> {
    offset: usize,
    size: u32,
    ids: &'a [u8],
}

impl<'a> MultiCounters<'a> {
    fn parse(parent: &Reader<'a>, offset: usize) -> Result<Self, DecodeError> {
        let size = parent.size_field(
            structure::PERF_MULTI_COUNTERS,
            offset,
            MULTI_COUNTERS_SIZE,
            layout::MULTI_COUNTERS_SIZE_AT,
            MULTI_COUNTERS_SIZE,
            false,
        )?;
        let count = parent.u32(structure::PERF_MULTI_COUNTERS, offset + 4)?;
        let fits = (u64::from(size) - MULTI_COUNTERS_SIZE as u64) / 4;
        if u64::from(count) > fits {
            return Err(DecodeError::new(
                structure::PERF_MULTI_COUNTERS,
                offset,
                ErrorKind::CountTooLarge {
                    count: u64::from(count),
                    fits,
                },
            ));
        }
        let ids = parent.bytes(
            structure::PERF_MULTI_COUNTERS,
            offset + MULTI_COUNTERS_SIZE,
            count as usize * 4,
        )?;
        Ok(MultiCounters { offset, size, ids })
    }

    /// Absolute offset.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// `dwSize`.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// `dwCounters`.
    pub fn count(&self) -> u32 {
        (self.ids.len() / 4) as u32
    }

    /// The counter id at position `i`.
    pub fn id(&self, i: usize) -> Option<u32> {
        let at = i.checked_mul(4)?;
        if at.checked_add(4)? > self.ids.len() {
            return None;
        }
        Some(LE.u32_at(self.ids, at))
    }

    /// The counter ids.
    pub fn ids(&self) -> impl Iterator<Item = u32> + 'a {
        self.ids
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    }
}

/// A `PERF_MULTI_INSTANCES` block: `dwTotalSize` (a multiple of 8), `dwInstances`, then the instance
/// data blocks.
#[derive(Clone, Copy, Debug)]
pub struct MultiInstances<'a> {
    r: Reader<'a>,
    count: u32,
    values_per_instance: u32,
}

impl<'a> MultiInstances<'a> {
    fn parse(
        parent: &Reader<'a>,
        offset: usize,
        values_per_instance: u32,
    ) -> Result<Self, DecodeError> {
        let size = parent.size_field(
            structure::PERF_MULTI_INSTANCES,
            offset,
            MULTI_INSTANCES_SIZE,
            layout::MULTI_INSTANCES_SIZE_AT,
            MULTI_INSTANCES_SIZE,
            true,
        )?;
        let count = parent.u32(structure::PERF_MULTI_INSTANCES, offset + 4)?;
        let r = parent.sub(structure::PERF_MULTI_INSTANCES, offset, u64::from(size))?;
        Ok(MultiInstances {
            r,
            count,
            values_per_instance,
        })
    }

    /// Absolute offset.
    pub fn offset(&self) -> usize {
        self.r.start()
    }

    /// `dwTotalSize`.
    pub fn total_size(&self) -> u32 {
        (self.r.len()) as u32
    }

    /// `dwInstances`.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Values per instance: 1 in a `PERF_MULTIPLE_INSTANCES` block, `dwCounters` in a
    /// `PERF_COUNTERSET` block.
    pub fn values_per_instance(&self) -> u32 {
        self.values_per_instance
    }

    /// The instance data blocks. The iterator yields an error and stops at the first malformed one.
    pub fn iter(&self) -> InstanceBlocks<'a> {
        InstanceBlocks {
            r: self.r,
            offset: self.r.start() + MULTI_INSTANCES_SIZE,
            left: self.count,
            per: self.values_per_instance,
            failed: false,
        }
    }
}

/// Iterator over the instance data blocks of a [`MultiInstances`].
#[derive(Clone, Debug)]
pub struct InstanceBlocks<'a> {
    r: Reader<'a>,
    offset: usize,
    left: u32,
    per: u32,
    failed: bool,
}

impl<'a> Iterator for InstanceBlocks<'a> {
    type Item = Result<InstanceBlock<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.left == 0 {
            return None;
        }
        let item = InstanceBlock::parse(&self.r, self.offset, self.per);
        match &item {
            Ok(b) => {
                self.left -= 1;
                self.offset = b.end;
            }
            Err(_) => self.failed = true,
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(if self.failed { 0 } else { self.left as usize }))
    }
}

/// One instance data block: a `PERF_INSTANCE_HEADER` block followed by its `PERF_COUNTER_DATA` blocks.
#[derive(Clone, Copy, Debug)]
pub struct InstanceBlock<'a> {
    header: InstanceHeader<'a>,
    values: CounterDataList<'a>,
    end: usize,
}

impl<'a> InstanceBlock<'a> {
    fn parse(parent: &Reader<'a>, offset: usize, per: u32) -> Result<Self, DecodeError> {
        let header = InstanceHeader::parse(parent, offset)?;
        let mut values = CounterDataList {
            r: *parent,
            offset: offset + header.size as usize,
            count: per,
        };
        // Walk the values now so the block's end is known (and every size checked).
        let mut end = values.offset;
        for v in values.iter() {
            let v = v?;
            end = v.offset + v.size as usize;
        }
        // Every value was checked to lie inside the parent.
        if let Some(r) = parent.window(values.offset, end - values.offset) {
            values.r = r;
        }
        Ok(InstanceBlock {
            header,
            values,
            end,
        })
    }

    /// The instance header (id and name).
    pub fn header(&self) -> InstanceHeader<'a> {
        self.header
    }

    /// `InstanceId`.
    pub fn id(&self) -> u32 {
        self.header.instance_id
    }

    /// The instance name.
    pub fn name(&self) -> Utf16Str<'a> {
        self.header.name
    }

    /// The values (already validated).
    pub fn values(&self) -> CounterDataList<'a> {
        self.values
    }
}

/// A `PERF_INSTANCE_HEADER` block: `Size` (header + NUL-terminated UTF-16 name + padding, a multiple of
/// 8), `InstanceId`.
#[derive(Clone, Copy, Debug)]
pub struct InstanceHeader<'a> {
    offset: usize,
    size: u32,
    instance_id: u32,
    name: Utf16Str<'a>,
}

impl<'a> InstanceHeader<'a> {
    pub(crate) fn parse(parent: &Reader<'a>, offset: usize) -> Result<Self, DecodeError> {
        let size = parent.size_field(
            structure::PERF_INSTANCE_HEADER,
            offset,
            INSTANCE_HEADER_SIZE,
            layout::INSTANCE_HEADER_SIZE_AT,
            INSTANCE_HEADER_SIZE,
            true,
        )?;
        let instance_id = parent.u32(structure::PERF_INSTANCE_HEADER, offset + 4)?;
        let name_bytes = parent.bytes(
            structure::PERF_INSTANCE_HEADER,
            offset + INSTANCE_HEADER_SIZE,
            size as usize - INSTANCE_HEADER_SIZE,
        )?;
        let name = Utf16Str::terminated(name_bytes).ok_or_else(|| {
            DecodeError::new(
                structure::PERF_INSTANCE_HEADER,
                offset,
                ErrorKind::UnterminatedString,
            )
        })?;
        Ok(InstanceHeader {
            offset,
            size,
            instance_id,
            name,
        })
    }

    /// Absolute offset.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// `Size`.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// `InstanceId`.
    pub fn instance_id(&self) -> u32 {
        self.instance_id
    }

    /// The instance name.
    pub fn name(&self) -> Utf16Str<'a> {
        self.name
    }
}

/// A run of `count` consecutive `PERF_COUNTER_DATA` blocks.
#[derive(Clone, Copy, Debug)]
pub struct CounterDataList<'a> {
    r: Reader<'a>,
    offset: usize,
    count: u32,
}

impl<'a> CounterDataList<'a> {
    /// Number of values.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The values. The iterator yields an error and stops at the first malformed one.
    pub fn iter(&self) -> CounterDataIter<'a> {
        CounterDataIter {
            r: self.r,
            offset: self.offset,
            left: self.count,
            failed: false,
        }
    }
}

/// Iterator over a [`CounterDataList`].
#[derive(Clone, Debug)]
pub struct CounterDataIter<'a> {
    r: Reader<'a>,
    offset: usize,
    left: u32,
    failed: bool,
}

impl<'a> Iterator for CounterDataIter<'a> {
    type Item = Result<CounterData<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.left == 0 {
            return None;
        }
        let item = CounterData::parse(&self.r, self.offset);
        match &item {
            Ok(d) => {
                self.left -= 1;
                self.offset += d.size as usize;
            }
            Err(_) => self.failed = true,
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(if self.failed { 0 } else { self.left as usize }))
    }
}

/// A `PERF_COUNTER_DATA` block: `dwDataSize`, `dwSize` (≥ 16, ≥ 8 + `dwDataSize`, a multiple of 8), the
/// raw value and padding.
#[derive(Clone, Copy, Debug)]
pub struct CounterData<'a> {
    offset: usize,
    size: u32,
    data: &'a [u8],
}

impl<'a> CounterData<'a> {
    fn parse(parent: &Reader<'a>, offset: usize) -> Result<Self, DecodeError> {
        let size = parent.size_field(
            structure::PERF_COUNTER_DATA,
            offset,
            COUNTER_DATA_SIZE,
            layout::COUNTER_DATA_SIZE_AT,
            MIN_COUNTER_DATA_BLOCK,
            true,
        )?;
        let data_size = parent.u32(structure::PERF_COUNTER_DATA, offset)?;
        if u64::from(data_size) > u64::from(size) - COUNTER_DATA_SIZE as u64 {
            return Err(DecodeError::new(
                structure::PERF_COUNTER_DATA,
                offset,
                ErrorKind::DataSizeTooLarge { data_size, size },
            ));
        }
        let data = parent.bytes(
            structure::PERF_COUNTER_DATA,
            offset + COUNTER_DATA_SIZE,
            data_size as usize,
        )?;
        Ok(CounterData { offset, size, data })
    }

    /// Absolute offset.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// `dwDataSize`.
    pub fn data_size(&self) -> u32 {
        self.data.len() as u32
    }

    /// `dwSize`.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The raw value bytes (`dwDataSize` of them).
    pub fn bytes(&self) -> &'a [u8] {
        self.data
    }

    /// The value as an integer when `dwDataSize` is 4 or 8.
    pub fn as_u64(&self) -> Option<u64> {
        match self.data.len() {
            4 => Some(u64::from(LE.u32_at(self.data, 0))),
            8 => Some(LE.u64_at(self.data, 0)),
            _ => None,
        }
    }

    /// The value: [`Value::U32`] for 4 bytes, [`Value::U64`] for 8, [`Value::Bytes`] (a copy) otherwise.
    pub fn value(&self) -> Value {
        match self.data.len() {
            4 => Value::U32(LE.u32_at(self.data, 0)),
            8 => Value::U64(LE.u64_at(self.data, 0)),
            _ => Value::Bytes(self.data.into()),
        }
    }
}
