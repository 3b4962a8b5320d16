//! The Memory object: `/proc/meminfo` and `/proc/vmstat`.

use super::{wants, Ctx};
use crate::snapshot::{Object, ObjectData};
use crate::source::linux::defs::{Key, ObjDef, Row};
use crate::source::linux::parse::{self, MemInfo};
use crate::source::linux::{build_object, fit_fraction, store, LinuxSource};
use crate::source::SourceError;

impl LinuxSource {
    pub(super) fn memory(
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
}
