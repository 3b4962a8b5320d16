//! The fuzz targets' findings stay found: every input kept in `fuzz/regressions/<target>/` (a
//! minimized corpus of each target's runs, and the inputs of past findings) goes through the same
//! checks the fuzz target runs (`fuzz/checks/<target>.rs`, included here), on a stable toolchain and
//! without a fuzzing run. An input kept gzip-compressed (`*.gz`: the `.blg` logs, mostly buffer
//! padding) is decompressed first. `docs/fuzzing.md` says how the corpora were made.

use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

#[path = "../../../fuzz/checks/blg.rs"]
mod blg;
#[path = "../../../fuzz/checks/capture.rs"]
mod capture;
#[path = "../../../fuzz/checks/csv_log.rs"]
mod csv_log;
#[path = "../../../fuzz/checks/names.rs"]
mod names;
#[cfg(feature = "arrow")]
#[path = "../../../fuzz/checks/parquet_log.rs"]
mod parquet_log;
#[path = "../../../fuzz/checks/path.rs"]
mod path;
#[path = "../../../fuzz/checks/query.rs"]
mod query;
#[path = "../../../fuzz/checks/rules.rs"]
mod rules;
#[path = "../../../fuzz/checks/sql_rows.rs"]
mod sql_rows;
#[path = "../../../fuzz/checks/v1.rs"]
mod v1;
#[path = "../../../fuzz/checks/v2.rs"]
mod v2;

/// The kept inputs of `target`, in name order.
fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// The bytes of a kept input, decompressed when its name ends in `.gz`.
fn input(file: &Path) -> Vec<u8> {
    let bytes = std::fs::read(file).expect("kept input");
    if file.extension().is_some_and(|e| e == "gz") {
        let mut data = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut data)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        data
    } else {
        bytes
    }
}

/// Runs `check` on every kept input of `target`; fails naming each input whose check panicked.
fn replay(target: &str, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no kept inputs for {target}");
    let failed: Vec<String> = files
        .iter()
        .filter(|file| {
            let data = input(file);
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} kept {target} inputs fail the fuzz target's checks:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

#[test]
fn blg_inputs() {
    replay("blg", blg::run);
    // Once decompressed, the kept inputs are logs (most of them whole ones).
    let files = inputs("blg");
    let logs = files
        .iter()
        .filter(|f| perfcounters::format::blg::looks_like_blg(&input(f)))
        .count();
    assert!(
        logs * 2 > files.len(),
        "{logs} of {} look like logs",
        files.len()
    );
}

#[test]
fn capture_inputs() {
    replay("capture", capture::run);
}

#[test]
fn csv_log_inputs() {
    replay("csv_log", csv_log::run);
}

#[test]
fn names_inputs() {
    replay("names", names::run);
}

#[cfg(feature = "arrow")]
#[test]
fn parquet_log_inputs() {
    replay("parquet_log", parquet_log::run);
}

#[test]
fn path_inputs() {
    replay("path", path::run);
}

#[test]
fn query_inputs() {
    replay("query", query::run);
}

#[test]
fn rules_inputs() {
    replay("rules", rules::run);
}

#[test]
fn sql_rows_inputs() {
    replay("sql_rows", sql_rows::run);
}

#[test]
fn v1_inputs() {
    replay("v1", v1::run);
}

#[test]
fn v2_inputs() {
    replay("v2", v2::run);
}

/// The checks do fail on a broken invariant: a check that panics on one input is reported.
#[test]
fn a_failing_check_is_reported() {
    let result = catch_unwind(|| {
        replay("path", |data| assert!(data.is_empty(), "not empty"));
    });
    let message = result.expect_err("a failing check fails the replay");
    let text = message
        .downcast_ref::<String>()
        .expect("the replay's message");
    assert!(text.contains("kept path inputs fail"), "{text}");
}
