//! PDH records: what the events of a log carry once their fragments are put together.

use super::counters::CounterList;
use super::layout::class_type;
use super::names::NameChunk;
use super::sample::PdhSample;
use super::trailer::Trailer;
use crate::format::structure;
use crate::format::{DecodeError, ErrorKind};

/// The kind of a PDH record: the `Class.Type` of its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// 0x20: the counter list (once, before the first sample).
    CounterList,
    /// 0x22: one sample of every counter of the list.
    Sample,
    /// 0x23: a summary written when the log is closed (seen in the Vista log only).
    Trailer,
    /// 0x24: a chunk of the writing machine's counter name table (logs of whole objects).
    NameTable,
    /// Any other value.
    Other(u8),
}

impl RecordKind {
    /// The kind of an event's `Class.Type`.
    pub const fn from_class_type(t: u8) -> RecordKind {
        match t {
            class_type::COUNTER_LIST => RecordKind::CounterList,
            class_type::SAMPLE => RecordKind::Sample,
            class_type::TRAILER => RecordKind::Trailer,
            class_type::NAME_TABLE => RecordKind::NameTable,
            other => RecordKind::Other(other),
        }
    }

    /// The `Class.Type` of this kind.
    pub const fn class_type(self) -> u8 {
        match self {
            RecordKind::CounterList => class_type::COUNTER_LIST,
            RecordKind::Sample => class_type::SAMPLE,
            RecordKind::Trailer => class_type::TRAILER,
            RecordKind::NameTable => class_type::NAME_TABLE,
            RecordKind::Other(t) => t,
        }
    }

    /// A short lower-case name (`"counter list"`, `"sample"`, …).
    pub fn name(self) -> &'static str {
        match self {
            RecordKind::CounterList => "counter list",
            RecordKind::Sample => "sample",
            RecordKind::Trailer => "trailer",
            RecordKind::NameTable => "name table",
            RecordKind::Other(_) => "unknown",
        }
    }
}

/// Where one fragment's data sits: at `data_offset` in the record and at `file_offset` in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fragment {
    /// Offset of the fragment's first byte in the record data.
    pub data_offset: usize,
    /// Offset of the same byte in the file.
    pub file_offset: usize,
}

/// One PDH record, borrowed from the reader: its kind, the time stamp of its first event, and its
/// data (the fragments' data put together).
#[derive(Clone, Copy, Debug)]
pub struct PdhRecord<'a> {
    /// The record kind.
    pub kind: RecordKind,
    /// The `TimeStamp` of the first event, a FILETIME. PDH writes the **local** time of the sample
    /// there; it is the time relog prints for the sample.
    pub time: i64,
    /// File offset of the first event's `EVENT_TRACE_HEADER`.
    pub offset: usize,
    /// Number of events the record was split over.
    pub fragment_count: u32,
    data: &'a [u8],
    fragments: &'a [Fragment],
}

impl<'a> PdhRecord<'a> {
    /// A record over `data`, whose fragments are described by `fragments` (at least one, sorted).
    pub fn new(
        kind: RecordKind,
        time: i64,
        offset: usize,
        data: &'a [u8],
        fragments: &'a [Fragment],
    ) -> Self {
        PdhRecord {
            kind,
            time,
            offset,
            fragment_count: u32::try_from(fragments.len()).unwrap_or(u32::MAX),
            data,
            fragments,
        }
    }

    /// The record data.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The file offset of byte `offset` of the record data (past the end: counted from the last
    /// fragment).
    pub fn file_offset(&self, offset: usize) -> usize {
        let i = self
            .fragments
            .partition_point(|f| f.data_offset <= offset)
            .saturating_sub(1);
        match self.fragments.get(i) {
            Some(f) => f
                .file_offset
                .saturating_add(offset.saturating_sub(f.data_offset)),
            None => self.offset.saturating_add(offset),
        }
    }

    /// The same error with its record-relative offset turned into a file offset.
    pub fn relocate(&self, e: DecodeError) -> DecodeError {
        DecodeError::new(
            e.structure(),
            self.file_offset(e.offset()),
            e.kind().clone(),
        )
    }

    fn expect(&self, kind: RecordKind, structure: &'static str) -> Result<(), DecodeError> {
        if self.kind == kind {
            Ok(())
        } else {
            Err(DecodeError::new(
                structure,
                self.offset,
                ErrorKind::InvalidValue {
                    field: "Class.Type",
                    value: i64::from(self.kind.class_type()),
                    rule: "not this structure's record kind",
                },
            ))
        }
    }

    /// The counter list of a [`RecordKind::CounterList`] record.
    pub fn counter_list(&self) -> Result<CounterList<'a>, DecodeError> {
        self.expect(RecordKind::CounterList, structure::PDH_COUNTER_LIST)?;
        CounterList::parse(self.data).map_err(|e| self.relocate(e))
    }

    /// The sample of a [`RecordKind::Sample`] record.
    pub fn sample(&self) -> Result<PdhSample<'a>, DecodeError> {
        self.expect(RecordKind::Sample, structure::PDH_SAMPLE)?;
        PdhSample::parse(self.data).map_err(|e| self.relocate(e))
    }

    /// The name-table chunk of a [`RecordKind::NameTable`] record.
    pub fn name_chunk(&self) -> Result<NameChunk<'a>, DecodeError> {
        self.expect(RecordKind::NameTable, structure::PDH_NAME_TABLE)?;
        NameChunk::parse(self.data).map_err(|e| self.relocate(e))
    }

    /// The trailer of a [`RecordKind::Trailer`] record.
    pub fn trailer(&self) -> Result<Trailer<'a>, DecodeError> {
        self.expect(RecordKind::Trailer, structure::PDH_TRAILER)?;
        Trailer::parse(self.data).map_err(|e| self.relocate(e))
    }
}
