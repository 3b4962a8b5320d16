//! The value of one expanded counter in one collection ([`CounterValue`]): the displayable value,
//! its status and the raw sample it was computed from, in 40 bytes.

use std::fmt;

use crate::raw::RawCounter;
use crate::status::PdhStatus;

/// One value of one expanded counter in one collection: the displayable value and its status, as
/// `PdhGetFormattedCounterValue` gives them, and the raw sample it was computed from, as
/// `PdhGetRawCounterValue` gives it.
///
/// A query keeps one per counter and rewrites them all in each collection (tens of thousands for
/// wildcard queries), so a value is 40 bytes: a missing value and a missing raw sample are NaNs of
/// the value field, which never holds a NaN otherwise (computed values are finite).
///
/// ```
/// use perfcounters::query::CounterValue;
/// use perfcounters::{PdhStatus, RawCounter};
/// let raw = RawCounter::new(250, 1_000).with_time(7);
/// let v = CounterValue::new(Some(25.0), PdhStatus::PDH_CSTATUS_NEW_DATA, Some(raw));
/// assert_eq!(v.value(), Some(25.0));
/// assert_eq!(v.status(), PdhStatus::PDH_CSTATUS_NEW_DATA);
/// assert_eq!(v.raw(), Some(raw));
/// let missing = CounterValue::new(None, PdhStatus::PDH_CSTATUS_NO_INSTANCE, None);
/// assert_eq!((missing.value(), missing.raw()), (None, None));
/// assert_eq!(std::mem::size_of::<CounterValue>(), 40);
/// ```
#[derive(Clone, Copy)]
pub struct CounterValue {
    /// The value; [`NO_VALUE`] without one, [`NO_RAW`] without a raw sample either (whose fields
    /// are then 0).
    value: f64,
    first: i64,
    second: i64,
    time: i64,
    multi_count: u32,
    status: PdhStatus,
}

/// [`CounterValue::value`]'s field for a counter with a raw sample but no value.
const NO_VALUE: f64 = f64::NAN;
/// The bits of [`CounterValue::value`]'s field for a counter without a raw sample (and so without
/// a value): a NaN with another payload than [`NO_VALUE`].
const NO_RAW: u64 = 0x7ff8_0000_0000_0001;

impl CounterValue {
    /// A value with its status and the raw sample it was computed from. Without a raw sample
    /// there is no value either, and a value that is not finite is kept as no value (the
    /// calculators of this crate give only finite values).
    ///
    /// ```
    /// use perfcounters::query::CounterValue;
    /// use perfcounters::{PdhStatus, RawCounter};
    /// let status = PdhStatus::PDH_CSTATUS_INVALID_DATA;
    /// assert_eq!(CounterValue::new(Some(1.0), status, None).value(), None);
    /// let raw = Some(RawCounter::new(1, 0));
    /// assert_eq!(CounterValue::new(Some(f64::INFINITY), status, raw).value(), None);
    /// ```
    pub fn new(value: Option<f64>, status: PdhStatus, raw: Option<RawCounter>) -> CounterValue {
        match raw {
            Some(raw) => CounterValue::sampled(value.filter(|v| v.is_finite()), status, raw),
            None => CounterValue {
                value: f64::from_bits(NO_RAW),
                first: 0,
                second: 0,
                time: 0,
                multi_count: 0,
                status,
            },
        }
    }

    /// A value (finite, or none) computed from `raw`.
    #[inline(always)]
    pub(super) fn sampled(value: Option<f64>, status: PdhStatus, raw: RawCounter) -> CounterValue {
        CounterValue {
            value: value.unwrap_or(NO_VALUE),
            first: raw.first,
            second: raw.second,
            time: raw.time,
            multi_count: raw.multi_count,
            status,
        }
    }

    /// The displayable value, when the status allows one.
    #[inline]
    pub fn value(&self) -> Option<f64> {
        (!self.value.is_nan()).then_some(self.value)
    }

    /// `PDH_CSTATUS_NEW_DATA` / `VALID_DATA` with a value, otherwise why there is none.
    #[inline]
    pub fn status(&self) -> PdhStatus {
        self.status
    }

    /// The raw sample of this collection, when the counter instance exists.
    #[inline(always)]
    pub fn raw(&self) -> Option<RawCounter> {
        (self.value.to_bits() != NO_RAW).then_some(RawCounter {
            first: self.first,
            second: self.second,
            multi_count: self.multi_count,
            time: self.time,
        })
    }
}

/// Equal when the value, the status and the raw sample are.
impl PartialEq for CounterValue {
    fn eq(&self, other: &CounterValue) -> bool {
        (self.value(), self.status, self.raw()) == (other.value(), other.status, other.raw())
    }
}

impl fmt::Debug for CounterValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CounterValue")
            .field("value", &self.value())
            .field("status", &self.status)
            .field("raw", &self.raw())
            .finish()
    }
}

/// A value with only a status.
#[inline]
pub(super) fn missing(status: PdhStatus) -> CounterValue {
    CounterValue::new(None, status, None)
}
