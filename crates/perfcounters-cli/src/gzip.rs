//! gzip of an HTTP body, for `/metrics` answers and OTLP requests alike, at flate2's fastest level
//! (a body is compressed on every scrape or push, and sent once).

use std::io::Write;

/// `body` gzip-compressed.
pub fn gzip(body: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4 + 64),
        flate2::Compression::fast(),
    );
    // Writing into a Vec does not fail, nor does finishing into it.
    let _ = enc.write_all(body);
    enc.finish().unwrap_or_default()
}
