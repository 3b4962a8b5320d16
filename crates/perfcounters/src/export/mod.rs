//! The counter model as Prometheus metrics: raw cumulative values, types from counter types.
//!
//! Exporting is done in two steps:
//!
//! 1. **Plan** once per catalog: [`ExportConfig::plan`] (native names) or
//!    [`compat::windows_exporter`] (windows_exporter's names) resolves objects and counters against
//!    a [`Catalog`] and decides, per counter, the metric family, its type, labels and how the raw
//!    value is converted ([`rule_for`]). The plan is split into collectors, each with the
//!    [`Request`] a source needs.
//! 2. **Render** every collection: [`Exporter::render`] turns the snapshot of one collector into
//!    [`MetricFamily`] samples. The exporter keeps state between collections so that cumulative
//!    series never go backwards by accident ([`CounterGuard`]: 32-bit counters widened, spurious
//!    drops held back).
//!
//! [`encode`] writes the families as Prometheus text 0.0.4 or OpenMetrics. Nothing here does I/O.
//!
//! ```
//! use perfcounters::export::{encode, ExportConfig, Exporter, TextFormat};
//! # use perfcounters::source::Catalog;
//! # fn demo(catalog: &Catalog, source: &mut dyn perfcounters::source::Source) {
//! let plan = ExportConfig::default_set(catalog).plan(catalog);
//! let mut exporter = Exporter::new();
//! exporter.begin();
//! let mut families = perfcounters::export::Families::new();
//! for collector in &plan.collectors {
//!     if let Ok(snapshot) = source.collect(&collector.request) {
//!         exporter.render(collector, &snapshot, &mut families);
//!     }
//! }
//! let mut text = String::new();
//! encode(families.as_slice(), TextFormat::Prometheus, &mut text);
//! # }
//! ```

pub mod compat;
mod guard;
mod naming;
#[cfg(feature = "otlp")]
pub mod otlp;
mod text;

use std::collections::{HashMap, HashSet};

pub use guard::CounterGuard;
pub use naming::{rule_for, Conversion, Rule};
pub use text::{encode, TextFormat};

use crate::counter_type::CounterType;
use crate::path::{eq_ignore_case, wildcard_match};
use crate::snapshot::{
    Instance, Object, ObjectData, Snapshot, Value, FILETIME_UNIX_EPOCH, FREQ_100NS,
};
use crate::source::{Catalog, ObjectInfo, Request};
use crate::suggest::DidYouMean;
use naming::snake;

/// The Prometheus metric types used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MetricKind {
    /// A cumulative value (`_total`).
    Counter,
    /// An instantaneous value.
    Gauge,
    /// A `_sum`/`_count` pair without quantiles.
    Summary,
}

/// One metric family: name, HELP, type and samples.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricFamily {
    /// The name as samples carry it (counters end with `_total`; summaries without `_sum`/`_count`).
    pub name: String,
    /// The HELP text (unescaped).
    pub help: String,
    /// The type.
    pub kind: MetricKind,
    /// The base unit the name ends with (`seconds`, `bytes`), if any.
    pub unit: Option<&'static str>,
    /// The samples.
    pub samples: Vec<MetricSample>,
}

/// One sample of a family.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSample {
    /// Appended to the family name: `""`, `"_sum"` or `"_count"`.
    pub suffix: &'static str,
    /// Label names and values, in output order.
    pub labels: Vec<(String, String)>,
    /// The value.
    pub value: f64,
}

impl MetricSample {
    /// A sample.
    pub fn new(suffix: &'static str, labels: Vec<(String, String)>, value: f64) -> Self {
        MetricSample {
            suffix,
            labels,
            value,
        }
    }
}

/// What to export from one object (the shape windows_exporter's `performancecounter` collector,
/// Telegraf's `win_perf_counters` and OpenTelemetry's `windowsperfcounters` share).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectConfig {
    /// The object name (case-insensitive), e.g. `Processor Information`.
    pub object: String,
    /// The collector name (the `collector` label of the self-metrics); default: the object in snake case.
    pub collector: Option<String>,
    /// Replaces the object part of the metric names (`cpu` → `perfcounters_cpu_user_seconds_total`).
    pub metric: Option<String>,
    /// Instance name patterns (`*` wildcards) to export; empty exports all.
    pub instances: Vec<String>,
    /// Instance name patterns to leave out.
    pub exclude_instances: Vec<String>,
    /// Export `_Total` instances (by default instances ending in `_Total` are dropped, since they
    /// break `sum()`).
    pub include_total: bool,
    /// The label that carries the instance name; default `instance_name` (never `instance`, which
    /// is Prometheus' own target label).
    pub instance_label: Option<String>,
    /// Labels added to every sample of the object.
    pub labels: Vec<(String, String)>,
    /// The counters to export (name patterns with `*`); empty exports every counter.
    pub counters: Vec<CounterConfig>,
}

/// One counter (or a pattern of counters) of an [`ObjectConfig`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterConfig {
    /// The counter name or a pattern with `*`.
    pub counter: String,
    /// The full metric name, replacing the derived one (only for a name without `*`). Suffixes are
    /// kept as given.
    pub metric: Option<String>,
    /// Labels added to this counter's samples.
    pub labels: Vec<(String, String)>,
}

impl CounterConfig {
    /// Every counter matching `pattern`, with derived names.
    pub fn pattern(pattern: &str) -> Self {
        CounterConfig {
            counter: pattern.to_string(),
            ..Default::default()
        }
    }
}

/// The objects and counters to export, and the metric name prefix.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportConfig {
    /// The metric name prefix (`perfcounters`).
    pub prefix: String,
    /// The objects.
    pub objects: Vec<ObjectConfig>,
}

impl Default for ExportConfig {
    fn default() -> Self {
        ExportConfig {
            prefix: "perfcounters".into(),
            objects: Vec::new(),
        }
    }
}

/// The objects of the default set: processors, memory, system, disks, network.
pub const DEFAULT_OBJECTS: &[&str] = &[
    "Processor Information",
    "Memory",
    "System",
    "PhysicalDisk",
    "LogicalDisk",
    "Network Interface",
];

impl ExportConfig {
    /// The default set: [`DEFAULT_OBJECTS`] with all their counters (`Processor` where the catalog has
    /// no `Processor Information`). Objects the catalog lacks are left out.
    pub fn default_set(catalog: &Catalog) -> Self {
        let mut objects = Vec::new();
        for &name in DEFAULT_OBJECTS {
            let name = if name == "Processor Information" && catalog.object(name).is_none() {
                "Processor"
            } else {
                name
            };
            if catalog.object(name).is_some() {
                objects.push(ObjectConfig {
                    object: name.to_string(),
                    ..Default::default()
                });
            }
        }
        ExportConfig {
            objects,
            ..Default::default()
        }
    }

    /// Adds the `Process` object, restricted to the instances matching `instances` (all when empty).
    pub fn with_process(mut self, instances: &[String]) -> Self {
        self.objects.push(ObjectConfig {
            object: "Process".into(),
            instances: instances.to_vec(),
            ..Default::default()
        });
        self
    }

    /// Resolves the configuration against `catalog`: one collector per object. Objects and counters
    /// the catalog lacks are listed in [`Plan::problems`].
    pub fn plan(&self, catalog: &Catalog) -> Plan {
        let mut plan = Plan::default();
        let mut families: HashMap<String, MetricKind> = HashMap::new();
        let mut om_families: HashMap<String, String> = HashMap::new();
        for oc in &self.objects {
            let Some(info) = catalog.object(&oc.object) else {
                plan.problems.push(format!(
                    "no object named \"{}\"{}",
                    oc.object,
                    DidYouMean(&catalog.close_object_names(&oc.object))
                ));
                continue;
            };
            let object_part = oc.metric.clone().unwrap_or_else(|| snake(&info.name));
            let process = has_process_id(info);
            let mut series = Vec::new();
            let patterns: Vec<CounterConfig> = if oc.counters.is_empty() {
                vec![CounterConfig::pattern("*")]
            } else {
                oc.counters.clone()
            };
            for cc in &patterns {
                let matched: Vec<_> = info
                    .counters
                    .iter()
                    .filter(|c| wildcard_match(&cc.counter, &c.name))
                    .collect();
                if matched.is_empty() {
                    plan.problems.push(format!(
                        "object \"{}\" has no counter matching \"{}\"{}",
                        info.name,
                        cc.counter,
                        DidYouMean(&catalog.close_counter_names(info, &cc.counter))
                    ));
                }
                for c in matched {
                    if process && eq_ignore_case(&c.name, ID_PROCESS) {
                        continue; // carried by the process_id label
                    }
                    let rules = rule_for(&c.name, c.counter_type);
                    let single = rules.len() == 1;
                    for rule in rules {
                        let name = match (&cc.metric, single) {
                            (Some(m), true) => m.clone(),
                            (Some(m), false) => match rule.conversion {
                                Conversion::Base { .. } => format!("{m}_base"),
                                _ => m.clone(),
                            },
                            (None, _) => format!("{}_{}_{}", self.prefix, object_part, rule.name),
                        };
                        // One family per name: a later counter with the same name (Available KBytes
                        // after Available Bytes) or another type is left out.
                        match families.get(&name) {
                            Some(_) if cc.metric.is_none() => continue,
                            Some(kind) if *kind != rule.kind => {
                                plan.problems.push(format!(
                                    "metric {name} of \\{}\\{} has another type than an earlier one; left out",
                                    info.name, c.name
                                ));
                                continue;
                            }
                            _ => {}
                        }
                        // OpenMetrics names a counter family without `_total`: `x_total` (counter)
                        // and `x` (another type) would be one family there.
                        let om_family = match rule.kind {
                            MetricKind::Counter => name.strip_suffix("_total").unwrap_or(&name),
                            _ => name.as_str(),
                        }
                        .to_string();
                        if let Some(other) = om_families.get(&om_family).filter(|o| **o != name) {
                            plan.problems.push(format!(
                                "metric {name} of \\{}\\{} would share the OpenMetrics family {om_family} with {other}; left out",
                                info.name, c.name
                            ));
                            continue;
                        }
                        om_families.insert(om_family, name.clone());
                        families.insert(name.clone(), rule.kind);
                        let help = help_text(info, &c.name, c.counter_type, &rule);
                        series.push(SeriesPlan {
                            counter: c.name.clone(),
                            counter2: None,
                            family: name,
                            help,
                            labels: cc.labels.clone(),
                            rule,
                        });
                    }
                }
            }
            if series.is_empty() {
                continue;
            }
            let mut counters: Vec<String> = Vec::new();
            for s in &series {
                if !counters.iter().any(|c| eq_ignore_case(c, &s.counter)) {
                    counters.push(s.counter.clone());
                }
            }
            if process {
                counters.push(ID_PROCESS.to_string());
            }
            plan.collectors.push(CollectorPlan {
                name: oc.collector.clone().unwrap_or_else(|| snake(&info.name)),
                request: Request::new().object(&info.name, &counters),
                objects: vec![ObjectPlan {
                    object: info.name.clone(),
                    multi_instance: info.multi_instance,
                    instance_label: oc
                        .instance_label
                        .clone()
                        .unwrap_or_else(|| "instance_name".into()),
                    include_total: oc.include_total,
                    instances: oc.instances.clone(),
                    exclude_instances: oc.exclude_instances.clone(),
                    labels: oc.labels.clone(),
                    process_id: process,
                    series,
                }],
            });
        }
        plan
    }
}

const ID_PROCESS: &str = "ID Process";

/// Objects whose instances are processes: the `process_id` label comes from `ID Process` and the
/// instance label is the name without its `#n` suffix.
fn has_process_id(info: &ObjectInfo) -> bool {
    info.multi_instance && info.counter(ID_PROCESS).is_some()
}

fn help_text(info: &ObjectInfo, counter: &str, ty: CounterType, rule: &Rule) -> String {
    let path = if info.multi_instance {
        format!("\\{}(*)\\{}", info.name, counter)
    } else {
        format!("\\{}\\{}", info.name, counter)
    };
    let ty_name = ty
        .name()
        .map(str::to_string)
        .unwrap_or_else(|| format!("type 0x{:08X}", ty.0));
    let mut help = match rule.conversion {
        Conversion::Base { .. } => format!("{path} base ({ty_name})"),
        _ => format!("{path} ({ty_name})"),
    };
    let unit = match rule.conversion {
        Conversion::PerTimeBase | Conversion::Summary { time: true } => "; in seconds",
        Conversion::Scaled { factor } if factor > 1.0 => "; in bytes",
        _ => "",
    };
    help.push_str(unit);
    if !rule.note.is_empty() {
        help.push_str("; ");
        help.push_str(rule.note);
    }
    help
}

/// The resolved export: collectors, and what could not be resolved.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The collectors, each collected with its own request.
    pub collectors: Vec<CollectorPlan>,
    /// Objects and counters of the configuration that the catalog lacks, as messages.
    pub problems: Vec<String>,
}

/// One collector: a request and how its snapshot becomes metrics.
#[derive(Clone, Debug)]
pub struct CollectorPlan {
    /// The name (the `collector` label of the self-metrics).
    pub name: String,
    /// What to collect.
    pub request: Request,
    objects: Vec<ObjectPlan>,
}

impl CollectorPlan {
    /// What this collector exports, one entry per planned series.
    pub fn series(&self) -> impl Iterator<Item = SeriesInfo<'_>> {
        self.objects.iter().flat_map(|o| {
            o.series.iter().map(move |s| {
                let mut labels = Vec::new();
                if o.multi_instance {
                    labels.push(o.instance_label.as_str());
                    if o.process_id {
                        labels.push("process_id");
                    }
                }
                labels.extend(o.labels.iter().map(|(k, _)| k.as_str()));
                labels.extend(s.labels.iter().map(|(k, _)| k.as_str()));
                SeriesInfo {
                    family: &s.family,
                    kind: s.rule.kind,
                    object: &o.object,
                    counter: &s.counter,
                    labels,
                }
            })
        })
    }
}

/// One planned series of a [`CollectorPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesInfo<'a> {
    /// The metric family name.
    pub family: &'a str,
    /// Its type.
    pub kind: MetricKind,
    /// The source object.
    pub object: &'a str,
    /// The source counter.
    pub counter: &'a str,
    /// The label names (instance label, `process_id`, static labels; `parent` is added per instance
    /// when the instance has one).
    pub labels: Vec<&'a str>,
}

#[derive(Clone, Debug)]
struct ObjectPlan {
    object: String,
    multi_instance: bool,
    instance_label: String,
    include_total: bool,
    instances: Vec<String>,
    exclude_instances: Vec<String>,
    labels: Vec<(String, String)>,
    process_id: bool,
    series: Vec<SeriesPlan>,
}

#[derive(Clone, Debug)]
struct SeriesPlan {
    counter: String,
    /// A second counter the conversion reads ([`Conversion::FreeSpaceSize`]).
    counter2: Option<String>,
    family: String,
    help: String,
    labels: Vec<(String, String)>,
    rule: Rule,
}

/// The families of one scrape, filled by [`Exporter::render`] for each collector. A family name or a
/// label set that is already present is not added twice.
#[derive(Clone, Debug, Default)]
pub struct Families {
    list: Vec<MetricFamily>,
    index: HashMap<String, usize>,
    series: HashSet<String>,
}

impl Families {
    /// No families.
    pub fn new() -> Self {
        Families::default()
    }

    /// The families in the order they were first added.
    pub fn as_slice(&self) -> &[MetricFamily] {
        &self.list
    }

    /// Adds a family built elsewhere (self-metrics), or its samples to the family of that name.
    pub fn push(&mut self, family: MetricFamily) {
        match self.index.get(&family.name) {
            Some(&i) => self.list[i].samples.extend(family.samples),
            None => {
                self.index.insert(family.name.clone(), self.list.len());
                self.list.push(family);
            }
        }
    }

    /// Adds the families of `other` after these.
    pub fn extend(&mut self, other: Families) {
        for f in other.list {
            self.push(f);
        }
    }

    fn family(
        &mut self,
        name: &str,
        help: &str,
        kind: MetricKind,
        unit: Option<&'static str>,
    ) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.index.insert(name.to_string(), self.list.len());
        self.list.push(MetricFamily {
            name: name.to_string(),
            help: help.to_string(),
            kind,
            unit,
            samples: Vec::new(),
        });
        self.list.len() - 1
    }
}

/// Turns snapshots into metric families, keeping cumulative series monotonic across collections.
#[derive(Clone, Debug, Default)]
pub struct Exporter {
    guard: CounterGuard,
}

impl Exporter {
    /// An exporter with no history.
    pub fn new() -> Self {
        Exporter::default()
    }

    /// Starts a collection (call once before rendering the collectors of one scrape).
    pub fn begin(&mut self) {
        self.guard.begin();
    }

    /// The number of cumulative series tracked.
    pub fn tracked_series(&self) -> usize {
        self.guard.len()
    }

    /// Adds the samples of `collector` found in `snapshot` to `out`.
    pub fn render(&mut self, collector: &CollectorPlan, snapshot: &Snapshot, out: &mut Families) {
        for op in &collector.objects {
            let Some(object) = snapshot.object_by_name(&op.object) else {
                continue;
            };
            self.render_object(op, snapshot, object, out);
        }
    }

    fn render_object(
        &mut self,
        op: &ObjectPlan,
        snapshot: &Snapshot,
        object: &Object,
        out: &mut Families,
    ) {
        let positions: Vec<(Option<usize>, Option<usize>)> = op
            .series
            .iter()
            .map(|s| {
                (
                    object.counter_position_by_name(&s.counter),
                    s.counter2
                        .as_deref()
                        .and_then(|c| object.counter_position_by_name(c)),
                )
            })
            .collect();
        match &object.data {
            ObjectData::Single(values) => {
                self.render_values(
                    op,
                    &positions,
                    snapshot,
                    object,
                    values,
                    op.labels.clone(),
                    out,
                );
            }
            ObjectData::Instances(instances) => {
                let pid_pos = if op.process_id {
                    object.counter_position_by_name(ID_PROCESS)
                } else {
                    None
                };
                for inst in instances {
                    let Some(labels) = instance_labels(op, inst, pid_pos) else {
                        continue;
                    };
                    self.render_values(
                        op,
                        &positions,
                        snapshot,
                        object,
                        inst.values(),
                        labels,
                        out,
                    );
                }
            }
            ObjectData::MetadataOnly { .. } => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn render_values(
        &mut self,
        op: &ObjectPlan,
        positions: &[(Option<usize>, Option<usize>)],
        snapshot: &Snapshot,
        object: &Object,
        values: &[Value],
        labels: Vec<(String, String)>,
        out: &mut Families,
    ) {
        for (s, &(pos, pos2)) in op.series.iter().zip(positions) {
            let Some(pos) = pos else { continue };
            let Some(def) = object.counters.get(pos) else {
                continue;
            };
            let Some(raw) = values.get(pos) else { continue };
            let Some(n) = raw.as_u64() else { continue };
            let n32 = matches!(raw, Value::U32(_));
            let mut sample_labels = labels.clone();
            sample_labels.extend(s.labels.iter().cloned());
            let key = series_key(&s.family, &sample_labels);
            if !out.series.insert(key.clone()) {
                continue; // the same series twice (PID 0 duplicates): the first one counts
            }
            let base = || {
                let b = def.base.and_then(|b| values.get(b))?;
                Some((b.as_u64()?, matches!(b, Value::U32(_))))
            };
            let time_base = snapshot.time_base(object, def.counter_type) as f64;
            let rule = &s.rule;
            let guarded = |g: &mut CounterGuard, k: &str, v: u64, bits32: bool| {
                if rule.cumulative {
                    g.value(k, v, bits32)
                } else {
                    v
                }
            };
            let samples: Vec<(&'static str, f64)> = match rule.conversion {
                Conversion::Scaled { factor } => {
                    vec![("", guarded(&mut self.guard, &key, n, n32) as f64 * factor)]
                }
                Conversion::PerTimeBase => {
                    if time_base <= 0.0 {
                        continue;
                    }
                    vec![(
                        "",
                        guarded(&mut self.guard, &key, n, n32) as f64 / time_base,
                    )]
                }
                Conversion::Base { factor } => {
                    let Some((b, b32)) = base() else { continue };
                    vec![("", guarded(&mut self.guard, &key, b, b32) as f64 * factor)]
                }
                Conversion::Summary { time } => {
                    let Some((b, b32)) = base() else { continue };
                    let divisor = if time { time_base } else { 1.0 };
                    if divisor <= 0.0 {
                        continue;
                    }
                    let sum = guarded(&mut self.guard, &format!("{key}\u{1}sum"), n, n32) as f64
                        / divisor;
                    let count =
                        guarded(&mut self.guard, &format!("{key}\u{1}count"), b, b32) as f64;
                    vec![("_sum", sum), ("_count", count)]
                }
                Conversion::Complement => {
                    let Some(raw) = snapshot.raw_counter(object, values, pos) else {
                        continue;
                    };
                    if time_base <= 0.0 || raw.second < raw.first {
                        continue;
                    }
                    let v = (raw.second - raw.first) as u64;
                    vec![(
                        "",
                        guarded(&mut self.guard, &key, v, false) as f64 / time_base,
                    )]
                }
                Conversion::FreeSpaceSize => {
                    let Some((b, _)) = base() else { continue };
                    let Some(free_mb) = pos2.and_then(|p| values.get(p)).and_then(Value::as_u64)
                    else {
                        continue;
                    };
                    if n == 0 {
                        continue;
                    }
                    vec![("", free_mb as f64 * 1048576.0 * b as f64 / n as f64)]
                }
                Conversion::StartTime => {
                    if object.perf_freq <= 0 {
                        continue;
                    }
                    // In 100 ns units since 1970, with integers (a FILETIME does not fit an f64's
                    // 53 bits exactly).
                    let elapsed = (i128::from(object.perf_time) - i128::from(n))
                        * i128::from(FREQ_100NS)
                        / i128::from(object.perf_freq);
                    let start =
                        i128::from(snapshot.perf_time_100ns - FILETIME_UNIX_EPOCH) - elapsed;
                    let secs = start.div_euclid(i128::from(FREQ_100NS));
                    let frac = start.rem_euclid(i128::from(FREQ_100NS));
                    vec![("", secs as f64 + frac as f64 / FREQ_100NS as f64)]
                }
            };
            let i = out.family(&s.family, &s.help, rule.kind, rule.unit);
            for (suffix, value) in samples {
                out.list[i]
                    .samples
                    .push(MetricSample::new(suffix, sample_labels.clone(), value));
            }
        }
    }
}

fn series_key(family: &str, labels: &[(String, String)]) -> String {
    let mut k = String::with_capacity(family.len() + 32);
    k.push_str(family);
    for (n, v) in labels {
        k.push('\u{0}');
        k.push_str(n);
        k.push('=');
        k.push_str(v);
    }
    k
}

/// The labels of an instance, or `None` when the instance is filtered out.
fn instance_labels(
    op: &ObjectPlan,
    inst: &Instance,
    pid_pos: Option<usize>,
) -> Option<Vec<(String, String)>> {
    let full = inst.name();
    if !op.include_total && full.ends_with("_Total") {
        return None;
    }
    if !op.instances.is_empty() && !op.instances.iter().any(|p| matches_instance(p, inst)) {
        return None;
    }
    if op
        .exclude_instances
        .iter()
        .any(|p| matches_instance(p, inst))
    {
        return None;
    }
    // The instance's own name, without the parent part PDH puts in front.
    let own = match inst.parent() {
        Some(p) => full
            .strip_prefix(p)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(full),
        None => full,
    };
    let mut labels = Vec::with_capacity(3 + op.labels.len());
    if op.process_id {
        let pid = pid_pos
            .and_then(|p| inst.values().get(p))
            .and_then(Value::as_u64)
            .or_else(|| u64::try_from(inst.unique_id).ok());
        labels.push((op.instance_label.clone(), inst.raw_name().to_owned()));
        if let Some(p) = inst.parent() {
            labels.push(("parent".into(), p.to_owned()));
        }
        if let Some(pid) = pid {
            labels.push(("process_id".into(), pid.to_string()));
        }
    } else {
        labels.push((op.instance_label.clone(), own.to_string()));
        if let Some(p) = inst.parent() {
            labels.push(("parent".into(), p.to_owned()));
        }
    }
    labels.extend(op.labels.iter().cloned());
    Some(labels)
}

fn matches_instance(pattern: &str, inst: &Instance) -> bool {
    wildcard_match(pattern, inst.name()) || wildcard_match(pattern, inst.raw_name())
}
