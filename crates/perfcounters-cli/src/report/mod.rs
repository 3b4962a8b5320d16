//! The report of `analyze`: its JSON form ([`json()`]) and one self-contained HTML file ([`html()`]:
//! inline styles, the vendored uPlot chart library and the data; nothing fetched from the network).
//!
//! Text from a rules file is untrusted: descriptions (HTML) go through `ammonia`'s allow-list
//! sanitizer, every other string is escaped by the HTML template, and the chart data is JSON with
//! `<` escaped so that nothing in it can close the `<script>` element that carries it.

mod compare;
mod compare_json;
mod fleet;
mod fleet_json;
mod html;
mod json;

use std::collections::BTreeMap;

use perfcounters::analyze::{Comparison, Report, Rules};
use perfcounters::log::{InputLog, LogTime, TimeZone};
use perfcounters::snapshot::{FILETIME_UNIX_EPOCH, FREQ_100NS};
use perfcounters::time_text::TimeStyle;

pub use compare::TOP as COMPARISON_CHARTS;
pub use fleet::FleetReport;
pub use json::ReportJson;

/// A time (a UTC instant) as the local time of the log's zone `zone`, ISO 8601 with milliseconds
/// (`2016-11-26T13:46:30.874`), the wall clock relog's CSV shows. The one place where a report turns
/// a log time into text.
pub fn iso(zone: Option<&TimeZone>, t: LogTime) -> String {
    let t = zone.map_or(t, |z| z.to_local(t));
    t.to_system_time()
        .map_or_else(String::new, |s| TimeStyle::Iso.format(&s))
}

/// A log as the report's summary names it: its file, and for a text log the encoding it was read
/// in, the code page given or detected (`perf.csv (code page 1251)`); a binary log by its name.
fn log_label(l: &InputLog) -> String {
    match l.encoding {
        Some(e) => format!("{} ({})", l.source, e.describe()),
        None => l.source.clone(),
    }
}

/// The encoding each text log was read in (`UTF-8`, `code page 1251`), by log: the JSON
/// report's `encodings`. Binary logs have none.
fn encodings(logs: &[InputLog]) -> BTreeMap<&str, String> {
    logs.iter()
        .filter_map(|l| Some((l.source.as_str(), l.encoding?.describe())))
        .collect()
}

/// Seconds since 1970 of the log's local time (of the UTC instant `t`) read as if it were UTC: the
/// charts' x axis, drawn in UTC so that it shows the log's local time.
fn chart_seconds(zone: Option<&TimeZone>, t: LogTime) -> f64 {
    let t = zone.map_or(t, |z| z.to_local(t));
    t.0.saturating_sub(FILETIME_UNIX_EPOCH) as f64 / FREQ_100NS as f64
}

/// The report as JSON (the shape docs/analyze.md documents), `notes` ([`notes`]) first.
pub fn json<'a>(
    r: &'a Report,
    logs: &'a [InputLog],
    rules: &'a Rules,
    notes: &'a [String],
) -> ReportJson<'a> {
    ReportJson::new(r, logs, rules, notes)
}

/// The report as one self-contained HTML page, `notes` ([`notes`]) at its top.
pub fn html(r: &Report, logs: &[InputLog], rules: &Rules, notes: &[String]) -> String {
    html::page(r, logs, rules, None, notes)
}

/// The report of the candidate with its comparison with a baseline ("What changed" first, after
/// the `notes`).
pub fn html_compared(
    r: &Report,
    logs: &[InputLog],
    rules: &Rules,
    c: &Comparison,
    notes: &[String],
) -> String {
    html::page(r, logs, rules, Some(c), notes)
}

/// What `analyze --baseline` prints on standard error about the comparison: the counts of each
/// class, the top changes and the analyses that got worse or new, one line each.
pub fn comparison_lines(c: &Comparison) -> Vec<String> {
    compare::summary_lines(c)
}

/// What a reader must know before the alerts, most important first: why so few analyses were
/// evaluated that no alert means nothing, that the log's names were translated, and which
/// question answers were assumed (the rules' defaults, not given with `--set`).
pub fn notes(r: &Report, set: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(few) = r.few_evaluated() {
        out.push(few.message("--names"));
    }
    if r.language.uses_builtin() {
        out.push(format!(
            "the log names its counters in another language ({}): they were matched to the \
             rules' English names through the built-in table (PAL's CounterLang.xml)",
            r.language.locales.join(", ")
        ));
    }
    let assumed: Vec<String> = r
        .questions
        .iter()
        .filter(|(n, _)| !set.iter().any(|(s, _)| s.eq_ignore_ascii_case(n)))
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    if !assumed.is_empty() {
        out.push(format!(
            "assumed {}: set them with --set NAME=VALUE",
            assumed.join(", ")
        ));
    }
    out
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
