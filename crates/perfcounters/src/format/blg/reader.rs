//! The streaming reader: one buffer in memory at a time, records handed out borrowed.

use std::io::{self, Read};

use super::container::{BufferHeader, EventHeader, LogFileHeader};
use super::error::{ReadError, Warning};
use super::layout::{buffer_header as bh, event_trace_header as eth, pdh_event};
use super::record::{Fragment, PdhRecord, RecordKind};
use super::PDH_PROVIDER_GUID;
use crate::format::structure;
use crate::format::v2::Guid;
use crate::format::{Bound, DecodeError, ErrorKind};

/// The largest record the reader assembles from fragments (64 MiB): far above any V1 block a
/// real log stores, and a bound on memory for hostile files.
pub const MAX_RECORD_LEN: usize = 64 << 20;
/// The most warnings kept; later ones are only counted.
pub const MAX_WARNINGS: usize = 100;

/// A part of the file read on its own, for a scan split among threads
/// ([`BlgReader::part`], [`BlgReader::set_part_end`]).
#[derive(Clone, Copy, Debug)]
struct Part {
    /// Records whose first fragment starts at or after this offset belong to the next part.
    end: usize,
    /// Still stepping over the fragments that end the previous part's last record.
    skipping: bool,
    /// Fragments stepped over at the start.
    skipped: u64,
    /// Fragments read at or after `end` (those of this part's last record).
    beyond: u64,
}

/// A record being put together from its fragments.
#[derive(Clone, Copy, Debug)]
struct Assembly {
    kind: u8,
    count: u32,
    received: u32,
    time: i64,
    offset: usize,
}

/// A PDH event: where it is and which fragment of which record it holds.
#[derive(Clone, Copy, Debug)]
struct PdhEvent {
    /// Offset of the event in the buffer.
    at: usize,
    /// File offset of the event.
    offset: usize,
    /// `Class.Type`: the record kind.
    kind: u8,
    /// The event's time stamp.
    time: i64,
    /// The fragment's number (1-based) and the record's count of fragments.
    index: u32,
    count: u32,
    /// The fragment's data: the buffer from `data_start` to `data_end`.
    data_start: usize,
    data_end: usize,
}

impl PdhEvent {
    /// The error for a fragment that is not the one expected.
    fn out_of_order(&self, expected_index: u32, expected_count: u32) -> DecodeError {
        DecodeError::new(
            structure::PDH_EVENT,
            self.offset + eth::LEN + pdh_event::FRAGMENT_INDEX,
            ErrorKind::FragmentOutOfOrder {
                index: self.index,
                count: self.count,
                expected_index,
                expected_count,
            },
        )
    }
}

/// What reading at the reader's place led to. It borrows nothing, so that the record is borrowed
/// from the reader's buffers only once it is known.
#[derive(Debug)]
enum Step {
    /// Read on.
    Next,
    /// A record of one event, its data in the buffer at `data`.
    Whole {
        kind: u8,
        time: i64,
        offset: usize,
        data: std::ops::Range<usize>,
    },
    /// A record assembled from its fragments, its data in `stitch`.
    Assembled { kind: u8, time: i64, offset: usize },
    /// The reader stops: with an error, or at the end (`None`).
    Stop(Option<ReadError>),
}

/// Reads a binary log buffer by buffer and hands out its PDH records in file order.
///
/// Memory stays flat in the file's length: one buffer (64 KiB) and the record being assembled from
/// fragments (bounded by [`MAX_RECORD_LEN`]). Records that fit in one event are borrowed straight
/// from the buffer.
///
/// Errors: a malformed buffer or event header, a fragment out of order, or a file that ends inside
/// a record is a [`ReadError::Decode`] naming the structure and file offset; the reader then stops
/// (every later call returns `None`), and the records already returned are intact. Things it can
/// step over (events of other providers, unknown record kinds, a short last buffer, counts that
/// disagree) become [`Warning`]s.
///
/// ```no_run
/// use perfcounters::format::blg::{BlgReader, RecordKind};
///
/// let file = std::fs::File::open("log.blg")?;
/// let mut reader = BlgReader::new(file)?;
/// println!("written by build {}", reader.header().os_build);
/// while let Some(record) = reader.next_record() {
///     let record = record?;
///     if record.kind == RecordKind::Sample {
///         println!("{} sub-records", record.sample()?.len());
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BlgReader<R> {
    src: R,
    header: LogFileHeader,
    buffer_size: usize,
    buf: Vec<u8>,
    /// File offset of `buf`.
    buf_offset: usize,
    /// End of the events in `buf`.
    filled: usize,
    /// Next event in `buf`.
    pos: usize,
    /// File offset of the next buffer.
    next_offset: usize,
    buffers: u32,
    stopped: bool,
    stitch: Vec<u8>,
    fragments: Vec<Fragment>,
    assembly: Option<Assembly>,
    log_guid: Option<Guid>,
    /// PDH events of another log skipped, and the offset and log of the first one: reported in
    /// one warning when the reader stops.
    foreign: u64,
    foreign_first: Option<(usize, Guid)>,
    /// Whether the log's counter list has started.
    list_seen: bool,
    warnings: Vec<Warning>,
    suppressed: u64,
    warned_version: bool,
    part: Option<Part>,
}

impl<R: Read> BlgReader<R> {
    /// A reader of the part of the log that starts at the buffer at file offset `start` (a
    /// multiple of the buffer size), `src` positioned there, with the header, buffer size and log
    /// GUID of `like` (a reader of the log's start, past its counter list). It steps over the
    /// fragments at its start that end a record begun before `start` ([`BlgReader::part_counts`]
    /// counts them) and reads until [`BlgReader::set_part_end`]'s offset.
    pub(crate) fn part(src: R, like: &BlgReader<R>, start: usize) -> BlgReader<R> {
        BlgReader {
            src,
            header: like.header.clone(),
            buffer_size: like.buffer_size,
            buf: vec![0; like.buffer_size],
            buf_offset: start,
            filled: 0,
            pos: 0,
            next_offset: start,
            buffers: 0,
            stopped: false,
            stitch: Vec::new(),
            fragments: Vec::new(),
            assembly: None,
            log_guid: like.log_guid,
            foreign: 0,
            foreign_first: None,
            list_seen: true,
            warnings: Vec::new(),
            suppressed: 0,
            warned_version: false,
            part: Some(Part {
                end: usize::MAX,
                skipping: true,
                skipped: 0,
                beyond: 0,
            }),
        }
    }

    /// Ends the reader's records before the first record whose first fragment starts at or after
    /// file offset `end` (a record begun before it is read to its last fragment). The reader then
    /// stops without the end-of-log checks, which are the whole scan's to make.
    pub(crate) fn set_part_end(&mut self, end: usize) {
        match &mut self.part {
            Some(p) => p.end = end,
            None => {
                self.part = Some(Part {
                    end,
                    skipping: false,
                    skipped: 0,
                    beyond: 0,
                })
            }
        }
    }

    /// For a part: the fragments stepped over at its start and those read past its end.
    pub(crate) fn part_counts(&self) -> (u64, u64) {
        self.part.map_or((0, 0), |p| (p.skipped, p.beyond))
    }

    /// The buffer size.
    pub(crate) fn buffer_size(&self) -> usize {
        self.buffer_size
    }

    /// Reads and checks the first buffer and its log-file header.
    pub fn new(mut src: R) -> Result<BlgReader<R>, ReadError> {
        let mut first = vec![0u8; bh::LEN];
        let got = read_full(&mut src, &mut first)?;
        // A first buffer cut short: `needed` bytes must be there, `got` were read.
        let truncated = |needed: usize, got: usize| {
            DecodeError::new(
                structure::WMI_BUFFER_HEADER,
                0,
                ErrorKind::Truncated {
                    needed: needed as u64,
                    available: got as u64,
                },
            )
        };
        if got < bh::LEN {
            // Text shorter than a buffer header is named as text (as BufferHeader::parse does).
            if let Some(looks_like) = super::text_kind(first.get(..got).unwrap_or(&[])) {
                let kind = ErrorKind::Text { looks_like };
                return Err(DecodeError::new(structure::WMI_BUFFER_HEADER, 0, kind).into());
            }
            return Err(truncated(bh::LEN, got).into());
        }
        let bh = BufferHeader::parse(&first, 0, None)?;
        let buffer_size = bh.buffer_size as usize;
        let mut buf = first;
        buf.resize(buffer_size, 0);
        let got = bh::LEN + read_full(&mut src, &mut buf[bh::LEN..])?;
        let mut warnings = Vec::new();
        let filled = bh.filled_bytes as usize;
        if got < buffer_size {
            if got < filled {
                return Err(truncated(filled, got).into());
            }
            warnings.push(Warning {
                offset: 0,
                message: format!(
                    "the file ends {got} bytes into its first buffer of {buffer_size} bytes"
                ),
            });
        }
        let (header, pos) = LogFileHeader::parse(&buf, filled)?;
        if header.buffer_size != bh.buffer_size {
            warnings.push(Warning {
                offset: bh::LEN,
                message: format!(
                    "the log-file header says buffers of {} bytes, the buffer header {}; using {}",
                    header.buffer_size, bh.buffer_size, bh.buffer_size
                ),
            });
        }
        if header.is_circular() {
            warnings.push(Warning {
                offset: bh::LEN,
                message:
                    "circular log: buffers are read in file order, which may not be time order, \
                          and records cut by the wrap are skipped"
                        .to_string(),
            });
        }
        Ok(BlgReader {
            src,
            header,
            buffer_size,
            buf,
            buf_offset: 0,
            filled,
            pos,
            next_offset: buffer_size,
            buffers: 1,
            stopped: false,
            stitch: Vec::new(),
            fragments: Vec::new(),
            assembly: None,
            log_guid: None,
            foreign: 0,
            foreign_first: None,
            list_seen: false,
            warnings,
            suppressed: 0,
            warned_version: false,
            part: None,
        })
    }

    /// The log-file header.
    pub fn header(&self) -> &LogFileHeader {
        &self.header
    }

    /// The log GUID of the PDH events (known after the first record).
    pub fn log_guid(&self) -> Option<Guid> {
        self.log_guid
    }

    /// The warnings so far (at most [`MAX_WARNINGS`]; see [`BlgReader::suppressed_warnings`]).
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Takes the warnings collected so far.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// Warnings not kept because [`MAX_WARNINGS`] were already kept.
    pub fn suppressed_warnings(&self) -> u64 {
        self.suppressed
    }

    /// Buffers read so far.
    pub fn buffers_read(&self) -> u32 {
        self.buffers
    }

    /// Records a warning (kept up to [`MAX_WARNINGS`], counted after that).
    pub(crate) fn warn(&mut self, offset: usize, message: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(Warning { offset, message });
        } else {
            self.suppressed += 1;
        }
    }

    /// Reads the next buffer. `Ok(false)` at the end of the file.
    fn load_buffer(&mut self) -> Result<bool, ReadError> {
        let got = read_full(&mut self.src, &mut self.buf)?;
        if got == 0 {
            return Ok(false);
        }
        let offset = self.next_offset;
        if got < bh::LEN {
            self.warn(
                offset,
                format!("the file ends with {got} bytes, too few for a buffer header; ignored"),
            );
            return Ok(false);
        }
        let bh = BufferHeader::parse(&self.buf[..got], offset, Some(self.buffer_size as u32))?;
        let filled = bh.filled_bytes as usize;
        if got < self.buffer_size {
            self.warn(
                offset,
                format!(
                    "the file ends {got} bytes into a buffer of {} bytes",
                    self.buffer_size
                ),
            );
        }
        self.buf_offset = offset;
        self.next_offset = offset.saturating_add(self.buffer_size);
        // A short buffer's events end where the file does; an event cut there is reported below.
        self.filled = filled.min(got);
        self.pos = bh::LEN;
        self.buffers = self.buffers.saturating_add(1);
        Ok(true)
    }

    /// Stops the reader with a decoding error.
    fn fail(&mut self, e: DecodeError) -> Step {
        self.report_foreign();
        self.stopped = true;
        Step::Stop(Some(ReadError::Decode(e)))
    }

    /// Stops the reader at the end of the file: a record still under way is an error (or, in a
    /// circular log, a warning), and the header's buffer count is checked.
    fn at_end(&mut self) -> Step {
        if let Some(a) = self.assembly.take() {
            if self.header.is_circular() {
                self.warn(
                    a.offset,
                    format!(
                        "a record of kind {:#x} misses fragments {} to {} at the end of the log; skipped",
                        a.kind,
                        a.received + 1,
                        a.count
                    ),
                );
            } else {
                return self.fail(DecodeError::new(
                    structure::PDH_EVENT,
                    a.offset,
                    ErrorKind::MissingFragments {
                        received: a.received,
                        count: a.count,
                    },
                ));
            }
        }
        if self.header.buffers_written != 0 && self.header.buffers_written != self.buffers {
            let message = format!(
                "the log-file header counts {} buffers, the file holds {}",
                self.header.buffers_written, self.buffers
            );
            self.warn(bh::LEN, message);
        }
        self.report_foreign();
        self.stopped = true;
        Step::Stop(None)
    }

    /// Whether a part's reader stops at `offset`: past its end with no record under way.
    fn part_ends_at(&self, offset: usize) -> bool {
        self.assembly.is_none() && self.part.is_some_and(|p| offset >= p.end)
    }

    /// Stops a part's reader at its end.
    fn end_part(&mut self) -> Step {
        self.report_foreign();
        self.stopped = true;
        Step::Stop(None)
    }

    /// One warning for the PDH events of another log skipped (a count, not one per event).
    fn report_foreign(&mut self) {
        let (Some((offset, first)), Some(known)) = (self.foreign_first.take(), self.log_guid)
        else {
            return;
        };
        let n = self.foreign;
        let events = if n == 1 { "event" } else { "events" };
        self.warn(
            offset,
            format!(
                "{n} PDH {events} of another log ({first}, not this log's {known}) skipped, the \
                 first at this offset"
            ),
        );
    }

    /// The next record, or `None` at the end of the log (or after an error).
    #[allow(clippy::should_implement_trait)]
    pub fn next_record(&mut self) -> Option<Result<PdhRecord<'_>, ReadError>> {
        if self.stopped {
            return None;
        }
        loop {
            let step = if self.pos + eth::LEN > self.filled {
                self.next_buffer()
            } else {
                self.next_event()
            };
            match step {
                Step::Next => {}
                Step::Whole {
                    kind,
                    time,
                    offset,
                    data,
                } => {
                    return Some(Ok(PdhRecord::new(
                        RecordKind::from_class_type(kind),
                        time,
                        offset,
                        &self.buf[data],
                        &self.fragments,
                    )))
                }
                Step::Assembled { kind, time, offset } => {
                    return Some(Ok(PdhRecord::new(
                        RecordKind::from_class_type(kind),
                        time,
                        offset,
                        &self.stitch,
                        &self.fragments,
                    )))
                }
                Step::Stop(e) => return e.map(Err),
            }
        }
    }

    /// At the end of a buffer's events: checks that what is left of its filled part is zero
    /// padding, and loads the next buffer (or stops at the end of the file or of the part).
    #[inline]
    fn next_buffer(&mut self) -> Step {
        if self.pos < self.filled {
            let offset = self.buf_offset + self.pos;
            let left = self.filled - self.pos;
            // Padding shorter than an event header at the end of the filled part.
            if self.buf[self.pos..self.filled].iter().any(|&b| b != 0) {
                return self.fail(DecodeError::new(
                    structure::EVENT_TRACE_HEADER,
                    offset,
                    ErrorKind::Truncated {
                        needed: eth::LEN as u64,
                        available: left as u64,
                    },
                ));
            }
        }
        if self.part_ends_at(self.next_offset) {
            return self.end_part();
        }
        match self.load_buffer() {
            Ok(true) => Step::Next,
            Ok(false) => self.at_end(),
            Err(e) => {
                self.stopped = true;
                Step::Stop(Some(e))
            }
        }
    }

    /// Reads the event at `pos` and moves past it: what is not a PDH event of this log is stepped
    /// over (with a warning where it says something about the file); a PDH event's fragment starts
    /// a record or continues the one under way.
    #[inline]
    fn next_event(&mut self) -> Step {
        let at = self.pos;
        let event_offset = self.buf_offset + at;
        if self.part_ends_at(event_offset) {
            return self.end_part();
        }
        let h = match EventHeader::parse(&self.buf[..self.filled], at) {
            Ok(h) => h,
            Err(e) => {
                let e = super::read::shift(e, self.buf_offset);
                return self.fail(e);
            }
        };
        let size = usize::from(h.size);
        self.pos = (at + size).next_multiple_of(bh::ALIGNMENT);
        if !self.is_pdh_event(&h, event_offset) {
            return Step::Next;
        }
        if size < eth::LEN + pdh_event::LEN {
            return self.fail(DecodeError::new(
                structure::PDH_EVENT,
                event_offset,
                ErrorKind::SizeTooSmall {
                    size: size as u64,
                    minimum: (eth::LEN + pdh_event::LEN) as u64,
                },
            ));
        }
        let p = at + eth::LEN;
        let mut g = [0u8; 16];
        g.copy_from_slice(&self.buf[p + pdh_event::LOG_GUID..p + pdh_event::LOG_GUID + 16]);
        let ev = PdhEvent {
            at,
            offset: event_offset,
            kind: h.class_type,
            time: h.time_stamp,
            index: super::read::le_u32(&self.buf, p + pdh_event::FRAGMENT_INDEX),
            count: super::read::le_u32(&self.buf, p + pdh_event::FRAGMENT_COUNT),
            data_start: p + pdh_event::LEN,
            data_end: at + size,
        };
        if !self.is_this_log(Guid::from_bytes(g), &ev) {
            return Step::Next;
        }
        match self.assembly {
            None => self.first_fragment(&ev),
            Some(a) => self.next_fragment(&ev, a),
        }
    }

    /// Whether the event is a PDH event; other events are stepped over with a warning. An unknown
    /// version of the PDH event is warned about once, and read as usual.
    #[inline]
    fn is_pdh_event(&mut self, h: &EventHeader, event_offset: usize) -> bool {
        if h.header_type != eth::TYPE_FULL_HEADER32 && h.header_type != eth::TYPE_FULL_HEADER64 {
            self.warn(
                event_offset,
                format!(
                    "event with header type {:#x} (not an EVENT_TRACE_HEADER); skipped",
                    h.header_type
                ),
            );
            return false;
        }
        if h.guid != PDH_PROVIDER_GUID {
            self.warn(
                event_offset,
                format!("event of provider {} (not PDH); skipped", h.guid),
            );
            return false;
        }
        if h.class_version != pdh_event::VERSION && !self.warned_version {
            self.warned_version = true;
            self.warn(
                event_offset,
                format!(
                    "PDH event of version {:#x} (only {:#x} is known); read as usual",
                    h.class_version,
                    pdh_event::VERSION
                ),
            );
        }
        true
    }

    /// Whether a PDH event of the log `log_guid` belongs to the log the reader reads; the events
    /// of another log are counted (for one warning) and stepped over.
    #[inline]
    fn is_this_log(&mut self, log_guid: Guid, ev: &PdhEvent) -> bool {
        let starts_list =
            RecordKind::from_class_type(ev.kind) == RecordKind::CounterList && ev.index == 1;
        match self.log_guid {
            None => self.log_guid = Some(log_guid),
            // The first counter list decides which log the file holds: events of another
            // log before it (one that wrote to the file first) are passed on as they came, and
            // the reader of the records skips samples that precede the counter list.
            Some(known) if known != log_guid && starts_list && !self.list_seen => {
                self.log_guid = Some(log_guid);
            }
            Some(known) if known != log_guid => {
                self.foreign += 1;
                self.foreign_first.get_or_insert((ev.offset, log_guid));
                return false;
            }
            Some(_) => {}
        }
        self.list_seen |= starts_list;
        true
    }

    /// The first fragment of a record: a record of one event is handed out borrowed from the
    /// buffer; the first of several is copied to start the assembly.
    #[inline]
    fn first_fragment(&mut self, ev: &PdhEvent) -> Step {
        if let Some(p) = self.part.as_mut().filter(|p| p.skipping) {
            if ev.index != 1 {
                p.skipped += 1;
                return Step::Next;
            }
            p.skipping = false;
        }
        if ev.index != 1 || ev.count == 0 {
            let e = ev.out_of_order(1, 0);
            if self.header.is_circular() && ev.index > 1 && ev.index <= ev.count {
                self.warn(
                    e.offset(),
                    format!("{}; skipped (records cut by the wrap)", e.kind()),
                );
                return Step::Next;
            }
            return self.fail(e);
        }
        self.fragments.clear();
        self.fragments.push(Fragment {
            data_offset: 0,
            file_offset: self.buf_offset + ev.data_start,
        });
        if ev.count == 1 {
            self.warn_unknown_kind(ev.kind, ev.offset);
            return Step::Whole {
                kind: ev.kind,
                time: ev.time,
                offset: ev.offset,
                data: ev.data_start..ev.data_end,
            };
        }
        self.stitch.clear();
        self.stitch
            .extend_from_slice(&self.buf[ev.data_start..ev.data_end]);
        self.assembly = Some(Assembly {
            kind: ev.kind,
            count: ev.count,
            received: 1,
            time: ev.time,
            offset: ev.offset,
        });
        Step::Next
    }

    /// A later fragment of the record under way `a`: appended, up to [`MAX_RECORD_LEN`]; the
    /// last one completes the record. A fragment out of order is an error (in a circular log, the
    /// record is dropped and the event read again as a possible start).
    #[inline]
    fn next_fragment(&mut self, ev: &PdhEvent, a: Assembly) -> Step {
        if ev.index != a.received + 1 || ev.count != a.count || ev.kind != a.kind {
            let e = ev.out_of_order(a.received + 1, a.count);
            if self.header.is_circular() {
                self.warn(e.offset(), format!("{}; record skipped", e.kind()));
                self.assembly = None;
                // Re-read this event as the possible start of a new record.
                self.pos = ev.at;
                return Step::Next;
            }
            return self.fail(e);
        }
        let len = ev.data_end - ev.data_start;
        let total = self.stitch.len().saturating_add(len);
        if total > MAX_RECORD_LEN {
            return self.fail(DecodeError::new(
                structure::PDH_EVENT,
                a.offset,
                ErrorKind::FieldExceeds {
                    field: "assembled record length",
                    value: total as u64,
                    limit: Bound::Fixed {
                        size: MAX_RECORD_LEN as u64,
                        part: "record limit",
                    },
                },
            ));
        }
        if let Some(p) = self.part.as_mut().filter(|p| ev.offset >= p.end) {
            p.beyond += 1;
        }
        self.fragments.push(Fragment {
            data_offset: self.stitch.len(),
            file_offset: self.buf_offset + ev.data_start,
        });
        self.stitch
            .extend_from_slice(&self.buf[ev.data_start..ev.data_end]);
        let received = a.received + 1;
        if received == a.count {
            self.assembly = None;
            self.warn_unknown_kind(ev.kind, a.offset);
            return Step::Assembled {
                kind: ev.kind,
                time: a.time,
                offset: a.offset,
            };
        }
        self.assembly = Some(Assembly { received, ..a });
        Step::Next
    }

    /// A warning for a record of a kind the reader does not know (handed out all the same).
    #[inline]
    fn warn_unknown_kind(&mut self, kind: u8, offset: usize) {
        if matches!(RecordKind::from_class_type(kind), RecordKind::Other(_)) {
            self.warn(offset, format!("PDH record of unknown kind {kind:#x}"));
        }
    }
}

/// Reads until `buf` is full or the source ends; returns the bytes read.
fn read_full<R: Read>(src: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
