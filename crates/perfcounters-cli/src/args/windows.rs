//! The Windows-style command line of `relog` and `typeperf`: one rule for what an option is.
//!
//! * `--name` and `-name` are options, case-insensitive (`-CF` is `-cf`);
//! * `/name` is an option too, as on Windows, when `name` is letters, `?` or `-` only and no file
//!   or directory of that name exists (`/tmp/x.csv` and an existing `/a` are values);
//! * a lone `-`, and anything that starts with `\` (a counter path), is a value;
//! * `-config FILE` (anywhere) is replaced by the options the file holds: `[option]` on one line,
//!   its value(s) on the next lines, as relog and typeperf document.
//!
//! The lexer is written by hand: clap has no mode for Windows' `/x` options and multi-letter
//! single-dash flags (`-cf`, `-si`).

use perfcounters::suggest::{suggest, DidYouMean};

/// One command-line argument, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An option: its name in lower case without the prefix (`cf` for `/CF`), and the text as given.
    Flag {
        /// The option's name, lower case, without `-`, `--` or `/`.
        name: String,
        /// The argument as written.
        text: String,
    },
    /// Anything else: an input, a counter path, a value.
    Value(String),
}

/// The name of the option `a` is, or `None` when it is a value (see the module documentation).
pub fn flag_name(a: &str) -> Option<String> {
    if let Some(rest) = a.strip_prefix("--") {
        return (!rest.is_empty()).then(|| rest.to_ascii_lowercase());
    }
    if let Some(rest) = a.strip_prefix('-') {
        // `-` is standard input; `-5` or `-.5` is a number.
        let number = rest.starts_with(|c: char| c.is_ascii_digit() || c == '.');
        return (!rest.is_empty() && !number).then(|| rest.to_ascii_lowercase());
    }
    if let Some(rest) = a.strip_prefix('/') {
        let word = !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_alphabetic() || c == '?' || c == '-');
        return (word && !std::path::Path::new(a).exists()).then(|| rest.to_ascii_lowercase());
    }
    None
}

/// The arguments of a Windows-style command, read one at a time.
#[derive(Debug)]
pub struct Lexer {
    command: &'static str,
    args: Vec<String>,
    pos: usize,
}

impl Lexer {
    /// The arguments of `command` (without the program name), with `-config FILE` expanded.
    pub fn new(command: &'static str, args: &[String]) -> Result<Self, String> {
        Ok(Lexer {
            command,
            args: expand_config(args)?,
            pos: 0,
        })
    }

    /// The next argument.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Arg> {
        let a = self.args.get(self.pos)?.clone();
        self.pos += 1;
        Some(match flag_name(&a) {
            Some(name) => Arg::Flag { name, text: a },
            None => Arg::Value(a),
        })
    }

    /// The value of the option `flag`: the next argument, which must not be an option.
    pub fn value(&mut self, flag: &str) -> Result<String, String> {
        match self.args.get(self.pos) {
            Some(v) if flag_name(v).is_none() => {
                self.pos += 1;
                Ok(v.clone())
            }
            Some(v) => Err(format!("option {flag} needs a value, not the option {v}")),
            None => Err(format!("option {flag} needs a value")),
        }
    }

    /// The next argument if it is a value (an optional value such as `-q [object]`).
    pub fn optional_value(&mut self) -> Option<String> {
        let v = self.args.get(self.pos).filter(|v| flag_name(v).is_none())?;
        self.pos += 1;
        Some(v.clone())
    }

    /// The values up to the next option (`-c path path …`); at least one.
    pub fn values(&mut self, flag: &str, what: &str) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        while let Some(v) = self.optional_value() {
            out.push(v);
        }
        if out.is_empty() {
            return Err(format!("option {flag} needs at least one {what}"));
        }
        Ok(out)
    }

    /// The error for an option the command does not know, with the close names of `known`.
    pub fn unknown(&self, text: &str, known: &[&str]) -> String {
        let name = flag_name(text).unwrap_or_default();
        // Option names are short: a close name also starts with the same letter.
        let close: Vec<String> = suggest(&name, known.iter().copied())
            .into_iter()
            .filter(|k| k.chars().next() == name.chars().next())
            .map(|k| format!("-{k}"))
            .collect();
        format!(
            "unknown option \"{text}\"{}; see perfcounters {} -?",
            DidYouMean(&close),
            self.command
        )
    }
}

/// Replaces `-config FILE` with the options it contains (`[option]` on one line, its values on the
/// next ones, as relog and typeperf document).
pub fn expand_config(args: &[String]) -> Result<Vec<String>, String> {
    let pos = args
        .iter()
        .position(|a| flag_name(a).as_deref() == Some("config"));
    let Some(pos) = pos else {
        return Ok(args.to_vec());
    };
    let file = args
        .get(pos + 1)
        .ok_or_else(|| format!("option {} needs a value", args[pos]))?;
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read config file {file}: {e}"))?;
    let mut out: Vec<String> = args[..pos].to_vec();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() {
            continue;
        }
        if let Some(opt) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if opt.is_empty() {
                return Err(format!("{file}: line {}: empty option name", n + 1));
            }
            out.push(format!("-{opt}"));
        } else {
            out.push(line.to_string());
        }
    }
    let rest = &args[pos + 2..];
    if rest
        .iter()
        .any(|a| flag_name(a).as_deref() == Some("config"))
    {
        return Err("-config may be given once".into());
    }
    out.extend_from_slice(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn what_is_an_option() {
        for (a, want) in [
            ("-cf", Some("cf")),
            ("-CF", Some("cf")),
            ("/CF", Some("cf")),
            ("--names", Some("names")),
            ("--code-page", Some("code-page")),
            ("/code-page", Some("code-page")),
            ("-?", Some("?")),
            ("/?", Some("?")),
            ("-config", Some("config")),
            ("/config", Some("config")),
            ("-", None),
            ("--", None),
            ("-5", None),
            (r"\Processor(*)\% Processor Time", None),
            (r"\\host\Memory\Available Bytes", None),
            ("/tmp/x.csv", None),
            ("/x.csv", None),
            ("in.csv", None),
            ("SQL:x.db!log", None),
        ] {
            assert_eq!(flag_name(a).as_deref(), want, "{a}");
        }
        // `/usr` names a directory: a value.
        if std::path::Path::new("/usr").exists() {
            assert_eq!(flag_name("/usr"), None);
        }
    }

    #[test]
    fn values_stop_at_the_next_option() {
        let mut l = Lexer::new(
            "relog",
            &s(&["-c", r"\A\B", r"\C\D", "/f", "csv", "-o", "-y"]),
        )
        .unwrap();
        let Some(Arg::Flag { name, text }) = l.next() else {
            panic!()
        };
        assert_eq!((name.as_str(), text.as_str()), ("c", "-c"));
        assert_eq!(l.values("-c", "counter path").unwrap(), [r"\A\B", r"\C\D"]);
        assert!(matches!(l.next(), Some(Arg::Flag { name, .. }) if name == "f"));
        assert_eq!(l.value("/f").unwrap(), "csv");
        assert!(matches!(l.next(), Some(Arg::Flag { name, .. }) if name == "o"));
        assert_eq!(
            l.value("-o").unwrap_err(),
            "option -o needs a value, not the option -y"
        );
        assert!(matches!(l.next(), Some(Arg::Flag { name, .. }) if name == "y"));
        assert_eq!(l.next(), None);
        assert_eq!(l.value("-y").unwrap_err(), "option -y needs a value");
        assert_eq!(
            l.values("-c", "counter path").unwrap_err(),
            "option -c needs at least one counter path"
        );
    }

    #[test]
    fn unknown_options_get_close_names() {
        let l = Lexer::new("typeperf", &[]).unwrap();
        assert_eq!(
            l.unknown("-sk", &["si", "sc", "cf", "q"]),
            "unknown option \"-sk\"; did you mean \"-sc\" or \"-si\"?; see perfcounters typeperf -?"
        );
        assert_eq!(
            l.unknown("/zzzzzz", &["si"]),
            "unknown option \"/zzzzzz\"; see perfcounters typeperf -?"
        );
    }

    #[test]
    fn config_files_expand_in_place() {
        let dir = std::env::temp_dir().join(format!("pc-args-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("settings.txt");
        std::fs::write(&f, "\u{feff}[si]\n5\n\n[c]\n\\A\\B\n\\C\\D\n").unwrap();
        let f = f.to_str().unwrap();
        assert_eq!(
            expand_config(&s(&["x", "/CONFIG", f, "-y"])).unwrap(),
            s(&["x", "-si", "5", "-c", r"\A\B", r"\C\D", "-y"])
        );
        assert_eq!(
            expand_config(&s(&["-config"])).unwrap_err(),
            "option -config needs a value"
        );
        assert_eq!(
            expand_config(&s(&["-config", f, "-config", f])).unwrap_err(),
            "-config may be given once"
        );
        std::fs::write(dir.join("bad.txt"), "[]\n").unwrap();
        let bad = dir.join("bad.txt").to_str().unwrap().to_string();
        assert_eq!(
            expand_config(&s(&["-config", &bad])).unwrap_err(),
            format!("{bad}: line 1: empty option name")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
