//! Binary formats of Windows performance data.
//!
//! * [`v1`]: the `HKEY_PERFORMANCE_DATA` block (`PERF_DATA_BLOCK`, `PERF_OBJECT_TYPE`,
//!   `PERF_COUNTER_DEFINITION`, `PERF_INSTANCE_DEFINITION`, `PERF_COUNTER_BLOCK`);
//! * [`v2`]: the PerfLib V2 consumer blocks (`PERF_DATA_HEADER` and friends, registration info,
//!   instance lists);
//! * [`capture`]: the capture directory, the raw data of a Windows machine saved for replay;
//! * [`blg`]: Performance Monitor's binary logs (the ETW container and the PDH records in it).
//!
//! [`BlockKind::detect`] tells a V1 block from a V2 block by its first bytes.
//!
//! Every decoder reports malformed input as one [`DecodeError`] (structure, byte offset, typed
//! [`ErrorKind`]) and every encoder refuses a model with one [`EncodeError`].

pub mod blg;
pub mod capture;
mod error;
mod kind;
pub(crate) mod read;
pub mod structure;
pub mod v1;
pub mod v2;
pub(crate) mod write;

pub use error::{Bound, DecodeError, EncodeError, ErrorKind};
pub use kind::BlockKind;
pub use read::{Endian, Utf16Str};
