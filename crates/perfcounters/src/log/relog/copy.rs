//! Records copied into a writer, encoded on the machine's other cores.

use crate::log::error::LogError;
use crate::log::handover::RecordBatch;
use crate::log::model::{LogReader, LogWriter, Record, RecordEncoder, ValueRows};
use crate::log::pool::{self, Collector};

/// Copies every record of `reader` into `writer` (header, records, finish). Returns the number of
/// records written.
///
/// A writer that [takes values](LogWriter::takes_values) (Parquet of a log without raw samples)
/// is given rows of values where the reader has them. A writer with a
/// [`record_encoder`](LogWriter::record_encoder) (PDH-CSV / PDH-TSV) has its
/// records encoded on the machine's other cores while this thread reads ([`copy_with`] with the
/// default [`CopyOptions`]); the bytes are the same as one thread writes.
pub fn copy(reader: &mut dyn LogReader, writer: &mut dyn LogWriter) -> Result<u64, LogError> {
    copy_with(reader, writer, &CopyOptions::default())
}

/// How [`copy_with`] shares the work among threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOptions {
    /// Threads that encode records besides the reading thread; 0 encodes on the reading thread.
    pub encoders: usize,
    /// Cells (records × columns) per batch handed to an encoder, at least one record; a log of
    /// one batch or less is copied on the reading thread alone.
    pub batch_cells: usize,
}

impl Default for CopyOptions {
    /// One encoder per core (the reading thread shares a core with one), batches of 16,384 cells
    /// (under 1 MB of records).
    fn default() -> Self {
        CopyOptions {
            encoders: crate::log::cores(),
            batch_cells: 1 << 14,
        }
    }
}

impl CopyOptions {
    /// Everything on the calling thread.
    pub fn single_threaded() -> Self {
        CopyOptions {
            encoders: 0,
            ..Self::default()
        }
    }
}

/// [`copy`] with the work shared as `options` say.
///
/// With encoders, this thread reads records into batches and hands batch i to encoder i mod n; it
/// writes the encoded batches in their order as they come back, with at most two batches per
/// encoder under way, so memory stays a few batches whatever the log's length. A reading error
/// ends the copy after the records before it are written, as on one thread.
pub fn copy_with(
    reader: &mut dyn LogReader,
    writer: &mut dyn LogWriter,
    options: &CopyOptions,
) -> Result<u64, LogError> {
    writer.write_header(reader.header())?;
    let encoder = match writer.record_encoder() {
        Some(e) if options.encoders > 0 => e,
        _ => {
            let mut n = 0u64;
            if writer.takes_values() {
                // Rows of values where the reader has them (and the writer loses nothing).
                let mut rows = ValueRows::default();
                while let Some(read) = reader.read_values(&mut rows, options.batch_cells)? {
                    if read == 0 {
                        writer.finish()?;
                        return Ok(n);
                    }
                    writer.write_values(&rows)?;
                    n += read as u64;
                }
            }
            let mut record = Record::default();
            while reader.read_record(&mut record)? {
                writer.write_record(&record)?;
                n += 1;
            }
            writer.finish()?;
            return Ok(n);
        }
    };
    let encoder: &dyn RecordEncoder = &*encoder;
    // A reader of values hands them over without a record per row.
    let mut first = Values {
        rows: ValueRows::default(),
        bytes: Vec::new(),
    };
    let n = match first.fill(reader, options.batch_cells) {
        Ok(true) => {
            // A log that ends within the first batch is written here, with no thread started.
            let mut second = Values {
                rows: ValueRows::default(),
                bytes: Vec::new(),
            };
            match second.fill(reader, options.batch_cells) {
                Ok(false) => {
                    first.encode(encoder)?;
                    writer.write_encoded(&first.bytes)?;
                    first.len() as u64
                }
                Ok(true) => {
                    let n = encode_in_order(reader, writer, encoder, options, vec![first, second])?;
                    writer.finish()?;
                    return Ok(n);
                }
                Err(e) => {
                    // The records before the error are written, as on one thread.
                    first.encode(encoder)?;
                    writer.write_encoded(&first.bytes)?;
                    return Err(e);
                }
            }
        }
        Ok(false) if first.supported() => 0,
        Ok(false) => {
            let columns = reader.header().counters.len().max(1);
            let per_batch = (options.batch_cells / columns).max(1);
            // The first batch decides: a log that ends within it is written here, with no
            // thread started.
            let mut first = Batch {
                per_batch,
                ..Batch::default()
            };
            let ended = first.fill(reader, options.batch_cells);
            if ended.is_err() || first.len() < per_batch {
                let mut n = 0u64;
                for record in first.records.records() {
                    writer.write_record(record)?;
                    n += 1;
                }
                ended?;
                n
            } else {
                let n = encode_in_order(reader, writer, encoder, options, vec![first])?;
                writer.finish()?;
                return Ok(n);
            }
        }
        Err(e) => return Err(e),
    };
    writer.finish()?;
    Ok(n)
}

/// A batch of work for [`encode_in_order`]: read on the reading thread, encoded on another.
trait Work: Default + Send {
    /// Reads the next records (about `cells` cells); false when the log ended before any. On a
    /// reading error, the records before it stay in the batch.
    fn fill(&mut self, reader: &mut dyn LogReader, cells: usize) -> Result<bool, LogError>;
    /// The records held.
    fn len(&self) -> usize;
    /// Encodes them into [`bytes`](Work::bytes).
    fn encode(&mut self, encoder: &dyn RecordEncoder) -> Result<(), LogError>;
    /// The encoded bytes.
    fn bytes(&self) -> &[u8];
}

/// Encodes the batches `pending` (in order, the last one with more records possibly to follow)
/// and every further batch of `reader` on `options.encoders` threads (the log's ordered worker
/// pool, `pool`), and writes them in order.
///
/// This thread reads records into batches and hands batch i to encoder i mod n; it writes the
/// encoded batches in their order as they come back, with at most two batches per encoder under
/// way, so memory stays a few batches whatever the log's length. A reading error ends the copy
/// after the records before it are written, as on one thread.
fn encode_in_order<W: Work>(
    reader: &mut dyn LogReader,
    writer: &mut dyn LogWriter,
    encoder: &dyn RecordEncoder,
    options: &CopyOptions,
    pending: Vec<W>,
) -> Result<u64, LogError> {
    let stopped = || LogError::internal("copy", "an encoder stopped");
    std::thread::scope(|scope| {
        let (mut batches, mut encoded, ends) =
            pool::ordered::<W, (W, Result<(), LogError>)>(options.encoders);
        let limit = 2 * ends.len();
        for worker in ends {
            scope.spawn(move || {
                worker.run(|mut batch: W| {
                    let r = batch.encode(encoder);
                    (batch, r)
                });
            });
        }
        let mut written = 0u64;
        let mut spare: Vec<W> = Vec::new();
        let mut failure = None;
        // The oldest batch under way, written when it comes back; its buffers are reused.
        let mut write_oldest = |encoded: &mut Collector<_>, spare: &mut Vec<W>| {
            let (batch, r): (W, _) = encoded.next().map_err(|_| stopped())?.ok_or_else(stopped)?;
            // The records before an encoding error are written, as on one thread.
            writer.write_encoded(batch.bytes())?;
            r?;
            written += batch.len() as u64;
            spare.push(batch);
            Ok::<(), LogError>(())
        };
        for batch in pending {
            if batch.len() > 0 && !batches.send(batch) {
                return Err(stopped());
            }
        }
        loop {
            if encoded.in_flight() >= limit {
                write_oldest(&mut encoded, &mut spare)?;
            }
            let mut batch = spare.pop().unwrap_or_default();
            let more = match batch.fill(reader, options.batch_cells) {
                Ok(more) => more,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            };
            if batch.len() > 0 && !batches.send(batch) {
                return Err(stopped());
            }
            if !more {
                break;
            }
        }
        drop(batches);
        while encoded.in_flight() > 0 {
            write_oldest(&mut encoded, &mut spare)?;
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(written),
        }
    })
}

/// Records read for an encoder, and their bytes once encoded.
#[derive(Default)]
struct Batch {
    records: RecordBatch,
    /// Records per batch.
    per_batch: usize,
    bytes: Vec<u8>,
}

impl Work for Batch {
    fn fill(&mut self, reader: &mut dyn LogReader, cells: usize) -> Result<bool, LogError> {
        if self.per_batch == 0 {
            self.per_batch = (cells / reader.header().counters.len().max(1)).max(1);
        }
        self.records
            .fill(self.per_batch, |record| reader.read_record(record))
    }

    fn len(&self) -> usize {
        self.records.len()
    }

    fn encode(&mut self, encoder: &dyn RecordEncoder) -> Result<(), LogError> {
        self.bytes.clear();
        for record in self.records.records() {
            encoder.encode(record, &mut self.bytes)?;
        }
        Ok(())
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Values read for an encoder ([`LogReader::read_values`]), and their bytes once encoded.
#[derive(Default)]
struct Values {
    rows: ValueRows,
    bytes: Vec<u8>,
}

impl Values {
    /// Whether the reader read values (after a [`fill`](Work::fill)): it set the width.
    fn supported(&self) -> bool {
        self.rows.columns != usize::MAX
    }
}

impl Work for Values {
    fn fill(&mut self, reader: &mut dyn LogReader, cells: usize) -> Result<bool, LogError> {
        self.rows.columns = usize::MAX;
        match reader.read_values(&mut self.rows, cells) {
            Ok(Some(n)) => Ok(n > 0),
            Ok(None) => {
                self.rows.clear();
                Ok(false)
            }
            Err(e) => {
                self.rows.clear();
                Err(e)
            }
        }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn encode(&mut self, encoder: &dyn RecordEncoder) -> Result<(), LogError> {
        self.bytes.clear();
        encoder.encode_values(&self.rows, &mut self.bytes)
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}
