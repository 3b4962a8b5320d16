//! `serve --otlp`: every interval, one collection (the engine starts it on its own schedule, and
//! shares it with the scrapes that arrive meanwhile) becomes one OTLP request, queued for the
//! delivery (a task of the same runtime); on shutdown the queue is flushed within a deadline.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::watch;

use super::engine::Progress;
use super::http::{collect, finished, App};
use crate::otlp::delivery::Delivery;
use perfcounters::export::otlp::FamiliesEncoder;
use perfcounters::export::MetricFamily;

/// What the push loop needs.
pub struct Push {
    /// The queue and its thread.
    pub delivery: Arc<Delivery>,
    /// The request writer: the resource, the metrics' names, descriptions and units encoded
    /// once, its buffers kept.
    pub encoder: Mutex<FamiliesEncoder>,
    /// The delivery's own metrics, pushed with each collection: built once, their values set each
    /// time.
    pub own: Mutex<Vec<MetricFamily>>,
    /// The push interval.
    pub interval: Duration,
    /// The metric name prefix (`perfcounters`).
    pub prefix: String,
    /// The start of every Sum (Unix ns): when the push began, the same in every request.
    pub start: u64,
}

impl Push {
    /// How long a push waits for its collection: the interval, at most 30 s.
    pub fn budget(&self) -> Duration {
        self.interval.min(Duration::from_secs(30))
    }
}

/// Now, in Unix ns.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Pushes each collection the engine hands over (it starts one every interval,
/// [`PushSchedule`](super::engine::PushSchedule)) until the task is dropped. Should none come
/// for an interval and a collection's budget (a collector that hangs holds the engine in its
/// collection), what the collection in progress has finished is pushed then, as a push that
/// joined it would have it.
pub async fn run(
    app: Arc<App>,
    push: Arc<Push>,
    mut collections: UnboundedReceiver<watch::Receiver<Progress>>,
) {
    let budget = push.budget();
    let late = tokio::time::sleep(push.interval + budget);
    tokio::pin!(late);
    loop {
        tokio::select! {
            biased;
            collection = collections.recv() => {
                let Some(rx) = collection else { return };
                send(&push, &finished(rx, budget).await);
            }
            () = &mut late => push_once(&app, &push).await,
        }
        // Later than it was set for: resetting it does not wake the runtime's driver (tokio
        // does so for a timer set earlier than its next wake-up, which setting a new timer for
        // each push would do).
        late.as_mut()
            .reset(tokio::time::Instant::now() + push.interval + budget);
    }
}

/// Collects (joining the collection in progress, if one is) and queues one request.
pub async fn push_once(app: &App, push: &Push) {
    let progress = collect(app, push.budget()).await;
    send(push, &progress);
}

/// Queues the request of one collection; a drop to make room in the queue is printed.
fn send(push: &Push, progress: &Progress) {
    let request = {
        let mut own = push.own.lock().unwrap_or_else(PoisonError::into_inner);
        push.delivery.update_families(&push.prefix, &mut own);
        let families = progress
            .done
            .iter()
            .flat_map(|d| d.families.as_slice())
            .chain(own.iter());
        push.encoder
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .encode(families, push.start, now_ns())
    };
    match push.delivery.push(request.body, request.points) {
        Ok(0) => {}
        Ok(dropped) => eprintln!(
            "perfcounters serve: warning: OTLP queue full ({} is not taking requests): dropped \
             {dropped} data points, {} in all",
            push.delivery.endpoint(),
            push.delivery.stats().dropped
        ),
        Err(e) => eprintln!("perfcounters serve: warning: OTLP: {e}"),
    }
}

/// Flushes the queue by `deadline` and says what was delivered.
pub async fn flush(push: &Push, deadline: Instant) {
    let t0 = Instant::now();
    let s = push.delivery.close_async(deadline).await;
    eprintln!(
        "perfcounters serve: OTLP: {} data points delivered to {}, {} dropped, {} rejected \
         (flushed in {:.1} s)",
        s.accepted.saturating_sub(s.rejected),
        push.delivery.endpoint(),
        s.dropped,
        s.rejected,
        t0.elapsed().as_secs_f64()
    );
}
