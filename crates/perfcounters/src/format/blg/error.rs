//! The reader's error (I/O or malformed bytes) and its warnings.
//!
//! Malformed bytes are the crate's one [`DecodeError`]: the structure, its byte offset **in the
//! file**, and a typed kind.

use std::fmt;
use std::io;

use crate::format::DecodeError;

/// An error of [`BlgReader`](super::BlgReader): reading the file failed (displayed as `read error`,
/// the [`io::Error`] being the [`source`](std::error::Error::source)), or its bytes are malformed
/// (displayed as the [`DecodeError`] itself).
///
/// ```
/// use perfcounters::format::blg::{BlgReader, ReadError};
///
/// let err = BlgReader::new(&[0u8; 100][..]).unwrap_err();
/// let ReadError::Decode(err) = err else { panic!() };
/// assert_eq!(err.structure(), "WMI_BUFFER_HEADER");
/// assert_eq!(err.offset(), 0);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The underlying reader failed.
    Io(io::Error),
    /// The bytes are malformed.
    Decode(DecodeError),
    /// The log ends before its counter list: there is nothing to read.
    NoCounterList,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The cause (`source()`) says what went wrong.
            ReadError::Io(_) => f.write_str("read error"),
            ReadError::Decode(e) => e.fmt(f),
            ReadError::NoCounterList => f.write_str("the log holds no counter list"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            // Only a wrapper: displayed as the decoding error itself.
            ReadError::Decode(e) => e.source(),
            ReadError::NoCounterList => None,
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

impl From<DecodeError> for ReadError {
    fn from(e: DecodeError) -> Self {
        ReadError::Decode(e)
    }
}

/// Something the reader noticed and stepped over: an event of another provider, a record kind or
/// a field value it does not know, a count that disagrees with the data. The log is still read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Warning {
    /// Absolute byte offset in the file of what the warning is about.
    pub offset: usize,
    /// What was noticed.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {}: {}", self.offset, self.message)
    }
}
