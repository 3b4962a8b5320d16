//! `perfcounters relog` end to end: conversions (CSV, TSV, SQL), filters, merges, `-q`, statistics,
//! name tables, and errors, on logs built the way Windows writes them and on the real ones in
//! `../shared/data/logs` (skipped with a message when that folder is absent).

use crate::common::shared_data;

use crate::common;

use common::{
    assert_stdout_contains, assert_success, available_bytes_spec, blg_bytes, es_1252, ini, run,
    stderr, stdout, Dir, BLG_T0, ES,
};

use std::path::{Path, PathBuf};

fn data_dir() -> Option<PathBuf> {
    shared_data::dir("the real Windows logs")
}

/// The warnings a read of [`es_1252`] gives: the code page detected from its header, and its
/// localized zone name, which has no rules here, so that its times are converted with the fixed
/// bias.
fn es_zone_warning(input: &str) -> String {
    format!(
        "perfcounters: warning: {input}: no byte-order mark and not UTF-8: read in code page \
         1252, detected from its header line (a code page given overrides it)\n\
         perfcounters: warning: {input}: time zone \"Hora de verano romance\" is not a Windows \
         zone name this program knows; times are converted with its fixed bias of -120 minutes, \
         without daylight saving time\n"
    )
}

#[test]
fn filters_times_and_every_nth_record_to_tsv() {
    let d = Dir::new("filter");
    let input = d.file("es.csv", &es_1252());
    let o = run(&[
        "relog",
        &input,
        "-c",
        r"\Memoria\*",
        r"\Procesador(*)\*",
        "-b",
        "7/1/2023 10:00:15",
        "-e",
        "7/1/2023 10:00:45",
        "-t",
        "2",
        "-f",
        "tsv",
    ]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\"(PDH-TSV 4.0) (Hora de verano romance)(-120)\"\t\"\\\\SRV\\Memoria\\Bytes disponibles\"\t\"\\\\SRV\\Procesador(_Total)\\% de tiempo de procesador\"\r\n\
         \"07/01/2023 10:00:15.000\"\t\"2048\"\t\"6.9494827586206889356e-005\"\r\n\
         \"07/01/2023 10:00:45.000\"\t\"8192\"\t\"25\"\r\n"
    );
}

#[test]
fn english_paths_select_spanish_columns_through_perf_string_backup() {
    let d = Dir::new("names");
    let input = d.file("es.csv", &es_1252());
    let names = d.file("PerfStringBackup.INI", &ini());
    let counters = d.file(
        "counters.txt",
        b"\\PhysicalDisk(_Total)\\% Idle Time\r\n\\Processor(*)\\% Processor Time\r\n",
    );
    // A language no table knows: nothing matches; each path says why and points to --names.
    let fi = d.file(
        "fi.csv",
        b"\"(PDH-CSV 4.0)\",\"\\\\SRV\\Suoritin(_Total)\\Suoritinaika (%)\"\r\n\
          \"07/01/2023 10:00:00.000\",\"1\"\r\n",
    );
    let o = run(&["relog", &fi, "-cf", &counters]);
    assert_eq!(o.status.code(), Some(1));
    let hint = "the log names its objects in another language than English, which the built-in \
                table (PAL's CounterLang.xml) does not translate: pass --names with the machine's \
                name tables (PerfStringBackup.INI) to use English paths";
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: no counter of the input matches -c / -cf:\n  \
             \\PhysicalDisk(_Total)\\% Idle Time: the log has no object \"PhysicalDisk\"; {hint}\n  \
             \\Processor(*)\\% Processor Time: the log has no object \"Processor\"; {hint}\n",
        )
    );
    // Spanish: the built-in table (PAL's CounterLang.xml) matches without --names, as the
    // machine's own tables do.
    let builtin = run(&["relog", &input, "-cf", &counters, "-q"]);
    assert_success(&builtin);
    let o = run(&["relog", &input, "-cf", &counters, "--names", &names, "-q"]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        format!(
            "\r\nInput\r\n----------------\r\nFile(s):\r\n     {input} (CSV, code page 1252)\r\n\r\n\
             Begin:    7/1/2023 10:00:00.000\r\nEnd:      7/1/2023 10:00:45.000\r\nSamples:  4\r\n\r\n\
             \\\\SRV\\Disco físico(_Total)\\% de tiempo inactivo\r\n\
             \\\\SRV\\Procesador(_Total)\\% de tiempo de procesador\r\n\
             \r\nThe command completed successfully.\r\n"
        )
    );
    assert_eq!(stdout(&builtin), stdout(&o));
}

#[test]
fn statistics_as_table_and_csv() {
    let d = Dir::new("stats");
    let input = d.file("es.csv", &es_1252());
    let o = run(&["relog", &input, "--stats", "csv"]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\"Counter\",\"Minimum\",\"Average\",\"Maximum\",\"Samples\",\"Values\"\r\n\
         \"\\\\SRV\\Disco físico(_Total)\\% de tiempo inactivo\",\"70\",\"84.4375\",\"97.5\",\"4\",\"4\"\r\n\
         \"\\\\SRV\\Memoria\\Bytes disponibles\",\"1024\",\"3840\",\"8192\",\"4\",\"4\"\r\n\
         \"\\\\SRV\\Procesador(_Total)\\% de tiempo de procesador\",\"6.9494827586206889356e-005\",\"12.500023164942527742\",\"25\",\"4\",\"3\"\r\n"
    );
    let o = run(&["relog", &input, "--stats", "-c", r"\Memoria\*"]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "MINIMUM  AVERAGE  MAXIMUM  COUNTER\n  1,024    3,840    8,192  \\\\SRV\\Memoria\\Bytes disponibles\n"
    );
}

#[test]
fn csv_to_sql_and_back_and_appending() {
    let d = Dir::new("relog-sql");
    let input = d.file("es.csv", &es_1252());
    let db = d.path("logs.db");
    let target = format!("SQL:{db}!spanish");
    let o = run(&["relog", &input, "-o", &target]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        format!(
            "\r\nInput\r\n----------------\r\nFile(s):\r\n     {input} (CSV, code page 1252)\r\n\r\n\
             Output\r\n----------------\r\nFile:     {target}\r\n\r\n\
             Begin:    7/1/2023 10:00:00.000\r\nEnd:      7/1/2023 10:00:45.000\r\nSamples:  4\r\n\r\n\
             The command completed successfully.\r\n"
        )
    );
    let o = run(&["relog", &target]);
    assert_success(&o);
    assert_eq!(stdout(&o), ES);
    // A second log in the same database; the first one is refused without -a / -y.
    let tsv = d.file(
        "b.tsv",
        b"\"(PDH-TSV 4.0)\"\t\"\\\\H\\Memory\\Available Bytes\"\r\n\"01/01/2024 00:00:00.000\"\t\"1\"\r\n",
    );
    assert!(run(&["relog", &tsv, "-o", &format!("SQL:{db}!b")])
        .status
        .success());
    let o = run(&["relog", &tsv, "-o", &format!("SQL:{db}!b")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: SQL:{db}!b already exists; add -y to overwrite it or -a to append to it\n")
    );
    assert!(run(&["relog", &tsv, "-o", &format!("SQL:{db}!b"), "-a"])
        .status
        .success());
    let o = run(&["relog", &format!("SQL:{db}!b"), "-q"]);
    assert_stdout_contains(&o, "Samples:  2\r\n");
    // Two inputs merge in time order: the Spanish log (UTC+2) and b (no zone: its wall clock).
    let out = d.path("merged.csv");
    let o = run(&[
        "relog",
        &target,
        &format!("SQL:{db}!b"),
        "-o",
        &out,
        "-c",
        r"\Memoria\*",
        r"\Memory\*",
    ]);
    assert_success(&o);
    let merged = std::fs::read_to_string(&out).unwrap();
    // b holds its record twice (appended twice).
    assert_eq!(merged.lines().count(), 1 + 4 + 2, "{merged}");
    assert!(merged.ends_with("\"01/01/2024 00:00:00.000\",\" \",\"1\"\r\n"));
    assert!(merged.starts_with("\"(PDH-CSV 4.0) (Hora de verano romance)(-120)\",\"\\\\SRV\\Memoria\\Bytes disponibles\",\"\\\\H\\Memory\\Available Bytes\"\r\n"));
    // CSV output: -y overwrites, -a appends when the columns are the same.
    let o = run(&["relog", &input, "-o", &out]);
    assert_eq!(
        stderr(&o),
        format!(
            "{}perfcounters: {out} already exists; add -y to overwrite it or -a to append to it\n",
            es_zone_warning(&input)
        )
    );
    assert!(
        run(&["relog", &input, "-o", &out, "-y", "-b", "7/1/2023 10:00:30"])
            .status
            .success()
    );
    assert!(
        run(&["relog", &input, "-o", &out, "-a", "-e", "7/1/2023 10:00:15"])
            .status
            .success()
    );
    let text = std::fs::read(&out).unwrap();
    let (text, _, _) = encoding_rs::UTF_8.decode(&text);
    let times: Vec<&str> = text.lines().skip(1).map(|l| &l[1..24]).collect();
    assert_eq!(
        times,
        [
            "07/01/2023 10:00:30.000",
            "07/01/2023 10:00:45.000",
            "07/01/2023 10:00:00.000",
            "07/01/2023 10:00:15.000"
        ]
    );
}

#[test]
fn errors_name_the_file_line_and_column() {
    let d = Dir::new("errors");
    let bad = d.file(
        "bad.csv",
        b"\"(PDH-CSV 4.0)\",\"\\\\H\\A\\B\"\r\n\"01/01/2024 00:00:00.000\",\"1\"\r\n\"01/01/2024 00:00:01.000\",\"1\",\"2\"\r\n",
    );
    let o = run(&["relog", &bad]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {bad}: line 3, column 3: the row has 3 cells, the header 2 (a time stamp and 1 counters)\n")
    );
    let not_log = d.file("x.csv", b"Time,Value\r\n");
    let o = run(&["relog", &not_log, "-q"]);
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {not_log}: line 1, column 1: not a PDH log: the first cell is not \"(PDH-CSV 4.0)\" or \"(PDH-TSV 4.0)\"\n")
    );
    let o = run(&["relog"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "perfcounters: no input log: name PDH-CSV/TSV or binary (.blg) files or SQL:file.db!log\n"
    );
    let o = run(&["relog", &not_log, "-zz"]);
    assert_eq!(
        stderr(&o),
        "perfcounters: unknown option \"-zz\"; see perfcounters relog -?\n"
    );
    // A binary log cut after its first bytes: the structure and offset of the damage.
    let blg = d.file("x.blg", b"\0\0\x01\0");
    let o = run(&["relog", &blg]);
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {blg}: WMI_BUFFER_HEADER at offset 0: truncated: needs 72 bytes, 4 available\n")
    );
    let o = run(&["relog", "-?"]);
    assert_success(&o);
    assert!(stdout(&o).starts_with("Microsoft-compatible Relog"));
}

#[test]
fn config_file_and_input_wildcards() {
    let d = Dir::new("config");
    d.file("a1.csv", ES.as_bytes());
    let config = d.file("relog.cfg", b"[c]\r\n\\Memoria\\*\r\n[t]\r\n3\r\n[i]\r\n");
    let pattern = Path::new(&d.0).join("a?.csv");
    let o = run(&["relog", "-config", &config, pattern.to_str().unwrap()]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\"(PDH-CSV 4.0) (Hora de verano romance)(-120)\",\"\\\\SRV\\Memoria\\Bytes disponibles\"\r\n\
         \"07/01/2023 10:00:00.000\",\"1024\"\r\n\"07/01/2023 10:00:45.000\",\"8192\"\r\n"
    );
}

#[test]
fn real_logs_convert_filter_and_summarize() {
    let Some(data) = data_dir() else { return };
    let logs = data.join("logs");
    let pst = logs.join("en-pst-BM_Active_Load_Test.csv");
    let pst = pst.to_str().unwrap();
    let o = run(&["relog", pst, "-q"]);
    assert_success(&o);
    assert_stdout_contains(
        &o,
        "Begin:    2/1/2014 00:19:44.718\r\nEnd:      2/1/2014 01:47:14.718\r\nSamples:  351\r\n\r\n\\\\ATTCOREU01\\Memory\\% Committed Bytes In Use\r\n"
    );
    let o = run(&[
        "relog",
        pst,
        "-c",
        r"\Processor(*)\*",
        "-b",
        "2/1/2014 00:20:00",
        "-e",
        "2/1/2014 00:20:30",
    ]);
    assert_eq!(
        stdout(&o),
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\ATTCOREU01\\Processor(_Total)\\% Processor Time\"\r\n\
         \"02/01/2014 00:20:14.718\",\"0.58593799999999696126\"\r\n\
         \"02/01/2014 00:20:29.718\",\"0.41666666666666518637\"\r\n"
    );
    // The 5,964-column log: through SQL and back, every value identical.
    let d = Dir::new("real");
    let tokyo = logs.join("en-tokyo-5964cols-Sample01.csv");
    let tokyo = tokyo.to_str().unwrap();
    let target = format!("SQL:{}!tokyo", d.path("t.db"));
    assert!(run(&["relog", tokyo, "-o", &target]).status.success());
    let back = d.path("back.csv");
    assert!(run(&["relog", &target, "-o", &back]).status.success());
    let direct = d.path("direct.csv");
    assert!(run(&["relog", tokyo, "-o", &direct]).status.success());
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(&direct).unwrap()
    );
    let o = run(&["relog", &back, "-q"]);
    assert_stdout_contains(&o, "Samples:  16\r\n");
}

/// A binary log of one raw count and one 100 ns timer, three samples a second apart from
/// 2020-01-17 00:00:00 local time (US Pacific).
fn blg_log() -> Vec<u8> {
    use perfcounters::format::blg::encode::{RawEntry, SampleEntry};
    use perfcounters::format::blg::BlgCounterSpec;
    use perfcounters::CounterType;
    let sec = 10_000_000i64;
    let specs = [
        available_bytes_spec(),
        BlgCounterSpec {
            counter_type: CounterType::PERF_100NSEC_TIMER_INV,
            time_base: 10_000_000,
            machine: r"\\HOST".into(),
            object: "Processor".into(),
            instance: Some("_Total".into()),
            counter: "% Processor Time".into(),
            ..Default::default()
        },
    ];
    let samples = (0..3i64)
        .map(|i| {
            let t = BLG_T0 + i * sec;
            let raw = |first, second| {
                SampleEntry::Counter(RawEntry {
                    time_stamp: t,
                    first,
                    second,
                    multi_count: 1,
                    ..Default::default()
                })
            };
            (
                t,
                vec![raw(1000 + i, 0), raw(2_500_000 * i, BLG_T0 + i * sec)],
            )
        })
        .collect();
    blg_bytes(&specs, samples)
}

#[test]
fn binary_logs() {
    let d = Dir::new("blg");
    let blg = d.file("x.blg", &blg_log());
    let o = run(&["relog", &blg, "-q"]);
    assert_success(&o);
    let out = stdout(&o).replace("\r\n", "\n");
    assert!(out.contains(&format!("     {blg} (Binary)\n")), "{out}");
    assert!(
        out.contains(
            "Begin:    1/17/2020 00:00:00.000\nEnd:      1/17/2020 00:00:02.000\nSamples:  3\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "\\\\HOST\\Memory\\Available Bytes\n\\\\HOST\\Processor(_Total)\\% Processor Time\n"
        ),
        "{out}"
    );
    let csv = d.path("out.csv");
    let o = run(&["relog", &blg, "-f", "csv", "-o", &csv, "-y"]);
    assert_success(&o);
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\HOST\\Memory\\Available Bytes\",\"\\\\HOST\\Processor(_Total)\\% Processor Time\"\r\n\
         \"01/17/2020 00:00:00.000\",\"1000\",\" \"\r\n\
         \"01/17/2020 00:00:01.000\",\"1001\",\"75\"\r\n\
         \"01/17/2020 00:00:02.000\",\"1002\",\"75\"\r\n"
    );
    // A log cut inside its second buffer: the samples before the cut, and a warning.
    let whole = blg_log();
    let mut r = perfcounters::format::blg::BlgReader::new(&whole[..]).unwrap();
    let mut offsets = Vec::new();
    while let Some(rec) = r.next_record() {
        offsets.push(rec.unwrap().offset);
    }
    // Cut in the middle of the second sample's event.
    let cut = d.file("cut.blg", &whole[..offsets[2] + 20]);
    let o = run(&["relog", &cut, "-q"]);
    assert_success(&o);
    assert!(
        stderr(&o).starts_with("perfcounters: warning: "),
        "{}",
        stderr(&o)
    );
    assert_stdout_contains(&o, "Samples:  1\r\n");
}

#[test]
fn real_binary_log_summary() {
    let Some(dir) = data_dir() else { return };
    let blg = dir.join("blg/tx-win8-BasicPerfCounters.blg");
    let o = run(&["relog", blg.to_str().unwrap(), "-q"]);
    assert_success(&o);
    let out = stdout(&o).replace("\r\n", "\n");
    assert!(
        out.contains(
            "Begin:    2/19/2013 18:50:17.844\nEnd:      2/19/2013 19:00:17.840\nSamples:  601\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("\\\\GEORGIS3\\Processor(_Total)\\% Processor Time\n"),
        "{out}"
    );
}

/// The output's kind follows its name: a `.blg` gets no CSV text, a contradicting `-f` is refused.
#[test]
fn output_named_blg_or_contradicting_f_is_refused() {
    let d = Dir::new("relog-outkind");
    let input = d.file(
        "in.csv",
        b"\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n\"01/01/2024 00:00:00.000\",\"1\"\r\n",
    );
    let blg = d.path("out.blg");
    let o = run(&["relog", &input, "-o", &blg]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {blg}: binary logs (.blg) are read, not written: name a .csv, .tsv or SQL:file.db!log output\n")
    );
    assert!(!Path::new(&blg).exists());
    let csv = d.path("out.csv");
    let o = run(&["relog", &input, "-f", "tsv", "-o", &csv]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {csv}: the name says CSV but the format asked for is TSV\n")
    );
    // SQL:… without -f is a SQL log.
    let target = format!("SQL:{}!x", d.path("x.db"));
    assert_success(&run(&["relog", &input, "-o", &target]));
    let o = run(&["relog", &target, "-q"]);
    assert_stdout_contains(&o, "(SQL)");
}

/// A .blg that holds events of another log (an ETW file two logs wrote to): the other log's events
/// are skipped and counted in one warning, the log's own samples read, and no error mentions `-c`.
#[test]
fn events_of_another_log_are_counted_once() {
    use perfcounters::format::blg::encode::{
        encode_counter_list, encode_sample, BlgEncodeOptions, BlgWriter, RawEntry, SampleEntry,
    };
    use perfcounters::format::blg::RecordKind;
    use perfcounters::format::v2::Guid;
    let other = Guid::new(0x1234_5678, 0x9abc, 0xdef0, [1, 2, 3, 4, 5, 6, 7, 8]);
    let sample = |i: i64| {
        encode_sample(&[SampleEntry::Counter(RawEntry {
            time_stamp: BLG_T0 + i * 10_000_000,
            first: 1000 + i,
            ..Default::default()
        })])
    };
    let mut w = BlgWriter::new(
        std::io::Cursor::new(Vec::new()),
        BlgEncodeOptions::default(),
    )
    .unwrap();
    w.write_record(
        RecordKind::CounterList,
        BLG_T0,
        &encode_counter_list(&[available_bytes_spec()]),
    )
    .unwrap();
    for i in 0..4 {
        if i == 1 {
            w.set_log_guid(other);
            for j in 0..40 {
                w.write_record(RecordKind::Sample, BLG_T0 + j, &sample(j))
                    .unwrap();
            }
            w.set_log_guid(BlgEncodeOptions::default().log_guid);
        }
        w.write_record(RecordKind::Sample, BLG_T0 + i * 10_000_000, &sample(i))
            .unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    let d = Dir::new("relog-foreign");
    let blg = d.file("two-logs.blg", &bytes);
    let o = run(&["relog", &blg, "-q"]);
    assert_success(&o);
    assert_stdout_contains(&o, "Samples:  4");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("perfcounters: warning: {blg}: offset ")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            ": 40 PDH events of another log ({other}, not this log's {}) skipped, the first at this offset\n",
            BlgEncodeOptions::default().log_guid
        )),
        "{err}"
    );
    let o = run(&["relog", &blg]);
    assert_success(&o);
    assert_eq!(stdout(&o).lines().count(), 5, "{}", stdout(&o));

    // The other log's events come first: the log the file is read as has no counter list.
    let mut w = BlgWriter::new(
        std::io::Cursor::new(Vec::new()),
        BlgEncodeOptions::default(),
    )
    .unwrap();
    w.set_log_guid(other);
    w.write_record(RecordKind::Sample, BLG_T0, &sample(0))
        .unwrap();
    w.set_log_guid(BlgEncodeOptions::default().log_guid);
    w.write_record(
        RecordKind::CounterList,
        BLG_T0,
        &encode_counter_list(&[available_bytes_spec()]),
    )
    .unwrap();
    w.write_record(RecordKind::Sample, BLG_T0, &sample(1))
        .unwrap();
    let blg = d.file("other-first.blg", &w.finish().unwrap().into_inner());
    let o = run(&["relog", &blg, "-q"]);
    assert_success(&o);
    assert_stdout_contains(&o, "Samples:  1");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(": 1 sample before the counter list skipped, the first at this offset\n"),
        "{err}"
    );
    // Nothing but the other log's samples: the log has no counter list, and says so (no -c given,
    // none blamed).
    let mut w = BlgWriter::new(
        std::io::Cursor::new(Vec::new()),
        BlgEncodeOptions::default(),
    )
    .unwrap();
    w.set_log_guid(other);
    for j in 0..3 {
        w.write_record(RecordKind::Sample, BLG_T0 + j, &sample(j))
            .unwrap();
    }
    let blg = d.file("only-other.blg", &w.finish().unwrap().into_inner());
    let o = run(&["relog", &blg, "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {blg}: the log holds no counter list\n")
    );
    assert!(!stderr(&o).contains("-c"));
}

/// A Russian log (code page 1251, no byte-order mark) reads with Cyrillic names and no flag; relog
/// and analyze say which code page they assumed; `--code-page` overrides it, and 65001 on text
/// that is not UTF-8 is an error.
#[test]
fn code_page_of_a_russian_log_is_detected() {
    let d = Dir::new("cp1251");
    let text = "\"(PDH-CSV 4.0) (RTZ 2 (\",\"\\\\ПК\\Процессор(_Total)\\% загруженности процессора\",\"\\\\ПК\\Память\\Доступно байт\"\r\n\
                \"01/15/2024 08:00:00.250\",\"3.25\",\"1024\"\r\n\
                \"01/15/2024 08:00:15.250\",\"97.5\",\"2048\"\r\n";
    let (bytes, _, bad) = encoding_rs::WINDOWS_1251.encode(text);
    assert!(!bad);
    let input = d.file("ru.csv", &bytes);
    let warning = format!(
        "perfcounters: warning: {input}: no byte-order mark and not UTF-8: read in code page 1251, \
         detected from its header line (a code page given overrides it)\n"
    );
    let o = run(&["relog", &input, "-q"]);
    assert_success(&o);
    assert!(stderr(&o).starts_with(&warning), "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("     {input} (CSV, code page 1251)\r\n")));
    assert!(stdout(&o).contains("\\\\ПК\\Процессор(_Total)\\% загруженности процессора\r\n"));
    // PAL's CounterLang.xml keeps English names for ruRU: English paths need the machine's
    // tables, and the message says so.
    let o = run(&["relog", &input, "-c", r"\Memory\Available Bytes", "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(
        "which the built-in table (PAL's CounterLang.xml) does not translate: pass --names"
    ));
    // Given, the code page is used as it is (no warning), right or wrong.
    let o = run(&["relog", &input, "-q", "--code-page", "1252"]);
    assert_success(&o);
    assert!(!stderr(&o).contains("code page"));
    assert!(stdout(&o).contains("(CSV, code page 1252)"));
    assert!(!stdout(&o).contains("Процессор"));
    let o = run(&["relog", &input, "-q", "--code-page", "65001"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {input}: line 1, column 29: not UTF-8 (code page 65001 was given): \
             byte 0xCF starts no UTF-8 character; give the code page the log was written in\n"
        )
    );
    // analyze reads it the same way and says so, on standard error and in the report.
    let o = run(&["analyze", &input, "--format", "json"]);
    assert_success(&o);
    assert!(stderr(&o).starts_with(&warning), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["encodings"],
        serde_json::json!({ &input: "code page 1251" })
    );
    let o = run(&["analyze", &input, "--format", "json", "--code-page", "1252"]);
    assert_success(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["encodings"],
        serde_json::json!({ &input: "code page 1252" })
    );
    let o = run(&["analyze", &input, "--format", "html"]);
    assert_success(&o);
    assert!(stdout(&o).contains(&format!(
        "<tr><th>Logs</th><td>{input} (code page 1251)</td></tr>"
    )));
    assert!(stderr(&o).contains(
        "perfcounters: note: only 0 of 72 analyses were evaluated: the log names its counters in \
         a language other than English"
    ));
}

/// relog reads PAL's CounterLang.xml as --names, as analyze does (one loader).
#[test]
fn relog_takes_pal_counter_lang_as_names() {
    let Some(data) = data_dir() else { return };
    let d = Dir::new("relog-counterlang");
    let input = d.file(
        "fr.csv",
        "\"(PDH-CSV 4.0) (Paris, Madrid)(-60)\",\"\\\\PC\\Processeur(_Total)\\% temps processeur\"\r\n\
         \"01/15/2024 10:00:00.000\",\"20\"\r\n"
            .as_bytes(),
    );
    let names = data.join("pal").join("CounterLang.xml");
    let o = run(&[
        "relog",
        &input,
        "-c",
        r"\Processor(*)\% Processor Time",
        "--names",
        names.to_str().unwrap(),
        "-q",
    ]);
    assert_success(&o);
    assert!(stdout(&o).contains("\\\\PC\\Processeur(_Total)\\% temps processeur\r\n"));
}
