//! The long form's cells gathered record by record into columns: the buffers the Parquet writer
//! encodes and the Arrow arrays of a long batch are made from, reused from batch to batch.

use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, Float64Array, Int64Array, PrimitiveArray, TimestampMicrosecondArray};
use arrow_buffer::NullBuffer;

use super::time::{utc_micros, TIME_ZONE};
use crate::log::error::LogError;
use crate::log::model::{Cell, LogTime, Record};

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
    /// The same for records pushed as values ([`CellColumns::push_values`]), NaN for none: eight
    /// bytes a cell where a [`Cell`] takes 48.
    staged_values: Vec<f64>,
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
            staged_values: Vec::new(),
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
        if !self.staged_values.is_empty() {
            self.put_staged();
        }
        self.push_time(source, record.time)?;
        if stage(&mut self.staged, &record.cells, self.columns, Cell::Blank) {
            self.put_staged();
        }
        Ok(())
    }

    /// Appends the time of a record (of the log `source`): an error beyond the capacity or for a
    /// time out of range. The record's cells are staged after it; the rows staged before it
    /// must be of one kind (cells or values), as [`CellColumns::put_staged`] places them by the
    /// times pushed.
    fn push_time(&mut self, source: &str, time: LogTime) -> Result<(), LogError> {
        if self.times.len() >= self.capacity {
            return Err(LogError::usage(source, "a batch of the long form is full"));
        }
        let t = utc_micros(time).ok_or_else(|| {
            LogError::invalid(source, None, format!("time {time} is out of range"))
        })?;
        self.times.push(t);
        Ok(())
    }

    /// Appends a record of time `time` whose cells are `values` (NaN: a blank), as
    /// [`CellColumns::push`] appends the record of those cells: fewer values than columns leave
    /// blanks, more are ignored. It has no raw sample.
    pub(crate) fn push_values(
        &mut self,
        source: &str,
        time: LogTime,
        values: &[f64],
    ) -> Result<(), LogError> {
        if !self.staged.is_empty() {
            self.put_staged();
        }
        self.push_time(source, time)?;
        if stage(&mut self.staged_values, values, self.columns, f64::NAN) {
            self.put_staged();
        }
        Ok(())
    }

    /// Puts the values gathered by [`CellColumns::push_values`] at their rows, as
    /// [`CellColumns::put_staged`] puts cells; the raw samples of those rows are none.
    fn put_staged_values(&mut self) {
        let columns = self.columns;
        let n = self.staged_values.len().checked_div(columns).unwrap_or(0);
        let first = self.times.len() - n;
        for c in 0..columns {
            let rows = c * self.capacity + first..c * self.capacity + first + n;
            let staged = self.staged_values.iter().skip(c).step_by(columns);
            if let (Some(values), Some(valid)) = (
                self.value.get_mut(rows.clone()),
                self.value_valid.get_mut(rows.clone()),
            ) {
                for ((value, valid), &v) in values.iter_mut().zip(valid).zip(staged) {
                    *valid = !v.is_nan();
                    *value = if *valid { v } else { 0.0 };
                }
            }
            if let Some(raw) = &mut self.raw {
                if let Some(valid) = raw.valid.get_mut(rows.clone()) {
                    valid.fill(false);
                }
                for column in [&mut raw.first, &mut raw.second] {
                    if let Some(x) = column.get_mut(rows.clone()) {
                        x.fill(0);
                    }
                }
                for column in [&mut raw.multi, &mut raw.status] {
                    if let Some(x) = column.get_mut(rows.clone()) {
                        x.fill(0);
                    }
                }
            }
        }
        self.staged_values.clear();
    }

    /// Puts the cells of the records gathered by [`CellColumns::push`] (or the values gathered by
    /// [`CellColumns::push_values`]) at their rows: column by column, the gathered records'
    /// neighbouring rows of its run.
    fn put_staged(&mut self) {
        if !self.staged_values.is_empty() {
            self.put_staged_values();
            return;
        }
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
            let Some(raw) = &mut self.raw else {
                for ((value, valid), cell) in values.iter_mut().zip(valid).zip(cells) {
                    let v = cell.value();
                    *value = v.unwrap_or_default();
                    *valid = v.is_some();
                }
                continue;
            };
            let (Some(first), Some(second), Some(multi), Some(status), Some(raw_valid)) = (
                raw.first.get_mut(rows.clone()),
                raw.second.get_mut(rows.clone()),
                raw.multi.get_mut(rows.clone()),
                raw.status.get_mut(rows.clone()),
                raw.valid.get_mut(rows),
            ) else {
                continue;
            };
            // One pass over the column's cells for all seven arrays (a cell is read once, where
            // a pass for the values and one for the raw samples read each twice).
            let rows = values
                .iter_mut()
                .zip(valid)
                .zip(first)
                .zip(second)
                .zip(multi)
                .zip(status)
                .zip(raw_valid);
            for (((((((value, valid), first), second), multi), status), raw_valid), cell) in
                rows.zip(cells)
            {
                let v = cell.value();
                *value = v.unwrap_or_default();
                *valid = v.is_some();
                let rc = cell.raw();
                *first = rc.map_or(0, |rc| rc.raw.first);
                *second = rc.map_or(0, |rc| rc.raw.second);
                *multi = rc.map_or(0, |rc| rc.raw.multi_count);
                *status = rc.map_or(0, |rc| rc.status.0);
                *raw_valid = rc.is_some();
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
/// Appends one record's `row` to `staged`: its first `columns` cells, and `blank` for those it
/// lacks. Whether [`STAGED_RECORDS`] records are gathered.
fn stage<T: Copy>(staged: &mut Vec<T>, row: &[T], columns: usize, blank: T) -> bool {
    let row = row.get(..columns).unwrap_or(row);
    staged.extend_from_slice(row);
    staged.extend(std::iter::repeat_n(blank, columns - row.len()));
    staged.len() >= STAGED_RECORDS * columns
}

fn close_runs<T: Copy>(v: &mut Vec<T>, n: usize, columns: usize, capacity: usize) {
    if n < capacity {
        for c in 1..columns {
            v.copy_within(c * capacity..c * capacity + n, c * n);
        }
    }
    v.truncate(n * columns);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::model::{LogTime, RawCell};
    use crate::raw::RawCounter;
    use crate::status::PdhStatus;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_array::Array;

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

    /// Records pushed as values, then as cells, then as values again, in one batch: the same
    /// arrays as the records of those values pushed as cells.
    #[test]
    fn values_and_cells_mixed_land_at_their_rows() {
        let records: Vec<Record> = batch(0, 40)
            .into_iter()
            .map(|mut r| {
                for c in &mut r.cells {
                    *c = Cell::of_value(c.value().unwrap_or(f64::NAN));
                }
                r
            })
            .collect();
        let mut mixed = CellColumns::new(4, false, 50);
        for (k, r) in records.iter().enumerate() {
            if (5..25).contains(&k) {
                mixed.push("t", r).unwrap();
            } else {
                let values: Vec<f64> = r
                    .cells
                    .iter()
                    .map(|c| c.value().unwrap_or(f64::NAN))
                    .collect();
                mixed.push_values("t", r.time, &values).unwrap();
            }
        }
        let mixed = mixed.finish();
        let cells = fill(CellColumns::new(4, false, 50), &records);
        assert_eq!(mixed.times, cells.times);
        assert_eq!(mixed.value_valid, cells.value_valid);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&mixed.value), bits(&cells.value));
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
