//! What the commands write, and refuse to write: the report's format from its name and the line
//! that says what was written, time ranges that hold no record, outputs that appear only when
//! complete, a directory as an output, filters that select nothing by mistake.

use crate::common;

use common::{assert_success, run, stderr, Dir};

/// A PDH-CSV log of three records, 15 s apart, on 1/15/2024 from 10:00:00 (UTC).
fn log(d: &Dir) -> String {
    d.file(
        "cpu.csv",
        b"\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\PC\\Processor(_Total)\\% Processor Time\"\r\n\
          \"01/15/2024 10:00:00.000\",\"20\"\r\n\
          \"01/15/2024 10:00:15.000\",\"95\"\r\n\
          \"01/15/2024 10:00:30.000\",\"97\"\r\n",
    )
}

/// The files of `d` (temporary files included), sorted.
fn files(d: &Dir) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(&d.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn analyze_takes_the_format_from_the_name_and_says_what_it_wrote() {
    let d = Dir::new("analyze-out");
    let input = log(&d);
    let out = d.path("report.json");
    let o = run(&["analyze", &input, "-o", &out, "--interval", "15"]);
    assert_success(&o);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // 95 and 97 % break the warning (50) and the critical (80) threshold in their slices.
    assert_eq!(v["alerts"].as_array().unwrap().len(), 4);
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: note: only 1 of 72 analyses were evaluated: the log does not hold the \
             counters the others read, so the report says nothing of what they check\n\
             perfcounters: note: assumed OS = Windows Server, PhysicalMemory = 16, UserVa = 2048: \
             set them with --set NAME=VALUE\n\
             4 alerts (2 Critical, 2 Warning) from 1 of 72 analyses; report written to {out}\n"
        )
    );
    // --format wins over the name.
    let html = d.path("report.txt");
    assert_success(&run(&["analyze", &input, "-o", &html, "--format", "html"]));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    // A directory is no report file.
    let o = run(&["analyze", &input, "-o", d.0.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).ends_with("is a directory: name the report's file with -o\n"));
}

#[test]
fn a_time_range_without_records_is_an_error_naming_the_logs_range() {
    let d = Dir::new("empty-range");
    let input = log(&d);
    let why = format!(
        "perfcounters: {input}: no record in the time range given: the log runs from 1/15/2024 \
         10:00:00.000 to 1/15/2024 10:00:30.000 (its local time)\n"
    );
    let out = d.path("out.csv");
    for args in [
        vec!["relog", &input, "-b", "1/15/2024 11:00:00", "-o", &out],
        vec!["relog", &input, "-e", "1/15/2024 09:00:00", "-o", &out],
        vec!["relog", &input, "-b", "1/15/2024 11:00:00", "-q"],
        vec![
            "analyze",
            &input,
            "-b",
            "1/15/2024 11:00:00",
            "--format",
            "json",
        ],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o), why, "{args:?}");
    }
    // Nothing was left behind, not even a temporary file: the retry needs no -y.
    assert_eq!(files(&d), ["cpu.csv"]);
    assert_success(&run(&[
        "relog",
        &input,
        "-b",
        "1/15/2024 10:00:10",
        "-o",
        &out,
    ]));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
    assert_eq!(files(&d), ["cpu.csv", "out.csv"]);
}

#[test]
fn outputs_that_cannot_be_written_are_clear_errors() {
    let d = Dir::new("bad-outputs");
    let input = log(&d);
    // A directory as a CSV output.
    let dir = d.path("sub");
    std::fs::create_dir(&dir).unwrap();
    let o = run(&["relog", &input, "-f", "CSV", "-o", &dir]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {dir}: is a directory: name a file\n")
    );
    // A Parquet file cannot be appended to: the message offers -y only.
    let parquet = d.path("out.parquet");
    assert_success(&run(&["relog", &input, "-o", &parquet]));
    let o = run(&["relog", &input, "-o", &parquet]);
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {parquet} already exists; add -y to overwrite it\n")
    );
}

/// `watch` does not write Parquet, so its help does not offer it, and asking for it names what
/// does: relog.
#[test]
fn watch_offers_only_what_it_writes() {
    let o = run(&["watch", "--help"]);
    assert_success(&o);
    let help = String::from_utf8_lossy(&o.stdout).to_lowercase();
    assert!(help.contains("- sql:"), "{help}");
    assert!(!help.contains("parquet"), "{help}");
    let o = run(&["watch", r"\Memory\Available Bytes", "--format", "parquet"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value 'parquet' for '--format <FORMAT>'"),
        "{}",
        stderr(&o)
    );
    let d = Dir::new("watch-parquet");
    let out = d.path("m.parquet");
    let o = run(&["watch", r"\Memory\Available Bytes", "-n", "1", "-o", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("Parquet is written by relog from a log"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn filters_that_select_nothing_by_mistake_are_errors() {
    let d = Dir::new("bad-filters");
    let input = log(&d);
    let missing = d.path("PerfStringBackup.INI");
    let o = run(&["relog", &input, "--names", &missing, "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with(&format!("perfcounters: cannot read name table {missing}: ")));
    let empty = d.file("counters.txt", b"# nothing yet\r\n\r\n");
    let why = format!(
        "perfcounters: counter file {empty} holds no counter path (only blank lines and # or ; \
         comments)\n"
    );
    let o = run(&["relog", &input, "-cf", &empty, "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), why);
    let o = run(&["watch", "--counter-file", &empty, "--samples", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), why);
    let o = run(&["watch", "--samples", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid sample count \"0\": expected a positive whole number"));
}

/// A SQL log written by `watch` names its zone as the reader knows it: read back, no warning, in
/// UTC and in zones of half hours on either side.
#[cfg(target_os = "linux")]
#[test]
fn sql_logs_of_watch_read_back_without_a_zone_warning() {
    let d = Dir::new("sql-zone");
    for (tz, name) in [
        ("UTC", "Coordinated Universal Time"),
        ("Asia/Kolkata", "UTC+05:30"),
        ("America/Caracas", "UTC-04:00"),
    ] {
        let db = d.path(&format!("{}.db", tz.replace('/', "-")));
        let target = format!("SQL:{db}!live");
        let o = common::bin()
            .env("TZ", tz)
            .args([
                "watch",
                r"\Processor(_Total)\% Processor Time",
                "-n",
                "2",
                "-i",
                "100ms",
                "-o",
                &target,
            ])
            .output()
            .unwrap();
        assert_success(&o);
        let o = common::bin()
            .env("TZ", tz)
            .args(["relog", &target, "--stats", "csv"])
            .output()
            .unwrap();
        assert_success(&o);
        assert_eq!(stderr(&o), "", "{tz}");
        let o = common::bin()
            .env("TZ", tz)
            .args(["relog", &target, "-f", "CSV"])
            .output()
            .unwrap();
        assert!(
            common::stdout(&o).starts_with(&format!("\"(PDH-CSV 4.0) ({name}")),
            "{tz}"
        );
    }
}

/// A CSV that lost its header line, given as a binary log (by its name) or as a CSV: the message
/// says what the file is, not a buffer size.
#[test]
fn text_given_as_a_binary_log_is_named_as_text() {
    let d = Dir::new("text-as-blg");
    let rows = b"\"01/15/2024 10:00:00.000\",\"20\"\r\n\"01/15/2024 10:00:15.000\",\"95\"\r\n";
    let blg = d.file("log.blg", rows);
    let csv = d.file("log.csv", rows);
    let why = format!(
        "perfcounters: {blg}: WMI_BUFFER_HEADER at offset 0: this is text, not a binary log; it \
         looks like PDH-CSV without its header line\n"
    );
    for args in [
        vec!["relog", &blg, "-q"],
        vec!["decode", &blg],
        vec!["watch", "--replay", &blg, "-n", "1"],
        vec!["analyze", &blg, "--format", "json"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o), why, "{args:?}");
    }
    let o = run(&["relog", &csv, "-q"]);
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {csv}: line 1, column 1: not a PDH log: the first cell is not \
             \"(PDH-CSV 4.0)\" or \"(PDH-TSV 4.0)\"; it looks like PDH-CSV without its header line\n"
        )
    );
}

/// `watch --replay LOG` with no counter path shows the log's counters, not the live default set.
#[test]
fn a_replay_without_paths_shows_what_it_recorded() {
    let Some(data) = common::shared_data::dir("the real Windows logs") else {
        return;
    };
    let log = data.join("blg").join("tx-win8-BasicPerfCounters.blg");
    let o = run(&[
        "watch",
        "--replay",
        log.to_str().unwrap(),
        "-n",
        "1",
        "-f",
        "csv",
    ]);
    assert_success(&o);
    assert_eq!(stderr(&o), "");
    let out = common::stdout(&o);
    // After the blank line typeperf starts with.
    let header = out.lines().find(|l| !l.is_empty()).unwrap();
    // The log's 5 PhysicalDisk counters and its 5 Processor instances.
    assert_eq!(header.matches("\",\"").count(), 10, "{header}");
    assert!(header.contains(r"\\GEORGIS3\Processor(_Total)\% Processor Time"));
}

/// On a terminal (made by `script`), analyze writes its HTML page to report.html rather than to the
/// screen, says so, and never overwrites one without -y.
#[cfg(target_os = "linux")]
#[test]
fn html_is_not_written_to_a_terminal() {
    let Ok(script) = which("script") else {
        eprintln!("skipping: no `script` command to make a terminal");
        return;
    };
    let d = Dir::new("analyze-tty");
    log(&d);
    let command = format!(
        "{} analyze cpu.csv --interval 15",
        env!("CARGO_BIN_EXE_perfcounters")
    );
    let on_tty = || {
        std::process::Command::new(&script)
            .args(["-qec", &command, "/dev/null"])
            .current_dir(&d.0)
            .env("TZ", "UTC")
            .output()
            .unwrap()
    };
    let o = on_tty();
    assert_success(&o);
    let screen = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    assert!(
        screen.ends_with("report written to report.html\n"),
        "{screen}"
    );
    assert!(!screen.contains("<html"));
    let page = std::fs::read_to_string(d.0.join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    let o = on_tty();
    assert!(!o.status.success());
    let screen = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    assert!(
        screen.contains(
            "report.html already exists; add -y to overwrite it, or name another file with -o (an \
             HTML report is not written to a terminal)"
        ),
        "{screen}"
    );
}

/// The path of `program` on `PATH`.
#[cfg(target_os = "linux")]
fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        })
        .ok_or(())
}
