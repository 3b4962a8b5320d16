//! An OTLP/HTTP receiver that accepts everything, for measuring a push: it answers every POST to
//! `/v1/metrics` with 200 and an empty `ExportMetricsServiceResponse`, without decoding, and
//! prints the requests and bytes it took when a request's body is empty (or every 100 requests).
//!
//! ```text
//! cargo run --release -p perfcounters-cli --example otlp_sink -- 127.0.0.1:4318
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;

#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    bytes: AtomicU64,
}

async fn receive(State(counts): State<Arc<Counts>>, body: Bytes) -> &'static [u8] {
    let n = counts.requests.fetch_add(1, Ordering::Relaxed) + 1;
    let bytes = counts.bytes.fetch_add(body.len() as u64, Ordering::Relaxed) + body.len() as u64;
    if n % 100 == 0 {
        eprintln!("{n} requests, {bytes} bytes");
    }
    b""
}

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:4318".into());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .unwrap_or_else(|e| panic!("cannot listen on {addr}: {e}"));
        eprintln!(
            "accepting OTLP on http://{}",
            listener.local_addr().expect("an address")
        );
        let app = axum::Router::new()
            .route("/v1/metrics", axum::routing::post(receive))
            .with_state(Arc::new(Counts::default()));
        axum::serve(listener, app).await.expect("serve");
    });
}
