//! The fleet report (`analyze` of logs of several machines) as HTML: a fleet summary (machines ×
//! analyses, alert counts by priority, worst machine first, each cell a link into that machine's
//! section), then one section per machine holding what a single report holds.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use maud::{html, Markup};
use perfcounters::analyze::{AnalyzeError, MachineAnalysis, Report, Rules};
use perfcounters::ErrorChain;

use super::html::{condition, report_body, shell};
use super::json::ChartJson;

const FLEET_CSS: &str = include_str!("fleet.css");

/// An error of a machine as the report and standard error tell it: the error and its causes.
pub fn error_text(e: &AnalyzeError) -> String {
    ErrorChain(e).to_string()
}

/// A machine's alerts counted by priority (highest first), with the condition of each priority.
fn by_priority(r: &Report, analysis: Option<usize>) -> Vec<(i32, &str, usize)> {
    let mut counts: BTreeMap<Reverse<i32>, (&str, usize)> = BTreeMap::new();
    for a in r
        .alerts
        .iter()
        .filter(|a| analysis.is_none_or(|i| a.analysis == i))
    {
        counts
            .entry(Reverse(a.priority))
            .or_insert((&a.condition, 0))
            .1 += 1;
    }
    counts
        .into_iter()
        .map(|(Reverse(p), (c, n))| (p, c, n))
        .collect()
}

/// The machines in the summary's order: those that failed first, then the worst first (more
/// alerts of the highest priority, then of the next …), then by name.
pub fn worst_first(fleet: &[MachineAnalysis]) -> Vec<&MachineAnalysis> {
    let mut out: Vec<&MachineAnalysis> = fleet.iter().collect();
    let key = |m: &MachineAnalysis| -> (bool, Vec<(i32, usize)>) {
        match &m.result {
            Err(_) => (true, Vec::new()),
            Ok(a) => (
                false,
                by_priority(&a.report, None)
                    .into_iter()
                    .map(|(p, _, n)| (p, n))
                    .collect(),
            ),
        }
    };
    out.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.machine.cmp(&b.machine)));
    out
}

/// The line `analyze` prints on standard error for each machine of a fleet: its alert counts, or
/// (a warning) why it was not analysed.
pub fn machine_line(m: &MachineAnalysis) -> String {
    match &m.result {
        Err(e) => format!(
            "perfcounters: warning: {}: not analysed: {}",
            m.machine,
            error_text(e)
        ),
        Ok(a) => {
            let counts = by_priority(&a.report, None);
            if counts.is_empty() {
                return format!("machine {}: no alerts", m.machine);
            }
            let text: Vec<String> = counts
                .iter()
                .map(|(p, c, n)| format!("{n} {c} (priority {p})"))
                .collect();
            let n = a.report.alerts.len();
            format!(
                "machine {}: {n} alert{}: {}",
                m.machine,
                if n == 1 { "" } else { "s" },
                text.join(", ")
            )
        }
    }
}

/// The fleet report as one self-contained HTML page; `fleet` in the summary's order.
pub fn page(fleet: &[&MachineAnalysis], rules: &Rules) -> String {
    let mut charts: Vec<ChartJson> = Vec::new();
    let sections: Vec<Markup> = fleet
        .iter()
        .enumerate()
        .map(|(i, m)| machine_section(m, i, rules, &mut charts))
        .collect();
    let names: Vec<&str> = fleet.iter().map(|m| m.machine.as_str()).collect();
    let content = html! {
        h1 { "Performance analysis of " (fleet.len()) " machines" } "\n"
        (summary(fleet)) "\n"
        @for s in &sections { (s) "\n" }
    };
    shell(&names.join(", "), content, &charts, FLEET_CSS)
}

/// The analyses that raised an alert on some machine, in the rules' order: (index, name).
fn alerted_analyses<'a>(fleet: &[&'a MachineAnalysis]) -> Vec<(usize, &'a str)> {
    let mut out: Vec<(usize, &str)> = Vec::new();
    for m in fleet {
        let Ok(a) = &m.result else { continue };
        for (i, x) in a.report.analyses.iter().enumerate() {
            if x.alerts > 0 && !out.iter().any(|(j, _)| *j == i) {
                out.push((i, &x.name));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Alert counts as condition labels, highest priority first.
fn counts_cell(counts: &[(i32, &str, usize)]) -> Markup {
    html! {
        @for (i, (p, c, n)) in counts.iter().enumerate() {
            @if i > 0 { " " }
            span title={ "priority " (p) } { (condition(c)) " " (n) }
        }
    }
}

/// The fleet summary: machines × analyses.
fn summary(fleet: &[&MachineAnalysis]) -> Markup {
    let columns = alerted_analyses(fleet);
    html! {
        section id="fleet" {
            h2 { "Fleet summary" }
            p {
                "Alerts by priority for each machine (rows, worst first) and each analysis that raised one (columns). "
                "Each cell links to that machine's section."
            }
            div class="scroll wide" {
                table class="fleet" {
                    thead {
                        tr {
                            th { "Machine" } th { "Logs" } th { "All analyses" }
                            @for (_, name) in &columns { th class="analysis-name" { span { (name) } } }
                        }
                    }
                    tbody {
                        @for (i, m) in fleet.iter().enumerate() {
                            tr {
                                th { a href={ "#m" (i) } { (m.machine) } }
                                td { (m.logs.len()) }
                                @match &m.result {
                                    Err(e) => {
                                        td class="failed" colspan=(columns.len() + 1) {
                                            a href={ "#m" (i) } { "not analysed: " (error_text(e)) }
                                        }
                                    }
                                    Ok(a) => {
                                        td {
                                            @let all = by_priority(&a.report, None);
                                            @if all.is_empty() { "none" }
                                            @else { a href={ "#m" (i) "-alerts" } { (counts_cell(&all)) } }
                                        }
                                        @for (k, _) in &columns {
                                            @let counts = by_priority(&a.report, Some(*k));
                                            td {
                                                @if !counts.is_empty() {
                                                    a href={ "#m" (i) "-a" (k) } { (counts_cell(&counts)) }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One machine's section: what a single report holds, or why there is none.
fn machine_section<'a>(
    m: &'a MachineAnalysis,
    i: usize,
    rules: &Rules,
    charts: &mut Vec<ChartJson<'a>>,
) -> Markup {
    let prefix = format!("m{i}-");
    html! {
        section class="machine" id={ "m" (i) } {
            h2 class="machine" { "Machine " (m.machine) }
            @match &m.result {
                Err(e) => {
                    p class="failed" { "Not analysed: " (error_text(e)) }
                    p { "Logs: " (m.logs.join(", ")) }
                }
                Ok(a) => { (report_body(&a.report, &a.logs, rules, &prefix, charts)) }
            }
        }
    }
}
