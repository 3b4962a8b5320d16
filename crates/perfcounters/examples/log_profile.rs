//! Repeats the PDH-CSV cases of `benches/logs.rs` (the same generated files and calls) outside
//! criterion, for profilers and instruction counts.
//!
//! ```sh
//! cargo build --release -p perfcounters --example log_profile
//! # N conversions of the 300 × 20,000 log to PDH-CSV (into a sink); prints the mean time of one.
//! target/release/examples/log_profile csv_to_csv 3
//! # Instructions per thread of one conversion (the thread of each function: which one bounds it).
//! valgrind --tool=callgrind --separate-threads=yes target/release/examples/log_profile csv_to_csv 1
//! # The other cases: `filtered` (the 2,000-column log, `-c "\Process(p1*)\*"`), `stats`, `read_all`;
//! # with `--features arrow`, `wide_table` (the wide Arrow table of the 300 × 20,000 log) and
//! # `wide_table_rows` (the same from rows of values transposed on the calling thread).
//! target/release/examples/log_profile filtered 3
//! ```

#[allow(dead_code, unused_imports)]
#[path = "../benches/logs.rs"]
mod logs;

use std::hint::black_box;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: log_profile csv_to_csv|filtered|stats|read_all|wide_table|wide_table_rows N";
    let (Some(case), Some(n)) = (
        args.first(),
        args.get(1).and_then(|n| n.parse::<u32>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let run: Box<dyn Fn()> = match case.as_str() {
        "csv_to_csv" => {
            let path = logs::wide_file(20_000, 300);
            Box::new(move || {
                black_box(logs::csv_to_csv(&path));
            })
        }
        "stats" => {
            let path = logs::wide_file(20_000, 300);
            Box::new(move || {
                black_box(logs::stats(&path));
            })
        }
        "filtered" => {
            let path = logs::log_file(200);
            Box::new(move || {
                black_box(logs::csv_to_csv_filtered(&path));
            })
        }
        "read_all" => {
            let path = logs::log_file(200);
            Box::new(move || {
                black_box(logs::read_all(&path));
            })
        }
        #[cfg(feature = "arrow")]
        "wide_table" => {
            let path = logs::wide_file(20_000, 300);
            Box::new(move || {
                black_box(logs::wide_table(&path));
            })
        }
        #[cfg(feature = "arrow")]
        "wide_table_rows" => {
            let path = logs::wide_file(20_000, 300);
            Box::new(move || {
                black_box(logs::wide_table_by_rows(&path));
            })
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let start = Instant::now();
    for _ in 0..n {
        run();
    }
    println!(
        "{case}: {:.1} ms per run",
        start.elapsed().as_secs_f64() * 1e3 / f64::from(n)
    );
}
