//! `analyze::compare` over the real logs of `../shared/data`: a log against itself, the same log
//! with one counter tripled in its second half (written by the library's PDH-CSV writer), a German
//! baseline through a `PerfStringBackup.INI` against the English candidate, and the errors.

use crate::support::rewrite::rewrite;
use crate::support::shared_data;

use std::path::{Path, PathBuf};

use perfcounters::analyze::{
    compare, ChangeClass, CompareError, CompareOptions, Compared, FewReason, Rules, Side, Verdict,
};
use perfcounters::log::{LogTime, Pipeline, TimeBound};
use perfcounters::names::ini::parse_perf_string_backup;
use perfcounters::names::NameTables;

/// The Tx log: 601 samples a second apart; 5 PhysicalDisk counters and 5 Processor instances.
fn tx() -> Option<PathBuf> {
    Some(shared_data::dir("the real Windows logs")?.join("blg/tx-win8-BasicPerfCounters.blg"))
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pc-compare-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(baseline: Pipeline, candidate: Pipeline) -> Compared {
    compare(
        &baseline,
        &candidate,
        &Rules::builtin(),
        &CompareOptions::default(),
    )
    .unwrap()
}

fn pipeline(path: &Path) -> Pipeline {
    Pipeline::new([path.to_str().unwrap()])
}

/// A log compared with itself: every counter unchanged (effect 0, ratios 1), every analysis the
/// same; counters named without the machine.
#[test]
fn a_log_against_itself() {
    let Some(log) = tx() else { return };
    let r = run(pipeline(&log), pipeline(&log));
    let c = &r.comparison;
    assert_eq!(c.counters.len(), 10);
    for x in &c.counters {
        assert_eq!(x.class, ChangeClass::Unchanged, "{x:?}");
        assert_eq!(x.effect, Some(0.0), "{}", x.counter);
        assert_eq!(x.avg_ratio, Some(1.0), "{}", x.counter);
        assert_eq!(x.p95_ratio, Some(1.0), "{}", x.counter);
        assert_eq!(x.baseline, x.candidate);
        assert!(x.baseline.as_ref().unwrap().points.is_empty());
        assert!(x.counter.starts_with(r"\P"), "{}", x.counter);
    }
    let cpu = c
        .counters
        .iter()
        .find(|x| x.counter == r"\Processor(_Total)\% Processor Time")
        .unwrap();
    let s = cpu.baseline.as_ref().unwrap();
    // 601 samples, the first of a rate without a value: every value kept, percentiles exact.
    assert_eq!(s.count, 600);
    assert!(s.exact);
    assert_eq!(cpu.analyses, ["Processor % Processor Time"]);
    assert_eq!(cpu.bad, Some(perfcounters::analyze::BadDirection::Up));
    assert_eq!(c.analyses.len(), 72);
    assert!(c.analyses.iter().all(|a| a.verdict == Verdict::Same));
    let p = c
        .analyses
        .iter()
        .find(|a| a.name == "Processor % Processor Time")
        .unwrap();
    assert!(p.candidate.total() > 0);
    assert_eq!(p.baseline, p.candidate);
    assert_eq!(c.baseline.records, 601);
    assert_eq!(c.baseline.machines, ["GEORGIS3"]);
    assert_eq!(c.baseline, c.candidate);
    assert_eq!(r.baseline.report.interval_seconds, 20);
    assert_eq!(r.baseline.report.alerts, r.candidate.report.alerts);
}

/// The pairs (candidate, baseline) counted by Cliff's definition.
fn brute_delta(b: &[f64], c: &[f64]) -> f64 {
    let mut s = 0i64;
    for x in c {
        for y in b {
            s += (x > y) as i64 - (x < y) as i64;
        }
    }
    s as f64 / (b.len() * c.len()) as f64
}

/// `_Total`'s `% Processor Time` tripled in the second half: ranked first and worse (its
/// thresholds are `gt`), its analysis worse, every other counter unchanged.
#[test]
fn one_counter_tripled_in_its_second_half() {
    let Some(log) = tx() else { return };
    let dir = tempdir("tripled");
    let (base, cand) = (dir.join("base.csv"), dir.join("cand.csv"));
    let same = |s: &str| s.to_owned();
    rewrite(&log, &base, None, &same);
    let counter = r"Processor(_Total)\% Processor Time";
    let (before, after) = rewrite(&log, &cand, Some((counter, 301)), &same);
    let r = run(pipeline(&base), pipeline(&cand));
    let c = &r.comparison;
    let top = &c.counters[0];
    assert_eq!(top.counter, format!(r"\{counter}"));
    assert_eq!(top.class, ChangeClass::Worse);
    let (b, k) = (
        top.baseline.as_ref().unwrap(),
        top.candidate.as_ref().unwrap(),
    );
    assert_eq!((b.count, k.count), (600, 600));
    let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert_eq!(b.avg, avg(&before));
    assert_eq!(k.avg, avg(&after));
    assert_eq!(top.avg_ratio, Some(avg(&after) / avg(&before)));
    assert_eq!(k.max, after.iter().copied().fold(f64::MIN, f64::max));
    // Every value kept: the delta is Cliff's, pair by pair.
    assert_eq!(top.effect_error, Some(0.0));
    let exact = brute_delta(&before, &after);
    assert_eq!(top.effect, Some(exact));
    assert!(exact > 0.33, "{exact}");
    // The chart points of both sides, for the report.
    assert!(!b.points.is_empty() && !k.points.is_empty());
    for x in &c.counters[1..] {
        assert_eq!(x.class, ChangeClass::Unchanged, "{x:?}");
        assert_eq!(x.effect, Some(0.0));
    }
    let cpu = c
        .analyses
        .iter()
        .find(|a| a.name == "Processor % Processor Time")
        .unwrap();
    assert!(
        matches!(cpu.verdict, Verdict::Worse | Verdict::New),
        "{cpu:?}"
    );
    assert!(cpu.candidate.total() > cpu.baseline.total());
    for a in c
        .analyses
        .iter()
        .filter(|a| a.name != "Processor % Processor Time")
    {
        assert_eq!(a.verdict, Verdict::Same, "{a:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A German baseline (names from `de-en-PerfStringBackup-cp1252.INI`) against the English
/// candidate: matched through the name tables, every counter unchanged. Without the tables the
/// sides share nothing, and the error says the baseline looks localized.
#[test]
fn a_localized_baseline_through_names() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let log = data.join("blg/tx-win8-BasicPerfCounters.blg");
    let ini_path = data.join("names/de-en-PerfStringBackup-cp1252.INI");
    let ini = parse_perf_string_backup(&std::fs::read(&ini_path).unwrap(), None).unwrap();
    let (de, en) = (
        ini.language("007").unwrap().names.clone(),
        ini.language("009").unwrap().names.clone(),
    );
    let german = |name: &str| de.name(en.index_of(name).unwrap()).unwrap().to_owned();
    let rename = |s: &str| {
        let mut p = perfcounters::path::CounterPath::parse(s).unwrap();
        p.object = german(&p.object);
        p.counter = german(&p.counter);
        p.to_string()
    };
    assert_eq!(german("Processor"), "Prozessor");
    let dir = tempdir("german");
    let (base, cand) = (dir.join("de.csv"), dir.join("en.csv"));
    rewrite(&log, &base, None, &rename);
    rewrite(&log, &cand, None, &|s: &str| s.to_owned());
    let names = NameTables::load(&[&ini_path], None).unwrap();
    let r = run(
        pipeline(&base).names(names.clone()),
        pipeline(&cand).names(names),
    );
    let c = &r.comparison;
    assert_eq!(c.counters.len(), 10);
    assert!(c
        .counters
        .iter()
        .all(|x| x.class == ChangeClass::Unchanged && x.effect == Some(0.0)));
    assert!(c
        .counters
        .iter()
        .any(|x| x.counter == r"\Processor(_Total)\% Processor Time"));
    assert!(c.analyses.iter().all(|a| a.verdict == Verdict::Same));
    // Without the tables: nothing shared, the baseline named as the localized side.
    let e = compare(
        &pipeline(&base),
        &pipeline(&cand),
        &Rules::builtin(),
        &CompareOptions::default(),
    )
    .unwrap_err();
    let CompareError::NothingShared {
        baseline,
        candidate,
        localized,
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(*localized, Some(Side::Baseline));
    assert_eq!(baseline.len(), 5);
    assert_eq!(candidate.len(), 5);
    let m = e.message("--names");
    assert!(m.contains(&baseline[0]) && m.contains(&candidate[0]), "{m}");
    assert!(m.contains("give its name tables with --names"), "{m}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A side without records after the end time is an error naming the side.
#[test]
fn an_empty_side_is_named() {
    let Some(log) = tx() else { return };
    let early = LogTime::from_parts(2000, 1, 1, 0, 0, 0, 0).unwrap();
    let e = compare(
        &pipeline(&log),
        &pipeline(&log).end(Some(TimeBound::Local(early))),
        &Rules::builtin(),
        &CompareOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.side(), Some(Side::Candidate), "{e}");
    assert!(e.to_string().starts_with("the candidate ("), "{e}");
    let e = compare(
        &pipeline(&log).begin(Some(TimeBound::Local(
            LogTime::from_parts(2030, 1, 1, 0, 0, 0, 0).unwrap(),
        ))),
        &pipeline(&log),
        &Rules::builtin(),
        &CompareOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.side(), Some(Side::Baseline), "{e}");
    // A missing log names its side too.
    let e = compare(
        &Pipeline::new(["/nonexistent/base.blg"]),
        &pipeline(&log),
        &Rules::builtin(),
        &CompareOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("baseline: "), "{e}");
}

/// A PDH-CSV log of one column, `values` a second apart from 2026-11-28 10:00:00 UTC.
fn one_column_csv(path: &Path, column: &str, values: &[f64]) {
    let mut text = format!("\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"{column}\"\r\n");
    for (i, v) in values.iter().enumerate() {
        text.push_str(&format!(
            "\"11/28/2026 10:{:02}:{:02}.000\",\"{v}\"\r\n",
            i / 60,
            i % 60
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// A counter that a regular-expression data source selects (a named SQL Server instance in
/// SQLServer2014.xml) takes its bad direction from that analysis's thresholds, as the analysis
/// itself selects it.
#[test]
fn a_named_sql_instance_takes_its_direction_from_regex_data_sources() {
    let dir = tempdir("regex-direction");
    let column = r"\\SQL1\MSSQL$PROD:Memory Manager\Memory Grants Pending";
    let (base, cand) = (dir.join("base.csv"), dir.join("cand.csv"));
    one_column_csv(&base, column, &[0.0; 40]);
    one_column_csv(&cand, column, &[5.0; 40]);
    let rules = Rules::builtin_named("SQLServer2014").unwrap();
    let compared = compare(
        &pipeline(&base),
        &pipeline(&cand),
        &rules,
        &CompareOptions::default(),
    )
    .unwrap();
    // Each side's analysis reads the named instance's column (analyze_pipeline keeps the
    // columns regular expressions select).
    for side in [&compared.baseline, &compared.candidate] {
        let a = side.report.analyses.iter();
        let mut a = a.filter(|a| a.name == "SQLServer:Memory Manager Memory Grants Pending");
        assert!(a.next().is_some_and(|a| a.evaluated()));
    }
    // One of SQLServer2014's 217 analyses read: the reason is that the log lacks the others'
    // counters, not its language (no table knows `MSSQL$PROD:Memory Manager`, an application's
    // object).
    let few = compared.candidate.report.few_evaluated().unwrap();
    assert_eq!((few.evaluated, few.reason), (1, FewReason::CountersMissing));
    // One alert per 1-second slice (PAL's automatic interval of 39 s of samples), value 5 > 0.
    assert_eq!(compared.candidate.report.alerts.len(), 40);
    let counters = &compared.comparison.counters;
    assert_eq!(counters.len(), 1);
    let c = &counters[0];
    assert_eq!(
        c.counter,
        r"\MSSQL$PROD:Memory Manager\Memory Grants Pending"
    );
    assert_eq!(c.class, ChangeClass::Worse);
    assert_eq!(c.effect, Some(1.0));
    assert!(c
        .analyses
        .iter()
        .any(|a| a == "SQLServer:Memory Manager Memory Grants Pending"));
    let _ = std::fs::remove_dir_all(&dir);
}
