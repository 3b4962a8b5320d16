//! `watch` (and typeperf's collection): add the counter paths to a query, collect at an interval and
//! write one row per collection.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use chrono::{DateTime, FixedOffset, Local, TimeZone};
use perfcounters::format::blg::TimeZoneInformation;
use perfcounters::query::{ExpandError, Query, QueryCounter};
use perfcounters::snapshot::unix_time_from_filetime;
use perfcounters::FormatOptions;

use crate::args::values::read_counter_file;
use crate::args::{refuse_existing, OutputFormat, WatchOptions};
use crate::collect;
use crate::output::Output;

/// The counters `watch` shows when no path is given.
pub const DEFAULT_COUNTERS: &[&str] = &[
    r"\Processor(_Total)\% Processor Time",
    r"\Processor(_Total)\% User Time",
    r"\Processor(_Total)\% Privileged Time",
    r"\System\Processor Queue Length",
    r"\System\Context Switches/sec",
    r"\Memory\Available MBytes",
    r"\Memory\% Committed Bytes In Use",
    r"\Memory\Page Faults/sec",
    r"\PhysicalDisk(_Total)\Disk Transfers/sec",
    r"\PhysicalDisk(_Total)\Disk Bytes/sec",
    r"\PhysicalDisk(_Total)\% Disk Time",
    r"\Network Interface(*)\Bytes Total/sec",
];

/// How long (in the data's time, 100 ns units) `watch` keeps an expansion of wildcard paths: the
/// first collection due this long after it expands them again. An expansion collects a whole
/// snapshot; the collections between read a replay of V1 block files in place.
const EXPAND_EVERY: i64 = 10 * 10_000_000;

/// When wildcards are expanded again: the times of the last two collections and of the last
/// expansion.
#[derive(Debug, Default)]
struct Schedule {
    expanded_at: i64,
    times: Option<(i64, i64)>,
}

impl Schedule {
    /// Whether the next collection expands: the second collection (the first with a row) does,
    /// and then the first one foreseen (from the last two collections' times) [`EXPAND_EVERY`]
    /// after the last expansion.
    fn due(&self) -> bool {
        self.times.is_some_and(|(before, last)| {
            before == last
                || last.saturating_add(last.saturating_sub(before).max(0))
                    >= self.expanded_at.saturating_add(EXPAND_EVERY)
        })
    }

    /// A collection at `now` (100 ns), which expanded the paths or not.
    fn collected(&mut self, now: i64, expanded: bool) {
        if expanded {
            self.expanded_at = now;
        }
        self.times = Some(self.times.map_or((now, now), |(_, last)| (last, now)));
    }
}

/// `watch` / typeperf: the first collection primes the counters, each later one prints a row.
pub fn watch(opts: WatchOptions) -> Result<ExitCode> {
    let mut paths = opts.paths.clone();
    if let Some(f) = &opts.counter_file {
        paths.extend(read_counter_file(f)?);
    }
    if paths.is_empty() {
        paths = DEFAULT_COUNTERS.iter().map(|s| s.to_string()).collect();
    }
    let options = if opts.cap {
        FormatOptions::default()
    } else {
        FormatOptions::typeperf()
    };
    let mut query = Query::new(options);
    let mut bad = Vec::new();
    for p in &paths {
        if let Err(e) = query.add(p) {
            bad.push(format!("{p}: {e}"));
        }
    }
    if !bad.is_empty() {
        for b in &bad {
            eprintln!("perfcounters: invalid counter path {b}");
        }
        return Ok(ExitCode::from(2));
    }
    if let Some(p) = &opts.output {
        if opts.format != OutputFormat::Sql {
            let how = if opts.typeperf {
                "-y to overwrite it"
            } else {
                "--overwrite (-y) to overwrite it"
            };
            refuse_existing(p, opts.overwrite, how)?;
        }
    }
    let mut input = collect::open(&opts.replay, opts.names.as_deref())?;
    let output_flag = if opts.typeperf { "-o" } else { "--output" };
    let mut output = Output::new(
        opts.format,
        opts.output.as_deref(),
        opts.overwrite,
        output_flag,
    )?;
    let mut rows = 0u64;
    let mut next = Instant::now();
    let mut primed = false;
    // The paths and the catalog stay the same: one request.
    let request = input.request(&mut query)?;
    // Wildcards are expanded again (re-running PdhExpandWildCardPath, as it were) so that a process
    // that starts gets its counters and one that exits loses them: at the first collection due
    // EXPAND_EVERY after the last expansion, in the data's time.
    let reexpand = query.paths().iter().any(|p| p.has_wildcard());
    let mut schedule = Schedule::default();
    loop {
        let due = schedule.due();
        let collection = if reexpand && due {
            input.collect_expanded(&mut query, &request)?
        } else {
            input.collect(&mut query, &request)?
        };
        let Some(collection) = collection else {
            break;
        };
        schedule.collected(
            collection.clock.perf_time_100ns,
            !primed || (reexpand && due),
        );
        let local_time = local_time_of(collection.clock.perf_time_100ns, input.zone());
        if !primed {
            primed = true;
            // A missing instance may appear (a process that starts): its column stays and
            // waits. An unknown object or counter will not.
            let fatal = |c: &QueryCounter| {
                c.error
                    .as_ref()
                    .is_some_and(|e| !matches!(e, ExpandError::NoInstance { .. }))
            };
            if query.counters().iter().all(fatal) {
                let mut text = String::from("no valid counters:");
                for e in query.errors() {
                    text.push_str(&format!("\n  {e}"));
                }
                eprintln!("perfcounters: {text}");
                return Ok(ExitCode::FAILURE);
            }
            for e in query.errors() {
                eprintln!("perfcounters: {e}");
            }
            // The first collection expands the query, from a snapshot.
            let snapshot = collection.snapshot.unwrap_or_default();
            output.header(&query, &snapshot, &local_time, query.values())?;
        } else {
            output.row(&query, &local_time, query.values())?;
            rows += 1;
            if opts.samples.is_some_and(|n| rows >= n) {
                break;
            }
        }
        if !input.is_replay() {
            next += opts.interval;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else {
                next = now;
            }
        }
    }
    output.finish()?;
    if opts.typeperf && opts.samples.is_some() {
        let mut out = std::io::stdout().lock();
        write!(
            out,
            "Exiting, please wait...\r\nThe command completed successfully.\r\n"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The local time of a collection's 100 ns FILETIME (`PerfTime100nSec`, UTC): in the zone of a
/// replayed log (its own rules, daylight saving time included, as relog shows it), else the
/// viewer's.
fn local_time_of(
    perf_time_100ns: i64,
    zone: Option<&TimeZoneInformation>,
) -> DateTime<FixedOffset> {
    let (secs, nanos) = unix_time_from_filetime(perf_time_100ns);
    let viewer = || {
        Local
            .timestamp_opt(secs, nanos)
            .single()
            .unwrap_or_else(Local::now)
            .fixed_offset()
    };
    match zone {
        Some(z) => FixedOffset::west_opt(z.bias_at_utc(perf_time_100ns).saturating_mul(60))
            .and_then(|o| o.timestamp_opt(secs, nanos).single())
            .unwrap_or_else(viewer),
        None => viewer(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collections (0-based) that expand, for collections `gap` seconds apart.
    fn expanding(gap: i64, n: usize) -> Vec<usize> {
        let mut schedule = Schedule::default();
        let mut out = Vec::new();
        for i in 0..n {
            let due = i == 0 || schedule.due();
            if due {
                out.push(i);
            }
            schedule.collected(i as i64 * gap * 10_000_000, due);
        }
        out
    }

    #[test]
    fn wildcards_expand_again_every_ten_seconds_of_data() {
        // The priming collection, the second, then every 10 s.
        assert_eq!(expanding(1, 25), [0, 1, 11, 21]);
        assert_eq!(expanding(3, 12), [0, 1, 5, 9]);
        // 10 s or more apart: every collection.
        assert_eq!(expanding(60, 4), [0, 1, 2, 3]);
        assert_eq!(expanding(10, 3), [0, 1, 2]);
    }
}
