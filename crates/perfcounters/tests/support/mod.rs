//! What the test modules share: the real Windows data ([`shared_data`]), fixtures built the way
//! Windows writes them ([`fixtures`]), a log held in memory ([`vec_log`]), a real log rewritten
//! with one column changed ([`rewrite`]), the check that every test file is compiled
//! ([`layout`]), and the small helpers below. `fixtures.rs`, `layout.rs`, `rewrite.rs` and
//! `shared_data.rs` are also included by path into the CLI's test binary.

pub mod fixtures;
pub mod layout;
pub mod rewrite;
pub mod shared_data;
pub mod vec_log;

use std::path::PathBuf;

use perfcounters::format::v2::Guid;
use perfcounters::log::LogTime;

/// The log time `y-mo-d h:mi:s.ms`, which must exist.
pub fn log_time(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, ms: u32) -> LogTime {
    LogTime::from_parts(y, mo, d, h, mi, s, ms).unwrap()
}

/// The real Windows logs of the shared data folder, or `None` when the test skips.
pub fn logs_dir() -> Option<PathBuf> {
    shared_data::dir("the real Windows logs")
}

/// Writes `v` little-endian at byte `at` of `b`.
pub fn set_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// The GUID of the Processor Information counterset, `{b4fc721a-0378-476f-89ba-a5a79f810b36}`.
pub fn processor_guid() -> Guid {
    "{b4fc721a-0378-476f-89ba-a5a79f810b36}".parse().unwrap()
}
