//! The Windows sources: the performance registry (V1) and PerfLib V2, joined into one catalog.
//!
//! The logic (buffer growth, retries, decoding, naming, routing requests) is ordinary code over two
//! small traits, [`PerfRegistry`] and [`PerfLibApi`], so it builds and is tested on every platform
//! with injected results. On Windows, `Registry` and `PerfLib` implement the traits with thin wrappers
//! over `windows-sys`, and `WindowsSource::local` opens the local machine.
//!
//! * V1: `RegQueryValueExW(HKEY_PERFORMANCE_DATA, "<indexes>")` → [`crate::format::v1`], named from
//!   `HKEY_PERFORMANCE_TEXT` (English) — see [`RegistrySource`].
//! * V2: `PerfEnumerateCounterSet` … `PerfQueryCounterData` → [`crate::format::v2`] — see
//!   [`PerfLibSource`]. The V2 functions are looked up at run time; where they are missing (older
//!   systems, Wine) V2 is reported unavailable instead of being called.
//! * [`WindowsSource`] lists V1 objects first, then the V2 countersets that no V1 object already
//!   names (such as "Processor Information" or "Process V2" on systems that do not publish them through
//!   the registry), and sends each requested object to the source that offers it.

mod codes;
mod grow;
mod perflib;
mod record;
mod registry;

#[cfg(windows)]
mod ffi;

#[cfg(windows)]
pub use ffi::{
    missing_consumer_functions, ui_language, windows_version_value, wine_version, PerfLib, Registry,
};
pub use grow::{Filled, GrowPolicy};
pub use perflib::{PerfLibApi, PerfLibSource, QueryHandle, Registered};
pub use record::{record, RecordOptions};
pub use registry::{PerfKey, PerfRegistry, RawNameTables, RegistrySource};

use crate::error_chain::ErrorChain;
use crate::path::eq_ignore_case;
use crate::snapshot::Snapshot;
use crate::source::snapshots::combine;
use crate::source::{Catalog, ObjectRequest, Request, Source, SourceError, SourceErrorKind};

/// Which source serves an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    V1,
    V2,
}

/// The registry (V1) and PerfLib (V2) sources of one machine behind one catalog.
pub struct WindowsSource<R: PerfRegistry, P: PerfLibApi> {
    v1: RegistrySource<R>,
    v2: PerfLibSource<P>,
    routes: Vec<(String, Route)>,
    system_name: String,
    v2_problem: Option<String>,
    last_v1: bool,
    last_v2: bool,
}

impl<R: PerfRegistry, P: PerfLibApi> std::fmt::Debug for WindowsSource<R, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowsSource")
            .field("v1", &self.v1)
            .field("v2", &self.v2)
            .field("routes", &self.routes)
            .field("system_name", &self.system_name)
            .field("v2_problem", &self.v2_problem)
            .finish_non_exhaustive()
    }
}

#[cfg(windows)]
impl WindowsSource<ffi::Registry, ffi::PerfLib> {
    /// The local machine.
    pub fn local() -> Self {
        WindowsSource::new(ffi::Registry::new(), ffi::PerfLib::new())
    }
}

impl<R: PerfRegistry, P: PerfLibApi> WindowsSource<R, P> {
    /// Joins a registry and a PerfLib source.
    pub fn new(registry: R, perflib: P) -> Self {
        WindowsSource {
            v1: RegistrySource::new(registry),
            v2: PerfLibSource::new(perflib),
            routes: Vec::new(),
            system_name: String::new(),
            v2_problem: None,
            last_v1: false,
            last_v2: false,
        }
    }

    /// The V1 source.
    pub fn registry(&mut self) -> &mut RegistrySource<R> {
        &mut self.v1
    }

    /// The V2 source.
    pub fn perflib(&mut self) -> &mut PerfLibSource<P> {
        &mut self.v2
    }

    /// The machine's name, from the last V1 block header (empty before the first collection).
    pub fn system_name(&self) -> &str {
        &self.system_name
    }

    /// Why V2 countersets are not listed, when they are not (set by [`Source::catalog`]).
    pub fn v2_problem(&self) -> Option<&str> {
        self.v2_problem.as_deref()
    }

    /// The raw blocks of the last collection: the V1 block and the V2 block, each when that source
    /// took part.
    pub fn last_blocks(&self) -> (Option<&[u8]>, Option<&[u8]>) {
        (
            self.last_v1.then(|| self.v1.last_block()),
            self.last_v2.then(|| self.v2.last_block()),
        )
    }

    fn route(&self, object: &str) -> Option<Route> {
        self.routes
            .iter()
            .find(|(n, _)| eq_ignore_case(n, object))
            .map(|(_, r)| *r)
    }

    fn build_catalog(&mut self) -> Result<Catalog, SourceError> {
        let (mut catalog, snapshot) = self.v1.catalog()?;
        self.system_name = snapshot.system_name.clone();
        self.routes = catalog
            .objects
            .iter()
            .map(|o| (o.name.clone(), Route::V1))
            .collect();
        match self.v2.catalog() {
            Ok(sets) => {
                self.v2_problem = None;
                for (_, info) in sets {
                    if catalog.object(&info.name).is_none() {
                        self.routes.push((info.name.clone(), Route::V2));
                        catalog.objects.push(info);
                    }
                }
            }
            Err(e) => self.v2_problem = Some(ErrorChain(&e).to_string()),
        }
        if catalog.objects.is_empty() {
            let mut why = format!(
                "no performance objects on {}: HKEY_PERFORMANCE_DATA \"Global\" returned a block \
                 with no objects",
                if self.system_name.is_empty() {
                    "this machine".to_string()
                } else {
                    format!("'{}'", self.system_name)
                }
            );
            if let Some(p) = self.v1.name_problem() {
                why.push_str(&format!(" (and the name table could not be read: {p})"));
            }
            match &self.v2_problem {
                Some(p) => why.push_str(&format!(", and {p}")),
                None => why.push_str(", and PerfLib V2 lists no countersets"),
            }
            return Err(SourceError::new(SourceErrorKind::Unavailable, why));
        }
        Ok(catalog)
    }
}

impl<R: PerfRegistry, P: PerfLibApi> Source for WindowsSource<R, P> {
    fn catalog(&mut self) -> Result<Catalog, SourceError> {
        self.build_catalog()
    }

    fn instances(&mut self, object: &str) -> Result<Vec<String>, SourceError> {
        if self.route(object).is_none() {
            self.build_catalog()?;
        }
        match self.route(object) {
            Some(Route::V1) => self.v1.instances(object),
            Some(Route::V2) => {
                let set = self
                    .v2
                    .find(object)
                    .ok_or_else(|| SourceError::unknown_object(object))?;
                self.v2.instances(set)
            }
            None => Err(SourceError::unknown_object(object)),
        }
    }

    fn collect(&mut self, request: &Request) -> Result<Snapshot, SourceError> {
        if request
            .objects
            .iter()
            .any(|o| self.route(&o.object).is_none())
        {
            self.build_catalog()?;
        }
        let mut v1 = Request::new();
        let mut v2 = Request::new();
        for o in &request.objects {
            match self.route(&o.object) {
                Some(Route::V1) => v1.objects.push(o.clone()),
                Some(Route::V2) => v2.objects.push(o.clone()),
                None => return Err(SourceError::unknown_object(&o.object)),
            }
        }
        self.last_v1 = !v1.objects.is_empty();
        self.last_v2 = !v2.objects.is_empty();
        let a = if self.last_v1 {
            let s = self.v1.collect(&v1)?;
            self.system_name = s.system_name.clone();
            Some(s)
        } else {
            None
        };
        let b = if self.last_v2 {
            Some(self.v2.collect(&v2)?)
        } else {
            None
        };
        let mut joined = combine(a, b, &self.system_name).unwrap_or_default();
        // Back to request order across both sources.
        let order = |name: &Option<String>| {
            request
                .objects
                .iter()
                .position(|o: &ObjectRequest| {
                    name.as_deref()
                        .is_some_and(|n| eq_ignore_case(n, &o.object))
                })
                .unwrap_or(usize::MAX)
        };
        joined.objects.sort_by_key(|o| order(&o.name));
        Ok(joined)
    }
}

#[cfg(test)]
mod tests;
