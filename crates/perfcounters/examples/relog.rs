//! Converts and filters counter logs as `relog` does, through the library's pipeline: any logs in
//! (PDH-CSV/TSV, SQL, `.blg`, Parquet), merged in time order, the counters the paths select, into the
//! log the output's name calls for (`.csv`, `.tsv`, `.parquet`, `SQL:file.db!log`, `DIR/` for a
//! Parquet dataset).
//!
//! ```text
//! cargo run -p perfcounters --features arrow --example relog -- OUTPUT LOG... [-c PATH]...
//! cargo run -p perfcounters --features arrow --example relog -- cpu.parquet \
//!     crates/perfcounters/examples/data/SamplePerfmonLog.blg -c '\Processor(*)\% Processor Time'
//! ```
//!
//! A path that selects nothing gets the log's closest names ("did you mean …?").

use std::error::Error;

use perfcounters::log::{self, CreateOptions, Pipeline};

fn main() -> Result<(), Box<dyn Error>> {
    let mut output = None;
    let mut inputs = Vec::new();
    let mut counters = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-c" => counters.push(args.next().ok_or("-c needs a counter path")?),
            _ if output.is_none() => output = Some(a),
            _ => inputs.push(a),
        }
    }
    let (Some(output), false) = (output, inputs.is_empty()) else {
        return Err("usage: relog OUTPUT LOG... [-c PATH]...".into());
    };
    let pipeline = Pipeline::new(inputs).counters(counters);
    let mut opened = match pipeline.open() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("relog: {}", e.message("-c", "name tables"));
            std::process::exit(2);
        }
    };
    for w in opened.warnings() {
        eprintln!("warning: {w}");
    }
    let mut writer = log::create(&output, &CreateOptions::default())?;
    let summary = opened.copy_into(&mut *writer)?;
    let time = |t: Option<log::LogTime>| t.map_or_else(String::new, |t| t.to_string());
    println!(
        "{output}: {} records of {} counters, {} .. {}",
        summary.samples,
        summary.counters.len(),
        time(summary.begin),
        time(summary.end)
    );
    Ok(())
}
