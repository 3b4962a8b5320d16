//! The long form: one row per cell of a record, the counter path's parts dictionary-encoded.

use std::sync::Arc;

use arrow_array::types::{Int32Type, UInt32Type};
use arrow_array::{
    ArrayRef, ArrowPrimitiveType, DictionaryArray, PrimitiveArray, RecordBatch, StringArray,
};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

use super::batch::{fill, records_per_batch};
use super::runs::{Dictionary, RunColumn};
use super::staging::CellArrays;
use super::time::time_type;
use crate::log::error::LogError;
use crate::log::model::{LogHeader, LogReader, Record};

/// Whether the header's log keeps raw samples (some column has counter information), so that its
/// long form has the raw columns.
pub fn has_raw_columns(header: &LogHeader) -> bool {
    header.counters.iter().any(|c| c.info.is_some())
}

fn dictionary() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
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

/// A log's long form, streamed: each item is a batch of about [`ROWS_PER_BATCH`](super::ROWS_PER_BATCH) rows
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
