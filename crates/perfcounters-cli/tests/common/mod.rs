//! What the CLI tests share: running the binary, scratch directories, and V1 blocks like the
//! captured Windows 10 ones.

#![allow(dead_code)]

use std::io;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

#[path = "../../../perfcounters/tests/support/fixtures.rs"]
mod fixtures;

#[allow(unused_imports)]
pub use fixtures::{system_time, tempdir, v1_capture, v2_counterset_block, T0};

use perfcounters::format::blg::encode::{
    encode_counter_list, encode_sample, BlgWriter, EncodeOptions, SampleEntry,
};
use perfcounters::format::blg::RecordKind;
use perfcounters::format::v1::encode;
use perfcounters::snapshot::{CounterDefinition, Instance, Object, SampleClock, Snapshot, Value};
use perfcounters::CounterType;

/// A System + Processor block like the captured Windows 10 ones, at 100 ns time `t` (seconds since the
/// first sample `s`), with `idle` 100 ns units of idle time per CPU and `processes` processes.
pub fn block(s: i64, idle: [u64; 2], processes: u32) -> Vec<u8> {
    let t = T0 + s * 10_000_000;
    let system = Object::new(2)
        .with_object_clock(t, 10_000_000)
        .with_counters(vec![
            CounterDefinition::new(248, CounterType::PERF_COUNTER_RAWCOUNT).with_scale(-1),
            CounterDefinition::new(674, CounterType::PERF_ELAPSED_TIME).with_scale(-5),
        ])
        .with_values(vec![
            Value::U32(processes),
            Value::U64(132_289_457_285_000_000),
        ]);
    let cpu = |name: &str, idle: u64| Instance::new(name, vec![Value::U64(idle)]);
    let processor = Object {
        default_counter: 0,
        ..Object::new(238)
    }
    .with_counters(vec![CounterDefinition::new(
        6,
        CounterType::PERF_100NSEC_TIMER_INV,
    )])
    .with_instances(vec![
        cpu("0", idle[0]),
        cpu("1", idle[1]),
        cpu("_Total", (idle[0] + idle[1]) / 2),
    ]);
    let snapshot = Snapshot::new("GETAWAY")
        .with_system_time(system_time(s as u16))
        .with_clock(SampleClock {
            perf_time: 1_000_000 + s * 10_000_000,
            perf_freq: 10_000_000,
            perf_time_100ns: t,
        })
        .with_objects(vec![system, processor]);
    encode(&snapshot).unwrap()
}

/// The `perfcounters` binary with `TZ=UTC`, so that local times print the same everywhere.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfcounters"));
    c.env("TZ", "UTC");
    c
}

/// Runs the binary with `args` to completion.
pub fn run(args: &[&str]) -> Output {
    start(bin().args(args), Command::output).expect("run perfcounters")
}

/// Starts `command` with `how` (`Command::output`, `Command::spawn`), once more (up to three
/// times) when Windows could not create the process at all and said `ERROR_INTERNAL_ERROR`
/// (1359): Wine 8, under which the Windows tests run, now and then fails to start a process
/// this way. Every other error, and whatever a started process does, is returned as it is.
pub fn start<T>(
    command: &mut Command,
    how: impl Fn(&mut Command) -> io::Result<T>,
) -> io::Result<T> {
    const ERROR_INTERNAL_ERROR: i32 = 1359;
    let mut retries = 0;
    loop {
        match how(command) {
            Err(e)
                if cfg!(windows)
                    && e.raw_os_error() == Some(ERROR_INTERNAL_ERROR)
                    && retries < 3 =>
            {
                retries += 1;
                eprintln!("starting {command:?} failed ({e}); starting it again");
                std::thread::sleep(Duration::from_millis(200));
            }
            result => return result,
        }
    }
}

/// Runs the binary with `args` followed by `files` (block files, captures, logs) to completion.
pub fn run_on(args: &[&str], files: &[String]) -> Output {
    let mut all = args.to_vec();
    all.extend(files.iter().map(String::as_str));
    run(&all)
}

/// Asserts that the run succeeded, showing its stderr otherwise.
pub fn assert_success(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// Asserts that the run's stderr contains `part`, showing the whole stderr otherwise.
pub fn assert_stderr_contains(o: &Output, part: &str) {
    assert!(stderr(o).contains(part), "{}", stderr(o));
}

/// Asserts that the run's stdout contains `part`, showing the whole stdout otherwise.
pub fn assert_stdout_contains(o: &Output, part: &str) {
    assert!(stdout(o).contains(part), "{}", stdout(o));
}

/// The run's stdout as UTF-8.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The run's stderr as UTF-8.
pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Writes each block to `dir/{prefix}{i}.bin` and returns the paths, in order.
pub fn write_files(dir: &Path, prefix: &str, blocks: &[Vec<u8>]) -> Vec<String> {
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let path = dir.join(format!("{prefix}{i}.bin"));
            std::fs::write(&path, b).unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect()
}

/// Writes three System + Processor blocks (see [`block`]) to `dir/t{0,1,2}.bin` and returns their
/// paths: 100, 101 then 99 processes, CPU idle times giving 75/50 % then 0/100 % busy.
pub fn write_blocks(dir: &Path) -> Vec<String> {
    let samples = [
        (0, [0, 0], 100),
        (1, [2_500_000, 5_000_000], 101),
        (2, [12_500_000, 5_000_000], 99),
    ];
    let blocks: Vec<Vec<u8>> = samples
        .iter()
        .map(|(s, idle, p)| block(*s, *idle, *p))
        .collect();
    write_files(dir, "t", &blocks)
}

/// 2020-01-17 08:00:00 UTC (midnight in US Pacific time) as a FILETIME: the first sample of the
/// binary logs the tests build.
pub const BLG_T0: i64 = 132_236_928_000_000_000;

/// `\\HOST\Memory\Available Bytes`, a raw count, as a binary log's counter list names it.
pub fn available_bytes_spec() -> perfcounters::format::blg::CounterSpec {
    perfcounters::format::blg::CounterSpec {
        counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
        machine: r"\\HOST".into(),
        object: "Memory".into(),
        counter: "Available Bytes".into(),
        ..Default::default()
    }
}

/// The bytes of a binary log (`.blg`): the counter list of `specs` at [`BLG_T0`], then each
/// `(time, entries)` as one sample record.
pub fn blg_bytes(
    specs: &[perfcounters::format::blg::CounterSpec],
    samples: Vec<(i64, Vec<SampleEntry>)>,
) -> Vec<u8> {
    let mut w = BlgWriter::new(std::io::Cursor::new(Vec::new()), EncodeOptions::default()).unwrap();
    w.write_record(RecordKind::CounterList, BLG_T0, &encode_counter_list(specs))
        .unwrap();
    for (t, entries) in samples {
        w.write_record(RecordKind::Sample, t, &encode_sample(&entries))
            .unwrap();
    }
    w.finish().unwrap().into_inner()
}
