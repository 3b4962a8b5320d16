//! The times of relog's `-b` / `-e`.

use std::fmt;

use crate::log::model::LogTime;
use crate::log::pdh_csv_row::Digits;

/// Why a `-b` / `-e` time was refused: the message says which forms are accepted or, for a form
/// that could mean two things, how it would have been read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelogTimeError {
    text: String,
    reason: String,
}

impl fmt::Display for RelogTimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\": {}", self.text, self.reason)
    }
}

impl std::error::Error for RelogTimeError {}

/// The forms [`parse_relog_time`] accepts, for error messages.
const RELOG_TIME_FORMS: &str =
    "expected M/d/yyyy [hh:mm[:ss[.fff]]] [AM|PM] or yyyy-MM-dd[Thh:mm[:ss[.fff]]]";

/// Parses a time of relog's `-b` / `-e`:
///
/// * `M/d/yyyy`, `M/d/yyyy hh:mm`, `M/d/yyyy hh:mm:ss` with optional `.fff` milliseconds and an
///   optional `AM`/`PM` (as relog prints times on an English system); `00:20` is twenty minutes
///   past midnight, hours and minutes, as relog reads it;
/// * `yyyy-MM-dd`, with an optional time after a space or `T` as above (no `AM`/`PM`).
///
/// A date is midnight. Two forms are refused because they could mean two things: a time of one
/// number (`2/1/2014 14`: hours or seconds?), and a date whose first number cannot be a month
/// (`13/1/2014` is the 13th of January only when read as d/M/yyyy); the error says how to write
/// each reading.
pub fn parse_relog_time(s: &str) -> Result<LogTime, RelogTimeError> {
    let text = s.trim();
    let fail = |reason: String| RelogTimeError {
        text: text.to_string(),
        reason,
    };
    let bad = || fail(RELOG_TIME_FORMS.to_string());
    let iso = text.as_bytes().get(4) == Some(&b'-') && text.is_char_boundary(10);
    let (date, time) = if iso {
        let (d, t) = text.split_at(10);
        let t = match t.strip_prefix('T').or_else(|| t.strip_prefix(' ')) {
            Some(t) => Some(t.trim()),
            None if t.is_empty() => None,
            None => return Err(bad()),
        };
        (d, t)
    } else {
        match text.split_once(' ') {
            Some((d, t)) => (d, Some(t.trim())),
            None => (text, None),
        }
    };
    let mut p = Digits {
        s: date.as_bytes(),
        i: 0,
    };
    let (year, month, day) = if iso {
        let year = p.number(4, 4).ok_or_else(bad)?;
        p.expect(b'-').ok_or_else(bad)?;
        let month = p.number(2, 2).ok_or_else(bad)?;
        p.expect(b'-').ok_or_else(bad)?;
        (year, month, p.number(2, 2).ok_or_else(bad)?)
    } else {
        let month = p.number(1, 2).ok_or_else(bad)?;
        p.expect(b'/').ok_or_else(bad)?;
        let day = p.number(1, 2).ok_or_else(bad)?;
        p.expect(b'/').ok_or_else(bad)?;
        (p.number(4, 4).ok_or_else(bad)?, month, day)
    };
    if p.i != date.len() {
        return Err(bad());
    }
    if !iso && month > 12 && (1..=12).contains(&day) {
        return Err(fail(format!(
            "relog reads dates as M/d/yyyy, and {month} is not a month; for the {month}th day of \
             month {day} write {day}/{month}/{year}"
        )));
    }
    let (mut h, mut m, mut sec, mut ms) = (0, 0, 0, 0);
    if let Some(t) = time.filter(|t| !t.is_empty()) {
        // AM / PM, with or without a space before it.
        let upper = t.to_ascii_uppercase();
        let (t, half) = match (upper.strip_suffix("AM"), upper.strip_suffix("PM")) {
            (Some(_), _) if !iso => (t[..t.len() - 2].trim_end(), Some(false)),
            (_, Some(_)) if !iso => (t[..t.len() - 2].trim_end(), Some(true)),
            _ => (t, None),
        };
        let (hms, frac) = match t.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let parts: Vec<&str> = hms.split(':').collect();
        let num = |x: &str| -> Option<u32> {
            (!x.is_empty() && x.len() <= 2 && x.bytes().all(|b| b.is_ascii_digit()))
                .then(|| x.parse().ok())
                .flatten()
        };
        match parts.as_slice() {
            [one] => {
                let n = num(one).ok_or_else(bad)?;
                return Err(fail(format!(
                    "a time of one number is ambiguous; write {n:02}:00 for {n} o'clock or \
                     00:00:{n:02} for {n} seconds past midnight"
                )));
            }
            [hh, mi] => (h, m) = (num(hh).ok_or_else(bad)?, num(mi).ok_or_else(bad)?),
            [hh, mi, ss] => {
                (h, m, sec) = (
                    num(hh).ok_or_else(bad)?,
                    num(mi).ok_or_else(bad)?,
                    num(ss).ok_or_else(bad)?,
                )
            }
            _ => return Err(bad()),
        }
        if let Some(f) = frac {
            if parts.len() != 3
                || f.is_empty()
                || f.len() > 3
                || !f.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(bad());
            }
            ms = f.parse::<u32>().map_err(|_| bad())? * 10u32.pow(3 - f.len() as u32);
        }
        if let Some(pm) = half {
            if !(1..=12).contains(&h) {
                return Err(fail(format!("hour {h} with AM/PM: expected 1 to 12")));
            }
            h = h % 12 + if pm { 12 } else { 0 };
        }
    }
    LogTime::from_parts(year, month, day, h, m, sec, ms)
        .ok_or_else(|| fail("no such date or time of day".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relog_times() {
        let t = |y, mo, d, h, mi, s, ms| LogTime::from_parts(y, mo, d, h, mi, s, ms).unwrap();
        let ok = |s: &str| parse_relog_time(s).unwrap();
        assert_eq!(ok("2/1/2014 00:20:14"), t(2014, 2, 1, 0, 20, 14, 0));
        // Two numbers are hours and minutes, as relog reads them.
        assert_eq!(ok("02/01/2014 00:20"), t(2014, 2, 1, 0, 20, 0, 0));
        assert_eq!(ok("2/1/2014 20:14"), t(2014, 2, 1, 20, 14, 0, 0));
        assert_eq!(ok("2/1/2014"), t(2014, 2, 1, 0, 0, 0, 0));
        assert_eq!(ok(" 2/1/2014 1:02:03.5 "), t(2014, 2, 1, 1, 2, 3, 500));
        assert_eq!(ok("2/1/2014 12:20:00 AM"), t(2014, 2, 1, 0, 20, 0, 0));
        assert_eq!(ok("2/1/2014 12:20 pm"), t(2014, 2, 1, 12, 20, 0, 0));
        assert_eq!(ok("2/1/2014 1:05:00PM"), t(2014, 2, 1, 13, 5, 0, 0));
        assert_eq!(ok("2014-02-01"), t(2014, 2, 1, 0, 0, 0, 0));
        assert_eq!(ok("2014-02-01T00:20"), t(2014, 2, 1, 0, 20, 0, 0));
        assert_eq!(ok("2014-02-01 13:20:05.25"), t(2014, 2, 1, 13, 20, 5, 250));
        let err = |s: &str| parse_relog_time(s).unwrap_err().to_string();
        for bad in [
            "",
            "2/1/14 00:00:00",
            "2/1/2014 1:2:3:4",
            "2/1/2014 x",
            "2/1/2014 1:02.5",
            "2014-2-1",
            "2014-02-01X",
            "2014-02-01 1 PM",
        ] {
            assert_eq!(
                err(bad),
                format!("\"{}\": {RELOG_TIME_FORMS}", bad.trim()),
                "{bad}"
            );
        }
        assert_eq!(
            err("2/30/2014"),
            "\"2/30/2014\": no such date or time of day"
        );
        assert_eq!(
            err("2/1/2014 14"),
            "\"2/1/2014 14\": a time of one number is ambiguous; write 14:00 for 14 o'clock or \
             00:00:14 for 14 seconds past midnight"
        );
        assert_eq!(
            err("13/1/2014 00:20"),
            "\"13/1/2014 00:20\": relog reads dates as M/d/yyyy, and 13 is not a month; for the \
             13th day of month 1 write 1/13/2014"
        );
        assert_eq!(
            err("2/1/2014 13:00 PM"),
            "\"2/1/2014 13:00 PM\": hour 13 with AM/PM: expected 1 to 12"
        );
    }
}
