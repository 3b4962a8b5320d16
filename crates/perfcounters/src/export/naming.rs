//! Metric names and types from counter names and counter types.
//!
//! `perfcounters_<object>_<counter>` in snake case, with the suffix and type the counter type calls
//! for. The table of rules is in `docs/serve.md`; [`rule_for`] is its only implementation.

use crate::counter_type::{CounterType, Subtype, TimeBase, TypeField};

use super::MetricKind;

/// How a counter's raw value becomes a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Conversion {
    /// `N × factor`; cumulative values pass through the zero-dip guard.
    Scaled {
        /// The multiplier.
        factor: f64,
    },
    /// `N / F`, F the time base of the counter type (tick, 100 ns or object frequency).
    PerTimeBase,
    /// The base (companion) value, `× factor`.
    Base {
        /// The multiplier.
        factor: f64,
    },
    /// A `_sum`/`_count` pair: `N / F` (`time = true`) or `N` as the sum, the base as the count.
    Summary {
        /// Divide the sum by the time base.
        time: bool,
    },
    /// An elapsed-time counter exported as the Unix time of its start.
    StartTime,
    /// `(D − N) / F` for an inverted timer: the time it inverts back, with D its time stamp.
    Complement,
    /// A volume size in bytes from `% Free Space` (N free, B its base) and `Free Megabytes` (M):
    /// `M × 2^20 × B / N`, right whatever unit the fraction uses.
    FreeSpaceSize,
}

/// What one counter becomes: a metric name (without prefix and object), type, conversion, unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// The counter part of the name, with its suffixes (`context_switches_total`).
    pub name: String,
    /// The Prometheus type.
    pub kind: MetricKind,
    /// How the value is computed.
    pub conversion: Conversion,
    /// Whether the value is cumulative (guarded against drops).
    pub cumulative: bool,
    /// The base unit, if the name carries one.
    pub unit: Option<&'static str>,
    /// What HELP adds after the counter path and type.
    pub note: &'static str,
}

/// The rules for one displayable counter: usually one, two for a raw fraction (numerator and base),
/// none for types that have no numeric meaning (text, no data, histograms, bases on their own).
///
/// A metric is named `perfcounters_<object>_<counter>` in snake case, with the suffix and type the
/// counter type calls for. The table of rules is in `docs/serve.md`; this is its only
/// implementation. The counter type's family picks the rule; the functions below make each
/// family's rules.
pub fn rule_for(counter: &str, ty: CounterType) -> Vec<Rule> {
    if !ty.is_displayable() || ty.kind() == TypeField::Text {
        return Vec::new();
    }
    match ty.kind() {
        TypeField::Number => vec![gauge_rule(counter, ty.subtype() == Subtype::NumberDec1000)],
        TypeField::Counter => match ty.subtype() {
            Subtype::CounterValue if ty.is_delta() => vec![delta_rule(counter)],
            Subtype::CounterValue => vec![gauge_rule(counter, false)],
            Subtype::CounterRate | Subtype::CounterPrecision if is_timer(ty) => {
                vec![timer_rule(counter, ty)]
            }
            Subtype::CounterRate => vec![rate_rule(counter)],
            Subtype::CounterQueueLen => vec![queue_length_rule(counter)],
            Subtype::CounterFraction => fraction_rules(counter, ty),
            Subtype::CounterElapsed => vec![start_time_rule(counter)],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

impl Rule {
    /// A rule; counters and summaries are cumulative, gauges are not.
    fn new(
        name: String,
        kind: MetricKind,
        conversion: Conversion,
        unit: Option<&'static str>,
        note: &'static str,
    ) -> Rule {
        Rule {
            name,
            kind,
            conversion,
            cumulative: kind != MetricKind::Gauge,
            unit,
            note,
        }
    }
}

/// The counter name as the stem of a metric name: snake case, without `Avg.`.
fn stem(counter: &str) -> String {
    snake(strip_avg(counter))
}

/// A number (PERF_COUNTER_RAWCOUNT …) or an instantaneous value (PERF_COUNTER_LARGE_RAWCOUNT …):
/// a gauge, in bytes where the name gives a byte unit; `thousandths` for PERF_COUNTER_DEC1000.
fn gauge_rule(counter: &str, thousandths: bool) -> Rule {
    let (name, factor) = byte_unit(counter);
    let factor = if thousandths { factor / 1000.0 } else { factor };
    let unit = name.ends_with("_bytes").then_some("bytes");
    Rule::new(
        name,
        MetricKind::Gauge,
        Conversion::Scaled { factor },
        unit,
        "",
    )
}

/// PERF_COUNTER_DELTA / LARGE_DELTA: the raw value is cumulative, PDH shows N1 − N0.
fn delta_rule(counter: &str) -> Rule {
    let stem = snake(strip_per_sec(counter));
    Rule::new(
        format!("{}_total", stem.strip_suffix("_total").unwrap_or(&stem)),
        MetricKind::Counter,
        Conversion::Scaled { factor: 1.0 },
        None,
        "increase() over the interval is the value",
    )
}

/// A timer (`% Processor Time` …): the seconds it counts, or for an inverted timer the seconds it
/// does not count.
fn timer_rule(counter: &str, ty: CounterType) -> Rule {
    let base = stem(counter);
    let stem = strip_time(&base);
    if ty.is_inverse() {
        return Rule::new(
            format!("{stem}_inverse_seconds_total"),
            MetricKind::Counter,
            Conversion::PerTimeBase,
            Some("seconds"),
            "an inverted timer: this is the time it does NOT count; the percentage is 100 × (1 − rate())",
        );
    }
    Rule::new(
        format!("{stem}_seconds_total"),
        MetricKind::Counter,
        Conversion::PerTimeBase,
        Some("seconds"),
        if ty.is_multi() {
            "a timer summed over several items; rate() is the busy fraction times the item count"
        } else {
            "rate() is the busy fraction"
        },
    )
}

/// A rate (`Context Switches/sec` …): the cumulative count.
fn rate_rule(counter: &str) -> Rule {
    let stem = snake(strip_per_sec(counter));
    let name = if stem.ends_with("_total") {
        stem
    } else {
        format!("{stem}_total")
    };
    Rule::new(
        name,
        MetricKind::Counter,
        Conversion::Scaled { factor: 1.0 },
        None,
        "rate() is the value per second",
    )
}

/// A queue length: the sum of queue length × time.
fn queue_length_rule(counter: &str) -> Rule {
    Rule::new(
        format!("{}_seconds_total", stem(counter)),
        MetricKind::Counter,
        Conversion::PerTimeBase,
        Some("seconds"),
        "queue length × time; rate() is the average queue length",
    )
}

/// The fraction family: averages become summaries, a sample fraction two cumulative counts, a raw
/// fraction two gauges (numerator and base).
fn fraction_rules(counter: &str, ty: CounterType) -> Vec<Rule> {
    if ty == CounterType::PERF_AVERAGE_TIMER {
        return vec![Rule::new(
            format!("{}_duration_seconds", strip_sec_per(counter)),
            MetricKind::Summary,
            Conversion::Summary { time: true },
            Some("seconds"),
            "_sum is the total time, _count the operations; rate(_sum)/rate(_count) is the average",
        )];
    }
    if ty == CounterType::PERF_AVERAGE_BULK {
        return vec![Rule::new(
            per_operation(counter),
            MetricKind::Summary,
            Conversion::Summary { time: false },
            None,
            "_sum is the total, _count the operations; rate(_sum)/rate(_count) is the average",
        )];
    }
    let base = stem(counter);
    if ty.is_delta() {
        // PERF_SAMPLE_FRACTION: two cumulative counts.
        return vec![
            Rule::new(
                format!("{base}_total"),
                MetricKind::Counter,
                Conversion::Scaled { factor: 1.0 },
                None,
                "the numerator; the percentage is 100 × rate() / rate(_base_total)",
            ),
            Rule::new(
                format!("{base}_base_total"),
                MetricKind::Counter,
                Conversion::Base { factor: 1.0 },
                None,
                "the denominator (base)",
            ),
        ];
    }
    // PERF_RAW_FRACTION / PERF_LARGE_RAW_FRACTION: two instantaneous values.
    let base_name = format!("{base}_base");
    vec![
        Rule::new(
            base,
            MetricKind::Gauge,
            Conversion::Scaled { factor: 1.0 },
            None,
            "the numerator; the percentage is 100 × this / _base",
        ),
        Rule::new(
            base_name,
            MetricKind::Gauge,
            Conversion::Base { factor: 1.0 },
            None,
            "the denominator (base)",
        ),
    ]
}

/// An elapsed time (`System Up Time` …): the start as a Unix time.
fn start_time_rule(counter: &str) -> Rule {
    Rule::new(
        start_time_name(&stem(counter)),
        MetricKind::Gauge,
        Conversion::StartTime,
        Some("seconds"),
        "the start as a Unix time; time() minus this is the elapsed time",
    )
}

/// Timer types: the rate and precision subtypes whose display is a percentage.
fn is_timer(ty: CounterType) -> bool {
    ty.display() == crate::counter_type::DisplaySuffix::Percent
        && matches!(
            ty.time_base(),
            TimeBase::Tick | TimeBase::Ns100 | TimeBase::Object
        )
}

/// A name in snake case: camel case split (`PhysicalDisk` → `physical_disk`), `%`, `.` and
/// parentheses dropped, `/` → `_per_`, anything else outside `[a-z0-9]` → `_`, runs of `_` joined,
/// no `_` at either end; a leading digit gets a `_` in front.
pub fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut prev: Option<char> = None;
    for c in name.chars() {
        match c {
            '%' | '.' | '(' | ')' | '\'' => {}
            '/' => out.push_str("_per_"),
            'A'..='Z' => {
                if prev.is_some_and(|p| p.is_ascii_lowercase()) {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            'a'..='z' | '0'..='9' => out.push(c),
            _ => out.push('_'),
        }
        prev = Some(c);
    }
    let mut cleaned = String::with_capacity(out.len());
    for c in out.chars() {
        if c == '_' && (cleaned.is_empty() || cleaned.ends_with('_')) {
            continue;
        }
        cleaned.push(c);
    }
    while cleaned.ends_with('_') {
        cleaned.pop();
    }
    if cleaned.starts_with(|c: char| c.is_ascii_digit()) {
        cleaned.insert(0, '_');
    }
    cleaned
}

/// `Avg. Disk sec/Read` → `Disk sec/Read`.
fn strip_avg(name: &str) -> &str {
    let t = name.trim();
    for p in ["Avg. ", "Avg ", "Average "] {
        if t.len() > p.len() && t[..p.len()].eq_ignore_ascii_case(p) {
            return &t[p.len()..];
        }
    }
    t
}

/// `Context Switches/sec` → `Context Switches`.
fn strip_per_sec(name: &str) -> &str {
    let t = name.trim();
    for s in ["/sec", "/ sec", " per second", "/s"] {
        if t.len() > s.len() && t[t.len() - s.len()..].eq_ignore_ascii_case(s) {
            return t[..t.len() - s.len()].trim_end();
        }
    }
    t
}

/// `processor_time` → `processor`; `disk_time` → `disk`.
fn strip_time(snake: &str) -> &str {
    snake
        .strip_suffix("_time")
        .filter(|s| !s.is_empty())
        .unwrap_or(snake)
}

/// `Avg. Disk sec/Read` → `disk_read`.
fn strip_sec_per(counter: &str) -> String {
    let t = strip_avg(counter);
    let lower = t.to_ascii_lowercase();
    let cleaned = match lower.find("sec/") {
        Some(i) => format!("{}{}", &t[..i], &t[i + 4..]),
        None => t.to_string(),
    };
    snake(&cleaned)
}

/// `Avg. Disk Bytes/Transfer` → `disk_transfer_size_bytes` (the Prometheus name of a size summary,
/// apart from the `disk_transfer_bytes_total` counter); other `A/B` → `a_per_b`.
fn per_operation(counter: &str) -> String {
    let t = strip_avg(counter);
    if let Some((a, b)) = t.split_once('/') {
        let a = a.trim();
        if a.len() >= 5 && a[a.len() - 5..].eq_ignore_ascii_case("bytes") {
            return format!("{}_{}_size_bytes", snake(&a[..a.len() - 5]), snake(b))
                .trim_start_matches('_')
                .to_string();
        }
    }
    snake(t)
}

/// `system_up_time` → `system_start_time_seconds`; `elapsed_time` → `start_time_seconds`.
fn start_time_name(base: &str) -> String {
    for s in ["_up_time", "_elapsed_time"] {
        if let Some(stem) = base.strip_suffix(s) {
            return format!("{stem}_start_time_seconds");
        }
    }
    if base == "elapsed_time" || base == "up_time" {
        return "start_time_seconds".into();
    }
    format!("{base}_start_time_seconds")
}

/// Byte counts in kilo- or megabytes are exported in bytes: `Available MBytes` → (`available_bytes`,
/// 2^20), `Free Megabytes` → (`free_bytes`, 2^20).
fn byte_unit(counter: &str) -> (String, f64) {
    let s = snake(counter);
    // Sizes in bytes whose names do not say so.
    if matches!(
        s.as_str(),
        "working_set" | "working_set_peak" | "working_set_private" | "commit_limit"
    ) {
        return (format!("{s}_bytes"), 1.0);
    }
    for (suffix, factor) in [
        ("_kbytes", 1024.0),
        ("_kilobytes", 1024.0),
        ("_mbytes", 1048576.0),
        ("_megabytes", 1048576.0),
    ] {
        if let Some(stem) = s.strip_suffix(suffix) {
            return (format!("{stem}_bytes"), factor);
        }
    }
    (gauge_name(s), 1.0)
}

/// Gauge names must not end like a counter or a summary part: `handle_count` → `handles`,
/// `…_total` → `…_total_value`.
fn gauge_name(s: String) -> String {
    if let Some(stem) = s.strip_suffix("_count") {
        if !stem.is_empty() {
            return format!("{stem}s");
        }
    }
    for suffix in ["_total", "_sum", "_bucket", "_created"] {
        if s.ends_with(suffix) {
            return format!("{s}_value");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use CounterType as T;

    fn one(counter: &str, ty: CounterType) -> (String, MetricKind) {
        let r = rule_for(counter, ty);
        assert_eq!(r.len(), 1, "{counter}");
        (r[0].name.clone(), r[0].kind)
    }

    #[test]
    fn snake_case() {
        assert_eq!(snake("PhysicalDisk"), "physical_disk");
        assert_eq!(snake("Processor Information"), "processor_information");
        assert_eq!(snake("Network Interface"), "network_interface");
        assert_eq!(snake("% Processor Time"), "processor_time");
        assert_eq!(snake("Working Set - Private"), "working_set_private");
        assert_eq!(snake("IPv4"), "ipv4");
        assert_eq!(snake("NUMA Node Memory"), "numa_node_memory");
        assert_eq!(snake("2D engine"), "_2d_engine");
        assert_eq!(snake("Überlauf"), "berlauf");
    }

    #[test]
    fn names_from_counter_types() {
        use MetricKind::*;
        assert_eq!(
            one("Context Switches/sec", T::PERF_COUNTER_COUNTER),
            ("context_switches_total".into(), Counter)
        );
        assert_eq!(
            one("Disk Read Bytes/sec", T::PERF_COUNTER_BULK_COUNT),
            ("disk_read_bytes_total".into(), Counter)
        );
        assert_eq!(
            one("Bytes Total/sec", T::PERF_COUNTER_BULK_COUNT),
            ("bytes_total".into(), Counter)
        );
        assert_eq!(
            one("% User Time", T::PERF_100NSEC_TIMER),
            ("user_seconds_total".into(), Counter)
        );
        assert_eq!(
            one("% Processor Time", T::PERF_100NSEC_TIMER_INV),
            ("processor_inverse_seconds_total".into(), Counter)
        );
        assert_eq!(
            one("% Disk Time", T::PERF_PRECISION_100NS_TIMER),
            ("disk_seconds_total".into(), Counter)
        );
        assert_eq!(
            one("Avg. Disk sec/Read", T::PERF_AVERAGE_TIMER),
            ("disk_read_duration_seconds".into(), Summary)
        );
        assert_eq!(
            one("Avg. Disk Bytes/Transfer", T::PERF_AVERAGE_BULK),
            ("disk_transfer_size_bytes".into(), Summary)
        );
        assert_eq!(
            one(
                "Avg. Disk Queue Length",
                T::PERF_COUNTER_100NS_QUEUELEN_TYPE
            ),
            ("disk_queue_length_seconds_total".into(), Counter)
        );
        assert_eq!(
            one("Available MBytes", T::PERF_COUNTER_LARGE_RAWCOUNT),
            ("available_bytes".into(), Gauge)
        );
        assert_eq!(
            one("Free Megabytes", T::PERF_COUNTER_RAWCOUNT),
            ("free_bytes".into(), Gauge)
        );
        assert_eq!(
            one("Working Set - Private", T::PERF_COUNTER_LARGE_RAWCOUNT),
            ("working_set_private_bytes".into(), Gauge)
        );
        assert_eq!(
            one("Handle Count", T::PERF_COUNTER_RAWCOUNT),
            ("handles".into(), Gauge)
        );
        assert_eq!(
            one("Processes", T::PERF_COUNTER_RAWCOUNT),
            ("processes".into(), Gauge)
        );
        assert_eq!(
            one("System Up Time", T::PERF_ELAPSED_TIME),
            ("system_start_time_seconds".into(), Gauge)
        );
        assert_eq!(
            one("Elapsed Time", T::PERF_ELAPSED_TIME),
            ("start_time_seconds".into(), Gauge)
        );
        let f = rule_for("% Committed Bytes In Use", T::PERF_RAW_FRACTION);
        let names: Vec<&str> = f.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["committed_bytes_in_use", "committed_bytes_in_use_base"]
        );
        assert_eq!(f[1].conversion, Conversion::Base { factor: 1.0 });
        let s = rule_for("% Sample", T::PERF_SAMPLE_FRACTION);
        let names: Vec<&str> = s.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["sample_total", "sample_base_total"]);
        assert_eq!(
            one("Deltas", T::PERF_COUNTER_DELTA),
            ("deltas_total".into(), Counter)
        );
        assert!(rule_for("Text", T::PERF_COUNTER_TEXT).is_empty());
        assert!(rule_for("Base", T::PERF_AVERAGE_BASE).is_empty());
        assert!(rule_for("Nothing", T::PERF_COUNTER_NODATA).is_empty());
    }
}
