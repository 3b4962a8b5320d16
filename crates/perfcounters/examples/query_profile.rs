//! Repeats the `v1_global` query collection of `benches/decode.rs` (the same block, paths and
//! replay) outside criterion, for profilers and for the figures of docs/benchmarks.md that are not
//! criterion's: instruction counts and what the `query` bench's setup costs the collection after it.
//!
//! ```sh
//! cargo build --release -p perfcounters --example query_profile
//! # N steady collections (the query and the source of `v1_global/query_steady`), after one untimed
//! # collection in place; prints the mean time of one.
//! target/release/examples/query_profile steady 400
//! # Instructions of one steady collection: the difference of two runs, divided by 20.
//! valgrind --tool=callgrind --toggle-collect='perfcounters::query::Query::collect*' \
//!     target/release/examples/query_profile steady 40   # and again with 20
//! # N iterations of `v1_global/query` (a fresh copy of the primed query and a fresh source, one
//! # untimed collection in place, then the timed one); prints the median and spread. Instead of the
//! # copy: `keep` keeps one query from one iteration to the next, and `keep-buffer`,
//! # `keep-strings` and `keep-copy` also write and free, in the setup, one buffer as large as the
//! # query's copy was before a clone shared the counters (35 MB), as many small strings as it
//! # allocated, or a copy of the query.
//! target/release/examples/query_profile after-setup 300 [copy|keep|keep-buffer|keep-strings|keep-copy]
//! ```

#[allow(dead_code, unused_imports)]
#[path = "../benches/decode.rs"]
mod decode;

use perfcounters::query::Query;
use perfcounters::source::replay::{BlockRecording, ReplaySource};
use perfcounters::source::Source;
use perfcounters::FormatOptions;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: query_profile steady N | after-setup N [copy|keep|keep-buffer|keep-strings|keep-copy]";
    let (Some(mode), Some(n)) = (
        args.first(),
        args.get(1).and_then(|n| n.parse::<usize>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if n == 0 {
        eprintln!("{usage} (N ≥ 1)");
        std::process::exit(2);
    }
    let dir =
        std::env::temp_dir().join(format!("perfcounters-query-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    match (mode.as_str(), args.get(2).map_or("copy", String::as_str)) {
        ("steady", _) => steady(&dir, n),
        (
            "after-setup",
            setup @ ("copy" | "keep" | "keep-buffer" | "keep-strings" | "keep-copy"),
        ) => after_setup(&dir, n, setup),
        _ => {
            eprintln!("{usage}");
            let _ = std::fs::remove_dir_all(&dir);
            std::process::exit(2);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `count` block files of consecutive generations (at most 64 distinct ones, repeated).
fn block_files(dir: &std::path::Path, count: usize) -> Vec<PathBuf> {
    let distinct: Vec<PathBuf> = (0..count.min(64) as u64)
        .map(|g| {
            let path = dir.join(format!("{g}.blk"));
            std::fs::write(&path, decode::global_block_of(g)).expect("a block file");
            path
        })
        .collect();
    (0..count)
        .map(|i| distinct[i % distinct.len()].clone())
        .collect()
}

/// The bench's query, with every path added.
fn new_query() -> Query {
    let mut query = Query::new(FormatOptions::typeperf());
    for path in decode::query_paths() {
        query.add(&path).expect("the bench's paths parse");
    }
    query
}

fn steady(dir: &std::path::Path, n: usize) {
    let files = block_files(dir, n + 2);
    let names = decode::bench_names();
    let mut query = new_query();
    let mut source = decode::primed_replay(&files, &names, &mut query);
    let request = query.request(&source.catalog().expect("the replay's catalog"));
    // The first collection in place names the instances, as `watch`'s second collection does.
    decode::replay_collect(&mut source, &request, &mut query);
    let start = Instant::now();
    for _ in 0..n {
        black_box(decode::replay_collect(&mut source, &request, &mut query));
    }
    eprintln!(
        "{n} steady collections: {:?} each",
        start.elapsed() / n as u32
    );
}

fn after_setup(dir: &std::path::Path, n: usize, setup: &str) {
    let files = block_files(dir, 2);
    let names = decode::bench_names();
    let mut primed = new_query();
    let _ = decode::primed_replay(&files, &names, &mut primed);
    let replay = || ReplaySource::new(BlockRecording::new(files.clone()).with_names(&names));
    let request = primed
        .clone()
        .request(&replay().catalog().expect("the replay's catalog"));
    let mut kept = primed.clone();
    let mut times: Vec<Duration> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut source = replay();
        source.catalog().expect("the replay's catalog");
        let mut query = match setup {
            "copy" => primed.clone(),
            _ => std::mem::take(&mut kept),
        };
        match setup {
            // As many bytes as the bench query's copy took before a clone shared the expanded
            // counters (35 MB), written and freed.
            "keep-buffer" => drop(black_box(vec![1u8; 35_464_704])),
            // As many small allocations as that copy made, made and freed.
            "keep-strings" => drop(black_box(
                (0..583_530)
                    .map(|i| "x".repeat(24 + i % 48))
                    .collect::<Vec<String>>(),
            )),
            "keep-copy" => drop(black_box(primed.clone())),
            _ => {}
        }
        decode::replay_collect(&mut source, &request, &mut query);
        let start = Instant::now();
        black_box(decode::replay_collect(&mut source, &request, &mut query));
        times.push(start.elapsed());
        if setup != "copy" {
            kept = query;
        }
    }
    times.sort();
    eprintln!(
        "{n} collections after the setup ({setup}): median {:?}, 10th percentile {:?}, 90th {:?}",
        times[n / 2],
        times[n / 10],
        times[n * 9 / 10]
    );
}
