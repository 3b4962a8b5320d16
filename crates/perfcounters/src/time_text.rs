//! Calendar times as text: every form in which the project writes a date or a time, in one place.
//!
//! A [`TimeStyle`] turns the calendar fields of a [`SystemTime`] (those of a log's time come from
//! [`LogTime::to_system_time`](crate::log::LogTime::to_system_time)) into text. Whether those fields are UTC or a local time is the
//! caller's: only [`TimeStyle::IsoUtc`] says so in the text (`Z`). Each field is written with at
//! least its width in digits (`{:02}`, `{:04}`, as `format!` pads), so a valid time always gives the
//! same number of characters.
//!
//! ```
//! use perfcounters::log::LogTime;
//! use perfcounters::time_text::TimeStyle;
//!
//! let t = LogTime::from_parts(2016, 11, 6, 13, 46, 30, 874).unwrap();
//! let s = t.to_system_time().unwrap();
//! assert_eq!(TimeStyle::Iso.format(&s), "2016-11-06T13:46:30.874");
//! assert_eq!(TimeStyle::IsoUtc.format(&s), "2016-11-06T13:46:30.874Z");
//! assert_eq!(TimeStyle::Sql.format(&s), "2016-11-06 13:46:30.874");
//! assert_eq!(TimeStyle::Pdh.format(&s), "11/06/2016 13:46:30.874");
//! assert_eq!(TimeStyle::PdhShort.format(&s), "11/6/2016 13:46:30.874");
//! assert_eq!(TimeStyle::Date.format(&s), "2016-11-06");
//! ```

use std::fmt;

use crate::snapshot::SystemTime;

/// A form of a calendar time as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeStyle {
    /// ISO 8601 with milliseconds and no zone, for a local time: `2016-11-26T13:46:30.874` (the
    /// analyze report, the sample times of a `.blg` dump).
    Iso,
    /// ISO 8601 with milliseconds in UTC: `2016-11-26T13:46:30.874Z` (the block times of the
    /// `decode` JSON).
    IsoUtc,
    /// `2016-11-26 13:46:30.874`: the `CounterDateTime` of a SQL log, and the times of the readable
    /// dumps and of the `watch` table.
    Sql,
    /// `11/26/2016 13:46:30.874` (`MM/dd/yyyy HH:mm:ss.fff`): the time column of PDH-CSV/TSV, as
    /// typeperf and relog write it.
    Pdh,
    /// `11/6/2016 13:46:30.874` (`M/d/yyyy HH:mm:ss.fff`): the times of relog's `-q` summary and
    /// of its `-b`/`-e` arguments.
    PdhShort,
    /// The date alone, `2016-11-26`: the `date=` partitions of a Parquet dataset.
    Date,
}

impl TimeStyle {
    /// Appends `t` in this style to `out` (the form without allocation, for writers of many rows).
    pub fn push(self, t: &SystemTime, out: &mut Vec<u8>) {
        let date_iso = |out: &mut Vec<u8>| {
            push_digits(out, t.year, 4);
            out.push(b'-');
            push_digits(out, t.month, 2);
            out.push(b'-');
            push_digits(out, t.day, 2);
        };
        match self {
            TimeStyle::Iso | TimeStyle::IsoUtc => {
                date_iso(out);
                out.push(b'T');
                push_clock(out, t);
                if self == TimeStyle::IsoUtc {
                    out.push(b'Z');
                }
            }
            TimeStyle::Sql => {
                date_iso(out);
                out.push(b' ');
                push_clock(out, t);
            }
            TimeStyle::Pdh | TimeStyle::PdhShort => {
                let width = if self == TimeStyle::Pdh { 2 } else { 1 };
                push_digits(out, t.month, width);
                out.push(b'/');
                push_digits(out, t.day, width);
                out.push(b'/');
                push_digits(out, t.year, 4);
                out.push(b' ');
                push_clock(out, t);
            }
            TimeStyle::Date => date_iso(out),
        }
    }

    /// `t` in this style.
    pub fn format(self, t: &SystemTime) -> String {
        let mut out = Vec::with_capacity(24);
        self.push(t, &mut out);
        // Only ASCII digits and separators are written.
        String::from_utf8(out).unwrap_or_default()
    }

    /// `t` in this style as a value to `write!` or `format!`.
    pub fn display(self, t: &SystemTime) -> impl fmt::Display + '_ {
        Styled {
            style: self,
            time: t,
        }
    }
}

/// A [`SystemTime`] with the style to display it in.
struct Styled<'a> {
    style: TimeStyle,
    time: &'a SystemTime,
}

impl fmt::Display for Styled<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.style.format(self.time))
    }
}

/// `HH:mm:ss.fff`.
fn push_clock(out: &mut Vec<u8>, t: &SystemTime) {
    push_digits(out, t.hour, 2);
    out.push(b':');
    push_digits(out, t.minute, 2);
    out.push(b':');
    push_digits(out, t.second, 2);
    out.push(b'.');
    push_digits(out, t.milliseconds, 3);
}

/// `v` in decimal, with leading zeros up to `width` digits (at most 5, the digits of a `u16`; more
/// digits where `v` needs them).
fn push_digits(out: &mut Vec<u8>, v: u16, width: usize) {
    let mut digits = [b'0'; 5];
    let mut start = digits.len();
    let mut n = v;
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let start = start.min(digits.len().saturating_sub(width));
    out.extend_from_slice(&digits[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(year: u16, month: u16, day: u16, hour: u16, ms: u16) -> SystemTime {
        SystemTime {
            year,
            month,
            day_of_week: 0,
            day,
            hour,
            minute: 5,
            second: 9,
            milliseconds: ms,
        }
    }

    /// Every style pads as `format!` does with `{:02}`/`{:03}`/`{:04}`, for any field value.
    #[test]
    fn styles_pad_like_format() {
        for t in [
            time(2016, 11, 26, 13, 874),
            time(1601, 1, 1, 0, 0),
            time(987, 2, 3, 4, 5),
            time(30827, 12, 31, 23, 999),
            time(u16::MAX, 100, 123, 100, 1000),
        ] {
            let clock = format!(
                "{:02}:{:02}:{:02}.{:03}",
                t.hour, t.minute, t.second, t.milliseconds
            );
            let date = format!("{:04}-{:02}-{:02}", t.year, t.month, t.day);
            assert_eq!(TimeStyle::Iso.format(&t), format!("{date}T{clock}"));
            assert_eq!(TimeStyle::IsoUtc.format(&t), format!("{date}T{clock}Z"));
            assert_eq!(TimeStyle::Sql.format(&t), format!("{date} {clock}"));
            assert_eq!(TimeStyle::Date.format(&t), date);
            assert_eq!(
                TimeStyle::Pdh.format(&t),
                format!("{:02}/{:02}/{:04} {clock}", t.month, t.day, t.year)
            );
            assert_eq!(
                TimeStyle::PdhShort.format(&t),
                format!("{}/{}/{:04} {clock}", t.month, t.day, t.year)
            );
            assert_eq!(
                TimeStyle::Sql.display(&t).to_string(),
                TimeStyle::Sql.format(&t)
            );
        }
    }

    #[test]
    fn push_appends() {
        let mut out = b"\"".to_vec();
        TimeStyle::Pdh.push(&time(2014, 2, 1, 8, 7), &mut out);
        assert_eq!(out, b"\"02/01/2014 08:05:09.007");
    }
}
