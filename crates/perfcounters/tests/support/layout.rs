//! The layout of a crate's `tests/` folder: one test binary, whose root file declares every test
//! file as a module (included by path from the test binaries of both crates).

use std::path::PathBuf;

/// Fails naming each file or folder of `dir` (a crate's `tests/`) that `source` (the test binary's
/// root file) does not declare with `mod NAME;`: with `autotests = false`, cargo compiles nothing
/// else, so an undeclared test file would silently never run.
pub fn assert_every_test_file_is_a_module(dir: PathBuf, source: &str) {
    let root = "tests.rs";
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let module = if path.is_dir() {
            path.join("mod.rs").is_file().then_some(name)
        } else {
            name.strip_suffix(".rs")
                .filter(|_| name != root)
                .map(str::to_owned)
        };
        if let Some(module) = module {
            if !source.lines().any(|l| l.trim() == format!("mod {module};")) {
                missing.push(module);
            }
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "tests/{root} does not declare {missing:?} (add `mod NAME;` for each)"
    );
}
