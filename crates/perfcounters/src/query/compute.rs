//! The compute loops of a collection: every run of counters read and computed chunk by chunk, with
//! the loops compiled for the counter's field and for its formula, so that a run of thousands of
//! instances decides neither per value.

use crate::calc::{CalcError, Calculator, FormatOptions, Formula};
use crate::raw::RawCounter;
use crate::snapshot::{RawPacker, RawValues, Second};
use crate::status::PdhStatus;

use super::plan::{CounterState, Plan, Run, NO_SLOT};
use super::resolve::{Prepared, Resolved};
use super::value::{missing, CounterValue};
use super::view::{View, PERF_NO_UNIQUE_ID};

/// Every counter's value from `view` and the previous samples (the raw samples of `values`), into
/// `values`: `plan` resolved in `view`, then each run of `runs` chunk by chunk, with the counters'
/// `state`.
pub(super) fn compute<V: View + ?Sized>(
    view: &V,
    options: &FormatOptions,
    plan: &mut Plan,
    runs: &[Run],
    state: &mut [CounterState],
    values: &mut [CounterValue],
) {
    let resolved = plan.resolve(view, options);
    // The values of each instance and each single-instance object, found once.
    let instances: Vec<Option<(V::Values<'_>, i32)>> = plan
        .instances
        .iter()
        .map(|s| {
            let object = resolved.objects.get(s.object).copied().flatten()?;
            view.values(object, Some(s.found.then_some(s.pos)?))
        })
        .collect();
    let singles: Vec<Option<(V::Values<'_>, i32)>> = resolved
        .objects
        .iter()
        .map(|o| view.values((*o)?, None))
        .collect();
    // The samples of one chunk of a run, between its two loops (one buffer for every run).
    let mut fresh = [Fresh::NONE; CHUNK];
    let mut start = 0;
    for run in runs {
        let range = start..run.end;
        start = run.end;
        if range.end > state.len().min(values.len()) {
            break;
        }
        match prepared_of(&resolved, run) {
            Ok(prepared) => {
                let single = singles
                    .get(usize::try_from(run.object_slot).unwrap_or(usize::MAX))
                    .copied()
                    .flatten();
                let run_values = RunValues {
                    instances: &instances,
                    single,
                    packer: &prepared.packer,
                };
                let job = run_values.job(&prepared.calculator);
                // Chunk by chunk. (Computing the runs of one object side by side, a chunk of
                // each in turn so that a chunk's counter blocks stay in cache for every
                // counter, measured no faster.)
                for first in range.clone().step_by(CHUNK) {
                    let end = range.end.min(first + CHUNK);
                    if let (Some(states), Some(values)) =
                        (state.get_mut(first..end), values.get_mut(first..end))
                    {
                        job.chunk(&mut fresh, states, values);
                    }
                }
            }
            // No sample: the next collection primes again.
            Err(status) => {
                if let Some(values) = values.get_mut(range) {
                    values.fill(missing(status));
                }
            }
        }
    }
}

/// The prepared counter that the counters of `run` read, or the status of every counter of the
/// run.
fn prepared_of<'r, F>(resolved: &'r Resolved<F>, run: &Run) -> Result<&'r Prepared<F>, PdhStatus> {
    if let Some(status) = run.fixed {
        return Err(status);
    }
    let slot = |i: u32| usize::try_from(i).unwrap_or(usize::MAX);
    if resolved
        .objects
        .get(slot(run.object_slot))
        .copied()
        .flatten()
        .is_none()
    {
        return Err(PdhStatus::PDH_CSTATUS_NO_OBJECT);
    }
    match resolved.counters.get(slot(run.counter_slot)) {
        Some(Some(prepared)) => Ok(prepared),
        _ => Err(PdhStatus::PDH_CSTATUS_NO_COUNTER),
    }
}

/// What the counters of one run read: the values of every instance slot, the single-instance
/// values of their object, and how their counter's raw sample is packed.
struct RunValues<'a, T: RawValues> {
    instances: &'a [Option<(T, i32)>],
    single: Option<(T, i32)>,
    packer: &'a RawPacker<T::Field>,
}

/// One counter's raw sample as a collection reads it, before the formula (the `TimeStamp` is the
/// run's). A run is computed in chunks of [`CHUNK`] counters, each in two loops: one reads the
/// samples (compiled for the counter's field and second value), the other computes (compiled for
/// the formula), so that neither decides per value what the other fixes per counter.
#[derive(Clone, Copy, Debug)]
struct Fresh {
    first: i64,
    second: i64,
    multi_count: u32,
    unique_id: i32,
    /// Why the counter has no sample in this collection; `None` when it has one.
    missing: Option<PdhStatus>,
}

/// How many counters a run reads before computing them (their samples stay in the first-level
/// cache between the two loops).
const CHUNK: usize = 256;

impl Fresh {
    const NONE: Fresh = Fresh::missing(PdhStatus::PDH_CSTATUS_NO_INSTANCE);

    const fn missing(status: PdhStatus) -> Fresh {
        Fresh {
            first: 0,
            second: 0,
            multi_count: 0,
            unique_id: PERF_NO_UNIQUE_ID,
            missing: Some(status),
        }
    }
}

/// The loop that reads a chunk of a run's samples ([`read`]), compiled for one kind of field and
/// one source of the second value.
type Read<T> = fn(&RunValues<'_, T>, &[CounterState], &mut [Fresh]);

/// The loop that computes a chunk of a run's values from their samples, compiled for one formula,
/// with or without cap, scale and ×1000.
type Fill = fn(&Calculator, i64, &[Fresh], &mut [CounterState], &mut [CounterValue]);

/// How a run's values are made from their samples.
#[derive(Clone, Copy)]
enum Computing<'a> {
    /// By the calculator, with the loop compiled for its formula.
    Formula(Fill, &'a Calculator),
    /// The calculator could not be made: each counter with a sample gets this status.
    Fail(CalcError),
}

/// One run ready to be computed chunk by chunk: its loops picked once per collection.
struct Job<'a, T: RawValues> {
    run: RunValues<'a, T>,
    read: Read<T>,
    computing: Computing<'a>,
    /// The run's `TimeStamp`.
    time: i64,
}

impl<'a, T: RawValues> RunValues<'a, T> {
    /// The run's loops: reading compiled for the counter's field and second value, computing for
    /// the formula (with and without cap, scale and ×1000): a run of thousands of instances then
    /// runs one formula's arithmetic without dispatching on it for each value.
    fn job(self, calculator: &'a Result<Calculator, CalcError>) -> Job<'a, T> {
        fn fill<const FORMULA: u8, const PLAIN: bool>(
            calculator: &Calculator,
            time: i64,
            fresh: &[Fresh],
            states: &mut [CounterState],
            values: &mut [CounterValue],
        ) {
            let calculator = *calculator;
            // One length for the three slices, so that indexing them checks no bound.
            let n = fresh.len().min(states.len()).min(values.len());
            let (fresh, states, values) = (&fresh[..n], &mut states[..n], &mut values[..n]);
            for i in 0..n {
                values[i] = computed(&fresh[i], time, &mut states[i], &values[i], |raw, older| {
                    let formula = const { Formula::ALL[FORMULA as usize] };
                    calculator.compute_as(formula, PLAIN, raw, older)
                });
            }
        }
        fn pick_fill<const PLAIN: bool>(formula: Formula) -> Fill {
            use Formula as F;
            match formula {
                F::Raw => fill::<{ F::Raw as u8 }, PLAIN>,
                F::RawDiv1000 => fill::<{ F::RawDiv1000 as u8 }, PLAIN>,
                F::Delta => fill::<{ F::Delta as u8 }, PLAIN>,
                F::RatePerSec => fill::<{ F::RatePerSec as u8 }, PLAIN>,
                F::Timer => fill::<{ F::Timer as u8 }, PLAIN>,
                F::TimerInv => fill::<{ F::TimerInv as u8 }, PLAIN>,
                F::MultiTimerTick => fill::<{ F::MultiTimerTick as u8 }, PLAIN>,
                F::MultiTimer => fill::<{ F::MultiTimer as u8 }, PLAIN>,
                F::MultiTimerInv => fill::<{ F::MultiTimerInv as u8 }, PLAIN>,
                F::QueueLen => fill::<{ F::QueueLen as u8 }, PLAIN>,
                F::SampleFraction => fill::<{ F::SampleFraction as u8 }, PLAIN>,
                F::RawFraction => fill::<{ F::RawFraction as u8 }, PLAIN>,
                F::AverageTimer => fill::<{ F::AverageTimer as u8 }, PLAIN>,
                F::AverageBulk => fill::<{ F::AverageBulk as u8 }, PLAIN>,
                F::Elapsed => fill::<{ F::Elapsed as u8 }, PLAIN>,
                F::NotDisplayable => fill::<{ F::NotDisplayable as u8 }, PLAIN>,
                F::Unsupported => fill::<{ F::Unsupported as u8 }, PLAIN>,
            }
        }
        fn pick_read<T: RawValues, const KIND: u8>(second: Second) -> Read<T> {
            use Second as S;
            match second {
                S::Zero => read::<T, KIND, { S::Zero as u8 }>,
                S::Companion => read::<T, KIND, { S::Companion as u8 }>,
                S::Fixed => read::<T, KIND, { S::Fixed as u8 }>,
                S::TimeAndMultiCount => read::<T, KIND, { S::TimeAndMultiCount as u8 }>,
            }
        }
        let second = self.packer.second();
        let read = match T::kind(self.packer.counter()) {
            1 => pick_read::<T, 1>(second),
            2 => pick_read::<T, 2>(second),
            3 => pick_read::<T, 3>(second),
            4 => pick_read::<T, 4>(second),
            _ => pick_read::<T, 0>(second),
        };
        let computing = match calculator {
            Ok(calculator) if calculator.is_plain() => {
                Computing::Formula(pick_fill::<true>(calculator.formula()), calculator)
            }
            Ok(calculator) => {
                Computing::Formula(pick_fill::<false>(calculator.formula()), calculator)
            }
            Err(e) => Computing::Fail(*e),
        };
        Job {
            time: self.packer.time(),
            run: self,
            read,
            computing,
        }
    }
}

impl<T: RawValues> Job<'_, T> {
    /// Reads the samples of counters `states` (at most [`CHUNK`] of the run's) into `fresh`, then
    /// computes their `values`.
    fn chunk(
        &self,
        fresh: &mut [Fresh; CHUNK],
        states: &mut [CounterState],
        values: &mut [CounterValue],
    ) {
        let fresh = &mut fresh[..states.len().min(CHUNK)];
        (self.read)(&self.run, states, fresh);
        match self.computing {
            Computing::Formula(fill, calculator) => {
                fill(calculator, self.time, fresh, states, values)
            }
            Computing::Fail(error) => {
                for ((f, c), v) in fresh.iter().zip(states).zip(values) {
                    *v = computed(f, self.time, c, v, |_, _| Err(error));
                }
            }
        }
    }
}

/// The samples of counters `states`, packed with the counter's field read as kind `KIND`
/// ([`RawValues::kind`]) and the second value from source `SECOND` (the packer's, as
/// constants).
fn read<T: RawValues, const KIND: u8, const SECOND: u8>(
    run: &RunValues<'_, T>,
    states: &[CounterState],
    fresh: &mut [Fresh],
) {
    let second = const { Second::ALL[SECOND as usize] };
    // Copies, so that the loop keeps them in registers rather than reading them through `run`
    // for every counter.
    let (packer, instances, single) = (*run.packer, run.instances, run.single);
    for (c, f) in states.iter().zip(fresh) {
        let values = if c.instance_slot == NO_SLOT {
            single
        } else {
            let slot = usize::try_from(c.instance_slot).unwrap_or(usize::MAX);
            instances.get(slot).copied().flatten()
        };
        *f = match values {
            None => Fresh::NONE,
            Some((values, unique_id)) => match packer.pack_as::<T, KIND>(values, second) {
                Some(raw) => Fresh {
                    first: raw.first,
                    second: raw.second,
                    multi_count: raw.multi_count,
                    unique_id,
                    missing: None,
                },
                None => Fresh::missing(PdhStatus::PDH_CSTATUS_INVALID_DATA),
            },
        };
    }
}

/// The value of counter `c` from its sample `f` of this collection (`TimeStamp` `time`) and its
/// `last` value: `compute` turns the raw sample and the previous one (when it pairs) into the
/// value.
#[inline(always)]
fn computed(
    f: &Fresh,
    time: i64,
    c: &mut CounterState,
    last: &CounterValue,
    compute: impl FnOnce(&RawCounter, Option<&RawCounter>) -> Result<f64, CalcError>,
) -> CounterValue {
    if let Some(status) = f.missing {
        return missing(status);
    }
    let raw = RawCounter {
        first: f.first,
        second: f.second,
        multi_count: f.multi_count,
        time,
    };
    // Another instance now holds the name: its sample does not pair with the previous one.
    let same_instance = c.unique_id == f.unique_id;
    let previous = last.raw().filter(|_| same_instance);
    if !same_instance {
        // Written only when it changes: the states of a steady collection stay clean in cache.
        c.unique_id = f.unique_id;
    }
    match compute(&raw, previous.as_ref()) {
        Ok(v) => {
            let changed = previous.is_none_or(|p| p.first != raw.first || p.second != raw.second);
            let status = if changed {
                PdhStatus::PDH_CSTATUS_NEW_DATA
            } else {
                PdhStatus::PDH_CSTATUS_VALID_DATA
            };
            CounterValue::sampled(Some(v), status, raw)
        }
        Err(e) => CounterValue::sampled(None, e.status(), raw),
    }
}
