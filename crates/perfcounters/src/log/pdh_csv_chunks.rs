//! The rows of a PDH-CSV / PDH-TSV log parsed on several threads, handed over in order.
//!
//! One thread reads the text after the header line and cuts it into chunks of about
//! [`CHUNK_BYTES`] at record boundaries; worker threads (as many as the machine has cores) parse
//! the chunks ([`parse_chunk`]: scanned by `pdh_csv_scan`, the `csv` crate and [`RowParser`] from
//! the first row the scan does not take), giving the records the single-threaded reader gives;
//! the reading thread takes the parsed chunks back in order (the log's ordered worker pool,
//! `pool`).
//!
//! A boundary is found by following the quotes from the start of a record ([`split_point`]). Quote
//! parity tells where a record ends only where every quote opens or closes a quoted cell: a quote
//! inside an unquoted cell, or a closing quote followed by something else than a separator or a line
//! end, is read by the `csv` crate as text. From such a quote on, the rest of the log is parsed by
//! one `csv` reader on the cutting thread, as the single-threaded reader does. Logs written by
//! Windows never contain one.

use std::io::{Cursor, Read};
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
    let scanned = pdh_csv_scan::scan(parser, chunk, by_column);
    let mut out = Rows {
        times: scanned.times,
        values: scanned.values,
        error: None,
        by_column: scanned.by_column,
    };
    let Some(resume) = scanned.stop else {
        return out;
    };
    out.lay_out_by_row(parser.width());
    let (before, rest) = chunk.split_at(resume.at.min(chunk.len()));
    let lines = lines + memchr::memchr_iter(b'\n', before).count() as u64;
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

/// Parses a chunk of whole records with the `csv` crate alone, row after row; `lines` is the
/// number of lines before it. What [`parse_chunk`] is tested against.
#[cfg(test)]
pub(crate) fn parse_chunk_csv(parser: &RowParser, chunk: &[u8], lines: u64) -> Rows {
    let mut out = Rows::with_capacity(1, parser.width());
    let mut csv = csv_reader(chunk, parser.separator);
    out.parse(parser, &mut csv, chunk, lines);
    out
}

/// What a worker gets: text to parse, or rows parsed by the cutting thread.
enum Job {
    Text(Vec<u8>, u64),
    Parsed(Rows),
}

/// Rows parsed on other threads, taken in order.
#[derive(Debug)]
pub(crate) struct Pipeline {
    /// Worker `i` parses chunks `i`, `i + n`, `i + 2n` …
    parsed: Collector<Rows>,
    /// Where an error of the pool is reported.
    source: String,
    /// The workers and the cutting thread, joined when the pipeline is dropped.
    threads: Vec<JoinHandle<()>>,
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
        let (mut jobs, parsed, ends) = pool::ordered::<Job, Rows>(workers);
        let mut threads = Vec::with_capacity(ends.len() + 1);
        for worker in ends {
            let parser = Arc::clone(&parser);
            threads.push(std::thread::spawn(move || {
                worker.run(|job| {
                    let mut rows = match job {
                        Job::Text(chunk, lines) => parse_chunk(&parser, &chunk, lines, by_column),
                        Job::Parsed(rows) => rows,
                    };
                    if by_column {
                        rows.lay_out_by_column(parser.width());
                    }
                    rows
                });
            }));
        }
        let source = parser.source.clone();
        threads.push(std::thread::spawn(move || {
            cut(&parser, first, text, lines, &mut jobs, chunk_bytes)
        }));
        Pipeline {
            parsed,
            source,
            threads,
        }
    }

    /// The next parsed rows, `None` at the end.
    pub(crate) fn next(&mut self) -> Option<Rows> {
        match self.parsed.next() {
            Ok(rows) => rows,
            Err(WorkerStopped) => Some(Rows {
                error: Some(LogError::internal(&self.source, "a parsing thread stopped")),
                ..Rows::default()
            }),
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
        for thread in self.threads.drain(..) {
            // A panic of a thread is of no use once the reader is gone.
            let _ = thread.join();
        }
    }
}

/// The cutting thread: reads `text`, sends chunks to the workers in turn.
fn cut(
    parser: &RowParser,
    mut buf: Vec<u8>,
    mut text: Box<dyn Read + Send>,
    mut lines: u64,
    jobs: &mut Feeder<Job>,
    chunk_bytes: usize,
) {
    let mut send = |job: Job| jobs.send(job);
    let mut want = chunk_bytes;
    let mut eof = false;
    loop {
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
                send(Job::Text(buf, lines));
            }
            return;
        }
        let split = split_point(&buf, parser.separator);
        if split.end > 0 {
            let rest = buf.get(split.end..).unwrap_or(&[]).to_vec();
            buf.truncate(split.end);
            if !send(Job::Text(std::mem::replace(&mut buf, rest), lines)) {
                return;
            }
            lines += split.lines;
            want = chunk_bytes.max(buf.len() + chunk_bytes / 2);
        }
        if let Some(e) = failed {
            // The records before the failure are delivered, then the error.
            let rows = Rows {
                error: Some(csv_error(&parser.source, csv::Error::from(e))),
                ..Rows::default()
            };
            send(Job::Parsed(rows));
            return;
        }
        if split.irregular && split.end == 0 {
            // The rest is parsed here by one reader, as the single-threaded path does.
            let mut csv = csv_reader(Tracked::new(Cursor::new(buf).chain(text)), parser.separator);
            let mut row = csv::ByteRecord::new();
            loop {
                let mut rows = Rows::with_capacity(64, parser.width());
                let mut more = true;
                while rows.times.len() < 64 && rows.error.is_none() {
                    match csv.read_byte_record(&mut row) {
                        Ok(true) => {}
                        Ok(false) => {
                            more = false;
                            break;
                        }
                        Err(e) => {
                            rows.error = Some(csv_error(&parser.source, e));
                            break;
                        }
                    }
                    let lf = csv.get_ref().lf_before(csv.position().byte());
                    rows.push(parser, &row, csv.position(), lines, lf);
                }
                more &= rows.error.is_none();
                if !send(Job::Parsed(rows)) || !more {
                    return;
                }
            }
        }
        if split.end == 0 {
            // A record longer than the buffer.
            want = buf.len() * 2;
        }
    }
}
