//! Name-table parsers on arbitrary bytes: never panic; whatever parses re-encodes to the same table.
//!
//! The checks of the `names` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/names/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use perfcounters::names::{parse_multi_sz, parse_text, to_multi_sz, to_text};

/// A table whose index 1 carries a number reads back as the "1 / base index" header pair (documented).
fn round_trips(table: &perfcounters::names::NameTable) -> bool {
    table.base_index().is_some()
        || table
            .names(1)
            .all(|n| !n.bytes().all(|b| b.is_ascii_digit()))
}

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    if let Ok(table) = parse_multi_sz(data).map_err(|e| e.to_string()) {
        if !round_trips(&table) {
            return;
        }
        let again = parse_multi_sz(&to_multi_sz(&table)).expect("re-encoded table parses");
        assert_eq!(again, table);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(table) = parse_text(text) {
            if !round_trips(&table) {
                return;
            }
            let again = parse_text(&to_text(&table)).expect("re-encoded text parses");
            assert_eq!(again, table);
        }
    }
}
