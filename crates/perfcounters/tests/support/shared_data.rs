//! Where the tests find the real Windows data: `../shared/data` beside the repository root, or the folder
//! `PERFCOUNTERS_SHARED_DATA` names (for a checkout that lives elsewhere). Included by path from the test
//! binaries of both crates, so the rule is written once.
//!
//! When `PERFCOUNTERS_DATA_REPORT` names a file, each test that asks for the folder appends a line
//! to it, `ran <test>` or `skipped <test>`: `.ci/run` counts them, so that a skip shows without
//! `--nocapture`.

use std::path::PathBuf;

/// The shared data folder, or `None` after printing why the test skips; `what` says what lives there.
pub fn dir(what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("PERFCOUNTERS_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
        });
    if dir.is_dir() {
        report("ran");
        Some(dir)
    } else {
        report("skipped");
        eprintln!(
            "skipped: {} is absent ({what} live beside the repository)",
            dir.display()
        );
        None
    }
}

/// Appends `outcome` and the test's name (the test harness names each test's thread after it) to
/// the file `PERFCOUNTERS_DATA_REPORT` names, if any. A report that cannot be written is left out:
/// it is a count for people, not part of the test.
fn report(outcome: &str) {
    use std::io::Write;
    let Some(file) = std::env::var_os("PERFCOUNTERS_DATA_REPORT") else {
        return;
    };
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("unnamed");
    let crate_name = env!("CARGO_PKG_NAME");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        let _ = f.write_all(format!("{outcome} {crate_name}::{test}\n").as_bytes());
    }
}
