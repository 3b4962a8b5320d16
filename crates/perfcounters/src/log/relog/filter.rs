//! What relog keeps of a log: counters, time range, every n-th record; raw samples computed.

use crate::calc::{Calculator, FormatOptions};
use crate::raw::RawCounter;

use crate::log::error::LogError;
use crate::log::model::{
    Cell, LogCounter, LogHeader, LogReader, LogTime, Record, ValueColumns, ValueRows,
};

use super::counter_filter::CounterFilter;

/// What [`Filtered`] keeps and how it computes values.
#[derive(Clone, Debug)]
pub struct RelogFilter {
    /// Counters to keep; `None` keeps every counter.
    pub counters: Option<CounterFilter>,
    /// Keep records at or after this time (`-b`): a local time of the (first) log's zone, as relog
    /// reads it; [`Filtered`] turns it into UTC with the log's zone rules (a time of the hour
    /// repeated when daylight saving time ends is its first occurrence).
    pub begin: Option<LogTime>,
    /// Keep records at or before this time (`-e`), a local time like `begin`.
    pub end: Option<LogTime>,
    /// Keep every n-th record of the range, the first one included (`-t`); 0 and 1 keep all.
    pub every: u64,
    /// How raw samples are formatted (default: as typeperf, unscaled and not capped at 100).
    pub format: FormatOptions,
}

impl Default for RelogFilter {
    fn default() -> Self {
        RelogFilter {
            counters: None,
            begin: None,
            end: None,
            every: 1,
            format: FormatOptions::typeperf(),
        }
    }
}

/// A log with a [`RelogFilter`] applied: only the kept columns (in their order), only the kept
/// records, raw samples computed into values.
///
/// Raw samples are computed against the previous raw sample of the same column among the records
/// kept, so with `-t n` a rate covers the n records' interval, as a log written by `relog -t n`
/// does. Records before `-b` are read and serve as the previous sample of the first record kept
/// ("to provide data for counters that require computation values", as relog's documentation says).
/// A sample with a bad status (`PDH_CSTATUS_NO_MACHINE` …) has no value and is skipped: the next
/// valid sample is computed against the last valid one, as it is after a log that stored no sample
/// for that time (a SQL log has no status column).
pub struct Filtered<R: LogReader> {
    inner: R,
    header: LogHeader,
    columns: Vec<usize>,
    calcs: Vec<Option<Calculator>>,
    prev: Vec<Option<RawCounter>>,
    buf: Record,
    begin: Option<LogTime>,
    end: Option<LogTime>,
    every: u64,
    in_range: u64,
    done: bool,
    /// An error of the inner reader met after records that [`cook_rows`](Self::cook_rows)
    /// returned first: the next call's.
    failed: Option<LogError>,
}

impl<R: LogReader> std::fmt::Debug for Filtered<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filtered")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

impl<R: LogReader> Filtered<R> {
    /// Applies `filter` to `inner`. The output may have no column when nothing matches.
    pub fn new(mut inner: R, filter: &RelogFilter) -> Result<Self, LogError> {
        let source = inner.header().source.clone();
        filter
            .format
            .validate()
            .map_err(|e| LogError::usage(&source, e.to_string()))?;
        let all = &inner.header().counters;
        let keep: Vec<bool> = all
            .iter()
            .map(|c| filter.counters.as_ref().is_none_or(|f| f.matches(&c.path)))
            .collect();
        let columns: Vec<usize> = keep
            .iter()
            .enumerate()
            .filter_map(|(i, &k)| k.then_some(i))
            .collect();
        let counters: Vec<LogCounter> = columns
            .iter()
            .filter_map(|&i| all.get(i).cloned())
            .collect();
        let calcs = counters
            .iter()
            .map(|c| {
                c.info.and_then(|info| {
                    Calculator::new(info.counter_type, info.time_base, &filter.format).ok()
                })
            })
            .collect();
        let header = LogHeader {
            counters,
            ..inner.header().clone()
        };
        inner.select_columns(&keep);
        let (begin, end) = (
            filter.begin.map(|t| header.to_utc(t)),
            filter.end.map(|t| header.to_utc(t)),
        );
        Ok(Filtered {
            inner,
            prev: vec![None; columns.len()],
            columns,
            calcs,
            header,
            buf: Record::default(),
            begin,
            end,
            every: filter.every.max(1),
            in_range: 0,
            done: false,
            failed: None,
        })
    }

    /// The reader filtered.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// Computes the raw cells of the kept columns of `buf` into `out` (when given) and updates the
    /// previous samples.
    fn cook(&mut self, mut out: Option<&mut Record>) {
        if let Some(o) = out.as_deref_mut() {
            o.time = self.buf.time;
            o.cells.clear();
        }
        for k in 0..self.columns.len() {
            let cell = self.cooked(k);
            if let Some(o) = out.as_deref_mut() {
                o.cells.push(cell);
            }
        }
    }

    /// [`cook`](Self::cook) into a row of values appended to `out` (NaN for none).
    fn cook_values(&mut self, out: &mut Vec<f64>) {
        for k in 0..self.columns.len() {
            out.push(self.cooked(k).value().unwrap_or(f64::NAN));
        }
    }

    /// The kept column `k` of `buf`, its raw sample computed against the previous one of the
    /// column, which it then becomes: the one rule of [`cook`](Self::cook) and
    /// [`cook_values`](Self::cook_values).
    #[inline(always)]
    fn cooked(&mut self, k: usize) -> Cell {
        let col = self.columns.get(k).copied().unwrap_or(usize::MAX);
        match self.buf.cells.get(col).copied().unwrap_or_default() {
            Cell::Raw(rc, stored) => {
                let prev = self.prev.get_mut(k);
                let value = if !rc.status.is_success() {
                    None
                } else if let Some(Some(calc)) = self.calcs.get(k) {
                    let older = prev.as_ref().and_then(|p| p.as_ref());
                    let v = calc.compute(&rc.raw, older).ok();
                    if let Some(p) = prev {
                        *p = Some(rc.raw);
                    }
                    v
                } else {
                    stored
                };
                Cell::Raw(rc, value)
            }
            other => other,
        }
    }

    /// Reads the inner reader's records up to the next one kept, left in `buf` to be computed
    /// (those before `-b` computed as previous samples, those between every n-th skipped); false
    /// at the end of the range or of the log.
    fn next_kept(&mut self) -> Result<bool, LogError> {
        while !self.done {
            if !self.inner.read_record(&mut self.buf)? {
                self.done = true;
                break;
            }
            match self.place(self.buf.time) {
                Place::Before => self.cook(None),
                Place::After => break,
                Place::Skipped => {}
                Place::Kept => return Ok(true),
            }
        }
        Ok(false)
    }

    /// [`read_values`](LogReader::read_values) for an inner reader of records: the next kept
    /// records (at least one, no more than `max_cells` values unless one record holds more),
    /// their raw samples computed as [`read_record`](LogReader::read_record) computes them, as
    /// values, without a cell per value. An error after some records is kept for the next call.
    fn cook_rows(&mut self, rows: &mut ValueRows, max_cells: usize) -> Result<usize, LogError> {
        rows.clear();
        rows.columns = self.columns.len();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let width = rows.columns.max(1);
        while rows.is_empty() || (rows.len() + 1) * width <= max_cells {
            match self.next_kept() {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) if rows.is_empty() => return Err(e),
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
            rows.times.push(self.buf.time);
            self.cook_values(&mut rows.values);
        }
        Ok(rows.len())
    }
}

/// Where a record's time puts it among `-b`, `-e` and `-t` ([`Filtered::place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Before the range: left out (its raw sample still counts for the next rate).
    Before,
    /// After the range, or anything once a record was: the reading ends.
    After,
    /// In the range, between every n-th record: left out.
    Skipped,
    /// In the range and an n-th record: kept.
    Kept,
}

impl<R: LogReader> Filtered<R> {
    /// The place of the next record, at time `t`, counting it in the range: the one rule of the
    /// record and the rows-of-values paths.
    fn place(&mut self, t: LogTime) -> Place {
        if self.done {
            return Place::After;
        }
        if self.begin.is_some_and(|b| t < b) {
            return Place::Before;
        }
        if self.end.is_some_and(|e| t > e) {
            self.done = true;
            return Place::After;
        }
        let n = self.in_range;
        self.in_range += 1;
        if n.is_multiple_of(self.every) {
            Place::Kept
        } else {
            Place::Skipped
        }
    }
}

impl<R: LogReader> LogReader for Filtered<R> {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn warnings(&self) -> &[String] {
        self.inner.warnings()
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let kept = self.next_kept()?;
        if kept {
            self.cook(Some(record));
        }
        Ok(kept)
    }

    /// The inner reader's values (asked for the kept columns only), with the records outside the
    /// range and between every n-th left out. Values need no computing: a reader that reads
    /// values has no raw samples. An inner reader of records only (a `.blg`, a SQL log) has its
    /// records computed into values here, as [`read_record`](LogReader::read_record) computes
    /// them: a writer of values (PDH-CSV) then takes eight bytes per value instead of a cell.
    fn read_values(
        &mut self,
        rows: &mut ValueRows,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        loop {
            if self.done {
                rows.clear();
                rows.columns = self.columns.len();
                return Ok(Some(0));
            }
            let Some(n) = self.inner.read_values(rows, max_cells)? else {
                return self.cook_rows(rows, max_cells).map(Some);
            };
            if n == 0 {
                self.done = true;
                continue;
            }
            if rows.columns != self.columns.len() {
                // A reader that read every column: the kept ones, in place.
                let all = rows.columns;
                let kept = self.columns.len();
                for r in 0..rows.len() {
                    for (k, &col) in self.columns.iter().enumerate() {
                        let v = rows.values.get(r * all + col).copied().unwrap_or(f64::NAN);
                        if let Some(slot) = rows.values.get_mut(r * kept + k) {
                            *slot = v;
                        }
                    }
                }
                rows.values.truncate(rows.len() * kept);
                rows.columns = kept;
            }
            if self.begin.is_some() || self.end.is_some() || self.every > 1 {
                rows.retain(|t| self.place(t) == Place::Kept);
            }
            if !rows.is_empty() {
                return Ok(Some(rows.len()));
            }
        }
    }

    /// [`read_values`](LogReader::read_values) column by column: the inner reader's columns (the
    /// kept ones), the records outside the range and between every n-th left out.
    fn read_columns(
        &mut self,
        columns: &mut ValueColumns,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        loop {
            if self.done {
                columns.clear();
                columns.columns = self.columns.len();
                return Ok(Some(0));
            }
            let Some(n) = self.inner.read_columns(columns, max_cells)? else {
                return Ok(None);
            };
            if n == 0 {
                self.done = true;
                continue;
            }
            if columns.columns != self.columns.len() {
                // A reader that read every column: the kept ones.
                columns.select(&self.columns);
            }
            if self.begin.is_some() || self.end.is_some() || self.every > 1 {
                columns.retain(|t| self.place(t) == Place::Kept);
            }
            if !columns.is_empty() {
                return Ok(Some(columns.len()));
            }
        }
    }
}
