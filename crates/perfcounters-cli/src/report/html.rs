//! The report as one self-contained HTML page.
//!
//! The page is written with `maud`: its markup is checked when the binary is compiled, and every
//! value spliced into it is escaped unless it is wrapped in `PreEscaped`, which only the sanitized
//! descriptions, the chart data (JSON with `<` escaped) and the embedded scripts and styles are.
//! (Askama, the other usual choice, keeps templates in separate files with their own syntax; maud
//! is Rust, so the page's parts are ordinary functions, and it writes no whitespace of its own.)

use maud::{html, Markup, PreEscaped, DOCTYPE};
use perfcounters::analyze::{AnalysisReport, Comparison, Report, Rules};
use perfcounters::log::{InputLog, TimeZone};

use super::json::{ChartJson, LineJson, SeriesJson};
use super::{chart_seconds, fmt_num, iso, sanitize};
use crate::assets::{UPLOT_CSS, UPLOT_JS};

const REPORT_JS: &str = include_str!("report.js");
const REPORT_CSS: &str = include_str!("report.css");

/// The report as one self-contained HTML page, `notes` at its top; with a comparison, "What
/// changed" comes next.
pub fn page(
    r: &Report,
    logs: &[InputLog],
    rules: &Rules,
    comparison: Option<&Comparison>,
    notes: &[String],
) -> String {
    let mut charts: Vec<ChartJson> = Vec::new();
    let body = report_body(r, logs, rules, "", 0, &mut charts);
    let changes = comparison.map(|c| {
        let section = super::compare::section(c, r, charts.len());
        charts.extend(super::compare::charts(c));
        section
    });
    let content = html! {
        h1 { "Performance analysis" } "\n"
        @if !notes.is_empty() {
            section id="notes" {
                @for n in notes { p class="note" { (n) } }
            }
            "\n"
        }
        @if let Some(changes) = &changes { (changes) "\n" }
        (body)
    };
    let names: Vec<&str> = logs.iter().map(|l| l.source.as_str()).collect();
    shell(&names.join(", "), content, &charts, "")
}

/// A whole page: the head (title, styles), `content`, the footer and the scripts that draw
/// `charts`; `css` is more style (none when empty).
pub(super) fn shell(title: &str, content: Markup, charts: &[ChartJson], css: &str) -> String {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "perfcounters analyze — " (title) }
                style { (PreEscaped(UPLOT_CSS)) }
                style { (PreEscaped(REPORT_CSS)) }
                @if !css.is_empty() { style { (PreEscaped(css)) } }
            }
            body {
                "\n"
                (content)
                footer {
                    "Thresholds: PAL (Performance Analysis of Logs, MIT licence); their code was read, not run."
                }
                "\n"
                script type="application/json" id="charts" { (PreEscaped(script_json(&charts))) } "\n"
                script { (PreEscaped(UPLOT_JS)) } "\n"
                script { (PreEscaped(REPORT_JS)) } "\n"
            }
        }
        "\n"
    }
    .into_string()
}

/// What a report of one machine shows: summary, alerts, the analyses by category and those not
/// evaluated. Anchors start with `prefix` (empty for a single report, `m3-` for a fleet's
/// machine), so that several reports fit on one page; the charts are numbered from `first_chart`
/// on after those already in `charts`, and added to it.
pub(super) fn report_body<'a>(
    r: &'a Report,
    logs: &[InputLog],
    rules: &Rules,
    prefix: &str,
    first_chart: usize,
    charts: &mut Vec<ChartJson<'a>>,
) -> Markup {
    let sections = categories(r, first_chart + charts.len());
    charts.extend(
        sections
            .iter()
            .flat_map(|(_, list)| list)
            .filter(|a| a.chart.is_some())
            .map(|a| chart(r, a.analysis)),
    );
    html! {
        (summary(r, logs, rules, prefix)) "\n"
        (alerts(r, prefix)) "\n"
        @for (category, list) in &sections {
            section class="category" {
                h2 { (category) }
                @for a in list { (analysis(r, a, prefix)) }
            }
            "\n"
        }
        (not_evaluated(r, prefix)) "\n"
    }
}

/// JSON inside a `<script>` element: `<` escaped, so no `</script>` or `<!--` can appear.
pub(super) fn script_json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v)
        .unwrap_or_default()
        .replace('<', "\\u003c")
}

/// The summary: logs (a text log with the encoding it was read in), machines, time range, rules,
/// questions, alerts by condition, analyses.
fn summary(r: &Report, logs: &[InputLog], rules: &Rules, prefix: &str) -> Markup {
    let logs: Vec<String> = logs.iter().map(super::log_label).collect();
    let zone = r.time_zone.as_ref();
    let mut by_condition: Vec<(&str, usize)> = Vec::new();
    for a in &r.alerts {
        match by_condition.iter_mut().find(|(c, _)| *c == a.condition) {
            Some(x) => x.1 += 1,
            None => by_condition.push((&a.condition, 1)),
        }
    }
    let evaluated = r.analyses.iter().filter(|a| a.evaluated()).count();
    let questions: Vec<String> = r
        .questions
        .iter()
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    html! {
        section id={ (prefix) "summary" } {
            h2 { "Summary" }
            table class="kv" {
                tr { th { "Logs" } td { (logs.join(", ")) } }
                tr { th { "Machines" } td { (r.machines.join(", ")) } }
                tr {
                    th { "Time range" }
                    td {
                        @match r.range {
                            Some((a, b)) => {
                                (iso(zone, a)) " – " (iso(zone, b))
                                @if let Some(z) = zone { " (local time, " (z.label()) ")" }
                            }
                            None => "no records",
                        }
                    }
                }
                tr { th { "Records" } td { (r.records) } }
                tr { th { "Slice" } td { (r.interval_seconds) " s" } }
                tr { th { "Rules" } td { (rules.name) " (" (rules.files.join(", ")) ")" } }
                tr { th { "Questions" } td { (questions.join("; ")) } }
                tr {
                    th { "Alerts" }
                    td {
                        @if by_condition.is_empty() {
                            "none"
                        }
                        @for (i, (c, n)) in by_condition.iter().enumerate() {
                            @if i > 0 { ", " }
                            (condition(c)) " " (n)
                        }
                    }
                }
                tr {
                    th { "Analyses" }
                    td {
                        (evaluated) " evaluated, " (r.analyses.len() - evaluated)
                        " not evaluated (see the end of the report)"
                    }
                }
            }
        }
    }
}

/// A condition (`Warning`, `Critical`) as a coloured label.
pub(super) fn condition(c: &str) -> Markup {
    html! { span class={ "cond " (c.to_lowercase()) } { (c) } }
}

/// The alerts in time order.
fn alerts(r: &Report, prefix: &str) -> Markup {
    let zone = r.time_zone.as_ref();
    html! {
        section id={ (prefix) "alerts" } {
            h2 { "Alerts in time order" }
            @if let (true, Some(few)) = (r.alerts.is_empty(), r.few_evaluated()) {
                p { "No alert, but " (few.message("--names")) "." }
            } @else if r.alerts.is_empty() {
                p { "No threshold was broken." }
            } @else {
                div class="scroll" {
                    table class="alerts" {
                        thead {
                            tr {
                                th { "Slice start" } th { "Slice end" } th { "Condition" }
                                th { "Analysis" } th { "Counter" } th { "Threshold" }
                                th { "Min" } th { "Avg" } th { "Max" }
                            }
                        }
                        tbody {
                            @for a in &r.alerts {
                                @let analysis = r.analyses.get(a.analysis).map_or("", |x| x.name.as_str());
                                @let counter = r.counters.get(a.counter).map_or("", |c| c.path.as_str());
                                @let limit = match (a.operator, a.trend) {
                                    (None, _) => "by the threshold's code".to_owned(),
                                    (Some(o), Some(t)) => format!(
                                        "trend {} {} per hour ({})",
                                        o.name(),
                                        fmt_num(a.threshold),
                                        fmt_num(Some(t))
                                    ),
                                    (Some(o), None) => format!("{} {}", o.name(), fmt_num(a.threshold)),
                                };
                                tr {
                                    td { (iso(zone, a.start)) }
                                    td { (iso(zone, a.end)) }
                                    td { (condition(&a.condition)) }
                                    td { a href={ "#" (prefix) "a" (a.analysis) } { (analysis) } }
                                    td { (counter) }
                                    td title=(a.threshold_name) { (limit) }
                                    td { (fmt_num(Some(a.min))) }
                                    td { (fmt_num(Some(a.avg))) }
                                    td { (fmt_num(Some(a.max))) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// An evaluated analysis in its place on the page.
struct Placed<'a> {
    /// Its index in the report (its anchor, `#a{index}`).
    index: usize,
    analysis: &'a AnalysisReport,
    /// The number of its chart, for an analysis with counters.
    chart: Option<usize>,
}

/// The evaluated analyses by category, categories in the order they first appear, and the chart
/// numbers in page order (from `first_chart`).
fn categories(r: &Report, first_chart: usize) -> Vec<(&str, Vec<Placed<'_>>)> {
    let mut out: Vec<(&str, Vec<Placed>)> = Vec::new();
    for (index, a) in r.analyses.iter().enumerate().filter(|(_, a)| a.evaluated()) {
        let placed = Placed {
            index,
            analysis: a,
            chart: None,
        };
        match out.iter_mut().find(|(c, _)| *c == a.category) {
            Some((_, list)) => list.push(placed),
            None => out.push((&a.category, vec![placed])),
        }
    }
    let mut charts = first_chart;
    for p in out.iter_mut().flat_map(|(_, list)| list) {
        if !p.analysis.counters.is_empty() {
            p.chart = Some(charts);
            charts += 1;
        }
    }
    out
}

/// The data of an analysis's chart: its counters' points and its thresholds as lines.
fn chart<'a>(r: &'a Report, a: &AnalysisReport) -> ChartJson<'a> {
    let zone = r.time_zone.as_ref();
    ChartJson {
        series: a
            .counters
            .iter()
            .filter_map(|&c| r.counters.get(c))
            .map(|c| SeriesJson {
                name: &c.path,
                t: c.points.iter().map(|p| chart_seconds(zone, p.0)).collect(),
                v: c.points.iter().map(|p| p.1).collect(),
            })
            .collect(),
        thresholds: a
            .thresholds
            .iter()
            .flat_map(|t| {
                t.calls
                    .iter()
                    .filter(|c| !c.trend_only)
                    .map(move |c| (t, c))
            })
            .map(|(t, c)| LineJson {
                condition: t.condition.to_lowercase(),
                name: format!(
                    "{} ({} {})",
                    t.condition,
                    c.operator.name(),
                    fmt_num(Some(c.threshold))
                ),
                value: c.threshold,
            })
            .collect(),
        starts: None,
        zone: zone.map(TimeZone::label),
    }
}

/// The formulas of the generated series of `a`, each once, with the series it makes.
fn formulas<'a>(r: &'a Report, a: &AnalysisReport) -> Vec<(&'a str, Vec<&'a str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in a.counters.iter().filter_map(|&c| r.counters.get(c)) {
        let Some(f) = c.formula.as_deref() else {
            continue;
        };
        match out.iter_mut().find(|(g, _)| *g == f) {
            Some((_, paths)) => paths.push(&c.path),
            None => out.push((f, vec![&c.path])),
        }
    }
    out
}

/// An analysis: description, thresholds, chart and its counters' statistics.
fn analysis(r: &Report, p: &Placed, prefix: &str) -> Markup {
    let a = p.analysis;
    html! {
        article class="analysis" id={ (prefix) "a" (p.index) } {
            h3 {
                (a.name)
                @if a.alerts > 0 { " " span class="count" { (a.alerts) " alerts" } }
            }
            div class="description" { (PreEscaped(sanitize(&a.description))) }
            ul class="thresholds" {
                @for t in a.thresholds.iter().filter(|t| t.per_slice) {
                    li { (condition(&t.condition)) " " (t.name) ": by its code, in each slice" }
                }
                @for t in &a.thresholds {
                    @for c in &t.calls {
                        li {
                            (condition(&t.condition)) " " (t.name) ": "
                            @if c.trend_only { "trend per hour " }
                            (c.operator.name()) " " (fmt_num(Some(c.threshold)))
                        }
                    }
                }
            }
            @if let Some(chart) = p.chart {
                div class="chart" data-chart=(chart) {}
                table class="stats" {
                    thead {
                        tr {
                            th { "Counter" } th { "Values" } th { "Min" } th { "Avg" }
                            th { "Max" } th { "P90" } th { "P95" } th { "Trend /h" }
                        }
                    }
                    tbody {
                        @for c in a.counters.iter().filter_map(|&c| r.counters.get(c)) {
                            tr {
                                td { (c.path) } td { (c.count) }
                                td { (fmt_num(c.min)) } td { (fmt_num(c.avg)) } td { (fmt_num(c.max)) }
                                td { (fmt_num(c.p90)) } td { (fmt_num(c.p95)) } td { (fmt_num(c.trend)) }
                            }
                        }
                    }
                }
                @for (f, paths) in formulas(r, a) {
                    details class="formula" {
                        summary { "Formula of " (paths.join(", ")) " (generated: PAL's code, evaluated once per slice)" }
                        pre { code { (f.trim()) } }
                    }
                }
            }
        }
    }
}

/// The analyses that were not evaluated, and why.
fn not_evaluated(r: &Report, prefix: &str) -> Markup {
    let skipped: Vec<_> = r.analyses.iter().filter(|a| !a.evaluated()).collect();
    html! {
        section id={ (prefix) "not-evaluated" } {
            h2 { "Not evaluated" }
            @if skipped.is_empty() {
                p { "Every analysis was evaluated." }
            } @else {
                table {
                    thead { tr { th { "Analysis" } th { "Category" } th { "Why" } } }
                    tbody {
                        @for a in skipped {
                            tr {
                                td { (a.name) }
                                td { (a.category) }
                                td { (a.reason.as_deref().unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_element() {
        let v = serde_json::json!({"name": "</script><script>alert(1)</script>"});
        let s = script_json(&v);
        assert!(!s.contains("</script"));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}
