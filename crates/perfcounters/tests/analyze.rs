//! `analyze` over the real logs of `../shared/data` with the built-in rules (PAL's
//! QuickSystemOverview): the slices, alerts and statistics worked out by hand, EXCLUDE, `--set`,
//! trends, and a localized log through name tables.

use crate::support::log_time as t;
use crate::support::shared_data;
use crate::support::vec_log;

use std::path::PathBuf;

use perfcounters::analyze::RulesFile;
use perfcounters::analyze::{analyze, analyze_logs, AnalyzeOptions, Interval, Pass, Report, Rules};
use perfcounters::log::{
    BlgLogReader, Cell, CsvReadOptions, LogCounter, LogHeader, LogKind, LogReader, LogTime,
    OpenOptions, PdhCsvReader, Record,
};
use perfcounters::names::NameTable;
use perfcounters::path::CounterPath;
use vec_log::VecLog;

fn data(sub: &str, name: &str) -> Option<PathBuf> {
    Some(
        shared_data::dir("the real Windows logs")?
            .join(sub)
            .join(name),
    )
}

fn open(path: &std::path::Path) -> Box<dyn LogReader> {
    if path.extension().is_some_and(|e| e == "blg") {
        Box::new(BlgLogReader::open(path).unwrap())
    } else {
        Box::new(PdhCsvReader::open(path, CsvReadOptions::default()).unwrap())
    }
}

/// Analyses `path` as the command does: with `--interval auto` its times first (a `.blg` read
/// for its times alone), then its values.
fn run(path: &std::path::Path, opts: &AnalyzeOptions) -> Report {
    let open = |pass: Pass| {
        let options = OpenOptions::default().with_times_only(pass == Pass::Times);
        perfcounters::log::open_file(path, &options).map(|r| vec![r])
    };
    let r = analyze_logs(open, &Rules::builtin(), opts).unwrap();
    // The same report from full readers in both passes.
    let full = analyze_logs(|_| Ok(vec![self::open(path)]), &Rules::builtin(), opts).unwrap();
    assert_eq!(r, full);
    r
}

fn analysis<'a>(r: &'a Report, name: &str) -> &'a perfcounters::analyze::AnalysisReport {
    r.analyses.iter().find(|a| a.name == name).unwrap()
}

/// (analysis, condition, counter, slice start, min, avg, max) of each alert.
type Row = (String, String, String, LogTime, f64, f64, f64);

fn alerts_of(r: &Report, name: &str) -> Vec<Row> {
    r.alerts
        .iter()
        .filter(|a| r.analyses[a.analysis].name == name)
        .map(|a| {
            (
                r.analyses[a.analysis].name.clone(),
                a.condition.clone(),
                r.counters[a.counter].path.clone(),
                a.start,
                a.min,
                a.avg,
                a.max,
            )
        })
        .collect()
}

const SEC: i64 = 10_000_000;

/// The PAL Vista log: 11 samples a minute apart from 15:40:38.659. Duration 599.94 s: 600 / 30 =
/// 20 s, below the sample interval (the shortest gap, 59.955 s, rounds up to 60 s): I = 60 s.
/// Slice 0 holds samples 0 and 1 (sample 1 is 59.955 s after t0), slice k ≥ 1 holds sample k + 1.
#[test]
fn vista_log_worked_by_hand() {
    let Some(path) = data("blg", "pal-vista-SamplePerfmonLog.blg") else {
        return;
    };
    let r = run(&path, &AnalyzeOptions::default());
    assert_eq!(r.interval_seconds, 60);
    assert_eq!(r.records, 11);
    assert_eq!(r.machines, ["ZACH-PC"]);
    // Records are UTC instants: 15:40:38.659 Eastern Daylight Time (bias 240) is 19:40:38.659 UTC.
    let t0 = t(2007, 8, 14, 19, 40, 38, 659);
    assert_eq!(r.range, Some((t0, t(2007, 8, 14, 19, 50, 38, 599))));
    let slice = |k: i64| LogTime(t0.0 + k * 60 * SEC);

    // \Memory\Available MBytes: 79, 107 | 172 | 150 | 127 | 212 | 191 | 191 | 195 | 192 | 194.
    // With 16 GB (the default) every slice is under 10 % (1638.4 MB) and 5 % (819.2 MB).
    let mb = alerts_of(&r, "Memory Available MBytes");
    assert_eq!(mb.len(), 20);
    let avail = r"\\ZACH-PC\Memory\Available MBytes".to_string();
    let name = "Memory Available MBytes".to_string();
    // In time order, the critical alert of a slice before its warning.
    assert_eq!(
        mb[0],
        (
            name.clone(),
            "Critical".into(),
            avail.clone(),
            slice(0),
            79.0,
            93.0,
            107.0
        )
    );
    assert_eq!(
        mb[1],
        (
            name.clone(),
            "Warning".into(),
            avail.clone(),
            slice(0),
            79.0,
            93.0,
            107.0
        )
    );
    assert_eq!(
        mb[19],
        (
            name.clone(),
            "Warning".into(),
            avail.clone(),
            slice(9),
            194.0,
            194.0,
            194.0
        )
    );
    // With 1 GB: 102.4 MB and max(51.2, 64) MB: only slice 0 (min 79) breaks the warning.
    let one_gb = AnalyzeOptions {
        set: vec![("PhysicalMemory".into(), "1".into())],
        ..AnalyzeOptions::default()
    };
    let r1 = run(&path, &one_gb);
    assert_eq!(
        alerts_of(&r1, "Memory Available MBytes"),
        [(name, "Warning".into(), avail, slice(0), 79.0, 93.0, 107.0)]
    );

    // \Processor(*)\% Processor Time: Processor(0) and _Total carry the same values
    // (blank, 82.15 | 86.90 | 48.31 | 56.51 | 60.34 | 31.04 | 29.87 | 19.71 | 32.55 | 24.64):
    // > 50 in slices 0, 1, 3, 4 and > 80 in slices 0, 1, for both instances.
    let cpu = alerts_of(&r, "Processor % Processor Time");
    let summary: Vec<(String, String, i64)> = cpu
        .iter()
        .map(|a| (a.1.clone(), a.2.clone(), (a.3 .0 - t0.0) / (60 * SEC)))
        .collect();
    let p0 = r"\\ZACH-PC\Processor(0)\% Processor Time".to_string();
    let pt = r"\\ZACH-PC\Processor(_Total)\% Processor Time".to_string();
    let mut want = Vec::new();
    for k in [0, 1, 3, 4] {
        if k < 2 {
            want.push(("Critical".to_string(), p0.clone(), k));
            want.push(("Critical".to_string(), pt.clone(), k));
        }
        want.push(("Warning".to_string(), p0.clone(), k));
        want.push(("Warning".to_string(), pt.clone(), k));
    }
    assert_eq!(summary, want);
    // Slice 0 has one value (the first sample of a rate has none).
    let first = &cpu[0];
    assert_eq!(first.4, first.6);
    assert!((first.4 - 82.148_113_155_322_6).abs() < 1e-9);

    // \System\Processor Queue Length: one processor (2 instances of \Processor(*) less _Total),
    // so > 2 warns and > 10 is critical. Slice 0 holds 4 and 10: one warning; 10 is not > 10.
    let q = alerts_of(&r, "System Processor Queue Length");
    assert_eq!(
        q,
        [(
            "System Processor Queue Length".to_string(),
            "Warning".to_string(),
            r"\\ZACH-PC\System\Processor Queue Length".to_string(),
            slice(0),
            4.0,
            7.0,
            10.0
        )]
    );
    // Statistics of a counter: min, avg, max over all values; p90/p95 by nearest rank of 11 values.
    let s = r
        .counters
        .iter()
        .find(|c| c.path.ends_with(r"System\Processor Queue Length"))
        .unwrap();
    assert_eq!((s.count, s.min, s.max), (11, Some(0.0), Some(10.0)));
    assert_eq!(s.avg, Some(22.0 / 11.0));
    // Sorted: 0 0 1 1 1 1 1 1 2 4 10; rank ceil(9.9) = 10 → 4; ceil(10.45) = 11 → 10.
    assert_eq!((s.p90, s.p95), (Some(4.0), Some(10.0)));
    assert_eq!(s.points.len(), 11);

    // Network utilization (a generated data source in PAL's network form): both adapters sent
    // nothing (Bytes Total/sec is 0 in every sample), so the generated series is 0 in each of the
    // 10 slices that have a value, and nothing alerts.
    let nu = analysis(&r, "Network Interface % Network Utilization");
    assert!(nu.evaluated(), "{:?}", nu.reason);
    let util: Vec<_> = nu
        .counters
        .iter()
        .map(|&c| &r.counters[c])
        .filter(|c| c.path.ends_with(r"\% Network Utilization"))
        .collect();
    assert_eq!(util.len(), 2);
    assert_eq!(
        util[0].path,
        r"\\ZACH-PC\Network Interface(VIA Rhine II Fast Ethernet Adapter)\% Network Utilization"
    );
    assert_eq!((util[0].count, util[0].max), (10, Some(0.0)));
    assert!(alerts_of(&r, "Network Interface % Network Utilization").is_empty());
    for sent_received in ["Sent", "Received"] {
        let a = analysis(
            &r,
            &format!("Network Interface % Network Utilization {sent_received}"),
        );
        assert!(a.evaluated(), "{:?}", a.reason);
    }
    // The generated series come from their PowerShell, interpreted once per slice over the
    // slice's values of the inputs (`Value[0]` / `QuantizedAvg[0]`: the slice's average). Slice k
    // (k = 0..9) holds record k + 1 of the disk counters (record 0 of a rate is blank).
    // Disk Overwhelmed for C:: 2 when Avg. Disk Queue Length >= 1 and Avg. Disk sec/Transfer >
    // 0.025 (every Avg. Disk Bytes/Transfer is under 65,536), 1 when the queue is >= 1 and the
    // time > 0.015, else 0. Queue / time per slice: 0.312/0.0082, 0.919/0.0152, 0.807/0.0097,
    // 2.591/0.0368 (2), 1.189/0.0249 (1: 0.0249 is not above 0.025), 0.698/0.0110, 0.089/0.0038,
    // 0.015/0.0029, 0.496/0.0345, 0.087/0.0046: 0, 0, 0, 2, 1, 0, 0, 0, 0, 0.
    let series = |name: &str| {
        r.counters
            .iter()
            .find(|c| c.path == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let c = series(r"\\ZACH-PC\LogicalDisk(C:)\Disk Overwhelmed");
    assert_eq!((c.count, c.min, c.max), (10, Some(0.0), Some(2.0)));
    assert_eq!(c.avg, Some(0.3));
    let values: Vec<f64> = c.points.iter().map(|p| p.1).collect();
    assert_eq!(values, [0.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(c.points[3].0, slice(3));
    assert!(c
        .formula
        .as_deref()
        .unwrap()
        .contains("$CollectionOfLogicalDiskDiskOverwhelmedAll.Add("));
    // HarddiskVolume1 has no values: each comparison with $null is false, so 0.
    let v1 = series(r"\\ZACH-PC\LogicalDisk(HarddiskVolume1)\Disk Overwhelmed");
    assert_eq!((v1.count, v1.max), (10, Some(0.0)));
    // Critical (>= 2) in slice 3, warning (>= 1) in slices 3 and 4.
    let dov = alerts_of(&r, "LogicalDisk Disk Overwhelmed");
    let got: Vec<(String, LogTime, f64)> = dov.iter().map(|a| (a.1.clone(), a.3, a.6)).collect();
    assert_eq!(
        got,
        [
            ("Critical".to_string(), slice(3), 2.0),
            ("Warning".to_string(), slice(3), 2.0),
            ("Warning".to_string(), slice(4), 1.0)
        ]
    );
    // Physical Memory Overwhelmed: the log has no paging file, so 1 when Available MBytes is
    // under 10 % of 16 GB (1,638.4 MB) and 2 under 5 % (819.2 MB): every slice average (93, 172,
    // 150 … 194) is under 819.2, so 2 in each of the 10 slices, and both thresholds alert in each.
    let m = series(r"\\ZACH-PC\Memory\Physical Memory Overwhelmed");
    assert_eq!((m.count, m.min, m.max), (10, Some(2.0), Some(2.0)));
    assert_eq!(
        alerts_of(&r, "Memory Physical Memory Overwhelmed").len(),
        20
    );
    // An analysis whose counters the log lacks says so.
    let pf = analysis(&r, "Paging File % Usage");
    assert_eq!(
        pf.reason.as_deref(),
        Some(r"the log has none of its counters (\Paging File(*)\% Usage)")
    );
    // Every enabled analysis appears.
    assert_eq!(r.analyses.len(), 72);
}

/// EXCLUDE INSTANCE: `\LogicalDisk(*)\% Free Space` leaves out _Total (and HarddiskVolume1).
#[test]
fn exclude_leaves_instances_out() {
    let Some(path) = data("blg", "pal-vista-SamplePerfmonLog.blg") else {
        return;
    };
    let r = run(&path, &AnalyzeOptions::default());
    let a = analysis(&r, "LogicalDisk % Free Space");
    assert!(a.evaluated(), "{:?}", a.reason);
    let names: Vec<&str> = a
        .counters
        .iter()
        .map(|&c| r.counters[c].path.as_str())
        .collect();
    assert!(!names.is_empty());
    assert!(names.iter().all(|n| !n.contains("_Total")), "{names:?}");
    // \Processor(*) has no EXCLUDE: _Total is in.
    let p = analysis(&r, "Processor % Processor Time");
    assert!(p
        .counters
        .iter()
        .any(|&c| r.counters[c].path.contains("_Total")));
}

/// The Tx log: 601 samples a second apart; duration 599.996 s → 600 s (PowerShell's `[int]`
/// rounds) / 30 = 20 s slices, PAL's interval. Every
/// alert is checked against a direct computation over the values (slices, max > threshold).
#[test]
fn tx_log_against_a_direct_computation() {
    let Some(path) = data("blg", "tx-win8-BasicPerfCounters.blg") else {
        return;
    };
    let r = run(&path, &AnalyzeOptions::default());
    assert_eq!(r.interval_seconds, 20);
    assert_eq!(r.records, 601);
    // The values, read the way relog reads them.
    let mut reader = perfcounters::log::Filtered::new(open(&path), &Default::default()).unwrap();
    let header = reader.header().clone();
    let mut rows = Vec::new();
    let mut rec = Record::default();
    while reader.read_record(&mut rec).unwrap() {
        rows.push(rec.clone());
    }
    let t0 = rows[0].time;
    let width = 20 * SEC;
    for (analysis_name, counter_part, thresholds) in [
        (
            "Processor % Processor Time",
            r"% Processor Time",
            [("Warning", 50.0), ("Critical", 80.0)],
        ),
        (
            "PhysicalDisk Avg. Disk Queue Length",
            r"Avg. Disk Queue Length",
            [("Warning", 2.0), ("Warning", f64::INFINITY)],
        ),
    ] {
        let mut want = Vec::new();
        for (col, c) in header.counters.iter().enumerate() {
            if !c.name.ends_with(counter_part)
                || c.name.contains("Read Queue")
                || c.name.contains("Write Queue")
            {
                continue;
            }
            let mut slices: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
            for row in &rows {
                if let Some(v) = row.cells[col].value() {
                    slices
                        .entry((row.time.0 - t0.0) / width)
                        .or_default()
                        .push(v);
                }
            }
            for (k, vals) in slices {
                let max = vals.iter().cloned().fold(f64::MIN, f64::max);
                for (cond, limit) in thresholds {
                    if max > limit {
                        want.push((k, cond.to_string(), c.name.clone()));
                    }
                }
            }
        }
        let mut got: Vec<(i64, String, String)> = alerts_of(&r, analysis_name)
            .into_iter()
            .map(|a| ((a.3 .0 - t0.0) / width, a.1, a.2))
            .collect();
        want.sort();
        got.sort();
        assert!(!want.is_empty());
        assert_eq!(got, want, "{analysis_name}");
    }
    // The worked figure: Processor(0) exceeds 80 % (81.251) once, in one slice.
    let crit: Vec<_> = alerts_of(&r, "Processor % Processor Time")
        .into_iter()
        .filter(|a| a.1 == "Critical")
        .collect();
    assert_eq!(crit.len(), 1);
    assert!(crit[0].2.ends_with(r"Processor(0)\% Processor Time"));
    assert!((crit[0].6 - 81.251).abs() < 1e-3, "{}", crit[0].6);
}

/// A CSV log (PDH-CSV of a data collector set): 351 rows 15 s apart (5,250 s). 5,250 / 30 = 175 s,
/// PAL's interval, although the log is longer than 1,024 s. Its counters stay under every
/// threshold: no alert, statistics as relog --stats shows them.
#[test]
fn csv_log_without_alerts() {
    let Some(path) = data("logs", "en-pst-BM_Active_Load_Test.csv") else {
        return;
    };
    let r = run(&path, &AnalyzeOptions::default());
    assert_eq!(r.records, 351);
    assert_eq!(r.interval_seconds, 175);
    assert!(r.alerts.is_empty());
    let cpu = analysis(&r, "Processor % Processor Time");
    assert!(cpu.evaluated());
    let s = &r.counters[cpu.counters[0]];
    assert_eq!(s.path, r"\\ATTCOREU01\Processor(_Total)\% Processor Time");
    assert_eq!(s.count, 350);
    assert!((s.min.unwrap() - 0.273).abs() < 1e-3 && (s.max.unwrap() - 18.138).abs() < 1e-3);
    // With a fixed interval of 60 s: 5,250 / 60 → 88 slices, still no alert.
    let r60 = run(
        &path,
        &AnalyzeOptions {
            interval: Interval::Seconds(60),
            ..Default::default()
        },
    );
    assert_eq!(r60.interval_seconds, 60);
    assert!(r60.alerts.is_empty());
}

fn header(names: &[&str]) -> LogHeader {
    LogHeader {
        source: "made".into(),
        kind: LogKind::Csv,
        time_zone: None,
        counters: names
            .iter()
            .map(|n| LogCounter::new(CounterPath::parse(n).unwrap(), None))
            .collect(),
    }
}

fn records(start: LogTime, step_s: i64, values: &[&[Option<f64>]]) -> Vec<Record> {
    values
        .iter()
        .enumerate()
        .map(|(i, row)| Record {
            time: LogTime(start.0 + i as i64 * step_s * SEC),
            cells: row
                .iter()
                .map(|v| v.map_or(Cell::Blank, Cell::Value))
                .collect(),
        })
        .collect()
}

/// Trend thresholds: the slope per hour of the least-squares line from the first value to the end
/// of each slice. Handle Count rising by 60 per minute (3,600 per hour) breaks "> 100 per hour"
/// from the slice where two values exist; a flat series never does.
#[test]
fn trend_thresholds() {
    let h = header(&[
        r"\\M\Process(_Total)\Handle Count",
        r"\\M\Process(_Total)\Thread Count",
    ]);
    let t0 = t(2024, 1, 1, 0, 0, 0, 0);
    let rows: Vec<Vec<Option<f64>>> = (0..10)
        .map(|i| vec![Some(1000.0 + 60.0 * i as f64), Some(50.0)])
        .collect();
    let rows: Vec<&[Option<f64>]> = rows.iter().map(|r| r.as_slice()).collect();
    let mut log = VecLog::new(h, records(t0, 60, &rows));
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(120),
        ..Default::default()
    };
    let r = analyze(&mut log, &Rules::builtin(), &opts).unwrap();
    let hc = alerts_of(&r, "Process Handle Count");
    // Slices of 120 s hold 2 values each: 5 slices, all with a trend of 3,600 per hour.
    assert_eq!(hc.len(), 5);
    for a in r
        .alerts
        .iter()
        .filter(|a| r.analyses[a.analysis].name == "Process Handle Count")
    {
        assert!((a.trend.unwrap() - 3600.0).abs() < 1e-6, "{:?}", a.trend);
    }
    assert!(alerts_of(&r, "Process Thread Count").is_empty());
    let s = r
        .counters
        .iter()
        .find(|c| c.path.ends_with("Handle Count"))
        .unwrap();
    assert!((s.trend.unwrap() - 3600.0).abs() < 1e-6);
    assert_eq!(
        r.counters
            .iter()
            .find(|c| c.path.ends_with("Thread Count"))
            .unwrap()
            .trend,
        Some(0.0)
    );
}

/// A rules file with every operator, a blank cell, and `-c` narrowing the columns.
#[test]
fn operators_blank_cells_and_counter_filter() {
    let rules_text = r#"<PAL NAME="ops">
  <ANALYSIS NAME="ops" ENABLED="True" CATEGORY="Test" ID="1">
    <DATASOURCE TYPE="CounterLog" NAME="\T(*)\V" EXPRESSIONPATH="\T(*)\V" COLLECTIONVARNAME="V" />
    <THRESHOLD NAME="gt" CONDITION="gt" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'gt' -Threshold 5</CODE></THRESHOLD>
    <THRESHOLD NAME="ge" CONDITION="ge" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'ge' -Threshold 5</CODE></THRESHOLD>
    <THRESHOLD NAME="lt" CONDITION="lt" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'lt' -Threshold 2</CODE></THRESHOLD>
    <THRESHOLD NAME="le" CONDITION="le" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'le' -Threshold 2</CODE></THRESHOLD>
    <THRESHOLD NAME="eq" CONDITION="eq" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'eq' -Threshold 3</CODE></THRESHOLD>
  </ANALYSIS>
</PAL>"#;
    let f = RulesFile::parse("ops.xml", rules_text).unwrap();
    let rules = Rules {
        name: f.name,
        files: vec![],
        questions: f.questions,
        analyses: f.analyses,
    };
    let h = header(&[r"\\M\T(a)\V", r"\\M\T(b)\V"]);
    let t0 = t(2024, 1, 1, 0, 0, 0, 0);
    // Slices of 2 records: (a) [5, blank] [3, 2] [6, 1]; (b) [2, 4] ...
    let rows: &[&[Option<f64>]] = &[
        &[Some(5.0), Some(2.0)],
        &[None, Some(4.0)],
        &[Some(3.0), Some(3.0)],
        &[Some(2.0), Some(3.0)],
        &[Some(6.0), Some(9.0)],
        &[Some(1.0), Some(9.0)],
    ];
    let mut log = VecLog::new(h.clone(), records(t0, 1, rows));
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(2),
        ..Default::default()
    };
    let r = analyze(&mut log, &rules, &opts).unwrap();
    let got: Vec<(i64, String, String)> = r
        .alerts
        .iter()
        .map(|a| {
            (
                (a.start.0 - t0.0) / (2 * SEC),
                a.condition.clone(),
                r.counters[a.counter].path.clone(),
            )
        })
        .collect();
    let a = r"\\M\T(a)\V".to_string();
    let b = r"\\M\T(b)\V".to_string();
    let want = vec![
        (0, "ge".to_string(), a.clone()),
        (0, "le".to_string(), b.clone()),
        (1, "eq".to_string(), a.clone()),
        (1, "le".to_string(), a.clone()),
        (1, "eq".to_string(), b.clone()),
        (2, "gt".to_string(), a.clone()),
        (2, "ge".to_string(), a.clone()),
        (2, "lt".to_string(), a.clone()),
        (2, "le".to_string(), a.clone()),
        (2, "gt".to_string(), b.clone()),
        (2, "ge".to_string(), b.clone()),
    ];
    let mut got_sorted = got.clone();
    got_sorted.sort();
    let mut want_sorted = want;
    want_sorted.sort();
    assert_eq!(got_sorted, want_sorted);
    // Slice 0 of (a): the blank cell is skipped: min = avg = max = 5.
    let first = r
        .alerts
        .iter()
        .find(|x| x.condition == "ge" && x.start == t0)
        .unwrap();
    assert_eq!((first.min, first.avg, first.max), (5.0, 5.0, 5.0));
    // -c keeps only (b).
    let mut log = VecLog::new(h, records(t0, 1, rows));
    let only_b = AnalyzeOptions {
        counters: Some(perfcounters::log::CounterFilter::new(vec![
            CounterPath::parse(r"\T(b)\V").unwrap(),
        ])),
        ..opts
    };
    let r = analyze(&mut log, &rules, &only_b).unwrap();
    assert_eq!(r.counters.len(), 1);
    assert!(r.alerts.iter().all(|x| r.counters[x.counter].path == b));
}

/// A localized log: Spanish names match the English rules through name tables, and the report
/// names the counters in English.
#[test]
fn localized_log_through_names() {
    let mut es = NameTable::new();
    es.insert(238, "Procesador");
    es.insert(6, "% de tiempo de procesador");
    let h = header(&[r"\\M\Procesador(_Total)\% de tiempo de procesador"]);
    let t0 = t(2024, 1, 1, 0, 0, 0, 0);
    let rows: &[&[Option<f64>]] = &[&[Some(10.0)], &[Some(95.0)]];
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(60),
        names: vec![es],
        ..Default::default()
    };
    let r = analyze_logs(
        |_| Ok(vec![Box::new(VecLog::new(h.clone(), records(t0, 1, rows)))]),
        &Rules::builtin(),
        &opts,
    )
    .unwrap();
    let cpu = alerts_of(&r, "Processor % Processor Time");
    assert_eq!(cpu.len(), 2);
    assert_eq!(cpu[0].2, r"\\M\Processor(_Total)\% Processor Time");
    assert_eq!(
        r.counters[0].log_path,
        r"\\M\Procesador(_Total)\% de tiempo de procesador"
    );
    // Without tables, the built-in one (PAL's CounterLang.xml) knows "Procesador": the same
    // alerts, and the report says how the log was matched.
    let r = analyze_logs(
        |_| Ok(vec![Box::new(VecLog::new(h.clone(), records(t0, 1, rows)))]),
        &Rules::builtin(),
        &AnalyzeOptions {
            interval: Interval::Seconds(60),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(alerts_of(&r, "Processor % Processor Time"), cpu);
    assert!(r.language.uses_builtin());
    assert_eq!(r.language.locales[0], "esES");
    // A language no table knows: nothing matches, and the report says why.
    let h = header(&[r"\\M\Suoritin(_Total)\Suoritinaika (%)"]);
    let r = analyze_logs(
        |_| Ok(vec![Box::new(VecLog::new(h.clone(), records(t0, 1, rows)))]),
        &Rules::builtin(),
        &AnalyzeOptions::default(),
    )
    .unwrap();
    assert!(r.alerts.is_empty());
    let few = r.few_evaluated().unwrap();
    assert_eq!((few.evaluated, few.total), (0, 72));
    assert_eq!(few.reason, perfcounters::analyze::FewReason::OtherLanguage);
    // Objects no table knows but named in English words are a product's own, not a language:
    // the counters are missing, and no name table would help.
    let h = header(&[
        r"\\M\MSSQL$PROD:Buffer Manager\Page life expectancy",
        r"\\M\Object 0(_Total)\Counter 1",
    ]);
    let r = analyze_logs(
        |_| Ok(vec![Box::new(VecLog::new(h.clone(), records(t0, 1, rows)))]),
        &Rules::builtin(),
        &AnalyzeOptions::default(),
    )
    .unwrap();
    assert_eq!(r.language.unknown, 2);
    assert_eq!(r.language.unknown_english_words, 2);
    let few = r.few_evaluated().unwrap();
    assert_eq!((few.evaluated, few.total), (0, 72));
    assert_eq!(
        few.reason,
        perfcounters::analyze::FewReason::CountersMissing
    );
}

/// PAL's `CounterLang.xml` as the name tables: a French log matches the English rules.
#[test]
fn localized_log_through_pal_counter_lang() {
    let Some(path) = data("pal", "CounterLang.xml") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let mut tables = perfcounters::names::counter_lang::parse_counter_lang(&text).unwrap();
    assert_eq!(tables.len(), 17);
    let english = tables.remove(0);
    assert_eq!(english.locale, "enUS");
    let h = header(&[
        r"\\M\Processeur(_Total)\% temps processeur",
        r"\\M\Processeur(0)\% temps processeur",
    ]);
    let t0 = t(2024, 1, 1, 0, 0, 0, 0);
    let rows: &[&[Option<f64>]] = &[&[Some(55.0), Some(20.0)], &[Some(60.0), Some(30.0)]];
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(60),
        names: tables.into_iter().map(|t| t.names).collect(),
        english: vec![english.names],
        ..Default::default()
    };
    let r = analyze_logs(
        |_| Ok(vec![Box::new(VecLog::new(h.clone(), records(t0, 1, rows)))]),
        &Rules::builtin(),
        &opts,
    )
    .unwrap();
    let cpu = alerts_of(&r, "Processor % Processor Time");
    // _Total: max 60 > 50 (warning); Processor(0): max 30, nothing.
    assert_eq!(
        cpu,
        [(
            "Processor % Processor Time".to_string(),
            "Warning".to_string(),
            r"\\M\Processor(_Total)\% Processor Time".to_string(),
            t0,
            55.0,
            57.5,
            60.0
        )]
    );
}

/// Edge cases: a log without records, a gap of ten years with 1 s slices (slices without values
/// cost nothing), and a record earlier than the one before it (it counts in the latest slice).
#[test]
fn empty_logs_long_gaps_and_disorder() {
    let h = header(&[r"\\M\Processor(_Total)\% Processor Time"]);
    let r = analyze_logs(
        |_| Ok(vec![Box::new(VecLog::new(h.clone(), Vec::new()))]),
        &Rules::builtin(),
        &AnalyzeOptions::default(),
    )
    .unwrap();
    assert_eq!((r.records, r.range, r.interval_seconds), (0, None, 0));
    assert!(r.alerts.is_empty());
    assert_eq!(r.counters[0].count, 0);
    assert_eq!(r.counters[0].min, None);
    // One stream cannot be read twice: the automatic interval needs `analyze_logs`.
    let mut log = VecLog::new(h.clone(), Vec::new());
    let e = analyze(&mut log, &Rules::builtin(), &AnalyzeOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("analyze_logs reads them first"),
        "{e}"
    );

    let t0 = t(2014, 1, 1, 0, 0, 0, 0);
    let later = t(2024, 1, 1, 0, 0, 0, 0);
    let rec = |time: LogTime, v: f64| Record {
        time,
        cells: vec![Cell::Value(v)],
    };
    let rows = vec![
        rec(t0, 90.0),
        rec(later, 95.0),
        rec(LogTime(later.0 - 5 * SEC), 10.0),
    ];
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(1),
        ..Default::default()
    };
    let mut log = VecLog::new(h, rows);
    let r = analyze(&mut log, &Rules::builtin(), &opts).unwrap();
    let cpu = alerts_of(&r, "Processor % Processor Time");
    // Slice 0 (90) and the slice of `later` (95 and the out-of-order 10): critical and warning each.
    assert_eq!(cpu.len(), 4);
    assert_eq!(cpu[0].3, t0);
    assert_eq!(cpu[2].3, later);
    assert_eq!((cpu[2].4, cpu[2].6), (10.0, 95.0));
    assert_eq!(r.range, Some((t0, later)));
}

/// QuickSystemOverview's network-utilization code, interpreted per slice: [int](avg(Bytes Total/sec) × 8 / avg(Current
/// Bandwidth) × 100), instances matched by name, _Total excluded.
#[test]
fn generated_network_utilization() {
    let h = header(&[
        r"\\M\Network Interface(eth0)\Bytes Total/sec",
        r"\\M\Network Interface(eth0)\Current Bandwidth",
        r"\\M\Network Interface(_Total)\Bytes Total/sec",
        r"\\M\Network Interface(_Total)\Current Bandwidth",
    ]);
    let t0 = t(2024, 1, 1, 0, 0, 0, 0);
    // 100 Mbit/s. Slice 0: 1,000,000 and 2,000,000 B/s (avg 1.5 MB/s = 12 %); slice 1: 5,000,000 and
    // 6,000,000 (avg 5.5 MB/s = 44 %: warning > 30); slice 2: 7,000,000 (56 %: warning and critical).
    let bw = Some(100_000_000.0);
    let rows: &[&[Option<f64>]] = &[
        &[Some(1_000_000.0), bw, Some(9e9), bw],
        &[Some(2_000_000.0), bw, Some(9e9), bw],
        &[Some(5_000_000.0), bw, Some(9e9), bw],
        &[Some(6_000_000.0), bw, Some(9e9), bw],
        &[Some(7_000_000.0), bw, Some(9e9), bw],
    ];
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(2),
        ..Default::default()
    };
    let mut log = VecLog::new(h, records(t0, 1, rows));
    let r = analyze(&mut log, &Rules::builtin(), &opts).unwrap();
    let a = alerts_of(&r, "Network Interface % Network Utilization");
    let path = r"\\M\Network Interface(eth0)\% Network Utilization".to_string();
    let name = "Network Interface % Network Utilization".to_string();
    assert_eq!(
        a,
        [
            (
                name.clone(),
                "Warning".into(),
                path.clone(),
                LogTime(t0.0 + 2 * SEC),
                44.0,
                44.0,
                44.0
            ),
            (
                name.clone(),
                "Critical".into(),
                path.clone(),
                LogTime(t0.0 + 4 * SEC),
                56.0,
                56.0,
                56.0
            ),
            (
                name,
                "Warning".into(),
                path.clone(),
                LogTime(t0.0 + 4 * SEC),
                56.0,
                56.0,
                56.0
            ),
        ]
    );
    let s = r.counters.iter().find(|c| c.path == path).unwrap();
    assert_eq!((s.count, s.min, s.max), (3, Some(12.0), Some(56.0)));
}

/// Code evaluated per slice: a generated series (each slice's average of `V` times 10) and its
/// threshold; threshold code that calls `CreateAlert` on the instances whose slice average is 3
/// or more; and a generated data source that divides by a slice average of 0 in the third
/// slice: its analysis is not evaluated, with the slice and the line, and raises no alert.
#[test]
fn generated_series_and_code_alerts_per_slice() {
    let rules_text = r#"<PAL NAME="slices">
  <ANALYSIS NAME="tenfold" ENABLED="True" CATEGORY="Test" ID="1">
    <DATASOURCE TYPE="CounterLog" NAME="\T(*)\V" EXPRESSIONPATH="\T(*)\V" COLLECTIONVARNAME="V" />
    <DATASOURCE TYPE="Generated" NAME="\T(*)\Tenfold" EXPRESSIONPATH="\T(*)\Tenfold" COLLECTIONVARNAME="G"><CODE><![CDATA[
$G = @{}
For ($i=0;$i -lt $V.Count;$i++) {
  $G.Add("\\$($V[$i].CounterComputer)\T($($V[$i].CounterInstance))\Tenfold", @($V[$i].QuantizedAvg[0] * 10))
}]]></CODE></DATASOURCE>
    <THRESHOLD NAME="big" CONDITION="Warning" PRIORITY="50"><CODE>StaticThreshold -CollectionOfCounterInstances $G -Operator 'ge' -Threshold 40</CODE></THRESHOLD>
  </ANALYSIS>
  <ANALYSIS NAME="by code" ENABLED="True" CATEGORY="Test" ID="2">
    <DATASOURCE TYPE="CounterLog" NAME="\T(*)\V" EXPRESSIONPATH="\T(*)\V" COLLECTIONVARNAME="W" />
    <THRESHOLD NAME="three" CONDITION="Critical" PRIORITY="100"><CODE><![CDATA[
For ($i=0;$i -lt $W.Count;$i++) {
  $o = $W[$i]
  For ($t=0;$t -lt $alQuantizedTime.Count;$t++) {
    If ($o.QuantizedAvg[$t] -ge 3) { CreateAlert -TimeSliceIndex $t -CounterInstanceObject $o -IsAvgThresholdBroken $True }
  }
}]]></CODE></THRESHOLD>
  </ANALYSIS>
  <ANALYSIS NAME="inverse" ENABLED="True" CATEGORY="Test" ID="3">
    <DATASOURCE TYPE="CounterLog" NAME="\T(*)\V" EXPRESSIONPATH="\T(*)\V" COLLECTIONVARNAME="X" />
    <DATASOURCE TYPE="Generated" NAME="\T(*)\Inverse" EXPRESSIONPATH="\T(*)\Inverse" COLLECTIONVARNAME="I"><CODE><![CDATA[$I = @{}
For ($k=0;$k -lt $X.Count;$k++) {
  $I.Add("\\M\T($($X[$k].CounterInstance))\Inverse", @(100 / $X[$k].QuantizedAvg[0]))
}]]></CODE></DATASOURCE>
    <THRESHOLD NAME="any" CONDITION="Warning" PRIORITY="50"><CODE>StaticThreshold -CollectionOfCounterInstances $I -Operator 'gt' -Threshold 0</CODE></THRESHOLD>
  </ANALYSIS>
</PAL>"#;
    let f = RulesFile::parse("slices.xml", rules_text).unwrap();
    let rules = Rules {
        name: f.name,
        files: vec![],
        questions: f.questions,
        analyses: f.analyses,
    };
    let h = header(&[r"\\M\T(a)\V"]);
    let t0 = t(2024, 1, 1, 0, 0, 0, 0);
    // Slices of 2 records: [2, 2] [4, 4] [0, 0].
    let rows: &[&[Option<f64>]] = &[
        &[Some(2.0)],
        &[Some(2.0)],
        &[Some(4.0)],
        &[Some(4.0)],
        &[Some(0.0)],
        &[Some(0.0)],
    ];
    let mut log = VecLog::new(h, records(t0, 1, rows));
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(2),
        ..Default::default()
    };
    let r = analyze(&mut log, &rules, &opts).unwrap();
    // The generated series: 20, 40, 0; the threshold (>= 40) in slice 1.
    let g = r
        .counters
        .iter()
        .find(|c| c.path == r"\\M\T(a)\Tenfold")
        .unwrap();
    let values: Vec<f64> = g.points.iter().map(|p| p.1).collect();
    assert_eq!(values, [20.0, 40.0, 0.0]);
    assert_eq!(g.points[1].0, LogTime(t0.0 + 2 * SEC));
    assert!(g
        .formula
        .as_deref()
        .unwrap()
        .contains("QuantizedAvg[0] * 10"));
    let tenfold = alerts_of(&r, "tenfold");
    assert_eq!(
        tenfold,
        [(
            "tenfold".to_string(),
            "Warning".to_string(),
            r"\\M\T(a)\Tenfold".to_string(),
            LogTime(t0.0 + 2 * SEC),
            40.0,
            40.0,
            40.0
        )]
    );
    // CreateAlert: slice 1 (average 4), with the slice's values; no operator nor threshold.
    let by_code = alerts_of(&r, "by code");
    assert_eq!(
        by_code,
        [(
            "by code".to_string(),
            "Critical".to_string(),
            r"\\M\T(a)\V".to_string(),
            LogTime(t0.0 + 2 * SEC),
            4.0,
            4.0,
            4.0
        )]
    );
    let a = r.alerts.iter().find(|a| a.condition == "Critical").unwrap();
    assert_eq!((a.operator, a.threshold), (None, None));
    assert!(analysis(&r, "by code").thresholds[0].per_slice);
    // 100 / 0 in the third slice.
    let inv = analysis(&r, "inverse");
    assert_eq!(
        inv.reason.as_deref(),
        Some("slices.xml: the generated data source $I failed in slice 3 (4 s after the first record): line 3: division by zero")
    );
    assert!(alerts_of(&r, "inverse").is_empty());
}
