//! The live table of `watch`: one line per counter (value, unit, path) under the time of the
//! collection, refreshed in place on a terminal.
//!
//! * The value and unit columns keep their width for the whole run: a width only grows, so the
//!   paths do not move from one refresh to the next.
//! * Byte counters (known by their English name, [`Unit::of`]) are scaled to binary units, `B`,
//!   `KiB`, `MiB`, `GiB`, `TiB` (with `/s` for a rate), as Task Manager and perfmon's report view
//!   show them in a readable size; other values
//!   keep thousands separators and the counter type's unit (`%`, `/sec`, `secs`).
//! * On a terminal, a list longer than the screen keeps its header and the first rows, and says
//!   how many more there are (`… 12 more`), as `top` does.

/// A counter's unit in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A number of bytes (a rate when `per_sec`), scaled to a binary unit.
    Bytes {
        /// Bytes per second.
        per_sec: bool,
    },
    /// A fixed unit text (possibly empty).
    Fixed(&'static str),
}

impl Unit {
    /// The unit of the counter named `counter` whose type shows `suffix`
    /// ([`perfcounters::CounterType::suffix`]). Counters of bytes are known by their English
    /// name, as Windows has no counter type for them (bytes are raw counts and bulk counts like
    /// other numbers): `… Bytes`, `Bytes …`, `… Bytes/sec`, `Working Set`, `Commit Limit`;
    /// `KBytes` and `MBytes` counters are already scaled and keep their unit.
    ///
    /// `counter` is the name the source gives the counter
    /// ([`perfcounters::query::QueryCounter::counter_name`]), found by its title index in the
    /// English table wherever the data carries indexes: live sources (English on every Windows
    /// language), captures, and replayed blocks, where a path typed in the machine's language
    /// through `--names` still names an English counter. A `.blg` stores names, not indexes, in
    /// its writer's language: the byte counters of a log written in another language keep plain
    /// numbers.
    pub fn of(counter: &str, suffix: &'static str) -> Unit {
        let lower = counter.to_ascii_lowercase();
        let per_sec = suffix == "/sec";
        if suffix == "%" || lower.starts_with('%') {
            return Unit::Fixed(suffix);
        }
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        if words.contains(&"mbytes") {
            return Unit::Fixed(if per_sec { "MiB/s" } else { "MiB" });
        }
        if words.contains(&"kbytes") {
            return Unit::Fixed(if per_sec { "KiB/s" } else { "KiB" });
        }
        let bytes = words.iter().any(|w| *w == "bytes" || *w == "byte")
            || lower.starts_with("working set")
            || lower == "commit limit";
        if bytes && (suffix.is_empty() || per_sec) {
            Unit::Bytes { per_sec }
        } else {
            Unit::Fixed(suffix)
        }
    }

    /// The value and unit cells of `v`.
    pub fn cells(self, v: f64) -> (String, String) {
        match self {
            Unit::Fixed(u) => (human(v), u.to_string()),
            Unit::Bytes { per_sec } => {
                const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
                let mut scaled = v;
                let mut i = 0;
                while scaled.abs() >= 1024.0 && i + 1 < UNITS.len() {
                    scaled /= 1024.0;
                    i += 1;
                }
                let value = if i == 0 {
                    human(scaled)
                } else {
                    format!("{scaled:.2}")
                };
                let rate = if per_sec { "/s" } else { "" };
                (value, format!("{}{rate}", UNITS[i]))
            }
        }
    }
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The value cell (a number, or the status in parentheses).
    pub value: String,
    /// The unit cell.
    pub unit: String,
    /// The counter path.
    pub path: String,
}

/// The widths kept across refreshes.
#[derive(Debug, Default)]
pub struct Table {
    value_width: usize,
    unit_width: usize,
}

impl Table {
    /// The table of `rows` under `time`; `height` is the terminal's number of lines, if it fits
    /// a screen.
    pub fn render(&mut self, time: &str, rows: &[Row], height: Option<usize>) -> String {
        let widest = |f: fn(&Row) -> &str| rows.iter().map(|r| f(r).chars().count()).max();
        self.value_width = self
            .value_width
            .max(widest(|r| &r.value).unwrap_or(0))
            .max("VALUE".len());
        self.unit_width = self
            .unit_width
            .max(widest(|r| &r.unit).unwrap_or(0))
            .max("UNIT".len());
        let (vw, uw) = (self.value_width, self.unit_width);
        let mut s = format!("{time}\n\n{:>vw$}  {:<uw$}  COUNTER\n", "VALUE", "UNIT");
        // The time, a blank line, the column titles, and one line left for the cursor.
        let shown = match height {
            Some(h) if rows.len() + 4 > h => h.saturating_sub(5).max(1),
            _ => rows.len(),
        };
        for r in &rows[..shown.min(rows.len())] {
            s.push_str(&format!("{:>vw$}  {:<uw$}  {}\n", r.value, r.unit, r.path));
        }
        if shown < rows.len() {
            s.push_str(&format!(
                "… {} more (a taller window shows them, or --format csv)\n",
                rows.len() - shown
            ));
        }
        s
    }
}

/// Formats a value for people: integers without decimals, large numbers with thousands separators,
/// small ones with three decimals.
pub fn human(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        group(&format!("{}", v as i64))
    } else if v.abs() >= 1000.0 {
        let s = format!("{v:.1}");
        let (int, frac) = s.split_once('.').unwrap_or((&s, "0"));
        format!("{}.{}", group(int), frac)
    } else {
        format!("{v:.3}")
    }
}

fn group(int: &str) -> String {
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_numbers() {
        assert_eq!(human(0.0), "0");
        assert_eq!(human(1234567.0), "1,234,567");
        assert_eq!(human(-1234.0), "-1,234");
        assert_eq!(human(1.23456), "1.235");
        assert_eq!(human(12345.678), "12,345.7");
        assert_eq!(human(999.5), "999.500");
    }

    #[test]
    fn units() {
        assert_eq!(
            Unit::of("Available Bytes", ""),
            Unit::Bytes { per_sec: false }
        );
        assert_eq!(
            Unit::of("Disk Bytes/sec", "/sec"),
            Unit::Bytes { per_sec: true }
        );
        assert_eq!(
            Unit::of("Bytes Total/sec", "/sec"),
            Unit::Bytes { per_sec: true }
        );
        assert_eq!(
            Unit::of("Working Set - Private", ""),
            Unit::Bytes { per_sec: false }
        );
        assert_eq!(Unit::of("Commit Limit", ""), Unit::Bytes { per_sec: false });
        assert_eq!(Unit::of("Available MBytes", ""), Unit::Fixed("MiB"));
        assert_eq!(Unit::of("Available KBytes", ""), Unit::Fixed("KiB"));
        assert_eq!(Unit::of("% Committed Bytes In Use", "%"), Unit::Fixed("%"));
        assert_eq!(Unit::of("% Processor Time", "%"), Unit::Fixed("%"));
        assert_eq!(
            Unit::of("Context Switches/sec", "/sec"),
            Unit::Fixed("/sec")
        );
        assert_eq!(Unit::of("Processes", ""), Unit::Fixed(""));
        assert_eq!(Unit::of("Elapsed Time", "secs"), Unit::Fixed("secs"));

        let bytes = Unit::Bytes { per_sec: false };
        assert_eq!(bytes.cells(512.0), ("512".into(), "B".into()));
        assert_eq!(bytes.cells(1536.0), ("1.50".into(), "KiB".into()));
        assert_eq!(bytes.cells(8_589_934_592.0), ("8.00".into(), "GiB".into()));
        assert_eq!(
            bytes.cells(3.0 * 1024f64.powi(5)),
            ("3072.00".into(), "TiB".into())
        );
        let rate = Unit::Bytes { per_sec: true };
        assert_eq!(rate.cells(1_258_291.2), ("1.20".into(), "MiB/s".into()));
        assert_eq!(rate.cells(0.0), ("0".into(), "B/s".into()));
        assert_eq!(
            Unit::Fixed("/sec").cells(12345.0),
            ("12,345".into(), "/sec".into())
        );
    }

    fn row(value: &str, unit: &str, path: &str) -> Row {
        Row {
            value: value.into(),
            unit: unit.into(),
            path: path.into(),
        }
    }

    #[test]
    fn widths_only_grow() {
        let mut t = Table::default();
        let wide = t.render(
            "T1",
            &[row("1,234,567.5", "B/s", r"\A\B"), row("2", "", r"\A\C")],
            None,
        );
        assert_eq!(
            wide,
            "T1\n\n      VALUE  UNIT  COUNTER\n1,234,567.5  B/s   \\A\\B\n          2        \\A\\C\n"
        );
        // A narrower value later keeps the columns where they were.
        let narrow = t.render(
            "T2",
            &[row("7", "B/s", r"\A\B"), row("3", "", r"\A\C")],
            None,
        );
        assert_eq!(
            narrow,
            "T2\n\n      VALUE  UNIT  COUNTER\n          7  B/s   \\A\\B\n          3        \\A\\C\n"
        );
    }

    #[test]
    fn a_long_list_fits_the_screen() {
        let rows: Vec<Row> = (0..20)
            .map(|i| row(&i.to_string(), "", &format!(r"\O\C{i}")))
            .collect();
        let mut t = Table::default();
        // 10 lines: time, blank, titles, 5 rows, "… more", and the cursor's line.
        let s = t.render("T", &rows, Some(10));
        assert_eq!(s.lines().count(), 9);
        assert!(s.lines().nth(2).unwrap().ends_with("COUNTER"));
        assert_eq!(s.lines().nth(7).unwrap(), "    4        \\O\\C4");
        assert_eq!(
            s.lines().nth(8).unwrap(),
            "… 15 more (a taller window shows them, or --format csv)"
        );
        // A list that fits is whole.
        assert_eq!(t.render("T", &rows, Some(24)).lines().count(), 23);
        assert_eq!(t.render("T", &rows, None).lines().count(), 23);
        // A tiny window still shows one row.
        assert_eq!(t.render("T", &rows, Some(2)).lines().count(), 5);
    }
}
