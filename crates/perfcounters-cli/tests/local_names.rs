//! Counter paths in the machine's language: replayed blocks with a `--names` table (text, or a
//! `PerfStringBackup.INI`) accept German paths wherever English ones work (`watch`, `list`), the
//! columns keep the paths as typed, and unknown objects get close names in both languages.

use crate::common;

use std::process::Output;

use common::{
    assert_stdout_contains, assert_success, run, run_on, stderr, stdout, tempdir, write_blocks,
};

/// The CSV body of a replayed watch of the blocks: the header line and the two rows, with the
/// header's paths as `paths` (machine-qualified).
fn csv(paths: &[&str]) -> String {
    let mut header = String::from("\"(PDH-CSV 4.0)\"");
    for p in paths {
        header.push_str(&format!(",\"\\\\GETAWAY{p}\""));
    }
    format!(
        "\r\n{header}\r\n\
\"03/18/2020 18:54:04.988\",\"75.000000\",\"50.000000\",\"62.500000\",\"101.000000\"\r\n\
\"03/18/2020 18:54:05.988\",\"0.000000\",\"100.000000\",\"50.000000\",\"99.000000\"\r\n"
    )
}

/// The columns of a replayed watch of `\Prozessor(*)\Prozessorzeit (%)` and `\System\Prozesse`.
const GERMAN_COLUMNS: [&str; 4] = [
    r"\Prozessor(0)\Prozessorzeit (%)",
    r"\Prozessor(1)\Prozessorzeit (%)",
    r"\Prozessor(_Total)\Prozessorzeit (%)",
    r"\System\Prozesse",
];

/// `watch PATHS --format csv --names NAMES --replay FILES`.
fn watch_csv(paths: &[&str], names: &str, files: &[String]) -> Output {
    let mut args = vec!["watch"];
    args.extend(paths);
    args.extend(["--format", "csv", "--names", names, "--replay"]);
    run_on(&args, files)
}

#[test]
fn german_paths_through_a_names_table() {
    let dir = tempdir("text");
    let files = write_blocks(&dir);
    let names = dir.join("de.txt");
    std::fs::write(
        &names,
        "2 System\n6 Prozessorzeit (%)\n238 Prozessor\n248 Prozesse\n",
    )
    .unwrap();
    let names = names.to_str().unwrap();
    let watch = |paths: &[&str]| watch_csv(paths, names, &files);
    let o = watch(&[r"\Prozessor(*)\Prozessorzeit (%)", r"\System\Prozesse"]);
    assert_success(&o);
    assert_eq!(stdout(&o), csv(&GERMAN_COLUMNS));
    assert_eq!(stderr(&o), "");
    // The same values as the English paths.
    let o = watch(&[r"\Processor(*)\% Processor Time", r"\System\Processes"]);
    assert_eq!(
        stdout(&o),
        csv(&[
            r"\Processor(0)\% Processor Time",
            r"\Processor(1)\% Processor Time",
            r"\Processor(_Total)\% Processor Time",
            r"\System\Processes",
        ])
    );

    // An unknown object gets close names in both languages.
    let o = watch(&[r"\Prozesor(*)\Prozessorzeit (%)", r"\System\Prozesse"]);
    assert_success(&o);
    assert_eq!(
        stderr(&o),
        "perfcounters: \\Prozesor(*)\\Prozessorzeit (%): no object named \"Prozesor\"; \
         did you mean \"Prozessor\" or \"Processor\"?\n"
    );

    // `list` takes the object in either language and lists the English paths.
    let list = |object: &str| {
        let mut args = vec!["list", object, "-x", "--names", names, "--replay"];
        args.push(&files[0]);
        run(&args)
    };
    let o = list("prozessor");
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\\Processor(0)\\% Processor Time\n\\Processor(1)\\% Processor Time\n\
         \\Processor(_Total)\\% Processor Time\n"
    );
    let o = list("Prozesor");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "perfcounters: no object named \"Prozesor\"; did you mean \"Prozessor\" or \"Processor\"?\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn german_paths_through_a_perfstringbackup_ini() {
    // The layout Windows writes: UTF-16LE without a byte-order mark, German before English.
    let ini = "[Perflib]\r\nBase Index=1847\r\n\r\n[PerfStrings_007]\r\n1=1847\r\n2=System\r\n\
               6=Prozessorzeit (%)\r\n238=Prozessor\r\n248=Prozesse\r\n\r\n[PerfStrings_009]\r\n\
               1=1847\r\n2=System\r\n6=% Processor Time\r\n238=Processor\r\n248=Processes\r\n";
    let dir = tempdir("ini");
    let files = write_blocks(&dir);
    let names = dir.join("PerfStringBackup.INI");
    let utf16: Vec<u8> = ini.encode_utf16().flat_map(u16::to_le_bytes).collect();
    std::fs::write(&names, utf16).unwrap();
    let names = names.to_str().unwrap();
    let o = watch_csv(
        &[r"\Prozessor(*)\Prozessorzeit (%)", r"\System\Prozesse"],
        names,
        &files,
    );
    assert_success(&o);
    assert_eq!(stdout(&o), csv(&GERMAN_COLUMNS));
    // The English section names the data, so English paths work with the same table.
    let o = watch_csv(
        &[r"\Processor(0)\% Processor Time", r"\System\Prozesse"],
        names,
        &files,
    );
    assert_stdout_contains(&o, r#""\\GETAWAY\Processor(0)\% Processor Time""#);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The live table's byte units follow the counter's English name, which the name tables give by
/// the counter's title index: a German path (`\Arbeitsspeicher\Verfügbare Bytes`, index 24) is
/// scaled to binary units like `\Memory\Available Bytes`.
#[test]
fn byte_units_for_a_path_in_the_machines_language() {
    use common::{system_time, T0};
    use perfcounters::format::v1::encode;
    use perfcounters::snapshot::{CounterDefinition, Object, SampleClock, Snapshot, Value};
    use perfcounters::CounterType;

    let dir = tempdir("units");
    let memory = |s: i64, bytes: u64| {
        let object = Object::new(4)
            .with_counters(vec![CounterDefinition::new(
                24,
                CounterType::PERF_COUNTER_LARGE_RAWCOUNT,
            )])
            .with_values(vec![Value::U64(bytes)]);
        let snapshot = Snapshot::new("GETAWAY")
            .with_system_time(system_time(s as u16))
            .with_clock(SampleClock {
                perf_time: 1_000_000 + s * 10_000_000,
                perf_freq: 10_000_000,
                perf_time_100ns: T0 + s * 10_000_000,
            })
            .with_objects(vec![object]);
        encode(&snapshot).unwrap()
    };
    let files = common::write_files(
        &dir,
        "m",
        &[memory(0, 1_610_612_736), memory(1, 3_221_225_472)],
    );
    let names = dir.join("de.txt");
    std::fs::write(&names, "4 Arbeitsspeicher\n24 Verfügbare Bytes\n").unwrap();
    let mut args = vec![
        "watch",
        r"\Arbeitsspeicher\Verfügbare Bytes",
        "--format",
        "table",
        "--names",
        names.to_str().unwrap(),
        "--replay",
    ];
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "2020-03-18 18:54:04.988\n\n\
         VALUE  UNIT  COUNTER\n\
         \x203.00  GiB   \\\\GETAWAY\\Arbeitsspeicher\\Verfügbare Bytes\n\n"
    );
}
