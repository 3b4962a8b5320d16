//! The command line in one place: what every command shares.
//!
//! * [`windows`]: the lexer of the Windows-style commands (`relog`, `typeperf`): `-x`, `/x`,
//!   `-config FILE`, one rule for all;
//! * [`values`]: parsers of values (intervals, counts, counter files);
//! * [`format`]: the output-format type;
//! * [`replay`]: the `--replay`/`--names` group of `list`, `watch` and `serve`;
//! * [`WatchOptions`]: what `watch` and `typeperf` parse into.
//!
//! Commands take what they share from here and never from each other.

pub mod format;
pub mod replay;
pub mod values;
pub mod windows;

use std::path::PathBuf;
use std::time::Duration;

pub use format::{OutputFormat, StatsFormat};
pub use replay::ReplayArgs;

/// Everything `watch` (and typeperf) needs.
#[derive(Debug, Default, PartialEq)]
pub struct WatchOptions {
    /// Counter paths.
    pub paths: Vec<String>,
    /// A file of counter paths.
    pub counter_file: Option<PathBuf>,
    /// Sample interval.
    pub interval: Duration,
    /// Rows to print.
    pub samples: Option<u64>,
    /// Output format.
    pub format: OutputFormat,
    /// Output file.
    pub output: Option<PathBuf>,
    /// Overwrite an existing output file without asking (typeperf -y).
    pub overwrite: bool,
    /// typeperf framing: closing messages and the "No valid counters" error text.
    pub typeperf: bool,
    /// Replay files.
    pub replay: Vec<PathBuf>,
    /// Name table for replays.
    pub names: Option<PathBuf>,
    /// Cap percentages at 100.
    pub cap: bool,
}
