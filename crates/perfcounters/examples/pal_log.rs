//! Writes a PDH-CSV log that holds every counter the 72 built-in threshold files name (each with
//! what it inherits; the columns of `benches/support/pal_log.rs`), with non-integer values, one
//! record a second, until the file reaches `PERFCOUNTERS_PAL_LOG_MB` megabytes (200 by default),
//! to `target/pal-bench/pal-all-<size>mb.csv`, and prints its path and its column count. Then
//! every analysis of every file finds its counters, and `perfcounters analyze LOG --rules NAME
//! ...` (the 72 names) can be timed against `perfcounters relog LOG -f csv` of the same log:
//!
//! ```text
//! cargo run --release -p perfcounters --example pal_log
//! ```

#[path = "../benches/support/pal_log.rs"]
mod pal_log;

use std::cell::Cell;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::rc::Rc;

use perfcounters::analyze::{Rules, BUILTIN_RULES};
use perfcounters::log::{CsvFlavor, PdhCsvWriter};
use perfcounters::path::fold_case;
use perfcounters::snapshot::SystemTime;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mb: u64 = std::env::var("PERFCOUNTERS_PAL_LOG_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let mut seen = HashSet::new();
    let mut columns = Vec::new();
    for b in BUILTIN_RULES {
        for c in pal_log::columns_of(&Rules::builtin_named(b.file)?) {
            if seen.insert(fold_case(&c).into_owned()) {
                columns.push(c);
            }
        }
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/pal-bench");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("pal-all-{mb}mb.csv"));
    let written = Rc::new(Cell::new(0u64));
    let file = Counting(File::create(&path)?, Rc::clone(&written));
    let mut w = PdhCsvWriter::new(BufWriter::new(file), CsvFlavor::Csv);
    w.write_header(&columns)?;
    let target = mb * 1_000_000;
    let mut values = vec![None; columns.len()];
    let mut row: u64 = 0;
    loop {
        // A day from 2024-01-01 00:00:00, then the next (a log of at most some days).
        let s = row % 86_400;
        let time = SystemTime {
            year: 2024,
            month: 1,
            day: 1 + (row / 86_400) as u16,
            hour: (s / 3600) as u16,
            minute: (s / 60 % 60) as u16,
            second: (s % 60) as u16,
            ..Default::default()
        };
        for (c, v) in values.iter_mut().enumerate() {
            // Values that move: a percentage-like wave with a fraction, differing per column.
            let phase = (row as f64 / 60.0 + c as f64).sin();
            *v = Some(((50.0 + 49.0 * phase) * 1000.0).round() / 1000.0 + (c % 7) as f64 * 0.125);
        }
        w.write_row(&time, &values)?;
        row += 1;
        if written.get() >= target {
            break;
        }
    }
    w.flush()?;
    println!("{}\t{}\t{row}", path.display(), columns.len());
    Ok(())
}

/// A file that counts the bytes written to it.
struct Counting(File, Rc<Cell<u64>>);

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1.set(self.1.get() + n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
