//! The generated binary log of the benchmarks: 200 counters (100 single counters and 100 wildcard
//! counters of 4 instances each: rates, timers, fractions, raw counts), 500 columns, sampled until
//! the file reaches the target size (500 MB by default, `PERFCOUNTERS_BLG_BENCH_MB` sets another),
//! written once to `target/blg-bench/counters-<size>.blg` and reused. Included by path from the
//! `blg` and `columnar` benchmarks.
//!
//! A reused log is written again (copied to a new file that takes its name) before every run: how
//! fast the kernel copies a cached file into the reader's buffers depends on how the file came into
//! the page cache and what happened to it since. On the 2-core test VM, `read(2)` of 64 KiB blocks
//! of the 200 MB log ran at 3.9 GB/s from a copy that had been cached for hours (and read by many
//! runs, several parts at once), and at 9–10 GB/s right after it was written (or after the cache
//! was dropped and the file read in order): that moved `blg/relog_csv` by 15 %, and runs of one
//! build against another (each with its own target directory, so its own copy of the log)
//! disagreed by as much.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use perfcounters::format::blg::encode::{
    encode_counter_list, encode_sample_into, BlgEncodeOptions, BlgWriter, InstanceEntry, RawEntry,
    SampleEntry,
};
use perfcounters::format::blg::{BlgCounterSpec, RecordKind};
use perfcounters::{CounterType, PdhStatus};

const SINGLE: usize = 100;
const WILDCARD: usize = 100;
const INSTANCES: [&str; 4] = ["0", "1", "2", "_Total"];

fn types(i: usize) -> (CounterType, i64) {
    use CounterType as T;
    match i % 5 {
        0 => (T::PERF_100NSEC_TIMER_INV, 10_000_000),
        1 => (T::PERF_COUNTER_COUNTER, 2_725_536),
        2 => (T::PERF_COUNTER_LARGE_RAWCOUNT, 0),
        3 => (T::PERF_AVERAGE_BULK, 2_725_536),
        _ => (T::PERF_COUNTER_BULK_COUNT, 2_725_536),
    }
}

fn specs(machine: &str) -> Vec<BlgCounterSpec> {
    let mut v = Vec::new();
    for i in 0..SINGLE + WILDCARD {
        let (counter_type, time_base) = types(i);
        let wildcard = i >= SINGLE;
        v.push(BlgCounterSpec {
            flags: u32::from(wildcard),
            counter_type,
            time_base,
            machine: format!(r"\\{machine}"),
            object: format!("Object {}", i % 10),
            instance: Some(if wildcard {
                "*".into()
            } else {
                "_Total".into()
            }),
            counter: format!("Counter {i}"),
            ..Default::default()
        });
    }
    v
}

/// The raw values of counter `i` in sample `n`: N grows by a varying step, the time stamps by one
/// second's worth of their time base, bases by a varying count.
fn raw(i: usize, salt: usize, n: i64) -> (i64, i64) {
    let (ty, f) = types(i);
    let step = 1000 + ((n * 7919 + (i * 4 + salt) as i64 * 104_729) % 5000);
    let first = n * 6000 + step;
    let second = match ty {
        CounterType::PERF_100NSEC_TIMER_INV => 130_058_022_178_447_225 + n * 10_000_000,
        CounterType::PERF_AVERAGE_BULK => n * 50 + step % 40,
        CounterType::PERF_COUNTER_LARGE_RAWCOUNT => 0,
        _ => 1_000_000_000 + n * f,
    };
    (first, second)
}

fn generate(path: &Path, target: u64, machine: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let tmp = path.with_extension("tmp");
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp).unwrap());
    let mut w = BlgWriter::new(file, BlgEncodeOptions::default().with_64_bit()).unwrap();
    let t0 = 130_057_734_178_440_000i64;
    w.write_record(
        RecordKind::CounterList,
        t0,
        &encode_counter_list(&specs(machine)),
    )
    .unwrap();
    let mut entries = Vec::with_capacity(SINGLE + WILDCARD);
    let mut buf = Vec::new();
    let mut written = 0u64;
    let mut n = 0i64;
    while written < target {
        let t = t0 + n * 10_000_000;
        entries.clear();
        for i in 0..SINGLE + WILDCARD {
            if i < SINGLE {
                let (first, second) = raw(i, 0, n);
                entries.push(SampleEntry::Counter(RawEntry {
                    status: PdhStatus::default(),
                    time_stamp: t,
                    first,
                    second,
                    multi_count: 1,
                }));
            } else {
                let items = INSTANCES
                    .iter()
                    .enumerate()
                    .map(|(k, name)| {
                        let (first, second) = raw(i, k, n);
                        InstanceEntry {
                            name: (*name).into(),
                            multi_count: 0,
                            first,
                            second,
                        }
                    })
                    .collect();
                entries.push(SampleEntry::Instances {
                    status: PdhStatus::default(),
                    time_stamp: t,
                    items,
                });
            }
        }
        encode_sample_into(&mut buf, &entries);
        w.write_record(RecordKind::Sample, t, &buf).unwrap();
        written += buf.len() as u64 + 3 * 72;
        n += 1;
    }
    let mut out = w.finish().unwrap();
    out.flush().unwrap();
    drop(out);
    std::fs::rename(&tmp, path).unwrap();
}

/// Writes the file at `path` again (a copy under a temporary name, then renamed over it), so that
/// every run reads a freshly written file from the page cache (see the module's docs). A plain
/// loop of reads and writes: `std::fs::copy` may copy inside the kernel or share the blocks.
fn rewrite(path: &Path) {
    use std::io::Read;
    let tmp = path.with_extension("blg.tmp");
    let mut from = std::fs::File::open(path).unwrap();
    let mut to = std::fs::File::create(&tmp).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = from.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        to.write_all(&buf[..n]).unwrap();
    }
    to.flush().unwrap();
    drop(to);
    std::fs::rename(&tmp, path).unwrap();
}

/// The log's path and size, generated first when missing, written again otherwise.
pub fn log_path() -> (PathBuf, u64) {
    let mb: u64 = std::env::var("PERFCOUNTERS_BLG_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/blg-bench");
    let path = dir.join(format!("counters-{mb}mb.blg"));
    if path.exists() {
        rewrite(&path);
    } else {
        generate(&path, mb << 20, "BENCH");
    }
    let len = std::fs::metadata(&path).unwrap().len();
    (path, len)
}

/// `count` logs of `mb` MB each, of the machines `BENCH01`, `BENCH02` …, generated first when
/// missing (`target/blg-bench/fleet-<mb>mb/`), written again otherwise: a fleet.
#[allow(dead_code)]
pub fn fleet_paths(count: usize, mb: u64) -> Vec<PathBuf> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../target/blg-bench/fleet-{mb}mb"));
    (1..=count)
        .map(|i| {
            let machine = format!("BENCH{i:02}");
            let path = dir.join(format!("{machine}.blg"));
            if path.exists() {
                rewrite(&path);
            } else {
                generate(&path, mb << 20, &machine);
            }
            path
        })
        .collect()
}
