//! Raw samples shaped like PDH's `PDH_RAW_COUNTER`.

/// One raw sample of one counter instance: what PDH stores per collection and what the calculator
/// consumes.
///
/// How the fields are filled depends on the counter type (see [`crate::snapshot::Snapshot::raw_counter`]):
///
/// | type group | `first` | `second` | `multi_count` |
/// |---|---|---|---|
/// | rates and timers with a tick, 100 ns or object time base, queue lengths | N | the time stamp D of that base | 1 |
/// | multi timers | N | D | B (the `PERF_COUNTER_MULTI_BASE` value) |
/// | fractions, precision timers, average timer/bulk | N | B (the base, or the precision time stamp) | 1 |
/// | raw counts and deltas | N | 0 | 1 |
/// | elapsed time | N (start time) | the object's `PerfTime` (now) | 1 |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RawCounter {
    /// `FirstValue`: the counter's own value N.
    pub first: i64,
    /// `SecondValue`: the time stamp D or the base value B, depending on the type.
    pub second: i64,
    /// `MultiCount`: the item count of `PERF_MULTI_COUNTER` types, else 1.
    pub multi_count: u32,
    /// `TimeStamp`: when the sample was collected, in 100 ns units since 1601-01-01 (a FILETIME).
    /// PDH documents local time; this crate stores UTC and converts when formatting.
    pub time: i64,
}

impl RawCounter {
    /// A sample with the given first and second values, multi count 1 and time 0.
    pub const fn new(first: i64, second: i64) -> Self {
        RawCounter {
            first,
            second,
            multi_count: 1,
            time: 0,
        }
    }

    /// The same sample with `multi_count` set.
    pub const fn with_multi(mut self, multi_count: u32) -> Self {
        self.multi_count = multi_count;
        self
    }

    /// The same sample with `time` set.
    pub const fn with_time(mut self, time: i64) -> Self {
        self.time = time;
        self
    }
}
