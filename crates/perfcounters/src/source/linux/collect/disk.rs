//! The PhysicalDisk and LogicalDisk objects: `/proc/diskstats`, mounts and file-system space.

use std::fs;

use super::{instance, ms_100ns, values, wants, Ctx, SECTOR};
use crate::snapshot::{Object, ObjectData};
use crate::source::linux::defs::{Key, ObjDef, Row};
use crate::source::linux::parse::{self, DiskLine};
use crate::source::linux::{build_object, fit_fraction, FsUsage, LinuxSource};
use crate::source::SourceError;

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

impl LinuxSource {
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

    pub(super) fn physical_disk(
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

    pub(super) fn logical_disk(
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
}
