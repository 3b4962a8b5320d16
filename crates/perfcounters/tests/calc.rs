//! The PDH formulas, pinned type by type with values worked out by hand, plus statuses, options and a
//! property test that the calculator never panics and never returns NaN or an infinity.

use perfcounters::calc::{CalcError, Calculator, FormatOptions, Formula};
use perfcounters::stats::{compute_statistics, compute_statistics_circular};
use perfcounters::{calculate, CounterType, PdhStatus, RawCounter};
use proptest::prelude::*;

type T = CounterType;

const PDH: FormatOptions = FormatOptions::PDH_DEFAULT;
const NOCAP: FormatOptions = FormatOptions {
    no_cap_100: true,
    ..FormatOptions::PDH_DEFAULT
};
/// QPC at 10 MHz, as on Windows 10.
const F: i64 = 10_000_000;
/// A realistic `PerfTime100nSec` (from a real System block).
const T0: i64 = 132_290_312_439_883_752;

fn r(n: i64, d: i64) -> RawCounter {
    RawCounter::new(n, d)
}

/// Two-sample value with PDH defaults.
fn two(t: CounterType, new: RawCounter, old: RawCounter, f: i64) -> Result<f64, CalcError> {
    calculate(t, &new, Some(&old), f, &PDH)
}

/// One-sample value with PDH defaults.
fn one(t: CounterType, new: RawCounter, f: i64) -> Result<f64, CalcError> {
    calculate(t, &new, None, f, &PDH)
}

// ---------------------------------------------------------------------------------------------
// Every predefined type.

#[test]
fn rates_per_second() {
    // PERF_COUNTER_COUNTER: ΔN = 1500 − 1000 = 500 over ΔD = 20,000,000 ticks at F = 10^7 = 2 s
    // → 500 / 2 = 250 /s.
    let v = two(
        T::PERF_COUNTER_COUNTER,
        r(1500, 70_000_000),
        r(1000, 50_000_000),
        F,
    );
    assert_eq!(v, Ok(250.0));
    // PERF_COUNTER_BULK_COUNT (64-bit N): ΔN = 3,000,000 bytes over 5,000,000 ticks = 0.5 s
    // → 6,000,000 /s.
    let v = two(
        T::PERF_COUNTER_BULK_COUNT,
        r(10_003_000_000, 5_000_000),
        r(10_000_000_000, 0),
        F,
    );
    assert_eq!(v, Ok(6_000_000.0));
    // PERF_SAMPLE_COUNTER uses time, not a base: ΔN = 19 − 7 = 12 over 3,000,000 ticks at
    // F = 1,000,000 = 3 s → 4.
    let v = two(T::PERF_SAMPLE_COUNTER, r(19, 3_000_000), r(7, 0), 1_000_000);
    assert_eq!(v, Ok(4.0));
}

#[test]
fn timers() {
    // PERF_COUNTER_TIMER: 100 · 2,500,000 / 10,000,000 = 25 %.
    let v = two(T::PERF_COUNTER_TIMER, r(2_500_000, 10_000_000), r(0, 0), F);
    assert_eq!(v, Ok(25.0));
    // PERF_COUNTER_TIMER_INV: 100 · (1 − 7,500,000 / 10,000,000) = 100 · 0.25 = 25 %.
    let v = two(
        T::PERF_COUNTER_TIMER_INV,
        r(7_500_000, 10_000_000),
        r(0, 0),
        F,
    );
    assert_eq!(v, Ok(25.0));
    // PERF_100NSEC_TIMER (Processor\% User Time): 100 · 1,250,000 / 10,000,000 = 12.5 %.
    let v = two(
        T::PERF_100NSEC_TIMER,
        r(51_250_000, T0 + 10_000_000),
        r(50_000_000, T0),
        F,
    );
    assert_eq!(v, Ok(12.5));
    // PERF_OBJ_TIME_TIMER: 100 · 300 / 1200 = 25 %.
    let v = two(T::PERF_OBJ_TIME_TIMER, r(800, 2200), r(500, 1000), 0);
    assert_eq!(v, Ok(25.0));
}

#[test]
fn processor_time_is_an_inverse_100ns_timer() {
    // Processor(_Total)\% Processor Time, PERF_100NSEC_TIMER_INV. N is the idle time in 100 ns,
    // D is PerfTime100nSec. One second (10,000,000 units) with 0.75 s idle:
    // 100 · (1 − 7,500,000 / 10,000,000) = 25 % busy.
    let old = r(1_234_567_890_000, T0);
    let new = r(1_234_567_890_000 + 7_500_000, T0 + 10_000_000);
    assert_eq!(two(T::PERF_100NSEC_TIMER_INV, new, old, F), Ok(25.0));
    // 0.6 s idle → 40 % busy (0.6 is not exact in binary: compare to 1e-9).
    let new = r(1_234_567_890_000 + 6_000_000, T0 + 10_000_000);
    let v = two(T::PERF_100NSEC_TIMER_INV, new, old, F).unwrap();
    assert!((v - 40.0).abs() < 1e-9, "{v}");
    // The time base is not used: any F, even 0 or negative, gives the same value.
    assert_eq!(
        two(T::PERF_100NSEC_TIMER_INV, new, old, 0),
        two(T::PERF_100NSEC_TIMER_INV, new, old, -3)
    );
}

#[test]
fn precision_timers_use_the_companion_time_stamp() {
    // N and the PERF_PRECISION_TIMESTAMP value D: 100 · (140 − 100) / (1160 − 1000) = 100 · 40/160
    // = 25 %, for all three clocks.
    for t in [
        T::PERF_PRECISION_SYSTEM_TIMER,
        T::PERF_PRECISION_100NS_TIMER,
        T::PERF_PRECISION_OBJECT_TIMER,
    ] {
        assert_eq!(two(t, r(140, 1160), r(100, 1000), F), Ok(25.0), "{t:?}");
    }
}

#[test]
fn multi_timers() {
    // PERF_COUNTER_MULTI_TIMER as CALC: 100 · (ΔN / (ΔD / F)) / B1.
    // ΔN = 2, ΔD = 10,000,000 ticks = 1 s at F = 10^7, B1 = 4: 100 · (2 / 1) / 4 = 50.
    let new = r(12, 10_000_000).with_multi(4);
    let old = r(10, 0).with_multi(3); // B0 is not used
    assert_eq!(two(T::PERF_COUNTER_MULTI_TIMER, new, old, F), Ok(50.0));
    // PERF_COUNTER_MULTI_TIMER_INV as DK and CALC: 100 · (B1 − ΔN/ΔD), no F.
    // B1 = 2, ΔN = 15,000,000, ΔD = 10,000,000: 100 · (2 − 1.5) = 50.
    let new = r(15_000_000, 10_000_000).with_multi(2);
    assert_eq!(
        two(T::PERF_COUNTER_MULTI_TIMER_INV, new, r(0, 0), F),
        Ok(50.0)
    );
    // Not normalised by B: B1 = 4, ΔN/ΔD = 1 → 100 · 3 = 300, capped at 100 unless NOCAP100.
    let new = r(10_000_000, 10_000_000).with_multi(4);
    assert_eq!(
        two(T::PERF_COUNTER_MULTI_TIMER_INV, new, r(0, 0), F),
        Ok(100.0)
    );
    assert_eq!(
        calculate(
            T::PERF_COUNTER_MULTI_TIMER_INV,
            &new,
            Some(&r(0, 0)),
            F,
            &NOCAP
        ),
        Ok(300.0)
    );
    // PERF_100NSEC_MULTI_TIMER: 100 · (ΔN/ΔD) / B1 = 100 · (30,000,000 / 10,000,000) / 4 = 75.
    let new = r(30_000_000, T0 + 10_000_000).with_multi(4);
    assert_eq!(two(T::PERF_100NSEC_MULTI_TIMER, new, r(0, T0), F), Ok(75.0));
    // PERF_100NSEC_MULTI_TIMER_INV: 100 · (B1 − ΔN/ΔD) = 100 · (4 − 3.5) = 50.
    let new = r(35_000_000, T0 + 10_000_000).with_multi(4);
    assert_eq!(
        two(T::PERF_100NSEC_MULTI_TIMER_INV, new, r(0, T0), F),
        Ok(50.0)
    );
}

#[test]
fn fractions_and_averages() {
    // PERF_RAW_FRACTION (one sample): 100 · 25 / 200 = 12.5 %.
    assert_eq!(one(T::PERF_RAW_FRACTION, r(25, 200), 0), Ok(12.5));
    // PERF_LARGE_RAW_FRACTION: 100 · 3 / 4 = 75 %.
    assert_eq!(one(T::PERF_LARGE_RAW_FRACTION, r(3, 4), 0), Ok(75.0));
    // An older sample is ignored by one-sample types.
    assert_eq!(
        two(T::PERF_RAW_FRACTION, r(25, 200), r(999, 1), 0),
        Ok(12.5)
    );
    // PERF_SAMPLE_FRACTION: 100 · (145 − 100) / (260 − 200) = 100 · 45/60 = 75 %.
    assert_eq!(
        two(T::PERF_SAMPLE_FRACTION, r(145, 260), r(100, 200), 0),
        Ok(75.0)
    );
    // PERF_AVERAGE_TIMER: (ΔN / F) / ΔB = (2,500,000 / 10^7) / 4 = 0.25 / 4 = 0.0625 s per operation.
    assert_eq!(
        two(T::PERF_AVERAGE_TIMER, r(3_500_000, 14), r(1_000_000, 10), F),
        Ok(0.0625)
    );
    // PERF_AVERAGE_BULK: ΔN / ΔB = 196,608 bytes / 3 transfers = 65,536.
    assert_eq!(
        two(T::PERF_AVERAGE_BULK, r(1_196_608, 8), r(1_000_000, 5), 0),
        Ok(65_536.0)
    );
}

#[test]
fn queue_lengths() {
    // All four: ΔN / ΔD = 30,000,000 / 10,000,000 = 3 (100 ns type follows CALC: no TB factor).
    for t in [
        T::PERF_COUNTER_QUEUELEN_TYPE,
        T::PERF_COUNTER_LARGE_QUEUELEN_TYPE,
        T::PERF_COUNTER_100NS_QUEUELEN_TYPE,
        T::PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE,
    ] {
        let v = two(t, r(40_000_000, T0 + 10_000_000), r(10_000_000, T0), F);
        assert_eq!(v, Ok(3.0), "{t:?}");
    }
}

#[test]
fn system_up_time() {
    // Real System object: N = start time, D = object PerfTime, F = object PerfFreq = 10^7.
    // (132290312439883752 − 132289457285000000) / 10^7 = 855154883752 / 10^7 = 85515.4883752 s.
    let raw = r(132_289_457_285_000_000, 132_290_312_439_883_752);
    let v = one(T::PERF_ELAPSED_TIME, raw, F).unwrap();
    assert!((v - 85_515.488_375_2).abs() < 1e-6, "{v}");
    // N = 0 (never started) and N ≥ D (start in the future) give 0, as .NET does.
    assert_eq!(one(T::PERF_ELAPSED_TIME, r(0, 5), F), Ok(0.0));
    assert_eq!(one(T::PERF_ELAPSED_TIME, r(9, 5), F), Ok(0.0));
    assert_eq!(one(T::PERF_ELAPSED_TIME, r(5, 5), F), Ok(0.0));
    // It needs F: zero → no data, negative → negative time base.
    assert_eq!(
        one(T::PERF_ELAPSED_TIME, raw, 0),
        Err(CalcError::ZeroTimeBase)
    );
    assert_eq!(
        one(T::PERF_ELAPSED_TIME, raw, -1),
        Err(CalcError::NegativeTimeBase)
    );
}

#[test]
fn deltas_and_raw_counts() {
    // PERF_COUNTER_DELTA / LARGE_DELTA: 1500 − 1000 = 500.
    assert_eq!(
        two(T::PERF_COUNTER_DELTA, r(1500, 0), r(1000, 0), 0),
        Ok(500.0)
    );
    assert_eq!(
        two(T::PERF_COUNTER_LARGE_DELTA, r(1 << 40, 0), r(1000, 0), 0),
        Ok(1_099_511_626_776.0) // 2^40 − 1000
    );
    // Raw counts: N itself (hex types too: the number is the same, only its display differs).
    assert_eq!(one(T::PERF_COUNTER_RAWCOUNT, r(42, 0), 0), Ok(42.0));
    assert_eq!(one(T::PERF_COUNTER_RAWCOUNT_HEX, r(0xFF, 0), 0), Ok(255.0));
    // Memory\Available Bytes, 64-bit: 8,589,934,592 = 2^33.
    assert_eq!(
        one(T::PERF_COUNTER_LARGE_RAWCOUNT, r(1 << 33, 0), 0),
        Ok(8_589_934_592.0)
    );
    assert_eq!(
        one(T::PERF_COUNTER_LARGE_RAWCOUNT_HEX, r(0x1_0000_0000, 0), 0),
        Ok(4_294_967_296.0)
    );
}

#[test]
fn not_displayable_types() {
    for t in [
        T::PERF_SAMPLE_BASE,
        T::PERF_AVERAGE_BASE,
        T::PERF_COUNTER_MULTI_BASE,
        T::PERF_RAW_BASE,
        T::PERF_LARGE_RAW_BASE,
        T::PERF_PRECISION_TIMESTAMP,
        T::PERF_COUNTER_TEXT,
        T::PERF_COUNTER_NODATA,
        CounterType(0x8000_0000),         // PERF_COUNTER_HISTOGRAM_TYPE
        CounterType(0x4003_0503),         // the WMI spelling of PERF_LARGE_RAW_BASE
        CounterType(0x0001_0B00),         // PERF_TEXT_ASCII
        CounterType(0x0006_0500 | 0x400), // PERF_COUNTER_HISTOGRAM subtype
    ] {
        let e = two(t, r(5, 10), r(1, 1), F);
        assert_eq!(e, Err(CalcError::NotDisplayable), "{t:?}");
        assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_INVALID_ARGUMENT);
    }
}

#[test]
fn every_predefined_type_is_covered() {
    // Each displayable predefined type computes something from a plausible pair of samples, and each
    // non-displayable one refuses. This guards the table against a type falling through.
    for &t in CounterType::ALL {
        let new = r(300, 400).with_multi(2);
        let old = r(100, 200).with_multi(2);
        let v = calculate(t, &new, Some(&old), F, &NOCAP);
        assert_eq!(v.is_ok(), t.is_displayable(), "{t:?}: {v:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Statuses.

#[test]
fn first_sample_of_two_sample_types() {
    for &t in CounterType::ALL {
        let v = one(t, r(300, 400).with_multi(2), F);
        if t.needs_two_samples() {
            assert_eq!(v, Err(CalcError::NeedsTwoSamples), "{t:?}");
            assert_eq!(v.unwrap_err().status(), PdhStatus::PDH_NO_DATA);
        } else if t.is_displayable() {
            assert!(v.is_ok(), "{t:?}: {v:?}");
        }
    }
}

#[test]
fn thirty_two_bit_wrap_is_invalid_data() {
    // A DWORD counter near 2^32 wraps to a small number: PDH does not wrap-correct.
    let e = two(T::PERF_COUNTER_COUNTER, r(5, 200), r(4_294_967_290, 100), F);
    assert_eq!(e, Err(CalcError::CounterWentBackwards));
    assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_CSTATUS_INVALID_DATA);
    assert_eq!(
        two(T::PERF_COUNTER_DELTA, r(5, 0), r(6, 0), 0),
        Err(CalcError::CounterWentBackwards)
    );
    assert_eq!(
        two(T::PERF_SAMPLE_FRACTION, r(5, 100), r(6, 50), 0),
        Err(CalcError::CounterWentBackwards)
    );
}

#[test]
fn time_or_base_going_backwards_is_invalid_data() {
    let e = two(T::PERF_100NSEC_TIMER, r(10, T0 - 1), r(5, T0), F);
    assert_eq!(e, Err(CalcError::TimeWentBackwards));
    assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_CSTATUS_INVALID_DATA);
    assert_eq!(
        two(T::PERF_PRECISION_100NS_TIMER, r(10, 99), r(5, 100), F),
        Err(CalcError::TimeWentBackwards)
    );
    for t in [
        T::PERF_SAMPLE_FRACTION,
        T::PERF_AVERAGE_TIMER,
        T::PERF_AVERAGE_BULK,
    ] {
        let e = two(t, r(10, 4), r(5, 5), F);
        assert_eq!(e, Err(CalcError::BaseWentBackwards), "{t:?}");
        assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_CSTATUS_INVALID_DATA);
    }
}

#[test]
fn zero_intervals_and_bases_are_no_data() {
    // Same time stamp twice.
    for t in [
        T::PERF_COUNTER_COUNTER,
        T::PERF_100NSEC_TIMER_INV,
        T::PERF_COUNTER_QUEUELEN_TYPE,
        T::PERF_PRECISION_SYSTEM_TIMER,
    ] {
        let e = two(t, r(10, 7), r(5, 7), F);
        assert_eq!(e, Err(CalcError::ZeroInterval), "{t:?}");
        assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_NO_DATA);
    }
    // No operations between the samples (ΔB = 0): no value, not 0.
    for t in [
        T::PERF_SAMPLE_FRACTION,
        T::PERF_AVERAGE_TIMER,
        T::PERF_AVERAGE_BULK,
    ] {
        assert_eq!(
            two(t, r(5, 9), r(5, 9), F),
            Err(CalcError::ZeroBase),
            "{t:?}"
        );
    }
    // A raw fraction with base 0 (also what a missing base counter packs).
    let e = one(T::PERF_RAW_FRACTION, r(5, 0), 0);
    assert_eq!(e, Err(CalcError::ZeroBase));
    assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_NO_DATA);
    // Multi timers with a zero item count.
    for t in [
        T::PERF_COUNTER_MULTI_TIMER,
        T::PERF_COUNTER_MULTI_TIMER_INV,
        T::PERF_100NSEC_MULTI_TIMER,
        T::PERF_100NSEC_MULTI_TIMER_INV,
    ] {
        let e = two(t, r(10, 20).with_multi(0), r(0, 0).with_multi(0), F);
        assert_eq!(e, Err(CalcError::ZeroBase), "{t:?}");
    }
}

#[test]
fn negative_one_sample_fractions() {
    let e = one(T::PERF_RAW_FRACTION, r(5, -10), 0);
    assert_eq!(e, Err(CalcError::NegativeBase));
    assert_eq!(
        e.unwrap_err().status(),
        PdhStatus::PDH_CALC_NEGATIVE_DENOMINATOR
    );
    let e = one(T::PERF_LARGE_RAW_FRACTION, r(-5, 10), 0);
    assert_eq!(e, Err(CalcError::NegativeValue));
    assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_CALC_NEGATIVE_VALUE);
}

#[test]
fn time_base_is_checked_only_where_used() {
    for t in [
        T::PERF_COUNTER_COUNTER,
        T::PERF_COUNTER_BULK_COUNT,
        T::PERF_SAMPLE_COUNTER,
        T::PERF_COUNTER_MULTI_TIMER,
        T::PERF_AVERAGE_TIMER,
    ] {
        let new = r(10, 20).with_multi(1);
        let old = r(0, 0);
        let e = two(t, new, old, 0);
        assert_eq!(e, Err(CalcError::ZeroTimeBase), "{t:?}");
        assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_NO_DATA);
        let e = two(t, new, old, -F);
        assert_eq!(e, Err(CalcError::NegativeTimeBase), "{t:?}");
        assert_eq!(
            e.unwrap_err().status(),
            PdhStatus::PDH_CALC_NEGATIVE_TIMEBASE
        );
    }
    // Types without F ignore it.
    assert_eq!(two(T::PERF_COUNTER_TIMER, r(1, 4), r(0, 0), -1), Ok(25.0));
    assert_eq!(two(T::PERF_AVERAGE_BULK, r(8, 4), r(0, 0), 0), Ok(2.0));
}

#[test]
fn inverse_timers_are_clamped_at_zero() {
    // Idle time grew more than the elapsed time (the two are read at slightly different instants):
    // 100 · (1 − 10,100,000 / 10,000,000) = −1 → 0.
    let v = two(
        T::PERF_100NSEC_TIMER_INV,
        r(10_100_000, T0 + 10_000_000),
        r(0, T0),
        F,
    );
    assert_eq!(v, Ok(0.0));
    assert_eq!(
        two(T::PERF_COUNTER_TIMER_INV, r(11, 10), r(0, 0), F),
        Ok(0.0)
    );
    // Multi inverse: 100 · (2 − 30/10) = −100 → 0.
    assert_eq!(
        two(
            T::PERF_100NSEC_MULTI_TIMER_INV,
            r(30, 10).with_multi(2),
            r(0, 0),
            F
        ),
        Ok(0.0)
    );
}

#[test]
fn error_texts_and_statuses() {
    assert_eq!(
        CalcError::NeedsTwoSamples.to_string(),
        "no value yet: this counter needs two samples"
    );
    assert_eq!(
        CalcError::InvalidScale(8).to_string(),
        "invalid scale 8: must be between -7 and 7"
    );
    assert_eq!(
        PdhStatus::from(CalcError::CounterWentBackwards),
        PdhStatus::PDH_CSTATUS_INVALID_DATA
    );
    assert_eq!(
        CalcError::UnsupportedType.status(),
        PdhStatus::PDH_INVALID_ARGUMENT
    );
}

// ---------------------------------------------------------------------------------------------
// Options: cap, scale, ×1000.

#[test]
fn percent_types_are_capped_unless_nocap() {
    // PERF_100NSEC_TIMER of a process on two cores: 100 · 15,000,000 / 10,000,000 = 150 %.
    let new = r(15_000_000, T0 + 10_000_000);
    let old = r(0, T0);
    let t = T::PERF_100NSEC_TIMER;
    assert_eq!(calculate(t, &new, Some(&old), F, &PDH), Ok(100.0));
    assert_eq!(calculate(t, &new, Some(&old), F, &NOCAP), Ok(150.0));
    assert_eq!(
        calculate(t, &new, Some(&old), F, &FormatOptions::typeperf()),
        Ok(150.0)
    );
    // Raw fractions are percent types too: 100 · 3/2 = 150 → 100.
    assert_eq!(one(T::PERF_RAW_FRACTION, r(3, 2), 0), Ok(100.0));
    // Non-percent types are never capped: 1000 events in 1 s = 1000 /s.
    assert_eq!(
        two(T::PERF_COUNTER_COUNTER, r(1000, F), r(0, 0), F),
        Ok(1000.0)
    );
    assert_eq!(one(T::PERF_COUNTER_RAWCOUNT, r(12_345, 0), 0), Ok(12_345.0));
}

#[test]
fn scale_limits() {
    let raw = r(12_345_678, 0);
    let t = T::PERF_COUNTER_RAWCOUNT;
    // 12,345,678 × 10^−7 = 1.2345678 (to the nearest double).
    let v = calculate(t, &raw, None, 0, &PDH.with_scale(-7)).unwrap();
    assert!((v - 1.234_567_8).abs() < 1e-15, "{v}");
    // 12,345,678 × 10^7 = 123,456,780,000,000 (exact).
    assert_eq!(
        calculate(t, &raw, None, 0, &PDH.with_scale(7)),
        Ok(123_456_780_000_000.0)
    );
    // ±8 are refused like PdhSetCounterScaleFactor refuses them, even with NOSCALE.
    for s in [8, -8, i32::MIN, i32::MAX] {
        let e = calculate(t, &raw, None, 0, &PDH.with_scale(s));
        assert_eq!(e, Err(CalcError::InvalidScale(s)));
        assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_INVALID_ARGUMENT);
        let mut o = PDH.with_scale(s);
        o.no_scale = true;
        assert_eq!(
            calculate(t, &raw, None, 0, &o),
            Err(CalcError::InvalidScale(s))
        );
        assert_eq!(Calculator::new(t, 0, &o), Err(CalcError::InvalidScale(s)));
    }
}

#[test]
fn noscale_ignores_the_scale() {
    let o = FormatOptions {
        scale: 3,
        no_scale: true,
        ..PDH
    };
    assert_eq!(
        calculate(T::PERF_COUNTER_RAWCOUNT, &r(42, 0), None, 0, &o),
        Ok(42.0)
    );
    // Without NOSCALE: 42 × 10^3 = 42,000.
    assert_eq!(
        calculate(
            T::PERF_COUNTER_RAWCOUNT,
            &r(42, 0),
            None,
            0,
            &PDH.with_scale(3)
        ),
        Ok(42_000.0)
    );
}

#[test]
fn times_1000() {
    // PERF_AVERAGE_TIMER in milliseconds: 0.0625 s × 1000 = 62.5 ms.
    let o = FormatOptions {
        times_1000: true,
        ..PDH
    };
    assert_eq!(
        calculate(
            T::PERF_AVERAGE_TIMER,
            &r(3_500_000, 14),
            Some(&r(1_000_000, 10)),
            F,
            &o
        ),
        Ok(62.5)
    );
}

#[test]
fn order_is_cap_then_scale_then_times_1000() {
    // 150 % (PERF_100NSEC_TIMER) with every combination:
    let new = r(15_000_000, T0 + 10_000_000);
    let old = r(0, T0);
    let t = T::PERF_100NSEC_TIMER;
    let v = |scale: i32, no_cap_100: bool, no_scale: bool, times_1000: bool| {
        let o = FormatOptions {
            scale,
            no_scale,
            no_cap_100,
            times_1000,
        };
        calculate(t, &new, Some(&old), F, &o).unwrap()
    };
    // capped 100, ×10^1 = 1000, ×1000 = 1,000,000
    assert_eq!(v(1, false, false, true), 1_000_000.0);
    // not capped: 150 × 10 × 1000 = 1,500,000
    assert_eq!(v(1, true, false, true), 1_500_000.0);
    // cap before scale: 150 → 100 → × 10^−1 = 10 (scaling first would give 15, under the cap)
    assert_eq!(v(-1, false, false, false), 10.0);
    // NOSCALE keeps the cap and ×1000: 100 × 1000 = 100,000
    assert_eq!(v(5, false, true, true), 100_000.0);
    // the cap applies before ×1000 too: 100 × 1000, not min(150,000, 100)
    assert_eq!(v(0, false, false, true), 100_000.0);
    // scale 2, not capped, no ×1000: 150 × 100 = 15,000
    assert_eq!(v(2, true, false, false), 15_000.0);
}

// ---------------------------------------------------------------------------------------------
// Unknown types: decoded from their bit fields.

#[test]
fn unknown_types_follow_their_family() {
    // A bulk count on the 100 ns clock (rate, delta, per-sec): ΔN · F / ΔD = 50 · 10^7 / 10^7 = 50 /s.
    let t = CounterType(0x1051_0500);
    assert_eq!(t.name(), None);
    assert_eq!(Formula::of(t), Formula::RatePerSec);
    assert_eq!(two(t, r(50, 10_000_000), r(0, 0), F), Ok(50.0));
    // An inverse timer on the object clock: 100 · (1 − 1/4) = 75 %.
    let t = CounterType(0x2161_0500);
    assert_eq!(Formula::of(t), Formula::TimerInv);
    assert_eq!(two(t, r(1, 4), r(0, 0), F), Ok(75.0));
    // A 100 ns multi timer with the tick clock bits replaced by the object clock: MultiTimer.
    assert_eq!(Formula::of(CounterType(0x2261_0500)), Formula::MultiTimer);
    // PERF_NUMBER_DEC_1000: N / 1000 = 1234 / 1000 = 1.234.
    let t = CounterType(0x0002_0000);
    assert_eq!(Formula::of(t), Formula::RawDiv1000);
    assert_eq!(one(t, r(1234, 0), 0), Ok(1.234));
    // A rate without the delta flag or a queue length without it has no formula.
    for t in [CounterType(0x1001_0400), CounterType(0x0005_0400)] {
        let e = two(t, r(5, 5), r(0, 0), F);
        assert_eq!(e, Err(CalcError::UnsupportedType), "{t:?}");
        assert_eq!(e.unwrap_err().status(), PdhStatus::PDH_INVALID_ARGUMENT);
    }
    // An undefined counter subtype (8) and an undefined number subtype (3).
    assert_eq!(Formula::of(CounterType(0x0008_0400)), Formula::Unsupported);
    assert_eq!(Formula::of(CounterType(0x0003_0000)), Formula::Unsupported);
    // A delta counter without a suffix on a 64-bit value stays a delta.
    assert_eq!(Formula::of(CounterType(0x0040_0500)), Formula::Delta);
}

#[test]
fn prepared_calculator_matches_calculate() {
    let c = Calculator::new(T::PERF_100NSEC_TIMER_INV, F, &PDH).unwrap();
    assert_eq!(c.formula(), Formula::TimerInv);
    let new = r(7_500_000, T0 + 10_000_000);
    let old = r(0, T0);
    assert_eq!(c.compute(&new, Some(&old)), Ok(25.0));
    assert_eq!(c.compute(&new, None), Err(CalcError::NeedsTwoSamples));
}

// ---------------------------------------------------------------------------------------------
// Properties.

fn any_type() -> impl Strategy<Value = CounterType> {
    prop_oneof![
        proptest::sample::select(CounterType::ALL),
        any::<u32>().prop_map(CounterType),
        // Flip one bit of a predefined type: near misses exercise the decoder.
        (proptest::sample::select(CounterType::ALL), 0u32..32)
            .prop_map(|(t, b)| CounterType(t.0 ^ (1 << b))),
    ]
}

fn any_i64() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        -1000i64..1000,
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
        (0i64..1 << 40).prop_map(|x| T0 + x),
    ]
}

fn any_raw() -> impl Strategy<Value = RawCounter> {
    (any_i64(), any_i64(), any::<u32>(), any::<i64>()).prop_map(|(n, d, m, t)| RawCounter {
        first: n,
        second: d,
        multi_count: m,
        time: t,
    })
}

fn any_opts() -> impl Strategy<Value = FormatOptions> {
    (-9i32..=9, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(s, a, b, c)| {
        FormatOptions {
            scale: s,
            no_scale: a,
            no_cap_100: b,
            times_1000: c,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn never_panics_never_nan_or_infinite(
        t in any_type(),
        new in any_raw(),
        old in proptest::option::of(any_raw()),
        f in any_i64(),
        o in any_opts(),
    ) {
        match calculate(t, &new, old.as_ref(), f, &o) {
            Ok(v) => {
                prop_assert!(v.is_finite(), "{t:?} {new:?} {old:?} {f} {o:?} → {v}");
                // Percent types stay within the cap.
                if !o.no_cap_100 && t.0 & 0x7000_0000 == 0x2000_0000 {
                    let factor = if o.no_scale { 1.0 } else { 10f64.powi(o.scale) }
                        * if o.times_1000 { 1000.0 } else { 1.0 };
                    prop_assert!(v <= 100.0 * factor * (1.0 + 1e-12));
                }
                // Every formula but raw counts is non-negative.
                if !matches!(Formula::of(t), Formula::Raw | Formula::RawDiv1000) {
                    prop_assert!(v >= 0.0, "{t:?} → {v}");
                }
            }
            Err(e) => {
                // Every error has a non-success status and a text.
                prop_assert!(!e.status().is_success());
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }

    #[test]
    fn statistics_never_panic(
        t in any_type(),
        buf in proptest::collection::vec(any_raw(), 0..12),
        first in 0usize..14,
        f in any_i64(),
        o in any_opts(),
    ) {
        let results = [
            compute_statistics(t, &buf, f, &o),
            compute_statistics_circular(t, &buf, first, f, &o),
        ];
        for s in results.into_iter().flatten() {
            prop_assert!(s.min.is_finite() && s.max.is_finite() && s.mean.is_finite());
            prop_assert!(s.min <= s.max);
            prop_assert!(s.count >= 1 && s.count <= s.samples);
            prop_assert_eq!(s.samples, buf.len());
        }
    }
}

#[test]
fn raw_fraction_divides_first() {
    // (1 / 3) · 100, not 100 · 1 / 3 (= 33.333333333333336): the last digit relog prints.
    assert_eq!(one(T::PERF_RAW_FRACTION, r(1, 3), 0), Ok(33.33333333333333));
    assert_eq!(
        one(T::PERF_LARGE_RAW_FRACTION, r(7, 9), 0),
        Ok(77.77777777777779)
    );
}
