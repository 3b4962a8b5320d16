//! Name-table parsers on arbitrary bytes: never panic; whatever parses re-encodes to the same table.
//!
//! The checks are in `fuzz/checks/names.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/names.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
