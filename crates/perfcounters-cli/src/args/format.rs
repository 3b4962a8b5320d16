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
    /// Parquet (relog): one file (-o FILE.parquet) or a Hive-partitioned dataset (-o DIR/). Not a
    /// value of `watch --format`, which does not write it (relog's `-f` reads its own names).
    #[value(skip)]
    Parquet,
}

impl OutputFormat {
    /// The log format this output writes, if it writes a log.
    pub fn log_format(self) -> Option<perfcounters::log::LogFormat> {
        use perfcounters::log::LogFormat;
        match self {
            OutputFormat::Csv => Some(LogFormat::Csv),
            OutputFormat::Tsv => Some(LogFormat::Tsv),
            OutputFormat::Sql => Some(LogFormat::Sql),
            OutputFormat::Parquet => Some(LogFormat::Parquet),
            OutputFormat::Table | OutputFormat::Json => None,
        }
    }

    /// The format of an output named `name`: the one its name calls for (`SQL:file.db!log`,
    /// `.csv`, `.tsv`; [`perfcounters::log::LogFormat::from_name`]), else `asked`, else `default`.
    ///
    /// # Errors
    /// `asked` contradicts the name, or the name calls for a log that is read, not written (`.blg`).
    pub fn for_output(
        name: &std::path::Path,
        asked: Option<OutputFormat>,
        default: OutputFormat,
    ) -> anyhow::Result<OutputFormat> {
        use perfcounters::log::LogFormat;
        let Some(named) = name.to_str().and_then(LogFormat::from_name) else {
            return Ok(asked.unwrap_or(default));
        };
        let format = match named {
            LogFormat::Csv => OutputFormat::Csv,
            LogFormat::Tsv => OutputFormat::Tsv,
            LogFormat::Sql => OutputFormat::Sql,
            LogFormat::Parquet => OutputFormat::Parquet,
            other => anyhow::bail!(
                "{}: {} logs are read, not written: name a .csv, .tsv or SQL:file.db!log output",
                name.display(),
                other.name()
            ),
        };
        match asked {
            Some(a) if a != format => anyhow::bail!(
                "{}: the name says {} but the format asked for is {}",
                name.display(),
                named.name(),
                a.name()
            ),
            _ => Ok(format),
        }
    }

    /// The name of the format, as `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Table => "table",
            OutputFormat::Csv => "CSV",
            OutputFormat::Tsv => "TSV",
            OutputFormat::Json => "JSON",
            OutputFormat::Sql => "SQL",
            OutputFormat::Parquet => "Parquet",
        }
    }

    /// The PDH text flavour of CSV and TSV output.
    pub fn csv_flavor(self) -> Option<perfcounters::log::CsvFlavor> {
        self.log_format()
            .and_then(perfcounters::log::LogFormat::csv_flavor)
    }

    /// The format named by the value of relog's and typeperf's `-f` (`CSV`, `TSV`, `SQL`, `BIN`,
    /// and `PARQUET`, which only relog writes: `parquet` says whether the command offers it; any
    /// case). The messages offer only what the command writes.
    pub fn from_windows(v: &str, parquet: bool) -> Result<Self, String> {
        let offered = if parquet {
            "CSV, TSV, SQL or PARQUET"
        } else {
            "CSV, TSV or SQL"
        };
        match v.to_ascii_lowercase().as_str() {
            "csv" => Ok(OutputFormat::Csv),
            "tsv" => Ok(OutputFormat::Tsv),
            "sql" => Ok(OutputFormat::Sql),
            "parquet" => Ok(OutputFormat::Parquet),
            "bin" => Err(format!(
                "output format {v} (.blg) is not supported; use {offered}"
            )),
            _ => Err(format!(
                "unknown output format \"{v}\": expected {offered} (BIN is not written)"
            )),
        }
    }
}

/// Output of `decode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DecodeFormat {
    /// A readable dump
    Text,
    /// JSON (schema in docs/decode-json.md): one document for a block file or a capture
    /// directory; for a binary log (.blg), read as it goes, JSON Lines: a header line, one line
    /// per sample and a closing line
    Json,
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
        assert_eq!(
            OutputFormat::from_windows("CSV", true),
            Ok(OutputFormat::Csv)
        );
        assert_eq!(
            OutputFormat::from_windows("tsv", true),
            Ok(OutputFormat::Tsv)
        );
        assert_eq!(
            OutputFormat::from_windows("Sql", true),
            Ok(OutputFormat::Sql)
        );
        assert_eq!(
            OutputFormat::from_windows("Parquet", true),
            Ok(OutputFormat::Parquet)
        );
        assert_eq!(
            OutputFormat::from_windows("bin", true).unwrap_err(),
            "output format bin (.blg) is not supported; use CSV, TSV, SQL or PARQUET"
        );
        // typeperf writes no Parquet: its messages do not offer it.
        assert_eq!(
            OutputFormat::from_windows("BIN", false).unwrap_err(),
            "output format BIN (.blg) is not supported; use CSV, TSV or SQL"
        );
        assert_eq!(
            OutputFormat::from_windows("xml", true).unwrap_err(),
            "unknown output format \"xml\": expected CSV, TSV, SQL or PARQUET (BIN is not written)"
        );
    }
}
