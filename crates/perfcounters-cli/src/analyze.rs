//! `perfcounters analyze`: PAL threshold files evaluated over logs, written as a self-contained
//! HTML report or JSON.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};

use perfcounters::analyze::{
    analyze_fleet_each, analyze_pipeline, builtin_catalogue, check_set, compare, fleet_groups,
    machine_set, set_target, AnalyzeError, CatalogueEntry, CompareError, CompareOptions,
    Comparison, FleetOptions, Interval, MachineLogs, Rules,
};
use perfcounters::log::{parse_relog_time, Pipeline, TimeBound};
use perfcounters::names::NameTables;

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
    after_help = "Without --rules, PAL's QuickSystemOverview.xml (built in) is used. Every threshold \
file of PAL's repository is built in: --rules takes its name (SQLServer2014, any case, .xml or not) \
as well as a path; --list-rules lists them. The threshold code of the rules is read, never run: see docs/analyze.md for the PowerShell subset \
it understands and the semantics of slices, alerts and trends.

Examples:
  perfcounters analyze server.blg -o report.html
  perfcounters analyze day1.csv day2.csv --set PhysicalMemory=64 --format json -o report.json
  perfcounters analyze log.blg --rules SQLServer2014 --interval 300 -b \"2/1/2014 08:00\"
  perfcounters analyze log.blg --rules ./MyThresholds.xml
  perfcounters analyze sick.blg --baseline healthy.blg -o changes.html
  perfcounters analyze web1.blg web2.blg web3.blg --set WEB2:PhysicalMemory=64 -o fleet.html
  perfcounters analyze --list-rules"
)]
pub struct AnalyzeArgs {
    /// Logs to analyse (PDH-CSV/TSV, .blg, SQL:file!log, dataset directories; wildcards allowed);
    /// several of one machine are merged as relog merges them, those of several machines give a
    /// fleet report (one section per machine)
    #[arg(required_unless_present = "list_rules", value_name = "LOG")]
    pub logs: Vec<String>,
    /// PAL threshold file: a path, or the name of a built-in one (SQLServer2014, any case; see
    /// --list-rules); inherited files are read too; repeat for several
    #[arg(long = "rules", value_name = "FILE|NAME")]
    pub rules: Vec<String>,
    /// List the built-in threshold files (name, analyses, what each inherits, title) and exit
    #[arg(long = "list-rules", conflicts_with_all = ["logs", "rules", "baseline"])]
    pub list_rules: bool,
    /// Answer a question of the rules (e.g. PhysicalMemory=64, OS="Windows 10 64-bit"); in a
    /// fleet, MACHINE:NAME=VALUE answers for that machine only
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
    /// Report format (default: from the name of -o, .json for JSON, else HTML)
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Write the report here (default: standard output, except HTML on a terminal, which goes to
    /// report.html, never overwritten without -y)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists
    #[arg(short = 'y', long = "overwrite")]
    pub overwrite: bool,
    /// Logs of a baseline (a time when all was well) to compare the analysed logs with: every
    /// counter (matched by object, instance and counter; the machine ignored) and every analysis;
    /// -c, -b/-e and --names apply to both
    #[arg(long = "baseline", value_name = "LOG", num_args = 1..)]
    pub baseline: Vec<String>,
    /// Merge the logs of several machines into one timeline and one report instead of a fleet
    /// report
    #[arg(long = "merge-machines")]
    pub merge_machines: bool,
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

/// The alerts by condition and the analyses evaluated, for the line printed after the report is
/// written: `3 alerts (2 Critical, 1 Warning) from 55 of 72 analyses`.
fn alert_counts(r: &perfcounters::analyze::Report) -> String {
    let mut by: Vec<(&str, usize)> = Vec::new();
    for a in &r.alerts {
        match by.iter_mut().find(|(c, _)| *c == a.condition) {
            Some(x) => x.1 += 1,
            None => by.push((&a.condition, 1)),
        }
    }
    let n = r.alerts.len();
    let detail = if by.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = by.iter().map(|(c, k)| format!("{k} {c}")).collect();
        format!(" ({})", parts.join(", "))
    };
    format!(
        "{n} alert{}{detail} from {} of {} analyses",
        if n == 1 { "" } else { "s" },
        r.evaluated(),
        r.analyses.len()
    )
}

/// The analysis' error as the command line tells it: a question value or an interval is named by
/// the flag that gave it (`--set NAME=VALUE: …`, `--interval 0: …`).
fn flag_error(e: AnalyzeError) -> anyhow::Error {
    match e {
        AnalyzeError::Question { setting, problem } => anyhow!("--set {setting}: {problem}"),
        AnalyzeError::Interval {
            seconds: Some(s),
            problem,
        } => anyhow!("--interval {s}: {problem}"),
        AnalyzeError::Interval {
            seconds: None,
            problem,
        } => anyhow!("--interval auto: {problem}"),
        other => other.into(),
    }
}

/// `analyze --baseline`: the candidate (`pipeline`) compared with the baseline; the candidate's
/// analysis as without a baseline, the baseline's warnings printed with its name.
fn compared(
    args: &AnalyzeArgs,
    rules: &Rules,
    baseline: &Pipeline,
    pipeline: &Pipeline,
) -> Result<(perfcounters::analyze::AnalyzedLogs, Comparison)> {
    let opts = CompareOptions {
        interval: args.interval,
        set: args.set.clone(),
        charts: report::COMPARISON_CHARTS,
        ..CompareOptions::default()
    };
    let compared = compare(baseline, pipeline, rules, &opts).map_err(|e| match e {
        CompareError::Analyze { side, error } => flag_error(error).context(format!("{side}")),
        CompareError::Inputs { side, error } => {
            anyhow!("{side}: {}", error.message("-c", "--names"))
        }
        other => anyhow!(other.message("--names")),
    })?;
    for w in &compared.baseline.warnings {
        eprintln!("perfcounters: warning: baseline: {w}");
    }
    Ok((compared.candidate, compared.comparison))
}

/// The catalogue of built-in threshold files as a table: name, analyses (own / with inherited,
/// enabled), what the file inherits, title.
fn catalogue_table(entries: &[CatalogueEntry]) -> String {
    let rows: Vec<[String; 5]> = entries
        .iter()
        .map(|e| {
            [
                e.file.strip_suffix(".xml").unwrap_or(e.file).to_owned(),
                e.analyses.to_string(),
                format!("{} ({} enabled)", e.with_inherited, e.enabled),
                if e.inherits.is_empty() {
                    "-".to_owned()
                } else {
                    e.inherits.join(", ")
                },
                e.title.clone(),
            ]
        })
        .collect();
    let head = ["NAME", "OWN", "WITH INHERITED", "INHERITS", "TITLE"].map(str::to_owned);
    let mut widths = [0usize; 5];
    for r in std::iter::once(&head).chain(&rows) {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(&head).chain(&rows) {
        let mut line = String::new();
        for (i, (c, w)) in r.iter().zip(widths).enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else if i == 1 {
                line.push_str(&format!("{c:>w$}  "));
            } else {
                line.push_str(&format!("{c:<w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The report's format: `--format`, else the output's extension (`.json`), else HTML.
fn report_format(args: &AnalyzeArgs) -> ReportFormat {
    args.format.unwrap_or_else(|| {
        let json = args
            .output
            .as_deref()
            .and_then(|o| o.extension())
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if json {
            ReportFormat::Json
        } else {
            ReportFormat::Html
        }
    })
}

/// Where the report goes: `-o`, else standard output, except an HTML page on a terminal, which
/// goes to `report.html` (one already there is kept unless `-y`).
fn report_output(args: &AnalyzeArgs, format: ReportFormat) -> Result<Option<PathBuf>> {
    use std::io::IsTerminal;
    let output = match &args.output {
        Some(o) => Some(o.clone()),
        None if format == ReportFormat::Html && std::io::stdout().is_terminal() => {
            Some(PathBuf::from("report.html"))
        }
        None => None,
    };
    if let Some(o) = &output {
        if o.is_dir() {
            bail!(
                "{} is a directory: name the report's file with -o",
                o.display()
            );
        }
        let how = if args.output.is_none() {
            "-y to overwrite it, or name another file with -o (an HTML report is not written \
             to a terminal)"
        } else {
            "--overwrite (-y)"
        };
        refuse_existing(o, args.overwrite, how)?;
    }
    Ok(output)
}

/// Runs `analyze`.
pub fn run(args: &AnalyzeArgs) -> Result<()> {
    if args.list_rules {
        let text = catalogue_table(&builtin_catalogue()?);
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        return Ok(());
    }
    let format = report_format(args);
    let output = report_output(args, format)?;
    let rules = if args.rules.is_empty() {
        Rules::builtin()
    } else {
        let mut rules: Option<Rules> = None;
        for f in &args.rules {
            let r = Rules::open(f)?;
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
    let names = NameTables::load(&args.names, args.code_page)?;
    let (begin, end) = (time("b", &args.begin)?, time("e", &args.end)?);
    let pipeline_of = |logs: &[String]| {
        Pipeline::new(logs.iter().cloned())
            .code_page(args.code_page)
            .counters(args.counters.iter().cloned())
            .names(names.clone())
            .begin(begin.map(TimeBound::Local))
            .end(end.map(TimeBound::Local))
    };
    let pipeline = pipeline_of(&args.logs);
    let mut set = args.set.clone();
    if args.baseline.is_empty() && !args.merge_machines {
        let groups = fleet_groups(&pipeline)?;
        if groups.len() > 1 {
            return fleet(args, format, &rules, &pipeline, groups, output.as_deref());
        }
        set = one_machine_set(&rules, &args.set, &groups)?;
    } else if let Some((name, _)) = args.set.iter().find(|(n, _)| set_target(n).0.is_some()) {
        return Err(anyhow!(
            "--set {name}: an answer for one machine needs a fleet report (not --merge-machines or --baseline)"
        ));
    }
    let (analyzed, comparison) = if args.baseline.is_empty() {
        let analyzed =
            analyze_pipeline(&pipeline, &rules, args.interval, &set).map_err(flag_error)?;
        (analyzed, None)
    } else {
        let (analyzed, comparison) =
            compared(args, &rules, &pipeline_of(&args.baseline), &pipeline)?;
        (analyzed, Some(comparison))
    };
    pipeline.check_range(analyzed.report.records)?;
    for w in &analyzed.warnings {
        eprintln!("perfcounters: warning: {w}");
    }
    let logs = analyzed.logs;
    let result = analyzed.report;
    let notes = report::notes(&result, &set);
    for n in &notes {
        eprintln!("perfcounters: note: {n}");
    }
    let text = match (format, &comparison) {
        (ReportFormat::Json, _) => {
            let mut json = report::json(&result, &logs, &rules, &notes);
            if let Some(c) = &comparison {
                json = json.with_comparison(c);
            }
            let mut s = serde_json::to_string_pretty(&json)?;
            s.push('\n');
            s
        }
        (ReportFormat::Html, Some(c)) => report::html_compared(&result, &logs, &rules, c, &notes),
        (ReportFormat::Html, None) => report::html(&result, &logs, &rules, &notes),
    };
    if let Some(c) = &comparison {
        for line in report::comparison_lines(c) {
            eprintln!("{line}");
        }
    }
    match &output {
        Some(o) => {
            std::fs::write(o, text).with_context(|| format!("cannot write {}", o.display()))?;
            eprintln!(
                "{}; report written to {}",
                alert_counts(&result),
                o.display()
            );
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}

/// The question answers of a one-machine input: those for all and those for its machine
/// (`MACHINE:` naming another machine is an error).
fn one_machine_set(
    rules: &Rules,
    set: &[(String, String)],
    groups: &[MachineLogs],
) -> Result<Vec<(String, String)>> {
    if !set.iter().any(|(n, _)| set_target(n).0.is_some()) {
        return Ok(set.to_vec());
    }
    let machines: Vec<&str> = groups.iter().map(|g| g.machine.as_str()).collect();
    check_set(rules, set, &machines).map_err(flag_error)?;
    Ok(machines
        .first()
        .map_or_else(Vec::new, |m| machine_set(set, m)))
}

/// `analyze` of the logs of several machines: each machine analysed on its own and its section
/// spooled as soon as it is done (the memory is that of the workers, not of the machines), one
/// line per machine on standard error; then the report, written to `output` or standard output.
fn fleet(
    args: &AnalyzeArgs,
    format: ReportFormat,
    rules: &Rules,
    pipeline: &Pipeline,
    groups: Vec<MachineLogs>,
    output: Option<&Path>,
) -> Result<()> {
    let opts = FleetOptions {
        interval: args.interval,
        set: args.set.clone(),
        workers: 0,
    };
    let machines: Vec<&str> = groups.iter().map(|g| g.machine.as_str()).collect();
    check_set(rules, &opts.set, &machines).map_err(flag_error)?;
    let spool_dir = match output.and_then(Path::parent) {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        Some(_) => PathBuf::from("."),
        None => std::env::temp_dir(),
    };
    let mut page = report::FleetReport::new(format == ReportFormat::Json, &spool_dir)
        .with_context(|| {
            format!(
                "cannot write the report's sections in {}",
                spool_dir.display()
            )
        })?;
    analyze_fleet_each(pipeline, groups, rules, &opts, |m| -> Result<()> {
        if let Ok(a) = &m.result {
            for w in &a.warnings {
                eprintln!("perfcounters: warning: {}: {w}", m.machine);
            }
        }
        page.add(&m, rules)
            .context("cannot write the report's sections")
    })?;
    let summaries = page.summaries();
    if summaries.iter().all(|m| m.failed().is_some()) {
        if let Some(e) = summaries.first().and_then(|m| m.failed()) {
            return Err(anyhow!("no machine could be analysed: {e}"));
        }
    }
    for line in page.lines() {
        eprintln!("{line}");
    }
    match output {
        Some(o) => {
            let file = std::fs::File::create(o)
                .with_context(|| format!("cannot write {}", o.display()))?;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            page.finish(rules, &mut out)
                .with_context(|| format!("cannot write {}", o.display()))?;
            eprintln!("fleet report written to {}", o.display());
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            page.finish(rules, &mut out)?;
        }
    }
    Ok(())
}
