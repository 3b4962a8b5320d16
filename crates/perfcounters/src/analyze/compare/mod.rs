//! What changed between a baseline (a good log) and a candidate (a bad one): every counter and
//! every analysis compared ([`compare`]).
//!
//! Semantics (docs/analyze.md repeats them for users):
//!
//! * **Sides.** Each side is a [`Pipeline`]: its logs merged as relog merges them, its counter
//!   paths, its name tables and its begin and end times applied. Each side has one set of values
//!   per counter: its samples over its whole range.
//! * **Matching.** Counters match by object, instance and counter, in English (localized names
//!   translated through the side's name tables) and in the case rule of every name comparison
//!   ([`CounterPath::key`](crate::path::CounterPath::key)); the **machine is ignored**, since a
//!   baseline is often another machine of the same role. Columns of one side that differ only by
//!   the machine pool their values.
//! * **Statistics** per side: count, minimum, average, maximum (exact), p50 and p95 by the
//!   nearest rank (exact while a side has at most 1,024 values of the counter, else from bins at
//!   most 2⁻⁷ of their value wide, within 2⁻⁸ of the value; see `values.rs`).
//! * **Changes.** `avg_ratio` and `p95_ratio`: candidate over baseline (1 when both are 0, `None`
//!   when only the baseline's is 0). The **effect** is Cliff's delta, P(C > B) − P(C < B) over
//!   all pairs of a candidate value C and a baseline value B: in [−1, 1], 0 for identical
//!   distributions, positive when the candidate is higher. Exact while both sides keep every value;
//!   beyond, from the bins, with [`CounterChange::effect_error`] a bound on its error (the share of
//!   pairs that fall in one bin holding several values).
//! * **Classes** ([`ChangeClass`]): a counter changed when `|effect| ≥ bounds.effect` and the
//!   average or the p95 moved by at least `bounds.ratio` (relative; from 0 to anything counts).
//!   It is **worse** when it moved in the bad direction of the thresholds that apply to it
//!   (`gt`/`ge`: up is bad, `lt`/`le`: down is bad; thresholds of both directions, or only `eq`,
//!   give none), **better** in the other one, **changed** without a direction; else
//!   **unchanged**. Counters on one side only are **new** or **gone**.
//! * **Ranking.** Worse first, then better and changed together, each by the size of the effect;
//!   then new, gone, unchanged.
//! * **Analyses.** Each analysis is evaluated on both sides with the same slices (the
//!   candidate's interval); its alerts are counted by condition on each side and compared
//!   ([`Verdict`]).

mod classify;
mod error;
mod side;
mod values;

use crate::log::model::{LogTime, TimeZone};
use crate::log::pipeline::Pipeline;

use super::eval::{analyze_pipeline, AnalyzedLogs, Interval};
use super::rules::Rules;

pub use error::CompareError;

/// Which side of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The log that was fine.
    Baseline,
    /// The log that is looked at.
    Candidate,
}

impl Side {
    /// `baseline` or `candidate`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Baseline => "baseline",
            Side::Candidate => "candidate",
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The bounds of the classes ([`ChangeClass`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangeBounds {
    /// The smallest `|effect|` (Cliff's delta) of a change: 0.33 by default, the lower bound of
    /// a "medium" effect in Romano et al. (2006).
    pub effect: f64,
    /// The smallest relative move of the average or the p95 of a change: 0.10 (10 %) by default.
    pub ratio: f64,
}

impl Default for ChangeBounds {
    fn default() -> Self {
        ChangeBounds {
            effect: 0.33,
            ratio: 0.10,
        }
    }
}

/// What [`compare`] evaluates and how.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// The slice width of the candidate's analysis; the baseline's uses the same width.
    pub interval: Interval,
    /// Question values of the rules.
    pub set: Vec<(String, String)>,
    /// The bounds of the classes.
    pub bounds: ChangeBounds,
    /// How many of the top changes keep their chart points ([`SideStats::points`]).
    pub charts: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            interval: Interval::Auto,
            set: Vec::new(),
            bounds: ChangeBounds::default(),
            charts: 10,
        }
    }
}

/// One side as read.
#[derive(Clone, Debug, PartialEq)]
pub struct SideSummary {
    /// The logs read.
    pub logs: Vec<String>,
    /// The machines its columns name.
    pub machines: Vec<String>,
    /// The first and last record's time (UTC instants).
    pub range: Option<(LogTime, LogTime)>,
    /// The (first) log's time zone, which shows its times as the log's local time.
    pub time_zone: Option<TimeZone>,
    /// Records read.
    pub records: u64,
}

/// One side's statistics of a counter.
#[derive(Clone, Debug, PartialEq)]
pub struct SideStats {
    /// Values.
    pub count: u64,
    /// Minimum.
    pub min: f64,
    /// Arithmetic mean.
    pub avg: f64,
    /// Median by the nearest rank (exact up to 1,024 values, else within 2⁻⁸ of the value).
    pub p50: f64,
    /// 95th percentile, likewise.
    pub p95: f64,
    /// Maximum.
    pub max: f64,
    /// Whether every value was kept (percentiles and the effect exact).
    pub exact: bool,
    /// Chart points in time order (at most 400: each span's minimum and maximum), for the top
    /// changes only ([`CompareOptions::charts`]); empty for the others.
    pub points: Vec<(LogTime, f64)>,
}

/// The class of a counter's change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChangeClass {
    /// Changed in the bad direction of its thresholds.
    Worse,
    /// Changed in the good direction.
    Better,
    /// Changed; no threshold gives a direction.
    Changed,
    /// Only in the candidate.
    New,
    /// Only in the baseline.
    Gone,
    /// Not changed by the bounds.
    Unchanged,
}

impl ChangeClass {
    /// `worse`, `better`, `changed`, `new`, `gone` or `unchanged`.
    pub fn name(self) -> &'static str {
        match self {
            ChangeClass::Worse => "worse",
            ChangeClass::Better => "better",
            ChangeClass::Changed => "changed",
            ChangeClass::New => "new",
            ChangeClass::Gone => "gone",
            ChangeClass::Unchanged => "unchanged",
        }
    }

    /// Whether the counter is on both sides and changed.
    pub fn is_change(self) -> bool {
        matches!(
            self,
            ChangeClass::Worse | ChangeClass::Better | ChangeClass::Changed
        )
    }
}

/// Which way is bad for a counter, from the thresholds that apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadDirection {
    /// `gt`/`ge` thresholds: higher is worse.
    Up,
    /// `lt`/`le` thresholds: lower is worse.
    Down,
}

/// One counter compared.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterChange {
    /// The English path without the machine (`\Processor(_Total)\% Processor Time`).
    pub counter: String,
    /// The baseline's statistics; `None` when the counter is not there or has no value.
    pub baseline: Option<SideStats>,
    /// The candidate's.
    pub candidate: Option<SideStats>,
    /// Candidate's average over the baseline's (1 when both are 0; `None` when only the
    /// baseline's is 0 or a side has none).
    pub avg_ratio: Option<f64>,
    /// Candidate's p95 over the baseline's, likewise.
    pub p95_ratio: Option<f64>,
    /// Cliff's delta of the candidate against the baseline, in [−1, 1].
    pub effect: Option<f64>,
    /// A bound on the effect's error: the exact delta lies within `effect ± effect_error` (0
    /// when exact).
    pub effect_error: Option<f64>,
    /// The class.
    pub class: ChangeClass,
    /// The bad direction its thresholds give, if they give one.
    pub bad: Option<BadDirection>,
    /// The enabled analyses whose data sources select it.
    pub analyses: Vec<String>,
}

/// Alerts of an analysis on one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlertCounts {
    /// Whether the analysis was evaluated there.
    pub evaluated: bool,
    /// Alerts of `Critical` thresholds.
    pub critical: usize,
    /// Alerts of the other thresholds (`Warning`).
    pub warning: usize,
}

impl AlertCounts {
    /// Every alert.
    pub fn total(&self) -> usize {
        self.critical + self.warning
    }
}

/// How an analysis changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// Alerts in the candidate only.
    New,
    /// More alerts, or alerts of a higher priority: (critical, warning) counts compared in that
    /// order.
    Worse,
    /// Fewer alerts, or of a lower priority.
    Better,
    /// Alerts in the baseline only.
    Resolved,
    /// The same counts.
    Same,
}

impl Verdict {
    /// `new`, `worse`, `better`, `resolved` or `same`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::New => "new",
            Verdict::Worse => "worse",
            Verdict::Better => "better",
            Verdict::Resolved => "resolved",
            Verdict::Same => "same",
        }
    }
}

/// One analysis compared.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisChange {
    /// Its name.
    pub name: String,
    /// Its category.
    pub category: String,
    /// Alerts in the baseline.
    pub baseline: AlertCounts,
    /// Alerts in the candidate.
    pub candidate: AlertCounts,
    /// The verdict.
    pub verdict: Verdict,
}

/// The comparison of two sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The baseline as read.
    pub baseline: SideSummary,
    /// The candidate as read.
    pub candidate: SideSummary,
    /// Every counter, ranked (changes first, see the module's documentation).
    pub counters: Vec<CounterChange>,
    /// Every enabled analysis, in the rules' order.
    pub analyses: Vec<AnalysisChange>,
}

/// What [`compare`] returns: the comparison and each side's analysis.
#[derive(Debug)]
pub struct Compared {
    /// The comparison.
    pub comparison: Comparison,
    /// The baseline's analysis (slices of the candidate's width).
    pub baseline: AnalyzedLogs,
    /// The candidate's analysis, as [`analyze_pipeline`] makes it alone.
    pub candidate: AnalyzedLogs,
}

/// Compares `candidate` with `baseline`: every counter of each side read once (bounded memory per
/// counter, whatever the logs' lengths), then `rules` evaluated on both, the candidate first (with
/// `opts.interval`), the baseline with the candidate's slice width.
///
/// # Errors
/// A side cannot be opened or read ([`CompareError::Inputs`]), has no record
/// ([`CompareError::Empty`]), the two share no counter ([`CompareError::NothingShared`]), or an
/// analysis fails ([`CompareError::Analyze`]).
pub fn compare(
    baseline: &Pipeline,
    candidate: &Pipeline,
    rules: &Rules,
    opts: &CompareOptions,
) -> Result<Compared, CompareError> {
    let read = |side: Side, p: &Pipeline| {
        let values = side::read_side(p).map_err(|error| CompareError::Inputs { side, error })?;
        if values.records == 0 {
            return Err(CompareError::Empty {
                side,
                logs: values.logs.clone(),
            });
        }
        Ok(values)
    };
    let b = read(Side::Baseline, baseline)?;
    let c = read(Side::Candidate, candidate)?;
    classify::shared_or_error(&b, &c)?;
    let cand = analyze_pipeline(candidate, rules, opts.interval, &opts.set).map_err(|error| {
        CompareError::Analyze {
            side: Side::Candidate,
            error,
        }
    })?;
    let width = Interval::Seconds(cand.report.interval_seconds.max(1));
    let base = analyze_pipeline(baseline, rules, width, &opts.set).map_err(|error| {
        CompareError::Analyze {
            side: Side::Baseline,
            error,
        }
    })?;
    let counters = classify::counters(&b, &c, rules, &base.report, &cand.report, opts);
    let analyses = classify::analyses(&base.report, &cand.report);
    let summary = |s: &side::SideValues| SideSummary {
        logs: s.logs.clone(),
        machines: s.machines.clone(),
        range: s.range,
        time_zone: s.time_zone.clone(),
        records: s.records,
    };
    Ok(Compared {
        comparison: Comparison {
            baseline: summary(&b),
            candidate: summary(&c),
            counters,
            analyses,
        },
        baseline: base,
        candidate: cand,
    })
}
