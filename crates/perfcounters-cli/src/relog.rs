//! `perfcounters relog`: relog's command line over the library's log readers, stages and writers.
//!
//! ```text
//! relog <input ...> [-a] [-c <path ...>] [-cf <file>] [-f csv|tsv|sql|parquet] [-t <n>] [-o <file|SQL:db!log|DIR/>]
//!       [-b <M/d/yyyy hh:mm[:ss]>] [-e <M/d/yyyy hh:mm[:ss]>] [-config <file>] [-q] [-y]
//!       [--code-page <n>] [--names <file>] [--stats [table|csv]]
//! relog <input ...> -f otlp [-o <endpoint>] [--otlp-header <k=v>] [--otlp-compression gzip|none]
//!       [--otlp-service-name <name>] [--otlp-resource <k=v>] [--otlp-batch <points>] [--otlp-retry-for <s>]
//! ```
//!
//! Options follow [`crate::args::windows`]: `-` or `/`, case-insensitive, as on Windows.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use perfcounters::encoding::TextEncoding;
use perfcounters::log::{
    self, parse_relog_time, CreateOptions, LogErrorKind, LogFormat, LogSummary, LogTime, LogWriter,
    Pipeline, PipelineError, TimeBound,
};
use perfcounters::names::NameTables;

use crate::args::values::{parse_count, read_counter_file};
use crate::args::windows::{Arg, Lexer};
use crate::args::{OutputFormat, StatsFormat};

/// The usage text, modelled on `relog /?`.
pub const USAGE: &str = "\
Microsoft-compatible Relog: extracts performance counters from logs into other formats, filters them,
merges several logs, and summarizes them.

Usage:
perfcounters relog <input [input ...]> [options]

Parameters:
  <input [input ...]>           PDH-CSV or PDH-TSV files, binary logs (.blg), SQL logs as
                                SQL:file.db!logname (or the database file), Parquet files or
                                dataset directories; recognised by their content, then their name.
                                * and ? in a file name match files.

Options:
  -?                            Displays context sensitive help.
  -a                            Append to the output file (or SQL log) instead of overwriting it.
  -c <path [path ...]>          Counters to keep (wildcards as in watch); the default is all.
  -cf <filename>                File of counters to keep, one per line.
  -f <CSV|TSV|SQL|PARQUET|OTLP> Output format. Default: from the output name (SQL: prefix, .csv,
                                .tsv, .parquet, a directory), else CSV; a format that contradicts
                                the name is an error. Binary logs (.blg) are read, not written.
                                Parquet (compressed long form) goes to -o FILE.parquet,
                                or to -o DIR/ as a dataset DIR/machine=NAME/date=YYYY-MM-DD/
                                part-*.parquet (UTC dates) that later runs add files to.
                                OTLP pushes every value with the log's own times (UTC) to an
                                OpenTelemetry endpoint over OTLP/HTTP (protobuf, /v1/metrics):
                                -o http://collector:4318, else OTEL_EXPORTER_OTLP_ENDPOINT.
  -t <value>                    Keep only every nth record.
  -o <filename|SQL:db!log|DIR/> Output file, SQL log or Parquet dataset. Default: standard output.
  -b <M/d/yyyy hh:mm[:ss]>      Begin: the first time to keep. hh:mm is hours and minutes (00:20
                                is 20 minutes past midnight); also .fff, AM/PM, yyyy-MM-dd[Thh:mm].
  -e <M/d/yyyy hh:mm[:ss]>      End: the last time to keep (same forms).
  -config <filename>            Settings file with command options ([option] lines, value below).
  -q                            List the input's time range, samples and counters.
  -y                            Answer yes to all questions (overwrite the output).
  --code-page <n>               ANSI code page of input files without a BOM that are not UTF-8
                                (default 1252).
  --names <filename>            Name tables (PerfStringBackup.INI, REG_MULTI_SZ dump or `index name`
                                text) so that -c paths match in any of their languages. Repeatable.
  --stats [table|csv]           Print minimum, average and maximum per counter instead of a log.

OTLP options (-f otlp; the OTEL_EXPORTER_OTLP_* variables, OTEL_RESOURCE_ATTRIBUTES and
OTEL_SERVICE_NAME are read, these override them):
  --otlp-header <name=value>    Header of every request (authentication). Repeatable.
  --otlp-compression <gzip|none> Request compression (default gzip).
  --otlp-service-name <name>    service.name of the resource (default perfcounters).
  --otlp-resource <key=value>   Resource attribute. Repeatable.
  --otlp-batch <points>         Data points per request (default 10000).
  --otlp-retry-for <seconds>    How long a request is retried (connection errors, 429, 503)
                                before the push stops with an error (default 60).
";

/// A parsed relog command line.
#[derive(Debug, Default, PartialEq)]
pub struct RelogArgs {
    /// Input logs.
    pub inputs: Vec<String>,
    /// `-a`.
    pub append: bool,
    /// `-c`.
    pub counters: Vec<String>,
    /// `-cf`.
    pub counter_file: Option<PathBuf>,
    /// `-f`.
    pub format: Option<OutputFormat>,
    /// `-t`.
    pub every: u64,
    /// `-o`.
    pub output: Option<String>,
    /// `-b`.
    pub begin: Option<LogTime>,
    /// `-e`.
    pub end: Option<LogTime>,
    /// `-q`.
    pub query: bool,
    /// `-y`.
    pub yes: bool,
    /// `--code-page`.
    pub code_page: Option<u16>,
    /// `--names`.
    pub names: Vec<PathBuf>,
    /// `--stats`.
    pub stats: Option<StatsFormat>,
    /// `-f otlp`: push to an OTLP endpoint (`-o`) instead of writing a log.
    pub otlp: bool,
    /// The `--otlp-*` options.
    pub otlp_flags: crate::otlp::OtlpFlags,
    /// `--otlp-batch`.
    pub otlp_batch: Option<u64>,
    /// `-?`.
    pub help: bool,
}

/// The options relog knows, for "did you mean".
const OPTIONS: &[&str] = &[
    "?",
    "a",
    "b",
    "c",
    "cf",
    "code-page",
    "config",
    "e",
    "f",
    "names",
    "o",
    "otlp-batch",
    "otlp-compression",
    "otlp-header",
    "otlp-resource",
    "otlp-retry-for",
    "otlp-service-name",
    "q",
    "stats",
    "t",
    "y",
];

/// Parses relog arguments (without the program name).
pub fn parse(args: &[String]) -> Result<RelogArgs, String> {
    let mut lexer = Lexer::new("relog", args)?;
    let mut out = RelogArgs {
        every: 1,
        otlp_flags: crate::otlp::OtlpFlags {
            queue: 4,
            ..Default::default()
        },
        ..RelogArgs::default()
    };
    while let Some(arg) = lexer.next() {
        let (name, text) = match arg {
            Arg::Value(v) => {
                out.inputs.push(v);
                continue;
            }
            Arg::Flag { name, text } => (name, text),
        };
        match name.as_str() {
            "?" | "h" | "help" => out.help = true,
            "a" => out.append = true,
            "y" => out.yes = true,
            "q" => out.query = true,
            // The placeholder for the input files in a settings file: they are on the command line.
            "i" => {}
            "c" => out.counters.extend(lexer.values(&text, "counter path")?),
            "cf" => out.counter_file = Some(PathBuf::from(lexer.value(&text)?)),
            "f" => {
                let v = lexer.value(&text)?;
                if v.eq_ignore_ascii_case("otlp") {
                    out.otlp = true;
                } else {
                    out.format = Some(OutputFormat::from_windows(&v, true)?);
                }
            }
            "otlp-header" => out.otlp_flags.headers.push(lexer.value(&text)?),
            "otlp-resource" => out.otlp_flags.resource.push(lexer.value(&text)?),
            "otlp-compression" => out.otlp_flags.compression = Some(lexer.value(&text)?),
            "otlp-service-name" => out.otlp_flags.service_name = Some(lexer.value(&text)?),
            "otlp-batch" => {
                out.otlp_batch = Some(parse_count(&lexer.value(&text)?, "--otlp-batch value")?)
            }
            "otlp-retry-for" => {
                let v = lexer.value(&text)?;
                let secs: f64 = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        format!("invalid --otlp-retry-for value \"{v}\": expected seconds >= 0")
                    })?;
                out.otlp_flags.retry_for = Some(secs);
            }
            "t" => out.every = parse_count(&lexer.value(&text)?, "-t value")?,
            "o" => out.output = Some(lexer.value(&text)?),
            f @ ("b" | "e") => {
                let v = lexer.value(&text)?;
                let t = parse_relog_time(&v).map_err(|e| format!("invalid time for -{f}: {e}"))?;
                if f == "b" {
                    out.begin = Some(t);
                } else {
                    out.end = Some(t);
                }
            }
            "code-page" => {
                let v = lexer.value(&text)?;
                let cp: u16 = v
                    .parse()
                    .map_err(|_| format!("invalid code page \"{v}\""))?;
                if !perfcounters::encoding::code_page_supported(cp) {
                    return Err(format!("code page {cp} is not supported"));
                }
                out.code_page = Some(cp);
            }
            "names" => out.names.push(PathBuf::from(lexer.value(&text)?)),
            "stats" => {
                out.stats = Some(match lexer.optional_value() {
                    None => StatsFormat::Table,
                    Some(v) if v.eq_ignore_ascii_case("table") => StatsFormat::Table,
                    Some(v) if v.eq_ignore_ascii_case("csv") => StatsFormat::Csv,
                    // An input after --stats.
                    Some(v) => {
                        out.inputs.push(v);
                        StatsFormat::Table
                    }
                });
            }
            _ => return Err(lexer.unknown(&text, OPTIONS)),
        }
    }
    if out.help {
        return Ok(out);
    }
    if out.inputs.is_empty() {
        return Err(
            "no input log: name PDH-CSV/TSV or binary (.blg) files or SQL:file.db!log".into(),
        );
    }
    if let (Some(b), Some(e)) = (out.begin, out.end) {
        if b > e {
            return Err(format!("-b {b} is after -e {e}"));
        }
    }
    Ok(out)
}

/// Opens the output: the log `output` names (its kind follows its name), or standard output.
fn open_output(args: &RelogArgs) -> Result<Box<dyn LogWriter>> {
    let format = match args.format {
        None => None,
        Some(f) => Some(
            f.log_format()
                .ok_or_else(|| anyhow!("relog writes CSV, TSV, SQL or Parquet logs, not {f:?}"))?,
        ),
    };
    match args.output.as_deref() {
        Some(o) => {
            let options = CreateOptions::default()
                .with_format(format)
                .with_append(args.append)
                .with_overwrite(args.yes);
            log::create(o, &options).map_err(|e| match e.kind {
                // A Parquet file is written whole: it cannot be appended to.
                LogErrorKind::Exists
                    if format.or_else(|| LogFormat::from_name(o)) == Some(LogFormat::Parquet) =>
                {
                    anyhow!("{o} already exists; add -y to overwrite it")
                }
                LogErrorKind::Exists => {
                    anyhow!("{o} already exists; add -y to overwrite it or -a to append to it")
                }
                _ => e.into(),
            })
        }
        None => {
            let format = format.unwrap_or(LogFormat::Csv);
            if format == LogFormat::Sql {
                bail!("SQL output needs -o SQL:file.db!logname");
            }
            if format == LogFormat::Parquet {
                bail!("Parquet output needs -o FILE.parquet (one file) or -o DIR/ (a dataset)");
            }
            Ok(log::create_stream(
                std::io::BufWriter::new(std::io::stdout()),
                format,
                "standard output",
            )?)
        }
    }
}

/// Runs relog.
pub fn run(argv: &[String]) -> Result<ExitCode> {
    let args = match parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("perfcounters: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if args.help {
        crate::print_out(USAGE)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut paths = args.counters.clone();
    if let Some(f) = &args.counter_file {
        paths.extend(read_counter_file(f)?);
    }
    // Name tables serve counter paths only, but a file given is read (a missing one is an error).
    let names = NameTables::load(&args.names, args.code_page)?;
    let pipeline = Pipeline::new(args.inputs.iter().cloned())
        .code_page(args.code_page)
        .counters(paths)
        .names(names)
        .begin(args.begin.map(TimeBound::Local))
        .end(args.end.map(TimeBound::Local))
        .every(args.every);
    let mut opened = match pipeline.open() {
        Ok(o) => o,
        Err(e) => {
            for w in e.warnings() {
                eprintln!("perfcounters: warning: {w}");
            }
            match e {
                PipelineError::NoMatch { .. } => bail!(e.message("-c / -cf", "--names")),
                e => return Err(e.into()),
            }
        }
    };
    for w in opened.warnings() {
        eprintln!("perfcounters: warning: {w}");
    }
    for p in opened.unmatched() {
        eprintln!("perfcounters: warning: {}", p.message("--names"));
    }
    let files: Vec<(String, String)> = opened
        .logs()
        .iter()
        .map(|l| {
            let kind = match l.encoding {
                Some(e @ TextEncoding::CodePage(_)) => format!("{}, {}", l.kind, e.describe()),
                _ => l.kind.to_string(),
            };
            (l.source.clone(), kind)
        })
        .collect();
    let mut out = std::io::stdout().lock();
    let print_inputs = |out: &mut dyn Write| -> std::io::Result<()> {
        write!(out, "\r\nInput\r\n----------------\r\nFile(s):\r\n")?;
        for (f, kind) in &files {
            write!(out, "     {f} ({kind})\r\n")?;
        }
        write!(out, "\r\n")
    };
    let print_range = |out: &mut dyn Write, s: &LogSummary| -> std::io::Result<()> {
        let t = |t: Option<LogTime>| t.map_or_else(String::new, |t| t.to_string());
        write!(
            out,
            "Begin:    {}\r\nEnd:      {}\r\nSamples:  {}\r\n\r\n",
            t(s.begin),
            t(s.end),
            s.samples
        )
    };
    if args.query {
        let s = opened.summary()?;
        pipeline.check_range(s.samples)?;
        print_inputs(&mut out)?;
        print_range(&mut out, &s)?;
        for c in &s.counters {
            write!(out, "{c}\r\n")?;
        }
        write!(out, "\r\nThe command completed successfully.\r\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(fmt) = args.stats {
        let stats = opened.statistics()?;
        print_stats(&mut out, &stats, fmt)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.otlp {
        return push_otlp(&args, &mut opened, &mut out, &print_inputs, &print_range);
    }
    let mut writer = open_output(&args)?;
    let summary = opened.copy_into(&mut *writer)?;
    if let Some(o) = &args.output {
        print_inputs(&mut out)?;
        write!(out, "Output\r\n----------------\r\nFile:     {o}\r\n\r\n")?;
        print_range(&mut out, &summary)?;
        write!(out, "The command completed successfully.\r\n")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `-f otlp`: the pipeline's records pushed to the endpoint; what was delivered is printed, and a
/// push that could not deliver everything fails saying how much was.
fn push_otlp(
    args: &RelogArgs,
    opened: &mut perfcounters::log::Opened,
    out: &mut dyn Write,
    print_inputs: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    print_range: &dyn Fn(&mut dyn Write, &LogSummary) -> std::io::Result<()>,
) -> Result<ExitCode> {
    use crate::otlp::delivery::{Delivery, RelogSink, WhenFull};
    use crate::otlp::{process_env, OtlpSettings};
    use perfcounters::export::otlp::OtlpLogWriter;
    if args.append {
        bail!("-a applies to log files, not to -f otlp");
    }
    let mut settings =
        OtlpSettings::resolve(args.output.as_deref(), &args.otlp_flags, &process_env)?;
    // The resource describes the log's machine (its paths name it), not this one.
    settings.resource.os_type = None;
    settings.resource.host_name = settings
        .resource
        .attributes
        .iter()
        .find(|(k, _)| k == "host.name")
        .map(|(_, v)| v.clone());
    let ca = process_env("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE")
        .or_else(|| process_env("OTEL_EXPORTER_OTLP_CERTIFICATE"));
    let delivery = Delivery::start(&settings, WhenFull::Wait, true, ca.as_deref())?;
    let batch = usize::try_from(args.otlp_batch.unwrap_or(10_000)).unwrap_or(usize::MAX);
    let mut writer = OtlpLogWriter::new(
        RelogSink::new(delivery),
        settings.resource.clone(),
        "perfcounters",
        batch,
    );
    let summary = opened.copy_into(&mut writer)?;
    let stats = writer.sink().stats();
    print_inputs(out)?;
    write!(
        out,
        "Output\r\n----------------\r\nOTLP:     {}\r\n\r\n",
        settings.endpoint
    )?;
    print_range(out, &summary)?;
    write!(
        out,
        "Points:   {} delivered ({} requests retried)\r\n",
        stats.accepted.saturating_sub(stats.rejected),
        stats.retries
    )?;
    if stats.rejected > 0 {
        write!(out, "Rejected: {} (partial success)\r\n", stats.rejected)?;
    }
    write!(out, "\r\nThe command completed successfully.\r\n")?;
    Ok(ExitCode::SUCCESS)
}

fn print_stats(
    out: &mut dyn Write,
    stats: &[perfcounters::log::CounterStatistics],
    fmt: StatsFormat,
) -> Result<()> {
    use perfcounters::log::pdh_csv::format_precise;
    match fmt {
        StatsFormat::Csv => {
            let mut w = String::from(
                "\"Counter\",\"Minimum\",\"Average\",\"Maximum\",\"Samples\",\"Values\"\r\n",
            );
            for s in stats {
                let q = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
                match &s.stats {
                    Ok(st) => w.push_str(&format!(
                        "{},{},{},{},{},{}\r\n",
                        q(&s.name),
                        q(&format_precise(st.min)),
                        q(&format_precise(st.mean)),
                        q(&format_precise(st.max)),
                        q(&st.samples.to_string()),
                        q(&st.count.to_string())
                    )),
                    Err(_) => {
                        w.push_str(&format!("{},\" \",\" \",\" \",\" \",\"0\"\r\n", q(&s.name)))
                    }
                }
            }
            out.write_all(w.as_bytes())?;
        }
        StatsFormat::Table => {
            let cell = |v: f64| crate::table::human(v);
            let rows: Vec<[String; 4]> = stats
                .iter()
                .map(|s| match &s.stats {
                    Ok(st) => [cell(st.min), cell(st.mean), cell(st.max), s.name.clone()],
                    Err(e) => [
                        "-".into(),
                        "-".into(),
                        "-".into(),
                        format!("{} ({})", s.name, e.status().description()),
                    ],
                })
                .collect();
            let w = |i: usize, title: &str| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(title.len())
            };
            let (a, b, c) = (w(0, "MINIMUM"), w(1, "AVERAGE"), w(2, "MAXIMUM"));
            writeln!(
                out,
                "{:>a$}  {:>b$}  {:>c$}  COUNTER",
                "MINIMUM", "AVERAGE", "MAXIMUM"
            )?;
            for r in rows {
                writeln!(out, "{:>a$}  {:>b$}  {:>c$}  {}", r[0], r[1], r[2], r[3])?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn flags() {
        let a = parse(&s(&[
            "in.csv",
            "/C",
            r"\Processor(*)\% Processor Time",
            r"\Memory\Available Bytes",
            "-f",
            "sql",
            "-o",
            "SQL:x.db!run",
            "-t",
            "3",
            "-b",
            "2/1/2014 00:20:00",
            "-e",
            "2/1/2014 01:00:00",
            "-a",
            "-y",
            "--names",
            "n.ini",
            "--code-page",
            "1251",
        ]))
        .unwrap();
        assert_eq!(a.inputs, ["in.csv"]);
        assert_eq!(
            a.counters,
            [
                r"\Processor(*)\% Processor Time",
                r"\Memory\Available Bytes"
            ]
        );
        assert_eq!(a.format, Some(OutputFormat::Sql));
        assert_eq!(a.every, 3);
        assert_eq!(a.begin, LogTime::from_parts(2014, 2, 1, 0, 20, 0, 0));
        assert!(a.append && a.yes);
        assert_eq!(a.code_page, Some(1251));
        assert_eq!(a.names, [PathBuf::from("n.ini")]);
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse(&s(&[])).unwrap_err(),
            "no input log: name PDH-CSV/TSV or binary (.blg) files or SQL:file.db!log"
        );
        assert_eq!(
            parse(&s(&["x.csv", "-t", "0"])).unwrap_err(),
            "invalid -t value \"0\": expected a positive whole number"
        );
        assert_eq!(
            parse(&s(&["x.csv", "-b", "2014-02-01 1 PM"])).unwrap_err(),
            "invalid time for -b: \"2014-02-01 1 PM\": expected M/d/yyyy [hh:mm[:ss[.fff]]] \
             [AM|PM] or yyyy-MM-dd[Thh:mm[:ss[.fff]]]"
        );
        assert_eq!(
            parse(&s(&["x.csv", "-f", "bin"])).unwrap_err(),
            "output format bin (.blg) is not supported; use CSV, TSV, SQL or PARQUET"
        );
        assert_eq!(
            parse(&s(&["x.csv", "-c"])).unwrap_err(),
            "option -c needs at least one counter path"
        );
        assert_eq!(
            parse(&s(&["x.csv", "-b", "1/2/2020", "-e", "1/1/2020"])).unwrap_err(),
            "-b 1/2/2020 00:00:00.000 is after -e 1/1/2020 00:00:00.000"
        );
        assert!(parse(&s(&["x.csv", "--code-page", "99999"])).is_err());
    }
}
