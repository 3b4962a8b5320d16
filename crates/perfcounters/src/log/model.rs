//! The log model every log format is read into and written from.
//!
//! A log is a [`LogHeader`] (format, time zone, one [`LogCounter`] per column) followed by
//! [`Record`]s, each a time stamp and one [`Cell`] per column. A cell holds a cooked value (what a
//! PDH-CSV log stores), a raw sample that the calculator turns into a value (what a SQL log with raw
//! columns or a `.blg` log stores), or nothing.
//!
//! Readers implement [`LogReader`] and stream: one record at a time, into a [`Record`] the caller
//! reuses. Writers implement [`LogWriter`]. The filter and merge stages of `relog` sit
//! between them and know nothing of any format.

use std::fmt;

pub use crate::counter_type::CounterInfo;
use crate::path::CounterPath;
use crate::raw::RawCounter;
use crate::status::PdhStatus;

use super::error::LogError;
pub use super::time::LogTime;

/// The format of a log, as relog's `-q` summary names it. How a log is recognised, opened and
/// created: [`LogFormat::detect`], [`super::open()`], [`super::create`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LogFormat {
    /// PDH-CSV 4.0 (comma-separated text).
    Csv,
    /// PDH-TSV 4.0 (tab-separated text).
    Tsv,
    /// The SQL log schema (`DisplayToID`, `CounterDetails`, `CounterData`).
    Sql,
    /// A Performance Monitor binary log (`.blg`).
    Binary,
    /// A Parquet file (or dataset) of a log's long form (feature `arrow`).
    Parquet,
}

/// The four bytes a Parquet file starts (and ends) with: how a [`LogFormat::Parquet`] log is
/// recognised, and what the columnar module checks.
pub(crate) const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// The format of a log by the name the log model first gave it.
pub type LogKind = LogFormat;

impl LogFormat {
    /// The name relog prints for the type of an input file.
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::Csv => "CSV",
            LogFormat::Tsv => "TSV",
            LogFormat::Sql => "SQL",
            LogFormat::Binary => "Binary",
            LogFormat::Parquet => "Parquet",
        }
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub use super::zone::TimeZone;

/// One column of a log: a counter instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LogCounter {
    /// The path exactly as the log writes it (a PDH-CSV header cell).
    pub name: String,
    /// The parsed path.
    pub path: CounterPath,
    /// Type and time base, for logs that store raw samples.
    pub info: Option<CounterInfo>,
}

impl LogCounter {
    /// A column whose written name is the path's canonical form.
    pub fn new(path: CounterPath, info: Option<CounterInfo>) -> Self {
        LogCounter {
            name: path.to_string(),
            path,
            info,
        }
    }

    /// The column's identity: its written name folded with [`fold_case`](crate::path::fold_case),
    /// the case rule of counter paths. Two columns are the same counter exactly when their keys are
    /// equal (merging logs, appending to a log, and reopening a SQL log compare them this way).
    pub fn key(&self) -> String {
        crate::path::fold_case(&self.name).into_owned()
    }
}

/// The header of a log: what it is, where its time stamps are, and its columns.
///
/// The column list is complete before the first record: a reader of a format that discovers
/// instances as it goes scans ahead first, so writers can fix their columns once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LogHeader {
    /// Where the log comes from (a file name, `SQL:file.db!name`), for messages and summaries.
    pub source: String,
    /// The format.
    pub kind: LogKind,
    /// The time zone, when the log names one (typeperf's PDH-CSV does not): its name and bias at
    /// the first record and its rules. Without one, the log's local time is taken as UTC.
    pub time_zone: Option<TimeZone>,
    /// The columns.
    pub counters: Vec<LogCounter>,
}

impl LogHeader {
    /// The local time of the log's zone at the UTC instant `utc` (`utc` itself when the log names
    /// no zone).
    pub fn to_local(&self, utc: LogTime) -> LogTime {
        self.time_zone.as_ref().map_or(utc, |z| z.to_local(utc))
    }

    /// The UTC instant of a local time of the log's zone (a repeated time is its first occurrence).
    pub fn to_utc(&self, local: LogTime) -> LogTime {
        self.time_zone.as_ref().map_or(local, |z| z.to_utc(local))
    }
}

/// A raw sample in a log: `PDH_RAW_COUNTER` (status, values), plus a formatted value when the
/// log stored one (a SQL log's `CounterValue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawCell {
    /// `CStatus` of the sample; anything but `VALID_DATA` / `NEW_DATA` means no value.
    pub status: PdhStatus,
    /// The raw values.
    pub raw: RawCounter,
}

/// One cell of a record.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Cell {
    /// No value (`" "` in PDH-CSV): the counter had no value at this time.
    #[default]
    Blank,
    /// A cooked (formatted) value.
    Value(f64),
    /// A raw sample and, when known, its formatted value (`None` until computed, or when the
    /// sample yields no value: the first sample of a rate, a bad status).
    Raw(RawCell, Option<f64>),
}

impl Cell {
    /// The cell of a value of a [`ValueRows`]: NaN is a blank.
    #[inline]
    pub fn of_value(v: f64) -> Cell {
        if v.is_nan() {
            Cell::Blank
        } else {
            Cell::Value(v)
        }
    }

    /// The displayable value, if any.
    #[inline]
    pub fn value(&self) -> Option<f64> {
        match *self {
            Cell::Blank => None,
            Cell::Value(v) => Some(v),
            Cell::Raw(_, v) => v,
        }
    }

    /// The raw sample, if the cell has one.
    #[inline]
    pub fn raw(&self) -> Option<&RawCell> {
        match self {
            Cell::Raw(r, _) => Some(r),
            _ => None,
        }
    }
}

/// One record (sample) of a log.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Record {
    /// When the sample was taken: a UTC instant.
    pub time: LogTime,
    /// One cell per column of the header.
    pub cells: Vec<Cell>,
}

/// Records as values only, for consumers that need nothing of a cell but its value (a PDH-CSV
/// writer, the wide Arrow form): the records' times and their values row after row, one `f64` per
/// column, NaN where a cell has no value ([`LogReader::read_values`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueRows {
    /// Values per record.
    pub columns: usize,
    /// The records' times (UTC instants), one per record.
    pub times: Vec<LogTime>,
    /// `columns` values per record, record after record; NaN for no value.
    pub values: Vec<f64>,
}

impl ValueRows {
    /// The number of records.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Calls `f` with each record in turn, its cells the values (NaN: a blank), one record's
    /// room reused; stops at the first error.
    pub fn each_record(
        &self,
        mut f: impl FnMut(&Record) -> Result<(), LogError>,
    ) -> Result<(), LogError> {
        let mut record = Record::default();
        for (i, &time) in self.times.iter().enumerate() {
            record.time = time;
            record.cells.clear();
            record
                .cells
                .extend(self.row(i).iter().map(|&v| Cell::of_value(v)));
            f(&record)?;
        }
        Ok(())
    }

    /// The values of record `i` (empty past the last record).
    pub fn row(&self, i: usize) -> &[f64] {
        let from = i.saturating_mul(self.columns);
        self.values
            .get(from..from.saturating_add(self.columns))
            .unwrap_or(&[])
    }

    /// Removes every record, keeping the room.
    pub fn clear(&mut self) {
        self.times.clear();
        self.values.clear();
    }

    /// Keeps only the records for which `keep(time)` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(LogTime) -> bool) {
        let columns = self.columns;
        let mut kept = 0;
        for i in 0..self.times.len() {
            let Some(&t) = self.times.get(i) else { break };
            if !keep(t) {
                continue;
            }
            if kept != i {
                if let Some(slot) = self.times.get_mut(kept) {
                    *slot = t;
                }
                self.values
                    .copy_within(i * columns..(i + 1) * columns, kept * columns);
            }
            kept += 1;
        }
        self.times.truncate(kept);
        self.values.truncate(kept * columns);
    }
}

/// Records as values column by column, for consumers that build columns (the wide Arrow form):
/// the records' times, then each column's values for every record, column after column, NaN where
/// a cell has no value ([`LogReader::read_columns`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueColumns {
    /// Columns.
    pub columns: usize,
    /// The records' times (UTC instants), one per record.
    pub times: Vec<LogTime>,
    /// One value per record for each column, column after column; NaN for no value.
    pub values: Vec<f64>,
}

impl ValueColumns {
    /// The number of records.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The values of column `c`, one per record (empty past the last column).
    pub fn column(&self, c: usize) -> &[f64] {
        let n = self.len();
        let from = c.saturating_mul(n);
        self.values.get(from..from.saturating_add(n)).unwrap_or(&[])
    }

    /// Removes every record, keeping the room.
    pub fn clear(&mut self) {
        self.times.clear();
        self.values.clear();
    }

    /// Keeps only the records for which `keep(time)` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(LogTime) -> bool) {
        let n = self.len();
        let kept: Vec<bool> = self.times.iter().map(|&t| keep(t)).collect();
        let left = kept.iter().filter(|&&k| k).count();
        if left == n {
            return;
        }
        let mut to = 0;
        for c in 0..self.columns {
            for (r, &k) in kept.iter().enumerate() {
                if k {
                    if let Some(&v) = self.values.get(c * n + r) {
                        if let Some(slot) = self.values.get_mut(to) {
                            *slot = v;
                        }
                    }
                    to += 1;
                }
            }
        }
        self.values.truncate(left * self.columns);
        let mut flags = kept.iter();
        self.times
            .retain(|_| flags.next().copied().unwrap_or(false));
    }

    /// Keeps only the columns `which` (indices of the present columns, ascending), in that order;
    /// an index past the last column gives a column of NaN.
    pub fn select(&mut self, which: &[usize]) {
        let n = self.len();
        let mut values = Vec::with_capacity(which.len() * n);
        for &c in which {
            match self.values.get(c * n..(c + 1) * n) {
                Some(column) => values.extend_from_slice(column),
                None => values.resize(values.len() + n, f64::NAN),
            }
        }
        self.values = values;
        self.columns = which.len();
    }
}

/// `values`, `rows` rows of `columns` values each, row after row, as columns: column after column
/// (the transpose of the matrix), in tiles of 64 rows so that a tile of every column stays in
/// cache while it is spread over the columns. Values missing from a short `values` are NaN.
pub(crate) fn transpose(values: &[f64], rows: usize, columns: usize) -> Vec<f64> {
    const TILE: usize = 64;
    let mut out = vec![f64::NAN; rows * columns];
    for start in (0..rows).step_by(TILE) {
        let end = (start + TILE).min(rows);
        let tile = values.get(start * columns..end * columns).unwrap_or(&[]);
        for (c, column) in out.chunks_exact_mut(rows.max(1)).enumerate() {
            let to = column.get_mut(start..end).unwrap_or(&mut []);
            for (slot, &v) in to
                .iter_mut()
                .zip(tile.iter().skip(c).step_by(columns.max(1)))
            {
                *slot = v;
            }
        }
    }
    out
}

/// A streaming log reader.
pub trait LogReader {
    /// The header, complete before the first record.
    fn header(&self) -> &LogHeader;

    /// Reads the next record into `record`, whose `cells` are resized to the number of columns.
    /// Returns `Ok(false)` at the end of the log.
    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError>;

    /// Tells the reader that only the columns whose entry in `keep` is `true` are needed; it may
    /// leave the others [`Cell::Blank`] (and skip decoding them). The default ignores the hint.
    fn select_columns(&mut self, keep: &[bool]) {
        let _ = keep;
    }

    /// What the reader stepped over or stopped at without failing (a `.blg`'s unknown records, the
    /// damage that ends a broken log), one message each; the default has none.
    fn warnings(&self) -> &[String] {
        &[]
    }

    /// How a text log's bytes are encoded (PDH-CSV/TSV: a byte-order mark, UTF-8, or the ANSI
    /// code page given or detected); `None` for the other formats (the default).
    fn text_encoding(&self) -> Option<crate::encoding::TextEncoding> {
        None
    }

    /// Reads the next records as values only into `rows` (its content replaced): whole records,
    /// at least one, and no more than `max_cells` values unless one record holds more. Returns
    /// the number of records read (0 at the end of the log), or `None` when the reader has no
    /// such path (the default): the caller then reads [`read_record`](Self::read_record). A
    /// reader answers `None` to every call or to none.
    ///
    /// The values are those of the columns chosen by [`select_columns`](Self::select_columns)
    /// (every column when none was chosen), in column order; `rows.columns` says how many. A
    /// value is the cell's [`Cell::value`], NaN for none; only readers whose cells are cooked
    /// values or blanks answer (a raw sample needs its record). Records before an error come
    /// first, the error at the next call, as with `read_record`; the two calls may be mixed,
    /// each record is read once. A reader whose records are rows of values parsed in bulk (the
    /// PDH-CSV reader) hands them over without building a [`Record`] per row.
    fn read_values(
        &mut self,
        rows: &mut ValueRows,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        let _ = (rows, max_cells);
        Ok(None)
    }

    /// [`read_values`](Self::read_values) column by column: the next records' times and each
    /// column's values into `columns` (its content replaced), with the same records, values,
    /// limits and errors; `None` when the reader has no such path (the default), then the caller
    /// reads values or records. A reader answers `None` to every call or to none; the calls may
    /// be mixed with the others, each record is read once. A reader that parses rows in bulk on
    /// several threads (the PDH-CSV reader) lays them out as columns there, so that the caller
    /// only copies each column's run of values.
    fn read_columns(
        &mut self,
        columns: &mut ValueColumns,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        let _ = (columns, max_cells);
        Ok(None)
    }
}

impl<R: LogReader + ?Sized> LogReader for Box<R> {
    fn header(&self) -> &LogHeader {
        (**self).header()
    }
    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        (**self).read_record(record)
    }
    fn select_columns(&mut self, keep: &[bool]) {
        (**self).select_columns(keep)
    }
    fn text_encoding(&self) -> Option<crate::encoding::TextEncoding> {
        (**self).text_encoding()
    }

    fn warnings(&self) -> &[String] {
        (**self).warnings()
    }
    fn read_values(
        &mut self,
        rows: &mut ValueRows,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        (**self).read_values(rows, max_cells)
    }
    fn read_columns(
        &mut self,
        columns: &mut ValueColumns,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        (**self).read_columns(columns, max_cells)
    }
}

/// A streaming log writer.
pub trait LogWriter {
    /// Starts the log with its header.
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError>;
    /// Writes one record (one cell per column of the header given to
    /// [`write_header`](Self::write_header)).
    fn write_record(&mut self, record: &Record) -> Result<(), LogError>;
    /// Ends the log (flushes, commits, writes trailers).
    fn finish(&mut self) -> Result<(), LogError>;
    /// Makes what was written so far durable (flushes a file, commits a database) and goes on: a
    /// writer fed live collections calls it so that an interrupted run keeps its records. The
    /// default does nothing.
    fn checkpoint(&mut self) -> Result<(), LogError> {
        Ok(())
    }
    /// The writer's encoding of records as bytes, to run on other threads, for a writer whose
    /// records are independent rows of bytes (PDH-CSV / PDH-TSV); asked after
    /// [`write_header`](Self::write_header). [`copy`](crate::log::copy) then encodes batches of
    /// records on the other cores and hands the bytes to [`write_encoded`](Self::write_encoded)
    /// in order. The default (`None`) takes every record through
    /// [`write_record`](Self::write_record).
    fn record_encoder(&self) -> Option<Box<dyn RecordEncoder>> {
        None
    }
    /// Whether the writer writes rows of values ([`write_values`](Self::write_values)) as it
    /// writes the records of those values, losing nothing of what it writes: asked after
    /// [`write_header`](Self::write_header). [`copy`](crate::log::copy) then reads values from a
    /// reader that has them ([`LogReader::read_values`]) and hands them over without a cell per
    /// value. The default (`false`) takes records.
    fn takes_values(&self) -> bool {
        false
    }
    /// Writes the records of `rows` (NaN: a blank), as [`write_record`](Self::write_record)
    /// writes records of those times whose cells are those values or blanks. Only called on
    /// writers that [take values](Self::takes_values); the default builds each record and
    /// writes it.
    fn write_values(&mut self, rows: &ValueRows) -> Result<(), LogError> {
        rows.each_record(|record| self.write_record(record))
    }
    /// Writes bytes of [`record_encoder`](Self::record_encoder)'s encoding, as
    /// [`write_record`](Self::write_record) would have written the records they encode. Only
    /// called on writers that gave an encoder; the default refuses.
    fn write_encoded(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        let _ = bytes;
        Err(LogError::usage(
            "log writer",
            "this writer takes records, not encoded bytes",
        ))
    }
}

/// How a [`LogWriter`] turns records into its bytes, independent of the writer's state, so that
/// it can run on other threads ([`LogWriter::record_encoder`]).
pub trait RecordEncoder: Send + Sync {
    /// Appends the bytes of `record` to `out`, exactly what the writer's
    /// [`write_record`](LogWriter::write_record) writes for it.
    fn encode(&self, record: &Record, out: &mut Vec<u8>) -> Result<(), LogError>;

    /// Appends the bytes of the records of `rows` to `out`, exactly what
    /// [`encode`](Self::encode) appends for records of those times whose cells hold those values
    /// (NaN: a blank). The default builds each record and encodes it.
    fn encode_values(&self, rows: &ValueRows, out: &mut Vec<u8>) -> Result<(), LogError> {
        rows.each_record(|record| self.encode(record, out))
    }
}

impl<W: LogWriter + ?Sized> LogWriter for Box<W> {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        (**self).write_header(header)
    }
    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        (**self).write_record(record)
    }
    fn finish(&mut self) -> Result<(), LogError> {
        (**self).finish()
    }
    fn checkpoint(&mut self) -> Result<(), LogError> {
        (**self).checkpoint()
    }
    fn record_encoder(&self) -> Option<Box<dyn RecordEncoder>> {
        (**self).record_encoder()
    }
    fn write_encoded(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        (**self).write_encoded(bytes)
    }
    fn takes_values(&self) -> bool {
        (**self).takes_values()
    }
    fn write_values(&mut self, rows: &ValueRows) -> Result<(), LogError> {
        (**self).write_values(rows)
    }
}
