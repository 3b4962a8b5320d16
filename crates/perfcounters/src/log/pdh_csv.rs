//! PDH-CSV 4.0 and PDH-TSV 4.0, byte for byte as typeperf writes them.
//!
//! ```text
//! \r\n
//! "(PDH-CSV 4.0)","\\HOST\Processor(_Total)\% Processor Time"\r\n
//! "11/20/2019 23:01:11.527","3.125000"\r\n
//! ```
//!
//! * every field is wrapped in double quotes (a quote inside a field is doubled); fields are separated by `,`
//!   (CSV) or TAB (TSV); lines end with CRLF;
//! * typeperf starts its output with an empty line, then the header; the header's first cell is exactly
//!   `(PDH-CSV 4.0)` (relog and Performance Monitor add a time-zone suffix; typeperf does not);
//! * the time column is local time `MM/DD/YYYY HH:MM:SS.mmm`, 24-hour, zero-padded;
//! * values have six fixed decimals (`"176361472.000000"`);
//! * a value that could not be computed is written as `" "` (a single space), the placeholder Performance
//!   Monitor and relog use for a missing sample, so that every row keeps one cell per column.

use std::io::{self, Write};

use crate::snapshot::SystemTime;

/// Which separator the log uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvFlavor {
    /// Comma-separated, header cell `(PDH-CSV 4.0)`.
    Csv,
    /// Tab-separated, header cell `(PDH-TSV 4.0)`.
    Tsv,
}

impl CsvFlavor {
    fn separator(self) -> u8 {
        match self {
            CsvFlavor::Csv => b',',
            CsvFlavor::Tsv => b'\t',
        }
    }

    /// The first header cell, without quotes.
    pub fn header_cell(self) -> &'static str {
        match self {
            CsvFlavor::Csv => "(PDH-CSV 4.0)",
            CsvFlavor::Tsv => "(PDH-TSV 4.0)",
        }
    }
}

/// Writes PDH-CSV / PDH-TSV rows.
#[derive(Debug)]
pub struct PdhCsvWriter<W: Write> {
    out: W,
    flavor: CsvFlavor,
    line: Vec<u8>,
}

impl<W: Write> PdhCsvWriter<W> {
    /// A writer of the given flavor.
    pub fn new(out: W, flavor: CsvFlavor) -> Self {
        PdhCsvWriter {
            out,
            flavor,
            line: Vec::with_capacity(256),
        }
    }

    /// Writes the leading empty line and the header: the format cell, then one cell per counter path
    /// (machine-qualified, one per expanded instance).
    pub fn write_header<S: AsRef<str>>(&mut self, paths: &[S]) -> io::Result<()> {
        self.line.clear();
        self.line.extend_from_slice(b"\r\n");
        push_quoted(&mut self.line, self.flavor.header_cell());
        for p in paths {
            self.line.push(self.flavor.separator());
            push_quoted(&mut self.line, p.as_ref());
        }
        self.line.extend_from_slice(b"\r\n");
        self.out.write_all(&self.line)
    }

    /// Writes one data row: the local time, then one cell per value (`None` → `" "`).
    pub fn write_row(&mut self, local_time: &SystemTime, values: &[Option<f64>]) -> io::Result<()> {
        self.line.clear();
        push_quoted(&mut self.line, &format_time(local_time));
        for v in values {
            self.line.push(self.flavor.separator());
            match v {
                Some(v) => push_quoted(&mut self.line, &format_value(*v)),
                None => push_quoted(&mut self.line, " "),
            }
        }
        self.line.extend_from_slice(b"\r\n");
        self.out.write_all(&self.line)
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// `MM/DD/YYYY HH:MM:SS.mmm`, as typeperf writes its time column.
pub fn format_time(t: &SystemTime) -> String {
    format!(
        "{:02}/{:02}/{:04} {:02}:{:02}:{:02}.{:03}",
        t.month, t.day, t.year, t.hour, t.minute, t.second, t.milliseconds
    )
}

/// A value with six fixed decimals; negative zero is written as zero and non-finite values as `" "`.
pub fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return " ".to_string();
    }
    let v = if v == 0.0 { 0.0 } else { v };
    format!("{v:.6}")
}

fn push_quoted(line: &mut Vec<u8>, field: &str) {
    line.push(b'"');
    for &b in field.as_bytes() {
        if b == b'"' {
            line.push(b'"');
        }
        line.push(b);
    }
    line.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time() -> SystemTime {
        SystemTime {
            year: 2019,
            month: 11,
            day_of_week: 3,
            day: 20,
            hour: 23,
            minute: 1,
            second: 11,
            milliseconds: 527,
        }
    }

    #[test]
    fn csv_bytes() {
        let mut w = PdhCsvWriter::new(Vec::new(), CsvFlavor::Csv);
        w.write_header(&[
            r"\\CEBALLOS\Process(whatsapp)\Working Set",
            r"\\CEBALLOS\Memory\Available Bytes",
        ])
        .unwrap();
        w.write_row(&time(), &[Some(176361472.0), Some(-0.0)])
            .unwrap();
        w.write_row(&time(), &[None, Some(388.8737174)]).unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(
            out,
            "\r\n\"(PDH-CSV 4.0)\",\"\\\\CEBALLOS\\Process(whatsapp)\\Working Set\",\"\\\\CEBALLOS\\Memory\\Available Bytes\"\r\n\
             \"11/20/2019 23:01:11.527\",\"176361472.000000\",\"0.000000\"\r\n\
             \"11/20/2019 23:01:11.527\",\" \",\"388.873717\"\r\n"
        );
    }

    #[test]
    fn tsv_and_quotes() {
        let mut w = PdhCsvWriter::new(Vec::new(), CsvFlavor::Tsv);
        w.write_header(&["\\\\H\\A(\"q\")\\B"]).unwrap();
        w.write_row(
            &SystemTime {
                year: 2020,
                month: 4,
                day: 2,
                hour: 7,
                minute: 37,
                second: 58,
                milliseconds: 154,
                ..Default::default()
            },
            &[Some(f64::NAN)],
        )
        .unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(out, "\r\n\"(PDH-TSV 4.0)\"\t\"\\\\H\\A(\"\"q\"\")\\B\"\r\n\"04/02/2020 07:37:58.154\"\t\" \"\r\n");
    }
}
