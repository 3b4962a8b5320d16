//! Cumulative series kept monotonic: 32-bit counters widened, spurious drops held back.
//!
//! A raw cumulative counter can go backwards for three reasons, which one collection cannot tell apart:
//!
//! * a **32-bit wrap** (`PERF_COUNTER_COUNTER` wraps after 2^32 events, every two hours for a busy
//!   `% Processor Utility` base);
//! * a **spurious drop**: a provider reports 0 (or a stale value) for one collection and the true,
//!   larger value again in the next one — the "zero dip" that makes `rate()` show 800 % CPU;
//! * a **real reset**: the provider or the process behind the series restarted.
//!
//! The guard therefore holds a series at its last exported value when it goes backwards and decides
//! at the next collection: back at or above the held value → the drop was spurious and is never
//! exported; still low (and not lower than the first low value) → a wrap if the counter is 32 bits
//! wide and fell by more than 2^31 (the high part is carried into a 64-bit value), otherwise a reset,
//! exported one collection late. Prometheus thus sees a reset only for a drop that lasted two
//! collections.

use std::collections::HashMap;

const WRAP: u64 = 1 << 32;

#[derive(Clone, Debug)]
struct Series {
    /// Added to a 32-bit raw value: the wraps seen so far × 2^32.
    high: u64,
    /// The raw value accepted last.
    last_raw: u64,
    /// The value exported last (widened).
    exported: u64,
    /// The first raw value of a drop being held back.
    held: Option<u64>,
    /// The collection that last saw the series.
    seen: u64,
}

/// State of every cumulative series across collections, keyed by series identity (metric name
/// and labels).
#[derive(Clone, Debug, Default)]
pub struct CounterGuard {
    series: HashMap<String, Series>,
    generation: u64,
}

/// Series not seen for this many collections are forgotten.
const KEEP_MISSING: u64 = 3;

impl CounterGuard {
    /// An empty guard.
    pub fn new() -> Self {
        CounterGuard::default()
    }

    /// Starts a collection: series not seen in the last few collections are forgotten.
    pub fn begin(&mut self) {
        self.generation += 1;
        let now = self.generation;
        self.series
            .retain(|_, s| now.saturating_sub(s.seen) <= KEEP_MISSING);
    }

    /// The number of series tracked.
    pub fn len(&self) -> usize {
        self.series.len()
    }

    /// Whether no series is tracked.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// The value to export for the series `key` whose raw value is now `raw`; `bits32` when the raw
    /// value is a 32-bit counter (widened to 64 bits across wraps).
    pub fn value(&mut self, key: &str, raw: u64, bits32: bool) -> u64 {
        let now = self.generation;
        let Some(s) = self.series.get_mut(key) else {
            self.series.insert(
                key.to_string(),
                Series {
                    high: 0,
                    last_raw: raw,
                    exported: raw,
                    held: None,
                    seen: now,
                },
            );
            return raw;
        };
        s.seen = now;
        let widened = if bits32 {
            s.high.saturating_add(raw)
        } else {
            raw
        };
        if widened >= s.exported {
            s.held = None;
            s.last_raw = raw;
            s.exported = widened;
            return widened;
        }
        match s.held {
            Some(first_low) if raw >= first_low => {
                // Low for a second collection: a wrap or a reset.
                if bits32 && s.last_raw.saturating_sub(first_low) > WRAP / 2 {
                    s.high = s.high.saturating_add(WRAP);
                    s.exported = s.high.saturating_add(raw);
                } else {
                    s.high = 0;
                    s.exported = raw;
                }
                s.held = None;
                s.last_raw = raw;
                s.exported
            }
            _ => {
                // First low value (or lower still): hold the series.
                s.held = Some(raw);
                s.exported
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(guard: &mut CounterGuard, raws: &[u64], bits32: bool) -> Vec<u64> {
        raws.iter()
            .map(|&r| {
                guard.begin();
                guard.value("s", r, bits32)
            })
            .collect()
    }

    #[test]
    fn zero_dip_is_never_exported() {
        let mut g = CounterGuard::new();
        assert_eq!(
            run(&mut g, &[100, 200, 0, 300, 400], false),
            [100, 200, 200, 300, 400]
        );
        // A dip to a stale nonzero value (3396 after 10^9) as well.
        let mut g = CounterGuard::new();
        assert_eq!(
            run(&mut g, &[1_000_000_000, 3396, 1_000_000_500], false),
            [1_000_000_000, 1_000_000_000, 1_000_000_500]
        );
    }

    #[test]
    fn a_reset_that_lasts_is_exported_one_collection_late() {
        let mut g = CounterGuard::new();
        assert_eq!(
            run(&mut g, &[100, 200, 5, 10, 20], false),
            [100, 200, 200, 10, 20]
        );
    }

    #[test]
    fn a_32_bit_counter_never_wraps() {
        let mut g = CounterGuard::new();
        let top = u64::from(u32::MAX) - 100;
        // 4294967195 → wraps to 400 → 900: widened to 2^32 + 400 (held once), 2^32 + 900.
        assert_eq!(
            run(&mut g, &[top, 400, 900, 5000], true),
            [top, top, WRAP + 900, WRAP + 5000]
        );
        // A second wrap carries again.
        assert_eq!(
            run(&mut g, &[top, 10, 20], true),
            [WRAP + top, WRAP + top, 2 * WRAP + 20]
        );
    }

    #[test]
    fn a_64_bit_drop_is_a_reset_not_a_wrap() {
        let mut g = CounterGuard::new();
        let big = 1u64 << 40;
        assert_eq!(run(&mut g, &[big, 1, 2], false), [big, big, 2]);
    }

    #[test]
    fn missing_series_are_forgotten() {
        let mut g = CounterGuard::new();
        g.begin();
        g.value("a", 1, false);
        for _ in 0..=KEEP_MISSING {
            g.begin();
            g.value("b", 1, false);
        }
        assert_eq!(g.len(), 1);
        // A series that comes back after being forgotten starts again.
        g.begin();
        assert_eq!(g.value("a", 0, false), 0);
    }
}
