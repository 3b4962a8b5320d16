//! The counter model as OpenTelemetry metrics: OTLP `ExportMetricsServiceRequest`s (feature
//! `otlp`), built with the generated protobuf types of the `opentelemetry-proto` crate. Nothing
//! here does I/O: the command delivers the encoded requests (OTLP/HTTP, `/v1/metrics`).
//!
//! The metric model, one place for both inputs:
//!
//! * **live** ([`families_request`]): the [`MetricFamily`]s that `/metrics` serves. A Prometheus
//!   counter becomes a cumulative monotonic **Sum** whose `start_time_unix_nano` is the start the
//!   caller keeps (stable across pushes); a gauge a **Gauge**; a `_sum`/`_count` pair a
//!   **Summary** without quantiles.
//! * **logs** ([`OtlpLogWriter`], a [`LogWriter`](crate::log::LogWriter) of the log pipeline):
//!   every value a log's record holds becomes a **Gauge** point of the value relog writes (the
//!   PDH-formatted value; the only form of a text log, which holds no raw counts); the raw count
//!   of a cumulative counter (a rate or a timer of a `.blg` or a SQL log) becomes, besides, a
//!   cumulative monotonic **Sum** converted as `/metrics` converts it (seconds for timers), whose
//!   start time is the first record of the series (a new start after a counter goes back).
//!   Times are the log's own, as UTC instants.
//!
//! Names are the names `/metrics` uses ([`otel_name`]): the namespace separated by a dot
//! (`perfcounters.`), a Sum's name without `_total`. Instances and parents are attributes
//! (`instance_name`, `parent`); the resource says `service.name`, `host.name` (for a log, its
//! machine) and `os.type`.

mod logs;
mod wire;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::metric;
use opentelemetry_proto::tonic::resource::v1::Resource;

pub use logs::{OtlpLogWriter, OtlpSink};
/// The generated OTLP protobuf types (`opentelemetry-proto`'s prost messages), for callers that
/// decode or inspect the requests.
pub use opentelemetry_proto::tonic as proto;
/// `prost::Message`: `encode_to_vec` and `decode` of the [`proto`] types.
pub use prost::Message;

use super::compat::otel::otel_name_of;
use super::{MetricFamily, MetricKind};
use crate::log::model::LogTime;
use crate::snapshot::FILETIME_UNIX_EPOCH;

/// The instrumentation scope of every request.
pub const SCOPE_NAME: &str = "perfcounters";

/// The `service.name` when none is configured.
pub const DEFAULT_SERVICE_NAME: &str = "perfcounters";

/// The resource attributes of the requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtlpResource {
    /// `service.name`.
    pub service_name: String,
    /// `host.name`: the machine (a log's own machine, where its paths name one, replaces it).
    pub host_name: Option<String>,
    /// `os.type` (`linux`, `windows`).
    pub os_type: Option<String>,
    /// Further attributes (`OTEL_RESOURCE_ATTRIBUTES`), in order; a key named above overrides it.
    pub attributes: Vec<(String, String)>,
}

impl Default for OtlpResource {
    fn default() -> Self {
        OtlpResource {
            service_name: DEFAULT_SERVICE_NAME.into(),
            host_name: None,
            os_type: None,
            attributes: Vec::new(),
        }
    }
}

impl OtlpResource {
    /// The resource of this machine: `os.type` the one the library was built for, `host.name`
    /// `host`.
    pub fn local(host: Option<String>) -> Self {
        OtlpResource {
            host_name: host,
            os_type: Some(os_type().into()),
            ..OtlpResource::default()
        }
    }

    /// The protobuf resource, with `host` as `host.name` when given.
    pub fn to_proto(&self, host: Option<&str>) -> Resource {
        let mut attributes: Vec<KeyValue> = Vec::with_capacity(3 + self.attributes.len());
        let mut put = |key: &str, value: &str| {
            if let Some(kv) = attributes.iter_mut().find(|kv| kv.key == key) {
                kv.value = Some(string_value(value));
            } else {
                attributes.push(attribute(key, value));
            }
        };
        for (k, v) in &self.attributes {
            put(k, v);
        }
        put("service.name", &self.service_name);
        if let Some(h) = host.or(self.host_name.as_deref()) {
            put("host.name", h);
        }
        if let Some(os) = &self.os_type {
            put("os.type", os);
        }
        Resource {
            attributes,
            ..Resource::default()
        }
    }
}

/// The `os.type` of the platform the library was built for (OpenTelemetry's values).
pub fn os_type() -> &'static str {
    if cfg!(windows) {
        "windows"
    } else if cfg!(target_os = "macos") {
        "darwin"
    } else {
        "linux"
    }
}

/// A string attribute.
pub fn attribute(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(string_value(value)),
        ..KeyValue::default()
    }
}

fn string_value(value: &str) -> AnyValue {
    AnyValue {
        value: Some(any_value::Value::StringValue(value.to_owned())),
    }
}

/// The Unix time in nanoseconds of a log time (a FILETIME, UTC); 0 before 1970.
pub fn unix_nanos(time: LogTime) -> u64 {
    u64::try_from(time.0.saturating_sub(FILETIME_UNIX_EPOCH))
        .unwrap_or(0)
        .saturating_mul(100)
}

/// The OTLP name of a `/metrics` family name: the OpenTelemetry name of a family of
/// [`compat::otel`](super::compat::otel::otel) (`system_cpu_time_seconds_total` →
/// `system.cpu.time`); else the prefix's separator a dot (`perfcounters_memory_available_bytes`
/// → `perfcounters.memory_available_bytes`) and a counter's name without `_total`.
pub fn otel_name(name: &str, kind: MetricKind, prefix: &str) -> String {
    if let Some((otel, _)) = otel_name_of(name) {
        return otel.to_owned();
    }
    let name = match kind {
        MetricKind::Counter => name.strip_suffix("_total").unwrap_or(name),
        _ => name,
    };
    match name
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('_'))
    {
        Some(rest) if !prefix.is_empty() => format!("{prefix}.{rest}"),
        _ => name.to_owned(),
    }
}

/// The OTLP unit of a `/metrics` unit suffix (UCUM: `s`, `By`).
pub fn otel_unit(unit: Option<&str>) -> &'static str {
    match unit {
        Some("seconds") => "s",
        Some("bytes") => "By",
        _ => "",
    }
}

/// The number of data points of a request.
pub fn point_count(request: &ExportMetricsServiceRequest) -> usize {
    request
        .resource_metrics
        .iter()
        .flat_map(|r| &r.scope_metrics)
        .flat_map(|s| &s.metrics)
        .map(|m| match &m.data {
            Some(metric::Data::Gauge(g)) => g.data_points.len(),
            Some(metric::Data::Sum(s)) => s.data_points.len(),
            Some(metric::Data::Summary(s)) => s.data_points.len(),
            Some(metric::Data::Histogram(h)) => h.data_points.len(),
            Some(metric::Data::ExponentialHistogram(h)) => h.data_points.len(),
            None => 0,
        })
        .sum()
}

/// A sample's label: name and value.
type Label = (String, String);

/// An encoded `ExportMetricsServiceRequest` (protobuf) and the number of data points it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtlpRequest {
    /// The request, protobuf-encoded.
    pub body: Vec<u8>,
    /// Its data points.
    pub points: usize,
}

/// One request of a collection of `/metrics` families at `time` (Unix ns) under `resource`:
/// counters as cumulative monotonic Sums starting at `start` (the caller keeps it stable from push
/// to push), gauges as Gauges, summaries as Summaries (`_sum` and `_count` of the same labels in one
/// point). Names by [`otel_name`] with `prefix`; labels become attributes. A caller that encodes
/// such a collection every interval keeps a [`FamiliesEncoder`] instead.
pub fn families_request<'a>(
    families: impl IntoIterator<Item = &'a MetricFamily>,
    resource: &OtlpResource,
    prefix: &str,
    start: u64,
    time: u64,
) -> OtlpRequest {
    FamiliesEncoder::new(resource, prefix).encode(families, start, time)
}

/// [`families_request`] for a caller that encodes a collection of the same families every
/// interval (`serve --otlp`): what does not change from one request to the next is encoded once
/// and kept (the resource and the scope; each metric's name, description and unit, by the family's
/// position, checked against the family's name, help, unit and type every time), and the buffers
/// keep their room. The requests are those of [`families_request`], byte for byte.
#[derive(Clone, Debug)]
pub struct FamiliesEncoder {
    prefix: String,
    /// `ResourceMetrics.resource`, encoded.
    resource: Vec<u8>,
    /// `ScopeMetrics.scope`, encoded.
    scope: Vec<u8>,
    /// The metric heads of the last request's families, in their order.
    heads: Vec<Head>,
    metrics: Vec<u8>,
    data: Vec<u8>,
    attributes: Vec<u8>,
}

/// A family's metric head ([`wire::metric_head`]) and what it was made of.
#[derive(Clone, Debug)]
struct Head {
    name: String,
    help: String,
    kind: MetricKind,
    unit: Option<&'static str>,
    data: wire::Data,
    bytes: Vec<u8>,
}

impl Head {
    fn of(f: &MetricFamily, prefix: &str) -> Head {
        let name = otel_name(&f.name, f.kind, prefix);
        let unit = otel_name_of(&f.name).map_or_else(|| otel_unit(f.unit), |(_, unit)| unit);
        Head {
            name: f.name.clone(),
            help: f.help.clone(),
            kind: f.kind,
            unit: f.unit,
            data: match f.kind {
                MetricKind::Counter => wire::Data::CumulativeSum,
                MetricKind::Summary => wire::Data::Summary,
                MetricKind::Gauge => wire::Data::Gauge,
            },
            bytes: wire::metric_head(&name, &f.help, unit),
        }
    }

    fn is_of(&self, f: &MetricFamily) -> bool {
        self.name == f.name && self.kind == f.kind && self.unit == f.unit && self.help == f.help
    }
}

impl FamiliesEncoder {
    /// An encoder of requests under `resource`, with names by [`otel_name`] with `prefix`.
    pub fn new(resource: &OtlpResource, prefix: &str) -> FamiliesEncoder {
        FamiliesEncoder {
            prefix: prefix.to_owned(),
            resource: wire::resource_head(&resource.to_proto(None)),
            scope: wire::scope_head(),
            heads: Vec::new(),
            metrics: Vec::new(),
            data: Vec::new(),
            attributes: Vec::new(),
        }
    }

    /// One request of `families` at `time`, counters starting at `start` (as [`families_request`]).
    pub fn encode<'a>(
        &mut self,
        families: impl IntoIterator<Item = &'a MetricFamily>,
        start: u64,
        time: u64,
    ) -> OtlpRequest {
        let FamiliesEncoder {
            prefix,
            resource,
            scope,
            heads,
            metrics,
            data,
            attributes,
        } = self;
        metrics.clear();
        let mut points = 0;
        let encode_labels = |out: &mut Vec<u8>, labels: &[Label]| {
            out.clear();
            for (k, v) in labels {
                wire::string_attribute(out, 7, k, v);
            }
        };
        for (i, f) in families.into_iter().enumerate() {
            match heads.get(i) {
                Some(h) if h.is_of(f) => {}
                Some(_) => heads[i] = Head::of(f, prefix),
                None => heads.push(Head::of(f, prefix)),
            }
            let head = &heads[i];
            if head.data == wire::Data::Summary {
                // One point per label set: its `_sum` and `_count` samples, in the order first seen.
                let mut keys: Vec<(&[Label], f64, u64)> = Vec::new();
                for s in &f.samples {
                    let i = match keys.iter().position(|k| k.0 == s.labels.as_slice()) {
                        Some(i) => i,
                        None => {
                            keys.push((&s.labels, 0.0, 0));
                            keys.len() - 1
                        }
                    };
                    match s.suffix {
                        "_sum" => keys[i].1 = s.value,
                        "_count" => keys[i].2 = s.value as u64,
                        _ => {}
                    }
                }
                for (labels, sum, count) in keys {
                    encode_labels(attributes, labels);
                    wire::summary_point(data, attributes, start, time, count, sum);
                    points += 1;
                }
            } else {
                let start = if head.data == wire::Data::CumulativeSum {
                    start
                } else {
                    0
                };
                for s in &f.samples {
                    encode_labels(attributes, &s.labels);
                    wire::point(data, attributes, start, time, s.value);
                    points += 1;
                }
            }
            wire::metric(metrics, &head.bytes, head.data, data);
        }
        let mut body = Vec::with_capacity(metrics.len() + resource.len() + scope.len() + 16);
        wire::resource_metrics_of(&mut body, resource, scope, metrics);
        OtlpRequest { body, points }
    }
}
