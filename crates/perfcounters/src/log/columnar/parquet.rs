//! A log as a Parquet file of its long form.
//!
//! [`ParquetLogWriter`] writes row groups of whole records (about [`ROWS_PER_GROUP`] rows each,
//! streamed: memory does not grow with the log's length), compressed with Zstandard at level 1
//! (`value` `BYTE_STREAM_SPLIT`; LZ4 for the raw-sample columns `raw_first`, `raw_second`), the columns of a row group encoded in parallel (see [`ParquetLogWriter`]; the encodings are
//! chosen for speed, the reasons in docs/benchmarks.md). The log's header is kept in the file's key-value metadata (keys `perfcounters.*`, see
//! [`header_metadata`]): the columns in their order with their written names and counter
//! information, the time zone, and the source.
//!
//! [`ParquetLogReader`] reads such a file back one row group at a time into records
//! ([`records_from_long`]). A Parquet file without that metadata, or whose columns are not the long
//! form, is refused with an error that says so.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, DictionaryArray, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray, UInt32Array,
};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::writer::SerializedFileWriter;
use parquet::file::writer::SerializedRowGroupWriter;
use parquet::schema::types::{ColumnDescPtr, ColumnPath};

use super::cells::{delta_chunk, double_chunk};
use super::long::{has_raw_columns, LongLayout};
use super::runs::{cell_runs_chunk, run_chunk, time_chunk};
use super::staging::{CellArrays, CellColumns, CellSpare};
use super::time::log_time;
use crate::atomic_file::PendingFile;
use crate::counter_type::CounterType;
use crate::format::blg::TimeZoneInformation;
use crate::log::error::{Location, LogError};
use crate::log::model::PARQUET_MAGIC;
use crate::log::model::{
    Cell, CounterInfo, LogCounter, LogHeader, LogKind, LogReader, LogWriter, RawCell, Record,
    TimeZone, ValueRows,
};
use crate::path::CounterPath;
use crate::raw::RawCounter;
use crate::snapshot::SystemTime;
use crate::status::PdhStatus;

/// The four bytes a Parquet file starts (and ends) with.
pub const MAGIC: &[u8; 4] = PARQUET_MAGIC;

/// The metadata key that marks a file as a perfcounters log, with the version of its layout.
pub const KEY_FORMAT: &str = "perfcounters.log";
/// The value of [`KEY_FORMAT`] this version writes and reads.
pub const FORMAT_LONG_V1: &str = "long/1";
/// The metadata key of the log's source (the file it was converted from).
pub const KEY_SOURCE: &str = "perfcounters.source";
/// The metadata key of the kind of the log it was converted from (`CSV`, `Binary` …).
pub const KEY_KIND: &str = "perfcounters.kind";
/// The metadata key of the log's time zone name (absent when the log named none).
pub const KEY_ZONE: &str = "perfcounters.time_zone";
/// The metadata key of the log's time zone bias in minutes (UTC − local; absent when unknown).
pub const KEY_BIAS: &str = "perfcounters.time_zone_bias";
/// The metadata key of the log's time-zone rules (a `TIME_ZONE_INFORMATION`, see
/// [`header_metadata`]; absent when the log named no zone).
pub const KEY_RULES: &str = "perfcounters.time_zone_rules";
/// The metadata key of the columns: one line per column, see [`header_metadata`].
pub const KEY_COUNTERS: &str = "perfcounters.counters";

/// Whether `bytes` (the start of a file) are those of a Parquet file.
pub fn is_parquet(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The text of an optional field in a metadata line: `\N` for none, else the text with `\`, tab,
/// line feed and carriage return escaped.
fn escape(out: &mut String, field: Option<&str>) {
    let Some(s) = field else {
        out.push_str("\\N");
        return;
    };
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

/// The inverse of [`escape`]; `None` for `\N`, `Err` for an unknown escape.
fn unescape(s: &str) -> Result<Option<String>, String> {
    if s == "\\N" {
        return Ok(None);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            other => {
                return Err(format!(
                    "unknown escape \\{}",
                    other.map(String::from).unwrap_or_default()
                ))
            }
        }
    }
    Ok(Some(out))
}

/// The key-value metadata that keeps `header` in a Parquet file.
///
/// [`KEY_COUNTERS`] holds one line per column with ten tab-separated fields: the name as written,
/// machine, object, parent, instance, `#n` index, counter, counter type, default scale and time
/// base; `\N` stands for a field that is absent, and `\`, tab, line feed and carriage return are
/// escaped as `\\`, `\t`, `\n`, `\r`.
///
/// [`KEY_RULES`] holds the zone's rules as seven tab-separated fields: bias, standard name,
/// standard date, standard bias, daylight name, daylight date, daylight bias; a date is the eight
/// fields of a `SYSTEMTIME` separated by commas (year, month, day of week, day, hour, minute,
/// second, milliseconds).
pub fn header_metadata(header: &LogHeader) -> Vec<(String, String)> {
    let mut counters = String::new();
    for c in &header.counters {
        let p = &c.path;
        let index = p.index.map(|i| i.to_string());
        let (ty, scale, base) = match c.info {
            Some(i) => (
                Some(i.counter_type.0.to_string()),
                Some(i.default_scale.to_string()),
                Some(i.time_base.to_string()),
            ),
            None => (None, None, None),
        };
        let fields = [
            Some(c.name.as_str()),
            p.machine.as_deref(),
            Some(p.object.as_str()),
            p.parent.as_deref(),
            p.instance.as_deref(),
            index.as_deref(),
            Some(p.counter.as_str()),
            ty.as_deref(),
            scale.as_deref(),
            base.as_deref(),
        ];
        for (k, f) in fields.iter().enumerate() {
            if k > 0 {
                counters.push('\t');
            }
            escape(&mut counters, *f);
        }
        counters.push('\n');
    }
    let mut kv = vec![
        (KEY_FORMAT.to_owned(), FORMAT_LONG_V1.to_owned()),
        (KEY_SOURCE.to_owned(), header.source.clone()),
        (KEY_KIND.to_owned(), header.kind.name().to_owned()),
    ];
    if let Some(z) = &header.time_zone {
        kv.push((KEY_ZONE.to_owned(), z.name.clone()));
        if let Some(b) = z.bias {
            kv.push((KEY_BIAS.to_owned(), b.to_string()));
        }
        kv.push((KEY_RULES.to_owned(), rules_text(&z.rules)));
    }
    kv.push((KEY_COUNTERS.to_owned(), counters));
    kv
}

fn date_text(t: &SystemTime) -> String {
    t.to_words().map(|v| v.to_string()).join(",")
}

fn rules_text(r: &TimeZoneInformation) -> String {
    let mut out = String::new();
    out.push_str(&r.bias.to_string());
    out.push('\t');
    escape(&mut out, Some(&r.standard_name));
    out.push('\t');
    out.push_str(&date_text(&r.standard_date));
    out.push('\t');
    out.push_str(&r.standard_bias.to_string());
    out.push('\t');
    escape(&mut out, Some(&r.daylight_name));
    out.push('\t');
    out.push_str(&date_text(&r.daylight_date));
    out.push('\t');
    out.push_str(&r.daylight_bias.to_string());
    out
}

fn parse_date(s: &str) -> Option<SystemTime> {
    let v: Vec<u16> = s
        .split(',')
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    Some(SystemTime::from_words(<[u16; 8]>::try_from(v).ok()?))
}

fn parse_rules(s: &str) -> Option<TimeZoneInformation> {
    let f: Vec<&str> = s.split('\t').collect();
    let [bias, sn, sd, sb, dn, dd, db] = <[&str; 7]>::try_from(f).ok()?;
    let minutes = |b: &str| b.parse::<i32>().ok().filter(|b| b.abs() <= 24 * 60);
    Some(TimeZoneInformation {
        bias: minutes(bias)?,
        standard_name: unescape(sn).ok()??,
        standard_date: parse_date(sd)?,
        standard_bias: minutes(sb)?,
        daylight_name: unescape(dn).ok()??,
        daylight_date: parse_date(dd)?,
        daylight_bias: minutes(db)?,
    })
}

/// The header kept by [`header_metadata`], read back from a file's key-value metadata; `source`
/// names the file in errors and becomes the header's source. The header's kind is
/// [`LogKind::Parquet`].
pub fn header_from_metadata(source: &str, kv: &[(String, String)]) -> Result<LogHeader, LogError> {
    let get = |key: &str| kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let bad = |m: String| LogError::invalid(source, None, m);
    match get(KEY_FORMAT) {
        Some(FORMAT_LONG_V1) => {}
        Some(other) => {
            return Err(bad(format!(
                "a perfcounters Parquet log of layout {other:?}, which this version does not read \
                 (it reads {FORMAT_LONG_V1:?})"
            )))
        }
        None => {
            return Err(bad(format!(
                "a Parquet file that perfcounters did not write (its metadata has no \
                 {KEY_FORMAT:?} key)"
            )))
        }
    }
    let time_zone = match get(KEY_ZONE) {
        None => None,
        Some(name) => {
            let bias = match get(KEY_BIAS) {
                None => None,
                Some(b) => Some(
                    b.parse::<i32>()
                        .ok()
                        .filter(|b| b.abs() <= 24 * 60)
                        .ok_or_else(|| bad(format!("metadata {KEY_BIAS}: bad bias {b:?}")))?,
                ),
            };
            let rules = match get(KEY_RULES) {
                Some(r) => parse_rules(r)
                    .ok_or_else(|| bad(format!("metadata {KEY_RULES}: bad rules {r:?}")))?,
                None => TimeZone::fixed(name, bias).rules,
            };
            Some(TimeZone {
                name: name.to_owned(),
                bias,
                rules,
            })
        }
    };
    let counters_text = get(KEY_COUNTERS)
        .ok_or_else(|| bad(format!("the metadata has no {KEY_COUNTERS:?} key")))?;
    let mut counters = Vec::new();
    for (n, line) in counters_text.lines().enumerate() {
        let at = |m: String| bad(format!("metadata {KEY_COUNTERS}, line {}: {m}", n + 1));
        let fields: Vec<Option<String>> = line
            .split('\t')
            .map(unescape)
            .collect::<Result<_, _>>()
            .map_err(at)?;
        let [name, machine, object, parent, instance, index, counter, ty, scale, base] =
            <[Option<String>; 10]>::try_from(fields)
                .map_err(|f| at(format!("{} fields, not 10", f.len())))?;
        let need = |f: Option<String>, what: &str| f.ok_or_else(|| at(format!("no {what}")));
        let number = |f: Option<String>, what: &str| -> Result<Option<i64>, LogError> {
            f.map(|s| {
                s.parse::<i64>()
                    .map_err(|_| at(format!("{what} {s:?} is not a number")))
            })
            .transpose()
        };
        let index = number(index, "index")?
            .map(|i| u32::try_from(i).map_err(|_| at(format!("index {i} is out of range"))))
            .transpose()?;
        let info = match (
            number(ty, "counter type")?,
            number(scale, "scale")?,
            number(base, "time base")?,
        ) {
            (Some(t), Some(s), Some(b)) => Some(CounterInfo {
                counter_type: CounterType(
                    u32::try_from(t)
                        .map_err(|_| at(format!("counter type {t} is out of range")))?,
                ),
                default_scale: i32::try_from(s)
                    .map_err(|_| at(format!("scale {s} is out of range")))?,
                time_base: b,
            }),
            (None, None, None) => None,
            _ => return Err(at("counter type, scale and time base go together".into())),
        };
        counters.push(LogCounter {
            name: need(name, "name")?,
            path: CounterPath {
                machine,
                object: need(object, "object")?,
                parent,
                instance,
                index,
                counter: need(counter, "counter")?,
            },
            info,
        });
    }
    Ok(LogHeader {
        source: source.to_owned(),
        kind: LogKind::Parquet,
        time_zone,
        counters,
    })
}

/// A [`ParquetError`] as a [`LogError`] of `source`: I/O errors stay I/O errors
/// ([`LogErrorKind`](crate::log::LogErrorKind)'s conversion).
pub(crate) fn parquet_error(source: &str, e: ParquetError) -> LogError {
    LogError::new(source, None, e)
}

/// About how many rows (cells) a row group of a Parquet log holds: 65,536, in whole records (at
/// least [`MIN_GROUP_RECORDS`] of them).
///
/// Records arrive one at a time and a row group is laid out column by column (each log column's
/// run of its records' cells), so filling a row group writes its cells across all of its runs:
/// the row group is the window of that transposition. At 65,536 rows the cells (34 bytes a row
/// with the raw columns, 2.2 MB) stay in a core's cache while they are filled and then encoded;
/// with row groups of 2²⁰ rows (36 MB) every cell went out to memory and back, and filling them was
/// the largest cost of writing the generated benchmark log (`perf`: 3.5 times the samples). The
/// file grows by a fifth (each row group repeats its dictionaries, and the delta-encoded raw
/// samples restart with each log column's shorter run; docs/benchmarks.md). DuckDB writes row
/// groups of 122,880 rows; readers that share out row groups among threads get more of them.
pub const ROWS_PER_GROUP: usize = 1 << 16;

/// The fewest records in a row group of a Parquet log (for logs of more than 4,096 columns, whose
/// row groups then hold more than [`ROWS_PER_GROUP`] rows): a row group repeats the dictionaries of
/// the columns' names, which a few records would not repay.
pub const MIN_GROUP_RECORDS: usize = 16;

/// The records in a row group of a Parquet log of `columns` columns (see [`ROWS_PER_GROUP`]).
pub fn records_per_group(columns: usize) -> usize {
    (ROWS_PER_GROUP / columns.max(1)).max(MIN_GROUP_RECORDS)
}

/// One encoded column chunk of a row group.
enum Chunk {
    /// Encoded by the `parquet` crate's Arrow writer.
    Arrow(ArrowColumnChunk),
    /// Encoded by hand ([`run_chunk`], [`time_chunk`], [`double_chunk`] …): its bytes and
    /// metadata.
    Runs(bytes::Bytes, ColumnCloseResult),
}

impl Chunk {
    fn append_to<W: Write + Send>(
        self,
        group: &mut SerializedRowGroupWriter<'_, W>,
    ) -> Result<(), ParquetError> {
        match self {
            Chunk::Arrow(c) => c.append_to_row_group(group),
            Chunk::Runs(data, close) => group.append_column(&data, close),
        }
    }
}

/// The column chunks of one row group, encoded on other threads (see [`ParquetLogWriter`]),
/// and the buffers its cells were in, for the next row group.
type EncodedGroup = std::thread::JoinHandle<Result<(Vec<Chunk>, CellSpare), ParquetError>>;

/// What the encoder of a row group needs of the file: the layout, each column's Parquet
/// descriptor and compression, and the most rows in a data page.
struct FileLayout {
    layout: Arc<LongLayout>,
    descriptors: Vec<ColumnDescPtr>,
    compressions: Vec<Compression>,
    page_rows: usize,
}

/// A log written as a Parquet file of its long form (see the [module documentation](self)).
///
/// Records are buffered until a row group is full (about [`ROWS_PER_GROUP`] rows), then written
/// grouped by column. [`finish`](LogWriter::finish) writes the last row group and the footer.
///
/// A full row group is encoded on other threads, its columns shared out among the machine's
/// cores, while the caller goes on with the records of the next one; at most
/// two row groups are being encoded at a time, so memory stays at about three
/// row groups. The buffers of an encoded row group are handed back to take the records of a
/// later one.
pub struct ParquetLogWriter<W: Write + Send> {
    source: String,
    sink: Option<W>,
    writer: Option<SerializedFileWriter<W>>,
    factory: Option<ArrowRowGroupWriterFactory>,
    header: Option<LogHeader>,
    file: Option<Arc<FileLayout>>,
    /// The records of the row group being filled, as the long form's columns.
    cells: Option<CellColumns>,
    /// The buffers of the last row group encoded, for the next [`CellColumns`].
    spare: CellSpare,
    per_group: usize,
    groups: usize,
    /// The row groups being encoded, oldest first (at most [`GROUPS_IN_FLIGHT`]).
    encoding: VecDeque<EncodedGroup>,
    finished: Option<W>,
}

impl<W: Write + Send> std::fmt::Debug for ParquetLogWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetLogWriter")
            .field("source", &self.source)
            .field("buffered", &self.cells.as_ref().map_or(0, CellColumns::len))
            .field("groups", &self.groups)
            .finish_non_exhaustive()
    }
}

/// The writer properties of a Parquet log with `rows` rows per row group and the key-value
/// `metadata`.
///
/// * Zstandard level 1 on every column but the cell columns (below): level 3 makes files about a fifth smaller but costs about
///   a sixth more work, and either is far below a quarter of the CSV (docs/benchmarks.md).
/// * The columns constant along a log column's run of rows (the strings `machine`, `object`,
///   `instance`, `counter`, `parent`, and `instance_index`, `counter_type`) are not written by the
///   crate's encoders but by [`run_chunk`]: dictionary-encoded, with keys from the log column, one
///   RLE run per log column, and statistics per chunk. Of the properties here they take the
///   compression and the most rows of a data page.
/// * `time`, in a log of at least [`TIME_KEYS_COLUMNS`] columns, is not written by the crate
///   either but by [`time_chunk`]: the row group's record times are its dictionary, a row's key
///   is its record's place, in one data page (the keys repeat once per log column, which
///   Zstandard compresses to about one cycle per page). With fewer columns (few repeats of the
///   cycle, so the dictionary and keys are larger than deltas of the times), the crate's
///   `DELTA_BINARY_PACKED` writes it.
/// * `raw_first` and `raw_second` are delta-encoded (`DELTA_BINARY_PACKED`) without a
///   dictionary: within a column's run, raw values grow by small steps; a dictionary would hash
///   every value only to find most of them distinct.
/// * `multi_count` and `status`, nearly constant along a column's run, are not written by the
///   crate either but by [`cell_runs_chunk`]: a dictionary of their few distinct values and RLE
///   runs of keys and definition levels, work that grows with the runs rather than the rows.
/// * `value` has no dictionary: measured values are mostly distinct, so a dictionary hashes
///   every one of them and then falls back to plain anyway.
/// * `value`, `raw_first` and `raw_second` are not written by the crate's encoders either but
///   by [`double_chunk`] and [`delta_chunk`], from the row group's plain vectors of values and
///   validity flags: the same pages as the crate's (byte for byte where no cell is null, a
///   property test checks it) without its per-row definition levels and index vectors
///   (docs/benchmarks.md). The settings here (encoding, compression, no statistics) are what they
///   write and what the crate's writer would.
/// * Statistics are kept per column chunk (row group), not per page: the row group's time range
///   is what engines prune with; page statistics of a row group ordered by column would cost
///   without narrowing a query. `value`, `raw_first` and `raw_second` have none: a row group
///   holds every counter of its records, so their minimum and maximum span all the counters'
///   ranges and would prune nothing, while the crate compared every value to find them (0.19 G
///   instructions of the 50 MB benchmark log, docs/benchmarks.md). The run and dictionary chunks
///   have them for free (from their dictionaries).
/// * `value` is `BYTE_STREAM_SPLIT` (its eight bytes in eight streams, [`double_chunk`]), or
///   `PLAIN` in a row group where a quarter of the values repeat the one before
///   ([`double_encoding`](super::cells::double_encoding)), and compressed with Zstandard level 1,
///   like the other columns: split into streams, doubles compress (the streams of sign, exponent
///   and high mantissa bytes repeat), and Zstandard
///   gave files 12 % smaller than LZ4 on the whole-run integer log for about the same time,
///   level 3 another 9 % for a fifth more time (docs/benchmarks.md).
/// * The raw-sample columns `raw_first` and `raw_second` (delta-encoded) are compressed with LZ4
///   (`LZ4_RAW`), cheaper than Zstandard level 1, the crate's lowest (docs/benchmarks.md).
fn writer_properties(
    rows: usize,
    metadata: Vec<KeyValue>,
) -> Result<WriterProperties, ParquetError> {
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
        .set_max_row_group_size(rows.max(1))
        .set_created_by(format!("perfcounters {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(metadata))
        .set_statistics_enabled(EnabledStatistics::Chunk);
    for name in ["time", "raw_first", "raw_second"] {
        props = props
            .set_column_dictionary_enabled(ColumnPath::from(name), false)
            .set_column_encoding(ColumnPath::from(name), Encoding::DELTA_BINARY_PACKED);
    }
    props = props
        .set_column_dictionary_enabled(ColumnPath::from("value"), false)
        .set_column_encoding(ColumnPath::from("value"), Encoding::BYTE_STREAM_SPLIT);
    for name in ["value", "raw_first", "raw_second"] {
        props =
            props.set_column_statistics_enabled(ColumnPath::from(name), EnabledStatistics::None);
    }
    for name in ["raw_first", "raw_second"] {
        props = props.set_column_compression(ColumnPath::from(name), Compression::LZ4_RAW);
    }
    Ok(props.build())
}

/// Row groups encoded at once while the next one fills: the oldest is appended to the file when a
/// group is full and this many are under way. With one, the writer waited for each group's
/// encoding before handing over the next, and the float log of `scripts/whole-runs.py` kept the
/// two cores busy about two thirds of its conversion; with two, that conversion took 0.200 s
/// against 0.214 (best of 10, alternated; median 0.213 against 0.227), the integer log's 0.112
/// against 0.120, the benchmark `.blg`'s median 0.261 against 0.280, for 4.5 MB more peak memory
/// (docs/benchmarks.md). Three gained nothing more.
const GROUPS_IN_FLIGHT: usize = 2;

/// The fewest log columns for which the `time` column is written by [`time_chunk`] rather than
/// delta-encoded by the crate (see [`writer_properties`]).
const TIME_KEYS_COLUMNS: usize = 16;

/// One column of a row group to encode, borrowing the row group's cells.
enum Job<'a> {
    /// A column by the `parquet` crate's Arrow writer (`time` in a log of few columns).
    Arrow(
        Box<ArrowColumnWriter>,
        Vec<parquet::arrow::arrow_writer::ArrowLeafColumn>,
    ),
    /// A column constant along each log column's run, by [`run_chunk`].
    Runs,
    /// The `time` column, by [`time_chunk`].
    Time,
    /// A column nearly constant along each log column's run (`multi_count`, `status`): its
    /// values and validity flags, by [`cell_runs_chunk`].
    CellRuns(&'a [u32], &'a [bool]),
    /// The `value` column: its values and validity flags, by [`double_chunk`].
    Doubles(&'a [f64], &'a [bool]),
    /// A raw-sample column (`raw_first`, `raw_second`): its values and validity flags, by
    /// [`delta_chunk`].
    Deltas(&'a [i64], &'a [bool]),
}

/// Encodes a row group of `records` records: the columns constant along each log column's run
/// ([`run_chunk`]) and the cell columns (`value` by [`double_chunk`], the raw samples by
/// [`delta_chunk`] and [`cell_runs_chunk`], `time` by [`time_chunk`]) by hand, only `time` of a
/// log of few columns by its writer of `writers` (one per column of the schema, in order); the
/// columns shared out among as many threads as the machine has cores. Returns the chunks in the
/// columns' order and the buffers of `cells`.
fn encode_group(
    file: &FileLayout,
    records: usize,
    cells: CellArrays,
    writers: Vec<ArrowColumnWriter>,
) -> Result<(Vec<Chunk>, CellSpare), ParquetError> {
    let chunks = encode_columns(file, records, &cells, writers)?;
    Ok((chunks, CellSpare::from(cells)))
}

/// The chunks of [`encode_group`].
fn encode_columns(
    file: &FileLayout,
    records: usize,
    cells: &CellArrays,
    writers: Vec<ArrowColumnWriter>,
) -> Result<Vec<Chunk>, ParquetError> {
    let schema = file.layout.schema();
    let columns = file.layout.columns();
    let by_hand = columns >= TIME_KEYS_COLUMNS;
    let missing = |name: &str| ParquetError::General(format!("no data for column {name}"));
    let raw = |name: &str| cells.raw.as_ref().ok_or_else(|| missing(name));
    let mut jobs = Vec::with_capacity(writers.len());
    for (field, writer) in schema.fields().iter().zip(writers) {
        let name = field.name().as_str();
        let job = match name {
            _ if file.layout.run_column(name).is_some() => Job::Runs,
            "time" if by_hand => Job::Time,
            "time" => {
                let array = cells.time_array(columns);
                // A flat schema: one leaf per column.
                Job::Arrow(Box::new(writer), compute_leaves(field, &array)?)
            }
            "value" => Job::Doubles(&cells.value, &cells.value_valid),
            "raw_first" => Job::Deltas(&raw(name)?.first, &raw(name)?.valid),
            "raw_second" => Job::Deltas(&raw(name)?.second, &raw(name)?.valid),
            "multi_count" => Job::CellRuns(&raw(name)?.multi, &raw(name)?.valid),
            "status" => Job::CellRuns(&raw(name)?.status, &raw(name)?.valid),
            _ => return Err(missing(name)),
        };
        jobs.push(std::sync::Mutex::new(Some(job)));
    }
    let threads = crate::log::cores().clamp(1, jobs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || -> Result<Vec<(usize, Chunk)>, ParquetError> {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(job) = jobs.get(k) else {
                return Ok(done);
            };
            let taken = job.lock().map(|mut j| j.take()).unwrap_or(None);
            let Some(taken) = taken else { continue };
            let (descr, compression) = file
                .descriptors
                .get(k)
                .zip(file.compressions.get(k))
                .ok_or_else(|| ParquetError::General(format!("no column {k}")))?;
            let (compression, pages) = (*compression, file.page_rows);
            let (data, close) = match taken {
                Job::Arrow(mut writer, leaves) => {
                    for leaf in &leaves {
                        writer.write(leaf)?;
                    }
                    done.push((k, Chunk::Arrow(writer.close()?)));
                    continue;
                }
                Job::Runs => {
                    let field = schema
                        .fields()
                        .get(k)
                        .ok_or_else(|| ParquetError::General(format!("no column {k}")))?;
                    let column = file.layout.run_column(field.name()).ok_or_else(|| {
                        ParquetError::General(format!("no runs of column {}", field.name()))
                    })?;
                    run_chunk(descr, column, records, compression, pages)?
                }
                Job::Time => time_chunk(descr, &cells.times, columns, compression, usize::MAX)?,
                Job::CellRuns(values, valid) => {
                    cell_runs_chunk(descr, values, valid, compression, pages)?
                }
                Job::Doubles(values, valid) => {
                    double_chunk(descr, values, valid, compression, pages)?
                }
                Job::Deltas(values, valid) => {
                    delta_chunk(descr, values, valid, compression, pages)?
                }
            };
            done.push((k, Chunk::Runs(data, close)));
        }
    };
    let mut chunks: Vec<(usize, Chunk)> =
        std::thread::scope(|s| {
            // A helper that cannot be started leaves its share to the others.
            let helpers: Vec<_> = (1..threads)
                .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
                .collect();
            let mut all = work()?;
            for h in helpers {
                all.extend(h.join().map_err(|_| {
                    ParquetError::General("a column encoder thread failed".into())
                })??);
            }
            Ok::<_, ParquetError>(all)
        })?;
    chunks.sort_unstable_by_key(|(k, _)| *k);
    Ok(chunks.into_iter().map(|(_, c)| c).collect())
}

impl<W: Write + Send> ParquetLogWriter<W> {
    /// Appends one record to the row group being filled (`put` puts it in the cell columns,
    /// with the log's name for errors), and writes the group when it is full.
    fn push(
        &mut self,
        put: impl FnOnce(&mut CellColumns, &str) -> Result<(), LogError>,
    ) -> Result<(), LogError> {
        let Some(header) = &self.header else {
            return Err(LogError::usage(&self.source, "no header written"));
        };
        let per_group = self.per_group;
        let spare = &mut self.spare;
        let cells = self.cells.get_or_insert_with(|| {
            let raw = has_raw_columns(header);
            CellColumns::reuse(header.counters.len(), raw, per_group, std::mem::take(spare))
        });
        put(cells, &header.source)?;
        if cells.len() >= per_group {
            self.write_group()?;
        }
        Ok(())
    }

    /// A writer into `sink`; `source` names it in errors.
    pub fn new(source: &str, sink: W) -> Self {
        ParquetLogWriter {
            source: source.to_owned(),
            sink: Some(sink),
            writer: None,
            factory: None,
            header: None,
            file: None,
            cells: None,
            spare: CellSpare::default(),
            per_group: 1,
            groups: 0,
            encoding: VecDeque::new(),
            finished: None,
        }
    }

    /// The sink, once [`finish`](LogWriter::finish) has written the footer.
    pub fn into_finished(self) -> Option<W> {
        self.finished
    }

    /// Waits for the oldest row group being encoded, if any, appends it to the file and keeps its
    /// buffers.
    fn append_encoded(&mut self) -> Result<(), LogError> {
        let Some(encoding) = self.encoding.pop_front() else {
            return Ok(());
        };
        let source = &self.source;
        let (chunks, spare) = encoding
            .join()
            .map_err(|_| LogError::internal(source, "the Parquet encoder failed"))?
            .map_err(|e| parquet_error(source, e))?;
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| LogError::usage(source, "no header written"))?;
        let mut group = writer
            .next_row_group()
            .map_err(|e| parquet_error(source, e))?;
        for chunk in chunks {
            chunk
                .append_to(&mut group)
                .map_err(|e| parquet_error(source, e))?;
        }
        group.close().map_err(|e| parquet_error(source, e))?;
        self.spare = spare;
        Ok(())
    }

    fn write_group(&mut self) -> Result<(), LogError> {
        let Some(cells) = self.cells.take().filter(|c| c.len() > 0) else {
            return Ok(());
        };
        let (Some(file), Some(factory)) = (&self.file, &self.factory) else {
            return Err(LogError::usage(&self.source, "no header written"));
        };
        let n = cells.len();
        let writers = factory
            .create_column_writers(self.groups)
            .map_err(|e| parquet_error(&self.source, e))?;
        let file = file.clone();
        while self.encoding.len() >= GROUPS_IN_FLIGHT {
            self.append_encoded()?;
        }
        self.groups += 1;
        let encoding = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || encode_group(&file, n, cells.finish(), writers))
            .map_err(|e| LogError::io(&self.source, None, e))?;
        self.encoding.push_back(encoding);
        Ok(())
    }
}

impl<W: Write + Send> LogWriter for ParquetLogWriter<W> {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        let sink = self
            .sink
            .take()
            .ok_or_else(|| LogError::usage(&self.source, "the header is already written"))?;
        let layout = LongLayout::new(header)?;
        self.per_group = records_per_group(header.counters.len());
        let rows = self.per_group.saturating_mul(header.counters.len().max(1));
        let metadata = header_metadata(header)
            .into_iter()
            .map(|(k, v)| KeyValue::new(k, v))
            .collect();
        let props =
            writer_properties(rows, metadata).map_err(|e| parquet_error(&self.source, e))?;
        // The Arrow writer embeds the Arrow schema in the file's metadata; its parts then encode
        // the row groups in parallel.
        // The crate's writer checks its row limit of a page after each write batch (20,000 rows,
        // batches of 1,024): its pages have 20,480 rows, and the hand-written chunks are cut at
        // the same rows.
        let batch = props.write_batch_size().max(1);
        let page_rows = props.data_page_row_count_limit().div_ceil(batch) * batch;
        let (writer, factory) = ArrowWriter::try_new(sink, layout.schema().clone(), Some(props))
            .and_then(ArrowWriter::into_serialized_writer)
            .map_err(|e| parquet_error(&self.source, e))?;
        let descriptors = writer.schema_descr().columns().to_vec();
        let compressions = descriptors
            .iter()
            .map(|d| writer.properties().compression(d.path()))
            .collect();
        self.writer = Some(writer);
        self.factory = Some(factory);
        self.header = Some(header.clone());
        self.file = Some(Arc::new(FileLayout {
            layout: Arc::new(layout),
            descriptors,
            compressions,
            page_rows,
        }));
        Ok(())
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        self.push(|cells, source| cells.push(source, record))
    }

    /// A log without raw samples (no counter has a type, as in PDH-CSV) has nothing but values
    /// to write.
    fn takes_values(&self) -> bool {
        self.header.as_ref().is_some_and(|h| !has_raw_columns(h))
    }

    fn write_values(&mut self, rows: &ValueRows) -> Result<(), LogError> {
        for (i, &time) in rows.times.iter().enumerate() {
            let values = rows.row(i);
            self.push(|cells, source| cells.push_values(source, time, values))?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), LogError> {
        self.write_group()?;
        while !self.encoding.is_empty() {
            self.append_encoded()?;
        }
        let writer = self
            .writer
            .take()
            .ok_or_else(|| LogError::usage(&self.source, "no header written"))?;
        let sink = writer
            .into_inner()
            .map_err(|e| parquet_error(&self.source, e))?;
        self.finished = Some(sink);
        Ok(())
    }
}

/// A [`ParquetLogWriter`] into a file that appears under its name only when complete: it is
/// written under a temporary name beside it (`.NAME.tmp-…`) and renamed by
/// [`finish`](LogWriter::finish); dropped unfinished, it removes the temporary file.
#[derive(Debug)]
pub struct ParquetFileWriter {
    inner: ParquetLogWriter<std::io::BufWriter<File>>,
    pending: Option<PendingFile>,
    replace: bool,
}

impl ParquetFileWriter {
    /// A writer of the file `path`. With `replace`, an existing file of that name is replaced
    /// when the new one is complete; without, [`finish`](LogWriter::finish) fails and leaves
    /// it alone.
    pub fn create(path: &Path, replace: bool) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let (pending, file) =
            PendingFile::create(path).map_err(|e| LogError::io(&source, None, e))?;
        Ok(ParquetFileWriter {
            inner: ParquetLogWriter::new(&source, std::io::BufWriter::new(file)),
            pending: Some(pending),
            replace,
        })
    }
}

impl LogWriter for ParquetFileWriter {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        self.inner.write_header(header)
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        self.inner.write_record(record)
    }

    fn takes_values(&self) -> bool {
        self.inner.takes_values()
    }

    fn write_values(&mut self, rows: &ValueRows) -> Result<(), LogError> {
        self.inner.write_values(rows)
    }

    fn finish(&mut self) -> Result<(), LogError> {
        self.inner.finish()?;
        let source = self.inner.source.clone();
        let file = self
            .inner
            .finished
            .take()
            .ok_or_else(|| LogError::usage(&source, "not finished"))?
            .into_inner()
            .map_err(|e| LogError::io(&source, None, e.into_error()))?;
        file.sync_all()
            .map_err(|e| LogError::io(&source, None, e))?;
        drop(file);
        let pending = self
            .pending
            .take()
            .ok_or_else(|| LogError::usage(&source, "already finished"))?;
        pending
            .commit(self.replace)
            .map_err(|e| LogError::io(&source, None, e))
    }
}

/// A file shared by the per-row-group readers of a [`ParquetLogReader`].
#[derive(Clone, Debug)]
pub struct SharedFile(Arc<File>);

impl Length for SharedFile {
    fn len(&self) -> u64 {
        self.0.as_ref().len()
    }
}

impl ChunkReader for SharedFile {
    type T = <File as ChunkReader>::T;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.0.as_ref().get_read(start)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        self.0.as_ref().get_bytes(start, length)
    }
}

/// A Parquet log written by [`ParquetLogWriter`], read one row group at a time.
pub struct ParquetLogReader<T: ChunkReader + Clone + 'static = SharedFile> {
    header: LogHeader,
    input: T,
    metadata: ArrowReaderMetadata,
    next_group: usize,
    records: std::vec::IntoIter<Record>,
    pivot: Pivot,
}

impl<T: ChunkReader + Clone + 'static> std::fmt::Debug for ParquetLogReader<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetLogReader")
            .field("header", &self.header)
            .field("next_group", &self.next_group)
            .finish_non_exhaustive()
    }
}

impl ParquetLogReader<SharedFile> {
    /// Opens the Parquet log `path`.
    pub fn open(path: &Path) -> Result<Self, LogError> {
        let source = path.display().to_string();
        let file = File::open(path).map_err(|e| LogError::io(&source, None, e))?;
        ParquetLogReader::new(&source, SharedFile(Arc::new(file)))
    }
}

impl<T: ChunkReader + Clone + 'static> ParquetLogReader<T> {
    /// Reads the footer of the Parquet log in `input` (named `source` in errors) and checks that it
    /// is a log of ours.
    pub fn new(source: &str, input: T) -> Result<Self, LogError> {
        let metadata = contained(source, || {
            ArrowReaderMetadata::load(&input, ArrowReaderOptions::new())
                .map_err(|e| parquet_error(source, e))
        })?;
        let kv: Vec<(String, String)> = metadata
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .map(|kv| {
                kv.iter()
                    .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        let header = header_from_metadata(source, &kv)?;
        let pivot = Pivot::new(&header);
        Ok(ParquetLogReader {
            header,
            input,
            metadata,
            next_group: 0,
            records: Vec::new().into_iter(),
            pivot,
        })
    }

    /// The number of row groups.
    pub fn row_groups(&self) -> usize {
        self.metadata.metadata().num_row_groups()
    }

    fn read_group(&mut self, group: usize) -> Result<Vec<Record>, LogError> {
        let source = &self.header.source;
        let rows = self
            .metadata
            .metadata()
            .row_groups()
            .get(group)
            .map(|g| g.num_rows())
            .unwrap_or(0);
        let rows = usize::try_from(rows).unwrap_or(0).max(1);
        let batches = contained(source, || {
            ParquetRecordBatchReaderBuilder::new_with_metadata(
                self.input.clone(),
                self.metadata.clone(),
            )
            .with_row_groups(vec![group])
            .with_batch_size(rows)
            .build()
            .map_err(|e| parquet_error(source, e))?
            .collect::<Result<Vec<RecordBatch>, _>>()
            .map_err(|e| LogError::new(source, Some(Location::RowGroup { index: group }), e))
        })?;
        let mut out = Vec::new();
        for batch in &batches {
            out.extend(
                self.pivot.pivot(&self.header, batch).map_err(|m| {
                    LogError::invalid(source, None, format!("row group {group}: {m}"))
                })?,
            );
        }
        Ok(out)
    }
}

/// Runs a step of the Parquet decoder, turning a panic into an error of `source`.
///
/// The `parquet` crate asserts on some corrupt pages (a bit width out of range) rather than returning
/// an error; a corrupt file must be an error here, never the end of the program. (With
/// `panic = "abort"` this cannot help; the project's profiles unwind.)
fn contained<T>(source: &str, step: impl FnOnce() -> Result<T, LogError>) -> Result<T, LogError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(LogError::invalid(
            source,
            None,
            format!("corrupt Parquet data (the decoder failed: {what})"),
        ))
    })
}

impl<T: ChunkReader + Clone + 'static> LogReader for ParquetLogReader<T> {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        loop {
            if let Some(r) = self.records.next() {
                *record = r;
                return Ok(true);
            }
            if self.next_group >= self.row_groups() {
                return Ok(false);
            }
            let group = self.next_group;
            self.next_group += 1;
            self.records = self.read_group(group)?.into_iter();
        }
    }
}

/// The records of a long-form batch of the log `header` (every row's counter one of the header's
/// columns). Rows may come in any order; each (time, column) at most once; rows of a column not
/// in the header, a null where the long form has none, or a batch with far fewer rows than
/// records × columns (not a whole set of records) are errors.
pub fn records_from_long(header: &LogHeader, batch: &RecordBatch) -> Result<Vec<Record>, LogError> {
    Pivot::new(header).records(header, batch)
}

/// Column lookup of [`records_from_long`], kept by a reader across row groups.
#[derive(Debug)]
struct Pivot {
    /// Path key → the header columns with that path (more than one when a log repeats a path).
    columns: HashMap<String, Vec<usize>>,
}

/// The lookup key of a path's parts.
fn path_key(
    machine: Option<&str>,
    object: &str,
    parent: Option<&str>,
    instance: Option<&str>,
    index: Option<u32>,
    counter: &str,
) -> String {
    let mut key = String::new();
    for part in [machine, Some(object), parent, instance] {
        escape(&mut key, part);
        key.push('\t');
    }
    match index {
        Some(i) => key.push_str(&i.to_string()),
        None => key.push_str("\\N"),
    }
    key.push('\t');
    escape(&mut key, Some(counter));
    key
}

/// A row's machine, object, parent, instance and counter.
type PathParts<'a> = [Option<&'a str>; 5];

/// A string column of the long form: dictionary-encoded (as written) or plain.
enum Strings<'a> {
    Dict(&'a DictionaryArray<Int32Type>, &'a StringArray),
    Plain(&'a StringArray),
}

impl<'a> Strings<'a> {
    fn of(batch: &'a RecordBatch, name: &str) -> Result<Self, String> {
        let a = column(batch, name).ok_or_else(|| format!("no column {name:?}"))?;
        if let Some(d) = a.as_any().downcast_ref::<DictionaryArray<Int32Type>>() {
            if let Some(v) = d.values().as_any().downcast_ref::<StringArray>() {
                return Ok(Strings::Dict(d, v));
            }
        } else if let Some(s) = a.as_any().downcast_ref::<StringArray>() {
            return Ok(Strings::Plain(s));
        }
        Err(format!("column {name:?} is {}, not strings", a.data_type()))
    }

    fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Strings::Dict(d, v) => {
                if d.is_null(i) {
                    return None;
                }
                let k = usize::try_from(*d.keys().values().get(i)?).ok()?;
                (k < v.len() && v.is_valid(k)).then(|| v.value(k))
            }
            Strings::Plain(s) => (i < s.len() && s.is_valid(i)).then(|| s.value(i)),
        }
    }
}

fn typed<'a, A: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a A, String> {
    let a = column(batch, name).ok_or_else(|| format!("no column {name:?}"))?;
    a.as_any()
        .downcast_ref::<A>()
        .ok_or_else(|| format!("column {name:?} has the wrong type {}", a.data_type()))
}

fn typed_opt<'a, A: 'static>(batch: &'a RecordBatch, name: &str) -> Result<Option<&'a A>, String> {
    match column(batch, name) {
        None => Ok(None),
        Some(_) => typed(batch, name).map(Some),
    }
}

fn opt<A: Array, T>(a: Option<&A>, i: usize, get: impl Fn(&A, usize) -> T) -> Option<T> {
    a.filter(|a| i < a.len() && a.is_valid(i))
        .map(|a| get(a, i))
}

impl Pivot {
    fn new(header: &LogHeader) -> Self {
        let mut columns: HashMap<String, Vec<usize>> = HashMap::new();
        for (k, c) in header.counters.iter().enumerate() {
            let p = &c.path;
            columns
                .entry(path_key(
                    p.machine.as_deref(),
                    &p.object,
                    p.parent.as_deref(),
                    p.instance.as_deref(),
                    p.index,
                    &p.counter,
                ))
                .or_default()
                .push(k);
        }
        Pivot { columns }
    }

    fn records(
        &mut self,
        header: &LogHeader,
        batch: &RecordBatch,
    ) -> Result<Vec<Record>, LogError> {
        self.pivot(header, batch)
            .map_err(|m| LogError::invalid(&header.source, None, m))
    }

    fn pivot(&mut self, header: &LogHeader, batch: &RecordBatch) -> Result<Vec<Record>, String> {
        let rows = batch.num_rows();
        let time = typed::<TimestampMicrosecondArray>(batch, "time")?;
        let machine = Strings::of(batch, "machine")?;
        let object = Strings::of(batch, "object")?;
        let instance = Strings::of(batch, "instance")?;
        let counter = Strings::of(batch, "counter")?;
        let parent = Strings::of(batch, "parent")?;
        let index = typed::<UInt32Array>(batch, "instance_index")?;
        let value = typed::<Float64Array>(batch, "value")?;
        let first = typed_opt::<Int64Array>(batch, "raw_first")?;
        let second = typed_opt::<Int64Array>(batch, "raw_second")?;
        let multi = typed_opt::<UInt32Array>(batch, "multi_count")?;
        // Raw samples only in a log whose columns carry counter information (what computes them).
        let status = match has_raw_columns(header) {
            true => typed_opt::<UInt32Array>(batch, "status")?,
            false => None,
        };

        let time_at = |i: usize| -> Result<i64, String> {
            opt(Some(time), i, |a, i| a.value(i)).ok_or_else(|| format!("row {i}: no time"))
        };
        let mut times = Vec::with_capacity(rows);
        for i in 0..rows {
            times.push(time_at(i)?);
        }
        times.sort_unstable();
        times.dedup();
        let columns = header.counters.len();
        let cells = times.len().saturating_mul(columns);
        if cells > rows.saturating_add(columns) {
            return Err(format!(
                "{rows} rows for {} times of {columns} columns: not whole records",
                times.len()
            ));
        }
        let mut records = Vec::with_capacity(times.len());
        for &t in &times {
            let time = log_time(t).ok_or_else(|| format!("time {t} µs is out of range"))?;
            records.push(Record {
                time,
                cells: vec![Cell::Blank; columns],
            });
        }
        let mut filled = vec![false; cells];

        let mut last: Option<(PathParts<'_>, Option<u32>, usize)> = None;
        for i in 0..rows {
            let parts = [
                machine.get(i),
                object.get(i),
                parent.get(i),
                instance.get(i),
                counter.get(i),
            ];
            let idx = opt(Some(index), i, |a, i| a.value(i));
            let t = time_at(i)?;
            let r = times
                .binary_search(&t)
                .map_err(|_| format!("row {i}: time {t} not found"))?;
            let free = |col: usize| {
                r.checked_mul(columns)
                    .and_then(|b| b.checked_add(col))
                    .filter(|&c| !filled.get(c).copied().unwrap_or(true))
            };
            let cached = last
                .filter(|(p, x, _)| *p == parts && *x == idx)
                .map(|(_, _, c)| c)
                .filter(|&c| free(c).is_some());
            let col = match cached {
                Some(c) => c,
                None => {
                    let [m, o, p, inst, c] = parts;
                    let o = o.ok_or_else(|| format!("row {i}: no object"))?;
                    let c = c.ok_or_else(|| format!("row {i}: no counter"))?;
                    let key = path_key(m, o, p, inst, idx, c);
                    let candidates = self.columns.get(&key).ok_or_else(|| {
                        format!("row {i}: the counter {key:?} is not a column of the log")
                    })?;
                    *candidates
                        .iter()
                        .find(|&&c| free(c).is_some())
                        .ok_or_else(|| {
                            format!("row {i}: a second value of one counter at one time")
                        })?
                }
            };
            last = Some((parts, idx, col));
            let slot = free(col)
                .ok_or_else(|| format!("row {i}: a second value of one counter at one time"))?;
            if let Some(f) = filled.get_mut(slot) {
                *f = true;
            }
            let v = opt(Some(value), i, |a, i| a.value(i));
            let cell = match opt(status, i, |a, i| a.value(i)) {
                Some(s) => {
                    let (Some(f), Some(sec)) = (
                        opt(first, i, |a, i| a.value(i)),
                        opt(second, i, |a, i| a.value(i)),
                    ) else {
                        return Err(format!(
                            "row {i}: a status without raw_first and raw_second"
                        ));
                    };
                    let mut raw = RawCounter::new(f, sec);
                    raw.multi_count = opt(multi, i, |a, i| a.value(i)).unwrap_or(1);
                    Cell::Raw(
                        RawCell {
                            status: PdhStatus(s),
                            raw,
                        },
                        v,
                    )
                }
                None => v.map_or(Cell::Blank, Cell::Value),
            };
            if let Some(out) = records.get_mut(r).and_then(|rec| rec.cells.get_mut(col)) {
                *out = cell;
            }
        }
        Ok(records)
    }
}

/// The long form's column `name` of `batch`, if present.
fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a dyn Array> {
    batch.column_by_name(name).map(|a| a.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        for s in ["", "a\tb", "\\N", "x\\y\nz\r", "Disco físico"] {
            let mut out = String::new();
            escape(&mut out, Some(s));
            assert!(!out.contains('\t') && !out.contains('\n'));
            assert_eq!(unescape(&out), Ok(Some(s.to_owned())));
        }
        let mut out = String::new();
        escape(&mut out, None);
        assert_eq!(unescape(&out), Ok(None));
        assert_eq!(unescape("a\\qb"), Err("unknown escape \\q".to_owned()));
        assert_eq!(unescape("a\\"), Err("unknown escape \\".to_owned()));
    }
}
