//! `PerfQueryCounterSetRegistrationInfo` and `PerfEnumerateCounterSet` results.
//!
//! * `PERF_REG_COUNTERSET_STRUCT` → [`CounterSetRegInfo`] (`PERF_COUNTERSET_REG_INFO` + counters);
//! * `PERF_REG_COUNTER_STRUCT` → [`CounterRegInfo::parse`];
//! * `PERF_REG_COUNTER_NAME_STRINGS` / `_HELP_STRINGS` / `_ENGLISH_NAMES` → [`StringBuffer`];
//! * `PERF_REG_COUNTERSET_NAME_STRING` / `_HELP_STRING` / `_ENGLISH_NAME`, `PERF_REG_PROVIDER_NAME` →
//!   [`parse_string`];
//! * `PERF_REG_PROVIDER_GUID` → [`parse_guid`];
//! * `PerfEnumerateCounterSet` → [`GuidList`].

use super::guid::Guid;
use super::layout;
use crate::format::read::{Endian::Little as LE, Reader, Utf16Str};
use crate::format::structure;
use crate::format::{DecodeError, ErrorKind};

/// `PERF_REG_COUNTERSET_STRUCT`.
pub const PERF_REG_COUNTERSET_STRUCT: u32 = 1;
/// `PERF_REG_COUNTER_STRUCT` (the counter id goes in `requestLangId`).
pub const PERF_REG_COUNTER_STRUCT: u32 = 2;
/// `PERF_REG_COUNTERSET_NAME_STRING`.
pub const PERF_REG_COUNTERSET_NAME_STRING: u32 = 3;
/// `PERF_REG_COUNTERSET_HELP_STRING`.
pub const PERF_REG_COUNTERSET_HELP_STRING: u32 = 4;
/// `PERF_REG_COUNTER_NAME_STRINGS`.
pub const PERF_REG_COUNTER_NAME_STRINGS: u32 = 5;
/// `PERF_REG_COUNTER_HELP_STRINGS`.
pub const PERF_REG_COUNTER_HELP_STRINGS: u32 = 6;
/// `PERF_REG_PROVIDER_NAME`.
pub const PERF_REG_PROVIDER_NAME: u32 = 7;
/// `PERF_REG_PROVIDER_GUID`.
pub const PERF_REG_PROVIDER_GUID: u32 = 8;
/// `PERF_REG_COUNTERSET_ENGLISH_NAME`.
pub const PERF_REG_COUNTERSET_ENGLISH_NAME: u32 = 9;
/// `PERF_REG_COUNTER_ENGLISH_NAMES`.
pub const PERF_REG_COUNTER_ENGLISH_NAMES: u32 = 10;

/// `PERF_COUNTERSET_SINGLE_INSTANCE`.
pub const PERF_COUNTERSET_SINGLE_INSTANCE: u32 = 0;
/// `PERF_COUNTERSET_MULTI_INSTANCES`.
pub const PERF_COUNTERSET_MULTI_INSTANCES: u32 = 2;
/// `PERF_COUNTERSET_SINGLE_AGGREGATE`.
pub const PERF_COUNTERSET_SINGLE_AGGREGATE: u32 = 4;
/// `PERF_COUNTERSET_MULTI_AGGREGATE`.
pub const PERF_COUNTERSET_MULTI_AGGREGATE: u32 = 6;
/// `PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY`.
pub const PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY: u32 = 12;
/// `PERF_COUNTERSET_INSTANCE_AGGREGATE` (not implemented by Windows).
pub const PERF_COUNTERSET_INSTANCE_AGGREGATE: u32 = 22;

/// `PERF_AGGREGATE_UNDEFINED`.
pub const PERF_AGGREGATE_UNDEFINED: u32 = 0;
/// `PERF_AGGREGATE_TOTAL`.
pub const PERF_AGGREGATE_TOTAL: u32 = 1;
/// `PERF_AGGREGATE_AVG`.
pub const PERF_AGGREGATE_AVG: u32 = 2;
/// `PERF_AGGREGATE_MIN`.
pub const PERF_AGGREGATE_MIN: u32 = 3;
/// `PERF_AGGREGATE_MAX`.
pub const PERF_AGGREGATE_MAX: u32 = 4;

/// `PERF_ATTRIB_BY_REFERENCE`.
pub const PERF_ATTRIB_BY_REFERENCE: u64 = 0x1;
/// `PERF_ATTRIB_NO_DISPLAYABLE`.
pub const PERF_ATTRIB_NO_DISPLAYABLE: u64 = 0x2;
/// `PERF_ATTRIB_NO_GROUP_SEPARATOR`.
pub const PERF_ATTRIB_NO_GROUP_SEPARATOR: u64 = 0x4;
/// `PERF_ATTRIB_DISPLAY_AS_REAL`.
pub const PERF_ATTRIB_DISPLAY_AS_REAL: u64 = 0x8;
/// `PERF_ATTRIB_DISPLAY_AS_HEX`.
pub const PERF_ATTRIB_DISPLAY_AS_HEX: u64 = 0x10;

/// The "none" value of the `*Id` fields of `PERF_COUNTER_REG_INFO` (also `PERF_WILDCARD_COUNTER`).
pub const NO_COUNTER: u32 = 0xFFFF_FFFF;

/// Size of `PERF_COUNTERSET_REG_INFO`.
pub const COUNTERSET_REG_INFO_SIZE: usize = 32;
/// Size of `PERF_COUNTER_REG_INFO`.
pub const COUNTER_REG_INFO_SIZE: usize = 48;
/// Size of `PERF_STRING_BUFFER_HEADER`.
pub const STRING_BUFFER_HEADER_SIZE: usize = 8;
/// Size of `PERF_STRING_COUNTER_HEADER`.
pub const STRING_COUNTER_HEADER_SIZE: usize = 8;

/// A `PERF_COUNTER_REG_INFO` structure (48 bytes), decoded. `*_id` fields are [`NO_COUNTER`] for none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterRegInfo {
    /// `CounterId` @0.
    pub counter_id: u32,
    /// `Type` @4: a winperf.h counter type.
    pub counter_type: u32,
    /// `Attrib` @8: `PERF_ATTRIB_*` bits.
    pub attrib: u64,
    /// `DetailLevel` @16.
    pub detail_level: u32,
    /// `DefaultScale` @20: power of ten, −10 … 10.
    pub default_scale: i32,
    /// `BaseCounterId` @24.
    pub base_counter_id: u32,
    /// `PerfTimeId` @28.
    pub perf_time_id: u32,
    /// `PerfFreqId` @32.
    pub perf_freq_id: u32,
    /// `MultiId` @36.
    pub multi_id: u32,
    /// `AggregateFunc` @40: `PERF_AGGREGATE_*`.
    pub aggregate_func: u32,
    /// `Reserved` @44.
    pub reserved: u32,
}

impl CounterRegInfo {
    /// Decodes one structure from the start of `buf` (the `PERF_REG_COUNTER_STRUCT` result).
    pub fn parse(buf: &[u8]) -> Result<Self, DecodeError> {
        Self::parse_at(&Reader::new(buf), 0)
    }

    pub(crate) fn parse_at(r: &Reader<'_>, offset: usize) -> Result<Self, DecodeError> {
        let b = r.bytes(
            structure::PERF_COUNTER_REG_INFO,
            offset,
            COUNTER_REG_INFO_SIZE,
        )?;
        Ok(Self::from_fixed(b))
    }

    fn from_fixed(b: &[u8]) -> Self {
        CounterRegInfo {
            counter_id: LE.u32_at(b, 0),
            counter_type: LE.u32_at(b, 4),
            attrib: LE.u64_at(b, 8),
            detail_level: LE.u32_at(b, 16),
            default_scale: LE.u32_at(b, 20) as i32,
            base_counter_id: LE.u32_at(b, 24),
            perf_time_id: LE.u32_at(b, 28),
            perf_freq_id: LE.u32_at(b, 32),
            multi_id: LE.u32_at(b, 36),
            aggregate_func: LE.u32_at(b, 40),
            reserved: LE.u32_at(b, 44),
        }
    }

    /// The 48 stored bytes.
    pub fn to_bytes(&self) -> [u8; COUNTER_REG_INFO_SIZE] {
        let mut b = [0u8; COUNTER_REG_INFO_SIZE];
        let words = [
            (0, self.counter_id),
            (4, self.counter_type),
            (16, self.detail_level),
            (20, self.default_scale as u32),
            (24, self.base_counter_id),
            (28, self.perf_time_id),
            (32, self.perf_freq_id),
            (36, self.multi_id),
            (40, self.aggregate_func),
            (44, self.reserved),
        ];
        for (at, v) in words {
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        b[8..16].copy_from_slice(&self.attrib.to_le_bytes());
        b
    }
}

/// A `PERF_COUNTERSET_REG_INFO` block (32 bytes: `CounterSetGuid`, `CounterSetType` @16 (reserved),
/// `DetailLevel` @20, `NumCounters` @24, `InstanceType` @28) followed by `NumCounters`
/// `PERF_COUNTER_REG_INFO`.
#[derive(Clone, Copy, Debug)]
pub struct CounterSetRegInfo<'a> {
    guid: Guid,
    counterset_type: u32,
    detail_level: u32,
    instance_type: u32,
    counters: &'a [u8],
}

impl<'a> CounterSetRegInfo<'a> {
    /// Decodes the block at the start of `buf`; all `NumCounters` structures must lie within `buf`.
    pub fn parse(buf: &'a [u8]) -> Result<Self, DecodeError> {
        let r = Reader::new(buf);
        let head = r.bytes(
            structure::PERF_COUNTERSET_REG_INFO,
            0,
            COUNTERSET_REG_INFO_SIZE,
        )?;
        let guid = Guid::from_slice(head).unwrap_or_default();
        let num = LE.u32_at(head, 24);
        let fits = (buf.len() - COUNTERSET_REG_INFO_SIZE) / COUNTER_REG_INFO_SIZE;
        if u64::from(num) > fits as u64 {
            return Err(DecodeError::new(
                structure::PERF_COUNTERSET_REG_INFO,
                0,
                ErrorKind::CountTooLarge {
                    count: u64::from(num),
                    fits: fits as u64,
                },
            ));
        }
        let counters = r.bytes(
            structure::PERF_COUNTERSET_REG_INFO,
            COUNTERSET_REG_INFO_SIZE,
            num as usize * COUNTER_REG_INFO_SIZE,
        )?;
        Ok(CounterSetRegInfo {
            guid,
            counterset_type: LE.u32_at(head, 16),
            detail_level: LE.u32_at(head, 20),
            instance_type: LE.u32_at(head, 28),
            counters,
        })
    }

    /// `CounterSetGuid`.
    pub fn guid(&self) -> Guid {
        self.guid
    }

    /// `CounterSetType` (reserved).
    pub fn counterset_type(&self) -> u32 {
        self.counterset_type
    }

    /// `DetailLevel`.
    pub fn detail_level(&self) -> u32 {
        self.detail_level
    }

    /// `NumCounters`.
    pub fn num_counters(&self) -> u32 {
        (self.counters.len() / COUNTER_REG_INFO_SIZE) as u32
    }

    /// `InstanceType` (`PERF_COUNTERSET_*`).
    pub fn instance_type(&self) -> u32 {
        self.instance_type
    }

    /// The counter at position `i`.
    pub fn counter(&self, i: usize) -> Option<CounterRegInfo> {
        let at = i.checked_mul(COUNTER_REG_INFO_SIZE)?;
        let b = self
            .counters
            .get(at..at.checked_add(COUNTER_REG_INFO_SIZE)?)?;
        Some(CounterRegInfo::from_fixed(b))
    }

    /// The counters, in registration order.
    pub fn counters(&self) -> impl Iterator<Item = CounterRegInfo> + 'a {
        self.counters
            .chunks_exact(COUNTER_REG_INFO_SIZE)
            .map(CounterRegInfo::from_fixed)
    }
}

/// A `PERF_STRING_BUFFER_HEADER` block: `dwSize` (whole block), `dwCounters`, then `dwCounters`
/// `PERF_STRING_COUNTER_HEADER` {`dwCounterId`, `dwOffset`}, then the strings. `dwOffset` counts from
/// the start of the block; 0xFFFFFFFF means NULL.
#[derive(Clone, Copy, Debug)]
pub struct StringBuffer<'a> {
    r: Reader<'a>,
    count: u32,
}

impl<'a> StringBuffer<'a> {
    /// Decodes the block at the start of `buf` (`dwSize` ≥ 8 + 8 × `dwCounters`, within `buf`). The
    /// strings are checked when read.
    pub fn parse(buf: &'a [u8]) -> Result<Self, DecodeError> {
        let whole = Reader::new(buf);
        let size = whole.size_field(
            structure::PERF_STRING_BUFFER_HEADER,
            0,
            STRING_BUFFER_HEADER_SIZE,
            layout::STRING_BUFFER_HEADER_SIZE_AT,
            STRING_BUFFER_HEADER_SIZE,
            false,
        )?;
        let count = whole.u32(structure::PERF_STRING_BUFFER_HEADER, 4)?;
        let fits = (u64::from(size) - STRING_BUFFER_HEADER_SIZE as u64)
            / STRING_COUNTER_HEADER_SIZE as u64;
        if u64::from(count) > fits {
            return Err(DecodeError::new(
                structure::PERF_STRING_BUFFER_HEADER,
                0,
                ErrorKind::CountTooLarge {
                    count: u64::from(count),
                    fits,
                },
            ));
        }
        let r = whole.sub(structure::PERF_STRING_BUFFER_HEADER, 0, u64::from(size))?;
        Ok(StringBuffer { r, count })
    }

    /// `dwSize`.
    pub fn size(&self) -> u32 {
        self.r.end() as u32
    }

    /// `dwCounters`.
    pub fn count(&self) -> u32 {
        self.count
    }

    fn table_end(&self) -> usize {
        STRING_BUFFER_HEADER_SIZE + self.count as usize * STRING_COUNTER_HEADER_SIZE
    }

    /// Entry `i`: the counter id and its string (`None` for a NULL offset). The string must start in
    /// the string area (after the table) and end with a NUL within `dwSize`.
    pub fn entry(&self, i: u32) -> Option<Result<(u32, Option<Utf16Str<'a>>), DecodeError>> {
        if i >= self.count {
            return None;
        }
        let at = STRING_BUFFER_HEADER_SIZE + i as usize * STRING_COUNTER_HEADER_SIZE;
        Some(self.read_entry(at))
    }

    fn read_entry(&self, at: usize) -> Result<(u32, Option<Utf16Str<'a>>), DecodeError> {
        let id = self.r.u32(structure::PERF_STRING_COUNTER_HEADER, at)?;
        let offset = self.r.u32(structure::PERF_STRING_COUNTER_HEADER, at + 4)?;
        if offset == 0xFFFF_FFFF {
            return Ok((id, None));
        }
        let start = offset as usize;
        if start < self.table_end() || start >= self.r.end() {
            return Err(DecodeError::new(
                structure::PERF_STRING_COUNTER_HEADER,
                at,
                ErrorKind::OffsetOutOfRange { offset },
            ));
        }
        let bytes = self
            .r
            .bytes(structure::STRING, start, self.r.end() - start)?;
        let s = Utf16Str::terminated(bytes).ok_or_else(|| {
            DecodeError::new(structure::STRING, start, ErrorKind::UnterminatedString)
        })?;
        Ok((id, Some(s)))
    }

    /// All entries in table order; each is checked when reached.
    pub fn entries(
        &self,
    ) -> impl Iterator<Item = Result<(u32, Option<Utf16Str<'a>>), DecodeError>> + '_ {
        (0..self.count).filter_map(move |i| self.entry(i))
    }

    /// The string of the first entry for `counter_id`: `None` if there is no entry,
    /// `Some(Ok(None))` for a NULL string.
    pub fn get(&self, counter_id: u32) -> Option<Result<Option<Utf16Str<'a>>, DecodeError>> {
        for i in 0..self.count {
            let at = STRING_BUFFER_HEADER_SIZE + i as usize * STRING_COUNTER_HEADER_SIZE;
            match self.r.u32(structure::PERF_STRING_COUNTER_HEADER, at) {
                Ok(id) if id == counter_id => return Some(self.read_entry(at).map(|(_, s)| s)),
                Ok(_) => {}
                Err(e) => return Some(Err(e)),
            }
        }
        None
    }
}

/// Decodes a NUL-terminated UTF-16LE string result (counterset name or help, provider name). The NUL
/// must occur within `buf`.
pub fn parse_string(buf: &[u8]) -> Result<Utf16Str<'_>, DecodeError> {
    Utf16Str::terminated(buf).ok_or(DecodeError::new(
        structure::STRING,
        0,
        ErrorKind::UnterminatedString,
    ))
}

/// Decodes a GUID result (`PERF_REG_PROVIDER_GUID`): the first 16 bytes of `buf`.
pub fn parse_guid(buf: &[u8]) -> Result<Guid, DecodeError> {
    let b = Reader::new(buf).bytes(structure::GUID, 0, Guid::SIZE)?;
    Ok(Guid::from_slice(b).unwrap_or_default())
}

/// The `PerfEnumerateCounterSet` result: an array of GUIDs (16 bytes each).
#[derive(Clone, Copy, Debug)]
pub struct GuidList<'a> {
    bytes: &'a [u8],
}

impl<'a> GuidList<'a> {
    /// Decodes `buf`, whose length must be a multiple of 16.
    pub fn parse(buf: &'a [u8]) -> Result<Self, DecodeError> {
        if !buf.len().is_multiple_of(Guid::SIZE) {
            return Err(DecodeError::new(
                structure::GUID,
                buf.len() - buf.len() % Guid::SIZE,
                ErrorKind::LengthNotMultiple {
                    length: buf.len() as u64,
                    item: Guid::SIZE as u64,
                },
            ));
        }
        Ok(GuidList { bytes: buf })
    }

    /// Number of GUIDs.
    pub fn len(&self) -> usize {
        self.bytes.len() / Guid::SIZE
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The GUIDs.
    pub fn iter(&self) -> impl Iterator<Item = Guid> + 'a {
        self.bytes
            .chunks_exact(Guid::SIZE)
            .filter_map(Guid::from_slice)
    }
}
