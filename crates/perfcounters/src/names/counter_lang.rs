//! PAL's translation table `CounterLang.xml`: object and counter names in up to 17 locales.
//!
//! ```xml
//! <CounterLang>
//!   <CounterObject enUS="Processor" deDE="Prozessor" …>
//!     <CounterName enUS="% Processor Time" deDE="Prozessorzeit (%)" … />
//!   </CounterObject>
//! </CounterLang>
//! ```
//!
//! The file has no title indexes, so [`parse_counter_lang`] gives each distinct English name an
//! index of its own, from [`SYNTHETIC_BASE`] up (above any index Windows assigns, so that the
//! tables never alias a real name table's entries), and returns one [`NameTable`] per locale. Every
//! name of a locale shares the index of its English name, which is what name matching
//! ([`crate::log::CounterFilter::with_names`]) needs.
//!
//! PAL's own copy of the file is built in ([`BUILTIN_COUNTER_LANG`], [`builtin_tables`]; MIT, the
//! notice is `analyze/pal/LICENSE` beside the built-in threshold file): a log whose names are not
//! English is matched through it without any name-table file
//! ([`NameTables::for_log`](super::NameTables::for_log)).

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use super::NameTable;

/// The first index given to an English name of `CounterLang.xml`.
pub const SYNTHETIC_BASE: u32 = 0x4000_0000;

/// PAL's `CounterLang.xml` as PAL ships it (146 objects, 2,259 counters in 17 locales), built in
/// (MIT: PAL's notice is [`PAL_LICENSE`](crate::analyze::PAL_LICENSE)).
pub const BUILTIN_COUNTER_LANG: &str = include_str!("CounterLang.xml");

/// The tables of [`BUILTIN_COUNTER_LANG`], `enUS` first, read once per process.
pub fn builtin_tables() -> &'static [CounterLangTable] {
    static TABLES: OnceLock<Vec<CounterLangTable>> = OnceLock::new();
    // The built-in file is well formed (a unit test reads it); were it not, no table is built in.
    TABLES.get_or_init(|| parse_counter_lang(BUILTIN_COUNTER_LANG).unwrap_or_default())
}

/// A malformed `CounterLang.xml`: what and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CounterLangError {
    /// Line and column, when known.
    pub position: Option<(u32, u32)>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CounterLangError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((l, c)) => write!(f, "line {l}, column {c}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CounterLangError {}

/// One locale's names.
#[derive(Clone, Debug)]
pub struct CounterLangTable {
    /// The locale attribute as written (`enUS`, `deDE` …).
    pub locale: String,
    /// Its names, indexed like every other locale's.
    pub names: NameTable,
}

/// Whether `text` looks like PAL's `CounterLang.xml` (its root element).
pub fn looks_like_counter_lang(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    let t = match t.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or("", |(_, r)| r).trim_start(),
        None => t,
    };
    t.starts_with("<CounterLang")
}

/// Reads `CounterLang.xml`: one table per locale, `enUS` first.
pub fn parse_counter_lang(text: &str) -> Result<Vec<CounterLangTable>, CounterLangError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let opts = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: 2_000_000,
        ..Default::default()
    };
    let doc =
        roxmltree::Document::parse_with_options(text, opts).map_err(|e| CounterLangError {
            position: Some((e.pos().row, e.pos().col)),
            message: format!("malformed XML: {e}"),
        })?;
    let root = doc.root_element();
    if root.tag_name().name() != "CounterLang" {
        return Err(CounterLangError {
            position: Some((1, 1)),
            message: format!(
                "the root element is <{}>, not <CounterLang>",
                root.tag_name().name()
            ),
        });
    }
    let mut index_of: HashMap<String, u32> = HashMap::new();
    let mut tables: Vec<CounterLangTable> = vec![CounterLangTable {
        locale: "enUS".into(),
        names: NameTable::new(),
    }];
    let mut add = |node: roxmltree::Node<'_, '_>, tables: &mut Vec<CounterLangTable>| {
        let Some(english) = node.attribute("enUS").filter(|e| !e.is_empty()) else {
            return;
        };
        let next = SYNTHETIC_BASE.saturating_add(u32::try_from(index_of.len()).unwrap_or(u32::MAX));
        let index = *index_of
            .entry(crate::path::fold_case(english).into_owned())
            .or_insert(next);
        for a in node.attributes() {
            if a.value().is_empty() {
                continue;
            }
            let slot = match tables.iter().position(|t| t.locale == a.name()) {
                Some(i) => i,
                None => {
                    tables.push(CounterLangTable {
                        locale: a.name().to_owned(),
                        names: NameTable::new(),
                    });
                    tables.len() - 1
                }
            };
            if let Some(t) = tables.get_mut(slot) {
                t.names.insert(index, a.value());
            }
        }
    };
    for object in root.children().filter(|n| n.is_element()) {
        add(object, &mut tables);
        for counter in object.children().filter(|n| n.is_element()) {
            add(counter, &mut tables);
        }
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locales_share_indexes() {
        let xml = r#"<CounterLang>
  <CounterObject enUS="Processor" deDE="Prozessor" esES="Procesador">
    <CounterName enUS="% Processor Time" deDE="Prozessorzeit (%)" esES="% de tiempo de procesador" />
  </CounterObject>
  <CounterObject enUS="Memory" deDE="Speicher"><CounterName enUS="% Processor Time" deDE="x"/></CounterObject>
</CounterLang>"#;
        assert!(looks_like_counter_lang(xml));
        let t = parse_counter_lang(xml).unwrap();
        let locales: Vec<&str> = t.iter().map(|t| t.locale.as_str()).collect();
        assert_eq!(locales, ["enUS", "deDE", "esES"]);
        let de = &t[1].names;
        let en = &t[0].names;
        let i = de.index_of("Prozessorzeit (%)").unwrap();
        assert_eq!(en.name(i), Some("% Processor Time"));
        assert_eq!(i, SYNTHETIC_BASE + 1);
        assert_eq!(de.names(i).collect::<Vec<_>>(), ["Prozessorzeit (%)", "x"]);
        assert!(parse_counter_lang("<Other/>").is_err());
        // The built-in copy: 17 locales, enUS first.
        let builtin = builtin_tables();
        assert_eq!(builtin.len(), 17);
        assert_eq!(builtin[0].locale, "enUS");
        let es = builtin.iter().find(|t| t.locale == "esES").unwrap();
        let i = es.names.index_of("Procesador").unwrap();
        assert_eq!(builtin[0].names.name(i), Some("Processor"));
        assert!(parse_counter_lang("<CounterLang>")
            .unwrap_err()
            .position
            .is_some());
    }
}
