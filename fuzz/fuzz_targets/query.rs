//! A query over replayed V1 block files, through both paths: the owned snapshot (`Source::collect`
//! then `Query::update`) and the block read in place (`Query::collect`, which takes the replay's
//! `BlockSample`). The blocks are a valid block (Process with duplicate names and process ids, Thread
//! with parents, System) and up to two copies of it changed by the input: each change XORs a
//! byte at a position, so lengths, counts, offsets, names, parents and values go bad in every way;
//! an input starting with `R` is also replayed as a raw block of its own. Both paths must give the
//! same values, statuses, raw samples and errors at every collection.
//!
//! The checks are in `fuzz/checks/query.rs`, which `cargo test` also runs over the kept corpus.
#![no_main]

#[path = "../checks/query.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
