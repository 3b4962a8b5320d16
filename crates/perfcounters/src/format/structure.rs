//! The names of the structures of every binary format, as the Windows headers spell them; decode
//! errors ([`DecodeError::structure`](super::DecodeError::structure)) and encode errors name them.

/// V1 `PERF_DATA_BLOCK`: the header of an `HKEY_PERFORMANCE_DATA` block.
pub const PERF_DATA_BLOCK: &str = "PERF_DATA_BLOCK";
/// V1 `PERF_OBJECT_TYPE`.
pub const PERF_OBJECT_TYPE: &str = "PERF_OBJECT_TYPE";
/// V1 `PERF_COUNTER_DEFINITION`.
pub const PERF_COUNTER_DEFINITION: &str = "PERF_COUNTER_DEFINITION";
/// V1 `PERF_INSTANCE_DEFINITION`.
pub const PERF_INSTANCE_DEFINITION: &str = "PERF_INSTANCE_DEFINITION";
/// V1 `PERF_COUNTER_BLOCK`.
pub const PERF_COUNTER_BLOCK: &str = "PERF_COUNTER_BLOCK";

/// V2 `PERF_DATA_HEADER`: the header of a `PerfQueryCounterData` result.
pub const PERF_DATA_HEADER: &str = "PERF_DATA_HEADER";
/// V2 `PERF_COUNTER_HEADER`.
pub const PERF_COUNTER_HEADER: &str = "PERF_COUNTER_HEADER";
/// V2 `PERF_MULTI_COUNTERS`.
pub const PERF_MULTI_COUNTERS: &str = "PERF_MULTI_COUNTERS";
/// V2 `PERF_MULTI_INSTANCES`.
pub const PERF_MULTI_INSTANCES: &str = "PERF_MULTI_INSTANCES";
/// V2 `PERF_INSTANCE_HEADER`.
pub const PERF_INSTANCE_HEADER: &str = "PERF_INSTANCE_HEADER";
/// V2 `PERF_COUNTER_DATA`.
pub const PERF_COUNTER_DATA: &str = "PERF_COUNTER_DATA";
/// V2 `PERF_COUNTER_IDENTIFIER`.
pub const PERF_COUNTER_IDENTIFIER: &str = "PERF_COUNTER_IDENTIFIER";
/// V2 `PERF_COUNTERSET_REG_INFO`.
pub const PERF_COUNTERSET_REG_INFO: &str = "PERF_COUNTERSET_REG_INFO";
/// V2 `PERF_COUNTER_REG_INFO`.
pub const PERF_COUNTER_REG_INFO: &str = "PERF_COUNTER_REG_INFO";
/// V2 `PERF_STRING_BUFFER_HEADER`.
pub const PERF_STRING_BUFFER_HEADER: &str = "PERF_STRING_BUFFER_HEADER";
/// V2 `PERF_STRING_COUNTER_HEADER`.
pub const PERF_STRING_COUNTER_HEADER: &str = "PERF_STRING_COUNTER_HEADER";
/// A NUL-terminated UTF-16 string result (counterset name, help, provider name) or a string of a
/// string buffer.
pub const STRING: &str = "string";
/// A `GUID` result or list.
pub const GUID: &str = "GUID";

/// `.blg` `WMI_BUFFER_HEADER`: the header of every 64 KiB buffer of an ETW trace file.
pub const WMI_BUFFER_HEADER: &str = "WMI_BUFFER_HEADER";
/// `.blg` `SYSTEM_TRACE_HEADER`: the header of the log-file header event.
pub const SYSTEM_TRACE_HEADER: &str = "SYSTEM_TRACE_HEADER";
/// `.blg` `TRACE_LOGFILE_HEADER`.
pub const TRACE_LOGFILE_HEADER: &str = "TRACE_LOGFILE_HEADER";
/// `.blg` `EVENT_TRACE_HEADER`: the header of every other event.
pub const EVENT_TRACE_HEADER: &str = "EVENT_TRACE_HEADER";
/// `.blg`: the PDH part of an event (log GUID, fragment index and count).
pub const PDH_EVENT: &str = "PDH event";
/// `.blg`: the counter-list record.
pub const PDH_COUNTER_LIST: &str = "PDH counter list";
/// `.blg`: one entry of the counter list.
pub const PDH_COUNTER_ENTRY: &str = "PDH counter-list entry";
/// `.blg`: a sample record.
pub const PDH_SAMPLE: &str = "PDH sample";
/// `.blg`: a sub-record of a sample.
pub const PDH_SUB_RECORD: &str = "PDH sample sub-record";
/// `.blg` `PDH_RAW_COUNTER`: a stored raw value.
pub const PDH_RAW_COUNTER: &str = "PDH_RAW_COUNTER";
/// `.blg`: the instances of a wildcard counter in a sample.
pub const PDH_RAW_COUNTER_ARRAY: &str = "PDH raw counter array";
/// `.blg`: a chunk of the embedded counter name table.
pub const PDH_NAME_TABLE: &str = "PDH name-table chunk";
/// `.blg`: the trailer record.
pub const PDH_TRAILER: &str = "PDH trailer";
