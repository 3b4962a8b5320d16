//! The catalogue of the built-in threshold files, as `perfcounters analyze --list-rules` shows
//! it: each file with its title, its analyses (its own, and with those it inherits) and the files
//! it inherits.

use super::builtin::BUILTIN_RULES;
use super::rules::{parsed_builtin, Rules, RulesError};

/// One built-in threshold file in the catalogue.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogueEntry {
    /// The file's name (`SQLServer2014.xml`), which `--rules` takes (ignoring case, with or
    /// without `.xml`).
    pub file: &'static str,
    /// The `NAME` of its `PAL` element (`Microsoft SQL Server 2014`).
    pub title: String,
    /// The analyses the file defines.
    pub analyses: usize,
    /// The analyses with those of the files it inherits (an inherited analysis the file redefines
    /// counts once).
    pub with_inherited: usize,
    /// Of those, the enabled ones (the ones an analysis evaluates).
    pub enabled: usize,
    /// The files it inherits, as it names them.
    pub inherits: Vec<String>,
}

/// Every built-in threshold file ([`BUILTIN_RULES`]), in the order of their
/// names ignoring case. Each file is read with the files it inherits; an error would be a built-in
/// file that does not read (the tests read them all).
pub fn builtin_catalogue() -> Result<Vec<CatalogueEntry>, RulesError> {
    BUILTIN_RULES
        .iter()
        .map(|b| {
            let own = parsed_builtin(b)?;
            let all = Rules::builtin_named(b.file)?;
            Ok(CatalogueEntry {
                file: b.file,
                title: own.name,
                analyses: own.analyses.len(),
                with_inherited: all.analyses.len(),
                enabled: all.enabled().count(),
                inherits: own.inherits,
            })
        })
        .collect()
}
