//! Value parsers shared by the commands: intervals (`1s`, `500ms`, `2m`, `1h`, a bare number of
//! seconds, typeperf's `[[hh:]mm:]ss`), counts, files of counter paths, and `--names` tables.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// Parses an interval. The result is at least one millisecond.
pub fn parse_interval(s: &str) -> std::result::Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty interval".into());
    }
    let bad = || {
        format!("invalid interval \"{s}\": expected e.g. 1s, 500ms, 2m, 1h, 1.5 or [[hh:]mm:]ss")
    };
    let d = if t.contains(':') {
        let parts: Vec<&str> = t.split(':').collect();
        if parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(bad());
        }
        let mut secs: u64 = 0;
        for p in &parts {
            let v: u64 = p.parse().map_err(|_| bad())?;
            secs = secs
                .checked_mul(60)
                .and_then(|x| x.checked_add(v))
                .ok_or_else(bad)?;
        }
        Duration::from_secs(secs)
    } else {
        let (num, unit) = match t.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
            Some(i) => t.split_at(i),
            None => (t, "s"),
        };
        let v: f64 = num.parse().map_err(|_| bad())?;
        let factor = match unit.trim() {
            "ms" => 0.001,
            "s" | "sec" | "secs" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        let secs = v * factor;
        if !secs.is_finite() || secs > 1e9 {
            return Err(bad());
        }
        Duration::from_secs_f64(secs)
    };
    if d < Duration::from_millis(1) {
        return Err(format!("invalid interval \"{s}\": must be at least 1ms"));
    }
    Ok(d)
}

/// Parses a positive whole number (`-sc`, `-t`, `--samples`); `what` names it in the error.
pub fn parse_count(s: &str, what: &str) -> std::result::Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("invalid {what} \"{s}\": expected a positive whole number"))
}

/// The counter paths of a counter file (`-cf`, `--counter-file`): one per line; blank lines and lines
/// starting with `#` or `;` are left out, a byte order mark is ignored.
pub fn read_counter_file(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read counter file {}", path.display()))?;
    let paths: Vec<String> = text
        .lines()
        .map(|l| l.trim().trim_start_matches('\u{feff}'))
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
        .map(str::to_string)
        .collect();
    if paths.is_empty() {
        bail!(
            "counter file {} holds no counter path (only blank lines and # or ; comments)",
            path.display()
        );
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(parse_interval("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_interval("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_interval("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_interval("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_interval("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(
            parse_interval("01:02:03").unwrap(),
            Duration::from_secs(3723)
        );
        assert_eq!(parse_interval("05:00").unwrap(), Duration::from_secs(300));
        assert!(parse_interval("0").is_err());
        assert!(parse_interval("").is_err());
        assert!(parse_interval("1x").is_err());
        assert!(parse_interval("1:2:3:4").is_err());
        assert!(parse_interval("::").is_err());
        assert!(parse_interval("1e300").is_err());
        assert_eq!(
            parse_interval("abc").unwrap_err(),
            "invalid interval \"abc\": expected e.g. 1s, 500ms, 2m, 1h, 1.5 or [[hh:]mm:]ss"
        );
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("5", "sample count"), Ok(5));
        assert_eq!(
            parse_count("0", "sample count").unwrap_err(),
            "invalid sample count \"0\": expected a positive whole number"
        );
        assert_eq!(
            parse_count("-1", "-t value").unwrap_err(),
            "invalid -t value \"-1\": expected a positive whole number"
        );
    }

    #[test]
    fn counter_files() {
        let dir = std::env::temp_dir().join(format!("pc-args-cf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("counters.txt");
        std::fs::write(&f, "\u{feff}\\A\\B\r\n\r\n# note\n; note\n  \\C(*)\\D  \n").unwrap();
        assert_eq!(read_counter_file(&f).unwrap(), [r"\A\B", r"\C(*)\D"]);
        let missing = dir.join("missing.txt");
        assert!(read_counter_file(&missing)
            .unwrap_err()
            .to_string()
            .starts_with("cannot read counter file "));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
