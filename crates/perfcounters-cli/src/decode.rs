//! `perfcounters decode FILE|DIR`: a readable dump or a stable JSON document of a raw V1 or V2 block,
//! of a binary log (`.blg`, see [`crate::decode_blg`]), or of every sample of a capture directory.
//! The JSON schema is documented in `docs/decode-json.md`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use perfcounters::format::capture::sample_path;
use perfcounters::format::v1::PerfDataBlock;
use perfcounters::format::v2::{BlockData, DataHeader, InstanceData, QueryData, NO_COUNTER};
use perfcounters::format::BlockKind;
use perfcounters::names::NameTable;
use perfcounters::snapshot::{Object, ObjectData, Snapshot, SystemTime, Value};
use perfcounters::source::replay::{CaptureRecording, OpenedRecording, ReplayInput};
use perfcounters::time_text::TimeStyle;

use crate::args::DecodeFormat;
use crate::decode_json::{self as json, data_type_name};

/// Arguments of `decode`.
#[derive(clap::Args, Debug)]
pub struct DecodeArgs {
    /// The raw block file (V1 PERF_DATA_BLOCK or V2 PERF_DATA_HEADER; detected automatically), a
    /// binary log (.blg: header, counter list, every sample's raw values), or a capture directory
    /// (every sample, with its name tables and V2 registrations applied)
    file: PathBuf,
    /// A name table (PerfStringBackup.INI, REG_MULTI_SZ dump or `index name` text) used besides the built-in English names
    #[arg(long, value_name = "FILE")]
    names: Option<PathBuf>,
    /// Output format
    #[arg(long, short = 'f', value_enum, default_value = "text")]
    format: DecodeFormat,
}

/// Runs `decode`.
pub fn run(args: &DecodeArgs) -> Result<ExitCode> {
    // What the file is, and whether --names applies, by the rules of replay.
    let names = args.names.as_deref();
    let input = ReplayInput::classify(std::slice::from_ref(&args.file))
        .and_then(|input| {
            input.require_raw_data()?;
            input.check_names(names)?;
            Ok(input)
        })
        .map_err(crate::collect::replay_error)?;
    match &input {
        ReplayInput::Capture(dir) => {
            crate::print_out(&capture(dir, args.format)?)?;
            return Ok(ExitCode::SUCCESS);
        }
        ReplayInput::BinaryLog(path) => {
            let stdout = std::io::stdout();
            crate::decode_blg::decode(path, args.format, &mut stdout.lock())?;
            return Ok(ExitCode::SUCCESS);
        }
        ReplayInput::BlockFiles(_) | ReplayInput::Log { .. } => {}
    }
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    // Named as a replay names the block: the built-in English names, then the table given.
    let names = match input.open(names).map_err(crate::collect::replay_error)? {
        OpenedRecording::BlockFiles(blocks) => blocks.names().clone(),
        _ => NameTable::builtin_english().clone(),
    };
    let text = match BlockKind::detect(&bytes) {
        Some(BlockKind::V1) => {
            let block = PerfDataBlock::parse(&bytes)
                .map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
            let mut snapshot = block
                .to_snapshot()
                .map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
            names.apply(&mut snapshot);
            match args.format {
                DecodeFormat::Json => {
                    serde_json::to_string_pretty(&json::V1::new(&snapshot))? + "\n"
                }
                DecodeFormat::Text => v1_text(&snapshot),
            }
        }
        // Too short for either kind: the V2 decoder says which header is cut short.
        Some(BlockKind::V2) | None => {
            v2(&bytes, args.format).map_err(|e| anyhow!("{}: {e}", args.file.display()))?
        }
    };
    crate::print_out(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `YYYY-MM-DD HH:MM:SS.mmm` for a `SYSTEMTIME`, as the text dumps show it.
fn text_time(t: &SystemTime) -> String {
    TimeStyle::Sql.format(t)
}

fn value_text(v: &Value) -> String {
    match v {
        Value::U32(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        Value::Bytes(b) => format!("<{} bytes>", b.len()),
    }
}

fn name_or_index(name: &Option<String>, index: u32) -> String {
    match name {
        Some(n) => format!("{n} [{index}]"),
        None => format!("[{index}]"),
    }
}

/// The readable V1 dump.
pub fn v1_text(s: &Snapshot) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let t = &s.system_time;
    let _ = writeln!(
        out,
        "PERF_DATA_BLOCK (V1) from {}",
        if s.system_name.is_empty() {
            "?"
        } else {
            &s.system_name
        }
    );
    let _ = writeln!(
        out,
        "  system time {} UTC, perf time {} at {} Hz, 100ns time {}",
        text_time(t),
        s.perf_time,
        s.perf_freq,
        s.perf_time_100ns
    );
    let _ = writeln!(out, "  {} object(s)", s.objects.len());
    for o in &s.objects {
        let _ = writeln!(out, "\nobject {}", name_or_index(&o.name, o.index));
        object_text(&mut out, o);
    }
    out
}

/// The body of one object in the readable dumps: definitions, then values.
fn object_text(out: &mut String, o: &Object) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "  detail level {}, default counter {}, code page {}, object time {} at {} Hz",
        o.detail_level, o.default_counter, o.code_page, o.perf_time, o.perf_freq
    );
    let _ = writeln!(out, "  counters:");
    for (i, c) in o.counters.iter().enumerate() {
        let _ = writeln!(
            out,
            "    {i:>3}. {} type {} size {} offset {} scale {} detail {}{}",
            name_or_index(&c.name, c.index),
            c.counter_type,
            c.size,
            c.offset,
            c.scale,
            c.detail_level,
            c.base.map(|b| format!(" base #{b}")).unwrap_or_default()
        );
    }
    match &o.data {
        ObjectData::Single(values) => {
            let _ = writeln!(out, "  values:");
            for (c, v) in o.counters.iter().zip(values) {
                let _ = writeln!(
                    out,
                    "    {} = {}",
                    name_or_index(&c.name, c.index),
                    value_text(v)
                );
            }
        }
        ObjectData::Instances(list) => {
            let _ = writeln!(out, "  {} instance(s):", list.len());
            for i in list {
                let vals: Vec<String> = i.values().iter().map(value_text).collect();
                let _ = writeln!(
                    out,
                    "    {} (unique id {}): {}",
                    i.name(),
                    i.unique_id,
                    vals.join(" ")
                );
            }
        }
        ObjectData::MetadataOnly { multiple_instances } => {
            let _ = writeln!(
                out,
                "  metadata only ({})",
                if *multiple_instances {
                    "multiple instances"
                } else {
                    "no instances"
                }
            );
        }
    }
}

/// The readable V2 dump.
pub fn v2_text(q: &QueryData) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let t = &q.system_time;
    let _ = writeln!(out, "PERF_DATA_HEADER (V2)");
    let _ = writeln!(
        out,
        "  system time {} UTC, perf time {} at {} Hz, 100ns time {}",
        text_time(t),
        q.perf_time_stamp,
        q.perf_freq,
        q.perf_time_100ns
    );
    let _ = writeln!(out, "  {} counter block(s)", q.blocks.len());
    for (i, b) in q.blocks.iter().enumerate() {
        let _ = writeln!(
            out,
            "\nblock {i}: {} status {:#x}",
            data_type_name(b.data.data_type()),
            b.status
        );
        let instance_lines = |out: &mut String, list: &[InstanceData]| {
            for inst in list {
                let vals: Vec<String> = inst.values.iter().map(value_text).collect();
                let _ = writeln!(
                    out,
                    "    {} (id {}): {}",
                    inst.name,
                    inst.id,
                    vals.join(" ")
                );
            }
        };
        match &b.data {
            BlockData::Error => {}
            BlockData::Single(v) => {
                let _ = writeln!(out, "  value {}", value_text(v));
            }
            BlockData::MultipleCounters(list) => {
                for (id, v) in list {
                    let _ = writeln!(out, "  counter {id} = {}", value_text(v));
                }
            }
            BlockData::MultipleInstances(list) => instance_lines(&mut out, list),
            BlockData::CounterSet {
                counter_ids,
                instances,
            } => {
                let ids: Vec<String> = counter_ids.iter().map(u32::to_string).collect();
                let _ = writeln!(out, "  counter ids {}", ids.join(" "));
                instance_lines(&mut out, instances);
            }
        }
    }
    out
}

fn v2(bytes: &[u8], format: DecodeFormat) -> Result<String> {
    let header = DataHeader::parse(bytes)?;
    let q = QueryData::from_header(&header)?;
    Ok(match format {
        DecodeFormat::Json => serde_json::to_string_pretty(&json::V2::new(&q))? + "\n",
        DecodeFormat::Text => v2_text(&q),
    })
}

/// `decode DIR`: every sample of a capture, V1 blocks named from the capture's English table and V2
/// blocks converted with its registrations.
fn capture(dir: &Path, format: DecodeFormat) -> Result<String> {
    let recording = CaptureRecording::open(dir)?;
    match format {
        DecodeFormat::Json => capture_json(dir, &recording),
        DecodeFormat::Text => capture_text(dir, &recording),
    }
}

/// The V2 block `bytes` of the capture `dir`'s sample `number`.
fn raw_v2(dir: &Path, number: usize, bytes: &[u8]) -> Result<QueryData> {
    let err = |e| anyhow!("{}: {e}", dir.join(sample_path(number, true)).display());
    let header = DataHeader::parse(bytes).map_err(err)?;
    QueryData::from_header(&header).map_err(err)
}

/// The JSON document of a capture.
fn capture_json(dir: &Path, recording: &CaptureRecording) -> Result<String> {
    let c = recording.capture();
    let mut parts = Vec::new();
    for (i, sample) in c.samples.iter().enumerate() {
        let snapshots = recording.sample_snapshots(i)?;
        let q = match (&sample.v2, &snapshots.v2) {
            (Some(bytes), Some(_)) => Some(raw_v2(dir, i + 1, bytes)?),
            _ => None,
        };
        parts.push((snapshots, q));
    }
    let samples = parts
        .iter()
        .enumerate()
        .map(|(i, (parts, q))| json::CaptureSample {
            number: i + 1,
            v1: parts.v1.as_ref().map(json::V1::new),
            v2: q.as_ref().zip(parts.v2.as_ref()).map(|(q, conversion)| {
                json::V2::new(q).with_conversion(&conversion.snapshot.objects, &conversion.errors)
            }),
        })
        .collect();
    let doc = json::Capture {
        countersets: recording
            .registrations()
            .iter()
            .map(json::CounterSetJson::new)
            .collect(),
        created: &c.info.created,
        format: "capture",
        machine: &c.info.machine,
        names: c.names.iter().map(json::NameFileJson::new).collect(),
        os: &c.info.os,
        samples,
        tool: &c.info.tool,
        version: 1,
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// The readable dump of a capture.
fn capture_text(dir: &Path, recording: &CaptureRecording) -> Result<String> {
    use std::fmt::Write;
    let c = recording.capture();
    let name_files: Vec<String> = c
        .names
        .iter()
        .map(|n| n.file_name().trim_end_matches(".msz").to_string())
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "capture {}", dir.display());
    let _ = writeln!(
        out,
        "  machine {}, os {}, created {}, tool {}",
        c.info.machine, c.info.os, c.info.created, c.info.tool
    );
    let _ = writeln!(
        out,
        "  {} sample(s), name tables: {}",
        c.samples.len(),
        if name_files.is_empty() {
            "none".to_string()
        } else {
            name_files.join(" ")
        }
    );
    for r in recording.registrations() {
        let _ = writeln!(
            out,
            "  V2 counterset {} {}: {} counter(s)",
            r.guid,
            r.name.as_deref().unwrap_or("?"),
            r.counters.len()
        );
    }
    for (i, sample) in c.samples.iter().enumerate() {
        let parts = recording.sample_snapshots(i)?;
        if let Some(s) = &parts.v1 {
            let _ = writeln!(
                out,
                "\n== sample {}: {} ==",
                i + 1,
                sample_path(i + 1, false).display()
            );
            out.push_str(&v1_text(s));
        }
        if let (Some(bytes), Some(conversion)) = (&sample.v2, &parts.v2) {
            let q = raw_v2(dir, i + 1, bytes)?;
            let _ = writeln!(
                out,
                "\n== sample {}: {} ==",
                i + 1,
                sample_path(i + 1, true).display()
            );
            let _ = writeln!(
                out,
                "PERF_DATA_HEADER (V2) with the capture's registrations"
            );
            let _ = writeln!(
                out,
                "  system time {} UTC, perf time {} at {} Hz, 100ns time {}",
                text_time(&q.system_time),
                q.perf_time_stamp,
                q.perf_freq,
                q.perf_time_100ns
            );
            let _ = writeln!(
                out,
                "  {} counter block(s), {} counterset(s)",
                q.blocks.len(),
                conversion.snapshot.objects.len()
            );
            for e in &conversion.errors {
                let _ = writeln!(
                    out,
                    "  block {}: {} counter {} returned status {}",
                    e.index,
                    e.guid,
                    counter_id_text(e.counter_id),
                    e.status
                );
            }
            for o in &conversion.snapshot.objects {
                let _ = writeln!(out, "\ncounterset {}", o.name.as_deref().unwrap_or("?"));
                object_text(&mut out, o);
            }
        }
    }
    Ok(out)
}

fn counter_id_text(id: u32) -> String {
    if id == NO_COUNTER {
        "*".to_string()
    } else {
        id.to_string()
    }
}
