//! Recording a [`Capture`] from a [`WindowsSource`]: the raw blocks, name tables and V2 registrations
//! exactly as the system returned them, so the data replays anywhere.

use std::time::Duration;

use super::perflib::PerfLibApi;
use super::registry::PerfRegistry;
use super::WindowsSource;
use crate::format::capture::{
    Capture, CaptureInfo, CaptureSample, NameKind, NameTableFile, ENGLISH,
};
use crate::path::eq_ignore_case;
use crate::source::{Request, Source, SourceError};

/// What to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordOptions {
    /// Objects or countersets by English name; empty records the registry's `"Global"` block.
    pub objects: Vec<String>,
    /// How many samples (at least one is taken).
    pub samples: usize,
    /// The pause between samples.
    pub interval: Duration,
}

/// Records `options.samples` samples from `source`.
///
/// * `info` is stored as given, except that an empty `machine` becomes the system name of the data.
/// * `nls_language` names the user's language tables (`HKEY_PERFORMANCE_NLSTEXT`) in the capture,
///   e.g. `"007"`; when it is English (`"009"`) they are not stored twice.
/// * `sleep` waits between samples (injectable for tests).
///
/// Errors: an empty machine (see [`Source::catalog`]), an object the machine does not offer, or a
/// failed collection.
pub fn record<R: PerfRegistry, P: PerfLibApi>(
    source: &mut WindowsSource<R, P>,
    options: &RecordOptions,
    mut info: CaptureInfo,
    nls_language: &str,
    sleep: &mut dyn FnMut(Duration),
) -> Result<Capture, SourceError> {
    let catalog = source.catalog()?;
    let mut request = Request::new();
    for name in &options.objects {
        let object = catalog
            .object(name)
            .ok_or_else(|| SourceError::unknown_object(name))?;
        request = request.all_of(&object.name);
    }
    let mut samples = Vec::new();
    for i in 0..options.samples.max(1) {
        if i > 0 {
            sleep(options.interval);
        }
        if request.objects.is_empty() {
            let block = source.registry().query_block("Global")?.to_vec();
            samples.push(CaptureSample {
                v1: Some(block),
                v2: None,
            });
        } else {
            source.collect(&request)?;
            let (v1, v2) = source.last_blocks();
            samples.push(CaptureSample {
                v1: v1.map(<[u8]>::to_vec),
                v2: v2.map(<[u8]>::to_vec),
            });
        }
    }
    let raw = source.registry().raw_name_tables().clone();
    let mut names = Vec::new();
    let mut add = |kind, language: &str, bytes: Option<Vec<u8>>| {
        if let Some(bytes) = bytes {
            names.push(NameTableFile {
                kind,
                language: language.to_string(),
                bytes,
            });
        }
    };
    add(NameKind::Counter, ENGLISH, raw.counter);
    add(NameKind::Help, ENGLISH, raw.help);
    if nls_language != ENGLISH && !nls_language.is_empty() {
        add(NameKind::Counter, nls_language, raw.nls_counter);
        add(NameKind::Help, nls_language, raw.nls_help);
    }
    let any_v2 = samples.iter().any(|s| s.v2.is_some());
    let mut registrations = Vec::new();
    if any_v2 {
        for wanted in &request.objects {
            if let Some(r) = source.perflib().registrations().find(|r| {
                r.registration
                    .name
                    .as_deref()
                    .is_some_and(|n| eq_ignore_case(n, &wanted.object))
            }) {
                registrations.push(r.raw.clone());
            }
        }
    }
    if info.machine.is_empty() {
        info.machine = source.system_name().to_string();
    }
    Ok(Capture {
        info,
        names,
        registrations,
        v2_counters: any_v2.then(|| source.perflib().last_counter_info().to_vec()),
        samples,
    })
}
