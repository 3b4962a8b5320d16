//! OTLP push end to end: a receiver in the test (axum on 127.0.0.1) decodes every request with the
//! `opentelemetry-proto` types and answers as a script says (503 a few times, then 200); relog's
//! `-f otlp` and serve's `--otlp` push to it.

use std::collections::BTreeMap;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use perfcounters::export::otlp::proto::collector::metrics::v1::{
    ExportMetricsPartialSuccess, ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use perfcounters::export::otlp::proto::common::v1::{any_value, KeyValue};
use perfcounters::export::otlp::proto::metrics::v1::{metric, number_data_point, Metric};
use perfcounters::export::otlp::Message;
use perfcounters::log::LogReader;

use crate::common::{self, shared_data, stderr, stdout, Dir};

/// What the receiver got and how it answers.
#[derive(Default)]
struct Inbox {
    /// The requests accepted, decoded, with their headers.
    requests: Vec<(HeaderMap, ExportMetricsServiceRequest)>,
    /// Every POST, answered or not.
    attempts: usize,
    /// Statuses to answer before the next 200s (with a `Retry-After` of 0 s for 503).
    script: Vec<u16>,
    /// Points to report as rejected in the `partial_success` of the next 200.
    reject: i64,
}

struct Receiver {
    addr: SocketAddr,
    inbox: Arc<Mutex<Inbox>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

async fn receive(
    State(inbox): State<Arc<Mutex<Inbox>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut inbox = inbox.lock().unwrap();
    inbox.attempts += 1;
    if !inbox.script.is_empty() {
        let status = inbox.script.remove(0);
        let mut r = (StatusCode::from_u16(status).unwrap(), "busy").into_response();
        if status == 503 {
            r.headers_mut()
                .insert("retry-after", axum::http::HeaderValue::from_static("0"));
        }
        return r;
    }
    let bytes = match headers.get("content-encoding").map(|v| v.to_str().unwrap()) {
        Some("gzip") => {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&body[..])
                .read_to_end(&mut out)
                .unwrap();
            out
        }
        None => body.to_vec(),
        Some(other) => panic!("content-encoding {other}"),
    };
    assert_eq!(
        headers.get("content-type").unwrap(),
        "application/x-protobuf"
    );
    let request = ExportMetricsServiceRequest::decode(&bytes[..]).expect("a protobuf request");
    inbox.requests.push((headers, request));
    let rejected = std::mem::take(&mut inbox.reject);
    let response = ExportMetricsServiceResponse {
        partial_success: (rejected > 0).then(|| ExportMetricsPartialSuccess {
            rejected_data_points: rejected,
            error_message: "too old".into(),
        }),
    };
    (
        [("content-type", "application/x-protobuf")],
        response.encode_to_vec(),
    )
        .into_response()
}

impl Receiver {
    /// A receiver on a free port of 127.0.0.1 (or on `addr`), answering `script` first.
    fn start(script: &[u16], addr: Option<SocketAddr>) -> Receiver {
        let inbox = Arc::new(Mutex::new(Inbox {
            script: script.to_vec(),
            ..Inbox::default()
        }));
        let std_listener =
            std::net::TcpListener::bind(addr.unwrap_or(([127, 0, 0, 1], 0).into())).unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = inbox.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
                let app = axum::Router::new()
                    .route("/v1/metrics", axum::routing::post(receive))
                    .with_state(state);
                let server = axum::serve(listener, app).with_graceful_shutdown(async move {
                    let _ = stopped.await;
                });
                let _ = server.await;
            });
        });
        Receiver {
            addr,
            inbox,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> Vec<ExportMetricsServiceRequest> {
        let inbox = self.inbox.lock().unwrap();
        inbox.requests.iter().map(|(_, r)| r.clone()).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn string_attr(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|a| a.key == key).and_then(|a| {
        match a.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s.clone()),
            _ => None,
        }
    })
}

/// One point as the test reads it.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    host: Option<String>,
    metric: String,
    description: String,
    sum: bool,
    instance: Option<String>,
    attributes: BTreeMap<String, String>,
    unit: String,
    start: u64,
    time: u64,
    value: f64,
}

fn points(requests: &[ExportMetricsServiceRequest]) -> Vec<Point> {
    let mut out = Vec::new();
    for r in requests {
        for rm in &r.resource_metrics {
            let host = string_attr(&rm.resource.as_ref().unwrap().attributes, "host.name");
            for sm in &rm.scope_metrics {
                assert_eq!(sm.scope.as_ref().unwrap().name, "perfcounters");
                for m in &sm.metrics {
                    push_points(&mut out, &host, m);
                }
            }
        }
    }
    out
}

fn push_points(out: &mut Vec<Point>, host: &Option<String>, m: &Metric) {
    let (sum, data) = match m.data.as_ref().unwrap() {
        metric::Data::Gauge(g) => (false, &g.data_points),
        metric::Data::Sum(s) => {
            assert!(s.is_monotonic);
            assert_eq!(s.aggregation_temporality, 2, "cumulative");
            (true, &s.data_points)
        }
        metric::Data::Summary(_) => return,
        other => panic!("{other:?}"),
    };
    for p in data {
        let Some(number_data_point::Value::AsDouble(value)) = p.value else {
            panic!("{p:?}")
        };
        out.push(Point {
            host: host.clone(),
            metric: m.name.clone(),
            description: m.description.clone(),
            sum,
            instance: string_attr(&p.attributes, "instance_name"),
            attributes: p
                .attributes
                .iter()
                .filter_map(|a| {
                    Some((a.key.clone(), string_attr(std::slice::from_ref(a), &a.key)?))
                })
                .collect(),
            unit: m.unit.clone(),
            start: p.start_time_unix_nano,
            time: p.time_unix_nano,
            value,
        });
    }
}

/// The Windows 8 log of ../shared/data (Processor and PhysicalDisk counters), when present.
fn tx_log() -> Option<String> {
    let data = shared_data::dir("the real Windows logs")?;
    Some(
        data.join("blg/tx-win8-BasicPerfCounters.blg")
            .display()
            .to_string(),
    )
}

/// The Unix time in ns of a log time (FILETIME).
fn unix_ns(t: perfcounters::log::LogTime) -> u64 {
    ((t.0 - 116_444_736_000_000_000) * 100) as u64
}

/// Every value of a shared `.blg` pushed with `-f otlp` is a Gauge point equal to relog's CSV of
/// it, at the CSV's time read back as a UTC instant; the timers' raw counts are cumulative Sums
/// whose start stays put.
#[test]
fn relog_pushes_a_blg_with_its_own_times_equal_to_its_csv() {
    let Some(blg) = tx_log() else {
        return;
    };
    let receiver = Receiver::start(&[], None);
    let o = common::run(&[
        "relog",
        &blg,
        "-f",
        "otlp",
        "-o",
        &receiver.url(),
        "--otlp-batch",
        "500",
        "--otlp-header",
        "X-Scope-OrgID=tenant-1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = Dir::new("otlp-csv");
    let csv = d.path("tx.csv");
    let c = common::run(&["relog", &blg, "-o", &csv]);
    assert!(c.status.success(), "{}", stderr(&c));

    // relog's CSV read back: local times with the zone its header names, as UTC instants.
    let mut reader = perfcounters::log::open(&csv, &Default::default())
        .unwrap()
        .remove(0);
    let header = reader.header().clone();
    let mut expected: BTreeMap<(String, u64), f64> = BTreeMap::new();
    let mut record = perfcounters::log::Record::default();
    let mut first_time = None;
    while reader.read_record(&mut record).unwrap() {
        let t = unix_ns(record.time);
        first_time.get_or_insert(t);
        for (c, cell) in header.counters.iter().zip(&record.cells) {
            if let Some(v) = cell.value() {
                let mut path = c.path.clone();
                path.machine = None;
                expected.insert((path.to_string(), t), v);
            }
        }
    }
    // The log's first sample: 2/1/2014 1:20:00.578 at UTC−06:00 (the CSV's header), 07:20 UTC.
    assert_eq!(
        header.counters.len(),
        expected
            .keys()
            .map(|k| &k.0)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );
    let inbox = receiver.inbox.lock().unwrap();
    assert!(inbox.requests.len() > 1, "batches of 500 points");
    assert!(inbox
        .requests
        .iter()
        .all(|(h, _)| h.get("x-scope-orgid").unwrap() == "tenant-1"
            && h.get("content-encoding").unwrap() == "gzip"));
    let requests: Vec<_> = inbox.requests.iter().map(|(_, r)| r.clone()).collect();
    drop(inbox);
    let pts = points(&requests);
    let mut got: BTreeMap<(String, u64), f64> = BTreeMap::new();
    for p in pts.iter().filter(|p| !p.sum) {
        let path = match &p.instance {
            Some(i) => p.description.replace("(*)", &format!("({i})")),
            None => p.description.clone(),
        };
        // The CSV's times are whole milliseconds.
        let t = p.time - p.time % 1_000_000;
        assert!(got.insert((path, t), p.value).is_none());
    }
    assert_eq!(got.len(), expected.len());
    for (k, v) in &expected {
        let g = got.get(k).unwrap_or_else(|| panic!("no point for {k:?}"));
        // The CSV writes six decimals at most… read back, within half a unit of the last one.
        assert!(
            (g - v).abs() <= 5e-7 * v.abs().max(1.0),
            "{k:?}: {g} vs {v}"
        );
    }
    assert_eq!(
        first_time,
        pts.iter().map(|p| p.time - p.time % 1_000_000).min()
    );
    // The hosts are the log's machine.
    assert!(pts.iter().all(|p| p.host.is_some()));
    // Sums: the raw 100 ns timers in seconds, monotonic, one start per series.
    let sums: Vec<&Point> = pts.iter().filter(|p| p.sum).collect();
    assert!(!sums.is_empty());
    let mut series: BTreeMap<(String, Option<String>), Vec<&Point>> = BTreeMap::new();
    for p in &sums {
        series
            .entry((p.metric.clone(), p.instance.clone()))
            .or_default()
            .push(p);
    }
    for ((name, inst), ps) in &series {
        assert!(name.starts_with("perfcounters."), "{name}");
        let starts: std::collections::BTreeSet<u64> = ps.iter().map(|p| p.start).collect();
        assert_eq!(starts.len(), 1, "{name} {inst:?}");
        assert_eq!(*starts.iter().next().unwrap(), ps[0].time);
        assert!(ps
            .windows(2)
            .all(|w| w[1].value >= w[0].value && w[1].time > w[0].time));
    }
    assert!(stdout(&o).contains("Points:   "), "{}", stdout(&o));
}

/// A receiver that answers 503 twice (with `Retry-After: 0`) and then 200 loses nothing: every
/// point arrives once.
#[test]
fn a_receiver_busy_twice_loses_nothing() {
    let d = Dir::new("otlp-retry");
    let input = d.file("x.csv", CSV.as_bytes());
    let receiver = Receiver::start(&[503, 503], None);
    let o = common::run(&[
        "relog",
        &input,
        "-f",
        "otlp",
        "-o",
        &format!("{}/v1/metrics", receiver.url()),
        "--otlp-compression",
        "none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pts = points(&receiver.requests());
    assert_eq!(pts.len(), 6);
    assert_eq!(receiver.inbox.lock().unwrap().attempts, 3);
    assert!(
        stdout(&o).contains("Points:   6 delivered (2 requests retried)"),
        "{}",
        stdout(&o)
    );
    // Cooked values of a text log are Gauges; the zone of its header makes the times UTC.
    let mem: Vec<&Point> = pts
        .iter()
        .filter(|p| p.metric == "perfcounters.memory_available_bytes")
        .collect();
    assert_eq!(mem.len(), 3);
    assert_eq!(mem[0].value, 5.0);
    assert_eq!(mem[0].host.as_deref(), Some("H"));
    // 01/17/2020 00:00:00.000 at a bias of +300 minutes (UTC−5): 05:00 UTC.
    assert_eq!(mem[0].time, 1_579_237_200_000_000_000);
    let cpu: Vec<&Point> = pts
        .iter()
        .filter(|p| p.metric == "perfcounters.processor_processor_time")
        .collect();
    assert_eq!(cpu[0].instance.as_deref(), Some("_Total"));
    assert_eq!(cpu[2].value, 12.5);
}

const CSV: &str = "\"(PDH-CSV 4.0) (Eastern Standard Time)(300)\",\"\\\\H\\Memory\\Available Bytes\",\"\\\\H\\Processor(_Total)\\% Processor Time\"\r\n\
\"01/17/2020 00:00:00.000\",\"5\",\"1.5\"\r\n\
\"01/17/2020 00:00:01.000\",\"6\",\"2.5\"\r\n\
\"01/17/2020 00:00:02.000\",\"7\",\"12.5\"\r\n";

/// An endpoint that stays down ends relog with a non-zero exit that says how many points were
/// delivered; a partial success is reported.
#[test]
fn a_down_endpoint_fails_the_push_saying_what_was_delivered() {
    let d = Dir::new("otlp-down");
    let input = d.file("x.csv", CSV.as_bytes());
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t0 = Instant::now();
    let o = common::run(&[
        "relog",
        &input,
        "-f",
        "otlp",
        "-o",
        &format!("http://127.0.0.1:{port}"),
        "--otlp-retry-for",
        "1",
    ]);
    assert!(!o.status.success());
    assert!(t0.elapsed() < Duration::from_secs(20));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("cannot connect to 127.0.0.1:{port}")),
        "{e}"
    );
    assert!(e.contains("0 of 6 data points delivered, 6 dropped"), "{e}");

    // A receiver that takes the request but rejects part of it: reported, and counted.
    let receiver = Receiver::start(&[], None);
    receiver.inbox.lock().unwrap().reject = 2;
    let o = common::run(&["relog", &input, "-f", "otlp", "-o", &receiver.url()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rejected 2 of 6 data points: too old"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("Rejected: 2 (partial success)"),
        "{}",
        stdout(&o)
    );
}

/// Bad settings are clear errors: an endpoint that does not parse, an unknown protocol, a header
/// without `=`.
#[test]
fn bad_settings_are_clear_errors() {
    let d = Dir::new("otlp-bad");
    let input = d.file("x.csv", CSV.as_bytes());
    let o = common::run(&["relog", &input, "-f", "otlp", "-o", "collector:4318"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(
            "OTLP endpoint \"collector:4318\": no scheme: expected http://HOST:PORT or \
             https://HOST:PORT"
        ),
        "{}",
        stderr(&o)
    );
    let o = common::start(
        common::bin()
            .args(["relog", &input, "-f", "otlp"])
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"),
        std::process::Command::output,
    )
    .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("OTEL_EXPORTER_OTLP_PROTOCOL=thrift: unknown OTLP protocol"),
        "{}",
        stderr(&o)
    );
    let o = common::start(
        common::bin()
            .args(["relog", &input, "-f", "otlp", "-o", "http://127.0.0.1:9"])
            .env("OTEL_EXPORTER_OTLP_HEADERS", "api-key"),
        std::process::Command::output,
    )
    .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("OTEL_EXPORTER_OTLP_HEADERS: \"api-key\" is not NAME=VALUE"),
        "{}",
        stderr(&o)
    );
}

/// The endpoint and resource from the OpenTelemetry variables, passed to the process only.
#[test]
fn the_environment_configures_the_push() {
    let d = Dir::new("otlp-env");
    let input = d.file("x.csv", CSV.as_bytes());
    let receiver = Receiver::start(&[], None);
    let o = common::start(
        common::bin()
            .args(["relog", &input, "-f", "otlp"])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url())
            .env("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20t0k")
            .env("OTEL_SERVICE_NAME", "from-env")
            .env(
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=lab,service.name=attr",
            ),
        std::process::Command::output,
    )
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let inbox = receiver.inbox.lock().unwrap();
    let (headers, request) = &inbox.requests[0];
    assert_eq!(headers.get("authorization").unwrap(), "Bearer t0k");
    let attrs = &request.resource_metrics[0]
        .resource
        .as_ref()
        .unwrap()
        .attributes;
    assert_eq!(
        string_attr(attrs, "service.name").as_deref(),
        Some("from-env")
    );
    assert_eq!(
        string_attr(attrs, "deployment.environment").as_deref(),
        Some("lab")
    );
    assert_eq!(string_attr(attrs, "host.name").as_deref(), Some("H"));
}

/// `perfcounters serve` started with `args`, its standard error gathered as it comes.
#[cfg(target_os = "linux")]
struct Serve {
    child: std::process::Child,
    log: Arc<Mutex<String>>,
}

#[cfg(target_os = "linux")]
impl Serve {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Serve {
        use std::io::BufRead;
        let mut command = common::bin();
        command
            .arg("serve")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = common::start(&mut command, std::process::Command::spawn).unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let mut l = sink.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        Serve { child, log }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits up to `secs` for `what` to hold.
    fn wait_for(&self, secs: u64, what: impl Fn() -> bool) {
        let t0 = Instant::now();
        while !what() {
            assert!(
                t0.elapsed() < Duration::from_secs(secs),
                "timed out; serve said:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM, then the exit within `secs`.
    fn terminate(&mut self, secs: u64) -> std::process::ExitStatus {
        let ok = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader thread take the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return status;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(secs),
                "no exit; serve said:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Live push from the Linux source: the resource says what and where, Sums keep one start time from
/// push to push, and SIGTERM flushes the queue before the exit.
#[cfg(target_os = "linux")]
#[test]
fn serve_pushes_the_linux_source_live() {
    let receiver = Receiver::start(&[], None);
    let mut serve = Serve::start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--otlp",
            &receiver.url(),
            "--otlp-interval",
            "0.3",
        ],
        &[("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=lab")],
    );
    serve.wait_for(30, || receiver.inbox.lock().unwrap().requests.len() >= 3);
    let status = serve.terminate(15);
    assert!(status.success(), "{}", serve.log());
    let log = serve.log();
    assert!(
        log.contains("pushing over OTLP to http://127.0.0.1:"),
        "{log}"
    );
    assert!(log.contains(" dropped, 0 rejected (flushed in "), "{log}");
    let requests = receiver.requests();
    for r in &requests {
        let attrs = &r.resource_metrics[0].resource.as_ref().unwrap().attributes;
        assert_eq!(string_attr(attrs, "os.type").as_deref(), Some("linux"));
        assert_eq!(
            string_attr(attrs, "service.name").as_deref(),
            Some("perfcounters")
        );
        assert_eq!(
            string_attr(attrs, "deployment.environment").as_deref(),
            Some("lab")
        );
        assert!(string_attr(attrs, "host.name").is_some_and(|h| !h.is_empty()));
    }
    let pts = points(&requests);
    // The CPU time of each processor: a cumulative Sum in seconds with one start in every request.
    let cpu: Vec<&Point> = pts
        .iter()
        .filter(|p| {
            p.sum
                && p.metric.starts_with("perfcounters.processor")
                && p.metric.ends_with("user_seconds")
        })
        .collect();
    assert!(
        cpu.len() >= 3,
        "{:?}",
        pts.iter()
            .map(|p| &p.metric)
            .collect::<std::collections::BTreeSet<_>>()
    );
    let starts: std::collections::BTreeSet<u64> =
        pts.iter().filter(|p| p.sum).map(|p| p.start).collect();
    assert_eq!(starts.len(), 1, "one start time for every Sum");
    let start = *starts.iter().next().unwrap();
    assert!(pts.iter().filter(|p| p.sum).all(|p| p.time > start));
    // Gauges: memory in bytes.
    assert!(pts
        .iter()
        .any(|p| !p.sum && p.metric == "perfcounters.memory_available_bytes" && p.value > 0.0));
    // The delivery's own counters travel too.
    assert!(pts
        .iter()
        .any(|p| p.metric == "perfcounters.otlp_pushed_points"));
}

/// A receiver that is down for longer than the queue holds: the oldest requests are dropped, the
/// drops counted on standard error, in /metrics and in the pushes that arrive once it is back.
#[cfg(target_os = "linux")]
#[test]
fn drops_are_counted_while_the_receiver_is_down() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let serve = Serve::start(
        &[
            "--listen",
            &listen.to_string(),
            "--otlp",
            &format!("http://127.0.0.1:{port}"),
            "--otlp-interval",
            "0.1",
            "--otlp-queue",
            "2",
        ],
        &[],
    );
    serve.wait_for(30, || serve.log().contains("OTLP queue full"));
    let log = serve.log();
    assert!(
        log.contains(&format!(
            "(http://127.0.0.1:{port}/v1/metrics is not taking requests): dropped "
        )),
        "{log}"
    );
    let metrics = http_get(listen, "/metrics");
    let dropped: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("perfcounters_otlp_dropped_points_total "))
        .unwrap_or_else(|| panic!("{metrics}"))
        .parse()
        .unwrap();
    assert!(dropped > 0.0, "{metrics}");
    // Back up: the requests still queued arrive, then new ones that count the drops (at least as
    // many as /metrics said before).
    let receiver = Receiver::start(&[], Some(([127, 0, 0, 1], port).into()));
    let counted = || {
        points(&receiver.requests())
            .iter()
            .filter(|p| p.metric == "perfcounters.otlp_dropped_points")
            .map(|p| p.value)
            .fold(0.0, f64::max)
    };
    serve.wait_for(60, || counted() >= dropped);
}

/// Stopped while its endpoint is down, serve gives the queue up at the flush deadline
/// (`--otlp-flush-timeout`): it exits by then, and says that nothing was delivered and how many
/// data points were dropped.
#[cfg(target_os = "linux")]
#[test]
fn a_down_endpoint_is_given_up_at_the_flush_deadline() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut serve = Serve::start(
        &[
            "--otlp-only",
            "--otlp",
            &format!("http://127.0.0.1:{port}"),
            "--otlp-interval",
            "0.1",
            "--otlp-flush-timeout",
            "1",
        ],
        &[],
    );
    serve.wait_for(30, || serve.log().contains("pushing over OTLP"));
    // A few requests queued behind the first one, which is being retried.
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let status = serve.terminate(15);
    let took = t0.elapsed();
    let log = serve.log();
    assert!(status.success(), "{log}");
    // The deadline, with room for a loaded machine (the retries alone would take a minute).
    assert!(took < Duration::from_secs(6), "took {took:?}: {log}");
    let summary = log
        .lines()
        .find(|l| l.contains("data points delivered to"))
        .unwrap_or_else(|| panic!("{log}"));
    let prefix = format!(
        "perfcounters serve: OTLP: 0 data points delivered to http://127.0.0.1:{port}/v1/metrics, "
    );
    let dropped: u64 = summary
        .strip_prefix(&prefix)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(dropped > 0, "{summary}");
}

/// A plain HTTP/1.0 GET, the body.
#[cfg(target_os = "linux")]
fn http_get(addr: SocketAddr, path: &str) -> String {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// `--compat otel` on Linux: the host-metrics receiver's names, attributes and units over OTLP, and
/// the Collector's Prometheus names at /metrics.
#[cfg(target_os = "linux")]
#[test]
fn compat_otel_names_on_linux() {
    let receiver = Receiver::start(&[], None);
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let serve = Serve::start(
        &[
            "--listen",
            &listen.to_string(),
            "--compat",
            "otel",
            "--otlp",
            &receiver.url(),
            "--otlp-interval",
            "0.3",
        ],
        &[],
    );
    serve.wait_for(30, || receiver.inbox.lock().unwrap().requests.len() >= 2);
    let pts = points(&receiver.requests());
    let names: std::collections::BTreeSet<&str> = pts.iter().map(|p| p.metric.as_str()).collect();
    let cpu: Vec<&Point> = pts
        .iter()
        .filter(|p| p.metric == "system.cpu.time")
        .collect();
    assert!(!cpu.is_empty(), "{names:?}");
    for p in &cpu {
        assert!(p.sum);
        assert_eq!(p.unit, "s");
        let keys: Vec<&str> = p.attributes.keys().map(String::as_str).collect();
        assert_eq!(keys, ["cpu", "state"]);
        assert!(["user", "system", "idle", "interrupt"].contains(&p.attributes["state"].as_str()));
        assert!(!p.attributes["cpu"].contains("_Total"));
    }
    let states: std::collections::BTreeSet<&str> =
        cpu.iter().map(|p| p.attributes["state"].as_str()).collect();
    assert_eq!(
        states.into_iter().collect::<Vec<_>>(),
        ["idle", "interrupt", "system", "user"]
    );
    let free: Vec<&Point> = pts
        .iter()
        .filter(|p| {
            p.metric == "system.memory.usage"
                && p.attributes.get("state").map(String::as_str) == Some("free")
        })
        .collect();
    assert!(!free.is_empty() && !free[0].sum && free[0].unit == "By" && free[0].value > 0.0);
    // Disks and interfaces, where the machine has them: device and direction.
    let list = common::run(&["list", "-x", "PhysicalDisk"]);
    if stdout(&list).contains("Disk Read Bytes/sec") {
        let io: Vec<&Point> = pts
            .iter()
            .filter(|p| p.metric == "system.disk.io")
            .collect();
        assert!(!io.is_empty(), "{names:?}");
        assert!(io.iter().all(|p| p.sum
            && p.unit == "By"
            && p.attributes.contains_key("device")
            && ["read", "write"].contains(&p.attributes["direction"].as_str())));
    }
    let list = common::run(&["list", "-x", "Network Interface"]);
    if stdout(&list).contains("Bytes Received/sec") {
        let io: Vec<&Point> = pts
            .iter()
            .filter(|p| p.metric == "system.network.io")
            .collect();
        assert!(!io.is_empty(), "{names:?}");
        assert!(io.iter().all(|p| p.sum
            && p.attributes.contains_key("device")
            && ["receive", "transmit"].contains(&p.attributes["direction"].as_str())));
    }
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("system.") || n.starts_with("perfcounters.otlp_")),
        "{names:?}"
    );
    let metrics = http_get(listen, "/metrics");
    assert!(
        metrics.contains("# TYPE system_cpu_time_seconds_total counter"),
        "{metrics}"
    );
    assert!(
        metrics.contains("system_memory_usage_bytes{state=\"free\"} "),
        "{metrics}"
    );
}

/// `--otlp-only` pushes and serves no HTTP; `--otlp-only` alone is refused.
#[cfg(target_os = "linux")]
#[test]
fn otlp_only_serves_no_http() {
    let receiver = Receiver::start(&[], None);
    let serve = Serve::start(
        &[
            "--otlp-only",
            "--otlp",
            &receiver.url(),
            "--otlp-interval",
            "0.2",
        ],
        &[],
    );
    serve.wait_for(30, || !receiver.inbox.lock().unwrap().requests.is_empty());
    assert!(!serve.log().contains("listening on"), "{}", serve.log());
    let o = common::run(&["serve", "--otlp-only"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--otlp"), "{}", stderr(&o));
}
