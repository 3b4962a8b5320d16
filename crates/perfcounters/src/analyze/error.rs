//! A problem that stops the analysis as a whole.

use std::fmt;

use crate::log::pipeline::PipelineError;
use crate::log::LogError;

/// A problem that stops the analysis as a whole.
#[derive(Debug)]
#[non_exhaustive]
pub enum AnalyzeError {
    /// A question value ([`AnalyzeOptions::set`](super::AnalyzeOptions::set)) names a question the rules do not ask, or has a
    /// value of the wrong type. Displayed as `question value {setting}: {problem}`.
    Question {
        /// The setting as given: the name, and `NAME=VALUE` when the value is what is wrong.
        setting: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The interval of the slices ([`AnalyzeOptions::interval`](super::AnalyzeOptions::interval)) is not usable. Displayed as
    /// `interval {seconds}: {problem}` (`interval auto: …` for [`Interval::Auto`](super::Interval::Auto)).
    Interval {
        /// The interval asked for, in seconds; `None` for [`Interval::Auto`](super::Interval::Auto).
        seconds: Option<u64>,
        /// What is wrong with it.
        problem: String,
    },
    /// Reading the log failed: displayed as that [`LogError`], whose own cause is this error's
    /// [`source`](std::error::Error::source).
    Log(LogError),
    /// The pipeline's inputs could not be opened, or a counter path of it does not parse.
    Inputs(PipelineError),
}

impl fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalyzeError::Question { setting, problem } => {
                write!(f, "question value {setting}: {problem}")
            }
            AnalyzeError::Interval {
                seconds: Some(s),
                problem,
            } => write!(f, "interval {s}: {problem}"),
            AnalyzeError::Interval {
                seconds: None,
                problem,
            } => write!(f, "interval auto: {problem}"),
            AnalyzeError::Log(e) => e.fmt(f),
            AnalyzeError::Inputs(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AnalyzeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnalyzeError::Log(e) => e.source(),
            AnalyzeError::Inputs(e) => e.source(),
            _ => None,
        }
    }
}

impl From<LogError> for AnalyzeError {
    fn from(e: LogError) -> Self {
        AnalyzeError::Log(e)
    }
}
