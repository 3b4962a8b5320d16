//! V1 performance data blocks (`PERF_DATA_BLOCK`).
