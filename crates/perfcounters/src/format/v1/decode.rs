//! Zero-copy, validated views of a V1 block.
//!
//! Each view borrows the caller's buffer and checks the bounds of its structure when it is created; the
//! accessors then read fixed fields of that already-checked structure. Walking never trusts a count
//! alone: every step advances by a length that was checked to be at least the size of the structure and
//! to stay inside its parent, so iteration ends after at most `bytes / minimal record size` steps.

use std::borrow::Cow;

use super::layout::{
    counter_block as CB, counter_definition as CD, data_block as DB, instance_definition as ID,
    object_type as OT,
};
use crate::counter_type::CounterType;
use crate::format::read::{fixed, to_usize, utf16_until_nul, utf16_until_nul_into, Endian, Reader};
use crate::format::structure::{
    PERF_COUNTER_BLOCK as COUNTER_BLOCK, PERF_COUNTER_DEFINITION as COUNTER_DEFINITION,
    PERF_DATA_BLOCK as DATA_BLOCK, PERF_INSTANCE_DEFINITION as INSTANCE_DEFINITION,
    PERF_OBJECT_TYPE as OBJECT_TYPE,
};
use crate::format::{Bound, DecodeError, ErrorKind};
use std::ops::Range;

use super::naming::ParentLookup;
use crate::snapshot::{self, NamedList, SystemTime, Value, ValueChunks};

/// Size of `PERF_DATA_BLOCK`.
pub const DATA_BLOCK_LEN: usize = DB::LEN;
/// Size of `PERF_OBJECT_TYPE`.
pub const OBJECT_TYPE_LEN: usize = OT::LEN;
/// Size of `PERF_COUNTER_DEFINITION`.
pub const COUNTER_DEFINITION_LEN: usize = CD::LEN;
/// Size of `PERF_INSTANCE_DEFINITION`.
pub const INSTANCE_DEFINITION_LEN: usize = ID::LEN;
/// Size of `PERF_COUNTER_BLOCK` (its `ByteLength` field).
pub const COUNTER_BLOCK_LEN: usize = CB::LEN;

/// `PERF_OBJECT_TYPE.NumInstances` of a single-instance object.
pub const PERF_NO_INSTANCES: i32 = -1;
/// `NumInstances` of a metadata-only collection of a multi-instance object (no instance blocks).
pub const PERF_METADATA_MULTIPLE_INSTANCES: i32 = -2;
/// `NumInstances` of a metadata-only collection of a single-instance object (no counter block).
pub const PERF_METADATA_NO_INSTANCES: i32 = -3;
/// `PERF_INSTANCE_DEFINITION.UniqueID` when instances are identified by name.
pub const PERF_NO_UNIQUE_ID: i32 = -1;

/// The fixed part of `PERF_DATA_BLOCK`, as a bound in errors.
const HEADER: Bound = Bound::Fixed {
    size: DB::LEN as u64,
    part: "header",
};

/// `TotalByteLength` (of `owner`, or of the failing structure) as a bound in errors.
fn total_byte_length(owner: Option<&'static str>, value: usize) -> Bound {
    Bound::Field {
        owner,
        field: "TotalByteLength",
        value: value as u64,
    }
}

/// The bytes `r` leaves from `pos` on, as a bound in errors; `parent` names the window.
fn left_in(r: &Reader<'_>, pos: usize, parent: &'static str) -> Bound {
    Bound::Left {
        length: r.remaining(pos) as u64,
        parent,
    }
}

/// A validated view of a `PERF_DATA_BLOCK` (the result of `RegQueryValueEx(HKEY_PERFORMANCE_DATA, …)`).
///
/// [`PerfDataBlock::parse`] checks the signature, the byte order, `TotalByteLength` and `HeaderLength`;
/// objects are validated one by one as [`PerfDataBlock::objects`] walks them.
#[derive(Clone, Copy, Debug)]
pub struct PerfDataBlock<'a> {
    /// The buffer cut to `TotalByteLength`, in the block's byte order.
    r: Reader<'a>,
    header: &'a [u8; DB::LEN],
}

impl<'a> PerfDataBlock<'a> {
    /// Validates the header of the block at the start of `data`.
    ///
    /// `LittleEndian` = 0 selects big-endian for every integer and UTF-16 code unit of the block,
    /// including the signature; any other value selects little-endian. `Version` and `Revision` are
    /// recorded but not checked. Bytes after `TotalByteLength` are ignored.
    pub fn parse(data: &'a [u8]) -> Result<Self, DecodeError> {
        let err = |kind| DecodeError::new(DATA_BLOCK, 0, kind);
        let whole = Reader::new(data);
        let header: &[u8; DB::LEN] = whole.array(0).ok_or_else(|| {
            err(ErrorKind::BufferTooShort {
                length: data.len() as u64,
                header: DB::LEN as u64,
            })
        })?;
        let endian = if fixed::<4>(header, DB::LITTLE_ENDIAN) == [0; 4] {
            Endian::Big
        } else {
            Endian::Little
        };
        let sig = [0usize, 1, 2, 3].map(|i| endian.u16_at(header, DB::SIGNATURE + 2 * i));
        if sig != DB::PERF {
            let raw: [u8; 8] = fixed(header, DB::SIGNATURE);
            return Err(err(ErrorKind::BadSignature {
                field: "Signature",
                found: Box::new(raw),
                expected: match endian {
                    Endian::Little => "\"PERF\" in UTF-16 (little-endian)",
                    Endian::Big => "\"PERF\" in UTF-16 (big-endian, since LittleEndian is 0)",
                },
            }));
        }
        let total = endian.u32_at(header, DB::TOTAL_BYTE_LENGTH);
        if to_usize(total) < DB::LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "TotalByteLength",
                value: total.into(),
                minimum: HEADER,
            }));
        }
        let r = Reader::with_endian(data, endian);
        let r = r.window(0, to_usize(total)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "TotalByteLength",
                value: total.into(),
                limit: Bound::Buffer {
                    length: data.len() as u64,
                },
            })
        })?;
        let header_length = endian.u32_at(header, DB::HEADER_LENGTH);
        if to_usize(header_length) < DB::LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "HeaderLength",
                value: header_length.into(),
                minimum: HEADER,
            }));
        }
        if header_length > total {
            return Err(err(ErrorKind::FieldExceeds {
                field: "HeaderLength",
                value: header_length.into(),
                limit: total_byte_length(None, r.len()),
            }));
        }
        Ok(PerfDataBlock { r, header })
    }

    /// The block's bytes (`TotalByteLength` of them).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.r.as_bytes()
    }

    /// The byte order of the block.
    pub fn endian(&self) -> Endian {
        self.r.endian()
    }

    /// `Signature` as four UTF-16 code units (always `"PERF"` after a successful parse).
    pub fn signature(&self) -> [u16; 4] {
        let e = self.r.endian();
        [0usize, 1, 2, 3].map(|i| e.u16_at(self.header, DB::SIGNATURE + 2 * i))
    }

    /// `LittleEndian` as stored (read in the block's byte order).
    pub fn little_endian(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::LITTLE_ENDIAN)
    }

    /// `Version` (1 in known data; other values are accepted).
    pub fn version(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::VERSION)
    }

    /// `Revision` (1 in known data; other values are accepted).
    pub fn revision(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::REVISION)
    }

    /// `TotalByteLength`: the size of the whole block.
    pub fn total_byte_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::TOTAL_BYTE_LENGTH)
    }

    /// `HeaderLength`: the offset of the first object (header plus system name).
    pub fn header_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::HEADER_LENGTH)
    }

    /// `NumObjectTypes` as stored; [`PerfDataBlock::objects`] may yield fewer.
    pub fn num_object_types(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::NUM_OBJECT_TYPES)
    }

    /// `DefaultObject` (reserved; the title index of the default object in real data).
    pub fn default_object(&self) -> i32 {
        self.r.endian().i32_at(self.header, DB::DEFAULT_OBJECT)
    }

    /// `SystemTime` (UTC).
    pub fn system_time(&self) -> SystemTime {
        self.r.endian().system_time_at(self.header, DB::SYSTEM_TIME)
    }

    /// The 4 padding bytes after `SystemTime` (offset 52), as stored.
    pub fn padding(&self) -> [u8; 4] {
        fixed(self.header, DB::PADDING)
    }

    /// `PerfTime`: the performance counter (QPC ticks).
    pub fn perf_time(&self) -> i64 {
        self.r.endian().i64_at(self.header, DB::PERF_TIME)
    }

    /// `PerfFreq`: the performance counter's frequency.
    pub fn perf_freq(&self) -> i64 {
        self.r.endian().i64_at(self.header, DB::PERF_FREQ)
    }

    /// `PerfTime100nSec`: 100 ns units since 1601-01-01 UTC.
    pub fn perf_time_100ns(&self) -> i64 {
        self.r.endian().i64_at(self.header, DB::PERF_TIME_100NSEC)
    }

    /// `SystemNameLength`: bytes, including the NUL.
    pub fn system_name_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::SYSTEM_NAME_LENGTH)
    }

    /// `SystemNameOffset`: from the start of the block.
    pub fn system_name_offset(&self) -> u32 {
        self.r.endian().u32_at(self.header, DB::SYSTEM_NAME_OFFSET)
    }

    /// The raw bytes of the system name (`SystemNameLength` bytes at `SystemNameOffset`).
    pub fn system_name_bytes(&self) -> Result<&'a [u8], DecodeError> {
        let (off, len) = (self.system_name_offset(), self.system_name_length());
        self.r.slice(to_usize(off), to_usize(len)).ok_or_else(|| {
            DecodeError::new(
                DATA_BLOCK,
                0,
                ErrorKind::RangeExceeds {
                    offset_field: "SystemNameOffset",
                    offset: off.into(),
                    length_field: "SystemNameLength",
                    length: len.into(),
                    limit: Bound::Field {
                        owner: None,
                        field: "TotalByteLength",
                        value: self.r.len() as u64,
                    },
                },
            )
        })
    }

    /// The system name (UTF-16, up to the first NUL; unpaired surrogates become U+FFFD).
    pub fn system_name(&self) -> Result<String, DecodeError> {
        Ok(utf16_until_nul(self.system_name_bytes()?, self.r.endian()))
    }

    /// The objects, in data order. The walk starts at `HeaderLength`, moves by each object's
    /// `TotalByteLength`, and stops after `NumObjectTypes` objects or at the block's `TotalByteLength`,
    /// whichever comes first. After an error the iterator ends.
    pub fn objects(&self) -> Objects<'a> {
        Objects {
            r: self.r,
            pos: to_usize(self.header_length()),
            remaining: self.num_object_types(),
            done: false,
        }
    }

    /// The first object with this title index (`ObjectNameTitleIndex`), skipping nothing: an error while
    /// walking to it is returned.
    pub fn object_by_index(&self, index: u32) -> Result<Option<PerfObjectType<'a>>, DecodeError> {
        for o in self.objects() {
            let o = o?;
            if o.name_index() == index {
                return Ok(Some(o));
            }
        }
        Ok(None)
    }
}

/// Iterator over the objects of a block; see [`PerfDataBlock::objects`].
#[derive(Clone, Debug)]
pub struct Objects<'a> {
    r: Reader<'a>,
    pos: usize,
    remaining: u32,
    done: bool,
}

impl<'a> Iterator for Objects<'a> {
    type Item = Result<PerfObjectType<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.remaining == 0 || self.pos >= self.r.end() {
            return None;
        }
        self.remaining -= 1;
        match PerfObjectType::parse(&self.r, self.pos) {
            Ok(o) => {
                // `parse` checked that pos + TotalByteLength lies inside the block.
                self.pos = o.r.end();
                Some(Ok(o))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for Objects<'_> {}

/// A validated view of a `PERF_OBJECT_TYPE` and everything that belongs to it.
#[derive(Clone, Copy, Debug)]
pub struct PerfObjectType<'a> {
    /// The object's `TotalByteLength` bytes.
    r: Reader<'a>,
    header: &'a [u8; OT::LEN],
}

impl<'a> PerfObjectType<'a> {
    fn parse(block: &Reader<'a>, pos: usize) -> Result<Self, DecodeError> {
        let err = |kind| DecodeError::new(OBJECT_TYPE, pos, kind);
        const HEADER: Bound = Bound::Fixed {
            size: OT::LEN as u64,
            part: "header",
        };
        let endian = block.endian();
        let header: &[u8; OT::LEN] = block.array(pos).ok_or_else(|| {
            err(ErrorKind::PartExceeds {
                size: OT::LEN as u64,
                part: "header",
                limit: total_byte_length(Some("block"), block.len()),
            })
        })?;
        let total = endian.u32_at(header, OT::TOTAL_BYTE_LENGTH);
        if to_usize(total) < OT::LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "TotalByteLength",
                value: total.into(),
                minimum: HEADER,
            }));
        }
        let r = block.window(pos, to_usize(total)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "TotalByteLength",
                value: total.into(),
                limit: left_in(block, pos, "block"),
            })
        })?;
        let header_length = endian.u32_at(header, OT::HEADER_LENGTH);
        if to_usize(header_length) < OT::LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "HeaderLength",
                value: header_length.into(),
                minimum: HEADER,
            }));
        }
        let definition_length = endian.u32_at(header, OT::DEFINITION_LENGTH);
        if definition_length < header_length {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "DefinitionLength",
                value: definition_length.into(),
                minimum: Bound::Field {
                    owner: None,
                    field: "HeaderLength",
                    value: header_length.into(),
                },
            }));
        }
        if definition_length > total {
            return Err(err(ErrorKind::FieldExceeds {
                field: "DefinitionLength",
                value: definition_length.into(),
                limit: total_byte_length(None, r.len()),
            }));
        }
        let num_counters = endian.u32_at(header, OT::NUM_COUNTERS);
        let room = (definition_length - header_length) / CD::LEN as u32;
        if num_counters > room {
            return Err(err(ErrorKind::ItemsDoNotFit {
                field: "NumCounters",
                count: num_counters.into(),
                items: "definitions",
                item_size: CD::LEN as u64,
                start_field: "HeaderLength",
                start: header_length.into(),
                end_field: "DefinitionLength",
                end: definition_length.into(),
            }));
        }
        let num_instances = endian.i32_at(header, OT::NUM_INSTANCES);
        if num_instances < PERF_METADATA_NO_INSTANCES {
            return Err(err(ErrorKind::InvalidValue {
                field: "NumInstances",
                value: num_instances.into(),
                rule: "neither a count nor one of the special values -1, -2, -3",
            }));
        }
        Ok(PerfObjectType { r, header })
    }

    /// Absolute offset of this object in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.r.start()
    }

    /// The object's bytes (`TotalByteLength` of them).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.r.as_bytes()
    }

    /// `TotalByteLength`: header, definitions, instances and counter blocks.
    pub fn total_byte_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::TOTAL_BYTE_LENGTH)
    }

    /// `DefinitionLength`: header plus counter definitions; offset of the first instance or of the
    /// counter block.
    pub fn definition_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::DEFINITION_LENGTH)
    }

    /// `HeaderLength`: offset of the first counter definition.
    pub fn header_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::HEADER_LENGTH)
    }

    /// `ObjectNameTitleIndex`.
    pub fn name_index(&self) -> u32 {
        self.r
            .endian()
            .u32_at(self.header, OT::OBJECT_NAME_TITLE_INDEX)
    }

    /// `ObjectNameTitle` (0 in data; a pointer field on 32-bit Windows).
    pub fn name_title(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::OBJECT_NAME_TITLE)
    }

    /// `ObjectHelpTitleIndex`.
    pub fn help_index(&self) -> u32 {
        self.r
            .endian()
            .u32_at(self.header, OT::OBJECT_HELP_TITLE_INDEX)
    }

    /// `ObjectHelpTitle` (0 in data).
    pub fn help_title(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::OBJECT_HELP_TITLE)
    }

    /// `DetailLevel`.
    pub fn detail_level(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::DETAIL_LEVEL)
    }

    /// `NumCounters`.
    pub fn num_counters(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::NUM_COUNTERS)
    }

    /// `DefaultCounter`, −1 for none.
    pub fn default_counter(&self) -> i32 {
        self.r.endian().i32_at(self.header, OT::DEFAULT_COUNTER)
    }

    /// `NumInstances`: a count, or [`PERF_NO_INSTANCES`], [`PERF_METADATA_MULTIPLE_INSTANCES`],
    /// [`PERF_METADATA_NO_INSTANCES`] (checked to be ≥ −3).
    pub fn num_instances(&self) -> i32 {
        self.r.endian().i32_at(self.header, OT::NUM_INSTANCES)
    }

    /// `CodePage` of the instance names; 0 means UTF-16.
    pub fn code_page(&self) -> u32 {
        self.r.endian().u32_at(self.header, OT::CODE_PAGE)
    }

    /// `PerfTime`: the object's own clock.
    pub fn perf_time(&self) -> i64 {
        self.r.endian().i64_at(self.header, OT::PERF_TIME)
    }

    /// `PerfFreq`: the object's clock frequency.
    pub fn perf_freq(&self) -> i64 {
        self.r.endian().i64_at(self.header, OT::PERF_FREQ)
    }

    /// The counter definitions, from `HeaderLength`, moving by each definition's `ByteLength`, at most
    /// `NumCounters` of them and never past `DefinitionLength`. After an error the iterator ends.
    pub fn counters(&self) -> Counters<'a> {
        let start = self.r.start();
        // `parse` checked HeaderLength ≤ DefinitionLength ≤ TotalByteLength.
        let r = self
            .r
            .window(start, to_usize(self.definition_length()))
            .unwrap_or(self.r);
        Counters {
            r,
            pos: start.saturating_add(to_usize(self.header_length())),
            remaining: self.num_counters(),
            done: false,
        }
    }

    /// The instances of a multi-instance object (`NumInstances` > 0); empty for every other
    /// `NumInstances`. The first instance is at `DefinitionLength`, its counter block right after its
    /// `ByteLength`, the next instance right after that block's `ByteLength`. After an error the
    /// iterator ends.
    pub fn instances(&self) -> Instances<'a> {
        let remaining = u32::try_from(self.num_instances()).unwrap_or(0);
        Instances {
            object: *self,
            pos: self.first_after_definitions(),
            remaining,
            done: false,
        }
    }

    /// The single counter block of a single-instance object (`NumInstances` = −1), at
    /// `DefinitionLength`; `None` for every other `NumInstances` (0, −2 and −3 carry no counter block).
    pub fn counter_block(&self) -> Result<Option<PerfCounterBlock<'a>>, DecodeError> {
        if self.num_instances() != PERF_NO_INSTANCES {
            return Ok(None);
        }
        if self.total_byte_length() <= self.definition_length() {
            return Err(self.no_room_for_counter_block());
        }
        PerfCounterBlock::parse(self, self.first_after_definitions()).map(Some)
    }

    /// A single-instance object whose `TotalByteLength` leaves no room for its counter block.
    fn no_room_for_counter_block(&self) -> DecodeError {
        DecodeError::new(
            OBJECT_TYPE,
            self.r.start(),
            ErrorKind::NoRoomFor {
                what: "single-instance object",
                part: COUNTER_BLOCK,
                end_field: "TotalByteLength",
                end: self.total_byte_length().into(),
                start_field: "DefinitionLength",
                start: self.definition_length().into(),
            },
        )
    }

    /// Absolute offset of the first instance or of the counter block: `DefinitionLength` from the start.
    fn first_after_definitions(&self) -> usize {
        self.r
            .start()
            .saturating_add(to_usize(self.definition_length()))
    }

    /// Converts the object into the owned model: definitions with base links, values, and instances
    /// with their raw names (parent and `#n` resolution needs the whole block; see
    /// [`PerfDataBlock::to_snapshot`]).
    pub fn to_object(&self) -> Result<snapshot::Object, DecodeError> {
        let (mut object, read) = self.owned()?;
        if let Some(mut read) = read {
            let names = NamedList::unnamed(
                std::mem::take(&mut read.names),
                read.ids.iter().map(|id| id.raw_name.clone()).collect(),
            );
            object.data = snapshot::ObjectData::Instances(read.into_instances(names));
        }
        Ok(object)
    }

    /// [`PerfObjectType::to_object`], with the instances of a multi-instance object left out of the
    /// object (an empty list) and returned as read, for the caller to name.
    fn owned(&self) -> Result<(snapshot::Object, Option<ReadInstances>), DecodeError> {
        let defs: Vec<PerfCounterDefinition<'a>> = self.counters().collect::<Result<_, _>>()?;
        let counters = owned_definitions(&defs);
        let mut read = None;
        let data = match self.num_instances() {
            PERF_NO_INSTANCES => {
                let block = self
                    .counter_block()?
                    .ok_or_else(|| self.no_room_for_counter_block())?;
                snapshot::ObjectData::Single(block.values(&defs)?)
            }
            PERF_METADATA_MULTIPLE_INSTANCES => snapshot::ObjectData::MetadataOnly {
                multiple_instances: true,
            },
            PERF_METADATA_NO_INSTANCES => snapshot::ObjectData::MetadataOnly {
                multiple_instances: false,
            },
            _ => {
                read = Some(self.read_instances(&defs)?);
                snapshot::ObjectData::Instances(Vec::new())
            }
        };
        Ok((self.owned_with(counters, data), read))
    }

    /// The owned object of this header with these definitions and data (its name left unset).
    pub(crate) fn owned_with(
        &self,
        counters: Vec<snapshot::CounterDefinition>,
        data: snapshot::ObjectData,
    ) -> snapshot::Object {
        snapshot::Object {
            index: self.name_index(),
            name: None,
            help_index: self.help_index(),
            detail_level: self.detail_level(),
            default_counter: self.default_counter(),
            code_page: self.code_page(),
            perf_time: self.perf_time(),
            perf_freq: self.perf_freq(),
            sample_clock: None,
            counters,
            data,
        }
    }

    /// Every instance's raw name and values, into one buffer each.
    fn read_instances(
        &self,
        defs: &[PerfCounterDefinition<'a>],
    ) -> Result<ReadInstances, DecodeError> {
        let layout = ValueLayout::new(defs);
        let count = self.instances().size_hint().1.unwrap_or(0);
        let mut read = ReadInstances {
            names: String::new(),
            ids: Vec::with_capacity(count),
            values: ValueChunks::new(count),
        };
        for inst in self.instances() {
            let inst = inst?;
            let start = read.names.len();
            inst.push_name(&mut read.names)?;
            read.values
                .push(inst.counter_block().values_of(&layout)?.owned());
            read.ids.push(ReadIds {
                raw_name: start..read.names.len(),
                parent_object: inst.parent_object_title_index(),
                parent_instance: inst.parent_object_instance(),
                unique_id: inst.unique_id(),
            });
        }
        Ok(read)
    }
}

/// The instances of one object as read, before naming: raw names in one buffer, values in chunks.
struct ReadInstances {
    names: String,
    ids: Vec<ReadIds>,
    values: ValueChunks,
}

/// One instance of [`ReadInstances`]: where its raw name lies, and the numbers that identify it.
struct ReadIds {
    raw_name: Range<usize>,
    parent_object: u32,
    parent_instance: u32,
    unique_id: i32,
}

impl ReadInstances {
    /// The raw name of instance `i`.
    fn raw_name(&self, i: usize) -> Option<&str> {
        self.names.get(self.ids.get(i)?.raw_name.clone())
    }

    /// The instances, named by `names` (made from this list).
    fn into_instances(self, names: NamedList) -> Vec<snapshot::Instance> {
        let ids = self
            .ids
            .iter()
            .map(|id| (id.parent_object, id.parent_instance, id.unique_id));
        names.instances(self.values, ids)
    }
}

/// The owned definitions of an object's counters (names unset), bases linked by position.
pub(crate) fn owned_definitions(
    defs: &[PerfCounterDefinition<'_>],
) -> Vec<snapshot::CounterDefinition> {
    let mut counters: Vec<snapshot::CounterDefinition> = defs
        .iter()
        .map(PerfCounterDefinition::to_definition)
        .collect();
    snapshot::pair_bases_by_position(&mut counters);
    counters
}

/// Iterator over an object's counter definitions; see [`PerfObjectType::counters`].
#[derive(Clone, Debug)]
pub struct Counters<'a> {
    /// The object's bytes up to `DefinitionLength`.
    r: Reader<'a>,
    pos: usize,
    remaining: u32,
    done: bool,
}

impl<'a> Iterator for Counters<'a> {
    type Item = Result<PerfCounterDefinition<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let pos = self.pos;
        let err = |kind| DecodeError::new(COUNTER_DEFINITION, pos, kind);
        let endian = self.r.endian();
        let definition_length = Bound::Field {
            owner: Some("object"),
            field: "DefinitionLength",
            value: self.r.len() as u64,
        };
        let result = (|| {
            let header: &[u8; CD::LEN] = self.r.array(pos).ok_or_else(|| {
                err(ErrorKind::PartExceeds {
                    size: CD::LEN as u64,
                    part: "definition",
                    limit: definition_length,
                })
            })?;
            let byte_length = endian.u32_at(header, CD::BYTE_LENGTH);
            if to_usize(byte_length) < CD::LEN {
                return Err(err(ErrorKind::FieldTooSmall {
                    field: "ByteLength",
                    value: byte_length.into(),
                    minimum: Bound::Fixed {
                        size: CD::LEN as u64,
                        part: "definition",
                    },
                }));
            }
            let next = pos
                .checked_add(to_usize(byte_length))
                .filter(|&n| n <= self.r.end())
                .ok_or_else(|| {
                    err(ErrorKind::FieldExceeds {
                        field: "ByteLength",
                        value: byte_length.into(),
                        limit: definition_length,
                    })
                })?;
            self.pos = next;
            Ok(PerfCounterDefinition {
                header,
                offset: pos,
                endian,
                value_offset: endian.u32_at(header, CD::COUNTER_OFFSET),
                value_size: endian.u32_at(header, CD::COUNTER_SIZE),
            })
        })();
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}

impl std::iter::FusedIterator for Counters<'_> {}

/// A validated view of a `PERF_COUNTER_DEFINITION`.
#[derive(Clone, Copy, Debug)]
pub struct PerfCounterDefinition<'a> {
    header: &'a [u8; CD::LEN],
    offset: usize,
    endian: Endian,
    value_offset: u32,
    value_size: u32,
}

impl PerfCounterDefinition<'_> {
    /// Absolute offset of this definition in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.offset
    }

    /// `ByteLength` (≥ 40, checked).
    pub fn byte_length(&self) -> u32 {
        self.endian.u32_at(self.header, CD::BYTE_LENGTH)
    }

    /// `CounterNameTitleIndex`. A base counter may reuse its numerator's index.
    pub fn name_index(&self) -> u32 {
        self.endian
            .u32_at(self.header, CD::COUNTER_NAME_TITLE_INDEX)
    }

    /// `CounterNameTitle` (0 in data).
    pub fn name_title(&self) -> u32 {
        self.endian.u32_at(self.header, CD::COUNTER_NAME_TITLE)
    }

    /// `CounterHelpTitleIndex`.
    pub fn help_index(&self) -> u32 {
        self.endian
            .u32_at(self.header, CD::COUNTER_HELP_TITLE_INDEX)
    }

    /// `CounterHelpTitle` (0 in data).
    pub fn help_title(&self) -> u32 {
        self.endian.u32_at(self.header, CD::COUNTER_HELP_TITLE)
    }

    /// `DefaultScale`: a power of ten.
    pub fn default_scale(&self) -> i32 {
        self.endian.i32_at(self.header, CD::DEFAULT_SCALE)
    }

    /// `DetailLevel`.
    pub fn detail_level(&self) -> u32 {
        self.endian.u32_at(self.header, CD::DETAIL_LEVEL)
    }

    /// `CounterType`.
    pub fn counter_type(&self) -> CounterType {
        CounterType(self.endian.u32_at(self.header, CD::COUNTER_TYPE))
    }

    /// `CounterSize`: bytes of the value (trusted over the type's size bits).
    pub fn counter_size(&self) -> u32 {
        self.value_size
    }

    /// `CounterOffset`: offset of the value from the start of the counter block.
    pub fn counter_offset(&self) -> u32 {
        self.value_offset
    }

    /// The owned definition (`name` and `base` left unset).
    pub fn to_definition(&self) -> snapshot::CounterDefinition {
        snapshot::CounterDefinition {
            index: self.name_index(),
            name: None,
            help_index: self.help_index(),
            counter_type: self.counter_type(),
            size: self.counter_size(),
            offset: self.counter_offset(),
            scale: self.default_scale(),
            detail_level: self.detail_level(),
            base: None,
        }
    }
}

/// Iterator over an object's instances; see [`PerfObjectType::instances`].
#[derive(Clone, Debug)]
pub struct Instances<'a> {
    object: PerfObjectType<'a>,
    pos: usize,
    remaining: u32,
    done: bool,
}

impl<'a> Iterator for Instances<'a> {
    type Item = Result<PerfInstanceDefinition<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let result = PerfInstanceDefinition::parse(&self.object, self.pos);
        match &result {
            Ok(inst) => {
                // Both lengths were checked to lie inside the object.
                self.pos = inst.block.r.end();
            }
            Err(_) => self.done = true,
        }
        Some(result)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            return (0, Some(0));
        }
        // Every instance takes at least 24 + 4 bytes.
        let left = self.object.r.remaining(self.pos) / (ID::LEN + CB::LEN);
        (0, Some(left.min(to_usize(self.remaining))))
    }
}

impl std::iter::FusedIterator for Instances<'_> {}

/// A validated view of a `PERF_INSTANCE_DEFINITION` with its counter block.
#[derive(Clone, Copy, Debug)]
pub struct PerfInstanceDefinition<'a> {
    header: &'a [u8; ID::LEN],
    /// The instance's `ByteLength` bytes.
    r: Reader<'a>,
    code_page: u32,
    block: PerfCounterBlock<'a>,
}

impl<'a> PerfInstanceDefinition<'a> {
    fn parse(object: &PerfObjectType<'a>, pos: usize) -> Result<Self, DecodeError> {
        let err = |kind| DecodeError::new(INSTANCE_DEFINITION, pos, kind);
        const HEADER: Bound = Bound::Fixed {
            size: ID::LEN as u64,
            part: "header",
        };
        let endian = object.r.endian();
        let header: &[u8; ID::LEN] = object.r.array(pos).ok_or_else(|| {
            err(ErrorKind::PartExceeds {
                size: ID::LEN as u64,
                part: "header",
                limit: total_byte_length(Some("object"), object.r.len()),
            })
        })?;
        let byte_length = endian.u32_at(header, ID::BYTE_LENGTH);
        if to_usize(byte_length) < ID::LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "ByteLength",
                value: byte_length.into(),
                minimum: HEADER,
            }));
        }
        let r = object.r.window(pos, to_usize(byte_length)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "ByteLength",
                value: byte_length.into(),
                limit: left_in(&object.r, pos, "object"),
            })
        })?;
        let name_offset = endian.u32_at(header, ID::NAME_OFFSET);
        let name_length = endian.u32_at(header, ID::NAME_LENGTH);
        if name_length > 0 {
            if to_usize(name_offset) < ID::LEN {
                return Err(err(ErrorKind::OffsetInHeader {
                    field: "NameOffset",
                    offset: name_offset.into(),
                    header: HEADER,
                }));
            }
            if r.slice(to_usize(name_offset), to_usize(name_length))
                .is_none()
            {
                return Err(err(ErrorKind::RangeExceeds {
                    offset_field: "NameOffset",
                    offset: name_offset.into(),
                    length_field: "NameLength",
                    length: name_length.into(),
                    limit: Bound::Field {
                        owner: Some("instance"),
                        field: "ByteLength",
                        value: byte_length.into(),
                    },
                }));
            }
        }
        let block = PerfCounterBlock::parse(object, r.end())?;
        Ok(PerfInstanceDefinition {
            header,
            r,
            code_page: object.code_page(),
            block,
        })
    }

    /// Absolute offset of this instance in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.r.start()
    }

    /// `ByteLength`: the structure, the name and its padding.
    pub fn byte_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, ID::BYTE_LENGTH)
    }

    /// `ParentObjectTitleIndex`; 0 when the instance has no parent.
    pub fn parent_object_title_index(&self) -> u32 {
        self.r
            .endian()
            .u32_at(self.header, ID::PARENT_OBJECT_TITLE_INDEX)
    }

    /// `ParentObjectInstance`: 0-based position in the parent object's instance list.
    pub fn parent_object_instance(&self) -> u32 {
        self.r
            .endian()
            .u32_at(self.header, ID::PARENT_OBJECT_INSTANCE)
    }

    /// `UniqueID`; [`PERF_NO_UNIQUE_ID`] when instances are identified by name.
    pub fn unique_id(&self) -> i32 {
        self.r.endian().i32_at(self.header, ID::UNIQUE_ID)
    }

    /// `NameOffset`, from the start of this structure.
    pub fn name_offset(&self) -> u32 {
        self.r.endian().u32_at(self.header, ID::NAME_OFFSET)
    }

    /// `NameLength`: bytes including the NUL, excluding padding; 0 for an unnamed instance.
    pub fn name_length(&self) -> u32 {
        self.r.endian().u32_at(self.header, ID::NAME_LENGTH)
    }

    /// The `NameLength` bytes of the name, NUL included (checked to lie inside `ByteLength`).
    pub fn name_bytes(&self) -> &'a [u8] {
        if self.name_length() == 0 {
            return &[];
        }
        self.r
            .slice(to_usize(self.name_offset()), to_usize(self.name_length()))
            .unwrap_or(&[])
    }

    /// The name as the data gives it: UTF-16 in the block's byte order when the object's `CodePage` is
    /// 0, otherwise bytes in that Windows code page; up to the first NUL. Malformed sequences become
    /// U+FFFD. A code page that has no decoder is an error.
    pub fn name(&self) -> Result<String, DecodeError> {
        let mut name = String::new();
        self.name_into(&mut name)?;
        Ok(name)
    }

    /// [`PerfInstanceDefinition::name`] into `out`, which is cleared first: a walk over many instances
    /// decodes every name into one reused buffer.
    pub fn name_into(&self, out: &mut String) -> Result<(), DecodeError> {
        out.clear();
        self.push_name(out)
    }

    /// [`PerfInstanceDefinition::name`] appended to `out`.
    fn push_name(&self, out: &mut String) -> Result<(), DecodeError> {
        push_instance_name(
            self.name_bytes(),
            self.r.endian(),
            self.code_page,
            self.r.start(),
            out,
        )
    }

    /// The instance's counter block.
    pub fn counter_block(&self) -> PerfCounterBlock<'a> {
        self.block
    }
}

/// Decodes the name bytes of an instance (at `offset` in the buffer, for errors) of an object
/// whose `CodePage` is `code_page` into `out`, cleared first; see [`PerfInstanceDefinition::name`].
pub(crate) fn instance_name_into(
    bytes: &[u8],
    endian: Endian,
    code_page: u32,
    offset: usize,
    out: &mut String,
) -> Result<(), DecodeError> {
    out.clear();
    push_instance_name(bytes, endian, code_page, offset, out)
}

/// [`instance_name_into`] appended to `out`.
pub(crate) fn push_instance_name(
    bytes: &[u8],
    endian: Endian,
    code_page: u32,
    offset: usize,
    out: &mut String,
) -> Result<(), DecodeError> {
    if code_page == 0 {
        utf16_until_nul_into(bytes, endian, out);
        return Ok(());
    }
    let encoding = u16::try_from(code_page)
        .ok()
        .and_then(codepage::to_encoding_no_replacement)
        .ok_or_else(|| {
            DecodeError::new(
                INSTANCE_DEFINITION,
                offset,
                ErrorKind::Unsupported {
                    field: "CodePage",
                    value: code_page.into(),
                    owner: Some("object"),
                },
            )
        })?;
    let decoded: Cow<'_, str> = encoding.decode_without_bom_handling(bytes).0;
    out.push_str(decoded.split('\0').next().unwrap_or(""));
    Ok(())
}

/// A validated view of a `PERF_COUNTER_BLOCK`: `ByteLength` bytes starting with that field.
#[derive(Clone, Copy, Debug)]
pub struct PerfCounterBlock<'a> {
    /// The block's `ByteLength` bytes.
    r: Reader<'a>,
}

impl<'a> PerfCounterBlock<'a> {
    // Inlined into `PerfInstanceDefinition::parse`: called, it returned its `Result` through memory in
    // separate stores that the caller read back in one wider load, a store-to-load forwarding stall
    // for every instance (30 % of walking the instances in a profile of the `v1_global` snapshot).
    #[inline(always)]
    fn parse(object: &PerfObjectType<'a>, pos: usize) -> Result<Self, DecodeError> {
        let err = |kind| DecodeError::new(COUNTER_BLOCK, pos, kind);
        let len = object
            .r
            .array::<{ CB::LEN }>(pos)
            .map(|b| object.r.endian().u32_at(b, CB::BYTE_LENGTH))
            .ok_or_else(|| {
                err(ErrorKind::PartExceeds {
                    size: CB::LEN as u64,
                    part: "ByteLength",
                    limit: total_byte_length(Some("object"), object.r.len()),
                })
            })?;
        if to_usize(len) < CB::LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "ByteLength",
                value: len.into(),
                minimum: Bound::OwnField {
                    size: CB::LEN as u64,
                },
            }));
        }
        let r = object.r.window(pos, to_usize(len)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "ByteLength",
                value: len.into(),
                limit: left_in(&object.r, pos, "object"),
            })
        })?;
        Ok(PerfCounterBlock { r })
    }

    /// Absolute offset of this block in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.r.start()
    }

    /// `ByteLength`: the 4-byte field plus the counter data.
    pub fn byte_length(&self) -> u32 {
        u32::try_from(self.r.len()).unwrap_or(u32::MAX)
    }

    /// The block's bytes (`ByteLength` of them, the length field included).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.r.as_bytes()
    }

    /// The value of `def`: `CounterSize` bytes at `CounterOffset`. Sizes 4 and 8 are read as integers in
    /// the block's byte order; any other size is returned as bytes.
    #[inline]
    pub fn value(&self, def: &PerfCounterDefinition<'_>) -> Result<RawValue<'a>, DecodeError> {
        self.value_at(def.value_offset, def.value_size)
    }

    /// The `size` bytes at `offset` of the block, like [`PerfCounterBlock::value`].
    #[inline]
    pub fn value_at(&self, offset: u32, size: u32) -> Result<RawValue<'a>, DecodeError> {
        let bytes = self
            .r
            .slice(to_usize(offset), to_usize(size))
            .ok_or_else(|| {
                DecodeError::new(
                    COUNTER_BLOCK,
                    self.r.start(),
                    ErrorKind::CounterOutOfBlock {
                        offset: offset.into(),
                        size: size.into(),
                        limit: Bound::Field {
                            owner: Some("counter block"),
                            field: "ByteLength",
                            value: self.r.len() as u64,
                        },
                    },
                )
            })?;
        Ok(match bytes {
            [a, b, c, d] => RawValue::U32(self.r.endian().u32([*a, *b, *c, *d])),
            [a, b, c, d, e, f, g, h] => {
                RawValue::U64(self.r.endian().u64([*a, *b, *c, *d, *e, *f, *g, *h]))
            }
            other => RawValue::Bytes(other),
        })
    }

    /// The owned values of every definition, in definition order.
    pub fn values(&self, defs: &[PerfCounterDefinition<'_>]) -> Result<Vec<Value>, DecodeError> {
        let mut values = Vec::with_capacity(defs.len());
        for d in defs {
            values.push(self.value(d)?.to_value());
        }
        Ok(values)
    }

    /// Every value of `layout`'s definitions, in definition order, the block checked once: when it
    /// holds the layout's furthest value, each value is read without a check of its own; otherwise
    /// the error is [`PerfCounterBlock::value`]'s for the first definition outside the block.
    #[inline]
    pub fn values_of<'l>(
        &self,
        layout: &'l ValueLayout<'_>,
    ) -> Result<LayoutValues<'a, 'l>, DecodeError> {
        let bytes = self.r.as_bytes();
        if bytes.len() < layout.end {
            for d in &layout.defs {
                self.value(d)?;
            }
        }
        Ok(LayoutValues {
            bytes,
            endian: self.r.endian(),
            fields: layout.fields.iter(),
        })
    }
}

/// The counter definitions of an object, prepared to read the values of all its counter blocks:
/// each definition's `CounterOffset` and `CounterSize`, and the end of the furthest value, so one
/// comparison per block checks every value ([`PerfCounterBlock::values_of`]).
#[derive(Clone, Debug)]
pub struct ValueLayout<'a> {
    defs: Vec<PerfCounterDefinition<'a>>,
    fields: Vec<(usize, usize)>,
    end: usize,
}

impl<'a> ValueLayout<'a> {
    /// The layout of these definitions (an object's, from [`PerfObjectType::counters`]).
    pub fn new(defs: &[PerfCounterDefinition<'a>]) -> Self {
        let fields: Vec<(usize, usize)> = defs
            .iter()
            .map(|d| (to_usize(d.value_offset), to_usize(d.value_size)))
            .collect();
        let end = fields
            .iter()
            .map(|&(offset, size)| offset.saturating_add(size))
            .max()
            .unwrap_or(0);
        ValueLayout {
            defs: defs.to_vec(),
            fields,
            end,
        }
    }

    /// The definitions, in order.
    pub fn definitions(&self) -> &[PerfCounterDefinition<'a>] {
        &self.defs
    }
}

impl ValueLayout<'_> {
    /// The values of a counter block's bytes (checked by [`PerfCounterBlock::values_of`] to hold every
    /// value of this layout), for [`snapshot::RawPacker`] with the fields of [`ValueLayout::field`].
    pub(crate) fn values_in<'b>(&self, bytes: &'b [u8]) -> BlockValues<'b> {
        BlockValues { bytes }
    }

    /// Where counter `counter`'s value is in every counter block of this layout, and in which
    /// byte order; `None` for a counter this layout does not have.
    pub(crate) fn field(&self, counter: usize, endian: Endian) -> Option<BlockField> {
        let &(offset, size) = self.fields.get(counter)?;
        Some(BlockField::new(offset, size, endian))
    }
}

/// The value of the field at `offset` of `size` bytes of a counter block's bytes: sizes 4 and 8
/// as integers, any other size as bytes (empty when out of the block).
#[inline]
fn field_value(bytes: &[u8], endian: Endian, offset: usize, size: usize) -> RawValue<'_> {
    match size {
        4 => RawValue::U32(endian.u32_at(bytes, offset)),
        8 => RawValue::U64(endian.u64_at(bytes, offset)),
        _ => RawValue::Bytes(
            bytes
                .get(offset..offset.saturating_add(size))
                .unwrap_or_default(),
        ),
    }
}

/// One counter block read in place; see [`ValueLayout::values_in`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockValues<'b> {
    bytes: &'b [u8],
}

/// Where one counter's value is in a counter block, as [`field_value`] reads it: a 4- or 8-byte
/// integer at an offset in the block's byte order, or a value of another size (not an integer).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockField {
    offset: usize,
    /// One of the `BlockField::*` kinds: the width and byte order, as
    /// [`snapshot::RawValues::kind`] gives it.
    kind: u8,
}

impl BlockField {
    /// Not an integer: never read as a number.
    pub(crate) const NOT_INTEGER: BlockField = BlockField {
        offset: 0,
        kind: BlockField::OTHER,
    };
    const OTHER: u8 = 0;
    const U32_LE: u8 = 1;
    const U32_BE: u8 = 2;
    const U64_LE: u8 = 3;
    const U64_BE: u8 = 4;

    /// The field of `size` bytes at `offset` in blocks of byte order `endian`.
    fn new(offset: usize, size: usize, endian: Endian) -> BlockField {
        let kind = match (size, endian) {
            (4, Endian::Little) => BlockField::U32_LE,
            (4, Endian::Big) => BlockField::U32_BE,
            (8, Endian::Little) => BlockField::U64_LE,
            (8, Endian::Big) => BlockField::U64_BE,
            _ => BlockField::OTHER,
        };
        BlockField { offset, kind }
    }
}

impl snapshot::RawValues for BlockValues<'_> {
    type Field = BlockField;

    #[inline(always)]
    fn int(self, field: BlockField) -> Option<i64> {
        match field.kind {
            BlockField::U32_LE => self.int_as::<{ BlockField::U32_LE }>(field),
            BlockField::U32_BE => self.int_as::<{ BlockField::U32_BE }>(field),
            BlockField::U64_LE => self.int_as::<{ BlockField::U64_LE }>(field),
            BlockField::U64_BE => self.int_as::<{ BlockField::U64_BE }>(field),
            _ => None,
        }
    }

    #[inline(always)]
    fn kind(field: BlockField) -> u8 {
        field.kind
    }

    #[inline(always)]
    fn int_as<const KIND: u8>(self, field: BlockField) -> Option<i64> {
        let (bytes, offset) = (self.bytes, field.offset);
        match KIND {
            BlockField::U32_LE => Some(i64::from(Endian::Little.u32_at(bytes, offset))),
            BlockField::U32_BE => Some(i64::from(Endian::Big.u32_at(bytes, offset))),
            BlockField::U64_LE => Some(Endian::Little.u64_at(bytes, offset) as i64),
            BlockField::U64_BE => Some(Endian::Big.u64_at(bytes, offset) as i64),
            _ => None,
        }
    }
}

/// The values of one counter block in definition order; see [`PerfCounterBlock::values_of`].
#[derive(Clone, Debug)]
pub struct LayoutValues<'a, 'l> {
    /// The block's bytes, checked to hold every value.
    bytes: &'a [u8],
    endian: Endian,
    fields: std::slice::Iter<'l, (usize, usize)>,
}

impl<'a, 'l> LayoutValues<'a, 'l> {
    /// The value of `size` bytes at `offset`, checked to lie in the block by
    /// [`PerfCounterBlock::values_of`].
    #[inline]
    fn read(&self, offset: usize, size: usize) -> RawValue<'a> {
        field_value(self.bytes, self.endian, offset, size)
    }

    /// The owned values, as an iterator over the layout's fields whose length the standard
    /// library trusts: a `Vec` extended with it writes the values without a check per value.
    #[inline]
    fn owned(self) -> impl ExactSizeIterator<Item = Value> + use<'a, 'l> {
        let fields = self.fields.as_slice();
        fields
            .iter()
            .map(move |&(offset, size)| self.read(offset, size).to_value())
    }
}

impl<'a> Iterator for LayoutValues<'a, '_> {
    type Item = RawValue<'a>;

    #[inline]
    fn next(&mut self) -> Option<RawValue<'a>> {
        let &(offset, size) = self.fields.next()?;
        Some(self.read(offset, size))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.fields.size_hint()
    }
}

impl ExactSizeIterator for LayoutValues<'_, '_> {}

/// A counter value borrowed from a counter block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RawValue<'a> {
    /// A 4-byte value.
    U32(u32),
    /// An 8-byte value.
    U64(u64),
    /// A value of any other size (text, zero-size, unusual providers).
    Bytes(&'a [u8]),
}

impl RawValue<'_> {
    /// The value as an unsigned integer; `None` for [`RawValue::Bytes`].
    #[inline]
    pub fn as_u64(self) -> Option<u64> {
        match self {
            RawValue::U32(v) => Some(u64::from(v)),
            RawValue::U64(v) => Some(v),
            RawValue::Bytes(_) => None,
        }
    }

    /// The owned [`Value`].
    pub fn to_value(self) -> Value {
        match self {
            RawValue::U32(v) => Value::U32(v),
            RawValue::U64(v) => Value::U64(v),
            RawValue::Bytes(b) => Value::Bytes(b.into()),
        }
    }
}

impl PerfDataBlock<'_> {
    /// Converts the whole block into the owned [`Snapshot`](crate::snapshot::Snapshot): header times,
    /// system name, objects with their definitions (bases linked by position), values, and instances
    /// named as PDH shows them (see [`resolve_instance_names`](super::resolve_instance_names)). Object
    /// and counter names are left `None`; a name table fills them.
    pub fn to_snapshot(&self) -> Result<snapshot::Snapshot, DecodeError> {
        let mut objects = Vec::new();
        let mut read = Vec::new();
        for object in self.objects() {
            let (object, instances) = object?.owned()?;
            objects.push(object);
            read.push(instances);
        }
        // Each instance list named by the rule of `resolve_instance_names`, from the raw names as
        // read: the parents are raw names of other lists.
        let indexes: Vec<u32> = objects.iter().map(|o| o.index).collect();
        let named: Vec<Option<NamedList>> = read
            .iter()
            .map(|list| {
                let list = list.as_ref()?;
                let mut parents = ParentLookup::new(&indexes);
                Some(NamedList::new(list.ids.iter().map(|id| {
                    let parent = parents.find(id.parent_object, id.parent_instance, |o, i| {
                        read.get(o)?.as_ref()?.raw_name(i)
                    });
                    (
                        parent,
                        list.names.get(id.raw_name.clone()).unwrap_or_default(),
                    )
                })))
            })
            .collect();
        for ((object, list), names) in objects.iter_mut().zip(read).zip(named) {
            if let (Some(list), Some(names)) = (list, names) {
                object.data = snapshot::ObjectData::Instances(list.into_instances(names));
            }
        }
        Ok(snapshot::Snapshot {
            system_name: self.system_name()?,
            system_time: self.system_time(),
            perf_time: self.perf_time(),
            perf_freq: self.perf_freq(),
            perf_time_100ns: self.perf_time_100ns(),
            objects,
        })
    }
}
