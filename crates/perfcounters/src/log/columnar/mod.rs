//! The columnar form of a log (feature `arrow`): Arrow record batches, Parquet files and
//! Hive-partitioned Parquet datasets.
//!
//! * The **long form** has one row per cell of a record: `time` (a UTC instant in microseconds),
//!   the parts of the counter path (`machine`, `object`, `instance`, `counter`, `parent`,
//!   `instance_index`), and `value` (null when the cell is blank or its sample has no value). Logs
//!   that keep raw samples (`.blg`, SQL) add `counter_type`, `raw_first`, `raw_second`,
//!   `multi_count` and `status`. Strings are dictionary-encoded. [`long_schema`] and [`long_batch`]
//!   build it; [`LongBatches`] streams a whole [`LogReader`].
//! * The **wide form** is relog's shape: `time`, then one float64 column per counter path
//!   ([`wide_schema`], [`WideBatches`]).
//! * [`parquet`]: a log as a Parquet file of the long form ([`ParquetLogWriter`],
//!   [`ParquetLogReader`]); the log's header (columns, counter information, time zone) is kept in
//!   the file's key-value metadata so that reading it back gives the same log.
//! * [`dataset`]: Hive-partitioned datasets, `DIR/machine=NAME/date=YYYY-MM-DD/part-….parquet`.
//!
//! Within a batch, rows are grouped by column (in the header's order) and, within a column, by
//! time: runs of one counter compress far better than rows in time order, and readers that want
//! time order sort (`ORDER BY time`).

mod cells;
pub mod dataset;
pub mod parquet;
mod runs;

use std::sync::Arc;

use arrow_array::types::{Int32Type, UInt32Type};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, DictionaryArray, Float64Array, Int64Array, PrimitiveArray,
    RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, NullBufferBuilder};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};

use super::error::LogError;
use super::model::{Cell, LogHeader, LogReader, LogTime, Record, ValueColumns, ValueRows};
use crate::snapshot::FILETIME_UNIX_EPOCH;
use runs::{Dictionary, RunColumn};

pub use self::dataset::{DatasetReader, DatasetWriter};
pub use self::parquet::{ParquetLogReader, ParquetLogWriter};

/// The time zone of the `time` column: its values are UTC instants.
pub const TIME_ZONE: &str = "UTC";

/// The `time` value of a record's time (a UTC instant): microseconds since 1970-01-01 00:00 UTC
/// (sub-microsecond ticks dropped), or `None` when it does not fit. [`log_time`] is its inverse.
pub fn utc_micros(time: LogTime) -> Option<i64> {
    Some(time.0.checked_sub(FILETIME_UNIX_EPOCH)?.div_euclid(10))
}

/// The record time of a `time` value in microseconds since the Unix epoch, or `None` when it is
/// out of range. The inverse of [`utc_micros`].
pub fn log_time(micros: i64) -> Option<LogTime> {
    let ticks = micros.checked_mul(10)?.checked_add(FILETIME_UNIX_EPOCH)?;
    (ticks >= 0).then_some(LogTime(ticks))
}

/// Whether the header's log keeps raw samples (some column has counter information), so that its
/// long form has the raw columns.
pub fn has_raw_columns(header: &LogHeader) -> bool {
    header.counters.iter().any(|c| c.info.is_some())
}

fn dictionary() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

fn time_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(TIME_ZONE.into()))
}

/// The long-form schema; `raw` adds the raw-sample columns.
pub fn long_schema(raw: bool) -> SchemaRef {
    let mut fields = vec![
        Field::new("time", time_type(), false),
        Field::new("machine", dictionary(), true),
        Field::new("object", dictionary(), false),
        Field::new("instance", dictionary(), true),
        Field::new("counter", dictionary(), false),
        Field::new("value", DataType::Float64, true),
        Field::new("parent", dictionary(), true),
        Field::new("instance_index", DataType::UInt32, true),
    ];
    if raw {
        fields.extend([
            Field::new("counter_type", DataType::UInt32, true),
            Field::new("raw_first", DataType::Int64, true),
            Field::new("raw_second", DataType::Int64, true),
            Field::new("multi_count", DataType::UInt32, true),
            Field::new("status", DataType::UInt32, true),
        ]);
    }
    Arc::new(Schema::new(fields))
}

/// One dictionary-encoded string column of the long form: the distinct strings of the header and
/// each header column's key into them ([`RunColumn`], which the Parquet writer encodes by hand),
/// and the strings as an Arrow array for the batches.
#[derive(Debug)]
struct DictColumn {
    run: RunColumn,
    values: ArrayRef,
}

impl DictColumn {
    fn new<'a>(items: impl Iterator<Item = Option<&'a str>>) -> Result<Self, ArrowError> {
        let run =
            RunColumn::strings(items).map_err(|m| ArrowError::InvalidArgumentError(m.into()))?;
        let values: ArrayRef = match &run.dictionary {
            Dictionary::Strings(v) => Arc::new(StringArray::from_iter_values(v)),
            Dictionary::U32(_) => Arc::new(StringArray::from(Vec::<&str>::new())),
        };
        Ok(DictColumn { run, values })
    }

    fn array(&self, records: usize) -> Result<ArrayRef, ArrowError> {
        // The keys were numbered within i32 by `RunColumn::strings`.
        let keys: Vec<Option<i32>> = self
            .run
            .keys
            .iter()
            .map(|k| k.and_then(|k| i32::try_from(k).ok()))
            .collect();
        Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
            runs::<Int32Type>(&keys, records),
            self.values.clone(),
        )?))
    }
}

/// A long-form column that is constant per header column: each of `per_column` repeated for
/// `records` rows (null where it is `None`).
fn runs<T: ArrowPrimitiveType>(
    per_column: &[Option<T::Native>],
    records: usize,
) -> PrimitiveArray<T> {
    let rows = per_column.len().saturating_mul(records);
    let mut values = Vec::with_capacity(rows);
    let mut valid = BooleanBufferBuilder::new(rows);
    for v in per_column {
        values.extend(std::iter::repeat_n(v.unwrap_or_default(), records));
        valid.append_n(records, v.is_some());
    }
    PrimitiveArray::new(values.into(), nulls(valid))
}

/// The null buffer of a column whose valid rows are `valid`; `None` when every row is.
fn nulls(mut valid: BooleanBufferBuilder) -> Option<NullBuffer> {
    Some(NullBuffer::new(valid.finish())).filter(|n| n.null_count() > 0)
}

/// What the long form needs of a header, computed once per log: the schema and the
/// dictionary-encoded path parts of every column.
#[derive(Debug)]
pub struct LongLayout {
    schema: SchemaRef,
    raw: bool,
    machine: DictColumn,
    object: DictColumn,
    instance: DictColumn,
    counter: DictColumn,
    parent: DictColumn,
    index: Vec<Option<u32>>,
    counter_type: Vec<Option<u32>>,
    index_run: RunColumn,
    counter_type_run: RunColumn,
}

impl LongLayout {
    /// The layout of `header`'s long form.
    pub fn new(header: &LogHeader) -> Result<Self, LogError> {
        let err = |e: ArrowError| LogError::new(&header.source, None, e);
        let paths = || header.counters.iter().map(|c| &c.path);
        let raw = has_raw_columns(header);
        let index: Vec<Option<u32>> = paths().map(|p| p.index).collect();
        let counter_type: Vec<Option<u32>> = header
            .counters
            .iter()
            .map(|c| c.info.map(|i| i.counter_type.0))
            .collect();
        Ok(LongLayout {
            schema: long_schema(raw),
            raw,
            machine: DictColumn::new(paths().map(|p| p.machine.as_deref())).map_err(err)?,
            object: DictColumn::new(paths().map(|p| Some(p.object.as_str()))).map_err(err)?,
            instance: DictColumn::new(paths().map(|p| p.instance.as_deref())).map_err(err)?,
            counter: DictColumn::new(paths().map(|p| Some(p.counter.as_str()))).map_err(err)?,
            parent: DictColumn::new(paths().map(|p| p.parent.as_deref())).map_err(err)?,
            index_run: RunColumn::numbers(index.iter().copied()),
            counter_type_run: RunColumn::numbers(counter_type.iter().copied()),
            index,
            counter_type,
        })
    }

    /// The long form's column `name` if it is constant along each log column's run of rows
    /// (the path's parts, `instance_index`, `counter_type`), which the Parquet writer encodes
    /// itself.
    pub(crate) fn run_column(&self, name: &str) -> Option<&RunColumn> {
        match name {
            "machine" => Some(&self.machine.run),
            "object" => Some(&self.object.run),
            "instance" => Some(&self.instance.run),
            "counter" => Some(&self.counter.run),
            "parent" => Some(&self.parent.run),
            "instance_index" => Some(&self.index_run),
            "counter_type" if self.raw => Some(&self.counter_type_run),
            _ => None,
        }
    }

    /// The number of log columns.
    pub(crate) fn columns(&self) -> usize {
        self.index.len()
    }

    /// The schema of the batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

/// The long form's columns that vary from cell to cell, of `records` (each with one cell per
/// column of a header of `columns` columns; `source` names it in errors): `time`, `value` and,
/// with `raw`, `raw_first`, `raw_second`, `multi_count` and `status`; rows grouped by column,
/// then in the records' order. Plain vectors: the Parquet writer encodes them as they are
/// (docs/columnar.md), [`CellArrays::arrays`] makes the Arrow arrays of a batch.
#[derive(Debug)]
pub(crate) struct CellArrays {
    /// The records' times (the `time` column is these once per log column).
    pub(crate) times: Vec<i64>,
    /// The values, 0 where the cell has none.
    pub(crate) value: Vec<f64>,
    /// Which rows have a value.
    pub(crate) value_valid: Vec<bool>,
    /// The raw samples (raw logs only).
    pub(crate) raw: Option<RawColumns>,
    /// The buffer [`CellColumns::push`] gathers records in, handed back with the columns.
    staged: Vec<Cell>,
}

impl CellArrays {
    /// The arrays of `records`.
    pub(crate) fn new(
        source: &str,
        columns: usize,
        raw: bool,
        records: &[Record],
    ) -> Result<Self, LogError> {
        let mut cells = CellColumns::new(columns, raw, records.len());
        for r in records {
            cells.push(source, r)?;
        }
        Ok(cells.finish())
    }

    /// The `time` column of the records' times, once per log column of `columns`.
    pub(crate) fn time_array(&self, columns: usize) -> ArrayRef {
        let mut time = Vec::with_capacity(self.times.len().saturating_mul(columns));
        for _ in 0..columns {
            time.extend_from_slice(&self.times);
        }
        Arc::new(TimestampMicrosecondArray::new(time.into(), None).with_timezone(TIME_ZONE))
    }

    /// The Arrow arrays of `value` and of `raw_first`, `raw_second`, `multi_count`, `status`
    /// (raw logs only), the vectors moved into them.
    pub(crate) fn arrays(self) -> (ArrayRef, Option<[ArrayRef; 4]>) {
        let nulls = |v: &[bool]| Some(NullBuffer::from(v)).filter(|b| b.null_count() > 0);
        let value = Float64Array::new(self.value.into(), nulls(&self.value_valid));
        let raw = self.raw.map(|raw| {
            let nulls = nulls(&raw.valid);
            [
                Arc::new(Int64Array::new(raw.first.into(), nulls.clone())) as ArrayRef,
                Arc::new(Int64Array::new(raw.second.into(), nulls.clone())),
                Arc::new(PrimitiveArray::<UInt32Type>::new(
                    raw.multi.into(),
                    nulls.clone(),
                )),
                Arc::new(PrimitiveArray::<UInt32Type>::new(raw.status.into(), nulls)),
            ]
        });
        (Arc::new(value), raw)
    }
}

/// The raw-sample columns of [`CellColumns`] and [`CellArrays`]: values 0 where the cell has no
/// raw sample.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RawColumns {
    pub(crate) first: Vec<i64>,
    pub(crate) second: Vec<i64>,
    pub(crate) multi: Vec<u32>,
    pub(crate) status: Vec<u32>,
    /// Which rows have a raw sample.
    pub(crate) valid: Vec<bool>,
}

/// The buffers of a [`CellColumns`] whose arrays are written, handed back to fill the next
/// batch: their pages are touched once per writer rather than once per batch (a fresh buffer of
/// a batch's size is fresh pages from the system, each one faulted in on its first write).
/// A buffer not recovered is empty and allocated anew.
#[derive(Debug, Default)]
pub(crate) struct CellSpare {
    times: Vec<i64>,
    staged: Vec<Cell>,
    value: Vec<f64>,
    value_valid: Vec<bool>,
    raw: Option<RawColumns>,
}

impl From<CellArrays> for CellSpare {
    /// The buffers of `cells`, once written.
    fn from(cells: CellArrays) -> Self {
        CellSpare {
            times: cells.times,
            staged: cells.staged,
            value: cells.value,
            value_valid: cells.value_valid,
            raw: cells.raw,
        }
    }
}

/// The columns of [`CellArrays`], filled record by record: each cell goes straight to its row
/// of the long form (its column's run, at the record's place), so that a batch is neither copied
/// record by record nor read column by column across the records afterwards (which strides
/// across every record's cells once per column).
#[derive(Debug)]
pub(crate) struct CellColumns {
    columns: usize,
    /// The records room is made for: column `c`'s run starts at row `c × capacity`.
    capacity: usize,
    times: Vec<i64>,
    value: Vec<f64>,
    value_valid: Vec<bool>,
    raw: Option<RawColumns>,
    /// The cells of the last records pushed (at most [`STAGED_RECORDS`]), record after record,
    /// not yet put in their columns' runs (see [`CellColumns::push`]).
    staged: Vec<Cell>,
}

/// How many records [`CellColumns::push`] gathers before putting their cells in place.
///
/// Each record's cells go to as many places as the log has columns, one in each column's run
/// (runs a batch's capacity apart: for a 500-column log, a page or more apart in every one of the
/// seven buffers), so putting a record's cells in place one record at a time touched a cache line
/// and a page for every cell of every buffer: 3,500 pages a record, about 40 % of the calling
/// thread's time (`perf`) writing the generated benchmark log. Sixteen records at a time write
/// sixteen neighbouring rows of each run at once: two cache lines of `f64`s where there were
/// sixteen. The records gathered (16 × columns cells of 48 bytes) stay in the core's cache.
const STAGED_RECORDS: usize = 16;

impl CellColumns {
    /// Room for `capacity` records of `columns` columns; `raw` keeps the raw-sample columns.
    pub(crate) fn new(columns: usize, raw: bool, capacity: usize) -> Self {
        Self::reuse(columns, raw, capacity, CellSpare::default())
    }

    /// As [`CellColumns::new`], in the buffers of `spare` (of an earlier batch) where they
    /// are large enough. The rows keep the earlier batch's contents: [`CellColumns::push`]
    /// overwrites every cell of a record's row before [`CellColumns::finish`] reads it.
    pub(crate) fn reuse(columns: usize, raw: bool, capacity: usize, spare: CellSpare) -> Self {
        let rows = columns.saturating_mul(capacity);
        fn sized<T: Copy>(mut v: Vec<T>, rows: usize, zero: T) -> Vec<T> {
            v.resize(rows, zero);
            v
        }
        let mut times = spare.times;
        times.clear();
        times.reserve(capacity);
        let mut staged = spare.staged;
        staged.clear();
        staged.reserve(columns.saturating_mul(STAGED_RECORDS.min(capacity)));
        CellColumns {
            columns,
            capacity,
            staged,
            times,
            value: sized(spare.value, rows, 0.0),
            value_valid: sized(spare.value_valid, rows, false),
            raw: raw.then(|| {
                let r = spare.raw.unwrap_or_default();
                RawColumns {
                    first: sized(r.first, rows, 0),
                    second: sized(r.second, rows, 0),
                    multi: sized(r.multi, rows, 0),
                    status: sized(r.status, rows, 0),
                    valid: sized(r.valid, rows, false),
                }
            }),
        }
    }

    /// How many records were pushed.
    pub(crate) fn len(&self) -> usize {
        self.times.len()
    }

    /// Appends `record` (of the log `source`); a record shorter than the header has blanks in
    /// the missing columns, cells past the header's columns are ignored. Beyond the capacity it
    /// is an error.
    pub(crate) fn push(&mut self, source: &str, record: &Record) -> Result<(), LogError> {
        let r = self.times.len();
        if r >= self.capacity {
            return Err(LogError::usage(source, "a batch of the long form is full"));
        }
        let t = utc_micros(record.time).ok_or_else(|| {
            LogError::invalid(
                source,
                None,
                format!("time {} is out of range", record.time),
            )
        })?;
        self.times.push(t);
        let cells = record.cells.get(..self.columns).unwrap_or(&record.cells);
        self.staged.extend_from_slice(cells);
        let blanks = self.columns - cells.len();
        self.staged.extend(std::iter::repeat_n(Cell::Blank, blanks));
        if self.staged.len() >= STAGED_RECORDS * self.columns {
            self.put_staged();
        }
        Ok(())
    }

    /// Puts the cells of the records gathered by [`CellColumns::push`] at their rows: column by
    /// column, the gathered records' neighbouring rows of its run.
    fn put_staged(&mut self) {
        let columns = self.columns;
        let n = self.staged.len().checked_div(columns).unwrap_or(0);
        let first = self.times.len() - n;
        for c in 0..columns {
            let rows = c * self.capacity + first..c * self.capacity + first + n;
            // The gathered cells of column `c`, record after record.
            let cells = self.staged.iter().skip(c).step_by(columns);
            let (Some(values), Some(valid)) = (
                self.value.get_mut(rows.clone()),
                self.value_valid.get_mut(rows.clone()),
            ) else {
                continue;
            };
            for ((value, valid), cell) in values.iter_mut().zip(valid).zip(cells.clone()) {
                let v = cell.value();
                *value = v.unwrap_or_default();
                *valid = v.is_some();
            }
            let Some(raw) = &mut self.raw else {
                continue;
            };
            let (Some(first), Some(second), Some(multi), Some(status), Some(valid)) = (
                raw.first.get_mut(rows.clone()),
                raw.second.get_mut(rows.clone()),
                raw.multi.get_mut(rows.clone()),
                raw.status.get_mut(rows.clone()),
                raw.valid.get_mut(rows),
            ) else {
                continue;
            };
            let rows = first
                .iter_mut()
                .zip(second)
                .zip(multi)
                .zip(status)
                .zip(valid);
            for (((((first, second), multi), status), valid), cell) in rows.zip(cells) {
                let rc = cell.raw();
                *first = rc.map_or(0, |rc| rc.raw.first);
                *second = rc.map_or(0, |rc| rc.raw.second);
                *multi = rc.map_or(0, |rc| rc.raw.multi_count);
                *status = rc.map_or(0, |rc| rc.status.0);
                *valid = rc.is_some();
            }
        }
        self.staged.clear();
    }

    /// The columns of the records pushed (the runs of the columns moved together when fewer
    /// records than the capacity were pushed).
    pub(crate) fn finish(mut self) -> CellArrays {
        self.put_staged();
        let (n, columns, capacity) = (self.times.len(), self.columns, self.capacity);
        let (mut value, mut value_valid) = (self.value, self.value_valid);
        close_runs(&mut value, n, columns, capacity);
        close_runs(&mut value_valid, n, columns, capacity);
        let raw = self.raw.map(|mut raw| {
            close_runs(&mut raw.first, n, columns, capacity);
            close_runs(&mut raw.second, n, columns, capacity);
            close_runs(&mut raw.multi, n, columns, capacity);
            close_runs(&mut raw.status, n, columns, capacity);
            close_runs(&mut raw.valid, n, columns, capacity);
            raw
        });
        CellArrays {
            times: self.times,
            value,
            value_valid,
            raw,
            staged: self.staged,
        }
    }
}

/// Moves the first `n` rows of each of the `columns` runs of `capacity` rows of `v` together and
/// drops the rest.
fn close_runs<T: Copy>(v: &mut Vec<T>, n: usize, columns: usize, capacity: usize) {
    if n < capacity {
        for c in 1..columns {
            v.copy_within(c * capacity..c * capacity + n, c * n);
        }
    }
    v.truncate(n * columns);
}

/// The long form of `records` (each with one cell per column of the header `layout` was made of):
/// rows grouped by column, then in the records' order.
pub fn long_batch(
    header: &LogHeader,
    layout: &LongLayout,
    records: &[Record],
) -> Result<RecordBatch, LogError> {
    let source = &header.source;
    let n = records.len();
    let cells = CellArrays::new(source, layout.index.len(), layout.raw, records)?;
    let err = |e: ArrowError| LogError::new(source, None, e);
    let time = cells.time_array(layout.columns());
    let (value, raw) = cells.arrays();
    let mut arrays: Vec<ArrayRef> = vec![
        time,
        layout.machine.array(n).map_err(err)?,
        layout.object.array(n).map_err(err)?,
        layout.instance.array(n).map_err(err)?,
        layout.counter.array(n).map_err(err)?,
        value,
        layout.parent.array(n).map_err(err)?,
        Arc::new(runs::<UInt32Type>(&layout.index, n)),
    ];
    if let Some([first, second, multi, status]) = raw {
        arrays.extend([
            Arc::new(runs::<UInt32Type>(&layout.counter_type, n)) as ArrayRef,
            first,
            second,
            multi,
            status,
        ]);
    }
    RecordBatch::try_new(layout.schema.clone(), arrays).map_err(err)
}

/// Reads up to `limit` records of `reader` into `buf` (reusing its records); returns how many.
fn fill(
    reader: &mut dyn LogReader,
    buf: &mut Vec<Record>,
    limit: usize,
) -> Result<usize, LogError> {
    let mut n = 0;
    while n < limit {
        if buf.len() <= n {
            buf.push(Record::default());
        }
        let Some(r) = buf.get_mut(n) else { break };
        if !reader.read_record(r)? {
            break;
        }
        n += 1;
    }
    buf.truncate(n);
    Ok(n)
}

/// The records per batch of [`LongBatches`] and [`WideBatches`] for a log of `columns` columns:
/// about a million cells, at least one record.
pub fn records_per_batch(columns: usize) -> usize {
    (ROWS_PER_BATCH / columns.max(1)).max(1)
}

/// About how many rows (cells) a long batch or a Parquet row group holds.
pub const ROWS_PER_BATCH: usize = 1 << 20;

/// A log's long form, streamed: each item is a batch of about [`ROWS_PER_BATCH`] rows
/// (whole records).
pub struct LongBatches<R: LogReader> {
    reader: R,
    layout: LongLayout,
    records: Vec<Record>,
    per_batch: usize,
}

impl<R: LogReader> std::fmt::Debug for LongBatches<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LongBatches")
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl<R: LogReader> LongBatches<R> {
    /// The long form of `reader`.
    pub fn new(reader: R) -> Result<Self, LogError> {
        let layout = LongLayout::new(reader.header())?;
        let per_batch = records_per_batch(reader.header().counters.len());
        Ok(LongBatches {
            reader,
            layout,
            records: Vec::new(),
            per_batch,
        })
    }

    /// The schema of every batch.
    pub fn schema(&self) -> &SchemaRef {
        self.layout.schema()
    }
}

impl<R: LogReader> Iterator for LongBatches<R> {
    type Item = Result<RecordBatch, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        match fill(&mut self.reader, &mut self.records, self.per_batch) {
            Err(e) => Some(Err(e)),
            Ok(0) => None,
            Ok(_) => Some(long_batch(
                self.reader.header(),
                &self.layout,
                &self.records,
            )),
        }
    }
}

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

/// A log's wide form, streamed in batches of about [`ROWS_PER_BATCH`] cells.
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

/// The long form's column `name` of `batch`, if present.
fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a dyn Array> {
    batch.column_by_name(name).map(|a| a.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::model::RawCell;
    use crate::raw::RawCounter;
    use crate::status::PdhStatus;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};

    /// Records `start..start + n` of four columns, blank, cooked and raw cells in turn.
    fn batch(start: i64, n: i64) -> Vec<Record> {
        let cell = |k: i64, i: i64| match (k + i) % 3 {
            0 => Cell::Blank,
            1 => Cell::Value((k * 10 + i) as f64),
            _ => Cell::Raw(
                RawCell {
                    status: PdhStatus(u32::try_from(k).unwrap()),
                    raw: RawCounter::new(k * 100 + i, k + i),
                },
                Some(0.5),
            ),
        };
        (start..start + n)
            .map(|k| Record {
                time: LogTime(130_000_000_000_000_000 + k * 10_000_000),
                cells: (0..4).map(|i| cell(k, i)).collect(),
            })
            .collect()
    }

    fn fill(mut cells: CellColumns, records: &[Record]) -> CellArrays {
        for r in records {
            cells.push("t", r).unwrap();
        }
        cells.finish()
    }

    #[test]
    fn cells_gathered_by_sixteen_land_at_their_rows() {
        // 41 records (two full gatherings of 16 and 9 put in place by `finish`) in room for 50,
        // some shorter than the header's 4 columns (blanks), some longer (cells ignored).
        let mut records = batch(0, 41);
        for (k, r) in records.iter_mut().enumerate() {
            r.cells.truncate(2 + k % 4);
            if k % 5 == 0 {
                r.cells.push(Cell::Value(-1.0));
            }
        }
        let arrays = fill(CellColumns::new(4, true, 50), &records);
        let n = records.len();
        assert_eq!(arrays.times.len(), n);
        let (value, raw) = arrays.arrays();
        let value = value.as_primitive::<Float64Type>();
        let raw = raw.unwrap();
        let first = raw[0].as_primitive::<Int64Type>();
        let status = raw[3].as_primitive::<UInt32Type>();
        assert_eq!(value.len(), 4 * n);
        for c in 0..4 {
            for (k, r) in records.iter().enumerate() {
                let row = c * n + k;
                let cell = r.cells.get(c).copied().unwrap_or(Cell::Blank);
                assert_eq!(value.is_valid(row).then(|| value.value(row)), cell.value());
                assert_eq!(
                    first
                        .is_valid(row)
                        .then(|| (first.value(row), status.value(row))),
                    cell.raw().map(|rc| (rc.raw.first, rc.status.0)),
                    "column {c}, record {k}"
                );
            }
        }
    }

    #[test]
    fn reused_buffers_give_the_arrays_of_fresh_ones() {
        let (columns, capacity) = (4, 5);
        let first = fill(CellColumns::new(columns, true, capacity), &batch(0, 5));
        let spare = CellSpare::from(first);
        // Every buffer came back, full of the first batch's cells.
        let raw = spare.raw.as_ref().unwrap();
        for len in [
            spare.value.len(),
            spare.value_valid.len(),
            raw.first.len(),
            raw.second.len(),
            raw.multi.len(),
            raw.status.len(),
            raw.valid.len(),
        ] {
            assert_eq!(len, columns * capacity);
        }
        assert_eq!(spare.times.len(), capacity);
        // A shorter batch whose blanks fall where the first batch had values.
        let records = batch(7, 3);
        let reused = fill(CellColumns::reuse(columns, true, capacity, spare), &records);
        let fresh = fill(CellColumns::new(columns, true, capacity), &records);
        assert_eq!(reused.times, fresh.times);
        assert_eq!(reused.value, fresh.value);
        assert_eq!(reused.value_valid, fresh.value_valid);
        assert_eq!(reused.raw, fresh.raw);
        let ((reused_value, reused_raw), (fresh_value, fresh_raw)) =
            (reused.arrays(), fresh.arrays());
        assert_eq!(reused_value.to_data(), fresh_value.to_data());
        assert_eq!(reused_value.null_count(), 4);
        for (a, b) in reused_raw.unwrap().iter().zip(&fresh_raw.unwrap()) {
            assert_eq!(a.to_data(), b.to_data());
        }
    }
}
