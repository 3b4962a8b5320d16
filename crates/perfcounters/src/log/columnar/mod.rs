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

pub mod dataset;
pub mod parquet;

use std::sync::Arc;

use arrow_array::types::{Int32Type, UInt32Type};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, DictionaryArray, Float64Array, Int64Array, PrimitiveArray,
    RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, NullBufferBuilder};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};

use super::error::LogError;
use super::model::{Cell, LogHeader, LogReader, LogTime, Record};
use crate::snapshot::FILETIME_UNIX_EPOCH;

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
/// each header column's key into them.
#[derive(Debug)]
struct DictColumn {
    values: ArrayRef,
    keys: Vec<Option<i32>>,
}

impl DictColumn {
    fn new<'a>(items: impl Iterator<Item = Option<&'a str>>) -> Result<Self, ArrowError> {
        let mut distinct: Vec<&'a str> = Vec::new();
        let mut index: std::collections::HashMap<&'a str, i32> = Default::default();
        let mut keys = Vec::new();
        for item in items {
            let key = match item {
                None => None,
                Some(s) => Some(match index.get(s) {
                    Some(&k) => k,
                    None => {
                        let k = i32::try_from(distinct.len()).map_err(|_| {
                            ArrowError::InvalidArgumentError("too many distinct names".into())
                        })?;
                        distinct.push(s);
                        index.insert(s, k);
                        k
                    }
                }),
            };
            keys.push(key);
        }
        Ok(DictColumn {
            values: Arc::new(StringArray::from(distinct)),
            keys,
        })
    }

    fn array(&self, records: usize) -> Result<ArrayRef, ArrowError> {
        Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
            runs::<Int32Type>(&self.keys, records),
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
}

impl LongLayout {
    /// The layout of `header`'s long form.
    pub fn new(header: &LogHeader) -> Result<Self, LogError> {
        let err = |e: ArrowError| LogError::invalid(&header.source, None, e.to_string());
        let paths = || header.counters.iter().map(|c| &c.path);
        let raw = has_raw_columns(header);
        Ok(LongLayout {
            schema: long_schema(raw),
            raw,
            machine: DictColumn::new(paths().map(|p| p.machine.as_deref())).map_err(err)?,
            object: DictColumn::new(paths().map(|p| Some(p.object.as_str()))).map_err(err)?,
            instance: DictColumn::new(paths().map(|p| p.instance.as_deref())).map_err(err)?,
            counter: DictColumn::new(paths().map(|p| Some(p.counter.as_str()))).map_err(err)?,
            parent: DictColumn::new(paths().map(|p| p.parent.as_deref())).map_err(err)?,
            index: paths().map(|p| p.index).collect(),
            counter_type: header
                .counters
                .iter()
                .map(|c| c.info.map(|i| i.counter_type.0))
                .collect(),
        })
    }

    /// The schema of the batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
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
    let columns = layout.index.len();
    let mut times = Vec::with_capacity(n);
    for r in records {
        let t = utc_micros(r.time).ok_or_else(|| {
            LogError::invalid(source, None, format!("time {} is out of range", r.time))
        })?;
        times.push(t);
    }
    let rows = n.saturating_mul(columns);
    let mut time = Vec::with_capacity(rows);
    for _ in 0..columns {
        time.extend_from_slice(&times);
    }
    let time = TimestampMicrosecondArray::new(time.into(), None);
    let cell = |r: &Record, c: usize| r.cells.get(c).copied().unwrap_or_default();
    let mut value = Vec::with_capacity(rows);
    let mut value_valid = BooleanBufferBuilder::new(rows);
    for c in 0..columns {
        for r in records {
            let v = cell(r, c).value();
            value.push(v.unwrap_or_default());
            value_valid.append(v.is_some());
        }
    }
    let err = |e: ArrowError| LogError::invalid(source, None, e.to_string());
    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(time.with_timezone(TIME_ZONE)),
        layout.machine.array(n).map_err(err)?,
        layout.object.array(n).map_err(err)?,
        layout.instance.array(n).map_err(err)?,
        layout.counter.array(n).map_err(err)?,
        Arc::new(Float64Array::new(value.into(), nulls(value_valid))),
        layout.parent.array(n).map_err(err)?,
        Arc::new(runs::<UInt32Type>(&layout.index, n)),
    ];
    if layout.raw {
        let (mut first, mut second, mut multi, mut status) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        let mut raw_valid = BooleanBufferBuilder::new(rows);
        for c in 0..columns {
            for r in records {
                let raw = match cell(r, c) {
                    Cell::Raw(rc, _) => Some(rc),
                    _ => None,
                };
                first.push(raw.map_or(0, |rc| rc.raw.first));
                second.push(raw.map_or(0, |rc| rc.raw.second));
                multi.push(raw.map_or(0, |rc| rc.raw.multi_count));
                status.push(raw.map_or(0, |rc| rc.status.0));
                raw_valid.append(raw.is_some());
            }
        }
        let raw_nulls = nulls(raw_valid);
        arrays.extend([
            Arc::new(runs::<UInt32Type>(&layout.counter_type, n)) as ArrayRef,
            Arc::new(Int64Array::new(first.into(), raw_nulls.clone())),
            Arc::new(Int64Array::new(second.into(), raw_nulls.clone())),
            Arc::new(PrimitiveArray::<UInt32Type>::new(
                multi.into(),
                raw_nulls.clone(),
            )),
            Arc::new(PrimitiveArray::<UInt32Type>::new(status.into(), raw_nulls)),
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
            .map_err(|e| LogError::invalid(&header.source, None, e.to_string()))
    }
}

/// A log's wide form, streamed in batches of about [`ROWS_PER_BATCH`] cells.
pub struct WideBatches<R: LogReader> {
    reader: R,
    schema: SchemaRef,
    record: Record,
    builder: WideBuilder,
    per_batch: usize,
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
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

impl<R: LogReader> Iterator for WideBatches<R> {
    type Item = Result<RecordBatch, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
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
