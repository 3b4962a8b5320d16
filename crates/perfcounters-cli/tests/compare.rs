//! `perfcounters analyze CANDIDATE --baseline BASELINE` end to end: the JSON comparison of a log
//! with itself and with a tripled counter, a German baseline through `--names`, the errors, and the
//! HTML report's "What changed" drawn by headless Chromium.

use crate::common;
use crate::common::shared_data;

use std::path::Path;

use common::{assert_success, run, stderr, tempdir};
use serde_json::Value;

fn tx() -> Option<String> {
    let p = shared_data::dir("the real Windows logs")?.join("blg/tx-win8-BasicPerfCounters.blg");
    Some(p.display().to_string())
}

fn json_of(args: &[&str]) -> Value {
    let o = run(args);
    assert_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The Tx log as PDH-CSV (the library's writer), `_Total`'s `% Processor Time` tripled from
/// record 301 on when `triple`.
fn write_csv(log: &str, out: &Path, triple: bool) {
    let total = triple.then_some((r"Processor(_Total)\% Processor Time", 301));
    common::rewrite::rewrite(Path::new(log), out, total, &|s: &str| s.to_owned());
}

/// The Tx log against itself: every counter unchanged, every analysis the same; the candidate's
/// report as without a baseline.
#[test]
fn a_log_against_itself() {
    let Some(log) = tx() else { return };
    let v = json_of(&["analyze", &log, "--baseline", &log, "--format", "json"]);
    let alone = json_of(&["analyze", &log, "--format", "json"]);
    let c = &v["comparison"];
    assert_eq!(c["baseline"]["records"], 601);
    assert_eq!(c["baseline"]["machines"], serde_json::json!(["GEORGIS3"]));
    assert_eq!(c["baseline"]["start"], "2013-02-19T18:50:17.844");
    assert_eq!(c["baseline"]["end"], "2013-02-19T19:00:17.840");
    let counters = c["counters"].as_array().unwrap();
    assert_eq!(counters.len(), 10);
    for x in counters {
        assert_eq!(x["class"], "unchanged", "{x}");
        assert_eq!(x["effect"], 0.0);
        assert_eq!(x["avg_ratio"], 1.0);
        assert_eq!(x["baseline"], x["candidate"]);
    }
    let analyses = c["analyses"].as_array().unwrap();
    assert_eq!(analyses.len(), 72);
    assert!(analyses.iter().all(|a| a["verdict"] == "same"));
    let mut without = v.clone();
    without.as_object_mut().unwrap().remove("comparison");
    assert_eq!(without, alone);
}

/// `_Total`'s `% Processor Time` tripled in the second half: first, worse, its analysis worse;
/// standard error names it.
#[test]
fn a_tripled_counter_comes_first() {
    let Some(log) = tx() else { return };
    let dir = tempdir("compare-tripled");
    let (base, cand) = (dir.join("base.csv"), dir.join("cand.csv"));
    write_csv(&log, &base, false);
    write_csv(&log, &cand, true);
    let (base, cand) = (base.to_str().unwrap(), cand.to_str().unwrap());
    let o = run(&["analyze", cand, "--baseline", base, "--format", "json"]);
    assert_success(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let counters = v["comparison"]["counters"].as_array().unwrap();
    assert_eq!(
        counters[0]["counter"],
        r"\Processor(_Total)\% Processor Time"
    );
    assert_eq!(counters[0]["class"], "worse");
    assert_eq!(counters[0]["bad"], "up");
    assert_eq!(
        counters[0]["analyses"],
        serde_json::json!(["Processor % Processor Time"])
    );
    assert!(counters[1..].iter().all(|x| x["class"] == "unchanged"));
    let cpu = v["comparison"]["analyses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Processor % Processor Time")
        .unwrap();
    assert!(
        cpu["verdict"] == "worse" || cpu["verdict"] == "new",
        "{cpu}"
    );
    let err = stderr(&o);
    // The notes on the candidate's report (analyses evaluated, answers assumed) come first.
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("perfcounters: note: "))
        .collect();
    assert!(
        lines[0].starts_with("compared with the baseline (")
            && lines[0].ends_with("1 worse, 9 unchanged"),
        "{err}"
    );
    assert!(
        lines[1].starts_with(r"  worse \Processor(_Total)\% Processor Time: avg "),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  analysis Processor % Processor Time: ")),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A German baseline (PDH-CSV with the names of `de-en-PerfStringBackup-cp1252.INI`) against the
/// English candidate: matched through `--names`; without it, an error that names counters of both
/// sides and suggests `--names`.
#[test]
fn a_german_baseline_through_names() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let log = data.join("blg/tx-win8-BasicPerfCounters.blg");
    let ini = data.join("names/de-en-PerfStringBackup-cp1252.INI");
    let dir = tempdir("compare-german");
    let en = dir.join("en.csv");
    write_csv(log.to_str().unwrap(), &en, false);
    // The same log in German: relog's CSV with the object and counter names replaced.
    let text = std::fs::read_to_string(&en).unwrap();
    let (head, rest) = text.split_once('\n').unwrap();
    let german = head
        .replace(r"\PhysicalDisk(", r"\Physikalischer Datenträger(")
        .replace(r"\Processor(", r"\Prozessor(")
        .replace(r"\% Processor Time", r"\Prozessorzeit (%)")
        .replace(
            r"\Avg. Disk Queue Length",
            r"\Durchschnittl. Warteschlangenlänge des Datenträgers",
        );
    assert_ne!(german, head);
    let de = dir.join("de.csv");
    std::fs::write(&de, format!("{german}\n{rest}")).unwrap();
    let (en, de, ini) = (
        en.to_str().unwrap(),
        de.to_str().unwrap(),
        ini.to_str().unwrap(),
    );
    let v = json_of(&[
        "analyze",
        en,
        "--baseline",
        de,
        "--names",
        ini,
        "--format",
        "json",
    ]);
    let counters = v["comparison"]["counters"].as_array().unwrap();
    let total = counters
        .iter()
        .find(|x| x["counter"] == r"\Processor(_Total)\% Processor Time")
        .unwrap_or_else(|| panic!("{counters:?}"));
    assert_eq!(total["class"], "unchanged");
    assert_eq!(total["effect"], 0.0);
    assert_eq!(total["baseline"]["count"], 600);
    assert!(
        counters.iter().all(|x| x["class"] == "unchanged"),
        "{counters:?}"
    );
    // Without --names: nothing shared.
    let o = run(&["analyze", en, "--baseline", de, "--format", "json"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("share no counter"), "{err}");
    // The first five counters of each side, in column order.
    assert!(
        err.contains(r"the baseline has \Physikalischer Datenträger(0 C:)\Avg. Disk Bytes/Read, "),
        "{err}"
    );
    assert!(
        err.contains(r"the candidate has \PhysicalDisk(0 C:)\Avg. Disk Bytes/Read, "),
        "{err}"
    );
    assert_eq!(
        err.matches(r"\Physikalischer Datenträger(").count(),
        5,
        "{err}"
    );
    assert!(
        err.contains("the baseline's names are not English"),
        "{err}"
    );
    assert!(err.contains("--names"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A side without records after `-e`, and a baseline that does not exist: errors naming the side.
#[test]
fn errors_name_the_side() {
    let Some(log) = tx() else { return };
    let dir = tempdir("compare-errors");
    let early = dir.join("early.csv");
    std::fs::write(
        &early,
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\M\\Processor(_Total)\\% Processor Time\"\r\n\
         \"02/19/2013 08:00:00.000\",\"10\"\r\n",
    )
    .unwrap();
    let o = run(&[
        "analyze",
        &log,
        "--baseline",
        early.to_str().unwrap(),
        "-b",
        "2/19/2013 18:00:00",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("the baseline ("), "{err}");
    assert!(err.contains("has no record"), "{err}");
    let missing = dir.join("missing.blg");
    let o = run(&["analyze", &log, "--baseline", missing.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("baseline: "), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The HTML report with a comparison: "What changed" first, one chart of both sides per top change,
/// every chart drawn by headless Chromium.
#[cfg(target_os = "linux")]
#[test]
fn chromium_draws_what_changed() {
    let Some(log) = tx() else { return };
    let dir = tempdir("compare-chromium");
    let (base, cand) = (dir.join("base.csv"), dir.join("cand.csv"));
    write_csv(&log, &base, false);
    write_csv(&log, &cand, true);
    let report = dir.join("report.html");
    assert_success(&run(&[
        "analyze",
        cand.to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
        "-o",
        report.to_str().unwrap(),
    ]));
    let html = std::fs::read_to_string(&report).unwrap();
    let changes = html.find("<section id=\"changes\">").unwrap();
    assert!(changes < html.find("<section id=\"summary\">").unwrap());
    assert!(html.contains(
        "<span class=\"class worse\">worse</span> \\Processor(_Total)\\% Processor Time"
    ));
    assert_eq!(html.matches("<article class=\"change\">").count(), 1);
    let divs = html.matches("<div class=\"chart\"").count() as u64;
    let url = format!("file://{}", report.display());
    let Some(dom) = common::chromium_dump(&url, "compare-chromium-profile") else {
        return;
    };
    assert_eq!(common::body_attr(&dom, "charts"), divs);
    assert!(dom.contains("time since each log's start"));
    let _ = std::fs::remove_dir_all(&dir);
}
