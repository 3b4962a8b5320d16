//! Every built-in threshold file (PAL's repository, 72 files) over a log made to hold every
//! counter the file and the files it inherits name: no file refused, the share of enabled analyses
//! evaluated at least [`COVERAGE_FLOOR`], and what is left listed per file with its reasons. Beside
//! it: the built-in files by name and in the catalogue, inheritance by names in another case and
//! through the built-in set, cycles, the `<COUNTER>` form, and regular-expression data sources
//! (named SQL Server instances, an expression beyond the size bound).

#[path = "../benches/support/pal_log.rs"]
mod pal_log;

use crate::support::fixtures;
use crate::support::shared_data;
use pal_log::columns_of;

use std::collections::BTreeMap;
use std::time::Duration;

use perfcounters::analyze::{
    analyze, builtin_catalogue, builtin_rules, AnalyzeOptions, DataSourceKind, Interval, RegexPath,
    Report, Rules, RulesFile, BUILTIN_RULES,
};
use perfcounters::log::{CsvFlavor, CsvReadOptions, PdhCsvReader, PdhCsvWriter};
use perfcounters::snapshot::SystemTime;

/// The least share of the enabled analyses of all built-in files (each with what it inherits)
/// that the coverage test must see evaluated. Set at what the evaluation reaches; raise it as the
/// threshold-code interpreter learns more (the goal is 0.99).
const COVERAGE_FLOOR: f64 = 0.995;

/// A PDH-CSV log written by the library's writer: `rows` records one second apart from
/// 2024-01-01 00:00:00; the value of column `c` in row `r` is `value(c, r)`.
fn csv_log(columns: &[String], rows: usize, value: impl Fn(usize, usize) -> f64) -> Vec<u8> {
    let mut w = PdhCsvWriter::new(Vec::new(), CsvFlavor::Csv);
    w.write_header(columns).unwrap();
    for r in 0..rows {
        let values: Vec<Option<f64>> = (0..columns.len()).map(|c| Some(value(c, r))).collect();
        let time = SystemTime {
            year: 2024,
            month: 1,
            day: 1,
            second: r as u16,
            ..Default::default()
        };
        w.write_row(&time, &values).unwrap();
    }
    w.flush().unwrap();
    w.into_inner()
}

/// `rules` analysed over `log` (PDH-CSV bytes) in slices of `interval` seconds.
fn run(rules: &Rules, log: Vec<u8>, interval: u64) -> Report {
    let mut reader = PdhCsvReader::new(
        std::io::Cursor::new(log),
        "made.csv",
        CsvReadOptions::default(),
    )
    .unwrap();
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(interval),
        ..Default::default()
    };
    analyze(&mut reader, rules, &opts).unwrap()
}

/// The reason an analysis is not evaluated, reduced to its kind (file, line, names and code
/// dropped), for the summaries.
fn reason_kind(reason: &str) -> String {
    if reason.contains("reads the generated data source") {
        return "a generated data source (PowerShell code)".into();
    }
    // "threshold \"…\": built-in F.xml:156: line 2: what (`code`)" → "what".
    let r = reason.rsplit_once(".xml:").map_or(reason, |(_, rest)| rest);
    let r = match r.split_once(": ") {
        Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => rest,
        _ => r,
    };
    let r = match r.strip_prefix("line ").and_then(|x| x.split_once(": ")) {
        Some((_, rest)) => rest,
        None => r,
    };
    r.split(" (`").next().unwrap_or(r).to_owned()
}

#[test]
fn every_builtin_file_over_a_log_of_all_its_counters() {
    let started = std::time::Instant::now();
    let mut enabled_total = 0usize;
    let mut evaluated_total = 0usize;
    let mut table = Vec::new();
    let mut left: BTreeMap<String, usize> = BTreeMap::new();
    for b in BUILTIN_RULES {
        let rules =
            Rules::builtin_named(b.file).unwrap_or_else(|e| panic!("{}: refused: {e}", b.file));
        let columns = columns_of(&rules);
        let log = csv_log(&columns, 6, |c, r| ((c * 7 + r * 13) % 50) as f64 + 1.0);
        let report = run(&rules, log, 2);
        let enabled = rules.enabled().count();
        assert_eq!(report.analyses.len(), enabled, "{}", b.file);
        let not: Vec<_> = report
            .analyses
            .into_iter()
            .filter(|a| !a.evaluated())
            .collect();
        for a in &not {
            let reason = a.reason.as_deref().unwrap_or_default();
            assert!(
                !reason.starts_with("the log has none of its counters"),
                "{}: {}: {reason}",
                b.file,
                a.name
            );
            *left.entry(reason_kind(reason)).or_default() += 1;
        }
        enabled_total += enabled;
        evaluated_total += enabled - not.len();
        table.push((b.file, enabled, enabled - not.len(), not));
    }
    println!("| File | Enabled analyses | Evaluated | Share | Not evaluated |");
    println!("|---|---|---|---|---|");
    for (file, enabled, evaluated, not) in &table {
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for a in not {
            *kinds
                .entry(reason_kind(a.reason.as_deref().unwrap_or_default()))
                .or_default() += 1;
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n}: {k}")).collect();
        println!(
            "| {file} | {enabled} | {evaluated} | {:.1} % | {} |",
            100.0 * *evaluated as f64 / (*enabled).max(1) as f64,
            kinds.join("; ").replace('|', "\\|")
        );
    }
    println!(
        "| all {} files | {enabled_total} | {evaluated_total} | {:.1} % | |",
        table.len(),
        100.0 * evaluated_total as f64 / enabled_total as f64
    );
    println!("\nNot evaluated, by reason:");
    let mut by_count: Vec<_> = left.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (reason, n) in by_count {
        println!("{n:6}  {reason}");
    }
    println!("\nNot evaluated, per file:");
    for (file, _, _, not) in &table {
        for a in not {
            println!(
                "{file}: {}: {}",
                a.name,
                a.reason.as_deref().unwrap_or_default()
            );
        }
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    assert_eq!(table.len(), 72);
    let share = evaluated_total as f64 / enabled_total as f64;
    assert!(
        share >= COVERAGE_FLOOR,
        "{evaluated_total} of {enabled_total} enabled analyses evaluated ({:.2} %), below the floor {COVERAGE_FLOOR}",
        share * 100.0
    );
}

/// The built-in files are PAL's threshold files, each as PAL ships it: every `<PAL>` file of the
/// shared copy of PAL's folder is built in with the same text, and nothing else is.
#[test]
fn builtin_files_are_pals_threshold_files() {
    assert_eq!(BUILTIN_RULES.len(), 72);
    let Some(dir) = shared_data::dir("PAL's threshold files") else {
        return;
    };
    let mut shipped = 0;
    for entry in std::fs::read_dir(dir.join("pal")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if !name.ends_with(".xml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let threshold_file = RulesFile::parse(&name, &text).is_ok();
        match builtin_rules(&name) {
            Some(b) => {
                assert!(
                    threshold_file,
                    "{name} is built in but is not a threshold file"
                );
                assert_eq!(b.file, name);
                assert!(b.text == text, "{name}: the built-in text differs");
                shipped += 1;
            }
            None => assert!(!threshold_file, "{name} is a threshold file not built in"),
        }
    }
    assert_eq!(shipped, 72);
}

#[test]
fn builtin_files_by_name_and_in_the_catalogue() {
    let a = Rules::open("sqlserver2014").unwrap();
    let b = Rules::open("SQLServer2014.XML").unwrap();
    let c = Rules::builtin_named("SQLServer2014").unwrap();
    assert_eq!(
        a.files,
        [
            "built-in SQLServer2014.xml",
            "built-in SystemOverview.xml",
            "built-in QuickSystemOverview.xml"
        ]
    );
    assert_eq!(a.files, b.files);
    assert_eq!(a.analyses, c.analyses);
    assert_eq!(a.name, "Microsoft SQL Server 2014");
    assert_eq!(a.analyses.len(), 219);
    // An unknown name: the file cannot be opened, and the closest built-in names are offered.
    let e = Rules::open("SQLServer2015").unwrap_err();
    assert_eq!(
        e.to_string(),
        "SQLServer2015: cannot open: no such file, nor a built-in threshold file; did you mean \
         \"SQLServer2012\", \"SQLServer2014\" or \"SQLServer\"?"
    );
    let e = Rules::builtin_named("Exchange2019").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "Exchange2019: not a built-in threshold file (`perfcounters analyze --list-rules` lists them); did you mean \"Exchange2010\""
        ),
        "{e}"
    );
    // The catalogue: every file, its title, analyses and inheritance.
    let cat = builtin_catalogue().unwrap();
    assert_eq!(cat.len(), 72);
    let sql = cat.iter().find(|e| e.file == "SQLServer2014.xml").unwrap();
    assert_eq!(sql.title, "Microsoft SQL Server 2014");
    assert_eq!(
        (sql.analyses, sql.with_inherited, sql.enabled),
        (138, 219, 217)
    );
    assert_eq!(sql.inherits, ["SystemOverview.xml"]);
    let sp = cat.iter().find(|e| e.file == "SP2013.xml").unwrap();
    assert_eq!(sp.inherits, ["quicksystemoverview.xml"]);
    assert_eq!((sp.analyses, sp.with_inherited), (21, 94));
    let q = cat
        .iter()
        .find(|e| e.file == "QuickSystemOverview.xml")
        .unwrap();
    assert_eq!((q.analyses, q.with_inherited, q.enabled), (73, 73, 72));
    assert!(q.inherits.is_empty());
}

const FILE: &str = r#"<PAL NAME="TITLE">
  INHERIT
  <ANALYSIS NAME="TITLE analysis" ENABLED="True" CATEGORY="Cat" ID="{TITLE}">
    <DATASOURCE TYPE="CounterLog" NAME="\A\B" EXPRESSIONPATH="\A\B" COLLECTIONVARNAME="X" />
    <THRESHOLD NAME="High" CONDITION="Warning" PRIORITY="50"><CODE><![CDATA[StaticThreshold -CollectionOfCounterInstances $X -Operator 'gt' -Threshold 1]]></CODE></THRESHOLD>
  </ANALYSIS>
</PAL>"#;

fn write(dir: &std::path::Path, file: &str, name: &str, inherits: &[&str]) {
    let inherit: String = inherits
        .iter()
        .map(|i| format!(r#"<INHERITANCE FILEPATH="{i}"/>"#))
        .collect();
    std::fs::write(
        dir.join(file),
        FILE.replace("INHERIT", &inherit).replace("TITLE", name),
    )
    .unwrap();
}

#[test]
fn inheritance_ignores_case_then_falls_back_on_the_builtin_files() {
    let dir = fixtures::Dir(fixtures::tempdir("inherit-case"));
    std::fs::create_dir_all(dir.0.join("sub")).unwrap();
    // `PARENT.XML` names parent.xml; `Sub\Other.xml` names sub/other.xml; quicksystemoverview.xml,
    // not in the folder, is the built-in one.
    write(
        &dir.0,
        "child.xml",
        "child",
        &[r"PARENT.XML", "quicksystemoverview.xml"],
    );
    write(&dir.0, "parent.xml", "parent", &[r"sub\OTHER.xml"]);
    write(&dir.0.join("sub"), "other.xml", "other", &[]);
    let r = Rules::load(&dir.0.join("child.xml")).unwrap();
    let shown = |p: std::path::PathBuf| p.display().to_string();
    // On a file system that ignores case the names as written open as they are.
    #[cfg(windows)]
    assert_eq!(
        r.files,
        [
            shown(dir.0.join("child.xml")),
            shown(dir.0.join("PARENT.XML")),
            shown(dir.0.join("sub").join("OTHER.xml")),
            "built-in QuickSystemOverview.xml".to_owned(),
        ]
    );
    #[cfg(not(windows))]
    assert_eq!(
        r.files,
        [
            shown(dir.0.join("child.xml")),
            shown(std::fs::canonicalize(&dir.0).unwrap().join("parent.xml")),
            shown(
                std::fs::canonicalize(&dir.0)
                    .unwrap()
                    .join("sub")
                    .join("other.xml")
            ),
            "built-in QuickSystemOverview.xml".to_owned(),
        ]
    );
    let names: Vec<&str> = r.analyses.iter().take(3).map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        ["child analysis", "parent analysis", "other analysis"]
    );
    assert_eq!(r.analyses.len(), 3 + 73);
    // A file of the folder wins over the built-in file of the same name.
    write(&dir.0, "QuickSystemOverview.xml", "local", &[]);
    let r = Rules::load(&dir.0.join("child.xml")).unwrap();
    assert_eq!(r.analyses.len(), 4);
    // (As written where the file system ignores case: `quicksystemoverview.xml`.)
    assert!(
        r.files[3]
            .to_ascii_lowercase()
            .ends_with("quicksystemoverview.xml")
            && !r.files[3].starts_with("built-in")
    );
    // A cycle through names in another case is named as its chain.
    write(&dir.0, "a.xml", "a", &["B.xml"]);
    write(&dir.0, "b.xml", "b", &["A.XML"]);
    let e = Rules::load(&dir.0.join("a.xml")).unwrap_err();
    #[cfg(not(windows))]
    let canon = std::fs::canonicalize(&dir.0).unwrap();
    // Where the file system ignores case the names open as written (`B.xml`, `A.XML`): the chain
    // is then named in those words.
    #[cfg(windows)]
    assert!(e.to_string().contains(": inheritance cycle: "), "{e}");
    #[cfg(not(windows))]
    assert_eq!(
        e.to_string(),
        format!(
            "{b}: inheritance cycle: {a0} inherits {b} inherits {a}",
            a0 = dir.0.join("a.xml").display(),
            a = canon.join("a.xml").display(),
            b = canon.join("b.xml").display(),
        )
    );
    // The built-in SP2013.xml and DynamicsAX2012AOS.xml name their parents in another case.
    let sp = Rules::builtin_named("SP2013").unwrap();
    assert_eq!(
        sp.files,
        ["built-in SP2013.xml", "built-in QuickSystemOverview.xml"]
    );
    let ax = Rules::builtin_named("dynamicsax2012aos").unwrap();
    assert_eq!(
        ax.files,
        [
            "built-in DynamicsAX2012AOS.xml",
            "built-in DynamicsAX.xml",
            "built-in SystemOverview.xml",
            "built-in QuickSystemOverview.xml"
        ]
    );
}

/// PAL's first form of data source, `<COUNTER NAME=…>` inside `<ANALYSIS>` (Exchange2007-HUB.xml):
/// a counter-log data source named as PAL 2 names the ones it makes from a path.
#[test]
fn the_counter_form_is_a_data_source() {
    let r = Rules::builtin_named("Exchange2007-HUB").unwrap();
    let a = r
        .analyses
        .iter()
        .find(|a| a.name == "Network Utilization Analysis")
        .unwrap();
    let ds: Vec<(&str, &str)> = a
        .data_sources
        .iter()
        .map(|d| (d.expression_path.as_str(), d.collection_var.as_str()))
        .collect();
    assert_eq!(
        ds,
        [
            (
                r"\Network Interface(*)\Bytes Total/sec",
                "CollectionOfNetworkInterfaceBytesTotalsecALL"
            ),
            (
                r"\Network Interface(*)\Current Bandwidth",
                "CollectionOfNetworkInterfaceCurrentBandwidthALL"
            ),
        ]
    );
    assert!(a
        .data_sources
        .iter()
        .all(|d| d.kind == DataSourceKind::CounterLog));
    // An analysis of that form without thresholds is evaluated: its counters get statistics.
    let columns = [
        r"\\EX1\MSExchangeTransport Database(_Total)\Stream writes/sec".to_owned(),
        r"\\EX1\MSExchangeTransport Database(mail)\Stream writes/sec".to_owned(),
    ];
    let log = csv_log(&columns, 4, |c, r| (c * 10 + r) as f64);
    let report = run(&r, log, 2);
    let it = report
        .analyses
        .iter()
        .find(|a| a.name == "MSExchangeTransport Database Stream writes/sec")
        .unwrap();
    assert!(it.evaluated(), "{:?}", it.reason);
    assert_eq!(it.counters.len(), 2);
    let stats: Vec<(String, f64, f64)> = it
        .counters
        .iter()
        .map(|&c| {
            let s = &report.counters[c];
            (s.path.to_string(), s.min.unwrap(), s.max.unwrap())
        })
        .collect();
    assert_eq!(
        stats,
        [
            (
                r"\\EX1\MSExchangeTransport Database(_Total)\Stream writes/sec".to_owned(),
                0.0,
                3.0
            ),
            (
                r"\\EX1\MSExchangeTransport Database(mail)\Stream writes/sec".to_owned(),
                10.0,
                13.0
            ),
        ]
    );
}

/// SQLServer2014.xml's regular-expression data sources match named instances
/// (`MSSQL$PROD:Memory Manager`) as well as the default one (`SQLServer:Memory Manager`), and
/// nothing that merely contains such a name.
#[test]
fn named_sql_instances_match_sqlserver2014() {
    let rules = Rules::builtin_named("SQLServer2014").unwrap();
    let columns = [
        r"\\SQL1\MSSQL$PROD:Memory Manager\Memory Grants Pending",
        r"\\SQL1\SQLServer:Memory Manager\Memory Grants Pending",
        r"\\SQL1\XMSSQL$PROD:Memory Manager\Memory Grants Pending",
        r"\\SQL1\MSSQL$PROD:Memory Manager Extra\Memory Grants Pending",
        r"\\SQL1\MSSQL$PROD:Buffer Manager\Page life expectancy",
        r"\\SQL1\MSSQL$PROD:Locks(_Total)\Lock Waits/sec",
        r"\\SQL1\MSSQL$PROD:Locks(Object)\Lock Waits/sec",
    ]
    .map(str::to_owned);
    // Memory Grants Pending: 0, 0, 3, 0 on the named instance; 0 throughout elsewhere.
    let log = csv_log(&columns, 4, |c, r| match (c, r) {
        (0, 2) => 3.0,
        (0..=3, _) => 0.0,
        _ => 500.0,
    });
    let report = run(&rules, log, 2);
    let find = |name: &str| {
        report
            .analyses
            .iter()
            .position(|a| a.name == name)
            .unwrap_or_else(|| panic!("no analysis {name}"))
    };
    let mgp = find("SQLServer:Memory Manager Memory Grants Pending");
    let a = &report.analyses[mgp];
    assert!(a.evaluated(), "{:?}", a.reason);
    let matched: Vec<String> = a
        .counters
        .iter()
        .map(|&c| report.counters[c].path.to_string())
        .collect();
    assert_eq!(
        matched,
        [
            r"\\SQL1\MSSQL$PROD:Memory Manager\Memory Grants Pending",
            r"\\SQL1\SQLServer:Memory Manager\Memory Grants Pending"
        ]
    );
    // One alert: "greater than 0" in the second slice (records 2 and 3) of the named instance.
    let alerts: Vec<(String, f64, f64, f64)> = report
        .alerts
        .iter()
        .filter(|x| x.analysis == mgp)
        .map(|x| {
            (
                report.counters[x.counter].path.to_string(),
                x.min,
                x.avg,
                x.max,
            )
        })
        .collect();
    assert_eq!(
        alerts,
        [(
            r"\\SQL1\MSSQL$PROD:Memory Manager\Memory Grants Pending".to_owned(),
            0.0,
            1.5,
            3.0
        )]
    );
    // Page life expectancy: the named instance's column is found.
    let ple = &report.analyses[find("SQLServer:Buffer Manager Page life expectancy")];
    let reason = ple.reason.as_deref().unwrap_or_default();
    assert!(!reason.contains("none of its counters"), "{reason}");
}

/// An expression beyond the size bound is refused with the `regex` crate's reason, quickly; the
/// analysis is listed as not evaluated.
#[test]
fn a_regex_beyond_the_size_bound_is_refused() {
    let file = r#"<PAL NAME="hostile">
  <ANALYSIS NAME="Blow-up" ENABLED="True" CATEGORY="C" ID="{h}">
    <DATASOURCE TYPE="CounterLog" NAME="\A\B" EXPRESSIONPATH="\A\B" COLLECTIONVARNAME="X"
      ISCOUNTEROBJECTREGULAREXPRESSION="True" REGULAREXPRESSIONCOUNTERPATH="\((a{1000}){1000}){1000}\B" />
    <THRESHOLD NAME="High" CONDITION="Warning" PRIORITY="50"><CODE><![CDATA[StaticThreshold -CollectionOfCounterInstances $X -Operator 'gt' -Threshold 1]]></CODE></THRESHOLD>
  </ANALYSIS>
  <ANALYSIS NAME="Fine" ENABLED="True" CATEGORY="C" ID="{f}">
    <DATASOURCE TYPE="CounterLog" NAME="\A\B" EXPRESSIONPATH="\A\B" COLLECTIONVARNAME="X"
      ISCOUNTEROBJECTREGULAREXPRESSION="True" REGULAREXPRESSIONCOUNTERPATH="\(A|Z)x?\B" />
    <THRESHOLD NAME="High" CONDITION="Warning" PRIORITY="50"><CODE><![CDATA[StaticThreshold -CollectionOfCounterInstances $X -Operator 'gt' -Threshold 1]]></CODE></THRESHOLD>
  </ANALYSIS>
</PAL>"#;
    let f = RulesFile::parse("hostile.xml", file).unwrap();
    let re = f.analyses[0].data_sources[0].regex.as_ref().unwrap();
    assert_eq!(re.object, "((a{1000}){1000}){1000}");
    assert_eq!((re.instance.as_deref(), re.counter.as_str()), (None, "B"));
    let rules = Rules {
        name: f.name,
        files: vec!["hostile.xml".into()],
        questions: f.questions,
        analyses: f.analyses,
    };
    let started = std::time::Instant::now();
    let log = csv_log(&[r"\\M\Z\B".to_owned()], 3, |_, r| r as f64);
    let report = run(&rules, log, 1);
    assert!(started.elapsed() < Duration::from_secs(5));
    let reason = report.analyses[0].reason.as_deref().unwrap_or_default();
    assert!(
        reason.starts_with(
            r#"hostile.xml: the data source \A\B: the object expression "((a{1000}){1000}){1000}" is refused: "#
        ) && reason.contains("size limit"),
        "{reason}"
    );
    // The other analysis matches `Z` by its expression (`A` by its path).
    assert!(
        report.analyses[1].evaluated(),
        "{:?}",
        report.analyses[1].reason
    );
    assert_eq!(report.analyses[1].counters.len(), 1);
    assert_eq!(report.alerts.len(), 1);
}

/// `REGULAREXPRESSIONCOUNTERPATH` split as PAL's `GetCounterObject`, `GetCounterInstance` and
/// `GetCounterName` split it.
#[test]
fn regex_paths_split_as_pal_splits_them() {
    let split = |t: &str| {
        let r = RegexPath::split(t, true, false, false);
        (r.object, r.instance, r.counter)
    };
    assert_eq!(
        split(r"\(MSSQL|SQLServer).*:Locks(*)\Average Wait Time (ms)"),
        (
            "(MSSQL|SQLServer).*:Locks".to_owned(),
            Some("*".to_owned()),
            "Average Wait Time (ms)".to_owned()
        )
    );
    assert_eq!(
        split(r"\(MSSQL|SQLServer).*:Buffer Manager\Page life expectancy"),
        (
            "(MSSQL|SQLServer).*:Buffer Manager".to_owned(),
            None,
            "Page life expectancy".to_owned()
        )
    );
    assert_eq!(
        split(r"\\SQL1\(MSSQL|SQLServer).*:Locks(_Total)\Lock Waits/sec"),
        (
            "(MSSQL|SQLServer).*:Locks".to_owned(),
            Some("_Total".to_owned()),
            "Lock Waits/sec".to_owned()
        )
    );
    // Nested parentheses in the instance: balanced from the end.
    assert_eq!(
        split(r"\Paging File(\??\C:\pagefile.sys)\% Usage").2,
        "% Usage".to_owned()
    );
    assert_eq!(
        split(r"\Obj(a(b)c)\C"),
        ("Obj".to_owned(), Some("a(b)c".to_owned()), "C".to_owned())
    );
}
