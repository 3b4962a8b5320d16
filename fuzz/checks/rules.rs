//! PAL threshold files and their PowerShell subset on arbitrary text: the reader and the
//! interpreter never panic or hang; whatever parses evaluates within its bounds or says why not.
//!
//! The checks of the `rules` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/rules/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use std::collections::HashMap;

use perfcounters::analyze::{
    analyze, question_values, AnalyzeOptions, CounterInstance, DataSourceKind, Interval, Rules,
    RulesFile, Script, ScriptValue,
};
use perfcounters::log::{CsvFlavor, CsvReadOptions, PdhCsvReader, PdhCsvWriter};
use perfcounters::snapshot::SystemTime;

/// The most columns of the log the file is analysed over.
const MAX_COLUMNS: usize = 32;

/// Two counter instances of one slice, as generated data sources and `CreateAlert` code read
/// them (one without a value).
fn instances() -> Vec<CounterInstance> {
    let one = |i: &str, v: Option<f64>| CounterInstance {
        path: format!(r"\\PC\Obj({i})\Ctr"),
        computer: "PC".into(),
        object: "MSSQL$A:Obj".into(),
        counter: "Ctr".into(),
        instance: i.into(),
        min: v,
        avg: v,
        max: v,
        trend: v,
    };
    vec![one("a", Some(2.5)), one("b", None)]
}

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The code alone, with a collection and a question defined.
    let mut vars = HashMap::new();
    vars.insert(
        "C".to_owned(),
        ScriptValue::Collection {
            name: "C".into(),
            count: 2,
        },
    );
    vars.insert("OS".to_owned(), ScriptValue::Str("Windows Server".into()));
    vars.insert("PhysicalMemory".to_owned(), ScriptValue::Str("16".into()));
    if let Ok(script) = Script::parse(text) {
        if let Ok(calls) = script.evaluate(&vars) {
            for c in calls {
                assert!(c.threshold.is_finite());
            }
        }
        // In a time slice: the collections `$D` and `$C` hold counter instances; the code may
        // fill the hash table `$G` (a generated data source) or call `CreateAlert`.
        let slice = vec![("D".to_owned(), instances()), ("C".to_owned(), instances())];
        if let Ok(made) = script.generate(&vars, &slice, "G") {
            for (_, values) in made {
                assert!(values.iter().all(|v| v.is_finite()));
            }
        }
        if let Ok(alerts) = script.create_alerts(&vars, &slice) {
            assert!(alerts.iter().all(|a| a.counter.starts_with(r"\\PC\Obj(")));
        }
    }
    // The text as a threshold file: every threshold of every analysis evaluated.
    if let Ok(file) = RulesFile::parse("fuzz.xml", text) {
        let Ok(q) = question_values(&file.questions, &[]) else {
            return;
        };
        for a in &file.analyses {
            let mut v: HashMap<String, ScriptValue> = q.iter().cloned().collect();
            for d in &a.data_sources {
                v.insert(
                    d.collection_var.clone(),
                    ScriptValue::Collection {
                        name: d.collection_var.clone(),
                        count: 1,
                    },
                );
            }
            for t in &a.thresholds {
                let _ = Script::parse(&t.code).and_then(|s| s.evaluate(&v));
            }
        }
        analyze_file(file);
    }
}

/// The file analysed over a small log holding a column for each counter-log data source (the
/// `<COUNTER>` form included) and named SQL Server instances (for regular-expression data
/// sources): every enabled analysis is in the report, evaluated or with its reason.
fn analyze_file(file: RulesFile) {
    let mut columns: Vec<String> = vec![
        r"\\M\MSSQL$PROD:Buffer Manager\Page life expectancy".into(),
        r"\\M\SQLServer:Locks(_Total)\Lock Waits/sec".into(),
    ];
    for a in &file.analyses {
        for ds in &a.data_sources {
            if let (DataSourceKind::CounterLog, Ok(p)) = (&ds.kind, &ds.path) {
                let mut p = p.clone();
                p.machine = Some("M".into());
                if p.instance.as_deref() == Some("*") {
                    p.instance = Some("_Total".into());
                }
                let text = p.to_string();
                if columns.len() < MAX_COLUMNS && !text.contains(['*', '?', '"', '\n', '\r']) {
                    columns.push(text);
                }
            }
        }
    }
    columns.sort_by_key(|c| c.to_ascii_lowercase());
    columns.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    let mut w = PdhCsvWriter::new(Vec::new(), CsvFlavor::Csv);
    if w.write_header(&columns).is_err() {
        return;
    }
    for second in 0..3u16 {
        let time = SystemTime {
            year: 2024,
            month: 1,
            day: 1,
            second,
            ..Default::default()
        };
        let values: Vec<Option<f64>> = (0..columns.len())
            .map(|c| Some((c as f64) * f64::from(second)))
            .collect();
        if w.write_row(&time, &values).is_err() {
            return;
        }
    }
    let bytes = w.into_inner();
    let Ok(mut reader) = PdhCsvReader::new(
        std::io::Cursor::new(bytes),
        "fuzz.csv",
        CsvReadOptions::default(),
    ) else {
        return;
    };
    let enabled = file.analyses.iter().filter(|a| a.enabled).count();
    let rules = Rules {
        name: file.name,
        files: vec!["fuzz.xml".into()],
        questions: file.questions,
        analyses: file.analyses,
    };
    let opts = AnalyzeOptions {
        interval: Interval::Seconds(1),
        ..Default::default()
    };
    if let Ok(report) = analyze(&mut reader, &rules, &opts) {
        assert_eq!(report.analyses.len(), enabled);
    }
}
