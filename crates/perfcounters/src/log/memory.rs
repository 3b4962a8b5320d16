//! Logs held in memory: what a program received rather than found on disk (the bytes of an upload,
//! of an object store, of Spark's `binaryFile` source), read as a file of the same content is read.
//!
//! A [`LogBytes`] is the log's bytes, shared and never copied, with a name that stands for it in
//! messages (`<bytes>`, a file-like object's name, the path it came from). [`open_bytes`] tells the
//! format from the content first and the name second, as [`LogFormat::of_file`] does for a file,
//! and opens the format's reader over the bytes: `.blg` (its column scan split among the cores
//! and its records decoded on a thread of their own as for a file), PDH-CSV/TSV (parsed on every
//! core), and Parquet logs (feature `arrow`). A SQL log is a SQLite database, which SQLite reads
//! from a file only: it is refused with that reason. A [`Pipeline`](super::Pipeline) takes logs in
//! memory beside its named inputs ([`Pipeline::log_bytes`](super::Pipeline::log_bytes)).
//!
//! ```
//! use perfcounters::log::{open_bytes, LogBytes, OpenOptions, Record};
//!
//! let csv = "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\M\\Memory\\Available MBytes\"\r\n\
//!            \"02/01/2014 00:00:00.000\",\"512\"\r\n";
//! let log = LogBytes::new("<bytes>", csv.as_bytes().to_vec());
//! let mut reader = open_bytes(&log, &OpenOptions::default()).unwrap();
//! assert_eq!(reader.header().source, "<bytes>");
//! let mut record = Record::default();
//! assert!(reader.read_record(&mut record).unwrap());
//! ```

use std::fmt;
use std::io::Cursor;
use std::sync::Arc;

use super::blg::{BlgLogReader, PIPE_BATCH_CELLS};
use super::blg_times::BlgTimesReader;
use super::error::LogError;
use super::model::{LogFormat, LogReader};
use super::open::{not_a_log, OpenOptions, DETECT_BYTES};
use super::pdh_csv_read::{CsvReadOptions, PdhCsvReader};

/// A log held in memory: its bytes (shared by every reader opened over them, never copied) and
/// the name that stands for it in messages and in its header's source (`<bytes>`, a file-like
/// object's name, the path it came from). [`open_bytes`] reads it as a file of the same content.
#[derive(Clone)]
pub struct LogBytes {
    name: String,
    bytes: Arc<dyn AsRef<[u8]> + Send + Sync>,
}

impl fmt::Debug for LogBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogBytes")
            .field("name", &self.name)
            .field("len", &self.bytes().len())
            .finish()
    }
}

impl LogBytes {
    /// The log whose bytes are `bytes` (a `Vec<u8>`, a `&'static [u8]`, or any owner of bytes),
    /// named `name` in messages and in the header's source.
    pub fn new<B>(name: impl Into<String>, bytes: B) -> Self
    where
        B: AsRef<[u8]> + Send + Sync + 'static,
    {
        LogBytes {
            name: name.into(),
            bytes: Arc::new(bytes),
        }
    }

    /// The name that stands for the log.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref().as_ref()
    }

    /// The log's format: its content first ([`LogFormat::detect`] on its first
    /// [`DETECT_BYTES`]), its name second ([`LogFormat::from_name`]); `None` when neither says.
    pub fn format(&self) -> Option<LogFormat> {
        let bytes = self.bytes();
        LogFormat::detect(bytes.get(..DETECT_BYTES).unwrap_or(bytes))
            .or_else(|| LogFormat::from_name(&self.name))
    }

    /// A reader of the bytes from `offset` on.
    fn cursor(&self, offset: u64) -> Cursor<LogBytes> {
        let mut c = Cursor::new(self.clone());
        c.set_position(offset);
        c
    }
}

impl AsRef<[u8]> for LogBytes {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

/// Opens the log `log` holds, in the format [`LogBytes::format`] finds, as a file of the same
/// content is opened ([`open_file`](super::open_file)): a `.blg` read for its times alone when
/// `options` say so.
///
/// # Errors
/// The bytes are no log, a SQL log (SQLite reads databases from files only), a Parquet log in a
/// build without the `arrow` feature, or the format's reader fails on its header.
pub fn open_bytes(log: &LogBytes, options: &OpenOptions) -> Result<Box<dyn LogReader>, LogError> {
    let name = log.name();
    match log.format() {
        Some(LogFormat::Binary) if options.times_only => {
            Ok(Box::new(BlgTimesReader::new(name, log.cursor(0))?))
        }
        Some(LogFormat::Binary) => {
            let open_at = |offset: u64| Ok(log.cursor(offset));
            let len = log.bytes().len() as u64;
            Ok(Box::new(BlgLogReader::open_parts(
                name,
                len,
                &open_at,
                super::cores(),
                PIPE_BATCH_CELLS,
            )?))
        }
        Some(LogFormat::Csv | LogFormat::Tsv) => Ok(Box::new(PdhCsvReader::new(
            log.cursor(0),
            name,
            CsvReadOptions {
                code_page: options.code_page,
            },
        )?)),
        Some(LogFormat::Parquet) => open_parquet_bytes(log),
        Some(LogFormat::Sql) => Err(LogError::usage(
            name,
            "a SQL log (a SQLite database) is read from a file, not from memory: write it to a \
             file and name that",
        )),
        None => Err(not_a_log(name)),
    }
}

#[cfg(feature = "arrow")]
fn open_parquet_bytes(log: &LogBytes) -> Result<Box<dyn LogReader>, LogError> {
    let bytes = bytes::Bytes::from_owner(log.clone());
    Ok(Box::new(super::columnar::ParquetLogReader::new(
        log.name(),
        bytes,
    )?))
}

#[cfg(not(feature = "arrow"))]
fn open_parquet_bytes(log: &LogBytes) -> Result<Box<dyn LogReader>, LogError> {
    Err(super::open::no_arrow(log.name()))
}
