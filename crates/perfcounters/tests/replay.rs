//! `ReplaySource` over V1 block files and over captures: one catalog rule for both, samples in order,
//! objects a sample lacks, and the errors of a replay.

use crate::support::fixtures;

use fixtures::{tempdir, v1_capture};
use std::path::{Path, PathBuf};

use perfcounters::format::capture::{Capture, NameKind, NameTableFile};
use perfcounters::format::v1::encode;
use perfcounters::names::{to_multi_sz, NameTable};
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, ObjectData, SampleClock, Snapshot, Value,
};
use perfcounters::source::replay::{BlockRecording, ReplaySource};
use perfcounters::source::{Catalog, Request, Source, SourceErrorKind};
use perfcounters::CounterType;

/// Title indexes no built-in table knows: an object, its counter, and a System counter.
const CUSTOM_OBJECT: u32 = 88_888;
const CUSTOM_COUNTER: u32 = 88_890;
const EXTRA_COUNTER: u32 = 77_776;

/// A V1 block: System (2) with Processes (248) and a counter of unknown index, an object of unknown
/// index, and Processor (238) with % Processor Time (6) for instances 0 and _Total (unless
/// `processor` is false).
fn block(processes: u32, processor: bool) -> Vec<u8> {
    let raw_count = |index| CounterDefinition::new(index, CounterType::PERF_COUNTER_RAWCOUNT);
    let system = Object::new(2)
        .with_counters(vec![raw_count(248), raw_count(EXTRA_COUNTER)])
        .with_values(vec![Value::U32(processes), Value::U32(7)]);
    let custom = Object::new(CUSTOM_OBJECT)
        .with_counters(vec![raw_count(CUSTOM_COUNTER)])
        .with_values(vec![Value::U32(1)]);
    let cpu = |name: &str| Instance::new(name, vec![Value::U64(5)]);
    let processors = Object::new(238)
        .with_counters(vec![CounterDefinition::new(
            6,
            CounterType::PERF_100NSEC_TIMER_INV,
        )])
        .with_instances(vec![cpu("0"), cpu("_Total")]);
    let mut objects = vec![system, custom];
    if processor {
        objects.push(processors);
    }
    let clock = SampleClock {
        perf_freq: 10_000_000,
        ..SampleClock::default()
    };
    encode(
        &Snapshot::new("HOST")
            .with_clock(clock)
            .with_objects(objects),
    )
    .unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A capture of the same blocks, V1 only, with `names` as its English `Counter` table.
fn capture(blocks: &[Vec<u8>], names: Option<&NameTable>) -> Capture {
    Capture {
        names: names
            .map(|t| NameTableFile {
                kind: NameKind::Counter,
                language: "009".into(),
                bytes: to_multi_sz(t),
            })
            .into_iter()
            .collect(),
        ..v1_capture(blocks)
    }
}

/// Each catalog object with its counter names.
fn outline(catalog: &Catalog) -> Vec<(String, Vec<String>)> {
    catalog
        .objects
        .iter()
        .map(|o| {
            (
                o.name.clone(),
                o.counters.iter().map(|c| c.name.clone()).collect(),
            )
        })
        .collect()
}

fn strings(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    list.iter()
        .map(|(o, cs)| (o.to_string(), cs.iter().map(|c| c.to_string()).collect()))
        .collect()
}

#[test]
fn block_files_and_captures_share_one_catalog_rule() {
    let dir = tempdir("catalog");
    let blocks = [block(101, true), block(99, true)];
    let files: Vec<PathBuf> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| write(&dir, &format!("{i}.blk"), b))
        .collect();

    // Without names for them, the object and the counter of unknown index are not listed.
    let mut from_blocks = ReplaySource::new(BlockRecording::new(files.clone()));
    let mut from_capture = ReplaySource::from_capture(capture(&blocks, None)).unwrap();
    let catalog = from_blocks.catalog().unwrap();
    assert_eq!(
        outline(&catalog),
        strings(&[
            ("System", &["Processes"]),
            ("Processor", &["% Processor Time"])
        ])
    );
    assert_eq!(from_capture.catalog().unwrap(), catalog);
    assert_eq!(catalog.objects[0].index, 2);
    assert!(catalog.objects[1].multi_instance);
    assert_eq!(
        from_blocks.instances("processor").unwrap(),
        from_capture.instances("processor").unwrap()
    );
    assert_eq!(from_blocks.instances("Processor").unwrap(), ["0", "_Total"]);

    // A name table that knows them lists them, in data order, in both.
    let names: NameTable = [
        (CUSTOM_OBJECT, "Custom"),
        (CUSTOM_COUNTER, "Custom Count"),
        (EXTRA_COUNTER, "Extra"),
    ]
    .into_iter()
    .collect();
    let mut from_blocks = ReplaySource::new(BlockRecording::new(files).with_names(&names));
    let mut from_capture = ReplaySource::from_capture(capture(&blocks, Some(&names))).unwrap();
    let catalog = from_blocks.catalog().unwrap();
    assert_eq!(
        outline(&catalog),
        strings(&[
            ("System", &["Processes", "Extra"]),
            ("Custom", &["Custom Count"]),
            ("Processor", &["% Processor Time"])
        ])
    );
    assert_eq!(from_capture.catalog().unwrap(), catalog);

    // Both replay the same snapshots.
    let request = Request::new().all_of("Custom").all_of("System");
    for _ in 0..2 {
        assert_eq!(
            from_blocks.collect(&request).unwrap(),
            from_capture.collect(&request).unwrap()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn block_files_replay_in_order_then_end() {
    let dir = tempdir("order");
    let files = vec![
        write(&dir, "a.blk", &block(101, true)),
        write(&dir, "b.blk", &block(99, false)),
    ];
    let mut source = ReplaySource::new(BlockRecording::new(files));
    assert_eq!(source.remaining(), Some(2));
    let request = Request::new()
        .object("system", &["processes"])
        .all_of("Processor");
    let first = source.collect(&request).unwrap();
    let names: Vec<&str> = first
        .objects
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    assert_eq!(names, ["System", "Processor"]);
    assert_eq!(
        first.objects[0].data,
        ObjectData::Single(vec![Value::U32(101), Value::U32(7)])
    );
    // The second sample lacks Processor, which the catalog lists: it is left out, not an error.
    let second = source.collect(&request).unwrap();
    let names: Vec<&str> = second
        .objects
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    assert_eq!(names, ["System"]);
    assert_eq!(source.remaining(), Some(0));
    // Instances come from the last sample collected.
    assert_eq!(
        source.instances("Processor").unwrap_err().kind(),
        SourceErrorKind::UnknownObject
    );
    let e = source.collect(&request).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Exhausted);
    assert_eq!(
        e.to_string(),
        "the block file list has no more samples (all 2 replayed)"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_errors_name_the_file_and_the_problem() {
    let dir = tempdir("replay-errors");
    let good = write(&dir, "good.blk", &block(1, true));
    let v2 = write(&dir, "v2.blk", &[0u8; 64]);
    let short = write(&dir, "short.blk", &[0u8; 10]);
    let missing = dir.join("missing.blk");
    let mut source = ReplaySource::new(BlockRecording::new(vec![
        good.clone(),
        good.clone(),
        v2.clone(),
        short.clone(),
        missing.clone(),
    ]));

    // Objects the catalog does not list and counters an object lacks are errors.
    let e = source
        .collect(&Request::new().all_of("Memory"))
        .unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::UnknownObject);
    assert_eq!(e.to_string(), "no object named 'Memory'");
    let e = source
        .collect(&Request::new().object("System", &["Bogus"]))
        .unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::UnknownCounter);

    // A V2 block cannot be replayed alone.
    let e = source.collect(&Request::new()).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Decode);
    assert_eq!(e.path(), Some(v2.as_path()));
    assert_eq!(
        e.to_string(),
        format!(
            "{}: not a V1 block (no \"PERF\" signature); if it is a V2 PERF_DATA_HEADER block, it \
             carries no counter types and cannot be replayed alone: a capture directory keeps the \
             counterset registrations with the blocks",
            v2.display()
        )
    );
    // Too short for a V2 block: the V1 decoder says what is missing.
    let e = source.collect(&Request::new()).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Decode);
    assert_eq!(e.to_string(), short.display().to_string());
    assert!(
        perfcounters::ErrorChain(&e)
            .to_string()
            .starts_with(&format!(
                "{}: PERF_DATA_BLOCK at offset 0: ",
                short.display()
            )),
        "{e}"
    );
    let e = source.collect(&Request::new()).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Io);
    assert_eq!(e.path(), Some(missing.as_path()));
    // Each failed sample was skipped.
    assert_eq!(source.remaining(), Some(0));

    // An empty list has no catalog to give, and no instances.
    let mut empty = ReplaySource::new(BlockRecording::new(Vec::new()));
    assert!(empty.catalog().unwrap().objects.is_empty());
    let e = empty.instances("System").unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Exhausted);
    assert_eq!(e.to_string(), "the block file list has no samples");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The instance list describes the last collected sample, read again when it is asked for (a
/// collection hands its snapshot over without keeping a copy), and the first sample before any
/// collection.
#[test]
fn instances_follow_the_last_collected_sample() {
    let dir = tempdir("replay-instances");
    let files: Vec<PathBuf> = [block(1, true), block(2, false), block(3, true)]
        .iter()
        .enumerate()
        .map(|(i, b)| write(&dir, &format!("{i}.blk"), b))
        .collect();
    let mut source = ReplaySource::new(BlockRecording::new(files));
    let request = Request::new().all_of("System");
    assert_eq!(source.instances("Processor").unwrap(), ["0", "_Total"]);
    source.collect(&request).unwrap();
    assert_eq!(source.instances("Processor").unwrap(), ["0", "_Total"]);
    source.collect(&request).unwrap();
    // The second sample has no Processor object.
    assert_eq!(
        source.instances("Processor").unwrap_err().kind(),
        SourceErrorKind::UnknownObject
    );
    assert!(source.instances("System").unwrap().is_empty());
    source.collect(&request).unwrap();
    assert_eq!(source.instances("Processor").unwrap(), ["0", "_Total"]);
}
