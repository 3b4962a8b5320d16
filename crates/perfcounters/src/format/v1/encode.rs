//! Writing a [`Snapshot`] as a V1 block, laid out like Windows (x64) writes it.

use super::decode::structure::{COUNTER_BLOCK, DATA_BLOCK, INSTANCE_DEFINITION, OBJECT_TYPE};
use super::decode::{
    COUNTER_DEFINITION_LEN, DATA_BLOCK_LEN, INSTANCE_DEFINITION_LEN, OBJECT_TYPE_LEN,
    PERF_METADATA_MULTIPLE_INSTANCES, PERF_METADATA_NO_INSTANCES, PERF_NO_INSTANCES,
};
use super::read::Endian;
use crate::format::EncodeError;
use crate::snapshot::{CounterDefinition, Object, ObjectData, Snapshot, Value};

/// Options of [`encode_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Byte order of every integer and UTF-16 code unit; [`Endian::Big`] writes `LittleEndian` = 0.
    pub endian: Endian,
    /// `DefaultObject` of the header (reserved; Windows writes the title index of a default object,
    /// e.g. 238 for Processor). `None` writes the first object's title index, or −1 without objects.
    pub default_object: Option<i32>,
}

/// Encodes `snapshot` as a little-endian V1 block; see [`encode_with`].
pub fn encode(snapshot: &Snapshot) -> Result<Vec<u8>, EncodeError> {
    encode_with(snapshot, EncodeOptions::default())
}

/// Encodes `snapshot` as a V1 block:
///
/// * `PERF_DATA_BLOCK` (88 bytes, `Version` = `Revision` = 1, `DefaultObject` = the first object's
///   index or −1 unless [`EncodeOptions::default_object`] says otherwise), then the UTF-16 system name with its NUL, padded to 8 bytes; `HeaderLength` is the
///   offset after the padding;
/// * per object a 64-byte `PERF_OBJECT_TYPE`, 40-byte definitions (`ByteLength` 40), then either one
///   counter block (single instance), instance records each followed by a counter block, or nothing
///   (no instances, metadata only);
/// * instance records: 24 bytes, the raw name (UTF-16, or the object's code page) with its NUL,
///   padded to a multiple of 8; `NameLength` counts the NUL but not the padding; an empty raw name is
///   written as unnamed (`NameLength` 0);
/// * counter blocks: the definitions' `offset`s are kept when they are consistent (each value at
///   offset ≥ 4, ranges that do not overlap unless two definitions share exactly the same range and
///   hold equal values); otherwise the values are laid out with [`layout_counter_block`]. The block
///   length is rounded up to a multiple of 8.
///
/// Every value must have its definition's `size` (4 for [`Value::U32`], 8 for [`Value::U64`], the
/// length for [`Value::Bytes`]) and every value list one value per definition. Names may not contain
/// NUL.
pub fn encode_with(snapshot: &Snapshot, options: EncodeOptions) -> Result<Vec<u8>, EncodeError> {
    let e = options.endian;
    let mut out = vec![0u8; DATA_BLOCK_LEN];
    let name = utf16z(&snapshot.system_name, e, DATA_BLOCK)?;
    let name_len = len32(name.len(), DATA_BLOCK)?;
    out.extend_from_slice(&name);
    pad8(&mut out);
    let header_length = len32(out.len(), DATA_BLOCK)?;
    for (i, object) in snapshot.objects.iter().enumerate() {
        encode_object(&mut out, object, e).map_err(|err| err.at("object", i))?;
    }
    let total = len32(out.len(), DATA_BLOCK)?;
    let mut w = Writer {
        buf: &mut out,
        base: 0,
        e,
    };
    w.put_u16s(0, &[b'P' as u16, b'E' as u16, b'R' as u16, b'F' as u16]);
    w.put_u32(8, u32::from(e == Endian::Little));
    w.put_u32(12, 1);
    w.put_u32(16, 1);
    w.put_u32(20, total);
    w.put_u32(24, header_length);
    w.put_u32(28, len32(snapshot.objects.len(), DATA_BLOCK)?);
    let default_object = options
        .default_object
        .unwrap_or_else(|| snapshot.objects.first().map_or(-1, |o| o.index as i32));
    w.put_i32(32, default_object);
    let t = &snapshot.system_time;
    w.put_u16s(
        36,
        &[
            t.year,
            t.month,
            t.day_of_week,
            t.day,
            t.hour,
            t.minute,
            t.second,
            t.milliseconds,
        ],
    );
    w.put_u64(56, snapshot.perf_time as u64);
    w.put_u64(64, snapshot.perf_freq as u64);
    w.put_u64(72, snapshot.perf_time_100ns as u64);
    w.put_u32(80, name_len);
    w.put_u32(84, DATA_BLOCK_LEN as u32);
    Ok(out)
}

/// Lays out values of the given sizes in a counter block the way Windows does: in definition order,
/// starting right after the 4-byte `ByteLength`, each value aligned to 8 if its size is a non-zero
/// multiple of 8, to 4 if a multiple of 4, to 2 if even. Returns the offsets and the block's
/// `ByteLength` (rounded up to a multiple of 8), or `None` if it would not fit in 32 bits.
///
/// ```
/// use perfcounters::format::v1::layout_counter_block;
/// // Processor-like: three LARGE timers, a DWORD, two LARGE, two DWORDs.
/// let (offsets, len) = layout_counter_block([8, 8, 8, 4, 8, 8, 4, 4]).unwrap();
/// assert_eq!(offsets, [8, 16, 24, 32, 40, 48, 56, 60]);
/// assert_eq!(len, 64);
/// ```
pub fn layout_counter_block(sizes: impl IntoIterator<Item = u32>) -> Option<(Vec<u32>, u32)> {
    let mut cursor: u32 = 4;
    let mut offsets = Vec::new();
    for size in sizes {
        let align = if size != 0 && size % 8 == 0 {
            8
        } else if size % 4 == 0 {
            4
        } else if size % 2 == 0 {
            2
        } else {
            1
        };
        cursor = cursor.checked_next_multiple_of(align)?;
        offsets.push(cursor);
        cursor = cursor.checked_add(size)?;
    }
    Some((offsets, cursor.checked_next_multiple_of(8)?))
}

struct Writer<'b> {
    buf: &'b mut Vec<u8>,
    base: usize,
    e: Endian,
}

impl Writer<'_> {
    fn put(&mut self, at: usize, bytes: &[u8]) {
        let start = self.base.saturating_add(at);
        if let Some(dst) = self.buf.get_mut(start..start.saturating_add(bytes.len())) {
            dst.copy_from_slice(bytes);
        }
    }
    fn put_u16s(&mut self, at: usize, v: &[u16]) {
        for (i, x) in v.iter().enumerate() {
            self.put(at + 2 * i, &self.e.u16_bytes(*x));
        }
    }
    fn put_u32(&mut self, at: usize, v: u32) {
        self.put(at, &self.e.u32_bytes(v));
    }
    fn put_i32(&mut self, at: usize, v: i32) {
        self.put_u32(at, v as u32);
    }
    fn put_u64(&mut self, at: usize, v: u64) {
        self.put(at, &self.e.u64_bytes(v));
    }
}

fn len32(len: usize, structure: &'static str) -> Result<u32, EncodeError> {
    u32::try_from(len).map_err(|_| EncodeError::TooLarge { structure })
}

fn pad8(out: &mut Vec<u8>) {
    let padded = out.len().next_multiple_of(8);
    out.resize(padded, 0);
}

/// UTF-16 with a NUL.
fn utf16z(s: &str, e: Endian, structure: &'static str) -> Result<Vec<u8>, EncodeError> {
    if s.contains('\0') {
        return Err(EncodeError::InteriorNul { structure });
    }
    let mut v = Vec::with_capacity(s.len().saturating_mul(2).saturating_add(2));
    for u in s.encode_utf16().chain([0]) {
        v.extend_from_slice(&e.u16_bytes(u));
    }
    Ok(v)
}

/// The instance name bytes with a NUL, in UTF-16 or the code page; empty for an unnamed instance.
fn name_bytes(s: &str, code_page: u32, e: Endian) -> Result<Vec<u8>, EncodeError> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    if code_page == 0 {
        return utf16z(s, e, INSTANCE_DEFINITION);
    }
    if s.contains('\0') {
        return Err(EncodeError::InteriorNul {
            structure: INSTANCE_DEFINITION,
        });
    }
    let encoding = u16::try_from(code_page)
        .ok()
        .and_then(codepage::to_encoding_no_replacement)
        .filter(|enc| enc.output_encoding() == *enc)
        .ok_or(EncodeError::CodePage { code_page })?;
    let (bytes, _, unmappable) = encoding.encode(s);
    if unmappable {
        return Err(EncodeError::Unrepresentable {
            structure: INSTANCE_DEFINITION,
            code_page,
        });
    }
    let mut v = bytes.into_owned();
    v.push(0);
    Ok(v)
}

fn value_size(v: &Value) -> usize {
    match v {
        Value::U32(_) => 4,
        Value::U64(_) => 8,
        Value::Bytes(b) => b.len(),
    }
}

/// The value lists of an object (one for a single-instance object, one per instance).
fn value_lists(object: &Object) -> Vec<&[Value]> {
    match &object.data {
        ObjectData::Single(v) => vec![v.as_slice()],
        ObjectData::Instances(list) => list.iter().map(|i| i.values.as_slice()).collect(),
        ObjectData::MetadataOnly { .. } => Vec::new(),
    }
}

/// Whether the definitions' own offsets can be used for `lists`.
fn offsets_consistent(defs: &[CounterDefinition], lists: &[&[Value]]) -> bool {
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.sort_by_key(|&i| defs.get(i).map(|d| (d.offset, d.size)));
    let mut max_end: u64 = 4;
    let mut prev: Option<usize> = None;
    for &i in &order {
        let Some(d) = defs.get(i) else { return false };
        let end = u64::from(d.offset) + u64::from(d.size);
        if d.offset < 4 || end > u64::from(u32::MAX) {
            return false;
        }
        let same_as_prev = prev
            .and_then(|p| defs.get(p))
            .is_some_and(|p| (p.offset, p.size) == (d.offset, d.size));
        if same_as_prev {
            let p = prev.unwrap_or(i);
            if !lists.iter().all(|l| l.get(p) == l.get(i)) {
                return false;
            }
        } else if u64::from(d.offset) < max_end {
            return false;
        }
        max_end = max_end.max(end);
        prev = Some(i);
    }
    true
}

fn encode_object(out: &mut Vec<u8>, object: &Object, e: Endian) -> Result<(), EncodeError> {
    let defs = &object.counters;
    let lists = value_lists(object);
    for (n, list) in lists.iter().enumerate() {
        if list.len() != defs.len() {
            let err = EncodeError::ValueCount {
                structure: COUNTER_BLOCK,
                expected: defs.len(),
                found: list.len(),
            };
            return Err(err.at("value list", n));
        }
        for (c, (v, d)) in list.iter().zip(defs).enumerate() {
            if value_size(v) != usize::try_from(d.size).unwrap_or(usize::MAX) {
                return Err(EncodeError::ValueSize {
                    list: n,
                    counter: c,
                    found: value_size(v) as u64,
                    expected: d.size.into(),
                });
            }
        }
    }
    let too_large = |structure| EncodeError::TooLarge { structure };
    let (offsets, block_len) = if offsets_consistent(defs, &lists) {
        let end = defs
            .iter()
            .map(|d| d.offset.saturating_add(d.size))
            .max()
            .unwrap_or(4)
            .max(4);
        let len = end
            .checked_next_multiple_of(8)
            .ok_or(too_large(COUNTER_BLOCK))?;
        (defs.iter().map(|d| d.offset).collect(), len)
    } else {
        layout_counter_block(defs.iter().map(|d| d.size)).ok_or(too_large(COUNTER_BLOCK))?
    };

    let start = out.len();
    out.resize(start + OBJECT_TYPE_LEN, 0);
    for (d, &offset) in defs.iter().zip(&offsets) {
        let at = out.len();
        out.resize(at + COUNTER_DEFINITION_LEN, 0);
        let mut w = Writer {
            buf: out,
            base: at,
            e,
        };
        w.put_u32(0, COUNTER_DEFINITION_LEN as u32);
        w.put_u32(4, d.index);
        w.put_u32(12, d.help_index);
        w.put_i32(20, d.scale);
        w.put_u32(24, d.detail_level);
        w.put_u32(28, d.counter_type.value());
        w.put_u32(32, d.size);
        w.put_u32(36, offset);
    }
    let definition_length = len32(out.len() - start, OBJECT_TYPE)?;
    let num_counters = len32(defs.len(), OBJECT_TYPE)?;
    let write_block = |out: &mut Vec<u8>, values: &[Value]| {
        let at = out.len();
        out.resize(at + block_len as usize, 0);
        let mut w = Writer {
            buf: out,
            base: at,
            e,
        };
        w.put_u32(0, block_len);
        for (v, &offset) in values.iter().zip(&offsets) {
            let o = offset as usize;
            match v {
                Value::U32(x) => w.put_u32(o, *x),
                Value::U64(x) => w.put_u64(o, *x),
                Value::Bytes(b) => w.put(o, b),
            }
        }
    };
    let num_instances = match &object.data {
        ObjectData::Single(values) => {
            write_block(out, values);
            PERF_NO_INSTANCES
        }
        ObjectData::MetadataOnly { multiple_instances } => {
            if *multiple_instances {
                PERF_METADATA_MULTIPLE_INSTANCES
            } else {
                PERF_METADATA_NO_INSTANCES
            }
        }
        ObjectData::Instances(instances) => {
            for (n, inst) in instances.iter().enumerate() {
                let name = name_bytes(&inst.raw_name, object.code_page, e)
                    .map_err(|err| err.at("instance", n))?;
                let at = out.len();
                out.resize(at + INSTANCE_DEFINITION_LEN, 0);
                out.extend_from_slice(&name);
                pad8(out);
                let byte_length = len32(out.len() - at, INSTANCE_DEFINITION)
                    .map_err(|err| err.at("instance", n))?;
                let mut w = Writer {
                    buf: out,
                    base: at,
                    e,
                };
                w.put_u32(0, byte_length);
                w.put_u32(4, inst.parent_object);
                w.put_u32(8, inst.parent_instance);
                w.put_i32(12, inst.unique_id);
                w.put_u32(16, INSTANCE_DEFINITION_LEN as u32);
                w.put_u32(20, name.len() as u32);
                write_block(out, &inst.values);
            }
            i32::try_from(instances.len()).map_err(|_| too_large(OBJECT_TYPE))?
        }
    };
    let total = len32(out.len() - start, OBJECT_TYPE)?;
    let mut w = Writer {
        buf: out,
        base: start,
        e,
    };
    w.put_u32(0, total);
    w.put_u32(4, definition_length);
    w.put_u32(8, OBJECT_TYPE_LEN as u32);
    w.put_u32(12, object.index);
    w.put_u32(20, object.help_index);
    w.put_u32(28, object.detail_level);
    w.put_u32(32, num_counters);
    w.put_i32(36, object.default_counter);
    w.put_i32(40, num_instances);
    w.put_u32(44, object.code_page);
    w.put_u64(48, object.perf_time as u64);
    w.put_u64(56, object.perf_freq as u64);
    Ok(())
}
