//! Where snapshots come from: the live machine ([`perfcounters::source::local`]) or recorded raw
//! data ([`perfcounters::source::replay`]: V1 block files, or a capture directory).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use perfcounters::format::blg::TimeZoneInformation;
use perfcounters::format::BlockKind;
use perfcounters::query::{Collection, LiveQuery, Query};
use perfcounters::snapshot::Snapshot;
use perfcounters::source::replay::{OpenedRecording, ReplayError, ReplayInput};
use perfcounters::source::{self, Catalog, Request, Source, SourceError, SourceErrorKind};
use perfcounters::ErrorChain;

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

/// What the data comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Live,
    BlockFiles,
    Capture,
    BinaryLog,
}

/// A source and what the commands keep beside it: whether it replays recorded data, and its
/// catalog, read once.
pub struct Input {
    source: Box<dyn Source + Send>,
    kind: Kind,
    catalog: Option<Catalog>,
    /// The zone rules of a replayed `.blg`: its times are shown in the log's local time, as relog
    /// shows them.
    zone: Option<TimeZoneInformation>,
}

/// A replay error in the words of the command line: `--replay` paths and `--names`.
pub fn replay_error(e: ReplayError) -> anyhow::Error {
    e.with_flags("--replay", "--names").into()
}

/// Opens the replay files (or a capture directory, or a binary log, given as the only replay path:
/// [`ReplayInput::classify`]), or the live source of this platform.
pub fn open(replay: &[PathBuf], names: Option<&Path>) -> Result<Input> {
    if replay.is_empty() {
        if names.is_some() {
            bail!("--names applies to replayed blocks; live sources know their names");
        }
        return Ok(Input {
            source: source::local()?,
            kind: Kind::Live,
            catalog: None,
            zone: None,
        });
    }
    open_replay(ReplayInput::classify(replay).map_err(replay_error)?, names)
}

/// Opens classified replay paths ([`ReplayInput::open`]).
pub fn open_replay(input: ReplayInput, names: Option<&Path>) -> Result<Input> {
    let recording = input.open(names).map_err(replay_error)?;
    let mut zone = None;
    let kind = match &recording {
        OpenedRecording::BlockFiles(_) => Kind::BlockFiles,
        OpenedRecording::Capture(_) => Kind::Capture,
        OpenedRecording::BinaryLog(log) => {
            for w in log.log().warnings() {
                eprintln!("perfcounters: warning: {}: {w}", log.path().display());
            }
            zone = Some(log.log().header().time_zone.clone());
            Kind::BinaryLog
        }
    };
    Ok(Input {
        source: Box::new(recording.into_source()),
        kind,
        catalog: None,
        zone,
    })
}

impl Input {
    /// The zone whose local time the data is shown in: a replayed `.blg`'s own; `None` for the
    /// viewer's zone.
    pub fn zone(&self) -> Option<&TimeZoneInformation> {
        self.zone.as_ref()
    }

    /// Whether the data is recorded (no sleeping between collections).
    pub fn is_replay(&self) -> bool {
        self.kind != Kind::Live
    }

    /// The source's catalog, read on first use.
    fn catalog(&mut self) -> Result<&Catalog> {
        if self.catalog.is_none() {
            let catalog = self.source.catalog().map_err(|e| self.explain(e))?;
            self.catalog = Some(catalog);
        }
        self.catalog.as_ref().ok_or_else(|| anyhow!("no catalog"))
    }

    /// The next collection of `request` (what the query needs, [`Query::request`]) computed into
    /// the query's values, its wildcards expanded again on schedule ([`LiveQuery::collect`]: a
    /// replay of block files is read in place between expansions), or `None` when a replay has no
    /// more samples.
    pub fn collect(
        &mut self,
        live: &mut LiveQuery,
        request: &Request,
    ) -> Result<Option<Collection>> {
        match live.collect(self.source.as_mut(), request) {
            Ok(collection) => Ok(Some(collection)),
            Err(e) if e.kind() == SourceErrorKind::Exhausted && self.is_replay() => Ok(None),
            Err(e) => Err(self.explain(e)),
        }
    }

    /// Every counter the input offers, as counter paths (`\Object(*)\*` for an object with
    /// instances, `\Object\*` otherwise): what a replay shows when no path is given.
    pub fn every_counter(&mut self) -> Result<Vec<String>> {
        Ok(self
            .catalog()?
            .objects
            .iter()
            .map(|o| {
                if o.multi_instance {
                    format!("\\{}(*)\\*", o.name)
                } else {
                    format!("\\{}\\*", o.name)
                }
            })
            .collect())
    }

    /// The request that collects what `query` needs from this input ([`Query::request`]).
    pub fn request(&mut self, query: &mut Query) -> Result<Request> {
        Ok(query.request(self.catalog()?))
    }

    /// Every sample left in a replay, each with every object of the catalog, and the catalog.
    pub fn recorded(&mut self) -> Result<(Vec<Snapshot>, Catalog)> {
        let catalog = self.catalog()?.clone();
        let request = catalog
            .objects
            .iter()
            .fold(Request::new(), |r, o| r.all_of(&o.name));
        let mut snapshots = Vec::new();
        loop {
            match self.source.collect(&request) {
                Ok(snapshot) => snapshots.push(snapshot),
                Err(e) if e.kind() == SourceErrorKind::Exhausted => break,
                Err(e) => return Err(self.explain(e)),
            }
        }
        Ok((snapshots, catalog))
    }

    /// Objects (optionally only `object`, named in English or in the machine's language), their
    /// counters and current instances, as `list` shows them. An unknown `object` is an error with
    /// the catalog's close names.
    pub fn entries(&mut self, object: Option<&str>) -> Result<Vec<CatalogEntry>> {
        let catalog = self.catalog()?.clone();
        let only = match object {
            Some(name) => Some(
                catalog
                    .find_or_suggest(name)
                    .map_err(anyhow::Error::msg)?
                    .name
                    .as_str(),
            ),
            None => None,
        };
        let mut out = Vec::new();
        for o in &catalog.objects {
            if only.is_some_and(|w| w != o.name) {
                continue;
            }
            let instances = if o.multi_instance {
                // A counterset without data yet (a capture's first sample) has no instances.
                match self.source.instances(&o.name) {
                    Ok(list) => Some(list),
                    Err(e) if e.kind() == SourceErrorKind::UnknownObject => Some(Vec::new()),
                    Err(e) => return Err(self.explain(e)),
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

    /// A source error, with what to do instead when a replayed block file is a V2 block.
    fn explain(&self, e: SourceError) -> anyhow::Error {
        let v2_block = self.kind == Kind::BlockFiles
            && e.kind() == SourceErrorKind::Decode
            && e.path()
                .and_then(|p| std::fs::read(p).ok())
                .is_some_and(|b| BlockKind::detect(&b) == Some(BlockKind::V2));
        if v2_block {
            anyhow!(
                "{}; record one with `perfcounters capture -o DIR` and replay it with `--replay DIR` \
                 (`perfcounters decode` shows the file's raw contents)",
                ErrorChain(&e)
            )
        } else {
            e.into()
        }
    }
}
