//! A real log's values rewritten as PDH-CSV with one column changed: the comparison tests of the
//! library and of the CLI (which includes this file by path) write their baselines and
//! candidates with it.

use std::path::Path;

use perfcounters::log::{create, Cell, CreateOptions, LogReader, Pipeline, Record};

/// The values of `log` (as relog computes them) written as PDH-CSV to `out`: the column whose
/// path ends with `tripled` multiplied by 3 from record `from` on, and the columns renamed by
/// `rename`. Returns the values of the tripled column before and after, in record order.
pub fn rewrite(
    log: &Path,
    out: &Path,
    tripled: Option<(&str, usize)>,
    rename: &dyn Fn(&str) -> String,
) -> (Vec<f64>, Vec<f64>) {
    let mut opened = Pipeline::new([log.to_str().unwrap()]).open().unwrap();
    let mut header = opened.header().clone();
    let column = tripled.map(|(end, from)| {
        let i = header
            .counters
            .iter()
            .position(|c| c.name.ends_with(end))
            .unwrap();
        (i, from)
    });
    for c in &mut header.counters {
        c.name = rename(&c.name);
        c.path = perfcounters::path::CounterPath::parse(&c.name).unwrap();
    }
    header.source = out.display().to_string();
    let mut writer = create(out.to_str().unwrap(), &CreateOptions::default()).unwrap();
    writer.write_header(&header).unwrap();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut record = Record::default();
    let mut n = 0usize;
    while opened.read_record(&mut record).unwrap() {
        let mut cells: Vec<Cell> = record
            .cells
            .iter()
            .map(|c| c.value().map_or(Cell::Blank, Cell::Value))
            .collect();
        if let Some((i, from)) = column {
            if let Some(v) = cells[i].value() {
                before.push(v);
                let v = if n >= from { v * 3.0 } else { v };
                after.push(v);
                cells[i] = Cell::Value(v);
            }
        }
        writer
            .write_record(&Record {
                time: record.time,
                cells,
            })
            .unwrap();
        n += 1;
    }
    writer.finish().unwrap();
    (before, after)
}
