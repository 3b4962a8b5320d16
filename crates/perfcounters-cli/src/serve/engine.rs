//! The collection thread: owns the source, runs one collection per scrape flight (shared by the
//! scrapes that arrive while it runs) and, with `--otlp`, one every push interval, which it hands
//! to the push; and samples the charted counters every second.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Result;
use perfcounters::export::{Exporter, Families, Plan};
use perfcounters::query::Query;
use perfcounters::snapshot::{unix_millis_from_filetime, Snapshot};
use perfcounters::source::{Catalog, Request, Source};
use perfcounters::{ErrorChain, FormatOptions};
use tokio::sync::{broadcast, oneshot, watch};

/// Where snapshots come from.
pub enum Backend {
    /// The live machine: one collection per collector request.
    Live {
        /// The source.
        source: Box<dyn Source + Send>,
        /// Its catalog.
        catalog: Catalog,
    },
    /// Recorded snapshots: each scrape takes the next one (the last one stays once the end is
    /// reached); the chart shows all of them at once.
    Replay {
        /// The snapshots, in order.
        snapshots: Vec<Snapshot>,
        /// The snapshot of the current scrape.
        current: usize,
        /// Scrapes served so far.
        served: usize,
        /// The replay source's catalog.
        catalog: Catalog,
        /// A replayed binary log's zone and description: the chart shows its local time.
        log: Option<ReplayedLog>,
    },
    /// A counter log (PDH-CSV/TSV, SQL, `.blg`): values for the chart only, nothing to export.
    Log(LogData),
}

/// A binary log replayed as raw samples: its zone (the chart draws its local time) and what the
/// chart's page says of it ([`log_about`]).
pub struct ReplayedLog {
    /// The log's zone.
    pub zone: perfcounters::log::TimeZone,
    /// Its description.
    pub about: serde_json::Value,
}

/// What the chart's page says of a log of the files `files` whose records have the UTC times
/// `times`: the files, the number of records, the interval (the median gap between records, in
/// ms), the first and last local time and the zone ([`TimeZone::label`](perfcounters::log::TimeZone::label)).
pub fn log_about(
    files: &[String],
    times: &[perfcounters::log::LogTime],
    zone: Option<&perfcounters::log::TimeZone>,
) -> serde_json::Value {
    let ms: Vec<i64> = times
        .iter()
        .map(|t| unix_millis_from_filetime(t.0))
        .collect();
    serde_json::json!({
        "files": files,
        "records": times.len(),
        "interval_ms": median_gap_ms(&ms),
        "start": times.first().map(|t| crate::report::iso(zone, *t)),
        "end": times.last().map(|t| crate::report::iso(zone, *t)),
        "zone": zone.map(perfcounters::log::TimeZone::label),
    })
}

/// A counter log read into memory: its columns and, per record, the time and one value per column.
pub struct LogData {
    /// The column paths as the log writes them.
    pub columns: Vec<String>,
    /// The parsed column paths.
    pub paths: Vec<perfcounters::CounterPath>,
    /// (Unix time in ms, one value per column) per record.
    pub rows: Vec<(i64, Vec<Option<f64>>)>,
    /// Per record, the log's local time (its wall clock, as relog shows it) in ms since 1970 read
    /// as UTC: the chart's time axis.
    pub local: Vec<i64>,
    /// What the chart's page says of the log ([`LogData::about`]).
    pub about: serde_json::Value,
    /// An empty catalog: a log has no raw counters to export.
    pub catalog: Catalog,
}

/// Cells of a log kept in memory at most (a column × record product beyond this is refused).
pub const MAX_LOG_CELLS: usize = 50_000_000;

impl LogData {
    /// Reads a whole log of the library's pipeline (raw samples of SQL and `.blg` logs computed
    /// into values as relog computes them).
    pub fn read(mut filtered: perfcounters::log::Opened) -> Result<Self> {
        use perfcounters::log::{LogReader, Record};
        let header = filtered.header().clone();
        let files: Vec<String> = filtered.logs().iter().map(|l| l.source.clone()).collect();
        let mut rows = Vec::new();
        let mut local = Vec::new();
        let mut times = Vec::new();
        let mut record = Record::default();
        while filtered.read_record(&mut record)? {
            if rows
                .len()
                .saturating_add(1)
                .saturating_mul(header.counters.len().max(1))
                > MAX_LOG_CELLS
            {
                anyhow::bail!(
                    "{}: more than {MAX_LOG_CELLS} values; select counters with relog -c first",
                    header.source
                );
            }
            // A record's time is a UTC instant.
            let utc = record.time.0;
            times.push(record.time);
            local.push(unix_millis_from_filetime(header.to_local(record.time).0));
            rows.push((
                unix_millis_from_filetime(utc),
                record
                    .cells
                    .iter()
                    .map(|c| c.value().filter(|v| v.is_finite()))
                    .collect(),
            ));
        }
        let about = log_about(&files, &times, header.time_zone.as_ref());
        Ok(LogData {
            columns: header.counters.iter().map(|c| c.name.clone()).collect(),
            paths: header.counters.iter().map(|c| c.path.clone()).collect(),
            rows,
            local,
            about,
            catalog: Catalog::default(),
        })
    }
}

/// The log's sample interval: the median of the gaps between consecutive records, in ms (`None`
/// with fewer than two records). The median, so that a gap where collection paused does not count.
fn median_gap_ms(times: &[i64]) -> Option<i64> {
    let mut gaps: Vec<i64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&g| g > 0)
        .collect();
    gaps.sort_unstable();
    gaps.get(gaps.len() / 2).copied()
}

impl Backend {
    /// The live source.
    pub fn live(mut source: Box<dyn Source + Send>) -> Result<Self> {
        let catalog = source.catalog()?;
        Ok(Backend::Live { source, catalog })
    }

    /// Recorded snapshots (at least one) and the catalog of the replay they come from; `log`,
    /// the file and zone rules of a replayed binary log, whose local time the chart shows.
    pub fn replay(
        snapshots: Vec<Snapshot>,
        catalog: Catalog,
        log: Option<(String, perfcounters::format::blg::TimeZoneInformation)>,
    ) -> Result<Self> {
        use perfcounters::log::{LogTime, TimeZone};
        let (Some(first), Some(_)) = (snapshots.first(), snapshots.last()) else {
            anyhow::bail!("the replay has no samples");
        };
        let log = log.map(|(file, rules)| {
            let zone = TimeZone::from_rules(rules, LogTime(first.perf_time_100ns));
            let times: Vec<LogTime> = snapshots
                .iter()
                .map(|s| LogTime(s.perf_time_100ns))
                .collect();
            let about = log_about(&[file], &times, Some(&zone));
            ReplayedLog { zone, about }
        });
        Ok(Backend::Replay {
            snapshots,
            current: 0,
            served: 0,
            catalog,
            log,
        })
    }

    /// What the source offers.
    pub fn catalog(&self) -> &Catalog {
        match self {
            Backend::Live { catalog, .. } | Backend::Replay { catalog, .. } => catalog,
            Backend::Log(log) => &log.catalog,
        }
    }

    /// Counter paths offered for completion: `\Object(*)\Counter` from the catalog, or a log's
    /// columns.
    pub fn completion_paths(&self) -> Vec<String> {
        if let Backend::Log(log) = self {
            return log.columns.clone();
        }
        let mut paths = Vec::new();
        for o in &self.catalog().objects {
            for c in &o.counters {
                paths.push(if o.multi_instance {
                    format!("\\{}(*)\\{}", o.name, c.name)
                } else {
                    format!("\\{}\\{}", o.name, c.name)
                });
            }
        }
        paths
    }

    fn begin_scrape(&mut self) {
        if let Backend::Replay {
            snapshots,
            current,
            served,
            ..
        } = self
        {
            *current = (*served).min(snapshots.len().saturating_sub(1));
            *served += 1;
        }
    }

    fn collect(&mut self, request: &Request) -> Result<Snapshot, String> {
        match self {
            Backend::Live { source, .. } => source
                .collect(request)
                .map_err(|e| ErrorChain(&e).to_string()),
            Backend::Replay {
                snapshots, current, ..
            } => snapshots
                .get(*current)
                .cloned()
                .ok_or_else(|| "no sample".to_string()),
            Backend::Log(_) => Err("a log has no raw counters".to_string()),
        }
    }
}

/// One finished collector of a flight.
pub struct Done {
    /// The collector name.
    pub name: String,
    /// Its metrics.
    pub families: Families,
    /// How long it took.
    pub seconds: f64,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// The state of a flight: each collector's result is added as it finishes; its waiters are woken
/// when the flight has finished.
#[derive(Default, Clone)]
pub struct Progress {
    /// The finished collectors, in plan order.
    pub done: Vec<Arc<Done>>,
    /// Whether every collector has finished.
    pub finished: bool,
    /// When the flight started.
    pub started: Option<Instant>,
}

/// Requests to the collection thread.
pub enum Cmd {
    /// Collect every collector, publishing progress.
    Scrape(watch::Sender<Progress>),
    /// Add a counter path to the chart; answers the chart's series.
    ChartAdd(String, oneshot::Sender<Result<(), String>>),
    /// Remove a counter path (as added) from the chart.
    ChartRemove(String, oneshot::Sender<()>),
    /// The chart's history as JSON.
    ChartHistory(oneshot::Sender<String>),
    /// A page opened the event stream: sample the chart again if it had stopped.
    Wake,
}

/// The flight in progress (or the last one), shared by the scrapes, the push and the engine.
pub type Flight = Arc<Mutex<Option<watch::Receiver<Progress>>>>;

/// `serve --otlp`: the engine starts a collection every interval by itself and hands it, finished,
/// to the push task. The runtime's thread is then woken once per push (the collection is ready),
/// as for a scrape (the request arrived), rather than once for its own timer, then told about the
/// collection it asked the engine for; and it sends the engine no command.
pub struct PushSchedule {
    /// The push interval.
    pub interval: Duration,
    /// Where each collection goes (the push task).
    pub to: tokio::sync::mpsc::UnboundedSender<watch::Receiver<Progress>>,
    /// The flight slot of the scrapes ([`App::flight`](super::http::App::flight)): a scrape
    /// that arrives while the push's collection runs joins it, and a push that falls due while
    /// a scrape's collection is asked for joins that one.
    pub flight: Flight,
}

/// Counter paths a chart holds at most.
pub const MAX_CHART_PATHS: usize = 32;
/// Series (expanded counter instances) a chart keeps at most; wildcards that expand further are cut.
pub const MAX_SERIES: usize = 256;

/// The chart's state: the added paths, their query and the last minutes of values.
struct Chart {
    paths: Vec<String>,
    query: Query,
    /// Expanded counter paths, the columns of `rows`.
    series: Vec<String>,
    /// (Unix time in ms, one value per series).
    rows: VecDeque<(i64, Vec<Option<f64>>)>,
    keep: usize,
    /// Whether the next update expands the query anew (paths changed).
    fresh: bool,
}

impl Chart {
    fn new(keep: usize) -> Self {
        Chart {
            paths: Vec::new(),
            query: Query::new(FormatOptions::typeperf()),
            series: Vec::new(),
            rows: VecDeque::new(),
            keep,
            fresh: false,
        }
    }

    fn rebuild_query(&mut self) {
        let mut q = Query::new(FormatOptions::typeperf());
        for p in &self.paths {
            let _ = q.add(p);
        }
        self.query = q;
        self.fresh = true;
    }

    /// Feeds one snapshot; returns the new row.
    fn update(&mut self, snapshot: &Snapshot) -> (i64, Vec<Option<f64>>) {
        let values = self.query.update(snapshot);
        let series: Vec<String> = self
            .query
            .counters()
            .iter()
            .filter(|c| c.error.is_none())
            .take(MAX_SERIES)
            .map(|c| c.path.to_string())
            .collect();
        let row: Vec<Option<f64>> = self
            .query
            .counters()
            .iter()
            .zip(&values)
            .filter(|(c, _)| c.error.is_none())
            .take(MAX_SERIES)
            .map(|(_, v)| v.value().filter(|x| x.is_finite()))
            .collect();
        if self.fresh || series != self.series {
            // Keep the history of the series that remain, by name.
            let map: Vec<Option<usize>> = series
                .iter()
                .map(|s| self.series.iter().position(|o| o == s))
                .collect();
            for (_, r) in self.rows.iter_mut() {
                *r = map
                    .iter()
                    .map(|m| m.and_then(|i| r.get(i).copied().flatten()))
                    .collect();
            }
            self.series = series;
            self.fresh = false;
        }
        let t = unix_ms(snapshot);
        // One row per sample time: a sample of the same time (taken again when a path was
        // added) replaces the row.
        if self.rows.back().is_some_and(|(last, _)| *last == t) {
            self.rows.pop_back();
        }
        self.rows.push_back((t, row.clone()));
        while self.rows.len() > self.keep {
            self.rows.pop_front();
        }
        (t, row)
    }

    fn history_json(&self) -> serde_json::Value {
        let t: Vec<i64> = self.rows.iter().map(|(t, _)| *t).collect();
        let columns: Vec<Vec<Option<f64>>> = (0..self.series.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|(_, r)| r.get(i).copied().flatten())
                    .collect()
            })
            .collect();
        serde_json::json!({"paths": self.paths, "series": self.series, "t": t, "v": columns})
    }
}

/// The FILETIME (100 ns since 1601) of `ms` milliseconds since 1970: the inverse of
/// [`unix_millis_from_filetime`] for whole milliseconds.
fn filetime_of_unix_ms(ms: i64) -> i64 {
    ms.saturating_mul(10_000)
        .saturating_add(perfcounters::snapshot::FILETIME_UNIX_EPOCH)
}

fn unix_ms(snapshot: &Snapshot) -> i64 {
    unix_millis_from_filetime(snapshot.perf_time_100ns)
}

/// The collection thread's state.
pub struct Engine {
    backend: Backend,
    plan: Plan,
    exporter: Exporter,
    chart: Chart,
    events: broadcast::Sender<Arc<str>>,
    viewers: Arc<AtomicUsize>,
    /// How long the chart keeps sampling after its last viewer left.
    linger: Duration,
    /// The last error of each collector, reported on standard error when it changes.
    errors: std::collections::HashMap<String, String>,
    /// The pushes, and when the next one is due.
    push: Option<(PushSchedule, Instant)>,
}

impl Engine {
    /// An engine exporting `plan` from `backend`, keeping `keep` chart rows.
    pub fn new(
        backend: Backend,
        plan: Plan,
        keep: usize,
        events: broadcast::Sender<Arc<str>>,
        viewers: Arc<AtomicUsize>,
    ) -> Self {
        Engine {
            backend,
            plan,
            exporter: Exporter::new(),
            chart: Chart::new(keep),
            events,
            viewers,
            linger: Duration::from_secs(600),
            errors: std::collections::HashMap::new(),
            push: None,
        }
    }

    /// The engine, also collecting for `push` every interval (the first collection at once).
    pub fn with_push(mut self, push: PushSchedule) -> Self {
        self.push = Some((push, Instant::now()));
        self
    }

    /// Serves commands until every sender is gone.
    pub fn run(mut self, rx: Receiver<Cmd>) {
        let tick = Duration::from_secs(1);
        let mut next_tick = Instant::now() + tick;
        let mut last_viewer = Instant::now();
        loop {
            let sampling = self.is_live()
                && !self.chart.paths.is_empty()
                && (self.viewers.load(Ordering::Relaxed) > 0
                    || last_viewer.elapsed() < self.linger);
            if self.viewers.load(Ordering::Relaxed) > 0 {
                last_viewer = Instant::now();
            }
            let mut wait = if sampling {
                next_tick.saturating_duration_since(Instant::now())
            } else {
                Duration::from_secs(3600)
            };
            if let Some((_, due)) = &self.push {
                wait = wait.min(due.saturating_duration_since(Instant::now()));
            }
            match rx.recv_timeout(wait) {
                Ok(Cmd::Scrape(tx)) => self.scrape(&tx),
                Ok(Cmd::ChartAdd(path, reply)) => {
                    let _ = reply.send(self.chart_add(path));
                }
                Ok(Cmd::ChartRemove(path, reply)) => {
                    self.chart.paths.retain(|p| p != &path);
                    self.chart.rebuild_query();
                    if !self.is_live() {
                        self.replay_chart();
                    }
                    let _ = reply.send(());
                }
                Ok(Cmd::ChartHistory(reply)) => {
                    let _ = reply.send(self.history_json());
                }
                Ok(Cmd::Wake) => {}
                // A timeout for the push, before the chart's tick.
                Err(RecvTimeoutError::Timeout) if sampling && Instant::now() < next_tick => {}
                Err(RecvTimeoutError::Timeout) => {
                    if sampling {
                        self.chart_tick();
                        next_tick += tick;
                        let now = Instant::now();
                        if next_tick <= now {
                            next_tick = now + tick;
                        }
                    } else {
                        next_tick = Instant::now() + tick;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
            // After a command: a scrape's collection that was asked for is done, not shared.
            self.push_if_due();
        }
    }

    /// The chart's history; for a log also `log` (what the page says of it: files, records,
    /// interval, range and zone) and `lt`, each row's local time, the time axis.
    fn history_json(&self) -> String {
        let mut h = self.chart.history_json();
        match &self.backend {
            Backend::Log(log) => {
                h["log"] = log.about.clone();
                // The chart's rows of a log are the log's records, every one, once a path is added.
                if self.chart.rows.len() == log.local.len() {
                    h["lt"] = serde_json::json!(log.local);
                }
            }
            Backend::Replay { log: Some(log), .. } => {
                h["log"] = log.about.clone();
                let local: Vec<i64> = self
                    .chart
                    .rows
                    .iter()
                    .map(|(t, _)| {
                        let utc = perfcounters::log::LogTime(filetime_of_unix_ms(*t));
                        unix_millis_from_filetime(log.zone.to_local(utc).0)
                    })
                    .collect();
                h["lt"] = serde_json::json!(local);
            }
            _ => {}
        }
        h.to_string()
    }

    fn is_live(&self) -> bool {
        matches!(self.backend, Backend::Live { .. })
    }

    /// A push that is due: the collection for it (or the one a scrape asked for and that is
    /// next, which the push shares), handed to the push task; the next one due an interval
    /// later (or an interval from now when this one was late, as a timer that delays missed ticks).
    fn push_if_due(&mut self) {
        let Some((schedule, due)) = &self.push else {
            return;
        };
        if Instant::now() < *due {
            return;
        }
        let flight = schedule.flight.clone();
        let interval = schedule.interval;
        let (rx, tx) = {
            let mut slot = flight.lock().unwrap_or_else(PoisonError::into_inner);
            match slot.as_ref() {
                // A scrape's collection, asked for and not yet begun: the push joins it.
                Some(rx) if !rx.borrow().finished => (rx.clone(), None),
                _ => {
                    let (tx, rx) = watch::channel(Progress {
                        started: Some(Instant::now()),
                        ..Default::default()
                    });
                    *slot = Some(rx.clone());
                    (rx, Some(tx))
                }
            }
        };
        if let Some(tx) = tx {
            self.scrape(&tx);
        }
        let Some((schedule, due)) = &mut self.push else {
            return;
        };
        if schedule.to.send(rx).is_err() {
            // The push has stopped (serve is shutting down).
            self.push = None;
            return;
        }
        *due += interval;
        let now = Instant::now();
        if *due <= now {
            *due = now + interval;
        }
    }

    fn scrape(&mut self, tx: &watch::Sender<Progress>) {
        self.backend.begin_scrape();
        self.exporter.begin();
        for c in &self.plan.collectors {
            let t0 = Instant::now();
            let mut families = Families::new();
            let error = match self.backend.collect(&c.request) {
                Ok(s) => {
                    self.exporter.render(c, &s, &mut families);
                    None
                }
                Err(e) => Some(e),
            };
            match &error {
                Some(e) if self.errors.get(&c.name) != Some(e) => {
                    eprintln!("perfcounters serve: collector {}: {e}", c.name);
                    self.errors.insert(c.name.clone(), e.clone());
                }
                None if self.errors.remove(&c.name).is_some() => {
                    eprintln!("perfcounters serve: collector {} works again", c.name);
                }
                _ => {}
            }
            let done = Arc::new(Done {
                name: c.name.clone(),
                families,
                seconds: t0.elapsed().as_secs_f64(),
                error,
            });
            // Published without waking the waiters: a scrape or a push waits for the whole
            // collection, and one whose budget runs out first reads what is here then. Waking
            // them for each collector cost the runtime's thread a wake-up per collector (six
            // of the default set) for nothing.
            tx.send_if_modified(|p| {
                p.done.push(done);
                false
            });
        }
        tx.send_modify(|p| p.finished = true);
    }

    fn chart_add(&mut self, path: String) -> Result<(), String> {
        let parsed = perfcounters::CounterPath::parse(&path).map_err(|e| format!("{path}: {e}"))?;
        if !self.chart.paths.contains(&path) {
            if self.chart.paths.len() >= MAX_CHART_PATHS {
                return Err(format!(
                    "the chart holds {MAX_CHART_PATHS} counter paths at most; remove one first"
                ));
            }
            self.chart.paths.push(path.clone());
            self.chart.rebuild_query();
        }
        if self.is_live() {
            // A first sample at once, so that two-sample counters have a value at the next tick.
            self.chart_tick();
        } else {
            self.replay_chart();
        }
        // A path that selects nothing is refused with the reason (and close names).
        let problem = if let Backend::Log(log) = &self.backend {
            let filter = perfcounters::log::CounterFilter::new(vec![parsed]);
            (!log.paths.iter().any(|p| filter.matches(p)))
                .then(|| format!("{path}: no column of the log matches"))
        } else {
            let origin = self.chart.paths.iter().position(|p| p == &path);
            let mine: Vec<_> = self
                .chart
                .query
                .counters()
                .iter()
                .filter(|c| Some(c.origin) == origin)
                .collect();
            // An instance that does not exist (yet) is kept: it may appear, as in `watch`.
            let fatal = |c: &perfcounters::query::QueryCounter| {
                !matches!(
                    c.error,
                    None | Some(perfcounters::query::ExpandError::NoInstance { .. })
                )
            };
            match mine.iter().find(|c| fatal(c)) {
                Some(c) if mine.iter().all(|c| fatal(c)) => {
                    c.error.as_ref().map(ToString::to_string)
                }
                _ => None,
            }
        };
        if let Some(message) = problem {
            self.chart.paths.retain(|p| p != &path);
            self.chart.rebuild_query();
            if !self.is_live() {
                self.replay_chart();
            }
            return Err(message);
        }
        Ok(())
    }

    fn chart_tick(&mut self) {
        let request = self.chart.query.request(self.backend.catalog());
        let Ok(snapshot) = self.backend.collect(&request) else {
            return;
        };
        let (t, row) = self.chart.update(&snapshot);
        let event = serde_json::json!({"t": t, "series": self.chart.series, "v": row});
        let _ = self.events.send(Arc::from(event.to_string()));
    }

    /// A replay shows the whole recording: every snapshot through a fresh query, or the log's
    /// columns that the chart's paths select.
    fn replay_chart(&mut self) {
        if let Backend::Log(log) = &self.backend {
            let patterns: Vec<perfcounters::CounterPath> = self
                .chart
                .paths
                .iter()
                .filter_map(|p| perfcounters::CounterPath::parse(p).ok())
                .collect();
            let filter = perfcounters::log::CounterFilter::new(patterns);
            let keep: Vec<usize> = (0..log.paths.len())
                .filter(|&i| filter.matches(&log.paths[i]))
                .take(MAX_SERIES)
                .collect();
            self.chart.series = keep.iter().map(|&i| log.columns[i].clone()).collect();
            self.chart.rows = log
                .rows
                .iter()
                .map(|(t, v)| {
                    (
                        *t,
                        keep.iter().map(|&i| v.get(i).copied().flatten()).collect(),
                    )
                })
                .collect();
            let _ = self
                .events
                .send(Arc::from(serde_json::json!({"reload": true}).to_string()));
            return;
        }
        let Backend::Replay { snapshots, .. } = &self.backend else {
            return;
        };
        self.chart.rows.clear();
        self.chart.series.clear();
        let keep = self.chart.keep;
        self.chart.keep = usize::MAX;
        for s in snapshots {
            self.chart.update(s);
        }
        self.chart.keep = keep;
        let _ = self
            .events
            .send(Arc::from(serde_json::json!({"reload": true}).to_string()));
    }
}
