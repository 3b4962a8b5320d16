//! The command grammar every command shares: `--replay` takes recordings and leaves counter paths
//! and object names alone, in every order; relog and typeperf read options by one rule.

use crate::common;

use common::{
    assert_success, available_bytes_spec, blg_bytes, block, run, run_on, stderr, stdout, tempdir,
    v1_capture, write_blocks, BLG_T0,
};

const CPU: &str = r"\Processor(*)\% Processor Time";

/// The PDH-CSV that `watch CPU --replay t0 t1 t2` writes (see `tests/cli.rs`).
const CPU_CSV: &str = "\r\n\
\"(PDH-CSV 4.0)\",\"\\\\GETAWAY\\Processor(0)\\% Processor Time\",\"\\\\GETAWAY\\Processor(1)\\% Processor Time\",\"\\\\GETAWAY\\Processor(_Total)\\% Processor Time\"\r\n\
\"03/18/2020 18:54:04.988\",\"75.000000\",\"50.000000\",\"62.500000\"\r\n\
\"03/18/2020 18:54:05.988\",\"0.000000\",\"100.000000\",\"50.000000\"\r\n";

#[test]
fn replay_leaves_counter_paths_to_watch_in_every_order() {
    let dir = tempdir("grammar-watch");
    let files = write_blocks(&dir);
    let f: Vec<&str> = files.iter().map(String::as_str).collect();
    // The README's form: the paths after the recordings.
    let orders: [Vec<&str>; 4] = [
        vec!["watch", "-f", "csv", "--replay", f[0], f[1], f[2], CPU],
        vec!["watch", "-f", "csv", "--replay", f[0], CPU, f[1], f[2]],
        vec!["watch", CPU, "-f", "csv", "--replay", f[0], f[1], f[2]],
        vec!["watch", "--replay", f[0], f[1], f[2], CPU, "-f", "csv"],
    ];
    for args in &orders {
        let o = run(args);
        assert_success(&o);
        assert_eq!(stdout(&o), CPU_CSV, "{args:?}");
    }
    // A capture directory and a path after it.
    let blocks = [
        block(0, [0, 0], 100),
        block(1, [2_500_000, 5_000_000], 101),
        block(2, [12_500_000, 5_000_000], 99),
    ];
    let cap = dir.join("cap");
    v1_capture(&blocks).write(&cap).unwrap();
    let o = run(&["watch", "-f", "csv", "--replay", cap.to_str().unwrap(), CPU]);
    assert_success(&o);
    assert_eq!(stdout(&o), CPU_CSV);
    // A word that is neither a recording nor a path is named as such.
    let o = run(&["watch", "--replay", f[0], "Processor"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "perfcounters: --replay Processor: no such file or directory, and not a counter path (a \
         counter path starts with \\)\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_leaves_the_object_to_list() {
    let dir = tempdir("grammar-list");
    let log = dir.join("x.blg");
    let sample = |i: i64| {
        use perfcounters::format::blg::encode::{RawEntry, SampleEntry};
        let t = BLG_T0 + i * 10_000_000;
        (
            t,
            vec![SampleEntry::Counter(RawEntry {
                time_stamp: t,
                first: 1000 + i,
                multi_count: 1,
                ..Default::default()
            })],
        )
    };
    std::fs::write(
        &log,
        blg_bytes(&[available_bytes_spec()], vec![sample(0), sample(1)]),
    )
    .unwrap();
    let log = log.to_str().unwrap();
    for args in [
        vec!["list", "--replay", log, "Memory"],
        vec!["list", "Memory", "--replay", log],
    ] {
        let o = run(&args);
        assert_success(&o);
        assert_eq!(stdout(&o), "\\Memory\\Available Bytes\n", "{args:?}");
    }
    let files = write_blocks(&dir);
    let o = run_on(
        &["list", "-x", "--replay"],
        &[files.clone(), vec!["processor".into()]].concat(),
    );
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\\Processor(0)\\% Processor Time\n\\Processor(1)\\% Processor Time\n\\Processor(_Total)\\% Processor Time\n"
    );
    let o = run(&["list", "--replay", log, CPU]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "perfcounters: list takes an object name (such as Processor), not the counter path \
         \\Processor(*)\\% Processor Time\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn relog_and_typeperf_read_options_by_one_rule() {
    // `/x` and `-x` are the same option in both; an unknown one is named with the close ones.
    for (command, rest) in [("typeperf", vec![CPU]), ("relog", vec!["in.csv"])] {
        for flag in ["-zz", "/zz", "--zz"] {
            let mut args = vec![command];
            args.extend(&rest);
            args.push(flag);
            let o = run(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert_eq!(
                stderr(&o),
                format!("perfcounters: unknown option \"{flag}\"; see perfcounters {command} -?\n")
            );
        }
    }
    let o = run(&["relog", "in.csv", "/cff", "x"]);
    assert_eq!(
        stderr(&o),
        "perfcounters: unknown option \"/cff\"; did you mean \"-cf\" or \"-c\"?; see perfcounters relog -?\n"
    );
    // An option's value cannot be another option.
    let o = run(&["typeperf", CPU, "-o", "-y"]);
    assert_eq!(
        stderr(&o),
        "perfcounters: option -o needs a value, not the option -y\n"
    );
    // A file path that starts with `/` is a value, not an option.
    let dir = tempdir("grammar-slash");
    let missing = dir.join("missing.csv");
    let o = run(&["relog", missing.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1));
    // The log, then the I/O error, once.
    let io = std::fs::read(&missing).unwrap_err();
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {}: {io}\n", missing.display())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_wildcard_without_instances_keeps_its_column_and_bad_paths_are_each_named() {
    let dir = tempdir("grammar-wildcard");
    let files = write_blocks(&dir);
    let o = run_on(
        &[
            "watch",
            r"\Processor(firefox*)\% Processor Time",
            r"\Processor(_Total)\% Processor Time",
            "-f",
            "csv",
            "--replay",
        ],
        &files,
    );
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\r\n\"(PDH-CSV 4.0)\",\"\\\\GETAWAY\\Processor(firefox*)\\% Processor Time\",\"\\\\GETAWAY\\Processor(_Total)\\% Processor Time\"\r\n\
         \"03/18/2020 18:54:04.988\",\" \",\"62.500000\"\r\n\
         \"03/18/2020 18:54:05.988\",\" \",\"50.000000\"\r\n"
    );
    assert_eq!(
        stderr(&o),
        "perfcounters: \\Processor(firefox*)\\% Processor Time: object \"Processor\" has no \
         instance matching \"firefox*\" yet\n"
    );
    // Alone, it still waits: a row per sample, with no value.
    let o = run_on(
        &[
            "watch",
            r"\Processor(firefox*)\% Processor Time",
            "-f",
            "csv",
            "--replay",
        ],
        &files,
    );
    assert_success(&o);
    assert_eq!(stdout(&o).lines().count(), 4, "{}", stdout(&o));
    // Nothing valid: every path is named with its reason (typeperf's case is in tests/cli.rs).
    let o = run_on(
        &[
            "watch",
            r"\Procesor(*)\% Processor Time",
            r"\System\Processs",
            "--replay",
        ],
        &files,
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "perfcounters: no valid counters:\n  \
         \\Procesor(*)\\% Processor Time: no object named \"Procesor\"; did you mean \"Processor\"?\n  \
         \\System\\Processs: object \"System\" has no counter named \"Processs\"; did you mean \"Processes\"?\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_command_overwrites_a_file_silently() {
    let dir = tempdir("grammar-overwrite");
    let files = write_blocks(&dir);
    let out = dir.join("out.csv");
    std::fs::write(&out, "keep").unwrap();
    let o_path = out.to_str().unwrap();
    let o = run_on(&["watch", CPU, "-o", o_path, "--replay"], &files);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {o_path} already exists; add --overwrite (-y) to overwrite it\n")
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
    for flag in ["--overwrite", "-y"] {
        let o = run_on(&["watch", CPU, "-o", o_path, flag, "--replay"], &files);
        assert_success(&o);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), CPU_CSV);
        std::fs::write(&out, "keep").unwrap();
    }
    // typeperf -q -o and relog -o ask for -y too.
    let o = run(&["typeperf", "-q", "-o", o_path]);
    assert_eq!(
        stderr(&o),
        format!("perfcounters: {o_path} already exists; add -y to overwrite it\n")
    );
    let input = dir.join("in.csv");
    std::fs::write(&input, CPU_CSV).unwrap();
    let o = run(&["relog", input.to_str().unwrap(), "-o", o_path]);
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {o_path} already exists; add -y to overwrite it or -a to append to it\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
    // capture -o refuses a non-empty directory before recording anything.
    let o = run(&["capture", "-o", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "perfcounters: {} already exists; add --overwrite (-y) to replace it\n",
            dir.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_error_starts_with_the_program_name() {
    let o = run(&["watch", "--interval", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(
            "perfcounters: invalid value 'x' for '--interval <INTERVAL>': invalid interval \"x\""
        ),
        "{}",
        stderr(&o)
    );
    let o = run(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("perfcounters: unrecognized subcommand 'frobnicate'"),
        "{}",
        stderr(&o)
    );
    // The SQL format names typeperf's own option.
    let o = run(&["typeperf", CPU, "-f", "sql", "-sc", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "perfcounters: the SQL format writes to -o SQL:file.db!logname\n"
    );
}

#[test]
fn relog_times_read_hours_and_minutes_and_refuse_ambiguous_forms() {
    let dir = tempdir("grammar-times");
    let input = dir.join("in.csv");
    std::fs::write(
        &input,
        "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n\
         \"02/01/2014 00:00:20.000\",\"1\"\r\n\
         \"02/01/2014 00:19:00.000\",\"2\"\r\n\
         \"02/01/2014 00:20:00.000\",\"3\"\r\n\
         \"02/01/2014 00:21:00.000\",\"4\"\r\n",
    )
    .unwrap();
    let input = input.to_str().unwrap();
    // `00:20` is twenty past midnight (hours:minutes), as relog reads it, in every spelling.
    for begin in [
        "2/1/2014 00:20",
        "2/1/2014 00:20:00",
        "2/1/2014 12:20 AM",
        "2014-02-01T00:20",
    ] {
        let o = run(&["relog", input, "-b", begin]);
        assert_success(&o);
        assert_eq!(
            stdout(&o),
            "\"(PDH-CSV 4.0)\",\"\\\\H\\Memory\\Available Bytes\"\r\n\
             \"02/01/2014 00:20:00.000\",\"3\"\r\n\
             \"02/01/2014 00:21:00.000\",\"4\"\r\n",
            "{begin}"
        );
    }
    let o = run(&["relog", input, "-e", "2/1/2014 20"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "perfcounters: invalid time for -e: \"2/1/2014 20\": a time of one number is ambiguous; \
         write 20:00 for 20 o'clock or 00:00:20 for 20 seconds past midnight\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn relog_counters_get_close_names_and_the_hint_at_names() {
    let dir = tempdir("grammar-relog-names");
    let spanish = dir.join("es.csv");
    std::fs::write(
        &spanish,
        "\"(PDH-CSV 4.0)\",\"\\\\H\\Procesador(_Total)\\% de tiempo de procesador\",\"\\\\H\\Memoria\\Bytes disponibles\"\r\n\
         \"02/01/2014 00:00:20.000\",\"1\",\"2\"\r\n",
    )
    .unwrap();
    // English paths match the Spanish names through the built-in table (PAL's CounterLang.xml);
    // a log in a language that no table knows gets the hint at --names (tests/relog.rs).
    let o = run(&["relog", spanish.to_str().unwrap(), "-c", CPU, "-q"]);
    assert_success(&o);
    assert!(stdout(&o).contains("\\\\H\\Procesador(_Total)\\% de tiempo de procesador\r\n"));
    // One path misspelt among good ones: a warning with the close names, and the rest is kept.
    let o = run(&[
        "relog",
        spanish.to_str().unwrap(),
        "-c",
        r"\Procesador(_Total)\% de tiempo de procesadr",
        r"\Procesador(_Totl)\% de tiempo de procesador",
        r"\Memoria\Bytes disponibles",
    ]);
    assert_success(&o);
    assert_eq!(
        stderr(&o),
        "perfcounters: warning: \\Procesador(_Total)\\% de tiempo de procesadr: object \
         \"Procesador\" has no counter named \"% de tiempo de procesadr\"; did you mean \"% de \
         tiempo de procesador\"?\n\
         perfcounters: warning: \\Procesador(_Totl)\\% de tiempo de procesador: object \
         \"Procesador\" has no instance \"_Totl\" in the log; did you mean \"_Total\"?\n"
    );
    assert_eq!(
        stdout(&o),
        "\"(PDH-CSV 4.0)\",\"\\\\H\\Memoria\\Bytes disponibles\"\r\n\
         \"02/01/2014 00:00:20.000\",\"2\"\r\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_table_keeps_its_columns_and_has_units() {
    let dir = tempdir("grammar-table");
    let files = write_blocks(&dir);
    let o = run_on(
        &[
            "watch",
            r"\Processor(_Total)\% Processor Time",
            r"\System\Processes",
            "-f",
            "table",
            "--replay",
        ],
        &files,
    );
    assert_success(&o);
    // Not a terminal: each refresh follows the previous one; the value column keeps the width
    // of the widest value so far (62.500, then 50).
    let expected = [
        "2020-03-18 18:54:04.988",
        "",
        " VALUE  UNIT  COUNTER",
        r"62.500  %     \\GETAWAY\Processor(_Total)\% Processor Time",
        r"   101        \\GETAWAY\System\Processes",
        "",
        "2020-03-18 18:54:05.988",
        "",
        " VALUE  UNIT  COUNTER",
        r"    50  %     \\GETAWAY\Processor(_Total)\% Processor Time",
        r"    99        \\GETAWAY\System\Processes",
        "",
    ];
    assert_eq!(stdout(&o), expected.join("\n") + "\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decode_json_says_which_form_it_prints() {
    let dir = tempdir("grammar-decode");
    let files = write_blocks(&dir);
    // A block: one document over several lines.
    let o = run(&["decode", "-f", "json", &files[0]]);
    assert_success(&o);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(doc.is_object());
    assert!(stdout(&o).lines().count() > 1);
    // A binary log: JSON Lines, each line a document.
    let log = dir.join("x.blg");
    let sample = |i: i64| {
        use perfcounters::format::blg::encode::{RawEntry, SampleEntry};
        let t = BLG_T0 + i * 10_000_000;
        let entry = RawEntry {
            time_stamp: t,
            first: 1000 + i,
            multi_count: 1,
            ..Default::default()
        };
        (t, vec![SampleEntry::Counter(entry)])
    };
    std::fs::write(
        &log,
        blg_bytes(&[available_bytes_spec()], vec![sample(0), sample(1)]),
    )
    .unwrap();
    let o = run(&["decode", "-f", "json", log.to_str().unwrap()]);
    assert_success(&o);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{}", stdout(&o));
    // The help says both.
    let o = run(&["decode", "--help"]);
    assert!(stdout(&o).contains(
        "one document for a block file or a capture directory; for a binary log (.blg), read as \
         it goes, JSON Lines: a header line, one line per sample and a closing line"
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}
