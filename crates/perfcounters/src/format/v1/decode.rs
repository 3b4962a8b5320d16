//! Zero-copy, validated views of a V1 block.
//!
//! Each view borrows the caller's buffer and checks the bounds of its structure when it is created; the
//! accessors then read fixed fields of that already-checked structure. Walking never trusts a count
//! alone: every step advances by a length that was checked to be at least the size of the structure and
//! to stay inside its parent, so iteration ends after at most `bytes / minimal record size` steps.

use std::borrow::Cow;

use super::read::{array_at, bytes_at, field, to_usize, utf16_until_nul, Endian};
use crate::counter_type::CounterType;
use crate::format::{Bound, DecodeError, ErrorKind};
use crate::snapshot::{self, SystemTime, Value};

/// Size of `PERF_DATA_BLOCK`.
pub const DATA_BLOCK_LEN: usize = 88;
/// Size of `PERF_OBJECT_TYPE`.
pub const OBJECT_TYPE_LEN: usize = 64;
/// Size of `PERF_COUNTER_DEFINITION`.
pub const COUNTER_DEFINITION_LEN: usize = 40;
/// Size of `PERF_INSTANCE_DEFINITION`.
pub const INSTANCE_DEFINITION_LEN: usize = 24;
/// Size of `PERF_COUNTER_BLOCK` (its `ByteLength` field).
pub const COUNTER_BLOCK_LEN: usize = 4;

/// `PERF_OBJECT_TYPE.NumInstances` of a single-instance object.
pub const PERF_NO_INSTANCES: i32 = -1;
/// `NumInstances` of a metadata-only collection of a multi-instance object (no instance blocks).
pub const PERF_METADATA_MULTIPLE_INSTANCES: i32 = -2;
/// `NumInstances` of a metadata-only collection of a single-instance object (no counter block).
pub const PERF_METADATA_NO_INSTANCES: i32 = -3;
/// `PERF_INSTANCE_DEFINITION.UniqueID` when instances are identified by name.
pub const PERF_NO_UNIQUE_ID: i32 = -1;

/// Structure names used in [`DecodeError`]s.
pub mod structure {
    /// `PERF_DATA_BLOCK`.
    pub const DATA_BLOCK: &str = "PERF_DATA_BLOCK";
    /// `PERF_OBJECT_TYPE`.
    pub const OBJECT_TYPE: &str = "PERF_OBJECT_TYPE";
    /// `PERF_COUNTER_DEFINITION`.
    pub const COUNTER_DEFINITION: &str = "PERF_COUNTER_DEFINITION";
    /// `PERF_INSTANCE_DEFINITION`.
    pub const INSTANCE_DEFINITION: &str = "PERF_INSTANCE_DEFINITION";
    /// `PERF_COUNTER_BLOCK`.
    pub const COUNTER_BLOCK: &str = "PERF_COUNTER_BLOCK";
}
use structure::{COUNTER_BLOCK, COUNTER_DEFINITION, DATA_BLOCK, INSTANCE_DEFINITION, OBJECT_TYPE};

/// The fixed part of `PERF_DATA_BLOCK`, as a bound in errors.
const HEADER: Bound = Bound::Fixed {
    size: DATA_BLOCK_LEN as u64,
    part: "header",
};

/// `TotalByteLength` (of `owner`, or of the failing structure) as a bound in errors.
fn total_byte_length(owner: Option<&'static str>, value: impl TryInto<u64>) -> Bound {
    Bound::Field {
        owner,
        field: "TotalByteLength",
        value: value.try_into().unwrap_or(u64::MAX),
    }
}

/// The object's `DefinitionLength` as a bound in errors.
fn definition_length(value: usize) -> Bound {
    Bound::Field {
        owner: Some("object"),
        field: "DefinitionLength",
        value: value as u64,
    }
}

/// The bytes of an object of `total` bytes left from `pos` on, as a bound in errors.
fn left_in_object(total: usize, pos: usize) -> Bound {
    Bound::Left {
        length: total.saturating_sub(pos) as u64,
        parent: "object",
    }
}

const SIGNATURE: [u16; 4] = [b'P' as u16, b'E' as u16, b'R' as u16, b'F' as u16];

#[inline]
fn f_u16<const N: usize>(s: &[u8; N], at: usize, e: Endian) -> u16 {
    e.u16(field(s, at))
}
#[inline]
fn f_u32<const N: usize>(s: &[u8; N], at: usize, e: Endian) -> u32 {
    e.u32(field(s, at))
}
#[inline]
fn f_i32<const N: usize>(s: &[u8; N], at: usize, e: Endian) -> i32 {
    f_u32(s, at, e) as i32
}
#[inline]
fn f_i64<const N: usize>(s: &[u8; N], at: usize, e: Endian) -> i64 {
    e.u64(field(s, at)) as i64
}

/// A validated view of a `PERF_DATA_BLOCK` (the result of `RegQueryValueEx(HKEY_PERFORMANCE_DATA, …)`).
///
/// [`PerfDataBlock::parse`] checks the signature, the byte order, `TotalByteLength` and `HeaderLength`;
/// objects are validated one by one as [`PerfDataBlock::objects`] walks them.
#[derive(Clone, Copy, Debug)]
pub struct PerfDataBlock<'a> {
    /// The buffer cut to `TotalByteLength`.
    data: &'a [u8],
    header: &'a [u8; DATA_BLOCK_LEN],
    endian: Endian,
}

impl<'a> PerfDataBlock<'a> {
    /// Validates the header of the block at the start of `data`.
    ///
    /// `LittleEndian` = 0 selects big-endian for every integer and UTF-16 code unit of the block,
    /// including the signature; any other value selects little-endian. `Version` and `Revision` are
    /// recorded but not checked. Bytes after `TotalByteLength` are ignored.
    pub fn parse(data: &'a [u8]) -> Result<Self, DecodeError> {
        let err = |kind| DecodeError::new(DATA_BLOCK, 0, kind);
        let header: &[u8; DATA_BLOCK_LEN] = array_at(data, 0).ok_or_else(|| {
            err(ErrorKind::BufferTooShort {
                length: data.len() as u64,
                header: DATA_BLOCK_LEN as u64,
            })
        })?;
        let endian = if field::<DATA_BLOCK_LEN, 4>(header, 8) == [0; 4] {
            Endian::Big
        } else {
            Endian::Little
        };
        let sig = [0usize, 2, 4, 6].map(|at| f_u16(header, at, endian));
        if sig != SIGNATURE {
            let raw: [u8; 8] = field(header, 0);
            return Err(err(ErrorKind::BadSignature {
                field: "Signature",
                found: Box::new(raw),
                expected: match endian {
                    Endian::Little => "\"PERF\" in UTF-16 (little-endian)",
                    Endian::Big => "\"PERF\" in UTF-16 (big-endian, since LittleEndian is 0)",
                },
            }));
        }
        let total = f_u32(header, 20, endian);
        if to_usize(total) < DATA_BLOCK_LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "TotalByteLength",
                value: total.into(),
                minimum: HEADER,
            }));
        }
        let data = data.get(..to_usize(total)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "TotalByteLength",
                value: total.into(),
                limit: Bound::Buffer {
                    length: data.len() as u64,
                },
            })
        })?;
        let header_length = f_u32(header, 24, endian);
        if to_usize(header_length) < DATA_BLOCK_LEN {
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
                limit: total_byte_length(None, total),
            }));
        }
        Ok(PerfDataBlock {
            data,
            header,
            endian,
        })
    }

    /// The block's bytes (`TotalByteLength` of them).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// The byte order of the block.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// `Signature` as four UTF-16 code units (always `"PERF"` after a successful parse).
    pub fn signature(&self) -> [u16; 4] {
        [0usize, 2, 4, 6].map(|at| f_u16(self.header, at, self.endian))
    }

    /// `LittleEndian` as stored (read in the block's byte order).
    pub fn little_endian(&self) -> u32 {
        f_u32(self.header, 8, self.endian)
    }

    /// `Version` (1 in known data; other values are accepted).
    pub fn version(&self) -> u32 {
        f_u32(self.header, 12, self.endian)
    }

    /// `Revision` (1 in known data; other values are accepted).
    pub fn revision(&self) -> u32 {
        f_u32(self.header, 16, self.endian)
    }

    /// `TotalByteLength`: the size of the whole block.
    pub fn total_byte_length(&self) -> u32 {
        f_u32(self.header, 20, self.endian)
    }

    /// `HeaderLength`: the offset of the first object (header plus system name).
    pub fn header_length(&self) -> u32 {
        f_u32(self.header, 24, self.endian)
    }

    /// `NumObjectTypes` as stored; [`PerfDataBlock::objects`] may yield fewer.
    pub fn num_object_types(&self) -> u32 {
        f_u32(self.header, 28, self.endian)
    }

    /// `DefaultObject` (reserved; the title index of the default object in real data).
    pub fn default_object(&self) -> i32 {
        f_i32(self.header, 32, self.endian)
    }

    /// `SystemTime` (UTC).
    pub fn system_time(&self) -> SystemTime {
        let w = |i: usize| f_u16(self.header, 36 + 2 * i, self.endian);
        SystemTime {
            year: w(0),
            month: w(1),
            day_of_week: w(2),
            day: w(3),
            hour: w(4),
            minute: w(5),
            second: w(6),
            milliseconds: w(7),
        }
    }

    /// The 4 padding bytes after `SystemTime` (offset 52), as stored.
    pub fn padding(&self) -> [u8; 4] {
        field(self.header, 52)
    }

    /// `PerfTime`: the performance counter (QPC ticks).
    pub fn perf_time(&self) -> i64 {
        f_i64(self.header, 56, self.endian)
    }

    /// `PerfFreq`: the performance counter's frequency.
    pub fn perf_freq(&self) -> i64 {
        f_i64(self.header, 64, self.endian)
    }

    /// `PerfTime100nSec`: 100 ns units since 1601-01-01 UTC.
    pub fn perf_time_100ns(&self) -> i64 {
        f_i64(self.header, 72, self.endian)
    }

    /// `SystemNameLength`: bytes, including the NUL.
    pub fn system_name_length(&self) -> u32 {
        f_u32(self.header, 80, self.endian)
    }

    /// `SystemNameOffset`: from the start of the block.
    pub fn system_name_offset(&self) -> u32 {
        f_u32(self.header, 84, self.endian)
    }

    /// The raw bytes of the system name (`SystemNameLength` bytes at `SystemNameOffset`).
    pub fn system_name_bytes(&self) -> Result<&'a [u8], DecodeError> {
        let (off, len) = (self.system_name_offset(), self.system_name_length());
        bytes_at(self.data, to_usize(off), to_usize(len)).ok_or_else(|| {
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
                        value: self.data.len() as u64,
                    },
                },
            )
        })
    }

    /// The system name (UTF-16, up to the first NUL; unpaired surrogates become U+FFFD).
    pub fn system_name(&self) -> Result<String, DecodeError> {
        Ok(utf16_until_nul(self.system_name_bytes()?, self.endian))
    }

    /// The objects, in data order. The walk starts at `HeaderLength`, moves by each object's
    /// `TotalByteLength`, and stops after `NumObjectTypes` objects or at the block's `TotalByteLength`,
    /// whichever comes first. After an error the iterator ends.
    pub fn objects(&self) -> Objects<'a> {
        Objects {
            data: self.data,
            endian: self.endian,
            pos: to_usize(self.header_length()),
            remaining: self.num_object_types(),
            done: false,
        }
    }

    /// The first object with this title index (`ObjectNameTitleIndex`), skipping nothing: an error while
    /// walking to it is returned.
    pub fn object_by_index(&self, index: u32) -> Result<Option<ObjectType<'a>>, DecodeError> {
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
    data: &'a [u8],
    endian: Endian,
    pos: usize,
    remaining: u32,
    done: bool,
}

impl<'a> Iterator for Objects<'a> {
    type Item = Result<ObjectType<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.remaining == 0 || self.pos >= self.data.len() {
            return None;
        }
        self.remaining -= 1;
        match ObjectType::parse(self.data, self.pos, self.endian) {
            Ok(o) => {
                // `parse` checked that pos + TotalByteLength lies inside the block.
                self.pos = self.pos.saturating_add(o.data.len());
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
pub struct ObjectType<'a> {
    /// The object's `TotalByteLength` bytes.
    data: &'a [u8],
    header: &'a [u8; OBJECT_TYPE_LEN],
    offset: usize,
    endian: Endian,
}

impl<'a> ObjectType<'a> {
    fn parse(block: &'a [u8], pos: usize, endian: Endian) -> Result<Self, DecodeError> {
        let err = |kind| DecodeError::new(OBJECT_TYPE, pos, kind);
        const HEADER: Bound = Bound::Fixed {
            size: OBJECT_TYPE_LEN as u64,
            part: "header",
        };
        let header: &[u8; OBJECT_TYPE_LEN] = array_at(block, pos).ok_or_else(|| {
            err(ErrorKind::PartExceeds {
                size: OBJECT_TYPE_LEN as u64,
                part: "header",
                limit: total_byte_length(Some("block"), block.len()),
            })
        })?;
        let total = f_u32(header, 0, endian);
        if to_usize(total) < OBJECT_TYPE_LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "TotalByteLength",
                value: total.into(),
                minimum: HEADER,
            }));
        }
        let data = bytes_at(block, pos, to_usize(total)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "TotalByteLength",
                value: total.into(),
                limit: Bound::Left {
                    length: block.len().saturating_sub(pos) as u64,
                    parent: "block",
                },
            })
        })?;
        let header_length = f_u32(header, 8, endian);
        if to_usize(header_length) < OBJECT_TYPE_LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "HeaderLength",
                value: header_length.into(),
                minimum: HEADER,
            }));
        }
        let definition_length = f_u32(header, 4, endian);
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
                limit: total_byte_length(None, total),
            }));
        }
        let num_counters = f_u32(header, 32, endian);
        let room = (definition_length - header_length) / COUNTER_DEFINITION_LEN as u32;
        if num_counters > room {
            return Err(err(ErrorKind::ItemsDoNotFit {
                field: "NumCounters",
                count: num_counters.into(),
                items: "definitions",
                item_size: COUNTER_DEFINITION_LEN as u64,
                start_field: "HeaderLength",
                start: header_length.into(),
                end_field: "DefinitionLength",
                end: definition_length.into(),
            }));
        }
        let num_instances = f_i32(header, 40, endian);
        if num_instances < PERF_METADATA_NO_INSTANCES {
            return Err(err(ErrorKind::InvalidValue {
                field: "NumInstances",
                value: num_instances.into(),
                rule: "neither a count nor one of the special values -1, -2, -3",
            }));
        }
        Ok(ObjectType {
            data,
            header,
            offset: pos,
            endian,
        })
    }

    /// Absolute offset of this object in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.offset
    }

    /// The object's bytes (`TotalByteLength` of them).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// `TotalByteLength`: header, definitions, instances and counter blocks.
    pub fn total_byte_length(&self) -> u32 {
        f_u32(self.header, 0, self.endian)
    }

    /// `DefinitionLength`: header plus counter definitions; offset of the first instance or of the
    /// counter block.
    pub fn definition_length(&self) -> u32 {
        f_u32(self.header, 4, self.endian)
    }

    /// `HeaderLength`: offset of the first counter definition.
    pub fn header_length(&self) -> u32 {
        f_u32(self.header, 8, self.endian)
    }

    /// `ObjectNameTitleIndex`.
    pub fn name_index(&self) -> u32 {
        f_u32(self.header, 12, self.endian)
    }

    /// `ObjectNameTitle` (0 in data; a pointer field on 32-bit Windows).
    pub fn name_title(&self) -> u32 {
        f_u32(self.header, 16, self.endian)
    }

    /// `ObjectHelpTitleIndex`.
    pub fn help_index(&self) -> u32 {
        f_u32(self.header, 20, self.endian)
    }

    /// `ObjectHelpTitle` (0 in data).
    pub fn help_title(&self) -> u32 {
        f_u32(self.header, 24, self.endian)
    }

    /// `DetailLevel`.
    pub fn detail_level(&self) -> u32 {
        f_u32(self.header, 28, self.endian)
    }

    /// `NumCounters`.
    pub fn num_counters(&self) -> u32 {
        f_u32(self.header, 32, self.endian)
    }

    /// `DefaultCounter`, −1 for none.
    pub fn default_counter(&self) -> i32 {
        f_i32(self.header, 36, self.endian)
    }

    /// `NumInstances`: a count, or [`PERF_NO_INSTANCES`], [`PERF_METADATA_MULTIPLE_INSTANCES`],
    /// [`PERF_METADATA_NO_INSTANCES`] (checked to be ≥ −3).
    pub fn num_instances(&self) -> i32 {
        f_i32(self.header, 40, self.endian)
    }

    /// `CodePage` of the instance names; 0 means UTF-16.
    pub fn code_page(&self) -> u32 {
        f_u32(self.header, 44, self.endian)
    }

    /// `PerfTime`: the object's own clock.
    pub fn perf_time(&self) -> i64 {
        f_i64(self.header, 48, self.endian)
    }

    /// `PerfFreq`: the object's clock frequency.
    pub fn perf_freq(&self) -> i64 {
        f_i64(self.header, 56, self.endian)
    }

    /// The counter definitions, from `HeaderLength`, moving by each definition's `ByteLength`, at most
    /// `NumCounters` of them and never past `DefinitionLength`. After an error the iterator ends.
    pub fn counters(&self) -> Counters<'a> {
        let end = to_usize(self.definition_length());
        Counters {
            data: self.data.get(..end).unwrap_or(&[]),
            base: self.offset,
            endian: self.endian,
            pos: to_usize(self.header_length()),
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
            pos: to_usize(self.definition_length()),
            remaining,
            done: false,
        }
    }

    /// The single counter block of a single-instance object (`NumInstances` = −1), at
    /// `DefinitionLength`; `None` for every other `NumInstances` (0, −2 and −3 carry no counter block).
    pub fn counter_block(&self) -> Result<Option<CounterBlock<'a>>, DecodeError> {
        if self.num_instances() != PERF_NO_INSTANCES {
            return Ok(None);
        }
        if self.total_byte_length() <= self.definition_length() {
            return Err(DecodeError::new(
                OBJECT_TYPE,
                self.offset,
                ErrorKind::NoRoomFor {
                    what: "single-instance object",
                    part: COUNTER_BLOCK,
                    end_field: "TotalByteLength",
                    end: self.total_byte_length().into(),
                    start_field: "DefinitionLength",
                    start: self.definition_length().into(),
                },
            ));
        }
        CounterBlock::parse(self, to_usize(self.definition_length())).map(Some)
    }

    /// Converts the object into the owned model: definitions with base links, values, and instances
    /// with their raw names (parent and `#n` resolution needs the whole block; see
    /// [`PerfDataBlock::to_snapshot`]).
    pub fn to_object(&self) -> Result<snapshot::Object, DecodeError> {
        let defs: Vec<CounterDefinition<'a>> = self.counters().collect::<Result<_, _>>()?;
        let mut counters: Vec<snapshot::CounterDefinition> =
            defs.iter().map(CounterDefinition::to_definition).collect();
        snapshot::pair_bases_by_position(&mut counters);
        let data = match self.num_instances() {
            PERF_NO_INSTANCES => {
                let block = self.counter_block()?.ok_or_else(|| {
                    DecodeError::new(
                        OBJECT_TYPE,
                        self.offset,
                        ErrorKind::NoRoomFor {
                            what: "single-instance object",
                            part: COUNTER_BLOCK,
                            end_field: "TotalByteLength",
                            end: self.total_byte_length().into(),
                            start_field: "DefinitionLength",
                            start: self.definition_length().into(),
                        },
                    )
                })?;
                snapshot::ObjectData::Single(block.values(&defs)?)
            }
            PERF_METADATA_MULTIPLE_INSTANCES => snapshot::ObjectData::MetadataOnly {
                multiple_instances: true,
            },
            PERF_METADATA_NO_INSTANCES => snapshot::ObjectData::MetadataOnly {
                multiple_instances: false,
            },
            _ => {
                let mut instances = Vec::new();
                for inst in self.instances() {
                    let inst = inst?;
                    let raw_name = inst.name()?;
                    instances.push(snapshot::Instance {
                        name: raw_name.clone(),
                        raw_name,
                        parent: None,
                        index: 0,
                        parent_object: inst.parent_object_title_index(),
                        parent_instance: inst.parent_object_instance(),
                        unique_id: inst.unique_id(),
                        values: inst.counter_block().values(&defs)?,
                    });
                }
                snapshot::ObjectData::Instances(instances)
            }
        };
        Ok(snapshot::Object {
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
        })
    }
}

/// Iterator over an object's counter definitions; see [`ObjectType::counters`].
#[derive(Clone, Debug)]
pub struct Counters<'a> {
    /// The object's bytes up to `DefinitionLength`.
    data: &'a [u8],
    base: usize,
    endian: Endian,
    pos: usize,
    remaining: u32,
    done: bool,
}

impl<'a> Iterator for Counters<'a> {
    type Item = Result<CounterDefinition<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let abs = self.base.saturating_add(self.pos);
        let err = |kind| DecodeError::new(COUNTER_DEFINITION, abs, kind);
        let dl = self.data.len();
        let result = (|| {
            let header: &[u8; COUNTER_DEFINITION_LEN] =
                array_at(self.data, self.pos).ok_or_else(|| {
                    err(ErrorKind::PartExceeds {
                        size: COUNTER_DEFINITION_LEN as u64,
                        part: "definition",
                        limit: definition_length(dl),
                    })
                })?;
            let byte_length = f_u32(header, 0, self.endian);
            if to_usize(byte_length) < COUNTER_DEFINITION_LEN {
                return Err(err(ErrorKind::FieldTooSmall {
                    field: "ByteLength",
                    value: byte_length.into(),
                    minimum: Bound::Fixed {
                        size: COUNTER_DEFINITION_LEN as u64,
                        part: "definition",
                    },
                }));
            }
            let next = self
                .pos
                .checked_add(to_usize(byte_length))
                .filter(|&n| n <= dl)
                .ok_or_else(|| {
                    err(ErrorKind::FieldExceeds {
                        field: "ByteLength",
                        value: byte_length.into(),
                        limit: definition_length(dl),
                    })
                })?;
            self.pos = next;
            Ok(CounterDefinition {
                header,
                offset: abs,
                endian: self.endian,
                value_offset: f_u32(header, 36, self.endian),
                value_size: f_u32(header, 32, self.endian),
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
pub struct CounterDefinition<'a> {
    header: &'a [u8; COUNTER_DEFINITION_LEN],
    offset: usize,
    endian: Endian,
    value_offset: u32,
    value_size: u32,
}

impl CounterDefinition<'_> {
    /// Absolute offset of this definition in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.offset
    }

    /// `ByteLength` (≥ 40, checked).
    pub fn byte_length(&self) -> u32 {
        f_u32(self.header, 0, self.endian)
    }

    /// `CounterNameTitleIndex`. A base counter may reuse its numerator's index.
    pub fn name_index(&self) -> u32 {
        f_u32(self.header, 4, self.endian)
    }

    /// `CounterNameTitle` (0 in data).
    pub fn name_title(&self) -> u32 {
        f_u32(self.header, 8, self.endian)
    }

    /// `CounterHelpTitleIndex`.
    pub fn help_index(&self) -> u32 {
        f_u32(self.header, 12, self.endian)
    }

    /// `CounterHelpTitle` (0 in data).
    pub fn help_title(&self) -> u32 {
        f_u32(self.header, 16, self.endian)
    }

    /// `DefaultScale`: a power of ten.
    pub fn default_scale(&self) -> i32 {
        f_i32(self.header, 20, self.endian)
    }

    /// `DetailLevel`.
    pub fn detail_level(&self) -> u32 {
        f_u32(self.header, 24, self.endian)
    }

    /// `CounterType`.
    pub fn counter_type(&self) -> CounterType {
        CounterType(f_u32(self.header, 28, self.endian))
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

/// Iterator over an object's instances; see [`ObjectType::instances`].
#[derive(Clone, Debug)]
pub struct Instances<'a> {
    object: ObjectType<'a>,
    pos: usize,
    remaining: u32,
    done: bool,
}

impl<'a> Iterator for Instances<'a> {
    type Item = Result<InstanceDefinition<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let result = InstanceDefinition::parse(&self.object, self.pos);
        match &result {
            Ok(inst) => {
                // Both lengths were checked to lie inside the object.
                self.pos = inst.block_pos.saturating_add(inst.block.as_bytes().len());
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
        let left = self.object.data.len().saturating_sub(self.pos)
            / (INSTANCE_DEFINITION_LEN + COUNTER_BLOCK_LEN);
        (0, Some(left.min(to_usize(self.remaining))))
    }
}

impl std::iter::FusedIterator for Instances<'_> {}

/// A validated view of a `PERF_INSTANCE_DEFINITION` with its counter block.
#[derive(Clone, Copy, Debug)]
pub struct InstanceDefinition<'a> {
    header: &'a [u8; INSTANCE_DEFINITION_LEN],
    /// The instance's `ByteLength` bytes.
    data: &'a [u8],
    offset: usize,
    endian: Endian,
    code_page: u32,
    block_pos: usize,
    block: CounterBlock<'a>,
}

impl<'a> InstanceDefinition<'a> {
    fn parse(object: &ObjectType<'a>, pos: usize) -> Result<Self, DecodeError> {
        let abs = object.offset.saturating_add(pos);
        let err = |kind| DecodeError::new(INSTANCE_DEFINITION, abs, kind);
        const HEADER: Bound = Bound::Fixed {
            size: INSTANCE_DEFINITION_LEN as u64,
            part: "header",
        };
        let endian = object.endian;
        let total = object.data.len();
        let header: &[u8; INSTANCE_DEFINITION_LEN] =
            array_at(object.data, pos).ok_or_else(|| {
                err(ErrorKind::PartExceeds {
                    size: INSTANCE_DEFINITION_LEN as u64,
                    part: "header",
                    limit: total_byte_length(Some("object"), total),
                })
            })?;
        let byte_length = f_u32(header, 0, endian);
        if to_usize(byte_length) < INSTANCE_DEFINITION_LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "ByteLength",
                value: byte_length.into(),
                minimum: HEADER,
            }));
        }
        let data = bytes_at(object.data, pos, to_usize(byte_length)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "ByteLength",
                value: byte_length.into(),
                limit: left_in_object(total, pos),
            })
        })?;
        let name_offset = f_u32(header, 16, endian);
        let name_length = f_u32(header, 20, endian);
        if name_length > 0 {
            if to_usize(name_offset) < INSTANCE_DEFINITION_LEN {
                return Err(err(ErrorKind::OffsetInHeader {
                    field: "NameOffset",
                    offset: name_offset.into(),
                    header: HEADER,
                }));
            }
            if bytes_at(data, to_usize(name_offset), to_usize(name_length)).is_none() {
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
        let block_pos = pos.saturating_add(data.len());
        let block = CounterBlock::parse(object, block_pos)?;
        Ok(InstanceDefinition {
            header,
            data,
            offset: abs,
            endian,
            code_page: object.code_page(),
            block_pos,
            block,
        })
    }

    /// Absolute offset of this instance in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.offset
    }

    /// `ByteLength`: the structure, the name and its padding.
    pub fn byte_length(&self) -> u32 {
        f_u32(self.header, 0, self.endian)
    }

    /// `ParentObjectTitleIndex`; 0 when the instance has no parent.
    pub fn parent_object_title_index(&self) -> u32 {
        f_u32(self.header, 4, self.endian)
    }

    /// `ParentObjectInstance`: 0-based position in the parent object's instance list.
    pub fn parent_object_instance(&self) -> u32 {
        f_u32(self.header, 8, self.endian)
    }

    /// `UniqueID`; [`PERF_NO_UNIQUE_ID`] when instances are identified by name.
    pub fn unique_id(&self) -> i32 {
        f_i32(self.header, 12, self.endian)
    }

    /// `NameOffset`, from the start of this structure.
    pub fn name_offset(&self) -> u32 {
        f_u32(self.header, 16, self.endian)
    }

    /// `NameLength`: bytes including the NUL, excluding padding; 0 for an unnamed instance.
    pub fn name_length(&self) -> u32 {
        f_u32(self.header, 20, self.endian)
    }

    /// The `NameLength` bytes of the name, NUL included (checked to lie inside `ByteLength`).
    pub fn name_bytes(&self) -> &'a [u8] {
        if self.name_length() == 0 {
            return &[];
        }
        bytes_at(
            self.data,
            to_usize(self.name_offset()),
            to_usize(self.name_length()),
        )
        .unwrap_or(&[])
    }

    /// The name as the data gives it: UTF-16 in the block's byte order when the object's `CodePage` is
    /// 0, otherwise bytes in that Windows code page; up to the first NUL. Malformed sequences become
    /// U+FFFD. A code page that has no decoder is an error.
    pub fn name(&self) -> Result<String, DecodeError> {
        let bytes = self.name_bytes();
        if self.code_page == 0 {
            return Ok(utf16_until_nul(bytes, self.endian));
        }
        let encoding = u16::try_from(self.code_page)
            .ok()
            .and_then(codepage::to_encoding_no_replacement)
            .ok_or_else(|| {
                DecodeError::new(
                    INSTANCE_DEFINITION,
                    self.offset,
                    ErrorKind::Unsupported {
                        field: "CodePage",
                        value: self.code_page.into(),
                        owner: Some("object"),
                    },
                )
            })?;
        let decoded: Cow<'_, str> = encoding.decode_without_bom_handling(bytes).0;
        let text = decoded.split('\0').next().unwrap_or("");
        Ok(text.to_owned())
    }

    /// The instance's counter block.
    pub fn counter_block(&self) -> CounterBlock<'a> {
        self.block
    }
}

/// A validated view of a `PERF_COUNTER_BLOCK`: `ByteLength` bytes starting with that field.
#[derive(Clone, Copy, Debug)]
pub struct CounterBlock<'a> {
    data: &'a [u8],
    offset: usize,
    endian: Endian,
}

impl<'a> CounterBlock<'a> {
    fn parse(object: &ObjectType<'a>, pos: usize) -> Result<Self, DecodeError> {
        let abs = object.offset.saturating_add(pos);
        let err = |kind| DecodeError::new(COUNTER_BLOCK, abs, kind);
        let total = object.data.len();
        let len = array_at::<4>(object.data, pos)
            .map(|b| object.endian.u32(*b))
            .ok_or_else(|| {
                err(ErrorKind::PartExceeds {
                    size: COUNTER_BLOCK_LEN as u64,
                    part: "ByteLength",
                    limit: total_byte_length(Some("object"), total),
                })
            })?;
        if to_usize(len) < COUNTER_BLOCK_LEN {
            return Err(err(ErrorKind::FieldTooSmall {
                field: "ByteLength",
                value: len.into(),
                minimum: Bound::OwnField {
                    size: COUNTER_BLOCK_LEN as u64,
                },
            }));
        }
        let data = bytes_at(object.data, pos, to_usize(len)).ok_or_else(|| {
            err(ErrorKind::FieldExceeds {
                field: "ByteLength",
                value: len.into(),
                limit: left_in_object(total, pos),
            })
        })?;
        Ok(CounterBlock {
            data,
            offset: abs,
            endian: object.endian,
        })
    }

    /// Absolute offset of this block in the buffer.
    pub fn buffer_offset(&self) -> usize {
        self.offset
    }

    /// `ByteLength`: the 4-byte field plus the counter data.
    pub fn byte_length(&self) -> u32 {
        u32::try_from(self.data.len()).unwrap_or(u32::MAX)
    }

    /// The block's bytes (`ByteLength` of them, the length field included).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// The value of `def`: `CounterSize` bytes at `CounterOffset`. Sizes 4 and 8 are read as integers in
    /// the block's byte order; any other size is returned as bytes.
    #[inline]
    pub fn value(&self, def: &CounterDefinition<'_>) -> Result<RawValue<'a>, DecodeError> {
        self.value_at(def.value_offset, def.value_size)
    }

    /// The `size` bytes at `offset` of the block, like [`CounterBlock::value`].
    #[inline]
    pub fn value_at(&self, offset: u32, size: u32) -> Result<RawValue<'a>, DecodeError> {
        let bytes = bytes_at(self.data, to_usize(offset), to_usize(size)).ok_or_else(|| {
            DecodeError::new(
                COUNTER_BLOCK,
                self.offset,
                ErrorKind::CounterOutOfBlock {
                    offset: offset.into(),
                    size: size.into(),
                    limit: Bound::Field {
                        owner: Some("counter block"),
                        field: "ByteLength",
                        value: self.data.len() as u64,
                    },
                },
            )
        })?;
        Ok(match bytes {
            [a, b, c, d] => RawValue::U32(self.endian.u32([*a, *b, *c, *d])),
            [a, b, c, d, e, f, g, h] => {
                RawValue::U64(self.endian.u64([*a, *b, *c, *d, *e, *f, *g, *h]))
            }
            other => RawValue::Bytes(other),
        })
    }

    /// The owned values of every definition, in definition order.
    pub fn values(&self, defs: &[CounterDefinition<'_>]) -> Result<Vec<Value>, DecodeError> {
        defs.iter()
            .map(|d| self.value(d).map(RawValue::to_value))
            .collect()
    }
}

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
            RawValue::Bytes(b) => Value::Bytes(b.to_vec()),
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
        for object in self.objects() {
            objects.push(object?.to_object()?);
        }
        let mut snap = snapshot::Snapshot {
            system_name: self.system_name()?,
            system_time: self.system_time(),
            perf_time: self.perf_time(),
            perf_freq: self.perf_freq(),
            perf_time_100ns: self.perf_time_100ns(),
            objects,
        };
        super::naming::resolve_instance_names(&mut snap);
        Ok(snap)
    }
}
