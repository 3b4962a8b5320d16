//! One side of a comparison read once: every counter's values ([`Values`]) and a short chart,
//! counters matched by their English path without the machine (columns of several machines with
//! the same path pool their values).

use std::collections::HashMap;

use crate::log::model::TimeZone;
use crate::log::model::{LogReader, LogTime, Record, ValueRows};
use crate::log::pipeline::{Pipeline, PipelineError};
use crate::log::LogError;
use crate::names::{english_name, NameTable};
use crate::path::{eq_ignore_case, CounterPath};

use super::super::stats::Chart;
use super::values::Values;

/// Spans of the chart kept per counter and side (two points each): enough for a comparison chart,
/// small enough to keep for every counter of a wide log.
pub(super) const CHART_SPANS: usize = 200;

/// Records per batch read from a reader of values.
const BATCH_CELLS: usize = 1 << 16;

/// One counter of a side.
pub(super) struct SideCounter {
    /// The English path without the machine.
    pub(super) path: CounterPath,
    /// The values of every column of that path.
    pub(super) values: Values,
    pub(super) chart: Chart,
}

/// A side read to its end.
pub(super) struct SideValues {
    pub(super) counters: Vec<SideCounter>,
    /// Counter key ([`key`]) → index into `counters`.
    pub(super) index: HashMap<String, usize>,
    /// The machines the columns name, each once (ignoring case).
    pub(super) machines: Vec<String>,
    /// The first and last record's time.
    pub(super) range: Option<(LogTime, LogTime)>,
    pub(super) records: u64,
    pub(super) time_zone: Option<TimeZone>,
    /// The logs read.
    pub(super) logs: Vec<String>,
}

/// The key that matches a counter on the two sides: its English path without the machine, in the
/// case rule of every name comparison ([`CounterPath::key`]).
pub(super) fn key(path: &CounterPath) -> String {
    path.key()
}

/// The English path of `path` without its machine: object and counter translated through the
/// pipeline's tables (`languages` to the built-in English table and `english`).
fn english_path(
    path: &CounterPath,
    languages: &[NameTable],
    english: &[&NameTable],
) -> CounterPath {
    let mut p = path.clone();
    p.machine = None;
    if !languages.is_empty() {
        p.object = english_name(english, languages, &path.object);
        p.counter = english_name(english, languages, &path.counter);
    }
    p
}

/// Reads the records `pipeline` keeps (its inputs merged, its counters, `-b`/`-e`): every value
/// of every column.
pub(super) fn read_side(pipeline: &Pipeline) -> Result<SideValues, PipelineError> {
    let tables = pipeline.name_tables();
    let mut english: Vec<&NameTable> = vec![NameTable::builtin_english()];
    english.extend(tables.english().iter());
    let mut opened = pipeline.open()?;
    let header = opened.header().clone();
    let mut side = SideValues {
        counters: Vec::new(),
        index: HashMap::new(),
        machines: Vec::new(),
        range: None,
        records: 0,
        time_zone: header.time_zone.clone(),
        logs: opened.logs().iter().map(|l| l.source.clone()).collect(),
    };
    // Column → counter.
    let mut of_column: Vec<usize> = Vec::with_capacity(header.counters.len());
    for c in &header.counters {
        if let Some(m) = &c.path.machine {
            if !side.machines.iter().any(|x| eq_ignore_case(x, m)) {
                side.machines.push(m.clone());
            }
        }
        let path = english_path(&c.path, tables.languages(), &english);
        let k = key(&path);
        let i = *side.index.entry(k).or_insert_with(|| {
            side.counters.push(SideCounter {
                path,
                values: Values::default(),
                chart: Chart::with_spans(CHART_SPANS),
            });
            side.counters.len() - 1
        });
        of_column.push(i);
    }
    read_values(&mut opened, &mut side, &of_column).map_err(PipelineError::Log)?;
    Ok(side)
}

/// Reads `reader` to its end into `side` (column `c` into counter `of_column[c]`).
fn read_values(
    reader: &mut dyn LogReader,
    side: &mut SideValues,
    of_column: &[usize],
) -> Result<(), LogError> {
    let take = |side: &mut SideValues, t: LogTime, values: &mut dyn Iterator<Item = f64>| {
        side.records += 1;
        side.range = Some(match side.range {
            None => (t, t),
            Some((a, b)) => (a.min(t), b.max(t)),
        });
        for (&i, v) in of_column.iter().zip(values) {
            if !v.is_finite() {
                continue;
            }
            if let Some(c) = side.counters.get_mut(i) {
                c.values.push(v);
                c.chart.push(t, v);
            }
        }
    };
    let mut rows = ValueRows::default();
    while let Some(n) = reader.read_values(&mut rows, BATCH_CELLS)? {
        if n == 0 {
            return Ok(());
        }
        for r in 0..rows.len() {
            let t = rows.times.get(r).copied().unwrap_or_default();
            take(side, t, &mut rows.row(r).iter().copied());
        }
    }
    let mut record = Record::default();
    while reader.read_record(&mut record)? {
        take(
            side,
            record.time,
            &mut record.cells.iter().map(|c| c.value().unwrap_or(f64::NAN)),
        );
    }
    Ok(())
}
