//! A log for every built-in threshold file: the columns the enabled analyses of a set of rules
//! name, as concrete counter paths on machine `PALTEST`. Used by the coverage test
//! (`tests/analyze_pal_files.rs`) and by `examples/pal_log.rs`, which writes such a log for all 72
//! files at a size for timing `perfcounters analyze` against `perfcounters relog`.

use std::collections::HashSet;

use perfcounters::analyze::{DataSourceKind, Rules};
use perfcounters::path::CounterPath;

/// A name of the log for a name of a path with wildcards: `*` alone becomes `fallback`, a `*` or
/// `?` inside a name is dropped (`sqlservr*` → `sqlservr`).
fn concrete_name(name: &str, fallback: &str) -> String {
    let n: String = name.chars().filter(|c| *c != '*' && *c != '?').collect();
    if n.is_empty() {
        fallback.to_owned()
    } else {
        n
    }
}

/// The log's columns for a data source's path: on machine `PALTEST`; an instance `*` gives two
/// instances, `_Total` and `1` (so that `EXCLUDE INSTANCE="_Total"` leaves one).
fn columns_for(p: &CounterPath) -> Vec<String> {
    let object = concrete_name(&p.object, "Object");
    let counter = concrete_name(&p.counter, "Count");
    let instances: Vec<Option<String>> = match &p.instance {
        None => vec![None],
        Some(i) if i == "*" => vec![Some("_Total".into()), Some("1".into())],
        Some(i) => vec![Some(concrete_name(i, "1"))],
    };
    instances
        .into_iter()
        .map(|i| {
            let i = match (i, &p.parent) {
                (Some(i), Some(parent)) => format!("({}/{i})", concrete_name(parent, "0")),
                (Some(i), None) => format!("({i})"),
                (None, _) => String::new(),
            };
            format!(r"\\PALTEST\{object}{i}\{counter}")
        })
        .collect()
}

/// Every column the enabled analyses of `rules` name (counter-log data sources whose path
/// parses), each once, in the order they are first named.
pub fn columns_of(rules: &Rules) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for a in rules.enabled() {
        for ds in &a.data_sources {
            let (DataSourceKind::CounterLog, Ok(p)) = (&ds.kind, &ds.path) else {
                continue;
            };
            for c in columns_for(p) {
                if seen.insert(perfcounters::path::fold_case(&c).into_owned()) {
                    out.push(c);
                }
            }
        }
    }
    out
}
