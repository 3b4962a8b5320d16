//! Instance naming is one rule: the same instance list gives the same names (`parent/child`, `#n`
//! for duplicates compared ignoring case, the first occurrence unsuffixed) whether it comes through a
//! V1 block (encoder, then decoder), a V2 query result (encoder, then `to_snapshot`) or the Linux
//! source (a procfs tree).

use perfcounters::format::v1::{encode, PerfDataBlock};
use perfcounters::format::v2::{
    to_snapshot, BlockData, CounterRegistration, CounterSetRegistration, CounterSpec, DataHeader,
    Guid, InstanceData, QueryBlock, QueryData, PERF_COUNTERSET_MULTI_INSTANCES,
    PERF_WILDCARD_COUNTER,
};
use perfcounters::snapshot::{
    name_instances, CounterDefinition, Instance, Object, SampleClock, Snapshot, Value,
};
use perfcounters::CounterType;

/// The instance list, in data order: (parent, raw name). Duplicates differ in case (ASCII and not),
/// and children of two parents whose names differ only in case collide.
const LIST: [(Option<&str>, &str); 10] = [
    (None, "svchost"),
    (None, "SVCHOST"),
    (None, "svchost"),
    (Some("explorer"), "0"),
    (Some("Explorer"), "0"),
    (Some("explorer"), "1"),
    (Some("explorer"), "0"),
    (None, "ÉTÉ"),
    (None, "été"),
    (None, "_Total"),
];

/// The names every source gives `LIST`, with their duplicate indexes.
const NAMES: [(&str, u32); 10] = [
    ("svchost", 0),
    ("SVCHOST#1", 1),
    ("svchost#2", 2),
    ("explorer/0", 0),
    ("Explorer/0#1", 1),
    ("explorer/1", 0),
    ("explorer/0#2", 2),
    ("ÉTÉ", 0),
    ("été#1", 1),
    ("_Total", 0),
];

fn full_name(parent: Option<&str>, raw: &str) -> String {
    match parent {
        Some(p) => format!("{p}/{raw}"),
        None => raw.to_string(),
    }
}

fn names_of(object: &Object) -> Vec<(&str, u32)> {
    object
        .instances()
        .iter()
        .map(|i| (i.name(), i.index))
        .collect()
}

fn v1_object(index: u32, instances: Vec<Instance>) -> Object {
    Object::new(index)
        .with_counters(vec![CounterDefinition::new(
            784,
            CounterType::PERF_COUNTER_RAWCOUNT,
        )])
        .with_instances(instances)
}

/// V1: a Process object (230) holds the parents `explorer` and `Explorer`; a Thread object (232) holds
/// the list, children pointing at their parent by position.
fn through_v1() -> Snapshot {
    let inst = |raw: &str, parent_object: u32, parent_instance: u32, v: u32| {
        Instance::new(raw, vec![Value::U32(v)]).with_parent_at(parent_object, parent_instance)
    };
    let parents = ["explorer", "Explorer"];
    let process = v1_object(
        230,
        parents
            .iter()
            .zip(0..)
            .map(|(p, v)| inst(p, 0, 0, v))
            .collect(),
    );
    let thread = v1_object(
        232,
        LIST.iter()
            .zip(0..)
            .map(|((parent, raw), v)| match parent {
                Some(p) => {
                    let position = parents.iter().position(|q| q == p).unwrap() as u32;
                    inst(raw, 230, position, v)
                }
                None => inst(raw, 0, 0, v),
            })
            .collect(),
    );
    let clock = SampleClock {
        perf_freq: 10_000_000,
        ..SampleClock::default()
    };
    let bytes = encode(
        &Snapshot::new("HOST")
            .with_clock(clock)
            .with_objects(vec![process, thread]),
    )
    .unwrap();
    PerfDataBlock::parse(&bytes).unwrap().to_snapshot().unwrap()
}

/// V2: one counterset whose instance names are the full names (V2 names carry no parent).
fn through_v2() -> Snapshot {
    let guid: Guid = "{6b6c4a3e-1c1d-4b2a-9e5f-0123456789ab}".parse().unwrap();
    let registration = CounterSetRegistration {
        guid,
        name: Some("Thread".into()),
        help: None,
        instance_type: PERF_COUNTERSET_MULTI_INSTANCES,
        detail_level: 100,
        counters: vec![CounterRegistration::new(
            1,
            CounterType::PERF_COUNTER_RAWCOUNT,
            "ID Thread",
        )],
    };
    let specs = [CounterSpec {
        guid,
        status: 0,
        counter_id: PERF_WILDCARD_COUNTER,
        instance_id: 0xFFFF_FFFF,
        index: 0,
        instance_name: Some("*".into()),
    }];
    let bytes = QueryData {
        perf_time_stamp: 1,
        perf_time_100ns: 2,
        perf_freq: 10_000_000,
        system_time: Default::default(),
        blocks: vec![QueryBlock {
            status: 0,
            data: BlockData::CounterSet {
                counter_ids: vec![1],
                instances: LIST
                    .iter()
                    .zip(100..)
                    .map(|((parent, raw), id)| InstanceData {
                        id,
                        name: full_name(*parent, raw),
                        values: vec![Value::U32(id)],
                    })
                    .collect(),
            },
        }],
    }
    .encode()
    .unwrap();
    to_snapshot(&DataHeader::parse(&bytes).unwrap(), &specs, &[registration])
        .unwrap()
        .snapshot
}

#[test]
fn v1_and_v2_name_the_same_list_alike() {
    let v1 = through_v1();
    // The parents differ only in case, so they are one name; their children name them by their raw
    // names (`Explorer/0`, not `explorer#1/0`).
    assert_eq!(
        names_of(&v1.objects[0]),
        [("explorer", 0), ("Explorer#1", 1)]
    );
    assert_eq!(names_of(&v1.objects[1]), NAMES);
    let parents: Vec<Option<&str>> = v1.objects[1]
        .instances()
        .iter()
        .map(|i| i.parent())
        .collect();
    assert_eq!(
        parents,
        LIST.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
        "V1 resolves the parents from the Process object"
    );
    let v2 = through_v2();
    assert_eq!(names_of(&v2.objects[0]), NAMES);
}

#[test]
fn name_instances_is_the_rule_both_formats_apply() {
    let mut list: Vec<Instance> = LIST
        .iter()
        .map(|(parent, raw)| match parent {
            Some(p) => Instance::new(*raw, vec![]).with_parent(*p),
            None => Instance::new(*raw, vec![]),
        })
        .collect();
    name_instances(&mut list);
    let names: Vec<(&str, u32)> = list.iter().map(|i| (i.name(), i.index)).collect();
    assert_eq!(names, NAMES);
    // Renaming is idempotent: names come from raw names and parents only.
    list[1] = Instance::new("other", vec![]);
    name_instances(&mut list);
    assert_eq!(list[1].name(), "other");
    assert_eq!(list[2].name(), "svchost#1");
    // A Turkish capital dotted I is its own letter: `İ` and `i̇` (i + U+0307) are different names.
    let mut turkish = vec![
        Instance::new("İ", vec![]),
        Instance::new("i\u{307}", vec![]),
        Instance::new("İ", vec![]),
    ];
    name_instances(&mut turkish);
    let names: Vec<&str> = turkish.iter().map(|i| i.name()).collect();
    assert_eq!(names, ["İ", "i\u{307}", "İ#1"]);
}

#[cfg(target_os = "linux")]
#[test]
fn linux_names_processes_like_v1_and_v2() {
    use perfcounters::source::linux::LinuxSource;
    use perfcounters::source::{Request, Source};

    let dir = std::env::temp_dir().join(format!("perfcounters-naming-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The list without its last entry: the source adds `_Total` itself. Processes are listed in PID
    // order; command names may contain `/` (kernel threads such as `kworker/0:1` do).
    for (pid, (parent, raw)) in (10..).zip(&LIST[..LIST.len() - 1]) {
        let comm = full_name(*parent, raw);
        let proc_dir = dir.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&proc_dir).unwrap();
        std::fs::write(
            proc_dir.join("stat"),
            format!("{pid} ({comm}) S 1 {pid} {pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 1000 1 0\n"),
        )
        .unwrap();
    }
    let mut src = LinuxSource::with_root(&dir)
        .with_clock_ticks(100)
        .with_page_size(4096);
    let snap = src
        .collect(&Request::new().object("Process", &["ID Process"]))
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let process = &snap.objects[0];
    assert_eq!(names_of(process), NAMES);
    let pids: Vec<i32> = process.instances().iter().map(|i| i.unique_id).collect();
    assert_eq!(pids, [10, 11, 12, 13, 14, 15, 16, 17, 18, -1]);
}
