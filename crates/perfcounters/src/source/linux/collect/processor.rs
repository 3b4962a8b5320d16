//! The Processor and Processor Information objects: CPU times from `/proc/stat`, interrupts
//! from `/proc/interrupts`, NUMA nodes from sysfs.

use std::fs;

use super::{cpu_100ns, instance, values, wants, Ctx};
use crate::snapshot::{Instance, Object, ObjectData};
use crate::source::linux::defs::{Key, ObjDef, Row};
use crate::source::linux::parse::{self, CpuTimes};
use crate::source::linux::{build_object, LinuxSource};
use crate::source::SourceError;

/// One CPU or an aggregate of `count` CPUs.
struct CpuSample {
    t: CpuTimes,
    count: u64,
    interrupts: u64,
}

impl LinuxSource {
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

    pub(super) fn processor(
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

    pub(super) fn processor_information(
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
}
