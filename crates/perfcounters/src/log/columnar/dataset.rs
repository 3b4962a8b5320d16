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
//! [`DatasetReader`] reads a dataset back as one log: every file in time order (merged as relog
//! merges logs). A dataset directory holds only `key=value` directories and `.parquet` files of
//! ours (hidden entries, such as temporary files, are skipped); anything else is an error that
//! names it. A partition of a dataset (`DIR/machine=NAME/`, or one of its `date=` directories) is
//! read the same way, as a dataset of its own: [`machine_partitions`] lists a dataset's machines
//! so, one log each.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

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
    /// Per machine: its sub-header and the header columns it takes.
    machines: Vec<(LogHeader, Vec<usize>)>,
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
            machines: Vec::new(),
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
        let Some((header, _)) = self.machines.get(m) else {
            return Err(LogError::usage(&self.source, "no such machine"));
        };
        let machine = header
            .counters
            .first()
            .and_then(|c| c.path.machine.as_deref());
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
        let mut by_machine: HashMap<Option<String>, usize> = HashMap::new();
        for (k, c) in header.counters.iter().enumerate() {
            let key = c
                .path
                .machine
                .as_deref()
                .map(|m| crate::path::fold_case(m).into_owned());
            let m = *by_machine.entry(key).or_insert_with(|| {
                self.machines.push((
                    LogHeader {
                        counters: Vec::new(),
                        ..header.clone()
                    },
                    Vec::new(),
                ));
                self.machines.len() - 1
            });
            if let Some((h, cols)) = self.machines.get_mut(m) {
                h.counters.push(c.clone());
                cols.push(k);
            }
        }
        self.open = (0..self.machines.len()).map(|_| None).collect();
        self.header = Some(header.clone());
        Ok(())
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        if self.header.is_none() {
            return Err(LogError::usage(&self.source, "no header written"));
        }
        let date = utc_date(record.time).ok_or_else(|| {
            LogError::invalid(
                &self.source,
                None,
                format!("time {} is out of range", record.time),
            )
        })?;
        let several = self.machines.len() > 1;
        for m in 0..self.machines.len() {
            // Merged logs of several machines: a record where this machine has nothing is
            // another machine's sample, not one of this machine's.
            let empty = self.machines.get(m).is_some_and(|(_, cols)| {
                cols.iter()
                    .all(|&c| matches!(record.cells.get(c), None | Some(Cell::Blank)))
            });
            if several && empty {
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
            let (Some((_, cols)), Some(Some(part))) = (self.machines.get(m), self.open.get_mut(m))
            else {
                continue;
            };
            self.record.time = record.time;
            self.record.cells.clear();
            self.record.cells.extend(
                cols.iter()
                    .map(|&c| record.cells.get(c).copied().unwrap_or(Cell::Blank)),
            );
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
