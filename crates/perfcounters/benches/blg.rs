//! Binary logs end to end: a generated log of 200 counters — 100 single counters and 100 wildcard
//! counters of 4 instances each (rates, timers, fractions, raw counts), 500 columns — sampled until
//! the file reaches the target size (500 MB by default).
//!
//! * `blg/read_samples`: the records, samples and raw values (`BlgLog`), one pass;
//! * `blg/read_records`: the log model's records (`BlgLogReader`: both passes, the cells), the
//!   second pass decoded on a thread of its own; `blg/read_records_one_thread` on the calling
//!   thread alone;
//! * `blg/relog_csv`: `.blg` → PDH-CSV as `relog x.blg -f csv` does it: the column scan, the second
//!   pass, the calculator on every raw sample, and relog's CSV formatting, into a sink (`copy`: the
//!   rows formatted on the other cores while this thread reads);
//! * `blg/relog_csv_one_thread`: the same on one thread (`CopyOptions::single_threaded`,
//!   `BlgLogReader::open_threads(path, 1)`);
//! * `blg/analyze`: `perfcounters analyze` over the same log with rules that read every column (one
//!   analysis per object, `\Object k(*)\*`, a value threshold and a trend threshold each): the
//!   same reading and calculation, then slices, alerts, statistics and chart data.
//!
//! Throughput is in bytes of log. The log is written once to
//! `target/blg-bench/counters-<size>.blg` and reused (written again before every run: see
//! `support/blg_log.rs`).
//!
//! Run: `cargo bench -p perfcounters --bench blg`. `PERFCOUNTERS_BLG_BENCH_MB` sets another size.

use std::hint::black_box;
use std::io::BufWriter;

#[path = "support/analyze_rules.rs"]
mod analyze_rules;
#[path = "support/blg_log.rs"]
mod blg_log;

use analyze_rules::bench_rules;
use blg_log::log_path;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfcounters::analyze::{analyze_logs, auto_interval, AnalyzeOptions, Interval, Pass};
use perfcounters::format::blg::BlgLog;
use perfcounters::log::{
    copy_with, BlgLogReader, BlgTimesReader, CopyOptions, CounterFilter, CsvFlavor, Filtered,
    LogError, LogReader, PdhCsvLogWriter, Record, RelogFilter,
};

fn bench(c: &mut Criterion) {
    let (path, len) = log_path();
    let mut g = c.benchmark_group("blg");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(len));
    g.bench_function("read_samples", |b| {
        b.iter(|| {
            let file = std::fs::File::open(&path).unwrap();
            let mut log = BlgLog::new(std::io::BufReader::with_capacity(1 << 16, file)).unwrap();
            let mut values = 0usize;
            while let Some(s) = log.next_sample() {
                values += s.unwrap().values.len();
            }
            black_box(values)
        })
    });
    for (name, threads) in [("read_records", 0), ("read_records_one_thread", 1)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut reader = match threads {
                    0 => BlgLogReader::open(&path).unwrap(),
                    n => BlgLogReader::open_threads(&path, n).unwrap(),
                };
                let mut record = Record::default();
                let mut cells = 0usize;
                while reader.read_record(&mut record).unwrap() {
                    cells += record.cells.len();
                }
                black_box(cells)
            })
        });
    }
    for (name, options, threads) in [
        ("relog_csv", CopyOptions::default(), 0),
        ("relog_csv_one_thread", CopyOptions::single_threaded(), 1),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let reader = match threads {
                    0 => BlgLogReader::open(&path).unwrap(),
                    n => BlgLogReader::open_threads(&path, n).unwrap(),
                };
                let mut filtered = Filtered::new(reader, &RelogFilter::default()).unwrap();
                let mut w = PdhCsvLogWriter::new(
                    BufWriter::with_capacity(1 << 16, std::io::sink()),
                    CsvFlavor::Csv,
                    "sink",
                );
                black_box(copy_with(&mut filtered, &mut w, &options).unwrap())
            })
        });
    }
    let rules = bench_rules();
    g.bench_function("analyze", |b| {
        b.iter(|| {
            // `--interval auto`: the log is read twice, its times first (as the command opens it).
            let open = |pass: Pass| -> Result<Vec<Box<dyn LogReader>>, LogError> {
                Ok(match pass {
                    Pass::Times => vec![Box::new(BlgTimesReader::open(&path)?)],
                    _ => vec![Box::new(BlgLogReader::open(&path)?)],
                })
            };
            let report = analyze_logs(open, &rules, &AnalyzeOptions::default()).unwrap();
            // Every column of the log is read, computed and analysed.
            // (100 single counters and 100 wildcard counters of 4 instances: 500 columns.)
            assert_eq!(report.counters.len(), 500);
            black_box(report.alerts.len())
        })
    });
    // The same analysis with the interval given (the one `auto` finds for this log): one pass, as
    // `auto` cost before it read the times first.
    let times = RelogFilter {
        counters: Some(CounterFilter::new(Vec::new())),
        ..RelogFilter::default()
    };
    let first_pass = || {
        let reader = BlgTimesReader::open(&path).unwrap();
        let mut filtered = Filtered::new(reader, &times).unwrap();
        auto_interval(&mut filtered).unwrap()
    };
    let seconds = first_pass().unwrap();
    g.bench_function("analyze_interval_given", |b| {
        b.iter(|| {
            let open = |_: Pass| -> Result<Vec<Box<dyn LogReader>>, LogError> {
                Ok(vec![Box::new(BlgLogReader::open(&path)?)])
            };
            let opts = AnalyzeOptions {
                interval: Interval::Seconds(seconds),
                ..AnalyzeOptions::default()
            };
            let report = analyze_logs(open, &rules, &opts).unwrap();
            assert_eq!(report.counters.len(), 500);
            black_box(report.alerts.len())
        })
    });
    // The first pass of `--interval auto` alone: the records' times (a `.blg` read for its times
    // alone).
    g.bench_function("analyze_first_pass", |b| b.iter(|| black_box(first_pass())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
