//! `perfcounters … | head`: every command that writes to standard output ends quietly, with exit
//! status 0 and nothing on standard error, when the reader closes the pipe early.
//!
//! Rust starts a program with SIGPIPE ignored, so a write to a closed pipe fails with `EPIPE`
//! instead of killing the process; a process killed by the signal would have no exit code here.
//! The recorded outputs are made far larger than a pipe's buffer, so the command is still writing
//! when the pipe closes.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use perfcounters::format::v1::encode;
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, SampleClock, Snapshot, SystemTime, Value,
};
use perfcounters::CounterType;

use crate::common;

use common::{bin, start, tempdir};

/// Instances per block: enough for outputs of several hundred KiB.
const CPUS: u64 = 20_000;

/// A Processor block at second `s` with [`CPUS`] instances.
fn big_block(s: i64) -> Vec<u8> {
    let t = 132_290_312_430_000_000 + s * 10_000_000;
    let instances = (0..CPUS)
        .map(|i| Instance::new(i.to_string(), vec![Value::U64(i * 1000 * s.unsigned_abs())]))
        .collect();
    let processor = Object::new(238)
        .with_counters(vec![CounterDefinition::new(
            6,
            CounterType::PERF_100NSEC_TIMER_INV,
        )])
        .with_instances(instances);
    let snapshot = Snapshot::new("PIPES")
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
        .with_objects(vec![processor]);
    encode(&snapshot).unwrap()
}

fn write_big_blocks(dir: &Path) -> Vec<String> {
    (0..3)
        .map(|s| {
            let p = dir.join(format!("{s}.blk"));
            std::fs::write(&p, big_block(s)).unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect()
}

/// Runs `args` with standard output read in full and checks that it is longer than `min_len`
/// bytes (so that a pipe closed after a few bytes is written to again).
fn assert_long_output(args: &[&str], min_len: usize) {
    let o = start(bin().args(args), Command::output).unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stdout.len() > min_len,
        "{args:?} wrote {} bytes, not more than {min_len}",
        o.stdout.len()
    );
}

/// Runs `args`, reads a few bytes of its standard output, closes the pipe, and checks that the
/// command ends with status 0 and nothing on standard error.
fn assert_quiet_when_closed_early(args: &[&str]) {
    let mut child = start(
        bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        Command::spawn,
    )
    .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {:?}, stderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "",
        "{args:?} wrote to standard error"
    );
}

#[test]
fn recorded_data_commands_end_quietly_on_a_closed_pipe() {
    let dir = tempdir("recorded");
    let files = write_big_blocks(&dir);
    let path = r"\Processor(*)\% Processor Time";
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["list", "-x", "--replay", &files[0]],
        vec!["decode", &files[0]],
        vec!["decode", "--format", "json", &files[0]],
    ];
    for format in ["csv", "tsv", "json"] {
        let mut watch = vec!["watch", path, "--format", format, "--replay"];
        watch.extend(files.iter().map(String::as_str));
        commands.push(watch);
    }
    for args in &commands {
        assert_long_output(args, 256 * 1024);
        assert_quiet_when_closed_early(args);
    }

    // relog of a long log to standard output.
    let log = dir.join("long.csv");
    let mut text = String::from("\"(PDH-CSV 4.0)\",\"\\\\H\\System\\Processes\"\r\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "\"01/01/2026 {:02}:{:02}:{:02}.000\",\"{i}\"\r\n",
            i / 3600,
            i / 60 % 60,
            i % 60
        ));
    }
    std::fs::write(&log, text).unwrap();
    let log = log.to_str().unwrap();
    let relog = ["relog", log, "-f", "csv"];
    assert_long_output(&relog, 256 * 1024);
    assert_quiet_when_closed_early(&relog);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg(target_os = "linux")]
fn live_commands_end_quietly_on_a_closed_pipe() {
    // These collect until interrupted, so they write again after the pipe closes.
    assert_quiet_when_closed_early(&["watch", "-i", "20ms", "--format", "csv"]);
    assert_quiet_when_closed_early(&["watch", "-i", "20ms", "--format", "json"]);
    assert_quiet_when_closed_early(&["typeperf", r"\System\Processes", "-si", "1"]);
    // These write once, as much as the machine has.
    assert_quiet_when_closed_early(&["list", "-x"]);
    assert_quiet_when_closed_early(&["typeperf", "-qx"]);
}
