//! The PDH formula engine: turns one or two raw samples into a displayable value, like
//! `PdhCalculateCounterFromRawValue` / `PdhFormatFromRawValue`.
//!
//! [`calculate`] is a pure function of the counter type, the newer and (optionally) older
//! [`RawCounter`], the time base F (ticks per second, as `PdhGetCounterTimeBase` reports it) and the
//! [`FormatOptions`]. It never panics and never returns NaN or an infinity: every case where PDH would
//! have no number (first sample, zero interval, a counter that went backwards, a base type) is a
//! [`CalcError`], and [`CalcError::status`] gives the matching PDH status code.
//!
//! The samples must be packed the way [`crate::snapshot::Snapshot::raw_counter`] packs them: `first` is
//! N, `second` is the time stamp D or the base B, `multi_count` is the item count of multi timers.
//!
//! The formula of each type is chosen once by [`Formula::of`] (a `match` on the predefined values, with a
//! bit-field decoder for other values). For hot loops over many instances of one counter, build a
//! [`Calculator`] once and call [`Calculator::compute`] per instance.
//!
//! The full table, the status rules and every choice made where Microsoft's documents disagree are in
//! `docs/calc.md`.

use std::fmt;

use crate::counter_type::bits::*;
use crate::counter_type::CounterType;
use crate::raw::RawCounter;
use crate::status::PdhStatus;

/// `PDH_MIN_SCALE`: the smallest scale `PdhSetCounterScaleFactor` accepts.
pub const PDH_MIN_SCALE: i32 = -7;
/// `PDH_MAX_SCALE`: the largest scale `PdhSetCounterScaleFactor` accepts.
pub const PDH_MAX_SCALE: i32 = 7;

/// `PDH_FMT_NOSCALE`: do not apply the counter's scale factor.
pub const PDH_FMT_NOSCALE: u32 = 0x0000_1000;
/// `PDH_FMT_1000`: multiply the final value by 1000.
pub const PDH_FMT_1000: u32 = 0x0000_2000;
/// `PDH_FMT_NOCAP100`: do not cap percent values at 100.
pub const PDH_FMT_NOCAP100: u32 = 0x0000_8000;

/// 10^scale for scale −7..=+7; every entry is the correctly rounded `f64` of the power.
const POW10: [f64; 15] = [
    1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
];

/// How a computed value is turned into the formatted value: PDH's `lScale` and `PDH_FMT_*` flags.
///
/// The steps are applied in this order (PDH does not document one; see `docs/calc.md`):
/// 1. the formula;
/// 2. the cap: a percent-display type (`PERF_DISPLAY_PERCENT`) is limited to at most 100 unless
///    [`no_cap_100`](Self::no_cap_100) is set;
/// 3. the scale: ×10^[`scale`](Self::scale) unless [`no_scale`](Self::no_scale) is set;
/// 4. ×1000 if [`times_1000`](Self::times_1000) is set.
///
/// [`Default`] gives PDH's defaults right after `PdhAddCounter`: scale 0 (unscaled), capped at 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FormatOptions {
    /// The power of ten applied to the value (PDH's `lScale`, set by `PdhSetCounterScaleFactor`).
    /// Valid values are −7..=+7; anything else makes every calculation fail with
    /// [`CalcError::InvalidScale`]. Default 0, which is what PDH uses until the scale is set, even
    /// for counters whose `DefaultScale` is not zero.
    pub scale: i32,
    /// `PDH_FMT_NOSCALE`: ignore [`scale`](Self::scale).
    pub no_scale: bool,
    /// `PDH_FMT_NOCAP100`: do not cap percent-display types at 100 (multi-processor totals, process
    /// CPU time on several cores).
    pub no_cap_100: bool,
    /// `PDH_FMT_1000`: multiply the final value by 1000.
    pub times_1000: bool,
}

impl FormatOptions {
    /// PDH's defaults: scale 0, percent values capped at 100, no ×1000. Same as [`Default`].
    pub const PDH_DEFAULT: FormatOptions = FormatOptions {
        scale: 0,
        no_scale: false,
        no_cap_100: false,
        times_1000: false,
    };

    /// What typeperf shows: unscaled and not capped at 100 (a process using four cores reads 400).
    pub const fn typeperf() -> Self {
        FormatOptions {
            no_cap_100: true,
            ..Self::PDH_DEFAULT
        }
    }

    /// These options with `scale` set (not checked here; see [`FormatOptions::validate`]).
    pub const fn with_scale(mut self, scale: i32) -> Self {
        self.scale = scale;
        self
    }

    /// Options from a `dwFormat` of `PDH_FMT_*` flags and a scale. Only `PDH_FMT_NOSCALE`,
    /// `PDH_FMT_1000` and `PDH_FMT_NOCAP100` matter; the result-type bits (`PDH_FMT_DOUBLE`, …) are
    /// ignored.
    pub const fn from_pdh_flags(flags: u32, scale: i32) -> Self {
        FormatOptions {
            scale,
            no_scale: flags & PDH_FMT_NOSCALE != 0,
            no_cap_100: flags & PDH_FMT_NOCAP100 != 0,
            times_1000: flags & PDH_FMT_1000 != 0,
        }
    }

    /// The `PDH_FMT_*` flags these options stand for.
    pub const fn pdh_flags(&self) -> u32 {
        (if self.no_scale { PDH_FMT_NOSCALE } else { 0 })
            | (if self.times_1000 { PDH_FMT_1000 } else { 0 })
            | (if self.no_cap_100 { PDH_FMT_NOCAP100 } else { 0 })
    }

    /// Checks the scale: `Err(CalcError::InvalidScale)` outside −7..=+7 (checked even when
    /// [`no_scale`](Self::no_scale) is set, like `PdhSetCounterScaleFactor` refuses it up front).
    pub const fn validate(&self) -> Result<(), CalcError> {
        if self.scale < PDH_MIN_SCALE || self.scale > PDH_MAX_SCALE {
            Err(CalcError::InvalidScale(self.scale))
        } else {
            Ok(())
        }
    }

    /// The multiplier of the scale step: 10^scale, or 1 with [`no_scale`](Self::no_scale).
    fn scale_factor(&self) -> Result<f64, CalcError> {
        self.validate()?;
        if self.no_scale {
            return Ok(1.0);
        }
        // In range after `validate`, so the index is 0..=14.
        let i = (self.scale - PDH_MIN_SCALE) as usize;
        Ok(POW10.get(i).copied().unwrap_or(1.0))
    }
}

/// Why no value could be computed. [`CalcError::status`] maps each case to a PDH status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CalcError {
    /// The type needs two samples and no older one was given (the first collection).
    /// Status `PDH_NO_DATA`.
    NeedsTwoSamples,
    /// The counter value N decreased between the samples (a 32-bit wrap, a provider restart, a
    /// reshuffled duplicate instance name). PDH does not wrap-correct. Status
    /// `PDH_CSTATUS_INVALID_DATA`.
    CounterWentBackwards,
    /// The time stamp D (or the precision time stamp) decreased between the samples. Status
    /// `PDH_CSTATUS_INVALID_DATA`.
    TimeWentBackwards,
    /// The base B decreased between the samples. Status `PDH_CSTATUS_INVALID_DATA`.
    BaseWentBackwards,
    /// The two samples have the same time stamp: a zero interval. Status `PDH_NO_DATA`.
    ZeroInterval,
    /// The base (or its difference, or the multi count) is zero. Status `PDH_NO_DATA`.
    ZeroBase,
    /// A one-sample fraction has a negative base. Status `PDH_CALC_NEGATIVE_DENOMINATOR`.
    NegativeBase,
    /// A one-sample fraction has a negative numerator. Status `PDH_CALC_NEGATIVE_VALUE`.
    NegativeValue,
    /// The type needs a time base F and it is zero (e.g. an object without its own clock).
    /// Status `PDH_NO_DATA`.
    ZeroTimeBase,
    /// The type needs a time base F and it is negative. Status `PDH_CALC_NEGATIVE_TIMEBASE`.
    NegativeTimeBase,
    /// The type has no displayable value: a base type, text, `PERF_COUNTER_NODATA`, a zero-size or
    /// variable-length number, a histogram. `PdhFormatFromRawValue` refuses these; status
    /// `PDH_INVALID_ARGUMENT`.
    NotDisplayable,
    /// An unknown type whose bit fields do not define a formula (e.g. a rate without the delta flag).
    /// Status `PDH_INVALID_ARGUMENT`.
    UnsupportedType,
    /// [`FormatOptions::scale`] is outside −7..=+7. Status `PDH_INVALID_ARGUMENT`.
    InvalidScale(i32),
    /// Statistics were asked for an empty series. Status `PDH_NO_DATA`.
    NoSamples,
    /// The first-entry index of a circular buffer is not inside the buffer. Status
    /// `PDH_INVALID_ARGUMENT`.
    FirstEntryOutOfRange,
}

impl CalcError {
    /// The PDH status code for this error.
    pub const fn status(&self) -> PdhStatus {
        match self {
            CalcError::NeedsTwoSamples
            | CalcError::ZeroInterval
            | CalcError::ZeroBase
            | CalcError::ZeroTimeBase
            | CalcError::NoSamples => PdhStatus::PDH_NO_DATA,
            CalcError::CounterWentBackwards
            | CalcError::TimeWentBackwards
            | CalcError::BaseWentBackwards => PdhStatus::PDH_CSTATUS_INVALID_DATA,
            CalcError::NegativeBase => PdhStatus::PDH_CALC_NEGATIVE_DENOMINATOR,
            CalcError::NegativeValue => PdhStatus::PDH_CALC_NEGATIVE_VALUE,
            CalcError::NegativeTimeBase => PdhStatus::PDH_CALC_NEGATIVE_TIMEBASE,
            CalcError::NotDisplayable
            | CalcError::UnsupportedType
            | CalcError::InvalidScale(_)
            | CalcError::FirstEntryOutOfRange => PdhStatus::PDH_INVALID_ARGUMENT,
        }
    }
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalcError::NeedsTwoSamples => {
                f.write_str("no value yet: this counter needs two samples")
            }
            CalcError::CounterWentBackwards => {
                f.write_str("invalid data: the counter value is less than in the previous sample")
            }
            CalcError::TimeWentBackwards => {
                f.write_str("invalid data: the time stamp is less than in the previous sample")
            }
            CalcError::BaseWentBackwards => {
                f.write_str("invalid data: the base value is less than in the previous sample")
            }
            CalcError::ZeroInterval => f.write_str("no value: zero time between the samples"),
            CalcError::ZeroBase => f.write_str("no value: the base is zero"),
            CalcError::NegativeBase => f.write_str("negative denominator"),
            CalcError::NegativeValue => f.write_str("negative value"),
            CalcError::ZeroTimeBase => f.write_str("no value: the time base is zero"),
            CalcError::NegativeTimeBase => f.write_str("negative time base"),
            CalcError::NotDisplayable => {
                f.write_str("this counter type has no displayable value (base, text or no data)")
            }
            CalcError::UnsupportedType => f.write_str("unsupported counter type"),
            CalcError::InvalidScale(s) => {
                write!(f, "invalid scale {s}: must be between -7 and 7")
            }
            CalcError::NoSamples => f.write_str("no samples"),
            CalcError::FirstEntryOutOfRange => {
                f.write_str("the first entry is outside the sample buffer")
            }
        }
    }
}

impl std::error::Error for CalcError {}

impl From<CalcError> for PdhStatus {
    fn from(e: CalcError) -> Self {
        e.status()
    }
}

/// The formula a counter type is computed with. N is `first`, D/B is `second`, the suffix 1 marks the
/// newer sample and 0 the older, F is the time base, B1 for multi timers is the newer `multi_count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Formula {
    /// `N1` (raw counts, decimal or hex). One sample.
    Raw,
    /// `N1 / 1000` (`PERF_NUMBER_DEC_1000`; no predefined type uses it). One sample.
    RawDiv1000,
    /// `N1 − N0` (`PERF_COUNTER_DELTA`, `PERF_COUNTER_LARGE_DELTA`).
    Delta,
    /// `(N1 − N0) · F / (D1 − D0)`: events per second (`PERF_COUNTER_COUNTER`,
    /// `PERF_COUNTER_BULK_COUNT`, `PERF_SAMPLE_COUNTER`).
    RatePerSec,
    /// `100 · (N1 − N0) / (D1 − D0)` (`PERF_COUNTER_TIMER`, `PERF_OBJ_TIME_TIMER`, `PERF_100NSEC_TIMER`,
    /// the `PERF_PRECISION_*_TIMER`s).
    Timer,
    /// `max(0, 100 · (1 − (N1 − N0) / (D1 − D0)))` (`PERF_COUNTER_TIMER_INV`, `PERF_100NSEC_TIMER_INV`).
    TimerInv,
    /// `100 · ((N1 − N0) · F / (D1 − D0)) / B1` (`PERF_COUNTER_MULTI_TIMER`, as CALC and the Platform
    /// SDK give it).
    MultiTimerTick,
    /// `100 · ((N1 − N0) / (D1 − D0)) / B1` (`PERF_100NSEC_MULTI_TIMER`).
    MultiTimer,
    /// `max(0, 100 · (B1 − (N1 − N0) / (D1 − D0)))` (`PERF_COUNTER_MULTI_TIMER_INV`,
    /// `PERF_100NSEC_MULTI_TIMER_INV`).
    MultiTimerInv,
    /// `(N1 − N0) / (D1 − D0)`: average queue length (the four `*QUEUELEN_TYPE`s).
    QueueLen,
    /// `100 · (N1 − N0) / (B1 − B0)` (`PERF_SAMPLE_FRACTION`).
    SampleFraction,
    /// `(N1 / B1) · 100` (`PERF_RAW_FRACTION`, `PERF_LARGE_RAW_FRACTION`). One sample.
    RawFraction,
    /// `((N1 − N0) / F) / (B1 − B0)`: seconds per operation (`PERF_AVERAGE_TIMER`).
    AverageTimer,
    /// `(N1 − N0) / (B1 − B0)`: items per operation (`PERF_AVERAGE_BULK`).
    AverageBulk,
    /// `(D1 − N1) / F`, 0 when N1 = 0 or N1 ≥ D1 (`PERF_ELAPSED_TIME`). One sample.
    Elapsed,
    /// No displayable value: bases, text, no data, histograms.
    NotDisplayable,
    /// An unknown type whose bit fields define no formula.
    Unsupported,
}

impl Formula {
    /// Every formula, each at the index `formula as usize`.
    pub const ALL: [Formula; 17] = {
        use Formula::*;
        let all = [
            Raw,
            RawDiv1000,
            Delta,
            RatePerSec,
            Timer,
            TimerInv,
            MultiTimerTick,
            MultiTimer,
            MultiTimerInv,
            QueueLen,
            SampleFraction,
            RawFraction,
            AverageTimer,
            AverageBulk,
            Elapsed,
            NotDisplayable,
            Unsupported,
        ];
        let mut i = 0;
        while i < all.len() {
            assert!(all[i] as usize == i, "Formula::ALL is in declaration order");
            i += 1;
        }
        all
    };

    /// The formula of a counter type: the predefined winperf.h values are matched directly, other
    /// values are decoded from their bit fields ([`Formula::decode`]).
    #[inline]
    pub const fn of(counter_type: CounterType) -> Formula {
        use Formula::*;
        match counter_type.0 {
            0x1041_0400 /* PERF_COUNTER_COUNTER */ => RatePerSec,
            0x1041_0500 /* PERF_COUNTER_BULK_COUNT */ => RatePerSec,
            0x0041_0400 /* PERF_SAMPLE_COUNTER */ => RatePerSec,
            0x2041_0500 /* PERF_COUNTER_TIMER */ => Timer,
            0x2061_0500 /* PERF_OBJ_TIME_TIMER */ => Timer,
            0x2051_0500 /* PERF_100NSEC_TIMER */ => Timer,
            0x2047_0500 /* PERF_PRECISION_SYSTEM_TIMER */ => Timer,
            0x2057_0500 /* PERF_PRECISION_100NS_TIMER */ => Timer,
            0x2067_0500 /* PERF_PRECISION_OBJECT_TIMER */ => Timer,
            0x2141_0500 /* PERF_COUNTER_TIMER_INV */ => TimerInv,
            0x2151_0500 /* PERF_100NSEC_TIMER_INV */ => TimerInv,
            0x2241_0500 /* PERF_COUNTER_MULTI_TIMER */ => MultiTimerTick,
            0x2251_0500 /* PERF_100NSEC_MULTI_TIMER */ => MultiTimer,
            0x2341_0500 /* PERF_COUNTER_MULTI_TIMER_INV */ => MultiTimerInv,
            0x2351_0500 /* PERF_100NSEC_MULTI_TIMER_INV */ => MultiTimerInv,
            0x0045_0400 /* PERF_COUNTER_QUEUELEN_TYPE */ => QueueLen,
            0x0045_0500 /* PERF_COUNTER_LARGE_QUEUELEN_TYPE */ => QueueLen,
            0x0055_0500 /* PERF_COUNTER_100NS_QUEUELEN_TYPE */ => QueueLen,
            0x0065_0500 /* PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE */ => QueueLen,
            0x20C2_0400 /* PERF_SAMPLE_FRACTION */ => SampleFraction,
            0x2002_0400 /* PERF_RAW_FRACTION */ => RawFraction,
            0x2002_0500 /* PERF_LARGE_RAW_FRACTION */ => RawFraction,
            0x3002_0400 /* PERF_AVERAGE_TIMER */ => AverageTimer,
            0x4002_0500 /* PERF_AVERAGE_BULK */ => AverageBulk,
            0x3024_0500 /* PERF_ELAPSED_TIME */ => Elapsed,
            0x0040_0400 /* PERF_COUNTER_DELTA */ => Delta,
            0x0040_0500 /* PERF_COUNTER_LARGE_DELTA */ => Delta,
            0x0001_0000 /* PERF_COUNTER_RAWCOUNT */ => Raw,
            0x0001_0100 /* PERF_COUNTER_LARGE_RAWCOUNT */ => Raw,
            0x0000_0000 /* PERF_COUNTER_RAWCOUNT_HEX */ => Raw,
            0x0000_0100 /* PERF_COUNTER_LARGE_RAWCOUNT_HEX */ => Raw,
            0x4003_0401 /* PERF_SAMPLE_BASE */
            | 0x4003_0402 /* PERF_AVERAGE_BASE */
            | 0x4203_0500 /* PERF_COUNTER_MULTI_BASE */
            | 0x4003_0403 /* PERF_RAW_BASE */
            | 0x4003_0500 /* PERF_LARGE_RAW_BASE = PERF_PRECISION_TIMESTAMP */
            | 0x0000_0B00 /* PERF_COUNTER_TEXT */
            | 0x4000_0200 /* PERF_COUNTER_NODATA */ => NotDisplayable,
            other => Formula::decode(CounterType(other)),
        }
    }

    /// The formula implied by the bit fields alone. For every predefined type this gives the same
    /// result as [`Formula::of`]; for other values it extends each family to its neighbours (e.g. a
    /// `PERF_COUNTER_RATE` type with the delta flag and a percent display is a timer, whatever its time
    /// base), and returns [`Formula::Unsupported`] where the fields define no formula.
    pub const fn decode(counter_type: CounterType) -> Formula {
        use Formula::*;
        let t = counter_type.0;
        if t & PERF_COUNTER_HISTOGRAM_TYPE != 0 {
            return NotDisplayable;
        }
        let size = t & PERF_SIZE_MASK;
        if size == PERF_SIZE_ZERO || size == PERF_SIZE_VARIABLE_LEN {
            return NotDisplayable;
        }
        let sub = t & PERF_SUBTYPE_MASK;
        match t & PERF_TYPE_MASK {
            PERF_TYPE_NUMBER => match sub {
                PERF_NUMBER_HEX | PERF_NUMBER_DECIMAL => Raw,
                PERF_NUMBER_DEC_1000 => RawDiv1000,
                _ => Unsupported,
            },
            PERF_TYPE_COUNTER => {
                let delta = t & PERF_DELTA_COUNTER != 0;
                let delta_base = t & PERF_DELTA_BASE != 0;
                let inverse = t & PERF_INVERSE_COUNTER != 0;
                let multi = t & PERF_MULTI_COUNTER != 0;
                let display = t & PERF_DISPLAY_MASK;
                let percent = display == PERF_DISPLAY_PERCENT;
                let tick = t & PERF_TIMER_MASK == PERF_TIMER_TICK;
                match sub {
                    PERF_COUNTER_VALUE => {
                        if delta {
                            Delta
                        } else {
                            Raw
                        }
                    }
                    PERF_COUNTER_RATE => {
                        if !delta {
                            Unsupported
                        } else if percent {
                            match (multi, inverse) {
                                (false, false) => Timer,
                                (false, true) => TimerInv,
                                (true, false) if tick => MultiTimerTick,
                                (true, false) => MultiTimer,
                                (true, true) => MultiTimerInv,
                            }
                        } else if multi || inverse {
                            Unsupported
                        } else {
                            RatePerSec
                        }
                    }
                    PERF_COUNTER_FRACTION => {
                        if delta || delta_base {
                            if percent {
                                SampleFraction
                            } else {
                                AverageBulk
                            }
                        } else if percent {
                            RawFraction
                        } else if display == PERF_DISPLAY_SECONDS {
                            AverageTimer
                        } else {
                            AverageBulk
                        }
                    }
                    PERF_COUNTER_ELAPSED => Elapsed,
                    PERF_COUNTER_QUEUELEN => {
                        if delta {
                            QueueLen
                        } else {
                            Unsupported
                        }
                    }
                    PERF_COUNTER_PRECISION => {
                        if !delta || !percent {
                            Unsupported
                        } else if inverse {
                            TimerInv
                        } else {
                            Timer
                        }
                    }
                    PERF_COUNTER_BASE | PERF_COUNTER_HISTOGRAM => NotDisplayable,
                    _ => Unsupported,
                }
            }
            // PERF_TYPE_TEXT and PERF_TYPE_ZERO.
            _ => NotDisplayable,
        }
    }

    /// Whether the formula needs an older sample.
    pub const fn needs_two_samples(self) -> bool {
        !matches!(
            self,
            Formula::Raw
                | Formula::RawDiv1000
                | Formula::RawFraction
                | Formula::Elapsed
                | Formula::NotDisplayable
                | Formula::Unsupported
        )
    }

    /// Whether the formula uses the time base F.
    pub const fn needs_time_base(self) -> bool {
        matches!(
            self,
            Formula::RatePerSec
                | Formula::MultiTimerTick
                | Formula::AverageTimer
                | Formula::Elapsed
        )
    }

    /// Whether the formula yields a number at all.
    pub const fn is_displayable(self) -> bool {
        !matches!(self, Formula::NotDisplayable | Formula::Unsupported)
    }
}

/// A calculator prepared for one counter type, time base and set of options: the type is decoded and
/// the options are checked once, so [`Calculator::compute`] does only the arithmetic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calculator {
    formula: Formula,
    cap_100: bool,
    scale_factor: f64,
    times_1000: bool,
    time_base: i64,
}

impl Calculator {
    /// Prepares a calculator. Fails only for an invalid scale; type problems (base types, unknown
    /// types) are reported by [`Calculator::compute`], so a query can keep such counters and show
    /// their status.
    #[inline]
    pub fn new(
        counter_type: CounterType,
        time_base: i64,
        opts: &FormatOptions,
    ) -> Result<Calculator, CalcError> {
        Ok(Calculator {
            formula: Formula::of(counter_type),
            cap_100: !opts.no_cap_100 && counter_type.0 & PERF_DISPLAY_MASK == PERF_DISPLAY_PERCENT,
            scale_factor: opts.scale_factor()?,
            times_1000: opts.times_1000,
            time_base,
        })
    }

    /// The formula this calculator applies.
    pub const fn formula(&self) -> Formula {
        self.formula
    }

    /// Computes the formatted value from the newer sample and, for two-sample types, the older one.
    #[inline(always)]
    pub fn compute(
        &self,
        newer: &RawCounter,
        older: Option<&RawCounter>,
    ) -> Result<f64, CalcError> {
        self.compute_as(self.formula, self.is_plain(), newer, older)
    }

    /// Whether the value is the formula's result unchanged: no cap at 100, scale 1, no ×1000.
    pub(crate) fn is_plain(&self) -> bool {
        !self.cap_100 && self.scale_factor == 1.0 && !self.times_1000
    }

    /// [`Calculator::compute`] with `formula` and `plain`, which the caller has found equal to
    /// [`Calculator::formula`] and [`Calculator::is_plain`]: a caller computing many values of
    /// one formula passes them as constants, so that each inlined copy of this function is that
    /// formula's arithmetic alone.
    #[inline(always)]
    pub(crate) fn compute_as(
        &self,
        formula: Formula,
        plain: bool,
        newer: &RawCounter,
        older: Option<&RawCounter>,
    ) -> Result<f64, CalcError> {
        debug_assert_eq!((formula, plain), (self.formula, self.is_plain()));
        let mut v = evaluate(formula, newer, older, self.time_base)?;
        if !plain {
            if self.cap_100 && v > 100.0 {
                v = 100.0;
            }
            v *= self.scale_factor;
            if self.times_1000 {
                v *= 1000.0;
            }
        }
        // Every formula divides only by checked non-zero values, so v is finite; this is a guard.
        if v.is_finite() {
            Ok(v)
        } else {
            Err(CalcError::UnsupportedType)
        }
    }
}

/// Computes the displayable value of a counter from raw samples, like `PdhFormatFromRawValue`.
///
/// * `newer` is the current sample; `older` the previous one, needed by two-sample types (rates,
///   timers, deltas, averages, sample fractions) and ignored by one-sample types (raw counts, raw
///   fractions, elapsed time).
/// * `time_base` is F in ticks per second (`PdhGetCounterTimeBase`): the block's `PerfFreq` for tick
///   timers, 10,000,000 for 100 ns timers, the object's `PerfFreq` for object timers. Only
///   `PERF_COUNTER_COUNTER`, `PERF_COUNTER_BULK_COUNT`, `PERF_SAMPLE_COUNTER`,
///   `PERF_COUNTER_MULTI_TIMER`, `PERF_AVERAGE_TIMER` and `PERF_ELAPSED_TIME` (and unknown types of
///   those families) use it.
/// * `opts`: scale, cap and ×1000; see [`FormatOptions`].
///
/// Errors are statuses, never garbage: see [`CalcError`] and `docs/calc.md`. The result is always
/// finite.
#[inline]
pub fn calculate(
    counter_type: CounterType,
    newer: &RawCounter,
    older: Option<&RawCounter>,
    time_base: i64,
    opts: &FormatOptions,
) -> Result<f64, CalcError> {
    Calculator::new(counter_type, time_base, opts)?.compute(newer, older)
}

/// `a − b` as a non-negative `f64`, or `err` if `a < b`. Exact as an integer difference (no overflow:
/// for `a ≥ b` the difference of two `i64` fits a `u64`).
#[inline(always)]
fn diff(a: i64, b: i64, err: CalcError) -> Result<f64, CalcError> {
    if a < b {
        Err(err)
    } else {
        Ok((a as u64).wrapping_sub(b as u64) as f64)
    }
}

/// The older sample, or `NeedsTwoSamples`.
#[inline(always)]
fn need_older(older: Option<&RawCounter>) -> Result<&RawCounter, CalcError> {
    older.ok_or(CalcError::NeedsTwoSamples)
}

/// F as a positive `f64`.
#[inline(always)]
fn positive_time_base(f: i64) -> Result<f64, CalcError> {
    if f > 0 {
        Ok(f as f64)
    } else if f == 0 {
        Err(CalcError::ZeroTimeBase)
    } else {
        Err(CalcError::NegativeTimeBase)
    }
}

/// ΔN and ΔD (a time stamp), with the backwards and zero-interval checks.
#[inline(always)]
fn deltas_time(newer: &RawCounter, older: Option<&RawCounter>) -> Result<(f64, f64), CalcError> {
    let o = need_older(older)?;
    let dn = diff(newer.first, o.first, CalcError::CounterWentBackwards)?;
    let dd = diff(newer.second, o.second, CalcError::TimeWentBackwards)?;
    if dd == 0.0 {
        return Err(CalcError::ZeroInterval);
    }
    Ok((dn, dd))
}

/// ΔN and ΔB (a base), with the backwards and zero-base checks.
#[inline(always)]
fn deltas_base(newer: &RawCounter, older: Option<&RawCounter>) -> Result<(f64, f64), CalcError> {
    let o = need_older(older)?;
    let dn = diff(newer.first, o.first, CalcError::CounterWentBackwards)?;
    let db = diff(newer.second, o.second, CalcError::BaseWentBackwards)?;
    if db == 0.0 {
        return Err(CalcError::ZeroBase);
    }
    Ok((dn, db))
}

/// The multi count B1 as a positive `f64`.
#[inline(always)]
fn multi(newer: &RawCounter) -> Result<f64, CalcError> {
    if newer.multi_count == 0 {
        Err(CalcError::ZeroBase)
    } else {
        Ok(f64::from(newer.multi_count))
    }
}

/// The formula itself, before cap, scale and ×1000.
#[inline(always)]
fn evaluate(
    formula: Formula,
    newer: &RawCounter,
    older: Option<&RawCounter>,
    time_base: i64,
) -> Result<f64, CalcError> {
    match formula {
        Formula::Raw => Ok(newer.first as f64),
        Formula::RawDiv1000 => Ok(newer.first as f64 / 1000.0),
        Formula::Delta => {
            let o = need_older(older)?;
            diff(newer.first, o.first, CalcError::CounterWentBackwards)
        }
        Formula::RatePerSec => {
            let f = positive_time_base(time_base)?;
            let (dn, dd) = deltas_time(newer, older)?;
            Ok(dn * f / dd)
        }
        Formula::Timer => {
            let (dn, dd) = deltas_time(newer, older)?;
            Ok(100.0 * dn / dd)
        }
        Formula::TimerInv => {
            let (dn, dd) = deltas_time(newer, older)?;
            Ok((100.0 * (1.0 - dn / dd)).max(0.0))
        }
        Formula::MultiTimerTick => {
            let f = positive_time_base(time_base)?;
            let (dn, dd) = deltas_time(newer, older)?;
            let b = multi(newer)?;
            Ok(100.0 * (dn * f / dd) / b)
        }
        Formula::MultiTimer => {
            let (dn, dd) = deltas_time(newer, older)?;
            let b = multi(newer)?;
            Ok(100.0 * (dn / dd) / b)
        }
        Formula::MultiTimerInv => {
            let (dn, dd) = deltas_time(newer, older)?;
            let b = multi(newer)?;
            Ok((100.0 * (b - dn / dd)).max(0.0))
        }
        Formula::QueueLen => {
            let (dn, dd) = deltas_time(newer, older)?;
            Ok(dn / dd)
        }
        Formula::SampleFraction => {
            let (dn, db) = deltas_base(newer, older)?;
            Ok(100.0 * dn / db)
        }
        Formula::RawFraction => {
            let (n, b) = (newer.first, newer.second);
            if b == 0 {
                Err(CalcError::ZeroBase)
            } else if b < 0 {
                Err(CalcError::NegativeBase)
            } else if n < 0 {
                Err(CalcError::NegativeValue)
            } else {
                // (N / B) · 100, in this order: relog's output of real logs matches it to the
                // last digit, where 100 · N / B differs.
                Ok(n as f64 / b as f64 * 100.0)
            }
        }
        Formula::AverageTimer => {
            let f = positive_time_base(time_base)?;
            let (dn, db) = deltas_base(newer, older)?;
            Ok(dn / f / db)
        }
        Formula::AverageBulk => {
            let (dn, db) = deltas_base(newer, older)?;
            Ok(dn / db)
        }
        Formula::Elapsed => {
            let f = positive_time_base(time_base)?;
            let (n, d) = (newer.first, newer.second);
            if n == 0 || n >= d {
                Ok(0.0)
            } else {
                Ok((d as u64).wrapping_sub(n as u64) as f64 / f)
            }
        }
        Formula::NotDisplayable => Err(CalcError::NotDisplayable),
        Formula::Unsupported => Err(CalcError::UnsupportedType),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow10_table_is_exact_powers() {
        for (i, &p) in POW10.iter().enumerate() {
            let e = i as i32 - 7;
            assert_eq!(p, format!("1e{e}").parse::<f64>().unwrap(), "10^{e}");
        }
    }

    #[test]
    fn decode_agrees_with_the_predefined_table() {
        for &t in CounterType::ALL {
            assert_eq!(Formula::of(t), Formula::decode(t), "{t:?}");
        }
    }

    #[test]
    fn formula_classification_matches_counter_type() {
        for &t in CounterType::ALL {
            let f = Formula::of(t);
            assert_eq!(f.needs_two_samples(), t.needs_two_samples(), "{t:?}");
            assert_eq!(f.is_displayable(), t.is_displayable(), "{t:?}");
        }
    }

    #[test]
    fn flags_round_trip() {
        let o = FormatOptions::from_pdh_flags(PDH_FMT_NOSCALE | PDH_FMT_NOCAP100 | 0x200, 3);
        assert_eq!(
            o,
            FormatOptions {
                scale: 3,
                no_scale: true,
                no_cap_100: true,
                times_1000: false
            }
        );
        assert_eq!(o.pdh_flags(), 0x9000);
        assert_eq!(FormatOptions::default(), FormatOptions::PDH_DEFAULT);
        assert!(FormatOptions::typeperf().no_cap_100);
    }
}
