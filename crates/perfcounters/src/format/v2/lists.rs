//! Sequences walked by a `Size` field: the `PerfEnumerateCounterSetInstances` result (a sequence of
//! `PERF_INSTANCE_HEADER` blocks) and the `PerfQueryCounterInfo` result (a sequence of
//! `PERF_COUNTER_IDENTIFIER` blocks).

use super::data::InstanceHeader;
use super::guid::Guid;
use super::layout;
use crate::format::read::{Endian::Little as LE, Reader, Utf16Str};
use crate::format::structure;
use crate::format::{DecodeError, ErrorKind};

/// Size of `PERF_COUNTER_IDENTIFIER` (without the instance name).
pub const COUNTER_IDENTIFIER_SIZE: usize = 40;

/// The `PerfEnumerateCounterSetInstances` result: `PERF_INSTANCE_HEADER` blocks (`Size`, `InstanceId`,
/// NUL-terminated UTF-16 name, padding to a multiple of 8) back to back, filling the buffer.
#[derive(Clone, Copy, Debug)]
pub struct InstanceList<'a> {
    buf: &'a [u8],
}

impl<'a> InstanceList<'a> {
    /// Wraps the result buffer (exactly `*pcbInstancesActual` bytes). Blocks are checked as they are
    /// iterated.
    pub fn new(buf: &'a [u8]) -> Self {
        InstanceList { buf }
    }

    /// The instances. The iterator yields an error and stops at the first malformed block.
    pub fn iter(&self) -> InstanceListIter<'a> {
        InstanceListIter {
            r: Reader::new(self.buf),
            offset: 0,
            failed: false,
        }
    }
}

/// Iterator over an [`InstanceList`].
#[derive(Clone, Debug)]
pub struct InstanceListIter<'a> {
    r: Reader<'a>,
    offset: usize,
    failed: bool,
}

impl<'a> Iterator for InstanceListIter<'a> {
    type Item = Result<InstanceHeader<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.r.end() {
            return None;
        }
        let item = InstanceHeader::parse(&self.r, self.offset);
        match &item {
            Ok(h) => self.offset += h.size() as usize,
            Err(_) => self.failed = true,
        }
        Some(item)
    }
}

/// One `PERF_COUNTER_IDENTIFIER` block: `CounterSetGuid` @0, `Status` @16, `Size` @20, `CounterId` @24,
/// `InstanceId` @28, `Index` @32, `Reserved` @36, then an optional NUL-terminated UTF-16 instance name
/// and padding. `Size` is 40 without a name, else a multiple of 8 larger than 40.
#[derive(Clone, Copy, Debug)]
pub struct CounterIdentifier<'a> {
    offset: usize,
    guid: Guid,
    status: u32,
    size: u32,
    counter_id: u32,
    instance_id: u32,
    index: u32,
    reserved: u32,
    instance_name: Option<Utf16Str<'a>>,
}

impl<'a> CounterIdentifier<'a> {
    /// Decodes one block at the start of `buf`.
    pub fn parse(buf: &'a [u8]) -> Result<Self, DecodeError> {
        Self::parse_at(&Reader::new(buf), 0)
    }

    fn parse_at(r: &Reader<'a>, offset: usize) -> Result<Self, DecodeError> {
        let size = r.size_field(
            structure::PERF_COUNTER_IDENTIFIER,
            offset,
            COUNTER_IDENTIFIER_SIZE,
            layout::COUNTER_IDENTIFIER_SIZE_AT,
            COUNTER_IDENTIFIER_SIZE,
            true,
        )?;
        let b = r.bytes(
            structure::PERF_COUNTER_IDENTIFIER,
            offset,
            COUNTER_IDENTIFIER_SIZE,
        )?;
        let instance_name = if size as usize > COUNTER_IDENTIFIER_SIZE {
            let name = r.bytes(
                structure::PERF_COUNTER_IDENTIFIER,
                offset + COUNTER_IDENTIFIER_SIZE,
                size as usize - COUNTER_IDENTIFIER_SIZE,
            )?;
            Some(Utf16Str::terminated(name).ok_or_else(|| {
                DecodeError::new(
                    structure::PERF_COUNTER_IDENTIFIER,
                    offset,
                    ErrorKind::UnterminatedString,
                )
            })?)
        } else {
            None
        };
        Ok(CounterIdentifier {
            offset,
            guid: Guid::from_slice(b).unwrap_or_default(),
            status: LE.u32_at(b, 16),
            size,
            counter_id: LE.u32_at(b, 24),
            instance_id: LE.u32_at(b, 28),
            index: LE.u32_at(b, 32),
            reserved: LE.u32_at(b, 36),
            instance_name,
        })
    }

    /// Absolute offset.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// `CounterSetGuid`.
    pub fn guid(&self) -> Guid {
        self.guid
    }

    /// `Status`: Win32 error code of the add/delete operation.
    pub fn status(&self) -> u32 {
        self.status
    }

    /// `Size`.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// `CounterId`, or `PERF_WILDCARD_COUNTER` (0xFFFFFFFF) for all counters.
    pub fn counter_id(&self) -> u32 {
        self.counter_id
    }

    /// `InstanceId`, or 0xFFFFFFFF for any.
    pub fn instance_id(&self) -> u32 {
        self.instance_id
    }

    /// `Index`: the position of this specification's block in the `PERF_DATA_HEADER`.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `Reserved`.
    pub fn reserved(&self) -> u32 {
        self.reserved
    }

    /// The instance-name filter, present for multi-instance countersets.
    pub fn instance_name(&self) -> Option<Utf16Str<'a>> {
        self.instance_name
    }
}

/// The `PerfQueryCounterInfo` result (also the input of `PerfAddCounters`): `PERF_COUNTER_IDENTIFIER`
/// blocks back to back, walked by `Size`.
#[derive(Clone, Copy, Debug)]
pub struct CounterIdentifiers<'a> {
    buf: &'a [u8],
}

impl<'a> CounterIdentifiers<'a> {
    /// Wraps the result buffer. Blocks are checked as they are iterated.
    pub fn new(buf: &'a [u8]) -> Self {
        CounterIdentifiers { buf }
    }

    /// The identifiers. The iterator yields an error and stops at the first malformed block.
    pub fn iter(&self) -> CounterIdentifierIter<'a> {
        CounterIdentifierIter {
            r: Reader::new(self.buf),
            offset: 0,
            failed: false,
        }
    }
}

/// Iterator over [`CounterIdentifiers`].
#[derive(Clone, Debug)]
pub struct CounterIdentifierIter<'a> {
    r: Reader<'a>,
    offset: usize,
    failed: bool,
}

impl<'a> Iterator for CounterIdentifierIter<'a> {
    type Item = Result<CounterIdentifier<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.r.end() {
            return None;
        }
        let item = CounterIdentifier::parse_at(&self.r, self.offset);
        match &item {
            Ok(h) => self.offset += h.size() as usize,
            Err(_) => self.failed = true,
        }
        Some(item)
    }
}
