//! The fleet report (`analyze` of logs of several machines), as HTML (a fleet summary: machines ×
//! analyses, alert counts by priority, worst machine first, each cell a link into that machine's
//! section; then one section per machine holding what a single report holds) or JSON.
//!
//! [`FleetReport`] takes the machines one by one as they are analysed: each machine's section
//! (HTML, its charts' data beside it, or its JSON entry) is written to a spool file at once and
//! only its [`MachineSummary`] kept, so the memory does not grow with the machines. When all are
//! in, [`FleetReport::finish`] writes the page: the summary first, then the sections copied
//! from the spool in the summary's order.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use maud::{html, Markup, PreEscaped};
use perfcounters::analyze::{MachineAnalysis, Report, Rules};

use super::fleet_json::{error_text, MachineJson};
use super::html::{condition, report_body, script_json, shell};
use super::json::ChartJson;

const FLEET_CSS: &str = include_str!("fleet.css");

/// A machine's alerts counted by priority (highest first), with the condition of each priority.
fn by_priority(r: &Report, analysis: Option<usize>) -> Vec<(i32, &str, usize)> {
    let mut counts: BTreeMap<Reverse<i32>, (&str, usize)> = BTreeMap::new();
    for a in r
        .alerts
        .iter()
        .filter(|a| analysis.is_none_or(|i| a.analysis == i))
    {
        counts
            .entry(Reverse(a.priority))
            .or_insert((&a.condition, 0))
            .1 += 1;
    }
    counts
        .into_iter()
        .map(|(Reverse(p), (c, n))| (p, c, n))
        .collect()
}

/// Alert counts by priority, highest first: (priority, condition, count).
type Counts = Vec<(i32, String, usize)>;

fn owned(counts: Vec<(i32, &str, usize)>) -> Counts {
    counts
        .into_iter()
        .map(|(p, c, n)| (p, c.to_owned(), n))
        .collect()
}

/// What the fleet summary and the lines on standard error need of a machine once its section is
/// written: its name, logs and alert counts.
#[derive(Debug)]
pub struct MachineSummary {
    /// The machine (or the log's name).
    pub machine: String,
    /// Its logs.
    pub logs: Vec<String>,
    /// Its place among the machines as analysed: its section's anchors (`#m3`).
    index: usize,
    /// Why it was not analysed.
    error: Option<String>,
    /// Its alerts by priority.
    all: Counts,
    /// The same for each analysis that raised an alert: (its index in the rules, its name,
    /// counts), in the rules' order.
    analyses: Vec<(usize, String, Counts)>,
}

impl MachineSummary {
    fn new(m: &MachineAnalysis, index: usize) -> Self {
        let (error, all, analyses) = match &m.result {
            Err(e) => (Some(error_text(e)), Vec::new(), Vec::new()),
            Ok(a) => {
                let r = &a.report;
                let analyses = r
                    .analyses
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| x.alerts > 0)
                    .map(|(i, x)| (i, x.name.clone(), owned(by_priority(r, Some(i)))))
                    .collect();
                (None, owned(by_priority(r, None)), analyses)
            }
        };
        MachineSummary {
            machine: m.machine.clone(),
            logs: m.logs.clone(),
            index,
            error,
            all,
            analyses,
        }
    }

    /// Whether it was not analysed.
    pub fn failed(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

/// The machines in the summary's order: those that failed first, then the worst first (more
/// alerts of the highest priority, then of the next …), then by name.
fn worst_first<'a>(fleet: impl IntoIterator<Item = &'a MachineSummary>) -> Vec<&'a MachineSummary> {
    let mut out: Vec<&MachineSummary> = fleet.into_iter().collect();
    out.sort_by(|a, b| {
        worst_key(b)
            .cmp(&worst_key(a))
            .then_with(|| a.machine.cmp(&b.machine))
    });
    out
}

/// What [`worst_first`] sorts by, greatest first: failed, then the counts by priority.
fn worst_key(m: &MachineSummary) -> (bool, Vec<(i32, usize)>) {
    (
        m.error.is_some(),
        m.all.iter().map(|(p, _, n)| (*p, *n)).collect(),
    )
}

/// The line `analyze` prints on standard error for each machine of a fleet: its alert counts, or
/// (a warning) why it was not analysed.
pub fn machine_line(m: &MachineSummary) -> String {
    if let Some(e) = &m.error {
        return format!("perfcounters: warning: {}: not analysed: {e}", m.machine);
    }
    if m.all.is_empty() {
        return format!("machine {}: no alerts", m.machine);
    }
    let text: Vec<String> = m
        .all
        .iter()
        .map(|(p, c, n)| format!("{n} {c} (priority {p})"))
        .collect();
    let n: usize = m.all.iter().map(|(_, _, n)| n).sum();
    format!(
        "machine {}: {n} alert{}: {}",
        m.machine,
        if n == 1 { "" } else { "s" },
        text.join(", ")
    )
}

/// A spool file: hidden, beside the report (or in the system's temporary directory), removed
/// when dropped.
struct Spool {
    file: File,
    path: PathBuf,
    len: u64,
}

impl Spool {
    fn create(dir: &Path) -> io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!(
            ".perfcounters-fleet-{}-{nanos}.part",
            std::process::id()
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok(Spool { file, path, len: 0 })
    }

    /// Appends `text`; where it lies in the spool.
    fn append(&mut self, text: &str) -> io::Result<(u64, u64)> {
        self.file.write_all(text.as_bytes())?;
        let at = self.len;
        self.len += text.len() as u64;
        Ok((at, text.len() as u64))
    }

    /// Copies what lies at `at` into `out`.
    fn copy(&mut self, (start, len): (u64, u64), out: &mut dyn Write) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(start))?;
        let copied = io::copy(&mut (&mut self.file).take(len), out)?;
        if copied == len {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{}: shorter than written", self.path.display()),
            ))
        }
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A fleet report being written: the machines' sections spooled as they come, their summaries
/// kept (see the [module documentation](self)).
pub struct FleetReport {
    json: bool,
    spool: Spool,
    machines: Vec<(MachineSummary, (u64, u64))>,
    /// The charts of the sections so far (each section's are numbered on from them).
    charts: usize,
}

impl FleetReport {
    /// A report as JSON (`json`) or HTML, whose sections are spooled in `dir`.
    ///
    /// # Errors
    /// The spool file cannot be created.
    pub fn new(json: bool, dir: &Path) -> io::Result<Self> {
        Ok(FleetReport {
            json,
            spool: Spool::create(dir)?,
            machines: Vec::new(),
            charts: 0,
        })
    }

    /// Writes the section of `m` (the next machine, in the order of the groups) to the spool
    /// and keeps its summary.
    ///
    /// # Errors
    /// Writing the spool fails.
    pub fn add(&mut self, m: &MachineAnalysis, rules: &Rules) -> io::Result<()> {
        let index = self.machines.len();
        let text = if self.json {
            indent(&pretty(&MachineJson::new(m))?, "    ")
        } else {
            let mut charts = Vec::new();
            let section = machine_section(m, index, rules, self.charts, &mut charts);
            self.charts += charts.len();
            section.into_string()
        };
        let at = self.spool.append(&text)?;
        self.machines.push((MachineSummary::new(m, index), at));
        Ok(())
    }

    /// The machines' summaries, in the order they were added.
    pub fn summaries(&self) -> Vec<&MachineSummary> {
        self.machines.iter().map(|(m, _)| m).collect()
    }

    /// The line of each machine for standard error ([`machine_line`]), in the summary's order.
    pub fn lines(&self) -> Vec<String> {
        worst_first(self.machines.iter().map(|(m, _)| m))
            .into_iter()
            .map(machine_line)
            .collect()
    }

    /// Writes the whole report to `out`: the fleet summary, then the sections in its order
    /// ([`worst_first`]).
    ///
    /// # Errors
    /// Reading the spool or writing `out` fails.
    pub fn finish(mut self, rules: &Rules, out: &mut dyn Write) -> io::Result<()> {
        let (summaries, places): (Vec<MachineSummary>, Vec<(u64, u64)>) =
            std::mem::take(&mut self.machines).into_iter().unzip();
        let ordered = worst_first(&summaries);
        if self.json {
            return self.finish_json(&ordered, &places, rules, out);
        }
        const SECTIONS: &str = "<fleet-sections/>";
        let names: Vec<&str> = ordered.iter().map(|m| m.machine.as_str()).collect();
        let content = html! {
            h1 { "Performance analysis of " (ordered.len()) " machines" } "\n"
            (summary(&ordered)) "\n"
            (PreEscaped(SECTIONS))
        };
        let page = shell(&names.join(", "), content, &[], FLEET_CSS);
        let (head, tail) = page.split_once(SECTIONS).unwrap_or((&page, ""));
        out.write_all(head.as_bytes())?;
        for m in &ordered {
            if let Some(&at) = places.get(m.index) {
                self.spool.copy(at, out)?;
                out.write_all(b"\n")?;
            }
        }
        out.write_all(tail.as_bytes())?;
        out.flush()
    }

    /// The JSON document: `{"logs", "machines", "rules"}`, pretty-printed, the machines' entries
    /// copied from the spool in the summary's order.
    fn finish_json(
        &mut self,
        ordered: &[&MachineSummary],
        places: &[(u64, u64)],
        rules: &Rules,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let logs: Vec<&str> = ordered
            .iter()
            .flat_map(|m| m.logs.iter().map(String::as_str))
            .collect();
        write!(
            out,
            "{{\n  \"logs\": {},\n  \"machines\": [",
            indent(&pretty(&logs)?, "  ")
        )?;
        for (i, m) in ordered.iter().enumerate() {
            out.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
            if let Some(&at) = places.get(m.index) {
                self.spool.copy(at, out)?;
            }
        }
        let close = if ordered.is_empty() { "]" } else { "\n  ]" };
        write!(
            out,
            "{close},\n  \"rules\": {}\n}}\n",
            indent(&pretty(&rules.files)?, "  ")
        )?;
        out.flush()
    }
}

/// `v` as pretty-printed JSON.
fn pretty(v: &impl serde::Serialize) -> io::Result<String> {
    serde_json::to_string_pretty(v).map_err(io::Error::other)
}

/// `text` with every line after the first indented by `by`: a pretty-printed JSON value placed
/// inside another (a string holds no line break of its own: JSON escapes them).
fn indent(text: &str, by: &str) -> String {
    text.replace('\n', &format!("\n{by}"))
}

/// Alert counts as condition labels, highest priority first.
fn counts_cell(counts: &[(i32, &str, usize)]) -> Markup {
    html! {
        @for (i, (p, c, n)) in counts.iter().enumerate() {
            @if i > 0 { " " }
            span title={ "priority " (p) } { (condition(c)) " " (n) }
        }
    }
}

/// The analyses that raised an alert on some machine, in the rules' order: (index, name).
fn alerted_analyses<'a>(fleet: &[&'a MachineSummary]) -> Vec<(usize, &'a str)> {
    let mut out: Vec<(usize, &str)> = Vec::new();
    for m in fleet {
        for (i, name, _) in &m.analyses {
            if !out.iter().any(|(j, _)| j == i) {
                out.push((*i, name));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Borrowed counts, as [`counts_cell`] takes them.
fn borrowed(counts: &Counts) -> Vec<(i32, &str, usize)> {
    counts
        .iter()
        .map(|(p, c, n)| (*p, c.as_str(), *n))
        .collect()
}

/// The fleet summary: machines × analyses.
fn summary(fleet: &[&MachineSummary]) -> Markup {
    let columns = alerted_analyses(fleet);
    html! {
        section id="fleet" {
            h2 { "Fleet summary" }
            p {
                "Alerts by priority for each machine (rows, worst first) and each analysis that raised one (columns). "
                "Each cell links to that machine's section."
            }
            div class="scroll wide" {
                table class="fleet" {
                    thead {
                        tr {
                            th { "Machine" } th { "Logs" } th { "All analyses" }
                            @for (_, name) in &columns { th class="analysis-name" { span { (name) } } }
                        }
                    }
                    tbody {
                        @for m in fleet {
                            @let i = m.index;
                            tr {
                                th { a href={ "#m" (i) } { (m.machine) } }
                                td { (m.logs.len()) }
                                @if let Some(e) = &m.error {
                                    td class="failed" colspan=(columns.len() + 1) {
                                        a href={ "#m" (i) } { "not analysed: " (e) }
                                    }
                                } @else {
                                    td {
                                        @if m.all.is_empty() { "none" }
                                        @else { a href={ "#m" (i) "-alerts" } { (counts_cell(&borrowed(&m.all))) } }
                                    }
                                    @for (k, _) in &columns {
                                        td {
                                            @if let Some((_, _, counts)) = m.analyses.iter().find(|(j, _, _)| j == k) {
                                                a href={ "#m" (i) "-a" (k) } { (counts_cell(&borrowed(counts))) }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One machine's section: what a single report holds, or why there is none; its charts
/// (numbered from `first_chart`, added to `charts`) go with it, as data the page's script reads.
fn machine_section<'a>(
    m: &'a MachineAnalysis,
    i: usize,
    rules: &Rules,
    first_chart: usize,
    charts: &mut Vec<ChartJson<'a>>,
) -> Markup {
    let prefix = format!("m{i}-");
    html! {
        section class="machine" id={ "m" (i) } {
            h2 class="machine" { "Machine " (m.machine) }
            @match &m.result {
                Err(e) => {
                    p class="failed" { "Not analysed: " (error_text(e)) }
                    p { "Logs: " (m.logs.join(", ")) }
                }
                Ok(a) => { (report_body(&a.report, &a.logs, rules, &prefix, first_chart, charts)) }
            }
            @if !charts.is_empty() {
                script type="application/json" data-charts-from=(first_chart) { (PreEscaped(script_json(&charts))) }
            }
        }
    }
}
