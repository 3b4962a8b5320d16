//! Writes binary logs of the shape the reader understands: for tests, fuzzing seeds and benchmarks.
//!
//! [`BlgWriter`] lays records out like Windows does: the log-file header alone in the first buffer,
//! then events in 64 KiB buffers (8-byte aligned, the unused end of each buffer filled with 0xFF),
//! every record split into events of at most [`BlgEncodeOptions::fragment_size`] data bytes. The
//! record bodies come from [`encode_counter_list`], [`encode_sample`], [`encode_name_chunk`] and
//! [`encode_trailer`].
//!
//! ```
//! use perfcounters::format::blg::encode::*;
//! use perfcounters::format::blg::{BlgReader, BlgCounterSpec, RecordKind};
//! use perfcounters::{CounterType, PdhStatus};
//!
//! let spec = BlgCounterSpec {
//!     counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
//!     machine: r"\\HOST".into(),
//!     object: "Memory".into(),
//!     counter: "Available Bytes".into(),
//!     ..Default::default()
//! };
//! let mut w = BlgWriter::new(std::io::Cursor::new(Vec::new()), BlgEncodeOptions::default())?;
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

use super::container::{LogFileHeader, TimeZoneInformation};
use super::counters::BlgCounterSpec;
use super::layout::{
    buffer_header as bh, counter_entry as ce, counter_list as cl, event_trace_header as eth,
    logfile_header as lf, pdh_event, pdh_raw_counter as prc, raw_counter_array as rca,
    raw_counter_item as rci, sample as sl, sub_record as sr, system_trace_header as sth,
    time_zone_information as tzi, trailer as tl,
};
use super::record::RecordKind;
use super::PDH_PROVIDER_GUID;
use crate::format::read::Endian;
use crate::format::v2::Guid;
use crate::format::write::Writer;
use crate::status::PdhStatus;

/// How a log is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlgEncodeOptions {
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

impl Default for BlgEncodeOptions {
    /// A 32-bit Windows 8-era log in US Pacific time, 64 KiB buffers, 8000-byte fragments.
    fn default() -> Self {
        let log_guid = Guid::new(
            0x84c9_b5fa,
            0x8231,
            0x45ce,
            [0x87, 0xa3, 0x38, 0x14, 0x56, 0x9c, 0x13, 0x5f],
        );
        BlgEncodeOptions {
            header: LogFileHeader {
                header_version: 2,
                header_type: sth::TYPE_SYSTEM32,
                buffer_size: bh::DEFAULT_BUFFER_SIZE,
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
            event_version: pdh_event::VERSION,
        }
    }
}

impl BlgEncodeOptions {
    /// The same options for a 64-bit writer (pointer size 8, 64-bit header types).
    pub fn with_64_bit(mut self) -> Self {
        self.header.pointer_size = 8;
        self.header.header_type = sth::TYPE_SYSTEM64;
        self
    }
}

/// Writes a binary log buffer by buffer.
#[derive(Debug)]
pub struct BlgWriter<W: Write + Seek> {
    out: W,
    options: BlgEncodeOptions,
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
    pub fn new(mut out: W, options: BlgEncodeOptions) -> io::Result<Self> {
        let buffer_size = options.header.buffer_size as usize;
        if !(0x1000..=bh::MAX_BUFFER_SIZE as usize).contains(&buffer_size)
            || !buffer_size.is_multiple_of(bh::ALIGNMENT)
        {
            return Err(invalid(
                "buffer size must be a multiple of 8 from 4 KiB to 1 MiB",
            ));
        }
        if options.header.pointer_size != 4 && options.header.pointer_size != 8 {
            return Err(invalid("pointer size must be 4 or 8"));
        }
        let max_fragment = (buffer_size - bh::LEN)
            .min(usize::from(u16::MAX) & !(bh::ALIGNMENT - 1))
            - eth::LEN
            - pdh_event::LEN;
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

    /// Marks the events written from now on as events of the log `guid` (a file that holds events
    /// of another log, as tests of the reader need).
    pub fn set_log_guid(&mut self, guid: Guid) {
        self.options.log_guid = guid;
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
        let size = eth::LEN + pdh_event::LEN + data.len();
        let size16 = u16::try_from(size).map_err(|_| invalid("event larger than 65535 bytes"))?;
        let event_type = if self.options.header.pointer_size == 8 {
            eth::TYPE_FULL_HEADER64
        } else {
            eth::TYPE_FULL_HEADER32
        };
        let aligned = size.next_multiple_of(bh::ALIGNMENT);
        if aligned > self.buffer_size - bh::LEN {
            return Err(invalid("event larger than a buffer"));
        }
        if self.filled == 0 {
            self.start_buffer(time);
        } else if self.filled + aligned > self.buffer_size {
            self.flush_buffer()?;
            self.start_buffer(time);
        }
        let e = &mut self.buf;
        let at = e.pos();
        e.zeros(eth::LEN + pdh_event::LEN);
        e.put_u16s(at + eth::SIZE, &[size16]);
        e.put(at + eth::HEADER_TYPE, &[event_type]);
        e.put(at + eth::MARKER_FLAGS, &[eth::MARKER]);
        e.put(at + eth::CLASS_TYPE, &[class_type]);
        e.put_u16s(at + eth::CLASS_VERSION, &[self.options.event_version]);
        e.put_u32(at + eth::THREAD_ID, 0x0b18);
        e.put_u32(at + eth::PROCESS_ID, 0x0dfc);
        e.put_i64(at + eth::TIME_STAMP, time);
        e.put(at + eth::GUID, &PDH_PROVIDER_GUID.to_bytes());
        let p = at + eth::LEN;
        e.put(p + pdh_event::LOG_GUID, &self.options.log_guid.to_bytes());
        e.put_u32(p + pdh_event::FRAGMENT_INDEX, index);
        e.put_u32(p + pdh_event::FRAGMENT_COUNT, count);
        e.bytes(data);
        e.pad8();
        self.filled += aligned;
        Ok(())
    }

    fn start_buffer(&mut self, time: i64) {
        self.buf.clear();
        self.buf.zeros(bh::LEN);
        self.filled = bh::LEN;
        self.buffer_time = time;
    }

    fn flush_buffer(&mut self) -> io::Result<()> {
        if self.filled == 0 {
            return Ok(());
        }
        let filled = self.filled as u32;
        let b = &mut self.buf;
        put_buffer_header(b, self.buffer_size, filled, self.buffer_time);
        b.put_u32(bh::SAVED_OFFSET, filled);
        b.put_u64(bh::SEQUENCE_NUMBER, u64::from(self.buffers));
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

/// The fields every buffer header of the writer holds (in the [`bh::LEN`] zero bytes at the start
/// of `b`): the buffer size, the filled offset (twice), the time stamp, the client context and the
/// state, as Windows writes them.
fn put_buffer_header(b: &mut Writer, buffer_size: usize, filled: u32, time: i64) {
    b.put_u32(bh::BUFFER_SIZE, buffer_size as u32);
    b.put_u32(bh::CURRENT_OFFSET, filled);
    b.put_i64(bh::TIME_STAMP, time);
    b.put(bh::CLIENT_CONTEXT, &[0, 8, 0x11, 0]);
    b.put_u32(bh::STATE, 3);
    b.put_u32(bh::FILLED_BYTES, filled);
}

/// `s` as NUL-terminated UTF-16, written as given (a NUL inside ends the string for a reader, as in
/// a file Windows wrote).
fn utf16z(out: &mut Writer, s: &str) {
    out.utf16(s);
    out.u16(0);
}

/// A name field of a `TIME_ZONE_INFORMATION` at `at` (zeros): at most 31 UTF-16 units, so that a
/// NUL ends it.
fn put_name_field(out: &mut Writer, at: usize, s: &str) {
    let units: Vec<u16> = s.encode_utf16().take(tzi::NAME_LEN / 2 - 1).collect();
    out.put_u16s(at, &units);
}

/// The first buffer: the buffer header, the `SYSTEM_TRACE_HEADER` event with the
/// `TRACE_LOGFILE_HEADER`, the logger name and the log path; 0xFF after the event.
fn header_buffer(h: &LogFileHeader, buffer_size: usize, buffers: u32) -> io::Result<Vec<u8>> {
    let p = h.pointer_size as usize;
    let mut b = Writer::reuse(Vec::with_capacity(buffer_size), Endian::Little);
    b.zeros(bh::LEN);
    let header_type = if h.pointer_size == 8 {
        sth::TYPE_SYSTEM64
    } else {
        sth::TYPE_SYSTEM32
    };
    // The SYSTEM_TRACE_HEADER; its size is written below, its hook id is 0 (the header event).
    let event = b.pos();
    b.zeros(sth::LEN);
    b.put_u16s(event + sth::VERSION, &[h.header_version]);
    b.put(event + sth::HEADER_TYPE, &[header_type]);
    b.put(event + sth::MARKER_FLAGS, &[sth::MARKER]);
    b.put_u32(event + sth::THREAD_ID, 0x06dc);
    b.put_i64(event + sth::SYSTEM_TIME, h.start_time);
    // The TRACE_LOGFILE_HEADER; the LoggerName and LogFileName pointers stay 0.
    let l = b.pos();
    b.zeros(lf::len(p));
    for (at, v) in [
        (lf::BUFFER_SIZE, h.buffer_size),
        (lf::VERSION, h.version),
        (lf::PROVIDER_VERSION, h.os_build),
        (lf::NUMBER_OF_PROCESSORS, h.number_of_processors),
        (lf::TIMER_RESOLUTION, h.timer_resolution),
        (lf::MAXIMUM_FILE_SIZE, h.maximum_file_size),
        (lf::LOG_FILE_MODE, h.log_file_mode),
        (lf::BUFFERS_WRITTEN, buffers),
        (lf::START_BUFFERS, h.start_buffers),
        (lf::POINTER_SIZE, h.pointer_size),
        (lf::EVENTS_LOST, h.events_lost),
        (lf::CPU_SPEED_MHZ, h.cpu_speed_mhz),
        (lf::reserved_flags(p), h.reserved_flags),
        (lf::buffers_lost(p), h.buffers_lost),
    ] {
        b.put_u32(l + at, v);
    }
    for (at, v) in [
        (lf::END_TIME, h.end_time),
        (lf::boot_time(p), h.boot_time),
        (lf::perf_freq(p), h.perf_freq),
        (lf::start_time(p), h.start_time),
    ] {
        b.put_i64(l + at, v);
    }
    let tz = &h.time_zone;
    let z = l + lf::time_zone(p);
    b.put_i32(z + tzi::BIAS, tz.bias);
    put_name_field(&mut b, z + tzi::STANDARD_NAME, &tz.standard_name);
    b.put_system_time(z + tzi::STANDARD_DATE, &tz.standard_date);
    b.put_i32(z + tzi::STANDARD_BIAS, tz.standard_bias);
    put_name_field(&mut b, z + tzi::DAYLIGHT_NAME, &tz.daylight_name);
    b.put_system_time(z + tzi::DAYLIGHT_DATE, &tz.daylight_date);
    b.put_i32(z + tzi::DAYLIGHT_BIAS, tz.daylight_bias);
    utf16z(&mut b, &h.logger_name);
    utf16z(&mut b, &h.log_file_name);

    let size = b.pos() - event;
    let size16 = u16::try_from(size).map_err(|_| invalid("log-file header too large"))?;
    let filled = (bh::LEN + size).next_multiple_of(bh::ALIGNMENT);
    if filled > buffer_size {
        return Err(invalid("log-file header larger than a buffer"));
    }
    b.put_u16s(event + sth::SIZE, &[size16]);
    put_buffer_header(&mut b, buffer_size, filled as u32, h.start_time);
    b.put_u16s(bh::FLAGS, &[1, 4]); // the flags and the buffer type of the log-file header
    b.pad8();
    b.fill_to(buffer_size, 0xFF);
    Ok(b.into_bytes())
}

/// The counter-list record of `specs`, strings laid out machine, object, instance, parent, counter.
pub fn encode_counter_list(specs: &[BlgCounterSpec]) -> Vec<u8> {
    let mut out = Writer::reuse(Vec::with_capacity(8 + specs.len() * 160), Endian::Little);
    out.u32(cl::SIGNATURE);
    for w in cl::PREFIX_WORDS {
        out.u16(w);
    }
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
        let size = (ce::LEN + strings.pos()).next_multiple_of(8);
        let start = out.pos();
        out.zeros(ce::LEN);
        out.put_u32(start + ce::SIZE, size as u32);
        out.put_u32(start + ce::FLAGS, s.flags);
        out.put_u32(start + ce::USER_DATA, s.user_data);
        out.put_u32(start + ce::COUNTER_TYPE, s.counter_type.0);
        out.put_i64(start + ce::TIME_BASE, s.time_base);
        out.put_i32(start + ce::DEFAULT_SCALE, s.default_scale);
        for (at, v) in [
            (ce::MACHINE_OFFSET, machine),
            (ce::OBJECT_OFFSET, object),
            (ce::INSTANCE_OFFSET, instance),
            (ce::PARENT_OFFSET, parent),
            (ce::INSTANCE_INDEX, s.instance_index),
            (ce::COUNTER_OFFSET, counter),
        ] {
            out.put_i32(start + at, v);
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
    out.zeros(sl::LEN);
    out.put(0, &sl::SIGNATURE);
    for e in entries {
        let kind = match e {
            SampleEntry::Counter(_) => sr::KIND_COUNTER,
            SampleEntry::Instances { .. } => sr::KIND_INSTANCES,
            SampleEntry::Block(_) => sr::KIND_BLOCK,
            SampleEntry::Raw { kind, .. } => *kind,
        };
        let start = sub_record_header(&mut out, kind);
        match e {
            SampleEntry::Counter(r) => {
                let body = out.pos();
                out.zeros(prc::LEN);
                out.put_u32(body + prc::C_STATUS, r.status.0);
                out.put_i64(body + prc::TIME_STAMP, r.time_stamp);
                out.put_i64(body + prc::FIRST_VALUE, r.first);
                out.put_i64(body + prc::SECOND_VALUE, r.second);
                out.put_u32(body + prc::MULTI_COUNT, r.multi_count);
            }
            SampleEntry::Instances {
                status,
                time_stamp,
                items,
            } => {
                let body = out.pos();
                let names_at = rca::LEN + items.len() * rci::LEN;
                let mut names = Writer::new(Endian::Little);
                let mut offsets = Vec::with_capacity(items.len());
                for item in items {
                    offsets.push((names_at + names.pos()) as u32);
                    utf16z(&mut names, &item.name);
                }
                let size = (names_at + names.pos()).next_multiple_of(8);
                out.zeros(names_at);
                out.put_u32(body + rca::SIZE, size as u32);
                out.put_u32(body + rca::COUNT, items.len() as u32);
                out.put_u32(body + rca::C_STATUS, status.0);
                out.put_i64(body + rca::TIME_STAMP, *time_stamp);
                for (i, (item, offset)) in items.iter().zip(offsets).enumerate() {
                    let at = body + rca::LEN + i * rci::LEN;
                    out.put_u32(at + rci::NAME_OFFSET, offset);
                    out.put_u32(at + rci::MULTI_COUNT, item.multi_count);
                    out.put_i64(at + rci::FIRST_VALUE, item.first);
                    out.put_i64(at + rci::SECOND_VALUE, item.second);
                }
                out.bytes(names.as_bytes());
                out.fill_to(body + size, 0);
            }
            SampleEntry::Block(bytes) | SampleEntry::Raw { body: bytes, .. } => {
                out.bytes(bytes);
            }
        }
        out.put_u32(start + sr::SIZE, (out.pos() - start) as u32);
    }
    out.put_u32(sl::TOTAL, out.pos() as u32);
    *buf = out.into_bytes();
}

/// The header of a sub-record of `kind` at the end of `out`, its size left 0 for the caller to
/// write; returns the header's offset.
fn sub_record_header(out: &mut Writer, kind: u8) -> usize {
    let start = out.pos();
    out.zeros(sr::LEN);
    out.put(start + sr::SIGNATURE, &sl::SIGNATURE);
    out.put(start + sr::KIND, &[kind]);
    start
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
    let mut out = Writer::reuse(Vec::with_capacity(tl::LEN), Endian::Little);
    out.zeros(tl::LEN);
    out.put_i64(tl::FIRST_TIME, first);
    out.put_i64(tl::LAST_TIME, last);
    out.put_u32(tl::SAMPLES, samples);
    out.put_u32(tl::ENTRIES, entries);
    out.put_u32(tl::FLAGS, tl::FLAGS_SEEN);
    for body in bodies {
        let start = sub_record_header(&mut out, sr::KIND_BLOCK);
        out.put_u32(start + sr::SIZE, (body.len() + sr::LEN) as u32);
        out.bytes(body);
    }
    out.put_u32(tl::SIZE, out.pos() as u32);
    out.into_bytes()
}
