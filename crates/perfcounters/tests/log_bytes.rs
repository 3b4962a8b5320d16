//! Logs held in memory (`log::LogBytes`, `log::open_bytes`, `Pipeline::log_bytes`): read as their
//! files are, named as given; and the dataset's split of a log into partitions as batches
//! (`columnar::PartitionBatches`), the split `DatasetWriter` writes.

use crate::support::logs_dir;

use perfcounters::log::pipeline::Pipeline;
use perfcounters::log::{
    open_bytes, open_file, LogBytes, LogErrorKind, LogFormat, LogReader, OpenOptions, Record,
};

/// The shared logs that are files of the formats read from memory.
const LOGS: [&str; 6] = [
    "blg/tx-win8-BasicPerfCounters.blg",
    "blg/pal-vista-SamplePerfmonLog.blg",
    "blg/powershell-2003-BadCounterSamples.blg",
    "logs/en-edt-process-DataCollector01.csv",
    "logs/en-pst-BM_Active_Load_Test.csv",
    "logs/en-tokyo-5964cols-Sample01.csv",
];

/// Every record of `reader`.
fn records(reader: &mut dyn LogReader) -> Vec<Record> {
    let mut out = Vec::new();
    let mut record = Record::default();
    while reader.read_record(&mut record).unwrap() {
        out.push(record.clone());
    }
    out
}

#[test]
fn shared_logs_read_from_memory_as_from_their_files() {
    let Some(data) = logs_dir() else { return };
    for log in LOGS {
        let path = data.join(log);
        let bytes = std::fs::read(&path).unwrap();
        for times_only in [false, true] {
            let options = OpenOptions::default().with_times_only(times_only);
            let mut file = open_file(&path, &options).unwrap();
            let memory = LogBytes::new("s3://bucket/log", bytes.clone());
            let mut mem = open_bytes(&memory, &options).unwrap();
            assert_eq!(mem.header().source, "s3://bucket/log");
            assert_eq!(mem.header().kind, file.header().kind, "{log}");
            assert_eq!(mem.header().time_zone, file.header().time_zone, "{log}");
            assert_eq!(mem.header().counters, file.header().counters, "{log}");
            let (a, b) = (records(&mut *mem), records(&mut *file));
            assert!(!a.is_empty(), "{log}");
            assert!(a == b, "{log}, times only: {times_only}");
        }
    }
}

#[test]
fn the_format_is_told_by_the_content_then_the_name() {
    let csv = "\"(PDH-CSV 4.0)\",\"\\\\M\\Memory\\Available MBytes\"\r\n\"02/01/2014 00:00:00.000\",\"512\"\r\n";
    assert_eq!(
        LogBytes::new("x.blg", csv.as_bytes().to_vec()).format(),
        Some(LogFormat::Csv)
    );
    assert_eq!(
        LogBytes::new("empty.tsv", Vec::new()).format(),
        Some(LogFormat::Tsv)
    );
    assert_eq!(
        LogBytes::new("<bytes>", b"Time,Value".to_vec()).format(),
        None
    );
}

#[test]
fn bad_bytes_are_errors_that_name_them() {
    let err = |name: &str, bytes: Vec<u8>| {
        open_bytes(&LogBytes::new(name, bytes), &OpenOptions::default())
            .err()
            .expect("an error")
    };
    let e = err("<bytes>", b"Time,Value\r\n1,2\r\n".to_vec());
    assert!(matches!(e.kind, LogErrorKind::Invalid(_)), "{e:?}");
    assert!(
        e.to_string().starts_with("<bytes>: not a counter log"),
        "{e}"
    );
    let e = err("upload.db", b"SQLite format 3\0rest".to_vec());
    assert_eq!(
        e.to_string(),
        "upload.db: a SQL log (a SQLite database) is read from a file, not from memory: write it \
         to a file and name that"
    );
    // A bad row is met when read, and named by line.
    let text = b"\"(PDH-CSV 4.0)\",\"\\\\M\\Memory\\Available MBytes\"\r\n\"x\",\"1\"\r\n";
    let mut r = open_bytes(
        &LogBytes::new("cut.csv", text.to_vec()),
        &OpenOptions::default(),
    )
    .unwrap();
    let e = r.read_record(&mut Record::default()).unwrap_err();
    assert!(
        e.to_string().starts_with("cut.csv: line 2, column 1"),
        "{e}"
    );
}

#[test]
fn a_damaged_blg_in_memory_is_read_up_to_its_damage() {
    let Some(data) = logs_dir() else { return };
    let bytes = std::fs::read(data.join("blg/tx-win8-BasicPerfCounters.blg")).unwrap();
    let cut = bytes[..100_000].to_vec();
    let mut r = open_bytes(&LogBytes::new("<file>", cut), &OpenOptions::default()).unwrap();
    let n = records(&mut *r).len();
    assert_eq!(n, 64);
    let warnings = r.warnings().join("\n");
    assert!(
        warnings.starts_with("<file>: EVENT_TRACE_HEADER at offset 99912:"),
        "{warnings}"
    );
    assert!(
        warnings.contains("the log is read up to there (64 samples)"),
        "{warnings}"
    );
}

#[cfg(feature = "arrow")]
#[test]
fn a_parquet_log_in_memory() {
    use perfcounters::log::columnar::{ParquetLogReader, ParquetLogWriter};
    use perfcounters::log::copy;
    let Some(data) = logs_dir() else { return };
    let mut csv = open_file(
        &data.join("logs/en-pst-BM_Active_Load_Test.csv"),
        &OpenOptions::default(),
    )
    .unwrap();
    let mut w = ParquetLogWriter::new("out.parquet", Vec::new());
    copy(&mut *csv, &mut w).unwrap();
    let bytes = w.into_finished().unwrap();
    let mut direct =
        ParquetLogReader::new("out.parquet", bytes::Bytes::from(bytes.clone())).unwrap();
    let mut mem = open_bytes(&LogBytes::new("<bytes>", bytes), &OpenOptions::default()).unwrap();
    assert_eq!(mem.header().kind, LogFormat::Parquet);
    assert_eq!(mem.header().counters, direct.header().counters);
    assert!(records(&mut *mem) == records(&mut direct));
}

#[test]
fn a_pipeline_merges_logs_in_memory_with_files() {
    let Some(data) = logs_dir() else { return };
    let a = data.join("logs/en-edt-process-DataCollector01.csv");
    let b = data.join("blg/tx-win8-BasicPerfCounters.blg");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let stats = |p: Pipeline| {
        let s = p.open().unwrap().statistics().unwrap();
        s.into_iter()
            .map(|c| {
                (
                    c.name,
                    c.stats.ok().map(|s| (s.count, s.min, s.mean, s.max)),
                )
            })
            .collect::<Vec<_>>()
    };
    let files = stats(Pipeline::new([a, b]));
    let memory = LogBytes::new("<bytes>", std::fs::read(b).unwrap());
    let pipeline = Pipeline::new([a]).log_bytes(memory);
    assert_eq!(pipeline.inputs(), [a, "<bytes>"]);
    assert_eq!(stats(pipeline.clone()), files);
    // Other inputs keep the logs in memory that they name.
    let only = pipeline.with_inputs(["<bytes>"]);
    let opened = only.open().unwrap();
    assert_eq!(opened.header().source, "<bytes>");
    assert_eq!(opened.header().counters.len(), 10);
}

#[cfg(feature = "arrow")]
mod partitions {
    use super::*;
    use std::collections::BTreeMap;
    use std::io::Cursor;

    use perfcounters::log::columnar::dataset::partition_value;
    use perfcounters::log::columnar::{
        DatasetWriter, ParquetLogReader, PartitionBatch, PartitionBatches,
    };
    use perfcounters::log::{copy, CsvReadOptions, Filtered, Merge, PdhCsvReader, RelogFilter};

    use crate::support::fixtures;

    /// Rows per partition directory (`machine=…/date=…`).
    type Rows = BTreeMap<String, usize>;

    fn filtered(logs: Vec<Box<dyn LogReader>>) -> Filtered<Merge> {
        Filtered::new(Merge::new(logs).unwrap(), &RelogFilter::default()).unwrap()
    }

    /// The rows of each partition of `PartitionBatches` over the logs.
    fn batches(logs: Vec<Box<dyn LogReader>>) -> Rows {
        let mut rows = Rows::new();
        for b in PartitionBatches::new(filtered(logs)).unwrap() {
            let PartitionBatch {
                machine,
                date,
                batch,
            } = b.unwrap();
            let key = format!(
                "machine={}/date={date}",
                partition_value(machine.as_deref())
            );
            *rows.entry(key).or_default() += batch.num_rows();
        }
        rows
    }

    /// The rows of each partition of the dataset `DatasetWriter` writes of the logs.
    fn dataset(name: &str, logs: Vec<Box<dyn LogReader>>) -> Rows {
        let dir = fixtures::tempdir(name);
        let mut w = DatasetWriter::create(&dir).unwrap();
        copy(&mut filtered(logs), &mut w).unwrap();
        let mut rows = Rows::new();
        for f in w.written() {
            let key = f.parent().unwrap().strip_prefix(&dir).unwrap();
            let key = key.to_string_lossy().replace('\\', "/");
            let reader = ParquetLogReader::open(f).unwrap();
            let n: usize = records(&mut { reader }).iter().map(|r| r.cells.len()).sum();
            *rows.entry(key).or_default() += n;
        }
        std::fs::remove_dir_all(&dir).unwrap();
        rows
    }

    fn csv(text: &str) -> Box<dyn LogReader> {
        Box::new(
            PdhCsvReader::new(
                Cursor::new(text.as_bytes().to_vec()),
                "in.csv",
                CsvReadOptions::default(),
            )
            .unwrap(),
        )
    }

    /// Two machines merged: a record where a machine has only blank cells is not its own; dates
    /// are UTC dates.
    #[test]
    fn a_merged_log_splits_as_its_dataset() {
        let web = "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\WEB1\\Memory\\Available MBytes\",\"\\\\WEB1\\Memory\\Pages/sec\"\r\n\
                   \"11/20/2019 15:59:59.500\",\"12.5\",\" \"\r\n\
                   \"11/20/2019 16:00:00.500\",\"7.25\",\"3\"\r\n";
        let db = "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\DB 2\\Memory\\Available MBytes\"\r\n\
                  \"11/20/2019 16:00:01.500\",\"1\"\r\n";
        let logs = || vec![csv(web), csv(db)];
        let expected: Rows = [
            ("machine=DB%202/date=2019-11-21".to_owned(), 1),
            ("machine=WEB1/date=2019-11-20".to_owned(), 2),
            ("machine=WEB1/date=2019-11-21".to_owned(), 2),
        ]
        .into();
        assert_eq!(batches(logs()), expected);
        assert_eq!(dataset("partitions-merged", logs()), expected);
    }

    #[test]
    fn the_shared_logs_split_as_their_datasets() {
        let Some(data) = logs_dir() else { return };
        for log in LOGS {
            let path = data.join(log);
            let open = || vec![open_file(&path, &OpenOptions::default()).unwrap()];
            let split = batches(open());
            assert_eq!(split, dataset("partitions-shared", open()), "{log}");
            assert!(!split.is_empty());
        }
    }
}
