//! The rules bound to a log's columns: question values, data sources matched to columns (with
//! `EXCLUDE INSTANCE`), generated network-utilization series, thresholds' code evaluated into
//! calls, and the columns each call reads.

use std::collections::HashMap;

use crate::log::model::LogHeader;
use crate::log::relog::CounterFilter;
use crate::names::NameTable;
use crate::path::{eq_ignore_case, CounterPath};

use super::error::AnalyzeError;
use super::report::{AnalysisReport, ThresholdReport};
use super::rules::{Analysis, DataSource, DataSourceKind, Question, Rules, Threshold};
use super::script::{Operator, Script, ScriptError, ScriptValue, StaticThreshold};
use super::stats::ColumnState;

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

/// A threshold call bound to columns.
pub(super) struct Bound {
    /// Index into the analyses.
    pub(super) analysis: usize,
    /// Index into the analysis's thresholds.
    pub(super) threshold: usize,
    /// Index into the threshold's calls.
    pub(super) call: usize,
    /// The counter indexes the call reads.
    pub(super) columns: Vec<usize>,
}

/// The rules bound to a log's columns: what the pass evaluates.
pub(super) struct Plan {
    /// Every enabled analysis, its thresholds' calls evaluated (or why not).
    pub(super) analyses: Vec<AnalysisReport>,
    /// The calls bound to counters.
    pub(super) bound: Vec<Bound>,
    /// Counter index → log column (`usize::MAX`: generated).
    pub(super) log_columns: Vec<usize>,
    /// Generated series: (counter index, its two inputs' counter indexes, its path).
    pub(super) generated: Vec<(usize, (usize, usize), CounterPath)>,
}

impl Plan {
    /// Resolves each enabled analysis of `rules` over the columns of `header` that `user_keep`
    /// keeps: columns per data source, threshold code evaluated, counters numbered in the order
    /// they are first read.
    pub(super) fn bind(
        rules: &Rules,
        header: &LogHeader,
        user_keep: &[bool],
        tables: &[NameTable],
        questions: &[(String, ScriptValue)],
    ) -> Plan {
        let mut analyses = Vec::new();
        let mut bound: Vec<Bound> = Vec::new();
        let mut column_of: HashMap<usize, usize> = HashMap::new(); // log column -> counter index
        let mut log_columns: Vec<usize> = Vec::new();
        let mut generated: Vec<(usize, (usize, usize), CounterPath)> = Vec::new();
        let mut generated_of: HashMap<String, usize> = HashMap::new();
        for a in rules.enabled() {
            let index = analyses.len();
            let (mut report, calls) = resolve(a, header, user_keep, tables, questions);
            for (ti, ci, targets) in calls.into_iter().flatten() {
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
            analyses.push(report);
        }
        // Columns that data sources matched but no threshold reads still get statistics and charts.
        for (ai, a) in rules.enabled().enumerate() {
            if analyses.get(ai).is_some_and(|r| r.evaluated()) {
                // In the data sources' order (not the map's, which differs from run to run).
                let columns = data_source_columns(a, header, user_keep, tables);
                for ds in &a.data_sources {
                    let key = ds.collection_var.to_ascii_lowercase();
                    for &c in columns.get(&key).into_iter().flatten().flatten() {
                        let m = counter_index(&mut column_of, &mut log_columns, c);
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
        Plan {
            analyses,
            bound,
            log_columns,
            generated,
        }
    }

    /// Which of the log's `columns` columns the pass reads.
    pub(super) fn keep(&self, columns: usize) -> Vec<bool> {
        let mut keep = vec![false; columns];
        for &c in &self.log_columns {
            if let Some(k) = keep.get_mut(c) {
                *k = true;
            }
        }
        keep
    }

    /// The state of each counter before the first record, the `eq` thresholds of the calls that
    /// read it noted.
    pub(super) fn states(&self) -> Vec<ColumnState> {
        let mut states: Vec<ColumnState> = (0..self.log_columns.len())
            .map(|i| ColumnState::new(self.generated.iter().find(|g| g.0 == i).map(|g| g.1)))
            .collect();
        for b in &self.bound {
            let Some((_, call)) = call_of(&self.analyses, b) else {
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
        states
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
#[inline]
pub(super) fn call_of<'a>(
    analyses: &'a [AnalysisReport],
    b: &Bound,
) -> Option<(&'a ThresholdReport, &'a StaticThreshold)> {
    let t = analyses.get(b.analysis)?.thresholds.get(b.threshold)?;
    Some((t, t.calls.get(b.call)?))
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

/// Whether a data source's `EXCLUDE INSTANCE` names (`excludes`) leave out `path`'s instance (by
/// name, or `parent/name`, ignoring case).
pub(super) fn excluded(excludes: &[String], path: &CounterPath) -> bool {
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

/// The (bytes column, bandwidth column, generated path) of each instance of a generated data
/// source `ds` in PAL's network-utilization form ([`utilization_form`]), `path` its path; `None`
/// when its code is not in that form or its inputs are not data sources of the analysis.
fn utilization_pairs(
    ds: &DataSource,
    code: &str,
    path: &Result<CounterPath, String>,
    columns: &HashMap<String, Vec<Option<usize>>>,
    header: &LogHeader,
) -> Option<Vec<(usize, usize, CounterPath)>> {
    let (bytes, bandwidth) = utilization_form(code)?;
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
}

/// Why threshold `t` of `a` is not evaluated when its code fails with `e`: the file and line, the
/// error and the line's code.
fn code_failure(a: &Analysis, t: &Threshold, e: &ScriptError) -> String {
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
    format!(
        "threshold \"{}\": {at}: {e}{}",
        t.name,
        line.map(|l| format!(" (`{l}`)")).unwrap_or_default()
    )
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
                let pairs = utilization_pairs(ds, code, path, &columns, header);
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
            Err(e) => return fail(report, code_failure(a, t, &e)),
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
