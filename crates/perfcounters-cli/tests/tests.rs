//! The command's integration tests, built as one test binary (`autotests = false` and one
//! `[[test]]` in `Cargo.toml`): each file of `tests/` is a module of it, and `common` holds what
//! they share. A file that is not declared below is not compiled at all, so
//! [`every_test_file_is_a_module`] fails until it is.
//!
//! `cargo test -p perfcounters-cli --test integration MODULE::` runs the tests of one file.

mod common;

mod analyze;
mod case_rule;
mod cli;
mod compare;
mod fleet;
mod grammar;
mod local_names;
mod otlp;
mod outputs;
mod parquet;
mod pipes;
mod readme;
mod relog;
mod serve;

/// Every `tests/*.rs` file and every `tests/*/mod.rs` folder is declared above.
#[test]
fn every_test_file_is_a_module() {
    common::layout::assert_every_test_file_is_a_module(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        include_str!("tests.rs"),
    );
}
