//! Time zones of binary logs: the zone names relog prints, and the local ↔ UTC conversion the
//! log's `TIME_ZONE_INFORMATION` defines.
//!
//! From Vista on, the log-file header names the zone by a resource reference into `tzres.dll`
//! (`"@tzres.dll,-212"`) instead of a literal name. [`resolve_name`] turns the references of the
//! usual zones into the English names Windows shows (`"Pacific Standard Time"`); the table has, for
//! each zone, the standard name at `-x2` and the daylight name at `-x1` of the zone's block of ten
//! resource numbers. A reference not in the table is kept as written.
//!
//! Which name and bias go into relog's header cell `(PDH-CSV 4.0) (<name>)(<bias>)` is decided by
//! [`TimeZoneInformation::zone_at`]: the daylight name and `Bias + DaylightBias` when daylight saving
//! time is in effect at the given local time by the header's rules, else the standard name and
//! `Bias + StandardBias`, the way a live log names the zone it was written in (`(Eastern Daylight
//! Time)(240)` in summer).

use std::borrow::Cow;
use std::cell::Cell;

use super::container::TimeZoneInformation;
use crate::snapshot::{days_in_month, SystemTime};

/// 100 ns ticks (the FILETIME unit) per minute.
pub const TICKS_PER_MINUTE: i64 = 600_000_000;

/// `tzres.dll` string resources of the usual zones: `(resource number, English name)`.
/// Standard names sit at numbers ending in 2, daylight names at numbers ending in 1.
const TZRES: &[(u32, &str)] = &[
    (11, "Azores Daylight Time"),
    (12, "Azores Standard Time"),
    (21, "Cape Verde Daylight Time"),
    (22, "Cape Verde Standard Time"),
    (31, "Mid-Atlantic Daylight Time"),
    (32, "Mid-Atlantic Standard Time"),
    (41, "E. South America Daylight Time"),
    (42, "E. South America Standard Time"),
    (51, "Greenland Daylight Time"),
    (52, "Greenland Standard Time"),
    (61, "SA Eastern Daylight Time"),
    (62, "SA Eastern Standard Time"),
    (71, "Newfoundland Daylight Time"),
    (72, "Newfoundland Standard Time"),
    (81, "Atlantic Daylight Time"),
    (82, "Atlantic Standard Time"),
    (91, "Pacific SA Daylight Time"),
    (92, "Pacific SA Standard Time"),
    (101, "SA Western Daylight Time"),
    (102, "SA Western Standard Time"),
    (104, "Central Brazilian Daylight Time"),
    (105, "Central Brazilian Standard Time"),
    (111, "Eastern Daylight Time"),
    (112, "Eastern Standard Time"),
    (121, "SA Pacific Daylight Time"),
    (122, "SA Pacific Standard Time"),
    (131, "US Eastern Daylight Time"),
    (132, "US Eastern Standard Time"),
    (141, "Canada Central Daylight Time"),
    (142, "Canada Central Standard Time"),
    (151, "Central America Daylight Time"),
    (152, "Central America Standard Time"),
    (161, "Central Daylight Time"),
    (162, "Central Standard Time"),
    (171, "Central Daylight Time (Mexico)"),
    (172, "Central Standard Time (Mexico)"),
    (181, "Mountain Daylight Time (Mexico)"),
    (182, "Mountain Standard Time (Mexico)"),
    (191, "Mountain Daylight Time"),
    (192, "Mountain Standard Time"),
    (201, "US Mountain Daylight Time"),
    (202, "US Mountain Standard Time"),
    (211, "Pacific Daylight Time"),
    (212, "Pacific Standard Time"),
    (214, "Pacific Daylight Time (Mexico)"),
    (215, "Pacific Standard Time (Mexico)"),
    (221, "Alaskan Daylight Time"),
    (222, "Alaskan Standard Time"),
    (231, "Hawaiian Daylight Time"),
    (232, "Hawaiian Standard Time"),
    (241, "Samoa Daylight Time"),
    (242, "Samoa Standard Time"),
    (251, "Dateline Daylight Time"),
    (252, "Dateline Standard Time"),
    (261, "GMT Daylight Time"),
    (262, "GMT Standard Time"),
    (271, "Greenwich Daylight Time"),
    (272, "Greenwich Standard Time"),
    (281, "Central Europe Daylight Time"),
    (282, "Central Europe Standard Time"),
    (291, "Central European Daylight Time"),
    (292, "Central European Standard Time"),
    (301, "Romance Daylight Time"),
    (302, "Romance Standard Time"),
    (311, "W. Central Africa Daylight Time"),
    (312, "W. Central Africa Standard Time"),
    (321, "W. Europe Daylight Time"),
    (322, "W. Europe Standard Time"),
    (331, "E. Europe Daylight Time"),
    (332, "E. Europe Standard Time"),
    (341, "Egypt Daylight Time"),
    (342, "Egypt Standard Time"),
    (351, "FLE Daylight Time"),
    (352, "FLE Standard Time"),
    (361, "GTB Daylight Time"),
    (362, "GTB Standard Time"),
    (371, "Jerusalem Daylight Time"),
    (372, "Jerusalem Standard Time"),
    (381, "South Africa Daylight Time"),
    (382, "South Africa Standard Time"),
    (391, "Arab Daylight Time"),
    (392, "Arab Standard Time"),
    (401, "Arabic Daylight Time"),
    (402, "Arabic Standard Time"),
    (411, "E. Africa Daylight Time"),
    (412, "E. Africa Standard Time"),
    (421, "Russian Daylight Time"),
    (422, "Russian Standard Time"),
    (431, "Iran Daylight Time"),
    (432, "Iran Standard Time"),
    (441, "Arabian Daylight Time"),
    (442, "Arabian Standard Time"),
    (461, "Afghanistan Daylight Time"),
    (462, "Afghanistan Standard Time"),
    (471, "Ekaterinburg Daylight Time"),
    (472, "Ekaterinburg Standard Time"),
    (481, "West Asia Daylight Time"),
    (482, "West Asia Standard Time"),
    (491, "India Daylight Time"),
    (492, "India Standard Time"),
    (501, "Nepal Daylight Time"),
    (502, "Nepal Standard Time"),
    (511, "Central Asia Daylight Time"),
    (512, "Central Asia Standard Time"),
    (561, "SE Asia Daylight Time"),
    (562, "SE Asia Standard Time"),
    (571, "China Daylight Time"),
    (572, "China Standard Time"),
    (591, "Malay Peninsula Daylight Time"),
    (592, "Malay Peninsula Standard Time"),
    (601, "Taipei Daylight Time"),
    (602, "Taipei Standard Time"),
    (611, "W. Australia Daylight Time"),
    (612, "W. Australia Standard Time"),
    (621, "Korea Daylight Time"),
    (622, "Korea Standard Time"),
    (631, "Tokyo Daylight Time"),
    (632, "Tokyo Standard Time"),
    (651, "AUS Central Daylight Time"),
    (652, "AUS Central Standard Time"),
    (661, "Cen. Australia Daylight Time"),
    (662, "Cen. Australia Standard Time"),
    (671, "AUS Eastern Daylight Time"),
    (672, "AUS Eastern Standard Time"),
    (681, "E. Australia Daylight Time"),
    (682, "E. Australia Standard Time"),
    (691, "Tasmania Daylight Time"),
    (692, "Tasmania Standard Time"),
    (711, "West Pacific Daylight Time"),
    (712, "West Pacific Standard Time"),
    (741, "New Zealand Daylight Time"),
    (742, "New Zealand Standard Time"),
    (841, "Argentina Daylight Time"),
    (842, "Argentina Standard Time"),
    (871, "Pakistan Daylight Time"),
    (872, "Pakistan Standard Time"),
    (891, "Morocco Daylight Time"),
    (892, "Morocco Standard Time"),
    (931, "Coordinated Universal Time"),
    (932, "Coordinated Universal Time"),
];

/// The English name of `tzres.dll` string resource `number` (the `NNN` of `@tzres.dll,-NNN`), when
/// it is one of the usual zones.
pub fn tzres_name(number: u32) -> Option<&'static str> {
    TZRES
        .binary_search_by_key(&number, |&(n, _)| n)
        .ok()
        .and_then(|i| TZRES.get(i))
        .map(|&(_, name)| name)
}

/// The zone name as Windows shows it: a `@tzres.dll,-NNN` reference of a known zone becomes its
/// English name; literal names, and references not in the table, are returned as written.
///
/// ```
/// use perfcounters::format::blg::timezone::resolve_name;
/// assert_eq!(resolve_name("@tzres.dll,-212"), "Pacific Standard Time");
/// assert_eq!(resolve_name("SA Eastern Standard Time"), "SA Eastern Standard Time");
/// assert_eq!(resolve_name("@tzres.dll,-99999"), "@tzres.dll,-99999");
/// ```
pub fn resolve_name(name: &str) -> Cow<'_, str> {
    let number = name
        .trim()
        .strip_prefix('@')
        .and_then(|r| r.rsplit_once(','))
        .filter(|(dll, _)| dll.trim().eq_ignore_ascii_case("tzres.dll"))
        .and_then(|(_, n)| n.trim().strip_prefix('-'))
        .and_then(|n| n.parse::<u32>().ok());
    match number.and_then(tzres_name) {
        Some(resolved) => Cow::Borrowed(resolved),
        None => Cow::Borrowed(name),
    }
}

/// The local time of a `TIME_ZONE_INFORMATION` transition rule in `year`, as a FILETIME; `None`
/// when the rule is empty (month 0) or malformed.
///
/// With `wYear` = 0 the rule recurs: the `wDay`-th (1–5, 5 = last) `wDayOfWeek` of `wMonth` at
/// `wHour:wMinute`. With a year, it is that date.
fn transition(rule: &SystemTime, year: u16) -> Option<i64> {
    if rule.month == 0 {
        return None;
    }
    let day = if rule.year != 0 {
        if rule.year != year {
            return None;
        }
        rule.day
    } else {
        let first = SystemTime {
            year,
            month: rule.month,
            day: 1,
            ..Default::default()
        };
        let weekday_of_first = SystemTime::from_filetime(first.to_filetime()?).day_of_week;
        let first_match = 1 + (rule.day_of_week + 7 - weekday_of_first % 7) % 7;
        let mut day = first_match + 7 * (rule.day.clamp(1, 5) - 1);
        while day > days_in_month(year, rule.month) {
            day -= 7;
        }
        day
    };
    SystemTime {
        year,
        month: rule.month,
        day,
        hour: rule.hour,
        minute: rule.minute,
        second: rule.second,
        milliseconds: rule.milliseconds,
        day_of_week: 0,
    }
    .to_filetime()
}

/// One year's transitions under one pair of rules ([`TimeZoneInformation::transitions_around`]).
#[derive(Clone, Copy)]
struct YearTransitions {
    /// The daylight and the standard rule.
    rules: (SystemTime, SystemTime),
    /// The year's first local FILETIME, and the next year's.
    begin: i64,
    end: i64,
    /// The year's transitions, as [`transition`] gives them.
    daylight: Option<i64>,
    standard: Option<i64>,
}

impl TimeZoneInformation {
    /// A zone with the United States' daylight-saving rules since 2007 (daylight time from 2:00 on
    /// the second Sunday of March to 2:00 on the first Sunday of November, one hour ahead), `bias`
    /// minutes behind UTC, and the given names.
    pub(crate) fn us_since_2007(bias: i32, standard_name: &str, daylight_name: &str) -> Self {
        TimeZoneInformation {
            bias,
            standard_name: standard_name.into(),
            standard_date: SystemTime {
                month: 11,
                day: 1,
                hour: 2,
                ..Default::default()
            },
            standard_bias: 0,
            daylight_name: daylight_name.into(),
            daylight_date: SystemTime {
                month: 3,
                day: 2,
                hour: 2,
                ..Default::default()
            },
            daylight_bias: -60,
        }
    }

    /// Whether daylight saving time is in effect at the local time `local` (a FILETIME) by the
    /// header's rules. Zones without a daylight rule (month 0) never are.
    pub fn is_daylight(&self, local: i64) -> bool {
        self.in_daylight_window(local, local)
    }

    /// Whether daylight saving time is in effect in the year of `start_clock`, given the time read
    /// on the clock the daylight rule is written on (`start_clock`, compared with `DaylightDate`)
    /// and on the clock the standard rule is written on (`end_clock`, compared with
    /// `StandardDate`). Both are `local` for a local time; see [`is_daylight_utc`](Self::is_daylight_utc).
    fn in_daylight_window(&self, start_clock: i64, end_clock: i64) -> bool {
        let (Some(start), Some(end)) = self.transitions_around(start_clock) else {
            return false;
        };
        if start < end {
            start <= start_clock && end_clock < end
        } else {
            // Southern hemisphere: daylight time spans the new year.
            start_clock >= start || end_clock < end
        }
    }

    /// The daylight and standard transitions of the year `clock` falls in (local FILETIMEs, as
    /// [`transition`] gives them).
    ///
    /// A log converts each of its times, and consecutive times almost always fall in one year: the
    /// year's transitions are kept per thread for the last rules asked (two entries: a fleet's
    /// workers each convert one log at a time, a merge may alternate two zones), so that the date
    /// arithmetic runs once a year rather than for every time (it was a sixth of an analysis of a
    /// `.blg`). A time outside the year kept computes them again.
    fn transitions_around(&self, clock: i64) -> (Option<i64>, Option<i64>) {
        thread_local! {
            static RECENT: Cell<[Option<YearTransitions>; 2]> = const { Cell::new([None, None]) };
        }
        let rules = (self.daylight_date, self.standard_date);
        let mut recent = RECENT.get();
        if let Some(y) = recent
            .iter()
            .flatten()
            .find(|y| y.rules == rules && (y.begin..y.end).contains(&clock))
        {
            return (y.daylight, y.standard);
        }
        let year = SystemTime::from_filetime(clock).year;
        let found = (
            transition(&self.daylight_date, year),
            transition(&self.standard_date, year),
        );
        let jan1 = |year: u16| {
            SystemTime {
                year,
                month: 1,
                day: 1,
                ..Default::default()
            }
            .to_filetime()
        };
        if let (Some(begin), Some(end)) = (jan1(year), year.checked_add(1).and_then(jan1)) {
            recent[1] = recent[0];
            recent[0] = Some(YearTransitions {
                rules,
                begin,
                end,
                daylight: found.0,
                standard: found.1,
            });
            RECENT.set(recent);
        }
        found
    }

    /// The bias of one side of the zone, in minutes (UTC = local + bias): `Bias + DaylightBias`
    /// or `Bias + StandardBias`.
    fn side_bias(&self, daylight: bool) -> i32 {
        self.bias.saturating_add(if daylight {
            self.daylight_bias
        } else {
            self.standard_bias
        })
    }

    /// [`side_bias`](Self::side_bias) in 100 ns ticks.
    fn side_offset(&self, daylight: bool) -> i64 {
        i64::from(self.side_bias(daylight)) * TICKS_PER_MINUTE
    }

    /// The bias in effect at `local`, in minutes: UTC = local + bias.
    pub fn bias_at(&self, local: i64) -> i32 {
        self.side_bias(self.is_daylight(local))
    }

    /// The UTC FILETIME of a local FILETIME. A local time of the hour that repeats when daylight
    /// saving time ends is taken as its first occurrence (daylight time); one in the hour skipped
    /// when it begins, as daylight time. [`to_utc_after`](Self::to_utc_after) tells the two
    /// occurrences apart in a sequence of times.
    pub fn to_utc(&self, local: i64) -> i64 {
        local.saturating_add(i64::from(self.bias_at(local)) * TICKS_PER_MINUTE)
    }

    /// Whether the zone has a daylight-saving rule at all.
    pub fn has_daylight_rule(&self) -> bool {
        self.daylight_date.month != 0 && self.standard_date.month != 0
    }

    /// Whether daylight saving time is in effect at the UTC FILETIME `utc` by the header's rules.
    ///
    /// The rules are written in local time: `DaylightDate` on the standard-time clock (daylight
    /// time starts when it reads 2:00), `StandardDate` on the daylight-time clock.
    pub fn is_daylight_utc(&self, utc: i64) -> bool {
        if !self.has_daylight_rule() || utc < 0 {
            return false;
        }
        let standard_clock = utc.saturating_sub(self.side_offset(false));
        let daylight_clock = utc.saturating_sub(self.side_offset(true));
        self.in_daylight_window(standard_clock, daylight_clock)
    }

    /// The bias in effect at the UTC FILETIME `utc`, in minutes: local = UTC − bias.
    pub fn bias_at_utc(&self, utc: i64) -> i32 {
        self.side_bias(self.is_daylight_utc(utc))
    }

    /// The local FILETIME of a UTC FILETIME: one answer for every instant, daylight saving time
    /// included.
    pub fn to_local(&self, utc: i64) -> i64 {
        utc.saturating_sub(i64::from(self.bias_at_utc(utc)) * TICKS_PER_MINUTE)
    }

    /// The UTC FILETIME of the local FILETIME `local` of a sequence whose previous time was
    /// `previous` (UTC). A local time that occurs twice (the hour repeated when daylight saving time
    /// ends) is its first occurrence, unless that is before `previous`: then the second. So a log
    /// written across the change keeps going forward (01:59:59 daylight time, then 01:00:00
    /// standard time one second later). Other times convert as [`to_utc`](Self::to_utc) does.
    pub fn to_utc_after(&self, local: i64, previous: Option<i64>) -> i64 {
        if !self.has_daylight_rule() {
            return self.to_utc(local);
        }
        let as_standard = local.saturating_add(self.side_offset(false));
        let as_daylight = local.saturating_add(self.side_offset(true));
        let standard_ok = !self.is_daylight_utc(as_standard);
        let daylight_ok = self.is_daylight_utc(as_daylight);
        match (standard_ok, daylight_ok) {
            (true, true) => {
                let (first, second) = (as_standard.min(as_daylight), as_standard.max(as_daylight));
                match previous {
                    Some(p) if first < p => second,
                    _ => first,
                }
            }
            (true, false) => as_standard,
            (false, true) => as_daylight,
            (false, false) => self.to_utc(local),
        }
    }

    /// The zone's name (resolved with [`resolve_name`]) and bias in effect at `local`: what relog
    /// puts in its header cell.
    pub fn zone_at(&self, local: i64) -> (String, i32) {
        let daylight = self.is_daylight(local);
        let name = if daylight {
            &self.daylight_name
        } else {
            &self.standard_name
        };
        (resolve_name(name).into_owned(), self.side_bias(daylight))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eastern() -> TimeZoneInformation {
        // The Vista log's zone: US Eastern with the 2007 rules.
        TimeZoneInformation::us_since_2007(300, "@tzres.dll,-112", "@tzres.dll,-111")
    }

    /// A southern-hemisphere zone (AUS Eastern): daylight time from October to April.
    fn southern() -> TimeZoneInformation {
        TimeZoneInformation {
            bias: -600,
            standard_name: "@tzres.dll,-672".into(),
            daylight_name: "@tzres.dll,-671".into(),
            standard_date: SystemTime {
                month: 4,
                day: 1,
                hour: 3,
                ..Default::default()
            },
            daylight_date: SystemTime {
                month: 10,
                day: 1,
                hour: 2,
                ..Default::default()
            },
            daylight_bias: -60,
            ..Default::default()
        }
    }

    fn local(y: u16, m: u16, d: u16, h: u16) -> i64 {
        SystemTime {
            year: y,
            month: m,
            day: d,
            hour: h,
            ..Default::default()
        }
        .to_filetime()
        .unwrap()
    }

    #[test]
    fn table_is_sorted_and_names_pair_up() {
        assert!(TZRES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(tzres_name(212), Some("Pacific Standard Time"));
        assert_eq!(tzres_name(111), Some("Eastern Daylight Time"));
        assert_eq!(tzres_name(632), Some("Tokyo Standard Time"));
        assert_eq!(tzres_name(213), None);
        assert_eq!(resolve_name(" @TZRES.DLL, -112 "), "Eastern Standard Time");
        assert_eq!(resolve_name("@other.dll,-112"), "@other.dll,-112");
        assert_eq!(resolve_name("@tzres.dll,112"), "@tzres.dll,112");
    }

    #[test]
    fn kept_transitions_are_the_years_own() {
        // Three zones (northern, southern, a fixed date) take turns on one thread, so the two
        // entries kept are evicted and asked across year ends, before 1601 and far ahead: every
        // answer is the one computed afresh for the time's year.
        let dated = TimeZoneInformation {
            daylight_date: SystemTime {
                year: 2010,
                month: 3,
                day: 28,
                hour: 1,
                ..Default::default()
            },
            standard_date: SystemTime {
                year: 2010,
                month: 10,
                day: 31,
                hour: 2,
                ..Default::default()
            },
            ..eastern()
        };
        let zones = [eastern(), southern(), dated];
        let year_ticks = 365 * 86_400 * 10_000_000_i64;
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut clocks = vec![
            -1,
            0,
            i64::MAX,
            local(2009, 12, 31, 23),
            local(2010, 1, 1, 0),
        ];
        for _ in 0..3000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Mostly 1995-2045, with steps that stay in a year or cross one.
            let base = local(1995, 1, 1, 0) + (seed % 50) as i64 * year_ticks;
            clocks.push(base + (seed >> 8) as i64 % (2 * year_ticks));
        }
        for (i, &clock) in clocks.iter().enumerate() {
            let tz = &zones[i % zones.len()];
            let year = SystemTime::from_filetime(clock).year;
            let fresh = (
                transition(&tz.daylight_date, year),
                transition(&tz.standard_date, year),
            );
            assert_eq!(tz.transitions_around(clock), fresh, "clock {clock}");
            assert_eq!(
                tz.transitions_around(clock),
                fresh,
                "clock {clock}, asked again"
            );
        }
    }

    #[test]
    fn daylight_rules() {
        let tz = eastern();
        // 2007: second Sunday of March is the 11th, first Sunday of November the 4th.
        assert!(!tz.is_daylight(local(2007, 3, 11, 1)));
        assert!(tz.is_daylight(local(2007, 3, 11, 2)));
        assert!(tz.is_daylight(local(2007, 8, 14, 15)));
        assert!(tz.is_daylight(local(2007, 11, 4, 1)));
        assert!(!tz.is_daylight(local(2007, 11, 4, 2)));
        assert_eq!(
            tz.zone_at(local(2007, 8, 14, 15)),
            ("Eastern Daylight Time".to_string(), 240)
        );
        assert_eq!(
            tz.zone_at(local(2007, 12, 1, 0)),
            ("Eastern Standard Time".to_string(), 300)
        );
        assert_eq!(tz.to_utc(local(2007, 8, 14, 15)), local(2007, 8, 14, 19));
        // A zone without daylight time.
        let sa = TimeZoneInformation {
            bias: 180,
            standard_name: "SA Eastern Standard Time".into(),
            daylight_name: "SA Eastern Standard Time".into(),
            ..Default::default()
        };
        assert_eq!(
            sa.zone_at(local(2007, 7, 2, 14)),
            ("SA Eastern Standard Time".to_string(), 180)
        );
        // Southern hemisphere: daylight time from October to April.
        let south = southern();
        assert!(south.is_daylight(local(2020, 1, 15, 12)));
        assert!(!south.is_daylight(local(2020, 6, 15, 12)));
        assert_eq!(south.zone_at(local(2020, 1, 15, 12)).1, -660);
        // The last (5th) Sunday of a month with four.
        let last = SystemTime {
            month: 2,
            day: 5,
            ..Default::default()
        };
        assert_eq!(
            SystemTime::from_filetime(transition(&last, 2021).unwrap()).day,
            28
        );
    }
}
