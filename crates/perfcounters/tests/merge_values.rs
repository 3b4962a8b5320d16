//! `Merge` reads rows of values (`LogReader::read_values`) as it merges records: the same times,
//! columns, values (blanks as NaN) and errors, on generated PDH-CSV logs.

use crate::support::shared_data;
use crate::support::vec_log;

use std::io::Cursor;
use std::path::Path;

use perfcounters::log::{
    Cell, CsvReadOptions, LogHeader, LogKind, LogReader, Merge, PdhCsvReader, Record, ValueRows,
};
use proptest::prelude::*;
use vec_log::VecLog;

/// A generated log: a zone cell (none, UTC, or UTC+1), columns from a small pool of paths (some
/// shared with the other logs, one in another letter case, possibly repeated), rows whose times
/// never go back, values or blanks, and maybe a bad cell that ends the reading with an error.
#[derive(Clone, Debug)]
struct Log {
    zone: u8,
    columns: Vec<usize>,
    rows: Vec<(u32, Vec<Option<u8>>)>,
    bad: Option<(usize, usize)>,
}

const PATHS: [&str; 6] = [
    r"\\H\Obj\c0",
    r"\\H\Obj\c1",
    r"\\h\obj\C1",
    r"\\H\Obj(a/b#1)\c2",
    r"\\H\Obj\c3",
    r"\\G\Obj\c0",
];

impl Log {
    fn text(&self) -> String {
        let mut s = String::from(match self.zone {
            0 => "\"(PDH-CSV 4.0)\"",
            1 => "\"(PDH-CSV 4.0) (UTC)(0)\"",
            _ => "\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\"",
        });
        for &c in &self.columns {
            s.push_str(&format!(",\"{}\"", PATHS[c % PATHS.len()]));
        }
        s.push_str("\r\n");
        // A UTC+1 log's local times are an hour ahead of the same instants.
        let hour = if self.zone == 2 { 1 } else { 0 };
        for (r, (second, cells)) in self.rows.iter().enumerate() {
            s.push_str(&format!("\"01/01/2024 {hour:02}:00:{second:02}.000\""));
            for (c, _) in self.columns.iter().enumerate() {
                let cell = match (self.bad, cells.get(c).copied().flatten()) {
                    (Some(b), _) if b == (r, c) => "x".to_owned(),
                    (_, Some(v)) => v.to_string(),
                    (_, None) => " ".to_owned(),
                };
                s.push_str(&format!(",\"{cell}\""));
            }
            s.push_str("\r\n");
        }
        s
    }

    fn reader(&self) -> Box<dyn LogReader> {
        Box::new(
            PdhCsvReader::new(
                Cursor::new(self.text().into_bytes()),
                "in.csv",
                CsvReadOptions::default(),
            )
            .unwrap(),
        )
    }
}

fn arb_log() -> impl Strategy<Value = Log> {
    (0u8..3, proptest::collection::vec(0usize..6, 1..4)).prop_flat_map(|(zone, columns)| {
        let n = columns.len();
        let row = (
            0u32..6,
            proptest::collection::vec(proptest::option::of(0u8..50), n),
        );
        (
            proptest::collection::vec(row, 0..8),
            proptest::option::of((0usize..8, 0usize..n)),
        )
            .prop_map(move |(mut rows, bad)| {
                // Times that never go back, repeated now and then.
                let mut t = 0;
                for (second, _) in &mut rows {
                    t += *second % 3;
                    *second = t;
                }
                let bad = bad.filter(|&(r, _)| r < rows.len());
                Log {
                    zone,
                    columns: columns.clone(),
                    rows,
                    bad,
                }
            })
    })
}

/// One row as compared: its time and the chosen columns' values (bits; `None` for no value).
type Row = Result<(i64, Vec<Option<u64>>), String>;

fn merge(logs: &[Log], keep: Option<u64>) -> (Merge, Vec<usize>) {
    let mut m = Merge::new(logs.iter().map(Log::reader).collect()).unwrap();
    let n = m.header().counters.len();
    let chosen: Vec<usize> = match keep {
        Some(k) => {
            let mask: Vec<bool> = (0..n).map(|i| k >> i & 1 == 1).collect();
            m.select_columns(&mask);
            (0..n).filter(|&i| mask[i]).collect()
        }
        None => (0..n).collect(),
    };
    (m, chosen)
}

fn record_row(rec: &Record, chosen: &[usize]) -> Row {
    Ok((
        rec.time.0,
        chosen
            .iter()
            .map(|&c| rec.cells[c].value().map(f64::to_bits))
            .collect(),
    ))
}

/// Reads the next record into `out` (or the error that ends the reading): false at the end.
fn next_record(m: &mut Merge, rec: &mut Record, chosen: &[usize], out: &mut Vec<Row>) -> bool {
    match m.read_record(rec) {
        Ok(true) => {
            out.push(record_row(rec, chosen));
            true
        }
        Ok(false) => false,
        Err(e) => {
            out.push(Err(e.to_string()));
            false
        }
    }
}

/// Every record of the merge (the chosen columns), and the error that ends it.
fn by_records(logs: &[Log], keep: Option<u64>) -> Vec<Row> {
    let (mut m, chosen) = merge(logs, keep);
    let mut out = Vec::new();
    let mut rec = Record::default();
    while next_record(&mut m, &mut rec, &chosen, &mut out) {}
    out
}

/// The same through `read_values` in batches of about `max_cells` values, every third call a
/// `read_record` when `mixed`.
fn by_values(logs: &[Log], keep: Option<u64>, max_cells: usize, mixed: bool) -> Vec<Row> {
    let (mut m, chosen) = merge(logs, keep);
    let mut out = Vec::new();
    let mut rows = ValueRows::default();
    let mut rec = Record::default();
    for call in 0.. {
        if mixed && call % 3 == 2 {
            if !next_record(&mut m, &mut rec, &chosen, &mut out) {
                break;
            }
            continue;
        }
        match m.read_values(&mut rows, max_cells) {
            Ok(Some(0)) => break,
            Ok(Some(n)) => {
                assert_eq!(n, rows.len());
                assert_eq!(rows.columns, chosen.len());
                assert!(n == 1 || n * rows.columns <= max_cells.max(1));
                for (i, &time) in rows.times.iter().enumerate() {
                    let values = rows.row(i).iter();
                    out.push(Ok((
                        time.0,
                        values.map(|v| (!v.is_nan()).then(|| v.to_bits())).collect(),
                    )));
                }
            }
            Ok(None) => panic!("PDH-CSV logs read values"),
            Err(e) => {
                out.push(Err(e.to_string()));
                break;
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The rows of values of a merge (one log or several, some columns chosen or all, read in
    /// batches of any size, mixed with records) are the rows of its records, up to the same error.
    #[test]
    fn merged_values_are_the_merged_records(
        logs in proptest::collection::vec(arb_log(), 1..4),
        keep in proptest::option::of(any::<u64>()),
        max_cells in 0usize..24,
        mixed in any::<bool>(),
    ) {
        let records = by_records(&logs, keep);
        prop_assert_eq!(by_values(&logs, keep, max_cells, mixed), records);
    }
}

fn log(zone: u8, columns: &[usize], rows: &[(u32, &[Option<u8>])]) -> Log {
    Log {
        zone,
        columns: columns.to_vec(),
        rows: rows.iter().map(|(t, c)| (*t, c.to_vec())).collect(),
        bad: None,
    }
}

#[test]
fn equal_times_one_row_first_log_wins_blanks_filled() {
    // b is in UTC+1: its 01:00:01 is a's 00:00:01. Column c1 is in both logs (b writes it in
    // another case); c3 only in b, c0 only in a.
    let a = log(
        1,
        &[0, 1],
        &[
            (0, &[Some(1), Some(2)]),
            (1, &[Some(3), None]),
            (2, &[None, Some(4)]),
        ],
    );
    let b = log(
        2,
        &[2, 4],
        &[
            (1, &[Some(10), Some(11)]),
            (2, &[Some(12), None]),
            (3, &[Some(13), Some(14)]),
        ],
    );
    let logs = [a, b];
    let (mut m, _) = merge(&logs, None);
    assert_eq!(
        m.header()
            .counters
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        [r"\\H\Obj\c0", r"\\H\Obj\c1", r"\\H\Obj\c3"]
    );
    let mut rows = ValueRows::default();
    assert_eq!(m.read_values(&mut rows, 1000).unwrap(), Some(4));
    let nan = f64::NAN;
    let want = [
        [1.0, 2.0, nan],
        [3.0, 10.0, 11.0],
        [nan, 4.0, nan],
        [nan, 13.0, 14.0],
    ];
    for (i, w) in want.iter().enumerate() {
        let got: Vec<u64> = rows.row(i).iter().map(|v| v.to_bits()).collect();
        let w: Vec<u64> = w.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, w, "row {i}");
    }
    let t0 = perfcounters::log::LogTime::from_parts(2024, 1, 1, 0, 0, 0, 0).unwrap();
    assert_eq!(
        rows.times
            .iter()
            .map(|t| (t.0 - t0.0) / 10_000_000)
            .collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert_eq!(m.read_values(&mut rows, 1000).unwrap(), Some(0));
    assert_eq!(by_values(&logs, None, 1000, false), by_records(&logs, None));
}

#[test]
fn a_log_without_values_makes_the_merge_read_records() {
    // The second input is a log of records only (as a log of raw samples is): the merge answers
    // None, and read_record still gives every record, those of the first log read meanwhile too.
    let a = log(1, &[0], &[(0, &[Some(1)]), (2, &[Some(3)])]);
    let first = a.reader();
    let header = LogHeader {
        source: "records".into(),
        kind: LogKind::Binary,
        time_zone: None,
        counters: first.header().counters.clone(),
    };
    let records_only = |seconds: &[u32]| -> Box<dyn LogReader> {
        let t0 = perfcounters::log::LogTime::from_parts(2024, 1, 1, 0, 0, 0, 0).unwrap();
        Box::new(VecLog::new(
            header.clone(),
            seconds
                .iter()
                .map(|&s| Record {
                    time: perfcounters::log::LogTime(t0.0 + i64::from(s) * 10_000_000),
                    cells: vec![Cell::Value(f64::from(s) * 10.0)],
                })
                .collect(),
        ))
    };
    let mut m = Merge::new(vec![first, records_only(&[1, 2])]).unwrap();
    let mut rows = ValueRows::default();
    assert_eq!(m.read_values(&mut rows, 1000).unwrap(), None);
    assert_eq!(m.read_values(&mut rows, 1000).unwrap(), None);
    let mut rec = Record::default();
    let mut got = Vec::new();
    while m.read_record(&mut rec).unwrap() {
        got.push(rec.cells[0].value());
    }
    // At 2 s both logs fill the column: the first log's value.
    assert_eq!(got, [Some(1.0), Some(10.0), Some(3.0)]);
}

/// The rows of a merge of readers through `read_values` (batches of `max_cells`) and through
/// `read_record`, the values as bits.
fn both_ways(open: &dyn Fn() -> Merge, max_cells: usize) -> (Vec<Row>, Vec<Row>) {
    let mut m = open();
    let all: Vec<usize> = (0..m.header().counters.len()).collect();
    let mut records = Vec::new();
    let mut rec = Record::default();
    while m.read_record(&mut rec).unwrap() {
        records.push(record_row(&rec, &all));
    }
    let mut m = open();
    let mut values = Vec::new();
    let mut rows = ValueRows::default();
    while m.read_values(&mut rows, max_cells).unwrap().unwrap() > 0 {
        for (i, t) in rows.times.iter().enumerate() {
            values.push(Ok((
                t.0,
                rows.row(i)
                    .iter()
                    .map(|v| (!v.is_nan()).then(|| v.to_bits()))
                    .collect(),
            )));
        }
    }
    (values, records)
}

fn real(dir: &Path, name: &str) -> Box<dyn LogReader> {
    Box::new(
        PdhCsvReader::new(
            std::fs::File::open(dir.join("logs").join(name)).unwrap(),
            name,
            CsvReadOptions::default(),
        )
        .unwrap(),
    )
}

#[test]
fn real_logs_merged_as_values() {
    let Some(dir) = shared_data::dir("the real Windows logs") else {
        return;
    };
    const PST: &str = "en-pst-BM_Active_Load_Test.csv";
    const EDT: &str = "en-edt-process-DataCollector01.csv";
    const TOKYO: &str = "en-tokyo-5964cols-Sample01.csv";
    // Three logs of three zones and years: every record of each, 4 + 8 + 5,963 columns (the time is the 5,964th).
    let three = || Merge::new(vec![real(&dir, PST), real(&dir, EDT), real(&dir, TOKYO)]).unwrap();
    assert_eq!(three().header().counters.len(), 5975);
    let (values, records) = both_ways(&three, 1 << 14);
    assert_eq!(values.len(), 351 + 208 + 16);
    assert_eq!(values, records);
    // A log merged with itself: one record per time, the same values as the log alone.
    let twice = || Merge::new(vec![real(&dir, EDT), real(&dir, EDT)]).unwrap();
    let once = || Merge::new(vec![real(&dir, EDT)]).unwrap();
    let (values, records) = both_ways(&twice, 100);
    assert_eq!(values.len(), 208);
    assert_eq!(values, records);
    assert_eq!(both_ways(&once, 100).0, values);
}
