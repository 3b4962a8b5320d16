//! V2 decoders on arbitrary bytes: the query result (`PERF_DATA_HEADER` and every block type, then the
//! conversion to a snapshot against a fixed registration), registration info, string buffers, instance
//! lists, counter identifier lists and GUID lists. Nothing may panic; decoded models re-encode to the
//! same model.
//!
//! The checks are in `fuzz/checks/v2.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/v2.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
