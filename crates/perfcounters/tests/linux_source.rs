//! The Linux source against fixture procfs/sysfs trees (two collections 10 s apart, exact raw values
//! and the PDH formula of each counter type computed inline) and against this machine's /proc.
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use perfcounters::counter_type::CounterType as T;
use perfcounters::raw::RawCounter;
use perfcounters::snapshot::{Object, Snapshot, Value};
use perfcounters::source::linux::{Clock, ClockReading, FsSpace, FsUsage, LinuxSource};
use perfcounters::source::{Request, Source, SourceErrorKind};

const PT0: i64 = 1_000_000_000;
const FT0: i64 = 132_000_000_000_000_000;
/// Ten seconds in the two clocks.
const DT_NS: i64 = 10_000_000_000;
const DT_100NS: i64 = 100_000_000;

struct TestClock(Arc<Mutex<ClockReading>>);

impl Clock for TestClock {
    fn now(&mut self) -> ClockReading {
        *self.0.lock().unwrap()
    }
}

struct TestSpace(HashMap<&'static str, FsUsage>);

impl FsSpace for TestSpace {
    fn usage(&mut self, mount_point: &str) -> io::Result<FsUsage> {
        self.0
            .get(mount_point)
            .copied()
            .ok_or_else(|| io::Error::new(io::ErrorKind::PermissionDenied, "no access"))
    }
}

const GIB: u64 = 1 << 30;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/procfs")
        .join(name)
}

fn source_at(root: &Path) -> (LinuxSource, Arc<Mutex<ClockReading>>) {
    let clock = Arc::new(Mutex::new(ClockReading {
        perf_time: PT0,
        filetime: FT0,
    }));
    let space = TestSpace(HashMap::from([
        (
            "/",
            FsUsage {
                total_bytes: 100 * GIB,
                available_bytes: 25 * GIB,
            },
        ),
        (
            "/mnt/data disk",
            FsUsage {
                total_bytes: 1_000_000_000,
                available_bytes: 600_000_000,
            },
        ),
        (
            "/btr",
            FsUsage {
                total_bytes: 1 << 43,
                available_bytes: 1 << 41,
            },
        ),
    ]));
    let src = LinuxSource::with_root(root)
        .with_clock(Box::new(TestClock(clock.clone())))
        .with_fs_space(Box::new(space))
        .with_clock_ticks(100)
        .with_page_size(4096);
    (src, clock)
}

/// Collects at t0, moves to the t1 tree 10 s later, collects again.
fn two(request: &Request) -> (Snapshot, Snapshot) {
    let (mut src, clock) = source_at(&fixture("t0"));
    let s0 = src.collect(request).unwrap();
    src.set_root(fixture("t1"));
    *clock.lock().unwrap() = ClockReading {
        perf_time: PT0 + DT_NS,
        filetime: FT0 + DT_100NS,
    };
    let s1 = src.collect(request).unwrap();
    (s0, s1)
}

fn object<'a>(s: &'a Snapshot, name: &str) -> &'a Object {
    s.object_by_name(name).expect("object")
}

fn names(s: &Snapshot, obj: &str) -> Vec<String> {
    object(s, obj)
        .instances()
        .iter()
        .map(|i| i.name().to_owned())
        .collect()
}

fn values_of<'a>(o: &'a Object, inst: &str) -> &'a [Value] {
    if inst.is_empty() {
        match &o.data {
            perfcounters::snapshot::ObjectData::Single(v) => v,
            _ => panic!("not single"),
        }
    } else {
        o.instances()
            .iter()
            .find(|i| i.name() == inst)
            .unwrap_or_else(|| panic!("no instance {inst}"))
            .values()
    }
}

/// The PDH raw counter of `obj(inst)\counter` ("" = single-instance).
fn raw(s: &Snapshot, obj: &str, inst: &str, counter: &str) -> RawCounter {
    let o = object(s, obj);
    let i = o.counter_position_by_name(counter).expect("counter");
    s.raw_counter(o, values_of(o, inst), i).unwrap()
}

/// The standard PDH formula for the counter's type, computed here from two raw samples.
fn value(s0: &Snapshot, s1: &Snapshot, obj: &str, inst: &str, counter: &str) -> f64 {
    let o = object(s1, obj);
    let ty = o.counters[o.counter_position_by_name(counter).unwrap()].counter_type;
    let f = s1.time_base(o, ty) as f64;
    let new = raw(s1, obj, inst, counter);
    let old = raw(s0, obj, inst, counter);
    let dn = (new.first - old.first) as f64;
    let dd = (new.second - old.second) as f64;
    match ty {
        T::PERF_100NSEC_TIMER => 100.0 * dn / dd,
        T::PERF_100NSEC_TIMER_INV => 100.0 * (1.0 - dn / dd),
        T::PERF_COUNTER_BULK_COUNT => dn / (dd / f),
        T::PERF_AVERAGE_TIMER => (dn / f) / dd,
        T::PERF_AVERAGE_BULK | T::PERF_COUNTER_100NS_QUEUELEN_TYPE => dn / dd,
        T::PERF_RAW_FRACTION => 100.0 * new.first as f64 / new.second as f64,
        T::PERF_ELAPSED_TIME => (new.second - new.first) as f64 / f,
        T::PERF_COUNTER_RAWCOUNT | T::PERF_COUNTER_LARGE_RAWCOUNT => new.first as f64,
        other => panic!("unexpected type {other:?}"),
    }
}

#[track_caller]
fn close(actual: f64, expected: f64) {
    let tol = 1e-9 * expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tol,
        "got {actual}, expected {expected}"
    );
}

#[test]
fn processor_times_and_interrupts() {
    let (s0, s1) = two(&Request::new().all_of("processor"));
    assert_eq!(names(&s1, "Processor"), ["0", "1", "_Total"]);
    // cpu0 at t0: idle 1000 + iowait 50 jiffies at 100 Hz = 10.5 s = 105,000,000 × 100 ns.
    assert_eq!(
        raw(&s0, "Processor", "0", "% Processor Time"),
        RawCounter::new(105_000_000, FT0).with_time(FT0)
    );
    // _Total is the average: (2000 + 100) / 2 CPUs.
    assert_eq!(
        raw(&s0, "Processor", "_Total", "% Processor Time").first,
        105_000_000
    );
    let v = |inst, c| value(&s0, &s1, "Processor", inst, c);
    // cpu0 over 10 s: user 300, nice 100, system 150, idle 300, iowait 50, irq 50, softirq 50.
    close(v("0", "% Processor Time"), 65.0);
    close(v("0", "% User Time"), 40.0);
    close(v("0", "% Privileged Time"), 25.0);
    close(v("0", "% Interrupt Time"), 5.0);
    close(v("0", "% DPC Time"), 5.0);
    close(v("0", "% Idle Time"), 35.0);
    // cpu1: user 100, system 50, idle 800, irq 25, softirq 25.
    close(v("1", "% Processor Time"), 20.0);
    close(v("1", "% User Time"), 10.0);
    close(v("1", "% Privileged Time"), 10.0);
    close(v("_Total", "% Processor Time"), 42.5);
    close(v("_Total", "% User Time"), 25.0);
    close(v("_Total", "% Privileged Time"), 17.5);
    // /proc/interrupts columns: 5049 → 6049 and 4001 → 4501; _Total from 'intr': 10000 → 12000.
    assert_eq!(raw(&s0, "Processor", "0", "Interrupts/sec").first, 5049);
    assert_eq!(raw(&s0, "Processor", "0", "Interrupts/sec").second, PT0);
    close(v("0", "Interrupts/sec"), 100.0);
    close(v("1", "Interrupts/sec"), 50.0);
    close(v("_Total", "Interrupts/sec"), 200.0);
}

#[test]
fn processor_information_by_numa_node() {
    let (s0, s1) = two(&Request::new().object("Processor Information", &["% Processor Time"]));
    assert_eq!(
        names(&s1, "Processor Information"),
        ["0,0", "0,_Total", "1,0", "1,_Total", "_Total"]
    );
    let v = |inst| value(&s0, &s1, "Processor Information", inst, "% Processor Time");
    close(v("0,0"), 65.0);
    close(v("0,_Total"), 65.0);
    close(v("1,0"), 20.0);
    close(v("1,_Total"), 20.0);
    close(v("_Total"), 42.5);
    assert_eq!(object(&s1, "Processor Information").index, 0);
}

#[test]
fn memory_counters() {
    let (s0, s1) = two(&Request::new().all_of("Memory"));
    let r0 = |c| raw(&s0, "Memory", "", c).first;
    assert_eq!(r0("Available Bytes"), 4_000_000 * 1024);
    assert_eq!(r0("Available KBytes"), 4_000_000);
    assert_eq!(r0("Available MBytes"), 3906);
    assert_eq!(r0("Committed Bytes"), 5_000_000 * 1024);
    // overcommit_memory 0: MemTotal + SwapTotal.
    assert_eq!(r0("Commit Limit"), 10_000_000 * 1024);
    assert_eq!(
        raw(&s0, "Memory", "", "% Committed Bytes In Use"),
        RawCounter::new(5_000_000, 10_000_000).with_time(FT0)
    );
    assert_eq!(r0("Cache Bytes"), 2_500_000 * 1024);
    assert_eq!(r0("Pool Paged Bytes"), 300_000 * 1024);
    assert_eq!(r0("Pool Nonpaged Bytes"), 100_000 * 1024);
    let v = |c| value(&s0, &s1, "Memory", "", c);
    close(v("Page Faults/sec"), 500.0);
    close(v("Page Reads/sec"), 10.0);
    close(v("Pages Input/sec"), 2.0);
    close(v("Pages Output/sec"), 4.0);
    close(v("Pages/sec"), 6.0);
    // t1 has overcommit_memory 2: CommitLimit (6,000,000 kB) and Committed_AS 5,400,000 kB.
    assert_eq!(
        raw(&s1, "Memory", "", "Commit Limit").first,
        6_000_000 * 1024
    );
    close(v("% Committed Bytes In Use"), 90.0);
    close(v("Available MBytes"), 3906.0);
}

#[test]
fn system_counters() {
    let (s0, s1) = two(&Request::new().all_of("System"));
    let o = object(&s0, "System");
    assert_eq!((o.perf_time, o.perf_freq), (FT0, 10_000_000));
    // Boot time as a FILETIME: now − 1000 s.
    assert_eq!(
        raw(&s0, "System", "", "System Up Time"),
        RawCounter::new(FT0 - 10_000_000_000, FT0).with_time(FT0)
    );
    close(value(&s0, &s0, "System", "", "System Up Time"), 1000.0);
    close(value(&s0, &s1, "System", "", "System Up Time"), 1010.0);
    let r = |s, c| raw(s, "System", "", c).first;
    // procs_running 3 on 2 CPUs → 1 waiting; then 1 → 0.
    assert_eq!(r(&s0, "Processor Queue Length"), 1);
    assert_eq!(r(&s1, "Processor Queue Length"), 0);
    // Numeric directories of /proc, including the one whose process vanished.
    assert_eq!(r(&s0, "Processes"), 6);
    assert_eq!(r(&s0, "Threads"), 150);
    assert_eq!(r(&s1, "Threads"), 160);
    close(value(&s0, &s1, "System", "", "Context Switches/sec"), 300.0);
}

#[test]
fn process_instances_and_counters() {
    let (s0, s1) = two(&Request::new().all_of("Process"));
    // PID order 1, 100, 150, 200, 300; 400 has no stat (vanished) and is skipped.
    assert_eq!(
        names(&s1, "Process"),
        ["systemd", "bash", "bash#1", "bash#2", "a) (b c", "_Total"]
    );
    let p = object(&s1, "Process");
    let ids: Vec<i32> = p.instances().iter().map(|i| i.unique_id).collect();
    assert_eq!(ids, [1, 100, 150, 200, 300, -1]);
    assert_eq!(p.instances()[3].raw_name(), "bash");
    let r = |inst, c| raw(&s1, "Process", inst, c).first;
    assert_eq!(r("bash#1", "ID Process"), 150);
    assert_eq!(r("bash#1", "Creating Process ID"), 100);
    assert_eq!(r("bash#2", "Thread Count"), 4);
    assert_eq!(r("_Total", "Thread Count"), 9);
    assert_eq!(r("_Total", "ID Process"), 0);
    let prio: Vec<i64> = ["systemd", "bash", "bash#1", "bash#2", "a) (b c"]
        .iter()
        .map(|i| r(i, "Priority Base"))
        .collect();
    assert_eq!(prio, [8, 8, 6, 10, 24]);
    // fd entries: 4, 3, 1, 2, and 0 where /proc/300/fd cannot be listed.
    assert_eq!(r("systemd", "Handle Count"), 4);
    assert_eq!(r("a) (b c", "Handle Count"), 0);
    assert_eq!(r("_Total", "Handle Count"), 10);
    assert_eq!(r("bash", "Working Set"), 1000 * 4096);
    assert_eq!(r("bash", "Working Set Peak"), 5000 * 1024);
    assert_eq!(r("bash#2", "Working Set - Private"), 3500 * 1024);
    assert_eq!(r("bash#2", "Private Bytes"), 3700 * 1024);
    assert_eq!(r("bash#2", "Page File Bytes"), 200 * 1024);
    assert_eq!(r("bash", "Virtual Bytes"), 20_000_000);
    assert_eq!(r("systemd", "Virtual Bytes Peak"), 120_000 * 1024);
    assert_eq!(r("_Total", "Virtual Bytes"), 180_000_000);
    // An unreadable /proc/300/io gives 0.
    assert_eq!(r("a) (b c", "IO Read Bytes/sec"), 0);
    let v = |inst, c| value(&s0, &s1, "Process", inst, c);
    // bash (100): utime 100 → 300, stime 50 → 100 jiffies over 10 s.
    close(v("bash", "% Processor Time"), 25.0);
    close(v("bash", "% User Time"), 20.0);
    close(v("bash", "% Privileged Time"), 5.0);
    close(v("systemd", "% Processor Time"), 1.5);
    close(v("_Total", "% Processor Time"), 26.5);
    close(v("systemd", "Page Faults/sec"), 10.0);
    close(v("systemd", "IO Read Bytes/sec"), 10_000.0);
    close(v("systemd", "IO Write Bytes/sec"), 2_000.0);
    close(v("systemd", "IO Read Operations/sec"), 10.0);
    close(v("systemd", "IO Write Operations/sec"), 5.0);
    close(v("_Total", "IO Read Bytes/sec"), 10_000.0);
    // bash started 500 s after boot; uptime 1000 s at t0, 1010 s at t1.
    close(value(&s0, &s0, "Process", "bash", "Elapsed Time"), 500.0);
    close(v("bash", "Elapsed Time"), 510.0);
    close(v("_Total", "Elapsed Time"), 0.0);
}

#[test]
fn physical_disks() {
    let (s0, s1) = two(&Request::new().all_of("PhysicalDisk"));
    // Partitions, loop and dm devices are not physical disks.
    assert_eq!(names(&s1, "PhysicalDisk"), ["sda", "nvme0n1", "_Total"]);
    // Avg. Disk sec/Read: N = time reading in ns (5000 ms), base = reads.
    assert_eq!(
        raw(&s0, "PhysicalDisk", "sda", "Avg. Disk sec/Read"),
        RawCounter::new(5_000_000_000, 1000).with_time(FT0)
    );
    assert_eq!(
        raw(&s0, "PhysicalDisk", "sda", "Avg. Disk Queue Length"),
        RawCounter::new(130_000_000, FT0).with_time(FT0)
    );
    let v = |inst, c| value(&s0, &s1, "PhysicalDisk", inst, c);
    // sda over 10 s: +100 reads (2000 sectors, 400 ms), +300 writes (6000 sectors, 900 ms),
    // 2000 ms busy, 1500 weighted ms.
    close(v("sda", "Disk Reads/sec"), 10.0);
    close(v("sda", "Disk Writes/sec"), 30.0);
    close(v("sda", "Disk Transfers/sec"), 40.0);
    close(v("sda", "Disk Read Bytes/sec"), 102_400.0);
    close(v("sda", "Disk Write Bytes/sec"), 307_200.0);
    close(v("sda", "Disk Bytes/sec"), 409_600.0);
    close(v("sda", "Avg. Disk sec/Read"), 0.004);
    close(v("sda", "Avg. Disk sec/Write"), 0.003);
    close(v("sda", "Avg. Disk sec/Transfer"), 0.00325);
    close(v("sda", "Avg. Disk Bytes/Read"), 10_240.0);
    close(v("sda", "Avg. Disk Bytes/Write"), 10_240.0);
    close(v("sda", "Avg. Disk Bytes/Transfer"), 10_240.0);
    close(v("sda", "% Disk Time"), 13.0);
    close(v("sda", "% Disk Read Time"), 4.0);
    close(v("sda", "% Disk Write Time"), 9.0);
    close(v("sda", "% Idle Time"), 80.0);
    close(v("sda", "Avg. Disk Queue Length"), 0.15);
    close(v("sda", "Avg. Disk Read Queue Length"), 0.04);
    close(v("sda", "Avg. Disk Write Queue Length"), 0.09);
    close(v("sda", "Current Disk Queue Length"), 1.0);
    // nvme0n1: +200 reads (8000 sectors, 200 ms), no writes, 1000 ms busy.
    close(v("nvme0n1", "Avg. Disk sec/Read"), 0.001);
    close(v("nvme0n1", "% Idle Time"), 90.0);
    // _Total: sums, with the time percentages averaged over the 2 disks.
    close(v("_Total", "Disk Reads/sec"), 30.0);
    close(v("_Total", "Avg. Disk sec/Read"), 0.002);
    close(v("_Total", "% Disk Time"), 7.5);
    close(v("_Total", "% Idle Time"), 85.0);
    close(v("_Total", "Avg. Disk Queue Length"), 0.17);
    close(v("_Total", "Current Disk Queue Length"), 1.0);
}

#[test]
fn logical_disks() {
    let (s0, s1) = two(&Request::new().all_of("LogicalDisk"));
    // Block-device mounts; /srv is a second mount of sda1; btrfs (device 0:40) is matched by name.
    assert_eq!(
        names(&s1, "LogicalDisk"),
        ["/", "/mnt/data disk", "/var", "/btr", "_Total"]
    );
    let v = |inst, c| value(&s0, &s1, "LogicalDisk", inst, c);
    // sda1: +100 reads, +300 writes, 400 + 900 ms, 2000 ms busy.
    close(v("/", "Disk Transfers/sec"), 40.0);
    close(v("/", "% Idle Time"), 80.0);
    close(v("/", "% Free Space"), 25.0);
    assert_eq!(
        raw(&s1, "LogicalDisk", "/", "% Free Space"),
        // 100 GiB needs 37 bits: both shifted right by 5.
        RawCounter::new(25 << 25, 100 << 25).with_time(FT0 + DT_100NS)
    );
    assert_eq!(
        raw(&s1, "LogicalDisk", "/", "Free Megabytes").first,
        25 * 1024
    );
    close(v("/mnt/data disk", "% Free Space"), 60.0);
    assert_eq!(
        raw(&s1, "LogicalDisk", "/mnt/data disk", "Free Megabytes").first,
        572
    );
    // No space information for /var: 0 of 0.
    assert_eq!(
        raw(&s1, "LogicalDisk", "/var", "% Free Space"),
        RawCounter::new(0, 0).with_time(FT0 + DT_100NS)
    );
    close(v("/btr", "% Free Space"), 25.0);
    close(v("/btr", "Disk Reads/sec"), 20.0);
    // _Total: (25 GiB + 6e8 + 2 TiB) of (100 GiB + 1e9 + 8 TiB), both shifted right by 12 bits.
    let free = (25 * GIB + 600_000_000 + (1 << 41)) >> 12;
    let total = (100 * GIB + 1_000_000_000 + (1 << 43)) >> 12;
    assert_eq!(
        raw(&s1, "LogicalDisk", "_Total", "% Free Space"),
        RawCounter::new(free as i64, total as i64).with_time(FT0 + DT_100NS)
    );
}

#[test]
fn network_interfaces() {
    let (s0, s1) = two(&Request::new().all_of("Network Interface"));
    assert_eq!(names(&s1, "Network Interface"), ["lo", "eth0"]);
    let v = |inst, c| value(&s0, &s1, "Network Interface", inst, c);
    close(v("eth0", "Bytes Received/sec"), 100_000.0);
    close(v("eth0", "Bytes Sent/sec"), 50_000.0);
    close(v("eth0", "Bytes Total/sec"), 150_000.0);
    close(v("eth0", "Packets Received/sec"), 100.0);
    close(v("eth0", "Packets Sent/sec"), 50.0);
    close(v("eth0", "Packets/sec"), 150.0);
    close(v("lo", "Bytes Total/sec"), 2_000.0);
    let r = |inst, c| raw(&s1, "Network Interface", inst, c).first;
    assert_eq!(r("eth0", "Current Bandwidth"), 1_000_000_000);
    assert_eq!(r("lo", "Current Bandwidth"), 0);
    assert_eq!(r("eth0", "Packets Received Errors"), 5);
    assert_eq!(r("eth0", "Packets Outbound Errors"), 1);
    assert_eq!(r("eth0", "Packets Received Discarded"), 3);
    assert_eq!(r("eth0", "Packets Outbound Discarded"), 4);
}

#[test]
fn snapshot_shape_and_names() {
    let (mut src, _) = source_at(&fixture("t0"));
    let req = Request::new()
        .object("PHYSICALDISK", &["avg. disk sec/read", "% Disk Time"])
        .object("memory", &["% Committed Bytes In Use"]);
    let s = src.collect(&req).unwrap();
    assert_eq!(s.system_name, "fixture-host");
    assert_eq!(
        (s.perf_time, s.perf_freq, s.perf_time_100ns),
        (PT0, 1_000_000_000, FT0)
    );
    assert_eq!(s.system_time.year, 2019);
    assert_eq!(s.objects.len(), 2);
    // Table order; the base follows its counter and is linked.
    let d = &s.objects[0];
    assert_eq!((d.name.as_deref(), d.index), (Some("PhysicalDisk"), 234));
    let defs: Vec<(&str, T, Option<usize>, u32)> = d
        .counters
        .iter()
        .map(|c| (c.name.as_deref().unwrap(), c.counter_type, c.base, c.size))
        .collect();
    assert_eq!(
        defs,
        [
            ("% Disk Time", T::PERF_100NSEC_TIMER, None, 8),
            ("Avg. Disk sec/Read", T::PERF_AVERAGE_TIMER, Some(2), 8),
            ("Avg. Disk sec/Read", T::PERF_AVERAGE_BASE, None, 4),
        ]
    );
    assert_eq!(d.counters[0].index, 200);
    let m = &s.objects[1];
    assert_eq!(m.counters.len(), 2);
    assert_eq!(m.counters[0].base, Some(1));
    assert_eq!(m.counters[1].counter_type, T::PERF_RAW_BASE);

    let e = src
        .collect(&Request::new().all_of("Paging File"))
        .unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::UnknownObject);
    let e = src
        .collect(&Request::new().object("Memory", &["Bogus/sec"]))
        .unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::UnknownCounter);
    assert_eq!(
        e.to_string(),
        "object 'Memory' has no counter named 'Bogus/sec'"
    );

    let cat = src.catalog().unwrap();
    let names: Vec<&str> = cat.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Processor",
            "Processor Information",
            "Memory",
            "System",
            "Process",
            "PhysicalDisk",
            "LogicalDisk",
            "Network Interface"
        ]
    );
    let pt = cat
        .object("processor")
        .unwrap()
        .counter("% PROCESSOR TIME")
        .unwrap();
    assert_eq!((pt.index, pt.counter_type), (6, T::PERF_100NSEC_TIMER_INV));
    assert!(!cat.object("Memory").unwrap().multi_instance);
    let sec = cat
        .object("LogicalDisk")
        .unwrap()
        .counter("Avg. Disk sec/Write")
        .unwrap();
    assert_eq!(sec.base_type, Some(T::PERF_AVERAGE_BASE));

    assert_eq!(src.instances("Processor").unwrap(), ["0", "1", "_Total"]);
    assert!(src.instances("Memory").unwrap().is_empty());
    assert_eq!(
        src.instances("process").unwrap(),
        ["systemd", "bash", "bash#1", "bash#2", "a) (b c", "_Total"]
    );
    let boxed: Box<dyn Source> = Box::new(src);
    drop(boxed);
}

// -- malformed files: built in a scratch directory ------------------------------------------

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("perfcounters-linux-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proc")).unwrap();
        Scratch(dir)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn malformed_files_name_file_and_line() {
    let dir = Scratch::new("malformed");
    let (mut src, _) = source_at(&dir.0);
    let p = |rel: &str| dir.0.join(rel).display().to_string();

    dir.write("proc/stat", "cpu 1 2 3 4\ncpu0 1 2\n");
    let e = src
        .collect(&Request::new().all_of("Processor"))
        .unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Parse);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: line 2: expected at least 4 numbers after 'cpu0', found 2",
            p("proc/stat")
        )
    );

    dir.write(
        "proc/diskstats",
        "   8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n   8 1 sda1 1 2 x\n",
    );
    let e = src
        .collect(&Request::new().all_of("PhysicalDisk"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: line 2: 'x' is not a number (after 'sda1')",
            p("proc/diskstats")
        )
    );

    dir.write("proc/meminfo", "MemTotal: 100 kB\nMemFree: 50 kB\n");
    let e = src
        .collect(&Request::new().object("Memory", &["Committed Bytes"]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: no 'Committed_AS' line", p("proc/meminfo"))
    );
    // Without MemAvailable, Available Bytes falls back to MemFree (+ Buffers + Cached).
    let s = src
        .collect(&Request::new().object("Memory", &["Available Bytes"]))
        .unwrap();
    assert_eq!(raw(&s, "Memory", "", "Available Bytes").first, 50 * 1024);

    dir.write("proc/net/dev", "h\nh\n  eth0: 1 2 3\n");
    let e = src
        .collect(&Request::new().all_of("Network Interface"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: line 3: expected 16 numbers after 'eth0:', found 3",
            p("proc/net/dev")
        )
    );

    // Process: a broken status file matters only when a counter needs it.
    dir.write(
        "proc/7/stat",
        "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 1000 1 0\n",
    );
    dir.write("proc/7/status", "VmPeak: lots kB\n");
    let s = src
        .collect(&Request::new().object("Process", &["ID Process"]))
        .unwrap();
    assert_eq!(names(&s, "Process"), ["x", "_Total"]);
    let e = src
        .collect(&Request::new().object("Process", &["Virtual Bytes Peak"]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: line 1: 'lots' is not a number (after 'VmPeak')",
            p("proc/7/status")
        )
    );
    dir.write("proc/7/stat", "7 (x) S 1 7\n");
    let e = src
        .collect(&Request::new().object("Process", &["ID Process"]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: line 1: expected 22 fields after the command name, found 3",
            p("proc/7/stat")
        )
    );

    // System shares the (still malformed) /proc/stat.
    let e = src.collect(&Request::new().all_of("System")).unwrap_err();
    assert_eq!(e.path(), Some(dir.0.join("proc/stat").as_path()));
    assert_eq!(e.line(), Some(2));
    dir.write(
        "proc/stat",
        "cpu 1 2 3 4\ncpu0 1 2 3 4\nctxt 5\nprocs_running 1\n",
    );
    let e = src.collect(&Request::new().all_of("System")).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Io);
    assert_eq!(e.path(), Some(dir.0.join("proc/uptime").as_path()));
    assert_eq!(e.to_string(), p("proc/uptime"));
    assert!(perfcounters::ErrorChain(&e)
        .to_string()
        .starts_with(&format!("{}: ", p("proc/uptime"))));
}

// -- the running system ----------------------------------------------------------------------

#[test]
fn live_proc_is_plausible() {
    let mut src = LinuxSource::new();
    let req = Request::new()
        .object("Processor", &["% Processor Time"])
        .object("Memory", &["Available Bytes"])
        .object("System", &["System Up Time", "Processes"])
        .object(
            "Process",
            &["ID Process", "Working Set", "% Processor Time"],
        )
        .all_of("Network Interface")
        .all_of("PhysicalDisk")
        .all_of("LogicalDisk")
        .object("Processor Information", &["% Processor Time"]);
    let s0 = src.collect(&req).unwrap();
    let s1 = src.collect(&req).unwrap();
    assert!(s1.perf_time >= s0.perf_time);
    assert!(s1.perf_time_100ns >= s0.perf_time_100ns);
    assert!(!s1.system_name.is_empty());

    assert!(names(&s1, "Processor").iter().any(|n| n == "_Total"));
    assert!(names(&s1, "Processor Information")
        .iter()
        .any(|n| n == "_Total"));

    let mem_total_kb = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<i64>().ok())
        .unwrap();
    let avail = raw(&s1, "Memory", "", "Available Bytes").first;
    assert!(avail > 0 && avail <= mem_total_kb * 1024, "{avail}");

    let up = value(&s1, &s1, "System", "", "System Up Time");
    assert!(up > 0.0, "{up}");
    assert!(raw(&s1, "System", "", "Processes").first >= 1);

    let me = i64::from(std::process::id());
    let p = object(&s1, "Process");
    let idx = p.counter_position_by_name("ID Process").unwrap();
    let mine = p
        .instances()
        .iter()
        .find(|i| i.values()[idx].as_i64() == Some(me))
        .expect("this process is listed");
    assert_eq!(i64::from(mine.unique_id), me);
    assert!(raw(&s1, "Process", mine.name(), "Working Set").first > 0);
    let cpu = value(&s0, &s1, "Process", mine.name(), "% Processor Time");
    assert!(cpu >= 0.0, "{cpu}");
}
