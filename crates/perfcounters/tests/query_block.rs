//! A query's values read in place from V1 block files (`Query::collect`, which takes the
//! replay's `BlockSample`) are exactly the values of the owned path (`Source::collect` then
//! `Query::update`): values, statuses and raw samples, collection after collection, while instances
//! appear, vanish, move, are renamed, change case, process id or parent, while objects and
//! counters go missing, and when a block is bad (the same error, then both go on).

use crate::support::fixtures;

use fixtures::tempdir;
use std::path::{Path, PathBuf};

use perfcounters::format::v1::encode;
use perfcounters::query::{CounterValue, Query};
use perfcounters::snapshot::{CounterDefinition, Instance, Object, SampleClock, Snapshot, Value};
use perfcounters::source::replay::{BlockRecording, ReplaySource};
use perfcounters::source::{Sample, Source, SourceErrorKind};
use perfcounters::{CounterType, FormatOptions};
use proptest::prelude::*;

const PROCESS: u32 = 230;
const THREAD: u32 = 232;
const SYSTEM: u32 = 2;

/// One process: its raw name and process id (`UniqueID`).
#[derive(Clone, Debug)]
struct Proc {
    name: String,
    pid: i32,
}

/// One thread: its raw name and its parent's position in the process list.
#[derive(Clone, Debug)]
struct Thr {
    name: String,
    parent: u32,
}

/// What one block holds.
#[derive(Clone, Debug)]
struct State {
    procs: Vec<Proc>,
    threads: Vec<Thr>,
    /// Whether the block has the System object.
    system: bool,
    /// Whether the block has the Thread object.
    thread_object: bool,
    /// Whether Process has its `Page Faults/sec` counter (which the request names).
    page_faults: bool,
    /// A bad block instead of this state's block.
    bad: Option<Bad>,
}

/// Ways a block file is bad.
#[derive(Clone, Copy, Debug)]
enum Bad {
    /// The first `n` per mille of the bytes.
    Truncated(u16),
    /// One byte changed at `n` per mille of the length.
    Flipped(u16, u8),
    /// An empty file.
    Empty,
}

fn base_state() -> State {
    let procs = [
        "svchost", "explorer", "svchost", "System", "SvcHost", "explorer",
    ]
    .iter()
    .enumerate()
    .map(|(i, n)| Proc {
        name: (*n).to_string(),
        pid: 100 + i as i32 * 4,
    })
    .collect::<Vec<_>>();
    let threads = (0..procs.len() as u32 * 2)
        .map(|i| Thr {
            name: (i % 2).to_string(),
            parent: i / 2,
        })
        .collect();
    State {
        procs,
        threads,
        system: true,
        thread_object: true,
        page_faults: true,
        bad: None,
    }
}

fn process_counters(page_faults: bool) -> Vec<CounterDefinition> {
    use CounterType as T;
    let mut defs = vec![
        CounterDefinition::new(6, T::PERF_100NSEC_TIMER),
        CounterDefinition::new(180, T::PERF_COUNTER_LARGE_RAWCOUNT),
        CounterDefinition::new(684, T::PERF_ELAPSED_TIME),
        CounterDefinition::new(784, T::PERF_COUNTER_RAWCOUNT),
        CounterDefinition::new(1350, T::PERF_RAW_FRACTION),
        CounterDefinition::new(1350, T::PERF_RAW_BASE),
    ];
    if page_faults {
        defs.insert(2, CounterDefinition::new(28, T::PERF_COUNTER_COUNTER));
    }
    defs
}

/// Values for `defs` of the instance with `key` in collection `generation`: growing counters, a
/// start time before the object's clock, a fraction below its base.
fn values(defs: &[CounterDefinition], key: u64, generation: u64) -> Vec<Value> {
    defs.iter()
        .enumerate()
        .map(|(c, d)| {
            let x = match d.counter_type {
                CounterType::PERF_ELAPSED_TIME => 132_289_457_285_000_000 + key % 1000,
                CounterType::PERF_RAW_BASE => 1000 + key % 1000,
                CounterType::PERF_RAW_FRACTION => key % 1000,
                _ => key
                    .wrapping_mul(1000)
                    .wrapping_add(c as u64 + generation * (c as u64 + 1) * 37 * (key % 3 + 1)),
            };
            if d.size == 8 {
                Value::U64(x)
            } else {
                Value::U32(x as u32)
            }
        })
        .collect()
}

fn snapshot_of(state: &State, generation: u64) -> Snapshot {
    let second = generation as i64 * 10_000_000;
    let clock = 132_290_312_439_883_752 + second;
    let pdefs = process_counters(state.page_faults);
    let process = Object::new(PROCESS)
        .with_object_clock(clock, 10_000_000)
        .with_counters(pdefs.clone())
        .with_instances(
            state
                .procs
                .iter()
                .map(|p| {
                    Instance::new(p.name.clone(), values(&pdefs, p.pid as u64, generation))
                        .with_unique_id(p.pid)
                })
                .collect(),
        );
    let tdefs = vec![
        CounterDefinition::new(6, CounterType::PERF_100NSEC_TIMER),
        CounterDefinition::new(146, CounterType::PERF_COUNTER_COUNTER),
        CounterDefinition::new(804, CounterType::PERF_COUNTER_RAWCOUNT),
    ];
    let thread = Object::new(THREAD)
        .with_object_clock(clock, 10_000_000)
        .with_counters(tdefs.clone())
        .with_instances(
            state
                .threads
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    Instance::new(t.name.clone(), values(&tdefs, i as u64 + 7, generation))
                        .with_parent_at(PROCESS, t.parent)
                })
                .collect(),
        );
    let sdefs = vec![
        CounterDefinition::new(248, CounterType::PERF_COUNTER_RAWCOUNT),
        CounterDefinition::new(674, CounterType::PERF_ELAPSED_TIME),
    ];
    let system = Object::new(SYSTEM)
        .with_object_clock(clock, 10_000_000)
        .with_counters(sdefs.clone())
        .with_values(values(&sdefs, 3, generation));
    let mut objects = vec![process];
    if state.thread_object {
        objects.push(thread);
    }
    if state.system {
        objects.insert(0, system);
    }
    Snapshot::new("HOST")
        .with_clock(SampleClock {
            perf_time: 81_234_567_890 + second,
            perf_freq: 10_000_000,
            perf_time_100ns: clock,
        })
        .with_objects(objects)
}

fn bytes_of(state: &State, generation: u64) -> Vec<u8> {
    let bytes = encode(&snapshot_of(state, generation)).unwrap();
    let at = |per_mille: u16| bytes.len() * usize::from(per_mille.min(999)) / 1000;
    match state.bad {
        None => bytes,
        Some(Bad::Truncated(n)) => bytes[..at(n)].to_vec(),
        Some(Bad::Flipped(n, b)) => {
            let mut bytes = bytes.clone();
            let i = at(n);
            bytes[i] ^= b.max(1);
            bytes
        }
        Some(Bad::Empty) => Vec::new(),
    }
}

const PATHS: &[&str] = &[
    r"\Process(*)\% Processor Time",
    r"\Process(*)\Working Set",
    r"\Process(*)\Page Faults/sec",
    r"\Process(*)\Elapsed Time",
    r"\Process(*)\ID Process",
    r"\Process(*)\% Registry Quota In Use",
    r"\Process(svchost#1)\% Processor Time",
    r"\Process(SVCHOST)\Working Set",
    r"\Process(late)\ID Process",
    r"\Process(explorer#1)\Page Faults/sec",
    r"\Thread(*)\*",
    r"\Thread(svchost/0)\Context Switches/sec",
    r"\Thread(explorer/1#1)\% Processor Time",
    r"\Thread(late/0)\ID Thread",
    r"\System\*",
    r"\Nope\Counter",
];

fn write_files(dir: &Path, states: &[State]) -> Vec<PathBuf> {
    states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let path = dir.join(format!("{i:03}.blk"));
            std::fs::write(&path, bytes_of(s, i as u64)).unwrap();
            path
        })
        .collect()
}

/// One collection's outcome: the values, or the error's kind and text.
type Outcome = Result<Vec<CounterValue>, (SourceErrorKind, String)>;

/// Replays `files` through both paths and asserts the same outcome at every collection; returns
/// how many collections were read in place from a block.
fn assert_same(files: &[PathBuf]) -> usize {
    let new_query = || {
        let mut q = Query::new(FormatOptions::typeperf());
        for p in PATHS {
            q.add(p).unwrap();
        }
        q
    };
    let replay = || ReplaySource::new(BlockRecording::new(files.to_vec()));
    let (mut owned_source, mut block_source) = (replay(), replay());
    let (mut owned, mut in_place) = (new_query(), new_query());
    let catalog = match owned_source.catalog() {
        Ok(c) => c,
        Err(e) => {
            assert_eq!(
                block_source.catalog().unwrap_err().to_string(),
                e.to_string()
            );
            return 0;
        }
    };
    assert_eq!(block_source.catalog().unwrap(), catalog);
    let request = owned.request(&catalog);
    assert_eq!(in_place.request(&catalog), request);
    let mut read_in_place = 0;
    for step in 0..files.len() {
        let expected: Outcome = owned_source
            .collect(&request)
            .map(|s| owned.update(&s))
            .map_err(|e| (e.kind(), e.to_string()));
        let expanded = in_place.is_expanded();
        let got: Outcome = in_place
            .collect(&mut block_source, &request)
            .map(|c| {
                if expanded {
                    read_in_place += usize::from(c.snapshot.is_none());
                }
                in_place.values().to_vec()
            })
            .map_err(|e| (e.kind(), e.to_string()));
        assert_eq!(got, expected, "collection {step} of {}", files.len());
        let paths =
            |q: &Query| -> Vec<String> { q.counters().iter().map(|c| c.path_string()).collect() };
        assert_eq!(paths(&in_place), paths(&owned));
        // The instance list after a collection is the same.
        for object in ["Process", "Thread"] {
            let a = owned_source.instances(object).map_err(|e| e.to_string());
            let b = block_source.instances(object).map_err(|e| e.to_string());
            assert_eq!(b, a, "instances of {object} after collection {step}");
        }
    }
    let before = in_place.values().to_vec();
    let end = in_place.collect(&mut block_source, &request).unwrap_err();
    assert_eq!(
        in_place.values(),
        before,
        "a failed collection keeps the values"
    );
    assert_eq!(end.kind(), SourceErrorKind::Exhausted);
    assert_eq!(
        end.to_string(),
        owned_source.collect(&request).unwrap_err().to_string()
    );
    read_in_place
}

/// Applies `f` to a copy of `state`.
fn with(state: &State, f: impl FnOnce(&mut State)) -> State {
    let mut s = state.clone();
    f(&mut s);
    s
}

#[test]
fn same_values_while_instances_change() {
    let base = base_state();
    let states = vec![
        base.clone(),
        base.clone(),
        base.clone(),
        // A process ends (and its threads' parents move with the list).
        with(&base, |s| {
            s.procs.remove(1);
            s.threads.retain(|t| t.parent != 1);
            for t in &mut s.threads {
                if t.parent > 1 {
                    t.parent -= 1;
                }
            }
        }),
        // It is back, another process takes a name's #n, and one comes late.
        with(&base, |s| {
            s.procs.push(Proc {
                name: "late".into(),
                pid: 999,
            });
            s.threads.push(Thr {
                name: "0".into(),
                parent: 6,
            });
        }),
        // Two processes swap places.
        with(&base, |s| s.procs.swap(0, 2)),
        // A process id changes under the same name.
        with(&base, |s| s.procs[2].pid = 4242),
        // A name changes case, and another is renamed.
        with(&base, |s| {
            s.procs[0].name = "SVCHOST".into();
            s.procs[5].name = "notepad".into();
        }),
        // Threads move to other parents.
        with(&base, |s| {
            for t in &mut s.threads {
                t.parent = (t.parent + 1) % 6;
            }
        }),
        // A thread points past the process list.
        with(&base, |s| s.threads[0].parent = 77),
        base.clone(),
        base.clone(),
    ];
    let dir = tempdir("query-block-instances");
    let files = write_files(&dir, &states);
    // Every collection after the expanding one is read in place.
    assert_eq!(assert_same(&files), states.len() - 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn same_values_and_errors_when_objects_counters_and_blocks_go_bad() {
    let base = base_state();
    let states = vec![
        base.clone(),
        base.clone(),
        // An object the catalog lists is missing: its counters report no object.
        with(&base, |s| s.system = false),
        with(&base, |s| s.thread_object = false),
        base.clone(),
        // A requested counter is missing: the collection fails with the object's name.
        with(&base, |s| s.page_faults = false),
        base.clone(),
        with(&base, |s| s.bad = Some(Bad::Truncated(500))),
        base.clone(),
        with(&base, |s| s.bad = Some(Bad::Flipped(300, 0x80))),
        with(&base, |s| s.bad = Some(Bad::Truncated(10))),
        with(&base, |s| s.bad = Some(Bad::Empty)),
        base.clone(),
        with(&base, |s| {
            s.procs.clear();
            s.threads.clear();
        }),
        base.clone(),
    ];
    let dir = tempdir("query-block-errors");
    let files = write_files(&dir, &states);
    let in_place = assert_same(&files);
    assert!(in_place >= 8, "{in_place} collections read in place");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_block_gives_the_decode_error_with_the_file() {
    let base = base_state();
    let states = vec![
        base.clone(),
        with(&base, |s| s.bad = Some(Bad::Truncated(500))),
    ];
    let dir = tempdir("decode-error");
    let files = write_files(&dir, &states);
    let mut source = ReplaySource::new(BlockRecording::new(files.clone()));
    let catalog = source.catalog().unwrap();
    let mut query = Query::new(FormatOptions::typeperf());
    query.add(r"\Process(*)\ID Process").unwrap();
    let request = query.request(&catalog);
    query.collect(&mut source, &request).unwrap();
    let before = query.values().to_vec();
    assert_eq!(before.len(), 6);
    let e = query.collect(&mut source, &request).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Decode);
    assert_eq!(e.path(), Some(files[1].as_path()));
    // The values (and so the previous samples) are those of the last good collection.
    assert_eq!(query.values(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn block_files_are_read_in_place_and_keep_the_block_clock() {
    let base = base_state();
    let dir = tempdir("sample");
    let files = write_files(&dir, &[base.clone(), base]);
    let mut source = ReplaySource::new(BlockRecording::new(files));
    let catalog = source.catalog().unwrap();
    let mut query = Query::new(FormatOptions::typeperf());
    query.add(r"\Process(*)\ID Process").unwrap();
    let request = query.request(&catalog);
    let Sample::Block(block) = source.collect_sample(&request).unwrap() else {
        panic!("a block file is read in place");
    };
    let expected = snapshot_of(&base_state(), 0);
    assert_eq!(block.clock(), expected.clock());
    assert_eq!(block.system_time(), expected.system_time);
    let names: Vec<_> = block.objects().iter().map(|o| o.name.clone()).collect();
    assert_eq!(names, [Some("Process".to_string())]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One change between two blocks.
#[derive(Clone, Debug)]
enum Change {
    Remove(usize),
    Add(String, i32),
    Swap(usize, usize),
    Rename(usize, String),
    Pid(usize, i32),
    Upper(usize),
    Parent(usize, u32),
    ThreadName(usize, String),
    NoSystem,
    NoThreads,
    NoPageFaults,
    Bad(Bad),
}

fn change() -> impl Strategy<Value = Change> {
    let name = prop_oneof![
        Just("svchost".to_string()),
        Just("SVCHOST".to_string()),
        Just("explorer".to_string()),
        Just("late".to_string()),
        "[a-zA-Z0-9 #/]{0,6}",
        Just("é\u{1F600}".to_string()),
    ];
    prop_oneof![
        (0..10usize).prop_map(Change::Remove),
        (name.clone(), 1..5000i32).prop_map(|(n, p)| Change::Add(n, p)),
        (0..10usize, 0..10usize).prop_map(|(a, b)| Change::Swap(a, b)),
        (0..10usize, name.clone()).prop_map(|(i, n)| Change::Rename(i, n)),
        (0..10usize, prop_oneof![Just(-1), 1..5000i32]).prop_map(|(i, p)| Change::Pid(i, p)),
        (0..10usize).prop_map(Change::Upper),
        (0..20usize, 0..12u32).prop_map(|(i, p)| Change::Parent(i, p)),
        (0..20usize, name).prop_map(|(i, n)| Change::ThreadName(i, n)),
        Just(Change::NoSystem),
        Just(Change::NoThreads),
        Just(Change::NoPageFaults),
        prop_oneof![
            (0..1000u16).prop_map(Bad::Truncated),
            (0..1000u16, any::<u8>()).prop_map(|(n, b)| Bad::Flipped(n, b)),
            Just(Bad::Empty),
        ]
        .prop_map(Change::Bad),
    ]
}

fn apply(state: &State, changes: &[Change]) -> State {
    let mut s = state.clone();
    s.system = true;
    s.thread_object = true;
    s.page_faults = true;
    s.bad = None;
    for c in changes {
        let np = s.procs.len();
        let nt = s.threads.len();
        match c.clone() {
            Change::Remove(i) if i < np => {
                s.procs.remove(i);
            }
            Change::Add(name, pid) => {
                s.procs.push(Proc { name, pid });
                s.threads.push(Thr {
                    name: "0".into(),
                    parent: np as u32,
                });
            }
            Change::Swap(a, b) if a < np && b < np => s.procs.swap(a, b),
            Change::Rename(i, n) if i < np => s.procs[i].name = n,
            Change::Pid(i, p) if i < np => s.procs[i].pid = p,
            Change::Upper(i) if i < np => s.procs[i].name = s.procs[i].name.to_uppercase(),
            Change::Parent(i, p) if i < nt => s.threads[i].parent = p,
            Change::ThreadName(i, n) if i < nt => s.threads[i].name = n,
            Change::NoSystem => s.system = false,
            Change::NoThreads => s.thread_object = false,
            Change::NoPageFaults => s.page_faults = false,
            Change::Bad(b) => s.bad = Some(b),
            _ => {}
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Random sequences of changed blocks: both paths agree at every collection.
    #[test]
    fn both_paths_agree_over_random_changes(
        steps in prop::collection::vec(prop::collection::vec(change(), 0..4), 1..7),
    ) {
        let mut states = vec![base_state(), base_state()];
        let mut state = base_state();
        for changes in &steps {
            let next = apply(&state, changes);
            if next.bad.is_none() {
                state = next.clone();
            }
            states.push(next);
        }
        let dir = tempdir("proptest");
        let files = write_files(&dir, &states);
        assert_same(&files);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
