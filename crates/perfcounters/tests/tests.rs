//! The library's integration tests, built as one test binary (`autotests = false` and one
//! `[[test]]` in `Cargo.toml`): each file of `tests/` is a module of it, and `support` holds what
//! they share. A file that is not declared below is not compiled at all, so
//! [`every_test_file_is_a_module`] fails until it is.
//!
//! `cargo test -p perfcounters --test integration MODULE::` runs the tests of one file.

mod support;

mod analyze;
mod analyze_pal_files;
mod analyze_rules;
mod analyze_script;
mod blg;
mod blg_times;
mod calc;
mod capture;
mod case_rule;
mod columnar;
mod compare;
mod export;
mod fleet;
mod format_errors;
mod fuzz_regressions;
mod linux_live;
mod linux_source;
mod log_bytes;
mod log_copy;
mod log_open;
mod logs;
mod logs_sql;
mod merge_values;
mod modules;
mod names;
mod naming;
mod otlp;
mod path;
mod query;
mod query_block;
mod query_catalog;
mod replay;
mod v1;
mod v2;
mod windows_live;

/// Every `tests/*.rs` file and every `tests/*/mod.rs` folder is declared above.
#[test]
fn every_test_file_is_a_module() {
    support::layout::assert_every_test_file_is_a_module(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        include_str!("tests.rs"),
    );
}
