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
    FILLED_BYTES_OFFSET, TRACE_HEADER_TYPE_FULL_HEADER32, TRACE_HEADER_TYPE_FULL_HEADER64,
    TRACE_HEADER_TYPE_SYSTEM32, TRACE_HEADER_TYPE_SYSTEM64,
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
use crate::format::write::Writer;
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
                time_zone: TimeZoneInformation::us_since_2007(
                    480,
                    "@tzres.dll,-212",
                    "@tzres.dll,-211",
                ),
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
    buf: Writer,
    filled: usize,
    buffer_time: i64,
    buffers: u32,
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
            buf: Writer::reuse(Vec::with_capacity(buffer_size), Endian::Little),
            filled: 0,
            buffer_time: 0,
            buffers: 1,
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
        let e = &mut self.buf;
        e.u16(size16);
        e.u8(event_type);
        e.u8(0xC0);
        e.u8(class_type);
        e.u8(0);
        e.u16(self.options.event_version);
        e.u32(0x0b18);
        e.u32(0x0dfc);
        e.i64(time);
        e.bytes(&PDH_PROVIDER_GUID.to_bytes());
        e.u64(0);
        e.bytes(&self.options.log_guid.to_bytes());
        e.u32(index);
        e.u32(count);
        e.bytes(data);
        e.pad8();
        self.filled += aligned;
        Ok(())
    }

    fn start_buffer(&mut self, time: i64) {
        self.buf.clear();
        self.buf.zeros(BUFFER_HEADER_LEN);
        self.filled = BUFFER_HEADER_LEN;
        self.buffer_time = time;
    }

    fn flush_buffer(&mut self) -> io::Result<()> {
        if self.filled == 0 {
            return Ok(());
        }
        let filled = self.filled as u32;
        let b = &mut self.buf;
        put_buffer_header(b, self.buffer_size, filled, self.buffer_time);
        b.put_u32(4, filled); // the saved offset
        b.put_u64(0x18, u64::from(self.buffers)); // the sequence number
        b.fill_to(self.buffer_size, 0xFF);
        self.out.write_all(b.as_bytes())?;
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

/// The fields every buffer header of the writer holds (in the `BUFFER_HEADER_LEN` zero bytes at
/// the start of `b`): the buffer size, the filled offset (twice), the time stamp and the flags.
fn put_buffer_header(b: &mut Writer, buffer_size: usize, filled: u32, time: i64) {
    b.put_u32(0, buffer_size as u32);
    b.put_u32(8, filled);
    b.put_i64(0x10, time);
    b.put(0x28, &[0, 8, 0x11, 0]);
    b.put_u32(0x2C, 3);
    b.put_u32(FILLED_BYTES_OFFSET, filled);
}

/// `s` as NUL-terminated UTF-16, written as given (a NUL inside ends the string for a reader, as in
/// a file Windows wrote).
fn utf16z(out: &mut Writer, s: &str) {
    out.utf16(s);
    out.u16(0);
}

/// A 32-unit UTF-16 name field (at most 31 units and a NUL).
fn name_field(out: &mut Writer, s: &str) {
    let start = out.pos();
    for u in s.encode_utf16().take(31) {
        out.u16(u);
    }
    out.fill_to(start + 64, 0);
}

/// The first buffer: the buffer header, the `SYSTEM_TRACE_HEADER` event with the
/// `TRACE_LOGFILE_HEADER`, the logger name and the log path; 0xFF after the event.
fn header_buffer(h: &LogFileHeader, buffer_size: usize, buffers: u32) -> io::Result<Vec<u8>> {
    let p = h.pointer_size as usize;
    let mut b = Writer::reuse(Vec::with_capacity(buffer_size), Endian::Little);
    b.zeros(BUFFER_HEADER_LEN);
    let header_type = if h.pointer_size == 8 {
        TRACE_HEADER_TYPE_SYSTEM64
    } else {
        TRACE_HEADER_TYPE_SYSTEM32
    };
    let event = b.pos();
    b.u16(h.header_version);
    b.u8(header_type);
    b.u8(0xC0);
    b.u16(0); // the event size, written below
    b.u16(0); // hook id: the header event
    b.u32(0x06dc);
    b.u32(0);
    b.i64(h.start_time);
    b.u64(0);
    // The TRACE_LOGFILE_HEADER; its 8-byte alignment is the buffer's (the event starts at 0x48, its
    // body at 0x68).
    let lf = &mut b;
    for v in [h.buffer_size, h.version, h.os_build, h.number_of_processors] {
        lf.u32(v);
    }
    lf.i64(h.end_time);
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
        lf.u32(v);
    }
    lf.zeros(2 * p); // LoggerName and LogFileName pointers
    let tz = &h.time_zone;
    lf.i32(tz.bias);
    name_field(lf, &tz.standard_name);
    lf.system_time(&tz.standard_date);
    lf.i32(tz.standard_bias);
    name_field(lf, &tz.daylight_name);
    lf.system_time(&tz.daylight_date);
    lf.i32(tz.daylight_bias);
    lf.pad8();
    for v in [h.boot_time, h.perf_freq, h.start_time] {
        lf.i64(v);
    }
    lf.u32(h.reserved_flags);
    lf.u32(h.buffers_lost);
    utf16z(lf, &h.logger_name);
    utf16z(lf, &h.log_file_name);

    let size = b.pos() - event;
    let size16 = u16::try_from(size).map_err(|_| invalid("log-file header too large"))?;
    let filled = (BUFFER_HEADER_LEN + size).next_multiple_of(8);
    if filled > buffer_size {
        return Err(invalid("log-file header larger than a buffer"));
    }
    b.put_u16s(event + 4, &[size16]);
    put_buffer_header(&mut b, buffer_size, filled as u32, h.start_time);
    b.put_u16s(0x34, &[1, 4]); // the buffer type: the log-file header
    b.pad8();
    b.fill_to(buffer_size, 0xFF);
    Ok(b.into_bytes())
}

/// The counter-list record of `specs`, strings laid out machine, object, instance, parent, counter.
pub fn encode_counter_list(specs: &[CounterSpec]) -> Vec<u8> {
    let mut out = Writer::reuse(Vec::with_capacity(8 + specs.len() * 160), Endian::Little);
    out.u32(COUNTER_LIST_SIGNATURE);
    out.u16(8);
    out.u16(2);
    let mut strings = Writer::new(Endian::Little);
    for s in specs {
        strings.clear();
        let mut put = |text: &str| -> i32 {
            let at = strings.pos() as i32;
            utf16z(&mut strings, text);
            at
        };
        let machine = put(&s.machine);
        let object = put(&s.object);
        let instance = s.instance.as_deref().map_or(-1, &mut put);
        let parent = s.parent.as_deref().map_or(-1, &mut put);
        let counter = put(&s.counter);
        let size = (COUNTER_ENTRY_HEADER_LEN + strings.pos()).next_multiple_of(8);
        let start = out.pos();
        out.u32(size as u32);
        out.u32(s.flags);
        out.u32(s.user_data);
        out.u32(s.counter_type.0);
        out.i64(s.time_base);
        out.i32(s.default_scale);
        for v in [machine, object, instance, parent, s.instance_index, counter] {
            out.i32(v);
        }
        out.bytes(strings.as_bytes());
        out.fill_to(start + size, 0);
    }
    out.into_bytes()
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
pub fn encode_sample_into(buf: &mut Vec<u8>, entries: &[SampleEntry]) {
    let mut out = Writer::reuse(std::mem::take(buf), Endian::Little);
    out.bytes(&SAMPLE_SIGNATURE);
    out.u8(0);
    out.u32(0); // the record size, written below
    for e in entries {
        let start = out.pos();
        let kind = match e {
            SampleEntry::Counter(_) => KIND_COUNTER,
            SampleEntry::Instances { .. } => KIND_INSTANCES,
            SampleEntry::Block(_) => KIND_BLOCK,
            SampleEntry::Raw { kind, .. } => *kind,
        };
        out.bytes(&SAMPLE_SIGNATURE);
        out.u8(kind);
        out.u32(0); // the sub-record size, written below
        match e {
            SampleEntry::Counter(r) => {
                out.u32(r.status.0);
                out.i64(r.time_stamp);
                out.zeros(4);
                out.i64(r.first);
                out.i64(r.second);
                out.u32(r.multi_count);
                out.zeros(4);
            }
            SampleEntry::Instances {
                status,
                time_stamp,
                items,
            } => {
                let body = out.pos();
                let names_at = INSTANCES_HEADER_LEN + items.len() * INSTANCE_ITEM_LEN;
                let mut names = Writer::new(Endian::Little);
                let mut offsets = Vec::with_capacity(items.len());
                for item in items {
                    offsets.push((names_at + names.pos()) as u32);
                    utf16z(&mut names, &item.name);
                }
                let size = (names_at + names.pos()).next_multiple_of(8);
                out.u32(size as u32);
                out.u32(items.len() as u32);
                out.u32(status.0);
                out.u32(0);
                out.i64(*time_stamp);
                for (item, offset) in items.iter().zip(offsets) {
                    out.u32(offset);
                    out.u32(item.multi_count);
                    out.i64(item.first);
                    out.i64(item.second);
                }
                out.bytes(names.as_bytes());
                out.fill_to(body + size, 0);
            }
            SampleEntry::Block(bytes) | SampleEntry::Raw { body: bytes, .. } => {
                out.bytes(bytes);
            }
        }
        out.put_u32(start + 4, (out.pos() - start) as u32);
    }
    out.put_u32(4, out.pos() as u32);
    *buf = out.into_bytes();
}

/// A name-table record: the machine, then `pairs` as `index\0name\0…` (no list terminator, like the
/// chunks Windows writes).
pub fn encode_name_chunk(machine: &str, pairs: &[(u32, &str)]) -> Vec<u8> {
    let mut out = Writer::new(Endian::Little);
    utf16z(&mut out, machine);
    for (index, name) in pairs {
        utf16z(&mut out, &index.to_string());
        utf16z(&mut out, name);
    }
    out.into_bytes()
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
    let mut out = Writer::reuse(Vec::with_capacity(TRAILER_HEADER_LEN), Endian::Little);
    out.i64(first);
    out.i64(last);
    out.u32(samples);
    out.u32(entries);
    out.u32(0); // the record size, written below
    out.u32(0x5FF);
    for body in bodies {
        out.bytes(&SAMPLE_SIGNATURE);
        out.u8(KIND_BLOCK);
        out.u32((body.len() + SUB_RECORD_HEADER_LEN) as u32);
        out.bytes(body);
    }
    out.put_u32(0x18, out.pos() as u32);
    out.into_bytes()
}
