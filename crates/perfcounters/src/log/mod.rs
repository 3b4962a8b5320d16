//! Counter logs: the PDH-CSV / PDH-TSV text formats, the SQL log schema and Performance Monitor's
//! binary logs (`.blg`, read), in one model.
//!
//! * opening and creating: [`LogFormat::detect`] recognises a log by its content (then its name),
//!   [`open()`] opens any log (files, file-name patterns, `SQL:file.db!log`) as streaming readers
//!   and [`create()`] the writer an output's name calls for;
//! * the log model every format is read into: a [`LogHeader`] (format, time zone, columns) and
//!   streamed [`Record`]s whose [`Cell`]s hold a cooked value, a raw sample, or nothing; the
//!   [`LogReader`] and [`LogWriter`] traits. Every format has one column model: a parsed
//!   [`CounterPath`](crate::CounterPath) and a [`CounterInfo`] per column ([`LogCounter`]).
//! * [`BlgLogReader`] reads Performance Monitor's binary logs (decoded by [`crate::format::blg`]);
//!   [`BlgTimesReader`] only their records' times;
//! * [`LogBytes`] is a log held in memory (bytes received rather than a file), which
//!   [`open_bytes`] reads as a file of the same content;
//! * [`pdh_csv`] writes PDH-CSV / PDH-TSV (typeperf's and relog's styles); [`PdhCsvReader`] reads
//!   what Windows machines wrote.
//! * the format-agnostic stages of relog: merge several logs ([`Merge`]), filter counters, times
//!   and records ([`RelogFilter`], [`Filtered`]), compute raw samples, copy into a writer
//!   ([`copy`]), summarize (relog's `-q`, [`LogSummary`]); [`pipeline`] puts them together for
//!   every front end;
//! * [`sql_rows`]: the rows of the SQL log schema, decoded and encoded; `sql` (feature `sql`) reads
//!   and writes SQL logs in SQLite;
//! * `columnar` (feature `arrow`): the long and wide Arrow forms of a log, Parquet files and
//!   Hive-partitioned Parquet datasets;
//! * [`log_statistics`]: minimum, average and maximum per counter over a log;
//! * the time model: a record's time is a UTC instant ([`LogTime`]), the log's [`TimeZone`]
//!   (name, bias, daylight-saving rules, a table of Windows zones: [`windows_zone`]) converts to
//!   and from its local time;
//! * the text encodings of logs (byte-order marks, UTF-16, ANSI code pages) are in
//!   [`crate::encoding`], which name tables share.
//! * [`LogError`] names the log and the line and column (text), byte offset (binary) or row (SQL)
//!   of a problem.

mod blg;
mod blg_times;
#[cfg(feature = "arrow")]
pub mod columnar;
mod csv_file;
mod error;
pub(crate) mod handover;
mod memory;
pub(crate) mod model;
mod open;
pub mod pdh_csv;
mod pdh_csv_chunks;
mod pdh_csv_digits;
mod pdh_csv_read;
mod pdh_csv_row;
mod pdh_csv_scan;
pub mod pipeline;
pub(crate) mod pool;
pub(crate) mod relog;
#[cfg(feature = "sql")]
pub mod sql;
pub mod sql_rows;
mod stats;
mod time;
mod zone;

pub use blg::{BlgLogReader, PIPE_BATCH_CELLS, SCAN_PART_MIN};
pub use blg_times::BlgTimesReader;
pub use error::{Location, LogError, LogErrorKind};
pub use memory::{open_bytes, LogBytes};
pub use model::{
    Cell, CounterInfo, LogCounter, LogFormat, LogHeader, LogKind, LogReader, LogTime, LogWriter,
    RawCell, Record, RecordEncoder, TimeZone, ValueColumns, ValueRows,
};
pub use open::{
    create, create_stream, expand, machine_inputs, open, open_file, open_merged, CreateOptions,
    OpenOptions, DETECT_BYTES,
};
pub use pdh_csv::{CsvFlavor, PdhCsvLogWriter, PdhCsvRowEncoder, PdhCsvWriter, ValueStyle};
pub use pdh_csv_read::{CsvReadOptions, PdhCsvReader};
pub use pipeline::{
    InputLog, Inputs, Opened, Pipeline, PipelineError, TimeBound, Unmatched, UnmatchedReason,
};
pub use relog::{
    copy, copy_with, parse_relog_time, CopyOptions, CounterFilter, Filtered, LogSummary, Merge,
    RelogFilter, RelogTimeError,
};
pub use stats::{log_statistics, CounterStatistics};
pub use zone::{offset_name, windows_zone, LocalClock};

/// The number of threads the logs' parallel stages (the `.blg` column scan, the PDH-CSV/TSV
/// reader's chunk parsers, [`copy`]'s encoders, the Parquet column encoders) start by default:
/// the machine's cores, 1 when unknown. Each caller bounds it by what its work splits into.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
