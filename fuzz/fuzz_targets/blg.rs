//! A binary log (`.blg`) from arbitrary bytes: every record the reader hands out is parsed as its
//! kind says (counter list, sample sub-records, wildcard instances and their names, V1 blocks and
//! their snapshots, name-table chunks, trailer), then the whole log is read as columns and samples.
//! Invariants: nothing panics or hangs; in every sample each column has at most one value, and every
//! value's column exists; the display order is a permutation of the columns.
//!
//! The checks are in `fuzz/checks/blg.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/blg.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
