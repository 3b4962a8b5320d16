//! The format-agnostic stages between log readers and writers, as relog applies them:
//!
//! * [`Merge`]: several logs in time order, with the union of their counters (`relog a.csv b.csv`);
//! * [`Filtered`]: the counters kept (`-c` / `-cf`, wildcards as in `watch`, names translated across
//!   languages through name tables), the time range (`-b` / `-e`), every n-th record (`-t`), and the
//!   raw samples turned into values by [`calc`](crate::calc);
//! * [`copy`] into any [`LogWriter`], and [`LogSummary`] for relog's `-q`.
//!
//! Both stages are themselves [`LogReader`]s, so statistics and writers consume them like any log.

use std::fmt;

use crate::calc::{Calculator, FormatOptions};
use crate::names::NameTable;
use crate::path::CounterPath;
use crate::raw::RawCounter;

use super::error::LogError;
use super::handover::RecordBatch;
use super::model::{
    Cell, LogCounter, LogHeader, LogKind, LogReader, LogTime, LogWriter, Record, RecordEncoder,
    ValueColumns, ValueRows,
};
use super::pdh_csv_row::Digits;
use super::zone::LocalClock;

/// Counter paths to keep, with wildcards, as `relog -c` / `-cf` take them.
///
/// A column is kept when any pattern [selects](CounterPath::selects) it. With name tables (one per
/// language, e.g. from a `PerfStringBackup.INI`), object and counter names also match through the
/// title index they share: `\PhysicalDisk(_Total)\% Idle Time` selects the column
/// `\Disco físico(_Total)\% de tiempo inactivo` of a Spanish log when an English and a Spanish table
/// give both names the same indexes (and the other way round).
#[derive(Clone, Debug, Default)]
pub struct CounterFilter {
    patterns: Vec<CounterPath>,
    tables: Vec<NameTable>,
}

impl CounterFilter {
    /// A filter that keeps what any of `patterns` selects.
    pub fn new(patterns: Vec<CounterPath>) -> Self {
        CounterFilter {
            patterns,
            tables: Vec::new(),
        }
    }

    /// The same filter translating names through `tables` (one per language).
    pub fn with_names(mut self, tables: Vec<NameTable>) -> Self {
        self.tables = tables;
        self
    }

    /// The patterns.
    pub fn patterns(&self) -> &[CounterPath] {
        &self.patterns
    }

    /// Whether the filter keeps the counter `path`.
    pub fn matches(&self, path: &CounterPath) -> bool {
        if self.tables.is_empty() {
            return self.patterns.iter().any(|p| {
                p.selects(
                    path,
                    std::iter::once(path.object.as_str()),
                    std::iter::once(path.counter.as_str()),
                )
            });
        }
        let objects = crate::names::aliases(&self.tables, &path.object);
        let counters = crate::names::aliases(&self.tables, &path.counter);
        self.patterns.iter().any(|p| {
            p.selects(
                path,
                objects.iter().map(String::as_str),
                counters.iter().map(String::as_str),
            )
        })
    }
}

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

/// Logs merged in time order (`relog a.csv b.csv`).
///
/// The output header takes the first log's format and time zone; the columns are the union of the
/// logs' columns (the same path in two logs is one column, compared case-insensitively), in order of
/// first appearance. Records are ordered by their UTC instants, whatever zone each log was written
/// in (a writer shows them in the first log's local time); the times of a log that names no zone
/// (typeperf's bare `(PDH-CSV 4.0)`) are read as the first log's local times. Records
/// of several logs with the same time become one record; where two logs fill the same column at the
/// same time, the first log's value is kept.
///
/// Rows of values ([`LogReader::read_values`]) are merged by the same rules when every log reads
/// values (a log of raw samples does not: the merge then answers `None`); a single log whose
/// columns are the merge's passes its rows straight through.
pub struct Merge {
    inputs: Vec<MergeInput>,
    header: LogHeader,
    warnings: Vec<String>,
    /// The output columns chosen by [`LogReader::select_columns`], in order; `None`: every column.
    chosen: Option<Vec<usize>>,
    /// Whether the logs read values: `None` until [`LogReader::read_values`] is first called.
    by_values: Option<bool>,
    /// Each input's next time while merging rows of values (kept for its room).
    times: Vec<Option<LogTime>>,
}

impl std::fmt::Debug for Merge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Merge")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

struct MergeInput {
    reader: Box<dyn LogReader>,
    /// Input column → output column.
    map: Vec<usize>,
    /// The input columns chosen ([`LogReader::select_columns`]), in order; `None`: every column.
    kept: Option<Vec<usize>>,
    /// For a log that names no zone (its times are its wall clock), the first log's zone: its
    /// times are read as that zone's local times.
    clock: Option<LocalClock>,
    /// The next record, read and not merged yet (it comes before the rows of `values`).
    pending: Record,
    has_pending: bool,
    /// The reader has no more records.
    done: bool,
    /// Rows of values read and not merged yet: from row `next` on, their times already UTC.
    values: ValueRows,
    next: usize,
    /// Whether the reader reads values: `None` until asked.
    by_values: Option<bool>,
    /// The reader's error after the rows of `values`, given when they are used up.
    failed: Option<LogError>,
}

impl MergeInput {
    /// The input column of value `j` of the rows read ([`ValueRows::columns`] wide: every
    /// column, or the chosen ones).
    fn column_of(&self, j: usize) -> Option<usize> {
        if self.values.columns == self.map.len() {
            Some(j)
        } else {
            self.kept.as_ref()?.get(j).copied()
        }
    }

    /// Value `j` of the next waiting row of values (NaN past its end).
    fn value(&self, j: usize) -> f64 {
        let at = self
            .next
            .saturating_mul(self.values.columns)
            .saturating_add(j);
        self.values.values.get(at).copied().unwrap_or(f64::NAN)
    }

    /// Whether rows of values wait.
    fn buffered(&self) -> bool {
        self.next < self.values.len()
    }

    /// Reads the next rows of values into the buffer (which must be used up): `Ok(false)` when
    /// the reader reads no values.
    fn read_values(&mut self, max_cells: usize) -> Result<bool, LogError> {
        self.next = 0;
        let read = self.reader.read_values(&mut self.values, max_cells);
        let read = match read {
            Ok(r) => r,
            Err(e) => {
                self.values.clear();
                return Err(e);
            }
        };
        self.by_values = Some(read.is_some());
        match read {
            None => {
                self.values.clear();
                return Ok(false);
            }
            Some(0) => {
                self.values.clear();
                self.done = true;
            }
            Some(_) => {
                let width = self.values.columns;
                let chosen = self.kept.as_ref().map(Vec::len);
                if width != self.map.len() && Some(width) != chosen {
                    self.values.clear();
                    return Err(LogError::usage(
                        &self.reader.header().source,
                        format!(
                            "the reader gave rows of {width} values for {} columns",
                            self.map.len()
                        ),
                    ));
                }
                if let Some(clock) = &mut self.clock {
                    for t in &mut self.values.times {
                        *t = clock.to_utc(*t);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Makes sure the next record is pending (from the rows of values when some wait, else read):
    /// `Ok(false)` at the end of the log.
    fn fill_record(&mut self) -> Result<bool, LogError> {
        if self.has_pending {
            return Ok(true);
        }
        if self.buffered() {
            let width = self.values.columns;
            self.pending.time = self
                .values
                .times
                .get(self.next)
                .copied()
                .unwrap_or_default();
            self.pending.cells.clear();
            self.pending.cells.resize(self.map.len(), Cell::Blank);
            for j in 0..width {
                let v = self.value(j);
                if let Some(cell) = self
                    .column_of(j)
                    .and_then(|c| self.pending.cells.get_mut(c))
                {
                    if !v.is_nan() {
                        *cell = Cell::Value(v);
                    }
                }
            }
            self.next += 1;
            self.has_pending = true;
            return Ok(true);
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.done {
            return Ok(false);
        }
        if self.reader.read_record(&mut self.pending)? {
            if let Some(clock) = &mut self.clock {
                self.pending.time = clock.to_utc(self.pending.time);
            }
            self.has_pending = true;
        } else {
            self.done = true;
        }
        Ok(self.has_pending)
    }

    /// The time of the next row of values (the pending record's first), reading more when none
    /// waits: `Ok(None)` at the end of the log.
    fn next_time(&mut self, max_cells: usize) -> Result<Option<LogTime>, LogError> {
        if self.has_pending {
            return Ok(Some(self.pending.time));
        }
        if !self.buffered() {
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            if self.done {
                return Ok(None);
            }
            if !self.read_values(max_cells)? {
                return Err(LogError::usage(
                    &self.reader.header().source,
                    "the reader stopped reading values",
                ));
            }
        }
        Ok(self.values.times.get(self.next).copied())
    }

    /// Merges the next row (the pending record's, or the next row of values) into `row`, whose
    /// value `pos[c]` is output column `c`'s: a value fills a slot still NaN.
    fn merge_into(&mut self, row: &mut [f64], pos: &[Option<usize>]) {
        let mut fill = |out_col: usize, v: f64| {
            let slot = pos
                .get(out_col)
                .copied()
                .flatten()
                .and_then(|p| row.get_mut(p));
            if let Some(slot) = slot {
                if slot.is_nan() {
                    *slot = v;
                }
            }
        };
        if self.has_pending {
            for (cell, &col) in self.pending.cells.iter().zip(&self.map) {
                fill(col, cell.value().unwrap_or(f64::NAN));
            }
            self.has_pending = false;
            return;
        }
        for j in 0..self.values.columns {
            let v = self.value(j);
            if let Some(&col) = self.column_of(j).and_then(|c| self.map.get(c)) {
                fill(col, v);
            }
        }
        self.next += 1;
    }
}

impl Merge {
    /// Merges `inputs` (at least one).
    pub fn new(inputs: Vec<Box<dyn LogReader>>) -> Result<Self, LogError> {
        let Some(first) = inputs.first() else {
            return Err(LogError::usage("relog", "no input log"));
        };
        let mut header = LogHeader {
            source: inputs
                .iter()
                .map(|r| r.header().source.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            kind: first.header().kind,
            time_zone: first.header().time_zone.clone(),
            counters: Vec::new(),
        };
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        let mut merged = Vec::with_capacity(inputs.len());
        let warnings = inputs
            .iter()
            .flat_map(|r| r.warnings().iter().cloned())
            .collect();
        for reader in inputs {
            let h = reader.header();
            let mut map = Vec::with_capacity(h.counters.len());
            for c in &h.counters {
                let key = c.key();
                let col = *index.entry(key).or_insert_with(|| {
                    header.counters.push(c.clone());
                    header.counters.len() - 1
                });
                map.push(col);
            }
            let clock = match (&h.time_zone, &header.time_zone) {
                (None, Some(out)) => Some(out.clock()),
                _ => None,
            };
            merged.push(MergeInput {
                reader,
                map,
                kept: None,
                clock,
                pending: Record::default(),
                has_pending: false,
                done: false,
                values: ValueRows::default(),
                next: 0,
                by_values: None,
                failed: None,
            });
        }
        Ok(Merge {
            inputs: merged,
            header,
            warnings,
            chosen: None,
            by_values: None,
            times: Vec::new(),
        })
    }

    /// The sources and kinds of the merged logs, in order.
    pub fn inputs(&self) -> Vec<(String, LogKind)> {
        self.inputs
            .iter()
            .map(|i| (i.reader.header().source.clone(), i.reader.header().kind))
            .collect()
    }

    /// The one input, when the merge is a single log whose columns are the merge's (no column
    /// repeated) and nothing of it waits here: its rows pass straight through.
    fn single(&mut self) -> Option<&mut MergeInput> {
        match self.inputs.as_mut_slice() {
            [one]
                if one.map.iter().enumerate().all(|(i, &c)| i == c)
                    && one.map.len() == self.header.counters.len()
                    && one.clock.is_none()
                    && !one.has_pending
                    && !one.buffered()
                    && one.failed.is_none() =>
            {
                Some(one)
            }
            _ => None,
        }
    }
}

impl LogReader for Merge {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn select_columns(&mut self, keep: &[bool]) {
        let chosen = |o: usize| keep.get(o).copied().unwrap_or(false);
        self.chosen = Some(
            (0..self.header.counters.len())
                .filter(|&o| chosen(o))
                .collect(),
        );
        for input in &mut self.inputs {
            let k: Vec<bool> = input.map.iter().map(|&o| chosen(o)).collect();
            input.kept = Some(
                k.iter()
                    .enumerate()
                    .filter_map(|(i, &k)| k.then_some(i))
                    .collect(),
            );
            input.reader.select_columns(&k);
        }
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        let mut min: Option<LogTime> = None;
        for input in &mut self.inputs {
            if input.fill_record()? {
                min = Some(min.map_or(input.pending.time, |m| m.min(input.pending.time)));
            }
        }
        let Some(time) = min else {
            return Ok(false);
        };
        record.time = time;
        record.cells.clear();
        record.cells.resize(self.header.counters.len(), Cell::Blank);
        for input in &mut self.inputs {
            if input.has_pending && input.pending.time == time {
                for (cell, &col) in input.pending.cells.iter().zip(&input.map) {
                    if let Some(out) = record.cells.get_mut(col) {
                        if matches!(out, Cell::Blank) {
                            *out = *cell;
                        }
                    }
                }
                input.has_pending = false;
            }
        }
        Ok(true)
    }

    /// The inputs' rows of values merged as [`read_record`](LogReader::read_record) merges
    /// records (the same times, columns and values); a single input's rows as they are.
    fn read_values(
        &mut self,
        rows: &mut ValueRows,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        if self.by_values == Some(false) {
            return Ok(None);
        }
        if let Some(one) = self.single() {
            let read = one.reader.read_values(rows, max_cells)?;
            one.by_values = Some(read.is_some());
            self.by_values = Some(read.is_some());
            return Ok(read);
        }
        if self.by_values.is_none() {
            // Every input is asked once, in order: the merge reads values only if all do. Rows
            // read meanwhile wait in the input (read_record takes them as records otherwise).
            for input in &mut self.inputs {
                if input.by_values.is_none() && !input.done && !input.buffered() {
                    if let Err(e) = input.read_values(max_cells) {
                        input.failed = Some(e);
                    }
                }
            }
            let all = self.inputs.iter().all(|i| i.by_values != Some(false));
            self.by_values = Some(all);
            if !all {
                return Ok(None);
            }
        }
        let out = self.header.counters.len();
        let mut pos = vec![None; out];
        let width = match &self.chosen {
            Some(chosen) => {
                for (p, &c) in chosen.iter().enumerate() {
                    if let Some(slot) = pos.get_mut(c) {
                        *slot = Some(p);
                    }
                }
                chosen.len()
            }
            None => {
                for (c, slot) in pos.iter_mut().enumerate() {
                    *slot = Some(c);
                }
                out
            }
        };
        rows.clear();
        rows.columns = width;
        let most = (max_cells / width.max(1)).max(1);
        while rows.len() < most {
            let mut min: Option<LogTime> = None;
            let times = &mut self.times;
            times.clear();
            for input in &mut self.inputs {
                match input.next_time(max_cells) {
                    Ok(t) => {
                        if let Some(t) = t {
                            min = Some(min.map_or(t, |m| m.min(t)));
                        }
                        times.push(t);
                    }
                    // The rows before the error first, the error when the input is next read
                    // (by either call).
                    Err(e) if rows.is_empty() => return Err(e),
                    Err(e) => {
                        input.failed = Some(e);
                        return Ok(Some(rows.len()));
                    }
                }
            }
            let Some(time) = min else { break };
            rows.times.push(time);
            let from = rows.values.len();
            rows.values.resize(from + width, f64::NAN);
            let row = rows.values.get_mut(from..).unwrap_or_default();
            for (input, &t) in self.inputs.iter_mut().zip(self.times.iter()) {
                if t == Some(time) {
                    input.merge_into(row, &pos);
                }
            }
        }
        Ok(Some(rows.len()))
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
        for (k, &col) in self.columns.iter().enumerate() {
            let cell = self.buf.cells.get(col).copied().unwrap_or_default();
            let cell = match cell {
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
            };
            if let Some(o) = out.as_deref_mut() {
                o.cells.push(cell);
            }
        }
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
        while !self.done {
            if !self.inner.read_record(&mut self.buf)? {
                self.done = true;
                break;
            }
            match self.place(self.buf.time) {
                Place::Before => self.cook(None),
                Place::After => break,
                Place::Skipped => {}
                Place::Kept => {
                    self.cook(Some(record));
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The inner reader's values (asked for the kept columns only), with the records outside the
    /// range and between every n-th left out. Values need no computing: a reader that reads
    /// values has no raw samples.
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
                return Ok(None);
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

/// Copies every record of `reader` into `writer` (header, records, finish). Returns the number of
/// records written.
///
/// A writer with a [`record_encoder`](LogWriter::record_encoder) (PDH-CSV / PDH-TSV) has its
/// records encoded on the machine's other cores while this thread reads ([`copy_with`] with the
/// default [`CopyOptions`]); the bytes are the same as one thread writes.
pub fn copy(reader: &mut dyn LogReader, writer: &mut dyn LogWriter) -> Result<u64, LogError> {
    copy_with(reader, writer, &CopyOptions::default())
}

/// How [`copy_with`] shares the work among threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOptions {
    /// Threads that encode records besides the reading thread; 0 encodes on the reading thread.
    pub encoders: usize,
    /// Cells (records × columns) per batch handed to an encoder, at least one record; a log of
    /// one batch or less is copied on the reading thread alone.
    pub batch_cells: usize,
}

impl Default for CopyOptions {
    /// One encoder per core (the reading thread shares a core with one), batches of 16,384 cells
    /// (under 1 MB of records).
    fn default() -> Self {
        CopyOptions {
            encoders: super::cores(),
            batch_cells: 1 << 14,
        }
    }
}

impl CopyOptions {
    /// Everything on the calling thread.
    pub fn single_threaded() -> Self {
        CopyOptions {
            encoders: 0,
            ..Self::default()
        }
    }
}

/// [`copy`] with the work shared as `options` say.
///
/// With encoders, this thread reads records into batches and hands batch i to encoder i mod n; it
/// writes the encoded batches in their order as they come back, with at most two batches per
/// encoder under way, so memory stays a few batches whatever the log's length. A reading error
/// ends the copy after the records before it are written, as on one thread.
pub fn copy_with(
    reader: &mut dyn LogReader,
    writer: &mut dyn LogWriter,
    options: &CopyOptions,
) -> Result<u64, LogError> {
    writer.write_header(reader.header())?;
    let encoder = match writer.record_encoder() {
        Some(e) if options.encoders > 0 => e,
        _ => {
            let mut record = Record::default();
            let mut n = 0u64;
            while reader.read_record(&mut record)? {
                writer.write_record(&record)?;
                n += 1;
            }
            writer.finish()?;
            return Ok(n);
        }
    };
    let encoder: &dyn RecordEncoder = &*encoder;
    // A reader of values hands them over without a record per row.
    let mut first = Values {
        rows: ValueRows::default(),
        bytes: Vec::new(),
    };
    let n = match first.fill(reader, options.batch_cells) {
        Ok(true) => {
            // A log that ends within the first batch is written here, with no thread started.
            let mut second = Values {
                rows: ValueRows::default(),
                bytes: Vec::new(),
            };
            match second.fill(reader, options.batch_cells) {
                Ok(false) => {
                    first.encode(encoder)?;
                    writer.write_encoded(&first.bytes)?;
                    first.len() as u64
                }
                Ok(true) => {
                    let n = encode_in_order(reader, writer, encoder, options, vec![first, second])?;
                    writer.finish()?;
                    return Ok(n);
                }
                Err(e) => {
                    // The records before the error are written, as on one thread.
                    first.encode(encoder)?;
                    writer.write_encoded(&first.bytes)?;
                    return Err(e);
                }
            }
        }
        Ok(false) if first.supported() => 0,
        Ok(false) => {
            let columns = reader.header().counters.len().max(1);
            let per_batch = (options.batch_cells / columns).max(1);
            // The first batch decides: a log that ends within it is written here, with no
            // thread started.
            let mut first = Batch {
                per_batch,
                ..Batch::default()
            };
            let ended = first.fill(reader, options.batch_cells);
            if ended.is_err() || first.len() < per_batch {
                let mut n = 0u64;
                for record in first.records.records() {
                    writer.write_record(record)?;
                    n += 1;
                }
                ended?;
                n
            } else {
                let n = encode_in_order(reader, writer, encoder, options, vec![first])?;
                writer.finish()?;
                return Ok(n);
            }
        }
        Err(e) => return Err(e),
    };
    writer.finish()?;
    Ok(n)
}

/// A batch of work for [`encode_in_order`]: read on the reading thread, encoded on another.
trait Work: Default + Send {
    /// Reads the next records (about `cells` cells); false when the log ended before any. On a
    /// reading error, the records before it stay in the batch.
    fn fill(&mut self, reader: &mut dyn LogReader, cells: usize) -> Result<bool, LogError>;
    /// The records held.
    fn len(&self) -> usize;
    /// Encodes them into [`bytes`](Work::bytes).
    fn encode(&mut self, encoder: &dyn RecordEncoder) -> Result<(), LogError>;
    /// The encoded bytes.
    fn bytes(&self) -> &[u8];
}

/// Encodes the batches `pending` (in order, the last one with more records possibly to follow)
/// and every further batch of `reader` on `options.encoders` threads, and writes them in order.
///
/// This thread reads records into batches and hands batch i to encoder i mod n; it writes the
/// encoded batches in their order as they come back, with at most two batches per encoder under
/// way, so memory stays a few batches whatever the log's length. A reading error ends the copy
/// after the records before it are written, as on one thread.
fn encode_in_order<W: Work>(
    reader: &mut dyn LogReader,
    writer: &mut dyn LogWriter,
    encoder: &dyn RecordEncoder,
    options: &CopyOptions,
    pending: Vec<W>,
) -> Result<u64, LogError> {
    std::thread::scope(|scope| {
        let mut to_workers = Vec::with_capacity(options.encoders);
        let mut from_workers = Vec::with_capacity(options.encoders);
        for _ in 0..options.encoders {
            let (batch_tx, batch_rx) = std::sync::mpsc::channel::<W>();
            let (done_tx, done_rx) = std::sync::mpsc::channel::<(W, Result<(), LogError>)>();
            scope.spawn(move || {
                while let Ok(mut batch) = batch_rx.recv() {
                    let r = batch.encode(encoder);
                    if done_tx.send((batch, r)).is_err() {
                        break;
                    }
                }
            });
            to_workers.push(batch_tx);
            from_workers.push(done_rx);
        }
        let workers = to_workers.len();
        let mut written = 0u64;
        let (mut sent, mut received) = (0usize, 0usize);
        let mut spare: Vec<W> = Vec::new();
        let mut failure = None;
        // The oldest batch under way, written when it comes back; its buffers are reused.
        let mut write_oldest = |received: &mut usize, spare: &mut Vec<W>| -> Result<(), LogError> {
            let rx = from_workers
                .get(*received % workers)
                .ok_or_else(|| LogError::internal("copy", "no encoder"))?;
            let (batch, r) = rx
                .recv()
                .map_err(|_| LogError::internal("copy", "an encoder stopped"))?;
            *received += 1;
            // The records before an encoding error are written, as on one thread.
            writer.write_encoded(batch.bytes())?;
            r?;
            written += batch.len() as u64;
            spare.push(batch);
            Ok(())
        };
        let send = |batch: W, sent: &mut usize| -> Result<(), LogError> {
            if let Some(tx) = to_workers.get(*sent % workers) {
                tx.send(batch)
                    .map_err(|_| LogError::internal("copy", "an encoder stopped"))?;
                *sent += 1;
            }
            Ok(())
        };
        for batch in pending {
            if batch.len() > 0 {
                send(batch, &mut sent)?;
            }
        }
        loop {
            if sent - received >= 2 * workers {
                write_oldest(&mut received, &mut spare)?;
            }
            let mut batch = spare.pop().unwrap_or_default();
            let more = match batch.fill(reader, options.batch_cells) {
                Ok(more) => more,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            };
            if batch.len() > 0 {
                send(batch, &mut sent)?;
            }
            if !more {
                break;
            }
        }
        while received < sent {
            write_oldest(&mut received, &mut spare)?;
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(written),
        }
    })
}

/// Records read for an encoder, and their bytes once encoded.
#[derive(Default)]
struct Batch {
    records: RecordBatch,
    /// Records per batch.
    per_batch: usize,
    bytes: Vec<u8>,
}

impl Work for Batch {
    fn fill(&mut self, reader: &mut dyn LogReader, cells: usize) -> Result<bool, LogError> {
        if self.per_batch == 0 {
            self.per_batch = (cells / reader.header().counters.len().max(1)).max(1);
        }
        self.records
            .fill(self.per_batch, |record| reader.read_record(record))
    }

    fn len(&self) -> usize {
        self.records.len()
    }

    fn encode(&mut self, encoder: &dyn RecordEncoder) -> Result<(), LogError> {
        self.bytes.clear();
        for record in self.records.records() {
            encoder.encode(record, &mut self.bytes)?;
        }
        Ok(())
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Values read for an encoder ([`LogReader::read_values`]), and their bytes once encoded.
#[derive(Default)]
struct Values {
    rows: ValueRows,
    bytes: Vec<u8>,
}

impl Values {
    /// Whether the reader read values (after a [`fill`](Work::fill)): it set the width.
    fn supported(&self) -> bool {
        self.rows.columns != usize::MAX
    }
}

impl Work for Values {
    fn fill(&mut self, reader: &mut dyn LogReader, cells: usize) -> Result<bool, LogError> {
        self.rows.columns = usize::MAX;
        match reader.read_values(&mut self.rows, cells) {
            Ok(Some(n)) => Ok(n > 0),
            Ok(None) => {
                self.rows.clear();
                Ok(false)
            }
            Err(e) => {
                self.rows.clear();
                Err(e)
            }
        }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn encode(&mut self, encoder: &dyn RecordEncoder) -> Result<(), LogError> {
        self.bytes.clear();
        encoder.encode_values(&self.rows, &mut self.bytes)
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// What relog's `-q` prints: the time range, the number of samples and the counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSummary {
    /// The first record's time, in the log's local time (as relog prints it).
    pub begin: Option<LogTime>,
    /// The last record's time, in the log's local time.
    pub end: Option<LogTime>,
    /// The number of records.
    pub samples: u64,
    /// The counter paths, as written in the log.
    pub counters: Vec<String>,
}

impl LogSummary {
    /// Reads `reader` to its end.
    pub fn of(reader: &mut dyn LogReader) -> Result<Self, LogError> {
        let counters = reader
            .header()
            .counters
            .iter()
            .map(|c| c.name.clone())
            .collect();
        // Only the time stamps are needed.
        let none = vec![false; reader.header().counters.len()];
        reader.select_columns(&none);
        let mut record = Record::default();
        let (mut begin, mut end, mut samples) = (None, None, 0u64);
        while reader.read_record(&mut record)? {
            begin.get_or_insert(record.time);
            end = Some(record.time);
            samples += 1;
        }
        let header = reader.header();
        let (begin, end) = (
            begin.map(|t| header.to_local(t)),
            end.map(|t| header.to_local(t)),
        );
        Ok(LogSummary {
            begin,
            end,
            samples,
            counters,
        })
    }
}

/// Why a `-b` / `-e` time was refused: the message says which forms are accepted or, for a form
/// that could mean two things, how it would have been read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelogTimeError {
    text: String,
    reason: String,
}

impl fmt::Display for RelogTimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\": {}", self.text, self.reason)
    }
}

impl std::error::Error for RelogTimeError {}

/// The forms [`parse_relog_time`] accepts, for error messages.
const RELOG_TIME_FORMS: &str =
    "expected M/d/yyyy [hh:mm[:ss[.fff]]] [AM|PM] or yyyy-MM-dd[Thh:mm[:ss[.fff]]]";

/// Parses a time of relog's `-b` / `-e`:
///
/// * `M/d/yyyy`, `M/d/yyyy hh:mm`, `M/d/yyyy hh:mm:ss` with optional `.fff` milliseconds and an
///   optional `AM`/`PM` (as relog prints times on an English system); `00:20` is twenty minutes
///   past midnight, hours and minutes, as relog reads it;
/// * `yyyy-MM-dd`, with an optional time after a space or `T` as above (no `AM`/`PM`).
///
/// A date is midnight. Two forms are refused because they could mean two things: a time of one
/// number (`2/1/2014 14`: hours or seconds?), and a date whose first number cannot be a month
/// (`13/1/2014` is the 13th of January only when read as d/M/yyyy); the error says how to write
/// each reading.
pub fn parse_relog_time(s: &str) -> Result<LogTime, RelogTimeError> {
    let text = s.trim();
    let fail = |reason: String| RelogTimeError {
        text: text.to_string(),
        reason,
    };
    let bad = || fail(RELOG_TIME_FORMS.to_string());
    let iso = text.as_bytes().get(4) == Some(&b'-') && text.is_char_boundary(10);
    let (date, time) = if iso {
        let (d, t) = text.split_at(10);
        let t = match t.strip_prefix('T').or_else(|| t.strip_prefix(' ')) {
            Some(t) => Some(t.trim()),
            None if t.is_empty() => None,
            None => return Err(bad()),
        };
        (d, t)
    } else {
        match text.split_once(' ') {
            Some((d, t)) => (d, Some(t.trim())),
            None => (text, None),
        }
    };
    let mut p = Digits {
        s: date.as_bytes(),
        i: 0,
    };
    let (year, month, day) = if iso {
        let year = p.number(4, 4).ok_or_else(bad)?;
        p.expect(b'-').ok_or_else(bad)?;
        let month = p.number(2, 2).ok_or_else(bad)?;
        p.expect(b'-').ok_or_else(bad)?;
        (year, month, p.number(2, 2).ok_or_else(bad)?)
    } else {
        let month = p.number(1, 2).ok_or_else(bad)?;
        p.expect(b'/').ok_or_else(bad)?;
        let day = p.number(1, 2).ok_or_else(bad)?;
        p.expect(b'/').ok_or_else(bad)?;
        (p.number(4, 4).ok_or_else(bad)?, month, day)
    };
    if p.i != date.len() {
        return Err(bad());
    }
    if !iso && month > 12 && (1..=12).contains(&day) {
        return Err(fail(format!(
            "relog reads dates as M/d/yyyy, and {month} is not a month; for the {month}th day of \
             month {day} write {day}/{month}/{year}"
        )));
    }
    let (mut h, mut m, mut sec, mut ms) = (0, 0, 0, 0);
    if let Some(t) = time.filter(|t| !t.is_empty()) {
        // AM / PM, with or without a space before it.
        let upper = t.to_ascii_uppercase();
        let (t, half) = match (upper.strip_suffix("AM"), upper.strip_suffix("PM")) {
            (Some(_), _) if !iso => (t[..t.len() - 2].trim_end(), Some(false)),
            (_, Some(_)) if !iso => (t[..t.len() - 2].trim_end(), Some(true)),
            _ => (t, None),
        };
        let (hms, frac) = match t.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let parts: Vec<&str> = hms.split(':').collect();
        let num = |x: &str| -> Option<u32> {
            (!x.is_empty() && x.len() <= 2 && x.bytes().all(|b| b.is_ascii_digit()))
                .then(|| x.parse().ok())
                .flatten()
        };
        match parts.as_slice() {
            [one] => {
                let n = num(one).ok_or_else(bad)?;
                return Err(fail(format!(
                    "a time of one number is ambiguous; write {n:02}:00 for {n} o'clock or \
                     00:00:{n:02} for {n} seconds past midnight"
                )));
            }
            [hh, mi] => (h, m) = (num(hh).ok_or_else(bad)?, num(mi).ok_or_else(bad)?),
            [hh, mi, ss] => {
                (h, m, sec) = (
                    num(hh).ok_or_else(bad)?,
                    num(mi).ok_or_else(bad)?,
                    num(ss).ok_or_else(bad)?,
                )
            }
            _ => return Err(bad()),
        }
        if let Some(f) = frac {
            if parts.len() != 3
                || f.is_empty()
                || f.len() > 3
                || !f.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(bad());
            }
            ms = f.parse::<u32>().map_err(|_| bad())? * 10u32.pow(3 - f.len() as u32);
        }
        if let Some(pm) = half {
            if !(1..=12).contains(&h) {
                return Err(fail(format!("hour {h} with AM/PM: expected 1 to 12")));
            }
            h = h % 12 + if pm { 12 } else { 0 };
        }
    }
    LogTime::from_parts(year, month, day, h, m, sec, ms)
        .ok_or_else(|| fail("no such date or time of day".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relog_times() {
        let t = |y, mo, d, h, mi, s, ms| LogTime::from_parts(y, mo, d, h, mi, s, ms).unwrap();
        let ok = |s: &str| parse_relog_time(s).unwrap();
        assert_eq!(ok("2/1/2014 00:20:14"), t(2014, 2, 1, 0, 20, 14, 0));
        // Two numbers are hours and minutes, as relog reads them.
        assert_eq!(ok("02/01/2014 00:20"), t(2014, 2, 1, 0, 20, 0, 0));
        assert_eq!(ok("2/1/2014 20:14"), t(2014, 2, 1, 20, 14, 0, 0));
        assert_eq!(ok("2/1/2014"), t(2014, 2, 1, 0, 0, 0, 0));
        assert_eq!(ok(" 2/1/2014 1:02:03.5 "), t(2014, 2, 1, 1, 2, 3, 500));
        assert_eq!(ok("2/1/2014 12:20:00 AM"), t(2014, 2, 1, 0, 20, 0, 0));
        assert_eq!(ok("2/1/2014 12:20 pm"), t(2014, 2, 1, 12, 20, 0, 0));
        assert_eq!(ok("2/1/2014 1:05:00PM"), t(2014, 2, 1, 13, 5, 0, 0));
        assert_eq!(ok("2014-02-01"), t(2014, 2, 1, 0, 0, 0, 0));
        assert_eq!(ok("2014-02-01T00:20"), t(2014, 2, 1, 0, 20, 0, 0));
        assert_eq!(ok("2014-02-01 13:20:05.25"), t(2014, 2, 1, 13, 20, 5, 250));
        let err = |s: &str| parse_relog_time(s).unwrap_err().to_string();
        for bad in [
            "",
            "2/1/14 00:00:00",
            "2/1/2014 1:2:3:4",
            "2/1/2014 x",
            "2/1/2014 1:02.5",
            "2014-2-1",
            "2014-02-01X",
            "2014-02-01 1 PM",
        ] {
            assert_eq!(
                err(bad),
                format!("\"{}\": {RELOG_TIME_FORMS}", bad.trim()),
                "{bad}"
            );
        }
        assert_eq!(
            err("2/30/2014"),
            "\"2/30/2014\": no such date or time of day"
        );
        assert_eq!(
            err("2/1/2014 14"),
            "\"2/1/2014 14\": a time of one number is ambiguous; write 14:00 for 14 o'clock or \
             00:00:14 for 14 seconds past midnight"
        );
        assert_eq!(
            err("13/1/2014 00:20"),
            "\"13/1/2014 00:20\": relog reads dates as M/d/yyyy, and 13 is not a month; for the \
             13th day of month 1 write 1/13/2014"
        );
        assert_eq!(
            err("2/1/2014 13:00 PM"),
            "\"2/1/2014 13:00 PM\": hour 13 with AM/PM: expected 1 to 12"
        );
    }
}
