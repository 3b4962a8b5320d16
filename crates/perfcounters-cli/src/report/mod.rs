//! The report of `analyze`: its JSON form and one self-contained HTML file (inline styles, the
//! vendored uPlot chart library and the data; nothing fetched from the network).
//!
//! Text from a rules file is untrusted: descriptions (HTML) go through `ammonia`'s allow-list
//! sanitizer, every other string is escaped, and the chart data is JSON with `<` escaped so that
//! nothing in it can close the `<script>` element that carries it.

use std::fmt::Write as _;

use perfcounters::analyze::{Report, Rules};
use perfcounters::log::{LogTime, TimeZone};
use perfcounters::snapshot::{FILETIME_UNIX_EPOCH, FREQ_100NS};
use serde_json::{json, Value};

const UPLOT_JS: &str = include_str!("../serve/assets/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../serve/assets/uPlot.min.css");
const REPORT_JS: &str = include_str!("report.js");
const REPORT_CSS: &str = include_str!("report.css");

/// A time (a UTC instant) as the local time of the log's zone `zone`, ISO 8601 with milliseconds
/// (`2016-11-26T13:46:30.874`), the wall clock relog's CSV shows. The one place where a report turns
/// a log time into text.
pub fn iso(zone: Option<&TimeZone>, t: LogTime) -> String {
    let t = zone.map_or(t, |z| z.to_local(t));
    match t.to_system_time() {
        Some(s) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}",
            s.year, s.month, s.day, s.hour, s.minute, s.second, s.milliseconds
        ),
        None => String::new(),
    }
}

/// Seconds since 1970 of the log's local time (of the UTC instant `t`) read as if it were UTC: the
/// charts' x axis, drawn in UTC so that it shows the log's local time.
fn chart_seconds(zone: Option<&TimeZone>, t: LogTime) -> f64 {
    let t = zone.map_or(t, |z| z.to_local(t));
    t.0.saturating_sub(FILETIME_UNIX_EPOCH) as f64 / FREQ_100NS as f64
}

fn num(v: Option<f64>) -> Value {
    v.filter(|x| x.is_finite())
        .map_or(Value::Null, |x| json!(x))
}

/// The report as JSON (the shape docs/analyze.md documents).
pub fn json(r: &Report, logs: &[String], rules: &Rules) -> Value {
    let counter = |i: usize| {
        r.counters
            .get(i)
            .map(|c| c.path.clone())
            .unwrap_or_default()
    };
    let analyses: Vec<Value> = r
        .analyses
        .iter()
        .map(|a| {
            let mut o = json!({
                "name": a.name,
                "category": a.category,
                "evaluated": a.evaluated(),
                "counters": a.counters.iter().map(|&c| counter(c)).collect::<Vec<_>>(),
                "alerts": a.alerts,
                "thresholds": a.thresholds.iter().map(|t| json!({
                    "name": t.name,
                    "condition": t.condition,
                    "priority": t.priority,
                    "checks": t.calls.iter().map(|c| json!({
                        "collection": c.collection,
                        "operator": c.operator.name(),
                        "threshold": c.threshold,
                        "trend": c.trend_only,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            });
            if let Some(reason) = &a.reason {
                o["reason"] = json!(reason);
            }
            o
        })
        .collect();
    let alerts: Vec<Value> = r
        .alerts
        .iter()
        .map(|a| {
            let mut o = json!({
                "analysis": r.analyses.get(a.analysis).map(|x| x.name.as_str()).unwrap_or_default(),
                "condition": a.condition,
                "priority": a.priority,
                "threshold_name": a.threshold_name,
                "operator": a.operator.name(),
                "threshold": a.threshold,
                "counter": counter(a.counter),
                "start": iso(r.time_zone.as_ref(), a.start),
                "end": iso(r.time_zone.as_ref(), a.end),
                "min": a.min,
                "avg": a.avg,
                "max": a.max,
            });
            if let Some(t) = a.trend {
                o["trend"] = json!(t);
            }
            o
        })
        .collect();
    let statistics: Vec<Value> = r
        .counters
        .iter()
        .map(|c| {
            json!({
                "counter": c.path,
                "log_counter": c.log_path,
                "count": c.count,
                "min": num(c.min),
                "avg": num(c.avg),
                "max": num(c.max),
                "p90": num(c.p90),
                "p95": num(c.p95),
                "trend": num(c.trend),
            })
        })
        .collect();
    json!({
        "logs": logs,
        "rules": rules.files,
        "machines": r.machines,
        "start": r.range.map(|x| iso(r.time_zone.as_ref(), x.0)),
        "end": r.range.map(|x| iso(r.time_zone.as_ref(), x.1)),
        "records": r.records,
        "interval_seconds": r.interval_seconds,
        "questions": r.questions.iter().map(|(n, v)| (n.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "analyses": analyses,
        "alerts": alerts,
        "statistics": statistics,
    })
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A rules file's HTML description, reduced to harmless markup (no script, no event handler, no
/// style, links only to http(s) and mail, opened without a referrer).
fn sanitize(html: &str) -> String {
    ammonia::Builder::default()
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .link_rel(Some("noopener noreferrer nofollow"))
        .clean(html)
        .to_string()
}

fn fmt_num(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(x) if x != 0.0 && (x.abs() >= 1e7 || x.abs() < 1e-3) => format!("{x:.4e}"),
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// JSON inside a `<script>` element: `<` escaped, so no `</script>` or `<!--` can appear.
fn script_json(v: &Value) -> String {
    v.to_string().replace('<', "\\u003c")
}

/// The report as one self-contained HTML page.
pub fn html(r: &Report, logs: &[String], rules: &Rules) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let title = format!("perfcounters analyze — {}", logs.join(", "));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{UPLOT_CSS}</style><style>{REPORT_CSS}</style></head><body>\n",
        esc(&title)
    );
    let _ = write!(h, "<h1>Performance analysis</h1>\n<section id=\"summary\"><h2>Summary</h2><table class=\"kv\">");
    let mut kv = |k: &str, v: String| {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), v);
    };
    kv("Logs", esc(&logs.join(", ")));
    kv("Machines", esc(&r.machines.join(", ")));
    kv(
        "Time range",
        r.range.map_or("no records".into(), |(a, b)| {
            format!(
                "{} – {}",
                esc(&iso(r.time_zone.as_ref(), a)),
                esc(&iso(r.time_zone.as_ref(), b))
            )
        }),
    );
    kv("Records", r.records.to_string());
    kv("Slice", format!("{} s", r.interval_seconds));
    kv(
        "Rules",
        esc(&format!("{} ({})", rules.name, rules.files.join(", "))),
    );
    kv(
        "Questions",
        esc(&r
            .questions
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect::<Vec<_>>()
            .join("; ")),
    );
    let mut by_condition: Vec<(String, usize)> = Vec::new();
    for a in &r.alerts {
        match by_condition.iter_mut().find(|(c, _)| *c == a.condition) {
            Some(x) => x.1 += 1,
            None => by_condition.push((a.condition.clone(), 1)),
        }
    }
    let evaluated = r.analyses.iter().filter(|a| a.evaluated()).count();
    kv(
        "Alerts",
        if by_condition.is_empty() {
            "none".into()
        } else {
            by_condition
                .iter()
                .map(|(c, n)| {
                    format!(
                        "<span class=\"cond {}\">{}</span> {n}",
                        esc(&c.to_lowercase()),
                        esc(c)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        },
    );
    kv(
        "Analyses",
        format!(
            "{evaluated} evaluated, {} not evaluated (see the end of the report)",
            r.analyses.len() - evaluated
        ),
    );
    h.push_str("</table></section>\n");

    // Alerts in time order.
    h.push_str("<section id=\"alerts\"><h2>Alerts in time order</h2>");
    if r.alerts.is_empty() {
        h.push_str("<p>No threshold was broken.</p>");
    } else {
        h.push_str(
            "<div class=\"scroll\"><table class=\"alerts\"><thead><tr><th>Slice start</th><th>Slice end</th><th>Condition</th>\
             <th>Analysis</th><th>Counter</th><th>Threshold</th><th>Min</th><th>Avg</th><th>Max</th></tr></thead><tbody>",
        );
        for a in &r.alerts {
            let analysis = r
                .analyses
                .get(a.analysis)
                .map(|x| x.name.as_str())
                .unwrap_or_default();
            let counter = r
                .counters
                .get(a.counter)
                .map(|c| c.path.as_str())
                .unwrap_or_default();
            let limit = match a.trend {
                Some(t) => format!(
                    "trend {} {} per hour ({})",
                    a.operator.name(),
                    fmt_num(Some(a.threshold)),
                    fmt_num(Some(t))
                ),
                None => format!("{} {}", a.operator.name(), fmt_num(Some(a.threshold))),
            };
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td><span class=\"cond {}\">{}</span></td><td><a href=\"#a{}\">{}</a></td>\
                 <td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&iso(r.time_zone.as_ref(), a.start)),
                esc(&iso(r.time_zone.as_ref(), a.end)),
                esc(&a.condition.to_lowercase()),
                esc(&a.condition),
                a.analysis,
                esc(analysis),
                esc(counter),
                esc(&a.threshold_name),
                esc(&limit),
                fmt_num(Some(a.min)),
                fmt_num(Some(a.avg)),
                fmt_num(Some(a.max)),
            );
        }
        h.push_str("</tbody></table></div>");
    }
    h.push_str("</section>\n");

    // Analyses by category.
    let mut categories: Vec<&str> = Vec::new();
    for a in r.analyses.iter().filter(|a| a.evaluated()) {
        if !categories.contains(&a.category.as_str()) {
            categories.push(&a.category);
        }
    }
    let mut charts: Vec<Value> = Vec::new();
    for cat in &categories {
        let _ = write!(h, "<section class=\"category\"><h2>{}</h2>", esc(cat));
        for (i, a) in r
            .analyses
            .iter()
            .enumerate()
            .filter(|(_, a)| a.evaluated() && a.category == *cat)
        {
            let _ = write!(
                h,
                "<article class=\"analysis\" id=\"a{i}\"><h3>{}{}</h3><div class=\"description\">{}</div>",
                esc(&a.name),
                if a.alerts > 0 { format!(" <span class=\"count\">{} alerts</span>", a.alerts) } else { String::new() },
                sanitize(&a.description)
            );
            h.push_str("<ul class=\"thresholds\">");
            for t in &a.thresholds {
                for c in &t.calls {
                    let _ = write!(
                        h,
                        "<li><span class=\"cond {}\">{}</span> {}: {}{} {}</li>",
                        esc(&t.condition.to_lowercase()),
                        esc(&t.condition),
                        esc(&t.name),
                        if c.trend_only { "trend per hour " } else { "" },
                        esc(c.operator.name()),
                        fmt_num(Some(c.threshold)),
                    );
                }
            }
            h.push_str("</ul>");
            if !a.counters.is_empty() {
                let chart = charts.len();
                let series: Vec<Value> = a
                    .counters
                    .iter()
                    .filter_map(|&c| r.counters.get(c))
                    .map(|c| {
                        json!({
                            "name": c.path,
                            "t": c.points.iter().map(|p| chart_seconds(r.time_zone.as_ref(), p.0)).collect::<Vec<_>>(),
                            "v": c.points.iter().map(|p| p.1).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                let lines: Vec<Value> = a
                    .thresholds
                    .iter()
                    .flat_map(|t| t.calls.iter().filter(|c| !c.trend_only).map(move |c| (t, c)))
                    .map(|(t, c)| json!({"name": format!("{} ({} {})", t.condition, c.operator.name(), fmt_num(Some(c.threshold))), "value": c.threshold, "condition": t.condition.to_lowercase()}))
                    .collect();
                charts.push(json!({"series": series, "thresholds": lines}));
                let _ = write!(h, "<div class=\"chart\" data-chart=\"{chart}\"></div>");
                h.push_str(
                    "<table class=\"stats\"><thead><tr><th>Counter</th><th>Values</th><th>Min</th><th>Avg</th>\
                     <th>Max</th><th>P90</th><th>P95</th><th>Trend /h</th></tr></thead><tbody>",
                );
                for c in a.counters.iter().filter_map(|&c| r.counters.get(c)) {
                    let _ = write!(
                        h,
                        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        esc(&c.path),
                        c.count,
                        fmt_num(c.min),
                        fmt_num(c.avg),
                        fmt_num(c.max),
                        fmt_num(c.p90),
                        fmt_num(c.p95),
                        fmt_num(c.trend)
                    );
                }
                h.push_str("</tbody></table>");
            }
            h.push_str("</article>");
        }
        h.push_str("</section>\n");
    }

    // What was not evaluated.
    h.push_str("<section id=\"not-evaluated\"><h2>Not evaluated</h2>");
    let skipped: Vec<_> = r.analyses.iter().filter(|a| !a.evaluated()).collect();
    if skipped.is_empty() {
        h.push_str("<p>Every analysis was evaluated.</p>");
    } else {
        h.push_str(
            "<table><thead><tr><th>Analysis</th><th>Category</th><th>Why</th></tr></thead><tbody>",
        );
        for a in skipped {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&a.name),
                esc(&a.category),
                esc(a.reason.as_deref().unwrap_or_default())
            );
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>\n");
    let _ = write!(
        h,
        "<footer>Thresholds: PAL (Performance Analysis of Logs, MIT licence); their code was read, not run.</footer>\n\
         <script type=\"application/json\" id=\"charts\">{}</script>\n<script>{UPLOT_JS}</script>\n<script>{REPORT_JS}</script>\n</body></html>\n",
        script_json(&Value::Array(charts))
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_description_is_made_harmless() {
        let s = sanitize(
            "<b>ok</b><script>alert(1)</script><img src=x onerror=alert(2)><a href=\"javascript:alert(3)\">x</a>\
             <A HREF=\"http://example.com/\">ref</A><style>body{}</style>",
        );
        assert!(!s.to_lowercase().contains("<script"), "{s}");
        assert!(!s.contains("onerror"), "{s}");
        assert!(!s.contains("javascript:"), "{s}");
        assert!(!s.contains("<style"), "{s}");
        assert!(s.contains("<b>ok</b>"), "{s}");
        assert!(s.contains("href=\"http://example.com/\""), "{s}");
    }

    #[test]
    fn script_json_cannot_close_the_element() {
        let v = json!({"name": "</script><script>alert(1)</script>"});
        let s = script_json(&v);
        assert!(!s.contains("</script"));
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn iso_times() {
        let t = LogTime::from_parts(2016, 11, 26, 13, 46, 30, 874).unwrap();
        assert_eq!(iso(None, t), "2016-11-26T13:46:30.874");
        assert_eq!(
            chart_seconds(None, LogTime::from_parts(1970, 1, 1, 0, 0, 1, 0).unwrap()),
            1.0
        );
        // A UTC instant shows as the log's local time: 21:46:30.874 UTC is 13:46:30.874 in
        // Pacific Standard Time, and the chart's axis reads that wall clock.
        let (pacific, _) = TimeZone::named("Pacific Standard Time", Some(480));
        let utc = LogTime::from_parts(2016, 11, 26, 21, 46, 30, 874).unwrap();
        assert_eq!(iso(Some(&pacific), utc), "2016-11-26T13:46:30.874");
        let utc = LogTime::from_parts(1970, 1, 1, 8, 0, 1, 0).unwrap();
        assert_eq!(chart_seconds(Some(&pacific), utc), 1.0);
    }
}
