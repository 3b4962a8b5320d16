//! Test data shared by the CLI tests: V1 blocks like the captured Windows 10 ones.

#![allow(dead_code)]

use std::path::Path;

use perfcounters::format::v1::encode;
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, ObjectData, Snapshot, SystemTime, Value,
};
use perfcounters::CounterType;

pub fn def(index: u32, ty: CounterType, size: u32, offset: u32, scale: i32) -> CounterDefinition {
    CounterDefinition {
        index,
        help_index: index + 1,
        counter_type: ty,
        size,
        offset,
        scale,
        detail_level: 100,
        ..Default::default()
    }
}

/// A System + Processor block like the captured Windows 10 ones, at 100 ns time `t` (seconds since the
/// first sample `s`), with `idle` 100 ns units of idle time per CPU and `processes` processes.
pub fn block(s: i64, idle: [u64; 2], processes: u32) -> Vec<u8> {
    let t0 = 132_290_312_439_883_752i64; // 2020-03-18T18:54:03.9883752Z
    let t = t0 + s * 10_000_000;
    let system = Object {
        index: 2,
        name: None,
        help_index: 3,
        detail_level: 100,
        default_counter: -1,
        code_page: 0,
        perf_time: t,
        perf_freq: 10_000_000,
        sample_clock: None,
        counters: vec![
            def(248, CounterType::PERF_COUNTER_RAWCOUNT, 4, 4, -1),
            def(674, CounterType::PERF_ELAPSED_TIME, 8, 8, -5),
        ],
        data: ObjectData::Single(vec![
            Value::U32(processes),
            Value::U64(132_289_457_285_000_000),
        ]),
    };
    let cpu = |name: &str, idle: u64| Instance {
        name: name.into(),
        raw_name: name.into(),
        unique_id: -1,
        values: vec![Value::U64(idle)],
        ..Default::default()
    };
    let processor = Object {
        index: 238,
        name: None,
        help_index: 239,
        detail_level: 100,
        default_counter: 0,
        code_page: 0,
        perf_time: 0,
        perf_freq: 0,
        sample_clock: None,
        counters: vec![def(6, CounterType::PERF_100NSEC_TIMER_INV, 8, 8, 0)],
        data: ObjectData::Instances(vec![
            cpu("0", idle[0]),
            cpu("1", idle[1]),
            cpu("_Total", (idle[0] + idle[1]) / 2),
        ]),
    };
    let snapshot = Snapshot {
        system_name: "GETAWAY".into(),
        system_time: SystemTime {
            year: 2020,
            month: 3,
            day_of_week: 3,
            day: 18,
            hour: 18,
            minute: 54,
            second: 3 + s as u16,
            milliseconds: 988,
        },
        perf_time: 1_000_000 + s * 10_000_000,
        perf_freq: 10_000_000,
        perf_time_100ns: t,
        objects: vec![system, processor],
    };
    encode(&snapshot).unwrap()
}

pub fn write_blocks(dir: &Path) -> Vec<String> {
    let samples = [
        (0, [0, 0], 100),
        (1, [2_500_000, 5_000_000], 101),
        (2, [12_500_000, 5_000_000], 99),
    ];
    samples
        .iter()
        .enumerate()
        .map(|(i, (s, idle, p))| {
            let path = dir.join(format!("t{i}.bin"));
            std::fs::write(&path, block(*s, *idle, *p)).unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect()
}
