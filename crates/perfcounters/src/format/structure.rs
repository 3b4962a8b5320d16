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
