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

/// A reader of records that fails once after `fail_after` of them (never when `None`), then
/// goes on: an error that is not kept for the next call would let records after it through.
struct Failing {
    inner: VecLog,
    fail_after: Option<usize>,
    read: usize,
}

impl perfcounters::log::LogReader for Failing {
    fn header(&self) -> &LogHeader {
        self.inner.header()
    }
    fn read_record(&mut self, record: &mut Record) -> Result<bool, perfcounters::log::LogError> {
        if self.fail_after == Some(self.read) {
            self.fail_after = None;
            return Err(perfcounters::log::LogError::invalid(
                "failing",
                None,
                format!("record {} is damaged", self.read + 1),
            ));
        }
        self.read += 1;
        perfcounters::log::LogReader::read_record(&mut self.inner, record)
    }
}

/// Raw samples of a rate, a value and a fraction with its base, or blanks and cooked values; a
/// bad status now and then.
fn raw_cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        1 => Just(Cell::Blank),
        1 => value().prop_map(Cell::Value),
        6 => (0i64..1 << 40, 1i64..1 << 30, 0u8..8).prop_map(|(first, second, status)| {
            Cell::Raw(
                RawCell {
                    status: if status == 0 {
                        PdhStatus::PDH_CSTATUS_NO_INSTANCE
                    } else {
                        PdhStatus::PDH_CSTATUS_VALID_DATA
                    },
                    raw: RawCounter {
                        first,
                        second,
                        ..RawCounter::default()
                    },
                },
                None,
            )
        }),
    ]
}

/// What a [`perfcounters::log::Filtered`] reader gives as records' values (NaN for none), or the
/// error's text where reading stopped.
type Read = (Vec<(i64, Vec<u64>)>, Option<String>);

fn filtered(
    records: &[Record],
    filter: &perfcounters::log::RelogFilter,
    fail_after: Option<usize>,
) -> perfcounters::log::Filtered<Failing> {
    use perfcounters::{CounterInfo, CounterType};
    let types = [
        CounterType::PERF_COUNTER_BULK_COUNT,
        CounterType::PERF_COUNTER_RAWCOUNT,
        CounterType::PERF_RAW_FRACTION,
        CounterType::PERF_100NSEC_TIMER,
    ];
    let counters = (0..records.first().map_or(0, |r| r.cells.len()))
        .map(|i| {
            let path = CounterPath::parse(&format!(r"\\H\Object {i}(x)\Counter {i}")).unwrap();
            let info = (i < types.len()).then(|| CounterInfo {
                counter_type: types[i],
                default_scale: 0,
                time_base: 10_000_000,
            });
            LogCounter::new(path, info)
        })
        .collect();
    let header = LogHeader {
        source: "raw".into(),
        kind: LogKind::Binary,
        time_zone: None,
        counters,
    };
    let inner = Failing {
        inner: VecLog::new(header, records.to_vec()),
        fail_after,
        read: 0,
    };
    perfcounters::log::Filtered::new(inner, filter).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A filter over a reader of raw samples answers `read_values`: in batches of any size, the
    /// times and values (computed against the previous kept sample, `-b` priming the first) are
    /// those `read_record` gives, and an error after some records comes at the next call.
    #[test]
    fn raw_samples_read_as_values_are_the_records_values(
        rows in proptest::collection::vec(
            (1i64..100_000_000, proptest::collection::vec(raw_cell(), 5)), 0..40),
        begin in proptest::option::of(0usize..40),
        every in 1u64..4,
        max_cells in 1usize..40,
        fail_after in proptest::option::of(0usize..40),
    ) {
        use perfcounters::log::{LogReader, RelogFilter, ValueRows};
        let mut time = LogTime::from_parts(2024, 3, 9, 23, 0, 0, 0).unwrap().0;
        let records: Vec<Record> = rows
            .into_iter()
            .map(|(step, cells)| {
                time += step;
                Record { time: LogTime(time), cells }
            })
            .collect();
        let filter = RelogFilter {
            // A log without a zone: its local times are its UTC times.
            begin: begin.and_then(|i| records.get(i)).map(|r| r.time),
            every,
            ..RelogFilter::default()
        };
        let bits = |v: f64| if v.is_nan() { f64::NAN.to_bits() } else { v.to_bits() };
        let mut by_record: Read = (Vec::new(), None);
        let mut r = filtered(&records, &filter, fail_after);
        let mut record = Record::default();
        loop {
            match r.read_record(&mut record) {
                Ok(true) => by_record.0.push((
                    record.time.0,
                    record.cells.iter().map(|c| bits(c.value().unwrap_or(f64::NAN))).collect(),
                )),
                Ok(false) => break,
                Err(e) => {
                    by_record.1 = Some(e.to_string());
                    break;
                }
            }
        }
        let mut by_values: Read = (Vec::new(), None);
        let mut r = filtered(&records, &filter, fail_after);
        let mut rows = ValueRows::default();
        loop {
            match r.read_values(&mut rows, max_cells) {
                Ok(Some(0)) => break,
                Ok(Some(n)) => {
                    prop_assert_eq!(n, rows.len());
                    prop_assert!(n == 1 || n * rows.columns <= max_cells);
                    for i in 0..n {
                        by_values.0.push((rows.times[i].0, rows.row(i).iter().map(|&v| bits(v)).collect()));
                    }
                }
                Ok(None) => prop_assert!(false, "no values"),
                Err(e) => {
                    by_values.1 = Some(e.to_string());
                    break;
                }
            }
        }
        prop_assert_eq!(by_values, by_record);
    }
}
