//! The errors of every binary format of the crate: [`DecodeError`] for malformed input and
//! [`EncodeError`] for models that cannot be written.
//!
//! A decode error always names the structure (as the Windows headers spell it), the absolute byte
//! offset of that structure in the buffer handed to the decoder, and a typed [`ErrorKind`]; it displays
//! as `"{structure} at offset {offset}: {kind}"`. The kinds are generic (a size field too small, a
//! range past its parent, a bad signature, an unsupported version, a count that cannot fit…), so a new
//! binary format reports its errors with the same type instead of defining its own.

use std::fmt;

/// A malformed structure: which structure, where it starts (absolute byte offset from the start of
/// the buffer given to the decoder), and why it was rejected.
///
/// The error is one pointer wide (its parts are boxed), so `Result`s of the decoders' hot paths stay
/// small; it is only allocated when decoding fails.
///
/// ```
/// use perfcounters::format::{DecodeError, ErrorKind};
/// use perfcounters::format::v1::PerfDataBlock;
///
/// let err: DecodeError = PerfDataBlock::parse(&[0u8; 10]).unwrap_err();
/// assert_eq!(err.structure(), "PERF_DATA_BLOCK");
/// assert_eq!(err.offset(), 0);
/// assert_eq!(err.kind(), &ErrorKind::BufferTooShort { length: 10, header: 88 });
/// assert_eq!(
///     err.to_string(),
///     "PERF_DATA_BLOCK at offset 0: buffer of 10 bytes is shorter than the 88-byte header"
/// );
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct DecodeError(Box<Parts>);

#[derive(Clone, PartialEq, Eq, Hash)]
struct Parts {
    structure: &'static str,
    offset: usize,
    kind: ErrorKind,
}

impl DecodeError {
    /// A new error for `structure` (its Windows name, e.g. `"PERF_COUNTER_DATA"`) starting at byte
    /// `offset` of the buffer.
    #[cold]
    pub fn new(structure: &'static str, offset: usize, kind: ErrorKind) -> Self {
        DecodeError(Box::new(Parts {
            structure,
            offset,
            kind,
        }))
    }

    /// The name of the structure being read, as the Windows headers spell it.
    pub fn structure(&self) -> &'static str {
        self.0.structure
    }

    /// The absolute byte offset of that structure in the buffer given to the decoder.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// Why the structure was rejected.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeError")
            .field("structure", &self.0.structure)
            .field("offset", &self.0.offset)
            .field("kind", &self.0.kind)
            .finish()
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at offset {}: {}",
            self.0.structure, self.0.offset, self.0.kind
        )
    }
}

impl std::error::Error for DecodeError {}

/// What a size, offset or length was checked against; part of an [`ErrorKind`] and of its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Bound {
    /// The whole buffer given to the decoder: "the buffer's 240 bytes".
    Buffer {
        /// The buffer's length.
        length: u64,
    },
    /// The bytes an enclosing structure leaves from this structure's start on: "the 152 bytes left in
    /// the block".
    Left {
        /// The bytes left.
        length: u64,
        /// The enclosing structure, in words ("block", "object").
        parent: &'static str,
    },
    /// A length field: "the TotalByteLength 248", or with an owner "the object's DefinitionLength 104".
    Field {
        /// The structure that holds the field, in words, when it is not the failing one.
        owner: Option<&'static str>,
        /// The field's name.
        field: &'static str,
        /// The field's value.
        value: u64,
    },
    /// The fixed size of a part of the structure: "the 88-byte header".
    Fixed {
        /// The size in bytes.
        size: u64,
        /// The part, in words ("header", "definition").
        part: &'static str,
    },
    /// The size of the length field itself: "its own 4-byte field".
    OwnField {
        /// The size of the field in bytes.
        size: u64,
    },
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Bound::Buffer { length } => write!(f, "the buffer's {length} bytes"),
            Bound::Left { length, parent } => write!(f, "the {length} bytes left in the {parent}"),
            Bound::Field {
                owner: Some(owner),
                field,
                value,
            } => write!(f, "the {owner}'s {field} {value}"),
            Bound::Field {
                owner: None,
                field,
                value,
            } => write!(f, "the {field} {value}"),
            Bound::Fixed { size, part } => write!(f, "the {size}-byte {part}"),
            Bound::OwnField { size } => write!(f, "its own {size}-byte field"),
        }
    }
}

/// Why a structure could not be decoded.
///
/// The first group of kinds describes sizes and offsets in general terms (they need no field
/// name); the second names the field that holds the offending value, so the message can say
/// `"NameOffset 4000 + NameLength 20 exceeds the instance's ByteLength 32"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The structure needs `needed` bytes but only `available` remain in the enclosing block or buffer.
    Truncated {
        /// Bytes the structure needs.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A size field is smaller than the structure it describes.
    SizeTooSmall {
        /// The size found.
        size: u64,
        /// The smallest valid size.
        minimum: u64,
    },
    /// A size field that must be a multiple of 8 is not.
    SizeNotAligned {
        /// The size found.
        size: u64,
    },
    /// A size field is larger than what the enclosing structure (or buffer) leaves.
    SizeExceedsParent {
        /// The size found.
        size: u64,
        /// Bytes the parent leaves.
        available: u64,
    },
    /// A count does not fit in the bytes its structure declares (or that remain).
    CountTooLarge {
        /// The count found.
        count: u64,
        /// How many items fit.
        fits: u64,
    },
    /// `PERF_COUNTER_DATA.dwDataSize` does not fit in its `dwSize`.
    DataSizeTooLarge {
        /// `dwDataSize`.
        data_size: u32,
        /// `dwSize`.
        size: u32,
    },
    /// An enumeration value that is not defined (e.g. `PERF_COUNTER_HEADER.dwType`).
    UnknownType {
        /// The value found.
        value: u32,
    },
    /// A UTF-16 string has no NUL terminator within its bounds.
    UnterminatedString,
    /// A string offset points outside the string area.
    OffsetOutOfRange {
        /// The offset found.
        offset: u32,
    },
    /// A buffer length is not a whole number of fixed-size items.
    LengthNotMultiple {
        /// The length found.
        length: u64,
        /// The item size.
        item: u64,
    },
    /// The buffer is shorter than the fixed header that starts it.
    BufferTooShort {
        /// The buffer's length.
        length: u64,
        /// The header's size.
        header: u64,
    },
    /// A fixed-size part of the structure does not fit in what bounds it.
    PartExceeds {
        /// The part's size in bytes.
        size: u64,
        /// The part, in words ("header", "definition", "ByteLength").
        part: &'static str,
        /// What it must fit in.
        limit: Bound,
    },
    /// A signature (magic value) is not the one the format requires.
    BadSignature {
        /// The field's name, e.g. `"Signature"`.
        field: &'static str,
        /// The bytes found.
        found: Box<[u8]>,
        /// What was expected, in words (e.g. `"\"PERF\" in UTF-16 (little-endian)"`).
        expected: &'static str,
    },
    /// A field's value is below its minimum.
    FieldTooSmall {
        /// The field's name, e.g. `"TotalByteLength"`.
        field: &'static str,
        /// The value found.
        value: u64,
        /// The minimum.
        minimum: Bound,
    },
    /// A field's value (a length or an offset) goes past what bounds it.
    FieldExceeds {
        /// The field's name.
        field: &'static str,
        /// The value found.
        value: u64,
        /// The limit.
        limit: Bound,
    },
    /// An offset field plus a length field goes past what bounds them.
    RangeExceeds {
        /// The offset field's name, e.g. `"NameOffset"`.
        offset_field: &'static str,
        /// The offset found.
        offset: u64,
        /// The length field's name, e.g. `"NameLength"`.
        length_field: &'static str,
        /// The length found.
        length: u64,
        /// The limit.
        limit: Bound,
    },
    /// An offset field points into the fixed part of its structure.
    OffsetInHeader {
        /// The offset field's name, e.g. `"NameOffset"`.
        field: &'static str,
        /// The offset found.
        offset: u64,
        /// The fixed part it must not point into.
        header: Bound,
    },
    /// A counter value (`CounterOffset`, `CounterSize`) lies outside its counter block.
    CounterOutOfBlock {
        /// The value's offset in the block.
        offset: u64,
        /// The value's size.
        size: u64,
        /// The block's length.
        limit: Bound,
    },
    /// A count of fixed-size items does not fit between two offsets of the structure.
    ItemsDoNotFit {
        /// The count field's name, e.g. `"NumCounters"`.
        field: &'static str,
        /// The count found.
        count: u64,
        /// The items, in words ("definitions").
        items: &'static str,
        /// Each item's size.
        item_size: u64,
        /// The field where the items start.
        start_field: &'static str,
        /// Its value.
        start: u64,
        /// The field where the items must end.
        end_field: &'static str,
        /// Its value.
        end: u64,
    },
    /// A field holds a value that is not valid for it.
    InvalidValue {
        /// The field's name.
        field: &'static str,
        /// The value found.
        value: i64,
        /// What a valid value is, as a predicate ("neither a count nor one of …", "not a known type").
        rule: &'static str,
    },
    /// A field holds a value the decoder does not support (a version, a code page).
    Unsupported {
        /// The field's name, e.g. `"Version"`.
        field: &'static str,
        /// The value found.
        value: u64,
        /// The structure that holds the field, in words, when it is not the failing one.
        owner: Option<&'static str>,
    },
    /// A part the structure must contain has no room left.
    NoRoomFor {
        /// The structure, in words ("single-instance object").
        what: &'static str,
        /// The part that is missing, e.g. `"PERF_COUNTER_BLOCK"`.
        part: &'static str,
        /// The field where the structure ends.
        end_field: &'static str,
        /// Its value.
        end: u64,
        /// The field where the part would start.
        start_field: &'static str,
        /// Its value.
        start: u64,
    },
    /// A part of a record split over several events (fragments) does not continue the record being
    /// assembled: a fragment out of order, a changing fragment count, or a later fragment with no
    /// first one.
    FragmentOutOfOrder {
        /// The fragment's index (1-based).
        index: u32,
        /// The fragment count it declares.
        count: u32,
        /// The index that was expected.
        expected_index: u32,
        /// The fragment count of the record being assembled (0 when none is).
        expected_count: u32,
    },
    /// The input ends before every fragment of a record arrived.
    MissingFragments {
        /// Fragments received.
        received: u32,
        /// Fragments declared.
        count: u32,
    },
    /// A field that must hold a decimal number (a name-table index) does not.
    NotANumber {
        /// The field, in words.
        field: &'static str,
    },
    /// The bytes are text, not the binary structure expected
    /// ([`text_kind`](crate::format::blg::text_kind)).
    Text {
        /// What the text looks like, in words ("PDH-CSV without its header line").
        looks_like: &'static str,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Truncated { needed, available } => {
                write!(f, "truncated: needs {needed} bytes, {available} available")
            }
            ErrorKind::SizeTooSmall { size, minimum } => {
                write!(f, "size {size} is smaller than the minimum {minimum}")
            }
            ErrorKind::SizeNotAligned { size } => write!(f, "size {size} is not a multiple of 8"),
            ErrorKind::SizeExceedsParent { size, available } => write!(
                f,
                "size {size} exceeds the {available} bytes left by the enclosing structure"
            ),
            ErrorKind::CountTooLarge { count, fits } => {
                write!(f, "count {count} exceeds the {fits} items that fit")
            }
            ErrorKind::DataSizeTooLarge { data_size, size } => {
                write!(f, "data size {data_size} does not fit in block size {size}")
            }
            ErrorKind::UnknownType { value } => write!(f, "unknown type value {value}"),
            ErrorKind::UnterminatedString => write!(f, "string is not NUL-terminated"),
            ErrorKind::OffsetOutOfRange { offset } => {
                write!(f, "string offset {offset} is outside the string area")
            }
            ErrorKind::LengthNotMultiple { length, item } => {
                write!(f, "length {length} is not a multiple of {item}")
            }
            ErrorKind::BufferTooShort { length, header } => write!(
                f,
                "buffer of {length} bytes is shorter than the {header}-byte header"
            ),
            ErrorKind::PartExceeds { size, part, limit } => {
                write!(f, "the {size}-byte {part} exceeds {limit}")
            }
            ErrorKind::BadSignature {
                field,
                found,
                expected,
            } => write!(f, "{field} {found:02x?} is not {expected}"),
            ErrorKind::FieldTooSmall {
                field,
                value,
                minimum,
            } => write!(f, "{field} {value} is smaller than {minimum}"),
            ErrorKind::FieldExceeds {
                field,
                value,
                limit,
            } => write!(f, "{field} {value} exceeds {limit}"),
            ErrorKind::RangeExceeds {
                offset_field,
                offset,
                length_field,
                length,
                limit,
            } => write!(
                f,
                "{offset_field} {offset} + {length_field} {length} exceeds {limit}"
            ),
            ErrorKind::OffsetInHeader {
                field,
                offset,
                header,
            } => write!(f, "{field} {offset} points into {header}"),
            ErrorKind::CounterOutOfBlock {
                offset,
                size,
                limit,
            } => write!(
                f,
                "counter at offset {offset} with size {size} exceeds {limit}"
            ),
            ErrorKind::ItemsDoNotFit {
                field,
                count,
                items,
                item_size,
                start_field,
                start,
                end_field,
                end,
            } => write!(
                f,
                "{field} {count} {items} of {item_size} bytes do not fit between {start_field} {start} and {end_field} {end}"
            ),
            ErrorKind::InvalidValue { field, value, rule } => {
                write!(f, "{field} {value} is {rule}")
            }
            ErrorKind::Unsupported {
                field,
                value,
                owner: Some(owner),
            } => write!(f, "{field} {value} of the {owner} is not supported"),
            ErrorKind::Unsupported {
                field,
                value,
                owner: None,
            } => write!(f, "{field} {value} is not supported"),
            ErrorKind::NoRoomFor {
                what,
                part,
                end_field,
                end,
                start_field,
                start,
            } => write!(
                f,
                "{what} has no room for its {part}: {end_field} {end} is not greater than {start_field} {start}"
            ),
            ErrorKind::FragmentOutOfOrder {
                index,
                count,
                expected_index,
                expected_count: 0,
            } => write!(
                f,
                "fragment {index} of {count} does not start a record (fragment {expected_index} expected)"
            ),
            ErrorKind::FragmentOutOfOrder {
                index,
                count,
                expected_index,
                expected_count,
            } => write!(
                f,
                "fragment {index} of {count} where fragment {expected_index} of {expected_count} was expected"
            ),
            ErrorKind::MissingFragments { received, count } => write!(
                f,
                "the input ends after fragment {received} of {count} of a record"
            ),
            ErrorKind::NotANumber { field } => write!(f, "{field} is not a decimal number"),
            ErrorKind::Text { looks_like } => {
                write!(f, "this is text, not a binary log; it looks like {looks_like}")
            }
        }
    }
}

/// Why a model could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EncodeError {
    /// A size or count does not fit in the structure's 32-bit field.
    TooLarge {
        /// The structure being written.
        structure: &'static str,
    },
    /// A string contains a NUL character, which would end it early.
    InteriorNul {
        /// The structure being written.
        structure: &'static str,
    },
    /// The number of values does not match the number of counters.
    ValueCount {
        /// The structure being written.
        structure: &'static str,
        /// Values required.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// A value does not have the size its counter definition declares.
    ValueSize {
        /// The value list (0 for a single-instance object, else the instance's position).
        list: usize,
        /// The counter's position in the definitions.
        counter: usize,
        /// The value's size in bytes.
        found: u64,
        /// The definition's `size`.
        expected: u64,
    },
    /// The code page has no encoder.
    CodePage {
        /// The code page.
        code_page: u32,
    },
    /// A name has characters the code page cannot represent.
    Unrepresentable {
        /// The structure being written.
        structure: &'static str,
        /// The code page.
        code_page: u32,
    },
    /// An error inside one item of a list (an object, an instance), naming the item.
    At {
        /// The kind of item, in words ("object", "instance").
        item: &'static str,
        /// Its position in its list.
        index: usize,
        /// The error.
        error: Box<EncodeError>,
    },
}

impl EncodeError {
    /// This error, located in item `index` of a list of `item`s.
    pub fn at(self, item: &'static str, index: usize) -> Self {
        EncodeError::At {
            item,
            index,
            error: Box::new(self),
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::TooLarge { structure } => {
                write!(f, "{structure}: size does not fit in 32 bits")
            }
            EncodeError::InteriorNul { structure } => {
                write!(f, "{structure}: string contains a NUL character")
            }
            EncodeError::ValueCount {
                structure,
                expected,
                found,
            } => write!(f, "{structure}: {found} values given, {expected} expected"),
            EncodeError::ValueSize {
                list,
                counter,
                found,
                expected,
            } => write!(
                f,
                "value list {list}, counter {counter}: the value has {found} bytes but the definition's size is {expected}"
            ),
            EncodeError::CodePage { code_page } => {
                write!(f, "CodePage {code_page} cannot be encoded")
            }
            EncodeError::Unrepresentable {
                structure,
                code_page,
            } => write!(
                f,
                "{structure}: name cannot be represented in CodePage {code_page}"
            ),
            EncodeError::At { item, index, error } => write!(f, "{item} {index}: {error}"),
        }
    }
}

impl std::error::Error for EncodeError {}
