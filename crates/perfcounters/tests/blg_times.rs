//! `.blg` logs read for their records' times alone (`BlgTimesReader`, the first pass of `analyze
//! --interval auto`): the same times, time zone and warnings as the full reader, on the real logs
//! of `../shared/data/blg/`, on encoded logs, and on damaged copies of both (a damaged log ends
//! where the full reader ends it, with the same warning).

use crate::support::shared_data;

use std::io::Cursor;

use perfcounters::format::blg::encode::{
    encode_counter_list, encode_sample, encode_trailer, BlgEncodeOptions, BlgWriter, InstanceEntry,
    RawEntry, SampleEntry,
};
use perfcounters::format::blg::{BlgCounterSpec, RecordKind};
use perfcounters::log::{
    BlgLogReader, BlgTimesReader, LogHeader, LogReader, LogTime, OpenOptions, Record,
};
use perfcounters::{CounterType, PdhStatus};
use proptest::prelude::*;

/// What a reader gives: its header (columns left out), the records' times, then the error that
/// ended it (if any) and its warnings.
type Read = (LogHeader, Vec<LogTime>, Option<String>, Vec<String>);

fn times(mut r: impl LogReader) -> Read {
    let mut header = r.header().clone();
    header.counters.clear();
    let mut out = Vec::new();
    let mut record = Record::default();
    let error = loop {
        match r.read_record(&mut record) {
            Ok(true) => {
                assert!(record.cells.len() == r.header().counters.len());
                out.push(record.time);
            }
            Ok(false) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    (header, out, error, r.warnings().to_vec())
}

/// Both readers over `bytes`: the same result, or the same error when the log cannot be opened.
/// Returns the number of records.
fn check(bytes: &[u8]) -> usize {
    let full = BlgLogReader::new("x.blg", bytes, bytes).map(times);
    let only = BlgTimesReader::new("x.blg", bytes).map(times);
    match (full, only) {
        (Ok(full), Ok(only)) => {
            assert_eq!(only, full);
            full.1.len()
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            0
        }
        (a, b) => panic!("full read {a:?}, times only {b:?}"),
    }
}

/// 2020-01-17 00:00:00 local, and one second.
const T0: i64 = 132_236_928_000_000_000;
const SEC: i64 = 10_000_000;

/// A log of a single counter and a wildcard counter whose instances come and go, `n` samples a
/// second apart (the last three seconds apart), in small buffers so that records span them, and a
/// trailer.
fn encoded_log(n: usize) -> Vec<u8> {
    let specs = [
        BlgCounterSpec {
            machine: r"\\HOST".into(),
            object: "Memory".into(),
            counter: "Available Bytes".into(),
            counter_type: CounterType::PERF_COUNTER_LARGE_RAWCOUNT,
            ..Default::default()
        },
        BlgCounterSpec {
            machine: r"\\HOST".into(),
            object: "Process".into(),
            instance: Some("*".into()),
            counter: "Handle Count".into(),
            counter_type: CounterType::PERF_COUNTER_RAWCOUNT,
            flags: 1,
            ..Default::default()
        },
    ];
    let mut options = BlgEncodeOptions::default();
    options.header.buffer_size = 0x1000;
    options.fragment_size = 700;
    let mut w = BlgWriter::new(Cursor::new(Vec::new()), options).unwrap();
    w.write_record(RecordKind::CounterList, T0, &encode_counter_list(&specs))
        .unwrap();
    let mut time = T0;
    for i in 0..n {
        let names: Vec<String> = (0..(i % 5)).map(|k| format!("p{k}")).collect();
        let entries = [
            SampleEntry::Counter(RawEntry {
                status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                time_stamp: time,
                first: 1000 + i as i64,
                second: 0,
                multi_count: 1,
            }),
            SampleEntry::Instances {
                status: PdhStatus::PDH_CSTATUS_VALID_DATA,
                time_stamp: time,
                items: names
                    .iter()
                    .map(|name| InstanceEntry {
                        name: name.clone(),
                        multi_count: 0,
                        first: i as i64,
                        second: 0,
                    })
                    .collect(),
            },
        ];
        w.write_record(RecordKind::Sample, time, &encode_sample(&entries))
            .unwrap();
        time += if i + 2 == n { 3 * SEC } else { SEC };
    }
    let trailer = encode_trailer(T0, time, n as u32, specs.len() as u32, &[]);
    w.write_record(RecordKind::Trailer, time, &trailer).unwrap();
    w.finish().unwrap().into_inner()
}

/// The real logs (single and wildcard counters, whole objects, several machines, bad samples):
/// every record's time, the header's zone and the warnings are the full reader's; through
/// `OpenOptions::times_only` a `.blg` is opened as the times reader.
#[test]
fn real_logs_give_the_full_readers_times() {
    let Some(dir) = shared_data::dir("the real Windows binary logs") else {
        return;
    };
    let mut logs = 0;
    for entry in std::fs::read_dir(dir.join("blg")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(check(&bytes) > 0, "{}", path.display());
        let opened =
            perfcounters::log::open_file(&path, &OpenOptions::default().with_times_only(true))
                .unwrap();
        assert!(opened.header().counters.is_empty());
        assert_eq!(
            times(opened),
            times(BlgTimesReader::open(&path).unwrap()),
            "{}",
            path.display()
        );
        logs += 1;
    }
    assert!(logs >= 3);
}

/// An encoded log: 40 times a second apart, then one 3 s later; the header names the log's zone.
#[test]
fn encoded_log_times() {
    let bytes = encoded_log(41);
    assert_eq!(check(&bytes), 41);
    let (header, t, error, warnings) = times(BlgTimesReader::new("x.blg", &bytes[..]).unwrap());
    assert_eq!((error, warnings), (None, Vec::<String>::new()));
    assert_eq!(t[1].0 - t[0].0, SEC);
    assert_eq!(t[40].0 - t[39].0, 3 * SEC);
    assert!(header.time_zone.is_some());
}

/// A log cut short: the records before the cut and the full reader's warning naming it.
#[test]
fn cut_logs_end_at_the_cut_with_the_same_warning() {
    let bytes = encoded_log(60);
    let cut = &bytes[..bytes.len() / 2 + 100];
    let n = check(cut);
    assert!(n > 0 && n < 60, "{n}");
    let (_, _, error, warnings) = times(BlgTimesReader::new("x.blg", cut).unwrap());
    assert_eq!(error, None);
    assert!(!warnings.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Bytes overwritten anywhere in an encoded log, or the log cut anywhere: the times reader
    /// stops where the full reader stops, with the same records and warnings (or the same error
    /// when the log cannot be opened at all).
    #[test]
    fn damaged_logs_end_where_a_full_read_ends(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        cut_too in any::<bool>(),
    ) {
        let mut bytes = encoded_log(50);
        for (at, value) in flips {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        if cut_too {
            bytes.truncate(cut.index(bytes.len()));
        }
        check(&bytes);
    }
}

/// The real logs damaged: whole-object logs (V1 blocks, decoded in both passes) and counter logs,
/// bytes overwritten at regular places.
#[test]
fn damaged_real_logs_end_where_a_full_read_ends() {
    let Some(dir) = shared_data::dir("the real Windows binary logs") else {
        return;
    };
    for entry in std::fs::read_dir(dir.join("blg")).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for k in 1..24 {
            let mut damaged = bytes.clone();
            let at = bytes.len() * k / 24;
            for b in damaged.iter_mut().skip(at).take(7) {
                *b = b.wrapping_add(0x5a);
            }
            check(&damaged);
        }
    }
}
