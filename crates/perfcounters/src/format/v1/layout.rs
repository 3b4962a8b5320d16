//! The field offsets of each V1 structure (winperf.h, packed to 8 bytes; the same on 32- and 64-bit
//! Windows), declared once and used by both the decoder's views and the encoder. Offsets are from the
//! start of the structure.

/// `PERF_DATA_BLOCK`.
pub(crate) mod data_block {
    /// `WCHAR Signature[4]`: `"PERF"`.
    pub(crate) const SIGNATURE: usize = 0;
    /// The value of `Signature`: `"PERF"` in UTF-16.
    pub(crate) const PERF: [u16; 4] = [b'P' as u16, b'E' as u16, b'R' as u16, b'F' as u16];
    /// `DWORD LittleEndian`.
    pub(crate) const LITTLE_ENDIAN: usize = 8;
    /// `DWORD Version`.
    pub(crate) const VERSION: usize = 12;
    /// `DWORD Revision`.
    pub(crate) const REVISION: usize = 16;
    /// `DWORD TotalByteLength`.
    pub(crate) const TOTAL_BYTE_LENGTH: usize = 20;
    /// `DWORD HeaderLength`.
    pub(crate) const HEADER_LENGTH: usize = 24;
    /// `DWORD NumObjectTypes`.
    pub(crate) const NUM_OBJECT_TYPES: usize = 28;
    /// `LONG DefaultObject`.
    pub(crate) const DEFAULT_OBJECT: usize = 32;
    /// `SYSTEMTIME SystemTime` (8 × `WORD`).
    pub(crate) const SYSTEM_TIME: usize = 36;
    /// 4 bytes of padding before the `LARGE_INTEGER`s.
    pub(crate) const PADDING: usize = 52;
    /// `LARGE_INTEGER PerfTime`.
    pub(crate) const PERF_TIME: usize = 56;
    /// `LARGE_INTEGER PerfFreq`.
    pub(crate) const PERF_FREQ: usize = 64;
    /// `LARGE_INTEGER PerfTime100nSec`.
    pub(crate) const PERF_TIME_100NSEC: usize = 72;
    /// `DWORD SystemNameLength`.
    pub(crate) const SYSTEM_NAME_LENGTH: usize = 80;
    /// `DWORD SystemNameOffset`.
    pub(crate) const SYSTEM_NAME_OFFSET: usize = 84;
    /// Size of the structure.
    pub(crate) const LEN: usize = 88;
}

/// `PERF_OBJECT_TYPE`.
pub(crate) mod object_type {
    /// `DWORD TotalByteLength`.
    pub(crate) const TOTAL_BYTE_LENGTH: usize = 0;
    /// `DWORD DefinitionLength`.
    pub(crate) const DEFINITION_LENGTH: usize = 4;
    /// `DWORD HeaderLength`.
    pub(crate) const HEADER_LENGTH: usize = 8;
    /// `DWORD ObjectNameTitleIndex`.
    pub(crate) const OBJECT_NAME_TITLE_INDEX: usize = 12;
    /// `DWORD ObjectNameTitle` (a pointer field on 32-bit Windows; 0 in data).
    pub(crate) const OBJECT_NAME_TITLE: usize = 16;
    /// `DWORD ObjectHelpTitleIndex`.
    pub(crate) const OBJECT_HELP_TITLE_INDEX: usize = 20;
    /// `DWORD ObjectHelpTitle` (0 in data).
    pub(crate) const OBJECT_HELP_TITLE: usize = 24;
    /// `DWORD DetailLevel`.
    pub(crate) const DETAIL_LEVEL: usize = 28;
    /// `DWORD NumCounters`.
    pub(crate) const NUM_COUNTERS: usize = 32;
    /// `LONG DefaultCounter`.
    pub(crate) const DEFAULT_COUNTER: usize = 36;
    /// `LONG NumInstances`.
    pub(crate) const NUM_INSTANCES: usize = 40;
    /// `DWORD CodePage`.
    pub(crate) const CODE_PAGE: usize = 44;
    /// `LARGE_INTEGER PerfTime`.
    pub(crate) const PERF_TIME: usize = 48;
    /// `LARGE_INTEGER PerfFreq`.
    pub(crate) const PERF_FREQ: usize = 56;
    /// Size of the structure.
    pub(crate) const LEN: usize = 64;
}

/// `PERF_COUNTER_DEFINITION`.
pub(crate) mod counter_definition {
    /// `DWORD ByteLength`.
    pub(crate) const BYTE_LENGTH: usize = 0;
    /// `DWORD CounterNameTitleIndex`.
    pub(crate) const COUNTER_NAME_TITLE_INDEX: usize = 4;
    /// `DWORD CounterNameTitle` (0 in data).
    pub(crate) const COUNTER_NAME_TITLE: usize = 8;
    /// `DWORD CounterHelpTitleIndex`.
    pub(crate) const COUNTER_HELP_TITLE_INDEX: usize = 12;
    /// `DWORD CounterHelpTitle` (0 in data).
    pub(crate) const COUNTER_HELP_TITLE: usize = 16;
    /// `LONG DefaultScale`.
    pub(crate) const DEFAULT_SCALE: usize = 20;
    /// `DWORD DetailLevel`.
    pub(crate) const DETAIL_LEVEL: usize = 24;
    /// `DWORD CounterType`.
    pub(crate) const COUNTER_TYPE: usize = 28;
    /// `DWORD CounterSize`.
    pub(crate) const COUNTER_SIZE: usize = 32;
    /// `DWORD CounterOffset`.
    pub(crate) const COUNTER_OFFSET: usize = 36;
    /// Size of the structure.
    pub(crate) const LEN: usize = 40;
}

/// `PERF_INSTANCE_DEFINITION`.
pub(crate) mod instance_definition {
    /// `DWORD ByteLength`.
    pub(crate) const BYTE_LENGTH: usize = 0;
    /// `DWORD ParentObjectTitleIndex`.
    pub(crate) const PARENT_OBJECT_TITLE_INDEX: usize = 4;
    /// `DWORD ParentObjectInstance`.
    pub(crate) const PARENT_OBJECT_INSTANCE: usize = 8;
    /// `LONG UniqueID`.
    pub(crate) const UNIQUE_ID: usize = 12;
    /// `DWORD NameOffset`.
    pub(crate) const NAME_OFFSET: usize = 16;
    /// `DWORD NameLength`.
    pub(crate) const NAME_LENGTH: usize = 20;
    /// Size of the structure.
    pub(crate) const LEN: usize = 24;
}

/// `PERF_COUNTER_BLOCK`.
pub(crate) mod counter_block {
    /// `DWORD ByteLength`.
    pub(crate) const BYTE_LENGTH: usize = 0;
    /// Size of the structure (its `ByteLength` field).
    pub(crate) const LEN: usize = 4;
}
