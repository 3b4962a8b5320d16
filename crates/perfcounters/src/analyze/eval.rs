//! Rules evaluated over a log: data sources matched to columns, threshold code interpreted, the
//! log read once into time slices, alerts raised, statistics and chart data kept.
//!
//! Semantics (docs/analyze.md repeats them for users):
//!
//! * **Slices** are `[t0 + k·I, t0 + (k+1)·I)` from the first record's time `t0`. With
//!   [`Interval::Seconds`] `I` is given; with [`Interval::Auto`] it is PAL's automatic interval
//!   ([`auto_interval_seconds`]: the log's duration in whole seconds / 30, each step rounded half
//!   to even as PowerShell's `[int]` rounds), never below the sample interval (the shortest gap
//!   between two records, rounded up to whole seconds) nor below one second. [`analyze_logs`]
//!   finds it with a first pass over the records' times ([`auto_interval`], no value read: a
//!   `.blg` is read for its times alone, [`Pass::Times`]), then reads the log once more with that
//!   interval: the slices are exact for every log length. [`analyze`] over one stream, which
//!   cannot be read twice, takes an interval in seconds only.
//! * The reading (and the computing of raw samples) and the evaluation run on two threads: the
//!   evaluating thread takes the records in batches, in order, one by one as one thread would, so
//!   the results do not depend on the threads.
//! * A data source path matches columns as `relog -c` does (case-insensitively, `*` matching every
//!   instance, `_Total` included, names translated through the name tables); an `EXCLUDE
//!   INSTANCE` leaves out the instances of that name.
//! * For each `StaticThreshold`, counter instance and slice with a value (blank cells are skipped):
//!   an alert when a value breaks the threshold: `gt` max > T, `ge` max ≥ T, `lt` min < T, `le`
//!   min ≤ T, `eq` any value = T. One alert per (analysis, threshold, counter instance, slice) with
//!   that slice's min, average and max.
//! * A generated data source in PAL's network-utilization form (`utilization_form`) is one value
//!   per slice and instance from the slice averages of its two inputs; other generated data
//!   sources are not evaluated.
//! * A **trend** is the slope, in units per hour, of the least-squares line through a counter's
//!   values against their times. A trend threshold (`-IsTrendOnly $True`) compares, at the end of
//!   each slice, the trend of the values from the first record to the end of that slice.
//! * **Statistics** per counter: min, average, max and trend over the whole range; p90 and p95 by
//!   the nearest-rank method over at most [`MAX_KEPT`] values: every value while there are no more,
//!   beyond that a regular subsample (every 2nd, then every 4th … value in time order).
//! * **Charts** draw at most [`MAX_KEPT`] points per counter: every value while they fit, beyond
//!   that the minimum and the maximum of each span of consecutive values (spans of 2, 4 … values,
//!   at most [`MAX_KEPT`] / 2 of them), in time order, so that a spike stays visible however long
//!   the log is, as perfmon's and PAL's charts show it.

use std::collections::HashMap;
use std::fmt;

use crate::log::handover;
use crate::log::model::{LogHeader, LogReader, LogTime, Record, TimeZone};
use crate::log::pipeline::{InputLog, Pipeline, PipelineError, TimeBound};
use crate::log::relog::{CounterFilter, Filtered, Merge, RelogFilter};
use crate::log::LogError;
use crate::names::NameTable;
use crate::path::{eq_ignore_case, CounterPath};

use super::rules::{Analysis, DataSourceKind, Question, Rules};
use super::script::{Operator, Script, ScriptValue, StaticThreshold};

/// The number of slices PAL's automatic interval divides a log into (`PAL.ps1`
/// `$AutoAnalysisIntervalNumberOfTimeSlices`).
pub const AUTO_SLICES: i64 = 30;
/// Values kept per column for percentiles and charts.
pub const MAX_KEPT: usize = 2000;

const TICKS_PER_SECOND: i64 = 10_000_000;
const TICKS_PER_HOUR: f64 = 36_000_000_000.0;

/// PAL's automatic interval for a log lasting `duration_ticks` (100 ns units, from the first to
/// the last record), in seconds, before the floors [`Interval::Auto`] adds (the sample interval,
/// one second). PAL (`GenerateAutoAnalysisInterval`) takes `[int]` of the duration's
/// `TotalSeconds` and `[int]` of that divided by [`AUTO_SLICES`]; PowerShell's `[int]` rounds half
/// to even.
///
/// ```
/// use perfcounters::analyze::auto_interval_seconds;
/// // 87.5 minutes: 5,250 s / 30 = 175 s.
/// assert_eq!(auto_interval_seconds(52_500_000_000), 175);
/// // 164,401.978 s is 164,402 s; / 30 = 5,480.07 → 5,480 s.
/// assert_eq!(auto_interval_seconds(1_644_019_780_000), 5_480);
/// // 165 s / 30 = 5.5 → 6 (half to even); 75 s / 30 = 2.5 → 2.
/// assert_eq!(auto_interval_seconds(1_649_980_000), 6);
/// assert_eq!(auto_interval_seconds(750_000_000), 2);
/// ```
pub fn auto_interval_seconds(duration_ticks: i64) -> i64 {
    let seconds = div_round_half_even(duration_ticks.max(0), TICKS_PER_SECOND);
    div_round_half_even(seconds, AUTO_SLICES)
}

/// `n / d` rounded half to even (`n >= 0`, `d > 0`).
fn div_round_half_even(n: i64, d: i64) -> i64 {
    let (q, r) = (n / d, n % d);
    match (2 * r).cmp(&d) {
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
        std::cmp::Ordering::Less => q,
    }
}

/// The width of the time slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Interval {
    /// PAL's automatic interval ([`auto_interval_seconds`]), never below the sample interval;
    /// found by [`analyze_logs`] in a first pass over the records' times ([`analyze`] over one
    /// stream refuses it).
    #[default]
    Auto,
    /// A number of seconds (at least 1).
    Seconds(u64),
}

/// What to evaluate and how.
#[derive(Clone, Debug, Default)]
pub struct AnalyzeOptions {
    /// The slice width.
    pub interval: Interval,
    /// Question values (`--set NAME=VALUE`), overriding the files' defaults.
    pub set: Vec<(String, String)>,
    /// Name tables of the log's language(s) (`--names`), so that localized columns match the
    /// rules' English paths; empty for an English log.
    pub names: Vec<NameTable>,
    /// English name tables besides the built-in one (the `enUS` table of PAL's `CounterLang.xml`),
    /// used to name localized columns in English.
    pub english: Vec<NameTable>,
    /// Keep only the columns this filter selects (`-c`); `None` keeps every column.
    pub counters: Option<CounterFilter>,
    /// Keep records at or after this time (`-b`), on the log's wall clock.
    pub begin: Option<LogTime>,
    /// Keep records at or before this time (`-e`).
    pub end: Option<LogTime>,
}

impl AnalyzeOptions {
    /// The name tables matching uses: none for an English log, else the English tables and the
    /// log's.
    fn tables(&self) -> Vec<NameTable> {
        let mut tables: Vec<NameTable> = Vec::new();
        if !self.names.is_empty() {
            tables.push(NameTable::builtin_english().clone());
            tables.extend(self.english.iter().cloned());
            tables.extend(self.names.iter().cloned());
        }
        tables
    }
}

/// What [`analyze_logs`] opens the logs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pass {
    /// The first pass of [`Interval::Auto`]: only the records' times are read (an opener may give
    /// readers of the times alone, [`OpenOptions::times_only`](crate::log::OpenOptions::times_only);
    /// full readers serve too, their values skipped).
    Times,
    /// The analysis: the records' values.
    Values,
}

/// Merges the logs that `open` opens (several logs as relog merges them), keeps the records of
/// `-b`/`-e` and the columns that the rules' data sources select, computes raw samples, and
/// [`analyze`]s the result.
///
/// With [`Interval::Auto`] the logs are opened twice: first for [`Pass::Times`], whose records'
/// times give the interval ([`auto_interval`]; every value skipped), then for [`Pass::Values`],
/// analysed with the interval found, so that the slices are exact whatever the log's length. With
/// [`Interval::Seconds`] `open` is called once, for [`Pass::Values`].
pub fn analyze_logs<F>(
    mut open: F,
    rules: &Rules,
    opts: &AnalyzeOptions,
) -> Result<Report, AnalyzeError>
where
    F: FnMut(Pass) -> Result<Vec<Box<dyn LogReader>>, LogError>,
{
    // A wrong `--set` fails before the logs are read.
    question_values(&rules.questions, &opts.set)?;
    let seconds = match opts.interval {
        Interval::Seconds(s) => s,
        Interval::Auto => {
            let times = RelogFilter {
                counters: Some(CounterFilter::new(Vec::new())),
                begin: opts.begin,
                end: opts.end,
                ..RelogFilter::default()
            };
            let mut first = Filtered::new(Merge::new(open(Pass::Times)?)?, &times)?;
            // A log without records has no slice: any width does.
            auto_interval(&mut first)?.unwrap_or(1)
        }
    };
    let merged = Merge::new(open(Pass::Values)?)?;
    let patterns: Vec<CounterPath> = rules
        .enabled()
        .flat_map(|a| a.data_sources.iter())
        .filter(|d| d.kind == DataSourceKind::CounterLog)
        .filter_map(|d| d.path.as_ref().ok().cloned())
        .collect();
    let filter = RelogFilter {
        counters: Some(CounterFilter::new(patterns).with_names(opts.tables())),
        begin: opts.begin,
        end: opts.end,
        ..RelogFilter::default()
    };
    let mut filtered = Filtered::new(merged, &filter)?;
    evaluate(&mut filtered, rules, opts, seconds, crate::log::cores() > 1)
}

/// What [`analyze_pipeline`] found: the report, the logs read and what their readers stepped over.
#[derive(Debug)]
pub struct AnalyzedLogs {
    /// The report.
    pub report: Report,
    /// The logs read, in the order of the inputs.
    pub logs: Vec<InputLog>,
    /// What the readers stepped over, one message each.
    pub warnings: Vec<String>,
}

/// Analyses the logs of `pipeline` ([`analyze_logs`]): its inputs merged as relog merges them, its
/// time range, its counter paths (when given, only the columns they select are analysed) and its
/// name tables (localized columns matched to the rules' English paths). `interval` and `set` are
/// the slice width and the question values.
///
/// # Errors
/// A question value is wrong, the interval is not usable, or the logs cannot be read.
pub fn analyze_pipeline(
    pipeline: &Pipeline,
    rules: &Rules,
    interval: Interval,
    set: &[(String, String)],
) -> Result<AnalyzedLogs, AnalyzeError> {
    let names = pipeline.name_tables();
    let mut opts = AnalyzeOptions {
        interval,
        set: set.to_vec(),
        names: names.languages().to_vec(),
        english: names.english().to_vec(),
        counters: pipeline.counter_filter().map_err(AnalyzeError::Inputs)?,
        begin: None,
        end: None,
    };
    let to_log_error = |e: PipelineError| match e {
        PipelineError::Log(e) => e,
        other => LogError::usage("(no input)", other.to_string()),
    };
    // The bounds are local times of the first log's zone, as the merge reads them: a UTC bound
    // needs that zone first.
    let (begin, end) = (pipeline.begin_bound(), pipeline.end_bound());
    if matches!(begin, Some(TimeBound::Utc(_))) || matches!(end, Some(TimeBound::Utc(_))) {
        let inputs = pipeline.open_inputs(true).map_err(to_log_error)?;
        if let Some(header) = inputs.readers.first().map(|r| r.header()) {
            opts.begin = begin.map(|b| b.local(header));
            opts.end = end.map(|b| b.local(header));
        }
    } else {
        opts.begin = begin.map(|b| match b {
            TimeBound::Local(t) | TimeBound::Utc(t) => t,
        });
        opts.end = end.map(|b| match b {
            TimeBound::Local(t) | TimeBound::Utc(t) => t,
        });
    }
    let mut logs = Vec::new();
    let mut warnings = Vec::new();
    let open = |pass: Pass| -> Result<Vec<Box<dyn LogReader>>, LogError> {
        let inputs = pipeline
            .open_inputs(pass == Pass::Times)
            .map_err(to_log_error)?;
        if pass == Pass::Values {
            logs = inputs.logs;
            warnings = inputs.warnings;
        }
        Ok(inputs.readers)
    };
    let report = analyze_logs(open, rules, &opts)?;
    Ok(AnalyzedLogs {
        report,
        logs,
        warnings,
    })
}

/// The first record's time, the latest record's time and the shortest positive gap between two
/// consecutive records, as the slices see them.
#[derive(Clone, Copy, Debug, Default)]
struct TimeSpan {
    t0: Option<LogTime>,
    last: LogTime,
    prev: Option<LogTime>,
    min_gap: Option<i64>,
}

impl TimeSpan {
    /// Takes the record at `t`.
    fn push(&mut self, t: LogTime) {
        // Records out of order (merged logs are in order; a hand-made log may not be) count in
        // the slice of the latest time.
        if self.t0.is_none() {
            self.t0 = Some(t);
            self.last = t;
        } else if t > self.last {
            self.last = t;
        }
        if let Some(p) = self.prev {
            let gap = t.0 - p.0;
            if gap > 0 {
                self.min_gap = Some(self.min_gap.map_or(gap, |m| m.min(gap)));
            }
        }
        self.prev = Some(t);
    }

    /// [`Interval::Auto`]'s width in seconds: PAL's figure for the duration, raised to the sample
    /// interval (rounded up to whole seconds) and to 1 s; `None` without records.
    fn auto_seconds(&self) -> Option<i64> {
        let start = self.t0?;
        let gap_s = self
            .min_gap
            .map_or(1, |g| (g + TICKS_PER_SECOND - 1) / TICKS_PER_SECOND);
        Some(
            auto_interval_seconds(self.last.0 - start.0)
                .max(gap_s)
                .max(1),
        )
    }
}

/// Reads `reader` to its end and returns the width in seconds that [`Interval::Auto`] gives its
/// records (PAL's automatic interval, never below the sample interval nor 1 s), or `None` when it
/// has no record. Only the records' times are used: give it a reader that skips values (a
/// [`Filtered`] whose counter filter keeps no column), as [`analyze_logs`] does.
pub fn auto_interval(reader: &mut dyn LogReader) -> Result<Option<u64>, LogError> {
    let mut record = Record::default();
    let mut span = TimeSpan::default();
    while reader.read_record(&mut record)? {
        span.push(record.time);
    }
    Ok(span.auto_seconds().map(|s| s as u64))
}

/// A problem that stops the analysis as a whole.
#[derive(Debug)]
#[non_exhaustive]
pub enum AnalyzeError {
    /// A question value ([`AnalyzeOptions::set`]) names a question the rules do not ask, or has a
    /// value of the wrong type. Displayed as `question value {setting}: {problem}`.
    Question {
        /// The setting as given: the name, and `NAME=VALUE` when the value is what is wrong.
        setting: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The interval of the slices ([`AnalyzeOptions::interval`]) is not usable. Displayed as
    /// `interval {seconds}: {problem}` (`interval auto: …` for [`Interval::Auto`]).
    Interval {
        /// The interval asked for, in seconds; `None` for [`Interval::Auto`].
        seconds: Option<u64>,
        /// What is wrong with it.
        problem: String,
    },
    /// Reading the log failed: displayed as that [`LogError`], whose own cause is this error's
    /// [`source`](std::error::Error::source).
    Log(LogError),
    /// The pipeline's inputs could not be opened, or a counter path of it does not parse.
    Inputs(PipelineError),
}

impl fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalyzeError::Question { setting, problem } => {
                write!(f, "question value {setting}: {problem}")
            }
            AnalyzeError::Interval {
                seconds: Some(s),
                problem,
            } => write!(f, "interval {s}: {problem}"),
            AnalyzeError::Interval {
                seconds: None,
                problem,
            } => write!(f, "interval auto: {problem}"),
            AnalyzeError::Log(e) => e.fmt(f),
            AnalyzeError::Inputs(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AnalyzeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnalyzeError::Log(e) => e.source(),
            AnalyzeError::Inputs(e) => e.source(),
            _ => None,
        }
    }
}

impl From<LogError> for AnalyzeError {
    fn from(e: LogError) -> Self {
        AnalyzeError::Log(e)
    }
}

/// One threshold of an analysis as evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdReport {
    /// `NAME`.
    pub name: String,
    /// `CONDITION`.
    pub condition: String,
    /// `PRIORITY`.
    pub priority: i32,
    /// The `StaticThreshold` calls its code made.
    pub calls: Vec<StaticThreshold>,
}

/// One analysis of the rules, evaluated or not.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisReport {
    /// `NAME`.
    pub name: String,
    /// `CATEGORY`.
    pub category: String,
    /// `DESCRIPTION` (HTML from the rules file, untrusted).
    pub description: String,
    /// Why it was not evaluated; `None` when it was.
    pub reason: Option<String>,
    /// The counters it looked at: indexes into [`Report::counters`].
    pub counters: Vec<usize>,
    /// The thresholds (empty when not evaluated).
    pub thresholds: Vec<ThresholdReport>,
    /// How many alerts it raised.
    pub alerts: usize,
}

impl AnalysisReport {
    /// Whether the analysis was evaluated.
    pub fn evaluated(&self) -> bool {
        self.reason.is_none()
    }
}

/// An alert: a threshold broken in a slice by one counter instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    /// Index into [`Report::analyses`].
    pub analysis: usize,
    /// `CONDITION` of the threshold (`Warning`, `Critical`).
    pub condition: String,
    /// `PRIORITY` of the threshold.
    pub priority: i32,
    /// `NAME` of the threshold.
    pub threshold_name: String,
    /// The comparison.
    pub operator: Operator,
    /// The threshold value.
    pub threshold: f64,
    /// Index into [`Report::counters`].
    pub counter: usize,
    /// The slice: its start (included) and end (excluded).
    pub start: LogTime,
    /// The end of the slice.
    pub end: LogTime,
    /// The slice's minimum.
    pub min: f64,
    /// The slice's average.
    pub avg: f64,
    /// The slice's maximum.
    pub max: f64,
    /// For a trend threshold, the trend (per hour) that broke it.
    pub trend: Option<f64>,
}

/// Statistics of one counter instance over the range analysed.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterReport {
    /// The column's path as relog names it, in English when name tables translated it.
    pub path: String,
    /// The path as the log writes it.
    pub log_path: String,
    /// Values seen.
    pub count: u64,
    /// Minimum (`None` without values).
    pub min: Option<f64>,
    /// Arithmetic mean.
    pub avg: Option<f64>,
    /// Maximum.
    pub max: Option<f64>,
    /// 90th percentile (nearest rank, see the module documentation).
    pub p90: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// Slope of the least-squares line, per hour (`None` with fewer than two distinct times).
    pub trend: Option<f64>,
    /// The chart data: at most [`MAX_KEPT`] (time, value) points in time order, every value or the
    /// minimum and maximum of each span of values (see the module documentation).
    pub points: Vec<(LogTime, f64)>,
}

/// The result of [`analyze`].
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The logs read (the header's source).
    pub source: String,
    /// The machines the columns name.
    pub machines: Vec<String>,
    /// The first and last record's time (UTC instants, like every time of the report), `None` for
    /// a log without records.
    pub range: Option<(LogTime, LogTime)>,
    /// The log's time zone, which shows the report's times in the log's local time (as relog
    /// does); `None` when the log names none.
    pub time_zone: Option<TimeZone>,
    /// Records read.
    pub records: u64,
    /// The slice width in seconds.
    pub interval_seconds: u64,
    /// The questions' values used.
    pub questions: Vec<(String, String)>,
    /// Every enabled analysis, in the rules' order.
    pub analyses: Vec<AnalysisReport>,
    /// The alerts, in time order (then by analysis).
    pub alerts: Vec<Alert>,
    /// The counters the analyses looked at.
    pub counters: Vec<CounterReport>,
}

// ---------------------------------------------------------------------------------------------

/// The value of each question: defaults, then `set`; a clear error for an unknown name or a value
/// of the wrong type.
pub fn question_values(
    questions: &[Question],
    set: &[(String, String)],
) -> Result<Vec<(String, ScriptValue)>, AnalyzeError> {
    let mut out: Vec<(String, ScriptValue, &Question)> = questions
        .iter()
        .map(|q| (q.name.clone(), ScriptValue::from_text(&q.default), q))
        .collect();
    for (name, value) in set {
        let Some(slot) = out
            .iter_mut()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            let known: Vec<&str> = questions.iter().map(|q| q.name.as_str()).collect();
            return Err(AnalyzeError::Question {
                setting: name.clone(),
                problem: format!(
                    "the rules ask no such question (they ask: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            });
        };
        let q = slot.2;
        let dt = q.data_type.to_ascii_lowercase();
        let v = if dt == "options" {
            let Some(o) = q
                .options
                .iter()
                .find(|o| o.eq_ignore_ascii_case(value.trim()))
            else {
                return Err(AnalyzeError::Question {
                    setting: format!("{}={value}", q.name),
                    problem: format!("not one of the options: {}", q.options.join(", ")),
                });
            };
            ScriptValue::Str(o.clone())
        } else if dt == "boolean" || dt == "bool" {
            match value.trim().to_ascii_lowercase().as_str() {
                "true" | "$true" => ScriptValue::Bool(true),
                "false" | "$false" => ScriptValue::Bool(false),
                _ => {
                    return Err(AnalyzeError::Question {
                        setting: format!("{}={value}", q.name),
                        problem: "a boolean question takes True or False".into(),
                    })
                }
            }
        } else {
            let parsed = ScriptValue::from_text(value);
            let numeric_default =
                matches!(ScriptValue::from_text(&q.default), ScriptValue::Number(_));
            let wants_number = numeric_default || dt.starts_with("int") || dt == "double";
            if wants_number && !matches!(parsed, ScriptValue::Number(_)) {
                return Err(AnalyzeError::Question {
                    setting: format!("{}={value}", q.name),
                    problem: format!("a number is expected (default {})", q.default),
                });
            }
            parsed
        };
        slot.1 = v;
    }
    Ok(out.into_iter().map(|(n, v, _)| (n, v)).collect())
}

/// Translates names to English through the tables.
#[derive(Debug)]
struct Translator<'a> {
    names: &'a [NameTable],
    english: Vec<&'a NameTable>,
}

impl Translator<'_> {
    fn english_of(&self, name: &str) -> String {
        crate::names::english_name(&self.english, self.names, name)
    }

    fn path(&self, p: &CounterPath) -> CounterPath {
        if self.names.is_empty() {
            return p.clone();
        }
        let mut q = p.clone();
        q.object = self.english_of(&p.object);
        q.counter = self.english_of(&p.counter);
        q
    }
}

/// A mergeable summary of the values of one column in a span of time.
#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    n: u64,
    min: f64,
    max: f64,
    sum: f64,
    /// Least-squares sums, t in hours since t0.
    st: f64,
    stt: f64,
    stv: f64,
    /// Bit k: a value equal to the column's k-th `eq` threshold was seen.
    eq_hits: u64,
}

impl Bucket {
    #[inline]
    fn push(&mut self, t: f64, v: f64, eq: &[f64]) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        self.sum += v;
        self.st += t;
        self.stt += t * t;
        self.stv += t * v;
        for (k, e) in eq.iter().enumerate().take(64) {
            if v == *e {
                self.eq_hits |= 1 << k;
            }
        }
    }

    fn merge(&mut self, o: &Bucket) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.n += o.n;
        self.sum += o.sum;
        self.st += o.st;
        self.stt += o.stt;
        self.stv += o.stv;
        self.eq_hits |= o.eq_hits;
    }

    fn slope(&self) -> Option<f64> {
        let n = self.n as f64;
        let den = n * self.stt - self.st * self.st;
        if self.n < 2 || den.abs() <= f64::EPSILON * n * self.stt.abs().max(1.0) {
            return None;
        }
        let slope = (n * self.stv - self.st * self.sum) / den;
        slope.is_finite().then_some(slope)
    }
}

/// Every value while there are at most [`MAX_KEPT`], then every 2nd, 4th … in time order.
#[derive(Clone, Debug, Default)]
struct Subsample {
    points: Vec<(LogTime, f64)>,
    stride: u64,
    seen: u64,
}

impl Subsample {
    fn push(&mut self, t: LogTime, v: f64) {
        let stride = self.stride.max(1);
        if self.seen.is_multiple_of(stride) {
            if self.points.len() == MAX_KEPT {
                let mut i = 0;
                self.points.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride = stride * 2;
                if self.seen.is_multiple_of(self.stride) {
                    self.points.push((t, v));
                }
            } else {
                self.points.push((t, v));
            }
        }
        self.seen += 1;
    }

    fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
        if sorted.is_empty() {
            return None;
        }
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted
            .get(rank.saturating_sub(1).min(sorted.len() - 1))
            .copied()
    }
}

/// The minimum and maximum of a span of consecutive values, with their times.
#[derive(Clone, Copy, Debug)]
struct Span {
    n: u64,
    min: (LogTime, f64),
    max: (LogTime, f64),
}

/// A chart series: the minimum and maximum of each span of `span` consecutive values, at most
/// [`MAX_KEPT`] / 2 spans (pairs of spans merge, and `span` doubles, when one more would not fit).
#[derive(Debug, Default)]
struct Chart {
    spans: Vec<Span>,
    span: u64,
}

impl Chart {
    fn push(&mut self, t: LogTime, v: f64) {
        let span = self.span.max(1);
        if let Some(last) = self.spans.last_mut().filter(|s| s.n < span) {
            last.n += 1;
            if v < last.min.1 {
                last.min = (t, v);
            }
            if v > last.max.1 {
                last.max = (t, v);
            }
            return;
        }
        if self.spans.len() == MAX_KEPT / 2 {
            self.spans = self
                .spans
                .chunks(2)
                .map(|p| {
                    let mut s = p[0];
                    if let Some(o) = p.get(1) {
                        s.n += o.n;
                        if o.min.1 < s.min.1 {
                            s.min = o.min;
                        }
                        if o.max.1 > s.max.1 {
                            s.max = o.max;
                        }
                    }
                    s
                })
                .collect();
            self.span = span * 2;
            return self.push(t, v);
        }
        self.spans.push(Span {
            n: 1,
            min: (t, v),
            max: (t, v),
        });
    }

    /// The points in time order: each span's minimum and maximum (one point when they are the
    /// same value).
    fn points(&self) -> Vec<(LogTime, f64)> {
        let mut out = Vec::with_capacity(self.spans.len() * 2);
        for s in &self.spans {
            if s.min.1 == s.max.1 || s.min.1.is_nan() || s.max.1.is_nan() {
                out.push(s.min);
            } else if s.min.0 <= s.max.0 {
                out.extend([s.min, s.max]);
            } else {
                out.extend([s.max, s.min]);
            }
        }
        out
    }
}

struct ColumnState {
    /// For a generated series (network utilization): the states of its two inputs.
    derived: Option<(usize, usize)>,
    /// Buckets not evaluated yet.
    buckets: Vec<Bucket>,
    /// Everything evaluated so far (the prefix for trends) / everything (statistics).
    done: Bucket,
    total: Bucket,
    eq: Vec<f64>,
    sample: Subsample,
    chart: Chart,
}

impl ColumnState {
    /// Takes value `v` at time `t` (`hours` after the first record) into bucket `slot`.
    #[inline]
    fn push(&mut self, slot: usize, hours: f64, t: LogTime, v: f64) {
        if self.buckets.len() <= slot {
            self.buckets.resize(slot + 1, Bucket::default());
        }
        if let Some(b) = self.buckets.get_mut(slot) {
            b.push(hours, v, &self.eq);
        }
        self.total.push(hours, v, &[]);
        self.sample.push(t, v);
        self.chart.push(t, v);
    }
}

/// A threshold call bound to columns.
struct Bound {
    analysis: usize,
    threshold: usize,
    call: usize,
    columns: Vec<usize>,
}

/// Reads `reader` to its end and evaluates `rules` over it, in slices of the interval the options
/// give ([`Interval::Seconds`]).
///
/// `reader` yields cooked values (a [`Filtered`] over the logs, as [`analyze_logs`] makes it;
/// `begin`/`end` of the options are applied there, not here); columns that no data source selects
/// are ignored.
///
/// # Errors
/// [`Interval::Auto`] is an [`AnalyzeError::Interval`] here: the automatic interval comes from the
/// log's duration, known only once the log has been read, and one stream cannot be read twice.
/// [`analyze_logs`] opens the logs twice and reads their times first, so that the slices are exact
/// (an earlier single-stream approximation, buckets of records assigned to slices at the end,
/// could count a record in the slice before its own).
pub fn analyze(
    reader: &mut dyn LogReader,
    rules: &Rules,
    opts: &AnalyzeOptions,
) -> Result<Report, AnalyzeError> {
    match opts.interval {
        Interval::Seconds(seconds) => {
            evaluate(reader, rules, opts, seconds, crate::log::cores() > 1)
        }
        Interval::Auto => Err(AnalyzeError::Interval {
            seconds: None,
            problem: "the automatic interval needs the log's times before its values: \
                      analyze_logs reads them first (one stream cannot be read twice)"
                .into(),
        }),
    }
}

/// [`analyze`] with slices of `seconds`, the records evaluated on another thread than the reading
/// when `threaded`. With [`Interval::Auto`] in `opts` (the caller found `seconds` in a first
/// pass), a log without records reports an interval of 0.
fn evaluate(
    reader: &mut dyn LogReader,
    rules: &Rules,
    opts: &AnalyzeOptions,
    seconds: u64,
    threaded: bool,
) -> Result<Report, AnalyzeError> {
    let questions = question_values(&rules.questions, &opts.set)?;
    if seconds == 0 {
        return Err(AnalyzeError::Interval {
            seconds: Some(seconds),
            problem: "must be at least 1 second".into(),
        });
    }
    let width: i64 = i64::try_from(seconds)
        .ok()
        .and_then(|s| s.checked_mul(TICKS_PER_SECOND))
        .ok_or_else(|| AnalyzeError::Interval {
            seconds: Some(seconds),
            problem: "too long".into(),
        })?;
    let mut english: Vec<&NameTable> = vec![NameTable::builtin_english()];
    english.extend(opts.english.iter());
    let translator = Translator {
        names: &opts.names,
        english,
    };
    let tables = opts.tables();
    let header: LogHeader = reader.header().clone();
    let user_keep: Vec<bool> = header
        .counters
        .iter()
        .map(|c| opts.counters.as_ref().is_none_or(|f| f.matches(&c.path)))
        .collect();

    // Resolve each enabled analysis: columns per data source, threshold code evaluated.
    let mut analyses = Vec::new();
    let mut bound: Vec<Bound> = Vec::new();
    let mut column_of: HashMap<usize, usize> = HashMap::new(); // log column -> counter index
    let mut log_columns: Vec<usize> = Vec::new(); // counter index -> log column (usize::MAX: generated)
                                                  // Generated series: counter index -> (input counter indexes, path).
    let mut generated: Vec<(usize, (usize, usize), CounterPath)> = Vec::new();
    let mut generated_of: HashMap<String, usize> = HashMap::new();
    for a in rules.enabled() {
        let index = analyses.len();
        let (report, calls) = resolve(a, &header, &user_keep, &tables, &questions);
        let mut report = report;
        if let Some(calls) = calls {
            for (ti, ci, targets) in calls {
                let mut mapped: Vec<usize> = Vec::new();
                for t in targets {
                    let m = match t {
                        Target::Column(c) => counter_index(&mut column_of, &mut log_columns, c),
                        Target::Utilization(x, y, path) => {
                            let inputs = (
                                counter_index(&mut column_of, &mut log_columns, x),
                                counter_index(&mut column_of, &mut log_columns, y),
                            );
                            let key = path.key();
                            match generated_of.get(&key) {
                                Some(&m) => m,
                                None => {
                                    log_columns.push(usize::MAX);
                                    let m = log_columns.len() - 1;
                                    generated.push((m, inputs, path));
                                    generated_of.insert(key, m);
                                    m
                                }
                            }
                        }
                    };
                    mapped.push(m);
                }
                for &m in &mapped {
                    if !report.counters.contains(&m) {
                        report.counters.push(m);
                    }
                }
                bound.push(Bound {
                    analysis: index,
                    threshold: ti,
                    call: ci,
                    columns: mapped,
                });
            }
        }
        analyses.push(report);
    }
    // Columns that data sources matched but no threshold reads still get statistics and charts.
    for (ai, a) in rules.enabled().enumerate() {
        if analyses.get(ai).is_some_and(|r| r.evaluated()) {
            // In the data sources' order (not the map's, which differs from run to run).
            let columns = data_source_columns(a, &header, &user_keep, &tables);
            for ds in &a.data_sources {
                let key = ds.collection_var.to_ascii_lowercase();
                for &c in columns.get(&key).into_iter().flatten().flatten() {
                    let m = *column_of.entry(c).or_insert_with(|| {
                        log_columns.push(c);
                        log_columns.len() - 1
                    });
                    if let Some(r) = analyses.get_mut(ai) {
                        if !r.counters.contains(&m) {
                            r.counters.push(m);
                        }
                    }
                }
            }
        }
    }
    for r in &mut analyses {
        r.counters.sort_unstable();
    }

    let mut keep = vec![false; header.counters.len()];
    for &c in &log_columns {
        if let Some(k) = keep.get_mut(c) {
            *k = true;
        }
    }
    reader.select_columns(&keep);

    let mut states: Vec<ColumnState> = log_columns
        .iter()
        .enumerate()
        .map(|(i, _)| ColumnState {
            derived: generated.iter().find(|g| g.0 == i).map(|g| g.1),
            buckets: Vec::new(),
            done: Bucket::default(),
            total: Bucket::default(),
            eq: Vec::new(),
            sample: Subsample::default(),
            chart: Chart::default(),
        })
        .collect();
    for b in &bound {
        let Some((_, call)) = call_of(&analyses, b) else {
            continue;
        };
        if call.operator == Operator::Eq {
            for &c in &b.columns {
                if let Some(s) = states.get_mut(c) {
                    if !s.eq.contains(&call.threshold) {
                        s.eq.push(call.threshold);
                    }
                }
            }
        }
    }

    // One pass: this thread reads, another evaluates.
    let mut slicer = Slicer {
        states,
        log_columns: &log_columns,
        bound: &bound,
        analyses: &analyses,
        width,
        span: TimeSpan::default(),
        records: 0,
        base: 0,
        alerts: Vec::new(),
    };
    slicer.read(reader, threaded)?;
    let Slicer {
        states,
        span,
        records,
        mut alerts,
        ..
    } = slicer;
    let interval_seconds = match (span.t0, opts.interval) {
        (None, Interval::Auto) => 0,
        _ => seconds,
    };
    let last = span.last;
    alerts.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(a.analysis.cmp(&b.analysis))
            .then(b.priority.cmp(&a.priority))
            .then(a.counter.cmp(&b.counter))
    });
    for a in &alerts {
        if let Some(r) = analyses.get_mut(a.analysis) {
            r.alerts += 1;
        }
    }

    let mut machines: Vec<String> = Vec::new();
    for c in &header.counters {
        if let Some(m) = &c.path.machine {
            if !machines.iter().any(|x| eq_ignore_case(x, m)) {
                machines.push(m.clone());
            }
        }
    }
    let counters = log_columns
        .iter()
        .zip(states)
        .enumerate()
        .map(|(i, (&col, s))| {
            let c = header.counters.get(col);
            let generated_path = generated
                .iter()
                .find(|g| g.0 == i)
                .map(|g| translator.path(&g.2).to_string());
            let mut sorted: Vec<f64> = s.sample.points.iter().map(|p| p.1).collect();
            sorted.sort_by(f64::total_cmp);
            let has = s.total.n > 0;
            CounterReport {
                path: match &generated_path {
                    Some(p) => p.clone(),
                    None => c
                        .map(|c| translator.path(&c.path).to_string())
                        .unwrap_or_default(),
                },
                log_path: match generated_path {
                    Some(p) => p,
                    None => c.map(|c| c.name.clone()).unwrap_or_default(),
                },
                count: s.total.n,
                min: has.then_some(s.total.min),
                avg: has.then(|| s.total.sum / s.total.n as f64),
                max: has.then_some(s.total.max),
                p90: Subsample::percentile(&sorted, 90.0),
                p95: Subsample::percentile(&sorted, 95.0),
                trend: s.total.slope(),
                points: s.chart.points(),
            }
        })
        .collect();

    Ok(Report {
        source: header.source.clone(),
        machines,
        range: span.t0.map(|s| (s, last)),
        time_zone: header.time_zone.clone(),
        records,
        interval_seconds,
        questions: questions
            .iter()
            .map(|(n, v)| {
                (
                    n.clone(),
                    match v {
                        ScriptValue::Number(x) => x.to_string(),
                        ScriptValue::Str(s) => s.clone(),
                        ScriptValue::Bool(b) => b.to_string(),
                        _ => String::new(),
                    },
                )
            })
            .collect(),
        analyses,
        alerts,
        counters,
    })
}

/// Records' cells per batch handed to the evaluating thread (about 30 records of 500 columns).
const BATCH_CELLS: usize = 1 << 14;
/// Batches sent to the evaluating thread and not yet taken; with the one it evaluates and the one
/// being filled, memory stays a few batches whatever the log's length.
const IN_FLIGHT: usize = 2;

/// The evaluation of the records of one pass: the slices not evaluated yet (one bucket per slice
/// and column), the alerts of those that are, the statistics and chart data.
struct Slicer<'a> {
    states: Vec<ColumnState>,
    /// Counter index → log column (`usize::MAX`: generated).
    log_columns: &'a [usize],
    bound: &'a [Bound],
    analyses: &'a [AnalysisReport],
    /// The slice width in ticks.
    width: i64,
    span: TimeSpan,
    records: u64,
    /// The slice of each column's first bucket (the slices before it are evaluated).
    base: i64,
    alerts: Vec<Alert>,
}

impl Slicer<'_> {
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
            self.bound,
            self.analyses,
            &mut self.alerts,
        );
    }

    /// Reads `reader` to its end and evaluates its records. With `threaded`, this thread reads
    /// (and, through a [`Filtered`], computes the raw samples) while another evaluates: it is
    /// handed the records in batches, in order, and takes them one by one as on one thread, so
    /// the results are the same to the bit. A reading error ends the pass.
    fn read(&mut self, reader: &mut dyn LogReader, threaded: bool) -> Result<(), LogError> {
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

/// The counter index of log column `c`, added when new.
fn counter_index(
    column_of: &mut HashMap<usize, usize>,
    log_columns: &mut Vec<usize>,
    c: usize,
) -> usize {
    *column_of.entry(c).or_insert_with(|| {
        log_columns.push(c);
        log_columns.len() - 1
    })
}

/// The threshold and call a bound entry stands for (bound entries are only made for calls that
/// exist).
fn call_of<'a>(
    analyses: &'a [AnalysisReport],
    b: &Bound,
) -> Option<(&'a ThresholdReport, &'a StaticThreshold)> {
    let t = analyses.get(b.analysis)?.thresholds.get(b.threshold)?;
    Some((t, t.calls.get(b.call)?))
}

/// Evaluates buckets `0..n` of every column (bucket `i` is slice `base + i`) and drops them.
#[allow(clippy::too_many_arguments)]
fn flush(
    states: &mut [ColumnState],
    n: usize,
    base: i64,
    width: i64,
    start: LogTime,
    bound: &[Bound],
    analyses: &[AnalysisReport],
    alerts: &mut Vec<Alert>,
) {
    // Slices past the last bucket of every column hold no value: nothing to evaluate.
    let n = n.min(states.iter().map(|s| s.buckets.len()).max().unwrap_or(0));
    for i in 0..n {
        let slice_start = LogTime(start.0 + (base + i as i64) * width);
        let slice_end = LogTime(slice_start.0 + width);
        // Generated series: one value per slice from the slice averages of their inputs.
        let hours = ((base + i as i64) * width) as f64 / TICKS_PER_HOUR;
        for k in 0..states.len() {
            let Some((x, y)) = states.get(k).and_then(|s| s.derived) else {
                continue;
            };
            let avg = |c: usize| {
                states
                    .get(c)
                    .and_then(|s| s.buckets.get(i))
                    .filter(|b| b.n > 0)
                    .map(|b| b.sum / b.n as f64)
            };
            let (Some(bytes), Some(bandwidth)) = (avg(x), avg(y)) else {
                continue;
            };
            let v = if bytes > 0.0 && bandwidth > 0.0 {
                // PowerShell's [int]: half to even.
                ((bytes * 8.0 / bandwidth) * 100.0).round_ties_even()
            } else {
                0.0
            };
            if let Some(s) = states.get_mut(k) {
                s.push(i, hours, slice_start, v);
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
                        operator: call.operator,
                        threshold: call.threshold,
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

/// The columns of each CounterLog data source (by collection variable, lower case); `None`
/// entries never occur (kept as `Option` for the caller's flattening).
fn data_source_columns(
    a: &Analysis,
    header: &LogHeader,
    user_keep: &[bool],
    tables: &[NameTable],
) -> HashMap<String, Vec<Option<usize>>> {
    let mut out = HashMap::new();
    for ds in &a.data_sources {
        if ds.kind != DataSourceKind::CounterLog || ds.regex {
            continue;
        }
        let Ok(path) = &ds.path else { continue };
        let filter = CounterFilter::new(vec![path.clone()]).with_names(tables.to_vec());
        let cols: Vec<Option<usize>> = header
            .counters
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                user_keep.get(*i).copied().unwrap_or(false)
                    && filter.matches(&c.path)
                    && !excluded(&ds.excludes, &c.path)
            })
            .map(|(i, _)| Some(i))
            .collect();
        out.insert(ds.collection_var.to_ascii_lowercase(), cols);
    }
    out
}

fn excluded(excludes: &[String], path: &CounterPath) -> bool {
    let Some(instance) = &path.instance else {
        return false;
    };
    let full = match &path.parent {
        Some(p) => format!("{p}/{instance}"),
        None => instance.clone(),
    };
    excludes
        .iter()
        .any(|e| eq_ignore_case(e, instance) || eq_ignore_case(e, &full))
}

/// Whether two optional names are both absent or equal ignoring case.
fn same_name(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => eq_ignore_case(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// What a threshold call reads: log columns, or per-slice values generated from two of them.
enum Target {
    Column(usize),
    /// (bytes column, bandwidth column, the generated path).
    Utilization(usize, usize, CounterPath),
}

type BoundCalls = Vec<(usize, usize, Vec<Target>)>;

/// PAL's network-utilization form of a generated data source: per slice and instance,
/// `[int]((avg(A) * 8) / avg(B) * 100)`, 0 unless both averages are above 0, where `A` (bytes per
/// second) and `B` (`Current Bandwidth`, bits per second) are counter-log data sources of the same
/// analysis matched by instance name. Recognised by its text: the code reads the slice averages
/// (`QuantizedAvg`) of exactly two collections as `[double]$A[…] * 8) / [double]$B[…]` and scales
/// by 100. Returns (A, B).
fn utilization_form(code: &str) -> Option<(String, String)> {
    let compact: String = code.split_whitespace().collect();
    let names: Vec<String> = compact
        .split("[double]$")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect();
    let [a, b] = names.as_slice() else {
        return None;
    };
    let shape =
        format!("[double]${a}[$i].QuantizedAvg[$v]*8)/[double]${b}[$b].QuantizedAvg[$v])*100");
    (a != b && compact.contains(&shape)).then(|| (a.clone(), b.clone()))
}

/// Matches an analysis's data sources and evaluates its thresholds' code. Returns the report
/// entry and, when evaluated, each call (threshold index, call index, log columns).
fn resolve(
    a: &Analysis,
    header: &LogHeader,
    user_keep: &[bool],
    tables: &[NameTable],
    questions: &[(String, ScriptValue)],
) -> (AnalysisReport, Option<BoundCalls>) {
    let mut report = AnalysisReport {
        name: a.name.clone(),
        category: a.category.clone(),
        description: a.description.clone(),
        reason: None,
        counters: Vec::new(),
        thresholds: Vec::new(),
        alerts: 0,
    };
    let fail = |mut r: AnalysisReport, why: String| {
        r.reason = Some(why);
        (r, None)
    };
    if let Some(p) = &a.problem {
        return fail(report, p.clone());
    }
    let columns = data_source_columns(a, header, user_keep, tables);
    let mut vars: HashMap<String, ScriptValue> = questions
        .iter()
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let mut generated: Vec<&str> = Vec::new();
    // Generated collections evaluated: variable (lower case) -> (bytes column, bandwidth column, path).
    let mut derived: HashMap<String, Vec<(usize, usize, CounterPath)>> = HashMap::new();
    for ds in &a.data_sources {
        match (&ds.kind, &ds.path) {
            (DataSourceKind::Generated { code }, path) => {
                let pairs = utilization_form(code).and_then(|(bytes, bandwidth)| {
                    let bytes = columns.get(&bytes.to_ascii_lowercase())?;
                    let bandwidth = columns.get(&bandwidth.to_ascii_lowercase())?;
                    let counter = path.as_ref().ok()?.counter.clone();
                    let mut pairs = Vec::new();
                    for &x in bytes.iter().flatten() {
                        let px = &header.counters.get(x)?.path;
                        if excluded(&ds.excludes, px) {
                            continue;
                        }
                        let partner = bandwidth.iter().flatten().copied().find(|&y| {
                            header.counters.get(y).is_some_and(|c| {
                                let py = &c.path;
                                same_name(&py.instance, &px.instance)
                                    && same_name(&py.parent, &px.parent)
                                    && py.index == px.index
                                    && same_name(&py.machine, &px.machine)
                            })
                        });
                        if let Some(y) = partner {
                            let mut p = px.clone();
                            p.counter = counter.clone();
                            pairs.push((x, y, p));
                        }
                    }
                    Some(pairs)
                });
                let count = pairs.as_ref().map_or(0, Vec::len);
                match pairs {
                    Some(p) => {
                        derived.insert(ds.collection_var.to_ascii_lowercase(), p);
                    }
                    None => generated.push(&ds.collection_var),
                }
                vars.insert(
                    ds.collection_var.clone(),
                    ScriptValue::Collection {
                        name: ds.collection_var.clone(),
                        count,
                    },
                );
                continue;
            }
            (_, Err(e)) => {
                return fail(
                    report,
                    format!("{}: the data source path {} is not a counter path: {e}", a.file, ds.expression_path),
                )
            }
            _ if ds.regex => {
                return fail(
                    report,
                    format!(
                        "{}: the data source {} matches counters by regular expression, which is not evaluated",
                        a.file, ds.expression_path
                    ),
                )
            }
            _ => {}
        }
        let count = columns
            .get(&ds.collection_var.to_ascii_lowercase())
            .map_or(0, Vec::len);
        vars.insert(
            ds.collection_var.clone(),
            ScriptValue::Collection {
                name: ds.collection_var.clone(),
                count,
            },
        );
    }
    if columns.values().all(Vec::is_empty) {
        let paths: Vec<&str> = a
            .data_sources
            .iter()
            .filter(|d| d.kind == DataSourceKind::CounterLog)
            .map(|d| d.expression_path.as_str())
            .collect();
        return fail(
            report,
            format!("the log has none of its counters ({})", paths.join(", ")),
        );
    }
    let mut bound = Vec::new();
    for (ti, t) in a.thresholds.iter().enumerate() {
        let calls = match Script::parse(&t.code).and_then(|s| s.evaluate(&vars)) {
            Ok(c) => c,
            Err(e) => {
                let at = match e.line() {
                    Some(l) => format!(
                        "{}:{}",
                        a.file,
                        t.code_line.saturating_add(l).saturating_sub(1)
                    ),
                    None => a.file.clone(),
                };
                let line = e.line().and_then(|l| {
                    t.code
                        .lines()
                        .nth(l.saturating_sub(1) as usize)
                        .map(|s| s.trim().to_owned())
                });
                return fail(
                    report,
                    format!(
                        "threshold \"{}\": {at}: {e}{}",
                        t.name,
                        line.map(|l| format!(" (`{l}`)")).unwrap_or_default()
                    ),
                );
            }
        };
        for (ci, call) in calls.iter().enumerate() {
            if generated
                .iter()
                .any(|g| g.eq_ignore_ascii_case(&call.collection))
            {
                return fail(
                    report,
                    format!(
                        "threshold \"{}\" reads the generated data source ${}, whose PowerShell code is not evaluated",
                        t.name, call.collection
                    ),
                );
            }
            let key = call.collection.to_ascii_lowercase();
            let targets: Vec<Target> = match derived.get(&key) {
                Some(pairs) => pairs
                    .iter()
                    .map(|(x, y, p)| Target::Utilization(*x, *y, p.clone()))
                    .collect(),
                None => columns
                    .get(&key)
                    .map(|v| v.iter().flatten().map(|&c| Target::Column(c)).collect())
                    .unwrap_or_default(),
            };
            bound.push((ti, ci, targets));
        }
        report.thresholds.push(ThresholdReport {
            name: t.name.clone(),
            condition: t.condition.clone(),
            priority: t.priority,
            calls,
        });
    }
    (report, Some(bound))
}

#[cfg(test)]
mod thread_tests {
    use super::*;
    use crate::analyze::rules::RulesFile;
    use crate::log::{Cell, LogCounter, LogKind};

    /// Records held in memory.
    struct Records(LogHeader, std::vec::IntoIter<Record>);

    impl LogReader for Records {
        fn header(&self) -> &LogHeader {
            &self.0
        }
        fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
            Ok(self.1.next().map(|r| *record = r).is_some())
        }
    }

    /// 3 columns, 40,000 records a second apart with blanks, NaN and repeated values (7 batches
    /// of 5,461 records and a partial one, many slices), evaluated on one thread and on two: the
    /// same report, alerts of every operator and trends included.
    #[test]
    fn two_threads_give_one_threads_report() {
        let paths = [r"\\M\T(a)\V", r"\\M\T(b)\V", r"\\M\T(c)\V"];
        let header = LogHeader {
            source: "memory".into(),
            kind: LogKind::Csv,
            time_zone: None,
            counters: paths
                .iter()
                .map(|p| LogCounter::new(CounterPath::parse(p).unwrap(), None))
                .collect(),
        };
        let records = || -> Vec<Record> {
            (0..40_000i64)
                .map(|i| Record {
                    time: LogTime(i * TICKS_PER_SECOND),
                    cells: vec![
                        Cell::Value((i % 97) as f64),
                        if i % 13 == 0 {
                            Cell::Blank
                        } else {
                            Cell::Value((i / 100) as f64)
                        },
                        Cell::Value(if i % 1000 == 7 {
                            f64::NAN
                        } else {
                            (i % 5) as f64
                        }),
                    ],
                })
                .collect()
        };
        let mut xml = String::from(
            r#"<PAL NAME="t"><ANALYSIS NAME="a" ENABLED="True" CATEGORY="T" ID="1"><DATASOURCE TYPE="CounterLog" NAME="\T(*)\V" EXPRESSIONPATH="\T(*)\V" COLLECTIONVARNAME="V"/>"#,
        );
        for (op, v) in [
            ("gt", "90"),
            ("ge", "96"),
            ("lt", "1"),
            ("le", "0"),
            ("eq", "3"),
        ] {
            xml.push_str(&format!(r#"<THRESHOLD NAME="{op}" CONDITION="{op}" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator '{op}' -Threshold {v}</CODE></THRESHOLD>"#));
        }
        xml.push_str(r#"<THRESHOLD NAME="up" CONDITION="up" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'gt' -Threshold 10 -IsTrendOnly $True</CODE></THRESHOLD></ANALYSIS></PAL>"#);
        let f = RulesFile::parse("t.xml", &xml).unwrap();
        let rules = Rules {
            name: f.name,
            files: vec![],
            questions: f.questions,
            analyses: f.analyses,
        };
        let opts = AnalyzeOptions::default();
        let run = |threaded: bool| {
            let mut log = Records(header.clone(), records().into_iter());
            evaluate(&mut log, &rules, &opts, 60, threaded).unwrap()
        };
        let one = run(false);
        let two = run(true);
        assert_eq!(one.records, 40_000);
        assert!(one.alerts.len() > 1000, "{}", one.alerts.len());
        for c in ["gt", "ge", "lt", "le", "eq", "up"] {
            assert!(one.alerts.iter().any(|a| a.condition == c), "{c}");
        }
        // NaN in the chart points would make the reports unequal to themselves: there is none.
        assert!(one
            .counters
            .iter()
            .all(|c| c.points.iter().all(|p| !p.1.is_nan())));
        assert_eq!(one, two);
    }
}

#[cfg(test)]
mod chart_tests {
    use super::*;

    /// 10,000 values of 1 with one spike: the chart keeps 2,000 points at most, the spike among
    /// them at its time (a regular subsample, every 8th value, would have dropped it).
    #[test]
    fn a_spike_survives_decimation() {
        let mut chart = Chart::default();
        let mut regular = Subsample::default();
        for i in 0..10_000i64 {
            let v = if i == 7_777 { 100.0 } else { 1.0 };
            chart.push(LogTime(i), v);
            regular.push(LogTime(i), v);
        }
        let points = chart.points();
        assert!(points.len() <= MAX_KEPT, "{}", points.len());
        assert_eq!(chart.span, 16);
        assert_eq!(points.iter().filter(|p| p.1 == 100.0).count(), 1);
        assert!(points.contains(&(LogTime(7_777), 100.0)));
        // The span of the spike draws its minimum (the span's first 1) then the spike.
        let at = points.iter().position(|p| p.1 == 100.0).unwrap();
        assert_eq!(points[at - 1], (LogTime(7_776), 1.0));
        // In time order.
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(!regular.points.iter().any(|p| p.1 == 100.0));
    }

    /// While the values fit, the chart is every value.
    #[test]
    fn every_value_while_they_fit() {
        let mut chart = Chart::default();
        for i in 0..1_000i64 {
            chart.push(LogTime(i), i as f64);
        }
        let points = chart.points();
        assert_eq!(points.len(), 1_000);
        assert_eq!(points[999], (LogTime(999), 999.0));
        // One more value pairs the spans: 501 spans, each its min and max (500 × 2 + 1).
        chart.push(LogTime(1_000), 1_000.0);
        let points = chart.points();
        assert_eq!(points.len(), 1_001);
        assert_eq!(
            &points[..3],
            &[(LogTime(0), 0.0), (LogTime(1), 1.0), (LogTime(2), 2.0)]
        );
    }
}
