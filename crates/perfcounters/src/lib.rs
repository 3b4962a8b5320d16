//! # perfcounters
//!
//! Decode, validate and compute performance counters the way Windows defines them:
//!
//! * [`counter_type`]: the `CounterType` bit field and every predefined winperf.h type;
//! * [`raw`] and [`calc`]: raw samples shaped like `PDH_RAW_COUNTER` and the PDH formulas that turn
//!   two samples into a displayable value, with PDH statuses ([`status`]) instead of garbage;
//! * [`stats`]: min / max / mean over a series, like `PdhComputeCounterStatistics`;
//! * [`path`]: counter paths `\\Machine\Object(Parent/Instance#Index)\Counter` with wildcards;
//! * [`snapshot`]: the model every source produces;
//! * [`format`](mod@format): zero-copy, validated decoders and encoders for V1 (`PERF_DATA_BLOCK`) and PerfLib V2
//!   (`PERF_DATA_HEADER`) blocks;
//! * [`names`]: counter name tables (index → names) and a built-in English table;
//! * [`log`]: the PDH-CSV / PDH-TSV log formats;
//! * [`export`]: snapshots as Prometheus / OpenMetrics text (raw cumulative values, types from counter
//!   types, windows_exporter-compatible names).
//!
//! The library never panics on hostile input: every length and offset is checked, and malformed data is
//! an error that names the structure and the byte offset.
#![warn(missing_docs)]

pub mod calc;
pub mod counter_type;
pub mod export;
pub mod format;
pub mod log;
pub mod names;
pub mod path;
pub mod query;
pub mod raw;
pub mod snapshot;
pub mod source;
pub mod stats;
pub mod status;

pub use calc::{calculate, FormatOptions};
pub use counter_type::CounterType;
pub use path::CounterPath;
pub use raw::RawCounter;
pub use snapshot::Snapshot;
pub use status::PdhStatus;
