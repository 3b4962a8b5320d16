//! Every binary format of the crate reports malformed input with the one `format::DecodeError`
//! (structure, absolute offset, typed kind) and refuses a model with the one `format::EncodeError`;
//! the errors of captures and sources keep it (or the `io::Error`) as their `source()`.

use crate::support::fixtures;
use crate::support::set_u32;

use fixtures::{scratch_path, v1_capture};
use std::error::Error;

use perfcounters::ErrorChain;

use perfcounters::counter_type::CounterType;
use perfcounters::format::capture::Capture;
use perfcounters::format::{v1, v2, Bound, DecodeError, EncodeError, ErrorKind};
use perfcounters::snapshot::{CounterDefinition, Instance, Object, Snapshot, SystemTime, Value};
use perfcounters::source::replay::ReplaySource;
use perfcounters::source::{Request, Source, SourceError, SourceErrorKind};

/// One multi-instance object with one 8-byte counter and one instance "abc", encoded as V1:
/// header 88 + "H" padded to 96; object at 96 (64 + one 40-byte definition = 104); instance at
/// 200 (24 + "abc\0" = 32 bytes); counter block at 232 (16 bytes); 248 bytes in all.
fn v1_block() -> Vec<u8> {
    let object = Object::new(500)
        .with_counters(vec![CounterDefinition::new(
            10,
            CounterType::PERF_COUNTER_LARGE_RAWCOUNT,
        )])
        .with_instances(vec![Instance::new("abc", vec![Value::U64(9)])]);
    let snap = Snapshot::new("H").with_objects(vec![object]);
    let bytes = v1::encode(&snap).unwrap();
    assert_eq!(bytes.len(), 248);
    bytes
}

fn v1_error(bytes: &[u8]) -> DecodeError {
    match v1::PerfDataBlock::parse(bytes) {
        Err(e) => e,
        Ok(block) => block.to_snapshot().expect_err("malformed block"),
    }
}

fn v2_block() -> Vec<u8> {
    v2::QueryData {
        perf_time_stamp: 1,
        perf_time_100ns: 2,
        perf_freq: 3,
        system_time: SystemTime::default(),
        blocks: vec![v2::QueryBlock {
            status: 0,
            data: v2::BlockData::Single(Value::U64(7)),
        }],
    }
    .encode()
    .unwrap()
}

fn v2_error(bytes: &[u8]) -> DecodeError {
    v2::QueryData::decode(bytes).expect_err("malformed block")
}

#[test]
fn v1_errors_are_typed() {
    let mut b = v1_block();
    b[0] = b'Q';
    assert_eq!(
        v1_error(&b),
        DecodeError::new(
            "PERF_DATA_BLOCK",
            0,
            ErrorKind::BadSignature {
                field: "Signature",
                found: Box::new([0x51, 0, 0x45, 0, 0x52, 0, 0x46, 0]),
                expected: "\"PERF\" in UTF-16 (little-endian)",
            },
        )
    );

    let mut b = v1_block();
    set_u32(&mut b, 200 + 16, 4000);
    set_u32(&mut b, 200 + 20, 20);
    assert_eq!(
        v1_error(&b),
        DecodeError::new(
            "PERF_INSTANCE_DEFINITION",
            200,
            ErrorKind::RangeExceeds {
                offset_field: "NameOffset",
                offset: 4000,
                length_field: "NameLength",
                length: 20,
                limit: Bound::Field {
                    owner: Some("instance"),
                    field: "ByteLength",
                    value: 32,
                },
            },
        )
    );

    let mut b = v1_block();
    set_u32(&mut b, 232, 24);
    assert_eq!(
        v1_error(&b),
        DecodeError::new(
            "PERF_COUNTER_BLOCK",
            232,
            ErrorKind::FieldExceeds {
                field: "ByteLength",
                value: 24,
                limit: Bound::Left {
                    length: 16,
                    parent: "object",
                },
            },
        )
    );
    assert_eq!(
        v1_error(&b).to_string(),
        "PERF_COUNTER_BLOCK at offset 232: ByteLength 24 exceeds the 16 bytes left in the object"
    );

    let b = v1_block();
    assert_eq!(
        v1_error(&b[..40]),
        DecodeError::new(
            "PERF_DATA_BLOCK",
            0,
            ErrorKind::BufferTooShort {
                length: 40,
                header: 88
            }
        )
    );
}

#[test]
fn v2_errors_are_the_same_type() {
    let b = v2_block();
    assert_eq!(
        v2_error(&b[..10]),
        DecodeError::new(
            "PERF_DATA_HEADER",
            0,
            ErrorKind::Truncated {
                needed: 48,
                available: 10
            }
        )
    );
    let mut b = v2_block();
    let len = b.len() as u32;
    set_u32(&mut b, 0, len + 8);
    assert_eq!(
        v2_error(&b),
        DecodeError::new(
            "PERF_DATA_HEADER",
            0,
            ErrorKind::SizeExceedsParent {
                size: u64::from(len) + 8,
                available: u64::from(len)
            }
        )
    );
    // The first PERF_COUNTER_HEADER is at 48; dwType 3 is not defined.
    let mut b = v2_block();
    set_u32(&mut b, 48 + 4, 3);
    let e = v2_error(&b);
    assert_eq!(
        e,
        DecodeError::new(
            "PERF_COUNTER_HEADER",
            48,
            ErrorKind::UnknownType { value: 3 }
        )
    );
    assert_eq!(
        e.to_string(),
        "PERF_COUNTER_HEADER at offset 48: unknown type value 3"
    );

    // The re-exports of the format modules are the one type.
    let from_v1: v1::DecodeError = v1_error(&[]);
    let from_v2: v2::DecodeError = v2_error(&[]);
    let all: [DecodeError; 2] = [from_v1, from_v2];
    assert_eq!(
        all.map(|e| e.structure()),
        ["PERF_DATA_BLOCK", "PERF_DATA_HEADER"]
    );
}

#[test]
fn encode_errors_are_the_same_type() {
    let snap = Snapshot {
        system_name: "a\0b".into(),
        ..Default::default()
    };
    assert_eq!(
        v1::encode(&snap),
        Err(EncodeError::InteriorNul {
            structure: "PERF_DATA_BLOCK"
        })
    );
    assert_eq!(
        v2::encode_string("a\0b"),
        Err(EncodeError::InteriorNul {
            structure: "string"
        })
    );

    // An instance name the object's code page cannot hold, located by object and instance.
    let object = Object {
        code_page: 1252,
        ..Object::new(2)
    }
    .with_instances(vec![
        Instance::new("ok", vec![]),
        Instance::new("\u{4e2d}", vec![]),
    ]);
    let mut snap = Snapshot::new("H").with_objects(vec![object]);
    let e = v1::encode(&snap).unwrap_err();
    assert_eq!(
        e,
        EncodeError::Unrepresentable {
            structure: "PERF_INSTANCE_DEFINITION",
            code_page: 1252
        }
        .at("instance", 1)
        .at("object", 0)
    );
    assert_eq!(
        e.to_string(),
        "object 0: instance 1: PERF_INSTANCE_DEFINITION: name cannot be represented in CodePage 1252"
    );
    snap.objects[0].code_page = 65000 - 1;
    assert_eq!(
        v1::encode(&snap).unwrap_err(),
        EncodeError::CodePage { code_page: 64999 }
            .at("instance", 0)
            .at("object", 0)
    );
}

/// The error under `e` (its `source()`) as a `T`.
fn cause<T: Error + 'static>(e: &dyn Error) -> &T {
    e.source()
        .unwrap_or_else(|| panic!("{e} has no source"))
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("the source of {e} is not a {}", std::any::type_name::<T>()))
}

/// A V1 block whose instance name runs past the instance, and the error it decodes to.
fn bad_v1() -> (Vec<u8>, DecodeError) {
    let mut b = v1_block();
    set_u32(&mut b, 200 + 16, 4000);
    set_u32(&mut b, 200 + 20, 20);
    let e = v1_error(&b);
    assert_eq!(
        (e.structure(), e.offset()),
        ("PERF_INSTANCE_DEFINITION", 200)
    );
    (b, e)
}

#[test]
fn capture_errors_keep_the_decode_error() {
    let dir = scratch_path("capture");
    v1_capture(&[v1_block()]).write(&dir).unwrap();
    let (bad, decode) = bad_v1();
    let sample = dir.join("samples").join("0001.v1.blk");
    std::fs::write(&sample, &bad).unwrap();

    let e = Capture::read(&dir).unwrap_err();
    assert_eq!(e.path(), sample);
    assert!(!e.is_io());
    assert_eq!(cause::<DecodeError>(&e), &decode);
    // The message names the file; the cause is not repeated in it.
    assert_eq!(e.message(), "");
    assert_eq!(e.to_string(), sample.display().to_string());
    assert_eq!(
        ErrorChain(&e).to_string(),
        format!("{}: {decode}", sample.display())
    );

    let e = ReplaySource::open_capture(&dir).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Decode);
    assert_eq!(e.path(), Some(sample.as_path()));
    assert_eq!(cause::<DecodeError>(&e), &decode);
    assert_eq!(e.to_string(), sample.display().to_string());
    assert_eq!(
        ErrorChain(&e).to_string(),
        format!("{}: {decode}", sample.display())
    );

    // A sample replayed from memory (not checked by `read`) fails when it is collected.
    let mut source = ReplaySource::from_capture(v1_capture(&[bad])).unwrap();
    let e = source.collect(&Request::new()).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Decode);
    assert_eq!(cause::<DecodeError>(&e), &decode);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn capture_errors_keep_the_io_error() {
    let dir = scratch_path("io");
    v1_capture(&[v1_block()]).write(&dir).unwrap();
    let sample = dir.join("samples").join("0001.v1.blk");
    std::fs::remove_file(&sample).unwrap();
    std::fs::create_dir(&sample).unwrap(); // a directory where the sample file should be

    let e = Capture::read(&dir).unwrap_err();
    assert!(e.is_io(), "{e}");
    let io = cause::<std::io::Error>(&e);
    assert_eq!(e.message(), "");
    assert_eq!(
        ErrorChain(&e).to_string(),
        format!("{}: {io}", sample.display())
    );

    let e = ReplaySource::open_capture(&dir).unwrap_err();
    assert_eq!(e.kind(), SourceErrorKind::Io);
    assert_eq!(e.path(), Some(sample.as_path()));
    let _: &std::io::Error = cause(&e);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn source_errors_chain_to_their_cause() {
    let (_, decode) = bad_v1();
    let e = SourceError::decode(
        "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"230\")",
        decode.clone(),
    );
    assert_eq!(e.kind(), SourceErrorKind::Decode);
    assert_eq!(cause::<DecodeError>(&e), &decode);
    assert_eq!(
        e.to_string(),
        "RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"230\")"
    );
    assert_eq!(
        ErrorChain(&e).to_string(),
        format!("RegQueryValueExW(HKEY_PERFORMANCE_DATA, \"230\"): {decode}")
    );

    // A V2 conversion error that only wraps a decode error displays as that error, which its
    // variant holds.
    let header = v2_block();
    let mut bad = header.clone();
    set_u32(&mut bad, 48 + 4, 3);
    let conversion = v2::to_snapshot(&v2::DataHeader::parse(&bad).unwrap(), &[], &[]).unwrap_err();
    let e = SourceError::decode("PerfQueryCounterData", conversion);
    let convert: &v2::ConvertError = cause(&e);
    let decode = DecodeError::new(
        "PERF_COUNTER_HEADER",
        48,
        ErrorKind::UnknownType { value: 3 },
    );
    assert!(
        matches!(convert, v2::ConvertError::Decode(d) if d == &decode),
        "{convert:?}"
    );
    assert_eq!(convert.to_string(), decode.to_string());
    assert!(convert.source().is_none());

    let missing = std::env::temp_dir().join("perfcounters-format-errors-missing/none");
    let io = std::fs::read(&missing).unwrap_err();
    let e = SourceError::io(&missing, io);
    assert_eq!(e.kind(), SourceErrorKind::Io);
    assert_eq!(
        cause::<std::io::Error>(&e).kind(),
        std::io::ErrorKind::NotFound
    );
    assert_eq!(e.to_string(), missing.display().to_string());
}
