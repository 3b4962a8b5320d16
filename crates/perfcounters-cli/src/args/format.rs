//! The output formats every command writes, and how their names are read.

/// The output formats of `watch`, `typeperf` and `relog`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum OutputFormat {
    /// A live table refreshed in place (the default on a terminal)
    Table,
    /// PDH-CSV 4.0, byte for byte as typeperf writes it (the default otherwise)
    #[default]
    Csv,
    /// PDH-TSV 4.0
    Tsv,
    /// One JSON object per row (JSON Lines)
    Json,
    /// A SQL log (DisplayToID, CounterDetails, CounterData) in SQLite: --output SQL:file.db!logname
    Sql,
}

impl OutputFormat {
    /// The format named by the value of relog's and typeperf's `-f` (`CSV`, `TSV`, `SQL`, `BIN`;
    /// any case).
    pub fn from_windows(v: &str) -> Result<Self, String> {
        match v.to_ascii_lowercase().as_str() {
            "csv" => Ok(OutputFormat::Csv),
            "tsv" => Ok(OutputFormat::Tsv),
            "sql" => Ok(OutputFormat::Sql),
            "bin" => Err(format!(
                "output format {v} (.blg) is not supported; use CSV, TSV or SQL"
            )),
            _ => Err(format!(
                "unknown output format \"{v}\": expected CSV, TSV, SQL or BIN"
            )),
        }
    }
}

/// How `relog --stats` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsFormat {
    /// An aligned table.
    Table,
    /// CSV.
    Csv,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_names() {
        assert_eq!(OutputFormat::from_windows("CSV"), Ok(OutputFormat::Csv));
        assert_eq!(OutputFormat::from_windows("tsv"), Ok(OutputFormat::Tsv));
        assert_eq!(OutputFormat::from_windows("Sql"), Ok(OutputFormat::Sql));
        assert_eq!(
            OutputFormat::from_windows("bin").unwrap_err(),
            "output format bin (.blg) is not supported; use CSV, TSV or SQL"
        );
        assert_eq!(
            OutputFormat::from_windows("xml").unwrap_err(),
            "unknown output format \"xml\": expected CSV, TSV, SQL or BIN"
        );
    }
}
