//! V1 block decoding, naming and encoding on blocks built byte by byte, malformed blocks, and property
//! tests (round trip, mutation).

use perfcounters::format::v1::{
    encode, encode_with, layout_counter_block, resolve_instance_names, DecodeError, EncodeOptions,
    Endian, PerfCounterBlock, PerfDataBlock, RawValue, ValueLayout,
};
use perfcounters::path::eq_ignore_case;
use perfcounters::snapshot::{
    instance_name, pair_bases_by_position, CounterDefinition, Instance, Object, ObjectData,
    Snapshot, SystemTime, Value,
};
use perfcounters::CounterType;
use proptest::prelude::*;

// ------------------------------------------------------------------------------------------------
// A byte-level builder, independent of the library's encoder.

#[derive(Clone, Copy)]
struct W {
    be: bool,
}

impl W {
    fn u16(self, v: &mut Vec<u8>, x: u16) {
        v.extend_from_slice(&if self.be {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        });
    }
    fn u32(self, v: &mut Vec<u8>, x: u32) {
        v.extend_from_slice(&if self.be {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        });
    }
    fn u64(self, v: &mut Vec<u8>, x: u64) {
        v.extend_from_slice(&if self.be {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        });
    }
    fn set_u32(self, v: &mut [u8], at: usize, x: u32) {
        let b = if self.be {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        };
        v[at..at + 4].copy_from_slice(&b);
    }
    fn utf16z(self, s: &str) -> Vec<u8> {
        let mut v = Vec::new();
        for u in s.encode_utf16().chain([0]) {
            self.u16(&mut v, u);
        }
        v
    }
}

const LE: W = W { be: false };

fn pad8(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(8) {
        v.push(0);
    }
}

const SYSTIME: [u16; 8] = [2020, 3, 4, 11, 15, 47, 23, 988];
const PERF_TIME: u64 = 10_364_270_352;
const PERF_FREQ: u64 = 10_000_000;
const PERF_100NS: u64 = 132_290_312_439_883_752;

/// PERF_DATA_BLOCK + name + objects; `num_objects` = None writes the real count.
fn data_block(w: W, name: &str, objects: &[Vec<u8>], num_objects: Option<u32>) -> Vec<u8> {
    let name = w.utf16z(name);
    let mut v = Vec::new();
    for c in "PERF".encode_utf16() {
        w.u16(&mut v, c);
    }
    w.u32(&mut v, u32::from(!w.be));
    w.u32(&mut v, 1);
    w.u32(&mut v, 1);
    w.u32(&mut v, 0); // TotalByteLength, patched
    w.u32(&mut v, 0); // HeaderLength, patched
    w.u32(&mut v, num_objects.unwrap_or(objects.len() as u32));
    w.u32(&mut v, 238);
    for t in SYSTIME {
        w.u16(&mut v, t);
    }
    w.u32(&mut v, 0);
    w.u64(&mut v, PERF_TIME);
    w.u64(&mut v, PERF_FREQ);
    w.u64(&mut v, PERF_100NS);
    w.u32(&mut v, name.len() as u32);
    w.u32(&mut v, 88);
    assert_eq!(v.len(), 88);
    v.extend_from_slice(&name);
    pad8(&mut v);
    let hl = v.len() as u32;
    for o in objects {
        v.extend_from_slice(o);
    }
    let total = v.len() as u32;
    w.set_u32(&mut v, 20, total);
    w.set_u32(&mut v, 24, hl);
    v
}

#[derive(Clone, Copy)]
struct Def {
    index: u32,
    ty: CounterType,
    size: u32,
    offset: u32,
    scale: i32,
}

fn def(index: u32, ty: CounterType, size: u32, offset: u32) -> Def {
    Def {
        index,
        ty,
        size,
        offset,
        scale: 0,
    }
}

fn counter_def(w: W, d: &Def) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [
        40,
        d.index,
        0,
        d.index + 1,
        0,
        d.scale as u32,
        100,
        d.ty.0,
        d.size,
        d.offset,
    ] {
        w.u32(&mut v, x);
    }
    v
}

struct Obj {
    index: u32,
    num_instances: i32,
    code_page: u32,
    perf_time: u64,
    perf_freq: u64,
    default_counter: i32,
}

fn obj(index: u32, num_instances: i32) -> Obj {
    Obj {
        index,
        num_instances,
        code_page: 0,
        perf_time: 0,
        perf_freq: 0,
        default_counter: -1,
    }
}

/// PERF_OBJECT_TYPE + definitions + body (instances / counter block).
fn object_type(w: W, o: &Obj, defs: &[Def], body: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    let dl = 64 + 40 * defs.len() as u32;
    let total = dl + body.len() as u32;
    for x in [
        total,
        dl,
        64,
        o.index,
        0,
        o.index + 1,
        0,
        100,
        defs.len() as u32,
    ] {
        w.u32(&mut v, x);
    }
    w.u32(&mut v, o.default_counter as u32);
    w.u32(&mut v, o.num_instances as u32);
    w.u32(&mut v, o.code_page);
    w.u64(&mut v, o.perf_time);
    w.u64(&mut v, o.perf_freq);
    for d in defs {
        v.extend_from_slice(&counter_def(w, d));
    }
    v.extend_from_slice(body);
    v
}

/// PERF_COUNTER_BLOCK of `len` bytes with raw values at offsets.
fn counter_block(w: W, len: u32, values: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut v = vec![0u8; len as usize];
    w.set_u32(&mut v, 0, len);
    for (off, bytes) in values {
        v[*off as usize..*off as usize + bytes.len()].copy_from_slice(bytes);
    }
    v
}

/// PERF_INSTANCE_DEFINITION with name bytes (NUL included) padded to 8.
fn instance(w: W, name: &[u8], parent_obj: u32, parent_inst: u32, unique_id: i32) -> Vec<u8> {
    let mut v = Vec::new();
    let bl = (24 + name.len()).next_multiple_of(8) as u32;
    for x in [
        bl,
        parent_obj,
        parent_inst,
        unique_id as u32,
        24,
        name.len() as u32,
    ] {
        w.u32(&mut v, x);
    }
    v.extend_from_slice(name);
    pad8(&mut v);
    v
}

fn u32b(w: W, x: u32) -> Vec<u8> {
    let mut v = Vec::new();
    w.u32(&mut v, x);
    v
}
fn u64b(w: W, x: u64) -> Vec<u8> {
    let mut v = Vec::new();
    w.u64(&mut v, x);
    v
}

/// The encoder's output for `snap`, with the header's DefaultObject the builder writes.
fn reencode(snap: &Snapshot, endian: Endian) -> Vec<u8> {
    encode_with(
        snap,
        EncodeOptions {
            endian,
            default_object: Some(238),
        },
    )
    .unwrap()
}

/// Byte equality without printing whole blocks.
#[track_caller]
fn assert_same(a: &[u8], b: &[u8]) {
    let first = a.iter().zip(b).position(|(x, y)| x != y);
    assert!(
        a.len() == b.len() && first.is_none(),
        "lengths {} / {}, first difference at {:?}",
        a.len(),
        b.len(),
        first
    );
}

fn parse(bytes: &[u8]) -> PerfDataBlock<'_> {
    PerfDataBlock::parse(bytes).expect("valid block")
}

// ------------------------------------------------------------------------------------------------
// Faithful blocks.

const UP_TIME_START: u64 = 132_289_457_285_000_000;
const SYSTEM_PERF_TIME: u64 = 132_290_312_439_883_752;

/// System-like object: the real layout (18 counters, ByteLength 96), System Up Time (674, ELAPSED) at
/// 56, "% Registry Quota In Use" 1350 RAW_FRACTION at 88 and its base reusing index 1350 at 92.
fn system_object(w: W) -> Vec<u8> {
    let sizes = [4u32, 4, 4, 8, 8, 8, 4, 4, 4, 8, 4, 4, 4, 4, 4, 4, 4, 4];
    let (offsets, len) = layout_counter_block(sizes).unwrap();
    assert_eq!(len, 96);
    let mut defs: Vec<Def> = sizes
        .iter()
        .zip(&offsets)
        .enumerate()
        .map(|(i, (&s, &o))| {
            let ty = if s == 8 {
                CounterType::PERF_COUNTER_BULK_COUNT
            } else {
                CounterType::PERF_COUNTER_COUNTER
            };
            def(10 + 2 * i as u32, ty, s, o)
        })
        .collect();
    defs[9] = Def {
        scale: -5,
        ..def(674, CounterType::PERF_ELAPSED_TIME, 8, 56)
    };
    defs[16] = def(1350, CounterType::PERF_RAW_FRACTION, 4, 88);
    defs[17] = def(1350, CounterType::PERF_RAW_BASE, 4, 92);
    let mut values: Vec<(u32, Vec<u8>)> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let b = if d.size == 8 {
                u64b(w, 1000 + i as u64)
            } else {
                u32b(w, 1000 + i as u32)
            };
            (d.offset, b)
        })
        .collect();
    values[9].1 = u64b(w, UP_TIME_START);
    values[16].1 = u32b(w, 25);
    values[17].1 = u32b(w, 200);
    let o = Obj {
        perf_time: SYSTEM_PERF_TIME,
        perf_freq: 10_000_000,
        default_counter: 8,
        ..obj(2, -1)
    };
    object_type(w, &o, &defs, &counter_block(w, 96, &values))
}

fn processor_defs() -> Vec<Def> {
    use CounterType as T;
    let list = [
        (6, T::PERF_100NSEC_TIMER_INV),
        (142, T::PERF_100NSEC_TIMER),
        (144, T::PERF_100NSEC_TIMER),
        (148, T::PERF_COUNTER_COUNTER),
        (696, T::PERF_100NSEC_TIMER),
        (698, T::PERF_100NSEC_TIMER),
        (1334, T::PERF_COUNTER_COUNTER),
        (1336, T::PERF_COUNTER_RAWCOUNT),
        (1338, T::PERF_100NSEC_TIMER),
        (1340, T::PERF_100NSEC_TIMER),
        (1342, T::PERF_100NSEC_TIMER),
        (1344, T::PERF_100NSEC_TIMER),
        (1346, T::PERF_COUNTER_BULK_COUNT),
        (1348, T::PERF_COUNTER_BULK_COUNT),
        (1352, T::PERF_COUNTER_BULK_COUNT),
    ];
    let sizes: Vec<u32> = list
        .iter()
        .map(|(_, t)| t.nominal_size().unwrap())
        .collect();
    let (offsets, len) = layout_counter_block(sizes.iter().copied()).unwrap();
    assert_eq!(len, 120);
    assert_eq!(offsets[0], 8);
    list.iter()
        .zip(sizes.iter().zip(offsets))
        .map(|(&(i, t), (&s, o))| def(i, t, s, o))
        .collect()
}

/// Processor-like object: instances "0".."7" and "_Total", blocks of 120 bytes.
fn processor_object(w: W) -> Vec<u8> {
    let defs = processor_defs();
    let mut body = Vec::new();
    let names: Vec<String> = (0..8)
        .map(|i| i.to_string())
        .chain(["_Total".into()])
        .collect();
    for (n, name) in names.iter().enumerate() {
        body.extend_from_slice(&instance(w, &w.utf16z(name), 0, 0, -1));
        let values: Vec<(u32, Vec<u8>)> = defs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let x = (n * 100 + i) as u64;
                (
                    d.offset,
                    if d.size == 8 {
                        u64b(w, x)
                    } else {
                        u32b(w, x as u32)
                    },
                )
            })
            .collect();
        body.extend_from_slice(&counter_block(w, 120, &values));
    }
    object_type(w, &obj(238, 9), &defs, &body)
}

#[test]
fn header_fields() {
    let bytes = data_block(LE, "GETAWAY", &[system_object(LE)], None);
    let block = parse(&bytes);
    assert_eq!(block.endian(), Endian::Little);
    assert_eq!(block.signature(), [0x50, 0x45, 0x52, 0x46]);
    assert_eq!(block.little_endian(), 1);
    assert_eq!((block.version(), block.revision()), (1, 1));
    assert_eq!(block.total_byte_length() as usize, bytes.len());
    assert_eq!(block.header_length(), 104);
    assert_eq!(block.num_object_types(), 1);
    assert_eq!(block.default_object(), 238);
    assert_eq!(
        block.system_time(),
        SystemTime {
            year: 2020,
            month: 3,
            day_of_week: 4,
            day: 11,
            hour: 15,
            minute: 47,
            second: 23,
            milliseconds: 988
        }
    );
    assert_eq!(block.padding(), [0; 4]);
    assert_eq!(block.perf_time(), PERF_TIME as i64);
    assert_eq!(block.perf_freq(), 10_000_000);
    assert_eq!(block.perf_time_100ns(), PERF_100NS as i64);
    assert_eq!(block.system_name_length(), 16);
    assert_eq!(block.system_name_offset(), 88);
    assert_eq!(block.system_name().unwrap(), "GETAWAY");
}

#[test]
fn single_instance_system_object() {
    let bytes = data_block(LE, "GETAWAY", &[system_object(LE)], None);
    let block = parse(&bytes);
    let object = block.objects().next().unwrap().unwrap();
    assert_eq!(object.buffer_offset(), 104);
    assert_eq!(object.name_index(), 2);
    assert_eq!(object.help_index(), 3);
    assert_eq!(object.num_counters(), 18);
    assert_eq!(object.definition_length(), 64 + 18 * 40);
    assert_eq!(object.default_counter(), 8);
    assert_eq!(object.num_instances(), -1);
    assert_eq!(object.perf_time(), SYSTEM_PERF_TIME as i64);
    assert_eq!(object.perf_freq(), 10_000_000);
    assert_eq!(object.instances().count(), 0);
    let block96 = object.counter_block().unwrap().unwrap();
    assert_eq!(block96.byte_length(), 96);
    assert_eq!(block96.buffer_offset(), 104 + 64 + 720);
    let defs: Vec<_> = object.counters().map(Result::unwrap).collect();
    let up = &defs[9];
    assert_eq!(
        (
            up.name_index(),
            up.counter_type(),
            up.counter_size(),
            up.counter_offset()
        ),
        (674, CounterType::PERF_ELAPSED_TIME, 8, 56)
    );
    assert_eq!(up.default_scale(), -5);
    assert_eq!(up.detail_level(), 100);
    assert_eq!(up.byte_length(), 40);
    assert_eq!(block96.value(up).unwrap(), RawValue::U64(UP_TIME_START));
    assert_eq!(block96.value(&defs[0]).unwrap(), RawValue::U32(1000));

    let snap = block.to_snapshot().unwrap();
    assert_eq!(snap.system_name, "GETAWAY");
    assert_eq!(snap.perf_time_100ns, PERF_100NS as i64);
    let o = &snap.objects[0];
    assert_eq!(o.perf_time, 132_290_312_439_883_752);
    let ObjectData::Single(values) = &o.data else {
        panic!("single-instance object expected")
    };
    assert_eq!(values.len(), 18);
    assert_eq!(values[9], Value::U64(132_289_457_285_000_000));
    // The base reusing the numerator's index 1350 is linked by position and type.
    assert_eq!(o.counters[16].index, 1350);
    assert_eq!(o.counters[17].index, 1350);
    assert_eq!(o.counters[16].base, Some(17));
    assert_eq!(o.counters[17].base, None);
    assert_eq!(
        (values[16].clone(), values[17].clone()),
        (Value::U32(25), Value::U32(200))
    );
    // PERF_ELAPSED_TIME packs N and the object's PerfTime: (D − N)/F = 85515.4898837 s.
    let raw = snap.raw_counter(o, values, 9).unwrap();
    assert_eq!(
        (raw.first, raw.second),
        (132_289_457_285_000_000, 132_290_312_439_883_752)
    );
    // Re-encoding the decoded snapshot reproduces the block byte for byte.
    assert_same(&reencode(&snap, Endian::Little), &bytes);
}

#[test]
fn multi_instance_processor_object() {
    let bytes = data_block(
        LE,
        "GETAWAY",
        &[system_object(LE), processor_object(LE)],
        None,
    );
    let block = parse(&bytes);
    let objects: Vec<_> = block.objects().map(Result::unwrap).collect();
    assert_eq!(objects.len(), 2);
    let p = objects[1];
    assert_eq!(p.name_index(), 238);
    assert_eq!(p.num_instances(), 9);
    assert!(p.counter_block().unwrap().is_none());
    let insts: Vec<_> = p.instances().map(Result::unwrap).collect();
    assert_eq!(insts.len(), 9);
    assert_eq!((insts[0].byte_length(), insts[0].name_length()), (32, 4));
    assert_eq!((insts[8].byte_length(), insts[8].name_length()), (40, 14));
    assert_eq!(insts[0].name_offset(), 24);
    assert_eq!(insts[3].name().unwrap(), "3");
    assert_eq!(insts[8].name().unwrap(), "_Total");
    assert_eq!(insts[8].unique_id(), -1);
    assert_eq!(insts[0].counter_block().byte_length(), 120);
    let first_instance = p.buffer_offset() + 64 + 15 * 40;
    assert_eq!(insts[0].buffer_offset(), first_instance);
    assert_eq!(insts[1].buffer_offset(), first_instance + 32 + 120);
    let defs: Vec<_> = p.counters().map(Result::unwrap).collect();
    assert_eq!(defs[0].counter_offset(), 8);
    assert_eq!(
        insts[8].counter_block().value(&defs[3]).unwrap(),
        RawValue::U32(803)
    );
    assert_eq!(
        insts[2].counter_block().value(&defs[14]).unwrap(),
        RawValue::U64(214)
    );

    let snap = block.to_snapshot().unwrap();
    let names: Vec<_> = snap.objects[1]
        .instances()
        .iter()
        .map(|i| i.name().to_owned())
        .collect();
    assert_eq!(names, ["0", "1", "2", "3", "4", "5", "6", "7", "_Total"]);
    assert_eq!(snap.objects[1].instances()[8].values()[0], Value::U64(800));
    assert_same(&reencode(&snap, Endian::Little), &bytes);
}

#[test]
fn no_instances_and_metadata_only() {
    let d = [def(10, CounterType::PERF_COUNTER_RAWCOUNT, 4, 4)];
    let zero = object_type(LE, &obj(500, 0), &d, &[]);
    let meta_multi = object_type(LE, &obj(502, -2), &d, &[]);
    let meta_single = object_type(LE, &obj(504, -3), &d, &[]);
    let bytes = data_block(LE, "H", &[zero, meta_multi, meta_single], None);
    let block = parse(&bytes);
    for o in block.objects() {
        let o = o.unwrap();
        assert_eq!(o.instances().count(), 0);
        assert!(o.counter_block().unwrap().is_none());
        assert_eq!(o.counters().count(), 1);
    }
    let snap = block.to_snapshot().unwrap();
    assert_eq!(snap.objects[0].data, ObjectData::Instances(vec![]));
    assert_eq!(
        snap.objects[1].data,
        ObjectData::MetadataOnly {
            multiple_instances: true
        }
    );
    assert_eq!(
        snap.objects[2].data,
        ObjectData::MetadataOnly {
            multiple_instances: false
        }
    );
    assert_same(&reencode(&snap, Endian::Little), &bytes);
}

#[test]
fn objects_without_counter_blocks_keep_their_definitions_offsets() {
    // Offsets no counter block could hold (0 overlaps `ByteLength`; a value of 23,808 bytes): with
    // no block to read, they decode, and encode back as they are.
    let d = [
        def(10, CounterType::PERF_COUNTER_RAWCOUNT, 23_808, 0),
        def(12, CounterType::PERF_COUNTER_LARGE_RAWCOUNT, 8, 2),
    ];
    let zero = object_type(LE, &obj(500, 0), &d, &[]);
    let meta = object_type(LE, &obj(502, -2), &d, &[]);
    let bytes = data_block(LE, "H", &[zero, meta], None);
    let snap = parse(&bytes).to_snapshot().unwrap();
    for o in &snap.objects {
        let offsets: Vec<_> = o.counters.iter().map(|c| (c.offset, c.size)).collect();
        assert_eq!(offsets, [(0, 23_808), (2, 8)]);
    }
    assert_same(&reencode(&snap, Endian::Little), &bytes);
    let again = parse(&encode(&snap).unwrap()).to_snapshot().unwrap();
    assert_eq!(again, snap);
}

#[test]
fn num_object_types_over_reporting_stops_at_total_byte_length() {
    let bytes = data_block(LE, "H", &[system_object(LE)], Some(7));
    let block = parse(&bytes);
    assert_eq!(block.num_object_types(), 7);
    let objects: Vec<_> = block.objects().collect();
    assert_eq!(objects.len(), 1);
    assert!(objects[0].is_ok());
    assert_eq!(block.to_snapshot().unwrap().objects.len(), 1);
    // And under-reporting stops after NumObjectTypes.
    let bytes = data_block(LE, "H", &[system_object(LE), processor_object(LE)], Some(1));
    assert_eq!(parse(&bytes).objects().count(), 1);
}

#[test]
fn precision_and_multi_companions() {
    use CounterType as T;
    let defs = [
        def(100, T::PERF_PRECISION_100NS_TIMER, 8, 8),
        def(102, T::PERF_PRECISION_TIMESTAMP, 8, 16),
        def(104, T::PERF_100NSEC_MULTI_TIMER, 8, 24),
        def(106, T::PERF_COUNTER_MULTI_BASE, 8, 32),
        def(108, T::PERF_LARGE_RAW_BASE, 8, 40),
    ];
    let vals: Vec<(u32, Vec<u8>)> = defs
        .iter()
        .map(|d| (d.offset, u64b(LE, u64::from(d.index))))
        .collect();
    let o = object_type(LE, &obj(600, -1), &defs, &counter_block(LE, 48, &vals));
    let bytes = data_block(LE, "H", &[o], None);
    let snap = parse(&bytes).to_snapshot().unwrap();
    let bases: Vec<_> = snap.objects[0].counters.iter().map(|c| c.base).collect();
    assert_eq!(bases, [Some(1), None, Some(3), None, None]);
    let o = &snap.objects[0];
    let ObjectData::Single(values) = &o.data else {
        panic!()
    };
    let precision = snap.raw_counter(o, values, 0).unwrap();
    assert_eq!((precision.first, precision.second), (100, 102));
    let multi = snap.raw_counter(o, values, 2).unwrap();
    assert_eq!(
        (multi.first, multi.second, multi.multi_count),
        (104, PERF_100NS as i64, 106)
    );
}

#[test]
fn odd_counter_sizes_are_opaque_bytes() {
    let defs = [
        def(10, CounterType::PERF_COUNTER_TEXT, 2, 4),
        def(12, CounterType::PERF_COUNTER_TEXT, 12, 8),
        def(14, CounterType::PERF_COUNTER_NODATA, 0, 20),
        def(16, CounterType::PERF_COUNTER_RAWCOUNT, 4, 20),
    ];
    let vals = vec![
        (4, vec![0xAB, 0xCD]),
        (8, (1..=12).collect::<Vec<u8>>()),
        (20, u32b(LE, 77)),
    ];
    let o = object_type(LE, &obj(700, -1), &defs, &counter_block(LE, 24, &vals));
    let bytes = data_block(LE, "H", &[o], None);
    let block = parse(&bytes);
    let object = block.objects().next().unwrap().unwrap();
    let cb = object.counter_block().unwrap().unwrap();
    let d: Vec<_> = object.counters().map(Result::unwrap).collect();
    assert_eq!(cb.value(&d[0]).unwrap(), RawValue::Bytes(&[0xAB, 0xCD]));
    assert_eq!(cb.value(&d[2]).unwrap(), RawValue::Bytes(&[]));
    assert_eq!(cb.value(&d[3]).unwrap().as_u64(), Some(77));
    let snap = block.to_snapshot().unwrap();
    assert_eq!(
        snap.objects[0].data,
        ObjectData::Single(vec![
            Value::Bytes(vec![0xAB, 0xCD].into()),
            Value::Bytes((1..=12).collect::<Vec<u8>>().into()),
            Value::Bytes(perfcounters::snapshot::ValueBytes::new()),
            Value::U32(77),
        ])
    );
    // Definitions share no range and start at ≥ 4, so the encoder keeps the offsets.
    assert_same(&reencode(&snap, Endian::Little), &bytes);
}

#[test]
fn code_page_names() {
    let d = [def(10, CounterType::PERF_COUNTER_RAWCOUNT, 4, 4)];
    let mut body = instance(LE, b"caf\xe9\0", 0, 0, 7);
    body.extend(counter_block(LE, 8, &[(4, u32b(LE, 5))]));
    let o = Obj {
        code_page: 1252,
        ..obj(800, 1)
    };
    let bytes = data_block(LE, "H", &[object_type(LE, &o, &d, &body)], None);
    let block = parse(&bytes);
    let object = block.objects().next().unwrap().unwrap();
    assert_eq!(object.code_page(), 1252);
    let inst = object.instances().next().unwrap().unwrap();
    assert_eq!(inst.name_bytes(), b"caf\xe9\0");
    assert_eq!(inst.name().unwrap(), "café");
    let snap = block.to_snapshot().unwrap();
    assert_eq!(snap.objects[0].instances()[0].name(), "café");
    assert_eq!(snap.objects[0].instances()[0].unique_id, 7);
    assert_same(&reencode(&snap, Endian::Little), &bytes);

    // An unknown code page is an error at the instance.
    let o = Obj {
        code_page: 65000 - 1,
        ..obj(800, 1)
    };
    let bytes = data_block(LE, "H", &[object_type(LE, &o, &d, &body)], None);
    let err = parse(&bytes).to_snapshot().unwrap_err();
    assert_eq!(err.structure(), "PERF_INSTANCE_DEFINITION");
    assert_eq!(err.offset(), 96 + 64 + 40);
    assert_eq!(
        err.kind().to_string(),
        "CodePage 64999 of the object is not supported"
    );
}

/// Process(230) with explorer, svchost ×3, explorer; Thread(232) whose parents point into Process.
fn process_and_thread(w: W) -> Vec<u8> {
    let d = [def(784, CounterType::PERF_COUNTER_RAWCOUNT, 4, 4)];
    let mut body = Vec::new();
    for (i, name) in ["explorer", "svchost", "svchost", "svchost", "explorer"]
        .iter()
        .enumerate()
    {
        body.extend(instance(w, &w.utf16z(name), 0, 0, -1));
        body.extend(counter_block(w, 8, &[(4, u32b(w, 100 + i as u32))]));
    }
    let process = object_type(w, &obj(230, 5), &d, &body);
    let mut body = Vec::new();
    // (thread name, parent position)
    for (name, parent) in [("0", 0), ("1", 0), ("0", 4), ("0", 1), ("0", 2), ("0", 99)] {
        body.extend(instance(w, &w.utf16z(name), 230, parent, -1));
        body.extend(counter_block(w, 8, &[(4, u32b(w, parent))]));
    }
    // An instance whose parent object is missing from the block.
    body.extend(instance(w, &w.utf16z("7"), 9999, 0, -1));
    body.extend(counter_block(w, 8, &[(4, u32b(w, 0))]));
    let thread = object_type(w, &obj(232, 7), &d, &body);
    data_block(w, "HOST", &[thread, process], None)
}

#[test]
fn parent_child_and_duplicate_names() {
    let bytes = process_and_thread(LE);
    let snap = parse(&bytes).to_snapshot().unwrap();
    let names = |o: usize| -> Vec<String> {
        snap.objects[o]
            .instances()
            .iter()
            .map(|i| i.name().to_owned())
            .collect()
    };
    // Thread comes first in the block; its parent object follows.
    assert_eq!(snap.objects[0].index, 232);
    assert_eq!(
        names(0),
        [
            "explorer/0",
            "explorer/1",
            "explorer/0#1",
            "svchost/0",
            "svchost/0#1",
            "0",
            "7"
        ]
    );
    assert_eq!(
        names(1),
        [
            "explorer",
            "svchost",
            "svchost#1",
            "svchost#2",
            "explorer#1"
        ]
    );
    let t = snap.objects[0].instances();
    assert_eq!(t[2].raw_name(), "0");
    assert_eq!(t[2].parent(), Some("explorer"));
    assert_eq!((t[2].parent_object, t[2].parent_instance), (230, 4));
    // Parent position out of range: raw name kept, numbers recorded.
    assert_eq!(t[5].parent(), None);
    assert_eq!((t[5].parent_object, t[5].parent_instance), (230, 99));
    assert_eq!(t[6].parent(), None);
    assert_eq!(t[6].parent_object, 9999);
    assert_same(&reencode(&snap, Endian::Little), &bytes);
}

#[test]
fn big_endian_blocks() {
    let be = W { be: true };
    let bytes = data_block(
        be,
        "GETAWAY",
        &[system_object(be), processor_object(be)],
        None,
    );
    assert_eq!(&bytes[0..8], &[0, b'P', 0, b'E', 0, b'R', 0, b'F']);
    let block = parse(&bytes);
    assert_eq!(block.endian(), Endian::Big);
    assert_eq!(block.little_endian(), 0);
    assert_eq!(block.perf_freq(), 10_000_000);
    assert_eq!(block.system_name().unwrap(), "GETAWAY");
    let snap = block.to_snapshot().unwrap();
    let le_snap = parse(&data_block(
        LE,
        "GETAWAY",
        &[system_object(LE), processor_object(LE)],
        None,
    ))
    .to_snapshot()
    .unwrap();
    assert_eq!(snap, le_snap);
    assert_same(&reencode(&snap, Endian::Big), &bytes);
    let threads = process_and_thread(be);
    let snap = parse(&threads).to_snapshot().unwrap();
    assert_eq!(snap.objects[0].instances()[2].name(), "explorer/0#1");
}

#[test]
fn encoder_lays_out_inconsistent_offsets_itself() {
    let object = Object::new(2)
        .with_counters(vec![
            // Offsets 0: the first overlaps ByteLength, inconsistent.
            CounterDefinition::new(10, CounterType::PERF_COUNTER_RAWCOUNT),
            CounterDefinition::new(12, CounterType::PERF_COUNTER_LARGE_RAWCOUNT),
        ])
        .with_values(vec![Value::U32(1), Value::U64(2)]);
    let mut snap = Snapshot::new("H").with_objects(vec![object]);
    let bytes = encode(&snap).unwrap();
    let back = parse(&bytes).to_snapshot().unwrap();
    let offsets: Vec<_> = back.objects[0].counters.iter().map(|c| c.offset).collect();
    assert_eq!(offsets, [4, 8]);
    let block = parse(&bytes);
    let o = block.objects().next().unwrap().unwrap();
    assert_eq!(o.counter_block().unwrap().unwrap().byte_length(), 16);
    assert_eq!(
        back.objects[0].data,
        ObjectData::Single(vec![Value::U32(1), Value::U64(2)])
    );

    // A value that does not match its definition's size is rejected.
    if let ObjectData::Single(v) = &mut snap.objects[0].data {
        v[1] = Value::U32(2);
    }
    assert_eq!(
        encode(&snap).unwrap_err().to_string(),
        "object 0: value list 0, counter 1: the value has 4 bytes but the definition's size is 8"
    );
}

// ------------------------------------------------------------------------------------------------
// Malformed blocks: exact structure, offset and reason.

fn err_of(bytes: &[u8]) -> DecodeError {
    match PerfDataBlock::parse(bytes) {
        Err(e) => e,
        Ok(block) => block.to_snapshot().expect_err("malformed block"),
    }
}

fn check(e: DecodeError, structure: &str, offset: usize, reason: &str) {
    assert_eq!(
        (e.structure(), e.offset(), e.kind().to_string().as_str()),
        (structure, offset, reason),
        "{e}"
    );
}

/// The error of decoding [`simple_block`] with each `(offset, value)` patch written as a
/// little-endian u32.
fn patched_err(patches: &[(usize, u32)]) -> DecodeError {
    let mut b = simple_block();
    for &(at, v) in patches {
        LE.set_u32(&mut b, at, v);
    }
    err_of(&b)
}

fn simple_block() -> Vec<u8> {
    // HeaderLength 96 ("H\0" padded); one object at 96 with one definition (at 160) and one instance
    // at 200, counter block at 200 + 32 = 232.
    let d = [def(10, CounterType::PERF_COUNTER_LARGE_RAWCOUNT, 8, 8)];
    let mut body = instance(LE, &LE.utf16z("abc"), 0, 0, -1);
    body.extend(counter_block(LE, 16, &[(8, u64b(LE, 9))]));
    data_block(LE, "H", &[object_type(LE, &obj(500, 1), &d, &body)], None)
}

#[test]
fn simple_block_is_valid() {
    let bytes = simple_block();
    assert_eq!(bytes.len(), 96 + 64 + 40 + 32 + 16);
    let snap = parse(&bytes).to_snapshot().unwrap();
    assert_eq!(snap.objects[0].instances()[0].values(), [Value::U64(9)]);
}

#[test]
fn bad_signature() {
    let mut b = simple_block();
    b[0] = b'Q';
    check(
        err_of(&b),
        "PERF_DATA_BLOCK",
        0,
        "Signature [51, 00, 45, 00, 52, 00, 46, 00] is not \"PERF\" in UTF-16 (little-endian)",
    );
}

#[test]
fn truncated_header() {
    let b = simple_block();
    check(
        err_of(&b[..87]),
        "PERF_DATA_BLOCK",
        0,
        "buffer of 87 bytes is shorter than the 88-byte header",
    );
}

#[test]
fn total_byte_length_past_buffer() {
    let b = simple_block();
    let len = b.len();
    check(
        err_of(&b[..len - 8]),
        "PERF_DATA_BLOCK",
        0,
        "TotalByteLength 248 exceeds the buffer's 240 bytes",
    );
}

#[test]
fn header_length_past_end() {
    check(
        patched_err(&[(24, 4000)]),
        "PERF_DATA_BLOCK",
        0,
        "HeaderLength 4000 exceeds the TotalByteLength 248",
    );
    check(
        patched_err(&[(24, 16)]),
        "PERF_DATA_BLOCK",
        0,
        "HeaderLength 16 is smaller than the 88-byte header",
    );
}

#[test]
fn system_name_past_end() {
    let mut b = simple_block();
    LE.set_u32(&mut b, 84, 246);
    let e = parse(&b).system_name().unwrap_err();
    check(
        e,
        "PERF_DATA_BLOCK",
        0,
        "SystemNameOffset 246 + SystemNameLength 4 exceeds the TotalByteLength 248",
    );
}

#[test]
fn object_total_byte_length_zero_does_not_loop() {
    let mut b = simple_block();
    LE.set_u32(&mut b, 96, 0);
    LE.set_u32(&mut b, 28, u32::MAX); // NumObjectTypes
    let block = parse(&b);
    let items: Vec<_> = block.objects().collect();
    assert_eq!(items.len(), 1);
    check(
        items[0].clone().unwrap_err(),
        "PERF_OBJECT_TYPE",
        96,
        "TotalByteLength 0 is smaller than the 64-byte header",
    );
    LE.set_u32(&mut b, 96, 4096);
    check(
        err_of(&b),
        "PERF_OBJECT_TYPE",
        96,
        "TotalByteLength 4096 exceeds the 152 bytes left in the block",
    );
}

#[test]
fn definition_length_smaller_than_header_length() {
    check(
        patched_err(&[(96 + 4, 40)]),
        "PERF_OBJECT_TYPE",
        96,
        "DefinitionLength 40 is smaller than the HeaderLength 64",
    );
    // NumCounters 2 do not fit in 40 bytes
    check(
        patched_err(&[(96 + 4, 104), (96 + 32, 2)]),
        "PERF_OBJECT_TYPE",
        96,
        "NumCounters 2 definitions of 40 bytes do not fit between HeaderLength 64 and DefinitionLength 104",
    );
}

#[test]
fn counter_definition_byte_length_zero() {
    check(
        patched_err(&[(160, 0)]),
        "PERF_COUNTER_DEFINITION",
        160,
        "ByteLength 0 is smaller than the 40-byte definition",
    );
    check(
        patched_err(&[(160, 48)]),
        "PERF_COUNTER_DEFINITION",
        160,
        "ByteLength 48 exceeds the object's DefinitionLength 104",
    );
}

#[test]
fn counter_offset_past_the_block() {
    let mut b = simple_block();
    LE.set_u32(&mut b, 160 + 36, 12);
    check(
        err_of(&b),
        "PERF_COUNTER_BLOCK",
        232,
        "counter at offset 12 with size 8 exceeds the counter block's ByteLength 16",
    );
    // Reading through a layout reports the same error for the same block.
    let block = parse(&b);
    let object = block.objects().next().unwrap().unwrap();
    let defs: Vec<_> = object.counters().map(Result::unwrap).collect();
    let layout = ValueLayout::new(&defs);
    let inst = object.instances().next().unwrap().unwrap();
    check(
        through_layout(&inst.counter_block(), &layout).unwrap_err(),
        "PERF_COUNTER_BLOCK",
        232,
        "counter at offset 12 with size 8 exceeds the counter block's ByteLength 16",
    );
}

#[test]
fn instance_name_past_byte_length() {
    check(
        patched_err(&[(200 + 16, 4000), (200 + 20, 20)]),
        "PERF_INSTANCE_DEFINITION",
        200,
        "NameOffset 4000 + NameLength 20 exceeds the instance's ByteLength 32",
    );
    check(
        patched_err(&[(200 + 16, 8), (200 + 20, 20)]),
        "PERF_INSTANCE_DEFINITION",
        200,
        "NameOffset 8 points into the 24-byte header",
    );
    check(
        patched_err(&[(200 + 16, 8), (200 + 20, 20), (200, 16)]),
        "PERF_INSTANCE_DEFINITION",
        200,
        "ByteLength 16 is smaller than the 24-byte header",
    );
}

#[test]
fn counter_block_byte_length_errors() {
    check(
        patched_err(&[(232, 0)]),
        "PERF_COUNTER_BLOCK",
        232,
        "ByteLength 0 is smaller than its own 4-byte field",
    );
    check(
        patched_err(&[(232, 24)]),
        "PERF_COUNTER_BLOCK",
        232,
        "ByteLength 24 exceeds the 16 bytes left in the object",
    );
}

#[test]
fn negative_num_instances() {
    check(
        patched_err(&[(96 + 40, (-7i32) as u32)]),
        "PERF_OBJECT_TYPE",
        96,
        "NumInstances -7 is neither a count nor one of the special values -1, -2, -3",
    );
}

#[test]
fn single_instance_without_room_for_block() {
    let d = [def(10, CounterType::PERF_COUNTER_RAWCOUNT, 4, 4)];
    let b = data_block(LE, "H", &[object_type(LE, &obj(2, -1), &d, &[])], None);
    check(
        err_of(&b),
        "PERF_OBJECT_TYPE",
        96,
        "single-instance object has no room for its PERF_COUNTER_BLOCK: TotalByteLength 104 is not greater than DefinitionLength 104",
    );
}

#[test]
fn absurd_num_instances_with_tiny_buffer() {
    let mut b = simple_block();
    LE.set_u32(&mut b, 96 + 40, 0x7fff_ffff);
    let block = parse(&b);
    let object = block.objects().next().unwrap().unwrap();
    assert_eq!(object.instances().size_hint(), (0, Some(1)));
    let items: Vec<_> = object.instances().collect();
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    check(
        items[1].clone().unwrap_err(),
        "PERF_INSTANCE_DEFINITION",
        248,
        "the 24-byte header exceeds the object's TotalByteLength 152",
    );
    check(
        err_of(&b),
        "PERF_INSTANCE_DEFINITION",
        248,
        "the 24-byte header exceeds the object's TotalByteLength 152",
    );
}

// ------------------------------------------------------------------------------------------------
// Property tests.

fn arb_value(size: u32) -> BoxedStrategy<Value> {
    match size {
        4 => any::<u32>().prop_map(Value::U32).boxed(),
        8 => any::<u64>().prop_map(Value::U64).boxed(),
        n => proptest::collection::vec(any::<u8>(), n as usize)
            .prop_map(|b| Value::Bytes(b.into()))
            .boxed(),
    }
}

fn arb_type() -> impl Strategy<Value = CounterType> {
    use CounterType as T;
    prop_oneof![
        Just(T::PERF_COUNTER_RAWCOUNT),
        Just(T::PERF_RAW_FRACTION),
        Just(T::PERF_RAW_BASE),
        Just(T::PERF_PRECISION_100NS_TIMER),
        Just(T::PERF_PRECISION_TIMESTAMP),
        Just(T::PERF_100NSEC_MULTI_TIMER),
        Just(T::PERF_COUNTER_MULTI_BASE),
        Just(T::PERF_COUNTER_TEXT),
        any::<u32>().prop_map(CounterType),
    ]
}

fn arb_defs() -> impl Strategy<Value = Vec<CounterDefinition>> {
    proptest::collection::vec(
        (
            any::<u32>(),
            any::<u32>(),
            arb_type(),
            prop_oneof![Just(4u32), Just(8), Just(0), Just(2), Just(12), Just(3)],
            -7i32..=7,
            prop_oneof![Just(100u32), Just(200), Just(300), Just(400)],
        ),
        0..6,
    )
    .prop_map(|items| {
        let (offsets, _) = layout_counter_block(items.iter().map(|i| i.3)).unwrap();
        let mut defs: Vec<CounterDefinition> = items
            .into_iter()
            .zip(offsets)
            .map(
                |((index, help_index, counter_type, size, scale, detail_level), offset)| {
                    CounterDefinition {
                        index,
                        name: None,
                        help_index,
                        counter_type,
                        size,
                        offset,
                        scale,
                        detail_level,
                        base: None,
                    }
                },
            )
            .collect();
        pair_bases_by_position(&mut defs);
        defs
    })
}

fn arb_values(defs: &[CounterDefinition]) -> BoxedStrategy<Vec<Value>> {
    defs.iter()
        .map(|d| arb_value(d.size))
        .collect::<Vec<_>>()
        .boxed()
}

fn arb_name(code_page: u32) -> BoxedStrategy<String> {
    if code_page == 0 {
        "[a-zA-Z0-9_ ./()\u{e9}\u{4e2d}\u{1f600}]{0,12}".boxed()
    } else {
        "[a-zA-Z0-9_ ./()\u{e9}\u{fc}\u{20ac}]{0,12}".boxed()
    }
}

fn arb_object() -> impl Strategy<Value = Object> {
    (
        (any::<u32>(), any::<u32>(), any::<u32>(), any::<i32>()),
        prop_oneof![Just(0u32), Just(1252)],
        (any::<i64>(), any::<i64>()),
        arb_defs(),
        0u8..4,
    )
        .prop_flat_map(|(ids, code_page, times, defs, kind)| {
            let data: BoxedStrategy<ObjectData> = match kind {
                0 => arb_values(&defs).prop_map(ObjectData::Single).boxed(),
                1 => any::<bool>()
                    .prop_map(|multiple_instances| ObjectData::MetadataOnly { multiple_instances })
                    .boxed(),
                _ => proptest::collection::vec(
                    (
                        arb_name(code_page),
                        (any::<bool>(), 0u32..4),
                        any::<i32>(),
                        arb_values(&defs),
                    ),
                    0..5,
                )
                .prop_map(|list| {
                    ObjectData::Instances(
                        list.into_iter()
                            .map(
                                |(raw_name, (has_parent, parent_instance), unique_id, values)| {
                                    // Parents point at the objects 1000 / 1001 generated below.
                                    Instance::new(raw_name, values)
                                        .with_parent_at(
                                            if has_parent { 1000 } else { 0 },
                                            parent_instance,
                                        )
                                        .with_unique_id(unique_id)
                                },
                            )
                            .collect(),
                    )
                })
                .boxed(),
            };
            (Just((ids, code_page, times, defs)), data)
        })
        .prop_map(
            |(
                ((index, help_index, detail_level, default_counter), code_page, (pt, pf), counters),
                data,
            )| {
                Object {
                    index,
                    name: None,
                    help_index,
                    detail_level,
                    default_counter,
                    code_page,
                    perf_time: pt,
                    perf_freq: pf,
                    sample_clock: None,
                    counters,
                    data,
                }
            },
        )
}

fn arb_snapshot() -> impl Strategy<Value = Snapshot> {
    (
        "[a-zA-Z0-9-]{0,15}",
        any::<[u16; 8]>(),
        any::<(i64, i64, i64)>(),
        proptest::collection::vec(arb_object(), 0..4),
    )
        .prop_map(
            |(system_name, t, (perf_time, perf_freq, perf_time_100ns), mut objects)| {
                // The first object (if any) is the parent object of every instance with a parent.
                if let Some(o) = objects.first_mut() {
                    o.index = 1000;
                }
                let mut snap = Snapshot {
                    system_name,
                    system_time: SystemTime {
                        year: t[0],
                        month: t[1],
                        day_of_week: t[2],
                        day: t[3],
                        hour: t[4],
                        minute: t[5],
                        second: t[6],
                        milliseconds: t[7],
                    },
                    perf_time,
                    perf_freq,
                    perf_time_100ns,
                    objects,
                };
                resolve_instance_names(&mut snap);
                snap
            },
        )
}

/// The values of every definition read one by one, or the first error.
fn one_by_one<'a>(
    cb: &PerfCounterBlock<'a>,
    defs: &[perfcounters::format::v1::PerfCounterDefinition<'_>],
) -> Result<Vec<RawValue<'a>>, DecodeError> {
    defs.iter().map(|d| cb.value(d)).collect()
}

/// The values through a `ValueLayout` (one check per block), which must equal `one_by_one`, errors
/// included.
fn through_layout<'a>(
    cb: &PerfCounterBlock<'a>,
    layout: &ValueLayout<'_>,
) -> Result<Vec<RawValue<'a>>, DecodeError> {
    let values: Vec<RawValue<'a>> = cb.values_of(layout)?.collect();
    Ok(values)
}

/// Walks everything the zero-copy API offers, then converts; must never panic. The fast paths
/// (values through a layout, names into a reused buffer) must give what the one-by-one reads give.
fn exercise(bytes: &[u8]) {
    let Ok(block) = PerfDataBlock::parse(bytes) else {
        return;
    };
    let _ = block.system_name();
    let mut name = String::from("previous name");
    for object in block.objects() {
        let Ok(object) = object else { continue };
        let defs: Vec<_> = object.counters().filter_map(Result::ok).collect();
        let layout = ValueLayout::new(&defs);
        if let Ok(Some(cb)) = object.counter_block() {
            assert_eq!(through_layout(&cb, &layout), one_by_one(&cb, &defs));
        }
        for inst in object.instances() {
            let Ok(inst) = inst else { continue };
            let owned = inst.name();
            let into = inst.name_into(&mut name).map(|()| name.clone());
            assert_eq!(owned, into);
            let cb = inst.counter_block();
            assert_eq!(through_layout(&cb, &layout), one_by_one(&cb, &defs));
        }
    }
    // A decoded snapshot encodes to a block that decodes to the same snapshot, but for the offsets
    // of counters the encoder laid out again (values overlapping `ByteLength` or each other), and
    // encoding that gives the same block.
    if let Ok(snapshot) = block.to_snapshot() {
        if let Ok(bytes) = encode(&snapshot) {
            let again = parse(&bytes)
                .to_snapshot()
                .expect("the encoded block decodes");
            assert_eq!(without_offsets(&again), without_offsets(&snapshot));
            assert_offsets_kept_or_laid_out(&again, &snapshot);
            assert_same(&encode(&again).unwrap(), &bytes);
        }
    }
}

/// `snapshot` with every counter definition's offset 0.
fn without_offsets(snapshot: &Snapshot) -> Snapshot {
    let mut s = snapshot.clone();
    for c in s.objects.iter_mut().flat_map(|o| o.counters.iter_mut()) {
        c.offset = 0;
    }
    s
}

/// Each object's counter offsets in `again` (`snapshot` encoded and decoded) are `snapshot`'s, or
/// the encoder's own layout of their sizes ([`layout_counter_block`]), nothing else.
fn assert_offsets_kept_or_laid_out(again: &Snapshot, snapshot: &Snapshot) {
    let offsets = |o: &Object| o.counters.iter().map(|c| c.offset).collect::<Vec<u32>>();
    for (a, s) in again.objects.iter().zip(&snapshot.objects) {
        let laid_out = layout_counter_block(s.counters.iter().map(|c| c.size)).map(|(o, _)| o);
        assert!(
            offsets(a) == offsets(s) || Some(offsets(a)) == laid_out,
            "object {}: offsets {:?} after the round trip, {:?} before",
            s.index,
            offsets(a),
            offsets(s)
        );
    }
}

/// Raw names that collide ignoring case and across the `/` of `parent/child`, and hostile ones.
const CHUNK_NAMES: [&str; 10] = [
    "svchost",
    "SVCHOST",
    "a/b",
    "a",
    "b/c#1",
    "",
    "\u{e9}t\u{e9}",
    "\u{c9}T\u{c9}",
    "0",
    "#1",
];

/// A parent object (1000) and a child object (1001, parents by position, some out of range),
/// each with enough instances for their values to fill several shared buffers, named by
/// `resolve_instance_names`.
fn arb_chunked_snapshot() -> impl Strategy<Value = Snapshot> {
    let defs = || {
        let mut defs = vec![
            CounterDefinition::new(10, CounterType::PERF_COUNTER_RAWCOUNT),
            CounterDefinition::new(12, CounterType::PERF_COUNTER_LARGE_RAWCOUNT),
            CounterDefinition {
                size: 6,
                ..CounterDefinition::new(14, CounterType::PERF_COUNTER_TEXT)
            },
            CounterDefinition::new(16, CounterType::PERF_COUNTER_RAWCOUNT),
        ];
        let (offsets, _) = layout_counter_block(defs.iter().map(|d| d.size)).unwrap();
        for (d, offset) in defs.iter_mut().zip(offsets) {
            d.offset = offset;
        }
        Object::new(0).with_counters(defs)
    };
    let values = || {
        (any::<u32>(), any::<u64>(), any::<[u8; 6]>(), any::<u32>()).prop_map(|(a, b, c, d)| {
            vec![
                Value::U32(a),
                Value::U64(b),
                Value::Bytes(c.to_vec().into()),
                Value::U32(d),
            ]
        })
    };
    (
        proptest::collection::vec((0..CHUNK_NAMES.len(), values()), 0..700),
        proptest::collection::vec((0..CHUNK_NAMES.len(), 0u32..720, values()), 0..900),
    )
        .prop_map(move |(parents, children)| {
            let parent = Object {
                index: 1000,
                ..defs().with_instances(
                    parents
                        .into_iter()
                        .map(|(n, v)| Instance::new(CHUNK_NAMES[n], v))
                        .collect(),
                )
            };
            let child = Object {
                index: 1001,
                ..defs().with_instances(
                    children
                        .into_iter()
                        .map(|(n, at, v)| Instance::new(CHUNK_NAMES[n], v).with_parent_at(1000, at))
                        .collect(),
                )
            };
            let mut snap = Snapshot::new("HOST").with_objects(vec![parent, child]);
            resolve_instance_names(&mut snap);
            snap
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip(snap in arb_snapshot(), big in any::<bool>()) {
        let endian = if big { Endian::Big } else { Endian::Little };
        let bytes = encode_with(&snap, EncodeOptions { endian, ..Default::default() }).unwrap();
        let block = PerfDataBlock::parse(&bytes).unwrap();
        prop_assert_eq!(block.endian(), endian);
        prop_assert_eq!(block.total_byte_length() as usize, bytes.len());
        prop_assert_eq!(bytes.len() % 8, 0);
        let back = block.to_snapshot().unwrap();
        prop_assert_eq!(back, snap);
    }

    #[test]
    fn round_trip_across_value_chunks(snap in arb_chunked_snapshot()) {
        let bytes = encode(&snap).unwrap();
        let back = PerfDataBlock::parse(&bytes).unwrap().to_snapshot().unwrap();
        prop_assert_eq!(&back, &snap);
        // The names, by the rule spelled out: the parent is the raw name at that position, and
        // the index counts earlier equal full names, compared ignoring case.
        let parents = back.objects[0].instances();
        for object in &back.objects {
            let mut full_names: Vec<String> = Vec::new();
            for inst in object.instances() {
                let parent = if object.index == 1001 {
                    parents.get(inst.parent_instance as usize).map(|p| p.raw_name())
                } else {
                    None
                };
                prop_assert_eq!(inst.parent(), parent);
                let full = match parent {
                    Some(p) => format!("{p}/{}", inst.raw_name()),
                    None => inst.raw_name().to_owned(),
                };
                let index = full_names.iter().filter(|f| eq_ignore_case(f, &full)).count() as u32;
                prop_assert_eq!(inst.index, index);
                prop_assert_eq!(inst.name(), instance_name(parent, inst.raw_name(), index));
                full_names.push(full);
            }
        }
    }

    #[test]
    fn mutated_blocks_never_panic(
        snap in arb_snapshot(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        inflate in proptest::collection::vec(
            (any::<prop::sample::Index>(), prop_oneof![Just(0u32), Just(1), Just(0x7fff_ffff), Just(u32::MAX), any::<u32>()]),
            0..4,
        ),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = encode(&snap).unwrap();
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= v;
        }
        for (at, v) in inflate {
            // Overwrite an aligned u32 (lengths, counts, offsets all live on 4-byte boundaries).
            let i = at.index(bytes.len() / 4) * 4;
            bytes[i..i + 4].copy_from_slice(&v.to_le_bytes());
        }
        exercise(&bytes);
        exercise(&bytes[..cut.index(bytes.len() + 1)]);
    }
}

#[test]
fn every_truncation_of_a_valid_block_is_handled() {
    let bytes = data_block(
        LE,
        "GETAWAY",
        &[system_object(LE), processor_object(LE)],
        None,
    );
    let threads = process_and_thread(LE);
    for b in [&bytes, &threads] {
        for len in 0..b.len() {
            let cut = &b[..len];
            exercise(cut);
            // The header still claims the full length, so every proper prefix of ≥ 88 bytes is
            // rejected up front.
            if len >= 88 {
                let e = PerfDataBlock::parse(cut).unwrap_err();
                assert_eq!((e.structure(), e.offset()), ("PERF_DATA_BLOCK", 0));
            }
        }
        // With TotalByteLength shrunk to match, walking stops at the cut with an error (a cut right
        // at HeaderLength 104 is a valid block without objects).
        let mut empty = b[..104].to_vec();
        LE.set_u32(&mut empty, 20, 104);
        assert_eq!(parse(&empty).to_snapshot().unwrap().objects.len(), 0);
        let ends: Vec<usize> = parse(b)
            .objects()
            .map(|o| {
                let o = o.unwrap();
                o.buffer_offset() + o.total_byte_length() as usize
            })
            .collect();
        for len in (108..b.len()).step_by(4) {
            let mut cut = b[..len].to_vec();
            LE.set_u32(&mut cut, 20, len as u32);
            exercise(&cut);
            let result = parse(&cut).to_snapshot();
            match ends.iter().position(|&e| e == len) {
                // A cut at an object boundary is a valid block with fewer objects.
                Some(i) => assert_eq!(result.unwrap().objects.len(), i + 1),
                None => assert!(result.is_err(), "len {len}"),
            }
        }
    }
}
