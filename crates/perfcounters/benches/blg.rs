//! Binary logs end to end: a generated log of 200 counters — 100 single counters and 100 wildcard
//! counters of 4 instances each (rates, timers, fractions, raw counts), 500 columns — sampled until
//! the file reaches the target size (500 MB by default).
//!
//! * `blg/read_samples`: the records, samples and raw values (`BlgLog`), one pass;
//! * `blg/relog_csv`: `.blg` → PDH-CSV as `relog x.blg -f csv` does it: the column scan, the second
//!   pass, the calculator on every raw sample, and relog's CSV formatting, into a sink.
//!
//! Throughput is in bytes of log. The log is written once to
//! `target/blg-bench/counters-<size>.blg` and reused.
//!
//! Run: `cargo bench -p perfcounters --bench blg`. `PERFCOUNTERS_BLG_BENCH_MB` sets another size.

use std::hint::black_box;
use std::io::BufWriter;

#[path = "support/blg_log.rs"]
mod blg_log;

use blg_log::log_path;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfcounters::format::blg::BlgLog;
use perfcounters::log::{copy, BlgLogReader, CsvFlavor, Filtered, PdhCsvLogWriter, RelogFilter};

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
    g.bench_function("relog_csv", |b| {
        b.iter(|| {
            let reader = BlgLogReader::open(&path).unwrap();
            let mut filtered = Filtered::new(reader, &RelogFilter::default()).unwrap();
            let mut w = PdhCsvLogWriter::new(
                BufWriter::with_capacity(1 << 16, std::io::sink()),
                CsvFlavor::Csv,
                "sink",
            );
            black_box(copy(&mut filtered, &mut w).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
