//! The query engine: the PDH analogue.
//!
//! A [`Query`] holds counter paths (with wildcards), expands them against what a source offers, keeps the
//! previous raw sample of every expanded counter instance, and turns each new [`Snapshot`] into values
//! with a status:
//!
//! ```
//! use perfcounters::query::Query;
//! use perfcounters::FormatOptions;
//! let mut q = Query::new(FormatOptions::typeperf());
//! q.add(r"\Processor(*)\% Processor Time").unwrap();
//! q.add(r"\Memory\Available Bytes").unwrap();
//! // for each collection: let values = q.update(&snapshot);
//! ```
//!
//! Semantics follow PDH:
//! * wildcards are expanded on the first update (like typeperf, which fixes its columns once); a path
//!   without wildcards names exactly one instance, which may come and go;
//! * an instance is found by the name its source gave it ([`Instance::name`], with `parent/` and `#n`
//!   from [`crate::snapshot::name_instances`]), compared ignoring case like every name; the column
//!   reads whichever instance holds that name in each collection, as PDH does;
//! * an instance that is missing in a collection yields `PDH_CSTATUS_NO_INSTANCE`; its previous sample is
//!   dropped, so when it returns the first collection primes it again;
//! * when the instance holding a name is another one than in the previous collection and the data
//!   says so (its `unique_id` differs: a process ID on Linux, a V2 instance ID), the previous sample
//!   is dropped the same way, so no rate mixes two instances. Without that identity (V1 instances named
//!   by name, `unique_id` −1) a `#n` reshuffle pairs two processes' samples like PDH does; a counter
//!   that went backwards then reports `PDH_CSTATUS_INVALID_DATA` for that interval;
//! * two-sample counters have no value on their first collection;
//! * an object or counter that does not exist yields `PDH_CSTATUS_NO_OBJECT` / `PDH_CSTATUS_NO_COUNTER` in
//!   its column (and a [`ExpandError`] with close names), while the other counters go on.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::calc::{CalcError, Calculator, FormatOptions, Formula};
use crate::counter_type::CounterType;
use crate::format::v1::{BlockField, BlockValues};
use crate::names::NameTable;
use crate::path::{eq_ignore_case, fold_case, format_instance, CounterPath, PathError};
use crate::raw::RawCounter;
use crate::snapshot::{
    instance_name, time_base, Instance, Object, ObjectData, RawPacker, RawValues, SampleClock,
    Second, Snapshot, Span, SystemTime, Value,
};
use crate::source::{BlockSample, Catalog, ObjectInfo, Request, Sample, Source, SourceError};
use crate::status::PdhStatus;
use crate::suggest::{suggest, DidYouMean};

/// Why a counter path could not be resolved against a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpandError {
    /// No object matches.
    NoObject {
        /// The path as added.
        path: String,
        /// The object name that did not match.
        object: String,
        /// Close object names.
        suggestions: Vec<String>,
    },
    /// The object exists but has no such counter.
    NoCounter {
        /// The path as added.
        path: String,
        /// The object.
        object: String,
        /// The counter name that did not match.
        counter: String,
        /// Close counter names.
        suggestions: Vec<String>,
    },
    /// No instance matches the path's instance part (or the object has none / needs one).
    NoInstance {
        /// The path as added.
        path: String,
        /// The object.
        object: String,
        /// The instance part that did not match, or a description of the mismatch.
        instance: String,
        /// Close instance names.
        suggestions: Vec<String>,
    },
}

impl ExpandError {
    /// The PDH status that a counter with this problem reports.
    pub fn status(&self) -> PdhStatus {
        match self {
            ExpandError::NoObject { .. } => PdhStatus::PDH_CSTATUS_NO_OBJECT,
            ExpandError::NoCounter { .. } => PdhStatus::PDH_CSTATUS_NO_COUNTER,
            ExpandError::NoInstance { .. } => PdhStatus::PDH_CSTATUS_NO_INSTANCE,
        }
    }
}

fn did_you_mean(f: &mut fmt::Formatter<'_>, suggestions: &[String]) -> fmt::Result {
    write!(f, "{}", DidYouMean(suggestions))
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpandError::NoObject {
                path,
                object,
                suggestions,
            } => {
                write!(f, "{path}: no object named \"{object}\"")?;
                did_you_mean(f, suggestions)
            }
            ExpandError::NoCounter {
                path,
                object,
                counter,
                suggestions,
            } => {
                write!(
                    f,
                    "{path}: object \"{object}\" has no counter named \"{counter}\""
                )?;
                did_you_mean(f, suggestions)
            }
            ExpandError::NoInstance {
                path,
                object,
                instance,
                suggestions,
            } => {
                write!(f, "{path}: object \"{object}\" has no instance {instance}")?;
                did_you_mean(f, suggestions)
            }
        }
    }
}

impl std::error::Error for ExpandError {}

/// One value of one expanded counter in one collection: the displayable value and its status, as
/// `PdhGetFormattedCounterValue` gives them, and the raw sample it was computed from, as
/// `PdhGetRawCounterValue` gives it.
///
/// A query keeps one per counter and rewrites them all in each collection (tens of thousands for
/// wildcard queries), so a value is 40 bytes: a missing value and a missing raw sample are NaNs of
/// the value field, which never holds a NaN otherwise (computed values are finite).
///
/// ```
/// use perfcounters::query::CounterValue;
/// use perfcounters::{PdhStatus, RawCounter};
/// let raw = RawCounter::new(250, 1_000).with_time(7);
/// let v = CounterValue::new(Some(25.0), PdhStatus::PDH_CSTATUS_NEW_DATA, Some(raw));
/// assert_eq!(v.value(), Some(25.0));
/// assert_eq!(v.status(), PdhStatus::PDH_CSTATUS_NEW_DATA);
/// assert_eq!(v.raw(), Some(raw));
/// let missing = CounterValue::new(None, PdhStatus::PDH_CSTATUS_NO_INSTANCE, None);
/// assert_eq!((missing.value(), missing.raw()), (None, None));
/// assert_eq!(std::mem::size_of::<CounterValue>(), 40);
/// ```
#[derive(Clone, Copy)]
pub struct CounterValue {
    /// The value; [`NO_VALUE`] without one, [`NO_RAW`] without a raw sample either (whose fields
    /// are then 0).
    value: f64,
    first: i64,
    second: i64,
    time: i64,
    multi_count: u32,
    status: PdhStatus,
}

/// [`CounterValue::value`]'s field for a counter with a raw sample but no value.
const NO_VALUE: f64 = f64::NAN;
/// The bits of [`CounterValue::value`]'s field for a counter without a raw sample (and so without
/// a value): a NaN with another payload than [`NO_VALUE`].
const NO_RAW: u64 = 0x7ff8_0000_0000_0001;

impl CounterValue {
    /// A value with its status and the raw sample it was computed from. Without a raw sample
    /// there is no value either, and a value that is not finite is kept as no value (the
    /// calculators of this crate give only finite values).
    ///
    /// ```
    /// use perfcounters::query::CounterValue;
    /// use perfcounters::{PdhStatus, RawCounter};
    /// let status = PdhStatus::PDH_CSTATUS_INVALID_DATA;
    /// assert_eq!(CounterValue::new(Some(1.0), status, None).value(), None);
    /// let raw = Some(RawCounter::new(1, 0));
    /// assert_eq!(CounterValue::new(Some(f64::INFINITY), status, raw).value(), None);
    /// ```
    pub fn new(value: Option<f64>, status: PdhStatus, raw: Option<RawCounter>) -> CounterValue {
        match raw {
            Some(raw) => CounterValue::sampled(value.filter(|v| v.is_finite()), status, raw),
            None => CounterValue {
                value: f64::from_bits(NO_RAW),
                first: 0,
                second: 0,
                time: 0,
                multi_count: 0,
                status,
            },
        }
    }

    /// A value (finite, or none) computed from `raw`.
    #[inline(always)]
    fn sampled(value: Option<f64>, status: PdhStatus, raw: RawCounter) -> CounterValue {
        CounterValue {
            value: value.unwrap_or(NO_VALUE),
            first: raw.first,
            second: raw.second,
            time: raw.time,
            multi_count: raw.multi_count,
            status,
        }
    }

    /// The displayable value, when the status allows one.
    #[inline]
    pub fn value(&self) -> Option<f64> {
        (!self.value.is_nan()).then_some(self.value)
    }

    /// `PDH_CSTATUS_NEW_DATA` / `VALID_DATA` with a value, otherwise why there is none.
    #[inline]
    pub fn status(&self) -> PdhStatus {
        self.status
    }

    /// The raw sample of this collection, when the counter instance exists.
    #[inline(always)]
    pub fn raw(&self) -> Option<RawCounter> {
        (self.value.to_bits() != NO_RAW).then_some(RawCounter {
            first: self.first,
            second: self.second,
            multi_count: self.multi_count,
            time: self.time,
        })
    }
}

/// Equal when the value, the status and the raw sample are.
impl PartialEq for CounterValue {
    fn eq(&self, other: &CounterValue) -> bool {
        (self.value(), self.status, self.raw()) == (other.value(), other.status, other.raw())
    }
}

impl fmt::Debug for CounterValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CounterValue")
            .field("value", &self.value())
            .field("status", &self.status)
            .field("raw", &self.raw())
            .finish()
    }
}

/// `UniqueID` of instances that are identified by name, and of single-instance values.
const PERF_NO_UNIQUE_ID: i32 = -1;

/// One expanded counter: a concrete path and its state.
#[derive(Clone, Debug)]
pub struct QueryCounter {
    /// The concrete path (no wildcards), qualified with the source's machine name.
    pub path: CounterPath,
    /// Which added path (0-based, in `add` order) this counter came from.
    pub origin: usize,
    /// Set when the path could not be resolved: its value column reports this status.
    pub error: Option<ExpandError>,
    /// The counter's type (for units); `PERF_COUNTER_NODATA` when the path did not resolve.
    pub counter_type: CounterType,
    /// The object's and the counter's names as the data names them; `path` spells them as the
    /// added path did, which may be in the machine's language.
    object: String,
    counter: String,
    /// The instance's name as its source named it ([`Instance::name`]), found again in later
    /// collections ignoring case; `None` for a single-instance object.
    instance: Option<String>,
    /// Where expansion found the object, counter and instance; [`Plan`] starts from them.
    object_pos: usize,
    counter_pos: usize,
    instance_pos: usize,
}

/// What a collection reads and writes for one counter besides its value, kept apart from the
/// [`QueryCounter`] (paths, names, errors) so that a collection walks compact arrays: the
/// counter's instance and the `unique_id` of the instance its last raw sample came from. That
/// sample itself is the counter's entry in [`Query::values`], which the next collection pairs
/// with its own (a collection reads and writes each value once, in place).
#[derive(Clone, Copy, Debug)]
struct CounterState {
    /// This counter's instance in [`Plan::instances`]; `NO_SLOT` for no instance.
    instance_slot: u32,
    unique_id: i32,
}

/// Consecutive counters that read one counter of one object (the instances a wildcard expanded,
/// or one concrete path): the counter is looked up once per run and collection.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// The status to report without looking at the data: the counters' path did not resolve and
    /// cannot start resolving later.
    fixed: Option<PdhStatus>,
    /// The run's entries in [`Plan::objects`] and [`Plan::counters`].
    object_slot: u32,
    counter_slot: u32,
    /// Where the run ends in [`Query::state`] and [`Query::values`] (exclusive); it starts where
    /// the previous one ends.
    end: usize,
}

/// [`CounterState::instance_slot`] of a counter without an instance.
const NO_SLOT: u32 = u32::MAX;

impl QueryCounter {
    /// The path as a string (`\\MACHINE\Object(Instance)\Counter`).
    pub fn path_string(&self) -> String {
        self.path.to_string()
    }

    /// The object's name as the source names it (in English for the sources of this crate).
    /// [`QueryCounter::path`] spells the object as the added path named it, which may be a name in
    /// the machine's language ([`Catalog::local_names`]).
    pub fn object_name(&self) -> &str {
        &self.object
    }

    /// The counter's name as the source names it; see [`QueryCounter::object_name`].
    pub fn counter_name(&self) -> &str {
        &self.counter
    }
}

/// A set of counter paths collected together.
///
/// A clone shares the expanded counters ([`Query::counters`]) with the original until either
/// expands again, and copies what collections change (values, previous samples, positions).
#[derive(Clone, Debug, Default)]
pub struct Query {
    options: FormatOptions,
    added: Vec<CounterPath>,
    /// The expanded counters, replaced as a whole by each expansion: a clone of the query
    /// shares them (they are most of a large query's memory, and a collection never reads them).
    counters: Arc<Vec<QueryCounter>>,
    /// The distinct objects, counters and instances the expanded counters read, each looked up
    /// once per collection.
    plan: Plan,
    /// The counters in runs that read one counter of one object, in [`Query::counters`] order.
    runs: Vec<Run>,
    /// One per counter, in [`Query::counters`] order.
    state: Vec<CounterState>,
    /// The values of the last collection, one per counter, in [`Query::counters`] order; their
    /// raw samples are the previous samples of the next collection.
    values: Vec<CounterValue>,
    expanded: bool,
    /// The names in the machine's language of the objects the paths name and of their counters,
    /// taken from the catalog by [`Query::request`], so that expansion matches them too.
    local: NameTable,
    /// For each added path whose object the catalog does not list, the catalog's close names.
    object_hints: HashMap<usize, Vec<String>>,
}

/// One name the query looks up in each collection, and where it was found last time.
#[derive(Clone, Debug)]
struct Slot {
    /// The object index in [`Plan::objects`] (unused for objects themselves).
    object: usize,
    /// Where the name is in [`Plan::text`].
    name: Span,
    pos: usize,
    /// Whether the last collection found it (at `pos`); kept for instance slots, which
    /// [`Plan::resolve`] leaves as they are when the names did not change.
    found: bool,
}

/// The distinct names the expanded counters refer to. Many counters read the same object, counter
/// and instance (a wildcard over 500 processes and 30 counters is 15,000 counters but 1 object, 30
/// counter names and 500 instance names), so [`Query::update`] resolves each name once per collection
/// and each counter then reads its value through positions.
#[derive(Clone, Debug, Default)]
struct Plan {
    objects: Vec<Slot>,
    counters: Vec<Slot>,
    instances: Vec<Slot>,
    /// The slots' names, one after the other: when the instance names change, the slots are
    /// compared with them in one pass over two buffers rather than one allocation each.
    text: String,
    /// For each object slot, the [`View::names_id`] of the names the instance slots were last
    /// resolved against.
    names: Vec<Option<u64>>,
}

impl Plan {
    /// The plan of `counters`, their runs and each counter's state; counters that name the same
    /// thing share one slot.
    fn build(counters: &[QueryCounter]) -> (Plan, Vec<Run>, Vec<CounterState>) {
        fn slot(
            list: &mut Vec<Slot>,
            text: &mut String,
            index: &mut HashMap<(usize, String), usize>,
            object: usize,
            name: &str,
            pos: usize,
        ) -> usize {
            if let Some(&i) = index.get(&(object, name.to_owned())) {
                return i;
            }
            let start = text.len();
            text.push_str(name);
            list.push(Slot {
                object,
                name: Span::since(start, text),
                pos,
                found: false,
            });
            index.insert((object, name.to_owned()), list.len() - 1);
            list.len() - 1
        }
        let slot_u32 = |i: usize| u32::try_from(i).unwrap_or(NO_SLOT);
        let mut plan = Plan::default();
        let (mut objects, mut counter_index, mut instance_index) =
            (HashMap::new(), HashMap::new(), HashMap::new());
        let mut runs: Vec<Run> = Vec::new();
        let mut state = Vec::with_capacity(counters.len());
        for c in counters {
            let object_slot = slot(
                &mut plan.objects,
                &mut plan.text,
                &mut objects,
                0,
                &c.object,
                c.object_pos,
            );
            let counter_slot = slot(
                &mut plan.counters,
                &mut plan.text,
                &mut counter_index,
                object_slot,
                &c.counter,
                c.counter_pos,
            );
            let instance_slot = c.instance.as_deref().map_or(NO_SLOT, |name| {
                slot_u32(slot(
                    &mut plan.instances,
                    &mut plan.text,
                    &mut instance_index,
                    object_slot,
                    name,
                    c.instance_pos,
                ))
            });
            // A path whose instance did not exist at expansion may appear later.
            let fixed = c
                .error
                .as_ref()
                .filter(|e| !matches!(e, ExpandError::NoInstance { .. }) || c.instance.is_none())
                .map(ExpandError::status);
            let run = Run {
                fixed,
                object_slot: slot_u32(object_slot),
                counter_slot: slot_u32(counter_slot),
                end: state.len() + 1,
            };
            match runs.last_mut() {
                Some(last)
                    if (last.fixed, last.object_slot, last.counter_slot)
                        == (run.fixed, run.object_slot, run.counter_slot) =>
                {
                    last.end = run.end;
                }
                _ => runs.push(run),
            }
            state.push(CounterState {
                instance_slot,
                unique_id: PERF_NO_UNIQUE_ID,
            });
        }
        (plan, runs, state)
    }
}

/// Where the plan's objects and counters are in one snapshot (`None`: not there); `F` as in
/// [`Prepared`]. The instances' positions are kept in their slots ([`Slot::found`]).
struct Resolved<F> {
    objects: Vec<Option<usize>>,
    counters: Vec<Option<Prepared<F>>>,
}

/// One counter of one object, ready for every instance: how its raw sample is packed (reading the
/// view's fields `F`) and the calculator of its type and time base.
struct Prepared<F> {
    packer: RawPacker<F>,
    calculator: Result<Calculator, CalcError>,
}

/// One collection as the query reads it: an owned [`Snapshot`] or a [`BlockSample`] read in
/// place. Both give the objects (names, definitions, clocks) and, by position, the instance names
/// and the values, so that one resolution and one computation serve both.
trait View {
    /// How the values of one instance are read.
    type Values<'v>: RawValues<Field = Self::Field>
    where
        Self: 'v;
    /// Where a counter's value is in the values of every instance of an object.
    type Field: Copy;

    /// The objects, in the order positions refer to.
    fn objects(&self) -> &[Object];
    /// The collection's clock ([`Snapshot::clock`]).
    fn clock(&self) -> SampleClock;
    /// The number of instances of object `object`; `None` when it has no instance list.
    fn instance_count(&self, object: usize) -> Option<usize>;
    /// The name of instance `pos` of object `object`.
    fn instance_name(&self, object: usize, pos: usize) -> Option<&str>;
    /// The values of instance `instance` of object `object` (`None`: the single-instance
    /// values) and the instance's `unique_id`; `None` when there are no such values.
    fn values(&self, object: usize, instance: Option<usize>) -> Option<(Self::Values<'_>, i32)>;
    /// Where counter `counter` of object `object` is in each of the object's values.
    fn field(&self, object: usize, counter: usize) -> Self::Field;
    /// An id of object `object`'s instance names, the same in two views only when the names are
    /// the same; `None` when the view cannot tell (an owned snapshot).
    fn names_id(&self, _object: usize) -> Option<u64> {
        None
    }
}

impl View for Snapshot {
    fn objects(&self) -> &[Object] {
        &self.objects
    }

    fn clock(&self) -> SampleClock {
        Snapshot::clock(self)
    }

    fn instance_count(&self, object: usize) -> Option<usize> {
        match &self.objects.get(object)?.data {
            ObjectData::Instances(list) => Some(list.len()),
            _ => None,
        }
    }

    fn instance_name(&self, object: usize, pos: usize) -> Option<&str> {
        match &self.objects.get(object)?.data {
            ObjectData::Instances(list) => list.get(pos).map(|i| i.name()),
            _ => None,
        }
    }

    type Values<'v> = &'v [Value];
    type Field = usize;

    fn field(&self, _object: usize, counter: usize) -> usize {
        counter
    }

    fn values(&self, object: usize, instance: Option<usize>) -> Option<(&[Value], i32)> {
        match (&self.objects.get(object)?.data, instance) {
            (ObjectData::Single(v), None) => Some((v.as_slice(), PERF_NO_UNIQUE_ID)),
            (ObjectData::Instances(list), Some(pos)) => {
                list.get(pos).map(|i| (i.values(), i.unique_id))
            }
            _ => None,
        }
    }
}

impl View for BlockSample<'_> {
    fn objects(&self) -> &[Object] {
        BlockSample::objects(self)
    }

    fn clock(&self) -> SampleClock {
        BlockSample::clock(self)
    }

    fn instance_count(&self, object: usize) -> Option<usize> {
        BlockSample::instance_count(self, object)
    }

    fn instance_name(&self, object: usize, pos: usize) -> Option<&str> {
        BlockSample::instance_name(self, object, pos)
    }

    type Values<'v>
        = BlockValues<'v>
    where
        Self: 'v;
    type Field = BlockField;

    fn field(&self, object: usize, counter: usize) -> BlockField {
        BlockSample::field(self, object, counter)
    }

    fn names_id(&self, object: usize) -> Option<u64> {
        BlockSample::names_id(self, object)
    }

    fn values(&self, object: usize, instance: Option<usize>) -> Option<(BlockValues<'_>, i32)> {
        BlockSample::values(self, object, instance)
    }
}

impl Plan {
    /// Finds every object, counter and instance of the plan in `view`: first at the position
    /// of the previous collection (a name comparison), else by name; found positions are kept for
    /// the next collection (the instances' in their slots).
    fn resolve<V: View + ?Sized>(
        &mut self,
        view: &V,
        options: &FormatOptions,
    ) -> Resolved<V::Field> {
        let list = view.objects();
        let text = self.text.as_str();
        let objects: Vec<Option<usize>> = self
            .objects
            .iter_mut()
            .map(|s| match list.get(s.pos) {
                Some(o) if name_eq(o.name.as_deref(), s.name.of(text)) => Some(s.pos),
                _ => {
                    let found = list
                        .iter()
                        .position(|o| name_eq(o.name.as_deref(), s.name.of(text)))?;
                    s.pos = found;
                    Some(found)
                }
            })
            .collect();
        let object_at = |slot: usize| objects.get(slot).copied().flatten();
        let clock = view.clock();
        let counters = self
            .counters
            .iter_mut()
            .map(|s| {
                let at = object_at(s.object)?;
                let object = list.get(at)?;
                let name = s.name.of(text);
                let pos = match object.counters.get(s.pos) {
                    Some(d) if !d.counter_type.is_base() && name_eq(d.name.as_deref(), name) => {
                        s.pos
                    }
                    _ => {
                        let found = object.counter_position_by_name(name)?;
                        s.pos = found;
                        found
                    }
                };
                let ty = object.counters.get(pos)?.counter_type;
                let clock = object.sample_clock.unwrap_or(clock);
                Some(Prepared {
                    packer: RawPacker::new(object, clock, pos)?
                        .with_fields(|counter| view.field(at, counter)),
                    calculator: Calculator::new(ty, time_base(object, clock, ty), options),
                })
            })
            .collect();
        // An object whose instance names are the very ones the last collection resolved against
        // (a block whose instance layout did not change) keeps every instance position.
        let names: Vec<Option<u64>> = objects
            .iter()
            .map(|o| o.and_then(|o| view.names_id(o)))
            .collect();
        let last_names = &self.names;
        let same_names = |slot: usize| {
            names.get(slot).copied().flatten().is_some() && names.get(slot) == last_names.get(slot)
        };
        let mut maps: HashMap<usize, HashMap<String, usize>> = HashMap::new();
        for s in &mut self.instances {
            if same_names(s.object) {
                continue;
            }
            let found = (|| {
                let object = object_at(s.object)?;
                let count = view.instance_count(object)?;
                let wanted = s.name.of(text);
                match view.instance_name(object, s.pos) {
                    Some(name) if s.pos < count && eq_ignore_case(name, wanted) => Some(s.pos),
                    _ => {
                        let map = maps
                            .entry(s.object)
                            .or_insert_with(|| instance_positions(view, object, count));
                        let found = *map.get(fold_case(wanted).as_ref())?;
                        s.pos = found;
                        Some(found)
                    }
                }
            })();
            s.found = found.is_some();
        }
        self.names = names;
        Resolved { objects, counters }
    }
}

/// How long (in the data's time, 100 ns units) an expansion of wildcard paths is kept by
/// [`ExpandSchedule`]: the first collection due this long after it expands them again.
pub const EXPAND_EVERY: i64 = 10 * 10_000_000;

/// When a query with wildcards is expanded again ([`Query::collect_expanded`]) by a
/// [`LiveQuery`]: at the second collection (the first with values), then at the first
/// collection foreseen (from the last two collections' times) [`EXPAND_EVERY`] or more after the
/// last expansion. So every collection expands at intervals of 10 s or more, every 10th at 1 s.
/// An expansion collects a whole snapshot; the collections between may read V1 blocks in place.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpandSchedule {
    expanded_at: i64,
    times: Option<(i64, i64)>,
}

impl ExpandSchedule {
    /// Whether the next collection expands.
    pub fn due(&self) -> bool {
        self.times.is_some_and(|(before, last)| {
            before == last
                || last.saturating_add(last.saturating_sub(before).max(0))
                    >= self.expanded_at.saturating_add(EXPAND_EVERY)
        })
    }

    /// Records a collection at `now` (the collection clock's `perf_time_100ns`), which expanded
    /// the paths (the first collection always does) or not.
    pub fn collected(&mut self, now: i64, expanded: bool) {
        if expanded {
            self.expanded_at = now;
        }
        self.times = Some(self.times.map_or((now, now), |(_, last)| (last, now)));
    }
}

/// A [`Query`] collected again and again, as `typeperf` collects: the first collection expands the
/// paths, and a query with wildcards expands them again on an [`ExpandSchedule`]
/// ([`Query::collect_expanded`]) so that an instance that starts gets its counters and one that
/// exits loses them; the collections between read only what the expansion resolved
/// ([`Query::collect`]). The `watch` command and the Python `Query` collect through it.
#[derive(Debug, Default)]
pub struct LiveQuery {
    query: Query,
    /// Whether the first collection was made.
    primed: bool,
    schedule: ExpandSchedule,
}

impl LiveQuery {
    /// Collects `query` from its first collection on.
    pub fn new(query: Query) -> Self {
        LiveQuery {
            query,
            primed: false,
            schedule: ExpandSchedule::default(),
        }
    }

    /// The query: its counters and the values of the last collection.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The query, to build its request ([`Query::request`]).
    pub fn query_mut(&mut self) -> &mut Query {
        &mut self.query
    }

    /// The query, given back.
    pub fn into_query(self) -> Query {
        self.query
    }

    /// Collects `request` (from [`Query::request`]) from `source` into the query's values,
    /// expanding the paths again when the schedule says so and a path has a wildcard.
    ///
    /// # Errors
    /// The source's error; the query and the schedule are then as they were.
    pub fn collect<S: Source + ?Sized>(
        &mut self,
        source: &mut S,
        request: &Request,
    ) -> Result<Collection, SourceError> {
        let due = self.query.paths().iter().any(CounterPath::has_wildcard) && self.schedule.due();
        let collection = if due {
            self.query.collect_expanded(source, request)?
        } else {
            self.query.collect(source, request)?
        };
        self.schedule
            .collected(collection.clock.perf_time_100ns, !self.primed || due);
        self.primed = true;
        Ok(collection)
    }
}

/// What [`Query::collect`] read besides the values.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Collection {
    /// The collection's clock (the snapshot's header, or the block's).
    pub clock: SampleClock,
    /// The collection's UTC wall-clock time.
    pub system_time: SystemTime,
    /// The snapshot, when the source gave one (always for the collection that expands the
    /// query); `None` when the values were read in place from a block.
    pub snapshot: Option<Snapshot>,
}

impl Query {
    /// An empty query with the given formatting options.
    pub fn new(options: FormatOptions) -> Self {
        Query {
            options,
            ..Default::default()
        }
    }

    /// Adds a counter path (wildcards allowed). Returns its position among the added paths.
    pub fn add(&mut self, path: &str) -> Result<usize, PathError> {
        let p = CounterPath::parse(path)?;
        self.add_path(p)
    }

    /// Adds a parsed counter path.
    pub fn add_path(&mut self, path: CounterPath) -> Result<usize, PathError> {
        self.added.push(path);
        self.expanded = false;
        Ok(self.added.len() - 1)
    }

    /// The paths as added.
    pub fn paths(&self) -> &[CounterPath] {
        &self.added
    }

    /// The formatting options.
    pub fn options(&self) -> &FormatOptions {
        &self.options
    }

    /// The [`Request`] that collects what this query needs from a source whose catalog is
    /// `catalog`, so that the source reads only those objects and counters:
    ///
    /// * one object per object the paths name that the catalog lists, in the order the paths first
    ///   name them, spelt as the catalog spells it. An object the catalog does not list is left out;
    ///   the query reports it (`PDH_CSTATUS_NO_OBJECT`) when it expands;
    /// * for each object, the catalog's counters the paths select, in path order: the named counter,
    ///   or every counter a wildcard matches. A wildcard that matches every counter (`*`) asks for
    ///   all of them (an empty list). Companion (base) counters are not listed; sources add them;
    /// * an object whose paths select none of its counters (only unknown counter names) is asked for
    ///   whole, so that the query can report the unknown names with the object's close names.
    ///
    /// Names are compared ignoring case, as the query compares them. A path may name its object and
    /// counter in English or in the machine's language ([`Catalog::local_names`], matched through
    /// the title index, as PDH's `PdhAddCounter` and `PdhAddEnglishCounter` together accept
    /// paths); the request names them in English. The query keeps what it needs of the catalog for
    /// its expansion: the local names of the objects it names (whose columns then show the path as
    /// it was typed), and the catalog's close names for an object the catalog does not list
    /// ([`ExpandError::NoObject`]).
    ///
    /// ```
    /// use perfcounters::query::Query;
    /// use perfcounters::source::{Catalog, CatalogCounter, ObjectInfo, Request};
    /// use perfcounters::{CounterType, FormatOptions};
    ///
    /// let counter = |name: &str| CatalogCounter {
    ///     name: name.into(),
    ///     index: 0,
    ///     help: String::new(),
    ///     counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
    ///     scale: 0,
    ///     detail_level: 100,
    ///     base_type: None,
    /// };
    /// let object = |name: &str, counters: &[&str]| ObjectInfo {
    ///     name: name.into(),
    ///     index: 0,
    ///     help: String::new(),
    ///     detail_level: 100,
    ///     multi_instance: false,
    ///     counters: counters.iter().map(|c| counter(c)).collect(),
    /// };
    /// let catalog = Catalog {
    ///     objects: vec![
    ///         object("Memory", &["Available Bytes", "Committed Bytes", "Page Faults/sec"]),
    ///         object("System", &["Processes", "Threads"]),
    ///     ],
    ///     ..Default::default()
    /// };
    /// let mut q = Query::new(FormatOptions::typeperf());
    /// q.add(r"\memory\available bytes").unwrap();
    /// q.add(r"\Memory\Commit*").unwrap();
    /// q.add(r"\System\*").unwrap();
    /// q.add(r"\Nope\X").unwrap();
    /// assert_eq!(
    ///     q.request(&catalog),
    ///     Request::new()
    ///         .object("Memory", &["Available Bytes", "Committed Bytes"])
    ///         .all_of("System")
    /// );
    /// ```
    pub fn request(&mut self, catalog: &Catalog) -> Request {
        struct Wanted<'a> {
            object: &'a ObjectInfo,
            all: bool,
            counters: Vec<&'a str>,
        }
        let mut wanted: Vec<Wanted<'_>> = Vec::new();
        self.local = NameTable::new();
        self.object_hints.clear();
        for (origin, path) in self.added.iter().enumerate() {
            let Some(object) = catalog.find(&path.object) else {
                self.object_hints
                    .insert(origin, catalog.close_object_names(&path.object));
                continue;
            };
            let w = match wanted.iter().position(|w| std::ptr::eq(w.object, object)) {
                Some(i) => &mut wanted[i],
                None => {
                    wanted.push(Wanted {
                        object,
                        all: false,
                        counters: Vec::new(),
                    });
                    wanted.last_mut().expect("just pushed")
                }
            };
            let selected: Vec<&str> = object
                .counters
                .iter()
                .filter(|c| {
                    path.matches_counter(&c.name)
                        || catalog
                            .local_names_of(c.index)
                            .any(|n| path.matches_counter(n))
                })
                .map(|c| c.name.as_str())
                .collect();
            if path.has_counter_wildcard() && selected.len() == object.counters.len() {
                w.all = true;
            }
            for name in selected {
                if !w.counters.contains(&name) {
                    w.counters.push(name);
                }
            }
        }
        let mut request = Request::new();
        for w in wanted {
            let indexes =
                std::iter::once(w.object.index).chain(w.object.counters.iter().map(|c| c.index));
            for index in indexes {
                for name in catalog.local_names_of(index) {
                    self.local.insert(index, name);
                }
            }
            request = if w.all || w.counters.is_empty() {
                request.all_of(&w.object.name)
            } else {
                request.object(&w.object.name, &w.counters)
            };
        }
        request
    }

    /// Whether the paths have been expanded (after the first [`Query::update`]).
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// The expanded counters, in column order. Empty before the first [`Query::update`].
    pub fn counters(&self) -> &[QueryCounter] {
        &self.counters
    }

    /// Expansion problems (unknown objects, counters, instances), one per failing path.
    pub fn errors(&self) -> impl Iterator<Item = &ExpandError> {
        self.counters.iter().filter_map(|c| c.error.as_ref())
    }

    /// Expands the added paths against a snapshot: every wildcard is replaced by the matching objects'
    /// counters and instances, in data order. Called by the first [`Query::update`]; call it again to pick
    /// up new instances.
    pub fn expand(&mut self, snapshot: &Snapshot) {
        let machine = if snapshot.system_name.is_empty() {
            None
        } else {
            Some(snapshot.system_name.clone())
        };
        let mut counters = Vec::new();
        for (origin, pattern) in self.added.iter().enumerate() {
            let names = Names {
                local: &self.local,
                object_hint: self.object_hints.get(&origin).map(Vec::as_slice),
            };
            expand_one(
                snapshot,
                machine.as_deref(),
                (origin, pattern),
                &names,
                &mut counters,
            );
        }
        // Counters that survive a re-expansion keep their last value, and so their previous sample
        // (a path that two patterns expand to, as `\Processor(_Total)\…` beside `\Processor(*)\…`,
        // is two counters: each keeps it).
        let mut old: HashMap<String, (CounterValue, i32)> = HashMap::new();
        let kept = self.state.drain(..).zip(self.values.drain(..));
        for (c, (state, value)) in self.counters.iter().zip(kept) {
            if value.raw().is_some() {
                old.insert(c.path.key(), (value, state.unique_id));
            }
        }
        let (plan, runs, mut state) = Plan::build(&counters);
        let values = counters
            .iter()
            .zip(&mut state)
            .map(|(c, state)| match old.get(&c.path.key()).cloned() {
                Some((value, unique_id)) => {
                    state.unique_id = unique_id;
                    value
                }
                None => missing(PdhStatus::PDH_NO_DATA),
            })
            .collect();
        self.plan = plan;
        self.runs = runs;
        self.state = state;
        self.values = values;
        self.counters = Arc::new(counters);
        self.expanded = true;
    }

    /// The values of the last collection ([`Query::collect`], [`Query::update`]), one per
    /// counter in [`Query::counters`] order. A counter that no collection has computed yet has
    /// no value and the status `PDH_NO_DATA`; a failed collection leaves the values as they were.
    pub fn values(&self) -> &[CounterValue] {
        &self.values
    }

    /// Feeds one collection: expands on the first call, then computes every counter's value from this
    /// snapshot and the previous one. Values are in [`Query::counters`] order, a copy of
    /// [`Query::values`].
    pub fn update(&mut self, snapshot: &Snapshot) -> Vec<CounterValue> {
        self.update_values(snapshot);
        self.values.clone()
    }

    /// [`Query::update`] into [`Query::values`].
    fn update_values(&mut self, snapshot: &Snapshot) {
        if !self.expanded {
            self.expand(snapshot);
        }
        self.compute(snapshot);
    }

    /// Collects `request` (from [`Query::request`]) from `source` and computes the values into
    /// [`Query::values`], as [`Source::collect`] followed by [`Query::update`] would, with the
    /// same values, statuses and errors. A query not expanded yet (its first collection) takes
    /// the source's snapshot; later collections take whatever [`Source::collect_sample`] gives,
    /// so a replay of V1 block files is read in place without building a snapshot.
    ///
    /// # Errors
    /// The source's error; the query's values (and so its previous samples) are then unchanged.
    pub fn collect<S: Source + ?Sized>(
        &mut self,
        source: &mut S,
        request: &Request,
    ) -> Result<Collection, SourceError> {
        // The collection that expands the paths needs the whole snapshot.
        let sample = if self.expanded {
            source.collect_sample(request)?
        } else {
            Sample::Snapshot(source.collect(request)?)
        };
        match sample {
            Sample::Snapshot(snapshot) => {
                self.update_values(&snapshot);
                Ok(Collection {
                    clock: snapshot.clock(),
                    system_time: snapshot.system_time,
                    snapshot: Some(snapshot),
                })
            }
            Sample::Block(block) => {
                self.compute_block(&block);
                Ok(Collection {
                    clock: block.clock(),
                    system_time: block.system_time(),
                    snapshot: None,
                })
            }
        }
    }

    /// As [`Query::collect`], but the paths are expanded again against this collection's snapshot
    /// before the values are computed, as re-running PDH's `PdhExpandWildCardPath` does: a wildcard
    /// gains the instances that appeared since the last expansion and loses those that went (a
    /// wildcard that matches nothing keeps its one counter with `PDH_CSTATUS_NO_INSTANCE`), and the
    /// counters that stay keep their previous sample ([`Query::expand`]). The source always gives a
    /// whole snapshot ([`Source::collect`]), which [`Collection::snapshot`] holds.
    ///
    /// # Errors
    /// The source's error; the query is then unchanged.
    pub fn collect_expanded<S: Source + ?Sized>(
        &mut self,
        source: &mut S,
        request: &Request,
    ) -> Result<Collection, SourceError> {
        let snapshot = source.collect(request)?;
        self.expand(&snapshot);
        self.compute(&snapshot);
        Ok(Collection {
            clock: snapshot.clock(),
            system_time: snapshot.system_time,
            snapshot: Some(snapshot),
        })
    }

    /// [`Query::compute`] from a block read in place. Not generic: the code of a collection is
    /// generated once, in this crate, whatever source [`Query::collect`] is called with.
    fn compute_block(&mut self, block: &BlockSample<'_>) {
        self.compute(block);
    }

    /// Every counter's value from `view` and the previous samples, into [`Query::values`].
    fn compute<V: View + ?Sized>(&mut self, view: &V) {
        let options = self.options;
        let resolved = self.plan.resolve(view, &options);
        // The values of each instance and each single-instance object, found once.
        let instances: Vec<Option<(V::Values<'_>, i32)>> = self
            .plan
            .instances
            .iter()
            .map(|s| {
                let object = resolved.objects.get(s.object).copied().flatten()?;
                view.values(object, Some(s.found.then_some(s.pos)?))
            })
            .collect();
        let singles: Vec<Option<(V::Values<'_>, i32)>> = resolved
            .objects
            .iter()
            .map(|o| view.values((*o)?, None))
            .collect();
        // The samples of one chunk of a run, between its two loops (one buffer for every run).
        let mut fresh = [Fresh::NONE; CHUNK];
        let mut start = 0;
        for run in &self.runs {
            let range = start..run.end;
            start = run.end;
            if range.end > self.state.len().min(self.values.len()) {
                break;
            }
            match prepared_of(&resolved, run) {
                Ok(prepared) => {
                    let single = singles
                        .get(usize::try_from(run.object_slot).unwrap_or(usize::MAX))
                        .copied()
                        .flatten();
                    let values = RunValues {
                        instances: &instances,
                        single,
                        packer: &prepared.packer,
                    };
                    let job = values.job(&prepared.calculator);
                    // Chunk by chunk. (Computing the runs of one object side by side, a chunk of
                    // each in turn so that a chunk's counter blocks stay in cache for every
                    // counter, measured no faster.)
                    for first in range.clone().step_by(CHUNK) {
                        let end = range.end.min(first + CHUNK);
                        if let (Some(states), Some(values)) = (
                            self.state.get_mut(first..end),
                            self.values.get_mut(first..end),
                        ) {
                            job.chunk(&mut fresh, states, values);
                        }
                    }
                }
                // No sample: the next collection primes again.
                Err(status) => {
                    if let Some(values) = self.values.get_mut(range) {
                        values.fill(missing(status));
                    }
                }
            }
        }
    }
}

/// A value with only a status.
fn missing(status: PdhStatus) -> CounterValue {
    CounterValue::new(None, status, None)
}

/// The prepared counter that the counters of `run` read, or the status of every counter of the
/// run.
fn prepared_of<'r, F>(resolved: &'r Resolved<F>, run: &Run) -> Result<&'r Prepared<F>, PdhStatus> {
    if let Some(status) = run.fixed {
        return Err(status);
    }
    let slot = |i: u32| usize::try_from(i).unwrap_or(usize::MAX);
    if resolved
        .objects
        .get(slot(run.object_slot))
        .copied()
        .flatten()
        .is_none()
    {
        return Err(PdhStatus::PDH_CSTATUS_NO_OBJECT);
    }
    match resolved.counters.get(slot(run.counter_slot)) {
        Some(Some(prepared)) => Ok(prepared),
        _ => Err(PdhStatus::PDH_CSTATUS_NO_COUNTER),
    }
}

/// What the counters of one run read: the values of every instance slot, the single-instance
/// values of their object, and how their counter's raw sample is packed.
struct RunValues<'a, T: RawValues> {
    instances: &'a [Option<(T, i32)>],
    single: Option<(T, i32)>,
    packer: &'a RawPacker<T::Field>,
}

/// One counter's raw sample as a collection reads it, before the formula (the `TimeStamp` is the
/// run's). A run is computed in chunks of [`CHUNK`] counters, each in two loops: one reads the
/// samples (compiled for the counter's field and second value), the other computes (compiled for
/// the formula), so that neither decides per value what the other fixes per counter.
#[derive(Clone, Copy, Debug)]
struct Fresh {
    first: i64,
    second: i64,
    multi_count: u32,
    unique_id: i32,
    /// Why the counter has no sample in this collection; `None` when it has one.
    missing: Option<PdhStatus>,
}

/// How many counters a run reads before computing them (their samples stay in the first-level
/// cache between the two loops).
const CHUNK: usize = 256;

impl Fresh {
    const NONE: Fresh = Fresh::missing(PdhStatus::PDH_CSTATUS_NO_INSTANCE);

    const fn missing(status: PdhStatus) -> Fresh {
        Fresh {
            first: 0,
            second: 0,
            multi_count: 0,
            unique_id: PERF_NO_UNIQUE_ID,
            missing: Some(status),
        }
    }
}

/// The loop that reads a chunk of a run's samples ([`read`]), compiled for one kind of field and
/// one source of the second value.
type Read<T> = fn(&RunValues<'_, T>, &[CounterState], &mut [Fresh]);

/// The loop that computes a chunk of a run's values from their samples, compiled for one formula,
/// with or without cap, scale and ×1000.
type Fill = fn(&Calculator, i64, &[Fresh], &mut [CounterState], &mut [CounterValue]);

/// How a run's values are made from their samples.
#[derive(Clone, Copy)]
enum Computing<'a> {
    /// By the calculator, with the loop compiled for its formula.
    Formula(Fill, &'a Calculator),
    /// The calculator could not be made: each counter with a sample gets this status.
    Fail(CalcError),
}

/// One run ready to be computed chunk by chunk: its loops picked once per collection.
struct Job<'a, T: RawValues> {
    run: RunValues<'a, T>,
    read: Read<T>,
    computing: Computing<'a>,
    /// The run's `TimeStamp`.
    time: i64,
}

impl<'a, T: RawValues> RunValues<'a, T> {
    /// The run's loops: reading compiled for the counter's field and second value, computing for
    /// the formula (with and without cap, scale and ×1000): a run of thousands of instances then
    /// runs one formula's arithmetic without dispatching on it for each value.
    fn job(self, calculator: &'a Result<Calculator, CalcError>) -> Job<'a, T> {
        fn fill<const FORMULA: u8, const PLAIN: bool>(
            calculator: &Calculator,
            time: i64,
            fresh: &[Fresh],
            states: &mut [CounterState],
            values: &mut [CounterValue],
        ) {
            let calculator = *calculator;
            // One length for the three slices, so that indexing them checks no bound.
            let n = fresh.len().min(states.len()).min(values.len());
            let (fresh, states, values) = (&fresh[..n], &mut states[..n], &mut values[..n]);
            for i in 0..n {
                values[i] = computed(&fresh[i], time, &mut states[i], &values[i], |raw, older| {
                    let formula = const { Formula::ALL[FORMULA as usize] };
                    calculator.compute_as(formula, PLAIN, raw, older)
                });
            }
        }
        fn pick_fill<const PLAIN: bool>(formula: Formula) -> Fill {
            use Formula as F;
            match formula {
                F::Raw => fill::<{ F::Raw as u8 }, PLAIN>,
                F::RawDiv1000 => fill::<{ F::RawDiv1000 as u8 }, PLAIN>,
                F::Delta => fill::<{ F::Delta as u8 }, PLAIN>,
                F::RatePerSec => fill::<{ F::RatePerSec as u8 }, PLAIN>,
                F::Timer => fill::<{ F::Timer as u8 }, PLAIN>,
                F::TimerInv => fill::<{ F::TimerInv as u8 }, PLAIN>,
                F::MultiTimerTick => fill::<{ F::MultiTimerTick as u8 }, PLAIN>,
                F::MultiTimer => fill::<{ F::MultiTimer as u8 }, PLAIN>,
                F::MultiTimerInv => fill::<{ F::MultiTimerInv as u8 }, PLAIN>,
                F::QueueLen => fill::<{ F::QueueLen as u8 }, PLAIN>,
                F::SampleFraction => fill::<{ F::SampleFraction as u8 }, PLAIN>,
                F::RawFraction => fill::<{ F::RawFraction as u8 }, PLAIN>,
                F::AverageTimer => fill::<{ F::AverageTimer as u8 }, PLAIN>,
                F::AverageBulk => fill::<{ F::AverageBulk as u8 }, PLAIN>,
                F::Elapsed => fill::<{ F::Elapsed as u8 }, PLAIN>,
                F::NotDisplayable => fill::<{ F::NotDisplayable as u8 }, PLAIN>,
                F::Unsupported => fill::<{ F::Unsupported as u8 }, PLAIN>,
            }
        }
        fn pick_read<T: RawValues, const KIND: u8>(second: Second) -> Read<T> {
            use Second as S;
            match second {
                S::Zero => read::<T, KIND, { S::Zero as u8 }>,
                S::Companion => read::<T, KIND, { S::Companion as u8 }>,
                S::Fixed => read::<T, KIND, { S::Fixed as u8 }>,
                S::TimeAndMultiCount => read::<T, KIND, { S::TimeAndMultiCount as u8 }>,
            }
        }
        let second = self.packer.second();
        let read = match T::kind(self.packer.counter()) {
            1 => pick_read::<T, 1>(second),
            2 => pick_read::<T, 2>(second),
            3 => pick_read::<T, 3>(second),
            4 => pick_read::<T, 4>(second),
            _ => pick_read::<T, 0>(second),
        };
        let computing = match calculator {
            Ok(calculator) if calculator.is_plain() => {
                Computing::Formula(pick_fill::<true>(calculator.formula()), calculator)
            }
            Ok(calculator) => {
                Computing::Formula(pick_fill::<false>(calculator.formula()), calculator)
            }
            Err(e) => Computing::Fail(*e),
        };
        Job {
            time: self.packer.time(),
            run: self,
            read,
            computing,
        }
    }
}

impl<T: RawValues> Job<'_, T> {
    /// Reads the samples of counters `states` (at most [`CHUNK`] of the run's) into `fresh`, then
    /// computes their `values`.
    fn chunk(
        &self,
        fresh: &mut [Fresh; CHUNK],
        states: &mut [CounterState],
        values: &mut [CounterValue],
    ) {
        let fresh = &mut fresh[..states.len().min(CHUNK)];
        (self.read)(&self.run, states, fresh);
        match self.computing {
            Computing::Formula(fill, calculator) => {
                fill(calculator, self.time, fresh, states, values)
            }
            Computing::Fail(error) => {
                for ((f, c), v) in fresh.iter().zip(states).zip(values) {
                    *v = computed(f, self.time, c, v, |_, _| Err(error));
                }
            }
        }
    }
}

/// The samples of counters `states`, packed with the counter's field read as kind `KIND`
/// ([`RawValues::kind`]) and the second value from source `SECOND` (the packer's, as
/// constants).
fn read<T: RawValues, const KIND: u8, const SECOND: u8>(
    run: &RunValues<'_, T>,
    states: &[CounterState],
    fresh: &mut [Fresh],
) {
    let second = const { Second::ALL[SECOND as usize] };
    // Copies, so that the loop keeps them in registers rather than reading them through `run`
    // for every counter.
    let (packer, instances, single) = (*run.packer, run.instances, run.single);
    for (c, f) in states.iter().zip(fresh) {
        let values = if c.instance_slot == NO_SLOT {
            single
        } else {
            let slot = usize::try_from(c.instance_slot).unwrap_or(usize::MAX);
            instances.get(slot).copied().flatten()
        };
        *f = match values {
            None => Fresh::NONE,
            Some((values, unique_id)) => match packer.pack_as::<T, KIND>(values, second) {
                Some(raw) => Fresh {
                    first: raw.first,
                    second: raw.second,
                    multi_count: raw.multi_count,
                    unique_id,
                    missing: None,
                },
                None => Fresh::missing(PdhStatus::PDH_CSTATUS_INVALID_DATA),
            },
        };
    }
}

/// The value of counter `c` from its sample `f` of this collection (`TimeStamp` `time`) and its
/// `last` value: `compute` turns the raw sample and the previous one (when it pairs) into the
/// value.
#[inline(always)]
fn computed(
    f: &Fresh,
    time: i64,
    c: &mut CounterState,
    last: &CounterValue,
    compute: impl FnOnce(&RawCounter, Option<&RawCounter>) -> Result<f64, CalcError>,
) -> CounterValue {
    if let Some(status) = f.missing {
        return missing(status);
    }
    let raw = RawCounter {
        first: f.first,
        second: f.second,
        multi_count: f.multi_count,
        time,
    };
    // Another instance now holds the name: its sample does not pair with the previous one.
    let same_instance = c.unique_id == f.unique_id;
    let previous = last.raw().filter(|_| same_instance);
    if !same_instance {
        // Written only when it changes: the states of a steady collection stay clean in cache.
        c.unique_id = f.unique_id;
    }
    match compute(&raw, previous.as_ref()) {
        Ok(v) => {
            let changed = previous.is_none_or(|p| p.first != raw.first || p.second != raw.second);
            let status = if changed {
                PdhStatus::PDH_CSTATUS_NEW_DATA
            } else {
                PdhStatus::PDH_CSTATUS_VALID_DATA
            };
            CounterValue::sampled(Some(v), status, raw)
        }
        Err(e) => CounterValue::sampled(None, e.status(), raw),
    }
}

fn name_eq(name: Option<&str>, wanted: &str) -> bool {
    name.is_some_and(|n| eq_ignore_case(n, wanted))
}

/// The position of the first instance with each name among the `count` instances of object
/// `object`, keyed by the name's case-folded form.
fn instance_positions<V: View + ?Sized>(
    view: &V,
    object: usize,
    count: usize,
) -> HashMap<String, usize> {
    let mut m = HashMap::with_capacity(count);
    for i in 0..count {
        if let Some(name) = view.instance_name(object, i) {
            m.entry(fold_case(name).into_owned()).or_insert(i);
        }
    }
    m
}

/// What expansion knows beyond the snapshot, from the catalog ([`Query::request`]).
struct Names<'a> {
    /// Names in the machine's language by title index.
    local: &'a NameTable,
    /// Close names for an object the catalog does not list.
    object_hint: Option<&'a [String]>,
}

impl Names<'_> {
    /// The names of title index `index` in the machine's language (none for index 0).
    fn local_names(&self, index: u32) -> impl Iterator<Item = &str> + '_ {
        self.local.names(index).filter(move |_| index != 0)
    }
}

/// One object an added path names, and how the path spells it: its English (data) name, or the
/// name in the machine's language that the path used.
struct Named<'s> {
    pos: usize,
    object: &'s Object,
    label: String,
    local: bool,
}

fn expand_one(
    snapshot: &Snapshot,
    machine: Option<&str>,
    (origin, pattern): (usize, &CounterPath),
    names: &Names<'_>,
    out: &mut Vec<QueryCounter>,
) {
    let path_text = pattern.to_string();
    let mut concrete = pattern.clone();
    if concrete.machine.is_none() {
        concrete.machine = machine.map(str::to_string);
    }
    let failed = |error: ExpandError, instance: Option<String>| QueryCounter {
        path: concrete.clone(),
        origin,
        error: Some(error),
        counter_type: CounterType::PERF_COUNTER_NODATA,
        object: pattern.object.clone(),
        counter: pattern.counter.clone(),
        instance,
        object_pos: 0,
        counter_pos: 0,
        instance_pos: 0,
    };
    let mut objects: Vec<Named<'_>> = Vec::new();
    for (pos, object) in snapshot.objects.iter().enumerate() {
        let Some(name) = object.name.as_deref() else {
            continue;
        };
        let (label, local) = if pattern.matches_object(name) {
            (name, false)
        } else {
            match names
                .local_names(object.index)
                .find(|n| pattern.matches_object(n))
            {
                Some(local) => (local, true),
                None => continue,
            }
        };
        objects.push(Named {
            pos,
            object,
            label: label.to_owned(),
            local,
        });
    }
    // An English name wins over a name in the machine's language.
    if objects.iter().any(|o| !o.local) {
        objects.retain(|o| !o.local);
    }
    if objects.is_empty() {
        let suggestions = match names.object_hint {
            Some(hint) => hint.to_vec(),
            None => suggest(
                &pattern.object,
                snapshot.objects.iter().filter_map(|o| o.name.as_deref()),
            ),
        };
        out.push(failed(
            ExpandError::NoObject {
                path: path_text,
                object: pattern.object.clone(),
                suggestions,
            },
            None,
        ));
        return;
    }
    for Named {
        pos: object_pos,
        object,
        label: object_name,
        local: local_object,
    } in objects
    {
        let data_object = object.name.clone().unwrap_or_default();
        // (position, data name, name as the column shows it)
        let counters: Vec<(usize, &str, &str)> = object
            .counters
            .iter()
            .enumerate()
            .filter(|(_, d)| d.counter_type.is_displayable())
            .filter_map(|(i, d)| {
                let name = d.name.as_deref()?;
                let english = pattern.matches_counter(name).then_some(name);
                let local = names
                    .local_names(d.index)
                    .find(|n| pattern.matches_counter(n));
                // A path that names the object in the machine's language shows counters in it.
                let label = if local_object {
                    local.or(english)
                } else {
                    english.or(local)
                };
                label.map(|l| (i, name, l))
            })
            .collect();
        if counters.is_empty() {
            let english = object
                .counters
                .iter()
                .filter(|d| !d.counter_type.is_base())
                .filter_map(|d| d.name.as_deref());
            let local = object
                .counters
                .iter()
                .filter(|d| local_object && !d.counter_type.is_base())
                .flat_map(|d| names.local_names(d.index));
            out.push(failed(
                ExpandError::NoCounter {
                    path: path_text.clone(),
                    object: object_name.clone(),
                    counter: pattern.counter.clone(),
                    suggestions: suggest(&pattern.counter, local.chain(english)),
                },
                None,
            ));
            continue;
        }
        // Instances that match, in data order.
        let instances: Vec<(usize, Option<&Instance>)> = match &object.data {
            ObjectData::Single(_) => {
                if pattern.instance.is_some() && pattern.instance.as_deref() != Some("*") {
                    out.push(failed(
                        ExpandError::NoInstance {
                            path: path_text.clone(),
                            object: object_name.clone(),
                            instance: format!(
                                "\"{}\" (it is a single-instance object)",
                                instance_text(pattern)
                            ),
                            suggestions: Vec::new(),
                        },
                        None,
                    ));
                    continue;
                }
                vec![(0, None)]
            }
            ObjectData::Instances(list) => {
                if pattern.instance.is_none() {
                    out.push(failed(
                        ExpandError::NoInstance {
                            path: path_text.clone(),
                            object: object_name.clone(),
                            instance: "(none given; this object has instances, e.g. (*))"
                                .to_string(),
                            suggestions: Vec::new(),
                        },
                        None,
                    ));
                    continue;
                }
                let matched: Vec<(usize, Option<&Instance>)> = list
                    .iter()
                    .enumerate()
                    .filter(|(_, i)| pattern.matches_instance(i.parent(), i.raw_name(), i.index))
                    .map(|(pos, i)| (pos, Some(i)))
                    .collect();
                if matched.is_empty() {
                    // A concrete instance that does not exist now, or a wildcard that matches no
                    // instance yet (`\Process(firefox*)\…` before it starts): keep the counter,
                    // with the path as written; it reports PDH_CSTATUS_NO_INSTANCE until the
                    // instance appears (a wildcard's matches, at the next expansion).
                    let wildcard = pattern.has_instance_wildcard();
                    let names = list.iter().map(|i| i.name());
                    // The name the instance will have when it appears.
                    let name = instance_name(
                        pattern.parent.as_deref(),
                        pattern.instance.as_deref().unwrap_or_default(),
                        pattern.index.unwrap_or(0),
                    );
                    let (missing, suggestions) = if wildcard {
                        (
                            format!("matching \"{}\" yet", instance_text(pattern)),
                            Vec::new(),
                        )
                    } else {
                        (
                            format!("\"{}\"", instance_text(pattern)),
                            suggest(&instance_text(pattern), names.clone()),
                        )
                    };
                    for (counter_pos, data_counter, counter_name) in &counters {
                        let mut p = concrete.clone();
                        p.object = object_name.clone();
                        p.counter = (*counter_name).to_string();
                        let mut qc = failed(
                            ExpandError::NoInstance {
                                path: path_text.clone(),
                                object: object_name.clone(),
                                instance: missing.clone(),
                                suggestions: suggestions.clone(),
                            },
                            Some(name.clone()),
                        );
                        qc.path = p;
                        qc.object = data_object.clone();
                        qc.counter = (*data_counter).to_string();
                        qc.counter_type = object.counters[*counter_pos].counter_type;
                        qc.object_pos = object_pos;
                        qc.counter_pos = *counter_pos;
                        out.push(qc);
                    }
                    continue;
                }
                matched
            }
            ObjectData::MetadataOnly { .. } => Vec::new(),
        };
        for (counter_pos, data_counter, counter_name) in &counters {
            for (instance_pos, instance) in &instances {
                let mut p = concrete.clone();
                p.object = object_name.clone();
                p.counter = (*counter_name).to_string();
                p.parent = instance.and_then(|i| i.parent().map(str::to_owned));
                p.instance = instance.map(|i| i.raw_name().to_owned());
                p.index = instance.and_then(|i| (i.index > 0).then_some(i.index));
                out.push(QueryCounter {
                    path: p,
                    origin,
                    error: None,
                    counter_type: object.counters[*counter_pos].counter_type,
                    object: data_object.clone(),
                    counter: (*data_counter).to_string(),
                    instance: instance.map(|i| i.name().to_owned()),
                    object_pos,
                    counter_pos: *counter_pos,
                    instance_pos: *instance_pos,
                });
            }
        }
    }
}

fn instance_text(p: &CounterPath) -> String {
    format_instance(
        p.parent.as_deref(),
        p.instance.as_deref().unwrap_or_default(),
        p.index,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collections (0-based) that expand, for collections `gap` seconds apart.
    fn expanding(gap: i64, n: usize) -> Vec<usize> {
        let mut schedule = ExpandSchedule::default();
        let mut out = Vec::new();
        for i in 0..n {
            let due = i == 0 || schedule.due();
            if due {
                out.push(i);
            }
            schedule.collected(i as i64 * gap * 10_000_000, due);
        }
        out
    }

    #[test]
    fn wildcards_expand_again_every_ten_seconds_of_data() {
        // The priming collection, the second, then every 10 s.
        assert_eq!(expanding(1, 25), [0, 1, 11, 21]);
        assert_eq!(expanding(3, 12), [0, 1, 5, 9]);
        // 10 s or more apart: every collection.
        assert_eq!(expanding(60, 4), [0, 1, 2, 3]);
        assert_eq!(expanding(10, 3), [0, 1, 2]);
    }
}
