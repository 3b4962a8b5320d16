//! Performance Monitor binary logs (`.blg`): a validated, streaming, zero-copy reader and an
//! encoder of the same shape.
//!
//! No specification of the format is published. What this module reads was learned from real logs
//! (Windows Server 2003, Vista and Windows 8 writers) and from the public documentation of the ETW
//! container; `docs/blg.md` describes every structure, how sure each part is, and what is still
//! unknown.
//!
//! * The container: an ETW trace file of 64 KiB buffers ([`BufferHeader`]). The first buffer holds the
//!   log-file header ([`LogFileHeader`]: Windows build, pointer size, performance-counter frequency,
//!   start and end time, time zone, logger name and original path).
//! * The events: every event of the PDH provider ([`PDH_PROVIDER_GUID`]) carries the log GUID, a
//!   fragment index and count, and a part of a record; [`BlgReader`] puts the fragments together and
//!   hands out [`PdhRecord`]s in file order.
//! * The records ([`RecordKind`]): the counter list ([`CounterList`]), the samples ([`PdhSample`]: one
//!   `PDH_RAW_COUNTER`, the instances of a wildcard counter, or a whole V1 `PERF_DATA_BLOCK` per
//!   entry), the name-table chunks of logs of whole objects ([`NameChunk`]) and a trailer
//!   ([`Trailer`]).
//! * [`timezone`]: the zone names relog prints, and local ↔ UTC with the log's time-zone rules.
//! * [`layout`]: the offsets and sizes of every structure, declared once for the reader, the
//!   writer and [`looks_like_blg`].
//! * [`encode`]: writes logs of the same shape, for tests and benchmarks.
//!
//! Every length, count and offset is checked before use; a malformed structure is a
//! [`DecodeError`] naming it and its byte offset in the file. The reader never sizes an allocation
//! from a count in the data.

mod container;
mod counters;
pub mod encode;
mod error;
pub mod layout;
mod names;
mod read;
mod reader;
mod record;
mod sample;
pub mod timezone;
mod trailer;
pub(crate) mod values;

pub use crate::format::{DecodeError, ErrorKind};
pub use container::{BufferHeader, EventHeader, LogFileHeader, TimeZoneInformation};
pub use counters::{BlgCounterSpec, CounterEntry, CounterList};
pub use error::{ReadError, Warning};
pub use layout::buffer_header::DEFAULT_BUFFER_SIZE;
pub use names::NameChunk;
pub use reader::{BlgReader, MAX_RECORD_LEN, MAX_WARNINGS};
pub use record::{Fragment, PdhRecord, RecordKind};
pub use sample::{
    BlockRecord, InstanceArray, InstanceItem, InstanceItems, PdhSample, RawCounterRecord,
    SubRecord, SubRecords,
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

/// What `bytes`, the start of a file given as a binary log, look like when they are text (no NUL
/// in the first 512 bytes, valid UTF-8 or only printable bytes): a PDH-CSV or PDH-TSV log, one
/// without its header line (a first line of quoted cells starting with a date), or other text.
/// `None` for binary data.
///
/// ```
/// use perfcounters::format::blg::text_kind;
/// assert_eq!(
///     text_kind(b"\"01/15/2024 10:00:00.000\",\"20\"\r\n"),
///     Some("PDH-CSV without its header line")
/// );
/// assert_eq!(text_kind(b"\"(PDH-TSV 4.0)\"\t\"\\\\H\\A\\B\"\r\n"), Some("a PDH-TSV log (read it as one)"));
/// assert_eq!(text_kind(&[0, 0, 1, 0]), None);
/// ```
pub fn text_kind(bytes: &[u8]) -> Option<&'static str> {
    let start = bytes.get(..bytes.len().min(512)).unwrap_or(&[]);
    if start.is_empty() || start.contains(&0) {
        return None;
    }
    let printable = start
        .iter()
        .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\r' | b'\n'));
    if std::str::from_utf8(start).is_err() && !printable {
        return None;
    }
    let text = String::from_utf8_lossy(start);
    let line = text.trim_start_matches('\u{feff}').trim_start();
    let line = line.lines().next().unwrap_or("");
    let tabs = line.contains("\"\t\"");
    if line.starts_with("\"(PDH-CSV") {
        return Some("a PDH-CSV log (read it as one)");
    }
    if line.starts_with("\"(PDH-TSV") {
        return Some("a PDH-TSV log (read it as one)");
    }
    let dated = line
        .strip_prefix('"')
        .is_some_and(|r| r.chars().next().is_some_and(|c| c.is_ascii_digit()));
    Some(match (dated, tabs) {
        (true, true) => "PDH-TSV without its header line",
        (true, false) => "PDH-CSV without its header line",
        _ => "text",
    })
}

/// Whether `bytes`, the start of a file, look like a binary log: a `WMI_BUFFER_HEADER` whose
/// `BufferSize` is one the reader accepts and whose `FilledBytes` lies within the buffer, followed by
/// the log-file header event (a `SYSTEM_TRACE_HEADER` of a 32- or 64-bit writer, with the marker
/// flags of every log seen, large enough to hold a `TRACE_LOGFILE_HEADER`).
///
/// A log has no magic string; these are the first [`SNIFF_LEN`] bytes of every log the reader opens
/// (shorter input is not a log). A `true` is a strong hint, not a proof: [`BlgReader::new`] checks
/// the whole header.
///
/// ```
/// use perfcounters::format::blg::encode::{BlgWriter, BlgEncodeOptions};
/// use perfcounters::format::blg::looks_like_blg;
///
/// let log = BlgWriter::new(std::io::Cursor::new(Vec::new()), BlgEncodeOptions::default())?
///     .finish()?
///     .into_inner();
/// assert!(looks_like_blg(&log));
/// assert!(!looks_like_blg(b"\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\""));
/// assert!(!looks_like_blg(&log[..40]));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn looks_like_blg(bytes: &[u8]) -> bool {
    use layout::{buffer_header as bh, logfile_header as lf, system_trace_header as sth};
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (Some(size), Some(filled)) = (u32_at(bh::BUFFER_SIZE), u32_at(bh::FILLED_BYTES)) else {
        return false;
    };
    let event = bh::LEN;
    let (Some(&header_type), Some(&marker), Some(event_size)) = (
        bytes.get(event + sth::HEADER_TYPE),
        bytes.get(event + sth::MARKER_FLAGS),
        bytes
            .get(event + sth::SIZE..event + sth::SIZE + 2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]]))),
    ) else {
        return false;
    };
    (bh::MIN_BUFFER_SIZE..=bh::MAX_BUFFER_SIZE).contains(&size)
        && (size as usize).is_multiple_of(bh::ALIGNMENT)
        && (bh::LEN as u32..=size).contains(&filled)
        && matches!(header_type, sth::TYPE_SYSTEM32 | sth::TYPE_SYSTEM64)
        && marker == sth::MARKER
        && event_size >= sth::LEN + lf::MIN_LEN
        && event + event_size <= size as usize
}

/// How many bytes of a file's start [`looks_like_blg`] reads: the buffer header and the start of
/// the log-file header event.
pub const SNIFF_LEN: usize = layout::buffer_header::LEN + layout::system_trace_header::SIZE + 2;
