//! The PerfLib V2 source: countersets read through the V2 consumer functions
//! (`PerfEnumerateCounterSet` … `PerfQueryCounterData`), decoded by [`crate::format::v2`].

use std::collections::HashMap;
use std::time::Duration;

use super::grow::{fill_reported, Filled, GrowPolicy};
use crate::format::v2::{
    decode_guid_list, decode_instance_list, to_snapshot, CounterSetRegistration, CounterSpec,
    DataHeader, EncodedRegistration, Guid, RegistrationBuffers, PERF_REG_COUNTERSET_ENGLISH_NAME,
    PERF_REG_COUNTERSET_HELP_STRING, PERF_REG_COUNTERSET_STRUCT, PERF_REG_COUNTER_ENGLISH_NAMES,
    PERF_REG_COUNTER_HELP_STRINGS, PERF_WILDCARD_COUNTER,
};
use crate::path::eq_ignore_case;
use crate::snapshot::Snapshot;
use crate::source::snapshots::{counterset_info, keep_objects};
use crate::source::{ObjectInfo, Request, SourceError, SourceErrorKind};

/// The instance id that matches any instance.
const ANY_INSTANCE_ID: u32 = 0xFFFF_FFFF;
/// The language of help texts asked for: English (United States).
const LANG_ENGLISH_US: u32 = 0x0409;

/// An open PerfLib query (`HANDLE`), opaque to the source.
///
/// Only the Windows implementation of [`PerfLibApi::open_query`] (and the test doubles of this
/// crate) make one, from the handle `PerfOpenQueryHandle` returned: other code can hold and compare
/// handles but not forge one, so the consumer functions are only ever given a handle they opened.
///
/// ```compile_fail
/// let forged = perfcounters::source::windows::QueryHandle(7);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueryHandle(usize);

impl QueryHandle {
    /// The handle of an open query.
    #[cfg_attr(not(any(windows, test)), allow(dead_code))]
    pub(super) fn from_raw(raw: usize) -> QueryHandle {
        QueryHandle(raw)
    }

    /// The raw `HANDLE` value.
    #[cfg_attr(not(windows), allow(dead_code))]
    pub(super) fn raw(self) -> usize {
        self.0
    }
}

/// The PerfLib V2 consumer calls the source needs. The real implementation (Windows only) resolves
/// them from `advapi32.dll` at run time and wraps each in a few lines; tests inject results. A
/// [`QueryHandle`] is made only by the implementations in this crate.
///
/// Buffer-filling calls take a byte buffer and report the Win32 status and a size in bytes (the bytes
/// written, or the bytes needed with `ERROR_NOT_ENOUGH_MEMORY`).
pub trait PerfLibApi {
    /// Whether the consumer functions can be called on this system; `Err` says why not (for example
    /// which functions `advapi32.dll` does not export). Nothing else is called after an `Err`.
    fn check(&mut self) -> Result<(), String>;

    /// `PerfEnumerateCounterSet(NULL, …)`: the counterset GUIDs, 16 bytes each (sizes in bytes).
    fn enumerate_counter_sets(&mut self, buf: &mut [u8]) -> Filled;

    /// `PerfQueryCounterSetRegistrationInfo(NULL, set, request, lang, …)`.
    fn registration_info(&mut self, set: Guid, request: u32, lang: u32, buf: &mut [u8]) -> Filled;

    /// `PerfEnumerateCounterSetInstances(NULL, set, …)`: a `PERF_INSTANCE_HEADER` list.
    fn enumerate_instances(&mut self, set: Guid, buf: &mut [u8]) -> Filled;

    /// `PerfOpenQueryHandle(NULL, &handle)`.
    fn open_query(&mut self) -> Result<QueryHandle, u32>;

    /// `PerfAddCounters(query, ids, size)`: `ids` is a `PERF_COUNTER_IDENTIFIER` list whose `Status`
    /// fields the call fills.
    fn add_counters(&mut self, query: QueryHandle, ids: &mut [u8]) -> u32;

    /// `PerfDeleteCounters(query, ids, size)`.
    fn delete_counters(&mut self, query: QueryHandle, ids: &mut [u8]) -> u32;

    /// `PerfQueryCounterInfo(query, …)`: the query's `PERF_COUNTER_IDENTIFIER` list with each
    /// specification's result `Index`.
    fn query_counter_info(&mut self, query: QueryHandle, buf: &mut [u8]) -> Filled;

    /// `PerfQueryCounterData(query, …)`: a `PERF_DATA_HEADER` block.
    fn query_counter_data(&mut self, query: QueryHandle, buf: &mut [u8]) -> Filled;

    /// `PerfCloseQueryHandle(query)`.
    fn close_query(&mut self, query: QueryHandle) -> u32;

    /// Waits before a retry of a busy call.
    fn pause(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// One counterset's registration, decoded and as returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registered {
    /// The decoded registration (English names).
    pub registration: CounterSetRegistration,
    /// The raw results it was decoded from.
    pub raw: EncodedRegistration,
}

/// A V2 source over the PerfLib consumer functions.
///
/// One query handle is opened on first collection. Each requested counterset is added once, as one
/// `PERF_COUNTER_IDENTIFIER` with the wildcard counter and the instance filter `*` (multi-instance) or
/// `""` (single-instance), and deleted again when a later request no longer needs it. The handle is
/// closed when the source is dropped.
pub struct PerfLibSource<P: PerfLibApi> {
    api: P,
    policy: GrowPolicy,
    checked: Option<Result<(), String>>,
    sets: Option<Vec<Guid>>,
    registrations: HashMap<Guid, Registered>,
    query: Option<QueryHandle>,
    added: Vec<(Guid, Vec<u8>)>,
    specs: Vec<CounterSpec>,
    specs_raw: Vec<u8>,
    data: Vec<u8>,
    data_len: usize,
}

impl<P: PerfLibApi> std::fmt::Debug for PerfLibSource<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfLibSource")
            .field("policy", &self.policy)
            .field("query", &self.query)
            .field("countersets", &self.sets.as_ref().map(Vec::len))
            .field("added", &self.added.len())
            .finish_non_exhaustive()
    }
}

impl<P: PerfLibApi> PerfLibSource<P> {
    /// A source over `api` with the default [`GrowPolicy`].
    pub fn new(api: P) -> Self {
        PerfLibSource {
            api,
            policy: GrowPolicy {
                initial: 0,
                ..GrowPolicy::default()
            },
            checked: None,
            sets: None,
            registrations: HashMap::new(),
            query: None,
            added: Vec::new(),
            specs: Vec::new(),
            specs_raw: Vec::new(),
            data: Vec::new(),
            data_len: 0,
        }
    }

    /// The consumer calls.
    pub fn api(&mut self) -> &mut P {
        &mut self.api
    }

    /// `Ok` when the V2 functions can be used here; an [`SourceErrorKind::Unavailable`] error that
    /// says why otherwise.
    pub fn available(&mut self) -> Result<(), SourceError> {
        let checked = self.checked.get_or_insert_with(|| self.api.check());
        checked.clone().map_err(|why| {
            SourceError::new(
                SourceErrorKind::Unavailable,
                format!("PerfLib V2 is unavailable: {why}"),
            )
        })
    }

    fn fill(
        &mut self,
        what: (&str, &str),
        buf: &mut Vec<u8>,
        call: &mut dyn FnMut(&mut P, &mut [u8]) -> Filled,
    ) -> Result<usize, SourceError> {
        let api = &mut self.api;
        let mut pauses = Vec::new();
        let r = fill_reported(buf, &self.policy, what, &mut |d| pauses.push(d), &mut |b| {
            call(api, b)
        });
        for d in pauses {
            self.api.pause(d);
        }
        r
    }

    /// The GUIDs of every registered counterset.
    pub fn counter_sets(&mut self) -> Result<Vec<Guid>, SourceError> {
        self.available()?;
        if let Some(s) = &self.sets {
            return Ok(s.clone());
        }
        let mut buf = Vec::new();
        let n = self.fill(
            ("PerfEnumerateCounterSet", "NULL"),
            &mut buf,
            &mut |api, b| api.enumerate_counter_sets(b),
        )?;
        let list = decode_guid_list(buf.get(..n).unwrap_or_default()).map_err(|e| {
            SourceError::decode("PerfEnumerateCounterSet returned a malformed list", e)
        })?;
        self.sets = Some(list.clone());
        Ok(list)
    }

    fn reg_info(&mut self, set: Guid, request: u32, lang: u32) -> Result<Vec<u8>, SourceError> {
        let context = format!("{set}, {request}, {lang:#06x}");
        let mut buf = Vec::new();
        let n = self.fill(
            ("PerfQueryCounterSetRegistrationInfo", &context),
            &mut buf,
            &mut |api, b| api.registration_info(set, request, lang, b),
        )?;
        buf.truncate(n);
        Ok(buf)
    }

    /// The registration of counterset `set`, with English names (read once, then cached).
    pub fn registration(&mut self, set: Guid) -> Result<&Registered, SourceError> {
        self.available()?;
        if !self.registrations.contains_key(&set) {
            let structure = self.reg_info(set, PERF_REG_COUNTERSET_STRUCT, 0)?;
            let name = self.reg_info(set, PERF_REG_COUNTERSET_ENGLISH_NAME, 0).ok();
            let help = self
                .reg_info(set, PERF_REG_COUNTERSET_HELP_STRING, LANG_ENGLISH_US)
                .ok();
            let counter_names = self.reg_info(set, PERF_REG_COUNTER_ENGLISH_NAMES, 0).ok();
            let counter_helps = self
                .reg_info(set, PERF_REG_COUNTER_HELP_STRINGS, LANG_ENGLISH_US)
                .ok();
            let registration = CounterSetRegistration::decode(RegistrationBuffers {
                structure: &structure,
                name: name.as_deref(),
                help: help.as_deref(),
                counter_names: counter_names.as_deref(),
                counter_helps: counter_helps.as_deref(),
            })
            .map_err(|e| {
                SourceError::decode(format!("counterset {set}: malformed registration"), e)
            })?;
            let raw = EncodedRegistration {
                structure,
                name,
                help,
                counter_names: counter_names.unwrap_or_default(),
                counter_helps: counter_helps.unwrap_or_default(),
            };
            self.registrations
                .insert(set, Registered { registration, raw });
        }
        Ok(self.registrations.get(&set).expect("inserted above"))
    }

    /// Every counterset that has a usable registration and an English name, described as catalog
    /// objects. Countersets whose registration cannot be read are left out (a broken provider must not
    /// hide the others).
    pub fn catalog(&mut self) -> Result<Vec<(Guid, ObjectInfo)>, SourceError> {
        let mut out = Vec::new();
        for set in self.counter_sets()? {
            let Ok(r) = self.registration(set) else {
                continue;
            };
            if let Some(info) = counterset_info(&r.registration) {
                out.push((set, info));
            }
        }
        Ok(out)
    }

    /// The counterset with this English name (case-insensitive), among those read so far by
    /// [`PerfLibSource::catalog`] or [`PerfLibSource::registration`].
    pub fn find(&self, name: &str) -> Option<Guid> {
        let mut found: Vec<&Registered> = self
            .registrations
            .values()
            .filter(|r| {
                r.registration
                    .name
                    .as_deref()
                    .is_some_and(|n| eq_ignore_case(n, name))
            })
            .collect();
        found.sort_by_key(|r| r.registration.guid.to_bytes());
        found.first().map(|r| r.registration.guid)
    }

    /// The current instance names of counterset `set`.
    pub fn instances(&mut self, set: Guid) -> Result<Vec<String>, SourceError> {
        self.available()?;
        let mut buf = Vec::new();
        let context = set.to_string();
        let n = self.fill(
            ("PerfEnumerateCounterSetInstances", &context),
            &mut buf,
            &mut |api, b| api.enumerate_instances(set, b),
        )?;
        let list = decode_instance_list(buf.get(..n).unwrap_or_default()).map_err(|e| {
            SourceError::decode(
                format!("PerfEnumerateCounterSetInstances({set}) returned a malformed list"),
                e,
            )
        })?;
        Ok(list.into_iter().map(|i| i.name).collect())
    }

    fn spec_blob(&self, set: Guid, multi: bool) -> Result<Vec<u8>, SourceError> {
        let spec = CounterSpec {
            guid: set,
            status: 0,
            counter_id: PERF_WILDCARD_COUNTER,
            instance_id: ANY_INSTANCE_ID,
            index: 0,
            instance_name: multi.then(|| "*".to_string()),
        };
        CounterSpec::encode_list(&[spec])
            .map_err(|e| SourceError::caused_by(SourceErrorKind::Decode, "", e))
    }

    /// Makes the query hold exactly the countersets `sets` (adding and deleting as needed).
    fn prepare(&mut self, sets: &[Guid]) -> Result<QueryHandle, SourceError> {
        let query = match self.query {
            Some(q) => q,
            None => {
                let q = self
                    .api
                    .open_query()
                    .map_err(|code| SourceError::os("PerfOpenQueryHandle", code, "NULL"))?;
                self.query = Some(q);
                q
            }
        };
        let mut changed = false;
        let mut i = 0;
        while i < self.added.len() {
            if sets.contains(&self.added[i].0) {
                i += 1;
                continue;
            }
            let (set, mut blob) = self.added.remove(i);
            changed = true;
            let code = self.api.delete_counters(query, &mut blob);
            if code != 0 {
                return Err(SourceError::os(
                    "PerfDeleteCounters",
                    code,
                    &set.to_string(),
                ));
            }
        }
        for &set in sets {
            if self.added.iter().any(|(s, _)| *s == set) {
                continue;
            }
            let multi = self.registration(set)?.registration.is_multi_instance();
            let mut blob = self.spec_blob(set, multi)?;
            let code = self.api.add_counters(query, &mut blob);
            let name = self.registrations[&set]
                .registration
                .name
                .clone()
                .unwrap_or_else(|| set.to_string());
            if code != 0 {
                return Err(SourceError::os("PerfAddCounters", code, &name));
            }
            let status = CounterSpec::decode_list(&blob)
                .ok()
                .and_then(|l| l.first().map(|s| s.status))
                .unwrap_or(0);
            if status != 0 {
                return Err(SourceError::os("PerfAddCounters", status, &name));
            }
            self.added.push((set, blob));
            changed = true;
        }
        if sets.is_empty() {
            self.specs.clear();
            self.specs_raw.clear();
        } else if changed || self.specs_raw.is_empty() {
            let mut buf = Vec::new();
            let n = self.fill(("PerfQueryCounterInfo", ""), &mut buf, &mut |api, b| {
                api.query_counter_info(query, b)
            })?;
            buf.truncate(n);
            self.specs = CounterSpec::decode_list(&buf).map_err(|e| {
                SourceError::decode("PerfQueryCounterInfo returned a malformed list", e)
            })?;
            self.specs_raw = buf;
        }
        Ok(query)
    }

    /// Collects the requested countersets (English names). Blocks that come back with an error
    /// status are left out, so the query reports those objects as missing for this sample.
    pub fn collect(&mut self, request: &Request) -> Result<Snapshot, SourceError> {
        self.available()?;
        let mut sets = Vec::new();
        for o in &request.objects {
            if self.find(&o.object).is_none() {
                self.catalog()?;
            }
            let set = self
                .find(&o.object)
                .ok_or_else(|| SourceError::unknown_object(&o.object))?;
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
        if sets.is_empty() {
            if self.query.is_some() {
                self.prepare(&sets)?;
            }
            return Ok(Snapshot::default());
        }
        let query = self.prepare(&sets)?;
        let mut data = std::mem::take(&mut self.data);
        let n = self.fill(("PerfQueryCounterData", ""), &mut data, &mut |api, b| {
            api.query_counter_data(query, b)
        });
        self.data = data;
        self.data_len = n?;
        let bytes = self.data.get(..self.data_len).unwrap_or_default();
        let header = DataHeader::parse(bytes).map_err(|e| {
            SourceError::decode("PerfQueryCounterData returned a malformed block", e)
        })?;
        let regs: Vec<CounterSetRegistration> = sets
            .iter()
            .filter_map(|s| self.registrations.get(s))
            .map(|r| r.registration.clone())
            .collect();
        let conversion = to_snapshot(&header, &self.specs, &regs)
            .map_err(|e| SourceError::decode("PerfQueryCounterData", e))?;
        Ok(keep_objects(conversion.snapshot, request))
    }

    /// The last `PerfQueryCounterData` block.
    pub fn last_block(&self) -> &[u8] {
        self.data.get(..self.data_len).unwrap_or_default()
    }

    /// The last `PerfQueryCounterInfo` result (the query's specifications with their result index).
    pub fn last_counter_info(&self) -> &[u8] {
        &self.specs_raw
    }

    /// The registrations read so far.
    pub fn registrations(&self) -> impl Iterator<Item = &Registered> {
        self.registrations.values()
    }

    /// Closes the query handle, if open.
    pub fn close(&mut self) -> Result<(), SourceError> {
        self.added.clear();
        self.specs.clear();
        self.specs_raw.clear();
        match self.query.take() {
            Some(q) => match self.api.close_query(q) {
                0 => Ok(()),
                code => Err(SourceError::os("PerfCloseQueryHandle", code, "")),
            },
            None => Ok(()),
        }
    }
}

impl<P: PerfLibApi> Drop for PerfLibSource<P> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
