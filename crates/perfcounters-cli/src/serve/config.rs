//! `serve --config FILE`: what to export, in YAML.
//!
//! ```yaml
//! prefix: perfcounters            # metric name prefix (default perfcounters)
//! defaults: true                  # keep the default set besides the objects below
//!                                 # (default: true only when no objects or paths are given)
//! include_total: false            # export _Total instances of every object
//! paths:                          # counter paths, wildcards allowed
//!   - '\Processor(*)\% User Time'
//!   - '\Memory\*'
//! objects:
//!   - object: Processor Information
//!     collector: cpu              # the collector label of the self-metrics
//!     metric: cpu                 # perfcounters_cpu_<counter>
//!     instances: ["*"]            # instance name patterns (default all)
//!     exclude_instances: []
//!     include_total: false
//!     instance_label: core        # default instance_name
//!     labels: {site: a}
//!     counters:
//!       - '% User Time'           # a name or a pattern
//!       - counter: '% Idle Time'
//!         metric: cpu_idle_seconds_total
//!         labels: {mode: idle}
//! process:                        # the Process object, opt-in
//!   instances: ['nginx*', 'postgres']
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use perfcounters::export::{CounterConfig, ExportConfig, ObjectConfig};
use perfcounters::path::eq_ignore_case;
use perfcounters::source::Catalog;
use perfcounters::CounterPath;
use serde::Deserialize;

/// The configuration file.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// Metric name prefix.
    pub prefix: Option<String>,
    /// Keep the default set besides the listed objects and paths.
    pub defaults: Option<bool>,
    /// Export `_Total` instances.
    #[serde(default)]
    pub include_total: bool,
    /// Counter paths.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Objects.
    #[serde(default)]
    pub objects: Vec<ObjectEntry>,
    /// The Process object.
    pub process: Option<ProcessEntry>,
}

/// One object of the configuration.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ObjectEntry {
    object: String,
    collector: Option<String>,
    metric: Option<String>,
    #[serde(default)]
    instances: Vec<String>,
    #[serde(default)]
    exclude_instances: Vec<String>,
    include_total: Option<bool>,
    instance_label: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    counters: Vec<CounterEntry>,
}

/// A counter: its name (or pattern), or a mapping with a metric name and labels.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CounterEntry {
    /// A name or a pattern.
    Name(String),
    /// With a metric name and labels.
    Full {
        /// The counter name or pattern.
        counter: String,
        /// The full metric name.
        metric: Option<String>,
        /// Labels.
        #[serde(default)]
        labels: BTreeMap<String, String>,
    },
}

/// The Process object's filter.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProcessEntry {
    /// Instance name patterns (default all).
    #[serde(default)]
    pub instances: Vec<String>,
}

impl ServeConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// Parses the YAML text (errors name the line and column).
    pub fn parse(text: &str) -> Result<Self> {
        let config: ServeConfig = serde_yaml_ng::from_str(text)?;
        for label in config
            .objects
            .iter()
            .flat_map(|o| o.instance_label.iter().chain(o.labels.keys()))
        {
            check_label(label)?;
        }
        for metric in config.objects.iter().flat_map(|o| {
            o.metric
                .iter()
                .chain(o.counters.iter().filter_map(|c| match c {
                    CounterEntry::Full { metric, .. } => metric.as_ref(),
                    CounterEntry::Name(_) => None,
                }))
        }) {
            check_metric(metric)?;
        }
        if let Some(p) = &config.prefix {
            check_metric(p)?;
        }
        Ok(config)
    }

    /// Replaces object and counter names by the English names `english` gives (the Windows sources
    /// report English names on every language, and a configuration may use the machine's). Names
    /// with wildcards and names `english` does not know are kept.
    // Only the Windows source has name tables in the machine's language.
    #[cfg_attr(not(windows), allow(dead_code))]
    pub fn translate(&mut self, mut english: impl FnMut(&str) -> Option<String>) {
        let mut tr = |name: &mut String| {
            if !name.contains('*') {
                if let Some(e) = english(name) {
                    *name = e;
                }
            }
        };
        for o in &mut self.objects {
            tr(&mut o.object);
            for c in &mut o.counters {
                match c {
                    CounterEntry::Name(n) => tr(n),
                    CounterEntry::Full { counter, .. } => tr(counter),
                }
            }
        }
        for p in &mut self.paths {
            if let Ok(mut path) = CounterPath::parse(p) {
                tr(&mut path.object);
                tr(&mut path.counter);
                *p = path.to_string();
            }
        }
    }

    /// The export configuration for a source with this catalog.
    pub fn export_config(
        &self,
        catalog: &Catalog,
        process: Option<&[String]>,
    ) -> Result<ExportConfig> {
        let listed = !self.objects.is_empty() || !self.paths.is_empty();
        let mut config = if self.defaults.unwrap_or(!listed) {
            ExportConfig::default_set(catalog)
        } else {
            ExportConfig::default()
        };
        if let Some(p) = &self.prefix {
            config.prefix = p.clone();
        }
        for o in &self.objects {
            config
                .objects
                .retain(|d| !eq_ignore_case(&d.object, &o.object));
            config.objects.push(ObjectConfig {
                object: o.object.clone(),
                collector: o.collector.clone(),
                metric: o.metric.clone(),
                instances: o.instances.clone(),
                exclude_instances: o.exclude_instances.clone(),
                include_total: o.include_total.unwrap_or(self.include_total),
                instance_label: o.instance_label.clone(),
                labels: o
                    .labels
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                counters: o
                    .counters
                    .iter()
                    .map(|c| match c {
                        CounterEntry::Name(n) => CounterConfig::pattern(n),
                        CounterEntry::Full {
                            counter,
                            metric,
                            labels,
                        } => CounterConfig {
                            counter: counter.clone(),
                            metric: metric.clone(),
                            labels: labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                        },
                    })
                    .collect(),
            });
        }
        for p in &self.paths {
            let path = CounterPath::parse(p).with_context(|| format!("counter path {p}"))?;
            let instance = path.instance_string();
            let entry = match config
                .objects
                .iter_mut()
                .find(|o| eq_ignore_case(&o.object, &path.object) && o.metric.is_none())
            {
                Some(e) => e,
                None => {
                    config.objects.push(ObjectConfig {
                        object: path.object.clone(),
                        include_total: self.include_total,
                        ..Default::default()
                    });
                    config.objects.last_mut().expect("pushed")
                }
            };
            if let Some(i) = instance {
                if !entry.instances.iter().any(|x| x == &i) && i != "*" {
                    entry.instances.push(i.clone());
                }
                if i.ends_with("_Total") {
                    entry.include_total = true;
                }
            }
            entry.counters.push(CounterConfig::pattern(&path.counter));
        }
        if self.include_total {
            for o in &mut config.objects {
                o.include_total = true;
            }
        }
        let process = process
            .map(<[String]>::to_vec)
            .or_else(|| self.process.as_ref().map(|p| p.instances.clone()));
        if let Some(instances) = process {
            config
                .objects
                .retain(|o| !eq_ignore_case(&o.object, "Process"));
            config = config.with_process(&instances);
        }
        Ok(config)
    }
}

fn check_label(name: &str) -> Result<()> {
    let ok = name
        .chars()
        .enumerate()
        .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
    if name.is_empty() || !ok || name.starts_with("__") {
        bail!("invalid label name \"{name}\": use [a-zA-Z_][a-zA-Z0-9_]*, not starting with __");
    }
    if name == "instance" || name == "job" {
        bail!("label name \"{name}\" is Prometheus' own target label; use another (instance_name)");
    }
    Ok(())
}

fn check_metric(name: &str) -> Result<()> {
    let ok = name.chars().enumerate().all(|(i, c)| {
        c == '_' || c == ':' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
    });
    if name.is_empty() || !ok {
        bail!("invalid metric name \"{name}\": use [a-zA-Z_:][a-zA-Z0-9_:]*");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_line_and_column() {
        let e = ServeConfig::parse("objects:\n  - object: Memory\n    colour: red\n").unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("unknown field `colour`"), "{msg}");
        assert!(msg.contains("line 3 column 5"), "{msg}");
        let e = ServeConfig::parse("objects:\n  - object: Memory\n    instance_label: instance\n")
            .unwrap_err();
        assert!(format!("{e:#}").contains("Prometheus' own target label"));
        let e = ServeConfig::parse("prefix: 'my-exporter'\n").unwrap_err();
        assert!(format!("{e:#}").contains("invalid metric name \"my-exporter\""));
    }

    #[test]
    fn localized_names_become_english() {
        let mut c = ServeConfig::parse(
            "paths: ['\\Prozessor(*)\\Prozessorzeit (%)', '\\Speicher\\*']\n\
             objects:\n  - object: Arbeitsspeicher\n    counters: ['Verfügbare Bytes', {counter: 'Seiten/s'}, 'Cache*']\n",
        )
        .unwrap();
        let table = [
            ("Prozessor", "Processor"),
            ("Prozessorzeit (%)", "% Processor Time"),
            ("Arbeitsspeicher", "Memory"),
            ("Verfügbare Bytes", "Available Bytes"),
            ("Seiten/s", "Pages/sec"),
        ];
        c.translate(|n| {
            table
                .iter()
                .find(|(l, _)| *l == n)
                .map(|(_, e)| e.to_string())
        });
        assert_eq!(
            c.paths,
            ["\\Processor(*)\\% Processor Time", "\\Speicher\\*"]
        );
        assert_eq!(c.objects[0].object, "Memory");
        assert_eq!(
            c.objects[0].counters,
            [
                CounterEntry::Name("Available Bytes".into()),
                CounterEntry::Full {
                    counter: "Pages/sec".into(),
                    metric: None,
                    labels: BTreeMap::new()
                },
                CounterEntry::Name("Cache*".into()),
            ]
        );
    }

    #[test]
    fn paths_objects_and_process() {
        let c = ServeConfig::parse(
            "paths: ['\\Processor(_Total)\\% User Time', '\\Memory\\Available*']\n\
             objects:\n  - object: System\n    metric: sys\n    counters: ['Processes', {counter: Threads, metric: sys_threads, labels: {a: b}}]\n\
             process: {instances: ['nginx*']}\n",
        )
        .unwrap();
        let catalog = Catalog::default();
        let e = c.export_config(&catalog, None).unwrap();
        let objects: Vec<(&str, Vec<&str>, Vec<&str>, bool)> = e
            .objects
            .iter()
            .map(|o| {
                (
                    o.object.as_str(),
                    o.instances.iter().map(String::as_str).collect(),
                    o.counters.iter().map(|c| c.counter.as_str()).collect(),
                    o.include_total,
                )
            })
            .collect();
        assert_eq!(
            objects,
            [
                ("System", vec![], vec!["Processes", "Threads"], false),
                ("Processor", vec!["_Total"], vec!["% User Time"], true),
                ("Memory", vec![], vec!["Available*"], false),
                ("Process", vec!["nginx*"], vec![], false),
            ]
        );
        assert_eq!(
            e.objects[0].counters[1].metric.as_deref(),
            Some("sys_threads")
        );
        // --process on the command line replaces the file's filter.
        let e = c.export_config(&catalog, Some(&["x".to_string()])).unwrap();
        assert_eq!(e.objects.last().unwrap().instances, ["x"]);
    }
}
