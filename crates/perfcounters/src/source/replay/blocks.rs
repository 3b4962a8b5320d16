//! V1 block files, one `PERF_DATA_BLOCK` per sample.

use std::path::{Path, PathBuf};

use super::Recording;
use crate::format::v1::PerfDataBlock;
use crate::format::{BlockKind, DecodeError};
use crate::names::NameTable;
use crate::snapshot::Snapshot;
use crate::source::{SourceError, SourceErrorKind};

/// Recorded V1 blocks, one file per sample in the given order, each exactly as
/// `RegQueryValueEx(HKEY_PERFORMANCE_DATA, …)` returned it.
///
/// Objects and counters are named from [`NameTable::builtin_english`], and from the names of extra
/// tables ([`BlockRecording::with_names`]) for the indexes the built-in table does not know. Their
/// other names (another language's) are the catalog's names in the machine's language
/// ([`Recording::local_names`]): with a German table, `\Prozessor(*)\Prozessorzeit (%)` selects what
/// `\Processor(*)\% Processor Time` selects.
/// A file is read when its sample is asked for.
#[derive(Clone, Debug)]
pub struct BlockRecording {
    files: Vec<PathBuf>,
    names: NameTable,
    local: NameTable,
}

impl BlockRecording {
    /// The blocks in `files`, in this order.
    pub fn new(files: Vec<PathBuf>) -> Self {
        BlockRecording {
            files,
            names: NameTable::builtin_english().clone(),
            local: NameTable::new(),
        }
    }

    /// Adds `names` (the `Counter` table of the machine that recorded the blocks, say) to the
    /// table that names objects and counters. Its names that do not name their index
    /// ([`NameTable::other_names`]: another language's) become names in the machine's language.
    /// Add the English table first when there are several: an index keeps the first name it was
    /// given.
    pub fn with_names(mut self, names: &NameTable) -> Self {
        self.names.merge(names);
        self.local.merge(&names.other_names(&self.names));
        self
    }

    /// The block files.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The table that names objects and counters.
    pub fn names(&self) -> &NameTable {
        &self.names
    }

    /// Reads one block file into `buf`: an I/O error, or a V2 block, names the file.
    fn read_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), SourceError> {
        use std::io::Read;
        buf.clear();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(buf))
            .map_err(|e| SourceError::io(path, e))?;
        if BlockKind::detect(buf) == Some(BlockKind::V2) {
            return Err(SourceError::new(
                SourceErrorKind::Decode,
                "not a V1 block (no \"PERF\" signature); if it is a V2 PERF_DATA_HEADER block, it \
                 carries no counter types and cannot be replayed alone: a capture directory keeps \
                 the counterset registrations with the blocks",
            )
            .with_path(path));
        }
        Ok(())
    }

    /// A decode error of the block in `path`.
    fn decode_error(path: &Path, error: DecodeError) -> SourceError {
        SourceError::caused_by(SourceErrorKind::Decode, "", error).with_path(path)
    }

    /// Reads and decodes one block file.
    fn load(&self, path: &Path) -> Result<Snapshot, SourceError> {
        let mut bytes = Vec::new();
        Self::read_into(path, &mut bytes)?;
        let mut snapshot = PerfDataBlock::parse(&bytes)
            .and_then(|block| block.to_snapshot())
            .map_err(|e| Self::decode_error(path, e))?;
        self.names.apply(&mut snapshot);
        Ok(snapshot)
    }
}

impl Recording for BlockRecording {
    fn sample_count(&self) -> Option<usize> {
        Some(self.files.len())
    }

    fn sample(&mut self, index: usize) -> Result<Option<Snapshot>, SourceError> {
        match self.files.get(index) {
            Some(path) => self.load(path).map(Some),
            None => Ok(None),
        }
    }

    fn local_names(&self) -> Option<&NameTable> {
        Some(&self.local)
    }

    fn description(&self) -> String {
        "the block file list".into()
    }

    fn block_names(&self) -> Option<&NameTable> {
        Some(&self.names)
    }

    fn read_block(&mut self, index: usize, buf: &mut Vec<u8>) -> Result<bool, SourceError> {
        match self.files.get(index) {
            Some(path) => Self::read_into(path, buf).map(|()| true),
            None => Ok(false),
        }
    }

    fn block_error(&self, index: usize, error: DecodeError) -> SourceError {
        match self.files.get(index) {
            Some(path) => Self::decode_error(path, error),
            None => SourceError::caused_by(SourceErrorKind::Decode, "", error),
        }
    }
}
