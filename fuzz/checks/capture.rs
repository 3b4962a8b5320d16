//! A one-sample capture built from arbitrary bytes, replayed: the V2 registration structure, its
//! counter-name string buffer, the `PerfQueryCounterInfo` list, the V2 data block and a V1 block are
//! slices of the input (split at `FF FE FD FC`; the counterset is named "Fuzz"). Whatever
//! `ReplaySource` accepts must go through its catalog, a collection and the query engine without
//! panicking.
//!
//! The checks of the `capture` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/capture/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use perfcounters::format::capture::{Capture, CaptureSample};
use perfcounters::format::v2::{encode_string, EncodedRegistration};
use perfcounters::query::Query;
use perfcounters::source::replay::ReplaySource;
use perfcounters::source::{Request, Source};
use perfcounters::FormatOptions;

/// Splits the input at the first four `0xFF 0xFE 0xFD 0xFC` markers.
fn parts(data: &[u8]) -> [&[u8]; 5] {
    let mut out: [&[u8]; 5] = [&[]; 5];
    let mut rest = data;
    for slot in out.iter_mut().take(4) {
        match rest.windows(4).position(|w| w == [0xFF, 0xFE, 0xFD, 0xFC]) {
            Some(i) => {
                *slot = &rest[..i];
                rest = &rest[i + 4..];
            }
            None => {
                *slot = rest;
                rest = &[];
            }
        }
    }
    out[4] = rest;
    out
}

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    let [structure, counter_names, counters, v2, v1] = parts(data);
    let capture = Capture {
        registrations: vec![EncodedRegistration {
            structure: structure.to_vec(),
            name: encode_string("Fuzz").ok(),
            counter_names: counter_names.to_vec(),
            ..Default::default()
        }],
        v2_counters: Some(counters.to_vec()),
        samples: vec![CaptureSample {
            v1: (!v1.is_empty()).then(|| v1.to_vec()),
            v2: Some(v2.to_vec()),
        }],
        ..Default::default()
    };
    let Ok(mut source) = ReplaySource::from_capture(capture) else {
        return;
    };
    let Ok(catalog) = source.catalog() else {
        return;
    };
    let mut query = Query::new(FormatOptions::default());
    let mut request = Request::new();
    for object in &catalog.objects {
        let _ = query.add(&format!(
            "\\{}(*)\\*",
            object.name.replace(['(', ')', '\\'], "")
        ));
        request = request.all_of(&object.name);
        let _ = source.instances(&object.name);
    }
    if let Ok(snapshot) = source.collect(&request) {
        query.update(&snapshot);
        query.update(&snapshot);
    }
}
