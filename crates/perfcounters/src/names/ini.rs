//! `PerfStringBackup.INI`: the name tables of every installed language, as `lodctr /S` saves them.
//!
//! ```text
//! [Perflib]
//! Base Index=1847
//! Last Counter=9408
//! Last Help=9409
//!
//! [PERF_.NET CLR Data]
//! First Counter=9366
//! …
//! [PerfStrings_007]
//! 1=1847
//! 2=System
//! 3=Das System-Leistungsindikatorenobjekt besteht …
//! 4=Arbeitsspeicher
//! …
//! [PerfStrings_009]
//! 1=1847
//! 2=System
//! ```
//!
//! * Windows writes the file in UTF-16LE without a byte-order mark; copies re-saved by other tools
//!   are UTF-8, UTF-16 with a mark, or an ANSI code page (1252 by default here).
//! * A `[PerfStrings_LLL]` section (`LLL` the hexadecimal primary language id, `009` English, `007`
//!   German, `00A` Spanish …) interleaves names (even indexes) and help texts (odd indexes) in one
//!   `index=text` list; indexes have gaps. A leading `1=<number>` is the base index, not a name, as
//!   in the registry's `Counter` list.
//! * Other sections (`[Perflib]`, `[PERF_<service>]`) are read for `Base Index`, `Last Counter` and
//!   `Last Help` of `[Perflib]`; the rest is skipped.
//!
//! Errors name the 1-based line. Nothing is sized from a number in the file.

use std::fmt;

use super::NameTable;
use crate::encoding::{sniff_bom, TextEncoding};

/// One language of a `PerfStringBackup.INI`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Language {
    /// The language id as written in the section name (`009`, `007`, `00A` …).
    pub id: String,
    /// Object and counter names (the even indexes), with the base index of the `1=` pair.
    pub names: NameTable,
    /// Help texts (the odd indexes).
    pub help: NameTable,
}

/// The content of a `PerfStringBackup.INI`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfStringBackup {
    /// `[Perflib] Base Index`.
    pub base_index: Option<u32>,
    /// `[Perflib] Last Counter`.
    pub last_counter: Option<u32>,
    /// `[Perflib] Last Help`.
    pub last_help: Option<u32>,
    /// The `[PerfStrings_LLL]` sections, in file order.
    pub languages: Vec<Language>,
}

impl PerfStringBackup {
    /// The language with id `id` (`"009"`), compared case-insensitively.
    pub fn language(&self, id: &str) -> Option<&Language> {
        self.languages
            .iter()
            .find(|l| l.id.eq_ignore_ascii_case(id))
    }
}

/// A malformed `PerfStringBackup.INI`: the line and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IniError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for IniError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for IniError {}

/// Whether `bytes` look like a `PerfStringBackup.INI` (the first non-blank character, in any of the
/// encodings above, is `[`).
pub fn looks_like_ini(bytes: &[u8]) -> bool {
    decode(bytes, None)
        .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .starts_with('[')
}

/// The text of `bytes`: UTF-8, or UTF-16 with a byte-order mark, or (not UTF-8, no mark) the ANSI
/// `code_page` (1252 by default).
pub(super) fn decode(bytes: &[u8], code_page: Option<u16>) -> String {
    let (enc, skip) = sniff_bom(bytes).unwrap_or_else(|| {
        if std::str::from_utf8(bytes).is_ok() {
            (TextEncoding::Utf8, 0)
        } else {
            (TextEncoding::CodePage(code_page.unwrap_or(1252)), 0)
        }
    });
    let body = bytes.get(skip..).unwrap_or(&[]);
    let encoding = match enc {
        TextEncoding::Utf8 => encoding_rs::UTF_8,
        TextEncoding::Utf16Le => encoding_rs::UTF_16LE,
        TextEncoding::Utf16Be => encoding_rs::UTF_16BE,
        TextEncoding::CodePage(cp) => {
            codepage::to_encoding_no_replacement(cp).unwrap_or(encoding_rs::WINDOWS_1252)
        }
    };
    encoding.decode_without_bom_handling(body).0.into_owned()
}

/// Parses a `PerfStringBackup.INI`. `code_page` is used for a file without a byte-order mark that
/// is not valid UTF-8 (default 1252).
pub fn parse_perf_string_backup(
    bytes: &[u8],
    code_page: Option<u16>,
) -> Result<PerfStringBackup, IniError> {
    let text = decode(bytes, code_page);
    let mut out = PerfStringBackup::default();
    enum Section {
        None,
        Perflib,
        Strings,
        Other,
    }
    let mut section = Section::None;
    let mut first_pair = false;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let err = |message: String| IniError { line, message };
        let l = raw.trim_start_matches('\u{feff}').trim_end_matches('\r');
        let trimmed = l.trim();
        if trimmed.is_empty() || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[') {
            let name = name
                .strip_suffix(']')
                .ok_or_else(|| err(format!("section header {trimmed:?} has no closing ']'")))?;
            section = if name.eq_ignore_ascii_case("Perflib") {
                Section::Perflib
            } else if let Some(id) = name
                .get(..12)
                .filter(|p| p.eq_ignore_ascii_case("PerfStrings_"))
                .and_then(|_| name.get(12..))
            {
                if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(err(format!(
                        "section [{name}]: the language id {id:?} is not hexadecimal"
                    )));
                }
                out.languages.push(Language {
                    id: id.to_owned(),
                    names: NameTable::new(),
                    help: NameTable::new(),
                });
                first_pair = true;
                Section::Strings
            } else {
                Section::Other
            };
            continue;
        }
        let Some((key, value)) = l.split_once('=') else {
            return Err(err(format!("expected key=value, found {:?}", clip(l))));
        };
        match section {
            Section::None => return Err(err("a key=value line before the first [section]".into())),
            Section::Other => {}
            Section::Perflib => {
                let v = || {
                    value.trim().parse::<u32>().map_err(|_| {
                        err(format!("{} is not a number: {:?}", key.trim(), clip(value)))
                    })
                };
                match key.trim().to_ascii_lowercase().as_str() {
                    "base index" => out.base_index = Some(v()?),
                    "last counter" => out.last_counter = Some(v()?),
                    "last help" => out.last_help = Some(v()?),
                    _ => {}
                }
            }
            Section::Strings => {
                let key = key.trim();
                let index = (!key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| key.parse::<u32>().ok())
                    .flatten()
                    .ok_or_else(|| err(format!("index {:?} is not a number", clip(key))))?;
                let Some(lang) = out.languages.last_mut() else {
                    continue;
                };
                if first_pair {
                    first_pair = false;
                    if index == 1 {
                        if let Ok(base) = value.trim().parse::<u32>() {
                            lang.names.set_base_index(Some(base));
                            continue;
                        }
                    }
                }
                if index % 2 == 0 {
                    lang.names.insert(index, value);
                } else {
                    lang.help.insert(index, value);
                }
            }
        }
    }
    Ok(out)
}

fn clip(s: &str) -> String {
    s.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str =
        "\r\n[Perflib]\r\nBase Index=1847\r\nLast Counter=9408\r\nLast Help=9409\r\n\r\n\
        [PERF_.NET CLR Data]\r\nFirst Counter=9366\r\n\r\n\
        [PerfStrings_00A]\r\n1=1847\r\n2=Sistema\r\n3=Ayuda = sistema\r\n\
        234=Disco físico\r\n1482=% de tiempo inactivo\r\n\r\n\
        [PerfStrings_009]\r\n1=1847\r\n2=System\r\n234=PhysicalDisk\r\n1482=% Idle Time\r\n";

    #[test]
    fn utf16_without_bom_as_windows_writes_it() {
        let bytes: Vec<u8> = SAMPLE.encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert!(looks_like_ini(&bytes));
        let ini = parse_perf_string_backup(&bytes, None).unwrap();
        assert_eq!(
            (ini.base_index, ini.last_counter, ini.last_help),
            (Some(1847), Some(9408), Some(9409))
        );
        assert_eq!(ini.languages.len(), 2);
        let es = ini.language("00a").unwrap();
        assert_eq!(es.names.base_index(), Some(1847));
        assert_eq!(es.names.name(234), Some("Disco físico"));
        assert_eq!(es.names.name(3), None);
        assert_eq!(es.help.name(3), Some("Ayuda = sistema"));
        assert_eq!(
            ini.language("009").unwrap().names.index_of("physicaldisk"),
            Some(234)
        );
    }

    #[test]
    fn ansi_and_errors() {
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(SAMPLE);
        let ini = parse_perf_string_backup(&bytes, None).unwrap();
        assert_eq!(
            ini.language("00A").unwrap().names.name(234),
            Some("Disco físico")
        );
        assert!(!looks_like_ini(b"2 System\n"));
        // Through the loader: one table, English first, the other languages as more names.
        let t = NameTable::from_bytes(&bytes).unwrap();
        assert_eq!(t.name(234), Some("PhysicalDisk"));
        assert_eq!(
            t.names(234).collect::<Vec<_>>(),
            ["PhysicalDisk", "Disco físico"]
        );
        assert_eq!(t.base_index(), Some(1847));
        // The table's error names the file kind; the INI error (line and problem) is its cause.
        let err = NameTable::from_bytes(b"[PerfStrings_009]\nx=y\n").unwrap_err();
        assert_eq!(err.to_string(), "PerfStringBackup.INI");
        assert_eq!(
            crate::error_chain::ErrorChain(&err).to_string(),
            "PerfStringBackup.INI: line 2: index \"x\" is not a number"
        );
        let e = |s: &str| {
            parse_perf_string_backup(s.as_bytes(), None)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e("[PerfStrings_009]\n2=System\nx=y\n"),
            "line 3: index \"x\" is not a number"
        );
        assert_eq!(
            e("[PerfStrings_009\n"),
            "line 1: section header \"[PerfStrings_009\" has no closing ']'"
        );
        assert_eq!(
            e("[PerfStrings_0G9]\n"),
            "line 1: section [PerfStrings_0G9]: the language id \"0G9\" is not hexadecimal"
        );
        assert_eq!(
            e("2=System\n"),
            "line 1: a key=value line before the first [section]"
        );
        assert_eq!(
            e("[Perflib]\nBase Index=x\n"),
            "line 2: Base Index is not a number: \"x\""
        );
        assert_eq!(
            e("[PerfStrings_009]\n4294967296=x\n"),
            "line 2: index \"4294967296\" is not a number"
        );
        assert_eq!(
            e("[PerfStrings_009]\nno equals\n"),
            "line 2: expected key=value, found \"no equals\""
        );
    }
}
