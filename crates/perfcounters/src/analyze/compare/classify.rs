//! The counters of the two sides matched, measured, classed and ranked; the analyses' alerts
//! counted and given a verdict.

use std::cmp::Ordering;

use crate::log::relog::CounterFilter;
use crate::names::NameTable;
use crate::path::CounterPath;

use super::super::plan::{excluded, regex_matcher};
use super::super::regex_path::RegexMatcher;
use super::super::report::{AnalysisReport, Report};
use super::super::rules::{DataSourceKind, Rules};
use super::super::script::Operator;
use super::side::{SideCounter, SideValues};
use super::values::{cliffs_delta, Values};
use super::{
    AlertCounts, AnalysisChange, BadDirection, ChangeBounds, ChangeClass, CompareError,
    CompareOptions, CounterChange, Side, SideStats, Verdict,
};

/// Counters named in [`CompareError::NothingShared`] per side.
const NAMED: usize = 5;

/// Fails with [`CompareError::NothingShared`] when no counter is on both sides.
pub(super) fn shared_or_error(b: &SideValues, c: &SideValues) -> Result<(), CompareError> {
    if b.index.keys().any(|k| c.index.contains_key(k)) {
        return Ok(());
    }
    let few = |s: &SideValues| -> Vec<String> {
        s.counters
            .iter()
            .take(NAMED)
            .map(|c| c.path.to_string())
            .collect()
    };
    let english = NameTable::builtin_english();
    let foreign = |s: &SideValues| {
        !s.counters.is_empty()
            && s.counters
                .iter()
                .all(|c| english.index_of(&c.path.object).is_none())
    };
    let localized = if foreign(b) && !foreign(c) {
        Some(Side::Baseline)
    } else if foreign(c) && !foreign(b) {
        Some(Side::Candidate)
    } else {
        None
    };
    Err(CompareError::NothingShared {
        baseline: few(b),
        candidate: few(c),
        localized,
    })
}

/// A counter-log data source of an enabled analysis, ready to match English paths: by its path,
/// or by its regular expression when it has one (as the analysis itself matches columns).
struct Source {
    analysis: usize,
    filter: CounterFilter,
    regex: Option<RegexMatcher>,
    excludes: Vec<String>,
    collection: String,
}

impl Source {
    fn selects(&self, path: &CounterPath) -> bool {
        (self.filter.matches(path) || self.regex.as_ref().is_some_and(|m| m.matches(path)))
            && !excluded(&self.excludes, path)
    }
}

/// The counter-log data sources of the enabled analyses (indexes as in a report's analyses).
fn sources(rules: &Rules) -> Vec<Source> {
    let mut out = Vec::new();
    for (i, a) in rules.enabled().enumerate() {
        for ds in &a.data_sources {
            if ds.kind != DataSourceKind::CounterLog {
                continue;
            }
            let Ok(path) = &ds.path else { continue };
            // An expression that cannot be used leaves the analysis not evaluated: no direction.
            let Ok(regex) = regex_matcher(ds) else {
                continue;
            };
            out.push(Source {
                analysis: i,
                filter: CounterFilter::new(vec![path.clone()]),
                regex,
                excludes: ds.excludes.clone(),
                collection: ds.collection_var.clone(),
            });
        }
    }
    out
}

/// The bad direction the thresholds of `analysis` give the counters of `collection`: `None`
/// without one, or with thresholds both ways. `Err(())` when they conflict.
fn direction(analysis: &AnalysisReport, collection: &str) -> Result<Option<BadDirection>, ()> {
    let mut dir = None;
    for call in analysis
        .thresholds
        .iter()
        .flat_map(|t| t.calls.iter())
        .filter(|c| c.collection.eq_ignore_ascii_case(collection))
    {
        let d = match call.operator {
            Operator::Gt | Operator::Ge => BadDirection::Up,
            Operator::Lt | Operator::Le => BadDirection::Down,
            Operator::Eq => continue,
        };
        match dir {
            None => dir = Some(d),
            Some(x) if x != d => return Err(()),
            Some(_) => {}
        }
    }
    Ok(dir)
}

/// The analyses whose data sources select `path` (names, each once), and the bad direction
/// their thresholds give (none when they disagree). The thresholds are the candidate's
/// evaluation of the code, else the baseline's.
fn applying(
    path: &CounterPath,
    sources: &[Source],
    base: &Report,
    cand: &Report,
) -> (Vec<String>, Option<BadDirection>) {
    let mut names: Vec<String> = Vec::new();
    let mut dir: Result<Option<BadDirection>, ()> = Ok(None);
    for s in sources.iter().filter(|s| s.selects(path)) {
        let report = [cand, base]
            .into_iter()
            .filter_map(|r| r.analyses.get(s.analysis))
            .find(|a| a.evaluated());
        let Some(a) = report.or_else(|| cand.analyses.get(s.analysis)) else {
            continue;
        };
        if !names.contains(&a.name) {
            names.push(a.name.clone());
        }
        let d = direction(a, &s.collection);
        dir = match (dir, d) {
            (Err(()), _) | (_, Err(())) => Err(()),
            (Ok(None), Ok(x)) | (Ok(x), Ok(None)) => Ok(x),
            (Ok(Some(x)), Ok(Some(y))) if x == y => Ok(Some(x)),
            _ => Err(()),
        };
    }
    (names, dir.ok().flatten())
}

/// `candidate / baseline`: 1 when both are 0, `None` when only the baseline is.
fn ratio(baseline: f64, candidate: f64) -> Option<f64> {
    if baseline == 0.0 {
        return (candidate == 0.0).then_some(1.0);
    }
    Some(candidate / baseline)
}

/// A side's statistics (without chart points), `None` without values.
fn stats(v: &Values) -> Option<SideStats> {
    Some(SideStats {
        count: v.n,
        min: v.min,
        avg: v.avg()?,
        p50: v.percentile(50.0)?,
        p95: v.percentile(95.0)?,
        max: v.max,
        exact: v.is_exact(),
        points: Vec::new(),
    })
}

/// The class of a counter on both sides.
fn class_of(
    bounds: &ChangeBounds,
    effect: Option<f64>,
    ratios: [Option<f64>; 2],
    bad: Option<BadDirection>,
) -> ChangeClass {
    let Some(effect) = effect else {
        return ChangeClass::Unchanged;
    };
    let moved = ratios
        .iter()
        .any(|r| r.is_none_or(|r| (r - 1.0).abs() >= bounds.ratio));
    if effect.abs() < bounds.effect || !moved {
        return ChangeClass::Unchanged;
    }
    let up = effect > 0.0;
    match bad {
        None => ChangeClass::Changed,
        Some(BadDirection::Up) if up => ChangeClass::Worse,
        Some(BadDirection::Down) if !up => ChangeClass::Worse,
        Some(_) => ChangeClass::Better,
    }
}

/// The rank of a class: worse, then better and changed together, new, gone, unchanged.
fn rank(c: ChangeClass) -> u8 {
    match c {
        ChangeClass::Worse => 0,
        ChangeClass::Better | ChangeClass::Changed => 1,
        ChangeClass::New => 2,
        ChangeClass::Gone => 3,
        ChangeClass::Unchanged => 4,
    }
}

/// Counter `i` of side `s`.
fn side_counter(s: &SideValues, i: Option<usize>) -> Option<&SideCounter> {
    i.and_then(|i| s.counters.get(i))
}

/// One counter compared, with the indexes of its side counters (for its chart points).
struct Row {
    change: CounterChange,
    at: (Option<usize>, Option<usize>),
}

/// Every counter of both sides compared, classed and ranked; the first `opts.charts` changes
/// (worse, better, changed, new, gone) carry their chart points.
pub(super) fn counters(
    b: &SideValues,
    c: &SideValues,
    rules: &Rules,
    base: &Report,
    cand: &Report,
    opts: &CompareOptions,
) -> Vec<CounterChange> {
    let sources = sources(rules);
    let mut rows: Vec<Row> = Vec::new();
    let only = c
        .counters
        .iter()
        .enumerate()
        .filter(|(_, x)| !b.index.contains_key(&x.path.key()))
        .map(|(i, x)| (None, Some(i), x));
    let both = b
        .counters
        .iter()
        .enumerate()
        .map(|(i, x)| (Some(i), c.index.get(&x.path.key()).copied(), x));
    for (bi, ci, x) in both.chain(only) {
        let (bs, cs) = (side_counter(b, bi), side_counter(c, ci));
        let (analyses, bad) = applying(&x.path, &sources, base, cand);
        let (bst, cst) = (
            bs.and_then(|s| stats(&s.values)),
            cs.and_then(|s| stats(&s.values)),
        );
        let delta = match (bs, cs) {
            (Some(bs), Some(cs)) => cliffs_delta(&bs.values, &cs.values),
            _ => None,
        };
        let (avg_ratio, p95_ratio) = match (&bst, &cst) {
            (Some(x), Some(y)) => (ratio(x.avg, y.avg), ratio(x.p95, y.p95)),
            _ => (None, None),
        };
        let class = match (&bst, &cst) {
            (None, Some(_)) => ChangeClass::New,
            (Some(_), None) => ChangeClass::Gone,
            _ => class_of(
                &opts.bounds,
                delta.map(|d| d.0),
                [avg_ratio, p95_ratio],
                bad,
            ),
        };
        rows.push(Row {
            change: CounterChange {
                counter: x.path.to_string(),
                baseline: bst,
                candidate: cst,
                avg_ratio,
                p95_ratio,
                effect: delta.map(|d| d.0),
                effect_error: delta.map(|d| d.1),
                class,
                bad,
                analyses,
            },
            at: (bi, ci),
        });
    }
    rows.sort_by(|x, y| {
        let (x, y) = (&x.change, &y.change);
        let size = |c: &CounterChange| c.effect.map_or(0.0, f64::abs);
        rank(x.class)
            .cmp(&rank(y.class))
            .then(size(y).partial_cmp(&size(x)).unwrap_or(Ordering::Equal))
            .then_with(|| x.counter.cmp(&y.counter))
    });
    for row in rows
        .iter_mut()
        .filter(|r| r.change.class != ChangeClass::Unchanged)
        .take(opts.charts)
    {
        let points = |s: &SideValues, i: Option<usize>| {
            i.and_then(|i| s.counters.get(i))
                .map(|x| x.chart.points())
                .unwrap_or_default()
        };
        if let Some(st) = &mut row.change.baseline {
            st.points = points(b, row.at.0);
        }
        if let Some(st) = &mut row.change.candidate {
            st.points = points(c, row.at.1);
        }
    }
    rows.into_iter().map(|r| r.change).collect()
}

/// The alerts of analysis `i` of `r` by condition (`Critical`, ignoring case; any other counts as
/// a warning).
fn alert_counts(r: &Report, i: usize) -> AlertCounts {
    let mut out = AlertCounts {
        evaluated: r.analyses.get(i).is_some_and(|a| a.evaluated()),
        ..AlertCounts::default()
    };
    for a in r.alerts.iter().filter(|a| a.analysis == i) {
        if a.condition.eq_ignore_ascii_case("critical") {
            out.critical += 1;
        } else {
            out.warning += 1;
        }
    }
    out
}

/// The verdict of an analysis from its alerts on each side.
fn verdict(b: &AlertCounts, c: &AlertCounts) -> Verdict {
    match (b.total(), c.total()) {
        (0, 0) => Verdict::Same,
        (0, _) => Verdict::New,
        (_, 0) => Verdict::Resolved,
        _ => match (c.critical, c.warning).cmp(&(b.critical, b.warning)) {
            Ordering::Greater => Verdict::Worse,
            Ordering::Less => Verdict::Better,
            Ordering::Equal => Verdict::Same,
        },
    }
}

/// Every analysis of the reports (the same rules, so the same analyses in the same order)
/// compared.
pub(super) fn analyses(base: &Report, cand: &Report) -> Vec<AnalysisChange> {
    cand.analyses
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (bc, cc) = (alert_counts(base, i), alert_counts(cand, i));
            AnalysisChange {
                name: a.name.clone(),
                category: a.category.clone(),
                baseline: bc,
                candidate: cc,
                verdict: verdict(&bc, &cc),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(critical: usize, warning: usize) -> AlertCounts {
        AlertCounts {
            evaluated: true,
            critical,
            warning,
        }
    }

    #[test]
    fn verdicts() {
        assert_eq!(verdict(&counts(0, 0), &counts(0, 0)), Verdict::Same);
        assert_eq!(verdict(&counts(0, 0), &counts(0, 1)), Verdict::New);
        assert_eq!(verdict(&counts(2, 0), &counts(0, 0)), Verdict::Resolved);
        assert_eq!(verdict(&counts(1, 5), &counts(1, 5)), Verdict::Same);
        assert_eq!(verdict(&counts(1, 5), &counts(1, 6)), Verdict::Worse);
        // A critical alert outweighs any number of warnings.
        assert_eq!(verdict(&counts(0, 50), &counts(1, 0)), Verdict::Worse);
        assert_eq!(verdict(&counts(1, 0), &counts(0, 50)), Verdict::Better);
    }

    #[test]
    fn classes_need_both_bounds() {
        let b = ChangeBounds::default();
        let up = Some(BadDirection::Up);
        let down = Some(BadDirection::Down);
        let r = |x: f64| Some(x);
        assert_eq!(
            class_of(&b, Some(0.5), [r(2.0), r(2.0)], up),
            ChangeClass::Worse
        );
        assert_eq!(
            class_of(&b, Some(0.5), [r(2.0), r(2.0)], down),
            ChangeClass::Better
        );
        assert_eq!(
            class_of(&b, Some(-0.5), [r(0.5), r(0.5)], down),
            ChangeClass::Worse
        );
        assert_eq!(
            class_of(&b, Some(0.5), [r(2.0), r(2.0)], None),
            ChangeClass::Changed
        );
        // A large effect with a move under 10 %: unchanged; and the other way round.
        assert_eq!(
            class_of(&b, Some(0.9), [r(1.05), r(0.95)], up),
            ChangeClass::Unchanged
        );
        assert_eq!(
            class_of(&b, Some(0.2), [r(3.0), r(3.0)], up),
            ChangeClass::Unchanged
        );
        // From 0 to anything counts as a move; the effect's bound is inclusive.
        assert_eq!(
            class_of(&b, Some(0.33), [None, r(1.0)], up),
            ChangeClass::Worse
        );
        assert_eq!(
            class_of(&b, Some(-0.33), [r(0.8), r(1.0)], up),
            ChangeClass::Better
        );
        assert_eq!(class_of(&b, None, [None, None], up), ChangeClass::Unchanged);
        assert_eq!(ratio(0.0, 0.0), Some(1.0));
        assert_eq!(ratio(0.0, 2.0), None);
        assert_eq!(ratio(4.0, 2.0), Some(0.5));
    }
}
