//! The PerfLib V2 formats: hand-written blocks checked field by field ([`blocks`]), and property
//! tests: `decode(encode(x)) == x` for every structure family, and no panic on mutated blocks
//! (decode, iterate everything, convert to a snapshot).

use perfcounters::counter_type::CounterType;
use perfcounters::format::v2::*;
use perfcounters::snapshot::{SystemTime, Value};
use proptest::prelude::*;

mod blocks;

fn guid() -> impl Strategy<Value = Guid> {
    (any::<u32>(), any::<u16>(), any::<u16>(), any::<[u8; 8]>())
        .prop_map(|(a, b, c, d)| Guid::new(a, b, c, d))
}

/// Strings without NUL (a NUL would end the stored string early).
fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>().prop_filter("no NUL", |c| *c != '\0'), 0..12)
        .prop_map(|v| v.into_iter().collect())
}

/// Values that decode back to themselves: opaque byte strings are never 4 or 8 bytes long.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u32>().prop_map(Value::U32),
        any::<u64>().prop_map(Value::U64),
        prop::collection::vec(any::<u8>(), 0..20)
            .prop_filter("not 4 or 8", |v| v.len() != 4 && v.len() != 8)
            .prop_map(|b| Value::Bytes(b.into())),
    ]
}

fn system_time() -> impl Strategy<Value = SystemTime> {
    any::<[u16; 8]>().prop_map(|w| SystemTime {
        year: w[0],
        month: w[1],
        day_of_week: w[2],
        day: w[3],
        hour: w[4],
        minute: w[5],
        second: w[6],
        milliseconds: w[7],
    })
}

fn instances(per: usize) -> impl Strategy<Value = Vec<InstanceData>> {
    prop::collection::vec(
        (any::<u32>(), name(), prop::collection::vec(value(), per))
            .prop_map(|(id, name, values)| InstanceData { id, name, values }),
        0..4,
    )
}

fn block_data() -> impl Strategy<Value = BlockData> {
    prop_oneof![
        Just(BlockData::Error),
        value().prop_map(BlockData::Single),
        prop::collection::vec((any::<u32>(), value()), 0..5).prop_map(BlockData::MultipleCounters),
        instances(1).prop_map(BlockData::MultipleInstances),
        prop::collection::vec(any::<u32>(), 0..5).prop_flat_map(|ids| {
            let n = ids.len();
            instances(n).prop_map(move |instances| BlockData::CounterSet {
                counter_ids: ids.clone(),
                instances,
            })
        }),
    ]
}

fn query_data() -> impl Strategy<Value = QueryData> {
    (
        any::<i64>(),
        any::<i64>(),
        any::<i64>(),
        system_time(),
        prop::collection::vec(
            (any::<u32>(), block_data()).prop_map(|(status, data)| QueryBlock { status, data }),
            0..5,
        ),
    )
        .prop_map(
            |(perf_time_stamp, perf_time_100ns, perf_freq, system_time, blocks)| QueryData {
                perf_time_stamp,
                perf_time_100ns,
                perf_freq,
                system_time,
                blocks,
            },
        )
}

fn counter_registration() -> impl Strategy<Value = CounterRegistration> {
    (
        (
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u32>(),
            any::<i32>(),
        ),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
        ),
        (prop::option::of(name()), prop::option::of(name())),
    )
        .prop_map(
            |((id, ty, attrib, detail_level, default_scale), (b, t, f, m, a), (name, help))| {
                CounterRegistration {
                    id,
                    counter_type: CounterType(ty),
                    attrib,
                    detail_level,
                    default_scale,
                    base_counter_id: b,
                    perf_time_id: t,
                    perf_freq_id: f,
                    multi_id: m,
                    aggregate_func: a,
                    name,
                    help,
                }
            },
        )
}

/// Registrations whose counter ids are distinct (names are matched to counters by id).
fn registration() -> impl Strategy<Value = CounterSetRegistration> {
    (
        guid(),
        prop::option::of(name()),
        prop::option::of(name()),
        any::<u32>(),
        any::<u32>(),
        prop::collection::vec(counter_registration(), 0..6),
    )
        .prop_map(
            |(guid, name, help, instance_type, detail_level, mut counters)| {
                let mut seen = std::collections::HashSet::new();
                counters.retain(|c| seen.insert(c.id));
                CounterSetRegistration {
                    guid,
                    name,
                    help,
                    instance_type,
                    detail_level,
                    counters,
                }
            },
        )
}

fn spec() -> impl Strategy<Value = CounterSpec> {
    (
        guid(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        prop::option::of(name()),
    )
        .prop_map(
            |(guid, status, counter_id, instance_id, index, instance_name)| CounterSpec {
                guid,
                status,
                counter_id,
                instance_id,
                index,
                instance_name,
            },
        )
}

/// A byte-level mutation: overwrite a u32 at a position, flip a byte, or truncate.
#[derive(Clone, Debug)]
enum Mutation {
    Word(usize, u32),
    Byte(usize, u8),
    Truncate(usize),
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    let word = prop_oneof![
        Just(0u32),
        Just(1),
        Just(4),
        Just(7),
        Just(8),
        Just(16),
        Just(0xFFFF_FFFF),
        Just(0x8000_0000),
        any::<u32>(),
    ];
    prop::collection::vec(
        prop_oneof![
            4 => (any::<usize>(), word).prop_map(|(at, v)| Mutation::Word(at, v)),
            2 => (any::<usize>(), any::<u8>()).prop_map(|(at, v)| Mutation::Byte(at, v)),
            1 => any::<usize>().prop_map(Mutation::Truncate),
        ],
        1..4,
    )
}

fn apply(mut bytes: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        if bytes.is_empty() {
            break;
        }
        match *m {
            Mutation::Word(at, v) => {
                // Aligned to 4 like every field, so size and count fields are hit often.
                let at = (at % bytes.len()) & !3;
                let end = (at + 4).min(bytes.len());
                let src = v.to_le_bytes();
                bytes[at..end].copy_from_slice(&src[..end - at]);
            }
            Mutation::Byte(at, v) => {
                let at = at % bytes.len();
                bytes[at] ^= v;
            }
            Mutation::Truncate(at) => {
                let at = at % bytes.len();
                bytes.truncate(at);
            }
        }
    }
    bytes
}

/// Touches every accessor of a decoded data header; returns the number of items seen.
fn walk(buf: &[u8]) -> usize {
    let Ok(h) = DataHeader::parse(buf) else {
        return 0;
    };
    let _ = h.validate();
    let mut n = 0;
    for c in h.counters() {
        let Ok(c) = c else { break };
        n += 1;
        match c.block() {
            CounterBlock::Error => {}
            CounterBlock::Single(d) => {
                let _ = (d.value(), d.as_u64(), d.bytes().len());
            }
            CounterBlock::MultipleCounters { ids, values } => {
                n += ids.ids().count();
                for d in values.iter().filter_map(Result::ok) {
                    let _ = d.value();
                    n += 1;
                }
            }
            CounterBlock::MultipleInstances(mi)
            | CounterBlock::CounterSet { instances: mi, .. } => {
                for inst in mi.iter() {
                    let Ok(inst) = inst else { break };
                    let _ = inst.name().to_string_lossy();
                    n += inst.values().iter().filter_map(Result::ok).count();
                }
            }
        }
    }
    let _ = QueryData::from_header(&h);
    n
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn query_data_round_trips(q in query_data()) {
        let bytes = q.encode().unwrap();
        prop_assert_eq!(bytes.len() % 8, 0);
        let h = DataHeader::parse(&bytes).unwrap();
        prop_assert!(h.validate().is_ok());
        prop_assert_eq!(QueryData::decode(&bytes).unwrap(), q);
    }

    #[test]
    fn registration_round_trips(r in registration()) {
        let enc = r.encode().unwrap();
        prop_assert_eq!(CounterSetRegistration::decode(enc.buffers()).unwrap(), r.clone());
        for c in &r.counters {
            let info = c.reg_info();
            prop_assert_eq!(CounterRegInfo::parse(&info.to_bytes()).unwrap(), info);
        }
    }

    #[test]
    fn string_buffer_round_trips(entries in prop::collection::vec((any::<u32>(), prop::option::of(name())), 0..6)) {
        let borrowed: Vec<(u32, Option<&str>)> =
            entries.iter().map(|(id, s)| (*id, s.as_deref())).collect();
        let bytes = encode_string_buffer(&borrowed).unwrap();
        prop_assert_eq!(bytes.len() % 8, 0);
        prop_assert_eq!(decode_string_buffer(&bytes).unwrap(), entries);
    }

    #[test]
    fn lists_round_trip(
        guids in prop::collection::vec(guid(), 0..5),
        instances in prop::collection::vec((any::<u32>(), name()).prop_map(|(id, name)| InstanceListEntry { id, name }), 0..5),
        specs in prop::collection::vec(spec(), 0..5),
        text in name(),
    ) {
        prop_assert_eq!(decode_guid_list(&encode_guid_list(&guids)).unwrap(), guids);
        let bytes = encode_instance_list(&instances).unwrap();
        prop_assert_eq!(bytes.len() % 8, 0);
        prop_assert_eq!(decode_instance_list(&bytes).unwrap(), instances);
        let bytes = CounterSpec::encode_list(&specs).unwrap();
        prop_assert_eq!(bytes.len() % 8, 0);
        prop_assert_eq!(CounterSpec::decode_list(&bytes).unwrap(), specs);
        let s = encode_string(&text).unwrap();
        prop_assert_eq!(parse_string(&s).unwrap().to_string_lossy(), text);
    }

    #[test]
    fn guid_text_round_trips(g in guid()) {
        let text = g.to_string();
        prop_assert_eq!(text.len(), 38);
        prop_assert_eq!(text.parse::<Guid>().unwrap(), g);
        prop_assert_eq!(Guid::from_bytes(g.to_bytes()), g);
    }

    #[test]
    fn mutated_query_data_never_panics(q in query_data(), muts in mutations(), r in registration()) {
        let bytes = apply(q.encode().unwrap(), &muts);
        walk(&bytes);
        if let Ok(h) = DataHeader::parse(&bytes) {
            // Specifications and a registration that let the conversion reach the data.
            let mut reg = r;
            let ids: Vec<u32> = q.blocks.iter().flat_map(|b| match &b.data {
                BlockData::MultipleCounters(p) => p.iter().map(|x| x.0).collect(),
                BlockData::CounterSet { counter_ids, .. } => counter_ids.clone(),
                _ => vec![7],
            }).collect();
            for id in ids {
                reg.counters.push(CounterRegistration::new(id, CounterType::PERF_COUNTER_RAWCOUNT, "c"));
            }
            let specs: Vec<CounterSpec> = (0..q.blocks.len() as u32)
                .map(|index| CounterSpec { guid: reg.guid, counter_id: 7, index, ..Default::default() })
                .collect();
            let _ = to_snapshot(&h, &specs, std::slice::from_ref(&reg));
        }
    }

    #[test]
    fn mutated_registration_never_panics(r in registration(), muts in mutations(), which in 0usize..3) {
        let enc = r.encode().unwrap();
        let mut bufs = [enc.structure.clone(), enc.counter_names.clone(), enc.counter_helps.clone()];
        bufs[which] = apply(bufs[which].clone(), &muts);
        let _ = CounterSetRegistration::decode(RegistrationBuffers {
            structure: &bufs[0],
            name: enc.name.as_deref(),
            help: enc.help.as_deref(),
            counter_names: Some(&bufs[1]),
            counter_helps: Some(&bufs[2]),
        });
        if let Ok(info) = CounterSetRegInfo::parse(&bufs[0]) {
            prop_assert!(info.counters().count() <= bufs[0].len() / 48);
        }
        for b in &bufs[1..] {
            if let Ok(sb) = StringBuffer::parse(b) {
                for e in sb.entries() {
                    let _ = e.map(|(_, s)| s.map(|s| s.to_string_lossy()));
                }
            }
        }
    }

    #[test]
    fn mutated_lists_never_panic(
        instances in prop::collection::vec((any::<u32>(), name()).prop_map(|(id, name)| InstanceListEntry { id, name }), 1..5),
        specs in prop::collection::vec(spec(), 1..5),
        muts in mutations(),
    ) {
        let a = apply(encode_instance_list(&instances).unwrap(), &muts);
        let _ = decode_instance_list(&a);
        let b = apply(CounterSpec::encode_list(&specs).unwrap(), &muts);
        let _ = CounterSpec::decode_list(&b);
        let _ = GuidList::parse(&b).map(|l| l.iter().count());
        let _ = parse_string(&b);
        let _ = parse_guid(&b);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        walk(&bytes);
        let _ = CounterSetRegInfo::parse(&bytes);
        let _ = CounterRegInfo::parse(&bytes);
        let _ = decode_string_buffer(&bytes);
        let _ = decode_instance_list(&bytes);
        let _ = CounterSpec::decode_list(&bytes);
    }
}
