//! A Performance Monitor binary log (`.blg`) as a recording: one snapshot per sample.
//!
//! * Whole-object entries (`\\M\Process(*)\*`, the V1 blocks of Vista-era logs) give their objects
//!   as the log stored them, named from the log's embedded name table.
//! * Single and wildcard counters (`PDH_RAW_COUNTER`s) are turned into objects the query reads back
//!   exactly: one object per object name, one counter definition per counter name (with a base
//!   definition after it for fractions, averages and multi timers, holding the stored second value),
//!   one instance per stored instance (named and numbered as the log has them), and the object's
//!   clock set from the stored time stamps, so that [`Snapshot::raw_counter`] gives back the stored
//!   `PDH_RAW_COUNTER`s. A value with a bad status is left out (no value, as PDH shows it).
//!
//! The counters of one object must have been sampled against one clock (one time stamp per time base
//! in a sample) and the log must hold one machine: that is how PDH collects them. Logs that mix
//! machines, or counters of one object with different time stamps, are refused with a message that
//! points to `relog`, which reads any log.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::Recording;
use crate::counter_type::{CounterType, Subtype, TimeBase, TypeField};
use crate::format::blg::{BlgCounterSpec, BlgLog, Column, ReadError, SampleValue};
use crate::path::{fold_case, CounterPath};
use crate::raw::RawCounter;
use crate::snapshot::{
    CounterDefinition, Instance, Object, ObjectData, SampleClock, Snapshot, SystemTime, Value,
    ValueBytes,
};
use crate::source::{SourceError, SourceErrorKind};

/// A binary log replayed sample by sample.
#[derive(Debug)]
pub struct BlgRecording {
    path: PathBuf,
    log: BlgLog<BufReader<File>>,
    machine: String,
    /// The number of the sample the log hands out next.
    next: usize,
    first: Option<Snapshot>,
    /// The UTC time of the sample before (a local time repeated when daylight saving time ends is
    /// its second occurrence after it).
    previous_utc: Option<i64>,
}

fn read_error(path: &Path, e: ReadError) -> SourceError {
    match e {
        ReadError::Io(e) => SourceError::io(path, e),
        ReadError::Decode(e) => SourceError::decode(path.display().to_string(), e),
        other => SourceError::new(SourceErrorKind::Decode, other.to_string()).with_path(path),
    }
}

impl BlgRecording {
    /// Opens a log: its header and counter list. The log must name one machine.
    pub fn open(path: &Path) -> Result<Self, SourceError> {
        let log = Self::open_log(path)?;
        let machines: Vec<&str> = {
            let mut m: Vec<&str> = log.specs().iter().map(|s| s.machine.as_str()).collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        if machines.len() > 1 {
            return Err(SourceError::new(
                SourceErrorKind::Unavailable,
                format!(
                    "the log holds counters of {} machines ({}, …); a replay shows one machine: \
                     use `perfcounters relog` to read it",
                    machines.len(),
                    machines[0]
                ),
            )
            .with_path(path));
        }
        let machine = machines
            .first()
            .map(|m| m.trim_start_matches('\\').to_string())
            .unwrap_or_default();
        Ok(BlgRecording {
            path: path.to_path_buf(),
            log,
            machine,
            next: 0,
            first: None,
            previous_utc: None,
        })
    }

    fn open_log(path: &Path) -> Result<BlgLog<BufReader<File>>, SourceError> {
        let file = File::open(path).map_err(|e| SourceError::io(path, e))?;
        BlgLog::new(BufReader::with_capacity(1 << 16, file)).map_err(|e| read_error(path, e))
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The decoded log.
    pub fn log(&self) -> &BlgLog<BufReader<File>> {
        &self.log
    }

    /// Reads the log's next sample as a snapshot.
    fn read_next(&mut self) -> Result<Option<Snapshot>, SourceError> {
        let sample = match self.log.next_sample() {
            None => return Ok(None),
            Some(Err(e)) => return Err(read_error(&self.path, e)),
            Some(Ok(s)) => s,
        };
        let (values, local) = (sample.values.to_vec(), sample.time);
        // The log's zone rules, daylight saving time included, as the log reader applies them.
        let utc = self
            .log
            .header()
            .time_zone
            .to_utc_after(local, self.previous_utc);
        self.previous_utc = Some(utc);
        self.next += 1;
        let mut objects = self
            .log
            .last_objects()
            .map(|s| s.objects.clone())
            .unwrap_or_default();
        objects.extend(counter_objects(&self.log, &values).map_err(|m| {
            SourceError::new(
                SourceErrorKind::Unavailable,
                format!(
                    "sample {}: {m}; use `perfcounters relog` to read it",
                    self.next - 1
                ),
            )
            .with_path(&self.path)
        })?);
        // The collection's time: the sample's, in UTC as snapshots keep it.
        let clock = SampleClock {
            perf_time: 0,
            perf_freq: self.log.header().perf_freq,
            perf_time_100ns: utc,
        };
        Ok(Some(
            Snapshot::new(self.machine.clone())
                .with_clock(clock)
                .with_system_time(SystemTime::from_filetime(utc))
                .with_objects(objects),
        ))
    }
}

/// An instance as the log names it: folded parent, folded name, `#n`.
type InstanceKey = (Option<String>, String, u32);

/// One object being built from stored raw counters.
struct Building {
    name: String,
    counters: Vec<CounterDefinition>,
    /// Counter name (folded) → position of its definition.
    positions: Vec<(String, usize)>,
    single: Option<Vec<Value>>,
    instances: Vec<Instance>,
    /// Instance key → position in `instances`.
    keys: Vec<(InstanceKey, usize)>,
    clock: SampleClock,
    has_tick: bool,
    has_100ns: bool,
    object_time: Option<(i64, i64)>,
}

/// The objects of the single and wildcard entries of one sample.
fn counter_objects<R: std::io::Read>(
    log: &BlgLog<R>,
    values: &[SampleValue],
) -> Result<Vec<Object>, String> {
    let mut objects: Vec<Building> = Vec::new();
    let specs: &[BlgCounterSpec] = log.specs();
    for v in values {
        let Some(column) = log.columns().get(v.column) else {
            continue;
        };
        let Some(spec) = specs.get(column.entry) else {
            continue;
        };
        if spec.is_whole_object() {
            continue;
        }
        let b = Building::find_or_add(&mut objects, &column.path.object);
        let position = b.definition(column);
        if !v.status.is_success() {
            continue;
        }
        b.set_clock(column, v.raw.second)?;
        b.store(column, position, &v.raw);
    }
    Ok(objects.into_iter().map(Building::into_object).collect())
}

impl Building {
    /// The object named `name` (compared by the case rule), added if it is new.
    #[inline]
    fn find_or_add<'a>(objects: &'a mut Vec<Building>, name: &str) -> &'a mut Building {
        let folded = fold_case(name).into_owned();
        let o = match objects
            .iter()
            .position(|b| fold_case(&b.name) == folded.as_str())
        {
            Some(i) => i,
            None => {
                objects.push(Building {
                    name: name.to_owned(),
                    counters: Vec::new(),
                    positions: Vec::new(),
                    single: None,
                    instances: Vec::new(),
                    keys: Vec::new(),
                    clock: SampleClock::default(),
                    has_tick: false,
                    has_100ns: false,
                    object_time: None,
                });
                objects.len() - 1
            }
        };
        &mut objects[o]
    }

    /// The position of the column's counter definition, found by name; a new one is added (with
    /// its base after it for types that need one), and the values so far widened to match.
    #[inline]
    fn definition(&mut self, column: &Column) -> usize {
        let counter_key = fold_case(&column.path.counter).into_owned();
        if let Some(&(_, p)) = self.positions.iter().find(|(k, _)| *k == counter_key) {
            return p;
        }
        let ty = column.info.counter_type;
        let p = self.counters.len();
        let mut def = CounterDefinition::new(0, ty).named(column.path.counter.clone());
        def.scale = column.info.default_scale;
        self.counters.push(def);
        if ty.needs_base() {
            let base = if ty.is_multi() {
                CounterType::PERF_COUNTER_MULTI_BASE
            } else {
                CounterType::PERF_LARGE_RAW_BASE
            };
            self.counters.push(CounterDefinition::new(0, base));
            self.counters[p].base = Some(p + 1);
        }
        self.positions.push((counter_key, p));
        // Earlier instances have no value for the new definitions.
        let width = self.counters.len();
        if let Some(values) = &mut self.single {
            values.resize(width, Value::Bytes(ValueBytes::new()));
        }
        for i in &mut self.instances {
            i.values_mut()
                .resize(width, Value::Bytes(ValueBytes::new()));
        }
        p
    }

    /// Sets the object's clock from the column's stored time stamp `stamp` (the second value),
    /// which the formula reads back as `Snapshot::raw_counter` packs it. The counters of one object
    /// must agree on it.
    #[inline]
    fn set_clock(&mut self, column: &Column, stamp: i64) -> Result<(), String> {
        let ty = column.info.counter_type;
        let object = &column.path.object;
        let counter_kind = ty.kind() == TypeField::Counter && !ty.is_base();
        let subtype = ty.subtype();
        let clocked = counter_kind
            && !matches!(
                subtype,
                Subtype::CounterFraction
                    | Subtype::CounterPrecision
                    | Subtype::CounterElapsed
                    | Subtype::CounterValue
            );
        let object_clock = (clocked && ty.time_base() == TimeBase::Object)
            || (counter_kind && subtype == Subtype::CounterElapsed);
        if object_clock {
            let pair = (stamp, column.info.time_base);
            if self.object_time.is_some_and(|t| t != pair) {
                return Err(format!(
                    "the counters of {object} have different object time stamps"
                ));
            }
            self.object_time = Some(pair);
        } else if clocked {
            match ty.time_base() {
                TimeBase::Ns100 => same_stamp(
                    &mut self.has_100ns,
                    &mut self.clock.perf_time_100ns,
                    stamp,
                    object,
                    "100 ns",
                )?,
                _ => {
                    same_stamp(
                        &mut self.has_tick,
                        &mut self.clock.perf_time,
                        stamp,
                        object,
                        "tick",
                    )?;
                    let mut freq_set = self.clock.perf_freq != 0;
                    same_stamp(
                        &mut freq_set,
                        &mut self.clock.perf_freq,
                        column.info.time_base,
                        object,
                        "frequency",
                    )?;
                }
            }
        }
        Ok(())
    }

    /// The values of the column's instance (named as the log names it, index included), added if
    /// it is new; the object's single values when the column has no instance.
    #[inline]
    fn values_of(&mut self, path: &CounterPath) -> &mut Vec<Value> {
        let width = self.counters.len();
        let Some(name) = &path.instance else {
            return self
                .single
                .get_or_insert_with(|| vec![Value::Bytes(ValueBytes::new()); width]);
        };
        let key = (
            path.parent.as_deref().map(|p| fold_case(p).into_owned()),
            fold_case(name).into_owned(),
            path.index.unwrap_or(0),
        );
        let i = match self.keys.iter().find(|(k, _)| *k == key) {
            Some(&(_, i)) => i,
            None => {
                self.instances.push(Instance::recorded(
                    name,
                    path.parent.as_deref(),
                    path.index.unwrap_or(0),
                    vec![Value::Bytes(ValueBytes::new()); width],
                ));
                self.keys.push((key, self.instances.len() - 1));
                self.instances.len() - 1
            }
        };
        self.instances[i].values_mut()
    }

    /// Stores the column's raw value at its definition's `position`, and the second value (or the
    /// multi count) at its base's.
    #[inline]
    fn store(&mut self, column: &Column, position: usize, raw: &RawCounter) {
        let base = self.counters[position].base;
        let slot = self.values_of(&column.path);
        if let Some(x) = slot.get_mut(position) {
            *x = Value::U64(raw.first as u64);
        }
        if let Some(x) = base.and_then(|base| slot.get_mut(base)) {
            *x = if column.info.counter_type.is_multi() {
                Value::U64(u64::from(raw.multi_count))
            } else {
                Value::U64(raw.second as u64)
            };
        }
    }

    /// The object, its clocks set.
    fn into_object(self) -> Object {
        let mut o = Object::new(0).named(self.name);
        o.counters = self.counters;
        o.sample_clock = Some(self.clock);
        if let Some((time, freq)) = self.object_time {
            o.perf_time = time;
            o.perf_freq = freq;
        }
        o.data = match self.single {
            Some(values) if self.instances.is_empty() => ObjectData::Single(values),
            _ => ObjectData::Instances(self.instances),
        };
        o
    }
}

/// Sets `slot` to the time stamp `value` if it is not `set` yet; a stamp that differs from the one
/// set is an error naming the `object` and `what` stamp it is.
#[inline]
fn same_stamp(
    set: &mut bool,
    slot: &mut i64,
    value: i64,
    object: &str,
    what: &str,
) -> Result<(), String> {
    if *set && *slot != value {
        return Err(format!(
            "the counters of {object} have different {what} time stamps"
        ));
    }
    *set = true;
    *slot = value;
    Ok(())
}

impl Recording for BlgRecording {
    fn sample_count(&self) -> Option<usize> {
        None
    }

    fn sample(&mut self, index: usize) -> Result<Option<Snapshot>, SourceError> {
        if index == 0 {
            if let Some(first) = &self.first {
                return Ok(Some(first.clone()));
            }
        }
        if index < self.next {
            // A sample before the current position: read the log again from its start.
            self.log = Self::open_log(&self.path)?;
            self.next = 0;
        }
        while self.next < index {
            if self.read_next()?.is_none() {
                return Ok(None);
            }
        }
        let s = self.read_next()?;
        if index == 0 {
            self.first.clone_from(&s);
        }
        Ok(s)
    }

    fn description(&self) -> String {
        "the binary log".into()
    }
}
