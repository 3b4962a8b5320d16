//! The format-agnostic stages between log readers and writers, as relog applies them:
//!
//! * [`Merge`]: several logs in time order, with the union of their counters (`relog a.csv b.csv`);
//! * [`Filtered`]: the counters kept (`-c` / `-cf`, wildcards as in `watch`, names translated across
//!   languages through name tables), the time range (`-b` / `-e`), every n-th record (`-t`), and the
//!   raw samples turned into values by [`calc`](crate::calc);
//! * [`copy()`] into any [`LogWriter`](crate::log::LogWriter), and [`LogSummary`] for
//!   relog's `-q`.
//!
//! Both stages are themselves [`LogReader`](crate::log::LogReader)s, so statistics and
//! writers consume them like any log.

mod copy;
mod counter_filter;
mod filter;
mod merge;
mod relog_time;
mod summary;

pub use copy::{copy, copy_with, CopyOptions};
pub use counter_filter::CounterFilter;
pub use filter::{Filtered, RelogFilter};
pub use merge::Merge;
pub use relog_time::{parse_relog_time, RelogTimeError};
pub use summary::LogSummary;
