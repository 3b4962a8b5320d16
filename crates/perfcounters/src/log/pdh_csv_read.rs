//! Reading PDH-CSV 4.0 / PDH-TSV 4.0 logs as Windows machines write them.
//!
//! ```text
//! "(PDH-CSV 4.0) (Pacific Standard Time)(480)","\\HOST\Memory\% Committed Bytes In Use",…
//! "02/01/2014 00:19:44.718","11.560571277026032"," ",…
//! ```
//!
//! What the reader accepts (see `docs/logs.md` for the evidence):
//!
//! * the first cell `(PDH-CSV 4.0)` or `(PDH-TSV 4.0)`, alone (typeperf) or followed by a time zone
//!   ` (<name>)(<bias>)` with a localized name and a negative bias allowed, or cut off inside the name
//!   (Windows stops at the first non-ASCII character and writes no bias);
//! * CRLF or LF line ends, leading empty lines (typeperf starts with one), typeperf's closing
//!   messages when its console output was redirected to a file;
//! * a byte-order mark (UTF-8, UTF-16LE/BE), UTF-16LE without one, or none: then UTF-8 if the
//!   header line is valid UTF-8, otherwise the ANSI code page given in [`CsvReadOptions`] (default
//!   1252);
//! * time stamps `MM/DD/YYYY HH:MM:SS.mmm` (one-digit fields and missing milliseconds too);
//! * values in any form C's `strtod` reads from Windows' `printf` (`0.000000`,
//!   `0.98958333333333259`, `78.80082537392173947`, `6.9494827586206889356e-005`, integers beyond
//!   2^53), and `" "` (or an empty cell) for no value.
//!
//! Rows are streamed: memory does not grow with the length of the file. Anything else is an error
//! that names the file, the line and the column (cell number, the time stamp being column 1):
//! a missing `(PDH-CSV 4.0)` cell, a header cell that is not a counter path, a row whose number of
//! cells differs from the header's, a bad time stamp, a value that is not a finite number.
//!
//! The parsing of quoted cells is the `csv` crate's; it is not the bottleneck (the criterion bench
//! `logs` measures the `csv` crate alone on the same file, see `docs/logs.md`).

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;

use crate::path::CounterPath;

use super::error::{quote, Location, LogError};
use super::model::{Cell, LogCounter, LogHeader, LogKind, LogReader, LogTime, Record, TimeZone};
use super::pdh_csv::CsvFlavor;
use super::zone::LocalClock;
use crate::encoding::{read_first_line, sniff_bom, TextEncoding, Transcoded};

/// The longest header line accepted (the real sample with 5,964 columns has 330 KB).
pub const MAX_HEADER_BYTES: usize = 64 * 1024 * 1024;

/// How to read a PDH-CSV / PDH-TSV log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CsvReadOptions {
    /// The ANSI code page of a file without a byte-order mark whose header is not valid UTF-8;
    /// `None` means 1252 (Western European), the most common one.
    pub code_page: Option<u16>,
}

type Input = Box<dyn Read + Send>;

/// A streaming PDH-CSV / PDH-TSV reader.
pub struct PdhCsvReader {
    csv: csv::Reader<Input>,
    header: LogHeader,
    encoding: TextEncoding,
    row: csv::ByteRecord,
    keep: Option<Vec<bool>>,
    /// Whether the header line ends in CRLF (see [`PdhCsvReader::row_line`]).
    crlf: bool,
    /// The log's local times → UTC.
    clock: Option<LocalClock>,
    /// The row cell (0 = the first counter cell) of each column, when some header cells are not
    /// counter paths and are skipped; `None` when every cell is a column.
    cells: Option<Vec<usize>>,
    /// Cells in a row: the time stamp and every header cell, skipped ones included.
    row_cells: usize,
    /// Cells a row may leave out at its end: the skipped header cells after the last column.
    trailing_skipped: usize,
    warnings: Vec<String>,
}

impl std::fmt::Debug for PdhCsvReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PdhCsvReader")
            .field("header", &self.header)
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

fn io_err(source: &str) -> impl Fn(io::Error) -> LogError + '_ {
    move |e| LogError::io(source, None, e)
}

impl PdhCsvReader {
    /// Opens a log file.
    pub fn open(path: &Path, options: CsvReadOptions) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let f = File::open(path).map_err(io_err(&source))?;
        Self::new(f, &source, options)
    }

    /// Reads a log from `input`; `source` names it in errors.
    pub fn new<R: Read + Send + 'static>(
        mut input: R,
        source: &str,
        options: CsvReadOptions,
    ) -> Result<Self, LogError> {
        let mut start = [0u8; 4];
        let mut have = 0usize;
        while have < start.len() {
            let n = input
                .read(start.get_mut(have..).unwrap_or(&mut []))
                .map_err(io_err(source))?;
            if n == 0 {
                break;
            }
            have += n;
        }
        let start = start.get(..have).unwrap_or(&[]).to_vec();
        let (encoding, text, first_line): (TextEncoding, Input, Vec<u8>) = match sniff_bom(&start) {
            Some((enc, bom)) => {
                let rest = start.get(bom..).unwrap_or(&[]).to_vec();
                let decoded = Transcoded::new(Cursor::new(rest).chain(input), enc);
                let mut r = BufReader::with_capacity(64 * 1024, decoded);
                let (line, _) =
                    read_first_line(&mut r, MAX_HEADER_BYTES).map_err(io_err(source))?;
                (enc, Box::new(r), line)
            }
            None => {
                let mut r = BufReader::with_capacity(64 * 1024, Cursor::new(start).chain(input));
                let (raw, _) = read_first_line(&mut r, MAX_HEADER_BYTES).map_err(io_err(source))?;
                let enc = if std::str::from_utf8(&raw).is_ok() {
                    TextEncoding::Utf8
                } else {
                    let cp = options.code_page.unwrap_or(1252);
                    if !crate::encoding::code_page_supported(cp) {
                        return Err(LogError::usage(
                            source,
                            format!("code page {cp} is not supported"),
                        ));
                    }
                    TextEncoding::CodePage(cp)
                };
                let mut line = Vec::new();
                Transcoded::new(&raw[..], enc)
                    .read_to_end(&mut line)
                    .map_err(io_err(source))?;
                let rest: Input = if enc == TextEncoding::Utf8 {
                    Box::new(r)
                } else {
                    Box::new(Transcoded::new(r, enc))
                };
                (enc, rest, line)
            }
        };
        let flavor = sniff_flavor(&first_line).ok_or_else(|| {
            // The line of the first non-blank character.
            let text_start = first_line
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(first_line.len());
            let line = first_line
                .get(..text_start)
                .unwrap_or(&[])
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64
                + 1;
            LogError::invalid(
                source,
                Some(Location::Text {
                    line,
                    column: Some(1),
                }),
                "not a PDH log: the first cell is not \"(PDH-CSV 4.0)\" or \"(PDH-TSV 4.0)\"",
            )
        })?;
        let crlf = first_line.ends_with(b"\r\n");
        let input: Input = Box::new(Cursor::new(first_line).chain(text));
        let csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(flavor.separator())
            .buffer_capacity(256 * 1024)
            .from_reader(input);
        let mut reader = PdhCsvReader {
            csv,
            header: LogHeader {
                source: source.to_owned(),
                kind: match flavor {
                    CsvFlavor::Csv => LogKind::Csv,
                    CsvFlavor::Tsv => LogKind::Tsv,
                },
                time_zone: None,
                counters: Vec::new(),
            },
            encoding,
            row: csv::ByteRecord::new(),
            keep: None,
            crlf,
            clock: None,
            cells: None,
            row_cells: 0,
            trailing_skipped: 0,
            warnings: Vec::new(),
        };
        reader.read_header(flavor)?;
        Ok(reader)
    }

    /// The text encoding found.
    pub fn encoding(&self) -> TextEncoding {
        self.encoding
    }

    fn at(&self, line: u64, column: Option<u64>) -> Option<Location> {
        Some(Location::Text { line, column })
    }

    /// The line of the record just read. The `csv` crate counts a line when it consumes its `\n`:
    /// a record ending in CRLF stops at the `\r`, so the reader's line after it is the record's own;
    /// a record ending in LF consumes its `\n`, so the record was on the line before (unless the file
    /// ended without a line break). The style is taken from the header line.
    fn row_line(&self) -> u64 {
        let start = self.row.position().map_or(0, |p| p.line());
        let after = self.csv.position().line();
        if self.crlf || after <= start {
            after
        } else {
            after - 1
        }
    }

    fn read_header(&mut self, flavor: CsvFlavor) -> Result<(), LogError> {
        let source = self.header.source.clone();
        let got = self
            .csv
            .read_byte_record(&mut self.row)
            .map_err(|e| csv_error(&source, e))?;
        let line = self.row_line();
        if !got {
            return Err(LogError::invalid(
                &source,
                self.at(line, None),
                "empty file",
            ));
        }
        let first = self.row.get(0).unwrap_or(&[]);
        let first = std::str::from_utf8(first).map_err(|_| {
            LogError::invalid(&source, self.at(line, Some(1)), "header cell is not text")
        })?;
        self.header.time_zone = parse_format_cell(first, flavor)
            .map_err(|m| LogError::invalid(&source, self.at(line, Some(1)), m))?;
        if let Some(zone) = &self.header.time_zone {
            if let (_, Some(w)) = TimeZone::named(&zone.name, zone.bias) {
                self.warnings.push(format!("{source}: {w}"));
            }
            self.clock = Some(zone.clock());
        }
        let mut counters = Vec::with_capacity(self.row.len().saturating_sub(1));
        let mut cells = Vec::with_capacity(counters.capacity());
        // Header cells that are not counter paths (Performance Monitor writes a data collector
        // set's description as the last one): skipped, with one warning for all of them.
        let mut skipped = Vec::new();
        for (i, cell) in self.row.iter().enumerate().skip(1) {
            let column = Some(i as u64 + 1);
            let text = std::str::from_utf8(cell).map_err(|_| {
                LogError::invalid(
                    &source,
                    self.at(line, column),
                    format!("counter path {} is not valid text", quote(cell)),
                )
            })?;
            match CounterPath::parse(text) {
                Ok(path) => {
                    counters.push(LogCounter {
                        name: text.to_owned(),
                        path,
                        info: None,
                    });
                    cells.push(i - 1);
                }
                Err(e) => skipped.push((i + 1, quote(cell), e)),
            }
        }
        self.row_cells = self.row.len();
        if let Some((column, text, e)) = skipped.first() {
            let more = match skipped.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            self.warnings.push(format!(
                "{source}: line {line}, column {column}: {text} is not a counter path ({e}){more}: \
                 its column is skipped"
            ));
            let last_column_cell = cells.last().map_or(0, |c| c + 1);
            self.trailing_skipped = self.row_cells - 1 - last_column_cell;
            self.cells = Some(cells);
        }
        self.header.counters = counters;
        Ok(())
    }
}

/// Recognises the first cell of the first non-blank line.
pub(crate) fn sniff_flavor(line: &[u8]) -> Option<CsvFlavor> {
    let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
    let rest = line.get(start..)?;
    let rest = rest.strip_prefix(b"\"").unwrap_or(rest);
    if rest.starts_with(CsvFlavor::Csv.header_cell().as_bytes()) {
        Some(CsvFlavor::Csv)
    } else if rest.starts_with(CsvFlavor::Tsv.header_cell().as_bytes()) {
        Some(CsvFlavor::Tsv)
    } else {
        None
    }
}

/// Parses the first header cell: the format name, then an optional ` (zone)(bias)`. The zone's rules
/// are the Windows zone's of that name, or the fixed bias ([`TimeZone::named`]).
pub fn parse_format_cell(cell: &str, flavor: CsvFlavor) -> Result<Option<TimeZone>, String> {
    let Some(rest) = cell.strip_prefix(flavor.header_cell()) else {
        return Err(format!(
            "not a PDH log: the first cell is {}, not \"{}\"",
            quote(cell.as_bytes()),
            flavor.header_cell()
        ));
    };
    if rest.is_empty() {
        return Ok(None);
    }
    let Some(zone) = rest.strip_prefix(" (") else {
        return Err(format!(
            "unexpected {} after \"{}\": expected \" (<time zone>)(<bias>)\"",
            quote(rest.as_bytes()),
            flavor.header_cell()
        ));
    };
    // `name)(bias)`; a name cut off at its first non-ASCII character has neither `)(` nor a bias.
    if let Some(body) = zone.strip_suffix(')') {
        if let Some(split) = body.rfind(")(") {
            let name = body.get(..split).unwrap_or("");
            let bias = body.get(split + 2..).unwrap_or("");
            let ok = !bias.is_empty()
                && bias
                    .strip_prefix('-')
                    .unwrap_or(bias)
                    .bytes()
                    .all(|b| b.is_ascii_digit());
            if ok {
                let bias: i32 = bias
                    .parse()
                    .ok()
                    .filter(|b: &i32| (-24 * 60..=24 * 60).contains(b))
                    .ok_or_else(|| {
                        format!("time-zone bias {bias} is out of range (±1440 minutes)")
                    })?;
                return Ok(Some(TimeZone::named(name, Some(bias)).0));
            }
        }
    }
    Ok(Some(TimeZone::named(zone, None).0))
}

fn csv_error(source: &str, e: csv::Error) -> LogError {
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
    if cell.iter().all(|&b| b == b' ') {
        return Ok(None);
    }
    // `str::parse::<f64>` is correctly rounded and reads C's forms, `e-005` included; it also reads
    // "inf" and "NaN", which no PDH log contains and which are rejected below.
    let s = std::str::from_utf8(cell).map_err(|_| ())?;
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        _ => Err(()),
    }
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

impl LogReader for PdhCsvReader {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    /// What the reader noticed without failing: a zone name it has no rules for (its times are
    /// converted with the fixed bias), header cells that are not counter paths (skipped), one
    /// message each.
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn select_columns(&mut self, keep: &[bool]) {
        self.keep = Some(keep.to_vec());
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        let source = &self.header.source;
        let columns = self.header.counters.len();
        loop {
            if !self
                .csv
                .read_byte_record(&mut self.row)
                .map_err(|e| csv_error(source, e))?
            {
                return Ok(false);
            }
            if !is_typeperf_message(&self.row) {
                break;
            }
        }
        let line = self.row_line();
        let at = |column: u64| {
            Some(Location::Text {
                line,
                column: Some(column),
            })
        };
        let n = self.row.len();
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
        let time_cell = self.row.get(0).unwrap_or(&[]);
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
        // The header's zone turns the local time into UTC; a log that names none is taken as UTC.
        record.time = match &mut self.clock {
            Some(clock) => clock.to_utc(local),
            None => local,
        };
        record.cells.clear();
        record.cells.resize(columns, Cell::Blank);
        let keep = self.keep.as_deref();
        let cells = self.cells.as_deref();
        for (i, out) in record.cells.iter_mut().enumerate() {
            if keep.is_some_and(|k| !k.get(i).copied().unwrap_or(false)) {
                continue;
            }
            let at_cell = cells.map_or(Some(i), |c| c.get(i).copied());
            let Some(cell) = at_cell.and_then(|c| self.row.get(c + 1)) else {
                continue;
            };
            *out = match parse_value(cell) {
                Ok(Some(v)) => Cell::Value(v),
                Ok(None) => Cell::Blank,
                Err(()) => {
                    return Err(LogError::invalid(
                        source,
                        at(at_cell.unwrap_or(i) as u64 + 2),
                        format!(
                            "{} is not a number ({})",
                            quote(cell),
                            self.header.counters.get(i).map_or("", |c| c.name.as_str())
                        ),
                    ))
                }
            };
        }
        Ok(true)
    }
}

#[cfg(test)]
// Literals are written digit for digit as Windows writes them.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use crate::log::pdh_csv::format_cell;

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

    #[test]
    fn zone_cells() {
        let z = |name: &str, bias| Ok(Some(TimeZone::named(name, bias).0));
        assert_eq!(parse_format_cell("(PDH-CSV 4.0)", CsvFlavor::Csv), Ok(None));
        // Known names carry the Windows zone's rules, others the fixed bias.
        let pacific =
            parse_format_cell("(PDH-CSV 4.0) (Pacific Standard Time)(480)", CsvFlavor::Csv);
        assert_eq!(
            pacific.unwrap().unwrap().rules,
            crate::log::windows_zone("Pacific Standard Time").unwrap()
        );
        let spanish = parse_format_cell(
            "(PDH-CSV 4.0) (Hora de verano romance)(-120)",
            CsvFlavor::Csv,
        );
        assert_eq!(
            spanish.unwrap().unwrap(),
            TimeZone::fixed("Hora de verano romance", Some(-120))
        );
        assert_eq!(
            parse_format_cell("(PDH-CSV 4.0) (Pacific Standard Time)(480)", CsvFlavor::Csv),
            z("Pacific Standard Time", Some(480))
        );
        assert_eq!(
            parse_format_cell(
                "(PDH-TSV 4.0) (Hora de verano romance)(-120)",
                CsvFlavor::Tsv
            ),
            z("Hora de verano romance", Some(-120))
        );
        assert_eq!(
            parse_format_cell("(PDH-CSV 4.0) (RTZ 2 (", CsvFlavor::Csv),
            z("RTZ 2 (", None)
        );
        assert_eq!(
            parse_format_cell("(PDH-CSV 4.0) (UTC)(0)", CsvFlavor::Csv),
            z("UTC", Some(0))
        );
        assert!(parse_format_cell("(PDH-CSV 4.0)x", CsvFlavor::Csv).is_err());
        assert!(parse_format_cell("(PDH-CSV 3.0)", CsvFlavor::Csv).is_err());
        assert!(parse_format_cell("(PDH-CSV 4.0) (X)(99999)", CsvFlavor::Csv).is_err());
        for cell in [
            "(PDH-CSV 4.0) (Pacific Standard Time)(480)",
            "(PDH-CSV 4.0) (RTZ 2 (",
            "(PDH-CSV 4.0)",
        ] {
            let zone = parse_format_cell(cell, CsvFlavor::Csv).unwrap();
            assert_eq!(format_cell(CsvFlavor::Csv, zone.as_ref()), cell);
        }
    }
}
