//! Cost of collecting the full Process object from procfs, per process, compared in the same run
//! with the `procfs` crate reading the same files and extracting the same fields, and with the floor
//! of the system calls: the same files read with plain `read` into a reused buffer, no parsing.
//!
//! Run: `cargo bench -p perfcounters --bench process -- --warm-up-time 1 --measurement-time 5`
//!
//! Throughput is set to the number of processes counted when the benchmark starts, so criterion's
//! "thrpt" line is processes per second and the time divided by that count is the per-process cost.
//! Processes that start or exit during the run shift the count slightly; both sides see the same
//! machine at the same time.

#[cfg(target_os = "linux")]
mod linux {
    use std::fs::File;
    use std::hint::black_box;
    use std::io::Read;

    use criterion::{Criterion, Throughput};
    use perfcounters::source::linux::LinuxSource;
    use perfcounters::source::{Request, Source};
    use procfs::Current;

    /// The Process counters that need only `/proc/[pid]/stat` (and `/proc/uptime` once).
    const STAT_COUNTERS: &[&str] = &[
        "% Processor Time",
        "% User Time",
        "% Privileged Time",
        "Elapsed Time",
        "ID Process",
        "Creating Process ID",
        "Thread Count",
        "Priority Base",
        "Working Set",
        "Virtual Bytes",
        "Page Faults/sec",
    ];

    /// What the source extracts for each process of the full object: the `stat` fields, the
    /// `status` sizes (kB), the `io` counts and the number of open descriptors.
    // The fields are only handed to `black_box`, never read back.
    #[allow(dead_code)]
    #[derive(Default)]
    struct Fields {
        pid: i32,
        comm: String,
        ppid: i32,
        minflt: u64,
        majflt: u64,
        utime: u64,
        stime: u64,
        priority: i64,
        nice: i64,
        num_threads: i64,
        starttime: u64,
        vsize: u64,
        rss: u64,
        vm_peak: u64,
        vm_hwm: u64,
        rss_anon: u64,
        vm_swap: u64,
        rchar: u64,
        wchar: u64,
        syscr: u64,
        syscw: u64,
        handles: usize,
    }

    /// The same per-process work with the `procfs` crate: `stat`, and for the full object also
    /// `status`, `io` and the `fd` directory count. The boot time comes from `/proc/uptime` once, as
    /// in the source. A process that exits mid-way is skipped; an unreadable `io` or `fd` counts 0.
    fn procfs_collect(full: bool) -> Vec<Fields> {
        let uptime = procfs::Uptime::current().map(|u| u.uptime).unwrap_or(0.0);
        black_box(uptime);
        let Ok(all) = procfs::process::all_processes() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for p in all.flatten() {
            let Ok(st) = p.stat() else { continue };
            let mut f = Fields {
                pid: st.pid,
                comm: st.comm,
                ppid: st.ppid,
                minflt: st.minflt,
                majflt: st.majflt,
                utime: st.utime,
                stime: st.stime,
                priority: st.priority,
                nice: st.nice,
                num_threads: st.num_threads,
                starttime: st.starttime,
                vsize: st.vsize,
                rss: st.rss,
                ..Fields::default()
            };
            if full {
                let Ok(status) = p.status() else { continue };
                f.vm_peak = status.vmpeak.unwrap_or(0);
                f.vm_hwm = status.vmhwm.unwrap_or(0);
                f.rss_anon = status.rssanon.unwrap_or(0);
                f.vm_swap = status.vmswap.unwrap_or(0);
                if let Ok(io) = p.io() {
                    f.rchar = io.rchar;
                    f.wchar = io.wchar;
                    f.syscr = io.syscr;
                    f.syscw = io.syscw;
                }
                f.handles = p.fd_count().unwrap_or(0);
            }
            out.push(f);
        }
        out
    }

    /// The system calls of a collection and nothing else: list `/proc`, read `/proc/uptime` once,
    /// then per process read `stat` (and for the full object `status` and `io`) with one `open`,
    /// one `read` into a reused 4 KiB buffer and one `close` each, and `statx` the `fd` directory
    /// (its size is the descriptor count). Returns the bytes read, so nothing is optimised away.
    fn syscall_floor(full: bool, buf: &mut [u8], path: &mut String) -> usize {
        let read = |path: &str, buf: &mut [u8]| -> Option<usize> {
            let mut f = File::open(path).ok()?;
            f.read(buf).ok()
        };
        let mut total = read("/proc/uptime", buf).unwrap_or(0);
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return total;
        };
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            path.clear();
            path.push_str("/proc/");
            path.push_str(pid);
            let base = path.len();
            path.push_str("/stat");
            total += read(path, buf).unwrap_or(0);
            if full {
                for file in ["/status", "/io"] {
                    path.truncate(base);
                    path.push_str(file);
                    total += read(path, buf).unwrap_or(0);
                }
                path.truncate(base);
                path.push_str("/fd");
                total += std::fs::metadata(&*path).map_or(0, |m| m.len() as usize);
            }
        }
        total
    }

    fn process_count() -> u64 {
        std::fs::read_dir("/proc")
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter(|e| {
                        let n = e.file_name();
                        !n.is_empty() && n.as_encoded_bytes().iter().all(u8::is_ascii_digit)
                    })
                    .count() as u64
            })
            .unwrap_or(1)
            .max(1)
    }

    pub fn process(c: &mut Criterion) {
        let n = process_count();
        eprintln!("processes at start: {n}");
        let full = Request::new().all_of("Process");
        let stat_only = Request::new().object("Process", STAT_COUNTERS);
        let mut src = LinuxSource::new();
        // Sanity: both sides see about the same processes and the source reads every counter.
        let snap = src.collect(&full).expect("collect Process");
        let ours = snap.objects.first().map_or(0, |o| o.instances().len());
        let theirs = procfs_collect(true).len();
        eprintln!(
            "instances: perfcounters {} (+ _Total), procfs {theirs}",
            ours.saturating_sub(1)
        );

        let mut g = c.benchmark_group("process");
        g.throughput(Throughput::Elements(n));
        g.bench_function("perfcounters_full", |b| {
            b.iter(|| black_box(src.collect(black_box(&full)).expect("collect")))
        });
        g.bench_function("procfs_full", |b| {
            b.iter(|| black_box(procfs_collect(true)))
        });
        let mut buf = vec![0u8; 4096];
        let mut path = String::new();
        g.bench_function("syscall_floor_full", |b| {
            b.iter(|| black_box(syscall_floor(true, &mut buf, &mut path)))
        });
        g.bench_function("perfcounters_stat_only", |b| {
            b.iter(|| black_box(src.collect(black_box(&stat_only)).expect("collect")))
        });
        g.bench_function("procfs_stat_only", |b| {
            b.iter(|| black_box(procfs_collect(false)))
        });
        g.bench_function("syscall_floor_stat_only", |b| {
            b.iter(|| black_box(syscall_floor(false, &mut buf, &mut path)))
        });
        g.finish();
    }
}

#[cfg(target_os = "linux")]
criterion::criterion_group!(benches, linux::process);
#[cfg(target_os = "linux")]
criterion::criterion_main!(benches);

#[cfg(not(target_os = "linux"))]
fn main() {}
