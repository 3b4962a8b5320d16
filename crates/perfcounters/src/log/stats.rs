//! Minimum, average and maximum per counter over a log, as Performance Monitor's value bar and
//! `PdhComputeCounterStatistics` show them.
//!
//! * A column of raw samples (a SQL log with raw values, a `.blg`) is summarized by
//!   [`StatisticsBuilder`]: minimum and maximum over the displayable values, the average by the
//!   first-vs-last formula of the counter type (see [`crate::stats`]).
//! * A column of cooked values (PDH-CSV) has no raw data: minimum, maximum and the arithmetic mean of
//!   its values ([`ValueStatistics`]), which is what Performance Monitor shows for such a log.
//!
//! One pass, constant memory per column.

use crate::calc::{CalcError, FormatOptions};
use crate::stats::{Statistics, StatisticsBuilder, ValueStatistics};

use super::error::LogError;
use super::model::{Cell, LogReader, Record, ValueRows};

/// The statistics of one column.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterStatistics {
    /// The counter path as the log writes it.
    pub name: String,
    /// The statistics, or why there are none (no value at all, a type without values …).
    pub stats: Result<Statistics, CalcError>,
}

struct Column {
    values: ValueStatistics,
    raw: Option<StatisticsBuilder>,
    raw_error: Option<CalcError>,
}

/// Reads `reader` to its end and summarizes every column. `opts` formats raw samples (use the same
/// options as the values written, e.g. [`FormatOptions::typeperf`]).
pub fn log_statistics(
    reader: &mut dyn LogReader,
    opts: &FormatOptions,
) -> Result<Vec<CounterStatistics>, LogError> {
    let mut columns: Vec<Column> = reader
        .header()
        .counters
        .iter()
        .map(|c| Column {
            values: ValueStatistics::new(),
            raw: c
                .info
                .and_then(|i| StatisticsBuilder::new(i.counter_type, i.time_base, opts).ok()),
            raw_error: None,
        })
        .collect();
    // A reader of values (no raw samples): its rows as they are, no record per row.
    let mut rows = ValueRows::default();
    while let Some(n) = reader.read_values(&mut rows, 1 << 16)? {
        if n == 0 {
            return Ok(finish(reader, columns));
        }
        if rows.columns != columns.len() {
            return Err(LogError::usage(
                &reader.header().source,
                "statistics need every column of the log, but only some were selected",
            ));
        }
        for r in 0..rows.len() {
            for (col, &v) in columns.iter_mut().zip(rows.row(r)) {
                col.values.push((!v.is_nan()).then_some(v));
            }
        }
    }
    let mut record = Record::default();
    while reader.read_record(&mut record)? {
        for (col, cell) in columns.iter_mut().zip(&record.cells) {
            col.values.push(cell.value());
            if let (Cell::Raw(rc, _), Some(b)) = (cell, col.raw.as_mut()) {
                if rc.status.is_success() && col.raw_error.is_none() {
                    if let Err(e) = b.push(&rc.raw) {
                        col.raw_error = Some(e);
                    }
                }
            }
        }
    }
    Ok(finish(reader, columns))
}

/// The statistics of every column.
fn finish(reader: &dyn LogReader, columns: Vec<Column>) -> Vec<CounterStatistics> {
    reader
        .header()
        .counters
        .iter()
        .zip(columns)
        .map(|(c, col)| {
            let stats = match (col.raw_error, &col.raw) {
                (Some(e), _) => Err(e),
                (None, Some(b)) => match b.finish() {
                    Err(CalcError::NoSamples) => col.values.finish(),
                    other => other,
                },
                (None, None) => col.values.finish(),
            };
            CounterStatistics {
                name: c.name.clone(),
                stats,
            }
        })
        .collect()
}
