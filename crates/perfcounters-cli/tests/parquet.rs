//! `perfcounters relog` to and from Parquet: one file, Hive-partitioned datasets, round trips to the
//! direct CSV conversion, and bad output; DuckDB (from the venv `.ci/run` makes, named by
//! `PERFCOUNTERS_DUCKDB_PYTHON`) reads what relog writes.

mod common;

use common::{assert_success, run, stderr, stdout, tempdir};

use std::path::{Path, PathBuf};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        Dir(tempdir(name))
    }
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_owned()
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
    let d = Dir::new("bad");
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
    assert!(
        stderr(&o).contains("cut.parquet: Parquet:"),
        "{}",
        stderr(&o)
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
