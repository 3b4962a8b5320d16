//! What stops a comparison.

use std::fmt;

use crate::log::pipeline::PipelineError;

use super::super::error::AnalyzeError;
use super::Side;

/// What stops a comparison ([`compare`](super::compare())).
#[derive(Debug)]
#[non_exhaustive]
pub enum CompareError {
    /// One side's logs could not be opened or read: displayed as `{side}: {error}`.
    Inputs {
        /// The side.
        side: Side,
        /// What went wrong.
        error: PipelineError,
    },
    /// One side's analysis failed (a question value, the interval, reading): displayed as
    /// `{side}: {error}`.
    Analyze {
        /// The side.
        side: Side,
        /// What went wrong.
        error: AnalyzeError,
    },
    /// One side has no record (in the time range asked for, when one was).
    Empty {
        /// The side.
        side: Side,
        /// Its logs.
        logs: Vec<String>,
    },
    /// The two sides share no counter (matched by object, instance and counter, the machine
    /// ignored).
    NothingShared {
        /// A few counters of the baseline (English paths without the machine).
        baseline: Vec<String>,
        /// A few counters of the candidate.
        candidate: Vec<String>,
        /// A side whose object names are none of the English ones (a localized log that name
        /// tables would translate), if one is.
        localized: Option<Side>,
    },
}

impl CompareError {
    /// The message, naming the parameter that gives name tables as the front end calls it (the
    /// CLI's `--names`, Python's `names`).
    pub fn message(&self, names_parameter: &str) -> String {
        match self {
            CompareError::NothingShared {
                baseline,
                candidate,
                localized,
            } => {
                let mut s = format!(
                    "the baseline and the candidate share no counter (matched by object, instance \
                     and counter, the machine ignored); the baseline has {}; the candidate has {}",
                    baseline.join(", "),
                    candidate.join(", ")
                );
                if let Some(side) = localized {
                    s.push_str(&format!(
                        "; the {side}'s names are not English: give its name tables with \
                         {names_parameter} so that they are compared in English"
                    ));
                }
                s
            }
            other => other.to_string(),
        }
    }

    /// The side the error is about, when it is about one.
    pub fn side(&self) -> Option<Side> {
        match self {
            CompareError::Inputs { side, .. }
            | CompareError::Analyze { side, .. }
            | CompareError::Empty { side, .. } => Some(*side),
            CompareError::NothingShared { .. } => None,
        }
    }
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompareError::Inputs { side, error } => write!(f, "{side}: {error}"),
            CompareError::Analyze { side, error } => write!(f, "{side}: {error}"),
            CompareError::Empty { side, logs } => write!(
                f,
                "the {side} ({}) has no record in the time range read (the begin and end times \
                 given, or the whole log)",
                logs.join(", ")
            ),
            CompareError::NothingShared { .. } => f.write_str(&self.message("name tables")),
        }
    }
}

impl std::error::Error for CompareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompareError::Inputs { error, .. } => error.source(),
            CompareError::Analyze { error, .. } => error.source(),
            _ => None,
        }
    }
}
