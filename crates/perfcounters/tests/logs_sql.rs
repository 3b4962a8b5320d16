//! SQL logs in SQLite: CSV → SQL → CSV loses nothing; several logs share a database; raw samples.
#![cfg(feature = "sql")]

use crate::support::fixtures::Dir;
use crate::support::shared_data;
use crate::support::vec_log;

use std::io::Cursor;
use std::path::PathBuf;

use perfcounters::log::sql::{list_logs, SqlLogReader, SqlLogWriter, SqlTarget, SqlWriteOptions};
use perfcounters::log::{
    copy, open, open_file, Cell, CounterInfo, CsvFlavor, CsvReadOptions, Filtered, LogCounter,
    LogError, LogHeader, LogKind, LogReader, LogTime, OpenOptions, PdhCsvLogWriter, PdhCsvReader,
    RawCell, Record, RelogFilter, TimeZone,
};
use perfcounters::{CounterPath, CounterType, PdhStatus, RawCounter};
use proptest::prelude::*;
use vec_log::VecLog;

impl Dir {
    /// The database file of the directory.
    fn db(&self) -> PathBuf {
        self.0.join("logs.db")
    }
}

fn csv_reader(text: &[u8]) -> PdhCsvReader {
    PdhCsvReader::new(
        Cursor::new(text.to_vec()),
        "in.csv",
        CsvReadOptions::default(),
    )
    .unwrap()
}

fn to_sql(
    text: &[u8],
    db: &std::path::Path,
    log: &str,
    opts: SqlWriteOptions,
) -> Result<u64, LogError> {
    let mut r = csv_reader(text);
    let mut w = SqlLogWriter::create(db, log, opts)?;
    copy(&mut r, &mut w)
}

fn to_csv(db: &std::path::Path, log: &str, flavor: CsvFlavor) -> Vec<u8> {
    let mut r = SqlLogReader::open(db, Some(log)).unwrap();
    let mut w = PdhCsvLogWriter::new(Vec::new(), flavor, "out.csv");
    copy(&mut r, &mut w).unwrap();
    w.into_inner()
}

const LOG: &str = "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\ATTCOREU01\\Memory\\% Committed Bytes In Use\",\"\\\\ATTCOREU01\\Process(_Total)\\IO Read Operations/sec\",\"\\\\H\\Thread(explorer/0#1)\\Context Switches/sec\"\r\n\
    \"02/01/2014 00:19:44.718\",\"11.560571277026031822\",\" \",\" \"\r\n\
    \"02/01/2014 00:19:59.718\",\"78.80082537392173947\",\"6.9494827586206889356e-005\",\"12345678901234567168\"\r\n\
    \"02/01/2014 00:20:14.718\",\" \",\" \",\" \"\r\n";

#[test]
fn csv_to_sql_to_csv_is_the_identity() {
    let dir = Dir::new("sql-identity");
    assert_eq!(
        to_sql(
            LOG.as_bytes(),
            &dir.db(),
            "load test",
            SqlWriteOptions::default()
        )
        .unwrap(),
        3
    );
    assert_eq!(
        String::from_utf8(to_csv(&dir.db(), "load test", CsvFlavor::Csv)).unwrap(),
        LOG
    );
    // What was stored, as the schema documents it: UTC times, bias and zone, NULL for blanks.
    let conn = sql_dump(&dir.db());
    assert_eq!(
        conn,
        [
            "DisplayToID: load test|2014-02-01 08:19:44.718|2014-02-01 08:20:14.718|3|480|Pacific Standard Time",
            "CounterDetails: 1|\\\\ATTCOREU01|Memory|% Committed Bytes In Use|65792|0|||",
            "CounterDetails: 2|\\\\ATTCOREU01|Process|IO Read Operations/sec|65792|0|_Total||",
            "CounterDetails: 3|\\\\H|Thread|Context Switches/sec|65792|0|0|1|explorer",
            "CounterData rows: 9, NULL values: 5",
        ]
    );
}

/// A few facts of the database, read through the documented columns.
fn sql_dump(db: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut out = Vec::new();
    let d: String = conn
        .query_row(
            "SELECT DisplayString || '|' || LogStartTime || '|' || LogStopTime || '|' || NumberOfRecords || '|' || MinutesToUTC || '|' || TimeZoneName FROM DisplayToID",
            [],
            |r| r.get(0),
        )
        .unwrap();
    out.push(format!("DisplayToID: {d}"));
    let mut s = conn
        .prepare("SELECT CounterID || '|' || MachineName || '|' || ObjectName || '|' || CounterName || '|' || CounterType || '|' || DefaultScale || '|' || IFNULL(InstanceName, '') || '|' || IFNULL(InstanceIndex, '') || '|' || IFNULL(ParentName, '') FROM CounterDetails ORDER BY CounterID")
        .unwrap();
    for r in s.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        out.push(format!("CounterDetails: {}", r.unwrap()));
    }
    let (n, nulls): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), SUM(CounterValue IS NULL) FROM CounterData",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    out.push(format!("CounterData rows: {n}, NULL values: {nulls}"));
    out
}

#[test]
fn several_logs_share_a_database_and_append() {
    let dir = Dir::new("sql-share");
    let db = dir.db();
    let tsv = "\"(PDH-TSV 4.0)\"\t\"\\\\H\\Memory\\Available Bytes\"\r\n\"01/01/2024 00:00:00.000\"\t\"1\"\r\n";
    let more = "\"(PDH-TSV 4.0)\"\t\"\\\\H\\Memory\\Available Bytes\"\t\"\\\\H\\Memory\\Cache Bytes\"\r\n\"01/01/2024 00:00:01.000\"\t\"2\"\t\"3\"\r\n";
    to_sql(LOG.as_bytes(), &db, "a", SqlWriteOptions::default()).unwrap();
    to_sql(tsv.as_bytes(), &db, "b", SqlWriteOptions::default()).unwrap();
    assert_eq!(list_logs(&db).unwrap(), ["a", "b"]);
    // Without -a or -y an existing log is kept.
    let e = to_sql(tsv.as_bytes(), &db, "b", SqlWriteOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "SQL:{}!b: the database already holds a log of this name; append to it (-a) or replace it (-y)",
            db.display()
        )
    );
    let append = SqlWriteOptions {
        append: true,
        ..Default::default()
    };
    to_sql(more.as_bytes(), &db, "b", append).unwrap();
    assert_eq!(
        String::from_utf8(to_csv(&db, "b", CsvFlavor::Tsv)).unwrap(),
        "\"(PDH-TSV 4.0)\"\t\"\\\\H\\Memory\\Available Bytes\"\t\"\\\\H\\Memory\\Cache Bytes\"\r\n\
         \"01/01/2024 00:00:00.000\"\t\"1\"\t\" \"\r\n\
         \"01/01/2024 00:00:01.000\"\t\"2\"\t\"3\"\r\n"
    );
    // -y replaces it; log "a" is untouched.
    let overwrite = SqlWriteOptions {
        overwrite: true,
        ..Default::default()
    };
    to_sql(tsv.as_bytes(), &db, "b", overwrite).unwrap();
    let text = String::from_utf8(to_csv(&db, "b", CsvFlavor::Tsv)).unwrap();
    assert_eq!(text, tsv);
    assert_eq!(
        String::from_utf8(to_csv(&db, "a", CsvFlavor::Csv)).unwrap(),
        LOG
    );
    let e = SqlLogReader::open(&db, Some("c")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "SQL:{}!c: no log of this name; the database holds a, b",
            db.display()
        )
    );
    let e = SqlLogReader::open(&db, None).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "SQL:{}: name the log (SQL:file.db!name): a, b",
            db.display()
        )
    );
    assert_eq!(
        SqlTarget::parse("sql:x/y.db!my log"),
        Some(SqlTarget {
            path: "x/y.db".into(),
            log: Some("my log".into())
        })
    );
    assert_eq!(SqlTarget::parse("x.csv"), None);
}

/// A log of raw samples (what a `.blg` or a SQL log written by relog holds).
fn raw_log() -> VecLog {
    let raw = |n: i64, d: i64, status| {
        Cell::Raw(
            RawCell {
                status,
                raw: RawCounter::new(n, d),
            },
            None,
        )
    };
    let ok = PdhStatus::PDH_CSTATUS_VALID_DATA;
    let header = LogHeader {
        source: "raw".into(),
        kind: LogKind::Binary,
        time_zone: Some(TimeZone::named("Pacific Standard Time", Some(480)).0),
        counters: vec![LogCounter::new(
            CounterPath::parse(r"\\H\Processor(_Total)\% Processor Time").unwrap(),
            Some(CounterInfo {
                counter_type: CounterType::PERF_100NSEC_TIMER_INV,
                default_scale: 0,
                time_base: 10_000_000,
            }),
        )],
    };
    // Records hold UTC instants: 2013-02-20 02:50 UTC is 2013-02-19 18:50 Pacific Standard Time.
    let t = |s| LogTime::from_parts(2013, 2, 20, 2, 50, s, 0).unwrap();
    // 100·(1 − ΔN/ΔD): N rises by 75 of 100 → 25 %; the NO_MACHINE sample has no value and is
    // skipped, so the next one is computed against the last valid one (25 of 100 → 75 %); values
    // above 2^32 go through the signed halves.
    let big = 0x1_8000_0000_i64;
    let records = vec![
        Record {
            time: t(17),
            cells: vec![raw(big, big, ok)],
        },
        Record {
            time: t(18),
            cells: vec![raw(big + 75, big + 100, ok)],
        },
        Record {
            time: t(19),
            cells: vec![raw(0, 0, PdhStatus::PDH_CSTATUS_NO_MACHINE)],
        },
        Record {
            time: t(20),
            cells: vec![raw(big + 100, big + 200, ok)],
        },
        Record {
            time: t(21),
            cells: vec![raw(big + 150, big + 300, ok)],
        },
    ];
    VecLog::new(header, records)
}

#[test]
fn raw_samples_survive_and_are_computed() {
    let dir = Dir::new("sql-raw");
    let db = dir.db();
    let mut cooked = Filtered::new(raw_log(), &RelogFilter::default()).unwrap();
    let mut w = SqlLogWriter::create(&db, "blg", SqlWriteOptions::default()).unwrap();
    copy(&mut cooked, &mut w).unwrap();
    let mut r = SqlLogReader::open(&db, Some("blg")).unwrap();
    let info = r.header().counters[0].info.unwrap();
    assert_eq!(info.counter_type, CounterType::PERF_100NSEC_TIMER_INV);
    assert_eq!(info.time_base, 10_000_000);
    let mut rec = Record::default();
    let mut raws = Vec::new();
    while r.read_record(&mut rec).unwrap() {
        raws.push((
            rec.cells[0].raw().map(|c| c.raw.first),
            rec.cells[0].value(),
        ));
    }
    let big = 0x1_8000_0000_i64;
    assert_eq!(
        raws,
        [
            (Some(big), None),
            (Some(big + 75), Some(25.0)),
            (None, None),
            (Some(big + 100), Some(75.0)),
            (Some(big + 150), Some(50.0)),
        ]
    );
    // Read back and computed again: the same values, in relog's CSV.
    let mut f = Filtered::new(
        SqlLogReader::open(&db, Some("blg")).unwrap(),
        &RelogFilter::default(),
    )
    .unwrap();
    let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out");
    copy(&mut f, &mut w).unwrap();
    assert_eq!(
        String::from_utf8(w.into_inner()).unwrap(),
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\H\\Processor(_Total)\\% Processor Time\"\r\n\
         \"02/19/2013 18:50:17.000\",\" \"\r\n\
         \"02/19/2013 18:50:18.000\",\"25\"\r\n\
         \"02/19/2013 18:50:19.000\",\" \"\r\n\
         \"02/19/2013 18:50:20.000\",\"75\"\r\n\
         \"02/19/2013 18:50:21.000\",\"50\"\r\n"
    );
}

#[test]
fn bad_rows_are_errors_that_name_the_row() {
    let dir = Dir::new("sql-bad");
    let db = dir.db();
    to_sql(LOG.as_bytes(), &db, "a", SqlWriteOptions::default()).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE CounterData SET CounterDateTime = 'yesterday' WHERE CounterID = 2 AND RecordIndex = 2",
        [],
    )
    .unwrap();
    drop(conn);
    let mut r = SqlLogReader::open(&db, Some("a")).unwrap();
    let mut rec = Record::default();
    assert!(r.read_record(&mut rec).unwrap());
    let e = r.read_record(&mut rec).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "SQL:{}!a: CounterData row CounterID 2, RecordIndex 2: CounterDateTime \"yesterday\" is not a time yyyy-mm-dd hh:mm:ss.mmm",
            db.display()
        )
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE CounterDetails SET ObjectName = NULL WHERE CounterID = 3",
        [],
    )
    .unwrap_err();
    conn.execute(
        "UPDATE CounterDetails SET CounterName = 'a\\b' WHERE CounterID = 3",
        [],
    )
    .unwrap();
    drop(conn);
    let e = SqlLogReader::open(&db, Some("a")).unwrap_err();
    assert!(
        e.to_string().ends_with(": CounterDetails row CounterID 3: CounterName \"a\\\\b\" holds a \\, which separates the names of a counter path"),
        "{e}"
    );
}

/// A generated PDH-CSV log as relog writes it: a zone (or none), paths from parts, values that are
/// any finite `f64` (integers beyond 2^53 included) or blank, strictly increasing times.
fn arb_log() -> impl Strategy<Value = String> {
    let name = "[A-Za-z][A-Za-z0-9 %/._-]{0,12}";
    let path = (
        proptest::option::of("[A-Z][A-Z0-9-]{0,8}"),
        name,
        proptest::option::of((
            proptest::option::of("[a-z]{1,6}"),
            "[a-z_][a-z0-9 _]{0,6}",
            proptest::option::of(1u32..4),
        )),
        name,
    )
        .prop_map(|(m, o, inst, c)| {
            let mut p = CounterPath::new(o.trim_end(), c.trim_end());
            p.machine = m;
            if let Some((parent, i, idx)) = inst {
                p.instance = Some(i.trim_end().to_owned());
                p.parent = parent;
                p.index = idx;
            }
            p.to_string()
        })
        .prop_filter("parses back", |s| {
            CounterPath::parse(s)
                .map(|p| p.to_string() == *s)
                .unwrap_or(false)
        });
    let zone = proptest::option::of(("[A-Za-z][A-Za-z .]{0,20}", -720i32..=840));
    let value = proptest::option::of(prop_oneof![
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        (-1e6f64..1e6).prop_map(|v| (v * 1e6).round() / 1e6),
        (0u64..u64::MAX).prop_map(|v| v as f64),
    ]);
    (zone, proptest::collection::vec(path, 1..6), 0usize..6)
        .prop_flat_map(move |(zone, paths, rows)| {
            let n = paths.len();
            (
                Just(zone),
                Just(paths),
                proptest::collection::vec(
                    (
                        1i64..100_000_000,
                        proptest::collection::vec(value.clone(), n),
                    ),
                    rows,
                ),
            )
        })
        .prop_map(|(zone, paths, rows)| {
            let mut header = LogHeader {
                source: "gen".into(),
                kind: LogKind::Csv,
                time_zone: zone.map(|(name, bias)| TimeZone::named(name.trim_end(), Some(bias)).0),
                counters: Vec::new(),
            };
            // Duplicate paths would be one column in a database; a PDH log never repeats a path.
            let mut seen = std::collections::HashSet::new();
            let keep: Vec<bool> = paths
                .iter()
                .map(|p| seen.insert(p.to_lowercase()))
                .collect();
            header.counters = paths
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(p, _)| LogCounter::new(CounterPath::parse(p).unwrap(), None))
                .collect();
            let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "gen");
            use perfcounters::log::LogWriter;
            w.write_header(&header).unwrap();
            let mut t = LogTime::from_parts(2020, 1, 1, 0, 0, 0, 0).unwrap().0;
            for (step, vals) in rows {
                t += step * 10_000;
                let cells = vals
                    .iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(v, _)| v.map_or(Cell::Blank, Cell::Value))
                    .collect();
                w.write_record(&Record {
                    time: LogTime(t),
                    cells,
                })
                .unwrap();
            }
            String::from_utf8(w.into_inner()).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn generated_logs_survive_csv_to_sql_to_csv(log in arb_log()) {
        let dir = Dir::new("sql-prop");
        to_sql(log.as_bytes(), &dir.db(), "gen", SqlWriteOptions::default()).unwrap();
        let back = String::from_utf8(to_csv(&dir.db(), "gen", CsvFlavor::Csv)).unwrap();
        prop_assert_eq!(back, log);
        let target = format!("SQL:{}!gen", dir.db().display());
        prop_assert_eq!(times(&target, true), times(&target, false));
    }
}

/// A PDH-CSV log written across both daylight-saving changes of US Pacific time (2024-03-10
/// 01:59:59 PST → 03:00:00 PDT; 2024-11-03 01:59:59 PDT → 01:00:00 PST, the hour repeated).
const DST_LOG: &str =
    "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\H\\Memory\\Available MBytes\"\r\n\
    \"03/10/2024 01:59:58.000\",\"1\"\r\n\
    \"03/10/2024 01:59:59.000\",\"2\"\r\n\
    \"03/10/2024 03:00:00.000\",\"3\"\r\n\
    \"03/10/2024 03:00:01.000\",\"4\"\r\n\
    \"11/03/2024 01:59:59.000\",\"5\"\r\n\
    \"11/03/2024 01:00:00.000\",\"6\"\r\n\
    \"11/03/2024 01:00:01.000\",\"7\"\r\n\
    \"11/03/2024 02:00:00.000\",\"8\"\r\n";

#[test]
fn csv_to_sql_to_csv_across_both_dst_changes() {
    let dir = Dir::new("sql-dst");
    let db = dir.db();
    assert_eq!(
        to_sql(DST_LOG.as_bytes(), &db, "dst", SqlWriteOptions::default()).unwrap(),
        8
    );
    // The SQL log stores UTC instants: continuous, one second apart across each change.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let times: Vec<String> = conn
        .prepare("SELECT CounterDateTime FROM CounterData ORDER BY RecordIndex")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|t| t.unwrap().trim_end_matches('\0').to_owned())
        .collect();
    assert_eq!(
        times,
        [
            "2024-03-10 09:59:58.000",
            "2024-03-10 09:59:59.000",
            "2024-03-10 10:00:00.000",
            "2024-03-10 10:00:01.000",
            "2024-11-03 08:59:59.000",
            "2024-11-03 09:00:00.000",
            "2024-11-03 09:00:01.000",
            "2024-11-03 10:00:00.000",
        ]
    );
    let (bias, zone): (i64, String) = conn
        .query_row(
            "SELECT MinutesToUTC, TimeZoneName FROM DisplayToID",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((bias, zone.as_str()), (480, "Pacific Standard Time"));
    // Read back: the zone's rules turn the UTC instants into the local times written.
    let mut r = SqlLogReader::open(&db, Some("dst")).unwrap();
    let mut rec = Record::default();
    let mut utc = Vec::new();
    while r.read_record(&mut rec).unwrap() {
        utc.push(rec.time);
    }
    assert!(utc.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        String::from_utf8(to_csv(&db, "dst", CsvFlavor::Csv)).unwrap(),
        DST_LOG.replace("    ", "")
    );
}

/// Instance names as Windows and the Linux source store them, with the path's delimiters in them:
/// Linux mount points (`/`, `/mnt/data`), a `#` that is not an index, parentheses, a parent.
fn verbatim_names_log() -> VecLog {
    let column = |instance: &str, parent: Option<&str>, index: Option<u32>| {
        let mut path = CounterPath::new("LogicalDisk", "% Free Space")
            .with_machine("H")
            .with_instance(instance);
        path.parent = parent.map(str::to_owned);
        path.index = index;
        LogCounter::new(
            path,
            Some(CounterInfo {
                counter_type: CounterType::PERF_COUNTER_LARGE_RAWCOUNT,
                default_scale: 0,
                time_base: 0,
            }),
        )
    };
    let counters = vec![
        column("/", None, None),
        column("/mnt/data", None, None),
        column("C:/mnt#2", None, None),
        column("C:/mnt#2", None, Some(1)),
        column("foo (x86)", None, None),
        column("a)b(", Some("p/q"), Some(3)),
    ];
    let n = counters.len();
    let header = LogHeader {
        source: "names".into(),
        kind: LogKind::Binary,
        time_zone: Some(TimeZone::named("Pacific Standard Time", Some(480)).0),
        counters,
    };
    let records = (0..3)
        .map(|r| Record {
            time: LogTime::from_parts(2024, 5, 1, 12, 0, r, 0).unwrap(),
            cells: (0..n)
                .map(|c| {
                    if (r as usize + c).is_multiple_of(4) {
                        Cell::Blank
                    } else {
                        Cell::Value((10 * c) as f64 + f64::from(r))
                    }
                })
                .collect(),
        })
        .collect();
    VecLog::new(header, records)
}

#[test]
fn instance_names_with_path_delimiters_read_back_verbatim() {
    let dir = Dir::new("sql-names");
    let db = dir.db();
    let mut w = SqlLogWriter::create(&db, "names", SqlWriteOptions::default()).unwrap();
    assert_eq!(copy(&mut verbatim_names_log(), &mut w).unwrap(), 3);
    // Each name in its own column, as written.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let rows: Vec<(String, Option<i64>, Option<String>)> = conn
        .prepare(
            "SELECT InstanceName, InstanceIndex, ParentName FROM CounterDetails ORDER BY CounterID",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        rows,
        [
            (s("/"), None, None),
            (s("/mnt/data"), None, None),
            (s("C:/mnt#2"), None, None),
            (s("C:/mnt#2"), Some(1), None),
            (s("foo (x86)"), None, None),
            (s("a)b("), Some(3), Some(s("p/q"))),
        ]
    );
    drop(conn);
    // Read back: the same columns (paths and names), the same CSV as the direct conversion.
    let r = SqlLogReader::open(&db, Some("names")).unwrap();
    let direct = verbatim_names_log();
    assert_eq!(r.header().counters, direct.header().counters);
    assert_eq!(
        r.header()
            .counters
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        [
            r"\\H\LogicalDisk(/)\% Free Space",
            r"\\H\LogicalDisk(/mnt/data)\% Free Space",
            r"\\H\LogicalDisk(C:/mnt#2)\% Free Space",
            r"\\H\LogicalDisk(C:/mnt#2#1)\% Free Space",
            r"\\H\LogicalDisk(foo (x86))\% Free Space",
            r"\\H\LogicalDisk(p/q/a)b(#3)\% Free Space",
        ]
    );
    let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out");
    copy(&mut verbatim_names_log(), &mut w).unwrap();
    let direct_csv = w.into_inner();
    assert_eq!(to_csv(&db, "names", CsvFlavor::Csv), direct_csv);
    assert_eq!(
        String::from_utf8(direct_csv).unwrap().lines().nth(1),
        Some(r#""05/01/2024 05:00:00.000"," ","10","20","30"," ","50""#)
    );
}

/// The tables as relog creates them through ODBC: no `LogCounters`, no `MultiCount` or time base.
const RELOG_SCHEMA: &str =
    "CREATE TABLE DisplayToID (GUID TEXT, RunID INTEGER, DisplayString TEXT, LogStartTime TEXT,
         LogStopTime TEXT, NumberOfRecords INTEGER, MinutesToUTC INTEGER, TimeZoneName TEXT);
     CREATE TABLE CounterDetails (CounterID INTEGER PRIMARY KEY, MachineName TEXT, ObjectName TEXT,
         CounterName TEXT, CounterType INTEGER, DefaultScale INTEGER, InstanceName TEXT,
         InstanceIndex INTEGER, ParentName TEXT, ParentObjectID INTEGER);
     CREATE TABLE CounterData (GUID TEXT, CounterID INTEGER, RecordIndex INTEGER,
         CounterDateTime TEXT, CounterValue REAL, FirstValueA INTEGER, FirstValueB INTEGER,
         SecondValueA INTEGER, SecondValueB INTEGER, PRIMARY KEY (GUID, RecordIndex, CounterID));
";

/// A `CounterDetails` row as a database written by relog holds it (no `LogCounters`, the
/// instance name verbatim, `InstanceIndex` 0 for the first instance of a name): read back whole.
#[test]
fn a_relog_database_with_a_verbatim_instance_name() {
    let dir = Dir::new("sql-relog-names");
    let db = dir.db();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        &(RELOG_SCHEMA.to_owned()
            + "INSERT INTO DisplayToID VALUES ('G', 0, 'run', '2024-05-01 12:00:00.000',
             '2024-05-01 12:00:01.000', 2, 0, 'UTC');
         INSERT INTO CounterDetails VALUES (1, '\\\\H', 'LogicalDisk', 'Free Megabytes', 65792, 0,
             'C:/mnt#2', 0, NULL, NULL);
         INSERT INTO CounterData VALUES ('G', 1, 1, '2024-05-01 12:00:00.000', 7, 7, 0, 0, 0);
         INSERT INTO CounterData VALUES ('G', 1, 2, '2024-05-01 12:00:01.000', 8, 8, 0, 0, 0);"),
    )
    .unwrap();
    drop(conn);
    let r = SqlLogReader::open(&db, Some("run")).unwrap();
    let c = &r.header().counters[0];
    assert_eq!(c.name, r"\\H\LogicalDisk(C:/mnt#2)\Free Megabytes");
    assert_eq!(
        (
            c.path.parent.as_deref(),
            c.path.instance.as_deref(),
            c.path.index
        ),
        (None, Some("C:/mnt#2"), None)
    );
    let mut f = Filtered::new(r, &RelogFilter::default()).unwrap();
    let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out");
    copy(&mut f, &mut w).unwrap();
    assert_eq!(
        String::from_utf8(w.into_inner()).unwrap(),
        "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\H\\LogicalDisk(C:/mnt#2)\\Free Megabytes\"\r\n\
         \"05/01/2024 12:00:00.000\",\"7\"\r\n\
         \"05/01/2024 12:00:01.000\",\"8\"\r\n"
    );
}

/// The records' times of the SQL log `target` (`SQL:file.db!name`) opened by `log::open` for its
/// times alone or whole (no column selected, as the first pass of `analyze` reads it), and the
/// error that ends them; with the number of columns of the header.
fn times(target: &str, times_only: bool) -> (usize, Vec<Result<i64, String>>) {
    let options = OpenOptions::default().with_times_only(times_only);
    let mut r = open(target, &options).unwrap().remove(0);
    let columns = r.header().counters.len();
    r.select_columns(&vec![false; columns]);
    let mut out = Vec::new();
    let mut rec = Record::default();
    loop {
        match r.read_record(&mut rec) {
            Ok(true) => out.push(Ok(rec.time.0)),
            Ok(false) => break,
            Err(e) => {
                out.push(Err(e.to_string()));
                break;
            }
        }
    }
    (if times_only { columns } else { 0 }, out)
}

#[test]
fn times_alone_are_the_full_readers_times_on_the_shared_logs() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let dir = Dir::new("sql-times");
    let db = dir.db();
    // Every shared log (three PDH-CSV, three .blg with raw samples) in one database.
    let logs = [
        ("logs/en-pst-BM_Active_Load_Test.csv", 351),
        ("logs/en-edt-process-DataCollector01.csv", 208),
        ("logs/en-tokyo-5964cols-Sample01.csv", 16),
        ("blg/tx-win8-BasicPerfCounters.blg", 601),
        ("blg/pal-vista-SamplePerfmonLog.blg", 11),
        ("blg/powershell-2003-BadCounterSamples.blg", 275),
    ];
    for (i, (file, _)) in logs.iter().enumerate() {
        let mut r = open_file(&data.join(file), &OpenOptions::default()).unwrap();
        let mut w =
            SqlLogWriter::create(&db, &format!("log{i}"), SqlWriteOptions::default()).unwrap();
        copy(&mut *r, &mut w).unwrap();
    }
    for (i, (file, records)) in logs.iter().enumerate() {
        let target = format!("SQL:{}!log{i}", db.display());
        let (columns, alone) = times(&target, true);
        assert_eq!(columns, 0, "{file}: no column");
        assert_eq!(alone.len(), *records, "{file}");
        assert!(alone.iter().all(Result::is_ok), "{file}");
        assert_eq!(alone, times(&target, false).1, "{file}");
    }
}

#[test]
fn times_alone_of_foreign_and_damaged_databases() {
    let dir = Dir::new("sql-times-foreign");
    let db = dir.db();
    let conn = rusqlite::Connection::open(&db).unwrap();
    // As relog writes it: no LogCounters; two logs; a CounterData row of a counter without a
    // CounterDetails row (no column: the full reader skips it); rows of one record whose times
    // differ (the first row's, by CounterID, is the record's).
    conn.execute_batch(
        &(RELOG_SCHEMA.to_owned()
            + "INSERT INTO DisplayToID VALUES ('G', 0, 'a', NULL, NULL, 3, 480, 'Pacific Standard Time');
         INSERT INTO DisplayToID VALUES ('H', 0, 'b', NULL, NULL, 1, 0, 'UTC');
         INSERT INTO CounterDetails VALUES (2, '\\\\H', 'Memory', 'Available Bytes', 65792, 0, NULL, NULL, NULL, NULL);
         INSERT INTO CounterDetails VALUES (3, '\\\\H', 'Memory', 'Committed Bytes', 65792, 0, NULL, NULL, NULL, NULL);
         INSERT INTO CounterData VALUES ('G', 1, 1, '2024-05-01 11:59:00.000', 0, NULL, NULL, NULL, NULL);
         INSERT INTO CounterData VALUES ('G', 2, 1, '2024-05-01 12:00:00.000', 1, NULL, NULL, NULL, NULL);
         INSERT INTO CounterData VALUES ('G', 3, 1, '2024-05-01 12:00:00.500', 2, NULL, NULL, NULL, NULL);
         INSERT INTO CounterData VALUES ('G', 1, 2, '2024-05-01 12:00:30.000', 0, NULL, NULL, NULL, NULL);
         INSERT INTO CounterData VALUES ('G', 3, 3, '2024-05-01 12:01:00.000', 3, NULL, NULL, NULL, NULL);
         INSERT INTO CounterData VALUES ('G', 2, 5, '2024-05-01 12:02:00.000', 4, NULL, NULL, NULL, NULL);
         INSERT INTO CounterData VALUES ('H', 2, 1, '2024-05-01 13:00:00.000', 5, NULL, NULL, NULL, NULL);"),
    )
    .unwrap();
    let target = |log: &str| format!("SQL:{}!{log}", db.display());
    let at = |h, m, s, ms| Ok(LogTime::from_parts(2024, 5, 1, h, m, s, ms).unwrap().0);
    let a = times(&target("a"), true);
    assert_eq!(
        a,
        (0, vec![at(12, 0, 0, 0), at(12, 1, 0, 0), at(12, 2, 0, 0)])
    );
    assert_eq!(a, times(&target("a"), false));
    assert_eq!(times(&target("b"), true), (0, vec![at(13, 0, 0, 0)]));
    // A bad time in a record's first row: the same records before it and the same error.
    conn.execute(
        "UPDATE CounterData SET CounterDateTime = 'noon' WHERE GUID = 'G' AND RecordIndex = 3",
        [],
    )
    .unwrap();
    let a = times(&target("a"), true);
    assert_eq!(a.1.len(), 2);
    assert_eq!(
        a.1[1],
        Err(format!(
            "SQL:{}!a: CounterData row CounterID 3, RecordIndex 3: CounterDateTime \"noon\" is \
             not a time yyyy-mm-dd hh:mm:ss.mmm",
            db.display()
        ))
    );
    assert_eq!(a, times(&target("a"), false));
}
