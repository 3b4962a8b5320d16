//! PDH-CSV / PDH-TSV logs: built the way Windows writes them, and the real ones in `../shared/data/logs`.
// Literals are written digit for digit as Windows writes them.
#![allow(clippy::excessive_precision)]

use crate::support::log_time as t;
use crate::support::logs_dir;
use crate::support::vec_log;

use std::io::Cursor;
use std::path::PathBuf;

use perfcounters::log::{
    Cell, CsvFlavor, CsvReadOptions, LogHeader, LogKind, LogReader, LogTime, LogWriter,
    PdhCsvLogWriter, PdhCsvReader, Record, TimeZone,
};

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
        Some(TimeZone::named("Hora de verano romance", Some(-120)).0)
    );
    assert_eq!(h.counters[0].path.object, "Disco físico");
    assert_eq!(h.counters[0].path.counter, "% de tiempo inactivo");
    assert_eq!(values(&rows[0]), [None, Some(6.9494827586206889356e-5)]);
    assert_eq!(values(&rows[1]), [Some(97.5), Some(12345678901234567168.0)]);
    // 10:00:15 at UTC+2 (bias −120) is 08:00:15 UTC; the header's zone gives the local time back.
    assert_eq!(rows[1].time, t(2023, 7, 1, 8, 0, 15, 0));
    assert_eq!(h.to_local(rows[1].time), t(2023, 7, 1, 10, 0, 15, 0));
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
    assert_eq!(h.time_zone, Some(TimeZone::named("RTZ 2 (", None).0));
    assert_eq!(h.counters[0].path.machine.as_deref(), Some("ПК"));
    assert_eq!(h.counters[0].path.object, "Процесс");
    assert_eq!(values(&rows[0]), [Some(3.25)]);
    // The same bytes read as 1252 (a code page given overrides the detection) give other (wrong)
    // letters, but never an error or a shifted column.
    let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(text);
    let opts = CsvReadOptions {
        code_page: Some(1252),
    };
    let (h, _) = read_bytes(bytes.into_owned(), opts).unwrap();
    assert_eq!(h.counters.len(), 1);
    assert_ne!(h.counters[0].path.object, "Процесс");
}

/// Headers of a few counter names as Windows machines of each language write them (no byte-order
/// mark, the machine's ANSI code page): the code page is detected from the header line alone, and
/// the reader says which one it assumed.
#[test]
fn code_page_detected_from_the_header_line() {
    let cases: [(&'static encoding_rs::Encoding, u16, &[&str]); 7] = [
        (
            encoding_rs::WINDOWS_1252,
            1252,
            &[
                r"\\SRV\Disco físico(_Total)\% de tiempo inactivo",
                r"\\SRV\Memoria\Bytes disponibles",
                r"\\SRV\Procesador(_Total)\% de tiempo de procesador",
            ],
        ),
        (
            encoding_rs::WINDOWS_1252,
            1252,
            &[
                r"\\PC\Prozessor(_Total)\Prozessorzeit (%)",
                r"\\PC\Arbeitsspeicher\Verfügbare Bytes",
                r"\\PC\Physikalischer Datenträger(_Total)\Leerlaufzeit (%)",
            ],
        ),
        (
            encoding_rs::WINDOWS_1250,
            1250,
            &[
                r"\\PC\Pamięć\Dostępne bajty",
                r"\\PC\Procesor(_Total)\Czas procesora (%)",
                r"\\PC\Dysk fizyczny(_Total)\Czas bezczynności (%)",
            ],
        ),
        (
            encoding_rs::WINDOWS_1251,
            1251,
            &[
                r"\\SRV\Процессор(_Total)\% загруженности процессора",
                r"\\SRV\Память\Доступно байт",
                r"\\SRV\Процесс(Idle)\% загруженности процессора",
            ],
        ),
        (
            encoding_rs::GBK,
            936,
            &[
                r"\\PC\处理器(_Total)\% 处理器时间",
                r"\\PC\内存\可用字节",
                r"\\PC\物理磁盘(_Total)\% 空闲时间",
            ],
        ),
        (
            encoding_rs::SHIFT_JIS,
            932,
            &[
                r"\\PC\プロセッサ(_Total)\% プロセッサ時間",
                r"\\PC\メモリ\利用可能バイト数",
                r"\\PC\物理ディスク(_Total)\% アイドル時間",
            ],
        ),
        (
            encoding_rs::EUC_KR,
            949,
            &[
                r"\\PC\프로세서(_Total)\% 프로세서 시간",
                r"\\PC\메모리\사용 가능한 바이트",
                r"\\PC\실제 디스크(_Total)\% 유휴 시간",
            ],
        ),
    ];
    for (encoding, cp, names) in cases {
        let mut text = String::from("\"(PDH-CSV 4.0) (UTC)(0)\"");
        for n in names {
            text.push_str(&format!(",\"{n}\""));
        }
        text.push_str("\r\n\"01/15/2024 08:00:00.250\"");
        text.push_str(&",\"1\"".repeat(names.len()));
        text.push_str("\r\n");
        let (bytes, _, bad) = encoding.encode(&text);
        assert!(!bad && std::str::from_utf8(&bytes).is_err(), "{cp}");
        let r = PdhCsvReader::new(
            Cursor::new(bytes.into_owned()),
            "x.csv",
            CsvReadOptions::default(),
        )
        .unwrap();
        let read: Vec<String> = r.header().counters.iter().map(|c| c.name.clone()).collect();
        assert_eq!(
            read,
            names.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            "{cp}"
        );
        assert_eq!(
            r.encoding(),
            perfcounters::encoding::TextEncoding::CodePage(cp)
        );
        assert_eq!(
            r.warnings(),
            [format!(
                "x.csv: no byte-order mark and not UTF-8: read in code page {cp}, detected from \
                 its header line (a code page given overrides it)"
            )]
        );
    }
    // UTF-8 without a mark is UTF-8, with no warning; 65001 given on text that is not UTF-8 is an
    // error naming the first byte that is not.
    let utf8 = "\"(PDH-CSV 4.0)\",\"\\\\PC\\Память\\Доступно байт\"\r\n";
    let r = PdhCsvReader::new(
        Cursor::new(utf8.as_bytes().to_vec()),
        "x.csv",
        CsvReadOptions::default(),
    )
    .unwrap();
    assert_eq!(r.header().counters[0].path.object, "Память");
    assert!(r.warnings().is_empty());
    let (cp1251, _, _) = encoding_rs::WINDOWS_1251.encode(utf8);
    let e = read_bytes(
        cp1251.into_owned(),
        CsvReadOptions {
            code_page: Some(65001),
        },
    )
    .unwrap_err();
    assert_eq!(
        e,
        "x.csv: line 1, column 23: not UTF-8 (code page 65001 was given): byte 0xCF starts no \
         UTF-8 character; give the code page the log was written in"
            .replace("x.csv", "test.csv")
    );
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
        // 23:59:59.999 at bias −60 is 22:59:59.999 UTC.
        assert_eq!(rows[0].time, t(2022, 12, 31, 22, 59, 59, 999));
        assert_eq!(h.to_local(rows[0].time), t(2022, 12, 31, 23, 59, 59, 999));
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
        // A header cell that is not a counter path is skipped with a warning (tests/log_open.rs).
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
    let Some(dir) = logs_dir() else { return };
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
            Some(TimeZone::named(e.zone.0, Some(e.zone.1)).0),
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
                // The record holds the UTC instant; the log's zone shows the time written.
                assert_eq!(h.to_local(rec.time), e.first_time, "{}", e.file);
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

mod stages {
    use super::*;
    use perfcounters::calc::CalcError;
    use perfcounters::log::{
        copy, log_statistics, CounterFilter, CounterInfo, Filtered, LogCounter, LogSummary, Merge,
        RawCell, RelogFilter,
    };
    use perfcounters::names::ini::parse_perf_string_backup;
    use perfcounters::names::NameTable;
    use perfcounters::stats::Statistics;
    use perfcounters::{CounterPath, CounterType, FormatOptions, PdhStatus, RawCounter};
    use vec_log::VecLog;

    fn csv(text: &str) -> Box<dyn LogReader> {
        Box::new(
            PdhCsvReader::new(
                Cursor::new(text.as_bytes().to_vec()),
                "in.csv",
                CsvReadOptions::default(),
            )
            .unwrap(),
        )
    }

    fn drain(r: &mut dyn LogReader) -> Vec<(LogTime, Vec<Option<f64>>)> {
        let mut out = Vec::new();
        let mut rec = Record::default();
        while r.read_record(&mut rec).unwrap() {
            out.push((rec.time, values(&rec)));
        }
        out
    }

    fn names(h: &LogHeader) -> Vec<&str> {
        h.counters.iter().map(|c| c.name.as_str()).collect()
    }

    fn filter(patterns: &[&str]) -> CounterFilter {
        CounterFilter::new(
            patterns
                .iter()
                .map(|p| CounterPath::parse(p).unwrap())
                .collect(),
        )
    }

    const LOG: &str = "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\H\\Processor(0)\\% Processor Time\",\"\\\\H\\Processor(_Total)\\% Processor Time\",\"\\\\H\\Memory\\Available Bytes\",\"\\\\H\\Process(svchost#1)\\ID Process\"\r\n\
        \"01/01/2024 00:00:00.000\",\"1\",\"2\",\"3\",\"4\"\r\n\
        \"01/01/2024 00:00:01.000\",\"5\",\"6\",\"7\",\"8\"\r\n\
        \"01/01/2024 00:00:02.000\",\"9\",\"10\",\"11\",\"12\"\r\n\
        \"01/01/2024 00:00:03.000\",\"13\",\"14\",\"15\",\"16\"\r\n";

    #[test]
    fn counters_times_and_every_nth() {
        let f = RelogFilter {
            counters: Some(filter(&[
                r"\Processor(*)\*",
                r"\Process(svchost#1)\ID Process",
            ])),
            begin: Some(t(2024, 1, 1, 0, 0, 1, 0)),
            end: Some(t(2024, 1, 1, 0, 0, 3, 0)),
            every: 2,
            ..RelogFilter::default()
        };
        let mut r = Filtered::new(csv(LOG), &f).unwrap();
        assert_eq!(
            names(r.header()),
            [
                r"\\H\Processor(0)\% Processor Time",
                r"\\H\Processor(_Total)\% Processor Time",
                r"\\H\Process(svchost#1)\ID Process"
            ]
        );
        assert_eq!(
            drain(&mut r),
            [
                (
                    t(2024, 1, 1, 0, 0, 1, 0),
                    vec![Some(5.0), Some(6.0), Some(8.0)]
                ),
                (
                    t(2024, 1, 1, 0, 0, 3, 0),
                    vec![Some(13.0), Some(14.0), Some(16.0)]
                ),
            ]
        );
        // A machine in the pattern must match; an instance pattern never selects a
        // single-instance counter and the other way round.
        for (pattern, want) in [
            (r"\\h\Memory\Available Bytes", 1),
            (r"\\OTHER\Memory\Available Bytes", 0),
            (r"\Memory(*)\*", 0),
            (r"\Processor\% Processor Time", 0),
            (r"\Process(svchost)\ID Process", 0),
            (r"\Process(svchost#*)\*", 1),
        ] {
            let f = RelogFilter {
                counters: Some(filter(&[pattern])),
                ..RelogFilter::default()
            };
            let r = Filtered::new(csv(LOG), &f).unwrap();
            assert_eq!(r.header().counters.len(), want, "{pattern}");
        }
    }

    #[test]
    fn summary() {
        let mut r = csv(LOG);
        let s = LogSummary::of(&mut r).unwrap();
        assert_eq!(s.samples, 4);
        assert_eq!(s.begin, Some(t(2024, 1, 1, 0, 0, 0, 0)));
        assert_eq!(s.end, Some(t(2024, 1, 1, 0, 0, 3, 0)));
        assert_eq!(s.counters.len(), 4);
    }

    #[test]
    fn merge_in_time_order_across_zones() {
        // b.csv was written in UTC+1 (bias −60): its 01:00:01 is 00:00:01 in a.csv's UTC.
        let a = "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\A\\Memory\\Available Bytes\"\r\n\
                 \"01/01/2024 00:00:00.000\",\"1\"\r\n\"01/01/2024 00:00:02.000\",\"3\"\r\n";
        let b = "\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\",\"\\\\B\\Memory\\Available Bytes\",\"\\\\a\\memory\\available bytes\"\r\n\
                 \"01/01/2024 01:00:01.000\",\"20\",\"21\"\r\n\"01/01/2024 01:00:02.000\",\"30\",\"31\"\r\n";
        let mut m = Merge::new(vec![csv(a), csv(b)]).unwrap();
        assert_eq!(
            names(m.header()),
            [r"\\A\Memory\Available Bytes", r"\\B\Memory\Available Bytes"]
        );
        assert_eq!(m.header().time_zone.as_ref().unwrap().bias, Some(0));
        assert_eq!(
            drain(&mut m),
            [
                (t(2024, 1, 1, 0, 0, 0, 0), vec![Some(1.0), None]),
                (t(2024, 1, 1, 0, 0, 1, 0), vec![Some(21.0), Some(20.0)]),
                (t(2024, 1, 1, 0, 0, 2, 0), vec![Some(3.0), Some(30.0)]),
            ]
        );
    }

    fn raw(n: i64, d: i64) -> Cell {
        Cell::Raw(
            RawCell {
                status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                raw: RawCounter::new(n, d),
            },
            None,
        )
    }

    /// A rate counter (PERF_COUNTER_COUNTER, F = 10 ticks/s) and a raw count, one record a second.
    fn raw_log() -> VecLog {
        let info = |ty| {
            Some(CounterInfo {
                counter_type: ty,
                default_scale: 0,
                time_base: 10,
            })
        };
        let header = LogHeader {
            source: "raw".into(),
            kind: LogKind::Sql,
            time_zone: None,
            counters: vec![
                LogCounter::new(
                    CounterPath::parse(r"\\H\System\File Read Operations/sec").unwrap(),
                    info(CounterType::PERF_COUNTER_COUNTER),
                ),
                LogCounter::new(
                    CounterPath::parse(r"\\H\System\Processes").unwrap(),
                    info(CounterType::PERF_COUNTER_RAWCOUNT),
                ),
            ],
        };
        let cells = [
            (0, 0, 7),
            (10, 10, 8),
            (40, 20, 9),
            (40, 30, 6),
            (100, 40, 5),
        ];
        let records = cells
            .iter()
            .enumerate()
            .map(|(i, &(n, d, p))| Record {
                time: t(2024, 1, 1, 0, 0, i as u32, 0),
                cells: vec![raw(n, d), raw(p, 0)],
            })
            .collect::<Vec<_>>();
        VecLog::new(header, records)
    }

    #[test]
    fn raw_samples_are_computed_against_the_previous_kept_record() {
        let mut r = Filtered::new(raw_log(), &RelogFilter::default()).unwrap();
        let rows: Vec<Vec<Option<f64>>> = drain(&mut r).into_iter().map(|r| r.1).collect();
        // (10−0)·10/10 = 10/s, 30·10/10 = 30/s, 0, 60/s.
        assert_eq!(
            rows,
            [
                vec![None, Some(7.0)],
                vec![Some(10.0), Some(8.0)],
                vec![Some(30.0), Some(9.0)],
                vec![Some(0.0), Some(6.0)],
                vec![Some(60.0), Some(5.0)],
            ]
        );
        // -t 2 keeps records 0, 2, 4: rates over two seconds; -b at record 1 uses record 0 as the
        // previous sample of the first record kept.
        let f = RelogFilter {
            every: 2,
            ..RelogFilter::default()
        };
        let rows: Vec<Vec<Option<f64>>> = drain(&mut Filtered::new(raw_log(), &f).unwrap())
            .into_iter()
            .map(|r| r.1)
            .collect();
        assert_eq!(
            rows,
            [
                vec![None, Some(7.0)],
                vec![Some(20.0), Some(9.0)],
                vec![Some(30.0), Some(5.0)]
            ]
        );
        let f = RelogFilter {
            begin: Some(t(2024, 1, 1, 0, 0, 1, 0)),
            ..RelogFilter::default()
        };
        let rows = drain(&mut Filtered::new(raw_log(), &f).unwrap());
        assert_eq!(rows[0].1, [Some(10.0), Some(8.0)]);
    }

    #[test]
    fn statistics_raw_and_cooked() {
        let mut r = Filtered::new(raw_log(), &RelogFilter::default()).unwrap();
        let s = log_statistics(&mut r, &FormatOptions::typeperf()).unwrap();
        // Rate: intervals 10, 30, 0, 60; mean first-vs-last (100−0)·10/40 = 25.
        assert_eq!(
            s[0].stats,
            Ok(Statistics {
                samples: 5,
                count: 4,
                min: 0.0,
                max: 60.0,
                mean: 25.0
            })
        );
        assert_eq!(
            s[1].stats,
            Ok(Statistics {
                samples: 5,
                count: 5,
                min: 5.0,
                max: 9.0,
                mean: 7.0
            })
        );
        let mut c = csv(LOG);
        let s = log_statistics(&mut c, &FormatOptions::typeperf()).unwrap();
        assert_eq!(s[3].name, r"\\H\Process(svchost#1)\ID Process");
        assert_eq!(
            s[3].stats,
            Ok(Statistics {
                samples: 4,
                count: 4,
                min: 4.0,
                max: 16.0,
                mean: 10.0
            })
        );
        let blank = "\"(PDH-CSV 4.0)\",\"\\\\H\\A\\B\"\r\n\"01/01/2024 00:00:00.000\",\" \"\r\n";
        let s = log_statistics(&mut csv(blank), &FormatOptions::typeperf()).unwrap();
        assert_eq!(s[0].stats, Err(CalcError::NoSamples));
    }

    #[test]
    fn english_paths_find_localized_columns_through_name_tables() {
        let es = "\"(PDH-CSV 4.0) (Hora de verano romance)(-120)\",\"\\\\SRV\\Disco físico(_Total)\\% de tiempo inactivo\",\"\\\\SRV\\Memoria\\Bytes disponibles\"\r\n\
                  \"07/01/2023 10:00:00.000\",\"97.5\",\"1024\"\r\n";
        let ini = "[PerfStrings_009]\r\n1=1847\r\n24=Available Bytes\r\n234=PhysicalDisk\r\n1482=% Idle Time\r\n4=Memory\r\n\
                   [PerfStrings_00A]\r\n1=1847\r\n24=Bytes disponibles\r\n234=Disco físico\r\n1482=% de tiempo inactivo\r\n4=Memoria\r\n";
        let ini = parse_perf_string_backup(ini.as_bytes(), None).unwrap();
        let tables: Vec<NameTable> = ini.languages.iter().map(|l| l.names.clone()).collect();
        let pattern = filter(&[r"\PhysicalDisk(_Total)\% Idle Time"]);
        // Without the tables nothing matches; with them the Spanish column does, and only it.
        let r = Filtered::new(
            csv(es),
            &RelogFilter {
                counters: Some(pattern.clone()),
                ..RelogFilter::default()
            },
        )
        .unwrap();
        assert!(r.header().counters.is_empty());
        let mut r = Filtered::new(
            csv(es),
            &RelogFilter {
                counters: Some(pattern.with_names(tables.clone())),
                ..RelogFilter::default()
            },
        )
        .unwrap();
        assert_eq!(
            names(r.header()),
            [r"\\SRV\Disco físico(_Total)\% de tiempo inactivo"]
        );
        assert_eq!(drain(&mut r)[0].1, [Some(97.5)]);
        // A Spanish pattern, wildcards in the counter, finds an English log's column.
        let en = "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n";
        let r = Filtered::new(
            csv(en),
            &RelogFilter {
                counters: Some(filter(&[r"\Memoria\Bytes disp*"]).with_names(tables)),
                ..RelogFilter::default()
            },
        )
        .unwrap();
        assert_eq!(names(r.header()), [r"\\H\Memory\Available Bytes"]);
    }

    #[test]
    fn real_german_and_english_tables() {
        let Some(dir) = logs_dir() else { return };
        let bytes = std::fs::read(dir.join("names/de-en-PerfStringBackup-cp1252.INI")).unwrap();
        let ini = parse_perf_string_backup(&bytes, None).unwrap();
        let de = &ini.language("007").unwrap().names;
        let en = &ini.language("009").unwrap().names;
        assert_eq!(de.name(4), Some("Arbeitsspeicher"));
        assert_eq!(de.name(6), Some("Prozessorzeit (%)"));
        assert_eq!(en.name(6), Some("% Processor Time"));
        let processor = en.index_of("Processor").unwrap();
        let de_log = format!(
            "\"(PDH-CSV 4.0) (W. Europe Daylight Time)(-120)\",\"\\\\PC\\{}(_Total)\\Prozessorzeit (%)\",\"\\\\PC\\Arbeitsspeicher\\Verfügbare Bytes\"\r\n\
             \"07/01/2023 10:00:00.000\",\"12.5\",\"1024\"\r\n",
            de.name(processor).unwrap()
        );
        let tables = vec![en.clone(), de.clone()];
        let r = Filtered::new(
            csv(&de_log),
            &RelogFilter {
                counters: Some(filter(&[r"\Processor(*)\% Processor Time"]).with_names(tables)),
                ..RelogFilter::default()
            },
        )
        .unwrap();
        assert_eq!(r.header().counters.len(), 1);
        assert_eq!(r.header().counters[0].path.counter, "Prozessorzeit (%)");
        let w10 = std::fs::read(dir.join("names/en-win10-PerfStringBackup-utf16.INI")).unwrap();
        let ini = parse_perf_string_backup(&w10, None).unwrap();
        let en = &ini.language("009").unwrap().names;
        assert_eq!(ini.last_counter, Some(10640));
        assert_eq!(en.name(6), Some("% Processor Time"));
        assert_eq!(
            en.iter().count() + ini.language("009").unwrap().help.iter().count() + 1,
            4718
        );
    }

    #[test]
    fn csv_copy_through_every_stage_keeps_the_bytes() {
        let mut r =
            Filtered::new(Merge::new(vec![csv(LOG)]).unwrap(), &RelogFilter::default()).unwrap();
        let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out");
        assert_eq!(copy(&mut r, &mut w).unwrap(), 4);
        assert_eq!(String::from_utf8(w.into_inner()).unwrap(), LOG);
    }
}

/// Writes the starting corpus of the `csv_log` fuzz target (docs/fuzzing.md).
#[test]
#[ignore = "writes fuzz/corpus/csv_log; run on demand"]
fn write_fuzz_seeds() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/csv_log"
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("seed1"),
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\H\\Memory\\Available Bytes\",\"\\\\H\\Process(a#1)\\ID Process\"\r\n\
         \"02/01/2014 00:19:44.718\",\"11.560571277026031822\",\" \"\r\n\
         \"02/01/2014 00:19:59.718\",\"6.9494827586206889356e-005\",\"12345678901234567168\"\r\n",
    )
    .unwrap();
    let (tsv, _, _) = encoding_rs::WINDOWS_1252.encode(
        "\r\n\"(PDH-TSV 4.0) (RTZ 2 (\"\t\"\\\\H\\Disco físico(_Total)\\% de tiempo inactivo\"\n\"1/2/2020 3:04:05.6\"\t\"1\"\nExiting, please wait...\n",
    );
    std::fs::write(dir.join("seed2"), tsv).unwrap();
    std::fs::write(
        dir.join("seed3"),
        utf16le(
            "\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\",\"\\\\H\\M\\C\"\r\n\"12/31/2022 23:59:59.999\",\"1024\"\r\n",
            true,
        ),
    )
    .unwrap();
}

/// `%.20g` as the Microsoft C runtime writes it, from `core::fmt`'s exact `{:.19e}` (20
/// significant digits, correctly rounded): the reference of `format_precise` on real values.
fn precise_reference(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if v.fract() == 0.0 && v.abs() < 1e19 {
        return format!("{v:.0}");
    }
    let s = format!("{:.19e}", v.abs());
    let (mantissa, exp) = s.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if v < 0.0 { "-" } else { "" };
    let body = if !(-4..20).contains(&exp) {
        let rest = digits[1..].trim_end_matches('0');
        let dot = if rest.is_empty() { "" } else { "." };
        let e_sign = if exp < 0 { '-' } else { '+' };
        format!(
            "{}{dot}{rest}e{e_sign}{:03}",
            &digits[..1],
            exp.unsigned_abs()
        )
    } else if exp >= 0 {
        let (int, frac) = digits.split_at(exp as usize + 1);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            int.to_string()
        } else {
            format!("{int}.{frac}")
        }
    } else {
        let zeros = "0".repeat((-exp - 1) as usize);
        format!("0.{zeros}{}", digits.trim_end_matches('0'))
    };
    format!("{sign}{body}")
}

/// Every value of the real logs, formatted as relog writes it, equals the reference; the Tokyo
/// log, written by Windows 10 or later with `%.20g`, comes out with its own text.
#[test]
fn precise_formatter_on_the_real_logs_values() {
    use perfcounters::log::pdh_csv::format_precise;
    let Some(data) = logs_dir() else { return };
    let logs = data.join("logs");
    let mut checked = 0usize;
    for file in [
        "en-edt-process-DataCollector01.csv",
        "en-pst-BM_Active_Load_Test.csv",
        "en-tokyo-5964cols-Sample01.csv",
    ] {
        let path = logs.join(file);
        let mut r = PdhCsvReader::open(&path, CsvReadOptions::default()).unwrap();
        let mut rec = Record::default();
        while r.read_record(&mut rec).unwrap() {
            for v in values(&rec).into_iter().flatten() {
                for v in [v, -v, v * 1e-300, v * 1e290] {
                    assert_eq!(format_precise(v), precise_reference(v), "{file}: {v:e}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 60_000, "{checked}");
    // The Tokyo log's cells are %.20g: formatted again, each value is its cell's text.
    let text = std::fs::read_to_string(logs.join("en-tokyo-5964cols-Sample01.csv")).unwrap();
    let mut same = 0usize;
    for line in text.lines().skip(1) {
        for cell in line.split(',').skip(1) {
            let cell = cell.trim_matches('"');
            if let Ok(v) = cell.parse::<f64>() {
                assert_eq!(format_precise(v), cell);
                same += 1;
            }
        }
    }
    assert!(same > 50_000, "{same}");
}
