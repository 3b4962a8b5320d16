//! One expanded counter ([`QueryCounter`]): its concrete path, the names the data gives it and
//! where expansion found it.

use crate::counter_type::CounterType;
use crate::path::CounterPath;

use super::error::ExpandError;

/// One expanded counter: a concrete path and its state.
#[derive(Clone, Debug)]
pub struct QueryCounter {
    /// The concrete path (no wildcards), qualified with the source's machine name.
    pub path: CounterPath,
    /// Which added path (0-based, in `add` order) this counter came from.
    pub origin: usize,
    /// Set when the path could not be resolved: its value column reports this status.
    pub error: Option<ExpandError>,
    /// The counter's type (for units); `PERF_COUNTER_NODATA` when the path did not resolve.
    pub counter_type: CounterType,
    /// The object's and the counter's names as the data names them; `path` spells them as the
    /// added path did, which may be in the machine's language.
    pub(super) object: String,
    pub(super) counter: String,
    /// The instance's name as its source named it
    /// ([`Instance::name`](crate::snapshot::Instance::name)), found again in later collections
    /// ignoring case; `None` for a single-instance object.
    pub(super) instance: Option<String>,
    /// Where expansion found the object, counter and instance; [`Plan`](super::plan::Plan)
    /// starts from them.
    pub(super) object_pos: usize,
    pub(super) counter_pos: usize,
    pub(super) instance_pos: usize,
}

impl QueryCounter {
    /// The path as a string (`\\MACHINE\Object(Instance)\Counter`).
    pub fn path_string(&self) -> String {
        self.path.to_string()
    }

    /// The object's name as the source names it (in English for the sources of this crate).
    /// [`QueryCounter::path`] spells the object as the added path named it, which may be a name in
    /// the machine's language ([`Catalog::local_names`](crate::source::Catalog::local_names)).
    pub fn object_name(&self) -> &str {
        &self.object
    }

    /// The counter's name as the source names it; see [`QueryCounter::object_name`].
    pub fn counter_name(&self) -> &str {
        &self.counter
    }
}
