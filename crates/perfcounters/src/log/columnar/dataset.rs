//! Hive-partitioned datasets of Parquet logs: `DIR/machine=NAME/date=YYYY-MM-DD/part-….parquet`.
//!
//! [`DatasetWriter`] splits a log by the machine of its columns and the UTC date of its records
//! (in a log of several machines, a record where a machine has only blank cells is not that
//! machine's sample and is left out of its files); each (machine, date) gets a new file of the long form with that machine's columns (a Parquet log
//! of its own, see [`super::parquet`]). It never writes over a file: names are unique (time, process
//! and a sequence number), a file is written under a hidden temporary name and given its final
//! name only when the whole log is written, and that fails rather than replace a file
//! (`atomic_file.rs`). Several runs add files to one dataset.
//!
//! The machine is the partition value as the counter paths name it, with every byte outside
//! `A-Z a-z 0-9 . _ -` written `%XX` (Hive's escaping); paths without a machine go to
//! `machine=__HIVE_DEFAULT_PARTITION__`.
//!
//! [`PartitionBatches`] gives the same split as Arrow batches of the long form, for an engine
//! that writes the partitions itself (Spark, through the Python package).
//!
//! [`DatasetReader`] reads a dataset back as one log: every file in time order (merged as relog
//! merges logs). A dataset directory holds only `key=value` directories and `.parquet` files of
//! ours (hidden entries, such as temporary files, are skipped); anything else is an error that
//! names it. A partition of a dataset (`DIR/machine=NAME/`, or one of its `date=` directories) is
//! read the same way, as a dataset of its own: [`machine_partitions`] lists a dataset's machines
//! so, one log each.

use std::collections::{HashMap, VecDeque};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;

use super::batch::records_per_batch;
use super::long::{long_batch, LongLayout};
use super::parquet::{ParquetLogReader, ParquetLogWriter};
use crate::atomic_file::PendingFile;
use crate::log::error::LogError;
use crate::log::model::{Cell, LogHeader, LogReader, LogTime, LogWriter, Record};
use crate::log::relog::Merge;
use crate::time_text::TimeStyle;

/// The partition value of a machine name (see the [module documentation](self)).
pub fn partition_value(machine: Option<&str>) -> String {
    let Some(m) = machine else {
        return "__HIVE_DEFAULT_PARTITION__".to_owned();
    };
    let mut out = String::with_capacity(m.len());
    for b in m.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The UTC date (`YYYY-MM-DD`) of a record's time (a UTC instant).
fn utc_date(time: LogTime) -> Option<String> {
    time.to_system_time().map(|t| TimeStyle::Date.format(&t))
}

/// The UTC date of `record`, the log named `source`: an error when its time is out of range.
fn record_date(source: &str, record: &Record) -> Result<String, LogError> {
    utc_date(record.time).ok_or_else(|| {
        LogError::invalid(
            source,
            None,
            format!("time {} is out of range", record.time),
        )
    })
}

/// A log's columns grouped by machine, as a dataset partitions them: one group per machine that
/// the counter paths name (compared ignoring case, in the order of their first column), one for
/// the columns that name none. The one place of the rule of which records are a machine's: in a
/// log of several machines, a record where a machine has only blank cells is another machine's
/// sample, not one of its own.
#[derive(Clone, Debug, Default)]
pub struct MachineSplit {
    /// Per machine: its sub-header and the header columns it takes.
    machines: Vec<(LogHeader, Vec<usize>)>,
}

impl MachineSplit {
    /// The machines of `header`'s columns.
    pub fn new(header: &LogHeader) -> Self {
        let mut machines: Vec<(LogHeader, Vec<usize>)> = Vec::new();
        let mut by_machine: HashMap<Option<String>, usize> = HashMap::new();
        for (k, c) in header.counters.iter().enumerate() {
            let key = c
                .path
                .machine
                .as_deref()
                .map(|m| crate::path::fold_case(m).into_owned());
            let m = *by_machine.entry(key).or_insert_with(|| {
                machines.push((
                    LogHeader {
                        counters: Vec::new(),
                        ..header.clone()
                    },
                    Vec::new(),
                ));
                machines.len() - 1
            });
            if let Some((h, cols)) = machines.get_mut(m) {
                h.counters.push(c.clone());
                cols.push(k);
            }
        }
        MachineSplit { machines }
    }

    /// The number of machines (a group without a machine counted).
    pub fn len(&self) -> usize {
        self.machines.len()
    }

    /// Whether the log has no column.
    pub fn is_empty(&self) -> bool {
        self.machines.is_empty()
    }

    /// The header of machine `m`: the log's, with that machine's columns.
    pub fn header(&self, m: usize) -> Option<&LogHeader> {
        self.machines.get(m).map(|(h, _)| h)
    }

    /// The machine `m` as its first column names it; `None` for the columns that name none.
    pub fn machine(&self, m: usize) -> Option<&str> {
        self.header(m)?.counters.first()?.path.machine.as_deref()
    }

    /// Whether `record` (a record of the whole log) is a sample of machine `m`: always in a log of
    /// one machine; in a log of several, when one of its cells of `m` is not blank.
    pub fn holds(&self, m: usize, record: &Record) -> bool {
        let Some((_, cols)) = self.machines.get(m) else {
            return false;
        };
        self.machines.len() == 1
            || cols
                .iter()
                .any(|&c| !matches!(record.cells.get(c), None | Some(Cell::Blank)))
    }

    /// Machine `m`'s record of `record`: its time and that machine's cells, into `out`.
    pub fn cells(&self, m: usize, record: &Record, out: &mut Record) {
        out.time = record.time;
        out.cells.clear();
        if let Some((_, cols)) = self.machines.get(m) {
            out.cells.extend(
                cols.iter()
                    .map(|&c| record.cells.get(c).copied().unwrap_or(Cell::Blank)),
            );
        }
    }
}

/// Checks that `dir` holds nothing but a dataset's entries.
fn check_dataset_dir(dir: &Path, depth: usize) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        let ok = if kind.is_dir() {
            name.contains('=') && depth < 2
        } else {
            depth == 2 && name.ends_with(".parquet")
        };
        if !ok {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not part of a dataset (a dataset holds machine=NAME/date=YYYY-MM-DD/ \
                     directories of .parquet files)",
                    entry.path().display()
                ),
            ));
        }
        if kind.is_dir() {
            check_dataset_dir(&entry.path(), depth + 1)?;
        }
    }
    Ok(())
}

/// One machine's open file.
struct Part {
    date: String,
    writer: ParquetLogWriter<io::BufWriter<File>>,
    pending: PendingFile,
}

/// Writes a log into a Hive-partitioned dataset (see the [module documentation](self)).
pub struct DatasetWriter {
    dir: PathBuf,
    source: String,
    header: Option<LogHeader>,
    machines: MachineSplit,
    open: Vec<Option<Part>>,
    done: Vec<PendingFile>,
    record: Record,
    sequence: u32,
    stamp: String,
    written: Vec<PathBuf>,
}

impl std::fmt::Debug for DatasetWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasetWriter")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl DatasetWriter {
    /// A writer into the dataset directory `dir`, created when missing. An existing directory must
    /// hold only a dataset's entries.
    pub fn create(dir: &Path) -> Result<Self, LogError> {
        let source = dir.display().to_string();
        let err = |e: io::Error| LogError::io(&source, None, e);
        fs::create_dir_all(dir).map_err(err)?;
        check_dataset_dir(dir, 0).map_err(err)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Ok(DatasetWriter {
            dir: dir.to_owned(),
            source,
            header: None,
            machines: MachineSplit::default(),
            open: Vec::new(),
            done: Vec::new(),
            record: Record::default(),
            sequence: 0,
            stamp: format!("{now:x}-{}", std::process::id()),
            written: Vec::new(),
        })
    }

    /// The files written, once [`finish`](LogWriter::finish) has succeeded.
    pub fn written(&self) -> &[PathBuf] {
        &self.written
    }

    fn start_part(&mut self, m: usize, date: String) -> Result<Part, LogError> {
        let Some(header) = self.machines.header(m) else {
            return Err(LogError::usage(&self.source, "no such machine"));
        };
        let machine = self.machines.machine(m);
        let dir = self
            .dir
            .join(format!("machine={}", partition_value(machine)))
            .join(format!("date={date}"));
        let err = |e: io::Error| LogError::io(&dir.display().to_string(), None, e);
        fs::create_dir_all(&dir).map_err(err)?;
        self.sequence += 1;
        let path = dir.join(format!("part-{}-{}.parquet", self.stamp, self.sequence));
        let (pending, file) = PendingFile::create(&path).map_err(err)?;
        let mut writer =
            ParquetLogWriter::new(&path.display().to_string(), io::BufWriter::new(file));
        writer.write_header(header)?;
        Ok(Part {
            date,
            writer,
            pending,
        })
    }

    fn close_part(&mut self, part: Part) -> Result<(), LogError> {
        let Part {
            mut writer,
            pending,
            ..
        } = part;
        writer.finish()?;
        let source = pending.temp_path().display().to_string();
        let file = writer
            .into_finished()
            .ok_or_else(|| LogError::usage(&source, "not finished"))?
            .into_inner()
            .map_err(|e| LogError::io(&source, None, e.into_error()))?;
        file.sync_all()
            .map_err(|e| LogError::io(&source, None, e))?;
        self.done.push(pending);
        Ok(())
    }
}

impl LogWriter for DatasetWriter {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        self.machines = MachineSplit::new(header);
        self.open = (0..self.machines.len()).map(|_| None).collect();
        self.header = Some(header.clone());
        Ok(())
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        if self.header.is_none() {
            return Err(LogError::usage(&self.source, "no header written"));
        }
        let date = record_date(&self.source, record)?;
        for m in 0..self.machines.len() {
            if !self.machines.holds(m, record) {
                continue;
            }
            let same = self
                .open
                .get(m)
                .and_then(Option::as_ref)
                .is_some_and(|p| p.date == date);
            if !same {
                let old = self.open.get_mut(m).and_then(Option::take);
                if let Some(old) = old {
                    self.close_part(old)?;
                }
                let part = self.start_part(m, date.clone())?;
                if let Some(slot) = self.open.get_mut(m) {
                    *slot = Some(part);
                }
            }
            let Some(Some(part)) = self.open.get_mut(m) else {
                continue;
            };
            self.machines.cells(m, record, &mut self.record);
            part.writer.write_record(&self.record)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), LogError> {
        let open: Vec<Part> = self.open.iter_mut().filter_map(Option::take).collect();
        for part in open {
            self.close_part(part)?;
        }
        for pending in std::mem::take(&mut self.done) {
            let target = pending.target().to_owned();
            pending
                .commit(false)
                .map_err(|e| LogError::io(&target.display().to_string(), None, e))?;
            self.written.push(target);
        }
        Ok(())
    }
}

/// How deep in a dataset `dir` lies: 0 for the dataset's own directory, 1 for a `machine=NAME`
/// partition, 2 for a `date=` one inside it (the partition directories its name ends with).
fn partition_depth(dir: &Path) -> usize {
    dir.components()
        .rev()
        .take(2)
        .take_while(|c| c.as_os_str().to_string_lossy().contains('='))
        .count()
}

/// The `.parquet` files of the dataset `dir` (or of a partition of one), sorted by path.
pub fn dataset_files(dir: &Path) -> Result<Vec<PathBuf>, LogError> {
    let source = dir.display().to_string();
    let err = |e: io::Error| LogError::io(&source, None, e);
    check_dataset_dir(dir, partition_depth(dir)).map_err(err)?;
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(err)? {
            let entry = entry.map_err(err)?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if entry.file_type().map_err(err)?.is_dir() {
                stack.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The `machine=NAME` partitions of the dataset `dir`, sorted by path: one log per machine
/// (each a dataset of its own, see [`DatasetReader::open`]). Empty for a partition (`dir` is
/// itself a `machine=` or `date=` directory).
///
/// # Errors
/// `dir` cannot be read or holds something that is not part of a dataset.
pub fn machine_partitions(dir: &Path) -> Result<Vec<PathBuf>, LogError> {
    let depth = partition_depth(dir);
    let err = |e: io::Error| LogError::io(&dir.display().to_string(), None, e);
    check_dataset_dir(dir, depth).map_err(err)?;
    if depth > 0 {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with("machine=")
            && entry.file_type().map_err(err)?.is_dir()
        {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// A dataset read back as one log: its files merged in time order (see [`Merge`]).
///
/// Every file is open at once (one row group of each in memory).
pub struct DatasetReader {
    merge: Merge,
    header: LogHeader,
    files: Vec<PathBuf>,
}

impl std::fmt::Debug for DatasetReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasetReader")
            .field("header", &self.header)
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl DatasetReader {
    /// Opens the dataset `dir` (or a partition of one: `DIR/machine=NAME`): every file must be a
    /// Parquet log of ours.
    pub fn open(dir: &Path) -> Result<Self, LogError> {
        let source = dir.display().to_string();
        let files = dataset_files(dir)?;
        if files.is_empty() {
            return Err(LogError::invalid(
                &source,
                None,
                "the dataset holds no .parquet file",
            ));
        }
        let mut inputs: Vec<Box<dyn LogReader>> = Vec::with_capacity(files.len());
        for f in &files {
            inputs.push(Box::new(ParquetLogReader::open(f)?));
        }
        let merge = Merge::new(inputs)?;
        let header = LogHeader {
            source,
            ..merge.header().clone()
        };
        Ok(DatasetReader {
            merge,
            header,
            files,
        })
    }

    /// The files of the dataset.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

impl LogReader for DatasetReader {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        self.merge.read_record(record)
    }

    fn select_columns(&mut self, keep: &[bool]) {
        self.merge.select_columns(keep)
    }
}

/// One batch of a log's long form in its dataset partition ([`PartitionBatches`]).
#[derive(Debug)]
pub struct PartitionBatch {
    /// The machine as the counter paths name it; `None` for the columns that name none.
    pub machine: Option<String>,
    /// The UTC date of the rows (`YYYY-MM-DD`).
    pub date: String,
    /// The rows: the long form of that machine's columns ([`LongLayout`] of its header, raw
    /// columns when its columns keep raw samples), grouped by column, then by time.
    pub batch: RecordBatch,
}

/// One machine's records waiting to become a batch, all of one date.
#[derive(Debug)]
struct Pending {
    layout: LongLayout,
    per_batch: usize,
    date: String,
    records: Vec<Record>,
}

/// A log's long form split as [`DatasetWriter`] splits it into files: by machine
/// ([`MachineSplit`], the rule of which records are a machine's) and UTC date of the records, in
/// batches of about [`ROWS_PER_BATCH`](super::ROWS_PER_BATCH) rows. The rows of a machine and
/// date are those its dataset files would hold, so an engine that writes these batches
/// partitioned by machine and date (Spark's `partitionBy("machine", "date")`) writes the rows of
/// `relog LOG -o DIR/`. Memory holds one batch per machine.
pub struct PartitionBatches<R: LogReader> {
    reader: R,
    split: MachineSplit,
    pending: Vec<Pending>,
    ready: VecDeque<PartitionBatch>,
    record: Record,
    part: Record,
    done: bool,
}

impl<R: LogReader> std::fmt::Debug for PartitionBatches<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionBatches")
            .field("split", &self.split)
            .finish_non_exhaustive()
    }
}

impl<R: LogReader> PartitionBatches<R> {
    /// The partitions of `reader`'s log.
    ///
    /// # Errors
    /// A machine's long form cannot be laid out (more distinct names than a dictionary holds).
    pub fn new(reader: R) -> Result<Self, LogError> {
        let split = MachineSplit::new(reader.header());
        let mut pending = Vec::with_capacity(split.len());
        for m in 0..split.len() {
            let Some(header) = split.header(m) else {
                continue;
            };
            pending.push(Pending {
                layout: LongLayout::new(header)?,
                per_batch: records_per_batch(header.counters.len()),
                date: String::new(),
                records: Vec::new(),
            });
        }
        Ok(PartitionBatches {
            reader,
            split,
            pending,
            ready: VecDeque::new(),
            record: Record::default(),
            part: Record::default(),
            done: false,
        })
    }

    /// Machine `m`'s pending records as a batch, ready to be handed out.
    fn flush(&mut self, m: usize) -> Result<(), LogError> {
        let (Some(p), Some(header)) = (self.pending.get_mut(m), self.split.header(m)) else {
            return Ok(());
        };
        if p.records.is_empty() {
            return Ok(());
        }
        let batch = long_batch(header, &p.layout, &p.records)?;
        p.records.clear();
        self.ready.push_back(PartitionBatch {
            machine: self.split.machine(m).map(str::to_owned),
            date: p.date.clone(),
            batch,
        });
        Ok(())
    }

    /// Reads the next record into the machines' pending batches; `false` at the end.
    fn read_one(&mut self) -> Result<bool, LogError> {
        if !self.reader.read_record(&mut self.record)? {
            for m in 0..self.pending.len() {
                self.flush(m)?;
            }
            return Ok(false);
        }
        let date = record_date(&self.reader.header().source, &self.record)?;
        for m in 0..self.pending.len() {
            if !self.split.holds(m, &self.record) {
                continue;
            }
            if self.pending.get(m).is_some_and(|p| p.date != date) {
                self.flush(m)?;
            }
            self.split.cells(m, &self.record, &mut self.part);
            let Some(p) = self.pending.get_mut(m) else {
                continue;
            };
            p.date.clone_from(&date);
            p.records.push(std::mem::take(&mut self.part));
            if p.records.len() >= p.per_batch {
                self.flush(m)?;
            }
        }
        Ok(true)
    }
}

impl<R: LogReader> Iterator for PartitionBatches<R> {
    type Item = Result<PartitionBatch, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.ready.is_empty() && !self.done {
            match self.read_one() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        self.ready.pop_front().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_values() {
        assert_eq!(partition_value(Some("WIN-SRV01")), "WIN-SRV01");
        assert_eq!(partition_value(Some("a b/c=é")), "a%20b%2Fc%3D%C3%A9");
        assert_eq!(partition_value(None), "__HIVE_DEFAULT_PARTITION__");
    }

    #[test]
    fn partition_depths() {
        assert_eq!(partition_depth(Path::new("logs/ds")), 0);
        assert_eq!(partition_depth(Path::new("logs/ds/")), 0);
        assert_eq!(partition_depth(Path::new("logs/ds/machine=WEB1")), 1);
        assert_eq!(partition_depth(Path::new("logs/ds/machine=WEB1/")), 1);
        assert_eq!(
            partition_depth(Path::new("ds/machine=WEB1/date=2026-11-28")),
            2
        );
        assert_eq!(partition_depth(Path::new("a=b/c=d/e=f")), 2);
    }
}
