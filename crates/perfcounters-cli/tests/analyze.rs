//! `perfcounters analyze` end to end: JSON on the PAL Vista log, `--set`, `--rules` with a hostile
//! description, a localized log through PAL's CounterLang.xml, and the HTML report drawn by
//! headless Chromium.

use crate::common;
use crate::common::shared_data;

use std::path::PathBuf;

use common::{assert_success, run, stderr, tempdir};
use serde_json::Value;

fn vista() -> Option<String> {
    let p = shared_data::dir("the real Windows logs")?
        .join("blg")
        .join("pal-vista-SamplePerfmonLog.blg");
    Some(p.display().to_string())
}

fn json_of(args: &[&str]) -> Value {
    let o = run(args);
    assert_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn json_report_of_the_vista_log() {
    let Some(log) = vista() else { return };
    let v = json_of(&["analyze", &log, "--format", "json"]);
    assert_eq!(v["interval_seconds"], 60);
    assert_eq!(v["records"], 11);
    assert_eq!(v["logs"], serde_json::json!([log]));
    // A binary log has no text encoding.
    assert_eq!(v["encodings"], serde_json::json!({}));
    assert_eq!(v["start"], "2007-08-14T15:40:38.659");
    assert_eq!(v["end"], "2007-08-14T15:50:38.599");
    assert_eq!(v["analyses"].as_array().unwrap().len(), 72);
    // The first alert, worked out in the library's tests: slice 0 of Available MBytes (79, 107).
    let a = &v["alerts"][0];
    assert_eq!(a["analysis"], "Memory Available MBytes");
    assert_eq!(a["condition"], "Critical");
    assert_eq!(a["priority"], 100);
    assert_eq!(a["counter"], r"\\ZACH-PC\Memory\Available MBytes");
    assert_eq!(a["start"], "2007-08-14T15:40:38.659");
    assert_eq!(a["end"], "2007-08-14T15:41:38.659");
    assert_eq!(
        (a["min"].as_f64(), a["avg"].as_f64(), a["max"].as_f64()),
        (Some(79.0), Some(93.0), Some(107.0))
    );
    // Alerts are in time order.
    let starts: Vec<&str> = v["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["start"].as_str().unwrap())
        .collect();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(starts, sorted);
    // Not evaluated analyses carry their reason.
    let pf = v["analyses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Paging File % Usage")
        .unwrap();
    assert_eq!(pf["evaluated"], false);
    assert!(pf["reason"]
        .as_str()
        .unwrap()
        .contains("the log has none of its counters"));
    // A generated series is in the statistics with its formula (the data source's code); a
    // log's counter has none.
    let dov = v["statistics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["counter"] == r"\\ZACH-PC\LogicalDisk(C:)\Disk Overwhelmed")
        .unwrap();
    assert_eq!(
        (dov["count"].as_u64(), dov["max"].as_f64()),
        (Some(10), Some(2.0))
    );
    assert!(dov["formula"]
        .as_str()
        .unwrap()
        .contains("$CollectionOfLogicalDiskDiskOverwhelmedAll = @{}"));
    // Statistics name the counters.
    let s = v["statistics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["counter"] == r"\\ZACH-PC\System\Processor Queue Length")
        .unwrap();
    assert_eq!(
        (s["min"].as_f64(), s["max"].as_f64(), s["p90"].as_f64()),
        (Some(0.0), Some(10.0), Some(4.0))
    );

    // --set: 1 GB of RAM leaves one Available MBytes alert (79 < 102.4 MB).
    let v = json_of(&[
        "analyze",
        &log,
        "--format",
        "json",
        "--set",
        "PhysicalMemory=1",
    ]);
    let mb: Vec<&Value> = v["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["analysis"] == "Memory Available MBytes")
        .collect();
    assert_eq!(mb.len(), 1);
    assert_eq!(mb[0]["threshold"].as_f64(), Some(102.4));
    // -b/-e narrow the range; --interval fixes the slice.
    let v = json_of(&[
        "analyze",
        &log,
        "--format",
        "json",
        "-b",
        "8/14/2007 15:45:00",
        "--interval",
        "120",
    ]);
    assert_eq!(v["start"], "2007-08-14T15:45:38.599");
    assert_eq!(v["records"], 6);
    assert_eq!(v["interval_seconds"], 120);
}

#[test]
fn bad_arguments_are_clear_errors() {
    let Some(log) = vista() else { return };
    let o = run(&["analyze", &log, "--set", "Ram=4"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(
            "--set Ram: the rules ask no such question (they ask: OS, PhysicalMemory, UserVa)"
        ),
        "{}",
        stderr(&o)
    );
    let o = run(&["analyze", &log, "--set", "PhysicalMemory=much"]);
    assert!(
        stderr(&o).contains("--set PhysicalMemory=much: a number is expected"),
        "{}",
        stderr(&o)
    );
    let o = run(&["analyze", &log, "--interval", "0"]);
    assert!(
        stderr(&o).contains("is not a whole number of seconds"),
        "{}",
        stderr(&o)
    );
    let dir = tempdir("analyze-args");
    let out = dir.join("r.html");
    std::fs::write(&out, "keep").unwrap();
    let o = run(&["analyze", &log, "-o", out.to_str().unwrap()]);
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
    // The rules file's error, then its I/O error, each said once.
    let missing = dir.join("missing.xml");
    let o = run(&["analyze", &log, "--rules", missing.to_str().unwrap()]);
    let io = std::fs::read(&missing).unwrap_err();
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {}: cannot open: {io}\n", missing.display())
    );
    // The library's "interval" is the command line's --interval.
    let o = run(&["analyze", &log, "--interval", "99999999999999"]);
    assert_eq!(
        stderr(&o),
        "perfcounters: --interval 99999999999999: too long\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const HOSTILE: &str = r#"<PAL NAME="Hostile">
  <ANALYSIS NAME="CPU &lt;script&gt;alert('name')&lt;/script&gt;" ENABLED="True" CATEGORY="Processor" ID="1">
    <DATASOURCE TYPE="CounterLog" NAME="\Processor(*)\% Processor Time" EXPRESSIONPATH="\Processor(*)\% Processor Time" COLLECTIONVARNAME="C" />
    <DATASOURCE TYPE="Generated" NAME="\Processor(*)\Twice" EXPRESSIONPATH="\Processor(*)\Twice" COLLECTIONVARNAME="G"><CODE><![CDATA[# </code></pre><script>alert('formula')</script>
$G = @{}
For ($i=0;$i -lt $C.Count;$i++) { $G.Add("\\$($C[$i].CounterComputer)\Processor($($C[$i].CounterInstance))\Twice", @($C[$i].QuantizedAvg[0] * 2)) }]]></CODE></DATASOURCE>
    <THRESHOLD NAME="busy" CONDITION="Warning" PRIORITY="50"><CODE>StaticThreshold -CollectionOfCounterInstances $C -Operator 'gt' -Threshold 50</CODE></THRESHOLD>
    <DESCRIPTION><![CDATA[<b>Busy</b> processors.<script>document.title='owned'</script><img src=x onerror="document.title='owned'"><a href="javascript:alert(1)">x</a>]]></DESCRIPTION>
  </ANALYSIS>
</PAL>"#;

fn hostile_rules(dir: &std::path::Path) -> PathBuf {
    let p = dir.join("hostile.xml");
    std::fs::write(&p, HOSTILE).unwrap();
    p
}

#[test]
fn hostile_description_is_escaped() {
    let Some(log) = vista() else { return };
    let dir = tempdir("analyze-hostile");
    let rules = hostile_rules(&dir);
    let o = run(&["analyze", &log, "--rules", rules.to_str().unwrap()]);
    assert_success(&o);
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.contains("<b>Busy</b> processors."));
    assert!(
        !html.contains("document.title='owned'"),
        "script from the rules file in the report"
    );
    assert!(!html.contains("onerror"));
    assert!(!html.contains("javascript:alert"));
    // Every attribute is written in double quotes, so an apostrophe needs no escaping.
    assert!(html.contains("CPU &lt;script&gt;alert('name')&lt;/script&gt;"));
    assert!(!html.contains("<script>alert('name')"));
    // A generated data source's code (the formula of its series) is shown as text.
    assert!(html
        .contains(r"Formula of \\ZACH-PC\Processor(0)\Twice, \\ZACH-PC\Processor(_Total)\Twice"));
    assert!(html.contains("&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert('formula')"));
    assert!(!html.contains("<script>alert('formula')"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A French log (PDH-CSV) matched through PAL's CounterLang.xml, reported with English paths.
#[test]
fn localized_log_through_counter_lang() {
    let Some(data) = shared_data::dir("PAL's CounterLang.xml") else {
        return;
    };
    let dir = tempdir("analyze-fr");
    let csv = dir.join("fr.csv");
    std::fs::write(
        &csv,
        "\"(PDH-CSV 4.0) (Paris, Madrid)(-60)\",\"\\\\PC\\Processeur(_Total)\\% temps processeur\"\r\n\
         \"01/15/2024 10:00:00.000\",\"20\"\r\n\
         \"01/15/2024 10:00:15.000\",\"90\"\r\n",
    )
    .unwrap();
    let names = data.join("pal").join("CounterLang.xml");
    let v = json_of(&[
        "analyze",
        csv.to_str().unwrap(),
        "--names",
        names.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let alerts = v["alerts"].as_array().unwrap();
    assert_eq!(alerts.len(), 2, "{alerts:?}");
    assert_eq!(
        alerts[0]["counter"],
        r"\\PC\Processor(_Total)\% Processor Time"
    );
    assert_eq!(alerts[0]["condition"], "Critical");
    assert_eq!(alerts[1]["condition"], "Warning");
    let s = &v["statistics"][0];
    assert_eq!(
        s["log_counter"],
        r"\\PC\Processeur(_Total)\% temps processeur"
    );
    // Without --names, the built-in table gives the same alerts.
    let v2 = json_of(&["analyze", csv.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v2["alerts"], v["alerts"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The PAL Vista log as a Spanish Windows writes it: relog's TSV of the `.blg`, its object and
/// counter names put in Spanish through the `esES` names of PAL's own `CounterLang.xml`, in code
/// page 1252. Returns the English TSV and the Spanish one.
fn spanish_vista(dir: &std::path::Path) -> Option<(PathBuf, PathBuf)> {
    use perfcounters::names::counter_lang::parse_counter_lang;
    use perfcounters::path::CounterPath;
    let log = vista()?;
    let data = shared_data::dir("PAL's CounterLang.xml")?;
    let xml = std::fs::read_to_string(data.join("pal").join("CounterLang.xml")).unwrap();
    let tables = parse_counter_lang(&xml).unwrap();
    let en = &tables[0].names;
    let es = &tables.iter().find(|t| t.locale == "esES").unwrap().names;
    let spanish = |name: &str| -> String {
        en.index_of(name)
            .and_then(|i| es.name(i))
            .unwrap_or(name)
            .to_owned()
    };
    let en_tsv = dir.join("en.tsv");
    assert_success(&run(&[
        "relog",
        &log,
        "-f",
        "TSV",
        "-o",
        en_tsv.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(&en_tsv).unwrap();
    let (head, rest) = text.split_once("\r\n").unwrap();
    let mut translated = 0;
    let cells: Vec<String> = head
        .split('\t')
        .enumerate()
        .map(|(i, cell)| {
            let name = cell.trim_matches('"');
            match CounterPath::parse(name) {
                Ok(mut p) if i > 0 => {
                    let (o, c) = (spanish(&p.object), spanish(&p.counter));
                    translated += usize::from(o != p.object && c != p.counter);
                    (p.object, p.counter) = (o, c);
                    format!("\"{p}\"")
                }
                _ => cell.to_owned(),
            }
        })
        .collect();
    // Nearly every column has a Spanish object and counter name.
    assert!(
        translated * 10 > cells.len() * 9,
        "{translated} of {}",
        cells.len()
    );
    let es_text = format!("{}\r\n{rest}", cells.join("\t"));
    assert!(es_text.contains(r"\\ZACH-PC\Memoria\Bytes disponibles"));
    let (bytes, _, bad) = encoding_rs::WINDOWS_1252.encode(&es_text);
    assert!(!bad);
    let es_tsv = dir.join("es.tsv");
    std::fs::write(&es_tsv, bytes).unwrap();
    Some((en_tsv, es_tsv))
}

/// A Spanish log gets, with no flag, the alerts of `--names CounterLang.xml` and of the English
/// log, and says how its names were matched.
#[test]
fn spanish_log_is_translated_without_names() {
    let dir = tempdir("analyze-es");
    let Some((en, es)) = spanish_vista(&dir) else {
        return;
    };
    let (en, es) = (en.to_str().unwrap(), es.to_str().unwrap());
    let english = json_of(&["analyze", en, "--format", "json"]);
    let o = run(&["analyze", es, "--format", "json"]);
    assert_success(&o);
    let default: Value = serde_json::from_slice(&o.stdout).unwrap();
    let data = shared_data::dir("PAL's CounterLang.xml").unwrap();
    let names = data.join("pal").join("CounterLang.xml");
    let with_names = json_of(&[
        "analyze",
        es,
        "--names",
        names.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(default["alerts"].as_array().unwrap().len(), 136);
    assert_eq!(default["alerts"], with_names["alerts"]);
    assert_eq!(default["alerts"], english["alerts"]);
    let note = "the log names its counters in another language (esES";
    assert!(stderr(&o).contains(note), "{}", stderr(&o));
    assert!(default["notes"][0].as_str().unwrap().starts_with(note));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log in a language no table knows: few analyses run, and the report says why before anything
/// else instead of "No threshold was broken".
#[test]
fn few_analyses_put_the_reason_first() {
    let dir = tempdir("analyze-few");
    let csv = dir.join("xx.csv");
    std::fs::write(
        &csv,
        "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\PC\\Suoritin(_Total)\\Suoritinaika (%)\"\r\n\
         \"01/15/2024 10:00:00.000\",\"20\"\r\n\
         \"01/15/2024 10:00:15.000\",\"90\"\r\n",
    )
    .unwrap();
    let csv = csv.to_str().unwrap();
    let o = run(&["analyze", csv, "--format", "json"]);
    assert_success(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let why = "only 0 of 72 analyses were evaluated: the log names its counters in a language \
               other than English that the built-in table (PAL's CounterLang.xml) does not know; \
               pass --names";
    assert!(
        v["notes"][0].as_str().unwrap().starts_with(why),
        "{}",
        v["notes"]
    );
    assert!(stderr(&o).contains(why));
    let html = dir.join("r.html");
    assert_success(&run(&["analyze", csv, "-o", html.to_str().unwrap()]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("No threshold was broken"));
    let (reason, alerts) = (
        page.find(why).unwrap(),
        page.find("Alerts in time order").unwrap(),
    );
    assert!(reason < alerts);
    // English counters that the rules do not read: the other reason.
    std::fs::write(
        dir.join("en.csv"),
        "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\PC\\Telephony\\Lines\"\r\n\
         \"01/15/2024 10:00:00.000\",\"1\"\r\n",
    )
    .unwrap();
    let v = json_of(&[
        "analyze",
        dir.join("en.csv").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(v["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("only 0 of 72 analyses were evaluated: the log does not hold the counters"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The HTML report in headless Chromium: every chart is drawn from the inline uPlot and data, and
/// the hostile rules file's script never runs (the title stays).
#[cfg(target_os = "linux")]
#[test]
fn chromium_draws_the_report() {
    let Some(log) = vista() else { return };
    let dir = tempdir("analyze-chromium");
    let rules = hostile_rules(&dir);
    let report = dir.join("report.html");
    let o = run(&["analyze", &log, "-o", report.to_str().unwrap()]);
    assert_success(&o);
    let hostile_report = dir.join("hostile.html");
    assert_success(&run(&[
        "analyze",
        &log,
        "--rules",
        rules.to_str().unwrap(),
        "-o",
        hostile_report.to_str().unwrap(),
    ]));
    for (file, charts) in [(&report, None), (&hostile_report, Some(1))] {
        let html = std::fs::read_to_string(file).unwrap();
        let divs = html.matches("<div class=\"chart\"").count() as u64;
        assert!(divs > 0);
        // The log's own local time (Eastern Daylight Time), named, whatever the browser's zone.
        assert!(html.contains(
            "<tr><th>Time range</th><td>2007-08-14T15:40:38.659 – 2007-08-14T15:50:38.599 \
             (local time, Eastern Daylight Time (UTC-04:00))</td>"
        ));
        assert!(html.contains(r#""zone":"Eastern Daylight Time (UTC-04:00)""#));
        let url = format!("file://{}", file.display());
        let Some(dom) =
            common::chromium_dump_in_zone(&url, "analyze-chromium-profile", Some("Asia/Tokyo"))
        else {
            return;
        };
        // Each chart starts at the first record, or a minute later for a rate's first value.
        let first = r#"data-first="2007-08-14 15:4"#;
        assert_eq!(dom.matches(first).count() as u64, divs, "{dom}");
        let drawn = common::body_attr(&dom, "charts");
        assert_eq!(drawn, divs);
        if let Some(n) = charts {
            assert_eq!(drawn, n);
        }
        assert_eq!(dom.matches("class=\"uplot").count() as u64, divs);
        assert!(!dom.contains("<title>owned</title>"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--interval auto` is PAL's interval (the duration in whole seconds / 30, PowerShell's half to
/// even rounding at each step), never below the sample interval: worked out by hand from each
/// log's first and last time and its shortest gap between samples.
#[test]
fn auto_interval_is_pals_on_the_shared_logs() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    for (file, interval) in [
        // 599.94 s → 600 s / 30 = 20 s, below the 59.955 s between samples: 60 s.
        ("blg/pal-vista-SamplePerfmonLog.blg", 60),
        // 599.996 s → 600 / 30 = 20 s (samples 0.984 s apart).
        ("blg/tx-win8-BasicPerfCounters.blg", 20),
        // 164,401.978 s → 164,402 / 30 = 5,480.07 → 5,480 s (a log far longer than 1,024 s).
        ("blg/powershell-2003-BadCounterSamples.blg", 5_480),
        // 413.994 s → 414 / 30 = 13.8 → 14 s.
        ("logs/en-edt-process-DataCollector01.csv", 14),
        // 5,250 s / 30 = 175 s.
        ("logs/en-pst-BM_Active_Load_Test.csv", 175),
        // 164.998 s → 165 / 30 = 5.5 → 6 (half to even), below the 10.987 s between samples: 11.
        ("logs/en-tokyo-5964cols-Sample01.csv", 11),
    ] {
        let log = data.join(file).display().to_string();
        let v = json_of(&["analyze", &log, "--format", "json"]);
        assert_eq!(v["interval_seconds"], interval, "{file}");
    }
    // The slices of the two-day log are exact: its first alert covers
    // [14:21:39.298, 14:21:39.298 + 5,480 s), whose 9 values of this counter (relog's CSV) have
    // these min, average and max.
    let log = data
        .join("blg/powershell-2003-BadCounterSamples.blg")
        .display()
        .to_string();
    let v = json_of(&["analyze", &log, "--format", "json"]);
    let a = &v["alerts"][0];
    assert_eq!(
        a["counter"],
        r"\\s14185408\Processor(_Total)\% Processor Time"
    );
    assert_eq!(
        (a["start"].as_str(), a["end"].as_str()),
        (
            Some("2007-07-02T14:21:39.298"),
            Some("2007-07-02T15:52:59.298")
        )
    );
    assert_eq!(
        (a["min"].as_f64(), a["avg"].as_f64(), a["max"].as_f64()),
        (
            Some(6.259186524636595),
            Some(28.468147979872032),
            Some(53.1527069317776)
        )
    );
}

/// A generated PDH-CSV log of 2,000 records one second apart (`\Processor(_Total)\% Processor
/// Time`, values 0–40 except three spikes), from 10:00:00.250.
fn long_log(records: std::ops::Range<u32>) -> String {
    let mut s = String::from(
        "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\M\\Processor(_Total)\\% Processor Time\"\r\n",
    );
    for i in records {
        let v = match i {
            // The first record of slice 1 (67 s from the first record).
            67 => 99.5,
            // The last record of slice 2 ([134 s, 201 s)).
            200 => 60.0,
            // The last record of the log, in slice 29.
            1999 => 85.0,
            _ => f64::from(i * 37 % 41),
        };
        let t = 250 + u64::from(i) * 1000;
        let (h, m, sec, ms) = (10 + t / 3_600_000, t / 60_000 % 60, t / 1000 % 60, t % 1000);
        s.push_str(&format!(
            "\"01/15/2024 {h:02}:{m:02}:{sec:02}.{ms:03}\",\"{v}\"\r\n"
        ));
    }
    s
}

/// Milliseconds of the day of `HH:MM:SS.mmm` at the end of `s`.
fn ms_of_day(s: &str) -> i64 {
    let tail = &s[s.len() - 12..];
    let n = |r: std::ops::Range<usize>| tail[r].parse::<i64>().unwrap();
    ((n(0..2) * 60 + n(3..5)) * 60 + n(6..8)) * 1000 + n(9..12)
}

/// `--interval auto` on a log of more than 1,024 records: the slices are exact. A record right at
/// a slice boundary counts in the slice that starts there, and every alert carries the min, avg and
/// max of its slice as computed here from relog's CSV of the same log. Merged logs (the log cut in
/// two) give the same report; `-b` starts the slices at the first record kept.
#[test]
fn auto_interval_slices_are_exact_on_long_logs() {
    let dir = tempdir("analyze-long");
    let whole = dir.join("whole.csv");
    std::fs::write(&whole, long_log(0..2000)).unwrap();
    let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
    std::fs::write(&a, long_log(0..1000)).unwrap();
    std::fs::write(&b, long_log(1000..2000)).unwrap();
    let whole = whole.to_str().unwrap();

    // The slices worked out from relog's CSV: 1,999 s / 30 = 66.6 → 67 s.
    let o = run(&["relog", whole, "-f", "csv"]);
    assert_success(&o);
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<(i64, f64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split(',').map(|c| c.trim_matches('"')).collect();
            (ms_of_day(cells[0]), cells[1].parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 2000);
    let t0 = rows[0].0;
    let mut slices: Vec<(f64, f64, f64, u32)> = vec![(f64::MAX, 0.0, f64::MIN, 0); 30];
    for &(t, v) in &rows {
        let s = &mut slices[((t - t0) / 67_000) as usize];
        s.0 = s.0.min(v);
        s.1 += v;
        s.2 = s.2.max(v);
        s.3 += 1;
    }

    let check = |v: &Value| -> Vec<(String, i64, i64, f64)> {
        assert_eq!(v["interval_seconds"], 67);
        let mut out = Vec::new();
        for a in v["alerts"].as_array().unwrap() {
            assert_eq!(a["counter"], r"\\M\Processor(_Total)\% Processor Time");
            let start = ms_of_day(a["start"].as_str().unwrap());
            let end = ms_of_day(a["end"].as_str().unwrap());
            assert_eq!(end - start, 67_000);
            let k = ((start - t0) / 67_000) as usize;
            assert_eq!(start, t0 + k as i64 * 67_000);
            let (min, sum, max, n) = slices[k];
            assert_eq!(
                (a["min"].as_f64(), a["avg"].as_f64(), a["max"].as_f64()),
                (Some(min), Some(sum / f64::from(n)), Some(max)),
                "slice {k}"
            );
            out.push((
                a["condition"].as_str().unwrap().to_string(),
                k as i64,
                start,
                max,
            ));
        }
        out
    };
    let v = json_of(&["analyze", whole, "--format", "json"]);
    let alerts = check(&v);
    let c = |cond: &str, k: i64, max: f64| (cond.to_string(), k, t0 + k * 67_000, max);
    assert_eq!(
        alerts,
        [
            c("Critical", 1, 99.5),
            c("Warning", 1, 99.5),
            c("Warning", 2, 60.0),
            c("Critical", 29, 85.0),
            c("Warning", 29, 85.0),
        ]
    );
    // Slice 1 starts with the spike: its 67 values are 99.5 and the 66 after it.
    assert_eq!(slices[1].3, 67);
    assert_eq!(v["alerts"][0]["start"], "2024-01-15T10:01:07.250");
    assert_eq!(v["alerts"][0]["min"], 0.0);

    // The same log in two files, merged.
    let merged = json_of(&[
        "analyze",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(check(&merged), alerts);
    assert_eq!(merged["alerts"], v["alerts"]);
    assert_eq!(merged["statistics"], v["statistics"]);

    // From the spike on (-b): 1,932 s / 30 = 64.4 → 64 s slices from 10:01:07.250.
    let from = json_of(&[
        "analyze",
        whole,
        "-b",
        "01/15/2024 10:01:07.250",
        "--format",
        "json",
    ]);
    assert_eq!(from["interval_seconds"], 64);
    let first = &from["alerts"][0];
    assert_eq!(
        (first["start"].as_str(), first["end"].as_str()),
        (
            Some("2024-01-15T10:01:07.250"),
            Some("2024-01-15T10:02:11.250")
        )
    );
    assert_eq!(first["max"], 99.5);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--list-rules` prints every built-in threshold file: name, own analyses, with inherited ones
/// (enabled), what it inherits, title.
#[test]
fn list_rules_prints_the_catalogue() {
    let o = run(&["analyze", "--list-rules"]);
    assert_success(&o);
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 73, "{text}");
    let words = |l: &str| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        words(lines[0]),
        ["NAME", "OWN", "WITH", "INHERITED", "INHERITS", "TITLE"]
    );
    let sql = lines
        .iter()
        .find(|l| l.starts_with("SQLServer2014 "))
        .unwrap();
    assert_eq!(
        words(sql),
        [
            "SQLServer2014",
            "138",
            "219",
            "(217",
            "enabled)",
            "SystemOverview.xml",
            "Microsoft",
            "SQL",
            "Server",
            "2014"
        ]
    );
    let q = lines
        .iter()
        .find(|l| l.starts_with("QuickSystemOverview "))
        .unwrap();
    assert_eq!(
        words(q),
        [
            "QuickSystemOverview",
            "73",
            "73",
            "(72",
            "enabled)",
            "-",
            "Quick",
            "System",
            "Overview"
        ]
    );
    // Nothing else goes with it.
    let o = run(&["analyze", "--list-rules", "x.blg"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

/// `--rules` takes a built-in file's name in any case, with or without `.xml`; an unknown name
/// offers the closest ones.
#[test]
fn rules_by_builtin_name() {
    let Some(log) = vista() else { return };
    let v = json_of(&[
        "analyze",
        &log,
        "--rules",
        "sqlserver2014",
        "--format",
        "json",
    ]);
    assert_eq!(
        v["rules"],
        serde_json::json!([
            "built-in SQLServer2014.xml",
            "built-in SystemOverview.xml",
            "built-in QuickSystemOverview.xml"
        ])
    );
    assert_eq!(v["analyses"].as_array().unwrap().len(), 217);
    let w = json_of(&["analyze", &log, "--rules", "SP2013.XML", "--format", "json"]);
    assert_eq!(
        w["rules"],
        serde_json::json!(["built-in SP2013.xml", "built-in QuickSystemOverview.xml"])
    );
    let o = run(&["analyze", &log, "--rules", "SQLServer2015"]);
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o),
        "perfcounters: SQLServer2015: cannot open: no such file, nor a built-in threshold file; \
         did you mean \"SQLServer2012\", \"SQLServer2014\" or \"SQLServer\"?\n"
    );
}
