//! relog's value formatting alone (`%.20g` with three-digit exponents, in integer arithmetic:
//! `log/pdh_csv_digits.rs`), on 100,000 values of each kind:
//!
//! * `format/precise_percent`: six-decimal values like `12.345678` (a `% Processor Time` log);
//! * `format/precise_rates`: counter-like quotients of large integers (rates, averages);
//! * `format/precise_integers`: integers below 10^19 (byte counts), their own path;
//! * `format/precise_tiny_huge`: values below 10^-20 and above 10^19 (the wide paths);
//! * `format/core_fmt_percent`: `core::fmt`'s `{:.19e}` of the first set, the exact formatting
//!   the digits are tested against, for scale;
//! * `format/relog_rows`: the first set as 300-value rows of relog's PDH-CSV (time stamp, quotes,
//!   separators) into a reused buffer.
//!
//! Throughput is in values. Run: `cargo bench -p perfcounters --bench format`.

use std::hint::black_box;
use std::io::Write;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfcounters::log::pdh_csv::format_precise;
use perfcounters::log::{CsvFlavor, PdhCsvWriter};
use perfcounters::snapshot::SystemTime;

const N: usize = 100_000;

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn sets() -> [(&'static str, Vec<f64>); 4] {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let percent = (0..N)
        .map(|_| (r.next() % 100_000_000) as f64 / 1_000_000.0)
        .collect();
    let rates = (0..N)
        .map(|_| (r.next() >> 20) as f64 / ((r.next() % 1_000_000) + 1) as f64)
        .collect();
    let integers = (0..N)
        .map(|_| (r.next() >> (r.next() % 40)) as f64)
        .collect();
    let tiny_huge = (0..N)
        .map(|i| {
            let m = (r.next() >> 11) as f64;
            let k = (r.next() % 280) as i32;
            if i % 2 == 0 {
                m * 10f64.powi(-36 - k)
            } else {
                m * 10f64.powi(10 + k)
            }
        })
        .collect();
    [
        ("precise_percent", percent),
        ("precise_rates", rates),
        ("precise_integers", integers),
        ("precise_tiny_huge", tiny_huge),
    ]
}

fn bench(c: &mut Criterion) {
    let sets = sets();
    let mut g = c.benchmark_group("format");
    g.throughput(Throughput::Elements(N as u64));
    for (name, values) in &sets {
        g.bench_function(*name, |b| {
            b.iter(|| {
                let mut len = 0usize;
                for &v in values {
                    len += format_precise(black_box(v)).len();
                }
                len
            })
        });
    }
    let percent = &sets[0].1;
    g.bench_function("core_fmt_percent", |b| {
        let mut buf = Vec::with_capacity(64);
        b.iter(|| {
            let mut len = 0usize;
            for &v in percent {
                buf.clear();
                let _ = write!(buf, "{:.19e}", black_box(v));
                len += buf.len();
            }
            len
        })
    });
    let time = SystemTime {
        year: 2014,
        month: 2,
        day_of_week: 6,
        day: 1,
        hour: 0,
        minute: 19,
        second: 44,
        milliseconds: 718,
    };
    let rows: Vec<Vec<Option<f64>>> = percent
        .chunks(300)
        .map(|row| row.iter().map(|&v| Some(v)).collect())
        .collect();
    g.bench_function("relog_rows", |b| {
        let mut w = PdhCsvWriter::relog(Vec::with_capacity(8 << 20), CsvFlavor::Csv);
        b.iter(|| {
            for row in &rows {
                w.write_row(&time, row).unwrap();
            }
            let out = std::mem::replace(&mut w, PdhCsvWriter::relog(Vec::new(), CsvFlavor::Csv));
            let mut bytes = out.into_inner();
            let len = bytes.len();
            bytes.clear();
            w = PdhCsvWriter::relog(bytes, CsvFlavor::Csv);
            len
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
