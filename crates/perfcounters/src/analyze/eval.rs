//! Rules evaluated over a log: data sources matched to columns, threshold code interpreted, the
//! log read once into time slices, alerts raised, statistics and chart data kept.
//!
//! Semantics (docs/analyze.md repeats them for users):
//!
//! * **Slices** are `[t0 + k·I, t0 + (k+1)·I)` from the first record's time `t0`. With
//!   [`Interval::Seconds`] `I` is given; with [`Interval::Auto`] it is PAL's automatic interval
//!   ([`auto_interval_seconds`]: the log's duration in whole seconds / 30, each step rounded half
//!   to even as PowerShell's `[int]` rounds), never below the sample interval (the shortest gap
//!   between two records, rounded up to whole seconds) nor below one second. [`analyze_logs`]
//!   finds it with a first pass over the records' times ([`auto_interval`], no value read: a
//!   `.blg` is read for its times alone, [`Pass::Times`]), then reads the log once more with that
//!   interval: the slices are exact for every log length. [`analyze`] over one stream, which
//!   cannot be read twice, takes an interval in seconds only.
//! * The reading (and the computing of raw samples) and the evaluation run on two threads: the
//!   evaluating thread takes the records in batches, in order, one by one as one thread would, so
//!   the results do not depend on the threads.
//! * A data source path matches columns as `relog -c` does (case-insensitively, `*` matching every
//!   instance, `_Total` included, names translated through the name tables); an `EXCLUDE
//!   INSTANCE` leaves out the instances of that name.
//! * For each `StaticThreshold`, counter instance and slice with a value (blank cells are skipped):
//!   an alert when a value breaks the threshold: `gt` max > T, `ge` max ≥ T, `lt` min < T, `le`
//!   min ≤ T, `eq` any value = T. One alert per (analysis, threshold, counter instance, slice) with
//!   that slice's min, average and max.
//! * A generated data source's code is interpreted once per slice, as PAL runs it over its
//!   `Quantized*` arrays: each counter-log data source of its analysis is an array of counter
//!   instances holding that slice's minimum, average, maximum and trend; the hash table it fills
//!   gives each generated series its values for the slice.
//! * A **trend** is the slope, in units per hour, of the least-squares line through a counter's
//!   values against their times. A trend threshold (`-IsTrendOnly $True`) compares, at the end of
//!   each slice, the trend of the values from the first record to the end of that slice.
//! * **Statistics** per counter: min, average, max and trend over the whole range; p90 and p95 by
//!   the nearest-rank method over at most [`MAX_KEPT`] values: every value while there are no more,
//!   beyond that a regular subsample (every 2nd, then every 4th … value in time order).
//! * **Charts** draw at most [`MAX_KEPT`] points per counter: every value while they fit, beyond
//!   that the minimum and the maximum of each span of consecutive values (spans of 2, 4 … values,
//!   at most [`MAX_KEPT`] / 2 of them), in time order, so that a spike stays visible however long
//!   the log is, as perfmon's and PAL's charts show it.
//!
//! This module is the driver ([`analyze_logs`], [`analyze_pipeline`], [`analyze`]); the work is in
//! the sibling files of `analyze/`: `interval.rs` (the slice width), `plan.rs` (the rules bound to
//! the log's columns), `slices.rs` (the one pass over the records and its threads), `stats.rs`
//! (streaming statistics and chart data), `report.rs` (the report and its assembly) and
//! `error.rs`.

use crate::log::model::{LogHeader, LogReader, LogTime};
use crate::log::pipeline::{InputLog, Pipeline, PipelineError, TimeBound};
use crate::log::relog::{CounterFilter, Filtered, Merge, RelogFilter};
use crate::log::LogError;
use crate::names::{LogLanguage, NameTable, NameTables};
use crate::path::CounterPath;

use super::interval::TICKS_PER_SECOND;
use super::plan::{regex_matcher, Plan};
use super::regex_path::RegexMatcher;
use super::report::{self, Translator};
use super::rules::{DataSourceKind, Rules};
use super::slices::Slicer;

pub use super::error::AnalyzeError;
pub use super::interval::{auto_interval, auto_interval_seconds, Interval, AUTO_SLICES};
pub use super::plan::question_values;
pub use super::report::{
    Alert, AnalysisReport, CounterReport, FewEvaluated, FewReason, Report, ThresholdReport,
};
pub use super::stats::MAX_KEPT;

/// What to evaluate and how.
#[derive(Clone, Debug, Default)]
pub struct AnalyzeOptions {
    /// The slice width.
    pub interval: Interval,
    /// Question values (`--set NAME=VALUE`), overriding the files' defaults.
    pub set: Vec<(String, String)>,
    /// Name tables of the log's language(s) (`--names`), so that localized columns match the
    /// rules' English paths; empty for an English log.
    pub names: Vec<NameTable>,
    /// English name tables besides the built-in one (the `enUS` table of PAL's `CounterLang.xml`),
    /// used to name localized columns in English.
    pub english: Vec<NameTable>,
    /// Keep only the columns this filter selects (`-c`); `None` keeps every column.
    pub counters: Option<CounterFilter>,
    /// Keep records at or after this time (`-b`), on the log's wall clock.
    pub begin: Option<LogTime>,
    /// Keep records at or before this time (`-e`).
    pub end: Option<LogTime>,
}

impl AnalyzeOptions {
    /// The name tables matching uses: none for an English log, else the English tables and the
    /// log's.
    fn tables(&self) -> Vec<NameTable> {
        let mut tables: Vec<NameTable> = Vec::new();
        if !self.names.is_empty() {
            tables.push(NameTable::builtin_english().clone());
            tables.extend(self.english.iter().cloned());
            tables.extend(self.names.iter().cloned());
        }
        tables
    }

    /// These options for a log whose header is `header`: when its objects are named in another
    /// language that the built-in table knows ([`LogLanguage::uses_builtin`]), that table's
    /// locales are added after the given tables ([`NameTables::for_log`], the pipeline's rule),
    /// and the counter filter matches through them too. Returns the language found.
    fn for_log(&self, header: &LogHeader) -> (Option<AnalyzeOptions>, LogLanguage) {
        let language = LogLanguage::of(header.counters.iter().map(|c| c.path.object.as_str()));
        if !language.uses_builtin() {
            return (None, language);
        }
        let mut given = NameTables::new();
        for t in &self.names {
            given.push(t.clone());
        }
        for t in &self.english {
            given.push_english(t.clone());
        }
        let all = given.for_log(&language);
        let mut out = self.clone();
        out.names = all.languages().to_vec();
        out.english = all.english().to_vec();
        let tables = out.tables();
        out.counters = out.counters.map(|f| f.with_names(tables));
        (Some(out), language)
    }
}

/// What [`analyze_logs`] opens the logs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pass {
    /// The first pass of [`Interval::Auto`]: only the records' times are read (an opener may give
    /// readers of the times alone, [`OpenOptions::times_only`](crate::log::OpenOptions::times_only);
    /// full readers serve too, their values skipped).
    Times,
    /// The analysis: the records' values.
    Values,
}

/// Merges the logs that `open` opens (several logs as relog merges them), keeps the records of
/// `-b`/`-e` and the columns that the rules' data sources select, computes raw samples, and
/// [`analyze`]s the result.
///
/// With [`Interval::Auto`] the logs are opened twice: first for [`Pass::Times`], whose records'
/// times give the interval ([`auto_interval`]; every value skipped), then for [`Pass::Values`],
/// analysed with the interval found, so that the slices are exact whatever the log's length. With
/// [`Interval::Seconds`] `open` is called once, for [`Pass::Values`].
pub fn analyze_logs<F>(
    mut open: F,
    rules: &Rules,
    opts: &AnalyzeOptions,
) -> Result<Report, AnalyzeError>
where
    F: FnMut(Pass) -> Result<Vec<Box<dyn LogReader>>, LogError>,
{
    // A wrong `--set` fails before the logs are read.
    question_values(&rules.questions, &opts.set)?;
    let seconds = match opts.interval {
        Interval::Seconds(s) => s,
        Interval::Auto => {
            let times = RelogFilter {
                counters: Some(CounterFilter::new(Vec::new())),
                begin: opts.begin,
                end: opts.end,
                ..RelogFilter::default()
            };
            let mut first = Filtered::new(Merge::new(open(Pass::Times)?)?, &times)?;
            // A log without records has no slice: any width does.
            auto_interval(&mut first)?.unwrap_or(1)
        }
    };
    let merged = Merge::new(open(Pass::Values)?)?;
    let (localized, language) = opts.for_log(merged.header());
    let opts = localized.as_ref().unwrap_or(opts);
    let sources = || {
        rules
            .enabled()
            .flat_map(|a| a.data_sources.iter())
            .filter(|d| d.kind == DataSourceKind::CounterLog)
    };
    let mut patterns: Vec<CounterPath> = sources()
        .filter_map(|d| d.path.as_ref().ok().cloned())
        .collect();
    // Columns that a regular-expression data source selects (a named SQL Server instance's
    // `MSSQL$PROD:…`) are kept by their own paths: a counter path pattern cannot say it.
    let matchers: Vec<RegexMatcher> = sources()
        .filter_map(|d| regex_matcher(d).ok().flatten())
        .collect();
    if !matchers.is_empty() {
        patterns.extend(
            merged
                .header()
                .counters
                .iter()
                .filter(|c| matchers.iter().any(|m| m.matches(&c.path)))
                .map(|c| c.path.clone()),
        );
    }
    let filter = RelogFilter {
        counters: Some(CounterFilter::new(patterns).with_names(opts.tables())),
        begin: opts.begin,
        end: opts.end,
        ..RelogFilter::default()
    };
    let mut filtered = Filtered::new(merged, &filter)?;
    let mut report = evaluate(&mut filtered, rules, opts, seconds, crate::log::cores() > 1)?;
    report.language = language;
    Ok(report)
}

/// What [`analyze_pipeline`] found: the report, the logs read and what their readers stepped over.
#[derive(Debug)]
pub struct AnalyzedLogs {
    /// The report.
    pub report: Report,
    /// The logs read, in the order of the inputs.
    pub logs: Vec<InputLog>,
    /// What the readers stepped over, one message each.
    pub warnings: Vec<String>,
}

/// Analyses the logs of `pipeline` ([`analyze_logs`]): its inputs merged as relog merges them, its
/// time range, its counter paths (when given, only the columns they select are analysed) and its
/// name tables (localized columns matched to the rules' English paths). `interval` and `set` are
/// the slice width and the question values.
///
/// # Errors
/// A question value is wrong, the interval is not usable, or the logs cannot be read.
pub fn analyze_pipeline(
    pipeline: &Pipeline,
    rules: &Rules,
    interval: Interval,
    set: &[(String, String)],
) -> Result<AnalyzedLogs, AnalyzeError> {
    let names = pipeline.name_tables();
    let mut opts = AnalyzeOptions {
        interval,
        set: set.to_vec(),
        names: names.languages().to_vec(),
        english: names.english().to_vec(),
        counters: pipeline.counter_filter().map_err(AnalyzeError::Inputs)?,
        begin: None,
        end: None,
    };
    let to_log_error = |e: PipelineError| match e {
        PipelineError::Log(e) => e,
        other => LogError::usage("(no input)", other.to_string()),
    };
    // The bounds are local times of the first log's zone, as the merge reads them: a UTC bound
    // needs that zone first (opening the inputs gives at least one log, or fails).
    let (begin, end) = (pipeline.begin_bound(), pipeline.end_bound());
    let utc = [begin, end]
        .iter()
        .any(|b| matches!(b, Some(TimeBound::Utc(_))));
    let zoned = if utc {
        Some(pipeline.open_inputs(true).map_err(to_log_error)?)
    } else {
        None
    };
    let header = zoned
        .as_ref()
        .and_then(|inputs| inputs.readers.first())
        .map(|r| r.header());
    let local = |bound: TimeBound| match (header, bound) {
        (Some(header), bound) => bound.local(header),
        // No UTC bound, so no zone is needed.
        (None, TimeBound::Local(t) | TimeBound::Utc(t)) => t,
    };
    opts.begin = begin.map(local);
    opts.end = end.map(local);
    drop(zoned);
    let mut logs = Vec::new();
    let mut warnings = Vec::new();
    let open = |pass: Pass| -> Result<Vec<Box<dyn LogReader>>, LogError> {
        let inputs = pipeline
            .open_inputs(pass == Pass::Times)
            .map_err(to_log_error)?;
        if pass == Pass::Values {
            logs = inputs.logs;
            warnings = inputs.warnings;
        }
        Ok(inputs.readers)
    };
    let report = analyze_logs(open, rules, &opts)?;
    Ok(AnalyzedLogs {
        report,
        logs,
        warnings,
    })
}
/// Reads `reader` to its end and evaluates `rules` over it, in slices of the interval the options
/// give ([`Interval::Seconds`]).
///
/// `reader` yields cooked values (a [`Filtered`] over the logs, as [`analyze_logs`] makes it;
/// `begin`/`end` of the options are applied there, not here); columns that no data source selects
/// are ignored.
///
/// # Errors
/// [`Interval::Auto`] is an [`AnalyzeError::Interval`] here: the automatic interval comes from the
/// log's duration, known only once the log has been read, and one stream cannot be read twice.
/// [`analyze_logs`] opens the logs twice and reads their times first, so that the slices are exact
/// (an earlier single-stream approximation, buckets of records assigned to slices at the end,
/// could count a record in the slice before its own).
pub fn analyze(
    reader: &mut dyn LogReader,
    rules: &Rules,
    opts: &AnalyzeOptions,
) -> Result<Report, AnalyzeError> {
    match opts.interval {
        Interval::Seconds(seconds) => {
            let (localized, language) = opts.for_log(reader.header());
            let opts = localized.as_ref().unwrap_or(opts);
            let mut report = evaluate(reader, rules, opts, seconds, crate::log::cores() > 1)?;
            report.language = language;
            Ok(report)
        }
        Interval::Auto => Err(AnalyzeError::Interval {
            seconds: None,
            problem: "the automatic interval needs the log's times before its values: \
                      analyze_logs reads them first (one stream cannot be read twice)"
                .into(),
        }),
    }
}

/// [`analyze`] with slices of `seconds`, the records evaluated on another thread than the reading
/// when `threaded`. With [`Interval::Auto`] in `opts` (the caller found `seconds` in a first
/// pass), a log without records reports an interval of 0.
fn evaluate(
    reader: &mut dyn LogReader,
    rules: &Rules,
    opts: &AnalyzeOptions,
    seconds: u64,
    threaded: bool,
) -> Result<Report, AnalyzeError> {
    let questions = question_values(&rules.questions, &opts.set)?;
    if seconds == 0 {
        return Err(AnalyzeError::Interval {
            seconds: Some(seconds),
            problem: "must be at least 1 second".into(),
        });
    }
    let width: i64 = i64::try_from(seconds)
        .ok()
        .and_then(|s| s.checked_mul(TICKS_PER_SECOND))
        .ok_or_else(|| AnalyzeError::Interval {
            seconds: Some(seconds),
            problem: "too long".into(),
        })?;
    let tables = opts.tables();
    let header: LogHeader = reader.header().clone();
    let user_keep: Vec<bool> = header
        .counters
        .iter()
        .map(|c| opts.counters.as_ref().is_none_or(|f| f.matches(&c.path)))
        .collect();
    let plan = Plan::bind(rules, &header, &user_keep, &tables, &questions);
    reader.select_columns(&plan.keep(header.counters.len()));

    // One pass: this thread reads, another evaluates.
    let mut slicer = Slicer::new(
        plan.states(),
        &plan.log_columns,
        &plan.bound,
        &plan.analyses,
        &plan.generated,
        width,
    );
    slicer.read(reader, threaded)?;
    let Slicer {
        states,
        span,
        records,
        mut alerts,
        failures,
        ..
    } = slicer;
    let interval_seconds = match (span.t0, opts.interval) {
        (None, Interval::Auto) => 0,
        _ => seconds,
    };
    let Plan {
        mut analyses,
        log_columns,
        generated,
        series,
        ..
    } = plan;
    // An analysis whose generated data source failed in a slice is not evaluated, with the
    // reason; its alerts go.
    for (g, failure) in generated.iter().zip(failures) {
        if let (Some(why), Some(a)) = (failure, analyses.get_mut(g.analysis)) {
            if a.reason.is_none() {
                a.reason = Some(why);
                a.thresholds.clear();
                a.counters.clear();
            }
            alerts.retain(|x| x.analysis != g.analysis);
        }
    }
    let alerts = report::order_alerts(alerts, &mut analyses);
    let translator = Translator::new(&opts.names, &opts.english);
    Ok(Report {
        source: header.source.clone(),
        machines: report::machines(&header),
        range: span.t0.map(|s| (s, span.last)),
        time_zone: header.time_zone.clone(),
        records,
        interval_seconds,
        questions: report::question_texts(&questions),
        analyses,
        alerts,
        counters: report::counters(&header, &log_columns, &series, states, &translator),
        language: LogLanguage::default(),
    })
}

#[cfg(test)]
mod thread_tests {
    use super::*;
    use crate::analyze::rules::RulesFile;
    use crate::log::model::{LogTime, Record};
    use crate::log::{Cell, LogCounter, LogKind};

    /// Records held in memory.
    struct Records(LogHeader, std::vec::IntoIter<Record>);

    impl LogReader for Records {
        fn header(&self) -> &LogHeader {
            &self.0
        }
        fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
            Ok(self.1.next().map(|r| *record = r).is_some())
        }
    }

    /// 3 columns, 40,000 records a second apart with blanks, NaN and repeated values (7 batches
    /// of 5,461 records and a partial one, many slices), evaluated on one thread and on two: the
    /// same report, alerts of every operator and trends included.
    #[test]
    fn two_threads_give_one_threads_report() {
        let paths = [r"\\M\T(a)\V", r"\\M\T(b)\V", r"\\M\T(c)\V"];
        let header = LogHeader {
            source: "memory".into(),
            kind: LogKind::Csv,
            time_zone: None,
            counters: paths
                .iter()
                .map(|p| LogCounter::new(CounterPath::parse(p).unwrap(), None))
                .collect(),
        };
        let records = || -> Vec<Record> {
            (0..40_000i64)
                .map(|i| Record {
                    time: LogTime(i * TICKS_PER_SECOND),
                    cells: vec![
                        Cell::Value((i % 97) as f64),
                        if i % 13 == 0 {
                            Cell::Blank
                        } else {
                            Cell::Value((i / 100) as f64)
                        },
                        Cell::Value(if i % 1000 == 7 {
                            f64::NAN
                        } else {
                            (i % 5) as f64
                        }),
                    ],
                })
                .collect()
        };
        let mut xml = String::from(
            r#"<PAL NAME="t"><ANALYSIS NAME="a" ENABLED="True" CATEGORY="T" ID="1"><DATASOURCE TYPE="CounterLog" NAME="\T(*)\V" EXPRESSIONPATH="\T(*)\V" COLLECTIONVARNAME="V"/>"#,
        );
        for (op, v) in [
            ("gt", "90"),
            ("ge", "96"),
            ("lt", "1"),
            ("le", "0"),
            ("eq", "3"),
        ] {
            xml.push_str(&format!(r#"<THRESHOLD NAME="{op}" CONDITION="{op}" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator '{op}' -Threshold {v}</CODE></THRESHOLD>"#));
        }
        xml.push_str(r#"<THRESHOLD NAME="up" CONDITION="up" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'gt' -Threshold 10 -IsTrendOnly $True</CODE></THRESHOLD></ANALYSIS></PAL>"#);
        let f = RulesFile::parse("t.xml", &xml).unwrap();
        let rules = Rules {
            name: f.name,
            files: vec![],
            questions: f.questions,
            analyses: f.analyses,
        };
        let opts = AnalyzeOptions::default();
        let run = |threaded: bool| {
            let mut log = Records(header.clone(), records().into_iter());
            evaluate(&mut log, &rules, &opts, 60, threaded).unwrap()
        };
        let one = run(false);
        let two = run(true);
        assert_eq!(one.records, 40_000);
        assert!(one.alerts.len() > 1000, "{}", one.alerts.len());
        for c in ["gt", "ge", "lt", "le", "eq", "up"] {
            assert!(one.alerts.iter().any(|a| a.condition == c), "{c}");
        }
        // NaN in the chart points would make the reports unequal to themselves: there is none.
        assert!(one
            .counters
            .iter()
            .all(|c| c.points.iter().all(|p| !p.1.is_nan())));
        assert_eq!(one, two);
    }
}
