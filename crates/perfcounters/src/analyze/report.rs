//! What an analysis reports (analyses, thresholds, alerts, counters' statistics and chart data)
//! and its assembly once the log is read.

use crate::log::model::{LogHeader, LogTime, TimeZone};
use crate::names::{LogLanguage, NameTable};
use crate::path::{eq_ignore_case, CounterPath};

use super::script::{Operator, ScriptValue, StaticThreshold};
use super::stats::{ColumnState, Subsample};

/// A generated series: its counter index, its path, the code that makes it.
#[derive(Clone, Debug)]
pub(super) struct Series {
    pub(super) counter: usize,
    pub(super) path: CounterPath,
    pub(super) formula: String,
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
    /// Whether its code is evaluated in each time slice (code that loops over the counter
    /// instances and their `Quantized*` values and calls `CreateAlert`) rather than once.
    pub per_slice: bool,
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
    /// The comparison; `None` for an alert the threshold's code raised itself (`CreateAlert`).
    pub operator: Option<Operator>,
    /// The threshold value; `None` for an alert the threshold's code raised itself.
    pub threshold: Option<f64>,
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
    /// 90th percentile, by the nearest-rank method over at most [`MAX_KEPT`](super::MAX_KEPT)
    /// values: every value while there are no more, beyond that a regular subsample (every 2nd,
    /// then every 4th … value in time order).
    pub p90: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// Slope of the least-squares line, per hour (`None` with fewer than two distinct times).
    pub trend: Option<f64>,
    /// The chart data: at most [`MAX_KEPT`](super::MAX_KEPT) (time, value) points in time order:
    /// every value while they fit, beyond that the minimum and the maximum of each span of
    /// consecutive values (spans of 2, 4 … values), so that a spike stays visible.
    pub points: Vec<(LogTime, f64)>,
    /// For a series a generated data source makes, its code (PowerShell, from the rules file,
    /// untrusted): the formula of the series, evaluated once per time slice.
    pub formula: Option<String>,
}

/// The result of [`analyze`](super::analyze()).
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
    /// The language of the log's objects, as matching found it: whether the built-in name table
    /// translated them ([`LogLanguage::uses_builtin`]), or no table knows them.
    pub language: LogLanguage,
}

impl Report {
    /// How many analyses were evaluated.
    pub fn evaluated(&self) -> usize {
        self.analyses.iter().filter(|a| a.evaluated()).count()
    }

    /// Why so few analyses were evaluated that the absence of alerts says nothing: `None` when
    /// at least a tenth of them were (or there are none), else the reason, to be shown before any
    /// alert or its absence.
    pub fn few_evaluated(&self) -> Option<FewEvaluated> {
        let total = self.analyses.len();
        let evaluated = self.evaluated();
        if total == 0 || evaluated.saturating_mul(10) >= total {
            return None;
        }
        // An analysis that matched shows the log's names are the rules' language: its objects
        // that no table knows are then application counters (`MSSQL$PROD:Buffer Manager`).
        let reason = if evaluated == 0 && self.language.unknown_language() {
            FewReason::OtherLanguage
        } else {
            FewReason::CountersMissing
        };
        Some(FewEvaluated {
            evaluated,
            total,
            reason,
        })
    }
}

/// Fewer than a tenth of a report's analyses were evaluated ([`Report::few_evaluated`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FewEvaluated {
    /// Analyses evaluated.
    pub evaluated: usize,
    /// Analyses of the rules.
    pub total: usize,
    /// Why.
    pub reason: FewReason,
}

/// Why few analyses were evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FewReason {
    /// The log does not hold the counters the rules read.
    CountersMissing,
    /// The log names its objects in a language that is not English and that the built-in table
    /// does not know: the machine's name tables would translate them.
    OtherLanguage,
}

impl FewEvaluated {
    /// The reason as a sentence, naming the parameter that takes name tables as
    /// `names_parameter` (a command says `--names`).
    pub fn message(&self, names_parameter: &str) -> String {
        let FewEvaluated {
            evaluated, total, ..
        } = self;
        match self.reason {
            FewReason::CountersMissing => format!(
                "only {evaluated} of {total} analyses were evaluated: the log does not hold the \
                 counters the others read, so the report says nothing of what they check"
            ),
            FewReason::OtherLanguage => format!(
                "only {evaluated} of {total} analyses were evaluated: the log names its counters \
                 in a language other than English that the built-in table (PAL's \
                 CounterLang.xml) does not know; pass {names_parameter} with the machine's name \
                 tables (PerfStringBackup.INI) so that they match the rules' English names"
            ),
        }
    }
}

/// Translates names to English through the tables.
#[derive(Debug)]
pub(super) struct Translator<'a> {
    names: &'a [NameTable],
    english: Vec<&'a NameTable>,
}

impl<'a> Translator<'a> {
    /// Translates from the languages of `names` (none: names stay as they are) through the built-in
    /// English table and `english`.
    pub(super) fn new(names: &'a [NameTable], english: &'a [NameTable]) -> Self {
        let mut tables: Vec<&NameTable> = vec![NameTable::builtin_english()];
        tables.extend(english.iter());
        Translator {
            names,
            english: tables,
        }
    }

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

/// The machines the columns of `header` name, each once (ignoring case), in column order.
pub(super) fn machines(header: &LogHeader) -> Vec<String> {
    let mut machines: Vec<String> = Vec::new();
    for c in &header.counters {
        if let Some(m) = &c.path.machine {
            if !machines.iter().any(|x| eq_ignore_case(x, m)) {
                machines.push(m.clone());
            }
        }
    }
    machines
}

/// The questions' values as text.
pub(super) fn question_texts(questions: &[(String, ScriptValue)]) -> Vec<(String, String)> {
    questions
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
        .collect()
}

/// `alerts` in time order (then by analysis, priority first, then by counter), each counted in its
/// analysis's [`AnalysisReport::alerts`].
pub(super) fn order_alerts(mut alerts: Vec<Alert>, analyses: &mut [AnalysisReport]) -> Vec<Alert> {
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
    alerts
}

/// The statistics and chart data of each counter from its state at the end of the pass: counter
/// `i` is log column `log_columns[i]` of `header`, or the generated series of `series` whose
/// counter is `i`.
pub(super) fn counters(
    header: &LogHeader,
    log_columns: &[usize],
    series: &[Series],
    states: Vec<ColumnState>,
    translator: &Translator<'_>,
) -> Vec<CounterReport> {
    log_columns
        .iter()
        .zip(states)
        .enumerate()
        .map(|(i, (&col, s))| {
            let c = header.counters.get(col);
            let made = series.iter().find(|g| g.counter == i);
            let generated_path = made.map(|g| translator.path(&g.path).to_string());
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
                formula: made.map(|g| g.formula.clone()),
            }
        })
        .collect()
}
