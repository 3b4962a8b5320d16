//! The query engine on hand-built snapshots: expansion, values, statuses, instance churn, suggestions.

use crate::support::fixtures;

use perfcounters::format::v1::{encode_with, EncodeOptions, Endian};
use perfcounters::names::NameTable;
use perfcounters::query::{ExpandError, LiveQuery, Query};
use perfcounters::snapshot::{
    pair_bases_by_position, CounterDefinition, Instance, Object, ObjectData, SampleClock, Snapshot,
    Value,
};
use perfcounters::source::replay::{BlockRecording, ReplaySource};
use perfcounters::source::Source;
use perfcounters::source::{Catalog, CatalogCounter, ObjectInfo, Request};
use perfcounters::suggest::suggest;
use perfcounters::{CounterType, FormatOptions, PdhStatus};

fn def(name: &str, ty: CounterType) -> CounterDefinition {
    CounterDefinition::new(0, ty).named(name)
}

/// `object` with instances written with the names `name_instances` gives them, as every source
/// names them (`name#n` has the raw name `name`); the names written in the test must be the ones
/// it gives.
fn with_named(object: Object, list: Vec<(&str, Vec<Value>)>) -> Object {
    let object = object.with_instances(
        list.iter()
            .map(|(n, values)| Instance::new(n.split('#').next().unwrap(), values.clone()))
            .collect(),
    );
    let given: Vec<&str> = object.instances().iter().map(|i| i.name()).collect();
    let written: Vec<&str> = list.iter().map(|(n, _)| *n).collect();
    assert_eq!(given, written);
    object
}

/// A catalog object with raw-count counters.
fn catalog_object(name: &str, counters: &[&str]) -> ObjectInfo {
    ObjectInfo {
        name: name.into(),
        index: 0,
        help: String::new(),
        detail_level: 100,
        multi_instance: false,
        counters: counters
            .iter()
            .map(|c| CatalogCounter {
                name: (*c).into(),
                index: 0,
                help: String::new(),
                counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
                scale: 0,
                detail_level: 100,
                base_type: None,
            })
            .collect(),
    }
}

/// A snapshot at 100 ns time `t` with: Processor (instances given as (name, idle 100ns)), System
/// (Processes raw count, Context Switches/sec counter), Process (duplicate names).
fn snap(
    t: i64,
    cpus: &[(&str, u64)],
    processes: u32,
    switches: u32,
    procs: &[(&str, u64)],
) -> Snapshot {
    let processor = with_named(
        Object::new(0).named("Processor").with_counters(vec![def(
            "% Processor Time",
            CounterType::PERF_100NSEC_TIMER_INV,
        )]),
        cpus.iter()
            .map(|(n, idle)| (*n, vec![Value::U64(*idle)]))
            .collect(),
    );
    let system = Object::new(0)
        .named("System")
        .with_counters(vec![
            def("Processes", CounterType::PERF_COUNTER_RAWCOUNT),
            def("Context Switches/sec", CounterType::PERF_COUNTER_COUNTER),
            def("% Registry Quota In Use", CounterType::PERF_RAW_FRACTION),
            def("% Registry Quota In Use", CounterType::PERF_RAW_BASE),
        ])
        .with_values(vec![
            Value::U32(processes),
            Value::U32(switches),
            Value::U32(25),
            Value::U32(200),
        ]);
    let process = with_named(
        process_object(),
        procs
            .iter()
            .map(|(n, cpu)| (*n, vec![Value::U64(*cpu), Value::U64(4096)]))
            .collect(),
    );
    Snapshot::new("HOST")
        .with_clock(clock(t))
        .with_objects(vec![processor, system, process])
}

/// A 1 MHz tick clock at 100 ns time `t`.
fn clock(t: i64) -> SampleClock {
    SampleClock {
        perf_time: t / 10,
        perf_freq: 1_000_000,
        perf_time_100ns: t,
    }
}

/// Process: % Processor Time and Working Set, no instances.
fn process_object() -> Object {
    Object::new(0).named("Process").with_counters(vec![
        def("% Processor Time", CounterType::PERF_100NSEC_TIMER),
        def("Working Set", CounterType::PERF_COUNTER_LARGE_RAWCOUNT),
    ])
}

const S: i64 = 10_000_000; // one second in 100 ns units

#[test]
fn expands_wildcards_and_computes_values() {
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Processor(*)\% Processor Time").unwrap();
    q.add(r"\System\Processes").unwrap();
    q.add(r"\System\Context Switches/sec").unwrap();
    q.add(r"\System\% Registry Quota In Use").unwrap();
    let cpus0 = [("0", 0), ("1", 0), ("_Total", 0)];
    let first = q.update(&snap(100 * S, &cpus0, 7, 1000, &[]));
    let paths: Vec<String> = q.counters().iter().map(|c| c.path_string()).collect();
    assert_eq!(
        paths,
        [
            r"\\HOST\Processor(0)\% Processor Time",
            r"\\HOST\Processor(1)\% Processor Time",
            r"\\HOST\Processor(_Total)\% Processor Time",
            r"\\HOST\System\Processes",
            r"\\HOST\System\Context Switches/sec",
            r"\\HOST\System\% Registry Quota In Use",
        ]
    );
    // First collection: rates have no value yet, raw counts and raw fractions do.
    let statuses: Vec<PdhStatus> = first.iter().map(|v| v.status()).collect();
    assert_eq!(statuses[0], PdhStatus::PDH_NO_DATA);
    assert_eq!(first[3].value(), Some(7.0));
    assert_eq!(first[4].status(), PdhStatus::PDH_NO_DATA);
    assert_eq!(first[5].value(), Some(12.5)); // 100 · 25 / 200
                                              // Two seconds later: CPU 0 idle 1.5 s (25 % busy), CPU 1 idle 0.5 s (75 %), total idle 2 s of 4 → 50 %.
    let cpus1 = [("0", 15_000_000), ("1", 5_000_000), ("_Total", 20_000_000)];
    let second = q.update(&snap(102 * S, &cpus1, 8, 1600, &[]));
    let values: Vec<Option<f64>> = second.iter().map(|v| v.value()).collect();
    assert_eq!(values[0], Some(25.0));
    assert_eq!(values[1], Some(75.0));
    // _Total's idle is the sum over 2 CPUs, so against one wall clock it exceeds the interval: clamped to 0.
    assert_eq!(values[2], Some(0.0));
    assert_eq!(values[3], Some(8.0));
    assert_eq!(values[4], Some(300.0)); // 600 switches in 2 s
    assert_eq!(second[4].status(), PdhStatus::PDH_CSTATUS_NEW_DATA);
    assert_eq!(second[5].status(), PdhStatus::PDH_CSTATUS_VALID_DATA); // unchanged raw fraction
    assert!(q.errors().next().is_none());
}

#[test]
fn instances_that_come_and_go() {
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Process(svchost#1)\% Processor Time").unwrap();
    q.add(r"\Process(late)\Working Set").unwrap();
    q.add(r"\Process(svc*)\Working Set").unwrap();
    let p0 = [("svchost", 0), ("svchost#1", 0), ("other", 0)];
    let v = q.update(&snap(0, &[], 1, 1, &p0));
    let paths: Vec<String> = q.counters().iter().map(|c| c.path_string()).collect();
    assert_eq!(
        paths,
        [
            r"\\HOST\Process(svchost#1)\% Processor Time",
            r"\\HOST\Process(late)\Working Set",
            r"\\HOST\Process(svchost)\Working Set",
            r"\\HOST\Process(svchost#1)\Working Set",
        ]
    );
    assert_eq!(v[0].status(), PdhStatus::PDH_NO_DATA);
    assert_eq!(v[1].status(), PdhStatus::PDH_CSTATUS_NO_INSTANCE);
    assert_eq!(v[2].value(), Some(4096.0));
    let errors: Vec<String> = q.errors().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [r#"\Process(late)\Working Set: object "Process" has no instance "late""#]
    );

    // svchost#1 used 0.5 s of CPU in 1 s → 50 %. "late" appears.
    let p1 = [("svchost", 0), ("svchost#1", 5_000_000), ("late", 0)];
    let v = q.update(&snap(S, &[], 1, 1, &p1));
    assert_eq!(v[0].value(), Some(50.0));
    assert_eq!(v[1].value(), Some(4096.0));
    assert_eq!(v[1].status(), PdhStatus::PDH_CSTATUS_NEW_DATA);

    // svchost#1 exits: no instance; it returns and needs a fresh priming sample.
    let p2 = [("svchost", 0), ("late", 0)];
    let v = q.update(&snap(2 * S, &[], 1, 1, &p2));
    assert_eq!(v[0].status(), PdhStatus::PDH_CSTATUS_NO_INSTANCE);
    assert_eq!(v[3].status(), PdhStatus::PDH_CSTATUS_NO_INSTANCE);
    let p3 = [("svchost", 0), ("svchost#1", 9_000_000)];
    let v = q.update(&snap(3 * S, &[], 1, 1, &p3));
    assert_eq!(v[0].status(), PdhStatus::PDH_NO_DATA);
    let p4 = [("svchost", 0), ("svchost#1", 11_000_000)];
    let v = q.update(&snap(4 * S, &[], 1, 1, &p4));
    assert_eq!(v[0].value(), Some(20.0));
}

#[test]
fn backwards_counter_is_invalid_then_recovers() {
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\System\Context Switches/sec").unwrap();
    q.update(&snap(0, &[], 1, 5000, &[]));
    let v = q.update(&snap(S, &[], 1, 4000, &[]));
    assert_eq!(v[0].status(), PdhStatus::PDH_CSTATUS_INVALID_DATA);
    assert_eq!(v[0].value(), None);
    let v = q.update(&snap(2 * S, &[], 1, 4100, &[]));
    assert_eq!(v[0].value(), Some(100.0));
}

#[test]
fn unknown_names_report_statuses_and_suggestions() {
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Procesor(_Total)\% Processor Time").unwrap();
    q.add(r"\System\Proceses").unwrap();
    q.add(r"\System\Processes").unwrap();
    q.add(r"\Memory\Available Bytes").unwrap();
    q.add(r"\System(x)\Processes").unwrap();
    q.add(r"\Processor\% Processor Time").unwrap();
    let v = q.update(&snap(0, &[("0", 0)], 3, 1, &[]));
    let statuses: Vec<PdhStatus> = v.iter().map(|v| v.status()).collect();
    assert_eq!(
        statuses,
        [
            PdhStatus::PDH_CSTATUS_NO_OBJECT,
            PdhStatus::PDH_CSTATUS_NO_COUNTER,
            PdhStatus::PDH_CSTATUS_NEW_DATA, // the first sample of a one-sample counter is new data
            PdhStatus::PDH_CSTATUS_NO_OBJECT,
            PdhStatus::PDH_CSTATUS_NO_INSTANCE,
            PdhStatus::PDH_CSTATUS_NO_INSTANCE,
        ]
    );
    assert_eq!(v[2].value(), Some(3.0));
    let errors: Vec<String> = q.errors().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            r#"\Procesor(_Total)\% Processor Time: no object named "Procesor"; did you mean "Processor" or "Process"?"#,
            r#"\System\Proceses: object "System" has no counter named "Proceses"; did you mean "Processes"?"#,
            r#"\Memory\Available Bytes: no object named "Memory""#,
            r#"\System(x)\Processes: object "System" has no instance "x" (it is a single-instance object)"#,
            r#"\Processor\% Processor Time: object "Processor" has no instance (none given; this object has instances, e.g. (*))"#,
        ]
    );
    assert!(matches!(
        q.errors().next(),
        Some(ExpandError::NoObject { .. })
    ));
}

#[test]
fn case_insensitive_and_request() {
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\SYSTEM\processes").unwrap();
    q.add(r"\process(*)\*").unwrap();
    q.add(r"\System\Context Switches/sec").unwrap();
    // The catalog of the snapshot below: names merge ignoring case and take the catalog's spelling,
    // and the wildcard asks for every counter of Process.
    let catalog = Catalog {
        objects: vec![
            catalog_object("System", &["Processes", "Context Switches/sec"]),
            catalog_object("Process", &["% Processor Time", "Working Set"]),
        ],
        ..Default::default()
    };
    assert_eq!(
        q.request(&catalog),
        Request::new()
            .object("System", &["Processes", "Context Switches/sec"])
            .all_of("Process")
    );
    let v = q.update(&snap(0, &[], 9, 1, &[("a", 1)]));
    assert_eq!(v[0].value(), Some(9.0));
    let paths: Vec<String> = q.counters().iter().map(|c| c.path_string()).collect();
    assert_eq!(
        paths,
        [
            r"\\HOST\System\Processes",
            r"\\HOST\Process(a)\% Processor Time",
            r"\\HOST\Process(a)\Working Set",
            r"\\HOST\System\Context Switches/sec",
        ]
    );
}

#[test]
fn request_resolves_paths_against_the_catalog() {
    let catalog = Catalog {
        objects: vec![
            catalog_object(
                "Memory",
                &[
                    "Available Bytes",
                    "Committed Bytes",
                    "Commit Limit",
                    "Page Faults/sec",
                ],
            ),
            catalog_object("Processor", &["% Processor Time", "% User Time"]),
            catalog_object("System", &["Processes", "Threads"]),
            catalog_object("Datenträger", &["Übertragungen/s", "Bytes/s"]),
        ],
        ..Default::default()
    };
    let request = |paths: &[&str]| {
        let mut q = Query::new(FormatOptions::typeperf());
        for p in paths {
            q.add(p).unwrap();
        }
        q.request(&catalog)
    };
    // Objects in the order the paths first name them; counters in path order, each once, spelt as
    // the catalog spells them; a partial wildcard lists the counters it matches.
    assert_eq!(
        request(&[
            r"\SYSTEM\threads",
            r"\Memory\Commit*",
            r"\system\Threads",
            r"\Memory\available bytes",
            r"\Memory\Committed Bytes",
        ]),
        Request::new().object("System", &["Threads"]).object(
            "Memory",
            &["Committed Bytes", "Commit Limit", "Available Bytes"]
        )
    );
    // A wildcard that matches every counter asks for all of them, whatever else names the object;
    // instance wildcards do not matter.
    assert_eq!(
        request(&[r"\Processor(_Total)\% User Time", r"\Processor(*)\*"]),
        Request::new().all_of("Processor")
    );
    assert_eq!(
        request(&[r"\Processor(*)\%*"]),
        Request::new().all_of("Processor")
    );
    // Unknown objects are left out (the query reports them); an object named only with unknown
    // counters (or a wildcard that matches none) is asked for whole, so the query can suggest
    // names; with a known counter beside them, only the known ones.
    assert_eq!(
        request(&[r"\Procesor(*)\% Processor Time", r"\Nope\X"]),
        Request::new()
    );
    assert_eq!(
        request(&[r"\System\Proceses", r"\Memory\Bogus*"]),
        Request::new().all_of("System").all_of("Memory")
    );
    assert_eq!(
        request(&[r"\System\Proceses", r"\System\Processes"]),
        Request::new().object("System", &["Processes"])
    );
    // Names beyond ASCII are compared ignoring case too.
    assert_eq!(
        request(&[r"\DATENTRÄGER(*)\ÜBERTRAGUNGEN/S"]),
        Request::new().object("Datenträger", &["Übertragungen/s"])
    );
    assert_eq!(request(&[]), Request::new());
}

#[test]
fn suggestions() {
    let names = [
        "Processor",
        "Process",
        "Processor Information",
        "Memory",
        "System",
    ];
    assert_eq!(
        suggest("procesor", names.iter().copied()),
        ["Processor", "Process"]
    );
    assert_eq!(
        suggest("Processor Info", names.iter().copied()),
        ["Processor", "Process", "Processor Information"]
    );
    assert_eq!(suggest("Memroy", names.iter().copied()), ["Memory"]);
    assert!(suggest("zzzzzz", names.iter().copied()).is_empty());
    assert!(suggest("*", names.iter().copied()).is_empty());
}

/// A Process object at 100 ns time `t`: (raw name, PID, CPU time in 100 ns) per process, named by
/// `name_instances` as every source names them.
fn processes(t: i64, list: &[(&str, i32, u64)]) -> Snapshot {
    let process = process_object().with_instances(
        list.iter()
            .map(|(raw, pid, cpu)| {
                Instance::new(*raw, vec![Value::U64(*cpu), Value::U64(4096)]).with_unique_id(*pid)
            })
            .collect(),
    );
    Snapshot::new("HOST")
        .with_clock(clock(t))
        .with_objects(vec![process])
}

fn cpu_query(instances: &[&str]) -> Query {
    let mut q = Query::new(FormatOptions::typeperf());
    for i in instances {
        q.add(&format!(r"\Process({i})\% Processor Time")).unwrap();
    }
    q
}

fn results(values: &[perfcounters::query::CounterValue]) -> Vec<(Option<f64>, PdhStatus)> {
    values.iter().map(|v| (v.value(), v.status())).collect()
}

const NEW: PdhStatus = PdhStatus::PDH_CSTATUS_NEW_DATA;
const NO_DATA: PdhStatus = PdhStatus::PDH_NO_DATA;
const NO_INSTANCE: PdhStatus = PdhStatus::PDH_CSTATUS_NO_INSTANCE;

#[test]
fn a_clone_collects_and_expands_on_its_own() {
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Process(*)\% Processor Time").unwrap();
    q.update(&processes(0, &[("a", 1, 0), ("b", 2, 0)]));
    let mut clone = q.clone();
    // The clone pairs its samples with the original's first ones; a new instance expands only the
    // clone's counters.
    let with_c = processes(S, &[("a", 1, 2_000_000), ("b", 2, 0), ("c", 3, 0)]);
    let v = clone.update(&with_c);
    assert_eq!(results(&v), [(Some(20.0), NEW), (Some(0.0), NEW)]);
    clone.expand(&with_c);
    let paths =
        |q: &Query| -> Vec<String> { q.counters().iter().map(|c| c.path_string()).collect() };
    assert_eq!(
        paths(&clone),
        [
            r"\\HOST\Process(a)\% Processor Time",
            r"\\HOST\Process(b)\% Processor Time",
            r"\\HOST\Process(c)\% Processor Time",
        ]
    );
    assert_eq!(
        paths(&q),
        [
            r"\\HOST\Process(a)\% Processor Time",
            r"\\HOST\Process(b)\% Processor Time",
        ]
    );
    // The original still holds its own first samples: 0.5 s of CPU in 1 s for `a`.
    let v = q.update(&processes(S, &[("a", 1, 5_000_000), ("b", 2, 0)]));
    assert_eq!(results(&v), [(Some(50.0), NEW), (Some(0.0), NEW)]);
}

#[test]
fn churn_with_instance_identity_never_pairs_two_processes() {
    let mut q = cpu_query(&["svchost", "svchost#1", "svchost#2"]);
    let p = |pid, cpu| ("svchost", pid, cpu);
    q.update(&processes(0, &[p(1, 0), p(2, 0), p(3, 0)]));
    let v = q.update(&processes(
        S,
        &[p(1, 1_000_000), p(2, 2_000_000), p(3, 3_000_000)],
    ));
    assert_eq!(
        results(&v),
        [(Some(10.0), NEW), (Some(20.0), NEW), (Some(30.0), NEW)]
    );
    // PID 1 exits: PID 2 is now `svchost` and PID 3 `svchost#1`. Each column reads the instance that
    // holds its name, as PDH does, but its previous sample belongs to another process: no value this
    // time (the raw sample is there), and `svchost#2` is gone.
    let v = q.update(&processes(2 * S, &[p(2, 4_000_000), p(3, 6_000_000)]));
    assert_eq!(
        results(&v),
        [(None, NO_DATA), (None, NO_DATA), (None, NO_INSTANCE)]
    );
    assert_eq!(v[0].raw().unwrap().first, 4_000_000);
    assert_eq!(v[1].raw().unwrap().first, 6_000_000);
    // A new svchost (PID 4) takes `svchost#2`; it primes. PID 2 used 0.1 s of 1 s, PID 3 0.3 s.
    let v = q.update(&processes(
        3 * S,
        &[p(2, 5_000_000), p(3, 9_000_000), p(4, 0)],
    ));
    assert_eq!(
        results(&v),
        [(Some(10.0), NEW), (Some(30.0), NEW), (None, NO_DATA)]
    );
    let v = q.update(&processes(
        4 * S,
        &[p(2, 5_500_000), p(3, 9_000_000), p(4, 2_500_000)],
    ));
    assert_eq!(
        results(&v),
        [(Some(5.0), NEW), (Some(0.0), NEW), (Some(25.0), NEW)]
    );

    // The same name vanishes and reappears between two collections with another PID.
    let mut q = cpu_query(&["late"]);
    q.update(&processes(0, &[("late", 7, 0)]));
    let v = q.update(&processes(S, &[("late", 8, 9_000_000)]));
    assert_eq!(results(&v), [(None, NO_DATA)]);
    let v = q.update(&processes(2 * S, &[("late", 8, 9_400_000)]));
    assert_eq!(results(&v), [(Some(4.0), NEW)]);
}

#[test]
fn churn_without_instance_identity_is_pdh_s() {
    // Instances named by name only (`unique_id` −1, as in V1 Process data): the column pairs whatever
    // holds its name, like PDH. A sample that went backwards reports PDH_CSTATUS_INVALID_DATA for
    // that interval, and the next interval has a value again.
    let mut q = cpu_query(&["svchost", "svchost#1"]);
    let p = |cpu| ("svchost", -1, cpu);
    q.update(&processes(0, &[p(0), p(0), p(0)]));
    let v = q.update(&processes(S, &[p(9_000_000), p(2_000_000), p(3_000_000)]));
    assert_eq!(results(&v), [(Some(90.0), NEW), (Some(20.0), NEW)]);
    // The first svchost exits: `svchost` is now the former `svchost#1` (2.5 M < 9 M: backwards), and
    // `svchost#1` the former `svchost#2`, paired with the former `svchost#1`'s 2 M: (4 M − 2 M) / 1 s.
    let v = q.update(&processes(2 * S, &[p(2_500_000), p(4_000_000)]));
    assert_eq!(
        results(&v),
        [
            (None, PdhStatus::PDH_CSTATUS_INVALID_DATA),
            (Some(20.0), NEW)
        ]
    );
    let v = q.update(&processes(3 * S, &[p(3_000_000), p(4_000_000)]));
    assert_eq!(results(&v), [(Some(5.0), NEW), (Some(0.0), NEW)]);
}

#[test]
fn names_that_differ_only_in_case_are_duplicates() {
    // `A` and `a` are one name to PDH: the second is `a#1`. Paths match ignoring case, and the
    // expanded paths keep each instance's own spelling.
    let mut q = cpu_query(&["a", "A#1", "*"]);
    q.update(&processes(0, &[("A", 1, 0), ("a", 2, 0)]));
    let paths: Vec<String> = q.counters().iter().map(|c| c.path_string()).collect();
    assert_eq!(
        paths,
        [
            r"\\HOST\Process(A)\% Processor Time",
            r"\\HOST\Process(a#1)\% Processor Time",
            r"\\HOST\Process(A)\% Processor Time",
            r"\\HOST\Process(a#1)\% Processor Time",
        ]
    );
    let v = q.update(&processes(S, &[("A", 1, 1_000_000), ("a", 2, 5_000_000)]));
    assert_eq!(
        results(&v),
        [
            (Some(10.0), NEW),
            (Some(50.0), NEW),
            (Some(10.0), NEW),
            (Some(50.0), NEW)
        ]
    );
    // `A` exits: PID 2 is now `a`, which the column `A` reads (PDH compares ignoring case); its
    // previous sample was PID 1's, so it primes again. `a#1` is gone.
    let v = q.update(&processes(2 * S, &[("a", 2, 6_000_000)]));
    assert_eq!(
        results(&v),
        [
            (None, NO_DATA),
            (None, NO_INSTANCE),
            (None, NO_DATA),
            (None, NO_INSTANCE)
        ]
    );
    let v = q.update(&processes(3 * S, &[("a", 2, 8_000_000)]));
    assert_eq!(v[0].value(), Some(20.0));
    assert_eq!(v[2].value(), Some(20.0));
}

/// Each object, counter and instance name is looked up once per collection and shared by every
/// counter that reads it; when the next collection has them at other positions (objects in another
/// order, a counter definition inserted before, instances reordered) every value still follows its
/// name, and a name that disappears reports its status without disturbing the others.
#[test]
fn values_follow_names_when_positions_move() {
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Process(*)\% Processor Time").unwrap();
    q.add(r"\Process(*)\Working Set").unwrap();
    q.add(r"\System\Processes").unwrap();
    let procs0 = [("a", 0), ("b", 0), ("c", 0)];
    q.update(&snap(100 * S, &[("0", 0)], 3, 0, &procs0));
    assert_eq!(q.counters().len(), 7);

    // One second later: the objects come in reverse order, Process has a new counter first, and
    // its instances are reordered, with `b` gone.
    let mut next = snap(
        101 * S,
        &[("0", 0)],
        4,
        0,
        &[("c", 3_000_000), ("a", 1_000_000)],
    );
    next.objects.reverse();
    let process = &mut next.objects[0];
    assert_eq!(process.name.as_deref(), Some("Process"));
    process
        .counters
        .insert(0, def("Handle Count", CounterType::PERF_COUNTER_RAWCOUNT));
    pair_bases_by_position(&mut process.counters);
    let ObjectData::Instances(list) = &mut process.data else {
        unreachable!()
    };
    for (i, inst) in list.iter_mut().enumerate() {
        inst.values_mut().insert(0, Value::U32(100 + i as u32));
        inst.values_mut()[2] = Value::U64(8192 * (i as u64 + 1));
    }
    let values = q.update(&next);
    let got: Vec<(String, Option<f64>, PdhStatus)> = q
        .counters()
        .iter()
        .zip(&values)
        .map(|(c, v)| (c.path_string(), v.value(), v.status()))
        .collect();
    let new = PdhStatus::PDH_CSTATUS_NEW_DATA;
    let gone = PdhStatus::PDH_CSTATUS_NO_INSTANCE;
    assert_eq!(
        got,
        [
            (
                r"\\HOST\Process(a)\% Processor Time".into(),
                Some(10.0),
                new
            ),
            (r"\\HOST\Process(b)\% Processor Time".into(), None, gone),
            (
                r"\\HOST\Process(c)\% Processor Time".into(),
                Some(30.0),
                new
            ),
            (r"\\HOST\Process(a)\Working Set".into(), Some(16384.0), new),
            (r"\\HOST\Process(b)\Working Set".into(), None, gone),
            (r"\\HOST\Process(c)\Working Set".into(), Some(8192.0), new),
            (r"\\HOST\System\Processes".into(), Some(4.0), new),
        ]
    );
}

/// An object "Mix" with one counter of every predefined displayable or text type (a base after
/// each type that needs one, paired by position) and an unknown type, and three instances: `a`
/// counts up, `b` stands still (zero intervals, unchanged values), `c` goes backwards. Generation
/// `g` is sampled `g` seconds after the first.
fn every_type_snapshot(g: i64) -> Snapshot {
    let mut defs = Vec::new();
    let types = CounterType::ALL
        .iter()
        .copied()
        .filter(|t| !t.is_base())
        .chain([CounterType(0x0000_0F00)]);
    for (i, ty) in types.enumerate() {
        let name = format!("c{i} {}", ty.name().unwrap_or("unknown"));
        defs.push(def(&name, ty));
        if ty.needs_base() {
            let base = if ty.is_multi() {
                CounterType::PERF_COUNTER_MULTI_BASE
            } else {
                CounterType::PERF_LARGE_RAW_BASE
            };
            defs.push(def(&name, base));
        }
    }
    pair_bases_by_position(&mut defs);
    let values = |instance: i64| -> Vec<Value> {
        (0..defs.len() as i64)
            .map(|p| {
                let step = [37 * (p + 1), 0, -5][instance as usize];
                let base = if defs[p as usize].counter_type.is_base() {
                    9_000_000
                } else {
                    1_000_000
                };
                Value::U64((base + p * 1000 + instance * 10 + g * step) as u64)
            })
            .collect()
    };
    let t = (100 + g) * S;
    let mut object = Object::new(0).named("Mix").with_counters(defs.clone());
    object.perf_freq = 1_000;
    object.perf_time = 5_000_000 + g * 1_000;
    let object = with_named(
        object,
        vec![("a", values(0)), ("b", values(1)), ("c", values(2))],
    );
    Snapshot::new("HOST")
        .with_clock(clock(t))
        .with_objects(vec![object])
}

/// typeperf's and PDH's options, a scale up and down with ×1000, and an invalid scale (9).
fn every_option_set() -> [FormatOptions; 5] {
    [
        FormatOptions::typeperf(),
        FormatOptions::PDH_DEFAULT,
        FormatOptions {
            scale: 2,
            ..FormatOptions::PDH_DEFAULT
        },
        FormatOptions {
            scale: -3,
            times_1000: true,
            ..FormatOptions::typeperf()
        },
        FormatOptions {
            scale: 9,
            ..FormatOptions::PDH_DEFAULT
        },
    ]
}

/// Every formula, with every kind of formatting, gives through a query exactly what
/// `perfcounters::calculate` gives for the same raw samples, with PDH's status rules.
#[test]
fn every_counter_type_and_option_computes_like_the_calculator() {
    let snapshots: Vec<Snapshot> = (0..3).map(every_type_snapshot).collect();
    for opts in every_option_set() {
        let mut q = Query::new(opts);
        q.add(r"\Mix(*)\*").unwrap();
        for (g, snap) in snapshots.iter().enumerate() {
            let values = q.update(snap);
            assert_eq!(values.len(), q.counters().len());
            let object = &snap.objects[0];
            let mut computed = 0;
            for (c, v) in q.counters().iter().zip(&values) {
                let pos = object.counter_position_by_name(c.counter_name()).unwrap();
                let ty = object.counters[pos].counter_type;
                let instance = c.path.instance.as_deref().unwrap();
                let raw_of = |snap: &Snapshot| {
                    let o = &snap.objects[0];
                    let i = o.instances().iter().find(|i| i.name() == instance).unwrap();
                    snap.raw_counter(o, i.values(), pos).unwrap()
                };
                let newer = raw_of(snap);
                let older = g.checked_sub(1).map(|p| raw_of(&snapshots[p]));
                let time_base = snap.time_base(object, ty);
                let expected =
                    perfcounters::calculate(ty, &newer, older.as_ref(), time_base, &opts);
                let status = match expected {
                    Ok(_)
                        if older.is_some_and(|o| {
                            (o.first, o.second) == (newer.first, newer.second)
                        }) =>
                    {
                        PdhStatus::PDH_CSTATUS_VALID_DATA
                    }
                    Ok(_) => PdhStatus::PDH_CSTATUS_NEW_DATA,
                    Err(e) => e.status(),
                };
                let what = format!("{} with {opts:?}, collection {g}", c.path_string());
                assert_eq!(
                    v.value().map(f64::to_bits),
                    expected.ok().map(f64::to_bits),
                    "{what}"
                );
                assert_eq!((v.status(), v.raw()), (status, Some(newer)), "{what}");
                computed += usize::from(v.value().is_some());
            }
            // Not a vacuous comparison: 93 counters (31 types × 3 instances), values from the
            // one-sample types in the first collection and from the rates too in the later ones
            // (`b`'s zero intervals and `c`'s backward steps have none), none with an invalid scale.
            if opts.scale == 9 {
                assert_eq!(computed, 0);
            } else {
                assert_eq!(computed, [21, 63, 63][g], "values in collection {g}");
            }
        }
    }
}

/// The counters of [`every_type_snapshot`] read in place from V1 block files in both byte orders
/// (`Query::collect` over a replay, which computes from the block's bytes: 4- and 8-byte fields,
/// little- and big-endian, every source of the second value, multi counts from a base) give what
/// the owned path gives for the same blocks (`Source::collect` then `Query::update`), value for
/// value, with every set of options, the invalid scale included.
#[test]
fn every_counter_type_reads_in_place_like_the_owned_path() {
    const MIX: u32 = 1000;
    // Title indexes for the block (it names objects and counters only by index), and the values in
    // each field's width.
    let indexed = |snap: &Snapshot| {
        let mut snap = snap.clone();
        let object = &mut snap.objects[0];
        object.index = MIX;
        for (i, c) in object.counters.iter_mut().enumerate() {
            c.index = MIX + 2 + 2 * i as u32;
            // A type of no size still holds the snapshot's 8-byte value in the block.
            if c.size == 0 {
                c.size = 8;
            }
        }
        let sizes: Vec<u32> = object.counters.iter().map(|c| c.size).collect();
        if let ObjectData::Instances(list) = &mut object.data {
            for instance in list {
                for (v, size) in instance.values_mut().iter_mut().zip(&sizes) {
                    if let (Value::U64(x), 4) = (&*v, size) {
                        *v = Value::U32(u32::try_from(*x).unwrap());
                    }
                }
            }
        }
        snap
    };
    let snapshots: Vec<Snapshot> = (0..3).map(|g| indexed(&every_type_snapshot(g))).collect();
    let object = &snapshots[0].objects[0];
    assert!(object.counters.iter().any(|c| c.size == 4));
    assert!(object.counters.iter().any(|c| c.size == 8));
    let names: NameTable = std::iter::once((MIX, "Mix"))
        .chain(
            object
                .counters
                .iter()
                .map(|c| (c.index, c.name.as_deref().unwrap())),
        )
        .collect();
    for endian in [Endian::Little, Endian::Big] {
        let dir = fixtures::tempdir(&format!("every-type-{endian:?}"));
        let files: Vec<_> = snapshots
            .iter()
            .enumerate()
            .map(|(g, snap)| {
                let path = dir.join(format!("{g}.blk"));
                let options = EncodeOptions {
                    endian,
                    ..EncodeOptions::default()
                };
                std::fs::write(&path, encode_with(snap, options).unwrap()).unwrap();
                path
            })
            .collect();
        let replay = || ReplaySource::new(BlockRecording::new(files.clone()).with_names(&names));
        for opts in every_option_set() {
            let (mut owned, mut in_place) = (Query::new(opts), Query::new(opts));
            owned.add(r"\Mix(*)\*").unwrap();
            in_place.add(r"\Mix(*)\*").unwrap();
            let (mut owned_source, mut source) = (replay(), replay());
            let catalog = source.catalog().unwrap();
            let request = in_place.request(&catalog);
            let owned_request = owned.request(&owned_source.catalog().unwrap());
            let mut with_values = 0;
            for g in 0..files.len() {
                let expected = owned.update(&owned_source.collect(&owned_request).unwrap());
                let collection = in_place.collect(&mut source, &request).unwrap();
                // The first collection expands the paths from a snapshot; the others read the
                // block in place.
                assert_eq!(collection.snapshot.is_none(), g > 0);
                let what = format!("{endian:?}, {opts:?}, collection {g}");
                assert_eq!(in_place.values().len(), 93, "{what}");
                for (c, (v, e)) in in_place
                    .counters()
                    .iter()
                    .zip(in_place.values().iter().zip(&expected))
                {
                    assert_eq!(
                        (v.value().map(f64::to_bits), v.status(), v.raw()),
                        (e.value().map(f64::to_bits), e.status(), e.raw()),
                        "{} ({what})",
                        c.path_string()
                    );
                }
                with_values += in_place
                    .values()
                    .iter()
                    .filter(|v| v.value().is_some())
                    .count();
            }
            // Not vacuous: the values of the calculator test (21 + 63 + 63), none with the invalid
            // scale.
            assert_eq!(
                with_values,
                if opts.scale == 9 { 0 } else { 147 },
                "{endian:?} {opts:?}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Samples kept in memory, replayed as a source.
#[derive(Debug)]
struct InMemory(Vec<Snapshot>);

impl perfcounters::source::replay::Recording for InMemory {
    fn sample_count(&self) -> Option<usize> {
        Some(self.0.len())
    }
    fn sample(
        &mut self,
        index: usize,
    ) -> Result<Option<Snapshot>, perfcounters::source::SourceError> {
        Ok(self.0.get(index).cloned())
    }
}

/// `collect_expanded` expands the wildcard at each collection: a process that starts later gets
/// its counters (paired with its own previous sample from then on), one that exits loses them,
/// and a wildcard that matches nothing keeps one column that reports `NO_INSTANCE`.
#[test]
fn collect_expanded_follows_instances_that_come_and_go() {
    let mut source = ReplaySource::new(InMemory(vec![
        processes(0, &[("explorer", 1, 0)]),
        processes(S, &[("explorer", 1, 0), ("firefox", 2, 1_000_000)]),
        processes(2 * S, &[("explorer", 1, 0), ("firefox", 2, 6_000_000)]),
        processes(3 * S, &[("explorer", 1, 0)]),
    ]));
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Process(fire*)\% Processor Time").unwrap();
    q.add(r"\Process(fire*)\Working Set").unwrap();
    let request = q.request(&source.catalog().unwrap());
    let mut step = |q: &mut Query| {
        let c = q.collect_expanded(&mut source, &request).unwrap();
        assert!(c.snapshot.is_some());
        let paths: Vec<String> = q.counters().iter().map(|c| c.path_string()).collect();
        (paths, results(q.values()))
    };
    let waiting = (
        vec![
            r"\\HOST\Process(fire*)\% Processor Time".to_string(),
            r"\\HOST\Process(fire*)\Working Set".to_string(),
        ],
        vec![(None, NO_INSTANCE), (None, NO_INSTANCE)],
    );
    assert_eq!(step(&mut q), waiting);
    let firefox = vec![
        r"\\HOST\Process(firefox)\% Processor Time".to_string(),
        r"\\HOST\Process(firefox)\Working Set".to_string(),
    ];
    // The first sample of firefox: no rate yet, its working set.
    assert_eq!(
        step(&mut q),
        (firefox.clone(), vec![(None, NO_DATA), (Some(4096.0), NEW)])
    );
    // 0.5 s of CPU in 1 s.
    assert_eq!(
        step(&mut q),
        (
            firefox,
            vec![
                (Some(50.0), NEW),
                (Some(4096.0), PdhStatus::PDH_CSTATUS_VALID_DATA)
            ]
        )
    );
    assert_eq!(step(&mut q), waiting);
}

/// A path that two patterns expand to is two counters; a re-expansion keeps the previous sample
/// of both, so both have their rate at the next collection.
#[test]
fn collect_expanded_keeps_the_sample_of_a_path_added_twice() {
    let mut source = ReplaySource::new(InMemory(vec![
        processes(0, &[("firefox", 2, 0)]),
        processes(S, &[("firefox", 2, 1_000_000)]),
    ]));
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Process(firefox)\% Processor Time").unwrap();
    q.add(r"\Process(fire*)\% Processor Time").unwrap();
    let request = q.request(&source.catalog().unwrap());
    q.collect_expanded(&mut source, &request).unwrap();
    assert_eq!(results(q.values()), vec![(None, NO_DATA), (None, NO_DATA)]);
    q.collect_expanded(&mut source, &request).unwrap();
    let paths: Vec<String> = q.counters().iter().map(|c| c.path_string()).collect();
    assert_eq!(paths, [r"\\HOST\Process(firefox)\% Processor Time"; 2]);
    // 0.1 s of CPU in 1 s, in both.
    assert_eq!(
        results(q.values()),
        vec![(Some(10.0), NEW), (Some(10.0), NEW)]
    );
}

/// A `LiveQuery` expands its wildcards on the first two collections, then every 10 s of data: a
/// process that starts after the second collection gets its counters at the next expansion (the
/// 12th collection, 1 s apart), and its rate one collection later.
#[test]
fn live_query_expands_wildcards_again_on_schedule() {
    let samples = (0..25)
        .map(|i| {
            let mut list = vec![("explorer", 1, 0)];
            if i >= 3 {
                list.push(("firefox", 2, i as u64 * 1_000_000));
            }
            processes(i * S, &list)
        })
        .collect();
    let mut source = ReplaySource::new(InMemory(samples));
    let mut q = Query::new(FormatOptions::typeperf());
    q.add(r"\Process(*)\% Processor Time").unwrap();
    let mut live = LiveQuery::new(q);
    let request = live.query_mut().request(&source.catalog().unwrap());
    let mut counters = Vec::new();
    for _ in 0..25 {
        live.collect(&mut source, &request).unwrap();
        counters.push(live.query().counters().len());
        let firefox = live
            .query()
            .counters()
            .iter()
            .position(|c| c.path_string().contains("firefox"));
        let values = results(live.query().values());
        match counters.len() {
            12 => assert_eq!(firefox.map(|i| values[i]), Some((None, NO_DATA))),
            13 => assert_eq!(firefox.map(|i| values[i]), Some((Some(10.0), NEW))),
            _ => {}
        }
    }
    assert_eq!(counters[..11], [1; 11]);
    assert_eq!(counters[11..], [2; 14]);
    // After the last sample: the source's error, and the query as it was.
    let end = live.collect(&mut source, &request).unwrap_err();
    assert_eq!(end.kind(), perfcounters::source::SourceErrorKind::Exhausted);
    assert_eq!(live.into_query().counters().len(), 2);
}
