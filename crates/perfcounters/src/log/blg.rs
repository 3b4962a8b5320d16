//! Performance Monitor binary logs (`.blg`) as a [`LogReader`]: raw samples with their counter
//! types and time bases, for relog, statistics and replay.
//!
//! The decoding is [`crate::format::blg`]'s; this adapter gives the log model what it needs:
//!
//! * the columns are complete before the first record, so the log is read twice: a first pass
//!   finds every counter instance (instances appear and vanish during a log), a second hands out the
//!   records. Memory stays flat: one buffer and the columns.
//! * columns are in the order relog prints them ([`BlgLog::display_order`]);
//! * each cell is a [`Cell::Raw`] (status and raw sample), or blank where an instance is absent;
//! * a record's time is the sample's local time turned into UTC by the log's
//!   `TIME_ZONE_INFORMATION` (daylight saving time included, see [`crate::log::zone`]); the header's
//!   time zone carries those rules, with the name and bias in effect at the first sample
//!   ([`TimeZoneInformation::zone_at`](crate::format::blg::TimeZoneInformation::zone_at)), the name
//!   resolved from `@tzres.dll` references.
//!
//! A log damaged part-way (cut off, or a malformed record) yields the records before the damage and
//! a warning ([`BlgLogReader::warnings`]) instead of failing.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::format::blg::{BlgLog, Column, ReadError};
use crate::log::error::LogError;
#[cfg(doc)]
use crate::log::error::LogErrorKind;
use crate::log::model::{
    Cell, LogCounter, LogHeader, LogKind, LogReader, LogTime, RawCell, Record, TimeZone,
};
use crate::log::zone::LocalClock;

/// A `.blg` log read as raw samples.
#[derive(Debug)]
pub struct BlgLogReader<R: Read> {
    header: LogHeader,
    log: BlgLog<R>,
    /// Column number of the decoder → position in the header.
    position: Vec<usize>,
    keep: Option<Vec<bool>>,
    /// Samples readable (all, or those before the damage the first pass met).
    samples: u64,
    read: u64,
    warnings: Vec<String>,
    /// The log's local times → UTC.
    clock: LocalClock,
}

impl BlgLogReader<BufReader<File>> {
    /// Opens a log file (read twice: once for its columns, once for its records).
    pub fn open(path: &Path) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let open = || {
            File::open(path)
                .map(|f| BufReader::with_capacity(1 << 16, f))
                .map_err(|e| LogError::io(&source, None, e))
        };
        BlgLogReader::new(&source, open()?, open()?)
    }
}

/// The log error of a `.blg` read error (its cause kept: [`LogErrorKind`]'s `From<ReadError>`).
fn log_error(source: &str, e: ReadError) -> LogError {
    LogError::new(source, None, e)
}

/// The log-model column of a decoded column: its path and counter info as decoded, the name
/// written from the path.
fn log_counter(c: &Column) -> LogCounter {
    LogCounter::new(c.path.clone(), Some(c.info))
}

impl<R: Read> BlgLogReader<R> {
    /// A reader of the log named `source`, given two readers of its bytes: `scan` is read to the end
    /// first to find the columns, `data` then gives the records.
    pub fn new(source: &str, scan: R, data: R) -> Result<Self, LogError> {
        let err = |e| log_error(source, e);
        let mut first = BlgLog::new(scan).map_err(err)?;
        first.set_columns_only(true);
        let mut warnings = Vec::new();
        let mut first_time = None;
        loop {
            match first.next_sample() {
                None => break,
                Some(Ok(s)) => {
                    first_time.get_or_insert(s.time);
                }
                Some(Err(e)) => {
                    let n = first.samples_read();
                    warnings.push(format!(
                        "{}; the log is read up to there ({n} samples)",
                        log_error(source, e)
                    ));
                    break;
                }
            }
        }
        warnings.extend(first.warnings().iter().map(|w| format!("{source}: {w}")));
        if first.reader().suppressed_warnings() > 0 {
            warnings.push(format!(
                "{source}: {} more warnings not shown",
                first.reader().suppressed_warnings()
            ));
        }
        let order = first.display_order();
        let columns = first.columns();
        let mut position = vec![0; columns.len()];
        for (pos, &c) in order.iter().enumerate() {
            position[c] = pos;
        }
        let counters = order.iter().map(|&c| log_counter(&columns[c])).collect();
        let rules = first.header().time_zone.clone();
        let first_utc = first_time.map_or(first.header().start_time, |t| rules.to_utc(t));
        let clock = LocalClock::new(rules.clone());
        let header = LogHeader {
            source: source.to_owned(),
            kind: LogKind::Binary,
            time_zone: Some(TimeZone::from_rules(rules, LogTime(first_utc))),
            counters,
        };
        let samples = first.samples_read();
        let log = BlgLog::new(data).map_err(err)?;
        Ok(BlgLogReader {
            header,
            log,
            position,
            keep: None,
            samples,
            read: 0,
            warnings,
            clock,
        })
    }

    /// What the reader stepped over or stopped at (unknown record kinds, counts that disagree, the
    /// damage that ends a broken log), one message each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The decoded log (header, counter list, embedded names).
    pub fn log(&self) -> &BlgLog<R> {
        &self.log
    }
}

impl<R: Read> LogReader for BlgLogReader<R> {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        if self.read >= self.samples {
            return Ok(false);
        }
        let source = &self.header.source;
        let sample = match self.log.next_sample() {
            None => return Ok(false),
            Some(Err(e)) => return Err(log_error(source, e)),
            Some(Ok(s)) => s,
        };
        self.read += 1;
        record.time = self.clock.to_utc(LogTime(sample.time));
        record.cells.clear();
        record.cells.resize(self.header.counters.len(), Cell::Blank);
        for v in sample.values {
            let Some(&pos) = self.position.get(v.column) else {
                continue;
            };
            if self
                .keep
                .as_ref()
                .is_some_and(|k| !k.get(pos).copied().unwrap_or(false))
            {
                continue;
            }
            if let Some(cell) = record.cells.get_mut(pos) {
                *cell = Cell::Raw(
                    RawCell {
                        status: v.status,
                        raw: v.raw,
                    },
                    None,
                );
            }
        }
        Ok(true)
    }

    fn select_columns(&mut self, keep: &[bool]) {
        self.keep = Some(keep.to_vec());
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
