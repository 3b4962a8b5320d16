//! A `.blg` log read for its records' times alone: what `analyze --interval auto` needs before
//! it analyses (the first and last times, the shortest gap), at the speed of reading the file.
//!
//! [`BlgLogReader`](super::BlgLogReader) reads a log twice (its columns first, then its
//! records) and decodes every raw value. [`BlgTimesReader`] reads it once, in
//! [`BlgLog::set_times_only`] mode: each sample's time, no column, no value. Its header has the
//! log's source, kind and time zone and **no columns**; its records have the times a full read
//! gives, in the same order, and no cell.
//!
//! Damage is met where a full read meets it: each sample record is checked as a full read checks
//! it, so a log damaged part-way yields the records before the damage and the same warning
//! ([`LogReader::warnings`], complete once the records are read) as
//! [`BlgLogReader`](super::BlgLogReader) gives when it opens the log.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::blg::{end_warnings, log_error, log_header, open_file};
use crate::format::blg::BlgLog;
use crate::log::error::LogError;
use crate::log::model::{LogHeader, LogReader, LogTime, Record};
use crate::log::zone::LocalClock;

/// A `.blg` log's record times, with no column and no value (the module documentation).
#[derive(Debug)]
pub struct BlgTimesReader<R: Read> {
    header: LogHeader,
    log: BlgLog<R>,
    clock: LocalClock,
    /// The first sample's local time, read when the log was opened (its zone names the header's).
    first: Option<i64>,
    done: bool,
    warnings: Vec<String>,
}

impl BlgTimesReader<BufReader<File>> {
    /// Opens a log file for its records' times.
    pub fn open(path: &Path) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let file = open_file(path, 0).map_err(|e| LogError::io(&source, None, e))?;
        BlgTimesReader::new(&source, file)
    }
}

impl<R: Read> BlgTimesReader<R> {
    /// The times of the log named `source` whose bytes `data` reads.
    pub fn new(source: &str, data: R) -> Result<Self, LogError> {
        let mut log = BlgLog::new(data).map_err(|e| log_error(source, e))?;
        log.set_times_only(true);
        let (first, damage) = match log.next_sample() {
            None => (None, None),
            Some(Ok(s)) => (Some(s.time), None),
            Some(Err(e)) => (None, Some(e)),
        };
        let (header, clock) = log_header(source, log.header(), first, Vec::new());
        let mut reader = BlgTimesReader {
            header,
            log,
            clock,
            first,
            done: false,
            warnings: Vec::new(),
        };
        if first.is_none() {
            reader.finish(damage);
        }
        Ok(reader)
    }

    /// Ends the records, noting the damage that ended them, if any, and the reader's warnings.
    fn finish(&mut self, damage: Option<crate::format::blg::ReadError>) {
        self.done = true;
        self.warnings = end_warnings(&self.header.source, &self.log, damage);
    }
}

impl<R: Read> LogReader for BlgTimesReader<R> {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        if self.done {
            return Ok(false);
        }
        let local = match self.first.take() {
            Some(t) => t,
            None => match self.log.next_sample() {
                Some(Ok(s)) => s.time,
                None => {
                    self.finish(None);
                    return Ok(false);
                }
                // A full read stops at the damage with a warning (as the first pass of
                // `BlgLogReader` does), and so does this one.
                Some(Err(e)) => {
                    self.finish(Some(e));
                    return Ok(false);
                }
            },
        };
        record.time = self.clock.to_utc(LogTime(local));
        record.cells.clear();
        Ok(true)
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
