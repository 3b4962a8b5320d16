//! Buffer growth and retries around the Windows calls that fill a caller's buffer.
//!
//! These rules are ordinary code, separate from the system calls, so they are tested everywhere with
//! injected results.

use std::time::Duration;

use super::codes::{ERROR_BUSY, ERROR_MORE_DATA, ERROR_NOT_ENOUGH_MEMORY, ERROR_SUCCESS};
use crate::source::{SourceError, SourceErrorKind};

/// How buffers grow and how often a busy call is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrowPolicy {
    /// The first buffer size, in bytes.
    pub initial: usize,
    /// The largest buffer tried; a call that still wants more fails with a clear error.
    pub max: usize,
    /// How many times an `ERROR_BUSY` answer is retried before giving up.
    pub busy_retries: u32,
    /// The pause before each retry of a busy call.
    pub busy_delay: Duration,
}

impl Default for GrowPolicy {
    /// 64 KiB first, doubling up to 512 MiB; five retries 100 ms apart on `ERROR_BUSY`.
    fn default() -> Self {
        GrowPolicy {
            initial: 64 * 1024,
            max: 512 * 1024 * 1024,
            busy_retries: 5,
            busy_delay: Duration::from_millis(100),
        }
    }
}

/// The outcome of one call that fills a buffer: the Win32 status and the size the call reported
/// (bytes written on success, often the size it wanted otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filled {
    /// The Win32 error code (`ERROR_SUCCESS` = 0).
    pub status: u32,
    /// The reported size in bytes.
    pub size: usize,
}

/// Calls `call` with a buffer until it fits, following the registry's rules for
/// `RegQueryValueExW(HKEY_PERFORMANCE_DATA, …)`: `ERROR_MORE_DATA` doubles the buffer (the size the
/// call reports is not trusted: for performance data it is unpredictable), `ERROR_BUSY` is retried
/// after a pause up to [`GrowPolicy::busy_retries`] times, any other error is returned.
///
/// `buf` is reused between calls (its length only grows), so a steady collection allocates once.
/// Returns the number of valid bytes at the start of `buf`. `what` names the call in errors, e.g.
/// `RegQueryValueExW(HKEY_PERFORMANCE_DATA, "238")`.
pub fn fill_doubling(
    buf: &mut Vec<u8>,
    policy: &GrowPolicy,
    what: (&str, &str),
    pause: &mut dyn FnMut(Duration),
    call: &mut dyn FnMut(&mut [u8]) -> Filled,
) -> Result<usize, SourceError> {
    if buf.len() < policy.initial.max(1) {
        buf.resize(policy.initial.max(1), 0);
    }
    fill(
        buf,
        policy,
        what,
        pause,
        call,
        &[ERROR_MORE_DATA],
        &|len, _| (len < policy.max).then(|| len.saturating_mul(2).min(policy.max)),
    )
}

/// Calls `call` with a buffer until it fits, following PerfLib V2's rules: `ERROR_NOT_ENOUGH_MEMORY`
/// means the buffer is too small and the reported size is the size needed. The buffer becomes at
/// least that size and at least twice the previous one (so a size that keeps growing between calls
/// still converges), up to [`GrowPolicy::max`]. `ERROR_BUSY` is retried like [`fill_doubling`].
pub fn fill_reported(
    buf: &mut Vec<u8>,
    policy: &GrowPolicy,
    what: (&str, &str),
    pause: &mut dyn FnMut(Duration),
    call: &mut dyn FnMut(&mut [u8]) -> Filled,
) -> Result<usize, SourceError> {
    let too_small = [ERROR_NOT_ENOUGH_MEMORY, ERROR_MORE_DATA];
    fill(
        buf,
        policy,
        what,
        pause,
        call,
        &too_small,
        &|len, reported| {
            (len < policy.max && reported <= policy.max).then(|| {
                reported
                    .max(len.saturating_mul(2))
                    .max(policy.initial.min(4096))
                    .min(policy.max)
            })
        },
    )
}

/// The loop both growth rules share: success ends it, a `too_small` status resizes the buffer to
/// `next(current length, reported size)` (`None`: past [`GrowPolicy::max`]), `ERROR_BUSY` is retried
/// after a pause up to [`GrowPolicy::busy_retries`] times, any other status is an error.
fn fill(
    buf: &mut Vec<u8>,
    policy: &GrowPolicy,
    what: (&str, &str),
    pause: &mut dyn FnMut(Duration),
    call: &mut dyn FnMut(&mut [u8]) -> Filled,
    too_small: &[u32],
    next: &dyn Fn(usize, usize) -> Option<usize>,
) -> Result<usize, SourceError> {
    let mut busy = 0;
    loop {
        let r = call(buf);
        match r.status {
            ERROR_SUCCESS => return written(r, buf.len(), what),
            code if too_small.contains(&code) => match next(buf.len(), r.size) {
                Some(size) => buf.resize(size, 0),
                None => return Err(too_large(what, policy.max)),
            },
            ERROR_BUSY if busy < policy.busy_retries => {
                busy += 1;
                pause(policy.busy_delay);
            }
            code => return Err(SourceError::os(what.0, code, what.1)),
        }
    }
}

/// The size a successful call wrote, checked against the buffer it was given.
fn written(r: Filled, len: usize, what: (&str, &str)) -> Result<usize, SourceError> {
    if r.size > len {
        return Err(SourceError::new(
            SourceErrorKind::Decode,
            format!(
                "{}({}) reported {} bytes written into a {len}-byte buffer",
                what.0, what.1, r.size
            ),
        ));
    }
    Ok(r.size)
}

fn too_large(what: (&str, &str), max: usize) -> SourceError {
    SourceError::new(
        SourceErrorKind::Unavailable,
        format!(
            "{}({}) still wants a larger buffer at {} MiB; giving up",
            what.0,
            what.1,
            max / (1024 * 1024)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> GrowPolicy {
        GrowPolicy {
            initial: 16,
            max: 256,
            busy_retries: 2,
            busy_delay: Duration::from_millis(7),
        }
    }

    const WHAT: (&str, &str) = ("RegQueryValueExW", "HKEY_PERFORMANCE_DATA, \"238\"");

    #[test]
    fn doubles_until_it_fits_and_ignores_the_reported_size() {
        let mut sizes = Vec::new();
        let mut buf = Vec::new();
        let n = fill_doubling(
            &mut buf,
            &policy(),
            WHAT,
            &mut |_| panic!("no pause"),
            &mut |b| {
                sizes.push(b.len());
                if b.len() < 100 {
                    // The registry reports a size that is too small to be used as is.
                    Filled {
                        status: ERROR_MORE_DATA,
                        size: 20,
                    }
                } else {
                    b[..4].copy_from_slice(b"PERF");
                    Filled {
                        status: 0,
                        size: 90,
                    }
                }
            },
        )
        .unwrap();
        assert_eq!(sizes, [16, 32, 64, 128]);
        assert_eq!(n, 90);
        assert_eq!(&buf[..4], b"PERF");
        // The buffer is kept: the next call starts at 128 bytes.
        let mut calls = 0;
        fill_doubling(&mut buf, &policy(), WHAT, &mut |_| {}, &mut |b| {
            calls += 1;
            assert_eq!(b.len(), 128);
            Filled { status: 0, size: 1 }
        })
        .unwrap();
        assert_eq!(calls, 1);
    }

    #[test]
    fn gives_up_at_the_maximum() {
        let mut buf = Vec::new();
        let mut sizes = Vec::new();
        let e = fill_doubling(&mut buf, &policy(), WHAT, &mut |_| {}, &mut |b| {
            sizes.push(b.len());
            Filled {
                status: ERROR_MORE_DATA,
                size: 0,
            }
        })
        .unwrap_err();
        assert_eq!(sizes, [16, 32, 64, 128, 256]);
        assert_eq!(e.kind(), SourceErrorKind::Unavailable);
        assert_eq!(
            e.to_string(),
            "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"238\") still wants a larger buffer at 0 MiB; giving up"
        );
    }

    #[test]
    fn retries_busy_a_bounded_number_of_times() {
        let mut buf = Vec::new();
        let mut pauses = Vec::new();
        let mut answers = vec![
            Filled { status: 0, size: 3 },
            Filled {
                status: ERROR_BUSY,
                size: 0,
            },
            Filled {
                status: ERROR_BUSY,
                size: 0,
            },
        ];
        let n = fill_doubling(
            &mut buf,
            &policy(),
            WHAT,
            &mut |d| pauses.push(d),
            &mut |_| answers.pop().unwrap(),
        )
        .unwrap();
        assert_eq!(n, 3);
        assert_eq!(pauses, [Duration::from_millis(7); 2]);

        let mut calls = 0;
        let e = fill_doubling(&mut buf, &policy(), WHAT, &mut |_| {}, &mut |_| {
            calls += 1;
            Filled {
                status: ERROR_BUSY,
                size: 0,
            }
        })
        .unwrap_err();
        assert_eq!(calls, 3);
        assert_eq!(e.kind(), SourceErrorKind::Os);
        assert_eq!(
            e.to_string(),
            "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"238\"): error 170 (busy)"
        );
    }

    #[test]
    fn other_errors_and_impossible_sizes_are_reported() {
        let mut buf = Vec::new();
        let e = fill_doubling(&mut buf, &policy(), WHAT, &mut |_| {}, &mut |_| Filled {
            status: 5,
            size: 0,
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"238\"): error 5 (access denied)"
        );
        let e = fill_doubling(&mut buf, &policy(), WHAT, &mut |_| {}, &mut |_| Filled {
            status: 0,
            size: 1000,
        })
        .unwrap_err();
        assert_eq!(e.kind(), SourceErrorKind::Decode);
    }

    #[test]
    fn perflib_growth_uses_the_reported_size_as_a_floor() {
        let mut buf = Vec::new();
        let mut sizes = Vec::new();
        let what = ("PerfQueryCounterData", "");
        let n = fill_reported(&mut buf, &policy(), what, &mut |_| {}, &mut |b| {
            sizes.push(b.len());
            match b.len() {
                0 => Filled {
                    status: ERROR_NOT_ENOUGH_MEMORY,
                    size: 40,
                },
                // The data grew between the calls.
                40 => Filled {
                    status: ERROR_NOT_ENOUGH_MEMORY,
                    size: 48,
                },
                _ => Filled {
                    status: 0,
                    size: 48,
                },
            }
        })
        .unwrap();
        assert_eq!(sizes, [0, 40, 80]);
        assert_eq!(n, 48);
        let e = fill_reported(&mut Vec::new(), &policy(), what, &mut |_| {}, &mut |_| {
            Filled {
                status: ERROR_NOT_ENOUGH_MEMORY,
                size: 1 << 20,
            }
        })
        .unwrap_err();
        assert_eq!(e.kind(), SourceErrorKind::Unavailable);
        let e = fill_reported(&mut Vec::new(), &policy(), what, &mut |_| {}, &mut |_| {
            Filled {
                status: 120,
                size: 0,
            }
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "PerfQueryCounterData: error 120 (function not implemented)"
        );
    }
}
