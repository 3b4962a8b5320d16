//! Log records as OTLP requests: the sink of the log pipeline that `relog -f otlp` writes to.

use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::metrics::v1::{AggregationTemporality, Metric};
use prost::Message;

use super::{attribute, otel_unit, unix_nanos, OtlpResource, SCOPE_NAME};
use crate::export::naming::{rule_for, snake, Conversion};
use crate::export::MetricKind;
use crate::log::model::{Cell, LogCounter, LogHeader, LogWriter, Record};
use crate::log::LogError;

/// Where an [`OtlpLogWriter`] hands its requests: the delivery (HTTP, a queue, retries) is the
/// caller's.
pub trait OtlpSink {
    /// Delivers one request, protobuf-encoded, holding `points` data points.
    ///
    /// # Errors
    /// The request cannot be delivered (the writer stops: the error ends the copy).
    fn send(&mut self, body: Vec<u8>, points: usize) -> Result<(), LogError>;

    /// Every request was handed over: waits until they are delivered (or given up).
    ///
    /// # Errors
    /// Requests were not delivered.
    fn finish(&mut self) -> Result<(), LogError>;
}

/// A metric of a request being filled: its host (an index into the writer's hosts), the encoded
/// fields before its data (name, description, unit), and its data points, encoded as they go.
#[derive(Debug)]
struct Slot {
    host: usize,
    name: String,
    head: Vec<u8>,
    sum: bool,
    points: Vec<u8>,
}

/// The cumulative Sum of a column with raw samples.
#[derive(Debug)]
struct SumPlan {
    slot: usize,
    /// The raw count times this is the value (`1 / F` for a timer).
    factor: f64,
    /// The start of the series (Unix ns) and its last raw count, once a point was sent.
    start: Option<(u64, i64)>,
}

/// What one column becomes.
#[derive(Debug)]
struct ColumnPlan {
    gauge: usize,
    sum: Option<SumPlan>,
    /// The attributes, encoded as fields of a `NumberDataPoint` (written once, copied per point).
    attributes: Vec<u8>,
}

/// The log pipeline's OTLP sink: each record's values as Gauge points, the raw counts of
/// cumulative counters as Sum points (the model: [`super`]), in requests of about
/// `batch_points` points handed to an [`OtlpSink`].
///
/// A log has millions of points that differ only in time and value: each column's attributes are
/// encoded once, and each point is written straight into its metric's bytes (the
/// `NumberDataPoint` fields of the `opentelemetry-proto` messages, in their field order); the
/// request around them is assembled from the messages' own encodings.
#[derive(Debug)]
pub struct OtlpLogWriter<S> {
    sink: S,
    resource: OtlpResource,
    prefix: String,
    batch_points: usize,
    hosts: Vec<Option<String>>,
    slots: Vec<Slot>,
    columns: Vec<ColumnPlan>,
    pending: usize,
    sent: u64,
}

impl<S: OtlpSink> OtlpLogWriter<S> {
    /// A writer naming its metrics `prefix.…` (`perfcounters`), under `resource` (`host.name`
    /// replaced by the machine a column's path names), sending requests of `batch_points` points
    /// (at least 1) to `sink`.
    pub fn new(sink: S, resource: OtlpResource, prefix: &str, batch_points: usize) -> Self {
        OtlpLogWriter {
            sink,
            resource,
            prefix: prefix.to_owned(),
            batch_points: batch_points.max(1),
            hosts: Vec::new(),
            slots: Vec::new(),
            columns: Vec::new(),
            pending: 0,
            sent: 0,
        }
    }

    /// The data points handed to the sink so far.
    pub fn points_sent(&self) -> u64 {
        self.sent
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The slot of metric `name` of `host`, made on first use.
    fn slot(&mut self, host: usize, name: String, make: impl FnOnce(String) -> Slot) -> usize {
        if let Some(i) = self
            .slots
            .iter()
            .position(|s| s.host == host && s.name == name)
        {
            return i;
        }
        let mut slot = make(name);
        slot.host = host;
        self.slots.push(slot);
        self.slots.len() - 1
    }

    fn plan_column(&mut self, column: &LogCounter) -> ColumnPlan {
        let path = &column.path;
        let machine = path.machine.clone();
        let host = match self.hosts.iter().position(|h| *h == machine) {
            Some(i) => i,
            None => {
                self.hosts.push(machine);
                self.hosts.len() - 1
            }
        };
        let object = snake(&path.object);
        let base = format!("{}.{}_", self.prefix, object);
        let description = match &path.instance {
            Some(_) => format!("\\{}(*)\\{}", path.object, path.counter),
            None => format!("\\{}\\{}", path.object, path.counter),
        };
        let gauge_name = format!("{base}{}", snake(&path.counter));
        let desc = description.clone();
        let gauge = self.slot(host, gauge_name.clone(), |name| Slot {
            host,
            head: metric_head(&name, desc, ""),
            name,
            sum: false,
            points: Vec::new(),
        });
        let sum = column.info.and_then(|info| {
            let rule = rule_for(&path.counter, info.counter_type)
                .into_iter()
                .find(|r| r.cumulative && r.kind == MetricKind::Counter)?;
            let factor = match rule.conversion {
                Conversion::Scaled { factor } => factor,
                Conversion::PerTimeBase if info.time_base > 0 => 1.0 / info.time_base as f64,
                _ => return None,
            };
            let name = format!(
                "{base}{}",
                rule.name.strip_suffix("_total").unwrap_or(&rule.name)
            );
            if name == gauge_name {
                return None;
            }
            let slot = self.slot(host, name, |name| Slot {
                host,
                head: metric_head(
                    &name,
                    format!("{description} ({}), cumulative", info.counter_type),
                    otel_unit(rule.unit),
                ),
                name,
                sum: true,
                points: Vec::new(),
            });
            Some(SumPlan {
                slot,
                factor,
                start: None,
            })
        });
        let mut attributes = Vec::new();
        if let Some(instance) = &path.instance {
            let name = match path.index {
                Some(n) => format!("{instance}#{n}"),
                None => instance.clone(),
            };
            field_message(&mut attributes, 7, &attribute("instance_name", &name));
        }
        if let Some(parent) = &path.parent {
            field_message(&mut attributes, 7, &attribute("parent", parent));
        }
        ColumnPlan {
            gauge,
            sum,
            attributes,
        }
    }

    /// Encodes the points gathered into one request and hands it to the sink: an
    /// `ExportMetricsServiceRequest` of one `ResourceMetrics` per host, each of one
    /// `ScopeMetrics`, each metric a Gauge or a cumulative monotonic Sum of its points.
    fn flush(&mut self) -> Result<(), LogError> {
        if self.pending == 0 {
            return Ok(());
        }
        let scope = InstrumentationScope {
            name: SCOPE_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            ..InstrumentationScope::default()
        };
        let mut request = Vec::with_capacity(self.pending * 48 + 1024);
        for (h, host) in self.hosts.iter().enumerate() {
            let mut scope_metrics = Vec::new();
            field_message(&mut scope_metrics, 1, &scope);
            let mut any = false;
            for slot in self.slots.iter_mut().filter(|s| s.host == h) {
                if slot.points.is_empty() {
                    continue;
                }
                any = true;
                let mut data = std::mem::take(&mut slot.points);
                if slot.sum {
                    key(&mut data, 2, 0);
                    varint(&mut data, AggregationTemporality::Cumulative as u64);
                    key(&mut data, 3, 0);
                    varint(&mut data, 1);
                }
                // Metric: the head, then `gauge` (5) or `sum` (7).
                let len = slot.head.len() + field_len(data.len());
                key(&mut scope_metrics, 2, 2);
                varint(&mut scope_metrics, len as u64);
                scope_metrics.extend_from_slice(&slot.head);
                field_bytes(&mut scope_metrics, if slot.sum { 7 } else { 5 }, &data);
                data.clear();
                slot.points = data;
            }
            if !any {
                continue;
            }
            let mut resource_metrics = Vec::with_capacity(scope_metrics.len() + 256);
            field_message(
                &mut resource_metrics,
                1,
                &self.resource.to_proto(host.as_deref()),
            );
            field_bytes(&mut resource_metrics, 2, &scope_metrics);
            field_bytes(&mut request, 1, &resource_metrics);
        }
        let points = std::mem::take(&mut self.pending);
        self.sink.send(request, points)?;
        self.sent += points as u64;
        Ok(())
    }
}

/// The fields of a `Metric` before its data: name (1), description (2), unit (3).
fn metric_head(name: &str, description: String, unit: &str) -> Vec<u8> {
    Metric {
        name: name.to_owned(),
        description,
        unit: unit.to_owned(),
        ..Metric::default()
    }
    .encode_to_vec()
}

/// A protobuf varint.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A field key: number and wire type (0 varint, 1 64-bit, 2 length-delimited).
fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

/// The length of a length-delimited field of `len` bytes whose number is below 16.
fn field_len(len: usize) -> usize {
    let mut n = 1;
    let mut v = len as u64;
    while v >= 0x80 {
        n += 1;
        v >>= 7;
    }
    1 + n + len
}

/// A length-delimited field of `bytes`.
fn field_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A length-delimited field holding `message`.
fn field_message(out: &mut Vec<u8>, field: u32, message: &impl Message) {
    key(out, field, 2);
    varint(out, message.encoded_len() as u64);
    // Encoding into a Vec does not run out of room.
    let _ = message.encode(out);
}

/// One `NumberDataPoint` as field 1 (`data_points`) of a Gauge or Sum: the attributes (7),
/// `start_time_unix_nano` (2) when not 0, `time_unix_nano` (3), `as_double` (4).
fn point(out: &mut Vec<u8>, attributes: &[u8], start: u64, time: u64, value: f64) {
    let len = attributes.len() + if start != 0 { 27 } else { 18 };
    key(out, 1, 2);
    varint(out, len as u64);
    out.extend_from_slice(attributes);
    if start != 0 {
        key(out, 2, 1);
        out.extend_from_slice(&start.to_le_bytes());
    }
    key(out, 3, 1);
    out.extend_from_slice(&time.to_le_bytes());
    key(out, 4, 1);
    out.extend_from_slice(&value.to_le_bytes());
}

impl<S: OtlpSink> LogWriter for OtlpLogWriter<S> {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        self.columns = header
            .counters
            .iter()
            .map(|c| self.plan_column(c))
            .collect();
        Ok(())
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        let time = unix_nanos(record.time);
        for (column, cell) in self.columns.iter_mut().zip(&record.cells) {
            if let Some(v) = cell.value() {
                point(
                    &mut self.slots[column.gauge].points,
                    &column.attributes,
                    0,
                    time,
                    v,
                );
                self.pending += 1;
            }
            let (Some(sum), Cell::Raw(raw, _)) = (&mut column.sum, cell) else {
                continue;
            };
            if raw.status.is_error() || raw.status.is_warning() {
                continue;
            }
            let count = raw.raw.first;
            if count < 0 {
                continue;
            }
            // A count that goes back starts a new series.
            let start = match sum.start {
                Some((start, last)) if count >= last => start,
                _ => time,
            };
            sum.start = Some((start, count));
            point(
                &mut self.slots[sum.slot].points,
                &column.attributes,
                start,
                time,
                count as f64 * sum.factor,
            );
            self.pending += 1;
        }
        if self.pending >= self.batch_points {
            self.flush()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), LogError> {
        self.flush()?;
        self.sink.finish()
    }
}
