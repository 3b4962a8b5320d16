//! V1 decoding throughput on a large "Global"-like block: a Process object with 500 instances × 30
//! counters and a Thread object with 5,000 instances × 12 counters whose parents point into Process.
//!
//! * `v1/zero_copy_values`: parse, resolve every counter by name once per object, read every value of
//!   every instance through the borrowed views;
//! * `v1/zero_copy_values_and_names`: the same, also decoding every instance name to a `String`;
//! * `v1/to_snapshot`: the owned conversion (definitions, values, parent/child and `#n` names).
//!
//! The `v1_global` group measures the path real callers take, on a larger block of the same shape with
//! realistic process names (about 828 KB):
//!
//! * `v1_global/walk`: every object, every instance name (decoded to text) and every counter value,
//!   through the borrowed views;
//! * `v1_global/snapshot`: the owned snapshot (`PerfDataBlock::to_snapshot`);
//! * `v1_global/query`: one collection of a `Query` of about 200 paths (wildcards and concrete
//!   instances) through the code `watch --replay` runs: the request made once by `Query::request`
//!   from the catalog, then `Query::collect` from a `ReplaySource` over two block files (the file read into the source's
//!   buffer, the whole block validated as `to_snapshot` validates it, the requested objects named
//!   and selected in place, the values computed from the block's bytes over the query's own), with
//!   the first block's samples in the query, so every rate is computed from two consecutive
//!   blocks; the query has collected the first block in place from the same source, as every
//!   collection of `watch` after the second finds them (each iteration starts from fresh copies).
//! * `v1_global/query_steady`: the same collection as `watch` repeats it: one query and one source
//!   collect 16 consecutive blocks in turn (the query's previous samples, positions, values and
//!   instance names are those the previous collection left; every 16, a fresh query and source are
//!   primed, untimed, with two blocks: the first expands the query, the second names the
//!   instances in place).
//!
//! Run: `cargo bench -p perfcounters --bench decode -- --warm-up-time 1 --measurement-time 3`.
//! With `PERFCOUNTERS_BENCH_BLOCK=FILE` set, the `v1_global` block is also written to `FILE` (to feed
//! the same bytes to another implementation).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use perfcounters::format::v1::{encode, PerfDataBlock, RawValue, ValueLayout};
use perfcounters::names::NameTable;
use perfcounters::query::Query;
use perfcounters::snapshot::{CounterDefinition, Instance, Object, SampleClock, Snapshot, Value};
use perfcounters::source::replay::{BlockRecording, ReplaySource};
use perfcounters::source::{Request, Source};
use perfcounters::CounterType;
use perfcounters::FormatOptions;

const PROCESS: u32 = 230;
const THREAD: u32 = 232;

/// (index, name, type) of the counters used by the bench.
fn process_counters() -> Vec<(u32, String, CounterType)> {
    use CounterType as T;
    let mut v = vec![
        (6, "% Processor Time".to_owned(), T::PERF_100NSEC_TIMER),
        (142, "% User Time".into(), T::PERF_100NSEC_TIMER),
        (144, "% Privileged Time".into(), T::PERF_100NSEC_TIMER),
        (
            172,
            "Virtual Bytes Peak".into(),
            T::PERF_COUNTER_LARGE_RAWCOUNT,
        ),
        (174, "Virtual Bytes".into(), T::PERF_COUNTER_LARGE_RAWCOUNT),
        (28, "Page Faults/sec".into(), T::PERF_COUNTER_COUNTER),
        (
            178,
            "Working Set Peak".into(),
            T::PERF_COUNTER_LARGE_RAWCOUNT,
        ),
        (180, "Working Set".into(), T::PERF_COUNTER_LARGE_RAWCOUNT),
        (
            182,
            "Page File Bytes Peak".into(),
            T::PERF_COUNTER_LARGE_RAWCOUNT,
        ),
        (
            184,
            "Page File Bytes".into(),
            T::PERF_COUNTER_LARGE_RAWCOUNT,
        ),
        (186, "Private Bytes".into(), T::PERF_COUNTER_LARGE_RAWCOUNT),
        (680, "Thread Count".into(), T::PERF_COUNTER_RAWCOUNT),
        (682, "Priority Base".into(), T::PERF_COUNTER_RAWCOUNT),
        (684, "Elapsed Time".into(), T::PERF_ELAPSED_TIME),
        (784, "ID Process".into(), T::PERF_COUNTER_RAWCOUNT),
        (1410, "Creating Process ID".into(), T::PERF_COUNTER_RAWCOUNT),
        (56, "Pool Paged Bytes".into(), T::PERF_COUNTER_RAWCOUNT),
        (58, "Pool Nonpaged Bytes".into(), T::PERF_COUNTER_RAWCOUNT),
        (952, "Handle Count".into(), T::PERF_COUNTER_RAWCOUNT),
        (
            1412,
            "IO Read Operations/sec".into(),
            T::PERF_COUNTER_BULK_COUNT,
        ),
        (
            1414,
            "IO Write Operations/sec".into(),
            T::PERF_COUNTER_BULK_COUNT,
        ),
        (
            1416,
            "IO Data Operations/sec".into(),
            T::PERF_COUNTER_BULK_COUNT,
        ),
        (
            1418,
            "IO Other Operations/sec".into(),
            T::PERF_COUNTER_BULK_COUNT,
        ),
        (1420, "IO Read Bytes/sec".into(), T::PERF_COUNTER_BULK_COUNT),
        (
            1422,
            "IO Write Bytes/sec".into(),
            T::PERF_COUNTER_BULK_COUNT,
        ),
        (1424, "IO Data Bytes/sec".into(), T::PERF_COUNTER_BULK_COUNT),
        (
            1426,
            "IO Other Bytes/sec".into(),
            T::PERF_COUNTER_BULK_COUNT,
        ),
        (
            1478,
            "Working Set - Private".into(),
            T::PERF_COUNTER_LARGE_RAWCOUNT,
        ),
    ];
    // A fraction with its base reusing the numerator's index, as real data does (named as the
    // built-in table names 1350, which a replay's table keeps over the bench's own).
    v.push((1350, "% Registry Quota In Use".into(), T::PERF_RAW_FRACTION));
    v.push((1350, "% Registry Quota In Use".into(), T::PERF_RAW_BASE));
    v
}

fn thread_counters() -> Vec<(u32, String, CounterType)> {
    use CounterType as T;
    vec![
        (6, "% Processor Time".to_owned(), T::PERF_100NSEC_TIMER),
        (142, "% User Time".into(), T::PERF_100NSEC_TIMER),
        (144, "% Privileged Time".into(), T::PERF_100NSEC_TIMER),
        (146, "Context Switches/sec".into(), T::PERF_COUNTER_COUNTER),
        (684, "Elapsed Time".into(), T::PERF_ELAPSED_TIME),
        (694, "Priority Current".into(), T::PERF_COUNTER_RAWCOUNT),
        (682, "Priority Base".into(), T::PERF_COUNTER_RAWCOUNT),
        (
            686,
            "Start Address".into(),
            T::PERF_COUNTER_LARGE_RAWCOUNT_HEX,
        ),
        (688, "Thread State".into(), T::PERF_COUNTER_RAWCOUNT),
        (336, "Thread Wait Reason".into(), T::PERF_COUNTER_RAWCOUNT),
        (784, "ID Process".into(), T::PERF_COUNTER_RAWCOUNT),
        (804, "ID Thread".into(), T::PERF_COUNTER_RAWCOUNT),
    ]
}

fn object(
    index: u32,
    counters: &[(u32, String, CounterType)],
    instances: impl Iterator<Item = (String, u32, u32)>,
    generation: u64,
) -> Object {
    let defs: Vec<CounterDefinition> = counters
        .iter()
        .map(|&(index, _, ty)| CounterDefinition::new(index, ty))
        .collect();
    let instances = instances
        .enumerate()
        .map(|(n, (raw_name, parent_object, parent_instance))| {
            let values = defs
                .iter()
                .enumerate()
                .map(|(c, def)| {
                    let x = if def.counter_type == CounterType::PERF_ELAPSED_TIME {
                        // A start time, before the object's clock.
                        132_289_457_285_000_000 + n as u64
                    } else {
                        (n as u64) * 1000 + c as u64 + generation * (c as u64 + 1) * 7
                    };
                    if def.size == 8 {
                        Value::U64(x)
                    } else {
                        Value::U32(x as u32)
                    }
                })
                .collect();
            Instance::new(raw_name, values).with_parent_at(parent_object, parent_instance)
        })
        .collect();
    Object {
        default_counter: 0,
        ..Object::new(index)
    }
    // Process and Thread keep a 100 ns clock for their elapsed times.
    .with_object_clock(
        132_290_312_439_883_752 + generation as i64 * 10_000_000,
        10_000_000,
    )
    .with_counters(defs)
    .with_instances(instances)
}

fn global_block() -> Vec<u8> {
    let process_names = ["svchost", "chrome", "explorer", "System", "RuntimeBroker"];
    let process = object(
        PROCESS,
        &process_counters(),
        (0..500u32).map(|i| (process_names[i as usize % 5].to_owned(), 0, 0)),
        0,
    );
    let thread = object(
        THREAD,
        &thread_counters(),
        (0..5000u32).map(|i| ((i % 10).to_string(), PROCESS, i / 10)),
        0,
    );
    let snap = Snapshot::new("BENCHHOST")
        .with_clock(SampleClock {
            perf_time: 1,
            perf_freq: 10_000_000,
            perf_time_100ns: 132_290_312_439_883_752,
        })
        .with_objects(vec![process, thread]);
    encode(&snap).unwrap()
}

/// Process names of a busy Windows machine, used in rotation (so most names repeat and get `#n`).
const PROCESS_NAMES: &[&str] = &[
    "svchost",
    "chrome",
    "msedge",
    "RuntimeBroker",
    "SearchIndexer",
    "explorer",
    "svchost",
    "conhost",
    "WmiPrvSE",
    "MicrosoftEdgeUpdate",
    "svchost",
    "dwm",
    "SecurityHealthService",
    "taskhostw",
    "svchost",
    "ApplicationFrameHost",
    "dllhost",
    "ShellExperienceHost",
    "svchost",
    "powershell",
];

/// The `v1_global` block: Process (500 × 30 counters) and Thread (5,000 × 12, ten per process, named
/// `0`..`9` with their process as parent). `generation` 1 is the collection one second after 0: later
/// clocks and larger values, as two consecutive collections of a running machine.
pub fn global_block_of(generation: u64) -> Vec<u8> {
    let process = object(
        PROCESS,
        &process_counters(),
        (0..500u32).map(|i| {
            (
                PROCESS_NAMES[i as usize % PROCESS_NAMES.len()].to_owned(),
                0,
                0,
            )
        }),
        generation,
    );
    let thread = object(
        THREAD,
        &thread_counters(),
        (0..5000u32).map(|i| ((i % 10).to_string(), PROCESS, i / 10)),
        generation,
    );
    let second = generation as i64;
    let snap = Snapshot::new("BENCHHOST")
        .with_clock(SampleClock {
            perf_time: 81_234_567_890 + second * 10_000_000,
            perf_freq: 10_000_000,
            perf_time_100ns: 132_290_312_439_883_752 + second * 10_000_000,
        })
        .with_objects(vec![process, thread]);
    encode(&snap).unwrap()
}

/// Every object, every instance name and every counter value, through the borrowed views. Names are
/// decoded into one reused buffer; values are read through the object's `ValueLayout`, which checks
/// each counter block once.
fn walk(bytes: &[u8]) -> u64 {
    let block = PerfDataBlock::parse(bytes).unwrap();
    let mut sum = 0u64;
    let mut defs = Vec::new();
    let mut name = String::new();
    let value = |v: RawValue<'_>| match v {
        RawValue::U32(v) => u64::from(v),
        RawValue::U64(v) => v,
        RawValue::Bytes(b) => b.len() as u64,
    };
    for object in block.objects() {
        let object = object.unwrap();
        defs.clear();
        for d in object.counters() {
            defs.push(d.unwrap());
        }
        let layout = ValueLayout::new(&defs);
        if let Some(cb) = object.counter_block().unwrap() {
            for v in cb.values_of(&layout).unwrap() {
                sum = sum.wrapping_add(value(v));
            }
        }
        for inst in object.instances() {
            let inst = inst.unwrap();
            inst.name_into(&mut name).unwrap();
            sum = sum.wrapping_add(name.len() as u64);
            for v in inst.counter_block().values_of(&layout).unwrap() {
                sum = sum.wrapping_add(value(v));
            }
        }
    }
    sum
}

/// The name table a replay applies: the bench's own names (the block's "Counter 009"), completed by
/// the built-in English table.
pub fn bench_names() -> NameTable {
    let mut table: NameTable = process_counters()
        .iter()
        .chain(thread_counters().iter())
        .map(|(i, n, _)| (*i, n.as_str()))
        .chain([(PROCESS, "Process"), (THREAD, "Thread")])
        .collect();
    table.merge(NameTable::builtin_english());
    table
}

/// About 200 paths: each Process counter for all processes, every Thread counter for all threads, and
/// concrete instances (parents, `#n` duplicates) of both objects.
pub fn query_paths() -> Vec<String> {
    let mut paths: Vec<String> = process_counters()
        .iter()
        .filter(|c| !c.2.is_base())
        .map(|c| format!(r"\Process(*)\{}", c.1))
        .collect();
    paths.dedup();
    paths.push(r"\Thread(*)\*".to_owned());
    for i in 0..60 {
        let name = PROCESS_NAMES[i % PROCESS_NAMES.len()];
        // The process's `#n`: how many earlier processes have the same name.
        let dup = PROCESS_NAMES
            .iter()
            .cycle()
            .take(i)
            .filter(|n| **n == name)
            .count();
        let suffix = if dup == 0 {
            String::new()
        } else {
            format!("#{dup}")
        };
        paths.push(format!(r"\Process({name}{suffix})\% Processor Time"));
        paths.push(format!(r"\Process({name}{suffix})\Working Set"));
        paths.push(format!(
            r"\Thread({name}/{}{suffix})\Context Switches/sec",
            i % 10
        ));
    }
    paths
}

/// The replay `watch --replay FIRST SECOND --names TABLE` makes, with its catalog read (as `watch`
/// reads it before the first collection) and its first sample collected into the primed query.
pub fn primed_replay(files: &[PathBuf], names: &NameTable, query: &mut Query) -> ReplaySource {
    let mut source = ReplaySource::new(BlockRecording::new(files.to_vec()).with_names(names));
    let catalog = source.catalog().unwrap();
    let request = query.request(&catalog);
    query.update(&source.collect(&request).unwrap());
    source
}

/// One collection as `watch --replay` makes it: the query's request (made once from the catalog,
/// as `watch` makes it), then `Query::collect`: the next block read into the source's buffer,
/// validated, its requested objects named and selected in place, and the values computed over the
/// query's values of the previous collection.
pub fn replay_collect(source: &mut ReplaySource, request: &Request, query: &mut Query) -> usize {
    query.collect(source, request).unwrap();
    query.values().len()
}

/// Reads every value of every instance, resolving each counter name once per object.
fn read_all(
    bytes: &[u8],
    names: &HashMap<u32, String>,
    wanted: &HashMap<u32, Vec<String>>,
    decode_names: bool,
) -> u64 {
    let block = PerfDataBlock::parse(bytes).unwrap();
    let mut sum = 0u64;
    for object in block.objects() {
        let object = object.unwrap();
        let wanted = &wanted[&object.name_index()];
        // Resolve each wanted counter name to its definition once (bases share the numerator's
        // index and are skipped, like PDH's name lookup).
        let defs: Vec<_> = object.counters().map(Result::unwrap).collect();
        let resolved: Vec<_> = wanted
            .iter()
            .map(|name| {
                *defs
                    .iter()
                    .find(|d| {
                        !d.counter_type().is_base()
                            && names.get(&d.name_index()).map(String::as_str) == Some(name.as_str())
                    })
                    .unwrap()
            })
            .collect();
        for inst in object.instances() {
            let inst = inst.unwrap();
            if decode_names {
                sum = sum.wrapping_add(inst.name().unwrap().len() as u64);
            }
            let cb = inst.counter_block();
            for d in &resolved {
                match cb.value(d).unwrap() {
                    RawValue::U32(v) => sum = sum.wrapping_add(u64::from(v)),
                    RawValue::U64(v) => sum = sum.wrapping_add(v),
                    RawValue::Bytes(b) => sum = sum.wrapping_add(b.len() as u64),
                }
            }
        }
    }
    sum
}

fn bench(c: &mut Criterion) {
    let bytes = global_block();
    let names: HashMap<u32, String> = process_counters()
        .into_iter()
        .chain(thread_counters())
        .map(|(i, n, _)| (i, n))
        .collect();
    let non_base = |list: Vec<(u32, String, CounterType)>| -> Vec<String> {
        let mut v: Vec<String> = list
            .into_iter()
            .filter(|c| !c.2.is_base())
            .map(|c| c.1)
            .collect();
        v.dedup();
        v
    };
    let wanted: HashMap<u32, Vec<String>> = [
        (PROCESS, non_base(process_counters())),
        (THREAD, non_base(thread_counters())),
    ]
    .into_iter()
    .collect();
    assert_eq!(wanted[&PROCESS].len(), 29);
    let snapshot = PerfDataBlock::parse(&bytes).unwrap().to_snapshot().unwrap();
    assert_eq!(snapshot.objects[1].instances()[10].name(), "chrome/0");
    assert_eq!(snapshot.objects[0].instances()[5].name(), "svchost#1");

    let mut group = c.benchmark_group("v1");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("zero_copy_values", |b| {
        b.iter(|| read_all(black_box(&bytes), &names, &wanted, false))
    });
    group.bench_function("zero_copy_values_and_names", |b| {
        b.iter(|| read_all(black_box(&bytes), &names, &wanted, true))
    });
    group.bench_function("to_snapshot", |b| {
        b.iter(|| {
            PerfDataBlock::parse(black_box(&bytes))
                .unwrap()
                .to_snapshot()
                .unwrap()
        })
    });
    group.finish();
    eprintln!("block size: {} bytes", bytes.len());
}

fn bench_global(c: &mut Criterion) {
    let first = global_block_of(0);
    let second = global_block_of(1);
    if let Some(path) = std::env::var_os("PERFCOUNTERS_BENCH_BLOCK") {
        std::fs::write(&path, &first).unwrap();
    }
    let names = bench_names();
    let paths = query_paths();
    // The two consecutive blocks as a replay reads them: one file each.
    let dir = std::env::temp_dir().join(format!("perfcounters-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<PathBuf> = [&first, &second]
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let path = dir.join(format!("global{i}.blk"));
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
    let mut primed = Query::new(FormatOptions::typeperf());
    for p in &paths {
        primed.add(p).unwrap();
    }
    let mut source = primed_replay(&files, &names, &mut primed);
    let catalog = ReplaySource::new(BlockRecording::new(files.clone()).with_names(&names))
        .catalog()
        .unwrap();
    // The collection the bench measures: every counter resolves and has a value.
    let mut check = primed.clone();
    let snapshot = source.collect(&check.request(&catalog)).unwrap();
    let values = check.update(&snapshot);
    // The path the bench measures gives the same values.
    let mut fast = primed.clone();
    let mut replay = primed_replay(&files, &names, &mut primed.clone());
    let request = fast.request(&catalog);
    replay_collect(&mut replay, &request, &mut fast);
    assert_eq!(
        fast.values(),
        values,
        "the block read in place gives the snapshot's values"
    );
    for e in check.errors().take(5) {
        eprintln!("{e}");
    }
    assert_eq!(check.errors().count(), 0);
    assert!(
        values.iter().all(|v| v.value().is_some()),
        "every counter has a value"
    );
    assert_eq!(
        snapshot.objects[0].instances()[20].name(),
        "svchost#5",
        "names repeat and get #n"
    );
    eprintln!(
        "v1_global block: {} bytes, walk checksum {}; query: {} paths, {} counters",
        first.len(),
        walk(&first),
        paths.len(),
        values.len()
    );

    let mut group = c.benchmark_group("v1_global");
    group.throughput(Throughput::Bytes(first.len() as u64));
    group.bench_function("walk", |b| b.iter(|| walk(black_box(&first))));
    group.bench_function("snapshot", |b| {
        b.iter(|| {
            PerfDataBlock::parse(black_box(&first))
                .unwrap()
                .to_snapshot()
                .unwrap()
        })
    });
    group.bench_function("query", |b| {
        b.iter_batched_ref(
            || {
                // The query holding the first block's samples, and a replay whose next sample is
                // the second block (its catalog already read, as `watch` reads it first), in the
                // state of every later collection of `watch`: the query has collected the first
                // block in place from this source, so the instance names are known to both.
                let mut source =
                    ReplaySource::new(BlockRecording::new(files.clone()).with_names(&names));
                source.catalog().unwrap();
                let mut query = primed.clone();
                replay_collect(&mut source, &request, &mut query);
                (query, source)
            },
            |(query, source)| replay_collect(source, &request, query),
            BatchSize::PerIteration,
        )
    });
    // `watch` over a longer replay: one query and one source collect block after block, so the
    // query's state and values are those of the previous collection, not fresh copies.
    let steady: Vec<PathBuf> = (0..STEADY_RUN as u64 + 2)
        .map(|generation| {
            let path = dir.join(format!("steady{generation}.blk"));
            std::fs::write(&path, global_block_of(generation)).unwrap();
            path
        })
        .collect();
    group.bench_function("query_steady", |b| {
        b.iter_custom(|iters| {
            let mut measured = std::time::Duration::ZERO;
            let mut done = 0;
            while done < iters {
                // Untimed: the query primed with the run's first block, then its first collection
                // in place (which names the instances, as the second collection of `watch` does),
                // so that every timed collection finds the state the previous one left.
                let mut query = primed.clone();
                let mut source = primed_replay(&steady, &names, &mut query);
                let request = query.request(&catalog);
                replay_collect(&mut source, &request, &mut query);
                let run = (iters - done).min(STEADY_RUN as u64);
                let start = std::time::Instant::now();
                for _ in 0..run {
                    black_box(replay_collect(&mut source, &request, &mut query));
                }
                measured += start.elapsed();
                done += run;
            }
            measured
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

/// How many consecutive collections `v1_global/query_steady` makes with one query and one source.
const STEADY_RUN: usize = 16;

criterion_group!(benches, bench, bench_global);
criterion_main!(benches);
