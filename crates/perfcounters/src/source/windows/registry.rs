//! The registry (V1) source: `RegQueryValueExW(HKEY_PERFORMANCE_DATA, …)` blocks, named from the
//! `HKEY_PERFORMANCE_TEXT` tables.

use std::fmt;
use std::time::Duration;

use super::grow::{fill_doubling, Filled, GrowPolicy};
use crate::error_chain::ErrorChain;
use crate::format::v1::PerfDataBlock;
use crate::format::DecodeError;
use crate::names::{parse_multi_sz, NameTable};
use crate::snapshot::Snapshot;
use crate::source::snapshots::{catalog_of, instances_of, keep_objects};
use crate::source::{Catalog, Request, SourceError};

/// The predefined registry keys of performance data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PerfKey {
    /// `HKEY_PERFORMANCE_DATA`: the data blocks.
    Data,
    /// `HKEY_PERFORMANCE_TEXT`: the English name and help tables.
    Text,
    /// `HKEY_PERFORMANCE_NLSTEXT`: the tables in the user's UI language.
    NlsText,
}

impl fmt::Display for PerfKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PerfKey::Data => "HKEY_PERFORMANCE_DATA",
            PerfKey::Text => "HKEY_PERFORMANCE_TEXT",
            PerfKey::NlsText => "HKEY_PERFORMANCE_NLSTEXT",
        })
    }
}

/// The registry calls the V1 source needs. The real implementation (Windows only) is a thin wrapper
/// over `RegQueryValueExW` and `RegCloseKey`; tests inject results.
pub trait PerfRegistry {
    /// `RegQueryValueExW(key, value, NULL, NULL, buf, &size)`: the Win32 status and the size the call
    /// reported in bytes.
    fn query_value(&mut self, key: PerfKey, value: &str, buf: &mut [u8]) -> Filled;

    /// `RegCloseKey(key)`: the Win32 status.
    fn close_key(&mut self, key: PerfKey) -> u32;

    /// Waits before a retry of a busy call.
    fn pause(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// The raw name tables of a machine, exactly as the registry returned them (REG_MULTI_SZ).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawNameTables {
    /// `HKEY_PERFORMANCE_TEXT` "Counter" (English names).
    pub counter: Option<Vec<u8>>,
    /// `HKEY_PERFORMANCE_TEXT` "Help" (English help texts).
    pub help: Option<Vec<u8>>,
    /// `HKEY_PERFORMANCE_NLSTEXT` "Counter" (names in the user's language).
    pub nls_counter: Option<Vec<u8>>,
    /// `HKEY_PERFORMANCE_NLSTEXT` "Help".
    pub nls_help: Option<Vec<u8>>,
}

struct Names {
    english: NameTable,
    help: NameTable,
    local: NameTable,
    raw: RawNameTables,
    /// Why the machine's English table could not be used, when it could not.
    problem: Option<String>,
}

/// A V1 source over the performance registry.
///
/// * Names: the machine's English table (`HKEY_PERFORMANCE_TEXT`), completed by the built-in English
///   table, so objects and counters are named in English on every Windows language, as
///   `PdhAddEnglishCounter` expects. The user's language table (`HKEY_PERFORMANCE_NLSTEXT`) is read
///   too: the catalog carries it ([`Catalog::local_names`]), so that a query accepts paths in the
///   user's language, and [`RegistrySource::english_name`] translates a localized name.
/// * Requests ask for the objects' title indexes (`"238 2"`), never `"Global"` unless the catalog is
///   wanted.
/// * The `"Global"` block read for the catalog ([`RegistrySource::catalog`]) also answers
///   [`RegistrySource::instances`] until the next collection, so listing every object's instances
///   after the catalog (`typeperf -qx`) reads the registry once, not once per object.
/// * `HKEY_PERFORMANCE_DATA` is closed when the source is dropped (or by [`RegistrySource::close`]), so
///   provider DLLs and caches are released; it stays open between collections, as PDH keeps it.
pub struct RegistrySource<R: PerfRegistry> {
    api: R,
    policy: GrowPolicy,
    buf: Vec<u8>,
    len: usize,
    names: Option<Names>,
    open: bool,
    /// The `"Global"` snapshot of the last catalog, until the next read of another value.
    global: Option<Snapshot>,
}

impl<R: PerfRegistry> std::fmt::Debug for RegistrySource<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrySource")
            .field("policy", &self.policy)
            .field("open", &self.open)
            .field("names", &self.names.is_some())
            .finish_non_exhaustive()
    }
}

impl<R: PerfRegistry> RegistrySource<R> {
    /// A source over `api` with the default [`GrowPolicy`].
    pub fn new(api: R) -> Self {
        Self::with_policy(api, GrowPolicy::default())
    }

    /// A source over `api` with the given buffer and retry policy.
    pub fn with_policy(api: R, policy: GrowPolicy) -> Self {
        RegistrySource {
            api,
            policy,
            buf: Vec::new(),
            len: 0,
            names: None,
            open: false,
            global: None,
        }
    }

    /// The registry calls.
    pub fn api(&mut self) -> &mut R {
        &mut self.api
    }

    /// One value read into `buf` with the growth and retry rules; the number of bytes read.
    fn fetch(
        &mut self,
        key: PerfKey,
        value: &str,
        buf: &mut Vec<u8>,
        policy: &GrowPolicy,
    ) -> Result<usize, SourceError> {
        let context = format!("{key}, \"{value}\"");
        let api = &mut self.api;
        let mut pauses = Vec::new();
        let n = fill_doubling(
            buf,
            policy,
            ("RegQueryValueExW", &context),
            &mut |d| pauses.push(d),
            &mut |b| api.query_value(key, value, b),
        );
        // Pauses are taken after the call returns so the closures do not both borrow `api`.
        for d in pauses {
            self.api.pause(d);
        }
        n
    }

    fn query(
        &mut self,
        key: PerfKey,
        value: &str,
        policy: GrowPolicy,
    ) -> Result<Vec<u8>, SourceError> {
        let mut buf = Vec::new();
        let n = self.fetch(key, value, &mut buf, &policy)?;
        buf.truncate(n);
        Ok(buf)
    }

    fn names(&mut self) -> &Names {
        if self.names.is_none() {
            let tables = GrowPolicy {
                initial: 1024 * 1024,
                ..self.policy
            };
            let mut raw = RawNameTables::default();
            let mut problem = None;
            let mut english = NameTable::new();
            match self.query(PerfKey::Text, "Counter", tables) {
                Ok(bytes) => {
                    match parse_multi_sz(&bytes) {
                        Ok(t) if !t.is_empty() => english = t,
                        Ok(_) => {
                            problem = Some("HKEY_PERFORMANCE_TEXT \"Counter\" is empty".into())
                        }
                        Err(e) => problem = Some(format!("HKEY_PERFORMANCE_TEXT \"Counter\": {e}")),
                    }
                    raw.counter = Some(bytes);
                }
                Err(e) => problem = Some(ErrorChain(&e).to_string()),
            }
            english.merge(NameTable::builtin_english());
            let mut help = NameTable::new();
            if let Ok(bytes) = self.query(PerfKey::Text, "Help", tables) {
                if let Ok(t) = parse_multi_sz(&bytes) {
                    help = t;
                }
                raw.help = Some(bytes);
            }
            let mut local = NameTable::new();
            if let Ok(bytes) = self.query(PerfKey::NlsText, "Counter", tables) {
                if let Ok(t) = parse_multi_sz(&bytes) {
                    local = t;
                }
                raw.nls_counter = Some(bytes);
            }
            if let Ok(bytes) = self.query(PerfKey::NlsText, "Help", tables) {
                raw.nls_help = Some(bytes);
            }
            // The text keys need no handle kept; closing them is harmless and frees the tables.
            self.api.close_key(PerfKey::Text);
            self.api.close_key(PerfKey::NlsText);
            self.names = Some(Names {
                english,
                help,
                local,
                raw,
                problem,
            });
        }
        self.names.as_ref().expect("set above")
    }

    /// The name tables as the machine returned them (read on first use).
    pub fn raw_name_tables(&mut self) -> &RawNameTables {
        &self.names().raw
    }

    /// The English name table in use (the machine's, completed by the built-in one).
    pub fn english_names(&mut self) -> &NameTable {
        &self.names().english
    }

    /// Why the machine's English name table could not be read, if it could not (the built-in table
    /// is used alone then).
    pub fn name_problem(&mut self) -> Option<String> {
        self.names().problem.clone()
    }

    /// The English name of a name in the user's language (`None` when the local table lacks it, or
    /// the English table lacks its index). English names are returned unchanged.
    pub fn english_name(&mut self, name: &str) -> Option<String> {
        let names = self.names();
        if names.english.index_of(name).is_some() {
            return Some(name.to_string());
        }
        names
            .local
            .indexes_of(name)
            .find_map(|i| names.english.name(i))
            .map(str::to_string)
    }

    /// Queries `HKEY_PERFORMANCE_DATA` for `value` (`"Global"`, `"Costly"`, or title indexes such as
    /// `"238 2"`) and returns the raw block, checked to be a well-formed V1 block.
    pub fn query_block(&mut self, value: &str) -> Result<&[u8], SourceError> {
        self.fetch_data(value)?;
        PerfDataBlock::parse(self.last_block()).map_err(|e| malformed(value, e))?;
        Ok(self.last_block())
    }

    /// Reads `value` of `HKEY_PERFORMANCE_DATA` into the kept buffer.
    fn fetch_data(&mut self, value: &str) -> Result<(), SourceError> {
        self.global = None;
        let mut buf = std::mem::take(&mut self.buf);
        self.open = true;
        let policy = self.policy;
        let r = self.fetch(PerfKey::Data, value, &mut buf, &policy);
        self.buf = buf;
        self.len = r?;
        Ok(())
    }

    /// The last block returned by [`RegistrySource::query_block`] (or a collection).
    pub fn last_block(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// Queries `value` and returns the decoded, named snapshot.
    pub fn snapshot(&mut self, value: &str) -> Result<Snapshot, SourceError> {
        self.names();
        self.fetch_data(value)?;
        let block = PerfDataBlock::parse(self.last_block()).map_err(|e| malformed(value, e))?;
        let mut snapshot = block.to_snapshot().map_err(|e| decode_error(value, e))?;
        if let Some(n) = &self.names {
            n.english.apply(&mut snapshot);
        }
        Ok(snapshot)
    }

    /// Every object of the `"Global"` collection, named in English with English help texts and
    /// with the user's language table as [`Catalog::local_names`], and that collection. It is kept: [`RegistrySource::instances`] answers from it until the source
    /// reads another value.
    pub fn catalog(&mut self) -> Result<(Catalog, &Snapshot), SourceError> {
        let snapshot = self.snapshot("Global")?;
        let mut catalog = catalog_of(&snapshot, self.names.as_ref().map(|n| &n.help));
        if let Some(names) = &self.names {
            catalog.local_names = names.local.other_names(&names.english);
        }
        Ok((catalog, self.global.insert(snapshot)))
    }

    /// The title indexes to ask for `objects` (English names, or names in the user's language),
    /// as the registry value string, e.g. `"238 2"`.
    pub fn value_for(&mut self, objects: &[&str]) -> Result<String, SourceError> {
        let names = self.names();
        let mut value = String::new();
        for object in objects {
            let mut indexes: Vec<u32> = names.english.indexes_of(object).collect();
            if indexes.is_empty() {
                indexes = names.local.indexes_of(object).collect();
            }
            if indexes.is_empty() {
                return Err(SourceError::unknown_object(object));
            }
            for i in indexes {
                let s = i.to_string();
                if !value.split(' ').any(|v| v == s) {
                    if !value.is_empty() {
                        value.push(' ');
                    }
                    value.push_str(&s);
                }
            }
        }
        Ok(value)
    }

    /// The instance names of `object`: from the `"Global"` block of the last
    /// [`catalog`](RegistrySource::catalog) when no other value was read since and it holds the
    /// object, else from a fresh collection of the object.
    pub fn instances(&mut self, object: &str) -> Result<Vec<String>, SourceError> {
        let english = self
            .english_name(object)
            .unwrap_or_else(|| object.to_string());
        if let Some(list) = self
            .global
            .as_ref()
            .and_then(|global| instances_of(global, &english).ok())
        {
            return Ok(list);
        }
        let value = self.value_for(&[object])?;
        let snapshot = self.snapshot(&value)?;
        instances_of(&snapshot, &english)
    }

    /// Collects the requested objects (by title index). Objects the block lacks are left out, so
    /// the query reports them as missing (`PDH_CSTATUS_NO_OBJECT`) for this sample only.
    pub fn collect(&mut self, request: &Request) -> Result<Snapshot, SourceError> {
        let objects: Vec<&str> = request.objects.iter().map(|o| o.object.as_str()).collect();
        let value = self.value_for(&objects)?;
        let snapshot = self.snapshot(&value)?;
        Ok(keep_objects(snapshot, request))
    }

    /// Closes `HKEY_PERFORMANCE_DATA` (providers unload; the next query opens it again).
    pub fn close(&mut self) -> Result<(), SourceError> {
        if !std::mem::replace(&mut self.open, false) {
            return Ok(());
        }
        match self.api.close_key(PerfKey::Data) {
            0 => Ok(()),
            code => Err(SourceError::os(
                "RegCloseKey",
                code,
                "HKEY_PERFORMANCE_DATA",
            )),
        }
    }
}

impl<R: PerfRegistry> Drop for RegistrySource<R> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn decode_error(value: &str, e: DecodeError) -> SourceError {
    SourceError::decode(format!("{} \"{value}\"", PerfKey::Data), e)
}

fn malformed(value: &str, e: DecodeError) -> SourceError {
    SourceError::decode(
        format!("{} \"{value}\" returned a malformed block", PerfKey::Data),
        e,
    )
}
