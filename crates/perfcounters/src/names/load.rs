//! Reading a name table from bytes or a file whose form is not known in advance.

use std::io;
use std::path::Path;

use super::{parse_multi_sz, parse_text, NameError, NameTable};

/// The file forms of one name table that [`NameTable::from_bytes`] and [`NameTable::load`] read.
///
/// Each form has a recognition rule ([`NameFormat::matches`]) and a parser ([`NameFormat::parse`]);
/// [`NameFormat::ALL`] lists the forms from the most specific rule to the fallback, and
/// [`NameFormat::detect`] takes the first that matches. A further form is one more variant, its
/// rule and its parser, placed in `ALL` before the forms its files would otherwise be taken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameFormat {
    /// A `PerfStringBackup.INI` as `lodctr /S` saves it ([`super::ini`]): every language it holds,
    /// merged into one table, English (`[PerfStrings_009]`) first so that [`NameTable::name`] gives
    /// the English name and [`NameTable::names`] its translations.
    Ini,
    /// The registry's REG_MULTI_SZ `Counter` or `Help` value as dumped from the registry: UTF-16LE
    /// strings alternating an index and a text ([`parse_multi_sz`]).
    MultiSz,
    /// The plain-text form, one `index name` pair a line ([`parse_text`]), in the encodings
    /// [`super::ini`] reads too: UTF-8 or UTF-16 (a byte-order mark is skipped), else the ANSI code
    /// page 1252.
    Text,
}

impl NameFormat {
    /// Every form, in the order [`NameFormat::detect`] tries them.
    pub const ALL: [NameFormat; 3] = [NameFormat::Ini, NameFormat::MultiSz, NameFormat::Text];

    /// Whether `bytes` look like this form (nothing is validated):
    ///
    /// * [`NameFormat::Ini`]: the first character that is not blank is `[` (in any of the
    ///   encodings [`super::ini`] reads); it comes first because Windows writes the file in UTF-16LE
    ///   without a byte-order mark, whose second byte is 0 too.
    /// * [`NameFormat::MultiSz`]: the second byte is 0. A REG_MULTI_SZ list starts with an index,
    ///   ASCII digits, whose UTF-16LE code units have a zero high byte; text never has a NUL there
    ///   (UTF-16 text starts with its byte-order mark). An odd length still matches, so that the
    ///   parser reports the stray byte.
    /// * [`NameFormat::Text`]: anything (the fallback).
    pub fn matches(self, bytes: &[u8]) -> bool {
        match self {
            NameFormat::Ini => super::ini::looks_like_ini(bytes),
            NameFormat::MultiSz => bytes.get(1) == Some(&0),
            NameFormat::Text => true,
        }
    }

    /// The form of `bytes`: the first of [`NameFormat::ALL`] that [`matches`](NameFormat::matches).
    pub fn detect(bytes: &[u8]) -> NameFormat {
        NameFormat::ALL
            .into_iter()
            .find(|f| f.matches(bytes))
            .unwrap_or(NameFormat::Text)
    }

    /// Parses `bytes` in this form.
    ///
    /// # Errors
    /// The parser's [`NameError`].
    pub fn parse(self, bytes: &[u8]) -> Result<NameTable, NameError> {
        match self {
            NameFormat::Ini => {
                let ini =
                    super::ini::parse_perf_string_backup(bytes, None).map_err(NameError::Ini)?;
                let mut table = NameTable::new();
                let english = ini.language("009");
                for lang in english.into_iter().chain(
                    ini.languages
                        .iter()
                        .filter(|l| !l.id.eq_ignore_ascii_case("009")),
                ) {
                    table.merge(&lang.names);
                }
                Ok(table)
            }
            NameFormat::MultiSz => parse_multi_sz(bytes),
            NameFormat::Text => parse_text(&super::ini::decode(bytes, None)),
        }
    }
}

impl NameTable {
    /// Reads a name table in any form of [`NameFormat`], recognized by [`NameFormat::detect`]: a
    /// `PerfStringBackup.INI` (every language), a REG_MULTI_SZ dump or `index name` text.
    ///
    /// ```
    /// use perfcounters::names::NameTable;
    /// let text = NameTable::from_bytes(b"238 Processor\n6 % Processor Time\n").unwrap();
    /// let utf16: Vec<u8> = "238\0Processor\0\0".encode_utf16().flat_map(u16::to_le_bytes).collect();
    /// let multi_sz = NameTable::from_bytes(&utf16).unwrap();
    /// assert_eq!(text.name(238), Some("Processor"));
    /// assert_eq!(multi_sz.name(238), Some("Processor"));
    /// ```
    ///
    /// # Errors
    /// The [`NameError`] of the detected form's parser.
    pub fn from_bytes(bytes: &[u8]) -> Result<NameTable, NameError> {
        NameFormat::detect(bytes).parse(bytes)
    }

    /// Reads the name table file at `path` ([`NameTable::from_bytes`]).
    ///
    /// # Errors
    /// The error of reading the file, or one of kind [`io::ErrorKind::InvalidData`] whose inner
    /// error is the [`NameError`]. Neither names the file: callers add the path, as they do for
    /// other I/O errors.
    pub fn load(path: &Path) -> io::Result<NameTable> {
        let bytes = std::fs::read(path)?;
        NameTable::from_bytes(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// The name tables that match a log's names across languages, read from files by one rule
/// ([`NameTables::load`]): what `relog -c`, `analyze` and the Python package's `read_log` take as
/// their `names`.
///
/// Kept apart: the tables of the log's language(s) and English tables besides the built-in one
/// (the `enUS` table of PAL's `CounterLang.xml`, which has no Windows title indexes of its own).
/// [`NameTables::for_matching`] lists them in the order a
/// [`CounterFilter`](crate::log::CounterFilter) takes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NameTables {
    languages: Vec<NameTable>,
    english: Vec<NameTable>,
}

impl NameTables {
    /// No table besides the built-in English one.
    pub fn new() -> Self {
        NameTables::default()
    }

    /// The tables of `files`, each read by its content:
    ///
    /// * PAL's `CounterLang.xml`: one table per locale, `enUS` kept as an English table;
    /// * a `PerfStringBackup.INI`: one table per language it holds (text without a byte-order mark
    ///   that is not UTF-8 is read in the ANSI `code_page`, 1252 by default);
    /// * a REG_MULTI_SZ dump or `index name` text ([`NameTable::from_bytes`]): one table.
    ///
    /// # Errors
    /// A file cannot be read or is malformed: the error names the file.
    pub fn load<P: AsRef<Path>>(
        files: &[P],
        code_page: Option<u16>,
    ) -> Result<NameTables, NameFileError> {
        let mut out = NameTables::default();
        for f in files {
            out.read_file(f.as_ref(), code_page)?;
        }
        Ok(out)
    }

    fn read_file(&mut self, path: &Path, code_page: Option<u16>) -> Result<(), NameFileError> {
        let error = |cause: NameFileCause| NameFileError {
            path: path.to_path_buf(),
            cause,
        };
        let bytes = std::fs::read(path).map_err(|e| error(NameFileCause::Io(e)))?;
        let text = String::from_utf8_lossy(&bytes);
        if super::counter_lang::looks_like_counter_lang(&text) {
            let tables = super::counter_lang::parse_counter_lang(&text)
                .map_err(|e| error(NameFileCause::CounterLang(e)))?;
            for t in tables {
                if t.locale.eq_ignore_ascii_case("enUS") {
                    self.english.push(t.names);
                } else {
                    self.languages.push(t.names);
                }
            }
        } else if super::ini::looks_like_ini(&bytes) {
            let ini = super::ini::parse_perf_string_backup(&bytes, code_page)
                .map_err(|e| error(NameFileCause::Names(NameError::Ini(e))))?;
            self.languages
                .extend(ini.languages.into_iter().map(|l| l.names));
        } else {
            self.languages
                .push(NameTable::from_bytes(&bytes).map_err(|e| error(NameFileCause::Names(e)))?);
        }
        Ok(())
    }

    /// A table of the log's language(s), added after those already held.
    pub fn push(&mut self, table: NameTable) {
        self.languages.push(table);
    }

    /// An English table besides the built-in one, added after those already held.
    pub fn push_english(&mut self, table: NameTable) {
        self.english.push(table);
    }

    /// The tables of the log's language(s), in the order read.
    pub fn languages(&self) -> &[NameTable] {
        &self.languages
    }

    /// The English tables besides the built-in one.
    pub fn english(&self) -> &[NameTable] {
        &self.english
    }

    /// Whether no table of another language was given (names then match as written).
    pub fn is_empty(&self) -> bool {
        self.languages.is_empty() && self.english.is_empty()
    }

    /// The tables a name is matched through: none when [`is_empty`](Self::is_empty), else the
    /// built-in English table, the other English tables, then the languages'.
    pub fn for_matching(&self) -> Vec<NameTable> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(1 + self.english.len() + self.languages.len());
        out.push(NameTable::builtin_english().clone());
        out.extend(self.english.iter().cloned());
        out.extend(self.languages.iter().cloned());
        out
    }
}

/// What matching says of the language of a log's objects ([`LogLanguage::of`]), which decides
/// whether the built-in translation table (PAL's `CounterLang.xml`,
/// [`counter_lang::builtin_tables`](super::counter_lang::builtin_tables)) is used.
///
/// Each distinct object name of the log is looked up, ignoring case: **English** when the
/// built-in English table or the table's `enUS` names know it; **translated** when only another
/// locale of the table knows it; **unknown** otherwise (a product's own objects, or a language
/// the table lacks). The log is taken as not English, and matched through the table, when at least
/// one object is translated and translated objects outnumber English ones
/// ([`uses_builtin`](Self::uses_builtin)): a Spanish log names every Windows object in Spanish, while
/// an English log with a few localized objects, or objects no table knows, stays as it is. This is
/// what PAL does, by matching rather than by any language tag, which logs do not carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogLanguage {
    /// Objects known by an English name.
    pub english: usize,
    /// Objects known only by a name of another locale of the built-in table.
    pub translated: usize,
    /// Objects no table knows.
    pub unknown: usize,
    /// Of the unknown objects, those whose name holds an English word of the tables' names
    /// (`MSSQL$PROD:Buffer Manager`, `Object 1`): a product's own objects, not a language.
    pub unknown_english_words: usize,
    /// The locales of the built-in table that know a translated object (`esES`, `ruRU` …), most
    /// objects first.
    pub locales: Vec<String>,
}

impl LogLanguage {
    /// The language of the objects `objects` (names as the log writes them; repeats count once).
    pub fn of<'a, I: IntoIterator<Item = &'a str>>(objects: I) -> Self {
        let english = NameTable::builtin_english();
        // The translation table is read (tens of milliseconds, once per process) only for an
        // object the built-in English table does not know: a log of Windows' own objects in
        // English never needs it.
        let mut translations: Option<&[super::counter_lang::CounterLangTable]> = None;
        let mut seen: Vec<std::borrow::Cow<'a, str>> = Vec::new();
        let mut out = LogLanguage::default();
        let mut hits: Vec<(usize, usize)> = Vec::new();
        for o in objects {
            let key = crate::path::fold_case(o);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            if english.index_of(o).is_some() {
                out.english += 1;
                continue;
            }
            let tables = *translations.get_or_insert_with(super::counter_lang::builtin_tables);
            if tables
                .first()
                .is_some_and(|t| t.names.index_of(o).is_some())
            {
                out.english += 1;
                continue;
            }
            let mut known = false;
            for (i, t) in tables.iter().enumerate().skip(1) {
                if t.names.index_of(o).is_some() {
                    known = true;
                    match hits.iter_mut().find(|h| h.0 == i) {
                        Some(h) => h.1 += 1,
                        None => hits.push((i, 1)),
                    }
                }
            }
            if known {
                out.translated += 1;
            } else {
                out.unknown += 1;
                if has_english_word(o) {
                    out.unknown_english_words += 1;
                }
            }
        }
        hits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out.locales = hits
            .into_iter()
            .filter_map(|(i, _)| translations?.get(i).map(|t| t.locale.clone()))
            .collect();
        out
    }

    /// Whether the log is matched through the built-in table: some objects are known only in
    /// another language, and they outnumber the English ones.
    pub fn uses_builtin(&self) -> bool {
        self.translated > 0 && self.translated > self.english
    }

    /// Whether no object has an English name, the built-in table knows none either, and some
    /// hold no English word (`Suoritin`, `Процессор`): the log is in a language the table lacks,
    /// and only the machine's own name tables can match English paths. Unknown objects named in
    /// English words (`MSSQL$PROD:Buffer Manager`) are a product's own, not a language.
    pub fn unknown_language(&self) -> bool {
        self.english == 0 && self.translated == 0 && self.unknown > self.unknown_english_words
    }
}

/// Whether `name` holds a word (three letters or more, case ignored) of the English names of the
/// built-in tables.
fn has_english_word(name: &str) -> bool {
    static WORDS: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        let mut words = std::collections::HashSet::new();
        let english = NameTable::builtin_english().iter().map(|(_, n)| n);
        let en_us = super::counter_lang::builtin_tables()
            .first()
            .into_iter()
            .flat_map(|t| t.names.iter().map(|(_, n)| n));
        for name in english.chain(en_us) {
            words.extend(words_of(name));
        }
        words
    });
    words_of(name).any(|w| words.contains(&w))
}

/// The words of `name` (runs of letters, three or more), case folded.
fn words_of(name: &str) -> impl Iterator<Item = String> + '_ {
    name.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 3)
        .map(|w| crate::path::fold_case(w).into_owned())
}

impl NameTables {
    /// The tables to match a log of `language` through: these, and when the log is not English
    /// ([`LogLanguage::uses_builtin`]) the built-in table's locales that know its objects, after
    /// them (with the table's `enUS` names as English). Tables given by the caller thus come first
    /// and add to the built-in ones.
    pub fn for_log(&self, language: &LogLanguage) -> NameTables {
        let mut out = self.clone();
        if !language.uses_builtin() {
            return out;
        }
        let tables = super::counter_lang::builtin_tables();
        if let Some(en) = tables.first() {
            out.english.push(en.names.clone());
        }
        for locale in &language.locales {
            if let Some(t) = tables.iter().find(|t| &t.locale == locale) {
                out.languages.push(t.names.clone());
            }
        }
        out
    }
}

/// A name-table file that [`NameTables::load`] could not read: the file; the cause is its
/// [`source`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub struct NameFileError {
    /// The file.
    pub path: std::path::PathBuf,
    /// What went wrong.
    pub cause: NameFileCause,
}

/// Why a name-table file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum NameFileCause {
    /// Reading the file failed.
    Io(io::Error),
    /// A `PerfStringBackup.INI`, REG_MULTI_SZ dump or text table is malformed.
    Names(NameError),
    /// PAL's `CounterLang.xml` is malformed.
    CounterLang(super::counter_lang::CounterLangError),
}

impl std::fmt::Display for NameFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cause {
            NameFileCause::Io(_) => write!(f, "cannot read name table {}", self.path.display()),
            _ => write!(f, "name table {} is malformed", self.path.display()),
        }
    }
}

impl std::error::Error for NameFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.cause {
            NameFileCause::Io(e) => Some(e),
            NameFileCause::Names(e) => Some(e),
            NameFileCause::CounterLang(e) => Some(e),
        }
    }
}
