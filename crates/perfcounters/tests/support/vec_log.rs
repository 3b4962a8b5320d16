//! A log held in memory, read back as any reader produces one (for the log tests).

use perfcounters::log::{LogError, LogHeader, LogReader, Record};

/// A header and its records, handed out in order by [`LogReader::read_record`].
pub struct VecLog {
    header: LogHeader,
    records: std::vec::IntoIter<Record>,
}

impl VecLog {
    /// The log of `header` whose records are `records`, in order.
    pub fn new(header: LogHeader, records: Vec<Record>) -> VecLog {
        VecLog {
            header,
            records: records.into_iter(),
        }
    }
}

impl LogReader for VecLog {
    fn header(&self) -> &LogHeader {
        &self.header
    }
    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        match self.records.next() {
            Some(r) => {
                *record = r;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
