//! PAL threshold files and their PowerShell subset on arbitrary text: the reader and the
//! interpreter never panic or hang; whatever parses evaluates within its bounds or says why not.
//!
//! The checks are in `fuzz/checks/rules.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/rules.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
