//! Data sources that match the log's counters by regular expression
//! (`ISCOUNTEROBJECTREGULAREXPRESSION="True"` and `REGULAREXPRESSIONCOUNTERPATH`): how PAL matches
//! named SQL Server instances (`MSSQL$PROD:Buffer Manager`).
//!
//! The expressions come from untrusted files: they are compiled by the `regex` crate, whose
//! matching takes time linear in the name matched, with the compiled program and its lazy DFA
//! bounded ([`MAX_REGEX_SIZE`]); an expression beyond the bounds or malformed is refused with the
//! crate's reason.

use regex::{Regex, RegexBuilder};

use crate::path::{eq_ignore_case, CounterPath};

use super::rules::RegexPath;

/// The most memory, in bytes, one compiled expression (and, separately, its lazy DFA's cache) may
/// take; a larger one is refused.
pub const MAX_REGEX_SIZE: usize = 1 << 20;

/// How one part of the path (object, counter, instance) matches a name.
#[derive(Debug)]
enum Part {
    /// Every name, and none (the instance of a path without one, or `*`).
    Any,
    /// The name, ignoring case.
    Name(String),
    /// A regular expression that must match the whole name, ignoring case.
    Regex(Regex),
}

impl Part {
    fn new(text: &str, regex: bool, what: &str) -> Result<Part, String> {
        if regex {
            // Anchored at both ends: the expression names a whole object, counter or instance.
            RegexBuilder::new(&format!("^(?:{text})$"))
                .case_insensitive(true)
                .size_limit(MAX_REGEX_SIZE)
                .dfa_size_limit(MAX_REGEX_SIZE)
                .build()
                .map(Part::Regex)
                .map_err(|e| format!("the {what} expression {text:?} is refused: {e}"))
        } else {
            Ok(Part::Name(text.to_owned()))
        }
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Part::Any => true,
            Part::Name(n) => eq_ignore_case(n, name),
            Part::Regex(r) => r.is_match(name),
        }
    }
}

/// A [`RegexPath`] compiled: object, counter and instance matchers.
#[derive(Debug)]
pub(super) struct RegexMatcher {
    object: Part,
    counter: Part,
    instance: Part,
}

impl RegexMatcher {
    /// Compiles the parts of `path` that are expressions; the error says which part and why.
    pub(super) fn new(path: &RegexPath) -> Result<RegexMatcher, String> {
        let instance = match path.instance.as_deref() {
            None | Some("") | Some("*") => Part::Any,
            Some(i) => Part::new(i, path.instance_regex, "instance")?,
        };
        Ok(RegexMatcher {
            object: Part::new(&path.object, path.object_regex, "object")?,
            counter: Part::new(&path.counter, path.counter_regex, "counter")?,
            instance,
        })
    }

    /// Whether the log's column `column` is one of the data source's: its object, counter and
    /// instance (as the log writes it: `parent/instance#n`) match, on any machine.
    pub(super) fn matches(&self, column: &CounterPath) -> bool {
        if !self.object.matches(&column.object) || !self.counter.matches(&column.counter) {
            return false;
        }
        match (&self.instance, &column.instance) {
            (Part::Any, _) => true,
            (_, None) => false,
            (part, Some(instance)) => {
                let mut full = match &column.parent {
                    Some(p) => format!("{p}/{instance}"),
                    None => instance.clone(),
                };
                if let Some(n) = column.index {
                    full.push_str(&format!("#{n}"));
                }
                part.matches(&full)
            }
        }
    }
}
