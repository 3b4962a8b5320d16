//! Hand-written parsers for the procfs/sysfs files the Linux source reads.
//!
//! They scan bytes in place (no per-field allocation, no regex) and return small structs. Every
//! parser is total: malformed input gives a [`ParseError`] with a 1-based line number and a message,
//! never a panic.

/// A problem in a file: the 1-based line (0 = the file as a whole) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub line: usize,
    pub message: String,
}

pub(crate) type PResult<T> = Result<T, ParseError>;

fn err<T>(line: usize, message: impl Into<String>) -> PResult<T> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

/// Lines with their 1-based numbers.
fn lines(buf: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    buf.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
}

/// ASCII-whitespace separated tokens.
fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
}

/// A decimal `u64` (no sign, no spaces); `None` on anything else or on overflow.
pub(crate) fn parse_u64(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in tok {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

/// A decimal `i64` with an optional leading `-`.
pub(crate) fn parse_i64(tok: &[u8]) -> Option<i64> {
    match tok.split_first() {
        Some((b'-', rest)) => {
            let v = parse_u64(rest)?;
            if v > i64::MAX as u64 + 1 {
                None
            } else {
                Some(0i64.wrapping_sub_unsigned(v))
            }
        }
        _ => i64::try_from(parse_u64(tok)?).ok(),
    }
}

fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(40).collect();
        format!("{cut}…")
    } else {
        s.into_owned()
    }
}

/// Parses a number; the error names the token and the key it follows (formatted only on error).
fn number(line: usize, tok: &[u8], after: &[u8]) -> PResult<u64> {
    match parse_u64(tok) {
        Some(v) => Ok(v),
        None => err(
            line,
            format!("'{}' is not a number (after '{}')", show(tok), show(after)),
        ),
    }
}

/// The value of `key` on line `line`: the number in the first token of `rest` (what follows the key).
fn value_of(line: usize, rest: &[u8], key: &[u8]) -> PResult<u64> {
    match tokens(rest).next() {
        Some(tok) => number(line, tok, key),
        None => err(line, format!("expected a number after '{}'", show(key))),
    }
}

/// A `Key: value` line split at its first colon: the key and what follows the colon.
fn split_colon(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().position(|&b| b == b':')?;
    Some((&line[..colon], &line[colon + 1..]))
}

/// A `key value` line split after its first token: the key and what follows it.
fn split_word(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
    let len = line[start..]
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(line.len() - start);
    Some((&line[start..start + len], &line[start + len..]))
}

/// The values of `keys` in the `key value` lines of `buf`, in the order of `keys`; 0 for a key that
/// does not occur, the last value for one that occurs twice.
fn word_values<const N: usize>(buf: &[u8], keys: [&[u8]; N]) -> PResult<[u64; N]> {
    let mut out = [0; N];
    for (ln, line) in lines(buf) {
        let Some((key, rest)) = split_word(line) else {
            continue;
        };
        if let Some(i) = keys.iter().position(|k| *k == key) {
            out[i] = value_of(ln, rest, key)?;
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// /proc/stat

/// The CPU-state jiffies of one `cpu` line, in kernel order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    fn from_fields(f: &[u64; 10]) -> Self {
        CpuTimes {
            user: f[0],
            nice: f[1],
            system: f[2],
            idle: f[3],
            iowait: f[4],
            irq: f[5],
            softirq: f[6],
            steal: f[7],
        }
    }

    /// Adds `o` field by field (saturating).
    pub fn add(&mut self, o: &CpuTimes) {
        self.user = self.user.saturating_add(o.user);
        self.nice = self.nice.saturating_add(o.nice);
        self.system = self.system.saturating_add(o.system);
        self.idle = self.idle.saturating_add(o.idle);
        self.iowait = self.iowait.saturating_add(o.iowait);
        self.irq = self.irq.saturating_add(o.irq);
        self.softirq = self.softirq.saturating_add(o.softirq);
        self.steal = self.steal.saturating_add(o.steal);
    }
}

/// What the source uses from `/proc/stat`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    /// The aggregate `cpu` line.
    pub total: CpuTimes,
    /// `cpuN` lines: (N, times), in file order.
    pub cpus: Vec<(u32, CpuTimes)>,
    /// First number of the `intr` line: all interrupts since boot.
    pub intr: u64,
    /// `ctxt`: context switches since boot.
    pub ctxt: u64,
    /// `procs_running`: runnable tasks now.
    pub procs_running: u64,
}

/// Parses `/proc/stat`. `cpu` lines need at least 4 numbers (older kernels have fewer than 10;
/// missing states are 0).
pub(crate) fn stat(buf: &[u8]) -> PResult<Stat> {
    let mut out = Stat::default();
    let mut saw_total = false;
    for (ln, line) in lines(buf) {
        let mut toks = tokens(line);
        let Some(key) = toks.next() else { continue };
        if let Some(rest) = key.strip_prefix(b"cpu") {
            let id = if rest.is_empty() {
                None
            } else {
                match parse_u64(rest).and_then(|v| u32::try_from(v).ok()) {
                    Some(id) => Some(id),
                    None => return err(ln, format!("bad CPU name '{}'", show(key))),
                }
            };
            let mut f = [0u64; 10];
            let mut n = 0usize;
            for tok in toks {
                let v = number(ln, tok, key)?;
                if let Some(slot) = f.get_mut(n) {
                    *slot = v;
                }
                n += 1;
            }
            if n < 4 {
                return err(
                    ln,
                    format!(
                        "expected at least 4 numbers after '{}', found {n}",
                        show(key)
                    ),
                );
            }
            let t = CpuTimes::from_fields(&f);
            match id {
                None => {
                    out.total = t;
                    saw_total = true;
                }
                Some(id) => out.cpus.push((id, t)),
            }
        } else if key == b"intr" || key == b"ctxt" || key == b"procs_running" {
            let Some(tok) = toks.next() else {
                return err(ln, format!("expected a number after '{}'", show(key)));
            };
            let v = number(ln, tok, key)?;
            match key {
                b"intr" => out.intr = v,
                b"ctxt" => out.ctxt = v,
                _ => out.procs_running = v,
            }
        }
    }
    if !saw_total {
        return err(0, "no 'cpu' line");
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// /proc/interrupts

/// Parses `/proc/interrupts` into per-CPU totals: (CPU id, interrupts since boot), in column order.
pub(crate) fn interrupts(buf: &[u8]) -> PResult<Vec<(u32, u64)>> {
    let mut it = lines(buf);
    let mut cols: Vec<(u32, u64)> = Vec::new();
    let Some((ln, header)) = it.next() else {
        return err(1, "empty file");
    };
    for tok in tokens(header) {
        let id = tok
            .strip_prefix(b"CPU")
            .and_then(parse_u64)
            .and_then(|v| u32::try_from(v).ok());
        match id {
            Some(id) => cols.push((id, 0)),
            None => {
                return err(
                    ln,
                    format!("expected 'CPUn' column names, found '{}'", show(tok)),
                )
            }
        }
    }
    for (_, line) in it {
        let mut toks = tokens(line);
        if toks.next().is_none() {
            continue;
        }
        // Counts follow the "NAME:" label; the description (or fewer columns, as for ERR/MIS) ends them.
        for (col, tok) in cols.iter_mut().zip(toks) {
            match parse_u64(tok) {
                Some(v) => col.1 = col.1.saturating_add(v),
                None => break,
            }
        }
    }
    Ok(cols)
}

// ---------------------------------------------------------------------------------------------
// /proc/meminfo

/// The `/proc/meminfo` fields the source uses, in kB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MemInfo {
    pub mem_total: Option<u64>,
    pub mem_free: Option<u64>,
    pub mem_available: Option<u64>,
    pub buffers: Option<u64>,
    pub cached: Option<u64>,
    pub swap_total: Option<u64>,
    pub commit_limit: Option<u64>,
    pub committed_as: Option<u64>,
    pub sreclaimable: Option<u64>,
    pub sunreclaim: Option<u64>,
}

/// Parses `/proc/meminfo` (`Key:   value kB` lines).
pub(crate) fn meminfo(buf: &[u8]) -> PResult<MemInfo> {
    let mut m = MemInfo::default();
    for (ln, line) in lines(buf) {
        let Some((key, rest)) = split_colon(line) else {
            if tokens(line).next().is_none() {
                continue;
            }
            return err(ln, format!("expected 'Key: value', found '{}'", show(line)));
        };
        let slot = match key {
            b"MemTotal" => &mut m.mem_total,
            b"MemFree" => &mut m.mem_free,
            b"MemAvailable" => &mut m.mem_available,
            b"Buffers" => &mut m.buffers,
            b"Cached" => &mut m.cached,
            b"SwapTotal" => &mut m.swap_total,
            b"CommitLimit" => &mut m.commit_limit,
            b"Committed_AS" => &mut m.committed_as,
            b"SReclaimable" => &mut m.sreclaimable,
            b"SUnreclaim" => &mut m.sunreclaim,
            _ => continue,
        };
        *slot = Some(value_of(ln, rest, key)?);
    }
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// /proc/vmstat

/// The `/proc/vmstat` counters the source uses (absent keys are 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VmStat {
    pub pgfault: u64,
    pub pgmajfault: u64,
    pub pswpin: u64,
    pub pswpout: u64,
}

/// Parses `/proc/vmstat` (`key value` lines).
pub(crate) fn vmstat(buf: &[u8]) -> PResult<VmStat> {
    let [pgfault, pgmajfault, pswpin, pswpout] =
        word_values(buf, [b"pgfault", b"pgmajfault", b"pswpin", b"pswpout"])?;
    Ok(VmStat {
        pgfault,
        pgmajfault,
        pswpin,
        pswpout,
    })
}

// ---------------------------------------------------------------------------------------------
// /proc/uptime, /proc/loadavg, single numbers

/// Parses the first field of `/proc/uptime` ("350735.47 …") into hundredths of a second.
pub(crate) fn uptime_centis(buf: &[u8]) -> PResult<u64> {
    let Some(tok) = tokens(buf).next() else {
        return err(1, "empty file");
    };
    let (int, frac) = match tok.iter().position(|&b| b == b'.') {
        Some(p) => (&tok[..p], &tok[p + 1..]),
        None => (tok, &b""[..]),
    };
    let bad = || ParseError {
        line: 1,
        message: format!("'{}' is not a number of seconds", show(tok)),
    };
    let secs = parse_u64(int).ok_or_else(bad)?;
    if !frac.iter().all(u8::is_ascii_digit) {
        return Err(bad());
    }
    let mut centis = 0u64;
    for i in 0..2 {
        centis = centis * 10 + frac.get(i).map_or(0, |d| u64::from(d - b'0'));
    }
    secs.checked_mul(100)
        .and_then(|v| v.checked_add(centis))
        .ok_or_else(bad)
}

/// Parses the scheduling-entity count of `/proc/loadavg` ("0.20 0.18 0.12 1/80 11206" → 80).
pub(crate) fn loadavg_threads(buf: &[u8]) -> PResult<u64> {
    let tok = tokens(buf).nth(3).unwrap_or_default();
    let total = tok
        .iter()
        .position(|&b| b == b'/')
        .and_then(|p| parse_u64(&tok[p + 1..]));
    match total {
        Some(v) => Ok(v),
        None => err(
            1,
            format!(
                "expected 'running/total' as the 4th field, found '{}'",
                show(tok)
            ),
        ),
    }
}

/// Parses a file holding one signed integer (e.g. `/sys/class/net/*/speed`, `overcommit_memory`).
pub(crate) fn single_i64(buf: &[u8]) -> PResult<i64> {
    let tok = tokens(buf).next().unwrap_or_default();
    match parse_i64(tok) {
        Some(v) => Ok(v),
        None => err(1, format!("'{}' is not a number", show(tok))),
    }
}

/// Parses a CPU list such as `0-3,8,10-11` into CPU ids.
pub(crate) fn cpulist(buf: &[u8]) -> PResult<Vec<u32>> {
    let mut out = Vec::new();
    let text = tokens(buf).next().unwrap_or_default();
    if text.is_empty() {
        return Ok(out);
    }
    for part in text.split(|&b| b == b',') {
        let bad = || ParseError {
            line: 1,
            message: format!("'{}' is not a CPU range", show(part)),
        };
        let to_id = |t: &[u8]| parse_u64(t).and_then(|v| u32::try_from(v).ok());
        let (lo, hi) = match part.iter().position(|&b| b == b'-') {
            Some(p) => (
                to_id(&part[..p]).ok_or_else(bad)?,
                to_id(&part[p + 1..]).ok_or_else(bad)?,
            ),
            None => {
                let v = to_id(part).ok_or_else(bad)?;
                (v, v)
            }
        };
        if hi < lo || hi - lo > 65_535 {
            return Err(bad());
        }
        out.extend(lo..=hi);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// /proc/[pid]/stat, status, io

/// The `/proc/[pid]/stat` fields the source uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// The command name: the text between the first `(` and the last `)`.
    pub comm: String,
    pub ppid: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub utime: u64,
    pub stime: u64,
    pub priority: i64,
    pub nice: i64,
    pub num_threads: u64,
    pub starttime: u64,
    pub vsize: u64,
    pub rss_pages: u64,
}

/// Parses `/proc/[pid]/stat`. The command name may contain spaces and parentheses, so it is the text
/// between the first `(` and the last `)`.
pub(crate) fn proc_stat(buf: &[u8]) -> PResult<ProcStat> {
    let open = buf.iter().position(|&b| b == b'(');
    let close = buf.iter().rposition(|&b| b == b')');
    let (open, close) = match (open, close) {
        (Some(o), Some(c)) if o < c => (o, c),
        _ => return err(1, "no '(command)' field"),
    };
    let comm = String::from_utf8_lossy(&buf[open + 1..close]).into_owned();
    // Fields 3.. follow the command: state, ppid, pgrp, …
    let mut f: [&[u8]; 22] = [&[]; 22];
    let mut n = 0usize;
    for tok in tokens(&buf[close + 1..]) {
        if let Some(slot) = f.get_mut(n) {
            *slot = tok;
        }
        n += 1;
        if n >= f.len() {
            break;
        }
    }
    if n < f.len() {
        return err(
            1,
            format!("expected 22 fields after the command name, found {n}"),
        );
    }
    // f[k] is field k + 3 of proc(5).
    let u = |k: usize, name: &str| -> PResult<u64> {
        parse_u64(f[k]).ok_or_else(|| ParseError {
            line: 1,
            message: format!("field {} ({name}): '{}' is not a number", k + 3, show(f[k])),
        })
    };
    let i = |k: usize, name: &str| -> PResult<i64> {
        parse_i64(f[k]).ok_or_else(|| ParseError {
            line: 1,
            message: format!("field {} ({name}): '{}' is not a number", k + 3, show(f[k])),
        })
    };
    Ok(ProcStat {
        comm,
        ppid: u(1, "ppid")?,
        minflt: u(7, "minflt")?,
        majflt: u(9, "majflt")?,
        utime: u(11, "utime")?,
        stime: u(12, "stime")?,
        priority: i(15, "priority")?,
        nice: i(16, "nice")?,
        num_threads: u(17, "num_threads")?,
        starttime: u(19, "starttime")?,
        vsize: u(20, "vsize")?,
        rss_pages: i(21, "rss")?.max(0) as u64,
    })
}

/// The `/proc/[pid]/status` fields the source uses, in kB (absent = 0, as for kernel threads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProcStatus {
    pub vm_peak: u64,
    pub vm_hwm: u64,
    pub rss_anon: u64,
    pub vm_swap: u64,
}

/// Parses `/proc/[pid]/status`.
///
/// The four fields are read in any order; the lines after the last of them (signal masks,
/// capabilities, CPU lists: about half of the file) are not looked at.
pub(crate) fn proc_status(buf: &[u8]) -> PResult<ProcStatus> {
    let mut s = ProcStatus::default();
    let mut found = 0u8;
    for (ln, line) in lines(buf) {
        let Some((key, rest)) = split_colon(line) else {
            continue;
        };
        let (slot, bit) = match key {
            b"VmPeak" => (&mut s.vm_peak, 1),
            b"VmHWM" => (&mut s.vm_hwm, 2),
            b"RssAnon" => (&mut s.rss_anon, 4),
            b"VmSwap" => (&mut s.vm_swap, 8),
            _ => continue,
        };
        *slot = value_of(ln, rest, key)?;
        found |= bit;
        if found == 15 {
            break;
        }
    }
    Ok(s)
}

/// The `/proc/[pid]/io` fields the source uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProcIo {
    pub rchar: u64,
    pub wchar: u64,
    pub syscr: u64,
    pub syscw: u64,
}

/// Parses `/proc/[pid]/io`.
pub(crate) fn proc_io(buf: &[u8]) -> PResult<ProcIo> {
    let [rchar, wchar, syscr, syscw] =
        word_values(buf, [b"rchar:", b"wchar:", b"syscr:", b"syscw:"])?;
    Ok(ProcIo {
        rchar,
        wchar,
        syscr,
        syscw,
    })
}

// ---------------------------------------------------------------------------------------------
// /proc/diskstats

/// One `/proc/diskstats` line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DiskLine {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    pub in_progress: u64,
    pub io_ms: u64,
    pub weighted_ms: u64,
}

/// Parses `/proc/diskstats`: major, minor, name and at least 11 statistics per line (newer kernels
/// append discard and flush statistics, which are not used).
pub(crate) fn diskstats(buf: &[u8]) -> PResult<Vec<DiskLine>> {
    let mut out = Vec::new();
    for (ln, line) in lines(buf) {
        let mut toks = tokens(line);
        let Some(major) = toks.next() else { continue };
        let minor = toks.next().unwrap_or_default();
        let name = toks.next().unwrap_or_default();
        let to_u32 = |t: &[u8]| parse_u64(t).and_then(|v| u32::try_from(v).ok());
        let (Some(major), Some(minor)) = (to_u32(major), to_u32(minor)) else {
            return err(ln, "expected 'major minor name' at the start of the line");
        };
        if name.is_empty() {
            return err(ln, "missing device name");
        }
        let dev = String::from_utf8_lossy(name).into_owned();
        let mut f = [0u64; 11];
        let mut n = 0usize;
        for tok in toks {
            let v = number(ln, tok, name)?;
            if let Some(slot) = f.get_mut(n) {
                *slot = v;
            }
            n += 1;
        }
        if n < f.len() {
            return err(
                ln,
                format!("expected at least 11 numbers after '{dev}', found {n}"),
            );
        }
        out.push(DiskLine {
            major,
            minor,
            name: dev,
            reads: f[0],
            read_sectors: f[2],
            read_ms: f[3],
            writes: f[4],
            write_sectors: f[6],
            write_ms: f[7],
            in_progress: f[8],
            io_ms: f[9],
            weighted_ms: f[10],
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// /proc/net/dev

/// One interface of `/proc/net/dev`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NetLine {
    pub name: String,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_errs: u64,
    pub rx_drop: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errs: u64,
    pub tx_drop: u64,
}

/// Parses `/proc/net/dev`: two header lines, then `name: 16 numbers` per interface.
pub(crate) fn net_dev(buf: &[u8]) -> PResult<Vec<NetLine>> {
    let mut out = Vec::new();
    for (ln, line) in lines(buf).skip(2) {
        if tokens(line).next().is_none() {
            continue;
        }
        let Some(colon) = line.iter().rposition(|&b| b == b':') else {
            return err(ln, "expected 'interface: counters'");
        };
        let name = tokens(&line[..colon]).next().unwrap_or_default();
        if name.is_empty() {
            return err(ln, "missing interface name");
        }
        let ifname = String::from_utf8_lossy(name).into_owned();
        let mut f = [0u64; 16];
        let mut n = 0usize;
        for tok in tokens(&line[colon + 1..]) {
            let v = number(ln, tok, name)?;
            if let Some(slot) = f.get_mut(n) {
                *slot = v;
            }
            n += 1;
        }
        if n < f.len() {
            return err(
                ln,
                format!("expected 16 numbers after '{ifname}:', found {n}"),
            );
        }
        out.push(NetLine {
            name: ifname,
            rx_bytes: f[0],
            rx_packets: f[1],
            rx_errs: f[2],
            rx_drop: f[3],
            tx_bytes: f[8],
            tx_packets: f[9],
            tx_errs: f[10],
            tx_drop: f[11],
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// /proc/self/mountinfo

/// One mount of `/proc/self/mountinfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mount {
    pub major: u32,
    pub minor: u32,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
}

/// Undoes the octal escapes (`\040` for a space) of mount fields.
fn unescape(tok: &[u8]) -> String {
    let mut out = Vec::with_capacity(tok.len());
    let mut i = 0;
    while let Some(&b) = tok.get(i) {
        if b == b'\\' {
            if let Some(d) = tok.get(i + 1..i + 4) {
                if d.iter().all(|c| (b'0'..=b'7').contains(c)) {
                    let v = (u32::from(d[0] - b'0') << 6)
                        | (u32::from(d[1] - b'0') << 3)
                        | u32::from(d[2] - b'0');
                    if let Ok(v) = u8::try_from(v) {
                        out.push(v);
                        i += 4;
                        continue;
                    }
                }
            }
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `/proc/self/mountinfo`:
/// `id parent major:minor root mount-point options [optional…] - fstype source super-options`.
pub(crate) fn mountinfo(buf: &[u8]) -> PResult<Vec<Mount>> {
    let mut out = Vec::new();
    for (ln, line) in lines(buf) {
        let mut toks = tokens(line);
        if toks.next().is_none() {
            continue;
        }
        let _parent = toks.next();
        let dev = toks.next().unwrap_or_default();
        let _root = toks.next();
        let mp = toks.next();
        let devno = dev.iter().position(|&b| b == b':').and_then(|p| {
            let ma = parse_u64(&dev[..p]).and_then(|v| u32::try_from(v).ok())?;
            let mi = parse_u64(&dev[p + 1..]).and_then(|v| u32::try_from(v).ok())?;
            Some((ma, mi))
        });
        let (Some((major, minor)), Some(mp)) = (devno, mp) else {
            return err(ln, "expected 'id parent major:minor root mount-point …'");
        };
        // Skip options and optional fields up to the "-" separator.
        if !toks.by_ref().any(|t| t == b"-") {
            return err(ln, "missing the '-' separator before the file system type");
        }
        let fs_type = toks.next().unwrap_or_default();
        let source = toks.next().unwrap_or_default();
        out.push(Mount {
            major,
            minor,
            mount_point: unescape(mp),
            fs_type: String::from_utf8_lossy(fs_type).into_owned(),
            source: unescape(source),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_i64(b"-20"), Some(-20));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i64(b"-"), None);
    }

    #[test]
    fn stat_lines() {
        let s = stat(b"cpu  10 1 5 100 4 2 3 0 0 0\ncpu0 10 1 5 100 4 2 3 0 0 0\nintr 777 1 2\nctxt 99\nprocs_running 3\n")
            .unwrap();
        assert_eq!(s.total.user, 10);
        assert_eq!(s.total.softirq, 3);
        assert_eq!(s.cpus.len(), 1);
        assert_eq!((s.intr, s.ctxt, s.procs_running), (777, 99, 3));
        // An old kernel with 4 states.
        let s = stat(b"cpu 1 2 3 4\n").unwrap();
        assert_eq!((s.total.idle, s.total.iowait), (4, 0));
        let e = stat(b"cpu 1 2 3 4\ncpu0 1 2\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(
            e.message,
            "expected at least 4 numbers after 'cpu0', found 2"
        );
        let e = stat(b"cpu 1 2 x 4\n").unwrap_err();
        assert_eq!(e.message, "'x' is not a number (after 'cpu')");
        assert_eq!(stat(b"intr 5\n").unwrap_err().message, "no 'cpu' line");
        assert_eq!(
            stat(b"cpuX 1 2 3 4\n").unwrap_err().message,
            "bad CPU name 'cpuX'"
        );
    }

    #[test]
    fn interrupt_columns() {
        let buf = b"           CPU0       CPU2\n  0:         46          1   IO-APIC   2-edge      timer\n  1:          9          0   IO-APIC   1-edge      i8042\nNMI:          4          6   Non-maskable interrupts\nERR:          7\n";
        assert_eq!(interrupts(buf).unwrap(), [(0, 66), (2, 7)]);
        assert_eq!(interrupts(b"CPU0 X\n").unwrap_err().line, 1);
    }

    #[test]
    fn meminfo_and_vmstat() {
        let m = meminfo(b"MemTotal:       1000 kB\nMemFree:  200 kB\nHugePages_Total:       0\n\n")
            .unwrap();
        assert_eq!(m.mem_total, Some(1000));
        assert_eq!(m.mem_free, Some(200));
        assert_eq!(m.mem_available, None);
        let e = meminfo(b"MemTotal: 1\nMemFree: lots kB\n").unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (2, "'lots' is not a number (after 'MemFree')")
        );
        let v = vmstat(b"nr_free_pages 5\npgfault 10\npgmajfault 2\n").unwrap();
        assert_eq!((v.pgfault, v.pgmajfault, v.pswpin), (10, 2, 0));
    }

    #[test]
    fn small_files() {
        assert_eq!(uptime_centis(b"350735.47 234388.90\n").unwrap(), 35_073_547);
        assert_eq!(uptime_centis(b"12.5 1\n").unwrap(), 1250);
        assert_eq!(uptime_centis(b"12 1\n").unwrap(), 1200);
        assert!(uptime_centis(b"1.x").is_err());
        assert!(uptime_centis(b"").is_err());
        assert_eq!(loadavg_threads(b"0.20 0.18 0.12 1/80 11206\n").unwrap(), 80);
        assert!(loadavg_threads(b"0.20 0.18").is_err());
        assert_eq!(single_i64(b"-1\n").unwrap(), -1);
        assert_eq!(cpulist(b"0-2,8,10-11\n").unwrap(), [0, 1, 2, 8, 10, 11]);
        assert_eq!(cpulist(b"\n").unwrap(), Vec::<u32>::new());
        assert!(cpulist(b"3-1").is_err());
        assert!(cpulist(b"0-4294967295").is_err());
    }

    #[test]
    fn process_stat_with_odd_names() {
        let line = b"42 (a) (b c)) S 1 42 42 0 -1 4194560 100 0 7 0 250 50 0 0 20 0 3 0 1000 4096000 300 18446744073709551615\n";
        let p = proc_stat(line).unwrap();
        assert_eq!(p.comm, "a) (b c)");
        assert_eq!(p.ppid, 1);
        assert_eq!((p.minflt, p.majflt, p.utime, p.stime), (100, 7, 250, 50));
        assert_eq!((p.priority, p.nice, p.num_threads), (20, 0, 3));
        assert_eq!((p.starttime, p.vsize, p.rss_pages), (1000, 4096000, 300));
        let e = proc_stat(b"42 (x) S 1 2 3\n").unwrap_err();
        assert_eq!(
            e.message,
            "expected 22 fields after the command name, found 4"
        );
        assert!(proc_stat(b"42 x) (y").is_err());
        assert!(proc_stat(b"").is_err());
    }

    #[test]
    fn diskstats_and_netdev() {
        let d = diskstats(b"   8       0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n").unwrap();
        assert_eq!(d[0].name, "sda");
        assert_eq!((d[0].reads, d[0].read_sectors, d[0].read_ms), (1, 3, 4));
        assert_eq!(
            (d[0].in_progress, d[0].io_ms, d[0].weighted_ms),
            (9, 10, 11)
        );
        let e = diskstats(b"8 0 sda 1 2 3\n").unwrap_err();
        assert_eq!(
            e.message,
            "expected at least 11 numbers after 'sda', found 3"
        );
        let n = net_dev(b"h1\nh2\n  eth0:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n").unwrap();
        assert_eq!((n[0].rx_bytes, n[0].tx_bytes, n[0].tx_drop), (1, 9, 12));
        assert_eq!(net_dev(b"h\nh\neth0 1 2\n").unwrap_err().line, 3);
    }

    #[test]
    fn mountinfo_fields() {
        let m =
            mountinfo(b"36 35 8:1 / /mnt/my\\040disk rw,noatime shared:1 - ext4 /dev/sda1 rw\n")
                .unwrap();
        assert_eq!(m[0].mount_point, "/mnt/my disk");
        assert_eq!((m[0].major, m[0].minor), (8, 1));
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].source, "/dev/sda1");
        assert!(mountinfo(b"36 35 8:1 / /mnt rw ext4\n").is_err());
        assert_eq!(unescape(b"a\\777b\\1"), "a\\777b\\1");
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = stat(&bytes);
            let _ = interrupts(&bytes);
            let _ = meminfo(&bytes);
            let _ = vmstat(&bytes);
            let _ = uptime_centis(&bytes);
            let _ = loadavg_threads(&bytes);
            let _ = single_i64(&bytes);
            let _ = cpulist(&bytes);
            let _ = proc_stat(&bytes);
            let _ = proc_status(&bytes);
            let _ = proc_io(&bytes);
            let _ = diskstats(&bytes);
            let _ = net_dev(&bytes);
            let _ = mountinfo(&bytes);
        }

        #[test]
        fn proc_stat_takes_the_last_paren(name in "[a-z() ]{0,20}") {
            let line = format!("9 ({name}) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n");
            let p = proc_stat(line.as_bytes()).unwrap();
            proptest::prop_assert_eq!(p.comm, name);
            proptest::prop_assert_eq!(p.ppid, 1);
            proptest::prop_assert_eq!(p.rss_pages, 21);
        }
    }
}
