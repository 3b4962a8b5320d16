//! Replay of recorded raw data: one [`Source`], [`ReplaySource`], over any [`Recording`].
//!
//! A recording is a sequence of samples that were taken from a machine and saved: V1 block files
//! ([`BlockRecording`], one `PERF_DATA_BLOCK` per file, as `RegQueryValueEx` returned it) or a
//! capture directory ([`CaptureRecording`], see [`crate::format::capture`]). Each recording turns its
//! samples into named [`Snapshot`]s; [`ReplaySource`] does the rest the same way for all of them: one
//! sample per collection, the requested objects, and one catalog rule.
//!
//! A Performance Monitor binary log ([`BlgRecording`]) is a recording too. Another kind of
//! recording plugs in by implementing [`Recording`] and is replayed by [`ReplaySource::new`] with
//! the same rules.
//!
//! Which of them a list of paths holds (or whether it holds counter logs, which are read rather
//! than replayed) is decided by [`ReplayInput::classify`], and [`OpenedRecording::open`] opens it.
//!
//! ```
//! use perfcounters::snapshot::{CounterDefinition, Object, ObjectData, Snapshot, Value};
//! use perfcounters::source::replay::{Recording, ReplaySource};
//! use perfcounters::source::{Request, Source, SourceError, SourceErrorKind};
//! use perfcounters::CounterType;
//!
//! /// Samples kept in memory.
//! #[derive(Debug)]
//! struct InMemory(Vec<Snapshot>);
//!
//! impl Recording for InMemory {
//!     fn sample_count(&self) -> Option<usize> {
//!         Some(self.0.len())
//!     }
//!     fn sample(&mut self, index: usize) -> Result<Option<Snapshot>, SourceError> {
//!         Ok(self.0.get(index).cloned())
//!     }
//! }
//!
//! // The System object with one counter, Processes.
//! let sample = |processes: u32| {
//!     let system = Object::new(2)
//!         .named("System")
//!         .with_counters(vec![
//!             CounterDefinition::new(248, CounterType::PERF_COUNTER_RAWCOUNT).named("Processes"),
//!         ])
//!         .with_values(vec![Value::U32(processes)]);
//!     Snapshot::new("HOST").with_objects(vec![system])
//! };
//! let mut source = ReplaySource::new(InMemory(vec![sample(101), sample(99)]));
//! assert_eq!(source.catalog()?.objects[0].counters[0].name, "Processes");
//! let request = Request::new().all_of("System");
//! let values = |s: Snapshot| s.objects[0].data.clone();
//! assert_eq!(values(source.collect(&request)?), ObjectData::Single(vec![Value::U32(101)]));
//! assert_eq!(values(source.collect(&request)?), ObjectData::Single(vec![Value::U32(99)]));
//! let end = source.collect(&request).unwrap_err();
//! assert_eq!(end.kind(), SourceErrorKind::Exhausted);
//! # Ok::<(), SourceError>(())
//! ```

mod blg;
mod blocks;
mod capture;
mod input;

use std::fmt;
use std::path::Path;

pub use blg::BlgRecording;
pub use blocks::BlockRecording;
pub use capture::{CaptureRecording, SampleSnapshots};
pub use input::{InputKind, OpenedRecording, ReplayError, ReplayErrorKind, ReplayInput};

use super::block::BlockReader;
use super::snapshots::{catalog_of, instances_of, present_objects, select_objects};
use super::{Catalog, ObjectInfo, Request, Sample, Source, SourceError, SourceErrorKind};
use crate::format::capture::Capture;
use crate::format::DecodeError;
use crate::names::NameTable;
use crate::snapshot::Snapshot;

/// Recorded raw data that a [`ReplaySource`] replays: samples by position, each as one named
/// [`Snapshot`], and what the catalog needs to describe them.
///
/// [`ReplaySource`] asks for samples in increasing order, except that it may read the first one
/// again (for an instance list or a catalog asked for before the first collection) and the last one
/// it returned (for an instance list asked for after a collection). A recording is
/// `Send`, so that a replay, like a live source, can be owned by a collection thread.
pub trait Recording: fmt::Debug + Send {
    /// How many samples the recording holds, when it knows without reading them.
    fn sample_count(&self) -> Option<usize>;

    /// Sample `index` (0-based) as one snapshot, objects and counters named (English names, so
    /// that English counter paths select them); `Ok(None)` past the last sample.
    ///
    /// # Errors
    /// A [`SourceError`] naming the file when the sample cannot be read or decoded.
    fn sample(&mut self, index: usize) -> Result<Option<Snapshot>, SourceError>;

    /// The snapshot whose objects the catalog lists first; by default the first sample. A
    /// recording that joins V1 and V2 data gives the V1 part of the first sample that has one, its
    /// V2 countersets being described by [`Recording::declared_objects`].
    ///
    /// # Errors
    /// As for [`Recording::sample`].
    fn catalog_snapshot(&mut self) -> Result<Option<Snapshot>, SourceError> {
        self.sample(0)
    }

    /// Objects the recording describes apart from its samples (V2 counterset registrations), listed
    /// in the catalog after those of the catalog snapshot. None by default.
    fn declared_objects(&self) -> Vec<ObjectInfo> {
        Vec::new()
    }

    /// Help texts by help title index, for the catalog snapshot's objects and counters. None by
    /// default (the catalog's help texts are then empty).
    fn help(&self) -> Option<&NameTable> {
        None
    }

    /// Object and counter names in the machine's language by title index, which the catalog
    /// carries ([`Catalog::local_names`]) so that counter paths may use them. None by default.
    fn local_names(&self) -> Option<&NameTable> {
        None
    }

    /// How messages name the recording, as the subject of a sentence: `"the capture"`. By default
    /// `"the recording"`.
    fn description(&self) -> String {
        "the recording".into()
    }

    /// For a recording whose samples are whole V1 blocks: the table that names their objects and
    /// counters (as [`Recording::sample`] names them), so that [`ReplaySource`] can read a sample
    /// in place ([`Source::collect_sample`]) through [`Recording::read_block`]. `None` (the
    /// default): samples are only read as snapshots.
    fn block_names(&self) -> Option<&NameTable> {
        None
    }

    /// Reads sample `index`'s V1 block into `buf` (cleared first), for a recording with
    /// [`Recording::block_names`]; `Ok(false)` past the last sample (and by default).
    ///
    /// # Errors
    /// As for [`Recording::sample`], for a sample that cannot be read or is not a V1 block.
    fn read_block(&mut self, index: usize, buf: &mut Vec<u8>) -> Result<bool, SourceError> {
        let _ = (index, buf);
        Ok(false)
    }

    /// The error [`Recording::sample`] reports when sample `index`'s block fails to decode with
    /// `error`. By default the decode error without a file name.
    fn block_error(&self, index: usize, error: DecodeError) -> SourceError {
        let _ = index;
        SourceError::caused_by(SourceErrorKind::Decode, "", error)
    }
}

/// A [`Source`] that replays a [`Recording`], one sample per collection.
///
/// * [`catalog`](Source::catalog), one rule for every recording: the objects of the recording's
///   [catalog snapshot](Recording::catalog_snapshot) that have a name, with their displayable
///   counters that have a name (a counter path selects objects and counters by name, so a listed
///   path always resolves; an object the name tables do not know is not listed as `#index`, a name
///   table that knows it makes it appear); of several objects with one name the first. Then the
///   recording's [declared objects](Recording::declared_objects) whose names are not listed yet.
///   Help texts come from [`Recording::help`], names in the machine's language from
///   [`Recording::local_names`]. The catalog is built once.
/// * [`instances`](Source::instances): the instances in the last collected sample, or in the first
///   sample before any collection.
/// * [`collect`](Source::collect): the next sample, cut down to the requested objects (in request
///   order, counter definitions kept whole). An object the catalog lists but this sample lacks is
///   left out, as a live source leaves out a provider that missed a collection, so the query reports
///   it as missing for this sample only; an object the catalog does not list is an error, and so is a
///   requested counter the object lacks. After the last sample the error is of kind
///   [`SourceErrorKind::Exhausted`]. A sample that fails to decode is skipped by the next call.
#[derive(Debug)]
pub struct ReplaySource {
    recording: Box<dyn Recording>,
    next: usize,
    /// The sample [`Source::instances`] describes: the last one collected, else the first.
    current_index: usize,
    /// That sample, read when an instance list asks for it (a collection hands its snapshot over
    /// without keeping a copy).
    current: Option<Snapshot>,
    catalog: Option<Catalog>,
    /// The last block read in place, and what reads it.
    block: Vec<u8>,
    reader: BlockReader,
}

impl ReplaySource {
    /// Replays `recording` from its first sample.
    pub fn new(recording: impl Recording + 'static) -> Self {
        ReplaySource {
            recording: Box::new(recording),
            next: 0,
            current_index: 0,
            current: None,
            catalog: None,
            block: Vec::new(),
            reader: BlockReader::default(),
        }
    }

    /// Replays a capture ([`CaptureRecording::new`]); file names in errors are relative to the
    /// capture directory.
    ///
    /// # Errors
    /// As for [`CaptureRecording::new`].
    pub fn from_capture(capture: Capture) -> Result<Self, SourceError> {
        Ok(Self::new(CaptureRecording::new(capture)?))
    }

    /// Reads the capture in `dir` and replays it ([`CaptureRecording::open`]).
    ///
    /// # Errors
    /// As for [`CaptureRecording::open`].
    pub fn open_capture(dir: &Path) -> Result<Self, SourceError> {
        Ok(Self::new(CaptureRecording::open(dir)?))
    }

    /// The recording being replayed.
    pub fn recording(&self) -> &dyn Recording {
        self.recording.as_ref()
    }

    /// The samples not collected yet, when the recording knows how many it holds.
    pub fn remaining(&self) -> Option<usize> {
        self.recording
            .sample_count()
            .map(|n| n.saturating_sub(self.next))
    }

    /// Moves to the next sample and returns its whole snapshot (every object), or `None` after the
    /// last sample. A sample that fails to decode is skipped by the next call.
    ///
    /// # Errors
    /// The recording's error for a sample that cannot be read or decoded.
    pub fn next_snapshot(&mut self) -> Result<Option<Snapshot>, SourceError> {
        if self.remaining() == Some(0) {
            return Ok(None);
        }
        let index = self.next;
        self.next += 1;
        match self.recording.sample(index)? {
            Some(snapshot) => {
                self.current_index = index;
                self.current = None;
                Ok(Some(snapshot))
            }
            None => {
                self.next = index;
                Ok(None)
            }
        }
    }

    fn current(&mut self) -> Result<&Snapshot, SourceError> {
        if self.current.is_none() {
            let sample = self.recording.sample(self.current_index)?.ok_or_else(|| {
                SourceError::new(
                    SourceErrorKind::Exhausted,
                    format!("{} has no samples", self.recording.description()),
                )
            })?;
            self.current = Some(sample);
        }
        self.current
            .as_ref()
            .ok_or_else(|| SourceError::new(SourceErrorKind::Exhausted, "no sample"))
    }

    /// The catalog, built on first use.
    fn catalog_ref(&mut self) -> Result<&Catalog, SourceError> {
        if self.catalog.is_none() {
            self.catalog = Some(self.build_catalog()?);
        }
        self.catalog
            .as_ref()
            .ok_or_else(|| SourceError::new(SourceErrorKind::Exhausted, "no catalog"))
    }

    /// The error of a collection after the last sample.
    fn exhausted(&self) -> SourceError {
        SourceError::new(
            SourceErrorKind::Exhausted,
            format!(
                "{} has no more samples (all {} replayed)",
                self.recording.description(),
                self.next
            ),
        )
    }

    fn build_catalog(&mut self) -> Result<Catalog, SourceError> {
        let mut catalog = match self.recording.catalog_snapshot()? {
            Some(snapshot) => catalog_of(&snapshot, self.recording.help()),
            None => Catalog::default(),
        };
        if let Some(local) = self.recording.local_names() {
            catalog.local_names = local.clone();
        }
        for info in self.recording.declared_objects() {
            if catalog.object(&info.name).is_none() {
                catalog.objects.push(info);
            }
        }
        Ok(catalog)
    }
}

impl Source for ReplaySource {
    fn catalog(&mut self) -> Result<Catalog, SourceError> {
        if let Some(c) = &self.catalog {
            return Ok(c.clone());
        }
        let c = self.build_catalog()?;
        self.catalog = Some(c.clone());
        Ok(c)
    }

    fn instances(&mut self, object: &str) -> Result<Vec<String>, SourceError> {
        instances_of(self.current()?, object)
    }

    fn collect(&mut self, request: &Request) -> Result<Snapshot, SourceError> {
        let Some(snapshot) = self.next_snapshot()? else {
            return Err(self.exhausted());
        };
        let present = present_objects(&snapshot.objects, request, self.catalog_ref()?)?;
        select_objects(snapshot, &present)
    }

    /// A recording of V1 blocks ([`Recording::block_names`]) is read in place: the same sample,
    /// objects, names, values and errors as [`Source::collect`] gives, without the snapshot.
    fn collect_sample(&mut self, request: &Request) -> Result<Sample<'_>, SourceError> {
        if self.recording.block_names().is_none() {
            return self.collect(request).map(Sample::Snapshot);
        }
        if self.remaining() == Some(0) {
            return Err(self.exhausted());
        }
        let index = self.next;
        self.next += 1;
        if !self.recording.read_block(index, &mut self.block)? {
            self.next = index;
            return Err(self.exhausted());
        }
        // The order of the snapshot path: the block decodes (and becomes the sample an instance
        // list describes), then the catalog decides.
        let recording = &self.recording;
        self.reader
            .validate(&self.block)
            .map_err(|e| recording.block_error(index, e))?;
        self.current_index = index;
        self.current = None;
        self.catalog_ref()?;
        let (Some(catalog), Some(names)) = (&self.catalog, self.recording.block_names()) else {
            return Err(SourceError::new(SourceErrorKind::Exhausted, "no catalog"));
        };
        let recording = &self.recording;
        self.reader
            .sample(&self.block, names, request, catalog, |e| {
                recording.block_error(index, e)
            })
            .map(Sample::Block)
    }
}
