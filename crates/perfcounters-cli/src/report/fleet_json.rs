//! A machine's entry in the fleet report's JSON (`analyze` of logs of several machines): what a
//! single report holds, as types. Fields in alphabetical order, as in `json.rs`; the document
//! around the entries (`{"logs", "machines", "rules"}`) is written by `fleet.rs`.

use std::collections::BTreeMap;

use perfcounters::analyze::{AnalyzeError, MachineAnalysis};
use perfcounters::ErrorChain;
use serde::Serialize;

use super::iso;
use super::json::{AlertJson, AnalysisJson, StatisticJson};

/// An error of a machine as the report and standard error tell it: the error and its causes.
pub(super) fn error_text(e: &AnalyzeError) -> String {
    ErrorChain(e).to_string()
}

/// One machine of the fleet: its report, or why it has none.
#[derive(Serialize)]
pub(super) struct MachineJson<'a> {
    alerts: Vec<AlertJson<'a>>,
    analyses: Vec<AnalysisJson<'a>>,
    /// The encoding each of its text logs was read in, by log (as in a single report).
    encodings: BTreeMap<&'a str, String>,
    /// The end of its time range, `null` without records.
    end: Option<String>,
    /// Why the machine was not analysed (a damaged log), left out when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    interval_seconds: u64,
    logs: &'a [String],
    /// The machine, or the log's name for a log that names no single machine.
    machine: &'a str,
    /// Whether `machine` is a log's name.
    named_after_log: bool,
    questions: BTreeMap<&'a str, &'a str>,
    records: u64,
    start: Option<String>,
    statistics: Vec<StatisticJson<'a>>,
}

impl<'a> MachineJson<'a> {
    pub(super) fn new(m: &'a MachineAnalysis) -> Self {
        let mut json = MachineJson {
            alerts: Vec::new(),
            analyses: Vec::new(),
            encodings: BTreeMap::new(),
            end: None,
            error: None,
            interval_seconds: 0,
            logs: &m.logs,
            machine: &m.machine,
            named_after_log: m.named_after_log,
            questions: BTreeMap::new(),
            records: 0,
            start: None,
            statistics: Vec::new(),
        };
        match &m.result {
            Ok(a) => {
                let r = &a.report;
                let zone = r.time_zone.as_ref();
                json.alerts = r.alerts.iter().map(|x| AlertJson::new(r, x)).collect();
                json.analyses = r.analyses.iter().map(|x| AnalysisJson::new(r, x)).collect();
                json.encodings = super::encodings(&a.logs);
                json.end = r.range.map(|x| iso(zone, x.1));
                json.interval_seconds = r.interval_seconds;
                json.questions = r
                    .questions
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                json.records = r.records;
                json.start = r.range.map(|x| iso(zone, x.0));
                json.statistics = r.counters.iter().map(StatisticJson::new).collect();
            }
            Err(e) => json.error = Some(error_text(e)),
        }
        json
    }
}
