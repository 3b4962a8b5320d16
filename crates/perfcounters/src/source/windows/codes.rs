//! The Win32 error codes the Windows sources act on.

/// `ERROR_SUCCESS`.
pub const ERROR_SUCCESS: u32 = 0;
/// `ERROR_NOT_ENOUGH_MEMORY`: PerfLib V2's "buffer too small".
pub const ERROR_NOT_ENOUGH_MEMORY: u32 = 8;
/// `ERROR_CALL_NOT_IMPLEMENTED`.
#[cfg(windows)]
pub const ERROR_CALL_NOT_IMPLEMENTED: u32 = 120;
/// `ERROR_BUSY`: the performance library is busy; retry.
pub const ERROR_BUSY: u32 = 170;
/// `ERROR_MORE_DATA`: the registry's "buffer too small".
pub const ERROR_MORE_DATA: u32 = 234;
