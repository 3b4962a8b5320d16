//! One pipeline from log inputs to a sink: what `relog`, `analyze`, `serve --replay` and the Python
//! package's `read_log` build, so that none of them opens, merges, filters or names by hand.
//!
//! ```text
//! inputs (files, patterns, SQL:file.db!log, datasets, ─► open ─► merge ─► filter ─► sink
//!         logs in memory)
//!                                                       counters (-c, with did-you-mean when none
//!                                                       matches), -b/-e, -t, names (NameTables)
//! ```
//!
//! A [`Pipeline`] says what to read; [`Pipeline::open`] opens it into an [`Opened`] log, a
//! [`LogReader`] of the records kept, with what the readers stepped over
//! ([`Opened::warnings`]) and why a counter path selects nothing ([`Opened::unmatched`]). Sinks are
//! the consumers of a reader: [`Opened::copy_into`] a [`LogWriter`] (returning relog's summary),
//! [`Opened::summary`] (relog's `-q`), [`Opened::statistics`], and analysis
//! ([`crate::analyze::analyze_pipeline`]).
//!
//! ```
//! use perfcounters::log::pipeline::Pipeline;
//!
//! let dir = std::env::temp_dir().join(format!("pc-pipeline-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let log = dir.join("cpu.csv");
//! std::fs::write(
//!     &log,
//!     "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\M\\Processor(_Total)\\% Processor Time\"\r\n\
//!      \"02/01/2014 00:00:00.000\",\"12.5\"\r\n\
//!      \"02/01/2014 00:00:01.000\",\"37.5\"\r\n",
//! )
//! .unwrap();
//!
//! // A misspelt object: the pipeline refuses, with the log's close names.
//! let wrong = Pipeline::new([log.to_str().unwrap()]).counters([r"\Procesor(*)\*"]);
//! let error = wrong.open().unwrap_err();
//! assert!(error.to_string().contains("did you mean \"Processor\""), "{error}");
//!
//! let mut opened = Pipeline::new([log.to_str().unwrap()])
//!     .counters([r"\Processor(*)\*"])
//!     .open()
//!     .unwrap();
//! let stats = opened.statistics().unwrap();
//! let st = stats[0].stats.as_ref().unwrap();
//! assert_eq!((st.min, st.mean, st.max), (12.5, 25.0, 37.5));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::fmt;
use std::sync::OnceLock;

use crate::calc::FormatOptions;
use crate::error_chain::ErrorChain;
use crate::names::{LogLanguage, NameTables};
use crate::path::{eq_ignore_case, CounterPath, PathError};
use crate::suggest::{suggest, DidYouMean};

use super::error::LogError;
use super::memory::{open_bytes, LogBytes};
use super::model::{
    LogCounter, LogHeader, LogKind, LogReader, LogTime, LogWriter, Record, ValueColumns, ValueRows,
};
use super::open::{open, OpenOptions};
use super::relog::{copy, CounterFilter, Filtered, LogSummary, Merge, RelogFilter};
use super::stats::{log_statistics, CounterStatistics};

/// A `-b` / `-e` bound: a local time of the log's zone (as relog reads `-b`), or a UTC instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBound {
    /// A wall-clock time of the (first) log's zone.
    Local(LogTime),
    /// A UTC instant.
    Utc(LogTime),
}

impl TimeBound {
    /// The bound as a local time of `header`'s zone.
    pub fn local(self, header: &LogHeader) -> LogTime {
        match self {
            TimeBound::Local(t) => t,
            TimeBound::Utc(t) => header.to_local(t),
        }
    }
}

/// A counter path as given (its text) and as parsed.
#[derive(Clone, Debug)]
struct Pattern {
    text: String,
    path: Result<CounterPath, PathError>,
}

/// What to read and keep: the inputs, the counters, the time range, every n-th record and the
/// name tables (see the [module documentation](self)).
#[derive(Clone, Debug)]
pub struct Pipeline {
    inputs: Vec<String>,
    /// The inputs held in memory, each named in `inputs` by its name.
    memory: Vec<LogBytes>,
    options: OpenOptions,
    patterns: Vec<Pattern>,
    names: NameTables,
    begin: Option<TimeBound>,
    end: Option<TimeBound>,
    every: u64,
    format: FormatOptions,
    require_match: bool,
}

impl Pipeline {
    /// A pipeline of `inputs`: files, file-name patterns, `SQL:file.db!log` targets and dataset
    /// directories, as [`open`](super::open()) takes them; several merge as relog merges them.
    /// It keeps every counter and record until told otherwise.
    pub fn new<I, S>(inputs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Pipeline {
            inputs: inputs.into_iter().map(Into::into).collect(),
            memory: Vec::new(),
            options: OpenOptions::default(),
            patterns: Vec::new(),
            names: NameTables::default(),
            begin: None,
            end: None,
            every: 1,
            format: FormatOptions::typeperf(),
            require_match: true,
        }
    }

    /// The inputs (a log in memory by its name).
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    /// Adds `log`, a log held in memory, as the next input: it is read as a file of the same
    /// content ([`open_bytes`]) and named by [`LogBytes::name`], in [`inputs`](Self::inputs) and
    /// in messages. An input of that name (here or given to [`with_inputs`](Self::with_inputs))
    /// is this log, not a file.
    pub fn log_bytes(mut self, log: LogBytes) -> Self {
        self.inputs.push(log.name().to_owned());
        self.memory.push(log);
        self
    }

    /// This pipeline over other `inputs`, with every other setting (counters, names, time range,
    /// code page, the logs in memory that inputs may name) kept: one machine's logs of a fleet,
    /// say.
    pub fn with_inputs<I, S>(&self, inputs: I) -> Pipeline
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Pipeline {
            inputs: inputs.into_iter().map(Into::into).collect(),
            ..self.clone()
        }
    }

    /// The ANSI code page of text logs without a byte-order mark (default 1252).
    pub fn code_page(mut self, code_page: Option<u16>) -> Self {
        self.options = self.options.with_code_page(code_page);
        self
    }

    /// Keeps only the counters these paths select (wildcards as in relog's `-c`), added to those
    /// given before. A path that does not parse is reported by [`open`](Self::open).
    pub fn counters<I, S>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for p in paths {
            let text: String = p.into();
            let path = CounterPath::parse(&text);
            self.patterns.push(Pattern { text, path });
        }
        self
    }

    /// Keeps only the counters these parsed paths select, added to those given before.
    pub fn counter_paths<I: IntoIterator<Item = CounterPath>>(mut self, paths: I) -> Self {
        for p in paths {
            self.patterns.push(Pattern {
                text: p.to_string(),
                path: Ok(p),
            });
        }
        self
    }

    /// Whether counter paths were given.
    pub fn has_counters(&self) -> bool {
        !self.patterns.is_empty()
    }

    /// Whether [`open`](Self::open) fails when counter paths were given and none selects a column
    /// of the log (default); an analysis, whose rules name far more counters than any log holds,
    /// turns it off.
    pub fn require_match(mut self, require: bool) -> Self {
        self.require_match = require;
        self
    }

    /// Matches names across languages through `names` (see [`NameTables`]).
    pub fn names(mut self, names: NameTables) -> Self {
        self.names = names;
        self
    }

    /// The name tables.
    pub fn name_tables(&self) -> &NameTables {
        &self.names
    }

    /// Keeps the records at or after `begin` (relog's `-b`).
    pub fn begin(mut self, begin: Option<TimeBound>) -> Self {
        self.begin = begin;
        self
    }

    /// Keeps the records at or before `end` (relog's `-e`).
    pub fn end(mut self, end: Option<TimeBound>) -> Self {
        self.end = end;
        self
    }

    /// The begin bound.
    pub fn begin_bound(&self) -> Option<TimeBound> {
        self.begin
    }

    /// The end bound.
    pub fn end_bound(&self) -> Option<TimeBound> {
        self.end
    }

    /// Keeps every n-th record of the range, the first one included (relog's `-t`); 0 and 1 keep
    /// all.
    pub fn every(mut self, every: u64) -> Self {
        self.every = every.max(1);
        self
    }

    /// How raw samples are turned into values (default: as typeperf).
    pub fn format(mut self, format: FormatOptions) -> Self {
        self.format = format;
        self
    }

    /// The name tables a log whose header is `header` is matched through: those given
    /// ([`names`](Self::names)), and when its objects are named in another language that the
    /// built-in table knows, that table's ([`NameTables::for_log`], [`LogLanguage`]).
    pub fn names_for(&self, header: &LogHeader) -> NameTables {
        self.names.for_log(&language_of(header))
    }

    /// The counter filter of the paths given, matching through the name tables given; `None`
    /// when no path was given. [`open`](Self::open) adds the built-in tables a localized log
    /// needs ([`names_for`](Self::names_for)).
    ///
    /// # Errors
    /// A path does not parse.
    pub fn counter_filter(&self) -> Result<Option<CounterFilter>, PipelineError> {
        self.counter_filter_with(&self.names)
    }

    fn counter_filter_with(
        &self,
        names: &NameTables,
    ) -> Result<Option<CounterFilter>, PipelineError> {
        if self.patterns.is_empty() {
            return Ok(None);
        }
        let mut paths = Vec::with_capacity(self.patterns.len());
        for p in &self.patterns {
            match &p.path {
                Ok(path) => paths.push(path.clone()),
                Err(e) => {
                    return Err(PipelineError::InvalidPath {
                        path: p.text.clone(),
                        error: e.clone(),
                    })
                }
            }
        }
        Ok(Some(
            CounterFilter::new(paths).with_names(names.for_matching()),
        ))
    }

    /// Opens every input as it is (no merge, no filter), with what the readers stepped over; with
    /// `times_only`, readers of the records' times alone where a format has them
    /// ([`OpenOptions::times_only`]).
    ///
    /// # Errors
    /// An input cannot be opened, or there is none.
    pub fn open_inputs(&self, times_only: bool) -> Result<Inputs, PipelineError> {
        let options = self.options.with_times_only(times_only);
        let mut readers = Vec::new();
        for i in &self.inputs {
            readers.extend(self.open_with(i, &options)?);
        }
        if readers.is_empty() {
            return Err(PipelineError::NoInput);
        }
        let logs = readers
            .iter()
            .map(|r| InputLog {
                source: r.header().source.clone(),
                kind: r.header().kind,
                encoding: r.text_encoding(),
            })
            .collect();
        let warnings = readers
            .iter()
            .flat_map(|r| r.warnings().iter().cloned())
            .collect();
        Ok(Inputs {
            readers,
            logs,
            warnings,
        })
    }

    /// Opens one input (one of [`inputs`](Self::inputs)) on its own, for its header and
    /// columns: its readers (a pattern's files, in name order), with this pipeline's open options.
    ///
    /// # Errors
    /// The input cannot be opened.
    pub fn open_input(&self, input: &str) -> Result<Vec<Box<dyn LogReader>>, LogError> {
        self.open_with(input, &self.options)
    }

    /// The readers of `input`: the log in memory of that name, else what [`open`] opens.
    fn open_with(
        &self,
        input: &str,
        options: &OpenOptions,
    ) -> Result<Vec<Box<dyn LogReader>>, LogError> {
        match self.memory.iter().find(|m| m.name() == input) {
            Some(log) => Ok(vec![open_bytes(log, options)?]),
            None => open(input, options),
        }
    }

    /// The relog filter of this pipeline for a log whose header is `header` (bounds in its zone,
    /// names matched through [`names_for`](Self::names_for)).
    ///
    /// # Errors
    /// A counter path does not parse.
    pub fn relog_filter(&self, header: &LogHeader) -> Result<RelogFilter, PipelineError> {
        // Without counter paths no name is matched: the log's language is not looked for.
        let counters = if self.patterns.is_empty() {
            None
        } else {
            self.counter_filter_with(&self.names_for(header))?
        };
        Ok(RelogFilter {
            counters,
            ..self.range_filter(header)
        })
    }

    /// The filter of everything but the counters: the time range, `every` and the format.
    fn range_filter(&self, header: &LogHeader) -> RelogFilter {
        RelogFilter {
            counters: None,
            begin: self.begin.map(|b| b.local(header)),
            end: self.end.map(|b| b.local(header)),
            every: self.every,
            format: self.format,
        }
    }

    /// Fails when a time range was given ([`begin`](Self::begin), [`end`](Self::end)) and it kept
    /// no record (`records` is 0): [`PipelineError::EmptyRange`], with the range the logs hold
    /// (read again without the bounds). Otherwise, or with no range, nothing is read.
    ///
    /// # Errors
    /// The range kept nothing, or reading the logs again fails.
    pub fn check_range(&self, records: u64) -> Result<(), PipelineError> {
        if records > 0 || (self.begin.is_none() && self.end.is_none()) {
            return Ok(());
        }
        let mut all = self.clone().begin(None).end(None).every(1);
        all.patterns.clear();
        let mut opened = all.open()?;
        let summary = opened.summary()?;
        Err(PipelineError::EmptyRange {
            source: opened.reader.header().source.clone(),
            first: summary.begin,
            last: summary.end,
        })
    }

    /// Opens, merges and filters the inputs.
    ///
    /// # Errors
    /// A counter path does not parse, an input cannot be opened or merged, the input holds no
    /// counters, or (unless [`require_match`](Self::require_match) is off) counter paths were
    /// given and none selects a column: [`PipelineError::NoMatch`], with the reason of each.
    pub fn open(&self) -> Result<Opened, PipelineError> {
        // A wrong path fails before any log is read.
        self.counter_filter()?;
        let Inputs {
            mut readers,
            logs,
            warnings,
        } = self.open_inputs(false)?;
        let merged: Box<dyn LogReader> = if readers.len() == 1 {
            readers.remove(0)
        } else {
            Box::new(Merge::new(readers)?)
        };
        // The language decides which name tables the counter paths match through. Without
        // paths nothing is matched, and finding it (which, for objects the built-in English
        // table does not know, reads the translation table: tens of milliseconds and about
        // 14 MB) waits until `Opened::language` asks: the filter keeps every column then.
        let language = OnceLock::new();
        let mut names = None;
        if !self.patterns.is_empty() {
            let found = language.get_or_init(|| language_of(merged.header()));
            names = Some(self.names.for_log(found));
        }
        let filter = RelogFilter {
            counters: self.counter_filter_with(names.as_ref().unwrap_or(&self.names))?,
            ..self.range_filter(merged.header())
        };
        let source = merged.header().source.clone();
        let unmatched = match (&filter.counters, language.get()) {
            (Some(counters), Some(language)) if self.require_match => {
                self.unmatched(&merged.header().counters, counters, language)
            }
            _ => Vec::new(),
        };
        let reader = Filtered::new(merged, &filter)?;
        if reader.header().counters.is_empty() {
            if self.patterns.is_empty() {
                return Err(PipelineError::NoCounters { source, warnings });
            }
            if self.require_match {
                return Err(PipelineError::NoMatch {
                    source,
                    unmatched,
                    warnings,
                });
            }
        }
        Ok(Opened {
            reader,
            logs,
            warnings,
            unmatched,
            language,
            pipeline: (self.begin.is_some() || self.end.is_some()).then(|| self.clone()),
            range: Range::default(),
            format: self.format,
        })
    }

    /// Why each counter path selects no column of `columns` through `filter` (the pipeline's
    /// counter filter: its patterns and name tables, borrowed), with the log's close names.
    fn unmatched(
        &self,
        columns: &[LogCounter],
        filter: &CounterFilter,
        language: &LogLanguage,
    ) -> Vec<Unmatched> {
        let mut out = Vec::new();
        let mut objects: Vec<&str> = Vec::new();
        for c in columns {
            if !objects.iter().any(|o| eq_ignore_case(o, &c.path.object)) {
                objects.push(&c.path.object);
            }
        }
        let foreign = language.english == 0 && language.unknown > 0;
        // The filter holds the patterns that parse, in order: all of them once `open` checked.
        let matched = filter.matched_patterns(columns.iter().map(|c| &c.path));
        let patterns = self
            .patterns
            .iter()
            .filter_map(|p| Some((&p.text, p.path.as_ref().ok()?)));
        for ((text, pattern), matched) in patterns.zip(matched) {
            if matched {
                continue;
            }
            let of_object: Vec<&LogCounter> = columns
                .iter()
                .filter(|c| pattern.matches_object(&c.path.object))
                .collect();
            let reason = match of_object.first() {
                None => UnmatchedReason::NoObject {
                    object: pattern.object.clone(),
                    suggestions: suggest(&pattern.object, objects.iter().copied()),
                    foreign_names: foreign && self.names.is_empty(),
                },
                Some(first) => {
                    let object = first.path.object.clone();
                    let with_counter: Vec<&&LogCounter> = of_object
                        .iter()
                        .filter(|c| pattern.matches_counter(&c.path.counter))
                        .collect();
                    if with_counter.is_empty() {
                        let mut names: Vec<&str> =
                            of_object.iter().map(|c| c.path.counter.as_str()).collect();
                        names.dedup();
                        UnmatchedReason::NoCounter {
                            object,
                            suggestions: suggest(&pattern.counter, names.into_iter()),
                            counter: pattern.counter.clone(),
                        }
                    } else {
                        let instances: Vec<&str> = with_counter
                            .iter()
                            .filter_map(|c| c.path.instance.as_deref())
                            .collect();
                        let wanted = pattern.instance.clone().unwrap_or_default();
                        UnmatchedReason::NoInstance {
                            object,
                            suggestions: suggest(&wanted, instances.into_iter()),
                            instance: wanted,
                        }
                    }
                }
            };
            out.push(Unmatched {
                path: text.clone(),
                reason,
            });
        }
        out
    }
}

/// The inputs opened one by one ([`Pipeline::open_inputs`]).
pub struct Inputs {
    /// The readers, in the order of the inputs (a pattern's files in name order).
    pub readers: Vec<Box<dyn LogReader>>,
    /// Each log read.
    pub logs: Vec<InputLog>,
    /// What the readers stepped over, one message each.
    pub warnings: Vec<String>,
}

impl fmt::Debug for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inputs")
            .field("logs", &self.logs)
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

/// One log read by a pipeline: its name and kind, as relog lists its inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputLog {
    /// The file (or `SQL:` target) as opened.
    pub source: String,
    /// Its kind.
    pub kind: LogKind,
    /// A text log's encoding (the code page given or detected), `None` for other formats.
    pub encoding: Option<crate::encoding::TextEncoding>,
}

/// The first and last record handed out, and how many.
#[derive(Clone, Copy, Debug, Default)]
struct Range {
    first: Option<LogTime>,
    last: Option<LogTime>,
    records: u64,
}

impl Range {
    fn take(&mut self, first: LogTime, last: LogTime, records: usize) {
        self.first.get_or_insert(first);
        self.last = Some(last);
        self.records += records as u64;
    }
}

/// An opened pipeline: the records kept, read through [`LogReader`], with what opening found.
pub struct Opened {
    reader: Filtered<Box<dyn LogReader>>,
    logs: Vec<InputLog>,
    warnings: Vec<String>,
    unmatched: Vec<Unmatched>,
    /// Found when opening if counter paths were given, else when first asked.
    language: OnceLock<LogLanguage>,
    /// The pipeline, when it has a time range: an empty range is an error.
    pipeline: Option<Pipeline>,
    range: Range,
    format: FormatOptions,
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opened")
            .field("logs", &self.logs)
            .field("warnings", &self.warnings)
            .field("unmatched", &self.unmatched)
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// Each log read.
    pub fn logs(&self) -> &[InputLog] {
        &self.logs
    }

    /// What the readers stepped over when opening, one message each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The counter paths that select nothing although others do, with the reason of each.
    pub fn unmatched(&self) -> &[Unmatched] {
        &self.unmatched
    }

    /// What matching found of the language of the log's objects: whether the built-in name
    /// table translated them, and from which locales.
    pub fn language(&self) -> &LogLanguage {
        // Without counter paths the reader keeps every column of the merged log, so its header
        // names the objects the language is found from.
        self.language
            .get_or_init(|| language_of(self.reader.header()))
    }

    /// The filtered reader itself (for sinks that take ownership, such as Arrow batches).
    pub fn into_reader(self) -> Filtered<Box<dyn LogReader>> {
        self.reader
    }

    /// Copies every record kept into `writer` ([`copy`]: encoded on the other cores where the
    /// writer allows) and returns what relog prints after writing: the time range (the log's local
    /// time) and the number of records. The counters of the summary are the columns written.
    ///
    /// # Errors
    /// Reading or writing fails, or a time range was given and holds no record
    /// ([`Pipeline::check_range`]; the writer is then not finished, so that a file being written
    /// under a temporary name never appears).
    pub fn copy_into(&mut self, writer: &mut dyn LogWriter) -> Result<LogSummary, PipelineError> {
        let pipeline = self.pipeline.take();
        let mut guard = RangeGuard {
            writer,
            wrote: false,
            pipeline: pipeline.as_ref(),
        };
        copy(self, &mut guard)?;
        let header = self.reader.header();
        Ok(LogSummary {
            begin: self.range.first.map(|t| header.to_local(t)),
            end: self.range.last.map(|t| header.to_local(t)),
            samples: self.range.records,
            counters: header.counters.iter().map(|c| c.name.clone()).collect(),
        })
    }

    /// Reads the records' times to the end: relog's `-q` summary.
    ///
    /// # Errors
    /// Reading fails.
    pub fn summary(&mut self) -> Result<LogSummary, LogError> {
        LogSummary::of(&mut self.reader)
    }

    /// Reads to the end: minimum, average and maximum per counter, values computed as the
    /// pipeline's [`format`](Pipeline::format) says.
    ///
    /// # Errors
    /// Reading fails.
    pub fn statistics(&mut self) -> Result<Vec<CounterStatistics>, LogError> {
        log_statistics(&mut self.reader, &self.format)
    }
}

impl LogReader for Opened {
    fn header(&self) -> &LogHeader {
        self.reader.header()
    }

    fn warnings(&self) -> &[String] {
        self.reader.warnings()
    }

    fn select_columns(&mut self, keep: &[bool]) {
        self.reader.select_columns(keep);
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        let more = self.reader.read_record(record)?;
        if more {
            self.range.take(record.time, record.time, 1);
        }
        Ok(more)
    }

    fn read_values(
        &mut self,
        rows: &mut ValueRows,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        let read = self.reader.read_values(rows, max_cells)?;
        if let (Some(&first), Some(&last)) = (rows.times.first(), rows.times.last()) {
            if read.is_some_and(|n| n > 0) {
                self.range.take(first, last, rows.len());
            }
        }
        Ok(read)
    }

    fn read_columns(
        &mut self,
        columns: &mut ValueColumns,
        max_cells: usize,
    ) -> Result<Option<usize>, LogError> {
        let read = self.reader.read_columns(columns, max_cells)?;
        if let (Some(&first), Some(&last)) = (columns.times.first(), columns.times.last()) {
            if read.is_some_and(|n| n > 0) {
                self.range.take(first, last, columns.len());
            }
        }
        Ok(read)
    }
}

/// A writer that refuses to finish a log of no record when its pipeline has a time range.
struct RangeGuard<'a> {
    writer: &'a mut dyn LogWriter,
    wrote: bool,
    pipeline: Option<&'a Pipeline>,
}

impl LogWriter for RangeGuard<'_> {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        self.writer.write_header(header)
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        self.wrote = true;
        self.writer.write_record(record)
    }

    fn finish(&mut self) -> Result<(), LogError> {
        if let (false, Some(p)) = (self.wrote, self.pipeline) {
            match p.check_range(0) {
                Ok(()) => {}
                Err(PipelineError::Log(e)) => return Err(e),
                Err(PipelineError::EmptyRange {
                    source,
                    first,
                    last,
                }) => return Err(LogError::usage(&source, empty_range(first, last))),
                Err(other) => {
                    return Err(LogError::usage(
                        p.inputs().first().map_or("(no input)", String::as_str),
                        ErrorChain(&other).to_string(),
                    ))
                }
            }
        }
        self.writer.finish()
    }

    fn checkpoint(&mut self) -> Result<(), LogError> {
        self.writer.checkpoint()
    }

    fn record_encoder(&self) -> Option<Box<dyn super::model::RecordEncoder>> {
        self.writer.record_encoder()
    }

    fn write_encoded(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        self.wrote |= !bytes.is_empty();
        self.writer.write_encoded(bytes)
    }

    fn takes_values(&self) -> bool {
        self.writer.takes_values()
    }

    fn write_values(&mut self, rows: &ValueRows) -> Result<(), LogError> {
        self.wrote |= !rows.is_empty();
        self.writer.write_values(rows)
    }
}

/// A counter path that selects no column of the log, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmatched {
    /// The path as given.
    pub path: String,
    /// Why it selects nothing.
    pub reason: UnmatchedReason,
}

/// Why a counter path selects no column, with the log's names closest to what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnmatchedReason {
    /// The log has no such object.
    NoObject {
        /// The object asked for.
        object: String,
        /// The log's objects closest to it.
        suggestions: Vec<String>,
        /// No object of the log has an English name, some have names the built-in table does
        /// not know, and no name tables were given: the machine's tables would match English
        /// paths.
        foreign_names: bool,
    },
    /// The object has no such counter.
    NoCounter {
        /// The object, as the log names it.
        object: String,
        /// The counter asked for.
        counter: String,
        /// The object's counters closest to it.
        suggestions: Vec<String>,
    },
    /// The counter has no such instance in the log.
    NoInstance {
        /// The object, as the log names it.
        object: String,
        /// The instance asked for.
        instance: String,
        /// The counter's instances closest to it.
        suggestions: Vec<String>,
    },
}

impl Unmatched {
    /// The message, naming the parameter that takes name tables as `names_parameter` (a command
    /// says `--names`, Python `names=`).
    pub fn message(&self, names_parameter: &str) -> String {
        let path = &self.path;
        match &self.reason {
            UnmatchedReason::NoObject {
                object,
                suggestions,
                foreign_names,
            } => {
                let mut why = format!(
                    "{path}: the log has no object \"{object}\"{}",
                    DidYouMean(suggestions)
                );
                if *foreign_names {
                    why.push_str(&format!(
                        "; the log names its objects in another language than English, which \
                         the built-in table (PAL's CounterLang.xml) does not translate: pass \
                         {names_parameter} with the machine's name tables \
                         (PerfStringBackup.INI) to use English paths"
                    ));
                }
                why
            }
            UnmatchedReason::NoCounter {
                object,
                counter,
                suggestions,
            } => format!(
                "{path}: object \"{object}\" has no counter named \"{counter}\"{}",
                DidYouMean(suggestions)
            ),
            UnmatchedReason::NoInstance {
                object,
                instance,
                suggestions,
            } => format!(
                "{path}: object \"{object}\" has no instance \"{instance}\" in the log{}",
                DidYouMean(suggestions)
            ),
        }
    }
}

impl fmt::Display for Unmatched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message("name tables"))
    }
}

/// Why a time range kept nothing: the range the log holds.
fn empty_range(first: Option<LogTime>, last: Option<LogTime>) -> String {
    match (first, last) {
        (Some(first), Some(last)) => format!(
            "no record in the time range given: the log runs from {first} to {last} (its local \
             time)"
        ),
        _ => "no record in the time range given: the log has none".to_owned(),
    }
}

/// The language of the objects of `header`'s columns.
fn language_of(header: &LogHeader) -> LogLanguage {
    LogLanguage::of(header.counters.iter().map(|c| c.path.object.as_str()))
}

/// Why a [`Pipeline`] could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum PipelineError {
    /// A counter path does not parse.
    InvalidPath {
        /// The path as given.
        path: String,
        /// Why.
        error: PathError,
    },
    /// No input was given, or its patterns matched no log.
    NoInput,
    /// Opening, merging or filtering a log failed.
    Log(LogError),
    /// The input holds no counters.
    NoCounters {
        /// The (first) log.
        source: String,
        /// What the readers stepped over before.
        warnings: Vec<String>,
    },
    /// A time range was given and holds no record of the logs ([`Pipeline::check_range`]).
    EmptyRange {
        /// The (first) log.
        source: String,
        /// The first record's local time, `None` for a log without records.
        first: Option<LogTime>,
        /// The last record's local time.
        last: Option<LogTime>,
    },
    /// Counter paths were given and none selects a column of the log.
    NoMatch {
        /// The (first) log.
        source: String,
        /// Why each path selects nothing.
        unmatched: Vec<Unmatched>,
        /// What the readers stepped over before.
        warnings: Vec<String>,
    },
}

impl PipelineError {
    /// What the readers stepped over before the pipeline failed, one message each.
    pub fn warnings(&self) -> &[String] {
        match self {
            PipelineError::NoCounters { warnings, .. }
            | PipelineError::NoMatch { warnings, .. } => warnings,
            _ => &[],
        }
    }

    /// The message with its causes ([`ErrorChain`]), naming the parameters as a front end calls
    /// them: `counters_parameter` for the counter paths (`-c / -cf`, `counters`), `names_parameter`
    /// for the name tables.
    pub fn message(&self, counters_parameter: &str, names_parameter: &str) -> String {
        match self {
            PipelineError::NoMatch { unmatched, .. } => {
                let mut text = format!("no counter of the input matches {counters_parameter}:");
                for u in unmatched {
                    text.push_str("\n  ");
                    text.push_str(&u.message(names_parameter));
                }
                text
            }
            // The message and its causes, each once.
            other => ErrorChain(other).to_string(),
        }
    }
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PipelineError::InvalidPath { path, .. } => write!(f, "invalid counter path {path}"),
            PipelineError::NoInput => f.write_str("no log to read"),
            // The log error says what failed and where.
            PipelineError::Log(e) => e.fmt(f),
            PipelineError::NoCounters { source, .. } => {
                write!(f, "{source}: the input holds no counters")
            }
            PipelineError::NoMatch { .. } => {
                f.write_str(&self.message("the counter paths", "name tables"))
            }
            PipelineError::EmptyRange {
                source,
                first,
                last,
            } => write!(f, "{source}: {}", empty_range(*first, *last)),
        }
    }
}

impl std::error::Error for PipelineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PipelineError::InvalidPath { error, .. } => Some(error),
            PipelineError::Log(e) => e.source(),
            _ => None,
        }
    }
}

impl From<LogError> for PipelineError {
    fn from(e: LogError) -> Self {
        PipelineError::Log(e)
    }
}
