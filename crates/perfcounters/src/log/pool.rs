//! The one ordered worker pool of the logs' parallel stages: items mapped on N worker threads,
//! the results handed back in the order the items went in.
//!
//! [`ordered`] makes the three parts, and the caller starts each [`Worker`] on a thread of the
//! kind it needs (a scoped thread when the mapping borrows, a thread of its own when the pool
//! outlives the call that starts it):
//!
//! * a [`Feeder`] hands item i to worker i mod n ([`Feeder::send`]);
//! * each [`Worker`] maps its items one by one ([`Worker::run`]);
//! * a [`Collector`] takes result i from worker i mod n ([`Collector::next`]), so the results
//!   come back in input order whatever order the workers finish in.
//!
//! **Bounded.** Each worker's way in and way out hold one item each: a worker holds at most
//! three items (one waiting, one in hand, one done), and a feeder that runs ahead waits. A
//! thread that both feeds and collects keeps [`Collector::in_flight`] under twice the workers:
//! then a send never waits on a result that this thread has not yet taken.
//!
//! **Errors and early stops.** A mapping's errors are part of its results, handed back in
//! order like any other. When the collector is dropped (or [closed](Collector::close)), each
//! worker stops at its next result and the feeder's next send says so (`false`); when the
//! feeder is dropped, the workers end once their items are mapped and the collector's
//! [`next`](Collector::next) then gives `Ok(None)`. A worker that ends with items outstanding
//! (its mapping panicked) is [`WorkerStopped`], not a silent end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// Makes a pool of `workers` workers (at least one): the feeder, the collector and the workers
/// to start.
pub(crate) fn ordered<I: Send, O: Send>(
    workers: usize,
) -> (Feeder<I>, Collector<O>, Vec<Worker<I, O>>) {
    let n = workers.max(1);
    let sent = Arc::new(AtomicUsize::new(0));
    let mut inputs = Vec::with_capacity(n);
    let mut outputs = Vec::with_capacity(n);
    let mut ends = Vec::with_capacity(n);
    for _ in 0..n {
        let (input_tx, input) = sync_channel(1);
        let (output, output_rx) = sync_channel(1);
        inputs.push(input_tx);
        outputs.push(output_rx);
        ends.push(Worker { input, output });
    }
    let feeder = Feeder {
        inputs,
        sent: Arc::clone(&sent),
    };
    let collector = Collector {
        outputs,
        sent,
        received: 0,
    };
    (feeder, collector, ends)
}

/// Hands items to the workers in turn.
#[derive(Debug)]
pub(crate) struct Feeder<I> {
    inputs: Vec<SyncSender<I>>,
    /// Items handed over (counted before each send), shared with the collector.
    sent: Arc<AtomicUsize>,
}

impl<I> Feeder<I> {
    /// Hands `item` to the next worker, waiting while that worker is full; false when the pool
    /// has stopped (the collector is gone, or the worker ended).
    pub(crate) fn send(&mut self, item: I) -> bool {
        let turn = self.sent.load(Ordering::Acquire);
        let Some(input) = self.inputs.get(turn % self.inputs.len().max(1)) else {
            return false;
        };
        self.sent.store(turn + 1, Ordering::Release);
        input.send(item).is_ok()
    }
}

/// One worker's ends: its items in, its results out.
#[derive(Debug)]
pub(crate) struct Worker<I, O> {
    input: Receiver<I>,
    output: SyncSender<O>,
}

impl<I, O> Worker<I, O> {
    /// Maps every item handed to this worker, in order, until the feeder is gone or the
    /// collector stops taking results.
    pub(crate) fn run(self, mut map: impl FnMut(I) -> O) {
        for item in self.input {
            if self.output.send(map(item)).is_err() {
                return;
            }
        }
    }
}

/// A worker ended with items outstanding: its mapping panicked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct WorkerStopped;

/// Takes the results back in input order.
#[derive(Debug)]
pub(crate) struct Collector<O> {
    outputs: Vec<Receiver<O>>,
    sent: Arc<AtomicUsize>,
    received: usize,
}

impl<O> Collector<O> {
    /// The result of the oldest item not yet taken, waiting for it; `Ok(None)` when the feeder
    /// is gone and every result was taken.
    pub(crate) fn next(&mut self) -> Result<Option<O>, WorkerStopped> {
        let Some(output) = self.outputs.get(self.received % self.outputs.len().max(1)) else {
            return Ok(None);
        };
        match output.recv() {
            Ok(result) => {
                self.received += 1;
                Ok(Some(result))
            }
            // The worker ended: at the end of the items, or short of this one.
            Err(_) if self.in_flight() == 0 => Ok(None),
            Err(_) => Err(WorkerStopped),
        }
    }

    /// Items handed over whose results were not taken yet.
    pub(crate) fn in_flight(&self) -> usize {
        self.sent.load(Ordering::Acquire) - self.received
    }

    /// Takes no more results: each worker stops at its next one, and the feeder's next send
    /// fails.
    pub(crate) fn close(&mut self) {
        self.outputs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts `workers` threads that map with `map`; the threads are returned to be joined.
    fn start<I: Send + 'static, O: Send + 'static>(
        workers: usize,
        map: impl Fn(I) -> O + Clone + Send + 'static,
    ) -> (Feeder<I>, Collector<O>, Vec<std::thread::JoinHandle<()>>) {
        let (feeder, collector, ends) = ordered(workers);
        let threads = ends
            .into_iter()
            .map(|worker| {
                let map = map.clone();
                std::thread::spawn(move || worker.run(map))
            })
            .collect();
        (feeder, collector, threads)
    }

    #[test]
    fn results_come_back_in_input_order() {
        // Items that take longer the smaller they are, so the workers finish out of order.
        let (mut feeder, mut collector, threads) = start(3, |i: u64| {
            std::thread::sleep(std::time::Duration::from_micros((40 - i % 40) * 50));
            i * 2
        });
        let feeding = std::thread::spawn(move || {
            for i in 0..200 {
                assert!(feeder.send(i));
            }
        });
        let mut got = Vec::new();
        while let Some(r) = collector.next().unwrap() {
            got.push(r);
        }
        feeding.join().unwrap();
        assert_eq!(got, (0..200).map(|i| i * 2).collect::<Vec<u64>>());
        assert_eq!(collector.in_flight(), 0);
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn one_thread_feeds_and_collects_within_twice_the_workers() {
        let (mut feeder, mut collector, threads) = start(2, |i: u32| i + 1);
        let mut got = Vec::new();
        for i in 0..50 {
            if collector.in_flight() >= 4 {
                got.push(collector.next().unwrap().unwrap());
            }
            assert!(feeder.send(i));
        }
        drop(feeder);
        while let Some(r) = collector.next().unwrap() {
            got.push(r);
        }
        assert_eq!(got, (1..=50).collect::<Vec<u32>>());
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn a_closed_collector_stops_the_workers_and_the_feeder() {
        let (mut feeder, mut collector, threads) = start(2, |i: u32| i);
        assert!(feeder.send(0));
        assert_eq!(collector.next(), Ok(Some(0)));
        collector.close();
        // The workers stop at their next result; then the sends fail.
        let mut sent = 0;
        while feeder.send(sent) {
            sent += 1;
            assert!(sent < 100, "the feeder was never told");
        }
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn a_worker_that_panics_is_reported() {
        let (mut feeder, mut collector, threads) = start(2, |i: u32| {
            assert!(i != 3, "a mapping that fails");
            i
        });
        for i in 0..4 {
            assert!(feeder.send(i));
        }
        drop(feeder);
        let got: Vec<_> = (0..4).map(|_| collector.next()).collect();
        assert_eq!(
            got,
            [Ok(Some(0)), Ok(Some(1)), Ok(Some(2)), Err(WorkerStopped)]
        );
        let panicked = threads
            .into_iter()
            .map(|t| t.join())
            .filter(Result::is_err)
            .count();
        assert_eq!(panicked, 1);
    }
}
