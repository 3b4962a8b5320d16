//! The OTLP metric model (`export::otlp`, feature `otlp`): `/metrics` families and log records as
//! OTLP requests, decoded back with the `opentelemetry-proto` types.
#![cfg(feature = "otlp")]

use perfcounters::export::otlp::proto::collector::metrics::v1::ExportMetricsServiceRequest;
use perfcounters::export::otlp::proto::common::v1::{any_value, KeyValue};
use perfcounters::export::otlp::proto::metrics::v1::{metric, number_data_point, Metric};
use perfcounters::export::otlp::{
    families_request, otel_name, point_count, unix_nanos, FamiliesEncoder, Message, OtlpLogWriter,
    OtlpResource, OtlpSink,
};
use perfcounters::export::{MetricFamily, MetricKind, MetricSample};
use perfcounters::log::{
    Cell, LogCounter, LogError, LogFormat, LogHeader, LogTime, LogWriter, RawCell, Record,
};
use perfcounters::path::CounterPath;
use perfcounters::raw::RawCounter;
use perfcounters::status::PdhStatus;
use perfcounters::{CounterInfo, CounterType};

fn text(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|a| a.key == key).and_then(|a| {
        match a.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s.clone()),
            _ => None,
        }
    })
}

fn double(p: &Option<number_data_point::Value>) -> f64 {
    match p {
        Some(number_data_point::Value::AsDouble(v)) => *v,
        other => panic!("{other:?}"),
    }
}

#[test]
fn names_and_times() {
    assert_eq!(
        otel_name(
            "perfcounters_system_context_switches_total",
            MetricKind::Counter,
            "perfcounters"
        ),
        "perfcounters.system_context_switches"
    );
    assert_eq!(
        otel_name(
            "perfcounters_memory_available_bytes",
            MetricKind::Gauge,
            "perfcounters"
        ),
        "perfcounters.memory_available_bytes"
    );
    assert_eq!(
        otel_name(
            "system_cpu_time_seconds_total",
            MetricKind::Counter,
            "perfcounters"
        ),
        "system.cpu.time"
    );
    assert_eq!(otel_name("up", MetricKind::Gauge, "perfcounters"), "up");
    // 2020-01-17 05:00 UTC.
    let t = LogTime::from_parts(2020, 1, 17, 5, 0, 0, 250).unwrap();
    assert_eq!(unix_nanos(t), 1_579_237_200_250_000_000);
    assert_eq!(unix_nanos(LogTime(0)), 0);
}

/// Counters become cumulative monotonic Sums with the start given, gauges Gauges, a
/// `_sum`/`_count` pair one Summary point; labels become attributes; the resource says who.
#[test]
fn families_become_sums_gauges_and_summaries() {
    let labels = |v: &str| vec![("instance_name".to_string(), v.to_string())];
    let families = [
        MetricFamily {
            name: "perfcounters_processor_user_seconds_total".into(),
            help: "\\Processor(*)\\% User Time".into(),
            kind: MetricKind::Counter,
            unit: Some("seconds"),
            samples: vec![
                MetricSample::new("", labels("0"), 12.5),
                MetricSample::new("", labels("1"), 7.25),
            ],
        },
        MetricFamily {
            name: "perfcounters_memory_available_bytes".into(),
            help: String::new(),
            kind: MetricKind::Gauge,
            unit: Some("bytes"),
            samples: vec![MetricSample::new("", Vec::new(), 1024.0)],
        },
        MetricFamily {
            name: "perfcounters_physical_disk_disk_read_duration_seconds".into(),
            help: String::new(),
            kind: MetricKind::Summary,
            unit: Some("seconds"),
            samples: vec![
                MetricSample::new("_sum", labels("0 C:"), 3.5),
                MetricSample::new("_count", labels("0 C:"), 70.0),
            ],
        },
    ];
    let resource = OtlpResource {
        host_name: Some("web-1".into()),
        os_type: Some("linux".into()),
        attributes: vec![("deployment.environment".into(), "prod".into())],
        ..OtlpResource::default()
    };
    let request = families_request(&families, &resource, "perfcounters", 1_000, 2_000);
    assert_eq!(request.points, 4);
    let back = ExportMetricsServiceRequest::decode(&request.body[..]).unwrap();
    assert_eq!(point_count(&back), 4);
    // Written field by field as the generated types write them: encoding the decoded message
    // again gives the same bytes.
    assert_eq!(back.encode_to_vec(), request.body);
    let rm = &back.resource_metrics[0];
    let attrs = &rm.resource.as_ref().unwrap().attributes;
    assert_eq!(text(attrs, "service.name").as_deref(), Some("perfcounters"));
    assert_eq!(text(attrs, "host.name").as_deref(), Some("web-1"));
    assert_eq!(text(attrs, "os.type").as_deref(), Some("linux"));
    assert_eq!(
        text(attrs, "deployment.environment").as_deref(),
        Some("prod")
    );
    let metrics: &[Metric] = &rm.scope_metrics[0].metrics;
    assert_eq!(metrics[0].name, "perfcounters.processor_user_seconds");
    assert_eq!(metrics[0].unit, "s");
    let Some(metric::Data::Sum(sum)) = &metrics[0].data else {
        panic!("{:?}", metrics[0])
    };
    assert!(sum.is_monotonic);
    assert_eq!(sum.aggregation_temporality, 2);
    assert_eq!(sum.data_points.len(), 2);
    assert_eq!(sum.data_points[1].start_time_unix_nano, 1_000);
    assert_eq!(sum.data_points[1].time_unix_nano, 2_000);
    assert_eq!(double(&sum.data_points[1].value), 7.25);
    assert_eq!(
        text(&sum.data_points[1].attributes, "instance_name").as_deref(),
        Some("1")
    );
    let Some(metric::Data::Gauge(g)) = &metrics[1].data else {
        panic!("{:?}", metrics[1])
    };
    assert_eq!(metrics[1].unit, "By");
    assert_eq!(double(&g.data_points[0].value), 1024.0);
    let Some(metric::Data::Summary(s)) = &metrics[2].data else {
        panic!("{:?}", metrics[2])
    };
    assert_eq!(s.data_points.len(), 1);
    assert_eq!((s.data_points[0].sum, s.data_points[0].count), (3.5, 70));
    assert_eq!(
        (
            s.data_points[0].start_time_unix_nano,
            s.data_points[0].time_unix_nano
        ),
        (1_000, 2_000)
    );
    assert_eq!(
        text(&s.data_points[0].attributes, "instance_name").as_deref(),
        Some("0 C:")
    );
    assert_eq!(
        (
            g.data_points[0].start_time_unix_nano,
            g.data_points[0].time_unix_nano
        ),
        (0, 2_000)
    );
    assert!(g.data_points[0].attributes.is_empty());
    assert_eq!(metrics[0].description, "\\Processor(*)\\% User Time");
}

/// An encoder kept from request to request (what `serve --otlp` does every interval) writes what
/// a new one writes, byte for byte: with new values and times, and when a family changes its help
/// or type, is left out or added, or when the requests hold more samples or fewer.
#[test]
fn a_kept_encoder_writes_what_a_new_one_writes() {
    let family = |name: &str, help: &str, kind: MetricKind, values: &[f64]| MetricFamily {
        name: name.into(),
        help: help.into(),
        kind,
        unit: Some("seconds"),
        samples: values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let labels = vec![("instance_name".to_string(), i.to_string())];
                match kind {
                    MetricKind::Summary => MetricSample::new(
                        if i % 2 == 0 { "_sum" } else { "_count" },
                        vec![("instance_name".to_string(), (i / 2).to_string())],
                        *v,
                    ),
                    _ => MetricSample::new("", labels, *v),
                }
            })
            .collect(),
    };
    let resource = OtlpResource {
        host_name: Some("web-1".into()),
        ..OtlpResource::default()
    };
    let c = "perfcounters_processor_user_seconds_total";
    let g = "perfcounters_system_processor_queue_length";
    let s = "perfcounters_physical_disk_disk_read_duration_seconds";
    let collections = [
        vec![
            family(c, "user", MetricKind::Counter, &[1.0, 2.5]),
            family(g, "queue", MetricKind::Gauge, &[3.0]),
            family(s, "reads", MetricKind::Summary, &[0.5, 10.0]),
        ],
        vec![
            family(c, "user", MetricKind::Counter, &[1.5, 3.0]),
            family(g, "queue", MetricKind::Gauge, &[0.0]),
            family(s, "reads", MetricKind::Summary, &[0.75, 12.0]),
        ],
        // Another help, another type, a family left out, more samples.
        vec![
            family(c, "user time", MetricKind::Counter, &[2.0, 3.5, 9.0]),
            family(g, "queue", MetricKind::Counter, &[1.0]),
        ],
        // A family added in front, fewer samples.
        vec![
            family(s, "reads", MetricKind::Summary, &[1.0, 13.0]),
            family(c, "user time", MetricKind::Counter, &[2.5]),
            family(g, "queue", MetricKind::Gauge, &[]),
        ],
    ];
    let mut kept = FamiliesEncoder::new(&resource, "perfcounters");
    let mut sizes = Vec::new();
    for (i, families) in collections.iter().enumerate() {
        let time = 2_000 + i as u64;
        let request = kept.encode(families, 1_000, time);
        assert_eq!(
            request,
            families_request(families, &resource, "perfcounters", 1_000, time)
        );
        let back = ExportMetricsServiceRequest::decode(&request.body[..]).unwrap();
        assert_eq!(back.encode_to_vec(), request.body);
        assert_eq!(point_count(&back), request.points);
        sizes.push(request.points);
    }
    assert_eq!(sizes, [4, 4, 4, 2]);
}

/// A sink that keeps the decoded requests.
#[derive(Default)]
struct Keep {
    requests: Vec<(ExportMetricsServiceRequest, usize)>,
    finished: bool,
}

impl OtlpSink for Keep {
    fn send(&mut self, body: Vec<u8>, points: usize) -> Result<(), LogError> {
        let request = ExportMetricsServiceRequest::decode(&body[..]).unwrap();
        // The generated types encode the decoded request into the same bytes.
        assert_eq!(request.encode_to_vec(), body);
        self.requests.push((request, points));
        Ok(())
    }
    fn finish(&mut self) -> Result<(), LogError> {
        self.finished = true;
        Ok(())
    }
}

/// Log records: every value a Gauge point at the record's UTC time; the raw count of a 100 ns
/// timer a Sum in seconds whose start is its first record, and a new start after it goes back;
/// instances and parents are attributes, the machine `host.name`.
#[test]
fn log_records_become_gauges_and_sums() {
    let timer = CounterInfo {
        counter_type: CounterType::PERF_100NSEC_TIMER,
        default_scale: 0,
        time_base: 10_000_000,
    };
    let header = LogHeader {
        source: "test".into(),
        kind: LogFormat::Binary,
        time_zone: None,
        counters: vec![
            LogCounter::new(
                CounterPath::parse(r"\\SRV\Processor(0)\% User Time").unwrap(),
                Some(timer),
            ),
            LogCounter::new(
                CounterPath::parse(r"\\SRV\Thread(explorer/3#1)\Context Switches/sec").unwrap(),
                None,
            ),
        ],
    };
    let t0 = LogTime::from_parts(2024, 3, 1, 12, 0, 0, 0).unwrap();
    let raw = |n: i64, v: Option<f64>| {
        Cell::Raw(
            RawCell {
                status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                raw: RawCounter::new(n, 0),
            },
            v,
        )
    };
    let records = [
        Record {
            time: t0,
            cells: vec![raw(20_000_000, None), Cell::Value(3.0)],
        },
        Record {
            time: LogTime(t0.0 + 10_000_000),
            cells: vec![raw(25_000_000, Some(50.0)), Cell::Blank],
        },
        Record {
            time: LogTime(t0.0 + 20_000_000),
            cells: vec![raw(5_000_000, None), Cell::Value(4.5)],
        },
    ];
    let mut w = OtlpLogWriter::new(Keep::default(), OtlpResource::default(), "perfcounters", 4);
    w.write_header(&header).unwrap();
    for r in &records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(w.points_sent(), 6);
    let sink = w.sink();
    assert!(sink.finished);
    // A request once 4 points are gathered: the first two records (2 + 2), then the last (2).
    assert_eq!(
        sink.requests.iter().map(|r| r.1).collect::<Vec<_>>(),
        [4, 2]
    );
    let mut gauges = Vec::new();
    let mut sums = Vec::new();
    for (r, n) in &sink.requests {
        assert_eq!(point_count(r), *n);
        let rm = &r.resource_metrics[0];
        let attrs = &rm.resource.as_ref().unwrap().attributes;
        assert_eq!(text(attrs, "host.name").as_deref(), Some("SRV"));
        for m in &rm.scope_metrics[0].metrics {
            match m.data.as_ref().unwrap() {
                metric::Data::Gauge(g) => {
                    for p in &g.data_points {
                        gauges.push((m.name.clone(), p.clone()));
                    }
                }
                metric::Data::Sum(s) => {
                    assert!(s.is_monotonic);
                    assert_eq!(m.unit, "s");
                    for p in &s.data_points {
                        sums.push((m.name.clone(), p.clone()));
                    }
                }
                other => panic!("{other:?}"),
            }
        }
    }
    let ns = |t: i64| unix_nanos(LogTime(t0.0 + t * 10_000_000));
    // A request holds each metric's points together: in time order once sorted.
    gauges.sort_by_key(|(_, p)| p.time_unix_nano);
    let g: Vec<(&str, u64, f64)> = gauges
        .iter()
        .map(|(n, p)| (n.as_str(), p.time_unix_nano, double(&p.value)))
        .collect();
    assert_eq!(
        g,
        [
            ("perfcounters.thread_context_switches_per_sec", ns(0), 3.0),
            ("perfcounters.processor_user_time", ns(1), 50.0),
            ("perfcounters.thread_context_switches_per_sec", ns(2), 4.5),
        ]
    );
    let thread = &gauges[0].1.attributes;
    assert_eq!(text(thread, "instance_name").as_deref(), Some("3#1"));
    assert_eq!(text(thread, "parent").as_deref(), Some("explorer"));
    let s: Vec<(&str, u64, u64, f64)> = sums
        .iter()
        .map(|(n, p)| {
            (
                n.as_str(),
                p.start_time_unix_nano,
                p.time_unix_nano,
                double(&p.value),
            )
        })
        .collect();
    assert_eq!(
        s,
        [
            ("perfcounters.processor_user_seconds", ns(0), ns(0), 2.0),
            ("perfcounters.processor_user_seconds", ns(0), ns(1), 2.5),
            // The count went back: a new series starts.
            ("perfcounters.processor_user_seconds", ns(2), ns(2), 0.5),
        ]
    );
    assert_eq!(
        text(&sums[0].1.attributes, "instance_name").as_deref(),
        Some("0")
    );
}
