//! Several logs merged in time order, with the union of their counters (`relog a.csv b.csv`).

use crate::log::error::LogError;
use crate::log::model::{Cell, LogHeader, LogKind, LogReader, LogTime, Record, ValueRows};
use crate::log::zone::LocalClock;

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
