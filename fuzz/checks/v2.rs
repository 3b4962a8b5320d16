//! V2 decoders on arbitrary bytes: the query result (`PERF_DATA_HEADER` and every block type, then the
//! conversion to a snapshot against a fixed registration), registration info, string buffers, instance
//! lists, counter identifier lists and GUID lists. Nothing may panic; decoded models re-encode to the
//! same model.
//!
//! The checks of the `v2` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/v2/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use perfcounters::format::v2::{
    decode_guid_list, decode_instance_list, decode_string_buffer, to_snapshot, CounterRegistration,
    CounterSetRegInfo, CounterSetRegistration, CounterSpec, DataHeader, Guid, QueryData,
};
use perfcounters::CounterType;

fn registration() -> CounterSetRegistration {
    let types = [
        CounterType::PERF_100NSEC_TIMER_INV,
        CounterType::PERF_AVERAGE_BULK,
        CounterType::PERF_AVERAGE_BASE,
        CounterType::PERF_PRECISION_100NS_TIMER,
        CounterType::PERF_PRECISION_TIMESTAMP,
        CounterType::PERF_COUNTER_RAWCOUNT,
        CounterType::PERF_OBJ_TIME_TIMER,
        CounterType::PERF_100NSEC_MULTI_TIMER,
    ];
    CounterSetRegistration {
        guid: Guid::new(1, 2, 3, [4; 8]),
        name: Some("Fuzz".into()),
        help: None,
        instance_type: 2,
        detail_level: 100,
        counters: types
            .iter()
            .enumerate()
            .map(|(i, t)| CounterRegistration::new(i as u32, *t, "c"))
            .collect(),
    }
}

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    if let Ok(header) = DataHeader::parse(data) {
        let _ = header.validate();
        if let Ok(model) = QueryData::from_header(&header) {
            if let Ok(bytes) = model.encode() {
                assert_eq!(
                    QueryData::decode(&bytes).expect("re-encoded data decodes"),
                    model
                );
            }
        }
        let reg = registration();
        let specs: Vec<CounterSpec> = (0..16)
            .map(|i| CounterSpec {
                guid: reg.guid,
                status: 0,
                counter_id: i % 9,
                instance_id: u32::MAX,
                index: i,
                instance_name: Some("*".into()),
            })
            .collect();
        let _ = to_snapshot(&header, &specs, &[reg]);
    }
    if let Ok(info) = CounterSetRegInfo::parse(data) {
        for c in info.counters() {
            let _ = c.to_bytes();
        }
    }
    let _ = decode_string_buffer(data);
    let _ = decode_instance_list(data);
    let _ = decode_guid_list(data);
    let _ = CounterSpec::decode_list(data);
}
