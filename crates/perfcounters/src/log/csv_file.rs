//! A PDH-CSV / PDH-TSV log file that appears under its name only when complete: written under a
//! hidden temporary name beside it ([`PendingFile`]) and renamed into place by
//! [`LogWriter::finish`], so that a failed or interrupted write leaves nothing behind and a retry
//! needs no `overwrite`.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use crate::atomic_file::PendingFile;

use super::error::LogError;
use super::model::{LogHeader, LogWriter, Record, RecordEncoder};
use super::pdh_csv::{CsvFlavor, PdhCsvLogWriter};

/// A new PDH-CSV / PDH-TSV file (see the [module documentation](self)).
pub(super) struct CsvFile {
    /// The writer of the temporary file; `None` once finished.
    writer: Option<PdhCsvLogWriter<BufWriter<File>>>,
    pending: Option<PendingFile>,
    /// Whether a file of the final name is replaced.
    replace: bool,
    target: String,
}

impl CsvFile {
    /// Starts the file `target` (`replace`: an existing one is replaced when the log is complete).
    pub(super) fn create(target: &str, flavor: CsvFlavor, replace: bool) -> Result<Self, LogError> {
        let (pending, file) =
            PendingFile::create(Path::new(target)).map_err(|e| LogError::io(target, None, e))?;
        Ok(CsvFile {
            writer: Some(PdhCsvLogWriter::new(
                BufWriter::with_capacity(256 * 1024, file),
                flavor,
                target,
            )),
            pending: Some(pending),
            replace,
            target: target.to_owned(),
        })
    }

    fn writer(&mut self) -> Result<&mut PdhCsvLogWriter<BufWriter<File>>, LogError> {
        self.writer
            .as_mut()
            .ok_or_else(|| LogError::usage(&self.target, "the log is already finished"))
    }
}

impl LogWriter for CsvFile {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        self.writer()?.write_header(header)
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        self.writer()?.write_record(record)
    }

    fn finish(&mut self) -> Result<(), LogError> {
        let Some(mut writer) = self.writer.take() else {
            return Ok(());
        };
        writer.finish()?;
        // The file is closed before it is renamed (Windows renames no open file).
        drop(writer);
        match self.pending.take() {
            Some(p) => p
                .commit(self.replace)
                .map_err(|e| LogError::io(&self.target, None, e)),
            None => Ok(()),
        }
    }

    fn checkpoint(&mut self) -> Result<(), LogError> {
        self.writer()?.checkpoint()
    }

    fn record_encoder(&self) -> Option<Box<dyn RecordEncoder>> {
        self.writer.as_ref().and_then(|w| w.record_encoder())
    }

    fn write_encoded(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        self.writer()?.write_encoded(bytes)
    }

    fn takes_values(&self) -> bool {
        self.writer.as_ref().is_some_and(|w| w.takes_values())
    }

    fn write_values(&mut self, rows: &super::model::ValueRows) -> Result<(), LogError> {
        self.writer()?.write_values(rows)
    }
}
