//! V1 decoder on arbitrary bytes: parse, walk every object, counter and instance, read every value and
//! name, convert to a snapshot, and re-encode it; nothing may panic, the fast paths (values through a
//! `ValueLayout`, names into a reused buffer) give what the one-by-one reads give, errors included,
//! and a decoded snapshot re-encodes to a block that decodes to the same snapshot (but for the offsets
//! of counters the encoder lays out again) and encodes again to the same block.
//!
//! The checks are in `fuzz/checks/v1.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/v1.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
