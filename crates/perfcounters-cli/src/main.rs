//! The `perfcounters` command: list, watch, capture and decode performance counters; relog, analyze and
//! serve them; typeperf- and relog-compatible.

mod analyze;
mod args;
mod assets;
mod capture;
mod collect;
mod decode;
mod decode_blg;
mod decode_json;
mod gzip;
mod otlp;
mod output;
mod relog;
mod report;
mod serve;
mod table;
mod typeperf;
mod watch;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use crate::args::{OutputFormat, ReplayArgs, WatchOptions};
use crate::watch::watch;

#[derive(Parser, Debug)]
#[command(
    name = "perfcounters",
    version,
    about = "Performance counters the way Windows defines them, on Linux and Windows: list, watch, capture, decode, relog, analyze and serve them",
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
    /// Find what is wrong in logs: PAL threshold files evaluated over time slices, written as a
    /// self-contained HTML report or JSON
    Analyze(analyze::AnalyzeArgs),
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
    #[command(flatten)]
    replay: ReplayArgs,
}

#[derive(clap::Args, Debug)]
struct WatchArgs {
    /// Counter paths (wildcards allowed); default: a useful system overview
    paths: Vec<String>,
    /// File with counter paths, one per line
    #[arg(long, short = 'c', value_name = "FILE")]
    counter_file: Option<PathBuf>,
    // The help is an attribute: `[[hh:]mm:]ss` is not Markdown.
    #[arg(
        long,
        short = 'i',
        default_value = "1s",
        value_parser = args::values::parse_interval,
        help = "Time between samples: 1s, 500ms, 2m, or [[hh:]mm:]ss"
    )]
    interval: Duration,
    /// Number of rows to print (the priming collection is not counted); default: until interrupted
    #[arg(long, short = 'n', value_parser = |s: &str| args::values::parse_count(s, "sample count"))]
    samples: Option<u64>,
    /// Output format (default: table on a terminal, csv otherwise)
    #[arg(long, short = 'f', value_enum)]
    format: Option<OutputFormat>,
    /// Write to this file instead of standard output; its name decides the format: SQL:file.db!logname
    /// is a SQL log, .tsv PDH-TSV, .csv PDH-CSV (a --format that contradicts it is an error)
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    replay: ReplayArgs,
    /// Cap percentages at 100 like PDH's default (typeperf does not)
    #[arg(long)]
    cap: bool,
    /// Replace an existing --output file (or SQL log of the same name)
    #[arg(long, short = 'y')]
    overwrite: bool,
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
            Err(e) if e.use_stderr() => {
                eprint!("{}", clap_error(&e));
                return ExitCode::from(2);
            }
            Err(e) => {
                // --help, --version.
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
        };
        run(cli)
    };
    match result {
        Ok(code) => code,
        // `perfcounters … | head`: the reader is gone; end quietly, as ripgrep does.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfcounters: {}", report(&e));
            ExitCode::FAILURE
        }
    }
}

/// Whether `e` comes from writing to a pipe whose reader has closed it. Rust starts programs with
/// SIGPIPE ignored, so such a write fails with `EPIPE` (an [`std::io::Error`] of kind
/// [`std::io::ErrorKind::BrokenPipe`]) instead of killing the process; the error is found anywhere in
/// the chain of causes. A `serde_json::Error` hides its I/O error from the chain and is asked
/// directly.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(BrokenPipe)
    })
}

/// A command-line error of clap in the style of every other error: `perfcounters: <what is wrong>`,
/// then clap's usage lines and tips.
fn clap_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    format!("perfcounters: {text}")
}

/// Writes `text` to standard output, returning the error that `print!` would panic with.
pub(crate) fn print_out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// The error and its causes joined by `": "`, each once: every error of the library says what
/// failed and where and leaves its cause to `source()`, and a link that repeats an earlier one word
/// for word (another crate's error may display its cause and return it too) is left out.
fn report(e: &anyhow::Error) -> String {
    perfcounters::ErrorChain(e.as_ref()).to_string()
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::List(a) => {
            let mut object = a.object;
            let replay = a.replay.recordings_and_object(&mut object)?;
            let mut out = std::io::stdout().lock();
            list(
                &mut out,
                object.as_deref(),
                a.instances,
                &replay,
                a.replay.names.as_deref(),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Watch(a) => {
            let mut paths = a.paths;
            let replay = a.replay.recordings_and_paths(&mut paths)?;
            let format = match &a.output {
                // An output's kind follows its name: SQL:file.db!log, .csv, .tsv.
                Some(o) => OutputFormat::for_output(o, a.format, OutputFormat::Csv)?,
                None => a.format.unwrap_or_else(|| {
                    use std::io::IsTerminal;
                    if std::io::stdout().is_terminal() {
                        OutputFormat::Table
                    } else {
                        OutputFormat::Csv
                    }
                }),
            };
            watch(WatchOptions {
                paths,
                counter_file: a.counter_file,
                interval: a.interval,
                samples: a.samples,
                format,
                output: a.output,
                overwrite: a.overwrite,
                typeperf: false,
                replay,
                names: a.replay.names,
                cap: a.cap,
            })
        }
        Command::Capture(a) => capture::run(&a).map(|()| ExitCode::SUCCESS),
        Command::Decode(a) => decode::run(&a),
        Command::Analyze(a) => analyze::run(&a).map(|()| ExitCode::SUCCESS),
        Command::Serve(a) => serve::run(&a).map(|()| ExitCode::SUCCESS),
        Command::Typeperf { args } => run_typeperf(&args),
        Command::Relog { args } => relog::run(&args),
    }
}

fn run_typeperf(args: &[String]) -> Result<ExitCode> {
    match typeperf::parse(args) {
        Ok(typeperf::TypeperfAction::Help) => {
            print_out(typeperf::USAGE)?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(typeperf::TypeperfAction::List {
            object,
            instances,
            output,
            overwrite,
        }) => {
            match output {
                Some(p) => {
                    args::refuse_existing(&p, overwrite, "-y to overwrite it")?;
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
            eprintln!("perfcounters: {e}");
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
    let mut input = collect::open(replay, names)?;
    let catalog = input.entries(object)?;
    if catalog.is_empty() {
        bail!("the source offers no counters");
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
