//! The rules of the analysis benchmarks: one analysis per object of the generated log
//! (`blg_log.rs`), `\Object k(*)\*`, reading all its columns, with a value threshold and a trend
//! threshold each. Included by path from the `blg` benchmark and the `analyze_blg` example.

use perfcounters::analyze::Rules;
use perfcounters::analyze::RulesFile;

/// One analysis per object of the generated log, reading all its columns.
#[allow(dead_code)]
pub fn bench_rules() -> Rules {
    let xml = bench_rules_xml();
    let f = RulesFile::parse("bench.xml", &xml).unwrap();
    Rules {
        name: f.name,
        files: vec!["bench.xml".into()],
        questions: f.questions,
        analyses: f.analyses,
    }
}

/// The rules of [`bench_rules`] as the threshold file `bench.xml`, for `--rules`.
pub fn bench_rules_xml() -> String {
    let mut xml = String::from("<PAL NAME=\"bench\">");
    for k in 0..10 {
        xml.push_str(&format!(
            "<ANALYSIS NAME=\"Object {k}\" ENABLED=\"True\" CATEGORY=\"Bench\" ID=\"{k}\">\
             <DATASOURCE TYPE=\"CounterLog\" NAME=\"\\Object {k}(*)\\*\" EXPRESSIONPATH=\"\\Object {k}(*)\\*\" COLLECTIONVARNAME=\"C\"/>\
             <THRESHOLD NAME=\"high\" CONDITION=\"Warning\" PRIORITY=\"50\"><CODE>StaticThreshold -CollectionOfCounterInstances $C -Operator 'gt' -Threshold 1000000</CODE></THRESHOLD>\
             <THRESHOLD NAME=\"rising\" CONDITION=\"Warning\" PRIORITY=\"50\"><CODE>StaticThreshold -CollectionOfCounterInstances $C -Operator 'gt' -Threshold 100 -IsTrendOnly $True</CODE></THRESHOLD>\
             </ANALYSIS>"
        ));
    }
    xml.push_str("</PAL>");
    xml
}
