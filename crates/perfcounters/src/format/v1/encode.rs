//! Writing a [`Snapshot`] as a V1 block, laid out like Windows (x64) writes it.

use super::decode::{
    PERF_METADATA_MULTIPLE_INSTANCES, PERF_METADATA_NO_INSTANCES, PERF_NO_INSTANCES,
};
use super::layout::{
    counter_block as CB, counter_definition as CD, data_block as DB, instance_definition as ID,
    object_type as OT,
};
use crate::format::structure::{
    PERF_COUNTER_BLOCK as COUNTER_BLOCK, PERF_DATA_BLOCK as DATA_BLOCK,
    PERF_INSTANCE_DEFINITION as INSTANCE_DEFINITION, PERF_OBJECT_TYPE as OBJECT_TYPE,
};
use crate::format::write::{to_u32, Writer};
use crate::format::{EncodeError, Endian};
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
///   length is rounded up to a multiple of 8. An object without counter blocks (no instances,
///   metadata only) keeps its definitions' offsets as they are.
///
/// Every value must have its definition's `size` (4 for [`Value::U32`], 8 for [`Value::U64`], the
/// length for [`Value::Bytes`]) and every value list one value per definition. Names may not contain
/// NUL.
pub fn encode_with(snapshot: &Snapshot, options: EncodeOptions) -> Result<Vec<u8>, EncodeError> {
    let e = options.endian;
    let mut w = Writer::new(e);
    w.zeros(DB::LEN);
    w.utf16z(&snapshot.system_name, DATA_BLOCK)?;
    let name_len = to_u32(w.pos() - DB::LEN, DATA_BLOCK)?;
    w.pad8();
    let header_length = to_u32(w.pos(), DATA_BLOCK)?;
    for (i, object) in snapshot.objects.iter().enumerate() {
        encode_object(&mut w, object).map_err(|err| err.at("object", i))?;
    }
    let total = to_u32(w.pos(), DATA_BLOCK)?;
    w.put_u16s(DB::SIGNATURE, &DB::PERF);
    w.put_u32(DB::LITTLE_ENDIAN, u32::from(e == Endian::Little));
    w.put_u32(DB::VERSION, 1);
    w.put_u32(DB::REVISION, 1);
    w.put_u32(DB::TOTAL_BYTE_LENGTH, total);
    w.put_u32(DB::HEADER_LENGTH, header_length);
    w.put_u32(
        DB::NUM_OBJECT_TYPES,
        to_u32(snapshot.objects.len(), DATA_BLOCK)?,
    );
    let default_object = options
        .default_object
        .unwrap_or_else(|| snapshot.objects.first().map_or(-1, |o| o.index as i32));
    w.put_i32(DB::DEFAULT_OBJECT, default_object);
    w.put_system_time(DB::SYSTEM_TIME, &snapshot.system_time);
    w.put_i64(DB::PERF_TIME, snapshot.perf_time);
    w.put_i64(DB::PERF_FREQ, snapshot.perf_freq);
    w.put_i64(DB::PERF_TIME_100NSEC, snapshot.perf_time_100ns);
    w.put_u32(DB::SYSTEM_NAME_LENGTH, name_len);
    w.put_u32(DB::SYSTEM_NAME_OFFSET, DB::LEN as u32);
    Ok(w.into_bytes())
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

/// Appends the instance name with its NUL, in UTF-16 or the code page; nothing for an unnamed
/// instance.
fn write_name(w: &mut Writer, s: &str, code_page: u32) -> Result<(), EncodeError> {
    if s.is_empty() {
        return Ok(());
    }
    if code_page == 0 {
        return w.utf16z(s, INSTANCE_DEFINITION);
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
    w.bytes(&bytes);
    w.bytes(&[0]);
    Ok(())
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
        ObjectData::Instances(list) => list.iter().map(|i| i.values()).collect(),
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

fn encode_object(w: &mut Writer, object: &Object) -> Result<(), EncodeError> {
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
    let (offsets, block_len) = if lists.is_empty() {
        // No counter block (no instances, or metadata only): the offsets describe no bytes here,
        // and are written as they are, so that a decoded block encodes to the same definitions.
        (defs.iter().map(|d| d.offset).collect(), 0)
    } else if offsets_consistent(defs, &lists) {
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

    let start = w.pos();
    w.zeros(OT::LEN);
    for (d, &offset) in defs.iter().zip(&offsets) {
        let at = w.pos();
        w.zeros(CD::LEN);
        w.put_u32(at + CD::BYTE_LENGTH, CD::LEN as u32);
        w.put_u32(at + CD::COUNTER_NAME_TITLE_INDEX, d.index);
        w.put_u32(at + CD::COUNTER_HELP_TITLE_INDEX, d.help_index);
        w.put_i32(at + CD::DEFAULT_SCALE, d.scale);
        w.put_u32(at + CD::DETAIL_LEVEL, d.detail_level);
        w.put_u32(at + CD::COUNTER_TYPE, d.counter_type.value());
        w.put_u32(at + CD::COUNTER_SIZE, d.size);
        w.put_u32(at + CD::COUNTER_OFFSET, offset);
    }
    let definition_length = to_u32(w.pos() - start, OBJECT_TYPE)?;
    let num_counters = to_u32(defs.len(), OBJECT_TYPE)?;
    let write_block = |w: &mut Writer, values: &[Value]| {
        let at = w.pos();
        w.zeros(block_len as usize);
        w.put_u32(at + CB::BYTE_LENGTH, block_len);
        for (v, &offset) in values.iter().zip(&offsets) {
            let o = at + offset as usize;
            match v {
                Value::U32(x) => w.put_u32(o, *x),
                Value::U64(x) => w.put_u64(o, *x),
                Value::Bytes(b) => w.put(o, b),
            }
        }
    };
    let num_instances = match &object.data {
        ObjectData::Single(values) => {
            write_block(w, values);
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
                let at = w.pos();
                w.zeros(ID::LEN);
                write_name(w, inst.raw_name(), object.code_page)
                    .map_err(|err| err.at("instance", n))?;
                let name_length = to_u32(w.pos() - at - ID::LEN, INSTANCE_DEFINITION)
                    .map_err(|err| err.at("instance", n))?;
                w.pad8();
                let byte_length = to_u32(w.pos() - at, INSTANCE_DEFINITION)
                    .map_err(|err| err.at("instance", n))?;
                w.put_u32(at + ID::BYTE_LENGTH, byte_length);
                w.put_u32(at + ID::PARENT_OBJECT_TITLE_INDEX, inst.parent_object);
                w.put_u32(at + ID::PARENT_OBJECT_INSTANCE, inst.parent_instance);
                w.put_i32(at + ID::UNIQUE_ID, inst.unique_id);
                w.put_u32(at + ID::NAME_OFFSET, ID::LEN as u32);
                w.put_u32(at + ID::NAME_LENGTH, name_length);
                write_block(w, inst.values());
            }
            i32::try_from(instances.len()).map_err(|_| too_large(OBJECT_TYPE))?
        }
    };
    let total = to_u32(w.pos() - start, OBJECT_TYPE)?;
    w.put_u32(start + OT::TOTAL_BYTE_LENGTH, total);
    w.put_u32(start + OT::DEFINITION_LENGTH, definition_length);
    w.put_u32(start + OT::HEADER_LENGTH, OT::LEN as u32);
    w.put_u32(start + OT::OBJECT_NAME_TITLE_INDEX, object.index);
    w.put_u32(start + OT::OBJECT_HELP_TITLE_INDEX, object.help_index);
    w.put_u32(start + OT::DETAIL_LEVEL, object.detail_level);
    w.put_u32(start + OT::NUM_COUNTERS, num_counters);
    w.put_i32(start + OT::DEFAULT_COUNTER, object.default_counter);
    w.put_i32(start + OT::NUM_INSTANCES, num_instances);
    w.put_u32(start + OT::CODE_PAGE, object.code_page);
    w.put_i64(start + OT::PERF_TIME, object.perf_time);
    w.put_i64(start + OT::PERF_FREQ, object.perf_freq);
    Ok(())
}
