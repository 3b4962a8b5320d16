//! The rows of a chunk of PDH-CSV / PDH-TSV text read in one pass, straight into the layout the
//! consumer wants (row after row for `copy`, column after column for Arrow), with no record of
//! cells in between.
//!
//! The scan takes the rows Windows writes: every cell quoted (relog) or none (typeperf's time
//! stamps, hand-made logs), values in `strtod`'s plain forms. A value cell's number is read where
//! it stands ([`plain_number`]) and its end is where the number ends; any other cell is delimited
//! by one `memchr` search (a quoted cell's closing quote, an unquoted one's separator or line end)
//! and read by [`parse_value`], the rule every path shares. At anything else (a quote that the
//! `csv` crate would read as text, an escaped quote, a row of the wrong shape, a value that is not
//! a number, a time stamp that does not parse, one of typeperf's closing messages) it stops and
//! says where: the chunk's parser (`pdh_csv_chunks`) hands the rest of the chunk to the `csv`
//! crate and [`super::pdh_csv_row::RowParser`], which read it, and word its errors, exactly as
//! before. The scan never makes an error of its own, so every message (line, column, text) is the
//! one the `csv` path writes.
//!
//! Why not the `csv` crate for every row: its record reader copies each cell into a record and
//! keeps their bounds, then `RowParser` looks each cell up again and checks its form before
//! parsing it. In a `perf` profile of a CSV → CSV conversion of a log of six-decimal values
//! (docs/benchmarks.md, "Whole runs") that was 332 samples in `read_record` and 629 in `parse_value`
//! and `lexical-core` of the whole process's 3,033; the same file has the profile after.

use super::pdh_csv_digits::POW10_64;
use super::pdh_csv_row::{parse_csv_time, parse_value, RowParser};
use super::time::LogTime;

/// A row cell that is no column's, or a column not selected: its value is not parsed.
const UNUSED: u32 = u32::MAX;

/// The shortest time stamp, `M/D/YYYY H:MM:SS`.
const SHORTEST_TIME: usize = 16;

/// What a scan read: `times.len()` rows, their values laid out as asked; and where it stopped
/// when it did not reach the chunk's end.
#[derive(Debug)]
pub(crate) struct Scanned {
    /// The rows' local time stamps.
    pub(crate) times: Vec<LogTime>,
    /// One value per selected column and row (NaN for no value), row after row or, when
    /// `by_column`, column after column.
    pub(crate) values: Vec<f64>,
    /// The layout of `values`.
    pub(crate) by_column: bool,
    /// `None` when every row of the chunk was read; else where the `csv` path takes over.
    pub(crate) stop: Option<Resume>,
}

/// Where the `csv` path resumes when the scan stopped: at `at`, the start of a record (the
/// chunk's start, or the start of the last row scanned, never a line that starts with a
/// byte-order mark's first byte), reading and dropping the first record when `skip_one` (it is
/// the last row scanned, read again so that the `csv` reader starts where one was known to
/// start).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Resume {
    pub(crate) at: usize,
    pub(crate) skip_one: bool,
}

/// The slot of each row cell after the time stamp: the index of its value in a row of
/// [`RowParser::width`] values, or [`UNUSED`].
fn slots(parser: &RowParser) -> Vec<u32> {
    let mut slots = vec![UNUSED; parser.row_cells.saturating_sub(1)];
    let cell_of = |column: usize| {
        parser
            .cells
            .as_deref()
            .map_or(Some(column), |c| c.get(column).copied())
    };
    let mut set = |slot: usize, column: usize| {
        if let Some(s) = cell_of(column).and_then(|k| slots.get_mut(k)) {
            *s = u32::try_from(slot).unwrap_or(UNUSED);
        }
    };
    match &parser.selected {
        None => (0..parser.columns).for_each(|c| set(c, c)),
        Some(selected) => selected.iter().enumerate().for_each(|(s, &c)| set(s, c)),
    }
    slots
}

/// Reads the rows of `chunk` (whole records, starting at the start of one) until its end or the
/// first row the scan does not take (see the module's documentation). `line_feeds` is the number
/// of line feeds in `chunk` when known (the cutting thread counts them), which the scan counts
/// otherwise to make room for the rows.
pub(crate) fn scan(
    parser: &RowParser,
    chunk: &[u8],
    by_column: bool,
    line_feeds: Option<usize>,
) -> Scanned {
    let width = parser.width();
    // Room for every row: no more than the lines, nor than the rows the bytes can hold (each has
    // a time stamp and a separator per cell), so the values never take more than 8 bytes per
    // byte of text.
    let min_row = SHORTEST_TIME + parser.row_cells.saturating_sub(1 + parser.trailing_skipped);
    let lines = line_feeds.unwrap_or_else(|| memchr::memchr_iter(b'\n', chunk).count()) + 1;
    let capacity = lines.min(chunk.len() / min_row + 1);
    let mut values = vec![f64::NAN; capacity * width];
    let mut times = Vec::with_capacity(capacity);
    let (row_step, column_step) = if by_column { (1, capacity) } else { (width, 1) };
    let slots = slots(parser);
    let row = Row {
        parser,
        chunk,
        slots: &slots,
        column_step,
    };
    let mut pos = 0usize;
    let mut last: Option<usize> = None;
    let mut stop = None;
    loop {
        // Blank lines (and a CRLF's `\n`) between records, as the `csv` crate skips them.
        while matches!(chunk.get(pos), Some(b'\r' | b'\n')) {
            pos += 1;
        }
        if pos >= chunk.len() {
            break;
        }
        let r = times.len();
        let read = if r < capacity {
            let out = values.get_mut(r * row_step..).unwrap_or(&mut []);
            row.read(pos, out)
        } else {
            None
        };
        match read {
            Some((time, end)) => {
                times.push(time);
                last = Some(pos);
                pos = end;
            }
            None => {
                stop = Some(Resume {
                    at: last.unwrap_or(0),
                    skip_one: last.is_some(),
                });
                break;
            }
        }
    }
    let n = times.len();
    if by_column && n < capacity {
        for c in 1..width {
            values.copy_within(c * capacity..c * capacity + n, c * n);
        }
    }
    values.truncate(n * width);
    Scanned {
        times,
        values,
        by_column,
        stop,
    }
}

/// One row's reading: the chunk, where each cell's value goes.
struct Row<'a> {
    parser: &'a RowParser,
    chunk: &'a [u8],
    slots: &'a [u32],
    /// The distance in `values` between two slots of a row.
    column_step: usize,
}

impl Row<'_> {
    /// Whether `b` (`None`: the chunk's end) ends a cell.
    #[inline]
    fn ends_cell(&self, b: Option<&u8>) -> bool {
        match b {
            None | Some(b'\r' | b'\n') => true,
            Some(&b) => b == self.parser.separator,
        }
    }

    /// Reads the row that starts at `pos` into `out` (its first slot at 0, the next ones
    /// `column_step` apart): its time stamp and where it ends (its line end, or the chunk's end).
    /// `None` for a row the scan does not take.
    fn read(&self, mut pos: usize, out: &mut [f64]) -> Option<(LogTime, usize)> {
        let (time, end) = self.cell(pos)?;
        let time = parse_csv_time(time)?;
        pos = end;
        let mut cells = 1usize;
        while self.chunk.get(pos) == Some(&self.parser.separator) {
            let slot = *self.slots.get(cells - 1)?;
            cells += 1;
            pos += 1;
            if slot == UNUSED {
                pos = self.cell(pos)?.1;
                continue;
            }
            let (value, end) = self.value(pos)?;
            if let Some(v) = value {
                *out.get_mut(slot as usize * self.column_step)? = v;
            }
            pos = end;
        }
        let expected = self.parser.row_cells;
        (cells == expected || cells + self.parser.trailing_skipped == expected)
            .then_some((time, pos))
    }

    /// The cell at `pos`: its text (a quoted one's without its quotes) and the position after it
    /// (its separator or line end). `None` where the `csv` crate reads more than plain cells: an
    /// escaped quote, text after a closing quote, a quote inside an unquoted cell, no closing
    /// quote.
    #[inline]
    fn cell(&self, pos: usize) -> Option<(&[u8], usize)> {
        let rest = self.chunk.get(pos..)?;
        if let Some(quoted) = rest.strip_prefix(b"\"") {
            let close = memchr::memchr(b'"', quoted)?;
            let end = pos + close + 2;
            self.ends_cell(self.chunk.get(end))
                .then(|| (quoted.get(..close).unwrap_or(&[]), end))
        } else {
            let sep = self.parser.separator;
            let len = memchr::memchr3(sep, b'\r', b'\n', rest).unwrap_or(rest.len());
            let text = rest.get(..len)?;
            memchr::memchr(b'"', text)
                .is_none()
                .then_some((text, pos + len))
        }
    }

    /// The value cell at `pos` (`None` inside for no value) and the position after it.
    #[inline]
    fn value(&self, pos: usize) -> Option<(Option<f64>, usize)> {
        let quoted = self.chunk.get(pos) == Some(&b'"');
        let start = pos + usize::from(quoted);
        if let Some((v, len)) = plain_number(self.chunk.get(start..)?) {
            let end = start + len;
            if quoted {
                if self.chunk.get(end) == Some(&b'"') && self.ends_cell(self.chunk.get(end + 1)) {
                    return Some((Some(v), end + 1));
                }
            } else if self.ends_cell(self.chunk.get(end)) {
                return Some((Some(v), end));
            }
        }
        let (text, end) = self.cell(pos)?;
        parse_value(text).ok().map(|v| (v, end))
    }
}

/// 10^0 … 10^22, the powers of ten a double holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The number at the start of `text` in the form `-?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?` (the
/// forms Windows' `printf` writes, `%.20g`'s three-digit exponents included), correctly rounded,
/// and its length; `None` when `text` does not start so, or the number is not finite.
///
/// The digits are read once, into an integer `m` and a power of ten. When `m` has at most 19
/// digits, is at most 2^53 and the power is within 10^±22 (a six-decimal `12.345678`, a count, a
/// byte total), both are exact doubles and one multiplication or division rounds correctly
/// (Clinger's fast path): no other work. Other numbers (relog's 20 significant digits, large
/// exponents) go to `lexical-core`'s Eisel–Lemire parser on the same bytes, correctly rounded as
/// well. Neither is `str::parse::<f64>`: that wants a `&str` (a UTF-8 check per cell), and over
/// the 1.4 million cells of relog's 20-digit values in a standalone loop `lexical-core` took 73 ms
/// where `str::from_utf8` + `str::parse::<f64>` took 150 ms, with identical bits (docs/benchmarks.md).
/// The property tests below hold both paths to `str::parse::<f64>` bit for bit.
#[inline]
pub(crate) fn plain_number(text: &[u8]) -> Option<(f64, usize)> {
    let negative = text.first() == Some(&b'-');
    let mut i = usize::from(negative);
    if let Some((v, end)) = short_number(text, i) {
        return Some((if negative { -v } else { v }, end));
    }
    let digit = |i: usize| {
        text.get(i)
            .map(|b| b.wrapping_sub(b'0'))
            .filter(|&d| d <= 9)
    };
    let mut m = 0u64;
    // Digits after the first non-zero one (those of `m` while at most 19).
    let mut significant = 0u32;
    let read = |d: u8, m: &mut u64, significant: &mut u32| {
        if *m != 0 || d != 0 {
            *significant += 1;
            if *significant <= 19 {
                *m = *m * 10 + u64::from(d);
            }
        }
    };
    // Once a significant digit is read, runs of up to eight digits are taken at once
    // ([`digit_run`]) while they keep `m` within 19 digits; the byte loop does the rest.
    let run = |i: &mut usize, m: &mut u64, significant: &mut u32| -> usize {
        if *m == 0 {
            return 0;
        }
        match digit_run(text, *i) {
            Some((n, value)) if n > 0 && *significant + n as u32 <= 19 => {
                *m = *m * POW10_64[n] + value;
                *significant += n as u32;
                *i += n;
                n
            }
            _ => 0,
        }
    };
    let int_start = i;
    loop {
        if run(&mut i, &mut m, &mut significant) == 8 {
            continue;
        }
        let Some(d) = digit(i) else { break };
        read(d, &mut m, &mut significant);
        i += 1;
    }
    if i == int_start {
        return None;
    }
    let mut fraction = 0i32;
    if text.get(i) == Some(&b'.') {
        i += 1;
        loop {
            let n = run(&mut i, &mut m, &mut significant);
            fraction = fraction.saturating_add(n as i32);
            if n == 8 {
                continue;
            }
            let Some(d) = digit(i) else { break };
            read(d, &mut m, &mut significant);
            fraction = fraction.saturating_add(1);
            i += 1;
        }
    }
    let mut exp = 0i32;
    if matches!(text.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let negative_exp = text.get(j) == Some(&b'-');
        if matches!(text.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let exp_start = j;
        while let Some(d) = digit(j) {
            exp = exp.saturating_mul(10).saturating_add(i32::from(d));
            j += 1;
        }
        if j == exp_start {
            return None;
        }
        if negative_exp {
            exp = -exp;
        }
        i = j;
    }
    let power = exp.saturating_sub(fraction);
    let v = if m == 0 {
        0.0
    } else if significant <= 19 && m <= 1 << 53 && (-22..=22).contains(&power) {
        let p = POW10.get(power.unsigned_abs() as usize)?;
        if power < 0 {
            m as f64 / p
        } else {
            m as f64 * p
        }
    } else {
        lexical_core::parse::<f64>(text.get(usize::from(negative)..i)?).ok()?
    };
    let v = if negative { -v } else { v };
    v.is_finite().then_some((v, i))
}

/// The number without sign at `text[at..]` when it has at most 15 digits, with or without a
/// point (at most seven after it) and no exponent (`12.345678`, `0.5`, `1234567890`, `1.`), and
/// eight bytes at least follow each run of digits: its value and where it ends; `None` for
/// anything else, which [`plain_number`] reads digit by digit. Two or three [`digit_run`]s read
/// it, and the value is what that reading gives, by the same rule: at most 15 digits make an
/// integer below 2^53 and the power of ten is exact, so one division rounds correctly (Clinger's
/// fast path).
#[inline]
fn short_number(text: &[u8], at: usize) -> Option<(f64, usize)> {
    let (n, mut int) = digit_run(text, at)?;
    if n == 0 {
        return None;
    }
    let (mut digits, mut point) = (n, at + n);
    if n == 8 {
        // Up to seven more integer digits (a byte count, a large raw value).
        let (k, more) = digit_run(text, point)?;
        if k == 8 {
            return None;
        }
        int = int * POW10_64[k] + more;
        digits += k;
        point += k;
    }
    match text.get(point) {
        Some(b'.') => {
            let (k, fraction) = digit_run(text, point + 1)?;
            let end = point + 1 + k;
            if k == 8 || digits + k > 15 || matches!(text.get(end), Some(b'e' | b'E')) {
                return None;
            }
            let m = int * POW10_64[k] + fraction;
            Some((m as f64 / POW10[k], end))
        }
        Some(b'e' | b'E') => None,
        _ => Some((int as f64, point)),
    }
}

/// The digits that start `text[at..]`, up to eight, at once: how many (0 to 8) and their value;
/// `None` when fewer than eight bytes are left (the caller reads those one at a time).
///
/// The eight bytes are one little-endian word (the first byte lowest). A byte is not a digit when
/// adding 0x46 or subtracting 0x30 sets its top bit; carries and borrows run only from a non-digit
/// to the bytes after it, so the lowest byte flagged is the first non-digit. The digits before it,
/// moved to the top of the word with zeros (as leading digits 0) below them, are combined in
/// three multiplications: pairs, then fours, then the eight (the conversion of Lemire's
/// fast_float). A `12.345678` reads its six decimals in one step where the byte loop took six.
#[inline]
fn digit_run(text: &[u8], at: usize) -> Option<(usize, u64)> {
    let bytes: [u8; 8] = text.get(at..at + 8)?.try_into().ok()?;
    let word = u64::from_le_bytes(bytes);
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let flagged = (word.wrapping_add(0x4646_4646_4646_4646) | word.wrapping_sub(ZEROS))
        & 0x8080_8080_8080_8080;
    let n = (flagged.trailing_zeros() / 8) as usize;
    if n == 0 {
        return Some((0, 0));
    }
    // The n digits' values in the top n bytes, zeros below: the eight digits 0…0d₁…dₙ.
    let v = word.wrapping_sub(ZEROS) << (8 * (8 - n));
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let v = ((v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32))
        + ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some((n, v))
}

#[cfg(test)]
// Literals are written digit for digit as Windows writes them.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use crate::log::pdh_csv_row::parse_value;

    /// What `str::parse::<f64>` reads from the whole of `text` when finite, as bits.
    fn std_reads(text: &str) -> Option<u64> {
        let v: f64 = text.parse().ok()?;
        v.is_finite().then_some(v.to_bits())
    }

    /// What the scan reads from the whole of `text`, as bits: the number, which is also what
    /// every other path reads from the cell ([`parse_value`]).
    fn ours(text: &str) -> Option<u64> {
        let (v, n) = plain_number(text.as_bytes())?;
        assert_eq!(parse_value(&text.as_bytes()[..n]), Ok(Some(v)), "{text}");
        (n == text.len()).then_some(v.to_bits())
    }

    #[test]
    fn forms() {
        assert_eq!(plain_number(b"12.345678\""), Some((12.345678, 9)));
        assert_eq!(plain_number(b"-0.000000,"), Some((-0.0, 9)));
        assert_eq!(
            plain_number(b"6.9494827586206889356e-005\r\n"),
            Some((6.9494827586206889356e-5, 26))
        );
        assert_eq!(
            plain_number(b"18446744073709551616"),
            Some((18446744073709551616.0, 20))
        );
        assert_eq!(plain_number(b"1.\""), Some((1.0, 2)));
        assert_eq!(plain_number(b"1e5x"), Some((1e5, 3)));
        for text in [
            &b""[..],
            b"-",
            b".5",
            b" 1",
            b"1e",
            b"1e+",
            b"1e999",
            b"-1e400",
            b"inf",
            b"NaN",
            b"\"1\"",
        ] {
            assert_eq!(
                plain_number(text),
                None,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        // Zeros before the first significant digit are not among the 19 digits of the fast path.
        assert_eq!(
            plain_number(b"0.00000000000000000001234567890123456789"),
            Some((1.234567890123456789e-20, 40))
        );
    }

    #[test]
    fn digit_runs() {
        assert_eq!(digit_run(b"345678\",\"", 0), Some((6, 345_678)));
        assert_eq!(digit_run(b"12345678", 0), Some((8, 12_345_678)));
        assert_eq!(digit_run(b"00000001x", 0), Some((8, 1)));
        assert_eq!(digit_run(b"9/999999", 0), Some((1, 9)));
        assert_eq!(digit_run(b"x1234567", 0), Some((0, 0)));
        // Bytes just below '0' and above '9', and with the top bit set, stop a run.
        for stop in [b'/', b':', 0x80, 0xB0, 0xC0, 0xFF, 0] {
            let mut t = *b"1234567\0";
            t[7] = stop;
            assert_eq!(digit_run(&t, 0), Some((7, 1_234_567)), "{stop:#x}");
            let mut t = *b"12345678";
            t[3] = stop;
            assert_eq!(digit_run(&t, 0), Some((3, 123)), "{stop:#x}");
        }
        assert_eq!(digit_run(b"1234567", 0), None);
        assert_eq!(digit_run(b"x12345678", 1), Some((8, 12_345_678)));
        // Nineteen digits in runs, the twentieth by the byte loop (not among `m`'s digits).
        assert_eq!(
            plain_number(b"1234567890123456789.25\""),
            Some((1234567890123456789.25, 22))
        );
        assert_eq!(
            plain_number(b"0.1234567890123456789012345678\""),
            Some((0.1234567890123456789012345678, 30))
        );
    }

    fn parser(columns: usize) -> RowParser {
        RowParser {
            source: "t.csv".to_owned(),
            separator: b',',
            columns,
            crlf: true,
            cells: None,
            row_cells: columns + 1,
            trailing_skipped: 0,
            selected: None,
            names: vec![String::new(); columns],
        }
    }

    /// relog's rows and typeperf's are read whole, in both layouts; a row the scan does not take
    /// stops it at the last row read.
    #[test]
    fn rows_are_scanned() {
        let text = b"\"02/01/2014 00:19:44.718\",\"11.560571277026032\",\" \",\"3\"\r\n\
                     \r\n\
                     02/01/2014 00:19:45.718,-0.5,,6.9494827586206889356e-005\r\n";
        let t = |s| parse_csv_time(s).unwrap();
        let times = vec![t(b"02/01/2014 00:19:44.718"), t(b"02/01/2014 00:19:45.718")];
        let by_row = scan(&parser(3), text, false, None);
        assert_eq!(by_row.stop, None);
        assert_eq!(by_row.times, times);
        let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let (a, b, c, d, e) = (
            11.560571277026032,
            3.0,
            -0.5,
            6.9494827586206889356e-5,
            f64::NAN,
        );
        assert_eq!(bits(&by_row.values), bits(&[a, e, b, c, e, d]));
        let by_column = scan(&parser(3), text, true, None);
        assert_eq!(by_column.stop, None);
        assert_eq!(bits(&by_column.values), bits(&[a, c, e, e, b, d]));
        // Text after a closing quote in the second row, a row of two cells in the first.
        for (text, at, skip_one) in [
            (&b"02/01/2014 00:19:44,1,2,3\n02/01/2014 00:19:45,\"1\"x,2,3\n"[..], 0, true),
            (b"02/01/2014 00:19:44,1\n02/01/2014 00:19:45,1,2,3\n", 0, false),
            (b"02/01/2014 00:19:44,1,2,3\n\n02/01/2014 00:19:45,1,2,abc\n", 0, true),
            (b"\n02/01/2014 00:19:44,1,2,3\n02/01/2014 00:19:45,1,2,3\nExiting, please wait...\n", 27, true),
        ] {
            let s = scan(&parser(3), text, true, None);
            assert_eq!(s.stop, Some(Resume { at, skip_one }), "{}", String::from_utf8_lossy(text));
            assert_eq!(s.values.len(), 3 * s.times.len());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// Any double's texts (shortest, `{:e}`, `%.20g` as Windows writes it, six and two
        /// decimals, integers of its bits) read as `str::parse::<f64>` reads them, bit for bit.
        #[test]
        fn numbers_of_any_bits_read_as_std_reads_them(bits in proptest::prelude::any::<u64>()) {
            let v = f64::from_bits(bits);
            let int = bits >> (bits % 64);
            for text in [
                format!("{v}"),
                format!("{v:e}"),
                crate::log::pdh_csv::format_precise(v),
                format!("{v:.6}"),
                format!("{:.2}", v.abs() % 1e6),
                format!("{int}"),
                format!("-{int}.{}", bits % 1000),
            ] {
                proptest::prop_assert_eq!(ours(&text), std_reads(&text), "{}", text);
            }
        }

        /// Any text of the plain form reads as `str::parse::<f64>` reads it, up to where the form
        /// ends; a text not taken has no integer digit or is not a finite number.
        #[test]
        fn plain_texts_read_as_std_reads_them(
            text in "-?[0-9]{0,25}(\\.[0-9]{0,25})?([eE][-+]?[0-9]{0,4})?[\",x]?",
        ) {
            match plain_number(text.as_bytes()) {
                Some((v, n)) => {
                    proptest::prop_assert_eq!(Some(v.to_bits()), std_reads(&text[..n]), "{}", text);
                    proptest::prop_assert_eq!(ours(&text[..n]), Some(v.to_bits()), "{}", text);
                }
                None => {
                    let body = text.trim_end_matches(['"', ',', 'x']);
                    proptest::prop_assert!(
                        std_reads(body).is_none() || body.trim_start_matches('-').starts_with('.'),
                        "{} not read", text
                    );
                }
            }
        }

        /// A number followed by the rest of a row (eight bytes and more, so that the short form
        /// of [`short_number`] is taken where it applies) reads as the number alone.
        #[test]
        fn numbers_inside_a_row_read_as_std_reads_them(
            number in "-?[0-9]{1,17}(\\.[0-9]{0,9})?([eE][-+]?[0-9]{1,3})?",
            rest in "[\",\r\n x.eE+-][\",\r\n x0-9]{7,12}",
        ) {
            let text = format!("{number}{rest}");
            let read = plain_number(text.as_bytes()).map(|(v, n)| (v.to_bits(), n));
            let alone = std_reads(&number).map(|bits| (bits, number.len()));
            // A `.`, `e` or sign right after the number may make it longer or take it apart.
            if !rest.starts_with(['.', 'e', 'E', '+', '-']) {
                proptest::prop_assert_eq!(read, alone, "{}", text);
            } else if let Some((bits, n)) = read {
                proptest::prop_assert_eq!(Some(bits), std_reads(&text[..n]), "{}", text);
            }
        }
    }
}
