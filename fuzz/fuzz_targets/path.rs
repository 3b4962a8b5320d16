//! Counter-path parser on arbitrary text: never panics; whatever parses formats and re-parses to the same path.
//!
//! The checks are in `fuzz/checks/path.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/path.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
