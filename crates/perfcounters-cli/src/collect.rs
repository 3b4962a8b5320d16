//! Where snapshots come from: the live machine, recorded raw blocks replayed in order, or a capture
//! directory.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use chrono::{DateTime, Local, TimeZone};
use perfcounters::format::capture::CaptureSource;
use perfcounters::format::v1::PerfDataBlock;
use perfcounters::names::NameTable;
use perfcounters::query::Query;
use perfcounters::snapshot::{ObjectData, Snapshot};
use perfcounters::source::{Catalog, Request, Source, SourceErrorKind};

/// One object as `list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// The object name.
    pub object: String,
    /// Displayable counter names.
    pub counters: Vec<String>,
    /// Instance names, or `None` for a single-instance object.
    pub instances: Option<Vec<String>>,
}

/// A source of snapshots for the CLI.
pub trait Collector {
    /// Objects (optionally only `object`), their counters and current instances.
    fn catalog(&mut self, object: Option<&str>) -> Result<Vec<CatalogEntry>>;
    /// The next collection for the query, or `None` when a replay is exhausted.
    fn collect(&mut self, query: &Query) -> Result<Option<Snapshot>>;
    /// Whether the data is recorded (no sleeping between collections).
    fn is_replay(&self) -> bool;
}

/// Opens the replay files (or a capture directory given as the only replay path), or the live source
/// of this platform.
pub fn open(replay: &[PathBuf], names: Option<&Path>) -> Result<Box<dyn Collector>> {
    if let [dir] = replay {
        if dir.is_dir() {
            if names.is_some() {
                bail!(
                    "--names applies to replayed block files; the capture {} carries its own name tables",
                    dir.display()
                );
            }
            return Ok(Box::new(CaptureReplay::open(dir)?));
        }
    }
    if let Some(dir) = replay.iter().find(|p| p.is_dir()) {
        bail!(
            "{} is a directory: a capture directory must be the only --replay path",
            dir.display()
        );
    }
    if !replay.is_empty() {
        return Ok(Box::new(Replay::new(replay.to_vec(), names)?));
    }
    if names.is_some() {
        bail!("--names applies to replayed blocks; live sources know their names");
    }
    live()
}

fn live() -> Result<Box<dyn Collector>> {
    Ok(Box::new(Live::new(live_source()?)))
}

/// The live source of this platform.
#[cfg(target_os = "linux")]
pub fn live_source() -> Result<Box<dyn Source + Send>> {
    Ok(Box::new(perfcounters::source::linux::LinuxSource::new()))
}

/// The live source of this platform.
#[cfg(windows)]
pub fn live_source() -> Result<Box<dyn Source + Send>> {
    Ok(Box::new(
        perfcounters::source::windows::WindowsSource::local(),
    ))
}

/// The live source of this platform.
#[cfg(not(any(target_os = "linux", windows)))]
pub fn live_source() -> Result<Box<dyn Source + Send>> {
    bail!("no live source for this platform; use --replay with recorded blocks or a capture")
}

/// A live [`Source`]. The catalog is read once and again only when a query names an object it
/// lacks (on Windows a catalog is a full "Global" collection).
pub struct Live {
    source: Box<dyn Source + Send>,
    catalog: Option<Catalog>,
    unknown: Vec<String>,
}

impl Live {
    /// Wraps a source.
    pub fn new(source: Box<dyn Source + Send>) -> Self {
        Live {
            source,
            catalog: None,
            unknown: Vec::new(),
        }
    }
}

impl Collector for Live {
    fn catalog(&mut self, object: Option<&str>) -> Result<Vec<CatalogEntry>> {
        catalog_entries(self.source.as_mut(), object)
    }

    fn collect(&mut self, query: &Query) -> Result<Option<Snapshot>> {
        let stale = match &self.catalog {
            None => true,
            Some(c) => query.needed().iter().any(|(object, _)| {
                c.object(object).is_none() && !self.unknown.iter().any(|u| u == object)
            }),
        };
        if stale {
            let c = self.source.catalog()?;
            // Names still unknown after a fresh catalog are not looked up again each interval.
            self.unknown = query
                .needed()
                .into_iter()
                .map(|(object, _)| object)
                .filter(|o| c.object(o).is_none())
                .collect();
            self.catalog = Some(c);
        }
        let catalog = self.catalog.as_ref().expect("set above");
        let request = request_for(query, catalog);
        Ok(Some(self.source.collect(&request)?))
    }

    fn is_replay(&self) -> bool {
        false
    }
}

/// The request that collects what `query` needs from a source with this catalog. Objects the catalog
/// lacks are left out (the query reports them); when only unknown counters of an object were asked
/// for, the whole object is collected so that the query can suggest close names.
pub fn request_for(query: &Query, catalog: &Catalog) -> Request {
    let mut request = Request::new();
    for (object, counters) in query.needed() {
        let Some(info) = catalog.object(&object) else {
            continue;
        };
        let known: Vec<String> = counters
            .into_iter()
            .filter(|c| info.counter(c).is_some())
            .collect();
        if known.is_empty()
            && !query
                .paths()
                .iter()
                .any(|p| p.object.eq_ignore_ascii_case(&object) && p.counter.contains('*'))
        {
            request = request.all_of(&info.name);
            continue;
        }
        request = request.object(&info.name, &known);
    }
    request
}

/// Recorded V1 blocks, one file per collection.
pub struct Replay {
    files: Vec<PathBuf>,
    next: usize,
    names: NameTable,
}

impl Replay {
    /// Replays `files` in order, naming objects and counters from `names` (plus the built-in English table).
    pub fn new(files: Vec<PathBuf>, names: Option<&Path>) -> Result<Self> {
        let mut table = NameTable::builtin_english().clone();
        if let Some(p) = names {
            table.merge(&load_names(p)?);
        }
        Ok(Replay {
            files,
            next: 0,
            names: table,
        })
    }

    fn load(&self, path: &Path) -> Result<Snapshot> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        if bytes.len() >= 48 && crate::decode::detect(&bytes) == crate::decode::BlockKind::V2 {
            bail!(
                "{}: not a V1 block (no \"PERF\" signature); if it is a V2 PERF_DATA_HEADER block, it \
                 carries no counter types and cannot be replayed alone: record a capture directory \
                 (`perfcounters capture DIR`), which keeps the counterset registrations with the blocks, \
                 and replay it with `--replay DIR` (`perfcounters decode` shows the file's raw contents)",
                path.display()
            );
        }
        let block = PerfDataBlock::parse(&bytes).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let mut snapshot = block
            .to_snapshot()
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        self.names.apply(&mut snapshot);
        Ok(snapshot)
    }
}

impl Collector for Replay {
    fn catalog(&mut self, object: Option<&str>) -> Result<Vec<CatalogEntry>> {
        let first = self
            .files
            .first()
            .ok_or_else(|| anyhow!("no files to replay"))?;
        let snapshot = self.load(first)?;
        Ok(snapshot
            .objects
            .iter()
            .filter(|o| {
                object.is_none_or(|w| o.name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(w)))
            })
            .map(|o| CatalogEntry {
                object: o.name.clone().unwrap_or_else(|| format!("#{}", o.index)),
                counters: o
                    .counters
                    .iter()
                    .filter(|c| c.counter_type.is_displayable())
                    .map(|c| c.name.clone().unwrap_or_else(|| format!("#{}", c.index)))
                    .collect(),
                instances: match &o.data {
                    ObjectData::Instances(list) => {
                        Some(list.iter().map(|i| i.name.clone()).collect())
                    }
                    ObjectData::Single(_) => None,
                    ObjectData::MetadataOnly { multiple_instances } => {
                        multiple_instances.then(Vec::new)
                    }
                },
            })
            .collect())
    }

    fn collect(&mut self, _query: &Query) -> Result<Option<Snapshot>> {
        let Some(path) = self.files.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        self.load(&path.clone()).map(Some)
    }

    fn is_replay(&self) -> bool {
        true
    }
}

/// A capture directory ([`perfcounters::format::capture`]), replayed sample by sample with its own name tables
/// and V2 registrations.
pub struct CaptureReplay {
    source: CaptureSource,
}

impl CaptureReplay {
    /// Reads and checks the capture in `dir`.
    pub fn open(dir: &Path) -> Result<Self> {
        Ok(CaptureReplay {
            source: CaptureSource::open(dir)?,
        })
    }
}

impl Collector for CaptureReplay {
    fn catalog(&mut self, object: Option<&str>) -> Result<Vec<CatalogEntry>> {
        catalog_entries(&mut self.source, object)
    }

    fn collect(&mut self, _query: &Query) -> Result<Option<Snapshot>> {
        Ok(self.source.next_snapshot()?)
    }

    fn is_replay(&self) -> bool {
        true
    }
}

/// The catalog of a source as `list` shows it (optionally only `object`), with current instances.
fn catalog_entries(source: &mut dyn Source, object: Option<&str>) -> Result<Vec<CatalogEntry>> {
    let catalog = source.catalog()?;
    let mut out = Vec::new();
    for o in &catalog.objects {
        if object.is_some_and(|w| !w.eq_ignore_ascii_case(&o.name)) {
            continue;
        }
        let instances = if o.multi_instance {
            // A counterset without data yet (a capture's first sample) has no instances.
            match source.instances(&o.name) {
                Ok(list) => Some(list),
                Err(e) if e.kind() == SourceErrorKind::UnknownObject => Some(Vec::new()),
                Err(e) => return Err(e.into()),
            }
        } else {
            None
        };
        out.push(CatalogEntry {
            object: o.name.clone(),
            counters: o.counters.iter().map(|c| c.name.clone()).collect(),
            instances,
        });
    }
    Ok(out)
}

/// Reads a name table: a REG_MULTI_SZ dump (UTF-16) or the `index name` text form.
pub fn load_names(path: &Path) -> Result<NameTable> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read name table {}", path.display()))?;
    let looks_utf16 = bytes.len() >= 2 && bytes.len() % 2 == 0 && bytes[1] == 0;
    let table = if looks_utf16 {
        perfcounters::names::parse_multi_sz(&bytes)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?
    } else {
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            anyhow!(
                "{}: not UTF-8 text nor UTF-16 (REG_MULTI_SZ): {e}",
                path.display()
            )
        })?;
        perfcounters::names::parse_text(text).map_err(|e| anyhow!("{}: {e}", path.display()))?
    };
    Ok(table)
}

/// The collection time of a snapshot in local time (from its 100 ns FILETIME).
pub fn local_time_of(snapshot: &Snapshot) -> DateTime<Local> {
    const UNIX_EPOCH_AS_FILETIME: i64 = 116_444_736_000_000_000;
    let t = snapshot
        .perf_time_100ns
        .saturating_sub(UNIX_EPOCH_AS_FILETIME);
    let secs = t.div_euclid(10_000_000);
    let nanos = (t.rem_euclid(10_000_000) * 100) as u32;
    Local
        .timestamp_opt(secs, nanos)
        .single()
        .unwrap_or_else(Local::now)
}
