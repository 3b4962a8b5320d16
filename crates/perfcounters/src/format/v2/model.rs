//! Owned models of every V2 result, with `encode` (producing 8-byte-aligned blocks like Windows) and
//! `decode` (through the zero-copy decoders). `decode(encode(x)) == x` for every model whose strings
//! have no NUL and whose [`Value::Bytes`] are not 4 or 8 bytes long (those decode as integers).

use super::data::*;
use super::guid::Guid;
use super::layout;
use super::lists::{CounterIdentifiers, InstanceList, COUNTER_IDENTIFIER_SIZE};
use super::reg::*;
use crate::counter_type::CounterType;
use crate::format::structure;
use crate::format::write::{to_u32, Writer};
use crate::format::DecodeError;
use crate::format::EncodeError;
use crate::snapshot::{SystemTime, Value};

/// The owned form of a `PERF_DATA_HEADER` block (a `PerfQueryCounterData` result).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct QueryData {
    /// `PerfTimeStamp`.
    pub perf_time_stamp: i64,
    /// `PerfTime100NSec`.
    pub perf_time_100ns: i64,
    /// `PerfFreq`.
    pub perf_freq: i64,
    /// `SystemTime`.
    pub system_time: SystemTime,
    /// The `PERF_COUNTER_HEADER` blocks in order.
    pub blocks: Vec<QueryBlock>,
}

/// The owned form of one `PERF_COUNTER_HEADER` block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueryBlock {
    /// `dwStatus` (a Win32 error code; 0 for success).
    pub status: u32,
    /// The payload; its variant gives `dwType`.
    pub data: BlockData,
}

/// The payload of a [`QueryBlock`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BlockData {
    /// `PERF_ERROR_RETURN`.
    Error,
    /// `PERF_SINGLE_COUNTER`: one value (the counter id is in the query's identifier).
    Single(Value),
    /// `PERF_MULTIPLE_COUNTERS`: (counter id, value) pairs.
    MultipleCounters(Vec<(u32, Value)>),
    /// `PERF_MULTIPLE_INSTANCES`: instances with exactly one value each.
    MultipleInstances(Vec<InstanceData>),
    /// `PERF_COUNTERSET`: counter ids, and instances with one value per id.
    CounterSet {
        /// The counter ids (`PERF_MULTI_COUNTERS`).
        counter_ids: Vec<u32>,
        /// The instances.
        instances: Vec<InstanceData>,
    },
}

impl BlockData {
    /// The `dwType` value of this payload.
    pub fn data_type(&self) -> u32 {
        match self {
            BlockData::Error => PERF_ERROR_RETURN,
            BlockData::Single(_) => PERF_SINGLE_COUNTER,
            BlockData::MultipleCounters(_) => PERF_MULTIPLE_COUNTERS,
            BlockData::MultipleInstances(_) => PERF_MULTIPLE_INSTANCES,
            BlockData::CounterSet { .. } => PERF_COUNTERSET,
        }
    }
}

/// One instance of a multi-instance block.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct InstanceData {
    /// `InstanceId`.
    pub id: u32,
    /// The instance name.
    pub name: String,
    /// The values, one per counter of the block.
    pub values: Vec<Value>,
}

fn write_value(w: &mut Writer, v: &Value) -> Result<(), EncodeError> {
    let start = w.pos();
    let data: Vec<u8> = match v {
        Value::U32(x) => x.to_le_bytes().to_vec(),
        Value::U64(x) => x.to_le_bytes().to_vec(),
        Value::Bytes(b) => b.to_vec(),
    };
    w.u32(to_u32(data.len(), structure::PERF_COUNTER_DATA)?);
    w.u32(0);
    w.bytes(&data);
    w.pad8();
    while w.pos() - start < MIN_COUNTER_DATA_BLOCK {
        w.u64(0);
    }
    let size = to_u32(w.pos() - start, structure::PERF_COUNTER_DATA)?;
    w.put_u32(start + layout::COUNTER_DATA_SIZE_AT, size);
    Ok(())
}

fn write_instance_header(w: &mut Writer, id: u32, name: &str) -> Result<(), EncodeError> {
    let start = w.pos();
    w.u32(0);
    w.u32(id);
    w.utf16z(name, structure::PERF_INSTANCE_HEADER)?;
    w.pad8();
    w.put_size(start, structure::PERF_INSTANCE_HEADER)
}

fn write_multi_counters(w: &mut Writer, ids: &[u32]) -> Result<(), EncodeError> {
    let start = w.pos();
    w.u32(0);
    w.u32(to_u32(ids.len(), structure::PERF_MULTI_COUNTERS)?);
    for &id in ids {
        w.u32(id);
    }
    w.pad8();
    w.put_size(start, structure::PERF_MULTI_COUNTERS)
}

fn write_multi_instances(
    w: &mut Writer,
    instances: &[InstanceData],
    per: usize,
) -> Result<(), EncodeError> {
    let start = w.pos();
    w.u32(0);
    w.u32(to_u32(instances.len(), structure::PERF_MULTI_INSTANCES)?);
    for inst in instances {
        if inst.values.len() != per {
            return Err(EncodeError::ValueCount {
                structure: structure::PERF_MULTI_INSTANCES,
                expected: per,
                found: inst.values.len(),
            });
        }
        write_instance_header(w, inst.id, &inst.name)?;
        for v in &inst.values {
            write_value(w, v)?;
        }
    }
    w.put_size(start, structure::PERF_MULTI_INSTANCES)
}

impl QueryData {
    /// Encodes the `PERF_DATA_HEADER` block.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut w = Writer::default();
        w.u32(0);
        w.u32(to_u32(self.blocks.len(), structure::PERF_DATA_HEADER)?);
        w.i64(self.perf_time_stamp);
        w.i64(self.perf_time_100ns);
        w.i64(self.perf_freq);
        w.system_time(&self.system_time);
        for block in &self.blocks {
            let start = w.pos();
            w.u32(block.status);
            w.u32(block.data.data_type());
            w.u32(0);
            w.u32(0);
            match &block.data {
                BlockData::Error => {}
                BlockData::Single(v) => write_value(&mut w, v)?,
                BlockData::MultipleCounters(pairs) => {
                    let ids: Vec<u32> = pairs.iter().map(|p| p.0).collect();
                    write_multi_counters(&mut w, &ids)?;
                    for (_, v) in pairs {
                        write_value(&mut w, v)?;
                    }
                }
                BlockData::MultipleInstances(instances) => {
                    write_multi_instances(&mut w, instances, 1)?
                }
                BlockData::CounterSet {
                    counter_ids,
                    instances,
                } => {
                    write_multi_counters(&mut w, counter_ids)?;
                    write_multi_instances(&mut w, instances, counter_ids.len())?;
                }
            }
            let size = to_u32(w.pos() - start, structure::PERF_COUNTER_HEADER)?;
            w.put_u32(start + layout::COUNTER_HEADER_SIZE_AT, size);
        }
        w.put_size(0, structure::PERF_DATA_HEADER)?;
        Ok(w.into_bytes())
    }

    /// Decodes a `PERF_DATA_HEADER` block completely.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        Self::from_header(&DataHeader::parse(buf)?)
    }

    /// Copies a decoded header and all its blocks.
    pub fn from_header(h: &DataHeader<'_>) -> Result<Self, DecodeError> {
        let mut blocks = Vec::new();
        for header in h.counters() {
            let header = header?;
            let data = match header.block() {
                CounterBlock::Error => BlockData::Error,
                CounterBlock::Single(d) => BlockData::Single(d.value()),
                CounterBlock::MultipleCounters { ids, values } => {
                    let mut pairs = Vec::new();
                    for (id, v) in ids.ids().zip(values.iter()) {
                        pairs.push((id, v?.value()));
                    }
                    BlockData::MultipleCounters(pairs)
                }
                CounterBlock::MultipleInstances(mi) => {
                    BlockData::MultipleInstances(instances_of(&mi)?)
                }
                CounterBlock::CounterSet { ids, instances } => BlockData::CounterSet {
                    counter_ids: ids.ids().collect(),
                    instances: instances_of(&instances)?,
                },
            };
            blocks.push(QueryBlock {
                status: header.status(),
                data,
            });
        }
        Ok(QueryData {
            perf_time_stamp: h.perf_time_stamp(),
            perf_time_100ns: h.perf_time_100ns(),
            perf_freq: h.perf_freq(),
            system_time: h.system_time(),
            blocks,
        })
    }
}

fn instances_of(mi: &MultiInstances<'_>) -> Result<Vec<InstanceData>, DecodeError> {
    let mut out = Vec::new();
    for inst in mi.iter() {
        let inst = inst?;
        let mut values = Vec::new();
        for v in inst.values().iter() {
            values.push(v?.value());
        }
        out.push(InstanceData {
            id: inst.id(),
            name: inst.name().to_string_lossy(),
            values,
        });
    }
    Ok(out)
}

/// One counter of a [`CounterSetRegistration`]: the `PERF_COUNTER_REG_INFO` fields plus the name and
/// help strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterRegistration {
    /// `CounterId`.
    pub id: u32,
    /// `Type`.
    pub counter_type: CounterType,
    /// `Attrib` (`PERF_ATTRIB_*`).
    pub attrib: u64,
    /// `DetailLevel`.
    pub detail_level: u32,
    /// `DefaultScale`.
    pub default_scale: i32,
    /// `BaseCounterId`, [`NO_COUNTER`] for none.
    pub base_counter_id: u32,
    /// `PerfTimeId`, [`NO_COUNTER`] for none.
    pub perf_time_id: u32,
    /// `PerfFreqId`, [`NO_COUNTER`] for none.
    pub perf_freq_id: u32,
    /// `MultiId`, [`NO_COUNTER`] for none.
    pub multi_id: u32,
    /// `AggregateFunc` (`PERF_AGGREGATE_*`).
    pub aggregate_func: u32,
    /// The name (`PERF_REG_COUNTER_NAME_STRINGS`), `None` if absent or NULL.
    pub name: Option<String>,
    /// The help text (`PERF_REG_COUNTER_HELP_STRINGS`), `None` if absent or NULL.
    pub help: Option<String>,
}

impl CounterRegistration {
    /// A counter with the given id, type and name, detail level 100 (novice), no companions.
    pub fn new(id: u32, counter_type: CounterType, name: &str) -> Self {
        CounterRegistration {
            id,
            counter_type,
            detail_level: 100,
            base_counter_id: NO_COUNTER,
            perf_time_id: NO_COUNTER,
            perf_freq_id: NO_COUNTER,
            multi_id: NO_COUNTER,
            name: Some(name.to_string()),
            ..Default::default()
        }
    }

    /// The `PERF_COUNTER_REG_INFO` structure (`Reserved` = 0).
    pub fn reg_info(&self) -> CounterRegInfo {
        CounterRegInfo {
            counter_id: self.id,
            counter_type: self.counter_type.0,
            attrib: self.attrib,
            detail_level: self.detail_level,
            default_scale: self.default_scale,
            base_counter_id: self.base_counter_id,
            perf_time_id: self.perf_time_id,
            perf_freq_id: self.perf_freq_id,
            multi_id: self.multi_id,
            aggregate_func: self.aggregate_func,
            reserved: 0,
        }
    }

    /// The id of the counter this one needs beside its own value, [`NO_COUNTER`] for none: the
    /// `MultiId` of a multi timer (else its `BaseCounterId`), the `PerfTimeId` of a precision timer
    /// that names no base, and the `BaseCounterId` of the other types that need a base.
    pub fn companion_id(&self) -> u32 {
        let ty = self.counter_type;
        if !ty.needs_base() {
            NO_COUNTER
        } else if ty.is_multi() {
            if self.multi_id != NO_COUNTER {
                self.multi_id
            } else {
                self.base_counter_id
            }
        } else if ty.is_precision() && self.base_counter_id == NO_COUNTER {
            self.perf_time_id
        } else {
            self.base_counter_id
        }
    }

    fn from_reg_info(r: &CounterRegInfo) -> Self {
        CounterRegistration {
            id: r.counter_id,
            counter_type: CounterType(r.counter_type),
            attrib: r.attrib,
            detail_level: r.detail_level,
            default_scale: r.default_scale,
            base_counter_id: r.base_counter_id,
            perf_time_id: r.perf_time_id,
            perf_freq_id: r.perf_freq_id,
            multi_id: r.multi_id,
            aggregate_func: r.aggregate_func,
            name: None,
            help: None,
        }
    }
}

/// Everything `PerfQueryCounterSetRegistrationInfo` says about one counterset.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterSetRegistration {
    /// `CounterSetGuid`.
    pub guid: Guid,
    /// The counterset name (`PERF_REG_COUNTERSET_NAME_STRING`).
    pub name: Option<String>,
    /// The counterset help (`PERF_REG_COUNTERSET_HELP_STRING`).
    pub help: Option<String>,
    /// `InstanceType` (`PERF_COUNTERSET_*`).
    pub instance_type: u32,
    /// `DetailLevel`.
    pub detail_level: u32,
    /// The counters, in registration order.
    pub counters: Vec<CounterRegistration>,
}

/// The raw results that make up a [`CounterSetRegistration`], as returned by
/// `PerfQueryCounterSetRegistrationInfo` for the request codes named on each field.
#[derive(Clone, Copy, Debug, Default)]
pub struct RegistrationBuffers<'a> {
    /// `PERF_REG_COUNTERSET_STRUCT`.
    pub structure: &'a [u8],
    /// `PERF_REG_COUNTERSET_NAME_STRING` (or `_ENGLISH_NAME`), if queried.
    pub name: Option<&'a [u8]>,
    /// `PERF_REG_COUNTERSET_HELP_STRING`, if queried.
    pub help: Option<&'a [u8]>,
    /// `PERF_REG_COUNTER_NAME_STRINGS` (or `_ENGLISH_NAMES`), if queried.
    pub counter_names: Option<&'a [u8]>,
    /// `PERF_REG_COUNTER_HELP_STRINGS`, if queried.
    pub counter_helps: Option<&'a [u8]>,
}

/// The encoded results of a [`CounterSetRegistration`].
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct EncodedRegistration {
    /// `PERF_REG_COUNTERSET_STRUCT` result.
    pub structure: Vec<u8>,
    /// Counterset name string, if the model has one.
    pub name: Option<Vec<u8>>,
    /// Counterset help string, if the model has one.
    pub help: Option<Vec<u8>>,
    /// `PERF_REG_COUNTER_NAME_STRINGS` result (one entry per counter, NULL for `None`).
    pub counter_names: Vec<u8>,
    /// `PERF_REG_COUNTER_HELP_STRINGS` result.
    pub counter_helps: Vec<u8>,
}

impl EncodedRegistration {
    /// The buffers, borrowed, for [`CounterSetRegistration::decode`]. An empty counter-name or
    /// counter-help buffer counts as not queried (a source that could not read them stores nothing).
    pub fn buffers(&self) -> RegistrationBuffers<'_> {
        fn queried(b: &[u8]) -> Option<&[u8]> {
            (!b.is_empty()).then_some(b)
        }
        RegistrationBuffers {
            structure: &self.structure,
            name: self.name.as_deref(),
            help: self.help.as_deref(),
            counter_names: queried(&self.counter_names),
            counter_helps: queried(&self.counter_helps),
        }
    }
}

impl CounterSetRegistration {
    /// Encodes the `PERF_COUNTERSET_REG_INFO` block (`CounterSetType` = 0).
    pub fn encode_struct(&self) -> Result<Vec<u8>, EncodeError> {
        let mut w = Writer::default();
        w.bytes(&self.guid.to_bytes());
        w.u32(0);
        w.u32(self.detail_level);
        w.u32(to_u32(
            self.counters.len(),
            structure::PERF_COUNTERSET_REG_INFO,
        )?);
        w.u32(self.instance_type);
        for c in &self.counters {
            w.bytes(&c.reg_info().to_bytes());
        }
        Ok(w.into_bytes())
    }

    /// Encodes every result.
    pub fn encode(&self) -> Result<EncodedRegistration, EncodeError> {
        let names: Vec<(u32, Option<&str>)> = self
            .counters
            .iter()
            .map(|c| (c.id, c.name.as_deref()))
            .collect();
        let helps: Vec<(u32, Option<&str>)> = self
            .counters
            .iter()
            .map(|c| (c.id, c.help.as_deref()))
            .collect();
        Ok(EncodedRegistration {
            structure: self.encode_struct()?,
            name: self.name.as_deref().map(encode_string).transpose()?,
            help: self.help.as_deref().map(encode_string).transpose()?,
            counter_names: encode_string_buffer(&names)?,
            counter_helps: encode_string_buffer(&helps)?,
        })
    }

    /// Decodes the registration results. Counter names and help texts are matched to counters by id
    /// (the first string entry for an id wins); counters without an entry get `None`.
    pub fn decode(b: RegistrationBuffers<'_>) -> Result<Self, DecodeError> {
        let info = CounterSetRegInfo::parse(b.structure)?;
        let mut counters: Vec<CounterRegistration> = info
            .counters()
            .map(|r| CounterRegistration::from_reg_info(&r))
            .collect();
        if let Some(buf) = b.counter_names {
            let sb = StringBuffer::parse(buf)?;
            for c in counters.iter_mut() {
                if let Some(s) = sb.get(c.id) {
                    c.name = s?.map(|s| s.to_string_lossy());
                }
            }
        }
        if let Some(buf) = b.counter_helps {
            let sb = StringBuffer::parse(buf)?;
            for c in counters.iter_mut() {
                if let Some(s) = sb.get(c.id) {
                    c.help = s?.map(|s| s.to_string_lossy());
                }
            }
        }
        let string = |o: Option<&[u8]>| -> Result<Option<String>, DecodeError> {
            o.map(|buf| parse_string(buf).map(|s| s.to_string_lossy()))
                .transpose()
        };
        Ok(CounterSetRegistration {
            guid: info.guid(),
            name: string(b.name)?,
            help: string(b.help)?,
            instance_type: info.instance_type(),
            detail_level: info.detail_level(),
            counters,
        })
    }

    /// Whether the counterset has multiple instances (`PERF_COUNTERSET_FLAG_MULTIPLE`).
    pub fn is_multi_instance(&self) -> bool {
        self.instance_type & 2 != 0
    }

    /// The position of the first counter with this id.
    pub fn counter_position(&self, id: u32) -> Option<usize> {
        self.counters.iter().position(|c| c.id == id)
    }
}

/// Encodes a NUL-terminated UTF-16LE string result (no padding).
pub fn encode_string(s: &str) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer::default();
    w.utf16z(s, structure::STRING)?;
    Ok(w.into_bytes())
}

/// Encodes a GUID result.
pub fn encode_guid(g: &Guid) -> Vec<u8> {
    g.to_bytes().to_vec()
}

/// Encodes a `PerfEnumerateCounterSet` result.
pub fn encode_guid_list(guids: &[Guid]) -> Vec<u8> {
    guids.iter().flat_map(|g| g.to_bytes()).collect()
}

/// Decodes a `PerfEnumerateCounterSet` result.
pub fn decode_guid_list(buf: &[u8]) -> Result<Vec<Guid>, DecodeError> {
    Ok(GuidList::parse(buf)?.iter().collect())
}

/// Encodes a `PERF_STRING_BUFFER_HEADER` block: the table in the given order, then the strings in the
/// same order, each NUL-terminated; `None` gets offset 0xFFFFFFFF. `dwSize` is padded to a multiple of 8.
pub fn encode_string_buffer(entries: &[(u32, Option<&str>)]) -> Result<Vec<u8>, EncodeError> {
    const S: &str = structure::PERF_STRING_BUFFER_HEADER;
    let mut w = Writer::default();
    w.u32(0);
    w.u32(to_u32(entries.len(), S)?);
    let table = w.pos();
    for &(id, _) in entries {
        w.u32(id);
        w.u32(0xFFFF_FFFF);
    }
    for (i, &(_, s)) in entries.iter().enumerate() {
        if let Some(s) = s {
            let at = to_u32(w.pos(), S)?;
            w.utf16z(s, S)?;
            w.put_u32(table + i * 8 + 4, at);
        }
    }
    w.pad8();
    w.put_size(0, S)?;
    Ok(w.into_bytes())
}

/// Decodes a `PERF_STRING_BUFFER_HEADER` block into (counter id, string) pairs in table order.
pub fn decode_string_buffer(buf: &[u8]) -> Result<Vec<(u32, Option<String>)>, DecodeError> {
    StringBuffer::parse(buf)?
        .entries()
        .map(|e| e.map(|(id, s)| (id, s.map(|s| s.to_string_lossy()))))
        .collect()
}

/// One entry of a `PerfEnumerateCounterSetInstances` result.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct InstanceListEntry {
    /// `InstanceId`.
    pub id: u32,
    /// The instance name.
    pub name: String,
}

/// Encodes a `PerfEnumerateCounterSetInstances` result.
pub fn encode_instance_list(instances: &[InstanceListEntry]) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer::default();
    for i in instances {
        write_instance_header(&mut w, i.id, &i.name)?;
    }
    Ok(w.into_bytes())
}

/// Decodes a `PerfEnumerateCounterSetInstances` result.
pub fn decode_instance_list(buf: &[u8]) -> Result<Vec<InstanceListEntry>, DecodeError> {
    InstanceList::new(buf)
        .iter()
        .map(|h| {
            h.map(|h| InstanceListEntry {
                id: h.instance_id(),
                name: h.name().to_string_lossy(),
            })
        })
        .collect()
}

/// The owned form of a `PERF_COUNTER_IDENTIFIER` block: one query specification.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterSpec {
    /// `CounterSetGuid`.
    pub guid: Guid,
    /// `Status`.
    pub status: u32,
    /// `CounterId`, or `PERF_WILDCARD_COUNTER`.
    pub counter_id: u32,
    /// `InstanceId`, or 0xFFFFFFFF for any.
    pub instance_id: u32,
    /// `Index`: position of this specification's block in the query result.
    pub index: u32,
    /// The instance-name filter: `None` for single-instance countersets, a pattern (`*` for all)
    /// otherwise.
    pub instance_name: Option<String>,
}

impl CounterSpec {
    /// Decodes a `PerfQueryCounterInfo` result.
    pub fn decode_list(buf: &[u8]) -> Result<Vec<CounterSpec>, DecodeError> {
        CounterIdentifiers::new(buf)
            .iter()
            .map(|r| {
                r.map(|c| CounterSpec {
                    guid: c.guid(),
                    status: c.status(),
                    counter_id: c.counter_id(),
                    instance_id: c.instance_id(),
                    index: c.index(),
                    instance_name: c.instance_name().map(|s| s.to_string_lossy()),
                })
            })
            .collect()
    }

    /// Encodes a sequence of `PERF_COUNTER_IDENTIFIER` blocks (a `PerfQueryCounterInfo` result or
    /// `PerfAddCounters` input), each padded to a multiple of 8.
    pub fn encode_list(specs: &[CounterSpec]) -> Result<Vec<u8>, EncodeError> {
        const S: &str = structure::PERF_COUNTER_IDENTIFIER;
        let mut w = Writer::default();
        for s in specs {
            let start = w.pos();
            w.bytes(&s.guid.to_bytes());
            w.u32(s.status);
            w.u32(0);
            w.u32(s.counter_id);
            w.u32(s.instance_id);
            w.u32(s.index);
            w.u32(0);
            debug_assert_eq!(w.pos() - start, COUNTER_IDENTIFIER_SIZE);
            if let Some(name) = &s.instance_name {
                w.utf16z(name, S)?;
                w.pad8();
            }
            let size = to_u32(w.pos() - start, S)?;
            w.put_u32(start + layout::COUNTER_IDENTIFIER_SIZE_AT, size);
        }
        Ok(w.into_bytes())
    }
}
