//! `perfcounters serve`: a Prometheus exporter and a live chart in the browser.
//!
//! One thread owns the source ([`engine`]); a single-threaded tokio runtime serves HTTP ([`http`]).
//! Scrapes that arrive while a collection runs share it, each waiting at most its own time budget.

mod config;
mod engine;
mod http;
mod push;
mod webconfig;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use axum::http::{HeaderName, HeaderValue};
use perfcounters::export::otlp::FamiliesEncoder;
use perfcounters::export::{compat, ExportConfig, Plan};
use perfcounters::log::Pipeline;
use perfcounters::source::replay::ReplayInput;
use perfcounters::source::Catalog;

use crate::otlp::delivery::{Delivery, WhenFull};
use crate::otlp::{process_env, OtlpSettings};
use config::ServeConfig;
use engine::{Backend, Engine};
use webconfig::WebSettings;

/// Name sets `--compat` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// windows_exporter v0.31: windows_cpu_time_total{core,mode} and friends
    #[value(name = "windows_exporter")]
    WindowsExporter,
    /// The OpenTelemetry host-metrics receiver: system.cpu.time{cpu,state} and friends (over OTLP;
    /// /metrics serves them as the Collector's Prometheus exporter names them)
    #[value(name = "otel")]
    Otel,
}

impl Compat {
    /// The name `--compat` takes.
    fn name(self) -> &'static str {
        match self {
            Compat::WindowsExporter => "windows_exporter",
            Compat::Otel => "otel",
        }
    }
}

/// `perfcounters serve` arguments.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    // The help is an attribute: `[::]` is not Markdown.
    #[arg(
        long = "listen",
        visible_alias = "web.listen-address",
        value_name = "ADDR",
        default_value = "0.0.0.0:9182",
        help = "Address to listen on (repeatable); [::]:9182 listens on every address"
    )]
    listen: Vec<String>,
    /// What to export (YAML: objects, counters, counter paths, metric names, labels); default: processors,
    /// memory, system, disks and network
    #[arg(long, visible_alias = "config.file", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Use another exporter's metric names and labels
    #[arg(long, value_enum)]
    compat: Option<Compat>,
    /// Also export the Process object; optional instance name patterns (wildcards) restrict it
    #[arg(long, num_args = 0.., value_name = "PATTERN")]
    process: Option<Vec<String>>,
    /// Export _Total instances too
    #[arg(long)]
    include_total: bool,
    /// TLS and basic authentication (the Prometheus exporter-toolkit web configuration file)
    #[arg(long = "web.config.file", value_name = "FILE")]
    web_config: Option<PathBuf>,
    /// Scrapes served at once; more get 503 (0 = no limit)
    #[arg(long = "web.max-requests", default_value_t = 40, value_name = "N")]
    max_requests: usize,
    /// Seconds subtracted from the scrape timeout a client announces (X-Prometheus-Scrape-Timeout-Seconds)
    #[arg(
        long = "scrape.timeout-margin",
        default_value_t = 0.5,
        value_name = "SECONDS"
    )]
    timeout_margin: f64,
    /// Samples of each charted counter kept for the page (one per second)
    #[arg(long, default_value_t = 600, value_name = "N")]
    chart_history: usize,
    #[command(flatten)]
    replay: crate::args::ReplayArgs,
    /// Also push the exported counters over OTLP/HTTP every interval, to ENDPOINT (a URL; default
    /// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318)
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "ENDPOINT")]
    otlp: Option<String>,
    /// With --otlp: push only, serve no HTTP (no /metrics, no chart)
    #[arg(long, requires = "otlp")]
    otlp_only: bool,
    /// Seconds between OTLP pushes (overrides OTEL_METRIC_EXPORT_INTERVAL; default 60)
    #[arg(long, value_name = "SECONDS")]
    otlp_interval: Option<f64>,
    /// Seconds the OTLP queue may take to flush on Ctrl-C or SIGTERM
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    otlp_flush_timeout: f64,
    #[command(flatten)]
    otlp_flags: crate::otlp::OtlpFlags,
}

/// How the HTTP side behaves.
pub(crate) struct Settings {
    max_requests: usize,
    margin: Duration,
    chart_history: usize,
    self_prefix: String,
    auth: Option<webconfig::BasicAuth>,
    headers: Vec<(HeaderName, HeaderValue)>,
    otlp: Option<Arc<Delivery>>,
    /// `--otlp`: the push interval, and where the engine sends each collection for it.
    pushes: Option<(Duration, Pushes)>,
}

/// The collections the engine hands to the push task.
type Pushes = tokio::sync::mpsc::UnboundedSender<tokio::sync::watch::Receiver<engine::Progress>>;

/// Starts the collection thread for `plan` on `backend` and returns the handlers' shared state.
pub(crate) fn start(backend: Backend, plan: Plan, settings: Settings) -> Result<Arc<http::App>> {
    let collectors: Vec<String> = plan.collectors.iter().map(|c| c.name.clone()).collect();
    let paths = serde_json::Value::from(backend.completion_paths()).to_string();
    let (events, _) = tokio::sync::broadcast::channel(64);
    let viewers = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let flight: engine::Flight = Arc::new(Mutex::new(None));
    let mut engine = Engine::new(
        backend,
        plan,
        settings.chart_history.max(2),
        events.clone(),
        viewers.clone(),
    );
    if let Some((interval, to)) = settings.pushes {
        engine = engine.with_push(engine::PushSchedule {
            interval,
            to,
            flight: flight.clone(),
        });
    }
    std::thread::Builder::new()
        .name("collector".into())
        .spawn(move || engine.run(rx))
        .context("cannot start the collection thread")?;
    Ok(Arc::new(http::App {
        tx: Mutex::new(tx),
        flight,
        inflight: Arc::new(tokio::sync::Semaphore::new(if settings.max_requests == 0 {
            tokio::sync::Semaphore::MAX_PERMITS
        } else {
            settings.max_requests
        })),
        margin: settings.margin,
        default_timeout: Duration::from_secs(10),
        collectors,
        self_prefix: settings.self_prefix,
        auth: settings.auth,
        headers: settings.headers,
        otlp: settings.otlp,
        events,
        viewers,
        paths: Arc::from(paths),
    }))
}

/// Runs the server until interrupted.
pub fn run(args: &ServeArgs) -> Result<()> {
    if !(args.timeout_margin.is_finite() && args.timeout_margin >= 0.0) {
        bail!("--scrape.timeout-margin must be a number of seconds >= 0");
    }
    let addrs = args
        .listen
        .iter()
        .map(|a| parse_addr(a))
        .collect::<Result<Vec<_>>>()?;
    let web = match &args.web_config {
        Some(p) => WebSettings::load(p)?,
        None => WebSettings::none(),
    };
    let mut file_config = match &args.config {
        Some(p) => Some(ServeConfig::load(p)?),
        None => None,
    };
    // Counter paths after --replay select what is exported, as the configuration's `paths` do.
    let mut paths = Vec::new();
    let replay = args.replay.recordings_and_paths(&mut paths)?;
    let backend = open_backend(args, &replay, file_config.as_mut())?;
    if !paths.is_empty() {
        if matches!(backend, Backend::Log(_)) {
            bail!(
                "a counter log holds computed values and is shown whole in the chart; counter \
                 paths ({}) select what /metrics exports from raw data (block files, captures, .blg)",
                paths.join(", ")
            );
        }
        if args.compat.is_some() {
            bail!(
                "counter paths ({}) and --compat {} cannot be combined: the compat names are fixed",
                paths.join(", "),
                args.compat.map_or("", Compat::name)
            );
        }
        file_config
            .get_or_insert_with(ServeConfig::default)
            .paths
            .extend(paths);
    }
    let plan = plan(args, file_config.as_ref(), backend.catalog())?;
    for p in &plan.problems {
        eprintln!("perfcounters serve: {p}");
    }
    if matches!(backend, Backend::Log(_)) {
        eprintln!(
            "perfcounters serve: a counter log holds computed values, not raw counters: /metrics \
             serves only the self-metrics; the chart at / shows the log"
        );
    } else if plan.collectors.is_empty() {
        bail!("nothing to export: no configured object is offered by the source");
    }
    let headers = web
        .headers
        .iter()
        .map(|(k, v)| {
            Ok((
                HeaderName::try_from(k.as_str()).with_context(|| format!("header name {k}"))?,
                HeaderValue::try_from(v.as_str()).with_context(|| format!("header value {v}"))?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The OTLP delivery is a task of this runtime (it posts on the thread that collected, which is
    // idle between collections, rather than handing each request to a thread of its own).
    let push = {
        let _entered = runtime.enter();
        otlp_push(args, &backend)?
    };
    let (pushes_tx, pushes_rx) = tokio::sync::mpsc::unbounded_channel();
    let app = start(
        backend,
        plan,
        Settings {
            max_requests: args.max_requests,
            margin: Duration::from_secs_f64(args.timeout_margin),
            chart_history: args.chart_history,
            self_prefix: match args.compat {
                Some(Compat::WindowsExporter) => "windows_exporter".into(),
                Some(Compat::Otel) | None => "perfcounters".into(),
            },
            auth: web.auth,
            headers,
            otlp: push.as_ref().map(|p| p.delivery.clone()),
            pushes: push.as_ref().map(|p| (p.interval, pushes_tx)),
        },
    )?;
    let pusher = push.clone();
    let last = push.clone();
    let http_app = app.clone();
    runtime.block_on(async move {
        let pushing = pusher.map(|p| {
            eprintln!(
                "perfcounters serve: pushing over OTLP to {} every {:.3} s",
                p.delivery.endpoint(),
                p.interval.as_secs_f64()
            );
            tokio::spawn(push::run(app.clone(), p, pushes_rx))
        });
        let router = http::router(http_app);
        let tls = web.tls.map(tokio_rustls::TlsAcceptor::from);
        let mut servers = Vec::new();
        let addrs = if args.otlp_only { Vec::new() } else { addrs };
        for addr in addrs {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            let local = listener.local_addr()?;
            eprintln!(
                "perfcounters serve: listening on {}://{local}",
                if tls.is_some() { "https" } else { "http" }
            );
            servers.push(tokio::spawn(http::serve(
                listener,
                router.clone(),
                tls.clone(),
            )));
        }
        shutdown_signal().await;
        eprintln!("perfcounters serve: stopping");
        let flush_deadline =
            std::time::Instant::now() + Duration::from_secs_f64(args.otlp_flush_timeout);
        if let (Some(task), Some(p)) = (pushing, &last) {
            task.abort();
            // The last values (within the flush deadline), then the queue flushed by then.
            let _ = tokio::time::timeout_at(flush_deadline.into(), push::push_once(&app, p)).await;
            push::flush(p, flush_deadline).await;
        }
        Ok::<(), anyhow::Error>(())
    })
}

/// The OTLP push `--otlp` asks for: its settings (the OpenTelemetry variables, the flags over
/// them) and its delivery, a task of the runtime entered.
fn otlp_push(args: &ServeArgs, backend: &Backend) -> Result<Option<Arc<push::Push>>> {
    let Some(endpoint) = &args.otlp else {
        return Ok(None);
    };
    if matches!(backend, Backend::Log(_)) {
        bail!(
            "--otlp pushes raw counters, and a counter log holds computed values: push a log \
             with `perfcounters relog LOG -f otlp -o ENDPOINT`"
        );
    }
    if !(args.otlp_flush_timeout.is_finite() && args.otlp_flush_timeout >= 0.0) {
        bail!("--otlp-flush-timeout must be a number of seconds >= 0");
    }
    let endpoint = (!endpoint.is_empty()).then_some(endpoint.as_str());
    let mut settings = OtlpSettings::resolve(endpoint, &args.otlp_flags, &process_env)?;
    if let Some(s) = args.otlp_interval {
        if !(s.is_finite() && s > 0.0) {
            bail!("--otlp-interval must be a number of seconds > 0");
        }
        settings.interval = Duration::from_secs_f64(s);
    }
    let ca = process_env("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE")
        .or_else(|| process_env("OTEL_EXPORTER_OTLP_CERTIFICATE"));
    let delivery = Delivery::start_task(&settings, WhenFull::DropOldest, ca.as_deref())?;
    let prefix = match args.compat {
        Some(Compat::WindowsExporter) => "windows",
        Some(Compat::Otel) | None => "perfcounters",
    };
    Ok(Some(Arc::new(push::Push {
        delivery: Arc::new(delivery),
        encoder: std::sync::Mutex::new(FamiliesEncoder::new(&settings.resource, prefix)),
        own: std::sync::Mutex::new(Vec::new()),
        interval: settings.interval,
        prefix: prefix.into(),
        start: push::now_ns(),
    })))
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// `127.0.0.1:9182`, `[::1]:9182`, `:9182` (every address) or `localhost:9182`.
fn parse_addr(s: &str) -> Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    let s = s.trim();
    let full = if s.starts_with(':') {
        format!("0.0.0.0{s}")
    } else {
        s.to_string()
    };
    full.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .with_context(|| {
            format!("invalid listen address \"{s}\" (use HOST:PORT, [IPv6]:PORT or :PORT)")
        })
}

/// The source: live (with the configuration's names made English where the machine names them in
/// its language), or a replay.
fn open_backend(
    args: &ServeArgs,
    replay: &[PathBuf],
    config: Option<&mut ServeConfig>,
) -> Result<Backend> {
    let names = args.replay.names.as_deref();
    if replay.is_empty() {
        if names.is_some() {
            bail!("--names applies to --replay");
        }
        #[cfg(windows)]
        {
            let mut source = perfcounters::source::windows::WindowsSource::local();
            if let Some(c) = config {
                c.translate(|n| source.registry().english_name(n));
            }
            return Backend::live(Box::new(source));
        }
        #[cfg(not(windows))]
        {
            let _ = config;
            return Backend::live(perfcounters::source::local()?);
        }
    }
    // Counter logs (computed values) are shown in the chart only; raw data is replayed and
    // exported.
    let input = ReplayInput::classify(replay).map_err(crate::collect::replay_error)?;
    if let ReplayInput::Log { inputs, .. } = &input {
        input
            .check_names(names)
            .map_err(crate::collect::replay_error)?;
        let opened = Pipeline::new(inputs).open()?;
        for w in opened.warnings() {
            eprintln!("perfcounters serve: warning: {w}");
        }
        return Ok(Backend::Log(engine::LogData::read(opened)?));
    }
    let mut opened = crate::collect::open_replay(input, names)?;
    let log = opened.zone().cloned().map(|rules| {
        let file = replay
            .first()
            .map_or_else(String::new, |p| p.display().to_string());
        (file, rules)
    });
    let (snapshots, catalog) = opened.recorded()?;
    Backend::replay(snapshots, catalog, log)
}

fn plan(args: &ServeArgs, file: Option<&ServeConfig>, catalog: &Catalog) -> Result<Plan> {
    if let Some(compat) = args.compat {
        if file.is_some() {
            bail!(
                "--config and --compat {} cannot be combined: the compat names are fixed",
                compat.name()
            );
        }
        return Ok(match compat {
            Compat::WindowsExporter => compat::windows_exporter(catalog, args.process.as_deref()),
            Compat::Otel => {
                if args.process.is_some() {
                    bail!("--process and --compat otel cannot be combined: the host-metrics names have no process metrics");
                }
                compat::otel::otel(catalog)
            }
        });
    }
    let mut config = match file {
        Some(f) => f.export_config(catalog, args.process.as_deref())?,
        None => {
            let c = ExportConfig::default_set(catalog);
            match &args.process {
                Some(p) => c.with_process(p),
                None => c,
            }
        }
    };
    if args.include_total {
        for o in &mut config.objects {
            o.include_total = true;
        }
    }
    Ok(config.plan(catalog))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(parse_addr(":9182").unwrap().to_string(), "0.0.0.0:9182");
        assert_eq!(parse_addr("127.0.0.1:0").unwrap().port(), 0);
        assert_eq!(parse_addr("[::1]:9182").unwrap().to_string(), "[::1]:9182");
        let e = parse_addr("nohost").unwrap_err();
        assert!(e.to_string().contains("invalid listen address \"nohost\""));
    }
}

/// The scrape discipline against a source whose second collector is slow.
#[cfg(test)]
mod discipline {
    use super::*;
    use std::sync::atomic::Ordering;

    use axum::extract::State;
    use axum::http::HeaderMap;
    use perfcounters::snapshot::{CounterDefinition, Object, SampleClock, Snapshot, Value};
    use perfcounters::source::{CatalogCounter, ObjectInfo, Request, Source, SourceError};
    use perfcounters::CounterType;

    /// Objects `Fast` and `Slow`, one counter each (`Things/sec`, value 7); collecting `Slow` takes
    /// `delay`. Counts the collections of `Fast`.
    struct FakeSource {
        delay: Duration,
        fast: Arc<AtomicUsize>,
    }

    fn info(name: &str) -> ObjectInfo {
        ObjectInfo {
            name: name.into(),
            index: 0,
            help: String::new(),
            detail_level: 100,
            multi_instance: false,
            counters: vec![CatalogCounter {
                name: "Things/sec".into(),
                index: 0,
                help: String::new(),
                counter_type: CounterType::PERF_COUNTER_BULK_COUNT,
                scale: 0,
                detail_level: 100,
                base_type: None,
            }],
        }
    }

    impl Source for FakeSource {
        fn catalog(&mut self) -> Result<Catalog, SourceError> {
            Ok(Catalog {
                objects: vec![info("Fast"), info("Slow")],
                ..Default::default()
            })
        }
        fn instances(&mut self, _object: &str) -> Result<Vec<String>, SourceError> {
            Ok(Vec::new())
        }
        fn collect(&mut self, request: &Request) -> Result<Snapshot, SourceError> {
            let name = request.objects[0].object.clone();
            if name == "Slow" {
                std::thread::sleep(self.delay);
            } else {
                self.fast.fetch_add(1, Ordering::SeqCst);
            }
            let object = Object::new(0)
                .named(name)
                .with_counters(vec![CounterDefinition::new(
                    0,
                    CounterType::PERF_COUNTER_BULK_COUNT,
                )
                .named("Things/sec")])
                .with_values(vec![Value::U64(7)]);
            Ok(Snapshot::new("")
                .with_clock(SampleClock {
                    perf_time: 0,
                    perf_freq: 10_000_000,
                    perf_time_100ns: 132_000_000_000_000_000,
                })
                .with_objects(vec![object]))
        }
    }

    fn app(delay: Duration, fast: Arc<AtomicUsize>, max_requests: usize) -> Arc<http::App> {
        app_pushing(delay, fast, max_requests, None)
    }

    fn app_pushing(
        delay: Duration,
        fast: Arc<AtomicUsize>,
        max_requests: usize,
        pushes: Option<(Duration, Pushes)>,
    ) -> Arc<http::App> {
        let backend = Backend::live(Box::new(FakeSource { delay, fast })).unwrap();
        let config = ExportConfig {
            objects: ["Fast", "Slow"]
                .iter()
                .map(|o| perfcounters::export::ObjectConfig {
                    object: o.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let plan = config.plan(backend.catalog());
        start(
            backend,
            plan,
            Settings {
                max_requests,
                margin: Duration::from_millis(500),
                chart_history: 10,
                self_prefix: "perfcounters".into(),
                auth: None,
                headers: Vec::new(),
                otlp: None,
                pushes,
            },
        )
        .unwrap()
    }

    async fn scrape(app: &Arc<http::App>, timeout: Option<&'static str>) -> (u16, String) {
        let mut headers = HeaderMap::new();
        if let Some(t) = timeout {
            headers.insert(
                "X-Prometheus-Scrape-Timeout-Seconds",
                HeaderValue::from_static(t),
            );
        }
        let r = http::metrics(State(app.clone()), headers).await;
        let status = r.status().as_u16();
        let body = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_late_collector_is_reported_and_the_rest_served_within_the_budget() {
        let fast = Arc::new(AtomicUsize::new(0));
        let app = app(Duration::from_millis(1500), fast.clone(), 40);
        runtime().block_on(async {
            // 0.6 s announced − 0.5 s margin = 100 ms.
            let t0 = std::time::Instant::now();
            let (status, text) = scrape(&app, Some("0.6")).await;
            let took = t0.elapsed();
            assert_eq!(status, 200);
            assert!(took >= Duration::from_millis(100), "{took:?}");
            assert!(took < Duration::from_millis(1000), "{took:?}");
            assert!(
                text.contains("\nperfcounters_fast_things_total 7\n"),
                "{text}"
            );
            assert!(!text.contains("perfcounters_slow_things_total"));
            assert!(text.contains("perfcounters_collector_success{collector=\"fast\"} 1\n"));
            assert!(text.contains("perfcounters_collector_success{collector=\"slow\"} 0\n"));
            assert!(text.contains("perfcounters_collector_timeout{collector=\"slow\"} 1\n"));
            assert!(text.contains("perfcounters_collector_timeout{collector=\"fast\"} 0\n"));

            // Scrapes that arrive while that collection still runs join it instead of starting
            // their own: five at once, without a budget, all get the complete answer.
            let answers = futures_join(&app, 5).await;
            for (status, text) in &answers {
                assert_eq!(*status, 200);
                assert!(
                    text.contains("perfcounters_slow_things_total 7\n"),
                    "{text}"
                );
                assert!(text.contains("perfcounters_collector_success{collector=\"slow\"} 1\n"));
            }
            assert_eq!(
                fast.load(Ordering::SeqCst),
                1,
                "one collection for six scrapes"
            );
            // The next scrape starts a new collection.
            let (_, text) = scrape(&app, None).await;
            assert!(text.contains("perfcounters_collector_success{collector=\"slow\"} 1\n"));
            assert_eq!(fast.load(Ordering::SeqCst), 2);
        });
    }

    async fn futures_join(app: &Arc<http::App>, n: usize) -> Vec<(u16, String)> {
        let mut handles = Vec::new();
        for _ in 0..n {
            let app = app.clone();
            handles.push(tokio::spawn(async move { scrape(&app, None).await }));
        }
        let mut out = Vec::new();
        for h in handles {
            out.push(h.await.unwrap());
        }
        out
    }

    /// `--otlp`: the engine collects every interval by itself (the first time at once) and
    /// hands each collection over finished; a scrape that arrives meanwhile joins it.
    #[test]
    fn the_engine_collects_for_the_push_and_a_scrape_joins_it() {
        let fast = Arc::new(AtomicUsize::new(0));
        let (to, mut collections) = tokio::sync::mpsc::unbounded_channel();
        let t0 = std::time::Instant::now();
        // The slow collector takes 300 ms; a push every 600 ms.
        let app = app_pushing(
            Duration::from_millis(300),
            fast.clone(),
            40,
            Some((Duration::from_millis(600), to)),
        );
        runtime().block_on(async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let (status, text) = scrape(&app, None).await;
            assert_eq!(status, 200);
            assert!(
                text.contains("perfcounters_slow_things_total 7\n"),
                "{text}"
            );
            let first = collections.recv().await.unwrap();
            let progress = first.borrow().clone();
            assert!(progress.finished);
            let names: Vec<&str> = progress.done.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(names, ["fast", "slow"]);
            assert_eq!(
                fast.load(Ordering::SeqCst),
                1,
                "one collection for the push and the scrape"
            );
            // The next one an interval after the first began, not before.
            let second = collections.recv().await.unwrap();
            assert!(second.borrow().finished);
            let took = t0.elapsed();
            assert!(took >= Duration::from_millis(900), "{took:?}");
            assert_eq!(fast.load(Ordering::SeqCst), 2);
        });
    }

    /// A collection that hangs (the slow collector takes 1.5 s, a push is due every 200 ms): what
    /// it has finished is pushed after an interval and a budget (400 ms), before it ends.
    #[test]
    fn a_hanging_collection_is_pushed_with_what_it_finished() {
        let fast = Arc::new(AtomicUsize::new(0));
        let (to, collections) = tokio::sync::mpsc::unbounded_channel();
        let interval = Duration::from_millis(200);
        let app = app_pushing(
            Duration::from_millis(1500),
            fast.clone(),
            40,
            Some((interval, to)),
        );
        let runtime = runtime();
        let _entered = runtime.enter();
        let settings = crate::otlp::OtlpSettings::resolve(
            Some("http://127.0.0.1:9"),
            &crate::otlp::OtlpFlags {
                queue: 64,
                ..Default::default()
            },
            &|_| None,
        )
        .unwrap();
        let delivery =
            Arc::new(Delivery::start_task(&settings, WhenFull::DropOldest, None).unwrap());
        let pusher = Arc::new(push::Push {
            delivery: delivery.clone(),
            encoder: Mutex::new(FamiliesEncoder::new(
                &perfcounters::export::otlp::OtlpResource::default(),
                "perfcounters",
            )),
            own: Mutex::new(Vec::new()),
            interval,
            prefix: "perfcounters".into(),
            start: 1,
        });
        runtime.block_on(async {
            let task = tokio::spawn(push::run(app.clone(), pusher, collections));
            tokio::time::sleep(Duration::from_millis(800)).await;
            // Pushed by then: the fast collector's point and the delivery's four.
            assert_eq!(delivery.stats().pushed, 5);
            assert_eq!(fast.load(Ordering::SeqCst), 1, "still the first collection");
            task.abort();
        });
    }

    #[test]
    fn scrapes_beyond_the_in_flight_limit_get_503() {
        let fast = Arc::new(AtomicUsize::new(0));
        let app = app(Duration::from_millis(600), fast, 2);
        runtime().block_on(async {
            let answers = futures_join(&app, 4).await;
            let mut statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
            statuses.sort_unstable();
            assert_eq!(statuses, [200, 200, 503, 503]);
            // Once they are done, there is room again.
            assert_eq!(scrape(&app, None).await.0, 200);
        });
    }
}
