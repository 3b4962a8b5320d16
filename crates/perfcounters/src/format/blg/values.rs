//! A decoded log: counter columns as relog names them, and the raw values of every sample.
//!
//! [`BlgLog`] reads the records ahead of the first sample (the name-table chunks and the counter
//! list), then hands out one [`LogSample`] per sample record: its time and one [`SampleValue`] (raw
//! counter, status) per column present in that sample. Columns are discovered as the log is read:
//!
//! * a single counter (sub-record kind 1) is one column, the entry's path;
//! * a wildcard counter (kind 2) has one column per instance name, numbered `#1`, `#2` … for
//!   duplicates within a sample, the way PDH numbers them;
//! * a whole object (kind 5) has one column per displayable counter and instance of its V1 block,
//!   named from the log's embedded name table (or the built-in English table for indexes it lacks),
//!   instances named `parent/child` and `#n` as PDH shows them.
//!
//! Instances that appear later get new columns; instances that vanish have no value in the samples
//! that lack them. [`BlgLog::display_order`] gives the columns in the order relog prints them: entry
//! by entry; within a whole object, counters by name, then instances by first appearance.

use std::collections::HashMap;
use std::io::Read;

use super::container::LogFileHeader;
use super::counters::BlgCounterSpec;
use super::error::{ReadError, Warning};
use super::read::shift;
use super::reader::BlgReader;
use super::record::{PdhRecord, RecordKind};
use super::sample::{InstanceArray, SubRecord};
use crate::counter_type::CounterInfo;
use crate::format::DecodeError;
use crate::names::NameTable;
use crate::path::CounterPath;
use crate::path::{cmp_ignore_case, fold_case};
use crate::raw::RawCounter;
use crate::snapshot::{Instance, ObjectData, Snapshot, Value};
use crate::status::PdhStatus;

/// One counter instance of the log: a column of relog's output. The same column model as every
/// log's: a parsed counter path and the counter info, from the counter list to every consumer
/// without a trip through a string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The counter instance, parsed: machine, object, the instance's parent, its name as stored and
    /// its `#n` (none for the first of a name), counter. Its [`Display`](std::fmt::Display) form is
    /// the path relog prints, `\\MACHINE\Object(parent/instance#n)\Counter`.
    pub path: CounterPath,
    /// What the column's raw values need: counter type, time base, default scale.
    pub info: CounterInfo,
    /// The counter-list entry it comes from.
    pub entry: usize,
    /// The 0-based number of the first sample that has this column.
    pub first_sample: u64,
}

impl Column {
    /// The instance as PDH shows it (`parent/name#n`), when the object has instances.
    pub fn instance(&self) -> Option<String> {
        self.path.instance_string()
    }
}

/// The raw value of one column in one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleValue {
    /// The column ([`BlgLog::columns`]).
    pub column: usize,
    /// The raw value; `time` is its UTC time stamp.
    pub raw: RawCounter,
    /// The stored `CStatus` (0 = valid).
    pub status: PdhStatus,
}

/// One sample of a log.
#[derive(Clone, Copy, Debug)]
pub struct LogSample<'a> {
    /// 0-based number of the sample.
    pub index: u64,
    /// The sample's time, local time as a FILETIME: the `TimeStamp` of its first stored
    /// `PDH_RAW_COUNTER` (kinds 1 and 2), else the record's event time stamp (logs of whole objects,
    /// where it equals the blocks' local `SystemTime`). This is the time relog prints.
    pub time: i64,
    /// The time stamp of the sample record's first event (local FILETIME). It equals `time` in the
    /// Vista and Windows 8 logs; in the Server 2003 log it runs 86 s behind the counters' time
    /// stamps and the log's start time.
    pub record_time: i64,
    /// File offset of the sample record.
    pub offset: usize,
    /// The values, one per column present in the sample.
    pub values: &'a [SampleValue],
}

/// What the trailer of a closed log of whole objects says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrailerSummary {
    /// Time of the first sample (local FILETIME).
    pub first_time: i64,
    /// Time of the last sample (local FILETIME).
    pub last_time: i64,
    /// Samples counted by the writer.
    pub samples: u32,
    /// Counter-list entries.
    pub entries: u32,
    /// File offset of the trailer record.
    pub offset: usize,
}

#[derive(Debug, Default)]
struct EntryColumns {
    single: Option<usize>,
    /// Kind 2: an instance name's UTF-16LE spelling → its group.
    by_spelling: HashMap<Vec<u8>, usize>,
    /// Kind 2: a folded instance name → its group.
    by_folded: HashMap<String, usize>,
    /// Kind 2: instance names equal ignoring case.
    groups: Vec<Group>,
    /// Kind 2: the previous sample's instances in stored order (UTF-16LE spelling, group), so that
    /// an unchanged instance list is matched by comparing bytes, without hashing.
    previous: Vec<(Vec<u8>, usize)>,
    /// Kind 2: the previous sample's array as far as its names go: the bytes of its names region
    /// and each item's name offset. An array equal in both names the instances of `previous`.
    previous_names: Vec<u8>,
    previous_offsets: Vec<u32>,
    /// Kind 2: the column of each item of the previous sample's array, in order: an array that
    /// names the same instances in the same order has the same columns (the n-th occurrence of a
    /// name is the n-th again), so its values go there without a group's lookup.
    previous_columns: Vec<usize>,
    /// Kind 5: (folded counter name, folded instance) → column.
    by_key: HashMap<(String, Option<String>), usize>,
}

/// The instances of a wildcard counter whose names are equal ignoring case: PDH numbers them
/// `name`, `name#1`, … in data order within each sample.
#[derive(Debug)]
struct Group {
    /// The column of the n-th occurrence.
    columns: Vec<usize>,
    /// The sample `seen` counts in.
    sample: u64,
    /// Occurrences so far in that sample.
    seen: u32,
}

impl Default for Group {
    fn default() -> Self {
        Group {
            columns: Vec::new(),
            sample: u64::MAX,
            seen: 0,
        }
    }
}

/// A binary log read sample by sample, with its columns.
#[derive(Debug)]
pub struct BlgLog<R> {
    reader: BlgReader<R>,
    specs: Vec<BlgCounterSpec>,
    names: NameTable,
    columns: Vec<Column>,
    entries: Vec<EntryColumns>,
    values: Vec<SampleValue>,
    samples: u64,
    first_time: Option<i64>,
    last_time: Option<i64>,
    trailer: Option<TrailerSummary>,
    counter_list_offset: usize,
    tz: super::TimeZoneInformation,
    utc: UtcMemo,
    columns_only: bool,
    times_only: bool,
    objects: Option<Snapshot>,
    /// A part of a split scan: trailers are noted (samples before them in the part, the count
    /// they state) instead of checked.
    part: Option<PartNotes>,
}

/// What a part of a split scan leaves to the whole scan to check.
#[derive(Debug, Default)]
pub(crate) struct PartNotes {
    /// Trailers: (samples before it in the part, samples the trailer counts).
    pub trailers: Vec<(u64, u32)>,
    /// Whether a sample had V1 blocks (whose columns depend on the name tables read before).
    pub blocks: bool,
}

/// What identifies a column of a single or wildcard counter wherever in the log it first appears.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ColumnKey {
    /// The column of a single counter's entry.
    Single(usize),
    /// Entry, folded instance name, `#n`.
    Instance(usize, String, Option<u32>),
}

impl<R: Read> BlgLog<R> {
    /// A log read from the buffer at file offset `start` (`src` positioned there) until
    /// [`BlgLog::set_part_end`]'s offset, with this log's header, counter list and name table: a
    /// part of a split column scan. Its columns are those first seen in the part.
    pub(crate) fn part(&self, src: R, start: usize) -> BlgLog<R> {
        BlgLog {
            reader: BlgReader::part(src, &self.reader, start),
            specs: self.specs.clone(),
            names: self.names.clone(),
            columns: Vec::new(),
            entries: self.specs.iter().map(|_| EntryColumns::default()).collect(),
            values: Vec::new(),
            samples: 0,
            first_time: None,
            last_time: None,
            trailer: None,
            counter_list_offset: self.counter_list_offset,
            tz: self.tz.clone(),
            utc: UtcMemo::default(),
            columns_only: self.columns_only,
            times_only: self.times_only,
            objects: None,
            part: Some(PartNotes::default()),
        }
    }

    /// Makes this log a part of a split scan that ends before the first record starting at or
    /// after file offset `end` ([`BlgReader::set_part_end`]).
    pub(crate) fn set_part_end(&mut self, end: usize) {
        self.reader.set_part_end(end);
        self.part.get_or_insert_with(PartNotes::default);
    }

    /// A part's notes (trailers seen, blocks met).
    pub(crate) fn part_notes(&self) -> Option<&PartNotes> {
        self.part.as_ref()
    }

    /// The key of each column ([`ColumnKey`]); `None` for a column of V1 blocks.
    pub(crate) fn column_keys(&self) -> Vec<Option<ColumnKey>> {
        self.columns
            .iter()
            .enumerate()
            .map(|(c, column)| {
                let entry = self.entries.get(column.entry)?;
                if entry.single == Some(c) {
                    return Some(ColumnKey::Single(column.entry));
                }
                entry.by_key.is_empty().then(|| {
                    ColumnKey::Instance(
                        column.entry,
                        column
                            .path
                            .instance
                            .as_deref()
                            .map_or_else(String::new, |i| fold_case(i).into_owned()),
                        column.path.index,
                    )
                })
            })
            .collect()
    }

    /// Opens a log: reads the header and the records up to and including the counter list.
    pub fn new(src: R) -> Result<BlgLog<R>, ReadError> {
        let mut reader = BlgReader::new(src)?;
        let mut names = NameTable::new();
        let mut list: Option<(Vec<BlgCounterSpec>, usize)> = None;
        // The first sample before the counter list, and how many there are.
        let mut early: Option<(usize, u64)> = None;
        while list.is_none() {
            let Some(record) = reader.next_record() else {
                return Err(ReadError::NoCounterList);
            };
            let record = record?;
            match record.kind {
                RecordKind::NameTable => names.merge(&record.name_chunk()?.table()?),
                RecordKind::CounterList => {
                    let l = record.counter_list()?;
                    let specs = l.entries().iter().map(|e| e.to_spec()).collect();
                    let known = l.has_known_prefix();
                    let offset = record.offset;
                    list = Some((specs, offset));
                    if !known {
                        reader.warn(
                            offset,
                            "the counter list starts with an unknown prefix; read as usual".into(),
                        );
                    }
                }
                // A sample before the counter list has no columns to be read into (another log
                // wrote to the file first, or the start of this one is gone): skipped and counted.
                RecordKind::Sample => {
                    early.get_or_insert((record.offset, 0)).1 += 1;
                }
                RecordKind::Trailer | RecordKind::Other(_) => {}
            }
        }
        if let Some((offset, n)) = early {
            let samples = if n == 1 { "sample" } else { "samples" };
            reader.warn(
                offset,
                format!("{n} {samples} before the counter list skipped, the first at this offset"),
            );
        }
        let (specs, counter_list_offset) = list.unwrap_or_default();
        let entries = specs.iter().map(|_| EntryColumns::default()).collect();
        let tz = reader.header().time_zone.clone();
        Ok(BlgLog {
            tz,
            utc: UtcMemo::default(),
            columns_only: false,
            times_only: false,
            objects: None,
            part: None,
            reader,
            specs,
            names,
            columns: Vec::new(),
            entries,
            values: Vec::new(),
            samples: 0,
            first_time: None,
            last_time: None,
            trailer: None,
            counter_list_offset,
        })
    }

    /// The log-file header.
    pub fn header(&self) -> &LogFileHeader {
        self.reader.header()
    }

    /// The counter-list entries.
    pub fn specs(&self) -> &[BlgCounterSpec] {
        &self.specs
    }

    /// File offset of the counter-list record.
    pub fn counter_list_offset(&self) -> usize {
        self.counter_list_offset
    }

    /// The embedded name table (empty for logs of single and wildcard counters).
    pub fn names(&self) -> &NameTable {
        &self.names
    }

    /// The columns discovered so far (all of them once the log has been read to its end).
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Samples read so far.
    pub fn samples_read(&self) -> u64 {
        self.samples
    }

    /// Time of the first and the last sample read so far (local FILETIMEs).
    pub fn time_range(&self) -> Option<(i64, i64)> {
        self.first_time.zip(self.last_time)
    }

    /// The trailer, once read.
    pub fn trailer(&self) -> Option<TrailerSummary> {
        self.trailer
    }

    /// The warnings so far.
    pub fn warnings(&self) -> &[Warning] {
        self.reader.warnings()
    }

    /// Takes the warnings collected so far.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        self.reader.take_warnings()
    }

    /// The underlying record reader.
    pub fn reader(&self) -> &BlgReader<R> {
        &self.reader
    }

    /// With `true`, later samples only find the columns (and their times): their
    /// [`LogSample::values`] are empty. A first pass that only needs every column (as relog's does
    /// before writing a header) runs faster this way.
    pub fn set_columns_only(&mut self, columns_only: bool) {
        self.columns_only = columns_only;
    }

    /// With `true`, later samples give only their time ([`LogSample::time`], the same as a full
    /// read gives): their [`LogSample::values`] are empty and single and wildcard counters find no
    /// column, so only the records' framing is read. A pass that needs the samples' times alone
    /// (`analyze --interval auto`'s first) runs at the speed of reading the file this way.
    ///
    /// Errors and warnings are those of a full read: each sample record is checked as a full read
    /// checks it ([`PdhSample::parse`](super::sample::PdhSample::parse): the framing of every sub-record,
    /// the fixed layouts of single and wildcard counters, their instance names' bounds), and the
    /// V1 blocks of whole-object entries, whose decoding can fail, are decoded as with
    /// [`set_columns_only`](Self::set_columns_only). [`columns`](Self::columns) then holds the
    /// columns of whole objects only.
    pub fn set_times_only(&mut self, times_only: bool) {
        self.times_only = times_only;
    }

    /// The whole objects of the last sample read: the objects of its V1 blocks (whole-object
    /// entries), named from the embedded name table (then the built-in English one), instances named
    /// as PDH shows them, each object with its block's clock. `None` when the sample has no block.
    pub fn last_objects(&self) -> Option<&Snapshot> {
        self.objects.as_ref()
    }

    /// The columns in the order relog prints them: by entry; within a whole-object entry, by
    /// counter name (case-insensitive), then by first appearance; otherwise by first appearance.
    pub fn display_order(&self) -> Vec<usize> {
        display_order(&self.specs, &self.columns)
    }

    /// The next sample, or `None` at the end of the log.
    #[allow(clippy::should_implement_trait)]
    pub fn next_sample(&mut self) -> Option<Result<LogSample<'_>, ReadError>> {
        loop {
            let record = match self.reader.next_record()? {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            match record.kind {
                RecordKind::Sample => {
                    // The record borrows the reader; decode it into owned values first.
                    let (record_time, offset) = (record.time, record.offset);
                    let mut decoder = Decoder {
                        specs: &self.specs,
                        names: &self.names,
                        columns: &mut self.columns,
                        entries: &mut self.entries,
                        values: &mut self.values,
                        columns_only: self.columns_only || self.times_only,
                        times_only: self.times_only,
                        objects: &mut self.objects,
                        sample: self.samples,
                        tz: &self.tz,
                        utc: &mut self.utc,
                        warnings: Vec::new(),
                        time: None,
                    };
                    let result = decoder.decode(&record);
                    let time = decoder.time.unwrap_or(record_time);
                    let warnings = std::mem::take(&mut decoder.warnings);
                    for (o, m) in warnings {
                        self.reader.warn(o, m);
                    }
                    if let Err(e) = result {
                        return Some(Err(e.into()));
                    }
                    if let Some(notes) = &mut self.part {
                        notes.blocks |= self.objects.is_some();
                    }
                    let index = self.samples;
                    self.samples += 1;
                    self.first_time.get_or_insert(time);
                    self.last_time = Some(time);
                    return Some(Ok(LogSample {
                        index,
                        time,
                        record_time,
                        offset,
                        values: &self.values,
                    }));
                }
                RecordKind::NameTable => {
                    let table = record.name_chunk().and_then(|c| c.table());
                    match table {
                        Ok(t) => self.names.merge(&t),
                        Err(e) => return Some(Err(e.into())),
                    }
                }
                RecordKind::Trailer => {
                    let t = match record.trailer() {
                        Ok(t) => t,
                        Err(e) => return Some(Err(e.into())),
                    };
                    let summary = TrailerSummary {
                        first_time: t.first_time(),
                        last_time: t.last_time(),
                        samples: t.samples(),
                        entries: t.entries(),
                        offset: record.offset,
                    };
                    self.trailer = Some(summary);
                    if let Some(notes) = &mut self.part {
                        notes.trailers.push((self.samples, summary.samples));
                    } else if u64::from(summary.samples) != self.samples {
                        let m = format!(
                            "the trailer counts {} samples, the log holds {} before it",
                            summary.samples, self.samples
                        );
                        self.reader.warn(summary.offset, m);
                    }
                }
                RecordKind::CounterList => {
                    let offset = record.offset;
                    self.reader
                        .warn(offset, "a second counter list; ignored".into());
                }
                RecordKind::Other(_) => {}
            }
        }
    }
}

/// The columns in the order relog prints them ([`BlgLog::display_order`]).
pub(crate) fn display_order(specs: &[BlgCounterSpec], columns: &[Column]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..columns.len()).collect();
    let whole = |c: &Column| {
        specs
            .get(c.entry)
            .is_some_and(BlgCounterSpec::is_whole_object)
    };
    order.sort_by(|&a, &b| {
        let (ca, cb) = (&columns[a], &columns[b]);
        ca.entry.cmp(&cb.entry).then_with(|| {
            if whole(ca) {
                cmp_ignore_case(&ca.path.counter, &cb.path.counter).then(a.cmp(&b))
            } else {
                a.cmp(&b)
            }
        })
    });
    order
}

/// The last local → UTC conversion: the values of a sample share their time stamps, and a local
/// time repeated when daylight saving time ends comes after the time before it.
#[derive(Clone, Copy, Debug, Default)]
struct UtcMemo {
    local: i64,
    utc: i64,
    valid: bool,
}

impl UtcMemo {
    fn convert(&mut self, tz: &super::TimeZoneInformation, local: i64) -> i64 {
        if !self.valid || self.local != local {
            let previous = self.valid.then_some(self.utc);
            *self = UtcMemo {
                local,
                utc: tz.to_utc_after(local, previous),
                valid: true,
            };
        }
        self.utc
    }
}

/// Decodes one sample into values, adding columns as they appear.
struct Decoder<'s> {
    specs: &'s [BlgCounterSpec],
    names: &'s NameTable,
    columns: &'s mut Vec<Column>,
    entries: &'s mut Vec<EntryColumns>,
    values: &'s mut Vec<SampleValue>,
    /// Find the columns only: no values.
    columns_only: bool,
    /// The time only: no value, and no column of single or wildcard counters.
    times_only: bool,
    /// The whole objects of the sample (its V1 blocks, named).
    objects: &'s mut Option<Snapshot>,
    sample: u64,
    tz: &'s super::TimeZoneInformation,
    utc: &'s mut UtcMemo,
    warnings: Vec<(usize, String)>,
    /// The time stamp of the first stored `PDH_RAW_COUNTER`.
    time: Option<i64>,
}

impl Decoder<'_> {
    fn decode(&mut self, record: &PdhRecord<'_>) -> Result<(), DecodeError> {
        self.values.clear();
        *self.objects = None;
        let sample = record.sample()?;
        if sample.len() != self.specs.len() {
            self.warnings.push((
                record.offset,
                format!(
                    "the sample has {} sub-records for {} counter-list entries; extra ones are ignored",
                    sample.len(),
                    self.specs.len()
                ),
            ));
        }
        if sample.trailing_bytes() != 0 {
            self.warnings.push((
                record.offset,
                format!(
                    "{} bytes after the sample's declared length; ignored",
                    sample.trailing_bytes()
                ),
            ));
        }
        let mut blocks: Vec<(usize, Snapshot)> = Vec::new();
        for (entry, sub) in sample.sub_records().enumerate().take(self.specs.len()) {
            match sub {
                SubRecord::Counter(r) => {
                    self.time.get_or_insert(r.time_stamp);
                    if self.times_only {
                        continue;
                    }
                    let column = self.single_column(entry);
                    if !self.columns_only {
                        let time = self.utc.convert(self.tz, r.time_stamp);
                        self.push(column, r.raw().with_time(time), r.status);
                    }
                }
                SubRecord::Instances(a) => {
                    self.time.get_or_insert(a.time_stamp());
                    if self.times_only {
                        continue;
                    }
                    self.instances(entry, &a);
                }
                SubRecord::Block(b) => {
                    let block = b.parse().map_err(|e| record.relocate(e))?;
                    let snap = block
                        .to_snapshot()
                        .map_err(|e| record.relocate(shift(e, b.offset)))?;
                    blocks.push((entry, snap));
                }
                SubRecord::Unknown { kind, offset, .. } => self.warnings.push((
                    record.file_offset(offset),
                    format!("sample sub-record of unknown kind {kind}; skipped"),
                )),
            }
        }
        if !blocks.is_empty() {
            *self.objects = Some(self.blocks(blocks));
        }
        Ok(())
    }

    fn new_column(&mut self, column: Column) -> usize {
        self.columns.push(column);
        self.columns.len() - 1
    }

    fn push(&mut self, column: usize, raw: RawCounter, status: PdhStatus) {
        if self.columns_only {
            return;
        }
        self.values.push(SampleValue {
            column,
            raw,
            status,
        });
    }

    fn single_column(&mut self, entry: usize) -> usize {
        if let Some(c) = self.entries[entry].single {
            return c;
        }
        let spec = &self.specs[entry];
        let column = Column {
            path: spec.path(),
            info: spec.info(),
            entry,
            first_sample: self.sample,
        };
        let c = self.new_column(column);
        self.entries[entry].single = Some(c);
        c
    }

    fn instances(&mut self, entry: usize, array: &InstanceArray<'_>) {
        let status = array.status();
        let time = self.utc.convert(self.tz, array.time_stamp());
        if self.same_instances(entry, array) {
            // The previous sample's instances in the same order: their columns, without reading
            // a name or looking a group up (most samples of a log). A group's count of its
            // occurrences in this sample is left as it was: the next array that counts starts
            // it again (another sample).
            if self.entries[entry].previous_columns.len() == array.len() {
                if self.columns_only {
                    // The columns are the previous sample's: nothing to add, no value to read.
                    return;
                }
                for (position, (_, raw)) in array.item_values().enumerate() {
                    if let Some(&column) = self.entries[entry].previous_columns.get(position) {
                        self.push(column, raw.with_time(time), status);
                    }
                }
                return;
            }
            self.entries[entry].previous_columns.clear();
            for (position, (_, raw)) in array.item_values().enumerate() {
                let group = self.entries[entry].previous[position].1;
                let column = self.occurrence_column(entry, group, || {
                    array
                        .items()
                        .nth(position)
                        .map(|i| i.name())
                        .unwrap_or_default()
                });
                self.entries[entry].previous_columns.push(column);
                self.push(column, raw.with_time(time), status);
            }
            return;
        }
        self.entries[entry].previous_columns.clear();
        for (position, item) in array.items().enumerate() {
            let raw = item.raw().with_time(time);
            // The group of names equal ignoring case: the previous sample's at this position when
            // the spelling is the same, else found by the spelling (no allocation for names seen
            // before), else by the folded name.
            let e = &self.entries[entry];
            let same = e
                .previous
                .get(position)
                .filter(|(name, _)| name.as_slice() == item.name_bytes())
                .map(|&(_, g)| g);
            let known = same.or_else(|| e.by_spelling.get(item.name_bytes()).copied());
            let group = match known {
                Some(g) => g,
                None => {
                    let name = item.name();
                    let folded = fold_case(&name).into_owned();
                    let e = &mut self.entries[entry];
                    let g = match e.by_folded.get(&folded) {
                        Some(&g) => g,
                        None => {
                            e.groups.push(Group::default());
                            e.by_folded.insert(folded, e.groups.len() - 1);
                            e.groups.len() - 1
                        }
                    };
                    e.by_spelling.insert(item.name_bytes().to_vec(), g);
                    g
                }
            };
            if same.is_none() {
                let previous = &mut self.entries[entry].previous;
                previous.truncate(position);
                previous.push((item.name_bytes().to_vec(), group));
            }
            let column = self.occurrence_column(entry, group, || item.name());
            self.entries[entry].previous_columns.push(column);
            self.push(column, raw, status);
        }
        let e = &mut self.entries[entry];
        e.previous.truncate(array.len());
        e.previous_names.clear();
        e.previous_names.extend_from_slice(array.names_region());
        e.previous_offsets.clear();
        e.previous_offsets
            .extend(array.item_values().map(|(offset, _)| offset));
    }

    /// Whether `array` names the instances of the previous sample of `entry`, in the same order:
    /// the same count, name offsets and names region.
    fn same_instances(&self, entry: usize, array: &InstanceArray<'_>) -> bool {
        let e = &self.entries[entry];
        e.previous.len() == array.len()
            && e.previous_offsets.len() == array.len()
            && e.previous_names.as_slice() == array.names_region()
            && array
                .item_values()
                .map(|(offset, _)| offset)
                .eq(e.previous_offsets.iter().copied())
    }

    /// The column of the next occurrence in this sample of an instance of `group` (PDH numbers the
    /// n-th occurrence of a name `name#n`), created the first time with the name `name` gives.
    fn occurrence_column(
        &mut self,
        entry: usize,
        group: usize,
        name: impl FnOnce() -> String,
    ) -> usize {
        let sample = self.sample;
        let g = &mut self.entries[entry].groups[group];
        if g.sample != sample {
            g.sample = sample;
            g.seen = 0;
        }
        let n = g.seen;
        g.seen = g.seen.saturating_add(1);
        if let Some(&c) = g.columns.get(n as usize) {
            return c;
        }
        let spec = &self.specs[entry];
        let mut path = spec.path();
        path.instance = Some(name());
        path.index = (n > 0).then_some(n);
        let column = Column {
            path,
            info: spec.info(),
            entry,
            first_sample: sample,
        };
        let c = self.new_column(column);
        self.entries[entry].groups[group].columns.push(c);
        c
    }

    /// Whole-object entries: the V1 blocks of one sample, named together (parents may sit in
    /// another entry's block), each object keeping its own block's clock.
    fn blocks(&mut self, blocks: Vec<(usize, Snapshot)>) -> Snapshot {
        let mut merged = Snapshot::default();
        let mut owners = Vec::new();
        for (entry, snap) in blocks {
            let clock = snap.clock();
            for mut object in snap.objects {
                object.sample_clock = Some(clock);
                owners.push(entry);
                merged.objects.push(object);
            }
        }
        self.names.apply(&mut merged);
        NameTable::builtin_english().apply(&mut merged);
        crate::format::v1::resolve_instance_names(&mut merged);
        for (object, entry) in merged.objects.iter().zip(owners) {
            let spec = &self.specs[entry];
            let rows: Vec<(Option<&Instance>, &[Value])> = match &object.data {
                ObjectData::Single(values) => vec![(None, values.as_slice())],
                ObjectData::Instances(instances) => {
                    instances.iter().map(|i| (Some(i), i.values())).collect()
                }
                ObjectData::MetadataOnly { .. } => Vec::new(),
            };
            for (i, def) in object.counters.iter().enumerate() {
                if !def.counter_type.is_displayable() {
                    continue;
                }
                let counter = def.name.clone().unwrap_or_else(|| def.index.to_string());
                for &(inst, values) in &rows {
                    let instance = inst.map(|i| i.name());
                    let Some(raw) = merged.raw_counter(object, values, i) else {
                        continue;
                    };
                    let key = (
                        fold_case(&counter).into_owned(),
                        instance.map(|n| fold_case(n).into_owned()),
                    );
                    let column = match self.entries[entry].by_key.get(&key) {
                        Some(&c) => c,
                        None => {
                            let mut path = spec.path();
                            path.counter = counter.clone();
                            path.parent = inst.and_then(|i| i.parent().map(str::to_owned));
                            path.instance = inst.map(|i| i.raw_name().to_owned());
                            path.index = inst.map(|i| i.index).filter(|&n| n > 0);
                            let column = Column {
                                path,
                                info: CounterInfo {
                                    counter_type: def.counter_type,
                                    default_scale: def.scale,
                                    time_base: merged.time_base(object, def.counter_type),
                                },
                                entry,
                                first_sample: self.sample,
                            };
                            let c = self.new_column(column);
                            self.entries[entry].by_key.insert(key, c);
                            c
                        }
                    };
                    self.push(column, raw, PdhStatus::PDH_CSTATUS_VALID_DATA);
                }
            }
        }
        merged
    }
}
