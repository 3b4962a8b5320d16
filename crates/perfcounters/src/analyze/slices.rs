//! The one pass over the records: each record's values added to the bucket of its slice, the
//! slices evaluated as they complete (alerts, trends, generated series), on a thread of its own
//! when the reading has one.

use crate::log::handover;
use crate::log::model::{LogReader, LogTime, Record};
use crate::log::LogError;

use super::interval::{TimeSpan, TICKS_PER_HOUR};
use super::plan::{call_of, Bound, Generated};
use super::report::{Alert, AnalysisReport};
use super::script::{CounterInstance, Operator};
use super::stats::ColumnState;

/// Records' cells per batch handed to the evaluating thread (about 30 records of 500 columns).
const BATCH_CELLS: usize = 1 << 14;
/// Batches sent to the evaluating thread and not yet taken; with the one it evaluates and the one
/// being filled, memory stays a few batches whatever the log's length.
const IN_FLIGHT: usize = 2;

/// The evaluation of the records of one pass: the slices not evaluated yet (one bucket per slice
/// and column), the alerts of those that are, the statistics and chart data.
pub(super) struct Slicer<'a> {
    /// Each counter's state.
    pub(super) states: Vec<ColumnState>,
    /// Counter index → log column (`usize::MAX`: generated).
    log_columns: &'a [usize],
    bound: &'a [Bound],
    analyses: &'a [AnalysisReport],
    /// The slice width in ticks.
    width: i64,
    /// The records' times.
    pub(super) span: TimeSpan,
    /// Records read.
    pub(super) records: u64,
    /// The slice of each column's first bucket (the slices before it are evaluated).
    base: i64,
    /// The alerts raised, slice by slice.
    pub(super) alerts: Vec<Alert>,
    /// The generated data sources.
    generated: &'a [Generated],
    /// Why each generated data source stopped (its code failed in a slice), if it did.
    pub(super) failures: Vec<Option<String>>,
}

impl<'a> Slicer<'a> {
    /// Before the first record: counters in `states` (counter index → log column in
    /// `log_columns`), the calls of `bound` into `analyses`, slices `width` ticks wide.
    pub(super) fn new(
        states: Vec<ColumnState>,
        log_columns: &'a [usize],
        bound: &'a [Bound],
        analyses: &'a [AnalysisReport],
        generated: &'a [Generated],
        width: i64,
    ) -> Self {
        Slicer {
            generated,
            failures: vec![None; generated.len()],
            states,
            log_columns,
            bound,
            analyses,
            width,
            span: TimeSpan::default(),
            records: 0,
            base: 0,
            alerts: Vec::new(),
        }
    }

    /// Takes one record: evaluates the slices it completes, then adds its values to its slice.
    fn push(&mut self, record: &Record) {
        let t = record.time;
        self.span.push(t);
        let start = self.span.t0.unwrap_or(t);
        self.records += 1;
        let rel = self.span.last.0.saturating_sub(start.0);
        let mut k = rel / self.width - self.base;
        if k > 0 {
            // Every bucket before k is complete.
            self.flush(k as usize, start);
            self.base += k;
            k = 0;
        }
        let th = (t.0 - start.0) as f64 / TICKS_PER_HOUR;
        let slot = k as usize;
        for (s, &col) in self.states.iter_mut().zip(self.log_columns) {
            let Some(v) = record.cells.get(col).and_then(|c| c.value()) else {
                continue;
            };
            if !v.is_finite() {
                continue;
            }
            s.push(slot, th, t, v);
        }
    }

    /// Evaluates the slices left once every record is in.
    fn finish(&mut self) {
        if let Some(start) = self.span.t0 {
            self.flush(usize::MAX, start);
        }
    }

    /// Evaluates the first `n` buckets of every column (slices `base ..`; at most the buckets
    /// there are) for the log that starts at `start`, and drops them.
    fn flush(&mut self, n: usize, start: LogTime) {
        flush(
            &mut self.states,
            n,
            self.base,
            self.width,
            start,
            (self.bound, self.analyses),
            (self.generated, &mut self.failures),
            &mut self.alerts,
        );
    }

    /// Reads `reader` to its end and evaluates its records. With `threaded`, this thread reads
    /// (and, through a [`Filtered`](crate::log::relog::Filtered), computes the raw samples) while another evaluates: it is
    /// handed the records in batches, in order, and takes them one by one as on one thread, so
    /// the results are the same to the bit. A reading error ends the pass.
    pub(super) fn read(
        &mut self,
        reader: &mut dyn LogReader,
        threaded: bool,
    ) -> Result<(), LogError> {
        if !threaded {
            let mut record = Record::default();
            while reader.read_record(&mut record)? {
                self.push(&record);
            }
            self.finish();
            return Ok(());
        }
        let per_batch = (BATCH_CELLS / reader.header().counters.len().max(1)).max(1);
        let (mut batches, mut records) = handover::channel(IN_FLIGHT);
        std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                let mut record = Record::default();
                // `None`: the reading side stopped without an end (it panicked, said below).
                let end = loop {
                    match records.read(&mut record) {
                        Some(Ok(true)) => self.push(&record),
                        Some(Ok(false)) | None => break Ok(()),
                        Some(Err(e)) => break Err(e),
                    }
                };
                self.finish();
                end
            });
            // Stops at the end or the first error (handed over after the records before it), or
            // when the evaluating thread ended (it panicked: the join says so).
            while batches.send_filled(per_batch, |record| reader.read_record(record)) {}
            drop(batches);
            match worker.join() {
                Ok(end) => end,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }
}
/// Evaluates buckets `0..n` of every column (bucket `i` is slice `base + i`) and drops them.
#[allow(clippy::too_many_arguments)]
fn flush(
    states: &mut [ColumnState],
    n: usize,
    base: i64,
    width: i64,
    start: LogTime,
    (bound, analyses): (&[Bound], &[AnalysisReport]),
    (generated, failures): (&[Generated], &mut [Option<String>]),
    alerts: &mut Vec<Alert>,
) {
    // Slices past the last bucket of every column hold no value: nothing to evaluate.
    let n = n.min(states.iter().map(|s| s.buckets.len()).max().unwrap_or(0));
    for i in 0..n {
        let slice_start = LogTime(start.0 + (base + i as i64) * width);
        let slice_end = LogTime(slice_start.0 + width);
        // Code per slice over this slice's values of its inputs: generated series, then the
        // alerts of thresholds' code.
        let hours = ((base + i as i64) * width) as f64 / TICKS_PER_HOUR;
        for (g, failure) in generated.iter().zip(failures.iter_mut()) {
            if failure.is_some() {
                continue;
            }
            let done = match g.threshold {
                None => generate(g, states, i, hours, slice_start),
                Some(ti) => {
                    code_alerts(g, ti, states, i, (slice_start, slice_end), analyses, alerts)
                }
            };
            if let Err(e) = done {
                let what = match g.threshold {
                    None => format!("the generated data source ${}", g.var),
                    Some(ti) => format!(
                        "the code of threshold \"{}\"",
                        analyses
                            .get(g.analysis)
                            .and_then(|a| a.thresholds.get(ti))
                            .map_or("", |t| t.name.as_str())
                    ),
                };
                *failure = Some(format!(
                    "{}: {what} failed in slice {} ({} s after the first record): {e}",
                    g.file,
                    base + i as i64 + 1,
                    (base + i as i64) * width / super::interval::TICKS_PER_SECOND
                ));
            }
        }
        // Trends up to the end of this slice.
        let mut trends: Vec<Option<f64>> = Vec::with_capacity(states.len());
        for s in states.iter_mut() {
            if let Some(b) = s.buckets.get(i) {
                s.done.merge(b);
            }
            trends.push(s.done.slope());
        }
        for b in bound {
            let Some((t, call)) = call_of(analyses, b) else {
                continue;
            };
            for &c in &b.columns {
                let Some(s) = states.get(c) else { continue };
                let Some(bk) = s.buckets.get(i).filter(|b| b.n > 0) else {
                    continue;
                };
                let (broken, trend) = if call.trend_only {
                    match trends.get(c).copied().flatten() {
                        Some(tr) => (call.operator.breaks(tr, call.threshold), Some(tr)),
                        None => (false, None),
                    }
                } else {
                    let hit = match call.operator {
                        Operator::Gt | Operator::Ge => call.operator.breaks(bk.max, call.threshold),
                        Operator::Lt | Operator::Le => call.operator.breaks(bk.min, call.threshold),
                        Operator::Eq => {
                            s.eq.iter()
                                .position(|e| *e == call.threshold)
                                .is_some_and(|k| k < 64 && bk.eq_hits & (1 << k) != 0)
                        }
                    };
                    (hit, None)
                };
                if broken {
                    alerts.push(Alert {
                        analysis: b.analysis,
                        condition: t.condition.clone(),
                        priority: t.priority,
                        threshold_name: t.name.clone(),
                        operator: Some(call.operator),
                        threshold: Some(call.threshold),
                        counter: c,
                        start: slice_start,
                        end: slice_end,
                        min: bk.min,
                        avg: bk.sum / bk.n as f64,
                        max: bk.max,
                        trend,
                    });
                }
            }
        }
    }
    for s in states.iter_mut() {
        let n = n.min(s.buckets.len());
        s.buckets.drain(..n);
    }
}

/// Evaluates generated data source `g` for bucket `i` (the slice starting at `t`, `hours` after
/// the first record) and adds the values it makes to its series' buckets.
fn generate(
    g: &Generated,
    states: &mut [ColumnState],
    i: usize,
    hours: f64,
    t: LogTime,
) -> Result<(), super::script::ScriptError> {
    let collections = slice_collections(g, states, i);
    // A slice where no input has a value makes nothing (as no counter has a value there).
    if collections
        .iter()
        .all(|(_, v)| v.iter().all(|c| c.avg.is_none()))
    {
        return Ok(());
    }
    let made = g.script.generate(&g.questions, &collections, &g.var)?;
    for (key, values) in made {
        let Some(&(_, counter)) = g.series.iter().find(|(k, _)| k.eq_ignore_ascii_case(&key))
        else {
            continue;
        };
        if let Some(s) = states.get_mut(counter) {
            for v in values {
                s.push(i, hours, t, v);
            }
        }
    }
    Ok(())
}

/// The inputs of `g` with their values in bucket `i`: the slice's minimum, average and maximum,
/// and the trend up to the slice's end.
fn slice_collections(
    g: &Generated,
    states: &[ColumnState],
    i: usize,
) -> Vec<(String, Vec<CounterInstance>)> {
    g.inputs
        .iter()
        .map(|(var, cols)| {
            let instances = cols
                .iter()
                .map(|(c, inst)| {
                    let state = states.get(*c);
                    let b = state.and_then(|s| s.buckets.get(i)).filter(|b| b.n > 0);
                    let trend = state.and_then(|s| {
                        let mut upto = s.done;
                        if let Some(b) = b {
                            upto.merge(b);
                        }
                        upto.slope()
                    });
                    CounterInstance {
                        min: b.map(|b| b.min),
                        avg: b.map(|b| b.sum / b.n as f64),
                        max: b.map(|b| b.max),
                        trend,
                        ..inst.clone()
                    }
                })
                .collect();
            (var.clone(), instances)
        })
        .collect()
}

/// Evaluates the code of threshold `ti` of `g`'s analysis for bucket `i` (the slice `span`) and
/// raises an alert for each counter instance it called `CreateAlert` on that has values in the
/// slice (one per instance, whatever the number of calls).
fn code_alerts(
    g: &Generated,
    ti: usize,
    states: &[ColumnState],
    i: usize,
    (start, end): (LogTime, LogTime),
    analyses: &[AnalysisReport],
    alerts: &mut Vec<Alert>,
) -> Result<(), super::script::ScriptError> {
    let Some(t) = analyses.get(g.analysis).and_then(|a| a.thresholds.get(ti)) else {
        return Ok(());
    };
    let collections = slice_collections(g, states, i);
    if collections
        .iter()
        .all(|(_, v)| v.iter().all(|c| c.avg.is_none()))
    {
        return Ok(());
    }
    let raised = g.script.create_alerts(&g.questions, &collections)?;
    let mut seen: Vec<usize> = Vec::new();
    for r in raised {
        let Some(counter) = g
            .inputs
            .iter()
            .flat_map(|(_, cols)| cols)
            .find(|(_, inst)| inst.path.eq_ignore_ascii_case(&r.counter))
            .map(|(c, _)| *c)
        else {
            continue;
        };
        if seen.contains(&counter) {
            continue;
        }
        seen.push(counter);
        let Some(b) = states
            .get(counter)
            .and_then(|s| s.buckets.get(i))
            .filter(|b| b.n > 0)
        else {
            continue;
        };
        alerts.push(Alert {
            analysis: g.analysis,
            condition: t.condition.clone(),
            priority: t.priority,
            threshold_name: t.name.clone(),
            operator: None,
            threshold: None,
            counter,
            start,
            end,
            min: b.min,
            avg: b.sum / b.n as f64,
            max: b.max,
            trend: None,
        });
    }
    Ok(())
}
