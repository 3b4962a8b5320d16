//! Analyses a counter log with PAL's QuickSystemOverview thresholds (built in) and prints what broke
//! them, a small `perfcounters analyze` on top of the library.
//!
//! ```text
//! cargo run -p perfcounters --example analyze -- [LOG...]
//! ```
//!
//! Without a log it analyses the sample log shipped in `examples/data/` (PAL's, from a Windows Vista
//! machine).

use std::error::Error;

use perfcounters::analyze::{analyze_pipeline, Interval, Rules};
use perfcounters::log::Pipeline;

fn main() -> Result<(), Box<dyn Error>> {
    let mut logs: Vec<String> = std::env::args().skip(1).collect();
    if logs.is_empty() {
        logs.push(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/examples/data/SamplePerfmonLog.blg"
            )
            .into(),
        );
    }
    let rules = Rules::builtin();
    let analyzed = analyze_pipeline(&Pipeline::new(logs), &rules, Interval::Auto, &[])?;
    let report = &analyzed.report;
    let evaluated = report.analyses.iter().filter(|a| a.evaluated()).count();
    println!(
        "{}: {} records, slices of {} s, {evaluated} of {} analyses evaluated, {} alerts",
        report.source,
        report.records,
        report.interval_seconds,
        report.analyses.len(),
        report.alerts.len()
    );
    for a in report.analyses.iter().filter(|a| a.alerts > 0) {
        println!("  {:>4}  {} ({})", a.alerts, a.name, a.category);
    }
    Ok(())
}
