//! The Prometheus export: native names and types from the Linux fixture trees (exact values), the
//! zero-dip guard, 32-bit widening and duplicate instances through the exporter, and the
//! windows_exporter names checked against the metric tables of windows_exporter's documentation.

use crate::support::shared_data;

use std::collections::BTreeSet;

use perfcounters::counter_type::CounterType as T;
use perfcounters::export::{
    compat, encode, ExportConfig, Exporter, Families, MetricKind, Plan, TextFormat,
};
use perfcounters::snapshot::{CounterDefinition, Instance, Object, SampleClock, Snapshot, Value};
use perfcounters::source::{Catalog, CatalogCounter, ObjectInfo};

fn render_snapshot(plan: &Plan, exporter: &mut Exporter, snapshot: &Snapshot) -> String {
    exporter.begin();
    let mut families = Families::new();
    for c in &plan.collectors {
        exporter.render(c, snapshot, &mut families);
    }
    let mut out = String::new();
    encode(families.as_slice(), TextFormat::Prometheus, &mut out);
    out
}

/// The sample lines (no comments) of an exposition.
fn samples(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#')).collect()
}

/// The names of a plan's collectors, in order.
fn collector_names(plan: &Plan) -> Vec<&str> {
    plan.collectors.iter().map(|c| c.name.as_str()).collect()
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use perfcounters::export::{CounterConfig, ObjectConfig};
    use perfcounters::source::Source;

    /// Asserts that each of `expected` is a whole sample line of the exposition `text`.
    fn assert_has_samples(text: &str, expected: &[&str]) {
        let lines = samples(text);
        for expected in expected {
            assert!(lines.contains(expected), "missing {expected}\n{text}");
        }
    }

    /// Collects each collector's request from `src` and renders the plan with a fresh exporter.
    fn render(src: &mut dyn Source, plan: &Plan, format: TextFormat) -> String {
        let exporter = &mut Exporter::new();
        exporter.begin();
        let mut families = Families::new();
        for c in &plan.collectors {
            let snapshot: Snapshot = src.collect(&c.request).unwrap();
            exporter.render(c, &snapshot, &mut families);
        }
        let mut out = String::new();
        encode(families.as_slice(), format, &mut out);
        out
    }
    use perfcounters::source::linux::{Clock, ClockReading, FsSpace, FsUsage, LinuxSource};
    use std::path::Path;

    struct FixedClock(ClockReading);
    impl Clock for FixedClock {
        fn now(&mut self) -> ClockReading {
            self.0
        }
    }
    struct Space;
    impl FsSpace for Space {
        fn usage(&mut self, mount_point: &str) -> std::io::Result<FsUsage> {
            match mount_point {
                "/" => Ok(FsUsage {
                    total_bytes: 100 << 30,
                    available_bytes: 25 << 30,
                }),
                _ => Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "no access",
                )),
            }
        }
    }

    /// The t0 procfs fixture at FILETIME 132000000000000000 (Unix 1555526400).
    fn source() -> LinuxSource {
        LinuxSource::with_root(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/procfs/t0"),
        )
        .with_clock(Box::new(FixedClock(ClockReading {
            perf_time: 1_000_000_000,
            filetime: 132_000_000_000_000_000,
        })))
        .with_fs_space(Box::new(Space))
        .with_clock_ticks(100)
        .with_page_size(4096)
    }

    #[test]
    fn native_names_types_and_values_from_the_linux_fixture() {
        let mut src = source();
        let catalog = src.catalog().unwrap();
        let plan = ExportConfig::default_set(&catalog)
            .with_process(&[])
            .plan(&catalog);
        assert!(plan.problems.is_empty(), "{:?}", plan.problems);
        assert_eq!(
            collector_names(&plan),
            [
                "processor_information",
                "memory",
                "system",
                "physical_disk",
                "logical_disk",
                "network_interface",
                "process"
            ]
        );
        let text = render(&mut src, &plan, TextFormat::Prometheus);
        assert_has_samples(
            &text,
            &[
                // /proc/stat ctxt 50000
                "perfcounters_system_context_switches_total 50000",
                // cpu0: user 200 + nice 50 jiffies at USER_HZ 100
                r#"perfcounters_processor_information_user_seconds_total{instance_name="0,0"} 2.5"#,
                r#"perfcounters_processor_information_privileged_seconds_total{instance_name="0,0"} 1.5"#,
                // % Processor Time is an inverted timer: its raw value is the idle time
                r#"perfcounters_processor_information_processor_inverse_seconds_total{instance_name="0,0"} 10.5"#,
                r#"perfcounters_processor_information_idle_seconds_total{instance_name="0,0"} 10.5"#,
                // MemAvailable 4000000 kB; Available KBytes/MBytes would repeat the name and are left out
                "perfcounters_memory_available_bytes 4096000000",
                "perfcounters_memory_commit_limit_bytes 10240000000",
                "perfcounters_memory_committed_bytes_in_use 5000000",
                "perfcounters_memory_committed_bytes_in_use_base 10000000",
                // boot = 1555526400 - uptime 1000
                "perfcounters_system_system_start_time_seconds 1555525400",
                // sda: 1000 reads, 5000 ms reading
                r#"perfcounters_physical_disk_disk_read_duration_seconds_sum{instance_name="sda"} 5"#,
                r#"perfcounters_physical_disk_disk_read_duration_seconds_count{instance_name="sda"} 1000"#,
                r#"perfcounters_physical_disk_disk_read_bytes_total{instance_name="sda"} 40960000"#,
                r#"perfcounters_physical_disk_disk_queue_length_seconds_total{instance_name="sda"} 13"#,
                r#"perfcounters_logical_disk_free_bytes{instance_name="/"} 26843545600"#,
                r#"perfcounters_network_interface_bytes_received_total{instance_name="eth0"} 5000000"#,
                // processes: the bare name, the PID as a label
                r#"perfcounters_process_processor_seconds_total{instance_name="systemd",process_id="1"} 8"#,
                r#"perfcounters_process_working_set_bytes{instance_name="bash",process_id="150"} 3686400"#,
                r#"perfcounters_process_start_time_seconds{instance_name="bash",process_id="100"} 1555525900"#,
            ],
        );
        assert!(text.contains(
            "# HELP perfcounters_system_context_switches_total \\\\System\\\\Context Switches/sec (PERF_COUNTER_BULK_COUNT); rate() is the value per second\n\
             # TYPE perfcounters_system_context_switches_total counter\n"
        ));
        assert!(
            text.contains("# TYPE perfcounters_physical_disk_disk_read_duration_seconds summary\n")
        );
        assert!(text.contains("# TYPE perfcounters_memory_available_bytes gauge\n"));
        assert!(!text.contains("_Total"), "_Total instances are dropped");
        assert!(!text.contains("{instance="), "never the label `instance`");
        assert!(!text.contains("memory_available_kbytes"));
        // Every family is declared once, before its samples.
        let mut declared = BTreeSet::new();
        for l in text.lines() {
            if let Some(rest) = l.strip_prefix("# TYPE ") {
                assert!(
                    declared.insert(rest.split(' ').next().unwrap().to_string()),
                    "{l}"
                );
            }
        }
        // OpenMetrics: counter families without `_total`, and the end marker.
        let om = render(&mut src, &plan, TextFormat::OpenMetrics);
        assert!(om.contains("# TYPE perfcounters_system_context_switches counter\nperfcounters_system_context_switches_total 50000\n"));
        assert!(
            om.contains("# UNIT perfcounters_physical_disk_disk_read_duration_seconds seconds\n")
        );
        assert!(om.ends_with("# EOF\n"));
        // Every OpenMetrics family is declared once (a counter family drops its `_total`, so
        // `x_total` and a summary `x` would collide).
        let mut families = BTreeSet::new();
        for l in om.lines() {
            if let Some(rest) = l.strip_prefix("# TYPE ") {
                assert!(
                    families.insert(rest.split(' ').next().unwrap().to_string()),
                    "{l}"
                );
            }
        }
    }

    #[test]
    fn total_instances_and_filters_on_request() {
        let mut src = source();
        let catalog = src.catalog().unwrap();
        let config = ExportConfig {
            prefix: "node".into(),
            objects: vec![ObjectConfig {
                object: "processor".into(),
                collector: Some("cpu".into()),
                metric: Some("cpu".into()),
                include_total: true,
                instance_label: Some("cpu".into()),
                labels: vec![("site".into(), "a".into())],
                exclude_instances: vec!["1".into()],
                counters: vec![
                    CounterConfig::pattern("% User*"),
                    CounterConfig {
                        counter: "% Idle Time".into(),
                        metric: Some("node_cpu_idle_seconds_total".into()),
                        labels: vec![("mode".into(), "idle".into())],
                    },
                ],
                ..Default::default()
            }],
        };
        let plan = config.plan(&catalog);
        assert_eq!(plan.collectors[0].name, "cpu");
        let text = render(&mut src, &plan, TextFormat::Prometheus);
        assert_eq!(
            samples(&text),
            [
                r#"node_cpu_user_seconds_total{cpu="0",site="a"} 2.5"#,
                r#"node_cpu_user_seconds_total{cpu="_Total",site="a"} 2.5"#,
                r#"node_cpu_idle_seconds_total{cpu="0",site="a",mode="idle"} 10.5"#,
                r#"node_cpu_idle_seconds_total{cpu="_Total",site="a",mode="idle"} 10.5"#,
            ]
        );
        let bad = ExportConfig {
            objects: vec![
                ObjectConfig {
                    object: "Procesor".into(),
                    ..Default::default()
                },
                ObjectConfig {
                    object: "Memory".into(),
                    counters: vec![CounterConfig::pattern("Nope*")],
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
        .plan(&catalog);
        assert_eq!(
            bad.problems,
            [
                "no object named \"Procesor\"; did you mean \"Processor\" or \"Process\"?",
                "object \"Memory\" has no counter matching \"Nope*\""
            ]
        );
        assert!(bad.collectors.is_empty());
    }

    #[test]
    fn windows_exporter_names_from_the_linux_fixture() {
        let mut src = source();
        let catalog = src.catalog().unwrap();
        let plan = compat::windows_exporter(&catalog, None);
        assert_eq!(
            collector_names(&plan),
            [
                "cpu",
                "memory",
                "logical_disk",
                "physical_disk",
                "net",
                "system"
            ]
        );
        let text = render(&mut src, &plan, TextFormat::Prometheus);
        let lines = samples(&text);
        assert_has_samples(
            &text,
            &[
                r#"windows_cpu_time_total{core="0,0",mode="idle"} 10.5"#,
                r#"windows_cpu_time_total{core="0,0",mode="user"} 2.5"#,
                "windows_memory_available_bytes 4096000000",
                "windows_memory_physical_free_bytes 4096000000",
                "windows_system_context_switches_total 50000",
                "windows_system_boot_time_timestamp 1555525400",
                r#"windows_logical_disk_free_bytes{volume="/"} 26843545600"#,
                // 100 GiB: Free Megabytes x 2^20 x (% Free Space base / numerator)
                r#"windows_logical_disk_size_bytes{volume="/"} 107374182400"#,
                r#"windows_physical_disk_read_bytes_total{disk="sda"} 40960000"#,
                r#"windows_physical_disk_read_latency_seconds_total{disk="sda"} 5"#,
                r#"windows_net_bytes_received_total{nic="eth0"} 5000000"#,
                // 1000 Mb/s
                r#"windows_net_current_bandwidth_bytes{nic="eth0"} 125000000"#,
            ],
        );
        // % Idle Time of the Linux disks is inverted (its raw value is the busy time): turned back,
        // the idle time is the 100 ns clock minus the busy time. sda: io_ticks 9000 ms.
        let idle = lines
            .iter()
            .find(|l| l.starts_with(r#"windows_physical_disk_idle_seconds_total{disk="sda"}"#))
            .unwrap();
        assert_eq!(
            idle.rsplit(' ').next().unwrap().parse::<f64>().unwrap(),
            13_200_000_000.0 - 9.0
        );
    }
}

/// A counter list entry for a hand-built catalog: name and type.
type Def = (&'static str, T);

fn base_of(ty: T) -> Option<T> {
    match ty {
        T::PERF_AVERAGE_TIMER | T::PERF_AVERAGE_BULK => Some(T::PERF_AVERAGE_BASE),
        T::PERF_RAW_FRACTION => Some(T::PERF_RAW_BASE),
        T::PERF_SAMPLE_FRACTION => Some(T::PERF_SAMPLE_BASE),
        t if t.is_precision() => Some(T::PERF_PRECISION_TIMESTAMP),
        _ => None,
    }
}

fn info(name: &str, multi: bool, defs: &[Def]) -> ObjectInfo {
    ObjectInfo {
        name: name.into(),
        index: 0,
        help: String::new(),
        detail_level: 100,
        multi_instance: multi,
        counters: defs
            .iter()
            .map(|&(n, ty)| CatalogCounter {
                name: n.into(),
                index: 0,
                help: String::new(),
                counter_type: ty,
                scale: 0,
                detail_level: 100,
                base_type: base_of(ty),
            })
            .collect(),
    }
}

/// The Windows types of the counters windows_exporter reads.
fn windows_catalog() -> Catalog {
    let timer = T::PERF_100NSEC_TIMER;
    let count = T::PERF_COUNTER_COUNTER;
    let bulk = T::PERF_COUNTER_BULK_COUNT;
    let raw = T::PERF_COUNTER_RAWCOUNT;
    let large = T::PERF_COUNTER_LARGE_RAWCOUNT;
    let disk: &[Def] = &[
        ("Current Disk Queue Length", raw),
        (
            "Avg. Disk Read Queue Length",
            T::PERF_COUNTER_100NS_QUEUELEN_TYPE,
        ),
        (
            "Avg. Disk Write Queue Length",
            T::PERF_COUNTER_100NS_QUEUELEN_TYPE,
        ),
        ("Disk Read Bytes/sec", bulk),
        ("Disk Reads/sec", count),
        ("Disk Write Bytes/sec", bulk),
        ("Disk Writes/sec", count),
        ("% Disk Read Time", timer),
        ("% Disk Write Time", timer),
        ("% Idle Time", T::PERF_PRECISION_100NS_TIMER),
        ("Split IO/Sec", count),
        ("Avg. Disk sec/Read", T::PERF_AVERAGE_TIMER),
        ("Avg. Disk sec/Write", T::PERF_AVERAGE_TIMER),
        ("Avg. Disk sec/Transfer", T::PERF_AVERAGE_TIMER),
    ];
    let mut logical = disk.to_vec();
    logical.extend([
        ("% Free Space", T::PERF_RAW_FRACTION),
        ("Free Megabytes", raw),
    ]);
    Catalog {
        objects: vec![
            info(
                "Processor Information",
                true,
                &[
                    ("% Idle Time", timer),
                    ("% Interrupt Time", timer),
                    ("% DPC Time", timer),
                    ("% Privileged Time", timer),
                    ("% User Time", timer),
                    ("% C1 Time", timer),
                    ("% C2 Time", timer),
                    ("% C3 Time", timer),
                    ("Interrupts/sec", count),
                    ("DPCs Queued/sec", count),
                    ("Clock Interrupts/sec", count),
                    ("Idle Break Events/sec", bulk),
                    ("Parking Status", raw),
                    ("Processor Frequency", raw),
                    ("% Processor Performance", T::PERF_AVERAGE_BULK),
                    ("% Processor Utility", T::PERF_AVERAGE_BULK),
                    ("% Privileged Utility", T::PERF_AVERAGE_BULK),
                ],
            ),
            info(
                "Memory",
                false,
                &[
                    ("Available Bytes", large),
                    ("Cache Bytes", large),
                    ("Cache Bytes Peak", large),
                    ("Cache Faults/sec", count),
                    ("Commit Limit", large),
                    ("Committed Bytes", large),
                    ("Demand Zero Faults/sec", count),
                    ("Free & Zero Page List Bytes", large),
                    ("Free System Page Table Entries", raw),
                    ("Modified Page List Bytes", large),
                    ("Page Faults/sec", count),
                    ("Page Reads/sec", count),
                    ("Pages Input/sec", count),
                    ("Pages Output/sec", count),
                    ("Pages/sec", count),
                    ("Page Writes/sec", count),
                    ("Pool Nonpaged Allocs", raw),
                    ("Pool Nonpaged Bytes", large),
                    ("Pool Paged Allocs", raw),
                    ("Pool Paged Bytes", large),
                    ("Pool Paged Resident Bytes", large),
                    ("Standby Cache Core Bytes", large),
                    ("Standby Cache Normal Priority Bytes", large),
                    ("Standby Cache Reserve Bytes", large),
                    ("System Cache Resident Bytes", large),
                    ("System Code Resident Bytes", large),
                    ("System Code Total Bytes", large),
                    ("System Driver Resident Bytes", large),
                    ("System Driver Total Bytes", large),
                    ("Transition Faults/sec", count),
                    ("Transition Pages RePurposed/sec", count),
                    ("Write Copies/sec", count),
                ],
            ),
            info("LogicalDisk", true, &logical),
            info("PhysicalDisk", true, disk),
            info(
                "Network Interface",
                true,
                &[
                    ("Bytes Received/sec", bulk),
                    ("Bytes Sent/sec", bulk),
                    ("Bytes Total/sec", bulk),
                    ("Output Queue Length", raw),
                    ("Packets Outbound Discarded", raw),
                    ("Packets Outbound Errors", raw),
                    ("Packets Received Discarded", raw),
                    ("Packets Received Errors", raw),
                    ("Packets Received/sec", bulk),
                    ("Packets Received Unknown", raw),
                    ("Packets/sec", bulk),
                    ("Packets Sent/sec", bulk),
                    ("Current Bandwidth", raw),
                ],
            ),
            info(
                "System",
                false,
                &[
                    ("Context Switches/sec", count),
                    ("Exception Dispatches/sec", count),
                    ("System Calls/sec", count),
                    ("Processes", raw),
                    ("Threads", raw),
                    ("Processor Queue Length", raw),
                    ("System Up Time", T::PERF_ELAPSED_TIME),
                ],
            ),
            info(
                "Process",
                true,
                &[
                    ("% Processor Time", timer),
                    ("% User Time", timer),
                    ("% Privileged Time", timer),
                    ("Elapsed Time", T::PERF_ELAPSED_TIME),
                    ("ID Process", raw),
                    ("Handle Count", raw),
                    ("IO Read Bytes/sec", bulk),
                    ("IO Write Bytes/sec", bulk),
                    ("IO Other Bytes/sec", bulk),
                    ("IO Read Operations/sec", bulk),
                    ("IO Write Operations/sec", bulk),
                    ("IO Other Operations/sec", bulk),
                    ("Page Faults/sec", count),
                    ("Page File Bytes", large),
                    ("Pool Nonpaged Bytes", raw),
                    ("Pool Paged Bytes", raw),
                    ("Priority Base", raw),
                    ("Private Bytes", large),
                    ("Thread Count", raw),
                    ("Virtual Bytes", large),
                    ("Working Set", large),
                    ("Working Set - Private", large),
                    ("Working Set Peak", large),
                ],
            ),
        ],
        ..Default::default()
    }
}

#[test]
fn windows_exporter_names_match_the_documented_tables() {
    let table = include_str!("fixtures/windows_exporter/v0.31-metrics.tsv");
    let mut documented = BTreeSet::new();
    let mut not_from_counters = BTreeSet::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 4, "{line}");
        let labels = if f[2] == "-" {
            String::new()
        } else {
            f[2].to_string()
        };
        match f[0].strip_prefix('!') {
            Some(name) => not_from_counters.insert(name.to_string()),
            None => documented.insert((f[0].to_string(), f[1].to_string(), labels)),
        };
    }
    let plan = compat::windows_exporter(&windows_catalog(), Some(&[]));
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let mut produced = BTreeSet::new();
    for c in &plan.collectors {
        assert!(compat::COLLECTOR_NAMES.contains(&c.name.as_str()));
        for s in c.series() {
            let kind = match s.kind {
                MetricKind::Counter => "counter",
                MetricKind::Gauge => "gauge",
                MetricKind::Summary => "summary",
                other => panic!("a kind windows_exporter's tables do not have: {other:?}"),
            };
            produced.insert((s.family.to_string(), kind.to_string(), s.labels.join(",")));
        }
    }
    let missing: Vec<_> = documented.difference(&produced).collect();
    let extra: Vec<_> = produced.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "documented but not produced: {missing:?}"
    );
    assert!(extra.is_empty(), "produced but not documented: {extra:?}");
    for name in &not_from_counters {
        assert!(!produced.iter().any(|(n, _, _)| n == name), "{name}");
    }
}

/// A Process object (230) at 100 ns time 132e15: (name, PID, page faults, CPU time) per instance,
/// named as the sources name them.
fn process_snapshot(rows: &[(&str, u32, u32, u64)]) -> Snapshot {
    let process = Object::new(230)
        .named("Process")
        .with_counters(vec![
            CounterDefinition::new(0, T::PERF_COUNTER_RAWCOUNT).named("ID Process"),
            CounterDefinition::new(0, T::PERF_COUNTER_COUNTER).named("Page Faults/sec"),
            CounterDefinition::new(0, T::PERF_100NSEC_TIMER).named("% Processor Time"),
        ])
        .with_instances(
            rows.iter()
                .map(|&(name, pid, faults, time)| {
                    let values = vec![Value::U32(pid), Value::U32(faults), Value::U64(time)];
                    Instance::new(name.split('#').next().unwrap(), values)
                })
                .collect(),
        );
    Snapshot::new("HOST")
        .with_clock(SampleClock {
            perf_time: 1,
            perf_freq: 10_000_000,
            perf_time_100ns: 132_000_000_000_000_000,
        })
        .with_objects(vec![process])
}

fn process_plan() -> Plan {
    let catalog = Catalog {
        objects: vec![info(
            "Process",
            true,
            &[
                ("ID Process", T::PERF_COUNTER_RAWCOUNT),
                ("Page Faults/sec", T::PERF_COUNTER_COUNTER),
                ("% Processor Time", T::PERF_100NSEC_TIMER),
            ],
        )],
        ..Default::default()
    };
    let plan = ExportConfig::default().with_process(&[]).plan(&catalog);
    assert_eq!(
        plan.collectors[0].request.objects[0].counters,
        ["Page Faults/sec", "% Processor Time", "ID Process"]
    );
    plan
}

#[test]
fn zero_dips_never_reach_prometheus_and_32_bit_counters_never_wrap() {
    let plan = process_plan();
    let mut exporter = Exporter::new();
    let near_top = u32::MAX - 99;
    // (faults, cpu time in 100 ns) per scrape: a 32-bit wrap of the faults, and one scrape where the
    // provider reports 0 CPU time for the same PID (the rate() = 800 % bug).
    let scrapes: [(u32, u64); 4] = [
        (near_top, 1_000_000_000),
        (400, 0),
        (900, 1_010_000_000),
        (1000, 1_020_000_000),
    ];
    let mut got = Vec::new();
    for (faults, time) in scrapes {
        let s = process_snapshot(&[("app", 42, faults, time), ("_Total", 0, 1, 1)]);
        got.push(samples(&render_snapshot(&plan, &mut exporter, &s)).join("\n"));
    }
    let wrap = 1u64 << 32;
    let expect = |faults: u64, secs: &str| {
        format!(
            "perfcounters_process_page_faults_total{{instance_name=\"app\",process_id=\"42\"}} {faults}\n\
             perfcounters_process_processor_seconds_total{{instance_name=\"app\",process_id=\"42\"}} {secs}"
        )
    };
    assert_eq!(
        got,
        [
            expect(u64::from(near_top), "100"),
            // both drops are held at the previous value
            expect(u64::from(near_top), "100"),
            // the faults stayed low: a wrap, carried into 64 bits; the CPU time is back: no reset
            expect(wrap + 900, "101"),
            expect(wrap + 1000, "102"),
        ]
    );
}

#[test]
fn duplicate_process_rows_export_once() {
    // Two rows with the same name and PID (the PID 0 duplicates windows_exporter reports as
    // "collected before with the same name and label values"): the first one counts.
    let plan = process_plan();
    let s = process_snapshot(&[
        ("Idle", 0, 5, 70),
        ("Idle#1", 0, 6, 80),
        ("app", 7, 1, 10_000_000),
    ]);
    let text = render_snapshot(&plan, &mut Exporter::new(), &s);
    assert_eq!(
        samples(&text),
        [
            r#"perfcounters_process_page_faults_total{instance_name="Idle",process_id="0"} 5"#,
            r#"perfcounters_process_page_faults_total{instance_name="app",process_id="7"} 1"#,
            r#"perfcounters_process_processor_seconds_total{instance_name="Idle",process_id="0"} 0.000007"#,
            r#"perfcounters_process_processor_seconds_total{instance_name="app",process_id="7"} 1"#,
        ]
    );
}

// ------------------------------------------------------------------------------------------------
// Real Windows data: the V1 blocks of a Performance Monitor log written by Windows Vista.

/// The samples of `pal-vista-SamplePerfmonLog.blg` (../shared/data) as snapshots: each sample's V1
/// blocks (one per object) joined into one snapshot, each object keeping its block's clock, named
/// from the machine's name table embedded in the log.
fn vista_snapshots() -> Option<Vec<Snapshot>> {
    use perfcounters::format::blg::{BlgReader, RecordKind, SubRecord};
    use perfcounters::snapshot::SampleClock;
    let path = shared_data::dir("the real Windows binary logs")?
        .join("blg/pal-vista-SamplePerfmonLog.blg");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = BlgReader::new(&bytes[..]).unwrap();
    let mut names = perfcounters::names::NameTable::builtin_english().clone();
    let mut samples = Vec::new();
    while let Some(record) = reader.next_record() {
        let record = record.unwrap();
        match record.kind {
            RecordKind::NameTable => names.merge(&record.name_chunk().unwrap().table().unwrap()),
            RecordKind::Sample => {
                let mut joined: Option<Snapshot> = None;
                for sub in record.sample().unwrap().sub_records() {
                    let SubRecord::Block(b) = sub else { continue };
                    let s = b.parse().unwrap().to_snapshot().unwrap();
                    let clock = SampleClock {
                        perf_time: s.perf_time,
                        perf_freq: s.perf_freq,
                        perf_time_100ns: s.perf_time_100ns,
                    };
                    match &mut joined {
                        None => joined = Some(s),
                        Some(j) => j.objects.extend(s.objects.into_iter().map(|mut o| {
                            o.sample_clock = Some(clock);
                            o
                        })),
                    }
                }
                if let Some(s) = joined {
                    samples.push(s);
                }
            }
            _ => {}
        }
    }
    for s in &mut samples {
        names.apply(s);
    }
    Some(samples)
}

#[test]
fn windows_vista_blocks_export_consistently_with_the_pdh_formulas() {
    use perfcounters::query::Query;
    use perfcounters::FormatOptions;
    let Some(samples) = vista_snapshots() else {
        return;
    };
    assert_eq!(samples.len(), 11);
    let catalog = Catalog::of_snapshot(&samples[0], None);
    // Vista has no Processor Information: the default set and the cpu collector use Processor.
    let native = ExportConfig::default_set(&catalog)
        .with_process(&[])
        .plan(&catalog);
    assert!(native.problems.is_empty(), "{:?}", native.problems);
    let compat = compat::windows_exporter(&catalog, Some(&[]));
    assert!(compat.problems.is_empty(), "{:?}", compat.problems);
    assert_eq!(
        collector_names(&compat),
        [
            "cpu",
            "memory",
            "logical_disk",
            "physical_disk",
            "net",
            "system",
            "process"
        ]
    );
    let (mut en, mut ec) = (Exporter::new(), Exporter::new());
    let texts: Vec<(String, String)> = samples[..2]
        .iter()
        .map(|s| {
            (
                render_snapshot(&native, &mut en, s),
                render_snapshot(&compat, &mut ec, s),
            )
        })
        .collect();
    let value = |text: &str, series: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .unwrap_or_else(|| panic!("no {series}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // PDH's values for the same interval, from the query engine.
    let mut q = Query::new(FormatOptions::typeperf());
    for p in [
        r"\Processor(0)\% Processor Time",
        r"\Processor(0)\% Idle Time",
        r"\System\Context Switches/sec",
        r"\PhysicalDisk(0 C:)\Avg. Disk sec/Transfer",
        r"\LogicalDisk(C:)\% Free Space",
        r"\LogicalDisk(C:)\Free Megabytes",
    ] {
        q.add(p).unwrap();
    }
    q.update(&samples[0]);
    let pdh = q.update(&samples[1]);
    let pdh: Vec<Option<f64>> = pdh.iter().map(|v| v.value()).collect();
    // Seconds between the two samples on an object's clock: 100 ns for timers, ticks for counts.
    let dt = |object: &str, ticks: bool| {
        let c = |s: &Snapshot| s.clock_of(s.object_by_name(object).unwrap());
        let (a, b) = (c(&samples[0]), c(&samples[1]));
        if ticks {
            (b.perf_time - a.perf_time) as f64 / a.perf_freq as f64
        } else {
            (b.perf_time_100ns - a.perf_time_100ns) as f64 / 1e7
        }
    };
    let native = |i: usize| texts[i].0.as_str();
    let compat = |i: usize| texts[i].1.as_str();
    // The rate of a series over the interval, from the native (false) or compat (true) text.
    let rate = |in_compat: bool, series: &str, seconds: f64| {
        let text = |i: usize| if in_compat { compat(i) } else { native(i) };
        (value(text(1), series) - value(text(0), series)) / seconds
    };
    // % Processor Time = 100 × (1 − rate of the inverse seconds); % Idle Time = 100 × rate.
    let busy = 100.0
        * (1.0
            - rate(
                false,
                r#"perfcounters_processor_processor_inverse_seconds_total{instance_name="0"}"#,
                dt("Processor", false),
            ));
    assert!(
        (busy - pdh[0].unwrap()).abs() < 1e-6,
        "{busy} vs {:?}",
        pdh[0]
    );
    let idle = 100.0
        * rate(
            true,
            r#"windows_cpu_time_total{core="0",mode="idle"}"#,
            dt("Processor", false),
        );
    assert!(
        (idle - pdh[1].unwrap()).abs() < 1e-6,
        "{idle} vs {:?}",
        pdh[1]
    );
    // Context switches per second on the System block's clock, both names.
    for (in_compat, series) in [
        (false, "perfcounters_system_context_switches_total"),
        (true, "windows_system_context_switches_total"),
    ] {
        let cs = rate(in_compat, series, dt("System", true));
        assert!(
            (cs - pdh[2].unwrap()).abs() < 1e-9 * cs,
            "{cs} vs {:?}",
            pdh[2]
        );
    }
    // The average disk time of the interval: Δ_sum / Δ_count, as PDH's PERF_AVERAGE_TIMER.
    let sum = |i: usize| {
        value(
            native(i),
            r#"perfcounters_physical_disk_disk_transfer_duration_seconds_sum{instance_name="0 C:"}"#,
        )
    };
    let count = |i: usize| {
        value(
            native(i),
            r#"perfcounters_physical_disk_disk_transfer_duration_seconds_count{instance_name="0 C:"}"#,
        )
    };
    let avg = (sum(1) - sum(0)) / (count(1) - count(0));
    assert!(
        (avg - pdh[3].unwrap()).abs() < 1e-9,
        "{avg} vs {:?}",
        pdh[3]
    );
    // Free space: size_bytes × (numerator / base) = free_bytes, and the percentage PDH shows.
    let free = value(compat(1), r#"windows_logical_disk_free_bytes{volume="C:"}"#);
    let size = value(compat(1), r#"windows_logical_disk_size_bytes{volume="C:"}"#);
    assert!(
        (100.0 * free / size - pdh[4].unwrap()).abs() < 0.01,
        "{free} / {size} vs {:?}",
        pdh[4]
    );
    assert_eq!(free, pdh[5].unwrap() * 1048576.0);
    // Process series carry the PID and the bare name; no _Total, no Idle duplicates.
    let procs: Vec<&str> = compat(0)
        .lines()
        .filter(|l| l.starts_with("windows_process_threads{"))
        .collect();
    assert!(procs.len() > 40, "{}", procs.len());
    assert!(procs.iter().all(|l| l.contains(",process_id=\"")));
    assert!(!procs.iter().any(|l| l.contains("_Total")));
}
