//! Counter paths to keep, with wildcards and names translated across languages (`relog -c`).

use crate::names::NameTable;
use crate::path::CounterPath;

/// Counter paths to keep, with wildcards, as `relog -c` / `-cf` take them.
///
/// A column is kept when any pattern [selects](CounterPath::selects) it. With name tables (one per
/// language, e.g. from a `PerfStringBackup.INI`), object and counter names also match through the
/// title index they share: `\PhysicalDisk(_Total)\% Idle Time` selects the column
/// `\Disco físico(_Total)\% de tiempo inactivo` of a Spanish log when an English and a Spanish table
/// give both names the same indexes (and the other way round).
#[derive(Clone, Debug, Default)]
pub struct CounterFilter {
    patterns: Vec<CounterPath>,
    tables: Vec<NameTable>,
}

impl CounterFilter {
    /// A filter that keeps what any of `patterns` selects.
    pub fn new(patterns: Vec<CounterPath>) -> Self {
        CounterFilter {
            patterns,
            tables: Vec::new(),
        }
    }

    /// The same filter translating names through `tables` (one per language).
    pub fn with_names(mut self, tables: Vec<NameTable>) -> Self {
        self.tables = tables;
        self
    }

    /// The patterns.
    pub fn patterns(&self) -> &[CounterPath] {
        &self.patterns
    }

    /// Whether the filter keeps the counter `path`.
    pub fn matches(&self, path: &CounterPath) -> bool {
        let aliases = self.aliases(path);
        self.patterns
            .iter()
            .any(|p| Self::selects(p, path, aliases.as_ref()))
    }

    /// For each pattern, in order, whether it selects any of `paths`: the patterns left `false`
    /// are those that select nothing. Each path's names are translated once, for every pattern.
    pub(crate) fn matched_patterns<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a CounterPath>,
    ) -> Vec<bool> {
        let mut matched = vec![false; self.patterns.len()];
        for path in paths {
            let aliases = self.aliases(path);
            for (m, p) in matched.iter_mut().zip(&self.patterns) {
                *m = *m || Self::selects(p, path, aliases.as_ref());
            }
        }
        matched
    }

    /// The names `path`'s object and counter go by in the tables (none without tables).
    fn aliases(&self, path: &CounterPath) -> Option<(Vec<String>, Vec<String>)> {
        if self.tables.is_empty() {
            return None;
        }
        Some((
            crate::names::aliases(&self.tables, &path.object),
            crate::names::aliases(&self.tables, &path.counter),
        ))
    }

    /// Whether `pattern` selects `path`, by its own names or by `aliases`.
    fn selects(
        pattern: &CounterPath,
        path: &CounterPath,
        aliases: Option<&(Vec<String>, Vec<String>)>,
    ) -> bool {
        match aliases {
            None => pattern.selects(
                path,
                std::iter::once(path.object.as_str()),
                std::iter::once(path.counter.as_str()),
            ),
            Some((objects, counters)) => pattern.selects(
                path,
                objects.iter().map(String::as_str),
                counters.iter().map(String::as_str),
            ),
        }
    }
}
