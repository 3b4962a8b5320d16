//! `perfcounters decode FILE|DIR`: a readable dump or a stable JSON document of a raw V1 or V2 block,
//! of a binary log (`.blg`, see [`crate::decode_blg`]), or of every sample of a capture directory.
//! The JSON schema is documented in `docs/decode-json.md`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use perfcounters::format::capture::sample_path;
use perfcounters::format::v1::PerfDataBlock;
use perfcounters::format::v2::{
    BlockData, BlockStatus, CounterSetRegistration, DataHeader, InstanceData, QueryData, NO_COUNTER,
};
use perfcounters::format::BlockKind;
use perfcounters::log::LogFormat;
use perfcounters::names::NameTable;
use perfcounters::snapshot::{Object, ObjectData, Snapshot, SystemTime, Value};
use perfcounters::source::replay::CaptureRecording;
use serde_json::{json, Value as Json};

use crate::args::DecodeFormat;

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
    if args.file.is_dir() {
        if args.names.is_some() {
            bail!(
                "--names applies to block files; the capture {} carries its own name tables",
                args.file.display()
            );
        }
        crate::print_out(&capture(&args.file, args.format)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let log_format = match args.file.to_str().and_then(LogFormat::from_name) {
        Some(LogFormat::Sql) => Some(LogFormat::Sql),
        // A file that cannot be read is reported by the block decoding below.
        _ => LogFormat::of_file(&args.file).ok().flatten(),
    };
    if let Some(f) = log_format.filter(|f| *f != LogFormat::Binary) {
        bail!(
            "{} is a {f} log, not raw data: read it with `perfcounters relog {}`",
            args.file.display(),
            args.file.display()
        );
    }
    if log_format == Some(LogFormat::Binary) {
        if args.names.is_some() {
            bail!(
                "--names applies to block files; the binary log {} names its counters itself",
                args.file.display()
            );
        }
        let stdout = std::io::stdout();
        crate::decode_blg::decode(&args.file, args.format, &mut stdout.lock())?;
        return Ok(ExitCode::SUCCESS);
    }
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let mut names = NameTable::builtin_english().clone();
    if let Some(p) = &args.names {
        let table = NameTable::load(p)
            .with_context(|| format!("cannot read name table {}", p.display()))?;
        names.merge(&table);
    }
    let text = match BlockKind::detect(&bytes) {
        Some(BlockKind::V1) => {
            let block = PerfDataBlock::parse(&bytes)
                .map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
            let mut snapshot = block
                .to_snapshot()
                .map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
            names.apply(&mut snapshot);
            match args.format {
                DecodeFormat::Json => serde_json::to_string_pretty(&v1_json(&snapshot))? + "\n",
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

fn value_json(v: &Value) -> Json {
    match v {
        Value::U32(x) => json!(x),
        Value::U64(x) => json!(x),
        Value::Bytes(_) => Json::Null,
    }
}

/// The V1 JSON document (see docs/decode-json.md).
pub fn v1_json(s: &Snapshot) -> Json {
    let objects = objects_json(&s.objects);
    let t = &s.system_time;
    json!({
        "format": "v1",
        "system_name": s.system_name,
        "system_time": iso_time(t),
        "perf_time": s.perf_time,
        "perf_freq": s.perf_freq,
        "perf_time_100ns": s.perf_time_100ns,
        "objects": objects,
    })
}

/// The `objects` array of the V1 document (also used for the V2 samples of a capture).
fn objects_json(objects: &[Object]) -> Vec<Json> {
    objects
        .iter()
        .map(|o| {
            let counters: Vec<Json> = o
                .counters
                .iter()
                .map(|c| {
                    json!({
                        "index": c.index,
                        "name": c.name,
                        "help_index": c.help_index,
                        "type": c.counter_type.0,
                        "type_name": c.counter_type.name(),
                        "size": c.size,
                        "offset": c.offset,
                        "scale": c.scale,
                        "detail_level": c.detail_level,
                        "base": c.base,
                    })
                })
                .collect();
            let mut obj = json!({
                "index": o.index,
                "name": o.name,
                "help_index": o.help_index,
                "detail_level": o.detail_level,
                "default_counter": o.default_counter,
                "code_page": o.code_page,
                "perf_time": o.perf_time,
                "perf_freq": o.perf_freq,
                "counters": counters,
            });
            let m = obj.as_object_mut().expect("object literal");
            match &o.data {
                ObjectData::Single(values) => {
                    m.insert("num_instances".into(), json!(-1));
                    m.insert(
                        "values".into(),
                        Json::Array(values.iter().map(value_json).collect()),
                    );
                }
                ObjectData::Instances(list) => {
                    m.insert("num_instances".into(), json!(list.len()));
                    let instances: Vec<Json> = list
                        .iter()
                        .map(|i| {
                            json!({
                                "name": i.name(),
                                "raw_name": i.raw_name(),
                                "parent_object": i.parent_object,
                                "parent_instance": i.parent_instance,
                                "unique_id": i.unique_id,
                                "values": i.values().iter().map(value_json).collect::<Vec<_>>(),
                            })
                        })
                        .collect();
                    m.insert("instances".into(), Json::Array(instances));
                }
                ObjectData::MetadataOnly { multiple_instances } => {
                    m.insert(
                        "num_instances".into(),
                        json!(if *multiple_instances { -2 } else { -3 }),
                    );
                }
            }
            obj
        })
        .collect()
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for a UTC `SYSTEMTIME`.
fn iso_time(t: &SystemTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milliseconds
    )
}

/// `YYYY-MM-DD HH:MM:SS.mmm` for a `SYSTEMTIME`, as the text dumps show it.
fn text_time(t: &SystemTime) -> String {
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milliseconds
    )
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

fn data_type_name(t: u32) -> &'static str {
    match t {
        0 => "PERF_ERROR_RETURN",
        1 => "PERF_SINGLE_COUNTER",
        2 => "PERF_MULTIPLE_COUNTERS",
        4 => "PERF_MULTIPLE_INSTANCES",
        6 => "PERF_COUNTERSET",
        _ => "unknown",
    }
}

fn instances_json(list: &[InstanceData]) -> Json {
    Json::Array(
        list.iter()
            .map(|i| json!({"id": i.id, "name": i.name, "values": i.values.iter().map(value_json).collect::<Vec<_>>()}))
            .collect(),
    )
}

/// The V2 JSON document: the `PERF_DATA_HEADER` and every `PERF_COUNTER_HEADER` block with its ids,
/// instances and raw values (a data block alone carries no counter types or names).
pub fn v2_json(q: &QueryData) -> Json {
    let blocks: Vec<Json> = q
        .blocks
        .iter()
        .enumerate()
        .map(|(index, b)| {
            let t = b.data.data_type();
            let mut o = json!({"index": index, "status": b.status, "type": t, "type_name": data_type_name(t)});
            let m = o.as_object_mut().expect("object literal");
            match &b.data {
                BlockData::Error => {}
                BlockData::Single(v) => {
                    m.insert("value".into(), value_json(v));
                }
                BlockData::MultipleCounters(list) => {
                    m.insert("counter_ids".into(), json!(list.iter().map(|(id, _)| id).collect::<Vec<_>>()));
                    m.insert("values".into(), Json::Array(list.iter().map(|(_, v)| value_json(v)).collect()));
                }
                BlockData::MultipleInstances(list) => {
                    m.insert("instances".into(), instances_json(list));
                }
                BlockData::CounterSet { counter_ids, instances } => {
                    m.insert("counter_ids".into(), json!(counter_ids));
                    m.insert("instances".into(), instances_json(instances));
                }
            }
            o
        })
        .collect();
    let t = &q.system_time;
    json!({
        "format": "v2",
        "system_time": iso_time(t),
        "perf_time": q.perf_time_stamp,
        "perf_freq": q.perf_freq,
        "perf_time_100ns": q.perf_time_100ns,
        "blocks": blocks,
    })
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
        DecodeFormat::Json => serde_json::to_string_pretty(&v2_json(&q))? + "\n",
        DecodeFormat::Text => v2_text(&q),
    })
}

fn counter_id_json(id: u32) -> Json {
    if id == NO_COUNTER {
        Json::Null
    } else {
        json!(id)
    }
}

/// The `countersets` array of the capture document: each registration as decoded.
fn registrations_json(regs: &[CounterSetRegistration]) -> Json {
    Json::Array(
        regs.iter()
            .map(|r| {
                let counters: Vec<Json> = r
                    .counters
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "name": c.name,
                            "help": c.help,
                            "type": c.counter_type.0,
                            "type_name": c.counter_type.name(),
                            "attrib": c.attrib,
                            "detail_level": c.detail_level,
                            "scale": c.default_scale,
                            "base_counter_id": counter_id_json(c.base_counter_id),
                            "perf_time_id": counter_id_json(c.perf_time_id),
                            "perf_freq_id": counter_id_json(c.perf_freq_id),
                            "multi_id": counter_id_json(c.multi_id),
                            "aggregate_func": c.aggregate_func,
                        })
                    })
                    .collect();
                json!({
                    "guid": r.guid.to_string(),
                    "name": r.name,
                    "help": r.help,
                    "instance_type": r.instance_type,
                    "detail_level": r.detail_level,
                    "counters": counters,
                })
            })
            .collect(),
    )
}

fn block_errors_json(errors: &[BlockStatus]) -> Json {
    Json::Array(
        errors
            .iter()
            .map(|e| {
                json!({
                    "index": e.index,
                    "guid": e.guid.to_string(),
                    "counter_id": counter_id_json(e.counter_id),
                    "status": e.status,
                })
            })
            .collect(),
    )
}

/// `decode DIR`: every sample of a capture, V1 blocks named from the capture's English table and V2
/// blocks converted with its registrations.
fn capture(dir: &Path, format: DecodeFormat) -> Result<String> {
    use std::fmt::Write;
    let recording = CaptureRecording::open(dir)?;
    let c = recording.capture();
    let name_files: Vec<String> = c
        .names
        .iter()
        .map(|n| n.file_name().trim_end_matches(".msz").to_string())
        .collect();
    let raw_v2 = |number: usize, bytes: &[u8]| -> Result<QueryData> {
        let header = DataHeader::parse(bytes)
            .map_err(|e| anyhow!("{}: {e}", dir.join(sample_path(number, true)).display()))?;
        QueryData::from_header(&header)
            .map_err(|e| anyhow!("{}: {e}", dir.join(sample_path(number, true)).display()))
    };
    if format == DecodeFormat::Json {
        let mut samples = Vec::new();
        for (i, sample) in c.samples.iter().enumerate() {
            let parts = recording.sample_snapshots(i)?;
            let v1 = parts.v1.as_ref().map(v1_json).unwrap_or(Json::Null);
            let v2 = match (&sample.v2, &parts.v2) {
                (Some(bytes), Some(conversion)) => {
                    let mut doc = v2_json(&raw_v2(i + 1, bytes)?);
                    if let Some(m) = doc.as_object_mut() {
                        m.insert(
                            "objects".into(),
                            Json::Array(objects_json(&conversion.snapshot.objects)),
                        );
                        m.insert("block_errors".into(), block_errors_json(&conversion.errors));
                    }
                    doc
                }
                _ => Json::Null,
            };
            samples.push(json!({ "number": i + 1, "v1": v1, "v2": v2 }));
        }
        let names: Vec<Json> = c
            .names
            .iter()
            .map(|n| {
                json!({
                    "kind": n.kind.as_str(),
                    "language": n.language,
                    "file": format!("names/{}", n.file_name()),
                    "bytes": n.bytes.len(),
                })
            })
            .collect();
        let doc = json!({
            "format": "capture",
            "version": 1,
            "machine": c.info.machine,
            "os": c.info.os,
            "created": c.info.created,
            "tool": c.info.tool,
            "names": names,
            "countersets": registrations_json(recording.registrations()),
            "samples": samples,
        });
        return Ok(serde_json::to_string_pretty(&doc)? + "\n");
    }
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
            let q = raw_v2(i + 1, bytes)?;
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
