//! The `perfcounters` binary end to end: decode, replayed watch (exact PDH-CSV bytes), list, typeperf,
//! and the error paths (bad files, bad flags, bad paths).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use perfcounters::format::v1::encode;
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, ObjectData, Snapshot, SystemTime, Value,
};
use perfcounters::CounterType;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfcounters"));
    c.env("TZ", "UTC");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run perfcounters")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("perfcounters-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn def(index: u32, ty: CounterType, size: u32, offset: u32, scale: i32) -> CounterDefinition {
    CounterDefinition {
        index,
        help_index: index + 1,
        counter_type: ty,
        size,
        offset,
        scale,
        detail_level: 100,
        ..Default::default()
    }
}

/// A System + Processor block like the captured Windows 10 ones, at 100 ns time `t` (seconds since the
/// first sample `s`), with `idle` 100 ns units of idle time per CPU and `processes` processes.
fn block(s: i64, idle: [u64; 2], processes: u32) -> Vec<u8> {
    let t0 = 132_290_312_439_883_752i64; // 2020-03-18T18:54:03.9883752Z
    let t = t0 + s * 10_000_000;
    let system = Object {
        index: 2,
        name: None,
        help_index: 3,
        detail_level: 100,
        default_counter: -1,
        code_page: 0,
        perf_time: t,
        perf_freq: 10_000_000,
        counters: vec![
            def(248, CounterType::PERF_COUNTER_RAWCOUNT, 4, 4, -1),
            def(674, CounterType::PERF_ELAPSED_TIME, 8, 8, -5),
        ],
        data: ObjectData::Single(vec![
            Value::U32(processes),
            Value::U64(132_289_457_285_000_000),
        ]),
    };
    let cpu = |name: &str, idle: u64| Instance {
        name: name.into(),
        raw_name: name.into(),
        unique_id: -1,
        values: vec![Value::U64(idle)],
        ..Default::default()
    };
    let processor = Object {
        index: 238,
        name: None,
        help_index: 239,
        detail_level: 100,
        default_counter: 0,
        code_page: 0,
        perf_time: 0,
        perf_freq: 0,
        counters: vec![def(6, CounterType::PERF_100NSEC_TIMER_INV, 8, 8, 0)],
        data: ObjectData::Instances(vec![
            cpu("0", idle[0]),
            cpu("1", idle[1]),
            cpu("_Total", (idle[0] + idle[1]) / 2),
        ]),
    };
    let snapshot = Snapshot {
        system_name: "GETAWAY".into(),
        system_time: SystemTime {
            year: 2020,
            month: 3,
            day_of_week: 3,
            day: 18,
            hour: 18,
            minute: 54,
            second: 3 + s as u16,
            milliseconds: 988,
        },
        perf_time: 1_000_000 + s * 10_000_000,
        perf_freq: 10_000_000,
        perf_time_100ns: t,
        objects: vec![system, processor],
    };
    encode(&snapshot).unwrap()
}

fn write_blocks(dir: &Path) -> Vec<String> {
    let samples = [
        (0, [0, 0], 100),
        (1, [2_500_000, 5_000_000], 101),
        (2, [12_500_000, 5_000_000], 99),
    ];
    samples
        .iter()
        .enumerate()
        .map(|(i, (s, idle, p))| {
            let path = dir.join(format!("t{i}.bin"));
            std::fs::write(&path, block(*s, *idle, *p)).unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn replayed_watch_writes_typeperf_csv_byte_for_byte() {
    let dir = tempdir("csv");
    let files = write_blocks(&dir);
    let mut args = vec![
        "watch",
        r"\Processor(*)\% Processor Time",
        r"\System\Processes",
        r"\System\System Up Time",
        "--format",
        "csv",
        "--replay",
    ];
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    // CPU 0: idle 0.25 s of 1 s → 75 %; CPU 1: 0.5 s → 50 %; _Total: 0.375 s → 62.5 %.
    // Then CPU 0 idle 1 s → 0 %, CPU 1 idle 0 → 100 %, _Total 0.5 → 50 %.
    // System Up Time: (D − N)/F with D = 132290312439883752 (+1 s per sample), N = 132289457285000000.
    let expected = "\r\n\
\"(PDH-CSV 4.0)\",\"\\\\GETAWAY\\Processor(0)\\% Processor Time\",\"\\\\GETAWAY\\Processor(1)\\% Processor Time\",\"\\\\GETAWAY\\Processor(_Total)\\% Processor Time\",\"\\\\GETAWAY\\System\\Processes\",\"\\\\GETAWAY\\System\\System Up Time\"\r\n\
\"03/18/2020 18:54:04.988\",\"75.000000\",\"50.000000\",\"62.500000\",\"101.000000\",\"85516.488375\"\r\n\
\"03/18/2020 18:54:05.988\",\"0.000000\",\"100.000000\",\"50.000000\",\"99.000000\",\"85517.488375\"\r\n";
    assert_eq!(stdout(&o), expected);

    // TSV and JSON through the same path.
    let mut tsv = args.clone();
    tsv[5] = "tsv";
    let o = run(&tsv);
    assert!(
        stdout(&o).contains("\"(PDH-TSV 4.0)\"\t\"\\\\GETAWAY\\Processor(0)\\% Processor Time\"")
    );
    let mut json = args.clone();
    json[5] = "json";
    let o = run(&json);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["timestamp"], "2020-03-18T18:54:04.988+00:00");
    assert_eq!(
        lines[0]["values"][0]["path"],
        r"\\GETAWAY\Processor(0)\% Processor Time"
    );
    assert_eq!(lines[0]["values"][0]["value"], 75.0);
    assert_eq!(lines[0]["values"][0]["status"], "PDH_CSTATUS_NEW_DATA");
    assert_eq!(lines[1]["values"][3]["value"], 99.0);

    // --samples stops early; a missing instance keeps its column with a status.
    let mut one = vec![
        "watch",
        r"\Processor(7)\% Processor Time",
        r"\System\Processes",
        "--samples",
        "1",
        "--format",
        "json",
        "--replay",
    ];
    one.extend(files.iter().map(String::as_str));
    let o = run(&one);
    assert!(o.status.success());
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["values"][0]["status"], "PDH_CSTATUS_NO_INSTANCE");
    assert_eq!(lines[0]["values"][0]["value"], serde_json::Value::Null);
    assert!(
        stderr(&o).contains(r#"object "Processor" has no instance "7"; did you mean"#),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decode_prints_the_documented_json() {
    let dir = tempdir("decode");
    let files = write_blocks(&dir);
    let o = run(&["decode", &files[1], "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["format"], "v1");
    assert_eq!(v["system_name"], "GETAWAY");
    assert_eq!(v["perf_time"], 11_000_000);
    assert_eq!(v["perf_freq"], 10_000_000);
    assert_eq!(v["perf_time_100ns"], 132_290_312_449_883_752i64);
    let system = &v["objects"][0];
    assert_eq!(system["index"], 2);
    assert_eq!(system["name"], "System");
    assert_eq!(system["counters"][1]["index"], 674);
    assert_eq!(system["counters"][1]["name"], "System Up Time");
    assert_eq!(system["counters"][1]["type"], 807666944);
    assert_eq!(system["counters"][1]["type_name"], "PERF_ELAPSED_TIME");
    assert_eq!(system["counters"][1]["size"], 8);
    assert_eq!(system["counters"][1]["offset"], 8);
    assert_eq!(system["counters"][1]["scale"], -5);
    assert_eq!(system["counters"][1]["detail_level"], 100);
    assert_eq!(
        system["values"],
        serde_json::json!([101, 132_289_457_285_000_000u64])
    );
    let processor = &v["objects"][1];
    assert_eq!(processor["name"], "Processor");
    assert_eq!(processor["instances"][2]["name"], "_Total");
    assert_eq!(
        processor["instances"][1]["values"],
        serde_json::json!([5_000_000])
    );
    assert_eq!(processor["instances"][1]["unique_id"], -1);
    assert!(processor.get("values").is_none());

    let o = run(&["decode", &files[1]]);
    let text = stdout(&o);
    assert!(
        text.starts_with("PERF_DATA_BLOCK (V1) from GETAWAY\n"),
        "{text}"
    );
    assert!(
        text.contains("System Up Time [674] type PERF_ELAPSED_TIME size 8 offset 8 scale -5"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decode_reports_malformed_files_with_offset() {
    let dir = tempdir("bad");
    let good = block(0, [0, 0], 1);
    let truncated = dir.join("truncated.bin");
    std::fs::write(&truncated, &good[..good.len() - 10]).unwrap();
    let o = run(&["decode", truncated.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.starts_with(&format!(
            "perfcounters: {}: PERF_DATA_BLOCK at offset 0: ",
            truncated.display()
        )),
        "{e}"
    );
    assert!(e.contains("TotalByteLength"), "{e}");

    let empty = dir.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let o = run(&["decode", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("PERF_DATA_HEADER at offset 0"),
        "{}",
        stderr(&o)
    );

    let v2 = dir.join("v2.bin");
    std::fs::write(&v2, [0u8; 64]).unwrap();
    let o = run(&["watch", "--replay", v2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a V1 block (no \"PERF\" signature)"),
        "{}",
        stderr(&o)
    );

    let o = run(&["decode", dir.join("missing.bin").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_and_paths_exit_non_zero() {
    let o = run(&["watch", "--interval", "soon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid interval \"soon\""),
        "{}",
        stderr(&o)
    );

    let o = run(&["watch", r"System\Processes", "--samples", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(r"invalid counter path System\Processes: at character 0"),
        "{}",
        stderr(&o)
    );

    let o = run(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));

    let o = run(&["typeperf", "-sc", "zero", r"\System\Processes"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "Error: invalid sample count \"zero\": expected a positive whole number\n"
    );

    let o = run(&["typeperf", "-?"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("-cf <filename>"));
}

#[cfg(target_os = "linux")]
#[test]
fn live_list_and_typeperf() {
    let o = run(&["list", "Memory"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).lines().any(|l| l == r"\Memory\Available Bytes"),
        "{}",
        stdout(&o)
    );

    let o = run(&["typeperf", "-qx", "Processor"]);
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l == r"\Processor(_Total)\% Processor Time"),
        "{}",
        stdout(&o)
    );

    let o = run(&["list", "Memroy"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(r#"no object named "Memroy"; did you mean "Memory"?"#),
        "{}",
        stderr(&o)
    );

    // typeperf framing: empty line, header, one row per sample, then the closing messages.
    let o = run(&[
        "typeperf",
        r"\Memory\Available Bytes",
        r"\Nope\X",
        "-si",
        "0.2",
        "-sc",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.split("\r\n").collect();
    assert_eq!(lines[0], "");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(
        lines[1],
        format!(
            "\"(PDH-CSV 4.0)\",\"\\\\{host}\\Memory\\Available Bytes\",\"\\\\{host}\\Nope\\X\""
        )
    );
    assert_eq!(lines.len(), 7, "{out:?}");
    assert_eq!(
        &lines[4..],
        [
            "Exiting, please wait...",
            "The command completed successfully.",
            ""
        ]
    );
    // The unknown object keeps its column, with no value.
    assert!(lines[2].ends_with("\",\" \""), "{out}");
    assert!(
        stderr(&o).contains(r#"no object named "Nope""#),
        "{}",
        stderr(&o)
    );

    let o = run(&["typeperf", r"\Nope\X", "-sc", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("Error: No valid counters."),
        "{}",
        stderr(&o)
    );
}
