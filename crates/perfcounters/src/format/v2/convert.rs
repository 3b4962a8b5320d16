//! Conversion of a V2 query result into the owned [`Snapshot`] model.
//!
//! Inputs: the decoded `PERF_DATA_HEADER` block, the `PERF_COUNTER_IDENTIFIER` list of the query
//! (`PerfQueryCounterInfo`; its `Index` field says which block answers which specification) and the
//! registration of each counterset involved. The rules are listed in `docs/v2-format.md`.

use std::collections::HashMap;
use std::fmt;

use super::data::{CounterBlock, DataHeader, MultiCounters, MultiInstances};
use super::guid::Guid;
use super::model::{CounterSetRegistration, CounterSpec};
use super::reg::NO_COUNTER;
use crate::counter_type::TimeBase;
use crate::format::DecodeError;
use crate::snapshot::{
    name_instances, CounterDefinition, Instance, Object, ObjectData, SampleClock, Snapshot, Value,
    ValueBytes,
};

/// A block that carried no data (`PERF_ERROR_RETURN`), reported beside the snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockStatus {
    /// Position of the block in the `PERF_DATA_HEADER` (the specification's `Index`).
    pub index: u32,
    /// The counterset of the specification.
    pub guid: Guid,
    /// The specification's `CounterId` (or `PERF_WILDCARD_COUNTER`).
    pub counter_id: u32,
    /// `PERF_COUNTER_HEADER.dwStatus`: the Win32 error code.
    pub status: u32,
}

/// The result of [`to_snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertedSnapshot {
    /// The snapshot: one object per counterset that returned data.
    pub snapshot: Snapshot,
    /// The blocks that returned an error instead of data, in block order.
    pub errors: Vec<BlockStatus>,
}

/// Why a query result could not be converted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConvertError {
    /// The data is malformed.
    Decode(DecodeError),
    /// No `PERF_COUNTER_IDENTIFIER` has this block's index.
    NoSpecification {
        /// The block index.
        index: u32,
    },
    /// No registration was given for a counterset that has data.
    UnknownCounterSet {
        /// The counterset.
        guid: Guid,
    },
    /// The data names a counter id that the counterset's registration lacks.
    UnknownCounter {
        /// The counterset.
        guid: Guid,
        /// The counter id.
        counter_id: u32,
    },
    /// A single-counter block (`PERF_SINGLE_COUNTER`, `PERF_MULTIPLE_INSTANCES`) whose specification
    /// has the wildcard counter id, so the value cannot be attributed.
    WildcardSingleCounter {
        /// The block index.
        index: u32,
    },
    /// One counterset has both single-instance and multi-instance blocks.
    MixedInstanceShapes {
        /// The counterset.
        guid: Guid,
    },
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Only a wrapper: the decoding error itself, displayed once.
            ConvertError::Decode(e) => e.fmt(f),
            ConvertError::NoSpecification { index } => {
                write!(f, "no counter identifier has index {index}")
            }
            ConvertError::UnknownCounterSet { guid } => {
                write!(f, "no registration for counterset {guid}")
            }
            ConvertError::UnknownCounter { guid, counter_id } => {
                write!(
                    f,
                    "counter {counter_id} is not registered in counterset {guid}"
                )
            }
            ConvertError::WildcardSingleCounter { index } => write!(
                f,
                "block {index} holds a single counter but its identifier names all counters"
            ),
            ConvertError::MixedInstanceShapes { guid } => write!(
                f,
                "counterset {guid} has both single-instance and multi-instance blocks"
            ),
        }
    }
}

impl std::error::Error for ConvertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConvertError::Decode(e) => e.source(),
            _ => None,
        }
    }
}

impl From<DecodeError> for ConvertError {
    fn from(e: DecodeError) -> Self {
        ConvertError::Decode(e)
    }
}

struct AccInstance {
    raw_name: String,
    id: u32,
    values: Vec<Option<Value>>,
}

struct Acc<'r> {
    reg: &'r CounterSetRegistration,
    named: Vec<bool>,
    sizes: Vec<Option<u32>>,
    single: Option<Vec<Option<Value>>>,
    instances: Option<Vec<AccInstance>>,
    lookup: HashMap<(String, u32), Vec<usize>>,
}

impl<'r> Acc<'r> {
    fn new(reg: &'r CounterSetRegistration) -> Self {
        let n = reg.counters.len();
        Acc {
            reg,
            named: vec![false; n],
            sizes: vec![None; n],
            single: None,
            instances: None,
            lookup: HashMap::new(),
        }
    }

    fn position(&mut self, counter_id: u32) -> Result<usize, ConvertError> {
        let pos = self
            .reg
            .counter_position(counter_id)
            .ok_or(ConvertError::UnknownCounter {
                guid: self.reg.guid,
                counter_id,
            })?;
        if let Some(slot) = self.named.get_mut(pos) {
            *slot = true;
        }
        Ok(pos)
    }

    fn single_slots(&mut self) -> Result<&mut Vec<Option<Value>>, ConvertError> {
        if self.instances.is_some() {
            return Err(ConvertError::MixedInstanceShapes {
                guid: self.reg.guid,
            });
        }
        let n = self.reg.counters.len();
        Ok(self.single.get_or_insert_with(|| vec![None; n]))
    }

    fn set(
        slots: &mut [Option<Value>],
        sizes: &mut [Option<u32>],
        pos: usize,
        v: Value,
        size: u32,
    ) {
        if let Some(slot) = slots.get_mut(pos) {
            if slot.is_none() {
                *slot = Some(v);
            }
        }
        if let Some(s) = sizes.get_mut(pos) {
            s.get_or_insert(size);
        }
    }

    fn positions(&mut self, ids: &MultiCounters<'_>) -> Result<Vec<usize>, ConvertError> {
        ids.ids().map(|id| self.position(id)).collect()
    }

    fn add_instances(
        &mut self,
        mi: &MultiInstances<'_>,
        positions: &[usize],
    ) -> Result<(), ConvertError> {
        if self.single.is_some() {
            return Err(ConvertError::MixedInstanceShapes {
                guid: self.reg.guid,
            });
        }
        let n = self.reg.counters.len();
        let instances = self.instances.get_or_insert_with(Vec::new);
        let mut seen: HashMap<(String, u32), usize> = HashMap::new();
        for inst in mi.iter() {
            let inst = inst?;
            let key = (inst.name().to_string_lossy(), inst.id());
            let occurrence = seen.entry(key.clone()).or_insert(0);
            let matches = self.lookup.entry(key.clone()).or_default();
            let slot = match matches.get(*occurrence) {
                Some(&i) => i,
                None => {
                    instances.push(AccInstance {
                        raw_name: key.0,
                        id: key.1,
                        values: vec![None; n],
                    });
                    matches.push(instances.len() - 1);
                    instances.len() - 1
                }
            };
            *occurrence += 1;
            let target = match instances.get_mut(slot) {
                Some(t) => t,
                None => continue,
            };
            for (v, &pos) in inst.values().iter().zip(positions) {
                let v = v?;
                Acc::set(
                    &mut target.values,
                    &mut self.sizes,
                    pos,
                    v.value(),
                    v.data_size(),
                );
            }
        }
        Ok(())
    }

    /// The value of counter `id` from the single block or the first instance that has it.
    fn first_value(&self, id: u32) -> Option<i64> {
        if id == NO_COUNTER {
            return None;
        }
        let pos = self.reg.counter_position(id)?;
        if let Some(single) = &self.single {
            return single.get(pos)?.as_ref()?.as_i64();
        }
        self.instances
            .as_ref()?
            .iter()
            .find_map(|i| i.values.get(pos)?.as_ref()?.as_i64())
    }

    fn into_object(self, clock: SampleClock) -> Object {
        let reg = self.reg;
        let present: Vec<usize> = (0..reg.counters.len())
            .filter(|&p| self.named.get(p).copied().unwrap_or(false))
            .collect();
        let new_pos = |id: u32| -> Option<usize> {
            if id == NO_COUNTER {
                return None;
            }
            let reg_pos = reg.counter_position(id)?;
            present.iter().position(|&p| p == reg_pos)
        };
        let mut counters = Vec::with_capacity(present.len());
        let (mut perf_time, mut perf_freq) = (None, None);
        for &p in &present {
            let Some(c) = reg.counters.get(p) else {
                continue;
            };
            let ty = c.counter_type;
            let companion = c.companion_id();
            if ty.time_base() == TimeBase::Object {
                if perf_time.is_none() {
                    perf_time = self.first_value(c.perf_time_id);
                }
                if perf_freq.is_none() {
                    perf_freq = self.first_value(c.perf_freq_id);
                }
            }
            let size = self
                .sizes
                .get(p)
                .copied()
                .flatten()
                .or(ty.nominal_size())
                .unwrap_or(0);
            counters.push(CounterDefinition {
                index: c.id,
                name: c.name.clone(),
                help_index: 0,
                counter_type: ty,
                size,
                offset: 0,
                scale: c.default_scale,
                detail_level: c.detail_level,
                base: new_pos(companion),
            });
        }
        let pick = |values: &[Option<Value>]| -> Vec<Value> {
            present
                .iter()
                .map(|&p| {
                    values
                        .get(p)
                        .cloned()
                        .flatten()
                        .unwrap_or(Value::Bytes(ValueBytes::new()))
                })
                .collect()
        };
        let data = match (&self.single, &self.instances) {
            (Some(single), _) => ObjectData::Single(pick(single)),
            (None, Some(list)) => {
                let mut instances: Vec<Instance> = list
                    .iter()
                    .map(|i| {
                        Instance::new(i.raw_name.clone(), pick(&i.values))
                            .with_unique_id(i.id as i32)
                    })
                    .collect();
                name_instances(&mut instances);
                ObjectData::Instances(instances)
            }
            (None, None) => ObjectData::Single(pick(&[])),
        };
        Object {
            index: 0,
            name: reg.name.clone(),
            help_index: 0,
            detail_level: reg.detail_level,
            default_counter: -1,
            code_page: 0,
            perf_time: perf_time.unwrap_or(0),
            perf_freq: perf_freq.unwrap_or(0),
            sample_clock: Some(clock),
            counters,
            data,
        }
    }
}

/// Builds a [`Snapshot`] from a query result.
///
/// * `data`: the `PerfQueryCounterData` result;
/// * `specs`: the `PerfQueryCounterInfo` result (block `i` answers the specification whose `Index` is
///   `i`; the first such specification is used);
/// * `registrations`: the registration of every counterset that has data.
///
/// Error blocks are skipped and returned in [`ConvertedSnapshot::errors`]. The snapshot's `system_name` is
/// empty (V2 data does not carry it).
pub fn to_snapshot(
    data: &DataHeader<'_>,
    specs: &[CounterSpec],
    registrations: &[CounterSetRegistration],
) -> Result<ConvertedSnapshot, ConvertError> {
    let mut accs: Vec<Acc<'_>> = Vec::new();
    let mut errors = Vec::new();
    for header in data.counters() {
        let header = header?;
        let index = header.index();
        let spec = specs
            .iter()
            .find(|s| s.index == index)
            .ok_or(ConvertError::NoSpecification { index })?;
        let block = header.block();
        if let CounterBlock::Error = block {
            errors.push(BlockStatus {
                index,
                guid: spec.guid,
                counter_id: spec.counter_id,
                status: header.status(),
            });
            continue;
        }
        let acc_index = match accs.iter().position(|a| a.reg.guid == spec.guid) {
            Some(i) => i,
            None => {
                let reg = registrations
                    .iter()
                    .find(|r| r.guid == spec.guid)
                    .ok_or(ConvertError::UnknownCounterSet { guid: spec.guid })?;
                accs.push(Acc::new(reg));
                accs.len() - 1
            }
        };
        let Some(acc) = accs.get_mut(acc_index) else {
            continue;
        };
        match block {
            CounterBlock::Error => {}
            CounterBlock::Single(d) => {
                if spec.counter_id == NO_COUNTER {
                    return Err(ConvertError::WildcardSingleCounter { index });
                }
                let pos = acc.position(spec.counter_id)?;
                let (v, size) = (d.value(), d.data_size());
                let mut sizes = std::mem::take(&mut acc.sizes);
                Acc::set(acc.single_slots()?, &mut sizes, pos, v, size);
                acc.sizes = sizes;
            }
            CounterBlock::MultipleCounters { ids, values } => {
                let positions = acc.positions(&ids)?;
                let mut sizes = std::mem::take(&mut acc.sizes);
                let slots = acc.single_slots()?;
                for (v, &pos) in values.iter().zip(&positions) {
                    let v = v?;
                    Acc::set(slots, &mut sizes, pos, v.value(), v.data_size());
                }
                acc.sizes = sizes;
            }
            CounterBlock::MultipleInstances(mi) => {
                if spec.counter_id == NO_COUNTER {
                    return Err(ConvertError::WildcardSingleCounter { index });
                }
                let pos = acc.position(spec.counter_id)?;
                acc.add_instances(&mi, &[pos])?;
            }
            CounterBlock::CounterSet { ids, instances } => {
                let positions = acc.positions(&ids)?;
                acc.add_instances(&instances, &positions)?;
            }
        }
    }
    let clock = SampleClock {
        perf_time: data.perf_time_stamp(),
        perf_freq: data.perf_freq(),
        perf_time_100ns: data.perf_time_100ns(),
    };
    let snapshot = Snapshot {
        system_name: String::new(),
        system_time: data.system_time(),
        perf_time: clock.perf_time,
        perf_freq: clock.perf_freq,
        perf_time_100ns: clock.perf_time_100ns,
        objects: accs.into_iter().map(|a| a.into_object(clock)).collect(),
    };
    Ok(ConvertedSnapshot { snapshot, errors })
}
