//! The objects and counters the Linux source offers: Windows names, title indexes, types, scales and
//! help texts (which state the Linux source and every approximation).

use crate::counter_type::CounterType as T;
use crate::path::eq_ignore_case;
use crate::source::{DETAIL_ADVANCED as ADV, DETAIL_NOVICE as NOV};

/// What a row's value is; each object's collector maps keys to raw values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    // Processor / Processor Information
    CpuIdleInv,
    CpuUser,
    CpuPriv,
    CpuIrq,
    CpuDpc,
    CpuIdle,
    CpuInterrupts,
    // Memory
    MemAvail,
    MemAvailK,
    MemAvailM,
    MemCommitted,
    MemCommitLimit,
    MemCommitPct,
    MemCommitPctBase,
    MemFaults,
    MemPages,
    MemPagesIn,
    MemPagesOut,
    MemPageReads,
    MemCache,
    MemPoolPaged,
    MemPoolNonpaged,
    // System
    SysQueue,
    SysCtxt,
    SysUpTime,
    SysProcesses,
    SysThreads,
    // Process
    PrTime,
    PrUser,
    PrPriv,
    PrElapsed,
    PrId,
    PrParent,
    PrThreads,
    PrHandles,
    PrPriority,
    PrWs,
    PrWsPeak,
    PrWsPrivate,
    PrPrivate,
    PrVirtual,
    PrVirtualPeak,
    PrPageFile,
    PrFaults,
    PrIoReadBytes,
    PrIoWriteBytes,
    PrIoReadOps,
    PrIoWriteOps,
    // PhysicalDisk / LogicalDisk
    DkTime,
    DkReadTime,
    DkWriteTime,
    DkIdle,
    DkQueue,
    DkReadQueue,
    DkWriteQueue,
    DkCurrentQueue,
    DkXferTime,
    DkReadTimeTotal,
    DkWriteTimeTotal,
    DkXferBytes,
    DkReadBytes,
    DkWriteBytes,
    DkXfers,
    DkReads,
    DkWrites,
    LdFreePct,
    LdFreePctBase,
    LdFreeMb,
    // Network Interface
    NetBytesTotal,
    NetBytesRx,
    NetBytesTx,
    NetPackets,
    NetPacketsRx,
    NetPacketsTx,
    NetBandwidth,
    NetRxErrors,
    NetTxErrors,
    NetRxDiscards,
    NetTxDiscards,
}

/// How a value is stored in the snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    /// 4 bytes, saturating at `u32::MAX` (instantaneous counts).
    U32Sat,
    /// 4 bytes, keeping the low 32 bits (cumulative operation counts used as bases, which wrap like
    /// Windows' own 32-bit counters).
    U32Wrap,
    /// 8 bytes.
    U64,
}

/// One counter definition row. A base row follows the counter it serves.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub name: &'static str,
    pub index: u32,
    pub help_index: u32,
    pub ty: T,
    pub scale: i32,
    pub detail: u32,
    pub help: &'static str,
    pub key: Key,
    pub store: Store,
}

/// One object definition.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObjDef {
    pub name: &'static str,
    pub index: u32,
    pub help_index: u32,
    pub help: &'static str,
    pub multi: bool,
    pub rows: &'static [Row],
}

impl ObjDef {
    /// Position of the displayable row named `name` (case-insensitive).
    pub fn row(&self, name: &str) -> Option<usize> {
        self.rows
            .iter()
            .position(|r| !r.ty.is_base() && eq_ignore_case(r.name, name))
    }
}

const fn store_of(ty: T) -> Store {
    match ty.nominal_size() {
        Some(4) => Store::U32Sat,
        _ => Store::U64,
    }
}

/// A row with help index = index + 1 (the usual Windows pairing; 0 stays 0).
const fn r(
    name: &'static str,
    index: u32,
    ty: T,
    scale: i32,
    detail: u32,
    key: Key,
    help: &'static str,
) -> Row {
    Row {
        name,
        index,
        help_index: if index == 0 { 0 } else { index + 1 },
        ty,
        scale,
        detail,
        help,
        key,
        store: store_of(ty),
    }
}

/// A base row that serves the row before it: same name and index (as V1 data does), no help.
const fn base(name: &'static str, index: u32, ty: T, key: Key, store: Store) -> Row {
    Row {
        name,
        index,
        help_index: 0,
        ty,
        scale: 0,
        detail: ADV,
        help: "",
        key,
        store,
    }
}

/// A row whose value is stored in 8 bytes although the type's size field says 4 (the disk average
/// timers count nanoseconds, which would wrap a 32-bit value within seconds).
const fn wide(row: Row) -> Row {
    Row {
        store: Store::U64,
        ..row
    }
}

const fn with_help_index(row: Row, help_index: u32) -> Row {
    Row { help_index, ..row }
}

const CPU_ROWS: &[Row] = &[
    r("% Processor Time", 6, T::PERF_100NSEC_TIMER_INV, 0, NOV, Key::CpuIdleInv,
      "Percentage of elapsed time the processor was not idle: 100 x (1 - idle time / elapsed time). Idle time is idle + iowait jiffies from /proc/stat (a CPU waiting for I/O runs nothing, as Windows' idle thread would); steal time counts as busy. The denominator is wall-clock time, not the sum of the CPU's jiffies as sysstat uses, so values can differ from sar by clock jitter. _Total is the average over all CPUs."),
    r("% User Time", 142, T::PERF_100NSEC_TIMER, 0, ADV, Key::CpuUser,
      "Percentage of elapsed time in user mode: user + nice jiffies from /proc/stat (guest time is included in user by the kernel)."),
    r("% Privileged Time", 144, T::PERF_100NSEC_TIMER, 0, ADV, Key::CpuPriv,
      "Percentage of elapsed time in kernel mode: system + irq + softirq jiffies from /proc/stat (Windows' privileged time also includes interrupts and DPCs)."),
    with_help_index(r("% Interrupt Time", 698, T::PERF_100NSEC_TIMER, 0, ADV, Key::CpuIrq,
      "Percentage of elapsed time servicing hardware interrupts: irq jiffies from /proc/stat."), 397),
    with_help_index(r("% DPC Time", 696, T::PERF_100NSEC_TIMER, 0, ADV, Key::CpuDpc,
      "Percentage of elapsed time servicing deferred work: softirq jiffies from /proc/stat (the Linux counterpart of DPCs; an approximation)."), 339),
    r("% Idle Time", 0, T::PERF_100NSEC_TIMER, 0, ADV, Key::CpuIdle,
      "Percentage of elapsed time the processor was idle: idle + iowait jiffies from /proc/stat."),
    r("Interrupts/sec", 148, T::PERF_COUNTER_BULK_COUNT, -2, NOV, Key::CpuInterrupts,
      "Hardware interrupts per second. Per CPU: the sum of the CPU's column in /proc/interrupts; _Total: the first number of the 'intr' line of /proc/stat. Stored as a 64-bit rate (PERF_COUNTER_BULK_COUNT) instead of Windows' 32-bit PERF_COUNTER_COUNTER, so the kernel's 64-bit count never wraps; the computed value is the same."),
];

/// `Processor`.
pub(crate) const PROCESSOR: ObjDef = ObjDef {
    name: "Processor",
    index: 238,
    help_index: 239,
    help: "Activity of each logical CPU (instances 0..N-1 by kernel CPU id) and their average (_Total), from /proc/stat.",
    multi: true,
    rows: CPU_ROWS,
};

/// `Processor Information` (a V2 counterset on Windows: its index is machine-specific, so 0).
pub(crate) const PROCESSOR_INFORMATION: ObjDef = ObjDef {
    name: "Processor Information",
    index: 0,
    help_index: 0,
    help: "Activity of each logical CPU by NUMA node: instances 'node,index' (index within the node, from /sys/devices/system/node/node*/cpulist; node 0 when the system has no NUMA information), 'node,_Total' and _Total.",
    multi: true,
    rows: CPU_ROWS,
};

const MEMORY_ROWS: &[Row] = &[
    r("Available Bytes", 24, T::PERF_COUNTER_LARGE_RAWCOUNT, -6, NOV, Key::MemAvail,
      "Memory available for new allocations without swapping: MemAvailable from /proc/meminfo (MemFree + Buffers + Cached on kernels without MemAvailable), in bytes."),
    r("Available KBytes", 0, T::PERF_COUNTER_LARGE_RAWCOUNT, -3, NOV, Key::MemAvailK,
      "Available Bytes / 1024."),
    r("Available MBytes", 0, T::PERF_COUNTER_LARGE_RAWCOUNT, 0, NOV, Key::MemAvailM,
      "Available Bytes / 1048576 (rounded down)."),
    r("Committed Bytes", 26, T::PERF_COUNTER_LARGE_RAWCOUNT, -6, NOV, Key::MemCommitted,
      "Virtual memory committed by all processes: Committed_AS from /proc/meminfo, in bytes."),
    r("Commit Limit", 30, T::PERF_COUNTER_LARGE_RAWCOUNT, -6, ADV, Key::MemCommitLimit,
      "Commit limit in bytes. With strict overcommit (vm.overcommit_memory = 2) it is CommitLimit from /proc/meminfo, the limit the kernel enforces; otherwise the kernel enforces none and the value is MemTotal + SwapTotal (RAM plus swap, like Windows' RAM plus paging files, and sysstat's %commit denominator)."),
    r("% Committed Bytes In Use", 1406, T::PERF_RAW_FRACTION, 0, NOV, Key::MemCommitPct,
      "Committed Bytes as a percentage of Commit Limit. Can exceed 100 on Linux, which overcommits by default. Both raw values are shifted right together until they fit 32 bits."),
    base("% Committed Bytes In Use", 1406, T::PERF_RAW_BASE, Key::MemCommitPctBase, Store::U32Sat),
    r("Page Faults/sec", 28, T::PERF_COUNTER_BULK_COUNT, -1, NOV, Key::MemFaults,
      "Page faults (minor and major) per second: pgfault from /proc/vmstat. 64-bit rate (PERF_COUNTER_BULK_COUNT) instead of Windows' 32-bit PERF_COUNTER_COUNTER."),
    r("Pages/sec", 0, T::PERF_COUNTER_BULK_COUNT, 0, NOV, Key::MemPages,
      "Pages swapped in plus swapped out per second: pswpin + pswpout from /proc/vmstat. An approximation: Windows also counts file-backed hard-fault paging, which Linux reports as page-cache I/O."),
    r("Pages Input/sec", 0, T::PERF_COUNTER_BULK_COUNT, 0, ADV, Key::MemPagesIn,
      "Pages swapped in per second: pswpin from /proc/vmstat (approximation; see Pages/sec)."),
    r("Pages Output/sec", 0, T::PERF_COUNTER_BULK_COUNT, 0, ADV, Key::MemPagesOut,
      "Pages swapped out per second: pswpout from /proc/vmstat (approximation; see Pages/sec)."),
    r("Page Reads/sec", 0, T::PERF_COUNTER_BULK_COUNT, 0, ADV, Key::MemPageReads,
      "Hard (major) page faults per second: pgmajfault from /proc/vmstat; each needed a read from disk."),
    r("Cache Bytes", 0, T::PERF_COUNTER_LARGE_RAWCOUNT, -6, ADV, Key::MemCache,
      "File cache in bytes: Cached + Buffers + SReclaimable from /proc/meminfo (an approximation of Windows' system cache working set)."),
    r("Pool Paged Bytes", 56, T::PERF_COUNTER_LARGE_RAWCOUNT, -6, ADV, Key::MemPoolPaged,
      "Reclaimable kernel slab memory: SReclaimable from /proc/meminfo, in bytes (an approximation: Linux has no paged pool)."),
    r("Pool Nonpaged Bytes", 58, T::PERF_COUNTER_LARGE_RAWCOUNT, -6, ADV, Key::MemPoolNonpaged,
      "Unreclaimable kernel slab memory: SUnreclaim from /proc/meminfo, in bytes (an approximation of the nonpaged pool)."),
];

/// `Memory`.
pub(crate) const MEMORY: ObjDef = ObjDef {
    name: "Memory",
    index: 4,
    help_index: 5,
    help: "Physical and virtual memory, from /proc/meminfo and /proc/vmstat.",
    multi: false,
    rows: MEMORY_ROWS,
};

const SYSTEM_ROWS: &[Row] = &[
    r("Processor Queue Length", 44, T::PERF_COUNTER_RAWCOUNT, 1, NOV, Key::SysQueue,
      "Threads ready to run but not running: max(0, procs_running - number of CPUs) from /proc/stat. An approximation: Windows counts ready threads in the dispatcher queue; procs_running includes the running ones (and the collecting thread)."),
    r("Context Switches/sec", 146, T::PERF_COUNTER_BULK_COUNT, -2, NOV, Key::SysCtxt,
      "Context switches per second: ctxt from /proc/stat. 64-bit rate (PERF_COUNTER_BULK_COUNT) instead of Windows' 32-bit PERF_COUNTER_COUNTER."),
    r("System Up Time", 674, T::PERF_ELAPSED_TIME, -5, NOV, Key::SysUpTime,
      "Seconds since boot: the first field of /proc/uptime (the raw value is the boot time as a FILETIME)."),
    r("Processes", 248, T::PERF_COUNTER_RAWCOUNT, 0, NOV, Key::SysProcesses,
      "Number of processes: the numeric directories of /proc."),
    r("Threads", 250, T::PERF_COUNTER_RAWCOUNT, -1, NOV, Key::SysThreads,
      "Number of threads: the kernel scheduling entities, after the '/' in the 4th field of /proc/loadavg."),
];

/// `System`.
pub(crate) const SYSTEM: ObjDef = ObjDef {
    name: "System",
    index: 2,
    help_index: 3,
    help: "System-wide counters from /proc/stat, /proc/uptime and /proc/loadavg.",
    multi: false,
    rows: SYSTEM_ROWS,
};

const PROCESS_ROWS: &[Row] = &[
    r("% Processor Time", 6, T::PERF_100NSEC_TIMER, 0, NOV, Key::PrTime,
      "Processor time used by the process's threads as a percentage of elapsed time: utime + stime from /proc/[pid]/stat. Not divided by the number of CPUs, so it can exceed 100 (like Windows)."),
    r("% User Time", 142, T::PERF_100NSEC_TIMER, 0, NOV, Key::PrUser,
      "User-mode processor time: utime from /proc/[pid]/stat."),
    r("% Privileged Time", 144, T::PERF_100NSEC_TIMER, 0, NOV, Key::PrPriv,
      "Kernel-mode processor time: stime from /proc/[pid]/stat."),
    r("Elapsed Time", 684, T::PERF_ELAPSED_TIME, -4, ADV, Key::PrElapsed,
      "Seconds since the process started: uptime (/proc/uptime) - starttime / USER_HZ (/proc/[pid]/stat). The raw value is the start time as a FILETIME; 0 s for _Total."),
    r("ID Process", 784, T::PERF_COUNTER_RAWCOUNT, -1, ADV, Key::PrId,
      "The process ID (the /proc directory name); 0 for _Total."),
    r("Creating Process ID", 1410, T::PERF_COUNTER_RAWCOUNT, -1, ADV, Key::PrParent,
      "The parent process ID: ppid from /proc/[pid]/stat. Linux re-parents orphans to init or a subreaper, so this is the current parent, not always the creator; 0 for _Total."),
    r("Thread Count", 680, T::PERF_COUNTER_RAWCOUNT, 0, NOV, Key::PrThreads,
      "Number of threads: num_threads from /proc/[pid]/stat."),
    r("Handle Count", 952, T::PERF_COUNTER_RAWCOUNT, 0, NOV, Key::PrHandles,
      "Open file descriptors: the size of /proc/[pid]/fd, which Linux 6.2 and later set to the number of open descriptors, else the entries of that directory. 0 when neither can be read (on older kernels, another user's process without CAP_SYS_PTRACE)."),
    r("Priority Base", 682, T::PERF_COUNTER_RAWCOUNT, 0, NOV, Key::PrPriority,
      "Windows base priority mapped from the nice value and policy in /proc/[pid]/stat: real-time 24; nice -20..-11 13 (high); -10..-1 10 (above normal); 0 8 (normal); 1..10 6 (below normal); 11..19 4 (idle); 0 for _Total."),
    r("Working Set", 180, T::PERF_COUNTER_LARGE_RAWCOUNT, -5, NOV, Key::PrWs,
      "Resident memory in bytes: rss from /proc/[pid]/stat x page size (the kernel's RSS counters are updated asynchronously and may lag slightly)."),
    r("Working Set Peak", 178, T::PERF_COUNTER_LARGE_RAWCOUNT, -5, ADV, Key::PrWsPeak,
      "Peak resident memory in bytes: VmHWM from /proc/[pid]/status."),
    r("Working Set - Private", 1478, T::PERF_COUNTER_LARGE_RAWCOUNT, -5, NOV, Key::PrWsPrivate,
      "Resident anonymous memory in bytes: RssAnon from /proc/[pid]/status (shared memory and file pages are not counted)."),
    r("Private Bytes", 186, T::PERF_COUNTER_LARGE_RAWCOUNT, -5, NOV, Key::PrPrivate,
      "Private memory in bytes: RssAnon + VmSwap from /proc/[pid]/status (resident plus swapped-out anonymous memory; an approximation of Windows' private commit charge)."),
    r("Virtual Bytes", 174, T::PERF_COUNTER_LARGE_RAWCOUNT, -5, ADV, Key::PrVirtual,
      "Virtual address space in bytes: vsize from /proc/[pid]/stat."),
    r("Virtual Bytes Peak", 172, T::PERF_COUNTER_LARGE_RAWCOUNT, -5, ADV, Key::PrVirtualPeak,
      "Peak virtual address space in bytes: VmPeak from /proc/[pid]/status."),
    r("Page File Bytes", 184, T::PERF_COUNTER_LARGE_RAWCOUNT, -5, ADV, Key::PrPageFile,
      "Swapped-out memory in bytes: VmSwap from /proc/[pid]/status (an approximation: Windows counts page-file commit, not only pages written out)."),
    r("Page Faults/sec", 28, T::PERF_COUNTER_BULK_COUNT, -1, NOV, Key::PrFaults,
      "Page faults per second: minflt + majflt from /proc/[pid]/stat. 64-bit rate (PERF_COUNTER_BULK_COUNT) instead of Windows' 32-bit PERF_COUNTER_COUNTER."),
    r("IO Read Bytes/sec", 1420, T::PERF_COUNTER_BULK_COUNT, -4, ADV, Key::PrIoReadBytes,
      "Bytes read per second by read-like system calls (files, pipes, sockets, devices, like Windows): rchar from /proc/[pid]/io. 0 when the file cannot be read (another user's process)."),
    r("IO Write Bytes/sec", 1422, T::PERF_COUNTER_BULK_COUNT, -4, ADV, Key::PrIoWriteBytes,
      "Bytes written per second by write-like system calls: wchar from /proc/[pid]/io. 0 when the file cannot be read."),
    r("IO Read Operations/sec", 1412, T::PERF_COUNTER_BULK_COUNT, 0, ADV, Key::PrIoReadOps,
      "Read system calls per second: syscr from /proc/[pid]/io. 0 when the file cannot be read."),
    r("IO Write Operations/sec", 1414, T::PERF_COUNTER_BULK_COUNT, 0, ADV, Key::PrIoWriteOps,
      "Write system calls per second: syscw from /proc/[pid]/io. 0 when the file cannot be read."),
];

/// `Process`.
pub(crate) const PROCESS: ObjDef = ObjDef {
    name: "Process",
    index: 230,
    help_index: 231,
    help: "Running processes from /proc/[pid]. Instances are the command names (comm); duplicates get #1, #2 … in PID order; _Total sums all processes.",
    multi: true,
    rows: PROCESS_ROWS,
};

const fn avg_base(name: &'static str, key: Key) -> Row {
    base(name, 0, T::PERF_AVERAGE_BASE, key, Store::U32Wrap)
}

macro_rules! disk_rows {
    ($($extra:expr),* $(,)?) => {
        &[
            r("% Disk Time", 200, T::PERF_100NSEC_TIMER, 0, NOV, Key::DkTime,
              "Sum of read and write service times as a percentage of elapsed time: 100 x (time reading + time writing) / elapsed, from /proc/diskstats (can exceed 100 with parallel I/O, like Windows). PERF_100NSEC_TIMER with the block clock instead of Windows' precision timer. _Total is the average over the disks."),
            r("% Disk Read Time", 202, T::PERF_100NSEC_TIMER, 0, NOV, Key::DkReadTime,
              "Time reading as a percentage of elapsed time, from /proc/diskstats. _Total is the average over the disks."),
            r("% Disk Write Time", 204, T::PERF_100NSEC_TIMER, 0, NOV, Key::DkWriteTime,
              "Time writing as a percentage of elapsed time, from /proc/diskstats. _Total is the average over the disks."),
            r("% Idle Time", 0, T::PERF_100NSEC_TIMER_INV, 0, ADV, Key::DkIdle,
              "Percentage of elapsed time with no I/O in progress: 100 x (1 - time doing I/O / elapsed), from /proc/diskstats (100 - iostat %util). _Total is the average over the disks."),
            r("Avg. Disk Queue Length", 1400, T::PERF_COUNTER_100NS_QUEUELEN_TYPE, 2, NOV, Key::DkQueue,
              "Average number of requests in flight: weighted time doing I/O / elapsed, from /proc/diskstats (iostat aqu-sz)."),
            r("Avg. Disk Read Queue Length", 1402, T::PERF_COUNTER_100NS_QUEUELEN_TYPE, 2, ADV, Key::DkReadQueue,
              "Average number of read requests in flight: time reading / elapsed, from /proc/diskstats."),
            r("Avg. Disk Write Queue Length", 1404, T::PERF_COUNTER_100NS_QUEUELEN_TYPE, 2, ADV, Key::DkWriteQueue,
              "Average number of write requests in flight: time writing / elapsed, from /proc/diskstats."),
            r("Current Disk Queue Length", 198, T::PERF_COUNTER_RAWCOUNT, 1, NOV, Key::DkCurrentQueue,
              "Requests in flight now: the I/Os-in-progress field of /proc/diskstats."),
            wide(r("Avg. Disk sec/Transfer", 0, T::PERF_AVERAGE_TIMER, 3, NOV, Key::DkXferTime,
              "Average seconds per read or write: (time reading + time writing) / (reads + writes), from /proc/diskstats (iostat await). The time is stored in nanoseconds in 8 bytes; discards and flushes are not counted.")),
            avg_base("Avg. Disk sec/Transfer", Key::DkXfers),
            wide(r("Avg. Disk sec/Read", 0, T::PERF_AVERAGE_TIMER, 3, NOV, Key::DkReadTimeTotal,
              "Average seconds per read: time reading / reads, from /proc/diskstats (iostat r_await).")),
            avg_base("Avg. Disk sec/Read", Key::DkReads),
            wide(r("Avg. Disk sec/Write", 0, T::PERF_AVERAGE_TIMER, 3, NOV, Key::DkWriteTimeTotal,
              "Average seconds per write: time writing / writes, from /proc/diskstats (iostat w_await).")),
            avg_base("Avg. Disk sec/Write", Key::DkWrites),
            r("Avg. Disk Bytes/Transfer", 0, T::PERF_AVERAGE_BULK, -2, ADV, Key::DkXferBytes,
              "Average bytes per read or write: sectors x 512 / operations, from /proc/diskstats (kernel sectors are always 512 bytes)."),
            avg_base("Avg. Disk Bytes/Transfer", Key::DkXfers),
            r("Avg. Disk Bytes/Read", 0, T::PERF_AVERAGE_BULK, -2, ADV, Key::DkReadBytes,
              "Average bytes per read: sectors read x 512 / reads, from /proc/diskstats."),
            avg_base("Avg. Disk Bytes/Read", Key::DkReads),
            r("Avg. Disk Bytes/Write", 0, T::PERF_AVERAGE_BULK, -2, ADV, Key::DkWriteBytes,
              "Average bytes per write: sectors written x 512 / writes, from /proc/diskstats."),
            avg_base("Avg. Disk Bytes/Write", Key::DkWrites),
            r("Disk Transfers/sec", 0, T::PERF_COUNTER_BULK_COUNT, 0, NOV, Key::DkXfers,
              "Completed reads plus writes per second, from /proc/diskstats. 64-bit rate (PERF_COUNTER_BULK_COUNT) instead of Windows' 32-bit PERF_COUNTER_COUNTER."),
            r("Disk Reads/sec", 0, T::PERF_COUNTER_BULK_COUNT, 0, NOV, Key::DkReads,
              "Completed reads per second, from /proc/diskstats."),
            r("Disk Writes/sec", 0, T::PERF_COUNTER_BULK_COUNT, 0, NOV, Key::DkWrites,
              "Completed writes per second, from /proc/diskstats."),
            r("Disk Bytes/sec", 0, T::PERF_COUNTER_BULK_COUNT, -4, NOV, Key::DkXferBytes,
              "Bytes read plus written per second: sectors x 512, from /proc/diskstats."),
            r("Disk Read Bytes/sec", 220, T::PERF_COUNTER_BULK_COUNT, -4, NOV, Key::DkReadBytes,
              "Bytes read per second: sectors read x 512, from /proc/diskstats."),
            r("Disk Write Bytes/sec", 222, T::PERF_COUNTER_BULK_COUNT, -4, NOV, Key::DkWriteBytes,
              "Bytes written per second: sectors written x 512, from /proc/diskstats."),
            $($extra,)*
        ]
    };
}

const PHYSICAL_DISK_ROWS: &[Row] = disk_rows!();

const LOGICAL_DISK_ROWS: &[Row] = disk_rows!(
    r("% Free Space", 408, T::PERF_RAW_FRACTION, 0, NOV, Key::LdFreePct,
      "Space available to unprivileged users as a percentage of the file system size: f_bavail / f_blocks from statvfs(). Both raw values are shifted right together until they fit 32 bits."),
    base("% Free Space", 408, T::PERF_RAW_BASE, Key::LdFreePctBase, Store::U32Sat),
    r("Free Megabytes", 0, T::PERF_COUNTER_RAWCOUNT, 0, NOV, Key::LdFreeMb,
      "Space available to unprivileged users in MiB: f_bavail x f_frsize / 1048576 from statvfs()."),
);

/// `PhysicalDisk`.
pub(crate) const PHYSICAL_DISK: ObjDef = ObjDef {
    name: "PhysicalDisk",
    index: 234,
    help_index: 235,
    help: "Whole block devices (kernel names such as sda, nvme0n1; partitions and loop, ram, zram, dm and md devices excluded) from /proc/diskstats, and _Total.",
    multi: true,
    rows: PHYSICAL_DISK_ROWS,
};

/// `LogicalDisk`.
pub(crate) const LOGICAL_DISK: ObjDef = ObjDef {
    name: "LogicalDisk",
    index: 236,
    help_index: 237,
    help: "Mounted block-device file systems (instances are mount points; a device mounted twice is listed once, at its first mount), I/O from the device's /proc/diskstats line, space from statvfs(), and _Total.",
    multi: true,
    rows: LOGICAL_DISK_ROWS,
};

const NET_ROWS: &[Row] = &[
    r("Bytes Total/sec", 0, T::PERF_COUNTER_BULK_COUNT, -4, NOV, Key::NetBytesTotal,
      "Bytes received plus sent per second, from /proc/net/dev."),
    r("Bytes Received/sec", 0, T::PERF_COUNTER_BULK_COUNT, -4, ADV, Key::NetBytesRx,
      "Bytes received per second: rx bytes from /proc/net/dev."),
    r("Bytes Sent/sec", 506, T::PERF_COUNTER_BULK_COUNT, -4, ADV, Key::NetBytesTx,
      "Bytes sent per second: tx bytes from /proc/net/dev."),
    r("Packets/sec", 0, T::PERF_COUNTER_BULK_COUNT, -1, NOV, Key::NetPackets,
      "Packets received plus sent per second, from /proc/net/dev."),
    r("Packets Received/sec", 0, T::PERF_COUNTER_BULK_COUNT, -1, ADV, Key::NetPacketsRx,
      "Packets received per second: rx packets from /proc/net/dev."),
    r("Packets Sent/sec", 0, T::PERF_COUNTER_BULK_COUNT, -1, ADV, Key::NetPacketsTx,
      "Packets sent per second: tx packets from /proc/net/dev."),
    r("Current Bandwidth", 520, T::PERF_COUNTER_LARGE_RAWCOUNT, -6, NOV, Key::NetBandwidth,
      "Link speed in bits per second: /sys/class/net/[interface]/speed (Mb/s) x 1000000; 0 when unknown (virtual interfaces, link down)."),
    r("Packets Received Errors", 0, T::PERF_COUNTER_RAWCOUNT, 0, ADV, Key::NetRxErrors,
      "Received packets with errors since boot: rx errs from /proc/net/dev."),
    r("Packets Outbound Errors", 0, T::PERF_COUNTER_RAWCOUNT, 0, ADV, Key::NetTxErrors,
      "Packets that could not be sent because of errors since boot: tx errs from /proc/net/dev."),
    r("Packets Received Discarded", 0, T::PERF_COUNTER_RAWCOUNT, 0, ADV, Key::NetRxDiscards,
      "Received packets dropped since boot: rx drop from /proc/net/dev."),
    r("Packets Outbound Discarded", 0, T::PERF_COUNTER_RAWCOUNT, 0, ADV, Key::NetTxDiscards,
      "Outbound packets dropped since boot: tx drop from /proc/net/dev."),
];

/// `Network Interface`.
pub(crate) const NETWORK_INTERFACE: ObjDef = ObjDef {
    name: "Network Interface",
    index: 510,
    help_index: 511,
    help: "Network interfaces by kernel name (including lo), from /proc/net/dev. No _Total, as on Windows.",
    multi: true,
    rows: NET_ROWS,
};

/// Every object, in catalog order.
pub(crate) const OBJECTS: &[&ObjDef] = &[
    &PROCESSOR,
    &PROCESSOR_INFORMATION,
    &MEMORY,
    &SYSTEM,
    &PROCESS,
    &PHYSICAL_DISK,
    &LOGICAL_DISK,
    &NETWORK_INTERFACE,
];

/// The object named `name` (case-insensitive).
pub(crate) fn object(name: &str) -> Option<&'static ObjDef> {
    OBJECTS
        .iter()
        .copied()
        .find(|o| eq_ignore_case(o.name, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_consistent() {
        for o in OBJECTS {
            for (i, row) in o.rows.iter().enumerate() {
                if row.ty.is_base() {
                    let prev = &o.rows[i - 1];
                    assert!(prev.ty.needs_base(), "{}: {}", o.name, row.name);
                    assert_eq!(prev.name, row.name);
                } else {
                    assert!(!row.help.is_empty(), "{}: {}", o.name, row.name);
                    assert_eq!(o.row(row.name), Some(i), "duplicate {}", row.name);
                    let next_is_base = o.rows.get(i + 1).is_some_and(|n| n.ty.is_base());
                    assert_eq!(row.ty.needs_base(), next_is_base, "{}", row.name);
                }
            }
        }
        assert_eq!(PROCESSOR.row("% processor time"), Some(0));
        assert_eq!(object("memory").map(|o| o.index), Some(4));
        assert!(object("Nope").is_none());
    }
}
