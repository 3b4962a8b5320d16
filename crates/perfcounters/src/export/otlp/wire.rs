//! The OTLP messages both request builders write field by field, in protobuf's wire format: data
//! points, their attributes, metrics and the request around them. A push or a log batch holds
//! hundreds to thousands of points that differ only in time and value, so they are not built as
//! `opentelemetry-proto` messages (an owned `Vec` and two owned `String`s per attribute) to be
//! encoded afterwards: each is written once into its metric's bytes. The fields and their numbers
//! are those of the generated types, in the order of their numbers, and a field at its default
//! value is left out, as prost encodes them, so that decoding and encoding again with the generated types gives
//! the same bytes (the tests check it).

use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::metrics::v1::AggregationTemporality;
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;

use super::SCOPE_NAME;

/// A protobuf varint.
pub(super) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A field key: number and wire type (0 varint, 1 64-bit, 2 length-delimited).
pub(super) fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

/// The length of a length-delimited field of `len` bytes whose number is below 16.
pub(super) fn field_len(len: usize) -> usize {
    let mut n = 1;
    let mut v = len as u64;
    while v >= 0x80 {
        n += 1;
        v >>= 7;
    }
    1 + n + len
}

/// A length-delimited field of `bytes`.
pub(super) fn field_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A string field, left out when empty (proto3's default).
fn field_string(out: &mut Vec<u8>, field: u32, s: &str) {
    if !s.is_empty() {
        field_bytes(out, field, s.as_bytes());
    }
}

/// A 64-bit field (`fixed64`, or a `double`'s bits), left out at 0 (proto3's default).
fn field_fixed64(out: &mut Vec<u8>, field: u32, bits: u64) {
    if bits != 0 {
        key(out, field, 1);
        out.extend_from_slice(&bits.to_le_bytes());
    }
}

/// A length-delimited field holding `message`.
pub(super) fn field_message(out: &mut Vec<u8>, field: u32, message: &impl Message) {
    key(out, field, 2);
    varint(out, message.encoded_len() as u64);
    // Encoding into a Vec does not run out of room.
    let _ = message.encode(out);
}

/// A string attribute (`KeyValue` with a `string_value`) as field `field` of its message (7 of a
/// data point).
pub(super) fn string_attribute(out: &mut Vec<u8>, field: u32, name: &str, value: &str) {
    // KeyValue: key (1), value (2): AnyValue { string_value (1) }, a oneof, written even empty.
    let any = field_len(value.len());
    let len = if name.is_empty() {
        0
    } else {
        field_len(name.len())
    } + field_len(any);
    key(out, field, 2);
    varint(out, len as u64);
    field_string(out, 1, name);
    key(out, 2, 2);
    varint(out, any as u64);
    field_bytes(out, 1, value.as_bytes());
}

/// One `NumberDataPoint` as field 1 (`data_points`) of a Gauge or Sum: `start_time_unix_nano` (2)
/// when not 0, `time_unix_nano` (3), `as_double` (4), the attributes (7, already encoded).
pub(super) fn point(out: &mut Vec<u8>, attributes: &[u8], start: u64, time: u64, value: f64) {
    let len = attributes.len() + if start != 0 { 27 } else { 18 };
    key(out, 1, 2);
    varint(out, len as u64);
    if start != 0 {
        key(out, 2, 1);
        out.extend_from_slice(&start.to_le_bytes());
    }
    key(out, 3, 1);
    out.extend_from_slice(&time.to_le_bytes());
    key(out, 4, 1);
    out.extend_from_slice(&value.to_le_bytes());
    out.extend_from_slice(attributes);
}

/// One `SummaryDataPoint` (without quantiles) as field 1 of a Summary: `start_time_unix_nano` (2),
/// `time_unix_nano` (3), `count` (4), `sum` (5), each left out at 0, and the attributes (7,
/// already encoded).
pub(super) fn summary_point(
    out: &mut Vec<u8>,
    attributes: &[u8],
    start: u64,
    time: u64,
    count: u64,
    sum: f64,
) {
    let mut fields = Vec::with_capacity(attributes.len() + 36);
    field_fixed64(&mut fields, 2, start);
    field_fixed64(&mut fields, 3, time);
    field_fixed64(&mut fields, 4, count);
    // prost leaves out a double equal to 0.0, -0.0 too.
    field_fixed64(&mut fields, 5, if sum == 0.0 { 0 } else { sum.to_bits() });
    fields.extend_from_slice(attributes);
    field_bytes(out, 1, &fields);
}

/// The fields of a `Metric` before its data: name (1), description (2), unit (3).
pub(super) fn metric_head(name: &str, description: &str, unit: &str) -> Vec<u8> {
    let mut head = Vec::with_capacity(name.len() + description.len() + unit.len() + 9);
    field_string(&mut head, 1, name);
    field_string(&mut head, 2, description);
    field_string(&mut head, 3, unit);
    head
}

/// What a metric's data is, with its field number in `Metric`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Data {
    /// `gauge` (5).
    Gauge,
    /// `sum` (7), cumulative and monotonic.
    CumulativeSum,
    /// `summary` (11).
    Summary,
}

/// One `Metric` as field 2 (`metrics`) of a `ScopeMetrics`: `head` ([`metric_head`]), then its
/// data holding `points` (the encoded data points); the points are taken, `points` is left empty
/// for reuse.
pub(super) fn metric(out: &mut Vec<u8>, head: &[u8], data: Data, points: &mut Vec<u8>) {
    if data == Data::CumulativeSum {
        key(points, 2, 0);
        varint(points, AggregationTemporality::Cumulative as u64);
        key(points, 3, 0);
        varint(points, 1);
    }
    let field = match data {
        Data::Gauge => 5,
        Data::CumulativeSum => 7,
        Data::Summary => 11,
    };
    key(out, 2, 2);
    varint(out, (head.len() + field_len(points.len())) as u64);
    out.extend_from_slice(head);
    field_bytes(out, field, points);
    points.clear();
}

/// The head of a `ResourceMetrics`: its `resource` (field 1), encoded.
pub(super) fn resource_head(resource: &Resource) -> Vec<u8> {
    let mut out = Vec::with_capacity(field_len(resource.encoded_len()));
    field_message(&mut out, 1, resource);
    out
}

/// The head of the `ScopeMetrics`: the [`SCOPE_NAME`] scope (field 1), encoded.
pub(super) fn scope_head() -> Vec<u8> {
    let scope = InstrumentationScope {
        name: SCOPE_NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..InstrumentationScope::default()
    };
    let mut out = Vec::with_capacity(field_len(scope.encoded_len()));
    field_message(&mut out, 1, &scope);
    out
}

/// One `ResourceMetrics` as field 1 of an `ExportMetricsServiceRequest`: `resource`, and one
/// `ScopeMetrics` of the [`SCOPE_NAME`] scope holding `metrics` (encoded by [`metric`]).
pub(super) fn resource_metrics(out: &mut Vec<u8>, resource: &Resource, metrics: &[u8]) {
    resource_metrics_of(out, &resource_head(resource), &scope_head(), metrics);
}

/// [`resource_metrics`] of a resource and scope already encoded ([`resource_head`],
/// [`scope_head`]).
pub(super) fn resource_metrics_of(
    out: &mut Vec<u8>,
    resource: &[u8],
    scope: &[u8],
    metrics: &[u8],
) {
    let scope_len = scope.len() + metrics.len();
    key(out, 1, 2);
    varint(out, (resource.len() + field_len(scope_len)) as u64);
    out.extend_from_slice(resource);
    key(out, 2, 2);
    varint(out, scope_len as u64);
    out.extend_from_slice(scope);
    out.extend_from_slice(metrics);
}
