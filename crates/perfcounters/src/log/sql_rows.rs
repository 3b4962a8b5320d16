//! The rows of the SQL log schema, decoded and encoded without a database: what the SQLite reader
//! and writer (`log::sql`, feature `sql`) exchange with the tables.
//!
//! * `CounterData.CounterDateTime` (UTC) and `DisplayToID.LogStartTime` / `LogStopTime`:
//!   `yyyy-mm-dd hh:mm:ss.mmm`, 23 characters in a `char(24)` column. Microsoft's page for
//!   `DisplayToID` writes the format `yyyy-mm-dd hh:mm:ss:nnn` (a colon before the milliseconds);
//!   both are read, the dot is written (SQL Server's own `datetime` text form).
//! * `FirstValueA` / `FirstValueB` (and `SecondValue…`): the low and high 32 bits of
//!   `PDH_RAW_COUNTER.FirstValue` in signed 32-bit `int` columns, so a low half of 2^31 or more is
//!   stored negative. Both that and the unsigned reading are accepted.
//! * `CounterValue` is `NULL` for a cell without a value (see `docs/logs.md`: relog writes 0 there,
//!   which cannot be told apart from a real 0).
//!
//! Every function takes untrusted values and returns an error message instead of panicking.

use crate::counter_type::CounterType;
use crate::path::CounterPath;
use crate::raw::RawCounter;
use crate::status::PdhStatus;
use crate::time_text::TimeStyle;

use super::model::{Cell, CounterInfo, LogCounter, LogTime, RawCell};

/// One value of a row, as SQLite hands it over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SqlValue<'a> {
    /// `NULL`.
    Null,
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text (UTF-8 bytes, unchecked).
    Text(&'a [u8]),
    /// A blob.
    Blob(&'a [u8]),
}

/// The columns of a `CounterData` row after the key: `CounterDateTime`, `CounterValue`,
/// `FirstValueA`, `FirstValueB`, `SecondValueA`, `SecondValueB`, `MultiCount`.
pub type DataRow<'a> = [SqlValue<'a>; 7];

/// The columns of a `CounterDetails` row after `CounterID`: `MachineName`, `ObjectName`,
/// `CounterName`, `CounterType`, `DefaultScale`, `InstanceName`, `InstanceIndex`, `ParentName`,
/// `TimeBaseA`, `TimeBaseB`.
pub type DetailsRow<'a> = [SqlValue<'a>; 10];

/// Formats a time `yyyy-mm-dd hh:mm:ss.mmm` ([`TimeStyle::Sql`]); `None` out of the calendar's range.
pub fn format_sql_time(t: LogTime) -> Option<String> {
    t.to_system_time().map(|s| TimeStyle::Sql.format(&s))
}

/// Parses `yyyy-mm-dd hh:mm:ss.mmm` (or `:mmm`, or no milliseconds), ignoring trailing spaces and
/// NULs (the padding of a `char(24)` column).
pub fn parse_sql_time(text: &[u8]) -> Option<LogTime> {
    let end = text
        .iter()
        .rposition(|&b| b != b' ' && b != 0)
        .map_or(0, |p| p + 1);
    let t = text.get(..end)?;
    let mut p = super::pdh_csv_row::Digits { s: t, i: 0 };
    let year = p.number(4, 4)?;
    p.expect(b'-')?;
    let month = p.number(2, 2)?;
    p.expect(b'-')?;
    let day = p.number(2, 2)?;
    p.expect(b' ')?;
    let hour = p.number(2, 2)?;
    p.expect(b':')?;
    let minute = p.number(2, 2)?;
    p.expect(b':')?;
    let second = p.number(2, 2)?;
    let millis = match p.peek() {
        Some(b'.' | b':') => {
            p.i += 1;
            p.number(3, 3)?
        }
        _ => 0,
    };
    if p.i != t.len() {
        return None;
    }
    LogTime::from_parts(year, month, day, hour, minute, second, millis)
}

fn describe(v: &SqlValue<'_>) -> String {
    match v {
        SqlValue::Null => "NULL".into(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(r) => r.to_string(),
        SqlValue::Text(t) => super::error::quote(t),
        SqlValue::Blob(b) => format!("a blob of {} bytes", b.len()),
    }
}

fn integer(v: &SqlValue<'_>, column: &str) -> Result<Option<i64>, String> {
    match *v {
        SqlValue::Null => Ok(None),
        SqlValue::Integer(i) => Ok(Some(i)),
        SqlValue::Real(r) if r.fract() == 0.0 && r.abs() < 9.0e15 => Ok(Some(r as i64)),
        SqlValue::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .map(Some)
            .ok_or_else(|| format!("{column} is not an integer: {}", describe(v))),
        _ => Err(format!("{column} is not an integer: {}", describe(v))),
    }
}

/// A 32-bit half, signed (`int`) or unsigned.
fn half(v: &SqlValue<'_>, column: &str) -> Result<Option<u32>, String> {
    match integer(v, column)? {
        None => Ok(None),
        Some(i) if (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(&i) => Ok(Some(i as u32)),
        Some(i) => Err(format!("{column} {i} does not fit in 32 bits")),
    }
}

/// Splits a 64-bit value into the `A` (low) and `B` (high) halves as signed 32-bit integers.
pub fn split_halves(v: i64) -> (i64, i64) {
    (
        i64::from(v as u64 as u32 as i32),
        i64::from(((v as u64) >> 32) as u32 as i32),
    )
}

fn join_halves(a: u32, b: u32) -> i64 {
    ((u64::from(b) << 32) | u64::from(a)) as i64
}

/// Decodes the columns of a `CounterData` row into its UTC time and its cell.
///
/// The cell is [`Cell::Raw`] when the four raw columns are set (with `CounterValue` as its value),
/// [`Cell::Value`] when only `CounterValue` is, [`Cell::Blank`] when neither is.
pub fn decode_data_row(row: &DataRow<'_>) -> Result<(LogTime, Cell), String> {
    let [time, value, fa, fb, sa, sb, multi] = row;
    let t = match time {
        SqlValue::Text(t) => parse_sql_time(t),
        _ => None,
    }
    .ok_or_else(|| {
        format!(
            "CounterDateTime {} is not a time yyyy-mm-dd hh:mm:ss.mmm",
            describe(time)
        )
    })?;
    let value = match *value {
        SqlValue::Null => None,
        SqlValue::Integer(i) => Some(i as f64),
        SqlValue::Real(r) if r.is_finite() => Some(r),
        SqlValue::Text(s) => match super::pdh_csv_row::parse_value(s) {
            Ok(v) => v,
            Err(()) => return Err(format!("CounterValue {} is not a number", describe(value))),
        },
        _ => {
            return Err(format!(
                "CounterValue {} is not a finite number",
                describe(value)
            ))
        }
    };
    let halves = [
        half(fa, "FirstValueA")?,
        half(fb, "FirstValueB")?,
        half(sa, "SecondValueA")?,
        half(sb, "SecondValueB")?,
    ];
    let cell = match halves {
        [None, None, None, None] => value.map_or(Cell::Blank, Cell::Value),
        [Some(a), Some(b), Some(c), Some(d)] => {
            let multi = match integer(multi, "MultiCount")? {
                None => 1,
                Some(m) if (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(&m) => m as u32,
                Some(m) => return Err(format!("MultiCount {m} does not fit in 32 bits")),
            };
            Cell::Raw(
                RawCell {
                    status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                    raw: RawCounter::new(join_halves(a, b), join_halves(c, d)).with_multi(multi),
                },
                value,
            )
        }
        _ => {
            return Err(
                "the raw columns FirstValueA/B and SecondValueA/B are only partly set".into(),
            )
        }
    };
    Ok((t, cell))
}

fn text<'a>(v: &SqlValue<'a>, column: &str) -> Result<Option<&'a str>, String> {
    match *v {
        SqlValue::Null => Ok(None),
        SqlValue::Text(t) => std::str::from_utf8(t)
            .map(|s| Some(s.trim_end_matches(['\0', ' '])))
            .map_err(|_| format!("{column} is not valid UTF-8: {}", describe(v))),
        _ => Err(format!("{column} is not text: {}", describe(v))),
    }
}

/// The type stored for a column without raw data (a PDH-CSV column): its value is shown as is.
pub const COOKED_TYPE: CounterType = CounterType::PERF_COUNTER_LARGE_RAWCOUNT;

/// The columns of a `CounterDetails` row that store a log column, the inverse of
/// [`decode_details_row`]: each name of the path in its own column (`MachineName` with its `\\`),
/// `InstanceIndex` the path's `#n` (`NULL` without one), the time base in two halves (`NULL` for
/// none). Parent and index are stored only with an instance, as a path writes them.
#[derive(Clone, Debug, PartialEq)]
pub struct DetailsColumns<'a> {
    /// `MachineName`: `\\machine`, or empty for the local machine.
    pub machine: String,
    /// `ObjectName`.
    pub object: &'a str,
    /// `CounterName`.
    pub counter: &'a str,
    /// `CounterType` ([`COOKED_TYPE`] for a column without counter information).
    pub counter_type: i64,
    /// `DefaultScale`.
    pub default_scale: i64,
    /// `InstanceName`.
    pub instance: Option<&'a str>,
    /// `InstanceIndex`.
    pub index: Option<i64>,
    /// `ParentName`.
    pub parent: Option<&'a str>,
    /// `TimeBaseA` and `TimeBaseB`.
    pub time_base: Option<(i64, i64)>,
}

impl<'a> DetailsColumns<'a> {
    /// The columns that store `c`.
    pub fn of(c: &'a LogCounter) -> Self {
        let p = &c.path;
        let instance = p.instance.as_deref();
        DetailsColumns {
            machine: p
                .machine
                .as_deref()
                .map_or(String::new(), |m| format!("\\\\{m}")),
            object: &p.object,
            counter: &p.counter,
            counter_type: i64::from(c.info.map_or(COOKED_TYPE, |i| i.counter_type).0),
            default_scale: c.info.map_or(0, |i| i64::from(i.default_scale)),
            instance,
            index: instance.and(p.index).map(i64::from),
            parent: instance.and(p.parent.as_deref()),
            time_base: c
                .info
                .filter(|i| i.time_base != 0)
                .map(|i| split_halves(i.time_base)),
        }
    }

    /// The row as SQLite would hand it back to [`decode_details_row`].
    pub fn row(&self) -> DetailsRow<'_> {
        let text = |t: Option<&'a str>| t.map_or(SqlValue::Null, |t| SqlValue::Text(t.as_bytes()));
        let int = |i: Option<i64>| i.map_or(SqlValue::Null, SqlValue::Integer);
        [
            SqlValue::Text(self.machine.as_bytes()),
            SqlValue::Text(self.object.as_bytes()),
            SqlValue::Text(self.counter.as_bytes()),
            SqlValue::Integer(self.counter_type),
            SqlValue::Integer(self.default_scale),
            text(self.instance),
            int(self.index),
            text(self.parent),
            int(self.time_base.map(|t| t.0)),
            int(self.time_base.map(|t| t.1)),
        ]
    }
}

/// Decodes the columns of a `CounterDetails` row into a log column.
///
/// The parsed path is built from the columns as they are, never from a path string read back:
/// `InstanceName` is the instance name verbatim (`C:/mnt#2`, `/mnt/data`, `foo (x86)` stay whole,
/// whatever `/`, `#`, `(` or `)` they hold), `ParentName` the parent, and `#n` comes from
/// `InstanceIndex` alone; an `InstanceIndex` of 0 (or `NULL`) is the first instance of its name (no
/// `#n`). The column's written name is the path formatted as `PdhMakeCounterPath` does. Refused:
/// an empty object or counter name, and a `\` in the machine, object or counter name (the
/// separator of every path).
pub fn decode_details_row(row: &DetailsRow<'_>) -> Result<LogCounter, String> {
    let [machine, object, counter, ty, scale, instance, index, parent, tba, tbb] = row;
    let machine = text(machine, "MachineName")?
        .map(|m| m.trim_start_matches('\\'))
        .filter(|m| !m.is_empty());
    let object = text(object, "ObjectName")?.ok_or("ObjectName is NULL")?;
    let counter = text(counter, "CounterName")?.ok_or("CounterName is NULL")?;
    for (column, name) in [("ObjectName", object), ("CounterName", counter)] {
        if name.is_empty() {
            return Err(format!("{column} is empty"));
        }
    }
    for (column, name) in [
        ("MachineName", machine.unwrap_or_default()),
        ("ObjectName", object),
        ("CounterName", counter),
    ] {
        if name.contains('\\') {
            return Err(format!(
                "{column} {} holds a \\, which separates the names of a counter path",
                super::error::quote(name.as_bytes())
            ));
        }
    }
    let counter_type = integer(ty, "CounterType")?.unwrap_or(0);
    let counter_type = u32::try_from(counter_type)
        .or_else(|_| i32::try_from(counter_type).map(|v| v as u32))
        .map_err(|_| format!("CounterType {counter_type} does not fit in 32 bits"))?;
    let default_scale = integer(scale, "DefaultScale")?.unwrap_or(0);
    let default_scale = i32::try_from(default_scale)
        .map_err(|_| format!("DefaultScale {default_scale} is out of range"))?;
    let instance = text(instance, "InstanceName")?.filter(|i| !i.is_empty());
    // Index 0 is the first instance of a name, written without `#0` in a path.
    let index = match integer(index, "InstanceIndex")? {
        None | Some(0) => None,
        Some(i) => {
            Some(u32::try_from(i).map_err(|_| format!("InstanceIndex {i} is out of range"))?)
        }
    };
    let parent = text(parent, "ParentName")?.filter(|p| !p.is_empty());
    let time_base = match (half(tba, "TimeBaseA")?, half(tbb, "TimeBaseB")?) {
        (Some(a), Some(b)) => join_halves(a, b),
        (Some(a), None) => i64::from(a),
        _ => 0,
    };
    let mut path = CounterPath::new(object, counter);
    path.machine = machine.map(str::to_owned);
    if let Some(i) = instance {
        path.instance = Some(i.to_owned());
        path.parent = parent.map(str::to_owned);
        path.index = index;
    }
    Ok(LogCounter::new(
        path,
        Some(CounterInfo {
            counter_type: CounterType(counter_type),
            default_scale,
            time_base,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let t = LogTime::from_parts(2013, 2, 19, 18, 50, 17, 123).unwrap();
        assert_eq!(format_sql_time(t).unwrap(), "2013-02-19 18:50:17.123");
        for s in [
            &b"2013-02-19 18:50:17.123"[..],
            b"2013-02-19 18:50:17:123",
            b"2013-02-19 18:50:17.123\0",
            b"2013-02-19 18:50:17.123 ",
        ] {
            assert_eq!(parse_sql_time(s), Some(t));
        }
        assert_eq!(
            parse_sql_time(b"2013-02-19 18:50:17"),
            LogTime::from_parts(2013, 2, 19, 18, 50, 17, 0)
        );
        for bad in [
            &b"2013-2-19 18:50:17.123"[..],
            b"",
            b"2013-02-19T18:50:17.123",
            b"2013-02-30 00:00:00.000",
        ] {
            assert_eq!(parse_sql_time(bad), None);
        }
    }

    #[test]
    fn raw_halves() {
        for v in [
            0i64,
            1,
            -1,
            i64::MAX,
            i64::MIN,
            0x1_8000_0000,
            132290312439883752,
        ] {
            let (a, b) = split_halves(v);
            assert!(i32::try_from(a).is_ok() && i32::try_from(b).is_ok());
            let row: DataRow = [
                SqlValue::Text(b"2024-01-01 00:00:00.000"),
                SqlValue::Null,
                SqlValue::Integer(a),
                SqlValue::Integer(b),
                SqlValue::Integer(a),
                SqlValue::Integer(b),
                SqlValue::Null,
            ];
            let (_, cell) = decode_data_row(&row).unwrap();
            let raw = cell.raw().unwrap().raw;
            assert_eq!((raw.first, raw.second, raw.multi_count), (v, v, 1));
        }
        // The unsigned reading of a low half.
        let row: DataRow = [
            SqlValue::Text(b"2024-01-01 00:00:00.000"),
            SqlValue::Real(2.5),
            SqlValue::Integer(0xFFFF_FFFF),
            SqlValue::Integer(0),
            SqlValue::Integer(10),
            SqlValue::Integer(0),
            SqlValue::Integer(3),
        ];
        let (_, cell) = decode_data_row(&row).unwrap();
        assert_eq!(cell.value(), Some(2.5));
        assert_eq!(
            cell.raw().unwrap().raw,
            RawCounter::new(0xFFFF_FFFF, 10).with_multi(3)
        );
    }

    #[test]
    fn bad_rows() {
        let base: DataRow = [
            SqlValue::Text(b"2024-01-01 00:00:00.000"),
            SqlValue::Null,
            SqlValue::Null,
            SqlValue::Null,
            SqlValue::Null,
            SqlValue::Null,
            SqlValue::Null,
        ];
        assert_eq!(decode_data_row(&base).unwrap().1, Cell::Blank);
        let with = |i: usize, v| {
            let mut r = base;
            r[i] = v;
            decode_data_row(&r).unwrap_err()
        };
        assert_eq!(
            with(0, SqlValue::Integer(5)),
            "CounterDateTime 5 is not a time yyyy-mm-dd hh:mm:ss.mmm"
        );
        assert_eq!(
            with(1, SqlValue::Real(f64::NAN)),
            "CounterValue NaN is not a finite number"
        );
        assert_eq!(
            with(2, SqlValue::Integer(1)),
            "the raw columns FirstValueA/B and SecondValueA/B are only partly set"
        );
        assert_eq!(
            with(3, SqlValue::Integer(1 << 40)),
            "FirstValueB 1099511627776 does not fit in 32 bits"
        );
        assert_eq!(
            with(2, SqlValue::Blob(b"xy")),
            "FirstValueA is not an integer: a blob of 2 bytes"
        );
    }

    #[test]
    fn details() {
        let row: DetailsRow = [
            SqlValue::Text(br"\\HOST"),
            SqlValue::Text(b"Process"),
            SqlValue::Text(b"% Processor Time"),
            SqlValue::Integer(0x2041_0500),
            SqlValue::Integer(0),
            SqlValue::Text(b"svchost"),
            SqlValue::Integer(2),
            SqlValue::Null,
            SqlValue::Integer(10_000_000),
            SqlValue::Integer(0),
        ];
        let c = decode_details_row(&row).unwrap();
        assert_eq!(c.name, r"\\HOST\Process(svchost#2)\% Processor Time");
        assert_eq!(c.info.unwrap().time_base, 10_000_000);
        let mut bad = row;
        bad[2] = SqlValue::Text(br"a\b");
        assert_eq!(
            decode_details_row(&bad).unwrap_err(),
            r#"CounterName "a\\b" holds a \, which separates the names of a counter path"#
        );
        bad[2] = SqlValue::Text(b"");
        assert_eq!(
            decode_details_row(&bad).unwrap_err(),
            "CounterName is empty"
        );
        bad[2] = SqlValue::Null;
        assert_eq!(decode_details_row(&bad).unwrap_err(), "CounterName is NULL");
    }
}
