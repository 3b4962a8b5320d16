//! V1 decoder on arbitrary bytes: parse, walk every object, counter and instance, read every value and
//! name, convert to a snapshot, and re-encode it; nothing may panic, and a decoded snapshot re-encodes to
//! a block that decodes to the same snapshot.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcounters::format::v1::{encode, PerfDataBlock};

fuzz_target!(|data: &[u8]| {
    let Ok(block) = PerfDataBlock::parse(data) else { return };
    let _ = block.system_name();
    for object in block.objects() {
        let Ok(object) = object else { break };
        let defs: Vec<_> = object.counters().filter_map(Result::ok).collect();
        if let Ok(Some(cb)) = object.counter_block() {
            for d in &defs {
                let _ = cb.value(d);
            }
        }
        for instance in object.instances() {
            let Ok(instance) = instance else { break };
            let _ = instance.name();
            let cb = instance.counter_block();
            for d in &defs {
                let _ = cb.value(d);
            }
        }
    }
    if let Ok(snapshot) = block.to_snapshot() {
        if let Ok(bytes) = encode(&snapshot) {
            let again = PerfDataBlock::parse(&bytes).and_then(|b| b.to_snapshot()).expect("re-encoded block decodes");
            assert_eq!(again, snapshot);
        }
    }
});
