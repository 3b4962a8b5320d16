//! Log records as OTLP requests: the sink of the log pipeline that `relog -f otlp` writes to.

use super::wire::{metric, metric_head, point, resource_metrics, string_attribute, Data};
use super::{otel_unit, unix_nanos, OtlpResource};
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
            head: metric_head(&name, &desc, ""),
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
                    &format!("{description} ({}), cumulative", info.counter_type),
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
            string_attribute(&mut attributes, 7, "instance_name", &name);
        }
        if let Some(parent) = &path.parent {
            string_attribute(&mut attributes, 7, "parent", parent);
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
        let mut request = Vec::with_capacity(self.pending * 48 + 1024);
        let mut metrics = Vec::new();
        for (h, host) in self.hosts.iter().enumerate() {
            metrics.clear();
            for slot in self.slots.iter_mut().filter(|s| s.host == h) {
                if !slot.points.is_empty() {
                    let data = if slot.sum {
                        Data::CumulativeSum
                    } else {
                        Data::Gauge
                    };
                    metric(&mut metrics, &slot.head, data, &mut slot.points);
                }
            }
            if !metrics.is_empty() {
                resource_metrics(
                    &mut request,
                    &self.resource.to_proto(host.as_deref()),
                    &metrics,
                );
            }
        }
        let points = std::mem::take(&mut self.pending);
        self.sink.send(request, points)?;
        self.sent += points as u64;
        Ok(())
    }
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
