//! The query engine: the PDH analogue.
//!
//! A [`Query`] holds counter paths (with wildcards), expands them against what a source offers, keeps the
//! previous raw sample of every expanded counter instance, and turns each new [`Snapshot`] into values
//! with a status:
//!
//! ```
//! use perfcounters::query::Query;
//! use perfcounters::FormatOptions;
//! let mut q = Query::new(FormatOptions::typeperf());
//! q.add(r"\Processor(*)\% Processor Time").unwrap();
//! q.add(r"\Memory\Available Bytes").unwrap();
//! // for each collection: let values = q.update(&snapshot);
//! ```
//!
//! Semantics follow PDH:
//! * wildcards are expanded on the first update (like typeperf, which fixes its columns once); a path
//!   without wildcards names exactly one instance, which may come and go;
//! * an instance is found by the name its source gave it
//!   ([`Instance::name`](crate::snapshot::Instance::name), with `parent/` and `#n` from
//!   [`crate::snapshot::name_instances`]), compared ignoring case like every name; the column
//!   reads whichever instance holds that name in each collection, as PDH does;
//! * an instance that is missing in a collection yields `PDH_CSTATUS_NO_INSTANCE`; its previous sample is
//!   dropped, so when it returns the first collection primes it again;
//! * when the instance holding a name is another one than in the previous collection and the data
//!   says so (its `unique_id` differs: a process ID on Linux, a V2 instance ID), the previous sample
//!   is dropped the same way, so no rate mixes two instances. Without that identity (V1 instances named
//!   by name, `unique_id` −1) a `#n` reshuffle pairs two processes' samples like PDH does; a counter
//!   that went backwards then reports `PDH_CSTATUS_INVALID_DATA` for that interval;
//! * two-sample counters have no value on their first collection;
//! * an object or counter that does not exist yields `PDH_CSTATUS_NO_OBJECT` / `PDH_CSTATUS_NO_COUNTER` in
//!   its column (and a [`ExpandError`] with close names), while the other counters go on.

mod compute;
mod counter;
mod error;
mod expand;
mod live;
mod plan;
mod resolve;
mod value;
mod view;

use std::collections::HashMap;
use std::sync::Arc;

use crate::calc::FormatOptions;
use crate::names::NameTable;
use crate::path::{CounterPath, PathError};
use crate::snapshot::{SampleClock, Snapshot, SystemTime};
use crate::source::{BlockSample, Catalog, ObjectInfo, Request, Sample, Source, SourceError};
use crate::status::PdhStatus;

pub use counter::QueryCounter;
pub use error::ExpandError;
pub use live::{ExpandSchedule, LiveQuery, EXPAND_EVERY};
pub use value::CounterValue;

use expand::{expand_one, Names};
use plan::{CounterState, Plan, Run};
use value::missing;
use view::View;

/// A set of counter paths collected together.
///
/// A clone shares the expanded counters ([`Query::counters`]) with the original until either
/// expands again, and copies what collections change (values, previous samples, positions).
#[derive(Clone, Debug, Default)]
pub struct Query {
    options: FormatOptions,
    added: Vec<CounterPath>,
    /// The expanded counters, replaced as a whole by each expansion: a clone of the query
    /// shares them (they are most of a large query's memory, and a collection never reads them).
    counters: Arc<Vec<QueryCounter>>,
    /// The distinct objects, counters and instances the expanded counters read, each looked up
    /// once per collection.
    plan: Plan,
    /// The counters in runs that read one counter of one object, in [`Query::counters`] order.
    runs: Vec<Run>,
    /// One per counter, in [`Query::counters`] order.
    state: Vec<CounterState>,
    /// The values of the last collection, one per counter, in [`Query::counters`] order; their
    /// raw samples are the previous samples of the next collection.
    values: Vec<CounterValue>,
    expanded: bool,
    /// The names in the machine's language of the objects the paths name and of their counters,
    /// taken from the catalog by [`Query::request`], so that expansion matches them too.
    local: NameTable,
    /// For each added path whose object the catalog does not list, the catalog's close names.
    object_hints: HashMap<usize, Vec<String>>,
}

/// What [`Query::collect`] read besides the values.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Collection {
    /// The collection's clock (the snapshot's header, or the block's).
    pub clock: SampleClock,
    /// The collection's UTC wall-clock time.
    pub system_time: SystemTime,
    /// The snapshot, when the source gave one (always for the collection that expands the
    /// query); `None` when the values were read in place from a block.
    pub snapshot: Option<Snapshot>,
}

impl Query {
    /// An empty query with the given formatting options.
    pub fn new(options: FormatOptions) -> Self {
        Query {
            options,
            ..Default::default()
        }
    }

    /// Adds a counter path (wildcards allowed). Returns its position among the added paths.
    pub fn add(&mut self, path: &str) -> Result<usize, PathError> {
        let p = CounterPath::parse(path)?;
        self.add_path(p)
    }

    /// Adds a parsed counter path.
    pub fn add_path(&mut self, path: CounterPath) -> Result<usize, PathError> {
        self.added.push(path);
        self.expanded = false;
        Ok(self.added.len() - 1)
    }

    /// The paths as added.
    pub fn paths(&self) -> &[CounterPath] {
        &self.added
    }

    /// The formatting options.
    pub fn options(&self) -> &FormatOptions {
        &self.options
    }

    /// The [`Request`] that collects what this query needs from a source whose catalog is
    /// `catalog`, so that the source reads only those objects and counters:
    ///
    /// * one object per object the paths name that the catalog lists, in the order the paths first
    ///   name them, spelt as the catalog spells it. An object the catalog does not list is left out;
    ///   the query reports it (`PDH_CSTATUS_NO_OBJECT`) when it expands;
    /// * for each object, the catalog's counters the paths select, in path order: the named counter,
    ///   or every counter a wildcard matches. A wildcard that matches every counter (`*`) asks for
    ///   all of them (an empty list). Companion (base) counters are not listed; sources add them;
    /// * an object whose paths select none of its counters (only unknown counter names) is asked for
    ///   whole, so that the query can report the unknown names with the object's close names.
    ///
    /// Names are compared ignoring case, as the query compares them. A path may name its object and
    /// counter in English or in the machine's language ([`Catalog::local_names`], matched through
    /// the title index, as PDH's `PdhAddCounter` and `PdhAddEnglishCounter` together accept
    /// paths); the request names them in English. The query keeps what it needs of the catalog for
    /// its expansion: the local names of the objects it names (whose columns then show the path as
    /// it was typed), and the catalog's close names for an object the catalog does not list
    /// ([`ExpandError::NoObject`]).
    ///
    /// ```
    /// use perfcounters::query::Query;
    /// use perfcounters::source::{Catalog, CatalogCounter, ObjectInfo, Request};
    /// use perfcounters::{CounterType, FormatOptions};
    ///
    /// let counter = |name: &str| CatalogCounter {
    ///     name: name.into(),
    ///     index: 0,
    ///     help: String::new(),
    ///     counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
    ///     scale: 0,
    ///     detail_level: 100,
    ///     base_type: None,
    /// };
    /// let object = |name: &str, counters: &[&str]| ObjectInfo {
    ///     name: name.into(),
    ///     index: 0,
    ///     help: String::new(),
    ///     detail_level: 100,
    ///     multi_instance: false,
    ///     counters: counters.iter().map(|c| counter(c)).collect(),
    /// };
    /// let catalog = Catalog {
    ///     objects: vec![
    ///         object("Memory", &["Available Bytes", "Committed Bytes", "Page Faults/sec"]),
    ///         object("System", &["Processes", "Threads"]),
    ///     ],
    ///     ..Default::default()
    /// };
    /// let mut q = Query::new(FormatOptions::typeperf());
    /// q.add(r"\memory\available bytes").unwrap();
    /// q.add(r"\Memory\Commit*").unwrap();
    /// q.add(r"\System\*").unwrap();
    /// q.add(r"\Nope\X").unwrap();
    /// assert_eq!(
    ///     q.request(&catalog),
    ///     Request::new()
    ///         .object("Memory", &["Available Bytes", "Committed Bytes"])
    ///         .all_of("System")
    /// );
    /// ```
    pub fn request(&mut self, catalog: &Catalog) -> Request {
        struct Wanted<'a> {
            object: &'a ObjectInfo,
            all: bool,
            counters: Vec<&'a str>,
        }
        let mut wanted: Vec<Wanted<'_>> = Vec::new();
        self.local = NameTable::new();
        self.object_hints.clear();
        for (origin, path) in self.added.iter().enumerate() {
            let Some(object) = catalog.find(&path.object) else {
                self.object_hints
                    .insert(origin, catalog.close_object_names(&path.object));
                continue;
            };
            let w = match wanted.iter().position(|w| std::ptr::eq(w.object, object)) {
                Some(i) => &mut wanted[i],
                None => {
                    wanted.push(Wanted {
                        object,
                        all: false,
                        counters: Vec::new(),
                    });
                    wanted.last_mut().expect("just pushed")
                }
            };
            let selected: Vec<&str> = object
                .counters
                .iter()
                .filter(|c| {
                    path.matches_counter(&c.name)
                        || catalog
                            .local_names_of(c.index)
                            .any(|n| path.matches_counter(n))
                })
                .map(|c| c.name.as_str())
                .collect();
            if path.has_counter_wildcard() && selected.len() == object.counters.len() {
                w.all = true;
            }
            for name in selected {
                if !w.counters.contains(&name) {
                    w.counters.push(name);
                }
            }
        }
        let mut request = Request::new();
        for w in wanted {
            let indexes =
                std::iter::once(w.object.index).chain(w.object.counters.iter().map(|c| c.index));
            for index in indexes {
                for name in catalog.local_names_of(index) {
                    self.local.insert(index, name);
                }
            }
            request = if w.all || w.counters.is_empty() {
                request.all_of(&w.object.name)
            } else {
                request.object(&w.object.name, &w.counters)
            };
        }
        request
    }

    /// Whether the paths have been expanded (after the first [`Query::update`]).
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// The expanded counters, in column order. Empty before the first [`Query::update`].
    pub fn counters(&self) -> &[QueryCounter] {
        &self.counters
    }

    /// Expansion problems (unknown objects, counters, instances), one per failing path.
    pub fn errors(&self) -> impl Iterator<Item = &ExpandError> {
        self.counters.iter().filter_map(|c| c.error.as_ref())
    }

    /// Whether no counter of the expanded query can ever have a value: every one names an object
    /// or a counter the source does not offer (a missing instance may still appear, a process
    /// that starts). `watch` and the Python `Query` then stop with [`errors`](Self::errors).
    pub fn none_usable(&self) -> bool {
        !self.counters.is_empty()
            && self.counters.iter().all(|c| {
                c.error
                    .as_ref()
                    .is_some_and(|e| !matches!(e, ExpandError::NoInstance { .. }))
            })
    }

    /// [`none_usable`](Self::none_usable)'s message: `no valid counters:` and each path's problem
    /// on a line of its own, with the close names.
    pub fn none_usable_message(&self) -> String {
        let mut text = String::from("no valid counters:");
        for e in self.errors() {
            text.push_str(&format!("\n  {e}"));
        }
        text
    }

    /// Expands the added paths against a snapshot: every wildcard is replaced by the matching objects'
    /// counters and instances, in data order. Called by the first [`Query::update`]; call it again to pick
    /// up new instances.
    pub fn expand(&mut self, snapshot: &Snapshot) {
        let machine = if snapshot.system_name.is_empty() {
            None
        } else {
            Some(snapshot.system_name.clone())
        };
        let mut counters = Vec::new();
        for (origin, pattern) in self.added.iter().enumerate() {
            let names = Names {
                local: &self.local,
                object_hint: self.object_hints.get(&origin).map(Vec::as_slice),
            };
            expand_one(
                snapshot,
                machine.as_deref(),
                (origin, pattern),
                &names,
                &mut counters,
            );
        }
        // Counters that survive a re-expansion keep their last value, and so their previous sample
        // (a path that two patterns expand to, as `\Processor(_Total)\…` beside `\Processor(*)\…`,
        // is two counters: each keeps it).
        let mut old: HashMap<String, (CounterValue, i32)> = HashMap::new();
        let kept = self.state.drain(..).zip(self.values.drain(..));
        for (c, (state, value)) in self.counters.iter().zip(kept) {
            if value.raw().is_some() {
                old.insert(c.path.key(), (value, state.unique_id));
            }
        }
        let (plan, runs, mut state) = Plan::build(&counters);
        let values = counters
            .iter()
            .zip(&mut state)
            .map(|(c, state)| match old.get(&c.path.key()).cloned() {
                Some((value, unique_id)) => {
                    state.unique_id = unique_id;
                    value
                }
                None => missing(PdhStatus::PDH_NO_DATA),
            })
            .collect();
        self.plan = plan;
        self.runs = runs;
        self.state = state;
        self.values = values;
        self.counters = Arc::new(counters);
        self.expanded = true;
    }

    /// The values of the last collection ([`Query::collect`], [`Query::update`]), one per
    /// counter in [`Query::counters`] order. A counter that no collection has computed yet has
    /// no value and the status `PDH_NO_DATA`; a failed collection leaves the values as they were.
    pub fn values(&self) -> &[CounterValue] {
        &self.values
    }

    /// Feeds one collection: expands on the first call, then computes every counter's value from this
    /// snapshot and the previous one. Values are in [`Query::counters`] order, a copy of
    /// [`Query::values`].
    pub fn update(&mut self, snapshot: &Snapshot) -> Vec<CounterValue> {
        self.update_values(snapshot);
        self.values.clone()
    }

    /// [`Query::update`] into [`Query::values`].
    fn update_values(&mut self, snapshot: &Snapshot) {
        if !self.expanded {
            self.expand(snapshot);
        }
        self.compute(snapshot);
    }

    /// Collects `request` (from [`Query::request`]) from `source` and computes the values into
    /// [`Query::values`], as [`Source::collect`] followed by [`Query::update`] would, with the
    /// same values, statuses and errors. A query not expanded yet (its first collection) takes
    /// the source's snapshot; later collections take whatever [`Source::collect_sample`] gives,
    /// so a replay of V1 block files is read in place without building a snapshot.
    ///
    /// # Errors
    /// The source's error; the query's values (and so its previous samples) are then unchanged.
    pub fn collect<S: Source + ?Sized>(
        &mut self,
        source: &mut S,
        request: &Request,
    ) -> Result<Collection, SourceError> {
        // The collection that expands the paths needs the whole snapshot.
        let sample = if self.expanded {
            source.collect_sample(request)?
        } else {
            Sample::Snapshot(source.collect(request)?)
        };
        match sample {
            Sample::Snapshot(snapshot) => {
                self.update_values(&snapshot);
                Ok(Collection {
                    clock: snapshot.clock(),
                    system_time: snapshot.system_time,
                    snapshot: Some(snapshot),
                })
            }
            Sample::Block(block) => {
                self.compute_block(&block);
                Ok(Collection {
                    clock: block.clock(),
                    system_time: block.system_time(),
                    snapshot: None,
                })
            }
        }
    }

    /// As [`Query::collect`], but the paths are expanded again against this collection's snapshot
    /// before the values are computed, as re-running PDH's `PdhExpandWildCardPath` does: a wildcard
    /// gains the instances that appeared since the last expansion and loses those that went (a
    /// wildcard that matches nothing keeps its one counter with `PDH_CSTATUS_NO_INSTANCE`), and the
    /// counters that stay keep their previous sample ([`Query::expand`]). The source always gives a
    /// whole snapshot ([`Source::collect`]), which [`Collection::snapshot`] holds.
    ///
    /// # Errors
    /// The source's error; the query is then unchanged.
    pub fn collect_expanded<S: Source + ?Sized>(
        &mut self,
        source: &mut S,
        request: &Request,
    ) -> Result<Collection, SourceError> {
        let snapshot = source.collect(request)?;
        self.expand(&snapshot);
        self.compute(&snapshot);
        Ok(Collection {
            clock: snapshot.clock(),
            system_time: snapshot.system_time,
            snapshot: Some(snapshot),
        })
    }

    /// [`Query::compute`] from a block read in place. Not generic: the code of a collection is
    /// generated once, in this crate, whatever source [`Query::collect`] is called with.
    fn compute_block(&mut self, block: &BlockSample<'_>) {
        self.compute(block);
    }

    /// Every counter's value from `view` and the previous samples, into [`Query::values`].
    #[inline]
    fn compute<V: View + ?Sized>(&mut self, view: &V) {
        compute::compute(
            view,
            &self.options,
            &mut self.plan,
            &self.runs,
            &mut self.state,
            &mut self.values,
        );
    }
}
