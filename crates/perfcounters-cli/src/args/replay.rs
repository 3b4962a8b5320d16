//! `--replay` and `--names`, shared by `list`, `watch` and `serve`.
//!
//! `--replay` takes one or more values and clap gives it every value up to the next option, so the
//! values are sorted after parsing: one that starts with `\` is a counter path, one that names an
//! existing file or directory is a recording, and so is the first value, an `SQL:` log and a name
//! with a wildcard (a missing recording is reported by the command that opens it). What is left
//! belongs to the command's own arguments (`list`'s object name) or is an error that says what it
//! is not. `watch --replay t0.bin t1.bin '\Processor(*)\% Processor Time'` therefore replays two
//! block files and watches one path, in every order of the arguments.

use std::path::PathBuf;

use anyhow::{bail, Result};
use perfcounters::log::LogFormat;

/// The replay options of a command.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
pub struct ReplayArgs {
    /// Read recordings instead of the live machine: V1 block files (one per collection, in order),
    /// a capture directory, or a binary log (.blg). Counter paths (they start with \) may follow
    #[arg(long, num_args = 1.., value_name = "FILE|DIR")]
    pub replay: Vec<PathBuf>,
    /// Name tables for replayed block files (PerfStringBackup.INI, REG_MULTI_SZ dump or `index name`
    /// text): names in another language than English may be used. Captures and logs carry their own
    #[arg(long, value_name = "FILE")]
    pub names: Option<PathBuf>,
}

/// A value of `--replay`, sorted.
#[derive(Debug, PartialEq)]
enum Value {
    Recording(PathBuf),
    CounterPath(String),
    Other(String),
}

impl ReplayArgs {
    /// The values of `--replay`, each classified (see the module documentation).
    fn values(&self) -> Vec<Value> {
        self.replay
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let text = p.to_string_lossy();
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if text.starts_with('\\') {
                    Value::CounterPath(text.into_owned())
                } else if i == 0
                    || p.exists()
                    || LogFormat::from_name(&text) == Some(LogFormat::Sql)
                    || name.contains(['*', '?'])
                {
                    Value::Recording(p.clone())
                } else {
                    Value::Other(text.into_owned())
                }
            })
            .collect()
    }

    /// The recordings, with the counter paths given among them added to `paths` (`watch`, and
    /// `serve`, which exports only those paths' counters).
    pub fn recordings_and_paths(&self, paths: &mut Vec<String>) -> Result<Vec<PathBuf>> {
        let mut recordings = Vec::new();
        for v in self.values() {
            match v {
                Value::Recording(p) => recordings.push(p),
                Value::CounterPath(p) => paths.push(p),
                Value::Other(o) => bail!(not_a_recording(&o, "a counter path starts with \\")),
            }
        }
        Ok(recordings)
    }

    /// The recordings, with an object name given among them put in `object` (`list`).
    pub fn recordings_and_object(&self, object: &mut Option<String>) -> Result<Vec<PathBuf>> {
        let mut recordings = Vec::new();
        for v in self.values() {
            match v {
                Value::Recording(p) => recordings.push(p),
                Value::CounterPath(p) => {
                    bail!("list takes an object name (such as Processor), not the counter path {p}")
                }
                Value::Other(o) if object.is_none() => *object = Some(o),
                Value::Other(o) => bail!(not_a_recording(&o, "list takes one object name")),
            }
        }
        Ok(recordings)
    }
}

fn not_a_recording(value: &str, why: &str) -> String {
    format!("--replay {value}: no such file or directory, and not a counter path ({why})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(v: &[&str]) -> ReplayArgs {
        ReplayArgs {
            replay: v.iter().map(PathBuf::from).collect(),
            names: None,
        }
    }

    #[test]
    fn counter_paths_are_left_to_watch() {
        let dir = std::env::temp_dir().join(format!("pc-args-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (t0, t1) = (dir.join("t0.bin"), dir.join("t1.bin"));
        std::fs::write(&t0, b"").unwrap();
        std::fs::write(&t1, b"").unwrap();
        let (t0s, t1s) = (t0.to_str().unwrap(), t1.to_str().unwrap());
        let path = r"\Processor(*)\% Processor Time";
        for order in [[t0s, t1s, path], [t0s, path, t1s]] {
            let mut paths = vec![r"\Memory\Available Bytes".to_string()];
            let r = replay(&order).recordings_and_paths(&mut paths).unwrap();
            assert_eq!(r, [t0.clone(), t1.clone()]);
            assert_eq!(paths, [r"\Memory\Available Bytes", path]);
        }
        // The first value is a recording even when missing: opening it says so.
        let mut paths = Vec::new();
        assert_eq!(
            replay(&["missing.bin", r"\\host\Memory\Available Bytes"])
                .recordings_and_paths(&mut paths)
                .unwrap(),
            [PathBuf::from("missing.bin")]
        );
        assert_eq!(paths, [r"\\host\Memory\Available Bytes"]);
        assert_eq!(
            replay(&[t0s, "Processor"])
                .recordings_and_paths(&mut paths)
                .unwrap_err()
                .to_string(),
            "--replay Processor: no such file or directory, and not a counter path (a counter \
             path starts with \\)"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_object_name_is_left_to_list() {
        let mut object = None;
        let r = replay(&["x.blg", "Processor"])
            .recordings_and_object(&mut object)
            .unwrap();
        assert_eq!(
            (r, object.as_deref()),
            (vec![PathBuf::from("x.blg")], Some("Processor"))
        );
        let mut object = Some("Memory".to_string());
        assert_eq!(
            replay(&["x.blg", "Processor"])
                .recordings_and_object(&mut object)
                .unwrap_err()
                .to_string(),
            "--replay Processor: no such file or directory, and not a counter path (list takes \
             one object name)"
        );
        assert_eq!(
            replay(&["x.blg", r"\Memory\Available Bytes"])
                .recordings_and_object(&mut None)
                .unwrap_err()
                .to_string(),
            "list takes an object name (such as Processor), not the counter path \
             \\Memory\\Available Bytes"
        );
    }

    #[test]
    fn logs_and_wildcards_are_recordings() {
        let mut paths = Vec::new();
        let r = replay(&["a.csv", "SQL:x.db!run", "logs/*.csv", r"\A(*)\B"])
            .recordings_and_paths(&mut paths)
            .unwrap();
        assert_eq!(
            r,
            [
                PathBuf::from("a.csv"),
                PathBuf::from("SQL:x.db!run"),
                PathBuf::from("logs/*.csv")
            ]
        );
        assert_eq!(paths, [r"\A(*)\B"]);
    }
}
