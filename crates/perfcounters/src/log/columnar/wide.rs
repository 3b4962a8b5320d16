//! The wide form: relog's shape, `time` then one float64 column per counter path.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, TimestampMicrosecondArray};
use arrow_buffer::{NullBuffer, NullBufferBuilder};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::batch::records_per_batch;
use super::time::{time_type, utc_micros, TIME_ZONE};
use crate::log::error::LogError;
use crate::log::model::{Cell, LogHeader, LogReader, Record, ValueColumns, ValueRows};

/// The wide-form schema of `header`: `time`, then one nullable float64 column per counter, named
/// by the path as the log writes it.
pub fn wide_schema(header: &LogHeader) -> SchemaRef {
    let mut fields = vec![Field::new("time", time_type(), false)];
    fields.extend(
        header
            .counters
            .iter()
            .map(|c| Field::new(c.name.as_str(), DataType::Float64, true)),
    );
    Arc::new(Schema::new(fields))
}

/// The wide form of `records`: one row per record.
pub fn wide_batch(
    header: &LogHeader,
    schema: &SchemaRef,
    records: &[Record],
) -> Result<RecordBatch, LogError> {
    let mut builder = WideBuilder::new(header.counters.len(), records.len());
    for r in records {
        builder.push(header, r)?;
    }
    builder.finish(header, schema)
}

/// The columns of a wide batch, built row by row as records arrive: each record's values are
/// appended to one float64 buffer per counter, and blanks (and samples without a value) to that
/// column's validity bitmap. Reading a batch of records column by column instead (one cell of
/// every record per column) strides across every record's cells once per column, which the
/// `read_log(csv).to_pandas()` comparison of `scripts/pandas-compare.py` showed as the
/// bottleneck of the wide form.
struct WideBuilder {
    times: Vec<i64>,
    values: Vec<Vec<f64>>,
    valid: Vec<NullBufferBuilder>,
}

impl WideBuilder {
    /// Room for `rows` records of `columns` counters.
    fn new(columns: usize, rows: usize) -> Self {
        WideBuilder {
            times: Vec::with_capacity(rows),
            values: (0..columns).map(|_| Vec::with_capacity(rows)).collect(),
            valid: (0..columns).map(|_| NullBufferBuilder::new(rows)).collect(),
        }
    }

    /// How many records were pushed since the last [`WideBuilder::finish`].
    fn len(&self) -> usize {
        self.times.len()
    }

    /// Drops the rows pushed since the last [`WideBuilder::finish`] (a batch cut short by an error).
    fn clear(&mut self) {
        self.times.clear();
        for (values, valid) in self.values.iter_mut().zip(&mut self.valid) {
            values.clear();
            valid.truncate(0);
        }
    }

    /// Appends `record` as one row: a record shorter than the header has nulls in the missing
    /// columns, cells past the header's columns are ignored.
    fn push(&mut self, header: &LogHeader, record: &Record) -> Result<(), LogError> {
        let time = utc_micros(record.time).ok_or_else(|| {
            LogError::invalid(
                &header.source,
                None,
                format!("time {} is out of range", record.time),
            )
        })?;
        self.times.push(time);
        let mut cells = record.cells.iter();
        for (values, valid) in self.values.iter_mut().zip(&mut self.valid) {
            match cells.next().and_then(Cell::value) {
                Some(v) => {
                    values.push(v);
                    valid.append_non_null();
                }
                None => {
                    values.push(0.0);
                    valid.append_null();
                }
            }
        }
        Ok(())
    }

    /// The batch of the rows pushed so far; the builder is left empty, keeping its buffers' room.
    fn finish(&mut self, header: &LogHeader, schema: &SchemaRef) -> Result<RecordBatch, LogError> {
        let rows = self.len();
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.values.len() + 1);
        arrays.push(Arc::new(
            TimestampMicrosecondArray::from(std::mem::replace(
                &mut self.times,
                Vec::with_capacity(rows),
            ))
            .with_timezone(TIME_ZONE),
        ));
        for (values, valid) in self.values.iter_mut().zip(&mut self.valid) {
            let values = std::mem::replace(values, Vec::with_capacity(rows));
            arrays.push(Arc::new(Float64Array::new(values.into(), valid.finish())));
        }
        RecordBatch::try_new(schema.clone(), arrays)
            .map_err(|e| LogError::new(&header.source, None, e))
    }
}

/// A log's wide form, streamed in batches of about [`ROWS_PER_BATCH`](super::ROWS_PER_BATCH) cells.
pub struct WideBatches<R: LogReader> {
    reader: R,
    schema: SchemaRef,
    record: Record,
    builder: WideBuilder,
    per_batch: usize,
    /// Whether the reader may read columns ([`LogReader::read_columns`]), until it says it does
    /// not.
    by_column: bool,
    columns: ValueColumns,
    /// The error met after the rows of the batch just handed out, for the next call.
    pending: Option<LogError>,
    /// Whether the reader may read values ([`LogReader::read_values`]), until it says it does not.
    values: bool,
    rows: ValueRows,
}

impl<R: LogReader> std::fmt::Debug for WideBatches<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WideBatches")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl<R: LogReader> WideBatches<R> {
    /// The wide form of `reader`.
    pub fn new(reader: R) -> Self {
        let schema = wide_schema(reader.header());
        let columns = reader.header().counters.len();
        let per_batch = records_per_batch(columns);
        WideBatches {
            reader,
            schema,
            record: Record::default(),
            builder: WideBuilder::new(columns, 0),
            per_batch,
            by_column: true,
            columns: ValueColumns::default(),
            pending: None,
            values: true,
            rows: ValueRows::default(),
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

/// The error of a reader that handed over rows or columns of `read` values per record for a header
/// of `columns` columns (the wide table's column and row paths).
fn wrong_width(header: &LogHeader, read: usize, columns: usize) -> LogError {
    LogError::invalid(
        &header.source,
        None,
        format!("the reader read {read} values per record for {columns} columns"),
    )
}

/// The wide form of rows of values ([`LogReader::read_values`]): the float64 columns filled from
/// the rows in tiles of 64 rows (a tile of every column stays in cache while it is spread over
/// the columns), a column's nulls where its values are NaN (none when it has no blank). A null
/// slot holds NaN.
pub fn wide_batch_of_values(
    header: &LogHeader,
    schema: &SchemaRef,
    rows: &ValueRows,
) -> Result<RecordBatch, LogError> {
    const TILE: usize = 64;
    let n = rows.len();
    let columns = rows.columns;
    let mut times = Vec::with_capacity(n);
    for &t in &rows.times {
        times.push(utc_micros(t).ok_or_else(|| {
            LogError::invalid(&header.source, None, format!("time {t} is out of range"))
        })?);
    }
    let mut values: Vec<Vec<f64>> = (0..columns).map(|_| Vec::with_capacity(n)).collect();
    for start in (0..n).step_by(TILE) {
        let tile = rows
            .values
            .get(start * columns..(start + TILE).min(n) * columns)
            .unwrap_or(&[]);
        for (j, column) in values.iter_mut().enumerate() {
            column.extend(tile.iter().skip(j).step_by(columns.max(1)));
        }
    }
    wide_batch_of_columns(header, schema, times, values)
}

impl<R: LogReader> WideBatches<R> {
    /// The next batch from the reader's columns ([`LogReader::read_columns`]): each column's runs
    /// of values copied one after the other into the column's buffer, which becomes the Arrow
    /// array's without a copy. `None` at the end, and when the reader reads no columns (then
    /// `by_column` is false). Rows read before an error make a batch, the error comes at the next
    /// call.
    fn next_by_column(&mut self) -> Option<Result<RecordBatch, LogError>> {
        if let Some(e) = self.pending.take() {
            return Some(Err(e));
        }
        let columns = self.reader.header().counters.len();
        let mut times: Vec<i64> = Vec::new();
        let mut values: Vec<Vec<f64>> = Vec::new();
        while times.len() < self.per_batch {
            let left = self.per_batch - times.len();
            match self
                .reader
                .read_columns(&mut self.columns, left.saturating_mul(columns.max(1)))
            {
                Err(e) if times.is_empty() => return Some(Err(e)),
                Err(e) => {
                    self.pending = Some(e);
                    break;
                }
                Ok(None) => {
                    self.by_column = false;
                    return None;
                }
                Ok(Some(0)) => break,
                Ok(Some(_)) if self.columns.columns != columns => {
                    return Some(Err(wrong_width(
                        self.reader.header(),
                        self.columns.columns,
                        columns,
                    )))
                }
                Ok(Some(_)) => {}
            }
            let header = self.reader.header();
            if times.capacity() == 0 {
                times.reserve_exact(self.per_batch);
                values = (0..columns)
                    .map(|_| Vec::with_capacity(self.per_batch))
                    .collect();
            }
            for &t in &self.columns.times {
                match utc_micros(t) {
                    Some(t) => times.push(t),
                    None => {
                        return Some(Err(LogError::invalid(
                            &header.source,
                            None,
                            format!("time {t} is out of range"),
                        )))
                    }
                }
            }
            for (c, column) in values.iter_mut().enumerate() {
                column.extend_from_slice(self.columns.column(c));
            }
        }
        if times.is_empty() {
            return None;
        }
        Some(wide_batch_of_columns(
            self.reader.header(),
            &self.schema,
            times,
            values,
        ))
    }
}

/// The validity bitmap of `column`: set where the value is not NaN. Written by hand, 64 values
/// into each word: `BooleanBuffer::collect_bool` (a bounds-checked closure call per value) took
/// 75 M of the 118 M instructions of the wide table's calling thread on the 300 × 20,000 log
/// (callgrind, `examples/log_profile.rs wide_table`).
fn not_nan(column: &[f64]) -> arrow_buffer::BooleanBuffer {
    let word = |values: &[f64]| {
        values
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, v)| w | u64::from(!v.is_nan()) << i)
    };
    let chunks = column.chunks_exact(64);
    let rest = chunks.remainder();
    let mut words: Vec<u64> = Vec::with_capacity(column.len().div_ceil(64));
    words.extend(chunks.map(word));
    if !rest.is_empty() {
        words.push(word(rest));
    }
    arrow_buffer::BooleanBuffer::new(arrow_buffer::Buffer::from_vec(words), 0, column.len())
}

/// The wide batch of `times` (microseconds since 1970, UTC) and one column of values per counter
/// (NaN for no value), each as long as `times`: the buffers become the arrays' without a copy, a
/// column's nulls where its values are NaN (none when it has no blank).
fn wide_batch_of_columns(
    header: &LogHeader,
    schema: &SchemaRef,
    times: Vec<i64>,
    values: Vec<Vec<f64>>,
) -> Result<RecordBatch, LogError> {
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(values.len() + 1);
    arrays.push(Arc::new(
        TimestampMicrosecondArray::from(times).with_timezone(TIME_ZONE),
    ));
    for column in values {
        let nulls = Some(NullBuffer::new(not_nan(&column))).filter(|n| n.null_count() > 0);
        arrays.push(Arc::new(Float64Array::new(column.into(), nulls)));
    }
    RecordBatch::try_new(schema.clone(), arrays).map_err(|e| LogError::new(&header.source, None, e))
}

impl<R: LogReader> Iterator for WideBatches<R> {
    type Item = Result<RecordBatch, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.by_column {
            if let Some(batch) = self.next_by_column() {
                return Some(batch);
            }
            if self.by_column {
                return None;
            }
        }
        if self.values {
            // A reader of values: straight from its rows, no record per row.
            let columns = self.reader.header().counters.len();
            match self.reader.read_values(
                &mut self.rows,
                self.per_batch.saturating_mul(columns.max(1)),
            ) {
                Err(e) => return Some(Err(e)),
                Ok(Some(0)) => return None,
                Ok(Some(_)) if self.rows.columns == columns => {
                    return Some(wide_batch_of_values(
                        self.reader.header(),
                        &self.schema,
                        &self.rows,
                    ))
                }
                Ok(Some(_)) => {
                    return Some(Err(wrong_width(
                        self.reader.header(),
                        self.rows.columns,
                        columns,
                    )))
                }
                Ok(None) => self.values = false,
            }
        }
        while self.builder.len() < self.per_batch {
            match self.reader.read_record(&mut self.record) {
                Err(e) => {
                    self.builder.clear();
                    return Some(Err(e));
                }
                Ok(false) => break,
                Ok(true) => {
                    if let Err(e) = self.builder.push(self.reader.header(), &self.record) {
                        self.builder.clear();
                        return Some(Err(e));
                    }
                }
            }
        }
        if self.builder.len() == 0 {
            return None;
        }
        Some(self.builder.finish(self.reader.header(), &self.schema))
    }
}
