//! The report as JSON: the shape `docs/analyze.md` documents, as types.
//!
//! Fields are declared in alphabetical order, the order in which the report has always been
//! written: keep it so when adding one. Keys that are left out rather than written as `null` are
//! marked `skip_serializing_if`.

use std::collections::BTreeMap;

use perfcounters::analyze::{Alert, AnalysisReport, CounterReport, Report, Rules, ThresholdReport};
use perfcounters::analyze::{Comparison, StaticThreshold};
use perfcounters::log::InputLog;
use serde::Serialize;

use super::compare_json::ComparisonJson;
use super::iso;

/// The report.
#[derive(Serialize)]
pub struct ReportJson<'a> {
    alerts: Vec<AlertJson<'a>>,
    analyses: Vec<AnalysisJson<'a>>,
    /// The comparison with a baseline (`analyze --baseline`), left out without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<ComparisonJson<'a>>,
    /// The encoding each text log was read in (`UTF-8`, `code page 1251`: the code page given or
    /// detected), by log; binary logs are left out.
    encodings: BTreeMap<&'a str, String>,
    /// The end of the time range, `null` without records.
    end: Option<String>,
    interval_seconds: u64,
    logs: Vec<&'a str>,
    machines: &'a [String],
    /// What to know before the alerts: why few analyses were evaluated, a translation of the
    /// log's names, the question answers assumed.
    notes: &'a [String],
    /// The questions' values used, by name.
    questions: BTreeMap<&'a str, &'a str>,
    records: u64,
    rules: &'a [String],
    /// The start of the time range, `null` without records.
    start: Option<String>,
    statistics: Vec<StatisticJson<'a>>,
}

impl<'a> ReportJson<'a> {
    /// The document of the report `r` of the logs `logs` with the rules `rules`.
    pub fn new(r: &'a Report, logs: &'a [InputLog], rules: &'a Rules, notes: &'a [String]) -> Self {
        let zone = r.time_zone.as_ref();
        ReportJson {
            alerts: r.alerts.iter().map(|a| AlertJson::new(r, a)).collect(),
            analyses: r.analyses.iter().map(|a| AnalysisJson::new(r, a)).collect(),
            comparison: None,
            encodings: super::encodings(logs),
            end: r.range.map(|x| iso(zone, x.1)),
            interval_seconds: r.interval_seconds,
            logs: logs.iter().map(|l| l.source.as_str()).collect(),
            machines: &r.machines,
            notes,
            questions: r
                .questions
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect(),
            records: r.records,
            rules: &rules.files,
            start: r.range.map(|x| iso(zone, x.0)),
            statistics: r.counters.iter().map(StatisticJson::new).collect(),
        }
    }
}

impl<'a> ReportJson<'a> {
    /// The document with the comparison `c` of the report's logs with a baseline.
    pub fn with_comparison(mut self, c: &'a Comparison) -> Self {
        self.comparison = Some(ComparisonJson::new(c));
        self
    }
}

/// The path of the report's counter `i` (empty for an index out of range).
fn counter(r: &Report, i: usize) -> &str {
    r.counters.get(i).map_or("", |c| c.path.as_str())
}

/// An analysis of the rules.
#[derive(Serialize)]
pub(super) struct AnalysisJson<'a> {
    alerts: usize,
    category: &'a str,
    counters: Vec<&'a str>,
    evaluated: bool,
    name: &'a str,
    /// Why the analysis was not evaluated (left out when it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    thresholds: Vec<ThresholdJson<'a>>,
}

impl<'a> AnalysisJson<'a> {
    pub(super) fn new(r: &'a Report, a: &'a AnalysisReport) -> Self {
        AnalysisJson {
            alerts: a.alerts,
            category: &a.category,
            counters: a.counters.iter().map(|&c| counter(r, c)).collect(),
            evaluated: a.evaluated(),
            name: &a.name,
            reason: a.reason.as_deref(),
            thresholds: a.thresholds.iter().map(ThresholdJson::new).collect(),
        }
    }
}

/// A threshold of an analysis.
#[derive(Serialize)]
struct ThresholdJson<'a> {
    checks: Vec<CheckJson<'a>>,
    condition: &'a str,
    name: &'a str,
    /// The code itself raises the alerts, evaluated in each slice (`CreateAlert`).
    per_slice: bool,
    priority: i32,
}

impl<'a> ThresholdJson<'a> {
    fn new(t: &'a ThresholdReport) -> Self {
        ThresholdJson {
            checks: t.calls.iter().map(CheckJson::new).collect(),
            condition: &t.condition,
            name: &t.name,
            per_slice: t.per_slice,
            priority: t.priority,
        }
    }
}

/// A `StaticThreshold` call of a threshold.
#[derive(Serialize)]
struct CheckJson<'a> {
    collection: &'a str,
    operator: &'static str,
    threshold: f64,
    trend: bool,
}

impl<'a> CheckJson<'a> {
    fn new(c: &'a StaticThreshold) -> Self {
        CheckJson {
            collection: &c.collection,
            operator: c.operator.name(),
            threshold: c.threshold,
            trend: c.trend_only,
        }
    }
}

/// An alert: a threshold broken in a slice.
#[derive(Serialize)]
pub(super) struct AlertJson<'a> {
    analysis: &'a str,
    avg: f64,
    condition: &'a str,
    counter: &'a str,
    end: String,
    max: f64,
    min: f64,
    /// `null` for an alert the threshold's code raised itself (`CreateAlert`).
    operator: Option<&'static str>,
    priority: i32,
    start: String,
    /// `null` for an alert the threshold's code raised itself.
    threshold: Option<f64>,
    threshold_name: &'a str,
    /// The trend per hour of a trend threshold (left out for the others).
    #[serde(skip_serializing_if = "Option::is_none")]
    trend: Option<f64>,
}

impl<'a> AlertJson<'a> {
    pub(super) fn new(r: &'a Report, a: &'a Alert) -> Self {
        let zone = r.time_zone.as_ref();
        AlertJson {
            analysis: r.analyses.get(a.analysis).map_or("", |x| x.name.as_str()),
            avg: a.avg,
            condition: &a.condition,
            counter: counter(r, a.counter),
            end: iso(zone, a.end),
            max: a.max,
            min: a.min,
            operator: a.operator.map(|o| o.name()),
            priority: a.priority,
            start: iso(zone, a.start),
            threshold: a.threshold,
            threshold_name: &a.threshold_name,
            trend: a.trend,
        }
    }
}

/// The statistics of a counter over the whole log.
#[derive(Serialize)]
pub(super) struct StatisticJson<'a> {
    avg: Option<f64>,
    count: u64,
    counter: &'a str,
    /// The code of the generated data source that makes the series (left out for a log's
    /// counter).
    #[serde(skip_serializing_if = "Option::is_none")]
    formula: Option<&'a str>,
    log_counter: &'a str,
    max: Option<f64>,
    min: Option<f64>,
    p90: Option<f64>,
    p95: Option<f64>,
    trend: Option<f64>,
}

impl<'a> StatisticJson<'a> {
    pub(super) fn new(c: &'a CounterReport) -> Self {
        // A value that is not finite has no JSON number: `null`.
        let num = |v: Option<f64>| v.filter(|x| x.is_finite());
        StatisticJson {
            avg: num(c.avg),
            count: c.count,
            counter: &c.path,
            formula: c.formula.as_deref(),
            log_counter: &c.log_path,
            max: num(c.max),
            min: num(c.min),
            p90: num(c.p90),
            p95: num(c.p95),
            trend: num(c.trend),
        }
    }
}

/// The data of one chart of the HTML report (`report.js` draws it).
#[derive(Serialize)]
pub struct ChartJson<'a> {
    /// One per counter of the analysis.
    pub series: Vec<SeriesJson<'a>>,
    /// One horizontal line per threshold that is not a trend.
    pub thresholds: Vec<LineJson>,
    /// For a chart on a relative time axis (a comparison's: seconds since each side's start),
    /// each series' start on the axis of local times, so that the tooltip shows absolute times;
    /// left out for the charts of absolute times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts: Option<Vec<f64>>,
    /// The log's zone ([`TimeZone::label`](perfcounters::log::TimeZone::label)), which the time
    /// axis names: its times are the log's local wall clock. Left out for a log without a zone and
    /// for the charts of relative times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// A counter's points in a chart.
#[derive(Serialize)]
pub struct SeriesJson<'a> {
    /// The counter's path.
    pub name: &'a str,
    /// The times, seconds of the x axis.
    pub t: Vec<f64>,
    /// The values.
    pub v: Vec<f64>,
}

/// A threshold as a line in a chart.
#[derive(Serialize)]
pub struct LineJson {
    /// `warning` or `critical`: the line's colour.
    pub condition: String,
    /// The legend's label.
    pub name: String,
    /// The threshold.
    pub value: f64,
}
