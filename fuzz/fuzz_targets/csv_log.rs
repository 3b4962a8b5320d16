//! PDH-CSV / PDH-TSV reader on arbitrary bytes: never panics; whatever reads writes back (relog's
//! style) to a log that reads to the same header and records.
//!
//! The checks are in `fuzz/checks/csv_log.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/csv_log.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
