//! The counter list (record kind 0x20): one entry per counter path the log was started with.
//!
//! ```text
//! prefix   u32 0x000006FF, u16 8, u16 2 (the same in every log seen; meaning unknown)
//! entries  one per counter path, back to back:
//!   +0x00 u32 Size            the entry's length, strings included
//!   +0x04 u32 Flags           0 single counter, 0x1 wildcard instances, 0x10 whole object (observed)
//!   +0x08 u32 UserData        0, or the entry's position (Server 2003)
//!   +0x0C u32 CounterType
//!   +0x10 i64 TimeBase        the counter's time base (PerfFreq, or 10^7 for 100 ns counters)
//!   +0x18 i32 DefaultScale
//!   +0x1C i32 MachineOffset   string offsets, counted from +0x34; −1 = absent
//!   +0x20 i32 ObjectOffset
//!   +0x24 i32 InstanceOffset
//!   +0x28 i32 ParentOffset
//!   +0x2C i32 InstanceIndex
//!   +0x30 i32 CounterOffset
//!   +0x34     NUL-terminated UTF-16 strings, padding to Size
//! ```

use super::layout::{counter_entry as ce, counter_list as cl};
use super::read::{shift, utf16_lossy, utf16_terminated};
use crate::counter_type::{CounterInfo, CounterType};
use crate::format::read::{check_size, fixed, Reader};
use crate::format::structure;
use crate::format::{Bound, DecodeError, ErrorKind};
use crate::path::CounterPath;

const S: &str = structure::PDH_COUNTER_ENTRY;

/// The names of the fields from [`ce::MACHINE_OFFSET`] to [`ce::COUNTER_OFFSET`], 4 bytes apart.
const FIELD_NAMES: [&str; 6] = [
    "MachineOffset",
    "ObjectOffset",
    "InstanceOffset",
    "ParentOffset",
    "InstanceIndex",
    "CounterOffset",
];

/// The decoded counter list, borrowing the record.
#[derive(Clone, Debug)]
pub struct CounterList<'a> {
    prefix: [u8; cl::PREFIX_LEN],
    entries: Vec<CounterEntry<'a>>,
}

impl<'a> CounterList<'a> {
    /// Parses and checks a counter-list record. Offsets in errors are relative to `data`.
    pub fn parse(data: &'a [u8]) -> Result<CounterList<'a>, DecodeError> {
        let b = Reader::new(data);
        let prefix = b
            .bytes(structure::PDH_COUNTER_LIST, 0, cl::PREFIX_LEN)
            .map(|b| fixed::<{ cl::PREFIX_LEN }>(b, 0))?;
        let mut entries = Vec::new();
        let mut at = cl::PREFIX_LEN;
        while at < data.len() {
            let rest = &data[at..];
            // Padding after the last entry: fewer bytes than an entry header, all zero.
            if rest.len() < ce::LEN && rest.iter().all(|&x| x == 0) {
                break;
            }
            let size = b.u32(S, at)?;
            check_size(
                S,
                at,
                u64::from(size),
                ce::LEN as u64,
                false,
                rest.len() as u64,
            )?;
            entries.push(CounterEntry::parse(&rest[..size as usize], at)?);
            at += size as usize;
        }
        Ok(CounterList { prefix, entries })
    }

    /// The 8-byte prefix (`FF 06 00 00 08 00 02 00` in every log seen).
    pub fn prefix(&self) -> [u8; cl::PREFIX_LEN] {
        self.prefix
    }

    /// Whether the prefix starts with [`cl::SIGNATURE`].
    pub fn has_known_prefix(&self) -> bool {
        self.prefix[..4] == cl::SIGNATURE.to_le_bytes()
    }

    /// The entries in log order; the sub-records of every sample follow the same order.
    pub fn entries(&self) -> &[CounterEntry<'a>] {
        &self.entries
    }
}

/// One entry of the counter list: a counter path with its type, time base and scale.
#[derive(Clone, Copy, Debug)]
pub struct CounterEntry<'a> {
    bytes: &'a [u8],
    /// Offset of the entry in the record data.
    pub record_offset: usize,
    machine: &'a [u8],
    object: &'a [u8],
    instance: Option<&'a [u8]>,
    parent: Option<&'a [u8]>,
    counter: &'a [u8],
}

impl<'a> CounterEntry<'a> {
    fn parse(bytes: &'a [u8], record_offset: usize) -> Result<CounterEntry<'a>, DecodeError> {
        let b = Reader::new(bytes);
        let relocate = |e: DecodeError| shift(e, record_offset);
        let strings = &bytes[ce::LEN..];
        let string = |field: usize, optional: bool| -> Result<Option<&'a [u8]>, DecodeError> {
            let off = b.i32(S, field).map_err(relocate)?;
            if off == -1 && optional {
                return Ok(None);
            }
            let name = FIELD_NAMES[(field - ce::MACHINE_OFFSET) / 4];
            let Ok(start) = usize::try_from(off) else {
                return Err(DecodeError::new(
                    S,
                    record_offset + field,
                    ErrorKind::InvalidValue {
                        field: name,
                        value: i64::from(off),
                        rule: "negative (only the instance and parent offsets may be -1, absent)",
                    },
                ));
            };
            if start >= strings.len() {
                return Err(DecodeError::new(
                    S,
                    record_offset + field,
                    ErrorKind::FieldExceeds {
                        field: name,
                        value: start as u64,
                        limit: Bound::Left {
                            length: strings.len() as u64,
                            parent: "entry's string area",
                        },
                    },
                ));
            }
            utf16_terminated(&strings[start..])
                .map(Some)
                .ok_or_else(|| {
                    DecodeError::new(
                        S,
                        record_offset + ce::LEN + start,
                        ErrorKind::UnterminatedString,
                    )
                })
        };
        let entry = CounterEntry {
            bytes,
            record_offset,
            machine: string(ce::MACHINE_OFFSET, false)?.unwrap_or_default(),
            object: string(ce::OBJECT_OFFSET, false)?.unwrap_or_default(),
            instance: string(ce::INSTANCE_OFFSET, true)?,
            parent: string(ce::PARENT_OFFSET, true)?,
            counter: string(ce::COUNTER_OFFSET, false)?.unwrap_or_default(),
        };
        Ok(entry)
    }

    fn u32_at(&self, at: usize) -> u32 {
        super::read::le_u32(self.bytes, at)
    }

    /// `Size`: the entry's length.
    pub fn size(&self) -> u32 {
        self.u32_at(ce::SIZE)
    }

    /// `Flags`: 0 for a single counter, 0x1 for a wildcard-instance counter, 0x10 for a whole-object
    /// entry, in the logs seen. The reader does not rely on them: each sample sub-record says what it
    /// holds.
    pub fn flags(&self) -> u32 {
        self.u32_at(ce::FLAGS)
    }

    /// The third field: 0, or the entry's position in the Server 2003 log (like a `dwUserData`).
    pub fn user_data(&self) -> u32 {
        self.u32_at(ce::USER_DATA)
    }

    /// The counter type (0x10 on whole-object entries, whose counters carry their own types).
    pub fn counter_type(&self) -> CounterType {
        CounterType(self.u32_at(ce::COUNTER_TYPE))
    }

    /// The time base F the counter's values are computed with.
    pub fn time_base(&self) -> i64 {
        super::read::le_i64(self.bytes, ce::TIME_BASE)
    }

    /// `DefaultScale`.
    pub fn default_scale(&self) -> i32 {
        self.u32_at(ce::DEFAULT_SCALE) as i32
    }

    /// The `#n` index of the instance (0 = the first, written without a suffix).
    pub fn instance_index(&self) -> i32 {
        self.u32_at(ce::INSTANCE_INDEX) as i32
    }

    /// Offsets of the machine, object, instance, parent and counter strings (−1 = absent).
    pub fn string_offsets(&self) -> [i32; 5] {
        ce::STRING_OFFSETS.map(|o| self.u32_at(o) as i32)
    }

    /// The machine, as written (`\\NAME`).
    pub fn machine(&self) -> String {
        utf16_lossy(self.machine)
    }

    /// The object name.
    pub fn object(&self) -> String {
        utf16_lossy(self.object)
    }

    /// The instance name (`*` for a wildcard), when the entry has one.
    pub fn instance(&self) -> Option<String> {
        self.instance.map(utf16_lossy)
    }

    /// The parent instance, when the entry has one.
    pub fn parent(&self) -> Option<String> {
        self.parent.map(utf16_lossy)
    }

    /// The counter name (`*` for a whole-object entry).
    pub fn counter(&self) -> String {
        utf16_lossy(self.counter)
    }

    /// The owned form of the entry.
    pub fn to_spec(&self) -> BlgCounterSpec {
        BlgCounterSpec {
            flags: self.flags(),
            user_data: self.user_data(),
            counter_type: self.counter_type(),
            time_base: self.time_base(),
            default_scale: self.default_scale(),
            machine: self.machine(),
            object: self.object(),
            instance: self.instance(),
            parent: self.parent(),
            instance_index: self.instance_index(),
            counter: self.counter(),
        }
    }
}

/// A counter-list entry in owned form, as written: what the encoder writes and what `decode` prints.
/// Its columns ([`Column`](super::Column)) carry the parsed path ([`BlgCounterSpec::path`]) and the
/// counter info ([`BlgCounterSpec::info`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct BlgCounterSpec {
    /// `Flags` (see [`CounterEntry::flags`]).
    pub flags: u32,
    /// The third field (see [`CounterEntry::user_data`]).
    pub user_data: u32,
    /// The counter type.
    pub counter_type: CounterType,
    /// The time base F.
    pub time_base: i64,
    /// `DefaultScale`.
    pub default_scale: i32,
    /// The machine as written, with its leading `\\`.
    pub machine: String,
    /// The object.
    pub object: String,
    /// The instance, `*` for a wildcard.
    pub instance: Option<String>,
    /// The parent instance.
    pub parent: Option<String>,
    /// The `#n` index of the instance.
    pub instance_index: i32,
    /// The counter, `*` for a whole-object entry.
    pub counter: String,
}

impl BlgCounterSpec {
    /// The entry as a counter path (`\\MACHINE\Object(parent/instance#n)\Counter`).
    pub fn path(&self) -> CounterPath {
        let machine = self.machine.strip_prefix("\\\\").unwrap_or(&self.machine);
        CounterPath {
            machine: (!machine.is_empty()).then(|| machine.to_string()),
            object: self.object.clone(),
            parent: self.instance.as_ref().and(self.parent.clone()),
            instance: self.instance.clone(),
            index: u32::try_from(self.instance_index).ok().filter(|&i| i > 0),
            counter: self.counter.clone(),
        }
    }

    /// The counter info of the entry's values: type, time base and scale.
    pub fn info(&self) -> CounterInfo {
        CounterInfo {
            counter_type: self.counter_type,
            default_scale: self.default_scale,
            time_base: self.time_base,
        }
    }

    /// Whether the instance is the wildcard `*`.
    pub fn has_wildcard_instance(&self) -> bool {
        self.instance.as_deref() == Some("*")
    }

    /// Whether the entry names a whole object (counter `*`).
    pub fn is_whole_object(&self) -> bool {
        self.counter == "*"
    }
}
