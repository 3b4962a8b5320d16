//! PerfLib V2 consumer blocks (`PERF_DATA_HEADER`).
