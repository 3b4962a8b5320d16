//! PDH counter statuses (`CStatus`, pdhmsg.h).
//!
//! A computed value either succeeds or carries one of these codes, so callers can show "no value yet"
//! or "invalid data" instead of garbage.

use std::fmt;

/// A PDH status code (`PDH_CSTATUS_*` and the related `PDH_*` codes of pdhmsg.h).
///
/// Severity is in the top two bits: `0xC…` error, `0x8…` warning, `0x0…` success. The default is
/// `PDH_CSTATUS_VALID_DATA` (0).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PdhStatus(pub u32);

macro_rules! statuses {
    ($( $(#[$doc:meta])* $name:ident = $value:expr; )*) => {
        impl PdhStatus {
            $( $(#[$doc])* pub const $name: PdhStatus = PdhStatus($value); )*

            /// The pdhmsg.h name of a known code.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $value => Some(stringify!($name)), )*
                    _ => None,
                }
            }
        }
    };
}

statuses! {
    /// Data valid, unchanged since the last read.
    PDH_CSTATUS_VALID_DATA = 0x0000_0000;
    /// Data valid and changed.
    PDH_CSTATUS_NEW_DATA = 0x0000_0001;
    /// The computer is unreachable.
    PDH_CSTATUS_NO_MACHINE = 0x8000_07D0;
    /// The instance does not exist (now); data resumes when it appears.
    PDH_CSTATUS_NO_INSTANCE = 0x8000_07D1;
    /// A buffer was too small.
    PDH_MORE_DATA = 0x8000_07D2;
    /// The counter was added but not validated yet.
    PDH_CSTATUS_ITEM_NOT_VALIDATED = 0x8000_07D3;
    /// Retry.
    PDH_RETRY = 0x8000_07D4;
    /// No data to return (e.g. a zero interval or a zero denominator).
    PDH_NO_DATA = 0x8000_07D5;
    /// A negative denominator was detected (the time or base went backwards).
    PDH_CALC_NEGATIVE_DENOMINATOR = 0x8000_07D6;
    /// A negative time base was detected.
    PDH_CALC_NEGATIVE_TIMEBASE = 0x8000_07D7;
    /// A negative value was detected.
    PDH_CALC_NEGATIVE_VALUE = 0x8000_07D8;
    /// The object was not found.
    PDH_CSTATUS_NO_OBJECT = 0xC000_0BB8;
    /// The counter was not found.
    PDH_CSTATUS_NO_COUNTER = 0xC000_0BB9;
    /// Counter found but the data is not valid (e.g. it is less than the previous value).
    PDH_CSTATUS_INVALID_DATA = 0xC000_0BBA;
    /// The path has no counter name.
    PDH_CSTATUS_NO_COUNTERNAME = 0xC000_0BBF;
    /// The path could not be parsed.
    PDH_CSTATUS_BAD_COUNTERNAME = 0xC000_0BC0;
    /// An argument is not valid (e.g. a base type given to the calculator, or a scale outside −7..+7).
    PDH_INVALID_ARGUMENT = 0xC000_0BBD;
    /// Function-level "the data is not valid".
    PDH_INVALID_DATA = 0xC000_0BC6;
    /// The path is not valid.
    PDH_INVALID_PATH = 0xC000_0BC4;
    /// The instance name is not valid.
    PDH_INVALID_INSTANCE = 0xC000_0BC5;
}

impl PdhStatus {
    /// Success severity (top two bits clear).
    pub const fn is_success(self) -> bool {
        self.0 >> 30 == 0
    }

    /// `PDH_CSTATUS_VALID_DATA` or `PDH_CSTATUS_NEW_DATA`: the value may be used.
    pub const fn is_valid(self) -> bool {
        self.0 == Self::PDH_CSTATUS_VALID_DATA.0 || self.0 == Self::PDH_CSTATUS_NEW_DATA.0
    }

    /// Warning severity (`0x8…`).
    pub const fn is_warning(self) -> bool {
        self.0 >> 30 == 2
    }

    /// Error severity (`0xC…`).
    pub const fn is_error(self) -> bool {
        self.0 >> 30 == 3
    }

    /// A short English description for people.
    pub fn description(self) -> &'static str {
        match self {
            Self::PDH_CSTATUS_VALID_DATA => "valid data",
            Self::PDH_CSTATUS_NEW_DATA => "new data",
            Self::PDH_CSTATUS_NO_MACHINE => "computer not reachable",
            Self::PDH_CSTATUS_NO_INSTANCE => "instance not found",
            Self::PDH_MORE_DATA => "more data",
            Self::PDH_CSTATUS_ITEM_NOT_VALIDATED => "not validated",
            Self::PDH_RETRY => "retry",
            Self::PDH_NO_DATA => "no data",
            Self::PDH_CALC_NEGATIVE_DENOMINATOR => "negative denominator",
            Self::PDH_CALC_NEGATIVE_TIMEBASE => "negative time base",
            Self::PDH_CALC_NEGATIVE_VALUE => "negative value",
            Self::PDH_CSTATUS_NO_OBJECT => "object not found",
            Self::PDH_CSTATUS_NO_COUNTER => "counter not found",
            Self::PDH_CSTATUS_INVALID_DATA => "invalid data",
            Self::PDH_CSTATUS_NO_COUNTERNAME => "no counter name",
            Self::PDH_CSTATUS_BAD_COUNTERNAME => "bad counter name",
            Self::PDH_INVALID_ARGUMENT => "invalid argument",
            Self::PDH_INVALID_DATA => "data not valid",
            Self::PDH_INVALID_PATH => "invalid path",
            Self::PDH_INVALID_INSTANCE => "invalid instance",
            _ => "unknown status",
        }
    }
}

impl fmt::Debug for PdhStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}(0x{:08X})", self.0),
            None => write!(f, "PdhStatus(0x{:08X})", self.0),
        }
    }
}

impl fmt::Display for PdhStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:08X}", self.0),
        }
    }
}

impl std::error::Error for PdhStatus {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities() {
        assert!(PdhStatus::PDH_CSTATUS_NEW_DATA.is_success());
        assert!(PdhStatus::PDH_CSTATUS_NEW_DATA.is_valid());
        assert!(PdhStatus::PDH_NO_DATA.is_warning());
        assert!(!PdhStatus::PDH_NO_DATA.is_valid());
        assert!(PdhStatus::PDH_CSTATUS_INVALID_DATA.is_error());
        assert_eq!(PdhStatus::PDH_CSTATUS_INVALID_DATA.0, 0xC0000BBA);
        assert_eq!(
            PdhStatus::PDH_CSTATUS_NO_INSTANCE.to_string(),
            "PDH_CSTATUS_NO_INSTANCE"
        );
        assert_eq!(PdhStatus(0x1234).to_string(), "0x00001234");
        assert_eq!(PdhStatus::PDH_NO_DATA.description(), "no data");
    }
}
