//! PDH-CSV / PDH-TSV reader on arbitrary bytes: never panics; whatever reads writes back (relog's
//! style) to a log that reads to the same header and records.
//!
//! The checks of the `csv_log` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/csv_log/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use std::io::Cursor;

use perfcounters::log::{
    Cell, CsvFlavor, CsvReadOptions, LogKind, LogReader, LogWriter, PdhCsvLogWriter, PdhCsvReader,
    Record, ValueColumns, ValueRows,
};

fn read_all(
    bytes: Vec<u8>,
    opts: CsvReadOptions,
    parallel: Option<(usize, usize)>,
) -> Result<(perfcounters::log::LogHeader, Vec<Record>), String> {
    let mut r =
        PdhCsvReader::new(Cursor::new(bytes), "fuzz.csv", opts).map_err(|e| e.to_string())?;
    if let Some((workers, chunk_bytes)) = parallel {
        r.set_parallelism(workers, chunk_bytes);
    }
    let mut out = Vec::new();
    let mut rec = Record::default();
    // Bounded: the input is finite and every record consumes at least one line.
    loop {
        match r.read_record(&mut rec) {
            Ok(true) => out.push(rec.clone()),
            Ok(false) => break,
            Err(e) => {
                // Errors name a line (text format).
                assert!(e.line().is_some() || e.location.is_none(), "{e}");
                return Err(e.to_string());
            }
        }
    }
    Ok((r.header().clone(), out))
}

/// Every record read as rows of values (`read_values`, or `read_columns` when `by_column`;
/// batches of about `max_cells` values) on `workers` threads in chunks of `chunk_bytes`, rebuilt
/// as records, and the error that ends them.
fn read_values(
    bytes: Vec<u8>,
    opts: CsvReadOptions,
    workers: usize,
    chunk_bytes: usize,
    max_cells: usize,
    by_column: bool,
) -> Result<(perfcounters::log::LogHeader, Vec<Record>), String> {
    let mut r =
        PdhCsvReader::new(Cursor::new(bytes), "fuzz.csv", opts).map_err(|e| e.to_string())?;
    r.set_parallelism(workers, chunk_bytes);
    let mut out = Vec::new();
    let mut rows = ValueRows::default();
    let mut columns = ValueColumns::default();
    let cell = |v: f64| {
        if v.is_nan() {
            Cell::Blank
        } else {
            Cell::Value(v)
        }
    };
    if by_column {
        loop {
            match r.read_columns(&mut columns, max_cells) {
                Ok(Some(0)) => return Ok((r.header().clone(), out)),
                Ok(Some(n)) => {
                    assert_eq!(n, columns.len());
                    assert_eq!(columns.columns, r.header().counters.len());
                    for (i, &time) in columns.times.iter().enumerate() {
                        let cells = (0..columns.columns)
                            .map(|c| cell(columns.column(c).get(i).copied().unwrap_or(f64::NAN)))
                            .collect();
                        out.push(Record { time, cells });
                    }
                }
                Ok(None) => panic!("the PDH-CSV reader reads columns"),
                Err(e) => return Err(e.to_string()),
            }
        }
    }
    loop {
        match r.read_values(&mut rows, max_cells) {
            Ok(Some(0)) => break,
            Ok(Some(n)) => {
                assert_eq!(n, rows.len());
                assert_eq!(rows.columns, r.header().counters.len());
                for (i, &time) in rows.times.iter().enumerate() {
                    let cells = rows.row(i).iter().map(|&v| cell(v)).collect();
                    out.push(Record { time, cells });
                }
            }
            Ok(None) => panic!("the PDH-CSV reader reads values"),
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok((r.header().clone(), out))
}

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    let opts = CsvReadOptions {
        code_page: match data.first() {
            Some(b) if b % 3 == 0 => Some(1251),
            _ => None,
        },
    };
    // Parsed in chunks of 1 to 64 bytes on two threads: the same header, records and errors
    // (line and column included) as the default reader, which reads a log shorter than its 1 MiB
    // chunk on the calling thread.
    let chunk_bytes = 1 + usize::from(data.get(1).copied().unwrap_or(0) % 64);
    let read = read_all(data.to_vec(), opts, None);
    assert_eq!(
        read_all(data.to_vec(), opts, Some((2, chunk_bytes))),
        read,
        "chunks of {chunk_bytes} bytes"
    );
    // Read as rows of values, in batches of 1 to 64 values: the same records and error.
    let max_cells = 1 + usize::from(data.get(2).copied().unwrap_or(0) % 64);
    assert_eq!(
        read_values(data.to_vec(), opts, 2, chunk_bytes, max_cells, false),
        read,
        "values in chunks of {chunk_bytes} bytes, batches of {max_cells} values"
    );
    // And as columns laid out by the parsing threads.
    assert_eq!(
        read_values(data.to_vec(), opts, 2, chunk_bytes, max_cells, true),
        read,
        "columns in chunks of {chunk_bytes} bytes, batches of {max_cells} values"
    );
    let Ok((header, records)) = read else {
        return;
    };
    let flavor = if header.kind == LogKind::Tsv {
        CsvFlavor::Tsv
    } else {
        CsvFlavor::Csv
    };
    let mut w = PdhCsvLogWriter::new(Vec::new(), flavor, "out");
    w.write_header(&header).unwrap();
    for r in &records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    let (h2, r2) =
        read_all(w.into_inner(), CsvReadOptions::default(), None).expect("written log reads");
    assert_eq!(h2.time_zone, header.time_zone);
    assert_eq!(h2.counters, header.counters);
    assert_eq!(r2.len(), records.len());
    for (a, b) in r2.iter().zip(&records) {
        assert_eq!(a.time.truncated_to_ms(), b.time.truncated_to_ms());
        let v = |c: &Cell| c.value();
        assert_eq!(
            a.cells.iter().map(v).collect::<Vec<_>>(),
            b.cells.iter().map(v).collect::<Vec<_>>()
        );
    }
}
