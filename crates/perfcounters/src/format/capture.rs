//! Captures: the raw data of a Windows machine saved as a directory (a file format).
//!
//! A capture holds exactly the bytes the Windows APIs returned: V1 `PERF_DATA_BLOCK` blocks, the
//! `Counter` and `Help` name tables (REG_MULTI_SZ), and the PerfLib V2 results (counterset
//! registrations, the `PerfQueryCounterInfo` result and one `PerfQueryCounterData` block per sample).
//! [`Capture::write`] saves one and [`Capture::read`] loads and validates one;
//! [`crate::source::replay`] replays it through the ordinary [`crate::source::Source`] interface, so
//! paths, queries and formulas work on data recorded anywhere. The layout is documented in
//! `docs/capture.md`:
//!
//! ```text
//! DIR/capture.txt                  "perfcounters capture 1", then `key: value` lines
//! DIR/names/counter-009.msz        HKEY_PERFORMANCE_TEXT "Counter" (English)
//! DIR/names/help-009.msz           HKEY_PERFORMANCE_TEXT "Help"
//! DIR/names/counter-<lang>.msz     HKEY_PERFORMANCE_NLSTEXT (the user's language), and help-<lang>.msz
//! DIR/v2/<guid>/counterset.bin     PERF_REG_COUNTERSET_STRUCT, and name.bin, help.bin,
//!                                  counter-names.bin, counter-helps.bin
//! DIR/v2/counters.bin              PerfQueryCounterInfo result
//! DIR/samples/0001.v1.blk          sample 1, V1 block; 0001.v2.blk its V2 block; 0002.v1.blk …
//! ```

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::atomic_file::write_file;
use crate::format::v1::PerfDataBlock;
use crate::format::v2::{
    decode_string_buffer, parse_string, CounterSetRegInfo, CounterSpec, DataHeader,
    EncodedRegistration, Guid,
};
use crate::names::parse_multi_sz;

/// The first line of `capture.txt`.
pub const MAGIC: &str = "perfcounters capture 1";

/// The language id of the English name tables.
pub const ENGLISH: &str = "009";

/// The largest file a capture may hold (256 MiB); larger files are refused, not read.
pub const MAX_FILE_SIZE: u64 = 256 << 20;

const INFO_FILE: &str = "capture.txt";
const NAMES_DIR: &str = "names";
const V2_DIR: &str = "v2";
const SAMPLES_DIR: &str = "samples";
const COUNTERS_FILE: &str = "counters.bin";
const REG_FILES: [&str; 5] = [
    "counterset.bin",
    "name.bin",
    "help.bin",
    "counter-names.bin",
    "counter-helps.bin",
];

/// A capture: what a machine returned, byte for byte.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Capture {
    /// Where and when the capture was made.
    pub info: CaptureInfo,
    /// The name tables, in the order they are listed in `capture.txt`.
    pub names: Vec<NameTableFile>,
    /// The V2 countersets (`PerfQueryCounterSetRegistrationInfo` results, names in English).
    pub registrations: Vec<EncodedRegistration>,
    /// The `PerfQueryCounterInfo` result, shared by every sample's V2 block.
    pub v2_counters: Option<Vec<u8>>,
    /// The samples, in collection order.
    pub samples: Vec<CaptureSample>,
}

/// The `key: value` lines of `capture.txt`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CaptureInfo {
    /// The computer name.
    pub machine: String,
    /// The operating system, e.g. `Windows 10.0.19045`.
    pub os: String,
    /// When the capture was made, ISO 8601 UTC (`2026-11-22T09:00:00Z`).
    pub created: String,
    /// The program that made it, e.g. `perfcounters 0.1.0`.
    pub tool: String,
}

/// Which name table a [`NameTableFile`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// The `Counter` value: object and counter names.
    Counter,
    /// The `Help` value: help texts.
    Help,
}

impl NameKind {
    /// `"counter"` or `"help"`, as in the file name.
    pub fn as_str(self) -> &'static str {
        match self {
            NameKind::Counter => "counter",
            NameKind::Help => "help",
        }
    }
}

/// One name table as the registry returned it (REG_MULTI_SZ, UTF-16LE).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameTableFile {
    /// `Counter` or `Help`.
    pub kind: NameKind,
    /// The language id: `"009"` for English, otherwise the NLS language id as the machine gave it
    /// (e.g. `"007"`). ASCII letters and digits only.
    pub language: String,
    /// The REG_MULTI_SZ bytes.
    pub bytes: Vec<u8>,
}

impl NameTableFile {
    /// The file name inside `names/`: `counter-009.msz`, `help-007.msz`, …
    pub fn file_name(&self) -> String {
        format!("{}-{}.msz", self.kind.as_str(), self.language)
    }

    /// The relative path of the file: `names/counter-009.msz` (`names\counter-009.msz` on Windows).
    pub fn path(&self) -> PathBuf {
        Path::new(NAMES_DIR).join(self.file_name())
    }
}

/// One collection: the V1 block and/or the V2 block taken at the same moment.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CaptureSample {
    /// The `RegQueryValueExW(HKEY_PERFORMANCE_DATA)` result.
    pub v1: Option<Vec<u8>>,
    /// The `PerfQueryCounterData` result (`PERF_DATA_HEADER` block).
    pub v2: Option<Vec<u8>>,
}

/// The relative path of sample `number` (1-based), `v2` selecting the V2 block:
/// `samples/0001.v1.blk` (`samples\0001.v1.blk` on Windows).
pub fn sample_path(number: usize, v2: bool) -> PathBuf {
    let kind = if v2 { "v2" } else { "v1" };
    Path::new(SAMPLES_DIR).join(format!("{number:04}.{kind}.blk"))
}

/// The directory name of a counterset: its GUID in lower case, without braces.
pub fn counterset_dir_name(guid: &Guid) -> String {
    let s = guid.to_string();
    s.trim_start_matches('{').trim_end_matches('}').to_string()
}

/// The relative path of the directory that holds a registration: `v2/<guid>`, or `v2/?` when its
/// `counterset.bin` has no GUID.
pub fn registration_path(registration: &EncodedRegistration) -> PathBuf {
    let dir = registration_guid(registration)
        .map(|g| counterset_dir_name(&g))
        .unwrap_or_else(|| "?".into());
    Path::new(V2_DIR).join(dir)
}

/// The relative path of the `PerfQueryCounterInfo` result: `v2/counters.bin`.
pub fn counters_path() -> PathBuf {
    Path::new(V2_DIR).join(COUNTERS_FILE)
}

/// The underlying error of a [`CaptureError`].
type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A capture that cannot be read: the file and what is wrong with it. When the problem is an
/// [`io::Error`] or a block that does not decode ([`DecodeError`](crate::format::DecodeError)), that
/// error is the [`source`](std::error::Error::source) and the message does not repeat it.
#[derive(Debug)]
pub struct CaptureError {
    path: PathBuf,
    message: String,
    source: Option<Cause>,
}

impl CaptureError {
    fn new(path: PathBuf, message: impl Into<String>) -> Self {
        CaptureError {
            path,
            message: message.into(),
            source: None,
        }
    }

    /// Reading `path` failed: a missing file is said to be missing, and `error` is the cause.
    fn io(path: PathBuf, error: io::Error) -> Self {
        let message = match error.kind() {
            io::ErrorKind::NotFound => "missing".to_string(),
            _ => String::new(),
        };
        CaptureError {
            path,
            message,
            source: Some(Box::new(error)),
        }
    }

    /// Content that does not decode: `context` (what the file should hold; empty for none), and the
    /// decoder's error as the cause.
    fn decode(
        path: PathBuf,
        context: &str,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        CaptureError {
            path,
            message: context.to_owned(),
            source: Some(Box::new(error)),
        }
    }

    /// The file (or directory) the error is about.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is wrong, without the path; when another error is the cause (the
    /// [`source`](std::error::Error::source)), what failed (empty when the cause says it all).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the error is an I/O failure (a missing or unreadable file) rather than bad content.
    pub fn is_io(&self) -> bool {
        self.source.as_ref().is_some_and(|e| e.is::<io::Error>())
    }

    /// The file, the message and the underlying error, for another error type to take over.
    pub(crate) fn into_parts(self) -> (PathBuf, String, Option<Cause>) {
        (self.path, self.message, self.source)
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Whether `dir` holds a `capture.txt` whose first line is [`MAGIC`].
pub fn is_capture_dir(dir: &Path) -> bool {
    let Ok(f) = fs::File::open(dir.join(INFO_FILE)) else {
        return false;
    };
    let mut head = Vec::new();
    if f.take(MAGIC.len() as u64 + 5)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&head);
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line == MAGIC.as_bytes()
}

fn read_limited(path: &Path) -> Result<Vec<u8>, CaptureError> {
    let f = fs::File::open(path).map_err(|e| CaptureError::io(path.to_path_buf(), e))?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CaptureError::io(path.to_path_buf(), e))?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(CaptureError::new(
            path.to_path_buf(),
            format!("larger than {MAX_FILE_SIZE} bytes"),
        ));
    }
    Ok(bytes)
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, CaptureError> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CaptureError::io(path.to_path_buf(), e)),
        Ok(_) => read_limited(path).map(Some),
    }
}

fn valid_language(language: &str) -> bool {
    !language.is_empty()
        && language.len() <= 16
        && language.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn parse_name_entry(entry: &str) -> Option<(NameKind, String)> {
    let (kind, language) = entry.split_once('-')?;
    let kind = match kind {
        "counter" => NameKind::Counter,
        "help" => NameKind::Help,
        _ => return None,
    };
    valid_language(language).then(|| (kind, language.to_string()))
}

/// The GUID of a `PERF_REG_COUNTERSET_STRUCT` result.
fn registration_guid(r: &EncodedRegistration) -> Option<Guid> {
    CounterSetRegInfo::parse(&r.structure)
        .ok()
        .map(|i| i.guid())
}

impl Capture {
    /// Writes the capture to `dir` (created if needed).
    ///
    /// An existing non-empty directory must already be a capture (its `capture.txt` starts with
    /// [`MAGIC`]); its capture files are replaced and nothing else in it is touched. Every file is
    /// written to a temporary name and renamed. `capture.txt` is written last, so a reader never sees
    /// a complete description of incomplete files.
    ///
    /// # Errors
    /// `InvalidInput` for a capture that cannot be represented: a text field with a line break, a
    /// name table language that is not 1–16 ASCII letters or digits, a name table or counterset
    /// listed twice, a registration whose `counterset.bin` has no GUID, a sample with no block.
    /// `AlreadyExists` for a non-empty directory that is not a capture. Other I/O errors as they come.
    pub fn write(&self, dir: &Path) -> io::Result<()> {
        let plan = self.plan()?;
        if dir.exists() {
            let non_empty = fs::read_dir(dir)?.next().is_some();
            if non_empty {
                if !is_capture_dir(dir) {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!(
                            "{} is not empty and is not a capture (no {INFO_FILE} starting with \"{MAGIC}\"); \
                             choose a new or empty directory",
                            dir.display()
                        ),
                    ));
                }
                remove_capture_files(dir)?;
            }
        }
        fs::create_dir_all(dir)?;
        // Mark the directory as a capture first, so that an interrupted write can be redone.
        write_file(&dir.join(INFO_FILE), format!("{MAGIC}\n").as_bytes())?;
        if !self.names.is_empty() {
            fs::create_dir_all(dir.join(NAMES_DIR))?;
        }
        for n in &self.names {
            write_file(&dir.join(n.path()), &n.bytes)?;
        }
        for (r, name) in self.registrations.iter().zip(&plan.counterset_dirs) {
            let d = dir.join(V2_DIR).join(name);
            fs::create_dir_all(&d)?;
            write_file(&d.join(REG_FILES[0]), &r.structure)?;
            if let Some(b) = &r.name {
                write_file(&d.join(REG_FILES[1]), b)?;
            }
            if let Some(b) = &r.help {
                write_file(&d.join(REG_FILES[2]), b)?;
            }
            if !r.counter_names.is_empty() {
                write_file(&d.join(REG_FILES[3]), &r.counter_names)?;
            }
            if !r.counter_helps.is_empty() {
                write_file(&d.join(REG_FILES[4]), &r.counter_helps)?;
            }
        }
        if let Some(b) = &self.v2_counters {
            fs::create_dir_all(dir.join(V2_DIR))?;
            write_file(&dir.join(counters_path()), b)?;
        }
        if !self.samples.is_empty() {
            fs::create_dir_all(dir.join(SAMPLES_DIR))?;
        }
        for (i, s) in self.samples.iter().enumerate() {
            if let Some(b) = &s.v1 {
                write_file(&dir.join(sample_path(i + 1, false)), b)?;
            }
            if let Some(b) = &s.v2 {
                write_file(&dir.join(sample_path(i + 1, true)), b)?;
            }
        }
        write_file(&dir.join(INFO_FILE), plan.info_text.as_bytes())
    }

    /// Checks that the capture can be written and prepares `capture.txt`.
    fn plan(&self) -> io::Result<WritePlan> {
        let fields = [
            ("machine", &self.info.machine),
            ("os", &self.info.os),
            ("created", &self.info.created),
            ("tool", &self.info.tool),
        ];
        let mut text = format!("{MAGIC}\n");
        for (key, value) in fields {
            if value.contains(['\n', '\r']) {
                return Err(invalid(format!("capture {key} contains a line break")));
            }
            text.push_str(&format!("{key}: {value}\n"));
        }
        text.push_str(&format!("samples: {}\n", self.samples.len()));
        let mut entries = Vec::new();
        for n in &self.names {
            if !valid_language(&n.language) {
                return Err(invalid(format!(
                    "name table language \"{}\" is not 1 to 16 ASCII letters or digits",
                    n.language.escape_debug()
                )));
            }
            let entry = format!("{}-{}", n.kind.as_str(), n.language);
            if entries.contains(&entry) {
                return Err(invalid(format!("name table {entry} is listed twice")));
            }
            entries.push(entry);
        }
        text.push_str(&format!("names: {}\n", entries.join(" ")));
        let mut dirs: Vec<String> = Vec::new();
        for (i, r) in self.registrations.iter().enumerate() {
            let guid = registration_guid(r).ok_or_else(|| {
                invalid(format!(
                    "registration {} has no PERF_COUNTERSET_REG_INFO (no GUID)",
                    i + 1
                ))
            })?;
            let name = counterset_dir_name(&guid);
            if dirs.contains(&name) {
                return Err(invalid(format!("counterset {guid} is listed twice")));
            }
            dirs.push(name);
        }
        text.push_str(&format!("countersets: {}\n", dirs.join(" ")));
        for (i, s) in self.samples.iter().enumerate() {
            if s.v1.is_none() && s.v2.is_none() {
                return Err(invalid(format!(
                    "sample {} has neither a V1 nor a V2 block",
                    i + 1
                )));
            }
        }
        Ok(WritePlan {
            info_text: text,
            counterset_dirs: dirs,
        })
    }

    /// Reads and validates the capture in `dir`.
    ///
    /// Checks: `capture.txt` exists and starts with [`MAGIC`]; its lines are `key: value`; `samples`
    /// is given; every name table, counterset and sample it names exists; samples are numbered 1 to
    /// `samples` without gaps (a sample file numbered beyond is an error); every name table parses as
    /// REG_MULTI_SZ; every registration result, the counter-info result and every block decodes
    /// (V1 blocks completely, V2 blocks down to each value); a V2 sample requires `v2/counters.bin`.
    /// Files larger than [`MAX_FILE_SIZE`] are refused.
    ///
    /// # Errors
    /// A [`CaptureError`] naming the first file that is missing, unreadable or malformed.
    pub fn read(dir: &Path) -> Result<Capture, CaptureError> {
        let info_path = dir.join(INFO_FILE);
        let text = read_limited(&info_path).map_err(|e| {
            if e.is_io() && e.message == "missing" {
                CaptureError::new(info_path.clone(), "missing: not a capture directory")
            } else {
                e
            }
        })?;
        let text = String::from_utf8(text)
            .map_err(|_| CaptureError::new(info_path.clone(), "not UTF-8 text"))?;
        let header = parse_info(&text).map_err(|m| CaptureError::new(info_path.clone(), m))?;

        let mut names = Vec::new();
        for (kind, language) in header.names {
            let file = NameTableFile {
                kind,
                language,
                bytes: Vec::new(),
            };
            let path = dir.join(file.path());
            let bytes = read_limited(&path)?;
            parse_multi_sz(&bytes).map_err(|e| {
                CaptureError::decode(path.clone(), "not a REG_MULTI_SZ name table", e)
            })?;
            names.push(NameTableFile { bytes, ..file });
        }

        let mut registrations = Vec::new();
        for guid in &header.countersets {
            let d = dir.join(V2_DIR).join(counterset_dir_name(guid));
            registrations.push(read_registration(&d, guid)?);
        }

        let counters_file = dir.join(counters_path());
        let v2_counters = read_optional(&counters_file)?;
        if let Some(b) = &v2_counters {
            CounterSpec::decode_list(b).map_err(|e| {
                CaptureError::decode(
                    counters_file.clone(),
                    "not a PerfQueryCounterInfo result",
                    e,
                )
            })?;
        }

        let samples = read_samples(dir, header.samples)?;
        if v2_counters.is_none() {
            if let Some(i) = samples.iter().position(|s| s.v2.is_some()) {
                return Err(CaptureError::new(
                    counters_file,
                    format!(
                        "missing; the V2 block {} needs it",
                        sample_path(i + 1, true).display()
                    ),
                ));
            }
        }
        Ok(Capture {
            info: header.info,
            names,
            registrations,
            v2_counters,
            samples,
        })
    }

    /// The English (`"009"`) name table of `kind`, if the capture has one.
    pub fn english(&self, kind: NameKind) -> Option<&NameTableFile> {
        self.names
            .iter()
            .find(|n| n.kind == kind && n.language == ENGLISH)
    }
}

struct WritePlan {
    info_text: String,
    counterset_dirs: Vec<String>,
}

/// Removes the files a capture consists of (and the directories they leave empty), nothing else.
fn remove_capture_files(dir: &Path) -> io::Result<()> {
    let remove_matching = |d: &Path, keep: &dyn Fn(&str) -> bool| -> io::Result<()> {
        let entries = match fs::read_dir(d) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if entry.file_type()?.is_file() && !keep(name) {
                fs::remove_file(entry.path())?;
            }
        }
        let _ = fs::remove_dir(d); // only succeeds when empty
        Ok(())
    };
    remove_matching(&dir.join(NAMES_DIR), &|n| {
        n.strip_suffix(".msz")
            .is_none_or(|e| parse_name_entry(e).is_none())
    })?;
    remove_matching(&dir.join(SAMPLES_DIR), &|n| parse_sample_name(n).is_none())?;
    let v2 = dir.join(V2_DIR);
    if let Ok(entries) = fs::read_dir(&v2) {
        for entry in entries {
            let entry = entry?;
            let is_guid = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<Guid>().is_ok());
            if is_guid && entry.file_type()?.is_dir() {
                remove_matching(&entry.path(), &|n| !REG_FILES.contains(&n))?;
            }
        }
    }
    remove_matching(&v2, &|n| n != COUNTERS_FILE)?;
    Ok(())
}

struct InfoHeader {
    info: CaptureInfo,
    samples: usize,
    names: Vec<(NameKind, String)>,
    countersets: Vec<Guid>,
}

fn parse_info(text: &str) -> Result<InfoHeader, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let first = lines.next().unwrap_or_default();
    if first != MAGIC {
        if let Some(v) = first.strip_prefix("perfcounters capture ") {
            return Err(format!(
                "line 1: capture version \"{}\" is not supported (expected \"{MAGIC}\")",
                clip(v)
            ));
        }
        return Err(format!(
            "line 1: \"{}\" is not \"{MAGIC}\"; not a capture",
            clip(first)
        ));
    }
    let mut info = CaptureInfo::default();
    let mut samples = None;
    let mut names = Vec::new();
    let mut countersets: Vec<Guid> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, line) in lines.enumerate() {
        let n = i + 2;
        if line.is_empty() {
            continue;
        }
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("line {n}: expected `key: value`, found \"{}\"", clip(line)))?;
        let value = value.strip_prefix(' ').unwrap_or(value);
        if !seen.insert(key.to_string()) {
            return Err(format!("line {n}: `{}` given twice", clip(key)));
        }
        match key {
            "machine" => info.machine = value.to_string(),
            "os" => info.os = value.to_string(),
            "created" => info.created = value.to_string(),
            "tool" => info.tool = value.to_string(),
            "samples" => {
                let v: usize = value
                    .parse()
                    .ok()
                    .filter(|_| !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| {
                        format!("line {n}: samples \"{}\" is not a number", clip(value))
                    })?;
                samples = Some(v);
            }
            "names" => {
                for entry in value.split_whitespace() {
                    let parsed = parse_name_entry(entry).ok_or_else(|| {
                        format!(
                            "line {n}: name table \"{}\" is not counter-<language> or help-<language>",
                            clip(entry)
                        )
                    })?;
                    if names.contains(&parsed) {
                        return Err(format!("line {n}: name table {entry} listed twice"));
                    }
                    names.push(parsed);
                }
            }
            "countersets" => {
                for entry in value.split_whitespace() {
                    let guid: Guid = entry.parse().map_err(|_| {
                        format!("line {n}: counterset \"{}\" is not a GUID", clip(entry))
                    })?;
                    if countersets.contains(&guid) {
                        return Err(format!("line {n}: counterset {entry} listed twice"));
                    }
                    countersets.push(guid);
                }
            }
            _ => {} // unknown keys are left for newer versions
        }
    }
    let samples = samples.ok_or("no `samples:` line")?;
    Ok(InfoHeader {
        info,
        samples,
        names,
        countersets,
    })
}

fn clip(s: &str) -> String {
    const MAX: usize = 64;
    if s.chars().count() <= MAX {
        s.escape_debug().to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{}…", head.escape_debug())
    }
}

fn read_registration(d: &Path, guid: &Guid) -> Result<EncodedRegistration, CaptureError> {
    let path = |i: usize| d.join(REG_FILES[i]);
    let structure = read_limited(&path(0))?;
    let info = CounterSetRegInfo::parse(&structure)
        .map_err(|e| CaptureError::decode(path(0), "not a PERF_REG_COUNTERSET_STRUCT result", e))?;
    if info.guid() != *guid {
        return Err(CaptureError::new(
            path(0),
            format!("describes counterset {}, not {guid}", info.guid()),
        ));
    }
    let name = read_optional(&path(1))?;
    let help = read_optional(&path(2))?;
    for (b, i) in [(&name, 1), (&help, 2)] {
        if let Some(b) = b {
            parse_string(b)
                .map_err(|e| CaptureError::decode(path(i), "not a UTF-16 string result", e))?;
        }
    }
    let counter_names = read_optional(&path(3))?.unwrap_or_default();
    let counter_helps = read_optional(&path(4))?.unwrap_or_default();
    for (b, i) in [(&counter_names, 3), (&counter_helps, 4)] {
        if !b.is_empty() {
            decode_string_buffer(b)
                .map_err(|e| CaptureError::decode(path(i), "not a string buffer result", e))?;
        }
    }
    Ok(EncodedRegistration {
        structure,
        name,
        help,
        counter_names,
        counter_helps,
    })
}

/// `NNNN.v1.blk` / `NNNN.v2.blk` → (number, is V2).
fn parse_sample_name(name: &str) -> Option<(usize, bool)> {
    let (number, kind) = name.strip_suffix(".blk")?.split_once('.')?;
    let v2 = match kind {
        "v1" => false,
        "v2" => true,
        _ => return None,
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((number.parse().ok()?, v2))
}

fn read_samples(dir: &Path, count: usize) -> Result<Vec<CaptureSample>, CaptureError> {
    let samples_dir = dir.join(SAMPLES_DIR);
    // Sample files numbered beyond the declared count (or not in canonical form) mean a damaged capture.
    match fs::read_dir(&samples_dir) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry.map_err(|e| CaptureError::io(samples_dir.clone(), e))?;
                let name = entry.file_name();
                let Some((n, v2)) = name.to_str().and_then(parse_sample_name) else {
                    continue;
                };
                let canonical = sample_path(n, v2);
                if n == 0 || n > count {
                    return Err(CaptureError::new(
                        entry.path(),
                        format!(
                            "sample {n} is outside 1 to {count}, the samples {INFO_FILE} declares"
                        ),
                    ));
                }
                if canonical.file_name() != Some(name.as_os_str()) {
                    return Err(CaptureError::new(
                        entry.path(),
                        format!("sample files are named like {}", canonical.display()),
                    ));
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound && count == 0 => {}
        Err(e) => return Err(CaptureError::io(samples_dir, e)),
    }
    let mut samples = Vec::new();
    for n in 1..=count {
        let p1 = dir.join(sample_path(n, false));
        let p2 = dir.join(sample_path(n, true));
        let v1 = read_optional(&p1)?;
        let v2 = read_optional(&p2)?;
        if v1.is_none() && v2.is_none() {
            return Err(CaptureError::new(
                samples_dir.clone(),
                format!("sample {n} of {count} is missing: neither {n:04}.v1.blk nor {n:04}.v2.blk exists"),
            ));
        }
        if let Some(b) = &v1 {
            PerfDataBlock::parse(b)
                .and_then(|block| block.to_snapshot())
                .map_err(|e| CaptureError::decode(p1.clone(), "", e))?;
        }
        if let Some(b) = &v2 {
            DataHeader::parse(b)
                .and_then(|h| h.validate())
                .map_err(|e| CaptureError::decode(p2.clone(), "", e))?;
        }
        samples.push(CaptureSample { v1, v2 });
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_parse_and_reject() {
        let h = parse_info(
            "perfcounters capture 1\r\nmachine: HOST\nos: Windows 10\nsamples: 2\nnames: counter-009 help-007\n\
             countersets: b4fc721a-0378-476f-89ba-a5a79f810b36\nfuture: ignored\n",
        )
        .unwrap();
        assert_eq!(h.info.machine, "HOST");
        assert_eq!(h.info.os, "Windows 10");
        assert_eq!(h.samples, 2);
        assert_eq!(
            h.names,
            [
                (NameKind::Counter, "009".to_string()),
                (NameKind::Help, "007".to_string())
            ]
        );
        assert_eq!(
            counterset_dir_name(&h.countersets[0]),
            "b4fc721a-0378-476f-89ba-a5a79f810b36"
        );
        assert_eq!(
            parse_info("perfcounters capture 2\n").err().unwrap(),
            "line 1: capture version \"2\" is not supported (expected \"perfcounters capture 1\")"
        );
        assert_eq!(
            parse_info("perfcounters capture 1\nmachine: A\n")
                .err()
                .unwrap(),
            "no `samples:` line"
        );
        assert_eq!(
            parse_info("perfcounters capture 1\nsamples: -1\n")
                .err()
                .unwrap(),
            "line 2: samples \"-1\" is not a number"
        );
        assert_eq!(
            parse_info("perfcounters capture 1\nsamples: 1\nsamples: 2\n")
                .err()
                .unwrap(),
            "line 3: `samples` given twice"
        );
        assert_eq!(
            parse_info("perfcounters capture 1\nnames: counter-0/9\nsamples: 1\n")
                .err()
                .unwrap(),
            "line 2: name table \"counter-0/9\" is not counter-<language> or help-<language>"
        );
        assert_eq!(
            parse_info("perfcounters capture 1\nsamples 1\n")
                .err()
                .unwrap(),
            "line 2: expected `key: value`, found \"samples 1\""
        );
    }

    #[test]
    fn sample_names() {
        assert_eq!(parse_sample_name("0001.v1.blk"), Some((1, false)));
        assert_eq!(parse_sample_name("12345.v2.blk"), Some((12345, true)));
        assert_eq!(parse_sample_name("0001.v3.blk"), None);
        assert_eq!(parse_sample_name("x.v1.blk"), None);
        assert_eq!(parse_sample_name("0001.v1.blk.tmp"), None);
        assert_eq!(sample_path(7, true), Path::new("samples/0007.v2.blk"));
    }
}
