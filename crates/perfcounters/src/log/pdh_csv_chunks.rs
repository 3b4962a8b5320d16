//! The rows of a PDH-CSV / PDH-TSV log parsed on several threads, handed over in order.
//!
//! One thread reads the text after the header line and cuts it into chunks of about
//! [`CHUNK_BYTES`], each after its last line feed; worker threads (as many as the machine has
//! cores) parse the chunks ([`parse_chunk`]: scanned by `pdh_csv_scan`, the `csv` crate and
//! [`RowParser`] from the first row the scan does not take), giving the records the
//! single-threaded reader gives; the calling thread takes the parsed chunks back in order (the
//! log's ordered worker pool, `pool`).
//!
//! A line feed ends a record unless it is inside a quoted cell, which only the quotes from the
//! log's start can tell. The cut does not follow them: it is checked by the parsing. A chunk that
//! starts where a record starts and whose rows the scan takes to its end ends where a record ends
//! (the scan takes rows of plain cells only, each ended by a line break outside any quote), so
//! the next chunk starts where a record starts, and so on from the first. A chunk whose scan
//! stops follows its quotes from that row on ([`split_point`]): its end is a record's end when
//! every quote opens or closes a quoted cell and none is open at the end. Only when that fails
//! (a line feed in a quoted cell at the cut, a quote that the `csv` crate reads as text: logs
//! written by Windows have neither) is the rest of the log, from the chunk's last row known,
//! parsed by one `csv` reader on the calling thread, with the text the later chunks held, as the
//! single-threaded reader parses it ([`Pipeline::next`]).
//!
//! Following every quote of every chunk on the cutting thread cost 44.6 million of the 356
//! million instructions of a CSV → CSV conversion of a 2,000-row log of six-decimal values
//! (callgrind), on the thread that feeds both cores.

use std::io::{self, Cursor, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::error::LogError;
use super::model::{transpose, LogTime};
use super::pdh_csv_row::{csv_error, csv_reader, RowParser, Tracked};
use super::pdh_csv_scan;
use super::pool::{self, Collector, Feeder, WorkerStopped};

/// The size of a chunk of text parsed by one worker (a record longer than that makes a longer one).
pub(crate) const CHUNK_BYTES: usize = 1 << 20;

/// Where a chunk may end ([`split_point`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Split {
    /// The end of the last record known to end in the text (after its `\n`); 0 when none.
    pub(crate) end: usize,
    /// The `\n` bytes before `end` (the `csv` crate counts lines by them).
    pub(crate) lines: u64,
    /// Whether the scan stopped at a quote that the `csv` crate reads as text (see the module
    /// documentation); no boundary after it is known.
    pub(crate) irregular: bool,
}

/// Follows the quotes of `text`, which starts at the start of a record, and returns the end of the
/// last record that ends in it. A boundary is only put before a byte known not to start a UTF-8
/// byte-order mark (a `csv` reader started there would drop it).
///
/// The quotes and line feeds are found 64 bytes at a time as bit masks ([`quotes_and_lines`]),
/// then taken in order: a search per quote (one every few bytes where every cell is quoted, as
/// relog writes them) cost the cutting thread 11 instructions per byte of the log and made it the
/// bound of the filtered conversion (callgrind, `examples/log_profile.rs`).
pub(crate) fn split_point(text: &[u8], separator: u8) -> Split {
    let ends_cell = |b: u8| b == separator || b == b'\n' || b == b'\r';
    let mut split = Split {
        end: 0,
        lines: 0,
        irregular: false,
    };
    let mut lines = 0u64;
    let mut quoted = false;
    // The first byte of the next block is the second quote of an escaped quote.
    let mut skip_first = false;
    let mut base = 0usize;
    while base < text.len() {
        let block = text.get(base..).unwrap_or(&[]);
        let mut events = quotes_and_lines(block);
        if skip_first {
            events &= !1;
            skip_first = false;
        }
        while events != 0 {
            let i = events.trailing_zeros() as usize;
            events &= events - 1;
            let at = base + i;
            let next = text.get(at + 1).copied();
            if text.get(at) == Some(&b'\n') {
                lines += 1;
                if !quoted && next.is_some_and(|b| b != 0xEF) {
                    split.end = at + 1;
                    split.lines = lines;
                }
            } else if quoted {
                match next {
                    // An escaped quote inside the cell: its second quote is not an event.
                    Some(b'"') => {
                        if i == 63 {
                            skip_first = true;
                        } else {
                            events &= !(1u64 << (i + 1));
                        }
                    }
                    Some(b) if ends_cell(b) => quoted = false,
                    None => return split,
                    Some(_) => {
                        split.irregular = true;
                        return split;
                    }
                }
            } else {
                let starts_cell = at == 0 || text.get(at - 1).is_some_and(|&b| ends_cell(b));
                if !starts_cell {
                    split.irregular = true;
                    return split;
                }
                quoted = true;
            }
        }
        base += 64;
    }
    split
}

/// One bit per byte of the first 64 bytes of `text` (fewer at its end): its quotes and line
/// feeds. Eight bytes at a time: a byte equal to `c` is a zero byte of `word ^ c…c`, which sets
/// the top bit of its byte in `!(((x & 0x7f…) + 0x7f…) | x | 0x7f…)` (exactly, no carry between
/// bytes), and one multiplication gathers the eight top bits.
fn quotes_and_lines(text: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let zero_bytes = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    let mut padded = [0u8; 64];
    let block: &[u8] = match text.get(..64) {
        Some(block) => block,
        None => {
            let n = text.len().min(64);
            if let (Some(to), Some(from)) = (padded.get_mut(..n), text.get(..n)) {
                to.copy_from_slice(from);
            }
            &padded
        }
    };
    let mut events = 0u64;
    for (k, word) in block.chunks_exact(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let v = u64::from_le_bytes(bytes);
        let hits =
            zero_bytes(v ^ (ONES * u64::from(b'"'))) | zero_bytes(v ^ (ONES * u64::from(b'\n')));
        events |= ((hits >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    events
}

/// [`split_point`] with one search per quote: the reference the tests hold it to.
#[cfg(test)]
pub(crate) fn split_point_by_quotes(text: &[u8], separator: u8) -> Split {
    let ends_cell = |b: u8| b == separator || b == b'\n' || b == b'\r';
    let mut split = Split {
        end: 0,
        lines: 0,
        irregular: false,
    };
    let mut lines = 0u64;
    let mut quoted = false;
    let mut pos = 0usize;
    while let Some(found) = text
        .get(pos..)
        .and_then(|rest| memchr::memchr2(b'"', b'\n', rest))
    {
        let at = pos + found;
        let next = text.get(at + 1).copied();
        if text.get(at) == Some(&b'\n') {
            lines += 1;
            if !quoted && next.is_some_and(|b| b != 0xEF) {
                split.end = at + 1;
                split.lines = lines;
            }
            pos = at + 1;
        } else if quoted {
            match next {
                // An escaped quote inside the cell.
                Some(b'"') => pos = at + 2,
                Some(b) if ends_cell(b) => {
                    quoted = false;
                    pos = at + 1;
                }
                None => break,
                Some(_) => {
                    split.irregular = true;
                    break;
                }
            }
        } else {
            let starts_cell = at == 0 || text.get(at - 1).is_some_and(|&b| ends_cell(b));
            if !starts_cell {
                split.irregular = true;
                break;
            }
            quoted = true;
            pos = at + 1;
        }
    }
    split
}

/// Parsed rows: local time stamps and their values, one value per selected column (NaN for no
/// value: the values read are finite), one row after the other or, when `by_column`, one column
/// after the other; then, when parsing stopped at an error, the error.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    pub(crate) times: Vec<LogTime>,
    pub(crate) values: Vec<f64>,
    pub(crate) error: Option<LogError>,
    pub(crate) by_column: bool,
}

impl Rows {
    fn with_capacity(rows: usize, columns: usize) -> Self {
        Rows {
            times: Vec::with_capacity(rows),
            values: Vec::with_capacity(rows * columns),
            error: None,
            by_column: false,
        }
    }

    /// The values laid out column after column (`width` values per row).
    pub(crate) fn lay_out_by_column(&mut self, width: usize) {
        if !self.by_column {
            self.values = transpose(&self.values, self.times.len(), width);
            self.by_column = true;
        }
    }

    /// The values laid out row after row (`width` values per row).
    pub(crate) fn lay_out_by_row(&mut self, width: usize) {
        if self.by_column {
            self.values = transpose(&self.values, width, self.times.len());
            self.by_column = false;
        }
    }

    /// Parses every record of `csv`, whose text has `bytes` bytes; `lines` is the number of lines
    /// before its first byte.
    fn parse(
        &mut self,
        parser: &RowParser,
        csv: &mut csv::Reader<&[u8]>,
        chunk: &[u8],
        lines: u64,
    ) {
        let bytes = chunk.len();
        let mut row = csv::ByteRecord::new();
        loop {
            if self.times.len() == 1 {
                // Room for the rest, as long as the first row.
                let first = usize::try_from(csv.position().byte())
                    .unwrap_or(bytes)
                    .max(1);
                self.times.reserve(bytes / first);
                self.values.reserve(bytes / first * parser.width());
            }
            match csv.read_byte_record(&mut row) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    self.error = Some(csv_error(&parser.source, e));
                    return;
                }
            }
            let after = csv.position().byte();
            let lf = usize::try_from(after)
                .ok()
                .and_then(|a| a.checked_sub(1))
                .and_then(|a| chunk.get(a))
                .map(|&b| b == b'\n');
            if !self.push(parser, &row, csv.position(), lines, lf) {
                return;
            }
        }
    }

    /// Parses one record; false when it was an error (then kept in `self.error`).
    pub(crate) fn push(
        &mut self,
        parser: &RowParser,
        row: &csv::ByteRecord,
        after: &csv::Position,
        lines: u64,
        lf: Option<bool>,
    ) -> bool {
        let start = self.values.len();
        self.values.resize(start + parser.width(), f64::NAN);
        let out = self.values.get_mut(start..).unwrap_or(&mut []);
        match parser.parse(row, after, lines, lf, out) {
            Ok(Some(time)) => {
                self.times.push(time);
                true
            }
            Ok(None) => {
                self.values.truncate(start);
                true
            }
            Err(e) => {
                self.values.truncate(start);
                self.error = Some(e);
                false
            }
        }
    }
}

/// Parses a chunk of whole records; `lines` is the number of lines before it. The rows are
/// scanned (`pdh_csv_scan`) straight into the layout asked for (`by_column`); from the first row
/// the scan does not take, the rest is read by the `csv` crate, as `parse_chunk_csv` (the tests'
/// reference) reads a whole chunk, and laid out row after row.
pub(crate) fn parse_chunk(parser: &RowParser, chunk: &[u8], lines: u64, by_column: bool) -> Rows {
    let (rows, stop) = scan_chunk(parser, chunk, by_column, None);
    match stop {
        None => rows,
        Some(resume) => read_rest(parser, chunk, lines, rows, &resume),
    }
}

/// The rows of `chunk` the scan takes, and where it stopped when it did not reach the end;
/// `line_feeds` when they were counted.
fn scan_chunk(
    parser: &RowParser,
    chunk: &[u8],
    by_column: bool,
    line_feeds: Option<u64>,
) -> (Rows, Option<pdh_csv_scan::Resume>) {
    let line_feeds = line_feeds.and_then(|n| usize::try_from(n).ok());
    let scanned = pdh_csv_scan::scan(parser, chunk, by_column, line_feeds);
    let rows = Rows {
        times: scanned.times,
        values: scanned.values,
        error: None,
        by_column: scanned.by_column,
    };
    (rows, scanned.stop)
}

/// [`parse_chunk`] from where the scan stopped: the rest of `chunk` read by the `csv` crate
/// after the rows `out` holds.
fn read_rest(
    parser: &RowParser,
    chunk: &[u8],
    lines: u64,
    mut out: Rows,
    resume: &pdh_csv_scan::Resume,
) -> Rows {
    out.lay_out_by_row(parser.width());
    let rest = chunk.get(resume.at..).unwrap_or(&[]);
    let lines = lines_before(chunk, resume.at, lines);
    let mut csv = csv_reader(rest, parser.separator);
    if resume.skip_one {
        // The last row scanned, read again: the `csv` reader starts where a record starts.
        let mut row = csv::ByteRecord::new();
        if let Err(e) = csv.read_byte_record(&mut row) {
            out.error = Some(csv_error(&parser.source, e));
            return out;
        }
    }
    out.parse(parser, &mut csv, rest, lines);
    out
}

/// The lines before byte `at` of `chunk`, which has `lines` lines before it.
fn lines_before(chunk: &[u8], at: usize, lines: u64) -> u64 {
    let before = chunk.get(..at).unwrap_or(chunk);
    lines + memchr::memchr_iter(b'\n', before).count() as u64
}

/// Whether `text`, which starts where a record starts and ends with a line feed, ends where a
/// record ends: its quotes followed ([`split_point`], given a byte after the line feed to see),
/// none read as text by the `csv` crate and none open at the end.
fn ends_a_record(text: &[u8], separator: u8) -> bool {
    let mut with_next = Vec::with_capacity(text.len() + 1);
    with_next.extend_from_slice(text);
    with_next.push(b' ');
    let split = split_point(&with_next, separator);
    !split.irregular && split.end == text.len()
}

/// Parses a chunk of whole records with the `csv` crate alone, row after row; `lines` is the
/// number of lines before it. What [`parse_chunk`] is tested against.
#[cfg(test)]
pub(crate) fn parse_chunk_csv(parser: &RowParser, chunk: &[u8], lines: u64) -> Rows {
    let mut out = Rows::with_capacity(1, parser.width());
    let mut csv = csv_reader(chunk, parser.separator);
    out.parse(parser, &mut csv, chunk, lines);
    out
}

/// What a worker gets.
enum Job {
    /// A chunk of text: whole records when every chunk before it ended where a record ends, the
    /// number of lines before it, and, when it was cut after a line feed of the cutting thread's
    /// choosing (more text follows) rather than at the end of the log, the line feeds it holds.
    Text {
        text: Vec<u8>,
        lines: u64,
        cut: Option<u64>,
    },
    /// Reading the log failed after `text` (which follows the chunks before and has `lines`
    /// lines before it): read on the calling thread, where the `csv` crate decides which of its
    /// records were whole before the failure, as it does for one reader.
    Failed {
        text: Vec<u8>,
        lines: u64,
        error: io::Error,
    },
}

/// What a worker gives back: the rows it parsed; the text, for the calling thread to read again
/// should an earlier chunk not end where a record ends; and a reading error to report after them.
struct Parsed {
    rows: Rows,
    /// Set when the chunk's rows are known only up to a point (see the module's documentation).
    redo: Option<Redo>,
    text: Vec<u8>,
    failed: Option<io::Error>,
}

impl Parsed {
    /// The chunk's text from byte `at` on, then its reading error if any, as input for the
    /// `csv` reader of [`Pipeline::read_here`].
    fn into_input(self, at: usize) -> Box<dyn Read + Send> {
        let mut text = Cursor::new(self.text);
        text.set_position(at as u64);
        match self.failed {
            Some(e) => Box::new(text.chain(FailedRead(Some(e)))),
            None => Box::new(text),
        }
    }
}

/// Where the rows of a chunk stop being known: the rest of the log is read from byte `at` of its
/// text (a record's start; the record there is read and dropped when `skip_one`, it is the last
/// one scanned), which has `lines` lines before it.
struct Redo {
    at: usize,
    skip_one: bool,
    lines: u64,
}

/// A worker's parse of a job.
fn parse_job(parser: &RowParser, job: Job, by_column: bool) -> Parsed {
    let (text, lines, cut) = match job {
        Job::Text { text, lines, cut } => (text, lines, cut),
        Job::Failed { text, lines, error } => {
            return Parsed {
                rows: Rows::default(),
                redo: Some(Redo {
                    at: 0,
                    skip_one: false,
                    lines,
                }),
                text,
                failed: Some(error),
            }
        }
    };
    let (mut rows, stop) = scan_chunk(parser, &text, by_column, cut);
    let mut redo = None;
    if let Some(resume) = stop {
        let rest = text.get(resume.at..).unwrap_or(&[]);
        if cut.is_none() || ends_a_record(rest, parser.separator) {
            rows = read_rest(parser, &text, lines, rows, &resume);
        } else {
            redo = Some(Redo {
                at: resume.at,
                skip_one: resume.skip_one,
                lines: lines_before(&text, resume.at, lines),
            });
        }
    }
    if by_column {
        rows.lay_out_by_column(parser.width());
    }
    Parsed {
        rows,
        redo,
        text,
        failed: None,
    }
}

/// Rows parsed on other threads, taken in order; or, from a chunk whose end is not known to end a
/// record, the rest of the log read here by one `csv` reader.
pub(crate) struct Pipeline {
    /// Worker `i` parses chunks `i`, `i + n`, `i + 2n` …
    parsed: Collector<Parsed>,
    parser: Arc<RowParser>,
    /// Tells the cutting thread to stop and hand back what it has not sent.
    stop: Arc<AtomicBool>,
    /// The cutting thread: what it had not sent when told to stop.
    cutting: Option<JoinHandle<Option<Unsent>>>,
    /// The workers, joined when the pipeline is dropped.
    workers: Vec<JoinHandle<()>>,
    /// The rest of the log read here, once a chunk's end was not known to end a record.
    rest: Option<Box<Sequential>>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("source", &self.parser.source)
            .field("sequential", &self.rest.is_some())
            .finish_non_exhaustive()
    }
}

/// What the cutting thread had not sent when told to stop: the text read and the input.
struct Unsent {
    buf: Vec<u8>,
    text: Box<dyn Read + Send>,
}

/// The rest of a log read by one `csv` reader: its records, in batches.
struct Sequential {
    csv: csv::Reader<Tracked<Box<dyn Read + Send>>>,
    row: csv::ByteRecord,
    /// Lines before the reader's first byte.
    lines: u64,
    done: bool,
}

/// Records per batch of [`Sequential`].
const SEQUENTIAL_ROWS: usize = 64;

impl Sequential {
    /// The next records, `None` after the last (or after an error, which ends the batch that
    /// holds it).
    fn next(&mut self, parser: &RowParser) -> Option<Rows> {
        if self.done {
            return None;
        }
        let mut rows = Rows::with_capacity(SEQUENTIAL_ROWS, parser.width());
        while rows.times.len() < SEQUENTIAL_ROWS && rows.error.is_none() {
            match self.csv.read_byte_record(&mut self.row) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    rows.error = Some(csv_error(&parser.source, e));
                    break;
                }
            }
            let lf = self.csv.get_ref().lf_before(self.csv.position().byte());
            rows.push(parser, &self.row, self.csv.position(), self.lines, lf);
        }
        self.done |= rows.error.is_some();
        Some(rows)
    }
}

/// A reader that fails with an error (once), at the end of the text read before it failed.
struct FailedRead(Option<io::Error>);

impl Read for FailedRead {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

impl Pipeline {
    /// Starts the threads. `text` follows the header; `first` is its beginning already read (no
    /// longer in `text`), `lines` the number of lines before it; `workers` ≥ 1. With `by_column`,
    /// the workers lay the rows they parsed out column after column ([`Rows::lay_out_by_column`]).
    pub(crate) fn start(
        parser: Arc<RowParser>,
        first: Vec<u8>,
        text: Box<dyn Read + Send>,
        lines: u64,
        workers: usize,
        chunk_bytes: usize,
        by_column: bool,
    ) -> Self {
        let (mut jobs, parsed, ends) = pool::ordered::<Job, Parsed>(workers);
        let mut threads = Vec::with_capacity(ends.len());
        for worker in ends {
            let parser = Arc::clone(&parser);
            threads.push(std::thread::spawn(move || {
                worker.run(|job| parse_job(&parser, job, by_column));
            }));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let told = Arc::clone(&stop);
        let cutting =
            std::thread::spawn(move || cut(first, text, lines, &mut jobs, chunk_bytes, &told));
        Pipeline {
            parsed,
            parser,
            stop,
            cutting: Some(cutting),
            workers: threads,
            rest: None,
        }
    }

    /// The next parsed rows, `None` at the end.
    pub(crate) fn next(&mut self) -> Option<Rows> {
        if let Some(rest) = &mut self.rest {
            return rest.next(&self.parser);
        }
        let mut parsed = match self.parsed.next() {
            Ok(parsed) => parsed?,
            Err(WorkerStopped) => return Some(self.internal("a parsing thread stopped")),
        };
        let Some(redo) = parsed.redo.take() else {
            return Some(parsed.rows);
        };
        let rows = std::mem::take(&mut parsed.rows);
        match self.read_here(parsed.into_input(redo.at), &redo) {
            Ok(rest) => {
                self.rest = Some(Box::new(rest));
                Some(rows)
            }
            Err(e) => Some(Rows {
                error: Some(e),
                ..rows
            }),
        }
    }

    /// Stops the threads and reads the rest of the log here, from `text` (the rest of the chunk
    /// whose end is not known to end a record) on: the later chunks' text, then what the cutting
    /// thread had not sent, then its input.
    fn read_here(
        &mut self,
        text: Box<dyn Read + Send>,
        redo: &Redo,
    ) -> Result<Sequential, LogError> {
        self.stop.store(true, Ordering::Release);
        let mut input = text;
        loop {
            let parsed = match self.parsed.next() {
                Ok(Some(parsed)) => parsed,
                Ok(None) => break,
                Err(WorkerStopped) => {
                    return Err(LogError::internal(
                        &self.parser.source,
                        "a parsing thread stopped",
                    ))
                }
            };
            input = Box::new(input.chain(parsed.into_input(0)));
        }
        let unsent = match self.cutting.take().map(JoinHandle::join) {
            Some(Ok(unsent)) => unsent,
            _ => {
                return Err(LogError::internal(
                    &self.parser.source,
                    "the cutting thread stopped",
                ))
            }
        };
        if let Some(Unsent { buf, text }) = unsent {
            input = Box::new(input.chain(Cursor::new(buf)).chain(text));
        }
        let mut rest = Sequential {
            csv: csv_reader(Tracked::new(input), self.parser.separator),
            row: csv::ByteRecord::new(),
            lines: redo.lines,
            done: false,
        };
        if redo.skip_one {
            // The last row scanned, read again: the `csv` reader starts where a record starts.
            rest.csv
                .read_byte_record(&mut rest.row)
                .map_err(|e| csv_error(&self.parser.source, e))?;
        }
        Ok(rest)
    }

    fn internal(&self, message: &str) -> Rows {
        Rows {
            error: Some(LogError::internal(&self.parser.source, message)),
            ..Rows::default()
        }
    }
}

impl Drop for Pipeline {
    /// Closes the workers' outputs and waits for the threads: a worker stops at its next
    /// hand-over (blocked or not), and the cutting thread at its next chunk once the workers are
    /// gone, so a reader dropped before the end leaves no thread behind (over a stream whose
    /// read blocks, the drop waits for that read to return).
    fn drop(&mut self) {
        self.parsed.close();
        // A panic of a thread is of no use once the reader is gone.
        if let Some(cutting) = self.cutting.take() {
            let _ = cutting.join();
        }
        for thread in self.workers.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The end of the chunk cut from `buf`: after its last line feed that is followed by a byte, and
/// not by one that may start a UTF-8 byte-order mark (a `csv` reader started there would drop
/// it); 0 when there is none.
fn cut_end(buf: &[u8]) -> usize {
    let mut end = buf.len();
    while let Some(i) = buf.get(..end).and_then(|b| memchr::memrchr(b'\n', b)) {
        if buf.get(i + 1).is_some_and(|&b| b != 0xEF) {
            return i + 1;
        }
        end = i;
    }
    0
}

/// The cutting thread: reads `text`, sends chunks to the workers in turn; told to `stop`, it
/// returns what it has not sent.
fn cut(
    mut buf: Vec<u8>,
    mut text: Box<dyn Read + Send>,
    mut lines: u64,
    jobs: &mut Feeder<Job>,
    chunk_bytes: usize,
    stop: &AtomicBool,
) -> Option<Unsent> {
    let mut want = chunk_bytes;
    let mut eof = false;
    loop {
        if stop.load(Ordering::Acquire) {
            return Some(Unsent { buf, text });
        }
        // Fill the buffer to `want` bytes.
        let mut failed = None;
        if !eof && buf.len() < want {
            // Read into the buffer's spare room (no zeroing first); what was read before an
            // error stays.
            let more = (want - buf.len()) as u64;
            buf.reserve(want - buf.len());
            match text.by_ref().take(more).read_to_end(&mut buf) {
                Ok(n) => eof = (n as u64) < more,
                Err(e) => failed = Some(e),
            }
        }
        if eof && failed.is_none() {
            if !buf.is_empty() {
                jobs.send(Job::Text {
                    text: buf,
                    lines,
                    cut: None,
                });
            }
            return None;
        }
        if let Some(error) = failed {
            jobs.send(Job::Failed {
                text: buf,
                lines,
                error,
            });
            return None;
        }
        let end = cut_end(&buf);
        if end > 0 {
            let rest = buf.get(end..).unwrap_or(&[]).to_vec();
            buf.truncate(end);
            let chunk_lines = memchr::memchr_iter(b'\n', &buf).count() as u64;
            let job = Job::Text {
                text: std::mem::replace(&mut buf, rest),
                lines,
                cut: Some(chunk_lines),
            };
            if !jobs.send(job) {
                return None;
            }
            lines += chunk_lines;
            want = chunk_bytes.max(buf.len() + chunk_bytes / 2);
        } else {
            // A record longer than the buffer.
            want = buf.len() * 2;
        }
    }
}
