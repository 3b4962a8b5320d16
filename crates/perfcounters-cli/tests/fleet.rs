//! `perfcounters analyze` of logs of several machines: the fleet report. Three shared logs of
//! three machines (ZACH-PC, GEORGIS3, ATTCOREU01) give one section per machine equal to `analyze`
//! of that log alone; `--set MACHINE:NAME=VALUE` changes that machine only; `--merge-machines`
//! gives the one-timeline report; a damaged log is reported and the others analysed.

use crate::common;
use crate::common::shared_data;

use common::{assert_success, run, stderr, tempdir};
use serde_json::Value;

/// The three logs, each of one machine, with their machine.
fn three() -> Option<Vec<(String, &'static str)>> {
    let data = shared_data::dir("the real Windows logs")?;
    Some(
        [
            ("blg/pal-vista-SamplePerfmonLog.blg", "ZACH-PC"),
            ("blg/tx-win8-BasicPerfCounters.blg", "GEORGIS3"),
            ("logs/en-pst-BM_Active_Load_Test.csv", "ATTCOREU01"),
        ]
        .into_iter()
        .map(|(f, m)| (data.join(f).display().to_string(), m))
        .collect(),
    )
}

fn json_of(args: &[&str]) -> Value {
    let o = run(args);
    assert_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The fleet report's entry of `machine`.
fn machine<'a>(fleet: &'a Value, machine: &str) -> &'a Value {
    fleet["machines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["machine"] == machine)
        .unwrap_or_else(|| panic!("no machine {machine} in {fleet}"))
}

/// What a machine's entry shares with the report of its log alone, field by field.
fn assert_same_as_alone(entry: &Value, alone: &Value) {
    for key in [
        "alerts",
        "analyses",
        "statistics",
        "interval_seconds",
        "start",
        "end",
        "records",
        "questions",
        "logs",
        "encodings",
    ] {
        assert_eq!(entry[key], alone[key], "{key} of {}", entry["machine"]);
    }
}

#[test]
fn each_machine_is_its_log_alone() {
    let Some(logs) = three() else { return };
    let paths: Vec<&str> = logs.iter().map(|(p, _)| p.as_str()).collect();
    let mut args = vec!["analyze", "--format", "json"];
    args.extend(&paths);
    let o = run(&args);
    assert_success(&o);
    let fleet: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(fleet["machines"].as_array().unwrap().len(), 3);
    assert_eq!(fleet["logs"].as_array().unwrap().len(), 3);
    let mut alerts = 0;
    for (path, name) in &logs {
        let alone = json_of(&["analyze", path, "--format", "json"]);
        let entry = machine(&fleet, name);
        assert_same_as_alone(entry, &alone);
        assert_eq!(entry["named_after_log"], false);
        alerts += entry["alerts"].as_array().unwrap().len();
        // One line per machine on standard error, with its alert count.
        let line = match alone["alerts"].as_array().unwrap().len() {
            0 => format!("machine {name}: no alerts\n"),
            n => format!("machine {name}: {n} alert"),
        };
        assert!(stderr(&o).contains(&line), "{line} in {}", stderr(&o));
    }
    assert!(alerts > 0);
    // Worst first: ZACH-PC has 29 alerts of priority 100, GEORGIS3 1, ATTCOREU01 none.
    let order: Vec<&str> = fleet["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["machine"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["ZACH-PC", "GEORGIS3", "ATTCOREU01"]);
}

#[test]
fn an_answer_for_one_machine_changes_only_it() {
    let Some(logs) = three() else { return };
    let paths: Vec<&str> = logs.iter().map(|(p, _)| p.as_str()).collect();
    let mut args = vec![
        "analyze",
        "--format",
        "json",
        "--set",
        "zach-pc:PhysicalMemory=1",
        "--set",
        "UserVa=3072",
    ];
    args.extend(&paths);
    let fleet = json_of(&args);
    for (path, name) in &logs {
        let mut alone = vec!["analyze", path.as_str(), "--format", "json"];
        alone.extend(["--set", "UserVa=3072"]);
        if *name == "ZACH-PC" {
            alone.extend(["--set", "PhysicalMemory=1"]);
        }
        let entry = machine(&fleet, name);
        assert_same_as_alone(entry, &json_of(&alone));
        let memory = if *name == "ZACH-PC" { "1" } else { "16" };
        assert_eq!(entry["questions"]["PhysicalMemory"], memory, "{name}");
    }
    // The answer changed ZACH-PC's alerts: not those of its default answer.
    let default = json_of(&[
        "analyze",
        &logs[0].0,
        "--format",
        "json",
        "--set",
        "UserVa=3072",
    ]);
    assert_ne!(machine(&fleet, "ZACH-PC")["alerts"], default["alerts"]);

    // A machine that is not among the inputs is named, before anything is read.
    let mut args = vec!["analyze", "--set", "WEB9:PhysicalMemory=1"];
    args.extend(&paths);
    let o = run(&args);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(
            "--set WEB9:PhysicalMemory: no machine WEB9 among the inputs (they are: ZACH-PC, GEORGIS3, ATTCOREU01)"
        ),
        "{}",
        stderr(&o)
    );
    // One machine's answer does not go with one timeline.
    let mut args = vec!["analyze", "--merge-machines", "--set", "ZACH-PC:OS=x"];
    args.extend(&paths);
    let o = run(&args);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--set ZACH-PC:OS: an answer for one machine needs a fleet report"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_machine_answers_apply_to_a_one_machine_input() {
    let Some(logs) = three() else { return };
    let with_machine = json_of(&[
        "analyze",
        &logs[0].0,
        "--format",
        "json",
        "--set",
        "ZACH-PC:PhysicalMemory=1",
    ]);
    let plain = json_of(&[
        "analyze",
        &logs[0].0,
        "--format",
        "json",
        "--set",
        "PhysicalMemory=1",
    ]);
    assert_eq!(with_machine, plain);
    let o = run(&["analyze", &logs[0].0, "--set", "GEORGIS3:PhysicalMemory=1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no machine GEORGIS3"), "{}", stderr(&o));
}

#[test]
fn merge_machines_gives_one_timeline() {
    let Some(logs) = three() else { return };
    let paths: Vec<&str> = logs.iter().map(|(p, _)| p.as_str()).collect();
    let mut args = vec!["analyze", "--format", "json", "--merge-machines"];
    args.extend(&paths);
    let merged = json_of(&args);
    let machines: Vec<&str> = merged["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(machines.len(), 3, "{machines:?}");
    for (_, name) in &logs {
        assert!(machines.contains(name), "{name} in {machines:?}");
    }
    // One slice width over the whole merged range (2007 to 2016): not any machine's own.
    assert!(merged["interval_seconds"].as_u64().unwrap() > 86_400);
    let mut args = vec!["analyze", "--merge-machines"];
    args.extend(&paths);
    let o = run(&args);
    assert_success(&o);
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(!html.contains("Fleet summary"));
    assert!(html.contains("<h1>Performance analysis</h1>"));
}

#[test]
fn a_one_machine_report_is_unchanged() {
    let Some(logs) = three() else { return };
    for format in ["json", "html"] {
        let plain = run(&["analyze", &logs[0].0, "--format", format]);
        let merged = run(&[
            "analyze",
            &logs[0].0,
            "--format",
            format,
            "--merge-machines",
        ]);
        assert_success(&plain);
        assert_eq!(plain.stdout, merged.stdout, "{format}");
        assert!(!String::from_utf8_lossy(&plain.stdout).contains("Fleet summary"));
    }
    // Two logs of one machine merge as before: one report.
    let dir = tempdir("fleet-one-machine");
    let copy = dir.join("copy.blg");
    std::fs::copy(&logs[1].0, &copy).unwrap();
    let two = json_of(&[
        "analyze",
        &logs[1].0,
        copy.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(two["machines"], serde_json::json!(["GEORGIS3"]));
    assert_eq!(two["logs"].as_array().unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_log_among_good_ones() {
    let Some(logs) = three() else { return };
    let dir = tempdir("fleet-damaged");
    let bad = dir.join("damaged.blg");
    // A .blg cut in its first buffer header: its first 300 bytes.
    let blg = std::fs::read(&logs[1].0).unwrap();
    std::fs::write(&bad, &blg[..300]).unwrap();
    let bad = bad.display().to_string();
    let o = run(&["analyze", &logs[0].0, &bad, &logs[1].0, "--format", "json"]);
    assert_success(&o);
    let fleet: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(fleet["machines"].as_array().unwrap().len(), 3);
    // The damaged log fails first in the summary, named after its file, with why.
    let first = &fleet["machines"][0];
    assert_eq!(first["machine"], bad.as_str());
    assert_eq!(first["named_after_log"], true);
    let error = first["error"].as_str().unwrap();
    assert_eq!(
        error,
        format!("{bad}: WMI_BUFFER_HEADER at offset 0: truncated: needs 560 bytes, 300 available")
    );
    assert!(first["alerts"].as_array().unwrap().is_empty());
    assert!(
        stderr(&o).contains(&format!("perfcounters: warning: {bad}: not analysed: ")),
        "{}",
        stderr(&o)
    );
    for (path, name) in &logs[..2] {
        assert!(stderr(&o).contains(&format!("machine {name}: ")));
        let alone = json_of(&["analyze", path, "--format", "json"]);
        assert_same_as_alone(machine(&fleet, name), &alone);
    }
    // The HTML tells it in the summary and in the machine's section.
    let o = run(&["analyze", &logs[0].0, &bad, &logs[1].0]);
    assert_success(&o);
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.contains("<h2>Fleet summary</h2>"));
    assert!(html.contains("not analysed: "));
    assert!(html.contains("Not analysed: "));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_fleet_summary_links_to_each_machine() {
    let Some(logs) = three() else { return };
    let paths: Vec<&str> = logs.iter().map(|(p, _)| p.as_str()).collect();
    let mut args = vec!["analyze"];
    args.extend(&paths);
    let o = run(&args);
    assert_success(&o);
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.contains("<h2>Fleet summary</h2>"));
    for i in 0..3 {
        assert!(html.contains(&format!("<section class=\"machine\" id=\"m{i}\">")));
        assert!(html.contains(&format!("id=\"m{i}-summary\"")));
    }
    // Every link of the summary lands on an anchor of the page.
    let summary = &html[html.find("id=\"fleet\"").unwrap()..html.find("id=\"m0\"").unwrap()];
    let mut links = 0;
    for part in summary.split("href=\"#").skip(1) {
        let target = part.split('"').next().unwrap();
        assert!(html.contains(&format!("id=\"{target}\"")), "#{target}");
        links += 1;
    }
    assert!(links > 3, "{links}");
}

/// A dataset directory written by `relog -o DIR/` is a log like the others: its machine is one
/// of the fleet.
#[test]
fn a_dataset_directory_is_one_machine() {
    let Some(logs) = three() else { return };
    let dir = tempdir("fleet-dataset");
    let dataset = format!("{}/", dir.join("vista").display());
    assert_success(&run(&["relog", &logs[0].0, "-o", &dataset]));
    let fleet = json_of(&["analyze", &dataset, &logs[1].0, "--format", "json"]);
    assert_eq!(fleet["machines"].as_array().unwrap().len(), 2);
    let alone = json_of(&["analyze", &dataset, "--format", "json"]);
    assert_same_as_alone(machine(&fleet, "ZACH-PC"), &alone);
    let blg = json_of(&["analyze", &logs[0].0, "--format", "json"]);
    assert_eq!(alone["alerts"], blg["alerts"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dataset directory of several machines (`relog -o DIR/` of the three logs) is split by its
/// `machine=` partitions: one machine each, equal to `analyze` of that partition alone and
/// raising the alerts of its original log (the same values and counters).
#[test]
fn a_dataset_of_several_machines_is_split_by_machine() {
    let Some(logs) = three() else { return };
    let dir = tempdir("fleet-dataset-machines");
    let dataset = format!("{}/", dir.join("all").display());
    let mut relog = vec!["relog"];
    relog.extend(logs.iter().map(|(p, _)| p.as_str()));
    relog.extend(["-o", &dataset]);
    assert_success(&run(&relog));
    let fleet = json_of(&["analyze", &dataset, "--format", "json"]);
    assert_eq!(fleet["machines"].as_array().unwrap().len(), 3, "{fleet}");
    for (path, name) in &logs {
        let entry = machine(&fleet, name);
        assert_eq!(entry["named_after_log"], false);
        let partition = format!("{dataset}machine={name}");
        assert_eq!(entry["logs"], serde_json::json!([partition]));
        let alone = json_of(&["analyze", &partition, "--format", "json"]);
        assert_same_as_alone(entry, &alone);
        // Its alerts are those of its original log; their times are shown in the zone of the
        // merged log the dataset was written from (the first log's), so they are left aside.
        let original = json_of(&["analyze", path, "--format", "json"]);
        let untimed = |alerts: &Value| -> Vec<Value> {
            let mut alerts = alerts.as_array().unwrap().clone();
            for a in &mut alerts {
                let a = a.as_object_mut().unwrap();
                a.remove("start");
                a.remove("end");
            }
            alerts
        };
        assert_eq!(
            untimed(&entry["alerts"]),
            untimed(&original["alerts"]),
            "{name}"
        );
        assert!(!untimed(&entry["alerts"]).is_empty() || *name == "ATTCOREU01");
    }
    // With --merge-machines the dataset is one log, one timeline, as before.
    let merged = json_of(&["analyze", &dataset, "--format", "json", "--merge-machines"]);
    assert_eq!(merged["machines"].as_array().unwrap().len(), 3);
    assert_eq!(merged["logs"], serde_json::json!([dataset]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fleet report in headless Chromium: every chart of every machine's section is drawn (their
/// numbers run on across the sections, each section carrying its charts' data).
#[cfg(target_os = "linux")]
#[test]
fn chromium_draws_every_machine() {
    let Some(logs) = three() else { return };
    let dir = tempdir("fleet-chromium");
    let report = dir.join("fleet.html");
    let paths: Vec<&str> = logs.iter().map(|(p, _)| p.as_str()).collect();
    let mut args = vec!["analyze", "-o", report.to_str().unwrap()];
    args.extend(&paths);
    assert_success(&run(&args));
    // The sections were spooled beside the report, and the spool is gone.
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["fleet.html"]);
    let html = std::fs::read_to_string(&report).unwrap();
    let divs = html.matches("<div class=\"chart\"").count() as u64;
    // Each machine's charts: those of its report alone.
    let alone: u64 = paths
        .iter()
        .map(|p| {
            let o = run(&["analyze", p]);
            assert_success(&o);
            String::from_utf8(o.stdout)
                .unwrap()
                .matches("<div class=\"chart\"")
                .count() as u64
        })
        .sum();
    assert_eq!(divs, alone);
    let url = format!("file://{}", report.display());
    let Some(dom) = common::chromium_dump(&url, "fleet-chromium-profile") else {
        return;
    };
    assert_eq!(common::body_attr(&dom, "charts"), divs);
    assert_eq!(dom.matches("class=\"uplot").count() as u64, divs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file that does not exist is no damaged log: the command stops, as with one log; so does a
/// fleet of which no machine could be read.
#[test]
fn a_missing_log_stops_the_command() {
    let Some(logs) = three() else { return };
    let o = run(&["analyze", &logs[0].0, "/nonexistent/web2.blg"]);
    assert!(!o.status.success());
    // The system's own words for a missing file (Windows: "Path not found.").
    let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
    let words = std::fs::File::open("/nonexistent/web2.blg").map_or_else(|e| e, |_| missing);
    assert!(
        stderr(&o).contains(&format!("/nonexistent/web2.blg: {words}")),
        "{}",
        stderr(&o)
    );
    let dir = tempdir("fleet-all-damaged");
    let blg = std::fs::read(&logs[1].0).unwrap();
    let (a, b) = (dir.join("a.blg"), dir.join("b.blg"));
    std::fs::write(&a, &blg[..300]).unwrap();
    std::fs::write(&b, &blg[..300]).unwrap();
    let o = run(&["analyze", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no machine could be analysed: "),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
