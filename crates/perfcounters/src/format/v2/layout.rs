//! Where each V2 structure that states its own size keeps that `DWORD` (its offset from the
//! structure's start), declared once for the decoder's checks and the encoder's patches (where it is
//! not the first field; `Writer::put_size` writes a leading one).

/// `PERF_DATA_HEADER.dwTotalSize`.
pub(crate) const DATA_HEADER_SIZE_AT: usize = 0;
/// `PERF_COUNTER_HEADER.dwSize` (after `dwStatus` and `dwType`).
pub(crate) const COUNTER_HEADER_SIZE_AT: usize = 8;
/// `PERF_MULTI_COUNTERS.dwSize`.
pub(crate) const MULTI_COUNTERS_SIZE_AT: usize = 0;
/// `PERF_MULTI_INSTANCES.dwTotalSize`.
pub(crate) const MULTI_INSTANCES_SIZE_AT: usize = 0;
/// `PERF_INSTANCE_HEADER.Size`.
pub(crate) const INSTANCE_HEADER_SIZE_AT: usize = 0;
/// `PERF_COUNTER_DATA.dwSize` (after `dwDataSize`).
pub(crate) const COUNTER_DATA_SIZE_AT: usize = 4;
/// `PERF_COUNTER_IDENTIFIER.Size` (after the GUID and `Status`).
pub(crate) const COUNTER_IDENTIFIER_SIZE_AT: usize = 20;
/// `PERF_STRING_BUFFER_HEADER.dwSize`.
pub(crate) const STRING_BUFFER_HEADER_SIZE_AT: usize = 0;
