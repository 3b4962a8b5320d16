//! Hand-written byte arrays checked against the offsets of the reference tables, every block type,
//! malformed inputs, and the worked "Processor Information" example.

use crate::support::processor_guid;
use crate::support::set_u32;
use perfcounters::counter_type::CounterType;
use perfcounters::format::v2::*;
use perfcounters::raw::RawCounter;
use perfcounters::snapshot::{
    CounterDefinition, Instance, Object, ObjectData, SampleClock, Snapshot, SystemTime, Value,
};

/// Little-endian byte builder for hand-written fixtures.
#[derive(Default)]
struct B(Vec<u8>);

impl B {
    fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn raw(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
    fn utf16z(mut self, s: &str) -> Self {
        for u in s.encode_utf16() {
            self.0.extend_from_slice(&u.to_le_bytes());
        }
        self.0.extend_from_slice(&[0, 0]);
        self
    }
    fn zeros(mut self, n: usize) -> Self {
        self.0.resize(self.0.len() + n, 0);
        self
    }
}

const SYSTEM_TIME: SystemTime = SystemTime {
    year: 2020,
    month: 3,
    day_of_week: 2,
    day: 17,
    hour: 9,
    minute: 30,
    second: 45,
    milliseconds: 123,
};

/// The 48-byte PERF_DATA_HEADER, field by field at the offsets of reference §6.2.
fn header_bytes(total: u32, num: u32) -> B {
    B::default()
        .u32(total) // @0 dwTotalSize
        .u32(num) // @4 dwNumCounters
        .u64(0x0102_0304_0506_0708) // @8 PerfTimeStamp
        .u64(132_290_312_439_883_000) // @16 PerfTime100NSec
        .u64(10_000_000) // @24 PerfFreq
        .u16(2020) // @32 SystemTime
        .u16(3)
        .u16(2)
        .u16(17)
        .u16(9)
        .u16(30)
        .u16(45)
        .u16(123)
}

fn base_query(blocks: Vec<QueryBlock>) -> QueryData {
    QueryData {
        perf_time_stamp: 0x0102_0304_0506_0708,
        perf_time_100ns: 132_290_312_439_883_000,
        perf_freq: 10_000_000,
        system_time: SYSTEM_TIME,
        blocks,
    }
}

fn ok(data: BlockData) -> QueryBlock {
    QueryBlock { status: 0, data }
}

/// One instance of a multi-instance block: its id, name and values in the block's counter order.
fn instance(id: u32, name: &str, values: Vec<Value>) -> InstanceData {
    InstanceData {
        id,
        name: name.into(),
        values,
    }
}

/// The specification of counter `counter_id` of `guid` for block `index`: any instance id,
/// status 0, no instance-name filter (a single-instance counterset).
fn spec(guid: Guid, counter_id: u32, index: u32) -> CounterSpec {
    CounterSpec {
        guid,
        status: 0,
        counter_id,
        instance_id: 0xFFFF_FFFF,
        index,
        instance_name: None,
    }
}

/// As [`spec`], for every instance of a multi-instance counterset (instance-name filter `*`).
fn spec_all(guid: Guid, counter_id: u32, index: u32) -> CounterSpec {
    CounterSpec {
        instance_name: Some("*".into()),
        ..spec(guid, counter_id, index)
    }
}

/// Converts a V2 query result given as bytes to a snapshot.
fn convert_bytes(
    bytes: &[u8],
    specs: &[CounterSpec],
    registrations: &[CounterSetRegistration],
) -> Result<ConvertedSnapshot, ConvertError> {
    to_snapshot(&DataHeader::parse(bytes).unwrap(), specs, registrations)
}

/// Encodes `query` and converts its bytes to a snapshot.
fn convert(
    query: &QueryData,
    specs: &[CounterSpec],
    registrations: &[CounterSetRegistration],
) -> Result<ConvertedSnapshot, ConvertError> {
    convert_bytes(&query.encode().unwrap(), specs, registrations)
}

fn err_of<T: std::fmt::Debug>(r: Result<T, DecodeError>) -> (&'static str, usize, ErrorKind) {
    let e = r.expect_err("expected a decode error");
    (e.structure(), e.offset(), e.kind().clone())
}

/// Decodes and walks everything, returning the first error.
fn decode_all(buf: &[u8]) -> Result<QueryData, DecodeError> {
    let h = DataHeader::parse(buf)?;
    h.validate()?;
    QueryData::from_header(&h)
}

// ---------------------------------------------------------------------------------------------------
// Hand-written fixtures

#[test]
fn hand_written_single_counter_block() {
    let bytes = header_bytes(80, 1)
        .u32(0) // @48 PERF_COUNTER_HEADER.dwStatus
        .u32(PERF_SINGLE_COUNTER) // @52 dwType
        .u32(32) // @56 dwSize
        .u32(0) // @60 Reserved
        .u32(8) // @64 PERF_COUNTER_DATA.dwDataSize
        .u32(16) // @68 dwSize
        .u64(0x1122_3344_5566_7788) // @72 value
        .0;
    assert_eq!(bytes.len(), 80);
    let h = DataHeader::parse(&bytes).unwrap();
    assert_eq!(h.total_size(), 80);
    assert_eq!(h.num_counters(), 1);
    assert_eq!(h.perf_time_stamp(), 0x0102_0304_0506_0708);
    assert_eq!(h.perf_time_100ns(), 132_290_312_439_883_000);
    assert_eq!(h.perf_freq(), 10_000_000);
    assert_eq!(h.system_time(), SYSTEM_TIME);
    let blocks: Vec<CounterHeader<'_>> = h.counters().map(Result::unwrap).collect();
    assert_eq!(blocks.len(), 1);
    assert_eq!(
        (blocks[0].offset(), blocks[0].data_type(), blocks[0].size()),
        (48, 1, 32)
    );
    let CounterBlock::Single(d) = blocks[0].block() else {
        panic!("not a single counter")
    };
    assert_eq!((d.offset(), d.data_size(), d.size()), (64, 8, 16));
    assert_eq!(d.value(), Value::U64(0x1122_3344_5566_7788));
    assert_eq!(d.as_u64(), Some(0x1122_3344_5566_7788));

    let model = base_query(vec![ok(BlockData::Single(Value::U64(
        0x1122_3344_5566_7788,
    )))]);
    assert_eq!(model.encode().unwrap(), bytes);
    assert_eq!(QueryData::decode(&bytes).unwrap(), model);
}

#[test]
fn hand_written_counterset_block() {
    let bytes = header_bytes(144, 1)
        .u32(0)
        .u32(PERF_COUNTERSET)
        .u32(96) // @48 header: 144 - 48
        .u32(0)
        .u32(16) // @64 PERF_MULTI_COUNTERS.dwSize = 8 + 2 × 4
        .u32(2) // dwCounters
        .u32(7) // ids
        .u32(9)
        .u32(64) // @80 PERF_MULTI_INSTANCES.dwTotalSize = 144 - 80
        .u32(1) // dwInstances
        .u32(24) // @88 PERF_INSTANCE_HEADER.Size = 8 + 14 + 2 padding
        .u32(5) // InstanceId
        .utf16z("_Total")
        .zeros(2)
        .u32(4) // @112 PERF_COUNTER_DATA dwDataSize
        .u32(16)
        .u32(42)
        .u32(0)
        .u32(8) // @128
        .u32(16)
        .u64(1_000_000_000_000)
        .0;
    assert_eq!(bytes.len(), 144);
    let h = DataHeader::parse(&bytes).unwrap();
    let block = h.counters().next().unwrap().unwrap();
    let CounterBlock::CounterSet { ids, instances } = block.block() else {
        panic!("not a counterset")
    };
    assert_eq!((ids.offset(), ids.size(), ids.count()), (64, 16, 2));
    assert_eq!(ids.ids().collect::<Vec<_>>(), [7, 9]);
    assert_eq!((ids.id(1), ids.id(2)), (Some(9), None));
    assert_eq!(
        (
            instances.offset(),
            instances.total_size(),
            instances.count()
        ),
        (80, 64, 1)
    );
    let inst = instances.iter().next().unwrap().unwrap();
    assert_eq!(
        (inst.header().offset(), inst.header().size(), inst.id()),
        (88, 24, 5)
    );
    assert_eq!(inst.name().to_string_lossy(), "_Total");
    let values: Vec<CounterData<'_>> = inst.values().iter().map(Result::unwrap).collect();
    assert_eq!((values[0].offset(), values[1].offset()), (112, 128));
    assert_eq!(values[0].value(), Value::U32(42));
    assert_eq!(values[1].value(), Value::U64(1_000_000_000_000));

    let model = base_query(vec![ok(BlockData::CounterSet {
        counter_ids: vec![7, 9],
        instances: vec![instance(
            5,
            "_Total",
            vec![Value::U32(42), Value::U64(1_000_000_000_000)],
        )],
    })]);
    assert_eq!(model.encode().unwrap(), bytes);
}

#[test]
fn hand_written_multiple_counters_and_instances_blocks() {
    // One id: PERF_MULTI_COUNTERS is 12 bytes of content, padded to 16 by the encoder.
    let bytes = header_bytes(152, 2)
        .u32(0)
        .u32(PERF_MULTIPLE_COUNTERS)
        .u32(48) // @48
        .u32(0)
        .u32(16) // @64 dwSize (8 + 4, padded)
        .u32(1)
        .u32(3)
        .u32(0)
        .u32(4) // @80
        .u32(16)
        .u32(0xDEAD_BEEF)
        .u32(0)
        .u32(0) // @96
        .u32(PERF_MULTIPLE_INSTANCES)
        .u32(56) // 16 + 8 + 16 + 16
        .u32(0)
        .u32(40) // @112 PERF_MULTI_INSTANCES
        .u32(1)
        .u32(16) // @120 instance "ab": 8 + 6 = 14 → 16
        .u32(0xFFFF_FFFF)
        .utf16z("ab")
        .zeros(2)
        .u32(0) // @136 zero-size value: dwSize 16 (minimum)
        .u32(16)
        .u64(0)
        .0;
    assert_eq!(bytes.len(), 152);
    let model = base_query(vec![
        ok(BlockData::MultipleCounters(vec![(
            3,
            Value::U32(0xDEAD_BEEF),
        )])),
        ok(BlockData::MultipleInstances(vec![instance(
            0xFFFF_FFFF,
            "ab",
            vec![Value::Bytes(perfcounters::snapshot::ValueBytes::new())],
        )])),
    ]);
    assert_eq!(model.encode().unwrap(), bytes);
    assert_eq!(decode_all(&bytes).unwrap(), model);
}

#[test]
fn hand_written_counter_reg_info() {
    let bytes = B::default()
        .u32(21) // @0 CounterId
        .u32(CounterType::PERF_PRECISION_100NS_TIMER.0) // @4 Type
        .u64(PERF_ATTRIB_NO_DISPLAYABLE | 0x1_0000_0000) // @8 Attrib
        .u32(200) // @16 DetailLevel
        .u32(-3i32 as u32) // @20 DefaultScale
        .u32(22) // @24 BaseCounterId
        .u32(NO_COUNTER) // @28 PerfTimeId
        .u32(0x1234) // @32 PerfFreqId
        .u32(0x5678) // @36 MultiId
        .u32(PERF_AGGREGATE_AVG) // @40 AggregateFunc
        .u32(0xAAAA_5555) // @44 Reserved
        .0;
    assert_eq!(bytes.len(), COUNTER_REG_INFO_SIZE);
    let info = CounterRegInfo::parse(&bytes).unwrap();
    let expected = CounterRegInfo {
        counter_id: 21,
        counter_type: 0x2057_0500,
        attrib: 0x1_0000_0002,
        detail_level: 200,
        default_scale: -3,
        base_counter_id: 22,
        perf_time_id: 0xFFFF_FFFF,
        perf_freq_id: 0x1234,
        multi_id: 0x5678,
        aggregate_func: 2,
        reserved: 0xAAAA_5555,
    };
    assert_eq!(info, expected);
    assert_eq!(expected.to_bytes().to_vec(), bytes);
    assert_eq!(
        err_of(CounterRegInfo::parse(&bytes[..47])),
        (
            "PERF_COUNTER_REG_INFO",
            0,
            ErrorKind::Truncated {
                needed: 48,
                available: 47
            }
        )
    );
}

#[test]
fn hand_written_counterset_reg_info() {
    let g = processor_guid();
    let c = |id: u32, ty: CounterType| CounterRegInfo {
        counter_id: id,
        counter_type: ty.0,
        detail_level: 100,
        base_counter_id: NO_COUNTER,
        perf_time_id: NO_COUNTER,
        perf_freq_id: NO_COUNTER,
        multi_id: NO_COUNTER,
        ..Default::default()
    };
    let bytes = B::default()
        .raw(&g.to_bytes()) // @0 CounterSetGuid
        .u32(0) // @16 CounterSetType
        .u32(100) // @20 DetailLevel
        .u32(2) // @24 NumCounters
        .u32(PERF_COUNTERSET_MULTI_INSTANCES) // @28 InstanceType
        .raw(&c(0, CounterType::PERF_100NSEC_TIMER_INV).to_bytes())
        .raw(&c(17, CounterType::PERF_COUNTER_RAWCOUNT).to_bytes())
        .0;
    assert_eq!(bytes.len(), 32 + 2 * 48);
    let info = CounterSetRegInfo::parse(&bytes).unwrap();
    assert_eq!(info.guid(), g);
    assert_eq!(
        (
            info.counterset_type(),
            info.detail_level(),
            info.num_counters(),
            info.instance_type()
        ),
        (0, 100, 2, 2)
    );
    let ids: Vec<u32> = info.counters().map(|c| c.counter_id).collect();
    assert_eq!(ids, [0, 17]);
    assert_eq!(info.counter(1).map(|c| c.counter_type), Some(0x0001_0000));
    assert_eq!(info.counter(2), None);
    // NumCounters larger than the data.
    let mut bad = bytes.clone();
    bad[24..28].copy_from_slice(&3u32.to_le_bytes());
    assert_eq!(
        err_of(CounterSetRegInfo::parse(&bad)),
        (
            "PERF_COUNTERSET_REG_INFO",
            0,
            ErrorKind::CountTooLarge { count: 3, fits: 2 }
        )
    );
    // Huge count, tiny buffer.
    let mut tiny = bytes[..32].to_vec();
    tiny[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        err_of(CounterSetRegInfo::parse(&tiny)).2,
        ErrorKind::CountTooLarge {
            count: u64::from(u32::MAX),
            fits: 0
        }
    );
    assert_eq!(
        err_of(CounterSetRegInfo::parse(&bytes[..31])).0,
        "PERF_COUNTERSET_REG_INFO"
    );
}

#[test]
fn hand_written_string_buffer() {
    // Header 8 + 3 entries × 8 = 32; "Name" at 32 (10 bytes), entry 2 NULL, "x" at 42 (4 bytes).
    let bytes = B::default()
        .u32(48) // dwSize (46 padded to 48)
        .u32(3) // dwCounters
        .u32(7)
        .u32(32)
        .u32(8)
        .u32(0xFFFF_FFFF)
        .u32(9)
        .u32(42)
        .utf16z("Name")
        .utf16z("x")
        .zeros(2)
        .0;
    assert_eq!(bytes.len(), 48);
    let sb = StringBuffer::parse(&bytes).unwrap();
    assert_eq!((sb.size(), sb.count()), (48, 3));
    let entries: Vec<(u32, Option<String>)> = sb
        .entries()
        .map(|e| e.map(|(id, s)| (id, s.map(|s| s.to_string_lossy()))))
        .collect::<Result<_, _>>()
        .unwrap();
    let expected = vec![
        (7, Some("Name".to_string())),
        (8, None),
        (9, Some("x".to_string())),
    ];
    assert_eq!(entries, expected);
    assert_eq!(
        sb.get(9).unwrap().unwrap().map(|s| s.to_string_lossy()),
        Some("x".into())
    );
    assert!(sb.get(10).is_none());
    let model: Vec<(u32, Option<&str>)> = vec![(7, Some("Name")), (8, None), (9, Some("x"))];
    assert_eq!(encode_string_buffer(&model).unwrap(), bytes);

    // An offset past dwSize.
    let mut bad = bytes.clone();
    bad[28..32].copy_from_slice(&48u32.to_le_bytes());
    assert_eq!(
        err_of(decode_string_buffer(&bad)),
        (
            "PERF_STRING_COUNTER_HEADER",
            24,
            ErrorKind::OffsetOutOfRange { offset: 48 }
        )
    );
    // An offset inside the table.
    bad[28..32].copy_from_slice(&16u32.to_le_bytes());
    assert_eq!(
        err_of(decode_string_buffer(&bad)).2,
        ErrorKind::OffsetOutOfRange { offset: 16 }
    );
    // A string that runs to dwSize without a NUL: shrink dwSize to cut "x" before its terminator.
    let mut cut = bytes.clone();
    cut[0..4].copy_from_slice(&44u32.to_le_bytes());
    assert_eq!(
        err_of(decode_string_buffer(&cut)),
        ("string", 42, ErrorKind::UnterminatedString)
    );
    // dwSize past the buffer, dwCounters past dwSize, huge dwCounters.
    assert_eq!(
        err_of(StringBuffer::parse(&bytes[..40])),
        (
            "PERF_STRING_BUFFER_HEADER",
            0,
            ErrorKind::SizeExceedsParent {
                size: 48,
                available: 40
            }
        )
    );
    let mut many = bytes.clone();
    many[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        err_of(StringBuffer::parse(&many)).2,
        ErrorKind::CountTooLarge {
            count: u64::from(u32::MAX),
            fits: 5
        }
    );
    assert_eq!(
        err_of(StringBuffer::parse(&bytes[..7])).0,
        "PERF_STRING_BUFFER_HEADER"
    );
}

#[test]
fn plain_strings_and_guids() {
    let name = B::default().utf16z("Processor Information").0;
    assert_eq!(name.len(), 44);
    assert_eq!(encode_string("Processor Information").unwrap(), name);
    assert_eq!(
        parse_string(&name).unwrap().to_string_lossy(),
        "Processor Information"
    );
    assert_eq!(
        err_of(parse_string(&name[..43])),
        ("string", 0, ErrorKind::UnterminatedString)
    );
    assert_eq!(
        encode_string("a\0b"),
        Err(EncodeError::InteriorNul {
            structure: "string"
        })
    );
    let g = processor_guid();
    assert_eq!(parse_guid(&encode_guid(&g)).unwrap(), g);
    assert_eq!(err_of(parse_guid(&[0; 15])).0, "GUID");

    let other: Guid = "{00000000-0000-0000-0000-000000000001}".parse().unwrap();
    let list = encode_guid_list(&[g, other]);
    assert_eq!(list.len(), 32);
    assert_eq!(
        list[16..32],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    );
    assert_eq!(decode_guid_list(&list).unwrap(), vec![g, other]);
    assert_eq!(
        err_of(GuidList::parse(&list[..17])),
        (
            "GUID",
            16,
            ErrorKind::LengthNotMultiple {
                length: 17,
                item: 16
            }
        )
    );
    assert!(GuidList::parse(&[]).unwrap().is_empty());
}

#[test]
fn hand_written_instance_list() {
    let bytes = B::default()
        .u32(16) // "0,0": 8 + 8 = 16
        .u32(0)
        .utf16z("0,0")
        .u32(24) // "_Total": 8 + 14 → 24
        .u32(0xFFFF_FFFF)
        .utf16z("_Total")
        .zeros(2)
        .0;
    assert_eq!(bytes.len(), 40);
    let list = vec![
        InstanceListEntry {
            id: 0,
            name: "0,0".into(),
        },
        InstanceListEntry {
            id: 0xFFFF_FFFF,
            name: "_Total".into(),
        },
    ];
    assert_eq!(encode_instance_list(&list).unwrap(), bytes);
    assert_eq!(decode_instance_list(&bytes).unwrap(), list);
    assert_eq!(decode_instance_list(&[]).unwrap(), vec![]);
    // Truncated inside the second block.
    assert_eq!(
        err_of(decode_instance_list(&bytes[..20])),
        (
            "PERF_INSTANCE_HEADER",
            16,
            ErrorKind::Truncated {
                needed: 8,
                available: 4
            }
        )
    );
    assert_eq!(
        err_of(decode_instance_list(&bytes[..39])),
        (
            "PERF_INSTANCE_HEADER",
            16,
            ErrorKind::SizeExceedsParent {
                size: 24,
                available: 23
            }
        )
    );
    // Size not a multiple of 8, smaller than the header, name without NUL.
    let mut bad = bytes.clone();
    bad[0..4].copy_from_slice(&12u32.to_le_bytes());
    assert_eq!(
        err_of(decode_instance_list(&bad)).2,
        ErrorKind::SizeNotAligned { size: 12 }
    );
    bad[0..4].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(
        err_of(decode_instance_list(&bad)).2,
        ErrorKind::SizeTooSmall {
            size: 0,
            minimum: 8
        }
    );
    let mut unterminated = bytes.clone();
    unterminated[14] = b'x';
    assert_eq!(
        err_of(decode_instance_list(&unterminated)),
        ("PERF_INSTANCE_HEADER", 0, ErrorKind::UnterminatedString)
    );
}

#[test]
fn hand_written_counter_identifiers() {
    // The specification of Microsoft's consumer sample: all counters, any id, name "*" (48 bytes),
    // followed by a single-instance specification without a name (40 bytes).
    let g = processor_guid();
    let bytes = B::default()
        .raw(&g.to_bytes()) // @0 CounterSetGuid
        .u32(0) // @16 Status
        .u32(48) // @20 Size
        .u32(PERF_WILDCARD_COUNTER) // @24 CounterId
        .u32(0xFFFF_FFFF) // @28 InstanceId
        .u32(1) // @32 Index
        .u32(0) // @36 Reserved
        .utf16z("*")
        .zeros(4)
        .raw(&g.to_bytes())
        .u32(1168)
        .u32(40)
        .u32(3)
        .u32(0xFFFF_FFFF)
        .u32(0)
        .u32(0)
        .0;
    assert_eq!(bytes.len(), 88);
    let ids: Vec<CounterIdentifier<'_>> = CounterIdentifiers::new(&bytes)
        .iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        (
            ids[0].offset(),
            ids[0].size(),
            ids[0].counter_id(),
            ids[0].index()
        ),
        (0, 48, 0xFFFF_FFFF, 1)
    );
    assert_eq!(
        ids[0].instance_name().map(|s| s.to_string_lossy()),
        Some("*".into())
    );
    assert_eq!(
        (ids[1].offset(), ids[1].status(), ids[1].counter_id()),
        (48, 1168, 3)
    );
    assert!(ids[1].instance_name().is_none());
    let specs = vec![
        spec_all(g, PERF_WILDCARD_COUNTER, 1),
        CounterSpec {
            guid: g,
            status: 1168,
            counter_id: 3,
            instance_id: 0xFFFF_FFFF,
            index: 0,
            instance_name: None,
        },
    ];
    assert_eq!(CounterSpec::encode_list(&specs).unwrap(), bytes);
    assert_eq!(CounterSpec::decode_list(&bytes).unwrap(), specs);

    let mut bad = bytes.clone();
    bad[68..72].copy_from_slice(&44u32.to_le_bytes());
    assert_eq!(
        err_of(CounterSpec::decode_list(&bad)),
        (
            "PERF_COUNTER_IDENTIFIER",
            48,
            ErrorKind::SizeNotAligned { size: 44 }
        )
    );
    bad[68..72].copy_from_slice(&32u32.to_le_bytes());
    assert_eq!(
        err_of(CounterSpec::decode_list(&bad)).2,
        ErrorKind::SizeTooSmall {
            size: 32,
            minimum: 40
        }
    );
    bad[68..72].copy_from_slice(&48u32.to_le_bytes());
    assert_eq!(
        err_of(CounterSpec::decode_list(&bad)).2,
        ErrorKind::SizeExceedsParent {
            size: 48,
            available: 40
        }
    );
    assert_eq!(
        err_of(CounterSpec::decode_list(&bytes[..87])),
        (
            "PERF_COUNTER_IDENTIFIER",
            48,
            ErrorKind::Truncated {
                needed: 40,
                available: 39
            }
        )
    );
    let mut unterminated = bytes.clone();
    unterminated[42] = b'!';
    unterminated[44] = b'!';
    unterminated[46] = b'!';
    assert_eq!(
        err_of(CounterSpec::decode_list(&unterminated)),
        ("PERF_COUNTER_IDENTIFIER", 0, ErrorKind::UnterminatedString)
    );
}

// ---------------------------------------------------------------------------------------------------
// Every block type, and malformed data headers

fn all_block_types() -> QueryData {
    base_query(vec![
        QueryBlock {
            status: 1168,
            data: BlockData::Error,
        },
        ok(BlockData::Single(Value::U32(7))),
        ok(BlockData::MultipleCounters(vec![
            (1, Value::U64(u64::MAX)),
            (2, Value::Bytes(vec![1, 2, 3].into())),
            (3, Value::U32(0)),
        ])),
        ok(BlockData::MultipleInstances(vec![
            instance(0, "0,0", vec![Value::U64(10)]),
            instance(1, "", vec![Value::Bytes(vec![9; 13].into())]),
        ])),
        ok(BlockData::CounterSet {
            counter_ids: vec![0, 17, 21],
            instances: vec![
                instance(
                    0,
                    "_Total",
                    vec![Value::U64(1), Value::U32(2), Value::U64(3)],
                ),
                instance(0, "日本", vec![Value::U64(4), Value::U32(5), Value::U64(6)]),
            ],
        }),
        ok(BlockData::CounterSet {
            counter_ids: vec![],
            instances: vec![],
        }),
    ])
}

#[test]
fn every_block_type_round_trips() {
    let model = all_block_types();
    let bytes = model.encode().unwrap();
    assert_eq!(bytes.len() % 8, 0);
    let h = DataHeader::parse(&bytes).unwrap();
    h.validate().unwrap();
    let types: Vec<(u32, u32)> = h
        .counters()
        .map(|c| c.map(|c| (c.data_type(), c.status())).unwrap())
        .collect();
    assert_eq!(types, [(0, 1168), (1, 0), (2, 0), (4, 0), (6, 0), (6, 0)]);
    // Every block starts 8-aligned.
    for c in h.counters() {
        assert_eq!(c.unwrap().offset() % 8, 0);
    }
    assert_eq!(QueryData::decode(&bytes).unwrap(), model);
}

#[test]
fn encoder_rejects_inconsistent_models() {
    let wrong = base_query(vec![ok(BlockData::MultipleInstances(vec![instance(
        0,
        "x",
        vec![],
    )]))]);
    assert_eq!(
        wrong.encode(),
        Err(EncodeError::ValueCount {
            structure: "PERF_MULTI_INSTANCES",
            expected: 1,
            found: 0
        })
    );
    let nul = base_query(vec![ok(BlockData::MultipleInstances(vec![instance(
        0,
        "a\0",
        vec![Value::U32(1)],
    )]))]);
    assert_eq!(
        nul.encode(),
        Err(EncodeError::InteriorNul {
            structure: "PERF_INSTANCE_HEADER"
        })
    );
}

#[test]
fn truncated_at_every_length() {
    let bytes = all_block_types().encode().unwrap();
    for len in 0..bytes.len() {
        let cut = &bytes[..len];
        let e = decode_all(cut).expect_err("truncated data must not decode");
        assert_eq!(
            (e.structure(), e.offset()),
            ("PERF_DATA_HEADER", 0),
            "len {len}"
        );
        // The same cut with dwTotalSize (and the counter count) claiming only what is there: the
        // error moves inside, but there is still one.
        if len >= DATA_HEADER_SIZE && len % 8 == 0 {
            let mut patched = cut.to_vec();
            patched[0..4].copy_from_slice(&(len as u32).to_le_bytes());
            let e = decode_all(&patched).expect_err("inner truncation must be detected");
            assert!(e.offset() >= DATA_HEADER_SIZE, "len {len}: {e}");
        }
    }
}

fn single_counter_bytes() -> Vec<u8> {
    base_query(vec![ok(BlockData::Single(Value::U64(5)))])
        .encode()
        .unwrap()
}

/// The first error of decoding and walking `good` with each `(offset, value)` patch written as a
/// little-endian u32.
fn decode_err(good: &[u8], patches: &[(usize, u32)]) -> (&'static str, usize, ErrorKind) {
    let mut b = good.to_vec();
    for &(at, v) in patches {
        set_u32(&mut b, at, v);
    }
    err_of(decode_all(&b))
}

#[test]
fn malformed_data_header_sizes() {
    let good = single_counter_bytes();
    assert_eq!(good.len(), 80);

    let mut b = good.clone();
    set_u32(&mut b, 0, 76);
    assert_eq!(
        err_of(DataHeader::parse(&b)),
        (
            "PERF_DATA_HEADER",
            0,
            ErrorKind::SizeNotAligned { size: 76 }
        )
    );
    set_u32(&mut b, 0, 40);
    assert_eq!(
        err_of(DataHeader::parse(&b)),
        (
            "PERF_DATA_HEADER",
            0,
            ErrorKind::SizeTooSmall {
                size: 40,
                minimum: 48
            }
        )
    );
    set_u32(&mut b, 0, 88);
    assert_eq!(
        err_of(DataHeader::parse(&b)),
        (
            "PERF_DATA_HEADER",
            0,
            ErrorKind::SizeExceedsParent {
                size: 88,
                available: 80
            }
        )
    );
    assert_eq!(
        err_of(DataHeader::parse(&good[..47])),
        (
            "PERF_DATA_HEADER",
            0,
            ErrorKind::Truncated {
                needed: 48,
                available: 47
            }
        )
    );

    // dwNumCounters larger than the data: the second header would start at 80.
    assert_eq!(
        decode_err(&good, &[(4, 2)]),
        (
            "PERF_COUNTER_HEADER",
            80,
            ErrorKind::Truncated {
                needed: 16,
                available: 0
            }
        )
    );
    // Huge count, tiny buffer: one error, no allocation by count.
    let mut b = good[..48].to_vec();
    set_u32(&mut b, 0, 48);
    set_u32(&mut b, 4, u32::MAX);
    let h = DataHeader::parse(&b).unwrap();
    assert_eq!(h.counters().count(), 1);
    assert_eq!(err_of(decode_all(&b)).0, "PERF_COUNTER_HEADER");

    // PERF_COUNTER_HEADER.dwSize: not a multiple of 8, smaller than the header, larger than the rest.
    for (size, kind) in [
        (28, ErrorKind::SizeNotAligned { size: 28 }),
        (
            8,
            ErrorKind::SizeTooSmall {
                size: 8,
                minimum: 16,
            },
        ),
        (
            40,
            ErrorKind::SizeExceedsParent {
                size: 40,
                available: 32,
            },
        ),
    ] {
        assert_eq!(
            decode_err(&good, &[(56, size)]),
            ("PERF_COUNTER_HEADER", 48, kind)
        );
    }
    // Unknown dwType.
    assert_eq!(
        decode_err(&good, &[(52, 3)]),
        (
            "PERF_COUNTER_HEADER",
            48,
            ErrorKind::UnknownType { value: 3 }
        )
    );
    assert!(decode_err(&good, &[(52, 3)])
        .to_owned()
        .2
        .to_string()
        .contains("unknown type value 3"));
}

#[test]
fn malformed_counter_data() {
    let good = single_counter_bytes();
    // PERF_COUNTER_DATA at 64: dwDataSize @64, dwSize @68.
    for (data_size, size, kind) in [
        (
            4,
            8,
            ErrorKind::SizeTooSmall {
                size: 8,
                minimum: 16,
            },
        ),
        (8, 20, ErrorKind::SizeNotAligned { size: 20 }),
        (
            8,
            24,
            ErrorKind::SizeExceedsParent {
                size: 24,
                available: 16,
            },
        ),
        (
            9,
            16,
            ErrorKind::DataSizeTooLarge {
                data_size: 9,
                size: 16,
            },
        ),
        (
            u32::MAX,
            16,
            ErrorKind::DataSizeTooLarge {
                data_size: u32::MAX,
                size: 16,
            },
        ),
    ] {
        assert_eq!(
            decode_err(&good, &[(64, data_size), (68, size)]),
            ("PERF_COUNTER_DATA", 64, kind)
        );
    }
    // Opaque sizes decode as bytes.
    let mut b = good.clone();
    set_u32(&mut b, 64, 2);
    assert_eq!(
        QueryData::decode(&b).unwrap().blocks[0].data,
        BlockData::Single(Value::Bytes(vec![5, 0].into()))
    );
}

#[test]
fn malformed_nested_blocks() {
    let model = base_query(vec![ok(BlockData::CounterSet {
        counter_ids: vec![7, 9],
        instances: vec![instance(5, "_Total", vec![Value::U32(42), Value::U64(1)])],
    })]);
    let good = model.encode().unwrap();
    // Layout as in hand_written_counterset_block: MULTI_COUNTERS @64, MULTI_INSTANCES @80,
    // INSTANCE_HEADER @88, values @112 and @128.

    // dwCounters larger than dwSize allows; huge.
    assert_eq!(
        decode_err(&good, &[(68, 3)]),
        (
            "PERF_MULTI_COUNTERS",
            64,
            ErrorKind::CountTooLarge { count: 3, fits: 2 }
        )
    );
    assert_eq!(
        decode_err(&good, &[(68, u32::MAX)]).0,
        "PERF_MULTI_COUNTERS"
    );
    // MULTI_COUNTERS.dwSize larger than the counter header.
    assert_eq!(
        decode_err(&good, &[(64, 1000)]),
        (
            "PERF_MULTI_COUNTERS",
            64,
            ErrorKind::SizeExceedsParent {
                size: 1000,
                available: 80
            }
        )
    );
    assert_eq!(
        decode_err(&good, &[(64, 4)]).2,
        ErrorKind::SizeTooSmall {
            size: 4,
            minimum: 8
        }
    );
    // MULTI_INSTANCES.dwTotalSize larger than its parent / not aligned.
    assert_eq!(
        decode_err(&good, &[(80, 72)]),
        (
            "PERF_MULTI_INSTANCES",
            80,
            ErrorKind::SizeExceedsParent {
                size: 72,
                available: 64
            }
        )
    );
    assert_eq!(
        decode_err(&good, &[(80, 60)]).2,
        ErrorKind::SizeNotAligned { size: 60 }
    );
    // dwInstances larger than the data; huge.
    assert_eq!(
        decode_err(&good, &[(84, 2)]),
        (
            "PERF_INSTANCE_HEADER",
            144,
            ErrorKind::Truncated {
                needed: 8,
                available: 0
            }
        )
    );
    assert_eq!(decode_err(&good, &[(84, u32::MAX)]).1, 144);
    // Instance Size past MULTI_INSTANCES; a value's dwSize past MULTI_INSTANCES.
    assert_eq!(
        decode_err(&good, &[(88, 64)]),
        (
            "PERF_INSTANCE_HEADER",
            88,
            ErrorKind::SizeExceedsParent {
                size: 64,
                available: 56
            }
        )
    );
    assert_eq!(
        decode_err(&good, &[(132, 24)]),
        (
            "PERF_COUNTER_DATA",
            128,
            ErrorKind::SizeExceedsParent {
                size: 24,
                available: 16
            }
        )
    );
    // Instance name without NUL in its Size.
    let mut b = good.clone();
    b[108] = b'!';
    b[110] = b'!';
    assert_eq!(
        err_of(decode_all(&b)),
        ("PERF_INSTANCE_HEADER", 88, ErrorKind::UnterminatedString)
    );
    // The error Display names structure and offset.
    assert_eq!(err_of(decode_all(&b)).to_owned().0, "PERF_INSTANCE_HEADER");
    let e = decode_all(&b).unwrap_err();
    assert_eq!(
        e.to_string(),
        "PERF_INSTANCE_HEADER at offset 88: string is not NUL-terminated"
    );
}

// ---------------------------------------------------------------------------------------------------
// Registration round trip

#[test]
fn registration_round_trips() {
    let reg = processor_registration();
    let enc = reg.encode().unwrap();
    assert_eq!(enc.structure.len(), 32 + 6 * 48);
    assert_eq!(enc.counter_names.len() % 8, 0);
    assert_eq!(CounterSetRegistration::decode(enc.buffers()).unwrap(), reg);
    // Without strings: names and help are None.
    let bare = CounterSetRegistration::decode(RegistrationBuffers {
        structure: &enc.structure,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(bare.name, None);
    assert!(bare
        .counters
        .iter()
        .all(|c| c.name.is_none() && c.help.is_none()));
    assert_eq!(bare.counters[2].base_counter_id, 22);
}

// ---------------------------------------------------------------------------------------------------
// Worked example: a "Processor Information"-like counterset through encode → decode → snapshot

fn processor_registration() -> CounterSetRegistration {
    let mut avg_idle = CounterRegistration::new(
        21,
        CounterType::PERF_PRECISION_100NS_TIMER,
        "Average Idle Time",
    );
    avg_idle.base_counter_id = 22;
    avg_idle.detail_level = 200;
    let mut avg_idle_base = CounterRegistration::new(
        22,
        CounterType::PERF_PRECISION_TIMESTAMP,
        "Average Idle Time Base",
    );
    avg_idle_base.attrib = PERF_ATTRIB_NO_DISPLAYABLE;
    avg_idle_base.help = None;
    let mut utility =
        CounterRegistration::new(26, CounterType::PERF_AVERAGE_BULK, "% Processor Utility");
    utility.base_counter_id = 27;
    utility.attrib = PERF_ATTRIB_DISPLAY_AS_REAL;
    let mut utility_base =
        CounterRegistration::new(27, CounterType::PERF_AVERAGE_BASE, "% Utility Base");
    utility_base.attrib = PERF_ATTRIB_NO_DISPLAYABLE;
    let mut time =
        CounterRegistration::new(0, CounterType::PERF_100NSEC_TIMER_INV, "% Processor Time");
    time.help = Some("% Processor Time is the percentage of elapsed time…".into());
    time.aggregate_func = PERF_AGGREGATE_AVG;
    let mut freq = CounterRegistration::new(
        17,
        CounterType::PERF_COUNTER_RAWCOUNT,
        "Processor Frequency",
    );
    freq.default_scale = -2;
    CounterSetRegistration {
        guid: processor_guid(),
        name: Some("Processor Information".into()),
        help: Some("The Processor Information performance counter set…".into()),
        instance_type: PERF_COUNTERSET_MULTI_INSTANCES,
        detail_level: 100,
        counters: vec![time, freq, avg_idle, avg_idle_base, utility, utility_base],
    }
}

fn cpu(id: u32, name: &str, v: [u64; 6]) -> InstanceData {
    // Data order of the block: 26, 0, 22, 21, 17, 27.
    instance(
        id,
        name,
        vec![
            Value::U64(v[0]),
            Value::U64(v[1]),
            Value::U64(v[2]),
            Value::U64(v[3]),
            Value::U32(v[4] as u32),
            Value::U32(v[5] as u32),
        ],
    )
}

#[test]
fn worked_example_processor_information() {
    let memory_guid: Guid = "{00000000-0000-0000-0000-0000000000aa}".parse().unwrap();
    let query = base_query(vec![
        QueryBlock {
            status: 1168, // ERROR_NOT_FOUND
            data: BlockData::Error,
        },
        ok(BlockData::CounterSet {
            counter_ids: vec![26, 0, 22, 21, 17, 27],
            instances: vec![
                cpu(
                    0,
                    "0,0",
                    [
                        900,
                        5_000_000,
                        132_290_312_439_000_000,
                        4_000_000,
                        2_995,
                        1_000,
                    ],
                ),
                cpu(
                    1,
                    "0,1",
                    [
                        800,
                        6_000_000,
                        132_290_312_439_000_100,
                        3_000_000,
                        2_994,
                        1_000,
                    ],
                ),
                cpu(
                    2,
                    "0,_Total",
                    [
                        1_700,
                        11_000_000,
                        132_290_312_439_000_200,
                        7_000_000,
                        2_994,
                        2_000,
                    ],
                ),
                cpu(
                    3,
                    "_Total",
                    [
                        1_700,
                        11_000_000,
                        132_290_312_439_000_300,
                        7_000_000,
                        2_994,
                        2_000,
                    ],
                ),
            ],
        }),
    ]);
    let specs = vec![
        spec_all(processor_guid(), PERF_WILDCARD_COUNTER, 1),
        spec(memory_guid, 4, 0),
    ];
    let reg = processor_registration();

    // Everything goes through bytes.
    let data_bytes = query.encode().unwrap();
    let spec_bytes = CounterSpec::encode_list(&specs).unwrap();
    let reg_bytes = reg.encode().unwrap();
    let header = DataHeader::parse(&data_bytes).unwrap();
    let specs = CounterSpec::decode_list(&spec_bytes).unwrap();
    let reg = CounterSetRegistration::decode(reg_bytes.buffers()).unwrap();
    let conv = to_snapshot(&header, &specs, std::slice::from_ref(&reg)).unwrap();

    assert_eq!(
        conv.errors,
        vec![BlockStatus {
            index: 0,
            guid: memory_guid,
            counter_id: 4,
            status: 1168
        }]
    );
    let def = |index: u32,
               name: &str,
               ty: CounterType,
               size: u32,
               scale: i32,
               detail: u32,
               base: Option<usize>| {
        CounterDefinition {
            index,
            name: Some(name.into()),
            help_index: 0,
            counter_type: ty,
            size,
            offset: 0,
            scale,
            detail_level: detail,
            base,
        }
    };
    // Registration order: 0, 17, 21, 22, 26, 27; values reordered from the data order.
    let inst = |id: i32, name: &str, v: [u64; 6]| {
        Instance::new(
            name,
            vec![
                Value::U64(v[1]),
                Value::U32(v[4] as u32),
                Value::U64(v[3]),
                Value::U64(v[2]),
                Value::U64(v[0]),
                Value::U32(v[5] as u32),
            ],
        )
        .with_unique_id(id)
    };
    let expected = Snapshot {
        system_name: String::new(),
        system_time: SYSTEM_TIME,
        perf_time: 0x0102_0304_0506_0708,
        perf_freq: 10_000_000,
        perf_time_100ns: 132_290_312_439_883_000,
        objects: vec![Object {
            index: 0,
            name: Some("Processor Information".into()),
            help_index: 0,
            detail_level: 100,
            default_counter: -1,
            code_page: 0,
            perf_time: 0,
            perf_freq: 0,
            // A V2 counterset keeps the clock of its PERF_DATA_HEADER.
            sample_clock: Some(SampleClock {
                perf_time: 0x0102_0304_0506_0708,
                perf_freq: 10_000_000,
                perf_time_100ns: 132_290_312_439_883_000,
            }),
            counters: vec![
                def(
                    0,
                    "% Processor Time",
                    CounterType::PERF_100NSEC_TIMER_INV,
                    8,
                    0,
                    100,
                    None,
                ),
                def(
                    17,
                    "Processor Frequency",
                    CounterType::PERF_COUNTER_RAWCOUNT,
                    4,
                    -2,
                    100,
                    None,
                ),
                def(
                    21,
                    "Average Idle Time",
                    CounterType::PERF_PRECISION_100NS_TIMER,
                    8,
                    0,
                    200,
                    Some(3),
                ),
                def(
                    22,
                    "Average Idle Time Base",
                    CounterType::PERF_PRECISION_TIMESTAMP,
                    8,
                    0,
                    100,
                    None,
                ),
                def(
                    26,
                    "% Processor Utility",
                    CounterType::PERF_AVERAGE_BULK,
                    8,
                    0,
                    100,
                    Some(5),
                ),
                def(
                    27,
                    "% Utility Base",
                    CounterType::PERF_AVERAGE_BASE,
                    4,
                    0,
                    100,
                    None,
                ),
            ],
            data: ObjectData::Instances(vec![
                inst(
                    0,
                    "0,0",
                    [
                        900,
                        5_000_000,
                        132_290_312_439_000_000,
                        4_000_000,
                        2_995,
                        1_000,
                    ],
                ),
                inst(
                    1,
                    "0,1",
                    [
                        800,
                        6_000_000,
                        132_290_312_439_000_100,
                        3_000_000,
                        2_994,
                        1_000,
                    ],
                ),
                inst(
                    2,
                    "0,_Total",
                    [
                        1_700,
                        11_000_000,
                        132_290_312_439_000_200,
                        7_000_000,
                        2_994,
                        2_000,
                    ],
                ),
                inst(
                    3,
                    "_Total",
                    [
                        1_700,
                        11_000_000,
                        132_290_312_439_000_300,
                        7_000_000,
                        2_994,
                        2_000,
                    ],
                ),
            ]),
        }],
    };
    assert_eq!(conv.snapshot, expected);

    // The links feed the PDH packing of raw samples.
    let snap = &conv.snapshot;
    let obj = snap.object_by_name("processor information").unwrap();
    let values = obj.instances()[1].values();
    let t = snap.perf_time_100ns;
    assert_eq!(
        snap.raw_counter(obj, values, 0),
        Some(RawCounter::new(6_000_000, t).with_time(t))
    );
    assert_eq!(
        snap.raw_counter(obj, values, 2),
        Some(RawCounter::new(3_000_000, 132_290_312_439_000_100).with_time(t))
    );
    assert_eq!(
        snap.raw_counter(obj, values, 4),
        Some(RawCounter::new(800, 1_000).with_time(t))
    );
    assert_eq!(
        snap.raw_counter(obj, values, 1),
        Some(RawCounter::new(2_994, 0).with_time(t))
    );
    assert_eq!(obj.counter_position_by_name("% Processor Utility"), Some(4));
}

#[test]
fn single_instance_object_timer_and_missing_values() {
    let guid: Guid = "{12345678-9abc-def0-1234-56789abcdef0}".parse().unwrap();
    let mut elapsed = CounterRegistration::new(0, CounterType::PERF_ELAPSED_TIME, "Up Time");
    elapsed.perf_time_id = 1;
    elapsed.perf_freq_id = 2;
    let mut multi = CounterRegistration::new(5, CounterType::PERF_100NSEC_MULTI_TIMER, "Busy");
    multi.multi_id = 6;
    multi.base_counter_id = 1; // MultiId wins over BaseCounterId for multi timers.
    let reg = CounterSetRegistration {
        guid,
        name: Some("Clock".into()),
        help: None,
        instance_type: PERF_COUNTERSET_SINGLE_INSTANCE,
        detail_level: 100,
        counters: vec![
            elapsed,
            CounterRegistration::new(1, CounterType::PERF_COUNTER_LARGE_RAWCOUNT, "Time"),
            CounterRegistration::new(2, CounterType::PERF_COUNTER_LARGE_RAWCOUNT, "Freq"),
            CounterRegistration::new(3, CounterType::PERF_COUNTER_RAWCOUNT, "Never queried"),
            CounterRegistration::new(4, CounterType::PERF_COUNTER_RAWCOUNT, "Other"),
            multi,
            CounterRegistration::new(6, CounterType::PERF_COUNTER_RAWCOUNT, "Items"),
        ],
    };
    let query = base_query(vec![
        ok(BlockData::MultipleCounters(vec![
            (2, Value::U64(10_000_000)),
            (1, Value::U64(132_290_312_439_883_752)),
            (0, Value::U64(132_289_457_285_000_000)),
            (5, Value::U64(50)),
            (6, Value::U32(4)),
        ])),
        ok(BlockData::Single(Value::U32(77))),
        QueryBlock {
            status: 5,
            data: BlockData::Error,
        },
    ]);
    let specs = vec![
        spec(guid, PERF_WILDCARD_COUNTER, 0),
        spec(guid, 4, 1),
        spec(guid, 3, 2),
    ];
    let conv = convert(&query, &specs, &[reg]).unwrap();
    assert_eq!(
        conv.errors,
        vec![BlockStatus {
            index: 2,
            guid,
            counter_id: 3,
            status: 5
        }]
    );
    let obj = &conv.snapshot.objects[0];
    assert_eq!(
        (obj.perf_time, obj.perf_freq),
        (132_290_312_439_883_752, 10_000_000)
    );
    let ids: Vec<u32> = obj.counters.iter().map(|c| c.index).collect();
    assert_eq!(ids, [0, 1, 2, 4, 5, 6]); // counter 3 only had an error block
    let bases: Vec<Option<usize>> = obj.counters.iter().map(|c| c.base).collect();
    assert_eq!(bases, [None, None, None, None, Some(5), None]);
    assert_eq!(
        obj.data,
        ObjectData::Single(vec![
            Value::U64(132_289_457_285_000_000),
            Value::U64(132_290_312_439_883_752),
            Value::U64(10_000_000),
            Value::U32(77),
            Value::U64(50),
            Value::U32(4),
        ])
    );
    let snap = &conv.snapshot;
    let ObjectData::Single(values) = &obj.data else {
        unreachable!()
    };
    let t = snap.perf_time_100ns;
    assert_eq!(
        snap.raw_counter(obj, values, 0),
        Some(RawCounter::new(132_289_457_285_000_000, 132_290_312_439_883_752).with_time(t))
    );
    assert_eq!(
        snap.raw_counter(obj, values, 4),
        Some(RawCounter::new(50, t).with_multi(4).with_time(t))
    );
}

#[test]
fn instances_merge_across_blocks_and_duplicates_get_suffixes() {
    let guid: Guid = "{00000001-0002-0003-0405-060708090a0b}".parse().unwrap();
    let mut frac = CounterRegistration::new(1, CounterType::PERF_RAW_FRACTION, "Usage");
    frac.base_counter_id = 2;
    let mut prec = CounterRegistration::new(3, CounterType::PERF_PRECISION_OBJECT_TIMER, "Prec");
    prec.perf_time_id = 4; // no BaseCounterId: the PerfTimeId counter is the companion
    prec.perf_freq_id = 5;
    let reg = CounterSetRegistration {
        guid,
        name: Some("Proc".into()),
        help: None,
        instance_type: PERF_COUNTERSET_MULTI_INSTANCES,
        detail_level: 100,
        counters: vec![
            frac,
            CounterRegistration::new(2, CounterType::PERF_RAW_BASE, "Usage Base"),
            prec,
            CounterRegistration::new(4, CounterType::PERF_COUNTER_LARGE_RAWCOUNT, "Stamp"),
            CounterRegistration::new(5, CounterType::PERF_COUNTER_LARGE_RAWCOUNT, "Freq"),
        ],
    };
    let one = |id, name: &str, v: u32| instance(id, name, vec![Value::U32(v)]);
    // Counters 2, 3, 4, 5: the base as U32, then three U64.
    let rest = |id, name: &str, base: u32, [prec, stamp, freq]: [u64; 3]| {
        instance(
            id,
            name,
            vec![
                Value::U32(base),
                Value::U64(prec),
                Value::U64(stamp),
                Value::U64(freq),
            ],
        )
    };
    let query = base_query(vec![
        ok(BlockData::MultipleInstances(vec![
            one(10, "svchost", 1),
            one(11, "SVCHOST", 2),
            one(10, "svchost", 3),
        ])),
        ok(BlockData::CounterSet {
            counter_ids: vec![2, 3, 4, 5],
            instances: vec![
                rest(10, "svchost", 100, [7, 1000, 50]),
                rest(12, "new", 300, [9, 3000, 60]),
                rest(10, "svchost", 200, [8, 2000, 70]),
            ],
        }),
    ]);
    let specs = vec![
        spec_all(guid, 1, 0),
        spec_all(guid, PERF_WILDCARD_COUNTER, 1),
    ];
    let conv = convert(&query, &specs, &[reg]).unwrap();
    let obj = &conv.snapshot.objects[0];
    assert_eq!(
        obj.counters.iter().map(|c| c.base).collect::<Vec<_>>(),
        [Some(1), None, Some(3), None, None]
    );
    // Object time from the PerfTimeId / PerfFreqId counters of the first instance.
    assert_eq!((obj.perf_time, obj.perf_freq), (1000, 50));
    let names: Vec<(&str, &str, i32)> = obj
        .instances()
        .iter()
        .map(|i| (i.name(), i.raw_name(), i.unique_id))
        .collect();
    assert_eq!(
        names,
        [
            ("svchost", "svchost", 10),
            ("SVCHOST#1", "SVCHOST", 11),
            ("svchost#2", "svchost", 10),
            ("new", "new", 12)
        ]
    );
    let missing = Value::Bytes(perfcounters::snapshot::ValueBytes::new());
    let values: Vec<Vec<Value>> = obj
        .instances()
        .iter()
        .map(|i| i.values().to_vec())
        .collect();
    assert_eq!(
        values,
        vec![
            vec![
                Value::U32(1),
                Value::U32(100),
                Value::U64(7),
                Value::U64(1000),
                Value::U64(50)
            ],
            vec![
                Value::U32(2),
                missing.clone(),
                missing.clone(),
                missing.clone(),
                missing.clone()
            ],
            vec![
                Value::U32(3),
                Value::U32(200),
                Value::U64(8),
                Value::U64(2000),
                Value::U64(70)
            ],
            vec![
                missing,
                Value::U32(300),
                Value::U64(9),
                Value::U64(3000),
                Value::U64(60)
            ],
        ]
    );
    // A missing value is not numeric, so no raw sample is packed from it.
    assert_eq!(conv.snapshot.raw_counter(obj, &values[3], 0), None);
}

#[test]
fn conversion_errors() {
    let reg = processor_registration();
    let g = reg.guid;
    let header_of = |blocks| base_query(blocks).encode().unwrap();
    let single = header_of(vec![ok(BlockData::Single(Value::U32(1)))]);
    assert_eq!(
        convert_bytes(&single, &[spec_all(g, 0, 1)], std::slice::from_ref(&reg)),
        Err(ConvertError::NoSpecification { index: 0 })
    );
    assert_eq!(
        convert_bytes(&single, &[spec_all(g, 0, 0)], &[]),
        Err(ConvertError::UnknownCounterSet { guid: g })
    );
    assert_eq!(
        convert_bytes(&single, &[spec_all(g, 99, 0)], std::slice::from_ref(&reg)),
        Err(ConvertError::UnknownCounter {
            guid: g,
            counter_id: 99
        })
    );
    assert_eq!(
        convert_bytes(
            &single,
            &[spec_all(g, PERF_WILDCARD_COUNTER, 0)],
            std::slice::from_ref(&reg)
        ),
        Err(ConvertError::WildcardSingleCounter { index: 0 })
    );
    let mixed = header_of(vec![
        ok(BlockData::Single(Value::U32(1))),
        ok(BlockData::MultipleInstances(vec![instance(
            0,
            "a",
            vec![Value::U32(1)],
        )])),
    ]);
    assert_eq!(
        convert_bytes(
            &mixed,
            &[spec_all(g, 0, 0), spec_all(g, 17, 1)],
            std::slice::from_ref(&reg)
        ),
        Err(ConvertError::MixedInstanceShapes { guid: g })
    );
    // A malformed block surfaces as a decode error.
    let mut bad = single.clone();
    bad[52..56].copy_from_slice(&9u32.to_le_bytes());
    let e = convert_bytes(&bad, &[spec_all(g, 0, 0)], std::slice::from_ref(&reg)).unwrap_err();
    assert_eq!(
        e,
        ConvertError::Decode(DecodeError::new(
            "PERF_COUNTER_HEADER",
            48,
            ErrorKind::UnknownType { value: 9 }
        ))
    );
    assert_eq!(
        e.to_string(),
        "PERF_COUNTER_HEADER at offset 48: unknown type value 9"
    );
}
