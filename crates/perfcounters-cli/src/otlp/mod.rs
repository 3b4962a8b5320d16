//! OTLP push: where and how requests go (the OpenTelemetry environment variables and the flags that
//! override them), the HTTP client, and the delivery queue. What a request holds is the library's
//! (`perfcounters::export::otlp`).

pub mod client;
pub mod delivery;

use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use axum::http::Uri;
use perfcounters::export::otlp::{OtlpResource, DEFAULT_SERVICE_NAME};

/// The OTLP flags `serve` takes (relog reads the same settings from its own options).
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
pub struct OtlpFlags {
    /// Header of every OTLP request, NAME=VALUE (repeatable; adds to OTEL_EXPORTER_OTLP_HEADERS)
    #[arg(long = "otlp-header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
    /// OTLP request compression: gzip (default) or none (overrides OTEL_EXPORTER_OTLP_COMPRESSION)
    #[arg(long = "otlp-compression", value_name = "gzip|none")]
    pub compression: Option<String>,
    /// service.name of the OTLP resource (overrides OTEL_SERVICE_NAME)
    #[arg(long = "otlp-service-name", value_name = "NAME")]
    pub service_name: Option<String>,
    /// Resource attribute KEY=VALUE (repeatable; overrides OTEL_RESOURCE_ATTRIBUTES)
    #[arg(long = "otlp-resource", value_name = "KEY=VALUE")]
    pub resource: Vec<String>,
    /// Requests kept while the endpoint does not answer; the oldest are dropped beyond (live push)
    #[arg(long = "otlp-queue", value_name = "N", default_value_t = 64)]
    pub queue: usize,
    /// Seconds a request is retried (connection errors, 429, 503) before it is given up
    #[arg(long = "otlp-retry-for", value_name = "SECONDS")]
    pub retry_for: Option<f64>,
}

/// How requests are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// `Content-Encoding: gzip`.
    Gzip,
    /// None.
    None,
}

/// Where and how OTLP requests go, resolved from the environment and the flags.
#[derive(Clone, Debug)]
pub struct OtlpSettings {
    /// The full URL requests are posted to (`…/v1/metrics`).
    pub endpoint: Uri,
    /// Headers of every request.
    pub headers: Vec<(String, String)>,
    /// Compression.
    pub compression: Compression,
    /// The time one attempt may take.
    pub timeout: Duration,
    /// How long a request is retried before it is given up.
    pub retry_for: Duration,
    /// Requests kept while the endpoint does not answer.
    pub queue: usize,
    /// The resource.
    pub resource: OtlpResource,
    /// The push interval (live push).
    pub interval: Duration,
}

/// The endpoint when none is given: a Collector on this machine.
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// The path of metrics requests under a base endpoint.
pub const METRICS_PATH: &str = "/v1/metrics";

impl OtlpSettings {
    /// The settings from `endpoint` (a flag: a URL whose path is empty or `/` gets `/v1/metrics`
    /// appended), the OpenTelemetry variables that `env` returns, and `flags`, which override them.
    ///
    /// # Errors
    /// An endpoint that is not an `http://` or `https://` URL with a host, a protocol other than
    /// `http/protobuf`, an unknown compression, a header or attribute without `=`, a number that
    /// does not parse: each names the variable or flag.
    pub fn resolve(
        endpoint: Option<&str>,
        flags: &OtlpFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<OtlpSettings> {
        let var = |names: &[&str]| -> Option<(String, String)> {
            names.iter().find_map(|n| {
                env(n)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (n.to_string(), v))
            })
        };
        if let Some((name, value)) = var(&[
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ]) {
            match value.trim() {
                "http/protobuf" => {}
                "grpc" | "http/json" => bail!(
                    "{name}={value}: this build speaks OTLP/HTTP with protobuf only; set \
                     http/protobuf"
                ),
                other => bail!(
                    "{name}={other}: unknown OTLP protocol (expected http/protobuf, grpc or \
                     http/json)"
                ),
            }
        }
        let endpoint = match endpoint {
            Some(e) => {
                parse_endpoint(e, true).map_err(|m| anyhow!("OTLP endpoint \"{e}\": {m}"))?
            }
            None => match var(&["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]) {
                Some((n, v)) => parse_endpoint(&v, false).map_err(|m| anyhow!("{n}={v}: {m}"))?,
                None => match var(&["OTEL_EXPORTER_OTLP_ENDPOINT"]) {
                    Some((n, v)) => parse_base_endpoint(&v).map_err(|m| anyhow!("{n}={v}: {m}"))?,
                    None => parse_base_endpoint(DEFAULT_ENDPOINT).map_err(|m| anyhow!(m))?,
                },
            },
        };
        let mut headers = Vec::new();
        if let Some((n, v)) = var(&[
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ]) {
            headers = parse_pairs(&v).map_err(|m| anyhow!("{n}: {m}"))?;
        }
        for h in &flags.headers {
            let (k, v) = split_pair(h).map_err(|m| anyhow!("--otlp-header {h}: {m}"))?;
            headers.retain(|(name, _)| !name.eq_ignore_ascii_case(&k));
            headers.push((k, v));
        }
        for (k, v) in &headers {
            axum::http::HeaderName::try_from(k.as_str())
                .map_err(|_| anyhow!("OTLP header \"{k}\": not a valid header name"))?;
            axum::http::HeaderValue::try_from(v.as_str()).map_err(|_| {
                anyhow!("OTLP header \"{k}\": its value is not a valid header value")
            })?;
        }
        let compression = match (
            &flags.compression,
            var(&[
                "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
                "OTEL_EXPORTER_OTLP_COMPRESSION",
            ]),
        ) {
            (Some(c), _) => {
                parse_compression(c).map_err(|m| anyhow!("--otlp-compression {c}: {m}"))?
            }
            (None, Some((n, v))) => parse_compression(&v).map_err(|m| anyhow!("{n}={v}: {m}"))?,
            (None, None) => Compression::Gzip,
        };
        let timeout = match var(&[
            "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
        ]) {
            Some((n, v)) => millis(&v).map_err(|m| anyhow!("{n}={v}: {m}"))?,
            None => Duration::from_secs(10),
        };
        let interval = match var(&["OTEL_METRIC_EXPORT_INTERVAL"]) {
            Some((n, v)) => millis(&v).map_err(|m| anyhow!("{n}={v}: {m}"))?,
            None => Duration::from_secs(60),
        };
        let retry_for = match flags.retry_for {
            Some(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s),
            Some(s) => bail!("--otlp-retry-for {s}: expected a number of seconds >= 0"),
            None => Duration::from_secs(60),
        };
        if flags.queue == 0 {
            bail!("--otlp-queue 0: at least one request must be kept");
        }
        let mut resource = OtlpResource::local(host_name());
        if let Some((n, v)) = var(&["OTEL_RESOURCE_ATTRIBUTES"]) {
            resource.attributes = parse_pairs(&v).map_err(|m| anyhow!("{n}: {m}"))?;
        }
        for a in &flags.resource {
            let (k, v) = split_pair(a).map_err(|m| anyhow!("--otlp-resource {a}: {m}"))?;
            resource.attributes.retain(|(key, _)| *key != k);
            resource.attributes.push((k, v));
        }
        // service.name: the flag, OTEL_SERVICE_NAME, the attribute, the default.
        let from_attributes = resource
            .attributes
            .iter()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone());
        resource.service_name = flags
            .service_name
            .clone()
            .or_else(|| var(&["OTEL_SERVICE_NAME"]).map(|(_, v)| v))
            .or(from_attributes)
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.into());
        if let Some(h) = resource
            .attributes
            .iter()
            .find(|(k, _)| k == "host.name")
            .map(|(_, v)| v.clone())
        {
            resource.host_name = Some(h);
        }
        Ok(OtlpSettings {
            endpoint,
            headers,
            compression,
            timeout,
            retry_for,
            queue: flags.queue,
            resource,
            interval,
        })
    }
}

/// The process environment, for [`OtlpSettings::resolve`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// This machine's name, for `host.name`.
fn host_name() -> Option<String> {
    #[cfg(unix)]
    {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
    }
    #[cfg(not(unix))]
    {
        std::env::var("COMPUTERNAME").ok()
    }
}

/// A URL with an `http` or `https` scheme and a host; `/v1/metrics` appended to an empty path when
/// `base_if_bare`.
fn parse_endpoint(text: &str, base_if_bare: bool) -> Result<Uri, String> {
    let uri: Uri = text
        .trim()
        .parse()
        .map_err(|e| format!("not a URL ({e})"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(s) => return Err(format!("scheme {s}: expected http:// or https://")),
        None => return Err("no scheme: expected http://HOST:PORT or https://HOST:PORT".into()),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err("no host".into());
    }
    let bare = matches!(uri.path(), "" | "/");
    if base_if_bare && bare {
        return join(&uri, METRICS_PATH);
    }
    Ok(uri)
}

/// A base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`): `/v1/metrics` appended to its path.
fn parse_base_endpoint(text: &str) -> Result<Uri, String> {
    let uri = parse_endpoint(text, false)?;
    join(&uri, METRICS_PATH)
}

fn join(uri: &Uri, path: &str) -> Result<Uri, String> {
    let base = uri.path().trim_end_matches('/');
    let authority = uri.authority().map_or("", |a| a.as_str());
    let scheme = uri.scheme_str().unwrap_or("http");
    format!("{scheme}://{authority}{base}{path}")
        .parse()
        .map_err(|e| format!("not a URL ({e})"))
}

fn parse_compression(text: &str) -> Result<Compression, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "gzip" => Ok(Compression::Gzip),
        "none" => Ok(Compression::None),
        other => Err(format!(
            "unknown compression \"{other}\" (expected gzip or none)"
        )),
    }
}

fn millis(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err("expected a positive whole number of milliseconds".into()),
    }
}

/// `k1=v1,k2=v2` (the W3C baggage form of the OpenTelemetry variables; values percent-decoded).
fn parse_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, v) = split_pair(item)?;
        out.retain(|(key, _)| *key != k);
        out.push((k, percent_decode(&v)));
    }
    Ok(out)
}

fn split_pair(item: &str) -> Result<(String, String), String> {
    match item.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        Some(_) => Err(format!("\"{item}\" has no name before '='")),
        None => Err(format!("\"{item}\" is not NAME=VALUE")),
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(
        endpoint: Option<&str>,
        flags: &OtlpFlags,
        vars: &[(&str, &str)],
    ) -> Result<OtlpSettings> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        OtlpSettings::resolve(endpoint, flags, &move |n| {
            vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
        })
    }

    fn flags() -> OtlpFlags {
        OtlpFlags {
            queue: 64,
            ..OtlpFlags::default()
        }
    }

    #[test]
    fn endpoints() {
        let s = resolve(None, &flags(), &[]).unwrap();
        assert_eq!(s.endpoint.to_string(), "http://localhost:4318/v1/metrics");
        let s = resolve(Some("http://c:4318"), &flags(), &[]).unwrap();
        assert_eq!(s.endpoint.to_string(), "http://c:4318/v1/metrics");
        let s = resolve(Some("https://c/otlp/v1/metrics"), &flags(), &[]).unwrap();
        assert_eq!(s.endpoint.to_string(), "https://c/otlp/v1/metrics");
        let env = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318/prefix/"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", ""),
        ];
        let s = resolve(None, &flags(), &env).unwrap();
        assert_eq!(s.endpoint.to_string(), "http://base:4318/prefix/v1/metrics");
        let env = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:1/custom"),
        ];
        let s = resolve(None, &flags(), &env).unwrap();
        assert_eq!(s.endpoint.to_string(), "http://m:1/custom");
        // The flag overrides the variables.
        let s = resolve(Some("http://flag:2"), &flags(), &env).unwrap();
        assert_eq!(s.endpoint.to_string(), "http://flag:2/v1/metrics");
        let e = resolve(Some("localhost:4318"), &flags(), &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTLP endpoint \"localhost:4318\": no scheme: expected http://HOST:PORT or \
             https://HOST:PORT"
        );
        let e = resolve(Some("http://exa mple"), &flags(), &[]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("OTLP endpoint \"http://exa mple\": not a URL"),
            "{e}"
        );
        let e = resolve(
            None,
            &flags(),
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x")],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTEL_EXPORTER_OTLP_ENDPOINT=ftp://x: scheme ftp: expected http:// or https://"
        );
    }

    #[test]
    fn protocol_headers_compression() {
        let e = resolve(None, &flags(), &[("OTEL_EXPORTER_OTLP_PROTOCOL", "udp")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTEL_EXPORTER_OTLP_PROTOCOL=udp: unknown OTLP protocol (expected http/protobuf, \
             grpc or http/json)"
        );
        let e = resolve(None, &flags(), &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).unwrap_err();
        assert!(
            e.to_string().contains("OTLP/HTTP with protobuf only"),
            "{e}"
        );
        assert!(resolve(
            None,
            &flags(),
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")]
        )
        .is_ok());
        let env = [(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "api-key=secret%20one, X-Scope-OrgID=team",
        )];
        let mut f = flags();
        f.headers = vec!["x-scope-orgid=other".into()];
        let s = resolve(None, &f, &env).unwrap();
        assert_eq!(
            s.headers,
            [
                ("api-key".to_string(), "secret one".to_string()),
                ("x-scope-orgid".to_string(), "other".to_string())
            ]
        );
        let e = resolve(None, &flags(), &[("OTEL_EXPORTER_OTLP_HEADERS", "token")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTEL_EXPORTER_OTLP_HEADERS: \"token\" is not NAME=VALUE"
        );
        let mut f = flags();
        f.headers = vec!["Authorization".into()];
        let e = resolve(None, &f, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--otlp-header Authorization: \"Authorization\" is not NAME=VALUE"
        );
        assert_eq!(
            resolve(None, &flags(), &[]).unwrap().compression,
            Compression::Gzip
        );
        let s = resolve(
            None,
            &flags(),
            &[("OTEL_EXPORTER_OTLP_COMPRESSION", "none")],
        )
        .unwrap();
        assert_eq!(s.compression, Compression::None);
        let mut f = flags();
        f.compression = Some("gzip".into());
        let s = resolve(None, &f, &[("OTEL_EXPORTER_OTLP_COMPRESSION", "none")]).unwrap();
        assert_eq!(s.compression, Compression::Gzip);
        let e = resolve(
            None,
            &flags(),
            &[("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd")],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTEL_EXPORTER_OTLP_COMPRESSION=zstd: unknown compression \"zstd\" (expected gzip or \
             none)"
        );
    }

    #[test]
    fn resource_and_interval() {
        let env = [
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=prod,service.name=attr",
            ),
            ("OTEL_SERVICE_NAME", "env-name"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "15000"),
        ];
        let s = resolve(None, &flags(), &env).unwrap();
        assert_eq!(s.resource.service_name, "env-name");
        assert_eq!(s.interval, Duration::from_secs(15));
        assert_eq!(
            s.resource.attributes[0],
            ("deployment.environment".to_string(), "prod".to_string())
        );
        let mut f = flags();
        f.service_name = Some("flag-name".into());
        f.resource = vec!["deployment.environment=test".into()];
        let s = resolve(None, &f, &env).unwrap();
        assert_eq!(s.resource.service_name, "flag-name");
        assert!(s
            .resource
            .attributes
            .contains(&("deployment.environment".to_string(), "test".to_string())));
        let s = resolve(None, &flags(), &env[..1]).unwrap();
        assert_eq!(s.resource.service_name, "attr");
        let e = resolve(None, &flags(), &[("OTEL_METRIC_EXPORT_INTERVAL", "1s")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTEL_METRIC_EXPORT_INTERVAL=1s: expected a positive whole number of milliseconds"
        );
    }
}
