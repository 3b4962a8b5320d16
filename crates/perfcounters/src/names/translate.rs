//! Names translated across languages through the title indexes they share: the one rule that
//! relog's counter filter (a path in one language selects columns named in another) and analyze
//! (columns of a localized log named in English) both follow.

use super::NameTable;

/// `name` and every name that shares a title index with it in any of `tables` (one table per
/// language), `name` first, each once.
///
/// ```
/// use perfcounters::names::{aliases, NameTable};
/// let mut en = NameTable::new();
/// en.insert(238, "Processor");
/// let mut de = NameTable::new();
/// de.insert(238, "Prozessor");
/// assert_eq!(aliases(&[en, de], "prozessor"), ["prozessor", "Processor", "Prozessor"]);
/// ```
pub fn aliases(tables: &[NameTable], name: &str) -> Vec<String> {
    let mut out = vec![name.to_owned()];
    for t in tables {
        for index in t.indexes_of(name) {
            for u in tables {
                for n in u.names(index) {
                    if !out.iter().any(|o| o == n) {
                        out.push(n.to_owned());
                    }
                }
            }
        }
    }
    out
}

/// The English name of `name`: `name` itself when one of the `english` tables knows it, else the
/// first English name of a title index that `name` has in one of `tables`, else `name` itself.
///
/// ```
/// use perfcounters::names::{english_name, NameTable};
/// let mut de = NameTable::new();
/// de.insert(6, "Prozessorzeit (%)");
/// let english = [NameTable::builtin_english()];
/// assert_eq!(english_name(&english, &[de], "Prozessorzeit (%)"), "% Processor Time");
/// ```
pub fn english_name(english: &[&NameTable], tables: &[NameTable], name: &str) -> String {
    if english.iter().any(|e| e.index_of(name).is_some()) {
        return name.to_owned();
    }
    for t in tables {
        for index in t.indexes_of(name) {
            for e in english {
                if let Some(n) = e.name(index) {
                    return n.to_owned();
                }
            }
        }
    }
    name.to_owned()
}
