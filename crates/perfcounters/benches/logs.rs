//! Log throughput on a generated PDH-CSV of 2,000 columns and at least 200 MB (249 MB: written once into the
//! system's temporary directory by this bench, never by the tests):
//!
//! * `logs/csv_crate_floor`: the `csv` crate alone reading every record of the file (no values
//!   parsed): the floor for a correct reader;
//! * `logs/read_all`: the PDH-CSV reader parsing every time stamp and every cell;
//! * `logs/csv_to_csv_filtered`: relog `-c "\Process(p1*)\*"` to PDH-CSV (into a sink): about 10 % of
//!   the columns are kept, the others are never parsed;
//! * `logs/stats_300x20000`: every value of a PDH-CSV of 300 columns × 20,000 rows (100 MB, same
//!   cells; `scripts/pandas-compare.py` generates one of that shape for pandas) read and summarized
//!   (minimum, mean, maximum per column: `log_statistics`, what `relog --stats` runs);
//! * `logs/csv_to_csv_300x20000`: that file converted unfiltered to PDH-CSV (into a sink);
//! * `logs/csv_to_sql` (feature `sql`): a tenth of that (25 MB, same shape) into a new SQLite log,
//!   throughput in values;
//! * first, the peak resident memory of reading the small and then the big file is printed, to
//!   show that it does not grow with the file's length.
//!
//! Results, machine and date are in `docs/benchmarks.md`.

use std::fs::File;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfcounters::calc::FormatOptions;
use perfcounters::log::{
    copy, log_statistics, CounterFilter, CsvFlavor, CsvReadOptions, Filtered, LogReader,
    PdhCsvLogWriter, PdhCsvReader, Record, RelogFilter,
};
use perfcounters::CounterPath;

const COLUMNS: usize = 2000;

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

/// Writes a log of `rows` records: `columns` columns of `\\BENCH\Process(pN)\Counter K`, values
/// as relog writes them (20 significant digits, integers, exponents, blanks).
fn generate_wide(path: &Path, rows: usize, columns: usize) {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
    write!(w, "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\"").unwrap();
    for c in 0..columns {
        write!(
            w,
            ",\"\\\\BENCH\\Process(p{})\\Counter {}\"",
            c / 20,
            c % 20
        )
        .unwrap();
    }
    w.write_all(b"\r\n").unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for r in 0..rows {
        let (m, s) = (r / 60 % 60, r % 60);
        write!(
            w,
            "\"02/01/2014 {:02}:{:02}:{:02}.718\"",
            r / 3600 % 24,
            m,
            s
        )
        .unwrap();
        for c in 0..columns {
            let x = rng.next();
            match (c % 20, x % 16) {
                (_, 0) => w.write_all(b",\" \"").unwrap(),
                (0..=9, _) => write!(w, ",\"{}\"", x >> 40).unwrap(),
                (10..=17, _) => write!(
                    w,
                    ",\"{}\"",
                    perfcounters::log::pdh_csv::format_precise((x >> 11) as f64 / 9.1e12)
                )
                .unwrap(),
                _ => write!(
                    w,
                    ",\"{}\"",
                    perfcounters::log::pdh_csv::format_precise((x >> 11) as f64 * 1e-21)
                )
                .unwrap(),
            }
        }
        w.write_all(b"\r\n").unwrap();
    }
    w.flush().unwrap();
}

/// The generated file of about `mb` megabytes, made once.
pub fn log_file(mb: usize) -> PathBuf {
    // rows = mb · 10^6 / 27,000; a generated row is about 33.6 KB, so 200 gives 249 MB and 20 gives 25 MB.
    wide_file(mb * 1_000_000 / 27_000, COLUMNS)
}

/// The generated file of `rows` rows and `columns` columns, made once.
pub fn wide_file(rows: usize, columns: usize) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("perfcounters-bench-{columns}cols-{rows}rows.csv"));
    if !path.is_file() {
        let tmp = path.with_extension("partial");
        generate_wide(&tmp, rows, columns);
        std::fs::rename(&tmp, &path).unwrap();
    }
    path
}

/// Every record of the log at `path`: the number of cells read.
pub fn read_all(path: &Path) -> u64 {
    let mut r = PdhCsvReader::open(path, CsvReadOptions::default()).unwrap();
    let mut rec = Record::default();
    let mut n = 0;
    while r.read_record(&mut rec).unwrap() {
        n += rec.cells.len() as u64;
    }
    n
}

fn filter() -> RelogFilter {
    RelogFilter {
        counters: Some(CounterFilter::new(vec![CounterPath::parse(
            r"\Process(p1*)\*",
        )
        .unwrap()])),
        ..RelogFilter::default()
    }
}

/// `relog -c "\\Process(p1*)\\*"` of the log at `path` into a sink: the records written.
pub fn csv_to_csv_filtered(path: &Path) -> u64 {
    let r = PdhCsvReader::open(path, CsvReadOptions::default()).unwrap();
    let mut f = Filtered::new(r, &filter()).unwrap();
    let mut w = PdhCsvLogWriter::new(std::io::sink(), CsvFlavor::Csv, "sink");
    copy(&mut f, &mut w).unwrap()
}

/// The log at `path` converted unfiltered to PDH-CSV into a sink: the records written.
pub fn csv_to_csv(path: &Path) -> u64 {
    let mut r = PdhCsvReader::open(path, CsvReadOptions::default()).unwrap();
    let mut w = PdhCsvLogWriter::new(std::io::sink(), CsvFlavor::Csv, "sink");
    copy(&mut r, &mut w).unwrap()
}

/// Minimum, mean and maximum of every column of the log at `path` (`relog --stats`).
pub fn stats(path: &Path) -> usize {
    let mut r = PdhCsvReader::open(path, CsvReadOptions::default()).unwrap();
    log_statistics(&mut r, &FormatOptions::default())
        .unwrap()
        .len()
}

/// The wide Arrow form of the log at `path`, every batch built: the rows.
#[cfg(feature = "arrow")]
pub fn wide_table(path: &Path) -> usize {
    let r = PdhCsvReader::open(path, CsvReadOptions::default()).unwrap();
    perfcounters::log::columnar::WideBatches::new(r)
        .map(|b| b.unwrap().num_rows())
        .sum()
}

/// The wide Arrow form of the log at `path` from rows of values (the reader's `read_columns`
/// hidden: the rows transposed on the calling thread), for comparison: the rows.
#[cfg(feature = "arrow")]
pub fn wide_table_by_rows(path: &Path) -> usize {
    use perfcounters::log::{LogError, LogHeader, LogReader, ValueRows};
    struct Rows(PdhCsvReader);
    impl LogReader for Rows {
        fn header(&self) -> &LogHeader {
            self.0.header()
        }
        fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
            self.0.read_record(record)
        }
        fn read_values(
            &mut self,
            rows: &mut ValueRows,
            max_cells: usize,
        ) -> Result<Option<usize>, LogError> {
            self.0.read_values(rows, max_cells)
        }
    }
    let r = PdhCsvReader::open(path, CsvReadOptions::default()).unwrap();
    perfcounters::log::columnar::WideBatches::new(Rows(r))
        .map(|b| b.unwrap().num_rows())
        .sum()
}

fn logs(c: &mut Criterion) {
    let big = log_file(200);
    let bytes = std::fs::metadata(&big).unwrap().len();
    // Peak memory, before anything else ran: reading the small file, then the big one.
    let small = log_file(20);
    let hwm = || {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".into())
    };
    black_box(read_all(&small));
    let after_small = hwm();
    black_box(read_all(&big));
    println!(
        "peak resident memory: {after_small} after reading {} MB, {} after reading {} MB",
        std::fs::metadata(&small).unwrap().len() / 1_000_000,
        hwm(),
        bytes / 1_000_000
    );
    let mut g = c.benchmark_group("logs");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("csv_crate_floor", |b| {
        b.iter(|| {
            let mut r = csv::ReaderBuilder::new()
                .has_headers(false)
                .buffer_capacity(256 * 1024)
                .from_path(&big)
                .unwrap();
            let mut rec = csv::ByteRecord::new();
            let mut n = 0usize;
            while r.read_byte_record(&mut rec).unwrap() {
                n += rec.len();
            }
            black_box(n)
        })
    });
    g.bench_function("read_all", |b| b.iter(|| black_box(read_all(&big))));
    g.bench_function("csv_to_csv_filtered", |b| {
        b.iter(|| black_box(csv_to_csv_filtered(&big)))
    });
    g.finish();

    let wide = wide_file(20_000, 300);
    let mut g = c.benchmark_group("logs");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(std::fs::metadata(&wide).unwrap().len()));
    g.bench_function("stats_300x20000", |b| b.iter(|| black_box(stats(&wide))));
    g.bench_function("csv_to_csv_300x20000", |b| {
        b.iter(|| black_box(csv_to_csv(&wide)))
    });
    // The wide Arrow table of `read_log(csv)` (time, one float64 column per counter).
    #[cfg(feature = "arrow")]
    g.bench_function("wide_table_300x20000", |b| {
        b.iter(|| black_box(wide_table(&wide)))
    });
    g.finish();

    #[cfg(feature = "sql")]
    {
        use perfcounters::log::sql::{SqlLogWriter, SqlWriteOptions};
        let small = log_file(20);
        let mut cells = 0u64;
        let mut r = PdhCsvReader::open(&small, CsvReadOptions::default()).unwrap();
        let mut rec = Record::default();
        while r.read_record(&mut rec).unwrap() {
            cells += rec.cells.len() as u64;
        }
        let mut g = c.benchmark_group("logs");
        g.sample_size(10);
        g.throughput(Throughput::Elements(cells));
        let dir =
            std::env::temp_dir().join(format!("perfcounters-bench-sql-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut n = 0;
        g.bench_function("csv_to_sql", |b| {
            b.iter(|| {
                n += 1;
                let db = dir.join(format!("{n}.db"));
                let mut r = PdhCsvReader::open(&small, CsvReadOptions::default()).unwrap();
                let mut w = SqlLogWriter::create(&db, "bench", SqlWriteOptions::default()).unwrap();
                let records = copy(&mut r, &mut w).unwrap();
                drop(w);
                std::fs::remove_file(&db).unwrap();
                black_box(records)
            })
        });
        g.finish();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

criterion_group!(benches, logs);
criterion_main!(benches);
