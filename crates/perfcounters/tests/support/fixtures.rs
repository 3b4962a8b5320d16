//! Fixtures the test binaries of both crates share (included by path, like `shared_data.rs`):
//! scratch directories, the clock of the samples captured on the Windows 10 machine "GETAWAY",
//! and captures built from V1 blocks.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use perfcounters::format::capture::{Capture, CaptureSample};
use perfcounters::format::v2::{BlockData, InstanceData, QueryBlock, QueryData};
use perfcounters::snapshot::SystemTime;

/// A path for test `name` of this test binary in the temporary folder, named after the binary and
/// the process so that parallel runs never share one; removed if it exists, not created. All the
/// tests of a crate run in one process, so two tests asking for the same `name` fail (see
/// [`claim`]).
pub fn scratch_path(name: &str) -> PathBuf {
    claim(name);
    let d = std::env::temp_dir().join(format!(
        "perfcounters-{}-{name}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Records that the running test (the test harness names each test's thread after it) uses the
/// scratch name `name`, and panics if another test of the process has used it: two tests running
/// at once would remove each other's files.
fn claim(name: &str) {
    static CLAIMS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned();
    let mut claims = CLAIMS.lock().unwrap_or_else(PoisonError::into_inner);
    let owner = claims
        .entry(name.to_owned())
        .or_insert_with(|| test.clone());
    assert!(
        *owner == test,
        "the scratch name {name:?} is used by two tests, {owner} and {test}: give each its own"
    );
}

/// A fresh, empty directory for test `name` of this test binary (see [`scratch_path`]).
pub fn tempdir(name: &str) -> PathBuf {
    let d = scratch_path(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A scratch directory of a test (see [`tempdir`]), removed when dropped; its file names as
/// `String`s, as the command lines take them.
pub struct Dir(pub PathBuf);

impl Dir {
    /// A new empty directory named after `name`.
    pub fn new(name: &str) -> Dir {
        Dir(tempdir(name))
    }
    /// Writes `bytes` to the file `name` and returns its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_owned()
    }
    /// The path of the file `name` (not created).
    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The first sample's time, 2020-03-18T18:54:03.9883752Z, as a FILETIME (100 ns since 1601).
pub const T0: i64 = 132_290_312_439_883_752;

/// The UTC wall-clock time of the sample `s` seconds after the first (from 18:54:03.988).
pub fn system_time(s: u16) -> SystemTime {
    SystemTime {
        year: 2020,
        month: 3,
        day_of_week: 3,
        day: 18,
        hour: 18,
        minute: 54,
        second: 3 + s,
        milliseconds: 988,
    }
}

/// The bytes of a V2 query result at sample `s`: one counterset block of `counter_ids` (in data
/// order) and `instances`, on the clock of the V1 samples (performance counter 1,000,000 ticks at
/// the first sample, 10 MHz, 100 ns time from [`T0`]).
pub fn v2_counterset_block(s: i64, counter_ids: Vec<u32>, instances: Vec<InstanceData>) -> Vec<u8> {
    QueryData {
        perf_time_stamp: 1_000_000 + s * 10_000_000,
        perf_time_100ns: T0 + s * 10_000_000,
        perf_freq: 10_000_000,
        system_time: system_time(s as u16),
        blocks: vec![QueryBlock {
            status: 0,
            data: BlockData::CounterSet {
                counter_ids,
                instances,
            },
        }],
    }
    .encode()
    .unwrap()
}

/// A capture of V1 blocks only, one sample per block in order, without name tables.
pub fn v1_capture(blocks: &[Vec<u8>]) -> Capture {
    Capture {
        samples: blocks
            .iter()
            .map(|b| CaptureSample {
                v1: Some(b.clone()),
                v2: None,
            })
            .collect(),
        ..Default::default()
    }
}
