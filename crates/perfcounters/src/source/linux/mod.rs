//! The live Linux source: procfs and sysfs mapped onto the standard Windows objects and counters.
//!
//! Objects: `Processor`, `Processor Information`, `Memory`, `System`, `Process`, `PhysicalDisk`,
//! `LogicalDisk` and `Network Interface`, with the Windows counter names, types, scales and (where
//! verified) title indexes. Raw values are the kernel's cumulative counters expressed in the Windows
//! counter types, so the PDH formulas compute the Linux meaning; each counter's help text states its
//! source file and any approximation (see also `docs/linux.md`).
//!
//! Clocks: `perf_time` is monotonic nanoseconds (`perf_freq` = 10^9); `perf_time_100ns` is a FILETIME
//! that advances with the monotonic clock from the wall-clock time at creation, so rates never go
//! negative when the wall clock steps. Both come from a [`Clock`], which tests can replace.
//!
//! The procfs/sysfs root is configurable ([`LinuxSource::with_root`]): `<root>/proc` and `<root>/sys`
//! are read, which serves containers that mount the host's trees elsewhere and fixture trees.
//! Each collection reads every file at most once, and only the files the requested counters need.

mod collect;
mod defs;
mod parse;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::snapshot::{
    name_instances, pair_bases_by_position, CounterDefinition, Object, ObjectData, Snapshot,
    SystemTime, Value, FILETIME_UNIX_EPOCH,
};
use crate::source::{Catalog, CatalogCounter, ObjectInfo, Request, Source, SourceError};

use defs::{ObjDef, Row, Store};

/// `perf_freq` of snapshots from this source: `perf_time` counts nanoseconds.
pub const PERF_FREQ: i64 = 1_000_000_000;

/// One reading of a [`Clock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ClockReading {
    /// Monotonic time in nanoseconds (the snapshot's `perf_time`; frequency [`PERF_FREQ`]).
    pub perf_time: i64,
    /// 100 ns units since 1601-01-01 UTC (the snapshot's `perf_time_100ns`); must never go backwards.
    pub filetime: i64,
}

/// The time source of a [`LinuxSource`]; replaceable so tests control the elapsed time.
pub trait Clock: Send {
    /// The current time.
    fn now(&mut self) -> ClockReading;
}

/// The real clock: `std::time::Instant` anchored at creation, and the wall-clock time at creation
/// advanced by the monotonic elapsed time.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    start: Instant,
    start_filetime: i64,
}

impl SystemClock {
    /// Anchors a clock now.
    pub fn new() -> Self {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let units = i64::try_from(since_epoch.as_nanos() / 100).unwrap_or(0);
        SystemClock {
            start: Instant::now(),
            start_filetime: FILETIME_UNIX_EPOCH.saturating_add(units),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&mut self) -> ClockReading {
        let ns = i64::try_from(self.start.elapsed().as_nanos()).unwrap_or(i64::MAX);
        ClockReading {
            perf_time: ns,
            filetime: self.start_filetime.saturating_add(ns / 100),
        }
    }
}

/// Size and free space of a mounted file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FsUsage {
    /// Size in bytes (`f_blocks × f_frsize`).
    pub total_bytes: u64,
    /// Bytes available to unprivileged users (`f_bavail × f_frsize`).
    pub available_bytes: u64,
}

/// Reports file-system space for `LogicalDisk`; replaceable because `statvfs` cannot run on a
/// fixture tree.
pub trait FsSpace: Send {
    /// The usage of the file system mounted at `mount_point` (as written in mountinfo).
    fn usage(&mut self, mount_point: &str) -> io::Result<FsUsage>;
}

/// The real [`FsSpace`]: `statvfs(<root>/<mount point>)`.
#[derive(Clone, Debug)]
pub struct Statvfs {
    root: PathBuf,
}

impl Statvfs {
    /// Queries mount points below `root` (`/` for the running system).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Statvfs { root: root.into() }
    }
}

impl FsSpace for Statvfs {
    fn usage(&mut self, mount_point: &str) -> io::Result<FsUsage> {
        let path = self.root.join(mount_point.trim_start_matches('/'));
        let s = rustix::fs::statvfs(&path).map_err(io::Error::from)?;
        Ok(FsUsage {
            total_bytes: s.f_blocks.saturating_mul(s.f_frsize),
            available_bytes: s.f_bavail.saturating_mul(s.f_frsize),
        })
    }
}

/// The Linux source. See the [module documentation](self).
pub struct LinuxSource {
    root: PathBuf,
    proc_dir: PathBuf,
    sys_dir: PathBuf,
    clock: Box<dyn Clock>,
    space: Box<dyn FsSpace>,
    hz: u64,
    page_size: u64,
    hostname: Option<String>,
    /// Read buffer reused across files and collections.
    buf: Vec<u8>,
    /// Path buffer reused for per-process files.
    pbuf: OsString,
    /// Whether `<root>/proc` is a procfs (checked on first use).
    procfs: Option<bool>,
    /// How `Handle Count` is obtained on a procfs.
    fd_count: FdCount,
}

/// How the number of open descriptors of a process is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FdCount {
    /// Try the size of `/proc/[pid]/fd` (Linux 6.2 and later report the number of open
    /// descriptors there), falling back to listing the directory.
    TrySize,
    /// A nonzero size was seen, so the kernel reports counts: a size of 0 means no descriptors.
    Size,
    /// List `/proc/[pid]/fd` (an older kernel).
    List,
}

/// Initial read size for per-process files (`status` is about 1.5 kB).
const PID_FILE_BUF: usize = 4096;

impl std::fmt::Debug for LinuxSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinuxSource")
            .field("root", &self.root)
            .field("hz", &self.hz)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl Default for LinuxSource {
    fn default() -> Self {
        LinuxSource::new()
    }
}

impl LinuxSource {
    /// A source reading the running system's `/proc` and `/sys`.
    pub fn new() -> Self {
        LinuxSource::with_root("/")
    }

    /// A source reading `<root>/proc` and `<root>/sys`, with the real clock, `statvfs` below `root`,
    /// and the system's USER_HZ (100 if unknown) and page size.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let hz = match rustix::param::clock_ticks_per_second() {
            0 => 100,
            v => v,
        };
        let page_size = match rustix::param::page_size() {
            0 => 4096,
            v => v as u64,
        };
        LinuxSource {
            proc_dir: root.join("proc"),
            sys_dir: root.join("sys"),
            space: Box::new(Statvfs::new(root.clone())),
            root,
            clock: Box::new(SystemClock::new()),
            hz,
            page_size,
            hostname: None,
            buf: Vec::with_capacity(4096),
            pbuf: OsString::new(),
            procfs: None,
            fd_count: FdCount::TrySize,
        }
    }

    /// Replaces the clock.
    pub fn with_clock(mut self, clock: Box<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Replaces the file-system space reader used by `LogicalDisk`.
    pub fn with_fs_space(mut self, space: Box<dyn FsSpace>) -> Self {
        self.space = space;
        self
    }

    /// Sets USER_HZ, the unit of the CPU times in procfs (0 is taken as 100).
    pub fn with_clock_ticks(mut self, hz: u64) -> Self {
        self.hz = if hz == 0 { 100 } else { hz };
        self
    }

    /// Sets the page size in bytes (0 is taken as 4096).
    pub fn with_page_size(mut self, page_size: u64) -> Self {
        self.page_size = if page_size == 0 { 4096 } else { page_size };
        self
    }

    /// Points the source at another root (the clock, space reader and settings are kept).
    pub fn set_root(&mut self, root: impl Into<PathBuf>) {
        self.root = root.into();
        self.proc_dir = self.root.join("proc");
        self.sys_dir = self.root.join("sys");
        self.hostname = None;
        self.procfs = None;
        self.fd_count = FdCount::TrySize;
    }

    /// The root the source reads below.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// USER_HZ in use.
    pub fn clock_ticks(&self) -> u64 {
        self.hz
    }

    /// Page size in use.
    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    // -- file access -----------------------------------------------------------------------

    /// Reads `path` into the shared buffer and parses it; errors name the file and line.
    fn read_parse<T>(
        &mut self,
        path: &Path,
        parse: fn(&[u8]) -> parse::PResult<T>,
    ) -> Result<T, SourceError> {
        read_into(&mut self.buf, path).map_err(|e| SourceError::io(path, e))?;
        parse(&self.buf).map_err(|e| parse_error(path, e))
    }

    fn read_proc<T>(
        &mut self,
        rel: &str,
        parse: fn(&[u8]) -> parse::PResult<T>,
    ) -> Result<T, SourceError> {
        let path = self.proc_dir.join(rel);
        self.read_parse(&path, parse)
    }

    /// Builds `<proc>/<pid>/<file>` in the reusable path buffer.
    fn set_pid_path(&mut self, pid: u32, file: &str) {
        self.pbuf.clear();
        self.pbuf.push(self.proc_dir.as_os_str());
        self.pbuf.push("/");
        let mut digits = [0u8; 10];
        let mut i = digits.len();
        let mut v = pid;
        loop {
            i -= 1;
            if let Some(d) = digits.get_mut(i) {
                *d = b'0' + (v % 10) as u8;
            }
            v /= 10;
            if v == 0 || i == 0 {
                break;
            }
        }
        self.pbuf
            .push(std::str::from_utf8(digits.get(i..).unwrap_or_default()).unwrap_or("0"));
        if !file.is_empty() {
            self.pbuf.push("/");
            self.pbuf.push(file);
        }
    }

    /// The number of open descriptors of the process whose `fd` directory is in the path buffer.
    fn count_fds(&mut self) -> io::Result<u64> {
        let on_procfs = self.on_procfs();
        let path = Path::new(&self.pbuf);
        if on_procfs && matches!(self.fd_count, FdCount::TrySize | FdCount::Size) {
            let size = std::fs::metadata(path)?.len();
            if size > 0 {
                self.fd_count = FdCount::Size;
                return Ok(size);
            }
            if self.fd_count == FdCount::Size {
                return Ok(0);
            }
        }
        let n = std::fs::read_dir(path)?.count() as u64;
        if n > 0 && self.fd_count == FdCount::TrySize {
            // Descriptors listed but a size of 0: the kernel does not report counts.
            self.fd_count = FdCount::List;
        }
        Ok(n)
    }

    /// Whether `<root>/proc` is a procfs rather than, say, a fixture tree.
    fn on_procfs(&mut self) -> bool {
        *self.procfs.get_or_insert_with(|| {
            rustix::fs::statfs(&self.proc_dir)
                .is_ok_and(|s| s.f_type == rustix::fs::PROC_SUPER_MAGIC)
        })
    }

    /// Reads `<proc>/<pid>/<file>` into the buffer.
    fn read_pid_file(&mut self, pid: u32, file: &str) -> io::Result<()> {
        self.set_pid_path(pid, file);
        if self.on_procfs() {
            read_seq_file(&mut self.buf, Path::new(&self.pbuf))
        } else {
            read_into(&mut self.buf, Path::new(&self.pbuf))
        }
    }

    fn system_name(&mut self) -> String {
        if let Some(h) = &self.hostname {
            return h.clone();
        }
        let path = self.proc_dir.join("sys/kernel/hostname");
        let name = match read_into(&mut self.buf, &path) {
            Ok(()) => String::from_utf8_lossy(&self.buf).trim().to_string(),
            Err(_) => String::new(),
        };
        let name = if name.is_empty() {
            "localhost".to_string()
        } else {
            name
        };
        self.hostname = Some(name.clone());
        name
    }

    // -- request resolution ----------------------------------------------------------------

    /// Resolves a request into objects and selected row positions (table order, bases included).
    fn resolve(
        &self,
        request: &Request,
    ) -> Result<Vec<(&'static ObjDef, Vec<usize>)>, SourceError> {
        let mut out: Vec<(&'static ObjDef, Vec<bool>)> = Vec::new();
        for req in &request.objects {
            let def = defs::object(&req.object)
                .ok_or_else(|| SourceError::unknown_object(&req.object))?;
            let pos = match out.iter().position(|(d, _)| std::ptr::eq(*d, def)) {
                Some(p) => p,
                None => {
                    out.push((def, vec![false; def.rows.len()]));
                    out.len() - 1
                }
            };
            let Some((_, mask)) = out.get_mut(pos) else {
                continue;
            };
            if req.counters.is_empty() {
                mask.iter_mut().for_each(|m| *m = true);
            }
            for name in &req.counters {
                let i = def
                    .row(name)
                    .ok_or_else(|| SourceError::unknown_counter(def.name, name))?;
                if let Some(m) = mask.get_mut(i) {
                    *m = true;
                }
                if def.rows.get(i + 1).is_some_and(|r| r.ty.is_base()) {
                    if let Some(m) = mask.get_mut(i + 1) {
                        *m = true;
                    }
                }
            }
        }
        Ok(out
            .into_iter()
            .map(|(d, mask)| {
                let rows = mask
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &m)| m.then_some(i))
                    .collect();
                (d, rows)
            })
            .collect())
    }
}

/// Reads a whole file into `buf`, reusing its capacity.
///
/// `File::read_to_end` first asks for the file's size and position (`statx` and `lseek`) to size
/// the buffer, which procfs files never report. Reading through `Take` skips that, so a small
/// procfs file costs `open`, two `read`s and `close`.
fn read_into(buf: &mut Vec<u8>, path: &Path) -> io::Result<()> {
    buf.clear();
    File::open(path)?.take(u64::MAX).read_to_end(buf)?;
    Ok(())
}

/// Reads a procfs `/proc/[pid]/` file that the kernel produces in one piece (`stat`, `status`,
/// `io`), into `buf`.
///
/// Such a file is generated whole on the first `read`, so a read that does not fill the buffer has
/// returned all of it and the usual extra `read` that returns 0 is skipped (as procps does). A
/// read that fills the buffer is followed by more reads into a larger one.
fn read_seq_file(buf: &mut Vec<u8>, path: &Path) -> io::Result<()> {
    let mut file = File::open(path)?;
    buf.clear();
    buf.resize(PID_FILE_BUF, 0);
    let mut len = 0usize;
    let result = loop {
        let room = buf.get_mut(len..).unwrap_or_default();
        let want = room.len();
        match file.read(room) {
            Ok(n) => {
                len = len.saturating_add(n.min(want));
                if n == 0 || n < want {
                    break Ok(());
                }
                let Some(bigger) = buf.len().checked_mul(2) else {
                    break Err(io::Error::new(io::ErrorKind::OutOfMemory, "file too large"));
                };
                buf.resize(bigger, 0);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    buf.truncate(len);
    result
}

fn parse_error(path: &Path, e: parse::ParseError) -> SourceError {
    SourceError::parse(path, (e.line > 0).then_some(e.line), e.message)
}

/// Whether an I/O error means "the process is gone".
fn vanished(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(3 /* ESRCH */)
}

/// Converts a value to its stored form.
fn store(s: Store, v: u64) -> Value {
    match s {
        Store::U32Sat => Value::U32(u32::try_from(v).unwrap_or(u32::MAX)),
        Store::U32Wrap => Value::U32(v as u32),
        Store::U64 => Value::U64(v),
    }
}

/// Shifts a fraction's numerator and base right together until both fit 32 bits.
fn fit_fraction(n: u64, b: u64) -> (u64, u64) {
    let m = n.max(b);
    let shift = (64 - m.leading_zeros()).saturating_sub(32);
    (n >> shift, b >> shift)
}

/// Builds an object from selected rows and per-instance values.
fn build_object(
    def: &ObjDef,
    rows: &[&Row],
    object_time: Option<i64>,
    mut data: ObjectData,
) -> Object {
    if let ObjectData::Instances(list) = &mut data {
        name_instances(list);
    }
    let mut offset: u32 = 8;
    let mut counters: Vec<CounterDefinition> = rows
        .iter()
        .map(|r| {
            let size: u32 = if r.store == Store::U64 { 8 } else { 4 };
            if size == 8 {
                offset = offset.saturating_add(7) & !7;
            }
            let d = CounterDefinition {
                index: r.index,
                name: Some(r.name.to_string()),
                help_index: r.help_index,
                counter_type: r.ty,
                size,
                offset,
                scale: r.scale,
                detail_level: r.detail,
                base: None,
            };
            offset = offset.saturating_add(size);
            d
        })
        .collect();
    pair_bases_by_position(&mut counters);
    Object {
        index: def.index,
        name: Some(def.name.to_string()),
        help_index: def.help_index,
        detail_level: rows
            .iter()
            .filter(|r| !r.ty.is_base())
            .map(|r| r.detail)
            .min()
            .unwrap_or(defs::Row::DEFAULT_DETAIL),
        default_counter: 0,
        code_page: 0,
        perf_time: object_time.unwrap_or(0),
        perf_freq: if object_time.is_some() {
            crate::snapshot::FREQ_100NS
        } else {
            0
        },
        sample_clock: None,
        counters,
        data,
    }
}

impl Row {
    const DEFAULT_DETAIL: u32 = crate::source::DETAIL_NOVICE;
}

fn catalog() -> Catalog {
    Catalog {
        objects: defs::OBJECTS
            .iter()
            .map(|o| {
                let counters: Vec<CatalogCounter> = o
                    .rows
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !r.ty.is_base())
                    .map(|(i, r)| CatalogCounter {
                        name: r.name.to_string(),
                        index: r.index,
                        help: r.help.to_string(),
                        counter_type: r.ty,
                        scale: r.scale,
                        detail_level: r.detail,
                        base_type: o.rows.get(i + 1).filter(|n| n.ty.is_base()).map(|n| n.ty),
                    })
                    .collect();
                ObjectInfo {
                    name: o.name.to_string(),
                    index: o.index,
                    help: o.help.to_string(),
                    detail_level: counters
                        .iter()
                        .map(|c| c.detail_level)
                        .min()
                        .unwrap_or(crate::source::DETAIL_NOVICE),
                    multi_instance: o.multi,
                    counters,
                }
            })
            .collect(),
        ..Default::default()
    }
}

impl Source for LinuxSource {
    fn catalog(&mut self) -> Result<Catalog, SourceError> {
        Ok(catalog())
    }

    fn instances(&mut self, object: &str) -> Result<Vec<String>, SourceError> {
        let def = defs::object(object).ok_or_else(|| SourceError::unknown_object(object))?;
        if !def.multi {
            return Ok(Vec::new());
        }
        // The first counter of every object needs only the object's primary file.
        let first = def.rows.first().map_or("", |r| r.name);
        let snap = self.collect(&Request::new().object(def.name, &[first]))?;
        Ok(snap
            .objects
            .first()
            .map(|o| o.instances().iter().map(|i| i.name().to_owned()).collect())
            .unwrap_or_default())
    }

    fn collect(&mut self, request: &Request) -> Result<Snapshot, SourceError> {
        let selected = self.resolve(request)?;
        let now = self.clock.now();
        let mut ctx = collect::Ctx::new(now);
        let mut objects = Vec::with_capacity(selected.len());
        for (def, positions) in selected {
            let rows: Vec<&'static Row> =
                positions.iter().filter_map(|&i| def.rows.get(i)).collect();
            objects.push(self.collect_object(&mut ctx, def, &rows)?);
        }
        Ok(Snapshot {
            system_name: self.system_name(),
            system_time: SystemTime::from_filetime(now.filetime),
            perf_time: now.perf_time,
            perf_freq: PERF_FREQ,
            perf_time_100ns: now.filetime,
            objects,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_fit_32_bits() {
        assert_eq!(fit_fraction(5, 10), (5, 10));
        assert_eq!(
            fit_fraction(u64::from(u32::MAX), 1),
            (u64::from(u32::MAX), 1)
        );
        assert_eq!(fit_fraction(1 << 40, 1 << 41), (1 << 30, 1 << 31));
        let (n, b) = fit_fraction(3 << 40, 4 << 40);
        assert!(b <= u64::from(u32::MAX));
        assert_eq!(n * 4, b * 3);
        assert_eq!(fit_fraction(0, 0), (0, 0));
    }

    #[test]
    fn stores_values() {
        assert_eq!(store(Store::U32Sat, 1 << 33), Value::U32(u32::MAX));
        assert_eq!(store(Store::U32Wrap, (1 << 32) + 5), Value::U32(5));
        assert_eq!(store(Store::U64, 1 << 33), Value::U64(1 << 33));
    }

    #[test]
    fn source_is_send() {
        fn send<T: Send>(_: &T) {}
        send(&LinuxSource::with_root("/x"));
        let boxed: Box<dyn Source + Send> = Box::new(LinuxSource::with_root("/x"));
        send(&boxed);
    }

    #[test]
    fn reads_whole_files_in_one_piece_or_more() {
        let dir = std::env::temp_dir().join(format!("perfcounters-seq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut buf = Vec::new();
        for len in [
            0usize,
            1,
            PID_FILE_BUF - 1,
            PID_FILE_BUF,
            PID_FILE_BUF + 1,
            10_000,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let path = dir.join(format!("f{len}"));
            std::fs::write(&path, &data).unwrap();
            read_seq_file(&mut buf, &path).unwrap();
            assert_eq!(buf, data, "length {len}");
            read_into(&mut buf, &path).unwrap();
            assert_eq!(buf, data, "length {len}");
        }
        let missing = read_seq_file(&mut buf, &dir.join("missing")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn live_handle_count_matches_the_fd_listing() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Between fork and exec the child still holds copies of this process's descriptors.
        let comm = format!("/proc/{pid}/comm");
        for _ in 0..500 {
            if std::fs::read_to_string(&comm).is_ok_and(|c| c == "sleep\n") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let listed = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .count() as i64;
        let mut src = LinuxSource::new();
        assert!(src.on_procfs());
        let snap = src
            .collect(&Request::new().object("Process", &["Handle Count", "Working Set Peak"]))
            .unwrap();
        let _ = child.kill();
        let _ = child.wait();
        let p = snap.objects.first().unwrap();
        let inst = p
            .instances()
            .iter()
            .find(|i| i.unique_id == pid as i32)
            .expect("the child is listed");
        assert_eq!(inst.raw_name(), "sleep");
        // stdin, stdout and stderr, plus whatever this process inherited without close-on-exec.
        assert!(listed >= 3, "{listed}");
        assert_eq!(inst.values().first().and_then(|v| v.as_i64()), Some(listed));
        assert!(inst.values().get(1).and_then(|v| v.as_i64()).unwrap() > 0);
        assert!(!LinuxSource::with_root("/nonexistent").on_procfs());
    }

    #[test]
    fn pid_paths() {
        let mut s = LinuxSource::with_root("/x");
        s.set_pid_path(0, "stat");
        assert_eq!(Path::new(&s.pbuf), Path::new("/x/proc/0/stat"));
        s.set_pid_path(4_294_967_295, "");
        assert_eq!(Path::new(&s.pbuf), Path::new("/x/proc/4294967295"));
    }
}
