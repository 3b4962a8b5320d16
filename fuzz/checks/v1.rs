//! V1 decoder on arbitrary bytes: parse, walk every object, counter and instance, read every value and
//! name, convert to a snapshot, and re-encode it; nothing may panic, the fast paths (values through a
//! `ValueLayout`, names into a reused buffer) give what the one-by-one reads give, errors included,
//! and a decoded snapshot re-encodes to a block that decodes to the same snapshot (but for the offsets
//! of counters the encoder lays out again) and encodes again to the same block.
//!
//! The checks of the `v1` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/v1/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use perfcounters::format::v1::{
    encode, layout_counter_block, PerfCounterBlock, PerfCounterDefinition, PerfDataBlock,
    ValueLayout,
};
use perfcounters::snapshot::{Object, Snapshot};

fn same_values(
    cb: &PerfCounterBlock<'_>,
    defs: &[PerfCounterDefinition<'_>],
    layout: &ValueLayout<'_>,
) {
    let one_by_one: Result<Vec<_>, _> = defs.iter().map(|d| cb.value(d)).collect();
    let through_layout = cb.values_of(layout).map(Iterator::collect::<Vec<_>>);
    assert_eq!(through_layout, one_by_one);
}

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    let Ok(block) = PerfDataBlock::parse(data) else {
        return;
    };
    let _ = block.system_name();
    let mut name = String::from("reused");
    for object in block.objects() {
        let Ok(object) = object else { break };
        let defs: Vec<_> = object.counters().filter_map(Result::ok).collect();
        let layout = ValueLayout::new(&defs);
        if let Ok(Some(cb)) = object.counter_block() {
            same_values(&cb, &defs, &layout);
        }
        for instance in object.instances() {
            let Ok(instance) = instance else { break };
            let owned = instance.name();
            assert_eq!(instance.name_into(&mut name).map(|()| name.clone()), owned);
            same_values(&instance.counter_block(), &defs, &layout);
        }
    }
    if let Ok(snapshot) = block.to_snapshot() {
        if let Ok(bytes) = encode(&snapshot) {
            let again = PerfDataBlock::parse(&bytes)
                .and_then(|b| b.to_snapshot())
                .expect("re-encoded block decodes");
            assert_eq!(without_offsets(&again), without_offsets(&snapshot));
            // Each object's offsets are the decoded ones or the encoder's own layout of the sizes.
            let offsets = |o: &Object| o.counters.iter().map(|c| c.offset).collect::<Vec<u32>>();
            for (a, s) in again.objects.iter().zip(&snapshot.objects) {
                let laid_out =
                    layout_counter_block(s.counters.iter().map(|c| c.size)).map(|(o, _)| o);
                assert!(
                    offsets(a) == offsets(s) || Some(offsets(a)) == laid_out,
                    "offsets changed to neither"
                );
            }
            assert!(
                encode(&again).is_ok_and(|b| b == bytes),
                "encoding the decoded block again gives another block"
            );
        }
    }
}

/// `snapshot` with every counter definition's offset 0: the encoder lays out again the values of an
/// object whose offsets overlap (`ByteLength` or each other), and keeps every value (the offsets
/// are checked on their own above).
fn without_offsets(snapshot: &Snapshot) -> Snapshot {
    let mut s = snapshot.clone();
    for c in s.objects.iter_mut().flat_map(|o| o.counters.iter_mut()) {
        c.offset = 0;
    }
    s
}
