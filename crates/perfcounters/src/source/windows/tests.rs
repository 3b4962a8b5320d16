//! The Windows sources over injected registry and PerfLib results.

use std::collections::HashMap;
use std::time::Duration;

use super::codes::{ERROR_BUSY, ERROR_MORE_DATA, ERROR_NOT_ENOUGH_MEMORY};
use super::*;
use crate::counter_type::CounterType;
use crate::error_chain::ErrorChain;
use crate::format::v1::encode;
use crate::format::v2::Guid;
use crate::format::v2::{
    encode_guid_list, encode_instance_list, BlockData, CounterRegistration, CounterSetRegistration,
    CounterSpec, InstanceData, InstanceListEntry, QueryBlock, QueryData,
    PERF_ATTRIB_NO_DISPLAYABLE, PERF_COUNTERSET_MULTI_INSTANCES, PERF_REG_COUNTERSET_ENGLISH_NAME,
    PERF_REG_COUNTERSET_HELP_STRING, PERF_REG_COUNTERSET_STRUCT, PERF_REG_COUNTER_ENGLISH_NAMES,
    PERF_REG_COUNTER_HELP_STRINGS,
};
use crate::names::{to_multi_sz, NameTable};
use crate::query::Query;
use crate::snapshot::{CounterDefinition, Instance, Object, Snapshot, SystemTime, Value};
use crate::source::{Source, SourceErrorKind};
use crate::{FormatOptions, PdhStatus};

/// `ERROR_FILE_NOT_FOUND`: no such value or counterset.
const ERROR_FILE_NOT_FOUND: u32 = 2;
/// `ERROR_NOT_FOUND`.
const ERROR_NOT_FOUND: u32 = 1168;

// ---------------------------------------------------------------- registry fake

#[derive(Default)]
struct FakeRegistry {
    data: HashMap<String, Vec<u8>>,
    /// Blocks that replace `data[value]` one by one after each full answer, as a live machine's
    /// data changes between collections.
    next: HashMap<String, Vec<Vec<u8>>>,
    text: HashMap<(PerfKey, String), Vec<u8>>,
    busy: u32,
    calls: Vec<(PerfKey, String, usize)>,
    closed: Vec<PerfKey>,
    pauses: Vec<Duration>,
}

impl PerfRegistry for FakeRegistry {
    fn query_value(&mut self, key: PerfKey, value: &str, buf: &mut [u8]) -> Filled {
        self.calls.push((key, value.to_string(), buf.len()));
        if key == PerfKey::Data && self.busy > 0 {
            self.busy -= 1;
            return Filled {
                status: ERROR_BUSY,
                size: 0,
            };
        }
        let bytes = match key {
            PerfKey::Data => self.data.get(value),
            _ => self.text.get(&(key, value.to_string())),
        };
        let Some(bytes) = bytes else {
            return Filled {
                status: ERROR_FILE_NOT_FOUND,
                size: 0,
            };
        };
        if buf.len() < bytes.len() {
            // Like the registry: a size that is not the size needed.
            return Filled {
                status: ERROR_MORE_DATA,
                size: buf.len() + 1,
            };
        }
        buf[..bytes.len()].copy_from_slice(bytes);
        let size = bytes.len();
        if key == PerfKey::Data {
            if let Some(queue) = self.next.get_mut(value).filter(|q| !q.is_empty()) {
                let b = queue.remove(0);
                self.data.insert(value.to_string(), b);
            }
        }
        Filled { status: 0, size }
    }

    fn close_key(&mut self, key: PerfKey) -> u32 {
        self.closed.push(key);
        0
    }

    fn pause(&mut self, duration: Duration) {
        self.pauses.push(duration);
    }
}

/// A V1 object as the registry gives it (default counter 0).
fn v1_object(index: u32, counters: Vec<CounterDefinition>) -> Object {
    Object {
        default_counter: 0,
        ..Object::new(index)
    }
    .with_counters(counters)
}

/// Processor (238): % Processor Time (6, 100NSEC_TIMER_INV) per CPU.
fn processor(idle: [u64; 2]) -> Object {
    let inst = |name: &str, v: u64| Instance::new(name, vec![Value::U64(v)]);
    v1_object(
        238,
        vec![CounterDefinition::new(
            6,
            CounterType::PERF_100NSEC_TIMER_INV,
        )],
    )
    .with_instances(vec![inst("0", idle[0]), inst("_Total", idle[1])])
}

/// System (2): Processor Queue Length (44, RAWCOUNT).
fn system(queue: u32) -> Object {
    v1_object(
        2,
        vec![CounterDefinition::new(
            44,
            CounterType::PERF_COUNTER_RAWCOUNT,
        )],
    )
    .with_values(vec![Value::U32(queue)])
}

fn block(t100: i64, objects: Vec<Object>) -> Vec<u8> {
    encode(&Snapshot {
        system_name: "WINHOST".into(),
        system_time: SystemTime {
            year: 2026,
            month: 11,
            day: 22,
            ..Default::default()
        },
        perf_time: t100 / 10,
        perf_freq: 1_000_000,
        perf_time_100ns: t100,
        objects,
    })
    .unwrap()
}

fn english() -> Vec<u8> {
    let mut t = NameTable::new();
    t.set_base_index(Some(1847));
    for (i, n) in [
        (2, "System"),
        (6, "% Processor Time"),
        (44, "Processor Queue Length"),
        (238, "Processor"),
    ] {
        t.insert(i, n);
    }
    to_multi_sz(&t)
}

fn help() -> Vec<u8> {
    let mut t = NameTable::new();
    t.insert(239, "The Processor object.");
    t.insert(7, "Busy time.");
    to_multi_sz(&t)
}

fn german() -> Vec<u8> {
    let mut t = NameTable::new();
    t.insert(238, "Prozessor");
    t.insert(6, "Prozessorzeit (%)");
    to_multi_sz(&t)
}

const T0: i64 = 132_290_312_430_000_000;

fn registry() -> FakeRegistry {
    let mut r = FakeRegistry::default();
    r.data.insert(
        "Global".into(),
        block(T0, vec![system(3), processor([100, 200])]),
    );
    // The Processor provider also returns the System object.
    r.data.insert(
        "238".into(),
        block(T0, vec![system(3), processor([100, 200])]),
    );
    r.data.insert(
        "238 2".into(),
        block(T0, vec![processor([100, 200]), system(3)]),
    );
    r.text.insert((PerfKey::Text, "Counter".into()), english());
    r.text.insert((PerfKey::Text, "Help".into()), help());
    r.text
        .insert((PerfKey::NlsText, "Counter".into()), german());
    r
}

fn small() -> GrowPolicy {
    GrowPolicy {
        initial: 64,
        ..GrowPolicy::default()
    }
}

#[test]
fn registry_collects_by_title_index_and_names_in_english() {
    let mut src = RegistrySource::with_policy(registry(), small());
    let s = src
        .collect(&Request::new().object("processor", &["% Processor Time"]))
        .unwrap();
    assert_eq!(s.system_name, "WINHOST");
    assert_eq!(s.perf_time_100ns, T0);
    assert_eq!(s.objects.len(), 1, "the extra System object is left out");
    let p = &s.objects[0];
    assert_eq!(p.name.as_deref(), Some("Processor"));
    assert_eq!(p.counters[0].name.as_deref(), Some("% Processor Time"));
    let names: Vec<&str> = p.instances().iter().map(|i| i.name()).collect();
    assert_eq!(names, ["0", "_Total"]);
    let data: Vec<(String, usize)> = src
        .api()
        .calls
        .iter()
        .filter(|c| c.0 == PerfKey::Data)
        .map(|c| (c.1.clone(), c.2))
        .collect();
    // The buffer doubled from 64 bytes until the block fit; the reported sizes were ignored.
    let len = src.last_block().len();
    let sizes: Vec<usize> = data.iter().map(|d| d.1).collect();
    let mut expected = vec![64];
    while *expected.last().unwrap() < len {
        expected.push(expected.last().unwrap() * 2);
    }
    assert_eq!(sizes, expected);
    assert!(data.iter().all(|d| d.0 == "238"));
    // The next collection reuses the grown buffer: one call.
    let before = src.api().calls.len();
    src.collect(&Request::new().all_of("Processor")).unwrap();
    assert_eq!(src.api().calls.len(), before + 1);
}

#[test]
fn registry_retries_busy_then_closes_the_key_on_drop() {
    let mut fake = registry();
    fake.busy = 2;
    let mut src = RegistrySource::with_policy(fake, small());
    src.query_block("238").unwrap();
    assert_eq!(src.api().pauses, [Duration::from_millis(100); 2]);
    src.api().busy = 6;
    let e = src.query_block("238").unwrap_err();
    assert_eq!(
        e.to_string(),
        "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"238\"): error 170 (busy)"
    );
    src.close().unwrap();
    src.close().unwrap();
    assert_eq!(src.api().closed, [PerfKey::Data], "closed once");
    // A source that never queried data does not close HKEY_PERFORMANCE_DATA.
    let mut quiet = RegistrySource::new(registry());
    quiet.close().unwrap();
    assert!(quiet.api().closed.is_empty());
}

#[test]
fn registry_reads_name_tables_once_and_translates_local_names() {
    let mut src = RegistrySource::with_policy(registry(), small());
    assert_eq!(src.value_for(&["Processor", "SYSTEM"]).unwrap(), "238 2");
    assert_eq!(src.value_for(&["Prozessor"]).unwrap(), "238");
    assert_eq!(src.english_name("prozessor").as_deref(), Some("Processor"));
    assert_eq!(src.english_name("Processor").as_deref(), Some("Processor"));
    assert_eq!(src.english_name("Nope"), None);
    let e = src.value_for(&["Nope"]).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::UnknownObject);
    assert_eq!(
        src.raw_name_tables().counter.as_deref(),
        Some(&english()[..])
    );
    assert_eq!(
        src.raw_name_tables().nls_counter.as_deref(),
        Some(&german()[..])
    );
    assert_eq!(src.raw_name_tables().nls_help, None);
    assert_eq!(src.name_problem(), None);
    let text_calls = src
        .api()
        .calls
        .iter()
        .filter(|c| c.0 != PerfKey::Data)
        .count();
    assert_eq!(text_calls, 4, "Counter and Help from both text keys, once");
    // A German user's path still collects the English-named object.
    let s = src.collect(&Request::new().all_of("Prozessor")).unwrap();
    assert!(s.objects.is_empty(), "objects are matched by English name");
    let mut src = RegistrySource::with_policy(registry(), small());
    let (catalog, _) = src.catalog().unwrap();
    let p = catalog.object("Processor").unwrap();
    assert_eq!(p.help, "The Processor object.");
    assert_eq!(p.counters[0].help, "Busy time.");
    assert!(p.multi_instance);
    assert_eq!(src.instances("Processor").unwrap(), ["0", "_Total"]);
}

#[test]
fn registry_falls_back_to_the_builtin_names() {
    let mut fake = registry();
    fake.text.clear();
    let mut src = RegistrySource::with_policy(fake, small());
    assert_eq!(src.value_for(&["Processor"]).unwrap(), "238");
    assert_eq!(
        src.name_problem().as_deref(),
        Some("RegQueryValueExW(HKEY_PERFORMANCE_TEXT, \"Counter\"): error 2 (file not found)")
    );
}

#[test]
fn registry_reports_malformed_blocks() {
    let mut fake = registry();
    let mut bad = block(T0, vec![processor([1, 2])]);
    bad.truncate(120);
    fake.data.insert("238".into(), bad);
    fake.data.insert("2".into(), b"not a block at all".to_vec());
    let mut src = RegistrySource::with_policy(fake, small());
    let e = src
        .collect(&Request::new().all_of("Processor"))
        .unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Decode);
    assert_eq!(
        e.to_string(),
        "HKEY_PERFORMANCE_DATA \"238\" returned a malformed block"
    );
    assert!(
        ErrorChain(&e).to_string().starts_with(
            "HKEY_PERFORMANCE_DATA \"238\" returned a malformed block: PERF_DATA_BLOCK"
        ),
        "{e}"
    );
    let e = src.collect(&Request::new().all_of("System")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("HKEY_PERFORMANCE_DATA \"2\" returned a malformed block"),
        "{e}"
    );
}

#[test]
fn registry_decode_errors_keep_the_decode_error() {
    use crate::format::{Bound, DecodeError, ErrorKind};
    use std::error::Error;

    let mut fake = registry();
    let whole = block(T0, vec![processor([1, 2])]);
    fake.data.insert("238".into(), whole[..120].to_vec());
    let mut src = RegistrySource::with_policy(fake, small());
    let e = src
        .collect(&Request::new().all_of("Processor"))
        .unwrap_err();
    let decode = e
        .source()
        .and_then(|c| c.downcast_ref::<DecodeError>())
        .unwrap_or_else(|| panic!("{e}: no DecodeError source"));
    assert_eq!(
        decode,
        &DecodeError::new(
            "PERF_DATA_BLOCK",
            0,
            ErrorKind::FieldExceeds {
                field: "TotalByteLength",
                value: whole.len() as u64,
                limit: Bound::Buffer { length: 120 },
            },
        )
    );
    assert_eq!(
        e.to_string(),
        "HKEY_PERFORMANCE_DATA \"238\" returned a malformed block"
    );
    assert_eq!(
        ErrorChain(&e).to_string(),
        format!("HKEY_PERFORMANCE_DATA \"238\" returned a malformed block: {decode}")
    );
}

// ---------------------------------------------------------------- PerfLib fake

fn pi_guid() -> Guid {
    "{b4fc721a-0378-476f-89ba-a5a79f810b36}".parse().unwrap()
}

fn pi_registration() -> CounterSetRegistration {
    let mut time =
        CounterRegistration::new(0, CounterType::PERF_100NSEC_TIMER_INV, "% Processor Time");
    time.help = Some("Busy time.".into());
    let mut utility =
        CounterRegistration::new(26, CounterType::PERF_AVERAGE_BULK, "% Processor Utility");
    utility.base_counter_id = 27;
    let mut base = CounterRegistration::new(27, CounterType::PERF_AVERAGE_BASE, "% Utility Base");
    base.attrib = PERF_ATTRIB_NO_DISPLAYABLE;
    CounterSetRegistration {
        guid: pi_guid(),
        name: Some("Processor Information".into()),
        help: Some("Processors.".into()),
        instance_type: PERF_COUNTERSET_MULTI_INSTANCES,
        detail_level: 100,
        counters: vec![time, utility, base],
    }
}

struct FakePerfLib {
    available: Result<(), String>,
    registration: CounterSetRegistration,
    samples: Vec<QueryData>,
    next: usize,
    added: Vec<CounterSpec>,
    log: Vec<String>,
    open: bool,
}

fn fill(bytes: &[u8], buf: &mut [u8]) -> Filled {
    if buf.len() < bytes.len() {
        return Filled {
            status: ERROR_NOT_ENOUGH_MEMORY,
            size: bytes.len(),
        };
    }
    buf[..bytes.len()].copy_from_slice(bytes);
    Filled {
        status: 0,
        size: bytes.len(),
    }
}

impl PerfLibApi for FakePerfLib {
    fn check(&mut self) -> Result<(), String> {
        self.log.push("check".into());
        self.available.clone()
    }

    fn enumerate_counter_sets(&mut self, buf: &mut [u8]) -> Filled {
        self.log.push(format!("enumerate {}", buf.len()));
        fill(&encode_guid_list(&[pi_guid()]), buf)
    }

    fn registration_info(&mut self, set: Guid, request: u32, lang: u32, buf: &mut [u8]) -> Filled {
        assert_eq!(set, pi_guid());
        let e = self.registration.encode().unwrap();
        let bytes = match (request, lang) {
            (PERF_REG_COUNTERSET_STRUCT, 0) => e.structure,
            (PERF_REG_COUNTERSET_ENGLISH_NAME, 0) => e.name.unwrap(),
            (PERF_REG_COUNTERSET_HELP_STRING, 0x409) => e.help.unwrap(),
            (PERF_REG_COUNTER_ENGLISH_NAMES, 0) => e.counter_names,
            (PERF_REG_COUNTER_HELP_STRINGS, 0x409) => e.counter_helps,
            _ => {
                return Filled {
                    status: ERROR_NOT_FOUND,
                    size: 0,
                }
            }
        };
        fill(&bytes, buf)
    }

    fn enumerate_instances(&mut self, _set: Guid, buf: &mut [u8]) -> Filled {
        let list = encode_instance_list(&[
            InstanceListEntry {
                id: 0,
                name: "0,0".into(),
            },
            InstanceListEntry {
                id: 1,
                name: "_Total".into(),
            },
        ])
        .unwrap();
        fill(&list, buf)
    }

    fn open_query(&mut self) -> Result<QueryHandle, u32> {
        self.log.push("open".into());
        self.open = true;
        Ok(QueryHandle::from_raw(7))
    }

    fn add_counters(&mut self, query: QueryHandle, ids: &mut [u8]) -> u32 {
        assert_eq!(query, QueryHandle::from_raw(7));
        let mut specs = CounterSpec::decode_list(ids).unwrap();
        self.log.push(format!(
            "add {} {:?}",
            specs[0].guid, specs[0].instance_name
        ));
        specs[0].index = self.added.len() as u32;
        self.added.extend(specs);
        0
    }

    fn delete_counters(&mut self, _query: QueryHandle, ids: &mut [u8]) -> u32 {
        let specs = CounterSpec::decode_list(ids).unwrap();
        self.log.push(format!("delete {}", specs[0].guid));
        self.added.retain(|s| s.guid != specs[0].guid);
        0
    }

    fn query_counter_info(&mut self, _query: QueryHandle, buf: &mut [u8]) -> Filled {
        self.log.push("info".into());
        fill(&CounterSpec::encode_list(&self.added).unwrap(), buf)
    }

    fn query_counter_data(&mut self, _query: QueryHandle, buf: &mut [u8]) -> Filled {
        let bytes = self.samples[self.next].encode().unwrap();
        let r = fill(&bytes, buf);
        if r.status == 0 {
            self.next += 1;
        }
        r
    }

    fn close_query(&mut self, query: QueryHandle) -> u32 {
        assert_eq!(query, QueryHandle::from_raw(7));
        self.log.push("close".into());
        self.open = false;
        0
    }
}

fn pi_sample(t100: i64, idle: [u64; 2], utility: [(u64, u32); 2]) -> QueryData {
    let inst = |id: u32, name: &str, i: usize| InstanceData {
        id,
        name: name.into(),
        values: vec![
            Value::U64(idle[i]),
            Value::U64(utility[i].0),
            Value::U32(utility[i].1),
        ],
    };
    QueryData {
        perf_time_stamp: t100 / 10,
        perf_time_100ns: t100,
        perf_freq: 1_000_000,
        system_time: SystemTime::default(),
        blocks: vec![QueryBlock {
            status: 0,
            data: BlockData::CounterSet {
                counter_ids: vec![0, 26, 27],
                instances: vec![inst(0, "0,0", 0), inst(1, "_Total", 1)],
            },
        }],
    }
}

fn perflib() -> FakePerfLib {
    FakePerfLib {
        available: Ok(()),
        registration: pi_registration(),
        samples: vec![
            pi_sample(T0, [1_000_000, 2_000_000], [(500, 10), (900, 20)]),
            // One second later: CPU 0 idle 0.25 s, _Total idle 0.5 s.
            pi_sample(
                T0 + 10_000_000,
                [3_500_000, 7_000_000],
                [(1_500, 20), (2_900, 40)],
            ),
        ],
        next: 0,
        added: Vec::new(),
        log: Vec::new(),
        open: false,
    }
}

#[test]
fn perflib_adds_the_counterset_once_and_converts_the_data() {
    let mut src = PerfLibSource::new(perflib());
    let catalog = src.catalog().unwrap();
    assert_eq!(catalog.len(), 1);
    let (guid, info) = &catalog[0];
    assert_eq!(*guid, pi_guid());
    assert_eq!(info.name, "Processor Information");
    assert_eq!(info.help, "Processors.");
    assert!(info.multi_instance);
    let names: Vec<&str> = info.counters.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["% Processor Time", "% Processor Utility"]);
    assert_eq!(info.counters[0].help, "Busy time.");
    assert_eq!(
        info.counters[1].base_type,
        Some(CounterType::PERF_AVERAGE_BASE)
    );
    assert_eq!(src.instances(pi_guid()).unwrap(), ["0,0", "_Total"]);

    let r = Request::new().all_of("processor information");
    let s = src.collect(&r).unwrap();
    assert_eq!(s.perf_time_100ns, T0);
    assert_eq!(s.objects[0].name.as_deref(), Some("Processor Information"));
    src.collect(&r).unwrap();
    assert_eq!(
        src.api().log,
        [
            "check",
            "enumerate 0",
            "enumerate 16",
            "open",
            "add {b4fc721a-0378-476f-89ba-a5a79f810b36} Some(\"*\")",
            // The first call asks with an empty buffer, the second with the size it reported.
            "info",
            "info",
        ]
    );
    assert_eq!(
        CounterSpec::decode_list(src.last_counter_info()).unwrap()[0].guid,
        pi_guid()
    );
    // Nothing V2 requested any more: the counterset is deleted from the query, no data is asked for.
    assert!(src.collect(&Request::new()).unwrap().objects.is_empty());
    assert_eq!(
        src.api().log.last().map(String::as_str),
        Some("delete {b4fc721a-0378-476f-89ba-a5a79f810b36}")
    );
    assert_eq!(src.api().next, 2);
}

#[test]
fn perflib_closes_its_query_and_deletes_unneeded_countersets() {
    let mut src = PerfLibSource::new(perflib());
    src.collect(&Request::new().all_of("Processor Information"))
        .unwrap();
    src.collect(&Request::new()).unwrap();
    // Asked again: added again, and the specifications are read again.
    src.collect(&Request::new().all_of("Processor Information"))
        .unwrap();
    let log: Vec<&str> = src
        .api()
        .log
        .iter()
        .map(|l| l.get(..6).unwrap_or(l))
        .collect();
    assert_eq!(
        log,
        [
            "check", "enumer", "enumer", "open", "add {b", "info", "info", "delete", "add {b",
            "info", "info"
        ]
    );
    src.close().unwrap();
    assert!(!src.api().open);
    assert_eq!(src.api().log.last().map(String::as_str), Some("close"));
}

#[test]
fn perflib_unavailable_is_reported_and_nothing_is_called() {
    let mut fake = perflib();
    fake.available = Err("advapi32.dll does not export PerfEnumerateCounterSet".into());
    let mut src = PerfLibSource::new(fake);
    let e = src.catalog().unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Unavailable);
    assert_eq!(
        e.to_string(),
        "PerfLib V2 is unavailable: advapi32.dll does not export PerfEnumerateCounterSet"
    );
    assert!(src
        .collect(&Request::new().all_of("Processor Information"))
        .is_err());
    assert_eq!(
        src.api().log,
        ["check"],
        "checked once, nothing else called"
    );
}

// ---------------------------------------------------------------- one catalog

#[test]
fn one_catalog_routes_objects_and_computes_values() {
    let mut fake = registry();
    fake.data.insert(
        "238".into(),
        block(T0, vec![processor([1_000_000, 1_000_000])]),
    );
    let mut src = WindowsSource::new(fake, perflib());
    let catalog = src.catalog().unwrap();
    let names: Vec<&str> = catalog.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["System", "Processor", "Processor Information"]);
    assert_eq!(src.system_name(), "WINHOST");
    assert_eq!(
        src.instances("Processor Information").unwrap(),
        ["0,0", "_Total"]
    );
    assert_eq!(src.instances("Processor").unwrap(), ["0", "_Total"]);

    let mut q = Query::new(FormatOptions::default());
    q.add(r"\\WINHOST\Processor Information(*)\% Processor Time")
        .unwrap();
    q.add(r"\\WINHOST\Processor Information(_Total)\% Processor Utility")
        .unwrap();
    q.add(r"\\WINHOST\Processor(0)\% Processor Time").unwrap();
    let request = Request::new()
        .all_of("Processor Information")
        .all_of("Processor");
    let first = src.collect(&request).unwrap();
    let names: Vec<&str> = first
        .objects
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    assert_eq!(names, ["Processor Information", "Processor"]);
    let (v1, v2) = src.last_blocks();
    assert!(v1.is_some_and(|b| b.starts_with(&[b'P', 0, b'E', 0])));
    assert!(v2.is_some());
    q.update(&first);
    src.registry().api().data.insert(
        "238".into(),
        block(T0 + 10_000_000, vec![processor([8_000_000, 9_000_000])]),
    );
    let second = src.collect(&request).unwrap();
    let values = q.update(&second);
    let shown: Vec<(String, Option<f64>)> = q
        .counters()
        .iter()
        .zip(&values)
        .map(|(c, v)| {
            assert_eq!(v.status(), PdhStatus::PDH_CSTATUS_NEW_DATA);
            (c.path_string(), v.value().map(|x| (x * 1e6).round() / 1e6))
        })
        .collect();
    // V2: CPU 0 idle grew 2,500,000 (0.25 s) of 10,000,000 → 75 % busy;
    // _Total idle 5,000,000 of 10,000,000 → 50 % busy; utility (2900−900)/(40−20) = 100.
    // V1: Processor(0) idle 7,000,000 of 10,000,000 → 30 % busy.
    assert_eq!(
        shown,
        [
            (
                r"\\WINHOST\Processor Information(0,0)\% Processor Time".to_string(),
                Some(75.0)
            ),
            (
                r"\\WINHOST\Processor Information(_Total)\% Processor Time".to_string(),
                Some(50.0)
            ),
            (
                r"\\WINHOST\Processor Information(_Total)\% Processor Utility".to_string(),
                Some(100.0)
            ),
            (
                r"\\WINHOST\Processor(0)\% Processor Time".to_string(),
                Some(30.0)
            ),
        ]
    );
}

/// The `HKEY_PERFORMANCE_DATA` values read so far, one entry per call.
fn data_reads(src: &mut WindowsSource<FakeRegistry, FakePerfLib>) -> Vec<String> {
    let calls = &src.registry().api().calls;
    calls
        .iter()
        .filter(|c| c.0 == PerfKey::Data)
        .map(|c| c.1.clone())
        .collect()
}

#[test]
fn listing_every_instance_reads_the_global_block_once() {
    let mut src = WindowsSource::new(registry(), perflib());
    let catalog = src.catalog().unwrap();
    // What `list -x` / `typeperf -qx` does: the catalog, then each object's instances.
    let mut listed = Vec::new();
    for o in catalog.objects.iter().filter(|o| o.multi_instance) {
        listed.push((o.name.clone(), src.instances(&o.name).unwrap()));
    }
    assert_eq!(
        listed,
        [
            (
                "Processor".to_string(),
                vec!["0".to_string(), "_Total".into()]
            ),
            (
                "Processor Information".to_string(),
                vec!["0,0".to_string(), "_Total".into()]
            ),
        ]
    );
    assert_eq!(
        data_reads(&mut src),
        ["Global"],
        "the V1 instances come from the catalog's block"
    );
    // A local name finds the object in the kept block too.
    assert_eq!(
        src.registry().instances("Prozessor").unwrap(),
        ["0", "_Total"]
    );
    assert_eq!(data_reads(&mut src), ["Global"]);
    // After a collection the block is stale: an instance list reads the object again.
    src.registry()
        .api()
        .data
        .insert("238".into(), block(T0, vec![processor([1, 2])]));
    src.collect(&Request::new().all_of("Processor")).unwrap();
    assert_eq!(src.instances("Processor").unwrap(), ["0", "_Total"]);
    assert_eq!(data_reads(&mut src), ["Global", "238", "238"]);
}

#[test]
fn paths_in_the_users_language_collect_through_the_nlstext_table() {
    let mut src = WindowsSource::new(registry(), perflib());
    let catalog = src.catalog().unwrap();
    // HKEY_PERFORMANCE_NLSTEXT's names that differ from the English ones.
    let local: Vec<(u32, &str)> = catalog.local_names.iter().collect();
    assert_eq!(local, [(6, "Prozessorzeit (%)"), (238, "Prozessor")]);
    let mut english = Query::new(FormatOptions::default());
    english.add(r"\Processor(*)\% Processor Time").unwrap();
    let mut german = Query::new(FormatOptions::default());
    german.add(r"\Prozessor(*)\Prozessorzeit (%)").unwrap();
    let request = german.request(&catalog);
    assert_eq!(
        request,
        Request::new().object("Processor", &["% Processor Time"])
    );
    assert_eq!(english.request(&catalog), request);
    src.registry()
        .api()
        .data
        .insert("238".into(), block(T0, vec![processor([0, 0])]));
    let first = src.collect(&request).unwrap();
    english.update(&first);
    german.update(&first);
    src.registry().api().data.insert(
        "238".into(),
        block(T0 + 10_000_000, vec![processor([2_500_000, 5_000_000])]),
    );
    let second = src.collect(&request).unwrap();
    let values = |q: &mut Query| -> Vec<(String, Option<f64>)> {
        let v = q.update(&second);
        q.counters()
            .iter()
            .zip(v)
            .map(|(c, v)| (c.path_string(), v.value()))
            .collect()
    };
    assert_eq!(
        values(&mut german),
        [
            (
                r"\\WINHOST\Prozessor(0)\Prozessorzeit (%)".to_string(),
                Some(75.0)
            ),
            (
                r"\\WINHOST\Prozessor(_Total)\Prozessorzeit (%)".to_string(),
                Some(50.0)
            ),
        ]
    );
    assert_eq!(
        values(&mut english),
        [
            (
                r"\\WINHOST\Processor(0)\% Processor Time".to_string(),
                Some(75.0)
            ),
            (
                r"\\WINHOST\Processor(_Total)\% Processor Time".to_string(),
                Some(50.0)
            ),
        ]
    );
    assert_eq!(german.counters()[0].object_name(), "Processor");
    assert_eq!(german.counters()[0].counter_name(), "% Processor Time");
}

#[test]
fn an_empty_machine_is_a_clear_error() {
    let mut fake = FakeRegistry::default();
    fake.data.insert("Global".into(), block(T0, vec![]));
    let mut lib = perflib();
    lib.available =
        Err("advapi32.dll does not export PerfEnumerateCounterSet, PerfQueryCounterInfo".into());
    let mut src = WindowsSource::new(fake, lib);
    let e = src.catalog().unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Unavailable);
    assert_eq!(
        e.to_string(),
        "no performance objects on 'WINHOST': HKEY_PERFORMANCE_DATA \"Global\" returned a block with \
         no objects (and the name table could not be read: RegQueryValueExW(HKEY_PERFORMANCE_TEXT, \
         \"Counter\"): error 2 (file not found)), and PerfLib V2 is unavailable: advapi32.dll does not \
         export PerfEnumerateCounterSet, PerfQueryCounterInfo"
    );
    assert_eq!(src.system_name(), "WINHOST");
    let e = src
        .collect(&Request::new().all_of("Processor"))
        .unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Unavailable);
    assert_eq!(
        src.v2_problem()
            .map(|p| p.starts_with("PerfLib V2 is unavailable")),
        Some(true)
    );
}

// ---------------------------------------------------------------- recording a capture

#[test]
fn a_recorded_capture_replays_to_the_same_values() {
    use super::record::{record, RecordOptions};
    use crate::format::capture::{Capture, CaptureInfo};
    use crate::source::replay::ReplaySource;

    let mut fake = registry();
    fake.data.insert(
        "238".into(),
        block(T0, vec![processor([1_000_000, 1_000_000])]),
    );
    fake.next.insert(
        "238".into(),
        vec![block(
            T0 + 10_000_000,
            vec![processor([8_000_000, 9_000_000])],
        )],
    );
    let mut src = WindowsSource::new(fake, perflib());
    let mut slept = Vec::new();
    let options = RecordOptions {
        objects: vec!["processor information".into(), "Processor".into()],
        samples: 2,
        interval: Duration::from_secs(1),
    };
    let info = CaptureInfo {
        os: "Windows 10.0.19045".into(),
        created: "2026-11-22T10:00:00Z".into(),
        tool: "perfcounters 0.1.0".into(),
        ..Default::default()
    };
    let capture = record(&mut src, &options, info, "007", &mut |d| slept.push(d)).unwrap();
    assert_eq!(slept, [Duration::from_secs(1)]);
    assert_eq!(capture.info.machine, "WINHOST");
    assert_eq!(capture.samples.len(), 2);
    assert!(capture
        .samples
        .iter()
        .all(|s| s.v1.is_some() && s.v2.is_some()));
    assert_eq!(capture.registrations.len(), 1);
    let languages: Vec<String> = capture.names.iter().map(|n| n.file_name()).collect();
    assert_eq!(
        languages,
        ["counter-009.msz", "help-009.msz", "counter-007.msz"]
    );

    let dir = std::env::temp_dir().join(format!("perfcounters-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    capture.write(&dir).unwrap();
    assert_eq!(Capture::read(&dir).unwrap(), capture);
    let mut replay = ReplaySource::open_capture(&dir).unwrap();
    let mut q = Query::new(FormatOptions::default());
    q.add(r"\Processor Information(*)\% Processor Time")
        .unwrap();
    q.add(r"\Processor Information(_Total)\% Processor Utility")
        .unwrap();
    q.add(r"\Processor(0)\% Processor Time").unwrap();
    q.update(&replay.next_snapshot().unwrap().unwrap());
    let values: Vec<Option<f64>> = q
        .update(&replay.next_snapshot().unwrap().unwrap())
        .iter()
        .map(|v| v.value().map(|x| (x * 1e6).round() / 1e6))
        .collect();
    assert_eq!(values, [Some(75.0), Some(50.0), Some(100.0), Some(30.0)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn recording_the_global_block_and_pausing_between_samples() {
    use super::record::{record, RecordOptions};
    let mut src = WindowsSource::new(registry(), perflib());
    let mut slept = Vec::new();
    let capture = record(
        &mut src,
        &RecordOptions {
            objects: vec![],
            samples: 3,
            interval: Duration::from_millis(250),
        },
        Default::default(),
        "009",
        &mut |d| slept.push(d),
    )
    .unwrap();
    assert_eq!(slept, [Duration::from_millis(250); 2]);
    assert_eq!(capture.samples.len(), 3);
    let global = registry().data["Global"].clone();
    assert!(capture
        .samples
        .iter()
        .all(|s| s.v1.as_deref() == Some(&global[..]) && s.v2.is_none()));
    assert!(capture.registrations.is_empty());
    assert_eq!(capture.v2_counters, None);
    assert_eq!(
        capture.names.len(),
        2,
        "English tables only when the user's language is English"
    );
    let e = record(
        &mut src,
        &RecordOptions {
            objects: vec!["Bogus".into()],
            samples: 1,
            interval: Duration::ZERO,
        },
        Default::default(),
        "009",
        &mut |_| {},
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "no object named 'Bogus'");
}
