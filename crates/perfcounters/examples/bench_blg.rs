//! Writes the benchmarks' generated binary log (see `benches/support/blg_log.rs`: 200 counters,
//! 500 columns, `PERFCOUNTERS_BLG_BENCH_MB` megabytes, 500 by default) to
//! `target/blg-bench/counters-<size>mb.blg`, or writes the existing one again, and prints its path.
//! `scripts/whole-runs.py` converts it as a user would.
//!
//! `bench_blg fleet N` writes instead N logs of N machines (`BENCH01` …, `PERFCOUNTERS_FLEET_MB`
//! megabytes each, 16 by default) to `target/blg-bench/fleet-<size>mb/` and, beside them, the
//! analysis benchmarks' rules as `bench.xml`; it prints the logs' paths, one per line, and the
//! rules' path last. `scripts/fleet-bench.sh` analyses them as a user would.
//!
//! ```text
//! PERFCOUNTERS_BLG_BENCH_MB=200 cargo run --release -p perfcounters --example bench_blg
//! cargo run --release -p perfcounters --example bench_blg -- fleet 12
//! ```

#[path = "../benches/support/analyze_rules.rs"]
mod analyze_rules;
#[path = "../benches/support/blg_log.rs"]
mod blg_log;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("fleet") {
        let count: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(12);
        let mb: u64 = std::env::var("PERFCOUNTERS_FLEET_MB")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(16);
        let paths = blg_log::fleet_paths(count, mb);
        for p in &paths {
            println!("{}", p.display());
        }
        if let Some(dir) = paths.first().and_then(|p| p.parent()) {
            let rules = dir.join("bench.xml");
            std::fs::write(&rules, analyze_rules::bench_rules_xml()).unwrap();
            println!("{}", rules.display());
        }
        return;
    }
    let (path, len) = blg_log::log_path();
    println!("{}\t{len}", path.display());
}
