//! `analyze`: PAL threshold files evaluated over a log.
//!
//! * The rules: PAL's XML threshold files (questions, analyses, data sources, thresholds,
//!   descriptions, inheritance) read into [`Rules`] ([`RulesFile`] is one file);
//!   [`Rules::builtin`] is PAL's `QuickSystemOverview.xml`, embedded ([`QUICK_SYSTEM_OVERVIEW`]);
//!   every threshold file of PAL's repository is built in ([`BUILTIN_RULES`]), read by name with
//!   [`Rules::builtin_named`] or [`Rules::open`], listed by [`builtin_catalogue`]. Data sources
//!   may match counters by regular expression ([`RegexPath`], bounded by [`MAX_REGEX_SIZE`]).
//!   The files are untrusted: the XML is read with DTDs refused and bounded in size and node count
//!   ([`MAX_RULES_BYTES`], [`MAX_NODES`]), and inheritance is followed to a bounded depth
//!   ([`MAX_INHERITANCE_DEPTH`]) with cycles refused; a problem in a file is a [`RulesError`]
//!   naming the file, the line and the column.
//! * The code: a threshold's PowerShell `CODE` is read as data into a [`Script`] and the subset
//!   the files use is evaluated with bounded work ([`MAX_CODE_BYTES`], [`MAX_DEPTH`],
//!   [`MAX_STATEMENTS`]); the code is never run. What the subset holds is listed in
//!   `docs/analyze.md`; anything else is a [`ScriptError`].
//! * The evaluation: [`analyze`] and [`analyze_logs`] read a log once into time slices and raise
//!   [`Alert`]s, with streaming statistics, trends and chart data ([`Report`]).
//! * The comparison: [`compare()`] reads a baseline and a candidate and says what changed:
//!   every counter (statistics, change ratios, an effect size, a class, ranked) and every
//!   analysis (alerts on each side, a verdict) ([`Comparison`]).
//! * The fleet: [`analyze_fleet`] groups a pipeline's logs by machine ([`fleet_groups`]) and
//!   analyses each machine on its own, in parallel, with answers per machine ([`machine_set`]);
//!   [`analyze_fleet_each`] hands the machines over one by one as they complete.
//!
//! PAL's files are MIT-licensed; [`PAL_LICENSE`] is their notice.

mod builtin;
mod catalogue;
mod compare;
mod error;
mod eval;
mod fleet;
mod interval;
mod plan;
mod regex_path;
mod report;
mod rules;
mod script;
mod slices;
mod stats;

pub use builtin::{builtin_rules, BuiltinRules, BUILTIN_RULES, PAL_LICENSE, QUICK_SYSTEM_OVERVIEW};
pub use catalogue::{builtin_catalogue, CatalogueEntry};
pub use compare::{
    compare, AlertCounts, AnalysisChange, BadDirection, ChangeBounds, ChangeClass, CompareError,
    CompareOptions, Compared, Comparison, CounterChange, Side, SideStats, SideSummary, Verdict,
};
pub use eval::{
    analyze, analyze_logs, analyze_pipeline, auto_interval, auto_interval_seconds, question_values,
    Alert, AnalysisReport, AnalyzeError, AnalyzeOptions, AnalyzedLogs, CounterReport, FewEvaluated,
    FewReason, Interval, Pass, Report, ThresholdReport, AUTO_SLICES, MAX_KEPT,
};
pub use fleet::{
    analyze_fleet, analyze_fleet_each, check_set, fleet_groups, machine_set, set_target,
    FleetOptions, MachineAnalysis, MachineLogs,
};
pub use regex_path::MAX_REGEX_SIZE;
pub use rules::{
    Analysis, DataSource, DataSourceKind, Question, RegexPath, Rules, RulesError, RulesFile,
    Threshold, MAX_INHERITANCE_DEPTH, MAX_NODES, MAX_RULES_BYTES,
};
pub use script::{
    evaluate, CounterInstance, Operator, Script, ScriptError, ScriptValue, StaticThreshold,
    MAX_CELLS, MAX_CODE_BYTES, MAX_DEPTH, MAX_STATEMENTS, MAX_STRING_BYTES,
};
