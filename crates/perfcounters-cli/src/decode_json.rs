//! The JSON documents of `decode` as types: the schema of `docs/decode-json.md` (V1 and V2 blocks,
//! capture directories, the lines of a binary log).
//!
//! Fields are declared in alphabetical order, the order in which every document has been written
//! since the first release: keep it so when adding one. Optional keys that are left out (rather than
//! written as `null`) are marked `skip_serializing_if`.

use std::borrow::Cow;

use perfcounters::format::blg::timezone::resolve_name;
use perfcounters::format::blg::{
    BlgCounterSpec, Column, LogFileHeader, SampleValue, TimeZoneInformation, TrailerSummary,
};
use perfcounters::format::capture::NameTableFile;
use perfcounters::format::v2::{
    BlockData, BlockStatus, CounterRegistration, CounterSetRegistration, InstanceData, QueryBlock,
    QueryData, NO_COUNTER,
};
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, ObjectData, Snapshot, SystemTime, Value,
};
use perfcounters::time_text::TimeStyle;
use serde::Serialize;

/// A raw value: the number of a 4- or 8-byte counter, `null` for any other size.
fn value(v: &Value) -> Option<u64> {
    match v {
        Value::U32(x) => Some(u64::from(*x)),
        Value::U64(x) => Some(*x),
        Value::Bytes(_) => None,
    }
}

fn values(list: &[Value]) -> Vec<Option<u64>> {
    list.iter().map(value).collect()
}

/// A V2 counter id, `null` for "none" (`0xFFFFFFFF`).
fn counter_id(id: u32) -> Option<u32> {
    (id != NO_COUNTER).then_some(id)
}

/// A `SYSTEMTIME` of performance data (UTC), `2020-03-18T18:54:03.988Z`.
fn utc(t: &SystemTime) -> String {
    TimeStyle::IsoUtc.format(t)
}

/// The V1 document.
#[derive(Serialize)]
pub struct V1<'a> {
    format: &'static str,
    objects: Vec<ObjectJson<'a>>,
    perf_freq: i64,
    perf_time: i64,
    perf_time_100ns: i64,
    system_name: &'a str,
    system_time: String,
}

impl<'a> V1<'a> {
    /// The document of a V1 snapshot.
    pub fn new(s: &'a Snapshot) -> Self {
        V1 {
            format: "v1",
            objects: s.objects.iter().map(ObjectJson::new).collect(),
            perf_freq: s.perf_freq,
            perf_time: s.perf_time,
            perf_time_100ns: s.perf_time_100ns,
            system_name: &s.system_name,
            system_time: utc(&s.system_time),
        }
    }
}

/// One of the `objects` of the V1 document (also of the V2 samples of a capture).
#[derive(Serialize)]
struct ObjectJson<'a> {
    code_page: u32,
    counters: Vec<CounterJson<'a>>,
    default_counter: i32,
    detail_level: u32,
    help_index: u32,
    index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    instances: Option<Vec<InstanceJson<'a>>>,
    name: Option<&'a str>,
    /// -1 single instance, n ≥ 0 instances, -2/-3 metadata only (multiple or no instances).
    num_instances: i64,
    perf_freq: i64,
    perf_time: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<Vec<Option<u64>>>,
}

impl<'a> ObjectJson<'a> {
    fn new(o: &'a Object) -> Self {
        let (num_instances, instances, values) = match &o.data {
            ObjectData::Single(v) => (-1, None, Some(self::values(v))),
            ObjectData::Instances(list) => (
                i64::try_from(list.len()).unwrap_or(i64::MAX),
                Some(list.iter().map(InstanceJson::new).collect()),
                None,
            ),
            ObjectData::MetadataOnly { multiple_instances } => {
                (if *multiple_instances { -2 } else { -3 }, None, None)
            }
        };
        ObjectJson {
            code_page: o.code_page,
            counters: o.counters.iter().map(CounterJson::new).collect(),
            default_counter: o.default_counter,
            detail_level: o.detail_level,
            help_index: o.help_index,
            index: o.index,
            instances,
            name: o.name.as_deref(),
            num_instances,
            perf_freq: o.perf_freq,
            perf_time: o.perf_time,
            values,
        }
    }
}

/// A counter definition of a V1 object.
#[derive(Serialize)]
struct CounterJson<'a> {
    base: Option<usize>,
    detail_level: u32,
    help_index: u32,
    index: u32,
    name: Option<&'a str>,
    offset: u32,
    scale: i32,
    size: u32,
    #[serde(rename = "type")]
    counter_type: u32,
    type_name: Option<&'static str>,
}

impl<'a> CounterJson<'a> {
    fn new(c: &'a CounterDefinition) -> Self {
        CounterJson {
            base: c.base,
            detail_level: c.detail_level,
            help_index: c.help_index,
            index: c.index,
            name: c.name.as_deref(),
            offset: c.offset,
            scale: c.scale,
            size: c.size,
            counter_type: c.counter_type.0,
            type_name: c.counter_type.name(),
        }
    }
}

/// An instance of a V1 object.
#[derive(Serialize)]
struct InstanceJson<'a> {
    name: &'a str,
    parent_instance: u32,
    parent_object: u32,
    raw_name: &'a str,
    unique_id: i32,
    values: Vec<Option<u64>>,
}

impl<'a> InstanceJson<'a> {
    fn new(i: &'a Instance) -> Self {
        InstanceJson {
            name: i.name(),
            parent_instance: i.parent_instance,
            parent_object: i.parent_object,
            raw_name: i.raw_name(),
            unique_id: i.unique_id,
            values: values(i.values()),
        }
    }
}

/// The name of a V2 block's `dwDataType`.
pub fn data_type_name(t: u32) -> &'static str {
    match t {
        0 => "PERF_ERROR_RETURN",
        1 => "PERF_SINGLE_COUNTER",
        2 => "PERF_MULTIPLE_COUNTERS",
        4 => "PERF_MULTIPLE_INSTANCES",
        6 => "PERF_COUNTERSET",
        _ => "unknown",
    }
}

/// The V2 document: the `PERF_DATA_HEADER` and every `PERF_COUNTER_HEADER` block with its ids,
/// instances and raw values (a data block alone carries no counter types or names). In a capture
/// it also carries the countersets converted with the capture's registrations and the blocks that
/// returned an error.
#[derive(Serialize)]
pub struct V2<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    block_errors: Option<Vec<BlockErrorJson>>,
    blocks: Vec<BlockJson<'a>>,
    format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    objects: Option<Vec<ObjectJson<'a>>>,
    perf_freq: i64,
    perf_time: i64,
    perf_time_100ns: i64,
    system_time: String,
}

impl<'a> V2<'a> {
    /// The document of a V2 block.
    pub fn new(q: &'a QueryData) -> Self {
        V2 {
            block_errors: None,
            blocks: q.blocks.iter().enumerate().map(BlockJson::new).collect(),
            format: "v2",
            objects: None,
            perf_freq: q.perf_freq,
            perf_time: q.perf_time_stamp,
            perf_time_100ns: q.perf_time_100ns,
            system_time: utc(&q.system_time),
        }
    }

    /// With the countersets `objects` converted from the block and the blocks that returned
    /// `errors` (a sample of a capture).
    pub fn with_conversion(mut self, objects: &'a [Object], errors: &[BlockStatus]) -> Self {
        self.objects = Some(objects.iter().map(ObjectJson::new).collect());
        self.block_errors = Some(errors.iter().map(BlockErrorJson::new).collect());
        self
    }
}

/// One `PERF_COUNTER_HEADER` block of the V2 document.
#[derive(Serialize)]
struct BlockJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    counter_ids: Option<Vec<u32>>,
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    instances: Option<Vec<V2InstanceJson<'a>>>,
    status: u32,
    #[serde(rename = "type")]
    data_type: u32,
    type_name: &'static str,
    /// The value of a single counter (present, and `null` for a value of another size).
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<Vec<Option<u64>>>,
}

impl<'a> BlockJson<'a> {
    fn new((index, b): (usize, &'a QueryBlock)) -> Self {
        let data_type = b.data.data_type();
        let mut o = BlockJson {
            counter_ids: None,
            index,
            instances: None,
            status: b.status,
            data_type,
            type_name: data_type_name(data_type),
            value: None,
            values: None,
        };
        let instances =
            |list: &'a [InstanceData]| Some(list.iter().map(V2InstanceJson::new).collect());
        match &b.data {
            BlockData::Error => {}
            BlockData::Single(v) => o.value = Some(value(v)),
            BlockData::MultipleCounters(list) => {
                o.counter_ids = Some(list.iter().map(|(id, _)| *id).collect());
                o.values = Some(list.iter().map(|(_, v)| value(v)).collect());
            }
            BlockData::MultipleInstances(list) => o.instances = instances(list),
            BlockData::CounterSet {
                counter_ids,
                instances: list,
            } => {
                o.counter_ids = Some(counter_ids.clone());
                o.instances = instances(list);
            }
        }
        o
    }
}

/// An instance of a V2 block.
#[derive(Serialize)]
struct V2InstanceJson<'a> {
    id: u32,
    name: &'a str,
    values: Vec<Option<u64>>,
}

impl<'a> V2InstanceJson<'a> {
    fn new(i: &'a InstanceData) -> Self {
        V2InstanceJson {
            id: i.id,
            name: &i.name,
            values: values(&i.values),
        }
    }
}

/// A block of a capture's V2 sample that returned an error status instead of data.
#[derive(Serialize)]
struct BlockErrorJson {
    counter_id: Option<u32>,
    guid: String,
    index: u32,
    status: u32,
}

impl BlockErrorJson {
    fn new(e: &BlockStatus) -> Self {
        BlockErrorJson {
            counter_id: counter_id(e.counter_id),
            guid: e.guid.to_string(),
            index: e.index,
            status: e.status,
        }
    }
}

/// The document of a capture directory.
#[derive(Serialize)]
pub struct Capture<'a> {
    /// The V2 registrations, as decoded.
    pub countersets: Vec<CounterSetJson<'a>>,
    /// `capture.txt`'s creation time, as written there.
    pub created: &'a str,
    /// `"capture"`.
    pub format: &'static str,
    /// `capture.txt`'s machine.
    pub machine: &'a str,
    /// The name tables, in `capture.txt` order.
    pub names: Vec<NameFileJson<'a>>,
    /// `capture.txt`'s operating system.
    pub os: &'a str,
    /// Every sample.
    pub samples: Vec<CaptureSample<'a>>,
    /// `capture.txt`'s tool.
    pub tool: &'a str,
    /// The number on the first line of `capture.txt`.
    pub version: u32,
}

/// A name table of a capture.
#[derive(Serialize)]
pub struct NameFileJson<'a> {
    bytes: usize,
    file: String,
    kind: &'static str,
    language: &'a str,
}

impl<'a> NameFileJson<'a> {
    /// The entry of the name table file `n`.
    pub fn new(n: &'a NameTableFile) -> Self {
        NameFileJson {
            bytes: n.bytes.len(),
            file: format!("names/{}", n.file_name()),
            kind: n.kind.as_str(),
            language: &n.language,
        }
    }
}

/// A sample of a capture: its V1 and V2 documents, `null` where the sample has no such block.
#[derive(Serialize)]
pub struct CaptureSample<'a> {
    /// The sample's number (`samples/0001.*` is 1).
    pub number: usize,
    /// The V1 document.
    pub v1: Option<V1<'a>>,
    /// The V2 document with the converted countersets.
    pub v2: Option<V2<'a>>,
}

/// A V2 counterset registration of a capture.
#[derive(Serialize)]
pub struct CounterSetJson<'a> {
    counters: Vec<RegisteredCounterJson<'a>>,
    detail_level: u32,
    guid: String,
    help: Option<&'a str>,
    instance_type: u32,
    name: Option<&'a str>,
}

impl<'a> CounterSetJson<'a> {
    /// The entry of the registration `r`.
    pub fn new(r: &'a CounterSetRegistration) -> Self {
        CounterSetJson {
            counters: r.counters.iter().map(RegisteredCounterJson::new).collect(),
            detail_level: r.detail_level,
            guid: r.guid.to_string(),
            help: r.help.as_deref(),
            instance_type: r.instance_type,
            name: r.name.as_deref(),
        }
    }
}

/// A counter of a V2 registration.
#[derive(Serialize)]
struct RegisteredCounterJson<'a> {
    aggregate_func: u32,
    attrib: u64,
    base_counter_id: Option<u32>,
    detail_level: u32,
    help: Option<&'a str>,
    id: u32,
    multi_id: Option<u32>,
    name: Option<&'a str>,
    perf_freq_id: Option<u32>,
    perf_time_id: Option<u32>,
    scale: i32,
    #[serde(rename = "type")]
    counter_type: u32,
    type_name: Option<&'static str>,
}

impl<'a> RegisteredCounterJson<'a> {
    fn new(c: &'a CounterRegistration) -> Self {
        RegisteredCounterJson {
            aggregate_func: c.aggregate_func,
            attrib: c.attrib,
            base_counter_id: counter_id(c.base_counter_id),
            detail_level: c.detail_level,
            help: c.help.as_deref(),
            id: c.id,
            multi_id: counter_id(c.multi_id),
            name: c.name.as_deref(),
            perf_freq_id: counter_id(c.perf_freq_id),
            perf_time_id: counter_id(c.perf_time_id),
            scale: c.default_scale,
            counter_type: c.counter_type.0,
            type_name: c.counter_type.name(),
        }
    }
}

/// A FILETIME of a binary log's header (UTC), `2013-02-20T02:50:17.844Z`.
fn blg_utc(ft: i64) -> String {
    TimeStyle::IsoUtc.format(&SystemTime::from_filetime(ft))
}

/// A FILETIME of a binary log's samples (the local time the log stores), `2013-02-19T18:50:17.844`.
pub fn blg_local(ft: i64) -> String {
    TimeStyle::Iso.format(&SystemTime::from_filetime(ft))
}

/// The first line of a binary log's dump: the log.
#[derive(Serialize)]
pub struct BlgHead<'a> {
    /// The file offset of the counter list's first event.
    pub counter_list_offset: usize,
    /// The counter-list entries, in log order.
    pub counters: Vec<BlgSpec<'a>>,
    /// `"blg"`.
    pub format: &'static str,
    /// The log-file header.
    pub header: BlgHeader<'a>,
    /// The names in the embedded name table.
    pub names: usize,
}

/// The log-file header of a binary log.
#[derive(Serialize)]
pub struct BlgHeader<'a> {
    boot_time: Option<String>,
    buffer_size: u32,
    buffers_written: u32,
    end_time: Option<String>,
    log_file_mode: u32,
    log_file_name: &'a str,
    logger_name: &'a str,
    number_of_processors: u32,
    os_build: u32,
    perf_freq: i64,
    pointer_size: u32,
    start_time: String,
    time_zone: BlgTimeZone<'a>,
}

impl<'a> BlgHeader<'a> {
    /// The document of the header `h`.
    pub fn new(h: &'a LogFileHeader) -> Self {
        let time = |ft: i64| (ft != 0).then(|| blg_utc(ft));
        BlgHeader {
            boot_time: time(h.boot_time),
            buffer_size: h.buffer_size,
            buffers_written: h.buffers_written,
            end_time: time(h.end_time),
            log_file_mode: h.log_file_mode,
            log_file_name: &h.log_file_name,
            logger_name: &h.logger_name,
            number_of_processors: h.number_of_processors,
            os_build: h.os_build,
            perf_freq: h.perf_freq,
            pointer_size: h.pointer_size,
            start_time: blg_utc(h.start_time),
            time_zone: BlgTimeZone::new(&h.time_zone),
        }
    }
}

/// The time zone of a binary log's header.
#[derive(Serialize)]
struct BlgTimeZone<'a> {
    bias: i32,
    daylight_bias: i32,
    daylight_name: &'a str,
    daylight_name_resolved: Cow<'a, str>,
    standard_bias: i32,
    standard_name: &'a str,
    standard_name_resolved: Cow<'a, str>,
}

impl<'a> BlgTimeZone<'a> {
    fn new(tz: &'a TimeZoneInformation) -> Self {
        BlgTimeZone {
            bias: tz.bias,
            daylight_bias: tz.daylight_bias,
            daylight_name: &tz.daylight_name,
            daylight_name_resolved: resolve_name(&tz.daylight_name),
            standard_bias: tz.standard_bias,
            standard_name: &tz.standard_name,
            standard_name_resolved: resolve_name(&tz.standard_name),
        }
    }
}

/// A counter-list entry of a binary log.
#[derive(Serialize)]
pub struct BlgSpec<'a> {
    counter: &'a str,
    default_scale: i32,
    flags: u32,
    instance: Option<&'a str>,
    instance_index: i32,
    machine: &'a str,
    object: &'a str,
    parent: Option<&'a str>,
    path: String,
    time_base: i64,
    #[serde(rename = "type")]
    counter_type: u32,
    type_name: Option<&'static str>,
    user_data: u32,
}

impl<'a> BlgSpec<'a> {
    /// The document of the entry `s`.
    pub fn new(s: &'a BlgCounterSpec) -> Self {
        BlgSpec {
            counter: &s.counter,
            default_scale: s.default_scale,
            flags: s.flags,
            instance: s.instance.as_deref(),
            instance_index: s.instance_index,
            machine: &s.machine,
            object: &s.object,
            parent: s.parent.as_deref(),
            path: s.path().to_string(),
            time_base: s.time_base,
            counter_type: s.counter_type.0,
            type_name: s.counter_type.name(),
            user_data: s.user_data,
        }
    }
}

/// A line of a binary log's dump for one sample.
#[derive(Serialize)]
pub struct BlgSample {
    /// The file offset of the record's first event.
    pub offset: usize,
    /// The sample record's event time stamp.
    pub record_time: String,
    /// The sample's number, from 0.
    pub sample: u64,
    /// The sample's time (its first stored time stamp).
    pub time: String,
    /// One per column present in the sample.
    pub values: Vec<BlgValue>,
}

/// A raw value of a sample of a binary log.
#[derive(Serialize)]
pub struct BlgValue {
    column: usize,
    first: i64,
    multi_count: u32,
    second: i64,
    status: u32,
}

impl BlgValue {
    /// The document of the value `v`.
    pub fn new(v: &SampleValue) -> Self {
        BlgValue {
            column: v.column,
            first: v.raw.first,
            multi_count: v.raw.multi_count,
            second: v.raw.second,
            status: v.status.0,
        }
    }
}

/// The last line of a binary log's dump: the columns the values refer to, and how the log ended.
#[derive(Serialize)]
pub struct BlgTail<'a> {
    /// In order of discovery; a value's `column` indexes this list.
    pub columns: Vec<BlgColumn>,
    /// The columns in relog's order.
    pub display_order: &'a [usize],
    /// The damage that stopped the reading, if any.
    pub error: Option<String>,
    /// The samples read.
    pub samples: u64,
    /// The first and last sample times, `null` without samples.
    pub time_range: Option<[String; 2]>,
    /// The log's trailer, if it has one.
    pub trailer: Option<BlgTrailer>,
    /// What the reader stepped over.
    pub warnings: Vec<String>,
}

/// A column of a binary log.
#[derive(Serialize)]
pub struct BlgColumn {
    column: usize,
    default_scale: i32,
    entry: usize,
    first_sample: u64,
    path: String,
    time_base: i64,
    #[serde(rename = "type")]
    counter_type: u32,
}

impl BlgColumn {
    /// The document of the column number `column`.
    pub fn new(column: usize, c: &Column) -> Self {
        BlgColumn {
            column,
            default_scale: c.info.default_scale,
            entry: c.entry,
            first_sample: c.first_sample,
            path: c.path.to_string(),
            time_base: c.info.time_base,
            counter_type: c.info.counter_type.0,
        }
    }
}

/// The trailer of a binary log.
#[derive(Serialize)]
pub struct BlgTrailer {
    entries: u32,
    first_time: String,
    last_time: String,
    offset: usize,
    samples: u32,
}

impl BlgTrailer {
    /// The document of the trailer `t`.
    pub fn new(t: &TrailerSummary) -> Self {
        BlgTrailer {
            entries: t.entries,
            first_time: blg_local(t.first_time),
            last_time: blg_local(t.last_time),
            offset: t.offset,
            samples: t.samples,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfcounters::format::v2::QueryBlock;

    /// Writes `doc` and checks that its keys come in alphabetical order, as a `serde_json::Value`
    /// (whose maps are sorted) would write them.
    fn written(doc: &impl Serialize) -> String {
        let text = serde_json::to_string(doc).unwrap();
        let value = serde_json::to_value(doc).unwrap();
        assert_eq!(text, value.to_string());
        text
    }

    #[test]
    fn v2_blocks_of_every_kind() {
        let instance = |id, name: &str, values| InstanceData {
            id,
            name: name.into(),
            values,
        };
        let block = |status, data| QueryBlock { status, data };
        let q = QueryData {
            perf_time_stamp: 123_456_789,
            perf_time_100ns: 134_078_832_000_000_000,
            perf_freq: 10_000_000,
            system_time: SystemTime::from_filetime(134_078_832_000_000_000),
            blocks: vec![
                block(0, BlockData::Single(Value::U32(42))),
                block(0, BlockData::Single(Value::Bytes(vec![1, 2].into()))),
                block(
                    0,
                    BlockData::MultipleCounters(vec![(0, Value::U32(1)), (1, Value::U64(2))]),
                ),
                block(
                    0,
                    BlockData::MultipleInstances(vec![instance(0, "0,0", vec![Value::U32(7)])]),
                ),
                block(
                    0,
                    BlockData::CounterSet {
                        counter_ids: vec![0, 1],
                        instances: vec![instance(0, "_Total", vec![Value::U32(7), Value::U32(8)])],
                    },
                ),
                block(1168, BlockData::Error),
            ],
        };
        assert_eq!(
            written(&V2::new(&q)),
            r#"{"blocks":[{"index":0,"status":0,"type":1,"type_name":"PERF_SINGLE_COUNTER","value":42},{"index":1,"status":0,"type":1,"type_name":"PERF_SINGLE_COUNTER","value":null},{"counter_ids":[0,1],"index":2,"status":0,"type":2,"type_name":"PERF_MULTIPLE_COUNTERS","values":[1,2]},{"index":3,"instances":[{"id":0,"name":"0,0","values":[7]}],"status":0,"type":4,"type_name":"PERF_MULTIPLE_INSTANCES"},{"counter_ids":[0,1],"index":4,"instances":[{"id":0,"name":"_Total","values":[7,8]}],"status":0,"type":6,"type_name":"PERF_COUNTERSET"},{"index":5,"status":1168,"type":0,"type_name":"PERF_ERROR_RETURN"}],"format":"v2","perf_freq":10000000,"perf_time":123456789,"perf_time_100ns":134078832000000000,"system_time":"2025-11-17T20:00:00.000Z"}"#
        );
    }
}
