//! The Python extension `perfcounters._perfcounters`: the library's log readers and live sources,
//! handing their data to Python as Arrow record batches through the Arrow C stream interface
//! (`__arrow_c_stream__`, a PyCapsule). The Python package `perfcounters` (under `python/`) wraps
//! it into `pyarrow.Table`s.
//!
//! Arrow crosses with arrow-rs's own `ffi_stream` module rather than the `pyo3-arrow` crate: the
//! PyCapsule protocol needs one capsule around an `FFI_ArrowArrayStream`, which arrow-rs already
//! builds and releases; `pyo3-arrow` would pin a second set of arrow and PyO3 versions to keep in
//! step with the library's.

mod analyze;
mod compare;
mod live;
mod partitions;

use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::{Schema, SchemaRef};
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use perfcounters::log::columnar::parquet::{header_metadata, KEY_FORMAT};
use perfcounters::log::columnar::{log_time, wide_schema, LongBatches, WideBatches};
use perfcounters::log::{
    LogBytes, LogError as RsLogError, LogErrorKind, LogHeader, LogReader, Pipeline, PipelineError,
    TimeBound as PipelineBound,
};
use perfcounters::names::{NameFileCause, NameTables};
use perfcounters::ErrorChain;
use pyo3::pybacked::PyBackedBytes;

create_exception!(
    perfcounters,
    LogError,
    PyValueError,
    "A log cannot be read: its content is not what its format allows, or a request it cannot \
     satisfy. Attributes: `source` (the log), `location` (where in it, or None)."
);
create_exception!(
    perfcounters,
    DecodeError,
    LogError,
    "The bytes of a binary log (.blg) are malformed. Attributes: `source`, `location`, \
     `structure` (the structure being read) and `offset` (its byte offset in the file)."
);

/// A log reader's or writer's error, as Python will see it.
#[derive(Debug)]
struct LogFailure {
    message: String,
    source: String,
    location: Option<String>,
    /// For malformed binary logs: the structure and its byte offset.
    decode: Option<(String, u64)>,
    /// For the file system's errors: kind, OS error number and the error's own text (for an error
    /// without a number).
    io: Option<(std::io::ErrorKind, Option<i32>, String)>,
}

impl LogFailure {
    /// The failure of reading the file `source` for the reason `e`: an `OSError` when the file
    /// system refused it, else (the content is wrong) a `LogError` with `message`.
    fn io(source: &str, e: &std::io::Error, message: String) -> Self {
        let io = (e.kind() != std::io::ErrorKind::InvalidData)
            .then(|| (e.kind(), e.raw_os_error(), e.to_string()));
        LogFailure {
            message,
            source: source.to_owned(),
            location: None,
            decode: None,
            io,
        }
    }
}

/// An error on its way to Python, built without the interpreter (while the GIL is released).
#[derive(Debug)]
enum Failure {
    /// A log reader's or writer's error.
    Log(Box<LogFailure>),
    /// A bad argument.
    Value(String),
}

impl From<RsLogError> for Failure {
    fn from(e: RsLogError) -> Self {
        let decode = match &e.kind {
            LogErrorKind::Decode(d) => Some((d.structure().to_owned(), d.offset() as u64)),
            _ => None,
        };
        let io = match &e.kind {
            LogErrorKind::Io(io) => Some((io.kind(), io.raw_os_error(), io.to_string())),
            _ => None,
        };
        Failure::Log(Box::new(LogFailure {
            // The library's message names the log and the place; its causes say what went wrong.
            message: ErrorChain(&e).to_string(),
            source: e.source.clone(),
            location: e.location.as_ref().map(ToString::to_string),
            decode,
            io,
        }))
    }
}

impl Failure {
    /// The Python exception: `FileNotFoundError` / `PermissionError` / `OSError` for the file
    /// system's errors, `DecodeError` for malformed binary logs, `LogError` for the rest of the
    /// log errors, `ValueError` for bad arguments.
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Value(m) => PyValueError::new_err(m),
            Failure::Log(log) => {
                let LogFailure {
                    message,
                    source,
                    location,
                    decode,
                    io,
                } = *log;
                if let Some((kind, code, text)) = io {
                    return os_error(py, kind, code, text, source, message);
                }
                let err = match &decode {
                    Some(_) => DecodeError::new_err(message),
                    None => LogError::new_err(message),
                };
                let value = err.value(py);
                let set = value
                    .setattr("source", source)
                    .and_then(|()| value.setattr("location", location))
                    .and_then(|()| match decode {
                        Some((structure, offset)) => value
                            .setattr("structure", structure)
                            .and_then(|()| value.setattr("offset", offset)),
                        None => Ok(()),
                    });
                if let Err(e) = set {
                    return e;
                }
                err
            }
        }
    }
}

/// The `OSError` of an I/O error on the file `source`, as Python raises its own:
/// `OSError(errno, strerror, filename)` with the OS's text for the number (`os.strerror`; on
/// Windows the number is a Win32 error, given as `winerror` with the text of
/// `ctypes.FormatError`), and Python picks the subclass. An error without a number keeps its own
/// `text`: `FileNotFoundError`/`PermissionError` by its kind, else an `OSError` with `message`.
fn os_error(
    py: Python<'_>,
    kind: std::io::ErrorKind,
    code: Option<i32>,
    text: String,
    source: String,
    message: String,
) -> PyErr {
    use std::io::ErrorKind::{NotFound, PermissionDenied};
    let Some(code) = code else {
        return match kind {
            NotFound => PyFileNotFoundError::new_err((2, text, source)),
            PermissionDenied => PyPermissionError::new_err((13, text, source)),
            _ => PyOSError::new_err(message),
        };
    };
    let strerror = if cfg!(windows) {
        py.import("ctypes")
            .and_then(|m| m.getattr("FormatError"))
            .and_then(|f| f.call1((code,)))
    } else {
        py.import("os")
            .and_then(|m| m.getattr("strerror"))
            .and_then(|f| f.call1((code,)))
    }
    .and_then(|s| s.extract::<String>());
    let strerror = match strerror {
        Ok(s) => s,
        Err(e) => return e,
    };
    // Python maps the number to the subclass: FileNotFoundError for ENOENT, …
    match (kind, cfg!(windows)) {
        (NotFound, false) => PyFileNotFoundError::new_err((code, strerror, source)),
        (PermissionDenied, false) => PyPermissionError::new_err((code, strerror, source)),
        (_, false) => PyOSError::new_err((code, strerror, source)),
        // OSError(errno, strerror, filename, winerror): the errno follows from the winerror.
        (_, true) => PyOSError::new_err((0, strerror, source, code)),
    }
}

/// A time bound given by Python: microseconds since 1970-01-01 00:00, of a UTC instant (`aware`) or
/// a local time of the log's zone (a naive datetime, as relog's `-b`/`-e` take times).
#[derive(Clone, Copy, Debug)]
struct TimeBound {
    micros: i64,
    aware: bool,
}

/// A log to read, as the package hands it over: a path (a file, a pattern, `SQL:file.db!log`, a
/// dataset directory), or a name and the bytes of a log held in memory (Python's `bytes`, not
/// copied; the package reads a file-like object into them).
#[derive(Debug, FromPyObject)]
pub(crate) enum Input {
    /// A path.
    Path(String),
    /// A log in memory: its name in messages, its bytes.
    Bytes(String, PyBackedBytes),
}

/// A log to read, once handed over: a path, or a log in memory.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// A path.
    Path(String),
    /// A log in memory, sharing the Python object's bytes.
    Memory(LogBytes),
}

impl From<Input> for Source {
    fn from(input: Input) -> Self {
        match input {
            Input::Path(p) => Source::Path(p),
            Input::Bytes(name, bytes) => Source::Memory(LogBytes::new(name, bytes)),
        }
    }
}

/// The sources of `inputs`.
pub(crate) fn sources(inputs: Vec<Input>) -> Vec<Source> {
    inputs.into_iter().map(Source::from).collect()
}

/// What `read_log` asks for.
#[derive(Debug)]
struct ReadRequest {
    inputs: Vec<Source>,
    counters: Option<Vec<String>>,
    names: Vec<String>,
    begin: Option<TimeBound>,
    end: Option<TimeBound>,
    tidy: bool,
    code_page: Option<u16>,
}

/// The batches of a table and their schema.
#[derive(Debug)]
pub(crate) struct Batches {
    pub(crate) schema: SchemaRef,
    pub(crate) batches: Vec<RecordBatch>,
    /// What reading stepped over, and the counter paths that selected nothing while others did.
    pub(crate) warnings: Vec<String>,
}

/// `schema` (the wide or long form of `header`'s log) with the log's description in its metadata:
/// the keys the Parquet form keeps (`perfcounters.*`: source, kind, zone, bias and rules, columns
/// with their counter types; the layout marker only in the long form) and
/// `perfcounters.machines`, the machines of the columns, one per line.
fn schema_with_metadata(schema: &Schema, header: &LogHeader, tidy: bool) -> SchemaRef {
    let mut metadata: std::collections::HashMap<String, String> =
        header_metadata(header).into_iter().collect();
    if !tidy {
        // The layout marker names the long form of the Parquet files.
        metadata.remove(KEY_FORMAT);
    }
    let mut machines: Vec<&str> = Vec::new();
    for c in &header.counters {
        if let Some(m) = c.path.machine.as_deref() {
            if !machines.contains(&m) {
                machines.push(m);
            }
        }
    }
    metadata.insert("perfcounters.machines".to_owned(), machines.join("\n"));
    Arc::new(schema.clone().with_metadata(metadata))
}

/// The library's pipeline of `inputs`, in their order: the logs in memory among them read by
/// name through it ([`Pipeline::log_bytes`]).
pub(crate) fn inputs_pipeline(inputs: &[Source]) -> Pipeline {
    let mut pipeline = Pipeline::new(Vec::<String>::new());
    let mut names = Vec::with_capacity(inputs.len());
    for input in inputs {
        match input {
            Source::Path(p) => names.push(p.clone()),
            Source::Memory(log) => {
                names.push(log.name().to_owned());
                pipeline = pipeline.log_bytes(log.clone());
            }
        }
    }
    pipeline.with_inputs(names)
}

/// The library's pipeline of a request: the logs opened and merged as relog merges them, the
/// counters, the name tables and the time range.
fn pipeline(request: &ReadRequest) -> Result<Pipeline, Failure> {
    let names = NameTables::load(&request.names, request.code_page).map_err(|e| {
        let message = ErrorChain(&e).to_string();
        match &e.cause {
            NameFileCause::Io(io) => Failure::Log(Box::new(LogFailure::io(
                &e.path.display().to_string(),
                io,
                message,
            ))),
            _ => Failure::Value(message),
        }
    })?;
    let mut pipeline = inputs_pipeline(&request.inputs)
        .code_page(request.code_page)
        .names(names);
    if let Some(counters) = &request.counters {
        pipeline = pipeline.counters(counters.iter().cloned());
    }
    Ok(pipeline)
}

impl From<PipelineError> for Failure {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Log(e) => e.into(),
            e @ PipelineError::NoInput => {
                Failure::from(RsLogError::usage("(no input)", e.to_string()))
            }
            e => Failure::Value(match &e {
                PipelineError::NoMatch { .. } => e.message("`counters`", "`names`"),
                _ => ErrorChain(&e).to_string(),
            }),
        }
    }
}

/// `pipeline` with the request's time range.
fn with_bounds(mut pipeline: Pipeline, request: &ReadRequest) -> Result<Pipeline, Failure> {
    if request.begin.is_some() || request.end.is_some() {
        let bound = |b: TimeBound| {
            log_time(b.micros)
                .map(|t| {
                    if b.aware {
                        PipelineBound::Utc(t)
                    } else {
                        PipelineBound::Local(t)
                    }
                })
                .ok_or_else(|| {
                    Failure::Value(format!("time bound {} µs is out of range", b.micros))
                })
        };
        pipeline = pipeline
            .begin(request.begin.map(bound).transpose()?)
            .end(request.end.map(bound).transpose()?);
    }
    Ok(pipeline)
}

/// Opens, merges and filters the logs through the library's pipeline, and reads them into batches
/// of the wide or long form.
fn read(request: &ReadRequest) -> Result<Batches, Failure> {
    let pipeline = with_bounds(pipeline(request)?, request)?;
    let opened = pipeline.open()?;
    let mut warnings: Vec<String> = opened.warnings().to_vec();
    warnings.extend(opened.unmatched().iter().map(|u| u.message("`names`")));
    let filtered = opened.into_reader();
    let header = filtered.header().clone();
    let (schema, batches): (SchemaRef, Vec<Result<RecordBatch, RsLogError>>) = if request.tidy {
        let long = LongBatches::new(filtered)?;
        (long.schema().clone(), long.collect())
    } else {
        let wide = WideBatches::new(filtered);
        (wide_schema(&header), wide.collect())
    };
    let schema = schema_with_metadata(&schema, &header, request.tidy);
    let mut out = Vec::with_capacity(batches.len());
    for b in batches {
        let b = b?;
        out.push(
            b.with_schema(schema.clone())
                .map_err(|e| Failure::Value(e.to_string()))?,
        );
    }
    Ok(Batches {
        schema,
        batches: out,
        warnings,
    })
}

/// Record batches exported once through the Arrow C stream interface: `pyarrow.table(stream)`,
/// `polars.from_arrow(stream)` and DuckDB read it without a Python object per cell.
#[pyclass(module = "perfcounters._perfcounters")]
#[derive(Debug)]
pub(crate) struct ArrowStream {
    inner: Option<Batches>,
    warnings: Vec<String>,
}

impl ArrowStream {
    /// The stream of `batches`.
    pub(crate) fn new(mut batches: Batches) -> Self {
        ArrowStream {
            warnings: std::mem::take(&mut batches.warnings),
            inner: Some(batches),
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// What reading stepped over, and the counter paths that selected nothing while others did:
    /// the warnings the command prints, one message each.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The PyCapsule `arrow_array_stream` of the batches; a second call raises `ValueError`.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is the log's: a requested one is a hint the protocol lets producers ignore.
        let _ = requested_schema;
        let Batches {
            schema, batches, ..
        } = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("the Arrow stream was already consumed"))?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new(py, stream, Some(c"arrow_array_stream".to_owned()))
    }
}

/// Reads logs into an Arrow stream (see `perfcounters.read_log`); the GIL is released while
/// reading.
#[pyfunction]
#[pyo3(signature = (inputs, counters = None, names = Vec::new(), begin = None, end = None, tidy = false, code_page = None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
fn read_log(
    py: Python<'_>,
    inputs: Vec<Input>,
    counters: Option<Vec<String>>,
    names: Vec<String>,
    begin: Option<(i64, bool)>,
    end: Option<(i64, bool)>,
    tidy: bool,
    code_page: Option<u16>,
) -> PyResult<ArrowStream> {
    let bound = |b: Option<(i64, bool)>| b.map(|(micros, aware)| TimeBound { micros, aware });
    let request = ReadRequest {
        inputs: sources(inputs),
        counters,
        names,
        begin: bound(begin),
        end: bound(end),
        tidy,
        code_page,
    };
    match py.detach(|| read(&request)) {
        Ok(b) => Ok(ArrowStream::new(b)),
        Err(f) => Err(f.into_py(py)),
    }
}

/// The extension module.
#[pymodule]
fn _perfcounters(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("LogError", py.get_type::<LogError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add_class::<ArrowStream>()?;
    m.add_function(wrap_pyfunction!(read_log, m)?)?;
    m.add_function(wrap_pyfunction!(compare::compare, m)?)?;
    m.add_function(wrap_pyfunction!(analyze::analyze, m)?)?;
    m.add_function(wrap_pyfunction!(partitions::long_form_partitions, m)?)?;
    m.add_class::<live::Query>()?;
    m.add_function(wrap_pyfunction!(live::list_counters, m)?)?;
    Ok(())
}
