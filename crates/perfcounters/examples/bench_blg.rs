//! Writes the benchmarks' generated binary log (see `benches/support/blg_log.rs`: 200 counters,
//! 500 columns, `PERFCOUNTERS_BLG_BENCH_MB` megabytes, 500 by default) to
//! `target/blg-bench/counters-<size>mb.blg`, or writes the existing one again, and prints its path.
//! `scripts/whole-runs.py` converts it as a user would.
//!
//! ```text
//! PERFCOUNTERS_BLG_BENCH_MB=200 cargo run --release -p perfcounters --example bench_blg
//! ```

#[path = "../benches/support/blg_log.rs"]
mod blg_log;

fn main() {
    let (path, len) = blg_log::log_path();
    println!("{}\t{len}", path.display());
}
