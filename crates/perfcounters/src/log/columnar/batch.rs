//! How many records a batch holds, and reading them.

use crate::log::error::LogError;
use crate::log::model::{LogReader, Record};

/// Reads up to `limit` records of `reader` into `buf` (reusing its records); returns how many.
pub(super) fn fill(
    reader: &mut dyn LogReader,
    buf: &mut Vec<Record>,
    limit: usize,
) -> Result<usize, LogError> {
    let mut n = 0;
    while n < limit {
        if buf.len() <= n {
            buf.push(Record::default());
        }
        let Some(r) = buf.get_mut(n) else { break };
        if !reader.read_record(r)? {
            break;
        }
        n += 1;
    }
    buf.truncate(n);
    Ok(n)
}

/// The records per batch of [`LongBatches`](super::LongBatches) and [`WideBatches`](super::WideBatches) for a log of `columns` columns:
/// about a million cells, at least one record.
pub fn records_per_batch(columns: usize) -> usize {
    (ROWS_PER_BATCH / columns.max(1)).max(1)
}

/// About how many rows (cells) a long batch or a Parquet row group holds.
pub const ROWS_PER_BATCH: usize = 1 << 20;
