//! The Parquet log reader at the level of our schema mapping: a header read from key-value metadata
//! built from the bytes (`header_from_metadata`), and a long-form batch built from the bytes
//! (`records_from_long`: any times, any path parts, plain or dictionary strings, nulls, raw
//! columns or not). Never panics; whatever maps to records writes to a Parquet log
//! (`ParquetLogWriter`) that reads back (`ParquetLogReader`) to the same header and records.
//!
//! The checks are in `fuzz/checks/parquet_log.rs`, which `cargo test` also runs over the kept
//! corpus.
//!
//! Input: the counters metadata text, a `FF` byte, then rows of 12 bytes (time, path choice, value,
//! status choice); the first byte picks plain or dictionary strings and whether raw columns exist.
#![no_main]

#[path = "../checks/parquet_log.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
