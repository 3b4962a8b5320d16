//! Many machines in one analysis ([`analyze_fleet`]): a pipeline's logs grouped by machine, each
//! machine analysed on its own, the machines in parallel.
//!
//! Semantics (docs/analyze.md repeats them for users):
//!
//! * **Grouping.** A log belongs to the machine its counter paths name (`\\MACHINE\…`, compared
//!   ignoring case; the group takes the spelling of its first log). A log whose columns name no
//!   machine, or several, is a group of its own named after the log (its file); so is a log that
//!   is damaged (it cannot be opened for what it holds). An input that names no log (a file that
//!   does not exist, a pattern that matches nothing) is an error of the whole, as in a single
//!   analysis. Groups keep the order of their first input. A dataset directory of several
//!   machines (`relog -o DIR/`) is split by its `machine=` partitions, each a log
//!   ([`crate::log::machine_inputs`]).
//! * **Each machine** is what [`analyze_pipeline`] makes of its logs alone: merged as relog merges
//!   them, its own first record `t0`, its own automatic slice width, its own question answers.
//! * **Question answers** ([`machine_set`]): `NAME=VALUE` answers for every machine,
//!   `MACHINE:NAME=VALUE` for that machine only (and wins over an answer for all); a `MACHINE:`
//!   that names no machine of the inputs is an [`AnalyzeError::Question`].
//! * **A failing machine** (a damaged log) is that machine's [`MachineAnalysis::result`]; the
//!   others are analysed.
//! * **Parallel.** The machines are analysed by [`FleetOptions::workers`] threads of the project's
//!   ordered worker pool (the machines handed to them in turn, each holding at most three), so that
//!   at most that many machines' logs are open at once; the result is in the order of the groups
//!   whatever the threads did. [`analyze_fleet_each`] hands each machine over as soon as it and
//!   those before it are done, so that a caller that writes it out keeps no more than the
//!   workers hold.

use crate::log::pipeline::Pipeline;
use crate::log::pool;
use crate::log::{LogError, LogErrorKind};
use crate::path::eq_ignore_case;

use super::eval::{analyze_pipeline, question_values, AnalyzeError, AnalyzedLogs, Interval};
use super::rules::Rules;

/// What [`analyze_fleet`] evaluates and how.
#[derive(Clone, Debug, Default)]
pub struct FleetOptions {
    /// The slice width of every machine ([`Interval::Auto`]: each machine's own).
    pub interval: Interval,
    /// Question answers: `NAME` for every machine, `MACHINE:NAME` for one ([`machine_set`]).
    pub set: Vec<(String, String)>,
    /// Machines analysed at once; 0 for the number of cores.
    pub workers: usize,
}

/// One group of a fleet's logs ([`fleet_groups`]).
#[derive(Debug)]
pub struct MachineLogs {
    /// The machine its logs name, or the log's name when it names none or several.
    pub machine: String,
    /// Whether [`machine`](Self::machine) is a log's name rather than a machine's.
    pub named_after_log: bool,
    /// The logs (each file of a pattern on its own), in the order of the inputs.
    pub logs: Vec<String>,
    /// Why its input could not be opened, when it could not.
    pub error: Option<LogError>,
}

/// One machine of a fleet, analysed.
#[derive(Debug)]
pub struct MachineAnalysis {
    /// The machine (or the log's name, see [`MachineLogs::machine`]).
    pub machine: String,
    /// Whether the name is a log's name rather than a machine's.
    pub named_after_log: bool,
    /// Its logs as grouped.
    pub logs: Vec<String>,
    /// Its analysis, or why it failed.
    pub result: Result<AnalyzedLogs, AnalyzeError>,
}

/// The machine a `MACHINE:NAME` setting is for and the question's name; `None` for a setting of
/// every machine (`NAME`).
pub fn set_target(name: &str) -> (Option<&str>, &str) {
    match name.split_once(':') {
        Some((machine, question)) if !machine.trim().is_empty() => {
            (Some(machine.trim()), question.trim())
        }
        _ => (None, name),
    }
}

/// The question answers of `machine`: those for every machine (`NAME=VALUE`), then those for it
/// (`MACHINE:NAME=VALUE`, its name compared ignoring case), so that its own win.
pub fn machine_set(set: &[(String, String)], machine: &str) -> Vec<(String, String)> {
    let all = set
        .iter()
        .filter(|(n, _)| set_target(n).0.is_none())
        .cloned();
    let own = set.iter().filter_map(|(n, v)| match set_target(n) {
        (Some(m), q) if eq_ignore_case(m, machine) => Some((q.to_owned(), v.clone())),
        _ => None,
    });
    all.chain(own).collect()
}

/// Checks the question answers of a fleet of `machines` before anything is read: every
/// `MACHINE:` names one of them, and every answer is one the rules take.
///
/// # Errors
/// [`AnalyzeError::Question`] naming the setting.
pub fn check_set(
    rules: &Rules,
    set: &[(String, String)],
    machines: &[&str],
) -> Result<(), AnalyzeError> {
    for (name, _) in set {
        if let (Some(m), _) = set_target(name) {
            if !machines.iter().any(|x| eq_ignore_case(x, m)) {
                return Err(AnalyzeError::Question {
                    setting: name.clone(),
                    problem: format!(
                        "no machine {m} among the inputs (they are: {})",
                        machines.join(", ")
                    ),
                });
            }
        }
    }
    let plain: Vec<(String, String)> = set
        .iter()
        .map(|(n, v)| (set_target(n).1.to_owned(), v.clone()))
        .collect();
    question_values(&rules.questions, &plain).map(|_| ())
}

/// The machine every column of a log names, when they name exactly one (ignoring case).
fn machine_of(header: &crate::log::model::LogHeader) -> Option<String> {
    let mut found: Option<&str> = None;
    for c in &header.counters {
        let m = c.path.machine.as_deref()?;
        match found {
            None => found = Some(m),
            Some(f) if eq_ignore_case(f, m) => {}
            Some(_) => return None,
        }
    }
    found.map(str::to_owned)
}

/// Whether `e` says that an input names no log (rather than that a log is damaged).
fn names_no_log(e: &LogError) -> bool {
    match &e.kind {
        LogErrorKind::Io(io) => io.kind() == std::io::ErrorKind::NotFound,
        LogErrorKind::Usage(_) => true,
        _ => false,
    }
}

/// What one input holds: each log's name and machine (`None`: not one machine), or why it could
/// not be opened.
type Opened = Result<Vec<(String, Option<String>)>, LogError>;

/// The logs of `pipeline` grouped by machine: a log belongs to the machine its counter paths name
/// (ignoring case; a dataset directory of several machines is one log per `machine=`
/// partition); a log naming no machine or several, or a damaged one, is a group of its own
/// named after it; groups keep the order of their first input (`docs/analyze.md` says more). The
/// inputs are opened for their columns on as many threads as cores, each closed once its machine
/// is known.
///
/// # Errors
/// An input names no log: a file that does not exist, a pattern that matches nothing.
pub fn fleet_groups(pipeline: &Pipeline) -> Result<Vec<MachineLogs>, AnalyzeError> {
    let inputs: Vec<&str> = pipeline.inputs().iter().map(String::as_str).collect();
    let opened: Vec<Opened> = in_order(inputs, crate::log::cores(), |input| {
        let mut logs = Vec::new();
        for input in crate::log::machine_inputs(input)? {
            for r in pipeline.open_input(&input)? {
                logs.push((r.header().source.clone(), machine_of(r.header())));
            }
        }
        Ok(logs)
    });
    let mut groups: Vec<MachineLogs> = Vec::new();
    for (input, opened) in pipeline.inputs().iter().zip(opened) {
        let logs = match opened {
            Ok(logs) => logs,
            Err(e) if names_no_log(&e) => return Err(AnalyzeError::Log(e)),
            Err(e) => {
                groups.push(MachineLogs {
                    machine: input.clone(),
                    named_after_log: true,
                    logs: vec![input.clone()],
                    error: Some(e),
                });
                continue;
            }
        };
        for (source, machine) in logs {
            let same = |g: &&mut MachineLogs| {
                machine
                    .as_deref()
                    .is_some_and(|m| !g.named_after_log && eq_ignore_case(&g.machine, m))
            };
            match groups.iter_mut().find(same) {
                Some(g) => g.logs.push(source),
                None => groups.push(MachineLogs {
                    named_after_log: machine.is_none(),
                    machine: machine.unwrap_or_else(|| source.clone()),
                    logs: vec![source],
                    error: None,
                }),
            }
        }
    }
    Ok(groups)
}

/// `f` of each of `items` on `workers` threads of the project's ordered pool
/// ([`crate::log::pool`]), the items handed to the workers in turn; the results in the order of
/// the items.
fn in_order<T: Send, R: Send>(items: Vec<T>, workers: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::new();
    let done: Result<(), std::convert::Infallible> = each_in_order(items, workers, f, |r| {
        out.push(r);
        Ok(())
    });
    match done {
        Ok(()) => out,
        Err(never) => match never {},
    }
}

/// `f` of each of `items` on `workers` threads of the project's ordered pool, each result handed
/// to `each` in the order of the items as soon as it and those before it are done. The pool
/// holds at most three items per worker, so at most that many results wait for `each`. An error
/// of `each` stops the workers at their next result and is returned.
fn each_in_order<T: Send, R: Send, E>(
    items: Vec<T>,
    workers: usize,
    f: impl Fn(T) -> R + Sync,
    mut each: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let workers = workers.clamp(1, items.len().max(1));
    let (mut feeder, mut collector, ends) = pool::ordered::<T, R>(workers);
    let f = &f;
    std::thread::scope(|s| {
        for end in ends {
            s.spawn(move || end.run(f));
        }
        s.spawn(move || {
            for item in items {
                if !feeder.send(item) {
                    break;
                }
            }
        });
        // A worker that panicked ends the scope with its panic.
        while let Ok(Some(r)) = collector.next() {
            if let Err(e) = each(r) {
                collector.close();
                return Err(e);
            }
        }
        Ok(())
    })
}

/// Analyses each of `groups` (from [`fleet_groups`] of `pipeline`) on its own with `pipeline`'s
/// counters, names and time range, `opts.workers` machines at a time (see
/// `docs/analyze.md`): each machine is [`analyze_pipeline`] of its logs alone, with its answers
/// ([`machine_set`]); the machines in the order of `groups`.
///
/// Every machine's analysis is kept until all are done; [`analyze_fleet_each`] hands each over
/// as it completes instead, so that the memory is that of the workers, not of the machines.
///
/// # Errors
/// A question answer is wrong ([`check_set`]); a machine that fails is in its own result.
pub fn analyze_fleet(
    pipeline: &Pipeline,
    groups: Vec<MachineLogs>,
    rules: &Rules,
    opts: &FleetOptions,
) -> Result<Vec<MachineAnalysis>, AnalyzeError> {
    let mut out = Vec::with_capacity(groups.len());
    analyze_fleet_each(pipeline, groups, rules, opts, |m| {
        out.push(m);
        Ok::<(), AnalyzeError>(())
    })?;
    Ok(out)
}

/// [`analyze_fleet`], each machine handed to `each` as soon as it and those before it are
/// analysed, in the order of `groups`: at most about three machines per worker are held at
/// once, whatever the number of machines. An error of `each` stops the analysis (the workers
/// stop at their next machine) and is returned.
///
/// # Errors
/// A question answer is wrong ([`check_set`], converted into `E`), or `each` fails; a machine
/// that fails is in its own result.
pub fn analyze_fleet_each<E: From<AnalyzeError>>(
    pipeline: &Pipeline,
    groups: Vec<MachineLogs>,
    rules: &Rules,
    opts: &FleetOptions,
    each: impl FnMut(MachineAnalysis) -> Result<(), E>,
) -> Result<(), E> {
    let machines: Vec<&str> = groups.iter().map(|g| g.machine.as_str()).collect();
    check_set(rules, &opts.set, &machines)?;
    let workers = match opts.workers {
        0 => crate::log::cores(),
        n => n,
    };
    each_in_order(
        groups,
        workers,
        |g| analyze_group(pipeline, g, rules, opts),
        each,
    )
}

/// One machine's analysis.
fn analyze_group(
    pipeline: &Pipeline,
    group: MachineLogs,
    rules: &Rules,
    opts: &FleetOptions,
) -> MachineAnalysis {
    let result = match group.error {
        Some(e) => Err(AnalyzeError::Log(e)),
        None => {
            let set = machine_set(&opts.set, &group.machine);
            analyze_pipeline(
                &pipeline.with_inputs(group.logs.iter().cloned()),
                rules,
                opts.interval,
                &set,
            )
        }
    };
    MachineAnalysis {
        machine: group.machine,
        named_after_log: group.named_after_log,
        logs: group.logs,
        result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn machine_answers_follow_those_for_all() {
        let s = set(&[
            ("web1:PhysicalMemory", "64"),
            ("PhysicalMemory", "16"),
            ("WEB2:OS", "x"),
        ]);
        assert_eq!(
            machine_set(&s, "WEB1"),
            set(&[("PhysicalMemory", "16"), ("PhysicalMemory", "64")])
        );
        assert_eq!(machine_set(&s, "WEB3"), set(&[("PhysicalMemory", "16")]));
        assert_eq!(set_target("OS"), (None, "OS"));
        assert_eq!(set_target(":OS"), (None, ":OS"));
    }

    #[test]
    fn an_unknown_machine_is_named() {
        let rules = Rules::builtin();
        let e = check_set(
            &rules,
            &set(&[("WEB9:PhysicalMemory", "4")]),
            &["WEB1", "WEB2"],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "question value WEB9:PhysicalMemory: no machine WEB9 among the inputs (they are: WEB1, WEB2)"
        );
        check_set(&rules, &set(&[("web1:PhysicalMemory", "4")]), &["WEB1"]).unwrap();
        let e = check_set(&rules, &set(&[("WEB1:Nope", "4")]), &["WEB1"]).unwrap_err();
        assert!(e.to_string().starts_with("question value Nope:"), "{e}");
    }
}
