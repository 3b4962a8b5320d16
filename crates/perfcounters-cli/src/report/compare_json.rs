//! The comparison with a baseline as JSON: `"comparison"` of the report (`analyze --baseline`),
//! as types.
//!
//! Fields are declared in alphabetical order, as in `json.rs`.

use perfcounters::analyze::{
    AlertCounts, AnalysisChange, BadDirection, Comparison, CounterChange, SideStats, SideSummary,
};
use serde::Serialize;

use super::iso;

/// `"comparison"` of the JSON report.
#[derive(Serialize)]
pub struct ComparisonJson<'a> {
    analyses: Vec<AnalysisChangeJson<'a>>,
    baseline: SideJson<'a>,
    counters: Vec<CounterChangeJson<'a>>,
}

impl<'a> ComparisonJson<'a> {
    /// The comparison `c` as JSON.
    pub fn new(c: &'a Comparison) -> Self {
        ComparisonJson {
            analyses: c.analyses.iter().map(AnalysisChangeJson::new).collect(),
            baseline: SideJson::new(&c.baseline),
            counters: c.counters.iter().map(CounterChangeJson::new).collect(),
        }
    }
}

/// The baseline as read.
#[derive(Serialize)]
struct SideJson<'a> {
    end: Option<String>,
    logs: &'a [String],
    machines: &'a [String],
    records: u64,
    start: Option<String>,
}

impl<'a> SideJson<'a> {
    fn new(s: &'a SideSummary) -> Self {
        let zone = s.time_zone.as_ref();
        SideJson {
            end: s.range.map(|r| iso(zone, r.1)),
            logs: &s.logs,
            machines: &s.machines,
            records: s.records,
            start: s.range.map(|r| iso(zone, r.0)),
        }
    }
}

/// One side's statistics of a counter.
#[derive(Serialize)]
struct StatsJson {
    avg: Option<f64>,
    count: u64,
    max: Option<f64>,
    min: Option<f64>,
    p50: Option<f64>,
    p95: Option<f64>,
}

/// A value that is not finite has no JSON number: `null`.
fn num(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl StatsJson {
    fn new(s: &SideStats) -> Self {
        StatsJson {
            avg: num(s.avg),
            count: s.count,
            max: num(s.max),
            min: num(s.min),
            p50: num(s.p50),
            p95: num(s.p95),
        }
    }
}

/// One counter compared.
#[derive(Serialize)]
struct CounterChangeJson<'a> {
    analyses: &'a [String],
    avg_ratio: Option<f64>,
    /// `up` or `down`: the direction its thresholds call bad; `null` without one.
    bad: Option<&'static str>,
    baseline: Option<StatsJson>,
    candidate: Option<StatsJson>,
    class: &'static str,
    counter: &'a str,
    effect: Option<f64>,
    effect_error: Option<f64>,
    p95_ratio: Option<f64>,
}

impl<'a> CounterChangeJson<'a> {
    fn new(c: &'a CounterChange) -> Self {
        CounterChangeJson {
            analyses: &c.analyses,
            avg_ratio: c.avg_ratio.and_then(num),
            bad: c.bad.map(|b| match b {
                BadDirection::Up => "up",
                BadDirection::Down => "down",
            }),
            baseline: c.baseline.as_ref().map(StatsJson::new),
            candidate: c.candidate.as_ref().map(StatsJson::new),
            class: c.class.name(),
            counter: &c.counter,
            effect: c.effect,
            effect_error: c.effect_error,
            p95_ratio: c.p95_ratio.and_then(num),
        }
    }
}

/// Alerts of an analysis on one side.
#[derive(Serialize)]
struct CountsJson {
    critical: usize,
    evaluated: bool,
    warning: usize,
}

impl CountsJson {
    fn new(c: &AlertCounts) -> Self {
        CountsJson {
            critical: c.critical,
            evaluated: c.evaluated,
            warning: c.warning,
        }
    }
}

/// One analysis compared.
#[derive(Serialize)]
struct AnalysisChangeJson<'a> {
    baseline: CountsJson,
    candidate: CountsJson,
    name: &'a str,
    verdict: &'static str,
}

impl<'a> AnalysisChangeJson<'a> {
    fn new(a: &'a AnalysisChange) -> Self {
        AnalysisChangeJson {
            baseline: CountsJson::new(&a.baseline),
            candidate: CountsJson::new(&a.candidate),
            name: &a.name,
            verdict: a.verdict.name(),
        }
    }
}
