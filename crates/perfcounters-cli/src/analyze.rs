//! `perfcounters analyze`: PAL threshold files evaluated over logs, written as a self-contained
//! HTML report or JSON.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use clap::{Args, ValueEnum};

use perfcounters::analyze::{analyze_logs, AnalyzeOptions, Interval, Pass, Rules};
use perfcounters::log::{self, parse_relog_time, CounterFilter, LogError, LogReader, OpenOptions};
use perfcounters::names::counter_lang::{looks_like_counter_lang, parse_counter_lang};
use perfcounters::names::NameTable;
use perfcounters::path::CounterPath;

use crate::args::refuse_existing;
use crate::report;

/// What `analyze` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ReportFormat {
    /// One self-contained HTML file (charts, styles and data inline).
    #[default]
    Html,
    /// The report's data as JSON.
    Json,
}

/// `perfcounters analyze` arguments.
#[derive(Args, Debug)]
#[command(
    after_help = "Without --rules, PAL's QuickSystemOverview.xml (built in) is used. \
The threshold code of the rules is read, never run: see docs/analyze.md for the PowerShell subset \
it understands and the semantics of slices, alerts and trends.

Examples:
  perfcounters analyze server.blg -o report.html
  perfcounters analyze day1.csv day2.csv --set PhysicalMemory=64 --format json -o report.json
  perfcounters analyze log.blg --rules SQLServer.xml --interval 300 -b \"2/1/2014 08:00\""
)]
pub struct AnalyzeArgs {
    /// Logs to analyse (PDH-CSV/TSV, .blg, SQL:file!log; wildcards allowed); several are merged
    /// as relog merges them
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<String>,
    /// PAL threshold file (inherited files are read too); repeat for several
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// Answer a question of the rules (e.g. PhysicalMemory=64, OS="Windows 10 64-bit")
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, String)>,
    /// Slice width: seconds, or auto (PAL's: the log's duration in whole seconds / 30, rounded half to
    /// even; never below the sample interval)
    #[arg(long, value_name = "SECONDS|auto", default_value = "auto", value_parser = parse_interval)]
    pub interval: Interval,
    /// Name tables for a localized log (PerfStringBackup.INI, REG_MULTI_SZ or text dump, or PAL's
    /// CounterLang.xml): the log's names match the rules' English ones
    #[arg(long = "names", value_name = "FILE")]
    pub names: Vec<PathBuf>,
    /// Only these counters of the log (wildcards as in relog -c)
    #[arg(short = 'c', long = "counter", value_name = "PATH")]
    pub counters: Vec<String>,
    /// Begin at this time (as relog -b: M/d/yyyy HH:mm:ss, the log's local time)
    #[arg(short = 'b', long = "begin", value_name = "TIME")]
    pub begin: Option<String>,
    /// End at this time (as relog -e)
    #[arg(short = 'e', long = "end", value_name = "TIME")]
    pub end: Option<String>,
    /// Report format
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    pub format: ReportFormat,
    /// Write the report here instead of standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists
    #[arg(short = 'y', long = "overwrite")]
    pub overwrite: bool,
    /// ANSI code page of text logs without a byte-order mark (default 1252)
    #[arg(long = "code-page", value_name = "N")]
    pub code_page: Option<u16>,
}

fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_owned(), v.to_owned())),
        _ => Err(format!("`{s}` is not NAME=VALUE")),
    }
}

fn parse_interval(s: &str) -> Result<Interval, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(Interval::Auto);
    }
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(Interval::Seconds(n)),
        _ => Err(format!(
            "`{s}` is not a whole number of seconds (at least 1) or auto"
        )),
    }
}

/// Opens the logs with the library's opener (content first, name second) for `pass`: for
/// [`Pass::Times`] their records' times alone; for [`Pass::Values`] whole, printing what their
/// readers stepped over.
fn open_logs(
    logs: &[String],
    code_page: Option<u16>,
    pass: Pass,
) -> Result<Vec<Box<dyn LogReader>>, LogError> {
    let values = pass == Pass::Values;
    let options = OpenOptions::default()
        .with_code_page(code_page)
        .with_times_only(!values);
    let mut out = Vec::new();
    for l in logs {
        for reader in log::open(l, &options)? {
            if values {
                for w in reader.warnings() {
                    eprintln!("perfcounters: warning: {w}");
                }
            }
            out.push(reader);
        }
    }
    if out.is_empty() {
        return Err(LogError::usage("analyze", "no log to analyse"));
    }
    Ok(out)
}

/// `--names`: (the log's tables, English tables besides the built-in one).
fn load_names(
    files: &[PathBuf],
    code_page: Option<u16>,
) -> Result<(Vec<NameTable>, Vec<NameTable>)> {
    let mut names = Vec::new();
    let mut english = Vec::new();
    for f in files {
        let bytes =
            std::fs::read(f).with_context(|| format!("cannot read name table {}", f.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        if looks_like_counter_lang(&text) {
            let tables = parse_counter_lang(&text).map_err(|e| anyhow!("{}: {e}", f.display()))?;
            for t in tables {
                if t.locale.eq_ignore_ascii_case("enUS") {
                    english.push(t.names);
                } else {
                    names.push(t.names);
                }
            }
        } else {
            names.extend(
                crate::args::values::load_tables(std::slice::from_ref(f), code_page)?
                    .into_iter()
                    .skip(1),
            );
        }
    }
    Ok((names, english))
}

/// Runs `analyze`.
pub fn run(args: &AnalyzeArgs) -> Result<()> {
    if let Some(o) = &args.output {
        refuse_existing(o, args.overwrite, "--overwrite (-y)")?;
    }
    let rules = if args.rules.is_empty() {
        Rules::builtin()
    } else {
        let mut rules: Option<Rules> = None;
        for f in &args.rules {
            let r = Rules::load(f)?;
            match &mut rules {
                Some(all) => all.extend(r),
                None => rules = Some(r),
            }
        }
        rules.unwrap_or_default()
    };
    let time = |flag: &str, v: &Option<String>| -> Result<_> {
        v.as_deref()
            .map(|s| parse_relog_time(s).map_err(|e| anyhow!("invalid time for -{flag}: {e}")))
            .transpose()
    };
    let mut patterns = Vec::new();
    for p in &args.counters {
        patterns.push(CounterPath::parse(p).map_err(|e| anyhow!("invalid counter path {p}: {e}"))?);
    }
    let (names, english) = load_names(&args.names, args.code_page)?;
    let mut tables = Vec::new();
    if !names.is_empty() {
        tables.push(NameTable::builtin_english().clone());
        tables.extend(english.iter().cloned());
        tables.extend(names.iter().cloned());
    }
    let opts = AnalyzeOptions {
        interval: args.interval,
        set: args.set.clone(),
        counters: (!patterns.is_empty()).then(|| CounterFilter::new(patterns).with_names(tables)),
        names,
        english,
        begin: time("b", &args.begin)?,
        end: time("e", &args.end)?,
    };
    // With `--interval auto` the logs are opened twice: for their times, then for the analysis.
    let mut logs: Vec<String> = Vec::new();
    let open = |pass: Pass| {
        let inputs = open_logs(&args.logs, args.code_page, pass)?;
        if pass == Pass::Values {
            logs = inputs.iter().map(|r| r.header().source.clone()).collect();
        }
        Ok(inputs)
    };
    let result = analyze_logs(open, &rules, &opts)?;
    let text = match args.format {
        ReportFormat::Json => {
            let mut s = serde_json::to_string_pretty(&report::json(&result, &logs, &rules))?;
            s.push('\n');
            s
        }
        ReportFormat::Html => report::html(&result, &logs, &rules),
    };
    match &args.output {
        Some(o) => {
            std::fs::write(o, text).with_context(|| format!("cannot write {}", o.display()))?
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}
