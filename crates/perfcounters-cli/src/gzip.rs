//! gzip of an HTTP body, for `/metrics` answers and OTLP requests alike, at flate2's fastest level
//! (a body is compressed on every scrape or push, and sent once).

use std::cell::RefCell;

use flate2::{Compress, Compression, FlushCompress, Status};

thread_local! {
    /// One compressor per thread, reset for each body. A new one allocates its window, chains and
    /// hash table and zeroes them (about 256 KB), which cost as much as compressing a push's
    /// body; a reset zeroes only the hash table.
    static COMPRESSOR: RefCell<Option<Compress>> = const { RefCell::new(None) };
}

/// `body` gzip-compressed (the gzip header and trailer zlib writes, a 32 KB window).
pub fn gzip(body: &[u8]) -> Vec<u8> {
    COMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        let compress = slot.get_or_insert_with(|| Compress::new_gzip(Compression::fast(), 15));
        compress.reset();
        let mut out = Vec::with_capacity(body.len() / 4 + 64);
        loop {
            let read = usize::try_from(compress.total_in()).unwrap_or(body.len());
            let input = body.get(read..).unwrap_or_default();
            match compress.compress_vec(input, &mut out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => return out,
                // More room for the output (the input is all given at once).
                Ok(Status::Ok | Status::BufError) => out.reserve(out.capacity().max(64)),
                // Compressing into memory does not fail; should it, the compressor is dropped
                // and the body compressed by a new one.
                Err(_) => {
                    *slot = None;
                    return once(body);
                }
            }
        }
    })
}

/// `body` gzip-compressed by a compressor of its own.
fn once(body: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), Compression::fast());
    // Writing into a Vec does not fail, nor does finishing into it.
    let _ = enc.write_all(body);
    enc.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{gzip, once};
    use std::io::Read;

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .expect("a gzip stream");
        out
    }

    #[test]
    fn bodies_one_after_another_on_one_thread_decompress_to_themselves() {
        // Empty, small, one larger than the output's first guess (incompressible bytes), and a
        // text like /metrics, each twice: the compressor kept between them starts afresh.
        let mut noise = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            noise.push(x as u8);
        }
        let text: String = (0..2_000)
            .map(|i| format!("perfcounters_processor_time{{cpu=\"{i}\"}} {}.25\n", i * 7))
            .collect();
        let bodies: [&[u8]; 4] = [b"", b"a", &noise, text.as_bytes()];
        for body in bodies.iter().chain(bodies.iter()) {
            let z = gzip(body);
            assert_eq!(&z[..2], &[0x1f, 0x8b], "gzip magic");
            assert_eq!(gunzip(&z), *body);
        }
        assert!(gzip(text.as_bytes()).len() < text.len() / 4);
        assert_eq!(gunzip(&once(text.as_bytes())), text.as_bytes());
    }
}
