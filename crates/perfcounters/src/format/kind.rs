//! Telling the binary block formats apart by their first bytes.

use super::v2::DATA_HEADER_SIZE;

/// `"PERF"` in UTF-16 little-endian: how a V1 block starts on every Windows machine.
const SIGNATURE_LE: &[u8; 8] = b"P\0E\0R\0F\0";
/// `"PERF"` in UTF-16 big-endian: a V1 block whose `LittleEndian` field is 0.
const SIGNATURE_BE: &[u8; 8] = b"\0P\0E\0R\0F";

/// The kind of a raw block of performance data.
///
/// ```
/// use perfcounters::format::BlockKind;
/// assert_eq!(BlockKind::detect(b"P\0E\0R\0F\0\x01\0\0\0"), Some(BlockKind::V1));
/// assert_eq!(BlockKind::detect(&[0; 48]), Some(BlockKind::V2));
/// assert_eq!(BlockKind::detect(&[0; 47]), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// A `PERF_DATA_BLOCK` ([`super::v1`]), the `HKEY_PERFORMANCE_DATA` result.
    V1,
    /// A `PERF_DATA_HEADER` block ([`super::v2`]), the `PerfQueryCounterData` result.
    V2,
}

impl BlockKind {
    /// Which kind of block `bytes` hold, judged by the first bytes only (nothing is validated):
    ///
    /// * [`BlockKind::V1`] when they start with the `Signature` "PERF" in UTF-16, in either byte order;
    /// * [`BlockKind::V2`] when they do not and are at least a `PERF_DATA_HEADER` long
    ///   ([`DATA_HEADER_SIZE`], 48 bytes): a V2 block has no signature of its own;
    /// * `None` when they are shorter than that without the signature: too short for either kind.
    pub fn detect(bytes: &[u8]) -> Option<BlockKind> {
        if bytes.starts_with(SIGNATURE_LE) || bytes.starts_with(SIGNATURE_BE) {
            Some(BlockKind::V1)
        } else if bytes.len() >= DATA_HEADER_SIZE {
            Some(BlockKind::V2)
        } else {
            None
        }
    }
}
