//! Writes binary logs of the shape the reader understands: for tests, fuzzing seeds and benchmarks.
//!
//! [`BlgWriter`] lays records out like Windows does: the log-file header alone in the first buffer,
//! then events in 64 KiB buffers (8-byte aligned, the unused end of each buffer filled with 0xFF),
//! every record split into events of at most [`EncodeOptions::fragment_size`] data bytes. The
//! record bodies come from [`encode_counter_list`], [`encode_sample`], [`encode_name_chunk`] and
//! [`encode_trailer`].
//!
//! ```
//! use perfcounters::format::blg::encode::*;
//! use perfcounters::format::blg::{BlgReader, CounterSpec, RecordKind};
//! use perfcounters::{CounterType, PdhStatus};
//!
//! let spec = CounterSpec {
//!     counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
//!     machine: r"\\HOST".into(),
//!     object: "Memory".into(),
//!     counter: "Available Bytes".into(),
//!     ..Default::default()
//! };
//! let mut w = BlgWriter::new(std::io::Cursor::new(Vec::new()), EncodeOptions::default())?;
//! w.write_record(RecordKind::CounterList, 0, &encode_counter_list(&[spec]))?;
//! let sample = encode_sample(&[SampleEntry::Counter(RawEntry {
//!     status: PdhStatus::PDH_CSTATUS_VALID_DATA, time_stamp: 0, first: 42, second: 0, multi_count: 1,
//! })]);
//! w.write_record(RecordKind::Sample, 0, &sample)?;
//! let bytes = w.finish()?.into_inner();
//!
//! let mut r = BlgReader::new(&bytes[..])?;
//! assert_eq!(r.next_record().unwrap()?.counter_list()?.entries().len(), 1);
//! let record = r.next_record().unwrap()?;
//! assert_eq!(record.sample()?.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Seek, SeekFrom, Write};

use super::container::{
    LogFileHeader, TimeZoneInformation, BUFFER_HEADER_LEN, EVENT_TRACE_HEADER_LEN,
    FILLED_BYTES_OFFSET, SYSTEM_TRACE_HEADER_LEN, TRACE_HEADER_TYPE_FULL_HEADER32,
    TRACE_HEADER_TYPE_FULL_HEADER64, TRACE_HEADER_TYPE_SYSTEM32, TRACE_HEADER_TYPE_SYSTEM64,
};
use super::counters::{CounterSpec, COUNTER_ENTRY_HEADER_LEN, COUNTER_LIST_SIGNATURE};
use super::record::RecordKind;
use super::sample::{
    INSTANCES_HEADER_LEN, INSTANCE_ITEM_LEN, KIND_BLOCK, KIND_COUNTER, KIND_INSTANCES,
    SAMPLE_SIGNATURE, SUB_RECORD_HEADER_LEN,
};
use super::trailer::TRAILER_HEADER_LEN;
use super::{PDH_EVENT_HEADER_LEN, PDH_EVENT_VERSION, PDH_PROVIDER_GUID};
use crate::format::read::Endian;
use crate::format::v2::Guid;
use crate::snapshot::SystemTime;
use crate::status::PdhStatus;

/// How a log is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    /// The log-file header. `buffer_size` (64 KiB unless set) and `pointer_size` (4 or 8) shape the
    /// file; `buffers_written` is filled in by [`BlgWriter::finish`].
    pub header: LogFileHeader,
    /// The log GUID every PDH event carries.
    pub log_guid: Guid,
    /// The most record bytes per event (Windows uses 8000).
    pub fragment_size: usize,
    /// The `Class.Version` of the events.
    pub event_version: u16,
}

impl Default for EncodeOptions {
    /// A 32-bit Windows 8-era log in US Pacific time, 64 KiB buffers, 8000-byte fragments.
    fn default() -> Self {
        let log_guid = Guid::new(
            0x84c9_b5fa,
            0x8231,
            0x45ce,
            [0x87, 0xa3, 0x38, 0x14, 0x56, 0x9c, 0x13, 0x5f],
        );
        EncodeOptions {
            header: LogFileHeader {
                header_version: 2,
                header_type: TRACE_HEADER_TYPE_SYSTEM32,
                buffer_size: super::DEFAULT_BUFFER_SIZE,
                version: 0x0501_000a,
                os_build: 9200,
                number_of_processors: 4,
                timer_resolution: 156_250,
                log_file_mode: 0x0100_0001,
                start_buffers: 1,
                pointer_size: 4,
                cpu_speed_mhz: 2800,
                time_zone: TimeZoneInformation {
                    bias: 480,
                    standard_name: "@tzres.dll,-212".into(),
                    standard_date: SystemTime {
                        month: 11,
                        day: 1,
                        hour: 2,
                        ..Default::default()
                    },
                    standard_bias: 0,
                    daylight_name: "@tzres.dll,-211".into(),
                    daylight_date: SystemTime {
                        month: 3,
                        day: 2,
                        hour: 2,
                        ..Default::default()
                    },
                    daylight_bias: -60,
                },
                perf_freq: 2_725_536,
                reserved_flags: 2,
                logger_name: log_guid.to_string().trim_matches(['{', '}']).to_string(),
                log_file_name: r"C:\PerfLogs\Admin\perfcounters.blg".into(),
                ..Default::default()
            },
            log_guid,
            fragment_size: 8000,
            event_version: PDH_EVENT_VERSION,
        }
    }
}

impl EncodeOptions {
    /// The same options for a 64-bit writer (pointer size 8, 64-bit header types).
    pub fn with_64_bit(mut self) -> Self {
        self.header.pointer_size = 8;
        self.header.header_type = TRACE_HEADER_TYPE_SYSTEM64;
        self
    }
}

/// Writes a binary log buffer by buffer.
#[derive(Debug)]
pub struct BlgWriter<W: Write + Seek> {
    out: W,
    options: EncodeOptions,
    buffer_size: usize,
    buf: Vec<u8>,
    filled: usize,
    buffer_time: i64,
    buffers: u32,
    event: Vec<u8>,
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.to_string())
}

impl<W: Write + Seek> BlgWriter<W> {
    /// Starts a log: checks the options and writes the header buffer (patched by
    /// [`finish`](Self::finish)).
    pub fn new(mut out: W, options: EncodeOptions) -> io::Result<Self> {
        let buffer_size = options.header.buffer_size as usize;
        if !(0x1000..=0x10_0000).contains(&buffer_size) || buffer_size % 8 != 0 {
            return Err(invalid(
                "buffer size must be a multiple of 8 from 4 KiB to 1 MiB",
            ));
        }
        if options.header.pointer_size != 4 && options.header.pointer_size != 8 {
            return Err(invalid("pointer size must be 4 or 8"));
        }
        let max_fragment = (buffer_size - BUFFER_HEADER_LEN).min(usize::from(u16::MAX) & !7)
            - EVENT_TRACE_HEADER_LEN
            - PDH_EVENT_HEADER_LEN;
        if options.fragment_size == 0 || options.fragment_size > max_fragment {
            return Err(invalid(
                "fragment size must be at least 1 and fit in one event of one buffer",
            ));
        }
        let header = header_buffer(&options.header, buffer_size, 0)?;
        out.write_all(&header)?;
        Ok(BlgWriter {
            out,
            options,
            buffer_size,
            buf: Vec::with_capacity(buffer_size),
            filled: 0,
            buffer_time: 0,
            buffers: 1,
            event: Vec::new(),
        })
    }

    /// Writes one record of `kind` stamped `time` (a local FILETIME), split into as many events as
    /// the fragment size needs.
    pub fn write_record(&mut self, kind: RecordKind, time: i64, data: &[u8]) -> io::Result<()> {
        let chunks: Vec<&[u8]> = if data.is_empty() {
            vec![&[][..]]
        } else {
            data.chunks(self.options.fragment_size).collect()
        };
        let count = u32::try_from(chunks.len()).map_err(|_| invalid("record too large"))?;
        for (i, chunk) in chunks.iter().enumerate() {
            self.write_event(kind.class_type(), time, i as u32 + 1, count, chunk)?;
        }
        Ok(())
    }

    /// Writes one event with an explicit fragment index and count (hostile tests use it to write
    /// fragments out of order).
    pub fn write_event(
        &mut self,
        class_type: u8,
        time: i64,
        index: u32,
        count: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let size = EVENT_TRACE_HEADER_LEN + PDH_EVENT_HEADER_LEN + data.len();
        let size16 = u16::try_from(size).map_err(|_| invalid("event larger than 65535 bytes"))?;
        let event_type = if self.options.header.pointer_size == 8 {
            TRACE_HEADER_TYPE_FULL_HEADER64
        } else {
            TRACE_HEADER_TYPE_FULL_HEADER32
        };
        let e = &mut self.event;
        e.clear();
        e.extend_from_slice(&size16.to_le_bytes());
        e.push(event_type);
        e.push(0xC0);
        e.push(class_type);
        e.push(0);
        e.extend_from_slice(&self.options.event_version.to_le_bytes());
        e.extend_from_slice(&0x0b18u32.to_le_bytes());
        e.extend_from_slice(&0x0dfcu32.to_le_bytes());
        e.extend_from_slice(&time.to_le_bytes());
        e.extend_from_slice(&PDH_PROVIDER_GUID.to_bytes());
        e.extend_from_slice(&0u64.to_le_bytes());
        e.extend_from_slice(&self.options.log_guid.to_bytes());
        e.extend_from_slice(&index.to_le_bytes());
        e.extend_from_slice(&count.to_le_bytes());
        e.extend_from_slice(data);
        let aligned = size.next_multiple_of(8);
        if aligned > self.buffer_size - BUFFER_HEADER_LEN {
            return Err(invalid("event larger than a buffer"));
        }
        if self.filled == 0 {
            self.start_buffer(time);
        } else if self.filled + aligned > self.buffer_size {
            self.flush_buffer()?;
            self.start_buffer(time);
        }
        self.buf.extend_from_slice(&self.event);
        self.buf.resize(self.filled + aligned, 0);
        self.filled += aligned;
        Ok(())
    }

    fn start_buffer(&mut self, time: i64) {
        self.buf.clear();
        self.buf.resize(BUFFER_HEADER_LEN, 0);
        self.filled = BUFFER_HEADER_LEN;
        self.buffer_time = time;
    }

    fn flush_buffer(&mut self) -> io::Result<()> {
        if self.filled == 0 {
            return Ok(());
        }
        let filled = self.filled as u32;
        let b = &mut self.buf;
        b[0..4].copy_from_slice(&(self.buffer_size as u32).to_le_bytes());
        b[4..8].copy_from_slice(&filled.to_le_bytes());
        b[8..12].copy_from_slice(&filled.to_le_bytes());
        b[0x10..0x18].copy_from_slice(&self.buffer_time.to_le_bytes());
        b[0x18..0x20].copy_from_slice(&u64::from(self.buffers).to_le_bytes());
        b[0x28..0x2C].copy_from_slice(&[0, 8, 0x11, 0]);
        b[0x2C..0x30].copy_from_slice(&3u32.to_le_bytes());
        b[FILLED_BYTES_OFFSET..FILLED_BYTES_OFFSET + 4].copy_from_slice(&filled.to_le_bytes());
        b.resize(self.buffer_size, 0xFF);
        self.out.write_all(b)?;
        self.buffers = self.buffers.saturating_add(1);
        self.filled = 0;
        Ok(())
    }

    /// Flushes the last buffer, patches the header's buffer count, and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_buffer()?;
        let header = header_buffer(&self.options.header, self.buffer_size, self.buffers)?;
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&header)?;
        self.out.seek(SeekFrom::End(0))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn utf16z(out: &mut Vec<u8>, s: &str) {
    for u in s.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
    out.extend_from_slice(&[0, 0]);
}

/// A 32-unit UTF-16 name field (at most 31 units and a NUL).
fn name_field(out: &mut Vec<u8>, s: &str) {
    let start = out.len();
    for u in s.encode_utf16().take(31) {
        out.extend_from_slice(&u.to_le_bytes());
    }
    out.resize(start + 64, 0);
}

/// The first buffer: the buffer header, the `SYSTEM_TRACE_HEADER` event with the
/// `TRACE_LOGFILE_HEADER`, the logger name and the log path; 0xFF after the event.
fn header_buffer(h: &LogFileHeader, buffer_size: usize, buffers: u32) -> io::Result<Vec<u8>> {
    let p = h.pointer_size as usize;
    let mut lf = Vec::with_capacity(0x200);
    for v in [h.buffer_size, h.version, h.os_build, h.number_of_processors] {
        lf.extend_from_slice(&v.to_le_bytes());
    }
    lf.extend_from_slice(&h.end_time.to_le_bytes());
    for v in [
        h.timer_resolution,
        h.maximum_file_size,
        h.log_file_mode,
        buffers,
        h.start_buffers,
        h.pointer_size,
        h.events_lost,
        h.cpu_speed_mhz,
    ] {
        lf.extend_from_slice(&v.to_le_bytes());
    }
    lf.resize(lf.len() + 2 * p, 0); // LoggerName and LogFileName pointers
    let tz = &h.time_zone;
    lf.extend_from_slice(&tz.bias.to_le_bytes());
    name_field(&mut lf, &tz.standard_name);
    lf.extend_from_slice(&Endian::Little.system_time_bytes(&tz.standard_date));
    lf.extend_from_slice(&tz.standard_bias.to_le_bytes());
    name_field(&mut lf, &tz.daylight_name);
    lf.extend_from_slice(&Endian::Little.system_time_bytes(&tz.daylight_date));
    lf.extend_from_slice(&tz.daylight_bias.to_le_bytes());
    lf.resize(lf.len().next_multiple_of(8), 0);
    for v in [h.boot_time, h.perf_freq, h.start_time] {
        lf.extend_from_slice(&v.to_le_bytes());
    }
    lf.extend_from_slice(&h.reserved_flags.to_le_bytes());
    lf.extend_from_slice(&h.buffers_lost.to_le_bytes());
    utf16z(&mut lf, &h.logger_name);
    utf16z(&mut lf, &h.log_file_name);

    let size = SYSTEM_TRACE_HEADER_LEN + lf.len();
    let size16 = u16::try_from(size).map_err(|_| invalid("log-file header too large"))?;
    let filled = (BUFFER_HEADER_LEN + size).next_multiple_of(8);
    if filled > buffer_size {
        return Err(invalid("log-file header larger than a buffer"));
    }
    let mut b = vec![0u8; BUFFER_HEADER_LEN];
    b[0..4].copy_from_slice(&(buffer_size as u32).to_le_bytes());
    b[8..12].copy_from_slice(&(filled as u32).to_le_bytes());
    b[0x10..0x18].copy_from_slice(&h.start_time.to_le_bytes());
    b[0x28..0x2C].copy_from_slice(&[0, 8, 0x11, 0]);
    b[0x2C..0x30].copy_from_slice(&3u32.to_le_bytes());
    b[FILLED_BYTES_OFFSET..FILLED_BYTES_OFFSET + 4].copy_from_slice(&(filled as u32).to_le_bytes());
    b[0x34..0x36].copy_from_slice(&1u16.to_le_bytes());
    b[0x36..0x38].copy_from_slice(&4u16.to_le_bytes());
    let header_type = if h.pointer_size == 8 {
        TRACE_HEADER_TYPE_SYSTEM64
    } else {
        TRACE_HEADER_TYPE_SYSTEM32
    };
    b.extend_from_slice(&h.header_version.to_le_bytes());
    b.push(header_type);
    b.push(0xC0);
    b.extend_from_slice(&size16.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes()); // hook id: the header event
    b.extend_from_slice(&0x06dcu32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&h.start_time.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.extend_from_slice(&lf);
    b.resize(filled, 0);
    b.resize(buffer_size, 0xFF);
    Ok(b)
}

/// The counter-list record of `specs`, strings laid out machine, object, instance, parent, counter.
pub fn encode_counter_list(specs: &[CounterSpec]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + specs.len() * 160);
    out.extend_from_slice(&COUNTER_LIST_SIGNATURE.to_le_bytes());
    out.extend_from_slice(&8u16.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    for s in specs {
        let mut strings = Vec::new();
        let mut put = |text: &str| -> i32 {
            let at = strings.len() as i32;
            utf16z(&mut strings, text);
            at
        };
        let machine = put(&s.machine);
        let object = put(&s.object);
        let instance = s.instance.as_deref().map_or(-1, &mut put);
        let parent = s.parent.as_deref().map_or(-1, &mut put);
        let counter = put(&s.counter);
        let size = (COUNTER_ENTRY_HEADER_LEN + strings.len()).next_multiple_of(8);
        let start = out.len();
        out.extend_from_slice(&(size as u32).to_le_bytes());
        out.extend_from_slice(&s.flags.to_le_bytes());
        out.extend_from_slice(&s.user_data.to_le_bytes());
        out.extend_from_slice(&s.counter_type.0.to_le_bytes());
        out.extend_from_slice(&s.time_base.to_le_bytes());
        out.extend_from_slice(&s.default_scale.to_le_bytes());
        for v in [machine, object, instance, parent, s.instance_index, counter] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&strings);
        out.resize(start + size, 0);
    }
    out
}

/// A stored `PDH_RAW_COUNTER`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RawEntry {
    /// `CStatus`.
    pub status: PdhStatus,
    /// `TimeStamp` (local FILETIME).
    pub time_stamp: i64,
    /// `FirstValue`.
    pub first: i64,
    /// `SecondValue`.
    pub second: i64,
    /// `MultiCount`.
    pub multi_count: u32,
}

/// One instance of a wildcard counter.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct InstanceEntry {
    /// The instance name.
    pub name: String,
    /// `MultiCount`.
    pub multi_count: u32,
    /// `FirstValue`.
    pub first: i64,
    /// `SecondValue`.
    pub second: i64,
}

/// One sub-record of a sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SampleEntry {
    /// Kind 1: one `PDH_RAW_COUNTER`.
    Counter(RawEntry),
    /// Kind 2: the instances of a wildcard counter.
    Instances {
        /// `CStatus` of the array.
        status: PdhStatus,
        /// `TimeStamp` (local FILETIME).
        time_stamp: i64,
        /// The instances.
        items: Vec<InstanceEntry>,
    },
    /// Kind 5: a whole V1 `PERF_DATA_BLOCK` (see [`crate::format::v1::encode`]).
    Block(Vec<u8>),
    /// Any kind with any body, as given.
    Raw {
        /// The kind byte.
        kind: u8,
        /// The body.
        body: Vec<u8>,
    },
}

/// The sample record of `entries`, in counter-list order.
pub fn encode_sample(entries: &[SampleEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + entries.len() * 48);
    encode_sample_into(&mut out, entries);
    out
}

/// [`encode_sample`] into a reused vector (cleared first).
pub fn encode_sample_into(out: &mut Vec<u8>, entries: &[SampleEntry]) {
    out.clear();
    out.extend_from_slice(&SAMPLE_SIGNATURE);
    out.push(0);
    out.extend_from_slice(&0u32.to_le_bytes());
    for e in entries {
        let start = out.len();
        let kind = match e {
            SampleEntry::Counter(_) => KIND_COUNTER,
            SampleEntry::Instances { .. } => KIND_INSTANCES,
            SampleEntry::Block(_) => KIND_BLOCK,
            SampleEntry::Raw { kind, .. } => *kind,
        };
        out.extend_from_slice(&SAMPLE_SIGNATURE);
        out.push(kind);
        out.extend_from_slice(&0u32.to_le_bytes());
        match e {
            SampleEntry::Counter(r) => {
                out.extend_from_slice(&r.status.0.to_le_bytes());
                out.extend_from_slice(&r.time_stamp.to_le_bytes());
                out.extend_from_slice(&[0; 4]);
                out.extend_from_slice(&r.first.to_le_bytes());
                out.extend_from_slice(&r.second.to_le_bytes());
                out.extend_from_slice(&r.multi_count.to_le_bytes());
                out.extend_from_slice(&[0; 4]);
            }
            SampleEntry::Instances {
                status,
                time_stamp,
                items,
            } => {
                let body = out.len();
                let names_at = INSTANCES_HEADER_LEN + items.len() * INSTANCE_ITEM_LEN;
                let mut names = Vec::new();
                let mut offsets = Vec::with_capacity(items.len());
                for item in items {
                    offsets.push((names_at + names.len()) as u32);
                    utf16z(&mut names, &item.name);
                }
                let size = (names_at + names.len()).next_multiple_of(8);
                out.extend_from_slice(&(size as u32).to_le_bytes());
                out.extend_from_slice(&(items.len() as u32).to_le_bytes());
                out.extend_from_slice(&status.0.to_le_bytes());
                out.extend_from_slice(&0u32.to_le_bytes());
                out.extend_from_slice(&time_stamp.to_le_bytes());
                for (item, offset) in items.iter().zip(offsets) {
                    out.extend_from_slice(&offset.to_le_bytes());
                    out.extend_from_slice(&item.multi_count.to_le_bytes());
                    out.extend_from_slice(&item.first.to_le_bytes());
                    out.extend_from_slice(&item.second.to_le_bytes());
                }
                out.extend_from_slice(&names);
                out.resize(body + size, 0);
            }
            SampleEntry::Block(bytes) | SampleEntry::Raw { body: bytes, .. } => {
                out.extend_from_slice(bytes);
            }
        }
        let len = (out.len() - start) as u32;
        out[start + 4..start + SUB_RECORD_HEADER_LEN].copy_from_slice(&len.to_le_bytes());
    }
    let total = out.len() as u32;
    out[4..8].copy_from_slice(&total.to_le_bytes());
}

/// A name-table record: the machine, then `pairs` as `index\0name\0…` (no list terminator, like the
/// chunks Windows writes).
pub fn encode_name_chunk(machine: &str, pairs: &[(u32, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    utf16z(&mut out, machine);
    for (index, name) in pairs {
        utf16z(&mut out, &index.to_string());
        utf16z(&mut out, name);
    }
    out
}

/// A trailer record: the first and last sample times, the sample and entry counts, and
/// sub-records of kind 5 with the given bodies.
pub fn encode_trailer(
    first: i64,
    last: i64,
    samples: u32,
    entries: u32,
    bodies: &[&[u8]],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(TRAILER_HEADER_LEN);
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&last.to_le_bytes());
    out.extend_from_slice(&samples.to_le_bytes());
    out.extend_from_slice(&entries.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0x5FFu32.to_le_bytes());
    for body in bodies {
        out.extend_from_slice(&SAMPLE_SIGNATURE);
        out.push(KIND_BLOCK);
        out.extend_from_slice(&((body.len() + SUB_RECORD_HEADER_LEN) as u32).to_le_bytes());
        out.extend_from_slice(body);
    }
    let len = out.len() as u32;
    out[0x18..0x1C].copy_from_slice(&len.to_le_bytes());
    out
}
