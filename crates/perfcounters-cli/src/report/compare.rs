//! The comparison with a baseline in the report: the HTML section "What changed" (the top
//! changes, each with a chart of both sides on one relative time axis, then the analyses that got
//! worse or new) and the lines the command prints on standard error. Its JSON is
//! `compare_json.rs`.

use maud::{html, Markup};
use perfcounters::analyze::{
    AnalysisChange, ChangeClass, Comparison, CounterChange, Report, SideStats, Verdict,
};
use perfcounters::log::LogTime;

use super::json::{ChartJson, SeriesJson};
use super::{chart_seconds, fmt_num, iso};

/// The top changes shown in the HTML report and on standard error.
pub const TOP: usize = 10;
/// The top changes printed on standard error.
const TOP_PRINTED: usize = 5;

/// The top changes: counters on both sides that changed, or on one side only.
fn top(c: &Comparison) -> impl Iterator<Item = &CounterChange> {
    c.counters
        .iter()
        .filter(|x| x.class != ChangeClass::Unchanged)
        .take(TOP)
}

/// How many counters of each class, as `1 worse, 2 changed` (classes without any left out).
fn class_counts(c: &Comparison) -> String {
    let classes = [
        ChangeClass::Worse,
        ChangeClass::Better,
        ChangeClass::Changed,
        ChangeClass::New,
        ChangeClass::Gone,
        ChangeClass::Unchanged,
    ];
    let parts: Vec<String> = classes
        .iter()
        .map(|&k| (k, c.counters.iter().filter(|x| x.class == k).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {}", k.name()))
        .collect();
    parts.join(", ")
}

/// The analyses that got worse or are new.
fn worse_analyses(c: &Comparison) -> impl Iterator<Item = (usize, &AnalysisChange)> {
    c.analyses
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a.verdict, Verdict::New | Verdict::Worse))
}

/// A ratio as `×2.00` (`from 0` when the baseline's is 0).
fn ratio_text(r: Option<f64>) -> String {
    r.map_or_else(|| "from 0".to_owned(), |r| format!("×{r:.2}"))
}

/// One change as a line: class, counter, averages, ratio and effect.
fn change_line(x: &CounterChange) -> String {
    let avg = |s: &Option<SideStats>| fmt_num(s.as_ref().map(|s| s.avg));
    let mut s = format!("{} {}: avg {}", x.class.name(), x.counter, avg(&x.baseline));
    s.push_str(&format!(" → {}", avg(&x.candidate)));
    if x.class.is_change() {
        s.push_str(&format!(" ({})", ratio_text(x.avg_ratio)));
        if let Some(e) = x.effect {
            s.push_str(&format!(", effect {e:+.2}"));
        }
    }
    s
}

/// What the command prints on standard error about the comparison: the counts, then the top
/// changes and the analyses that got worse or new.
pub fn summary_lines(c: &Comparison) -> Vec<String> {
    let mut out = vec![format!(
        "compared with the baseline ({}, {} records): {}",
        c.baseline.logs.join(", "),
        c.baseline.records,
        class_counts(c)
    )];
    for x in top(c).take(TOP_PRINTED) {
        out.push(format!("  {}", change_line(x)));
    }
    for (_, a) in worse_analyses(c) {
        out.push(format!(
            "  analysis {}: {} (alerts critical/warning {}/{} → {}/{})",
            a.name,
            a.verdict.name(),
            a.baseline.critical,
            a.baseline.warning,
            a.candidate.critical,
            a.candidate.warning
        ));
    }
    out
}

/// The chart of a change: the baseline and the candidate on one axis of seconds since each
/// side's start; the start of each (the axis's local time) lets the tooltip show absolute times.
fn chart<'a>(c: &'a Comparison, x: &'a CounterChange) -> ChartJson<'a> {
    let mut series = Vec::new();
    let mut starts = Vec::new();
    for (name, side, stats) in [
        ("baseline", &c.baseline, &x.baseline),
        ("candidate", &c.candidate, &x.candidate),
    ] {
        let (Some(s), Some((start, _))) = (stats, side.range) else {
            continue;
        };
        let zone = side.time_zone.as_ref();
        let origin = chart_seconds(zone, start);
        let at = |t: LogTime| chart_seconds(zone, t) - origin;
        series.push(SeriesJson {
            name,
            t: s.points.iter().map(|p| at(p.0)).collect(),
            v: s.points.iter().map(|p| p.1).collect(),
        });
        starts.push(origin);
    }
    ChartJson {
        series,
        thresholds: Vec::new(),
        starts: Some(starts),
        zone: None,
    }
}

/// The charts of the section, in the order [`section`] numbers them from `first`.
pub fn charts<'a>(c: &'a Comparison) -> Vec<ChartJson<'a>> {
    top(c).map(|x| chart(c, x)).collect()
}

/// A side's average and p95 as a table cell's text.
fn stats_text(s: &Option<SideStats>) -> String {
    match s {
        Some(s) => format!("{} / {}", fmt_num(Some(s.avg)), fmt_num(Some(s.p95))),
        None => "–".into(),
    }
}

/// The section "What changed", its charts numbered from `first`; `r` is the candidate's report
/// (its analyses' anchors).
pub fn section(c: &Comparison, r: &Report, first: usize) -> Markup {
    let zone = c.baseline.time_zone.as_ref();
    let anchor = |name: &str| r.analyses.iter().position(|a| a.name == name);
    html! {
        section id="changes" {
            h2 { "What changed" }
            p {
                "Compared with the baseline " (c.baseline.logs.join(", "))
                @if let Some((a, b)) = c.baseline.range { " (" (iso(zone, a)) " – " (iso(zone, b)) ")" }
                ", " (c.baseline.records) " records: " (class_counts(c)) "."
            }
            @if top(c).next().is_none() {
                p { "No counter changed beyond the bounds." }
            }
            @for (i, x) in top(c).enumerate() {
                article class="change" {
                    h3 {
                        span class={ "class " (x.class.name()) } { (x.class.name()) } " " (x.counter)
                    }
                    table class="stats" {
                        thead {
                            tr {
                                th { "" } th { "Values" } th { "Min" } th { "Avg" } th { "P50" }
                                th { "P95" } th { "Max" }
                            }
                        }
                        tbody {
                            @for (name, s) in [("Baseline", &x.baseline), ("Candidate", &x.candidate)] {
                                tr {
                                    td { (name) }
                                    @if let Some(s) = s {
                                        td { (s.count) } td { (fmt_num(Some(s.min))) } td { (fmt_num(Some(s.avg))) }
                                        td { (fmt_num(Some(s.p50))) } td { (fmt_num(Some(s.p95))) }
                                        td { (fmt_num(Some(s.max))) }
                                    } @else {
                                        td colspan="6" { "not in this log" }
                                    }
                                }
                            }
                        }
                    }
                    @if x.class.is_change() {
                        p class="effect" {
                            "Average " (ratio_text(x.avg_ratio)) ", p95 " (ratio_text(x.p95_ratio))
                            @if let Some(e) = x.effect { ", effect (Cliff's delta) " (format!("{e:+.3}")) }
                            @if !x.analyses.is_empty() { "; analyses: " (x.analyses.join(", ")) }
                            " (avg / p95: " (stats_text(&x.baseline)) " → " (stats_text(&x.candidate)) ")"
                        }
                    }
                    div class="chart" data-chart=(first + i) {}
                }
            }
            h3 { "Analyses that got worse or are new" }
            @if worse_analyses(c).next().is_none() {
                p { "None." }
            } @else {
                table {
                    thead {
                        tr {
                            th { "Analysis" } th { "Verdict" } th { "Baseline critical / warning" }
                            th { "Candidate critical / warning" }
                        }
                    }
                    tbody {
                        @for (_, a) in worse_analyses(c) {
                            tr {
                                td {
                                    @match anchor(&a.name) {
                                        Some(k) => a href={ "#a" (k) } { (a.name) },
                                        None => (a.name),
                                    }
                                }
                                td { (a.verdict.name()) }
                                td { (a.baseline.critical) " / " (a.baseline.warning) }
                                td { (a.candidate.critical) " / " (a.candidate.warning) }
                            }
                        }
                    }
                }
            }
        }
    }
}
