//! Sources: anything that produces [`Snapshot`]s of named objects and counters.
//!
//! A [`Source`] describes what it offers ([`Source::catalog`]), lists the current instances of an
//! object ([`Source::instances`]) and collects raw values for a [`Request`] ([`Source::collect`]).
//! A [`crate::query::Query`] builds its request from the catalog ([`crate::query::Query::request`]).
//! Everything after the source (queries, the PDH formulas, output) is source-agnostic.
//!
//! * [`local`]: the live source of this machine, whichever platform it is;
//! * `linux` (Linux only): procfs/sysfs mapped onto the standard Windows objects and counters;
//! * [`windows`]: the performance registry (V1) and PerfLib V2, live on Windows;
//! * [`replay`]: recorded raw data, V1 block files and capture directories.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::counter_type::CounterType;
use crate::names::NameTable;
use crate::path::eq_ignore_case;
use crate::snapshot::Snapshot;

mod block;
#[cfg(target_os = "linux")]
pub mod linux;
pub mod replay;
pub(crate) mod snapshots;

pub use block::BlockSample;
pub mod windows;

/// The live source of this machine: procfs and sysfs on Linux (`linux::LinuxSource`), the performance
/// registry and PerfLib V2 on Windows ([`windows::WindowsSource`]). It is `Send`, so a collection
/// thread may own it.
///
/// # Errors
/// On other platforms, an error of kind [`SourceErrorKind::Unavailable`]: there is no live source,
/// but recorded data replays anywhere ([`replay`]).
pub fn local() -> Result<Box<dyn Source + Send>, SourceError> {
    #[cfg(target_os = "linux")]
    return Ok(Box::new(linux::LinuxSource::new()));
    #[cfg(windows)]
    return Ok(Box::new(windows::WindowsSource::local()));
    #[cfg(not(any(target_os = "linux", windows)))]
    Err(SourceError::new(
        SourceErrorKind::Unavailable,
        "no live source for this platform (there are live sources for Linux and Windows); \
         replay recorded blocks or a capture instead",
    ))
}

/// `PERF_DETAIL_NOVICE`: counters for all users.
pub const DETAIL_NOVICE: u32 = 100;
/// `PERF_DETAIL_ADVANCED`: counters for advanced users.
pub const DETAIL_ADVANCED: u32 = 200;

/// A producer of snapshots. Object-safe: callers may hold a `Box<dyn Source>`.
pub trait Source {
    /// The objects this source offers, with their counter definitions.
    fn catalog(&mut self) -> Result<Catalog, SourceError>;

    /// The current instance names of `object` (case-insensitive), in the order a collection
    /// would report them. Empty for single-instance objects.
    fn instances(&mut self, object: &str) -> Result<Vec<String>, SourceError>;

    /// Collects raw values for the requested objects and counters.
    ///
    /// The snapshot holds the requested objects, in request order, each with (at least) the requested
    /// counters' definitions and their companion base counters, with [`crate::snapshot::CounterDefinition::base`]
    /// links set and names filled.
    fn collect(&mut self, request: &Request) -> Result<Snapshot, SourceError>;

    /// Collects `request` like [`Source::collect`], as whichever form the source reads fastest: a
    /// [`Snapshot`], or a [`BlockSample`] read in place from a V1 block (a replay of block files)
    /// that holds the same objects, names and values as the snapshot would, with the same errors.
    /// [`crate::query::Query::collect`] computes its values from either. By default, a snapshot.
    ///
    /// # Errors
    /// As for [`Source::collect`].
    fn collect_sample(&mut self, request: &Request) -> Result<Sample<'_>, SourceError> {
        self.collect(request).map(Sample::Snapshot)
    }
}

/// One collection as [`Source::collect_sample`] gives it.
#[derive(Debug)]
pub enum Sample<'s> {
    /// The owned snapshot.
    Snapshot(Snapshot),
    /// The objects read in place from a V1 block, borrowing the source's buffer.
    Block(BlockSample<'s>),
}

/// Everything a source offers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Catalog {
    /// The objects, in the source's order.
    pub objects: Vec<ObjectInfo>,
    /// Object and counter names in the machine's language, by title index ([`ObjectInfo::index`],
    /// [`CatalogCounter::index`]): `HKEY_PERFORMANCE_NLSTEXT` on Windows, the other languages of a
    /// capture or of a replay's extra name tables. Empty when the source has none. Counter paths
    /// may name objects and counters in this language as well as in English
    /// ([`Catalog::find`], [`crate::query::Query::request`]), as PDH's `PdhAddCounter` and
    /// `PdhAddEnglishCounter` together accept them.
    pub local_names: NameTable,
}

impl Catalog {
    /// The catalog of a whole snapshot, by the rule of the sources that read whole snapshots (the
    /// registry source, replays): its named objects in snapshot order (the first of several with one
    /// name) with their displayable counters that have a name, since a counter path selects objects
    /// and counters by name. Help texts come from `help` (by help index) when given.
    pub fn of_snapshot(snapshot: &Snapshot, help: Option<&NameTable>) -> Catalog {
        snapshots::catalog_of(snapshot, help)
    }

    /// The object with this name (case-insensitive).
    pub fn object(&self, name: &str) -> Option<&ObjectInfo> {
        self.objects.iter().find(|o| eq_ignore_case(&o.name, name))
    }

    /// The object a counter path names `name`: the object with this English name, or else the
    /// object whose title index has this name in the machine's language ([`Catalog::local_names`]).
    /// Names compare ignoring case, as paths compare them.
    ///
    /// ```
    /// use perfcounters::names::NameTable;
    /// use perfcounters::source::{Catalog, ObjectInfo};
    ///
    /// let object = |name: &str, index| ObjectInfo {
    ///     name: name.into(),
    ///     index,
    ///     help: String::new(),
    ///     detail_level: 100,
    ///     multi_instance: true,
    ///     counters: Vec::new(),
    /// };
    /// let mut german = NameTable::new();
    /// german.insert(238, "Prozessor");
    /// let catalog = Catalog {
    ///     objects: vec![object("Processor", 238), object("Process", 230)],
    ///     local_names: german,
    /// };
    /// assert_eq!(catalog.find("processor").map(|o| o.index), Some(238));
    /// assert_eq!(catalog.find("PROZESSOR").map(|o| o.index), Some(238));
    /// assert!(catalog.find("Prozess").is_none());
    /// assert_eq!(catalog.close_object_names("Prozess"), ["Process", "Prozessor"]);
    /// ```
    pub fn find(&self, name: &str) -> Option<&ObjectInfo> {
        self.objects
            .iter()
            .find(|o| eq_ignore_case(&o.name, name))
            .or_else(|| {
                self.objects.iter().find(|o| {
                    self.local_names_of(o.index)
                        .any(|n| eq_ignore_case(n, name))
                })
            })
    }

    /// The names of title index `index` in the machine's language ([`Catalog::local_names`]);
    /// none for index 0 (V2 countersets and their counters have no title index).
    pub fn local_names_of(&self, index: u32) -> impl Iterator<Item = &str> + '_ {
        self.local_names.names(index).filter(move |_| index != 0)
    }

    /// Up to three object names close to `name` ([`crate::suggest::suggest`]), in English and in the
    /// machine's language: what to suggest for a name [`Catalog::find`] does not know.
    pub fn close_object_names(&self, name: &str) -> Vec<String> {
        let names = self
            .objects
            .iter()
            .flat_map(|o| std::iter::once(o.name.as_str()).chain(self.local_names_of(o.index)));
        crate::suggest::suggest(name, names)
    }

    /// Up to three counter names of `object` close to `name` ([`crate::suggest::suggest`]), in
    /// English and in the machine's language: what to suggest for a counter the object lacks.
    pub fn close_counter_names(&self, object: &ObjectInfo, name: &str) -> Vec<String> {
        let names = object
            .counters
            .iter()
            .flat_map(|c| std::iter::once(c.name.as_str()).chain(self.local_names_of(c.index)));
        crate::suggest::suggest(name, names)
    }

    /// The object `name` ([`Catalog::find`]), or the message for one the catalog does not know,
    /// with its close names: `no object named "Procesor"; did you mean "Processor" or "Process"?`
    /// (what `list OBJECT` and the Python package's `list_counters` say).
    ///
    /// # Errors
    /// The object is not offered.
    pub fn find_or_suggest(&self, name: &str) -> Result<&ObjectInfo, String> {
        self.find(name).ok_or_else(|| {
            format!(
                "no object named \"{name}\"{}",
                crate::suggest::DidYouMean(&self.close_object_names(name))
            )
        })
    }
}

/// One object of a [`Catalog`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// The English object name, e.g. `Processor`.
    pub name: String,
    /// The Windows title index of the name, 0 when not known.
    pub index: u32,
    /// What the object describes.
    pub help: String,
    /// Detail level (the lowest of its counters).
    pub detail_level: u32,
    /// Whether the object has named instances (`false` for singletons such as `Memory`).
    pub multi_instance: bool,
    /// The displayable counters (companion base counters are not listed; a collection adds them).
    pub counters: Vec<CatalogCounter>,
}

impl ObjectInfo {
    /// The counter with this name (case-insensitive).
    pub fn counter(&self, name: &str) -> Option<&CatalogCounter> {
        self.counters.iter().find(|c| eq_ignore_case(&c.name, name))
    }
}

/// One counter of an [`ObjectInfo`], as a source describes it: names, help, type and detail level.
/// (A log's column carries a [`CounterInfo`](crate::counter_type::CounterInfo) instead: what its raw
/// samples need.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogCounter {
    /// The English counter name, e.g. `% Processor Time`.
    pub name: String,
    /// The Windows title index of the name, 0 when not known.
    pub index: u32,
    /// Explanation, including how the value is obtained and any approximation.
    pub help: String,
    /// The counter type, which selects the PDH formula.
    pub counter_type: CounterType,
    /// Default scale (power of ten, for graphing).
    pub scale: i32,
    /// Detail level (`100` novice, `200` advanced, …).
    pub detail_level: u32,
    /// The type of the companion counter that a collection places right after this one, if any.
    pub base_type: Option<CounterType>,
}

/// What to collect: objects and, per object, counter names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The requested objects.
    pub objects: Vec<ObjectRequest>,
}

/// One object of a [`Request`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectRequest {
    /// The object name (case-insensitive).
    pub object: String,
    /// The counter names wanted (case-insensitive); empty means all counters.
    pub counters: Vec<String>,
}

impl Request {
    /// An empty request.
    pub fn new() -> Self {
        Request::default()
    }

    /// Adds an object with the given counters (empty = all) and returns the request.
    pub fn object<S: AsRef<str>>(mut self, object: &str, counters: &[S]) -> Self {
        self.objects.push(ObjectRequest {
            object: object.to_string(),
            counters: counters.iter().map(|c| c.as_ref().to_string()).collect(),
        });
        self
    }

    /// Adds an object with all of its counters and returns the request.
    pub fn all_of(self, object: &str) -> Self {
        self.object::<&str>(object, &[])
    }
}

/// The category of a [`SourceError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceErrorKind {
    /// A file or directory could not be read.
    Io,
    /// A file's content is not what the source expects.
    Parse,
    /// The requested object does not exist in this source.
    UnknownObject,
    /// The requested counter does not exist in the object.
    UnknownCounter,
    /// A system call failed (the message names the call and the error code).
    Os,
    /// The source cannot work on this system (a missing function, an empty answer).
    Unavailable,
    /// A recorded source has no more samples.
    Exhausted,
    /// Recorded or returned data is malformed.
    Decode,
}

/// The underlying error of a [`SourceError`].
pub(crate) type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error from a source: names the file (when there is one), the line, and the problem.
///
/// Displayed as `"/proc/stat: line 3: expected at least 4 numbers after 'cpu0'"`. When the problem
/// comes from another error (an [`io::Error`], a [`DecodeError`](crate::format::DecodeError) of
/// malformed data, …), the message says what failed and [`source`](std::error::Error::source)
/// returns that error (it is not repeated in the message), so a caller can downcast to the typed
/// error and [`ErrorChain`](crate::ErrorChain) prints both:
///
/// ```
/// use std::error::Error;
/// use perfcounters::format::{v1::PerfDataBlock, DecodeError};
/// use perfcounters::source::{SourceError, SourceErrorKind};
/// use perfcounters::ErrorChain;
///
/// let cause = PerfDataBlock::parse(&[0; 4]).unwrap_err();
/// let e = SourceError::decode("RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"Global\")", cause);
/// assert_eq!(e.kind(), SourceErrorKind::Decode);
/// let decode = e.source().unwrap().downcast_ref::<DecodeError>().unwrap();
/// assert_eq!((decode.structure(), decode.offset()), ("PERF_DATA_BLOCK", 0));
/// assert_eq!(e.to_string(), "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"Global\")");
/// assert_eq!(
///     ErrorChain(&e).to_string(),
///     "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"Global\"): PERF_DATA_BLOCK at offset 0: \
///      buffer of 4 bytes is shorter than the 88-byte header"
/// );
/// ```
#[derive(Debug)]
pub struct SourceError {
    kind: SourceErrorKind,
    path: Option<PathBuf>,
    line: Option<usize>,
    message: String,
    source: Option<Cause>,
}

impl SourceError {
    /// A parse error in `path` at `line` (1-based; `None` for the whole file).
    pub fn parse(path: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        SourceError {
            kind: SourceErrorKind::Parse,
            path: Some(path.to_path_buf()),
            line,
            message: message.into(),
            source: None,
        }
    }

    /// An I/O error on `path`; the [`io::Error`] is the [`source`](std::error::Error::source).
    /// Displayed as the path alone (the cause says what went wrong).
    pub fn io(path: &Path, error: io::Error) -> Self {
        SourceError {
            kind: SourceErrorKind::Io,
            path: Some(path.to_path_buf()),
            line: None,
            message: String::new(),
            source: Some(Box::new(error)),
        }
    }

    /// Malformed data: `context` says what returned or held it (a call, a file's role), `error` is the
    /// decoder's error (typically a [`DecodeError`](crate::format::DecodeError)). Displayed as
    /// `context`; `error` is the [`source`](std::error::Error::source).
    pub fn decode(
        context: impl Into<String>,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        SourceError::caused_by(SourceErrorKind::Decode, context, error)
    }

    /// An error of the given kind caused by `error`: displayed as `context` (what failed; it may
    /// be empty), with `error` as the [`source`](std::error::Error::source).
    pub fn caused_by(
        kind: SourceErrorKind,
        context: impl Into<String>,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        SourceError {
            kind,
            path: None,
            line: None,
            message: context.into(),
            source: Some(Box::new(error)),
        }
    }

    /// An error of the given kind with a message and no file.
    pub fn new(kind: SourceErrorKind, message: impl Into<String>) -> Self {
        SourceError {
            kind,
            path: None,
            line: None,
            message: message.into(),
            source: None,
        }
    }

    /// A failed system call: `call` returned the Win32/OS error `code`; `context` says what was asked.
    /// Displayed as `"RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"238\"): error 5 (access denied)"`.
    pub fn os(call: &str, code: u32, context: &str) -> Self {
        let what = match os_error_name(code) {
            Some(n) => format!("error {code} ({n})"),
            None => format!("error {code}"),
        };
        let call = if context.is_empty() {
            call.to_string()
        } else {
            format!("{call}({context})")
        };
        SourceError::new(SourceErrorKind::Os, format!("{call}: {what}"))
    }

    /// An error of the given kind with a message (what failed) and an optional underlying error
    /// (the cause, which the message does not repeat), as another error type of the crate hands its
    /// parts over.
    pub(crate) fn from_parts(
        kind: SourceErrorKind,
        message: String,
        source: Option<Cause>,
    ) -> Self {
        SourceError {
            kind,
            path: None,
            line: None,
            message,
            source,
        }
    }

    /// Sets the file the error is about.
    pub fn with_path(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    /// The object `name` is not offered.
    pub fn unknown_object(name: &str) -> Self {
        SourceError {
            kind: SourceErrorKind::UnknownObject,
            path: None,
            line: None,
            message: format!("no object named '{name}'"),
            source: None,
        }
    }

    /// The counter `counter` is not part of `object`.
    pub fn unknown_counter(object: &str, counter: &str) -> Self {
        SourceError {
            kind: SourceErrorKind::UnknownCounter,
            path: None,
            line: None,
            message: format!("object '{object}' has no counter named '{counter}'"),
            source: None,
        }
    }

    /// The category.
    pub fn kind(&self) -> SourceErrorKind {
        self.kind
    }

    /// The file the error is about, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The 1-based line number, if known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// What failed, without file and line (empty when the cause, the
    /// [`source`](std::error::Error::source), says it all).
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The common Win32 error codes the sources meet, by name.
pub fn os_error_name(code: u32) -> Option<&'static str> {
    Some(match code {
        2 => "file not found",
        5 => "access denied",
        6 => "invalid handle",
        8 => "not enough memory",
        21 => "device not ready",
        50 => "not supported",
        87 => "invalid parameter",
        120 => "function not implemented",
        122 => "insufficient buffer",
        170 => "busy",
        234 => "more data",
        1168 => "not found",
        1722 => "RPC server unavailable",
        _ => return None,
    })
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::with_capacity(3);
        let path = self.path.as_ref().map(|p| p.display().to_string());
        parts.extend(path);
        parts.extend(self.line.map(|l| format!("line {l}")));
        if !self.message.is_empty() {
            parts.push(self.message.clone());
        }
        f.write_str(&parts.join(": "))
    }
}

impl std::error::Error for SourceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_display_names_file_and_line() {
        let e = SourceError::parse(
            Path::new("/proc/stat"),
            Some(3),
            "expected at least 4 numbers after 'cpu0'",
        );
        assert_eq!(
            e.to_string(),
            "/proc/stat: line 3: expected at least 4 numbers after 'cpu0'"
        );
        assert_eq!(e.kind(), SourceErrorKind::Parse);
        assert_eq!(e.line(), Some(3));
        let e = SourceError::unknown_counter("Memory", "Bogus");
        assert_eq!(
            e.to_string(),
            "object 'Memory' has no counter named 'Bogus'"
        );
        assert!(e.path().is_none());
    }

    #[test]
    fn os_errors_name_the_call_and_code() {
        let e = SourceError::os("RegQueryValueExW", 5, "HKEY_PERFORMANCE_DATA, \"238\"");
        assert_eq!(
            e.to_string(),
            "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"238\"): error 5 (access denied)"
        );
        assert_eq!(e.kind(), SourceErrorKind::Os);
        assert_eq!(
            SourceError::os("PerfOpenQueryHandle", 4242, "").to_string(),
            "PerfOpenQueryHandle: error 4242"
        );
    }

    #[test]
    fn request_builder() {
        let r = Request::new()
            .object("Processor", &["% Processor Time"])
            .all_of("Memory");
        assert_eq!(r.objects.len(), 2);
        assert_eq!(r.objects[0].counters, ["% Processor Time"]);
        assert!(r.objects[1].counters.is_empty());
    }

    #[test]
    fn trait_is_object_safe() {
        fn _takes(_s: Box<dyn Source>) {}
    }
}
