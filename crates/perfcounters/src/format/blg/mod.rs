//! Performance Monitor binary logs (`.blg`): a validated, streaming, zero-copy reader and an
//! encoder of the same shape.
//!
//! No specification of the format is published. What this module reads was learned from real logs
//! (Windows Server 2003, Vista and Windows 8 writers) and from the public documentation of the ETW
//! container; `docs/blg.md` describes every structure, how sure each part is, and what is still
//! unknown.
//!
//! * The container ([`container`]): an ETW trace file of 64 KiB buffers. The first buffer holds the
//!   log-file header ([`LogFileHeader`]: Windows build, pointer size, performance-counter frequency,
//!   start and end time, time zone, logger name and original path).
//! * The events: every event of the PDH provider ([`PDH_PROVIDER_GUID`]) carries the log GUID, a
//!   fragment index and count, and a part of a record; [`BlgReader`] puts the fragments together and
//!   hands out [`Record`]s in file order.
//! * The records ([`RecordKind`]): the counter list ([`CounterList`]), the samples ([`Sample`]: one
//!   `PDH_RAW_COUNTER`, the instances of a wildcard counter, or a whole V1 `PERF_DATA_BLOCK` per
//!   entry), the name-table chunks of logs of whole objects ([`NameChunk`]) and a trailer
//!   ([`Trailer`]).
//! * [`timezone`]: the zone names relog prints, and local ↔ UTC with the log's time-zone rules.
//! * [`encode`]: writes logs of the same shape, for tests and benchmarks.
//!
//! Every length, count and offset is checked before use; a malformed structure is a
//! [`DecodeError`] naming it and its byte offset in the file. The reader never sizes an allocation
//! from a count in the data.

pub mod container;
pub mod counters;
pub mod encode;
mod error;
pub mod names;
mod read;
mod reader;
pub mod record;
pub mod sample;
pub mod timezone;
pub mod trailer;
pub mod values;

pub use crate::format::{DecodeError, ErrorKind};
pub use container::{EventHeader, LogFileHeader, TimeZoneInformation, DEFAULT_BUFFER_SIZE};
pub use counters::{CounterEntry, CounterList, CounterSpec};
pub use error::{ReadError, Warning};
pub use names::NameChunk;
pub use reader::{BlgReader, MAX_RECORD_LEN, MAX_WARNINGS};
pub use record::{Fragment, Record, RecordKind};
pub use sample::{
    BlockRecord, InstanceArray, InstanceItem, RawCounterRecord, Sample, SubRecord, SubRecords,
};
pub use trailer::Trailer;
pub use values::{BlgLog, Column, LogSample, SampleValue, TrailerSummary};

use crate::format::v2::Guid;

/// The provider of every PDH event: {933F3BB3-943E-490D-9CED-3CBB14C14479}.
pub const PDH_PROVIDER_GUID: Guid = Guid::new(
    0x933F_3BB3,
    0x943E,
    0x490D,
    [0x9C, 0xED, 0x3C, 0xBB, 0x14, 0xC1, 0x44, 0x79],
);

/// `Class.Version` of every PDH event seen.
pub const PDH_EVENT_VERSION: u16 = 0x3C;

/// Length of what every PDH event carries before its part of the record: the log GUID, the
/// fragment index (1-based) and the fragment count.
pub const PDH_EVENT_HEADER_LEN: usize = 24;
