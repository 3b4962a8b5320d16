//! Errors of the V1 decoder and encoder.

use std::fmt;

/// A malformed block: which structure was being read, where it starts in the buffer, and why it was
/// rejected.
///
/// The type is deliberately general (a structure name, an absolute byte offset and a reason) so that other
/// binary decoders of the crate can report errors the same way.
///
/// ```
/// use perfcounters::format::v1::{DecodeError, PerfDataBlock};
///
/// let err = PerfDataBlock::parse(&[0u8; 10]).unwrap_err();
/// assert_eq!(err.structure(), "PERF_DATA_BLOCK");
/// assert_eq!(err.offset(), 0);
/// assert_eq!(
///     err.to_string(),
///     "PERF_DATA_BLOCK at offset 0: buffer of 10 bytes is shorter than the 88-byte header"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecodeError {
    structure: &'static str,
    offset: usize,
    reason: String,
}

impl DecodeError {
    /// A new error for the structure `structure` (e.g. `"PERF_INSTANCE_DEFINITION"`) that starts at byte
    /// `offset` of the buffer.
    pub fn new(structure: &'static str, offset: usize, reason: impl Into<String>) -> Self {
        DecodeError {
            structure,
            offset,
            reason: reason.into(),
        }
    }

    /// The name of the structure being read, as the Windows headers spell it.
    pub fn structure(&self) -> &'static str {
        self.structure
    }

    /// The absolute byte offset of that structure in the buffer given to the decoder.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Why the structure was rejected.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at offset {}: {}",
            self.structure, self.offset, self.reason
        )
    }
}

impl std::error::Error for DecodeError {}

/// A snapshot that cannot be written as a V1 block (inconsistent values, names that the code page cannot
/// represent, or lengths that do not fit in 32 bits).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EncodeError {
    message: String,
}

impl EncodeError {
    /// A new error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        EncodeError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EncodeError {}
