//! What the CLI tests share: running the binary, scratch directories, V1 blocks like the captured
//! Windows 10 ones, and the library tests' fixtures, real-data folder, layout check and log
//! rewriting.

#![allow(dead_code)]

use std::io;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

// Shared with the library's test binary.
#[path = "../../../perfcounters/tests/support/fixtures.rs"]
mod fixtures;
#[path = "../../../perfcounters/tests/support/layout.rs"]
pub mod layout;
#[path = "../../../perfcounters/tests/support/rewrite.rs"]
pub mod rewrite;
#[path = "../../../perfcounters/tests/support/shared_data.rs"]
pub mod shared_data;

#[allow(unused_imports)]
pub use fixtures::{system_time, tempdir, v1_capture, v2_counterset_block, Dir, T0};

use perfcounters::format::blg::encode::{
    encode_counter_list, encode_sample, BlgEncodeOptions, BlgWriter, SampleEntry,
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
pub fn available_bytes_spec() -> perfcounters::format::blg::BlgCounterSpec {
    perfcounters::format::blg::BlgCounterSpec {
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
    specs: &[perfcounters::format::blg::BlgCounterSpec],
    samples: Vec<(i64, Vec<SampleEntry>)>,
) -> Vec<u8> {
    let mut w = BlgWriter::new(
        std::io::Cursor::new(Vec::new()),
        BlgEncodeOptions::default(),
    )
    .unwrap();
    w.write_record(RecordKind::CounterList, BLG_T0, &encode_counter_list(specs))
        .unwrap();
    for (t, entries) in samples {
        w.write_record(RecordKind::Sample, t, &encode_sample(&entries))
            .unwrap();
    }
    w.finish().unwrap().into_inner()
}

// Capture directories.

use perfcounters::format::capture::{Capture, CaptureInfo, CaptureSample, NameKind, NameTableFile};
use perfcounters::format::v2::{
    CounterRegistration, CounterSetRegistration, CounterSpec, InstanceData,
    PERF_ATTRIB_NO_DISPLAYABLE, PERF_COUNTERSET_MULTI_INSTANCES, PERF_WILDCARD_COUNTER,
};

/// A "Processor Information"-like counterset: % Processor Time (0, PERF_100NSEC_TIMER_INV),
/// % Processor Utility (26, PERF_AVERAGE_BULK) with its base (27), Processor Frequency (17, RAWCOUNT).
pub fn processor_information() -> CounterSetRegistration {
    let mut utility =
        CounterRegistration::new(26, CounterType::PERF_AVERAGE_BULK, "% Processor Utility");
    utility.base_counter_id = 27;
    let mut base = CounterRegistration::new(27, CounterType::PERF_AVERAGE_BASE, "% Utility Base");
    base.attrib = PERF_ATTRIB_NO_DISPLAYABLE;
    CounterSetRegistration {
        guid: "{b4fc721a-0378-476f-89ba-a5a79f810b36}".parse().unwrap(),
        name: Some("Processor Information".into()),
        help: None,
        instance_type: PERF_COUNTERSET_MULTI_INSTANCES,
        detail_level: 100,
        counters: vec![
            CounterRegistration::new(0, CounterType::PERF_100NSEC_TIMER_INV, "% Processor Time"),
            utility,
            base,
            CounterRegistration::new(
                17,
                CounterType::PERF_COUNTER_RAWCOUNT,
                "Processor Frequency",
            ),
        ],
    }
}

/// The V2 block at `s` seconds; per instance: idle (100 ns), utility, utility base, MHz.
pub fn v2_block(s: i64, cpus: [(&str, [u64; 4]); 2]) -> Vec<u8> {
    let instances = cpus
        .iter()
        .enumerate()
        .map(|(id, (name, v))| InstanceData {
            id: id as u32,
            name: (*name).into(),
            values: vec![
                Value::U64(v[0]),
                Value::U64(v[1]),
                Value::U32(v[2] as u32),
                Value::U32(v[3] as u32),
            ],
        })
        .collect();
    v2_counterset_block(s, vec![0, 26, 27, 17], instances)
}

/// A capture directory of three samples: V1 System + Processor blocks (as in `write_blocks`) and V2 Processor Information blocks.
pub fn write_capture(dir: &Path) {
    let mut english: perfcounters::names::NameTable =
        [(2, "System"), (248, "Processes"), (238, "Processor")]
            .into_iter()
            .collect();
    english.set_base_index(Some(1847));
    let v1 = [
        block(0, [0, 0], 100),
        block(1, [2_500_000, 5_000_000], 101),
        block(2, [12_500_000, 5_000_000], 99),
    ];
    let v2 = [
        v2_block(
            0,
            [
                ("0,0", [0, 100, 10, 2_995]),
                ("_Total", [0, 200, 20, 2_995]),
            ],
        ),
        v2_block(
            1,
            [
                ("0,0", [1_000_000, 190, 20, 2_994]),
                ("_Total", [3_000_000, 380, 40, 2_993]),
            ],
        ),
        v2_block(
            2,
            [
                ("0,0", [11_000_000, 190, 30, 2_992]),
                ("_Total", [8_000_000, 500, 60, 2_991]),
            ],
        ),
    ];
    Capture {
        info: CaptureInfo {
            machine: "GETAWAY".into(),
            os: "Windows 10.0.19045".into(),
            created: "2020-03-18T18:54:03Z".into(),
            tool: "perfcounters 0.1.0".into(),
        },
        names: vec![NameTableFile {
            kind: NameKind::Counter,
            language: "009".into(),
            bytes: perfcounters::names::to_multi_sz(&english),
        }],
        registrations: vec![processor_information().encode().unwrap()],
        v2_counters: Some(
            CounterSpec::encode_list(&[CounterSpec {
                guid: processor_information().guid,
                status: 0,
                counter_id: PERF_WILDCARD_COUNTER,
                instance_id: 0xFFFF_FFFF,
                index: 0,
                instance_name: Some("*".into()),
            }])
            .unwrap(),
        ),
        samples: v1
            .into_iter()
            .zip(v2)
            .map(|(a, b)| CaptureSample {
                v1: Some(a),
                v2: Some(b),
            })
            .collect(),
    }
    .write(dir)
    .unwrap();
}

// A log of a Spanish machine and its name tables.

/// A relog-style log of a Spanish machine (written in code page 1252, CRLF).
pub const ES: &str = "\"(PDH-CSV 4.0) (Hora de verano romance)(-120)\",\"\\\\SRV\\Disco físico(_Total)\\% de tiempo inactivo\",\"\\\\SRV\\Memoria\\Bytes disponibles\",\"\\\\SRV\\Procesador(_Total)\\% de tiempo de procesador\"\r\n\
\"07/01/2023 10:00:00.000\",\"97.5\",\"1024\",\" \"\r\n\
\"07/01/2023 10:00:15.000\",\"90\",\"2048\",\"6.9494827586206889356e-005\"\r\n\
\"07/01/2023 10:00:30.000\",\"80.25\",\"4096\",\"12.5\"\r\n\
\"07/01/2023 10:00:45.000\",\"70\",\"8192\",\"25\"\r\n";

pub fn es_1252() -> Vec<u8> {
    let (b, _, bad) = encoding_rs::WINDOWS_1252.encode(ES);
    assert!(!bad);
    b.into_owned()
}

/// Both languages of a `PerfStringBackup.INI`, UTF-16LE without a BOM, as `lodctr /S` writes it.
pub fn ini() -> Vec<u8> {
    let text = "\r\n[Perflib]\r\nBase Index=1847\r\nLast Counter=1848\r\nLast Help=1849\r\n\r\n\
        [PerfStrings_009]\r\n1=1847\r\n4=Memory\r\n5=help\r\n24=Available Bytes\r\n234=PhysicalDisk\r\n238=Processor\r\n6=% Processor Time\r\n1482=% Idle Time\r\n\r\n\
        [PerfStrings_00A]\r\n1=1847\r\n4=Memoria\r\n5=ayuda\r\n24=Bytes disponibles\r\n234=Disco físico\r\n238=Procesador\r\n6=% de tiempo de procesador\r\n1482=% de tiempo inactivo\r\n";
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// A program the tests need (`chromium`, `prometheus`, …), found on `PATH`. Missing, the test is
/// skipped with a note, except under CI, which installs it: there a missing program fails.
pub fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{name} is not installed; .ci/run installs it (apt-get)");
        }
        eprintln!("skipping: {name} is not installed (apt-get install it to run this test)");
    }
    found
}

/// One headless Chromium at a time: two at once on a loaded machine dump their page before it
/// settled.
static CHROMIUM: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Loads `url` (a served page or a `file://` report) in headless Chromium, with its profile in the
/// scratch directory `profile`, and returns the DOM it dumped: one Chromium at a time, within 60 s.
/// `None` when Chromium is not installed (see [`tool`]).
pub fn chromium_dump(url: &str, profile: &str) -> Option<String> {
    chromium_dump_in_zone(url, profile, None)
}

/// [`chromium_dump`] with the browser in the time zone `zone` (`TZ`, e.g. `Asia/Tokyo`), or in
/// the test's own zone.
pub fn chromium_dump_in_zone(url: &str, profile: &str, zone: Option<&str>) -> Option<String> {
    let chromium = tool("chromium")?;
    let _one = CHROMIUM.lock().unwrap_or_else(|e| e.into_inner());
    let profile = tempdir(profile);
    let mut command = Command::new(chromium);
    if let Some(z) = zone {
        command.env("TZ", z);
    }
    let mut child = command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let dom = reader.join().unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    Some(dom)
}

/// The number a page wrote in `data-NAME="…"` (what it drew), from the DOM Chromium dumped.
pub fn body_attr(dom: &str, name: &str) -> u64 {
    let key = format!("data-{name}=\"");
    let start = dom
        .find(&key)
        .unwrap_or_else(|| panic!("no {key} in {dom}"))
        + key.len();
    dom[start..].split('"').next().unwrap().parse().unwrap()
}
