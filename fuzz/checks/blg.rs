//! A binary log (`.blg`) from arbitrary bytes: every record the reader hands out is parsed as its
//! kind says (counter list, sample sub-records, wildcard instances and their names, V1 blocks and
//! their snapshots, name-table chunks, trailer), then the whole log is read as columns and samples.
//! Invariants: nothing panics or hangs; in every sample each column has at most one value, and every
//! value's column exists; the display order is a permutation of the columns; read for its times
//! alone (`BlgLog::set_times_only`), the log gives the same sample times, the same error at the
//! same place and the same warnings.
//!
//! The checks of the `blg` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/blg/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use perfcounters::format::blg::{BlgLog, BlgReader, RecordKind, SubRecord};

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    if let Ok(mut r) = BlgReader::new(data) {
        while let Some(rec) = r.next_record() {
            let Ok(rec) = rec else { break };
            match rec.kind {
                RecordKind::CounterList => {
                    if let Ok(list) = rec.counter_list() {
                        for e in list.entries() {
                            let _ = e.to_spec().path().to_string();
                        }
                    }
                }
                RecordKind::Sample => {
                    if let Ok(s) = rec.sample() {
                        assert_eq!(s.sub_records().count(), s.len());
                        for sub in s.sub_records() {
                            match sub {
                                SubRecord::Instances(a) => {
                                    assert_eq!(a.items().count(), a.len());
                                    for i in a.items() {
                                        let _ = i.name();
                                    }
                                }
                                SubRecord::Block(b) => {
                                    if let Ok(block) = b.parse() {
                                        let _ = block.to_snapshot();
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
                RecordKind::NameTable => {
                    if let Ok(c) = rec.name_chunk() {
                        let _ = c.table();
                    }
                }
                RecordKind::Trailer => {
                    if let Ok(t) = rec.trailer() {
                        let _ = t.sub_records().count();
                    }
                }
                RecordKind::Other(_) => {}
            }
        }
    }
    if let Ok(mut log) = BlgLog::new(data) {
        let mut seen = Vec::new();
        while let Some(s) = log.next_sample() {
            let Ok(s) = s else { break };
            seen.clear();
            for v in s.values {
                seen.push(v.column);
            }
            let n = seen.len();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n, "a column has two values in one sample");
            let columns = log.columns().len();
            assert!(seen.iter().all(|&c| c < columns));
        }
        let mut order = log.display_order();
        order.sort_unstable();
        assert!(order.iter().copied().eq(0..log.columns().len()));
    }
    assert_eq!(samples(data, true), samples(data, false));
}

/// The times of the samples of a log read whole or for its times alone, then the error that ended
/// the reading (if any), then the warnings.
fn samples(data: &[u8], times_only: bool) -> Option<(Vec<i64>, Option<String>, Vec<String>)> {
    let mut log = BlgLog::new(data).ok()?;
    log.set_times_only(times_only);
    let mut times = Vec::new();
    let error = loop {
        match log.next_sample() {
            None => break None,
            Some(Ok(s)) => times.push(s.time),
            Some(Err(e)) => break Some(e.to_string()),
        }
    };
    let warnings = log.warnings().iter().map(|w| w.to_string()).collect();
    Some((times, error, warnings))
}
