//! Test data shared by the CLI tests: V1 blocks like the captured Windows 10 ones.

#![allow(dead_code)]

use std::path::Path;

use perfcounters::format::v1::encode;
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, SampleClock, Snapshot, SystemTime, Value,
};
use perfcounters::CounterType;

/// A System + Processor block like the captured Windows 10 ones, at 100 ns time `t` (seconds since the
/// first sample `s`), with `idle` 100 ns units of idle time per CPU and `processes` processes.
pub fn block(s: i64, idle: [u64; 2], processes: u32) -> Vec<u8> {
    let t0 = 132_290_312_439_883_752i64; // 2020-03-18T18:54:03.9883752Z
    let t = t0 + s * 10_000_000;
    let system = Object::new(2)
        .with_object_clock(t, 10_000_000)
        .with_counters(vec![
            CounterDefinition::new(248, CounterType::PERF_COUNTER_RAWCOUNT).with_scale(-1),
            CounterDefinition::new(674, CounterType::PERF_ELAPSED_TIME).with_scale(-5),
        ])
        .with_values(vec![
            Value::U32(processes),
            Value::U64(132_289_457_285_000_000),
        ]);
    let cpu = |name: &str, idle: u64| Instance::new(name, vec![Value::U64(idle)]);
    let processor = Object {
        default_counter: 0,
        ..Object::new(238)
    }
    .with_counters(vec![CounterDefinition::new(
        6,
        CounterType::PERF_100NSEC_TIMER_INV,
    )])
    .with_instances(vec![
        cpu("0", idle[0]),
        cpu("1", idle[1]),
        cpu("_Total", (idle[0] + idle[1]) / 2),
    ]);
    let snapshot = Snapshot::new("GETAWAY")
        .with_system_time(SystemTime {
            year: 2020,
            month: 3,
            day_of_week: 3,
            day: 18,
            hour: 18,
            minute: 54,
            second: 3 + s as u16,
            milliseconds: 988,
        })
        .with_clock(SampleClock {
            perf_time: 1_000_000 + s * 10_000_000,
            perf_freq: 10_000_000,
            perf_time_100ns: t,
        })
        .with_objects(vec![system, processor]);
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
