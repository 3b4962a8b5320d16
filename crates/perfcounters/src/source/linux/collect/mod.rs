//! Per-object collectors: read the needed files (each at most once per collection) and turn them
//! into raw values.

use std::fs;

use super::defs::{self, Key, ObjDef, Row};
use super::parse::{self, DiskLine, Stat};
use super::{store, ClockReading, LinuxSource};
use crate::snapshot::{Instance, Object, Value};
use crate::source::SourceError;

mod disk;
mod memory;
mod network;
mod process;
mod processor;
mod system;

/// 100 ns units per second.
const UNITS_100NS: u128 = crate::snapshot::FREQ_100NS as u128;
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
    Instance::new(raw_name, values).with_unique_id(unique_id)
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
