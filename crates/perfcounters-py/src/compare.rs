//! `perfcounters.compare`: the library's comparison of a baseline and a candidate
//! (`analyze::compare`), its counters as one Arrow record batch.

use std::sync::Arc;

use arrow_array::builder::{Float64Builder, ListBuilder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use pyo3::prelude::*;

use perfcounters::analyze::{
    compare as compare_logs, CompareError, CompareOptions, CounterChange, Rules, Side, SideStats,
};
use perfcounters::ErrorChain;

use super::{
    pipeline, sources, with_bounds, ArrowStream, Batches, Failure, Input, ReadRequest, TimeBound,
};

/// The statistics of each side, in the order of the columns `baseline_*` and `candidate_*`.
const STATS: [&str; 6] = ["count", "min", "avg", "p50", "p95", "max"];

/// The schema of the table: the counter, its class and changes, then each side's statistics.
fn schema() -> Arc<Schema> {
    let mut fields = vec![
        Field::new("counter", DataType::Utf8, false),
        Field::new("class", DataType::Utf8, false),
        Field::new("effect", DataType::Float64, true),
        Field::new("effect_error", DataType::Float64, true),
        Field::new("avg_ratio", DataType::Float64, true),
        Field::new("p95_ratio", DataType::Float64, true),
        Field::new("bad", DataType::Utf8, true),
        Field::new(
            "analyses",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
    ];
    for side in ["baseline", "candidate"] {
        for s in STATS {
            let t = if s == "count" {
                DataType::UInt64
            } else {
                DataType::Float64
            };
            fields.push(Field::new(format!("{side}_{s}"), t, true));
        }
    }
    Arc::new(Schema::new(fields))
}

/// The counters as one record batch of [`schema`].
fn batch(counters: &[CounterChange]) -> Result<RecordBatch, Failure> {
    let mut counter = StringBuilder::new();
    let mut class = StringBuilder::new();
    let mut bad = StringBuilder::new();
    let mut analyses = ListBuilder::new(StringBuilder::new());
    let mut floats: Vec<Float64Builder> = (0..4).map(|_| Float64Builder::new()).collect();
    let mut counts = [UInt64Builder::new(), UInt64Builder::new()];
    let mut stats: Vec<Float64Builder> = (0..10).map(|_| Float64Builder::new()).collect();
    for c in counters {
        counter.append_value(&c.counter);
        class.append_value(c.class.name());
        bad.append_option(c.bad.map(|b| match b {
            perfcounters::analyze::BadDirection::Up => "up",
            perfcounters::analyze::BadDirection::Down => "down",
        }));
        for a in &c.analyses {
            analyses.values().append_value(a);
        }
        analyses.append(true);
        for (b, v) in floats
            .iter_mut()
            .zip([c.effect, c.effect_error, c.avg_ratio, c.p95_ratio])
        {
            b.append_option(v);
        }
        for (k, side) in [&c.baseline, &c.candidate].into_iter().enumerate() {
            counts[k].append_option(side.as_ref().map(|s| s.count));
            let values = |s: &SideStats| [s.min, s.avg, s.p50, s.p95, s.max];
            let v = side.as_ref().map(values);
            for (i, b) in stats[k * 5..k * 5 + 5].iter_mut().enumerate() {
                b.append_option(v.map(|v| v[i]));
            }
        }
    }
    let [mut base_count, mut cand_count] = counts;
    let mut columns: Vec<ArrayRef> = vec![Arc::new(counter.finish()), Arc::new(class.finish())];
    columns.extend(floats.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
    columns.push(Arc::new(bad.finish()));
    columns.push(Arc::new(analyses.finish()));
    columns.push(Arc::new(base_count.finish()));
    columns.extend(
        stats[..5]
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef),
    );
    columns.push(Arc::new(cand_count.finish()));
    columns.extend(
        stats[5..]
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef),
    );
    RecordBatch::try_new(schema(), columns).map_err(|e| Failure::Value(e.to_string()))
}

/// A comparison's error as Python sees it: a log's error names its side first; the others are
/// `ValueError`s with the library's message (`names` for the name tables).
fn failure(e: CompareError) -> Failure {
    let side_of = |side: Side, f: Failure| match f {
        Failure::Log(mut log) => {
            log.message = format!("{side}: {}", log.message);
            Failure::Log(log)
        }
        Failure::Value(m) => Failure::Value(format!("{side}: {m}")),
    };
    match e {
        CompareError::Inputs { side, error } => side_of(side, Failure::from(error)),
        CompareError::Analyze { side, error } => {
            side_of(side, Failure::Value(ErrorChain(&error).to_string()))
        }
        other => Failure::Value(other.message("`names`")),
    }
}

/// The rules of `specs` (each a file or a built-in file's name, as the command's `--rules`; each
/// with what it inherits), or PAL's QuickSystemOverview without any.
pub(crate) fn rules(specs: &[String]) -> Result<Rules, Failure> {
    let mut all: Option<Rules> = None;
    for f in specs {
        let r = Rules::open(f).map_err(|e| Failure::Value(ErrorChain(&e).to_string()))?;
        match &mut all {
            Some(a) => a.extend(r),
            None => all = Some(r),
        }
    }
    Ok(all.unwrap_or_else(Rules::builtin))
}

/// What `compare` asks for, each side read as `read_log` reads its paths.
struct CompareRequest {
    baseline: ReadRequest,
    candidate: ReadRequest,
    rules: Vec<String>,
}

fn run(request: &CompareRequest) -> Result<Batches, Failure> {
    let rules = rules(&request.rules)?;
    let side = |r: &ReadRequest| with_bounds(pipeline(r)?, r);
    let (baseline, candidate) = (side(&request.baseline)?, side(&request.candidate)?);
    let compared =
        compare_logs(&baseline, &candidate, &rules, &CompareOptions::default()).map_err(failure)?;
    let mut warnings: Vec<String> = compared
        .baseline
        .warnings
        .iter()
        .map(|w| format!("baseline: {w}"))
        .collect();
    warnings.extend(compared.candidate.warnings.iter().cloned());
    let b = batch(&compared.comparison.counters)?;
    Ok(Batches {
        schema: b.schema(),
        batches: vec![b],
        warnings,
    })
}

/// Compares the candidate's logs with the baseline's (see `perfcounters.compare`); the GIL is
/// released while reading.
#[pyfunction]
#[pyo3(signature = (baseline, candidate, counters = None, names = Vec::new(), begin = None, end = None, code_page = None, rules = Vec::new()))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
pub(crate) fn compare(
    py: Python<'_>,
    baseline: Vec<Input>,
    candidate: Vec<Input>,
    counters: Option<Vec<String>>,
    names: Vec<String>,
    begin: Option<(i64, bool)>,
    end: Option<(i64, bool)>,
    code_page: Option<u16>,
    rules: Vec<String>,
) -> PyResult<ArrowStream> {
    let bound = |b: Option<(i64, bool)>| b.map(|(micros, aware)| TimeBound { micros, aware });
    let side = |inputs: Vec<Input>| ReadRequest {
        inputs: sources(inputs),
        counters: counters.clone(),
        names: names.clone(),
        begin: bound(begin),
        end: bound(end),
        tidy: false,
        code_page,
    };
    let request = CompareRequest {
        baseline: side(baseline),
        candidate: side(candidate),
        rules,
    };
    match py.detach(|| run(&request)) {
        Ok(b) => Ok(ArrowStream::new(b)),
        Err(f) => Err(f.into_py(py)),
    }
}
