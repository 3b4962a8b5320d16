//! `perfcounters decode x.blg`: a readable dump or a JSON document (one object per line after the
//! header, so memory stays flat) of a binary log: the log-file header, the counter list, the
//! embedded name table, every sample's raw values, the trailer and the warnings.
//! The JSON schema is in `docs/decode-json.md`.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use perfcounters::format::blg::timezone::resolve_name;
use perfcounters::format::blg::{BlgLog, Column, LogFileHeader, ReadError, SampleValue};
use perfcounters::snapshot::SystemTime;
use perfcounters::time_text::TimeStyle;
use perfcounters::ErrorChain;

use crate::args::DecodeFormat;
use crate::decode_json as json;

/// A FILETIME as the readable dump shows it, `2013-02-19 18:50:17.844`.
fn local(ft: i64) -> String {
    TimeStyle::Sql.format(&SystemTime::from_filetime(ft))
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
    let err = |e: ReadError| anyhow::Error::new(e).context(path.display().to_string());
    let mut log = BlgLog::new(BufReader::with_capacity(1 << 16, file)).map_err(err)?;
    let json = format == DecodeFormat::Json;
    if json {
        head_json(out, &log)?;
    } else {
        head_text(out, path, &log)?;
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
        if json {
            let line = json::BlgSample {
                offset,
                record_time: json::blg_local(record_time),
                sample: index,
                time: json::blg_local(time),
                values: values.iter().map(json::BlgValue::new).collect(),
            };
            writeln!(out, "{}", serde_json::to_string(&line)?)?;
        } else {
            sample_text(
                out,
                log.columns(),
                (index, time, record_time, offset),
                &values,
            )?;
        }
    }
    let failure = failure.map(|e| ErrorChain(&e).to_string());
    if json {
        tail_json(out, &log, failure.clone())?;
    } else {
        tail_text(out, &log, failure.as_deref())?;
    }
    out.flush()?;
    match failure {
        Some(f) => Err(anyhow!("{}: {f}", path.display())),
        None => Ok(()),
    }
}

/// The first line of the JSON dump: the header, the counter list and the embedded name table's size.
fn head_json<R: Read>(out: &mut impl Write, log: &BlgLog<R>) -> Result<()> {
    let head = json::BlgHead {
        counter_list_offset: log.counter_list_offset(),
        counters: log.specs().iter().map(json::BlgSpec::new).collect(),
        format: "blg",
        header: json::BlgHeader::new(log.header()),
        names: log.names().len(),
    };
    writeln!(out, "{}", serde_json::to_string(&head)?)?;
    Ok(())
}

/// The readable header, counter list and embedded name table's size.
fn head_text<R: Read>(out: &mut impl Write, path: &Path, log: &BlgLog<R>) -> std::io::Result<()> {
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
    writeln!(out)
}

/// One sample of the readable dump: (number, time, record time, offset) and its values.
fn sample_text(
    out: &mut impl Write,
    columns: &[Column],
    (index, time, record_time, offset): (u64, i64, i64, usize),
    values: &[SampleValue],
) -> std::io::Result<()> {
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
    for v in values {
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
    Ok(())
}

fn warnings<R: Read>(log: &BlgLog<R>) -> Vec<String> {
    log.warnings().iter().map(|w| w.to_string()).collect()
}

/// The last line of the JSON dump: the columns, the trailer, the warnings and the error.
fn tail_json<R: Read>(
    out: &mut impl Write,
    log: &BlgLog<R>,
    failure: Option<String>,
) -> Result<()> {
    let display_order = log.display_order();
    let tail = json::BlgTail {
        columns: log
            .columns()
            .iter()
            .enumerate()
            .map(|(i, c)| json::BlgColumn::new(i, c))
            .collect(),
        display_order: &display_order,
        error: failure,
        samples: log.samples_read(),
        time_range: log
            .time_range()
            .map(|(a, b)| [json::blg_local(a), json::blg_local(b)]),
        trailer: log.trailer().as_ref().map(json::BlgTrailer::new),
        warnings: warnings(log),
    };
    writeln!(out, "{}", serde_json::to_string(&tail)?)?;
    Ok(())
}

/// The readable summary: samples, columns, trailer, warnings and error.
fn tail_text<R: Read>(
    out: &mut impl Write,
    log: &BlgLog<R>,
    failure: Option<&str>,
) -> std::io::Result<()> {
    writeln!(
        out,
        "\n{} samples{}, {} columns",
        log.samples_read(),
        log.time_range()
            .map(|(a, b)| format!(" from {} to {}", local(a), local(b)))
            .unwrap_or_default(),
        log.columns().len()
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
    for w in &warnings(log) {
        writeln!(out, "warning: {w}")?;
    }
    if let Some(f) = failure {
        writeln!(out, "error: {f}")?;
    }
    Ok(())
}
