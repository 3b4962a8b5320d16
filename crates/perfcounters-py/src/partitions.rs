//! The long form of logs split into the partitions of a dataset (machine and UTC date), as
//! `relog -o DIR/` splits them (`log::columnar::PartitionBatches`): what `perfcounters.spark`
//! hands to Spark for `partitionBy("machine", "date")`.

use pyo3::prelude::*;

use perfcounters::log::columnar::{PartitionBatch, PartitionBatches};

use super::{pipeline, sources, ArrowStream, Batches, Failure, Input, ReadRequest};

/// One partition's batch: the machine (`None` for paths that name none), the UTC date
/// (`YYYY-MM-DD`) and the rows.
type Part = (Option<String>, String, Batches);

/// One partition as Python receives it: the machine, the date and the stream of its batch.
type PartStream = (Option<String>, String, ArrowStream);

/// Reads the logs of `request` (merged as relog merges them) into their partitions' batches, with
/// what reading stepped over.
fn read(request: &ReadRequest) -> Result<(Vec<Part>, Vec<String>), Failure> {
    let opened = pipeline(request)?.open()?;
    let warnings = opened.warnings().to_vec();
    let mut parts = Vec::new();
    for p in PartitionBatches::new(opened.into_reader())? {
        let PartitionBatch {
            machine,
            date,
            batch,
        } = p?;
        let schema = batch.schema();
        parts.push((
            machine,
            date,
            Batches {
                schema,
                batches: vec![batch],
                warnings: Vec::new(),
            },
        ));
    }
    Ok((parts, warnings))
}

/// The long form of logs in the partitions a dataset gives them: a list of `(machine, date,
/// stream)` (each stream one batch of the long form of that machine's columns), and the warnings
/// of reading. The GIL is released while reading.
#[pyfunction]
#[pyo3(signature = (inputs, code_page = None))]
pub(crate) fn long_form_partitions(
    py: Python<'_>,
    inputs: Vec<Input>,
    code_page: Option<u16>,
) -> PyResult<(Vec<PartStream>, Vec<String>)> {
    let request = ReadRequest {
        inputs: sources(inputs),
        counters: None,
        names: Vec::new(),
        begin: None,
        end: None,
        tidy: true,
        code_page,
    };
    match py.detach(|| read(&request)) {
        Ok((parts, warnings)) => Ok((
            parts
                .into_iter()
                .map(|(m, d, b)| (m, d, ArrowStream::new(b)))
                .collect(),
            warnings,
        )),
        Err(f) => Err(f.into_py(py)),
    }
}
