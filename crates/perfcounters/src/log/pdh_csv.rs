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
    for v in values {
        match (v, style) {
            (Some(v), ValueStyle::Precise) => {
                // The whole cell on the stack, then one copy into the line.
                let mut cell = [0u8; PRECISE_BUF];
                cell[0] = sep;
                cell[1] = b'"';
                let end = write_precise(&mut cell, 2, v);
                cell[end] = b'"';
                extend_prefix(line, &cell, end + 1);
            }
            (Some(v), ValueStyle::Fixed6) => {
                line.extend_from_slice(&[sep, b'"']);
                push_fixed6(line, v);
                line.push(b'"');
            }
            (None, _) => line.extend_from_slice(&[sep, b'"', b' ', b'"']),
        }
    }
    line.extend_from_slice(b"\r\n");
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

/// The first 20 significant digits of `v` (> 0, finite), correctly rounded (ties to even), and the
/// decimal exponent of the first: `v ≈ d.ddd… × 10^exp`. Uses `core::fmt`'s exact formatting.
fn digits20_slow(v: f64) -> ([u8; 20], i32) {
    use std::io::Write as _;
    // `{:.19e}` is correctly rounded to 20 significant digits: "d.ddd…de±x".
    let mut buf = [0u8; 40];
    let mut cur = &mut buf[..];
    let _ = write!(cur, "{v:.19e}");
    let written = 40 - cur.len();
    let s = buf.get(..written).unwrap_or(&[]);
    let e_pos = s.iter().position(|&b| b == b'e').unwrap_or(s.len());
    let mantissa = s.get(..e_pos).unwrap_or(&[]);
    let exp: i32 = std::str::from_utf8(s.get(e_pos + 1..).unwrap_or(&[]))
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let mut digits = [b'0'; 20];
    for (d, &b) in digits
        .iter_mut()
        .zip(mantissa.iter().filter(|b| b.is_ascii_digit()))
    {
        *d = b;
    }
    (digits, exp)
}

/// The eight decimal digits of `n` (below 10^8, leading zeros included) as digit values 0–9, the
/// first in the lowest byte: both halves of four digits, then their pairs, then the digits, split
/// at once in the lanes of one `u64` (a multiplication by a reciprocal per split instead of a
/// division per pair).
fn eight_digits(n: u32) -> u64 {
    let n = u64::from(n);
    // Two 32-bit lanes of four digits each, the first four in the low lane.
    let x = (n / 10_000) | ((n % 10_000) << 32);
    // x / 100 in each lane (x · 10486 / 2^20 for x < 10^4), then four 16-bit lanes of two digits.
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = hundreds | ((x - hundreds * 100) << 16);
    // x / 10 in each lane (x · 103 / 2^10 for x < 100), then eight bytes of one digit.
    let tens = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | ((x - tens * 10) << 8)
}

/// `n` (below 10^8) as eight ASCII digits, the first in the lowest byte, shifted `skip` digits
/// (below 8) to the front; what is shifted in is `'0'`.
fn ascii8(n: u32, skip: u32) -> u64 {
    (eight_digits(n) >> (8 * skip)) | 0x3030_3030_3030_3030
}

/// Writes the decimal digits of `x` in ASCII at the start of `out` and returns how many (`0` has
/// none). Eight digits are stored at a time (the first group shifted past its leading zeros), so
/// up to eight bytes after the digits may be overwritten with `'0'`: `out` has 24 bytes at least.
fn put_digits(out: &mut [u8], x: u64) -> usize {
    const E8: u64 = 100_000_000;
    if x == 0 {
        return 0;
    }
    // The first group (one to eight digits) and how many groups of eight follow it.
    let (first, rest) = if x < E8 {
        (x, 0)
    } else if x < E8 * E8 {
        (x / E8, 1)
    } else {
        (x / (E8 * E8), 2)
    };
    // `first` > 0: at most seven leading zeros.
    let zeros = eight_digits(first as u32).trailing_zeros() / 8;
    let n = 8 - zeros as usize;
    out[..8].copy_from_slice(&ascii8(first as u32, zeros).to_le_bytes());
    match rest {
        0 => n,
        1 => {
            out[n..n + 8].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
            n + 8
        }
        _ => {
            out[n..n + 8].copy_from_slice(&ascii8((x / E8 % E8) as u32, 0).to_le_bytes());
            out[n + 8..n + 16].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
            n + 16
        }
    }
}

/// Writes `x` (below 10^c) as exactly `c` (1 to 19) ASCII digits, with leading zeros, at the start
/// of `out`; up to eight bytes after them may be overwritten with `'0'`.
fn put_padded(out: &mut [u8], x: u64, c: usize) {
    const E8: u64 = 100_000_000;
    // The first group has `h` digits (1 to 8), the groups after it eight each.
    let groups = c.div_ceil(8);
    let h = c - 8 * (groups - 1);
    let skip = (8 - h) as u32;
    match groups {
        1 => out[..8].copy_from_slice(&ascii8(x as u32, skip).to_le_bytes()),
        2 => {
            out[..8].copy_from_slice(&ascii8((x / E8) as u32, skip).to_le_bytes());
            out[h..h + 8].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
        }
        _ => {
            out[..8].copy_from_slice(&ascii8((x / (E8 * E8)) as u32, skip).to_le_bytes());
            out[h..h + 8].copy_from_slice(&ascii8((x / E8 % E8) as u32, 0).to_le_bytes());
            out[h + 8..h + 16].copy_from_slice(&ascii8((x % E8) as u32, 0).to_le_bytes());
        }
    }
}

/// [`digits20_slow`] with integer arithmetic, for the values counters have (`v` = m·2^e with the
/// exact expansion reachable in 128 bits): many times faster, because `core::fmt` computes 20
/// exact digits with big numbers (no crate writes `%.20g` exactly; this is the bottleneck of
/// writing relog's CSV, see docs/blg.md). `None` outside that range.
///
/// The integer part is written from a `u64` when it fits; the fraction f / 2^k gives as many
/// digits per 128-bit multiplication as fit (`10^c · f < 2^128`: 19 digits for k ≤ 64). The
/// digits are written in ASCII eight at a time into a buffer with room for what a step writes
/// beyond the 21 kept (no copy of a variable length).
fn digits20_fast(v: f64) -> Option<([u8; 20], i32)> {
    let bits = v.to_bits();
    let exp_bits = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp_bits == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_bits - 1075)
    };
    if m == 0 {
        return None;
    }
    let (int_part, mut f, k): (u128, u128, u32) = if e >= 0 {
        if e > 74 {
            return None;
        }
        (u128::from(m) << e, 0, 0)
    } else {
        let k = (-e) as u32;
        if k > 123 {
            return None;
        }
        let i = if k >= 64 { 0 } else { u128::from(m >> k) };
        let f = u128::from(m) - (i << k);
        (i, f, k)
    };
    // The significant digits (`n` of them; 21 kept: 20 and the rounding digit; a step may write
    // up to 39 and eight bytes after them) and the decimal exponent of the first.
    let mut all = [b'0'; 64];
    let mut n = 0usize;
    let mut exp: i32 = -1;
    if int_part > 0 {
        if let Ok(x) = u64::try_from(int_part) {
            n = put_digits(&mut all, x);
        } else {
            // Beyond 2^64 (rare for a counter; below 2^128: 39 digits at most): one digit per
            // 128-bit division.
            let mut rev = [0u8; 40];
            let mut x = int_part;
            while x > 0 {
                rev[n] = b'0' + (x % 10) as u8;
                x /= 10;
                n += 1;
            }
            rev[..n].reverse();
            all[..n].copy_from_slice(&rev[..n]);
        }
        exp = n as i32 - 1;
    }
    if f != 0 && n < 21 {
        // c digits per step with 10^c ≤ 2^(128 − k), so that 10^c · f < 2^128
        // (78913 / 2^18 is just below log10(2)).
        let c = (((128 - k) * 78913) >> 18).min(19) as usize;
        let p = u128::from(10u64.pow(c as u32));
        let mask = (1u128 << k) - 1;
        while f != 0 && n < 21 {
            let y = f * p;
            let chunk = (y >> k) as u64;
            f = y & mask;
            if n == 0 {
                // Zeros before the first significant digit only move the exponent.
                let len = put_digits(&mut all, chunk);
                exp -= (c - len) as i32;
                n = len;
            } else {
                put_padded(&mut all[n..], chunk, c);
                n += c;
            }
        }
    }
    // Whether anything non-zero follows the 21 digits kept.
    let sticky = f != 0 || all[21..n.max(21)].iter().any(|&d| d != b'0');
    // Round to 20 digits, ties to even.
    let round = all[20];
    let mut digits = [0u8; 20];
    digits.copy_from_slice(&all[..20]);
    // ASCII digits: b'0' is even, so the parity of the byte is the digit's.
    let up = round > b'5' || (round == b'5' && (sticky || digits[19] % 2 == 1));
    if up {
        let mut i = 20;
        loop {
            if i == 0 {
                digits = [b'0'; 20];
                digits[0] = b'1';
                exp += 1;
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    Some((digits, exp))
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

/// Appends the first `n` bytes of `bytes` to `line`: one copy of a fixed size (inlined, where a
/// copy of a variable size calls `memmove`), then the line cut back to its length.
fn extend_prefix<const N: usize>(line: &mut Vec<u8>, bytes: &[u8; N], n: usize) {
    let len = line.len();
    line.extend_from_slice(bytes);
    line.truncate(len + n.min(N));
}

/// Writes `v` as [`format_precise`] does into `buf` from `at` (2 at most) and returns where it
/// ends. The value is assembled on the stack, its digits copied in blocks of a fixed size (what
/// they write beyond the value is overwritten or cut off), and the line extended once.
fn write_precise(buf: &mut [u8; PRECISE_BUF], at: usize, v: f64) -> usize {
    const P: i32 = 20;
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
    // An integer of at most 19 digits: all its digits, exactly (raw counts, byte counts). Below
    // 2^63 the round trip through `i64` tells (one instruction each way, where `u64` takes
    // several); from 2^63 (above 2^53) every double is an integer.
    if a < 9_223_372_036_854_775_808.0 {
        let i = a as i64;
        if i as f64 == a {
            return p + put_digits(&mut buf[p..], i as u64);
        }
    } else if a < 1e19 {
        return p + put_digits(&mut buf[p..], a as u64);
    }
    let (digits, exp) = match digits20_fast(a) {
        Some(d) => d,
        None => digits20_slow(a),
    };
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
        let (digits, exp) = match digits20_fast(v.abs()) {
            Some(d) => d,
            None => digits20_slow(v.abs()),
        };
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
            kind in 0u8..7,
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

    proptest::proptest! {
        #[test]
        fn digits_equal_core_fmt(x in proptest::prelude::any::<u64>(), shift in 0u32..64) {
            for x in [x, x >> shift, 0, 1, u64::MAX, 99_999_999, 100_000_000, 10_000_000_000_000_000] {
                let mut out = [b'x'; 24];
                let n = put_digits(&mut out, x);
                let want = if x == 0 { String::new() } else { x.to_string() };
                proptest::prop_assert_eq!(&out[..n], want.as_bytes());
                // What is written beyond the digits is '0'.
                proptest::prop_assert!(out[n..].iter().all(|&b| b == b'x' || b == b'0'));
                for c in 1..=19usize {
                    if c < 20 && x < 10u64.pow(c as u32) {
                        let mut out = [b'x'; 27];
                        put_padded(&mut out, x, c);
                        let padded = format!("{x:0c$}");
                        proptest::prop_assert_eq!(&out[..c], padded.as_bytes());
                        proptest::prop_assert!(out[c..].iter().all(|&b| b == b'x' || b == b'0'));
                    }
                }
            }
        }
    }

    #[test]
    fn fast_digits_equal_core_fmt() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut checked = 0;
        for i in 0..200_000u32 {
            let r = next();
            let v = match i % 8 {
                0 => (r >> 11) as f64 / 9.1e12,
                1 => (r >> 11) as f64,
                2 => r as f64,
                3 => f64::from_bits(r >> 1),
                4 => (r % 1_000_000) as f64 / 8.0,
                5 => (r >> 11) as f64 * 1e-21,
                // Every binary exponent the fast path takes (2^-123 … 2^127), any mantissa.
                6 => f64::from_bits(((1075 - 123 + (r >> 52) % 198) << 52) | (r & ((1 << 52) - 1))),
                // Few significant bits: fractions that end early (0.375, 1234.5).
                _ => ((r >> 40) as f64) / f64::from(1u32 << (r % 24)),
            };
            if !v.is_finite() || v == 0.0 {
                continue;
            }
            if let Some(fast) = digits20_fast(v) {
                assert_eq!(fast, digits20_slow(v), "{v:e}");
                checked += 1;
            }
        }
        assert!(checked > 120_000, "{checked}");
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
        // Exact ties go to even, as core::fmt (and the C runtimes) do.
        for v in [
            0.5,
            2.5,
            1.25,
            1e20 + 65536.0,
            9.999_999_999_999_999e19,
            123456789012345678901.0,
        ] {
            assert_eq!(digits20_fast(v), Some(digits20_slow(v)), "{v:e}");
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
