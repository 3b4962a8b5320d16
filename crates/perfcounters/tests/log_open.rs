//! Opening and creating logs by name and content: `LogFormat::detect`, `log::open`, `log::create`.

use crate::support::fixtures::Dir;
use crate::support::shared_data;
use crate::support::vec_log;

use std::path::{Path, PathBuf};

use perfcounters::log::{
    self, copy, Cell, CreateOptions, LogCounter, LogErrorKind, LogFormat, LogHeader, LogReader,
    LogTime, OpenOptions, Record, TimeZone,
};
use perfcounters::CounterPath;
use vec_log::VecLog;

fn t(s: u32) -> LogTime {
    LogTime::from_parts(2024, 3, 5, 10, 0, s, 0).unwrap()
}

/// A two-column log of `n` records, one a second, in Pacific Standard Time.
fn sample_log(n: u32, counters: &[&str]) -> VecLog {
    let header = LogHeader {
        source: "memory".into(),
        kind: LogFormat::Csv,
        time_zone: Some(TimeZone::named("Pacific Standard Time", Some(480)).0),
        counters: counters
            .iter()
            .map(|c| LogCounter::new(CounterPath::parse(c).unwrap(), None))
            .collect(),
    };
    let records = (0..n)
        .map(|i| Record {
            time: t(i),
            cells: (0..counters.len())
                .map(|c| Cell::Value(f64::from(i * 10) + c as f64))
                .collect(),
        })
        .collect();
    VecLog::new(header, records)
}

const COUNTERS: [&str; 2] = [
    r"\\m\Memory\Available Bytes",
    r"\\m\Processor(_Total)\% Idle Time",
];

fn write(target: &str, options: &CreateOptions, n: u32) {
    let mut w = log::create(target, options).unwrap();
    copy(&mut sample_log(n, &COUNTERS), &mut w).unwrap();
}

fn read_all(reader: &mut dyn LogReader) -> Vec<Record> {
    let mut out = Vec::new();
    let mut r = Record::default();
    while reader.read_record(&mut r).unwrap() {
        out.push(r.clone());
    }
    out
}

fn open_one(input: &str) -> Box<dyn LogReader> {
    let mut readers = log::open(input, &OpenOptions::default()).unwrap();
    assert_eq!(readers.len(), 1, "{input}");
    readers.remove(0)
}

#[test]
fn the_output_kind_follows_the_name() {
    let d = Dir::new("open-kinds");
    let tsv = d.path("out.TSV");
    write(&tsv, &CreateOptions::default(), 2);
    assert!(std::fs::read_to_string(&tsv)
        .unwrap()
        .starts_with("\"(PDH-TSV 4.0) (Pacific Standard Time)(480)\"\t"));
    // A name that says nothing: the format asked for, else PDH-CSV.
    let plain = d.path("out.txt");
    write(&plain, &CreateOptions::default(), 1);
    assert_eq!(
        LogFormat::of_file(Path::new(&plain)).unwrap(),
        Some(LogFormat::Csv)
    );
    let asked = d.path("asked.txt");
    write(
        &asked,
        &CreateOptions::default().with_format(Some(LogFormat::Tsv)),
        1,
    );
    assert_eq!(
        LogFormat::of_file(Path::new(&asked)).unwrap(),
        Some(LogFormat::Tsv)
    );

    // A format that contradicts the name is refused before anything is written.
    let csv = d.path("x.csv");
    let e = log::create(
        &csv,
        &CreateOptions::default().with_format(Some(LogFormat::Tsv)),
    )
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        format!("{csv}: the name says CSV but the format asked for is TSV")
    );
    assert!(!Path::new(&csv).exists());

    // A .blg name never gets text.
    let blg = d.path("x.blg");
    let e = log::create(&blg, &CreateOptions::default()).err().unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "{blg}: binary logs (.blg) are read, not written: name a .csv, .tsv or SQL:file.db!log output"
        )
    );
    assert!(!Path::new(&blg).exists());
    let e = log::create_stream(Vec::new(), LogFormat::Sql, "standard output")
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "standard output: a SQL log cannot be written to a stream: name an output"
    );
}

#[test]
fn an_existing_output_is_kept_unless_overwritten_or_appended_to() {
    let d = Dir::new("open-exists");
    let out = d.path("out.csv");
    write(&out, &CreateOptions::default(), 3);
    let before = std::fs::read(&out).unwrap();
    let e = log::create(&out, &CreateOptions::default()).err().unwrap();
    assert!(matches!(e.kind, LogErrorKind::Exists), "{e:?}");
    assert_eq!(e.to_string(), format!("{out}: already exists"));
    assert_eq!(std::fs::read(&out).unwrap(), before);

    write(&out, &CreateOptions::default().with_overwrite(true), 1);
    assert_eq!(read_all(&mut *open_one(&out)).len(), 1);

    // Appending adds records after the existing ones (here 1 + 2), the header once.
    write(&out, &CreateOptions::default().with_append(true), 2);
    let records = read_all(&mut *open_one(&out));
    assert_eq!(
        records.iter().map(|r| r.time).collect::<Vec<_>>(),
        [t(0), t(0), t(1)]
    );
    assert_eq!(records[2].cells, [Cell::Value(10.0), Cell::Value(11.0)]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("(PDH-CSV 4.0)").count(), 1);

    // Other columns are refused, and nothing is added.
    let before = std::fs::read(&out).unwrap();
    let mut w = log::create(&out, &CreateOptions::default().with_append(true)).unwrap();
    let e = copy(&mut sample_log(1, &[r"\\m\Memory\Committed Bytes"]), &mut w).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{out}: cannot append: the file has other counters than the records to add")
    );
    drop(w);
    assert_eq!(std::fs::read(&out).unwrap(), before);

    // Appending to a file that does not exist creates it.
    let fresh = d.path("fresh.tsv");
    write(&fresh, &CreateOptions::default().with_append(true), 2);
    assert_eq!(read_all(&mut *open_one(&fresh)).len(), 2);
}

#[test]
fn patterns_open_every_matching_file_in_name_order() {
    let d = Dir::new("open-glob");
    for (name, n) in [("b2.csv", 2), ("B1.CSV", 1), ("c.tsv", 3)] {
        write(&d.path(name), &CreateOptions::default(), n);
    }
    let readers = log::open(&d.path("b?.csv"), &OpenOptions::default()).unwrap();
    let sources: Vec<String> = readers.iter().map(|r| r.header().source.clone()).collect();
    assert_eq!(sources, [d.path("B1.CSV"), d.path("b2.csv")]);
    let mut merged = log::open_merged(&[d.path("*.csv")], &OpenOptions::default()).unwrap();
    assert_eq!(read_all(&mut merged).len(), 2);
    let all = log::open(&d.path("*"), &OpenOptions::default()).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[2].header().kind, LogFormat::Tsv);

    let e = log::open(&d.path("z*.csv"), &OpenOptions::default())
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        format!("{}: no file matches", d.path("z*.csv"))
    );
}

#[test]
fn content_decides_before_the_name() {
    let d = Dir::new("open-content");
    // A PDH-TSV log named .csv is read as PDH-TSV.
    let tsv = d.path("t.tsv");
    write(&tsv, &CreateOptions::default(), 2);
    let named_csv = d.path("really-tsv.csv");
    std::fs::copy(&tsv, &named_csv).unwrap();
    let mut r = open_one(&named_csv);
    assert_eq!(r.header().kind, LogFormat::Tsv);
    assert_eq!(read_all(&mut *r).len(), 2);

    // UTF-16LE with a byte-order mark, as Performance Monitor writes some logs.
    let text = std::fs::read_to_string(&tsv).unwrap();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let wide = d.path("wide.log");
    std::fs::write(&wide, utf16).unwrap();
    assert_eq!(
        LogFormat::of_file(Path::new(&wide)).unwrap(),
        Some(LogFormat::Tsv)
    );
    assert_eq!(read_all(&mut *open_one(&wide)).len(), 2);

    // Content that says nothing: the name decides, and that reader says what is wrong.
    let empty = d.path("empty.csv");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        LogFormat::of_file(Path::new(&empty)).unwrap(),
        Some(LogFormat::Csv)
    );
    let e = log::open(&empty, &OpenOptions::default()).err().unwrap();
    assert!(e.to_string().contains("not a PDH log"), "{e}");

    // Neither content nor name.
    let other = d.path("notes.txt");
    std::fs::write(&other, b"Time,Value\r\n1,2\r\n").unwrap();
    assert_eq!(LogFormat::of_file(Path::new(&other)).unwrap(), None);
    let e = log::open(&other, &OpenOptions::default()).err().unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "{other}: not a counter log: it starts with neither a \"(PDH-CSV 4.0)\" or \
             \"(PDH-TSV 4.0)\" header, the trace buffer of a .blg, a SQLite database header, nor \
             Parquet's PAR1"
        )
    );
    let e = log::open(&d.path("missing.csv"), &OpenOptions::default())
        .err()
        .unwrap();
    assert!(matches!(e.kind, LogErrorKind::Io(_)), "{e:?}");
}

#[cfg(feature = "sql")]
#[test]
fn sql_logs_by_name_and_by_content() {
    let d = Dir::new("open-sql");
    let target = format!("SQL:{}!run", d.path("logs.db"));
    write(&target, &CreateOptions::default(), 3);
    // The log exists: kept, unless overwritten or appended to.
    let e = log::create(&target, &CreateOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("already"), "{e}");
    write(&target, &CreateOptions::default().with_append(true), 2);
    let mut r = open_one(&target);
    assert_eq!(r.header().kind, LogFormat::Sql);
    assert_eq!(read_all(&mut *r).len(), 5);
    // The database file itself is recognised by its header, whatever its name.
    let db = d.path("logs.db");
    assert_eq!(
        LogFormat::of_file(Path::new(&db)).unwrap(),
        Some(LogFormat::Sql)
    );
    assert_eq!(read_all(&mut *open_one(&db)).len(), 5);
    // A SQL name with another format asked for is a contradiction.
    let e = log::create(
        &format!("SQL:{}!other", d.path("logs.db")),
        &CreateOptions::default().with_format(Some(LogFormat::Csv)),
    )
    .err()
    .unwrap();
    assert!(e
        .to_string()
        .ends_with("the name says SQL but the format asked for is CSV"));
    let e = log::create(
        &format!("SQL:{}", d.path("x.db")),
        &CreateOptions::default(),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("name the log: SQL:"), "{e}");
}

/// The real logs of `../shared/data`: every one is recognised by its content.
#[test]
fn real_logs_are_recognised() {
    let Some(dir) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let d = Dir::new("open-real");
    let mut seen = 0;
    for (sub, format) in [("logs", LogFormat::Csv), ("blg", LogFormat::Binary)] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            assert_eq!(
                LogFormat::of_file(&f).unwrap(),
                Some(format),
                "{}",
                f.display()
            );
            // Renamed to say nothing, it is still recognised.
            let renamed = d.path(&format!("log{seen}.dat"));
            std::fs::copy(&f, &renamed).unwrap();
            let mut start = vec![0; log::DETECT_BYTES];
            let n = std::io::Read::read(&mut std::fs::File::open(&renamed).unwrap(), &mut start)
                .unwrap();
            assert_eq!(LogFormat::detect(&start[..n]), Some(format));
            let r = open_one(&renamed);
            assert_eq!(r.header().kind, format);
            assert!(!r.header().counters.is_empty());
            seen += 1;
        }
    }
    assert_eq!(seen, 6);
}

/// A `LogError` keeps its cause: `source()` gives the `io::Error`, the `.blg`'s `DecodeError`, the
/// `rusqlite::Error`, and the message contains the cause's own message once.
#[test]
fn errors_keep_their_causes() {
    use perfcounters::format::DecodeError;
    use std::error::Error;
    let d = Dir::new("open-causes");

    let missing = d.path("missing.csv");
    let e = log::open(&missing, &OpenOptions::default()).err().unwrap();
    let io = e
        .source()
        .unwrap()
        .downcast_ref::<std::io::Error>()
        .unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    // The message names the log; the I/O error is the cause, said once in the chain.
    assert_eq!(e.to_string(), missing);
    assert_eq!(
        perfcounters::ErrorChain(&e).to_string(),
        format!("{missing}: {io}")
    );

    // Four bytes of a .blg: its first structure is cut short.
    let blg = d.path("short.blg");
    std::fs::write(&blg, 0x1_0000u32.to_le_bytes()).unwrap();
    let e = log::open(&blg, &OpenOptions::default()).err().unwrap();
    let decode = e.source().unwrap().downcast_ref::<DecodeError>().unwrap();
    assert_eq!(
        (decode.structure(), decode.offset()),
        ("WMI_BUFFER_HEADER", 0)
    );
    assert_eq!(
        e.location,
        Some(perfcounters::log::Location::Offset {
            offset: 0,
            structure: "WMI_BUFFER_HEADER"
        })
    );
    // The decoding error names its structure and offset: the message leaves them to it.
    assert_eq!(e.to_string(), blg);
    assert_eq!(
        perfcounters::ErrorChain(&e).to_string(),
        format!("{blg}: WMI_BUFFER_HEADER at offset 0: truncated: needs 72 bytes, 4 available")
    );

    #[cfg(feature = "sql")]
    {
        let db = d.path("not-a.db");
        std::fs::write(&db, vec![b'x'; 4096]).unwrap();
        let e = log::create(&format!("SQL:{db}!a"), &CreateOptions::default())
            .and_then(|mut w| copy(&mut sample_log(1, &COUNTERS), &mut w))
            .err()
            .unwrap();
        let sql = e
            .source()
            .unwrap()
            .downcast_ref::<rusqlite::Error>()
            .unwrap();
        assert_eq!(e.to_string(), format!("SQL:{db}!a"));
        assert!(
            perfcounters::ErrorChain(&e)
                .to_string()
                .starts_with(&format!("SQL:{db}!a: {sql}")),
            "{e}"
        );
        assert!(matches!(e.kind, LogErrorKind::Sql(_)), "{e:?}");
    }
}

/// Performance Monitor writes a data collector set's description as the last header cell of a
/// PDH-CSV log: it is not a counter path, so its column is skipped with one warning and the rest of
/// the log reads (rows may carry a cell for it or leave it out).
#[test]
fn a_description_header_cell_is_skipped_with_one_warning() {
    let d = Dir::new("open-description");
    let path = d.path("DataCollector01.csv");
    std::fs::write(
        &path,
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\H\\Memory\\Available Bytes\",\
         \"\\\\H\\Processor(_Total)\\% Processor Time\",\"Basic counters, every 15 s (set up by ops)\"\r\n\
         \"03/05/2024 10:00:00.000\",\"1024\",\" \",\" \"\r\n\
         \"03/05/2024 10:00:15.000\",\"2048\",\"12.5\"\r\n",
    )
    .unwrap();
    let mut r = open_one(&path);
    assert_eq!(
        r.warnings(),
        [format!(
            "{path}: line 1, column 4: \"Basic counters, every 15 s (set up by op…\" is not a \
             counter path ({}): its column is skipped",
            CounterPath::parse("Basic counters, every 15 s (set up by ops)").unwrap_err()
        )]
    );
    let names: Vec<&str> = r
        .header()
        .counters
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            r"\\H\Memory\Available Bytes",
            r"\\H\Processor(_Total)\% Processor Time"
        ]
    );
    let records = read_all(&mut *r);
    assert_eq!(
        records.iter().map(|r| r.cells.clone()).collect::<Vec<_>>(),
        [
            vec![Cell::Value(1024.0), Cell::Blank],
            vec![Cell::Value(2048.0), Cell::Value(12.5)]
        ]
    );

    // A skipped cell between counters: the columns keep their own cells.
    let middle = d.path("middle.csv");
    std::fs::write(
        &middle,
        "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\",\"note\",\"\\\\H\\System\\Processes\"\r\n\
         \"03/05/2024 10:00:00.000\",\"1\",\"x\",\"2\"\r\n",
    )
    .unwrap();
    let mut r = open_one(&middle);
    assert_eq!(r.warnings().len(), 1);
    assert_eq!(r.header().counters.len(), 2);
    assert_eq!(
        read_all(&mut *r)[0].cells,
        [Cell::Value(1.0), Cell::Value(2.0)]
    );
    // A row with another number of cells is still an error that says so.
    let short = d.path("short.csv");
    std::fs::write(
        &short,
        "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\",\"note\",\"\\\\H\\System\\Processes\"\r\n\
         \"03/05/2024 10:00:00.000\",\"1\"\r\n",
    )
    .unwrap();
    let mut r = open_one(&short);
    let e = r.read_record(&mut Record::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{short}: line 2, column 3: the row has 2 cells, the header 4 (a time stamp and 2 counters and 1 skipped)")
    );
}
