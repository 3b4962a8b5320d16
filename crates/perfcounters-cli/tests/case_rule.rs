//! `relog -c` compares names by the library's one case rule (`path::fold_case`): `ΣΣ` selects `σσ`
//! but not `σς` (which `str::to_lowercase` would make of it), `İ` does not select `i̇` (its
//! `str::to_lowercase`), `ẞ` selects `ß` but `SS` is another name.

use crate::common;

use common::{assert_success, run, stdout, Dir};

#[test]
fn relog_counter_filter_uses_the_case_rule() {
    let d = Dir::new("case-rule");
    let columns = [
        r"\\H\σσ\x",
        r"\\H\σς\x",
        "\\\\H\\\u{130}\\y",
        "\\\\H\\i\u{307}\\y",
        r"\\H\ß\z",
        r"\\H\SS\z",
    ];
    let mut text = String::from("\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\"");
    for c in columns {
        text.push_str(&format!(",\"{c}\""));
    }
    text.push_str("\r\n\"02/01/2014 00:00:00.000\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\"\r\n");
    text.push_str("\"02/01/2014 00:00:01.000\",\"7\",\"8\",\"9\",\"10\",\"11\",\"12\"\r\n");
    let input = d.file("in.csv", text.as_bytes());
    let o = run(&[
        "relog",
        &input,
        "-c",
        r"\ΣΣ\X",
        "\\\u{130}\\Y",
        "\\\u{1e9e}\\Z",
    ]);
    assert_success(&o);
    assert_eq!(
        stdout(&o),
        "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\H\\σσ\\x\",\"\\\\H\\\u{130}\\y\",\"\\\\H\\ß\\z\"\r\n\
         \"02/01/2014 00:00:00.000\",\"1\",\"3\",\"5\"\r\n\
         \"02/01/2014 00:00:01.000\",\"7\",\"9\",\"11\"\r\n"
    );
}
