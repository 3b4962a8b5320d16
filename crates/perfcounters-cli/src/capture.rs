//! `perfcounters capture`: save raw performance data of this machine so it replays anywhere.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

/// The arguments of `capture`.
#[derive(clap::Args, Debug)]
pub struct CaptureArgs {
    /// Objects or countersets to record, by English name (repeat or separate with commas);
    /// default: the registry's "Global" block (every V1 object that is not costly)
    #[arg(long, short = 'O', value_delimiter = ',', value_name = "NAME")]
    pub objects: Vec<String>,
    /// Number of samples
    #[arg(long, short = 'n', default_value_t = 2)]
    pub samples: usize,
    // The help is an attribute: `[[hh:]mm:]ss` is not Markdown.
    #[arg(
        long,
        short = 'i',
        default_value = "1s",
        value_parser = crate::args::values::parse_interval,
        help = "Time between samples: 1s, 500ms, 2m, or [[hh:]mm:]ss"
    )]
    pub interval: Duration,
    #[arg(
        long,
        short = 'o',
        value_name = "DIR",
        help = "Directory to write (created; an existing capture there is replaced with --overwrite, \
                any other non-empty directory is refused); default: capture-<machine>-<UTC time>"
    )]
    pub output: Option<PathBuf>,
    /// Replace an existing capture in the --output directory
    #[arg(long, short = 'y')]
    pub overwrite: bool,
}

/// Checks `capture`'s arguments before anything is recorded: an existing capture is replaced only
/// with `--overwrite`.
pub fn run(args: &CaptureArgs) -> Result<()> {
    if let Some(dir) = &args.output {
        let empty_dir = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
        if !empty_dir {
            crate::args::refuse_existing(dir, args.overwrite, "--overwrite (-y) to replace it")?;
        }
    }
    record_and_write(args)
}

/// Records and writes the capture; prints where it went.
#[cfg(windows)]
fn record_and_write(args: &CaptureArgs) -> Result<()> {
    use anyhow::Context;
    use perfcounters::format::capture::CaptureInfo;
    use perfcounters::source::windows::WindowsSource;
    use perfcounters::source::windows::{
        record, ui_language, windows_version_value, wine_version, RecordOptions,
    };

    let mut source = WindowsSource::local();
    let now = chrono::Utc::now();
    let mut os = match (
        windows_version_value("ProductName"),
        windows_version_value("CurrentBuild"),
    ) {
        (Some(p), Some(b)) => format!("{p} (build {b})"),
        (Some(p), None) => p,
        _ => "Windows".to_string(),
    };
    if let Some(v) = wine_version() {
        os.push_str(&format!(", Wine {v}"));
    }
    let info = CaptureInfo {
        machine: String::new(),
        os,
        created: now.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        tool: format!("perfcounters {}", env!("CARGO_PKG_VERSION")),
    };
    let options = RecordOptions {
        objects: args.objects.clone(),
        samples: args.samples,
        interval: args.interval,
    };
    let capture = record(
        &mut source,
        &options,
        info,
        &ui_language(),
        &mut std::thread::sleep,
    )?;
    let dir = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "capture-{}-{}",
            capture.info.machine,
            now.format("%Y%m%d-%H%M%S")
        ))
    });
    capture
        .write(&dir)
        .with_context(|| format!("cannot write the capture to {}", dir.display()))?;
    let v2 = capture.samples.iter().filter(|s| s.v2.is_some()).count();
    eprintln!(
        "perfcounters: {} sample(s) of {} written to {} ({} V2 block(s), {} name table(s), {} counterset registration(s)); replay with `perfcounters watch --replay {}`",
        capture.samples.len(),
        if args.objects.is_empty() {
            "\"Global\"".to_string()
        } else {
            args.objects.join(", ")
        },
        dir.display(),
        v2,
        capture.names.len(),
        capture.registrations.len(),
        dir.display()
    );
    Ok(())
}

/// `capture` records Windows data; elsewhere it explains what to use instead.
#[cfg(not(windows))]
fn record_and_write(args: &CaptureArgs) -> Result<()> {
    let _ = args;
    anyhow::bail!(
        "capture records raw Windows performance data (HKEY_PERFORMANCE_DATA blocks, PerfLib V2 \
         results and the name tables) and runs on Windows; on this system record values with \
         `perfcounters watch -f csv -o FILE`"
    )
}
