//! PerfLib V2 consumer blocks (`PERF_DATA_HEADER` and friends, registration info, instance lists).
//!
//! Zero-copy decoders borrow the result buffer of a PerfLib consumer call and check every size and
//! offset before reading; malformed data is a [`DecodeError`] naming the structure and the absolute
//! byte offset. Owned models ([`QueryData`], [`CounterSetRegistration`], [`CounterSpec`],
//! [`InstanceListEntry`]) encode back to the same bytes Windows produces (8-byte-aligned blocks), and
//! [`to_snapshot`] turns a query result into the crate's [`Snapshot`](crate::snapshot::Snapshot).
//!
//! | call / request code | decoder | model / encoder |
//! |---|---|---|
//! | `PerfQueryCounterData` | [`DataHeader`] | [`QueryData`] |
//! | `PerfQueryCounterInfo` | [`CounterIdentifiers`] | [`CounterSpec`] |
//! | `PerfEnumerateCounterSet` | [`GuidList`] | [`encode_guid_list`] |
//! | `PerfEnumerateCounterSetInstances` | [`InstanceList`] | [`InstanceListEntry`], [`encode_instance_list`] |
//! | `PERF_REG_COUNTERSET_STRUCT` | [`CounterSetRegInfo`] | [`CounterSetRegistration::encode_struct`] |
//! | `PERF_REG_COUNTER_STRUCT` | [`CounterRegInfo::parse`] | [`CounterRegInfo::to_bytes`] |
//! | `PERF_REG_COUNTER_NAME_STRINGS`, `_HELP_STRINGS`, `_ENGLISH_NAMES` | [`StringBuffer`] | [`encode_string_buffer`] |
//! | `PERF_REG_COUNTERSET_NAME_STRING`, `_HELP_STRING`, `PERF_REG_PROVIDER_NAME` | [`parse_string`] | [`encode_string`] |
//! | `PERF_REG_PROVIDER_GUID` | [`parse_guid`] | [`encode_guid`] |
//!
//! Layouts, validation rules and the choices made where the documents are silent are in
//! `docs/v2-format.md`.

mod convert;
mod data;
mod guid;
mod layout;
mod lists;
mod model;
mod reg;

pub use crate::format::{DecodeError, EncodeError, ErrorKind, Utf16Str};
pub use convert::{to_snapshot, BlockStatus, ConvertError, ConvertedSnapshot};
pub use data::{
    CounterBlock, CounterData, CounterDataIter, CounterDataList, CounterHeader, CounterHeaders,
    DataHeader, InstanceBlock, InstanceBlocks, InstanceHeader, MultiCounters, MultiInstances,
    COUNTER_DATA_SIZE, COUNTER_HEADER_SIZE, DATA_HEADER_SIZE, INSTANCE_HEADER_SIZE,
    MIN_COUNTER_DATA_BLOCK, MULTI_COUNTERS_SIZE, MULTI_INSTANCES_SIZE, PERF_COUNTERSET,
    PERF_ERROR_RETURN, PERF_MULTIPLE_COUNTERS, PERF_MULTIPLE_INSTANCES, PERF_SINGLE_COUNTER,
};
pub use guid::{Guid, ParseGuidError};
pub use lists::{
    CounterIdentifier, CounterIdentifierIter, CounterIdentifiers, InstanceList, InstanceListIter,
    COUNTER_IDENTIFIER_SIZE,
};
pub use model::{
    decode_guid_list, decode_instance_list, decode_string_buffer, encode_guid, encode_guid_list,
    encode_instance_list, encode_string, encode_string_buffer, BlockData, CounterRegistration,
    CounterSetRegistration, CounterSpec, EncodedRegistration, InstanceData, InstanceListEntry,
    QueryBlock, QueryData, RegistrationBuffers,
};

pub use reg::{
    parse_guid, parse_string, CounterRegInfo, CounterSetRegInfo, GuidList, StringBuffer,
    COUNTERSET_REG_INFO_SIZE, COUNTER_REG_INFO_SIZE, NO_COUNTER, PERF_AGGREGATE_AVG,
    PERF_AGGREGATE_MAX, PERF_AGGREGATE_MIN, PERF_AGGREGATE_TOTAL, PERF_AGGREGATE_UNDEFINED,
    PERF_ATTRIB_BY_REFERENCE, PERF_ATTRIB_DISPLAY_AS_HEX, PERF_ATTRIB_DISPLAY_AS_REAL,
    PERF_ATTRIB_NO_DISPLAYABLE, PERF_ATTRIB_NO_GROUP_SEPARATOR, PERF_COUNTERSET_INSTANCE_AGGREGATE,
    PERF_COUNTERSET_MULTI_AGGREGATE, PERF_COUNTERSET_MULTI_INSTANCES,
    PERF_COUNTERSET_SINGLE_AGGREGATE, PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY,
    PERF_COUNTERSET_SINGLE_INSTANCE, PERF_REG_COUNTERSET_ENGLISH_NAME,
    PERF_REG_COUNTERSET_HELP_STRING, PERF_REG_COUNTERSET_NAME_STRING, PERF_REG_COUNTERSET_STRUCT,
    PERF_REG_COUNTER_ENGLISH_NAMES, PERF_REG_COUNTER_HELP_STRINGS, PERF_REG_COUNTER_NAME_STRINGS,
    PERF_REG_COUNTER_STRUCT, PERF_REG_PROVIDER_GUID, PERF_REG_PROVIDER_NAME,
    STRING_BUFFER_HEADER_SIZE, STRING_COUNTER_HEADER_SIZE,
};

/// `PERF_WILDCARD_COUNTER`: all counters of the counterset.
pub const PERF_WILDCARD_COUNTER: u32 = 0xFFFF_FFFF;
/// `PERF_WILDCARD_INSTANCE`: all instance names.
pub const PERF_WILDCARD_INSTANCE: &str = "*";
/// `PERF_AGGREGATE_INSTANCE`: the name of the aggregate instance.
pub const PERF_AGGREGATE_INSTANCE: &str = "_Total";
/// `PERF_MAX_INSTANCE_NAME`: the longest instance name, in characters.
pub const PERF_MAX_INSTANCE_NAME: u32 = 1024;
