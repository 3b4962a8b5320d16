//! The ETW container of a binary log: buffers, the log-file header, and event headers.
//!
//! A `.blg` file is a classic ETW trace file: a sequence of equal-sized buffers (64 KiB as Performance
//! Monitor writes them), each starting with a 0x48-byte `WMI_BUFFER_HEADER` whose `FilledBytes`
//! (offset 0x30) says how much of the buffer holds events. The first buffer holds one
//! `SYSTEM_TRACE_HEADER` event carrying the `TRACE_LOGFILE_HEADER`; every other event has a 48-byte
//! `EVENT_TRACE_HEADER`. Events are 8-byte aligned. The offsets are in [`super::layout`].

use super::layout::{
    buffer_header as bh, event_trace_header as eth, logfile_header as lf,
    system_trace_header as sth, time_zone_information as tzi,
};
use super::read::{shift, utf16_lossy, utf16_terminated};
use crate::format::read::{check_min_size, check_size, fixed, Endian, Reader};
use crate::format::structure;
use crate::format::v2::Guid;
use crate::format::{DecodeError, ErrorKind};
use crate::snapshot::SystemTime;

/// The header of one buffer (`WMI_BUFFER_HEADER`), as far as the reader uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferHeader {
    /// `BufferSize`.
    pub buffer_size: u32,
    /// `FilledBytes`: the end of the last event, counted from the buffer start.
    pub filled_bytes: u32,
    /// `TimeStamp` (its meaning differs between Windows versions).
    pub time_stamp: i64,
    /// `BufferFlag`.
    pub flags: u16,
    /// `BufferType`.
    pub buffer_type: u16,
}

impl BufferHeader {
    /// Parses and checks the header of a buffer that starts at file offset `file_offset`: the
    /// buffer size must equal `expected_size` (when given) and `FilledBytes` must lie between the
    /// header's end and the buffer's end.
    pub(crate) fn parse(
        buf: &[u8],
        file_offset: usize,
        expected_size: Option<u32>,
    ) -> Result<BufferHeader, DecodeError> {
        const S: &str = structure::WMI_BUFFER_HEADER;
        let relocate = |e: DecodeError| shift(e, file_offset);
        // A text file given as a binary log: say so rather than name a size (a log's first
        // buffer starts with its size, 65536, whose bytes hold zeros: never text).
        if let Some(looks_like) = (file_offset == 0).then(|| super::text_kind(buf)).flatten() {
            return Err(DecodeError::new(S, 0, ErrorKind::Text { looks_like }));
        }
        let b = Reader::new(buf);
        b.bytes(S, 0, bh::LEN).map_err(relocate)?;
        let buffer_size = b.u32(S, bh::BUFFER_SIZE).map_err(relocate)?;
        match expected_size {
            Some(expected) if buffer_size != expected => {
                return Err(DecodeError::new(
                    S,
                    file_offset,
                    ErrorKind::InvalidValue {
                        field: "BufferSize",
                        value: i64::from(buffer_size),
                        rule: "not the buffer size of the log's first buffer",
                    },
                ))
            }
            _ => {}
        }
        if !(bh::MIN_BUFFER_SIZE..=bh::MAX_BUFFER_SIZE).contains(&buffer_size)
            || !(buffer_size as usize).is_multiple_of(bh::ALIGNMENT)
        {
            return Err(DecodeError::new(
                S,
                file_offset,
                ErrorKind::InvalidValue {
 field: "BufferSize",
 value: i64::from(buffer_size),
 rule: "not a multiple of 8 between 80 bytes and 1 MiB (logs Windows writes have 65536)",
 },
            ));
        }
        let filled_bytes = b.u32(S, bh::FILLED_BYTES).map_err(relocate)?;
        if filled_bytes > buffer_size || (filled_bytes as usize) < bh::LEN {
            return Err(DecodeError::new(
                S,
                file_offset + bh::FILLED_BYTES,
                ErrorKind::InvalidValue {
                    field: "FilledBytes",
                    value: i64::from(filled_bytes),
                    rule: "not between the header length (72) and the buffer size",
                },
            ));
        }
        Ok(BufferHeader {
            buffer_size,
            filled_bytes,
            time_stamp: b.i64(S, bh::TIME_STAMP).map_err(relocate)?,
            flags: b.u16(S, bh::FLAGS).map_err(relocate)?,
            buffer_type: b.u16(S, bh::BUFFER_TYPE).map_err(relocate)?,
        })
    }
}

/// `TIME_ZONE_INFORMATION` as the log-file header stores it: the writer's time zone.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TimeZoneInformation {
    /// `Bias`: UTC = local time + bias, in minutes (480 for US Pacific).
    pub bias: i32,
    /// `StandardName`: a literal name (`"SA Eastern Standard Time"`) or, from Vista on, a resource
    /// reference (`"@tzres.dll,-212"`); see [`super::timezone`].
    pub standard_name: String,
    /// `StandardDate`: when standard time starts (month 0 = no daylight saving time).
    pub standard_date: SystemTime,
    /// `StandardBias`, added to `bias` during standard time.
    pub standard_bias: i32,
    /// `DaylightName`, like `standard_name`.
    pub daylight_name: String,
    /// `DaylightDate`: when daylight saving time starts.
    pub daylight_date: SystemTime,
    /// `DaylightBias`, added to `bias` during daylight saving time (usually −60).
    pub daylight_bias: i32,
}

impl TimeZoneInformation {
    /// Parses the [`tzi::LEN`] bytes of a `TIME_ZONE_INFORMATION`.
    pub(crate) fn parse(b: &[u8]) -> TimeZoneInformation {
        let i32_at = |o: usize| super::read::le_u32(b, o) as i32;
        let time_at = |o: usize| Endian::Little.system_time_at(b, o);
        let name_at = |o: usize| utf16_lossy(b.get(o..o + tzi::NAME_LEN).unwrap_or(&[]));
        TimeZoneInformation {
            bias: i32_at(tzi::BIAS),
            standard_name: name_at(tzi::STANDARD_NAME),
            standard_date: time_at(tzi::STANDARD_DATE),
            standard_bias: i32_at(tzi::STANDARD_BIAS),
            daylight_name: name_at(tzi::DAYLIGHT_NAME),
            daylight_date: time_at(tzi::DAYLIGHT_DATE),
            daylight_bias: i32_at(tzi::DAYLIGHT_BIAS),
        }
    }
}

/// The log-file header: the `SYSTEM_TRACE_HEADER` event at the start of the first buffer and the
/// `TRACE_LOGFILE_HEADER` it carries, followed by the logger name and the log file's original path.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LogFileHeader {
    /// `SYSTEM_TRACE_HEADER.Version` (0, 1 or 2 seen).
    pub header_version: u16,
    /// `SYSTEM_TRACE_HEADER.HeaderType`: [`sth::TYPE_SYSTEM32`] or [`sth::TYPE_SYSTEM64`].
    pub header_type: u8,
    /// `BufferSize`: the size of every buffer of the file.
    pub buffer_size: u32,
    /// `Version` (four bytes: major, minor, sub, sub-minor).
    pub version: u32,
    /// `ProviderVersion`: the writer's Windows build (3790 = Server 2003, 6000 = Vista, 9200 =
    /// Windows 8 / Server 2012).
    pub os_build: u32,
    /// `NumberOfProcessors`.
    pub number_of_processors: u32,
    /// `EndTime`: when the log was closed, a UTC FILETIME (0 when never closed).
    pub end_time: i64,
    /// `TimerResolution` in 100 ns units.
    pub timer_resolution: u32,
    /// `MaximumFileSize` in MiB (0 = none).
    pub maximum_file_size: u32,
    /// `LogFileMode` (`EVENT_TRACE_FILE_MODE_*` flags; 0x1 sequential, 0x2 circular).
    pub log_file_mode: u32,
    /// `BuffersWritten`: buffers in the file, this one included.
    pub buffers_written: u32,
    /// `StartBuffers`.
    pub start_buffers: u32,
    /// `PointerSize`: 4 for a 32-bit writer, 8 for a 64-bit one.
    pub pointer_size: u32,
    /// `EventsLost`.
    pub events_lost: u32,
    /// `CpuSpeedInMHz`.
    pub cpu_speed_mhz: u32,
    /// `TimeZone`: the writer's time zone.
    pub time_zone: TimeZoneInformation,
    /// `BootTime`, a UTC FILETIME (0 in the Server 2003 log).
    pub boot_time: i64,
    /// `PerfFreq`: the writer's performance-counter frequency.
    pub perf_freq: i64,
    /// `StartTime`: when the log was opened, a UTC FILETIME.
    pub start_time: i64,
    /// `ReservedFlags`: the clock type (2 = system time, in every log seen).
    pub reserved_flags: u32,
    /// `BuffersLost`.
    pub buffers_lost: u32,
    /// The logger (session) name after the header: a GUID string in logs Performance Monitor writes,
    /// the same GUID every PDH event carries as its log GUID.
    pub logger_name: String,
    /// The log file's path when it was written, e.g. `C:\PerfLogs\Admin\Basic\BasicPerfCounters02.blg`.
    pub log_file_name: String,
}

impl LogFileHeader {
    /// Parses the header event at [`bh::LEN`] of the first buffer (`buf`, which starts at
    /// file offset 0 and whose events end at `filled`). Returns the header and the offset of the
    /// next event in the buffer.
    pub(crate) fn parse(buf: &[u8], filled: usize) -> Result<(LogFileHeader, usize), DecodeError> {
        const S: &str = structure::SYSTEM_TRACE_HEADER;
        const L: &str = structure::TRACE_LOGFILE_HEADER;
        let at = bh::LEN;
        let events = Reader::new(buf.get(..filled).unwrap_or(buf));
        let header_version = events.u16(S, at + sth::VERSION)?;
        let header_type = events.u8(S, at + sth::HEADER_TYPE)?;
        if header_type != sth::TYPE_SYSTEM32 && header_type != sth::TYPE_SYSTEM64 {
            return Err(DecodeError::new(
                S,
                at + sth::HEADER_TYPE,
                ErrorKind::InvalidValue {
                    field: "HeaderType",
                    value: i64::from(header_type),
                    rule: "neither 1 nor 2 (the log-file header of a 32- or 64-bit writer)",
                },
            ));
        }
        let size = usize::from(events.u16(S, at + sth::SIZE)?);
        let min = sth::LEN + lf::MIN_LEN;
        check_min_size(S, at, size as u64, min as u64)?;
        let event = Reader::new(events.bytes(S, at, size).map_err(|e| {
            DecodeError::new(
                e.structure(),
                e.offset(),
                ErrorKind::SizeExceedsParent {
                    size: size as u64,
                    available: events.remaining(at) as u64,
                },
            )
        })?);
        let relocate = |e: DecodeError| shift(e, at);
        let h = sth::LEN;
        let pointer_size = event.u32(L, h + lf::POINTER_SIZE).map_err(relocate)?;
        let expected_pointer = if header_type == sth::TYPE_SYSTEM64 {
            8
        } else {
            4
        };
        if pointer_size != expected_pointer {
            return Err(DecodeError::new(
                L,
                at + h + lf::POINTER_SIZE,
                ErrorKind::InvalidValue {
                    field: "PointerSize",
                    value: i64::from(pointer_size),
                    rule: "not the header type's (4 for a 32-bit header, 8 for a 64-bit one)",
                },
            ));
        }
        let p = pointer_size as usize;
        let fixed_end = h + lf::len(p);
        check_min_size(S, at, size as u64, fixed_end as u64)?;
        let u32_at = |o: usize| event.u32(L, h + o).map_err(relocate);
        let i64_at = |o: usize| event.i64(L, h + o).map_err(relocate);
        let buffer_size = u32_at(lf::BUFFER_SIZE)?;
        let tz = TimeZoneInformation::parse(
            event
                .bytes(L, h + lf::time_zone(p), tzi::LEN)
                .map_err(relocate)?,
        );
        // The two strings follow the fixed part, each NUL-terminated; a missing one is empty.
        let rest = event.as_bytes().get(fixed_end..).unwrap_or(&[]);
        let (logger_name, rest) = match utf16_terminated(rest) {
            Some(s) => (utf16_lossy(s), rest.get(s.len() + 2..).unwrap_or(&[])),
            None => (utf16_lossy(rest), &[][..]),
        };
        let log_file_name = utf16_lossy(rest);
        let header = LogFileHeader {
            header_version,
            header_type,
            buffer_size,
            version: u32_at(lf::VERSION)?,
            os_build: u32_at(lf::PROVIDER_VERSION)?,
            number_of_processors: u32_at(lf::NUMBER_OF_PROCESSORS)?,
            end_time: i64_at(lf::END_TIME)?,
            timer_resolution: u32_at(lf::TIMER_RESOLUTION)?,
            maximum_file_size: u32_at(lf::MAXIMUM_FILE_SIZE)?,
            log_file_mode: u32_at(lf::LOG_FILE_MODE)?,
            buffers_written: u32_at(lf::BUFFERS_WRITTEN)?,
            start_buffers: u32_at(lf::START_BUFFERS)?,
            pointer_size,
            events_lost: u32_at(lf::EVENTS_LOST)?,
            cpu_speed_mhz: u32_at(lf::CPU_SPEED_MHZ)?,
            time_zone: tz,
            boot_time: i64_at(lf::boot_time(p))?,
            perf_freq: i64_at(lf::perf_freq(p))?,
            start_time: i64_at(lf::start_time(p))?,
            reserved_flags: u32_at(lf::reserved_flags(p))?,
            buffers_lost: u32_at(lf::buffers_lost(p))?,
            logger_name,
            log_file_name,
        };
        Ok((header, (at + size).next_multiple_of(bh::ALIGNMENT)))
    }

    /// Whether the writer was a 64-bit process.
    pub fn is_64_bit(&self) -> bool {
        self.pointer_size == 8
    }

    /// Whether the log was written in circular mode (`EVENT_TRACE_FILE_MODE_CIRCULAR`).
    pub fn is_circular(&self) -> bool {
        self.log_file_mode & lf::EVENT_TRACE_FILE_MODE_CIRCULAR != 0
    }
}

/// An `EVENT_TRACE_HEADER`: the 48-byte header of every event after the log-file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventHeader {
    /// `Size`: header and payload, in bytes.
    pub size: u16,
    /// `HeaderType`: [`eth::TYPE_FULL_HEADER32`] or [`eth::TYPE_FULL_HEADER64`].
    pub header_type: u8,
    /// `MarkerFlags` (0xC0 in every event seen).
    pub marker_flags: u8,
    /// `Class.Type`: the PDH record kind (see [`super::RecordKind`]).
    pub class_type: u8,
    /// `Class.Level`.
    pub class_level: u8,
    /// `Class.Version` (0x3C in every PDH event seen).
    pub class_version: u16,
    /// `ThreadId` of the writer.
    pub thread_id: u32,
    /// `ProcessId` of the writer.
    pub process_id: u32,
    /// `TimeStamp`: for PDH events the **local** time of the record, as a FILETIME.
    pub time_stamp: i64,
    /// `Guid`: the provider; [`super::PDH_PROVIDER_GUID`] for PDH records.
    pub guid: Guid,
    /// `KernelTime` and `UserTime` (or `ProcessorTime`), unused.
    pub processor_time: u64,
}

impl EventHeader {
    /// Parses the event header at `at` of `events` (the filled part of a buffer) and checks that
    /// the event lies inside it. Offsets in errors are relative to `events`.
    pub(crate) fn parse(events: &[u8], at: usize) -> Result<EventHeader, DecodeError> {
        const S: &str = structure::EVENT_TRACE_HEADER;
        let b = Reader::new(events);
        let raw = b.bytes(S, at, eth::LEN)?;
        let r = Reader::new(raw);
        let header = EventHeader {
            size: r.u16(S, eth::SIZE)?,
            header_type: r.u8(S, eth::HEADER_TYPE)?,
            marker_flags: r.u8(S, eth::MARKER_FLAGS)?,
            class_type: r.u8(S, eth::CLASS_TYPE)?,
            class_level: r.u8(S, eth::CLASS_LEVEL)?,
            class_version: r.u16(S, eth::CLASS_VERSION)?,
            thread_id: r.u32(S, eth::THREAD_ID)?,
            process_id: r.u32(S, eth::PROCESS_ID)?,
            time_stamp: r.i64(S, eth::TIME_STAMP)?,
            guid: Guid::from_bytes(r.bytes(S, eth::GUID, 16).map(|b| fixed::<16>(b, 0))?),
            processor_time: r.u64(S, eth::PROCESSOR_TIME)?,
        };
        check_size(
            S,
            at,
            u64::from(header.size),
            eth::LEN as u64,
            false,
            b.remaining(at) as u64,
        )?;
        Ok(header)
    }
}
