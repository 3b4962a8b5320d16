//! The rules bound to a log's columns: question values, data sources matched to columns (with
//! `EXCLUDE INSTANCE`), generated data sources (their code, their inputs and the series they
//! make), thresholds' code evaluated into calls, and the columns each call reads.

use std::collections::HashMap;

use crate::log::model::LogHeader;
use crate::log::relog::CounterFilter;
use crate::names::NameTable;
use crate::path::{eq_ignore_case, CounterPath};

use super::error::AnalyzeError;
use super::regex_path::RegexMatcher;
use super::report::{AnalysisReport, Series, ThresholdReport};
use super::rules::{Analysis, DataSource, DataSourceKind, Question, Rules, Threshold};
use super::script::{CounterInstance, Operator, Script, ScriptError, ScriptValue, StaticThreshold};
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
    /// The generated data sources, in the order of the analyses.
    pub(super) generated: Vec<Generated>,
    /// The series they make.
    pub(super) series: Vec<Series>,
}

/// Code evaluated once per time slice over the slice's values of its inputs: a generated data
/// source's (the series it makes) or a threshold's (the alerts it raises).
pub(super) struct Generated {
    /// Index into the analyses.
    pub(super) analysis: usize,
    /// The rules file of the analysis.
    pub(super) file: String,
    /// A generated data source's `COLLECTIONVARNAME`, which the code fills; for a threshold, the
    /// threshold's index in the analysis.
    pub(super) var: String,
    /// `Some(threshold index)` for a threshold's code.
    pub(super) threshold: Option<usize>,
    /// The code.
    pub(super) script: Script,
    /// The questions' values.
    pub(super) questions: HashMap<String, ScriptValue>,
    /// Each counter-log data source of the analysis: its variable and its instances (counter
    /// index, the instance's names, no values).
    pub(super) inputs: Vec<(String, Vec<(usize, CounterInstance)>)>,
    /// The series the code makes (found by evaluating it once before the log is read): its key
    /// as the code writes it, its counter index. Empty for a threshold's code.
    pub(super) series: Vec<(String, usize)>,
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
        let mut generated: Vec<Generated> = Vec::new();
        let mut series: Vec<Series> = Vec::new();
        for a in rules.enabled() {
            let index = analyses.len();
            let (mut report, calls, made, per_slice) =
                resolve(a, header, user_keep, tables, questions);
            // The generated data sources' inputs and series get their counter indexes.
            let mut made_series: HashMap<String, Vec<usize>> = HashMap::new();
            let mut made_inputs: Inputs = Vec::new();
            for m in made {
                let inputs = numbered(m.inputs, &mut column_of, &mut log_columns);
                let mut own = Vec::new();
                for (key, path) in m.series {
                    log_columns.push(usize::MAX);
                    let counter = log_columns.len() - 1;
                    series.push(Series {
                        counter,
                        path,
                        formula: m.code.clone(),
                    });
                    own.push((key, counter));
                }
                // Charted and tabled with the analysis, whether a threshold reads them or not.
                report.counters.extend(own.iter().map(|o| o.1));
                made_series.insert(
                    m.var.to_ascii_lowercase(),
                    own.iter().map(|o| o.1).collect(),
                );
                made_inputs.push((
                    m.var.clone(),
                    own.iter()
                        .zip(&series[series.len() - own.len()..])
                        .map(|((_, c), s)| (*c, instance_of(&s.path)))
                        .collect::<Vec<_>>(),
                ));
                generated.push(Generated {
                    analysis: index,
                    file: a.file.clone(),
                    var: m.var,
                    threshold: None,
                    script: m.script,
                    questions: questions.iter().cloned().collect(),
                    inputs,
                    series: own,
                });
            }
            // Thresholds evaluated per slice read the counter-log data sources and the generated
            // series.
            for (ti, script, cols) in per_slice {
                let mut inputs = numbered(cols, &mut column_of, &mut log_columns);
                inputs.extend(made_inputs.iter().cloned());
                generated.push(Generated {
                    analysis: index,
                    file: a.file.clone(),
                    var: ti.to_string(),
                    threshold: Some(ti),
                    script,
                    questions: questions.iter().cloned().collect(),
                    inputs,
                    series: Vec::new(),
                });
            }
            for (ti, ci, targets) in calls.into_iter().flatten() {
                let mut mapped: Vec<usize> = Vec::new();
                for t in targets {
                    match t {
                        Target::Column(c) => {
                            mapped.push(counter_index(&mut column_of, &mut log_columns, c))
                        }
                        Target::Generated(var) => mapped.extend(
                            made_series
                                .get(&var.to_ascii_lowercase())
                                .into_iter()
                                .flatten()
                                .copied(),
                        ),
                    }
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
            series,
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
            .map(|_| ColumnState::new())
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

/// `inputs` with each log column replaced by its counter index (added when new).
fn numbered(
    inputs: Inputs,
    column_of: &mut HashMap<usize, usize>,
    log_columns: &mut Vec<usize>,
) -> Inputs {
    inputs
        .into_iter()
        .map(|(var, cols)| {
            let instances = cols
                .into_iter()
                .map(|(c, inst)| (counter_index(column_of, log_columns, c), inst))
                .collect();
            (var, instances)
        })
        .collect()
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
/// entries never occur (kept as `Option` for the caller's flattening). A data source matched by
/// regular expression takes the columns its expression matches and those its `EXPRESSIONPATH`
/// matches (PAL too falls back on the path's names); one whose expression is refused takes none
/// (see [`regex_problem`]).
fn data_source_columns(
    a: &Analysis,
    header: &LogHeader,
    user_keep: &[bool],
    tables: &[NameTable],
) -> HashMap<String, Vec<Option<usize>>> {
    let mut out = HashMap::new();
    for ds in &a.data_sources {
        if ds.kind != DataSourceKind::CounterLog {
            continue;
        }
        let Ok(path) = &ds.path else { continue };
        let Ok(regex) = regex_matcher(ds) else {
            continue;
        };
        let filter = CounterFilter::new(vec![path.clone()]).with_names(tables.to_vec());
        // Without name tables, a path whose object has no wildcard selects only columns of that
        // object: a quick test first (many data sources over a log of many columns).
        let object = (tables.is_empty() && !path.object.contains(['*', '?']))
            .then_some(path.object.as_str());
        let cols: Vec<Option<usize>> = header
            .counters
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                user_keep.get(*i).copied().unwrap_or(false)
                    && ((object.is_none_or(|o| eq_ignore_case(o, &c.path.object))
                        && filter.matches(&c.path))
                        || regex.as_ref().is_some_and(|m| m.matches(&c.path)))
                    && !excluded(&ds.excludes, &c.path)
            })
            .map(|(i, _)| Some(i))
            .collect();
        out.insert(ds.collection_var.to_ascii_lowercase(), cols);
    }
    out
}

/// Why a data source's regular expression cannot be used (malformed, or beyond
/// [`MAX_REGEX_SIZE`](super::regex_path::MAX_REGEX_SIZE)), when it cannot.
fn regex_problem(ds: &DataSource) -> Option<String> {
    regex_matcher(ds).err()
}

/// The matcher of a data source's regular expression: `None` without one, the reason when it
/// cannot be used. The one place analysis, its column filter and the comparison compile it.
pub(super) fn regex_matcher(ds: &DataSource) -> Result<Option<RegexMatcher>, String> {
    ds.regex.as_ref().map(RegexMatcher::new).transpose()
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

/// What a threshold call reads: log columns, or the series of a generated data source (its
/// variable).
enum Target {
    Column(usize),
    Generated(String),
}

type BoundCalls = Vec<(usize, usize, Vec<Target>)>;

/// The thresholds whose code runs in each slice: threshold index, code, counter-log inputs.
type PerSlice = Vec<(usize, Script, Inputs)>;

/// A generated data source of an analysis as [`resolve`] found it: its variable, code, inputs
/// (log columns) and the series its code makes.
struct Made {
    var: String,
    code: String,
    script: Script,
    inputs: Inputs,
    series: Vec<(String, CounterPath)>,
}

/// Counter `c` of `header` as code evaluated per slice reads it, without values.
fn column_instance(header: &LogHeader, c: usize) -> CounterInstance {
    header
        .counters
        .get(c)
        .map_or_else(CounterInstance::default, |c| instance_of(&c.path))
}

/// A counter path as code evaluated per slice reads it (PAL's counter instance), without values.
fn instance_of(p: &CounterPath) -> CounterInstance {
    let mut instance = String::new();
    if let Some(parent) = &p.parent {
        instance.push_str(parent);
        instance.push('/');
    }
    if let Some(i) = &p.instance {
        instance.push_str(i);
    }
    if let Some(n) = p.index {
        instance.push_str(&format!("#{n}"));
    }
    CounterInstance {
        path: p.to_string(),
        computer: p.machine.clone().unwrap_or_default(),
        object: p.object.clone(),
        counter: p.counter.clone(),
        instance,
        ..CounterInstance::default()
    }
}

/// Binds generated data source `ds` (its `code`) of `a`: its inputs are the analysis's
/// counter-log data sources (`columns`), and its series are those its code makes when evaluated
/// once with every input value 1 and every trend 0 (the keys of the hash table it fills, each a
/// counter path). Why not, when the code fails or a key is not a counter path.
fn bind_generated(
    a: &Analysis,
    ds: &DataSource,
    code: &str,
    columns: &HashMap<String, Vec<Option<usize>>>,
    header: &LogHeader,
    questions: &HashMap<String, ScriptValue>,
) -> Result<Made, String> {
    let fail = |e: &ScriptError| {
        format!(
            "{}: the generated data source ${}: {e}",
            a.file, ds.collection_var
        )
    };
    let script = Script::parse(code).map_err(|e| fail(&e))?;
    let inputs = counter_log_inputs(a, columns, header);
    let probe = probe_of(&inputs);
    let made = script
        .generate(questions, &probe, &ds.collection_var)
        .map_err(|e| fail(&e))?;
    let mut series = Vec::new();
    for (key, _) in made {
        if excluded_key(&ds.excludes, &key) {
            continue;
        }
        // `Object()` (code that names an instance an object without instances lacks) is the
        // object.
        let path = CounterPath::parse(&key)
            .or_else(|e| CounterPath::parse(&key.replace("()\\", "\\")).map_err(|_| e))
            .map_err(|e| {
                format!(
                "{}: the generated data source ${} makes '{key}', which is not a counter path: {e}",
                a.file, ds.collection_var
            )
            })?;
        series.push((key, path));
    }
    Ok(Made {
        var: ds.collection_var.clone(),
        code: code.to_owned(),
        script,
        inputs,
        series,
    })
}

/// The inputs of code evaluated per slice: each counter-log data source of `a`, its variable and
/// its instances (log column, names).
type Inputs = Vec<(String, Vec<(usize, CounterInstance)>)>;

/// The counter-log data sources of `a` as [`Inputs`].
fn counter_log_inputs(
    a: &Analysis,
    columns: &HashMap<String, Vec<Option<usize>>>,
    header: &LogHeader,
) -> Inputs {
    a.data_sources
        .iter()
        .filter(|d| d.kind == DataSourceKind::CounterLog)
        .map(|d| {
            let cols = columns
                .get(&d.collection_var.to_ascii_lowercase())
                .into_iter()
                .flatten()
                .flatten()
                .map(|&c| (c, column_instance(header, c)))
                .collect();
            (d.collection_var.clone(), cols)
        })
        .collect()
}

/// `inputs` with every value 1 and every trend 0: what code is tried on before the log is read.
fn probe_of(inputs: &Inputs) -> Vec<(String, Vec<CounterInstance>)> {
    inputs
        .iter()
        .map(|(var, cols)| {
            let instances = cols
                .iter()
                .map(|(_, i)| CounterInstance {
                    min: Some(1.0),
                    avg: Some(1.0),
                    max: Some(1.0),
                    trend: Some(0.0),
                    ..i.clone()
                })
                .collect();
            (var.clone(), instances)
        })
        .collect()
}

/// Whether the generated series `key` is left out by an `EXCLUDE INSTANCE` of its data source.
fn excluded_key(excludes: &[String], key: &str) -> bool {
    CounterPath::parse(key).is_ok_and(|p| excluded(excludes, &p))
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

/// Matches an analysis's data sources, binds its generated data sources and evaluates its
/// thresholds' code. Returns the report entry, each call when evaluated (threshold index, call
/// index, what it reads) and the generated data sources.
fn resolve(
    a: &Analysis,
    header: &LogHeader,
    user_keep: &[bool],
    tables: &[NameTable],
    questions: &[(String, ScriptValue)],
) -> (AnalysisReport, Option<BoundCalls>, Vec<Made>, PerSlice) {
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
        (r, None, Vec::new(), Vec::new())
    };
    if let Some(p) = &a.problem {
        return fail(report, p.clone());
    }
    let columns = data_source_columns(a, header, user_keep, tables);
    let question_vars: HashMap<String, ScriptValue> = questions.iter().cloned().collect();
    let mut vars = question_vars.clone();
    for ds in &a.data_sources {
        match (&ds.kind, &ds.path) {
            (DataSourceKind::Generated { .. }, _) => continue,
            (_, Err(e)) => {
                return fail(
                    report,
                    format!(
                        "{}: the data source path {} is not a counter path: {e}",
                        a.file, ds.expression_path
                    ),
                )
            }
            _ => {
                if let Some(problem) = regex_problem(ds) {
                    return fail(
                        report,
                        format!(
                            "{}: the data source {}: {problem}",
                            a.file, ds.expression_path
                        ),
                    );
                }
            }
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
    let mut made = Vec::new();
    for ds in &a.data_sources {
        let DataSourceKind::Generated { code } = &ds.kind else {
            continue;
        };
        match bind_generated(a, ds, code, &columns, header, &question_vars) {
            Ok(m) => {
                vars.insert(
                    ds.collection_var.clone(),
                    ScriptValue::Collection {
                        name: ds.collection_var.clone(),
                        count: m.series.len(),
                    },
                );
                made.push(m);
            }
            Err(why) => return fail(report, why),
        }
    }
    let mut bound = Vec::new();
    let mut per_slice: PerSlice = Vec::new();
    // The probe of per-slice code: the counter-log data sources and the generated series.
    let mut inputs = counter_log_inputs(a, &columns, header);
    for m in &made {
        let series = m.series.iter().map(|(_, p)| (0, instance_of(p))).collect();
        inputs.push((m.var.clone(), series));
    }
    let probe = probe_of(&inputs);
    for (ti, t) in a.thresholds.iter().enumerate() {
        let script = match Script::parse(&t.code) {
            Ok(s) => s,
            Err(e) => return fail(report, code_failure(a, t, &e)),
        };
        let (calls, slice) = match script.evaluate(&vars) {
            Ok(c) => (c, false),
            // Code that reads the counter instances runs in each slice, as PAL runs it over its
            // `Quantized*` arrays; it is tried once first.
            Err(e) if e.needs_slice() => match script.create_alerts(&vars, &probe) {
                Ok(_) => (Vec::new(), true),
                Err(e) => return fail(report, code_failure(a, t, &e)),
            },
            Err(e) => return fail(report, code_failure(a, t, &e)),
        };
        if slice {
            let cols = counter_log_inputs(a, &columns, header);
            per_slice.push((ti, script, cols));
        }
        for (ci, call) in calls.iter().enumerate() {
            let key = call.collection.to_ascii_lowercase();
            let targets: Vec<Target> = if made.iter().any(|m| m.var.eq_ignore_ascii_case(&key)) {
                vec![Target::Generated(key)]
            } else {
                columns
                    .get(&key)
                    .map(|v| v.iter().flatten().map(|&c| Target::Column(c)).collect())
                    .unwrap_or_default()
            };
            bound.push((ti, ci, targets));
        }
        report.thresholds.push(ThresholdReport {
            name: t.name.clone(),
            condition: t.condition.clone(),
            priority: t.priority,
            calls,
            per_slice: slice,
        });
    }
    (report, Some(bound), made, per_slice)
}
