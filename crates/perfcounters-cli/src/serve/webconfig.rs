//! `--web.config.file`: TLS and basic authentication in the YAML form of the Prometheus
//! exporter-toolkit, so one file serves node_exporter, windows_exporter and `perfcounters serve`.
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert   # or NoClientCert (default), VerifyClientCertIfGiven
//!   client_ca_file: ca.crt
//!   min_version: TLS12                             # or TLS13
//! http_server_config:
//!   headers: {Strict-Transport-Security: max-age=31536000}
//! basic_auth_users:
//!   alice: $2y$10$...                              # bcrypt hash (htpasswd -nBC 10 alice)
//! ```
//!
//! TLS uses rustls with the ring provider. The toolkit's `cipher_suites`, `curve_preferences`,
//! `prefer_server_cipher_suites`, `max_version` and `http2` are accepted; rustls chooses suites and
//! curves itself, and the server speaks HTTP/1.1.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Context, Result};
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

/// The web configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    tls_server_config: Option<TlsServerConfig>,
    http_server_config: Option<HttpServerConfig>,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsServerConfig {
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_auth_type: Option<String>,
    client_ca_file: Option<PathBuf>,
    min_version: Option<String>,
    #[serde(default)]
    max_version: Option<String>,
    #[serde(default)]
    cipher_suites: Vec<String>,
    #[serde(default)]
    curve_preferences: Vec<String>,
    #[serde(default)]
    prefer_server_cipher_suites: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpServerConfig {
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    http2: Option<bool>,
}

/// What the server applies: TLS, users, extra response headers.
pub struct WebSettings {
    /// TLS, when configured.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Basic-auth users and their bcrypt hashes; empty = no authentication.
    pub auth: Option<BasicAuth>,
    /// Headers added to every response.
    pub headers: Vec<(String, String)>,
}

impl WebSettings {
    /// No TLS, no authentication.
    pub fn none() -> Self {
        WebSettings {
            tls: None,
            auth: None,
            headers: Vec::new(),
        }
    }

    /// Reads a web configuration file; relative certificate paths are relative to the file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read web config {}", path.display()))?;
        let config: WebConfig = serde_yaml_ng::from_str(&text)
            .with_context(|| format!("web config {}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        if config
            .http_server_config
            .as_ref()
            .is_some_and(|h| h.http2 == Some(true))
        {
            eprintln!("perfcounters serve: http_server_config: http2 is ignored; the server speaks HTTP/1.1");
        }
        Self::from_config(config, dir).with_context(|| format!("web config {}", path.display()))
    }

    fn from_config(config: WebConfig, dir: &Path) -> Result<Self> {
        let tls = match config.tls_server_config {
            Some(t) => Some(Arc::new(tls_config(&t, dir)?)),
            None => None,
        };
        for (user, hash) in &config.basic_auth_users {
            if !(hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$")) {
                bail!("basic_auth_users: the password of \"{user}\" is not a bcrypt hash ($2y$…)");
            }
        }
        let auth = (!config.basic_auth_users.is_empty()).then(|| BasicAuth {
            users: config.basic_auth_users,
            verified: Mutex::new(HashMap::new()),
        });
        Ok(WebSettings {
            tls,
            auth,
            headers: config
                .http_server_config
                .map(|h| h.headers.into_iter().collect())
                .unwrap_or_default(),
        })
    }
}

fn tls_config(t: &TlsServerConfig, dir: &Path) -> Result<rustls::ServerConfig> {
    let resolve = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        }
    };
    let cert_file = resolve(
        t.cert_file
            .as_deref()
            .ok_or_else(|| anyhow!("tls_server_config: cert_file is required"))?,
    );
    let key_file = resolve(
        t.key_file
            .as_deref()
            .ok_or_else(|| anyhow!("tls_server_config: key_file is required"))?,
    );
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_file)
        .and_then(|i| i.collect::<Result<_, _>>())
        .map_err(|e| anyhow!("{}: {e}", cert_file.display()))?;
    if certs.is_empty() {
        bail!("{}: no certificate", cert_file.display());
    }
    let key = PrivateKeyDer::from_pem_file(&key_file)
        .map_err(|e| anyhow!("{}: {e}", key_file.display()))?;
    let version = |field: &str, v: Option<&str>, default: u8| match v {
        None => Ok(default),
        Some("TLS12") => Ok(12),
        Some("TLS13") => Ok(13),
        Some(v @ ("TLS10" | "TLS11")) => Err(anyhow!(
            "tls_server_config: {field} {v} is not supported (rustls speaks TLS 1.2 and 1.3)"
        )),
        Some(v) => Err(anyhow!(
            "tls_server_config: unknown {field} \"{v}\" (TLS12 or TLS13)"
        )),
    };
    let min = version("min_version", t.min_version.as_deref(), 12)?;
    let max = version("max_version", t.max_version.as_deref(), 13)?;
    let versions: &[&rustls::SupportedProtocolVersion] = match (min, max) {
        (12, 13) => &[&rustls::version::TLS13, &rustls::version::TLS12],
        (12, 12) => &[&rustls::version::TLS12],
        (13, 13) => &[&rustls::version::TLS13],
        _ => bail!("tls_server_config: min_version is above max_version"),
    };
    if !t.cipher_suites.is_empty()
        || !t.curve_preferences.is_empty()
        || t.prefer_server_cipher_suites.is_some()
    {
        eprintln!(
            "perfcounters serve: tls_server_config: cipher_suites, curve_preferences and \
             prefer_server_cipher_suites are ignored; rustls offers only modern suites and curves"
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| anyhow!("tls_server_config: {e}"))?;
    let auth_type = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
    let builder = match auth_type {
        "NoClientCert" => builder.with_no_client_auth(),
        "RequireAndVerifyClientCert" | "VerifyClientCertIfGiven" | "RequireAnyClientCert" => {
            let ca = resolve(t.client_ca_file.as_deref().ok_or_else(|| {
                anyhow!("tls_server_config: client_auth_type {auth_type} needs client_ca_file")
            })?);
            let mut roots = rustls::RootCertStore::empty();
            for c in
                CertificateDer::pem_file_iter(&ca).map_err(|e| anyhow!("{}: {e}", ca.display()))?
            {
                roots
                    .add(c.map_err(|e| anyhow!("{}: {e}", ca.display()))?)
                    .map_err(|e| anyhow!("{}: {e}", ca.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if auth_type == "VerifyClientCertIfGiven" {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(
                verifier
                    .build()
                    .map_err(|e| anyhow!("tls_server_config: {e}"))?,
            )
        }
        "RequestClientCert" => builder.with_no_client_auth(),
        other => bail!("tls_server_config: unknown client_auth_type \"{other}\""),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| anyhow!("{} / {}: {e}", cert_file.display(), key_file.display()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Basic authentication against bcrypt hashes. A bcrypt check costs tens of milliseconds by design,
/// so a user and password that matched are remembered (as the exporter-toolkit does).
pub struct BasicAuth {
    users: BTreeMap<String, String>,
    verified: Mutex<HashMap<(String, String), bool>>,
}

impl BasicAuth {
    /// Whether an `Authorization` header value names a user with the right password.
    pub fn check(&self, header: Option<&str>) -> bool {
        let Some((user, password)) = header.and_then(parse_basic) else {
            return false;
        };
        let Some(hash) = self.users.get(&user) else {
            // Spend the same time as for a known user, so that user names cannot be probed.
            if let Some(any) = self.users.values().next() {
                let _ = bcrypt::verify(&password, any);
            }
            return false;
        };
        let key = (user.clone(), password.clone());
        if let Some(&ok) = self.verified.lock().expect("not poisoned").get(&key) {
            return ok;
        }
        let ok = bcrypt::verify(&password, hash).unwrap_or(false);
        let mut cache = self.verified.lock().expect("not poisoned");
        if cache.len() >= 256 {
            cache.clear();
        }
        cache.insert(key, ok);
        ok
    }
}

/// `Basic base64(user:password)` → (user, password).
fn parse_basic(header: &str) -> Option<(String, String)> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64_decode(rest.trim())?;
    let text = String::from_utf8(decoded).ok()?;
    let (u, p) = text.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_with_bcrypt_hashes() {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let config: WebConfig =
            serde_yaml_ng::from_str(&format!("basic_auth_users:\n  alice: '{hash}'\n")).unwrap();
        let settings = WebSettings::from_config(config, Path::new(".")).unwrap();
        let auth = settings.auth.unwrap();
        // "alice:s3cret", "alice:wrong", "bob:s3cret"
        assert!(auth.check(Some("Basic YWxpY2U6czNjcmV0")));
        assert!(auth.check(Some("basic YWxpY2U6czNjcmV0")));
        assert!(!auth.check(Some("Basic YWxpY2U6d3Jvbmc=")));
        assert!(!auth.check(Some("Basic Ym9iOnMzY3JldA==")));
        assert!(!auth.check(Some("Bearer x")));
        assert!(!auth.check(None));
        assert_eq!(
            parse_basic("Basic YTpiOmM="),
            Some(("a".into(), "b:c".into()))
        );
    }

    #[test]
    fn clear_errors() {
        let config: WebConfig =
            serde_yaml_ng::from_str("basic_auth_users:\n  alice: plain\n").unwrap();
        let e = WebSettings::from_config(config, Path::new("."))
            .err()
            .unwrap();
        assert!(e.to_string().contains("not a bcrypt hash"), "{e}");
        let e =
            serde_yaml_ng::from_str::<WebConfig>("tls_server_config:\n  cert: x\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `cert`"), "{e}");
        let config: WebConfig = serde_yaml_ng::from_str(
            "tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: k\n",
        )
        .unwrap();
        let e = WebSettings::from_config(config, Path::new("."))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent.crt"), "{e}");
    }
}
