//! The output formats of `watch`: a live table, PDH-CSV / PDH-TSV, JSON lines, and SQL logs.
//!
//! The query's counters may change from one row to the next (wildcards are expanded again at every
//! collection). The live table and JSON lines show the current counters. CSV, TSV and SQL logs
//! keep the columns of their header, as typeperf does: a counter that went away leaves its cell
//! blank, and one that appeared after the header is not written (said once on standard error).

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use chrono::{DateTime, Datelike, FixedOffset, Timelike};
use perfcounters::log::{
    self, Cell, CounterInfo, CreateOptions, CsvFlavor, LogCounter, LogFormat, LogHeader, LogTime,
    LogWriter, PdhCsvWriter, RawCell, Record, TimeZone,
};
use perfcounters::query::{CounterValue, Query};
use perfcounters::snapshot::{Snapshot, SystemTime};
use perfcounters::time_text::TimeStyle;
use perfcounters::{CounterPath, PdhStatus};

use crate::args::OutputFormat;
use crate::table::{Row, Table, Unit};

/// Why a collection is not written as Parquet here.
const PARQUET_BY_RELOG: &str =
    "Parquet is written by relog from a log: write CSV, TSV or SQL here, \
     then `perfcounters relog LOG -f parquet -o FILE.parquet` (or -o DIR/ for a dataset)";

/// Where and how rows are written.
pub struct Output {
    format: OutputFormat,
    out: Box<dyn Write>,
    refresh_in_place: bool,
    columns: Columns,
    sql: Option<Box<dyn LogWriter>>,
    record: Record,
    table: Table,
}

/// The columns a header fixed (CSV, TSV, SQL) and where each finds its value among the query's
/// current counters.
#[derive(Default)]
struct Columns {
    /// The header's counters.
    header: Vec<CounterPath>,
    /// The query's counters that `index` was built for.
    current: Vec<CounterPath>,
    /// For each header column, its counter's position among `current`.
    index: Vec<Option<usize>>,
    /// Counters that appeared after the header, already reported.
    told: HashSet<String>,
}

impl Columns {
    fn new(query: &Query) -> Columns {
        let header: Vec<CounterPath> = query.counters().iter().map(|c| c.path.clone()).collect();
        Columns {
            index: (0..header.len()).map(Some).collect(),
            current: header.clone(),
            header,
            told: HashSet::new(),
        }
    }

    /// Follows the query's counters after a new expansion.
    fn align(&mut self, query: &Query) {
        let counters = query.counters();
        if counters.len() == self.current.len()
            && counters
                .iter()
                .zip(&self.current)
                .all(|(c, p)| c.path == *p)
        {
            return;
        }
        let key = CounterPath::key;
        let position: std::collections::HashMap<String, usize> = counters
            .iter()
            .enumerate()
            .map(|(i, c)| (key(&c.path), i))
            .collect();
        self.index = self
            .header
            .iter()
            .map(|p| position.get(&key(p)).copied())
            .collect();
        let header: HashSet<String> = self.header.iter().map(key).collect();
        for c in counters {
            let k = key(&c.path);
            if c.error.is_none() && !header.contains(&k) && self.told.insert(k) {
                eprintln!(
                    "perfcounters: {} appeared after the header was written; this format keeps \
                     the header's columns (--format table or json shows new counters)",
                    c.path
                );
            }
        }
        self.current = counters.iter().map(|c| c.path.clone()).collect();
    }

    /// The values of the header's columns.
    fn values<'a>(
        &'a self,
        values: &'a [CounterValue],
    ) -> impl Iterator<Item = Option<&'a CounterValue>> + 'a {
        self.index
            .iter()
            .map(move |i| i.and_then(|i| values.get(i)))
    }
}

impl Output {
    /// Opens standard output, a file, or (for [`OutputFormat::Sql`]) a log in a SQLite database;
    /// `overwrite` replaces a SQL log of the same name. `flag` is the output option's name for
    /// errors (`--output`, typeperf's `-o`).
    pub fn new(
        format: OutputFormat,
        file: Option<&Path>,
        overwrite: bool,
        flag: &str,
    ) -> Result<Self> {
        if format == OutputFormat::Parquet {
            bail!("{PARQUET_BY_RELOG}");
        }
        if format == OutputFormat::Sql {
            let target = file
                .map(|f| f.to_string_lossy().into_owned())
                .filter(|f| LogFormat::from_name(f) == Some(LogFormat::Sql))
                .ok_or_else(|| anyhow!("the SQL format writes to {flag} SQL:file.db!logname"))?;
            let writer = log::create(
                &target,
                &CreateOptions::default()
                    .with_format(Some(LogFormat::Sql))
                    .with_overwrite(overwrite),
            )?;
            return Ok(Output {
                format,
                out: Box::new(io::sink()),
                refresh_in_place: false,
                columns: Columns::default(),
                sql: Some(writer),
                record: Record::default(),
                table: Table::default(),
            });
        }
        let (out, tty): (Box<dyn Write>, bool) = match file {
            Some(p) => {
                let f =
                    File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
                (Box::new(BufWriter::new(f)), false)
            }
            None => (Box::new(io::stdout()), io::stdout().is_terminal()),
        };
        Ok(Output {
            format,
            out,
            refresh_in_place: tty,
            columns: Columns::default(),
            sql: None,
            record: Record::default(),
            table: Table::default(),
        })
    }

    /// Called once after the priming collection, when the columns are known. A SQL log also
    /// stores the priming collection as its first record, as typeperf does: its raw samples are the
    /// previous samples of the second record's values.
    pub fn header(
        &mut self,
        query: &Query,
        snapshot: &Snapshot,
        time: &DateTime<FixedOffset>,
        values: &[CounterValue],
    ) -> Result<()> {
        self.columns = Columns::new(query);
        if let Some(sql) = &mut self.sql {
            let bias = -time.offset().local_minus_utc() / 60;
            let header = LogHeader {
                source: "watch".into(),
                kind: LogFormat::Sql,
                time_zone: Some(TimeZone::fixed_offset(bias)),
                counters: query
                    .counters()
                    .iter()
                    .map(|c| {
                        let time_base = snapshot
                            .object_by_name(c.object_name())
                            .map_or(0, |o| snapshot.time_base(o, c.counter_type));
                        LogCounter::new(
                            c.path.clone(),
                            Some(CounterInfo {
                                counter_type: c.counter_type,
                                default_scale: 0,
                                time_base,
                            }),
                        )
                    })
                    .collect(),
            };
            sql.write_header(&header)?;
            return self.row(query, time, values);
        }
        // JSON rows and table frames carry their own paths; SQL is handled above.
        if let Some(flavor) = self.format.csv_flavor() {
            let paths: Vec<String> = self.columns.header.iter().map(|p| p.to_string()).collect();
            PdhCsvWriter::new(&mut self.out, flavor).write_header(&paths)?;
        }
        self.out.flush()?;
        Ok(())
    }

    /// One row of values.
    pub fn row(
        &mut self,
        query: &Query,
        time: &DateTime<FixedOffset>,
        values: &[CounterValue],
    ) -> Result<()> {
        match self.format {
            OutputFormat::Sql => {
                // A record's time is a UTC instant.
                let t = system_time(&time.with_timezone(&chrono::Utc));
                self.record.time = LogTime::from_parts(
                    t.year.into(),
                    t.month.into(),
                    t.day.into(),
                    t.hour.into(),
                    t.minute.into(),
                    t.second.into(),
                    t.milliseconds.into(),
                )
                .ok_or_else(|| anyhow!("collection time {time} is out of range"))?;
                self.columns.align(query);
                self.record.cells.clear();
                self.record
                    .cells
                    .extend(self.columns.values(values).map(|v| match v {
                        Some(v) => match v.raw() {
                            Some(raw) => Cell::Raw(
                                RawCell {
                                    status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                                    raw,
                                },
                                v.value(),
                            ),
                            None => v.value().map_or(Cell::Blank, Cell::Value),
                        },
                        None => Cell::Blank,
                    }));
                if let Some(sql) = &mut self.sql {
                    sql.write_record(&self.record)?;
                    // Each row is committed, so an interrupted watch keeps what it wrote.
                    sql.checkpoint()?;
                }
            }
            OutputFormat::Csv | OutputFormat::Tsv => {
                let flavor = self.format.csv_flavor().unwrap_or(CsvFlavor::Csv);
                self.columns.align(query);
                let cells: Vec<Option<f64>> = self
                    .columns
                    .values(values)
                    .map(|v| v.and_then(CounterValue::value))
                    .collect();
                PdhCsvWriter::new(&mut self.out, flavor).write_row(&system_time(time), &cells)?;
            }
            OutputFormat::Json => {
                let items: Vec<serde_json::Value> = query
                    .counters()
                    .iter()
                    .zip(values)
                    .map(|(c, v)| {
                        serde_json::json!({
                            "path": c.path_string(),
                            "value": v.value(),
                            "status": v.status().to_string(),
                        })
                    })
                    .collect();
                let row = serde_json::json!({
                    "timestamp": time.to_rfc3339_opts(chrono::SecondsFormat::Millis, false),
                    "values": items,
                });
                writeln!(self.out, "{row}")?;
            }
            OutputFormat::Parquet => bail!("{PARQUET_BY_RELOG}"),
            OutputFormat::Table => {
                // On a terminal the table fits the window, measured at each refresh.
                let height = self
                    .refresh_in_place
                    .then(terminal_size::terminal_size)
                    .flatten()
                    .map(|(_, terminal_size::Height(h))| usize::from(h));
                let text = self.table.render(
                    &TimeStyle::Sql.format(&system_time(time)),
                    &table_rows(query, values),
                    height,
                );
                if self.refresh_in_place {
                    write!(self.out, "\x1b[H\x1b[2J{text}")?;
                } else {
                    writeln!(self.out, "{text}")?;
                }
            }
        }
        self.out.flush()?;
        Ok(())
    }

    /// Flushes everything.
    pub fn finish(&mut self) -> Result<()> {
        if let Some(sql) = &mut self.sql {
            sql.finish()?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// A `DateTime` (local or UTC) as the calendar fields the CSV writer takes.
pub fn system_time<Z: chrono::TimeZone>(t: &DateTime<Z>) -> SystemTime {
    SystemTime {
        year: t.year().clamp(0, 9999) as u16,
        month: t.month() as u16,
        day_of_week: t.weekday().num_days_from_sunday() as u16,
        day: t.day() as u16,
        hour: t.hour() as u16,
        minute: t.minute() as u16,
        second: t.second().min(59) as u16,
        milliseconds: (t.nanosecond() / 1_000_000).min(999) as u16,
    }
}

/// The rows of the live table.
fn table_rows(query: &Query, values: &[CounterValue]) -> Vec<Row> {
    query
        .counters()
        .iter()
        .zip(values)
        .map(|(c, v)| {
            let unit = Unit::of(c.counter_name(), c.counter_type.suffix());
            let (value, unit) = match v.value() {
                Some(x) => unit.cells(x),
                None => (format!("({})", v.status().description()), String::new()),
            };
            Row {
                value,
                unit,
                path: c.path_string(),
            }
        })
        .collect()
}
