//! `perfcounters serve` end to end, with real parts: the endpoints and scrape discipline over plain
//! HTTP, `promtool check metrics` on the output, a real Prometheus scraping it, headless Chromium
//! drawing the chart, TLS and basic auth with curl, a replay, and a load test.
//!
//! Every server listens on 127.0.0.1 with a port of the system's choosing, and every wait is
//! bounded. A test that needs an external tool skips with a message when it is missing, except under
//! `CI=true`, where a missing tool is a failure (`.ci/run` installs them). Linux only: the Windows
//! build runs its tests under Wine, without these tools.
#![cfg(target_os = "linux")]

use crate::common::shared_data;

use crate::common;

use common::{body_attr, chromium_dump, chromium_dump_in_zone, tempdir, tool};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `perfcounters serve`.
struct Server {
    child: Child,
    addr: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Self::start_scheme(args, "http")
    }

    fn start_scheme(args: &[&str], scheme: &str) -> Server {
        let own_address = args
            .iter()
            .any(|a| *a == "--listen" || *a == "--web.listen-address");
        let default_listen: &[&str] = if own_address {
            &[]
        } else {
            &["--listen", "127.0.0.1:0"]
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfcounters"))
            .arg("serve")
            .args(default_listen)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start perfcounters serve");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        let prefix = format!("listening on {scheme}://");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(a) = line.split(&prefix).nth(1) {
                    let _ = tx.send(a.to_string());
                }
                let mut l = sink.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                panic!("serve did not start: {}", log.lock().unwrap());
            }
        };
        Server { child, addr, log }
    }

    /// `GET /api/add?path=…`: adds the counter path `path` to the server's selection.
    fn add(&self, path: &str) -> Response {
        self.get(&format!("/api/add?path={}", encode_query(path)), &[])
    }

    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        request(&self.addr, "GET", path, headers)
    }

    /// RSS of the server in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
}

/// One HTTP/1.1 request on its own connection.
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Response {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let nl = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..nl]).unwrap().trim(), 16)
                .unwrap();
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[nl + 2..nl + 2 + size]);
            rest = &rest[nl + 2 + size + 2..];
        }
        body = out;
    }
    Response {
        status,
        headers,
        body,
    }
}

/// A free port on 127.0.0.1 (for the other servers a test starts).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Kills a child process when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sample_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#')).collect()
}

fn value_of(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn endpoints_formats_and_errors() {
    let s = Server::start(&[]);
    let r = s.get("/metrics", &[("Accept", "text/plain")]);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = r.text();
    assert!(text.contains("# TYPE perfcounters_system_context_switches_total counter\n"));
    assert!(value_of(&text, "perfcounters_system_context_switches_total").unwrap() > 0.0);
    for c in [
        "processor_information",
        "memory",
        "system",
        "physical_disk",
        "logical_disk",
        "network_interface",
    ] {
        assert_eq!(
            value_of(
                &text,
                &format!("perfcounters_collector_success{{collector=\"{c}\"}}")
            ),
            Some(1.0),
            "{c}"
        );
    }
    assert!(!text.contains("_Total\""), "no _Total instances by default");
    assert!(!text.contains("{instance="));

    // OpenMetrics by content negotiation (what Prometheus 2.42 sends).
    let r = s.get(
        "/metrics",
        &[(
            "Accept",
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
        )],
    );
    assert_eq!(
        r.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    let om = r.text();
    assert!(om.ends_with("# EOF\n"));
    assert!(om.contains("# TYPE perfcounters_system_context_switches counter\n"));
    let mut families = std::collections::BTreeSet::new();
    for l in om.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        assert!(
            families.insert(l.split(' ').next().unwrap().to_string()),
            "{l}"
        );
    }

    // gzip when asked.
    let r = s.get("/metrics", &[("Accept-Encoding", "gzip")]);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let mut plain = String::new();
    flate2::read::GzDecoder::new(&r.body[..])
        .read_to_string(&mut plain)
        .unwrap();
    assert!(plain.contains("perfcounters_memory_available_bytes "));

    // A scrape timeout below the margin still leaves a budget; the answer is complete and quick.
    let t0 = Instant::now();
    let r = s.get(
        "/metrics",
        &[("X-Prometheus-Scrape-Timeout-Seconds", "0.2")],
    );
    assert_eq!(r.status, 200);
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(r
        .text()
        .contains("perfcounters_collector_duration_seconds{collector=\"memory\"}"));

    let r = s.get("/health", &[]);
    assert_eq!(
        (r.status, r.text().as_str()),
        (200, "{\"status\":\"ok\"}\n")
    );
    let r = s.get("/", &[]);
    assert_eq!(r.status, 200);
    assert!(r.text().contains("uPlot.iife.min.js"));
    let r = s.get("/uPlot.iife.min.js", &[]);
    assert_eq!(r.body.len(), 51_081);
    assert!(s.get("/uPlot.LICENSE", &[]).text().contains("Leon Sorokin"));
    let r = s.get("/api/paths", &[]);
    let paths: Vec<String> = serde_json::from_slice(&r.body).unwrap();
    assert!(paths.contains(&r"\Processor(*)\% Processor Time".to_string()));
    assert_eq!(s.get("/nope", &[]).status, 404);
    assert_eq!(
        request(&s.addr, "POST", "/metrics", &[("Content-Length", "0")]).status,
        405
    );
    assert_eq!(request(&s.addr, "DELETE", "/", &[]).status, 405);
    let r = s.get("/api/add?path=Processor", &[]);
    assert_eq!(r.status, 400);
    assert!(r.text().contains("Processor"), "{}", r.text());
}

#[test]
fn concurrent_scrapes_share_one_collection() {
    let s = Server::start(&["--process"]);
    let barrier = Arc::new(std::sync::Barrier::new(12));
    let handles: Vec<_> = (0..12)
        .map(|_| {
            let addr = s.addr.clone();
            let b = barrier.clone();
            std::thread::spawn(move || {
                b.wait();
                let r = request(&addr, "GET", "/metrics", &[]);
                assert_eq!(r.status, 200);
                value_of(
                    &r.text(),
                    "perfcounters_collector_duration_seconds{collector=\"process\"}",
                )
                .unwrap()
                .to_bits()
            })
        })
        .collect();
    let durations: std::collections::BTreeSet<u64> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    // Scrapes that joined a running collection report its very duration.
    assert!(
        durations.len() < 12,
        "12 concurrent scrapes ran {} collections",
        durations.len()
    );
}

#[test]
fn promtool_checks_the_output() {
    let Some(promtool) = tool("promtool") else {
        return;
    };
    for args in [
        &["--process"][..],
        &["--compat", "windows_exporter", "--process"][..],
    ] {
        let s = Server::start(args);
        let body = s.get("/metrics", &[]).body;
        let mut child = Command::new(&promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&body).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "promtool check metrics ({args:?}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn prometheus_scrapes_serve() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let s = Server::start(&[]);
    let dir = tempdir("prometheus");
    let port = free_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: perfcounters\n    static_configs:\n      - targets: ['{}']\n",
            s.addr
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let _prom = Guard(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let prom = format!("127.0.0.1:{port}");
    let query = |q: &str| -> Option<serde_json::Value> {
        let s = TcpStream::connect(&prom).ok()?;
        drop(s);
        let path = format!("/api/v1/query?query={}", encode_query(q));
        let r = request(&prom, "GET", &path, &[]);
        (r.status == 200).then(|| serde_json::from_slice(&r.body).ok())?
    };
    let deadline = Instant::now() + Duration::from_secs(45);
    let mut up = None;
    while Instant::now() < deadline {
        if let Some(v) = query("up{job=\"perfcounters\"}") {
            if let Some(x) = v["data"]["result"][0]["value"][1].as_str() {
                up = Some(x.to_string());
                if x == "1" {
                    break;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
    assert_eq!(up.as_deref(), Some("1"), "Prometheus log:\n{log}");
    // The scraped samples are there, with the collector self-metrics.
    let v = query("perfcounters_system_context_switches_total").unwrap();
    assert!(
        v["data"]["result"][0]["value"][1]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            > 0.0
    );
    let v = query("min(perfcounters_collector_success)").unwrap();
    assert_eq!(v["data"]["result"][0]["value"][1], "1");
    // The target reports no scrape error (the OpenMetrics answer parsed).
    let r = request(&prom, "GET", "/api/v1/targets", &[]);
    let t: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let target = &t["data"]["activeTargets"][0];
    assert_eq!(target["health"], "up", "{target}");
    assert_eq!(target["lastError"], "", "{target}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn encode_query(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn chromium_draws_the_live_chart() {
    let s = Server::start(&[]);
    let url = format!(
        "http://{}/?samples=3&path={}&path={}",
        s.addr,
        encode_query(r"\Memory\Available Bytes"),
        encode_query(r"\Processor(_Total)\% Processor Time")
    );
    let Some(dom) = chromium_dump(&url, "chromium-live") else {
        return;
    };
    // Three live samples arrived over the event stream: both counters have points, and the lines
    // coloured pixels of the canvas.
    let points = body_attr(&dom, "points");
    let ink = body_attr(&dom, "ink");
    assert!(points >= 4, "points {points}");
    assert!(ink > 200, "ink {ink}");
    assert!(dom.contains(r"\Memory\Available Bytes</td>"), "{dom}");
    assert!(dom.contains(r"\Processor(_Total)\% Processor Time</td>"));
    // The server kept the history for the next page.
    let h: serde_json::Value = serde_json::from_slice(&s.get("/api/history", &[]).body).unwrap();
    assert_eq!(h["series"].as_array().unwrap().len(), 2);
    assert!(h["t"].as_array().unwrap().len() >= 3);
}

#[test]
fn replay_serves_recorded_blocks_and_charts_them() {
    let dir = tempdir("replay");
    let files = common::write_blocks(&dir);
    let mut args = vec!["--replay"];
    args.extend(files.iter().map(String::as_str));
    // `--web.listen-address` is accepted as well as `--listen` (exporter-toolkit's name).
    args.extend(["--web.listen-address", "127.0.0.1:0"]);
    let s = Server::start(&args);
    // Processor has no Processor Information here; the default set falls back to it. Each scrape
    // takes the next recorded block; the last one stays.
    let idle = |text: &str| {
        value_of(
            text,
            "perfcounters_processor_processor_inverse_seconds_total{instance_name=\"0\"}",
        )
    };
    let a = s.get("/metrics", &[]).text();
    assert_eq!(idle(&a), Some(0.0));
    assert_eq!(value_of(&a, "perfcounters_system_processes"), Some(100.0));
    let b = s.get("/metrics", &[]).text();
    assert_eq!(idle(&b), Some(0.25));
    assert_eq!(value_of(&b, "perfcounters_system_processes"), Some(101.0));
    let c = s.get("/metrics", &[]).text();
    let d = s.get("/metrics", &[]).text();
    assert_eq!(idle(&c), Some(1.25));
    assert_eq!(idle(&d), Some(1.25));
    // The boot time from System Up Time: its raw value, the FILETIME 132289457285000000.
    assert_eq!(
        value_of(&d, "perfcounters_system_system_start_time_seconds"),
        Some(1_584_472_128.5)
    );
    assert!(!sample_lines(&d).iter().any(|l| l.contains("_Total")));
    // The chart shows the whole recording at once: three samples, the first one priming.
    let r = s.add(r"\Processor(*)\% Processor Time");
    assert_eq!(r.status, 204);
    // A path that selects nothing is refused with close names; a missing instance is kept (it may
    // appear later, as in `watch`).
    let r = s.add(r"\Sistem\Processes");
    assert_eq!(r.status, 400);
    assert!(
        r.text()
            .contains(r#"no object named "Sistem"; did you mean "System"?"#),
        "{}",
        r.text()
    );
    // A chart holds 32 paths at most.
    let many: Vec<String> = (2..33)
        .map(|i| format!(r"\Processor({i})\% Processor Time"))
        .collect();
    for p in &many {
        let r = s.add(p);
        assert_eq!(r.status, 204, "{p}: {}", r.text());
    }
    let r = s.add(r"\System\Processes");
    assert_eq!(r.status, 400);
    assert!(
        r.text().contains("32 counter paths at most"),
        "{}",
        r.text()
    );
    for p in &many {
        let r = s.get(&format!("/api/remove?path={}", encode_query(p)), &[]);
        assert_eq!(r.status, 204);
    }
    let h: serde_json::Value = serde_json::from_slice(&s.get("/api/history", &[]).body).unwrap();
    assert_eq!(h["paths"].as_array().unwrap().len(), 1);
    assert_eq!(
        h["series"],
        serde_json::json!([
            r"\\GETAWAY\Processor(0)\% Processor Time",
            r"\\GETAWAY\Processor(1)\% Processor Time",
            r"\\GETAWAY\Processor(_Total)\% Processor Time"
        ])
    );
    assert_eq!(
        h["v"],
        serde_json::json!([[null, 75.0, 0.0], [null, 50.0, 100.0], [null, 62.5, 50.0]])
    );
    assert_eq!(
        h["t"],
        serde_json::json!([
            1_584_557_643_988i64,
            1_584_557_644_988i64,
            1_584_557_645_988i64
        ])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A configuration that names an object or a counter the source lacks gets the close names, as
/// the command line and the Python package give them; with nothing left to export, serve stops.
#[test]
fn a_misspelt_configuration_gets_close_names() {
    let dir = tempdir("serve-misspelt");
    let files = common::write_blocks(&dir);
    let config = dir.join("serve.yaml");
    std::fs::write(
        &config,
        "objects:\n  - object: Sistem\n  - object: Processor\n    counters: ['% Procesor Time']\n",
    )
    .unwrap();
    let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--config"];
    args.push(config.to_str().unwrap());
    args.push("--replay");
    let o = common::run_on(&args, &files);
    assert!(!o.status.success());
    let err = common::stderr(&o);
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [
            r#"perfcounters serve: no object named "Sistem"; did you mean "System"?"#,
            r#"perfcounters serve: object "Processor" has no counter matching "% Procesor Time"; did you mean "% Processor Time"?"#,
            "perfcounters: nothing to export: no configured object is offered by the source",
        ],
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tls_and_basic_auth_from_a_web_config_file() {
    let (Some(openssl), Some(curl)) = (tool("openssl"), tool("curl")) else {
        return;
    };
    let dir = tempdir("tls");
    let ok = Command::new(openssl)
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success());
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let web = dir.join("web.yml");
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  min_version: TLS12\n\
             http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n\
             basic_auth_users:\n  alice: '{hash}'\n"
        ),
    )
    .unwrap();
    let s = Server::start_scheme(&["--web.config.file", web.to_str().unwrap()], "https");
    let curl_get = |user: Option<&str>, path: &str| {
        let mut c = Command::new(&curl);
        c.args(["-s", "-i", "--max-time", "20", "--cacert"])
            .arg(dir.join("cert.pem"));
        if let Some(u) = user {
            c.args(["-u", u]);
        }
        let out = c.arg(format!("https://{}{path}", s.addr)).output().unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let ok = curl_get(Some("alice:s3cret"), "/metrics");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("perfcounters_system_context_switches_total "));
    assert!(ok
        .to_ascii_lowercase()
        .contains("x-content-type-options: nosniff"));
    let denied = curl_get(Some("alice:wrong"), "/metrics");
    assert!(denied.starts_with("HTTP/1.1 401"), "{denied}");
    assert!(
        denied.contains("WWW-Authenticate: Basic") || denied.contains("www-authenticate: Basic")
    );
    assert!(curl_get(None, "/health").starts_with("HTTP/1.1 401"));
    // Plain HTTP on the TLS port is not served.
    let mut plain = TcpStream::connect(&s.addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    plain
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut buf = Vec::new();
    let _ = plain.read_to_end(&mut buf);
    assert!(!buf.starts_with(b"HTTP/1.1 200"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// 300 scrapes at 30 concurrent, 50 half-open connections, a 200 kB header, 404/405, and the RSS.
/// Timings are printed, not asserted (they are recorded with the machine in docs/benchmarks.md).
#[test]
fn load_half_open_connections_and_oversized_headers() {
    let s = Server::start(&["--process"]);
    // Half-open: connected, a partial request head, then silence.
    let idle: Vec<TcpStream> = (0..50)
        .map(|_| {
            let mut c = TcpStream::connect(&s.addr).unwrap();
            c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            c
        })
        .collect();
    // A 200 kB header is refused without harm.
    let big = "a".repeat(200 * 1024);
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ =
        c.write_all(format!("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n").as_bytes());
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    let head = String::from_utf8_lossy(&raw[..raw.len().min(40)]).to_string();
    assert!(head.starts_with("HTTP/1.1 431"), "{head}");

    let t0 = Instant::now();
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let handles: Vec<_> = (0..30)
        .map(|_| {
            let addr = s.addr.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                for _ in 0..10 {
                    let r = request(&addr, "GET", "/metrics", &[("Accept-Encoding", "gzip")]);
                    assert_eq!(r.status, 200);
                    done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let elapsed = t0.elapsed();
    assert_eq!(done.load(std::sync::atomic::Ordering::Relaxed), 300);
    assert_eq!(s.get("/nope", &[]).status, 404);
    assert_eq!(
        request(&s.addr, "POST", "/metrics", &[("Content-Length", "0")]).status,
        405
    );
    let rss = s.rss_kib();
    eprintln!(
        "load: 300 scrapes at 30 concurrent in {:.2} s ({:.1} scrapes/s) with 50 half-open connections; RSS {} KiB",
        elapsed.as_secs_f64(),
        300.0 / elapsed.as_secs_f64(),
        rss
    );
    assert!(rss < 64 * 1024, "RSS {rss} KiB");
    drop(idle);
    assert_eq!(s.get("/health", &[]).status, 200);
    let _ = &s.log;
}

/// A PDH-CSV log that Performance Monitor wrote (../shared/data), and its Parquet copy: the chart
/// shows the selected columns over the whole log, in UTC; /metrics has only the self-metrics.
#[test]
fn replay_of_a_counter_log_is_charted() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let log = data.join("logs/en-pst-BM_Active_Load_Test.csv");
    let log = log.to_str().unwrap();
    // The same log as Parquet (relog's copy) is a counter log too, and charts the same.
    let dir = tempdir("serve-parquet");
    let parquet = dir.join("log.parquet");
    let o = Command::new(env!("CARGO_BIN_EXE_perfcounters"))
        .args(["relog", log, "-o", parquet.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for log in [log, parquet.to_str().unwrap()] {
        let s = Server::start(&["--replay", log]);
        assert!(s
            .log
            .lock()
            .unwrap()
            .contains("a counter log holds computed values"));
        let paths: Vec<String> = serde_json::from_slice(&s.get("/api/paths", &[]).body).unwrap();
        assert_eq!(paths.len(), 4);
        assert_eq!(paths[3], r"\\ATTCOREU01\Processor(_Total)\% Processor Time");
        let r = s.add(r"\Processor(*)\% Processor Time");
        assert_eq!(r.status, 204);
        let r = s.add(r"\Nope(*)\*");
        assert_eq!(r.status, 400);
        assert_eq!(r.text(), "\\Nope(*)\\*: no column of the log matches\n");
        let h: serde_json::Value =
            serde_json::from_slice(&s.get("/api/history", &[]).body).unwrap();
        assert_eq!(
            h["series"],
            serde_json::json!([r"\\ATTCOREU01\Processor(_Total)\% Processor Time"])
        );
        let t = h["t"].as_array().unwrap();
        assert_eq!(t.len(), 351);
        // "02/01/2014 00:19:44.718" Pacific Standard Time (bias 480) = 2014-02-01T08:19:44.718Z.
        assert_eq!(t[0], 1_391_242_784_718i64);
        assert_eq!(t[1], 1_391_242_799_718i64);
        // The chart's axis: the log's own local times, as relog writes them, and its zone.
        assert_eq!(h["lt"][0], 1_391_213_984_718i64);
        assert_eq!(
            h["log"],
            serde_json::json!({
                "files": [log], "records": 351, "interval_ms": 15_000,
                "start": "2014-02-01T00:19:44.718", "end": END,
                "zone": "Pacific Standard Time (UTC-08:00)"
            })
        );
        // The first row's " " has no value; the second is "0.98958333333333259".
        assert_eq!(h["v"][0][0], serde_json::Value::Null);
        assert_eq!(h["v"][0][1], 0.989_583_333_333_332_6);
        let m = s.get("/metrics", &[]).text();
        assert_eq!(
            sample_lines(&m).len(),
            1,
            "only perfcounters_scrape_duration_seconds:\n{m}"
        );
        drop(s);
    }
    std::fs::remove_dir_all(&dir).unwrap();

    // A binary log (.blg) of a Windows 8 machine: raw samples, computed as relog does.
    let blg = data.join("blg/tx-win8-BasicPerfCounters.blg");
    let s = Server::start(&["--replay", blg.to_str().unwrap()]);
    let r = s.add(r"\Processor(*)\% Processor Time");
    assert_eq!(r.status, 204);
    let h: serde_json::Value = serde_json::from_slice(&s.get("/api/history", &[]).body).unwrap();
    assert_eq!(h["series"].as_array().unwrap().len(), 5, "{}", h["series"]);
    assert_eq!(
        h["series"][4],
        r"\\GEORGIS3\Processor(_Total)\% Processor Time"
    );
    assert_eq!(h["t"].as_array().unwrap().len(), 601);
    // Its chart too is drawn in the log's own local time (Pacific Standard Time), and described.
    assert_eq!(h["t"][0], 1_361_328_617_844i64);
    assert_eq!(h["lt"][0], 1_361_299_817_844i64);
    assert_eq!(
        h["log"],
        serde_json::json!({
            "files": [blg.to_str().unwrap()], "records": 601, "interval_ms": 1_000,
            "start": "2013-02-19T18:50:17.844", "end": "2013-02-19T19:00:17.840",
            "zone": "Pacific Standard Time (UTC-08:00)"
        })
    );
    // The first sample primes the rate; later ones are percentages.
    assert_eq!(h["v"][4][0], serde_json::Value::Null);
    let v = h["v"][4][1].as_f64().unwrap();
    assert!((0.0..=100.0).contains(&v), "{v}");
}

/// The chart of a log in a browser on the other side of the world (Tokyo, UTC+9): the axis shows
/// the log's own local times (Pacific Standard Time), as relog writes them, and the footer
/// describes the log: its file, records, interval, range and zone.
#[test]
fn chromium_charts_a_log_in_its_own_local_time() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let log = data.join("logs/en-pst-BM_Active_Load_Test.csv");
    let log = log.to_str().unwrap();
    let s = Server::start(&["--replay", log]);
    let url = format!(
        "http://{}/?samples=1&path={}",
        s.addr,
        encode_query(r"\Processor(*)\% Processor Time")
    );
    let Some(dom) = chromium_dump_in_zone(&url, "chromium-log", Some("Asia/Tokyo")) else {
        return;
    };
    assert_eq!(body_attr(&dom, "points"), 350, "{dom}");
    assert!(dom.contains(r#"data-first="2014-02-01 00:19:44""#), "{dom}");
    let about = format!(
        "A log: {log}; 351 records, one every 15 s, 2014-02-01T00:19:44.718 to {END}, in the \
         log's local time: Pacific Standard Time (UTC-08:00), as relog shows them; values as \
         Performance Monitor computes them."
    );
    assert!(dom.contains(&about), "{dom}");
    assert!(!dom.contains("one per second"), "{dom}");
}

/// The last record's local time of en-pst-BM_Active_Load_Test.csv.
const END: &str = "2014-02-01T01:47:14.718";

#[test]
fn chromium_opens_the_chart_with_the_default_counters() {
    let s = Server::start(&[]);
    let url = format!("http://{}/?samples=3", s.addr);
    let Some(dom) = chromium_dump(&url, "chromium-default") else {
        return;
    };
    // No path in the address: the page charts the default counters the source has.
    assert!(
        dom.contains(r"\Processor(_Total)\% Processor Time</td>"),
        "{dom}"
    );
    assert!(dom.contains(r"\Memory\% Committed Bytes In Use</td>"));
    let points = body_attr(&dom, "points");
    let ink = body_attr(&dom, "ink");
    assert!(points >= 4, "points {points}");
    assert!(ink > 200, "ink {ink}");
    // The history holds one point per sample: its times only increase, after the paths were
    // added one by one (each addition samples at once).
    let h: serde_json::Value = serde_json::from_slice(&s.get("/api/history", &[]).body).unwrap();
    let t: Vec<i64> = h["t"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    assert!(t.len() >= 3, "{h}");
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    assert_eq!(
        h["paths"],
        serde_json::json!([
            r"\Processor(_Total)\% Processor Time",
            r"\Memory\% Committed Bytes In Use",
            r"\PhysicalDisk(_Total)\% Disk Time"
        ])
    );
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

/// A binary log holds raw samples: `serve --replay x.blg` exports them, one sample per scrape, as it
/// does for captures (../shared/data: a Windows 8 log of Processor and PhysicalDisk counters).
#[test]
fn replay_of_a_binary_log_exports_its_counters() {
    let Some(blg) = tx_log() else {
        return;
    };
    let blg = blg.as_str();
    let s = Server::start(&["--replay", blg]);
    assert!(!s.log.lock().unwrap().contains("computed values"));
    let idle = |text: &str, cpu: &str| {
        value_of(
            text,
            &format!(
                "perfcounters_processor_processor_inverse_seconds_total{{instance_name=\"{cpu}\"}}"
            ),
        )
    };
    let writes = |text: &str| {
        value_of(
            text,
            "perfcounters_physical_disk_disk_write_size_bytes_count{instance_name=\"0 C:\"}",
        )
    };
    // The 100 ns timers of the first two samples, in seconds; the disk's write count.
    let a = s.get("/metrics", &[]).text();
    assert_eq!(idle(&a, "0"), Some(112_959.171_875), "{a}");
    assert_eq!(idle(&a, "3"), Some(119_242.359_375));
    assert_eq!(writes(&a), Some(7_028_975.0));
    let b = s.get("/metrics", &[]).text();
    assert_eq!(idle(&b, "0"), Some(112_960.015_625), "{b}");
    assert_eq!(writes(&b), Some(7_029_031.0));
    assert!(!sample_lines(&b).iter().any(|l| l.contains("_Total")));
}

/// Counter paths after `--replay` select what is exported, as the configuration's `paths` do:
/// processor 0's `% Processor Time` of the Windows 8 log, not processor 3's nor the disk's.
#[test]
fn replay_exports_only_the_counter_paths_given() {
    let Some(blg) = tx_log() else {
        return;
    };
    let blg = blg.as_str();
    let s = Server::start(&["--replay", blg, r"\Processor(0)\% Processor Time"]);
    let a = s.get("/metrics", &[]).text();
    let lines: Vec<&str> = sample_lines(&a)
        .into_iter()
        .filter(|l| {
            l.starts_with("perfcounters_processor") || l.starts_with("perfcounters_physical")
        })
        .collect();
    assert_eq!(
        lines,
        ["perfcounters_processor_processor_inverse_seconds_total{instance_name=\"0\"} 112959.171875"],
        "{a}"
    );
    // A text log is charted whole: paths are refused with the reason.
    let dir = tempdir("serve-paths");
    let csv = dir.join("x.csv");
    std::fs::write(
        &csv,
        "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n\"01/17/2020 00:00:00.000\",\"5\"\r\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfcounters"))
        .args(["serve", "--listen", "127.0.0.1:0", "--replay"])
        .arg(&csv)
        .arg(r"\Memory\Available Bytes")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a counter log holds computed values and is shown whole in the chart"),
        "{err}"
    );
}

/// relog, analyze and `serve --replay` read a log through the library's one pipeline: the same
/// samples give the same values, bit for bit (the average within rounding of its sum).
#[test]
fn relog_analyze_and_replay_give_equal_values() {
    let Some(data) = shared_data::dir("the real Windows logs") else {
        return;
    };
    let blg = data.join("blg/tx-win8-BasicPerfCounters.blg");
    let blg = blg.to_str().unwrap();
    let path = r"\Processor(_Total)\% Processor Time";
    let column = r"\\GEORGIS3\Processor(_Total)\% Processor Time";

    let relog = common::run(&["relog", blg, "-c", path, "-f", "csv"]);
    common::assert_success(&relog);
    let text = common::stdout(&relog);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().ends_with(&format!("\"{column}\"")));
    let relogged: Vec<Option<f64>> = lines
        .map(|l| {
            let cell = l.rsplit(',').next().unwrap().trim_matches('"');
            cell.trim().parse::<f64>().ok()
        })
        .collect();
    assert_eq!(relogged.len(), 601);
    assert_eq!(relogged[0], None, "the first sample primes the rate");

    let s = Server::start(&["--replay", blg]);
    assert_eq!(s.add(path).status, 204);
    let h: serde_json::Value = serde_json::from_slice(&s.get("/api/history", &[]).body).unwrap();
    assert_eq!(h["series"], serde_json::json!([column]));
    let served: Vec<Option<f64>> = h["v"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(serde_json::Value::as_f64)
        .collect();
    assert_eq!(served, relogged);
    drop(s);

    let analyze = common::run(&["analyze", blg, "--format", "json"]);
    common::assert_success(&analyze);
    let v: serde_json::Value = serde_json::from_slice(&analyze.stdout).unwrap();
    let st = v["statistics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["counter"] == column)
        .unwrap();
    let values: Vec<f64> = relogged.iter().flatten().copied().collect();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let avg = values.iter().sum::<f64>() / values.len() as f64;
    assert_eq!(st["count"].as_u64(), Some(values.len() as u64));
    assert_eq!(st["min"].as_f64(), Some(min));
    assert_eq!(st["max"].as_f64(), Some(max));
    assert!((st["avg"].as_f64().unwrap() - avg).abs() < 1e-12 * avg.abs());
}
