//! The columnar form of logs (feature `arrow`): long and wide batches, Parquet files read back into
//! the same cells as the direct CSV conversion, Hive-partitioned datasets, and bad input.
#![cfg(feature = "arrow")]

use crate::support::fixtures;
use crate::support::log_time as t;
use crate::support::logs_dir;
use crate::support::vec_log;

use std::io::Cursor;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, TimestampMicrosecondType};
use arrow_array::Array;
use perfcounters::counter_type::CounterType;
use perfcounters::log::columnar::dataset::partition_value;
use perfcounters::log::columnar::parquet::{
    header_from_metadata, records_per_group, ParquetFileWriter,
};
use perfcounters::log::columnar::{
    log_time, utc_micros, DatasetReader, DatasetWriter, LongBatches, ParquetLogReader,
    ParquetLogWriter, WideBatches,
};
use perfcounters::log::{
    copy, BlgLogReader, Cell, CounterInfo, CsvFlavor, CsvReadOptions, Filtered, LogCounter,
    LogErrorKind, LogHeader, LogKind, LogReader, LogTime, Merge, PdhCsvLogWriter, PdhCsvReader,
    RawCell, Record, RelogFilter, TimeZone,
};
use perfcounters::path::CounterPath;
use perfcounters::raw::RawCounter;
use perfcounters::status::PdhStatus;
use vec_log::VecLog;

/// relog's CSV of `reader`: merged, filtered with the defaults (raw samples computed), written.
fn csv_of(reader: Box<dyn LogReader>) -> String {
    let mut r = Filtered::new(Merge::new(vec![reader]).unwrap(), &RelogFilter::default()).unwrap();
    let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out.csv");
    copy(&mut r, &mut w).unwrap();
    String::from_utf8(w.into_inner()).unwrap()
}

/// `reader` as relog writes it into a Parquet file (filtered: raw samples computed), in memory.
fn parquet_of(reader: Box<dyn LogReader>) -> bytes::Bytes {
    let mut r = Filtered::new(Merge::new(vec![reader]).unwrap(), &RelogFilter::default()).unwrap();
    let mut w = ParquetLogWriter::new("out.parquet", Vec::new());
    copy(&mut r, &mut w).unwrap();
    bytes::Bytes::from(w.into_finished().unwrap())
}

fn read_parquet(bytes: bytes::Bytes) -> ParquetLogReader<bytes::Bytes> {
    ParquetLogReader::new("in.parquet", bytes).unwrap()
}

fn csv_log(text: &str) -> Box<dyn LogReader> {
    Box::new(
        PdhCsvReader::new(
            Cursor::new(text.as_bytes().to_vec()),
            "in.csv",
            CsvReadOptions::default(),
        )
        .unwrap(),
    )
}

const LOG: &str = "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\WEB1\\Processor(_Total)\\% Processor Time\",\"\\\\WEB1\\Process(svchost#1)\\ID Process\",\"\\\\WEB1\\Memory\\Available MBytes\"\r\n\
\"11/20/2019 23:59:59.500\",\"12.5\",\" \",\"2048\"\r\n\
\"11/21/2019 00:00:00.500\",\"7.25\",\"884\",\"2047\"\r\n";

#[test]
fn time_is_microseconds_since_1970_utc() {
    // A record's time is a UTC instant: 2019-11-21 07:59:59.500 UTC.
    let t0 = t(2019, 11, 21, 7, 59, 59, 500);
    assert_eq!(utc_micros(t0), Some(1_574_323_199_500_000));
    assert_eq!(log_time(1_574_323_199_500_000), Some(t0));
    // Before 1970 too; sub-microsecond ticks are dropped.
    assert_eq!(utc_micros(t(1969, 12, 31, 23, 59, 59, 0)), Some(-1_000_000));
    assert_eq!(log_time(-1_000_000), Some(t(1969, 12, 31, 23, 59, 59, 0)));
    assert_eq!(utc_micros(LogTime(t0.0 + 9)), Some(1_574_323_199_500_000));
    assert_eq!(log_time(i64::MAX), None);
    assert_eq!(log_time(-11_644_473_600_000_001), None);
}

#[test]
fn long_form_rows_by_column_then_time() {
    let batches: Vec<_> = LongBatches::new(csv_log(LOG))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    let schema = b.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "time",
            "machine",
            "object",
            "instance",
            "counter",
            "value",
            "parent",
            "instance_index"
        ]
    );
    assert_eq!(b.num_rows(), 6);
    let time = b.column(0).as_primitive::<TimestampMicrosecondType>();
    assert_eq!(
        time.values().to_vec(),
        [1_574_323_199_500_000, 1_574_323_200_500_000].repeat(3)
    );
    let string = |c: usize| -> Vec<Option<String>> {
        let d = b.column(c).as_dictionary::<Int32Type>();
        let v = d.values().as_string::<i32>();
        d.keys()
            .iter()
            .map(|k| k.map(|k| v.value(k as usize).to_owned()))
            .collect()
    };
    let s = |x: &str| Some(x.to_owned());
    assert_eq!(string(1), vec![s("WEB1"); 6]);
    assert_eq!(
        string(2),
        [
            s("Processor"),
            s("Processor"),
            s("Process"),
            s("Process"),
            s("Memory"),
            s("Memory")
        ]
    );
    assert_eq!(
        string(3),
        [
            s("_Total"),
            s("_Total"),
            s("svchost"),
            s("svchost"),
            None,
            None
        ]
    );
    assert_eq!(string(6), vec![None; 6]);
    let value = b.column(5).as_primitive::<Float64Type>();
    assert_eq!(
        value.iter().collect::<Vec<_>>(),
        [
            Some(12.5),
            Some(7.25),
            None,
            Some(884.0),
            Some(2048.0),
            Some(2047.0)
        ]
    );
    let index = b.column(7).as_primitive::<arrow_array::types::UInt32Type>();
    assert_eq!(
        index.iter().collect::<Vec<_>>(),
        [None, None, Some(1), Some(1), None, None]
    );
}

#[test]
fn wide_form_is_relogs_shape() {
    let batches: Vec<_> = WideBatches::new(csv_log(LOG))
        .collect::<Result<_, _>>()
        .unwrap();
    let b = &batches[0];
    assert_eq!(b.num_rows(), 2);
    assert_eq!(
        b.schema().field(1).name(),
        r"\\WEB1\Processor(_Total)\% Processor Time"
    );
    assert_eq!(
        b.column(2)
            .as_primitive::<Float64Type>()
            .iter()
            .collect::<Vec<_>>(),
        [None, Some(884.0)]
    );
}

#[test]
fn csv_parquet_csv_is_the_direct_conversion() {
    let direct = csv_of(csv_log(LOG));
    let back = csv_of(Box::new(read_parquet(parquet_of(csv_log(LOG)))));
    assert_eq!(back, direct);
    let r = read_parquet(parquet_of(csv_log(LOG)));
    assert_eq!(r.header().kind, LogKind::Parquet);
    assert_eq!(
        r.header().time_zone,
        Some(TimeZone::named("Pacific Standard Time", Some(480)).0)
    );
}

/// A log with raw samples: a rate counter and a counter whose status goes bad.
fn raw_log() -> VecLog {
    let info = |ty: u32| {
        Some(CounterInfo {
            counter_type: CounterType(ty),
            default_scale: 0,
            time_base: 10_000_000,
        })
    };
    let header = LogHeader {
        source: "raw".into(),
        kind: LogKind::Binary,
        time_zone: Some(TimeZone::named("W. Europe Standard Time", Some(-60)).0),
        counters: vec![
            LogCounter::new(
                CounterPath::parse(r"\\H\Processor(0)\Interrupts/sec").unwrap(),
                info(CounterType::PERF_COUNTER_COUNTER.0),
            ),
            LogCounter::new(
                CounterPath::parse(r"\\H\Thread(app/0#2)\Context Switches/sec").unwrap(),
                info(CounterType::PERF_COUNTER_COUNTER.0),
            ),
        ],
    };
    let raw = |first: i64, second: i64, status: PdhStatus| {
        Cell::Raw(
            RawCell {
                status,
                raw: RawCounter::new(first, second),
            },
            None,
        )
    };
    let records = (0..4)
        .map(|s| Record {
            time: t(2020, 3, 18, 19, 0, s, 0),
            cells: vec![
                raw(
                    1000 * i64::from(s),
                    10_000_000 * i64::from(s) + 5,
                    PdhStatus::PDH_CSTATUS_VALID_DATA,
                ),
                if s == 2 {
                    raw(0, 0, PdhStatus::PDH_CSTATUS_NO_MACHINE)
                } else if s == 3 {
                    Cell::Blank
                } else {
                    raw(
                        50 * i64::from(s),
                        10_000_000 * i64::from(s) + 5,
                        PdhStatus::PDH_CSTATUS_VALID_DATA,
                    )
                },
            ],
        })
        .collect();
    VecLog::new(header, records)
}

#[test]
fn raw_samples_keep_their_columns_and_compute_again() {
    let bytes = parquet_of(Box::new(raw_log()));
    let mut r = read_parquet(bytes.clone());
    assert_eq!(r.header().counters, raw_log().header().counters);
    let mut rec = Record::default();
    assert!(r.read_record(&mut rec).unwrap());
    assert_eq!(rec.time, t(2020, 3, 18, 19, 0, 0, 0));
    let Cell::Raw(rc, None) = rec.cells[0] else {
        panic!("{:?}", rec.cells[0])
    };
    assert_eq!((rc.raw.first, rc.raw.second, rc.raw.multi_count), (0, 5, 1));
    assert!(r.read_record(&mut rec).unwrap());
    assert_eq!(rec.cells[0].value(), Some(1000.0));
    assert!(r.read_record(&mut rec).unwrap());
    let Cell::Raw(rc, None) = rec.cells[1] else {
        panic!("{:?}", rec.cells[1])
    };
    assert_eq!(rc.status, PdhStatus::PDH_CSTATUS_NO_MACHINE);
    assert!(r.read_record(&mut rec).unwrap());
    assert_eq!(rec.cells[1], Cell::Blank);
    assert!(!r.read_record(&mut rec).unwrap());
    assert_eq!(
        csv_of(Box::new(read_parquet(bytes))),
        csv_of(Box::new(raw_log()))
    );
    // The schema has the raw columns, and status is null where the cell was blank.
    let b = LongBatches::new(raw_log())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let status = b
        .column_by_name("status")
        .unwrap()
        .as_primitive::<arrow_array::types::UInt32Type>();
    assert_eq!(
        status.iter().collect::<Vec<_>>(),
        [
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(PdhStatus::PDH_CSTATUS_NO_MACHINE.0),
            None
        ]
    );
}

#[test]
fn many_row_groups_stream_back_in_order() {
    // 3,000 columns × 700 records: 33 row groups of 21 records (65,536 rows / 3,000) and one of 7.
    let n = 3000;
    assert_eq!(records_per_group(n), 21);
    // Wider logs keep at least 16 records a row group.
    assert_eq!(records_per_group(5000), 16);
    let header = LogHeader {
        source: "big".into(),
        kind: LogKind::Csv,
        time_zone: None,
        counters: (0..n)
            .map(|i| {
                LogCounter::new(
                    CounterPath::parse(&format!(r"\\M\Obj(i{i})\C")).unwrap(),
                    None,
                )
            })
            .collect(),
    };
    let records: Vec<Record> = (0..700)
        .map(|k| Record {
            time: LogTime(130_000_000_000_000_000 + k * 10_000_000),
            cells: (0..n)
                .map(|i| {
                    if (i + k as usize).is_multiple_of(7) {
                        Cell::Blank
                    } else {
                        Cell::Value((i as f64) * 0.5 + k as f64)
                    }
                })
                .collect(),
        })
        .collect();
    let mut w = ParquetLogWriter::new("big", Vec::new());
    copy(&mut VecLog::new(header.clone(), records.clone()), &mut w).unwrap();
    let mut r = read_parquet(bytes::Bytes::from(w.into_finished().unwrap()));
    assert_eq!(r.row_groups(), 34);
    let mut rec = Record::default();
    for expected in &records {
        assert!(r.read_record(&mut rec).unwrap());
        assert_eq!(&rec, expected);
    }
    assert!(!r.read_record(&mut rec).unwrap());
}

#[test]
fn real_csv_logs_round_trip() {
    let Some(dir) = logs_dir() else { return };
    for name in [
        "en-edt-process-DataCollector01.csv",
        "en-pst-BM_Active_Load_Test.csv",
        "en-tokyo-5964cols-Sample01.csv",
    ] {
        let path = dir.join("logs").join(name);
        let open = || -> Box<dyn LogReader> {
            Box::new(PdhCsvReader::open(&path, CsvReadOptions::default()).unwrap())
        };
        let direct = csv_of(open());
        let parquet = parquet_of(open());
        let back = csv_of(Box::new(read_parquet(parquet.clone())));
        assert!(back == direct, "{name}: CSV → Parquet → CSV differs");
        eprintln!(
            "{name}: {} bytes of Parquet, {} of CSV",
            parquet.len(),
            direct.len()
        );
    }
}

#[test]
fn real_blg_logs_round_trip() {
    let Some(dir) = logs_dir() else { return };
    for name in [
        "pal-vista-SamplePerfmonLog.blg",
        "tx-win8-BasicPerfCounters.blg",
        "powershell-2003-BadCounterSamples.blg",
    ] {
        let path = dir.join("blg").join(name);
        let open = || -> Box<dyn LogReader> { Box::new(BlgLogReader::open(&path).unwrap()) };
        let direct = csv_of(open());
        // As relog writes it (values computed) and as the reader gives it (raw samples only).
        let cooked = parquet_of(open());
        assert!(
            csv_of(Box::new(read_parquet(cooked))) == direct,
            "{name}: cooked"
        );
        let mut w = ParquetLogWriter::new("raw.parquet", Vec::new());
        copy(&mut *open(), &mut w).unwrap();
        let raw = bytes::Bytes::from(w.into_finished().unwrap());
        assert!(csv_of(Box::new(read_parquet(raw))) == direct, "{name}: raw");
    }
}

fn write_dataset(dir: &Path, logs: Vec<Box<dyn LogReader>>) -> Vec<PathBuf> {
    let mut r = Filtered::new(Merge::new(logs).unwrap(), &RelogFilter::default()).unwrap();
    let mut w = DatasetWriter::create(dir).unwrap();
    copy(&mut r, &mut w).unwrap();
    w.written().to_vec()
}

fn relative(dir: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut v: Vec<String> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(dir).unwrap();
            let parent = rel.parent().unwrap().to_string_lossy().replace('\\', "/");
            assert!(rel
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("part-"));
            parent
        })
        .collect();
    v.sort();
    v
}

#[test]
fn dataset_partitions_by_machine_and_utc_date() {
    let dir = fixtures::tempdir("dataset");
    let other = LOG.replace("WEB1", "DB 2");
    let files = write_dataset(&dir, vec![csv_log(LOG), csv_log(&other)]);
    // 23:59:59.500 and 00:00:00.500 Pacific are both on 2019-11-21 in UTC.
    assert_eq!(
        relative(&dir, &files),
        [
            "machine=DB%202/date=2019-11-21",
            "machine=WEB1/date=2019-11-21"
        ]
    );
    // Read back: the merge of both machines, as relog merges the two logs.
    let direct = {
        let mut r = Filtered::new(
            Merge::new(vec![csv_log(LOG), csv_log(&other)]).unwrap(),
            &RelogFilter::default(),
        )
        .unwrap();
        let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out.csv");
        copy(&mut r, &mut w).unwrap();
        String::from_utf8(w.into_inner()).unwrap()
    };
    let mut back = csv_of(Box::new(DatasetReader::open(&dir).unwrap()));
    // The dataset's files come in path order: DB 2 before WEB1.
    let direct_lines: Vec<&str> = direct.lines().collect();
    let back_lines: Vec<&str> = back.lines().collect();
    assert_eq!(back_lines.len(), direct_lines.len());
    let cells = |l: &str| {
        let l = l.trim_start_matches('"').trim_end_matches('"');
        let mut v: Vec<String> = l.split("\",\"").map(str::to_owned).collect();
        v.sort();
        v
    };
    for (a, b) in back_lines.iter().zip(&direct_lines) {
        assert_eq!(cells(a), cells(b));
    }
    // A second run adds files and leaves the first ones alone.
    let before: Vec<(PathBuf, Vec<u8>)> = files
        .iter()
        .map(|f| (f.clone(), std::fs::read(f).unwrap()))
        .collect();
    let again = write_dataset(&dir, vec![csv_log(LOG)]);
    assert_eq!(again.len(), 1);
    assert!(!files.contains(&again[0]));
    for (f, bytes) in &before {
        assert_eq!(&std::fs::read(f).unwrap(), bytes);
    }
    assert_eq!(DatasetReader::open(&dir).unwrap().files().len(), 3);
    back.clear();
    // No temporary file is left behind.
    for f in DatasetReader::open(&dir).unwrap().files() {
        assert!(f.extension().unwrap() == "parquet");
    }
    let hidden = walk(&dir)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with('.'));
    assert_eq!(hidden.count(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn dataset_of_the_three_real_blg_logs() {
    let Some(data) = logs_dir() else { return };
    let dir = fixtures::tempdir("dataset-blg");
    let mut all = Vec::new();
    for name in [
        "pal-vista-SamplePerfmonLog.blg",
        "tx-win8-BasicPerfCounters.blg",
        "powershell-2003-BadCounterSamples.blg",
    ] {
        let log = Box::new(BlgLogReader::open(&data.join("blg").join(name)).unwrap());
        all.extend(write_dataset(&dir, vec![log]));
    }
    let mut parts = relative(&dir, &all);
    parts.dedup();
    // The 2003 log holds 26 machines over three UTC days.
    assert_eq!(parts.len(), 2 + 26 * 3, "{parts:?}");
    assert_eq!(
        parts[..5],
        [
            "machine=GEORGIS3/date=2013-02-20",
            "machine=ZACH-PC/date=2007-08-14",
            "machine=s14185201/date=2007-07-02",
            "machine=s14185201/date=2007-07-03",
            "machine=s14185201/date=2007-07-04",
        ][..]
    );
    assert!(DatasetReader::open(&dir).unwrap().header().counters.len() > 100);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn partition_values_are_escaped() {
    assert_eq!(partition_value(Some("WEB1")), "WEB1");
    assert_eq!(partition_value(Some("DB 2")), "DB%202");
}

#[test]
fn a_parquet_file_that_is_not_ours_is_refused() {
    use std::sync::Arc;
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "x",
        arrow_schema::DataType::Int64,
        false,
    )]));
    let batch = arrow_array::RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2]))],
    )
    .unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(Vec::new(), schema, None).unwrap();
    w.write(&batch).unwrap();
    let bytes = bytes::Bytes::from(w.into_inner().unwrap());
    let e = ParquetLogReader::new("x.parquet", bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.parquet: a Parquet file that perfcounters did not write (its metadata has no \"perfcounters.log\" key)"
    );
    let e = header_from_metadata(
        "y.parquet",
        &[
            ("perfcounters.log".into(), "long/1".into()),
            ("perfcounters.counters".into(), "a\tb\n".into()),
        ],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "y.parquet: metadata perfcounters.counters, line 1: 2 fields, not 10"
    );
}

#[test]
fn a_corrupt_parquet_file_keeps_the_parquet_error() {
    use std::error::Error;
    let good = parquet_of(Box::new(raw_log()));
    let e = ParquetLogReader::new("cut.parquet", good.slice(..good.len() - 1)).unwrap_err();
    // The message names the file; the Parquet crate's error is the cause, and is said once.
    assert_eq!(e.to_string(), "cut.parquet");
    let cause = e
        .source()
        .and_then(|c| c.downcast_ref::<parquet::errors::ParquetError>())
        .unwrap_or_else(|| panic!("{e:?} has no ParquetError source"));
    assert!(matches!(e.kind, LogErrorKind::Parquet(_)), "{e:?}");
    assert_eq!(
        perfcounters::ErrorChain(&e).to_string(),
        format!("cut.parquet: {cause}")
    );
}

#[test]
fn corrupt_parquet_is_an_error_never_a_panic() {
    let good = parquet_of(Box::new(raw_log()));
    // Truncated anywhere.
    for len in [0, 3, 4, 8, good.len() / 2, good.len() - 9, good.len() - 1] {
        let cut = good.slice(..len);
        let r = ParquetLogReader::new("cut.parquet", cut);
        assert!(r.is_err(), "truncated to {len} bytes");
    }
    // Every third byte flipped in turn: an error or a log, never a panic. (The decoder's own
    // assertions print their message; the reader turns them into errors.)
    let mut errors = 0;
    for i in (0..good.len()).step_by(3) {
        let mut v = good.to_vec();
        v[i] ^= 0x5A;
        match ParquetLogReader::new("flip.parquet", bytes::Bytes::from(v)) {
            Err(_) => errors += 1,
            Ok(mut r) => {
                let mut rec = Record::default();
                loop {
                    match r.read_record(&mut rec) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(_) => {
                            errors += 1;
                            break;
                        }
                    }
                }
            }
        }
    }
    assert!(errors > 0);
}

#[test]
fn a_file_appears_only_when_complete_and_is_not_replaced_unasked() {
    let dir = fixtures::tempdir("file");
    let path = dir.join("out.parquet");
    std::fs::write(&path, b"keep me").unwrap();
    let mut w = ParquetFileWriter::create(&path, false).unwrap();
    copy(&mut *csv_log(LOG), &mut w).unwrap_err();
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    drop(w);
    // The temporary file is gone.
    assert_eq!(walk(&dir), std::slice::from_ref(&path));
    let mut w = ParquetFileWriter::create(&path, true).unwrap();
    copy(&mut *csv_log(LOG), &mut w).unwrap();
    assert_eq!(
        csv_of(Box::new(ParquetLogReader::open(&path).unwrap())),
        csv_of(csv_log(LOG))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_dataset_directory_with_foreign_files_is_refused() {
    let dir = fixtures::tempdir("foreign");
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    // The directory is the error's; what is wrong with it is its cause.
    let e = DatasetWriter::create(&dir).unwrap_err();
    let chain = perfcounters::ErrorChain(&e).to_string();
    assert!(
        chain.contains("notes.txt is not part of a dataset"),
        "{chain}"
    );
    let e = DatasetReader::open(&dir).unwrap_err();
    let chain = perfcounters::ErrorChain(&e).to_string();
    assert!(
        chain.contains("notes.txt is not part of a dataset"),
        "{chain}"
    );
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    let e = DatasetReader::open(&dir).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("the dataset holds no .parquet file"),
        "{e}"
    );
    // A .parquet file of someone else's in the right place.
    let p = dir.join("machine=A").join("date=2020-01-01");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("x.parquet"), b"PAR1 not really").unwrap();
    let e = DatasetReader::open(&dir).unwrap_err();
    assert_eq!(e.to_string(), p.join("x.parquet").display().to_string());
    assert!(matches!(e.kind, LogErrorKind::Parquet(_)), "{e:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn an_unwritable_directory_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = fixtures::tempdir("unwritable");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes anyway: then there is nothing to check.
    if std::fs::write(dir.join("probe"), b"").is_err() {
        let e = DatasetWriter::create(&dir.join("ds")).unwrap_err();
        assert!(e.to_string().contains("ds"), "{e}");
        let e = ParquetFileWriter::create(&dir.join("f.parquet"), false).unwrap_err();
        assert!(e.to_string().contains("f.parquet"), "{e}");
    } else {
        eprintln!("skipped: this user writes into a read-only directory");
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn arrays_hold_no_surprise() {
    // The value column of a blank cell is null, not NaN.
    let b = LongBatches::new(csv_log(LOG))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(b.column_by_name("value").unwrap().null_count(), 1);
}
