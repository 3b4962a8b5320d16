//! Counter name tables: title index → names, and names → title indexes.
//!
//! Performance data carries title indexes, not names (`ObjectNameTitleIndex`,
//! `CounterNameTitleIndex`). Windows keeps the names in the `Counter` and `Help` values of
//! `HKEY_PERFORMANCE_TEXT` / `HKEY_PERFORMANCE_DATA` (`"Counter 009"` for English): a REG_MULTI_SZ
//! list of UTF-16 strings that alternate a decimal index and a text.
//!
//! * [`NameTable`] is the multimap both ways. One index can carry several names (tables merged
//!   from several sources), and one name can sit at several indexes: the English table has
//!   `"% Idle Time"` at 1482 (disks) and at 1746 (processors).
//! * [`parse_multi_sz`] / [`to_multi_sz`] read and write the registry form; [`parse_text`] /
//!   [`to_text`] a plain-text form with one `index name` pair a line. [`NameTable::from_bytes`] and
//!   [`NameTable::load`] recognize the form ([`NameFormat`]) and read either.
//! * [`NameTable::builtin_english`] is a static table of the standard Windows objects and counters
//!   with their English indexes; [`builtin`] has its entries, their evidence, and object-aware
//!   lookups for the counters the Linux source produces.
//! * [`NameTable::apply`] fills the missing names of a [`Snapshot`].
//! * [`ini`] reads `PerfStringBackup.INI` (what `lodctr /S` saves): one table per installed language.
//! * [`counter_lang`] reads PAL's `CounterLang.xml` translation table: one table per locale.
//!
//! The parsers take untrusted input: they never panic, report the byte offset (registry form) or
//! the line (text form) of what is wrong, and never size an allocation from a number in the data.

pub mod builtin;
pub mod counter_lang;
pub mod ini;
mod load;
mod translate;

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::snapshot::Snapshot;

pub use load::{LogLanguage, NameFileCause, NameFileError, NameFormat, NameTables};
pub use translate::{aliases, english_name};

/// The most characters of offending text an error message keeps.
const ERROR_TEXT_MAX: usize = 64;

/// A counter name table: a multimap from title index to names, with a case-insensitive reverse
/// lookup from name to indexes.
///
/// Both directions are hash maps, so [`names`](Self::names) and [`indexes_of`](Self::indexes_of)
/// cost one hash lookup. An exact `(index, name)` pair is stored once; empty names are never
/// stored. Equality compares the pairs and the [`base_index`](Self::base_index).
#[derive(Clone, Default)]
pub struct NameTable {
    /// Index → names, in insertion order.
    by_index: HashMap<u32, Vec<Box<str>>>,
    /// Folded name → indexes, ascending.
    by_name: HashMap<Box<str>, Vec<u32>>,
    /// Number of (index, name) pairs.
    len: usize,
    /// The number of the leading `"1"` pair of a `Counter` list, when there was one.
    base_index: Option<u32>,
    /// The greatest index inserted (0 when empty).
    max_seen: u32,
}

impl PartialEq for NameTable {
    fn eq(&self, other: &Self) -> bool {
        self.base_index == other.base_index && self.by_index == other.by_index
    }
}

impl Eq for NameTable {}

impl fmt::Debug for NameTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NameTable")
            .field("base_index", &self.base_index)
            .field("pairs", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

/// The key of the reverse map: the name folded by the case rule of names
/// ([`fold_case`](crate::path::fold_case)). Windows compares with the locale-aware `lstrcmpi`,
/// which agrees for ASCII and for the usual letters of other scripts.
fn fold(name: &str) -> Box<str> {
    crate::path::fold_case(name).into()
}

impl NameTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `name` at `index`. Returns `false` (and changes nothing) when the name is empty or the
    /// exact pair is already present.
    pub fn insert(&mut self, index: u32, name: &str) -> bool {
        if name.is_empty() {
            return false;
        }
        let names = self.by_index.entry(index).or_default();
        if names.iter().any(|n| &**n == name) {
            return false;
        }
        names.push(name.into());
        let indexes = self.by_name.entry(fold(name)).or_default();
        if let Err(pos) = indexes.binary_search(&index) {
            indexes.insert(pos, index);
        }
        self.len += 1;
        self.max_seen = self.max_seen.max(index);
        true
    }

    /// Every name at `index`, in insertion order (empty if the index has none).
    pub fn names(&self, index: u32) -> impl Iterator<Item = &str> + '_ {
        self.by_index
            .get(&index)
            .into_iter()
            .flatten()
            .map(|n| &**n)
    }

    /// The first name at `index`.
    pub fn name(&self, index: u32) -> Option<&str> {
        self.by_index
            .get(&index)
            .and_then(|v| v.first())
            .map(|n| &**n)
    }

    /// Every index that carries `name`, in ascending order, compared case-insensitively like
    /// `PdhLookupPerfIndexByName` (see the type documentation for the folding used).
    pub fn indexes_of(&self, name: &str) -> impl Iterator<Item = u32> + '_ {
        self.by_name.get(&fold(name)).into_iter().flatten().copied()
    }

    /// The lowest index that carries `name` (case-insensitive), the one a scan of the registry
    /// list in index order finds first.
    pub fn index_of(&self, name: &str) -> Option<u32> {
        self.indexes_of(name).next()
    }

    /// Number of (index, name) pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the table holds no name.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every (index, name) pair, by ascending index, names of one index in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> + '_ {
        let mut keys: Vec<u32> = self.by_index.keys().copied().collect();
        keys.sort_unstable();
        keys.into_iter()
            .flat_map(move |k| self.names(k).map(move |n| (k, n)))
    }

    /// The number carried by the leading `"1"` pair of a `Counter` list, when the table was read
    /// from one (or [`set_base_index`](Self::set_base_index) was called).
    ///
    /// Microsoft's documentation calls it the maximum system index. In a real English table it is
    /// 1847, the `Base Index` of `PerfStringBackup.INI` (the end of the strings Windows itself
    /// installs), while `Last Counter` was much higher (9408), so it is not `Last Counter`.
    pub fn base_index(&self) -> Option<u32> {
        self.base_index
    }

    /// Sets or clears the [`base_index`](Self::base_index).
    pub fn set_base_index(&mut self, value: Option<u32>) {
        self.base_index = value;
    }

    /// The highest index the table knows: the greatest index that has a name, or the
    /// [`base_index`](Self::base_index) if that is greater; 0 for an empty table. This plays the
    /// role of the registry's `Last Counter` value.
    pub fn max_index(&self) -> u32 {
        self.max_seen.max(self.base_index.unwrap_or(0))
    }

    /// Adds every pair of `other` to this table (pairs already present are skipped). The base index
    /// becomes the greater of the two.
    pub fn merge(&mut self, other: &NameTable) {
        for (index, name) in other.iter() {
            self.insert(index, name);
        }
        self.base_index = match (self.base_index, other.base_index) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// The pairs of this table whose name is not the name `naming` gives their index (compared
    /// ignoring case): what this table adds in another language to a table that names the data.
    /// With `naming` the English table and this one a German table, `238 Prozessor` is kept and
    /// `2 System` (the same word in both) is not.
    ///
    /// ```
    /// use perfcounters::names::NameTable;
    /// let english: NameTable = [(2, "System"), (238, "Processor")].into_iter().collect();
    /// let german: NameTable = [(2, "System"), (238, "Prozessor"), (99, "Neu")].into_iter().collect();
    /// let other = german.other_names(&english);
    /// assert_eq!(other.iter().collect::<Vec<_>>(), [(99, "Neu"), (238, "Prozessor")]);
    /// ```
    pub fn other_names(&self, naming: &NameTable) -> NameTable {
        self.iter()
            .filter(|(index, name)| {
                naming
                    .name(*index)
                    .is_none_or(|n| !crate::path::eq_ignore_case(n, name))
            })
            .collect()
    }

    /// The built-in English table (see [`builtin`]), built once on first use.
    pub fn builtin_english() -> &'static NameTable {
        static TABLE: OnceLock<NameTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            let mut t = NameTable::new();
            for e in builtin::ENGLISH {
                t.insert(e.index, e.name);
            }
            t
        })
    }

    /// Fills the names that are `None` in `snapshot` from their title indexes; names already set
    /// are left alone, and indexes the table does not know stay `None`.
    ///
    /// * Objects with index 0 (PerfLib V2 countersets) are skipped entirely: their counters are
    ///   identified by counter ids, which are not title indexes.
    /// * Counter definitions with index 0 stay unnamed.
    /// * A base counter gets the table's name for its own title index like any other counter. Real
    ///   blocks reuse the numerator's index for the base (PERF_RAW_FRACTION 1350 "% Registry Quota
    ///   In Use" followed by a PERF_RAW_BASE with index 1350), so both then carry the same name;
    ///   they are told apart by the counter type, as
    ///   [`Object::counter_position_by_name`](crate::snapshot::Object::counter_position_by_name)
    ///   does. No `" Base"` suffix is invented, since no Windows name table contains one.
    pub fn apply(&self, snapshot: &mut Snapshot) {
        for object in &mut snapshot.objects {
            self.apply_to_object(object);
        }
    }

    /// [`NameTable::apply`] for one object.
    pub fn apply_to_object(&self, object: &mut crate::snapshot::Object) {
        if object.index == 0 {
            return;
        }
        if object.name.is_none() {
            object.name = self.name(object.index).map(str::to_owned);
        }
        for counter in &mut object.counters {
            if counter.name.is_none() && counter.index != 0 {
                counter.name = self.name(counter.index).map(str::to_owned);
            }
        }
    }
}

impl<'a> Extend<(u32, &'a str)> for NameTable {
    fn extend<I: IntoIterator<Item = (u32, &'a str)>>(&mut self, iter: I) {
        for (index, name) in iter {
            self.insert(index, name);
        }
    }
}

impl<'a> FromIterator<(u32, &'a str)> for NameTable {
    fn from_iter<I: IntoIterator<Item = (u32, &'a str)>>(iter: I) -> Self {
        let mut t = NameTable::new();
        t.extend(iter);
        t
    }
}

/// Why a name list could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// A `PerfStringBackup.INI` is malformed (see [`ini`]).
    Ini(ini::IniError),
    /// The registry form has an odd number of bytes; `offset` is the stray last byte.
    OddLength {
        /// Byte offset of the stray byte.
        offset: usize,
    },
    /// An index string is not a decimal number that fits in 32 bits.
    BadIndex {
        /// Byte offset of the string (registry form) or 0 (text form, see `line`).
        offset: usize,
        /// Line number, 1-based (text form), or 0 (registry form).
        line: usize,
        /// The offending text (at most 64 characters).
        text: String,
    },
    /// An index is the last string of the list: its text is missing (usually a truncated value).
    MissingText {
        /// Byte offset of the index string (registry form) or 0 (text form).
        offset: usize,
        /// Line number, 1-based (text form), or 0 (registry form).
        line: usize,
        /// The index.
        index: u32,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The line and the problem are the cause's (`source()`).
            NameError::Ini(_) => f.write_str("PerfStringBackup.INI"),
            NameError::OddLength { offset } => write!(
                f,
                "name list: odd byte count, stray byte at offset {offset} (UTF-16 needs pairs)"
            ),
            NameError::BadIndex {
                offset,
                line: 0,
                text,
            } => write!(
                f,
                "name list: index string at byte offset {offset} is not a number: {text:?}"
            ),
            NameError::BadIndex { line, text, .. } => {
                write!(f, "name list: line {line}: index is not a number: {text:?}")
            }
            NameError::MissingText {
                offset,
                line: 0,
                index,
            } => write!(
                f,
                "name list: index {index} at byte offset {offset} has no text (list truncated?)"
            ),
            NameError::MissingText { line, index, .. } => {
                write!(f, "name list: line {line}: index {index} has no name")
            }
        }
    }
}

impl std::error::Error for NameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NameError::Ini(e) => Some(e),
            _ => None,
        }
    }
}

/// A short copy of offending text for an error.
fn clip(text: &str) -> String {
    text.chars().take(ERROR_TEXT_MAX).collect()
}

/// Parses a decimal index: ASCII digits only, at least one, fitting in a `u32`.
fn parse_index<I: IntoIterator<Item = u32>>(chars: I) -> Option<u32> {
    let mut value: u32 = 0;
    let mut any = false;
    for c in chars {
        let digit = c.checked_sub(u32::from(b'0')).filter(|d| *d <= 9)?;
        value = value.checked_mul(10)?.checked_add(digit)?;
        any = true;
    }
    any.then_some(value)
}

/// One NUL-separated string of a UTF-16LE list.
struct Utf16String<'a> {
    /// Byte offset of the first code unit.
    offset: usize,
    /// The code units' bytes, without the terminating NUL.
    bytes: &'a [u8],
    /// Whether bytes follow the string (after its NUL).
    more: bool,
}

impl Utf16String<'_> {
    fn units(&self) -> impl Iterator<Item = u16> + '_ {
        self.bytes
            .chunks_exact(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
    }

    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn to_string_lossy(&self) -> String {
        char::decode_utf16(self.units())
            .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }
}

/// Splits an even-length UTF-16LE buffer into NUL-terminated strings (the last one may lack its
/// NUL).
fn utf16_strings(bytes: &[u8]) -> impl Iterator<Item = Utf16String<'_>> + '_ {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        let rest = bytes.get(pos..)?;
        if rest.is_empty() {
            return None;
        }
        let len = rest
            .chunks_exact(2)
            .position(|p| p == [0, 0])
            .map_or(rest.len(), |units| units * 2);
        let start = pos;
        let s = rest.get(..len)?;
        // Skip the string and its NUL (if any).
        pos = pos.saturating_add(len).saturating_add(2).min(bytes.len());
        Some(Utf16String {
            offset: start,
            bytes: s,
            more: pos < bytes.len(),
        })
    })
}

/// Parses the REG_MULTI_SZ form of a `Counter` or `Help` value: UTF-16LE strings, each ended by a
/// NUL, alternating a decimal index and its text, the list ended by an extra NUL.
///
/// * A leading pair `"1"` followed by a number is the header of a `Counter` list (see
///   [`NameTable::base_index`]); it is recorded, not stored as a name. Only the first pair is
///   checked, and only a text made of digits counts, so a `Help` list (whose index 1 is never a
///   number) is read with the same function.
/// * A missing final NUL (or a missing extra NUL) is tolerated, and anything after the ending
///   empty string is ignored (`RegQueryValueEx` buffers may carry padding).
/// * An empty text is tolerated and skipped (the index stays without a name). An empty string
///   where an index is expected ends the list.
/// * Unpaired surrogates in a text become U+FFFD.
///
/// # Errors
/// [`NameError::OddLength`] for an odd byte count, [`NameError::BadIndex`] for an index string
/// that is not a decimal `u32` (with its byte offset and text), and [`NameError::MissingText`]
/// when the list ends right after an index: that is what a value cut short looks like.
pub fn parse_multi_sz(bytes: &[u8]) -> Result<NameTable, NameError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(NameError::OddLength {
            offset: bytes.len() - 1,
        });
    }
    let mut table = NameTable::new();
    let mut strings = utf16_strings(bytes);
    let mut first = true;
    while let Some(index_str) = strings.next() {
        if index_str.is_empty() {
            break; // the extra NUL that ends the list
        }
        let index =
            parse_index(index_str.units().map(u32::from)).ok_or_else(|| NameError::BadIndex {
                offset: index_str.offset,
                line: 0,
                text: clip(&index_str.to_string_lossy()),
            })?;
        let missing = NameError::MissingText {
            offset: index_str.offset,
            line: 0,
            index,
        };
        let text = match strings.next() {
            // An empty string with nothing after it is the list's end, not a text.
            Some(t) if !t.is_empty() || t.more => t,
            _ => return Err(missing),
        };
        if first && index == 1 {
            if let Some(n) = parse_index(text.units().map(u32::from)) {
                table.base_index = Some(n);
                first = false;
                continue;
            }
        }
        first = false;
        table.insert(index, &text.to_string_lossy());
    }
    Ok(table)
}

/// Encodes a table in the REG_MULTI_SZ form that [`parse_multi_sz`] reads: the `"1"` header pair
/// when the table has a [`base_index`](NameTable::base_index), then every pair by ascending index,
/// each string NUL-terminated, and a final extra NUL.
///
/// A name at index 1 made only of digits in a table without a base index would be read back as
/// the header; Windows tables never have one.
pub fn to_multi_sz(table: &NameTable) -> Vec<u8> {
    fn put(out: &mut Vec<u8>, s: &str) {
        for unit in s.encode_utf16() {
            out.extend_from_slice(&unit.to_le_bytes());
        }
        out.extend_from_slice(&[0, 0]);
    }
    let mut out = Vec::new();
    if let Some(base) = table.base_index {
        put(&mut out, "1");
        put(&mut out, &base.to_string());
    }
    for (index, name) in table.iter() {
        put(&mut out, &index.to_string());
        put(&mut out, name);
    }
    out.extend_from_slice(&[0, 0]);
    out
}

/// Parses the plain-text form: one `index name` pair a line — a decimal index, one or more spaces
/// or tabs, and the rest of the line as the name (a trailing `\r` is dropped). Blank lines and
/// lines whose first non-blank character is `#` are skipped. As in the registry form, a first
/// pair `1 <number>` is the [`base_index`](NameTable::base_index).
///
/// # Errors
/// [`NameError::BadIndex`] when a line does not start with a decimal `u32` followed by
/// whitespace, [`NameError::MissingText`] when the name is empty; both name the 1-based line.
pub fn parse_text(text: &str) -> Result<NameTable, NameError> {
    let mut table = NameTable::new();
    let mut first = true;
    for (n, raw) in text.split('\n').enumerate() {
        let line_no = n + 1;
        // Every trailing CR goes: a name cannot end in CR, so the text form round-trips.
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let digits_end = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        let (digits, rest) = trimmed.split_at(digits_end);
        let bad = || NameError::BadIndex {
            offset: 0,
            line: line_no,
            text: clip(trimmed),
        };
        let index = parse_index(digits.chars().map(u32::from)).ok_or_else(bad)?;
        if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
            return Err(bad());
        }
        let name = rest.trim_start_matches([' ', '\t']);
        if name.is_empty() {
            return Err(NameError::MissingText {
                offset: 0,
                line: line_no,
                index,
            });
        }
        if first && index == 1 {
            if let Some(v) = parse_index(name.chars().map(u32::from)) {
                table.base_index = Some(v);
                first = false;
                continue;
            }
        }
        first = false;
        table.insert(index, name);
    }
    Ok(table)
}

/// Encodes a table in the text form that [`parse_text`] reads: `1 <base index>` first when there
/// is one, then `index name` lines by ascending index, each ended by `\n`.
///
/// Names that start with a space or tab, or that contain a line break, cannot be written in this
/// form (they would read back differently); Windows names have neither.
pub fn to_text(table: &NameTable) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if let Some(base) = table.base_index {
        let _ = writeln!(out, "1 {base}");
    }
    for (index, name) in table.iter() {
        let _ = writeln!(out, "{index} {name}");
    }
    out
}

#[cfg(test)]
mod tests;
