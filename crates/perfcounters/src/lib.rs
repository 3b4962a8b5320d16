//! # perfcounters
//!
//! Read performance counters the way Windows defines them, on Windows and on Linux: collect raw
//! samples from a source, select counters by path, and compute values with the PDH formulas.
//!
//! * [`source`]: where samples come from. [`source::local`] opens the live source of this machine
//!   (procfs on Linux, the performance registry and PerfLib V2 on Windows); [`source::replay`]
//!   replays recorded raw data anywhere.
//! * [`query`]: counter paths such as `\Processor(*)\% Processor Time`, collected together the way
//!   PDH does it: wildcards, instances that come and go, and each value with a status.
//!   [`Query::request`](query::Query::request) tells a source what to read.
//! * [`format::capture`]: a capture directory, the raw data of a Windows machine saved so that it
//!   replays anywhere.
//!
//! Add counter paths to a query, collect twice (rates need two samples) and read the values. Here
//! the source replays a binary log that Performance Monitor wrote on a Windows Vista machine (PAL's
//! sample log, shipped in `examples/data/`); [`source::local`] is the live source of the machine
//! you are on, used the same way:
//!
//! ```
//! use perfcounters::query::Query;
//! use perfcounters::source::replay::{BlgRecording, ReplaySource};
//! use perfcounters::source::Source;
//! use perfcounters::FormatOptions;
//!
//! let log = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/SamplePerfmonLog.blg");
//! let mut source = ReplaySource::new(BlgRecording::open(log.as_ref())?);
//! let mut query = Query::new(FormatOptions::default());
//! query.add(r"\Processor(_Total)\% Processor Time")?;
//! query.add(r"\Memory\Available MBytes")?;
//! let request = query.request(&source.catalog()?);
//! // The first collection only primes the counters that need two samples.
//! let first = query.update(&source.collect(&request)?);
//! assert_eq!(first[0].value(), None);
//! assert_eq!(first[1].value(), Some(79.0));
//! // One minute later.
//! let second = query.update(&source.collect(&request)?);
//! let cpu = second[0].value().unwrap();
//! assert!((cpu - 82.148113155322605).abs() < 1e-9, "{cpu}");
//! assert_eq!(second[1].value(), Some(107.0));
//! assert_eq!(query.counters()[1].path_string(), r"\\ZACH-PC\Memory\Available MBytes");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/watch.rs` collects the live source at an interval with paths from the command line;
//! [`log::pipeline`] reads, filters and converts whole logs (what `relog` does).
//!
//! Underneath, each piece stands on its own:
//!
//! * [`snapshot`]: the model every source produces, one [`Snapshot`] per collection;
//! * [`counter_type`]: the `CounterType` bit field and every predefined winperf.h type;
//! * [`raw`] and [`calc`]: raw samples shaped like `PDH_RAW_COUNTER` and the PDH formulas that turn
//!   two samples into a displayable value, with PDH statuses ([`status`]) instead of garbage;
//! * [`stats`]: min / max / mean over a series, like `PdhComputeCounterStatistics`;
//! * [`path`]: counter paths `\\Machine\Object(Parent/Instance#Index)\Counter` with wildcards;
//! * [`format`](mod@format): zero-copy, validated decoders and encoders for V1 (`PERF_DATA_BLOCK`) and PerfLib V2
//!   (`PERF_DATA_HEADER`) blocks, binary logs (`.blg`: the ETW container and the PDH records), and the
//!   capture directory;
//! * [`names`]: counter name tables (index → names) and a built-in English table;
//! * [`log`]: counter logs in one model: PDH-CSV / PDH-TSV, the SQL log schema (feature `sql`) and
//!   Performance Monitor's binary logs (`.blg`);
//! * [`analyze`]: PAL threshold files (read by a safe interpreter, never run) evaluated over a log;
//! * [`export`]: snapshots as Prometheus / OpenMetrics text (raw cumulative values, types from counter
//!   types, windows_exporter-compatible and OpenTelemetry host-metrics names), and as OTLP requests
//!   (feature `otlp`), for live data and for logs' records;
//! * [`suggest`]: close names for a name that is not known ("did you mean …?");
//! * [`time_text`]: calendar times as text, in every form the logs and reports use;
//! * [`encoding`]: the text encodings of files written on Windows (byte-order marks, UTF-16, ANSI).
//!
//! The library never panics on hostile input: every length and offset is checked, and malformed data is
//! an error that names the structure and the byte offset.
//!
//! # Errors
//!
//! Every error type of the crate follows one rule: its message says what failed and where (the
//! file or log, the line and column, the structure and byte offset, the row, the parameter), and
//! leaves the cause to [`source`](std::error::Error::source); it never repeats the cause's text.
//! So a [`log::LogError`] over an I/O error displays as `data.csv: line 7` and its `source()` is the
//! `io::Error`; the chain on one line, each link once, is [`ErrorChain`]. An error that only
//! forwards another (a variant such as [`analyze::AnalyzeError::Log`] that holds the whole error)
//! displays as that error and returns that error's own source, so the text still appears once.
//! Messages name the library's parameters, never a command-line flag.
#![warn(missing_docs)]

/// The README's Rust examples, compiled and run as doctests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

pub mod analyze;
mod atomic_file;
pub mod calc;
pub mod counter_type;
pub mod encoding;
mod error_chain;
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
pub mod suggest;
pub mod time_text;

pub use calc::{calculate, FormatOptions};
pub use counter_type::{CounterInfo, CounterType};
pub use error_chain::ErrorChain;
pub use path::CounterPath;
pub use raw::RawCounter;
pub use snapshot::Snapshot;
pub use status::PdhStatus;
