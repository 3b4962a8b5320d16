//! The ETW container of a binary log: buffers, the log-file header, and event headers.
//!
//! A `.blg` file is a classic ETW trace file: a sequence of equal-sized buffers (64 KiB as Performance
//! Monitor writes them), each starting with a 0x48-byte `WMI_BUFFER_HEADER` whose `FilledBytes`
//! (offset 0x30) says how much of the buffer holds events. The first buffer holds one
//! `SYSTEM_TRACE_HEADER` event carrying the `TRACE_LOGFILE_HEADER`; every other event has a 48-byte
//! `EVENT_TRACE_HEADER`. Events are 8-byte aligned.

use super::read::{shift, utf16_lossy, utf16_terminated};
use crate::format::read::{check_min_size, check_size, fixed, Endian, Reader};
use crate::format::structure;
use crate::format::v2::Guid;
use crate::format::{DecodeError, ErrorKind};
use crate::snapshot::SystemTime;

/// The buffer size Performance Monitor writes: 64 KiB.
pub const DEFAULT_BUFFER_SIZE: u32 = 0x1_0000;
/// The largest buffer size accepted (ETW's own maximum is 1 MiB).
pub const MAX_BUFFER_SIZE: u32 = 0x10_0000;
/// Length of the `WMI_BUFFER_HEADER` at the start of every buffer.
pub const BUFFER_HEADER_LEN: usize = 0x48;
/// Offset of `FilledBytes` (the end of the buffer's events) in the buffer header.
pub const FILLED_BYTES_OFFSET: usize = 0x30;
/// Length of the `SYSTEM_TRACE_HEADER` of the log-file header event.
pub const SYSTEM_TRACE_HEADER_LEN: usize = 0x20;
/// Length of an `EVENT_TRACE_HEADER`.
pub const EVENT_TRACE_HEADER_LEN: usize = 0x30;
/// Length of a `TIME_ZONE_INFORMATION`.
pub const TIME_ZONE_INFORMATION_LEN: usize = 172;

/// `SYSTEM_TRACE_HEADER.HeaderType` of a 32-bit writer.
pub const TRACE_HEADER_TYPE_SYSTEM32: u8 = 0x01;
/// `SYSTEM_TRACE_HEADER.HeaderType` of a 64-bit writer.
pub const TRACE_HEADER_TYPE_SYSTEM64: u8 = 0x02;
/// `EVENT_TRACE_HEADER.HeaderType` of a 32-bit writer.
pub const TRACE_HEADER_TYPE_FULL_HEADER32: u8 = 0x0A;
/// `EVENT_TRACE_HEADER.HeaderType` of a 64-bit writer.
pub const TRACE_HEADER_TYPE_FULL_HEADER64: u8 = 0x14;

/// The header of one buffer (`WMI_BUFFER_HEADER`), as far as the reader uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferHeader {
    /// `BufferSize` (offset 0).
    pub buffer_size: u32,
    /// `FilledBytes` (offset 0x30): the end of the last event, counted from the buffer start.
    pub filled_bytes: u32,
    /// The time stamp at offset 0x10 (its meaning differs between Windows versions).
    pub time_stamp: i64,
    /// The 16-bit flags at offset 0x34.
    pub flags: u16,
    /// The 16-bit buffer type at offset 0x36.
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
        let b = Reader::new(buf);
        b.bytes(S, 0, BUFFER_HEADER_LEN).map_err(relocate)?;
        let buffer_size = b.u32(S, 0).map_err(relocate)?;
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
        if !(BUFFER_HEADER_LEN as u32 + 8..=MAX_BUFFER_SIZE).contains(&buffer_size)
            || buffer_size % 8 != 0
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
        let filled_bytes = b.u32(S, FILLED_BYTES_OFFSET).map_err(relocate)?;
        if filled_bytes > buffer_size || (filled_bytes as usize) < BUFFER_HEADER_LEN {
            return Err(DecodeError::new(
                S,
                file_offset + FILLED_BYTES_OFFSET,
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
            time_stamp: b.i64(S, 0x10).map_err(relocate)?,
            flags: b.u16(S, 0x34).map_err(relocate)?,
            buffer_type: b.u16(S, 0x36).map_err(relocate)?,
        })
    }
}

/// `TIME_ZONE_INFORMATION` as the log-file header stores it: the writer's time zone.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
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
    /// Parses the 172 bytes of a `TIME_ZONE_INFORMATION`.
    pub(crate) fn parse(b: &[u8]) -> TimeZoneInformation {
        let i32_at = |o: usize| super::read::le_u32(b, o) as i32;
        let time_at = |o: usize| Endian::Little.system_time_at(b, o);
        TimeZoneInformation {
            bias: i32_at(0),
            standard_name: utf16_lossy(b.get(4..68).unwrap_or(&[])),
            standard_date: time_at(68),
            standard_bias: i32_at(84),
            daylight_name: utf16_lossy(b.get(88..152).unwrap_or(&[])),
            daylight_date: time_at(152),
            daylight_bias: i32_at(168),
        }
    }
}

/// The log-file header: the `SYSTEM_TRACE_HEADER` event at the start of the first buffer and the
/// `TRACE_LOGFILE_HEADER` it carries, followed by the logger name and the log file's original path.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LogFileHeader {
    /// `SYSTEM_TRACE_HEADER.Version` (0, 1 or 2 seen).
    pub header_version: u16,
    /// `SYSTEM_TRACE_HEADER.HeaderType`: [`TRACE_HEADER_TYPE_SYSTEM32`] or
    /// [`TRACE_HEADER_TYPE_SYSTEM64`].
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

/// `EVENT_TRACE_FILE_MODE_CIRCULAR`: the log wraps around at its maximum size.
pub const EVENT_TRACE_FILE_MODE_CIRCULAR: u32 = 0x0000_0002;

impl LogFileHeader {
    /// Parses the header event at `BUFFER_HEADER_LEN` of the first buffer (`buf`, which starts at
    /// file offset 0 and whose events end at `filled`). Returns the header and the offset of the
    /// next event in the buffer.
    pub(crate) fn parse(buf: &[u8], filled: usize) -> Result<(LogFileHeader, usize), DecodeError> {
        const S: &str = structure::SYSTEM_TRACE_HEADER;
        const L: &str = structure::TRACE_LOGFILE_HEADER;
        let at = BUFFER_HEADER_LEN;
        let events = Reader::new(buf.get(..filled).unwrap_or(buf));
        let header_version = events.u16(S, at)?;
        let header_type = events.u8(S, at + 2)?;
        if header_type != TRACE_HEADER_TYPE_SYSTEM32 && header_type != TRACE_HEADER_TYPE_SYSTEM64 {
            return Err(DecodeError::new(
                S,
                at + 2,
                ErrorKind::InvalidValue {
                    field: "HeaderType",
                    value: i64::from(header_type),
                    rule: "neither 1 nor 2 (the log-file header of a 32- or 64-bit writer)",
                },
            ));
        }
        let size = usize::from(events.u16(S, at + 4)?);
        let min = SYSTEM_TRACE_HEADER_LEN + 0x110;
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
        let h = SYSTEM_TRACE_HEADER_LEN;
        let pointer_size = event.u32(L, h + 0x2C).map_err(relocate)?;
        let expected_pointer = if header_type == TRACE_HEADER_TYPE_SYSTEM64 {
            8
        } else {
            4
        };
        if pointer_size != expected_pointer {
            return Err(DecodeError::new(
                L,
                at + h + 0x2C,
                ErrorKind::InvalidValue {
                    field: "PointerSize",
                    value: i64::from(pointer_size),
                    rule: "not the header type's (4 for a 32-bit header, 8 for a 64-bit one)",
                },
            ));
        }
        let p = pointer_size as usize;
        let tz_at = h + 0x38 + 2 * p;
        // The LARGE_INTEGER after the time zone is 8-aligned within the structure.
        let after_tz = (0x38 + 2 * p + TIME_ZONE_INFORMATION_LEN).next_multiple_of(8) + h;
        let fixed_end = after_tz + 0x20;
        check_min_size(S, at, size as u64, fixed_end as u64)?;
        let u32_at = |o: usize| event.u32(L, h + o).map_err(relocate);
        let buffer_size = u32_at(0)?;
        let tz = TimeZoneInformation::parse(
            event
                .bytes(L, tz_at, TIME_ZONE_INFORMATION_LEN)
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
            version: u32_at(0x04)?,
            os_build: u32_at(0x08)?,
            number_of_processors: u32_at(0x0C)?,
            end_time: event.i64(L, h + 0x10).map_err(relocate)?,
            timer_resolution: u32_at(0x18)?,
            maximum_file_size: u32_at(0x1C)?,
            log_file_mode: u32_at(0x20)?,
            buffers_written: u32_at(0x24)?,
            start_buffers: u32_at(0x28)?,
            pointer_size,
            events_lost: u32_at(0x30)?,
            cpu_speed_mhz: u32_at(0x34)?,
            time_zone: tz,
            boot_time: event.i64(L, after_tz).map_err(relocate)?,
            perf_freq: event.i64(L, after_tz + 8).map_err(relocate)?,
            start_time: event.i64(L, after_tz + 16).map_err(relocate)?,
            reserved_flags: event.u32(L, after_tz + 24).map_err(relocate)?,
            buffers_lost: event.u32(L, after_tz + 28).map_err(relocate)?,
            logger_name,
            log_file_name,
        };
        Ok((header, (at + size).next_multiple_of(8)))
    }

    /// Whether the writer was a 64-bit process.
    pub fn is_64_bit(&self) -> bool {
        self.pointer_size == 8
    }

    /// Whether the log was written in circular mode (`EVENT_TRACE_FILE_MODE_CIRCULAR`).
    pub fn is_circular(&self) -> bool {
        self.log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR != 0
    }
}

/// An `EVENT_TRACE_HEADER`: the 48-byte header of every event after the log-file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventHeader {
    /// `Size`: header and payload, in bytes.
    pub size: u16,
    /// `HeaderType`: [`TRACE_HEADER_TYPE_FULL_HEADER32`] or [`TRACE_HEADER_TYPE_FULL_HEADER64`].
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
        let raw = b.bytes(S, at, EVENT_TRACE_HEADER_LEN)?;
        let r = Reader::new(raw);
        let header = EventHeader {
            size: r.u16(S, 0)?,
            header_type: r.u8(S, 2)?,
            marker_flags: r.u8(S, 3)?,
            class_type: r.u8(S, 4)?,
            class_level: r.u8(S, 5)?,
            class_version: r.u16(S, 6)?,
            thread_id: r.u32(S, 8)?,
            process_id: r.u32(S, 12)?,
            time_stamp: r.i64(S, 16)?,
            guid: Guid::from_bytes(r.bytes(S, 24, 16).map(|b| fixed::<16>(b, 0))?),
            processor_time: r.u64(S, 40)?,
        };
        check_size(
            S,
            at,
            u64::from(header.size),
            EVENT_TRACE_HEADER_LEN as u64,
            false,
            b.remaining(at) as u64,
        )?;
        Ok(header)
    }
}
