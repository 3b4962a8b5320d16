//! Where snapshots come from: the live machine, or recorded raw blocks replayed in order.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use chrono::{DateTime, Local, TimeZone};
use perfcounters::format::v1::PerfDataBlock;
use perfcounters::names::NameTable;
use perfcounters::query::Query;
use perfcounters::snapshot::{ObjectData, Snapshot};
use perfcounters::source::{Request, Source};

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

/// Opens the replay files, or the live source of this platform.
pub fn open(replay: &[PathBuf], names: Option<&Path>) -> Result<Box<dyn Collector>> {
    if !replay.is_empty() {
        return Ok(Box::new(Replay::new(replay.to_vec(), names)?));
    }
    if names.is_some() {
        bail!("--names applies to replayed blocks; live sources know their names");
    }
    live()
}

#[cfg(target_os = "linux")]
fn live() -> Result<Box<dyn Collector>> {
    let source = perfcounters::source::linux::LinuxSource::new();
    Ok(Box::new(Live {
        source: Box::new(source),
    }))
}

#[cfg(not(target_os = "linux"))]
fn live() -> Result<Box<dyn Collector>> {
    bail!("no live source for this platform yet; use --replay with recorded blocks")
}

/// A live [`Source`].
// Constructed by `live()` only where the platform has a live source.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Live {
    source: Box<dyn Source>,
}

impl Collector for Live {
    fn catalog(&mut self, object: Option<&str>) -> Result<Vec<CatalogEntry>> {
        let catalog = self.source.catalog()?;
        let mut out = Vec::new();
        for o in &catalog.objects {
            if object.is_some_and(|w| !w.eq_ignore_ascii_case(&o.name)) {
                continue;
            }
            let instances = if o.multi_instance {
                Some(self.source.instances(&o.name)?)
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

    fn collect(&mut self, query: &Query) -> Result<Option<Snapshot>> {
        let catalog = self.source.catalog()?;
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
                // Only unknown counters were asked for: collect the object's definitions so the query can
                // report the unknown names with close suggestions.
                request = request.all_of(&info.name);
                continue;
            }
            request = request.object(&info.name, &known);
        }
        Ok(Some(self.source.collect(&request)?))
    }

    fn is_replay(&self) -> bool {
        false
    }
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
                 carries no counter types and cannot be replayed without its counterset registration \
                 (`perfcounters decode` shows its raw contents)",
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
