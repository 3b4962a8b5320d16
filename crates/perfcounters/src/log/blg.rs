//! Performance Monitor binary logs (`.blg`) as a [`LogReader`]: raw samples with their counter
//! types and time bases, for relog, statistics and replay.
//!
//! The decoding is [`crate::format::blg`]'s; this adapter gives the log model what it needs:
//!
//! * the columns are complete before the first record, so the log is read twice: a first pass
//!   finds every counter instance (instances appear and vanish during a log), a second hands out the
//!   records. Memory stays flat: a buffer per pass or part, the columns, a few batches of records.
//!   The first pass of a long log is split into ranges of whole buffers scanned on every core,
//!   the columns merged in file order ([`BlgLogReader::open`]). The second pass of a long log is
//!   decoded on a thread of its own, the records handed over in order in batches (a few of them
//!   under way), ending as on one thread: after the same records, with the same error;
//! * columns are in the order relog prints them ([`BlgLog::display_order`]);
//! * each cell is a [`Cell::Raw`] (status and raw sample), or blank where an instance is absent;
//! * a record's time is the sample's local time turned into UTC by the log's
//!   `TIME_ZONE_INFORMATION` (daylight saving time included, see [`crate::log::zone`]); the header's
//!   time zone carries those rules, with the name and bias in effect at the first sample
//!   ([`TimeZoneInformation::zone_at`](crate::format::blg::TimeZoneInformation::zone_at)), the name
//!   resolved from `@tzres.dll` references.
//!
//! A log damaged part-way (cut off, or a malformed record) yields the records before the damage and
//! a warning ([`BlgLogReader::warnings`]) instead of failing.

use std::collections::hash_map::{Entry, HashMap};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::thread::JoinHandle;

use crate::error_chain::ErrorChain;
use crate::format::blg::values::{display_order, ColumnKey};
use crate::format::blg::{BlgLog, Column, LogFileHeader, ReadError};
use crate::log::error::LogError;
#[cfg(doc)]
use crate::log::error::LogErrorKind;
use crate::log::handover::{self, BatchReceiver};
use crate::log::model::{
    Cell, LogCounter, LogHeader, LogKind, LogReader, LogTime, RawCell, Record, TimeZone,
};
use crate::log::zone::LocalClock;

/// A `.blg` log read as raw samples.
#[derive(Debug)]
pub struct BlgLogReader<R: Read> {
    header: LogHeader,
    second: Second<R>,
    /// Starts the decoder thread at the first record, with records per batch (a log opened by
    /// [`BlgLogReader::open`] and long enough); `None` decodes on the calling thread.
    spawn: Option<(Spawn<R>, usize)>,
    /// Columns dropped after the decoder thread started ([`LogReader::select_columns`] once
    /// reading began): blanked on the calling thread.
    mask: Option<Vec<bool>>,
    warnings: Vec<String>,
}

/// Starts the decoder thread of a second pass.
type Spawn<R> = fn(Box<BlgLog<R>>, SampleCells, usize) -> Pipe;

/// Where the second pass is decoded.
#[derive(Debug)]
enum Second<R: Read> {
    /// On the calling thread.
    Here(Box<BlgLog<R>>, SampleCells),
    /// On the decoder thread, the records handed over in order.
    Piped(Pipe),
    /// Between the two (never seen outside `start`).
    Moving,
}

/// The second pass's rule from a sample to a record: the sample's UTC time and its cells by
/// header position. The one place that reads a record, on whichever thread decodes.
#[derive(Debug)]
struct SampleCells {
    source: String,
    /// Column number of the decoder → position in the header.
    position: Vec<usize>,
    /// Header columns.
    width: usize,
    keep: Option<Vec<bool>>,
    /// Samples readable (all, or those before the damage the first pass met).
    samples: u64,
    read: u64,
    /// The log's local times → UTC.
    clock: LocalClock,
}

impl SampleCells {
    /// Reads the next sample of `log` into `record`; `Ok(false)` at the end.
    fn next<R: Read>(
        &mut self,
        log: &mut BlgLog<R>,
        record: &mut Record,
    ) -> Result<bool, LogError> {
        if self.read >= self.samples {
            return Ok(false);
        }
        let sample = match log.next_sample() {
            None => return Ok(false),
            Some(Err(e)) => return Err(log_error(&self.source, e)),
            Some(Ok(s)) => s,
        };
        self.read += 1;
        record.time = self.clock.to_utc(LogTime(sample.time));
        record.cells.clear();
        record.cells.resize(self.width, Cell::Blank);
        for v in sample.values {
            let Some(&pos) = self.position.get(v.column) else {
                continue;
            };
            if self
                .keep
                .as_ref()
                .is_some_and(|k| !k.get(pos).copied().unwrap_or(false))
            {
                continue;
            }
            if let Some(cell) = record.cells.get_mut(pos) {
                *cell = Cell::Raw(
                    RawCell {
                        status: v.status,
                        raw: v.raw,
                    },
                    None,
                );
            }
        }
        Ok(true)
    }
}

/// Cells per batch handed over by the decoder thread (about 0.5 MB of records).
pub const PIPE_BATCH_CELLS: usize = 8192;

/// Batches the decoder thread may have decoded ahead of the calling thread (besides the one it
/// fills and the one the calling thread reads): memory stays a few batches (about 5 MB) whatever
/// the log's length.
///
/// Eight rather than two, so that the decoder keeps decoding while the calling thread is busy for
/// a while with something else than reading: the Parquet writer hands over a row group every
/// 131 records of the 500-column benchmark log (with two, the decoder, the critical thread, ran
/// about two thirds of the time, `perf`). Writing the 200 MB benchmark log as Parquet went from
/// 208–216 ms to 197–202 ms; relog's CSV, alternated in the same runs, did not change beyond the
/// noise (docs/benchmarks.md).
const PIPE_AHEAD: usize = 8;

/// The calling thread's side of the decoder thread.
#[derive(Debug)]
struct Pipe {
    /// `None` once dropped (which stops the thread).
    batches: Option<BatchReceiver>,
    thread: Option<JoinHandle<()>>,
}

impl Pipe {
    /// Starts the thread decoding `log` into batches of `per_batch` records, handed over in order
    /// ([`handover`]).
    fn start<R: Read + Send + 'static>(
        mut log: Box<BlgLog<R>>,
        mut cells: SampleCells,
        per_batch: usize,
    ) -> Pipe {
        let (mut tx, batches) = handover::channel(PIPE_AHEAD);
        // The thread stops at the end, at the first error, or when the reader is dropped.
        let thread = std::thread::spawn(move || {
            while tx.send_filled(per_batch, |record| cells.next(&mut log, record)) {}
        });
        Pipe {
            batches: Some(batches),
            thread: Some(thread),
        }
    }

    /// The next record, in file order, then the end or the error as on one thread.
    fn read(&mut self, source: &str, record: &mut Record) -> Result<bool, LogError> {
        let taken = match &mut self.batches {
            Some(batches) => batches.read(record),
            None => Some(Ok(false)),
        };
        taken.unwrap_or_else(|| {
            self.batches = None;
            if let Some(Err(panic)) = self.thread.take().map(JoinHandle::join) {
                std::panic::resume_unwind(panic);
            }
            Err(LogError::internal(source, "the decoder thread stopped"))
        })
    }
}

impl Drop for Pipe {
    /// Closes the channel (the thread stops at its next batch, blocked or not) and waits for the
    /// thread.
    fn drop(&mut self) {
        drop(self.batches.take());
        if let Some(thread) = self.thread.take() {
            // A panic of the thread was either reported by `read` or is of no use now.
            let _ = thread.join();
        }
    }
}

impl BlgLogReader<BufReader<File>> {
    /// Opens a log file (read twice: once for its columns, once for its records). The first pass
    /// is split among the machine's cores when the log is long enough ([`SCAN_PART_MIN`] per part);
    /// the second is decoded on a thread of its own, the records handed over in order, when the
    /// machine has two cores or more and the log is longer than two batches of
    /// [`PIPE_BATCH_CELLS`] cells.
    pub fn open(path: &Path) -> Result<Self, LogError> {
        Self::open_with(path, super::cores(), PIPE_BATCH_CELLS)
    }

    /// [`BlgLogReader::open`] with at most `threads` threads: 1 reads the log on the calling
    /// thread alone.
    pub fn open_threads(path: &Path, threads: usize) -> Result<Self, LogError> {
        Self::open_with(path, threads, PIPE_BATCH_CELLS)
    }

    /// [`BlgLogReader::open`] on `cores` cores, with batches of `batch_cells` cells.
    fn open_with(path: &Path, cores: usize, batch_cells: usize) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let len = std::fs::metadata(path).map_or(0, |m| m.len());
        let open_at = |offset: u64| open_file(path, offset);
        Self::open_parts(&source, len, &open_at, cores, batch_cells)
    }
}

impl<R: Read + Send + 'static> BlgLogReader<R> {
    /// The reader of the log named `source`, `len` bytes long, whose bytes from any offset
    /// `open_at` reads (a file, a log in memory): the first pass split among `cores` threads when
    /// the log is long enough, the second decoded on a thread of its own when it is longer than
    /// two batches of `batch_cells` cells (see [`BlgLogReader::open`]).
    pub(super) fn open_parts(
        source: &str,
        len: u64,
        open_at: &(dyn Fn(u64) -> std::io::Result<R> + Sync),
        cores: usize,
        batch_cells: usize,
    ) -> Result<Self, LogError> {
        let open = || open_at(0).map_err(|e| LogError::io(source, None, e));
        let first = match scan_in_parts(len, open_at, cores, SCAN_PART_MIN) {
            Some(first) => first,
            None => scan(source, open()?)?,
        };
        let mut reader = BlgLogReader::finish(source, first, open()?)?;
        let per_batch = (batch_cells / reader.header.counters.len().max(1)).max(1);
        if let Second::Here(_, cells) = &reader.second {
            if cores >= 2 && cells.samples > 2 * per_batch as u64 {
                reader.spawn = Some((Pipe::start, per_batch));
            }
        }
        Ok(reader)
    }
}

/// Bytes the file of a log is read in through: at least a buffer of the usual logs (64 KiB), so
/// that the decoder's reads of whole buffers go to the file directly and the reader's buffer only
/// serves the small reads of the first buffer's header.
const FILE_BUFFER: usize = 1 << 16;

/// The file of a log, opened for reading from byte `offset` (both passes and the parts of the
/// first, and [`BlgTimesReader`](super::BlgTimesReader)).
pub(super) fn open_file(path: &Path, offset: u64) -> std::io::Result<BufReader<File>> {
    let mut file = File::open(path)?;
    if offset > 0 {
        file.seek(SeekFrom::Start(offset))?;
    }
    Ok(BufReader::with_capacity(FILE_BUFFER, file))
}

/// The log error of a `.blg` read error (its cause kept: [`LogErrorKind`]'s `From<ReadError>`).
pub(super) fn log_error(source: &str, e: ReadError) -> LogError {
    LogError::new(source, None, e)
}

/// The log-model column of a decoded column: its path and counter info as decoded, the name
/// written from the path.
fn log_counter(c: &Column) -> LogCounter {
    LogCounter::new(c.path.clone(), Some(c.info))
}

/// What the first pass finds.
#[derive(Debug, PartialEq)]
struct FirstPass {
    /// The columns in order of first appearance (the second pass's numbering).
    columns: Vec<Column>,
    /// [`BlgLog::display_order`] of `columns`.
    order: Vec<usize>,
    warnings: Vec<String>,
    /// Local time of the first sample.
    first_time: Option<i64>,
    /// Samples readable.
    samples: u64,
    header: LogFileHeader,
}

/// The first pass on one thread: reads `scan` to its end (or its damage) for the columns.
fn scan<R: Read>(source: &str, scan: R) -> Result<FirstPass, LogError> {
    let mut first = BlgLog::new(scan).map_err(|e| log_error(source, e))?;
    first.set_columns_only(true);
    let mut first_time = None;
    let damage = loop {
        match first.next_sample() {
            None => break None,
            Some(Ok(s)) => {
                first_time.get_or_insert(s.time);
            }
            Some(Err(e)) => break Some(e),
        }
    };
    let warnings = end_warnings(source, &first, damage);
    Ok(FirstPass {
        order: first.display_order(),
        columns: first.columns().to_vec(),
        warnings,
        first_time,
        samples: first.samples_read(),
        header: first.header().clone(),
    })
}

/// The warnings of a log read to its end or to `damage` (the error that stopped it): the damage,
/// with the samples read before it, then what the reader stepped over.
pub(super) fn end_warnings<R: Read>(
    source: &str,
    log: &BlgLog<R>,
    damage: Option<ReadError>,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(e) = damage {
        let n = log.samples_read();
        warnings.push(format!(
            "{}; the log is read up to there ({n} samples)",
            ErrorChain(&log_error(source, e))
        ));
    }
    warnings.extend(log.warnings().iter().map(|w| format!("{source}: {w}")));
    if log.reader().suppressed_warnings() > 0 {
        warnings.push(format!(
            "{source}: {} more warnings not shown",
            log.reader().suppressed_warnings()
        ));
    }
    warnings
}

/// The log-model header of a `.blg` named `source` whose first sample is at local time
/// `first_time` (the file's start time without samples), and the clock that turns its samples'
/// local times into UTC.
pub(super) fn log_header(
    source: &str,
    file: &LogFileHeader,
    first_time: Option<i64>,
    counters: Vec<LogCounter>,
) -> (LogHeader, LocalClock) {
    let rules = file.time_zone.clone();
    let first_utc = first_time.map_or(file.start_time, |t| rules.to_utc(t));
    let clock = LocalClock::new(rules.clone());
    let header = LogHeader {
        source: source.to_owned(),
        kind: LogKind::Binary,
        time_zone: Some(TimeZone::from_rules(rules, LogTime(first_utc))),
        counters,
    };
    (header, clock)
}

/// The least bytes of log per part of a split column scan (a smaller log is scanned on one
/// thread).
pub const SCAN_PART_MIN: u64 = 1 << 20;

/// What one part of a split column scan found, or `None` when the part met anything the
/// single-threaded scan reports (a warning, an error, a record it cannot place alone).
struct PartScan {
    columns: Vec<(Column, ColumnKey)>,
    first_time: Option<i64>,
    samples: u64,
    /// Fragments stepped over at the start, read past the end.
    skipped: u64,
    beyond: u64,
    trailers: Vec<(u64, u32)>,
}

/// Reads one part of a split scan to its end.
fn scan_part<R: Read>(mut log: BlgLog<R>) -> Option<PartScan> {
    let mut first_time = None;
    while let Some(sample) = log.next_sample() {
        first_time.get_or_insert(sample.ok()?.time);
    }
    let notes = log.part_notes()?;
    if !log.warnings().is_empty() || log.reader().suppressed_warnings() > 0 || notes.blocks {
        return None;
    }
    let keys: Option<Vec<ColumnKey>> = log.column_keys().into_iter().collect();
    let (skipped, beyond) = log.reader().part_counts();
    Some(PartScan {
        columns: log.columns().iter().cloned().zip(keys?).collect(),
        first_time,
        samples: log.samples_read(),
        skipped,
        beyond,
        trailers: notes.trailers.clone(),
    })
}

/// The first pass split into parts of whole buffers scanned on as many threads, the columns
/// merged in file order: a column's first appearance is in the first part that has it, at its
/// place among that part's new columns, so the order is the single-threaded scan's. `None` (the
/// caller scans on one thread) for a log too short to split, one whose scan would warn or fail
/// (circular logs, a size not a whole number of buffers, whole-object entries, damage: the
/// single-threaded scan then reports it exactly), or when the parts do not join up (a record's
/// fragments stepped over at a part's start must be those the part before read past its end).
fn scan_in_parts<R: Read + Send>(
    len: u64,
    open_file_at: &(dyn Fn(u64) -> std::io::Result<R> + Sync),
    parts: usize,
    part_min: u64,
) -> Option<FirstPass> {
    let parts = parts.min(usize::try_from(len / part_min.max(1)).ok()?);
    if parts < 2 {
        return None;
    }
    let open_at = |offset: usize| open_file_at(offset as u64).ok();
    let mut main = BlgLog::new(open_at(0)?).ok()?;
    main.set_columns_only(true);
    let header = main.header().clone();
    let buffer_size = main.reader().buffer_size();
    let buffers = usize::try_from(len).ok()? / buffer_size;
    if header.is_circular()
        || !len.is_multiple_of(buffer_size as u64)
        || (header.buffers_written != 0 && header.buffers_written as usize != buffers)
        || main.specs().iter().any(|s| s.is_whole_object())
        || buffers < 2 * parts
    {
        return None;
    }
    let starts: Vec<usize> = (0..parts)
        .map(|k| buffers * k / parts * buffer_size)
        .collect();
    let end = |k: usize| starts.get(k + 1).copied().unwrap_or(buffers * buffer_size);
    let mut others = Vec::new();
    for (k, &start) in starts.iter().enumerate().skip(1) {
        let mut part = main.part(open_at(start)?, start);
        part.set_part_end(end(k));
        others.push(part);
    }
    main.set_part_end(end(0));
    let specs = main.specs().to_vec();
    let results: Vec<Option<PartScan>> = std::thread::scope(|s| {
        let handles: Vec<_> = others
            .into_iter()
            .map(|part| s.spawn(move || scan_part(part)))
            .collect();
        let mut results = vec![scan_part(main)];
        results.extend(handles.into_iter().map(|h| h.join().ok().flatten()));
        results
    });
    let results: Vec<PartScan> = results.into_iter().collect::<Option<_>>()?;
    let mut columns = Vec::new();
    let mut known = HashMap::new();
    let mut samples = 0u64;
    let mut first_time = None;
    let mut beyond = 0;
    for part in results {
        if part.skipped != beyond {
            return None;
        }
        beyond = part.beyond;
        for (before, stated) in part.trailers {
            if samples + before != u64::from(stated) {
                return None;
            }
        }
        for (mut column, key) in part.columns {
            if let Entry::Vacant(v) = known.entry(key) {
                v.insert(columns.len());
                column.first_sample += samples;
                columns.push(column);
            }
        }
        first_time = first_time.or(part.first_time);
        samples += part.samples;
    }
    if beyond != 0 {
        return None;
    }
    let order = display_order(&specs, &columns);
    Some(FirstPass {
        order,
        columns,
        warnings: Vec::new(),
        first_time,
        samples,
        header,
    })
}

impl<R: Read> BlgLogReader<R> {
    /// A reader of the log named `source`, given two readers of its bytes: `scan` is read to the end
    /// first to find the columns, `data` then gives the records.
    pub fn new(source: &str, scan: R, data: R) -> Result<Self, LogError> {
        let first = self::scan(source, scan)?;
        Self::finish(source, first, data)
    }

    /// The reader of `data` with the columns the first pass found.
    fn finish(source: &str, first: FirstPass, data: R) -> Result<Self, LogError> {
        let FirstPass {
            columns,
            order,
            warnings,
            first_time,
            samples,
            header,
        } = first;
        let mut position = vec![0; columns.len()];
        for (pos, &c) in order.iter().enumerate() {
            position[c] = pos;
        }
        let counters = order.iter().map(|&c| log_counter(&columns[c])).collect();
        let (header, clock) = log_header(source, &header, first_time, counters);
        let log = BlgLog::new(data).map_err(|e| log_error(source, e))?;
        let cells = SampleCells {
            source: source.to_owned(),
            position,
            width: header.counters.len(),
            keep: None,
            samples,
            read: 0,
            clock,
        };
        Ok(BlgLogReader {
            header,
            second: Second::Here(Box::new(log), cells),
            spawn: None,
            mask: None,
            warnings,
        })
    }

    /// What the reader stepped over or stopped at (unknown record kinds, counts that disagree, the
    /// damage that ends a broken log), one message each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The decoded log (header, counter list, embedded names); `None` once its records are
    /// decoded on the decoder thread ([`BlgLogReader::open`]).
    pub fn log(&self) -> Option<&BlgLog<R>> {
        match &self.second {
            Second::Here(log, _) => Some(log),
            Second::Piped(_) | Second::Moving => None,
        }
    }

    /// Whether the records are decoded on a thread of their own (from the first record on).
    pub fn is_pipelined(&self) -> bool {
        self.spawn.is_some() || matches!(self.second, Second::Piped(_))
    }
}

impl<R: Read> LogReader for BlgLogReader<R> {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        if let Some((spawn, per_batch)) = self.spawn.take() {
            if let Second::Here(log, cells) = std::mem::replace(&mut self.second, Second::Moving) {
                self.second = Second::Piped(spawn(log, cells, per_batch));
            }
        }
        let more = match &mut self.second {
            Second::Here(log, cells) => cells.next(log, record)?,
            Second::Piped(pipe) => pipe.read(&self.header.source, record)?,
            Second::Moving => false,
        };
        if let (true, Some(mask)) = (more, &self.mask) {
            for (cell, keep) in record.cells.iter_mut().zip(mask) {
                if !keep {
                    *cell = Cell::Blank;
                }
            }
        }
        Ok(more)
    }

    fn select_columns(&mut self, keep: &[bool]) {
        match &mut self.second {
            Second::Here(_, cells) => cells.keep = Some(keep.to_vec()),
            Second::Piped(_) | Second::Moving => self.mask = Some(keep.to_vec()),
        }
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use proptest::prelude::*;

    use super::*;
    use crate::counter_type::CounterType;
    use crate::format::blg::encode::{
        encode_counter_list, encode_sample, encode_trailer, BlgEncodeOptions, BlgWriter,
        InstanceEntry, RawEntry, SampleEntry,
    };
    use crate::format::blg::{BlgCounterSpec, RecordKind};
    use crate::status::PdhStatus;

    /// [`scan_in_parts`] of the file `path`.
    fn scan_path_in_parts(path: &Path, parts: usize, part_min: u64) -> Option<FirstPass> {
        let len = std::fs::metadata(path).ok()?.len();
        scan_in_parts(len, &|offset| open_file(path, offset), parts, part_min)
    }

    /// A log file of the test, removed when dropped.
    struct TempLog(std::path::PathBuf);

    impl TempLog {
        fn new(name: &str, bytes: &[u8]) -> TempLog {
            let path = std::env::temp_dir().join(format!(
                "perfcounters-scan-{}-{name}.blg",
                std::process::id()
            ));
            std::fs::write(&path, bytes).unwrap();
            TempLog(path)
        }
    }

    impl Drop for TempLog {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// Every record of a reader (time and cells), then the error that ended it, if any.
    fn records<R: Read>(mut r: BlgLogReader<R>) -> (Vec<Record>, Option<String>) {
        let mut out = Vec::new();
        loop {
            let mut record = Record::default();
            match r.read_record(&mut record) {
                Ok(true) => out.push(record),
                Ok(false) => return (out, None),
                Err(e) => return (out, Some(ErrorChain(&e).to_string())),
            }
        }
    }

    /// The split scan of `path` in `parts` parts of at least one byte, checked against the
    /// single-threaded scan: the same first pass, and the same records and error from it.
    /// Whether the split was taken.
    fn check_split(path: &Path, parts: usize) -> bool {
        let source = path.display().to_string();
        let one = scan(&source, File::open(path).unwrap()).unwrap();
        let Some(split) = scan_path_in_parts(path, parts, 1) else {
            return false;
        };
        assert_eq!(split, one, "{source} in {parts} parts");
        let data = || BufReader::new(File::open(path).unwrap());
        let one = BlgLogReader::finish(&source, one, data()).unwrap();
        let split = BlgLogReader::finish(&source, split, data()).unwrap();
        assert_eq!(split.header(), one.header());
        assert_eq!(records(split), records(one));
        true
    }

    const T0: i64 = 132_236_928_000_000_000;

    /// A log of `specs` (wildcards where `wild`) with `samples`: per sample, per entry, the
    /// instance names (ignored for single counters), in small buffers and fragments so that
    /// records span buffers.
    fn write_log(
        wild: &[bool],
        samples: &[Vec<Vec<String>>],
        fragment: usize,
        trailer: Option<u32>,
    ) -> Vec<u8> {
        let specs: Vec<BlgCounterSpec> = wild
            .iter()
            .enumerate()
            .map(|(i, &w)| BlgCounterSpec {
                machine: r"\\HOST".into(),
                object: format!("Object{i}"),
                instance: w.then(|| "*".into()),
                counter: "Counter".into(),
                counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
                ..Default::default()
            })
            .collect();
        let mut options = BlgEncodeOptions::default();
        options.header.buffer_size = 0x1000;
        options.fragment_size = fragment;
        let mut w = BlgWriter::new(Cursor::new(Vec::new()), options).unwrap();
        w.write_record(RecordKind::CounterList, T0, &encode_counter_list(&specs))
            .unwrap();
        for (n, sample) in samples.iter().enumerate() {
            let time = T0 + n as i64 * 10_000_000;
            let entries: Vec<SampleEntry> = wild
                .iter()
                .zip(sample)
                .map(|(&w, names)| {
                    if w {
                        SampleEntry::Instances {
                            status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                            time_stamp: time,
                            items: names
                                .iter()
                                .enumerate()
                                .map(|(i, name)| InstanceEntry {
                                    name: name.clone(),
                                    multi_count: 0,
                                    first: (n * 31 + i) as i64,
                                    second: 0,
                                })
                                .collect(),
                        }
                    } else {
                        SampleEntry::Counter(RawEntry {
                            status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                            time_stamp: time,
                            first: n as i64,
                            second: 0,
                            multi_count: 1,
                        })
                    }
                })
                .collect();
            w.write_record(RecordKind::Sample, time, &encode_sample(&entries))
                .unwrap();
        }
        if let Some(stated) = trailer {
            let last = T0 + samples.len() as i64 * 10_000_000;
            let data = encode_trailer(T0, last, stated, wild.len() as u32, &[]);
            w.write_record(RecordKind::Trailer, last, &data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    /// Instance names from a small alphabet, so that names repeat (`name#1`) and differ only in
    /// case (one group).
    fn names() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(
            prop::sample::select(vec!["a", "A", "b", "c", "cc", "Cc", "d"]).prop_map(String::from),
            0..5,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// On random logs (instances appearing late, vanishing, repeated, differing in case;
        /// records spanning buffers), the split scan gives the single-threaded scan's columns in
        /// its order, and the same records follow, in 2 to 5 parts.
        #[test]
        fn split_scan_equals_one_thread(
            wild in prop::collection::vec(any::<bool>(), 1..4),
            samples in prop::collection::vec(prop::collection::vec(names(), 4), 8..120),
            fragment in prop::sample::select(vec![100usize, 700, 3000]),
            trailer in any::<bool>(),
            parts in 2usize..6,
        ) {
            let stated = trailer.then_some(samples.len() as u32);
            let bytes = write_log(&wild, &samples, fragment, stated);
            let log = TempLog::new("prop", &bytes);
            // Logs of enough buffers for the parts are split (the check ran).
            let buffers = bytes.len() / 0x1000;
            prop_assert_eq!(check_split(&log.0, parts), buffers >= 2 * parts);
        }
    }

    /// A log whose instances first appear in its last part: their columns come after the
    /// earlier ones, as on one thread.
    #[test]
    fn columns_first_seen_late_keep_their_place() {
        let n = 200;
        let samples: Vec<Vec<Vec<String>>> = (0..n)
            .map(|i| {
                let mut names = vec!["x".to_string()];
                if i > n * 3 / 4 {
                    names.insert(0, "late".into());
                }
                if i > n / 3 {
                    names.push("X".into());
                }
                vec![names, Vec::new()]
            })
            .collect();
        let bytes = write_log(&[true, false], &samples, 3000, Some(n as u32));
        let log = TempLog::new("late", &bytes);
        for parts in 2..5 {
            assert!(check_split(&log.0, parts));
        }
        let first = scan_path_in_parts(&log.0, 3, 1).unwrap();
        let paths: Vec<String> = first
            .order
            .iter()
            .map(|&c| first.columns[c].path.to_string())
            .collect();
        assert_eq!(
            paths,
            [
                r"\\HOST\Object0(x)\Counter",
                r"\\HOST\Object0(X#1)\Counter",
                r"\\HOST\Object0(late)\Counter",
                r"\\HOST\Object1\Counter",
            ]
        );
        assert_eq!(first.samples, n as u64);
    }

    /// Damage in the second half (a buffer header overwritten; a trailer that miscounts): the
    /// split scan gives way to the single-threaded one, so the warning, its position and the
    /// records before it are today's.
    #[test]
    fn damage_is_reported_as_on_one_thread() {
        let samples: Vec<Vec<Vec<String>>> = (0..150)
            .map(|i| vec![vec![format!("i{}", i % 7)]])
            .collect();
        let bytes = write_log(&[true], &samples, 700, Some(150));
        let buffers = bytes.len() / 0x1000;
        let mut broken = bytes.clone();
        let at = buffers * 3 / 4 * 0x1000;
        broken[at..at + 16].fill(0xff);
        let log = TempLog::new("damaged", &broken);
        assert!(scan_path_in_parts(&log.0, 2, 1).is_none());
        let reader = BlgLogReader::open(&log.0).unwrap();
        let warnings = reader.warnings().to_vec();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains(&format!("offset {at}")),
            "{warnings:?}"
        );
        let one = scan(&log.0.display().to_string(), File::open(&log.0).unwrap()).unwrap();
        assert_eq!(one.warnings, warnings);
        let (records, error) = records(reader);
        assert_eq!(records.len() as u64, one.samples);
        assert!(one.samples < 150 && error.is_none());

        assert!(check_split(&TempLog::new("whole", &bytes).0, 2));

        // The trailer counts one sample less than the log holds: one warning, as on one thread.
        let miscounted = write_log(&[true], &samples, 700, Some(149));
        let log = TempLog::new("miscounted", &miscounted);
        assert!(scan_path_in_parts(&log.0, 2, 1).is_none());
        let reader = BlgLogReader::open(&log.0).unwrap();
        assert_eq!(reader.warnings().len(), 1);
        assert!(reader.warnings()[0].contains("the trailer counts 149 samples, the log holds 150"));
    }

    /// The reader of `data` with the columns the one-thread scan of `scanned` finds, decoding on
    /// the calling thread, or on the decoder thread in batches of `per_batch` records.
    fn reader_of(
        scanned: &Path,
        data: &Path,
        per_batch: Option<usize>,
    ) -> BlgLogReader<BufReader<File>> {
        try_reader_of(scanned, data, per_batch).unwrap()
    }

    /// [`reader_of`], or the error that `data` does not open with.
    fn try_reader_of(
        scanned: &Path,
        data: &Path,
        per_batch: Option<usize>,
    ) -> Result<BlgLogReader<BufReader<File>>, LogError> {
        let source = data.display().to_string();
        let first = scan(&source, File::open(scanned).unwrap()).unwrap();
        let data = BufReader::new(File::open(data).unwrap());
        let mut reader = BlgLogReader::finish(&source, first, data)?;
        reader.spawn = per_batch.map(|n| (Pipe::start as Spawn<_>, n));
        Ok(reader)
    }

    /// A log of wildcard and single counters, `n` samples of up to 3 instances.
    fn plain_log(n: usize) -> Vec<u8> {
        let samples: Vec<Vec<Vec<String>>> = (0..n)
            .map(|i| vec![(0..i % 4).map(|k| format!("i{k}")).collect(), Vec::new()])
            .collect();
        write_log(&[true, false], &samples, 700, Some(n as u32))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// On random logs, whole or damaged part-way (bytes overwritten, or cut off, after the
        /// columns were found: the second pass then ends in an error mid-file), with columns
        /// selected or not: the records decoded on the decoder thread, in batches of 1 to 8, are
        /// the one-thread reader's, with the same error after the same records and the same
        /// warnings.
        #[test]
        fn pipelined_equals_one_thread(
            wild in prop::collection::vec(any::<bool>(), 1..4),
            samples in prop::collection::vec(prop::collection::vec(names(), 4), 1..100),
            fragment in prop::sample::select(vec![100usize, 700, 3000]),
            per_batch in 1usize..9,
            damage in prop::option::of((0.0f64..1.0, any::<u8>(), any::<bool>())),
            keep in prop::option::of(prop::collection::vec(any::<bool>(), 0..12)),
        ) {
            let bytes = write_log(&wild, &samples, fragment, None);
            let whole = TempLog::new("pipe-whole", &bytes);
            let mut damaged = bytes.clone();
            if let Some((at, byte, cut)) = damage {
                let at = 0x1000 + ((damaged.len() - 0x1000) as f64 * at) as usize;
                if cut {
                    damaged.truncate(at);
                } else {
                    damaged[at..(at + 16).min(bytes.len())].fill(byte);
                }
            }
            let data = TempLog::new("pipe-data", &damaged);
            let source = data.0.display().to_string();
            let (Ok(mut one), Ok(mut piped)) = (
                try_reader_of(&whole.0, &data.0, None),
                try_reader_of(&whole.0, &data.0, Some(per_batch)),
            ) else {
                // Damage in the counter list: the log does not open, either way.
                let e = BlgLog::new(BufReader::new(File::open(&data.0).unwrap())).unwrap_err();
                prop_assert!(damage.is_some(), "{}: {}", source, e);
                return Ok(());
            };
            prop_assert!(piped.is_pipelined() && !one.is_pipelined());
            if let Some(keep) = keep {
                one.select_columns(&keep);
                piped.select_columns(&keep);
            }
            prop_assert_eq!(piped.header(), one.header());
            prop_assert_eq!(piped.warnings(), one.warnings());
            let (a, b) = (records(piped), records(one));
            if damage.is_none() {
                prop_assert_eq!(a.0.len(), samples.len());
                prop_assert!(a.1.is_none());
            }
            prop_assert_eq!(a, b);
        }
    }

    /// A second pass that meets damage mid-file (a buffer header overwritten after the columns
    /// were found) ends in the one-thread reader's error, after the same records.
    #[test]
    fn pipelined_error_comes_after_the_same_records() {
        let bytes = plain_log(200);
        let mut broken = bytes.clone();
        let at = bytes.len() / 0x1000 * 3 / 4 * 0x1000;
        broken[at..at + 16].fill(0xff);
        let (whole, data) = (
            TempLog::new("err-whole", &bytes),
            TempLog::new("err", &broken),
        );
        let one = records(reader_of(&whole.0, &data.0, None));
        for per_batch in [1, 3, 64] {
            let piped = records(reader_of(&whole.0, &data.0, Some(per_batch)));
            assert_eq!(piped, one);
        }
        assert!((100..200).contains(&one.0.len()), "{}", one.0.len());
        let error = one.1.unwrap();
        assert!(error.contains(&format!("offset {at}")), "{error}");
    }

    /// Columns dropped after the first record (the decoder thread already started) are blanked
    /// as on one thread.
    #[test]
    fn columns_selected_while_pipelined() {
        let log = TempLog::new("select-late", &plain_log(40));
        let mut one = reader_of(&log.0, &log.0, None);
        let mut piped = reader_of(&log.0, &log.0, Some(3));
        let (mut a, mut b) = (Record::default(), Record::default());
        assert!(one.read_record(&mut a).unwrap() && piped.read_record(&mut b).unwrap());
        assert_eq!(a, b);
        let keep = [false, true, false, true];
        one.select_columns(&keep);
        piped.select_columns(&keep);
        let (a, b) = (records(piped), records(one));
        assert_eq!(a.0.len(), 39);
        assert!(a.0.iter().all(|r| r.cells[0] == Cell::Blank));
        assert_eq!(a, b);
    }

    /// A reader dropped part-way, its decoder thread blocked on a full channel, stops the thread
    /// (the drop returns); one dropped before its first record starts none.
    #[test]
    fn dropped_reader_stops_its_thread() {
        let log = TempLog::new("drop", &plain_log(200));
        let mut piped = reader_of(&log.0, &log.0, Some(1));
        let mut record = Record::default();
        assert!(piped.read_record(&mut record).unwrap());
        assert!(matches!(piped.second, Second::Piped(_)));
        // The thread fills its batches ahead and blocks.
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(piped);
        let unread = reader_of(&log.0, &log.0, Some(1));
        assert!(unread.log().is_some());
        drop(unread);
    }

    /// A log in memory is read as its file: the split scan and the decoder thread of
    /// `open_parts` over the bytes give the records of the file read on one thread.
    #[test]
    fn a_log_in_memory_reads_as_its_file() {
        use crate::log::memory::LogBytes;
        let n = 200;
        let samples: Vec<Vec<Vec<String>>> = (0..n)
            .map(|i| {
                let mut names = vec!["x".to_string()];
                if i > n / 3 {
                    names.push("X".into());
                }
                vec![names, Vec::new()]
            })
            .collect();
        let bytes = write_log(&[true, false], &samples, 3000, Some(n as u32));
        let file = TempLog::new("memory", &bytes);
        let memory = LogBytes::new("<bytes>", bytes.clone());
        let open_at = |offset: u64| {
            let mut c = Cursor::new(memory.clone());
            c.set_position(offset);
            Ok(c)
        };
        let len = bytes.len() as u64;
        let split = scan_in_parts(len, &open_at, 3, 1).unwrap();
        assert_eq!(
            split,
            scan(&file.0.display().to_string(), File::open(&file.0).unwrap()).unwrap()
        );
        let piped = BlgLogReader::open_parts("<bytes>", len, &open_at, 2, 8).unwrap();
        assert!(piped.is_pipelined());
        assert_eq!(piped.header().source, "<bytes>");
        let one = BlgLogReader::open_with(&file.0, 1, 8).unwrap();
        assert_eq!(piped.header().counters, one.header().counters);
        let (a, b) = (records(piped), records(one));
        assert_eq!(a.0.len(), n);
        assert_eq!(a, b);
    }

    /// `open` decodes on a thread of its own on two cores for a log longer than two batches,
    /// on the calling thread on one core or for a short log; the records are the same.
    #[test]
    fn open_pipelines_long_logs_on_two_cores() {
        let log = TempLog::new("open", &plain_log(60));
        let path = &log.0;
        let one = BlgLogReader::open_with(path, 1, 8).unwrap();
        assert!(!one.is_pipelined());
        // 4 columns, 2 records per batch of 8 cells: 60 samples are more than two batches.
        let piped = BlgLogReader::open_with(path, 2, 8).unwrap();
        assert!(piped.is_pipelined());
        assert!(!BlgLogReader::open_with(path, 2, 1000)
            .unwrap()
            .is_pipelined());
        let (a, b) = (records(piped), records(one));
        assert_eq!(a.0.len(), 60);
        assert_eq!(a, b);
    }

    /// The shared logs of real machines give the same records decoded on the decoder thread (in
    /// batches of 1 to 64 cells' worth) as on one thread.
    #[test]
    fn shared_logs_pipelined_as_on_one_thread() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/blg");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("skipped: {} absent", dir.display());
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let one = records(BlgLogReader::open_with(&path, 1, PIPE_BATCH_CELLS).unwrap());
            for cells in [1, 64, PIPE_BATCH_CELLS] {
                let mut piped = BlgLogReader::open_with(&path, 2, cells).unwrap();
                piped.spawn.get_or_insert((Pipe::start, 1));
                assert!(piped.is_pipelined());
                assert_eq!(records(piped), one, "{}", path.display());
            }
        }
    }

    /// The shared logs of real machines: the same first pass and records split in 2 to 4 parts
    /// (where a log splits at all), and through `open`.
    #[test]
    fn shared_logs_split_as_on_one_thread() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/blg");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("skipped: {} absent", dir.display());
            return;
        };
        let mut split = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            for parts in 2..5 {
                split += usize::from(check_split(&path, parts));
            }
        }
        eprintln!("{split} split scans");
    }
}
