//! The `time` column: record times as UTC instants in microseconds.

use arrow_schema::{DataType, TimeUnit};

use crate::log::model::LogTime;
use crate::snapshot::FILETIME_UNIX_EPOCH;

/// The time zone of the `time` column: its values are UTC instants.
pub const TIME_ZONE: &str = "UTC";

/// The `time` value of a record's time (a UTC instant): microseconds since 1970-01-01 00:00 UTC
/// (sub-microsecond ticks dropped), or `None` when it does not fit. [`log_time`] is its inverse.
#[inline]
pub fn utc_micros(time: LogTime) -> Option<i64> {
    Some(time.0.checked_sub(FILETIME_UNIX_EPOCH)?.div_euclid(10))
}

/// The record time of a `time` value in microseconds since the Unix epoch, or `None` when it is
/// out of range. The inverse of [`utc_micros`].
#[inline]
pub fn log_time(micros: i64) -> Option<LogTime> {
    let ticks = micros.checked_mul(10)?.checked_add(FILETIME_UNIX_EPOCH)?;
    (ticks >= 0).then_some(LogTime(ticks))
}

/// The Arrow type of the `time` column.
pub(super) fn time_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(TIME_ZONE.into()))
}
