//! Performance Monitor binary logs (`.blg`) as a [`LogReader`]: raw samples with their counter
//! types and time bases, for relog, statistics and replay.
//!
//! The decoding is [`crate::format::blg`]'s; this adapter gives the log model what it needs:
//!
//! * the columns are complete before the first record, so the log is read twice: a first pass
//!   finds every counter instance (instances appear and vanish during a log), a second hands out the
//!   records. Memory stays flat: one buffer and the columns. The first pass of a long log is split
//!   into ranges of whole buffers scanned on every core, the columns merged in file order
//!   ([`BlgLogReader::open`]).
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

use crate::format::blg::values::{display_order, ColumnKey};
use crate::format::blg::{BlgLog, Column, LogFileHeader, ReadError};
use crate::log::error::LogError;
#[cfg(doc)]
use crate::log::error::LogErrorKind;
use crate::log::model::{
    Cell, LogCounter, LogHeader, LogKind, LogReader, LogTime, RawCell, Record, TimeZone,
};
use crate::log::zone::LocalClock;

/// A `.blg` log read as raw samples.
#[derive(Debug)]
pub struct BlgLogReader<R: Read> {
    header: LogHeader,
    log: BlgLog<R>,
    /// Column number of the decoder → position in the header.
    position: Vec<usize>,
    keep: Option<Vec<bool>>,
    /// Samples readable (all, or those before the damage the first pass met).
    samples: u64,
    read: u64,
    warnings: Vec<String>,
    /// The log's local times → UTC.
    clock: LocalClock,
}

impl BlgLogReader<BufReader<File>> {
    /// Opens a log file (read twice: once for its columns, once for its records). The first pass
    /// is split among the machine's cores when the log is long enough ([`SCAN_PART_MIN`] per part).
    pub fn open(path: &Path) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let open = || {
            File::open(path)
                .map(|f| BufReader::with_capacity(1 << 16, f))
                .map_err(|e| LogError::io(&source, None, e))
        };
        let cores = super::cores();
        let first = match scan_in_parts(path, cores, SCAN_PART_MIN) {
            Some(first) => first,
            None => scan(&source, open()?)?,
        };
        BlgLogReader::finish(&source, first, open()?)
    }
}

/// The log error of a `.blg` read error (its cause kept: [`LogErrorKind`]'s `From<ReadError>`).
fn log_error(source: &str, e: ReadError) -> LogError {
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
    let mut warnings = Vec::new();
    let mut first_time = None;
    loop {
        match first.next_sample() {
            None => break,
            Some(Ok(s)) => {
                first_time.get_or_insert(s.time);
            }
            Some(Err(e)) => {
                let n = first.samples_read();
                warnings.push(format!(
                    "{}; the log is read up to there ({n} samples)",
                    log_error(source, e)
                ));
                break;
            }
        }
    }
    warnings.extend(first.warnings().iter().map(|w| format!("{source}: {w}")));
    if first.reader().suppressed_warnings() > 0 {
        warnings.push(format!(
            "{source}: {} more warnings not shown",
            first.reader().suppressed_warnings()
        ));
    }
    Ok(FirstPass {
        order: first.display_order(),
        columns: first.columns().to_vec(),
        warnings,
        first_time,
        samples: first.samples_read(),
        header: first.header().clone(),
    })
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
fn scan_in_parts(path: &Path, parts: usize, part_min: u64) -> Option<FirstPass> {
    let len = std::fs::metadata(path).ok()?.len();
    let parts = parts.min(usize::try_from(len / part_min.max(1)).ok()?);
    if parts < 2 {
        return None;
    }
    let open_at = |offset: usize| -> Option<BufReader<File>> {
        let mut f = File::open(path).ok()?;
        f.seek(SeekFrom::Start(offset as u64)).ok()?;
        Some(BufReader::with_capacity(1 << 16, f))
    };
    let mut main = BlgLog::new(open_at(0)?).ok()?;
    main.set_columns_only(true);
    let header = main.header().clone();
    let buffer_size = main.reader().buffer_size();
    let buffers = usize::try_from(len).ok()? / buffer_size;
    if header.is_circular()
        || len % buffer_size as u64 != 0
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
        let rules = header.time_zone.clone();
        let first_utc = first_time.map_or(header.start_time, |t| rules.to_utc(t));
        let clock = LocalClock::new(rules.clone());
        let header = LogHeader {
            source: source.to_owned(),
            kind: LogKind::Binary,
            time_zone: Some(TimeZone::from_rules(rules, LogTime(first_utc))),
            counters,
        };
        let log = BlgLog::new(data).map_err(|e| log_error(source, e))?;
        Ok(BlgLogReader {
            header,
            log,
            position,
            keep: None,
            samples,
            read: 0,
            warnings,
            clock,
        })
    }

    /// What the reader stepped over or stopped at (unknown record kinds, counts that disagree, the
    /// damage that ends a broken log), one message each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The decoded log (header, counter list, embedded names).
    pub fn log(&self) -> &BlgLog<R> {
        &self.log
    }
}

impl<R: Read> LogReader for BlgLogReader<R> {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        if self.read >= self.samples {
            return Ok(false);
        }
        let source = &self.header.source;
        let sample = match self.log.next_sample() {
            None => return Ok(false),
            Some(Err(e)) => return Err(log_error(source, e)),
            Some(Ok(s)) => s,
        };
        self.read += 1;
        record.time = self.clock.to_utc(LogTime(sample.time));
        record.cells.clear();
        record.cells.resize(self.header.counters.len(), Cell::Blank);
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

    fn select_columns(&mut self, keep: &[bool]) {
        self.keep = Some(keep.to_vec());
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
        encode_counter_list, encode_sample, encode_trailer, BlgWriter, EncodeOptions,
        InstanceEntry, RawEntry, SampleEntry,
    };
    use crate::format::blg::{CounterSpec, RecordKind};
    use crate::status::PdhStatus;

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
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    /// The split scan of `path` in `parts` parts of at least one byte, checked against the
    /// single-threaded scan: the same first pass, and the same records and error from it.
    /// Whether the split was taken.
    fn check_split(path: &Path, parts: usize) -> bool {
        let source = path.display().to_string();
        let one = scan(&source, File::open(path).unwrap()).unwrap();
        let Some(split) = scan_in_parts(path, parts, 1) else {
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
        let specs: Vec<CounterSpec> = wild
            .iter()
            .enumerate()
            .map(|(i, &w)| CounterSpec {
                machine: r"\\HOST".into(),
                object: format!("Object{i}"),
                instance: w.then(|| "*".into()),
                counter: "Counter".into(),
                counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
                ..Default::default()
            })
            .collect();
        let mut options = EncodeOptions::default();
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
        let first = scan_in_parts(&log.0, 3, 1).unwrap();
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
        assert!(scan_in_parts(&log.0, 2, 1).is_none());
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
        assert!(scan_in_parts(&log.0, 2, 1).is_none());
        let reader = BlgLogReader::open(&log.0).unwrap();
        assert_eq!(reader.warnings().len(), 1);
        assert!(reader.warnings()[0].contains("the trailer counts 149 samples, the log holds 150"));
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
