//! Times in logs: [`LogTime`], 100 ns ticks since 1601 (a `FILETIME`), and its tick units.
//!
//! A leaf of the log model: the record model ([`super::model`]) and the time zones
//! ([`super::zone`]) both stand on it.

use std::fmt;

pub use crate::format::blg::timezone::TICKS_PER_MINUTE;
use crate::snapshot::SystemTime;
use crate::time_text::TimeStyle;

/// 100 ns ticks per millisecond.
pub const TICKS_PER_MS: i64 = 10_000;

/// A time in a log: 100 ns ticks since 1601-01-01 00:00, the unit of a `FILETIME`. A [`Record`](super::Record)'s
/// time is a UTC instant (readers convert the wall-clock times a log stores with the log's zone
/// rules, see [`TimeZone`](super::TimeZone)); a local time of the log's zone, where one is meant, is said so
/// ([`TimeZone::to_local`](super::TimeZone::to_local), relog's `-b`/`-e`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogTime(pub i64);

impl LogTime {
    /// The time of a calendar date and time of day, or `None` if a field is out of range (month
    /// 1–12, day within the month, hour 0–23, minute and second 0–59, milliseconds 0–999, year
    /// 1601–30827 as `SYSTEMTIME` allows).
    pub fn from_parts(
        year: u32,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
        millis: u32,
    ) -> Option<LogTime> {
        let field = |v: u32| u16::try_from(v).ok();
        let time = SystemTime {
            year: field(year).filter(|y| *y <= 30827)?,
            month: field(month)?,
            day_of_week: 0,
            day: field(day)?,
            hour: field(hour)?,
            minute: field(minute)?,
            second: field(second)?,
            milliseconds: field(millis)?,
        };
        time.to_filetime().map(LogTime)
    }

    /// The calendar fields (milliseconds truncated, as `FileTimeToSystemTime` does), or `None` before
    /// 1601 or after 30827.
    pub fn to_system_time(self) -> Option<SystemTime> {
        if self.0 < 0 {
            return None;
        }
        Some(SystemTime::from_filetime(self.0)).filter(|t| t.year <= 30827)
    }

    /// This time moved by `minutes` (saturating).
    pub fn plus_minutes(self, minutes: i64) -> LogTime {
        LogTime(
            self.0
                .saturating_add(minutes.saturating_mul(TICKS_PER_MINUTE)),
        )
    }

    /// This time with the sub-millisecond ticks dropped (the resolution of PDH-CSV and SQL logs).
    pub fn truncated_to_ms(self) -> LogTime {
        LogTime(self.0 - self.0.rem_euclid(TICKS_PER_MS))
    }
}

impl fmt::Display for LogTime {
    /// `M/d/yyyy HH:mm:ss.fff`, the way relog's `-q` summary and `-b`/`-e` write times.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_system_time() {
            Some(t) => TimeStyle::PdhShort.display(&t).fmt(f),
            None => write!(f, "(time {} out of range)", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trip() {
        let t = LogTime::from_parts(2019, 11, 20, 23, 1, 11, 527).unwrap();
        let s = t.to_system_time().unwrap();
        assert_eq!(
            (
                s.year,
                s.month,
                s.day,
                s.hour,
                s.minute,
                s.second,
                s.milliseconds
            ),
            (2019, 11, 20, 23, 1, 11, 527)
        );
        // 2019-11-20 was a Wednesday.
        assert_eq!(s.day_of_week, 3);
        assert_eq!(
            LogTime::from_parts(1601, 1, 1, 0, 0, 0, 0),
            Some(LogTime(0))
        );
        // FILETIME of 2000-01-01 00:00 UTC.
        assert_eq!(
            LogTime::from_parts(2000, 1, 1, 0, 0, 0, 0),
            Some(LogTime(125_911_584_000_000_000))
        );
        assert_eq!(LogTime::from_parts(2021, 2, 29, 0, 0, 0, 0), None);
        assert!(LogTime::from_parts(2020, 2, 29, 0, 0, 0, 0).is_some());
        assert_eq!(LogTime::from_parts(2020, 1, 1, 24, 0, 0, 0), None);
        assert_eq!(t.to_string(), "11/20/2019 23:01:11.527");
        assert_eq!(LogTime(-1).to_system_time(), None);
    }
}
