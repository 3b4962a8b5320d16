//! Prints counter values at an interval, a small `typeperf` on top of the library: the local source,
//! a query over the paths given, one line per counter and collection.
//!
//! ```text
//! cargo run -p perfcounters --example watch -- [-n SAMPLES] [-i SECONDS] PATH...
//! cargo run -p perfcounters --example watch -- -n 3 '\Processor(*)\% Processor Time' '\Memory\Available MBytes'
//! ```
//!
//! Without paths it shows `\Processor(_Total)\% Processor Time` and `\Memory\Available Bytes`;
//! `-n` defaults to 5 samples and `-i` to 1 second.

use std::error::Error;
use std::time::Duration;

use perfcounters::query::Query;
use perfcounters::source;
use perfcounters::FormatOptions;

const USAGE: &str = "usage: watch [-n SAMPLES] [-i SECONDS] PATH...";

struct Args {
    paths: Vec<String>,
    samples: u32,
    interval: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        paths: Vec::new(),
        samples: 5,
        interval: Duration::from_secs(1),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value; {USAGE}"));
        match arg.as_str() {
            "-n" => {
                let v = value("-n")?;
                args.samples = v
                    .parse()
                    .map_err(|_| format!("-n {v:?}: expected a whole number"))?;
            }
            "-i" => {
                let v = value("-i")?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or(format!("-i {v:?}: expected seconds"))?;
                args.interval = Duration::from_secs_f64(secs);
            }
            "-h" | "--help" => return Err(USAGE.into()),
            _ => args.paths.push(arg),
        }
    }
    if args.paths.is_empty() {
        args.paths = vec![
            r"\Processor(_Total)\% Processor Time".into(),
            r"\Memory\Available Bytes".into(),
        ];
    }
    Ok(args)
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    let mut source = source::local()?;
    let mut query = Query::new(FormatOptions::default());
    for path in &args.paths {
        query
            .add(path)
            .map_err(|e| format!("invalid counter path {path}: {e}"))?;
    }
    let request = query.request(&source.catalog()?);
    // The first collection primes the counters that need two samples; it also fixes the columns.
    query.update(&source.collect(&request)?);
    for e in query.errors() {
        eprintln!("{e}");
    }
    for _ in 0..args.samples {
        std::thread::sleep(args.interval);
        let snapshot = source.collect(&request)?;
        let values = query.update(&snapshot);
        for (counter, value) in query.counters().iter().zip(&values) {
            match value.value() {
                Some(v) => println!("{}\t{v:.3}", counter.path_string()),
                None => println!("{}\t({})", counter.path_string(), value.status()),
            }
        }
        println!();
    }
    Ok(())
}
