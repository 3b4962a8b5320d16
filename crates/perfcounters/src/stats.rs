//! Statistics over a series of raw samples, like `PdhComputeCounterStatistics`.
//!
//! * **min / max** are taken over the displayable values of the series: the per-interval values
//!   (sample *i* against sample *i − 1*) for two-sample types, the per-sample values for one-sample
//!   types. Intervals or samples that yield a status (a counter that went backwards, a zero interval…)
//!   are skipped.
//! * **mean** follows the "Average" definitions of the Windows Server 2003 Deployment Kit counter-type
//!   pages: for two-sample types (rates, timers, averages, sample fractions, deltas) it is the formula
//!   applied to the first and the last sample, e.g. `(Nx − N0)/((Dx − D0)/F)`, which weights each
//!   interval by its length; for one-sample types (raw counts, raw fractions, elapsed time) it is the
//!   arithmetic mean of the per-sample values. If the first-vs-last value has no value (e.g. the counter
//!   was reset in between), the arithmetic mean of the per-interval values is used instead.
//!
//! Cap, scale and ×1000 of the [`FormatOptions`] apply to every value, the mean included.

use crate::calc::{CalcError, Calculator, FormatOptions};
use crate::counter_type::CounterType;
use crate::raw::RawCounter;

/// The result of [`compute_statistics`]: `PDH_STATISTICS` with the values as `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Statistics {
    /// Raw samples in the series (PDH's `count`, "number of values in the array").
    pub samples: usize,
    /// Displayable values min and max were taken over: intervals (two-sample types) or samples
    /// (one-sample types) that did not yield a status.
    pub count: usize,
    /// The smallest displayable value.
    pub min: f64,
    /// The largest displayable value.
    pub max: f64,
    /// The mean, as described in the [module documentation](self).
    pub mean: f64,
}

/// Statistics over `samples`, ordered oldest first.
///
/// Fails with [`CalcError::NoSamples`] for an empty series, with the options' or the type's error
/// (invalid scale, not displayable), with [`CalcError::NeedsTwoSamples`] when a two-sample type has a
/// single sample, and otherwise with the status of the newest interval or sample when none of them
/// yields a value.
pub fn compute_statistics(
    counter_type: CounterType,
    samples: &[RawCounter],
    time_base: i64,
    opts: &FormatOptions,
) -> Result<Statistics, CalcError> {
    compute(counter_type, samples.iter(), time_base, opts)
}

/// Statistics over a circular buffer, as `PdhComputeCounterStatistics` takes it: `first_entry` is the
/// index of the oldest sample; the series runs to the end of `buffer`, wraps to index 0 and ends at
/// `first_entry − 1`, the newest. Every entry of `buffer` is part of the series.
///
/// Fails with [`CalcError::FirstEntryOutOfRange`] if `first_entry` is not an index of a non-empty
/// buffer; otherwise like [`compute_statistics`].
pub fn compute_statistics_circular(
    counter_type: CounterType,
    buffer: &[RawCounter],
    first_entry: usize,
    time_base: i64,
    opts: &FormatOptions,
) -> Result<Statistics, CalcError> {
    if buffer.is_empty() {
        return Err(CalcError::NoSamples);
    }
    match (buffer.get(first_entry..), buffer.get(..first_entry)) {
        (Some(tail), Some(head)) if first_entry < buffer.len() => compute(
            counter_type,
            tail.iter().chain(head.iter()),
            time_base,
            opts,
        ),
        _ => Err(CalcError::FirstEntryOutOfRange),
    }
}

/// Running min / max / sum.
#[derive(Clone, Copy, Debug)]
struct Acc {
    count: usize,
    min: f64,
    max: f64,
    sum: f64,
    last_err: Option<CalcError>,
}

impl Acc {
    fn add(&mut self, r: Result<f64, CalcError>) {
        match r {
            Ok(v) => {
                if self.count == 0 {
                    self.min = v;
                    self.max = v;
                } else {
                    self.min = self.min.min(v);
                    self.max = self.max.max(v);
                }
                self.sum += v;
                self.count += 1;
            }
            Err(e) => self.last_err = Some(e),
        }
    }

    fn arithmetic_mean(&self) -> f64 {
        // count > 0 whenever this is called; the sum of finite values stays finite for any realistic
        // count, and the guard keeps the promise of finite results regardless.
        let m = self.sum / self.count.max(1) as f64;
        if m.is_finite() {
            m
        } else {
            self.max
        }
    }
}

fn compute<'a, I>(
    counter_type: CounterType,
    series: I,
    time_base: i64,
    opts: &FormatOptions,
) -> Result<Statistics, CalcError>
where
    I: Iterator<Item = &'a RawCounter>,
{
    let mut b = StatisticsBuilder::new(counter_type, time_base, opts)?;
    for s in series {
        b.push(s)?;
    }
    b.finish()
}

/// Statistics computed one sample at a time, in constant memory: what [`compute_statistics`] does
/// over a slice, for a series that is streamed (a log read record by record).
#[derive(Clone, Debug)]
pub struct StatisticsBuilder {
    calc: Calculator,
    two: bool,
    acc: Acc,
    samples: usize,
    first: Option<RawCounter>,
    prev: Option<RawCounter>,
}

impl StatisticsBuilder {
    /// A builder for one counter. Fails only for invalid options (the scale).
    pub fn new(
        counter_type: CounterType,
        time_base: i64,
        opts: &FormatOptions,
    ) -> Result<Self, CalcError> {
        let calc = Calculator::new(counter_type, time_base, opts)?;
        Ok(StatisticsBuilder {
            two: calc.formula().needs_two_samples(),
            calc,
            acc: Acc {
                count: 0,
                min: 0.0,
                max: 0.0,
                sum: 0.0,
                last_err: None,
            },
            samples: 0,
            first: None,
            prev: None,
        })
    }

    /// Adds the next (newer) sample. Fails on the first sample when the counter type has no
    /// displayable value at all (a base type, an unsupported type).
    pub fn push(&mut self, s: &RawCounter) -> Result<(), CalcError> {
        self.samples += 1;
        if self.first.is_none() {
            self.first = Some(*s);
            if !self.calc.formula().is_displayable() {
                // The type's own error (not displayable / unsupported).
                self.calc.compute(s, None)?;
            }
        }
        if self.two {
            if let Some(p) = &self.prev {
                self.acc.add(self.calc.compute(s, Some(p)));
            }
        } else {
            self.acc.add(self.calc.compute(s, None));
        }
        self.prev = Some(*s);
        Ok(())
    }

    /// The statistics of the samples pushed so far; see [`compute_statistics`] for the errors.
    pub fn finish(&self) -> Result<Statistics, CalcError> {
        let (Some(first), Some(last)) = (&self.first, &self.prev) else {
            return Err(CalcError::NoSamples);
        };
        if self.acc.count == 0 {
            return Err(self.acc.last_err.unwrap_or(CalcError::NeedsTwoSamples));
        }
        let mean = if self.two {
            self.calc
                .compute(last, Some(first))
                .unwrap_or_else(|_| self.acc.arithmetic_mean())
        } else {
            self.acc.arithmetic_mean()
        };
        Ok(Statistics {
            samples: self.samples,
            count: self.acc.count,
            min: self.acc.min,
            max: self.acc.max,
            mean,
        })
    }
}

/// Minimum, maximum and arithmetic mean of already formatted values (a PDH-CSV log's cells), the way
/// Performance Monitor's value bar shows them for a log without raw data.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValueStatistics {
    acc: Option<(usize, f64, f64, f64)>,
    samples: usize,
}

impl ValueStatistics {
    /// An empty series.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one value; `None` (a blank cell) counts as a sample without a value.
    pub fn push(&mut self, v: Option<f64>) {
        self.samples += 1;
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.acc = Some(match self.acc {
                None => (1, v, v, v),
                Some((n, min, max, sum)) => (n + 1, min.min(v), max.max(v), sum + v),
            });
        }
    }

    /// The statistics, or [`CalcError::NoSamples`] when no value was pushed.
    pub fn finish(&self) -> Result<Statistics, CalcError> {
        let (count, min, max, sum) = self.acc.ok_or(CalcError::NoSamples)?;
        let mean = sum / count as f64;
        Ok(Statistics {
            samples: self.samples,
            count,
            min,
            max,
            mean: if mean.is_finite() { mean } else { max },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PDH: FormatOptions = FormatOptions::PDH_DEFAULT;

    #[test]
    fn rate_mean_is_first_vs_last() {
        // PERF_COUNTER_COUNTER, F = 10 ticks/s.
        // (N, D): (0, 0), (10, 10), (40, 30), (40, 40)
        // intervals: 10·10/10 = 10/s; 30·10/20 = 15/s; 0·10/10 = 0/s → min 0, max 15
        // mean = (40 − 0)·10/(40 − 0) = 10/s (not (10+15+0)/3 = 8.33)
        let s = [
            RawCounter::new(0, 0),
            RawCounter::new(10, 10),
            RawCounter::new(40, 30),
            RawCounter::new(40, 40),
        ];
        let st = compute_statistics(CounterType::PERF_COUNTER_COUNTER, &s, 10, &PDH).unwrap();
        assert_eq!(
            st,
            Statistics {
                samples: 4,
                count: 3,
                min: 0.0,
                max: 15.0,
                mean: 10.0
            }
        );
    }

    #[test]
    fn skips_bad_intervals_and_falls_back_to_arithmetic_mean() {
        // PERF_COUNTER_DELTA: N = 100, 150, 20 (reset), 50.
        // intervals: 50; backwards (skipped); 30 → min 30, max 50
        // first vs last: 50 < 100 → invalid, so mean = (50 + 30)/2 = 40
        let s = [
            RawCounter::new(100, 0),
            RawCounter::new(150, 0),
            RawCounter::new(20, 0),
            RawCounter::new(50, 0),
        ];
        let st = compute_statistics(CounterType::PERF_COUNTER_DELTA, &s, 0, &PDH).unwrap();
        assert_eq!((st.samples, st.count), (4, 2));
        assert_eq!((st.min, st.max, st.mean), (30.0, 50.0, 40.0));
    }

    #[test]
    fn instantaneous_mean_is_arithmetic() {
        // PERF_COUNTER_RAWCOUNT: 3, 9, 6 → min 3, max 9, mean 18/3 = 6.
        let s = [
            RawCounter::new(3, 0),
            RawCounter::new(9, 0),
            RawCounter::new(6, 0),
        ];
        let st = compute_statistics(CounterType::PERF_COUNTER_RAWCOUNT, &s, 0, &PDH).unwrap();
        assert_eq!((st.samples, st.count), (3, 3));
        assert_eq!((st.min, st.max, st.mean), (3.0, 9.0, 6.0));
        // PERF_RAW_FRACTION, DK "Average" SUM(N/D)/x: 100·1/4 = 25, 100·1/2 = 50, B = 0 skipped
        // → mean (25 + 50)/2 = 37.5.
        let f = [
            RawCounter::new(1, 4),
            RawCounter::new(1, 2),
            RawCounter::new(1, 0),
        ];
        let st = compute_statistics(CounterType::PERF_RAW_FRACTION, &f, 0, &PDH).unwrap();
        assert_eq!((st.samples, st.count), (3, 2));
        assert_eq!((st.min, st.max, st.mean), (25.0, 50.0, 37.5));
    }

    #[test]
    fn circular_buffer_order() {
        // Chronological N: 0, 10, 30, 60 with D = 0, 1, 2, 3 (PERF_COUNTER_COUNTER, F = 1).
        // Stored as [30, 60, 0, 10] with the oldest at index 2.
        // intervals: 10, 20, 30 → min 10, max 30; mean 60/3 = 20.
        let buf = [
            RawCounter::new(30, 2),
            RawCounter::new(60, 3),
            RawCounter::new(0, 0),
            RawCounter::new(10, 1),
        ];
        let st = compute_statistics_circular(CounterType::PERF_COUNTER_COUNTER, &buf, 2, 1, &PDH)
            .unwrap();
        assert_eq!((st.samples, st.count), (4, 3));
        assert_eq!((st.min, st.max, st.mean), (10.0, 30.0, 20.0));
        // Read from index 0 the same buffer has a backwards step (60 → 0) that is skipped:
        // 30 → 60 = 30, 60 → 0 invalid, 0 → 10 = 10; first vs last 10 < 30 invalid → mean 20.
        let st = compute_statistics_circular(CounterType::PERF_COUNTER_COUNTER, &buf, 0, 1, &PDH)
            .unwrap();
        assert_eq!((st.count, st.min, st.max, st.mean), (2, 10.0, 30.0, 20.0));
        assert_eq!(
            compute_statistics_circular(CounterType::PERF_COUNTER_COUNTER, &buf, 4, 1, &PDH),
            Err(CalcError::FirstEntryOutOfRange)
        );
        assert_eq!(
            compute_statistics_circular(CounterType::PERF_COUNTER_COUNTER, &[], 0, 1, &PDH),
            Err(CalcError::NoSamples)
        );
    }

    #[test]
    fn errors() {
        let one = [RawCounter::new(1, 1)];
        assert_eq!(
            compute_statistics(CounterType::PERF_COUNTER_COUNTER, &[], 1, &PDH),
            Err(CalcError::NoSamples)
        );
        assert_eq!(
            compute_statistics(CounterType::PERF_COUNTER_COUNTER, &one, 1, &PDH),
            Err(CalcError::NeedsTwoSamples)
        );
        assert_eq!(
            compute_statistics(CounterType::PERF_RAW_BASE, &one, 1, &PDH),
            Err(CalcError::NotDisplayable)
        );
        assert_eq!(
            compute_statistics(
                CounterType::PERF_COUNTER_RAWCOUNT,
                &one,
                1,
                &PDH.with_scale(8)
            ),
            Err(CalcError::InvalidScale(8))
        );
        // Every interval has a zero time difference: the newest status is returned.
        let flat = [RawCounter::new(1, 5), RawCounter::new(2, 5)];
        assert_eq!(
            compute_statistics(CounterType::PERF_COUNTER_COUNTER, &flat, 1, &PDH),
            Err(CalcError::ZeroInterval)
        );
    }

    #[test]
    fn streamed_equals_slice() {
        let s = [
            RawCounter::new(0, 0),
            RawCounter::new(10, 10),
            RawCounter::new(40, 30),
            RawCounter::new(40, 40),
        ];
        let mut b = StatisticsBuilder::new(CounterType::PERF_COUNTER_COUNTER, 10, &PDH).unwrap();
        assert_eq!(b.finish(), Err(CalcError::NoSamples));
        for x in &s {
            b.push(x).unwrap();
        }
        assert_eq!(
            b.finish(),
            compute_statistics(CounterType::PERF_COUNTER_COUNTER, &s, 10, &PDH)
        );
        let mut v = ValueStatistics::new();
        assert_eq!(v.finish(), Err(CalcError::NoSamples));
        for x in [Some(2.0), None, Some(8.0), Some(5.0)] {
            v.push(x);
        }
        assert_eq!(
            v.finish(),
            Ok(Statistics {
                samples: 4,
                count: 3,
                min: 2.0,
                max: 8.0,
                mean: 5.0
            })
        );
    }

    #[test]
    fn options_apply_to_every_value() {
        // PERF_100NSEC_TIMER: intervals 100·5/10 = 50 %, 100·15/10 = 150 % → capped 100.
        // first vs last: 100·20/20 = 100 %. With scale −1: 5, 10, 10.
        let s = [
            RawCounter::new(0, 0),
            RawCounter::new(5, 10),
            RawCounter::new(20, 20),
        ];
        let st = compute_statistics(
            CounterType::PERF_100NSEC_TIMER,
            &s,
            10_000_000,
            &PDH.with_scale(-1),
        )
        .unwrap();
        assert_eq!((st.min, st.max, st.mean), (5.0, 10.0, 10.0));
        let st = compute_statistics(
            CounterType::PERF_100NSEC_TIMER,
            &s,
            10_000_000,
            &FormatOptions::typeperf(),
        )
        .unwrap();
        assert_eq!((st.min, st.max, st.mean), (50.0, 150.0, 100.0));
    }
}
