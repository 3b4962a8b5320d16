//! The Parquet log reader at the level of our schema mapping: a header read from key-value metadata
//! built from the bytes (`header_from_metadata`), and a long-form batch built from the bytes
//! (`records_from_long`: any times, any path parts, plain or dictionary strings, nulls, raw
//! columns or not). Never panics; whatever maps to records writes to a Parquet log
//! (`ParquetLogWriter`) that reads back (`ParquetLogReader`) to the same header and records.
//!
//! Input: the counters metadata text, a `FF` byte, then rows of 12 bytes (time, path choice, value,
//! status choice); the first byte picks plain or dictionary strings and whether raw columns exist.
//!
//! The checks of the `parquet_log` fuzz target, shared with `cargo test`, which runs them over the
//! kept corpus in `fuzz/regressions/parquet_log/` (`crates/perfcounters/tests/fuzz_regressions.rs`,
//! with the feature `arrow`).

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray, UInt32Array,
};
use arrow_schema::{DataType, Field, Schema};
use perfcounters::log::columnar::parquet::{
    header_from_metadata, records_from_long, ParquetLogReader, ParquetLogWriter,
};
use perfcounters::log::{Cell, LogReader, LogWriter, Record};

fn strings(values: Vec<Option<String>>, dict: bool) -> (ArrayRef, DataType) {
    if dict {
        let a: DictionaryArray<Int32Type> = values.iter().map(|v| v.as_deref()).collect();
        let t = a.data_type().clone();
        (Arc::new(a), t)
    } else {
        (Arc::new(StringArray::from(values)), DataType::Utf8)
    }
}

/// Runs the checks on one input.
pub fn run(data: &[u8]) {
    let Some((&flags, data)) = data.split_first() else {
        return;
    };
    let split = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len());
    let (meta, rows) = data.split_at(split);
    let rows = rows.get(1..).unwrap_or(&[]);
    let kv = vec![
        ("perfcounters.log".to_owned(), "long/1".to_owned()),
        (
            "perfcounters.time_zone".to_owned(),
            "Pacific Standard Time".to_owned(),
        ),
        ("perfcounters.time_zone_bias".to_owned(), "480".to_owned()),
        (
            "perfcounters.counters".to_owned(),
            String::from_utf8_lossy(meta).into_owned(),
        ),
    ];
    let Ok(header) = header_from_metadata("fuzz.parquet", &kv) else {
        return;
    };
    let columns = header.counters.len();

    let (mut time, mut machine, mut object, mut parent, mut instance, mut counter) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let (mut index, mut value, mut status, mut first, mut second) =
        (vec![], vec![], vec![], vec![], vec![]);
    for row in rows.chunks_exact(12) {
        let b = |i: usize| row[i];
        // Times from a small set (so rows share records), or anything.
        let t = if b(0) & 0x80 == 0 {
            i64::from(b(1) % 8) * 1_000_000
        } else {
            i64::from_le_bytes([b(1), b(2), b(3), b(4), b(5), b(6), b(7), b(8)])
        };
        // A header column's path, or made-up parts.
        let c = usize::from(b(9));
        let path = header.counters.get(c % columns.max(1)).map(|c| &c.path);
        match path {
            Some(p) if c < 200 => {
                machine.push(p.machine.clone());
                object.push(Some(p.object.clone()));
                parent.push(p.parent.clone());
                instance.push(p.instance.clone());
                counter.push(Some(p.counter.clone()));
                index.push(p.index);
            }
            _ => {
                machine.push((c & 1 == 0).then(|| "M".to_owned()));
                object.push((c & 2 == 0).then(|| format!("O{}", c % 3)));
                parent.push(None);
                instance.push((c & 4 == 0).then(|| "I".to_owned()));
                counter.push((c & 8 == 0).then(|| "C".to_owned()));
                index.push((c & 16 == 0).then_some(u32::from(b(2))));
            }
        }
        time.push((b(0) & 0x40 == 0).then_some(t));
        value.push((b(10) & 1 == 0).then(|| f64::from(b(10)) / 4.0));
        let s = b(11);
        status.push((s & 1 == 0).then_some(u32::from(s >> 1)));
        first.push((s & 2 == 0).then_some(i64::from(b(3))));
        second.push((s & 4 == 0).then_some(i64::from(b(4))));
    }
    let dict = flags & 1 == 0;
    let raw = flags & 2 == 0;
    let mut fields = vec![Field::new(
        "time",
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
        true,
    )];
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(
        TimestampMicrosecondArray::from(time).with_timezone("UTC"),
    )];
    for (name, v) in [
        ("machine", machine),
        ("object", object),
        ("instance", instance),
        ("counter", counter),
        ("parent", parent),
    ] {
        let (a, t) = strings(v, dict);
        fields.push(Field::new(name, t, true));
        arrays.push(a);
    }
    fields.push(Field::new("value", DataType::Float64, true));
    arrays.push(Arc::new(Float64Array::from(value)));
    fields.push(Field::new("instance_index", DataType::UInt32, true));
    arrays.push(Arc::new(UInt32Array::from(index)));
    if raw {
        fields.push(Field::new("raw_first", DataType::Int64, true));
        arrays.push(Arc::new(Int64Array::from(first)));
        fields.push(Field::new("raw_second", DataType::Int64, true));
        arrays.push(Arc::new(Int64Array::from(second)));
        fields.push(Field::new("status", DataType::UInt32, true));
        arrays.push(Arc::new(UInt32Array::from(status)));
    }
    let Ok(batch) = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays) else {
        return;
    };
    let Ok(records) = records_from_long(&header, &batch) else {
        return;
    };

    // Whole records in strictly increasing time, no more values than rows.
    let mut filled = 0;
    for (k, r) in records.iter().enumerate() {
        assert_eq!(r.cells.len(), columns);
        if k > 0 {
            assert!(records[k - 1].time < r.time);
        }
        filled += r.cells.iter().filter(|c| !matches!(c, Cell::Blank)).count();
    }
    assert!(filled <= batch.num_rows());

    // Written and read back: the same header and records.
    let mut w = ParquetLogWriter::new("fuzz.parquet", Vec::new());
    w.write_header(&header).unwrap();
    for r in &records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    let bytes = bytes::Bytes::from(w.into_finished().unwrap());
    let mut back = ParquetLogReader::new("fuzz.parquet", bytes).unwrap();
    assert_eq!(back.header().counters, header.counters);
    let mut rec = Record::default();
    for r in &records {
        assert!(back.read_record(&mut rec).unwrap());
        assert_eq!(&rec, r);
    }
    assert!(!back.read_record(&mut rec).unwrap());
}
