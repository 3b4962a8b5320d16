//! Parquet column chunks of the long form's columns that are constant along each log column's run
//! of rows (`machine`, `object`, `instance`, `counter`, `parent`, `instance_index`,
//! `counter_type`), written by hand: a dictionary page of the header's distinct values and data
//! pages of RLE runs of their keys, one run per log column.
//!
//! The `parquet` crate's Arrow writer does not keep a `DictionaryArray`'s keys: it hashes every
//! row's value again to find its key in the dictionary it builds (`DictEncoder::encode` through
//! its `Interner`). In the long form a row's path parts are known per log column, so that hashing
//! (about 1.0 G instructions of the 3.54 G of writing the 50 MB benchmark log, callgrind; the
//! largest single cost, see docs/benchmarks.md) buys nothing: the keys come from the column index.
//! The crate's value encoders are private, so the pages are assembled here and handed to its
//! page writer ([`SerializedPageWriter`]), and the chunk to the row group with
//! `SerializedRowGroupWriter::append_column`, the way the crate's own parallel Arrow writer hands
//! over its chunks. The chunks carry what the crate writes for a dictionary column (dictionary and
//! data page offsets, encodings, page encoding statistics, an offset index with the unencoded
//! byte sizes) and, at no cost, statistics per chunk (minimum, maximum, null count), which the
//! crate's writer could only compute by comparing every row's value.

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, EncodingMask, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ColumnChunkMetaData, PageEncodingStats};
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// The distinct values of a run column, in key order.
#[derive(Debug, Clone)]
pub(crate) enum Dictionary {
    /// A string column (Parquet `BYTE_ARRAY`, UTF-8).
    Strings(Vec<String>),
    /// An unsigned integer column (Parquet `INT32`, unsigned 32-bit integer).
    U32(Vec<u32>),
}

impl Dictionary {
    fn len(&self) -> usize {
        match self {
            Dictionary::Strings(v) => v.len(),
            Dictionary::U32(v) => v.len(),
        }
    }

    /// The `PLAIN` encoding of the values (the dictionary page's content).
    fn plain(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Dictionary::Strings(v) => {
                for s in v {
                    // A name longer than 4 GiB cannot come from a log header.
                    let len = u32::try_from(s.len()).unwrap_or(u32::MAX);
                    out.extend_from_slice(&len.to_le_bytes());
                    out.extend_from_slice(s.as_bytes());
                }
            }
            Dictionary::U32(v) => {
                for x in v {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        out
    }

    /// The unencoded size of the value of `key` (a string's length; `None` for integers).
    fn unencoded(&self, key: u32) -> Option<i64> {
        match self {
            Dictionary::Strings(v) => Some(
                v.get(key as usize)
                    .map_or(0, |s| i64::try_from(s.len()).unwrap_or(i64::MAX)),
            ),
            Dictionary::U32(_) => None,
        }
    }

    /// The statistics of a chunk whose non-null rows have the keys `used` and `nulls` null rows.
    fn statistics(&self, used: &[bool], nulls: u64) -> Statistics {
        let keys = || used.iter().enumerate().filter(|(_, u)| **u).map(|(k, _)| k);
        match self {
            // Both sort unsigned (UTF-8 bytes, unsigned integers): no deprecated min/max fields.
            Dictionary::Strings(v) => {
                let values = || keys().filter_map(|k| v.get(k));
                let bytes = |s: Option<&String>| s.map(|s| ByteArray::from(s.as_str()));
                Statistics::byte_array(
                    bytes(values().min()),
                    bytes(values().max()),
                    None,
                    Some(nulls),
                    false,
                )
            }
            Dictionary::U32(v) => {
                let values = || keys().filter_map(|k| v.get(k).copied());
                // Parquet keeps an unsigned INT32 in the bits of an i32.
                let int = |x: Option<u32>| x.map(|x| i32::from_ne_bytes(x.to_ne_bytes()));
                Statistics::int32(
                    int(values().min()),
                    int(values().max()),
                    None,
                    Some(nulls),
                    false,
                )
            }
        }
    }
}

/// A column of the long form that is constant along each log column's run: its dictionary and
/// each log column's key (`None`: null).
#[derive(Debug, Clone)]
pub(crate) struct RunColumn {
    pub(crate) dictionary: Dictionary,
    pub(crate) keys: Vec<Option<u32>>,
}

impl RunColumn {
    /// The column of `items` (one per log column), the distinct values in order of appearance.
    pub(crate) fn strings<'a>(
        items: impl Iterator<Item = Option<&'a str>>,
    ) -> Result<Self, &'static str> {
        let mut distinct: Vec<String> = Vec::new();
        let mut index: std::collections::HashMap<&'a str, u32> = Default::default();
        let mut keys = Vec::new();
        for item in items {
            keys.push(match item {
                None => None,
                Some(s) => Some(match index.get(s) {
                    Some(&k) => k,
                    None => {
                        // Keys stay within i32, the key type of the Arrow dictionaries.
                        let k = u32::try_from(distinct.len())
                            .ok()
                            .filter(|&k| i32::try_from(k).is_ok())
                            .ok_or("too many distinct names")?;
                        distinct.push(s.to_owned());
                        index.insert(s, k);
                        k
                    }
                }),
            });
        }
        Ok(RunColumn {
            dictionary: Dictionary::Strings(distinct),
            keys,
        })
    }

    /// The column of `items` (one per log column), the distinct values in order of appearance.
    pub(crate) fn numbers(items: impl Iterator<Item = Option<u32>>) -> Self {
        let mut distinct: Vec<u32> = Vec::new();
        let mut keys = Vec::new();
        for item in items {
            keys.push(item.map(|x| match distinct.iter().position(|&d| d == x) {
                // Few distinct values (counter types, `#n`): a scan beats a map.
                Some(k) => u32::try_from(k).unwrap_or(u32::MAX),
                None => {
                    distinct.push(x);
                    u32::try_from(distinct.len() - 1).unwrap_or(u32::MAX)
                }
            }));
        }
        RunColumn {
            dictionary: Dictionary::U32(distinct),
            keys,
        }
    }
}

/// Appends `value` as an unsigned LEB128 varint.
pub(super) fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends an RLE run (of the RLE / bit-packing hybrid) of `count` times `value`, `width` bits.
pub(super) fn rle_run(out: &mut Vec<u8>, count: usize, value: u32, width: u8) {
    varint(out, (count as u64) << 1);
    let bytes = usize::from(width).div_ceil(8);
    out.extend_from_slice(value.to_le_bytes().get(..bytes).unwrap_or(&[]));
}

/// The length of the run of items equal to `first` at the start of `items`.
///
/// Compares 64 items at a time without an early exit within them, which the compiler turns into
/// a few vector instructions: the long runs of a log's columns (validity flags without a null,
/// statuses that do not change) cost about a cycle per eight items rather than a branch per item.
pub(super) fn run_length<T: Copy + PartialEq>(items: &[T], first: T) -> usize {
    let mut len = 0;
    for chunk in items.chunks_exact(64) {
        if chunk
            .iter()
            .fold(false, |differs, &x| differs | (x != first))
        {
            break;
        }
        len += 64;
    }
    let rest = items.get(len..).unwrap_or(&[]);
    len + rest.iter().position(|&x| x != first).unwrap_or(rest.len())
}

/// Runs of equal items merged: (value, count) pairs.
#[derive(Default)]
struct Runs(Vec<(u32, usize)>);

impl Runs {
    fn push(&mut self, value: u32, count: usize) {
        if count == 0 {
            return;
        }
        match self.0.last_mut() {
            Some((v, n)) if *v == value => *n += count,
            _ => self.0.push((value, count)),
        }
    }

    fn encode(&self, out: &mut Vec<u8>, width: u8) {
        for &(v, n) in &self.0 {
            rle_run(out, n, v, width);
        }
    }
}

/// The bits of the keys of a dictionary of `len` values (what the crate writes: 0 for one value).
fn key_width(len: usize) -> u8 {
    let max = len.saturating_sub(1) as u64;
    (u64::BITS - max.leading_zeros()) as u8
}

/// Compresses a page's bytes with the chunk's codec: none, Zstandard (the `zstd` crate, which the
/// `parquet` crate's codec uses) or `LZ4_RAW` (an LZ4 block of `lz4_flex`, as the `parquet` crate's
/// codec writes it).
struct Codec {
    compression: Compression,
    zstd: Option<(i32, zstd::bulk::Compressor<'static>)>,
}

/// The Zstandard contexts of finished chunks (with their levels), for the next ones: a row group
/// of a few hundred kilobytes has a dozen chunks, and a fresh context allocates and initialises
/// its tables (`ZSTD_createCCtx` and the page faults of its first use: about 2 % of the samples
/// of writing the benchmark log, `perf`). At most [`ZSTD_KEPT`] are kept.
static ZSTD_CONTEXTS: std::sync::Mutex<Vec<(i32, zstd::bulk::Compressor<'static>)>> =
    std::sync::Mutex::new(Vec::new());

/// The most Zstandard contexts kept in [`ZSTD_CONTEXTS`].
const ZSTD_KEPT: usize = 16;

impl Codec {
    fn new(compression: Compression) -> Result<Self, ParquetError> {
        let zstd = match compression {
            Compression::UNCOMPRESSED | Compression::LZ4_RAW => None,
            Compression::ZSTD(level) => {
                let level = level.compression_level();
                let kept = ZSTD_CONTEXTS.lock().ok().and_then(|mut kept| {
                    let at = kept.iter().position(|(l, _)| *l == level)?;
                    Some(kept.swap_remove(at))
                });
                Some(match kept {
                    Some(kept) => kept,
                    None => (
                        level,
                        zstd::bulk::Compressor::new(level)
                            .map_err(|e| ParquetError::External(Box::new(e)))?,
                    ),
                })
            }
            other => {
                return Err(ParquetError::NYI(format!(
                    "hand-written column chunks compressed with {other}"
                )))
            }
        };
        Ok(Codec { compression, zstd })
    }

    fn compress(&mut self, data: Vec<u8>) -> Result<Bytes, ParquetError> {
        match (&mut self.zstd, self.compression) {
            (Some((_, z)), _) => z
                .compress(&data)
                .map(Bytes::from)
                .map_err(|e| ParquetError::External(Box::new(e))),
            (None, Compression::LZ4_RAW) => Ok(lz4_flex::block::compress(&data).into()),
            (None, _) => Ok(data.into()),
        }
    }
}

impl Drop for Codec {
    /// Keeps the Zstandard context for the next chunk.
    fn drop(&mut self) {
        if let (Some(context), Ok(mut kept)) = (self.zstd.take(), ZSTD_CONTEXTS.lock()) {
            if kept.len() < ZSTD_KEPT {
                kept.push(context);
            }
        }
    }
}

/// A column chunk being written page by page: an optional dictionary page, then its data pages,
/// with the bookkeeping the chunk's metadata and offset index need (what the crate's column
/// writer keeps for the same pages).
pub(super) struct ChunkPages {
    codec: Codec,
    sink: TrackedWrite<Vec<u8>>,
    /// The encoding of the data pages' values.
    encoding: Encoding,
    dict_offset: Option<i64>,
    data_offset: Option<i64>,
    total_compressed: i64,
    total_uncompressed: i64,
    bytes_written: u64,
    rows: usize,
    locations: Vec<PageLocation>,
    unencoded_pages: Vec<i64>,
    unencoded_total: i64,
}

impl ChunkPages {
    /// A chunk compressed with `compression` whose data pages hold values of `encoding`, without
    /// a dictionary page.
    pub(super) fn new(compression: Compression, encoding: Encoding) -> Result<Self, ParquetError> {
        Ok(ChunkPages {
            codec: Codec::new(compression)?,
            sink: TrackedWrite::new(Vec::new()),
            encoding,
            dict_offset: None,
            data_offset: None,
            total_compressed: 0,
            total_uncompressed: 0,
            bytes_written: 0,
            rows: 0,
            locations: Vec::new(),
            unencoded_pages: Vec::new(),
            unencoded_total: 0,
        })
    }

    /// A chunk compressed with `compression` whose dictionary page holds the `len` values of
    /// `plain` (their `PLAIN` encoding) and whose data pages hold keys (`RLE_DICTIONARY`).
    fn with_dictionary(
        compression: Compression,
        plain: Vec<u8>,
        len: usize,
    ) -> Result<Self, ParquetError> {
        let mut chunk = ChunkPages::new(compression, Encoding::RLE_DICTIONARY)?;
        let plain_len = plain.len();
        let dict_page = Page::DictionaryPage {
            buf: chunk.codec.compress(plain)?,
            num_values: u32::try_from(len)
                .map_err(|_| ParquetError::General("dictionary too large".into()))?,
            encoding: Encoding::PLAIN,
            is_sorted: false,
        };
        let spec = SerializedPageWriter::new(&mut chunk.sink)
            .write_page(CompressedPage::new(dict_page, plain_len))?;
        chunk.dict_offset = Some(spec.offset as i64);
        chunk.total_compressed = spec.compressed_size as i64;
        chunk.total_uncompressed = spec.uncompressed_size as i64;
        chunk.bytes_written = spec.bytes_written;
        Ok(chunk)
    }

    /// Appends a (version 1) data page of `rows` rows: `buf` holds its definition levels, if
    /// any, and values; `unencoded` is the byte size of its strings.
    pub(super) fn page(
        &mut self,
        buf: Vec<u8>,
        rows: usize,
        unencoded: i64,
    ) -> Result<(), ParquetError> {
        let uncompressed = buf.len();
        let page = Page::DataPage {
            buf: self.codec.compress(buf)?,
            num_values: u32::try_from(rows)
                .map_err(|_| ParquetError::General("page too large".into()))?,
            encoding: self.encoding,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        let spec = SerializedPageWriter::new(&mut self.sink)
            .write_page(CompressedPage::new(page, uncompressed))?;
        self.data_offset.get_or_insert(spec.offset as i64);
        self.locations.push(PageLocation {
            offset: spec.offset as i64,
            compressed_page_size: i32::try_from(spec.compressed_size)
                .map_err(|_| ParquetError::General("page too large".into()))?,
            first_row_index: self.rows as i64,
        });
        self.unencoded_pages.push(unencoded);
        self.unencoded_total = self.unencoded_total.saturating_add(unencoded);
        self.total_compressed += spec.compressed_size as i64;
        self.total_uncompressed += spec.uncompressed_size as i64;
        self.bytes_written += spec.bytes_written;
        self.rows += rows;
        Ok(())
    }

    /// The chunk's bytes and metadata (column `descr`, chunk statistics `statistics`, if any;
    /// `strings`: a string column, whose unencoded sizes are kept).
    pub(super) fn finish(
        self,
        descr: &ColumnDescPtr,
        statistics: Option<Statistics>,
        strings: bool,
    ) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
        let data: Bytes = self.sink.into_inner()?.into();
        let pages_written = i32::try_from(self.locations.len())
            .map_err(|_| ParquetError::General("too many pages".into()))?;
        let mut stats = Vec::with_capacity(2);
        // RLE for the levels, as the crate's writer notes for every column.
        let mut encodings = vec![Encoding::RLE, self.encoding];
        if self.dict_offset.is_some() {
            stats.push(PageEncodingStats {
                page_type: PageType::DICTIONARY_PAGE,
                encoding: Encoding::PLAIN,
                count: 1,
            });
            encodings.push(Encoding::PLAIN);
        }
        if pages_written > 0 {
            stats.push(PageEncodingStats {
                page_type: PageType::DATA_PAGE,
                encoding: self.encoding,
                count: pages_written,
            });
        }
        let mut metadata = ColumnChunkMetaData::builder(descr.clone())
            .set_compression(self.codec.compression)
            .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
            .set_page_encoding_stats(stats)
            .set_total_compressed_size(self.total_compressed)
            .set_total_uncompressed_size(self.total_uncompressed)
            .set_num_values(self.rows as i64)
            // No page at all: offset 0, as the crate's writer sets it.
            .set_data_page_offset(self.data_offset.or(self.dict_offset).unwrap_or(0))
            .set_dictionary_page_offset(self.dict_offset);
        if let Some(statistics) = statistics {
            metadata = metadata
                .set_statistics(statistics)
                .set_unencoded_byte_array_data_bytes(strings.then_some(self.unencoded_total));
        }
        let close = ColumnCloseResult {
            bytes_written: self.bytes_written,
            rows_written: self.rows as u64,
            metadata: metadata.build()?,
            bloom_filter: None,
            column_index: None,
            offset_index: Some(OffsetIndexMetaData {
                page_locations: self.locations,
                unencoded_byte_array_data_bytes: strings.then_some(self.unencoded_pages),
            }),
        };
        Ok((data, close))
    }
}

/// The column chunk of `column` for a row group of `records` records of every log column (rows
/// grouped by log column, as the long form's batches are): its bytes and what
/// `SerializedRowGroupWriter::append_column` needs. `descr` is the chunk's Parquet column, `pages`
/// the most rows in a data page.
pub(crate) fn run_chunk(
    descr: &ColumnDescPtr,
    column: &RunColumn,
    records: usize,
    compression: Compression,
    pages: usize,
) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
    let rows = column.keys.len().saturating_mul(records);
    let runs = column.keys.iter().map(|&k| (k, records));
    runs_chunk(descr, &column.dictionary, runs, rows, compression, pages)
}

/// The chunk of a column of unsigned integers that vary by cell but are nearly constant along a
/// log column's run (`multi_count`, `status`), from its `values` and validity flags `valid` (of
/// the same length): a dictionary of its distinct values (in order of appearance) and RLE runs of
/// their keys and of the definition levels.
///
/// It replaces the crate's `PLAIN` writer, whose work grows with the rows (each value copied, a
/// definition level encoded per row, four bytes a row through Zstandard) where here it grows
/// with the runs, found by [`run_length`] (flags, then values, 64 at a time). `descr` is the
/// chunk's Parquet column, `pages` the most rows in a data page.
pub(crate) fn cell_runs_chunk(
    descr: &ColumnDescPtr,
    values: &[u32],
    valid: &[bool],
    compression: Compression,
    pages: usize,
) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
    same_length(descr, values.len(), valid.len())?;
    let mut distinct: Vec<u32> = Vec::new();
    let mut index: std::collections::HashMap<u32, u32> = Default::default();
    let mut runs: Vec<(Option<u32>, usize)> = Vec::new();
    let mut push = |key: Option<u32>, len: usize| match runs.last_mut() {
        Some((k, n)) if *k == key => *n += len,
        _ => runs.push((key, len)),
    };
    let mut row = 0;
    while let Some(&flag) = valid.get(row) {
        let len = run_length(valid.get(row..).unwrap_or(&[]), flag);
        if !flag {
            push(None, len);
        } else {
            let mut present = values.get(row..row + len).unwrap_or(&[]);
            while let Some(&v) = present.first() {
                let same = run_length(present, v);
                let key = match index.get(&v) {
                    Some(&k) => k,
                    None => {
                        let k = u32::try_from(distinct.len()).map_err(|_| {
                            ParquetError::General("too many distinct values".into())
                        })?;
                        distinct.push(v);
                        index.insert(v, k);
                        k
                    }
                };
                push(Some(key), same);
                present = present.get(same..).unwrap_or(&[]);
            }
        }
        row += len;
    }
    runs_chunk(
        descr,
        &Dictionary::U32(distinct),
        runs.into_iter(),
        values.len(),
        compression,
        pages,
    )
}

/// An error unless a column's values and validity flags are as many.
pub(super) fn same_length(
    descr: &ColumnDescPtr,
    values: usize,
    flags: usize,
) -> Result<(), ParquetError> {
    if values == flags {
        return Ok(());
    }
    Err(ParquetError::General(format!(
        "column {}: {values} values but {flags} validity flags",
        descr.name()
    )))
}

/// A dictionary-encoded chunk of `rows` rows given as runs of equal keys (`None`: null), in data
/// pages of at most `pages` rows.
fn runs_chunk(
    descr: &ColumnDescPtr,
    dictionary: &Dictionary,
    mut column_runs: impl Iterator<Item = (Option<u32>, usize)>,
    rows: usize,
    compression: Compression,
    pages: usize,
) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
    let width = key_width(dictionary.len());
    let nullable = descr.max_def_level() > 0;
    let page_rows = pages.max(1);
    let mut chunk = ChunkPages::with_dictionary(compression, dictionary.plain(), dictionary.len())?;

    let mut used = vec![false; dictionary.len()];
    let mut nulls = 0u64;
    // Walk the runs page by page.
    let mut current: Option<(Option<u32>, usize)> = column_runs.next();
    let mut first_row = 0usize;
    while first_row < rows {
        let in_page = page_rows.min(rows - first_row);
        let (mut levels, mut values) = (Runs::default(), Runs::default());
        let mut unencoded = 0i64;
        let mut left = in_page;
        while left > 0 {
            let Some((key, remaining)) = current.as_mut() else {
                break;
            };
            let take = (*remaining).min(left);
            match *key {
                Some(k) => {
                    levels.push(1, take);
                    values.push(k, take);
                    if let Some(u) = used.get_mut(k as usize) {
                        *u = true;
                    }
                    let each = dictionary.unencoded(k).unwrap_or(0);
                    unencoded = unencoded.saturating_add(each.saturating_mul(take as i64));
                }
                None => {
                    levels.push(0, take);
                    nulls += take as u64;
                }
            }
            *remaining -= take;
            left -= take;
            if *remaining == 0 {
                current = column_runs.next();
            }
        }
        let mut buf = Vec::new();
        if nullable {
            let mut encoded = Vec::new();
            levels.encode(&mut encoded, 1);
            let len = u32::try_from(encoded.len())
                .map_err(|_| ParquetError::General("levels too large".into()))?;
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(&encoded);
        }
        buf.push(width);
        values.encode(&mut buf, width);
        chunk.page(buf, in_page, unencoded)?;
        first_row += in_page;
    }
    let strings = matches!(dictionary, Dictionary::Strings(_));
    chunk.finish(descr, Some(dictionary.statistics(&used, nulls)), strings)
}

/// Appends `count` keys as one bit-packed run (of the RLE / bit-packing hybrid) of `width` bits
/// each (1 to 32), the last group of eight padded with zeros: the keys `start, start + 1, …`,
/// back to 0 after `cycle − 1` (`start` < `cycle`).
///
/// The packed keys repeat byte for byte after the fewest whole cycles whose bits fill whole bytes
/// (one cycle when `cycle × width` is a multiple of 8, at most eight): those are packed, then
/// copied (`time_chunk`'s keys are one cycle per log column, so packing every key cost 22 M
/// instructions of writing the 50 MB benchmark log, callgrind), and what is left of the last
/// period packed.
fn bit_packed(out: &mut Vec<u8>, start: u32, cycle: u32, count: usize, width: u8) {
    varint(out, ((count.div_ceil(8) as u64) << 1) | 1);
    let bits = usize::from(width);
    let padded = count.div_ceil(8) * bits;
    out.reserve(padded + 8);
    let begin = out.len();
    let cycle_keys = (cycle as usize).max(1);
    let period = cycle_keys * (8 >> (cycle_keys * bits).trailing_zeros().min(3));
    pack_keys(out, start, cycle, count.min(period), width);
    if count > period {
        let whole = count / period;
        let target = whole * (period * bits / 8);
        // Doubling what is there: a few copies however many periods.
        while out.len() - begin < target {
            let have = out.len() - begin;
            out.extend_from_within(begin..begin + have.min(target - have));
        }
        pack_keys(out, start, cycle, count - whole * period, width);
    }
    // Pad to whole groups of eight values (`width` bytes each).
    out.resize(begin + padded.max(out.len() - begin), 0);
}

/// Appends `count` keys `start, start + 1, …` (back to 0 after `cycle − 1`) of `width` bits,
/// least significant bit first, from a byte boundary; the last byte is padded with zeros.
///
/// Written as a plain loop flushing 32 bits at a time: through iterator adapters and a byte at a
/// time it cost about 48 instructions a key (callgrind), as much as the crate's delta encoder it
/// replaced.
fn pack_keys(out: &mut Vec<u8>, start: u32, cycle: u32, count: usize, width: u8) {
    let width32 = u32::from(width);
    let (mut acc, mut bits) = (0u64, 0u32);
    let mut key = start;
    for _ in 0..count {
        acc |= u64::from(key) << bits;
        bits += width32;
        if bits >= 32 {
            out.extend_from_slice(&(acc as u32).to_le_bytes());
            acc >>= 32;
            bits -= 32;
        }
        key += 1;
        if key >= cycle {
            key = 0;
        }
    }
    let tail = acc.to_le_bytes();
    out.extend_from_slice(tail.get(..bits.div_ceil(8) as usize).unwrap_or(&[]));
}

/// The `time` column's chunk for a row group of `times.len()` records of `columns` log columns
/// (rows grouped by log column: the records' times once per log column, in the records' order).
///
/// The records' times are the dictionary (as they come: a repeated time is repeated there too,
/// which Parquet allows) and a row's key is its record's place: the data pages are bit-packed runs
/// of `0, 1, … records − 1` once per log column. This replaces the crate's delta encoder over every
/// row (and the column of every row's time it needs), which was the largest single cost among the
/// cell columns (docs/benchmarks.md). The column is required (no levels); `descr` is its Parquet
/// column (`INT64`), `pages` the most rows in a data page.
pub(crate) fn time_chunk(
    descr: &ColumnDescPtr,
    times: &[i64],
    columns: usize,
    compression: Compression,
    pages: usize,
) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
    let records = times.len();
    let n = u32::try_from(records)
        .map_err(|_| ParquetError::General("too many records in a row group".into()))?;
    let width = key_width(records);
    let rows = records.saturating_mul(columns);
    let page_rows = pages.max(1);
    let mut plain = Vec::with_capacity(records * 8);
    for t in times {
        plain.extend_from_slice(&t.to_le_bytes());
    }
    let mut chunk = ChunkPages::with_dictionary(compression, plain, records)?;
    let mut first_row = 0usize;
    while first_row < rows {
        let in_page = page_rows.min(rows - first_row);
        let mut buf = Vec::with_capacity(in_page * usize::from(width) / 8 + 16);
        buf.push(width);
        if width == 0 {
            rle_run(&mut buf, in_page, 0, 0);
        } else {
            // Keys cycle through the records, one cycle per log column.
            let start = u32::try_from(first_row % records).unwrap_or(0);
            bit_packed(&mut buf, start, n, in_page, width);
        }
        chunk.page(buf, in_page, 0)?;
        first_row += in_page;
    }
    let statistics = Statistics::int64(
        times.iter().min().copied(),
        times.iter().max().copied(),
        None,
        Some(0),
        false,
    );
    chunk.finish(descr, Some(statistics), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rle_runs_and_widths() {
        let mut out = Vec::new();
        rle_run(&mut out, 300, 5, 3);
        // 300 << 1 = 600 = 0b100_1011000 → 0xD8 0x04, then the value in one byte.
        assert_eq!(out, [0xD8, 0x04, 5]);
        let mut out = Vec::new();
        rle_run(&mut out, 2, 0x1234, 9);
        assert_eq!(out, [4, 0x34, 0x12]);
        let mut out = Vec::new();
        rle_run(&mut out, 7, 0, 0);
        assert_eq!(out, [14]);
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 256, 257].map(key_width),
            [0, 0, 1, 2, 2, 3, 8, 9]
        );
    }

    #[test]
    fn bit_packed_runs() {
        // Eight keys of 3 bits: 0..8 packed LSB first into 3 bytes, one group.
        let mut out = Vec::new();
        bit_packed(&mut out, 0, 8, 8, 3);
        assert_eq!(out, [0x03, 0b1000_1000, 0b1100_0110, 0b1111_1010]);
        // Three keys of 12 bits, padded to a whole group of eight (12 bytes).
        let mut out = Vec::new();
        bit_packed(&mut out, 0xabe, 0xac0, 3, 12);
        assert_eq!(
            out,
            [0x03, 0xbe, 0xfa, 0xab, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0]
        );
        // Keys 2, 0, 1, 2, 0 … of 2 bits across two groups of eight (two bytes each).
        let mut out = Vec::new();
        bit_packed(&mut out, 2, 3, 10, 2);
        assert_eq!(out, [0x05, 0b1001_0010, 0b0010_0100, 0b0000_1001, 0]);
    }

    #[test]
    fn runs_merge_equal_neighbours() {
        let mut r = Runs::default();
        r.push(1, 3);
        r.push(1, 2);
        r.push(2, 0);
        r.push(0, 4);
        assert_eq!(r.0, [(1, 5), (0, 4)]);
    }

    use std::sync::Arc;

    use arrow_array::{Array, StringArray, UInt32Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::basic::ZstdLevel;
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use proptest::prelude::*;

    /// A file of one row group with the string column `run` (`s`, nullable) and the number column
    /// `numbers` (`n`, nullable), written by [`run_chunk`] with pages of at most `page_rows` rows.
    fn file_of(
        strings: &RunColumn,
        numbers: &RunColumn,
        records: usize,
        page_rows: usize,
    ) -> Bytes {
        let schema = Arc::new(
            parse_message_type(
                "message m { optional binary s (STRING); optional int32 n (INTEGER(32,false)); }",
            )
            .unwrap(),
        );
        let props = Arc::new(WriterProperties::builder().build());
        let mut w = SerializedFileWriter::new(Vec::new(), schema, props).unwrap();
        let columns = w.schema_descr().columns().to_vec();
        let zstd = Compression::ZSTD(ZstdLevel::try_new(1).unwrap());
        let mut group = w.next_row_group().unwrap();
        for (descr, run) in columns.iter().zip([strings, numbers]) {
            let (data, close) = run_chunk(descr, run, records, zstd, page_rows).unwrap();
            group.append_column(&data, close).unwrap();
        }
        group.close().unwrap();
        w.into_inner().unwrap().into()
    }

    /// A file of one row group of the one column of `schema`, whose chunk `chunk` writes
    /// (Zstandard level 1).
    fn one_chunk_file(
        schema: &str,
        chunk: impl FnOnce(&ColumnDescPtr, Compression) -> (Bytes, ColumnCloseResult),
    ) -> Bytes {
        let schema = Arc::new(parse_message_type(schema).unwrap());
        let props = Arc::new(WriterProperties::builder().build());
        let mut w = SerializedFileWriter::new(Vec::new(), schema, props).unwrap();
        let descr = w.schema_descr().column(0);
        let zstd = Compression::ZSTD(ZstdLevel::try_new(1).unwrap());
        let mut group = w.next_row_group().unwrap();
        let (data, close) = chunk(&descr, zstd);
        group.append_column(&data, close).unwrap();
        group.close().unwrap();
        w.into_inner().unwrap().into()
    }

    fn value(column: &RunColumn, c: usize) -> Option<String> {
        let k = column.keys[c]? as usize;
        Some(match &column.dictionary {
            Dictionary::Strings(v) => v[k].clone(),
            Dictionary::U32(v) => v[k].to_string(),
        })
    }

    /// The bit-packed run of the keys `start, start + 1, …` (back to 0 at `cycle`), bit by bit.
    fn bit_packed_bit_by_bit(start: u32, cycle: u32, count: usize, width: u8) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, ((count.div_ceil(8) as u64) << 1) | 1);
        let mut bytes = vec![0u8; count.div_ceil(8) * usize::from(width)];
        for i in 0..count {
            let key = (u64::from(start) + i as u64) % u64::from(cycle);
            for b in 0..usize::from(width) {
                let at = i * usize::from(width) + b;
                bytes[at / 8] |= (((key >> b) & 1) as u8) << (at % 8);
            }
        }
        out.extend_from_slice(&bytes);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Packing a period and copying it gives the keys packed one by one.
        #[test]
        fn bit_packed_keys_are_the_keys_bit_by_bit(
            cycle in 1u32..600,
            start in any::<u32>(),
            count in 0usize..5000,
            extra_width in 0u8..3,
        ) {
            let start = start % cycle;
            let width = key_width(cycle as usize).max(1) + extra_width;
            let mut out = Vec::new();
            bit_packed(&mut out, start, cycle, count, width);
            prop_assert_eq!(out, bit_packed_bit_by_bit(start, cycle, count, width));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The `parquet` crate's reader gives back every row of hand-written chunks, nulls
        /// included, across page boundaries, with the chunk's statistics.
        #[test]
        fn the_crates_reader_reads_run_chunks_back(
            names in proptest::collection::vec(proptest::option::of("[a-c\\u{e9}]{0,3}"), 0..12),
            numbers in proptest::collection::vec(proptest::option::of(prop_oneof![0u32..3, any::<u32>()]), 12),
            records in 0usize..40,
            page_rows in 1usize..60,
        ) {
            let columns = names.len();
            let strings = RunColumn::strings(names.iter().map(|n| n.as_deref())).unwrap();
            let numbers = RunColumn::numbers(numbers.into_iter().take(columns));
            let file = file_of(&strings, &numbers, records, page_rows);
            let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
            let meta = reader.metadata().clone();
            let mut got_s = Vec::new();
            let mut got_n = Vec::new();
            for batch in reader.build().unwrap() {
                let batch = batch.unwrap();
                let s = batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
                let n = batch.column(1).as_any().downcast_ref::<UInt32Array>().unwrap();
                got_s.extend((0..s.len()).map(|i| s.is_valid(i).then(|| s.value(i).to_owned())));
                got_n.extend((0..n.len()).map(|i| n.is_valid(i).then(|| n.value(i).to_string())));
            }
            let rows = columns * records;
            let want_s: Vec<Option<String>> = (0..rows).map(|i| value(&strings, i / records)).collect();
            let want_n: Vec<Option<String>> = (0..rows).map(|i| value(&numbers, i / records)).collect();
            prop_assert_eq!(&got_s, &want_s);
            prop_assert_eq!(&got_n, &want_n);

            let group = meta.row_groups().first().unwrap();
            prop_assert_eq!(group.num_rows() as usize, rows);
            let s_stats = group.column(0).statistics().unwrap();
            let present: Vec<&String> = want_s.iter().flatten().collect();
            prop_assert_eq!(s_stats.null_count_opt(), Some((rows - present.len()) as u64));
            let (min, max) = match s_stats {
                Statistics::ByteArray(v) => (
                    v.min_opt().map(|b| b.as_utf8().unwrap().to_owned()),
                    v.max_opt().map(|b| b.as_utf8().unwrap().to_owned()),
                ),
                other => panic!("statistics {other:?}"),
            };
            prop_assert_eq!(min.as_ref(), present.iter().min().copied());
            prop_assert_eq!(max.as_ref(), present.iter().max().copied());
            let n_stats = group.column(1).statistics().unwrap();
            let present: Vec<u32> = want_n.iter().flatten().map(|v| v.parse().unwrap()).collect();
            prop_assert_eq!(n_stats.null_count_opt(), Some((rows - present.len()) as u64));
            let as_u32 = |x: Option<&i32>| x.map(|x| u32::from_ne_bytes(x.to_ne_bytes()));
            let (min, max) = match n_stats {
                Statistics::Int32(v) => (as_u32(v.min_opt()), as_u32(v.max_opt())),
                other => panic!("statistics {other:?}"),
            };
            prop_assert_eq!(min, present.iter().min().copied());
            prop_assert_eq!(max, present.iter().max().copied());
        }

        /// The `parquet` crate's reader gives back every row of a hand-written `time` chunk
        /// (the records' times once per log column, repeated and unordered times included)
        /// across page boundaries, with the chunk's statistics; DuckDB reads the same chunks in
        /// the CLI's tests.
        #[test]
        fn the_crates_reader_reads_time_chunks_back(
            times in proptest::collection::vec(prop_oneof![0i64..4, any::<i64>()], 0..300),
            columns in 0usize..5,
            page_rows in 1usize..80,
        ) {
            let file = one_chunk_file(
                "message m { required int64 t (TIMESTAMP(MICROS,true)); }",
                |descr, zstd| time_chunk(descr, &times, columns, zstd, page_rows).unwrap(),
            );
            let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
            let meta = reader.metadata().clone();
            let mut got = Vec::new();
            for batch in reader.build().unwrap() {
                let batch = batch.unwrap();
                let t = batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<arrow_array::TimestampMicrosecondArray>()
                    .unwrap();
                prop_assert_eq!(t.null_count(), 0);
                got.extend(t.values().iter().copied());
            }
            let want: Vec<i64> = (0..columns).flat_map(|_| times.iter().copied()).collect();
            prop_assert_eq!(&got, &want);

            let group = meta.row_groups().first().unwrap();
            prop_assert_eq!(group.num_rows() as usize, want.len());
            let pages = group.column(0).page_encoding_stats().unwrap();
            prop_assert_eq!(
                pages.iter().find(|p| p.page_type == PageType::DATA_PAGE).map_or(0, |p| p.count) as usize,
                want.len().div_ceil(page_rows)
            );
            match group.column(0).statistics().unwrap() {
                Statistics::Int64(v) => {
                    prop_assert_eq!(v.null_count_opt(), Some(0));
                    prop_assert_eq!(v.min_opt(), times.iter().min());
                    prop_assert_eq!(v.max_opt(), times.iter().max());
                }
                other => panic!("statistics {other:?}"),
            }
        }

        /// The crate's reader gives back every row of a hand-written chunk of per-cell values
        /// (`multi_count`, `status`): runs, nulls and page boundaries included, with statistics.
        #[test]
        fn the_crates_reader_reads_cell_run_chunks_back(
            cells in prop_oneof![
                proptest::collection::vec(
                    proptest::option::of(prop_oneof![4 => 0u32..3, 1 => any::<u32>()]),
                    0..300,
                ),
                // Long runs, past the 64 items compared at a time.
                proptest::collection::vec(
                    (proptest::option::of(prop_oneof![0u32..3, any::<u32>()]), 1usize..200),
                    0..8,
                )
                .prop_map(|runs| {
                    runs.into_iter().flat_map(|(v, n)| std::iter::repeat_n(v, n)).collect()
                }),
            ],
            page_rows in prop_oneof![1usize..80, 100usize..1000],
        ) {
            // Null cells hold any value: the columns keep what an earlier row group left there.
            let values: Vec<u32> = cells.iter().enumerate().map(|(i, c)| c.unwrap_or(i as u32)).collect();
            let valid: Vec<bool> = cells.iter().map(Option::is_some).collect();
            let file = one_chunk_file(
                "message m { optional int32 n (INTEGER(32,false)); }",
                |descr, zstd| cell_runs_chunk(descr, &values, &valid, zstd, page_rows).unwrap(),
            );
            let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
            let meta = reader.metadata().clone();
            let mut got = Vec::new();
            for batch in reader.build().unwrap() {
                let batch = batch.unwrap();
                let n = batch.column(0).as_any().downcast_ref::<UInt32Array>().unwrap();
                got.extend((0..n.len()).map(|i| n.is_valid(i).then(|| n.value(i))));
            }
            prop_assert_eq!(&got, &cells);
            let group = meta.row_groups().first().unwrap();
            prop_assert_eq!(group.num_rows() as usize, cells.len());
            let present: Vec<u32> = cells.iter().flatten().copied().collect();
            let stats = group.column(0).statistics().unwrap();
            prop_assert_eq!(stats.null_count_opt(), Some((cells.len() - present.len()) as u64));
            let as_u32 = |x: Option<&i32>| x.map(|x| u32::from_ne_bytes(x.to_ne_bytes()));
            match stats {
                Statistics::Int32(v) => {
                    prop_assert_eq!(as_u32(v.min_opt()), present.iter().min().copied());
                    prop_assert_eq!(as_u32(v.max_opt()), present.iter().max().copied());
                }
                other => panic!("statistics {other:?}"),
            }
        }
    }
}
