//! Counter paths: parsing, formatting, errors, instance strings and wildcard matching.

use perfcounters::path::{
    eq_ignore_case, fold_case, format_instance, parse_instance, wildcard_match, InstanceName,
    PathComponent, PathError, PathErrorKind, MAX_INSTANCE_STRING, PDH_MAX_COUNTER_PATH,
};
use perfcounters::{CounterPath, PdhStatus};
use proptest::prelude::*;

fn cp(
    machine: Option<&str>,
    object: &str,
    parent: Option<&str>,
    instance: Option<&str>,
    index: Option<u32>,
    counter: &str,
) -> CounterPath {
    CounterPath {
        machine: machine.map(str::to_owned),
        object: object.to_owned(),
        parent: parent.map(str::to_owned),
        instance: instance.map(str::to_owned),
        index,
        counter: counter.to_owned(),
    }
}

fn parse(s: &str) -> CounterPath {
    match CounterPath::parse(s) {
        Ok(p) => p,
        Err(e) => panic!("{s:?} should parse: {e}"),
    }
}

fn err(s: &str) -> PathError {
    match CounterPath::parse(s) {
        Ok(p) => panic!("{s:?} should not parse, got {p:?}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------------------------
// The ten shapes

#[test]
fn ten_shapes_parse_and_format() {
    let cases = [
        (
            r"\\m\o(p/i#3)\c",
            cp(Some("m"), "o", Some("p"), Some("i"), Some(3), "c"),
        ),
        (
            r"\\m\o(p/i)\c",
            cp(Some("m"), "o", Some("p"), Some("i"), None, "c"),
        ),
        (
            r"\\m\o(i#3)\c",
            cp(Some("m"), "o", None, Some("i"), Some(3), "c"),
        ),
        (
            r"\\m\o(i)\c",
            cp(Some("m"), "o", None, Some("i"), None, "c"),
        ),
        (r"\\m\o\c", cp(Some("m"), "o", None, None, None, "c")),
        (
            r"\o(p/i#3)\c",
            cp(None, "o", Some("p"), Some("i"), Some(3), "c"),
        ),
        (r"\o(p/i)\c", cp(None, "o", Some("p"), Some("i"), None, "c")),
        (r"\o(i#3)\c", cp(None, "o", None, Some("i"), Some(3), "c")),
        (r"\o(i)\c", cp(None, "o", None, Some("i"), None, "c")),
        (r"\o\c", cp(None, "o", None, None, None, "c")),
    ];
    for (text, expected) in cases {
        let parsed = parse(text);
        assert_eq!(parsed, expected, "{text}");
        assert_eq!(parsed.to_string(), text);
        assert_eq!(text.parse::<CounterPath>().as_ref(), Ok(&expected));
    }
}

#[test]
fn real_names() {
    assert_eq!(
        parse(r"\Network Interface(Intel[R] Ethernet _2)\Bytes Sent/sec"),
        cp(
            None,
            "Network Interface",
            None,
            Some("Intel[R] Ethernet _2"),
            None,
            "Bytes Sent/sec"
        )
    );
    assert_eq!(
        parse(r"\Memory\% Committed Bytes In Use"),
        cp(None, "Memory", None, None, None, "% Committed Bytes In Use")
    );
    assert_eq!(
        parse(r"\LogicalDisk(C:)\Avg. Disk sec/Read"),
        cp(
            None,
            "LogicalDisk",
            None,
            Some("C:"),
            None,
            "Avg. Disk sec/Read"
        )
    );
    assert_eq!(
        parse(r"\Processor Information(0,_Total)\% Processor Time"),
        cp(
            None,
            "Processor Information",
            None,
            Some("0,_Total"),
            None,
            "% Processor Time"
        )
    );
    assert_eq!(
        parse(r"\PhysicalDisk(0 C:)\% Disk Time"),
        cp(
            None,
            "PhysicalDisk",
            None,
            Some("0 C:"),
            None,
            "% Disk Time"
        )
    );
    assert_eq!(
        parse(r"\Obj((0000:1325):1325)\Counter"),
        cp(None, "Obj", None, Some("(0000:1325):1325"), None, "Counter")
    );
    assert_eq!(
        parse(r"\Process(foo (x86))\% Processor Time"),
        cp(
            None,
            "Process",
            None,
            Some("foo (x86)"),
            None,
            "% Processor Time"
        )
    );
    assert_eq!(
        parse(r"\\HOST\Thread(explorer/12#1)\Context Switches/sec"),
        cp(
            Some("HOST"),
            "Thread",
            Some("explorer"),
            Some("12"),
            Some(1),
            "Context Switches/sec"
        )
    );
    assert_eq!(
        parse(
            r"\SQLServer:Batch Resp Statistics(CPU Time:Total(ms))\Batches >=000000ms & <000001ms"
        ),
        cp(
            None,
            "SQLServer:Batch Resp Statistics",
            None,
            Some("CPU Time:Total(ms)"),
            None,
            "Batches >=000000ms & <000001ms"
        )
    );
    // A Service Fabric instance with nested parentheses, machine-qualified.
    let sf = r"\\BackEnd000002\Service Fabric Replicated Store((00000000-0000-0000-0000-000000000001:132515341033723428):132520469511364617)\Base for Average time interval between notifications dispatch";
    let p = parse(sf);
    assert_eq!(p.machine.as_deref(), Some("BackEnd000002"));
    assert_eq!(
        p.instance.as_deref(),
        Some("(00000000-0000-0000-0000-000000000001:132515341033723428):132520469511364617")
    );
    assert_eq!(
        p.counter,
        "Base for Average time interval between notifications dispatch"
    );
    assert_eq!(p.to_string(), sf);
}

#[test]
fn counter_names_with_parentheses_without_instance() {
    assert_eq!(
        parse(r"\Memory\Foo (bar)"),
        cp(None, "Memory", None, None, None, "Foo (bar)")
    );
    assert_eq!(
        parse(r"\O(I)\CT(i)x"),
        cp(None, "O", None, Some("I"), None, "CT(i)x")
    );
}

#[test]
fn instance_names_with_backslashes_and_odd_parentheses() {
    assert_eq!(
        parse(r"\O(d:\f\I)\CT"),
        cp(None, "O", None, Some(r"d:\f\I"), None, "CT")
    );
    assert_eq!(
        parse(r"\O(d:\f\I(d)x)\CT"),
        cp(None, "O", None, Some(r"d:\f\I(d)x"), None, "CT")
    );
    assert_eq!(
        parse(r"\\CM\O(I(info))\CT"),
        cp(Some("CM"), "O", None, Some("I(info)"), None, "CT")
    );
    // Unbalanced parentheses inside the instance are kept as they are.
    assert_eq!(
        parse(r"\Process(a(b)\ID Process"),
        cp(None, "Process", None, Some("a(b"), None, "ID Process")
    );
    assert_eq!(
        parse(r"\Process(a)b)\ID Process"),
        cp(None, "Process", None, Some("a)b"), None, "ID Process")
    );
    assert_eq!(
        parse(r"\O(a)\b)\C"),
        cp(None, "O", None, Some(r"a)\b"), None, "C")
    );
}

#[test]
fn index_only_for_trailing_digits() {
    assert_eq!(parse(r"\O(C#)\c").instance.as_deref(), Some("C#"));
    let p = parse(r"\O(a#b)\c");
    assert_eq!((p.instance.as_deref(), p.index), (Some("a#b"), None));
    let p = parse(r"\O(a#1x)\c");
    assert_eq!((p.instance.as_deref(), p.index), (Some("a#1x"), None));
    let p = parse(r"\O(a#1#2)\c");
    assert_eq!((p.instance.as_deref(), p.index), (Some("a#1"), Some(2)));
    let p = parse(r"\O(svchost#0)\c");
    assert_eq!((p.instance.as_deref(), p.index), (Some("svchost"), Some(0)));
    let p = parse(r"\O(svchost#007)\c");
    assert_eq!(p.index, Some(7));
    assert_eq!(p.to_string(), r"\O(svchost#7)\c");
    let p = parse(r"\O(x#4294967295)\c");
    assert_eq!(p.index, Some(u32::MAX));
    // `#*` is not an index: it stays in the name (and matches every index, see below).
    let p = parse(r"\O(svchost#*)\c");
    assert_eq!((p.instance.as_deref(), p.index), (Some("svchost#*"), None));
    // The index binds to the instance, not to the parent.
    let p = parse(r"\O(p#1/i)\c");
    assert_eq!(
        (p.parent.as_deref(), p.instance.as_deref(), p.index),
        (Some("p#1"), Some("i"), None)
    );
}

#[test]
fn parent_splits_at_last_slash() {
    let p = parse(r"\Job Object Details(\BaseNamedObjects\a/b/chrome)\Threads");
    assert_eq!(p.parent.as_deref(), Some(r"\BaseNamedObjects\a/b"));
    assert_eq!(p.instance.as_deref(), Some("chrome"));
    let p = parse(r"\O(a/b/c#2)\x");
    assert_eq!(
        (p.parent.as_deref(), p.instance.as_deref(), p.index),
        (Some("a/b"), Some("c"), Some(2))
    );
}

#[test]
fn unicode_names_and_positions() {
    let p = parse(r"\\Rechner\Prozessor(Kern Ä#1)\% Prozessorzeit");
    assert_eq!(p.instance.as_deref(), Some("Kern Ä"));
    assert_eq!(p.index, Some(1));
    // Positions are character indexes, not byte offsets: `Ä` is two bytes.
    let e = err(r"\Ä*\x");
    assert_eq!(e.position, 2);
    assert_eq!(
        e.to_string(),
        "at character 2: wildcard not allowed in the object name"
    );
}

// ---------------------------------------------------------------------------------------------
// Errors

fn check_err(path: &str, position: usize, message: &str, status: PdhStatus) {
    let e = err(path);
    assert_eq!(e.position, position, "{path:?}: {e}");
    assert_eq!(e.to_string(), message, "{path:?}");
    assert_eq!(e.status(), status, "{path:?}");
}

#[test]
fn malformed_paths() {
    use PdhStatus as S;
    let bad = S::PDH_CSTATUS_BAD_COUNTERNAME;
    check_err("", 0, "at character 0: empty path", S::PDH_INVALID_ARGUMENT);
    check_err(
        r"System\Processes",
        0,
        r"at character 0: expected '\' at the start of the path, found 'S'",
        bad,
    );
    check_err(r"\\", 2, "at character 2: empty machine name", bad);
    check_err(r"\\\System\x", 2, "at character 2: empty machine name", bad);
    check_err(
        r"\\m",
        3,
        r"at character 3: expected '\' after the machine name, found the end of the path",
        bad,
    );
    check_err(
        r"\\machine",
        9,
        r"at character 9: expected '\' after the machine name, found the end of the path",
        bad,
    );
    check_err(r"\\m\", 4, "at character 4: empty object name", bad);
    check_err(r"\", 1, "at character 1: empty object name", bad);
    check_err(r"\(I)\C", 1, "at character 1: empty object name", bad);
    check_err(
        r"\System",
        7,
        r"at character 7: expected '\' and a counter name after the object name, found the end of the path",
        bad,
    );
    check_err(
        r"\System\",
        8,
        "at character 8: empty counter name",
        S::PDH_CSTATUS_NO_COUNTERNAME,
    );
    check_err(
        r"\Processor(0\% Processor Time",
        12,
        r"at character 12: unbalanced parenthesis opened at character 10: expected ')' followed by '\' and the counter name",
        bad,
    );
    check_err(
        r"\O(I",
        4,
        r"at character 4: unbalanced parenthesis opened at character 2: expected ')' followed by '\' and the counter name",
        bad,
    );
    check_err(
        r"\O(I)x\C",
        6,
        r"at character 6: unbalanced parenthesis opened at character 2: expected ')' followed by '\' and the counter name",
        bad,
    );
    check_err(
        r"\O(I)",
        5,
        r"at character 5: expected '\' and a counter name after the instance, found the end of the path",
        bad,
    );
    check_err(
        r"\O(I)\",
        6,
        "at character 6: empty counter name",
        S::PDH_CSTATUS_NO_COUNTERNAME,
    );
    check_err(
        r"\Processor 0)\x",
        12,
        "at character 12: unexpected ')' in the object name",
        bad,
    );
    check_err(
        r"\Proc*\x",
        5,
        "at character 5: wildcard not allowed in the object name",
        S::PDH_INVALID_PATH,
    );
    check_err(
        r"\\*\System\Processes",
        2,
        "at character 2: wildcard not allowed in the machine name",
        S::PDH_INVALID_PATH,
    );
    check_err(
        r"\\srv*\System\Processes",
        5,
        "at character 5: wildcard not allowed in the machine name",
        S::PDH_INVALID_PATH,
    );
    // Trailing backslashes.
    check_err(
        r"\System\Processes\",
        17,
        r"at character 17: unexpected '\' in the counter name",
        bad,
    );
    check_err(
        r"\Processor(_Total)\% Processor Time\",
        35,
        r"at character 35: unexpected '\' in the counter name",
        bad,
    );
    // A single leading backslash before a machine name: `CM` is the object.
    check_err(
        r"\CM\O\C",
        5,
        r"at character 5: unexpected '\' in the counter name",
        bad,
    );
    check_err(
        r"\O(I)\CT(d:\f\i)",
        11,
        r"at character 11: unexpected '\' in the counter name",
        bad,
    );
    check_err(
        r"\Process(svchost#99999999999)\% Processor Time",
        17,
        "at character 17: instance index 99999999999 is out of range (the largest is 4294967295)",
        S::PDH_INVALID_INSTANCE,
    );
    check_err(
        r"\O(x#4294967296)\c",
        5,
        "at character 5: instance index 4294967296 is out of range (the largest is 4294967295)",
        S::PDH_INVALID_INSTANCE,
    );
    check_err(
        r"\O()\C",
        3,
        "at character 3: empty instance name",
        S::PDH_INVALID_INSTANCE,
    );
    check_err(
        r"\O(#1)\C",
        3,
        "at character 3: empty instance name",
        S::PDH_INVALID_INSTANCE,
    );
    check_err(
        r"\O(x/)\C",
        5,
        "at character 5: empty instance name",
        S::PDH_INVALID_INSTANCE,
    );
    check_err(
        r"\O(x/#2)\C",
        5,
        "at character 5: empty instance name",
        S::PDH_INVALID_INSTANCE,
    );
}

#[test]
fn length_limit() {
    // `\O\` + counter: 3 + n characters.
    let ok = format!(r"\O\{}", "c".repeat(PDH_MAX_COUNTER_PATH - 3));
    assert_eq!(ok.chars().count(), 2048);
    assert_eq!(parse(&ok).counter.len(), 2045);
    let long = format!(r"\O\{}", "c".repeat(PDH_MAX_COUNTER_PATH - 2));
    check_err(
        &long,
        2048,
        "at character 2048: path longer than PDH_MAX_COUNTER_PATH (2048 characters): 2049 characters",
        PdhStatus::PDH_INVALID_PATH,
    );
    // The limit counts UTF-16 code units, as PDH does: 1023 emoji are 2046 units.
    let emoji = format!(r"\O\{}", "\u{1F600}".repeat(1023));
    assert_eq!(emoji.chars().count(), 1026);
    let e = err(&emoji);
    assert_eq!(e.kind, PathErrorKind::PathTooLong { length: 2049 });
    assert_eq!(e.position, 1025);
}

#[test]
fn error_kinds_are_exposed() {
    assert_eq!(
        err(r"\Proc*\x").kind,
        PathErrorKind::Wildcard(PathComponent::Object)
    );
    assert_eq!(
        err(r"\O(I").kind,
        PathErrorKind::UnbalancedParenthesis { opened_at: 2 }
    );
    assert_eq!(
        err("System").kind,
        PathErrorKind::Expected {
            expected: "'\\' at the start of the path",
            found: Some('S')
        }
    );
    let boxed: Box<dyn std::error::Error> = Box::new(err(""));
    assert_eq!(boxed.to_string(), "at character 0: empty path");
}

// ---------------------------------------------------------------------------------------------
// Formatting and builders

#[test]
fn formats_like_pdh_make_counter_path() {
    let full = CounterPath::new("object", "counter")
        .with_machine("machine")
        .with_parent("parent")
        .with_instance("instance")
        .with_index(1);
    assert_eq!(
        full.to_string(),
        r"\\machine\object(parent/instance#1)\counter"
    );
    let mut p = full.clone();
    p.parent = None;
    assert_eq!(p.to_string(), r"\\machine\object(instance#1)\counter");
    // Without an instance, the parent and the index are ignored.
    let mut p = full.clone();
    p.instance = None;
    assert_eq!(p.to_string(), r"\\machine\object\counter");
    p.machine = None;
    assert_eq!(p.to_string(), r"\object\counter");
    // An explicit index 0 is written.
    let p = CounterPath::new("Process", "ID Process")
        .with_instance("svchost")
        .with_index(0);
    assert_eq!(p.to_string(), r"\Process(svchost#0)\ID Process");
    assert_eq!(parse(&p.to_string()), p);
    assert_eq!(p.instance_string().as_deref(), Some("svchost#0"));
    assert_eq!(
        CounterPath::new("System", "Processes").instance_string(),
        None
    );
}

#[test]
fn machine_qualification() {
    let p = parse(r"\Processor(_Total)\% Processor Time");
    let q = p.clone().with_default_machine("HOST");
    assert_eq!(q.to_string(), r"\\HOST\Processor(_Total)\% Processor Time");
    // The default does not replace a machine that is already named.
    let r = parse(r"\\OTHER\System\Processes").with_default_machine("HOST");
    assert_eq!(r.machine.as_deref(), Some("OTHER"));
    // with_machine replaces it, and accepts the `\\` prefix.
    let r = r.with_machine(r"\\HOST");
    assert_eq!(r.to_string(), r"\\HOST\System\Processes");
}

#[test]
fn wildcard_flags() {
    assert!(!parse(r"\Processor(_Total)\% Processor Time").has_wildcard());
    let p = parse(r"\Processor(*)\% Processor Time");
    assert!(p.has_wildcard() && p.has_instance_wildcard() && !p.has_counter_wildcard());
    let p = parse(r"\Processor(_Total)\*");
    assert!(p.has_wildcard() && !p.has_instance_wildcard() && p.has_counter_wildcard());
    let p = parse(r"\Thread(svc*/0)\x");
    assert!(p.has_instance_wildcard());
}

// ---------------------------------------------------------------------------------------------
// Instance strings

#[test]
fn instance_strings() {
    assert_eq!(
        parse_instance("parent/inst#3"),
        Ok(InstanceName {
            parent: Some("parent"),
            name: "inst",
            index: Some(3)
        })
    );
    assert_eq!(
        parse_instance("inst"),
        Ok(InstanceName {
            parent: None,
            name: "inst",
            index: None
        })
    );
    assert_eq!(
        parse_instance("explorer/0"),
        Ok(InstanceName {
            parent: Some("explorer"),
            name: "0",
            index: None
        })
    );
    assert_eq!(
        parse_instance("svchost#12"),
        Ok(InstanceName {
            parent: None,
            name: "svchost",
            index: Some(12)
        })
    );
    assert_eq!(parse_instance("C#").map(|i| i.name), Ok("C#"));
    assert_eq!(parse_instance("a/b/c").map(|i| i.parent), Ok(Some("a/b")));
    let e = parse_instance("").unwrap_err();
    assert_eq!(e.to_string(), "at character 0: empty instance name");
    assert_eq!(e.status(), PdhStatus::PDH_INVALID_INSTANCE);
    let e = parse_instance("x#99999999999").unwrap_err();
    assert_eq!(
        e.to_string(),
        "at character 2: instance index 99999999999 is out of range (the largest is 4294967295)"
    );
    // Shorter than MAX_PATH.
    let ok = "a".repeat(MAX_INSTANCE_STRING - 1);
    assert_eq!(parse_instance(&ok).map(|i| i.name.len()), Ok(259));
    let e = parse_instance(&"a".repeat(MAX_INSTANCE_STRING)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "at character 259: instance string longer than 259 characters: 260 characters"
    );
    assert_eq!(e.status(), PdhStatus::PDH_INVALID_INSTANCE);

    assert_eq!(format_instance(Some("p"), "i", Some(3)), "p/i#3");
    assert_eq!(format_instance(None, "i", None), "i");
    assert_eq!(format_instance(Some("explorer"), "0", None), "explorer/0");
    assert_eq!(
        InstanceName {
            parent: None,
            name: "svchost",
            index: Some(2)
        }
        .to_string(),
        "svchost#2"
    );
}

// ---------------------------------------------------------------------------------------------
// Wildcards

#[test]
fn wildcard_matching() {
    assert!(wildcard_match("svc*", "svchost"));
    assert!(wildcard_match("svc*", "SVCHOST"));
    assert!(wildcard_match("svc*", "svc"));
    assert!(!wildcard_match("svc*", "xsvc"));
    assert!(wildcard_match("*host", "svchost"));
    assert!(!wildcard_match("*host", "hostx"));
    assert!(wildcard_match("s*c*t", "svchost"));
    assert!(!wildcard_match("s*c*t", "svchosts"));
    assert!(wildcard_match("*", "_Total"));
    assert!(wildcard_match("*", ""));
    assert!(wildcard_match("% * Time", "% Processor Time"));
    assert!(!wildcard_match("% * Time", "% Processor Timer"));
    // `?` is literal in PDH paths.
    assert!(!wildcard_match("a?c", "abc"));
    assert!(wildcard_match("a?c", "A?C"));
    // Non-ASCII case folding per character.
    assert!(wildcard_match("ÜBER*", "über alles"));
    assert!(wildcard_match("*ПРОЦЕСС", "процесс"));
    assert!(!wildcard_match("STRASSE", "straße"));
    // Pathological patterns finish (no exponential backtracking).
    let text = "a".repeat(10_000);
    assert!(!wildcard_match("*a*a*a*a*b", &text));
    assert!(wildcard_match("*a*a*a*a*a", &text));
}

#[test]
fn object_and_counter_matching() {
    let p = parse(r"\Processor(*)\% * Time");
    assert!(p.matches_object("processor"));
    assert!(!p.matches_object("Processor Information"));
    assert!(p.matches_counter("% Processor Time"));
    assert!(p.matches_counter("% idle time"));
    assert!(!p.matches_counter("Interrupts/sec"));
    let p = parse(r"\Memory\Available MBytes");
    assert!(p.matches_counter("AVAILABLE MBYTES"));
    assert!(!p.matches_counter("Available Bytes"));
}

#[test]
fn instance_matching_index_rules() {
    // No index, no wildcard: only the first occurrence.
    let p = parse(r"\Process(svchost)\ID Process");
    assert!(p.matches_instance(None, "svchost", 0));
    assert!(p.matches_instance(None, "SvcHost", 0));
    assert!(!p.matches_instance(None, "svchost", 1));
    assert!(!p.matches_instance(None, "svchostx", 0));
    // `#n`: exactly that index.
    let p = parse(r"\Process(svchost#2)\ID Process");
    assert!(p.matches_instance(None, "svchost", 2));
    assert!(!p.matches_instance(None, "svchost", 0));
    let p = parse(r"\Process(svchost#0)\ID Process");
    assert!(p.matches_instance(None, "svchost", 0));
    assert!(!p.matches_instance(None, "svchost", 1));
    // Wildcard without index: every index.
    let p = parse(r"\Process(svc*)\ID Process");
    assert!(p.matches_instance(None, "svchost", 0));
    assert!(p.matches_instance(None, "svchost", 5));
    assert!(!p.matches_instance(None, "_Total", 0));
    // Wildcard with index: that index only.
    let p = parse(r"\Process(svc*#1)\ID Process");
    assert!(p.matches_instance(None, "svchost", 1));
    assert!(!p.matches_instance(None, "svchost", 0));
    // `*` includes _Total.
    let p = parse(r"\Processor(*)\% Processor Time");
    assert!(p.matches_instance(None, "_Total", 0));
    assert!(p.matches_instance(None, "3", 0));
    // `name#*`: every index of that name.
    let p = parse(r"\Process(svchost#*)\ID Process");
    assert!(p.matches_instance(None, "svchost", 0));
    assert!(p.matches_instance(None, "svchost", 7));
    assert!(!p.matches_instance(None, "svchostx", 0));
    // ... and still matches an instance literally named `svchost#*`.
    assert!(p.matches_instance(None, "svchost#*", 0));
    // A path without an instance selects no instance.
    assert!(!parse(r"\System\Processes").matches_instance(None, "x", 0));
}

#[test]
fn instance_matching_parents() {
    // No parent + wildcard: parent ignored.
    let p = parse(r"\Thread(*)\Context Switches/sec");
    assert!(p.matches_instance(Some("explorer"), "0", 0));
    assert!(p.matches_instance(Some("svchost"), "12", 1));
    let p = parse(r"\Thread(1*)\Context Switches/sec");
    assert!(p.matches_instance(Some("explorer"), "12", 0));
    assert!(!p.matches_instance(Some("explorer"), "21", 0));
    // Parent filter.
    let p = parse(r"\Thread(explorer/*)\Context Switches/sec");
    assert!(p.matches_instance(Some("explorer"), "3", 0));
    assert!(p.matches_instance(Some("Explorer"), "3", 1));
    assert!(!p.matches_instance(Some("svchost"), "3", 0));
    assert!(!p.matches_instance(None, "3", 0));
    // Wildcard parent.
    let p = parse(r"\Thread(*/0)\Context Switches/sec");
    assert!(p.matches_instance(Some("svchost"), "0", 0));
    assert!(p.matches_instance(Some("svchost"), "0", 1));
    assert!(!p.matches_instance(Some("svchost"), "10", 0));
    // Exact parent and instance.
    let p = parse(r"\Thread(explorer/0)\Context Switches/sec");
    assert!(p.matches_instance(Some("explorer"), "0", 0));
    assert!(!p.matches_instance(Some("explorer"), "0", 1));
    assert!(!p.matches_instance(Some("explorer"), "1", 0));
    // No parent, no wildcard: the full name must match, so a parented instance is not selected.
    let p = parse(r"\Thread(0)\Context Switches/sec");
    assert!(!p.matches_instance(Some("explorer"), "0", 0));
    assert!(p.matches_instance(None, "0", 0));
    // The split position does not matter: the full names are compared.
    let p = parse(r"\Job Object Details(a/b/c)\Threads");
    assert!(p.matches_instance(Some("a"), "b/c", 0));
    assert!(p.matches_instance(Some("a/b"), "c", 0));
    let p = parse(r"\Network Interface(PRO/1000)\Bytes Sent/sec");
    assert!(p.matches_instance(None, "PRO/1000", 0));
    // A manually built instance that contains a slash and no parent.
    let p = CounterPath::new("Thread", "x").with_instance("explorer/0");
    assert!(p.matches_instance(Some("explorer"), "0", 0));
}

// ---------------------------------------------------------------------------------------------
// Properties

/// Reference matcher: plain recursion, fine for short inputs.
fn reference_match(p: &[char], t: &[char]) -> bool {
    match p.split_first() {
        None => t.is_empty(),
        Some(('*', rest)) => (0..=t.len()).any(|k| reference_match(rest, &t[k..])),
        Some((&c, rest)) => match t.split_first() {
            Some((&d, trest)) => {
                c.to_lowercase().eq(d.to_lowercase()) && reference_match(rest, trest)
            }
            None => false,
        },
    }
}

fn ends_with_index(s: &str) -> bool {
    match s.rfind('#') {
        Some(h) => {
            let d = &s[h + 1..];
            !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

prop_compose! {
    fn instance_part()(
        parent in proptest::option::of(r"[A-Za-z0-9 ()\[\]:,.#_{}/\\é-]{1,12}"),
        name in r"[A-Za-z0-9 ()\[\]:,.#_{}\\Ж*-]{1,12}",
        index in proptest::option::of(any::<u32>()),
    ) -> (Option<String>, String, Option<u32>) {
        (parent, name, index)
    }
}

fn path_strategy() -> impl Strategy<Value = CounterPath> {
    (
        proptest::option::of(r"[A-Za-z0-9._()#/-]{1,15}"),
        r"[A-Za-z0-9 %.:$#/_é-]{1,20}",
        proptest::option::of(instance_part()),
        r"[A-Za-z0-9 %./()#_:<>=&*ß-]{1,24}",
    )
        .prop_filter(
            "an instance without index must not end in #digits",
            |(_, _, inst, _)| match inst {
                Some((_, name, None)) => !ends_with_index(name),
                _ => true,
            },
        )
        .prop_map(|(machine, object, inst, counter)| {
            let (parent, instance, index) = match inst {
                Some((p, n, i)) => (p, Some(n), i),
                None => (None, None, None),
            };
            CounterPath {
                machine,
                object,
                parent,
                instance,
                index,
                counter,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn format_parse_round_trip(p in path_strategy()) {
        let text = p.to_string();
        prop_assert_eq!(CounterPath::parse(&text), Ok(p.clone()), "{}", text);
    }

    #[test]
    fn a_path_selects_its_own_instance(p in path_strategy()) {
        if let Some(name) = p.instance.as_deref() {
            prop_assert!(p.matches_instance(p.parent.as_deref(), name, p.index.unwrap_or(0)));
        }
        prop_assert!(p.matches_object(&p.object.to_uppercase()));
        prop_assert!(p.matches_counter(&p.counter));
    }

    #[test]
    fn parse_never_panics(s in any::<String>()) {
        let _ = CounterPath::parse(&s);
        let _ = parse_instance(&s);
    }

    #[test]
    fn parse_format_parse_is_stable(s in r"(\\\\[a-z*]{0,3})?\\[a-z()*/#\\ ]{0,10}(\\[a-z()/#*\\]{0,6})?") {
        match CounterPath::parse(&s) {
            Ok(p) => {
                let text = p.to_string();
                prop_assert_eq!(CounterPath::parse(&text), Ok(p), "{} -> {}", s, text);
            }
            Err(e) => {
                prop_assert!(e.position <= s.chars().count());
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }

    #[test]
    fn wildcard_agrees_with_reference(p in "[abAé*]{0,8}", t in "[abAéÉ]{0,10}") {
        let pc: Vec<char> = p.chars().collect();
        let tc: Vec<char> = t.chars().collect();
        prop_assert_eq!(wildcard_match(&p, &t), reference_match(&pc, &tc));
    }

    /// `fold_case` keys exactly the equality that `eq_ignore_case` (and `wildcard_match` without `*`)
    /// decides, including letters whose case forms are not one-to-one.
    #[test]
    fn fold_case_keys_eq_ignore_case(
        a in "[aAbéÉßẞİiıIKk\u{212A}\u{307}]{0,5}",
        b in "[aAbéÉßẞİiıIKk\u{212A}\u{307}]{0,5}",
    ) {
        let equal = eq_ignore_case(&a, &b);
        prop_assert_eq!(fold_case(&a) == fold_case(&b), equal);
        prop_assert_eq!(wildcard_match(&a, &b), equal);
        prop_assert!(eq_ignore_case(&a, &fold_case(&a)));
    }
}

#[test]
fn fold_case_examples() {
    assert_eq!(fold_case("svchost"), "svchost");
    assert!(matches!(
        fold_case("svchost"),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(fold_case("SvcHost#1"), "svchost#1");
    assert_eq!(fold_case("ÉTÉ"), "été");
    // The Kelvin sign folds to `k`, like the letter; `İ` keeps its own form.
    assert_eq!(fold_case("\u{212A}"), "k");
    assert_eq!(fold_case("İ"), "İ");
    assert!(eq_ignore_case("Explorer/0", "explorer/0"));
    assert!(!eq_ignore_case("straße", "STRASSE"));
}

#[test]
fn leading_slash_is_part_of_the_instance_name() {
    // Linux mount points are LogicalDisk instances: "/" and "/home" have no parent.
    for (text, inst) in [
        (r"\LogicalDisk(/)\% Free Space", "/"),
        (r"\LogicalDisk(/home)\Free Megabytes", "/home"),
    ] {
        let p = CounterPath::parse(text).unwrap();
        assert_eq!(p.parent, None);
        assert_eq!(p.instance.as_deref(), Some(inst));
        assert_eq!(p.to_string(), text);
        assert!(p.matches_instance(None, inst, 0));
    }
    // A deeper mount point splits at the last '/', and still matches the full name.
    let p = CounterPath::parse(r"\LogicalDisk(/mnt/data)\% Free Space").unwrap();
    assert_eq!(
        (p.parent.as_deref(), p.instance.as_deref()),
        (Some("/mnt"), Some("data"))
    );
    assert!(p.matches_instance(None, "/mnt/data", 0));
}
