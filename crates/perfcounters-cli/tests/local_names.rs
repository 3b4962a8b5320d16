//! Counter paths in the machine's language: replayed blocks with a `--names` table (text, or a
//! `PerfStringBackup.INI`) accept German paths wherever English ones work (`watch`, `list`), the
//! columns keep the paths as typed, and unknown objects get close names in both languages.

mod common;

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
