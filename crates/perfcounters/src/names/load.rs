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
