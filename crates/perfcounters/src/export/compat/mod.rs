//! windows_exporter v0.31 names, labels and units for the counter-based metrics of its `cpu`,
//! `memory`, `logical_disk`, `physical_disk`, `net`, `system` and (opt-in) `process` collectors,
//! from the same counters on Windows and on Linux, so existing dashboards and alert rules work.
//!
//! What differs from windows_exporter, on purpose:
//!
//! * values are computed with the counter's real time base (windows_exporter multiplies the
//!   `Avg. Disk sec/…` numerators by 10^-7, which assumes a 10 MHz performance counter);
//! * a timer that a source delivers inverted (`% Idle Time` of the Linux disks) is turned back,
//!   `(D − N) / F`: `rate()` gives the same idle fraction, the value itself counts from 1601;
//! * `size_bytes` is computed from `% Free Space` and `Free Megabytes`, so it is right whatever unit
//!   a source uses for the fraction;
//! * the cumulative series pass through the same zero-dip guard as the native names.
//!
//! Metrics that do not come from performance counters (`windows_memory_physical_total_bytes`,
//! `windows_logical_disk_info`, `windows_net_nic_info`, `windows_cpu_logical_processor`,
//! `windows_system_processes_limit`, `windows_process_info`, …) are not produced.

use crate::path::eq_ignore_case;
use crate::source::{Catalog, ObjectInfo, Request};

use super::naming::{Conversion, Rule};
use super::{has_process_id, CollectorPlan, MetricKind, ObjectPlan, Plan, SeriesPlan, ID_PROCESS};

pub mod otel;

/// How a row's value is obtained.
#[derive(Clone, Copy, Debug, PartialEq)]
enum How {
    /// A timer in seconds (turned back if the source's type is inverted).
    Time,
    /// The raw value times a factor.
    Raw(f64),
    /// The base value times a factor.
    Base(f64),
    /// The start time of an elapsed-time counter, as a Unix time.
    Start,
    /// `% Free Space` with `Free Megabytes`: the volume size.
    Size,
}

/// One row: metric (without `windows_<collector>_`), type, counter, static labels, conversion.
type Row = (
    &'static str,
    MetricKind,
    &'static str,
    &'static [(&'static str, &'static str)],
    How,
);

use How::*;
use MetricKind::{Counter as C, Gauge as G};

const MIB: f64 = 1048576.0;

const CPU: &[Row] = &[
    ("time_total", C, "% Idle Time", &[("mode", "idle")], Time),
    (
        "time_total",
        C,
        "% Interrupt Time",
        &[("mode", "interrupt")],
        Time,
    ),
    ("time_total", C, "% DPC Time", &[("mode", "dpc")], Time),
    (
        "time_total",
        C,
        "% Privileged Time",
        &[("mode", "privileged")],
        Time,
    ),
    ("time_total", C, "% User Time", &[("mode", "user")], Time),
    (
        "cstate_seconds_total",
        C,
        "% C1 Time",
        &[("state", "c1")],
        Time,
    ),
    (
        "cstate_seconds_total",
        C,
        "% C2 Time",
        &[("state", "c2")],
        Time,
    ),
    (
        "cstate_seconds_total",
        C,
        "% C3 Time",
        &[("state", "c3")],
        Time,
    ),
    ("interrupts_total", C, "Interrupts/sec", &[], Raw(1.0)),
    ("dpcs_total", C, "DPCs Queued/sec", &[], Raw(1.0)),
    (
        "clock_interrupts_total",
        C,
        "Clock Interrupts/sec",
        &[],
        Raw(1.0),
    ),
    (
        "idle_break_events_total",
        C,
        "Idle Break Events/sec",
        &[],
        Raw(1.0),
    ),
    ("parking_status", G, "Parking Status", &[], Raw(1.0)),
    (
        "core_frequency_mhz",
        G,
        "Processor Frequency",
        &[],
        Raw(1.0),
    ),
    (
        "processor_performance_total",
        C,
        "% Processor Performance",
        &[],
        Raw(1.0),
    ),
    (
        "processor_mperf_total",
        C,
        "% Processor Performance",
        &[],
        Base(1.0),
    ),
    (
        "processor_utility_total",
        C,
        "% Processor Utility",
        &[],
        Raw(1.0),
    ),
    (
        "processor_rtc_total",
        C,
        "% Processor Utility",
        &[],
        Base(1.0),
    ),
    (
        "processor_privileged_utility_total",
        C,
        "% Privileged Utility",
        &[],
        Raw(1.0),
    ),
];

const MEMORY: &[Row] = &[
    ("available_bytes", G, "Available Bytes", &[], Raw(1.0)),
    ("cache_bytes", G, "Cache Bytes", &[], Raw(1.0)),
    ("cache_bytes_peak", G, "Cache Bytes Peak", &[], Raw(1.0)),
    ("cache_faults_total", C, "Cache Faults/sec", &[], Raw(1.0)),
    ("commit_limit", G, "Commit Limit", &[], Raw(1.0)),
    ("committed_bytes", G, "Committed Bytes", &[], Raw(1.0)),
    (
        "demand_zero_faults_total",
        C,
        "Demand Zero Faults/sec",
        &[],
        Raw(1.0),
    ),
    (
        "free_and_zero_page_list_bytes",
        G,
        "Free & Zero Page List Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "free_system_page_table_entries",
        G,
        "Free System Page Table Entries",
        &[],
        Raw(1.0),
    ),
    (
        "modified_page_list_bytes",
        G,
        "Modified Page List Bytes",
        &[],
        Raw(1.0),
    ),
    ("page_faults_total", C, "Page Faults/sec", &[], Raw(1.0)),
    ("physical_free_bytes", G, "Available Bytes", &[], Raw(1.0)),
    ("swap_page_reads_total", C, "Page Reads/sec", &[], Raw(1.0)),
    ("swap_pages_read_total", C, "Pages Input/sec", &[], Raw(1.0)),
    (
        "swap_pages_written_total",
        C,
        "Pages Output/sec",
        &[],
        Raw(1.0),
    ),
    ("swap_page_operations_total", C, "Pages/sec", &[], Raw(1.0)),
    (
        "swap_page_writes_total",
        C,
        "Page Writes/sec",
        &[],
        Raw(1.0),
    ),
    (
        "pool_nonpaged_allocs_total",
        G,
        "Pool Nonpaged Allocs",
        &[],
        Raw(1.0),
    ),
    (
        "pool_nonpaged_bytes",
        G,
        "Pool Nonpaged Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "pool_paged_allocs_total",
        C,
        "Pool Paged Allocs",
        &[],
        Raw(1.0),
    ),
    ("pool_paged_bytes", G, "Pool Paged Bytes", &[], Raw(1.0)),
    (
        "pool_paged_resident_bytes",
        G,
        "Pool Paged Resident Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "standby_cache_core_bytes",
        G,
        "Standby Cache Core Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "standby_cache_normal_priority_bytes",
        G,
        "Standby Cache Normal Priority Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "standby_cache_reserve_bytes",
        G,
        "Standby Cache Reserve Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "system_cache_resident_bytes",
        G,
        "System Cache Resident Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "system_code_resident_bytes",
        G,
        "System Code Resident Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "system_code_total_bytes",
        G,
        "System Code Total Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "system_driver_resident_bytes",
        G,
        "System Driver Resident Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "system_driver_total_bytes",
        G,
        "System Driver Total Bytes",
        &[],
        Raw(1.0),
    ),
    (
        "transition_faults_total",
        C,
        "Transition Faults/sec",
        &[],
        Raw(1.0),
    ),
    (
        "transition_pages_repurposed_total",
        C,
        "Transition Pages RePurposed/sec",
        &[],
        Raw(1.0),
    ),
    ("write_copies_total", C, "Write Copies/sec", &[], Raw(1.0)),
];

/// The I/O rows shared by `logical_disk` and `physical_disk`.
const DISK_IO: &[Row] = &[
    (
        "requests_queued",
        G,
        "Current Disk Queue Length",
        &[],
        Raw(1.0),
    ),
    (
        "avg_read_requests_queued",
        G,
        "Avg. Disk Read Queue Length",
        &[],
        Time,
    ),
    (
        "avg_write_requests_queued",
        G,
        "Avg. Disk Write Queue Length",
        &[],
        Time,
    ),
    ("read_bytes_total", C, "Disk Read Bytes/sec", &[], Raw(1.0)),
    ("reads_total", C, "Disk Reads/sec", &[], Raw(1.0)),
    (
        "write_bytes_total",
        C,
        "Disk Write Bytes/sec",
        &[],
        Raw(1.0),
    ),
    ("writes_total", C, "Disk Writes/sec", &[], Raw(1.0)),
    ("read_seconds_total", C, "% Disk Read Time", &[], Time),
    ("write_seconds_total", C, "% Disk Write Time", &[], Time),
    ("idle_seconds_total", C, "% Idle Time", &[], Time),
    ("split_ios_total", C, "Split IO/Sec", &[], Raw(1.0)),
    (
        "read_latency_seconds_total",
        C,
        "Avg. Disk sec/Read",
        &[],
        Time,
    ),
    (
        "write_latency_seconds_total",
        C,
        "Avg. Disk sec/Write",
        &[],
        Time,
    ),
    (
        "read_write_latency_seconds_total",
        C,
        "Avg. Disk sec/Transfer",
        &[],
        Time,
    ),
];

const LOGICAL_DISK_SPACE: &[Row] = &[
    ("free_bytes", G, "Free Megabytes", &[], Raw(MIB)),
    ("size_bytes", G, "% Free Space", &[], Size),
];

const NET: &[Row] = &[
    (
        "bytes_received_total",
        C,
        "Bytes Received/sec",
        &[],
        Raw(1.0),
    ),
    ("bytes_sent_total", C, "Bytes Sent/sec", &[], Raw(1.0)),
    ("bytes_total", C, "Bytes Total/sec", &[], Raw(1.0)),
    (
        "output_queue_length_packets",
        G,
        "Output Queue Length",
        &[],
        Raw(1.0),
    ),
    (
        "packets_outbound_discarded_total",
        C,
        "Packets Outbound Discarded",
        &[],
        Raw(1.0),
    ),
    (
        "packets_outbound_errors_total",
        C,
        "Packets Outbound Errors",
        &[],
        Raw(1.0),
    ),
    (
        "packets_received_discarded_total",
        C,
        "Packets Received Discarded",
        &[],
        Raw(1.0),
    ),
    (
        "packets_received_errors_total",
        C,
        "Packets Received Errors",
        &[],
        Raw(1.0),
    ),
    (
        "packets_received_total",
        C,
        "Packets Received/sec",
        &[],
        Raw(1.0),
    ),
    (
        "packets_received_unknown_total",
        C,
        "Packets Received Unknown",
        &[],
        Raw(1.0),
    ),
    ("packets_total", C, "Packets/sec", &[], Raw(1.0)),
    ("packets_sent_total", C, "Packets Sent/sec", &[], Raw(1.0)),
    (
        "current_bandwidth_bytes",
        G,
        "Current Bandwidth",
        &[],
        Raw(0.125),
    ),
];

const SYSTEM: &[Row] = &[
    (
        "context_switches_total",
        C,
        "Context Switches/sec",
        &[],
        Raw(1.0),
    ),
    (
        "exception_dispatches_total",
        C,
        "Exception Dispatches/sec",
        &[],
        Raw(1.0),
    ),
    ("system_calls_total", C, "System Calls/sec", &[], Raw(1.0)),
    ("processes", G, "Processes", &[], Raw(1.0)),
    ("threads", G, "Threads", &[], Raw(1.0)),
    (
        "processor_queue_length",
        G,
        "Processor Queue Length",
        &[],
        Raw(1.0),
    ),
    ("boot_time_timestamp", G, "System Up Time", &[], Start),
];

const PROCESS: &[Row] = &[
    (
        "start_time_seconds_timestamp",
        G,
        "Elapsed Time",
        &[],
        Start,
    ),
    (
        "cpu_time_total",
        C,
        "% Privileged Time",
        &[("mode", "privileged")],
        Time,
    ),
    (
        "cpu_time_total",
        C,
        "% User Time",
        &[("mode", "user")],
        Time,
    ),
    ("handles", G, "Handle Count", &[], Raw(1.0)),
    (
        "io_bytes_total",
        C,
        "IO Read Bytes/sec",
        &[("mode", "read")],
        Raw(1.0),
    ),
    (
        "io_bytes_total",
        C,
        "IO Write Bytes/sec",
        &[("mode", "write")],
        Raw(1.0),
    ),
    (
        "io_bytes_total",
        C,
        "IO Other Bytes/sec",
        &[("mode", "other")],
        Raw(1.0),
    ),
    (
        "io_operations_total",
        C,
        "IO Read Operations/sec",
        &[("mode", "read")],
        Raw(1.0),
    ),
    (
        "io_operations_total",
        C,
        "IO Write Operations/sec",
        &[("mode", "write")],
        Raw(1.0),
    ),
    (
        "io_operations_total",
        C,
        "IO Other Operations/sec",
        &[("mode", "other")],
        Raw(1.0),
    ),
    ("page_faults_total", C, "Page Faults/sec", &[], Raw(1.0)),
    ("page_file_bytes", G, "Page File Bytes", &[], Raw(1.0)),
    (
        "pool_bytes",
        G,
        "Pool Nonpaged Bytes",
        &[("pool", "nonpaged")],
        Raw(1.0),
    ),
    (
        "pool_bytes",
        G,
        "Pool Paged Bytes",
        &[("pool", "paged")],
        Raw(1.0),
    ),
    ("priority_base", G, "Priority Base", &[], Raw(1.0)),
    ("private_bytes", G, "Private Bytes", &[], Raw(1.0)),
    ("threads", G, "Thread Count", &[], Raw(1.0)),
    ("virtual_bytes", G, "Virtual Bytes", &[], Raw(1.0)),
    ("working_set_bytes", G, "Working Set", &[], Raw(1.0)),
    (
        "working_set_private_bytes",
        G,
        "Working Set - Private",
        &[],
        Raw(1.0),
    ),
    (
        "working_set_peak_bytes",
        G,
        "Working Set Peak",
        &[],
        Raw(1.0),
    ),
];

/// One windows_exporter collector: name, objects to try in order, instance label, rows.
struct Collector {
    name: &'static str,
    objects: &'static [&'static str],
    instance_label: &'static str,
    rows: &'static [&'static [Row]],
}

const COLLECTORS: &[Collector] = &[
    Collector {
        name: "cpu",
        objects: &["Processor Information", "Processor"],
        instance_label: "core",
        rows: &[CPU],
    },
    Collector {
        name: "memory",
        objects: &["Memory"],
        instance_label: "",
        rows: &[MEMORY],
    },
    Collector {
        name: "logical_disk",
        objects: &["LogicalDisk"],
        instance_label: "volume",
        rows: &[DISK_IO, LOGICAL_DISK_SPACE],
    },
    Collector {
        name: "physical_disk",
        objects: &["PhysicalDisk"],
        instance_label: "disk",
        rows: &[DISK_IO],
    },
    Collector {
        name: "net",
        objects: &["Network Interface"],
        instance_label: "nic",
        rows: &[NET],
    },
    Collector {
        name: "system",
        objects: &["System"],
        instance_label: "",
        rows: &[SYSTEM],
    },
];

const PROCESS_COLLECTOR: Collector = Collector {
    name: "process",
    objects: &["Process"],
    instance_label: "process",
    rows: &[PROCESS],
};

/// The windows_exporter collector names, in the order [`windows_exporter`] plans them
/// (`process` last, when asked for).
pub const COLLECTOR_NAMES: &[&str] = &[
    "cpu",
    "memory",
    "logical_disk",
    "physical_disk",
    "net",
    "system",
    "process",
];

/// Plans windows_exporter's metrics from `catalog`. `process` adds the process collector for the
/// instances matching those patterns (all when empty). A counter the catalog lacks leaves its metric
/// out (Linux has no C-states, for example); a collector whose object is missing is listed in
/// [`Plan::problems`].
pub fn windows_exporter(catalog: &Catalog, process: Option<&[String]>) -> Plan {
    let mut all: Vec<&Collector> = COLLECTORS.iter().collect();
    if process.is_some() {
        all.push(&PROCESS_COLLECTOR);
    }
    let scheme = ("windows_exporter", "windows_exporter v0.31 name");
    plan_collectors(catalog, &all, process, scheme, |collector, metric| {
        format!("windows_{collector}_{metric}")
    })
}

/// The plan of `collectors` (a table of rows per collector), each family named by `family`
/// from the collector and the row's metric; `scheme` names the name set in problems and what HELP
/// ends with.
fn plan_collectors(
    catalog: &Catalog,
    collectors: &[&Collector],
    process: Option<&[String]>,
    scheme: (&str, &str),
    family: impl Fn(&str, &str) -> String,
) -> Plan {
    let mut plan = Plan::default();
    for col in collectors {
        let Some(info) = col.objects.iter().find_map(|o| catalog.object(o)) else {
            plan.problems.push(format!(
                "{} collector {}: no object named \"{}\"",
                scheme.0, col.name, col.objects[0]
            ));
            continue;
        };
        let mut series = Vec::new();
        for (metric, kind, counter, labels, how) in col.rows.iter().flat_map(|r| r.iter()) {
            let name = family(col.name, metric);
            if let Some(s) = series_for(&name, scheme.1, info, metric, *kind, counter, labels, *how)
            {
                series.push(s);
            }
        }
        if series.is_empty() {
            continue;
        }
        let process_id = has_process_id(info);
        let mut counters: Vec<String> = Vec::new();
        for s in &series {
            for c in std::iter::once(&s.counter).chain(s.counter2.iter()) {
                if !counters.iter().any(|x| eq_ignore_case(x, c)) {
                    counters.push(c.clone());
                }
            }
        }
        if process_id {
            counters.push(ID_PROCESS.to_string());
        }
        plan.collectors.push(CollectorPlan {
            name: col.name.to_string(),
            request: Request::new().object(&info.name, &counters),
            objects: vec![ObjectPlan {
                object: info.name.clone(),
                multi_instance: info.multi_instance,
                instance_label: col.instance_label.to_string(),
                include_total: false,
                instances: if col.name == "process" {
                    process.map(<[String]>::to_vec).unwrap_or_default()
                } else {
                    Vec::new()
                },
                exclude_instances: Vec::new(),
                labels: Vec::new(),
                process_id,
                series,
            }],
        });
    }
    plan
}

#[allow(clippy::too_many_arguments)]
fn series_for(
    family: &str,
    note: &str,
    info: &ObjectInfo,
    metric: &str,
    kind: MetricKind,
    counter: &str,
    labels: &[(&str, &str)],
    how: How,
) -> Option<SeriesPlan> {
    let c = info.counter(counter)?;
    let ty = c.counter_type;
    let (conversion, cumulative, unit) = match how {
        Time if ty.is_inverse() => (Conversion::Complement, true, Some("seconds")),
        Time => (Conversion::PerTimeBase, true, Some("seconds")),
        Raw(factor) => (
            Conversion::Scaled { factor },
            kind == MetricKind::Counter,
            None,
        ),
        Base(factor) => (
            Conversion::Base { factor },
            kind == MetricKind::Counter,
            None,
        ),
        Start => (Conversion::StartTime, false, None),
        Size => (Conversion::FreeSpaceSize, false, Some("bytes")),
    };
    let counter2 = match how {
        Size => Some(info.counter("Free Megabytes")?.name.clone()),
        _ => None,
    };
    let path = if info.multi_instance {
        format!("\\{}(*)\\{}", info.name, c.name)
    } else {
        format!("\\{}\\{}", info.name, c.name)
    };
    let what = match how {
        Base(_) => " base",
        _ => "",
    };
    let ty_name = ty.name().unwrap_or("unknown type");
    Some(SeriesPlan {
        counter: c.name.clone(),
        counter2,
        family: family.to_string(),
        help: format!("{path}{what} ({ty_name}); {note}"),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        rule: Rule {
            name: metric.to_string(),
            kind,
            conversion,
            cumulative,
            unit: unit.filter(|u| metric.ends_with(&format!("_{u}"))),
            note: "",
        },
    })
}
