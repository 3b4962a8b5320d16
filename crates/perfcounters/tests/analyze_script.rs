//! The PowerShell subset of PAL's threshold code, construct by construct: loops and their bound,
//! string methods with .NET's rules, every assignment form, arrays and hash tables, string
//! expansion; the code evaluated in a time slice (generated data sources, `CreateAlert`); and
//! code that would loop forever or allocate without bound, stopped quickly with the line.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use perfcounters::analyze::{
    evaluate, CounterInstance, DataSourceKind, Rules, Script, ScriptError, ScriptValue, MAX_CELLS,
    MAX_STATEMENTS, MAX_STRING_BYTES,
};

/// The threshold of the one `StaticThreshold -Threshold ($x)` call that follows `code`.
fn value_of(code: &str, expr: &str) -> Result<f64, ScriptError> {
    let mut vars = HashMap::new();
    vars.insert(
        "C".to_owned(),
        ScriptValue::Collection {
            name: "C".into(),
            count: 2,
        },
    );
    vars.insert("S".to_owned(), ScriptValue::Str("Hello, World".into()));
    let code = format!(
        "{code}\nStaticThreshold -CollectionOfCounterInstances $C -Operator 'gt' -Threshold ({expr})"
    );
    let calls = evaluate(&code, &vars)?;
    Ok(calls[0].threshold)
}

fn value(code: &str, expr: &str) -> f64 {
    value_of(code, expr).unwrap_or_else(|e| panic!("{code}: {e}"))
}

/// The error of `code`, which must fail.
fn error(code: &str) -> ScriptError {
    match value_of(code, "0") {
        Ok(v) => panic!("{code}: evaluated to {v}"),
        Err(e) => e,
    }
}

#[test]
fn for_foreach_while_break_continue() {
    // 0 + 1 + 2 (3 skipped) + 4 + 5 (the loop left at 6).
    let code = "$s = 0\nFor ($i=0;$i -lt 10;$i++)\n{\n If ($i -eq 3) { continue }\n If ($i -eq 6) { break }\n $s += $i\n}";
    assert_eq!(value(code, "$s"), 12.0);
    // Empty parts: `For (;;)` with its own exit.
    assert_eq!(
        value("$n = 0; For (;;) { $n++; If ($n -ge 4) { break } }", "$n"),
        4.0
    );
    // The loop variable stays after the loop, as in PowerShell.
    assert_eq!(value("For ($i=0;$i -lt 3;$i++) { }", "$i"), 3.0);
    // Nested loops: break leaves the inner one only.
    let code = "$n = 0\nFor ($a=0;$a -lt 3;$a++) { For ($b=0;$b -lt 10;$b++) { If ($b -eq 2) { break }; $n++ } }";
    assert_eq!(value(code, "$n"), 6.0);
    assert_eq!(
        value("$t = 0\nForEach ($x in @(1, 2, 30)) { $t += $x }", "$t"),
        33.0
    );
    assert_eq!(
        value(
            "$t = 0\nForeach ($x in '4,5'.Split(',')) { $t += [int] $x }",
            "$t"
        ),
        9.0
    );
    // ForEach over $null runs no round; over one value, one.
    assert_eq!(value("$t = 0\nForEach ($x in $null) { $t++ }", "$t"), 0.0);
    assert_eq!(value("$t = 0\nForEach ($x in 7) { $t += $x }", "$t"), 7.0);
    assert_eq!(value("$k = 1\nWhile ($k -lt 100) { $k *= 3 }", "$k"), 243.0);
    // `break` in a switch leaves the switch.
    let code = "$r = 0\nswitch (2) { 2 { $r = 1; break } 2 { $r = 5 } }";
    assert_eq!(value(code, "$r"), 1.0);
    let e = error("$x = 1\nbreak");
    assert_eq!(
        e.to_string(),
        "line 2: `break` or `continue` outside a loop is not evaluated"
    );
}

#[test]
fn a_loop_that_would_run_forever_stops_quickly_naming_its_line() {
    for code in [
        "$a = 1\nWhile ($True) { $a = 1 }",
        "$a = 1\nFor (;;) { }",
        "$a = 1\nFor ($i=0;$i -ge 0;$i++) { $b = $i }",
    ] {
        let start = Instant::now();
        let e = error(code);
        assert!(start.elapsed() < Duration::from_secs(5), "{code}");
        assert_eq!(e.line(), Some(2), "{code}");
        let keyword = if code.contains("While") {
            "While"
        } else {
            "For"
        };
        assert_eq!(
            e.to_string(),
            format!("line 2: the loop `{keyword}` did not end within {MAX_STATEMENTS} statements executed; stopped, not evaluated"),
        );
    }
    // The inner loop of two names its own line.
    let e = error("For ($a=0;$a -lt 2;$a++)\n{\n While (1) { }\n}");
    assert_eq!(e.line(), Some(3));
}

#[test]
fn a_huge_allocation_stops_quickly() {
    // An array doubled: stopped at the entries bound.
    let start = Instant::now();
    let e = error("$a = @(1)\nFor ($i=0;$i -lt 64;$i++)\n{\n $a += $a\n}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(
        e.to_string(),
        format!("line 4: more than {MAX_CELLS} array or hash table entries made; stopped, not evaluated")
    );
    // An ArrayList filled in a loop.
    let e = error("$l = New-Object System.Collections.ArrayList\nWhile (1) { [void] $l.Add(1) }");
    assert!(matches!(e, ScriptError::Exceeded { .. }), "{e}");
    // A string doubled: stopped at the string bound.
    let start = Instant::now();
    let e = error("$s = 'x'\nFor ($i=0;$i -lt 64;$i++) { $s = $s + $s }");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        e.to_string()
            .contains(&format!("a string longer than {MAX_STRING_BYTES} bytes")),
        "{e}"
    );
    assert_eq!(e.line(), Some(2));
}

/// Long chains of operators or members make deep trees, which evaluating and dropping them recurse
/// through: a chain is at most 256 long, so that no code overflows the stack (the slices are
/// evaluated on a thread of their own, with a default stack).
#[test]
fn long_chains_are_bounded() {
    let sum = |n: usize| format!("$x = 1{}", "+1".repeat(n));
    assert_eq!(value(&sum(200), "$x"), 201.0);
    for code in [
        sum(300),
        sum(30_000),
        format!("$h = @{{}}\n$x = $h{}", ".k".repeat(30_000)),
        format!("$x = 1{}", " -and 1".repeat(5_000)),
    ] {
        let e = std::thread::spawn(move || evaluate(&code, &HashMap::new()).unwrap_err())
            .join()
            .unwrap();
        assert!(
            e.to_string()
                .contains("an expression of more than 256 operators"),
            "{e}"
        );
    }
}

#[test]
fn string_methods_as_dotnet() {
    // $S is 'Hello, World' (12 characters).
    let s = |expr: &str, want: &str| {
        let code = format!("$r = {expr}\n$ok = 0\nIf ($r -eq '{want}') {{ $ok = 1 }}");
        assert_eq!(value(&code, "$ok"), 1.0, "{expr}");
    };
    s("$S.Substring(7)", "World");
    s("$S.substring(0, 5)", "Hello");
    s("$S.Substring(12)", "");
    s("$S.Replace('l', 'L')", "HeLLo, WorLd");
    s("$S.ToUpper()", "HELLO, WORLD");
    s("$S.ToLower()", "hello, world");
    s("'  a b  '.Trim()", "a b");
    s("'xxabxx'.Trim('x')", "ab");
    s("'  ab'.TrimStart()", "ab");
    s("'ab  '.TrimEnd()", "ab");
    s("$S.Split(',')[1]", " World");
    s("$S.Split(', ')[2]", "World");
    s("'MSSQL$PROD:Buffer Manager'.Substring(6, 4)", "PROD");
    let n = |expr: &str| value("", expr);
    assert_eq!(n("$S.Length"), 12.0);
    assert_eq!(n("''.Length"), 0.0);
    assert_eq!(n("$S.IndexOf('o')"), 4.0);
    assert_eq!(n("$S.IndexOf('o', 5)"), 8.0);
    assert_eq!(n("$S.IndexOf('z')"), -1.0);
    assert_eq!(n("$S.LastIndexOf('o')"), 8.0);
    assert_eq!(n("$S.Split(',').Count"), 2.0);
    // Booleans as numbers: 1 true, 0 false.
    assert_eq!(n("[int] $S.Contains('World')"), 1.0);
    assert_eq!(n("[int] $S.Contains('world')"), 0.0);
    assert_eq!(n("[int] $S.StartsWith('Hell')"), 1.0);
    assert_eq!(n("[int] $S.EndsWith('x')"), 0.0);
    // Out of range is an error with the line, as .NET throws.
    let e = error("$a = 1\n$b = $S.Substring(13)");
    assert_eq!(
        e.to_string(),
        "line 2: .Substring(13) on a string of 12 characters: out of range"
    );
    let e = error("$b = $S.substring(10, 5)");
    assert_eq!(
        e.to_string(),
        "line 1: .substring(10, 5) on a string of 12 characters: out of range"
    );
    assert!(matches!(
        error("$b = $S.Substring(-1)"),
        ScriptError::Eval { .. }
    ));
    assert!(matches!(
        error("$b = $S.IndexOf('o', 40)"),
        ScriptError::Eval { .. }
    ));
    assert!(matches!(
        error("$b = $S.Replace('', 'x')"),
        ScriptError::Eval { .. }
    ));
    assert_eq!(
        error("$b = $S.PadLeft(3)").to_string(),
        "line 1: the string method .PadLeft() is not evaluated"
    );
}

#[test]
fn every_assignment_form() {
    assert_eq!(
        value("$a = @(1, 2, 3)\n$a[1] = 5", "$a[0] + $a[1] + $a[2]"),
        9.0
    );
    assert_eq!(value("$a = @(1, 2, 3)\n$a[-1] = 7", "$a[2]"), 7.0);
    assert_eq!(
        value(
            "$h = @{}\n$h.Key = 3\n$h['Other'] = 4",
            "$h.key + $h['OTHER'] + $h.Count"
        ),
        9.0
    );
    assert_eq!(
        value("$x = 10\n$x += 5\n$x -= 3\n$x *= 2\n$x /= 4\n$x %= 4", "$x"),
        2.0
    );
    assert_eq!(
        value(
            "$s = 'a'\n$s += 'b'\n$n = 0\nIf ($s -eq 'ab') { $n = 1 }",
            "$n"
        ),
        1.0
    );
    assert_eq!(value("$i = 5\n$i++\n$i++\n$i--", "$i"), 6.0);
    assert_eq!(value("$i = 5\n$j = $i++", "$j * 10 + $i"), 56.0);
    assert_eq!(value("$i = 5\n$j = ++$i", "$j * 10 + $i"), 66.0);
    assert_eq!(
        value("[int] $i = 2.5\n[Int64] $j = 3.5", "$i * 10 + $j"),
        24.0
    );
    assert_eq!(value("[int] $i = ''", "$i"), 0.0);
    // A hash table in an array, set through the index.
    assert_eq!(value("$a = @(@{})\n$a[0].k = 8", "$a[0].k"), 8.0);
    let e = error("$a = @(1)\n$a[3] = 1");
    assert_eq!(
        e.to_string(),
        "line 2: the index 3 is outside the array (1 items)"
    );
    assert!(matches!(error("$S.Length = 1"), ScriptError::Eval { .. }));
    assert!(matches!(
        error("$global:x = 1"),
        ScriptError::Unsupported { .. }
    ));
}

#[test]
fn arrays_hash_tables_and_expansion() {
    // An ArrayList and a hash table are shared, as .NET objects: the table holds the list.
    let code = "$l = New-Object System.Collections.ArrayList\n$h = @{}\n$h.Add('k', $l)\n[void] $l.Add(4)\n[void] $l.Add(6)";
    assert_eq!(value(code, "$h['k'][1] + $h['k'].Count"), 8.0);
    // Hashtable.Add of a key already there: PowerShell reports the error and goes on; the
    // first value stays.
    assert_eq!(
        value(
            "$h = @{}\n$h.Add('a', 1)\n$h.Add('A', 2)",
            "$h['a'] + $h.Count"
        ),
        2.0
    );
    assert_eq!(value("$h = @{ a = 1; b = 2 }", "$h.b"), 2.0);
    assert_eq!(value("$h = @{ a = 1 }", "[int] $h.ContainsKey('A')"), 1.0);
    assert_eq!(value("$k = @(@{ a = 1; b = 2 }.Keys)", "$k.Count"), 2.0);
    // $null is below any value, as .NET compares: true, true, false, false.
    assert_eq!(
        value("", "[int] ($null -lt -5) + [int] (3 -gt $null) * 2 + [int] ($null -ge 0) * 4 + [int] ($null -eq 0) * 8"),
        3.0
    );
    // Past the end, an array gives $null.
    assert_eq!(
        value("$a = @(1)\n$n = 0\nIf ($a[5] -eq $null) { $n = 1 }", "$n"),
        1.0
    );
    // Expansion: variables and subexpressions, backtick escapes.
    let code = "$m = 'PC'\n$o = @{ i = 'C:' }\n$p = \"\\\\$m\\LogicalDisk($($o.i))\\Disk `$x\"\n$n = 0\nIf ($p -eq '\\\\PC\\LogicalDisk(C:)\\Disk $x') { $n = 1 }";
    assert_eq!(value(code, "$n"), 1.0);
    assert_eq!(
        value(
            "$n = 0\nIf ('MSSQL$A:Locks' -like 'mssql$*:locks') { $n = 1 }",
            "$n"
        ),
        1.0
    );
    assert_eq!(value("", "[int] (@(1, 2, 3) -contains 2)"), 1.0);
    assert_eq!(value("", "[int] (@(1, 2, 3) -notcontains 2)"), 0.0);
    let code = "$f = '\\??\\C:\\pagefile.sys' -Replace('\\\\\\?\\?\\\\','')\n$f = $f -replace '\\\\pagefile.sys', ''\n$n = 0\nIf ($f -eq 'C:') { $n = 1 }";
    assert_eq!(value(code, "$n"), 1.0);
    assert_eq!(
        value(
            "$f = 'aab' -replace 'A+', 'x'\n$n = 0\nIf ($f -eq 'xb') { $n = 1 }",
            "$n"
        ),
        1.0
    );
    // -match sets $Matches (the match, then each group); case-insensitively.
    let code = "$n = 0\nIf ('MSSQL$PROD:Locks' -match '\\$(\\w+):') { $n = 1 }\n$g = $Matches[1]\n$m = 0\nIf ($g -eq 'PROD') { $m = 1 }";
    assert_eq!(value(code, "$n + $m"), 2.0);
    assert_eq!(value("", "[int] ('C:' -notmatch 'd:')"), 1.0);
    // The files' use: is a disk one of the volumes listed in a question?
    let code = "$n = 0\nForEach ($v in 'E:,F:'.Split(',')) { If (('1 F:' -match $v) -eq $True) { $n = 1; break } }";
    assert_eq!(value(code, "$n"), 1.0);
    // A pattern the regex crate does not read (a back-reference), or one built to blow up: not
    // evaluated, quickly, with the pattern.
    let e = error("$f = 'aa' -match '(a)\\1'");
    assert!(matches!(e, ScriptError::Unsupported { line: 1, .. }), "{e}");
    let start = Instant::now();
    let e = error("$f = 'aaaa' -match '((a{1,100}){1,100}){1,100}b'");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(e.to_string().contains("the regular expression"), "{e}");
    assert_eq!(
        value(
            "",
            "[Math]::Max(2, 7) + [Math]::Floor(2.7) + [Math]::Pow(2, 3)"
        ),
        17.0
    );
    // PAL's helpers.
    assert_eq!(
        value(
            "",
            "[int] (IsGreaterThanZero 3) + [int] (IsGreaterThanZero 'x')"
        ),
        1.0
    );
    let code = "$i = ExtractSqlNamedInstanceFromCounterObjectPath -sCounterObjectPath 'MSSQL$PROD:Locks'\n$n = 0\nIf ($i -eq 'PROD') { $n = 1 }";
    assert_eq!(value(code, "$n"), 1.0);
}

/// A counter instance of one slice.
fn instance(path: &str, instance: &str, avg: Option<f64>) -> CounterInstance {
    CounterInstance {
        path: path.into(),
        computer: "PC".into(),
        object: "Network Interface".into(),
        counter: path.rsplit('\\').next().unwrap_or_default().into(),
        instance: instance.into(),
        min: avg,
        avg,
        max: avg,
        trend: Some(0.0),
    }
}

/// QuickSystemOverview's own "% Network Utilization" code, interpreted for one slice, by hand:
/// `[int]((avg(Bytes Total/sec) × 8 / avg(Current Bandwidth)) × 100)`, 0 unless both are above
/// 0. NIC a: 15,625 B/s on 1,000,000 bit/s is 12.5 %, rounded half to even by `[int]`: 12. NIC b:
/// 250,000 B/s on 10,000,000 bit/s: 20. NIC c: no bandwidth, 0. The bandwidth instances come in
/// another order: the code matches them by `CounterInstance`.
#[test]
fn generated_network_utilization_by_hand() {
    let rules = Rules::builtin();
    let a = rules
        .analyses
        .iter()
        .find(|a| a.name == "Network Interface % Network Utilization")
        .unwrap();
    let ds = a
        .data_sources
        .iter()
        .find(|d| matches!(d.kind, DataSourceKind::Generated { .. }))
        .unwrap();
    let DataSourceKind::Generated { code } = &ds.kind else {
        unreachable!()
    };
    let bytes = |i: &str, v: f64| {
        instance(
            &format!(r"\\PC\Network Interface({i})\Bytes Total/sec"),
            i,
            Some(v),
        )
    };
    let bandwidth = |i: &str, v: f64| {
        instance(
            &format!(r"\\PC\Network Interface({i})\Current Bandwidth"),
            i,
            Some(v),
        )
    };
    let inputs = vec![
        (
            "CollectionOfNetworkInterfaceBytesTotalPerSec".to_owned(),
            vec![bytes("a", 15_625.0), bytes("b", 250_000.0), bytes("c", 9.0)],
        ),
        (
            "CollectionOfNetworkInterfaceCurrentBandwidth".to_owned(),
            vec![
                bandwidth("c", 0.0),
                bandwidth("b", 10_000_000.0),
                bandwidth("a", 1_000_000.0),
            ],
        ),
    ];
    let made = Script::parse(code)
        .unwrap()
        .generate(&HashMap::new(), &inputs, &ds.collection_var)
        .unwrap();
    assert_eq!(
        made,
        [
            (
                r"\\PC\Network Interface(a)\% Network Utilization".to_owned(),
                vec![12.0]
            ),
            (
                r"\\PC\Network Interface(b)\% Network Utilization".to_owned(),
                vec![20.0]
            ),
            (
                r"\\PC\Network Interface(c)\% Network Utilization".to_owned(),
                vec![0.0]
            ),
        ]
    );
}

/// Exchange's threshold code that loops over the instances and PAL's slices and calls
/// `CreateAlert`, evaluated for one slice: the instances whose slice average is at least 75.
#[test]
fn create_alert_in_a_slice() {
    let code = "For ($i=0;$i -lt $CollectionOfProcessorPercentProcessorTime.Count;$i++)\n{\n $oCounterInstance = $CollectionOfProcessorPercentProcessorTime[$i]\n For ($t=0;$t -lt $alQuantizedTime.Count;$t++)\n {\n  If ($oCounterInstance.QuantizedAvg[$t] -ge 75)\n  {\n   CreateAlert -TimeSliceIndex $t -CounterInstanceObject $oCounterInstance -IsMinThresholdBroken $False -IsAvgThresholdBroken $True -IsMaxThresholdBroken $False -IsTrendThresholdBroken $False -IsMinEvaluated $False -IsAvgEvaluated $True -IsMaxEvaluated $False -IsTrendEvaluated $False\n  }\n }\n}";
    let script = Script::parse(code).unwrap();
    let cpu =
        |i: &str, v: Option<f64>| instance(&format!(r"\\PC\Processor({i})\% Processor Time"), i, v);
    let inputs = vec![(
        "CollectionOfProcessorPercentProcessorTime".to_owned(),
        vec![
            cpu("0", Some(80.0)),
            cpu("1", Some(74.9)),
            cpu("_Total", Some(75.0)),
            cpu("2", None),
        ],
    )];
    let alerts = script.create_alerts(&HashMap::new(), &inputs).unwrap();
    let got: Vec<(&str, bool, bool)> = alerts
        .iter()
        .map(|a| (a.counter.as_str(), a.avg, a.max))
        .collect();
    assert_eq!(
        got,
        [
            (r"\\PC\Processor(0)\% Processor Time", true, false),
            (r"\\PC\Processor(_Total)\% Processor Time", true, false)
        ]
    );
    // Outside a slice (no instances) the code is not evaluated: it reads the instances.
    let mut vars = HashMap::new();
    vars.insert(
        "CollectionOfProcessorPercentProcessorTime".to_owned(),
        ScriptValue::Collection {
            name: "CollectionOfProcessorPercentProcessorTime".into(),
            count: 4,
        },
    );
    let e = script.evaluate(&vars).unwrap_err();
    assert_eq!(e.line(), Some(3));
    assert!(e.to_string().contains("outside a time slice"), "{e}");
}
