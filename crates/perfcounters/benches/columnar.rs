//! Columnar output (feature `arrow`): the generated binary log of the `blg` benchmark (500 MB by
//! default, see `support/blg_log.rs`) relogged to Parquet and, side by side, to relog's CSV, both
//! into a sink that counts the bytes. The sizes of both outputs are printed before the timings.
//!
//! * `columnar/relog_parquet`: `.blg` → Parquet as `relog x.blg -o x.parquet` does it (the column
//!   scan, the calculator on every raw sample, the long form, Zstandard and LZ4 row groups);
//! * `columnar/relog_csv`: `.blg` → PDH-CSV, the same path to relog's CSV.
//!
//! Throughput is in bytes of log. Run: `cargo bench -p perfcounters --features arrow --bench columnar`.
//!
//! `PERFCOUNTERS_COLUMNAR_SIZES=parquet` (or `csv`) makes only that output's size before the
//! timings, so that with the filter `size-only` (which skips the timings) a run under
//! `valgrind --tool=callgrind` counts the work of one writer, its threads included.

use std::hint::black_box;
use std::io::{self, BufWriter, Write};

#[path = "support/blg_log.rs"]
mod blg_log;

use blg_log::log_path;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfcounters::log::columnar::ParquetLogWriter;
use perfcounters::log::{
    copy, BlgLogReader, CsvFlavor, Filtered, LogWriter, PdhCsvLogWriter, RelogFilter,
};

/// A sink that counts what is written into it.
#[derive(Default)]
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn relog(path: &std::path::Path, w: &mut dyn LogWriter) -> u64 {
    let reader = BlgLogReader::open(path).unwrap();
    let mut filtered = Filtered::new(reader, &RelogFilter::default()).unwrap();
    copy(&mut filtered, w).unwrap()
}

fn parquet_size(path: &std::path::Path) -> u64 {
    let mut w = ParquetLogWriter::new("sink", Count::default());
    relog(path, &mut w);
    w.into_finished().unwrap().0
}

fn csv_size(path: &std::path::Path) -> u64 {
    let mut w = PdhCsvLogWriter::new(BufWriter::new(Count::default()), CsvFlavor::Csv, "sink");
    relog(path, &mut w);
    w.into_inner()
        .into_inner()
        .map_err(|e| e.into_error())
        .unwrap()
        .0
}

fn bench(c: &mut Criterion) {
    let (path, len) = log_path();
    match std::env::var("PERFCOUNTERS_COLUMNAR_SIZES").as_deref() {
        Ok("parquet") => println!("columnar: Parquet {} bytes", parquet_size(&path)),
        Ok("csv") => println!("columnar: CSV {} bytes", csv_size(&path)),
        _ => {
            let (parquet, csv) = (parquet_size(&path), csv_size(&path));
            println!(
                "columnar: {len} bytes of .blg: Parquet {parquet} bytes, CSV {csv} bytes \
                 (Parquet/CSV = {:.3})",
                parquet as f64 / csv as f64
            );
        }
    }
    let mut g = c.benchmark_group("columnar");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(len));
    g.bench_function("relog_parquet", |b| {
        b.iter(|| black_box(parquet_size(&path)))
    });
    g.bench_function("relog_csv", |b| b.iter(|| black_box(csv_size(&path))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
