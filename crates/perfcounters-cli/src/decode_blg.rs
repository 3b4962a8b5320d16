//! `perfcounters decode x.blg`: a readable dump or a JSON document (one object per line after the
//! header, so memory stays flat) of a binary log: the log-file header, the counter list, the
//! embedded name table, every sample's raw values, the trailer and the warnings.
//! The JSON schema is in `docs/decode-json.md`.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use perfcounters::format::blg::timezone::resolve_name;
use perfcounters::format::blg::{BlgLog, CounterSpec, LogFileHeader, ReadError};
use perfcounters::snapshot::SystemTime;
use serde_json::json;

use crate::args::DecodeFormat;

fn local(ft: i64) -> String {
    let t = SystemTime::from_filetime(ft);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milliseconds
    )
}

fn iso_utc(ft: i64) -> String {
    let t = SystemTime::from_filetime(ft);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milliseconds
    )
}

fn iso_local(ft: i64) -> String {
    let t = SystemTime::from_filetime(ft);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milliseconds
    )
}

fn header_json(h: &LogFileHeader) -> serde_json::Value {
    let tz = &h.time_zone;
    json!({
        "os_build": h.os_build,
        "pointer_size": h.pointer_size,
        "buffer_size": h.buffer_size,
        "buffers_written": h.buffers_written,
        "log_file_mode": h.log_file_mode,
        "number_of_processors": h.number_of_processors,
        "perf_freq": h.perf_freq,
        "start_time": iso_utc(h.start_time),
        "end_time": if h.end_time == 0 { None } else { Some(iso_utc(h.end_time)) },
        "boot_time": if h.boot_time == 0 { None } else { Some(iso_utc(h.boot_time)) },
        "logger_name": h.logger_name,
        "log_file_name": h.log_file_name,
        "time_zone": {
            "bias": tz.bias,
            "standard_name": tz.standard_name,
            "standard_name_resolved": resolve_name(&tz.standard_name),
            "standard_bias": tz.standard_bias,
            "daylight_name": tz.daylight_name,
            "daylight_name_resolved": resolve_name(&tz.daylight_name),
            "daylight_bias": tz.daylight_bias,
        },
    })
}

fn spec_json(s: &CounterSpec) -> serde_json::Value {
    json!({
        "path": s.path().to_string(),
        "flags": s.flags,
        "user_data": s.user_data,
        "type": s.counter_type.0,
        "type_name": s.counter_type.name(),
        "time_base": s.time_base,
        "default_scale": s.default_scale,
        "machine": s.machine,
        "object": s.object,
        "instance": s.instance,
        "parent": s.parent,
        "instance_index": s.instance_index,
        "counter": s.counter,
    })
}

fn header_text(out: &mut impl Write, path: &Path, h: &LogFileHeader) -> std::io::Result<()> {
    let tz = &h.time_zone;
    writeln!(out, "Binary log {}", path.display())?;
    writeln!(
        out,
        "  writer: Windows build {}, {}-bit, {} processor(s), PerfFreq {} Hz",
        h.os_build,
        h.pointer_size * 8,
        h.number_of_processors,
        h.perf_freq
    )?;
    writeln!(
        out,
        "  started {} UTC, closed {}",
        local(h.start_time),
        if h.end_time == 0 {
            "never".to_string()
        } else {
            format!("{} UTC", local(h.end_time))
        }
    )?;
    writeln!(
        out,
        "  time zone: {} / {} (bias {}, standard {:+}, daylight {:+})",
        resolve_name(&tz.standard_name),
        resolve_name(&tz.daylight_name),
        tz.bias,
        tz.standard_bias,
        tz.daylight_bias
    )?;
    writeln!(
        out,
        "  {} buffers of {} bytes, mode {:#x}{}",
        h.buffers_written,
        h.buffer_size,
        h.log_file_mode,
        if h.is_circular() { " (circular)" } else { "" }
    )?;
    writeln!(
        out,
        "  logger {}, written as {}",
        h.logger_name, h.log_file_name
    )
}

/// Writes the dump of the binary log at `path` to `out`.
pub fn decode(path: &Path, format: DecodeFormat, out: &mut impl Write) -> Result<()> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let err = |e: ReadError| anyhow!("{}: {e}", path.display());
    let mut log = BlgLog::new(BufReader::with_capacity(1 << 16, file)).map_err(err)?;
    let json = format == DecodeFormat::Json;
    if json {
        let head = json!({
            "format": "blg",
            "header": header_json(log.header()),
            "counter_list_offset": log.counter_list_offset(),
            "counters": log.specs().iter().map(spec_json).collect::<Vec<_>>(),
            "names": log.names().len(),
        });
        writeln!(out, "{head}")?;
    } else {
        header_text(out, path, log.header())?;
        writeln!(
            out,
            "\ncounter list (offset {}): {} entries",
            log.counter_list_offset(),
            log.specs().len()
        )?;
        for (i, s) in log.specs().iter().enumerate() {
            writeln!(
                out,
                "  [{i}] {}  {} ({:#010x})  time base {}  scale {}  flags {:#x}",
                s.path(),
                s.counter_type.name().unwrap_or("?"),
                s.counter_type.0,
                s.time_base,
                s.default_scale,
                s.flags
            )?;
        }
        if !log.names().is_empty() {
            writeln!(
                out,
                "\nembedded name table: {} names (last index {})",
                log.names().len(),
                log.names().base_index().unwrap_or(0)
            )?;
        }
        writeln!(out)?;
    }
    let mut failure = None;
    loop {
        let sample = match log.next_sample() {
            None => break,
            Some(Err(e)) => {
                failure = Some(e);
                break;
            }
            Some(Ok(s)) => s,
        };
        let (index, time, record_time, offset) =
            (sample.index, sample.time, sample.record_time, sample.offset);
        let values: Vec<_> = sample.values.to_vec();
        let columns = log.columns();
        if json {
            let vals: Vec<_> = values
                .iter()
                .map(|v| {
                    json!({
                        "column": v.column,
                        "status": v.status.0,
                        "first": v.raw.first,
                        "second": v.raw.second,
                        "multi_count": v.raw.multi_count,
                    })
                })
                .collect();
            let line = json!({
                "sample": index,
                "time": iso_local(time),
                "record_time": iso_local(record_time),
                "offset": offset,
                "values": vals,
            });
            writeln!(out, "{line}")?;
        } else {
            writeln!(
                out,
                "sample {index} at {} (record at offset {offset}{}): {} values",
                local(time),
                if record_time == time {
                    String::new()
                } else {
                    format!(", event time {}", local(record_time))
                },
                values.len()
            )?;
            for v in &values {
                let path = columns
                    .get(v.column)
                    .map_or_else(|| "?".to_string(), |c| c.path.to_string());
                let status = if v.status.is_success() {
                    String::new()
                } else {
                    format!(
                        "  status {:#010x} {}",
                        v.status.0,
                        v.status.name().unwrap_or("")
                    )
                };
                writeln!(
                    out,
                    "  {path}  first {} second {} multi {}{status}",
                    v.raw.first, v.raw.second, v.raw.multi_count
                )?;
            }
        }
    }
    let columns: Vec<_> = log
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.clone()))
        .collect();
    let warnings: Vec<String> = log.warnings().iter().map(|w| w.to_string()).collect();
    let failure = failure.map(|e| e.to_string());
    if json {
        let tail = json!({
            "samples": log.samples_read(),
            "time_range": log.time_range().map(|(a, b)| [iso_local(a), iso_local(b)]),
            "columns": columns.iter().map(|(i, c)| json!({
                "column": i,
                "path": c.path.to_string(),
                "entry": c.entry,
                "type": c.info.counter_type.0,
                "time_base": c.info.time_base,
                "default_scale": c.info.default_scale,
                "first_sample": c.first_sample,
            })).collect::<Vec<_>>(),
            "display_order": log.display_order(),
            "trailer": log.trailer().map(|t| json!({
                "first_time": iso_local(t.first_time),
                "last_time": iso_local(t.last_time),
                "samples": t.samples,
                "entries": t.entries,
                "offset": t.offset,
            })),
            "warnings": warnings,
            "error": failure,
        });
        writeln!(out, "{tail}")?;
    } else {
        writeln!(
            out,
            "\n{} samples{}, {} columns",
            log.samples_read(),
            log.time_range()
                .map(|(a, b)| format!(" from {} to {}", local(a), local(b)))
                .unwrap_or_default(),
            columns.len()
        )?;
        if let Some(t) = log.trailer() {
            writeln!(
                out,
                "trailer (offset {}): {} samples from {} to {}, {} entries",
                t.offset,
                t.samples,
                local(t.first_time),
                local(t.last_time),
                t.entries
            )?;
        }
        for w in &warnings {
            writeln!(out, "warning: {w}")?;
        }
        if let Some(f) = &failure {
            writeln!(out, "error: {f}")?;
        }
    }
    out.flush()?;
    match failure {
        Some(f) => Err(anyhow!("{}: {f}", path.display())),
        None => Ok(()),
    }
}
