//! Counter paths.

/// A counter path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterPath {}
