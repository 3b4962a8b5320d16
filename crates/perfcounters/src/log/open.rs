//! Opening and creating logs of any format: [`LogFormat::detect`] recognises a log by its first
//! bytes, [`open`] turns a name (a file, a file-name pattern, `SQL:file.db!log`) into streaming
//! readers, and [`create`] opens the writer its name calls for.
//!
//! A log is recognised by its content first and its name second: a `.csv` that holds a `.blg` is
//! read as a `.blg`, and a file whose content says nothing (empty, cut short) is read as its
//! extension says, so that the reader of that format reports what is wrong. The output of
//! [`create`] follows its name: `SQL:file.db!log` is a SQL log, `.tsv` PDH-TSV, `.blg` a binary log,
//! anything else PDH-CSV; a format asked for that contradicts the name is an error.
//!
//! ```no_run
//! use perfcounters::log::{self, CreateOptions, OpenOptions, LogReader, LogWriter};
//! # fn main() -> Result<(), perfcounters::log::LogError> {
//! let mut reader = log::open_merged(&["day1.blg", "day2.blg"], &OpenOptions::default())?;
//! let mut writer = log::create("SQL:logs.db!week", &CreateOptions::default())?;
//! log::copy(&mut reader, &mut writer)?;
//! # Ok(()) }
//! ```

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::encoding::{sniff_bom, TextEncoding};
use crate::format::blg::{looks_like_blg, SNIFF_LEN};
use crate::path::file_name_match;

use super::blg::BlgLogReader;
use super::blg_times::BlgTimesReader;
use super::error::{LogError, LogErrorKind};
use super::model::PARQUET_MAGIC;
use super::model::{LogCounter, LogFormat, LogHeader, LogReader, LogWriter, Record, RecordEncoder};
use super::pdh_csv::{CsvFlavor, PdhCsvLogWriter};
use super::pdh_csv_read::{sniff_flavor, CsvReadOptions, PdhCsvReader};
use super::relog::Merge;

/// The bytes of a file's start that [`LogFormat::detect`] needs at most (a `.blg` needs
/// [`SNIFF_LEN`]; a text header may follow a byte-order mark and blank lines).
pub const DETECT_BYTES: usize = 512;
const _: () = assert!(SNIFF_LEN <= DETECT_BYTES);

/// SQLite's file header: the first 16 bytes of every database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The first characters of a text file (after a byte-order mark), in UTF-8, UTF-16 either way or
/// an ANSI code page (whose non-ASCII bytes become U+FFFD: the header cell is ASCII).
fn text_start(bytes: &[u8]) -> String {
    let utf16 = |rest: &[u8], le: bool| {
        let units = rest.chunks_exact(2).map(|c| {
            if le {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        });
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    };
    match sniff_bom(bytes) {
        Some((TextEncoding::Utf16Le, bom)) => utf16(bytes.get(bom..).unwrap_or(&[]), true),
        Some((TextEncoding::Utf16Be, bom)) => utf16(bytes.get(bom..).unwrap_or(&[]), false),
        Some((_, bom)) => String::from_utf8_lossy(bytes.get(bom..).unwrap_or(&[])).into_owned(),
        None => String::from_utf8_lossy(bytes).into_owned(),
    }
}

impl LogFormat {
    /// Every format, in the order [`LogFormat::detect`] tries their rules.
    pub const ALL: [LogFormat; 5] = [
        LogFormat::Binary,
        LogFormat::Sql,
        LogFormat::Parquet,
        LogFormat::Csv,
        LogFormat::Tsv,
    ];

    /// Whether `bytes`, the start of a file ([`DETECT_BYTES`] are enough), look like this format
    /// (nothing is validated):
    ///
    /// * [`LogFormat::Csv`] / [`LogFormat::Tsv`]: the first cell that is not blank starts with
    ///   `(PDH-CSV 4.0)` / `(PDH-TSV 4.0)`, quoted or not, in UTF-8, UTF-16 (with or without a
    ///   byte-order mark) or an ANSI code page;
    /// * [`LogFormat::Binary`]: an ETW buffer whose first event is a log-file header
    ///   ([`crate::format::blg::looks_like_blg`]);
    /// * [`LogFormat::Sql`]: SQLite's header `SQLite format 3\0` (the database of a SQL log);
    /// * [`LogFormat::Parquet`]: Parquet's magic `PAR1`.
    pub fn matches(self, bytes: &[u8]) -> bool {
        match self {
            LogFormat::Binary => looks_like_blg(bytes),
            LogFormat::Sql => bytes.starts_with(SQLITE_MAGIC),
            LogFormat::Parquet => bytes.starts_with(PARQUET_MAGIC),
            LogFormat::Csv | LogFormat::Tsv => {
                sniff_flavor(text_start(bytes).as_bytes()) == self.csv_flavor()
            }
        }
    }

    /// The format of a log whose first bytes are `bytes`, or `None` when they match no rule.
    ///
    /// ```
    /// use perfcounters::log::LogFormat;
    /// assert_eq!(LogFormat::detect(b"\"(PDH-CSV 4.0)\",\"\\\\m\\Memory\\Available Bytes\""), Some(LogFormat::Csv));
    /// assert_eq!(LogFormat::detect(b"SQLite format 3\0"), Some(LogFormat::Sql));
    /// assert_eq!(LogFormat::detect(b"Time,Value"), None);
    /// ```
    pub fn detect(bytes: &[u8]) -> Option<LogFormat> {
        LogFormat::ALL.into_iter().find(|f| f.matches(bytes))
    }

    /// The format a name calls for: `SQL:file.db!log` is [`LogFormat::Sql`], the extensions `.csv`,
    /// `.tsv`, `.blg` and `.parquet` (any case) their formats, and a name that ends with a path
    /// separator (a dataset directory) [`LogFormat::Parquet`]; `None` for any other name.
    pub fn from_name(name: &str) -> Option<LogFormat> {
        if name
            .get(..4)
            .is_some_and(|p| p.eq_ignore_ascii_case("SQL:"))
        {
            return Some(LogFormat::Sql);
        }
        if is_dir_name(name) {
            return Some(LogFormat::Parquet);
        }
        let ext = Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Some(LogFormat::Csv),
            "tsv" => Some(LogFormat::Tsv),
            "blg" => Some(LogFormat::Binary),
            "parquet" => Some(LogFormat::Parquet),
            _ => None,
        }
    }

    /// The format of the file at `path`: its content first ([`LogFormat::detect`] on its first
    /// [`DETECT_BYTES`]), its name second ([`LogFormat::from_name`]); `None` when neither says.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn of_file(path: &Path) -> Result<Option<LogFormat>, LogError> {
        let source = path.display().to_string();
        let mut start = Vec::with_capacity(DETECT_BYTES);
        File::open(path)
            .and_then(|f| f.take(DETECT_BYTES as u64).read_to_end(&mut start))
            .map_err(|e| LogError::io(&source, None, e))?;
        Ok(LogFormat::detect(&start).or_else(|| path.to_str().and_then(LogFormat::from_name)))
    }

    /// The format an output named `name` gets: the one its name calls for, else `format`, else
    /// PDH-CSV.
    ///
    /// # Errors
    /// `format` contradicts the name (`-f TSV` for `out.csv`, CSV for `SQL:file.db!log`).
    pub fn for_output(name: &str, format: Option<LogFormat>) -> Result<LogFormat, LogError> {
        match (LogFormat::from_name(name), format) {
            (Some(named), Some(asked)) if named != asked => Err(LogError::usage(
                name,
                format!(
                    "the name says {} but the format asked for is {}",
                    named.name(),
                    asked.name()
                ),
            )),
            (Some(named), _) => Ok(named),
            (None, Some(asked)) => Ok(asked),
            (None, None) => Ok(LogFormat::Csv),
        }
    }

    /// The PDH text flavour of [`LogFormat::Csv`] and [`LogFormat::Tsv`]; `None` for the others.
    pub fn csv_flavor(self) -> Option<CsvFlavor> {
        match self {
            LogFormat::Csv => Some(CsvFlavor::Csv),
            LogFormat::Tsv => Some(CsvFlavor::Tsv),
            LogFormat::Sql | LogFormat::Binary | LogFormat::Parquet => None,
        }
    }
}

impl From<CsvFlavor> for LogFormat {
    fn from(flavor: CsvFlavor) -> Self {
        match flavor {
            CsvFlavor::Csv => LogFormat::Csv,
            CsvFlavor::Tsv => LogFormat::Tsv,
        }
    }
}

/// Whether `name` ends with a path separator: the name of a directory.
fn is_dir_name(name: &str) -> bool {
    name.ends_with('/') || (cfg!(windows) && name.ends_with('\\'))
}

/// How [`open`] reads logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenOptions {
    /// The ANSI code page of text logs without a byte-order mark that are not UTF-8
    /// ([`CsvReadOptions::code_page`]).
    pub code_page: Option<u16>,
    /// Read the records' times alone: a `.blg` is opened as a [`BlgTimesReader`] (no column, each
    /// sample's time without its values, one pass), a SQL log as
    /// `SqlLogReader::open_times` opens it (no column, one row per record). The other
    /// formats are opened as usual; their readers skip the values of the columns nobody selects.
    pub times_only: bool,
}

impl OpenOptions {
    /// These options with the ANSI code page of text logs.
    pub fn with_code_page(mut self, code_page: Option<u16>) -> Self {
        self.code_page = code_page;
        self
    }

    /// These options reading the records' times alone ([`OpenOptions::times_only`]).
    pub fn with_times_only(mut self, times_only: bool) -> Self {
        self.times_only = times_only;
        self
    }
}

/// Opens the logs `input` names: `SQL:file.db!log` (the log name may be left out when the database
/// holds one log), a file, or a file-name pattern with `*` and `?` (case-insensitive, as Windows
/// matches them; the directory part is taken as it is), whose files are opened in name order.
/// Each file is read as [`LogFormat::of_file`] says. A directory is a Parquet dataset
/// (`columnar::dataset`, feature `arrow`), read as one log.
///
/// # Errors
/// A pattern matches no file, a file cannot be read or is no log, a SQL log cannot be opened, or a
/// directory is not a dataset.
pub fn open(input: &str, options: &OpenOptions) -> Result<Vec<Box<dyn LogReader>>, LogError> {
    if LogFormat::from_name(input) == Some(LogFormat::Sql) {
        return Ok(vec![open_sql(input, options)?]);
    }
    if is_dir_name(input) || Path::new(input).is_dir() {
        return Ok(vec![open_dataset(Path::new(input))?]);
    }
    expand(input)?
        .iter()
        .map(|p| open_file(p, options))
        .collect()
}

/// The inputs `input` stands for, one per machine where it can tell without reading records: a
/// dataset directory (`relog -o DIR/`) of several machines is its `machine=NAME` partitions, each
/// a log of its own; any other input is itself.
///
/// # Errors
/// A directory cannot be read or holds something that is not part of a dataset.
pub fn machine_inputs(input: &str) -> Result<Vec<String>, LogError> {
    if is_dir_name(input) || Path::new(input).is_dir() {
        let parts = machine_partitions(Path::new(input))?;
        if parts.len() > 1 {
            return Ok(parts.iter().map(|p| p.display().to_string()).collect());
        }
    }
    Ok(vec![input.to_owned()])
}

#[cfg(feature = "arrow")]
fn machine_partitions(dir: &Path) -> Result<Vec<std::path::PathBuf>, LogError> {
    super::columnar::dataset::machine_partitions(dir)
}

#[cfg(not(feature = "arrow"))]
fn machine_partitions(dir: &Path) -> Result<Vec<std::path::PathBuf>, LogError> {
    Err(no_arrow(&dir.display().to_string()))
}

/// Opens every input of `inputs` ([`open`]) as one log: the only reader, or their [`Merge`].
///
/// # Errors
/// An input cannot be opened, or the logs cannot be merged.
pub fn open_merged<S: AsRef<str>>(
    inputs: &[S],
    options: &OpenOptions,
) -> Result<Box<dyn LogReader>, LogError> {
    let mut readers = Vec::new();
    for i in inputs {
        readers.extend(open(i.as_ref(), options)?);
    }
    match readers.len() {
        0 => Err(LogError::usage("(no input)", "no log to read")),
        1 => Ok(readers.remove(0)),
        _ => Ok(Box::new(Merge::new(readers)?)),
    }
}

/// Opens one log file in the format [`LogFormat::of_file`] finds.
///
/// # Errors
/// The file cannot be read, is no log, or its reader fails on its header.
pub fn open_file(path: &Path, options: &OpenOptions) -> Result<Box<dyn LogReader>, LogError> {
    let source = path.display().to_string();
    match LogFormat::of_file(path)? {
        Some(LogFormat::Binary) if options.times_only => Ok(Box::new(BlgTimesReader::open(path)?)),
        Some(LogFormat::Binary) => Ok(Box::new(BlgLogReader::open(path)?)),
        Some(LogFormat::Sql) => open_sql_file(path, options),
        Some(LogFormat::Parquet) => open_parquet(path),
        Some(LogFormat::Csv | LogFormat::Tsv) => Ok(Box::new(PdhCsvReader::open(
            path,
            CsvReadOptions {
                code_page: options.code_page,
            },
        )?)),
        None => Err(not_a_log(&source)),
    }
}

/// The error of `source`, whose content is no log and whose name says no format.
pub(super) fn not_a_log(source: &str) -> LogError {
    LogError::invalid(
        source,
        None,
        "not a counter log: it starts with neither a \"(PDH-CSV 4.0)\" or \"(PDH-TSV 4.0)\" \
         header, the trace buffer of a .blg, a SQLite database header, nor Parquet's PAR1",
    )
}

#[cfg(feature = "arrow")]
fn open_parquet(path: &Path) -> Result<Box<dyn LogReader>, LogError> {
    Ok(Box::new(super::columnar::ParquetLogReader::open(path)?))
}

#[cfg(feature = "arrow")]
fn open_dataset(dir: &Path) -> Result<Box<dyn LogReader>, LogError> {
    Ok(Box::new(super::columnar::DatasetReader::open(dir)?))
}

#[cfg(feature = "arrow")]
fn create_parquet(target: &str, options: &CreateOptions) -> Result<Box<dyn LogWriter>, LogError> {
    let path = Path::new(target);
    if is_dir_name(target) || path.is_dir() {
        // A dataset only ever adds files: nothing to append to or overwrite.
        return Ok(Box::new(super::columnar::DatasetWriter::create(path)?));
    }
    if options.append {
        return Err(LogError::usage(
            target,
            "a Parquet file cannot be appended to: name a dataset directory (DIR/), which adds files",
        ));
    }
    let exists = path.exists();
    if exists && !options.overwrite {
        return Err(LogError::exists(target));
    }
    Ok(Box::new(
        super::columnar::parquet::ParquetFileWriter::create(path, exists)?,
    ))
}

#[cfg(not(feature = "arrow"))]
fn open_parquet(path: &Path) -> Result<Box<dyn LogReader>, LogError> {
    Err(no_arrow(&path.display().to_string()))
}

#[cfg(not(feature = "arrow"))]
fn open_dataset(dir: &Path) -> Result<Box<dyn LogReader>, LogError> {
    Err(no_arrow(&dir.display().to_string()))
}

#[cfg(not(feature = "arrow"))]
fn create_parquet(target: &str, _: &CreateOptions) -> Result<Box<dyn LogWriter>, LogError> {
    Err(no_arrow(target))
}

#[cfg(not(feature = "arrow"))]
pub(super) fn no_arrow(source: &str) -> LogError {
    LogError::usage(
        source,
        "Parquet logs and datasets need the library's `arrow` feature, which this build leaves out",
    )
}

#[cfg(feature = "sql")]
fn open_sql(input: &str, options: &OpenOptions) -> Result<Box<dyn LogReader>, LogError> {
    let target = super::sql::SqlTarget::parse(input)
        .ok_or_else(|| LogError::usage(input, "a SQL log is named SQL:file.db!log"))?;
    open_sql_log(&target.path, target.log.as_deref(), options)
}

#[cfg(feature = "sql")]
fn open_sql_file(path: &Path, options: &OpenOptions) -> Result<Box<dyn LogReader>, LogError> {
    open_sql_log(path, None, options)
}

/// The SQL log `log` of the database `path`, for its times alone when `options` say so.
#[cfg(feature = "sql")]
fn open_sql_log(
    path: &Path,
    log: Option<&str>,
    options: &OpenOptions,
) -> Result<Box<dyn LogReader>, LogError> {
    use super::sql::SqlLogReader;
    Ok(Box::new(if options.times_only {
        SqlLogReader::open_times(path, log)?
    } else {
        SqlLogReader::open(path, log)?
    }))
}

#[cfg(not(feature = "sql"))]
fn open_sql(input: &str, _options: &OpenOptions) -> Result<Box<dyn LogReader>, LogError> {
    Err(no_sql(input))
}

#[cfg(not(feature = "sql"))]
fn open_sql_file(path: &Path, _options: &OpenOptions) -> Result<Box<dyn LogReader>, LogError> {
    Err(no_sql(&path.display().to_string()))
}

#[cfg(not(feature = "sql"))]
fn no_sql(source: &str) -> LogError {
    LogError::usage(
        source,
        "SQL logs need the library's `sql` feature, which this build leaves out",
    )
}

/// The files `input` names: itself, or the files of its directory whose names match its file-name
/// part when that holds `*` or `?`, in name order.
///
/// # Errors
/// The directory cannot be listed, or no file matches.
pub fn expand(input: &str) -> Result<Vec<PathBuf>, LogError> {
    let path = Path::new(input);
    let pattern = match path.file_name().and_then(|n| n.to_str()) {
        Some(n) if n.contains(['*', '?']) => n,
        _ => return Ok(vec![path.to_path_buf()]),
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries =
        std::fs::read_dir(&dir).map_err(|e| LogError::io(&dir.display().to_string(), None, e))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .filter(|e| file_name_match(pattern, &e.file_name().to_string_lossy()))
        .map(|e| dir.join(e.file_name()))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(LogError::usage(input, "no file matches"));
    }
    Ok(found)
}

/// How [`create`] treats an output that exists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CreateOptions {
    /// The format asked for; `None` lets the name decide ([`LogFormat::for_output`]).
    pub format: Option<LogFormat>,
    /// Add the records after those of an existing log (whose columns must be the same); a log
    /// that does not exist is created.
    pub append: bool,
    /// Replace an existing log. Without it (and without `append`) an existing file, or a SQL log
    /// of the same name, is an error of kind [`LogErrorKind::Exists`].
    pub overwrite: bool,
}

impl CreateOptions {
    /// These options with a format asked for.
    pub fn with_format(mut self, format: Option<LogFormat>) -> Self {
        self.format = format;
        self
    }

    /// These options appending (or not).
    pub fn with_append(mut self, append: bool) -> Self {
        self.append = append;
        self
    }

    /// These options overwriting (or not).
    pub fn with_overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }
}

/// Opens the writer of the log named `target` (a file, `SQL:file.db!log`, or for Parquet a dataset
/// directory: one that exists or a name ending with a path separator), in the format its name calls
/// for ([`LogFormat::for_output`]).
///
/// # Errors
/// The format contradicts the name; the output exists and neither `append` nor `overwrite` is set
/// ([`LogErrorKind::Exists`]); a SQL log is not named `SQL:file.db!log`; a `.blg` is asked for
/// (binary logs are read, not written); the file or database cannot be created.
pub fn create(target: &str, options: &CreateOptions) -> Result<Box<dyn LogWriter>, LogError> {
    let dataset =
        Path::new(target).is_dir() && matches!(options.format, None | Some(LogFormat::Parquet));
    let format = if dataset {
        LogFormat::Parquet
    } else {
        LogFormat::for_output(target, options.format)?
    };
    match format {
        LogFormat::Sql => create_sql(target, options),
        LogFormat::Parquet => create_parquet(target, options),
        LogFormat::Binary => Err(LogError::usage(
            target,
            "binary logs (.blg) are read, not written: name a .csv, .tsv or SQL:file.db!log output",
        )),
        LogFormat::Csv | LogFormat::Tsv => {
            let flavor = if format == LogFormat::Csv {
                CsvFlavor::Csv
            } else {
                CsvFlavor::Tsv
            };
            let path = Path::new(target);
            if path.is_dir() {
                return Err(LogError::usage(target, "is a directory: name a file"));
            }
            let exists = path.exists();
            if exists && options.append {
                return Ok(Box::new(AppendCsv::open(path, flavor)?));
            }
            if exists && !options.overwrite {
                return Err(LogError::exists(target));
            }
            // Written under a temporary name and renamed when complete: an error leaves nothing.
            Ok(Box::new(super::csv_file::CsvFile::create(
                target, flavor, exists,
            )?))
        }
    }
}

/// A writer of `format` into `out` (standard output, a pipe), named `name` in messages: PDH-CSV
/// or PDH-TSV, the formats a stream can hold.
///
/// # Errors
/// `format` is one that needs a file or a database (SQL, `.blg`).
pub fn create_stream<W: Write + 'static>(
    out: W,
    format: LogFormat,
    name: &str,
) -> Result<Box<dyn LogWriter>, LogError> {
    match format.csv_flavor() {
        Some(flavor) => Ok(Box::new(PdhCsvLogWriter::new(out, flavor, name))),
        None => Err(LogError::usage(
            name,
            format!(
                "a {} log cannot be written to a stream: name an output",
                format.name()
            ),
        )),
    }
}

#[cfg(feature = "sql")]
fn create_sql(target: &str, options: &CreateOptions) -> Result<Box<dyn LogWriter>, LogError> {
    use super::sql::{SqlLogWriter, SqlTarget, SqlWriteOptions};
    let t = SqlTarget::parse(target)
        .ok_or_else(|| LogError::usage(target, "a SQL log is named SQL:file.db!logname"))?;
    let log = t.log.ok_or_else(|| {
        LogError::usage(
            target,
            format!("name the log: SQL:{}!logname", t.path.display()),
        )
    })?;
    let exists = !options.append
        && !options.overwrite
        && t.path.is_file()
        && super::sql::list_logs(&t.path).is_ok_and(|logs| logs.contains(&log));
    if exists {
        return Err(LogError::exists(target));
    }
    Ok(Box::new(SqlLogWriter::create(
        &t.path,
        &log,
        SqlWriteOptions {
            append: options.append,
            overwrite: options.overwrite,
        },
    )?))
}

#[cfg(not(feature = "sql"))]
fn create_sql(target: &str, _: &CreateOptions) -> Result<Box<dyn LogWriter>, LogError> {
    Err(no_sql(target))
}

/// Appending to a PDH-CSV/TSV file: the records go after the existing ones; the columns must be
/// the same.
struct AppendCsv {
    source: String,
    columns: Vec<String>,
    writer: PdhCsvLogWriter<std::io::BufWriter<File>>,
}

impl AppendCsv {
    fn open(path: &Path, flavor: CsvFlavor) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let existing = PdhCsvReader::open(path, CsvReadOptions::default())?;
        if LogFormat::from(flavor) != existing.header().kind {
            return Err(LogError::usage(
                &source,
                format!(
                    "cannot append {} records to a {} log",
                    LogFormat::from(flavor).name(),
                    existing.header().kind.name()
                ),
            ));
        }
        let columns = column_keys(existing.header());
        let zone = existing.header().time_zone.clone();
        let io = |e| LogError::io(&source, None, e);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .read(true)
            .open(path)
            .map_err(io)?;
        // A file that does not end its last line gets one.
        let len = f.metadata().map_err(io)?.len();
        if len > 0 {
            use std::io::{Seek, SeekFrom};
            let mut last = [0u8; 1];
            f.seek(SeekFrom::End(-1))
                .and_then(|_| f.read_exact(&mut last))
                .map_err(io)?;
            if last[0] != b'\n' {
                f.write_all(b"\r\n").map_err(io)?;
            }
        }
        Ok(AppendCsv {
            // The records appended show the local time of the existing log's own zone.
            writer: PdhCsvLogWriter::new(std::io::BufWriter::new(f), flavor, &source)
                .with_time_zone(zone),
            source,
            columns,
        })
    }
}

/// The columns of a header, compared without regard to case (as Windows compares counter paths).
fn column_keys(header: &LogHeader) -> Vec<String> {
    header.counters.iter().map(LogCounter::key).collect()
}

impl LogWriter for AppendCsv {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        if column_keys(header) != self.columns {
            return Err(LogError::usage(
                &self.source,
                "cannot append: the file has other counters than the records to add",
            ));
        }
        Ok(())
    }
    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        self.writer.write_record(record)
    }
    fn finish(&mut self) -> Result<(), LogError> {
        self.writer.finish()
    }
    fn checkpoint(&mut self) -> Result<(), LogError> {
        self.writer.checkpoint()
    }
    fn record_encoder(&self) -> Option<Box<dyn RecordEncoder>> {
        self.writer.record_encoder()
    }
    fn write_encoded(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        self.writer.write_encoded(bytes)
    }
    fn takes_values(&self) -> bool {
        self.writer.takes_values()
    }
    fn write_values(&mut self, rows: &super::model::ValueRows) -> Result<(), LogError> {
        self.writer.write_values(rows)
    }
}

impl LogError {
    /// The error of an output that exists and is neither appended to nor overwritten.
    pub fn exists(source: &str) -> Self {
        LogError {
            source: source.to_owned(),
            location: None,
            kind: LogErrorKind::Exists,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_in_any_encoding() {
        let cell = "\"(PDH-TSV 4.0) (Pacific Standard Time)(480)\"\t\"x\"";
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(cell.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be_no_bom: Vec<u8> = cell.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let utf8_bom: Vec<u8> = [0xEF, 0xBB, 0xBF].into_iter().chain(cell.bytes()).collect();
        for bytes in [
            le,
            be_no_bom,
            utf8_bom,
            format!("\r\n\r\n{cell}").into_bytes(),
        ] {
            assert_eq!(LogFormat::detect(&bytes), Some(LogFormat::Tsv), "{bytes:?}");
        }
        // A code page 1252 header: the zone name is not ASCII, the format cell is.
        assert_eq!(
            LogFormat::detect(b"\"(PDH-CSV 4.0) (Hora est\xe1ndar)(0)\",\"x\""),
            Some(LogFormat::Csv)
        );
    }

    #[test]
    fn blg_start() {
        use crate::format::blg::encode::{BlgEncodeOptions, BlgWriter};
        let log = BlgWriter::new(
            std::io::Cursor::new(Vec::new()),
            BlgEncodeOptions::default(),
        )
        .unwrap()
        .finish()
        .unwrap()
        .into_inner();
        assert_eq!(LogFormat::detect(&log), Some(LogFormat::Binary));
        assert_eq!(
            LogFormat::detect(&log[..DETECT_BYTES]),
            Some(LogFormat::Binary)
        );
        assert_eq!(LogFormat::detect(&log[..SNIFF_LEN - 1]), None);
    }

    #[test]
    fn names() {
        assert_eq!(LogFormat::from_name("sql:x.db!a"), Some(LogFormat::Sql));
        assert_eq!(LogFormat::from_name("DATA.BLG"), Some(LogFormat::Binary));
        assert_eq!(LogFormat::from_name("a.Tsv"), Some(LogFormat::Tsv));
        assert_eq!(LogFormat::from_name("a.txt"), None);
        assert_eq!(LogFormat::from_name("sq"), None);
        assert_eq!(
            LogFormat::for_output("x.out", Some(LogFormat::Tsv)).unwrap(),
            LogFormat::Tsv
        );
        assert_eq!(
            LogFormat::for_output("SQL:x.db!a", None).unwrap(),
            LogFormat::Sql
        );
        assert_eq!(LogFormat::for_output("x", None).unwrap(), LogFormat::Csv);
        assert_eq!(
            LogFormat::for_output("x.csv", Some(LogFormat::Tsv))
                .unwrap_err()
                .to_string(),
            "x.csv: the name says CSV but the format asked for is TSV"
        );
    }
}
