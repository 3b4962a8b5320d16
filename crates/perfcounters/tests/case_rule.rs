//! One case rule for names (`path::fold_case`) wherever the library compares counter paths: merging
//! logs, appending to a CSV log, appending to a SQL log, analysis rules (data sources, EXCLUDE,
//! generated series, machines) and Hive datasets. The names are chosen where the rule and
//! `str::to_lowercase` disagree: `ΣΣ` is `σσ` under the rule (per character) but `σς` under
//! `to_lowercase` (a word-final sigma); `İ` stays one character under the rule, while
//! `to_lowercase` makes it `i` + U+0307. `ẞ` and `ß` are one letter under both, and `SS` is not.

use crate::support::fixtures::Dir;
use crate::support::vec_log;

use std::io::Cursor;

use perfcounters::analyze::RulesFile;
use perfcounters::analyze::{analyze, AnalyzeOptions, Interval, Rules};
use perfcounters::log::{
    copy, create, Cell, CreateOptions, CsvReadOptions, LogCounter, LogHeader, LogKind, LogReader,
    LogTime, Merge, PdhCsvReader, Record,
};
use perfcounters::path::{eq_ignore_case, fold_case, CounterPath};
use vec_log::VecLog;

/// `ΣΣ` and its two lower-case forms.
const SIGMA: &str = "\u{3a3}\u{3a3}";
const SIGMA_FOLDED: &str = "\u{3c3}\u{3c3}";
const SIGMA_FINAL: &str = "\u{3c3}\u{3c2}";
/// `İ` and its `str::to_lowercase` (two characters).
const I_DOT: &str = "\u{130}";
const I_DOT_LOWER: &str = "i\u{307}";
/// Capital sharp s and sharp s.
const SHARP_UPPER: &str = "\u{1e9e}";
const SHARP: &str = "\u{df}";

#[test]
fn the_names_are_where_the_rules_disagree() {
    assert_eq!(SIGMA.to_lowercase(), SIGMA_FINAL);
    assert_eq!(fold_case(SIGMA), SIGMA_FOLDED);
    assert!(eq_ignore_case(SIGMA, SIGMA_FOLDED));
    assert!(!eq_ignore_case(SIGMA, SIGMA_FINAL));
    assert_eq!(I_DOT.to_lowercase(), I_DOT_LOWER);
    assert!(!eq_ignore_case(I_DOT, I_DOT_LOWER));
    assert!(eq_ignore_case(SHARP_UPPER, SHARP));
    assert!(!eq_ignore_case("SS", SHARP));
    let p = |s: &str| CounterPath::parse(s).unwrap();
    assert_eq!(
        p(&format!(r"\\H\{SIGMA}({I_DOT})\x")).key(),
        format!(r"\\h\{SIGMA_FOLDED}({I_DOT})\x")
    );
    assert_eq!(
        p(&format!(r"\\H\{SIGMA}\X")).key(),
        p(&format!(r"\\h\{SIGMA_FOLDED}\x")).key()
    );
    assert_ne!(
        p(&format!(r"\\H\{SIGMA}\X")).key(),
        p(&format!(r"\\h\{SIGMA_FINAL}\x")).key()
    );
}

/// A PDH-CSV log of `columns` (paths) with one row per `(seconds after midnight, values)`; `None`
/// is a blank cell.
fn csv(columns: &[String], rows: &[(u32, &[Option<f64>])]) -> String {
    let mut s = String::from("\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\"");
    for c in columns {
        s.push_str(&format!(",\"{c}\""));
    }
    s.push_str("\r\n");
    for (t, values) in rows {
        s.push_str(&format!("\"02/01/2014 00:00:{t:02}.000\""));
        for v in *values {
            match v {
                Some(v) => s.push_str(&format!(",\"{v}\"")),
                None => s.push_str(",\" \""),
            }
        }
        s.push_str("\r\n");
    }
    s
}

fn reader(name: &str, text: &str) -> Box<dyn LogReader> {
    Box::new(
        PdhCsvReader::new(
            Cursor::new(text.as_bytes().to_vec()),
            name,
            CsvReadOptions::default(),
        )
        .unwrap(),
    )
}

/// The column names and the values of every record.
type Read = (Vec<String>, Vec<Vec<Option<f64>>>);

fn read_all(r: &mut dyn LogReader) -> Read {
    let names = r.header().counters.iter().map(|c| c.name.clone()).collect();
    let mut rows = Vec::new();
    let mut record = Record::default();
    while r.read_record(&mut record).unwrap() {
        rows.push(record.cells.iter().map(Cell::value).collect());
    }
    (names, rows)
}

fn paths(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| format!(r"\\H\{n}")).collect()
}

/// Log A: `ΣΣ`, `İ`, `ẞ` at 0 s and 2 s.
fn log_a() -> String {
    csv(
        &paths(&[
            &format!(r"{SIGMA}\x"),
            &format!(r"{I_DOT}\y"),
            &format!(r"{SHARP_UPPER}\z"),
        ]),
        &[
            (0, &[Some(1.0), Some(2.0), Some(3.0)]),
            (2, &[Some(4.0), Some(5.0), Some(6.0)]),
        ],
    )
}

/// Log B: `σσ` (the same object as `ΣΣ`), `σς` (another), `i̇` (not `İ`), `ß` (the same as `ẞ`)
/// and `SS` (another), at 1 s.
fn log_b() -> String {
    csv(
        &paths(&[
            &format!(r"{SIGMA_FOLDED}\x"),
            &format!(r"{SIGMA_FINAL}\x"),
            &format!(r"{I_DOT_LOWER}\y"),
            &format!(r"{SHARP}\z"),
            r"SS\z",
        ]),
        &[(
            1,
            &[Some(10.0), Some(20.0), Some(30.0), Some(40.0), Some(50.0)],
        )],
    )
}

/// The columns and rows of A and B together: B's `σσ` and `ß` are A's columns, its `σς`, `i̇` and
/// `SS` are new ones.
fn a_and_b() -> Read {
    let names = paths(&[
        &format!(r"{SIGMA}\x"),
        &format!(r"{I_DOT}\y"),
        &format!(r"{SHARP_UPPER}\z"),
        &format!(r"{SIGMA_FINAL}\x"),
        &format!(r"{I_DOT_LOWER}\y"),
        r"SS\z",
    ]);
    let rows = vec![
        vec![Some(1.0), Some(2.0), Some(3.0), None, None, None],
        vec![
            Some(10.0),
            None,
            Some(40.0),
            Some(20.0),
            Some(30.0),
            Some(50.0),
        ],
        vec![Some(4.0), Some(5.0), Some(6.0), None, None, None],
    ];
    (names, rows)
}

#[test]
fn merge_joins_the_columns_that_are_one_name() {
    let mut merged =
        Merge::new(vec![reader("a.csv", &log_a()), reader("b.csv", &log_b())]).unwrap();
    assert_eq!(read_all(&mut merged), a_and_b());
}

#[test]
fn csv_append_takes_the_same_columns_in_another_case() {
    let dir = Dir::new("case-append");
    let file = dir.0.join("log.csv");
    let target = file.to_str().unwrap();
    let mut w = create(target, &CreateOptions::default()).unwrap();
    copy(&mut *reader("a.csv", &log_a()), &mut *w).unwrap();
    drop(w);
    // The same three counters, in other cases.
    let same = csv(
        &paths(&[
            &format!(r"{SIGMA_FOLDED}\X"),
            &format!(r"{I_DOT}\Y"),
            &format!(r"{SHARP}\Z"),
        ]),
        &[(4, &[Some(7.0), Some(8.0), Some(9.0)])],
    );
    let append = CreateOptions::default().with_append(true);
    let mut w = create(target, &append).unwrap();
    copy(&mut *reader("same.csv", &same), &mut *w).unwrap();
    drop(w);
    // Other counters under the rule, the same under `str::to_lowercase`.
    for (x, y) in [(SIGMA_FINAL, I_DOT), (SIGMA, I_DOT_LOWER)] {
        let other = csv(
            &paths(&[
                &format!(r"{x}\x"),
                &format!(r"{y}\y"),
                &format!(r"{SHARP}\z"),
            ]),
            &[(6, &[Some(0.0), Some(0.0), Some(0.0)])],
        );
        let mut w = create(target, &append).unwrap();
        let e = copy(&mut *reader("other.csv", &other), &mut *w).unwrap_err();
        assert!(e.to_string().contains("other counters"), "{e}");
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let (names, rows) = read_all(&mut *reader("log.csv", &text));
    assert_eq!(
        names,
        paths(&[
            &format!(r"{SIGMA}\x"),
            &format!(r"{I_DOT}\y"),
            &format!(r"{SHARP_UPPER}\z"),
        ])
    );
    assert_eq!(
        rows,
        [
            [Some(1.0), Some(2.0), Some(3.0)],
            [Some(4.0), Some(5.0), Some(6.0)],
            [Some(7.0), Some(8.0), Some(9.0)],
        ]
    );
}

#[cfg(feature = "sql")]
#[test]
fn sql_append_keeps_one_column_per_name() {
    use perfcounters::log::sql::{SqlLogReader, SqlLogWriter, SqlWriteOptions};
    let dir = Dir::new("case-sql");
    let db = dir.0.join("logs.db");
    let mut w = SqlLogWriter::create(&db, "L", SqlWriteOptions::default()).unwrap();
    copy(&mut *reader("a.csv", &log_a()), &mut w).unwrap();
    drop(w);
    let append = SqlWriteOptions {
        append: true,
        ..Default::default()
    };
    let mut w = SqlLogWriter::create(&db, "L", append).unwrap();
    copy(&mut *reader("b.csv", &log_b()), &mut w).unwrap();
    drop(w);
    let mut r = SqlLogReader::open(&db, Some("L")).unwrap();
    let (names, rows) = read_all(&mut r);
    let (want_names, want_rows) = a_and_b();
    assert_eq!(names, want_names);
    // The SQL log keeps records in the order written: A's two, then B's.
    assert_eq!(
        rows,
        [
            want_rows[0].clone(),
            want_rows[2].clone(),
            want_rows[1].clone()
        ]
    );
}

const SEC: i64 = 10_000_000;

fn header(names: &[String]) -> LogHeader {
    LogHeader {
        source: "made".into(),
        kind: LogKind::Csv,
        time_zone: None,
        counters: names
            .iter()
            .map(|n| LogCounter::new(CounterPath::parse(n).unwrap(), None))
            .collect(),
    }
}

/// Rules naming `\ΣΣ(*)\Λ` (with `EXCLUDE INSTANCE="ΣΣ"`) and a utilization generated from
/// `\ΣΣ(*)\Bytes` and `\ΣΣ(*)\Bandwidth`, against a log that names them in lower case. (The
/// generated code's index is `$k`: PowerShell's variable names ignore case, so a `$b` would be
/// the collection `$B`; an instance without a bandwidth makes no series, and the series is named
/// as PAL's network utilization names its own.)
#[test]
fn analysis_rules_match_names_in_another_case() {
    let rules_text = format!(
        r#"<PAL NAME="case">
  <ANALYSIS NAME="load" ENABLED="True" CATEGORY="Test" ID="1">
    <DATASOURCE TYPE="CounterLog" NAME="\{SIGMA}(*)\Λ" EXPRESSIONPATH="\{SIGMA}(*)\Λ" COLLECTIONVARNAME="V">
      <EXCLUDE INSTANCE="{SIGMA}" />
    </DATASOURCE>
    <THRESHOLD NAME="gt" CONDITION="Warning" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $V -Operator 'gt' -Threshold 5</CODE></THRESHOLD>
  </ANALYSIS>
  <ANALYSIS NAME="use" ENABLED="True" CATEGORY="Test" ID="2">
    <DATASOURCE TYPE="CounterLog" NAME="\{SIGMA}(*)\Bytes" EXPRESSIONPATH="\{SIGMA}(*)\Bytes" COLLECTIONVARNAME="B" />
    <DATASOURCE TYPE="CounterLog" NAME="\{SIGMA}(*)\Bandwidth" EXPRESSIONPATH="\{SIGMA}(*)\Bandwidth" COLLECTIONVARNAME="W" />
    <DATASOURCE TYPE="Generated" NAME="\{SIGMA}(*)\Use" EXPRESSIONPATH="\{SIGMA}(*)\Use" COLLECTIONVARNAME="U">
      <CODE><![CDATA[
        $U = @{{}}
        For ($i=0;$i -lt $B.Count;$i++)
        {{
          $k = -1
          For ($a=0;$a -lt $W.Count;$a++)
          {{
            If ($B[$i].CounterInstance -eq $W[$a].CounterInstance)
            {{
              $k = $a
            }}
          }}
          If ($k -ge 0)
          {{
            $alValues = New-Object System.Collections.ArrayList
            For ($v=0;$v -lt $B[$i].Value.Count;$v++)
            {{
              [int]$iUse = (([double]$B[$i].QuantizedAvg[$v] * 8) / [double]$W[$k].QuantizedAvg[$v]) * 100
              [void] $alValues.Add($iUse)
            }}
            $sName = "\\$($B[$i].CounterComputer)\$($B[$i].CounterObject)($($B[$i].CounterInstance))\Use"
            $U.Add($sName,$alValues)
          }}
        }}
      ]]></CODE>
    </DATASOURCE>
    <THRESHOLD NAME="busy" CONDITION="Critical" PRIORITY="1"><CODE>StaticThreshold -CollectionOfCounterInstances $U -Operator 'gt' -Threshold 30</CODE></THRESHOLD>
  </ANALYSIS>
</PAL>"#
    );
    let f = RulesFile::parse("case.xml", &rules_text).unwrap();
    let rules = Rules {
        name: f.name,
        files: vec![],
        questions: f.questions,
        analyses: f.analyses,
    };
    let names = [
        // `load`: σσ is ΣΣ and λ is Λ; the instance σσ is excluded; the object σς is another.
        format!(r"\\{SIGMA}\{SIGMA_FOLDED}(a)\λ"),
        format!(r"\\{SIGMA}\{SIGMA_FOLDED}({SIGMA_FOLDED})\λ"),
        format!(r"\\{SIGMA}\{SIGMA_FINAL}(a)\λ"),
        // `use`: the bytes of instance ΣΣ pair with the bandwidth of instance σσ on machine σσ
        // (the same machine); İ does not pair with i̇.
        format!(r"\\{SIGMA}\{SIGMA_FOLDED}({SIGMA})\bytes"),
        format!(r"\\{SIGMA_FOLDED}\{SIGMA_FOLDED}({SIGMA_FOLDED})\bandwidth"),
        format!(r"\\{SIGMA}\{SIGMA_FOLDED}({I_DOT})\bytes"),
        format!(r"\\{SIGMA}\{SIGMA_FOLDED}({I_DOT_LOWER})\bandwidth"),
        // Another machine under the rule.
        format!(r"\\{SIGMA_FINAL}\Other\x"),
    ];
    let h = header(&names);
    let t0 = 1_000 * SEC;
    let row: Vec<Option<f64>> = vec![
        Some(9.0),
        Some(9.0),
        Some(9.0),
        Some(5.0),
        Some(100.0),
        Some(5.0),
        Some(100.0),
        Some(1.0),
    ];
    let records = (0..2)
        .map(|i| Record {
            time: LogTime(t0 + i * SEC),
            cells: row
                .iter()
                .map(|v| v.map_or(Cell::Blank, Cell::Value))
                .collect(),
        })
        .collect();
    let mut log = VecLog::new(h, records);
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(2),
        ..Default::default()
    };
    let r = analyze(&mut log, &rules, &opts).unwrap();
    assert_eq!(r.machines, [SIGMA, SIGMA_FINAL]);
    let mut alerts: Vec<(String, String, f64)> = r
        .alerts
        .iter()
        .map(|a| {
            (
                r.analyses[a.analysis].name.clone(),
                r.counters[a.counter].path.clone(),
                a.avg,
            )
        })
        .collect();
    alerts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(
        alerts,
        [
            ("load".to_owned(), names[0].clone(), 9.0),
            (
                "use".to_owned(),
                format!(r"\\{SIGMA}\{SIGMA_FOLDED}({SIGMA})\Use"),
                40.0
            ),
        ]
    );
}

#[cfg(feature = "arrow")]
#[test]
fn dataset_partitions_machines_by_the_rule() {
    let dir = Dir::new("case-dataset");
    let names = [
        format!(r"\\{SIGMA}\O\x"),
        format!(r"\\{SIGMA_FOLDED}\O\y"),
        format!(r"\\{SIGMA_FINAL}\O\z"),
    ];
    let h = header(&names);
    let records = vec![Record {
        time: LogTime(1_000 * SEC),
        cells: vec![Cell::Value(1.0), Cell::Value(2.0), Cell::Value(3.0)],
    }];
    let mut w = create(dir.0.to_str().unwrap(), &CreateOptions::default()).unwrap();
    copy(&mut VecLog::new(h, records), &mut *w).unwrap();
    drop(w);
    let mut parts: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    parts.sort();
    let value = |m: &str| {
        format!(
            "machine={}",
            perfcounters::log::columnar::dataset::partition_value(Some(m))
        )
    };
    let mut want = vec![value(SIGMA), value(SIGMA_FINAL)];
    want.sort();
    assert_eq!(parts, want);
}
