//! SQL logs in SQLite: the schema typeperf and relog write through ODBC (`DisplayToID`,
//! `CounterDetails`, `CounterData`), in a database file that several logs share, each told apart by
//! its name (`SQL:file.db!name`).
//!
//! The tables as created (see `docs/logs.md` for every choice):
//!
//! ```sql
//! CREATE TABLE DisplayToID (GUID TEXT NOT NULL PRIMARY KEY, RunID INTEGER,
//!     DisplayString TEXT NOT NULL UNIQUE, LogStartTime TEXT, LogStopTime TEXT,
//!     NumberOfRecords INTEGER, MinutesToUTC INTEGER, TimeZoneName TEXT);
//! CREATE TABLE CounterDetails (CounterID INTEGER PRIMARY KEY, MachineName TEXT NOT NULL,
//!     ObjectName TEXT NOT NULL, CounterName TEXT NOT NULL, CounterType INTEGER NOT NULL,
//!     DefaultScale INTEGER NOT NULL, InstanceName TEXT, InstanceIndex INTEGER, ParentName TEXT,
//!     ParentObjectID INTEGER, TimeBaseA INTEGER, TimeBaseB INTEGER);
//! CREATE TABLE CounterData (GUID TEXT NOT NULL, CounterID INTEGER NOT NULL,
//!     RecordIndex INTEGER NOT NULL, CounterDateTime TEXT NOT NULL, CounterValue REAL,
//!     FirstValueA INTEGER, FirstValueB INTEGER, SecondValueA INTEGER, SecondValueB INTEGER,
//!     MultiCount INTEGER, PRIMARY KEY (GUID, RecordIndex, CounterID)) WITHOUT ROWID;
//! CREATE TABLE LogCounters (GUID TEXT NOT NULL, Position INTEGER NOT NULL,
//!     CounterID INTEGER NOT NULL, PRIMARY KEY (GUID, Position)) WITHOUT ROWID;
//! ```
//!
//! `LogCounters` is this crate's addition: the columns of each log in their order, so a log keeps
//! its columns even without records and a reader needs no scan of `CounterData` to find them.
//! Databases without it (or a log without rows in it) are read with the columns their `CounterData`
//! uses, by ascending `CounterID`.
//!
//! * Every cell of every record is a `CounterData` row, a blank one with `CounterValue` `NULL`, so
//!   that every time stamp and every blank survive; raw values are stored when the cell has them.
//! * Each log gets its own `CounterDetails` rows; appending to a log reuses its rows and adds new
//!   columns at the end.
//! * Writing happens in one transaction: a failed run leaves the database as it was.
//! * The reader streams: a worker thread runs one query ordered by `RecordIndex` (the primary key's
//!   order) and hands over rows in bounded batches.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use super::error::{Location, LogError};
use super::model::{
    Cell, LogCounter, LogHeader, LogKind, LogReader, LogTime, LogWriter, Record, TimeZone,
};
use super::sql_rows::{
    decode_data_row, decode_details_row, format_sql_time, split_halves, DataRow, DetailsColumns,
    DetailsRow, SqlValue,
};

/// `SQL:file.db!log`: a database file and the name of a log in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlTarget {
    /// The SQLite database file.
    pub path: PathBuf,
    /// The log's name (`DisplayToID.DisplayString`); `None` when not given.
    pub log: Option<String>,
}

impl SqlTarget {
    /// Parses `SQL:file.db!log` (the prefix case-insensitive; `!log` optional). `None` when `s`
    /// does not start with `SQL:`.
    pub fn parse(s: &str) -> Option<SqlTarget> {
        let rest = s
            .get(..4)
            .filter(|p| p.eq_ignore_ascii_case("SQL:"))
            .and(s.get(4..))?;
        let (path, log) = match rest.rsplit_once('!') {
            Some((p, l)) => (p, Some(l.to_owned()).filter(|l| !l.is_empty())),
            None => (rest, None),
        };
        Some(SqlTarget {
            path: PathBuf::from(path),
            log,
        })
    }

    /// `SQL:path!log`, for messages.
    pub fn display(&self) -> String {
        match &self.log {
            Some(l) => format!("SQL:{}!{l}", self.path.display()),
            None => format!("SQL:{}", self.path.display()),
        }
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS DisplayToID (
    GUID TEXT NOT NULL PRIMARY KEY,
    RunID INTEGER,
    DisplayString TEXT NOT NULL UNIQUE,
    LogStartTime TEXT,
    LogStopTime TEXT,
    NumberOfRecords INTEGER,
    MinutesToUTC INTEGER,
    TimeZoneName TEXT
);
CREATE TABLE IF NOT EXISTS CounterDetails (
    CounterID INTEGER PRIMARY KEY,
    MachineName TEXT NOT NULL,
    ObjectName TEXT NOT NULL,
    CounterName TEXT NOT NULL,
    CounterType INTEGER NOT NULL,
    DefaultScale INTEGER NOT NULL,
    InstanceName TEXT,
    InstanceIndex INTEGER,
    ParentName TEXT,
    ParentObjectID INTEGER,
    TimeBaseA INTEGER,
    TimeBaseB INTEGER
);
CREATE TABLE IF NOT EXISTS CounterData (
    GUID TEXT NOT NULL,
    CounterID INTEGER NOT NULL,
    RecordIndex INTEGER NOT NULL,
    CounterDateTime TEXT NOT NULL,
    CounterValue REAL,
    FirstValueA INTEGER,
    FirstValueB INTEGER,
    SecondValueA INTEGER,
    SecondValueB INTEGER,
    MultiCount INTEGER,
    PRIMARY KEY (GUID, RecordIndex, CounterID)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS LogCounters (
    GUID TEXT NOT NULL,
    Position INTEGER NOT NULL,
    CounterID INTEGER NOT NULL,
    PRIMARY KEY (GUID, Position)
) WITHOUT ROWID;
";

fn sql_err(source: &str) -> impl Fn(rusqlite::Error) -> LogError + '_ {
    move |e| LogError::new(source, None, e)
}

fn value_ref(v: ValueRef<'_>) -> SqlValue<'_> {
    match v {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(r) => SqlValue::Real(r),
        ValueRef::Text(t) => SqlValue::Text(t),
        ValueRef::Blob(b) => SqlValue::Blob(b),
    }
}

/// The names of the logs in a database, in the order they were created.
pub fn list_logs(path: &Path) -> Result<Vec<String>, LogError> {
    let source = format!("SQL:{}", path.display());
    let conn = open_read_only(path, &source)?;
    let mut stmt = conn
        .prepare("SELECT DisplayString FROM DisplayToID ORDER BY rowid")
        .map_err(sql_err(&source))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sql_err(&source))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(sql_err(&source))?;
    Ok(names)
}

fn open_read_only(path: &Path, source: &str) -> Result<Connection, LogError> {
    if !path.is_file() {
        return Err(LogError::usage(source, "no such database file"));
    }
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err(source))
}

/// How [`SqlLogWriter::create`] treats a log of the same name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SqlWriteOptions {
    /// Add the records to the existing log (relog `-a`).
    pub append: bool,
    /// Replace the existing log (relog `-y`).
    pub overwrite: bool,
}

/// Rows of `CounterData` per `INSERT` statement: one statement binds the log GUID, the record index
/// and the time once and then [`PARAMS_PER_ROW`] values per row.
const ROWS_PER_INSERT: usize = 250;
const PARAMS_PER_ROW: usize = 7;

/// `INSERT INTO CounterData … VALUES (…), (…)` for `rows` rows; without `raw`, the raw columns are
/// `NULL` in the statement itself and each row binds only `CounterID` and `CounterValue`.
fn insert_statement(rows: usize, raw: bool) -> String {
    let mut sql = String::from(
        "INSERT INTO CounterData (GUID, RecordIndex, CounterDateTime, CounterID, CounterValue, \
         FirstValueA, FirstValueB, SecondValueA, SecondValueB, MultiCount) VALUES ",
    );
    for row in 0..rows {
        let p = 4 + row * PARAMS_PER_ROW;
        if row > 0 {
            sql.push(',');
        }
        if raw {
            sql.push_str(&format!(
                "(?1, ?2, ?3, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
                p,
                p + 1,
                p + 2,
                p + 3,
                p + 4,
                p + 5,
                p + 6
            ));
        } else {
            sql.push_str(&format!(
                "(?1, ?2, ?3, ?{}, ?{}, NULL, NULL, NULL, NULL, NULL)",
                p,
                p + 1
            ));
        }
    }
    sql
}

/// Writes one log into a database (created if needed, shared with other logs).
pub struct SqlLogWriter {
    conn: Connection,
    insert_sql: HashMap<(usize, bool), String>,
    source: String,
    log: String,
    options: SqlWriteOptions,
    guid: String,
    ids: Vec<i64>,
    next_record: i64,
    first: Option<LogTime>,
    last: Option<LogTime>,
    records: i64,
    time_text: String,
}

impl std::fmt::Debug for SqlLogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlLogWriter")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// A new log GUID: 128 bits from the standard library's randomly seeded hasher, time and process id,
/// formatted as SQL Server writes a `uniqueidentifier` (upper case, version 4 bits set).
fn new_guid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut halves = [0u64; 2];
    for (i, h) in halves.iter_mut().enumerate() {
        let mut s = std::collections::hash_map::RandomState::new().build_hasher();
        s.write_u128(now);
        s.write_u32(std::process::id());
        s.write_usize(i);
        *h = s.finish();
    }
    let b = (u128::from(halves[0]) << 64 | u128::from(halves[1])) & !(0xF << 76) & !(0x3 << 62)
        | (0x4 << 76)
        | (0x2 << 62);
    let x = format!("{b:032X}");
    format!(
        "{}-{}-{}-{}-{}",
        &x[0..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..32]
    )
}

impl SqlLogWriter {
    /// Opens (or creates) the database at `path` for the log named `log`.
    pub fn create(path: &Path, log: &str, options: SqlWriteOptions) -> Result<Self, LogError> {
        let source = format!("SQL:{}!{log}", path.display());
        if log.is_empty() {
            return Err(LogError::usage(&source, "name the log: SQL:file.db!name"));
        }
        let conn = Connection::open(path).map_err(sql_err(&source))?;
        conn.execute_batch(
            "PRAGMA page_size = 16384; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536; \
             PRAGMA temp_store = MEMORY;",
        )
        .map_err(sql_err(&source))?;
        Ok(SqlLogWriter {
            conn,
            insert_sql: HashMap::new(),
            source,
            log: log.to_owned(),
            options,
            guid: String::new(),
            ids: Vec::new(),
            next_record: 1,
            first: None,
            last: None,
            records: 0,
            time_text: String::new(),
        })
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> LogError + '_ {
        sql_err(&self.source)
    }

    fn details_id(&self, c: &LogCounter) -> Result<i64, LogError> {
        let d = DetailsColumns::of(c);
        let (ta, tb) = d.time_base.unzip();
        self.conn
            .prepare_cached(
                "INSERT INTO CounterDetails (MachineName, ObjectName, CounterName, CounterType,
                 DefaultScale, InstanceName, InstanceIndex, ParentName, ParentObjectID, TimeBaseA,
                 TimeBaseB) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, ?9, ?10)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    d.machine,
                    d.object,
                    d.counter,
                    d.counter_type,
                    d.default_scale,
                    d.instance,
                    d.index,
                    d.parent,
                    ta,
                    tb
                ])
            })
            .map_err(self.err())?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The columns an existing log uses, with their paths.
    fn existing_columns(&self, guid: &str) -> Result<Vec<(i64, String)>, LogError> {
        let reader_cols = read_columns(&self.conn, guid, &self.source)?;
        Ok(reader_cols
            .into_iter()
            .map(|(id, c)| (id, c.key()))
            .collect())
    }
}

impl SqlLogWriter {
    /// Commits what was written so far (and updates the log's `DisplayToID` row), then goes on in a
    /// new transaction: a writer fed live collections calls it so that an interrupted run keeps its
    /// records.
    pub fn checkpoint(&mut self) -> Result<(), LogError> {
        self.update_display()?;
        self.conn.execute_batch("COMMIT; BEGIN").map_err(self.err())
    }

    fn update_display(&self) -> Result<(), LogError> {
        self.conn
            .execute(
                "UPDATE DisplayToID SET LogStartTime = ?2, LogStopTime = ?3, NumberOfRecords = ?4
                 WHERE GUID = ?1",
                params![
                    self.guid,
                    self.first.and_then(format_sql_time),
                    self.last.and_then(format_sql_time),
                    self.records
                ],
            )
            .map(|_| ())
            .map_err(self.err())
    }
}

impl LogWriter for SqlLogWriter {
    fn write_header(&mut self, header: &LogHeader) -> Result<(), LogError> {
        self.conn.execute_batch(SCHEMA).map_err(self.err())?;
        self.conn.execute_batch("BEGIN").map_err(self.err())?;
        let existing: Option<(String, Option<i64>)> = self
            .conn
            .query_row(
                "SELECT GUID, NumberOfRecords FROM DisplayToID WHERE DisplayString = ?1",
                [&self.log],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.err())?;
        let mut known: HashMap<String, i64> = HashMap::new();
        let is_new = !(existing.is_some() && self.options.append);
        match existing {
            Some((guid, _)) if self.options.append => {
                for (id, name) in self.existing_columns(&guid)? {
                    known.entry(name).or_insert(id);
                }
                let max: Option<i64> = self
                    .conn
                    .query_row(
                        "SELECT MAX(RecordIndex) FROM CounterData WHERE GUID = ?1",
                        [&guid],
                        |r| r.get(0),
                    )
                    .map_err(self.err())?;
                self.next_record = max.unwrap_or(0).saturating_add(1);
                let (start, stop): (Option<String>, Option<String>) = self
                    .conn
                    .query_row(
                        "SELECT LogStartTime, LogStopTime FROM DisplayToID WHERE GUID = ?1",
                        [&guid],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .map_err(self.err())?;
                let parse = |s: Option<String>| {
                    s.and_then(|s| super::sql_rows::parse_sql_time(s.as_bytes()))
                };
                self.first = parse(start);
                self.last = parse(stop);
                self.records = self.next_record - 1;
                self.guid = guid;
            }
            Some((guid, _)) if self.options.overwrite => {
                self.conn
                    .execute("DELETE FROM CounterData WHERE GUID = ?1", [&guid])
                    .map_err(self.err())?;
                self.conn
                    .execute("DELETE FROM DisplayToID WHERE GUID = ?1", [&guid])
                    .map_err(self.err())?;
                self.conn
                    .execute("DELETE FROM LogCounters WHERE GUID = ?1", [&guid])
                    .map_err(self.err())?;
                self.guid = new_guid();
            }
            Some(_) => {
                return Err(LogError::usage(
                    &self.source,
                    "the database already holds a log of this name; append to it (-a) or replace it (-y)",
                ))
            }
            None => self.guid = new_guid(),
        }
        if is_new {
            let zone = header.time_zone.as_ref();
            self.conn
                .execute(
                    "INSERT INTO DisplayToID (GUID, RunID, DisplayString, LogStartTime, LogStopTime,
                     NumberOfRecords, MinutesToUTC, TimeZoneName) VALUES (?1, 0, ?2, NULL, NULL, 0, ?3, ?4)",
                    params![
                        self.guid,
                        self.log,
                        zone.and_then(|z| z.bias),
                        zone.map(|z| z.name.as_str())
                    ],
                )
                .map_err(self.err())?;
        }
        self.ids.clear();
        let mut position: i64 = self
            .conn
            .query_row(
                "SELECT IFNULL(MAX(Position), -1) + 1 FROM LogCounters WHERE GUID = ?1",
                [&self.guid],
                |r| r.get(0),
            )
            .map_err(self.err())?;
        for c in &header.counters {
            let key = c.key();
            let id = match known.remove(&key) {
                Some(id) => id,
                None => {
                    let id = self.details_id(c)?;
                    self.conn
                        .execute(
                            "INSERT INTO LogCounters (GUID, Position, CounterID) VALUES (?1, ?2, ?3)",
                            params![self.guid, position, id],
                        )
                        .map_err(self.err())?;
                    position += 1;
                    id
                }
            };
            self.ids.push(id);
        }
        Ok(())
    }

    fn write_record(&mut self, record: &Record) -> Result<(), LogError> {
        // Records hold UTC instants, which is what `CounterDateTime` stores.
        self.time_text = format_sql_time(record.time).ok_or_else(|| {
            LogError::usage(
                &self.source,
                format!("time {} is out of range", record.time.0),
            )
        })?;
        let index = self.next_record;
        let source = &self.source;
        let mut cells = record.cells.iter().zip(&self.ids).peekable();
        while cells.peek().is_some() {
            let chunk: Vec<(&Cell, &i64)> = cells.by_ref().take(ROWS_PER_INSERT).collect();
            let with_raw = chunk
                .iter()
                .any(|(c, _)| matches!(c, Cell::Raw(rc, _) if rc.status.is_success()));
            let sql = self
                .insert_sql
                .entry((chunk.len(), with_raw))
                .or_insert_with_key(|&(n, raw)| insert_statement(n, raw));
            let mut stmt = self.conn.prepare_cached(sql).map_err(sql_err(source))?;
            let bind = |stmt: &mut rusqlite::CachedStatement<'_>| -> rusqlite::Result<()> {
                stmt.raw_bind_parameter(1, &self.guid)?;
                stmt.raw_bind_parameter(2, index)?;
                stmt.raw_bind_parameter(3, &self.time_text)?;
                for (row, (cell, &id)) in chunk.iter().enumerate() {
                    let raw = match cell {
                        Cell::Raw(rc, _) if rc.status.is_success() => Some(rc.raw),
                        _ => None,
                    };
                    let (fa, fb) = raw.map(|r| split_halves(r.first)).unzip();
                    let (sa, sb) = raw.map(|r| split_halves(r.second)).unzip();
                    let value = match cell {
                        Cell::Raw(rc, _) if !rc.status.is_success() => None,
                        other => other.value(),
                    };
                    let p = 4 + row * PARAMS_PER_ROW;
                    stmt.raw_bind_parameter(p, id)?;
                    stmt.raw_bind_parameter(p + 1, value)?;
                    if !with_raw {
                        continue;
                    }
                    stmt.raw_bind_parameter(p + 2, fa)?;
                    stmt.raw_bind_parameter(p + 3, fb)?;
                    stmt.raw_bind_parameter(p + 4, sa)?;
                    stmt.raw_bind_parameter(p + 5, sb)?;
                    stmt.raw_bind_parameter(p + 6, raw.map(|r| i64::from(r.multi_count)))?;
                }
                stmt.raw_execute().map(|_| ())
            };
            bind(&mut stmt).map_err(sql_err(source))?;
        }
        self.next_record += 1;
        self.records += 1;
        let utc = record.time;
        self.first = Some(self.first.map_or(utc, |f| f.min(utc)));
        self.last = Some(self.last.map_or(utc, |l| l.max(utc)));
        Ok(())
    }

    fn finish(&mut self) -> Result<(), LogError> {
        self.update_display()?;
        self.conn.execute_batch("COMMIT").map_err(self.err())
    }

    fn checkpoint(&mut self) -> Result<(), LogError> {
        SqlLogWriter::checkpoint(self)
    }
}

/// Whether `table` has a column `column`.
fn has_column(
    conn: &Connection,
    table: &str,
    column: &str,
    source: &str,
) -> Result<bool, LogError> {
    let mut s = conn
        .prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")
        .map_err(sql_err(source))?;
    s.exists([table, column]).map_err(sql_err(source))
}

/// Whether `LogCounters` lists the columns of the log `guid`.
fn listed(conn: &Connection, guid: &str, source: &str) -> Result<bool, LogError> {
    Ok(has_column(conn, "LogCounters", "Position", source)?
        && conn
            .prepare("SELECT 1 FROM LogCounters WHERE GUID = ?1")
            .and_then(|mut s| s.exists([guid]))
            .map_err(sql_err(source))?)
}

/// The query of [`SqlLogReader::open_times`]: each record's `RecordIndex`, the `CounterID` and the
/// `CounterDateTime` of its first row (by `CounterID`) among the rows of the log's columns (those
/// `LogCounters` lists, or those with a `CounterDetails` row, as [`read_columns`] finds them), in
/// `RecordIndex` order. The records are found by seeking the primary key from one `RecordIndex` to
/// the next, so a record costs a few index lookups whatever its number of rows.
fn times_query(listed: bool) -> String {
    let column = if listed {
        "CounterID IN (SELECT l.CounterID FROM LogCounters l JOIN CounterDetails d
         ON d.CounterID = l.CounterID WHERE l.GUID = ?1)"
    } else {
        "CounterID IN (SELECT CounterID FROM CounterDetails)"
    };
    format!(
        "WITH RECURSIVE r(i) AS (
             SELECT MIN(RecordIndex) FROM CounterData WHERE GUID = ?1 AND {column}
             UNION ALL
             SELECT (SELECT MIN(RecordIndex) FROM CounterData
                     WHERE GUID = ?1 AND RecordIndex > r.i AND {column})
             FROM r WHERE r.i IS NOT NULL)
         SELECT f.i, f.id, c.CounterDateTime FROM
             (SELECT i, (SELECT CounterID FROM CounterData WHERE GUID = ?1 AND RecordIndex = r.i
                         AND {column} ORDER BY CounterID LIMIT 1) AS id
              FROM r WHERE r.i IS NOT NULL) f
         JOIN CounterData c ON c.GUID = ?1 AND c.RecordIndex = f.i AND c.CounterID = f.id
         ORDER BY f.i"
    )
}

/// The columns of a log: from `LogCounters` when it lists them, otherwise every `CounterDetails`
/// row the log's `CounterData` uses, by ascending `CounterID`.
fn read_columns(
    conn: &Connection,
    guid: &str,
    source: &str,
) -> Result<Vec<(i64, LogCounter)>, LogError> {
    let tb = if has_column(conn, "CounterDetails", "TimeBaseA", source)?
        && has_column(conn, "CounterDetails", "TimeBaseB", source)?
    {
        "d.TimeBaseA, d.TimeBaseB"
    } else {
        "NULL, NULL"
    };
    let listed = listed(conn, guid, source)?;
    let columns = "d.CounterID, d.MachineName, d.ObjectName, d.CounterName, d.CounterType,
         d.DefaultScale, d.InstanceName, d.InstanceIndex, d.ParentName";
    let sql = if listed {
        format!(
            "SELECT {columns}, {tb} FROM LogCounters l JOIN CounterDetails d
             ON d.CounterID = l.CounterID WHERE l.GUID = ?1 ORDER BY l.Position"
        )
    } else {
        format!(
            "SELECT {columns}, {tb} FROM CounterDetails d
             WHERE d.CounterID IN (SELECT DISTINCT CounterID FROM CounterData WHERE GUID = ?1)
             ORDER BY d.CounterID"
        )
    };
    let mut stmt = conn.prepare(&sql).map_err(sql_err(source))?;
    let mut rows = stmt.query([guid]).map_err(sql_err(source))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(sql_err(source))? {
        let id: i64 = r.get(0).map_err(sql_err(source))?;
        let mut vals = [SqlValue::Null; 10];
        for (i, v) in vals.iter_mut().enumerate() {
            *v = value_ref(r.get_ref(i + 1).map_err(sql_err(source))?);
        }
        let row: &DetailsRow = &vals;
        let c = decode_details_row(row).map_err(|m| {
            LogError::invalid(
                source,
                Some(Location::Row {
                    table: "CounterDetails",
                    key: format!("CounterID {id}"),
                }),
                m,
            )
        })?;
        out.push((id, c));
    }
    Ok(out)
}

/// The rows the worker hands over: record index, column, time (UTC), cell.
type Batch = Vec<(i64, usize, LogTime, Cell)>;

/// The error that ends the worker's rows, with the `RecordIndex` of the row it concerns when it
/// is a row's (the records before it are whole), `None` when it is the database's.
type RowsError = (Option<i64>, LogError);

/// The worker's rows, handed over in batches of [`BATCH_ROWS`] as they fill.
struct RowSender<'a> {
    tx: &'a SyncSender<Result<Batch, RowsError>>,
    batch: Batch,
}

impl<'a> RowSender<'a> {
    fn new(tx: &'a SyncSender<Result<Batch, RowsError>>) -> Self {
        RowSender {
            tx,
            batch: Vec::with_capacity(BATCH_ROWS),
        }
    }

    /// Adds a row, sending the batch when it is full: false when the reader is gone.
    fn push(&mut self, row: (i64, usize, LogTime, Cell)) -> bool {
        self.batch.push(row);
        if self.batch.len() < BATCH_ROWS {
            return true;
        }
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_ROWS));
        self.tx.send(Ok(full)).is_ok()
    }

    /// Sends the rows not sent yet (before the end, or before an error).
    fn flush(&mut self) {
        if !self.batch.is_empty() {
            let _ = self.tx.send(Ok(std::mem::take(&mut self.batch)));
        }
    }
}

/// The error of the `CounterData` row of `id` in record `record`.
fn data_row_error(source: &str, id: i64, record: i64, message: String) -> LogError {
    LogError::invalid(
        source,
        Some(Location::Row {
            table: "CounterData",
            key: format!("CounterID {id}, RecordIndex {record}"),
        }),
        message,
    )
}

/// The worker of [`SqlLogReader::open_times`]: each record's time ([`times_query`]), sent in
/// batches of rows without a column.
fn send_times(
    conn: &Connection,
    guid: &str,
    source: &str,
    tx: &SyncSender<Result<Batch, RowsError>>,
    bad: &mut Option<i64>,
) -> Result<(), LogError> {
    let sql = times_query(listed(conn, guid, source)?);
    let mut stmt = conn.prepare(&sql).map_err(sql_err(source))?;
    let mut rows = stmt.query([guid]).map_err(sql_err(source))?;
    let mut out = RowSender::new(tx);
    while let Some(r) = rows.next().map_err(sql_err(source))? {
        let record: i64 = r.get(0).map_err(sql_err(source))?;
        let id: i64 = r.get(1).map_err(sql_err(source))?;
        let mut vals = [SqlValue::Null; 7];
        vals[0] = value_ref(r.get_ref(2).map_err(sql_err(source))?);
        let row: &DataRow = &vals;
        let time = match decode_data_row(row) {
            Ok((time, _)) => time,
            Err(m) => {
                // The records before the bad one are still delivered.
                out.flush();
                *bad = Some(record);
                return Err(data_row_error(source, id, record, m));
            }
        };
        if !out.push((record, usize::MAX, time, Cell::Blank)) {
            return Ok(());
        }
    }
    out.flush();
    Ok(())
}

/// Reads one log of a database, streaming.
pub struct SqlLogReader {
    path: PathBuf,
    guid: String,
    header: LogHeader,
    columns: HashMap<i64, usize>,
    keep: Option<Vec<bool>>,
    rx: Option<Receiver<Result<Batch, RowsError>>>,
    batch: std::vec::IntoIter<(i64, usize, LogTime, Cell)>,
    pending: Option<(i64, usize, LogTime, Cell)>,
    done: bool,
    warnings: Vec<String>,
    /// Records' times alone ([`SqlLogReader::open_times`]).
    times_only: bool,
    /// The error met after a record's last row, given at the next call (the record first).
    failed: Option<LogError>,
}

impl std::fmt::Debug for SqlLogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlLogReader")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

const BATCH_ROWS: usize = 16 * 1024;

impl SqlLogReader {
    /// Opens the log `log` of the database `path`; without a name, the database must hold exactly
    /// one log.
    pub fn open(path: &Path, log: Option<&str>) -> Result<Self, LogError> {
        let target = SqlTarget {
            path: path.to_owned(),
            log: log.map(str::to_owned),
        };
        let mut source = target.display();
        let conn = open_read_only(path, &source)?;
        let logs = list_logs(path)?;
        let name = match log {
            Some(l) => {
                if !logs.iter().any(|n| n == l) {
                    return Err(LogError::usage(
                        &source,
                        if logs.is_empty() {
                            "the database holds no log".to_string()
                        } else {
                            format!(
                                "no log of this name; the database holds {}",
                                logs.join(", ")
                            )
                        },
                    ));
                }
                l.to_owned()
            }
            None => match logs.as_slice() {
                [one] => one.clone(),
                [] => return Err(LogError::usage(&source, "the database holds no log")),
                many => {
                    return Err(LogError::usage(
                        &source,
                        format!("name the log (SQL:file.db!name): {}", many.join(", ")),
                    ))
                }
            },
        };
        source = format!("SQL:{}!{name}", path.display());
        let (guid, bias, zone): (String, Option<i64>, Option<String>) = conn
            .query_row(
                "SELECT GUID, MinutesToUTC, TimeZoneName FROM DisplayToID WHERE DisplayString = ?1",
                [&name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sql_err(&source))?;
        let bias32 = match bias {
            None => None,
            Some(b) => Some(
                i32::try_from(b)
                    .ok()
                    .filter(|b| (-1440..=1440).contains(b))
                    .ok_or_else(|| {
                        LogError::invalid(
                            &source,
                            Some(Location::Row {
                                table: "DisplayToID",
                                key: format!("GUID {guid}"),
                            }),
                            format!("MinutesToUTC {b} is out of range (±1440)"),
                        )
                    })?,
            ),
        };
        let mut warnings = Vec::new();
        let time_zone = match (zone, bias32) {
            (None, None) => None,
            (name, bias) => {
                let (zone, warning) = TimeZone::named(&name.unwrap_or_default(), bias);
                warnings.extend(warning.map(|w| format!("{source}: {w}")));
                Some(zone)
            }
        };
        let cols = read_columns(&conn, &guid, &source)?;
        let columns = cols
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (*id, i))
            .collect();
        Ok(SqlLogReader {
            path: path.to_owned(),
            guid,
            header: LogHeader {
                source,
                kind: LogKind::Sql,
                time_zone,
                counters: cols.into_iter().map(|(_, c)| c).collect(),
            },
            columns,
            keep: None,
            rx: None,
            batch: Vec::new().into_iter(),
            pending: None,
            done: false,
            warnings,
            times_only: false,
            failed: None,
        })
    }

    /// Opens the log `log` of the database `path` (as [`open`](Self::open) does) for its records'
    /// times alone, what `analyze --interval auto` reads first: a header with the log's source,
    /// kind and time zone and **no columns**, and records with the times [`open`](Self::open)'s
    /// records have, in the same order, and no cell. Each record's time is read from one row
    /// (its first, as the full reader takes it), not from each of its cells' rows; a damaged time
    /// in another row is met by a full read only.
    pub fn open_times(path: &Path, log: Option<&str>) -> Result<Self, LogError> {
        let mut reader = SqlLogReader::open(path, log)?;
        reader.header.counters.clear();
        reader.columns.clear();
        reader.times_only = true;
        Ok(reader)
    }

    /// Starts the reading thread. It is one thread, not the logs' ordered worker pool
    /// (`log::pool`): the rows come from one SQLite statement stepped in `RecordIndex` order on
    /// one connection, so there are no items to map on several threads, only a stream to hand
    /// over in bounded batches.
    fn start(&mut self) {
        let (tx, rx) = sync_channel::<Result<Batch, RowsError>>(4);
        let path = self.path.clone();
        let guid = self.guid.clone();
        let source = self.header.source.clone();
        let columns = self.columns.clone();
        let keep = self.keep.clone();
        let times_only = self.times_only;
        std::thread::spawn(move || {
            // The record of the row that ended the reading, if a row did.
            let mut bad = None;
            let mut run = || -> Result<(), LogError> {
                let conn = open_read_only(&path, &source)?;
                if times_only {
                    return send_times(&conn, &guid, &source, &tx, &mut bad);
                }
                let has_multi = has_column(&conn, "CounterData", "MultiCount", &source)?;
                let sql = format!(
                    "SELECT RecordIndex, CounterID, CounterDateTime, CounterValue, FirstValueA,
                     FirstValueB, SecondValueA, SecondValueB, {} FROM CounterData WHERE GUID = ?1
                     ORDER BY RecordIndex, CounterID",
                    if has_multi { "MultiCount" } else { "NULL" }
                );
                let mut stmt = conn.prepare(&sql).map_err(sql_err(&source))?;
                let mut rows = stmt.query([&guid]).map_err(sql_err(&source))?;
                let mut out = RowSender::new(&tx);
                while let Some(r) = rows.next().map_err(sql_err(&source))? {
                    let record: i64 = r.get(0).map_err(sql_err(&source))?;
                    let id: i64 = r.get(1).map_err(sql_err(&source))?;
                    let Some(&col) = columns.get(&id) else {
                        continue;
                    };
                    let wanted = keep
                        .as_ref()
                        .is_none_or(|k| k.get(col).copied().unwrap_or(false));
                    let mut vals = [SqlValue::Null; 7];
                    let get = |i: usize| r.get_ref(i).map(value_ref).map_err(sql_err(&source));
                    if wanted {
                        for (i, v) in vals.iter_mut().enumerate() {
                            *v = get(i + 2)?;
                        }
                    } else {
                        vals[0] = get(2)?;
                    }
                    let row: &DataRow = &vals;
                    let (time, cell) = match decode_data_row(row) {
                        Ok(d) => d,
                        Err(m) => {
                            // The rows before the bad one are still delivered.
                            out.flush();
                            bad = Some(record);
                            return Err(data_row_error(&source, id, record, m));
                        }
                    };
                    if !out.push((record, col, time, if wanted { cell } else { Cell::Blank })) {
                        return Ok(());
                    }
                }
                out.flush();
                Ok(())
            };
            if let Err(e) = run() {
                let _ = tx.send(Err((bad, e)));
            }
        });
        self.rx = Some(rx);
    }

    fn next_row(&mut self) -> Result<Option<(i64, usize, LogTime, Cell)>, RowsError> {
        if let Some(p) = self.pending.take() {
            return Ok(Some(p));
        }
        loop {
            if let Some(r) = self.batch.next() {
                return Ok(Some(r));
            }
            let Some(rx) = &self.rx else {
                return Ok(None);
            };
            match rx.recv() {
                Ok(Ok(b)) => self.batch = b.into_iter(),
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(None),
            }
        }
    }
}

impl LogReader for SqlLogReader {
    fn header(&self) -> &LogHeader {
        &self.header
    }

    /// What the reader noticed without failing: a `TimeZoneName` it has no rules for (local times
    /// are then derived with the fixed `MinutesToUTC`), one message each.
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn select_columns(&mut self, keep: &[bool]) {
        self.keep = Some(keep.to_vec());
    }

    fn read_record(&mut self, record: &mut Record) -> Result<bool, LogError> {
        if self.done {
            return Ok(false);
        }
        if self.rx.is_none() {
            self.start();
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let Some((index, col, time, cell)) = self.next_row().map_err(|(_, e)| e)? else {
            self.done = true;
            return Ok(false);
        };
        // `CounterDateTime` is UTC: the record's time as it is.
        record.time = time;
        record.cells.clear();
        record.cells.resize(self.header.counters.len(), Cell::Blank);
        if let Some(c) = record.cells.get_mut(col) {
            *c = cell;
        }
        loop {
            let row = match self.next_row() {
                Ok(Some(row)) => row,
                Ok(None) => break,
                // A later record's row: this record is whole and comes first, the error at
                // the next call. A row of this record, or the database: the record is not whole.
                Err((Some(bad), e)) if bad != index => {
                    self.failed = Some(e);
                    break;
                }
                Err((_, e)) => return Err(e),
            };
            if row.0 != index {
                self.pending = Some(row);
                break;
            }
            if let Some(c) = record.cells.get_mut(row.1) {
                *c = row.3;
            }
        }
        Ok(true)
    }
}
