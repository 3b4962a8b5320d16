//! Text encodings of files written on Windows (logs, name tables): a byte-order mark (UTF-8,
//! UTF-16LE/BE), UTF-16LE without one (recognised by its zero bytes), or none at all and then either
//! UTF-8 or the ANSI code page of the machine that wrote the file.
//!
//! [`Transcoded`] turns any of them into a UTF-8 byte stream, a buffer at a time, so a log of any
//! length is read in constant memory.

use std::io::{self, BufRead, Read};

/// How the bytes of a text log are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextEncoding {
    /// UTF-8 (with or without a byte-order mark).
    Utf8,
    /// UTF-16, little-endian.
    Utf16Le,
    /// UTF-16, big-endian.
    Utf16Be,
    /// A Windows ANSI code page (1252 Western, 1251 Cyrillic, …).
    CodePage(u16),
}

impl TextEncoding {
    /// A short name for messages and summaries.
    pub fn describe(self) -> String {
        match self {
            TextEncoding::Utf8 => "UTF-8".into(),
            TextEncoding::Utf16Le => "UTF-16LE".into(),
            TextEncoding::Utf16Be => "UTF-16BE".into(),
            TextEncoding::CodePage(cp) => format!("code page {cp}"),
        }
    }

    fn encoding_rs(self) -> Option<&'static encoding_rs::Encoding> {
        match self {
            TextEncoding::Utf8 => None,
            TextEncoding::Utf16Le => Some(encoding_rs::UTF_16LE),
            TextEncoding::Utf16Be => Some(encoding_rs::UTF_16BE),
            TextEncoding::CodePage(cp) => codepage::to_encoding_no_replacement(cp),
        }
    }
}

/// Whether a Windows code page number is one this crate can decode.
pub fn code_page_supported(cp: u16) -> bool {
    codepage::to_encoding_no_replacement(cp).is_some()
}

/// The ANSI code page Windows most likely wrote `text` in (a log's header line that has no
/// byte-order mark and is not UTF-8), as the charset detector `chardetng` guesses it, moved to the
/// Windows code page of the same script where it names an ISO or Unix cousin (a Windows machine
/// writes its ANSI code page: ISO-8859-2 → 1250, KOI8-R → 1251, EUC-JP → 932 …).
///
/// The detector scores every candidate encoding on the byte pairs of each script (it was built for
/// web pages without a declared charset, and needs no more than a few words). A header line of a
/// few counter names is enough for 1250, 1251, 1252, 932, 936 and 949 (the tests build such
/// headers with `encoding_rs`); a guess that the text does not decode in without errors falls back
/// to 1252.
///
/// ```
/// use perfcounters::encoding::detect_code_page;
/// let (cyrillic, _, _) = encoding_rs::WINDOWS_1251.encode("\\\\SRV\\Процессор(_Total)\\% загруженности процессора");
/// assert_eq!(detect_code_page(&cyrillic), 1251);
/// ```
pub fn detect_code_page(text: &[u8]) -> u16 {
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(text, true);
    let guess = detector.guess(None, chardetng::Utf8Detection::Deny);
    let name = guess.name();
    let cp = match name {
        "ISO-8859-2" => 1250,
        "ISO-8859-5" | "KOI8-R" | "KOI8-U" | "IBM866" => 1251,
        "ISO-8859-7" => 1253,
        "ISO-8859-8" | "ISO-8859-8-I" => 1255,
        "ISO-8859-6" => 1256,
        "ISO-8859-4" | "ISO-8859-13" => 1257,
        "EUC-JP" | "ISO-2022-JP" => 932,
        "gb18030" => 936,
        _ => codepage::from_encoding(guess).unwrap_or(1252),
    };
    match codepage::to_encoding_no_replacement(cp) {
        Some(e) if !e.decode_without_bom_handling(text).1 => cp,
        _ => 1252,
    }
}

/// What the first bytes say: a byte-order mark (and its length), or UTF-16LE without one.
pub(crate) fn sniff_bom(start: &[u8]) -> Option<(TextEncoding, usize)> {
    match start {
        [0xEF, 0xBB, 0xBF, ..] => Some((TextEncoding::Utf8, 3)),
        [0xFF, 0xFE, ..] => Some((TextEncoding::Utf16Le, 2)),
        [0xFE, 0xFF, ..] => Some((TextEncoding::Utf16Be, 2)),
        // ASCII text in UTF-16LE without a mark: every second byte is zero.
        [a, 0, b, 0, ..] if *a != 0 && *b != 0 => Some((TextEncoding::Utf16Le, 0)),
        [0, a, 0, b, ..] if *a != 0 && *b != 0 => Some((TextEncoding::Utf16Be, 0)),
        _ => None,
    }
}

/// Reads from `r` up to and including the end of the first line that is not blank, at most `max`
/// bytes. Returns the bytes and whether a whole line was found.
pub(crate) fn read_first_line(r: &mut impl BufRead, max: usize) -> io::Result<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut line_start = 0usize;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((out, false));
        }
        let room = max.saturating_sub(out.len());
        if room == 0 {
            return Ok((out, false));
        }
        let take = buf.len().min(room);
        let chunk = buf.get(..take).unwrap_or(&[]);
        let mut consumed = take;
        let mut done = false;
        let mut pos = 0usize;
        while let Some(nl) = chunk
            .get(pos..)
            .and_then(|c| c.iter().position(|&b| b == b'\n'))
        {
            let end = pos + nl + 1;
            out.extend_from_slice(chunk.get(pos..end).unwrap_or(&[]));
            let line = out.get(line_start..).unwrap_or(&[]);
            if line.iter().any(|b| !b.is_ascii_whitespace()) {
                consumed = end;
                done = true;
                break;
            }
            line_start = out.len();
            pos = end;
        }
        if !done {
            out.extend_from_slice(chunk.get(pos..).unwrap_or(&[]));
        }
        r.consume(consumed);
        if done {
            return Ok((out, true));
        }
    }
}

/// A UTF-8 view of a byte stream in another encoding.
pub struct Transcoded<R> {
    inner: R,
    decoder: Option<encoding_rs::Decoder>,
    input: Vec<u8>,
    in_pos: usize,
    in_len: usize,
    output: Vec<u8>,
    out_pos: usize,
    out_len: usize,
    eof: bool,
}

impl<R> std::fmt::Debug for Transcoded<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcoded")
            .field(
                "encoding",
                &self.decoder.as_ref().map(|d| d.encoding().name()),
            )
            .field("eof", &self.eof)
            .finish_non_exhaustive()
    }
}

const BUF: usize = 64 * 1024;

impl<R: Read> Transcoded<R> {
    /// Decodes `inner` from `encoding` (a byte-order mark, if any, must already be consumed).
    /// UTF-8 passes through untouched.
    pub fn new(inner: R, encoding: TextEncoding) -> Self {
        let decoder = encoding
            .encoding_rs()
            .map(|e| e.new_decoder_without_bom_handling());
        let buffered = decoder.is_some();
        Transcoded {
            inner,
            decoder,
            input: if buffered { vec![0; BUF] } else { Vec::new() },
            in_pos: 0,
            in_len: 0,
            output: if buffered { vec![0; BUF] } else { Vec::new() },
            out_pos: 0,
            out_len: 0,
            eof: false,
        }
    }
}

impl<R: Read> Read for Transcoded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(decoder) = self.decoder.as_mut() else {
            return self.inner.read(buf);
        };
        loop {
            if self.out_pos < self.out_len {
                let avail = self.output.get(self.out_pos..self.out_len).unwrap_or(&[]);
                let n = avail.len().min(buf.len());
                if let (Some(dst), Some(src)) = (buf.get_mut(..n), avail.get(..n)) {
                    dst.copy_from_slice(src);
                }
                self.out_pos += n;
                return Ok(n);
            }
            if self.eof && self.in_pos >= self.in_len {
                return Ok(0);
            }
            if self.in_pos >= self.in_len && !self.eof {
                self.in_len = self.inner.read(&mut self.input)?;
                self.in_pos = 0;
                if self.in_len == 0 {
                    self.eof = true;
                }
            }
            let src = self.input.get(self.in_pos..self.in_len).unwrap_or(&[]);
            let (_, read, written, _) = decoder.decode_to_utf8(src, &mut self.output, self.eof);
            self.in_pos += read;
            self.out_pos = 0;
            self.out_len = written;
            if self.eof && written == 0 && self.in_pos >= self.in_len {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8], enc: TextEncoding) -> String {
        let mut s = String::new();
        Transcoded::new(bytes, enc).read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn boms() {
        assert_eq!(sniff_bom(b"\xEF\xBB\xBF\"("), Some((TextEncoding::Utf8, 3)));
        assert_eq!(sniff_bom(b"\xFF\xFE\"\0"), Some((TextEncoding::Utf16Le, 2)));
        assert_eq!(sniff_bom(b"\xFE\xFF\0\""), Some((TextEncoding::Utf16Be, 2)));
        assert_eq!(sniff_bom(b"\"\0(\0"), Some((TextEncoding::Utf16Le, 0)));
        assert_eq!(sniff_bom(b"\"(PD"), None);
    }

    #[test]
    fn code_pages_and_utf16() {
        // "Disco físico" in 1252, "Процесс" in 1251.
        assert_eq!(
            decode(b"Disco f\xEDsico", TextEncoding::CodePage(1252)),
            "Disco físico"
        );
        assert_eq!(
            decode(
                b"\xCF\xF0\xEE\xF6\xE5\xF1\xF1",
                TextEncoding::CodePage(1251)
            ),
            "Процесс"
        );
        let utf16: Vec<u8> = "a,é\r\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(decode(&utf16, TextEncoding::Utf16Le), "a,é\r\n");
        // Long input crosses buffer boundaries, with a surrogate pair split across reads.
        let long: String = "x😀".repeat(40_000);
        let bytes: Vec<u8> = long.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(decode(&bytes, TextEncoding::Utf16Be), long);
    }

    #[test]
    fn first_line() {
        let mut r = io::BufReader::with_capacity(4, &b"\r\n \r\n\"a\",\"b\"\r\nrest"[..]);
        let (line, whole) = read_first_line(&mut r, 1000).unwrap();
        assert!(whole);
        assert_eq!(line, b"\r\n \r\n\"a\",\"b\"\r\n");
        let mut rest = String::new();
        r.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "rest");
        let mut r = &b"abcdef"[..];
        assert_eq!(
            read_first_line(&mut r, 3).unwrap(),
            (b"abc".to_vec(), false)
        );
    }
}
