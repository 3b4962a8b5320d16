//! The exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0 ([`TextFormat`], [`encode`]).

use std::fmt::Write;

use super::{MetricFamily, MetricKind};

/// An exposition format: Prometheus text 0.0.4 or OpenMetrics 1.0.
///
/// Both are written from the same [`MetricFamily`] list. The differences the encoder handles:
///
/// | | text 0.0.4 | OpenMetrics 1.0 |
/// |---|---|---|
/// | counter family name in `# TYPE`/`# HELP` | the sample name (`x_total`) | without `_total` (`x`) |
/// | `# UNIT` | not written | written when the family name ends with the unit |
/// | HELP escapes | `\\` and newline | `\\`, newline and `"` |
/// | end | — | `# EOF` |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TextFormat {
    /// The Prometheus text format, version 0.0.4.
    Prometheus,
    /// OpenMetrics 1.0.0 text.
    OpenMetrics,
}

impl TextFormat {
    /// The `Content-Type` of a response in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            TextFormat::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            TextFormat::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }

    /// Chooses the format for an HTTP `Accept` header: OpenMetrics when the client names
    /// `application/openmetrics-text` with a quality at least that of `text/plain` (and of `*/*`),
    /// the 0.0.4 text otherwise (also when the header is absent or unparsable).
    pub fn negotiate(accept: Option<&str>) -> TextFormat {
        let Some(accept) = accept else {
            return TextFormat::Prometheus;
        };
        let mut openmetrics: Option<f32> = None;
        let mut other: f32 = 0.0;
        for item in accept.split(',') {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let mut q = 1.0f32;
            let mut version_ok = true;
            for p in parts {
                let p = p.trim();
                if let Some(v) = p.strip_prefix("q=") {
                    q = v.trim().parse().unwrap_or(0.0);
                } else if let Some(v) = p.strip_prefix("version=") {
                    // OpenMetrics 0.0.1 and 1.0.0 share the text syntax this encoder writes.
                    version_ok = matches!(v.trim(), "1.0.0" | "0.0.1");
                }
            }
            if media == "application/openmetrics-text" {
                if version_ok {
                    openmetrics = Some(openmetrics.map_or(q, |o| o.max(q)));
                }
            } else if media == "text/plain" || media == "*/*" || media == "text/*" {
                other = other.max(q);
            }
        }
        match openmetrics {
            Some(q) if q > 0.0 && q >= other => TextFormat::OpenMetrics,
            _ => TextFormat::Prometheus,
        }
    }
}

/// Appends `families` to `out` in `format`. OpenMetrics output ends with `# EOF`.
pub fn encode<'a>(
    families: impl IntoIterator<Item = &'a MetricFamily>,
    format: TextFormat,
    out: &mut String,
) {
    for family in families {
        if family.samples.is_empty() {
            continue;
        }
        encode_family(family, format, out);
    }
    if format == TextFormat::OpenMetrics {
        out.push_str("# EOF\n");
    }
}

fn encode_family(family: &MetricFamily, format: TextFormat, out: &mut String) {
    let om = format == TextFormat::OpenMetrics;
    // The family name: OpenMetrics names a counter family without its `_total`; 0.0.4 names it
    // like its samples.
    let name = family.name.as_str();
    let header_name = match (family.kind, om) {
        (MetricKind::Counter, true) => name.strip_suffix("_total").unwrap_or(name),
        _ => name,
    };
    let type_name = match family.kind {
        MetricKind::Counter => "counter",
        MetricKind::Gauge => "gauge",
        MetricKind::Summary => "summary",
    };
    out.push_str("# HELP ");
    out.push_str(header_name);
    out.push(' ');
    escape_help(&family.help, om, out);
    out.push('\n');
    let _ = writeln!(out, "# TYPE {header_name} {type_name}");
    if om {
        if let Some(unit) = family.unit {
            if header_name.ends_with(&format!("_{unit}")) {
                let _ = writeln!(out, "# UNIT {header_name} {unit}");
            }
        }
    }
    for sample in &family.samples {
        out.push_str(name);
        out.push_str(sample.suffix);
        if !sample.labels.is_empty() {
            out.push('{');
            for (i, (k, v)) in sample.labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push_str("=\"");
                escape_label(v, out);
                out.push('"');
            }
            out.push('}');
        }
        out.push(' ');
        write_value(sample.value, out);
        out.push('\n');
    }
}

fn escape_help(text: &str, om: bool, out: &mut String) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if om => out.push_str("\\\""),
            c => out.push(c),
        }
    }
}

fn escape_label(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
}

/// Writes a sample value: integers without a fraction, others in Rust's shortest round-trip form,
/// `NaN`, `+Inf`, `-Inf` as both formats spell them.
fn write_value(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else if v.fract() == 0.0 && v.abs() < 1e17 {
        let _ = write!(out, "{}", v as i64);
    } else if v.abs() >= 1e17 {
        let _ = write!(out, "{v:e}");
    } else {
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::MetricSample;

    fn families() -> Vec<MetricFamily> {
        vec![
            MetricFamily {
                name: "perfcounters_system_context_switches_total".into(),
                help: "\\System\\Context Switches/sec (PERF_COUNTER_BULK_COUNT)".into(),
                kind: MetricKind::Counter,
                unit: None,
                samples: vec![MetricSample::new("", vec![], 1234.0)],
            },
            MetricFamily {
                name: "perfcounters_logical_disk_disk_read_seconds".into(),
                help: "say \"hi\"\nnext".into(),
                kind: MetricKind::Summary,
                unit: Some("seconds"),
                samples: vec![
                    MetricSample::new(
                        "_sum",
                        vec![("instance_name".into(), "C:\\ \"x\"".into())],
                        0.25,
                    ),
                    MetricSample::new(
                        "_count",
                        vec![("instance_name".into(), "C:\\ \"x\"".into())],
                        4.0,
                    ),
                ],
            },
        ]
    }

    #[test]
    fn prometheus_text() {
        let mut out = String::new();
        encode(&families(), TextFormat::Prometheus, &mut out);
        assert_eq!(
            out,
            "# HELP perfcounters_system_context_switches_total \\\\System\\\\Context Switches/sec (PERF_COUNTER_BULK_COUNT)\n\
             # TYPE perfcounters_system_context_switches_total counter\n\
             perfcounters_system_context_switches_total 1234\n\
             # HELP perfcounters_logical_disk_disk_read_seconds say \"hi\"\\nnext\n\
             # TYPE perfcounters_logical_disk_disk_read_seconds summary\n\
             perfcounters_logical_disk_disk_read_seconds_sum{instance_name=\"C:\\\\ \\\"x\\\"\"} 0.25\n\
             perfcounters_logical_disk_disk_read_seconds_count{instance_name=\"C:\\\\ \\\"x\\\"\"} 4\n"
        );
    }

    #[test]
    fn openmetrics_text() {
        let mut out = String::new();
        encode(&families(), TextFormat::OpenMetrics, &mut out);
        assert_eq!(
            out,
            "# HELP perfcounters_system_context_switches \\\\System\\\\Context Switches/sec (PERF_COUNTER_BULK_COUNT)\n\
             # TYPE perfcounters_system_context_switches counter\n\
             perfcounters_system_context_switches_total 1234\n\
             # HELP perfcounters_logical_disk_disk_read_seconds say \\\"hi\\\"\\nnext\n\
             # TYPE perfcounters_logical_disk_disk_read_seconds summary\n\
             # UNIT perfcounters_logical_disk_disk_read_seconds seconds\n\
             perfcounters_logical_disk_disk_read_seconds_sum{instance_name=\"C:\\\\ \\\"x\\\"\"} 0.25\n\
             perfcounters_logical_disk_disk_read_seconds_count{instance_name=\"C:\\\\ \\\"x\\\"\"} 4\n\
             # EOF\n"
        );
    }

    #[test]
    fn values() {
        let v = |x: f64| {
            let mut s = String::new();
            write_value(x, &mut s);
            s
        };
        assert_eq!(v(0.0), "0");
        assert_eq!(v(-3.0), "-3");
        assert_eq!(v(0.1), "0.1");
        assert_eq!(v(4294967296.0), "4294967296");
        assert_eq!(v(1.5e20), "1.5e20");
        assert_eq!(v(f64::NAN), "NaN");
        assert_eq!(v(f64::INFINITY), "+Inf");
        assert_eq!(v(f64::NEG_INFINITY), "-Inf");
    }

    #[test]
    fn negotiation() {
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(TextFormat::negotiate(Some(prom)), TextFormat::OpenMetrics);
        assert_eq!(TextFormat::negotiate(None), TextFormat::Prometheus);
        assert_eq!(
            TextFormat::negotiate(Some("text/plain")),
            TextFormat::Prometheus
        );
        assert_eq!(TextFormat::negotiate(Some("*/*")), TextFormat::Prometheus);
        assert_eq!(
            TextFormat::negotiate(Some("application/openmetrics-text; version=2.0.0")),
            TextFormat::Prometheus
        );
        assert_eq!(
            TextFormat::negotiate(Some("text/plain;q=1, application/openmetrics-text;q=0.5")),
            TextFormat::Prometheus
        );
        assert_eq!(
            TextFormat::negotiate(Some("application/openmetrics-text")),
            TextFormat::OpenMetrics
        );
    }
}
