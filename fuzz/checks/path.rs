//! Counter-path parser on arbitrary text: never panics; whatever parses formats and re-parses to the same path.
//!
//! The checks of the `path` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/path/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use perfcounters::path::{parse_instance, wildcard_match, CounterPath};

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(path) = CounterPath::parse(text) {
        let again = CounterPath::parse(&path.to_string()).expect("formatted path parses");
        assert_eq!(again, path);
        let _ = path.matches_instance(Some("p"), "i", 1);
    }
    let _ = parse_instance(text);
    if let Some((pattern, subject)) = text.split_once('\u{1}') {
        let _ = wildcard_match(pattern, subject);
    }
}
