//! SQL log row decoding on arbitrary values: never panics; a decoded row re-encodes to the same row.
//!
//! The checks are in `fuzz/checks/sql_rows.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/sql_rows.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
