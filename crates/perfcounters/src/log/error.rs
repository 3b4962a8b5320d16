//! The one error type of the log readers and writers: what went wrong, in which log, and where.
//!
//! A [`LogError`] keeps the error it comes from: [`std::error::Error::source`] gives the
//! `io::Error`, the [`DecodeError`] or [`ReadError`] of a `.blg`, the `csv::Error`, the
//! `rusqlite::Error`, the `ParquetError` or the `ArrowError`. Its own message names the log and the
//! place and leaves the cause's text to that cause, as every error of the crate does (see the crate
//! documentation, "Errors"): print the chain with [`ErrorChain`](crate::ErrorChain).

use std::fmt;
use std::io;

use crate::format::blg::ReadError;
use crate::format::DecodeError;

/// Where in a log a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// A text log: 1-based line, and the 1-based column (cell number, the time stamp being column 1)
    /// when the problem is in one cell.
    Text {
        /// The line.
        line: u64,
        /// The column (cell), if the problem is in one.
        column: Option<u64>,
    },
    /// A binary log: the byte offset, and the structure being read.
    Offset {
        /// Byte offset from the start of the file.
        offset: u64,
        /// The structure, e.g. `"data record"`.
        structure: &'static str,
    },
    /// A SQL log: a table and the row's key.
    Row {
        /// The table (`CounterData`, `CounterDetails`, `DisplayToID`).
        table: &'static str,
        /// The key of the row, e.g. `CounterID 3, RecordIndex 7`.
        key: String,
    },
    /// A Parquet log: a row group (0-based, as Parquet numbers them).
    RowGroup {
        /// The row group.
        index: usize,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Text { line, column: None } => write!(f, "line {line}"),
            Location::Text {
                line,
                column: Some(c),
            } => write!(f, "line {line}, column {c}"),
            Location::Offset { offset, structure } => {
                write!(f, "{structure} at offset {offset}")
            }
            Location::Row { table, key } => write!(f, "{table} row {key}"),
            Location::RowGroup { index } => write!(f, "row group {index}"),
        }
    }
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum LogErrorKind {
    /// Reading or writing failed.
    Io(io::Error),
    /// The content is not what the format allows (a missing `(PDH-CSV 4.0)` cell, a bad time, a
    /// row with the wrong number of cells, a value that is not a number …).
    Invalid(String),
    /// The bytes of a binary log (`.blg`) are malformed.
    Decode(DecodeError),
    /// The `.blg` reader stopped for another reason than I/O or malformed bytes (a log without a
    /// counter list, …).
    Blg(ReadError),
    /// The CSV parser rejected the text of a PDH-CSV/TSV log.
    Csv(csv::Error),
    /// The database of a SQL log failed (boxed: SQLite's error is large, and errors travel far).
    #[cfg(feature = "sql")]
    Sql(Box<rusqlite::Error>),
    /// The Parquet reader or writer failed (its I/O errors are [`LogErrorKind::Io`]).
    #[cfg(feature = "arrow")]
    Parquet(parquet::errors::ParquetError),
    /// An Arrow array or record batch could not be built or read.
    #[cfg(feature = "arrow")]
    Arrow(arrow_schema::ArrowError),
    /// A request the log cannot satisfy (an unknown log name, …).
    Usage(String),
    /// The output exists and was to be neither appended to nor overwritten.
    Exists,
    /// The reader or writer itself failed (a worker thread stopped, …): nothing is wrong with the
    /// log or the request.
    Internal(String),
}

impl From<io::Error> for LogErrorKind {
    fn from(e: io::Error) -> Self {
        LogErrorKind::Io(e)
    }
}

impl From<DecodeError> for LogErrorKind {
    fn from(e: DecodeError) -> Self {
        LogErrorKind::Decode(e)
    }
}

impl From<csv::Error> for LogErrorKind {
    /// The CSV parser's error; one that only wraps a read or write error (the `csv` crate's one
    /// I/O kind, [`csv::ErrorKind::Io`]) becomes [`LogErrorKind::Io`].
    fn from(e: csv::Error) -> Self {
        if !e.is_io_error() {
            return LogErrorKind::Csv(e);
        }
        match e.into_kind() {
            csv::ErrorKind::Io(io) => LogErrorKind::Io(io),
            // `is_io_error` is true of the `Io` kind alone.
            _ => LogErrorKind::Internal("the CSV parser reported an I/O error without one".into()),
        }
    }
}

#[cfg(feature = "sql")]
impl From<rusqlite::Error> for LogErrorKind {
    fn from(e: rusqlite::Error) -> Self {
        LogErrorKind::Sql(Box::new(e))
    }
}

impl From<ReadError> for LogErrorKind {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Io(e) => LogErrorKind::Io(e),
            ReadError::Decode(e) => LogErrorKind::Decode(e),
            other => LogErrorKind::Blg(other),
        }
    }
}

#[cfg(feature = "arrow")]
impl From<parquet::errors::ParquetError> for LogErrorKind {
    /// The Parquet crate's error; an I/O error it carries becomes [`LogErrorKind::Io`].
    fn from(e: parquet::errors::ParquetError) -> Self {
        use parquet::errors::ParquetError;
        match e {
            ParquetError::External(inner) => match inner.downcast::<io::Error>() {
                Ok(io) => LogErrorKind::Io(*io),
                Err(other) => LogErrorKind::Parquet(ParquetError::External(other)),
            },
            other => LogErrorKind::Parquet(other),
        }
    }
}

#[cfg(feature = "arrow")]
impl From<arrow_schema::ArrowError> for LogErrorKind {
    /// The Arrow crate's error (one of I/O says what failed and keeps the `io::Error` as its own
    /// source).
    fn from(e: arrow_schema::ArrowError) -> Self {
        LogErrorKind::Arrow(e)
    }
}

/// An error of a log reader or writer, naming the log and the place: `file.csv: line 3, column 5:
/// not a number: "abc"`.
///
/// When the error comes from another one (I/O, a malformed `.blg`, the CSV parser, SQLite,
/// Parquet, Arrow), the message names the log and the place only, and
/// [`source`](std::error::Error::source) returns that error:
///
/// ```
/// use std::error::Error;
/// use perfcounters::log::{LogError, Location};
/// use perfcounters::ErrorChain;
///
/// let io = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file ends early");
/// let e = LogError::io("data.csv", Some(Location::Text { line: 7, column: None }), io);
/// assert_eq!(e.to_string(), "data.csv: line 7");
/// assert!(e.source().unwrap().is::<std::io::Error>());
/// assert_eq!(ErrorChain(&e).to_string(), "data.csv: line 7: the file ends early");
/// ```
#[derive(Debug)]
pub struct LogError {
    /// The log (file name or `SQL:file.db!name`).
    pub source: String,
    /// Where in the log, when known.
    pub location: Option<Location>,
    /// What went wrong.
    pub kind: LogErrorKind,
}

impl LogError {
    /// The error `kind` (or what converts into one: an `io::Error`, a [`DecodeError`], a
    /// [`ReadError`], a `csv::Error`, a `rusqlite::Error`, a `ParquetError`, an `ArrowError`) of the
    /// log `source`, at `location`. A [`DecodeError`] gives its own location (its structure and
    /// byte offset) when none is given.
    pub fn new(source: &str, location: Option<Location>, kind: impl Into<LogErrorKind>) -> Self {
        let kind = kind.into();
        let location = match (&kind, location) {
            (LogErrorKind::Decode(e), None) => Some(Location::Offset {
                offset: e.offset() as u64,
                structure: e.structure(),
            }),
            (_, l) => l,
        };
        LogError {
            source: source.to_owned(),
            location,
            kind,
        }
    }

    /// A content error at a place in a log.
    pub fn invalid(source: &str, location: Option<Location>, message: impl Into<String>) -> Self {
        LogError {
            source: source.to_owned(),
            location,
            kind: LogErrorKind::Invalid(message.into()),
        }
    }

    /// An I/O error of a log.
    pub fn io(source: &str, location: Option<Location>, e: io::Error) -> Self {
        LogError {
            source: source.to_owned(),
            location,
            kind: LogErrorKind::Io(e),
        }
    }

    /// A usage error (nothing wrong with the content).
    pub fn usage(source: &str, message: impl Into<String>) -> Self {
        LogError {
            source: source.to_owned(),
            location: None,
            kind: LogErrorKind::Usage(message.into()),
        }
    }

    /// A failure of the reader or writer itself (nothing wrong with the log or the request).
    pub fn internal(source: &str, message: impl Into<String>) -> Self {
        LogError {
            source: source.to_owned(),
            location: None,
            kind: LogErrorKind::Internal(message.into()),
        }
    }

    /// The 1-based line of a text-log error.
    pub fn line(&self) -> Option<u64> {
        match self.location {
            Some(Location::Text { line, .. }) => Some(line),
            _ => None,
        }
    }

    /// The 1-based column of a text-log error.
    pub fn column(&self) -> Option<u64> {
        match self.location {
            Some(Location::Text { column, .. }) => column,
            _ => None,
        }
    }
}

impl fmt::Display for LogError {
    /// The log, the place (unless the cause names it: a [`DecodeError`] gives its structure and
    /// offset), and the problem when no other error is the cause.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)?;
        match (&self.kind, &self.location) {
            (LogErrorKind::Decode(_), _) | (_, None) => {}
            (_, Some(l)) => write!(f, ": {l}")?,
        }
        match &self.kind {
            LogErrorKind::Exists => f.write_str(": already exists"),
            LogErrorKind::Invalid(m) | LogErrorKind::Usage(m) | LogErrorKind::Internal(m) => {
                write!(f, ": {m}")
            }
            // The cause says what went wrong.
            _ => Ok(()),
        }
    }
}

impl std::error::Error for LogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            LogErrorKind::Io(e) => Some(e),
            LogErrorKind::Decode(e) => Some(e),
            LogErrorKind::Blg(e) => Some(e),
            LogErrorKind::Csv(e) => Some(e),
            #[cfg(feature = "sql")]
            LogErrorKind::Sql(e) => Some(&**e),
            #[cfg(feature = "arrow")]
            LogErrorKind::Parquet(e) => Some(e),
            #[cfg(feature = "arrow")]
            LogErrorKind::Arrow(e) => Some(e),
            LogErrorKind::Invalid(_)
            | LogErrorKind::Usage(_)
            | LogErrorKind::Internal(_)
            | LogErrorKind::Exists => None,
        }
    }
}

/// At most this many characters of offending text are quoted in a message.
const QUOTE_MAX: usize = 40;

/// Quotes a piece of offending text for a message, clipped.
pub(crate) fn quote(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        if i == QUOTE_MAX {
            out.push('…');
            break;
        }
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}
