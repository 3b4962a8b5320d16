//! Capture directories: V1 and V2 samples with the name tables and registrations they need.

use std::path::{Path, PathBuf};

use super::Recording;
use crate::format::capture::{
    counters_path, registration_path, sample_path, Capture, CaptureError, NameKind,
};
use crate::format::v1::PerfDataBlock;
use crate::format::v2::{
    to_snapshot, ConvertedSnapshot, CounterSetRegistration, CounterSpec, DataHeader,
};
use crate::names::{parse_multi_sz, NameTable};
use crate::snapshot::Snapshot;
use crate::source::snapshots::{combine, counterset_info};
use crate::source::{Cause, ObjectInfo, SourceError, SourceErrorKind};

/// The file becomes the error's path and the underlying error its source.
impl From<CaptureError> for SourceError {
    fn from(e: CaptureError) -> Self {
        let kind = if e.is_io() {
            SourceErrorKind::Io
        } else {
            SourceErrorKind::Decode
        };
        let (path, message, source) = e.into_parts();
        SourceError::from_parts(kind, message, source).with_path(&path)
    }
}

/// The two snapshots of one sample, before they are joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleSnapshots {
    /// The V1 block as a snapshot with English names, if the sample has one.
    pub v1: Option<Snapshot>,
    /// The V2 block converted with the registrations (names from them), and the blocks that carried
    /// an error status, if the sample has one.
    pub v2: Option<ConvertedSnapshot>,
}

/// A [`Capture`] decoded for replay: its samples as snapshots.
///
/// * Names: the capture's English `Counter` table merged over [`NameTable::builtin_english`] names
///   the V1 objects and counters (so paths are English whatever the machine's language); help texts
///   come from its English `Help` table. V2 countersets are named by their registrations. The
///   `Counter` tables of other languages (the user's, `HKEY_PERFORMANCE_NLSTEXT`) are the names in
///   the machine's language ([`Recording::local_names`]), which counter paths may use too.
/// * A sample is its V1 and V2 snapshots joined (`combine`: the V1 header is the snapshot's, each
///   V2 counterset keeps the clock of its own `PERF_DATA_HEADER`).
/// * For the catalog of a [`super::ReplaySource`]: the V1 objects of the first sample that has a V1
///   block ([`Recording::catalog_snapshot`]), then one object per V2 registration
///   ([`Recording::declared_objects`]: displayable counters only, the same rule as the live PerfLib
///   source).
#[derive(Debug)]
pub struct CaptureRecording {
    capture: Capture,
    root: PathBuf,
    names: NameTable,
    help: NameTable,
    local: NameTable,
    registrations: Vec<CounterSetRegistration>,
    specs: Vec<CounterSpec>,
}

impl CaptureRecording {
    /// Decodes `capture` for replay. File names in errors are relative to the capture directory.
    ///
    /// # Errors
    /// [`SourceErrorKind::Decode`] naming the file when a name table, a registration or the
    /// counter-info result does not decode ([`Capture::read`] has checked them already).
    pub fn new(capture: Capture) -> Result<Self, SourceError> {
        Self::with_root(capture, PathBuf::new())
    }

    /// Reads the capture in `dir` ([`Capture::read`]) and decodes it; errors name files under `dir`.
    ///
    /// # Errors
    /// The [`CaptureError`] of [`Capture::read`] (kind [`SourceErrorKind::Io`] or
    /// [`SourceErrorKind::Decode`]), or one of [`CaptureRecording::new`].
    pub fn open(dir: &Path) -> Result<Self, SourceError> {
        let capture = Capture::read(dir)?;
        Self::with_root(capture, dir.to_path_buf())
    }

    fn with_root(capture: Capture, root: PathBuf) -> Result<Self, SourceError> {
        let decode_error = |rel: PathBuf, e: Cause| {
            SourceError::from_parts(SourceErrorKind::Decode, String::new(), Some(e))
                .with_path(&root.join(rel))
        };
        let table = |kind: NameKind| -> Result<Option<NameTable>, SourceError> {
            capture
                .english(kind)
                .map(|f| parse_multi_sz(&f.bytes).map_err(|e| decode_error(f.path(), Box::new(e))))
                .transpose()
        };
        let mut names = table(NameKind::Counter)?.unwrap_or_default();
        names.merge(NameTable::builtin_english());
        let help = table(NameKind::Help)?.unwrap_or_default();
        let mut local = NameTable::new();
        for f in &capture.names {
            if f.kind == NameKind::Counter && capture.english(NameKind::Counter) != Some(f) {
                let t =
                    parse_multi_sz(&f.bytes).map_err(|e| decode_error(f.path(), Box::new(e)))?;
                local.merge(&t.other_names(&names));
            }
        }
        let mut registrations = Vec::with_capacity(capture.registrations.len());
        for r in &capture.registrations {
            let reg = CounterSetRegistration::decode(r.buffers())
                .map_err(|e| decode_error(registration_path(r), Box::new(e)))?;
            registrations.push(reg);
        }
        let specs = match &capture.v2_counters {
            Some(b) => CounterSpec::decode_list(b)
                .map_err(|e| decode_error(counters_path(), Box::new(e)))?,
            None => Vec::new(),
        };
        Ok(CaptureRecording {
            capture,
            root,
            names,
            help,
            local,
            registrations,
            specs,
        })
    }

    /// The capture.
    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    /// The decoded V2 registrations, in capture order.
    pub fn registrations(&self) -> &[CounterSetRegistration] {
        &self.registrations
    }

    /// The name table used for V1 objects and counters.
    pub fn names(&self) -> &NameTable {
        &self.names
    }

    /// The V1 and V2 snapshots of sample `index` (0-based).
    ///
    /// # Errors
    /// [`SourceErrorKind::Exhausted`] for an index past the end; [`SourceErrorKind::Decode`] naming
    /// the sample file when a block does not decode or convert.
    pub fn sample_snapshots(&self, index: usize) -> Result<SampleSnapshots, SourceError> {
        let sample = self.capture.samples.get(index).ok_or_else(|| {
            SourceError::new(
                SourceErrorKind::Exhausted,
                format!(
                    "the capture has {} sample(s), no sample {}",
                    self.capture.samples.len(),
                    index + 1
                ),
            )
        })?;
        let error = |v2: bool, e: Cause| {
            SourceError::from_parts(SourceErrorKind::Decode, String::new(), Some(e))
                .with_path(&self.root.join(sample_path(index + 1, v2)))
        };
        let v1 = match &sample.v1 {
            Some(bytes) => {
                let mut s = PerfDataBlock::parse(bytes)
                    .and_then(|b| b.to_snapshot())
                    .map_err(|e| error(false, Box::new(e)))?;
                self.names.apply(&mut s);
                Some(s)
            }
            None => None,
        };
        let v2 = match &sample.v2 {
            Some(bytes) => {
                let header = DataHeader::parse(bytes).map_err(|e| error(true, Box::new(e)))?;
                let conversion = to_snapshot(&header, &self.specs, &self.registrations)
                    .map_err(|e| error(true, Box::new(e)))?;
                Some(conversion)
            }
            None => None,
        };
        Ok(SampleSnapshots { v1, v2 })
    }
}

impl Recording for CaptureRecording {
    fn sample_count(&self) -> Option<usize> {
        Some(self.capture.samples.len())
    }

    /// V1 and V2 joined, every object.
    fn sample(&mut self, index: usize) -> Result<Option<Snapshot>, SourceError> {
        if index >= self.capture.samples.len() {
            return Ok(None);
        }
        let parts = self.sample_snapshots(index)?;
        Ok(Some(
            combine(
                parts.v1,
                parts.v2.map(|c| c.snapshot),
                &self.capture.info.machine,
            )
            .unwrap_or_default(),
        ))
    }

    /// The V1 snapshot of the first sample that has a V1 block.
    fn catalog_snapshot(&mut self) -> Result<Option<Snapshot>, SourceError> {
        match self.capture.samples.iter().position(|s| s.v1.is_some()) {
            Some(i) => Ok(self.sample_snapshots(i)?.v1),
            None => Ok(None),
        }
    }

    /// One object per registration.
    fn declared_objects(&self) -> Vec<ObjectInfo> {
        self.registrations
            .iter()
            .filter_map(counterset_info)
            .collect()
    }

    fn local_names(&self) -> Option<&NameTable> {
        Some(&self.local)
    }

    fn help(&self) -> Option<&NameTable> {
        Some(&self.help)
    }

    fn description(&self) -> String {
        "the capture".into()
    }
}
