//! Live counters of the local machine (procfs on Linux, the registry and PerfLib on Windows):
//! `Query` and `list_counters`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use perfcounters::log::columnar::{wide_batch, wide_schema};
use perfcounters::log::{Cell, LogCounter, LogFormat, LogHeader, LogTime, Record};
use perfcounters::query::{LiveQuery, Query as RsQuery};
use perfcounters::source::{self, Catalog, Request, Source, SourceError};
use perfcounters::{ErrorChain, FormatOptions};

use crate::{ArrowStream, Batches};

/// The source of the live tables and their metadata.
const LOCAL: &str = "local";

fn source_error(e: SourceError) -> PyErr {
    PyOSError::new_err(format!("local counters: {}", ErrorChain(&e)))
}

/// A query's state: the source, the query (and when its wildcards are expanded again) and its
/// request.
struct Live {
    source: Box<dyn Source + Send>,
    live: LiveQuery,
    request: Request,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("paths", &self.live.query().paths())
            .finish_non_exhaustive()
    }
}

/// One collection: its UTC time (`FILETIME` ticks) and, per counter, path, value and status.
type Collected = (LogTime, Vec<(String, Option<f64>, String)>);

impl Live {
    /// Collects once; wildcards are expanded again when the schedule says so ([`LiveQuery`]), so
    /// that instances that start appear and those that exit go.
    fn collect(&mut self) -> Result<Collected, SourceError> {
        let collection = self.live.collect(&mut *self.source, &self.request)?;
        let query = self.live.query();
        let time = LogTime(collection.system_time.to_filetime().unwrap_or(0));
        let rows = query
            .counters()
            .iter()
            .zip(query.values())
            .map(|(c, v)| (c.path_string(), v.value(), v.status().to_string()))
            .collect();
        Ok((time, rows))
    }
}

/// Counter paths collected together from the local machine, as typeperf collects them: wildcards
/// expand on the first collection and again at the second, then every 10 s of collections (so a
/// process that starts gets its instances and one that exits loses them), and rates have a value
/// from the second sample of a counter on.
#[pyclass(module = "perfcounters._perfcounters")]
#[derive(Debug)]
pub struct Query {
    live: Mutex<Live>,
    /// The statuses of the last collection, by path.
    statuses: Mutex<Vec<(String, String)>>,
}

#[pymethods]
impl Query {
    /// A query of `paths` (PDH counter paths, wildcards allowed) on the local machine.
    #[new]
    fn new(py: Python<'_>, paths: Vec<String>) -> PyResult<Self> {
        if paths.is_empty() {
            return Err(PyValueError::new_err(
                "a query needs at least one counter path",
            ));
        }
        let mut query = RsQuery::new(FormatOptions::default());
        for p in &paths {
            query
                .add(p)
                .map_err(|e| PyValueError::new_err(format!("invalid counter path {p}: {e}")))?;
        }
        let live = py.detach(|| -> Result<Live, SourceError> {
            let mut source = source::local()?;
            let catalog = source.catalog()?;
            let request = query.request(&catalog);
            Ok(Live {
                source,
                live: LiveQuery::new(query),
                request,
            })
        });
        Ok(Query {
            live: Mutex::new(live.map_err(source_error)?),
            statuses: Mutex::new(Vec::new()),
        })
    }

    /// Collects once: `{path: value}` for every expanded counter, `None` where the counter has no
    /// value (see `statuses`).
    fn collect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (_, rows) = py.detach(|| self.lock().collect()).map_err(source_error)?;
        let out = PyDict::new(py);
        let mut statuses = Vec::with_capacity(rows.len());
        for (path, value, status) in rows {
            out.set_item(&path, value)?;
            statuses.push((path, status));
        }
        *self.statuses.lock().unwrap_or_else(PoisonError::into_inner) = statuses;
        // As watch: a query none of whose paths can ever have a value is an error, with the
        // close names of each (the statuses stay readable).
        let live = self.lock();
        let query = live.live.query();
        if query.none_usable() {
            return Err(PyValueError::new_err(query.none_usable_message()));
        }
        Ok(out)
    }

    /// The PDH status of every counter at the last collection (`PDH_CSTATUS_VALID_DATA`,
    /// `PDH_NO_DATA` for the first sample of a rate, `PDH_CSTATUS_NO_INSTANCE` …).
    fn statuses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (path, status) in self
            .statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            out.set_item(path, status)?;
        }
        Ok(out)
    }

    /// Collects `samples` times, `interval` seconds apart, into an Arrow stream of the wide form:
    /// `time` (UTC) and one float64 column per counter collected, in the order they first
    /// appeared: the union of every collection's counters, null where a counter was not collected
    /// (an instance that started later or exited earlier) or had no value.
    fn table(&self, py: Python<'_>, samples: usize, interval: f64) -> PyResult<ArrowStream> {
        if samples == 0 {
            return Err(PyValueError::new_err("samples must be at least 1"));
        }
        let interval = Duration::try_from_secs_f64(interval)
            .map_err(|_| PyValueError::new_err(format!("bad interval {interval} s")))?;
        let result = py.detach(|| -> Result<_, SourceError> {
            let mut live = self.lock();
            let mut rows = Vec::with_capacity(samples);
            let start = Instant::now();
            for i in 0..samples {
                if i > 0 {
                    // On a fixed schedule from the first collection, as typeperf -si.
                    let due = start + interval * u32::try_from(i).unwrap_or(u32::MAX);
                    std::thread::sleep(due.saturating_duration_since(Instant::now()));
                }
                rows.push(live.collect()?);
            }
            Ok(rows)
        });
        let rows = result.map_err(source_error)?;
        // The columns: every counter of every collection, in the order they first appeared.
        let mut column_of: HashMap<&str, usize> = HashMap::new();
        let mut paths: Vec<String> = Vec::new();
        for (_, cells) in &rows {
            for (p, _, _) in cells {
                column_of.entry(p.as_str()).or_insert_with(|| {
                    paths.push(p.clone());
                    paths.len() - 1
                });
            }
        }
        let mut counters = Vec::with_capacity(paths.len());
        for p in &paths {
            let path = perfcounters::path::CounterPath::parse(p)
                .map_err(|e| PyValueError::new_err(format!("counter path {p}: {e}")))?;
            counters.push(LogCounter {
                name: p.clone(),
                path,
                info: None,
            });
        }
        // A UTC clock: no zone, so the times are taken as UTC.
        let header = LogHeader {
            source: LOCAL.to_owned(),
            kind: LogFormat::Csv,
            time_zone: None,
            counters,
        };
        let records: Vec<Record> = rows
            .iter()
            .map(|(time, cells)| {
                // A counter not collected this time (not started yet, or gone) is blank.
                let mut row = vec![Cell::Blank; paths.len()];
                for (p, v, _) in cells {
                    if let (Some(&i), Some(v)) = (column_of.get(p.as_str()), v) {
                        if let Some(c) = row.get_mut(i) {
                            *c = Cell::Value(*v);
                        }
                    }
                }
                Record {
                    time: *time,
                    cells: row,
                }
            })
            .collect();
        let schema = wide_schema(&header);
        let batch = wide_batch(&header, &schema, &records)
            .map_err(|e| PyValueError::new_err(ErrorChain(&e).to_string()))?;
        Ok(ArrowStream::new(Batches {
            warnings: Vec::new(),
            schema,
            batches: vec![batch],
        }))
    }

    fn __repr__(&self) -> String {
        let live = self.lock();
        let paths: Vec<String> = live
            .live
            .query()
            .paths()
            .iter()
            .map(ToString::to_string)
            .collect();
        format!("Query({paths:?})")
    }
}

impl Query {
    fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The catalog of the local machine as a table: one row per counter, with its object.
fn catalog_batch(catalog: &Catalog, object: Option<&str>) -> PyResult<Batches> {
    let objects: Vec<_> = match object {
        None => catalog.objects.iter().collect(),
        Some(name) => {
            let found = catalog
                .find_or_suggest(name)
                .map_err(PyValueError::new_err)?;
            vec![found]
        }
    };
    let mut object_names = Vec::new();
    let mut multi = Vec::new();
    let mut counter_names = Vec::new();
    let mut types = Vec::new();
    let mut type_names = Vec::new();
    let mut detail = Vec::new();
    let mut help = Vec::new();
    for o in objects {
        for c in &o.counters {
            object_names.push(o.name.as_str());
            multi.push(o.multi_instance);
            counter_names.push(c.name.as_str());
            types.push(c.counter_type.0);
            type_names.push(c.counter_type.to_string());
            detail.push(c.detail_level);
            help.push(c.help.as_str());
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("object", DataType::Utf8, false),
        Field::new("multi_instance", DataType::Boolean, false),
        Field::new("counter", DataType::Utf8, false),
        Field::new("counter_type", DataType::UInt32, false),
        Field::new("counter_type_name", DataType::Utf8, false),
        Field::new("detail_level", DataType::UInt32, false),
        Field::new("help", DataType::Utf8, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(object_names)),
        Arc::new(BooleanArray::from(multi)),
        Arc::new(StringArray::from(counter_names)),
        Arc::new(UInt32Array::from(types)),
        Arc::new(StringArray::from(type_names)),
        Arc::new(UInt32Array::from(detail)),
        Arc::new(StringArray::from(help)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(Batches {
        warnings: Vec::new(),
        schema,
        batches: vec![batch],
    })
}

/// The counters of the local machine (of one `object` when given) as an Arrow stream.
#[pyfunction]
#[pyo3(signature = (object = None))]
pub fn list_counters(py: Python<'_>, object: Option<String>) -> PyResult<ArrowStream> {
    let catalog = py
        .detach(|| source::local().and_then(|mut s| s.catalog()))
        .map_err(source_error)?;
    Ok(ArrowStream::new(catalog_batch(
        &catalog,
        object.as_deref(),
    )?))
}
