//! `copy` with encoders on other threads writes the same bytes as on one thread: random logs
//! (columns, blanks, values with exponents, NaN and infinities, times across the batches' edges,
//! a time out of range) into PDH-CSV and PDH-TSV.

use crate::support::vec_log;

use perfcounters::log::{
    copy_with, Cell, CopyOptions, CsvFlavor, LogCounter, LogHeader, LogKind, LogTime,
    PdhCsvLogWriter, RawCell, Record, TimeZone,
};
use perfcounters::{CounterPath, PdhStatus, RawCounter};
use proptest::prelude::*;
use vec_log::VecLog;

/// A value as counters have them: integers, fractions, tiny and huge magnitudes, any bit pattern
/// (NaN and infinities included), zeros of both signs.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u64..1 << 40).prop_map(|n| n as f64),
        (0u64..1 << 53, 1u32..60).prop_map(|(n, k)| n as f64 / f64::from(1u32 << (k % 31)) / 3.0),
        (-1e6f64..1e6),
        (1u64..u64::MAX).prop_map(|n| n as f64 * 1e-25),
        (1u64..u64::MAX).prop_map(|n| n as f64 * 1e12),
        any::<u64>().prop_map(f64::from_bits),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-0.0),
        Just(0.0),
    ]
}

fn cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        1 => Just(Cell::Blank),
        4 => value().prop_map(Cell::Value),
        1 => (any::<i64>(), proptest::option::of(value())).prop_map(|(raw, v)| {
            Cell::Raw(
                RawCell {
                    status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                    raw: RawCounter {
                        first: raw,
                        ..RawCounter::default()
                    },
                },
                v,
            )
        }),
    ]
}

/// A log of 1–6 columns and up to 80 records, a zone or none, and a last time that may be out of
/// range (which ends the copy with an error after the records before it).
fn log() -> impl Strategy<Value = (LogHeader, Vec<Record>)> {
    (1usize..7, 0usize..80, any::<bool>(), any::<bool>()).prop_flat_map(
        |(columns, rows, zoned, bad_time)| {
            let records = proptest::collection::vec(
                (0i64..50_000_000, proptest::collection::vec(cell(), columns)),
                rows,
            );
            records.prop_map(move |rows| {
                let counters = (0..columns)
                    .map(|i| {
                        let path =
                            CounterPath::parse(&format!(r"\\H\Object {i}(x)\Counter {i}")).unwrap();
                        LogCounter::new(path, None)
                    })
                    .collect();
                let header = LogHeader {
                    source: "random".into(),
                    kind: LogKind::Csv,
                    time_zone: zoned.then(|| TimeZone::fixed("Pacific Standard Time", Some(480))),
                    counters,
                };
                let mut time = LogTime::from_parts(2024, 3, 9, 23, 0, 0, 0).unwrap().0;
                let n = rows.len();
                let records = rows
                    .into_iter()
                    .enumerate()
                    .map(|(i, (step, cells))| {
                        time += step;
                        let t = if bad_time && i + 1 == n { -1 } else { time };
                        Record {
                            time: LogTime(t),
                            cells,
                        }
                    })
                    .collect();
                (header, records)
            })
        },
    )
}

/// The bytes `copy_with` writes and what it returns (records or the error's text).
fn copied(
    header: &LogHeader,
    records: &[Record],
    flavor: CsvFlavor,
    options: &CopyOptions,
) -> (Vec<u8>, Result<u64, String>) {
    let mut reader = VecLog::new(header.clone(), records.to_vec());
    let mut writer = PdhCsvLogWriter::new(Vec::new(), flavor, "out.csv");
    let r = copy_with(&mut reader, &mut writer, options).map_err(|e| e.to_string());
    (writer.into_inner(), r)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn parallel_copy_writes_the_bytes_of_one_thread(
        (header, records) in log(),
        encoders in 1usize..4,
        batch_records in 1usize..9,
        tsv in any::<bool>(),
    ) {
        let flavor = if tsv { CsvFlavor::Tsv } else { CsvFlavor::Csv };
        let one = copied(&header, &records, flavor, &CopyOptions::single_threaded());
        let options = CopyOptions {
            encoders,
            batch_cells: batch_records * header.counters.len(),
        };
        let many = copied(&header, &records, flavor, &options);
        prop_assert_eq!(&one.1, &many.1);
        prop_assert_eq!(String::from_utf8(one.0).unwrap(), String::from_utf8(many.0).unwrap());
    }
}

/// A log of several batches through the default options (the encoders of the machine) gives the
/// bytes of one thread, and a log of less than one batch is copied without encoders.
#[test]
fn default_copy_equals_one_thread() {
    let counters: Vec<LogCounter> = (0..3)
        .map(|i| LogCounter::new(CounterPath::parse(&format!(r"\\H\O\C{i}")).unwrap(), None))
        .collect();
    let header = LogHeader {
        source: "gen".into(),
        kind: LogKind::Csv,
        time_zone: Some(TimeZone::fixed("UTC", Some(0))),
        counters,
    };
    let start = LogTime::from_parts(2024, 1, 1, 0, 0, 0, 0).unwrap().0;
    let records: Vec<Record> = (0..20_000i64)
        .map(|i| Record {
            time: LogTime(start + i * 10_000_000),
            cells: vec![
                Cell::Value(i as f64),
                Cell::Value(i as f64 / 7.0),
                if i % 3 == 0 {
                    Cell::Blank
                } else {
                    Cell::Value(1e-7 * i as f64)
                },
            ],
        })
        .collect();
    let one = copied(
        &header,
        &records,
        CsvFlavor::Csv,
        &CopyOptions::single_threaded(),
    );
    let many = copied(&header, &records, CsvFlavor::Csv, &CopyOptions::default());
    assert_eq!(one.1, Ok(20_000));
    assert_eq!(many.1, Ok(20_000));
    assert!(one.0 == many.0, "the outputs differ");
    let text = String::from_utf8(many.0).unwrap();
    assert_eq!(
        text.lines().nth(2),
        Some("\"01/01/2024 00:00:01.000\",\"1\",\"0.14285714285714284921\",\"9.9999999999999995475e-008\"")
    );
}
