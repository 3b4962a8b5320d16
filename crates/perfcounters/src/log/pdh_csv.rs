//! PDH-CSV 4.0 and PDH-TSV 4.0, byte for byte as typeperf writes them.
//!
//! ```text
//! \r\n
//! "(PDH-CSV 4.0)","\\HOST\Processor(_Total)\% Processor Time"\r\n
//! "11/20/2019 23:01:11.527","3.125000"\r\n
//! ```
//!
//! * every field is wrapped in double quotes (a quote inside a field is doubled); fields are separated by `,`
//!   (CSV) or TAB (TSV); lines end with CRLF;
//! * typeperf starts its output with an empty line, then the header; the header's first cell is exactly
//!   `(PDH-CSV 4.0)` (relog and Performance Monitor add a time-zone suffix; typeperf does not);
//! * the time column is local time `MM/DD/YYYY HH:MM:SS.mmm`, 24-hour, zero-padded;
//! * values have six fixed decimals (`"176361472.000000"`);
//! * a value that could not be computed is written as `" "` (a single space), the placeholder Performance
//!   Monitor and relog use for a missing sample, so that every row keeps one cell per column.

use std::io::{self, Write};

use crate::snapshot::SystemTime;
use crate::time_text::TimeStyle;

use super::error::LogError;
use super::model::{LogHeader, LogTime, LogWriter, Record, RecordEncoder, TimeZone, ValueRows};
use super::pdh_csv_digits::{ascii20, digits20, fraction_digits20, put_digits};

/// Which separator the log uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvFlavor {
    /// Comma-separated, header cell `(PDH-CSV 4.0)`.
    Csv,
    /// Tab-separated, header cell `(PDH-TSV 4.0)`.
    Tsv,
}

impl CsvFlavor {
    pub(crate) fn separator(self) -> u8 {
        match self {
            CsvFlavor::Csv => b',',
            CsvFlavor::Tsv => b'\t',
        }
    }

    /// The first header cell, without quotes.
    pub fn header_cell(self) -> &'static str {
        match self {
            CsvFlavor::Csv => "(PDH-CSV 4.0)",
            CsvFlavor::Tsv => "(PDH-TSV 4.0)",
        }
    }
}

/// The header cell a zone is written back as: `(PDH-CSV 4.0) (name)(bias)`, or `(PDH-CSV 4.0) (name`
/// for a zone cut off before its bias.
pub fn format_cell(flavor: CsvFlavor, zone: Option<&TimeZone>) -> String {
    match zone {
        None => flavor.header_cell().to_owned(),
        Some(TimeZone {
            name,
            bias: Some(b),
            ..
        }) => format!("{} ({name})({b})", flavor.header_cell()),
        Some(TimeZone {
            name, bias: None, ..
        }) => format!("{} ({name}", flavor.header_cell()),
    }
}

/// How values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ValueStyle {
    /// Six fixed decimals, `"176361472.000000"`, as typeperf writes them.
    #[default]
    Fixed6,
    /// C's `%.20g` with three-digit exponents (`78.80082537392173947`, `6.9494827586206889356e-005`),
    /// as relog and Performance Monitor on Windows 10 and later write them. Twenty significant digits
    /// are more than the 17 any `f64` needs, so reading the value back gives the same `f64`.
    Precise,
}

/// Writes PDH-CSV / PDH-TSV rows.
#[derive(Debug)]
pub struct PdhCsvWriter<W: Write> {
    out: W,
    flavor: CsvFlavor,
    style: ValueStyle,
    leading_blank_line: bool,
    line: Vec<u8>,
}

impl<W: Write> PdhCsvWriter<W> {
    /// A writer of the given flavor, as typeperf writes: a leading empty line, six decimals.
    pub fn new(out: W, flavor: CsvFlavor) -> Self {
        PdhCsvWriter {
            out,
            flavor,
            style: ValueStyle::Fixed6,
            leading_blank_line: true,
            line: Vec::with_capacity(256),
        }
    }

    /// A writer as relog writes: no leading empty line, values in [`ValueStyle::Precise`].
    pub fn relog(out: W, flavor: CsvFlavor) -> Self {
        PdhCsvWriter {
            style: ValueStyle::Precise,
            leading_blank_line: false,
            ..Self::new(out, flavor)
        }
    }

    /// Writes the leading empty line and the header: the format cell, then one cell per counter path
    /// (machine-qualified, one per expanded instance).
    pub fn write_header<S: AsRef<str>>(&mut self, paths: &[S]) -> io::Result<()> {
        self.write_header_cell(self.flavor.header_cell(), paths)
    }

    /// Writes the header with `first_cell` as its first cell (`(PDH-CSV 4.0) (zone)(bias)`), preceded
    /// by an empty line in typeperf's style.
    pub fn write_header_cell<S: AsRef<str>>(
        &mut self,
        first_cell: &str,
        paths: &[S],
    ) -> io::Result<()> {
        self.line.clear();
        if self.leading_blank_line {
            self.line.extend_from_slice(b"\r\n");
        }
        push_quoted(&mut self.line, first_cell);
        for p in paths {
            self.line.push(self.flavor.separator());
            push_quoted(&mut self.line, p.as_ref());
        }
        self.line.extend_from_slice(b"\r\n");
        self.out.write_all(&self.line)
    }

    /// Writes one data row: the local time, then one cell per value (`None` → `" "`).
    pub fn write_row(&mut self, local_time: &SystemTime, values: &[Option<f64>]) -> io::Result<()> {
        self.write_row_iter(local_time, values.iter().copied())
    }

    /// Like [`write_row`](Self::write_row), with the values from an iterator.
    pub fn write_row_iter(
        &mut self,
        local_time: &SystemTime,
        values: impl Iterator<Item = Option<f64>>,
    ) -> io::Result<()> {
        self.line.clear();
        push_row(
            &mut self.line,
            self.flavor.separator(),
            self.style,
            local_time,
            values,
        );
        self.out.write_all(&self.line)
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Appends one data row to `line`: the quoted local time, then one quoted cell per value (`None` →
/// `" "`), separated by `sep`, ended by CRLF.
fn push_row(
    line: &mut Vec<u8>,
    sep: u8,
    style: ValueStyle,
    local_time: &SystemTime,
    values: impl Iterator<Item = Option<f64>>,
) {
    line.push(b'"');
    TimeStyle::Pdh.push(local_time, line);
    line.push(b'"');
    if style == ValueStyle::Precise {
        push_precise_cells(line, sep, values);
    } else {
        for v in values {
            match v {
                Some(v) => {
                    line.extend_from_slice(&[sep, b'"']);
                    push_fixed6(line, v);
                    line.push(b'"');
                }
                None => line.extend_from_slice(&[sep, b'"', b' ', b'"']),
            }
        }
    }
    line.extend_from_slice(b"\r\n");
}

/// Room made at a time for [`push_precise_cells`]: about 170 cells of a percentage.
const PRECISE_ROOM: usize = 4096;

/// Appends one cell per value to `line`, each preceded by `sep`, in [`ValueStyle::Precise`]
/// (`None` → `" "`).
///
/// Each cell is written where it goes: the line is lengthened by [`PRECISE_ROOM`] bytes (zeros)
/// whenever fewer than [`PRECISE_BUF`] are left after the last cell, and cut back to the cells'
/// end once at the end, so a cell costs neither a length check of its own nor the zeroing of
/// more than it writes. (Copied there from the stack, a cell was loaded across the pieces it had
/// just been stored in.)
fn push_precise_cells(line: &mut Vec<u8>, sep: u8, values: impl Iterator<Item = Option<f64>>) {
    let mut end = line.len();
    for v in values {
        if line.len() < end + PRECISE_BUF {
            line.resize(end + PRECISE_ROOM, 0);
        }
        let Some(cell) = line
            .get_mut(end..end + PRECISE_BUF)
            .and_then(|c| <&mut [u8; PRECISE_BUF]>::try_from(c).ok())
        else {
            break;
        };
        cell[0] = sep;
        cell[1] = b'"';
        let at = match v {
            Some(v) => match write_common(cell, 2, v) {
                Some(at) => at,
                None => write_precise(cell, 2, v),
            },
            None => {
                cell[2] = b' ';
                3
            }
        };
        cell[at] = b'"';
        end += at + 1;
    }
    line.truncate(end);
}

/// `MM/DD/YYYY HH:MM:SS.mmm`, as typeperf writes its time column ([`TimeStyle::Pdh`]).
pub fn format_time(t: &SystemTime) -> String {
    TimeStyle::Pdh.format(t)
}

/// A value with six fixed decimals; negative zero is written as zero and non-finite values as `" "`.
pub fn format_value(v: f64) -> String {
    let mut out = Vec::new();
    push_fixed6(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

fn push_fixed6(line: &mut Vec<u8>, v: f64) {
    use std::io::Write as _;
    if !v.is_finite() {
        line.push(b' ');
        return;
    }
    let v = if v == 0.0 { 0.0 } else { v };
    // Writing into a Vec cannot fail.
    let _ = write!(line, "{v:.6}");
}

/// A value the way C's `printf("%.20g")` of the Microsoft C runtime writes it (three-digit exponents):
/// see [`ValueStyle::Precise`]. Negative zero is written as `0`, non-finite values as `" "`.
pub fn format_precise(v: f64) -> String {
    let mut buf = [0u8; PRECISE_BUF];
    let n = write_precise(&mut buf, 0, v);
    String::from_utf8(buf[..n].to_vec()).unwrap_or_default()
}

/// The bytes [`write_precise`] needs from where it starts (+ 2 for a cell's separator and
/// quote, and its closing quote): the value is 27 bytes at most (`-d.` and 19 digits and `e-308`;
/// `-0.000` and 20 digits), but the digits are copied 20 at a time, and writing the fraction of
/// `-1234567890123456789.5` reaches 42 bytes from the start.
const PRECISE_BUF: usize = 48;

/// Writes `v` as [`format_precise`] does into `buf` from `at` (2 at most) and returns where it
/// ends. The value is assembled on the stack, its digits copied in blocks of a fixed size (what
/// they write beyond the value is overwritten or cut off), and the line extended once.
fn write_precise(buf: &mut [u8; PRECISE_BUF], at: usize, v: f64) -> usize {
    const P: i32 = 20;
    if let Some(end) = write_common(buf, at, v) {
        return end;
    }
    let mut p = at;
    if !v.is_finite() {
        buf[p] = b' ';
        return p + 1;
    }
    if v == 0.0 {
        // Negative zero too: it is no different as a counter value, and SQL stores it as 0.
        buf[p] = b'0';
        return p + 1;
    }
    if v < 0.0 {
        buf[p] = b'-';
        p += 1;
    }
    let a = v.abs();
    // An integer of at most 19 digits: all its digits, exactly (raw counts, byte counts); those
    // below 2^63 are [`write_common`]'s, and from 2^63 (above 2^53) every double is an integer.
    if (9_223_372_036_854_775_808.0..1e19).contains(&a) {
        return p + put_digits(&mut buf[p..], a as u64);
    }
    let (digits, exp) = digits20(a);
    // The digits and room to copy 20 bytes from any of them.
    let mut ext = [b'0'; 40];
    ext[..20].copy_from_slice(&digits);
    // The last significant digit (the first is never 0).
    let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(0);
    if !(-4..P).contains(&exp) {
        buf[p] = ext[0];
        buf[p + 1] = b'.';
        buf[p + 2..p + 22].copy_from_slice(&ext[1..21]);
        p += if last > 0 { 2 + last } else { 1 };
        let e = exp.unsigned_abs();
        buf[p..p + 5].copy_from_slice(&[
            b'e',
            if exp < 0 { b'-' } else { b'+' },
            b'0' + (e / 100 % 10) as u8,
            b'0' + (e / 10 % 10) as u8,
            b'0' + (e % 10) as u8,
        ]);
        p + 5
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        buf[p..p + 20].copy_from_slice(&ext[..20]);
        p += int_len;
        if last >= int_len {
            buf[p] = b'.';
            buf[p + 1..p + 21].copy_from_slice(&ext[int_len..int_len + 20]);
            p += 2 + last - int_len;
        }
        p
    } else {
        let zeros = (-exp - 1) as usize;
        buf[p..p + 5].copy_from_slice(b"0.000");
        p += 2 + zeros;
        buf[p..p + 20].copy_from_slice(&ext[..20]);
        p + last + 1
    }
}

/// [`write_precise`] for the values of most logs, small enough to be inlined where cells are
/// written: an integer from 1 to 2^63 (its digits) or a value with a fraction whose magnitude is
/// from 10^-3 to 2^53 (20 significant digits); `None` for any other value (zero, non-finite,
/// larger or smaller), which [`write_precise`] writes.
#[inline(always)]
fn write_common(buf: &mut [u8; PRECISE_BUF], at: usize, v: f64) -> Option<usize> {
    let a = v.abs();
    let p = at + usize::from(v < 0.0);
    buf[at] = b'-';
    let (out, rest) = buf.split_at_mut(p);
    // Below 2^63 the round trip through `i64` tells an integer (one instruction each way, where
    // `u64` takes several).
    if a < 9_223_372_036_854_775_808.0 {
        let i = a as i64;
        if i as f64 == a && i != 0 {
            return Some(out.len() + put_digits(rest, i as u64));
        }
    }
    let (d, exp) = fraction_digits20(a)?;
    Some(out.len() + put_fraction(rest, d, exp))
}

/// Writes `%.20g` of a value of 20 significant digits `d` (`10^19 ≤ d < 10^20`) whose first digit
/// has the decimal exponent `exp` (-3 to 15: a value with a fraction, below 2^53) at the start of
/// `out` (28 bytes at least, all of which may be written) and returns its length:
/// `12.345678000000000557`, `0.0012345678901234567891`, trailing zeros of the fraction dropped.
///
/// The 20 digits are taken in registers as three groups of 4, 8 and 8 (`ascii20`) and each is
/// stored once where it goes: the point goes into the group it falls in (masks and a shift of 64
/// bits), and the groups after it are stored a byte further on; `0.`, `0.0` or `0.00` is stored
/// before the groups of a value below 1. Nothing stored is loaded back (digits stored in pieces
/// and loaded back whole stall the load: `perf`, docs/benchmarks.md).
fn put_fraction(out: &mut [u8], d: u128, exp: i32) -> usize {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let [first, middle, last] = ascii20(d);
    // Trailing zeros are the highest bytes that are '0' (`first` holds four digits).
    let significant = if last != ZEROS {
        20 - ((last ^ ZEROS).leading_zeros() / 8) as usize
    } else if middle != ZEROS {
        12 - ((middle ^ ZEROS).leading_zeros() / 8) as usize
    } else {
        4 - ((first ^ 0x3030_3030).leading_zeros() / 8 - 4) as usize
    };
    let mut put = |at: usize, group: u64| out[at..at + 8].copy_from_slice(&group.to_le_bytes());
    if exp < 0 {
        // `0.`, then -exp - 1 zeros (0 to 2), then the digits.
        let s = (1 - exp).unsigned_abs() as usize;
        put(0, 0x3030_3030_3030_2E30);
        put(s, first);
        put(s + 4, middle);
        put(s + 12, last);
        return s + significant;
    }
    // The point after the first k digits (1 to 16), unless no digit follows it.
    let k = exp.unsigned_abs() as usize + 1;
    if significant <= k {
        put(0, first);
        put(4, middle);
        put(12, last);
        return k;
    }
    match k {
        1..=3 => {
            put(0, with_point(first, k));
            put(5, middle);
            put(13, last);
        }
        4 => {
            put(0, first | 0x2E << 32);
            put(5, middle);
            put(13, last);
        }
        5..=11 => {
            put(0, first);
            put(4, with_point(middle, k - 4));
            // The group's last digit, pushed out of its 64 bits by the point.
            put(12, middle >> 56);
            put(13, last);
        }
        12 => {
            put(0, first);
            put(4, middle);
            put(12, 0x2E);
            put(13, last);
        }
        _ => {
            put(0, first);
            put(4, middle);
            put(12, with_point(last, k - 12));
            put(20, last >> 56);
        }
    }
    significant + 1
}

/// The ASCII digits `group` (the first in the lowest byte) with a point after the first `j` (1 to
/// 7); the last digit is shifted out.
fn with_point(group: u64, j: usize) -> u64 {
    let head = u64::MAX >> (64 - 8 * j);
    (group & head) | 0x2E << (8 * j) | (group & !head) << 8
}

fn push_quoted(line: &mut Vec<u8>, field: &str) {
    line.push(b'"');
    for &b in field.as_bytes() {
        if b == b'"' {
            line.push(b'"');
        }
        line.push(b);
    }
    line.push(b'"');
}

/// A [`LogWriter`] of PDH-CSV / PDH-TSV in relog's style: the header cell carries the log's time zone
/// (`(PDH-CSV 4.0) (Pacific Standard Time)(480)`), values are [`ValueStyle::Precise`], blanks are
/// `" "`.
#[derive(Debug)]
pub struct PdhCsvLogWriter<W: Write> {
    writer: PdhCsvWriter<W>,
    flavor: CsvFlavor,
    rows: PdhCsvRowEncoder,
}

/// The rows of a [`PdhCsvLogWriter`]: a record's local time and values as one line of bytes,
/// independent of the writer (its [`RecordEncoder`], which [`copy`](crate::log::copy) runs on
/// other threads).
#[derive(Clone, Debug)]
pub struct PdhCsvRowEncoder {
    separator: u8,
    style: ValueStyle,
    /// The zone whose local time the records are written in (the header's).
    zone: Option<TimeZone>,
    target: String,
}

impl PdhCsvRowEncoder {
    /// The calendar time a row shows for the UTC instant `time`: records hold UTC instants, the log
    /// shows the local time of its zone, as Windows writes it.
    fn local_time(&self, time: LogTime) -> Result<SystemTime, LogError> {
        let local = self.zone.as_ref().map_or(time, |z| z.to_local(time));
        local.to_system_time().ok_or_else(|| {
            LogError::usage(
                &self.target,
                format!("time stamp {} is out of range", time.0),
            )
        })
    }
}

impl RecordEncoder for PdhCsvRowEncoder {
    fn encode(&self, record: &Record, out: &mut Vec<u8>) -> Result<(), LogError> {
        let time = self.local_time(record.time)?;
        push_row(
            out,
            self.separator,
            self.style,
            &time,
            record.cells.iter().map(|c| c.value()),
        );
        Ok(())
    }

    /// The rows straight from the values: NaN is a blank, written `" "` as a record's blank is.
    fn encode_values(&self, rows: &ValueRows, out: &mut Vec<u8>) -> Result<(), LogError> {
        for (i, &time) in rows.times.iter().enumerate() {
            let time = self.local_time(time)?;
            push_row(
                out,
                self.separator,
                self.style,
                &time,
                rows.row(i).iter().map(|&v| (!v.is_nan()).then_some(v)),
            );
        }
        Ok(())
    }
}

impl<W: Write> PdhCsvLogWriter<W> {
    /// A writer to `out`; `target` names it in errors.
    pub fn new(out: W, flavor: CsvFlavor, target: &str) -> Self {
        let writer = PdhCsvWriter::relog(out, flavor);
        PdhCsvLogWriter {
            rows: PdhCsvRowEncoder {
                separator: flavor.separator(),
                style: writer.style,
                zone: None,
                target: target.to_owned(),
            },
            writer,
            flavor,
        }
    }

    /// The same writer writing times in the local time of `zone`, for records appended to a log
    /// whose header (and zone) is already written. [`write_header`](LogWriter::write_header) sets
    /// the zone from the header it writes.
    pub fn with_time_zone(mut self, zone: Option<TimeZone>) -> Self {
        self.rows.zone = zone;
        self
    }

    /// The same writer with another value style.
    pub fn with_style(mut self, style: ValueStyle) -> Self {
        self.writer.style = style;
        self.rows.style = style;
        self
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.writer.into_inner()
    }

    fn io(&self, e: io::Error) -> LogError {
        LogError::io(&self.rows.target, None, e)
    }
}

impl<W: Write> LogWriter for PdhCsvLogWriter<W> {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        let cell = format_cell(self.flavor, header.time_zone.as_ref());
        self.rows.zone.clone_from(&header.time_zone);
        let names: Vec<&str> = header.counters.iter().map(|c| c.name.as_str()).collect();
        self.writer
            .write_header_cell(&cell, &names)
            .map_err(|e| self.io(e))
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        let mut line = std::mem::take(&mut self.writer.line);
        line.clear();
        let r = self.rows.encode(record, &mut line);
        let r = r.and_then(|()| self.write_encoded(&line));
        self.writer.line = line;
        r
    }

    fn finish(&mut self) -> Result<(), LogError> {
        self.writer.flush().map_err(|e| self.io(e))
    }

    fn checkpoint(&mut self) -> Result<(), LogError> {
        self.finish()
    }

    fn record_encoder(&self) -> Option<Box<dyn RecordEncoder>> {
        Some(Box::new(self.rows.clone()))
    }

    fn write_encoded(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        self.writer.out.write_all(bytes).map_err(|e| self.io(e))
    }
}

#[cfg(test)]
// Literals are written digit for digit as Windows writes them.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    fn time() -> SystemTime {
        SystemTime {
            year: 2019,
            month: 11,
            day_of_week: 3,
            day: 20,
            hour: 23,
            minute: 1,
            second: 11,
            milliseconds: 527,
        }
    }

    #[test]
    fn csv_bytes() {
        let mut w = PdhCsvWriter::new(Vec::new(), CsvFlavor::Csv);
        w.write_header(&[
            r"\\CEBALLOS\Process(whatsapp)\Working Set",
            r"\\CEBALLOS\Memory\Available Bytes",
        ])
        .unwrap();
        w.write_row(&time(), &[Some(176361472.0), Some(-0.0)])
            .unwrap();
        w.write_row(&time(), &[None, Some(388.8737174)]).unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(
            out,
            "\r\n\"(PDH-CSV 4.0)\",\"\\\\CEBALLOS\\Process(whatsapp)\\Working Set\",\"\\\\CEBALLOS\\Memory\\Available Bytes\"\r\n\
             \"11/20/2019 23:01:11.527\",\"176361472.000000\",\"0.000000\"\r\n\
             \"11/20/2019 23:01:11.527\",\" \",\"388.873717\"\r\n"
        );
    }

    #[test]
    fn precise_values_like_msvc_printf() {
        for (v, text) in [
            (78.80082537392173947, "78.80082537392173947"),
            (6.9494827586206889356e-5, "6.9494827586206889356e-005"),
            (0.98958333333333259, "0.98958333333333259318"),
            (858865664.0, "858865664"),
            (0.0, "0"),
            (-0.0, "0"),
            (-2.5, "-2.5"),
            (1e20, "1e+020"),
            (12345678901234567890.0, "12345678901234567168"),
            (0.0001, "0.00010000000000000000479"),
            (1e-5, "1.0000000000000000818e-005"),
        ] {
            assert_eq!(format_precise(v), text);
            assert_eq!(text.parse::<f64>().unwrap(), v);
        }
    }

    /// The formatting of values before it was assembled on the stack (a piece at a time into
    /// the line), kept as the oracle of [`write_precise`].
    fn push_precise_reference(line: &mut Vec<u8>, v: f64) {
        use std::io::Write as _;
        const P: i32 = 20;
        if !v.is_finite() {
            line.push(b' ');
            return;
        }
        if v == 0.0 {
            // Negative zero too: it is no different as a counter value, and SQL stores it as 0.
            line.push(b'0');
            return;
        }
        let a = v.abs();
        if a < 1e19 && (a as u64) as f64 == a {
            // An integer of at most 19 digits: all its digits, exactly (raw counts, byte counts).
            if v < 0.0 {
                line.push(b'-');
            }
            line.extend_from_slice((a as u64).to_string().as_bytes());
            return;
        }
        let (digits, exp) = crate::log::pdh_csv_digits::digits20_slow(v.abs());
        if v < 0.0 {
            line.push(b'-');
        }
        if !(-4..P).contains(&exp) {
            let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(0);
            line.push(digits[0]);
            if last > 0 {
                line.push(b'.');
                line.extend_from_slice(digits.get(1..=last).unwrap_or(&[]));
            }
            let _ = write!(
                line,
                "e{}{:03}",
                if exp < 0 { '-' } else { '+' },
                exp.unsigned_abs()
            );
        } else if exp >= 0 {
            let int_len = exp as usize + 1;
            line.extend_from_slice(digits.get(..int_len).unwrap_or(&[]));
            let frac = digits.get(int_len..).unwrap_or(&[]);
            if let Some(last) = frac.iter().rposition(|&d| d != b'0') {
                line.push(b'.');
                line.extend_from_slice(frac.get(..=last).unwrap_or(&[]));
            }
        } else {
            line.extend_from_slice(b"0.");
            for _ in 0..(-exp - 1) {
                line.push(b'0');
            }
            let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(0);
            line.extend_from_slice(digits.get(..=last).unwrap_or(&[]));
        }
    }

    proptest::proptest! {
        #[test]
        fn precise_equals_reference(
            bits in proptest::prelude::any::<u64>(),
            small in 0u64..(1 << 20),
            kind in 0u8..10,
        ) {
            let v = match kind {
                // Any bit pattern: subnormals, huge and tiny exponents, NaN and infinities.
                0 => f64::from_bits(bits),
                // Subnormals.
                1 => f64::from_bits(bits & ((1 << 52) - 1)),
                // Integers near 2^53 and fractions beside them.
                2 => 9_007_199_254_740_992.0 + (small as f64 - 524_288.0) * 0.5,
                // Around 10^19, where integers leave their own path.
                3 => 1e19 + (small as f64 - 524_288.0) * 2048.0,
                // Counter-like values: rates and percentages.
                4 => (bits >> 11) as f64 / (small + 1) as f64,
                // Around 2^63, where integers leave the round trip through i64.
                5 => 9_223_372_036_854_775_808.0 + (small as f64 - 524_288.0) * 1024.0,
                // Six-decimal percentages and fractions from 10^-3 to 1, as logs hold them.
                7 => (bits % 100_000_000) as f64 / 1e6,
                8 => (bits % 1_000_000) as f64 / 1e6 + 1e-3,
                _ => f64::from_bits((bits & !(0x7FF << 52)) | ((1023 + small % 40 - 20) << 52)),
            };
            for v in [v, -v] {
                let mut want = Vec::new();
                push_precise_reference(&mut want, v);
                let got = format_precise(v);
                proptest::prop_assert_eq!(got.as_bytes(), &want[..], "{:e}", v);
                // Inside a row too: separator, quotes and the bytes before.
                let mut line = b"x".to_vec();
                push_row(&mut line, b',', ValueStyle::Precise, &time(), [Some(v), None].into_iter());
                let mut row = b"x\"".to_vec();
                TimeStyle::Pdh.push(&time(), &mut row);
                row.extend_from_slice(b"\",\"");
                row.extend_from_slice(&want);
                row.extend_from_slice(b"\",\" \"\r\n");
                proptest::prop_assert_eq!(line, row);
            }
        }
    }

    /// Values with a fraction from 10^-3 to 2^53, the short path of [`put_fraction`]: every binary
    /// exponent, so the point falls after each of the 1 to 16 digits of the integer part, after
    /// `0.`, `0.0` and `0.00`, and within each group of digits; mantissas at random and at the
    /// ends, with trailing zeros from none to many (few significant bits).
    #[test]
    fn fractions_at_every_exponent() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut checked = 0;
        for e2 in -10i64..53 {
            for i in 0..3_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let fraction = match i % 4 {
                    0 => x & ((1 << 52) - 1),
                    // Few significant bits: short decimal fractions and trailing zeros.
                    1 => (x & ((1 << 52) - 1)) >> (x % 52) << (x % 52),
                    2 => i,
                    _ => ((1 << 52) - 1) - i,
                };
                let bits = (((1023 + e2) as u64) << 52) | fraction;
                let v = f64::from_bits(bits);
                if v < 1e-3 || v.fract() == 0.0 {
                    continue;
                }
                let mut want = Vec::new();
                push_precise_reference(&mut want, v);
                assert_eq!(format_precise(v).as_bytes(), &want[..], "{v:e}");
                checked += 1;
            }
        }
        assert!(checked > 150_000, "{checked}");
    }

    #[test]
    fn integers_every_digit() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Integers below 10^19 take their own path: every digit, as %.20g writes them.
        for i in 0..20_000u32 {
            let r = next();
            let n = (r >> (11 + r % 53)) << (r % 11);
            let v = n as f64;
            let want = format!("{v:.0}");
            assert_eq!(format_precise(v), want, "{v:e}");
            if i % 2 == 0 && n > 0 {
                assert_eq!(format_precise(-v), format!("-{want}"));
            }
        }
        assert_eq!(
            format_precise(9_999_999_999_999_997_952.0),
            "9999999999999997952"
        );
        assert_eq!(format_precise(1e19), "10000000000000000000");
        for (v, text) in [
            (9_223_372_036_854_775_808.0, "9223372036854775808"),
            (9_223_372_036_854_774_784.0, "9223372036854774784"),
            (-9_223_372_036_854_775_808.0, "-9223372036854775808"),
            (9_223_372_036_854_777_856.0, "9223372036854777856"),
        ] {
            assert_eq!(format_precise(v), text);
        }
    }

    #[test]
    fn relog_style_header() {
        let mut w = PdhCsvWriter::relog(Vec::new(), CsvFlavor::Csv);
        w.write_header_cell("(PDH-CSV 4.0) (UTC)(0)", &[r"\\H\A\B"])
            .unwrap();
        w.write_row(&time(), &[Some(0.5)]).unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner()).unwrap(),
            "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\H\\A\\B\"\r\n\"11/20/2019 23:01:11.527\",\"0.5\"\r\n"
        );
    }

    #[test]
    fn tsv_and_quotes() {
        let mut w = PdhCsvWriter::new(Vec::new(), CsvFlavor::Tsv);
        w.write_header(&["\\\\H\\A(\"q\")\\B"]).unwrap();
        w.write_row(
            &SystemTime {
                year: 2020,
                month: 4,
                day: 2,
                hour: 7,
                minute: 37,
                second: 58,
                milliseconds: 154,
                ..Default::default()
            },
            &[Some(f64::NAN)],
        )
        .unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(out, "\r\n\"(PDH-TSV 4.0)\"\t\"\\\\H\\A(\"\"q\"\")\\B\"\r\n\"04/02/2020 07:37:58.154\"\t\" \"\r\n");
    }
}
