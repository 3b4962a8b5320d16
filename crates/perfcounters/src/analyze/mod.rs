//! `analyze`: PAL threshold files evaluated over a log.
//!
//! * [`rules`] reads PAL's XML threshold files (questions, analyses, data sources, thresholds,
//!   descriptions, inheritance); [`Rules::builtin`] is PAL's `QuickSystemOverview.xml`, embedded.
//! * [`script`] reads the PowerShell of a threshold's `CODE` as data and evaluates the subset the
//!   files use, with bounded work; the code is never run.
//! * [`eval`] reads a log once into time slices and raises alerts, with streaming statistics,
//!   trends and chart data ([`analyze`], [`Report`]).
//!
//! PAL's files are MIT-licensed; [`rules::PAL_LICENSE`] is their notice.

pub mod eval;
pub mod rules;
pub mod script;

pub use eval::{
    analyze, analyze_logs, analyze_pipeline, auto_interval, auto_interval_seconds, question_values,
    Alert, AnalysisReport, AnalyzeError, AnalyzeOptions, AnalyzedLogs, CounterReport, Interval,
    Pass, Report, ThresholdReport,
};
pub use rules::{
    Analysis, DataSource, DataSourceKind, Question, Rules, RulesError, RulesFile, Threshold,
};
pub use script::{Operator, Script, ScriptError, ScriptValue, StaticThreshold};
