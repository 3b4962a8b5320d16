//! The Process object: one instance per `/proc/[pid]`, from its `stat`, `status`, `io` and `fd`.

use super::{cpu_100ns, instance, wants, Ctx};
use crate::snapshot::{Object, ObjectData, Value};
use crate::source::linux::defs::{Key, ObjDef, Row};
use crate::source::linux::parse::{self, ProcIo, ProcStat, ProcStatus};
use crate::source::linux::{build_object, store, vanished, LinuxSource};
use crate::source::SourceError;

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
    fn pid_parse_error(&self, pid: u32, file: &str, e: parse::ParseError) -> SourceError {
        let path = self.proc_dir.join(pid.to_string()).join(file);
        crate::source::linux::parse_error(&path, e)
    }

    pub(super) fn process(
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
}
