//! A query over replayed V1 block files, through both paths: the owned snapshot (`Source::collect`
//! then `Query::update`) and the block read in place (`Query::collect`, which takes the replay's
//! `BlockSample`). The blocks are a valid block (Process with duplicate names and process ids, Thread
//! with parents, System) and up to two copies of it changed by the input: each change XORs a
//! byte at a position, so lengths, counts, offsets, names, parents and values go bad in every way;
//! an input starting with `R` is also replayed as a raw block of its own. Both paths must give the
//! same values, statuses, raw samples and errors at every collection.
//!
//! The checks of the `query` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/query/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use std::path::PathBuf;
use std::sync::OnceLock;

use perfcounters::format::v1::encode;
use perfcounters::query::{CounterValue, Query};
use perfcounters::snapshot::{CounterDefinition, Instance, Object, SampleClock, Snapshot, Value};
use perfcounters::source::replay::{BlockRecording, ReplaySource};
use perfcounters::source::{Source, SourceErrorKind};
use perfcounters::{CounterType, FormatOptions};

const PATHS: &[&str] = &[
    r"\Process(*)\% Processor Time",
    r"\Process(*)\Page Faults/sec",
    r"\Process(*)\ID Process",
    r"\Process(*)\% Registry Quota In Use",
    r"\Process(svchost#1)\% Processor Time",
    r"\Process(late)\ID Process",
    r"\Thread(*)\*",
    r"\Thread(svchost/1)\Context Switches/sec",
    r"\System\*",
];

fn block(generation: u64) -> Vec<u8> {
    use CounterType as T;
    let second = generation as i64 * 10_000_000;
    let clock = 132_290_312_439_883_752 + second;
    let value = |key: u64, c: usize, d: &CounterDefinition| {
        let x = match d.counter_type {
            T::PERF_ELAPSED_TIME => 132_289_457_285_000_000 + key,
            T::PERF_RAW_BASE => 1000 + key,
            T::PERF_RAW_FRACTION => key,
            _ => key * 1000 + c as u64 + generation * 37,
        };
        if d.size == 8 {
            Value::U64(x)
        } else {
            Value::U32(x as u32)
        }
    };
    let values = |defs: &[CounterDefinition], key: u64| -> Vec<Value> {
        defs.iter()
            .enumerate()
            .map(|(c, d)| value(key, c, d))
            .collect()
    };
    let pdefs = vec![
        CounterDefinition::new(6, T::PERF_100NSEC_TIMER),
        CounterDefinition::new(28, T::PERF_COUNTER_COUNTER),
        CounterDefinition::new(784, T::PERF_COUNTER_RAWCOUNT),
        CounterDefinition::new(1350, T::PERF_RAW_FRACTION),
        CounterDefinition::new(1350, T::PERF_RAW_BASE),
    ];
    let procs = ["svchost", "explorer", "SVCHOST", "late"];
    let process = Object::new(230)
        .with_object_clock(clock, 10_000_000)
        .with_counters(pdefs.clone())
        .with_instances(
            procs
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    Instance::new(*n, values(&pdefs, i as u64 + 1)).with_unique_id(100 + i as i32)
                })
                .collect(),
        );
    let tdefs = vec![
        CounterDefinition::new(146, T::PERF_COUNTER_COUNTER),
        CounterDefinition::new(804, T::PERF_COUNTER_RAWCOUNT),
    ];
    let thread = Object::new(232)
        .with_object_clock(clock, 10_000_000)
        .with_counters(tdefs.clone())
        .with_instances(
            (0..6u32)
                .map(|i| {
                    Instance::new((i % 2).to_string(), values(&tdefs, u64::from(i) + 9))
                        .with_parent_at(230, i / 2)
                })
                .collect(),
        );
    let sdefs = vec![CounterDefinition::new(248, T::PERF_COUNTER_RAWCOUNT)];
    let system = Object::new(2)
        .with_counters(sdefs.clone())
        .with_values(values(&sdefs, 5));
    let snapshot = Snapshot::new("HOST")
        .with_clock(SampleClock {
            perf_time: 1_000 + second,
            perf_freq: 10_000_000,
            perf_time_100ns: clock,
        })
        .with_objects(vec![system, process, thread]);
    encode(&snapshot).expect("the base block encodes")
}

/// The valid blocks of the first four collections.
fn blocks() -> &'static [Vec<u8>] {
    static BLOCKS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BLOCKS.get_or_init(|| (0..4).map(block).collect())
}

type Outcome = Result<Vec<CounterValue>, (SourceErrorKind, String)>;

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    let base = blocks();
    // Up to two changed copies, the input's parts split at 0xFE: each part a list of 3-byte
    // changes (position high byte, position low byte, XOR mask), each copy followed by a valid
    // block.
    let mut files: Vec<Vec<u8>> = vec![base[0].clone(), base[1].clone()];
    for (i, changes) in data.split(|&b| b == 0xFE).take(2).enumerate() {
        let mut bytes = base[i + 2].clone();
        for c in changes.chunks_exact(3) {
            let at = usize::from(u16::from_be_bytes([c[0], c[1]])) % bytes.len();
            bytes[at] ^= c[2];
        }
        files.push(bytes);
        files.push(base[3].clone());
    }
    if data.first() == Some(&b'R') {
        files.push(data[1..].to_vec());
        files.push(base[3].clone());
    }
    let dir = std::env::temp_dir().join(format!("perfcounters-fuzz-query-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let paths: Vec<PathBuf> = files
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let path = dir.join(format!("{i}.blk"));
            std::fs::write(&path, bytes).expect("block file");
            path
        })
        .collect();
    let replay = || ReplaySource::new(BlockRecording::new(paths.clone()));
    let (mut owned_source, mut block_source) = (replay(), replay());
    let new_query = || {
        let mut q = Query::new(FormatOptions::typeperf());
        for p in PATHS {
            q.add(p).expect("valid path");
        }
        q
    };
    let (mut owned, mut in_place) = (new_query(), new_query());
    let catalog = owned_source.catalog().expect("the first block is valid");
    assert_eq!(block_source.catalog().expect("same catalog"), catalog);
    let request = owned.request(&catalog);
    assert_eq!(in_place.request(&catalog), request);
    for step in 0..=paths.len() {
        let expected: Outcome = owned_source
            .collect(&request)
            .map(|s| owned.update(&s))
            .map_err(|e| (e.kind(), e.to_string()));
        let before = in_place.values().to_vec();
        let got: Outcome = in_place
            .collect(&mut block_source, &request)
            .map(|_| in_place.values().to_vec())
            .map_err(|e| (e.kind(), e.to_string()));
        assert_eq!(got, expected, "collection {step}");
        if got.is_err() {
            assert_eq!(
                in_place.values(),
                before,
                "a failed collection keeps the values"
            );
        }
        for object in ["Process", "Thread", "System"] {
            let a = owned_source.instances(object).map_err(|e| e.to_string());
            let b = block_source.instances(object).map_err(|e| e.to_string());
            assert_eq!(b, a, "instances of {object} after collection {step}");
        }
    }
}
