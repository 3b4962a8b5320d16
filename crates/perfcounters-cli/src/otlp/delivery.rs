//! Delivery that loses nothing it can keep: a bounded queue of requests, one worker that posts them
//! in order (a thread of its own for a log, a task of the caller's runtime for `serve`), retrying
//! connection errors, 429 and 5xx-busy answers with exponential backoff and jitter (or the
//! receiver's `Retry-After`) for a bounded time; what is given up or pushed out of a full queue is
//! counted.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hyper::body::Bytes;
use perfcounters::export::otlp::OtlpSink;
use perfcounters::export::{MetricFamily, MetricKind, MetricSample};
use perfcounters::log::LogError;
use tokio::sync::Notify;

use super::client::{Client, Outcome};
use super::OtlpSettings;

/// The first wait before a retry; each next one doubles, up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two tries (unless the receiver asks for longer with `Retry-After`).
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What happens to a request pushed when the queue is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhenFull {
    /// The pusher waits for room (a log: nothing is dropped while the endpoint answers).
    Wait,
    /// The oldest request is dropped and counted (live push: the newest values matter most).
    DropOldest,
}

/// What was delivered so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Data points pushed.
    pub pushed: u64,
    /// Data points of requests the receiver accepted (rejected ones included).
    pub accepted: u64,
    /// Data points the receiver rejected in a `partial_success`.
    pub rejected: u64,
    /// Data points dropped: pushed out of a full queue, given up after retries, refused, or left
    /// when the flush deadline passed.
    pub dropped: u64,
    /// Requests tried again.
    pub retries: u64,
    /// Why the last request was given up, if one was.
    pub last_error: Option<String>,
}

struct State {
    queue: VecDeque<(Vec<u8>, usize)>,
    busy: bool,
    closed: bool,
    /// A request was given up and the delivery was started with `fail_fast`
    /// ([`Delivery::start`]): pushes fail from now on.
    failed: bool,
    /// When the worker must stop retrying (a flush on shutdown).
    deadline: Option<Instant>,
    /// The data points of the request being posted (while `busy`).
    in_flight: u64,
    /// Threads waiting on [`Shared::changed`] (a pusher waiting for room, a closing).
    waiting: usize,
    stats: Stats,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled on every change of the state, for the threads that wait on it (a full queue,
    /// a closing).
    changed: Condvar,
    /// Wakes the worker: a request queued, the delivery closed or its deadline set.
    wake: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells every waiter, the worker included, that the state changed.
    fn notify(&self, state: &State) {
        self.notify_threads(state);
        self.wake.notify_one();
    }

    /// Tells the threads waiting on [`changed`](Self::changed), if any: a live push has none,
    /// and a `Condvar`'s notification is a system call even then (three per request).
    fn notify_threads(&self, state: &State) {
        if state.waiting > 0 {
            self.changed.notify_all();
        }
    }

    /// Waits on [`changed`](Self::changed), at most `timeout` when given.
    fn wait<'a>(
        &self,
        mut state: MutexGuard<'a, State>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, State> {
        state.waiting += 1;
        let mut state = match timeout {
            Some(t) => {
                self.changed
                    .wait_timeout(state, t)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
            None => self.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
        };
        state.waiting -= 1;
        state
    }
}

/// Where the worker runs.
enum Worker {
    /// A thread of its own, with its own single-threaded runtime.
    Thread(JoinHandle<()>),
    /// A task of the runtime that started the delivery.
    Task(tokio::task::JoinHandle<()>),
}

/// The queue and its worker.
pub struct Delivery {
    shared: Arc<Shared>,
    worker: Mutex<Option<Worker>>,
    capacity: usize,
    when_full: WhenFull,
    endpoint: String,
}

impl Delivery {
    /// Starts the delivery for `settings` on a thread of its own. With `fail_fast` (a log), the
    /// first request given up ends the delivery: later pushes fail.
    pub fn start(
        settings: &OtlpSettings,
        when_full: WhenFull,
        fail_fast: bool,
        ca_file: Option<&str>,
    ) -> anyhow::Result<Delivery> {
        Delivery::new(settings, when_full, fail_fast, ca_file, false)
    }

    /// Starts the delivery for `settings` as a task of the current tokio runtime (which must be
    /// entered), so that a request is posted by the thread that pushed it rather than handed
    /// over to another: `serve`, whose runtime is idle between collections. Its queue is flushed
    /// with [`close_async`](Self::close_async), on that runtime.
    pub fn start_task(
        settings: &OtlpSettings,
        when_full: WhenFull,
        ca_file: Option<&str>,
    ) -> anyhow::Result<Delivery> {
        Delivery::new(settings, when_full, false, ca_file, true)
    }

    fn new(
        settings: &OtlpSettings,
        when_full: WhenFull,
        fail_fast: bool,
        ca_file: Option<&str>,
        task: bool,
    ) -> anyhow::Result<Delivery> {
        let client = Client::new(settings, ca_file)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                busy: false,
                closed: false,
                failed: false,
                deadline: None,
                in_flight: 0,
                waiting: 0,
                stats: Stats::default(),
            }),
            changed: Condvar::new(),
            wake: Notify::new(),
        });
        let retry_for = settings.retry_for;
        let worker_shared = shared.clone();
        let worker = if task {
            Worker::Task(tokio::spawn(async move {
                work(client, &worker_shared, retry_for, fail_fast).await;
            }))
        } else {
            Worker::Thread(
                std::thread::Builder::new()
                    .name("otlp".into())
                    .spawn(move || work_on_thread(client, &worker_shared, retry_for, fail_fast))
                    .map_err(|e| anyhow::anyhow!("cannot start the OTLP delivery thread: {e}"))?,
            )
        };
        Ok(Delivery {
            shared,
            worker: Mutex::new(Some(worker)),
            capacity: settings.queue.max(1),
            when_full,
            endpoint: settings.endpoint.to_string(),
        })
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Queues one encoded request of `points` points; returns the points dropped to make room.
    ///
    /// # Errors
    /// The delivery failed (fail-fast) or was closed: the message says why.
    pub fn push(&self, body: Vec<u8>, points: usize) -> Result<u64, String> {
        let mut state = self.shared.lock();
        let mut dropped = 0;
        loop {
            if state.failed || state.closed {
                return Err(state
                    .stats
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "the delivery was stopped".into()));
            }
            if state.queue.len() < self.capacity {
                break;
            }
            match self.when_full {
                WhenFull::Wait => state = self.shared.wait(state, None),
                WhenFull::DropOldest => {
                    if let Some((_, p)) = state.queue.pop_front() {
                        state.stats.dropped += p as u64;
                        dropped += p as u64;
                    }
                }
            }
        }
        state.stats.pushed += points as u64;
        state.queue.push_back((body, points));
        self.shared.notify(&state);
        Ok(dropped)
    }

    /// What was delivered so far.
    pub fn stats(&self) -> Stats {
        self.shared.lock().stats.clone()
    }

    /// Waits until every queued request is delivered or given up, or `deadline` passes (the worker
    /// then stops retrying and what is left is dropped and counted); stops the worker thread and
    /// returns the final counts. A delivery started with [`start_task`](Self::start_task) is
    /// closed with [`close_async`](Self::close_async) on its runtime instead.
    pub fn close(&self, deadline: Option<Instant>) -> Stats {
        {
            let mut state = self.closing(deadline);
            while !state.queue.is_empty() || state.busy {
                let wait = match deadline {
                    Some(d) => match d.checked_duration_since(Instant::now()) {
                        Some(w) => w,
                        None => break,
                    },
                    None => Duration::from_secs(3600),
                };
                state = self.shared.wait(state, Some(wait));
            }
        }
        let worker = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take();
        match worker {
            Some(Worker::Thread(w)) => {
                self.drop_left();
                let _ = w.join();
            }
            Some(Worker::Task(t)) => {
                self.drop_left();
                t.abort();
            }
            None => {}
        }
        self.stats()
    }

    /// [`close`](Self::close) for a delivery started with [`start_task`](Self::start_task), awaited
    /// on the runtime its worker runs on: the worker finishes the queue (or gives it up at
    /// `deadline`), then what is left is dropped and counted.
    pub async fn close_async(&self, deadline: Instant) -> Stats {
        drop(self.closing(Some(deadline)));
        let worker = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take();
        match worker {
            Some(Worker::Task(mut t)) => {
                // A request in flight when the deadline passes is abandoned with its connection.
                if tokio::time::timeout_at(deadline.into(), &mut t)
                    .await
                    .is_err()
                {
                    t.abort();
                    let mut state = self.shared.lock();
                    if state.busy {
                        state.busy = false;
                        state.stats.dropped += state.in_flight;
                    }
                }
                self.drop_left();
            }
            Some(Worker::Thread(w)) => {
                *self.worker.lock().unwrap_or_else(|p| p.into_inner()) = Some(Worker::Thread(w));
                return self.close(Some(deadline));
            }
            None => {}
        }
        self.stats()
    }

    /// Marks the delivery closed with its flush deadline and wakes the worker.
    fn closing(&self, deadline: Option<Instant>) -> MutexGuard<'_, State> {
        let mut state = self.shared.lock();
        state.closed = true;
        state.deadline = deadline;
        self.shared.notify(&state);
        state
    }

    /// Counts what is still queued as dropped.
    fn drop_left(&self) {
        let mut state = self.shared.lock();
        let left: u64 = state.queue.drain(..).map(|(_, p)| p as u64).sum();
        state.stats.dropped += left;
        self.shared.notify(&state);
    }

    /// [`families`](Self::families) into `families`: built the first time (when it is empty),
    /// then only their values set, for a caller that asks every interval (the push).
    pub fn update_families(&self, prefix: &str, families: &mut Vec<MetricFamily>) {
        let counters = own_counters(&self.stats());
        if families.len() != counters.len() {
            *families = own_families(prefix, counters);
            return;
        }
        for (f, (_, _, value)) in families.iter_mut().zip(counters) {
            if let Some(sample) = f.samples.first_mut() {
                sample.value = value as f64;
            }
        }
    }

    /// The delivery's own metrics, as `/metrics` families named with `prefix`: data points pushed,
    /// dropped and rejected, requests retried.
    pub fn families(&self, prefix: &str) -> Vec<MetricFamily> {
        own_families(prefix, own_counters(&self.stats()))
    }
}

/// The delivery's own counters, in the order of its families: name, help and value.
fn own_counters(s: &Stats) -> [(&'static str, &'static str, u64); 4] {
    [
        ("pushed_points", "OTLP data points queued for delivery", s.pushed),
        (
            "dropped_points",
            "OTLP data points dropped: pushed out of the full queue, given up after retries, or refused",
            s.dropped,
        ),
        (
            "rejected_points",
            "OTLP data points the receiver rejected (partial success)",
            s.rejected,
        ),
        ("retries", "OTLP requests tried again", s.retries),
    ]
}

/// [`own_counters`] as families of counters named with `prefix`.
fn own_families(prefix: &str, counters: [(&str, &str, u64); 4]) -> Vec<MetricFamily> {
    counters
        .into_iter()
        .map(|(name, help, value)| MetricFamily {
            name: format!("{prefix}_otlp_{name}_total"),
            help: help.to_string(),
            kind: MetricKind::Counter,
            unit: None,
            samples: vec![MetricSample::new("", Vec::new(), value as f64)],
        })
        .collect()
}

impl Drop for Delivery {
    fn drop(&mut self) {
        drop(self.closing(Some(Instant::now())));
    }
}

/// The worker on a thread of its own: [`work`] on a single-threaded runtime.
fn work_on_thread(client: Client, shared: &Shared, retry_for: Duration, fail_fast: bool) {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(work(client, shared, retry_for, fail_fast)),
        Err(e) => {
            let mut state = shared.lock();
            state.failed = true;
            state.stats.last_error = Some(format!("cannot start the async runtime: {e}"));
            shared.notify(&state);
        }
    }
}

/// The worker: one request at a time, in order, until the delivery is closed and its queue empty.
async fn work(mut client: Client, shared: &Shared, retry_for: Duration, fail_fast: bool) {
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    loop {
        let (body, points) = loop {
            {
                let mut state = shared.lock();
                if let Some(item) = state.queue.pop_front() {
                    state.busy = true;
                    state.in_flight = item.1 as u64;
                    // Room in the queue for a pusher that waits for it.
                    shared.notify_threads(&state);
                    break item;
                }
                if state.closed {
                    return;
                }
            }
            // A wake-up given while the queue was looked at is kept for this wait.
            shared.wake.notified().await;
        };
        let body = Bytes::from(client.prepare(body));
        let result = deliver(&mut client, shared, body, retry_for, &mut seed).await;
        let mut state = shared.lock();
        state.busy = false;
        match result {
            Ok((rejected, message)) => {
                state.stats.accepted += points as u64;
                if rejected > 0 {
                    state.stats.rejected += rejected;
                    eprintln!(
                        "perfcounters: warning: {} rejected {rejected} of {points} data points: {message}",
                        client.endpoint()
                    );
                }
            }
            Err(reason) => {
                state.stats.dropped += points as u64;
                eprintln!(
                    "perfcounters: warning: {}: {reason}; {points} data points dropped",
                    client.endpoint()
                );
                state.stats.last_error = Some(reason);
                if fail_fast {
                    state.failed = true;
                    let left: u64 = state.queue.drain(..).map(|(_, p)| p as u64).sum();
                    state.stats.dropped += left;
                }
            }
        }
        shared.notify_threads(&state);
    }
}

/// Posts one request until it is accepted, refused, or its retry time (or the flush deadline) is
/// spent.
async fn deliver(
    client: &mut Client,
    shared: &Shared,
    body: Bytes,
    retry_for: Duration,
    seed: &mut u64,
) -> Result<(u64, String), String> {
    let started = Instant::now();
    let mut backoff = FIRST_BACKOFF;
    loop {
        match client.post(body.clone()).await {
            Outcome::Accepted { rejected, message } => {
                return Ok((u64::try_from(rejected).unwrap_or(0), message))
            }
            Outcome::Refused { reason } => return Err(format!("refused: {reason}")),
            Outcome::Retry { reason, after } => {
                // Jitter: 50 % to 150 % of the backoff, so that many senders do not retry at once.
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                let jitter = 0.5 + (*seed % 1000) as f64 / 1000.0;
                let wait = after.unwrap_or_else(|| backoff.mul_f64(jitter));
                backoff = (backoff * 2).min(MAX_BACKOFF);
                let give_up = started.elapsed() + wait > retry_for;
                let deadline = {
                    let mut state = shared.lock();
                    let deadline = state.deadline;
                    if give_up || deadline.is_some_and(|d| Instant::now() + wait > d) {
                        return Err(format!(
                            "{reason} (given up after {:.1} s of retries)",
                            started.elapsed().as_secs_f64()
                        ));
                    }
                    state.stats.retries += 1;
                    deadline
                };
                // Sleep, woken early by a flush deadline being set.
                let until = tokio::time::Instant::from_std(Instant::now() + wait);
                loop {
                    if shared.lock().deadline != deadline {
                        break;
                    }
                    if tokio::time::timeout_at(until, shared.wake.notified())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    }
}

/// The sink of `relog -f otlp`: each request queued (waiting for room), every one delivered
/// before the copy finishes.
pub struct RelogSink {
    delivery: Option<Delivery>,
    endpoint: String,
    stats: Stats,
}

impl RelogSink {
    /// A sink delivering through `delivery`.
    pub fn new(delivery: Delivery) -> RelogSink {
        RelogSink {
            endpoint: delivery.endpoint().to_string(),
            delivery: Some(delivery),
            stats: Stats::default(),
        }
    }

    /// The final counts once finished (so far otherwise).
    pub fn stats(&self) -> Stats {
        match &self.delivery {
            Some(d) => d.stats(),
            None => self.stats.clone(),
        }
    }

    fn failure(&self, reason: &str) -> LogError {
        let s = self.stats();
        LogError::usage(
            &self.endpoint,
            format!(
                "{reason}; {} of {} data points delivered, {} dropped",
                s.accepted.saturating_sub(s.rejected),
                s.pushed,
                s.dropped
            ),
        )
    }
}

impl OtlpSink for RelogSink {
    fn send(&mut self, body: Vec<u8>, points: usize) -> Result<(), LogError> {
        let Some(d) = &self.delivery else {
            return Err(LogError::usage(&self.endpoint, "the delivery was finished"));
        };
        match d.push(body, points) {
            Ok(_) => Ok(()),
            Err(reason) => Err(self.failure(&reason)),
        }
    }

    fn finish(&mut self) -> Result<(), LogError> {
        if let Some(d) = self.delivery.take() {
            self.stats = d.close(None);
        }
        match (&self.stats.last_error, self.stats.dropped) {
            (Some(reason), _) => Err(self.failure(&reason.clone())),
            (None, 0) => Ok(()),
            (None, _) => Err(self.failure("data points were dropped")),
        }
    }
}
