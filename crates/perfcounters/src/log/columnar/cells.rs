//! Parquet column chunks of the long form's cell columns `value` (`DOUBLE`, `BYTE_STREAM_SPLIT`
//! or `PLAIN`) and `raw_first`, `raw_second` (`INT64`, `DELTA_BINARY_PACKED`), written by hand
//! from the values and validity flags the records were laid into.
//!
//! The `parquet` crate's Arrow writer spent most of the encoder threads' time on these three
//! columns (docs/benchmarks.md): a definition level per row as an `i16`, the indices of the non-null
//! rows, the levels encoded one by one, the values copied into its encoder and, for the deltas,
//! packed a value at a time through its bit writer. Here a page's definition levels are the runs
//! of the validity flags (64 flags compared at a time: most logs have no null cell), the values
//! are copied a run of valid rows at a time, and the deltas are packed in a plain loop. The pages
//! are what the crate writes for such a column: version 1 data pages of at most `page_rows` rows,
//! levels of one bit (RLE / bit-packing hybrid, with a four-byte length), the values
//! `BYTE_STREAM_SPLIT`, `PLAIN` or `DELTA_BINARY_PACKED` with the crate's block layout, compressed as a whole, and the chunk's
//! metadata and offset index as the crate's writer makes them without statistics (the chunk
//! bookkeeping is [`ChunkPages`]'s, shared with the run columns).

use std::ops::Range;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::schema::types::ColumnDescPtr;

use super::runs::{rle_run, run_length, same_length, varint, ChunkPages};

/// The values of a `DELTA_BINARY_PACKED` block, as the `parquet` crate writes `INT64` columns.
const DELTA_BLOCK: usize = 256;
/// The miniblocks of a block, each with its own bit width.
const DELTA_MINIBLOCKS: usize = 4;
/// The values of a miniblock.
const DELTA_MINIBLOCK: usize = DELTA_BLOCK / DELTA_MINIBLOCKS;
// [`pack_miniblock`] fills whole 64-bit words: 64 values of any width. (Blocks of 128 deltas in
// miniblocks of 32, as the crate writes `INT32`, made the 200 MB benchmark log's file larger:
// 9,250,212 bytes against 9,079,361.)
const _: () = assert!(DELTA_MINIBLOCK == 64);

/// The fewest equal levels written as an RLE run rather than bit-packed (the crate's choice).
const LEVEL_RUN: usize = 8;

/// The `value` column's chunk: the non-null `values` (`valid` flags which rows are not null;
/// the two of the same length) in [`double_encoding`], in data pages of at most `page_rows` rows.
/// `descr` is the Parquet column (`DOUBLE`).
pub(crate) fn double_chunk(
    descr: &ColumnDescPtr,
    values: &[f64],
    valid: &[bool],
    compression: Compression,
    page_rows: usize,
) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
    same_length(descr, values.len(), valid.len())?;
    let encoding = double_encoding(values, valid);
    let mut gathered = Vec::new();
    cell_chunk(
        descr,
        valid,
        compression,
        page_rows,
        encoding,
        |out, present| {
            // The page's values as one slice, so that the loops below run over a slice: over the
            // ranges' chained iterators they were not vectorized, and splitting took 5.7 % of the
            // CPU of converting the 200 MB `.blg`.
            let page = page_values(values, present, &mut gathered);
            if page.is_empty() {
                return;
            }
            let start = out.len();
            out.resize(start + page.len() * 8, 0);
            let bytes = out.get_mut(start..).unwrap_or(&mut []);
            if encoding == Encoding::PLAIN {
                for (dst, v) in bytes.chunks_exact_mut(8).zip(page) {
                    dst.copy_from_slice(&v.to_le_bytes());
                }
                return;
            }
            // One stream at a time: a page's values (a few hundred kilobytes) stay in cache.
            for (b, stream) in bytes.chunks_exact_mut(page.len()).enumerate() {
                let shift = 8 * b;
                for (dst, v) in stream.iter_mut().zip(page) {
                    *dst = (v.to_bits() >> shift) as u8;
                }
            }
        },
    )
}

/// The encoding of a chunk of `value`: `PLAIN` when at least a quarter of its non-null values
/// ([`REPEATS_FOR_PLAIN`]) are bit for bit the non-null value before them, else
/// `BYTE_STREAM_SPLIT`.
///
/// `BYTE_STREAM_SPLIT` stores a page's `n` values as eight streams of `n` bytes: the first (least
/// significant) byte of every value, then the second, and so on. The sign, exponent and high
/// mantissa bytes of a counter's values repeat from row to row, so their streams compress to
/// little, where the same doubles `PLAIN` (eight bytes each, interleaved) hardly compress. But a
/// counter that holds still (a working set, a count of handles) repeats whole values, which the
/// compressor finds as eight-byte matches in `PLAIN` and cannot find in the split streams, where
/// each is eight single bytes apart: on the whole-run integer log (two values in three repeated)
/// the column is 3.6 MB `PLAIN` against 6.0 MB split, on the float log (no repeats) 44.4 MB against
/// 41.8, on the benchmarks' `.blg` (13 % repeated) 3.40 against 3.28 (Zstandard level 1,
/// docs/benchmarks.md). The whole chunk takes one encoding, so that every reader that reads either
/// reads it.
pub(crate) fn double_encoding(values: &[f64], valid: &[bool]) -> Encoding {
    let mut previous: Option<u64> = None;
    let (mut present, mut repeats) = (0usize, 0usize);
    for (v, _) in values.iter().zip(valid).filter(|(_, &ok)| ok) {
        let bits = v.to_bits();
        repeats += usize::from(previous == Some(bits));
        present += 1;
        previous = Some(bits);
    }
    if repeats * REPEATS_FOR_PLAIN.1 >= present * REPEATS_FOR_PLAIN.0 && repeats > 0 {
        Encoding::PLAIN
    } else {
        Encoding::BYTE_STREAM_SPLIT
    }
}

/// The share of a chunk's values repeating the one before (numerator, denominator) from which
/// [`double_encoding`] chooses `PLAIN`.
const REPEATS_FOR_PLAIN: (usize, usize) = (1, 4);

/// The chunk of a raw-sample column (`raw_first`, `raw_second`): the non-null `values`
/// (`valid` flags which rows are not null; the two of the same length) `DELTA_BINARY_PACKED`
/// (one delta stream per page), in data pages of at most `page_rows` rows. `descr` is the Parquet
/// column (`INT64`).
pub(crate) fn delta_chunk(
    descr: &ColumnDescPtr,
    values: &[i64],
    valid: &[bool],
    compression: Compression,
    page_rows: usize,
) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
    same_length(descr, values.len(), valid.len())?;
    let mut gathered = Vec::new();
    cell_chunk(
        descr,
        valid,
        compression,
        page_rows,
        Encoding::DELTA_BINARY_PACKED,
        |out, present| delta_binary_packed(out, page_values(values, present, &mut gathered)),
    )
}

/// The values of a page's valid rows (`present`: ranges of rows, in order) as one slice:
/// `values`' own when one range holds them, else copied into `gathered`.
fn page_values<'a, T: Copy>(
    values: &'a [T],
    present: &[Range<usize>],
    gathered: &'a mut Vec<T>,
) -> &'a [T] {
    if let [one] = present {
        return values.get(one.clone()).unwrap_or(&[]);
    }
    gathered.clear();
    for range in present {
        gathered.extend_from_slice(values.get(range.clone()).unwrap_or(&[]));
    }
    gathered
}

/// A chunk of `valid.len()` rows in data pages of at most `page_rows` rows, each with the
/// definition levels of its rows' flags (when the column is nullable) and then what `values`
/// appends for its valid rows (given as ranges of rows, in order) in `encoding`.
fn cell_chunk(
    descr: &ColumnDescPtr,
    valid: &[bool],
    compression: Compression,
    page_rows: usize,
    encoding: Encoding,
    mut values: impl FnMut(&mut Vec<u8>, &[Range<usize>]),
) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
    let nullable = descr.max_def_level() > 0;
    let page_rows = page_rows.max(1);
    let mut chunk = ChunkPages::new(compression, encoding)?;
    let mut runs: Vec<(bool, usize)> = Vec::new();
    let mut present: Vec<Range<usize>> = Vec::new();
    for (page, flags) in valid.chunks(page_rows).enumerate() {
        let first_row = page * page_rows;
        flag_runs(flags, &mut runs);
        present.clear();
        let mut row = first_row;
        for &(flag, len) in &runs {
            if flag {
                present.push(row..row + len);
            }
            row += len;
        }
        let mut buf = Vec::with_capacity(flags.len() * 8 + 64);
        if nullable {
            buf.extend_from_slice(&[0; 4]);
            definition_levels(&mut buf, flags, &runs);
            let len = u32::try_from(buf.len() - 4)
                .map_err(|_| ParquetError::General("levels too large".into()))?;
            if let Some(prefix) = buf.get_mut(..4) {
                prefix.copy_from_slice(&len.to_le_bytes());
            }
        } else if runs.iter().any(|&(flag, _)| !flag) {
            return Err(ParquetError::General(format!(
                "column {}: a null in a required column",
                descr.name()
            )));
        }
        values(&mut buf, &present);
        chunk.page(buf, flags.len(), 0)?;
    }
    chunk.finish(descr, None, false)
}

/// The runs of equal flags of `flags` into `runs` (cleared first), as (flag, length) pairs.
fn flag_runs(flags: &[bool], runs: &mut Vec<(bool, usize)>) {
    runs.clear();
    let mut rest = flags;
    while let Some(&flag) = rest.first() {
        let len = run_length(rest, flag);
        runs.push((flag, len));
        rest = rest.get(len..).unwrap_or(&[]);
    }
}

/// Appends the definition levels (0 or 1, one bit) of a page's `flags`, whose runs are `runs`,
/// in the RLE / bit-packing hybrid: runs of at least [`LEVEL_RUN`] equal flags (and a last run
/// not after bit-packed flags) as RLE runs, the flags between them bit-packed in groups of eight
/// (a bit-packed stretch is extended to a whole group before a run, and the last one padded with
/// zeros).
fn definition_levels(out: &mut Vec<u8>, flags: &[bool], runs: &[(bool, usize)]) {
    let mut row = 0;
    let mut packed_from: Option<usize> = None;
    for &(flag, len) in runs {
        match packed_from {
            // The last run is an RLE run however short (as the crate writes a page of one level).
            None if len >= LEVEL_RUN || row + len == flags.len() => {
                rle_run(out, len, u32::from(flag), 1)
            }
            None => packed_from = Some(row),
            Some(from) => {
                // The flags of this run that complete the bit-packed stretch's last group.
                let fill = (8 - (row - from) % 8) % 8;
                if len >= fill + LEVEL_RUN {
                    bit_packed_flags(out, flags.get(from..row + fill).unwrap_or(&[]));
                    rle_run(out, len - fill, u32::from(flag), 1);
                    packed_from = None;
                }
            }
        }
        row += len;
    }
    if let Some(from) = packed_from {
        bit_packed_flags(out, flags.get(from..).unwrap_or(&[]));
    }
}

/// Appends `flags` as one bit-packed run of one-bit values, the last group of eight padded with
/// zeros.
fn bit_packed_flags(out: &mut Vec<u8>, flags: &[bool]) {
    varint(out, ((flags.len().div_ceil(8) as u64) << 1) | 1);
    for group in flags.chunks(8) {
        let byte = group
            .iter()
            .enumerate()
            .fold(0u8, |b, (i, &f)| b | (u8::from(f) << i));
        out.push(byte);
    }
}

/// The zigzag form of `v` (0, −1, 1, −2 … as 0, 1, 2, 3 …).
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Appends `values` `DELTA_BINARY_PACKED` as the `parquet` crate writes `INT64`: a header (block
/// size 256, 4 miniblocks, the number of values, the first value), then per block of 256 deltas
/// (wrapping differences of neighbours) the smallest delta, the four miniblocks' bit widths and
/// each miniblock's deltas minus the smallest, bit-packed; in the last block, a miniblock
/// partly filled is padded with zeros, and the miniblocks after the last value have width 0 and
/// no bytes.
fn delta_binary_packed(out: &mut Vec<u8>, values: &[i64]) {
    varint(out, DELTA_BLOCK as u64);
    varint(out, DELTA_MINIBLOCKS as u64);
    varint(out, values.len() as u64);
    let Some((&first, rest)) = values.split_first() else {
        varint(out, 0);
        return;
    };
    varint(out, zigzag(first));
    let mut deltas = [0i64; DELTA_BLOCK];
    for (block, previous) in rest.chunks(DELTA_BLOCK).zip(values.chunks(DELTA_BLOCK)) {
        for ((d, &v), &p) in deltas.iter_mut().zip(block).zip(previous) {
            *d = v.wrapping_sub(p);
        }
        let (used, padding) = deltas.split_at_mut(block.len().min(DELTA_BLOCK));
        let min = used.iter().copied().min().unwrap_or(0);
        // Past the last value the deltas are the smallest, which packs as zeros.
        padding.fill(min);
        varint(out, zigzag(min));
        let widths_at = out.len();
        out.extend_from_slice(&[0; DELTA_MINIBLOCKS]);
        let miniblocks = block.len().div_ceil(DELTA_MINIBLOCK);
        for (m, mini) in deltas
            .chunks_exact(DELTA_MINIBLOCK)
            .take(miniblocks)
            .enumerate()
        {
            let max = mini.iter().copied().max().unwrap_or(min);
            let width = u64::BITS - (max.wrapping_sub(min) as u64).leading_zeros();
            if let Some(w) = out.get_mut(widths_at + m) {
                *w = width as u8;
            }
            pack_miniblock(out, mini, min, width);
        }
    }
}

/// Appends the [`DELTA_MINIBLOCK`] values `deltas − min` in `width` bits each (0 to 64), least
/// significant bit first: `width` 64-bit words.
fn pack_miniblock(out: &mut Vec<u8>, deltas: &[i64], min: i64, width: u32) {
    if width == 0 {
        return;
    }
    let mut words = [0u64; DELTA_MINIBLOCK];
    let (mut acc, mut bits, mut word) = (0u64, 0u32, 0usize);
    for &d in deltas.iter().take(DELTA_MINIBLOCK) {
        let x = d.wrapping_sub(min) as u64;
        acc |= x << bits;
        bits += width;
        if bits >= 64 {
            if let Some(w) = words.get_mut(word) {
                *w = acc;
            }
            word += 1;
            bits -= 64;
            // The bits of `x` that did not fit (none when the word ended with it).
            acc = x.checked_shr(width - bits).unwrap_or(0);
        }
    }
    let start = out.len();
    out.resize(start + 8 * width as usize, 0);
    let bytes = out.get_mut(start..).unwrap_or(&mut []);
    for (dst, w) in bytes.chunks_exact_mut(8).zip(&words) {
        dst.copy_from_slice(&w.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;

    use arrow_array::{Array, Float64Array, Int64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{EncodingMask, PageType};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use proptest::prelude::*;

    const SCHEMA: &str = "message m { optional double v; optional int64 a; optional int64 b; }";

    /// A file of one row group of the columns `v` (`values`), `a` (`first`) and `b`
    /// (`second`), each with the nulls of `valid`, written by [`double_chunk`] and
    /// [`delta_chunk`] with pages of at most `page_rows` rows.
    fn file_of(
        values: &[f64],
        first: &[i64],
        second: &[i64],
        valid: &[bool],
        page_rows: usize,
    ) -> Bytes {
        let schema = Arc::new(parse_message_type(SCHEMA).unwrap());
        let props = Arc::new(WriterProperties::builder().build());
        let mut w = SerializedFileWriter::new(Vec::new(), schema, props).unwrap();
        let columns = w.schema_descr().columns().to_vec();
        let mut group = w.next_row_group().unwrap();
        let lz4 = Compression::LZ4_RAW;
        let chunks = [
            double_chunk(&columns[0], values, valid, lz4, page_rows).unwrap(),
            delta_chunk(&columns[1], first, valid, lz4, page_rows).unwrap(),
            delta_chunk(&columns[2], second, valid, lz4, page_rows).unwrap(),
        ];
        for (data, close) in chunks {
            group.append_column(&data, close).unwrap();
        }
        group.close().unwrap();
        w.into_inner().unwrap().into()
    }

    /// The same columns written by the crate's Arrow writer, as the log writer configured it for
    /// these columns (no dictionary, no statistics, `LZ4_RAW`, the doubles in the encoding
    /// [`double_encoding`] chooses, the deltas `DELTA_BINARY_PACKED`), its pages cut at exactly
    /// `page_rows` rows.
    fn crate_file_of(
        values: &[f64],
        first: &[i64],
        second: &[i64],
        valid: &[bool],
        page_rows: usize,
    ) -> Bytes {
        let nulls = || Some(arrow_buffer::NullBuffer::from(valid));
        // Nullable columns, as in the log's schema.
        let batch = arrow_array::RecordBatch::try_from_iter_with_nullable([
            (
                "v",
                Arc::new(Float64Array::new(values.to_vec().into(), nulls())) as _,
                true,
            ),
            (
                "a",
                Arc::new(Int64Array::new(first.to_vec().into(), nulls())) as _,
                true,
            ),
            (
                "b",
                Arc::new(Int64Array::new(second.to_vec().into(), nulls())) as _,
                true,
            ),
        ])
        .unwrap();
        let mut props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::None)
            .set_compression(Compression::LZ4_RAW)
            .set_write_batch_size(1)
            .set_data_page_row_count_limit(page_rows);
        for name in ["a", "b"] {
            props = props.set_column_encoding(name.into(), Encoding::DELTA_BINARY_PACKED);
        }
        props = props.set_column_encoding("v".into(), double_encoding(values, valid));
        let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props.build())).unwrap();
        w.write(&batch).unwrap();
        w.into_inner().unwrap().into()
    }

    type Columns = (Vec<Option<f64>>, Vec<Option<i64>>, Vec<Option<i64>>);

    /// Every row of the three columns of `file`, read with the crate's reader.
    fn read_back(file: Bytes) -> Columns {
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let (mut v, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for batch in reader.build().unwrap() {
            let batch = batch.unwrap();
            let doubles = batch.column(0).as_any().downcast_ref::<Float64Array>();
            let doubles = doubles.unwrap();
            v.extend(doubles.iter());
            for (out, c) in [(&mut a, 1), (&mut b, 2)] {
                let ints = batch.column(c).as_any().downcast_ref::<Int64Array>();
                out.extend(ints.unwrap().iter());
            }
        }
        (v, a, b)
    }

    /// Raw samples: small steps, big jumps, both ends of `i64` (wrapping deltas).
    fn raw_values() -> impl Strategy<Value = i64> {
        prop_oneof![
            4 => -3i64..40,
            2 => any::<i64>(),
            1 => Just(i64::MIN),
            1 => Just(i64::MAX),
        ]
    }

    /// Validity patterns: none null, all null, runs of either, scattered nulls.
    fn null_patterns(len: usize) -> impl Strategy<Value = Vec<bool>> {
        prop_oneof![
            Just(vec![true; len]),
            Just(vec![false; len]),
            proptest::collection::vec((any::<bool>(), 1usize..40), 0..20).prop_map(move |runs| {
                let mut v: Vec<bool> = runs
                    .into_iter()
                    .flat_map(|(f, n)| std::iter::repeat_n(f, n))
                    .collect();
                v.resize(len, true);
                v
            }),
            proptest::collection::vec(any::<bool>(), len),
        ]
    }

    /// The lengths at the edges of blocks, miniblocks and groups of eight, or any up to three
    /// blocks.
    fn lengths() -> impl Strategy<Value = usize> {
        prop_oneof![
            prop::sample::select(vec![
                0usize, 1, 2, 7, 8, 9, 63, 64, 65, 127, 128, 129, 256, 257, 513
            ]),
            0usize..800,
        ]
    }

    fn cells() -> impl Strategy<Value = (Vec<f64>, Vec<i64>, Vec<i64>, Vec<bool>)> {
        lengths().prop_flat_map(|len| {
            (
                doubles(len),
                proptest::collection::vec(raw_values(), len),
                proptest::collection::vec(raw_values(), len),
                null_patterns(len),
            )
        })
    }

    /// Doubles of any bits, or a counter that holds still: runs of one value (`PLAIN`).
    fn doubles(len: usize) -> impl Strategy<Value = Vec<f64>> {
        let any_double = || prop_oneof![any::<f64>(), Just(f64::NAN), Just(-0.0), -1e3..1e3f64];
        prop_oneof![
            proptest::collection::vec(any_double(), len),
            proptest::collection::vec((any_double(), 1usize..6), 0..=len).prop_map(move |runs| {
                let mut v: Vec<f64> = runs
                    .into_iter()
                    .flat_map(|(x, n)| std::iter::repeat_n(x, n))
                    .collect();
                v.resize(len, 1.0);
                v
            }),
        ]
    }

    fn with_nulls<T: Copy>(values: &[T], valid: &[bool]) -> Vec<Option<T>> {
        values
            .iter()
            .zip(valid)
            .map(|(&v, &f)| f.then_some(v))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The crate's reader gives back every value and null of hand-written cell chunks
        /// (doubles bit for bit), across page boundaries, with the page count and encodings
        /// the chunk's metadata announces.
        #[test]
        fn the_crates_reader_reads_cell_chunks_back(
            (values, first, second, valid) in cells(),
            page_rows in prop_oneof![1usize..70, Just(20_000)],
        ) {
            let file = file_of(&values, &first, &second, &valid, page_rows);
            let reader = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap();
            let group = reader.metadata().row_groups().first().unwrap().clone();
            let (v, a, b) = read_back(file);
            let bits = |v: &[Option<f64>]| v.iter().map(|x| x.map(f64::to_bits)).collect::<Vec<_>>();
            prop_assert_eq!(bits(&v), bits(&with_nulls(&values, &valid)));
            prop_assert_eq!(&a, &with_nulls(&first, &valid));
            prop_assert_eq!(&b, &with_nulls(&second, &valid));

            prop_assert_eq!(group.num_rows() as usize, values.len());
            for (column, encoding) in group.columns().iter().zip([
                double_encoding(&values, &valid),
                Encoding::DELTA_BINARY_PACKED,
                Encoding::DELTA_BINARY_PACKED,
            ]) {
                prop_assert!(column.statistics().is_none());
                prop_assert_eq!(column.compression(), Compression::LZ4_RAW);
                let pages = column.page_encoding_stats().unwrap();
                let data_pages = values.len().div_ceil(page_rows);
                match data_pages {
                    0 => prop_assert!(pages.is_empty()),
                    n => {
                        prop_assert_eq!(pages.len(), 1);
                        prop_assert_eq!(pages[0].page_type, PageType::DATA_PAGE);
                        prop_assert_eq!(pages[0].encoding, encoding);
                        prop_assert_eq!(pages[0].count as usize, n);
                    }
                }
                prop_assert_eq!(
                    column.encodings_mask(),
                    &EncodingMask::new_from_encodings([Encoding::RLE, encoding].iter())
                );
            }
        }

        /// Without nulls (the usual log) the chunks are byte for byte the crate's own, pages cut
        /// at the same rows: the same deltas, block layout, levels and compression.
        #[test]
        fn without_nulls_the_chunks_are_the_crates(
            (values, first, second, _) in cells(),
            page_rows in prop_oneof![1usize..70, 100usize..600],
        ) {
            let valid = vec![true; values.len()];
            // The crate writes no row group of no rows.
            prop_assume!(!values.is_empty());
            let ours = file_of(&values, &first, &second, &valid, page_rows);
            let theirs = crate_file_of(&values, &first, &second, &valid, page_rows);
            let meta = |file: &Bytes| {
                ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap().metadata().clone()
            };
            let (ours_meta, theirs_meta) = (meta(&ours), meta(&theirs));
            let (ours_group, theirs_group) =
                (&ours_meta.row_groups()[0], &theirs_meta.row_groups()[0]);
            for (o, t) in ours_group.columns().iter().zip(theirs_group.columns()) {
                let (start, len) = o.byte_range();
                let (t_start, t_len) = t.byte_range();
                prop_assert_eq!(len, t_len);
                prop_assert_eq!(
                    &ours[start as usize..(start + len) as usize],
                    &theirs[t_start as usize..(t_start + t_len) as usize]
                );
                prop_assert_eq!(o.uncompressed_size(), t.uncompressed_size());
                prop_assert_eq!(o.num_values(), t.num_values());
                prop_assert_eq!(o.page_encoding_stats(), t.page_encoding_stats());
                prop_assert_eq!(o.encodings().collect::<Vec<_>>(), t.encodings().collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn doubles_that_repeat_are_plain() {
        let all = |n| vec![true; n];
        // Three repeats of seven values (3 × 4 >= 7): PLAIN; two of seven: split.
        let v = [5.0, 5.0, 5.0, 5.0, 1.0, 2.0, 3.0];
        assert_eq!(double_encoding(&v, &all(7)), Encoding::PLAIN);
        let v = [5.0, 5.0, 5.0, 4.0, 1.0, 2.0, 3.0];
        assert_eq!(double_encoding(&v, &all(7)), Encoding::PLAIN);
        let v = [5.0, 5.0, 6.0, 4.0, 1.0, 2.0, 3.0, 7.0, 8.0];
        assert_eq!(double_encoding(&v, &all(9)), Encoding::BYTE_STREAM_SPLIT);
        // Bit for bit: −0 is not 0, a NaN repeats itself.
        let v = [0.0, -0.0, 0.0, -0.0];
        assert_eq!(double_encoding(&v, &all(4)), Encoding::BYTE_STREAM_SPLIT);
        let v = [f64::NAN, f64::NAN];
        assert_eq!(double_encoding(&v, &all(2)), Encoding::PLAIN);
        // A null between two equal values: they are neighbours; the value under a null counts not.
        let v = [2.0, 9.0, 2.0, 3.0];
        let valid = [true, false, true, true];
        assert_eq!(double_encoding(&v, &valid), Encoding::PLAIN);
        let valid = [false, true, false, false];
        assert_eq!(double_encoding(&v, &valid), Encoding::BYTE_STREAM_SPLIT);
        // No value: split, as before a value was seen.
        assert_eq!(double_encoding(&[], &[]), Encoding::BYTE_STREAM_SPLIT);
    }

    #[test]
    fn deltas_of_a_small_page() {
        // 1, 2, 4, 7: the header (256, 4, four values, zigzag 1 = 2), then the deltas 1, 2, 3:
        // their minimum (zigzag 1 = 2), the widths (0, 1, 2 need two bits; the other
        // miniblocks are empty), and 64 values of two bits, zeros padded.
        let mut out = Vec::new();
        delta_binary_packed(&mut out, &[1, 2, 4, 7]);
        let mut want = vec![0x80, 0x02, 4, 4, 2, 2, 2, 0, 0, 0, 0b10_01_00];
        want.extend_from_slice(&[0; 15]);
        assert_eq!(out, want);
        // No values: the header alone, first value 0.
        let mut out = Vec::new();
        delta_binary_packed(&mut out, &[]);
        assert_eq!(out, [0x80, 0x02, 4, 0, 0]);
        // Wrapping: MAX then MIN is a delta of 1 (after the ten bytes of zigzag MAX), all
        // widths 0.
        let mut out = Vec::new();
        delta_binary_packed(&mut out, &[i64::MAX, i64::MIN]);
        assert_eq!(out.get(..4), Some(&[0x80, 0x02, 4, 2][..]));
        assert_eq!(out.get(14..), Some(&[2, 0, 0, 0, 0][..]));
        // A width of 64 bits: deltas 0 and MIN − MAX … as u64 span the whole range.
        let mut out = Vec::new();
        delta_binary_packed(&mut out, &[0, i64::MAX, -1]);
        let back = (out.len(), out.get(5..6));
        assert_eq!(back, (5 + 10 + 4 + 64 * 8, Some(&[0xFF][..])));
    }

    #[test]
    fn levels_mix_runs_and_groups() {
        let flags = |s: &str| s.bytes().map(|b| b == b'1').collect::<Vec<bool>>();
        let levels = |f: &[bool]| {
            let mut runs = Vec::new();
            flag_runs(f, &mut runs);
            let mut out = Vec::new();
            definition_levels(&mut out, f, &runs);
            out
        };
        // One run of ten valid rows.
        assert_eq!(levels(&flags("1111111111")), [20, 1]);
        // Three bits packed, padded to a group: 1, 0, 1 → 0b101.
        assert_eq!(levels(&flags("101")), [3, 0b101]);
        // A short last run after a long one stays a run; alone too.
        assert_eq!(levels(&flags("00000000111")), [16, 0, 6, 1]);
        assert_eq!(levels(&flags("11")), [4, 1]);
        // Two flags packed and completed to a group by six of the run of 14 zeros after them;
        // the other eight zeros as a run.
        assert_eq!(levels(&flags("1100000000000000")), [3, 0b11, 16, 0]);
        // A run too short to leave the group: all packed, two groups.
        assert_eq!(levels(&flags("110000000000")), [5, 0b11, 0]);
    }
}
