//! Per-object collectors: read the needed files (each at most once per collection) and turn them
//! into raw values.

use std::fs;

use super::defs::{self, Key, ObjDef, Row};
use super::parse::{self, CpuTimes, DiskLine, MemInfo, ProcIo, ProcStat, ProcStatus, Stat};
use super::{build_object, fit_fraction, store, vanished, ClockReading, FsUsage, LinuxSource};
use crate::snapshot::{Instance, Object, ObjectData, Value};
use crate::source::SourceError;

/// 100 ns units per second.
const UNITS_100NS: u128 = 10_000_000;
/// Kernel sectors are always 512 bytes.
const SECTOR: u64 = 512;

/// Files already read in this collection.
pub(super) struct Ctx {
    now: ClockReading,
    stat: Option<Stat>,
    interrupts: Option<Vec<(u32, u64)>>,
    uptime_centis: Option<u64>,
    pids: Option<Vec<u32>>,
    diskstats: Option<Vec<DiskLine>>,
}

impl Ctx {
    pub(super) fn new(now: ClockReading) -> Self {
        Ctx {
            now,
            stat: None,
            interrupts: None,
            uptime_centis: None,
            pids: None,
            diskstats: None,
        }
    }
}

fn wants(rows: &[&Row], keys: &[Key]) -> bool {
    rows.iter().any(|r| keys.contains(&r.key))
}

fn values(rows: &[&Row], mut f: impl FnMut(Key) -> u64) -> Vec<Value> {
    rows.iter().map(|r| store(r.store, f(r.key))).collect()
}

/// An instance with its raw name; `build_object` names the list ([`crate::snapshot::name_instances`]).
fn instance(raw_name: String, unique_id: i32, values: Vec<Value>) -> Instance {
    Instance {
        name: String::new(),
        raw_name,
        parent: None,
        index: 0,
        parent_object: 0,
        parent_instance: 0,
        unique_id,
        values,
    }
}

/// `jiffies × 10^7 / (hz × div)`: CPU time in 100 ns units, averaged over `div` CPUs.
fn cpu_100ns(jiffies: u64, hz: u64, div: u64) -> u64 {
    let d = u128::from(hz.max(1)) * u128::from(div.max(1));
    u64::try_from(u128::from(jiffies) * UNITS_100NS / d).unwrap_or(u64::MAX)
}

/// Milliseconds → 100 ns units, divided by `div`.
fn ms_100ns(ms: u64, div: u64) -> u64 {
    ms.saturating_mul(10_000) / div.max(1)
}

/// One CPU or an aggregate of `count` CPUs.
struct CpuSample {
    t: CpuTimes,
    count: u64,
    interrupts: u64,
}

/// A disk (or an aggregate of `count` disks).
#[derive(Clone, Copy, Default)]
struct DiskSample {
    reads: u64,
    writes: u64,
    read_sectors: u64,
    write_sectors: u64,
    read_ms: u64,
    write_ms: u64,
    in_progress: u64,
    io_ms: u64,
    weighted_ms: u64,
    space: FsUsage,
    count: u64,
}

impl DiskSample {
    fn from_line(d: &DiskLine) -> Self {
        DiskSample {
            reads: d.reads,
            writes: d.writes,
            read_sectors: d.read_sectors,
            write_sectors: d.write_sectors,
            read_ms: d.read_ms,
            write_ms: d.write_ms,
            in_progress: d.in_progress,
            io_ms: d.io_ms,
            weighted_ms: d.weighted_ms,
            space: FsUsage::default(),
            count: 1,
        }
    }

    fn add(&mut self, o: &DiskSample) {
        let add = |a: &mut u64, b: u64| *a = a.saturating_add(b);
        add(&mut self.reads, o.reads);
        add(&mut self.writes, o.writes);
        add(&mut self.read_sectors, o.read_sectors);
        add(&mut self.write_sectors, o.write_sectors);
        add(&mut self.read_ms, o.read_ms);
        add(&mut self.write_ms, o.write_ms);
        add(&mut self.in_progress, o.in_progress);
        add(&mut self.io_ms, o.io_ms);
        add(&mut self.weighted_ms, o.weighted_ms);
        add(&mut self.space.total_bytes, o.space.total_bytes);
        add(&mut self.space.available_bytes, o.space.available_bytes);
        add(&mut self.count, o.count);
    }

    fn value(&self, key: Key) -> u64 {
        let div = self.count;
        let xfer_ms = self.read_ms.saturating_add(self.write_ms);
        match key {
            Key::DkTime => ms_100ns(xfer_ms, div),
            Key::DkReadTime => ms_100ns(self.read_ms, div),
            Key::DkWriteTime => ms_100ns(self.write_ms, div),
            Key::DkIdle => ms_100ns(self.io_ms, div),
            Key::DkQueue => ms_100ns(self.weighted_ms, 1),
            Key::DkReadQueue => ms_100ns(self.read_ms, 1),
            Key::DkWriteQueue => ms_100ns(self.write_ms, 1),
            Key::DkCurrentQueue => self.in_progress,
            // AVERAGE_TIMER numerators in perf_time ticks (ns).
            Key::DkXferTime => xfer_ms.saturating_mul(1_000_000),
            Key::DkReadTimeTotal => self.read_ms.saturating_mul(1_000_000),
            Key::DkWriteTimeTotal => self.write_ms.saturating_mul(1_000_000),
            Key::DkXferBytes => self
                .read_sectors
                .saturating_add(self.write_sectors)
                .saturating_mul(SECTOR),
            Key::DkReadBytes => self.read_sectors.saturating_mul(SECTOR),
            Key::DkWriteBytes => self.write_sectors.saturating_mul(SECTOR),
            Key::DkXfers => self.reads.saturating_add(self.writes),
            Key::DkReads => self.reads,
            Key::DkWrites => self.writes,
            Key::LdFreePct => fit_fraction(self.space.available_bytes, self.space.total_bytes).0,
            Key::LdFreePctBase => {
                fit_fraction(self.space.available_bytes, self.space.total_bytes).1
            }
            Key::LdFreeMb => self.space.available_bytes >> 20,
            _ => 0,
        }
    }
}

/// Windows base priority from the kernel priority and nice value.
fn priority_base(priority: i64, nice: i64) -> u64 {
    if priority < 0 {
        // Real-time policies report -1 - rt_priority.
        return 24;
    }
    match nice {
        i64::MIN..=-11 => 13,
        -10..=-1 => 10,
        0 => 8,
        1..=10 => 6,
        _ => 4,
    }
}

const PROCESS_STATUS_KEYS: &[Key] = &[
    Key::PrWsPeak,
    Key::PrWsPrivate,
    Key::PrPrivate,
    Key::PrVirtualPeak,
    Key::PrPageFile,
];
const PROCESS_IO_KEYS: &[Key] = &[
    Key::PrIoReadBytes,
    Key::PrIoWriteBytes,
    Key::PrIoReadOps,
    Key::PrIoWriteOps,
];

impl LinuxSource {
    fn stat<'c>(&mut self, ctx: &'c mut Ctx) -> Result<&'c Stat, SourceError> {
        let s = match ctx.stat.take() {
            Some(s) => s,
            None => self.read_proc("stat", parse::stat)?,
        };
        Ok(ctx.stat.insert(s))
    }

    fn interrupts<'c>(&mut self, ctx: &'c mut Ctx) -> Result<&'c [(u32, u64)], SourceError> {
        let s = match ctx.interrupts.take() {
            Some(s) => s,
            None => self.read_proc("interrupts", parse::interrupts)?,
        };
        Ok(ctx.interrupts.insert(s))
    }

    fn uptime_centis(&mut self, ctx: &mut Ctx) -> Result<u64, SourceError> {
        let s = match ctx.uptime_centis {
            Some(s) => s,
            None => self.read_proc("uptime", parse::uptime_centis)?,
        };
        ctx.uptime_centis = Some(s);
        Ok(s)
    }

    /// The boot time as a FILETIME on the source's clock.
    fn boot_filetime(&mut self, ctx: &mut Ctx) -> Result<i64, SourceError> {
        let up = self.uptime_centis(ctx)?;
        let up_100ns = i64::try_from(up.saturating_mul(100_000)).unwrap_or(i64::MAX);
        Ok(ctx.now.filetime.saturating_sub(up_100ns))
    }

    fn pids<'c>(&mut self, ctx: &'c mut Ctx) -> Result<&'c [u32], SourceError> {
        let p = match ctx.pids.take() {
            Some(p) => p,
            None => {
                let dir = &self.proc_dir;
                let mut pids: Vec<u32> = fs::read_dir(dir)
                    .map_err(|e| SourceError::io(dir, e))?
                    .filter_map(|e| e.ok())
                    .filter_map(|e| {
                        let name = e.file_name();
                        let b = name.as_encoded_bytes();
                        parse::parse_u64(b).and_then(|v| u32::try_from(v).ok())
                    })
                    .collect();
                pids.sort_unstable();
                pids
            }
        };
        Ok(ctx.pids.insert(p))
    }

    fn diskstats<'c>(&mut self, ctx: &'c mut Ctx) -> Result<&'c [DiskLine], SourceError> {
        let s = match ctx.diskstats.take() {
            Some(s) => s,
            None => self.read_proc("diskstats", parse::diskstats)?,
        };
        Ok(ctx.diskstats.insert(s))
    }

    pub(super) fn collect_object(
        &mut self,
        ctx: &mut Ctx,
        def: &'static ObjDef,
        rows: &[&'static Row],
    ) -> Result<Object, SourceError> {
        let name = def.name;
        if name == defs::PROCESSOR.name {
            self.processor(ctx, def, rows)
        } else if name == defs::PROCESSOR_INFORMATION.name {
            self.processor_information(ctx, def, rows)
        } else if name == defs::MEMORY.name {
            self.memory(ctx, def, rows)
        } else if name == defs::SYSTEM.name {
            self.system(ctx, def, rows)
        } else if name == defs::PROCESS.name {
            self.process(ctx, def, rows)
        } else if name == defs::PHYSICAL_DISK.name {
            self.physical_disk(ctx, def, rows)
        } else if name == defs::LOGICAL_DISK.name {
            self.logical_disk(ctx, def, rows)
        } else {
            self.network(def, rows)
        }
    }

    // -- Processor ---------------------------------------------------------------------------

    fn cpu_value(&self, s: &CpuSample, key: Key) -> u64 {
        let t = &s.t;
        let j = |v: u64| cpu_100ns(v, self.hz, s.count);
        match key {
            Key::CpuIdleInv | Key::CpuIdle => j(t.idle.saturating_add(t.iowait)),
            Key::CpuUser => j(t.user.saturating_add(t.nice)),
            Key::CpuPriv => j(t.system.saturating_add(t.irq).saturating_add(t.softirq)),
            Key::CpuIrq => j(t.irq),
            Key::CpuDpc => j(t.softirq),
            Key::CpuInterrupts => s.interrupts,
            _ => 0,
        }
    }

    /// Per-CPU samples sorted by CPU id, and the `_Total` sample.
    fn cpu_samples(
        &mut self,
        ctx: &mut Ctx,
        rows: &[&Row],
    ) -> Result<(Vec<(u32, CpuSample)>, CpuSample), SourceError> {
        self.stat(ctx)?;
        let per_cpu_irq: Vec<(u32, u64)> = if wants(rows, &[Key::CpuInterrupts]) {
            self.interrupts(ctx)?.to_vec()
        } else {
            Vec::new()
        };
        let stat = self.stat(ctx)?;
        let mut cpus: Vec<(u32, CpuSample)> = stat
            .cpus
            .iter()
            .map(|&(id, t)| {
                let irq = per_cpu_irq
                    .iter()
                    .find(|(c, _)| *c == id)
                    .map_or(0, |&(_, v)| v);
                (
                    id,
                    CpuSample {
                        t,
                        count: 1,
                        interrupts: irq,
                    },
                )
            })
            .collect();
        cpus.sort_by_key(|(id, _)| *id);
        let total = CpuSample {
            t: stat.total,
            count: (cpus.len() as u64).max(1),
            interrupts: stat.intr,
        };
        Ok((cpus, total))
    }

    fn processor(
        &mut self,
        ctx: &mut Ctx,
        def: &ObjDef,
        rows: &[&Row],
    ) -> Result<Object, SourceError> {
        let (cpus, total) = self.cpu_samples(ctx, rows)?;
        let mut out: Vec<Instance> = cpus
            .iter()
            .map(|(id, s)| instance(id.to_string(), -1, values(rows, |k| self.cpu_value(s, k))))
            .collect();
        out.push(instance(
            "_Total".into(),
            -1,
            values(rows, |k| self.cpu_value(&total, k)),
        ));
        Ok(build_object(def, rows, None, ObjectData::Instances(out)))
    }

    /// NUMA nodes and their CPUs, ascending; one node 0 with every CPU when sysfs has no nodes.
    fn numa_nodes(&mut self, all_cpus: &[u32]) -> Result<Vec<(u32, Vec<u32>)>, SourceError> {
        let dir = self.sys_dir.join("devices/system/node");
        let mut nodes: Vec<(u32, Vec<u32>)> = Vec::new();
        if let Ok(entries) = fs::read_dir(&dir) {
            let mut ids: Vec<u32> = entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name();
                    let b = name.as_encoded_bytes();
                    b.strip_prefix(b"node")
                        .and_then(parse::parse_u64)
                        .and_then(|v| u32::try_from(v).ok())
                })
                .collect();
            ids.sort_unstable();
            for id in ids {
                let path = dir.join(format!("node{id}/cpulist"));
                let mut list = self.read_parse(&path, parse::cpulist)?;
                list.sort_unstable();
                list.dedup();
                nodes.push((id, list));
            }
        }
        // CPUs that no node lists (or no NUMA information at all) belong to node 0.
        let orphans: Vec<u32> = all_cpus
            .iter()
            .copied()
            .filter(|c| !nodes.iter().any(|(_, l)| l.contains(c)))
            .collect();
        if !orphans.is_empty() {
            match nodes.iter_mut().find(|(id, _)| *id == 0) {
                Some((_, l)) => {
                    l.extend(orphans);
                    l.sort_unstable();
                }
                None => {
                    nodes.insert(0, (0, orphans));
                }
            }
        }
        Ok(nodes)
    }

    fn processor_information(
        &mut self,
        ctx: &mut Ctx,
        def: &ObjDef,
        rows: &[&Row],
    ) -> Result<Object, SourceError> {
        let (cpus, total) = self.cpu_samples(ctx, rows)?;
        let ids: Vec<u32> = cpus.iter().map(|(id, _)| *id).collect();
        let nodes = self.numa_nodes(&ids)?;
        let mut out = Vec::new();
        for (node, list) in &nodes {
            let mut node_total = CpuSample {
                t: CpuTimes::default(),
                count: 0,
                interrupts: 0,
            };
            for (index, cpu) in list.iter().enumerate() {
                let Some((_, s)) = cpus.iter().find(|(id, _)| id == cpu) else {
                    continue;
                };
                node_total.t.add(&s.t);
                node_total.count += 1;
                node_total.interrupts = node_total.interrupts.saturating_add(s.interrupts);
                out.push(instance(
                    format!("{node},{index}"),
                    -1,
                    values(rows, |k| self.cpu_value(s, k)),
                ));
            }
            if node_total.count > 0 {
                out.push(instance(
                    format!("{node},_Total"),
                    -1,
                    values(rows, |k| self.cpu_value(&node_total, k)),
                ));
            }
        }
        out.push(instance(
            "_Total".into(),
            -1,
            values(rows, |k| self.cpu_value(&total, k)),
        ));
        Ok(build_object(def, rows, None, ObjectData::Instances(out)))
    }

    // -- Memory -----------------------------------------------------------------------------

    fn memory(
        &mut self,
        _ctx: &mut Ctx,
        def: &ObjDef,
        rows: &[&Row],
    ) -> Result<Object, SourceError> {
        let need_meminfo = wants(
            rows,
            &[
                Key::MemAvail,
                Key::MemAvailK,
                Key::MemAvailM,
                Key::MemCommitted,
                Key::MemCommitLimit,
                Key::MemCommitPct,
                Key::MemCommitPctBase,
                Key::MemCache,
                Key::MemPoolPaged,
                Key::MemPoolNonpaged,
            ],
        );
        let need_vmstat = wants(
            rows,
            &[
                Key::MemFaults,
                Key::MemPages,
                Key::MemPagesIn,
                Key::MemPagesOut,
                Key::MemPageReads,
            ],
        );
        let need_limit = wants(
            rows,
            &[
                Key::MemCommitLimit,
                Key::MemCommitPct,
                Key::MemCommitPctBase,
            ],
        );
        let meminfo_path = self.proc_dir.join("meminfo");
        let m = if need_meminfo {
            self.read_parse(&meminfo_path, parse::meminfo)?
        } else {
            MemInfo::default()
        };
        let vm = if need_vmstat {
            self.read_proc("vmstat", parse::vmstat)?
        } else {
            parse::VmStat::default()
        };
        let strict = need_limit && {
            let path = self.proc_dir.join("sys/vm/overcommit_memory");
            matches!(self.read_parse(&path, parse::single_i64), Ok(2))
        };
        let missing =
            |name: &str| SourceError::parse(&meminfo_path, None, format!("no '{name}' line"));
        let kb = |v: u64| v.saturating_mul(1024);
        let get = |key: Key| -> Result<u64, SourceError> {
            let available = || -> Result<u64, SourceError> {
                match m.mem_available {
                    Some(v) => Ok(v),
                    None => {
                        let free = m.mem_free.ok_or_else(|| missing("MemFree"))?;
                        Ok(free
                            .saturating_add(m.buffers.unwrap_or(0))
                            .saturating_add(m.cached.unwrap_or(0)))
                    }
                }
            };
            let committed = || m.committed_as.ok_or_else(|| missing("Committed_AS"));
            let limit = || -> Result<u64, SourceError> {
                if strict {
                    m.commit_limit.ok_or_else(|| missing("CommitLimit"))
                } else {
                    let total = m.mem_total.ok_or_else(|| missing("MemTotal"))?;
                    Ok(total.saturating_add(m.swap_total.unwrap_or(0)))
                }
            };
            Ok(match key {
                Key::MemAvail => kb(available()?),
                Key::MemAvailK => available()?,
                Key::MemAvailM => available()? / 1024,
                Key::MemCommitted => kb(committed()?),
                Key::MemCommitLimit => kb(limit()?),
                Key::MemCommitPct => fit_fraction(committed()?, limit()?).0,
                Key::MemCommitPctBase => fit_fraction(committed()?, limit()?).1,
                Key::MemFaults => vm.pgfault,
                Key::MemPages => vm.pswpin.saturating_add(vm.pswpout),
                Key::MemPagesIn => vm.pswpin,
                Key::MemPagesOut => vm.pswpout,
                Key::MemPageReads => vm.pgmajfault,
                Key::MemCache => kb(m
                    .cached
                    .unwrap_or(0)
                    .saturating_add(m.buffers.unwrap_or(0))
                    .saturating_add(m.sreclaimable.unwrap_or(0))),
                Key::MemPoolPaged => kb(m.sreclaimable.unwrap_or(0)),
                Key::MemPoolNonpaged => kb(m.sunreclaim.unwrap_or(0)),
                _ => 0,
            })
        };
        let mut vals = Vec::with_capacity(rows.len());
        for r in rows {
            vals.push(store(r.store, get(r.key)?));
        }
        Ok(build_object(def, rows, None, ObjectData::Single(vals)))
    }

    // -- System -----------------------------------------------------------------------------

    fn system(
        &mut self,
        ctx: &mut Ctx,
        def: &ObjDef,
        rows: &[&Row],
    ) -> Result<Object, SourceError> {
        let (queue, ctxt) = if wants(rows, &[Key::SysQueue, Key::SysCtxt]) {
            let s = self.stat(ctx)?;
            let ncpu = s.cpus.len() as u64;
            (s.procs_running.saturating_sub(ncpu), s.ctxt)
        } else {
            (0, 0)
        };
        let boot = if wants(rows, &[Key::SysUpTime]) {
            self.boot_filetime(ctx)?
        } else {
            0
        };
        let processes = if wants(rows, &[Key::SysProcesses]) {
            self.pids(ctx)?.len() as u64
        } else {
            0
        };
        let threads = if wants(rows, &[Key::SysThreads]) {
            self.read_proc("loadavg", parse::loadavg_threads)?
        } else {
            0
        };
        let vals = values(rows, |k| match k {
            Key::SysQueue => queue,
            Key::SysCtxt => ctxt,
            Key::SysUpTime => boot.max(0) as u64,
            Key::SysProcesses => processes,
            Key::SysThreads => threads,
            _ => 0,
        });
        Ok(build_object(
            def,
            rows,
            Some(ctx.now.filetime),
            ObjectData::Single(vals),
        ))
    }

    // -- Process ----------------------------------------------------------------------------

    fn pid_parse_error(&self, pid: u32, file: &str, e: parse::ParseError) -> SourceError {
        let path = self.proc_dir.join(pid.to_string()).join(file);
        super::parse_error(&path, e)
    }

    fn process(
        &mut self,
        ctx: &mut Ctx,
        def: &ObjDef,
        rows: &[&Row],
    ) -> Result<Object, SourceError> {
        let need_status = wants(rows, PROCESS_STATUS_KEYS);
        let need_io = wants(rows, PROCESS_IO_KEYS);
        let need_fd = wants(rows, &[Key::PrHandles]);
        let boot = if wants(rows, &[Key::PrElapsed]) {
            self.boot_filetime(ctx)?
        } else {
            0
        };
        let now_ft = ctx.now.filetime;
        let pids = self.pids(ctx)?.to_vec();
        let mut procs: Vec<(u32, String, Vec<u64>)> = Vec::with_capacity(pids.len());
        for pid in pids {
            if self.read_pid_file(pid, "stat").is_err() {
                continue; // gone since the directory was listed
            }
            let st: ProcStat =
                parse::proc_stat(&self.buf).map_err(|e| self.pid_parse_error(pid, "stat", e))?;
            let status = if need_status {
                match self.read_pid_file(pid, "status") {
                    Ok(()) => parse::proc_status(&self.buf)
                        .map_err(|e| self.pid_parse_error(pid, "status", e))?,
                    Err(_) => continue,
                }
            } else {
                ProcStatus::default()
            };
            let io = if need_io {
                match self.read_pid_file(pid, "io") {
                    Ok(()) => {
                        parse::proc_io(&self.buf).map_err(|e| self.pid_parse_error(pid, "io", e))?
                    }
                    Err(e) if vanished(&e) => continue,
                    Err(_) => ProcIo::default(), // not permitted: reported as 0
                }
            } else {
                ProcIo::default()
            };
            let handles = if need_fd {
                self.set_pid_path(pid, "fd");
                match self.count_fds() {
                    Ok(n) => n,
                    Err(e) if vanished(&e) => continue,
                    Err(_) => 0, // not permitted: reported as 0
                }
            } else {
                0
            };
            let kb = |v: u64| v.saturating_mul(1024);
            let hz = self.hz;
            let page = self.page_size;
            let start = boot
                .saturating_add(i64::try_from(cpu_100ns(st.starttime, hz, 1)).unwrap_or(i64::MAX));
            let vals: Vec<u64> = rows
                .iter()
                .map(|r| match r.key {
                    Key::PrTime => cpu_100ns(st.utime.saturating_add(st.stime), hz, 1),
                    Key::PrUser => cpu_100ns(st.utime, hz, 1),
                    Key::PrPriv => cpu_100ns(st.stime, hz, 1),
                    Key::PrElapsed => start.max(0) as u64,
                    Key::PrId => u64::from(pid),
                    Key::PrParent => st.ppid,
                    Key::PrThreads => st.num_threads,
                    Key::PrHandles => handles,
                    Key::PrPriority => priority_base(st.priority, st.nice),
                    Key::PrWs => st.rss_pages.saturating_mul(page),
                    Key::PrWsPeak => kb(status.vm_hwm),
                    Key::PrWsPrivate => kb(status.rss_anon),
                    Key::PrPrivate => kb(status.rss_anon.saturating_add(status.vm_swap)),
                    Key::PrVirtual => st.vsize,
                    Key::PrVirtualPeak => kb(status.vm_peak),
                    Key::PrPageFile => kb(status.vm_swap),
                    Key::PrFaults => st.minflt.saturating_add(st.majflt),
                    Key::PrIoReadBytes => io.rchar,
                    Key::PrIoWriteBytes => io.wchar,
                    Key::PrIoReadOps => io.syscr,
                    Key::PrIoWriteOps => io.syscw,
                    _ => 0,
                })
                .collect();
            procs.push((pid, st.comm, vals));
        }
        // _Total: sums, except identity fields (0) and the elapsed time (0 s).
        let mut total = vec![0u64; rows.len()];
        for (_, _, vals) in &procs {
            for (t, v) in total.iter_mut().zip(vals) {
                *t = t.saturating_add(*v);
            }
        }
        for (t, r) in total.iter_mut().zip(rows) {
            match r.key {
                Key::PrId | Key::PrParent | Key::PrPriority => *t = 0,
                Key::PrElapsed => *t = now_ft.max(0) as u64,
                _ => {}
            }
        }
        let mut out = Vec::with_capacity(procs.len() + 1);
        for (pid, comm, vals) in procs {
            let values: Vec<Value> = rows
                .iter()
                .zip(vals)
                .map(|(r, v)| store(r.store, v))
                .collect();
            out.push(instance(comm, i32::try_from(pid).unwrap_or(-1), values));
        }
        let total_values = rows
            .iter()
            .zip(total)
            .map(|(r, v)| store(r.store, v))
            .collect();
        out.push(instance("_Total".into(), -1, total_values));
        Ok(build_object(
            def,
            rows,
            Some(now_ft),
            ObjectData::Instances(out),
        ))
    }

    // -- Disks ------------------------------------------------------------------------------

    fn disk_object(def: &ObjDef, rows: &[&Row], disks: Vec<(String, DiskSample)>) -> Object {
        let mut total = DiskSample::default();
        let mut out = Vec::with_capacity(disks.len() + 1);
        for (name, s) in disks {
            total.add(&s);
            out.push(instance(name, -1, values(rows, |k| s.value(k))));
        }
        out.push(instance(
            "_Total".into(),
            -1,
            values(rows, |k| total.value(k)),
        ));
        build_object(def, rows, None, ObjectData::Instances(out))
    }

    fn physical_disk(
        &mut self,
        ctx: &mut Ctx,
        def: &ObjDef,
        rows: &[&Row],
    ) -> Result<Object, SourceError> {
        // Whole disks are the entries of /sys/block; partitions are not there.
        let block_dir = self.sys_dir.join("block");
        let whole: Option<Vec<String>> = fs::read_dir(&block_dir).ok().map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        });
        const VIRTUAL: &[&str] = &["loop", "ram", "zram", "dm-", "md", "sr", "fd"];
        let disks: Vec<(String, DiskSample)> = self
            .diskstats(ctx)?
            .iter()
            .filter(|d| !VIRTUAL.iter().any(|p| d.name.starts_with(p)))
            .filter(|d| whole.as_ref().is_none_or(|w| w.contains(&d.name)))
            .map(|d| (d.name.clone(), DiskSample::from_line(d)))
            .collect();
        Ok(Self::disk_object(def, rows, disks))
    }

    fn logical_disk(
        &mut self,
        ctx: &mut Ctx,
        def: &ObjDef,
        rows: &[&Row],
    ) -> Result<Object, SourceError> {
        let mounts = self.read_proc("self/mountinfo", parse::mountinfo)?;
        let need_space = wants(rows, &[Key::LdFreePct, Key::LdFreePctBase, Key::LdFreeMb]);
        let lines = self.diskstats(ctx)?.to_vec();
        let mut used: Vec<usize> = Vec::new();
        let mut disks: Vec<(String, DiskSample)> = Vec::new();
        for m in &mounts {
            let by_dev = lines
                .iter()
                .position(|d| m.major != 0 && d.major == m.major && d.minor == m.minor);
            let by_name = || {
                let base = m.source.strip_prefix("/dev/")?;
                let base = base.rsplit('/').next()?;
                lines.iter().position(|d| d.name == base)
            };
            let Some(i) = by_dev.or_else(by_name) else {
                continue;
            };
            if used.contains(&i) {
                continue;
            }
            used.push(i);
            let Some(line) = lines.get(i) else { continue };
            let mut s = DiskSample::from_line(line);
            if need_space {
                // A file system whose space cannot be read reports 0 of 0.
                s.space = self.space.usage(&m.mount_point).unwrap_or_default();
            }
            disks.push((m.mount_point.clone(), s));
        }
        Ok(Self::disk_object(def, rows, disks))
    }

    // -- Network Interface --------------------------------------------------------------------

    fn network(&mut self, def: &ObjDef, rows: &[&Row]) -> Result<Object, SourceError> {
        let ifaces = self.read_proc("net/dev", parse::net_dev)?;
        let need_speed = wants(rows, &[Key::NetBandwidth]);
        let mut out = Vec::with_capacity(ifaces.len());
        for n in ifaces {
            let speed = if need_speed {
                let path = self.sys_dir.join("class/net").join(&n.name).join("speed");
                match self.read_parse(&path, parse::single_i64) {
                    Ok(mbps) if mbps > 0 => (mbps as u64).saturating_mul(1_000_000),
                    _ => 0, // unknown speed (virtual interface, link down)
                }
            } else {
                0
            };
            let vals = values(rows, |k| match k {
                Key::NetBytesTotal => n.rx_bytes.saturating_add(n.tx_bytes),
                Key::NetBytesRx => n.rx_bytes,
                Key::NetBytesTx => n.tx_bytes,
                Key::NetPackets => n.rx_packets.saturating_add(n.tx_packets),
                Key::NetPacketsRx => n.rx_packets,
                Key::NetPacketsTx => n.tx_packets,
                Key::NetBandwidth => speed,
                Key::NetRxErrors => n.rx_errs,
                Key::NetTxErrors => n.tx_errs,
                Key::NetRxDiscards => n.rx_drop,
                Key::NetTxDiscards => n.tx_drop,
                _ => 0,
            });
            out.push(instance(n.name, -1, vals));
        }
        Ok(build_object(def, rows, None, ObjectData::Instances(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities() {
        assert_eq!(priority_base(-2, 0), 24);
        assert_eq!(priority_base(0, -20), 13);
        assert_eq!(priority_base(10, -11), 13);
        assert_eq!(priority_base(10, -10), 10);
        assert_eq!(priority_base(20, 0), 8);
        assert_eq!(priority_base(21, 1), 6);
        assert_eq!(priority_base(30, 10), 6);
        assert_eq!(priority_base(31, 11), 4);
        assert_eq!(priority_base(39, 19), 4);
    }

    #[test]
    fn unit_conversions() {
        assert_eq!(cpu_100ns(150, 100, 1), 15_000_000);
        assert_eq!(cpu_100ns(150, 100, 2), 7_500_000);
        assert_eq!(cpu_100ns(3, 300, 1), 100_000);
        assert_eq!(cpu_100ns(u64::MAX, 1, 1), u64::MAX);
        assert_eq!(cpu_100ns(5, 0, 0), 50_000_000);
        assert_eq!(ms_100ns(7, 1), 70_000);
        assert_eq!(ms_100ns(7, 2), 35_000);
        assert_eq!(ms_100ns(u64::MAX, 0), u64::MAX);
    }
}
