//! The columnar form of a log (feature `arrow`): Arrow record batches, Parquet files and
//! Hive-partitioned Parquet datasets.
//!
//! * The **long form** has one row per cell of a record: `time` (a UTC instant in microseconds),
//!   the parts of the counter path (`machine`, `object`, `instance`, `counter`, `parent`,
//!   `instance_index`), and `value` (null when the cell is blank or its sample has no value). Logs
//!   that keep raw samples (`.blg`, SQL) add `counter_type`, `raw_first`, `raw_second`,
//!   `multi_count` and `status`. Strings are dictionary-encoded. [`long_schema`] and [`long_batch`]
//!   build it; [`LongBatches`] streams a whole [`LogReader`](crate::log::LogReader).
//! * The **wide form** is relog's shape: `time`, then one float64 column per counter path
//!   ([`wide_schema`], [`WideBatches`]).
//! * [`parquet`]: a log as a Parquet file of the long form ([`ParquetLogWriter`],
//!   [`ParquetLogReader`]); the log's header (columns, counter information, time zone) is kept in
//!   the file's key-value metadata so that reading it back gives the same log.
//! * [`dataset`]: Hive-partitioned datasets, `DIR/machine=NAME/date=YYYY-MM-DD/part-….parquet`.
//!
//! Within a batch, rows are grouped by column (in the header's order) and, within a column, by
//! time: runs of one counter compress far better than rows in time order, and readers that want
//! time order sort (`ORDER BY time`).

mod batch;
mod cells;
pub mod dataset;
mod long;
pub mod parquet;
mod runs;
mod staging;
mod time;
mod wide;

pub use self::batch::{records_per_batch, ROWS_PER_BATCH};
pub use self::dataset::{
    DatasetReader, DatasetWriter, MachineSplit, PartitionBatch, PartitionBatches,
};
pub use self::long::{has_raw_columns, long_batch, long_schema, LongBatches, LongLayout};
pub use self::parquet::{ParquetLogReader, ParquetLogWriter};
pub use self::time::{log_time, utc_micros, TIME_ZONE};
pub use self::wide::{wide_batch, wide_batch_of_values, wide_schema, WideBatches};
