//! The counter model every source produces: one [`Snapshot`] per collection.
//!
//! A snapshot holds the time stamps of the collection, the system name, and objects. An object has
//! counter definitions and either one block of raw values (single-instance objects) or named instances,
//! each with raw values. Base counters are linked to the counter they serve through
//! [`CounterDefinition::base`], so the calculator never has to guess.
//!
//! Instances are named by one rule, [`name_instances`], which every source applies. An object read in
//! another collection than the snapshot's header (a V2 counterset joined with a V1 block) carries
//! its own time stamps ([`Object::sample_clock`]); [`Snapshot::clock_of`] gives the clock of any
//! object.

use std::collections::HashMap;
use std::sync::Arc;

use crate::counter_type::{CounterType, TimeBase};
use crate::path::{eq_ignore_case, format_instance, write_index, Folded};
use crate::raw::RawCounter;

mod build;

/// The 100 ns time base (`PERF_TIMER_100NS`): 10,000,000 units per second.
pub const FREQ_100NS: i64 = 10_000_000;

/// A `SYSTEMTIME` (UTC in performance data).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SystemTime {
    /// Year, e.g. 2020.
    pub year: u16,
    /// Month, 1–12.
    pub month: u16,
    /// Day of the week, 0 = Sunday.
    pub day_of_week: u16,
    /// Day of the month, 1–31.
    pub day: u16,
    /// Hour, 0–23.
    pub hour: u16,
    /// Minute, 0–59.
    pub minute: u16,
    /// Second, 0–59.
    pub second: u16,
    /// Milliseconds, 0–999.
    pub milliseconds: u16,
}

/// 100 ns intervals between 1601-01-01, the FILETIME epoch, and 1970-01-01, the Unix epoch (UTC).
pub const FILETIME_UNIX_EPOCH: i64 = 116_444_736_000_000_000;

/// The seconds and nanoseconds since the Unix epoch (1970-01-01 UTC) of a FILETIME; the seconds are
/// negative before 1970 and the nanoseconds always within 0 to 999,999,900.
pub fn unix_time_from_filetime(filetime: i64) -> (i64, u32) {
    let t = filetime.saturating_sub(FILETIME_UNIX_EPOCH);
    let nanos = (t.rem_euclid(FREQ_100NS) * 100) as u32;
    (t.div_euclid(FREQ_100NS), nanos)
}

/// The milliseconds since the Unix epoch (1970-01-01 UTC) of a FILETIME, rounded down (towards the
/// past, also before 1970): the time stamps of JavaScript and of charts.
pub fn unix_millis_from_filetime(filetime: i64) -> i64 {
    filetime
        .saturating_sub(FILETIME_UNIX_EPOCH)
        .div_euclid(FREQ_100NS / 1000)
}

/// 100 ns units per day.
const FILETIME_PER_DAY: i64 = 864_000_000_000;
/// Days from 1601-01-01 (the FILETIME epoch) to 1970-01-01.
const DAYS_1601_TO_1970: i64 = 134_774;

impl SystemTime {
    /// The eight `WORD`s of a `SYSTEMTIME` in their order: year, month, day of week, day, hour,
    /// minute, second, milliseconds.
    pub(crate) fn to_words(self) -> [u16; 8] {
        [
            self.year,
            self.month,
            self.day_of_week,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.milliseconds,
        ]
    }

    /// The time of the eight `WORD`s of a `SYSTEMTIME`, in the order of [`to_words`](Self::to_words).
    pub(crate) fn from_words(words: [u16; 8]) -> SystemTime {
        let [year, month, day_of_week, day, hour, minute, second, milliseconds] = words;
        SystemTime {
            year,
            month,
            day_of_week,
            day,
            hour,
            minute,
            second,
            milliseconds,
        }
    }

    /// The calendar time of a FILETIME (100 ns units since 1601-01-01); negative values give
    /// 1601-01-01 00:00. The zone is whatever the FILETIME's is (UTC in performance data, local time
    /// in the time stamps PDH stores).
    pub fn from_filetime(filetime: i64) -> SystemTime {
        let ft = filetime.max(0);
        let total_ms = ft / 10_000;
        let ms_of_day = total_ms.rem_euclid(86_400_000);
        let days_1601 = total_ms.div_euclid(86_400_000);
        let z = days_1601 - DAYS_1601_TO_1970;
        // Civil date from days since 1970 (H. Hinnant's algorithm).
        let z2 = z + 719_468;
        let era = z2.div_euclid(146_097);
        let doe = z2 - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        let clamp = |v: i64| u16::try_from(v).unwrap_or(0);
        SystemTime {
            year: clamp(year),
            month: clamp(month),
            day_of_week: clamp((z + 4).rem_euclid(7)),
            day: clamp(day),
            hour: clamp(ms_of_day / 3_600_000),
            minute: clamp(ms_of_day / 60_000 % 60),
            second: clamp(ms_of_day / 1000 % 60),
            milliseconds: clamp(ms_of_day % 1000),
        }
    }

    /// The FILETIME of this calendar time (`day_of_week` is ignored), or `None` when a field is out
    /// of range (month 1–12, day 1–31 and within the month, hour < 24, minute and second < 60,
    /// milliseconds < 1000) or the date is before 1601.
    pub fn to_filetime(&self) -> Option<i64> {
        if !(1..=12).contains(&self.month)
            || self.day == 0
            || self.day > days_in_month(self.year, self.month)
            || self.hour > 23
            || self.minute > 59
            || self.second > 59
            || self.milliseconds > 999
            || self.year < 1601
        {
            return None;
        }
        let days = days_from_civil(i64::from(self.year), self.month, self.day) + DAYS_1601_TO_1970;
        let ms = ((i64::from(self.hour) * 60 + i64::from(self.minute)) * 60
            + i64::from(self.second))
            * 1000
            + i64::from(self.milliseconds);
        days.checked_mul(FILETIME_PER_DAY)?.checked_add(ms * 10_000)
    }
}

/// Days in `month` (1–12) of `year` (Gregorian); 0 for an invalid month.
pub fn days_in_month(year: u16, month: u16) -> u16 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

/// Days from 1970-01-01 to the Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u16, day: u16) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One raw counter value as stored in a counter block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A 4-byte value.
    U32(u32),
    /// An 8-byte value.
    U64(u64),
    /// A value of any other size (text, zero-size, unusual providers), kept as bytes.
    Bytes(ValueBytes),
}

/// The bytes of a [`Value::Bytes`]. Held through one thin pointer (none when empty), so a
/// [`Value`] takes 16 bytes rather than 24: snapshots hold tens of thousands of values, nearly all
/// integers. Reads as a byte slice (`Deref<Target = [u8]>`); made from a `Vec<u8>` or a slice.
#[derive(Clone, Default)]
// The box keeps the pointer thin (a `Vec` alone is three words): that is the point.
#[allow(clippy::box_collection)]
pub struct ValueBytes(Option<Box<Vec<u8>>>);

impl ValueBytes {
    /// No bytes.
    pub const fn new() -> ValueBytes {
        ValueBytes(None)
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The bytes, as a vector.
    pub fn into_vec(self) -> Vec<u8> {
        self.0.map(|b| *b).unwrap_or_default()
    }
}

impl std::ops::Deref for ValueBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<Vec<u8>> for ValueBytes {
    fn from(bytes: Vec<u8>) -> ValueBytes {
        ValueBytes((!bytes.is_empty()).then(|| Box::new(bytes)))
    }
}

impl From<&[u8]> for ValueBytes {
    fn from(bytes: &[u8]) -> ValueBytes {
        ValueBytes((!bytes.is_empty()).then(|| Box::new(bytes.to_vec())))
    }
}

impl PartialEq for ValueBytes {
    fn eq(&self, other: &ValueBytes) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ValueBytes {}

impl std::hash::Hash for ValueBytes {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl std::fmt::Debug for ValueBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl Value {
    /// The value as an integer, widened like PDH does; `None` for [`Value::Bytes`].
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::U32(v) => Some(i64::from(v)),
            Value::U64(v) => Some(v as i64),
            Value::Bytes(_) => None,
        }
    }

    /// The value as an unsigned integer; `None` for [`Value::Bytes`].
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U32(v) => Some(u64::from(v)),
            Value::U64(v) => Some(v),
            Value::Bytes(_) => None,
        }
    }
}

/// One counter definition of an object.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterDefinition {
    /// Title index of the name (`CounterNameTitleIndex`), or the V2 counter id.
    pub index: u32,
    /// The name, when known (from a name table or the source).
    pub name: Option<String>,
    /// Title index of the help text.
    pub help_index: u32,
    /// The counter type.
    pub counter_type: CounterType,
    /// Size of the value in bytes (`CounterSize`).
    pub size: u32,
    /// Offset of the value in the counter block (`CounterOffset`).
    pub offset: u32,
    /// Default scale, a power of ten (`DefaultScale`).
    pub scale: i32,
    /// Detail level (`PERF_DETAIL_NOVICE` = 100 …).
    pub detail_level: u32,
    /// Position in the same object's counter list of this counter's companion: the base of a fraction,
    /// the `PERF_PRECISION_TIMESTAMP` of a precision timer, or the `PERF_COUNTER_MULTI_BASE` count of a
    /// multi timer. `None` when the type needs none, or when the data lacks it.
    pub base: Option<usize>,
}

/// One instance of a multi-instance object.
///
/// The name, raw name, parent and values are read through accessors ([`Instance::name`],
/// [`Instance::raw_name`], [`Instance::parent`], [`Instance::values`]): the instances of one object
/// read from a source share one buffer of names and one of values, so an object of thousands of
/// instances costs a few allocations, not several per instance. Cloning an instance shares its
/// buffers; [`Instance::values_mut`] gives the instance a buffer of its own first. Equality, hashing
/// and `Debug` see only the fields' contents, never how they are stored.
#[derive(Clone)]
pub struct Instance {
    /// The names and values, possibly shared with other instances of the same object.
    store: Arc<Store>,
    /// [`Instance::name`] in `store.names`.
    name: Span,
    /// [`Instance::raw_name`] in `store.names`.
    raw_name: Span,
    /// [`Instance::parent`] in `store.names`, if any.
    parent: OptSpan,
    /// [`Instance::values`] in `store.values`; none: all of them.
    values: OptSpan,
    /// The duplicate index `n` of [`Instance::name`]: how many earlier instances of the same object
    /// have the same full name (`parent/raw_name`, compared ignoring case). 0 for the first, which
    /// has no `#n` suffix. Set by [`name_instances`].
    pub index: u32,
    /// Title index of the parent object (`ParentObjectTitleIndex`), 0 if none.
    pub parent_object: u32,
    /// Position of the parent in the parent object's instance list (`ParentObjectInstance`).
    pub parent_instance: u32,
    /// `UniqueID`; −1 (`PERF_NO_UNIQUE_ID`) when instances are identified by name.
    pub unique_id: i32,
}

/// The names and values of one or more instances; see [`Instance`].
#[derive(Clone, Debug, Default)]
struct Store {
    /// Names, raw names and parents, each a [`Span`] of it.
    names: String,
    /// Values, each instance's a [`Span`] of it.
    values: Vec<Value>,
}

/// A range of a buffer of names or values: a [`Store`]'s, or the names a query or a block reader
/// keeps one after the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: usize,
    end: usize,
}

/// An optional [`Span`] in the space of one (`start` = `usize::MAX` for none): an [`Instance`] has
/// two, and thousands of instances are made at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OptSpan(Span);

impl OptSpan {
    /// No span.
    const NONE: OptSpan = OptSpan(Span {
        start: usize::MAX,
        end: usize::MAX,
    });

    /// The span, if any.
    fn get(self) -> Option<Span> {
        (self.0.start != usize::MAX).then_some(self.0)
    }
}

impl From<Option<Span>> for OptSpan {
    fn from(span: Option<Span>) -> OptSpan {
        // A span never starts at `usize::MAX`: no buffer is that long.
        span.map_or(OptSpan::NONE, OptSpan)
    }
}

impl Span {
    /// The span from `start` to the end of `text`.
    pub(crate) fn since(start: usize, text: &str) -> Span {
        Span {
            start,
            end: text.len(),
        }
    }

    /// This span of `text` (empty if it does not lie on character boundaries of `text`, which the
    /// builders of [`Store`]s rule out).
    pub(crate) fn of(self, text: &str) -> &str {
        text.get(self.start..self.end).unwrap_or_default()
    }

    /// The span from `start` to `end`.
    fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
}

impl Instance {
    /// The name as PDH shows it: `parent/child` when the instance has a parent, and `#n` appended to
    /// the second and later instances with the same name (the first is unsuffixed). Set by
    /// [`name_instances`], which every source calls; [`Instance::new`] sets the raw name.
    pub fn name(&self) -> &str {
        self.name.of(&self.store.names)
    }

    /// The name exactly as the data gives it.
    pub fn raw_name(&self) -> &str {
        self.raw_name.of(&self.store.names)
    }

    /// The parent's name, when the instance has a parent.
    pub fn parent(&self) -> Option<&str> {
        Some(self.parent.get()?.of(&self.store.names))
    }

    /// The raw values, one per counter definition.
    pub fn values(&self) -> &[Value] {
        let all = &self.store.values[..];
        match self.values.get() {
            None => all,
            Some(span) => all.get(span.start..span.end).unwrap_or_default(),
        }
    }

    /// The raw values, to change: the instance first gets buffers of its own when it shares them.
    pub fn values_mut(&mut self) -> &mut Vec<Value> {
        if self.values.get().is_some() || Arc::get_mut(&mut self.store).is_none() {
            *self = self.detached();
        }
        // Unique by now: `make_mut` clones nothing.
        &mut Arc::make_mut(&mut self.store).values
    }

    /// The same instance in buffers of its own, holding only its names and values.
    fn detached(&self) -> Instance {
        let (name, raw_name) = (self.name(), self.raw_name());
        let mut names = String::with_capacity(name.len() + raw_name.len());
        names.push_str(raw_name);
        let raw = Span::since(0, &names);
        // The name usually ends with the raw name (`parent/raw#n`); else it gets its own copy.
        let name = if name == raw_name {
            raw
        } else {
            let start = names.len();
            names.push_str(name);
            Span::since(start, &names)
        };
        let parent = self.parent().map(|p| {
            let start = names.len();
            names.push_str(p);
            Span::since(start, &names)
        });
        Instance {
            store: Arc::new(Store {
                names,
                values: self.values().to_vec(),
            }),
            name,
            raw_name: raw,
            parent: parent.into(),
            values: OptSpan::NONE,
            ..*self
        }
    }

    /// An unnamed instance (its name is its raw name) with buffers of its own.
    pub(crate) fn from_parts(
        raw_name: String,
        parent: Option<&str>,
        values: Vec<Value>,
    ) -> Instance {
        let mut names = raw_name;
        let raw = Span::since(0, &names);
        let parent = parent.map(|p| {
            let start = names.len();
            names.push_str(p);
            Span::since(start, &names)
        });
        Instance {
            store: Arc::new(Store { names, values }),
            name: raw,
            raw_name: raw,
            parent: parent.into(),
            values: OptSpan::NONE,
            index: 0,
            parent_object: 0,
            parent_instance: 0,
            unique_id: -1,
        }
    }

    /// An instance named as a log recorded it: `parent/raw_name#index`, the name [`instance_name`]
    /// gives, with buffers of its own.
    pub(crate) fn recorded(
        raw_name: &str,
        parent: Option<&str>,
        index: u32,
        values: Vec<Value>,
    ) -> Instance {
        let mut names = String::with_capacity(
            parent.map_or(0, |p| p.len() + 1) + raw_name.len() + if index > 0 { 11 } else { 0 },
        );
        let parent = parent.map(|p| {
            names.push_str(p);
            let parent = Span::since(0, &names);
            names.push('/');
            parent
        });
        let raw_start = names.len();
        names.push_str(raw_name);
        let raw = Span::since(raw_start, &names);
        if index > 0 {
            let _ = write_index(&mut names, index);
        }
        Instance {
            name: Span::since(0, &names),
            raw_name: raw,
            parent: parent.into(),
            index,
            store: Arc::new(Store { names, values }),
            values: OptSpan::NONE,
            parent_object: 0,
            parent_instance: 0,
            unique_id: -1,
        }
    }

    /// The fields that equality, hashing and `Debug` compare, as values.
    #[allow(clippy::type_complexity)]
    fn key(&self) -> (&str, &str, Option<&str>, u32, u32, u32, i32, &[Value]) {
        (
            self.name(),
            self.raw_name(),
            self.parent(),
            self.index,
            self.parent_object,
            self.parent_instance,
            self.unique_id,
            self.values(),
        )
    }
}

impl PartialEq for Instance {
    fn eq(&self, other: &Instance) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Instance {}

impl std::hash::Hash for Instance {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("name", &self.name())
            .field("raw_name", &self.raw_name())
            .field("parent", &self.parent())
            .field("index", &self.index)
            .field("parent_object", &self.parent_object)
            .field("parent_instance", &self.parent_instance)
            .field("unique_id", &self.unique_id)
            .field("values", &self.values())
            .finish()
    }
}

impl Default for Instance {
    /// An instance with an empty name, no parent, no values and no unique id (−1).
    fn default() -> Instance {
        Instance::from_parts(String::new(), None, Vec::new())
    }
}

/// The data part of an object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ObjectData {
    /// A single-instance object (`NumInstances` = −1): one value per counter definition.
    Single(Vec<Value>),
    /// A multi-instance object (possibly with zero instances).
    Instances(Vec<Instance>),
    /// A metadata-only collection (`NumInstances` −2 or −3): definitions but no data.
    MetadataOnly {
        /// −2 (`PERF_METADATA_MULTIPLE_INSTANCES`) when true, −3 (`PERF_METADATA_NO_INSTANCES`) when false.
        multiple_instances: bool,
    },
}

/// One object (V1) or counterset (V2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Object {
    /// Title index of the object name (`ObjectNameTitleIndex`); 0 for V2 countersets.
    pub index: u32,
    /// The name, when known.
    pub name: Option<String>,
    /// Title index of the help text.
    pub help_index: u32,
    /// Detail level.
    pub detail_level: u32,
    /// `DefaultCounter`, −1 for none.
    pub default_counter: i32,
    /// `CodePage` of the instance names (0 = UTF-16).
    pub code_page: u32,
    /// The object's own clock (`PERF_OBJECT_TIMER` types).
    pub perf_time: i64,
    /// The object's clock frequency.
    pub perf_freq: i64,
    /// The clock of the collection this object was read in, when it is not the snapshot's: a V2
    /// counterset keeps the time stamps of its own `PERF_DATA_HEADER` when it is joined with the
    /// objects of a V1 block. `None`: the snapshot's clock ([`Snapshot::clock`]). Read it through
    /// [`Snapshot::clock_of`].
    pub sample_clock: Option<SampleClock>,
    /// Counter definitions in data order.
    pub counters: Vec<CounterDefinition>,
    /// Values.
    pub data: ObjectData,
}

/// The time stamps of one collection: the time base of tick and 100 ns counters. A snapshot has one
/// ([`Snapshot::clock`]), and an object that was read in another collection carries its own
/// ([`Object::sample_clock`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SampleClock {
    /// The performance counter (`PerfTime`, V2 `PerfTimeStamp`; QPC ticks on Windows).
    pub perf_time: i64,
    /// Its frequency (`PerfFreq`).
    pub perf_freq: i64,
    /// 100 ns time since 1601-01-01 UTC (`PerfTime100nSec`).
    pub perf_time_100ns: i64,
}

/// One collection from a source.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Snapshot {
    /// The computer the data came from.
    pub system_name: String,
    /// UTC wall-clock time of the collection.
    pub system_time: SystemTime,
    /// The performance counter (`PerfTime`, QPC ticks on Windows).
    pub perf_time: i64,
    /// Its frequency (`PerfFreq`).
    pub perf_freq: i64,
    /// 100 ns time since 1601-01-01 UTC (`PerfTime100nSec`).
    pub perf_time_100ns: i64,
    /// Objects in data order.
    pub objects: Vec<Object>,
}

impl Snapshot {
    /// The first object with this title index.
    pub fn object_by_index(&self, index: u32) -> Option<&Object> {
        self.objects.iter().find(|o| o.index == index)
    }

    /// The first object with this name (case-insensitive, like PDH: [`eq_ignore_case`]).
    pub fn object_by_name(&self, name: &str) -> Option<&Object> {
        self.objects
            .iter()
            .find(|o| o.name.as_deref().is_some_and(|n| eq_ignore_case(n, name)))
    }

    /// The clock of this snapshot's header: `perf_time`, `perf_freq` and `perf_time_100ns`.
    pub fn clock(&self) -> SampleClock {
        SampleClock {
            perf_time: self.perf_time,
            perf_freq: self.perf_freq,
            perf_time_100ns: self.perf_time_100ns,
        }
    }

    /// The clock that `object`'s tick and 100 ns counters were sampled against: its own
    /// [`Object::sample_clock`] when it has one, else the snapshot's [`Snapshot::clock`].
    pub fn clock_of(&self, object: &Object) -> SampleClock {
        object.sample_clock.unwrap_or_else(|| self.clock())
    }

    /// The time base F (ticks per second) of a counter type in an object of this snapshot:
    /// `PerfFreq` of the object's clock ([`Snapshot::clock_of`]) for tick timers, 10^7 for 100 ns
    /// timers, the object's frequency for object timers.
    pub fn time_base(&self, object: &Object, counter_type: CounterType) -> i64 {
        time_base(object, self.clock_of(object), counter_type)
    }

    /// Packs the raw sample of counter `counter` from `values` (an instance's values, or the single
    /// block) into a [`RawCounter`], the way PDH does for each type group:
    /// N, then the time stamp of the type's time base, or the base / precision time stamp / multi count
    /// from the linked companion counter. Time stamps come from the object's clock
    /// ([`Snapshot::clock_of`]). Returns `None` if the value itself is not numeric.
    pub fn raw_counter(
        &self,
        object: &Object,
        values: &[Value],
        counter: usize,
    ) -> Option<RawCounter> {
        self.raw_packer(object, counter)?.pack(values)
    }

    /// How [`Snapshot::raw_counter`] packs counter `counter` of `object`, decided once: a query reads
    /// the same counter from every instance of an object with one packer.
    pub(crate) fn raw_packer(&self, object: &Object, counter: usize) -> Option<RawPacker> {
        RawPacker::new(object, self.clock_of(object), counter)
    }
}

/// The time base F (ticks per second) of a counter type in `object`, whose tick and 100 ns counters
/// were sampled against `clock`: see [`Snapshot::time_base`].
pub(crate) fn time_base(object: &Object, clock: SampleClock, counter_type: CounterType) -> i64 {
    match counter_type.time_base() {
        TimeBase::Tick | TimeBase::Reserved => clock.perf_freq,
        TimeBase::Ns100 => FREQ_100NS,
        TimeBase::Object => object.perf_freq,
    }
}

/// Where [`RawPacker::pack`] takes the second value of a [`RawCounter`] from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Second {
    /// Nothing (one-value types, bases).
    Zero,
    /// The companion counter's value (fractions, precision timers), 0 without one.
    Companion,
    /// The packer's time stamp ([`RawPacker::stamp`]; the object's clock for elapsed times).
    Fixed,
    /// The packer's time stamp, and the companion's value as the multi count (multi timers).
    TimeAndMultiCount,
}

impl Second {
    /// Every source, each at the index `second as usize`.
    pub(crate) const ALL: [Second; 4] = {
        use Second::*;
        let all = [Zero, Companion, Fixed, TimeAndMultiCount];
        let mut i = 0;
        while i < all.len() {
            assert!(all[i] as usize == i, "Second::ALL is in declaration order");
            i += 1;
        }
        all
    };
}

/// Packs the values of one counter of one object into [`RawCounter`]s; see
/// [`Snapshot::raw_counter`]. `F` says where the counter and its companion are in each instance's
/// values: their positions (as [`RawPacker::new`] makes it), or what [`RawPacker::with_fields`]
/// resolved them to once for every instance of the object.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawPacker<F = usize> {
    counter: F,
    /// `None`: no companion counter (or none that the values hold), read as 0.
    companion: Option<F>,
    second: Second,
    /// The time stamp of [`Second::Fixed`] and [`Second::TimeAndMultiCount`].
    stamp: i64,
    time: i64,
}

/// The raw values of one instance (or of a single-instance object), as [`RawPacker::pack`] reads
/// them: owned [`Value`]s, or a counter block read in place.
pub(crate) trait RawValues: Copy {
    /// Where one counter's value is in the values of every instance of an object: a position, or
    /// a field of the counter block resolved once per object.
    type Field: Copy;
    /// The value at `field` as an integer ([`Value::as_i64`]); `None` when it is missing or not
    /// numeric.
    fn int(self, field: Self::Field) -> Option<i64>;

    /// How `field` is read, for [`RawValues::int_as`]: values whose fields come in several kinds
    /// (widths, byte orders) say which, from 1 to 4; 0 for the others (read by [`RawValues::int`]).
    #[inline(always)]
    fn kind(_field: Self::Field) -> u8 {
        0
    }

    /// [`RawValues::int`] for a field of kind `KIND` (what [`RawValues::kind`] said of it): a
    /// loop over many values of one field, compiled for its kind, then reads each without
    /// deciding how.
    #[inline(always)]
    fn int_as<const KIND: u8>(self, field: Self::Field) -> Option<i64> {
        self.int(field)
    }
}

impl RawValues for &[Value] {
    type Field = usize;

    #[inline]
    fn int(self, counter: usize) -> Option<i64> {
        self.get(counter)?.as_i64()
    }
}

impl RawPacker {
    /// How counter `counter` of `object` is packed when its tick and 100 ns counters were sampled
    /// against `clock` (the object's [`Snapshot::clock_of`]); `None` without that counter.
    pub(crate) fn new(object: &Object, clock: SampleClock, counter: usize) -> Option<RawPacker> {
        let def = object.counters.get(counter)?;
        let ty = def.counter_type;
        let time_stamp = match ty.time_base() {
            TimeBase::Tick | TimeBase::Reserved => clock.perf_time,
            TimeBase::Ns100 => clock.perf_time_100ns,
            TimeBase::Object => object.perf_time,
        };
        use crate::counter_type::{Subtype, TypeField};
        let (second, stamp) = if ty.kind() != TypeField::Counter || ty.is_base() {
            (Second::Zero, 0)
        } else {
            match ty.subtype() {
                Subtype::CounterFraction | Subtype::CounterPrecision => (Second::Companion, 0),
                Subtype::CounterElapsed => (Second::Fixed, object.perf_time),
                Subtype::CounterValue => (Second::Zero, 0),
                _ if ty.is_multi() => (Second::TimeAndMultiCount, time_stamp),
                _ => (Second::Fixed, time_stamp),
            }
        };
        Some(RawPacker {
            counter,
            companion: def.base,
            second,
            stamp,
            time: clock.perf_time_100ns,
        })
    }

    /// The same packer reading the counter and its companion at `field(position)` of every
    /// instance's values.
    pub(crate) fn with_fields<F>(self, field: impl Fn(usize) -> F) -> RawPacker<F> {
        RawPacker {
            counter: field(self.counter),
            companion: self.companion.map(&field),
            second: self.second,
            stamp: self.stamp,
            time: self.time,
        }
    }
}

impl<F: Copy> RawPacker<F> {
    /// Where the counter's own value is read.
    #[inline(always)]
    pub(crate) fn counter(&self) -> F {
        self.counter
    }

    /// The sample's `TimeStamp`, the same for every instance.
    #[inline(always)]
    pub(crate) fn time(&self) -> i64 {
        self.time
    }

    /// Where the sample's second value comes from.
    #[inline(always)]
    pub(crate) fn second(&self) -> Second {
        self.second
    }

    /// The raw sample of this counter in `values` (an instance's values, or the single block);
    /// `None` if the value is missing or not numeric.
    #[inline(always)]
    pub(crate) fn pack<V: RawValues<Field = F>>(&self, values: V) -> Option<RawCounter> {
        self.pack_as::<V, 0>(values, self.second)
    }

    /// [`RawPacker::pack`] with the counter's field read as kind `KIND` ([`RawValues::kind`])
    /// and `second` equal to [`RawPacker::second`]: a loop over many instances passes both as
    /// constants, and each inlined copy then packs without deciding how.
    #[inline(always)]
    pub(crate) fn pack_as<V: RawValues<Field = F>, const KIND: u8>(
        &self,
        values: V,
        second: Second,
    ) -> Option<RawCounter> {
        debug_assert_eq!(second, self.second);
        let n = if KIND == 0 {
            values.int(self.counter)?
        } else {
            values.int_as::<KIND>(self.counter)?
        };
        let companion = || self.companion.and_then(|b| values.int(b));
        let mut raw = RawCounter::new(n, 0).with_time(self.time);
        match second {
            Second::Zero => {}
            Second::Companion => raw.second = companion().unwrap_or(0),
            Second::Fixed => raw.second = self.stamp,
            Second::TimeAndMultiCount => {
                raw.second = self.stamp;
                raw.multi_count = companion().map_or(0, |b| b as u32);
            }
        }
        Some(raw)
    }
}

impl Object {
    /// The position of the first counter with this title index.
    pub fn counter_position(&self, index: u32) -> Option<usize> {
        self.counters.iter().position(|c| c.index == index)
    }

    /// The position of the first counter with this name (case-insensitive), skipping base
    /// counters that reuse their numerator's name.
    pub fn counter_position_by_name(&self, name: &str) -> Option<usize> {
        self.counters.iter().position(|c| {
            !c.counter_type.is_base() && c.name.as_deref().is_some_and(|n| eq_ignore_case(n, name))
        })
    }

    /// The instances, empty for single-instance and metadata-only objects.
    pub fn instances(&self) -> &[Instance] {
        match &self.data {
            ObjectData::Instances(v) => v,
            _ => &[],
        }
    }
}

/// Names the instances of one object as PDH shows them, from each instance's `raw_name` and
/// `parent`: sets [`Instance::name`] and [`Instance::index`]. Every source calls it, so the names of
/// an instance list do not depend on where it came from.
///
/// 1. The full name is `parent/raw_name` when the instance has a parent, else `raw_name`.
/// 2. Instances with the same full name are numbered in data order: the first keeps the full name
///    (index 0), the second gets `#1`, the third `#2`, and so on.
/// 3. Full names are compared **ignoring case** ([`crate::path::eq_ignore_case`]), as PDH finds
///    instances (`lstrcmpiW`) and as .NET numbers them (`OrdinalIgnoreCase`): `A` and `a` are two
///    occurrences of one name, `A` and `a#1`. Each name keeps its own spelling.
///
/// ```
/// # use perfcounters::snapshot::{name_instances, Instance};
/// let inst = |parent: Option<&str>, raw: &str| match parent {
///     Some(p) => Instance::new(raw, vec![]).with_parent(p),
///     None => Instance::new(raw, vec![]),
/// };
/// let mut list = vec![
///     inst(None, "svchost"), inst(None, "SVCHOST"), inst(None, "svchost"),
///     inst(Some("explorer"), "0"), inst(Some("Explorer"), "0"), inst(Some("explorer"), "1"),
/// ];
/// name_instances(&mut list);
/// let names: Vec<_> = list.iter().map(|i| (i.name(), i.index)).collect();
/// assert_eq!(names, [
///     ("svchost", 0), ("SVCHOST#1", 1), ("svchost#2", 2),
///     ("explorer/0", 0), ("Explorer/0#1", 1), ("explorer/1", 0),
/// ]);
/// ```
pub fn name_instances(instances: &mut [Instance]) {
    let named = NamedList::new(instances.iter().map(|i| (i.parent(), i.raw_name())));
    named.rename(instances);
}

/// The names [`name_instances`] gives a list of instances: each full name (`parent/raw_name`) in
/// one buffer, with the parent and raw name as parts of it, and its duplicate index (`#n`, written
/// when the instances are made).
pub(crate) struct NamedList {
    names: String,
    spans: Vec<NameSpans>,
}

/// The hasher of full names in [`NamedList::new`]: the names come from untrusted data, so it
/// is seeded at random per map (foldhash's `RandomState`: a per-process random seed and a
/// per-map one), which keeps colliding names from being chosen in advance. Against SipHash-1-3
/// (std's `RandomState`) it cut the instructions of naming the 5,500 instances of the
/// `v1_global` bench block by a quarter (callgrind: 4.5 M → 3.5 M per block).
type NameHasher = foldhash::fast::RandomState;

/// Where one instance's names lie in [`NamedList::names`]: the full name `parent/raw_name`, the
/// raw name from `raw_start` to its end, the parent (if any) from its start to `raw_start - 1`.
#[derive(Clone, Copy, Debug)]
struct NameSpans {
    name: Span,
    raw_start: usize,
    index: u32,
    has_parent: bool,
}

impl NamedList {
    /// Names the instances with these parents and raw names, in data order, by the rule of
    /// [`name_instances`].
    pub(crate) fn new<'a>(list: impl Iterator<Item = (Option<&'a str>, &'a str)>) -> NamedList {
        // The full names, `parent/raw_name`, one after the other.
        let count = list.size_hint().0;
        let mut full = String::with_capacity(count.saturating_mul(16));
        let mut spans = Vec::with_capacity(count);
        for (parent, raw) in list {
            let start = full.len();
            if let Some(parent) = parent {
                full.push_str(parent);
                full.push('/');
            }
            let raw_start = full.len();
            full.push_str(raw);
            spans.push(NameSpans {
                name: Span::since(start, &full),
                raw_start,
                index: 0,
                has_parent: parent.is_some(),
            });
        }
        // Duplicate indexes: occurrences so far of each full name, compared ignoring case. Names
        // repeat mostly with the same spelling: each spelling is looked up as it is first, and
        // folded only the first time it occurs.
        // Sized for the usual few distinct spellings, not one per instance: a small table stays in
        // the cache, and grows when the names are many.
        let mut spellings: HashMap<&str, u32, NameHasher> =
            HashMap::with_capacity_and_hasher(spans.len().min(256), NameHasher::default());
        let mut folded: HashMap<Folded<'_>, u32, NameHasher> = HashMap::default();
        let mut counts: Vec<u32> = Vec::new();
        for s in &mut spans {
            let name = s.name.of(&full);
            let class = *spellings.entry(name).or_insert_with(|| {
                let next = u32::try_from(counts.len()).unwrap_or(u32::MAX);
                *folded.entry(Folded(name)).or_insert_with(|| {
                    counts.push(0);
                    next
                })
            });
            if let Some(count) = counts.get_mut(class as usize) {
                s.index = *count;
                *count = count.saturating_add(1);
            }
        }
        drop((spellings, folded));
        NamedList { names: full, spans }
    }

    /// The raw names in `names` at `raw_names`, unnamed: each name is the raw name, with no parent
    /// and index 0.
    pub(crate) fn unnamed(names: String, raw_names: Vec<std::ops::Range<usize>>) -> NamedList {
        let spans = raw_names
            .into_iter()
            .map(|r| {
                let raw = Span {
                    start: r.start,
                    end: r.end,
                };
                NameSpans {
                    name: raw,
                    raw_start: raw.start,
                    index: 0,
                    has_parent: false,
                }
            })
            .collect();
        NamedList { names, spans }
    }

    /// New instances with these names and the values in `values` (pushed in the same order);
    /// `ids` gives, in order, each instance's parent object, parent position and unique id. The
    /// instances of one chunk of `values` share one buffer of names and one of values.
    pub(crate) fn instances(
        self,
        values: ValueChunks,
        mut ids: impl Iterator<Item = (u32, u32, i32)>,
    ) -> Vec<Instance> {
        let mut instances = Vec::with_capacity(self.spans.len());
        let mut spans = self.spans.as_slice();
        let mut ranges = values.ranges.iter();
        // Each chunk's names and spans, in one list reused from chunk to chunk.
        let mut named = Vec::new();
        for (count, values) in values.chunks {
            let (chunk, rest) = spans.split_at(count.min(spans.len()));
            spans = rest;
            // The chunk's names, each full name followed by its `#n`: at most 11 bytes each.
            let len = chunk.iter().fold(0usize, |n, s| {
                n.saturating_add(s.name.end - s.name.start)
                    .saturating_add(if s.index > 0 { 11 } else { 0 })
            });
            let mut names = String::with_capacity(len);
            named.clear();
            for s in chunk {
                let at = names.len();
                names.push_str(s.name.of(&self.names));
                if s.index > 0 {
                    // The name is built as `instance_name` builds it: the full name, then `#n`.
                    let _ = write_index(&mut names, s.index);
                }
                // From `self.names` to `names`.
                let moved = |span: Span| Span {
                    start: span.start - s.name.start + at,
                    end: span.end - s.name.start + at,
                };
                named.push((
                    Span::since(at, &names),
                    moved(Span::new(s.raw_start, s.name.end)),
                    s.has_parent
                        .then(|| moved(Span::new(s.name.start, s.raw_start - 1))),
                    s.index,
                ));
            }
            let store = Arc::new(Store { names, values });
            for (&(name, raw_name, parent, index), range) in named.iter().zip(ranges.by_ref()) {
                let (parent_object, parent_instance, unique_id) = ids.next().unwrap_or((0, 0, -1));
                instances.push(Instance {
                    store: Arc::clone(&store),
                    name,
                    raw_name,
                    parent: parent.into(),
                    values: OptSpan(*range),
                    index,
                    parent_object,
                    parent_instance,
                    unique_id,
                });
            }
        }
        instances
    }

    /// Gives `instances` (the list this was made from, in the same order) these names and
    /// indexes; their values move to shared buffers.
    pub(crate) fn rename(self, instances: &mut [Instance]) {
        let mut values = ValueChunks::new(instances.len());
        for inst in instances.iter_mut() {
            match Arc::get_mut(&mut inst.store) {
                Some(store) if inst.values.get().is_none() => values.push(store.values.drain(..)),
                _ => values.push(inst.values().iter().cloned()),
            }
        }
        let ids: Vec<(u32, u32, i32)> = instances
            .iter()
            .map(|i| (i.parent_object, i.parent_instance, i.unique_id))
            .collect();
        let renamed = self.instances(values, ids.into_iter());
        for (inst, new) in instances.iter_mut().zip(renamed) {
            *inst = new;
        }
    }
}

/// The values of a list of instances, in chunks of about [`ValueChunks::CHUNK`] values: each chunk
/// becomes the values buffer the chunk's instances share. Large objects thus take many buffers of
/// a few kilobytes rather than one of megabytes, which the allocator would map and unmap.
pub(crate) struct ValueChunks {
    /// Full chunks: the number of instances and their values.
    chunks: Vec<(usize, Vec<Value>)>,
    /// Each instance's values in its chunk.
    ranges: Vec<Span>,
}

impl ValueChunks {
    /// Values per chunk, unless one instance has more: 8 KiB of values. With 32 KiB chunks, the
    /// chunks freed together with a snapshot merged into blocks large enough for glibc to give
    /// the heap back to the system and fault it in again for the next snapshot, which made
    /// `v1/to_snapshot` (a fresh process) 30 % slower than before sharing; with 8 KiB it does not.
    const CHUNK: usize = 512;

    /// Chunks for about `instances` instances.
    pub(crate) fn new(instances: usize) -> ValueChunks {
        ValueChunks {
            chunks: Vec::new(),
            ranges: Vec::with_capacity(instances),
        }
    }

    /// The next instance's values.
    // Inlined into the loop over an object's instances (once per instance): 8.67 M → 8.49 M
    // instructions per snapshot of the `v1_global` bench block, 441 → 428 µs in alternated runs.
    #[inline]
    pub(crate) fn push(&mut self, values: impl ExactSizeIterator<Item = Value>) {
        let n = values.len();
        let fits = self
            .chunks
            .last()
            .is_some_and(|(_, c)| c.len() + n <= c.capacity().max(Self::CHUNK));
        if !fits {
            self.chunks
                .push((0, Vec::with_capacity(Self::CHUNK.max(n))));
        }
        if let Some((count, chunk)) = self.chunks.last_mut() {
            let start = chunk.len();
            chunk.extend(values);
            *count += 1;
            self.ranges.push(Span::new(start, chunk.len()));
        }
    }
}

/// The name [`name_instances`] gives the instance with this parent, raw name and duplicate index:
/// `parent/raw_name#index`, without the parent when there is none and without `#0`.
pub fn instance_name(parent: Option<&str>, raw_name: &str, index: u32) -> String {
    format_instance(parent, raw_name, (index > 0).then_some(index))
}

/// Links each counter that needs a companion to the definition right after it, as V1 data lays them
/// out: a base follows its fraction (matched by type, not by name, since real blocks reuse the
/// numerator's name index), a `PERF_PRECISION_TIMESTAMP` follows its precision timer, and a
/// `PERF_COUNTER_MULTI_BASE` follows its multi timer. Counters whose follower is not a base keep
/// `base = None`.
pub fn pair_bases_by_position(counters: &mut [CounterDefinition]) {
    for i in 0..counters.len() {
        let ty = counters[i].counter_type;
        counters[i].base = None;
        if ty.needs_base() {
            if let Some(next) = counters.get(i + 1) {
                if next.counter_type.is_base() {
                    counters[i].base = Some(i + 1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetime_to_calendar() {
        // 2020-03-18 18:54:03.988 UTC, a Wednesday (the sample block's PerfTime100nSec).
        let t = SystemTime::from_filetime(132290312439883752);
        assert_eq!(
            t,
            SystemTime {
                year: 2020,
                month: 3,
                day_of_week: 3,
                day: 18,
                hour: 18,
                minute: 54,
                second: 3,
                milliseconds: 988
            }
        );
        let epoch = SystemTime::from_filetime(FILETIME_UNIX_EPOCH);
        assert_eq!(
            (epoch.year, epoch.month, epoch.day, epoch.day_of_week),
            (1970, 1, 1, 4)
        );
        let t = SystemTime::from_filetime(0);
        assert_eq!((t.year, t.month, t.day, t.day_of_week), (1601, 1, 1, 1));
        let t = SystemTime::from_filetime(i64::MAX);
        assert_eq!(t.year, 30828);
    }

    #[test]
    fn filetime_to_unix_time() {
        assert_eq!(unix_time_from_filetime(FILETIME_UNIX_EPOCH), (0, 0));
        // 2020-03-18 18:54:03.9883752 UTC.
        assert_eq!(
            unix_time_from_filetime(132290312439883752),
            (1_584_557_643, 988_375_200)
        );
        // 100 ns before the epoch.
        assert_eq!(
            unix_time_from_filetime(FILETIME_UNIX_EPOCH - 1),
            (-1, 999_999_900)
        );
        assert_eq!(unix_time_from_filetime(0), (-11_644_473_600, 0));
        assert_eq!(unix_millis_from_filetime(FILETIME_UNIX_EPOCH), 0);
        assert_eq!(
            unix_millis_from_filetime(132290312439883752),
            1_584_557_643_988
        );
        assert_eq!(unix_millis_from_filetime(FILETIME_UNIX_EPOCH - 1), -1);
        assert_eq!(unix_millis_from_filetime(0), -11_644_473_600_000);
        assert_eq!(
            unix_millis_from_filetime(i64::MIN),
            i64::MIN.div_euclid(10_000)
        );
    }

    #[test]
    fn calendar_to_filetime() {
        for ft in [
            0i64,
            132290312439883752,
            116_444_736_000_000_000,
            130058022178440000,
        ] {
            let t = SystemTime::from_filetime(ft);
            assert_eq!(t.to_filetime(), Some(ft - ft % 10_000), "{t:?}");
        }
        let leap = SystemTime {
            year: 2024,
            month: 2,
            day: 29,
            ..Default::default()
        };
        assert!(leap.to_filetime().is_some());
        for bad in [
            SystemTime {
                year: 2023,
                month: 2,
                day: 29,
                ..Default::default()
            },
            SystemTime {
                year: 2023,
                month: 13,
                day: 1,
                ..Default::default()
            },
            SystemTime {
                year: 1600,
                month: 1,
                day: 1,
                ..Default::default()
            },
            SystemTime {
                year: 2023,
                month: 1,
                day: 1,
                hour: 24,
                ..Default::default()
            },
        ] {
            assert_eq!(bad.to_filetime(), None, "{bad:?}");
        }
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
    }

    /// One instance's name, raw name, parent, index and values.
    type Contents = (String, String, Option<String>, u32, Vec<Value>);

    /// The names and values of every instance, read through the accessors.
    fn contents(list: &[Instance]) -> Vec<Contents> {
        list.iter()
            .map(|i| {
                (
                    i.name().to_owned(),
                    i.raw_name().to_owned(),
                    i.parent().map(str::to_owned),
                    i.index,
                    i.values().to_vec(),
                )
            })
            .collect()
    }

    #[test]
    fn accessors_keep_hostile_names_apart() {
        // Raw names and parents holding `/` and `#`, empty names, non-ASCII and case-only
        // differences: the parts come back exactly as given, whatever the full name looks like.
        let list = [
            (Some("a/b"), "c#1"),
            (Some("A/B"), "C#1"),
            (Some("a"), "b/c#1"),
            (None, "a/b/c#1"),
            (Some(""), ""),
            (None, ""),
            (Some("\u{c9}T\u{c9}"), "\u{4e2d}"),
            (Some("\u{e9}t\u{e9}"), "\u{4e2d}"),
        ];
        let mut instances: Vec<Instance> = list
            .iter()
            .enumerate()
            .map(|(n, &(parent, raw))| {
                let inst = Instance::new(raw, vec![Value::U32(n as u32)]);
                match parent {
                    Some(p) => inst.with_parent(p),
                    None => inst,
                }
            })
            .collect();
        name_instances(&mut instances);
        let got: Vec<(&str, &str, Option<&str>, u32)> = instances
            .iter()
            .map(|i| (i.name(), i.raw_name(), i.parent(), i.index))
            .collect();
        // `a/b/c#1` four times over (compared ignoring case), in three different splits.
        assert_eq!(
            got,
            [
                ("a/b/c#1", "c#1", Some("a/b"), 0),
                ("A/B/C#1#1", "C#1", Some("A/B"), 1),
                ("a/b/c#1#2", "b/c#1", Some("a"), 2),
                ("a/b/c#1#3", "a/b/c#1", None, 3),
                ("/", "", Some(""), 0),
                ("", "", None, 0),
                (
                    "\u{c9}T\u{c9}/\u{4e2d}",
                    "\u{4e2d}",
                    Some("\u{c9}T\u{c9}"),
                    0
                ),
                (
                    "\u{e9}t\u{e9}/\u{4e2d}#1",
                    "\u{4e2d}",
                    Some("\u{e9}t\u{e9}"),
                    1
                ),
            ]
        );
        for (n, inst) in instances.iter().enumerate() {
            assert_eq!(inst.values(), [Value::U32(n as u32)]);
            assert_eq!(*inst, instance_built(inst));
        }
    }

    /// The same instance built alone, with buffers of its own.
    fn instance_built(inst: &Instance) -> Instance {
        let mut built = Instance::recorded(
            inst.raw_name(),
            inst.parent(),
            inst.index,
            inst.values().to_vec(),
        );
        built.unique_id = inst.unique_id;
        built
    }

    #[test]
    fn equality_hash_and_debug_see_contents_not_storage() {
        use std::hash::BuildHasher;
        let mut list = vec![
            Instance::new(
                "svchost",
                vec![Value::U32(1), Value::Bytes(vec![1, 2].into())],
            ),
            Instance::new("svchost", vec![Value::U64(2)]).with_unique_id(7),
        ];
        name_instances(&mut list);
        // Shared buffers against buffers of its own: equal, same hash, same `Debug`.
        let alone = instance_built(&list[1]);
        assert_eq!(list[1], alone);
        let state = std::collections::hash_map::RandomState::new();
        assert_eq!(state.hash_one(&list[1]), state.hash_one(&alone));
        assert_eq!(format!("{:?}", list[1]), format!("{alone:?}"));
        assert_eq!(
            format!("{:?}", list[1]),
            "Instance { name: \"svchost#1\", raw_name: \"svchost\", parent: None, index: 1, \
             parent_object: 0, parent_instance: 0, unique_id: 7, values: [U64(2)] }"
        );
        assert_ne!(list[0], list[1]);
        assert_ne!(
            list[1],
            Instance {
                index: 0,
                ..alone.clone()
            }
        );
    }

    #[test]
    fn value_bytes_are_a_thin_byte_slice() {
        use std::hash::BuildHasher;
        assert_eq!(std::mem::size_of::<Value>(), 16);
        let empty = ValueBytes::from(Vec::new());
        assert_eq!(empty, ValueBytes::new());
        assert_eq!(ValueBytes::from(&[][..]), ValueBytes::default());
        let state = std::collections::hash_map::RandomState::new();
        assert_eq!(state.hash_one(&empty), state.hash_one(ValueBytes::new()));
        let b = ValueBytes::from(vec![1u8, 2, 3]);
        assert_eq!((b.len(), &b[1..]), (3, &[2u8, 3][..]));
        assert_eq!(b, ValueBytes::from(&[1u8, 2, 3][..]));
        assert_ne!(b, empty);
        assert_eq!(format!("{:?}", Value::Bytes(b.clone())), "Bytes([1, 2, 3])");
        assert_eq!(b.into_vec(), [1, 2, 3]);
        assert_eq!(empty.into_vec(), Vec::<u8>::new());
    }

    #[test]
    fn values_mut_detaches_a_shared_instance() {
        let mut list: Vec<Instance> = (0..3)
            .map(|n| Instance::new("w", vec![Value::U32(n), Value::U32(10 + n)]))
            .collect();
        name_instances(&mut list);
        let before = contents(&list);
        let mut copy = list[1].clone();
        copy.values_mut().push(Value::U64(99));
        copy.values_mut()[0] = Value::U32(5);
        // The copy changed alone; its names came along.
        assert_eq!(contents(&list), before);
        assert_eq!(copy.name(), "w#1");
        assert_eq!(copy.raw_name(), "w");
        assert_eq!(
            copy.values(),
            [Value::U32(5), Value::U32(11), Value::U64(99)]
        );
        // An instance in the list changes in place, its neighbours keep their values.
        list[2].values_mut().clear();
        assert_eq!(list[2].values(), []);
        assert_eq!(contents(&list)[..2], before[..2]);
        // Renaming moves every value along.
        list.swap(0, 2);
        name_instances(&mut list);
        let names: Vec<(&str, u32, usize)> = list
            .iter()
            .map(|i| (i.name(), i.index, i.values().len()))
            .collect();
        assert_eq!(names, [("w", 0, 0), ("w#1", 1, 2), ("w#2", 2, 2)]);
        assert_eq!(list[2].values(), [Value::U32(0), Value::U32(10)]);
    }

    #[test]
    fn instances_across_value_chunks() {
        // More values than one chunk holds: names, parents and values stay with their instance.
        let per = 7usize;
        let n = 3 * ValueChunks::CHUNK / per + 5;
        let mut list: Vec<Instance> = (0..n)
            .map(|i| {
                let values = (0..per).map(|c| Value::U64((i * per + c) as u64)).collect();
                Instance::new(if i % 2 == 0 { "Even" } else { "odd" }, values)
                    .with_parent(format!("p{}", i % 3))
            })
            .collect();
        name_instances(&mut list);
        for (i, inst) in list.iter().enumerate() {
            let raw = if i % 2 == 0 { "Even" } else { "odd" };
            // Full name `p{i%3}/raw` recurs every 6 instances.
            let index = (i / 6) as u32;
            assert_eq!(
                inst.name(),
                instance_name(Some(&format!("p{}", i % 3)), raw, index)
            );
            assert_eq!((inst.raw_name(), inst.index), (raw, index));
            let values: Vec<Value> = (0..per).map(|c| Value::U64((i * per + c) as u64)).collect();
            assert_eq!(inst.values(), values);
        }
    }

    #[test]
    fn pairs_bases_by_position() {
        let mut defs = vec![
            CounterDefinition::new(1350, CounterType::PERF_RAW_FRACTION),
            CounterDefinition::new(1350, CounterType::PERF_RAW_BASE),
            CounterDefinition::new(6, CounterType::PERF_100NSEC_TIMER_INV),
            CounterDefinition::new(10, CounterType::PERF_PRECISION_100NS_TIMER),
            CounterDefinition::new(11, CounterType::PERF_PRECISION_TIMESTAMP),
            CounterDefinition::new(12, CounterType::PERF_100NSEC_MULTI_TIMER),
            CounterDefinition::new(13, CounterType::PERF_COUNTER_MULTI_BASE),
            CounterDefinition::new(14, CounterType::PERF_AVERAGE_TIMER),
        ];
        pair_bases_by_position(&mut defs);
        let bases: Vec<Option<usize>> = defs.iter().map(|d| d.base).collect();
        assert_eq!(
            bases,
            [Some(1), None, None, Some(4), None, Some(6), None, None]
        );
    }

    #[test]
    fn packs_raw_counters_like_pdh() {
        let object = Object {
            data: ObjectData::MetadataOnly {
                multiple_instances: false,
            },
            ..Object::new(2)
                .named("System")
                .with_object_clock(132290312439883752, 10_000_000)
                .with_counters(vec![
                    CounterDefinition::new(674, CounterType::PERF_ELAPSED_TIME),
                    CounterDefinition::new(6, CounterType::PERF_100NSEC_TIMER_INV),
                    CounterDefinition::new(10, CounterType::PERF_COUNTER_COUNTER),
                    CounterDefinition::new(1350, CounterType::PERF_RAW_FRACTION),
                    CounterDefinition::new(1350, CounterType::PERF_RAW_BASE),
                    CounterDefinition::new(12, CounterType::PERF_COUNTER_MULTI_TIMER),
                    CounterDefinition::new(13, CounterType::PERF_COUNTER_MULTI_BASE),
                    CounterDefinition::new(44, CounterType::PERF_COUNTER_RAWCOUNT),
                    CounterDefinition::new(50, CounterType::PERF_OBJ_TIME_TIMER),
                ])
        };
        let snap = Snapshot {
            perf_time: 5_000,
            perf_freq: 3_000_000,
            perf_time_100ns: 132290312439883000,
            ..Default::default()
        };
        let values = vec![
            Value::U64(132289457285000000),
            Value::U64(900),
            Value::U32(77),
            Value::U32(25),
            Value::U32(200),
            Value::U64(40),
            Value::U64(4),
            Value::U32(3),
            Value::U64(8),
        ];
        let r = |i| snap.raw_counter(&object, &values, i).unwrap();
        let t = snap.perf_time_100ns;
        assert_eq!(
            r(0),
            RawCounter::new(132289457285000000, 132290312439883752).with_time(t)
        );
        assert_eq!(r(1), RawCounter::new(900, 132290312439883000).with_time(t));
        assert_eq!(r(2), RawCounter::new(77, 5_000).with_time(t));
        assert_eq!(r(3), RawCounter::new(25, 200).with_time(t));
        assert_eq!(r(4), RawCounter::new(200, 0).with_time(t));
        assert_eq!(r(5), RawCounter::new(40, 5_000).with_multi(4).with_time(t));
        assert_eq!(r(7), RawCounter::new(3, 0).with_time(t));
        assert_eq!(r(8), RawCounter::new(8, 132290312439883752).with_time(t));
        assert_eq!(
            snap.time_base(&object, CounterType::PERF_COUNTER_COUNTER),
            3_000_000
        );
        assert_eq!(
            snap.time_base(&object, CounterType::PERF_100NSEC_TIMER),
            FREQ_100NS
        );
        assert_eq!(
            snap.time_base(&object, CounterType::PERF_ELAPSED_TIME),
            10_000_000
        );
        assert_eq!(snap.raw_counter(&object, &values, 99), None);

        // An object with its own sample clock takes its tick and 100 ns time stamps from it; object
        // timers keep the object's clock.
        let own = SampleClock {
            perf_time: 777,
            perf_freq: 2_000_000,
            perf_time_100ns: 132290312439880000,
        };
        let object = Object {
            sample_clock: Some(own),
            ..object
        };
        assert_eq!(snap.clock_of(&object), own);
        let r = |i| snap.raw_counter(&object, &values, i).unwrap();
        let t = own.perf_time_100ns;
        assert_eq!(r(1), RawCounter::new(900, t).with_time(t));
        assert_eq!(r(2), RawCounter::new(77, 777).with_time(t));
        assert_eq!(r(5), RawCounter::new(40, 777).with_multi(4).with_time(t));
        assert_eq!(r(8), RawCounter::new(8, 132290312439883752).with_time(t));
        assert_eq!(
            snap.time_base(&object, CounterType::PERF_COUNTER_COUNTER),
            2_000_000
        );
        assert_eq!(
            snap.time_base(&object, CounterType::PERF_ELAPSED_TIME),
            10_000_000
        );
    }
}
