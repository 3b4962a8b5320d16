//! SQL log row decoding on arbitrary values: never panics; a decoded row re-encodes to the same row.
//!
//! The checks of the `sql_rows` fuzz target, shared with `cargo test`, which runs them over the kept
//! corpus in `fuzz/regressions/sql_rows/` (`crates/perfcounters/tests/fuzz_regressions.rs`).

use perfcounters::log::sql_rows::{
    decode_data_row, decode_details_row, format_sql_time, parse_sql_time, split_halves,
    DetailsColumns, SqlValue,
};
use perfcounters::log::Cell;

/// Reads one value: a tag byte (NULL, integer, real, text, blob), then its bytes (8, or a length
/// byte and the text).
fn value<'a>(data: &mut &'a [u8]) -> SqlValue<'a> {
    let Some((&tag, rest)) = data.split_first() else {
        return SqlValue::Null;
    };
    *data = rest;
    let mut take = |n: usize| {
        let n = n.min(data.len());
        let (a, b) = data.split_at(n);
        *data = b;
        a
    };
    match tag % 5 {
        0 => SqlValue::Null,
        1 => {
            let b = take(8);
            let mut x = [0u8; 8];
            x[..b.len()].copy_from_slice(b);
            SqlValue::Integer(i64::from_le_bytes(x))
        }
        2 => {
            let b = take(8);
            let mut x = [0u8; 8];
            x[..b.len()].copy_from_slice(b);
            SqlValue::Real(f64::from_le_bytes(x))
        }
        t => {
            let n = take(1).first().copied().unwrap_or(0) as usize;
            let bytes = take(n);
            if t == 3 {
                SqlValue::Text(bytes)
            } else {
                SqlValue::Blob(bytes)
            }
        }
    }
}

/// The target's checks on one input: panics when an invariant does not hold.
pub fn run(data: &[u8]) {
    let mut d = data;
    let row: [SqlValue; 7] = std::array::from_fn(|_| value(&mut d));
    if let Ok((time, cell)) = decode_data_row(&row) {
        let text = format_sql_time(time).expect("a decoded time formats");
        assert_eq!(parse_sql_time(text.as_bytes()), Some(time));
        if let Cell::Raw(rc, v) = cell {
            let (fa, fb) = split_halves(rc.raw.first);
            let (sa, sb) = split_halves(rc.raw.second);
            let again = [
                SqlValue::Text(text.as_bytes()),
                v.map_or(SqlValue::Null, SqlValue::Real),
                SqlValue::Integer(fa),
                SqlValue::Integer(fb),
                SqlValue::Integer(sa),
                SqlValue::Integer(sb),
                SqlValue::Integer(i64::from(rc.raw.multi_count)),
            ];
            assert_eq!(decode_data_row(&again), Ok((time, cell)));
        }
    }
    let details: [SqlValue; 10] = std::array::from_fn(|_| value(&mut d));
    if let Ok(c) = decode_details_row(&details) {
        // The column is its path, named as the path formats; stored again, it reads back the same.
        assert_eq!(c.name, c.path.to_string());
        let stored = DetailsColumns::of(&c);
        assert_eq!(decode_details_row(&stored.row()).as_ref(), Ok(&c));
    }
    let _ = parse_sql_time(data);
}
