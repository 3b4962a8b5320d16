//! The time model of logs: [`TimeZone`], [`LocalClock`] and the table of Windows zones
//! ([`windows_zone`]).

use super::time::{LogTime, TICKS_PER_MINUTE};
use crate::format::blg::TimeZoneInformation;
use crate::snapshot::SystemTime;

/// The time zone of a log: the name and bias in effect at its first record, as a PDH-CSV header
/// cell shows them, and the rules that turn its local times into UTC and back.
///
/// A record's time is a UTC instant; the log's zone says how Windows shows it. Every reader turns
/// the wall-clock times a log stores into UTC with the log's own zone rules, daylight saving time
/// included, and puts the zone into the header ([`LogHeader::time_zone`](super::LogHeader::time_zone)) so a
/// writer can show local time the way Windows does:
///
/// * a `.blg` stores local times and its writer's `TIME_ZONE_INFORMATION`: those rules;
/// * a PDH-CSV/TSV header cell names the zone and the bias in effect at the first record
///   (`(PDH-CSV 4.0) (Pacific Standard Time)(480)`, `(Eastern Daylight Time)(240)`): the rules of a
///   Windows zone of that name ([`windows_zone`]), or the fixed bias when the name is not one the
///   table knows (localized or cut off) — said in one warning;
/// * a SQL log stores UTC times with `MinutesToUTC` and `TimeZoneName`: the same table.
///
/// The table holds the rules Windows itself publishes for its zones (the `TZI` value under
/// `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion\Time Zones\<zone>`: a bias and two recurring
/// transition dates), in the `TIME_ZONE_INFORMATION` form a `.blg` carries. One rule type serves
/// every format, the names are the ones PDH writes (no second mapping onto the tz database), and the
/// conversion is the one Windows applies when it writes a log. The rules are today's: a log written
/// before a country changed its rules converts with the new ones, as it does on Windows without
/// dynamic daylight-time data. Zones whose rules are not a recurring date (Israel, Morocco, Chile,
/// Egypt …) are left out; they fall back to the fixed bias.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeZone {
    /// The zone name as written, possibly localized (`Hora de verano romance`) or cut off at its first
    /// non-ASCII character (`RTZ 2 (`).
    pub name: String,
    /// UTC − local time in minutes at the first record (positive west of UTC), as
    /// `TIME_ZONE_INFORMATION.Bias`; `None` when the header cell was cut off before the bias.
    pub bias: Option<i32>,
    /// The rules: a Windows zone's daylight-saving dates, or only a fixed bias.
    pub rules: TimeZoneInformation,
}

/// The name of a fixed zone `bias` minutes behind UTC: `UTC+01:00` for a bias of -60,
/// `UTC-05:30` for 330.
pub fn offset_name(bias: i32) -> String {
    let east = -i64::from(bias);
    let sign = if east < 0 { '-' } else { '+' };
    format!("UTC{sign}{:02}:{:02}", east.abs() / 60, east.abs() % 60)
}

impl TimeZone {
    /// A zone of one fixed bias (0 when unknown): no daylight saving time.
    pub fn fixed(name: impl Into<String>, bias: Option<i32>) -> TimeZone {
        let name = name.into();
        TimeZone {
            rules: TimeZoneInformation {
                bias: bias.unwrap_or(0),
                standard_name: name.clone(),
                daylight_name: name.clone(),
                ..TimeZoneInformation::default()
            },
            name,
            bias,
        }
    }

    /// The zone of a clock `bias` minutes behind UTC (UTC − local, as Windows counts it) with no
    /// known rules, as a live collection knows its zone: `Coordinated Universal Time` for 0, else
    /// `UTC+01:00`-style names ([`offset_name`]), which [`TimeZone::named`] reads back as the same
    /// fixed zone without a warning.
    pub fn fixed_offset(bias: i32) -> TimeZone {
        if bias == 0 {
            return TimeZone::named("Coordinated Universal Time", Some(0)).0;
        }
        TimeZone::fixed(offset_name(bias), Some(bias))
    }

    /// The zone of `rules` named as Windows names it at the UTC instant `first` (the first record):
    /// what a `.blg`'s `TIME_ZONE_INFORMATION` gives.
    pub fn from_rules(rules: TimeZoneInformation, first: LogTime) -> TimeZone {
        let (name, bias) = rules.zone_at(rules.to_local(first.0));
        TimeZone {
            name,
            bias: Some(bias),
            rules,
        }
    }

    /// The zone a log names (a PDH-CSV header cell, a SQL log's `TimeZoneName` and `MinutesToUTC`):
    /// the rules of the Windows zone of that name, standard or daylight, when the table knows it and
    /// the bias is one of the zone's; else the fixed bias, with the warning to give once.
    pub fn named(name: &str, bias: Option<i32>) -> (TimeZone, Option<String>) {
        let fallback = |why: String| (TimeZone::fixed(name, bias), Some(why));
        // The names of fixed zones this program writes ([`TimeZone::fixed_offset`]).
        if let Some(b) = bias.filter(|&b| offset_name(b) == name) {
            return (TimeZone::fixed(name, Some(b)), None);
        }
        let Some(rules) = windows_zone(name) else {
            let used = match bias {
                Some(b) => format!("its fixed bias of {b} minutes"),
                None => "UTC (no bias is given)".to_owned(),
            };
            return fallback(format!(
                "time zone \"{name}\" is not a Windows zone name this program knows; times are \
                 converted with {used}, without daylight saving time"
            ));
        };
        let standard = rules.bias.saturating_add(rules.standard_bias);
        let daylight = rules.bias.saturating_add(rules.daylight_bias);
        match bias {
            Some(b) if b != standard && !(rules.has_daylight_rule() && b == daylight) => {
                fallback(format!(
                    "time zone \"{name}\" has a bias of {standard} minutes, not {b}; times are \
                     converted with the fixed bias of {b} minutes"
                ))
            }
            _ => (
                TimeZone {
                    name: name.to_owned(),
                    bias,
                    rules,
                },
                None,
            ),
        }
    }

    /// The zone as charts and reports label a log's local times: its name and, when the name is
    /// not already one, its offset from UTC at the log's first record.
    ///
    /// ```
    /// use perfcounters::log::TimeZone;
    /// let (pst, _) = TimeZone::named("Pacific Standard Time", Some(480));
    /// assert_eq!(pst.label(), "Pacific Standard Time (UTC-08:00)");
    /// assert_eq!(TimeZone::fixed_offset(-60).label(), "UTC+01:00");
    /// assert_eq!(TimeZone::fixed("RTZ 2 (", None).label(), "RTZ 2 (");
    /// ```
    pub fn label(&self) -> String {
        match self.bias {
            Some(b) if offset_name(b) != self.name => format!("{} ({})", self.name, offset_name(b)),
            _ => self.name.clone(),
        }
    }

    /// The local time at the UTC instant `utc`.
    pub fn to_local(&self, utc: LogTime) -> LogTime {
        LogTime(self.rules.to_local(utc.0))
    }

    /// The UTC instant of the local time `local`; a time of the repeated hour at the end of daylight
    /// saving time is its first occurrence. For a sequence of times use [`LocalClock`].
    pub fn to_utc(&self, local: LogTime) -> LogTime {
        LogTime(self.rules.to_utc(local.0))
    }

    /// A clock that converts this zone's local times, in the order a log stores them, into UTC.
    pub fn clock(&self) -> LocalClock {
        LocalClock {
            rules: self.rules.clone(),
            first_bias: self.bias,
            previous: None,
        }
    }
}

/// Converts the local times of a log, in order, into UTC instants: a time of the hour repeated when
/// daylight saving time ends is its second occurrence when the first one would go back in time
/// ([`TimeZoneInformation::to_utc_after`]). The first time takes the bias the log names for it
/// when that is one of the two the local time can have.
#[derive(Clone, Debug)]
pub struct LocalClock {
    rules: TimeZoneInformation,
    first_bias: Option<i32>,
    previous: Option<i64>,
}

impl LocalClock {
    /// A clock of `rules` alone (no bias named for the first time).
    pub fn new(rules: TimeZoneInformation) -> LocalClock {
        LocalClock {
            rules,
            first_bias: None,
            previous: None,
        }
    }

    /// The UTC instant of the next local time of the log.
    pub fn to_utc(&mut self, local: LogTime) -> LogTime {
        let named = match (self.previous, self.first_bias) {
            (None, Some(b)) => {
                let utc = local
                    .0
                    .saturating_add(i64::from(b).saturating_mul(TICKS_PER_MINUTE));
                Some(utc).filter(|&u| self.rules.to_local(u) == local.0)
            }
            _ => None,
        };
        let utc = named.unwrap_or_else(|| self.rules.to_utc_after(local.0, self.previous));
        self.previous = Some(utc);
        LogTime(utc)
    }
}

/// A recurring transition: the `week`-th (1–4, 5 = last) Sunday of `month` at `hour:minute`.
const fn sunday(month: u16, week: u16, hour: u16, minute: u16) -> SystemTime {
    SystemTime {
        year: 0,
        month,
        day_of_week: 0,
        day: week,
        hour,
        minute,
        second: 0,
        milliseconds: 0,
    }
}

/// Daylight saving time (starts, ends), on the local clock of each side.
type Rule = Option<(SystemTime, SystemTime)>;

/// The United States and Canada since 2007: second Sunday of March 2:00 – first Sunday of November
/// 2:00.
const US: Rule = Some((sunday(3, 2, 2, 0), sunday(11, 1, 2, 0)));
/// The European Union at 1:00 UTC, on a clock of UTC+0: last Sunday of March 1:00 – last Sunday of
/// October 2:00.
const EU0: Rule = Some((sunday(3, 5, 1, 0), sunday(10, 5, 2, 0)));
/// The same on a clock of UTC+1.
const EU1: Rule = Some((sunday(3, 5, 2, 0), sunday(10, 5, 3, 0)));
/// The same on a clock of UTC+2.
const EU2: Rule = Some((sunday(3, 5, 3, 0), sunday(10, 5, 4, 0)));
/// The Azores (UTC−1).
const EU_1: Rule = Some((sunday(3, 5, 0, 0), sunday(10, 5, 1, 0)));
/// Moldova: last Sunday of March 2:00 – last Sunday of October 3:00.
const MD: Rule = Some((sunday(3, 5, 2, 0), sunday(10, 5, 3, 0)));
/// South-eastern Australia: first Sunday of October 2:00 – first Sunday of April 3:00.
const AU: Rule = Some((sunday(10, 1, 2, 0), sunday(4, 1, 3, 0)));
/// New Zealand: last Sunday of September 2:00 – first Sunday of April 3:00.
const NZ: Rule = Some((sunday(9, 5, 2, 0), sunday(4, 1, 3, 0)));

/// Windows zones: (registry key, standard name, bias in minutes, daylight saving rule). The
/// daylight name is the standard name with `Standard` replaced by `Daylight`, as Windows names them.
/// Sorted by key (byte order). Rules as the zones' `TZI` values give them today (see the module documentation).
const WINDOWS_ZONES: &[(&str, &str, i32, Rule)] = &[
    (
        "AUS Central Standard Time",
        "AUS Central Standard Time",
        -570,
        None,
    ),
    (
        "AUS Eastern Standard Time",
        "AUS Eastern Standard Time",
        -600,
        AU,
    ),
    (
        "Afghanistan Standard Time",
        "Afghanistan Standard Time",
        -270,
        None,
    ),
    ("Alaskan Standard Time", "Alaskan Standard Time", 540, US),
    ("Aleutian Standard Time", "Aleutian Standard Time", 600, US),
    ("Arab Standard Time", "Arab Standard Time", -180, None),
    ("Arabian Standard Time", "Arabian Standard Time", -240, None),
    ("Arabic Standard Time", "Arabic Standard Time", -180, None),
    (
        "Argentina Standard Time",
        "Argentina Standard Time",
        180,
        None,
    ),
    (
        "Astrakhan Standard Time",
        "Astrakhan Standard Time",
        -240,
        None,
    ),
    ("Atlantic Standard Time", "Atlantic Standard Time", 240, US),
    (
        "Azerbaijan Standard Time",
        "Azerbaijan Standard Time",
        -240,
        None,
    ),
    ("Azores Standard Time", "Azores Standard Time", 60, EU_1),
    ("Bahia Standard Time", "Bahia Standard Time", 180, None),
    (
        "Bangladesh Standard Time",
        "Bangladesh Standard Time",
        -360,
        None,
    ),
    ("Belarus Standard Time", "Belarus Standard Time", -180, None),
    (
        "Canada Central Standard Time",
        "Canada Central Standard Time",
        360,
        None,
    ),
    (
        "Cape Verde Standard Time",
        "Cape Verde Standard Time",
        60,
        None,
    ),
    (
        "Caucasus Standard Time",
        "Caucasus Standard Time",
        -240,
        None,
    ),
    (
        "Cen. Australia Standard Time",
        "Cen. Australia Standard Time",
        -570,
        AU,
    ),
    (
        "Central America Standard Time",
        "Central America Standard Time",
        360,
        None,
    ),
    (
        "Central Brazilian Standard Time",
        "Central Brazilian Standard Time",
        240,
        None,
    ),
    (
        "Central Europe Standard Time",
        "Central Europe Standard Time",
        -60,
        EU1,
    ),
    (
        "Central European Standard Time",
        "Central European Standard Time",
        -60,
        EU1,
    ),
    (
        "Central Pacific Standard Time",
        "Central Pacific Standard Time",
        -660,
        None,
    ),
    ("Central Standard Time", "Central Standard Time", 360, US),
    (
        "Central Standard Time (Mexico)",
        "Central Standard Time (Mexico)",
        360,
        None,
    ),
    ("China Standard Time", "China Standard Time", -480, None),
    (
        "Dateline Standard Time",
        "Dateline Standard Time",
        720,
        None,
    ),
    (
        "E. Africa Standard Time",
        "E. Africa Standard Time",
        -180,
        None,
    ),
    (
        "E. Australia Standard Time",
        "E. Australia Standard Time",
        -600,
        None,
    ),
    (
        "E. Europe Standard Time",
        "E. Europe Standard Time",
        -120,
        MD,
    ),
    (
        "E. South America Standard Time",
        "E. South America Standard Time",
        180,
        None,
    ),
    ("Eastern Standard Time", "Eastern Standard Time", 300, US),
    (
        "Eastern Standard Time (Mexico)",
        "Eastern Standard Time (Mexico)",
        300,
        None,
    ),
    (
        "Ekaterinburg Standard Time",
        "Ekaterinburg Standard Time",
        -300,
        None,
    ),
    ("FLE Standard Time", "FLE Standard Time", -120, EU2),
    ("GMT Standard Time", "GMT Standard Time", 0, EU0),
    ("GTB Standard Time", "GTB Standard Time", -120, EU2),
    (
        "Georgian Standard Time",
        "Georgian Standard Time",
        -240,
        None,
    ),
    (
        "Greenwich Standard Time",
        "Greenwich Standard Time",
        0,
        None,
    ),
    (
        "Hawaiian Standard Time",
        "Hawaiian Standard Time",
        600,
        None,
    ),
    ("India Standard Time", "India Standard Time", -330, None),
    ("Iran Standard Time", "Iran Standard Time", -210, None),
    (
        "Kaliningrad Standard Time",
        "Kaliningrad Standard Time",
        -120,
        None,
    ),
    ("Korea Standard Time", "Korea Standard Time", -540, None),
    ("Libya Standard Time", "Libya Standard Time", -120, None),
    (
        "Line Islands Standard Time",
        "Line Islands Standard Time",
        -840,
        None,
    ),
    ("Magadan Standard Time", "Magadan Standard Time", -660, None),
    (
        "Magallanes Standard Time",
        "Magallanes Standard Time",
        180,
        None,
    ),
    (
        "Marquesas Standard Time",
        "Marquesas Standard Time",
        570,
        None,
    ),
    (
        "Mauritius Standard Time",
        "Mauritius Standard Time",
        -240,
        None,
    ),
    (
        "Montevideo Standard Time",
        "Montevideo Standard Time",
        180,
        None,
    ),
    ("Mountain Standard Time", "Mountain Standard Time", 420, US),
    (
        "Mountain Standard Time (Mexico)",
        "Mountain Standard Time (Mexico)",
        420,
        None,
    ),
    ("Myanmar Standard Time", "Myanmar Standard Time", -390, None),
    (
        "N. Central Asia Standard Time",
        "N. Central Asia Standard Time",
        -420,
        None,
    ),
    ("Namibia Standard Time", "Namibia Standard Time", -120, None),
    ("Nepal Standard Time", "Nepal Standard Time", -345, None),
    (
        "New Zealand Standard Time",
        "New Zealand Standard Time",
        -720,
        NZ,
    ),
    (
        "Newfoundland Standard Time",
        "Newfoundland Standard Time",
        210,
        US,
    ),
    (
        "North Asia East Standard Time",
        "North Asia East Standard Time",
        -480,
        None,
    ),
    (
        "North Asia Standard Time",
        "North Asia Standard Time",
        -420,
        None,
    ),
    ("Omsk Standard Time", "Omsk Standard Time", -360, None),
    ("Pacific Standard Time", "Pacific Standard Time", 480, US),
    (
        "Pacific Standard Time (Mexico)",
        "Pacific Standard Time (Mexico)",
        480,
        US,
    ),
    (
        "Pakistan Standard Time",
        "Pakistan Standard Time",
        -300,
        None,
    ),
    ("Romance Standard Time", "Romance Standard Time", -60, EU1),
    (
        "Russia Time Zone 10",
        "Russia TZ 10 Standard Time",
        -660,
        None,
    ),
    (
        "Russia Time Zone 11",
        "Russia TZ 11 Standard Time",
        -720,
        None,
    ),
    (
        "Russia Time Zone 3",
        "Russia TZ 3 Standard Time",
        -240,
        None,
    ),
    ("Russian Standard Time", "Russian Standard Time", -180, None),
    (
        "SA Eastern Standard Time",
        "SA Eastern Standard Time",
        180,
        None,
    ),
    (
        "SA Pacific Standard Time",
        "SA Pacific Standard Time",
        300,
        None,
    ),
    (
        "SA Western Standard Time",
        "SA Western Standard Time",
        240,
        None,
    ),
    ("SE Asia Standard Time", "SE Asia Standard Time", -420, None),
    (
        "Saint Pierre Standard Time",
        "Saint Pierre Standard Time",
        180,
        US,
    ),
    ("Sao Tome Standard Time", "Sao Tome Standard Time", 0, None),
    ("Saratov Standard Time", "Saratov Standard Time", -240, None),
    (
        "Singapore Standard Time",
        "Malay Peninsula Standard Time",
        -480,
        None,
    ),
    (
        "South Africa Standard Time",
        "South Africa Standard Time",
        -120,
        None,
    ),
    (
        "Sri Lanka Standard Time",
        "Sri Lanka Standard Time",
        -330,
        None,
    ),
    ("Sudan Standard Time", "Sudan Standard Time", -120, None),
    ("Taipei Standard Time", "Taipei Standard Time", -480, None),
    ("Tasmania Standard Time", "Tasmania Standard Time", -600, AU),
    (
        "Tocantins Standard Time",
        "Tocantins Standard Time",
        180,
        None,
    ),
    ("Tokyo Standard Time", "Tokyo Standard Time", -540, None),
    ("Tonga Standard Time", "Tonga Standard Time", -780, None),
    ("Turkey Standard Time", "Turkey Standard Time", -180, None),
    (
        "US Eastern Standard Time",
        "US Eastern Standard Time",
        300,
        US,
    ),
    (
        "US Mountain Standard Time",
        "US Mountain Standard Time",
        420,
        None,
    ),
    ("UTC", "Coordinated Universal Time", 0, None),
    ("UTC+12", "UTC+12", -720, None),
    ("UTC+13", "UTC+13", -780, None),
    ("UTC-02", "UTC-02", 120, None),
    ("UTC-08", "UTC-08", 480, None),
    ("UTC-09", "UTC-09", 540, None),
    ("UTC-11", "UTC-11", 660, None),
    (
        "Ulaanbaatar Standard Time",
        "Ulaanbaatar Standard Time",
        -480,
        None,
    ),
    (
        "Venezuela Standard Time",
        "Venezuela Standard Time",
        240,
        None,
    ),
    (
        "Vladivostok Standard Time",
        "Vladivostok Standard Time",
        -600,
        None,
    ),
    (
        "W. Australia Standard Time",
        "W. Australia Standard Time",
        -480,
        None,
    ),
    (
        "W. Central Africa Standard Time",
        "W. Central Africa Standard Time",
        -60,
        None,
    ),
    (
        "W. Europe Standard Time",
        "W. Europe Standard Time",
        -60,
        EU1,
    ),
    (
        "West Asia Standard Time",
        "West Asia Standard Time",
        -300,
        None,
    ),
    (
        "West Pacific Standard Time",
        "West Pacific Standard Time",
        -600,
        None,
    ),
    ("Yakutsk Standard Time", "Yakutsk Standard Time", -540, None),
];

/// The daylight name Windows gives a zone of standard name `standard`.
fn daylight_name(standard: &str) -> String {
    standard.replace("Standard Time", "Daylight Time")
}

/// The rules of the Windows zone named `name`: its registry key, its standard name or its daylight
/// name (`Pacific Daylight Time`), compared ignoring ASCII case and surrounding blanks; `UTC` is
/// also `Coordinated Universal Time`. `None` for a name the table does not know (see [`TimeZone`] for
/// the table).
///
/// ```
/// use perfcounters::log::windows_zone;
/// let pacific = windows_zone("Pacific Daylight Time").unwrap();
/// assert_eq!((pacific.bias, pacific.daylight_bias), (480, -60));
/// assert_eq!(pacific.standard_name, "Pacific Standard Time");
/// assert!(windows_zone("Hora de verano romance").is_none());
/// ```
pub fn windows_zone(name: &str) -> Option<TimeZoneInformation> {
    let name = name.trim();
    let &(_, standard, bias, rule) = WINDOWS_ZONES.iter().find(|(key, standard, _, rule)| {
        key.eq_ignore_ascii_case(name)
            || standard.eq_ignore_ascii_case(name)
            || (rule.is_some() && daylight_name(standard).eq_ignore_ascii_case(name))
    })?;
    let (daylight_date, standard_date, daylight_bias) = match rule {
        Some((start, end)) => (start, end, -60),
        None => (SystemTime::default(), SystemTime::default(), 0),
    };
    Some(TimeZoneInformation {
        bias,
        standard_name: standard.to_owned(),
        standard_date,
        standard_bias: 0,
        daylight_name: if rule.is_some() {
            daylight_name(standard)
        } else {
            standard.to_owned()
        },
        daylight_date,
        daylight_bias,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> LogTime {
        LogTime::from_parts(y, mo, d, h, mi, s, 0).unwrap()
    }

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(WINDOWS_ZONES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(
            windows_zone("utc").unwrap().standard_name,
            "Coordinated Universal Time"
        );
        assert_eq!(
            windows_zone(" Coordinated Universal Time ").unwrap().bias,
            0
        );
        assert_eq!(windows_zone("Singapore Standard Time").unwrap().bias, -480);
        assert_eq!(
            windows_zone("Malay Peninsula Standard Time").unwrap().bias,
            -480
        );
        // A zone without daylight time has no daylight name to match.
        assert!(windows_zone("Tokyo Daylight Time").is_none());
        assert_eq!(
            windows_zone("Romance Daylight Time").unwrap().daylight_name,
            "Romance Daylight Time"
        );
    }

    #[test]
    fn pacific_across_both_changes() {
        let (zone, warning) = TimeZone::named("Pacific Standard Time", Some(480));
        assert_eq!(warning, None);
        // Spring forward, 2024-03-10: 01:59:59 PST is 09:59:59 UTC, 03:00:00 PDT is 10:00:00 UTC.
        let mut clock = zone.clock();
        assert_eq!(
            clock.to_utc(t(2024, 3, 10, 1, 59, 59)),
            t(2024, 3, 10, 9, 59, 59)
        );
        assert_eq!(
            clock.to_utc(t(2024, 3, 10, 3, 0, 0)),
            t(2024, 3, 10, 10, 0, 0)
        );
        assert_eq!(
            zone.to_local(t(2024, 3, 10, 10, 0, 0)),
            t(2024, 3, 10, 3, 0, 0)
        );
        assert_eq!(
            zone.to_local(t(2024, 3, 10, 9, 59, 59)),
            t(2024, 3, 10, 1, 59, 59)
        );
        // Fall back, 2024-11-03: 01:00–02:00 local happens twice. A log started in summer names
        // daylight time.
        let (summer, warning) = TimeZone::named("Pacific Daylight Time", Some(420));
        assert_eq!(warning, None);
        let mut clock = summer.clock();
        let times = [
            (t(2024, 11, 3, 1, 30, 0), t(2024, 11, 3, 8, 30, 0)),
            (t(2024, 11, 3, 1, 59, 59), t(2024, 11, 3, 8, 59, 59)),
            (t(2024, 11, 3, 1, 0, 0), t(2024, 11, 3, 9, 0, 0)),
            (t(2024, 11, 3, 1, 30, 0), t(2024, 11, 3, 9, 30, 0)),
            (t(2024, 11, 3, 2, 0, 0), t(2024, 11, 3, 10, 0, 0)),
        ];
        for (local, utc) in times {
            assert_eq!(clock.to_utc(local), utc, "{local}");
            assert_eq!(zone.to_local(utc), local, "{utc}");
        }
        // Alone, a repeated time is its first occurrence.
        assert_eq!(
            zone.to_utc(t(2024, 11, 3, 1, 30, 0)),
            t(2024, 11, 3, 8, 30, 0)
        );
        // A log whose header names standard time for a first record in the repeated hour.
        let mut clock = zone.clock();
        assert_eq!(
            clock.to_utc(t(2024, 11, 3, 1, 30, 0)),
            t(2024, 11, 3, 9, 30, 0)
        );
    }

    #[test]
    fn daylight_names_and_southern_rules() {
        let (zone, warning) = TimeZone::named("Eastern Daylight Time", Some(240));
        assert_eq!(warning, None);
        assert_eq!(zone.rules.bias, 300);
        assert_eq!(
            zone.to_local(t(2024, 7, 1, 16, 0, 0)),
            t(2024, 7, 1, 12, 0, 0)
        );
        assert_eq!(
            zone.to_local(t(2024, 12, 1, 17, 0, 0)),
            t(2024, 12, 1, 12, 0, 0)
        );
        let first = t(2024, 7, 1, 16, 0, 0);
        let blg = TimeZone::from_rules(zone.rules.clone(), first);
        assert_eq!(
            (blg.name.as_str(), blg.bias),
            ("Eastern Daylight Time", Some(240))
        );
        // Sydney: daylight time from the first Sunday of October (2024-10-06 02:00 AEST).
        let (syd, _) = TimeZone::named("AUS Eastern Standard Time", Some(-600));
        assert_eq!(
            syd.to_local(t(2024, 10, 5, 15, 59, 0)),
            t(2024, 10, 6, 1, 59, 0)
        );
        assert_eq!(
            syd.to_local(t(2024, 10, 5, 16, 0, 0)),
            t(2024, 10, 6, 3, 0, 0)
        );
        assert_eq!(
            syd.to_local(t(2025, 1, 15, 0, 0, 0)),
            t(2025, 1, 15, 11, 0, 0)
        );
        // … to the first Sunday of April (2025-04-06 03:00 AEDT).
        assert_eq!(
            syd.to_local(t(2025, 4, 5, 15, 59, 0)),
            t(2025, 4, 6, 2, 59, 0)
        );
        assert_eq!(
            syd.to_local(t(2025, 4, 5, 16, 0, 0)),
            t(2025, 4, 6, 2, 0, 0)
        );
        // London: last Sundays of March and October at 01:00 UTC.
        let (london, _) = TimeZone::named("GMT Standard Time", Some(0));
        assert_eq!(
            london.to_local(t(2024, 3, 31, 0, 59, 0)),
            t(2024, 3, 31, 0, 59, 0)
        );
        assert_eq!(
            london.to_local(t(2024, 3, 31, 1, 0, 0)),
            t(2024, 3, 31, 2, 0, 0)
        );
        assert_eq!(
            london.to_local(t(2024, 10, 27, 0, 59, 0)),
            t(2024, 10, 27, 1, 59, 0)
        );
        assert_eq!(
            london.to_local(t(2024, 10, 27, 1, 0, 0)),
            t(2024, 10, 27, 1, 0, 0)
        );
    }

    /// A log with a German zone name in its header cell (`Mitteleuropäische Zeit`, UTC+1) across
    /// the spring change: the fixed bias, so the instants after the change are an hour late, and
    /// one warning; a zone's registry key in the header cell gives that zone's rules.
    #[test]
    fn a_localized_zone_name_in_a_csv_header() {
        use crate::log::{CsvReadOptions, LogReader, PdhCsvReader, Record};
        let read = |zone: &str| {
            let text = format!(
                "\"(PDH-CSV 4.0) ({zone})(-60)\",\"\\\\H\\Memory\\Available MBytes\"\r\n\
                 \"03/31/2024 01:59:59.000\",\"1\"\r\n\
                 \"03/31/2024 03:00:00.000\",\"2\"\r\n"
            );
            let mut r = PdhCsvReader::new(
                std::io::Cursor::new(text.into_bytes()),
                "de.csv",
                CsvReadOptions::default(),
            )
            .unwrap();
            let mut rec = Record::default();
            let mut times = Vec::new();
            while r.read_record(&mut rec).unwrap() {
                times.push(rec.time);
            }
            (times, r.warnings().to_vec())
        };
        let (times, warnings) = read("Mitteleuropäische Zeit");
        // 03:00 CEST is 01:00 UTC, one second after 01:59:59 CET; the fixed bias makes it 02:00.
        assert_eq!(times, [t(2024, 3, 31, 0, 59, 59), t(2024, 3, 31, 2, 0, 0)]);
        assert_eq!(
            warnings,
            [
                "de.csv: time zone \"Mitteleuropäische Zeit\" is not a Windows zone name this \
              program knows; times are converted with its fixed bias of -60 minutes, without \
              daylight saving time"
            ]
        );
        let (times, warnings) = read("W. Europe Standard Time");
        assert_eq!(times, [t(2024, 3, 31, 0, 59, 59), t(2024, 3, 31, 1, 0, 0)]);
        assert!(warnings.is_empty());
    }

    #[test]
    fn unknown_names_fall_back_to_the_fixed_bias() {
        let (zone, warning) = TimeZone::named("Hora de verano romance", Some(-120));
        assert_eq!(zone, TimeZone::fixed("Hora de verano romance", Some(-120)));
        assert!(warning.unwrap().contains("fixed bias of -120 minutes"));
        assert_eq!(
            zone.to_local(t(2024, 1, 1, 0, 0, 0)),
            t(2024, 1, 1, 2, 0, 0)
        );
        let (cut, warning) = TimeZone::named("RTZ 2 (", None);
        assert_eq!(cut.bias, None);
        assert!(warning.unwrap().contains("UTC (no bias is given)"));
        assert_eq!(cut.to_local(t(2024, 1, 1, 0, 0, 0)), t(2024, 1, 1, 0, 0, 0));
        // A known name with a bias that is not the zone's keeps the bias.
        let (odd, warning) = TimeZone::named("Pacific Standard Time", Some(300));
        assert_eq!(odd.rules.daylight_date.month, 0);
        assert!(warning
            .unwrap()
            .contains("has a bias of 480 minutes, not 300"));
        // A known name without a bias keeps the zone's rules.
        let (pst, warning) = TimeZone::named("Pacific Standard Time", None);
        assert_eq!((pst.bias, warning), (None, None));
        assert_eq!(
            pst.to_local(t(2024, 7, 1, 19, 0, 0)),
            t(2024, 7, 1, 12, 0, 0)
        );
    }
}
