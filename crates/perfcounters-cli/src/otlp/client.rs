//! One OTLP/HTTP attempt: POST a protobuf body to the endpoint (one kept-alive HTTP/1.1
//! connection, plain or TLS through rustls) and classify the answer.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::http::{header, HeaderName, HeaderValue, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use perfcounters::export::otlp::proto::collector::metrics::v1::ExportMetricsServiceResponse;
use perfcounters::export::otlp::Message;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use super::{Compression, OtlpSettings};

/// What one attempt came to.
#[derive(Debug)]
pub enum Outcome {
    /// Accepted (2xx); `rejected` points and the receiver's message when it took only part.
    Accepted {
        /// `partial_success.rejected_data_points`.
        rejected: i64,
        /// `partial_success.error_message`.
        message: String,
    },
    /// Worth another try (a connection error, a timeout, 429, 502, 503, 504), after `after` when
    /// the receiver said so (`Retry-After`).
    Retry {
        /// Why.
        reason: String,
        /// `Retry-After`.
        after: Option<Duration>,
    },
    /// Refused for good (another status): the request is dropped.
    Refused {
        /// The status and the receiver's words.
        reason: String,
    },
}

/// The most of an answer's body that is read (an `ExportMetricsServiceResponse` is a few bytes).
const MAX_ANSWER: usize = 1 << 20;

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// An OTLP/HTTP client of one endpoint.
pub struct Client {
    endpoint: Uri,
    host: String,
    port: u16,
    tls: Option<(
        tokio_rustls::TlsConnector,
        rustls_pki_types::ServerName<'static>,
    )>,
    headers: Vec<(HeaderName, HeaderValue)>,
    compression: Compression,
    timeout: Duration,
    connection: Option<SendRequest<Full<Bytes>>>,
}

impl Client {
    /// A client for `settings` (TLS set up for an `https` endpoint: the system's roots, and the
    /// PEM file `OTEL_EXPORTER_OTLP_CERTIFICATE` names).
    pub fn new(settings: &OtlpSettings, ca_file: Option<&str>) -> anyhow::Result<Client> {
        let endpoint = settings.endpoint.clone();
        let https = endpoint.scheme_str() == Some("https");
        let host = endpoint.host().unwrap_or("localhost").to_string();
        let port = endpoint.port_u16().unwrap_or(if https { 443 } else { 80 });
        let tls = if https {
            Some(tls_connector(&host, ca_file)?)
        } else {
            None
        };
        let headers = settings
            .headers
            .iter()
            .map(|(k, v)| Ok((HeaderName::try_from(k.as_str())?, HeaderValue::try_from(v)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Client {
            endpoint,
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            tls,
            headers,
            compression: settings.compression,
            timeout: settings.timeout,
            connection: None,
        })
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Uri {
        &self.endpoint
    }

    /// The body as sent: gzip-compressed when configured.
    pub fn prepare(&self, body: Vec<u8>) -> Vec<u8> {
        match self.compression {
            Compression::None => body,
            Compression::Gzip => crate::gzip::gzip(&body),
        }
    }

    async fn connect(&mut self) -> Result<SendRequest<Full<Bytes>>, String> {
        if let Some(c) = self.connection.take() {
            if !c.is_closed() {
                return Ok(c);
            }
        }
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("cannot connect to {}:{}: {e}", self.host, self.port))?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn Io> = match &self.tls {
            None => Box::new(tcp),
            Some((connector, name)) => Box::new(
                connector
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| format!("TLS with {}: {e}", self.host))?,
            ),
        };
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| format!("HTTP with {}: {e}", self.host))?;
        tokio::spawn(connection);
        Ok(sender)
    }

    /// Posts `body` (already [`prepare`](Self::prepare)d) once.
    pub async fn post(&mut self, body: Bytes) -> Outcome {
        match tokio::time::timeout(self.timeout, self.attempt(body)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                self.connection = None;
                Outcome::Retry {
                    reason: format!("no answer within {:?}", self.timeout),
                    after: None,
                }
            }
        }
    }

    async fn attempt(&mut self, body: Bytes) -> Outcome {
        let mut sender = match self.connect().await {
            Ok(s) => s,
            Err(reason) => {
                return Outcome::Retry {
                    reason,
                    after: None,
                }
            }
        };
        let mut request = Request::post(self.endpoint.clone())
            .header(header::HOST, self.authority())
            .header(header::CONTENT_TYPE, "application/x-protobuf")
            .header(
                header::USER_AGENT,
                concat!("perfcounters/", env!("CARGO_PKG_VERSION")),
            );
        if self.compression == Compression::Gzip {
            request = request.header(header::CONTENT_ENCODING, "gzip");
        }
        for (k, v) in &self.headers {
            request = request.header(k, v);
        }
        let request = match request.body(Full::new(body)) {
            Ok(r) => r,
            Err(e) => {
                return Outcome::Refused {
                    reason: format!("request: {e}"),
                }
            }
        };
        let response = match sender.send_request(request).await {
            Ok(r) => r,
            Err(e) => {
                return Outcome::Retry {
                    reason: format!("sending to {}: {e}", self.endpoint),
                    after: None,
                }
            }
        };
        let status = response.status();
        let after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(retry_after);
        // An answer is a small protobuf message: a larger body is not read whole.
        let bytes = match http_body_util::Limited::new(response.into_body(), MAX_ANSWER)
            .collect()
            .await
        {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                return Outcome::Retry {
                    reason: format!("reading the answer of {}: {e}", self.endpoint),
                    after: None,
                }
            }
        };
        self.connection = Some(sender);
        classify(status, after, &bytes)
    }

    fn authority(&self) -> String {
        self.endpoint
            .authority()
            .map_or_else(|| self.host.clone(), |a| a.as_str().to_string())
    }
}

/// What a status and body come to.
fn classify(status: StatusCode, after: Option<Duration>, body: &[u8]) -> Outcome {
    if status.is_success() {
        let (rejected, message) = match ExportMetricsServiceResponse::decode(body) {
            Ok(r) => r.partial_success.map_or((0, String::new()), |p| {
                (p.rejected_data_points, p.error_message)
            }),
            Err(_) => (0, String::new()),
        };
        return Outcome::Accepted { rejected, message };
    }
    let words = String::from_utf8_lossy(&body[..body.len().min(300)])
        .trim()
        .to_string();
    let reason = if words.is_empty() || words.contains('\u{fffd}') {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {words}")
    };
    match status.as_u16() {
        429 | 502 | 503 | 504 => Outcome::Retry { reason, after },
        _ => Outcome::Refused { reason },
    }
}

/// `Retry-After`: seconds, or an HTTP date.
fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

fn tls_connector(
    host: &str,
    ca_file: Option<&str>,
) -> anyhow::Result<(
    tokio_rustls::TlsConnector,
    rustls_pki_types::ServerName<'static>,
)> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for cert in native.certs {
        let _ = roots.add(cert);
    }
    if let Some(file) = ca_file {
        for cert in CertificateDer::pem_file_iter(file)
            .map_err(|e| anyhow::anyhow!("OTEL_EXPORTER_OTLP_CERTIFICATE={file}: {e}"))?
        {
            let cert =
                cert.map_err(|e| anyhow::anyhow!("OTEL_EXPORTER_OTLP_CERTIFICATE={file}: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| anyhow::anyhow!("OTEL_EXPORTER_OTLP_CERTIFICATE={file}: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls_pki_types::ServerName::try_from(
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
    )
    .map_err(|e| anyhow::anyhow!("OTLP endpoint host {host}: {e}"))?;
    Ok((tokio_rustls::TlsConnector::from(Arc::new(config)), name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert!(matches!(
            classify(StatusCode::OK, None, b""),
            Outcome::Accepted { rejected: 0, .. }
        ));
        let partial = ExportMetricsServiceResponse {
            partial_success: Some(
                perfcounters::export::otlp::proto::collector::metrics::v1::ExportMetricsPartialSuccess {
                    rejected_data_points: 3,
                    error_message: "bad".into(),
                },
            ),
        }
        .encode_to_vec();
        match classify(StatusCode::OK, None, &partial) {
            Outcome::Accepted { rejected, message } => {
                assert_eq!((rejected, message.as_str()), (3, "bad"))
            }
            other => panic!("{other:?}"),
        }
        match classify(StatusCode::SERVICE_UNAVAILABLE, retry_after("2"), b"busy") {
            Outcome::Retry { reason, after } => {
                assert_eq!(reason, "HTTP 503 Service Unavailable: busy");
                assert_eq!(after, Some(Duration::from_secs(2)));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(StatusCode::TOO_MANY_REQUESTS, None, b""),
            Outcome::Retry { .. }
        ));
        assert!(matches!(
            classify(StatusCode::BAD_REQUEST, None, b"no"),
            Outcome::Refused { .. }
        ));
        assert_eq!(
            retry_after("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon"), None);
    }
}
