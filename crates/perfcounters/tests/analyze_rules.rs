//! PAL threshold files: the reader on the shipped files and on hostile ones, and the interpreter
//! on every threshold code of `../shared/data/pal` (none left unevaluated without a stated reason).

use crate::support::fixtures;
use crate::support::shared_data;

use std::collections::HashMap;
use std::error::Error;

use perfcounters::analyze::RulesFile;
use perfcounters::analyze::{
    question_values, Analysis, AnalyzeError, Operator, Rules, Script, ScriptError, ScriptValue,
    StaticThreshold,
};

fn shipped(name: &str) -> Option<RulesFile> {
    let dir = shared_data::dir("PAL threshold files")?;
    let text = std::fs::read_to_string(dir.join("pal").join(name)).unwrap();
    Some(RulesFile::parse(name, &text).unwrap())
}

/// The variables of an analysis: the questions' values and each data source with `count`
/// instances.
fn vars(
    questions: &[(String, ScriptValue)],
    a: &Analysis,
    count: usize,
) -> HashMap<String, ScriptValue> {
    let mut v: HashMap<String, ScriptValue> = questions.iter().cloned().collect();
    for d in &a.data_sources {
        v.insert(
            d.collection_var.clone(),
            ScriptValue::Collection {
                name: d.collection_var.clone(),
                count,
            },
        );
    }
    v
}

fn run(
    code: &str,
    vars: &HashMap<String, ScriptValue>,
) -> Result<Vec<StaticThreshold>, ScriptError> {
    Script::parse(code)?.evaluate(vars)
}

/// The literal `-Threshold` of a one-call code, read by plain text splitting (an oracle independent
/// of the interpreter): `None` when the threshold is not a literal.
fn literal_threshold(code: &str) -> Option<f64> {
    let rest = code.split("-Threshold").nth(1)?.split_whitespace().next()?;
    let (num, mult) = match rest.to_ascii_uppercase() {
        s if s.ends_with("MB") => (rest[..rest.len() - 2].to_owned(), 1048576.0),
        s if s.ends_with("GB") => (rest[..rest.len() - 2].to_owned(), 1073741824.0),
        _ => (rest.to_owned(), 1.0),
    };
    num.parse::<f64>().ok().map(|n| n * mult)
}

/// Analyses whose thresholds are not evaluated, and why (they read PAL's global object).
const NOT_EVALUATED: &[(&str, &str)] = &[(
    "System Context Switching",
    "the scoped variable $global:oPal",
)];

#[test]
fn every_threshold_code_of_the_shipped_files() {
    let mut evaluated = 0;
    let mut literal = 0;
    for f in ["QuickSystemOverview.xml", "IIS.xml", "SQLServer.xml"] {
        let Some(file) = shipped(f) else { return };
        let q = question_values(&file.questions, &[]).unwrap();
        for a in &file.analyses {
            for count in [1, 3, 9] {
                let v = vars(&q, a, count);
                for t in &a.thresholds {
                    match run(&t.code, &v) {
                        Ok(calls) => {
                            assert!(!calls.is_empty(), "{f}: {}: {}: no call", a.name, t.name);
                            for c in &calls {
                                assert!(
                                    a.data_sources
                                        .iter()
                                        .any(|d| d.collection_var == c.collection),
                                    "{f}: {}: {} is not a data source",
                                    a.name,
                                    c.collection
                                );
                                assert!(c.threshold.is_finite());
                            }
                            if count == 1 {
                                evaluated += 1;
                            }
                            if let (Some(lit), [c]) = (literal_threshold(&t.code), &calls[..]) {
                                assert_eq!(c.threshold, lit, "{f}: {}: {}", a.name, t.name);
                                literal += usize::from(count == 1);
                            }
                        }
                        Err(e) => {
                            let reason = NOT_EVALUATED
                                .iter()
                                .find(|(n, _)| *n == a.name)
                                .unwrap_or_else(|| panic!("{f}: {}: {}: {e}", a.name, t.name));
                            assert!(e.to_string().contains(reason.1), "{e}");
                            assert!(!a.enabled, "a disabled analysis");
                        }
                    }
                }
            }
        }
    }
    if evaluated > 0 {
        // 83 + 1 + 24 thresholds, of which the two of System Context Switching read $global:oPal.
        assert_eq!(evaluated, 106);
        assert!(literal >= 90, "{literal}");
    }
}

fn call_of(
    file: &RulesFile,
    analysis: &str,
    threshold: usize,
    v: &HashMap<String, ScriptValue>,
) -> StaticThreshold {
    let a = file.analyses.iter().find(|a| a.name == analysis).unwrap();
    let mut calls = run(&a.thresholds[threshold].code, v).unwrap();
    assert_eq!(calls.len(), 1);
    calls.remove(0)
}

#[test]
fn computed_thresholds_worked_by_hand() {
    let Some(file) = shipped("QuickSystemOverview.xml") else {
        return;
    };
    let with = |set: &[(&str, &str)], analysis: &str, threshold: usize, count: usize| {
        let set: Vec<(String, String)> = set
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let q = question_values(&file.questions, &set).unwrap();
        let a = file.analyses.iter().find(|a| a.name == analysis).unwrap();
        call_of(&file, analysis, threshold, &vars(&q, a, count))
    };
    // Available MBytes: 10 % and 5 % (at least 64 MB) of PhysicalMemory GB in MB.
    let w = with(&[], "Memory Available MBytes", 0, 1);
    assert_eq!(
        (w.operator, w.threshold),
        (Operator::Lt, 16.0 * 1024.0 * 0.10)
    );
    assert_eq!(
        with(&[], "Memory Available MBytes", 1, 1).threshold,
        16.0 * 1024.0 * 0.05
    );
    assert_eq!(
        with(&[("PhysicalMemory", "1")], "Memory Available MBytes", 0, 1).threshold,
        102.4
    );
    assert_eq!(
        with(&[("PhysicalMemory", "1")], "Memory Available MBytes", 1, 1).threshold,
        64.0
    );
    // Processor Queue Length: 2 and 10 per processor; \Processor(*) counts _Total, hence - 1;
    // with a single instance the number of processors is taken as 1.
    assert_eq!(
        with(&[], "System Processor Queue Length", 0, 3).threshold,
        4.0
    );
    assert_eq!(
        with(&[], "System Processor Queue Length", 1, 3).threshold,
        20.0
    );
    assert_eq!(
        with(&[], "System Processor Queue Length", 0, 1).threshold,
        2.0
    );
    assert_eq!(
        with(&[], "System Processor Queue Length", 1, 9).threshold,
        80.0
    );
    // Pool Non-Paged: 60 % of the pool maximum, 75 % of RAM (16 GB) on the default OS ...
    let gb = 1073741824.0;
    assert_eq!(
        with(&[], "Memory Pool Non-Paged Bytes", 0, 1).threshold,
        16.0 * gb * 0.75 * 0.60
    );
    // ... 128 MB on XP 32-bit with /3GB (UserVa above 2048) ...
    let xp3gb = [("OS", "windows xp 32-bit"), ("UserVa", "3072")];
    assert_eq!(
        with(&xp3gb, "Memory Pool Non-Paged Bytes", 0, 1).threshold,
        128.0 * 1048576.0 * 0.60
    );
    // ... 256 MB without it and more than 1 GB of RAM.
    let xp = [("OS", "Windows XP 32-bit"), ("UserVa", "2048")];
    assert_eq!(
        with(&xp, "Memory Pool Non-Paged Bytes", 0, 1).threshold,
        256.0 * 1048576.0 * 0.60
    );
    // Pool Paged, default OS: 128 GB cap... of the switch's default branch, 60 % and 80 %.
    assert_eq!(
        with(&[], "Memory Pool Paged Bytes", 0, 1).threshold,
        128.0 * gb * 0.60
    );
    assert_eq!(
        with(&[], "Memory Pool Paged Bytes", 1, 1).threshold,
        128.0 * gb * 0.80
    );
    // System Cache Resident Bytes: 10 % of RAM in bytes.
    assert_eq!(
        with(&[], "Memory System Cache Resident Bytes", 0, 1).threshold,
        16.0 * gb * 0.10
    );
    // Trend thresholds keep their flag.
    let t = with(&[], "Process Private Bytes", 0, 1);
    assert!(t.trend_only);
    assert_eq!(t.threshold, 100.0 * 1048576.0);
}

#[test]
fn questions_and_set() {
    let Some(file) = shipped("QuickSystemOverview.xml") else {
        return;
    };
    let q = question_values(&file.questions, &[]).unwrap();
    assert_eq!(
        q,
        vec![
            ("OS".into(), ScriptValue::Str("Windows Server".into())),
            ("PhysicalMemory".into(), ScriptValue::Number(16.0)),
            ("UserVa".into(), ScriptValue::Number(2048.0)),
        ]
    );
    let set = |n: &str, v: &str| question_values(&file.questions, &[(n.into(), v.into())]);
    assert_eq!(
        set("physicalmemory", "64").unwrap()[1].1,
        ScriptValue::Number(64.0)
    );
    // The messages name the question value, not a command-line flag.
    let e = set("Memory", "4").unwrap_err();
    assert!(
        matches!(&e, AnalyzeError::Question { setting, .. } if setting == "Memory"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "question value Memory: the rules ask no such question (they ask: OS, PhysicalMemory, \
         UserVa)"
    );
    let e = set("PhysicalMemory", "lots").unwrap_err();
    assert_eq!(
        e.to_string(),
        "question value PhysicalMemory=lots: a number is expected (default 16)"
    );
    let e = set("OS", "Windows 95").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("question value OS=Windows 95: not one of the options: Windows Server,"),
        "{e}"
    );
    let e = set("UserVa", "yes").unwrap_err();
    assert!(
        matches!(&e, AnalyzeError::Question { setting, problem }
            if setting == "UserVa=yes" && problem == "a number is expected (default 2048)"),
        "{e:?}"
    );
    assert_eq!(
        set("OS", "windows 7 64-BIT").unwrap()[0].1,
        ScriptValue::Str("Windows 7 64-bit".into())
    );
}

#[test]
fn builtin_is_quick_system_overview() {
    let r = Rules::builtin();
    assert_eq!(r.name, "Quick System Overview");
    assert_eq!(r.analyses.len(), 73);
    assert_eq!(r.enabled().count(), 72);
    assert_eq!(r.questions.len(), 3);
    let a = &r.analyses[0];
    assert_eq!(a.name, "Memory Available MBytes");
    assert_eq!(a.category, "Memory");
    assert_eq!(
        a.data_sources[0].expression_path,
        r"\Memory\Available MBytes"
    );
    assert_eq!(a.thresholds.len(), 2);
    assert!(a
        .description
        .contains("Available MBytes is the amount of physical RAM"));
    // EXCLUDE INSTANCE is read.
    let ni = r
        .analyses
        .iter()
        .find(|a| a.name == "LogicalDisk % Free Space")
        .unwrap();
    assert_eq!(ni.data_sources[0].excludes, ["_Total", "HarddiskVolume1"]);
}

const SMALL: &str = r#"<?xml version="1.0"?>
<PAL NAME="Child">
  <QUESTION QUESTIONVARNAME="Limit" DATATYPE="string" DEFAULTVALUE="50">The limit</QUESTION>
  INHERIT
  <ANALYSIS NAME="Child analysis" ENABLED="True" CATEGORY="Cat" ID="{c}">
    <DATASOURCE TYPE="CounterLog" NAME="\A\B" EXPRESSIONPATH="\A\B" COLLECTIONVARNAME="X" />
    <THRESHOLD NAME="High" CONDITION="Warning" PRIORITY="50"><CODE><![CDATA[StaticThreshold -CollectionOfCounterInstances $X -Operator 'gt' -Threshold $Limit]]></CODE></THRESHOLD>
  </ANALYSIS>
</PAL>"#;

fn write(dir: &std::path::Path, name: &str, inherit: &str, analysis: &str, id: &str) {
    let text = SMALL
        .replace("INHERIT", inherit)
        .replace("Child analysis", analysis)
        .replace("{c}", id);
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn inheritance_relative_overrides_and_cycles() {
    let dir = fixtures::tempdir("inheritance");
    std::fs::create_dir_all(dir.join("base")).unwrap();
    write(
        &dir,
        "child.xml",
        r#"<INHERITANCE FILEPATH="base\parent.xml"/>"#,
        "Child analysis",
        "{c}",
    );
    write(
        &dir.join("base"),
        "parent.xml",
        r#"<INHERITANCE FILEPATH=""/>"#,
        "Parent analysis",
        "{p}",
    );
    let r = Rules::load(&dir.join("child.xml")).unwrap();
    let names: Vec<&str> = r.analyses.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["Child analysis", "Parent analysis"]);
    assert_eq!(r.files.len(), 2);
    assert!(r.analyses[1].file.ends_with("parent.xml"));
    // Same ID: the inheriting file's analysis wins.
    write(
        &dir.join("base"),
        "parent.xml",
        "",
        "Parent analysis",
        "{c}",
    );
    let r = Rules::load(&dir.join("child.xml")).unwrap();
    assert_eq!(r.analyses.len(), 1);
    assert_eq!(r.analyses[0].name, "Child analysis");
    // A cycle.
    write(
        &dir.join("base"),
        "parent.xml",
        r#"<INHERITANCE FILEPATH="../child.xml"/>"#,
        "P",
        "{p}",
    );
    let e = Rules::load(&dir.join("child.xml")).unwrap_err();
    assert!(e.to_string().contains("inheritance cycle"), "{e}");
    // A missing inherited file names the inheriting file.
    write(
        &dir,
        "lonely.xml",
        r#"<INHERITANCE FILEPATH="nowhere.xml"/>"#,
        "L",
        "{l}",
    );
    let e = Rules::load(&dir.join("lonely.xml")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: the inherited file {} cannot be opened",
            dir.join("lonely.xml").display(),
            dir.join("nowhere.xml").display()
        )
    );
    // The I/O error is the cause, not part of the message.
    let io = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .unwrap_or_else(|| panic!("{e:?} has no io::Error source"));
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_rules_file_keeps_its_io_error() {
    let missing = std::env::temp_dir().join("perfcounters-no-such-rules.xml");
    let e = Rules::load(&missing).unwrap_err();
    assert_eq!(e.to_string(), format!("{}: cannot open", missing.display()));
    let io = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .unwrap_or_else(|| panic!("{e:?} has no io::Error source"));
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(
        perfcounters::ErrorChain(&e).to_string(),
        format!("{}: cannot open: {io}", missing.display())
    );
}

#[test]
fn hostile_files_are_errors_with_places() {
    let e = RulesFile::parse("bad.xml", "<PAL>\n  <ANALYSIS NAME=\"x\">\n</PAL>").unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(3));
    assert!(e.to_string().starts_with("bad.xml:3:"), "{e}");
    let e = RulesFile::parse("t.xml", &SMALL[..200]).unwrap_err();
    assert!(e.to_string().contains("malformed XML"), "{e}");
    let e = RulesFile::parse("r.xml", "<html/>").unwrap_err();
    assert_eq!(
        e.to_string(),
        "r.xml:1:1: the root element is <html>, not <PAL>: not a PAL threshold file"
    );
    let e = RulesFile::parse("u.xml", "<PAL>\n<SCRIPT/></PAL>").unwrap_err();
    assert_eq!(
        e.to_string(),
        "u.xml:2:1: unknown element <SCRIPT> in <PAL>"
    );
    let dtd = "<?xml version=\"1.0\"?><!DOCTYPE PAL [<!ENTITY a \"aaaa\">]><PAL>&a;</PAL>";
    assert!(RulesFile::parse("d.xml", dtd).is_err());
    // Inside an analysis: that analysis carries the problem.
    let f = RulesFile::parse(
        "a.xml",
        "<PAL><ANALYSIS NAME=\"x\" ENABLED=\"True\">\n<WHAT/></ANALYSIS></PAL>",
    )
    .unwrap();
    assert_eq!(
        f.analyses[0].problem.as_deref(),
        Some("a.xml:2:1: unknown element <WHAT> in <ANALYSIS>")
    );
}
