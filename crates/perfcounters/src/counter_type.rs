//! Counter types: the `CounterType` DWORD of `PERF_COUNTER_DEFINITION` / `PERF_COUNTER_REG_INFO`.
//!
//! A counter type is a bit field (winperf.h):
//!
//! | bits  | field                | accessor |
//! |-------|----------------------|----------|
//! | 0–7   | reserved / base discriminator | [`CounterType::reserved_low_byte`] |
//! | 8–9   | size                 | [`CounterType::size`] |
//! | 10–11 | type                 | [`CounterType::kind`] |
//! | 16–19 | subtype              | [`CounterType::subtype`] |
//! | 20–21 | timer base           | [`CounterType::time_base`] |
//! | 22–25 | calculation modifiers| [`CounterType::is_delta`], [`CounterType::is_delta_base`], [`CounterType::is_inverse`], [`CounterType::is_multi`] |
//! | 28–30 | display suffix (a *value*, not bits) | [`CounterType::display`] |
//! | 31    | histogram flag       | [`CounterType::is_histogram`] |
//!
//! Traps handled here:
//! * type `0` is valid: it is `PERF_COUNTER_RAWCOUNT_HEX`;
//! * the display field is a value 0–4, compared with `==` after masking (`PERF_DISPLAY_SECONDS` is
//!   `PER_SEC | PERCENT` as bits);
//! * `PERF_PRECISION_TIMESTAMP` has the same value as `PERF_LARGE_RAW_BASE`; only its position (right
//!   after a `PERF_PRECISION_*_TIMER`) tells them apart, so [`CounterType::name`] reports the base name;
//! * `PERF_AVERAGE_TIMER` and `PERF_AVERAGE_BULK` need two samples although they lack `PERF_DELTA_COUNTER`;
//! * unknown values are representable: every accessor works on any `u32`.

use std::fmt;

/// A counter type as found in performance data (`PERF_COUNTER_DEFINITION.CounterType`).
///
/// Any `u32` is a valid `CounterType`; [`CounterType::name`] is `None` for values that are not one of the
/// predefined winperf.h types.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct CounterType(pub u32);

/// The size field (bits 8–9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizeField {
    /// `PERF_SIZE_DWORD`: 4 bytes.
    Dword,
    /// `PERF_SIZE_LARGE`: 8 bytes.
    Large,
    /// `PERF_SIZE_ZERO`: no data.
    Zero,
    /// `PERF_SIZE_VARIABLE_LEN`: length given by `CounterSize`.
    VariableLen,
}

/// The type field (bits 10–11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeField {
    /// `PERF_TYPE_NUMBER`: a number that is displayed as is.
    Number,
    /// `PERF_TYPE_COUNTER`: a counter whose value is computed.
    Counter,
    /// `PERF_TYPE_TEXT`: text.
    Text,
    /// `PERF_TYPE_ZERO`: always zero.
    Zero,
}

/// The subtype field (bits 16–19), interpreted according to the type field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subtype {
    /// `PERF_NUMBER_HEX`: display as hexadecimal.
    NumberHex,
    /// `PERF_NUMBER_DECIMAL`: display as decimal.
    NumberDecimal,
    /// `PERF_NUMBER_DEC_1000`: display as decimal / 1000.
    NumberDec1000,
    /// `PERF_COUNTER_VALUE`: display the value.
    CounterValue,
    /// `PERF_COUNTER_RATE`: divide by the delta time.
    CounterRate,
    /// `PERF_COUNTER_FRACTION`: divide by a base.
    CounterFraction,
    /// `PERF_COUNTER_BASE`: the base of a fraction.
    CounterBase,
    /// `PERF_COUNTER_ELAPSED`: subtract from the current time.
    CounterElapsed,
    /// `PERF_COUNTER_QUEUELEN`: queue length × time.
    CounterQueueLen,
    /// `PERF_COUNTER_HISTOGRAM`: a histogram counter.
    CounterHistogram,
    /// `PERF_COUNTER_PRECISION`: divide by a private clock (the following `PERF_PRECISION_TIMESTAMP`).
    CounterPrecision,
    /// `PERF_TEXT_UNICODE`: UTF-16 text.
    TextUnicode,
    /// `PERF_TEXT_ASCII`: text in the object's code page.
    TextAscii,
    /// A subtype value not defined for this type field; the raw 4-bit value.
    Other(u8),
}

/// The timer base field (bits 20–21): which clock the denominator of a rate comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeBase {
    /// `PERF_TIMER_TICK`: the system performance counter (`PerfTime` / `PerfFreq` of the data block).
    Tick,
    /// `PERF_TIMER_100NS`: 100-nanosecond units (`PerfTime100nSec`, frequency 10,000,000).
    Ns100,
    /// `PERF_OBJECT_TIMER`: the object's own `PerfTime` / `PerfFreq`.
    Object,
    /// The undefined value 3.
    Reserved,
}

/// The display suffix field (bits 28–30).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DisplaySuffix {
    /// `PERF_DISPLAY_NO_SUFFIX`.
    None,
    /// `PERF_DISPLAY_PER_SEC`: "/sec".
    PerSec,
    /// `PERF_DISPLAY_PERCENT`: "%".
    Percent,
    /// `PERF_DISPLAY_SECONDS`: "secs".
    Seconds,
    /// `PERF_DISPLAY_NOSHOW`: not displayed (but see [`CounterType::is_displayable`]).
    NoShow,
    /// An undefined value 5–7.
    Other(u8),
}

/// Field masks and values of winperf.h.
pub mod bits {
    /// Size field mask.
    pub const PERF_SIZE_MASK: u32 = 0x0000_0300;
    /// `PERF_SIZE_DWORD`.
    pub const PERF_SIZE_DWORD: u32 = 0x0000_0000;
    /// `PERF_SIZE_LARGE`.
    pub const PERF_SIZE_LARGE: u32 = 0x0000_0100;
    /// `PERF_SIZE_ZERO`.
    pub const PERF_SIZE_ZERO: u32 = 0x0000_0200;
    /// `PERF_SIZE_VARIABLE_LEN`.
    pub const PERF_SIZE_VARIABLE_LEN: u32 = 0x0000_0300;
    /// Type field mask.
    pub const PERF_TYPE_MASK: u32 = 0x0000_0C00;
    /// `PERF_TYPE_NUMBER`.
    pub const PERF_TYPE_NUMBER: u32 = 0x0000_0000;
    /// `PERF_TYPE_COUNTER`.
    pub const PERF_TYPE_COUNTER: u32 = 0x0000_0400;
    /// `PERF_TYPE_TEXT`.
    pub const PERF_TYPE_TEXT: u32 = 0x0000_0800;
    /// `PERF_TYPE_ZERO`.
    pub const PERF_TYPE_ZERO: u32 = 0x0000_0C00;
    /// Subtype field mask.
    pub const PERF_SUBTYPE_MASK: u32 = 0x000F_0000;
    /// `PERF_NUMBER_HEX`.
    pub const PERF_NUMBER_HEX: u32 = 0x0000_0000;
    /// `PERF_NUMBER_DECIMAL`.
    pub const PERF_NUMBER_DECIMAL: u32 = 0x0001_0000;
    /// `PERF_NUMBER_DEC_1000`.
    pub const PERF_NUMBER_DEC_1000: u32 = 0x0002_0000;
    /// `PERF_COUNTER_VALUE`.
    pub const PERF_COUNTER_VALUE: u32 = 0x0000_0000;
    /// `PERF_COUNTER_RATE`.
    pub const PERF_COUNTER_RATE: u32 = 0x0001_0000;
    /// `PERF_COUNTER_FRACTION`.
    pub const PERF_COUNTER_FRACTION: u32 = 0x0002_0000;
    /// `PERF_COUNTER_BASE`.
    pub const PERF_COUNTER_BASE: u32 = 0x0003_0000;
    /// `PERF_COUNTER_ELAPSED`.
    pub const PERF_COUNTER_ELAPSED: u32 = 0x0004_0000;
    /// `PERF_COUNTER_QUEUELEN`.
    pub const PERF_COUNTER_QUEUELEN: u32 = 0x0005_0000;
    /// `PERF_COUNTER_HISTOGRAM`.
    pub const PERF_COUNTER_HISTOGRAM: u32 = 0x0006_0000;
    /// `PERF_COUNTER_PRECISION`.
    pub const PERF_COUNTER_PRECISION: u32 = 0x0007_0000;
    /// `PERF_TEXT_UNICODE`.
    pub const PERF_TEXT_UNICODE: u32 = 0x0000_0000;
    /// `PERF_TEXT_ASCII`.
    pub const PERF_TEXT_ASCII: u32 = 0x0001_0000;
    /// Timer base field mask.
    pub const PERF_TIMER_MASK: u32 = 0x0030_0000;
    /// `PERF_TIMER_TICK`.
    pub const PERF_TIMER_TICK: u32 = 0x0000_0000;
    /// `PERF_TIMER_100NS`.
    pub const PERF_TIMER_100NS: u32 = 0x0010_0000;
    /// `PERF_OBJECT_TIMER`.
    pub const PERF_OBJECT_TIMER: u32 = 0x0020_0000;
    /// `PERF_DELTA_COUNTER`.
    pub const PERF_DELTA_COUNTER: u32 = 0x0040_0000;
    /// `PERF_DELTA_BASE`.
    pub const PERF_DELTA_BASE: u32 = 0x0080_0000;
    /// `PERF_INVERSE_COUNTER`.
    pub const PERF_INVERSE_COUNTER: u32 = 0x0100_0000;
    /// `PERF_MULTI_COUNTER`.
    pub const PERF_MULTI_COUNTER: u32 = 0x0200_0000;
    /// Display field mask.
    pub const PERF_DISPLAY_MASK: u32 = 0x7000_0000;
    /// `PERF_DISPLAY_NO_SUFFIX`.
    pub const PERF_DISPLAY_NO_SUFFIX: u32 = 0x0000_0000;
    /// `PERF_DISPLAY_PER_SEC`.
    pub const PERF_DISPLAY_PER_SEC: u32 = 0x1000_0000;
    /// `PERF_DISPLAY_PERCENT`.
    pub const PERF_DISPLAY_PERCENT: u32 = 0x2000_0000;
    /// `PERF_DISPLAY_SECONDS`.
    pub const PERF_DISPLAY_SECONDS: u32 = 0x3000_0000;
    /// `PERF_DISPLAY_NOSHOW`.
    pub const PERF_DISPLAY_NOSHOW: u32 = 0x4000_0000;
    /// `PERF_COUNTER_HISTOGRAM_TYPE`.
    pub const PERF_COUNTER_HISTOGRAM_TYPE: u32 = 0x8000_0000;
}

use bits::*;

macro_rules! predefined {
    ($( $(#[$doc:meta])* $name:ident = $value:expr; )*) => {
        impl CounterType {
            $( $(#[$doc])* pub const $name: CounterType = CounterType($value); )*

            /// Every predefined counter type of winperf.h, in winperf.h order. `PERF_PRECISION_TIMESTAMP` is
            /// not listed separately because it equals [`CounterType::PERF_LARGE_RAW_BASE`].
            pub const ALL: &'static [CounterType] = &[ $( CounterType::$name ),* ];

            /// The winperf.h name of a predefined type, or `None` for other values.
            ///
            /// `PERF_LARGE_RAW_BASE` and `PERF_PRECISION_TIMESTAMP` share a value; the base name is returned.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $value => Some(stringify!($name)), )*
                    // The WMI documentation lists PERF_LARGE_RAW_BASE as 1073939715 (low byte 3).
                    0x4003_0503 => Some("PERF_LARGE_RAW_BASE"),
                    _ => None,
                }
            }
        }
    };
}

predefined! {
    /// 32-bit rate: `(N1−N0)/((D1−D0)/F)`, per second.
    PERF_COUNTER_COUNTER = 0x1041_0400;
    /// 64-bit timer as a fraction of elapsed ticks: `100·(N1−N0)/(D1−D0)`.
    PERF_COUNTER_TIMER = 0x2041_0500;
    /// 32-bit queue length × time in ticks: `(N1−N0)/(D1−D0)`.
    PERF_COUNTER_QUEUELEN_TYPE = 0x0045_0400;
    /// 64-bit queue length × time in ticks.
    PERF_COUNTER_LARGE_QUEUELEN_TYPE = 0x0045_0500;
    /// 64-bit queue length × time in 100 ns units.
    PERF_COUNTER_100NS_QUEUELEN_TYPE = 0x0055_0500;
    /// 64-bit queue length × time in object time units.
    PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE = 0x0065_0500;
    /// 64-bit rate, per second.
    PERF_COUNTER_BULK_COUNT = 0x1041_0500;
    /// Unicode text.
    PERF_COUNTER_TEXT = 0x0000_0B00;
    /// 32-bit instantaneous value, decimal.
    PERF_COUNTER_RAWCOUNT = 0x0001_0000;
    /// 64-bit instantaneous value, decimal.
    PERF_COUNTER_LARGE_RAWCOUNT = 0x0001_0100;
    /// 32-bit instantaneous value, hexadecimal. Its value is 0.
    PERF_COUNTER_RAWCOUNT_HEX = 0x0000_0000;
    /// 64-bit instantaneous value, hexadecimal.
    PERF_COUNTER_LARGE_RAWCOUNT_HEX = 0x0000_0100;
    /// Ratio of two deltas: `100·(N1−N0)/(B1−B0)`; base `PERF_SAMPLE_BASE`.
    PERF_SAMPLE_FRACTION = 0x20C2_0400;
    /// 32-bit rate without a suffix.
    PERF_SAMPLE_COUNTER = 0x0041_0400;
    /// No data.
    PERF_COUNTER_NODATA = 0x4000_0200;
    /// Inverse 64-bit tick timer: `100·(1−(N1−N0)/(D1−D0))`.
    PERF_COUNTER_TIMER_INV = 0x2141_0500;
    /// Base of `PERF_SAMPLE_FRACTION`.
    PERF_SAMPLE_BASE = 0x4003_0401;
    /// Average time per operation: `((N1−N0)/F)/(B1−B0)`; base `PERF_AVERAGE_BASE`.
    PERF_AVERAGE_TIMER = 0x3002_0400;
    /// Base of `PERF_AVERAGE_TIMER` and `PERF_AVERAGE_BULK`.
    PERF_AVERAGE_BASE = 0x4003_0402;
    /// Average items per operation: `(N1−N0)/(B1−B0)`; base `PERF_AVERAGE_BASE`.
    PERF_AVERAGE_BULK = 0x4002_0500;
    /// Object-time timer: `100·(N1−N0)/(D1−D0)` with the object's clock.
    PERF_OBJ_TIME_TIMER = 0x2061_0500;
    /// 100 ns timer: `100·(N1−N0)/(D1−D0)`.
    PERF_100NSEC_TIMER = 0x2051_0500;
    /// Inverse 100 ns timer: `100·(1−(N1−N0)/(D1−D0))`.
    PERF_100NSEC_TIMER_INV = 0x2151_0500;
    /// Tick timer summed over several items; base `PERF_COUNTER_MULTI_BASE`.
    PERF_COUNTER_MULTI_TIMER = 0x2241_0500;
    /// Inverse tick timer summed over several items.
    PERF_COUNTER_MULTI_TIMER_INV = 0x2341_0500;
    /// Base (item count) of the multi timers.
    PERF_COUNTER_MULTI_BASE = 0x4203_0500;
    /// 100 ns timer summed over several items.
    PERF_100NSEC_MULTI_TIMER = 0x2251_0500;
    /// Inverse 100 ns timer summed over several items.
    PERF_100NSEC_MULTI_TIMER_INV = 0x2351_0500;
    /// 32-bit fraction: `100·N/B`; base `PERF_RAW_BASE`.
    PERF_RAW_FRACTION = 0x2002_0400;
    /// 64-bit fraction: `100·N/B`; base `PERF_LARGE_RAW_BASE`.
    PERF_LARGE_RAW_FRACTION = 0x2002_0500;
    /// Base of `PERF_RAW_FRACTION`.
    PERF_RAW_BASE = 0x4003_0403;
    /// Base of `PERF_LARGE_RAW_FRACTION`; also the value of `PERF_PRECISION_TIMESTAMP`.
    PERF_LARGE_RAW_BASE = 0x4003_0500;
    /// Elapsed time: `(D−N)/F` with the object's clock.
    PERF_ELAPSED_TIME = 0x3024_0500;
    /// 32-bit difference `N1−N0`.
    PERF_COUNTER_DELTA = 0x0040_0400;
    /// 64-bit difference `N1−N0`.
    PERF_COUNTER_LARGE_DELTA = 0x0040_0500;
    /// Precision timer with the system tick clock; time stamp from the following counter.
    PERF_PRECISION_SYSTEM_TIMER = 0x2047_0500;
    /// Precision timer in 100 ns units; time stamp from the following counter.
    PERF_PRECISION_100NS_TIMER = 0x2057_0500;
    /// Precision timer with the object's frequency; time stamp from the following counter.
    PERF_PRECISION_OBJECT_TIMER = 0x2067_0500;
}

impl CounterType {
    /// `PERF_PRECISION_TIMESTAMP`: the companion of a `PERF_PRECISION_*_TIMER`. Same value as
    /// [`CounterType::PERF_LARGE_RAW_BASE`].
    pub const PERF_PRECISION_TIMESTAMP: CounterType = CounterType::PERF_LARGE_RAW_BASE;

    /// The raw `u32`.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// Whether this is one of the predefined winperf.h types.
    pub fn is_predefined(self) -> bool {
        self.name().is_some()
    }

    /// The size field.
    pub const fn size(self) -> SizeField {
        match self.0 & PERF_SIZE_MASK {
            PERF_SIZE_DWORD => SizeField::Dword,
            PERF_SIZE_LARGE => SizeField::Large,
            PERF_SIZE_ZERO => SizeField::Zero,
            _ => SizeField::VariableLen,
        }
    }

    /// The data size the size field implies: 4, 8, 0, or `None` for variable length.
    pub const fn nominal_size(self) -> Option<u32> {
        match self.size() {
            SizeField::Dword => Some(4),
            SizeField::Large => Some(8),
            SizeField::Zero => Some(0),
            SizeField::VariableLen => None,
        }
    }

    /// The type field.
    pub const fn kind(self) -> TypeField {
        match self.0 & PERF_TYPE_MASK {
            PERF_TYPE_NUMBER => TypeField::Number,
            PERF_TYPE_COUNTER => TypeField::Counter,
            PERF_TYPE_TEXT => TypeField::Text,
            _ => TypeField::Zero,
        }
    }

    /// The raw 4-bit subtype value (bits 16–19).
    pub const fn subtype_bits(self) -> u32 {
        self.0 & PERF_SUBTYPE_MASK
    }

    /// The subtype, interpreted according to the type field.
    pub const fn subtype(self) -> Subtype {
        let s = self.subtype_bits();
        match self.kind() {
            TypeField::Number => match s {
                PERF_NUMBER_HEX => Subtype::NumberHex,
                PERF_NUMBER_DECIMAL => Subtype::NumberDecimal,
                PERF_NUMBER_DEC_1000 => Subtype::NumberDec1000,
                _ => Subtype::Other((s >> 16) as u8),
            },
            TypeField::Counter => match s {
                PERF_COUNTER_VALUE => Subtype::CounterValue,
                PERF_COUNTER_RATE => Subtype::CounterRate,
                PERF_COUNTER_FRACTION => Subtype::CounterFraction,
                PERF_COUNTER_BASE => Subtype::CounterBase,
                PERF_COUNTER_ELAPSED => Subtype::CounterElapsed,
                PERF_COUNTER_QUEUELEN => Subtype::CounterQueueLen,
                PERF_COUNTER_HISTOGRAM => Subtype::CounterHistogram,
                PERF_COUNTER_PRECISION => Subtype::CounterPrecision,
                _ => Subtype::Other((s >> 16) as u8),
            },
            TypeField::Text => match s {
                PERF_TEXT_UNICODE => Subtype::TextUnicode,
                PERF_TEXT_ASCII => Subtype::TextAscii,
                _ => Subtype::Other((s >> 16) as u8),
            },
            TypeField::Zero => Subtype::Other((s >> 16) as u8),
        }
    }

    /// The timer base field. Only meaningful for `PERF_TYPE_COUNTER` types.
    pub const fn time_base(self) -> TimeBase {
        match self.0 & PERF_TIMER_MASK {
            PERF_TIMER_TICK => TimeBase::Tick,
            PERF_TIMER_100NS => TimeBase::Ns100,
            PERF_OBJECT_TIMER => TimeBase::Object,
            _ => TimeBase::Reserved,
        }
    }

    /// `PERF_DELTA_COUNTER`: the numerator is differenced.
    pub const fn is_delta(self) -> bool {
        self.0 & PERF_DELTA_COUNTER != 0
    }

    /// `PERF_DELTA_BASE`: the base is differenced too.
    pub const fn is_delta_base(self) -> bool {
        self.0 & PERF_DELTA_BASE != 0
    }

    /// `PERF_INVERSE_COUNTER`: the displayed value is `1 − value` (or `B − value`).
    pub const fn is_inverse(self) -> bool {
        self.0 & PERF_INVERSE_COUNTER != 0
    }

    /// `PERF_MULTI_COUNTER`: the value is a sum over several items whose count follows.
    pub const fn is_multi(self) -> bool {
        self.0 & PERF_MULTI_COUNTER != 0
    }

    /// `PERF_COUNTER_HISTOGRAM_TYPE` (bit 31).
    pub const fn is_histogram(self) -> bool {
        self.0 & PERF_COUNTER_HISTOGRAM_TYPE != 0
    }

    /// The display suffix field, compared as a value.
    pub const fn display(self) -> DisplaySuffix {
        match self.0 & PERF_DISPLAY_MASK {
            PERF_DISPLAY_NO_SUFFIX => DisplaySuffix::None,
            PERF_DISPLAY_PER_SEC => DisplaySuffix::PerSec,
            PERF_DISPLAY_PERCENT => DisplaySuffix::Percent,
            PERF_DISPLAY_SECONDS => DisplaySuffix::Seconds,
            PERF_DISPLAY_NOSHOW => DisplaySuffix::NoShow,
            other => DisplaySuffix::Other((other >> 28) as u8),
        }
    }

    /// The low byte (bits 0–7): 1, 2, 3 for `PERF_SAMPLE_BASE`, `PERF_AVERAGE_BASE`, `PERF_RAW_BASE`.
    pub const fn reserved_low_byte(self) -> u8 {
        (self.0 & 0xFF) as u8
    }

    /// A base counter: `PERF_TYPE_COUNTER` with subtype `PERF_COUNTER_BASE` (the sample, average, raw,
    /// large raw and multi bases, and `PERF_PRECISION_TIMESTAMP`). Not displayable on its own.
    pub const fn is_base(self) -> bool {
        matches!(self.kind(), TypeField::Counter) && self.subtype_bits() == PERF_COUNTER_BASE
    }

    /// A `PERF_PRECISION_*_TIMER`, whose time stamp is the counter that follows it.
    pub const fn is_precision(self) -> bool {
        matches!(self.kind(), TypeField::Counter) && self.subtype_bits() == PERF_COUNTER_PRECISION
    }

    /// Whether the value needs a base counter (the definition that follows this one): fractions,
    /// precision timers (their time stamp) and multi timers (their count).
    pub const fn needs_base(self) -> bool {
        matches!(self.kind(), TypeField::Counter)
            && !self.is_base()
            && (self.subtype_bits() == PERF_COUNTER_FRACTION
                || self.subtype_bits() == PERF_COUNTER_PRECISION
                || self.is_multi())
    }

    /// Whether a displayable value needs two samples.
    ///
    /// True for every type with `PERF_DELTA_COUNTER` and also for `PERF_AVERAGE_TIMER` and
    /// `PERF_AVERAGE_BULK`, which lack the flag but difference numerator and base. Fractions without
    /// delta flags (`PERF_RAW_FRACTION`), raw counts, elapsed time, bases and text need one.
    pub const fn needs_two_samples(self) -> bool {
        if self.is_base() || !matches!(self.kind(), TypeField::Counter) {
            return false;
        }
        self.is_delta()
            || self.is_delta_base()
            || (self.subtype_bits() == PERF_COUNTER_FRACTION
                && (self.0 == Self::PERF_AVERAGE_TIMER.0 || self.0 == Self::PERF_AVERAGE_BULK.0))
    }

    /// Whether the type yields a number PDH would display: not a base, not text, not `PERF_COUNTER_NODATA`
    /// / zero-size, and not a histogram. `PERF_AVERAGE_BULK` carries `PERF_DISPLAY_NOSHOW` but *is*
    /// displayed (e.g. `PhysicalDisk\Avg. Disk Bytes/Transfer`), so NOSHOW alone does not hide a type.
    pub const fn is_displayable(self) -> bool {
        !(self.is_base()
            || self.is_histogram()
            || matches!(self.kind(), TypeField::Text | TypeField::Zero)
            || matches!(self.size(), SizeField::Zero | SizeField::VariableLen))
    }

    /// The display suffix text (`"/sec"`, `"%"`, `"secs"` or `""`).
    pub const fn suffix(self) -> &'static str {
        match self.display() {
            DisplaySuffix::PerSec => "/sec",
            DisplaySuffix::Percent => "%",
            DisplaySuffix::Seconds => "secs",
            _ => "",
        }
    }
}

/// What is known of a counter beyond its path: what its raw samples need to become values. Every
/// column of a log carries one (a `.blg` counter list, a SQL log's `CounterDetails`), next to its
/// parsed [`CounterPath`](crate::path::CounterPath).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CounterInfo {
    /// The counter type (`PERF_COUNTER_COUNTER` …).
    pub counter_type: CounterType,
    /// The provider's default scale (`DefaultScale`), informational.
    pub default_scale: i32,
    /// The time base F in ticks per second (`PdhGetCounterTimeBase`); 0 when the type uses none.
    pub time_base: i64,
}

impl fmt::Debug for CounterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}(0x{:08X})", self.0),
            None => write!(f, "CounterType(0x{:08X})", self.0),
        }
    }
}

impl fmt::Display for CounterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:08X}", self.0),
        }
    }
}

impl From<u32> for CounterType {
    fn from(v: u32) -> Self {
        CounterType(v)
    }
}

impl From<CounterType> for u32 {
    fn from(t: CounterType) -> Self {
        t.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_match_winperf_h() {
        // Decimal values from the winperf.h table (computed with mingw-w64).
        let table: &[(CounterType, u32)] = &[
            (CounterType::PERF_COUNTER_COUNTER, 272696320),
            (CounterType::PERF_COUNTER_TIMER, 541132032),
            (CounterType::PERF_COUNTER_QUEUELEN_TYPE, 4523008),
            (CounterType::PERF_COUNTER_LARGE_QUEUELEN_TYPE, 4523264),
            (CounterType::PERF_COUNTER_100NS_QUEUELEN_TYPE, 5571840),
            (CounterType::PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, 6620416),
            (CounterType::PERF_COUNTER_BULK_COUNT, 272696576),
            (CounterType::PERF_COUNTER_TEXT, 2816),
            (CounterType::PERF_COUNTER_RAWCOUNT, 65536),
            (CounterType::PERF_COUNTER_LARGE_RAWCOUNT, 65792),
            (CounterType::PERF_COUNTER_RAWCOUNT_HEX, 0),
            (CounterType::PERF_COUNTER_LARGE_RAWCOUNT_HEX, 256),
            (CounterType::PERF_SAMPLE_FRACTION, 549585920),
            (CounterType::PERF_SAMPLE_COUNTER, 4260864),
            (CounterType::PERF_COUNTER_NODATA, 1073742336),
            (CounterType::PERF_COUNTER_TIMER_INV, 557909248),
            (CounterType::PERF_SAMPLE_BASE, 1073939457),
            (CounterType::PERF_AVERAGE_TIMER, 805438464),
            (CounterType::PERF_AVERAGE_BASE, 1073939458),
            (CounterType::PERF_AVERAGE_BULK, 1073874176),
            (CounterType::PERF_OBJ_TIME_TIMER, 543229184),
            (CounterType::PERF_100NSEC_TIMER, 542180608),
            (CounterType::PERF_100NSEC_TIMER_INV, 558957824),
            (CounterType::PERF_COUNTER_MULTI_TIMER, 574686464),
            (CounterType::PERF_COUNTER_MULTI_TIMER_INV, 591463680),
            (CounterType::PERF_COUNTER_MULTI_BASE, 1107494144),
            (CounterType::PERF_100NSEC_MULTI_TIMER, 575735040),
            (CounterType::PERF_100NSEC_MULTI_TIMER_INV, 592512256),
            (CounterType::PERF_RAW_FRACTION, 537003008),
            (CounterType::PERF_LARGE_RAW_FRACTION, 537003264),
            (CounterType::PERF_RAW_BASE, 1073939459),
            (CounterType::PERF_LARGE_RAW_BASE, 1073939712),
            (CounterType::PERF_ELAPSED_TIME, 807666944),
            (CounterType::PERF_COUNTER_DELTA, 4195328),
            (CounterType::PERF_COUNTER_LARGE_DELTA, 4195584),
            (CounterType::PERF_PRECISION_SYSTEM_TIMER, 541525248),
            (CounterType::PERF_PRECISION_100NS_TIMER, 542573824),
            (CounterType::PERF_PRECISION_OBJECT_TIMER, 543622400),
            (CounterType::PERF_PRECISION_TIMESTAMP, 1073939712),
        ];
        for (t, v) in table {
            assert_eq!(t.0, *v, "{t:?}");
        }
        assert_eq!(CounterType::ALL.len(), 38);
    }

    #[test]
    fn names() {
        assert_eq!(CounterType(0).name(), Some("PERF_COUNTER_RAWCOUNT_HEX"));
        assert_eq!(CounterType(0x4003_0500).name(), Some("PERF_LARGE_RAW_BASE"));
        assert_eq!(CounterType(1073939715).name(), Some("PERF_LARGE_RAW_BASE"));
        assert!(CounterType(1073939715).is_base());
        assert_eq!(CounterType(0x1234_5678).name(), None);
        assert_eq!(format!("{}", CounterType(0x1234_5678)), "0x12345678");
        assert_eq!(
            format!("{:?}", CounterType::PERF_ELAPSED_TIME),
            "PERF_ELAPSED_TIME(0x30240500)"
        );
        for t in CounterType::ALL {
            assert!(t.is_predefined());
        }
    }

    #[test]
    fn fields_of_every_type() {
        use DisplaySuffix as D;
        use SizeField as S;
        use Subtype as St;
        use TimeBase as T;
        use TypeField as K;
        // (type, size, kind, subtype, time base, delta, delta base, inverse, multi, display)
        type Row = (CounterType, S, K, St, T, bool, bool, bool, bool, D);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            (CounterType::PERF_COUNTER_COUNTER, S::Dword, K::Counter, St::CounterRate, T::Tick, true, false, false, false, D::PerSec),
            (CounterType::PERF_COUNTER_TIMER, S::Large, K::Counter, St::CounterRate, T::Tick, true, false, false, false, D::Percent),
            (CounterType::PERF_COUNTER_QUEUELEN_TYPE, S::Dword, K::Counter, St::CounterQueueLen, T::Tick, true, false, false, false, D::None),
            (CounterType::PERF_COUNTER_LARGE_QUEUELEN_TYPE, S::Large, K::Counter, St::CounterQueueLen, T::Tick, true, false, false, false, D::None),
            (CounterType::PERF_COUNTER_100NS_QUEUELEN_TYPE, S::Large, K::Counter, St::CounterQueueLen, T::Ns100, true, false, false, false, D::None),
            (CounterType::PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, S::Large, K::Counter, St::CounterQueueLen, T::Object, true, false, false, false, D::None),
            (CounterType::PERF_COUNTER_BULK_COUNT, S::Large, K::Counter, St::CounterRate, T::Tick, true, false, false, false, D::PerSec),
            (CounterType::PERF_COUNTER_TEXT, S::VariableLen, K::Text, St::TextUnicode, T::Tick, false, false, false, false, D::None),
            (CounterType::PERF_COUNTER_RAWCOUNT, S::Dword, K::Number, St::NumberDecimal, T::Tick, false, false, false, false, D::None),
            (CounterType::PERF_COUNTER_LARGE_RAWCOUNT, S::Large, K::Number, St::NumberDecimal, T::Tick, false, false, false, false, D::None),
            (CounterType::PERF_COUNTER_RAWCOUNT_HEX, S::Dword, K::Number, St::NumberHex, T::Tick, false, false, false, false, D::None),
            (CounterType::PERF_COUNTER_LARGE_RAWCOUNT_HEX, S::Large, K::Number, St::NumberHex, T::Tick, false, false, false, false, D::None),
            (CounterType::PERF_SAMPLE_FRACTION, S::Dword, K::Counter, St::CounterFraction, T::Tick, true, true, false, false, D::Percent),
            (CounterType::PERF_SAMPLE_COUNTER, S::Dword, K::Counter, St::CounterRate, T::Tick, true, false, false, false, D::None),
            (CounterType::PERF_COUNTER_NODATA, S::Zero, K::Number, St::NumberHex, T::Tick, false, false, false, false, D::NoShow),
            (CounterType::PERF_COUNTER_TIMER_INV, S::Large, K::Counter, St::CounterRate, T::Tick, true, false, true, false, D::Percent),
            (CounterType::PERF_SAMPLE_BASE, S::Dword, K::Counter, St::CounterBase, T::Tick, false, false, false, false, D::NoShow),
            (CounterType::PERF_AVERAGE_TIMER, S::Dword, K::Counter, St::CounterFraction, T::Tick, false, false, false, false, D::Seconds),
            (CounterType::PERF_AVERAGE_BASE, S::Dword, K::Counter, St::CounterBase, T::Tick, false, false, false, false, D::NoShow),
            (CounterType::PERF_AVERAGE_BULK, S::Large, K::Counter, St::CounterFraction, T::Tick, false, false, false, false, D::NoShow),
            (CounterType::PERF_OBJ_TIME_TIMER, S::Large, K::Counter, St::CounterRate, T::Object, true, false, false, false, D::Percent),
            (CounterType::PERF_100NSEC_TIMER, S::Large, K::Counter, St::CounterRate, T::Ns100, true, false, false, false, D::Percent),
            (CounterType::PERF_100NSEC_TIMER_INV, S::Large, K::Counter, St::CounterRate, T::Ns100, true, false, true, false, D::Percent),
            (CounterType::PERF_COUNTER_MULTI_TIMER, S::Large, K::Counter, St::CounterRate, T::Tick, true, false, false, true, D::Percent),
            (CounterType::PERF_COUNTER_MULTI_TIMER_INV, S::Large, K::Counter, St::CounterRate, T::Tick, true, false, true, true, D::Percent),
            (CounterType::PERF_COUNTER_MULTI_BASE, S::Large, K::Counter, St::CounterBase, T::Tick, false, false, false, true, D::NoShow),
            (CounterType::PERF_100NSEC_MULTI_TIMER, S::Large, K::Counter, St::CounterRate, T::Ns100, true, false, false, true, D::Percent),
            (CounterType::PERF_100NSEC_MULTI_TIMER_INV, S::Large, K::Counter, St::CounterRate, T::Ns100, true, false, true, true, D::Percent),
            (CounterType::PERF_RAW_FRACTION, S::Dword, K::Counter, St::CounterFraction, T::Tick, false, false, false, false, D::Percent),
            (CounterType::PERF_LARGE_RAW_FRACTION, S::Large, K::Counter, St::CounterFraction, T::Tick, false, false, false, false, D::Percent),
            (CounterType::PERF_RAW_BASE, S::Dword, K::Counter, St::CounterBase, T::Tick, false, false, false, false, D::NoShow),
            (CounterType::PERF_LARGE_RAW_BASE, S::Large, K::Counter, St::CounterBase, T::Tick, false, false, false, false, D::NoShow),
            (CounterType::PERF_ELAPSED_TIME, S::Large, K::Counter, St::CounterElapsed, T::Object, false, false, false, false, D::Seconds),
            (CounterType::PERF_COUNTER_DELTA, S::Dword, K::Counter, St::CounterValue, T::Tick, true, false, false, false, D::None),
            (CounterType::PERF_COUNTER_LARGE_DELTA, S::Large, K::Counter, St::CounterValue, T::Tick, true, false, false, false, D::None),
            (CounterType::PERF_PRECISION_SYSTEM_TIMER, S::Large, K::Counter, St::CounterPrecision, T::Tick, true, false, false, false, D::Percent),
            (CounterType::PERF_PRECISION_100NS_TIMER, S::Large, K::Counter, St::CounterPrecision, T::Ns100, true, false, false, false, D::Percent),
            (CounterType::PERF_PRECISION_OBJECT_TIMER, S::Large, K::Counter, St::CounterPrecision, T::Object, true, false, false, false, D::Percent),
        ];
        assert_eq!(rows.len(), CounterType::ALL.len());
        for &(t, size, kind, sub, tb, d, db, inv, multi, disp) in rows {
            assert_eq!(t.size(), size, "{t:?}");
            assert_eq!(t.kind(), kind, "{t:?}");
            assert_eq!(t.subtype(), sub, "{t:?}");
            assert_eq!(t.time_base(), tb, "{t:?}");
            assert_eq!(t.is_delta(), d, "{t:?}");
            assert_eq!(t.is_delta_base(), db, "{t:?}");
            assert_eq!(t.is_inverse(), inv, "{t:?}");
            assert_eq!(t.is_multi(), multi, "{t:?}");
            assert_eq!(t.display(), disp, "{t:?}");
        }
    }

    #[test]
    fn classification() {
        let two: Vec<&str> = CounterType::ALL
            .iter()
            .filter(|t| t.needs_two_samples())
            .map(|t| t.name().unwrap())
            .collect();
        assert_eq!(
            two,
            [
                "PERF_COUNTER_COUNTER",
                "PERF_COUNTER_TIMER",
                "PERF_COUNTER_QUEUELEN_TYPE",
                "PERF_COUNTER_LARGE_QUEUELEN_TYPE",
                "PERF_COUNTER_100NS_QUEUELEN_TYPE",
                "PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE",
                "PERF_COUNTER_BULK_COUNT",
                "PERF_SAMPLE_FRACTION",
                "PERF_SAMPLE_COUNTER",
                "PERF_COUNTER_TIMER_INV",
                "PERF_AVERAGE_TIMER",
                "PERF_AVERAGE_BULK",
                "PERF_OBJ_TIME_TIMER",
                "PERF_100NSEC_TIMER",
                "PERF_100NSEC_TIMER_INV",
                "PERF_COUNTER_MULTI_TIMER",
                "PERF_COUNTER_MULTI_TIMER_INV",
                "PERF_100NSEC_MULTI_TIMER",
                "PERF_100NSEC_MULTI_TIMER_INV",
                "PERF_COUNTER_DELTA",
                "PERF_COUNTER_LARGE_DELTA",
                "PERF_PRECISION_SYSTEM_TIMER",
                "PERF_PRECISION_100NS_TIMER",
                "PERF_PRECISION_OBJECT_TIMER",
            ]
        );
        let bases: Vec<&str> = CounterType::ALL
            .iter()
            .filter(|t| t.is_base())
            .map(|t| t.name().unwrap())
            .collect();
        assert_eq!(
            bases,
            [
                "PERF_SAMPLE_BASE",
                "PERF_AVERAGE_BASE",
                "PERF_COUNTER_MULTI_BASE",
                "PERF_RAW_BASE",
                "PERF_LARGE_RAW_BASE"
            ]
        );
        let hidden: Vec<&str> = CounterType::ALL
            .iter()
            .filter(|t| !t.is_displayable())
            .map(|t| t.name().unwrap())
            .collect();
        assert_eq!(
            hidden,
            [
                "PERF_COUNTER_TEXT",
                "PERF_COUNTER_NODATA",
                "PERF_SAMPLE_BASE",
                "PERF_AVERAGE_BASE",
                "PERF_COUNTER_MULTI_BASE",
                "PERF_RAW_BASE",
                "PERF_LARGE_RAW_BASE"
            ]
        );
        assert!(CounterType::PERF_AVERAGE_BULK.is_displayable());
        assert!(CounterType::PERF_SAMPLE_FRACTION.needs_base());
        assert!(CounterType::PERF_AVERAGE_TIMER.needs_base());
        assert!(CounterType::PERF_PRECISION_100NS_TIMER.needs_base());
        assert!(CounterType::PERF_100NSEC_MULTI_TIMER.needs_base());
        assert!(!CounterType::PERF_COUNTER_MULTI_BASE.needs_base());
        assert!(!CounterType::PERF_100NSEC_TIMER.needs_base());
        assert_eq!(
            CounterType::PERF_DISPLAY_SECONDS_PROBE.display(),
            DisplaySuffix::Seconds
        );
        assert_eq!(CounterType(0x5000_0000).display(), DisplaySuffix::Other(5));
        assert_eq!(CounterType::PERF_AVERAGE_TIMER.suffix(), "secs");
        assert_eq!(CounterType::PERF_COUNTER_COUNTER.suffix(), "/sec");
        assert!(CounterType(PERF_COUNTER_HISTOGRAM_TYPE).is_histogram());
        assert!(!CounterType(PERF_COUNTER_HISTOGRAM_TYPE).is_displayable());
        assert_eq!(CounterType::PERF_RAW_BASE.reserved_low_byte(), 3);
    }

    impl CounterType {
        const PERF_DISPLAY_SECONDS_PROBE: CounterType = CounterType(PERF_DISPLAY_SECONDS);
    }
}
