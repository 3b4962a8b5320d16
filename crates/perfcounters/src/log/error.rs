//! The one error type of the log readers and writers: what went wrong, in which log, and where.

use std::fmt;
use std::io;

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
                write!(f, "{structure} at byte offset {offset}")
            }
            Location::Row { table, key } => write!(f, "{table} row {key}"),
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
    /// The database failed or does not hold the log asked for.
    Sql(String),
    /// A request the log cannot satisfy (an unknown log name, …).
    Usage(String),
    /// The output exists and was to be neither appended to nor overwritten.
    Exists,
}

/// An error of a log reader or writer, naming the log and the place: `file.csv: line 3, column 5:
/// not a number: "abc"`.
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

    /// A database error.
    pub fn sql(source: &str, location: Option<Location>, message: impl Into<String>) -> Self {
        LogError {
            source: source.to_owned(),
            location,
            kind: LogErrorKind::Sql(message.into()),
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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)?;
        if let Some(l) = &self.location {
            write!(f, ": {l}")?;
        }
        match &self.kind {
            LogErrorKind::Io(e) => write!(f, ": {e}"),
            LogErrorKind::Exists => f.write_str(": already exists"),
            LogErrorKind::Invalid(m) | LogErrorKind::Sql(m) | LogErrorKind::Usage(m) => {
                write!(f, ": {m}")
            }
        }
    }
}

impl std::error::Error for LogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            LogErrorKind::Io(e) => Some(e),
            _ => None,
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
