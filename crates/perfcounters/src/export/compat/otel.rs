//! The OpenTelemetry semantic conventions of the Collector's host-metrics receiver
//! (`system.cpu.time{cpu,state}`, `system.memory.usage{state}`, `system.disk.io{device,direction}`,
//! `system.network.io{device,direction}`, …) for the counters that map onto them, on Windows and on
//! Linux, so that dashboards built for the Collector work unchanged.
//!
//! Each metric has two names: the OpenTelemetry one that OTLP carries ([`otel_name_of`]), and the
//! one the Collector's Prometheus exporter would give it, which `/metrics` serves
//! (`system_cpu_time_seconds_total`). What differs from the receiver, on purpose:
//!
//! * the `cpu` and `device` attributes carry the counter instance's name (`0`, `0,1`, `sda`, `C:`),
//!   not the receiver's `cpu0`;
//! * `system.memory.usage` is a Gauge (the receiver's is a non-monotonic Sum) and has the states
//!   that are counters: `free` (`Available Bytes`), `cached` (`Cache Bytes`), `slab_reclaimable`
//!   and `slab_unreclaimable` are not offered; `used` is not a counter either;
//! * metrics that are not performance counters (`system.cpu.frequency`, `system.filesystem.inodes.usage`,
//!   `system.processes.count`, …) are not produced.

use super::How::{Raw, Time};
use super::{plan_collectors, Collector, Row, MIB};
use crate::export::MetricKind::{Counter as C, Gauge as G};
use crate::export::Plan;
use crate::source::Catalog;

/// One row of the mapping: the Prometheus name `/metrics` serves, the OpenTelemetry name, the
/// OTLP unit.
type Name = (&'static str, &'static str, &'static str);

/// Every metric of the mapping: its `/metrics` name, OpenTelemetry name and unit.
pub const NAMES: &[Name] = &[
    ("system_cpu_time_seconds_total", "system.cpu.time", "s"),
    ("system_memory_usage_bytes", "system.memory.usage", "By"),
    (
        "system_paging_operations_total",
        "system.paging.operations",
        "{operations}",
    ),
    ("system_disk_io_bytes_total", "system.disk.io", "By"),
    (
        "system_disk_operations_total",
        "system.disk.operations",
        "{operations}",
    ),
    (
        "system_disk_pending_operations",
        "system.disk.pending_operations",
        "{operations}",
    ),
    (
        "system_filesystem_usage_bytes",
        "system.filesystem.usage",
        "By",
    ),
    ("system_network_io_bytes_total", "system.network.io", "By"),
    (
        "system_network_packets_total",
        "system.network.packets",
        "{packets}",
    ),
    (
        "system_network_errors_total",
        "system.network.errors",
        "{errors}",
    ),
    (
        "system_network_dropped_total",
        "system.network.dropped",
        "{packets}",
    ),
];

/// The OpenTelemetry name of a `/metrics` family of this mapping.
pub fn otel_name_of(family: &str) -> Option<(&'static str, &'static str)> {
    NAMES
        .iter()
        .find(|(prom, _, _)| *prom == family)
        .map(|&(_, otel, unit)| (otel, unit))
}

const CPU: &[Row] = &[
    (
        "system_cpu_time_seconds_total",
        C,
        "% User Time",
        &[("state", "user")],
        Time,
    ),
    (
        "system_cpu_time_seconds_total",
        C,
        "% Privileged Time",
        &[("state", "system")],
        Time,
    ),
    (
        "system_cpu_time_seconds_total",
        C,
        "% Idle Time",
        &[("state", "idle")],
        Time,
    ),
    (
        "system_cpu_time_seconds_total",
        C,
        "% Interrupt Time",
        &[("state", "interrupt")],
        Time,
    ),
];

const MEMORY: &[Row] = &[
    (
        "system_memory_usage_bytes",
        G,
        "Available Bytes",
        &[("state", "free")],
        Raw(1.0),
    ),
    (
        "system_memory_usage_bytes",
        G,
        "Cache Bytes",
        &[("state", "cached")],
        Raw(1.0),
    ),
    (
        "system_paging_operations_total",
        C,
        "Pages Input/sec",
        &[("direction", "page_in")],
        Raw(1.0),
    ),
    (
        "system_paging_operations_total",
        C,
        "Pages Output/sec",
        &[("direction", "page_out")],
        Raw(1.0),
    ),
];

const DISK: &[Row] = &[
    (
        "system_disk_io_bytes_total",
        C,
        "Disk Read Bytes/sec",
        &[("direction", "read")],
        Raw(1.0),
    ),
    (
        "system_disk_io_bytes_total",
        C,
        "Disk Write Bytes/sec",
        &[("direction", "write")],
        Raw(1.0),
    ),
    (
        "system_disk_operations_total",
        C,
        "Disk Reads/sec",
        &[("direction", "read")],
        Raw(1.0),
    ),
    (
        "system_disk_operations_total",
        C,
        "Disk Writes/sec",
        &[("direction", "write")],
        Raw(1.0),
    ),
    (
        "system_disk_pending_operations",
        G,
        "Current Disk Queue Length",
        &[],
        Raw(1.0),
    ),
];

const FILESYSTEM: &[Row] = &[(
    "system_filesystem_usage_bytes",
    G,
    "Free Megabytes",
    &[("state", "free")],
    Raw(MIB),
)];

const NETWORK: &[Row] = &[
    (
        "system_network_io_bytes_total",
        C,
        "Bytes Received/sec",
        &[("direction", "receive")],
        Raw(1.0),
    ),
    (
        "system_network_io_bytes_total",
        C,
        "Bytes Sent/sec",
        &[("direction", "transmit")],
        Raw(1.0),
    ),
    (
        "system_network_packets_total",
        C,
        "Packets Received/sec",
        &[("direction", "receive")],
        Raw(1.0),
    ),
    (
        "system_network_packets_total",
        C,
        "Packets Sent/sec",
        &[("direction", "transmit")],
        Raw(1.0),
    ),
    (
        "system_network_errors_total",
        C,
        "Packets Received Errors",
        &[("direction", "receive")],
        Raw(1.0),
    ),
    (
        "system_network_errors_total",
        C,
        "Packets Outbound Errors",
        &[("direction", "transmit")],
        Raw(1.0),
    ),
    (
        "system_network_dropped_total",
        C,
        "Packets Received Discarded",
        &[("direction", "receive")],
        Raw(1.0),
    ),
    (
        "system_network_dropped_total",
        C,
        "Packets Outbound Discarded",
        &[("direction", "transmit")],
        Raw(1.0),
    ),
];

const COLLECTORS: &[Collector] = &[
    Collector {
        name: "cpu",
        objects: &["Processor Information", "Processor"],
        instance_label: "cpu",
        rows: &[CPU],
    },
    Collector {
        name: "memory",
        objects: &["Memory"],
        instance_label: "",
        rows: &[MEMORY],
    },
    Collector {
        name: "disk",
        objects: &["PhysicalDisk"],
        instance_label: "device",
        rows: &[DISK],
    },
    Collector {
        name: "filesystem",
        objects: &["LogicalDisk"],
        instance_label: "device",
        rows: &[FILESYSTEM],
    },
    Collector {
        name: "network",
        objects: &["Network Interface"],
        instance_label: "device",
        rows: &[NETWORK],
    },
];

/// Plans the host-metrics receiver's metrics from `catalog`: a counter the catalog lacks leaves
/// its row out; a collector whose object is missing is listed in [`Plan::problems`].
pub fn otel(catalog: &Catalog) -> Plan {
    let all: Vec<&Collector> = COLLECTORS.iter().collect();
    let scheme = (
        "OpenTelemetry host-metrics",
        "OpenTelemetry host-metrics name",
    );
    plan_collectors(catalog, &all, None, scheme, |_, metric| metric.to_string())
}
