//! `perfcounters.analyze`: the alerts of `perfcounters analyze` (PAL's thresholds over logs) as one
//! Arrow record batch. The logs are grouped by machine as the command groups them
//! (`analyze::fleet_groups`): one machine's logs give one analysis, several machines' logs one
//! analysis per machine (`analyze::analyze_fleet`), as the command's fleet report.

use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int32Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use pyo3::prelude::*;

use perfcounters::analyze::{
    analyze_fleet, fleet_groups, AnalyzeError, FleetOptions, Interval, MachineAnalysis, Report,
};
use perfcounters::log::columnar::{utc_micros, TIME_ZONE};
use perfcounters::path::CounterPath;
use perfcounters::ErrorChain;

use super::compare::rules;
use super::{
    pipeline, sources, with_bounds, ArrowStream, Batches, Failure, Input, ReadRequest, TimeBound,
};

/// The schema of the alerts.
fn schema() -> Arc<Schema> {
    let time = || DataType::Timestamp(TimeUnit::Microsecond, Some(TIME_ZONE.into()));
    Arc::new(Schema::new(vec![
        Field::new("machine", DataType::Utf8, true),
        Field::new("analysis", DataType::Utf8, false),
        Field::new("condition", DataType::Utf8, false),
        Field::new("priority", DataType::Int32, false),
        Field::new("counter", DataType::Utf8, false),
        Field::new("start", time(), false),
        Field::new("end", time(), false),
        Field::new("min", DataType::Float64, false),
        Field::new("avg", DataType::Float64, false),
        Field::new("max", DataType::Float64, false),
        Field::new("threshold_name", DataType::Utf8, false),
        Field::new("operator", DataType::Utf8, true),
        Field::new("threshold", DataType::Float64, true),
        Field::new("trend", DataType::Float64, true),
    ]))
}

/// The builders of the alerts' columns.
#[derive(Default)]
struct Columns {
    machine: StringBuilder,
    analysis: StringBuilder,
    condition: StringBuilder,
    priority: Int32Builder,
    counter: StringBuilder,
    start: TimestampMicrosecondBuilder,
    end: TimestampMicrosecondBuilder,
    min: Float64Builder,
    avg: Float64Builder,
    max: Float64Builder,
    threshold_name: StringBuilder,
    operator: StringBuilder,
    threshold: Float64Builder,
    trend: Float64Builder,
}

impl Columns {
    /// Appends the alerts of `report`, the analysis of `machine` (`None` when the group is named
    /// after a log: its columns name no machine or several). An alert's machine is the one its
    /// counter's path names, else the group's.
    fn append(&mut self, report: &Report, machine: Option<&str>) {
        for a in &report.alerts {
            let counter = report
                .counters
                .get(a.counter)
                .map_or("", |c| c.path.as_str());
            let of_path = CounterPath::parse(counter).ok().and_then(|p| p.machine);
            self.machine.append_option(of_path.as_deref().or(machine));
            self.analysis.append_value(
                report
                    .analyses
                    .get(a.analysis)
                    .map_or("", |x| x.name.as_str()),
            );
            self.condition.append_value(&a.condition);
            self.priority.append_value(a.priority);
            self.counter.append_value(counter);
            self.start.append_option(utc_micros(a.start));
            self.end.append_option(utc_micros(a.end));
            self.min.append_value(a.min);
            self.avg.append_value(a.avg);
            self.max.append_value(a.max);
            self.threshold_name.append_value(&a.threshold_name);
            self.operator.append_option(a.operator.map(|o| o.name()));
            self.threshold.append_option(a.threshold);
            self.trend.append_option(a.trend);
        }
    }

    fn finish(mut self) -> Result<RecordBatch, Failure> {
        let schema = schema();
        let time = |b: &mut TimestampMicrosecondBuilder| {
            Arc::new(b.finish().with_timezone(TIME_ZONE)) as ArrayRef
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.machine.finish()),
            Arc::new(self.analysis.finish()),
            Arc::new(self.condition.finish()),
            Arc::new(self.priority.finish()),
            Arc::new(self.counter.finish()),
            time(&mut self.start),
            time(&mut self.end),
            Arc::new(self.min.finish()),
            Arc::new(self.avg.finish()),
            Arc::new(self.max.finish()),
            Arc::new(self.threshold_name.finish()),
            Arc::new(self.operator.finish()),
            Arc::new(self.threshold.finish()),
            Arc::new(self.trend.finish()),
        ];
        RecordBatch::try_new(schema, columns).map_err(|e| Failure::Value(e.to_string()))
    }
}

/// An analysis's error as Python sees it: a log's error as `read_log` raises it, the others
/// (a question answer, the interval, a counter path) `ValueError`s with the library's message.
fn failure(e: AnalyzeError) -> Failure {
    match e {
        AnalyzeError::Log(e) => Failure::from(e),
        AnalyzeError::Inputs(e) => Failure::from(e),
        other => Failure::Value(ErrorChain(&other).to_string()),
    }
}

/// What `analyze` asks for.
struct AnalyzeRequest {
    read: ReadRequest,
    rules: Vec<String>,
    interval: Option<u64>,
    set: Vec<(String, String)>,
}

fn run(request: &AnalyzeRequest) -> Result<Batches, Failure> {
    let rules = rules(&request.rules)?;
    let pipeline = with_bounds(pipeline(&request.read)?, &request.read)?;
    let groups = fleet_groups(&pipeline).map_err(failure)?;
    let opts = FleetOptions {
        interval: request.interval.map_or(Interval::Auto, Interval::Seconds),
        set: request.set.clone(),
        ..FleetOptions::default()
    };
    let machines = analyze_fleet(&pipeline, groups, &rules, &opts).map_err(failure)?;
    let several = machines.len() > 1;
    let mut columns = Columns::default();
    let mut warnings = Vec::new();
    let mut first_error = None;
    let mut analysed = 0;
    for m in machines {
        let MachineAnalysis {
            machine,
            named_after_log,
            result,
            ..
        } = m;
        // In a fleet, each message names its machine first, as the command prints it.
        let prefix = |w: &str| {
            if several {
                format!("{machine}: {w}")
            } else {
                w.to_owned()
            }
        };
        match result {
            Ok(analyzed) => {
                analysed += 1;
                warnings.extend(analyzed.warnings.iter().map(|w| prefix(w)));
                columns.append(&analyzed.report, (!named_after_log).then_some(&*machine));
            }
            Err(e) => {
                warnings.push(prefix(&ErrorChain(&e).to_string()));
                first_error.get_or_insert(e);
            }
        }
    }
    if analysed == 0 {
        if let Some(e) = first_error {
            return Err(failure(e));
        }
    }
    let batch = columns.finish()?;
    Ok(Batches {
        schema: batch.schema(),
        batches: vec![batch],
        warnings,
    })
}

/// Analyses logs (see `perfcounters.analyze`); the GIL is released while reading.
#[pyfunction]
#[pyo3(signature = (inputs, rules = Vec::new(), interval = None, set = Vec::new(), counters = None, names = Vec::new(), begin = None, end = None, code_page = None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
pub(crate) fn analyze(
    py: Python<'_>,
    inputs: Vec<Input>,
    rules: Vec<String>,
    interval: Option<u64>,
    set: Vec<(String, String)>,
    counters: Option<Vec<String>>,
    names: Vec<String>,
    begin: Option<(i64, bool)>,
    end: Option<(i64, bool)>,
    code_page: Option<u16>,
) -> PyResult<ArrowStream> {
    let bound = |b: Option<(i64, bool)>| b.map(|(micros, aware)| TimeBound { micros, aware });
    let request = AnalyzeRequest {
        read: ReadRequest {
            inputs: sources(inputs),
            counters,
            names,
            begin: bound(begin),
            end: bound(end),
            tidy: false,
            code_page,
        },
        rules,
        interval,
        set,
    };
    match py.detach(|| run(&request)) {
        Ok(b) => Ok(ArrowStream::new(b)),
        Err(f) => Err(f.into_py(py)),
    }
}
