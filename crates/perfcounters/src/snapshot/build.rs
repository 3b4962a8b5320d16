//! Building snapshots by hand: constructors and `with_*` methods of the model types, for tests,
//! benchmarks and examples. Sources fill the fields from their data instead.

use super::{
    name_instances, pair_bases_by_position, CounterDefinition, Instance, Object, ObjectData,
    SampleClock, Snapshot, SystemTime, Value,
};
use crate::counter_type::CounterType;

/// `PERF_DETAIL_NOVICE`: the detail level of counters and objects built by hand.
const DETAIL_NOVICE: u32 = 100;

/// The help title index that goes with a name title index: the next one, as the name tables pair
/// them; none (0) for an object or counter without a name index.
fn help_of(index: u32) -> u32 {
    if index == 0 {
        0
    } else {
        index.wrapping_add(1)
    }
}

impl CounterDefinition {
    /// A counter with title index `index` (0 for none) and type `counter_type`: help index
    /// `index + 1`, the type's size (8 bytes for variable-length types), novice detail level, scale
    /// 0, offset 0 (the V1 encoder lays the values out itself when offsets do not fit), no base and
    /// no name. Set other fields with the `with_*` methods or struct update syntax.
    ///
    /// ```
    /// # use perfcounters::snapshot::CounterDefinition;
    /// # use perfcounters::CounterType;
    /// let c = CounterDefinition::new(6, CounterType::PERF_100NSEC_TIMER_INV).named("% Processor Time");
    /// assert_eq!((c.help_index, c.size, c.detail_level), (7, 8, 100));
    /// assert_eq!(c.name.as_deref(), Some("% Processor Time"));
    /// ```
    pub fn new(index: u32, counter_type: CounterType) -> CounterDefinition {
        CounterDefinition {
            index,
            name: None,
            help_index: help_of(index),
            counter_type,
            size: counter_type.nominal_size().unwrap_or(8),
            offset: 0,
            scale: 0,
            detail_level: DETAIL_NOVICE,
            base: None,
        }
    }

    /// The same counter with this name.
    pub fn named(mut self, name: impl Into<String>) -> CounterDefinition {
        self.name = Some(name.into());
        self
    }

    /// The same counter with this default scale (a power of ten).
    pub fn with_scale(mut self, scale: i32) -> CounterDefinition {
        self.scale = scale;
        self
    }
}

impl Instance {
    /// An instance named `raw_name` (no parent) with these values, one per counter definition, and
    /// no unique id (−1). [`Object::with_instances`] names it ([`name_instances`]).
    pub fn new(raw_name: impl Into<String>, values: Vec<Value>) -> Instance {
        Instance::from_parts(raw_name.into(), None, values)
    }

    /// The same instance with a parent of this name (`parent/raw_name` once named by
    /// [`name_instances`]); until then its name is its raw name.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Instance {
        let values = std::mem::take(self.values_mut());
        Instance {
            index: self.index,
            parent_object: self.parent_object,
            parent_instance: self.parent_instance,
            unique_id: self.unique_id,
            ..Instance::from_parts(self.raw_name().to_owned(), Some(&parent.into()), values)
        }
    }

    /// The same instance with its parent given as V1 data gives it: the parent object's title index
    /// and the parent's position in that object's instance list. The V1 decoder turns them into
    /// [`Instance::parent`] when it names the instances.
    pub fn with_parent_at(mut self, parent_object: u32, parent_instance: u32) -> Instance {
        self.parent_object = parent_object;
        self.parent_instance = parent_instance;
        self
    }

    /// The same instance with this unique id (`UniqueID`, a process id for example).
    pub fn with_unique_id(mut self, unique_id: i32) -> Instance {
        self.unique_id = unique_id;
        self
    }
}

impl Object {
    /// An object with title index `index` (0 for a V2 counterset): help index `index + 1`, novice
    /// detail level, no default counter (−1), UTF-16 names (code page 0), no object clock, the
    /// snapshot's sample clock, no name, no counters and no instances (a multi-instance object).
    ///
    /// ```
    /// # use perfcounters::snapshot::{CounterDefinition, Instance, Object, Value};
    /// # use perfcounters::CounterType;
    /// let processor = Object::new(238)
    ///     .named("Processor")
    ///     .with_counters(vec![CounterDefinition::new(6, CounterType::PERF_100NSEC_TIMER_INV)])
    ///     .with_instances(vec![
    ///         Instance::new("0", vec![Value::U64(2_500_000)]),
    ///         Instance::new("_Total", vec![Value::U64(2_500_000)]),
    ///     ]);
    /// assert_eq!(processor.instances()[1].name(), "_Total");
    /// ```
    pub fn new(index: u32) -> Object {
        Object {
            index,
            name: None,
            help_index: help_of(index),
            detail_level: DETAIL_NOVICE,
            default_counter: -1,
            code_page: 0,
            perf_time: 0,
            perf_freq: 0,
            sample_clock: None,
            counters: Vec::new(),
            data: ObjectData::Instances(Vec::new()),
        }
    }

    /// The same object with this name.
    pub fn named(mut self, name: impl Into<String>) -> Object {
        self.name = Some(name.into());
        self
    }

    /// The same object with these counter definitions, each base linked to the counter before it as
    /// V1 data lays them out ([`pair_bases_by_position`]).
    pub fn with_counters(mut self, mut counters: Vec<CounterDefinition>) -> Object {
        pair_bases_by_position(&mut counters);
        self.counters = counters;
        self
    }

    /// The same object as a single-instance object with these values, one per counter definition.
    pub fn with_values(mut self, values: Vec<Value>) -> Object {
        self.data = ObjectData::Single(values);
        self
    }

    /// The same object as a multi-instance object with these instances, named by
    /// [`name_instances`] as every source names them.
    pub fn with_instances(mut self, mut instances: Vec<Instance>) -> Object {
        name_instances(&mut instances);
        self.data = ObjectData::Instances(instances);
        self
    }

    /// The same object with its own clock for `PERF_OBJECT_TIMER` counters.
    pub fn with_object_clock(mut self, perf_time: i64, perf_freq: i64) -> Object {
        self.perf_time = perf_time;
        self.perf_freq = perf_freq;
        self
    }
}

impl Default for Object {
    /// [`Object::new`]`(0)`: no title index, no counters, no instances.
    fn default() -> Object {
        Object::new(0)
    }
}

impl Snapshot {
    /// An empty snapshot of the computer `system_name`, at time zero (set it with
    /// [`Snapshot::with_clock`] and [`Snapshot::with_system_time`]).
    ///
    /// ```
    /// # use perfcounters::snapshot::{Object, SampleClock, Snapshot};
    /// let snap = Snapshot::new("HOST")
    ///     .with_clock(SampleClock { perf_time: 100, perf_freq: 10_000_000, perf_time_100ns: 100 })
    ///     .with_objects(vec![Object::new(2).named("System")]);
    /// assert_eq!(snap.clock_of(&snap.objects[0]).perf_freq, 10_000_000);
    /// assert!(snap.object_by_name("system").is_some());
    /// ```
    pub fn new(system_name: impl Into<String>) -> Snapshot {
        Snapshot {
            system_name: system_name.into(),
            ..Snapshot::default()
        }
    }

    /// The same snapshot taken at this clock (`perf_time`, `perf_freq`, `perf_time_100ns`).
    pub fn with_clock(mut self, clock: SampleClock) -> Snapshot {
        self.perf_time = clock.perf_time;
        self.perf_freq = clock.perf_freq;
        self.perf_time_100ns = clock.perf_time_100ns;
        self
    }

    /// The same snapshot with this wall-clock time (UTC).
    pub fn with_system_time(mut self, system_time: SystemTime) -> Snapshot {
        self.system_time = system_time;
        self
    }

    /// The same snapshot with these objects, in data order.
    pub fn with_objects(mut self, objects: Vec<Object>) -> Snapshot {
        self.objects = objects;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_objects_link_bases_and_name_instances() {
        let object = Object::new(230)
            .named("Process")
            .with_counters(vec![
                CounterDefinition::new(10, CounterType::PERF_RAW_FRACTION),
                CounterDefinition::new(12, CounterType::PERF_RAW_BASE),
                CounterDefinition::new(14, CounterType::PERF_COUNTER_TEXT),
            ])
            .with_instances(vec![
                Instance::new("svchost", vec![]).with_unique_id(4),
                Instance::new("SVCHOST", vec![]),
                Instance::new("0", vec![]).with_parent("svchost"),
            ]);
        assert_eq!(object.help_index, 231);
        let bases: Vec<_> = object.counters.iter().map(|c| c.base).collect();
        assert_eq!(bases, [Some(1), None, None]);
        let sizes: Vec<_> = object.counters.iter().map(|c| c.size).collect();
        assert_eq!(sizes, [4, 4, 8]);
        let names: Vec<_> = object.instances().iter().map(|i| i.name()).collect();
        assert_eq!(names, ["svchost", "SVCHOST#1", "svchost/0"]);
        assert_eq!(object.instances()[0].unique_id, 4);
        assert_eq!(object.instances()[1].unique_id, -1);

        let single = Object::default().with_values(vec![Value::U32(1)]);
        assert_eq!(single.help_index, 0);
        assert_eq!(single.data, ObjectData::Single(vec![Value::U32(1)]));
        assert_eq!(Object::default().instances(), &[]);
    }
}
