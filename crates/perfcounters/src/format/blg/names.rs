//! Name-table chunks (record kind 0x24): the writing machine's counter name table, stored by logs
//! of whole objects so that the title indexes of their V1 blocks can be named anywhere.
//!
//! Each chunk is the machine name (NUL-terminated UTF-16, `\\NAME`) followed by a part of the
//! `Counter` list in its REG_MULTI_SZ form (`index\0name\0…`); the first chunk starts with the
//! `"1"`, `"<last index>"` pair. Chunks hold whole pairs.

use super::read::{utf16_lossy, utf16_terminated};
use crate::format::structure;
use crate::format::{DecodeError, ErrorKind};
use crate::names::{parse_multi_sz, NameError, NameTable};

const S: &str = structure::PDH_NAME_TABLE;

/// One chunk of the embedded name table.
#[derive(Clone, Copy, Debug)]
pub struct NameChunk<'a> {
    machine: &'a [u8],
    table: &'a [u8],
    table_offset: usize,
}

impl<'a> NameChunk<'a> {
    /// Splits a name-table record into the machine name and the list. Offsets in errors are
    /// relative to `data`.
    pub fn parse(data: &'a [u8]) -> Result<NameChunk<'a>, DecodeError> {
        let machine = utf16_terminated(data)
            .ok_or_else(|| DecodeError::new(S, 0, ErrorKind::UnterminatedString))?;
        let table_offset = machine.len() + 2;
        Ok(NameChunk {
            machine,
            table: data.get(table_offset..).unwrap_or_default(),
            table_offset,
        })
    }

    /// The machine, as written (`\\NAME`).
    pub fn machine(&self) -> String {
        utf16_lossy(self.machine)
    }

    /// The REG_MULTI_SZ bytes of this chunk's part of the list.
    pub fn list_bytes(&self) -> &'a [u8] {
        self.table
    }

    /// The chunk's index → name pairs. Offsets in errors are relative to the record.
    pub fn table(&self) -> Result<NameTable, DecodeError> {
        parse_multi_sz(self.table).map_err(|e| {
            let (offset, kind) = match e {
                NameError::OddLength { offset } => (
                    offset,
                    ErrorKind::LengthNotMultiple {
                        length: self.table.len() as u64,
                        item: 2,
                    },
                ),
                NameError::BadIndex { offset, .. } => (
                    offset,
                    ErrorKind::NotANumber {
                        field: "the index string",
                    },
                ),
                // `parse_multi_sz` never reports the errors of the INI form.
                NameError::Ini(_) => (
                    0,
                    ErrorKind::NotANumber {
                        field: "the index string",
                    },
                ),
                // The list ends right after an index: its name is cut off.
                NameError::MissingText { offset, .. } => (
                    offset,
                    ErrorKind::Truncated {
                        needed: 2,
                        available: 0,
                    },
                ),
            };
            DecodeError::new(S, self.table_offset.saturating_add(offset), kind)
        })
    }
}
