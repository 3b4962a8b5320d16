//! Property tests of the name-table parsers and encoders, and reading a table whose form is not
//! known in advance.

use perfcounters::names::{
    parse_multi_sz, parse_text, to_multi_sz, to_text, NameError, NameFormat, NameTable,
};
use proptest::prelude::*;

/// Names as Windows has them: non-empty, no NUL or line break, not starting with blanks.
fn name() -> impl Strategy<Value = String> {
    "[^\\x00\\r\\n \\t][^\\x00\\r\\n]{0,30}"
}

fn table() -> impl Strategy<Value = NameTable> {
    (
        prop::option::of(any::<u32>()),
        prop::collection::vec((2u32..=u32::MAX, name()), 0..40),
    )
        .prop_map(|(base, pairs)| {
            let mut t = NameTable::new();
            for (i, n) in &pairs {
                t.insert(*i, n);
            }
            t.set_base_index(base);
            t
        })
}

proptest! {
    #[test]
    fn multi_sz_round_trip(t in table()) {
        let bytes = to_multi_sz(&t);
        prop_assert_eq!(parse_multi_sz(&bytes).unwrap(), t);
    }

    #[test]
    fn text_round_trip(t in table()) {
        let text = to_text(&t);
        prop_assert_eq!(parse_text(&text).unwrap(), t);
    }

    #[test]
    fn multi_sz_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(t) = parse_multi_sz(&bytes) {
            // Whatever was read encodes and reads back the same, except a name at index 1, which
            // the encoder writes first, where it can read back as the header.
            prop_assume!(t.names(1).next().is_none());
            prop_assert_eq!(parse_multi_sz(&to_multi_sz(&t)).unwrap(), t);
        }
    }

    #[test]
    fn multi_sz_of_digits_and_nuls_never_panics(
        units in prop::collection::vec(prop::sample::select(vec![0u16, 0x31, 0x32, 0x39, 0x41, 0xD800]), 0..200)
    ) {
        let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
        let _ = parse_multi_sz(&bytes);
    }

    #[test]
    fn from_bytes_reads_both_forms_of_any_table(t in table()) {
        let multi_sz = to_multi_sz(&t);
        let text = to_text(&t);
        // An empty table encodes as an empty text, and as a lone NUL pair that text cannot be.
        prop_assert_eq!(NameFormat::detect(&multi_sz), NameFormat::MultiSz);
        prop_assert_eq!(NameTable::from_bytes(&multi_sz).unwrap(), t.clone());
        prop_assert_eq!(NameFormat::detect(text.as_bytes()), NameFormat::Text);
        prop_assert_eq!(NameTable::from_bytes(text.as_bytes()).unwrap(), t);
    }

    #[test]
    fn from_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = NameTable::from_bytes(&bytes);
    }

    #[test]
    fn text_never_panics(text in "(?s).{0,300}") {
        let _ = parse_text(&text);
    }

    #[test]
    fn lookups_are_consistent(t in table()) {
        for (i, n) in t.iter() {
            prop_assert!(t.indexes_of(n).any(|j| j == i));
            prop_assert!(t.indexes_of(&n.to_uppercase()).any(|j| j == i) || n.to_uppercase().to_lowercase() != n.to_lowercase());
            prop_assert!(t.names(i).any(|m| m == n));
        }
        prop_assert_eq!(t.iter().count(), t.len());
    }
}

#[test]
fn from_bytes_detects_the_form_and_reports_where_it_fails() {
    let utf16 = |s: &str| -> Vec<u8> { s.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    let expected: NameTable = [(2, "System"), (238, "Processor")].into_iter().collect();

    // Each string ended by a NUL, then the empty string that ends the list.
    let multi_sz: Vec<u8> = ["2", "System", "238", "Processor", ""]
        .iter()
        .flat_map(|s| utf16(s).into_iter().chain([0, 0]))
        .collect();
    assert_eq!(NameTable::from_bytes(&multi_sz).unwrap(), expected);
    // Text, also with a UTF-8 byte-order mark and CRLF line ends.
    assert_eq!(
        NameTable::from_bytes(b"2 System\n238 Processor\n").unwrap(),
        expected
    );
    assert_eq!(
        NameTable::from_bytes("\u{feff}2 System\r\n238 Processor\r\n".as_bytes()).unwrap(),
        expected
    );
    assert_eq!(NameTable::from_bytes(b"").unwrap(), NameTable::new());

    // A REG_MULTI_SZ cut at an odd length is still read as one, so the stray byte is reported.
    let mut odd = multi_sz.clone();
    odd.pop();
    assert_eq!(
        NameTable::from_bytes(&odd),
        Err(NameError::OddLength {
            offset: multi_sz.len() - 2
        })
    );
    // Text errors name the line.
    assert_eq!(
        NameTable::from_bytes(b"2 System\nProcessor\n"),
        Err(NameError::BadIndex {
            offset: 0,
            line: 2,
            text: "Processor".into()
        })
    );
    // Text that is not UTF-8 is read in the ANSI code page 1252; UTF-16 text has its mark.
    let ansi = NameTable::from_bytes(b"2 Syst\xe8me\n4 M\xe9moire\n").unwrap();
    assert_eq!(ansi.name(2), Some("Système"));
    assert_eq!(ansi.name(4), Some("Mémoire"));
    let mut marked = vec![0xFF, 0xFE];
    marked.extend(utf16("2 Système\r\n4 Mémoire\r\n"));
    assert_eq!(NameFormat::detect(&marked), NameFormat::Text);
    assert_eq!(NameTable::from_bytes(&marked).unwrap(), ansi);
}

#[test]
fn load_reads_a_file_of_either_form() {
    let dir = std::env::temp_dir().join(format!("perfcounters-names-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut t = NameTable::new();
    t.insert(2, "System");
    t.insert(4, "Memory");
    t.set_base_index(Some(1847));
    let msz = dir.join("counter.msz");
    std::fs::write(&msz, to_multi_sz(&t)).unwrap();
    let txt = dir.join("counter.txt");
    std::fs::write(&txt, to_text(&t)).unwrap();
    assert_eq!(NameTable::load(&msz).unwrap(), t);
    assert_eq!(NameTable::load(&txt).unwrap(), t);

    // Bad content is InvalidData carrying the NameError; a missing file is the I/O error.
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "2 System\nx\n").unwrap();
    let e = NameTable::load(&bad).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<NameError>());
    assert!(
        matches!(inner, Some(NameError::BadIndex { line: 2, .. })),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "name list: line 2: index is not a number: \"x\""
    );
    let e = NameTable::load(&dir.join("missing.txt")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    std::fs::remove_dir_all(&dir).unwrap();
}
