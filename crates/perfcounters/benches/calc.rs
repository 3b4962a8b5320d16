//! Throughput of the formula engine over a Windows-like mix of counter types.
//!
//! Run: `cargo bench --bench calc -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfcounters::calc::Calculator;
use perfcounters::{calculate, CounterType, FormatOptions, RawCounter};

const BATCH: usize = 10_000;
const QPC: i64 = 10_000_000;
const NS100: i64 = 10_000_000;

/// One value to compute: type, newer and older sample, time base.
struct Item {
    ty: CounterType,
    newer: RawCounter,
    older: RawCounter,
    f: i64,
}

/// A small deterministic generator (64-bit LCG, high bits), so every run sees the same batch.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 16
    }
    /// A value in `0..n` (`n` > 0).
    fn below(&mut self, n: i64) -> i64 {
        (self.next() % n.unsigned_abs().max(1)) as i64
    }
}

/// A batch drawn from the mix of a Windows `Global` collection: mostly 100 ns timers (Processor,
/// Process, Thread), per-second rates, raw counts; fewer fractions, averages, elapsed and precision
/// timers. About 1 % of the pairs went backwards (instance reshuffles), which yields a status.
fn batch() -> Vec<Item> {
    let mut g = Lcg(0x5eed);
    let t100 = 132_290_312_439_883_752_i64;
    let qpc = 8_123_456_789_i64;
    (0..BATCH)
        .map(|_| {
            let pick = g.below(100);
            let dt100 = 10_000_000 + g.below(100_000); // ~1 s in 100 ns units
            let dqpc = 10_000_000 + g.below(100_000); // ~1 s of QPC ticks
            let n0 = g.below(1 << 40);
            let (ty, newer, older, f) = match pick {
                0..=17 => (
                    CounterType::PERF_100NSEC_TIMER,
                    RawCounter::new(n0 + g.below(dt100), t100 + dt100),
                    RawCounter::new(n0, t100),
                    NS100,
                ),
                18..=27 => (
                    CounterType::PERF_100NSEC_TIMER_INV,
                    RawCounter::new(n0 + g.below(dt100), t100 + dt100),
                    RawCounter::new(n0, t100),
                    NS100,
                ),
                28..=44 => (
                    CounterType::PERF_COUNTER_COUNTER,
                    RawCounter::new((n0 & 0x0FFF_FFFF) + g.below(5000), qpc + dqpc),
                    RawCounter::new(n0 & 0x0FFF_FFFF, qpc),
                    QPC,
                ),
                45..=54 => (
                    CounterType::PERF_COUNTER_BULK_COUNT,
                    RawCounter::new(n0 + g.below(1 << 24), qpc + dqpc),
                    RawCounter::new(n0, qpc),
                    QPC,
                ),
                55..=67 => (
                    CounterType::PERF_COUNTER_RAWCOUNT,
                    RawCounter::new(g.below(1 << 20), 0),
                    RawCounter::new(g.below(1 << 20), 0),
                    0,
                ),
                68..=77 => (
                    CounterType::PERF_COUNTER_LARGE_RAWCOUNT,
                    RawCounter::new(n0, 0),
                    RawCounter::new(n0, 0),
                    0,
                ),
                78..=82 => {
                    let b = 1 + g.below(1 << 30);
                    (
                        CounterType::PERF_RAW_FRACTION,
                        RawCounter::new(g.below(b), b),
                        RawCounter::new(0, 0),
                        0,
                    )
                }
                83..=87 => {
                    let ops = 1 + g.below(1000);
                    (
                        CounterType::PERF_AVERAGE_TIMER,
                        RawCounter::new(n0 + ops * g.below(50_000), 7_000 + ops),
                        RawCounter::new(n0, 7_000),
                        QPC,
                    )
                }
                88..=90 => {
                    let ops = 1 + g.below(1000);
                    (
                        CounterType::PERF_AVERAGE_BULK,
                        RawCounter::new(n0 + ops * 4096, 9_000 + ops),
                        RawCounter::new(n0, 9_000),
                        0,
                    )
                }
                91..=92 => (
                    CounterType::PERF_ELAPSED_TIME,
                    RawCounter::new(t100 - g.below(1 << 40), t100),
                    RawCounter::new(0, 0),
                    NS100,
                ),
                93..=95 => (
                    CounterType::PERF_PRECISION_100NS_TIMER,
                    RawCounter::new(n0 + g.below(dt100), t100 + dt100),
                    RawCounter::new(n0, t100),
                    NS100,
                ),
                96..=98 => (
                    CounterType::PERF_COUNTER_100NS_QUEUELEN_TYPE,
                    RawCounter::new(n0 + g.below(3 * dt100), t100 + dt100),
                    RawCounter::new(n0, t100),
                    NS100,
                ),
                _ => (
                    // A reshuffled instance: the counter went backwards.
                    CounterType::PERF_100NSEC_TIMER,
                    RawCounter::new(n0, t100 + dt100),
                    RawCounter::new(n0 + 1, t100),
                    NS100,
                ),
            };
            Item {
                ty,
                newer,
                older,
                f,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let items = batch();
    let opts = FormatOptions::typeperf();
    let mut group = c.benchmark_group("calc");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("calculate_mixed_10k", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            let mut errors = 0u32;
            for it in black_box(&items) {
                match calculate(it.ty, &it.newer, Some(&it.older), it.f, &opts) {
                    Ok(v) => sum += v,
                    Err(_) => errors += 1,
                }
            }
            (sum, errors)
        })
    });
    // Counter-major order, as a query computes: for each counter, every instance. Same values, sorted
    // by type, so the type dispatch is predictable.
    let mut sorted: Vec<&Item> = items.iter().collect();
    sorted.sort_by_key(|it| it.ty.0);
    group.bench_function("calculate_counter_major_10k", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            let mut errors = 0u32;
            for it in black_box(&sorted) {
                match calculate(it.ty, &it.newer, Some(&it.older), it.f, &opts) {
                    Ok(v) => sum += v,
                    Err(_) => errors += 1,
                }
            }
            (sum, errors)
        })
    });
    // The same, with one prepared calculator per counter (type decoded and options checked once).
    type Run = (CounterType, Calculator, Vec<(RawCounter, RawCounter)>);
    let mut runs: Vec<Run> = Vec::new();
    for it in &sorted {
        match runs.last_mut() {
            Some((ty, _, v)) if *ty == it.ty => v.push((it.newer, it.older)),
            _ => runs.push((
                it.ty,
                Calculator::new(it.ty, it.f, &opts).expect("valid options"),
                vec![(it.newer, it.older)],
            )),
        }
    }
    group.bench_function("prepared_counter_major_10k", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            let mut errors = 0u32;
            for (_, calc, samples) in black_box(&runs) {
                for (newer, older) in samples {
                    match calc.compute(newer, Some(older)) {
                        Ok(v) => sum += v,
                        Err(_) => errors += 1,
                    }
                }
            }
            (sum, errors)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
