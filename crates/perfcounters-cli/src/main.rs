//! The `perfcounters` command: list, watch and decode performance counters, typeperf-compatible.

mod capture;
mod collect;
mod decode;
mod decode_blg;
mod interval;
mod output;
mod relog;
mod serve;
mod typeperf;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use perfcounters::query::Query;
use perfcounters::FormatOptions;

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

#[derive(Parser, Debug)]
#[command(
    name = "perfcounters",
    version,
    about = "List, watch and decode performance counters the way typeperf does, on Linux and Windows",
    after_help = "Counter paths look like \\\\Machine\\Object(Parent/Instance#Index)\\Counter; the machine is optional \
and * is a wildcard in the instance and counter parts. Run `perfcounters list` to see what is available."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List counter paths, one per line (like typeperf -q / -qx)
    List(ListArgs),
    /// Sample counters at an interval and print their values (like typeperf)
    Watch(WatchArgs),
    /// Save raw performance data of this machine (Windows) to a directory that replays anywhere
    Capture(capture::CaptureArgs),
    /// Convert, filter, merge and summarize counter logs (PDH-CSV/TSV, binary .blg, SQL), relog-compatible
    /// (-a -c -cf -f -t -o -b -e -config -q -y; --names, --code-page, --stats)
    #[command(disable_help_flag = true)]
    Relog {
        /// relog arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Decode a raw V1 (PERF_DATA_BLOCK) or V2 (PERF_DATA_HEADER) block file, a binary log (.blg), or every sample of a capture directory
    Decode(decode::DecodeArgs),
    /// Serve counters to Prometheus (/metrics) and as a live chart in the browser (/)
    Serve(serve::ServeArgs),
    /// typeperf-compatible command line (-cf, -si, -sc, -f, -o, -q, -qx, -y, -config)
    #[command(disable_help_flag = true)]
    Typeperf {
        /// typeperf arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(clap::Args, Debug)]
struct ListArgs {
    /// Only this object (case-insensitive)
    object: Option<String>,
    /// List every instance instead of (*)
    #[arg(long, short = 'x')]
    instances: bool,
    /// List from recorded raw block files, or a capture directory, instead of the live machine
    #[arg(long, num_args = 1.., value_name = "FILE|DIR")]
    replay: Vec<PathBuf>,
    /// Name table for replayed blocks (REG_MULTI_SZ dump or `index name` text)
    #[arg(long, value_name = "FILE")]
    names: Option<PathBuf>,
}

/// Output formats of `watch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// A live table refreshed in place (the default on a terminal)
    Table,
    /// PDH-CSV 4.0, byte for byte as typeperf writes it (the default otherwise)
    #[default]
    Csv,
    /// PDH-TSV 4.0
    Tsv,
    /// One JSON object per row
    Json,
    /// A SQL log (DisplayToID, CounterDetails, CounterData) in SQLite: --output SQL:file.db!logname
    Sql,
}

#[derive(clap::Args, Debug)]
struct WatchArgs {
    /// Counter paths (wildcards allowed); default: a useful system overview
    paths: Vec<String>,
    /// File with counter paths, one per line
    #[arg(long, short = 'c', value_name = "FILE")]
    counter_file: Option<PathBuf>,
    /// Time between samples: 1s, 500ms, 2m, or [[hh:]mm:]ss
    #[arg(long, short = 'i', default_value = "1s", value_parser = interval::parse_interval)]
    interval: Duration,
    /// Number of rows to print (the priming collection is not counted); default: until interrupted
    #[arg(long, short = 'n')]
    samples: Option<u64>,
    /// Output format (default: table on a terminal, csv otherwise)
    #[arg(long, short = 'f', value_enum)]
    format: Option<OutputFormat>,
    /// Write to this file instead of standard output (SQL:file.db!logname for --format sql)
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Read recorded V1 block files (one per collection, in order, without sleeping), or a capture
    /// directory (V1 and V2 samples), instead of live data
    #[arg(long, num_args = 1.., value_name = "FILE|DIR")]
    replay: Vec<PathBuf>,
    /// Name table for replayed block files (REG_MULTI_SZ dump or `index name` text); captures carry their own
    #[arg(long, value_name = "FILE")]
    names: Option<PathBuf>,
    /// Cap percentages at 100 like PDH's default (typeperf does not)
    #[arg(long)]
    cap: bool,
}

/// Everything `watch` (and typeperf) needs.
#[derive(Debug, Default, PartialEq)]
pub struct WatchOptions {
    /// Counter paths.
    pub paths: Vec<String>,
    /// A file of counter paths.
    pub counter_file: Option<PathBuf>,
    /// Sample interval.
    pub interval: Duration,
    /// Rows to print.
    pub samples: Option<u64>,
    /// Output format.
    pub format: OutputFormat,
    /// Output file.
    pub output: Option<PathBuf>,
    /// Overwrite an existing output file without asking (typeperf -y).
    pub overwrite: bool,
    /// typeperf framing: closing messages and the "No valid counters" error text.
    pub typeperf: bool,
    /// Replay files.
    pub replay: Vec<PathBuf>,
    /// Name table for replays.
    pub names: Option<PathBuf>,
    /// Cap percentages at 100.
    pub cap: bool,
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let invoked_as_typeperf = argv
        .first()
        .and_then(|a| {
            std::path::Path::new(a)
                .file_stem()
                .map(|s| s.to_string_lossy().to_ascii_lowercase())
        })
        .is_some_and(|s| s == "typeperf");
    let result = if invoked_as_typeperf {
        run_typeperf(&argv[1..])
    } else {
        let cli = match Cli::try_parse() {
            Ok(c) => c,
            Err(e) => {
                let _ = e.print();
                return if e.use_stderr() {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
        };
        run(cli)
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("perfcounters: {}", report(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by `": "`, leaving out a cause whose text is already part of the
/// report: the library's errors quote their cause in their own message and also return it from
/// `source()`, for callers that want the typed error.
fn report(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::List(a) => {
            let mut out = std::io::stdout().lock();
            list(
                &mut out,
                a.object.as_deref(),
                a.instances,
                &a.replay,
                a.names.as_deref(),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Watch(a) => {
            let format = a.format.unwrap_or_else(|| {
                use std::io::IsTerminal;
                if a.output.is_none() && std::io::stdout().is_terminal() {
                    OutputFormat::Table
                } else {
                    OutputFormat::Csv
                }
            });
            watch(WatchOptions {
                paths: a.paths,
                counter_file: a.counter_file,
                interval: a.interval,
                samples: a.samples,
                format,
                output: a.output,
                overwrite: true,
                typeperf: false,
                replay: a.replay,
                names: a.names,
                cap: a.cap,
            })
        }
        Command::Capture(a) => capture::run(&a).map(|()| ExitCode::SUCCESS),
        Command::Decode(a) => decode::run(&a),
        Command::Serve(a) => serve::run(&a).map(|()| ExitCode::SUCCESS),
        Command::Typeperf { args } => run_typeperf(&args),
        Command::Relog { args } => relog::run(&args),
    }
}

fn run_typeperf(args: &[String]) -> Result<ExitCode> {
    match typeperf::parse(args) {
        Ok(typeperf::TypeperfAction::Help) => {
            print!("{}", typeperf::USAGE);
            Ok(ExitCode::SUCCESS)
        }
        Ok(typeperf::TypeperfAction::List {
            object,
            instances,
            output,
        }) => {
            match output {
                Some(p) => {
                    let mut f = std::fs::File::create(&p)
                        .with_context(|| format!("cannot create {}", p.display()))?;
                    list(&mut f, object.as_deref(), instances, &[], None)?;
                }
                None => list(
                    &mut std::io::stdout().lock(),
                    object.as_deref(),
                    instances,
                    &[],
                    None,
                )?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(typeperf::TypeperfAction::Watch(w)) => watch(w),
        Err(e) => {
            eprintln!("Error: {e}");
            Ok(ExitCode::from(2))
        }
    }
}

/// `list`: one counter path per line; `(*)` for objects with instances unless `instances` is set.
fn list(
    out: &mut dyn Write,
    object: Option<&str>,
    instances: bool,
    replay: &[PathBuf],
    names: Option<&std::path::Path>,
) -> Result<()> {
    let mut collector = collect::open(replay, names)?;
    let catalog = collector.catalog(object)?;
    if catalog.is_empty() {
        match object {
            Some(o) => {
                let all = collector.catalog(None)?;
                let names: Vec<&str> = all.iter().map(|e| e.object.as_str()).collect();
                let hint = perfcounters::query::suggest(o, names.into_iter());
                if hint.is_empty() {
                    bail!("no object named \"{o}\"");
                }
                bail!(
                    "no object named \"{o}\"; did you mean {}?",
                    hint.iter()
                        .map(|h| format!("\"{h}\""))
                        .collect::<Vec<_>>()
                        .join(" or ")
                );
            }
            None => bail!("the source offers no counters"),
        }
    }
    let mut buf = String::new();
    for entry in &catalog {
        for counter in &entry.counters {
            match &entry.instances {
                None => buf.push_str(&format!("\\{}\\{}\n", entry.object, counter)),
                Some(list) if instances => {
                    for i in list {
                        buf.push_str(&format!("\\{}({})\\{}\n", entry.object, i, counter));
                    }
                }
                Some(_) => buf.push_str(&format!("\\{}(*)\\{}\n", entry.object, counter)),
            }
        }
    }
    out.write_all(buf.as_bytes())?;
    Ok(())
}

fn read_counter_file(path: &std::path::Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read counter file {}", path.display()))?;
    Ok(text
        .lines()
        .map(|l| l.trim().trim_start_matches('\u{feff}'))
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
        .map(str::to_string)
        .collect())
}

/// `watch` / typeperf: the first collection primes the counters, each later one prints a row.
fn watch(opts: WatchOptions) -> Result<ExitCode> {
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
        if opts.typeperf {
            eprintln!("Error: No valid counters.");
        }
        return Ok(ExitCode::from(2));
    }
    if let Some(p) = &opts.output {
        if opts.format != OutputFormat::Sql && p.exists() && !opts.overwrite {
            bail!("{} already exists; add -y to overwrite it", p.display());
        }
    }
    let mut collector = collect::open(&opts.replay, opts.names.as_deref())?;
    let mut output = Output::new(opts.format, opts.output.as_deref(), opts.overwrite)?;
    let mut rows = 0u64;
    let mut next = Instant::now();
    let mut primed = false;
    loop {
        let Some(snapshot) = collector.collect(&query)? else {
            break;
        };
        let local_time = collect::local_time_of(&snapshot);
        let values = query.update(&snapshot);
        if !primed {
            primed = true;
            for e in query.errors() {
                eprintln!("perfcounters: {e}");
            }
            if query.counters().iter().all(|c| c.error.is_some()) {
                if opts.typeperf {
                    eprintln!("Error: No valid counters.");
                } else {
                    eprintln!("perfcounters: no valid counters");
                }
                return Ok(ExitCode::FAILURE);
            }
            output.header(&query, &snapshot, &local_time, &values)?;
        } else {
            output.row(&query, &local_time, &values)?;
            rows += 1;
            if opts.samples.is_some_and(|n| rows >= n) {
                break;
            }
        }
        if !collector.is_replay() {
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

#[cfg(test)]
mod tests {
    use super::report;
    use anyhow::Context;
    use perfcounters::format::v1::PerfDataBlock;
    use perfcounters::source::SourceError;

    #[test]
    fn report_names_each_cause_once() {
        let decode = PerfDataBlock::parse(&[0; 4]).unwrap_err();
        let e = Err::<(), _>(SourceError::decode("block.bin", decode))
            .context("replay")
            .unwrap_err();
        assert_eq!(
            report(&e),
            "replay: block.bin: PERF_DATA_BLOCK at offset 0: buffer of 4 bytes is shorter than the 88-byte header"
        );
        assert_eq!(e.chain().count(), 3);
    }
}
