//! `perfcounters relog` to and from Parquet: one file, Hive-partitioned datasets, round trips to the
//! direct CSV conversion, and bad output; DuckDB (from the venv `.ci/run` makes, named by
//! `PERFCOUNTERS_DUCKDB_PYTHON`) reads what relog writes.

use crate::common;

use common::{assert_success, run, stderr, stdout, Dir};

use std::path::{Path, PathBuf};

const LOG: &str = "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\WEB1\\Processor(_Total)\\% Processor Time\",\"\\\\WEB1\\Memory\\Available MBytes\"\r\n\
\"11/20/2019 23:59:59.500\",\"12.5\",\"2048\"\r\n\
\"11/21/2019 00:00:00.500\",\" \",\"2047\"\r\n\
\"11/21/2019 00:00:01.500\",\"7.25\",\"2046\"\r\n";

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(
                    p.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_file_and_back_with_filters() {
    let d = Dir::new("file");
    let csv = d.file("in.csv", LOG.as_bytes());
    let pq = d.path("out.parquet");
    let o = run(&["relog", &csv, "-f", "parquet", "-o", &pq]);
    assert_success(&o);
    assert!(std::fs::read(&pq).unwrap().starts_with(b"PAR1"));
    // Read back whole: the direct conversion.
    let direct = stdout(&run(&["relog", &csv]));
    assert_eq!(stdout(&run(&["relog", &pq])), direct);
    assert_eq!(stdout(&run(&["relog", &pq, "-f", "csv"])), direct);
    // -c, -b/-e, -t as for any log.
    let o = run(&[
        "relog",
        &pq,
        "-c",
        r"\Memory\*",
        "-b",
        "11/21/2019 00:00:00",
        "-t",
        "2",
    ]);
    assert_eq!(
        stdout(&o),
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\WEB1\\Memory\\Available MBytes\"\r\n\
         \"11/21/2019 00:00:00.500\",\"2047\"\r\n"
    );
    let o = run(&["relog", &pq, "-q"]);
    assert!(stdout(&o).contains("Samples:  3\r\n"), "{}", stdout(&o));
    // The name says Parquet: -f may be left out. An existing file is not replaced unasked.
    let o = run(&["relog", &csv, "-o", &pq]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    let o = run(&["relog", &csv, "-o", &pq, "-y"]);
    assert_success(&o);
    assert_eq!(files_under(&d.0), ["in.csv", "out.parquet"]);
}

#[test]
fn bad_output_and_input() {
    let d = Dir::new("parquet-bad");
    let csv = d.file("in.csv", LOG.as_bytes());
    let o = run(&["relog", &csv, "-f", "parquet"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o)
            .contains("Parquet output needs -o FILE.parquet (one file) or -o DIR/ (a dataset)"),
        "{}",
        stderr(&o)
    );
    let o = run(&["relog", &csv, "-f", "tsv", "-o", &d.path("x.parquet")]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the name says Parquet but the format asked for is TSV"),
        "{}",
        stderr(&o)
    );
    // A dataset directory that holds something else.
    let ds = d.path("ds/");
    std::fs::create_dir_all(&ds).unwrap();
    std::fs::write(d.0.join("ds").join("notes.txt"), b"mine").unwrap();
    let o = run(&["relog", &csv, "-o", &ds]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("notes.txt is not part of a dataset"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(d.0.join("ds").join("notes.txt")).unwrap(),
        b"mine"
    );
    // A Parquet file that is corrupt.
    let pq = d.path("cut.parquet");
    assert_success(&run(&["relog", &csv, "-o", &pq]));
    let bytes = std::fs::read(&pq).unwrap();
    std::fs::write(&pq, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(&["relog", &pq]);
    assert!(!o.status.success());
    // The file, then the Parquet crate's own message, once.
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {pq}: Parquet error: Invalid Parquet file. Corrupt footer\n")
    );
}

#[test]
fn a_dataset_grows_and_reads_back() {
    let d = Dir::new("dataset");
    let web = d.file("web.csv", LOG.as_bytes());
    let db = d.file("db.csv", LOG.replace("WEB1", "DB2").as_bytes());
    let ds = format!("{}/", d.path("ds"));
    let o = run(&["relog", &web, &db, "-f", "parquet", "-o", &ds]);
    assert_success(&o);
    let first = files_under(&d.0.join("ds"));
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(
        first[0].starts_with("machine=DB2/date=2019-11-21/part-"),
        "{first:?}"
    );
    assert!(
        first[1].starts_with("machine=WEB1/date=2019-11-21/part-"),
        "{first:?}"
    );
    // A later run adds a file; the directory needs no trailing slash once it exists.
    let o = run(&["relog", &web, "-o", &d.path("ds")]);
    assert_success(&o);
    let second = files_under(&d.0.join("ds"));
    assert_eq!(second.len(), 3);
    assert!(first.iter().all(|f| second.contains(f)));
    let o = run(&["relog", &ds, "-q"]);
    assert!(stdout(&o).contains("Samples:  3\r\n"), "{}", stdout(&o));
    let o = run(&["relog", &ds, "-c", r"\\DB2\Memory\*", "-f", "csv"]);
    assert_eq!(
        stdout(&o),
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\DB2\\Memory\\Available MBytes\"\r\n\
         \"11/20/2019 23:59:59.500\",\"2048\"\r\n\
         \"11/21/2019 00:00:00.500\",\"2047\"\r\n\
         \"11/21/2019 00:00:01.500\",\"2046\"\r\n"
    );
}

// ---- DuckDB, an independent reader ----

use crate::common::shared_data;

/// The Python that has the `duckdb` package (`PERFCOUNTERS_DUCKDB_PYTHON`, set by `.ci/run`), or
/// `None` after saying why the test skips; under `CI=true` its absence fails the test.
fn duckdb() -> Option<PathBuf> {
    if cfg!(windows) {
        eprintln!(
            "skipped: the DuckDB of target/py-venv is a Linux program (these tests run on Linux)"
        );
        return None;
    }
    let python = std::env::var_os("PERFCOUNTERS_DUCKDB_PYTHON").map(PathBuf::from);
    let works = python.as_ref().is_some_and(|p| {
        std::process::Command::new(p)
            .args(["-c", "import duckdb"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if works {
        return python;
    }
    let why =
        "DuckDB is not available: PERFCOUNTERS_DUCKDB_PYTHON names no Python with the duckdb \
               package (.ci/run makes target/py-venv and sets it)";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// The rows of a DuckDB query: each value as text (`\N` for NULL; floats as Python's `repr`, which
/// reads back to the same double).
fn query(python: &Path, cwd: &Path, sql: &str) -> Vec<Vec<String>> {
    const SCRIPT: &str = "import duckdb, sys\n\
        for row in duckdb.sql(sys.argv[1]).fetchall():\n\
        \x20   print('\\x1f'.join('\\\\N' if v is None else repr(v) if isinstance(v, float) else str(v) for v in row))\n";
    let o = std::process::Command::new(python)
        .current_dir(cwd)
        .args(["-c", SCRIPT, sql])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "DuckDB failed on {sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\x1f').map(str::to_owned).collect())
        .collect()
}

/// One row of the long form: UTC µs, machine, object, parent, instance, index, counter, value.
type LongRow = (
    i64,
    String,
    String,
    String,
    String,
    String,
    String,
    Option<f64>,
);

fn text(s: Option<&str>) -> String {
    s.unwrap_or("\\N").to_owned()
}

/// The long-form rows of a PDH-CSV text (relog's direct conversion), read with the library's CSV
/// reader, which gives UTC instants with the log's own zone rules.
fn expected_rows(csv: &str) -> Vec<LongRow> {
    use perfcounters::log::{CsvReadOptions, LogReader, PdhCsvReader, Record};
    let mut r = PdhCsvReader::new(
        std::io::Cursor::new(csv.as_bytes().to_vec()),
        "direct.csv",
        CsvReadOptions::default(),
    )
    .unwrap();
    let header = r.header().clone();
    let mut rows = Vec::new();
    let mut rec = Record::default();
    while r.read_record(&mut rec).unwrap() {
        // FILETIME ticks (UTC, the reader having applied the log's zone) → µs since 1970.
        let micros = (rec.time.0 - 116_444_736_000_000_000).div_euclid(10);
        for (c, cell) in header.counters.iter().zip(&rec.cells) {
            let p = &c.path;
            rows.push((
                micros,
                text(p.machine.as_deref()),
                p.object.clone(),
                text(p.parent.as_deref()),
                text(p.instance.as_deref()),
                p.index.map_or("\\N".to_owned(), |i| i.to_string()),
                p.counter.clone(),
                cell.value(),
            ));
        }
    }
    sort_rows(&mut rows);
    rows
}

/// Rows in one order whatever their source (by their text: the values are floats, without a total
/// order of their own); each row is formatted once, not at every comparison.
fn sort_rows(rows: &mut [LongRow]) {
    rows.sort_by_cached_key(|r| format!("{r:?}"));
}

fn duckdb_rows(python: &Path, cwd: &Path, from: &str, filter: &str) -> Vec<LongRow> {
    let sql = format!(
        "SELECT epoch_us(time), machine, object, parent, instance, instance_index, counter, value \
         FROM {from} {filter}"
    );
    let mut rows: Vec<LongRow> = query(python, cwd, &sql)
        .into_iter()
        .map(|r| {
            (
                r[0].parse().unwrap(),
                r[1].clone(),
                r[2].clone(),
                r[3].clone(),
                r[4].clone(),
                r[5].clone(),
                r[6].clone(),
                (r[7] != "\\N").then(|| r[7].parse().unwrap()),
            )
        })
        .collect();
    sort_rows(&mut rows);
    rows
}

fn shared_logs() -> Option<Vec<PathBuf>> {
    let data = shared_data::dir("the real Windows logs")?;
    let mut logs: Vec<PathBuf> = ["logs", "blg"]
        .iter()
        .flat_map(|d| std::fs::read_dir(data.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort();
    Some(logs)
}

#[test]
fn duckdb_reads_the_values_nulls_and_times_of_the_csv_conversion() {
    let Some(python) = duckdb() else { return };
    let Some(logs) = shared_logs() else { return };
    let d = Dir::new("duckdb-file");
    for (k, log) in logs.iter().enumerate() {
        let log = log.to_str().unwrap();
        let pq = d.path(&format!("{k}.parquet"));
        assert_success(&run(&["relog", log, "-o", &pq]));
        let direct = stdout(&run(&["relog", log]));
        let expected = expected_rows(&direct);
        let got = duckdb_rows(&python, &d.0, &format!("read_parquet('{k}.parquet')"), "");
        assert_eq!(got.len(), expected.len(), "{log}");
        assert!(
            got == expected,
            "{log}: DuckDB reads other rows than the CSV conversion"
        );
        // CSV → Parquet → CSV and .blg → Parquet → CSV: the same cells as the direct conversion.
        assert_eq!(stdout(&run(&["relog", &pq])), direct, "{log}");
    }
}

#[test]
fn duckdb_queries_a_dataset_of_three_machines() {
    let Some(python) = duckdb() else { return };
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let d = Dir::new("duckdb-dataset");
    let blgs = [
        "pal-vista-SamplePerfmonLog.blg",
        "tx-win8-BasicPerfCounters.blg",
        "powershell-2003-BadCounterSamples.blg",
    ]
    .map(|n| data.join("blg").join(n).to_str().unwrap().to_owned());
    // Two logs in one run, the third in a later run.
    let ds = format!("{}/", d.path("ds"));
    assert_success(&run(&[
        "relog", &blgs[0], &blgs[1], "-f", "parquet", "-o", &ds,
    ]));
    assert_success(&run(&["relog", &blgs[2], "-o", &d.path("ds")]));
    let dataset = "read_parquet('ds/**/*.parquet', hive_partitioning = true, union_by_name = true)";
    // Values and times: the non-blank cells of each log's own CSV conversion.
    let mut expected = Vec::new();
    for b in &blgs {
        expected.extend(
            expected_rows(&stdout(&run(&["relog", b])))
                .into_iter()
                .filter(|r| r.7.is_some()),
        );
    }
    sort_rows(&mut expected);
    let got = duckdb_rows(&python, &d.0, dataset, "WHERE value IS NOT NULL");
    assert_eq!(got.len(), expected.len());
    assert!(
        got == expected,
        "the dataset's values differ from the CSV conversions"
    );
    // Partitions: each row's machine and UTC date are those of its directory.
    let mismatched = query(
        &python,
        &d.0,
        "SELECT count(*) FROM read_parquet('ds/**/*.parquet', filename = true, \
         hive_partitioning = true, union_by_name = true) \
         WHERE CAST(time AT TIME ZONE 'UTC' AS DATE) <> date \
         OR filename NOT LIKE '%machine=' || machine || '/date=' || CAST(date AS VARCHAR) || '/part-%'",
    );
    assert_eq!(mismatched, [["0"]]);
    // The grouped query of docs/columnar.md: per machine, the samples and the busiest processor.
    let grouped = query(
        &python,
        &d.0,
        &format!(
            "SELECT machine, count(DISTINCT time) AS samples, count(DISTINCT date) AS days, \
                round(max(value), 3) AS peak \
         FROM {dataset} \
         WHERE object = 'Processor' AND counter = '% Processor Time' AND instance = '_Total' \
         GROUP BY machine ORDER BY machine"
        ),
    );
    let machines: Vec<&str> = grouped.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(machines[..2], ["GEORGIS3", "ZACH-PC"], "{grouped:?}");
    for row in &grouped {
        // The same peak as the CSV conversion's maximum of that machine's column.
        let peak = expected
            .iter()
            .filter(|r| {
                r.1 == row[0] && r.2 == "Processor" && r.6 == "% Processor Time" && r.4 == "_Total"
            })
            .filter_map(|r| r.7)
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(
            row[3],
            format!("{:?}", (peak * 1000.0).round() / 1000.0),
            "{row:?}"
        );
    }
    assert_eq!(grouped[0][1..3], ["601", "1"]);
    assert_eq!(grouped[1][1..3], ["11", "1"]);
}
