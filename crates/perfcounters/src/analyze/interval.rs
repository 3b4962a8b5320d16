//! The width of the time slices: PAL's automatic interval from a log's duration and the sample
//! interval, found from the records' times.

use crate::log::model::{LogReader, LogTime, Record};
use crate::log::LogError;

/// The number of slices PAL's automatic interval divides a log into (`PAL.ps1`
/// `$AutoAnalysisIntervalNumberOfTimeSlices`).
pub const AUTO_SLICES: i64 = 30;

/// 100 ns ticks in a second.
pub(super) const TICKS_PER_SECOND: i64 = 10_000_000;
/// 100 ns ticks in an hour, the unit of trends.
pub(super) const TICKS_PER_HOUR: f64 = 36_000_000_000.0;

/// PAL's automatic interval for a log lasting `duration_ticks` (100 ns units, from the first to
/// the last record), in seconds, before the floors [`Interval::Auto`] adds (the sample interval,
/// one second). PAL (`GenerateAutoAnalysisInterval`) takes `[int]` of the duration's
/// `TotalSeconds` and `[int]` of that divided by [`AUTO_SLICES`]; PowerShell's `[int]` rounds half
/// to even.
///
/// ```
/// use perfcounters::analyze::auto_interval_seconds;
/// // 87.5 minutes: 5,250 s / 30 = 175 s.
/// assert_eq!(auto_interval_seconds(52_500_000_000), 175);
/// // 164,401.978 s is 164,402 s; / 30 = 5,480.07 → 5,480 s.
/// assert_eq!(auto_interval_seconds(1_644_019_780_000), 5_480);
/// // 165 s / 30 = 5.5 → 6 (half to even); 75 s / 30 = 2.5 → 2.
/// assert_eq!(auto_interval_seconds(1_649_980_000), 6);
/// assert_eq!(auto_interval_seconds(750_000_000), 2);
/// ```
pub fn auto_interval_seconds(duration_ticks: i64) -> i64 {
    let seconds = div_round_half_even(duration_ticks.max(0), TICKS_PER_SECOND);
    div_round_half_even(seconds, AUTO_SLICES)
}

/// `n / d` rounded half to even (`n >= 0`, `d > 0`).
fn div_round_half_even(n: i64, d: i64) -> i64 {
    let (q, r) = (n / d, n % d);
    match (2 * r).cmp(&d) {
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
        std::cmp::Ordering::Less => q,
    }
}

/// The width of the time slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Interval {
    /// PAL's automatic interval ([`auto_interval_seconds`]), never below the sample interval;
    /// found by [`analyze_logs`](super::analyze_logs) in a first pass over the records' times ([`analyze`](super::analyze()) over one
    /// stream refuses it).
    #[default]
    Auto,
    /// A number of seconds (at least 1).
    Seconds(u64),
}

/// The first record's time, the latest record's time and the shortest positive gap between two
/// consecutive records, as the slices see them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TimeSpan {
    /// The first record's time.
    pub(super) t0: Option<LogTime>,
    /// The latest record's time.
    pub(super) last: LogTime,
    prev: Option<LogTime>,
    min_gap: Option<i64>,
}

impl TimeSpan {
    /// Takes the record at `t`.
    #[inline]
    pub(super) fn push(&mut self, t: LogTime) {
        // Records out of order (merged logs are in order; a hand-made log may not be) count in
        // the slice of the latest time.
        if self.t0.is_none() {
            self.t0 = Some(t);
            self.last = t;
        } else if t > self.last {
            self.last = t;
        }
        if let Some(p) = self.prev {
            let gap = t.0 - p.0;
            if gap > 0 {
                self.min_gap = Some(self.min_gap.map_or(gap, |m| m.min(gap)));
            }
        }
        self.prev = Some(t);
    }

    /// [`Interval::Auto`]'s width in seconds: PAL's figure for the duration, raised to the sample
    /// interval (rounded up to whole seconds) and to 1 s; `None` without records.
    fn auto_seconds(&self) -> Option<i64> {
        let start = self.t0?;
        let gap_s = self
            .min_gap
            .map_or(1, |g| (g + TICKS_PER_SECOND - 1) / TICKS_PER_SECOND);
        Some(
            auto_interval_seconds(self.last.0 - start.0)
                .max(gap_s)
                .max(1),
        )
    }
}

/// Reads `reader` to its end and returns the width in seconds that [`Interval::Auto`] gives its
/// records (PAL's automatic interval, never below the sample interval nor 1 s), or `None` when it
/// has no record. Only the records' times are used: give it a reader that skips values (a
/// [`Filtered`](crate::log::relog::Filtered) whose counter filter keeps no column), as [`analyze_logs`](super::analyze_logs) does.
pub fn auto_interval(reader: &mut dyn LogReader) -> Result<Option<u64>, LogError> {
    let mut record = Record::default();
    let mut span = TimeSpan::default();
    while reader.read_record(&mut record)? {
        span.push(record.time);
    }
    Ok(span.auto_seconds().map(|s| s as u64))
}
