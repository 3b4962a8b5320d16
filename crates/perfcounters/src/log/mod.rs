//! Counter logs: the PDH-CSV / PDH-TSV text formats that typeperf and relog write.

pub mod pdh_csv;

pub use pdh_csv::{CsvFlavor, PdhCsvWriter};
