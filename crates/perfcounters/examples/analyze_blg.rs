//! One run of what the `blg` benchmark's relog and analysis cases measure, outside criterion, for
//! `/usr/bin/time` (wall clock, CPU time, peak memory) and profilers: the generated log of
//! `benches/support/blg_log.rs` (`PERFCOUNTERS_BLG_BENCH_MB`, 500 by default) relogged to CSV
//! into a sink, or analysed with the benchmark's rules. Prints the seconds the run took.
//!
//! ```sh
//! cargo build --profile bench -p perfcounters --example analyze_blg
//! PERFCOUNTERS_BLG_BENCH_MB=500 /usr/bin/time -v target/release/examples/analyze_blg relog_csv
//! PERFCOUNTERS_BLG_BENCH_MB=500 /usr/bin/time -v target/release/examples/analyze_blg analyze
//! ```
//!
//! Cases: `relog_csv`, `analyze` (`--interval auto`: the times first, then the analysis),
//! `analyze_first_pass` (the times alone); `analyze_both` (a second log of the same size, a copy
//! beside the first, and the first analysed one after the other through the pipeline, as
//! `perfcounters analyze` does) and `compare` (the copy as the baseline of the first: what
//! `perfcounters analyze LOG --baseline COPY` does); `fleet_singles` (12 logs of 12 machines,
//! `PERFCOUNTERS_FLEET_MB` each, 16 by default, analysed one after the other, as 12 runs of
//! `perfcounters analyze LOG` do) and `fleet` (the same 12 logs in one fleet analysis, as
//! `perfcounters analyze LOG...` does).

#[path = "../benches/support/analyze_rules.rs"]
mod analyze_rules;
#[path = "../benches/support/blg_log.rs"]
mod blg_log;

use std::io::BufWriter;
use std::time::Instant;

use perfcounters::analyze::{
    analyze_fleet, analyze_logs, analyze_pipeline, auto_interval, compare, fleet_groups,
    AnalyzeOptions, CompareOptions, FleetOptions, Interval, Pass,
};
use perfcounters::log::{
    copy, BlgLogReader, BlgTimesReader, CounterFilter, CsvFlavor, Filtered, LogError, LogReader,
    PdhCsvLogWriter, Pipeline, RelogFilter,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let case = std::env::args().nth(1).unwrap_or_else(|| "analyze".into());
    if case.starts_with("fleet") {
        return fleet(&case);
    }
    let (path, len) = blg_log::log_path();
    let start = Instant::now();
    let what = match case.as_str() {
        "relog_csv" => {
            let mut filtered = Filtered::new(BlgLogReader::open(&path)?, &RelogFilter::default())?;
            let sink = BufWriter::with_capacity(1 << 16, std::io::sink());
            let mut w = PdhCsvLogWriter::new(sink, CsvFlavor::Csv, "sink");
            format!("{} records", copy(&mut filtered, &mut w)?)
        }
        "analyze" => {
            let open = |pass: Pass| -> Result<Vec<Box<dyn LogReader>>, LogError> {
                Ok(match pass {
                    Pass::Times => vec![Box::new(BlgTimesReader::open(&path)?)],
                    _ => vec![Box::new(BlgLogReader::open(&path)?)],
                })
            };
            let rules = analyze_rules::bench_rules();
            let report = analyze_logs(open, &rules, &AnalyzeOptions::default())?;
            format!(
                "{} records, {} counters, {} alerts",
                report.records,
                report.counters.len(),
                report.alerts.len()
            )
        }
        "analyze_first_pass" => {
            let times = RelogFilter {
                counters: Some(CounterFilter::new(Vec::new())),
                ..RelogFilter::default()
            };
            let mut filtered = Filtered::new(BlgTimesReader::open(&path)?, &times)?;
            format!("interval {:?} s", auto_interval(&mut filtered)?)
        }
        "analyze_both" | "compare" => {
            let second = path.with_extension("copy.blg");
            if std::fs::metadata(&second).map(|m| m.len()).ok() != Some(len) {
                std::fs::copy(&path, &second)?;
            }
            let (first, second) = (
                Pipeline::new([path.to_str().unwrap_or_default()]),
                Pipeline::new([second.to_str().unwrap_or_default()]),
            );
            let rules = analyze_rules::bench_rules();
            if case == "compare" {
                let c = compare(&second, &first, &rules, &CompareOptions::default())?;
                let changed = c
                    .comparison
                    .counters
                    .iter()
                    .filter(|x| x.class.is_change())
                    .count();
                format!(
                    "{} counters, {changed} changed, {} alerts",
                    c.comparison.counters.len(),
                    c.candidate.report.alerts.len()
                )
            } else {
                let a = analyze_pipeline(&second, &rules, Interval::Auto, &[])?;
                let b = analyze_pipeline(&first, &rules, Interval::Auto, &[])?;
                format!(
                    "{} + {} records, {} alerts",
                    a.report.records,
                    b.report.records,
                    b.report.alerts.len()
                )
            }
        }
        other => return Err(format!("unknown case {other}").into()),
    };
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{case}: {what}; {seconds:.3} s, {:.0} MB/s of log",
        len as f64 / 1e6 / seconds
    );
    Ok(())
}

/// The cases `fleet_singles` and `fleet`: 12 logs of 12 machines.
fn fleet(case: &str) -> Result<(), Box<dyn std::error::Error>> {
    let mb: u64 = std::env::var("PERFCOUNTERS_FLEET_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let paths: Vec<String> = blg_log::fleet_paths(12, mb)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let rules = analyze_rules::bench_rules();
    let start = Instant::now();
    let alerts: usize = if case == "fleet" {
        let pipeline = Pipeline::new(paths.iter().cloned());
        let groups = fleet_groups(&pipeline)?;
        let machines = analyze_fleet(&pipeline, groups, &rules, &FleetOptions::default())?;
        let mut n = 0;
        for m in machines {
            n += m.result?.report.alerts.len();
        }
        n
    } else {
        let mut n = 0;
        for p in &paths {
            let a = analyze_pipeline(&Pipeline::new([p.as_str()]), &rules, Interval::Auto, &[])?;
            n += a.report.alerts.len();
        }
        n
    };
    println!(
        "{case}: 12 logs of {mb} MB, {alerts} alerts; {:.3} s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
