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
//! The rows Windows writes (every cell quoted, or none) are read in one pass by `pdh_csv_scan`,
//! values straight into the layout the consumer asked for; the `csv` crate reads the rest (a header
//! of several lines, quotes it reads as text, and a chunk from its first row that is not plain), so
//! both read the same records and word the same errors.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;

use std::sync::Arc;

use crate::path::CounterPath;

use super::pdh_csv_chunks::{self, Pipeline, Rows};
use super::pdh_csv_row::{csv_error, csv_reader, row_line, RowParser, Tracked};

use super::error::{quote, Location, LogError};
use super::model::{
    Cell, LogCounter, LogHeader, LogKind, LogReader, Record, TimeZone, ValueColumns, ValueRows,
};
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

/// The encoding of a header line `raw` without a byte-order mark, and the warning that says which
/// code page was assumed when it was detected:
///
/// * a code page given (`code_page`) is used; 65001 (UTF-8) on a header that is not UTF-8 is an
///   error naming the first byte that is not;
/// * else a header that is valid UTF-8 is UTF-8 (an ASCII one included);
/// * else the code page [`detect_code_page`](crate::encoding::detect_code_page) finds.
fn header_encoding(
    source: &str,
    raw: &[u8],
    code_page: Option<u16>,
) -> Result<(TextEncoding, Option<String>), LogError> {
    let utf8 = std::str::from_utf8(raw);
    match (code_page, utf8) {
        (Some(65001), Ok(_)) | (None, Ok(_)) => Ok((TextEncoding::Utf8, None)),
        (Some(65001), Err(e)) => {
            let at = e.valid_up_to();
            let before = raw.get(..at).unwrap_or(&[]);
            let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let column = String::from_utf8_lossy(before.get(line_start..).unwrap_or(&[]))
                .chars()
                .count() as u64
                + 1;
            Err(LogError::invalid(
                source,
                Some(Location::Text {
                    line,
                    column: Some(column),
                }),
                format!(
                    "not UTF-8 (code page 65001 was given): byte 0x{:02X} starts no UTF-8 \
                     character; give the code page the log was written in",
                    raw.get(at).copied().unwrap_or(0)
                ),
            ))
        }
        (Some(cp), _) => {
            if !crate::encoding::code_page_supported(cp) {
                return Err(LogError::usage(
                    source,
                    format!("code page {cp} is not supported"),
                ));
            }
            Ok((TextEncoding::CodePage(cp), None))
        }
        (None, Err(_)) => {
            let cp = crate::encoding::detect_code_page(raw);
            Ok((
                TextEncoding::CodePage(cp),
                Some(format!(
                    "{source}: no byte-order mark and not UTF-8: read in code page {cp}, \
                     detected from its header line (a code page given overrides it)"
                )),
            ))
        }
    }
}

/// A streaming PDH-CSV / PDH-TSV reader.
///
/// When the header is one line and the log is longer than a chunk (1 MiB), the rows are parsed on
/// all cores and handed over in order (see `pdh_csv_chunks`); records, values and errors are the
/// same as when read one by one on the calling thread, which a shorter log is.
pub struct PdhCsvReader {
    header: LogHeader,
    encoding: TextEncoding,
    /// The header's columns and how a row is parsed (shared with the parsing threads once they
    /// started).
    parser: RowParser,
    /// Rows parsed and not all handed out yet, the next one's index.
    rows: Rows,
    next: usize,
    source: RowSource,
    /// The log's local times → UTC.
    clock: Option<LocalClock>,
    warnings: Vec<String>,
    /// Threads that parse rows (1: on the calling thread only).
    workers: usize,
    chunk_bytes: usize,
    /// Whether rows were asked for (a column selection is fixed from then on).
    started: bool,
    /// Whether the first rows were asked for column by column ([`LogReader::read_columns`]): the
    /// parsing threads then lay their rows out so.
    by_column: bool,
}

/// Where the rows come from.
enum RowSource {
    /// One `csv` reader on the calling thread (a header of several lines).
    Csv(Box<csv::Reader<Tracked<Input>>>, csv::ByteRecord),
    /// The text after the header line, not read yet: the first read decides between the calling
    /// thread (a short log) and the parsing threads.
    Pending(Input, u64, Vec<u8>),
    /// The parsing threads.
    Threads(Pipeline),
    /// After the last record or an error.
    Done,
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
        let mut warnings = Vec::new();
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
                let (enc, note) = header_encoding(source, &raw, options.code_page)?;
                warnings.extend(note);
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
                match crate::format::blg::text_kind(&first_line) {
                    Some(k @ ("PDH-CSV without its header line" | "PDH-TSV without its header line")) => {
                        format!(
                            "not a PDH log: the first cell is not \"(PDH-CSV 4.0)\" or \
                             \"(PDH-TSV 4.0)\"; it looks like {k}"
                        )
                    }
                    _ => "not a PDH log: the first cell is not \"(PDH-CSV 4.0)\" or \"(PDH-TSV 4.0)\""
                        .to_owned(),
                },
            )
        })?;
        let crlf = first_line.ends_with(b"\r\n");
        let separator = flavor.separator();
        // The rows are cut into chunks when the header record is exactly the first line.
        // (A space stands for the byte after it, which `split_point` needs to see; whether the
        // rows may start with a byte-order mark's bytes is checked when they are read.)
        let one_line = first_line.ends_with(b"\n") && {
            let mut line = first_line.clone();
            line.push(b' ');
            let split = pdh_csv_chunks::split_point(&line, separator);
            !split.irregular && split.end == first_line.len()
        };
        let header_lines = first_line.iter().filter(|&&b| b == b'\n').count() as u64;
        let (header_input, rest): (Input, Option<(Input, Vec<u8>)>) = if one_line {
            (
                Box::new(Cursor::new(first_line.clone())),
                Some((text, first_line)),
            )
        } else {
            (Box::new(Cursor::new(first_line).chain(text)), None)
        };
        let mut csv = Box::new(csv_reader(Tracked::new(header_input), separator));
        let mut row = csv::ByteRecord::new();
        let got = csv
            .read_byte_record(&mut row)
            .map_err(|e| csv_error(source, e))?;
        let line = row_line(
            crlf,
            &row,
            csv.position(),
            0,
            csv.get_ref().lf_before(csv.position().byte()),
        );
        let mut reader = PdhCsvReader {
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
            parser: RowParser {
                source: source.to_owned(),
                separator,
                columns: 0,
                crlf,
                cells: None,
                row_cells: 0,
                trailing_skipped: 0,
                selected: None,
                names: Vec::new(),
            },
            rows: Rows::default(),
            next: 0,
            source: RowSource::Done,
            clock: None,
            warnings,
            workers: super::cores().min(8),
            chunk_bytes: pdh_csv_chunks::CHUNK_BYTES,
            started: false,
            by_column: false,
        };
        if !got {
            return Err(LogError::invalid(source, at(line, None), "empty file"));
        }
        reader.read_header(flavor, &row, line)?;
        reader.source = match rest {
            Some((text, line)) => RowSource::Pending(text, header_lines, line),
            None => RowSource::Csv(csv, row),
        };
        Ok(reader)
    }

    /// The text encoding found.
    pub fn encoding(&self) -> TextEncoding {
        self.encoding
    }

    /// Sets the threads that parse rows (1: the calling thread only) and the size of a chunk in
    /// bytes (at least 1); call it before the first record is read. 0 workers: one `csv` reader
    /// on the calling thread, as for a header of several lines. The records are the same whatever
    /// the setting; tests and the `csv_log` fuzz target set small chunks to reach the threaded
    /// path with short logs.
    #[doc(hidden)]
    pub fn set_parallelism(&mut self, workers: usize, chunk_bytes: usize) {
        self.workers = workers;
        self.chunk_bytes = chunk_bytes.max(1);
    }

    fn read_header(
        &mut self,
        flavor: CsvFlavor,
        row: &csv::ByteRecord,
        line: u64,
    ) -> Result<(), LogError> {
        let source = self.header.source.clone();
        let first = row.get(0).unwrap_or(&[]);
        let first = std::str::from_utf8(first).map_err(|_| {
            LogError::invalid(&source, at(line, Some(1)), "header cell is not text")
        })?;
        self.header.time_zone = parse_format_cell(first, flavor)
            .map_err(|m| LogError::invalid(&source, at(line, Some(1)), m))?;
        if let Some(zone) = &self.header.time_zone {
            if let (_, Some(w)) = TimeZone::named(&zone.name, zone.bias) {
                self.warnings.push(format!("{source}: {w}"));
            }
            self.clock = Some(zone.clock());
        }
        let mut counters = Vec::with_capacity(row.len().saturating_sub(1));
        let mut cells = Vec::with_capacity(counters.capacity());
        // Header cells that are not counter paths (Performance Monitor writes a data collector
        // set's description as the last one): skipped, with one warning for all of them.
        let mut skipped = Vec::new();
        for (i, cell) in row.iter().enumerate().skip(1) {
            let column = Some(i as u64 + 1);
            let text = std::str::from_utf8(cell).map_err(|_| {
                LogError::invalid(
                    &source,
                    at(line, column),
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
        self.parser.row_cells = row.len();
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
            self.parser.trailing_skipped = self.parser.row_cells - 1 - last_column_cell;
            self.parser.cells = Some(cells);
        }
        self.parser.columns = counters.len();
        self.parser.names = counters.iter().map(|c| c.name.clone()).collect();
        self.header.counters = counters;
        Ok(())
    }

    /// The next parsed rows, `None` at the end: from the `csv` reader of the calling thread, the
    /// first read of the text after the header, or the parsing threads.
    fn next_rows(&mut self) -> Option<Rows> {
        self.started = true;
        match std::mem::replace(&mut self.source, RowSource::Done) {
            RowSource::Done => None,
            RowSource::Threads(mut pipeline) => {
                let rows = pipeline.next()?;
                self.source = RowSource::Threads(pipeline);
                Some(rows)
            }
            RowSource::Csv(mut csv, mut row) => {
                let mut rows = Rows::default();
                loop {
                    match csv.read_byte_record(&mut row) {
                        Ok(true) => {}
                        Ok(false) => return None,
                        Err(e) => {
                            rows.error = Some(csv_error(&self.parser.source, e));
                            return Some(rows);
                        }
                    }
                    let lf = csv.get_ref().lf_before(csv.position().byte());
                    if !rows.push(&self.parser, &row, csv.position(), 0, lf)
                        || !rows.times.is_empty()
                    {
                        break;
                    }
                }
                self.source = RowSource::Csv(csv, row);
                Some(rows)
            }
            RowSource::Pending(mut text, lines, header_line) => {
                let mut first = Vec::new();
                let want = self.chunk_bytes as u64;
                match text.by_ref().take(want).read_to_end(&mut first) {
                    Ok(n)
                        if (n as u64) < want
                            && self.workers > 0
                            && first.first() != Some(&0xEF) =>
                    {
                        // The whole log is shorter than a chunk: parsed here.
                        Some(pdh_csv_chunks::parse_chunk(
                            &self.parser,
                            &first,
                            lines,
                            self.by_column,
                        ))
                    }
                    Ok(_) if self.workers == 0 || first.first() == Some(&0xEF) => {
                        // A `csv` reader started here would take these bytes for a byte-order
                        // mark: one reader reads the header line again, then every row.
                        let input: Input = Box::new(
                            Cursor::new(header_line)
                                .chain(Cursor::new(first))
                                .chain(text),
                        );
                        let mut csv =
                            Box::new(csv_reader(Tracked::new(input), self.parser.separator));
                        let mut row = csv::ByteRecord::new();
                        if let Err(e) = csv.read_byte_record(&mut row) {
                            return Some(Rows {
                                error: Some(csv_error(&self.parser.source, e)),
                                ..Rows::default()
                            });
                        }
                        self.source = RowSource::Csv(csv, row);
                        self.next_rows()
                    }
                    Ok(_) => {
                        let pipeline = Pipeline::start(
                            Arc::new(self.parser.clone()),
                            first,
                            text,
                            lines,
                            self.workers,
                            self.chunk_bytes,
                            self.by_column,
                        );
                        self.source = RowSource::Threads(pipeline);
                        self.next_rows()
                    }
                    Err(e) => Some(Rows {
                        error: Some(csv_error(&self.parser.source, csv::Error::from(e))),
                        ..Rows::default()
                    }),
                }
            }
        }
    }
}

fn at(line: u64, column: Option<u64>) -> Option<Location> {
    Some(Location::Text { line, column })
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

impl LogReader for PdhCsvReader {
    fn text_encoding(&self) -> Option<TextEncoding> {
        Some(self.encoding)
    }

    fn header(&self) -> &LogHeader {
        &self.header
    }

    /// What the reader noticed without failing: a zone name it has no rules for (its times are
    /// converted with the fixed bias), header cells that are not counter paths (skipped), one
    /// message each.
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Only the columns kept are parsed, and rows hold their values only. A selection made after
    /// the first record was read is ignored (every record is still whole).
    fn select_columns(&mut self, keep: &[bool]) {
        if !self.started {
            self.parser.selected = Some(
                (0..self.parser.columns)
                    .filter(|&i| keep.get(i).copied().unwrap_or(false))
                    .collect(),
            );
        }
    }

    fn read_values(
        &mut self,
        out: &mut ValueRows,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        let width = self.parser.width();
        out.clear();
        out.columns = width;
        let max_rows = (max_cells / width.max(1)).max(1);
        loop {
            let have = self.rows.times.len().saturating_sub(self.next);
            if have > 0 {
                self.rows.lay_out_by_row(width);
                let from = out.len();
                // A chunk of rows that makes a batch is handed over as it is.
                let whole = self.next == 0 && from == 0 && have <= max_rows && have * 2 > max_rows;
                if whole {
                    // The parsed rows as they are, no copy; the caller's buffers are reused.
                    std::mem::swap(&mut out.times, &mut self.rows.times);
                    std::mem::swap(&mut out.values, &mut self.rows.values);
                    self.rows.times.clear();
                    self.rows.values.clear();
                } else {
                    let take = have.min(max_rows - from);
                    let rows = self.next..self.next + take;
                    out.times
                        .extend_from_slice(self.rows.times.get(rows.clone()).unwrap_or(&[]));
                    out.values.extend_from_slice(
                        self.rows
                            .values
                            .get(rows.start * width..rows.end * width)
                            .unwrap_or(&[]),
                    );
                    self.next += take;
                }
                if let Some(clock) = &mut self.clock {
                    for t in out.times.iter_mut().skip(from) {
                        *t = clock.to_utc(*t);
                    }
                }
                if whole || out.len() >= max_rows {
                    break;
                }
                continue;
            }
            if self.rows.error.is_some() {
                // The records before the error first.
                if !out.is_empty() {
                    break;
                }
                if let Some(e) = self.rows.error.take() {
                    self.source = RowSource::Done;
                    return Err(e);
                }
            }
            let Some(rows) = self.next_rows() else {
                break;
            };
            self.rows = rows;
            self.next = 0;
        }
        Ok(Some(out.len()))
    }

    /// Rows parsed on several threads are laid out as columns there when the first rows are read
    /// so; a chunk of rows that fits is handed over as it is. Every call hands over rows of one
    /// chunk at most.
    fn read_columns(
        &mut self,
        out: &mut ValueColumns,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        let width = self.parser.width();
        if !self.started {
            self.by_column = true;
        }
        out.clear();
        out.columns = width;
        let max_rows = (max_cells / width.max(1)).max(1);
        loop {
            let n = self.rows.times.len();
            let have = n.saturating_sub(self.next);
            if have > 0 {
                self.rows.lay_out_by_column(width);
                if self.next == 0 && have <= max_rows {
                    // The parsed columns as they are, no copy; the caller's buffers are reused.
                    std::mem::swap(&mut out.times, &mut self.rows.times);
                    std::mem::swap(&mut out.values, &mut self.rows.values);
                    self.rows.times.clear();
                    self.rows.values.clear();
                } else {
                    let rows = self.next..self.next + have.min(max_rows);
                    out.times
                        .extend_from_slice(self.rows.times.get(rows.clone()).unwrap_or(&[]));
                    for c in 0..width {
                        out.values.extend_from_slice(
                            self.rows
                                .values
                                .get(c * n + rows.start..c * n + rows.end)
                                .unwrap_or(&[]),
                        );
                    }
                    self.next = rows.end;
                }
                if let Some(clock) = &mut self.clock {
                    for t in &mut out.times {
                        *t = clock.to_utc(*t);
                    }
                }
                break;
            }
            if let Some(e) = self.rows.error.take() {
                self.source = RowSource::Done;
                return Err(e);
            }
            let Some(rows) = self.next_rows() else {
                break;
            };
            self.rows = rows;
            self.next = 0;
        }
        Ok(Some(out.len()))
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        let width = self.parser.width();
        loop {
            if let Some(&local) = self.rows.times.get(self.next) {
                self.rows.lay_out_by_row(width);
                let from = self.next * width;
                self.next += 1;
                let values = self.rows.values.get(from..from + width).unwrap_or(&[]);
                record.cells.clear();
                match &self.parser.selected {
                    None => record
                        .cells
                        .extend(values.iter().map(|&v| Cell::of_value(v))),
                    Some(selected) => {
                        record.cells.resize(self.parser.columns, Cell::Blank);
                        for (&i, v) in selected.iter().zip(values) {
                            if let Some(c) = record.cells.get_mut(i) {
                                *c = Cell::of_value(*v);
                            }
                        }
                    }
                }
                // The header's zone turns the local time into UTC; a log that names none is taken
                // as UTC.
                record.time = match &mut self.clock {
                    Some(clock) => clock.to_utc(local),
                    None => local,
                };
                return Ok(true);
            }
            if let Some(e) = self.rows.error.take() {
                self.source = RowSource::Done;
                return Err(e);
            }
            let Some(rows) = self.next_rows() else {
                return Ok(false);
            };
            self.rows = rows;
            self.next = 0;
        }
    }
}

#[cfg(test)]
// Literals are written digit for digit as Windows writes them.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use crate::log::pdh_csv::format_cell;
    use crate::log::time::LogTime;

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

    /// A deterministic xorshift generator.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A random log in the shape Windows writes, with the rare oddities a reader must bear
    /// (quotes, separators and line breaks inside quoted cells, unquoted cells, quotes inside
    /// unquoted cells, blank lines, typeperf's closing messages, byte-order-mark bytes, bad values
    /// and short rows); `bad` in 1,000 of the cells are wrong.
    fn random_log(seed: u64, bad: u64) -> Vec<u8> {
        let mut rng = Rng(seed | 1);
        let tsv = rng.below(4) == 0;
        let sep = if tsv { "\t" } else { "," };
        let eol = if rng.below(2) == 0 { "\r\n" } else { "\n" };
        let columns = 1 + rng.below(6) as usize;
        let mut out = String::new();
        if rng.below(8) == 0 {
            out.push_str(eol);
        }
        out.push_str(if tsv {
            "\"(PDH-TSV 4.0) (Pacific Standard Time)(480)\""
        } else {
            "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\""
        });
        for c in 0..columns {
            let instance = match rng.below(12) {
                0 => "a,b",
                1 => "a\"\"b",
                2 => "a\tb",
                3 if rng.below(4) == 0 => "a\nb",
                _ => "x",
            };
            out.push_str(&format!("{sep}\"\\\\H\\O({instance}#{c})\\C {c}\""));
        }
        let description = rng.below(6) == 0;
        if description {
            out.push_str(&format!("{sep}\"a description\""));
        }
        out.push_str(eol);
        let rows = rng.below(60);
        for r in 0..rows {
            if rng.below(40) == 0 {
                out.push_str(eol);
            }
            if rng.below(80) == 0 {
                out.push_str("Exiting, please wait...");
                out.push_str(eol);
            }
            let time = format!("02/01/2014 00:{:02}:{:02}.{:03}", r / 60 % 60, r % 60, r);
            if rng.below(2) == 0 {
                out.push_str(&format!("\"{time}\""));
            } else {
                out.push_str(&time);
            }
            let cells = if rng.below(1000) < bad / 4 {
                rng.below(columns as u64 + 3) as usize
            } else {
                columns
            };
            for _ in 0..cells {
                out.push_str(sep);
                let value = match rng.below(10) {
                    0 => " ".to_owned(),
                    1 => String::new(),
                    2 => format!("{}", rng.next() >> 20),
                    3 => format!("{:e}", rng.next() as f64 / 7.0),
                    // A `% Processor Time` value, a negative one.
                    8 => format!("{:.6}", (rng.next() % 100_000_000) as f64 / 1e6),
                    9 => format!("-{}.{:06}", rng.below(1000), rng.below(1_000_000)),
                    _ => crate::log::pdh_csv::format_precise(rng.next() as f64 / 9.1e12),
                };
                let (value, raw) = if rng.below(1000) < bad {
                    let raw = match rng.below(4) {
                        // Quotes the `csv` crate reads as text.
                        0 => Some(format!("1\"{}", rng.below(10))),
                        1 => Some(format!("\"{}\"x{eol}\"", rng.below(10))),
                        _ => None,
                    };
                    let value = match rng.below(6) {
                        0 => format!("{value}\"x"),
                        1 => format!("1{eol}2"),
                        2 => format!("\u{feff}{value}"),
                        3 => "abc".to_owned(),
                        4 => "\"\"".to_owned(),
                        _ => format!("\"{value}\""),
                    };
                    (value, raw)
                } else {
                    (value, None)
                };
                if let Some(raw) = raw {
                    out.push_str(&raw);
                } else if value.contains(['"', '\n', '\t', ','].as_slice()) || rng.below(6) != 0 {
                    out.push('"');
                    out.push_str(&value.replace('"', "\"\""));
                    out.push('"');
                } else {
                    out.push_str(&value);
                }
            }
            if description && cells == columns && rng.below(2) == 0 {
                // The skipped column, never parsed: any text.
                out.push_str(sep);
                out.push_str(match rng.below(4) {
                    0 => "1\"2",
                    1 => "\"1\"2\"",
                    2 => "\"a\nb\"",
                    _ => "x",
                });
            }
            if r + 1 < rows || rng.below(4) != 0 {
                out.push_str(eol);
            }
        }
        let mut bytes = out.into_bytes();
        if rng.below(10) == 0 {
            // A record starting with byte-order-mark bytes, somewhere after the header.
            let at = bytes.len() / 2;
            if let Some(nl) = bytes
                .get(at..)
                .and_then(|b| b.iter().position(|&c| c == b'\n'))
            {
                let at = at + nl + 1;
                bytes.splice(at..at, [0xEF, 0xBB, 0xBF]);
            }
        }
        bytes
    }

    /// A reader of `bytes` with `workers` threads on chunks of `chunk` bytes (0 workers: one `csv`
    /// reader on the calling thread), or the error of its header.
    fn random_reader(bytes: &[u8], workers: usize, chunk: usize) -> Result<PdhCsvReader, String> {
        let mut r = PdhCsvReader::new(
            Cursor::new(bytes.to_vec()),
            "random.csv",
            CsvReadOptions::default(),
        )
        .map_err(|e| e.to_string())?;
        r.set_parallelism(workers, chunk);
        Ok(r)
    }

    /// A reader dropped in the middle of a log waits for its threads: the cutting thread has ended
    /// (and dropped the input it read from) when the drop returns.
    #[test]
    fn dropped_reader_leaves_no_thread() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        struct Input(Cursor<Vec<u8>>, Arc<AtomicBool>);
        impl Read for Input {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0.read(buf)
            }
        }
        impl Drop for Input {
            fn drop(&mut self) {
                self.1.store(true, Ordering::SeqCst);
            }
        }
        let mut text =
            String::from("\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n");
        for i in 0..2000 {
            text.push_str(&format!(
                "\"01/01/2024 00:{:02}:{:02}.000\",\"{i}\"\r\n",
                i / 60 % 60,
                i % 60
            ));
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let input = Input(Cursor::new(text.into_bytes()), Arc::clone(&dropped));
        let mut r = PdhCsvReader::new(input, "drop.csv", CsvReadOptions::default()).unwrap();
        r.set_parallelism(2, 256);
        let mut rec = Record::default();
        assert!(r.read_record(&mut rec).unwrap());
        assert_eq!(rec.cells, vec![Cell::Value(0.0)]);
        assert!(
            !dropped.load(Ordering::SeqCst),
            "the input is still being read"
        );
        drop(r);
        assert!(
            dropped.load(Ordering::SeqCst),
            "the cutting thread outlived the reader"
        );
    }

    /// Every record or the error that ends the reading, `workers` threads on chunks of
    /// `chunk` bytes (0 workers: one `csv` reader on the calling thread).
    fn read_log(
        bytes: &[u8],
        workers: usize,
        chunk: usize,
        keep: u64,
    ) -> Result<Vec<Result<Record, String>>, String> {
        let mut r = random_reader(bytes, workers, chunk)?;
        if keep != 0 {
            let columns = r.header().counters.len();
            r.select_columns(
                &(0..columns)
                    .map(|i| keep >> (i % 64) & 1 == 1)
                    .collect::<Vec<_>>(),
            );
        }
        Ok(records_of(&mut r))
    }

    /// Every record `r` reads, then its error if reading ends with one.
    fn records_of(r: &mut PdhCsvReader) -> Vec<Result<Record, String>> {
        let mut out = Vec::new();
        let mut rec = Record::default();
        loop {
            match r.read_record(&mut rec) {
                Ok(true) => out.push(Ok(rec.clone())),
                Ok(false) => break,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
            }
        }
        out
    }

    /// How [`read_log_values`] reads.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum ValuesBy {
        Rows,
        /// Every third call a `read_record`.
        RowsAndRecords,
        Columns,
        /// `read_columns`, `read_values`, `read_record` in turn.
        ColumnsRowsAndRecords,
    }

    /// [`read_log`] through `read_values` or `read_columns` (batches of about `max_cells`
    /// values; mixed with `read_record` as `by` says): the records rebuilt from the rows.
    fn read_log_values(
        bytes: &[u8],
        workers: usize,
        chunk: usize,
        keep: u64,
        max_cells: usize,
        by: ValuesBy,
    ) -> Result<Vec<Result<Record, String>>, String> {
        let mut r = random_reader(bytes, workers, chunk)?;
        let columns = r.header().counters.len();
        let kept: Vec<bool> = (0..columns)
            .map(|i| keep == 0 || keep >> (i % 64) & 1 == 1)
            .collect();
        if keep != 0 {
            r.select_columns(&kept);
        }
        let mut out = Vec::new();
        let mut rows = ValueRows::default();
        let mut columns = ValueColumns::default();
        let mut rec = Record::default();
        for call in 0.. {
            let columns_now = match by {
                ValuesBy::Columns => true,
                ValuesBy::ColumnsRowsAndRecords => call % 3 == 0,
                _ => false,
            };
            if columns_now {
                match r.read_columns(&mut columns, max_cells) {
                    Ok(Some(0)) => break,
                    Ok(Some(n)) => {
                        assert_eq!(n, columns.len());
                        assert_eq!(columns.columns, kept.iter().filter(|&&k| k).count());
                        assert_eq!(columns.values.len(), n * columns.columns);
                        assert!(n == 1 || n * columns.columns <= max_cells.max(1));
                        for (i, &time) in columns.times.iter().enumerate() {
                            let mut c = 0;
                            let cells = kept
                                .iter()
                                .map(|&k| {
                                    let v = k.then(|| {
                                        c += 1;
                                        columns.column(c - 1).get(i).copied()
                                    });
                                    match v.flatten() {
                                        Some(v) if !v.is_nan() => Cell::Value(v),
                                        _ => Cell::Blank,
                                    }
                                })
                                .collect();
                            out.push(Ok(Record { time, cells }));
                        }
                    }
                    Ok(None) => return Err("no columns".into()),
                    Err(e) => {
                        out.push(Err(e.to_string()));
                        break;
                    }
                }
                continue;
            }
            let record_now = match by {
                ValuesBy::RowsAndRecords | ValuesBy::ColumnsRowsAndRecords => call % 3 == 2,
                _ => false,
            };
            if record_now {
                match r.read_record(&mut rec) {
                    Ok(true) => out.push(Ok(rec.clone())),
                    Ok(false) => break,
                    Err(e) => {
                        out.push(Err(e.to_string()));
                        break;
                    }
                }
                continue;
            }
            match r.read_values(&mut rows, max_cells) {
                Ok(Some(0)) => break,
                Ok(Some(n)) => {
                    assert_eq!(n, rows.len());
                    assert_eq!(rows.columns, kept.iter().filter(|&&k| k).count());
                    assert!(n == 1 || n * rows.columns <= max_cells.max(1));
                    for (i, &time) in rows.times.iter().enumerate() {
                        let mut values = rows.row(i).iter();
                        let cells = kept
                            .iter()
                            .map(|&k| match k.then(|| values.next()).flatten() {
                                Some(v) if !v.is_nan() => Cell::Value(*v),
                                _ => Cell::Blank,
                            })
                            .collect();
                        out.push(Ok(Record { time, cells }));
                    }
                }
                Ok(None) => return Err("no values".into()),
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
            }
        }
        Ok(out)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Rows parsed in chunks on threads are the rows, values and errors (line and column
        /// included) of one `csv` reader on the calling thread, wherever the chunks end.
        #[test]
        fn chunks_read_as_one_reader(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 1usize..4,
            chunk in 1usize..600,
        ) {
            let log = random_log(seed, bad);
            // Every column, or some (the others are never parsed).
            let keep = if seed % 3 == 0 { seed >> 8 } else { 0 };
            let one = read_log(&log, 0, chunk, keep);
            proptest::prop_assert_eq!(&read_log(&log, workers, chunk, keep), &one);
            // A log shorter than a chunk: parsed at once on the calling thread.
            proptest::prop_assert_eq!(&read_log(&log, workers, 1 << 20, keep), &one);
        }

        /// Rows read as values or columns (in batches of any size, mixed with each other and
        /// with records) are the records, and the errors after them, that `read_record` reads.
        #[test]
        fn values_are_the_records(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 0usize..4,
            chunk in 1usize..600,
            max_cells in 0usize..40,
            by in proptest::sample::select(vec![
                ValuesBy::Rows,
                ValuesBy::RowsAndRecords,
                ValuesBy::Columns,
                ValuesBy::ColumnsRowsAndRecords,
            ]),
        ) {
            let log = random_log(seed, bad);
            let keep = if seed % 3 == 0 { seed >> 8 } else { 0 };
            let one = read_log(&log, 0, chunk, keep);
            proptest::prop_assert_eq!(
                &read_log_values(&log, workers, chunk, keep, max_cells, by),
                &one
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// A log copied to PDH-CSV through the threaded reader, a filter (columns, range, every
        /// n-th) and encoders on other threads (values handed over as rows) is byte for byte the
        /// copy of one reader, record by record, on one thread, up to the same error.
        #[test]
        fn copies_are_the_one_thread_copy(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 1usize..4,
            chunk in 1usize..600,
            encoders in 1usize..4,
            batch_cells in 1usize..50,
            pick in proptest::prelude::any::<u64>(),
            every in 1u64..4,
            begin in proptest::option::of(0u32..30),
        ) {
            use crate::log::{copy_with, CopyOptions, Filtered, PdhCsvLogWriter};
            let log = random_log(seed, bad);
            let copy = |workers: usize, options: &CopyOptions| -> Result<(Vec<u8>, Result<u64, String>), String> {
                let r = random_reader(&log, workers, chunk)?;
                let filter = random_filter(r.header(), pick, every, begin);
                let mut f = Filtered::new(r, &filter).map_err(|e| e.to_string())?;
                let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out.csv");
                let n = copy_with(&mut f, &mut w, options).map_err(|e| e.to_string());
                Ok((w.into_inner(), n))
            };
            let one = copy(0, &CopyOptions::single_threaded());
            let many = copy(workers, &CopyOptions { encoders, batch_cells });
            proptest::prop_assert_eq!(many, one);
        }
    }

    /// An input that gives `bytes` a few at a time up to `fail_at`, then fails.
    struct FailsAt {
        bytes: Vec<u8>,
        pos: usize,
        fail_at: usize,
    }

    impl Read for FailsAt {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let end = self.fail_at.min(self.bytes.len());
            if self.pos >= end {
                return if self.pos < self.bytes.len() {
                    Err(std::io::Error::other("the disk is gone"))
                } else {
                    Ok(0)
                };
            }
            let n = buf.len().min(end - self.pos).min(7);
            buf[..n].copy_from_slice(&self.bytes[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// A log whose input fails part way: the threaded reader gives the records the single
        /// reader gives, then the same error, wherever the chunks were cut (a chunk may end
        /// inside a quoted cell, or after a quote read as text, and be read again on the calling
        /// thread with the text after it up to the failure).
        #[test]
        fn failing_inputs_read_as_one_reader_reads_them(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 1usize..4,
            chunk in 1usize..600,
            fail_at in 0usize..5000,
        ) {
            let log = random_log(seed, bad);
            let read = |workers: usize| -> Result<Vec<Result<Record, String>>, String> {
                let input = FailsAt { bytes: log.clone(), pos: 0, fail_at };
                let mut r = PdhCsvReader::new(input, "failing.csv", CsvReadOptions::default())
                    .map_err(|e| e.to_string())?;
                r.set_parallelism(workers, chunk);
                Ok(records_of(&mut r))
            };
            proptest::prop_assert_eq!(read(workers), read(0));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The scan by 64-byte masks finds the boundary, the lines and the irregular quote that
        /// one search per quote finds, on any text of the bytes that matter (across blocks).
        #[test]
        fn mask_scan_is_the_quote_scan(
            text in proptest::collection::vec(
                proptest::sample::select(&b"\"\"\",,\t\n\n\r1a \xEF"[..]),
                0..300,
            ),
            tsv in proptest::prelude::any::<bool>(),
        ) {
            let sep = if tsv { b'\t' } else { b',' };
            proptest::prop_assert_eq!(
                pdh_csv_chunks::split_point(&text, sep),
                pdh_csv_chunks::split_point_by_quotes(&text, sep)
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// A chunk's rows scanned (`pdh_csv_scan`, with the `csv` crate from the first row it does
        /// not take) are the rows the `csv` crate reads, in either layout and for any column
        /// selection: the same times, values (bit for bit) and error, on generated logs with
        /// blank cells, quoted and unquoted cells, blank lines, typeperf's messages, rows of the
        /// wrong length, bad values and quotes read as text. Chunks are cut where the cutting
        /// thread cuts them.
        #[test]
        fn scanned_chunks_are_csv_chunks(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            pick in proptest::prelude::any::<u64>(),
            by_column in proptest::prelude::any::<bool>(),
            cut in 0usize..2000,
        ) {
            let log = random_log(seed, bad);
            let Ok(mut r) = random_reader(&log, 1, 1 << 20) else {
                return Ok(());
            };
            if !pick.is_multiple_of(4) {
                let keep: Vec<bool> = (0..r.parser.columns).map(|i| pick >> (i % 64) & 1 == 1).collect();
                r.select_columns(&keep);
            }
            let RowSource::Pending(mut text, lines, _) = std::mem::replace(&mut r.source, RowSource::Done) else {
                return Ok(());
            };
            let mut rest = Vec::new();
            text.read_to_end(&mut rest).unwrap();
            // Where the cutting thread would end the first chunk, or the whole text.
            let end = pdh_csv_chunks::split_point(&rest[..cut.min(rest.len())], r.parser.separator).end;
            let chunk = if cut < rest.len() && end > 0 { &rest[..end] } else { &rest[..] };
            if chunk.first() == Some(&0xEF) {
                return Ok(());
            }
            let width = r.parser.width();
            let rows = |mut rows: Rows| {
                rows.lay_out_by_row(width);
                let values: Vec<u64> = rows.values.iter().map(|v| v.to_bits()).collect();
                (rows.times, values, rows.error.map(|e| e.to_string()))
            };
            let scanned = pdh_csv_chunks::parse_chunk(&r.parser, chunk, lines, by_column);
            let by_csv = pdh_csv_chunks::parse_chunk_csv(&r.parser, chunk, lines);
            proptest::prop_assert_eq!(rows(scanned), rows(by_csv));
        }
    }

    /// A reader that reads records only (no values), to compare the two paths of a consumer.
    struct RecordsOnly(PdhCsvReader);

    /// A filter of the columns whose index's bit of `pick` is set (every column when `pick` is a
    /// multiple of 4), every `every`-th record, from `begin` seconds into the random logs' day.
    fn random_filter(
        header: &LogHeader,
        pick: u64,
        every: u64,
        begin: Option<u32>,
    ) -> crate::log::RelogFilter {
        let patterns: Vec<CounterPath> = header
            .counters
            .iter()
            .enumerate()
            .filter(|(i, _)| pick >> (i % 64) & 1 == 1)
            .map(|(_, c)| c.path.clone())
            .collect();
        crate::log::RelogFilter {
            counters: (!pick.is_multiple_of(4)).then(|| crate::log::CounterFilter::new(patterns)),
            begin: begin.and_then(|s| LogTime::from_parts(2014, 2, 1, 0, 0, s, 0)),
            every,
            ..crate::log::RelogFilter::default()
        }
    }

    /// The reader without its `read_columns`: values and records only.
    #[cfg(feature = "arrow")]
    struct ValuesOnly(PdhCsvReader);

    #[cfg(feature = "arrow")]
    impl LogReader for ValuesOnly {
        fn header(&self) -> &LogHeader {
            self.0.header()
        }
        fn select_columns(&mut self, keep: &[bool]) {
            self.0.select_columns(keep)
        }
        fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
            self.0.read_record(record)
        }
        fn read_values(
            &mut self,
            rows: &mut ValueRows,
            max_cells: usize,
        ) -> Result<Option<usize>, LogError> {
            self.0.read_values(rows, max_cells)
        }
    }

    impl LogReader for RecordsOnly {
        fn header(&self) -> &LogHeader {
            self.0.header()
        }
        fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
            self.0.read_record(record)
        }
    }

    /// The reader reading columns, but every column whatever the selection (a filter then keeps
    /// its columns from them).
    #[cfg(feature = "arrow")]
    struct AllColumns(PdhCsvReader);

    #[cfg(feature = "arrow")]
    impl LogReader for AllColumns {
        fn header(&self) -> &LogHeader {
            self.0.header()
        }
        fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
            self.0.read_record(record)
        }
        fn read_columns(
            &mut self,
            columns: &mut ValueColumns,
            max_cells: usize,
        ) -> Result<Option<usize>, LogError> {
            self.0.read_columns(columns, max_cells)
        }
    }

    /// Every batch and the error after them, the batches' columns joined.
    #[cfg(feature = "arrow")]
    fn until_error(
        batches: Vec<Result<arrow_array::RecordBatch, LogError>>,
    ) -> (Vec<Vec<Option<f64>>>, Option<String>) {
        let error = batches
            .iter()
            .find_map(|b| b.as_ref().err().map(|e| e.to_string()));
        let ok: Vec<_> = batches.into_iter().map_while(Result::ok).collect();
        (wide_columns(&ok), error)
    }

    /// Every column of `batches` (time as microseconds), nulls as `None`.
    #[cfg(feature = "arrow")]
    fn wide_columns(batches: &[arrow_array::RecordBatch]) -> Vec<Vec<Option<f64>>> {
        use arrow_array::cast::AsArray;
        let columns = batches.first().map_or(0, |b| b.num_columns());
        (0..columns)
            .map(|c| {
                batches
                    .iter()
                    .flat_map(|b| {
                        let a = b.column(c);
                        if c == 0 {
                            a.as_primitive::<arrow_array::types::TimestampMicrosecondType>()
                                .iter()
                                .map(|t| t.map(|t| t as f64))
                                .collect::<Vec<_>>()
                        } else {
                            a.as_primitive::<arrow_array::types::Float64Type>()
                                .iter()
                                .collect()
                        }
                    })
                    .collect()
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Statistics from rows of values are those from records: the same minimum, mean,
        /// maximum and counts of every column, or the same error.
        #[test]
        fn statistics_of_values_are_those_of_records(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 0usize..4,
            chunk in 1usize..600,
        ) {
            use crate::log::log_statistics;
            let log = random_log(seed, bad);
            let open = || random_reader(&log, workers, chunk);
            let (Ok(mut a), Ok(b)) = (open(), open()) else {
                return Ok(());
            };
            let options = crate::calc::FormatOptions::default();
            let by_values = log_statistics(&mut a, &options).map_err(|e| e.to_string());
            let by_records =
                log_statistics(&mut RecordsOnly(b), &options).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(by_values, by_records);
        }
    }

    #[cfg(feature = "arrow")]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// A Parquet file copied from rows of values (the writer takes values: the log has no raw
        /// samples) is byte for byte the one copied record by record, through a filter, in small
        /// and large batches, with the same result (records or error).
        #[test]
        fn parquet_of_values_is_parquet_of_records(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 0usize..3,
            chunk in 1usize..600,
            pick in proptest::prelude::any::<u64>(),
            every in 1u64..3,
            batch_cells in 1usize..100,
        ) {
            use crate::log::columnar::ParquetLogWriter;
            use crate::log::{copy_with, CopyOptions, Filtered, LogWriter};
            /// The writer without its values: records only.
            struct RecordsWriter(ParquetLogWriter<Vec<u8>>);
            impl LogWriter for RecordsWriter {
                fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
                    self.0.write_header(header)
                }
                fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
                    self.0.write_record(record)
                }
                fn finish(&mut self) -> Result<(), LogError> {
                    self.0.finish()
                }
            }
            let log = random_log(seed, bad);
            let open = || random_reader(&log, workers, chunk);
            let (Ok(a), Ok(b)) = (open(), open()) else {
                return Ok(());
            };
            let filter = random_filter(a.header(), pick, every, None);
            let (Ok(mut a), Ok(mut b)) = (Filtered::new(a, &filter), Filtered::new(b, &filter)) else {
                return Ok(());
            };
            let options = CopyOptions { encoders: 0, batch_cells };
            let mut w = ParquetLogWriter::new("out.parquet", Vec::new());
            let n = copy_with(&mut a, &mut w, &options).map_err(|e| e.to_string());
            let by_values = (n, w.into_finished());
            let mut w = RecordsWriter(ParquetLogWriter::new("out.parquet", Vec::new()));
            let n = copy_with(&mut b, &mut w, &options).map_err(|e| e.to_string());
            let by_records = (n, w.0.into_finished());
            proptest::prop_assert_eq!(&by_values.0, &by_records.0);
            proptest::prop_assert!(by_values.1 == by_records.1, "the files differ");
        }
    }

    #[cfg(feature = "arrow")]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// The wide Arrow form built from columns of values, and from rows of values, is the one
        /// built record by record: the same times, values and nulls, or the same error; from
        /// columns, the batches before an error hold the same rows as from rows of values.
        #[test]
        fn wide_values_are_wide_records(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 0usize..4,
            chunk in 1usize..600,
        ) {
            use crate::log::columnar::WideBatches;
            let log = random_log(seed, bad);
            let open = || random_reader(&log, workers, chunk);
            let (Ok(a), Ok(b), Ok(c)) = (open(), open(), open()) else {
                return Ok(());
            };
            let by_columns = until_error(WideBatches::new(c).collect());
            let a = ValuesOnly(a);
            let by_values = until_error(WideBatches::new(a).collect());
            proptest::prop_assert_eq!(&by_columns, &by_values);
            let by_values = match by_values {
                (columns, None) => Ok(columns),
                (_, Some(e)) => Err(e),
            };
            let by_records = WideBatches::new(RecordsOnly(b))
                .collect::<Result<Vec<_>, _>>()
                .map(|b| wide_columns(&b))
                .map_err(|e| e.to_string());
            proptest::prop_assert_eq!(by_values, by_records);
        }
    }

    #[cfg(feature = "arrow")]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Through a filter (columns, range, every n-th), the wide Arrow form built from columns
        /// is the one built from rows of values (the reader parsing the columns kept only) and the
        /// one built record by record (every column parsed, the filter keeping its own), up to the
        /// same error.
        #[test]
        fn filtered_wide_columns_are_wide_records(
            seed in proptest::prelude::any::<u64>(),
            bad in 0u64..40,
            workers in 0usize..4,
            chunk in 1usize..600,
            pick in proptest::prelude::any::<u64>(),
            every in 1u64..4,
            begin in proptest::option::of(0u32..30),
        ) {
            use crate::log::columnar::WideBatches;
            use crate::log::Filtered;
            let log = random_log(seed, bad);
            let Ok(r) = random_reader(&log, workers, chunk) else {
                return Ok(());
            };
            let filter = random_filter(r.header(), pick, every, begin);
            let open = || random_reader(&log, workers, chunk);
            let (Ok(a), Ok(b), Ok(c), Ok(d)) = (open(), open(), open(), open()) else {
                return Ok(());
            };
            let (Ok(a), Ok(b), Ok(c), Ok(d)) = (
                Filtered::new(a, &filter),
                Filtered::new(ValuesOnly(b), &filter),
                Filtered::new(AllColumns(c), &filter),
                Filtered::new(RecordsOnly(d), &filter),
            ) else {
                return Ok(());
            };
            let kept = until_error(WideBatches::new(a).collect());
            let by_values = until_error(WideBatches::new(b).collect());
            proptest::prop_assert_eq!(&kept, &by_values);
            let all = until_error(WideBatches::new(c).collect());
            let by_records = WideBatches::new(d)
                .collect::<Result<Vec<_>, _>>()
                .map(|b| wide_columns(&b))
                .map_err(|e| e.to_string());
            let all = match all {
                (columns, None) => Ok(columns),
                (_, Some(e)) => Err(e),
            };
            proptest::prop_assert_eq!(all, by_records);
        }
    }

    /// A last row after a blank line, without a line break at its end (LF lines): its errors name
    /// its own line on every path (the `csv` crate's record position is before the blank line it
    /// skipped, which once made the one-reader path name the line before; `csv_log` fuzz finding).
    #[test]
    fn last_row_after_a_blank_line_names_its_line() {
        for log in [
            &b"\"(PDH-CSV 4.0)\",\"\\\\H\\A\\B\"\n\n\"x\",\"1\""[..],
            b"\r\n\"(PDH-TSV 4.0) (RTZ na\"\n\n\"(PDH-TSV \"(PDH-CSV 4.0) (i",
        ] {
            for (workers, chunk) in [
                (0, 1 << 20),
                (1, 1 << 20),
                (2, 1 << 20),
                (2, 1),
                (2, 7),
                (1, 11),
            ] {
                let read = read_log(log, workers, chunk, 0).unwrap();
                let line = if log.starts_with(b"\r") { 4 } else { 3 };
                assert!(
                    matches!(read.last(), Some(Err(e)) if e.contains(&format!("line {line}, column 1"))),
                    "{workers} {chunk}: {read:?}"
                );
            }
        }
    }

    /// The quote scan finds the last record end, counts lines and stops at quotes the `csv` crate
    /// reads as text.
    #[test]
    fn split_points() {
        use pdh_csv_chunks::Split;
        let split_point = |text: &[u8], sep: u8| {
            let by_quotes = pdh_csv_chunks::split_point_by_quotes(text, sep);
            assert_eq!(
                pdh_csv_chunks::split_point(text, sep),
                by_quotes,
                "{text:?}"
            );
            by_quotes
        };
        let split = |end, lines, irregular| Split {
            end,
            lines,
            irregular,
        };
        assert_eq!(
            split_point(b"\"a\",\"b\"\r\n\"c\"", b','),
            split(9, 1, false)
        );
        assert_eq!(
            split_point(b"\"a\nb\",\"c\"\n\"d", b','),
            split(10, 2, false)
        );
        assert_eq!(split_point(b"\"a\"\"\n\",1\nx", b','), split(9, 2, false));
        // The last line break is not followed by anything yet.
        assert_eq!(split_point(b"\"a\"\n\"b\"\n", b','), split(4, 1, false));
        // Not before a byte-order mark's first byte.
        assert_eq!(
            split_point(b"1\n\xEF\xBB\xBF2\n3", b','),
            split(7, 2, false)
        );
        assert_eq!(split_point(b"1\n2\"3\n4", b','), split(2, 1, true));
        assert_eq!(split_point(b"\"1\"2\n4", b','), split(0, 0, true));
        assert_eq!(split_point(b"\"1\"\t2\n4", b'\t'), split(6, 1, false));
        assert_eq!(split_point(b"\"1\"\t2\n4", b','), split(0, 0, true));
        // Across 64-byte blocks: a quoted line feed, an escaped quote on the 64th byte.
        let long = format!("\"{}\n\",\"x\"\n\"{}\"\n1", "a".repeat(62), "b".repeat(70));
        assert_eq!(split_point(long.as_bytes(), b','), split(143, 3, false));
        let escaped = format!("\"{}\"\"\",1\n\"a\"b\n", "a".repeat(61));
        assert_eq!(split_point(escaped.as_bytes(), b','), split(68, 1, true));
        let escaped = format!("\"{}\"\"\",1\n\"a\"b\n", "a".repeat(62));
        assert_eq!(split_point(escaped.as_bytes(), b','), split(69, 1, true));
        // Across 64-byte blocks: a quoted cell and a line end on both sides of the 64th byte.
        let long = format!("\"{}\n\",\"x\"\n\"{}\"\n1", "a".repeat(62), "b".repeat(70));
        assert_eq!(split_point(long.as_bytes(), b','), split(143, 3, false));
        let escaped = format!("\"{}\"\"\",1\n\"a\"b\n", "a".repeat(61));
        assert_eq!(split_point(escaped.as_bytes(), b','), split(68, 1, true));
    }
}
