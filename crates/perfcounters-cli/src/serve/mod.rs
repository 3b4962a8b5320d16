//! `perfcounters serve`: a Prometheus exporter and a live chart in the browser.
//!
//! One thread owns the source ([`engine`]); a single-threaded tokio runtime serves HTTP ([`http`]).
//! Scrapes that arrive while a collection runs share it, each waiting at most its own time budget.

mod config;
mod engine;
mod http;
mod webconfig;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use axum::http::{HeaderName, HeaderValue};
use perfcounters::export::{compat, ExportConfig, Plan};
use perfcounters::query::Query;
use perfcounters::source::Catalog;
use perfcounters::FormatOptions;

use config::ServeConfig;
use engine::{Backend, Engine};
use webconfig::WebSettings;

/// Name sets `--compat` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// windows_exporter v0.31: windows_cpu_time_total{core,mode} and friends
    #[value(name = "windows_exporter")]
    WindowsExporter,
}

/// `perfcounters serve` arguments.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (repeatable); [::]:9182 listens on every address
    #[arg(
        long = "listen",
        visible_alias = "web.listen-address",
        value_name = "ADDR",
        default_value = "0.0.0.0:9182"
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
    /// Serve recorded V1 block files (one per collection) or a capture directory instead of live data
    #[arg(long, num_args = 1.., value_name = "FILE|DIR")]
    replay: Vec<PathBuf>,
    /// Name table for replayed block files
    #[arg(long, value_name = "FILE")]
    names: Option<PathBuf>,
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
    let file_config = match &args.config {
        Some(p) => Some(ServeConfig::load(p)?),
        None => None,
    };
    let backend = open_backend(args)?;
    let catalog = backend.catalog().clone();
    let plan = plan(args, file_config.as_ref(), &catalog)?;
    for p in &plan.problems {
        eprintln!("perfcounters serve: {p}");
    }
    if plan.collectors.is_empty() {
        bail!("nothing to export: no configured object is offered by the source");
    }
    let collectors: Vec<String> = plan.collectors.iter().map(|c| c.name.clone()).collect();
    let (events, _) = tokio::sync::broadcast::channel(64);
    let viewers = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let engine = Engine::new(
        backend,
        plan,
        args.chart_history.max(2),
        events.clone(),
        viewers.clone(),
    );
    std::thread::Builder::new()
        .name("collector".into())
        .spawn(move || engine.run(rx))
        .context("cannot start the collection thread")?;
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
    let app = Arc::new(http::App {
        tx: Mutex::new(tx),
        flight: Mutex::new(None),
        inflight: Arc::new(tokio::sync::Semaphore::new(if args.max_requests == 0 {
            tokio::sync::Semaphore::MAX_PERMITS
        } else {
            args.max_requests
        })),
        margin: Duration::from_secs_f64(args.timeout_margin),
        default_timeout: Duration::from_secs(10),
        collectors,
        self_prefix: match args.compat {
            Some(Compat::WindowsExporter) => "windows_exporter".into(),
            None => "perfcounters".into(),
        },
        auth: web.auth,
        headers,
        events,
        viewers,
        paths: Arc::from(completion_paths(&catalog)),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let router = http::router(app);
        let tls = web.tls.map(tokio_rustls::TlsAcceptor::from);
        let mut servers = Vec::new();
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
        Ok::<(), anyhow::Error>(())
    })
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

fn open_backend(args: &ServeArgs) -> Result<Backend> {
    if args.replay.is_empty() {
        if args.names.is_some() {
            bail!("--names applies to --replay");
        }
        return Backend::live(crate::collect::live_source()?);
    }
    let mut collector = crate::collect::open(&args.replay, args.names.as_deref())?;
    let query = Query::new(FormatOptions::typeperf());
    let mut snapshots = Vec::new();
    while let Some(s) = collector.collect(&query)? {
        snapshots.push(s);
    }
    Backend::replay(snapshots)
}

fn plan(args: &ServeArgs, file: Option<&ServeConfig>, catalog: &Catalog) -> Result<Plan> {
    if let Some(Compat::WindowsExporter) = args.compat {
        if file.is_some() {
            bail!("--config and --compat windows_exporter cannot be combined: the compat names are fixed");
        }
        return Ok(compat::windows_exporter(catalog, args.process.as_deref()));
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

/// Counter paths for completion in the chart page: `\Object(*)\Counter` or `\Object\Counter`.
fn completion_paths(catalog: &Catalog) -> String {
    let mut paths = Vec::new();
    for o in &catalog.objects {
        for c in &o.counters {
            paths.push(if o.multi_instance {
                format!("\\{}(*)\\{}", o.name, c.name)
            } else {
                format!("\\{}\\{}", o.name, c.name)
            });
        }
    }
    serde_json::Value::from(paths).to_string()
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
