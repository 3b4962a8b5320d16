//! typeperf's command line, translated into `list` and `watch`.
//!
//! ```text
//! typeperf { <counter [counter ...]> | -cf <filename> | -q [object] | -qx [object] } [options]
//!   -f <CSV|TSV|BIN|SQL>  -si <[[hh:]mm:]ss>  -o <file>  -sc <samples>  -config <file>  -s <computer>  -y
//! ```
//!
//! Options follow [`crate::args::windows`]: `-` or `/`, case-insensitive, as on Windows. `-c` (a
//! relog/logman option that guides sometimes use with typeperf) is accepted as "the counter paths
//! up to the next option".

use std::path::PathBuf;
use std::time::Duration;

use crate::args::values::{parse_count, parse_interval};
use crate::args::windows::{Arg, Lexer};
use crate::args::{OutputFormat, WatchOptions};
use perfcounters::path::eq_ignore_case;

/// What a typeperf command line asks for.
#[derive(Debug, PartialEq)]
pub enum TypeperfAction {
    /// `-q` / `-qx`.
    List {
        /// The object to list, or all.
        object: Option<String>,
        /// `-qx`: list instances.
        instances: bool,
        /// `-o`.
        output: Option<PathBuf>,
        /// `-y`: overwrite the `-o` file.
        overwrite: bool,
    },
    /// Collect counters.
    Watch(WatchOptions),
    /// `-?`.
    Help,
}

/// The usage text, modelled on `typeperf /?`.
pub const USAGE: &str = "\
Microsoft-compatible TypePerf: writes performance counter data to the command window or to a log file.

Usage:
perfcounters typeperf { <counter [counter ...]> | -cf <filename> | -q [object] | -qx [object] } [options]

Parameters:
  <counter [counter ...]>       Performance counters to monitor.

Options:
  -?                            Displays context sensitive help.
  -f <CSV|TSV|SQL>              Output file format. Default is CSV. SQL writes to -o SQL:file.db!logname
                                (a SQLite database).
  -cf <filename>                File containing performance counters to monitor, one per line.
  -si <[[hh:]mm:]ss>            Time between samples. Default is 1 second.
  -o <filename|SQL:db!log>      Path of output file or SQL log. Default is stdout.
  -q [object]                   List installed counters (no instances). To list counters for one object,
                                include the object name, such as Processor.
  -qx [object]                  List installed counters with instances.
  -sc <samples>                 Number of samples to collect. Default is to sample until CTRL+C.
  -config <filename>            Settings file containing command options.
  -s <computer_name>            Server to monitor if no server is specified in the counter path
                                (only the local computer is supported).
  -y                            Answer yes to all questions without prompting.
";

/// The options typeperf knows, for "did you mean".
const OPTIONS: &[&str] = &[
    "?", "c", "cf", "config", "f", "o", "q", "qx", "s", "sc", "si", "y",
];

/// Parses typeperf arguments (without the program name).
pub fn parse(args: &[String]) -> Result<TypeperfAction, String> {
    let mut lexer = Lexer::new("typeperf", args)?;
    let mut paths = Vec::new();
    let mut counter_file = None;
    let mut format = OutputFormat::Csv;
    let mut interval = Duration::from_secs(1);
    let mut output = None;
    let mut samples = None;
    let mut list: Option<(Option<String>, bool)> = None;
    let mut overwrite = false;
    while let Some(arg) = lexer.next() {
        let (name, text) = match arg {
            Arg::Value(v) => {
                paths.push(v);
                continue;
            }
            Arg::Flag { name, text } => (name, text),
        };
        match name.as_str() {
            "?" | "h" | "help" => return Ok(TypeperfAction::Help),
            "c" => paths.extend(lexer.values(&text, "counter path")?),
            "cf" => counter_file = Some(PathBuf::from(lexer.value(&text)?)),
            "f" => format = OutputFormat::from_windows(&lexer.value(&text)?, false)?,
            "si" => interval = parse_interval(&lexer.value(&text)?)?,
            "o" => output = Some(PathBuf::from(lexer.value(&text)?)),
            "sc" => samples = Some(parse_count(&lexer.value(&text)?, "sample count")?),
            q @ ("q" | "qx") => {
                let instances = q == "qx";
                let object = lexer.optional_value();
                if let Some(o) = object.as_deref().filter(|o| o.starts_with('\\')) {
                    return Err(format!(
                        "{text} takes an object name (such as Processor), not the counter path {o}"
                    ));
                }
                list = Some((object, instances));
            }
            "s" => {
                let v = lexer.value(&text)?;
                let local = local_hostname();
                if !eq_ignore_case(v.trim_start_matches('\\'), &local)
                    && v != "."
                    && v != "localhost"
                {
                    return Err(format!("remote computer \"{v}\" is not supported: only the local computer ({local}) can be monitored"));
                }
            }
            "y" => overwrite = true,
            _ => return Err(lexer.unknown(&text, OPTIONS)),
        }
    }
    if let Some((object, instances)) = list {
        return Ok(TypeperfAction::List {
            object,
            instances,
            output,
            overwrite,
        });
    }
    if paths.is_empty() && counter_file.is_none() {
        return Err("no counters given: name counter paths, -cf <file>, -q or -qx".into());
    }
    Ok(TypeperfAction::Watch(WatchOptions {
        paths,
        counter_file,
        interval,
        samples,
        format,
        output,
        overwrite,
        typeperf: true,
        ..WatchOptions::default()
    }))
}

/// The local computer name.
pub fn local_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn watch_flags() {
        let a = parse(&s(&[
            r"\Processor(_Total)\% Processor Time",
            "-si",
            "2",
            "-sc",
            "5",
            "-f",
            "tsv",
            "-o",
            "x.tsv",
            "-y",
        ]))
        .unwrap();
        let TypeperfAction::Watch(w) = a else {
            panic!("{a:?}")
        };
        assert_eq!(w.paths, [r"\Processor(_Total)\% Processor Time"]);
        assert_eq!(w.interval, Duration::from_secs(2));
        assert_eq!(w.samples, Some(5));
        assert_eq!(w.format, OutputFormat::Tsv);
        assert_eq!(w.output, Some(PathBuf::from("x.tsv")));
        assert!(w.overwrite && w.typeperf);
    }

    #[test]
    fn list_flags() {
        assert_eq!(
            parse(&s(&["-qx", "Processor"])).unwrap(),
            TypeperfAction::List {
                object: Some("Processor".into()),
                instances: true,
                output: None,
                overwrite: false
            }
        );
        assert_eq!(
            parse(&s(&["/Q"])).unwrap(),
            TypeperfAction::List {
                object: None,
                instances: false,
                output: None,
                overwrite: false
            }
        );
        assert_eq!(parse(&s(&["-?"])).unwrap(), TypeperfAction::Help);
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse(&s(&[])).unwrap_err(),
            "no counters given: name counter paths, -cf <file>, -q or -qx"
        );
        assert_eq!(
            parse(&s(&["x", "-si"])).unwrap_err(),
            "option -si needs a value"
        );
        assert_eq!(
            parse(&s(&["x", "-sc", "0"])).unwrap_err(),
            "invalid sample count \"0\": expected a positive whole number"
        );
        assert_eq!(
            parse(&s(&["x", "-zz"])).unwrap_err(),
            "unknown option \"-zz\"; see perfcounters typeperf -?"
        );
        assert_eq!(
            parse(&s(&["x", "/sk", "3"])).unwrap_err(),
            "unknown option \"/sk\"; did you mean \"-s\", \"-sc\" or \"-si\"?; see perfcounters typeperf -?"
        );
        assert!(parse(&s(&["x", "-f", "BIN"]))
            .unwrap_err()
            .contains("not supported"));
        assert!(parse(&s(&["x", "-s", "faraway-host-xyz"]))
            .unwrap_err()
            .contains("remote computer"));
    }

    #[test]
    fn config_file() {
        let dir = std::env::temp_dir().join(format!("pc-typeperf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("settings.txt");
        std::fs::write(&f, "[si]\n5\n[sc]\n3\n[f]\ntsv\n").unwrap();
        let a = parse(&s(&[
            "-config",
            f.to_str().unwrap(),
            r"\Memory\Available Bytes",
        ]))
        .unwrap();
        let TypeperfAction::Watch(w) = a else {
            panic!()
        };
        assert_eq!(
            (w.interval, w.samples, w.format),
            (Duration::from_secs(5), Some(3), OutputFormat::Tsv)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
