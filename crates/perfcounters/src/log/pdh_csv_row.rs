//! The rows of PDH-CSV / PDH-TSV logs: how one row of cells becomes a time stamp and values.
//!
//! The layer under both ways the reader ([`super::pdh_csv_read`]) parses rows, on the calling
//! thread and in chunks on the parsing threads (`pdh_csv_chunks`): the `csv` reader's settings
//! ([`csv_reader`]), a row's line ([`row_line`], [`Tracked`]), a row's shape against the header's
//! and its cells ([`RowParser`]), and the text forms of times and values ([`parse_csv_time`],
//! [`parse_value`]) that the SQL log's text cells and relog's `-b`/`-e` read too.

use std::io::{self, Read};

use super::error::{quote, Location, LogError};
use super::time::LogTime;

/// How a row becomes a record: the header's shape and the column selection.
#[derive(Debug, Clone)]
pub(crate) struct RowParser {
    pub(crate) source: String,
    pub(crate) separator: u8,
    /// Counter columns.
    pub(crate) columns: usize,
    /// Whether the header line ends in CRLF (see [`row_line`]).
    pub(crate) crlf: bool,
    /// The row cell (0 = the first counter cell) of each column, when some header cells are not
    /// counter paths and are skipped; `None` when every cell is a column.
    pub(crate) cells: Option<Vec<usize>>,
    /// Cells in a row: the time stamp and every header cell, skipped ones included.
    pub(crate) row_cells: usize,
    /// Cells a row may leave out at its end: the skipped header cells after the last column.
    pub(crate) trailing_skipped: usize,
    /// The columns parsed when only some are (`LogReader::select_columns`), in order: a row's
    /// values are theirs only. `None`: every column.
    pub(crate) selected: Option<Vec<usize>>,
    /// The counter names, for errors.
    pub(crate) names: Vec<String>,
}

/// A `csv` reader set up for PDH-CSV / PDH-TSV rows.
pub(crate) fn csv_reader<R: Read>(input: R, separator: u8) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(separator)
        .buffer_capacity(256 * 1024)
        .from_reader(input)
}

/// The line of the record `row` just read by a `csv` reader now at `after`, plus `lines` (the lines
/// before the reader's first byte). The `csv` crate counts a line when it consumes its `\n`: a
/// record ending in CRLF stops at the `\r`, so the reader's line after it is the record's own; a
/// record ending in LF consumes its `\n`, so the record was on the line before (unless it ended
/// without a line break). The style is taken from the header line. `lf` says whether the byte
/// before `after` is the `\n` (`None` when unknown: then a reader that counted no line since the
/// record's start ended without one, which misses blank lines skipped before the record).
pub(crate) fn row_line(
    crlf: bool,
    row: &csv::ByteRecord,
    after: &csv::Position,
    lines: u64,
    lf: Option<bool>,
) -> u64 {
    let start = row.position().map_or(0, |p| p.line());
    let after = after.line();
    let ended_by_lf = lf.unwrap_or(after > start);
    lines
        + if crlf || !ended_by_lf || after == 0 {
            after
        } else {
            after - 1
        }
}

/// A reader that keeps the last two pieces it handed out, so that the byte just before a `csv`
/// reader's position can be looked up (whether a record ended with a line feed, [`row_line`]): the
/// `csv` reader fills its buffer from this one only when it has consumed all of it, so the byte it
/// consumed last is in the last piece or the one before.
pub(crate) struct Tracked<R> {
    inner: R,
    /// (offset of the first byte, bytes), older first.
    pieces: [(u64, Vec<u8>); 2],
    read: u64,
}

impl<R> Tracked<R> {
    pub(crate) fn new(inner: R) -> Self {
        Tracked {
            inner,
            pieces: [(0, Vec::new()), (0, Vec::new())],
            read: 0,
        }
    }

    /// Whether the byte before offset `pos` is a line feed (`None`: not kept).
    pub(crate) fn lf_before(&self, pos: u64) -> Option<bool> {
        let at = pos.checked_sub(1)?;
        self.pieces.iter().find_map(|(start, bytes)| {
            let i = usize::try_from(at.checked_sub(*start)?).ok()?;
            bytes.get(i).map(|&b| b == b'\n')
        })
    }
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.pieces.swap(0, 1);
            let [_, newest] = &mut self.pieces;
            newest.0 = self.read;
            newest.1.clear();
            newest.1.extend_from_slice(buf.get(..n).unwrap_or(&[]));
            self.read += n as u64;
        }
        Ok(n)
    }
}

/// A `csv` crate error as a log error (the line when it names one).
pub(crate) fn csv_error(source: &str, e: csv::Error) -> LogError {
    let line = e.position().map(|p| p.line());
    let location = line.map(|line| Location::Text { line, column: None });
    LogError::new(source, location, e)
}

/// Parses a PDH-CSV time stamp `MM/DD/YYYY HH:MM:SS.mmm` (one- or two-digit month, day and hour;
/// milliseconds optional, one to three digits).
pub fn parse_csv_time(s: &[u8]) -> Option<LogTime> {
    let mut p = Digits { s, i: 0 };
    let month = p.number(1, 2)?;
    p.expect(b'/')?;
    let day = p.number(1, 2)?;
    p.expect(b'/')?;
    let year = p.number(4, 4)?;
    p.expect(b' ')?;
    let hour = p.number(1, 2)?;
    p.expect(b':')?;
    let minute = p.number(2, 2)?;
    p.expect(b':')?;
    let second = p.number(2, 2)?;
    let millis = if p.peek() == Some(b'.') {
        p.i += 1;
        let start = p.i;
        let v = p.number(1, 3)?;
        match p.i - start {
            1 => v * 100,
            2 => v * 10,
            _ => v,
        }
    } else {
        0
    };
    if p.i != s.len() {
        return None;
    }
    LogTime::from_parts(year, month, day, hour, minute, second, millis)
}

/// A cursor over the digits and separators of a fixed-form time stamp (PDH-CSV's, the SQL log's,
/// relog's `-b`/`-e`).
pub(crate) struct Digits<'a> {
    pub(crate) s: &'a [u8],
    pub(crate) i: usize,
}

impl Digits<'_> {
    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    pub(crate) fn expect(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.i += 1)
    }
    pub(crate) fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            match self.peek() {
                Some(d @ b'0'..=b'9') => {
                    v = v * 10 + u32::from(d - b'0');
                    self.i += 1;
                    n += 1;
                }
                _ => break,
            }
        }
        (n >= min).then_some(v)
    }
}

/// Parses a value cell: `Ok(None)` for a blank (`" "` or empty), `Ok(Some(v))` for a finite number.
#[inline]
pub(crate) fn parse_value(cell: &[u8]) -> Result<Option<f64>, ()> {
    if let Some(v) = small_integer(cell) {
        return Ok(Some(v));
    }
    if cell.iter().all(|&b| b == b' ') {
        return Ok(None);
    }
    // The forms Windows writes (`-`, digits, a point and digits, an exponent) are read by
    // `lexical-core` straight from the bytes: correctly rounded like `str::parse::<f64>`, and twice
    // as fast on relog's 20-digit values (no UTF-8 check either). Anything else goes to
    // `str::parse::<f64>`, which reads every form of C's `strtod` output, `e-005` included; it also
    // reads "inf" and "NaN", which no PDH log contains and which are rejected below.
    let v = if is_plain_number(cell) {
        lexical_core::parse::<f64>(cell).map_err(|_| ())?
    } else {
        let s = std::str::from_utf8(cell).map_err(|_| ())?;
        s.parse::<f64>().map_err(|_| ())?
    };
    if v.is_finite() {
        Ok(Some(v))
    } else {
        Err(())
    }
}

/// `-?[0-9]{1,15}`, the most common cell (counts, bytes, integers written by `%.20g`), read in one
/// pass: the value is exact (below 10^15 < 2^53), so it is what any correctly rounded parser reads.
/// The form check and `lexical-core` after it cost about 500 instructions per cell on average
/// (callgrind, the bench's cells); this path took 6.5 % off the parsing threads' instructions on
/// the bench's log, where half the cells are such integers. `None` for any other cell.
#[inline]
fn small_integer(cell: &[u8]) -> Option<f64> {
    let (negative, digits) = match cell.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, cell),
    };
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut v = 0u64;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    // Exact: v < 10^15.
    let f = v as f64;
    Some(if negative { -f } else { f })
}

/// Whether `cell` is `-?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?`: a number both `lexical-core` and
/// `str::parse::<f64>` read whole.
#[inline]
fn is_plain_number(cell: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let s = cell.strip_prefix(b"-").unwrap_or(cell);
    let int = digits(s);
    if int == 0 {
        return false;
    }
    let mut rest = s.get(int..).unwrap_or(&[]);
    if let Some(frac) = rest.strip_prefix(b".") {
        rest = frac.get(digits(frac)..).unwrap_or(&[]);
    }
    if let Some(exp) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exp = exp
            .strip_prefix(b"-")
            .or_else(|| exp.strip_prefix(b"+"))
            .unwrap_or(exp);
        let n = digits(exp);
        return n > 0 && n == exp.len();
    }
    rest.is_empty()
}

/// typeperf's closing lines, present when its console output was redirected to a file (the comma
/// of the first one splits it into two cells of a CSV).
fn is_typeperf_message(row: &csv::ByteRecord) -> bool {
    matches!(
        (row.len(), row.get(0), row.get(1)),
        (1, Some(b"Exiting, please wait..."), _)
            | (2, Some(b"Exiting"), Some(b" please wait..."))
            | (1, Some(b"The command completed successfully."), _)
    )
}

impl RowParser {
    /// Parses `row`, just read by a `csv` reader now at `after` that started `lines` lines into the
    /// text, into `out` (one value per column, left as it is for no value and for the columns not
    /// selected): the row's local time stamp, or `None` for one of typeperf's closing messages.
    pub(crate) fn parse(
        &self,
        row: &csv::ByteRecord,
        after: &csv::Position,
        lines: u64,
        lf: Option<bool>,
        out: &mut [f64],
    ) -> Result<Option<LogTime>, LogError> {
        if is_typeperf_message(row) {
            return Ok(None);
        }
        let source = self.source.as_str();
        let columns = self.columns;
        let line = row_line(self.crlf, row, after, lines, lf);
        let at = |column: u64| {
            Some(Location::Text {
                line,
                column: Some(column),
            })
        };
        let n = row.len();
        if n != self.row_cells && n + self.trailing_skipped != self.row_cells {
            let expected = self.row_cells;
            let skipped = match expected - 1 - columns {
                0 => String::new(),
                k => format!(" and {k} skipped"),
            };
            return Err(LogError::invalid(
                source,
                at(n.min(expected) as u64 + 1),
                format!(
                    "the row has {n} cells, the header {expected} (a time stamp and {columns} counters{skipped})"
                ),
            ));
        }
        let time_cell = row.get(0).unwrap_or(&[]);
        let local = parse_csv_time(time_cell).ok_or_else(|| {
            LogError::invalid(
                source,
                at(1),
                format!(
                    "{} is not a time stamp MM/DD/YYYY HH:MM:SS.mmm",
                    quote(time_cell)
                ),
            )
        })?;
        let cells = self.cells.as_deref();
        let value = |i: usize, out: &mut f64| -> Result<(), LogError> {
            let at_cell = cells.map_or(Some(i), |c| c.get(i).copied());
            let Some(cell) = at_cell.and_then(|c| row.get(c + 1)) else {
                return Ok(());
            };
            match parse_value(cell) {
                Ok(Some(v)) => *out = v,
                Ok(None) => {}
                Err(()) => {
                    return Err(LogError::invalid(
                        source,
                        at(at_cell.unwrap_or(i) as u64 + 2),
                        format!(
                            "{} is not a number ({})",
                            quote(cell),
                            self.names.get(i).map_or("", |c| c.as_str())
                        ),
                    ))
                }
            };
            Ok(())
        };
        match &self.selected {
            None => {
                for (i, out) in out.iter_mut().enumerate() {
                    value(i, out)?;
                }
            }
            Some(selected) => {
                for (out, &i) in out.iter_mut().zip(selected) {
                    value(i, out)?;
                }
            }
        }
        Ok(Some(local))
    }

    /// The values a row has: one per selected column.
    pub(crate) fn width(&self) -> usize {
        self.selected.as_ref().map_or(self.columns, Vec::len)
    }
}

#[cfg(test)]
// Literals are written digit for digit as Windows writes them.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(
            parse_csv_time(b"11/20/2019 23:01:11.527"),
            LogTime::from_parts(2019, 11, 20, 23, 1, 11, 527)
        );
        assert_eq!(
            parse_csv_time(b"4/2/2020 7:37:58.1"),
            LogTime::from_parts(2020, 4, 2, 7, 37, 58, 100)
        );
        assert_eq!(
            parse_csv_time(b"04/02/2020 07:37:58"),
            LogTime::from_parts(2020, 4, 2, 7, 37, 58, 0)
        );
        for bad in [
            &b"13/01/2020 00:00:00.000"[..],
            b"02/30/2020 00:00:00.000",
            b"02/01/2020 00:00:00.0000",
            b"02/01/2020 00:00:60.000",
            b"2020-02-01 00:00:00",
            b"",
            b"02/01/2020 00:00:00.000 ",
        ] {
            assert_eq!(
                parse_csv_time(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn values() {
        assert_eq!(parse_value(b" "), Ok(None));
        assert_eq!(parse_value(b""), Ok(None));
        assert_eq!(parse_value(b"176361472.000000"), Ok(Some(176361472.0)));
        assert_eq!(
            parse_value(b"6.9494827586206889356e-005"),
            Ok(Some(6.9494827586206889356e-5))
        );
        assert_eq!(
            parse_value(b"18446744073709551616"),
            Ok(Some(18446744073709551616.0))
        );
        assert_eq!(parse_value(b"-0.5"), Ok(Some(-0.5)));
        for bad in [
            &b"abc"[..],
            b"1,5",
            b"inf",
            b"NaN",
            b" 1",
            b"1e999",
            b"\xff",
        ] {
            assert_eq!(
                parse_value(bad),
                Err(()),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    proptest::proptest! {
        /// Values read as `str::parse::<f64>` reads them, bit for bit, and the same cells rejected.
        #[test]
        fn values_as_std_reads_them(
            cell in "-?[0-9]{0,25}(\\.[0-9]{0,25})?([eE][-+]?[0-9]{0,4})?|[-+.0-9eEnaiNfFI ]{0,12}",
            v in proptest::prelude::any::<f64>(),
        ) {
            let std = |s: &str| match s.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v.to_bits())),
                _ if s.bytes().all(|b| b == b' ') => Ok(None),
                _ => Err(()),
            };
            let ours = |s: &str| parse_value(s.as_bytes()).map(|v| v.map(f64::to_bits));
            proptest::prop_assert_eq!(ours(&cell), std(&cell), "{}", cell);
            let int = v.to_bits() >> (v.to_bits() % 64);
            for text in [
                format!("{v}"),
                format!("{v:e}"),
                crate::log::pdh_csv::format_precise(v),
                format!("{int}"),
                format!("-{int}"),
                format!("0{int}"),
            ] {
                proptest::prop_assert_eq!(ours(&text), std(&text), "{}", text);
            }
        }
    }
}
