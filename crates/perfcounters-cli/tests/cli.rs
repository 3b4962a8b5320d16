//! The `perfcounters` binary end to end: decode, replayed watch (exact PDH-CSV bytes), list, typeperf,
//! and the error paths (bad files, bad flags, bad paths).

use crate::common;
use crate::common::shared_data;

use common::{
    assert_stderr_contains, assert_stdout_contains, assert_success, available_bytes_spec,
    blg_bytes, block, run, run_on, stderr, stdout, tempdir, v1_capture, write_blocks,
    write_capture, write_files, BLG_T0,
};
use perfcounters::format::v1::encode;
use perfcounters::snapshot::{CounterDefinition, ObjectData, Value};
use perfcounters::CounterType;

#[test]
fn replayed_watch_writes_typeperf_csv_byte_for_byte() {
    let dir = tempdir("csv");
    let files = write_blocks(&dir);
    let watch = |format: &str| {
        run_on(
            &[
                "watch",
                r"\Processor(*)\% Processor Time",
                r"\System\Processes",
                r"\System\System Up Time",
                "--format",
                format,
                "--replay",
            ],
            &files,
        )
    };
    let o = watch("csv");
    assert_success(&o);
    // CPU 0: idle 0.25 s of 1 s → 75 %; CPU 1: 0.5 s → 50 %; _Total: 0.375 s → 62.5 %.
    // Then CPU 0 idle 1 s → 0 %, CPU 1 idle 0 → 100 %, _Total 0.5 → 50 %.
    // System Up Time: (D − N)/F with D = 132290312439883752 (+1 s per sample), N = 132289457285000000.
    let expected = "\r\n\
\"(PDH-CSV 4.0)\",\"\\\\GETAWAY\\Processor(0)\\% Processor Time\",\"\\\\GETAWAY\\Processor(1)\\% Processor Time\",\"\\\\GETAWAY\\Processor(_Total)\\% Processor Time\",\"\\\\GETAWAY\\System\\Processes\",\"\\\\GETAWAY\\System\\System Up Time\"\r\n\
\"03/18/2020 18:54:04.988\",\"75.000000\",\"50.000000\",\"62.500000\",\"101.000000\",\"85516.488375\"\r\n\
\"03/18/2020 18:54:05.988\",\"0.000000\",\"100.000000\",\"50.000000\",\"99.000000\",\"85517.488375\"\r\n";
    assert_eq!(stdout(&o), expected);

    // TSV and JSON through the same path.
    let o = watch("tsv");
    assert_stdout_contains(
        &o,
        "\"(PDH-TSV 4.0)\"\t\"\\\\GETAWAY\\Processor(0)\\% Processor Time\"",
    );
    let o = watch("json");
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
    assert_success(&o);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["values"][0]["status"], "PDH_CSTATUS_NO_INSTANCE");
    assert_eq!(lines[0]["values"][0]["value"], serde_json::Value::Null);
    assert_stderr_contains(
        &o,
        r#"object "Processor" has no instance "7"; did you mean"#,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decode_prints_the_documented_json() {
    let dir = tempdir("decode");
    let files = write_blocks(&dir);
    let o = run(&["decode", &files[1], "--format", "json"]);
    assert_success(&o);
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
    assert_stderr_contains(&o, "PERF_DATA_HEADER at offset 0");

    let v2 = dir.join("v2.bin");
    std::fs::write(&v2, [0u8; 64]).unwrap();
    let o = run(&["watch", "--replay", v2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_stderr_contains(&o, "not a V1 block (no \"PERF\" signature)");

    let o = run(&["decode", dir.join("missing.bin").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_stderr_contains(&o, "cannot read");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_and_paths_exit_non_zero() {
    let o = run(&["watch", "--interval", "soon"]);
    assert_eq!(o.status.code(), Some(2));
    assert_stderr_contains(&o, "invalid interval \"soon\"");

    let o = run(&["watch", r"System\Processes", "--samples", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_stderr_contains(&o, r"invalid counter path System\Processes: at character 0");

    let o = run(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));

    let o = run(&["typeperf", "-sc", "zero", r"\System\Processes"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "perfcounters: invalid sample count \"zero\": expected a positive whole number\n"
    );

    let o = run(&["typeperf", "-?"]);
    assert_success(&o);
    assert_stdout_contains(&o, "-cf <filename>");
}

#[cfg(target_os = "linux")]
#[test]
fn live_list_and_typeperf() {
    let o = run(&["list", "Memory"]);
    assert_success(&o);
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
    assert_stderr_contains(&o, r#"no object named "Memroy"; did you mean "Memory"?"#);

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
    assert_success(&o);
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
    assert_stderr_contains(&o, r#"no object named "Nope""#);

    let o = run(&["typeperf", r"\Nope\X", "-sc", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert_stderr_contains(
        &o,
        "perfcounters: no valid counters:\n  \\Nope\\X: no object named \"Nope\"",
    );
}

// ------------------------------------------------------------------------------------------------
// Capture directories: watch --replay DIR, list --replay DIR, decode DIR.

#[test]
fn capture_directories_replay_list_and_decode() {
    let dir = tempdir("capture").join("cap");
    write_capture(&dir);
    let d = dir.to_str().unwrap();
    let o = run(&[
        "watch",
        r"\Processor(_Total)\% Processor Time",
        r"\System\Processes",
        r"\Processor Information(*)\% Processor Time",
        r"\Processor Information(0,0)\% Processor Utility",
        r"\Processor Information(_Total)\Processor Frequency",
        "--format",
        "csv",
        "--replay",
        d,
    ]);
    assert_success(&o);
    // V1 (as in replayed_watch_writes_typeperf_csv_byte_for_byte): _Total idle 0.375 s, then 0.5 s of 1 s.
    // V2 over the same seconds: 0,0 idle 0.1 s → 90 %, then 1 s → 0 %; _Total 0.3 s → 70 %, 0.5 s → 50 %;
    // utility (190 − 100)/(20 − 10) = 9, then (190 − 190)/(30 − 20) = 0; frequency as recorded.
    let expected = "\r\n\
\"(PDH-CSV 4.0)\",\"\\\\GETAWAY\\Processor(_Total)\\% Processor Time\",\"\\\\GETAWAY\\System\\Processes\",\"\\\\GETAWAY\\Processor Information(0,0)\\% Processor Time\",\"\\\\GETAWAY\\Processor Information(_Total)\\% Processor Time\",\"\\\\GETAWAY\\Processor Information(0,0)\\% Processor Utility\",\"\\\\GETAWAY\\Processor Information(_Total)\\Processor Frequency\"\r\n\
\"03/18/2020 18:54:04.988\",\"62.500000\",\"101.000000\",\"90.000000\",\"70.000000\",\"9.000000\",\"2993.000000\"\r\n\
\"03/18/2020 18:54:05.988\",\"50.000000\",\"99.000000\",\"0.000000\",\"50.000000\",\"0.000000\",\"2991.000000\"\r\n";
    assert_eq!(stdout(&o), expected);
    assert_eq!(stderr(&o), "");

    let o = run(&["list", "--replay", d]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\\System\\Processes\n\
         \\System\\System Up Time\n\
         \\Processor(*)\\% Processor Time\n\
         \\Processor Information(*)\\% Processor Time\n\
         \\Processor Information(*)\\% Processor Utility\n\
         \\Processor Information(*)\\Processor Frequency\n"
    );
    let o = run(&["list", "-x", "processor information", "--replay", d]);
    assert_eq!(
        stdout(&o),
        "\\Processor Information(0,0)\\% Processor Time\n\
         \\Processor Information(_Total)\\% Processor Time\n\
         \\Processor Information(0,0)\\% Processor Utility\n\
         \\Processor Information(_Total)\\% Processor Utility\n\
         \\Processor Information(0,0)\\Processor Frequency\n\
         \\Processor Information(_Total)\\Processor Frequency\n"
    );

    let o = run(&["decode", d]);
    assert_success(&o);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("capture {d}"));
    assert_eq!(
        lines[1..4],
        [
            "  machine GETAWAY, os Windows 10.0.19045, created 2020-03-18T18:54:03Z, tool perfcounters 0.1.0",
            "  3 sample(s), name tables: counter-009",
            "  V2 counterset {b4fc721a-0378-476f-89ba-a5a79f810b36} Processor Information: 4 counter(s)",
        ]
    );
    // Sample files are shown relative to the capture, with the platform's separator.
    let sep = std::path::MAIN_SEPARATOR;
    let text = text.replace(&format!("samples{sep}"), "samples/");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "== sample 2: samples/0002.v2.blk ==")
        .unwrap();
    assert_eq!(
        lines[at..at + 14],
        [
            "== sample 2: samples/0002.v2.blk ==",
            "PERF_DATA_HEADER (V2) with the capture's registrations",
            "  system time 2020-03-18 18:54:04.988 UTC, perf time 11000000 at 10000000 Hz, 100ns time 132290312449883752",
            "  1 counter block(s), 1 counterset(s)",
            "",
            "counterset Processor Information",
            "  detail level 100, default counter -1, code page 0, object time 0 at 0 Hz",
            "  counters:",
            "      0. % Processor Time [0] type PERF_100NSEC_TIMER_INV size 8 offset 0 scale 0 detail 100",
            "      1. % Processor Utility [26] type PERF_AVERAGE_BULK size 8 offset 0 scale 0 detail 100 base #2",
            "      2. % Utility Base [27] type PERF_AVERAGE_BASE size 4 offset 0 scale 0 detail 100",
            "      3. Processor Frequency [17] type PERF_COUNTER_RAWCOUNT size 4 offset 0 scale 0 detail 100",
            "  2 instance(s):",
            "    0,0 (unique id 0): 1000000 190 20 2994",
        ]
    );
    assert!(
        text.contains("\n== sample 3: samples/0003.v1.blk ==\nPERF_DATA_BLOCK (V1) from GETAWAY\n")
    );
    assert!(text.contains("\n    _Total (unique id -1): 8750000\n"));

    let o = run(&["decode", d, "--format", "json"]);
    assert_success(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["format"], "capture");
    assert_eq!(v["version"], 1);
    assert_eq!(v["machine"], "GETAWAY");
    assert_eq!(v["names"][0]["file"], "names/counter-009.msz");
    assert_eq!(
        v["countersets"][0]["guid"],
        "{b4fc721a-0378-476f-89ba-a5a79f810b36}"
    );
    assert_eq!(v["countersets"][0]["counters"][1]["base_counter_id"], 27);
    assert_eq!(
        v["countersets"][0]["counters"][1]["type_name"],
        "PERF_AVERAGE_BULK"
    );
    assert_eq!(
        v["countersets"][0]["counters"][0]["base_counter_id"],
        serde_json::Value::Null
    );
    assert_eq!(v["countersets"][0]["counters"][2]["attrib"], 2);
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    assert_eq!(samples[2]["number"], 3);
    assert_eq!(samples[2]["v1"]["format"], "v1");
    assert_eq!(samples[2]["v1"]["objects"][1]["name"], "Processor");
    assert_eq!(
        samples[2]["v1"]["objects"][0]["values"],
        serde_json::json!([99, 132_289_457_285_000_000u64])
    );
    let v2 = &samples[1]["v2"];
    assert_eq!(v2["format"], "v2");
    assert_eq!(v2["perf_time"], 11_000_000);
    assert_eq!(
        v2["blocks"][0]["counter_ids"],
        serde_json::json!([0, 26, 27, 17])
    );
    assert_eq!(v2["block_errors"], serde_json::json!([]));
    let o2 = &v2["objects"][0];
    assert_eq!(o2["name"], "Processor Information");
    assert_eq!(o2["counters"][1]["name"], "% Processor Utility");
    assert_eq!(o2["counters"][1]["base"], 2);
    assert_eq!(o2["instances"][1]["name"], "_Total");
    assert_eq!(
        o2["instances"][1]["values"],
        serde_json::json!([3_000_000, 380, 40, 2993])
    );

    // A capture directory must be the only replay path; --names does not apply to it.
    let v1 = dir.join("samples/0001.v1.blk");
    let o = run(&["watch", "--replay", d, v1.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {d} is a directory: a capture directory must be the only --replay path\n")
    );
    let o = run(&["list", "--replay", d, "--names", "x.txt"]);
    assert_eq!(o.status.code(), Some(1));
    assert_stderr_contains(&o, "carries its own name tables");

    // The V2 block of a capture alone still cannot be replayed; the message points to capture directories.
    let v2 = dir.join("samples/0001.v2.blk");
    let o = run(&["watch", "--replay", v2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_stderr_contains(&o, "replay it with `--replay DIR`");

    // A damaged capture: the error names the file.
    std::fs::remove_file(dir.join("samples/0002.v1.blk")).unwrap();
    std::fs::remove_file(dir.join("samples/0002.v2.blk")).unwrap();
    let o = run(&["watch", "--replay", d]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {}: sample 2 of 3 is missing: neither 0002.v1.blk nor 0002.v2.blk exists\n",
            dir.join("samples").display()
        )
    );
    let o = run(&["decode", d]);
    assert_eq!(o.status.code(), Some(1));
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[cfg(not(windows))]
#[test]
fn capture_outside_windows_says_what_to_use_instead() {
    let o = run(&["capture", "-o", "never-written"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "perfcounters: capture records raw Windows performance data (HKEY_PERFORMANCE_DATA blocks, \
         PerfLib V2 results and the name tables) and runs on Windows; on this system record values \
         with `perfcounters watch -f csv -o FILE`\n"
    );
    assert!(!std::path::Path::new("never-written").exists());
    let o = run(&["capture", "--samples", "many"]);
    assert_eq!(o.status.code(), Some(2));
    assert_stderr_contains(&o, "invalid value 'many' for '--samples <SAMPLES>'");
}

#[test]
fn replayed_watch_writes_a_sql_log_that_relog_reads_back() {
    use perfcounters::log::pdh_csv::format_precise;
    let dir = tempdir("sql");
    let files = write_blocks(&dir);
    let target = format!("SQL:{}!replay", dir.join("logs.db").display());
    let o = run_on(
        &[
            "watch",
            r"\Processor(*)\% Processor Time",
            r"\System\Processes",
            r"\System\System Up Time",
            "--format",
            "sql",
            "--output",
            &target,
            "--replay",
        ],
        &files,
    );
    assert_success(&o);
    assert_eq!(stdout(&o), "");
    // The SQL log keeps the priming collection as its first record, with raw values, so relog computes
    // the same values as watch printed (and nothing for the rates of the first record).
    let o = run(&["relog", &target]);
    assert_success(&o);
    let up = |s: f64| format_precise(85515.4883752 + s);
    let expected = format!(
        "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\GETAWAY\\Processor(0)\\% Processor Time\",\"\\\\GETAWAY\\Processor(1)\\% Processor Time\",\"\\\\GETAWAY\\Processor(_Total)\\% Processor Time\",\"\\\\GETAWAY\\System\\Processes\",\"\\\\GETAWAY\\System\\System Up Time\"\r\n\
\"03/18/2020 18:54:03.988\",\" \",\" \",\" \",\"100\",\"{}\"\r\n\
\"03/18/2020 18:54:04.988\",\"75\",\"50\",\"62.5\",\"101\",\"{}\"\r\n\
\"03/18/2020 18:54:05.988\",\"0\",\"100\",\"50\",\"99\",\"{}\"\r\n",
        up(0.0),
        up(1.0),
        up(2.0)
    );
    assert_eq!(stdout(&o), expected);
    // typeperf's spelling of the same output is accepted (-f SQL with -o SQL:…); BIN is not.
    let o = run(&["typeperf", r"\System\Processes", "-f", "BIN", "-o", "x.blg"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "perfcounters: output format BIN (.blg) is not supported; use CSV, TSV or SQL\n"
    );
    let o = run(&[
        "watch",
        r"\System\Processes",
        "--format",
        "sql",
        "--replay",
        &files[0],
    ]);
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o),
        "perfcounters: the SQL format writes to --output SQL:file.db!logname\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An output's kind follows its name: `--output SQL:…` needs no `--format`, a `.tsv` name is
/// PDH-TSV, a contradicting `--format` or a `.blg` name is refused before anything is written.
#[test]
fn watch_output_kind_follows_its_name() {
    let dir = tempdir("outkind");
    let files = write_blocks(&dir);
    let target = format!("SQL:{}!named", dir.join("logs.db").display());
    let o = run_on(
        &[
            "watch",
            r"\System\Processes",
            "--output",
            &target,
            "--replay",
        ],
        &files,
    );
    assert_success(&o);
    let o = run(&["relog", &target, "-q"]);
    assert_success(&o);
    assert_stdout_contains(&o, "(SQL)");
    assert_stdout_contains(&o, "Samples:  3");

    let tsv = dir.join("out.tsv");
    let o = run_on(
        &[
            "watch",
            r"\System\Processes",
            "--output",
            tsv.to_str().unwrap(),
            "--replay",
        ],
        &files,
    );
    assert_success(&o);
    assert!(std::fs::read_to_string(&tsv)
        .unwrap()
        .starts_with("\r\n\"(PDH-TSV 4.0)\"\t"));

    let csv = dir.join("out.csv");
    let o = run_on(
        &[
            "watch",
            r"\System\Processes",
            "--format",
            "tsv",
            "--output",
            csv.to_str().unwrap(),
            "--replay",
        ],
        &files,
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {}: the name says CSV but the format asked for is TSV\n",
            csv.display()
        )
    );
    let blg = dir.join("out.blg");
    let o = run_on(
        &[
            "watch",
            r"\System\Processes",
            "--output",
            blg.to_str().unwrap(),
            "--replay",
        ],
        &files,
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {}: Binary logs are read, not written: name a .csv, .tsv or SQL:file.db!log output\n",
            blg.display()
        )
    );
    assert!(!csv.exists() && !blg.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `decode` of a text or SQL log says what it is and to use relog (not a PERF_DATA_HEADER size).
#[test]
fn decode_of_a_log_points_to_relog() {
    let dir = tempdir("decodelog");
    let csv = dir.join("log.dat");
    std::fs::write(
        &csv,
        b"\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n\"01/01/2024 00:00:00.000\",\"1\"\r\n",
    )
    .unwrap();
    let o = run(&["decode", csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let c = csv.display();
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {c} is a CSV log, not raw data (block files, a capture directory, a \
             .blg log): read it with `perfcounters relog {c}`\n"
        )
    );
    let db = dir.join("logs.db");
    let target = format!("SQL:{}!a", db.display());
    assert_success(&run(&["relog", csv.to_str().unwrap(), "-o", &target]));
    for input in [target.clone(), db.display().to_string()] {
        let o = run(&["decode", &input]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            stderr(&o),
            format!(
                "perfcounters: {input} is a SQL log, not raw data (block files, a capture \
                 directory, a .blg log): read it with `perfcounters relog {input}`\n"
            )
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `watch --replay` reads raw data: a counter log is refused with what to do instead, and so is a
/// binary log among other paths; `--names` applies to block files only.
#[test]
fn replay_refuses_counter_logs_and_a_binary_log_among_blocks() {
    let dir = tempdir("replayrefusals");
    let csv = dir.join("log.csv");
    std::fs::write(
        &csv,
        b"\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n\"01/01/2024 00:00:00.000\",\"1\"\r\n",
    )
    .unwrap();
    let blg = dir.join("log.blg");
    std::fs::write(&blg, blg_log()).unwrap();
    let block = dir.join("0001.blk");
    std::fs::write(&block, b"PERF").unwrap();
    let (c, b, k) = (csv.display(), blg.display(), block.display());
    let o = run(&["watch", "--replay", &k.to_string(), &c.to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {c} is a CSV log, not raw data (block files, a capture directory, a \
             .blg log): read it with `perfcounters relog {c}`\n"
        )
    );
    let o = run(&["watch", "--replay", &b.to_string(), &k.to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {b} is a binary log: it must be the only --replay path\n")
    );
    let o = run(&[
        "list",
        "--replay",
        &c.to_string(),
        "--names",
        &k.to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {c} is a CSV log, not raw data (block files, a capture directory, a \
             .blg log): read it with `perfcounters relog {c}`\n"
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 32-bit binary log: a raw count and a wildcard 100 ns timer with two instances, two samples a
/// second apart from 2020-01-17 00:00:00 local time; the second sample has a NO_MACHINE value.
fn blg_log() -> Vec<u8> {
    use perfcounters::format::blg::encode::{InstanceEntry, RawEntry, SampleEntry};
    use perfcounters::format::blg::BlgCounterSpec;
    use perfcounters::PdhStatus;
    let specs = [
        available_bytes_spec(),
        BlgCounterSpec {
            flags: 1,
            counter_type: CounterType::PERF_100NSEC_TIMER_INV,
            time_base: 10_000_000,
            machine: r"\\HOST".into(),
            object: "Processor".into(),
            instance: Some("*".into()),
            counter: "% Processor Time".into(),
            ..Default::default()
        },
    ];
    let samples = (0..2i64)
        .map(|i| {
            let t = BLG_T0 + i * 10_000_000;
            let status = if i == 1 {
                PdhStatus::PDH_CSTATUS_NO_MACHINE
            } else {
                PdhStatus::default()
            };
            let entries = vec![
                SampleEntry::Counter(RawEntry {
                    status,
                    time_stamp: t,
                    first: 1000 + i,
                    second: 0,
                    multi_count: 1,
                }),
                SampleEntry::Instances {
                    status: PdhStatus::default(),
                    time_stamp: t,
                    items: ["0", "_Total"]
                        .iter()
                        .map(|n| InstanceEntry {
                            name: (*n).into(),
                            multi_count: 0,
                            first: 5_000_000 * i,
                            second: t + 288_000_000_000,
                        })
                        .collect(),
                },
            ];
            (t, entries)
        })
        .collect();
    blg_bytes(&specs, samples)
}

#[test]
fn decode_binary_logs() {
    let d = tempdir("decode-blg");
    let path = d.join("x.blg");
    std::fs::write(&path, blg_log()).unwrap();
    let p = path.to_str().unwrap();
    let o = run(&["decode", p]);
    assert_success(&o);
    let text = stdout(&o);
    for expected in [
        "  writer: Windows build 9200, 32-bit, 4 processor(s), PerfFreq 2725536 Hz\n",
        "  time zone: Pacific Standard Time / Pacific Daylight Time (bias 480, standard +0, daylight -60)\n",
        "counter list (offset 65608): 2 entries\n",
        "  [1] \\\\HOST\\Processor(*)\\% Processor Time  PERF_100NSEC_TIMER_INV (0x21510500)  time base 10000000  scale 0  flags 0x1\n",
        "sample 1 at 2020-01-17 00:00:01.000 (record at offset ",
        "  \\\\HOST\\Memory\\Available Bytes  first 1001 second 0 multi 1  status 0x800007d0 PDH_CSTATUS_NO_MACHINE\n",
        "  \\\\HOST\\Processor(_Total)\\% Processor Time  first 5000000 second 132237216010000000 multi 0\n",
        "\n2 samples from 2020-01-17 00:00:00.000 to 2020-01-17 00:00:01.000, 3 columns\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    let o = run(&["decode", "-f", "json", p]);
    assert_success(&o);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["format"], "blg");
    assert_eq!(lines[0]["header"]["pointer_size"], 4);
    assert_eq!(
        lines[0]["header"]["time_zone"]["standard_name_resolved"],
        "Pacific Standard Time"
    );
    assert_eq!(lines[0]["counters"][1]["instance"], "*");
    assert_eq!(lines[1]["time"], "2020-01-17T00:00:00.000");
    assert_eq!(lines[2]["values"][0]["status"], 0x800007D0u32);
    assert_eq!(lines[2]["values"][2]["first"], 5_000_000);
    assert_eq!(
        lines[3]["columns"][2]["path"],
        "\\\\HOST\\Processor(_Total)\\% Processor Time"
    );
    assert_eq!(lines[3]["samples"], 2);
    assert_eq!(lines[3]["error"], serde_json::Value::Null);
    // A damaged log: the samples before the damage, the error at the end, exit status 1.
    let mut bytes = blg_log();
    let n = bytes.len();
    bytes[n - 65536 + 0x30..n - 65536 + 0x34].copy_from_slice(&70_000u32.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let o = run(&["decode", p]);
    assert!(!o.status.success());
    assert_stderr_contains(&o, "WMI_BUFFER_HEADER at offset 65584: FilledBytes 70000");
    // --names does not apply.
    let o = run(&["decode", "--names", p, p]);
    assert_stderr_contains(&o, "names its counters itself");
}

/// `block` with one more object, of a title index no name table knows (99990), with a counter (99992).
fn block_with_unnamed_object(s: i64) -> Vec<u8> {
    let mut snapshot = perfcounters::format::v1::PerfDataBlock::parse(&block(s, [0, 0], 100))
        .and_then(|b| b.to_snapshot())
        .unwrap();
    let mut unnamed = snapshot.objects[0].clone();
    unnamed.index = 99_990;
    unnamed.help_index = 99_991;
    unnamed.counters = vec![CounterDefinition::new(
        99_992,
        CounterType::PERF_COUNTER_RAWCOUNT,
    )];
    unnamed.data = ObjectData::Single(vec![Value::U32(1)]);
    snapshot.objects.insert(1, unnamed);
    encode(&snapshot).unwrap()
}

#[test]
fn block_files_and_captures_list_and_suggest_alike() {
    let dir = tempdir("alike");
    let blocks = [block_with_unnamed_object(0), block_with_unnamed_object(1)];
    let files = write_files(&dir, "u", &blocks);
    let cap = dir.join("cap");
    v1_capture(&blocks).write(&cap).unwrap();
    let cap = cap.to_str().unwrap();

    // The object no name table names is listed by neither: no path could select it.
    let expected = "\\System\\Processes\n\
                    \\System\\System Up Time\n\
                    \\Processor(*)\\% Processor Time\n";
    let o = run_on(&["list", "--replay"], &files);
    assert_success(&o);
    assert_eq!(stdout(&o), expected);
    let o = run(&["list", "--replay", cap]);
    assert_success(&o);
    assert_eq!(stdout(&o), expected);

    // A name table names it.
    let names = dir.join("names.txt");
    std::fs::write(&names, "99990 Custom\n99992 Custom Count\n").unwrap();
    let o = run_on(
        &[
            "list",
            "custom",
            "--names",
            names.to_str().unwrap(),
            "--replay",
        ],
        &files,
    );
    assert_success(&o);
    assert_eq!(stdout(&o), "\\Custom\\Custom Count\n");

    // A misspelt object gets the close names of every object the replay offers.
    for replay in [files.clone(), vec![cap.to_string()]] {
        let o = run_on(
            &[
                "watch",
                r"\Procesor(*)\% Processor Time",
                r"\System\Processes",
                "--format",
                "csv",
                "--replay",
            ],
            &replay,
        );
        assert_success(&o);
        assert_eq!(
            stderr(&o),
            "perfcounters: \\Procesor(*)\\% Processor Time: no object named \"Procesor\"; did you mean \"Processor\"?\n"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_and_watch_replay_binary_logs() {
    let d = tempdir("replay-blg");
    let path = d.join("x.blg");
    std::fs::write(&path, blg_log()).unwrap();
    let p = path.to_str().unwrap();
    let o = run(&["list", "--replay", p]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\\Memory\\Available Bytes\n\\Processor(*)\\% Processor Time\n"
    );
    let o = run(&["list", "-x", "processor", "--replay", p]);
    assert_eq!(
        stdout(&o),
        "\\Processor(0)\\% Processor Time\n\\Processor(_Total)\\% Processor Time\n"
    );
    // The second sample's Memory value has a NO_MACHINE status: no value.
    let o = run(&[
        "watch",
        r"\Processor(*)\% Processor Time",
        r"\Memory\Available Bytes",
        "-f",
        "csv",
        "--replay",
        p,
    ]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\r\n\"(PDH-CSV 4.0)\",\"\\\\HOST\\Processor(0)\\% Processor Time\",\"\\\\HOST\\Processor(_Total)\\% Processor Time\",\"\\\\HOST\\Memory\\Available Bytes\"\r\n\
         \"01/17/2020 00:00:01.000\",\"50.000000\",\"50.000000\",\" \"\r\n"
    );
    // The times are the log's local time (US Pacific), as relog shows them, whatever the viewer's
    // zone: watch's rows (after the priming sample) have relog's times.
    let watch_times: Vec<String> = stdout(&o)
        .lines()
        .skip(2)
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect();
    let o = run(&["relog", p]);
    assert_success(&o);
    let relog_times: Vec<String> = stdout(&o)
        .lines()
        .skip(2)
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect();
    assert_eq!(watch_times, ["\"01/17/2020 00:00:01.000\""]);
    assert_eq!(watch_times, relog_times);
    let o = run(&["watch", "--names", p, "--replay", p]);
    assert_stderr_contains(&o, "names its counters itself");
}

/// watch expands wildcards again as it goes, at every collection when they are 10 s or more apart
/// (the PAL Vista log: samples a minute apart, whose Process instances change between samples). JSON lines follow the instances: PowerStarter runs only in sample 2, PowerDVD
/// only in sample 4; in between, the wildcard's one column waits (`NO_INSTANCE`). CSV keeps the
/// header's columns: SearchProtocolHost starts in sample 6, after the header, and is reported on
/// standard error; WmiPrvSE exits after sample 5 and leaves its cells blank.
#[test]
fn watch_follows_instances_that_start_and_exit() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let log = data.join("blg/pal-vista-SamplePerfmonLog.blg");
    let log = log.to_str().unwrap();
    let o = run(&[
        "watch",
        "--replay",
        log,
        r"\Process(Power*)\Working Set",
        "--format",
        "json",
    ]);
    assert_success(&o);
    assert_stderr_contains(&o, "has no instance matching \"Power*\" yet");
    let rows: Vec<Vec<(String, Option<f64>, String)>> = stdout(&o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    (
                        x["path"].as_str().unwrap().to_string(),
                        x["value"].as_f64(),
                        x["status"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .collect();
    let waiting = vec![(
        r"\\ZACH-PC\Process(Power*)\Working Set".to_string(),
        None,
        "PDH_CSTATUS_NO_INSTANCE".to_string(),
    )];
    let running = |name: &str, v: f64| {
        vec![(
            format!(r"\\ZACH-PC\Process({name})\Working Set"),
            Some(v),
            "PDH_CSTATUS_NEW_DATA".to_string(),
        )]
    };
    // Samples 2 … 11 (sample 1 primes).
    let mut want = vec![waiting.clone(); 10];
    want[0] = running("PowerStarter", 65_740_800.0);
    want[2] = running("PowerDVD", 14_254_080.0);
    assert_eq!(rows, want);

    let o = run(&[
        "watch",
        "--replay",
        log,
        r"\Process(SearchP*)\Working Set",
        r"\Process(WmiPrvSE)\Working Set",
        r"\Process(Wmi*)\Working Set",
        "--format",
        "csv",
    ]);
    assert_success(&o);
    assert_stderr_contains(
        &o,
        "\\\\ZACH-PC\\Process(SearchProtocolHost)\\Working Set appeared after the header was written",
    );
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(
        lines[0],
        "\"(PDH-CSV 4.0)\",\"\\\\ZACH-PC\\Process(SearchP*)\\Working Set\",\
         \"\\\\ZACH-PC\\Process(WmiPrvSE)\\Working Set\",\
         \"\\\\ZACH-PC\\Process(WmiPrvSE)\\Working Set\""
    );
    let cells = |i: usize| -> Vec<&str> { lines[i].split(',').skip(1).collect() };
    // Sample 5: WmiPrvSE still runs; sample 6: gone, blank in both of its columns, and the
    // placeholder of SearchP* stays blank while SearchProtocolHost runs.
    assert_eq!(
        cells(4),
        ["\" \"", "\"3522560.000000\"", "\"3522560.000000\""]
    );
    assert_eq!(cells(5), ["\" \"", "\" \"", "\" \""]);
    assert_eq!(lines.len(), 11);
}
