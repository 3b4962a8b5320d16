//! The System object: `/proc/stat`, `/proc/uptime`, `/proc/loadavg` and the process count.

use super::{values, wants, Ctx};
use crate::snapshot::{Object, ObjectData};
use crate::source::linux::defs::{Key, ObjDef, Row};
use crate::source::linux::parse;
use crate::source::linux::{build_object, LinuxSource};
use crate::source::SourceError;

impl LinuxSource {
    pub(super) fn system(
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
}
