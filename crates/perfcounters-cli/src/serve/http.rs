//! The HTTP side: routes, scrape discipline, the chart API, and the connection loop.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Query as UrlQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use perfcounters::export::{encode, MetricFamily, MetricKind, MetricSample, TextFormat};
use tokio::net::TcpListener;
use tokio::sync::{broadcast, oneshot, watch, Semaphore};
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::StreamExt;

use super::engine::{Cmd, Flight, Progress};
use super::webconfig::BasicAuth;
use crate::assets::{UPLOT_CSS, UPLOT_JS, UPLOT_LICENSE};

const INDEX_HTML: &str = include_str!("assets/index.html");

/// Everything the handlers share.
pub struct App {
    /// Commands to the collection thread.
    pub tx: Mutex<Sender<Cmd>>,
    /// The collection in progress, shared by the scrapes that arrive while it runs (and by the
    /// push, whose collections the engine starts).
    pub flight: Flight,
    /// Scrapes allowed at once (more get 503).
    pub inflight: Arc<Semaphore>,
    /// Subtracted from the scrape timeout the client announces.
    pub margin: Duration,
    /// The time budget when the client announces none.
    pub default_timeout: Duration,
    /// The collector names, in plan order.
    pub collectors: Vec<String>,
    /// Prefix of the self-metrics (`perfcounters`, or `windows_exporter` in compat mode).
    pub self_prefix: String,
    /// Basic authentication, when configured.
    pub auth: Option<BasicAuth>,
    /// Headers added to every response.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The OTLP delivery of `--otlp`: its counts are self-metrics.
    pub otlp: Option<Arc<crate::otlp::delivery::Delivery>>,
    /// Chart samples as JSON events.
    pub events: broadcast::Sender<Arc<str>>,
    /// Open chart streams.
    pub viewers: Arc<AtomicUsize>,
    /// Counter paths offered for completion.
    pub paths: Arc<str>,
}

/// The routes.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/metrics", get(metrics))
        .route("/health", get(health))
        .route(
            "/uPlot.iife.min.js",
            get(|| asset(UPLOT_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/uPlot.min.css",
            get(|| asset(UPLOT_CSS, "text/css; charset=utf-8")),
        )
        .route(
            "/uPlot.LICENSE",
            get(|| asset(UPLOT_LICENSE, "text/plain; charset=utf-8")),
        )
        .route("/api/paths", get(api_paths))
        .route("/api/history", get(api_history))
        .route("/api/add", get(api_add))
        .route("/api/remove", get(api_remove))
        .route("/api/stream", get(api_stream))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .layer(axum::middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// Basic authentication and the configured response headers, for every route.
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if app.auth.is_some() {
        let header = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        // bcrypt is slow on purpose: check off the I/O thread.
        let ok = {
            let header = header.map(str::to_string);
            let app = app.clone();
            tokio::task::spawn_blocking(move || {
                app.auth
                    .as_ref()
                    .is_some_and(|a| a.check(header.as_deref()))
            })
            .await
            .unwrap_or(false)
        };
        if !ok {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Basic realm=\"perfcounters\"")],
                "unauthorized\n",
            )
                .into_response();
        }
    }
    let mut response = next.run(request).await;
    for (k, v) in &app.headers {
        response.headers_mut().insert(k.clone(), v.clone());
    }
    response
}

async fn asset(body: &'static str, content_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

async fn index() -> Response {
    asset(INDEX_HTML, "text/html; charset=utf-8").await
}

async fn health() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        "{\"status\":\"ok\"}\n",
    )
        .into_response()
}

/// The time budget of a scrape: the client's `X-Prometheus-Scrape-Timeout-Seconds` (a decimal
/// number of seconds, taken to the millisecond) minus the margin, at least 10 ms.
pub fn budget(headers: &HeaderMap, margin: Duration, default: Duration) -> Duration {
    let announced = headers
        .get("x-prometheus-scrape-timeout-seconds")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| Duration::from_millis((s * 1000.0).round() as u64));
    match announced {
        Some(t) => t.saturating_sub(margin).max(Duration::from_millis(10)),
        None => default,
    }
}

pub(crate) async fn metrics(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let Ok(_permit) = app.inflight.clone().try_acquire_owned() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many scrapes in flight\n",
        )
            .into_response();
    };
    let start = Instant::now();
    let progress = collect(&app, budget(&headers, app.margin, app.default_timeout)).await;
    let format = TextFormat::negotiate(headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()));
    let text = render(&app, &progress, format, start.elapsed().as_secs_f64());
    let gzip = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(accepts_gzip);
    let mut response = if gzip {
        let mut r = Response::new(Body::from(crate::gzip::gzip(text.as_bytes())));
        r.headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        r
    } else {
        Response::new(Body::from(text))
    };
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    response.headers_mut().insert(
        header::VARY,
        HeaderValue::from_static("Accept, Accept-Encoding"),
    );
    response
}

fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|item| {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .next()
            .unwrap_or(1.0);
        coding.eq_ignore_ascii_case("gzip") && q > 0.0
    })
}

/// One collection (joined, or started), waited for at most `budget`: what it has finished by
/// then. The engine going away or the budget running out ends the wait with what there is.
pub(crate) async fn collect(app: &App, budget: Duration) -> Progress {
    finished(join_flight(app), budget).await
}

/// The collection of `rx` once it has finished, or what it has finished when `budget` runs out
/// or the engine goes away (no timer is set for a collection that has finished already).
pub(crate) async fn finished(mut rx: watch::Receiver<Progress>, budget: Duration) -> Progress {
    let deadline = tokio::time::Instant::now() + budget;
    loop {
        if rx.borrow().finished {
            break;
        }
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => continue,
            Ok(Err(_)) | Err(_) => break,
        }
    }
    let progress = rx.borrow().clone();
    progress
}

/// Joins the collection in progress, or starts one.
pub(crate) fn join_flight(app: &App) -> watch::Receiver<Progress> {
    let mut flight = app.flight.lock().expect("not poisoned");
    if let Some(rx) = flight.as_ref() {
        if !rx.borrow().finished {
            return rx.clone();
        }
    }
    let (tx, rx) = watch::channel(Progress {
        started: Some(Instant::now()),
        ..Default::default()
    });
    if app
        .tx
        .lock()
        .expect("not poisoned")
        .send(Cmd::Scrape(tx))
        .is_err()
    {
        let (tx, rx) = watch::channel(Progress {
            finished: true,
            ..Default::default()
        });
        drop(tx);
        return rx;
    }
    *flight = Some(rx.clone());
    rx
}

/// The metrics of the finished collectors, then the self-metrics of every collector.
fn render(app: &App, progress: &Progress, format: TextFormat, elapsed: f64) -> String {
    let p = &app.self_prefix;
    let gauge = |name: &str, help: &str| MetricFamily {
        name: format!("{p}_{name}"),
        help: help.to_string(),
        kind: MetricKind::Gauge,
        unit: None,
        samples: Vec::new(),
    };
    let mut success = gauge(
        "collector_success",
        "1 when the collector finished without error within the scrape's time budget",
    );
    let mut timeout = gauge(
        "collector_timeout",
        "1 when the collector had not finished when the scrape's time budget ran out",
    );
    let mut duration = gauge(
        "collector_duration_seconds",
        "How long the collector took (so far, if it had not finished)",
    );
    duration.unit = Some("seconds");
    let flight_elapsed = progress
        .started
        .map(|s| s.elapsed().as_secs_f64())
        .unwrap_or(0.0);
    for name in &app.collectors {
        let labels = vec![("collector".to_string(), name.clone())];
        let done = progress.done.iter().find(|d| &d.name == name);
        let (ok, late, secs) = match done {
            Some(d) => (d.error.is_none(), false, d.seconds),
            None => (false, true, flight_elapsed),
        };
        success.samples.push(MetricSample::new(
            "",
            labels.clone(),
            if ok { 1.0 } else { 0.0 },
        ));
        timeout.samples.push(MetricSample::new(
            "",
            labels.clone(),
            if late { 1.0 } else { 0.0 },
        ));
        duration.samples.push(MetricSample::new("", labels, secs));
    }
    let mut scrape = gauge("scrape_duration_seconds", "How long this scrape took");
    scrape.unit = Some("seconds");
    scrape
        .samples
        .push(MetricSample::new("", Vec::new(), elapsed));
    let mut own = vec![success, timeout, duration, scrape];
    if let Some(d) = &app.otlp {
        own.extend(d.families(p));
    }
    let mut out = String::with_capacity(64 * 1024);
    encode(
        progress
            .done
            .iter()
            .flat_map(|d| d.families.as_slice())
            .chain(own.iter()),
        format,
        &mut out,
    );
    out
}

#[derive(serde::Deserialize)]
struct PathArg {
    path: String,
}

async fn ask<T>(app: &App, make: impl FnOnce(oneshot::Sender<T>) -> Cmd) -> Option<T> {
    let (tx, rx) = oneshot::channel();
    app.tx.lock().expect("not poisoned").send(make(tx)).ok()?;
    rx.await.ok()
}

async fn api_paths(State(app): State<Arc<App>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        app.paths.to_string(),
    )
        .into_response()
}

async fn api_history(State(app): State<Arc<App>>) -> Response {
    match ask(&app, Cmd::ChartHistory).await {
        Some(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "collector stopped\n").into_response(),
    }
}

async fn api_add(State(app): State<Arc<App>>, UrlQuery(arg): UrlQuery<PathArg>) -> Response {
    match ask(&app, |tx| Cmd::ChartAdd(arg.path, tx)).await {
        Some(Ok(())) => (StatusCode::NO_CONTENT, "").into_response(),
        Some(Err(e)) => (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "collector stopped\n").into_response(),
    }
}

async fn api_remove(State(app): State<Arc<App>>, UrlQuery(arg): UrlQuery<PathArg>) -> Response {
    match ask(&app, |tx| Cmd::ChartRemove(arg.path, tx)).await {
        Some(()) => (StatusCode::NO_CONTENT, "").into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "collector stopped\n").into_response(),
    }
}

/// Counts an open chart stream for as long as it lives.
struct Viewer(Arc<AtomicUsize>);

impl Drop for Viewer {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn api_stream(State(app): State<Arc<App>>) -> Response {
    app.viewers.fetch_add(1, Ordering::Relaxed);
    let viewer = Viewer(app.viewers.clone());
    let _ = app.tx.lock().expect("not poisoned").send(Cmd::Wake);
    let stream = BroadcastStream::new(app.events.subscribe()).filter_map(move |m| {
        let _keep = &viewer;
        match m {
            Ok(json) => Some(Ok::<Event, Infallible>(Event::default().data(&*json))),
            // A slow reader missed samples: tell the page to reload the history.
            Err(_) => Some(Ok(Event::default().data("{\"reload\":true}"))),
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// Largest request head accepted (a larger one gets 431).
pub const MAX_HEAD: usize = 64 * 1024;
/// Time a client has to send its request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections on `listener` and serves `router` on each, over TLS when `tls` is set.
pub async fn serve(listener: TcpListener, router: Router, tls: Option<tokio_rustls::TlsAcceptor>) {
    loop {
        let (stream, _peer): (tokio::net::TcpStream, SocketAddr) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // Out of descriptors and the like: wait instead of spinning.
                eprintln!("perfcounters serve: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let tls = tls.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(MAX_HEAD);
            match tls {
                Some(acceptor) => {
                    let Ok(Ok(stream)) =
                        tokio::time::timeout(HEAD_TIMEOUT, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    let _ = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
                None => {
                    let _ = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrape_budget_to_the_millisecond() {
        let mut h = HeaderMap::new();
        let margin = Duration::from_millis(500);
        let default = Duration::from_secs(10);
        assert_eq!(budget(&h, margin, default), default);
        h.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("1"),
        );
        assert_eq!(budget(&h, margin, default), Duration::from_millis(500));
        h.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("0.75"),
        );
        assert_eq!(budget(&h, margin, default), Duration::from_millis(250));
        h.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("1.2345"),
        );
        assert_eq!(budget(&h, margin, default), Duration::from_millis(735));
        // Less than the margin still leaves 10 ms, never 0.
        h.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("0.3"),
        );
        assert_eq!(budget(&h, margin, default), Duration::from_millis(10));
        h.insert(
            "X-Prometheus-Scrape-Timeout-Seconds",
            HeaderValue::from_static("soon"),
        );
        assert_eq!(budget(&h, margin, default), default);
    }

    #[test]
    fn gzip_negotiation() {
        assert!(accepts_gzip("gzip"));
        assert!(accepts_gzip("deflate, gzip;q=0.5"));
        assert!(!accepts_gzip("gzip;q=0"));
        assert!(!accepts_gzip("identity"));
    }
}
