use super::*;
use crate::counter_type::CounterType;
use crate::snapshot::{CounterDefinition, Object};

/// Builds a REG_MULTI_SZ block: each string UTF-16LE + NUL, then the extra NUL.
fn multi_sz(strings: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in strings {
        for u in s.encode_utf16() {
            out.extend_from_slice(&u.to_le_bytes());
        }
        out.extend_from_slice(&[0, 0]);
    }
    out.extend_from_slice(&[0, 0]);
    out
}

fn pairs(t: &NameTable) -> Vec<(u32, String)> {
    t.iter().map(|(i, n)| (i, n.to_owned())).collect()
}

#[test]
fn parses_a_counter_list_with_header_repeats_and_empty_text() {
    let block = multi_sz(&[
        "1",
        "1847",
        "2",
        "System",
        "4",
        "Memory",
        "6",
        "% Processor Time",
        "8",
        "", // empty text: tolerated, no name stored
        "1482",
        "% Idle Time",
        "1746",
        "% Idle Time",
        "264",
        "Bytes Received/sec",
        "898",
        "Bytes Received/Sec",
        "6",
        "% Processor Time", // exact repeat: stored once
    ]);
    let t = parse_multi_sz(&block).unwrap();
    assert_eq!(t.base_index(), Some(1847));
    assert_eq!(t.name(1), None, "the header pair is not a name");
    assert_eq!(t.len(), 7);
    assert_eq!(t.max_index(), 1847);
    assert_eq!(t.name(2), Some("System"));
    assert_eq!(t.name(4), Some("Memory"));
    assert_eq!(t.name(6), Some("% Processor Time"));
    assert_eq!(t.name(8), None);
    assert_eq!(
        t.indexes_of("% Idle Time").collect::<Vec<_>>(),
        [1482, 1746]
    );
    // Case-insensitive: both spellings match, lowest index first.
    assert_eq!(
        t.indexes_of("BYTES RECEIVED/SEC").collect::<Vec<_>>(),
        [264, 898]
    );
    assert_eq!(t.index_of("memory"), Some(4));
    assert_eq!(t.index_of("Nope"), None);
    assert_eq!(
        pairs(&t),
        [
            (2, "System".to_owned()),
            (4, "Memory".to_owned()),
            (6, "% Processor Time".to_owned()),
            (264, "Bytes Received/sec".to_owned()),
            (898, "Bytes Received/Sec".to_owned()),
            (1482, "% Idle Time".to_owned()),
            (1746, "% Idle Time".to_owned()),
        ]
    );
    // Round trip through the encoder gives the same bytes back, minus the repeat and the
    // empty text, in index order.
    let again = parse_multi_sz(&to_multi_sz(&t)).unwrap();
    assert_eq!(again, t);
}

#[test]
fn parses_a_help_list_without_header() {
    // Help indexes are odd; 339 is the help of "% DPC Time" (name 696), which has no name+1
    // help. Index 1 is absent, so there is no header.
    let block = multi_sz(&[
        "3",
        "The System performance object ...",
        "7",
        "% Processor Time is ...",
        "339",
        "% DPC Time is ...",
    ]);
    let t = parse_multi_sz(&block).unwrap();
    assert_eq!(t.base_index(), None);
    assert_eq!(t.len(), 3);
    assert_eq!(t.name(339), Some("% DPC Time is ..."));
    assert_eq!(t.name(697), None);
    assert_eq!(t.max_index(), 339);
}

#[test]
fn index_one_with_text_is_a_name() {
    let t = parse_multi_sz(&multi_sz(&["1", "Not a number", "2", "System"])).unwrap();
    assert_eq!(t.base_index(), None);
    assert_eq!(t.name(1), Some("Not a number"));
    // Only the first pair can be the header.
    let t = parse_multi_sz(&multi_sz(&["2", "System", "1", "1847"])).unwrap();
    assert_eq!(t.base_index(), None);
    assert_eq!(t.name(1), Some("1847"));
}

#[test]
fn tolerates_missing_nuls_and_trailing_padding() {
    // No extra NUL, and no NUL after the last text either.
    let mut block = multi_sz(&["2", "System", "4", "Memory"]);
    block.truncate(block.len() - 4);
    let t = parse_multi_sz(&block).unwrap();
    assert_eq!(t.name(4), Some("Memory"));
    // Garbage after the ending empty string is ignored.
    let mut block = multi_sz(&["2", "System"]);
    block.extend_from_slice(&[b'x', 0, 0xff, 0xff]);
    let t = parse_multi_sz(&block).unwrap();
    assert_eq!(pairs(&t), [(2, "System".to_owned())]);
    // Empty input and a lone terminator are empty tables.
    assert!(parse_multi_sz(&[]).unwrap().is_empty());
    assert!(parse_multi_sz(&[0, 0]).unwrap().is_empty());
}

#[test]
fn rejects_odd_length() {
    let mut block = multi_sz(&["2", "System"]);
    block.push(0);
    let len = block.len();
    assert_eq!(len, 21);
    assert_eq!(
        parse_multi_sz(&block),
        Err(NameError::OddLength { offset: 20 })
    );
}

#[test]
fn rejects_a_non_numeric_index_with_its_offset() {
    // "1"@0 NUL@2, "1847"@4..12 NUL@12, "2"@14 NUL@16, "System"@18..30 NUL@30, "x7"@32.
    let block = multi_sz(&["1", "1847", "2", "System", "x7", "Foo"]);
    let err = parse_multi_sz(&block).unwrap_err();
    assert_eq!(
        err,
        NameError::BadIndex {
            offset: 32,
            line: 0,
            text: "x7".to_owned()
        }
    );
    assert_eq!(
        err.to_string(),
        "name list: index string at byte offset 32 is not a number: \"x7\""
    );
    // Too large for a u32, a sign, a space: all rejected.
    for bad in ["4294967296", "-2", " 2", "2 "] {
        let block = multi_sz(&[bad, "Foo"]);
        assert_eq!(
            parse_multi_sz(&block),
            Err(NameError::BadIndex {
                offset: 0,
                line: 0,
                text: bad.to_owned()
            })
        );
    }
    // The largest u32 is fine.
    let t = parse_multi_sz(&multi_sz(&["4294967295", "Top"])).unwrap();
    assert_eq!(t.max_index(), u32::MAX);
}

#[test]
fn truncation_in_the_middle() {
    let full = multi_sz(&["2", "System", "1746", "% Idle Time"]);
    // "2"@0, "System"@4..16 NUL@16, "1746"@18..26.
    // Cut inside the index string "1746" (after "17"): the index has no text.
    let err = parse_multi_sz(&full[..22]).unwrap_err();
    assert_eq!(
        err,
        NameError::MissingText {
            offset: 18,
            line: 0,
            index: 17
        }
    );
    assert_eq!(
        err.to_string(),
        "name list: index 17 at byte offset 18 has no text (list truncated?)"
    );
    // Cut right after the index's NUL, or after the index and an empty string: same error.
    assert!(matches!(
        parse_multi_sz(&full[..28]),
        Err(NameError::MissingText { index: 1746, .. })
    ));
    // Cut in the middle of a code unit.
    assert_eq!(
        parse_multi_sz(&full[..9]),
        Err(NameError::OddLength { offset: 8 })
    );
    // Cut inside a text: indistinguishable from a missing NUL, the partial text is kept.
    let t = parse_multi_sz(&full[..10]).unwrap();
    assert_eq!(t.name(2), Some("Sys"));
}

#[test]
fn lookups_merge_and_max_index() {
    let mut a = NameTable::new();
    assert!(a.is_empty());
    assert_eq!(a.max_index(), 0);
    assert!(a.insert(238, "Processor"));
    assert!(!a.insert(238, "Processor"), "exact repeat");
    assert!(!a.insert(240, ""), "empty names are not stored");
    assert!(a.insert(6, "% Processor Time"));
    let mut b = NameTable::new();
    b.insert(238, "Prozessor");
    b.insert(1746, "% Idle Time");
    b.set_base_index(Some(1847));
    a.merge(&b);
    assert_eq!(a.len(), 4);
    assert_eq!(a.names(238).collect::<Vec<_>>(), ["Processor", "Prozessor"]);
    assert_eq!(a.name(238), Some("Processor"));
    assert_eq!(a.names(239).count(), 0);
    assert_eq!(a.index_of("PROZESSOR"), Some(238));
    assert_eq!(a.base_index(), Some(1847));
    assert_eq!(a.max_index(), 1847);
    a.set_base_index(None);
    assert_eq!(a.max_index(), 1746);
    // Merging again changes nothing.
    let before = a.clone();
    a.merge(&b);
    a.set_base_index(None);
    assert_eq!(a, before);
    // Non-ASCII names fold with Unicode lower-casing.
    a.insert(4, "Arbeitsspeicher Ü");
    assert_eq!(a.index_of("ARBEITSSPEICHER ü"), Some(4));
    let from: NameTable = [(2, "System"), (4, "Memory")].into_iter().collect();
    assert_eq!(from.len(), 2);
}

#[test]
fn text_form_with_comments_and_errors_by_line() {
    let text = "# English names\n\n1 1847\r\n2 System\n  4\tMemory\n6    % Processor Time\n   # indented comment\n1482 % Idle Time  \n";
    let t = parse_text(text).unwrap();
    assert_eq!(t.base_index(), Some(1847));
    assert_eq!(t.name(4), Some("Memory"));
    assert_eq!(t.name(6), Some("% Processor Time"));
    // Trailing spaces belong to the name.
    assert_eq!(t.name(1482), Some("% Idle Time  "));
    assert_eq!(t.len(), 4);
    assert_eq!(
        to_text(&t),
        "1 1847\n2 System\n4 Memory\n6 % Processor Time\n1482 % Idle Time  \n"
    );
    assert_eq!(parse_text(&to_text(&t)).unwrap(), t);

    let err = parse_text("2 System\n\nabc Foo\n").unwrap_err();
    assert_eq!(
        err,
        NameError::BadIndex {
            offset: 0,
            line: 3,
            text: "abc Foo".to_owned()
        }
    );
    assert_eq!(
        err.to_string(),
        "name list: line 3: index is not a number: \"abc Foo\""
    );
    assert_eq!(
        parse_text("# c\n12x Foo"),
        Err(NameError::BadIndex {
            offset: 0,
            line: 2,
            text: "12x Foo".to_owned()
        })
    );
    let err = parse_text("2 System\n4\n").unwrap_err();
    assert_eq!(
        err,
        NameError::MissingText {
            offset: 0,
            line: 2,
            index: 4
        }
    );
    assert_eq!(err.to_string(), "name list: line 2: index 4 has no name");
    assert_eq!(
        parse_text("4   \r\n"),
        Err(NameError::MissingText {
            offset: 0,
            line: 1,
            index: 4
        })
    );
    assert!(parse_text("").unwrap().is_empty());
}

#[test]
fn error_text_is_clipped() {
    let long = "x".repeat(500);
    match parse_text(&long) {
        Err(NameError::BadIndex { text, line: 1, .. }) => assert_eq!(text.len(), 64),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn builtin_english_has_the_verified_indexes() {
    let t = NameTable::builtin_english();
    for (index, name) in [
        (2, "System"),
        (4, "Memory"),
        (6, "% Processor Time"),
        (230, "Process"),
        (232, "Thread"),
        (234, "PhysicalDisk"),
        (236, "LogicalDisk"),
        (238, "Processor"),
        (260, "Objects"),
        (510, "Network Interface"),
        (674, "System Up Time"),
        (700, "Paging File"),
        (1350, "% Registry Quota In Use"),
        (1406, "% Committed Bytes In Use"),
        (1478, "Working Set - Private"),
    ] {
        assert_eq!(t.name(index), Some(name), "index {index}");
        assert!(t.indexes_of(name).any(|i| i == index), "name {name}");
    }
    assert_eq!(t.index_of("system up time"), Some(674));
    assert_eq!(
        t.indexes_of("% Idle Time").collect::<Vec<_>>(),
        [1482, 1746]
    );
    assert_eq!(
        t.indexes_of("Committed Bytes").collect::<Vec<_>>(),
        [26, 1762]
    );
    // 898 is the Remote Access "Bytes Received/Sec", not Network Interface's.
    assert_eq!(
        t.indexes_of("Bytes Received/sec").collect::<Vec<_>>(),
        [264, 898]
    );
    assert_eq!(t.max_index(), 1846);
    assert_eq!(t.base_index(), None);
    assert_eq!(t.len(), builtin::ENGLISH.len());
    // Help indexes are never names: all built-in indexes are even.
    assert!(builtin::ENGLISH.iter().all(|e| e.index % 2 == 0));
    // Sorted, no duplicate index.
    assert!(builtin::ENGLISH.windows(2).all(|w| w[0].index < w[1].index));
    assert_eq!(
        builtin::ENGLISH
            .iter()
            .find(|e| e.index == 2)
            .map(|e| e.evidence),
        Some(builtin::Evidence::Documented)
    );
}

#[test]
fn builtin_linux_lookups_agree_with_the_table() {
    use builtin::{counter_index, object_index, LINUX_COUNTERS, LINUX_OBJECTS};
    let t = NameTable::builtin_english();
    assert_eq!(object_index("processor"), Some(238));
    assert_eq!(object_index("Processor Information"), None);
    assert_eq!(object_index("Paging File"), Some(700));
    assert_eq!(object_index("Nope"), None);
    assert_eq!(
        counter_index("Network Interface", "Bytes Received/sec"),
        Some(264)
    );
    assert_eq!(
        counter_index("Network Interface", "Bytes Sent/sec"),
        Some(506)
    );
    assert_eq!(counter_index("PhysicalDisk", "% Idle Time"), Some(1482));
    assert_eq!(counter_index("Processor", "% Idle Time"), Some(1746));
    assert_eq!(counter_index("System", "System Up Time"), Some(674));
    assert_eq!(
        counter_index("Processor Information", "% Processor Time"),
        None
    );
    for o in LINUX_OBJECTS {
        if let Some(i) = o.index {
            assert_eq!(t.name(i), Some(o.name));
        }
    }
    for c in LINUX_COUNTERS {
        assert!(
            t.indexes_of(c.counter).any(|i| i == c.index),
            "{}\\{} = {}",
            c.object,
            c.counter,
            c.index
        );
        assert!(object_index(c.object).is_some(), "{}", c.object);
    }
}

fn def(index: u32, ty: CounterType, name: Option<&str>) -> CounterDefinition {
    CounterDefinition {
        name: name.map(str::to_owned),
        ..CounterDefinition::new(index, ty)
    }
}

fn object(index: u32, name: Option<&str>, counters: Vec<CounterDefinition>) -> Object {
    Object {
        name: name.map(str::to_owned),
        ..Object::new(index)
    }
    .with_counters(counters)
    .with_values(Vec::new())
}

#[test]
fn apply_fills_missing_names_only() {
    let mut snap = Snapshot {
        objects: vec![
            object(
                2,
                None,
                vec![
                    def(674, CounterType::PERF_ELAPSED_TIME, None),
                    def(1350, CounterType::PERF_RAW_FRACTION, None),
                    def(1350, CounterType::PERF_RAW_BASE, None),
                    def(44, CounterType::PERF_COUNTER_RAWCOUNT, Some("Kept")),
                    def(0, CounterType::PERF_RAW_BASE, None),
                    def(99_999, CounterType::PERF_COUNTER_RAWCOUNT, None),
                ],
            ),
            object(
                238,
                Some("Prozessor"),
                vec![def(6, CounterType::PERF_100NSEC_TIMER_INV, None)],
            ),
            // A V2 counterset: counter ids are not title indexes.
            object(
                0,
                None,
                vec![def(6, CounterType::PERF_100NSEC_TIMER_INV, None)],
            ),
            object(77_777, None, vec![]),
        ],
        ..Default::default()
    };
    NameTable::builtin_english().apply(&mut snap);
    let names = |o: usize| -> Vec<Option<&str>> {
        snap.objects[o]
            .counters
            .iter()
            .map(|c| c.name.as_deref())
            .collect()
    };
    assert_eq!(snap.objects[0].name.as_deref(), Some("System"));
    assert_eq!(
        names(0),
        [
            Some("System Up Time"),
            Some("% Registry Quota In Use"),
            Some("% Registry Quota In Use"),
            Some("Kept"),
            None,
            None
        ]
    );
    // The numerator, not the base, is found by name.
    assert_eq!(
        snap.objects[0].counter_position_by_name("% registry quota in use"),
        Some(1)
    );
    assert_eq!(snap.objects[1].name.as_deref(), Some("Prozessor"));
    assert_eq!(names(1), [Some("% Processor Time")]);
    assert_eq!(snap.objects[2].name, None);
    assert_eq!(names(2), [None]);
    assert_eq!(snap.objects[3].name, None);
    assert_eq!(snap.object_by_name("system").map(|o| o.index), Some(2));
}

#[test]
fn text_form_drops_every_trailing_cr() {
    // Found by fuzzing: a name ending in several CRs lost only one, so it did not round-trip.
    let t = parse_text("2 System\r\r\r\n4 Mem\rory\r\n").unwrap();
    assert_eq!(t.name(2), Some("System"));
    assert_eq!(t.name(4), Some("Mem\rory"));
    assert_eq!(parse_text(&to_text(&t)).unwrap(), t);
}
