//! The command line in one place: what every command shares.
//!
//! * [`windows`]: the lexer of the Windows-style commands (`relog`, `typeperf`): `-x`, `/x`,
//!   `-config FILE`, one rule for all;
//! * [`values`]: parsers of values (intervals, counts, counter files);
//! * [`format`](mod@format): the output-format type;
//! * [`replay`]: the `--replay`/`--names` group of `list`, `watch` and `serve`;
//! * [`WatchOptions`]: what `watch` and `typeperf` parse into;
//! * [`refuse_existing`]: no command overwrites a file unless told to.
//!
//! Commands take what they share from here and never from each other.

pub mod format;
pub mod replay;
pub mod values;
pub mod windows;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};

pub use format::{DecodeFormat, OutputFormat, StatsFormat};
pub use replay::ReplayArgs;

/// Refuses to write to `path` when something is there and `overwrite` was not given; `how` names the
/// options that allow it (`-y`, `--overwrite (-y)`, `-y to overwrite it or -a to append to it`).
pub fn refuse_existing(path: &Path, overwrite: bool, how: &str) -> Result<()> {
    if !overwrite && path.exists() {
        bail!("{} already exists; add {how}", path.display());
    }
    Ok(())
}

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
    /// Overwrite an existing output file (`-y`, `--overwrite`).
    pub overwrite: bool,
    /// typeperf framing: its closing messages and option names in errors.
    pub typeperf: bool,
    /// Replay files.
    pub replay: Vec<PathBuf>,
    /// Name table for replays.
    pub names: Option<PathBuf>,
    /// Cap percentages at 100.
    pub cap: bool,
}
