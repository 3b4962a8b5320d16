//! What relog's `-q` prints.

use crate::log::error::LogError;
use crate::log::model::{LogReader, LogTime, Record};

/// What relog's `-q` prints: the time range, the number of samples and the counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSummary {
    /// The first record's time, in the log's local time (as relog prints it).
    pub begin: Option<LogTime>,
    /// The last record's time, in the log's local time.
    pub end: Option<LogTime>,
    /// The number of records.
    pub samples: u64,
    /// The counter paths, as written in the log.
    pub counters: Vec<String>,
}

impl LogSummary {
    /// Reads `reader` to its end.
    pub fn of(reader: &mut dyn LogReader) -> Result<Self, LogError> {
        let counters = reader
            .header()
            .counters
            .iter()
            .map(|c| c.name.clone())
            .collect();
        // Only the time stamps are needed.
        let none = vec![false; reader.header().counters.len()];
        reader.select_columns(&none);
        let mut record = Record::default();
        let (mut begin, mut end, mut samples) = (None, None, 0u64);
        while reader.read_record(&mut record)? {
            begin.get_or_insert(record.time);
            end = Some(record.time);
            samples += 1;
        }
        let header = reader.header();
        let (begin, end) = (
            begin.map(|t| header.to_local(t)),
            end.map(|t| header.to_local(t)),
        );
        Ok(LogSummary {
            begin,
            end,
            samples,
            counters,
        })
    }
}
