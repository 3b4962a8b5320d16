//! Live cross-checks of the Linux source on the running system.
//!
//! Each test drives a [`Query`] with collections from [`LinuxSource::new()`] over a real interval and
//! compares the values with an independent reading of the same interval: the kernel files read
//! directly by the test (`/proc/stat`, `/proc/[pid]/stat`, `/proc/[pid]/status`, `/proc/meminfo`,
//! `/sys/block/[dev]/stat`), taken right before and right after each collection so that the library's
//! raw counters must lie between the two, and, when sysstat is installed, `mpstat`, `pidstat` and
//! `iostat` run over the same interval. Every test prints which references it used.
//!
//! The tests run one at a time (a shared lock), because each one loads the machine in a way that the
//! others measure.
#![cfg(target_os = "linux")]

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use perfcounters::query::{CounterValue, Query};
use perfcounters::source::linux::LinuxSource;
use perfcounters::source::{Request, Source};
use perfcounters::{FormatOptions, Snapshot};

const MIB: u64 = 1 << 20;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

// -- the library side ------------------------------------------------------------------------

/// A query over the live source, collected on demand.
struct Live {
    source: LinuxSource,
    query: Query,
    request: Request,
    paths: Vec<String>,
}

/// One collection: the snapshot and the query's values, in the order the paths were added.
struct Sample {
    snapshot: Snapshot,
    values: Vec<CounterValue>,
}

impl Sample {
    /// Seconds between two samples on the snapshot clock.
    fn seconds_since(&self, earlier: &Sample) -> f64 {
        (self.snapshot.perf_time - earlier.snapshot.perf_time) as f64
            / self.snapshot.perf_freq as f64
    }

    /// The computed value of path `i`.
    fn value(&self, i: usize) -> f64 {
        let v = &self.values[i];
        v.value()
            .unwrap_or_else(|| panic!("path {i}: no value, status {:?}", v.status()))
    }

    /// The raw N of path `i`.
    fn raw(&self, i: usize) -> i64 {
        self.values[i]
            .raw()
            .unwrap_or_else(|| panic!("path {i}: no raw sample"))
            .first
    }
}

impl Live {
    /// A query over `paths` (no wildcards: one column per path).
    fn new(paths: &[String]) -> Self {
        let mut query = Query::new(FormatOptions::typeperf());
        for p in paths {
            query.add(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
        let mut source = LinuxSource::new();
        let request = query.request(&source.catalog().expect("catalog"));
        Live {
            source,
            query,
            request,
            paths: paths.to_vec(),
        }
    }

    fn sample(&mut self) -> Sample {
        let snapshot = self.source.collect(&self.request).expect("collect");
        let values = self.query.update(&snapshot);
        let errors: Vec<String> = self.query.errors().map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(values.len(), self.paths.len(), "{:?}", self.paths);
        Sample { snapshot, values }
    }
}

// -- independent readings --------------------------------------------------------------------

fn read(path: impl AsRef<Path>) -> String {
    let path = path.as_ref();
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn numbers(text: &str) -> Vec<u64> {
    text.split_whitespace()
        .map(|t| t.parse().unwrap_or_else(|_| panic!("not a number: {t:?}")))
        .collect()
}

/// The highest CPU id in /proc/stat.
fn last_cpu() -> u32 {
    read("/proc/stat")
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .strip_prefix("cpu")?
                .parse()
                .ok()
        })
        .max()
        .expect("a cpuN line in /proc/stat")
}

/// `(busy, idle + iowait, total)` jiffies of CPU `cpu` from /proc/stat; total is the sum of user,
/// nice, system, idle, iowait, irq, softirq and steal (guest time is already part of user).
fn cpu_jiffies(cpu: u32) -> (u64, u64, u64) {
    let label = format!("cpu{cpu}");
    let text = read("/proc/stat");
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label.as_str()))
        .unwrap_or_else(|| panic!("no {label} line in /proc/stat"));
    let f = numbers(line.split_once(' ').expect("fields").1);
    let total: u64 = f.iter().take(8).sum();
    let idle = f[3] + f.get(4).copied().unwrap_or(0);
    (total - idle, idle, total)
}

/// The fields of /proc/[pid]/stat after the command name: index 0 is the state (field 3).
fn pid_stat(pid: u32) -> Option<Vec<String>> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// utime + stime of a process, in jiffies.
fn pid_cpu_jiffies(pid: u32) -> u64 {
    let f = pid_stat(pid).unwrap_or_else(|| panic!("/proc/{pid}/stat"));
    // Fields 14 and 15 of the file are at 11 and 12 after the command name.
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// A `Key:   value kB` line of /proc/meminfo or /proc/[pid]/status, in bytes (or the bare number).
fn kv_bytes(text: &str, key: &str) -> u64 {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {key} line"));
    let mut it = line.split_whitespace();
    let n: u64 = it.next().expect("number").parse().expect("number");
    match it.next() {
        Some("kB") => n * 1024,
        _ => n,
    }
}

/// Polls until process `pid` sleeps (state S): a sysstat tool has taken its first reading and waits
/// for the end of its interval. Then leaves a short margin.
fn wait_until_sleeping(pid: u32) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        match pid_stat(pid) {
            Some(f) if f.first().map(String::as_str) == Some("S") => break,
            None => break,
            _ => thread::sleep(Duration::from_millis(5)),
        }
    }
    thread::sleep(Duration::from_millis(20));
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Starts a sysstat tool with stable output (C locale, 24-hour times, no colours).
fn sysstat(tool: &str, args: &[&str]) -> Child {
    Command::new(tool)
        .args(args)
        .env("LC_ALL", "C")
        .env("S_TIME_FORMAT", "ISO")
        .env("S_COLORS", "never")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn finish(child: Child) -> String {
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{:?}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `Average:` row of mpstat or pidstat output as column → value, the columns named by the last
/// header line (the one with `want`) before it. The first token of both lines (time, `Average:`) is
/// dropped.
fn average_row(output: &str, want: &str) -> Vec<(String, String)> {
    let mut header: Option<Vec<&str>> = None;
    for line in output.lines() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.contains(&want) && !line.starts_with("Average:") {
            header = Some(tokens[1..].to_vec());
        } else if line.starts_with("Average:") && !tokens.contains(&want) {
            let header = header
                .as_ref()
                .unwrap_or_else(|| panic!("no header: {output}"));
            return header
                .iter()
                .zip(&tokens[1..])
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect();
        }
    }
    panic!("no Average row in:\n{output}");
}

fn column(row: &[(String, String)], name: &str) -> f64 {
    row.iter()
        .find(|(h, _)| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {row:?}"))
        .1
        .parse()
        .expect("number")
}

// -- helper processes ------------------------------------------------------------------------

/// A child process that lives until its stdin is closed. Dropping it closes stdin, waits for it,
/// and ends the process `extra` (a grandchild), checked by its command name, if it is still there.
struct Helper {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    extra: Option<(u32, String)>,
}

impl Helper {
    fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?}: {e}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Helper {
            child,
            stdin,
            lines,
            extra: None,
        }
    }

    /// What follows `marker` in the first output line that contains it (the test harness may have
    /// printed on the same line before it). Gives up after 60 s.
    fn line_after(&mut self, marker: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no line with {marker:?} from the helper: {e}"));
            if let Some((_, rest)) = line.split_once(marker) {
                return rest.trim_end().to_string();
            }
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
        if let Some((pid, name)) = &self.extra {
            let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim_end() == name {
                let _ = Command::new("kill").arg(pid.to_string()).status();
            }
        }
    }
}

/// A unique command name (at most 15 bytes, the kernel's limit).
fn comm_name(tag: &str) -> String {
    let mut name = format!("pc{tag}{}", std::process::id());
    name.truncate(15);
    name
}

const HELPER_ENV: &str = "PERFCOUNTERS_LIVE_HELPER";
const HELPER_READY: &str = "live-helper-ready ";
const HELPER_BYTES: usize = 64 << 20;
const HELPER_THREADS: usize = 5;

/// Run by `process_working_set_and_threads` as a separate process (this test binary again): names
/// itself after `$PERFCOUNTERS_LIVE_HELPER`, fills 64 MiB, starts 5 threads, prints its PID and its
/// expected thread count, and waits for its stdin to close.
#[test]
#[ignore = "helper process, started by process_working_set_and_threads"]
fn live_helper_process() {
    let Ok(name) = std::env::var(HELPER_ENV) else {
        println!("live_helper_process only runs as the helper of process_working_set_and_threads");
        return;
    };
    fs::write("/proc/self/comm", name).expect("set the command name");
    let memory = std::hint::black_box(vec![0x5a_u8; HELPER_BYTES]);
    let before = fs::read_dir("/proc/self/task").expect("task list").count();
    for _ in 0..HELPER_THREADS {
        thread::spawn(|| loop {
            thread::park();
        });
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{HELPER_READY}{} {}",
        std::process::id(),
        before + HELPER_THREADS
    )
    .expect("stdout");
    out.flush().expect("stdout");
    drop(out);
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    std::hint::black_box(&memory);
}

// -- 1. processor and process CPU time -------------------------------------------------------

/// Asserts that `jiffies` (the `what` jiffies we measured) lies within `bounds`, both ends included.
fn assert_within(what: &str, jiffies: f64, bounds: (u64, u64)) {
    assert!(
        jiffies >= bounds.0 as f64 && jiffies <= bounds.1 as f64,
        "{what} jiffies {jiffies} not in {bounds:?}"
    );
}

/// What the test and the tools saw over one interval.
struct CpuRound {
    ours_cpu: f64,
    ours_proc: f64,
    ours_pid: f64,
    /// Raw deltas of the library in jiffies: idle time of the CPU, CPU time of the process.
    ours_idle_jiffies: f64,
    ours_proc_jiffies: f64,
    /// The same deltas read directly: (inner, outer) bounds.
    idle_bounds: (u64, u64),
    proc_bounds: (u64, u64),
    /// sysstat-style busy percentage of the CPU, and the process's percentage of wall time.
    direct_cpu: f64,
    direct_proc: f64,
    mpstat_busy: Option<f64>,
    pidstat_cpu: Option<f64>,
}

fn cpu_round(live: &mut Live, cpu: u32, pid: u32, hz: u64, tools: bool) -> CpuRound {
    let tools = if tools {
        let mp = sysstat("mpstat", &["-P", &cpu.to_string(), "1", "1"]);
        let ps = sysstat("pidstat", &["-u", "-p", &pid.to_string(), "1", "1"]);
        wait_until_sleeping(mp.id());
        wait_until_sleeping(ps.id());
        Some((mp, ps))
    } else {
        None
    };
    let a = (cpu_jiffies(cpu), pid_cpu_jiffies(pid));
    let s0 = live.sample();
    let b = (cpu_jiffies(cpu), pid_cpu_jiffies(pid));
    let t0 = Instant::now();
    let (mpstat_busy, pidstat_cpu) = match tools {
        Some((mp, ps)) => {
            let mp = finish(mp);
            let ps = finish(ps);
            let mp = average_row(&mp, "%idle");
            let busy = 100.0 - column(&mp, "%idle") - column(&mp, "%iowait");
            let ps = average_row(&ps, "%CPU");
            (Some(busy), Some(column(&ps, "%CPU")))
        }
        None => (None, None),
    };
    if let Some(rest) = Duration::from_secs(1).checked_sub(t0.elapsed()) {
        thread::sleep(rest);
    }
    let c = (cpu_jiffies(cpu), pid_cpu_jiffies(pid));
    let s1 = live.sample();
    let d = (cpu_jiffies(cpu), pid_cpu_jiffies(pid));
    let wall = t0.elapsed().as_secs_f64();

    // 100 ns units per jiffy.
    let unit = 1e7 / hz as f64;
    CpuRound {
        ours_cpu: s1.value(0),
        ours_proc: s1.value(1),
        ours_pid: s1.value(2),
        ours_idle_jiffies: (s1.raw(0) - s0.raw(0)) as f64 / unit,
        ours_proc_jiffies: (s1.raw(1) - s0.raw(1)) as f64 / unit,
        idle_bounds: (c.0 .1 - b.0 .1, d.0 .1 - a.0 .1),
        proc_bounds: (c.1 - b.1, d.1 - a.1),
        direct_cpu: 100.0 * (d.0 .0 - b.0 .0) as f64 / (d.0 .2 - b.0 .2).max(1) as f64,
        direct_proc: 100.0 * (d.1 - b.1) as f64 / hz as f64 / wall,
        mpstat_busy,
        pidstat_cpu,
    }
}

/// `\Processor(N)\% Processor Time` and `\Process(name)\% Processor Time` of a busy loop pinned to
/// the last CPU, against /proc/stat and /proc/[pid]/stat read at the same instants, and against
/// mpstat and pidstat over the same interval when installed.
#[test]
fn busy_loop_processor_and_process_time() {
    let _serial = serial();
    if Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        println!(
            "SKIPPED: taskset (util-linux) is not installed, so the busy loop cannot be pinned"
        );
        return;
    }
    let cpu = last_cpu();
    let name = comm_name("busy");
    // The loop runs in a subshell that names itself; the parent shell prints its PID and ends it
    // when stdin closes (also when this test process dies).
    let script = format!(
        "( printf %s {name} > /proc/self/comm; while :; do :; done ) & echo \"pid $!\"; read x; kill $!"
    );
    let mut command = Command::new("taskset");
    command.args(["-c", &cpu.to_string(), "sh", "-c", &script]);
    let mut busy = Helper::spawn(command);
    let pid: u32 = busy.line_after("pid ").parse().expect("pid");
    busy.extra = Some((pid, name.clone()));
    let start = Instant::now();
    while fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim_end()
        != name
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the busy loop did not start"
        );
        thread::sleep(Duration::from_millis(10));
    }

    let tools = have("mpstat") && have("pidstat");
    println!(
        "references: /proc/stat and /proc/{pid}/stat read directly{}",
        if tools {
            "; mpstat and pidstat (sysstat)"
        } else {
            " (mpstat/pidstat not installed)"
        }
    );
    let mut live = Live::new(&[
        format!(r"\Processor({cpu})\% Processor Time"),
        format!(r"\Process({name})\% Processor Time"),
        format!(r"\Process({name})\ID Process"),
    ]);
    let hz = live.source.clock_ticks();
    live.sample();

    let mut round = cpu_round(&mut live, cpu, pid, hz, tools);
    if round.direct_cpu < 90.0 || round.direct_proc < 90.0 {
        println!(
            "interference: CPU {cpu} {:.1} % busy, the loop got {:.1} % (read directly); measuring again",
            round.direct_cpu, round.direct_proc
        );
        round = cpu_round(&mut live, cpu, pid, hz, tools);
    }
    let r = &round;
    println!(
        "Processor({cpu}): ours {:.2} %, /proc/stat {:.2} %, mpstat {:?}",
        r.ours_cpu, r.direct_cpu, r.mpstat_busy
    );
    println!(
        "Process({name}): ours {:.2} %, /proc/{pid}/stat {:.2} %, pidstat {:?}",
        r.ours_proc, r.direct_proc, r.pidstat_cpu
    );

    assert_eq!(r.ours_pid, f64::from(pid));
    // The raw deltas lie between the deltas read just inside and just outside the interval.
    assert_within("idle", r.ours_idle_jiffies, r.idle_bounds);
    assert_within("process", r.ours_proc_jiffies, r.proc_bounds);
    // A CPU with a runnable loop pinned to it never idles, whatever else the machine does.
    assert!(
        (90.0..=105.0).contains(&r.ours_cpu),
        "Processor({cpu}) {}",
        r.ours_cpu
    );
    assert!((r.ours_cpu - r.direct_cpu).abs() <= 5.0);
    assert!((r.ours_proc - r.direct_proc).abs() <= 5.0);
    if let Some(busy) = r.mpstat_busy {
        assert!((r.ours_cpu - busy).abs() <= 10.0, "mpstat {busy}");
    }
    if let Some(p) = r.pidstat_cpu {
        assert!((r.ours_proc - p).abs() <= 10.0, "pidstat {p}");
    }
    if r.direct_proc >= 90.0 {
        assert!(r.ours_proc >= 85.0, "{}", r.ours_proc);
    } else {
        // Other work shared the CPU in both rounds; the loop still ran for a good part of it.
        println!(
            "the CPU was shared in both rounds: the loop's share is compared with the direct readings, not with 100 %"
        );
        assert!(r.ours_proc > 10.0, "{}", r.ours_proc);
    }
}

// -- 2. available memory ---------------------------------------------------------------------

/// `\Memory\Available Bytes` against MemAvailable read from /proc/meminfo just before and just after
/// the collection.
#[test]
fn available_bytes_match_meminfo() {
    let _serial = serial();
    println!("reference: /proc/meminfo MemAvailable read directly");
    let mut live = Live::new(&[
        r"\Memory\Available Bytes".to_string(),
        r"\Memory\Available MBytes".to_string(),
    ]);
    // Memory moves between the readings; a few MiB is allowed outside their range.
    let slack = 8 * MIB;
    for attempt in 0..2 {
        let before = kv_bytes(&read("/proc/meminfo"), "MemAvailable");
        let s = live.sample();
        let after = kv_bytes(&read("/proc/meminfo"), "MemAvailable");
        let ours = s.value(0);
        println!("Available Bytes: ours {ours}, MemAvailable {before} .. {after}");
        assert_eq!(s.value(1), (s.raw(0) as u64 / MIB) as f64);
        assert_eq!(ours, s.raw(0) as f64);
        if before.abs_diff(after) > 4 * slack && attempt == 0 {
            println!(
                "memory moved by more than {} MiB; measuring again",
                4 * slack / MIB
            );
            continue;
        }
        let lo = before.min(after).saturating_sub(slack) as f64;
        let hi = (before.max(after) + slack) as f64;
        assert!(ours >= lo && ours <= hi, "{ours} not in {lo}..{hi}");
        return;
    }
}

// -- 3. a process's memory and threads -------------------------------------------------------

/// `\Process(name)\Working Set`, `Working Set - Private`, `Thread Count` and `ID Process` of a child
/// that filled 64 MiB and started 5 threads, against /proc/[pid]/status read around the collection.
#[test]
fn process_working_set_and_threads() {
    let _serial = serial();
    let name = comm_name("mem");
    // The helper's name as the test harness knows it: its path in the test binary's crate.
    let (_crate, module) = module_path!()
        .split_once("::")
        .expect("a module of the test crate");
    let helper_test = format!("{module}::live_helper_process");
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command
        .args([
            "--exact",
            &helper_test,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_ENV, &name);
    let mut helper = Helper::spawn(command);
    let ready = helper.line_after(HELPER_READY);
    let (pid, threads) = ready.split_once(' ').expect("pid and threads");
    let pid: u32 = pid.parse().expect("pid");
    let threads: u64 = threads.parse().expect("threads");
    println!("reference: /proc/{pid}/status read directly; helper expects {threads} threads");

    let mut live = Live::new(&[
        format!(r"\Process({name})\Working Set"),
        format!(r"\Process({name})\Working Set - Private"),
        format!(r"\Process({name})\Thread Count"),
        format!(r"\Process({name})\ID Process"),
    ]);
    let status = |key| kv_bytes(&read(format!("/proc/{pid}/status")), key);
    let (rss0, anon0) = (status("VmRSS"), status("RssAnon"));
    let s = live.sample();
    let (rss1, anon1) = (status("VmRSS"), status("RssAnon"));
    let status_threads = status("Threads");
    let (ws, private, count, id) = (s.value(0), s.value(1), s.value(2), s.value(3));
    println!(
        "Working Set {ws} (VmRSS {rss0}, {rss1}); Working Set - Private {private} (RssAnon {anon0}, \
         {anon1}); Thread Count {count} (Threads {status_threads}); ID Process {id}"
    );

    assert_eq!(id, f64::from(pid));
    assert_eq!(count, threads as f64);
    assert_eq!(status_threads, threads);
    let bytes = HELPER_BYTES as f64;
    assert!(ws >= bytes, "{ws}");
    assert!(private >= bytes, "{private}");
    // rss in /proc/[pid]/stat and VmRSS are the same kernel counters; the helper is idle, so they
    // should agree to within a little asynchronous accounting.
    let slack = 4 * MIB;
    let within = |v: f64, a: u64, b: u64| {
        v >= a.min(b).saturating_sub(slack) as f64 && v <= (a.max(b) + slack) as f64
    };
    assert!(
        within(ws, rss0, rss1),
        "Working Set {ws}, VmRSS {rss0} {rss1}"
    );
    assert!(
        within(private, anon0, anon1),
        "Working Set - Private {private}, RssAnon {anon0} {anon1}"
    );
}

// -- 4. disk write bytes ---------------------------------------------------------------------

/// Decodes the octal escapes (`\040`) of a mountinfo field.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).and_then(|d| {
            let s = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(s, 8).ok()
        });
        match (b[i], octal) {
            (b'\\', Some(v)) => {
                out.push(v);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The whole disk (a /sys/block name) holding the file system of `path`, found through
/// /proc/self/mountinfo, or why there is none.
fn backing_disk(path: &Path) -> Result<String, String> {
    let path = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mountinfo = read("/proc/self/mountinfo");
    let mut best: Option<(usize, String, String, String)> = None;
    for line in mountinfo.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|t| *t == "-") else {
            continue;
        };
        let (Some(dev), Some(mount), Some(fstype), Some(source)) =
            (f.get(2), f.get(4), f.get(sep + 1), f.get(sep + 2))
        else {
            continue;
        };
        let mount = unescape(mount);
        if path.starts_with(&mount) && best.as_ref().is_none_or(|b| mount.len() >= b.0) {
            best = Some((
                mount.len(),
                dev.to_string(),
                fstype.to_string(),
                unescape(source),
            ));
        }
    }
    let (_, dev, fstype, source) = best.ok_or("no mount found")?;
    let mut sys = PathBuf::from(format!("/sys/dev/block/{dev}"));
    if !sys.exists() {
        // Devices numbered 0:x (btrfs and the like): try the /dev source name.
        match source.strip_prefix("/dev/") {
            Some(n) if Path::new("/sys/class/block").join(n).exists() => {
                sys = Path::new("/sys/class/block").join(n);
            }
            _ => {
                return Err(format!(
                    "{} is on a {fstype} file system ({source}, device {dev}) with no block device",
                    path.display()
                ))
            }
        }
    }
    let mut sys = sys
        .canonicalize()
        .map_err(|e| format!("{}: {e}", sys.display()))?;
    if sys.join("partition").exists() {
        sys.pop();
    }
    let disk = sys
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("no device name")?
        .to_string();
    let excluded = ["loop", "ram", "zram", "dm-", "md", "sr", "fd"];
    if excluded.iter().any(|p| disk.starts_with(p)) {
        return Err(format!(
            "{} is on {disk}, a stacked or virtual device that PhysicalDisk leaves out",
            path.display()
        ));
    }
    Ok(disk)
}

/// Sectors written, from /sys/block/[disk]/stat (field 7).
fn sectors_written(disk: &str) -> u64 {
    numbers(&read(format!("/sys/block/{disk}/stat")))[6]
}

/// `\PhysicalDisk(disk)\Disk Write Bytes/sec` over an interval in which the test writes and fsyncs
/// 32 MiB, against /sys/block/[disk]/stat read just inside and just outside the interval, and
/// against `iostat` over an interval containing the write when installed.
#[test]
fn disk_write_bytes_after_fsync() {
    let _serial = serial();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    fs::create_dir_all(&dir).expect("tmp dir");
    let disk = match backing_disk(&dir) {
        Ok(d) => d,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let iostat = have("iostat");
    println!(
        "disk {disk} holds {}; references: /sys/block/{disk}/stat read directly{}",
        dir.display(),
        if iostat {
            "; iostat (sysstat)"
        } else {
            " (iostat not installed)"
        }
    );
    let size = 32 * MIB;
    let file = dir.join(format!("linux_live_{}.bin", std::process::id()));
    let mut live = Live::new(&[
        format!(r"\PhysicalDisk({disk})\Disk Write Bytes/sec"),
        format!(r"\PhysicalDisk({disk})\Disk Writes/sec"),
    ]);
    live.sample();

    let io = iostat.then(|| {
        let child = sysstat("iostat", &["-d", "-k", "-y", &disk, "3", "1"]);
        wait_until_sleeping(child.id());
        child
    });
    let a = sectors_written(&disk);
    let s0 = live.sample();
    let b = sectors_written(&disk);
    {
        let mut f = fs::File::create(&file).expect("create");
        let chunk = vec![0xa5_u8; MIB as usize];
        for _ in 0..size / MIB {
            f.write_all(&chunk).expect("write");
        }
        f.sync_all().expect("fsync");
    }
    let c = sectors_written(&disk);
    let s1 = live.sample();
    let d = sectors_written(&disk);
    let _ = fs::remove_file(&file);

    let ours = (s1.raw(0) - s0.raw(0)) as u64;
    let seconds = s1.seconds_since(&s0);
    let rate = s1.value(0);
    println!(
        "{disk}: ours {ours} bytes in {seconds:.3} s ({rate:.0} B/s, {:.1} writes/s); \
         /sys/block/{disk}/stat {} .. {} bytes",
        s1.value(1),
        (c - b) * 512,
        (d - a) * 512
    );
    assert!(ours >= size, "{ours}");
    assert!(ours >= (c - b) * 512 && ours <= (d - a) * 512);
    assert!((rate * seconds - ours as f64).abs() <= ours as f64 * 1e-6);
    assert!(s1.value(1) > 0.0);

    if let Some(child) = io {
        let mut child = child;
        let still_running = child.try_wait().expect("try_wait").is_none();
        let out = finish(child);
        if still_running {
            let mut header: Option<Vec<&str>> = None;
            let mut kb = None;
            for line in out.lines() {
                let t: Vec<&str> = line.split_whitespace().collect();
                if t.first() == Some(&"Device") {
                    header = Some(t);
                } else if t.first() == Some(&disk.as_str()) {
                    let h = header.as_ref().expect("iostat header");
                    let i = h.iter().position(|c| *c == "kB_wrtn").expect("kB_wrtn");
                    kb = t.get(i).and_then(|v| v.parse::<f64>().ok());
                }
            }
            let kb = kb.unwrap_or_else(|| panic!("no {disk} row in iostat output:\n{out}"));
            println!("iostat: {kb} kB written in its 3 s interval");
            assert!(kb >= (size / 1024) as f64, "{kb}");
        } else {
            println!("iostat's interval ended before the write finished: not compared");
        }
    }
}
