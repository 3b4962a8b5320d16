//! Where the tests find the real Windows data: `../shared/data` beside the repository root, or the folder
//! `PERFCOUNTERS_SHARED_DATA` names (for a checkout that lives elsewhere). Included by path from the test
//! binaries of both crates, so the rule is written once.

use std::path::PathBuf;

/// The shared data folder, or `None` after printing why the test skips; `what` says what lives there.
pub fn dir(what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("PERFCOUNTERS_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
        });
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: {} is absent ({what} live beside the repository)",
            dir.display()
        );
        None
    }
}
