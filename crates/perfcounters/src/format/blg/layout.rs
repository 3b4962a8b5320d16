//! The layout of a binary log, declared once: the offsets, sizes and fixed values of the ETW
//! container's structures (`WMI_BUFFER_HEADER`, `SYSTEM_TRACE_HEADER`, `TRACE_LOGFILE_HEADER`,
//! `TIME_ZONE_INFORMATION`, `EVENT_TRACE_HEADER`) and of the PDH records inside them. The reader
//! ([`BlgReader`](super::BlgReader) and the views of its records:
//! [`LogFileHeader`](super::LogFileHeader), [`PdhRecord`](super::PdhRecord),
//! [`CounterList`](super::CounterList), [`PdhSample`](super::PdhSample), [`Trailer`](super::Trailer)),
//! the writer ([`encode`](super::encode)) and the sniffing ([`looks_like_blg`](super::looks_like_blg))
//! use these and no literal offsets.
//!
//! Offsets are from the start of each structure, little-endian. The container's structures are
//! documented by Microsoft and Geoff Chappell; the PDH records were learned from real logs
//! (`docs/blg.md`).

/// `WMI_BUFFER_HEADER`: the header at the start of every buffer.
pub mod buffer_header {
    /// `ULONG BufferSize`: the size of every buffer of the file.
    pub const BUFFER_SIZE: usize = 0x00;
    /// `ULONG SavedOffset`.
    pub const SAVED_OFFSET: usize = 0x04;
    /// `ULONG CurrentOffset`.
    pub const CURRENT_OFFSET: usize = 0x08;
    /// `LARGE_INTEGER TimeStamp` (its meaning differs between Windows versions).
    pub const TIME_STAMP: usize = 0x10;
    /// `LONGLONG SequenceNumber`.
    pub const SEQUENCE_NUMBER: usize = 0x18;
    /// `ClientContext` (processor number, alignment, logger id): four bytes.
    pub const CLIENT_CONTEXT: usize = 0x28;
    /// `ULONG State`.
    pub const STATE: usize = 0x2C;
    /// `ULONG FilledBytes` (`Offset`): the end of the buffer's last event, counted from the
    /// buffer's start.
    pub const FILLED_BYTES: usize = 0x30;
    /// `USHORT BufferFlag`.
    pub const FLAGS: usize = 0x34;
    /// `USHORT BufferType`.
    pub const BUFFER_TYPE: usize = 0x36;
    /// Size of the structure; the first event follows it.
    pub const LEN: usize = 0x48;

    /// The buffer size Performance Monitor writes: 64 KiB.
    pub const DEFAULT_BUFFER_SIZE: u32 = 0x1_0000;
    /// The smallest buffer size accepted: the header and one 8-byte unit.
    pub const MIN_BUFFER_SIZE: u32 = LEN as u32 + 8;
    /// The largest buffer size accepted (ETW's own maximum is 1 MiB).
    pub const MAX_BUFFER_SIZE: u32 = 0x10_0000;
    /// Events start on multiples of this within a buffer, and buffer sizes are multiples of it.
    pub const ALIGNMENT: usize = 8;
}

/// `SYSTEM_TRACE_HEADER`: the header of the log-file header event, at [`buffer_header::LEN`] of
/// the first buffer.
pub mod system_trace_header {
    /// `USHORT Version`.
    pub const VERSION: usize = 0x00;
    /// `UCHAR HeaderType`.
    pub const HEADER_TYPE: usize = 0x02;
    /// `UCHAR MarkerFlags`.
    pub const MARKER_FLAGS: usize = 0x03;
    /// `USHORT Size`: the header and its payload, in bytes.
    pub const SIZE: usize = 0x04;
    /// `USHORT HookId` (0: the log-file header).
    pub const HOOK_ID: usize = 0x06;
    /// `ULONG ThreadId`.
    pub const THREAD_ID: usize = 0x08;
    /// `ULONG ProcessId`.
    pub const PROCESS_ID: usize = 0x0C;
    /// `LARGE_INTEGER SystemTime`.
    pub const SYSTEM_TIME: usize = 0x10;
    /// `ULONG KernelTime`, `ULONG UserTime`.
    pub const PROCESSOR_TIME: usize = 0x18;
    /// Size of the structure; the `TRACE_LOGFILE_HEADER` follows it.
    pub const LEN: usize = 0x20;

    /// `HeaderType` of a 32-bit writer.
    pub const TYPE_SYSTEM32: u8 = 0x01;
    /// `HeaderType` of a 64-bit writer.
    pub const TYPE_SYSTEM64: u8 = 0x02;
    /// `MarkerFlags` of every header event seen (`TRACE_HEADER_FLAG` | `TRACE_HEADER_EVENT_TRACE`).
    pub const MARKER: u8 = 0xC0;
}

/// `TRACE_LOGFILE_HEADER`, after the [`system_trace_header`]. Its fields from `LoggerName` on move
/// with the writer's pointer size, so they are functions of it.
pub mod logfile_header {
    use super::time_zone_information;

    /// `ULONG BufferSize`.
    pub const BUFFER_SIZE: usize = 0x00;
    /// `ULONG Version` (major, minor, sub, sub-minor bytes).
    pub const VERSION: usize = 0x04;
    /// `ULONG ProviderVersion`: the writer's Windows build.
    pub const PROVIDER_VERSION: usize = 0x08;
    /// `ULONG NumberOfProcessors`.
    pub const NUMBER_OF_PROCESSORS: usize = 0x0C;
    /// `LARGE_INTEGER EndTime`.
    pub const END_TIME: usize = 0x10;
    /// `ULONG TimerResolution`.
    pub const TIMER_RESOLUTION: usize = 0x18;
    /// `ULONG MaximumFileSize`.
    pub const MAXIMUM_FILE_SIZE: usize = 0x1C;
    /// `ULONG LogFileMode`.
    pub const LOG_FILE_MODE: usize = 0x20;
    /// `ULONG BuffersWritten`.
    pub const BUFFERS_WRITTEN: usize = 0x24;
    /// `ULONG StartBuffers`.
    pub const START_BUFFERS: usize = 0x28;
    /// `ULONG PointerSize`.
    pub const POINTER_SIZE: usize = 0x2C;
    /// `ULONG EventsLost`.
    pub const EVENTS_LOST: usize = 0x30;
    /// `ULONG CpuSpeedInMHz`.
    pub const CPU_SPEED_MHZ: usize = 0x34;
    /// `LPWSTR LoggerName`, then `LPWSTR LogFileName`: two pointers (meaningless in the file).
    pub const LOGGER_NAME: usize = 0x38;

    /// `TIME_ZONE_INFORMATION TimeZone`, after the two pointers.
    pub const fn time_zone(pointer_size: usize) -> usize {
        LOGGER_NAME + 2 * pointer_size
    }

    /// `LARGE_INTEGER BootTime`: the first field after the time zone, 8-aligned within the
    /// structure.
    pub const fn boot_time(pointer_size: usize) -> usize {
        (time_zone(pointer_size) + time_zone_information::LEN).next_multiple_of(8)
    }

    /// `LARGE_INTEGER PerfFreq`.
    pub const fn perf_freq(pointer_size: usize) -> usize {
        boot_time(pointer_size) + 0x08
    }

    /// `LARGE_INTEGER StartTime`.
    pub const fn start_time(pointer_size: usize) -> usize {
        boot_time(pointer_size) + 0x10
    }

    /// `ULONG ReservedFlags`: the clock type.
    pub const fn reserved_flags(pointer_size: usize) -> usize {
        boot_time(pointer_size) + 0x18
    }

    /// `ULONG BuffersLost`.
    pub const fn buffers_lost(pointer_size: usize) -> usize {
        boot_time(pointer_size) + 0x1C
    }

    /// Size of the structure; the logger name and the log file's path follow it, NUL-terminated
    /// UTF-16 strings.
    pub const fn len(pointer_size: usize) -> usize {
        boot_time(pointer_size) + 0x20
    }

    /// The smallest structure: a 32-bit writer's.
    pub const MIN_LEN: usize = len(4);

    /// `LogFileMode` flag `EVENT_TRACE_FILE_MODE_CIRCULAR`: the log wraps around at its maximum size.
    pub const EVENT_TRACE_FILE_MODE_CIRCULAR: u32 = 0x0000_0002;
}

/// `TIME_ZONE_INFORMATION`, inside the [`logfile_header`].
pub mod time_zone_information {
    /// `LONG Bias`, in minutes: UTC = local time + bias.
    pub const BIAS: usize = 0;
    /// `WCHAR StandardName[32]`.
    pub const STANDARD_NAME: usize = 4;
    /// `SYSTEMTIME StandardDate`.
    pub const STANDARD_DATE: usize = 68;
    /// `LONG StandardBias`.
    pub const STANDARD_BIAS: usize = 84;
    /// `WCHAR DaylightName[32]`.
    pub const DAYLIGHT_NAME: usize = 88;
    /// `SYSTEMTIME DaylightDate`.
    pub const DAYLIGHT_DATE: usize = 152;
    /// `LONG DaylightBias`.
    pub const DAYLIGHT_BIAS: usize = 168;
    /// Size of the structure.
    pub const LEN: usize = 172;

    /// Length in bytes of each name field (32 UTF-16 units, the last a NUL when full).
    pub const NAME_LEN: usize = 64;
    /// Length in bytes of a `SYSTEMTIME`.
    pub const SYSTEMTIME_LEN: usize = 16;
}

/// `EVENT_TRACE_HEADER`: the header of every event after the log-file header.
pub mod event_trace_header {
    /// `USHORT Size`: the header and its payload, in bytes.
    pub const SIZE: usize = 0;
    /// `UCHAR HeaderType`.
    pub const HEADER_TYPE: usize = 2;
    /// `UCHAR MarkerFlags`.
    pub const MARKER_FLAGS: usize = 3;
    /// `UCHAR Class.Type`: the PDH record kind.
    pub const CLASS_TYPE: usize = 4;
    /// `UCHAR Class.Level`.
    pub const CLASS_LEVEL: usize = 5;
    /// `USHORT Class.Version`.
    pub const CLASS_VERSION: usize = 6;
    /// `ULONG ThreadId`.
    pub const THREAD_ID: usize = 8;
    /// `ULONG ProcessId`.
    pub const PROCESS_ID: usize = 12;
    /// `LARGE_INTEGER TimeStamp`.
    pub const TIME_STAMP: usize = 16;
    /// `GUID Guid`: the provider.
    pub const GUID: usize = 24;
    /// `ULONG KernelTime`, `ULONG UserTime` (or `ULONG64 ProcessorTime`).
    pub const PROCESSOR_TIME: usize = 40;
    /// Size of the structure; the event's payload follows it.
    pub const LEN: usize = 48;

    /// `HeaderType` of a 32-bit writer.
    pub const TYPE_FULL_HEADER32: u8 = 0x0A;
    /// `HeaderType` of a 64-bit writer.
    pub const TYPE_FULL_HEADER64: u8 = 0x14;
    /// `MarkerFlags` of every event seen.
    pub const MARKER: u8 = 0xC0;
}

/// What every PDH event carries after its [`event_trace_header`], before its part of the record.
pub mod pdh_event {
    /// The 16-byte log GUID (the same in every event of one log).
    pub const LOG_GUID: usize = 0;
    /// `u32`: the fragment's index, 1-based.
    pub const FRAGMENT_INDEX: usize = 16;
    /// `u32`: the record's number of fragments.
    pub const FRAGMENT_COUNT: usize = 20;
    /// Length of this part; the record's data follows.
    pub const LEN: usize = 24;
    /// `Class.Version` of every PDH event seen.
    pub const VERSION: u16 = 0x3C;
}

/// The `Class.Type` of each PDH record kind.
pub mod class_type {
    /// The counter list.
    pub const COUNTER_LIST: u8 = 0x20;
    /// One sample.
    pub const SAMPLE: u8 = 0x22;
    /// The trailer written when the log is closed.
    pub const TRAILER: u8 = 0x23;
    /// A chunk of the counter name table.
    pub const NAME_TABLE: u8 = 0x24;
}

/// The counter list (record kind 0x20): a prefix, then [`counter_entry`]s back to back.
pub mod counter_list {
    /// Length of the prefix (`FF 06 00 00 08 00 02 00` in every log seen).
    pub const PREFIX_LEN: usize = 8;
    /// The first `u32` of the prefix in every log seen.
    pub const SIGNATURE: u32 = 0x0000_06FF;
    /// The two `u16`s after the signature in every log seen.
    pub const PREFIX_WORDS: [u16; 2] = [8, 2];
}

/// One entry of the counter list.
pub mod counter_entry {
    /// `u32 Size`: the entry's length, strings included.
    pub const SIZE: usize = 0x00;
    /// `u32 Flags`.
    pub const FLAGS: usize = 0x04;
    /// `u32 UserData`.
    pub const USER_DATA: usize = 0x08;
    /// `u32 CounterType`.
    pub const COUNTER_TYPE: usize = 0x0C;
    /// `i64 TimeBase`.
    pub const TIME_BASE: usize = 0x10;
    /// `i32 DefaultScale`.
    pub const DEFAULT_SCALE: usize = 0x18;
    /// `i32 MachineOffset`: string offsets count from [`LEN`]; −1 = absent.
    pub const MACHINE_OFFSET: usize = 0x1C;
    /// `i32 ObjectOffset`.
    pub const OBJECT_OFFSET: usize = 0x20;
    /// `i32 InstanceOffset`.
    pub const INSTANCE_OFFSET: usize = 0x24;
    /// `i32 ParentOffset`.
    pub const PARENT_OFFSET: usize = 0x28;
    /// `i32 InstanceIndex`.
    pub const INSTANCE_INDEX: usize = 0x2C;
    /// `i32 CounterOffset`.
    pub const COUNTER_OFFSET: usize = 0x30;
    /// Size of the fixed part; the NUL-terminated UTF-16 strings follow it.
    pub const LEN: usize = 0x34;
    /// The string offsets in entry order: machine, object, instance, parent, counter.
    pub const STRING_OFFSETS: [usize; 5] = [
        MACHINE_OFFSET,
        OBJECT_OFFSET,
        INSTANCE_OFFSET,
        PARENT_OFFSET,
        COUNTER_OFFSET,
    ];
}

/// A sample (record kind 0x22): a header, then one [`sub_record`] per counter-list entry.
pub mod sample {
    /// The three signature bytes of a sample and of each sub-record: `"BL" 03`.
    pub const SIGNATURE: [u8; 3] = [b'B', b'L', 3];
    /// The byte after the signature in a sample's header.
    pub const KIND: usize = 3;
    /// `u32`: the sample's length.
    pub const TOTAL: usize = 4;
    /// Size of the header; the first sub-record follows.
    pub const LEN: usize = 8;
}

/// The header of one sub-record of a sample.
pub mod sub_record {
    /// The [`sample::SIGNATURE`](super::sample::SIGNATURE).
    pub const SIGNATURE: usize = 0;
    /// The kind byte after the signature.
    pub const KIND: usize = 3;
    /// `u32`: the sub-record's length, this header included.
    pub const SIZE: usize = 4;
    /// Size of the header; the body follows.
    pub const LEN: usize = 8;

    /// Kind of one [`pdh_raw_counter`](super::pdh_raw_counter).
    pub const KIND_COUNTER: u8 = 1;
    /// Kind of the instances of a wildcard counter ([`raw_counter_array`](super::raw_counter_array)).
    pub const KIND_INSTANCES: u8 = 2;
    /// Kind of a whole V1 `PERF_DATA_BLOCK`.
    pub const KIND_BLOCK: u8 = 5;
}

/// `PDH_RAW_COUNTER` as a sample stores it (natural alignment, 32- and 64-bit writers alike).
pub mod pdh_raw_counter {
    /// `DWORD CStatus`.
    pub const C_STATUS: usize = 0;
    /// `FILETIME TimeStamp` (local time).
    pub const TIME_STAMP: usize = 4;
    /// `LONGLONG FirstValue`, after 4 bytes of padding.
    pub const FIRST_VALUE: usize = 16;
    /// `LONGLONG SecondValue`.
    pub const SECOND_VALUE: usize = 24;
    /// `DWORD MultiCount`, then 4 bytes of padding.
    pub const MULTI_COUNT: usize = 32;
    /// Size of the structure.
    pub const LEN: usize = 40;
}

/// The instances of a wildcard counter (sub-record kind 2): a header, items, then the names.
pub mod raw_counter_array {
    /// `u32`: the body's length.
    pub const SIZE: usize = 0;
    /// `u32`: the number of items.
    pub const COUNT: usize = 4;
    /// `u32 CStatus` of the whole array.
    pub const C_STATUS: usize = 8;
    /// `u32`, 0 in every log seen.
    pub const RESERVED: usize = 12;
    /// `FILETIME TimeStamp` (local time).
    pub const TIME_STAMP: usize = 16;
    /// Size of the header; the items follow.
    pub const LEN: usize = 24;
}

/// One item of a [`raw_counter_array`].
pub mod raw_counter_item {
    /// `u32`: the name's offset from the body's start.
    pub const NAME_OFFSET: usize = 0;
    /// `u32 MultiCount`.
    pub const MULTI_COUNT: usize = 4;
    /// `i64 FirstValue`.
    pub const FIRST_VALUE: usize = 8;
    /// `i64 SecondValue`.
    pub const SECOND_VALUE: usize = 16;
    /// Size of an item.
    pub const LEN: usize = 24;
}

/// The trailer (record kind 0x23): a header, then sub-records of kind 5.
pub mod trailer {
    /// `FILETIME`: the first sample's time.
    pub const FIRST_TIME: usize = 0x00;
    /// `FILETIME`: the last sample's time.
    pub const LAST_TIME: usize = 0x08;
    /// `u32`: the number of samples.
    pub const SAMPLES: usize = 0x10;
    /// `u32`: the number of entries.
    pub const ENTRIES: usize = 0x14;
    /// `u32`: the trailer's length.
    pub const SIZE: usize = 0x18;
    /// `u32`: 0x5FF in the log seen.
    pub const FLAGS: usize = 0x1C;
    /// Size of the header.
    pub const LEN: usize = 0x20;
    /// The value of [`FLAGS`] in the log seen.
    pub const FLAGS_SEEN: u32 = 0x5FF;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logfile_header_follows_the_pointer_size() {
        // 32-bit writer: the zone at 0x40, BootTime at 0xF0, 0x110 bytes in all.
        assert_eq!(logfile_header::time_zone(4), 0x40);
        assert_eq!(logfile_header::boot_time(4), 0xF0);
        assert_eq!(logfile_header::MIN_LEN, 0x110);
        // 64-bit writer: two 8-byte pointers; 0x48 + 172 = 0xF4, aligned to 0xF8.
        assert_eq!(logfile_header::time_zone(8), 0x48);
        assert_eq!(logfile_header::boot_time(8), 0xF8);
        assert_eq!(logfile_header::buffers_lost(8), 0x114);
        assert_eq!(logfile_header::len(8), 0x118);
    }

    #[test]
    fn fields_fill_their_structures() {
        use time_zone_information as tz;
        assert_eq!(tz::STANDARD_NAME + tz::NAME_LEN, tz::STANDARD_DATE);
        assert_eq!(tz::STANDARD_DATE + tz::SYSTEMTIME_LEN, tz::STANDARD_BIAS);
        assert_eq!(tz::DAYLIGHT_NAME + tz::NAME_LEN, tz::DAYLIGHT_DATE);
        assert_eq!(tz::DAYLIGHT_BIAS + 4, tz::LEN);
        assert_eq!(
            event_trace_header::PROCESSOR_TIME + 8,
            event_trace_header::LEN
        );
        assert_eq!(
            system_trace_header::PROCESSOR_TIME + 8,
            system_trace_header::LEN
        );
        assert_eq!(counter_entry::COUNTER_OFFSET + 4, counter_entry::LEN);
        assert_eq!(pdh_raw_counter::MULTI_COUNT + 8, pdh_raw_counter::LEN);
        assert_eq!(raw_counter_array::TIME_STAMP + 8, raw_counter_array::LEN);
        assert_eq!(raw_counter_item::SECOND_VALUE + 8, raw_counter_item::LEN);
        assert_eq!(trailer::FLAGS + 4, trailer::LEN);
        assert_eq!(pdh_event::FRAGMENT_COUNT + 4, pdh_event::LEN);
    }
}
