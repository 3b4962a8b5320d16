//! PDH-CSV / PDH-TSV logs: built the way Windows writes them, and the real ones in `../shared/data/logs`.
// Literals are written digit for digit as Windows writes them.
#![allow(clippy::excessive_precision)]

use std::io::Cursor;
use std::path::PathBuf;

use perfcounters::log::{
    Cell, CsvFlavor, CsvReadOptions, LogHeader, LogKind, LogReader, LogTime, LogWriter,
    PdhCsvLogWriter, PdhCsvReader, Record, TimeZone,
};

/// `../shared/data` beside the repository root (`PERFCOUNTERS_SHARED_DATA` names another place, for a
/// worktree that lives elsewhere).
fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PERFCOUNTERS_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
        });
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: {} is absent (the real Windows logs live beside the repository)",
            dir.display()
        );
        None
    }
}

fn read_bytes(bytes: Vec<u8>, opts: CsvReadOptions) -> Result<(LogHeader, Vec<Record>), String> {
    let mut r =
        PdhCsvReader::new(Cursor::new(bytes), "test.csv", opts).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut rec = Record::default();
    while r.read_record(&mut rec).map_err(|e| e.to_string())? {
        out.push(rec.clone());
    }
    Ok((r.header().clone(), out))
}

fn read(text: &str) -> Result<(LogHeader, Vec<Record>), String> {
    read_bytes(text.as_bytes().to_vec(), CsvReadOptions::default())
}

fn t(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, ms: u32) -> LogTime {
    LogTime::from_parts(y, mo, d, h, mi, s, ms).unwrap()
}

fn values(rec: &Record) -> Vec<Option<f64>> {
    rec.cells.iter().map(Cell::value).collect()
}

fn utf16le(s: &str, bom: bool) -> Vec<u8> {
    let mut v = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
    v.extend(s.encode_utf16().flat_map(u16::to_le_bytes));
    v
}

#[test]
fn typeperf_output_with_leading_line_and_closing_messages() {
    let text = "\r\n\"(PDH-CSV 4.0)\",\"\\\\CEBALLOS\\Process(whatsapp)\\Working Set\"\r\n\
                \"11/20/2019 23:01:11.527\",\"176361472.000000\"\r\n\
                \"11/20/2019 23:01:12.530\",\"388.873717\"\r\n\
                Exiting, please wait...\r\nThe command completed successfully.\r\n";
    let (h, rows) = read(text).unwrap();
    assert_eq!(h.kind, LogKind::Csv);
    assert_eq!(h.time_zone, None);
    assert_eq!(h.counters.len(), 1);
    assert_eq!(
        h.counters[0].name,
        r"\\CEBALLOS\Process(whatsapp)\Working Set"
    );
    assert_eq!(h.counters[0].path.instance.as_deref(), Some("whatsapp"));
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].time, t(2019, 11, 20, 23, 1, 11, 527));
    assert_eq!(values(&rows[0]), [Some(176361472.0)]);
    assert_eq!(values(&rows[1]), [Some(388.873717)]);
}

#[test]
fn localized_tsv_in_code_page_1252_with_lf_and_negative_bias() {
    // What a Spanish Windows writes (no BOM, ANSI code page 1252), after a trip through version
    // control that turned CRLF into LF.
    let text = "\"(PDH-TSV 4.0) (Hora de verano romance)(-120)\"\t\"\\\\SRV\\Disco físico(_Total)\\% de tiempo inactivo\"\t\"\\\\SRV\\Procesador(_Total)\\% de tiempo de procesador\"\n\
                \"07/01/2023 10:00:00.000\"\t\" \"\t\"6.9494827586206889356e-005\"\n\
                \"07/01/2023 10:00:15.000\"\t\"97.5\"\t\"12345678901234567168\"\n";
    let (bytes, _, bad) = encoding_rs::WINDOWS_1252.encode(text);
    assert!(!bad);
    assert!(std::str::from_utf8(&bytes).is_err());
    let (h, rows) = read_bytes(bytes.into_owned(), CsvReadOptions::default()).unwrap();
    assert_eq!(h.kind, LogKind::Tsv);
    assert_eq!(
        h.time_zone,
        Some(TimeZone {
            name: "Hora de verano romance".into(),
            bias: Some(-120)
        })
    );
    assert_eq!(h.counters[0].path.object, "Disco físico");
    assert_eq!(h.counters[0].path.counter, "% de tiempo inactivo");
    assert_eq!(values(&rows[0]), [None, Some(6.9494827586206889356e-5)]);
    assert_eq!(values(&rows[1]), [Some(97.5), Some(12345678901234567168.0)]);
    assert_eq!(rows[1].time, t(2023, 7, 1, 10, 0, 15, 0));
}

#[test]
fn cyrillic_code_page_given_and_zone_cut_at_first_non_ascii_character() {
    let text =
        "\"(PDH-CSV 4.0) (RTZ 2 (\",\"\\\\ПК\\Процесс(_Total)\\% загруженности процессора\"\r\n\
                \"01/15/2024 08:00:00.250\",\"3.25\"\r\n";
    let (bytes, _, bad) = encoding_rs::WINDOWS_1251.encode(text);
    assert!(!bad);
    let opts = CsvReadOptions {
        code_page: Some(1251),
    };
    let (h, rows) = read_bytes(bytes.into_owned(), opts).unwrap();
    assert_eq!(
        h.time_zone,
        Some(TimeZone {
            name: "RTZ 2 (".into(),
            bias: None
        })
    );
    assert_eq!(h.counters[0].path.machine.as_deref(), Some("ПК"));
    assert_eq!(h.counters[0].path.object, "Процесс");
    assert_eq!(values(&rows[0]), [Some(3.25)]);
    // The same bytes read as 1252 give other (wrong) letters, but never an error or a shifted column.
    let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(text);
    let (h, _) = read_bytes(bytes.into_owned(), CsvReadOptions::default()).unwrap();
    assert_eq!(h.counters.len(), 1);
    assert_ne!(h.counters[0].path.object, "Процесс");
}

#[test]
fn utf16_with_and_without_bom_and_utf8_with_bom() {
    let text = "\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\",\"\\\\H\\Mémoire\\Octets disponibles\"\r\n\
                \"12/31/2022 23:59:59.999\",\"1024\"\r\n";
    for bytes in [
        utf16le(text, true),
        utf16le(text, false),
        {
            let mut v: Vec<u8> = "\u{feff}".as_bytes().to_vec();
            v.extend_from_slice(text.as_bytes());
            v
        },
        {
            let mut v = vec![0xFE, 0xFF];
            v.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
            v
        },
    ] {
        let (h, rows) = read_bytes(bytes, CsvReadOptions::default()).unwrap();
        assert_eq!(h.counters[0].path.object, "Mémoire");
        assert_eq!(h.time_zone.as_ref().unwrap().bias, Some(-60));
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].time, t(2022, 12, 31, 23, 59, 59, 999));
        assert_eq!(values(&rows[0]), [Some(1024.0)]);
    }
}

#[test]
fn errors_name_file_line_and_column() {
    let head = "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\H\\A\\B\",\"\\\\H\\A\\C\"\r\n";
    let cases = [
        (
            format!("{head}\"01/01/2024 00:00:00.000\",\"1\"\r\n"),
            "test.csv: line 2, column 3: the row has 2 cells, the header 3 (a time stamp and 2 counters)",
        ),
        (
            format!("{head}\"01/01/2024 00:00:00.000\",\"1\",\"2\",\"3\"\r\n"),
            "test.csv: line 2, column 4: the row has 4 cells, the header 3 (a time stamp and 2 counters)",
        ),
        (
            format!("{head}\"01/01/2024 00:00:00.000\",\"1\",\"2\"\r\n\"13/01/2024 00:00:00.000\",\"1\",\"2\"\r\n"),
            "test.csv: line 3, column 1: \"13/01/2024 00:00:00.000\" is not a time stamp MM/DD/YYYY HH:MM:SS.mmm",
        ),
        (
            format!("{head}\"01/01/2024 00:00:00.000\",\"1\",\"x2\"\r\n"),
            "test.csv: line 2, column 3: \"x2\" is not a number (\\\\H\\A\\C)",
        ),
        (
            "\"Time\",\"\\\\H\\A\\B\"\r\n".to_string(),
            "test.csv: line 1, column 1: not a PDH log: the first cell is not \"(PDH-CSV 4.0)\" or \"(PDH-TSV 4.0)\"",
        ),
        (
            "\r\n\r\nhello\r\n".to_string(),
            "test.csv: line 3, column 1: not a PDH log: the first cell is not \"(PDH-CSV 4.0)\" or \"(PDH-TSV 4.0)\"",
        ),
        (
            "\"(PDH-CSV 4.0)\",\"\\\\H\\A\\B\",\"not a path\"\r\n".to_string(),
            "test.csv: line 1, column 3: \"not a path\" is not a counter path: at character 0: expected '\\' at the start of the path, found 'n'",
        ),
        (
            "\"(PDH-CSV 4.0)xyz\"\r\n".to_string(),
            "test.csv: line 1, column 1: unexpected \"xyz\" after \"(PDH-CSV 4.0)\": expected \" (<time zone>)(<bias>)\"",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(read(&text).unwrap_err(), want);
    }
}

#[test]
fn write_then_read_is_exact() {
    let header = "\"(PDH-CSV 4.0) (Tokyo Standard Time)(-540)\",\"\\\\E5270\\Memory\\% Committed Bytes In Use\",\"\\\\E5270\\Process(a#1)\\ID Process\"\r\n";
    let rows = "\"04/27/2024 17:15:26.789\",\"78.80082537392173947\",\" \"\r\n\
                \"04/27/2024 17:15:27.790\",\"6.9494827586206889356e-005\",\"4\"\r\n";
    let text = format!("{header}{rows}");
    let mut r = PdhCsvReader::new(
        Cursor::new(text.clone().into_bytes()),
        "in.csv",
        CsvReadOptions::default(),
    )
    .unwrap();
    let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out.csv");
    w.write_header(r.header()).unwrap();
    let mut rec = Record::default();
    while r.read_record(&mut rec).unwrap() {
        w.write_record(&rec).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(String::from_utf8(w.into_inner()).unwrap(), text);
}

#[test]
fn real_logs() {
    let Some(dir) = data_dir() else { return };
    let logs = dir.join("logs");
    struct Expect {
        file: &'static str,
        zone: (&'static str, i32),
        columns: usize,
        rows: usize,
        first: &'static str,
        first_time: LogTime,
        first_values: &'static [Option<f64>],
    }
    let cases = [
        Expect {
            file: "en-edt-process-DataCollector01.csv",
            zone: ("Eastern Daylight Time", 240),
            columns: 8,
            rows: 208,
            first: r"\\7702-48817743\Process(_Total)\Virtual Bytes",
            first_time: t(2021, 9, 16, 7, 51, 58, 569),
            first_values: &[
                Some(238132991823872.0),
                Some(111489024.0),
                Some(117972992.0),
                Some(246353920.0),
            ],
        },
        Expect {
            file: "en-pst-BM_Active_Load_Test.csv",
            zone: ("Pacific Standard Time", 480),
            columns: 4,
            rows: 351,
            first: r"\\ATTCOREU01\Memory\% Committed Bytes In Use",
            first_time: t(2014, 2, 1, 0, 19, 44, 718),
            first_values: &[Some(11.560571277026032), None, None, None],
        },
        Expect {
            file: "en-tokyo-5964cols-Sample01.csv",
            zone: ("Tokyo Standard Time", -540),
            columns: 5963,
            rows: 16,
            first: r"\\E5270\Memory\% Committed Bytes In Use",
            first_time: t(2024, 4, 27, 17, 15, 26, 789),
            first_values: &[Some(78.80082537392173947), Some(858865664.0)],
        },
    ];
    for e in cases {
        let path = logs.join(e.file);
        let mut r = PdhCsvReader::open(&path, CsvReadOptions::default()).unwrap();
        let h = r.header().clone();
        assert_eq!(h.kind, LogKind::Csv);
        assert_eq!(
            h.time_zone,
            Some(TimeZone {
                name: e.zone.0.into(),
                bias: Some(e.zone.1)
            }),
            "{}",
            e.file
        );
        assert_eq!(h.counters.len(), e.columns, "{}", e.file);
        assert_eq!(h.counters[0].name, e.first);
        let mut rec = Record::default();
        let mut n = 0;
        let mut last = LogTime(0);
        let mut blanks = 0usize;
        while r.read_record(&mut rec).unwrap() {
            if n == 0 {
                assert_eq!(rec.time, e.first_time, "{}", e.file);
                assert_eq!(&values(&rec)[..e.first_values.len()], e.first_values);
            }
            assert!(rec.time > last);
            last = rec.time;
            blanks += rec
                .cells
                .iter()
                .filter(|c| matches!(c, Cell::Blank))
                .count();
            n += 1;
        }
        assert_eq!(n, e.rows, "{}", e.file);
        if e.file.starts_with("en-tokyo") {
            // Counted independently with Python's csv module: 3,845 cells are " ".
            assert_eq!(blanks, 3845);
        }
        // Rewriting relog-style and reading back gives the same records.
        let mut r = PdhCsvReader::open(&path, CsvReadOptions::default()).unwrap();
        let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out.csv");
        w.write_header(r.header()).unwrap();
        let mut originals = Vec::new();
        while r.read_record(&mut rec).unwrap() {
            w.write_record(&rec).unwrap();
            originals.push(rec.clone());
        }
        let again = read_bytes(w.into_inner(), CsvReadOptions::default()).unwrap();
        assert_eq!(again.0.counters, h.counters);
        assert_eq!(again.1.len(), originals.len());
        for (a, b) in again.1.iter().zip(&originals) {
            assert_eq!(a.time, b.time);
            let bits = |r: &Record| -> Vec<Option<u64>> {
                r.cells
                    .iter()
                    .map(|c| c.value().map(f64::to_bits))
                    .collect()
            };
            assert_eq!(bits(a), bits(b));
        }
    }
}
