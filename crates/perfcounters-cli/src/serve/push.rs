//! `serve --otlp`: every interval, one collection (shared with the scrapes that arrive meanwhile)
//! becomes one OTLP request, queued for the delivery (a task of the same runtime); on shutdown the
//! queue is flushed within a deadline.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::http::{collect, App};
use crate::otlp::delivery::Delivery;
use perfcounters::export::otlp::{families_request, OtlpResource};

/// What the push loop needs.
pub struct Push {
    /// The queue and its thread.
    pub delivery: Arc<Delivery>,
    /// The resource of every request.
    pub resource: OtlpResource,
    /// The push interval.
    pub interval: Duration,
    /// The metric name prefix (`perfcounters`).
    pub prefix: String,
    /// The start of every Sum (Unix ns): when the push began, the same in every request.
    pub start: u64,
}

/// Now, in Unix ns.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Pushes one collection every interval until the task is dropped.
pub async fn run(app: Arc<App>, push: Arc<Push>) {
    let mut ticks = tokio::time::interval(push.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        push_once(&app, &push).await;
    }
}

/// Collects and queues one request; a drop to make room in the queue is printed.
pub async fn push_once(app: &App, push: &Push) {
    let progress = collect(app, push.interval.min(Duration::from_secs(30))).await;
    let own = push.delivery.families(&push.prefix);
    let families = progress
        .done
        .iter()
        .flat_map(|d| d.families.as_slice())
        .chain(&own);
    let time = now_ns();
    let request = families_request(families, &push.resource, &push.prefix, push.start, time);
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
