//! The Windows sources against the running system (Windows, or Wine in CI).
//!
//! Wine's `HKEY_PERFORMANCE_DATA` answers with a well-formed header and no objects, and its
//! `advapi32.dll` lacks most PerfLib V2 consumer functions; these tests therefore check what every
//! Windows-like system must give: a real header (signature, system name, clock values that agree
//! with the system clock), the name tables, a clean "V2 unavailable" or working V2 calls, and clear
//! errors instead of crashes. On a real Windows machine they also check that objects come back.
#![cfg(windows)]

use std::time::{SystemTime, UNIX_EPOCH};

use perfcounters::format::v1::PerfDataBlock;
use perfcounters::snapshot::FILETIME_UNIX_EPOCH;
use perfcounters::source::windows::{
    missing_consumer_functions, wine_version, PerfLib, PerfLibApi, PerfLibSource, Registry,
    RegistrySource, WindowsSource,
};
use perfcounters::source::{Request, Source, SourceErrorKind};

/// Now as a FILETIME (100 ns since 1601-01-01 UTC).
fn now_filetime() -> i64 {
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    FILETIME_UNIX_EPOCH + (unix.as_nanos() / 100) as i64
}

fn under_wine() -> bool {
    wine_version().is_some()
}

#[test]
fn wine_is_recognised() {
    // CI runs these tests under Wine and says so; elsewhere nothing is assumed.
    if std::env::var_os("PERFCOUNTERS_EXPECT_WINE").is_some() {
        let v = wine_version().expect("running under Wine");
        assert!(v.chars().next().is_some_and(|c| c.is_ascii_digit()), "{v}");
    }
}

#[test]
fn registry_header_is_real() {
    let mut src = RegistrySource::new(Registry::new());
    let before = now_filetime();
    let bytes = src.query_block("Global").unwrap().to_vec();
    let after = now_filetime();
    let block = PerfDataBlock::parse(&bytes).unwrap();
    assert_eq!(
        block.signature(),
        [b'P' as u16, b'E' as u16, b'R' as u16, b'F' as u16]
    );
    assert_eq!(block.version(), 1);
    assert!(block.header_length() as usize <= bytes.len());
    assert_eq!(block.total_byte_length() as usize, bytes.len());
    let name = block.system_name().unwrap();
    let computer = std::env::var("COMPUTERNAME").unwrap_or_default();
    assert!(!name.is_empty());
    if !computer.is_empty() {
        assert!(name.eq_ignore_ascii_case(&computer), "{name} vs {computer}");
    }
    // The block's clock is the system clock: within the call, give or take a second.
    let t = block.perf_time_100ns();
    assert!(
        t >= before - 10_000_000 && t <= after + 10_000_000,
        "{t} not in [{before}, {after}]"
    );
    assert!(block.perf_freq() > 0);
    let st = block.system_time();
    assert!((2020..2200).contains(&st.year), "{st:?}");
    if !under_wine() {
        assert!(block.num_object_types() > 0);
    }
    src.close().unwrap();
    // The key opens again on the next query.
    assert!(src.query_block("2").is_ok());
}

#[test]
fn name_tables_are_read_or_explained() {
    let mut src = RegistrySource::new(Registry::new());
    // "238" is Processor in every English table, the machine's or the built-in one.
    assert_eq!(src.value_for(&["Processor", "System"]).unwrap(), "238 2");
    let raw = src.raw_name_tables().clone();
    match src.name_problem() {
        None => {
            // The machine's table parses; where it names 238 (Windows; Wine's table holds only
            // "1846 End Marker"), the name is the English one.
            let table =
                perfcounters::names::parse_multi_sz(raw.counter.as_deref().unwrap()).unwrap();
            assert!(!table.is_empty());
            if let Some(n) = table.name(238) {
                assert_eq!(n, "Processor");
            }
        }
        Some(p) => assert!(p.contains("HKEY_PERFORMANCE_TEXT"), "{p}"),
    }
}

#[test]
fn perflib_is_available_or_says_why() {
    let missing = missing_consumer_functions();
    let mut lib = PerfLib::new();
    match lib.check() {
        Ok(()) => assert!(missing.is_empty()),
        Err(why) => {
            assert!(!missing.is_empty());
            let expected = format!("advapi32.dll does not export {}", missing.join(", "));
            assert!(why.starts_with(&expected), "{why}");
        }
    }
    let mut src = PerfLibSource::new(PerfLib::new());
    match src.counter_sets() {
        Ok(sets) => assert!(!sets.is_empty()),
        Err(e) => {
            assert_eq!(e.kind(), SourceErrorKind::Unavailable);
            assert!(e
                .to_string()
                .starts_with("PerfLib V2 is unavailable: advapi32.dll does not export"));
            // Nothing was called: collecting says the same, it does not crash.
            let e = src
                .collect(&Request::new().all_of("Processor Information"))
                .unwrap_err();
            assert_eq!(e.kind(), SourceErrorKind::Unavailable);
        }
    }
}

#[test]
fn the_present_v2_functions_return_cleanly() {
    // Whatever subset of the consumer functions the system has, calling the query functions through
    // the wrappers returns a status: a missing function answers ERROR_CALL_NOT_IMPLEMENTED.
    let mut lib = PerfLib::new();
    match lib.open_query() {
        Ok(q) => {
            let mut buf = vec![0u8; 4096];
            let r = lib.query_counter_data(q, &mut buf);
            assert!(r.size <= buf.len() || r.status != 0);
            assert_eq!(lib.close_query(q), 0);
        }
        Err(code) => assert_ne!(code, 0),
    }
}

#[test]
fn the_machine_source_lists_or_explains() {
    let mut src = WindowsSource::local();
    match src.catalog() {
        Ok(catalog) => {
            assert!(!catalog.objects.is_empty());
            let s = src
                .collect(&Request::new().all_of(&catalog.objects[0].name))
                .unwrap();
            assert_eq!(s.objects.len(), 1);
        }
        Err(e) => {
            assert_eq!(e.kind(), SourceErrorKind::Unavailable);
            let text = e.to_string();
            assert!(text.starts_with("no performance objects on '"), "{text}");
            assert!(
                text.contains("HKEY_PERFORMANCE_DATA \"Global\" returned a block with no objects")
            );
            assert!(!src.system_name().is_empty());
            let e = src
                .collect(&Request::new().all_of("Processor"))
                .unwrap_err();
            assert_eq!(e.kind(), SourceErrorKind::Unavailable);
        }
    }
}
