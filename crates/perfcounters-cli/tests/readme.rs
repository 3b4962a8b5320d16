//! The README's examples, run: every `perfcounters …` line of its Examples section runs here, in
//! README order, in a folder holding the files it names (the real Windows logs of
//! `../shared/data`, or data built as Windows writes it), except the lines that cannot run on
//! Linux or that serve until stopped (listed below with the test that covers them). Every option a
//! line uses must be in the command's own help.

#[cfg(unix)]
use crate::common::shared_data;

use crate::common;

#[cfg(unix)]
use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::process::{Command, Stdio};
#[cfg(unix)]
use std::time::{Duration, Instant};

use common::stderr;
#[cfg(unix)]
use common::{block, es_1252, ini, tempdir, write_blocks, write_capture};

/// The lines not run here, by how they start, and why (the examples run on Unix only).
#[cfg_attr(not(unix), allow(dead_code))]
const NOT_RUN: &[(&str, &str)] = &[
    (
        "perfcounters capture",
        "records Windows data (tests/cli.rs checks the message elsewhere)",
    ),
    (
        "perfcounters serve",
        "serves until stopped: tests/serve.rs runs each of these forms",
    ),
    (
        "perfcounters relog perfmon.blg -f otlp",
        "pushes to an OTLP endpoint: tests/otlp.rs pushes to a receiver of its own",
    ),
];

/// The `perfcounters` lines of the README's Examples block, without their comments.
fn examples() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let section = readme
        .split("\n## Examples\n")
        .nth(1)
        .expect("an Examples section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a sh block");
    block
        .lines()
        .filter(|l| l.starts_with("perfcounters "))
        .map(|l| l.split("  #").next().unwrap_or(l).trim().to_string())
        .collect()
}

/// The words of a shell line (single and double quotes, no escapes: what the README uses).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => out.extend(word.take()),
            (_, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    out
}

/// The folder the examples run in: the files they name.
#[cfg(unix)]
fn workdir(data: &Path) -> PathBuf {
    let dir = tempdir("readme");
    let copy = |from: &str, to: &str| {
        std::fs::copy(data.join(from), dir.join(to)).unwrap_or_else(|e| panic!("{from}: {e}"));
    };
    copy("logs/en-pst-BM_Active_Load_Test.csv", "customer.csv");
    copy("logs/en-pst-BM_Active_Load_Test.csv", "day1.csv");
    copy("logs/en-edt-process-DataCollector01.csv", "day2.csv");
    copy("blg/pal-vista-SamplePerfmonLog.blg", "perfmon.blg");
    copy("blg/pal-vista-SamplePerfmonLog.blg", "web1.blg");
    copy("blg/tx-win8-BasicPerfCounters.blg", "web2.blg");
    copy("logs/en-pst-BM_Active_Load_Test.csv", "web3.csv");
    write_blocks(&dir);
    std::fs::write(dir.join("block.bin"), block(0, [0, 0], 100)).unwrap();
    write_capture(&dir.join("cap"));
    std::fs::write(dir.join("spanish.csv"), es_1252()).unwrap();
    std::fs::write(dir.join("PerfStringBackup.INI"), ini()).unwrap();
    std::fs::write(
        dir.join("counters.txt"),
        "\\Processor(_Total)\\% Processor Time\n\\Memory\\Available MBytes\n",
    )
    .unwrap();
    // `perfcounters` on the PATH, as after `cargo install`.
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_perfcounters"), bin.join("perfcounters"))
        .unwrap();
    dir
}

/// How one line ended.
#[cfg(unix)]
struct Outcome {
    /// The exit status, or `None` when it was still running at its deadline (a live `watch`
    /// without `--samples` runs until interrupted) and was stopped.
    success: Option<bool>,
    stdout: String,
    stderr: String,
}

/// Runs `line` through `sh` in `dir`; a line still running after `deadline` is stopped.
#[cfg(unix)]
fn run_line(dir: &Path, line: &str, deadline: Duration) -> Outcome {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec {line}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = read(child.stdout.take().map(|r| Box::new(r) as _));
    let err = read(child.stderr.take().map(|r| Box::new(r) as _));
    let start = Instant::now();
    let success = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status.success());
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Outcome {
        success,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

#[cfg(unix)]
#[test]
fn readme_examples_run() {
    let Some(data) = shared_data::dir("the real Windows logs the examples read") else {
        return;
    };
    let dir = workdir(&data);
    let lines = examples();
    assert!(lines.len() >= 30, "{lines:?}");
    let mut ran = 0;
    for line in &lines {
        if NOT_RUN.iter().any(|(start, _)| line.starts_with(start)) {
            continue;
        }
        let w = words(line);
        // A live watch without --samples runs until interrupted: a few seconds show it works.
        let live_forever = w[1] == "watch"
            && !w
                .iter()
                .any(|a| a == "--replay" || a == "--samples" || a == "-n");
        let deadline = if live_forever {
            Duration::from_secs(4)
        } else {
            Duration::from_secs(60)
        };
        let o = run_line(&dir, line, deadline);
        let what = format!("{line}\nstdout:\n{}\nstderr:\n{}", o.stdout, o.stderr);
        match o.success {
            Some(ok) => assert!(ok, "failed: {what}"),
            None => assert!(live_forever, "did not finish: {what}"),
        }
        // Nothing went wrong (a warning, or a missing instance that may appear, is not an error).
        assert!(
            !o.stderr.lines().any(|l| l.starts_with("perfcounters:")
                && !l.starts_with("perfcounters: warning:")
                && !l.starts_with("perfcounters: note:")
                && !l.contains("has no instance")),
            "{what}"
        );
        // It wrote something: to standard output, or to the file it names.
        let output = w
            .iter()
            .position(|a| a == "-o" || a == "--output")
            .and_then(|i| w.get(i + 1));
        match output {
            Some(o) if !o.starts_with("SQL:") => {
                let len = std::fs::metadata(dir.join(o)).map_or(0, |m| m.len());
                assert!(len > 0, "{o} is empty: {what}");
            }
            Some(_) => {}
            None => assert!(!o.stdout.is_empty(), "no output: {what}"),
        }
        ran += 1;
    }
    assert_eq!(
        ran,
        lines
            .iter()
            .filter(|l| !NOT_RUN.iter().any(|(s, _)| l.starts_with(s)))
            .count()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every option an example uses is in its command's help (`--help`, or `-?` for the Windows-style
/// relog and typeperf).
#[test]
fn readme_options_are_in_the_help() {
    let mut help = std::collections::HashMap::new();
    for line in examples() {
        let w = words(&line);
        let command = w[1].clone();
        let text = help.entry(command.clone()).or_insert_with(|| {
            let flag = if command == "relog" || command == "typeperf" {
                "-?"
            } else {
                "--help"
            };
            let o = common::run(&[&command, flag]);
            assert!(o.status.success(), "{}", stderr(&o));
            String::from_utf8(o.stdout).unwrap()
        });
        for a in &w[2..] {
            let Some(name) = a.strip_prefix('-') else {
                continue;
            };
            if name.is_empty() || a.starts_with('\\') {
                continue;
            }
            // `--web.config.file`, `-cf`: the option as written, followed by a space, `=` or a
            // comma in the help.
            let name = format!("-{}", name.split('=').next().unwrap_or(name));
            assert!(
                [" ", ",", "\n", "="]
                    .iter()
                    .any(|end| text.contains(&format!("{name}{end}"))),
                "{line}: {name} is not in `perfcounters {command}`'s help"
            );
        }
    }
}

#[test]
fn the_examples_split_into_words_as_sh_does() {
    assert_eq!(
        words(r#"perfcounters relog 'SQL:logs.db!customer' -b "2/1/2014 00:20" x"#),
        [
            "perfcounters",
            "relog",
            "SQL:logs.db!customer",
            "-b",
            "2/1/2014 00:20",
            "x"
        ]
    );
    assert_eq!(words("a  ''"), ["a", ""]);
}

/// The Install section's `ln -s "$(command -v perfcounters)" ~/.cargo/bin/typeperf`: the binary
/// run under the name `typeperf` takes typeperf's own command line, as `perfcounters typeperf`
/// does.
#[cfg(unix)]
#[test]
fn installed_as_typeperf_it_is_typeperf() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let install = readme
        .split("\n## Install\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("an Install section");
    assert!(install.contains(r#"ln -s "$(command -v perfcounters)" ~/.cargo/bin/typeperf"#));
    let dir = tempdir("readme-typeperf");
    let link = dir.join("typeperf");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_perfcounters"), &link).unwrap();
    let as_typeperf = Command::new(&link)
        .args(["-qx", "Memory"])
        .output()
        .unwrap();
    let as_command = common::run(&["typeperf", "-qx", "Memory"]);
    assert!(as_typeperf.status.success(), "{}", stderr(&as_typeperf));
    assert!(as_command.status.success(), "{}", stderr(&as_command));
    assert!(String::from_utf8_lossy(&as_typeperf.stdout).contains(r"\Memory\Available Bytes"));
    assert_eq!(as_typeperf.stdout, as_command.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README and every document of docs/ read as written: no line is a merge's conflict marker.
#[test]
fn documents_hold_no_conflict_markers() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.expect("a docs/ entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    assert!(files.len() > 10, "{files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a document");
        for (n, line) in text.lines().enumerate() {
            let marker =
                line.starts_with("<<<<<<< ") || line == "=======" || line.starts_with(">>>>>>> ");
            assert!(!marker, "{}:{}: {line}", file.display(), n + 1);
        }
    }
}

/// docs/columnar.md names the features of the `parquet` crate that the library turns on, as its
/// Cargo.toml does.
#[test]
fn columnar_doc_names_the_parquet_features() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let manifest = std::fs::read_to_string(root.join("crates/perfcounters/Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("parquet = "))
        .expect("the parquet dependency");
    let features: Vec<&str> = line
        .split("features = [")
        .nth(1)
        .and_then(|f| f.split(']').next())
        .expect("its features")
        .split(',')
        .map(|f| f.trim().trim_matches('"'))
        .collect();
    let names: Vec<String> = features.iter().map(|f| format!("`{f}`")).collect();
    let said = match names.as_slice() {
        [.., last] if names.len() > 1 => {
            format!("{} and {last}", names[..names.len() - 1].join(", "))
        }
        _ => names.join(""),
    };
    let doc = std::fs::read_to_string(root.join("docs/columnar.md")).unwrap();
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        doc.contains(&format!("(with only its {said} features)")),
        "docs/columnar.md should say: (with only its {said} features)"
    );
}

/// Every file of the repository that the README or a document of docs/ names in backquotes
/// (`crates/…`, `scripts/…`, `tests/…`, `src/…`, `bench/…`, from the root or from a crate) exists.
#[test]
fn documents_name_files_that_exist() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.expect("a docs/ entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    let bases = [
        "",
        "crates/perfcounters/",
        "crates/perfcounters-cli/",
        "crates/perfcounters-py/",
    ];
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a document");
        for quoted in text.split('`').skip(1).step_by(2) {
            let named = ["crates/", "scripts/", "tests/", "src/", "bench/"]
                .iter()
                .any(|p| quoted.starts_with(p));
            let path_like = quoted
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
            if !named || !path_like || quoted.contains("NAME") {
                continue;
            }
            checked += 1;
            assert!(
                bases.iter().any(|b| root.join(b).join(quoted).exists()),
                "{} names `{quoted}`, which does not exist",
                file.display()
            );
        }
    }
    assert!(checked > 30, "{checked}");
}
