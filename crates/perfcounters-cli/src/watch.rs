//! `watch` (and typeperf's collection): add the counter paths to a query, collect at an interval and
//! write one row per collection.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use chrono::{DateTime, FixedOffset, Local, TimeZone};
use perfcounters::format::blg::TimeZoneInformation;
use perfcounters::query::{LiveQuery, Query};
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

/// `watch` / typeperf: the first collection primes the counters, each later one prints a row.
pub fn watch(opts: WatchOptions) -> Result<ExitCode> {
    let mut paths = opts.paths.clone();
    if let Some(f) = &opts.counter_file {
        paths.extend(read_counter_file(f)?);
    }
    // A replay without paths shows what it recorded; the live machine, the default set.
    let mut input = collect::open(&opts.replay, opts.names.as_deref())?;
    if paths.is_empty() {
        paths = if input.is_replay() {
            input.every_counter()?
        } else {
            DEFAULT_COUNTERS.iter().map(|s| s.to_string()).collect()
        };
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
    // that starts gets its counters and one that exits loses them ([`LiveQuery`]).
    let mut live = LiveQuery::new(query);
    loop {
        let Some(collection) = input.collect(&mut live, &request)? else {
            break;
        };
        let query = live.query();
        let local_time = local_time_of(collection.clock.perf_time_100ns, input.zone());
        if !primed {
            primed = true;
            // A missing instance may appear (a process that starts): its column stays and
            // waits. An unknown object or counter will not.
            if query.none_usable() {
                eprintln!("perfcounters: {}", query.none_usable_message());
                return Ok(ExitCode::FAILURE);
            }
            for e in query.errors() {
                eprintln!("perfcounters: {e}");
            }
            // The first collection expands the query, from a snapshot.
            let snapshot = collection.snapshot.unwrap_or_default();
            output.header(query, &snapshot, &local_time, query.values())?;
        } else {
            output.row(query, &local_time, query.values())?;
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
