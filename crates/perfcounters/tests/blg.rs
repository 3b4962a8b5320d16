//! Binary logs (`.blg`): the three real logs of `../shared/data/blg/`, encoded logs of every record
//! kind (fragmented, 32- and 64-bit), hostile variants, and property tests.

use crate::support::shared_data;

use std::io::Cursor;
use std::path::PathBuf;

use perfcounters::format::blg::encode::{
    encode_counter_list, encode_name_chunk, encode_sample, encode_trailer, BlgEncodeOptions,
    BlgWriter, InstanceEntry, RawEntry, SampleEntry,
};
use perfcounters::format::blg::timezone::resolve_name;
use perfcounters::format::blg::{
    BlgCounterSpec, BlgLog, BlgReader, ReadError, RecordKind, SubRecord, DEFAULT_BUFFER_SIZE,
};
use perfcounters::format::v1;
use perfcounters::format::{DecodeError, ErrorKind};
use perfcounters::raw::RawCounter;
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, SampleClock, Snapshot, SystemTime, Value,
};
use perfcounters::{calculate, CounterType, FormatOptions, PdhStatus};
use proptest::prelude::*;

// ------------------------------------------------------------------------------------------------
// Helpers.

/// A real `.blg` from the shared data folder, or `None` (with a message) when it is absent.
fn shared_blg(name: &str) -> Option<Vec<u8>> {
    let path = shared_data::dir("the real Windows binary logs")?
        .join("blg")
        .join(name);
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(_) => {
            eprintln!("skipping: {} is not available", path.display());
            None
        }
    }
}

/// `MM/DD/YYYY HH:MM:SS.mmm` of a local FILETIME, as relog prints it.
fn text(ft: i64) -> String {
    let t = SystemTime::from_filetime(ft);
    format!(
        "{:02}/{:02}/{:04} {:02}:{:02}:{:02}.{:03}",
        t.month, t.day, t.year, t.hour, t.minute, t.second, t.milliseconds
    )
}

/// Every sample of a log: (time, values as (column, raw, status)).
type Samples = Vec<(i64, Vec<(usize, RawCounter, PdhStatus)>)>;

fn read_all(bytes: &[u8]) -> (BlgLog<&[u8]>, Samples) {
    let mut log = BlgLog::new(bytes).expect("open");
    let mut samples = Vec::new();
    while let Some(s) = log.next_sample() {
        let s = s.expect("sample");
        samples.push((
            s.time,
            s.values
                .iter()
                .map(|v| (v.column, v.raw, v.status))
                .collect(),
        ));
    }
    (log, samples)
}

/// The value relog prints for column `col` at sample `i` (`None` = `" "`), from the raw samples.
fn cooked(log: &BlgLog<&[u8]>, samples: &Samples, col: usize, i: usize) -> Option<f64> {
    let find = |i: usize| {
        samples[i]
            .1
            .iter()
            .find(|v| v.0 == col)
            .filter(|v| v.2.is_success())
            .map(|v| v.1)
    };
    let c = &log.columns()[col];
    let newer = find(i)?;
    let older = if i > 0 { find(i - 1) } else { None };
    calculate(
        c.info.counter_type,
        &newer,
        older.as_ref(),
        c.info.time_base,
        &FormatOptions::typeperf(),
    )
    .ok()
}

fn paths(log: &BlgLog<&[u8]>) -> Vec<String> {
    log.display_order()
        .into_iter()
        .map(|i| log.columns()[i].path.to_string())
        .collect()
}

fn spec(machine: &str, object: &str, instance: Option<&str>, counter: &str) -> BlgCounterSpec {
    BlgCounterSpec {
        machine: machine.into(),
        object: object.into(),
        instance: instance.map(Into::into),
        counter: counter.into(),
        ..Default::default()
    }
}

fn counter(ty: CounterType, first: i64, second: i64, time: i64) -> SampleEntry {
    SampleEntry::Counter(RawEntry {
        status: PdhStatus::PDH_CSTATUS_VALID_DATA,
        time_stamp: time,
        first,
        second,
        multi_count: if ty.is_multi() { 2 } else { 1 },
    })
}

fn instances(time: i64, items: &[(&str, i64, i64)]) -> SampleEntry {
    SampleEntry::Instances {
        status: PdhStatus::PDH_CSTATUS_VALID_DATA,
        time_stamp: time,
        items: items
            .iter()
            .map(|&(name, first, second)| InstanceEntry {
                name: name.into(),
                multi_count: 0,
                first,
                second,
            })
            .collect(),
    }
}

/// A log with the given options and records.
fn write_log(options: BlgEncodeOptions, records: &[(RecordKind, i64, Vec<u8>)]) -> Vec<u8> {
    let mut w = BlgWriter::new(Cursor::new(Vec::new()), options).unwrap();
    for (kind, time, data) in records {
        w.write_record(*kind, *time, data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// 2020-01-17 00:00:00 local, and one second.
const T0: i64 = 132_236_928_000_000_000;
const SEC: i64 = 10_000_000;

fn decode_error(e: ReadError) -> DecodeError {
    match e {
        ReadError::Decode(e) => e,
        other => panic!("unexpected error {other}"),
    }
}

/// Reads every record of `bytes`; returns the number read and the error that stopped the reader.
fn read_records(bytes: &[u8]) -> Result<(usize, Option<DecodeError>), DecodeError> {
    let mut r = BlgReader::new(bytes).map_err(decode_error)?;
    let mut n = 0;
    while let Some(rec) = r.next_record() {
        match rec {
            Ok(rec) => {
                n += 1;
                // Parse every record as its kind says, as a consumer would.
                match rec.kind {
                    RecordKind::CounterList => drop(rec.counter_list()),
                    RecordKind::Sample => {
                        if let Ok(s) = rec.sample() {
                            for sub in s.sub_records() {
                                if let SubRecord::Block(b) = sub {
                                    let _ = b.parse().map(|b| b.to_snapshot());
                                }
                            }
                        }
                    }
                    RecordKind::NameTable => drop(rec.name_chunk().map(|c| c.table())),
                    RecordKind::Trailer => drop(rec.trailer()),
                    RecordKind::Other(_) => {}
                }
            }
            Err(e) => return Ok((n, Some(decode_error(e)))),
        }
    }
    Ok((n, None))
}

// ------------------------------------------------------------------------------------------------
// The real logs.

#[test]
fn windows8_single_and_wildcard_counters() {
    let Some(bytes) = shared_blg("tx-win8-BasicPerfCounters.blg") else {
        return;
    };
    let (log, samples) = read_all(&bytes);
    let h = log.header();
    assert_eq!(h.os_build, 9200);
    assert_eq!(h.pointer_size, 8);
    assert!(h.is_64_bit() && !h.is_circular());
    assert_eq!(h.buffer_size, DEFAULT_BUFFER_SIZE);
    assert_eq!(h.buffers_written, 6);
    assert_eq!(h.perf_freq, 2_725_536);
    assert_eq!(h.start_time, 130_058_022_178_447_225);
    assert_eq!(h.end_time, 130_058_028_178_563_349);
    assert_eq!(h.logger_name, "84c9b5fa-8231-45ce-87a3-3814569c135f");
    assert_eq!(
        h.log_file_name,
        r"C:\PerfLogs\Admin\Basic\BasicPerfCounters02.blg"
    );
    assert_eq!(h.time_zone.bias, 480);
    assert_eq!(h.time_zone.standard_name, "@tzres.dll,-212");
    assert_eq!(
        resolve_name(&h.time_zone.standard_name),
        "Pacific Standard Time"
    );

    assert_eq!(samples.len(), 601);
    let (first, last) = log.time_range().unwrap();
    assert_eq!(text(first), "02/19/2013 18:50:17.844");
    assert_eq!(text(last), "02/19/2013 19:00:17.840");
    // The log started with the first collection: its UTC start time is that sample's local time
    // plus the bias.
    assert_eq!(h.time_zone.to_utc(first) / 10_000, h.start_time / 10_000);
    assert_eq!(
        h.time_zone.zone_at(first),
        ("Pacific Standard Time".to_string(), 480)
    );

    let flags: Vec<u32> = log.specs().iter().map(|s| s.flags).collect();
    assert_eq!(flags, [0, 0, 0, 0, 0, 1]);
    assert_eq!(log.specs()[0].counter_type, CounterType::PERF_AVERAGE_BULK);
    assert_eq!(log.specs()[0].time_base, 2_725_536);
    assert_eq!(log.specs()[0].default_scale, -2);
    assert_eq!(
        log.specs()[5].path().to_string(),
        r"\\GEORGIS3\Processor(*)\% Processor Time"
    );
    assert_eq!(
        paths(&log),
        [
            r"\\GEORGIS3\PhysicalDisk(0 C:)\Avg. Disk Bytes/Read",
            r"\\GEORGIS3\PhysicalDisk(0 C:)\Avg. Disk Bytes/Write",
            r"\\GEORGIS3\PhysicalDisk(0 C:)\Avg. Disk Queue Length",
            r"\\GEORGIS3\PhysicalDisk(0 C:)\Avg. Disk Read Queue Length",
            r"\\GEORGIS3\PhysicalDisk(0 C:)\Avg. Disk Write Queue Length",
            r"\\GEORGIS3\Processor(0)\% Processor Time",
            r"\\GEORGIS3\Processor(1)\% Processor Time",
            r"\\GEORGIS3\Processor(2)\% Processor Time",
            r"\\GEORGIS3\Processor(3)\% Processor Time",
            r"\\GEORGIS3\Processor(_Total)\% Processor Time",
        ]
    );
    // Every sample has all ten values, all valid: 600 intervals of 10 counters, the 6000 values
    // Microsoft's own Tx tests count (3000 of them PhysicalDisk).
    assert!(samples
        .iter()
        .all(|s| s.1.len() == 10 && s.1.iter().all(|v| v.2.is_success())));
    let intervals = samples.windows(2).map(|w| w[1].1.len()).sum::<usize>();
    assert_eq!(intervals, 6000);
    // The first row is blank: every counter here needs two samples.
    assert!((0..10).all(|c| cooked(&log, &samples, c, 0).is_none()));
    // Second row, by hand from the raw samples:
    // Avg. Disk Bytes/Write (AVERAGE_BULK) = ΔN / ΔB = (59518740480 − 59518247936) / (7029031 − 7028975).
    assert_eq!(
        cooked(&log, &samples, 1, 1),
        Some((59_518_740_480i64 - 59_518_247_936) as f64 / (7_029_031i64 - 7_028_975) as f64)
    );
    // Avg. Disk Queue Length (100NS_QUEUELEN) = ΔN / ΔD = 397000 / 10000360.
    assert_eq!(cooked(&log, &samples, 2, 1), Some(397_000.0 / 10_000_360.0));
    // Processor(0) % Processor Time (100NSEC_TIMER_INV) = 100 (1 − ΔN / ΔD), ΔN = 8437500.
    assert_eq!(
        cooked(&log, &samples, 5, 1),
        Some(100.0 * (1.0 - 8_437_500.0 / 10_000_360.0))
    );
    assert_eq!(cooked(&log, &samples, 5, 1), Some(15.628037390653937));
    // No reads in the first interval: the base did not move, so there is no value.
    assert_eq!(cooked(&log, &samples, 0, 1), None);
    assert!(log.warnings().is_empty(), "{:?}", log.warnings());
    assert!(log.trailer().is_none());
}

#[test]
fn server2003_several_machines_and_bad_samples() {
    let Some(bytes) = shared_blg("powershell-2003-BadCounterSamples.blg") else {
        return;
    };
    let (log, samples) = read_all(&bytes);
    let h = log.header();
    assert_eq!(
        (h.os_build, h.pointer_size, h.perf_freq),
        (3790, 4, 3_579_545)
    );
    assert_eq!(h.time_zone.standard_name, "SA Eastern Standard Time");
    assert_eq!(
        h.time_zone.zone_at(samples[0].0),
        ("SA Eastern Standard Time".to_string(), 180)
    );
    assert_eq!(
        h.log_file_name,
        r"C:\PerfLogs\Monitor Server Processor_20070702.blg"
    );
    // Microsoft's own tests expect 275 sample sets, 5 of them with errors.
    assert_eq!(samples.len(), 275);
    let bad: Vec<usize> = samples
        .iter()
        .enumerate()
        .filter(|(_, s)| s.1.iter().any(|v| !v.2.is_success()))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(bad, [82, 83, 151, 226, 227]);
    let errors: Vec<PdhStatus> = samples
        .iter()
        .flat_map(|s| s.1.iter().map(|v| v.2))
        .filter(|s| !s.is_success())
        .collect();
    assert_eq!(errors.len(), 52);
    assert!(errors
        .iter()
        .all(|&s| s == PdhStatus::PDH_CSTATUS_NO_MACHINE));

    let specs = log.specs();
    assert_eq!(specs.len(), 26);
    assert!(specs
        .iter()
        .enumerate()
        .all(|(i, s)| s.user_data == i as u32
            && s.counter_type == CounterType::PERF_100NSEC_TIMER_INV
            && s.time_base == 10_000_000));
    let p = paths(&log);
    assert_eq!(p.len(), 26);
    assert_eq!(p[0], r"\\s14185201\Processor(_Total)\% Processor Time");
    assert_eq!(p[25], r"\\s14185423\Processor(_Total)\% Processor Time");

    // The time is the first counter's stored time stamp; the logger's event time stamps run 86 s
    // behind it (and behind the log's own start time).
    assert_eq!(text(samples[0].0), "07/02/2007 14:21:39.298");
    assert_eq!(text(samples[274].0), "07/04/2007 12:01:41.276");
    assert!(h.time_zone.to_utc(samples[0].0) > h.start_time);
    // s14185201, second row: 100 (1 − 5807382812 / 6000156250).
    assert_eq!(
        cooked(&log, &samples, 0, 1),
        Some(100.0 * (1.0 - 5_807_382_812.0 / 6_000_156_250.0))
    );
    assert_eq!(cooked(&log, &samples, 0, 1), Some(3.2128069664852488));
    // Sample 82 has no value for the unreachable machines, nor has sample 83 (its older sample is
    // missing). The last machine answered both times, but had restarted in between: its idle time
    // went backwards (814609062500 → 4639375000), which is invalid data, not a value.
    assert_eq!(cooked(&log, &samples, 0, 82), None);
    assert_eq!(cooked(&log, &samples, 0, 83), None);
    assert!(cooked(&log, &samples, 0, 84).is_some());
    assert_eq!(cooked(&log, &samples, 25, 83), None);
    assert!(cooked(&log, &samples, 25, 84).is_some());
    assert!(log.warnings().is_empty(), "{:?}", log.warnings());
}

#[test]
fn vista_whole_objects_named_from_the_embedded_table() {
    let Some(bytes) = shared_blg("pal-vista-SamplePerfmonLog.blg") else {
        return;
    };
    let mut r = BlgReader::new(&bytes[..]).unwrap();
    let mut kinds = Vec::new();
    let mut fragments = Vec::new();
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        kinds.push(rec.kind);
        if rec.kind == RecordKind::Sample {
            fragments.push(rec.fragment_count);
        }
    }
    assert_eq!(
        kinds
            .iter()
            .filter(|&&k| k == RecordKind::NameTable)
            .count(),
        14
    );
    assert_eq!(kinds[14], RecordKind::CounterList);
    assert_eq!(*kinds.last().unwrap(), RecordKind::Trailer);
    // Every sample (~23 KB) spans three events.
    assert_eq!(fragments, [3; 11]);

    let (log, samples) = read_all(&bytes);
    let h = log.header();
    assert_eq!(
        (h.os_build, h.pointer_size, h.perf_freq),
        (6000, 4, 3_579_545)
    );
    assert_eq!(
        h.time_zone.zone_at(samples[0].0),
        ("Eastern Daylight Time".to_string(), 240)
    );
    assert_eq!(samples.len(), 11);
    assert_eq!(text(samples[0].0), "08/14/2007 15:40:38.659");
    assert_eq!(text(samples[10].0), "08/14/2007 15:50:38.599");
    let t = log.trailer().unwrap();
    assert_eq!((t.samples, t.entries), (11, 8));
    assert_eq!((t.first_time, t.last_time), (samples[0].0, samples[10].0));

    let names = log.names();
    assert_eq!(names.base_index(), Some(1847));
    assert_eq!(names.name(230), Some("Process"));
    let entries: Vec<String> = log.specs().iter().map(|s| s.path().to_string()).collect();
    assert_eq!(
        entries,
        [
            r"\\ZACH-PC\LogicalDisk(*)\*",
            r"\\ZACH-PC\TCPv4(*)\*",
            r"\\ZACH-PC\Memory\*",
            r"\\ZACH-PC\Network Interface(*)\*",
            r"\\ZACH-PC\PhysicalDisk(*)\*",
            r"\\ZACH-PC\Process(*)\*",
            r"\\ZACH-PC\Processor(*)\*",
            r"\\ZACH-PC\System\*",
        ]
    );
    assert!(log
        .specs()
        .iter()
        .all(|s| s.flags == 0x10 && s.is_whole_object()));

    // Process instances, named like PDH (duplicates numbered in data order).
    let cols = log.columns();
    let process: Vec<String> = log
        .display_order()
        .into_iter()
        .map(|i| &cols[i])
        .filter(|c| c.path.object == "Process" && c.path.counter == "% Processor Time")
        .map(|c| c.instance().unwrap())
        .collect();
    assert_eq!(
        &process[..6],
        ["Idle", "System", "smss", "csrss", "wininit", "csrss#1"]
    );
    assert!(process.iter().any(|p| p == "svchost#12"));
    assert_eq!(process[50], "_Total");
    // Instances that appear later get columns after the first sample's (51) ones.
    assert_eq!(
        &process[51..],
        [
            "PowerStarter",
            "PowerDVD",
            "Solitaire",
            "SearchProtocolHost",
            "SearchFilterHost",
            "rundll32#1"
        ]
    );
    let solitaire = cols
        .iter()
        .position(|c| c.path.to_string() == r"\\ZACH-PC\Process(Solitaire)\% Processor Time")
        .unwrap();
    assert!(cols[solitaire].first_sample > 0);
    // Per sample, the Process object has a changing number of instances.
    let per_sample: Vec<usize> = samples
        .iter()
        .map(|s| {
            s.1.iter()
                .filter(|v| {
                    cols[v.0].path.object == "Process"
                        && cols[v.0].path.counter == "% Processor Time"
                })
                .count()
        })
        .collect();
    assert_eq!(per_sample[0], 51);
    assert!(per_sample.iter().any(|&n| n != 51));
    // Whole-object counters are sorted by name within their entry.
    let memory: Vec<&str> = log
        .display_order()
        .into_iter()
        .map(|i| &cols[i])
        .filter(|c| c.path.object == "Memory")
        .map(|c| c.path.counter.as_str())
        .collect();
    assert_eq!(
        &memory[..3],
        [
            "% Committed Bytes In Use",
            "Available Bytes",
            "Available KBytes"
        ]
    );

    let col = |path: &str| {
        cols.iter()
            .position(|c| c.path.to_string() == path)
            .unwrap()
    };
    // Memory\Available Bytes, a raw count, has a value in the first row: 83587072.
    let available = col(r"\\ZACH-PC\Memory\Available Bytes");
    assert_eq!(cooked(&log, &samples, available, 0), Some(83_587_072.0));
    // Process(Idle)\% Processor Time (100NSEC_TIMER) in the second row, from the blocks' raw values
    // and PerfTime100nSec: 100 · (12665781250 − 12558750000) / (128315940986148066 − 128315940386596596).
    let idle = col(r"\\ZACH-PC\Process(Idle)\% Processor Time");
    assert_eq!(cooked(&log, &samples, idle, 0), None);
    assert_eq!(
        cooked(&log, &samples, idle, 1),
        Some(100.0 * 107_031_250.0 / 599_551_470.0)
    );
    assert!(log.warnings().is_empty(), "{:?}", log.warnings());
}

// ------------------------------------------------------------------------------------------------
// Encoded logs.

fn single_specs() -> Vec<BlgCounterSpec> {
    let mut a = spec(r"\\HOST", "Memory", None, "Available Bytes");
    a.counter_type = CounterType::PERF_COUNTER_RAWCOUNT;
    let mut b = spec(r"\\HOST", "Processor", Some("_Total"), "% Processor Time");
    b.counter_type = CounterType::PERF_100NSEC_TIMER_INV;
    b.time_base = 10_000_000;
    b.user_data = 1;
    let mut c = spec(r"\\HOST", "Process", Some("svchost"), "IO Read Bytes/sec");
    c.counter_type = CounterType::PERF_COUNTER_BULK_COUNT;
    c.time_base = 2_000_000;
    c.instance_index = 2;
    c.parent = None;
    let mut d = spec(r"\\HOST", "Thread", Some("0"), "% User Time");
    d.parent = Some("explorer".into());
    d.counter_type = CounterType::PERF_100NSEC_TIMER;
    d.time_base = 10_000_000;
    d.default_scale = -1;
    vec![a, b, c, d]
}

fn single_log(options: BlgEncodeOptions) -> Vec<u8> {
    let specs = single_specs();
    let mut records = vec![(RecordKind::CounterList, T0, encode_counter_list(&specs))];
    for i in 0..3i64 {
        let t = T0 + i * SEC;
        let sample = encode_sample(&[
            counter(CounterType::PERF_COUNTER_RAWCOUNT, 1000 + i, 0, t),
            counter(
                CounterType::PERF_100NSEC_TIMER_INV,
                5_000_000 * i,
                T0 + i * SEC,
                t,
            ),
            counter(
                CounterType::PERF_COUNTER_BULK_COUNT,
                4096 * i * i,
                2_000_000 * i,
                t,
            ),
            counter(
                CounterType::PERF_100NSEC_TIMER,
                2_500_000 * i,
                T0 + i * SEC,
                t,
            ),
        ]);
        records.push((RecordKind::Sample, t, sample));
    }
    write_log(options, &records)
}

#[test]
fn single_counters_round_trip_32_and_64_bit() {
    for options in [
        BlgEncodeOptions::default(),
        BlgEncodeOptions::default().with_64_bit(),
    ] {
        let bits64 = options.header.pointer_size == 8;
        let bytes = single_log(options.clone());
        assert_eq!(bytes.len(), 2 * DEFAULT_BUFFER_SIZE as usize);
        let (log, samples) = read_all(&bytes);
        let mut expected = options.header.clone();
        expected.buffers_written = 2;
        assert_eq!(log.header(), &expected);
        assert_eq!(log.header().is_64_bit(), bits64);
        assert_eq!(log.specs(), single_specs());
        assert_eq!(
            paths(&log),
            [
                r"\\HOST\Memory\Available Bytes",
                r"\\HOST\Processor(_Total)\% Processor Time",
                r"\\HOST\Process(svchost#2)\IO Read Bytes/sec",
                r"\\HOST\Thread(explorer/0)\% User Time",
            ]
        );
        assert_eq!(samples.len(), 3);
        assert_eq!(samples[2].0, T0 + 2 * SEC);
        assert_eq!(cooked(&log, &samples, 0, 0), Some(1000.0));
        assert_eq!(cooked(&log, &samples, 1, 0), None);
        assert_eq!(cooked(&log, &samples, 1, 1), Some(50.0));
        // 4096 · (4 − 1) bytes in one second.
        assert_eq!(cooked(&log, &samples, 2, 2), Some(12288.0));
        assert_eq!(cooked(&log, &samples, 3, 2), Some(25.0));
        assert_eq!(log.columns()[3].info.default_scale, -1);
        // The values carry their UTC time: local + 8 h (Pacific standard time in January).
        assert_eq!(samples[0].1[0].1.time, T0 + 8 * 3600 * SEC);
        assert!(log.warnings().is_empty());
    }
}

#[test]
fn logs_are_recognised_by_their_first_bytes() {
    use perfcounters::format::blg::layout::{buffer_header, system_trace_header};
    use perfcounters::format::blg::{looks_like_blg, SNIFF_LEN};

    let head = |b: &[u8]| b[..SNIFF_LEN].to_vec();
    for options in [
        BlgEncodeOptions::default(),
        BlgEncodeOptions::default().with_64_bit(),
    ] {
        let bytes = single_log(options);
        assert!(looks_like_blg(&bytes));
        assert!(looks_like_blg(&head(&bytes)));
        // One byte short of the sniffed part, and each checked field broken in turn.
        assert!(!looks_like_blg(&bytes[..SNIFF_LEN - 1]));
        let event = buffer_header::LEN;
        for (at, value) in [
            (
                buffer_header::BUFFER_SIZE,
                0x10_0008u32.to_le_bytes().to_vec(),
            ),
            (
                buffer_header::BUFFER_SIZE,
                0x1_0004u32.to_le_bytes().to_vec(),
            ),
            (
                buffer_header::FILLED_BYTES,
                0x1_0008u32.to_le_bytes().to_vec(),
            ),
            (buffer_header::FILLED_BYTES, 0x40u32.to_le_bytes().to_vec()),
            (event + system_trace_header::HEADER_TYPE, vec![0x0A]),
            (event + system_trace_header::MARKER_FLAGS, vec![0x80]),
            (
                event + system_trace_header::SIZE,
                0x20u16.to_le_bytes().to_vec(),
            ),
        ] {
            let mut broken = head(&bytes);
            broken[at..at + value.len()].copy_from_slice(&value);
            assert!(!looks_like_blg(&broken), "{at:#x} = {value:x?}");
        }
    }
    for name in [
        "tx-win8-BasicPerfCounters.blg",
        "powershell-2003-BadCounterSamples.blg",
        "pal-vista-SamplePerfmonLog.blg",
    ] {
        let Some(bytes) = shared_blg(name) else {
            continue;
        };
        assert!(looks_like_blg(&head(&bytes)), "{name}");
    }
    // Other logs and blocks are not binary logs.
    let csv =
        b"\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\HOST\\Memory\\Available Bytes\"\r\n";
    assert!(!looks_like_blg(csv));
    let mut sqlite = b"SQLite format 3\0".to_vec();
    sqlite.resize(100, 0);
    assert!(!looks_like_blg(&sqlite));
    let block = v1::encode(&Snapshot::default()).unwrap();
    assert!(!looks_like_blg(&block));
    assert!(!looks_like_blg(&[]));
}

#[test]
fn columns_keep_the_parsed_path_names_with_separators_included() {
    use perfcounters::log::{BlgLogReader, LogCounter, LogReader};
    use perfcounters::path::CounterPath;
    use perfcounters::CounterInfo;

    // Instance names that a counter path's text cannot say unambiguously: a `/` (read as a parent),
    // a `#n` (read as an index), brackets.
    let mut wild = spec(r"\\HOST", "LogicalDisk", Some("*"), "Free Megabytes");
    wild.counter_type = CounterType::PERF_COUNTER_RAWCOUNT;
    let mut single = spec(r"\\HOST", "Thread", Some("0"), "Context Switches/sec");
    single.parent = Some("a/b".into());
    single.counter_type = CounterType::PERF_COUNTER_COUNTER;
    single.time_base = 10_000_000;
    single.default_scale = -2;
    let names = ["C:/mnt#2", "(x)", "C:/mnt#2"];
    let records = vec![
        (
            RecordKind::CounterList,
            T0,
            encode_counter_list(&[wild.clone(), single.clone()]),
        ),
        (
            RecordKind::Sample,
            T0,
            encode_sample(&[
                instances(T0, &[(names[0], 1, 0), (names[1], 2, 0), (names[2], 3, 0)]),
                counter(CounterType::PERF_COUNTER_COUNTER, 7, T0, T0),
            ]),
        ),
    ];
    let bytes = write_log(BlgEncodeOptions::default(), &records);
    let (log, _) = read_all(&bytes);
    let path =
        |parent: Option<&str>, instance: &str, index: Option<u32>, object: &str, counter: &str| {
            CounterPath {
                machine: Some("HOST".into()),
                object: object.into(),
                parent: parent.map(Into::into),
                instance: Some(instance.into()),
                index,
                counter: counter.into(),
            }
        };
    let expected = [
        path(None, "C:/mnt#2", None, "LogicalDisk", "Free Megabytes"),
        path(None, "(x)", None, "LogicalDisk", "Free Megabytes"),
        path(None, "C:/mnt#2", Some(1), "LogicalDisk", "Free Megabytes"),
        path(Some("a/b"), "0", None, "Thread", "Context Switches/sec"),
    ];
    let columns: Vec<&CounterPath> = log.columns().iter().map(|c| &c.path).collect();
    assert_eq!(columns, expected.iter().collect::<Vec<_>>());
    assert_eq!(log.columns()[2].instance().as_deref(), Some("C:/mnt#2#1"));
    assert_eq!(
        log.columns()[3].info,
        CounterInfo {
            counter_type: CounterType::PERF_COUNTER_COUNTER,
            default_scale: -2,
            time_base: 10_000_000,
        }
    );
    // The log model gets the same paths and counter info, named by the path's text.
    let reader = BlgLogReader::new("x.blg", &bytes[..], &bytes[..]).unwrap();
    let counters: Vec<LogCounter> = expected
        .iter()
        .zip(log.columns())
        .map(|(p, c)| LogCounter::new(p.clone(), Some(c.info)))
        .collect();
    assert_eq!(reader.header().counters, counters);
    assert_eq!(
        reader.header().counters[0].name,
        r"\\HOST\LogicalDisk(C:/mnt#2)\Free Megabytes"
    );
}

/// The column and first value of each value of sample `i`.
fn firsts(samples: &Samples, i: usize) -> Vec<(usize, i64)> {
    samples[i].1.iter().map(|v| (v.0, v.1.first)).collect()
}

/// A log of one wildcard counter, `\\HOST\Process(*)\Working Set`, with `samples` one second apart.
fn wildcard_working_sets(samples: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut s = spec(r"\\HOST", "Process", Some("*"), "Working Set");
    s.counter_type = CounterType::PERF_COUNTER_LARGE_RAWCOUNT;
    s.flags = 1;
    let mut records = vec![(RecordKind::CounterList, T0, encode_counter_list(&[s]))];
    for (i, sample) in samples.into_iter().enumerate() {
        records.push((RecordKind::Sample, T0 + i as i64 * SEC, sample));
    }
    write_log(BlgEncodeOptions::default(), &records)
}

#[test]
fn wildcard_instances_appear_vanish_and_repeat() {
    let sets: [&[(&str, i64, i64)]; 5] = [
        &[("a", 1, 0), ("b", 2, 0)],
        &[("a", 3, 0), ("b", 4, 0), ("c", 5, 0)],
        &[("b", 6, 0), ("c", 7, 0)],
        &[("x", 8, 0), ("x", 9, 0), ("x", 10, 0), ("a", 11, 0)],
        // Names equal ignoring case are duplicates too (the second is x#1, spelled as stored).
        &[("X", 12, 0), ("x", 13, 0)],
    ];
    let bytes = wildcard_working_sets(sets.iter().enumerate().map(|(i, set)| {
        let t = T0 + i as i64 * SEC;
        encode_sample(&[instances(t, set)])
    }));
    let (log, samples) = read_all(&bytes);
    assert_eq!(
        paths(&log),
        [
            r"\\HOST\Process(a)\Working Set",
            r"\\HOST\Process(b)\Working Set",
            r"\\HOST\Process(c)\Working Set",
            r"\\HOST\Process(x)\Working Set",
            r"\\HOST\Process(x#1)\Working Set",
            r"\\HOST\Process(x#2)\Working Set",
        ]
    );
    assert_eq!(firsts(&samples, 0), [(0, 1), (1, 2)]);
    assert_eq!(firsts(&samples, 1), [(0, 3), (1, 4), (2, 5)]);
    assert_eq!(firsts(&samples, 2), [(1, 6), (2, 7)]);
    assert_eq!(firsts(&samples, 3), [(3, 8), (4, 9), (5, 10), (0, 11)]);
    assert_eq!(firsts(&samples, 4), [(3, 12), (4, 13)]);
    assert_eq!(log.columns()[2].first_sample, 1);
    assert_eq!(log.columns()[4].instance().as_deref(), Some("x#1"));
}

/// Samples that repeat the previous one's instance list are matched without reading the names; a
/// list that differs only in its name offsets (the same names, stored in the same bytes, pointed to
/// in another order) or in its names region is not taken for the previous one.
#[test]
fn repeated_instance_lists_and_lists_that_only_look_alike() {
    use perfcounters::format::blg::layout::{
        raw_counter_array as rca, raw_counter_item as rci, sample as sl, sub_record as sr,
    };
    let ab = |t: i64, a: i64, b: i64| encode_sample(&[instances(t, &[("a", a, 0), ("b", b, 0)])]);
    // The third sample stores "a" and "b" as the others do, but its first item points to "b" and
    // its second to "a".
    let mut swapped = ab(T0 + 2 * SEC, 5, 6);
    let items = sl::LEN + sr::LEN + rca::LEN;
    let first = items + rci::NAME_OFFSET;
    let second = items + rci::LEN + rci::NAME_OFFSET;
    let (x, y) = (
        u32::from_le_bytes(swapped[first..first + 4].try_into().unwrap()),
        u32::from_le_bytes(swapped[second..second + 4].try_into().unwrap()),
    );
    swapped[first..first + 4].copy_from_slice(&y.to_le_bytes());
    swapped[second..second + 4].copy_from_slice(&x.to_le_bytes());
    let samples = [
        ab(T0, 1, 2),
        ab(T0 + SEC, 3, 4),
        swapped,
        ab(T0 + 3 * SEC, 7, 8),
        ab(T0 + 4 * SEC, 9, 10),
        // The same offsets and count, other bytes in the names region.
        encode_sample(&[instances(T0 + 5 * SEC, &[("a", 11, 0), ("c", 12, 0)])]),
        encode_sample(&[instances(T0 + 6 * SEC, &[("a", 13, 0), ("c", 14, 0)])]),
    ];
    let bytes = wildcard_working_sets(samples);
    let (log, samples) = read_all(&bytes);
    assert_eq!(
        paths(&log),
        [
            r"\\HOST\Process(a)\Working Set",
            r"\\HOST\Process(b)\Working Set",
            r"\\HOST\Process(c)\Working Set",
        ]
    );
    assert_eq!(firsts(&samples, 0), [(0, 1), (1, 2)]);
    assert_eq!(firsts(&samples, 1), [(0, 3), (1, 4)]);
    assert_eq!(firsts(&samples, 2), [(1, 5), (0, 6)]);
    assert_eq!(firsts(&samples, 3), [(0, 7), (1, 8)]);
    assert_eq!(firsts(&samples, 4), [(0, 9), (1, 10)]);
    assert_eq!(firsts(&samples, 5), [(0, 11), (2, 12)]);
    assert_eq!(firsts(&samples, 6), [(0, 13), (2, 14)]);
}

/// A repeated instance list with duplicate names keeps each occurrence's column (`x`, `x#1`) in
/// every sample it repeats, and a list that changes in between numbers the occurrences again.
#[test]
fn repeated_lists_with_duplicates_keep_their_columns() {
    let xxy = |t: i64, v: i64| {
        encode_sample(&[instances(
            t,
            &[("x", v, 0), ("x", v + 1, 0), ("y", v + 2, 0)],
        )])
    };
    let xyx = |t: i64, v: i64| {
        encode_sample(&[instances(
            t,
            &[("x", v, 0), ("y", v + 1, 0), ("x", v + 2, 0)],
        )])
    };
    let samples = [
        xxy(T0, 10),
        xxy(T0 + SEC, 20),
        xxy(T0 + 2 * SEC, 30),
        xyx(T0 + 3 * SEC, 40),
        xyx(T0 + 4 * SEC, 50),
        xxy(T0 + 5 * SEC, 60),
        xxy(T0 + 6 * SEC, 70),
    ];
    let bytes = wildcard_working_sets(samples);
    let (log, samples) = read_all(&bytes);
    assert_eq!(
        paths(&log),
        [
            r"\\HOST\Process(x)\Working Set",
            r"\\HOST\Process(x#1)\Working Set",
            r"\\HOST\Process(y)\Working Set",
        ]
    );
    for (i, v) in [(0, 10), (1, 20), (2, 30), (5, 60), (6, 70)] {
        assert_eq!(
            firsts(&samples, i),
            [(0, v), (1, v + 1), (2, v + 2)],
            "sample {i}"
        );
    }
    for (i, v) in [(3, 40), (4, 50)] {
        assert_eq!(
            firsts(&samples, i),
            [(0, v), (2, v + 1), (1, v + 2)],
            "sample {i}"
        );
    }
}

/// A V1 snapshot of one multi-instance object (index 230) with a 100 ns timer (6), a raw count
/// (180) and an unnamed-in-the-log counter (1410, "Handle Count" in the built-in table).
fn process_block(time: i64, instances: &[(&str, u64, u32)]) -> Vec<u8> {
    let process = Object {
        default_counter: 0,
        ..Object::new(230)
    }
    .with_counters(vec![
        CounterDefinition::new(6, CounterType::PERF_100NSEC_TIMER),
        CounterDefinition::new(180, CounterType::PERF_COUNTER_RAWCOUNT),
        CounterDefinition::new(952, CounterType::PERF_COUNTER_RAWCOUNT),
    ])
    .with_instances(
        instances
            .iter()
            .map(|&(name, cpu, ws)| {
                Instance::new(name, vec![Value::U64(cpu), Value::U32(ws), Value::U32(7)])
            })
            .collect(),
    );
    let snap = Snapshot::new("HOST")
        .with_clock(SampleClock {
            perf_time: time / 100,
            perf_freq: 100_000,
            perf_time_100ns: time,
        })
        .with_objects(vec![process]);
    v1::encode(&snap).unwrap()
}

fn whole_object_log(options: BlgEncodeOptions) -> Vec<u8> {
    let mut s = spec(r"\\HOST", "Process", Some("*"), "*");
    s.flags = 0x10;
    s.counter_type = CounterType(0x10);
    let names = [
        encode_name_chunk(
            r"\\HOST",
            &[(1, "2000"), (230, "Process"), (6, "CPU Share")],
        ),
        encode_name_chunk(r"\\HOST", &[(180, "Resident Bytes")]),
    ];
    let utc = T0 + 8 * 3600 * SEC;
    let mut records: Vec<(RecordKind, i64, Vec<u8>)> = names
        .into_iter()
        .map(|n| (RecordKind::NameTable, T0, n))
        .collect();
    records.push((RecordKind::CounterList, T0, encode_counter_list(&[s])));
    let sets: [&[(&str, u64, u32)]; 3] = [
        &[("svchost", 100, 1), ("svchost", 200, 2), ("_Total", 300, 3)],
        &[
            ("svchost", 100 + 2 * SEC as u64, 4),
            ("svchost", 200, 5),
            ("_Total", 300, 6),
        ],
        &[
            ("svchost", 100 + 3 * SEC as u64, 7),
            ("new", 0, 8),
            ("_Total", 300, 9),
        ],
    ];
    for (i, set) in sets.iter().enumerate() {
        let t = T0 + 4 * i as i64 * SEC;
        let block = process_block(utc + 4 * i as i64 * SEC, set);
        records.push((
            RecordKind::Sample,
            t,
            encode_sample(&[SampleEntry::Block(block)]),
        ));
    }
    records.push((
        RecordKind::Trailer,
        T0 + 8 * SEC,
        encode_trailer(T0, T0 + 8 * SEC, 3, 1, &[&[1, 0, 0, 0, 3, 0, 0, 0]]),
    ));
    write_log(options, &records)
}

#[test]
fn whole_object_blocks_named_by_the_embedded_table() {
    let bytes = whole_object_log(BlgEncodeOptions::default());
    let (log, samples) = read_all(&bytes);
    assert_eq!(log.names().name(6), Some("CPU Share"));
    assert_eq!(
        paths(&log),
        [
            // Counters by name: the log's own names, the built-in table for index 952.
            r"\\HOST\Process(svchost)\CPU Share",
            r"\\HOST\Process(svchost#1)\CPU Share",
            r"\\HOST\Process(_Total)\CPU Share",
            r"\\HOST\Process(new)\CPU Share",
            r"\\HOST\Process(svchost)\Handle Count",
            r"\\HOST\Process(svchost#1)\Handle Count",
            r"\\HOST\Process(_Total)\Handle Count",
            r"\\HOST\Process(new)\Handle Count",
            r"\\HOST\Process(svchost)\Resident Bytes",
            r"\\HOST\Process(svchost#1)\Resident Bytes",
            r"\\HOST\Process(_Total)\Resident Bytes",
            r"\\HOST\Process(new)\Resident Bytes",
        ]
    );
    let col = |p: &str| {
        log.columns()
            .iter()
            .position(|c| c.path.to_string() == p)
            .unwrap()
    };
    let share = col(r"\\HOST\Process(svchost)\CPU Share");
    // 2 s of CPU in 4 s.
    assert_eq!(cooked(&log, &samples, share, 1), Some(50.0));
    assert_eq!(cooked(&log, &samples, share, 2), Some(25.0));
    let second = col(r"\\HOST\Process(svchost#1)\Resident Bytes");
    assert_eq!(cooked(&log, &samples, second, 1), Some(5.0));
    // svchost#1 vanished in the last sample.
    assert!(samples[2].1.iter().all(|v| v.0 != second));
    assert_eq!(samples[0].0, T0);
    assert_eq!(log.trailer().unwrap().samples, 3);
    assert!(log.warnings().is_empty(), "{:?}", log.warnings());
}

#[test]
fn fragmented_records_are_stitched_across_buffers() {
    // Small buffers and fragments: every record spans several events and buffers.
    let mut small = BlgEncodeOptions::default().with_64_bit();
    small.header.buffer_size = 4096;
    small.fragment_size = 40;
    let fragmented = whole_object_log(small);
    let whole = whole_object_log(BlgEncodeOptions::default().with_64_bit());
    assert!(fragmented.len() >= 3 * 4096, "{}", fragmented.len());
    let (a, sa) = read_all(&fragmented);
    let (b, sb) = read_all(&whole);
    assert_eq!(sa, sb);
    assert_eq!(paths(&a), paths(&b));
    let mut r = BlgReader::new(&fragmented[..]).unwrap();
    let mut counts = Vec::new();
    while let Some(rec) = r.next_record() {
        counts.push(rec.unwrap().fragment_count);
    }
    assert_eq!(counts, [2, 2, 3, 13, 13, 13, 2]);
    assert_eq!(r.buffers_read() as usize, fragmented.len() / 4096);
    assert!(r.warnings().is_empty());
}

#[test]
fn errors_in_later_fragments_point_into_the_file() {
    // A sample whose third sub-record has a bad signature, split into 16-byte fragments: the error
    // names the byte where the signature sits in the file, not in the stitched record.
    let specs = single_specs();
    let mut sample = encode_sample(&[
        counter(CounterType::PERF_COUNTER_RAWCOUNT, 1, 0, T0),
        counter(CounterType::PERF_COUNTER_RAWCOUNT, 2, 0, T0),
        counter(CounterType::PERF_COUNTER_RAWCOUNT, 3, 0, T0),
    ]);
    let bad_at = 8 + 2 * 48;
    sample[bad_at..bad_at + 4].copy_from_slice(b"XYZ\x01");
    let options = BlgEncodeOptions {
        fragment_size: 16,
        ..Default::default()
    };
    let bytes = write_log(
        options,
        &[
            (
                RecordKind::CounterList,
                T0,
                encode_counter_list(&specs[..3]),
            ),
            (RecordKind::Sample, T0, sample),
        ],
    );
    let mut r = BlgReader::new(&bytes[..]).unwrap();
    r.next_record().unwrap().unwrap();
    let rec = r.next_record().unwrap().unwrap();
    assert_eq!(rec.fragment_count, (8 + 3 * 48u32).div_ceil(16));
    let e = rec.sample().unwrap_err();
    assert_eq!(e.structure(), "PDH sample sub-record");
    assert_eq!(&bytes[e.offset()..e.offset() + 4], b"XYZ\x01");
}

#[test]
fn name_table_and_trailer_records() {
    let bytes = whole_object_log(BlgEncodeOptions::default());
    let mut r = BlgReader::new(&bytes[..]).unwrap();
    let rec = r.next_record().unwrap().unwrap();
    let chunk = rec.name_chunk().unwrap();
    assert_eq!(chunk.machine(), r"\\HOST");
    let t = chunk.table().unwrap();
    assert_eq!((t.base_index(), t.name(230)), (Some(2000), Some("Process")));
    let mut last = None;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        if rec.kind == RecordKind::Trailer {
            let t = rec.trailer().unwrap();
            assert_eq!((t.first_time(), t.last_time()), (T0, T0 + 8 * SEC));
            assert_eq!((t.samples(), t.entries(), t.tag()), (3, 1, 0x5FF));
            let subs: Vec<(u8, &[u8], usize)> = t.sub_records().collect();
            assert_eq!(subs.len(), 1);
            assert_eq!(subs[0].0, 5);
            assert_eq!(subs[0].1, [1, 0, 0, 0, 3, 0, 0, 0]);
            last = Some(rec.kind);
            // A record read as another kind is refused.
            assert!(rec.sample().is_err());
        }
    }
    assert_eq!(last, Some(RecordKind::Trailer));
}

// ------------------------------------------------------------------------------------------------
// Hostile logs.

fn small_log() -> Vec<u8> {
    let mut options = BlgEncodeOptions::default();
    options.header.buffer_size = 4096;
    options.fragment_size = 300;
    let mut s = spec(r"\\HOST", "Processor", Some("*"), "% Processor Time");
    s.counter_type = CounterType::PERF_100NSEC_TIMER_INV;
    s.time_base = 10_000_000;
    let mut records = vec![(RecordKind::CounterList, T0, encode_counter_list(&[s]))];
    for i in 0..30i64 {
        let t = T0 + i * SEC;
        let items: Vec<(&str, i64, i64)> =
            vec![("0", i * 100, t), ("1", i * 200, t), ("_Total", i * 150, t)];
        records.push((
            RecordKind::Sample,
            t,
            encode_sample(&[instances(t, &items)]),
        ));
    }
    write_log(options, &records)
}

#[test]
fn truncated_files_give_the_records_before_the_damage() {
    let bytes = small_log();
    let (full, none) = read_records(&bytes).unwrap();
    assert_eq!((full, none), (31, None));
    for cut in (0..bytes.len()).step_by(7).chain([bytes.len() - 1]) {
        let cut_bytes = &bytes[..cut];
        match read_records(cut_bytes) {
            Ok((n, err)) => {
                assert!(n <= full);
                if let Some(e) = err {
                    assert!(e.offset() <= cut, "{e} for a file of {cut} bytes");
                }
            }
            Err(e) => {
                assert!(cut < 4096, "only a cut first buffer fails to open: {e}");
                assert!(e.offset() <= cut);
            }
        }
    }
    // Cut inside the third buffer: the records of the first two, then a warning or an error.
    let (n, _) = read_records(&bytes[..2 * 4096 + 100]).unwrap();
    assert!(n > 1 && n < full);
}

#[test]
fn malformed_containers_are_named_with_their_offset() {
    let bytes = small_log();
    let open = |b: &[u8]| BlgReader::new(b).map(|_| ()).map_err(decode_error);
    let all = |b: &[u8]| read_records(b).map(|(_, e)| e);

    assert_eq!(
        open(&[]).unwrap_err(),
        DecodeError::new(
            "WMI_BUFFER_HEADER",
            0,
            ErrorKind::Truncated {
                needed: 0x48,
                available: 0
            }
        )
    );
    // An absurd buffer size.
    let mut b = bytes.clone();
    b[0..4].copy_from_slice(&0x7fff_fff8u32.to_le_bytes());
    let e = open(&b).unwrap_err();
    assert_eq!((e.structure(), e.offset()), ("WMI_BUFFER_HEADER", 0));
    // FilledBytes past the buffer.
    let mut b = bytes.clone();
    b[4096 + 0x30..4096 + 0x34].copy_from_slice(&5000u32.to_le_bytes());
    let e = all(&b).unwrap().unwrap();
    assert_eq!(
        (e.structure(), e.offset()),
        ("WMI_BUFFER_HEADER", 4096 + 0x30)
    );
    // A later buffer of another size.
    let mut b = bytes.clone();
    b[2 * 4096..2 * 4096 + 4].copy_from_slice(&8192u32.to_le_bytes());
    let e = all(&b).unwrap().unwrap();
    assert_eq!((e.structure(), e.offset()), ("WMI_BUFFER_HEADER", 2 * 4096));
    // An event of size 0 (would never advance) and one larger than its buffer.
    for size in [0u16, 20, 0xfff0] {
        let mut b = bytes.clone();
        b[4096 + 0x48..4096 + 0x4a].copy_from_slice(&size.to_le_bytes());
        let e = all(&b).unwrap().unwrap();
        assert_eq!(
            (e.structure(), e.offset()),
            ("EVENT_TRACE_HEADER", 4096 + 0x48),
            "{e}"
        );
    }
    // The header event claims a pointer size it does not have.
    let mut b = bytes.clone();
    b[0x48 + 0x20 + 0x2c..0x48 + 0x20 + 0x30].copy_from_slice(&8u32.to_le_bytes());
    let e = open(&b).unwrap_err();
    assert_eq!(
        (e.structure(), e.offset()),
        ("TRACE_LOGFILE_HEADER", 0x48 + 0x20 + 0x2c)
    );
    // A header type that is neither 32- nor 64-bit.
    let mut b = bytes.clone();
    b[0x4a] = 7;
    assert_eq!(open(&b).unwrap_err().structure(), "SYSTEM_TRACE_HEADER");
}

fn event_log(events: &[(u8, u32, u32, Vec<u8>)]) -> Vec<u8> {
    let mut w = BlgWriter::new(Cursor::new(Vec::new()), BlgEncodeOptions::default()).unwrap();
    for (kind, index, count, data) in events {
        w.write_event(*kind, T0, *index, *count, data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn fragments_out_of_order_or_missing_are_errors() {
    let list = encode_counter_list(&single_specs());
    let (a, b) = list.split_at(40);
    let fragment_error = |events: &[(u8, u32, u32, Vec<u8>)]| {
        let e = read_records(&event_log(events)).unwrap().1.unwrap();
        (e.offset(), e.kind().clone())
    };
    // Fragment 2 first.
    let (offset, kind) = fragment_error(&[(0x20, 2, 2, b.to_vec())]);
    assert_eq!(offset, DEFAULT_BUFFER_SIZE as usize + 0x48 + 0x30 + 16);
    assert_eq!(
        kind,
        ErrorKind::FragmentOutOfOrder {
            index: 2,
            count: 2,
            expected_index: 1,
            expected_count: 0
        }
    );
    // Fragment 1 of 2, then fragment 1 of 2 again.
    let (_, kind) = fragment_error(&[(0x20, 1, 2, a.to_vec()), (0x20, 1, 2, a.to_vec())]);
    assert!(matches!(
        kind,
        ErrorKind::FragmentOutOfOrder {
            index: 1,
            expected_index: 2,
            ..
        }
    ));
    // The fragment count changes mid-record.
    let (_, kind) = fragment_error(&[(0x20, 1, 2, a.to_vec()), (0x20, 2, 3, b.to_vec())]);
    assert!(matches!(
        kind,
        ErrorKind::FragmentOutOfOrder {
            count: 3,
            expected_count: 2,
            ..
        }
    ));
    // Index 0, count 0.
    let (_, kind) = fragment_error(&[(0x20, 0, 0, a.to_vec())]);
    assert!(matches!(
        kind,
        ErrorKind::FragmentOutOfOrder { index: 0, .. }
    ));
    // The log ends after fragment 1 of 4 000 000 000: an error, and no allocation for the count.
    let (_, kind) = fragment_error(&[(0x20, 1, 4_000_000_000, a.to_vec())]);
    assert_eq!(
        kind,
        ErrorKind::MissingFragments {
            received: 1,
            count: 4_000_000_000
        }
    );
    // Stitched in order, the same list.
    let ok = event_log(&[(0x20, 1, 2, a.to_vec()), (0x20, 2, 2, b.to_vec())]);
    let mut r = BlgReader::new(&ok[..]).unwrap();
    let rec = r.next_record().unwrap().unwrap();
    assert_eq!(rec.data(), &list[..]);
    assert_eq!(
        rec.counter_list().unwrap().entries().len(),
        single_specs().len()
    );
}

#[test]
fn absurd_counts_and_offsets_in_records() {
    let t = T0;
    let good = encode_sample(&[instances(t, &[("a", 1, 2), ("b", 3, 4)])]);
    let sample_error = |data: Vec<u8>| {
        let bytes = event_log(&[(0x22, 1, 1, data)]);
        let mut r = BlgReader::new(&bytes[..]).unwrap();
        let rec = r.next_record().unwrap().unwrap();
        let data_at = rec.file_offset(0);
        rec.sample()
            .err()
            .map(|e| (e.structure(), e.offset() - data_at, e.kind().clone()))
    };
    assert!(sample_error(good.clone()).is_none());
    // Item count 0xFFFFFFFF.
    let mut b = good.clone();
    b[16 + 4..16 + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    let (s, at, kind) = sample_error(b).unwrap();
    assert_eq!((s, at), ("PDH raw counter array", 20));
    assert!(matches!(
        kind,
        ErrorKind::CountTooLarge {
            count: 0xFFFF_FFFF,
            ..
        }
    ));
    // A name offset past the body, and one into the item table.
    for bad in [0x7fff_0000u32, 4] {
        let mut b = good.clone();
        b[16 + 24..16 + 28].copy_from_slice(&bad.to_le_bytes());
        let (_, at, kind) = sample_error(b).unwrap();
        assert_eq!(at, 16 + 24);
        assert_eq!(kind, ErrorKind::OffsetOutOfRange { offset: bad });
    }
    // A name without its terminator: "b" runs into the body's end.
    let mut b = good.clone();
    let names_start = 16 + 24 + 2 * 24;
    b[names_start + 6..names_start + 8].copy_from_slice(b"c\0");
    let (_, at, kind) = sample_error(b).unwrap();
    assert_eq!((at, kind), (names_start + 4, ErrorKind::UnterminatedString));
    // The sample's total length larger than the record, and a sub-record length of 3.
    let mut b = good.clone();
    b[4..8].copy_from_slice(&1_000_000u32.to_le_bytes());
    assert!(matches!(
        sample_error(b).unwrap().2,
        ErrorKind::SizeExceedsParent { .. }
    ));
    let mut b = good.clone();
    b[12..16].copy_from_slice(&3u32.to_le_bytes());
    assert!(matches!(
        sample_error(b).unwrap().2,
        ErrorKind::SizeTooSmall { size: 3, .. }
    ));
    // A PDH_RAW_COUNTER sub-record of the wrong length.
    let mut one = encode_sample(&[counter(CounterType::PERF_COUNTER_RAWCOUNT, 1, 0, t)]);
    one.extend_from_slice(&[0; 8]);
    let total = one.len() as u32;
    one[4..8].copy_from_slice(&total.to_le_bytes());
    one[12..16].copy_from_slice(&56u32.to_le_bytes());
    assert_eq!(sample_error(one).unwrap().0, "PDH_RAW_COUNTER");

    // Counter list: an entry larger than the record, and a string offset outside the entry.
    let list = encode_counter_list(&single_specs());
    let list_error = |data: Vec<u8>| {
        let bytes = event_log(&[(0x20, 1, 1, data)]);
        let mut r = BlgReader::new(&bytes[..]).unwrap();
        let rec = r.next_record().unwrap().unwrap();
        let data_at = rec.file_offset(0);
        rec.counter_list()
            .map(|_| ())
            .map_err(|e| (e.offset() - data_at, e.kind().clone()))
    };
    let mut b = list.clone();
    b[8..12].copy_from_slice(&0xffff_0000u32.to_le_bytes());
    assert!(matches!(
        list_error(b).unwrap_err(),
        (8, ErrorKind::SizeExceedsParent { .. })
    ));
    let mut b = list.clone();
    b[8 + 0x20..8 + 0x24].copy_from_slice(&(-5i32).to_le_bytes());
    assert_eq!(
        list_error(b).unwrap_err(),
        (
            8 + 0x20,
            ErrorKind::InvalidValue {
                field: "ObjectOffset",
                value: -5,
                rule: "negative (only the instance and parent offsets may be -1, absent)"
            }
        )
    );
    let mut b = list.clone();
    b[8 + 0x30..8 + 0x34].copy_from_slice(&100_000i32.to_le_bytes());
    let (at, kind) = list_error(b).unwrap_err();
    assert_eq!(at, 8 + 0x30);
    assert!(
        matches!(
            kind,
            ErrorKind::FieldExceeds {
                field: "CounterOffset",
                value: 100_000,
                ..
            }
        ),
        "{kind:?}"
    );
}

#[test]
fn unknown_things_are_warnings() {
    // An unknown sub-record kind, an unknown record kind, an event of another provider, a circular
    // log: the log is still read, and each is reported.
    let specs = single_specs();
    let mut options = BlgEncodeOptions::default();
    options.header.log_file_mode |= 0x2;
    let sample = encode_sample(&[
        counter(CounterType::PERF_COUNTER_RAWCOUNT, 7, 0, T0),
        SampleEntry::Raw {
            kind: 9,
            body: vec![1, 2, 3, 4],
        },
    ]);
    let mut bytes = write_log(
        options,
        &[
            (
                RecordKind::CounterList,
                T0,
                encode_counter_list(&specs[..2]),
            ),
            (RecordKind::Other(0x30), T0, vec![1, 2, 3]),
            (RecordKind::Sample, T0, sample.clone()),
            (RecordKind::Sample, T0 + SEC, sample),
        ],
    );
    // The second event belongs to another provider.
    let second = DEFAULT_BUFFER_SIZE as usize
        + 0x48
        + (usize::from(u16::from_le_bytes([
            bytes[DEFAULT_BUFFER_SIZE as usize + 0x48],
            bytes[DEFAULT_BUFFER_SIZE as usize + 0x49],
        ])))
        .next_multiple_of(8);
    bytes[second + 0x18] ^= 0xff;
    let (log, samples) = read_all(&bytes);
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[0].1.len(), 1);
    let messages: Vec<String> = log.warnings().iter().map(|w| w.message.clone()).collect();
    assert!(
        messages.iter().any(|m| m.contains("circular")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("not PDH")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("unknown kind 9")),
        "{messages:?}"
    );
    assert!(log.warnings().iter().all(|w| w.offset < bytes.len()));
}

#[test]
fn sample_sub_records_disagreeing_with_the_list_are_reported() {
    let specs = single_specs();
    let sample = encode_sample(&[counter(CounterType::PERF_COUNTER_RAWCOUNT, 7, 0, T0)]);
    let bytes = write_log(
        BlgEncodeOptions::default(),
        &[
            (RecordKind::CounterList, T0, encode_counter_list(&specs)),
            (RecordKind::Sample, T0, sample),
        ],
    );
    let (log, samples) = read_all(&bytes);
    assert_eq!(samples[0].1.len(), 1);
    assert!(log.warnings()[0].message.contains("1 sub-records for 4"));
    // No counter list at all.
    let bytes = write_log(BlgEncodeOptions::default(), &[]);
    assert!(BlgLog::new(&bytes[..]).is_err());
}

// ------------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = read_records(&bytes);
        // The same bytes behind a valid first buffer.
        let mut log = small_log();
        log.truncate(4096);
        log.extend_from_slice(&bytes);
        let _ = read_records(&log);
        if let Ok(mut l) = BlgLog::new(&log[..]) {
            while let Some(s) = l.next_sample() {
                if s.is_err() { break; }
            }
        }
    }

    #[test]
    fn mutated_logs_never_panic(flips in proptest::collection::vec((0usize..20_480, any::<u8>()), 1..8)) {
        let mut bytes = small_log();
        for (at, value) in flips {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        let _ = read_records(&bytes);
        if let Ok(mut l) = BlgLog::new(&bytes[..]) {
            while let Some(s) = l.next_sample() {
                if s.is_err() { break; }
            }
            let _ = l.display_order();
        }
    }

    #[test]
    fn instance_arrays_round_trip(
        items in proptest::collection::vec(("[a-z_#]{1,12}", any::<u32>(), any::<i64>(), any::<i64>()), 0..20),
        status in any::<u32>(),
        time in any::<i64>(),
        fragment in 8usize..400,
        bits64 in any::<bool>(),
    ) {
        let entry = SampleEntry::Instances {
            status: PdhStatus(status),
            time_stamp: time,
            items: items.iter().map(|(n, m, f, s)| InstanceEntry { name: n.clone(), multi_count: *m, first: *f, second: *s }).collect(),
        };
        let data = encode_sample(&[entry, counter(CounterType::PERF_COUNTER_RAWCOUNT, 5, 6, time)]);
        let mut options = if bits64 { BlgEncodeOptions::default().with_64_bit() } else { BlgEncodeOptions::default() };
        options.fragment_size = fragment;
        let bytes = write_log(options, &[(RecordKind::Sample, time, data.clone())]);
        let mut r = BlgReader::new(&bytes[..]).unwrap();
        let rec = r.next_record().unwrap().unwrap();
        prop_assert_eq!(rec.data(), &data[..]);
        let sample = rec.sample().unwrap();
        let subs: Vec<SubRecord> = sample.sub_records().collect();
        prop_assert_eq!(subs.len(), 2);
        let SubRecord::Instances(a) = subs[0] else { panic!("kind") };
        prop_assert_eq!(a.status(), PdhStatus(status));
        prop_assert_eq!(a.time_stamp(), time);
        let got: Vec<(String, u32, i64, i64)> = a.items().map(|i| (i.name(), i.multi_count, i.first, i.second)).collect();
        prop_assert_eq!(got, items);
        let SubRecord::Counter(c) = subs[1] else { panic!("kind") };
        prop_assert_eq!((c.first, c.second, c.time_stamp), (5, 6, time));
        prop_assert!(r.next_record().is_none());
    }
}

// ------------------------------------------------------------------------------------------------
// The log model: relog from a binary log.

mod log_model {
    use super::*;
    use perfcounters::log::{
        copy, BlgLogReader, CounterFilter, CsvFlavor, Filtered, LogKind, LogReader, LogSummary,
        PdhCsvLogWriter, RelogFilter,
    };
    use perfcounters::path::CounterPath;

    fn reader(bytes: &[u8]) -> BlgLogReader<&[u8]> {
        BlgLogReader::new("test.blg", bytes, bytes).unwrap()
    }

    fn relog(bytes: &[u8], filter: &RelogFilter) -> String {
        let mut filtered = Filtered::new(reader(bytes), filter).unwrap();
        let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out.csv");
        copy(&mut filtered, &mut w).unwrap();
        String::from_utf8(w.into_inner()).unwrap()
    }

    #[test]
    fn header_columns_and_raw_cells() {
        let bytes = single_log(BlgEncodeOptions::default().with_64_bit());
        let r = reader(&bytes);
        let h = r.header();
        assert_eq!(h.kind, LogKind::Binary);
        let tz = h.time_zone.as_ref().unwrap();
        assert_eq!(
            (tz.name.as_str(), tz.bias),
            ("Pacific Standard Time", Some(480))
        );
        assert_eq!(h.counters.len(), 4);
        assert_eq!(h.counters[2].path.instance.as_deref(), Some("svchost"));
        assert_eq!(h.counters[2].path.index, Some(2));
        assert_eq!(h.counters[3].path.parent.as_deref(), Some("explorer"));
        let info = h.counters[1].info.unwrap();
        assert_eq!(info.counter_type, CounterType::PERF_100NSEC_TIMER_INV);
        assert_eq!(info.time_base, 10_000_000);
        assert!(r.warnings().is_empty());
    }

    #[test]
    fn relog_to_csv_computes_values_and_filters() {
        let bytes = single_log(BlgEncodeOptions::default());
        let csv = relog(&bytes, &RelogFilter::default());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            r#""(PDH-CSV 4.0) (Pacific Standard Time)(480)","\\HOST\Memory\Available Bytes","\\HOST\Processor(_Total)\% Processor Time","\\HOST\Process(svchost#2)\IO Read Bytes/sec","\\HOST\Thread(explorer/0)\% User Time""#
        );
        assert_eq!(lines[1], r#""01/17/2020 00:00:00.000","1000"," "," "," ""#);
        assert_eq!(
            lines[2],
            r#""01/17/2020 00:00:01.000","1001","50","4096","25""#
        );
        assert_eq!(
            lines[3],
            r#""01/17/2020 00:00:02.000","1002","50","12288","25""#
        );
        // -c with a wildcard, -b: the record before -b primes the rate.
        let filter = RelogFilter {
            counters: Some(CounterFilter::new(vec![CounterPath::parse(
                r"\Process(*)\*",
            )
            .unwrap()])),
            begin: Some(perfcounters::log::LogTime(T0 + SEC)),
            ..RelogFilter::default()
        };
        let csv = relog(&bytes, &filter);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1], r#""01/17/2020 00:00:01.000","4096""#);
    }

    #[test]
    fn summary_of_a_real_log() {
        let Some(bytes) = shared_blg("pal-vista-SamplePerfmonLog.blg") else {
            return;
        };
        let mut r = reader(&bytes);
        let s = LogSummary::of(&mut r).unwrap();
        assert_eq!(s.samples, 11);
        assert_eq!(s.begin.unwrap().to_string(), "8/14/2007 15:40:38.659");
        assert_eq!(s.end.unwrap().to_string(), "8/14/2007 15:50:38.599");
        assert_eq!(s.counters.len(), 1832);
        let csv = relog(
            &bytes,
            &RelogFilter {
                counters: Some(CounterFilter::new(vec![
                    CounterPath::parse(r"\Memory\Available Bytes").unwrap(),
                    CounterPath::parse(r"\Process(Idle)\% Processor Time").unwrap(),
                ])),
                ..RelogFilter::default()
            },
        );
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            r#""(PDH-CSV 4.0) (Eastern Daylight Time)(240)","\\ZACH-PC\Memory\Available Bytes","\\ZACH-PC\Process(Idle)\% Processor Time""#
        );
        assert_eq!(lines[1], r#""08/14/2007 15:40:38.659","83587072"," ""#);
        assert!(lines[2].starts_with(r#""08/14/2007 15:41:38.614","113057792","17.85188684467740"#));
        assert_eq!(lines.len(), 12);
    }

    #[test]
    fn damaged_log_gives_the_records_before_the_damage() {
        let mut bytes = small_log();
        // Break the signature of the first sample in the third buffer.
        let at = 2 * 4096 + 0x48 + 0x30 + 24;
        assert_eq!(&bytes[at..at + 4], b"BL\x03\x00");
        bytes[at] = b'X';
        let mut r = reader(&bytes);
        assert_eq!(r.warnings().len(), 1, "{:?}", r.warnings());
        assert!(
            r.warnings()[0].contains(" at offset "),
            "{}",
            r.warnings()[0]
        );
        let s = LogSummary::of(&mut r).unwrap();
        assert!(s.samples > 3 && s.samples < 30, "{}", s.samples);
    }
}

/// Writes the seeds of the `blg` fuzz target: small logs (4 KiB buffers) of wildcard instances and
/// of whole objects with a name table and a trailer, 32- and 64-bit. Run with `--ignored`.
#[test]
#[ignore]
fn write_fuzz_seed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/blg");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("instances"), small_log()).unwrap();
    let mut options = BlgEncodeOptions::default().with_64_bit();
    options.header.buffer_size = 4096;
    options.fragment_size = 200;
    std::fs::write(dir.join("blocks"), whole_object_log(options)).unwrap();
}

// ------------------------------------------------------------------------------------------------
// Replay: a binary log as a source of snapshots, read by the query engine.

mod replay {
    use super::*;
    use perfcounters::query::Query;
    use perfcounters::source::replay::{BlgRecording, ReplaySource};
    use perfcounters::source::{Source, SourceErrorKind};

    fn file(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("perfcounters-blg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// The values of `paths` for every sample after the first, through a replay and a query.
    fn watch(path: &std::path::Path, paths: &[&str]) -> Vec<Vec<Option<f64>>> {
        let mut source = ReplaySource::new(BlgRecording::open(path).unwrap());
        let mut query = Query::new(FormatOptions::typeperf());
        for p in paths {
            query.add(p).unwrap();
        }
        let mut rows = Vec::new();
        let mut first = true;
        while let Some(s) = source.next_snapshot().unwrap() {
            let values: Vec<Option<f64>> = query.update(&s).iter().map(|v| v.value()).collect();
            if !first {
                rows.push(values);
            }
            first = false;
        }
        rows
    }

    #[test]
    fn single_and_wildcard_counters_give_the_stored_samples_back() {
        let path = file("single.blg", &single_log(BlgEncodeOptions::default()));
        let rows = watch(
            &path,
            &[
                r"\Memory\Available Bytes",
                r"\Processor(_Total)\% Processor Time",
                r"\Process(svchost#2)\IO Read Bytes/sec",
                r"\Thread(explorer/0)\% User Time",
            ],
        );
        // The same numbers as relog's (see `relog_to_csv_computes_values_and_filters`).
        assert_eq!(
            rows,
            [
                vec![Some(1001.0), Some(50.0), Some(4096.0), Some(25.0)],
                vec![Some(1002.0), Some(50.0), Some(12288.0), Some(25.0)],
            ]
        );
        let mut source = ReplaySource::new(BlgRecording::open(&path).unwrap());
        let catalog = source.catalog().unwrap();
        let names: Vec<&str> = catalog.objects.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["Memory", "Processor", "Process", "Thread"]);
        assert_eq!(source.instances("Process").unwrap(), ["svchost#2"]);
    }

    /// A log written across both daylight-saving changes of its zone (the encoder's US Pacific
    /// rules): the log reader and the replay source give the same UTC instants, one second apart
    /// across each change, and relog's CSV shows the local times stored.
    #[test]
    fn log_reader_and_replay_agree_across_both_dst_changes() {
        use perfcounters::log::{
            copy, BlgLogReader, CsvFlavor, LogReader, PdhCsvLogWriter, Record,
        };
        use perfcounters::snapshot::SystemTime;
        let local = |mo, d, h, mi, s| {
            SystemTime {
                year: 2024,
                month: mo,
                day: d,
                hour: h,
                minute: mi,
                second: s,
                ..Default::default()
            }
            .to_filetime()
            .unwrap()
        };
        let mut a = spec(r"\\HOST", "Memory", None, "Available Bytes");
        a.counter_type = CounterType::PERF_COUNTER_RAWCOUNT;
        let times = [
            local(3, 10, 1, 59, 59),
            local(3, 10, 3, 0, 0),
            local(11, 3, 1, 59, 59),
            local(11, 3, 1, 0, 0),
            local(11, 3, 2, 0, 0),
        ];
        let mut records = vec![(RecordKind::CounterList, times[0], encode_counter_list(&[a]))];
        for (i, &t) in times.iter().enumerate() {
            let sample =
                encode_sample(&[counter(CounterType::PERF_COUNTER_RAWCOUNT, i as i64, 0, t)]);
            records.push((RecordKind::Sample, t, sample));
        }
        let bytes = write_log(BlgEncodeOptions::default(), &records);
        // UTC: 09:59:59 → 10:00:00 (PST → PDT); 08:59:59 → 09:00:00 → 10:00:00 (PDT → PST).
        let utc = |mo, d, h, mi, s| {
            SystemTime {
                year: 2024,
                month: mo,
                day: d,
                hour: h,
                minute: mi,
                second: s,
                ..Default::default()
            }
            .to_filetime()
            .unwrap()
        };
        let expected = vec![
            utc(3, 10, 9, 59, 59),
            utc(3, 10, 10, 0, 0),
            utc(11, 3, 8, 59, 59),
            utc(11, 3, 9, 0, 0),
            utc(11, 3, 10, 0, 0),
        ];
        let mut reader = BlgLogReader::new("dst.blg", &bytes[..], &bytes[..]).unwrap();
        let mut rec = Record::default();
        let mut from_reader = Vec::new();
        while reader.read_record(&mut rec).unwrap() {
            from_reader.push(rec.time.0);
        }
        assert_eq!(from_reader, expected);
        let path = file("dst.blg", &bytes);
        let mut source = ReplaySource::new(BlgRecording::open(&path).unwrap());
        let mut from_replay = Vec::new();
        while let Some(s) = source.next_snapshot().unwrap() {
            from_replay.push(s.clock().perf_time_100ns);
        }
        assert_eq!(from_replay, expected);
        // relog shows the local times the log stores, in the zone named at the first sample.
        let mut w = PdhCsvLogWriter::new(Vec::new(), CsvFlavor::Csv, "out.csv");
        copy(
            &mut BlgLogReader::new("dst.blg", &bytes[..], &bytes[..]).unwrap(),
            &mut w,
        )
        .unwrap();
        let csv = String::from_utf8(w.into_inner()).unwrap();
        let times: Vec<&str> = csv.lines().map(|l| &l[..l.find(',').unwrap()]).collect();
        assert_eq!(
            times,
            [
                r#""(PDH-CSV 4.0) (Pacific Standard Time)(480)""#,
                r#""03/10/2024 01:59:59.000""#,
                r#""03/10/2024 03:00:00.000""#,
                r#""11/03/2024 01:59:59.000""#,
                r#""11/03/2024 01:00:00.000""#,
                r#""11/03/2024 02:00:00.000""#,
            ]
        );
    }

    #[test]
    fn wildcard_instances_keep_their_numbers() {
        let mut s = spec(r"\\HOST", "Process", Some("*"), "Working Set");
        s.counter_type = CounterType::PERF_COUNTER_LARGE_RAWCOUNT;
        let items: &[(&str, i64, i64)] = &[("x", 8, 0), ("X", 9, 0), ("a", 11, 0)];
        let bytes = write_log(
            BlgEncodeOptions::default(),
            &[
                (RecordKind::CounterList, T0, encode_counter_list(&[s])),
                (
                    RecordKind::Sample,
                    T0,
                    encode_sample(&[instances(T0, items)]),
                ),
            ],
        );
        let path = file("wild.blg", &bytes);
        let mut source = ReplaySource::new(BlgRecording::open(&path).unwrap());
        assert_eq!(source.instances("Process").unwrap(), ["x", "X#1", "a"]);
        let mut query = Query::new(FormatOptions::typeperf());
        query.add(r"\Process(x#1)\Working Set").unwrap();
        let s = source.next_snapshot().unwrap().unwrap();
        assert_eq!(query.update(&s)[0].value(), Some(9.0));
    }

    #[test]
    fn whole_objects_replay_their_blocks() {
        let path = file("blocks.blg", &whole_object_log(BlgEncodeOptions::default()));
        let rows = watch(
            &path,
            &[
                r"\Process(svchost)\CPU Share",
                r"\Process(svchost#1)\Resident Bytes",
            ],
        );
        assert_eq!(rows, [vec![Some(50.0), Some(5.0)], vec![Some(25.0), None]]);
    }

    #[test]
    fn logs_of_several_machines_are_refused() {
        let mut a = spec(r"\\A", "Memory", None, "Available Bytes");
        a.counter_type = CounterType::PERF_COUNTER_RAWCOUNT;
        let mut b = a.clone();
        b.machine = r"\\B".into();
        let bytes = write_log(
            BlgEncodeOptions::default(),
            &[(RecordKind::CounterList, T0, encode_counter_list(&[a, b]))],
        );
        let e = BlgRecording::open(&file("two.blg", &bytes)).unwrap_err();
        assert_eq!(e.kind(), SourceErrorKind::Unavailable);
        assert!(e.to_string().contains("2 machines"), "{e}");
    }

    #[test]
    fn real_logs_replay_like_relog() {
        for (name, path, sample, expected) in [
            (
                "tx-win8-BasicPerfCounters.blg",
                r"\Processor(0)\% Processor Time",
                0,
                100.0 * (1.0 - 8_437_500.0 / 10_000_360.0),
            ),
            (
                "tx-win8-BasicPerfCounters.blg",
                r"\PhysicalDisk(0 C:)\Avg. Disk Bytes/Write",
                0,
                492_544.0 / 56.0,
            ),
            (
                "pal-vista-SamplePerfmonLog.blg",
                r"\Process(Idle)\% Processor Time",
                0,
                100.0 * 107_031_250.0 / 599_551_470.0,
            ),
        ] {
            let Some(bytes) = shared_blg(name) else {
                return;
            };
            let rows = watch(&file(name, &bytes), &[path]);
            assert_eq!(rows[sample][0], Some(expected), "{name} {path}");
        }
    }
}
