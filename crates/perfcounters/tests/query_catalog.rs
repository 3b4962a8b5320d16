//! A query against a source's catalog (`Query::request`): close names for an object the collection
//! does not hold, and counter paths in the machine's language, which select what their English
//! twins select while the columns keep the paths as typed.

use crate::support::fixtures;
use crate::support::shared_data;

use fixtures::tempdir;
use std::path::{Path, PathBuf};

use perfcounters::format::v1::encode;
use perfcounters::names::NameTable;
use perfcounters::query::Query;
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, SampleClock, Snapshot, SystemTime, Value,
};
use perfcounters::source::replay::{BlockRecording, ReplaySource};
use perfcounters::source::{Request, Source, SourceErrorKind};
use perfcounters::{CounterType, FormatOptions};

/// A V1 block at second `s`: System (2) with Processes (248), Process (230) with no instance, and
/// Processor (238) with % Processor Time (6) and % User Time (142) for CPUs 0, 1 and _Total, whose
/// idle and user times (100 ns) are given.
fn block(s: i64, processes: u32, idle: [u64; 3], user: [u64; 3]) -> Vec<u8> {
    let t = 132_290_312_430_000_000 + s * 10_000_000;
    let processes_counter = || CounterDefinition::new(248, CounterType::PERF_COUNTER_RAWCOUNT);
    let system = Object::new(2)
        .with_counters(vec![processes_counter()])
        .with_values(vec![Value::U32(processes)]);
    let process = Object::new(230).with_counters(vec![processes_counter()]);
    let cpu =
        |i: usize, name: &str| Instance::new(name, vec![Value::U64(idle[i]), Value::U64(user[i])]);
    let processor = Object::new(238)
        .with_counters(vec![
            CounterDefinition::new(6, CounterType::PERF_100NSEC_TIMER_INV),
            CounterDefinition::new(142, CounterType::PERF_100NSEC_TIMER),
        ])
        .with_instances(vec![cpu(0, "0"), cpu(1, "1"), cpu(2, "_Total")]);
    let snapshot = Snapshot::new("RECHNER")
        .with_system_time(SystemTime {
            year: 2026,
            month: 11,
            day: 22,
            ..Default::default()
        })
        .with_clock(SampleClock {
            perf_time: t / 10,
            perf_freq: 1_000_000,
            perf_time_100ns: t,
        })
        .with_objects(vec![system, process, processor]);
    encode(&snapshot).unwrap()
}

/// Two samples one second apart: CPU 0 idle 0.25 s and user 0.5 s, CPU 1 idle 0.5 s and user 0.25
/// s, _Total their mean.
fn write_blocks(dir: &Path) -> Vec<PathBuf> {
    let samples = [
        block(0, 100, [0, 0, 0], [0, 0, 0]),
        block(
            1,
            99,
            [2_500_000, 5_000_000, 3_750_000],
            [5_000_000, 2_500_000, 3_750_000],
        ),
    ];
    samples
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let p = dir.join(format!("{i}.blk"));
            std::fs::write(&p, b).unwrap();
            p
        })
        .collect()
}

/// A small German table, as `HKEY_PERFORMANCE_NLSTEXT` "Counter" gives it on a German Windows.
fn german() -> NameTable {
    [
        (2, "System"),
        (6, "Prozessorzeit (%)"),
        (142, "Benutzerzeit (%)"),
        (230, "Prozess"),
        (238, "Prozessor"),
        (248, "Prozesse"),
    ]
    .into_iter()
    .collect()
}

/// What a watch of `paths` over the blocks shows: the first request, the column headers, the
/// expansion errors, and the values of the second collection (rounded to 1e-6).
#[derive(Debug, PartialEq)]
struct Shown {
    request: Request,
    headers: Vec<String>,
    errors: Vec<String>,
    values: Vec<Option<f64>>,
}

fn watch(files: &[PathBuf], names: &[NameTable], paths: &[&str]) -> Shown {
    let recording = names
        .iter()
        .fold(BlockRecording::new(files.to_vec()), |r, t| r.with_names(t));
    let mut source = ReplaySource::new(recording);
    let catalog = source.catalog().unwrap();
    let mut query = Query::new(FormatOptions::typeperf());
    for p in paths {
        query.add(p).unwrap();
    }
    let request = query.request(&catalog);
    let mut values = Vec::new();
    loop {
        let request = query.request(&catalog);
        match source.collect(&request) {
            Ok(snapshot) => values = query.update(&snapshot),
            Err(e) if e.kind() == SourceErrorKind::Exhausted => break,
            Err(e) => panic!("{e}"),
        }
    }
    Shown {
        request,
        headers: query.counters().iter().map(|c| c.path_string()).collect(),
        errors: query.errors().map(ToString::to_string).collect(),
        values: values
            .iter()
            .map(|v| v.value().map(|x| (x * 1e6).round() / 1e6))
            .collect(),
    }
}

#[test]
fn an_unknown_object_gets_close_names_from_the_catalog() {
    let dir = tempdir("unknown");
    let files = write_blocks(&dir);
    // The collection holds only System (all the request asks for), yet the close names of
    // "Procesor" come from everything the source offers.
    let shown = watch(
        &files,
        &[],
        &[r"\Procesor(*)\% Processor Time", r"\System\Processes"],
    );
    assert_eq!(
        shown.request,
        Request::new().object("System", &["Processes"])
    );
    assert_eq!(
        shown.errors,
        [
            r#"\Procesor(*)\% Processor Time: no object named "Procesor"; did you mean "Processor" or "Process"?"#
        ]
    );
    assert_eq!(shown.values, [None, Some(99.0)]);
    // A name nothing resembles gets no suggestion.
    let shown = watch(&files, &[], &[r"\Zzzzzz\X"]);
    assert_eq!(shown.errors, [r#"\Zzzzzz\X: no object named "Zzzzzz""#]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn paths_in_the_machines_language_select_what_english_paths_select() {
    let dir = tempdir("german");
    let files = write_blocks(&dir);
    let english = watch(
        &files,
        &[german()],
        &[
            r"\Processor(*)\% Processor Time",
            r"\System\Processes",
            r"\Processor(_Total)\*",
        ],
    );
    let local = watch(
        &files,
        &[german()],
        &[
            r"\Prozessor(*)\Prozessorzeit (%)",
            r"\system\prozesse",
            r"\PROZESSOR(_Total)\*",
        ],
    );
    // CPU 0 busy 75 %, CPU 1 50 %, _Total 62.5 %; user 50 %, 25 %, 37.5 %.
    assert_eq!(
        english.values,
        [
            Some(75.0),
            Some(50.0),
            Some(62.5),
            Some(99.0),
            Some(62.5),
            Some(37.5)
        ]
    );
    assert_eq!(local.values, english.values);
    assert_eq!(local.request, english.request);
    assert_eq!(
        english.request,
        Request::new()
            .all_of("Processor")
            .object("System", &["Processes"])
    );
    assert!(english.errors.is_empty() && local.errors.is_empty());
    assert_eq!(
        english.headers,
        [
            r"\\RECHNER\Processor(0)\% Processor Time",
            r"\\RECHNER\Processor(1)\% Processor Time",
            r"\\RECHNER\Processor(_Total)\% Processor Time",
            r"\\RECHNER\System\Processes",
            r"\\RECHNER\Processor(_Total)\% Processor Time",
            r"\\RECHNER\Processor(_Total)\% User Time",
        ]
    );
    // The columns keep the language of the paths, spelt as the name table spells it; a counter
    // wildcard of an object named in German lists the counters in German.
    assert_eq!(
        local.headers,
        [
            r"\\RECHNER\Prozessor(0)\Prozessorzeit (%)",
            r"\\RECHNER\Prozessor(1)\Prozessorzeit (%)",
            r"\\RECHNER\Prozessor(_Total)\Prozessorzeit (%)",
            r"\\RECHNER\System\Prozesse",
            r"\\RECHNER\Prozessor(_Total)\Prozessorzeit (%)",
            r"\\RECHNER\Prozessor(_Total)\Benutzerzeit (%)",
        ]
    );

    // Languages mix per name, and unknown German names get German close names.
    let mixed = watch(
        &files,
        &[german()],
        &[
            r"\Processor(1)\Benutzerzeit (%)",
            r"\Prozessor(1)\% User Time",
            r"\Prozessor(*)\Prozessorzeit",
            r"\Prozesor(*)\Prozessorzeit (%)",
        ],
    );
    assert_eq!(
        mixed.headers[..2],
        [
            r"\\RECHNER\Processor(1)\Benutzerzeit (%)",
            r"\\RECHNER\Prozessor(1)\% User Time",
        ]
    );
    assert_eq!(mixed.values[..2], [Some(25.0), Some(25.0)]);
    assert_eq!(
        mixed.errors,
        [
            r#"\Prozessor(*)\Prozessorzeit: object "Prozessor" has no counter named "Prozessorzeit"; did you mean "Prozessorzeit (%)"?"#,
            r#"\Prozesor(*)\Prozessorzeit (%): no object named "Prozesor"; did you mean "Prozessor", "Processor" or "Prozess"?"#,
        ]
    );

    // Without the German table German paths are unknown, as they are to PdhAddEnglishCounter.
    let plain = watch(&files, &[], &[r"\Prozessor(*)\Prozessorzeit (%)"]);
    assert_eq!(
        plain.errors,
        [
            r#"\Prozessor(*)\Prozessorzeit (%): no object named "Prozessor"; did you mean "Processor" or "Process"?"#
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn shared_data() -> Option<PathBuf> {
    shared_data::dir("the real Windows name tables")
}

#[test]
fn a_real_german_perfstringbackup_translates_paths() {
    let Some(data) = shared_data() else { return };
    // Every language merged, English first: the English name names the data.
    let table = NameTable::load(&data.join("names/de-en-PerfStringBackup-cp1252.INI")).unwrap();
    assert_eq!(table.name(238), Some("Processor"));
    assert_eq!(
        table.names(238).collect::<Vec<_>>(),
        ["Processor", "Prozessor"]
    );
    let tables = [table];
    let dir = tempdir("ini");
    let files = write_blocks(&dir);
    let english = watch(
        &files,
        &tables,
        &[
            r"\Processor(*)\% Processor Time",
            r"\Processor(*)\% User Time",
        ],
    );
    let local = watch(
        &files,
        &tables,
        &[
            r"\Prozessor(*)\Prozessorzeit (%)",
            r"\Prozessor(*)\Benutzerzeit (%)",
        ],
    );
    assert_eq!(
        local.values,
        [
            Some(75.0),
            Some(50.0),
            Some(62.5),
            Some(50.0),
            Some(25.0),
            Some(37.5)
        ]
    );
    assert_eq!(local.values, english.values);
    assert_eq!(local.request, english.request);
    assert_eq!(
        local.headers[..3],
        [
            r"\\RECHNER\Prozessor(0)\Prozessorzeit (%)",
            r"\\RECHNER\Prozessor(1)\Prozessorzeit (%)",
            r"\\RECHNER\Prozessor(_Total)\Prozessorzeit (%)",
        ]
    );
    assert_eq!(
        english.headers[0],
        r"\\RECHNER\Processor(0)\% Processor Time"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
