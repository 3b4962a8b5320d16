//! Why a counter path does not resolve against a collection: [`ExpandError`], with close names.

use std::fmt;

use crate::status::PdhStatus;
use crate::suggest::DidYouMean;

/// Why a counter path could not be resolved against a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpandError {
    /// No object matches.
    NoObject {
        /// The path as added.
        path: String,
        /// The object name that did not match.
        object: String,
        /// Close object names.
        suggestions: Vec<String>,
    },
    /// The object exists but has no such counter.
    NoCounter {
        /// The path as added.
        path: String,
        /// The object.
        object: String,
        /// The counter name that did not match.
        counter: String,
        /// Close counter names.
        suggestions: Vec<String>,
    },
    /// No instance matches the path's instance part (or the object has none / needs one).
    NoInstance {
        /// The path as added.
        path: String,
        /// The object.
        object: String,
        /// The instance part that did not match, or a description of the mismatch.
        instance: String,
        /// Close instance names.
        suggestions: Vec<String>,
    },
}

impl ExpandError {
    /// The PDH status that a counter with this problem reports.
    pub fn status(&self) -> PdhStatus {
        match self {
            ExpandError::NoObject { .. } => PdhStatus::PDH_CSTATUS_NO_OBJECT,
            ExpandError::NoCounter { .. } => PdhStatus::PDH_CSTATUS_NO_COUNTER,
            ExpandError::NoInstance { .. } => PdhStatus::PDH_CSTATUS_NO_INSTANCE,
        }
    }
}

fn did_you_mean(f: &mut fmt::Formatter<'_>, suggestions: &[String]) -> fmt::Result {
    write!(f, "{}", DidYouMean(suggestions))
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpandError::NoObject {
                path,
                object,
                suggestions,
            } => {
                write!(f, "{path}: no object named \"{object}\"")?;
                did_you_mean(f, suggestions)
            }
            ExpandError::NoCounter {
                path,
                object,
                counter,
                suggestions,
            } => {
                write!(
                    f,
                    "{path}: object \"{object}\" has no counter named \"{counter}\""
                )?;
                did_you_mean(f, suggestions)
            }
            ExpandError::NoInstance {
                path,
                object,
                instance,
                suggestions,
            } => {
                write!(f, "{path}: object \"{object}\" has no instance {instance}")?;
                did_you_mean(f, suggestions)
            }
        }
    }
}

impl std::error::Error for ExpandError {}
