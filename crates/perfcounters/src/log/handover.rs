//! Records handed from one thread to another in order, in batches: the one rule for filling a
//! batch of records and for passing batches over a bounded channel, used by the `.blg` reader's
//! decoder thread, `analyze`'s evaluating thread and relog's encoders.
//!
//! * [`RecordBatch`] holds records read into reused slots: its records keep their cell vectors
//!   from one batch to the next, so a pass allocates a few batches, not a record per record;
//! * [`channel`] joins a [`BatchSender`], which fills batches from a reading function and hands
//!   them over, to a [`BatchReceiver`], which gives the records back one by one in the same
//!   order, then how the records ended (the end, or the error after the records before it), as
//!   the reading function on one thread would. Read batches go back to the sender for reuse, and
//!   the sender makes no more than `ahead + 2` batches: memory stays a few batches, whatever the
//!   number of records;
//! * either side may go away part-way: a sender whose receiver is dropped stops at its next batch
//!   ([`BatchSender::send_filled`] says so), and a receiver whose sender stopped without an end
//!   says so too ([`BatchReceiver::read`]: `None`).

use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use crate::log::error::LogError;
use crate::log::model::Record;

/// Records read into reused slots: the first [`len`](RecordBatch::len) are the batch's, the
/// others are kept for their allocations.
#[derive(Debug, Default)]
pub(crate) struct RecordBatch {
    records: Vec<Record>,
    len: usize,
}

impl RecordBatch {
    /// Reads up to `per_batch` records with `read` (`Ok(true)`: a record was read into the
    /// slot; `Ok(false)`: no more). `Ok(true)` when the batch is full (more may follow),
    /// `Ok(false)` when the records ended in it; on an error the records read before it stay in
    /// the batch.
    pub(crate) fn fill(
        &mut self,
        per_batch: usize,
        mut read: impl FnMut(&mut Record) -> Result<bool, LogError>,
    ) -> Result<bool, LogError> {
        self.len = 0;
        while self.len < per_batch {
            if self.records.len() == self.len {
                self.records.push(Record::default());
            }
            let Some(record) = self.records.get_mut(self.len) else {
                break;
            };
            if !read(record)? {
                return Ok(false);
            }
            self.len += 1;
        }
        Ok(true)
    }

    /// The batch's records, in the order read.
    pub(crate) fn records(&self) -> &[Record] {
        self.records.get(..self.len).unwrap_or_default()
    }

    /// The number of records in the batch.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// A batch on its way, with how the records ended after it, if they did (`Ok` at their end, or
/// the reading error).
#[derive(Debug)]
struct Handed {
    batch: RecordBatch,
    end: Option<Result<(), LogError>>,
}

/// A bounded hand-over of record batches: at most `ahead` filled batches wait in the channel
/// (besides the one the sender fills and the one the receiver reads).
pub(crate) fn channel(ahead: usize) -> (BatchSender, BatchReceiver) {
    let (filled, batches) = mpsc::sync_channel(ahead);
    let (spent, reuse) = mpsc::channel();
    (
        BatchSender {
            filled,
            reuse,
            made: 0,
            most: ahead + 2,
        },
        BatchReceiver {
            batches,
            spent,
            current: None,
            next: 0,
            end: None,
            finished: false,
        },
    )
}

/// The filling side of a [`channel`].
#[derive(Debug)]
pub(crate) struct BatchSender {
    filled: SyncSender<Handed>,
    /// Read batches given back.
    reuse: Receiver<RecordBatch>,
    /// Batches made so far, and the most it makes.
    made: usize,
    most: usize,
}

impl BatchSender {
    /// Fills a batch of up to `per_batch` records with `read` ([`RecordBatch::fill`]) and hands
    /// it over, with the end or the error when `read` met one. A batch given back is reused; once
    /// `ahead + 2` batches exist, this waits for one. `true` while records may follow; `false`
    /// once the end or an error was handed over, or when the receiver is gone (nothing more is
    /// wanted: the caller stops).
    pub(crate) fn send_filled(
        &mut self,
        per_batch: usize,
        read: impl FnMut(&mut Record) -> Result<bool, LogError>,
    ) -> bool {
        let mut batch = match self.reuse.try_recv() {
            Ok(b) => b,
            Err(_) if self.made < self.most => {
                self.made += 1;
                RecordBatch::default()
            }
            Err(_) => match self.reuse.recv() {
                Ok(b) => b,
                // The receiver is gone.
                Err(_) => return false,
            },
        };
        let end = match batch.fill(per_batch, read) {
            Ok(true) => None,
            Ok(false) => Some(Ok(())),
            Err(e) => Some(Err(e)),
        };
        let last = end.is_some();
        self.filled.send(Handed { batch, end }).is_ok() && !last
    }
}

/// The reading side of a [`channel`]. Dropping it stops the sender at its next batch.
#[derive(Debug)]
pub(crate) struct BatchReceiver {
    batches: Receiver<Handed>,
    spent: Sender<RecordBatch>,
    /// The batch being read (`None` before the first).
    current: Option<RecordBatch>,
    /// The next record of `current` to give.
    next: usize,
    /// How the records ended, given after `current`'s.
    end: Option<Result<(), LogError>>,
    finished: bool,
}

impl BatchReceiver {
    /// The next record, swapped into `record` (the batch's slot gets `record`'s allocation), in
    /// the order read: `Some(Ok(true))`; then `Some(Ok(false))` at the end, or `Some(Err)` with
    /// the reading error once, `Some(Ok(false))` after that. `None` when the sender stopped
    /// without handing over an end (its thread ended early).
    pub(crate) fn read(&mut self, record: &mut Record) -> Option<Result<bool, LogError>> {
        loop {
            if let Some(batch) = &mut self.current {
                if self.next < batch.len {
                    if let Some(r) = batch.records.get_mut(self.next) {
                        std::mem::swap(record, r);
                        self.next += 1;
                        return Some(Ok(true));
                    }
                }
            }
            if let Some(end) = self.end.take() {
                self.finished = true;
                return Some(end.map(|()| false));
            }
            if self.finished {
                return Some(Ok(false));
            }
            if let Some(spent) = self.current.take() {
                // The sender may have ended: the batch is then dropped.
                let _ = self.spent.send(spent);
            }
            let Ok(handed) = self.batches.recv() else {
                self.finished = true;
                return None;
            };
            self.current = Some(handed.batch);
            self.next = 0;
            self.end = handed.end;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::log::model::{Cell, LogTime};

    /// Record `i`: its time and as many cells (so records differ in allocation too).
    fn record(i: usize) -> Record {
        Record {
            time: LogTime(i as i64),
            cells: vec![Cell::Value(i as f64); i % 5],
        }
    }

    /// A reading function of `n` records, then the end, or an error when `fail`.
    fn source(n: usize, fail: bool) -> impl FnMut(&mut Record) -> Result<bool, LogError> {
        let mut i = 0;
        move |r: &mut Record| {
            if i == n {
                return if fail {
                    Err(LogError::usage("test", format!("broken after {n}")))
                } else {
                    Ok(false)
                };
            }
            *r = record(i);
            i += 1;
            Ok(true)
        }
    }

    /// Every record the receiver gives, then how it ended (`None`: the sender stopped early).
    fn drain(rx: &mut BatchReceiver) -> (Vec<Record>, Option<Result<(), String>>) {
        let mut out = Vec::new();
        let mut r = Record::default();
        loop {
            match rx.read(&mut r) {
                Some(Ok(true)) => out.push(r.clone()),
                Some(Ok(false)) => return (out, Some(Ok(()))),
                Some(Err(e)) => return (out, Some(Err(e.to_string()))),
                None => return (out, None),
            }
        }
    }

    proptest! {
        /// Records handed over in batches of 1 to 7, with 0 to 3 batches ahead, come out in
        /// order, all of them, then the end or the error after the same records, and the
        /// sender makes no more than `ahead + 2` batches.
        #[test]
        fn records_come_in_order_then_the_end(
            n in 0usize..60,
            per_batch in 1usize..8,
            ahead in 0usize..4,
            fail in any::<bool>(),
        ) {
            let (mut tx, mut rx) = channel(ahead);
            let sender = std::thread::spawn(move || {
                let mut read = source(n, fail);
                while tx.send_filled(per_batch, &mut read) {}
                tx.made
            });
            let (records, end) = drain(&mut rx);
            let made = sender.join().unwrap();
            prop_assert!(made <= ahead + 2, "{} batches", made);
            prop_assert_eq!(records, (0..n).map(record).collect::<Vec<_>>());
            let expected = if fail { Err(format!("test: broken after {n}")) } else { Ok(()) };
            prop_assert_eq!(end, Some(expected));
            // After the end, the end again.
            prop_assert!(matches!(rx.read(&mut Record::default()), Some(Ok(false))));
        }
    }

    /// A batch keeps the records after its length for their allocations, and gives only its own.
    #[test]
    fn batch_gives_its_records_and_keeps_the_slots() {
        let mut batch = RecordBatch::default();
        assert!(batch.fill(4, source(10, false)).unwrap());
        assert_eq!(
            batch.records(),
            &[record(0), record(1), record(2), record(3)]
        );
        assert!(!batch.fill(4, source(2, false)).unwrap());
        assert_eq!(batch.len(), 2);
        assert_eq!(batch.records(), &[record(0), record(1)]);
        assert_eq!(batch.records.len(), 4);
        let e = batch.fill(4, source(1, true)).unwrap_err();
        assert_eq!(e.to_string(), "test: broken after 1");
        assert_eq!(batch.records(), &[record(0)]);
    }

    /// A receiver dropped part-way, its sender blocked on a full channel, stops the sender (the
    /// sender's thread ends); a sender dropped without an end leaves the receiver `None` after
    /// the records it handed over.
    #[test]
    fn either_side_may_go_away() {
        let (mut tx, mut rx) = channel(1);
        let sender = std::thread::spawn(move || {
            let mut read = source(usize::MAX, false);
            let mut batches = 0;
            while tx.send_filled(2, &mut read) {
                batches += 1;
            }
            batches
        });
        let mut r = Record::default();
        assert!(matches!(rx.read(&mut r), Some(Ok(true))));
        assert_eq!(r, record(0));
        drop(rx);
        // The sender ends (it was blocked or about to block) instead of reading forever.
        assert!(sender.join().unwrap() >= 1);

        let (mut tx, mut rx) = channel(2);
        assert!(tx.send_filled(3, source(10, false)));
        drop(tx);
        let (records, end) = drain(&mut rx);
        assert_eq!(records, (0..3).map(record).collect::<Vec<_>>());
        assert_eq!(end, None);
    }
}
