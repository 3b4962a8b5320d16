//! A one-sample capture built from arbitrary bytes, replayed: the V2 registration structure, its
//! counter-name string buffer, the `PerfQueryCounterInfo` list, the V2 data block and a V1 block are
//! slices of the input (split at `FF FE FD FC`; the counterset is named "Fuzz"). Whatever
//! `ReplaySource` accepts must go through its catalog, a collection and the query engine without
//! panicking.
//!
//! The checks are in `fuzz/checks/capture.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/capture.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
