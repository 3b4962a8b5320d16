//! Which kind of recorded data a list of paths holds, and opening it: one rule for every front end
//! that replays paths (or decodes one).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::{BlgRecording, BlockRecording, CaptureRecording, ReplaySource};
use crate::log::{self, LogError, LogFormat};
use crate::names::NameTable;
use crate::source::SourceError;

/// The kind of data a list of replay paths holds ([`ReplayInput::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// V1 block files.
    BlockFiles,
    /// A capture directory.
    Capture,
    /// A binary log (`.blg`).
    BinaryLog,
    /// Counter logs of computed values, of this format (the first log's).
    Log(LogFormat),
}

/// What a list of replay paths holds, decided by [`ReplayInput::classify`].
///
/// [`ReplayInput::classify`] looks at the paths ([`LogFormat::of_file`] for a file's kind, by its
/// content first and its name second):
///
/// * one directory is a capture ([`ReplayInput::Capture`]);
/// * one binary log (`.blg`) is replayed as it is ([`ReplayInput::BinaryLog`]);
/// * paths that are all counter logs of computed values — PDH-CSV/TSV, SQL (`SQL:file.db!log` or
///   the database file), Parquet — or file-name patterns (`*`, `?`) that match only such logs are
///   [`ReplayInput::Log`]: they are read with [`crate::log::open_merged`], not replayed;
/// * any other paths are V1 block files, one sample per file in the given order
///   ([`ReplayInput::BlockFiles`]); a path that cannot be read is one too, and its error comes when
///   its sample is read.
///
/// A capture or a binary log among other paths, or a counter log among block files, is refused.
/// [`ReplayInput::open`] opens the raw data as a [`Recording`](crate::source::replay::Recording)
/// ([`OpenedRecording`]); a name table ([`NameTable::load`]) applies to block files only.
///
/// ```
/// use perfcounters::source::replay::{InputKind, ReplayErrorKind, ReplayInput};
///
/// let dir = std::env::temp_dir().join(format!("perfcounters-replay-input-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let log = dir.join("log.csv");
/// std::fs::write(&log, "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n").unwrap();
/// let block = dir.join("0001.blk");
///
/// // A counter log alone is read as a log; among block files it is refused.
/// let input = ReplayInput::classify(&[log.clone()]).unwrap();
/// assert_eq!(input.kind(), InputKind::Log(perfcounters::log::LogFormat::Csv));
/// let e = ReplayInput::classify(&[block.clone(), log.clone()]).unwrap_err();
/// assert!(matches!(e.kind(), ReplayErrorKind::NotRawData { .. }));
/// // A directory alone is a capture; among other paths it is refused, in the caller's words.
/// assert_eq!(ReplayInput::classify(&[dir.clone()]).unwrap().kind(), InputKind::Capture);
/// let e = ReplayInput::classify(&[dir.clone(), block.clone()]).unwrap_err();
/// assert_eq!(
///     e.with_flags("--replay", "--names").to_string(),
///     format!("{} is a directory: a capture directory must be the only --replay path", dir.display())
/// );
/// // Anything else is block files.
/// assert_eq!(ReplayInput::classify(&[block]).unwrap().kind(), InputKind::BlockFiles);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayInput {
    /// V1 block files, one sample per file, in this order.
    BlockFiles(Vec<PathBuf>),
    /// A capture directory ([`crate::format::capture`]).
    Capture(PathBuf),
    /// A binary log (`.blg`).
    BinaryLog(PathBuf),
    /// Counter logs of computed values, as given (file names, `SQL:file.db!log`, file-name
    /// patterns), for [`crate::log::open_merged`]. A path that is not UTF-8 is given lossily.
    Log {
        /// The logs.
        inputs: Vec<String>,
        /// The format of the first.
        format: LogFormat,
    },
}

/// Raw data opened for replay ([`ReplayInput::open`]): the recording of its kind.
#[derive(Debug)]
pub enum OpenedRecording {
    /// V1 block files, named by the built-in English table and the name table given. (Each
    /// recording is boxed: they are large, and of different sizes.)
    BlockFiles(Box<BlockRecording>),
    /// A capture directory.
    Capture(Box<CaptureRecording>),
    /// A binary log.
    BinaryLog(Box<BlgRecording>),
}

/// What one path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PathKind {
    Directory,
    BinaryLog,
    Log(LogFormat),
    Other,
}

/// The log format of a file, `None` when it is none or cannot be read (a block file then, whose
/// reading reports the error).
fn file_format(path: &Path) -> Option<LogFormat> {
    LogFormat::of_file(path).ok().flatten()
}

/// What `path` is: a `SQL:` name or a pattern whose files are all counter logs is a log.
fn path_kind(path: &Path) -> Result<PathKind, ReplayError> {
    if let Some(name) = path.to_str() {
        if LogFormat::from_name(name) == Some(LogFormat::Sql) {
            return Ok(PathKind::Log(LogFormat::Sql));
        }
        if name.contains(['*', '?']) {
            let files = log::expand(name).map_err(ReplayErrorKind::Log)?;
            let mut first = None;
            for f in &files {
                match file_format(f) {
                    Some(LogFormat::Binary) | None => return Ok(PathKind::Other),
                    Some(format) => {
                        first.get_or_insert(format);
                    }
                }
            }
            return Ok(first.map_or(PathKind::Other, PathKind::Log));
        }
    }
    if path.is_dir() {
        return Ok(PathKind::Directory);
    }
    Ok(match file_format(path) {
        Some(LogFormat::Binary) => PathKind::BinaryLog,
        Some(format) => PathKind::Log(format),
        None => PathKind::Other,
    })
}

fn lossy(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl ReplayInput {
    /// What `paths` hold (see [`ReplayInput`] for the rules).
    ///
    /// # Errors
    /// [`ReplayErrorKind::NoPaths`] for no path; [`ReplayErrorKind::NotRawData`] for a counter log
    /// among paths that are not all logs; [`ReplayErrorKind::NotAlone`] for a capture directory
    /// or a binary log among other paths; [`ReplayErrorKind::Log`] for a file-name pattern that
    /// matches no file.
    pub fn classify(paths: &[PathBuf]) -> Result<ReplayInput, ReplayError> {
        let kinds = paths
            .iter()
            .map(|p| path_kind(p))
            .collect::<Result<Vec<_>, _>>()?;
        match (paths, kinds.as_slice()) {
            ([], _) => return Err(ReplayErrorKind::NoPaths.into()),
            ([dir], [PathKind::Directory]) => return Ok(ReplayInput::Capture(dir.clone())),
            ([log], [PathKind::BinaryLog]) => return Ok(ReplayInput::BinaryLog(log.clone())),
            _ => {}
        }
        let log_format = |k: &PathKind| match k {
            PathKind::Log(f) => Some(*f),
            _ => None,
        };
        if let Some(format) = kinds.first().and_then(log_format) {
            if kinds.iter().all(|k| log_format(k).is_some()) {
                let inputs = paths.iter().map(|p| lossy(p)).collect();
                return Ok(ReplayInput::Log { inputs, format });
            }
        }
        let find = |wanted: fn(&PathKind) -> bool| {
            paths
                .iter()
                .zip(&kinds)
                .find(|(_, k)| wanted(k))
                .map(|(p, k)| (p, *k))
        };
        if let Some((path, PathKind::Log(format))) = find(|k| matches!(k, PathKind::Log(_))) {
            return Err(ReplayErrorKind::NotRawData {
                path: lossy(path),
                format,
            }
            .into());
        }
        if let Some((path, _)) = find(|k| *k == PathKind::BinaryLog) {
            return Err(ReplayErrorKind::NotAlone {
                path: path.clone(),
                kind: InputKind::BinaryLog,
            }
            .into());
        }
        if let Some((path, _)) = find(|k| *k == PathKind::Directory) {
            return Err(ReplayErrorKind::NotAlone {
                path: path.clone(),
                kind: InputKind::Capture,
            }
            .into());
        }
        Ok(ReplayInput::BlockFiles(paths.to_vec()))
    }

    /// The kind of data.
    pub fn kind(&self) -> InputKind {
        match self {
            ReplayInput::BlockFiles(_) => InputKind::BlockFiles,
            ReplayInput::Capture(_) => InputKind::Capture,
            ReplayInput::BinaryLog(_) => InputKind::BinaryLog,
            ReplayInput::Log { format, .. } => InputKind::Log(*format),
        }
    }

    /// The first path, as messages name the input.
    fn first_path(&self) -> String {
        match self {
            ReplayInput::BlockFiles(files) => files.first().map(|p| lossy(p)).unwrap_or_default(),
            ReplayInput::Capture(p) | ReplayInput::BinaryLog(p) => lossy(p),
            ReplayInput::Log { inputs, .. } => inputs.first().cloned().unwrap_or_default(),
        }
    }

    /// Refuses counter logs: replay reads raw data.
    ///
    /// # Errors
    /// [`ReplayErrorKind::NotRawData`] for [`ReplayInput::Log`].
    pub fn require_raw_data(&self) -> Result<(), ReplayError> {
        match self {
            ReplayInput::Log { format, .. } => Err(ReplayErrorKind::NotRawData {
                path: self.first_path(),
                format: *format,
            }
            .into()),
            _ => Ok(()),
        }
    }

    /// Refuses a name table (`names` given) for data that names its counters itself: a name
    /// table names the indexes of block files only.
    ///
    /// # Errors
    /// [`ReplayErrorKind::NamesNotApplicable`] when `names` is given for anything but block files.
    pub fn check_names(&self, names: Option<&Path>) -> Result<(), ReplayError> {
        match (self, names) {
            (ReplayInput::BlockFiles(_), _) | (_, None) => Ok(()),
            _ => Err(ReplayErrorKind::NamesNotApplicable {
                path: self.first_path(),
                kind: self.kind(),
            }
            .into()),
        }
    }

    /// Opens the raw data for replay; block files are named with the name table in the file
    /// `names` ([`NameTable::load`], merged after the built-in English names:
    /// [`BlockRecording::with_names`]).
    ///
    /// # Errors
    /// Those of [`ReplayInput::require_raw_data`] and [`ReplayInput::check_names`];
    /// [`ReplayErrorKind::NameTable`] when the name table cannot be read; the
    /// [`ReplayErrorKind::Source`] error of [`CaptureRecording::open`] or [`BlgRecording::open`].
    pub fn open(self, names: Option<&Path>) -> Result<OpenedRecording, ReplayError> {
        self.require_raw_data()?;
        self.check_names(names)?;
        let source = ReplayErrorKind::Source;
        match self {
            ReplayInput::BlockFiles(files) => {
                let mut recording = BlockRecording::new(files);
                if let Some(path) = names {
                    recording = recording.with_names(&load_names(path)?);
                }
                Ok(OpenedRecording::BlockFiles(Box::new(recording)))
            }
            ReplayInput::Capture(dir) => Ok(OpenedRecording::Capture(Box::new(
                CaptureRecording::open(&dir).map_err(source)?,
            ))),
            ReplayInput::BinaryLog(path) => Ok(OpenedRecording::BinaryLog(Box::new(
                BlgRecording::open(&path).map_err(source)?,
            ))),
            // Refused above.
            ReplayInput::Log { inputs, format } => Err(ReplayErrorKind::NotRawData {
                path: inputs.into_iter().next().unwrap_or_default(),
                format,
            }
            .into()),
        }
    }
}

/// Reads the name table in `path` ([`NameTable::load`]).
fn load_names(path: &Path) -> Result<NameTable, ReplayError> {
    NameTable::load(path).map_err(|error| {
        ReplayErrorKind::NameTable {
            path: path.to_path_buf(),
            error,
        }
        .into()
    })
}

impl OpenedRecording {
    /// Opens the raw data in `paths` ([`ReplayInput::classify`], then [`ReplayInput::open`]).
    ///
    /// # Errors
    /// Those of [`ReplayInput::classify`] and [`ReplayInput::open`].
    pub fn open(paths: &[PathBuf], names: Option<&Path>) -> Result<Self, ReplayError> {
        ReplayInput::classify(paths)?.open(names)
    }

    /// The kind of data.
    pub fn kind(&self) -> InputKind {
        match self {
            OpenedRecording::BlockFiles(_) => InputKind::BlockFiles,
            OpenedRecording::Capture(_) => InputKind::Capture,
            OpenedRecording::BinaryLog(_) => InputKind::BinaryLog,
        }
    }

    /// A source that replays the recording from its first sample.
    pub fn into_source(self) -> ReplaySource {
        match self {
            OpenedRecording::BlockFiles(r) => ReplaySource::new(*r),
            OpenedRecording::Capture(r) => ReplaySource::new(*r),
            OpenedRecording::BinaryLog(r) => ReplaySource::new(*r),
        }
    }
}

/// What is wrong with replay paths ([`ReplayError::kind`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplayErrorKind {
    /// No path was given.
    NoPaths,
    /// A path is a counter log of computed values, not raw data.
    NotRawData {
        /// The path as given.
        path: String,
        /// Its format.
        format: LogFormat,
    },
    /// A capture directory or a binary log among other paths: it must be the only one.
    NotAlone {
        /// The directory or log.
        path: PathBuf,
        /// [`InputKind::Capture`] or [`InputKind::BinaryLog`].
        kind: InputKind,
    },
    /// A name table was given for data that names its counters itself.
    NamesNotApplicable {
        /// The (first) path of the data.
        path: String,
        /// The kind of data.
        kind: InputKind,
    },
    /// The name table file cannot be read or parsed.
    NameTable {
        /// The name table file.
        path: PathBuf,
        /// [`NameTable::load`]'s error.
        error: io::Error,
    },
    /// A file-name pattern cannot be expanded ([`crate::log::expand`]).
    Log(LogError),
    /// The capture or binary log cannot be opened.
    Source(SourceError),
}

/// Replay paths that cannot be replayed, and why. Messages name the parameters of
/// [`ReplayInput::classify`] and [`ReplayInput::open`] (`paths`, `names`), or the flags of a front
/// end ([`ReplayError::with_flags`]). Errors of a pattern, a capture or a binary log are shown as
/// they are.
#[derive(Debug)]
pub struct ReplayError {
    /// Boxed: the error travels far, its kind is large.
    kind: Box<ReplayErrorKind>,
    /// How messages name the list of paths and the name table: the flags given to
    /// [`ReplayError::with_flags`].
    flags: Option<Box<(String, String)>>,
}

impl From<ReplayErrorKind> for ReplayError {
    fn from(kind: ReplayErrorKind) -> Self {
        ReplayError {
            kind: Box::new(kind),
            flags: None,
        }
    }
}

impl ReplayError {
    /// What is wrong.
    pub fn kind(&self) -> &ReplayErrorKind {
        &self.kind
    }

    /// The error with its messages naming the paths and the name table by a front end's flags
    /// (`"--replay"`, `"--names"`) instead of the parameters `paths` and `names`.
    pub fn with_flags(mut self, paths: &str, names: &str) -> Self {
        self.flags = Some(Box::new((paths.to_owned(), names.to_owned())));
        self
    }

    /// "path in `paths`" or "--replay path".
    fn one_path(&self) -> String {
        match self.paths_flag() {
            Some(flag) => format!("{flag} path"),
            None => "path in `paths`".to_owned(),
        }
    }

    /// "`names`" or "--names".
    fn names(&self) -> &str {
        self.flags.as_ref().map_or("`names`", |f| f.1.as_str())
    }

    /// The flag that names the paths, when given.
    fn paths_flag(&self) -> Option<&str> {
        self.flags.as_ref().map(|f| f.0.as_str())
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            ReplayErrorKind::NoPaths => match self.paths_flag() {
                Some(flag) => write!(f, "nothing to replay: no {flag} path given"),
                None => f.write_str("nothing to replay: `paths` is empty"),
            },
            ReplayErrorKind::NotRawData { path, format } => write!(
                f,
                "{path} is a {format} log, not raw data (block files, a capture directory, a \
                 .blg log): read it with `perfcounters relog {path}`"
            ),
            ReplayErrorKind::NotAlone { path, kind } => match kind {
                InputKind::Capture => write!(
                    f,
                    "{} is a directory: a capture directory must be the only {}",
                    path.display(),
                    self.one_path()
                ),
                _ => write!(
                    f,
                    "{} is a binary log: it must be the only {}",
                    path.display(),
                    self.one_path()
                ),
            },
            ReplayErrorKind::NamesNotApplicable { path, kind } => {
                write!(f, "{} applies to block files", self.names())?;
                match kind {
                    InputKind::Capture => {
                        write!(f, "; the capture {path} carries its own name tables")
                    }
                    InputKind::BinaryLog => {
                        write!(f, "; the binary log {path} names its counters itself")
                    }
                    InputKind::Log(format) => {
                        write!(f, "; the {format} log {path} names its counters itself")
                    }
                    InputKind::BlockFiles => Ok(()),
                }
            }
            ReplayErrorKind::NameTable { path, .. } => {
                write!(f, "cannot read name table {}", path.display())
            }
            ReplayErrorKind::Log(e) => e.fmt(f),
            ReplayErrorKind::Source(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ReplayError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            ReplayErrorKind::NameTable { error, .. } => Some(error),
            ReplayErrorKind::Log(e) => e.source(),
            ReplayErrorKind::Source(e) => e.source(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::blg::encode::{BlgEncodeOptions, BlgWriter};
    use crate::format::capture::Capture;

    /// A fresh directory for one test.
    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "perfcounters-replay-input-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const CSV: &str = "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n";
    const TSV: &str = "\"(PDH-TSV 4.0)\"\t\"\\\\H\\Memory\\Available Bytes\"\r\n";

    /// A directory with a CSV log, a TSV log, a SQLite database, a Parquet file, an empty binary
    /// log, two block files (whatever bytes: they are read when replayed) and an empty capture.
    fn files(name: &str) -> PathBuf {
        let dir = tempdir(name);
        std::fs::write(dir.join("a.csv"), CSV).unwrap();
        // The content decides: a TSV log named .csv, a CSV log named .dat.
        std::fs::write(dir.join("b.csv"), TSV).unwrap();
        std::fs::write(dir.join("c.dat"), CSV).unwrap();
        std::fs::write(dir.join("logs.db"), b"SQLite format 3\0").unwrap();
        std::fs::write(dir.join("log.parquet"), b"PAR1").unwrap();
        let blg = BlgWriter::new(
            std::io::Cursor::new(Vec::new()),
            BlgEncodeOptions::default(),
        )
        .unwrap()
        .finish()
        .unwrap()
        .into_inner();
        std::fs::write(dir.join("log.bin"), blg).unwrap();
        std::fs::write(dir.join("1.blk"), b"PERF").unwrap();
        std::fs::write(dir.join("2.blk"), b"").unwrap();
        Capture::default().write(&dir.join("capture")).unwrap();
        dir
    }

    fn classify(paths: &[PathBuf]) -> Result<ReplayInput, ReplayError> {
        ReplayInput::classify(paths)
    }

    #[test]
    fn each_kind_of_input() {
        let dir = files("kinds");
        let p = |name: &str| dir.join(name);
        let s = |name: &str| p(name).display().to_string();
        let blocks = vec![p("1.blk"), p("2.blk")];
        assert_eq!(
            classify(&blocks).unwrap(),
            ReplayInput::BlockFiles(blocks.clone())
        );
        // A path that cannot be read is a block file: reading its sample reports it.
        assert_eq!(
            classify(&[p("missing.csv")]).unwrap(),
            ReplayInput::BlockFiles(vec![p("missing.csv")])
        );
        assert_eq!(
            classify(&[p("capture")]).unwrap(),
            ReplayInput::Capture(p("capture"))
        );
        assert_eq!(
            classify(&[p("log.bin")]).unwrap(),
            ReplayInput::BinaryLog(p("log.bin"))
        );
        let log = |inputs: Vec<String>, format| ReplayInput::Log { inputs, format };
        for (name, format) in [
            ("a.csv", LogFormat::Csv),
            ("b.csv", LogFormat::Tsv),
            ("c.dat", LogFormat::Csv),
            ("logs.db", LogFormat::Sql),
            ("log.parquet", LogFormat::Parquet),
        ] {
            assert_eq!(classify(&[p(name)]).unwrap(), log(vec![s(name)], format));
            assert_eq!(classify(&[p(name)]).unwrap().kind(), InputKind::Log(format));
        }
        // A SQL log by its name; several logs; a pattern that matches logs only.
        let sql = format!("SQL:{}!log", s("logs.db"));
        assert_eq!(
            classify(&[PathBuf::from(&sql)]).unwrap(),
            log(vec![sql.clone()], LogFormat::Sql)
        );
        assert_eq!(
            classify(&[p("c.dat"), PathBuf::from(&sql)]).unwrap(),
            log(vec![s("c.dat"), sql], LogFormat::Csv)
        );
        assert_eq!(
            classify(&[p("*.csv")]).unwrap(),
            log(vec![s("*.csv")], LogFormat::Csv)
        );
        // A pattern that matches other files too names block files.
        assert_eq!(
            classify(&[p("?.blk")]).unwrap(),
            ReplayInput::BlockFiles(vec![p("?.blk")])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refusals_say_what_is_wrong_and_where() {
        let dir = files("refusals");
        let p = |name: &str| dir.join(name);
        // The folder with its separator: joined paths show the platform's (`\\` on Windows).
        let d = format!("{}{}", dir.display(), std::path::MAIN_SEPARATOR);
        let message = |paths: &[PathBuf]| classify(paths).unwrap_err().to_string();
        let flagged = |paths: &[PathBuf]| {
            classify(paths)
                .unwrap_err()
                .with_flags("--replay", "--names")
                .to_string()
        };
        assert_eq!(message(&[]), "nothing to replay: `paths` is empty");
        assert_eq!(flagged(&[]), "nothing to replay: no --replay path given");
        let mixed = [p("1.blk"), p("c.dat")];
        assert!(matches!(
            classify(&mixed).unwrap_err().kind(),
            ReplayErrorKind::NotRawData {
                format: LogFormat::Csv,
                ..
            }
        ));
        let c = p("c.dat");
        let c = c.display();
        let expected = format!(
            "{c} is a CSV log, not raw data (block files, a capture directory, a .blg \
             log): read it with `perfcounters relog {c}`"
        );
        assert_eq!(message(&mixed), expected);
        assert_eq!(flagged(&mixed), expected);
        let two = [p("log.bin"), p("1.blk")];
        assert_eq!(
            message(&two),
            format!("{d}log.bin is a binary log: it must be the only path in `paths`")
        );
        assert_eq!(
            flagged(&two),
            format!("{d}log.bin is a binary log: it must be the only --replay path")
        );
        let two = [p("1.blk"), p("capture")];
        assert_eq!(
            message(&two),
            format!(
                "{d}capture is a directory: a capture directory must be the only path in `paths`"
            )
        );
        assert_eq!(
            flagged(&two),
            format!(
                "{d}capture is a directory: a capture directory must be the only --replay path"
            )
        );
        // A pattern that matches nothing: the log layer's error.
        let e = classify(&[p("*.nothing")]).unwrap_err();
        assert!(matches!(e.kind(), ReplayErrorKind::Log(_)));
        assert_eq!(e.to_string(), format!("{d}*.nothing: no file matches"));

        // Opening: a log is not raw data; a name table applies to block files only.
        let names = p("names.txt");
        let open = |name: &str, names: Option<&Path>| {
            let e = classify(&[p(name)]).unwrap().open(names).unwrap_err();
            (
                e.to_string(),
                e.with_flags("--replay", "--names").to_string(),
            )
        };
        assert_eq!(
            open("logs.db", None).1,
            format!(
                "{d}logs.db is a SQL log, not raw data (block files, a capture directory, a \
                 .blg log): read it with `perfcounters relog {d}logs.db`"
            )
        );
        assert_eq!(
            open("capture", Some(&names)),
            (
                format!(
                    "`names` applies to block files; the capture {d}capture carries its own name \
                     tables"
                ),
                format!(
                    "--names applies to block files; the capture {d}capture carries its own name \
                     tables"
                )
            )
        );
        assert_eq!(
            open("log.bin", Some(&names)).1,
            format!("--names applies to block files; the binary log {d}log.bin names its counters itself")
        );
        let input = classify(&[p("b.csv")]).unwrap();
        assert_eq!(
            input.check_names(Some(&names)).unwrap_err().to_string(),
            format!(
                "`names` applies to block files; the TSV log {d}b.csv names its counters itself"
            )
        );
        input.check_names(None).unwrap();
        // A name table that cannot be read: the message names it, the cause is the I/O error.
        let e = classify(&[p("1.blk")])
            .unwrap()
            .open(Some(&names))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("cannot read name table {d}names.txt")
        );
        let cause = std::error::Error::source(&e)
            .and_then(|c| c.downcast_ref::<io::Error>())
            .map(io::Error::kind);
        assert_eq!(cause, Some(io::ErrorKind::NotFound));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn opens_each_kind_of_raw_data() {
        let dir = files("open");
        let p = |name: &str| dir.join(name);
        // Block files are named by the built-in English table and the table given.
        std::fs::write(p("names.txt"), "2 System\n100001 Widgets\n").unwrap();
        let opened = OpenedRecording::open(&[p("1.blk"), p("2.blk")], Some(&p("names.txt")));
        let Ok(OpenedRecording::BlockFiles(blocks)) = opened else {
            panic!("{opened:?}");
        };
        assert_eq!(blocks.files(), [p("1.blk"), p("2.blk")]);
        assert_eq!(blocks.names().name(100_001), Some("Widgets"));
        assert_eq!(blocks.names().name(238), Some("Processor"));
        let opened = OpenedRecording::open(&[p("capture")], None).unwrap();
        assert_eq!(opened.kind(), InputKind::Capture);
        // The errors of a capture or a binary log are theirs, as they are.
        let e = OpenedRecording::open(&[p("log.bin")], None).unwrap_err();
        assert!(matches!(e.kind(), ReplayErrorKind::Source(_)));
        assert_eq!(
            e.to_string(),
            format!("{}: the log holds no counter list", p("log.bin").display())
        );
        let blg = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/blg/pal-vista-SamplePerfmonLog.blg");
        if blg.is_file() {
            let opened = OpenedRecording::open(&[blg], None).unwrap();
            assert_eq!(opened.kind(), InputKind::BinaryLog);
            let mut source = opened.into_source();
            let catalog = crate::source::Source::catalog(&mut source).unwrap();
            assert!(catalog.object("Process").is_some());
        }
        // A capture directory that is not one: the capture's error, as it is.
        std::fs::create_dir_all(p("empty")).unwrap();
        let e = OpenedRecording::open(&[p("empty")], None).unwrap_err();
        assert!(matches!(e.kind(), ReplayErrorKind::Source(_)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
