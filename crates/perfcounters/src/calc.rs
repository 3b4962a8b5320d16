//! The PDH formula engine.

use crate::{CounterType, PdhStatus, RawCounter};

/// Formatting options.
#[derive(Clone, Copy, Debug, Default)]
pub struct FormatOptions {}

/// Computes the displayable value.
pub fn calculate(
    _t: CounterType,
    _newer: &RawCounter,
    _older: Option<&RawCounter>,
    _time_base: i64,
    _opts: &FormatOptions,
) -> Result<f64, PdhStatus> {
    Err(PdhStatus::PDH_NO_DATA)
}
