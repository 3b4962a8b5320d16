//! GUIDs as stored in V2 structures.

use std::fmt;
use std::str::FromStr;

/// A GUID (Windows `GUID`): `Data1` u32, `Data2` u16, `Data3` u16, `Data4` 8 bytes. In memory the
/// first three fields are little-endian, so the 16 stored bytes are not the text order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Guid {
    /// `Data1`.
    pub data1: u32,
    /// `Data2`.
    pub data2: u16,
    /// `Data3`.
    pub data3: u16,
    /// `Data4`.
    pub data4: [u8; 8],
}

/// A string that is not a GUID in `{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}` form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseGuidError;

impl fmt::Display for ParseGuidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a GUID of the form {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}")
    }
}

impl std::error::Error for ParseGuidError {}

impl Guid {
    /// Size of a stored GUID.
    pub const SIZE: usize = 16;

    /// A GUID from its fields.
    pub const fn new(data1: u32, data2: u16, data3: u16, data4: [u8; 8]) -> Self {
        Guid {
            data1,
            data2,
            data3,
            data4,
        }
    }

    /// Decodes the 16 stored bytes.
    pub fn from_bytes(b: [u8; 16]) -> Self {
        Guid {
            data1: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            data2: u16::from_le_bytes([b[4], b[5]]),
            data3: u16::from_le_bytes([b[6], b[7]]),
            data4: [b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]],
        }
    }

    /// Decodes a GUID from the first 16 bytes of a slice; `None` if it is shorter.
    pub fn from_slice(b: &[u8]) -> Option<Self> {
        let a: [u8; 16] = b.get(..16)?.try_into().ok()?;
        Some(Guid::from_bytes(a))
    }

    /// The 16 stored bytes.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..4].copy_from_slice(&self.data1.to_le_bytes());
        out[4..6].copy_from_slice(&self.data2.to_le_bytes());
        out[6..8].copy_from_slice(&self.data3.to_le_bytes());
        out[8..].copy_from_slice(&self.data4);
        out
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.data4;
        write!(
            f,
            "{{{:08x}-{:04x}-{:04x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}}}",
            self.data1, self.data2, self.data3, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]
        )
    }
}

impl fmt::Debug for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Guid {
    type Err = ParseGuidError;

    /// Parses `{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}` (hex digits in either case); the braces are
    /// optional.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let inner = match s.strip_prefix('{') {
            Some(rest) => rest.strip_suffix('}').ok_or(ParseGuidError)?,
            None => s,
        };
        let b = inner.as_bytes();
        if b.len() != 36 {
            return Err(ParseGuidError);
        }
        for (i, &c) in b.iter().enumerate() {
            let dash = matches!(i, 8 | 13 | 18 | 23);
            if dash != (c == b'-') || (!dash && !c.is_ascii_hexdigit()) {
                return Err(ParseGuidError);
            }
        }
        let hex = |range: std::ops::Range<usize>| -> Result<u64, ParseGuidError> {
            let part = inner.get(range).ok_or(ParseGuidError)?;
            u64::from_str_radix(part, 16).map_err(|_| ParseGuidError)
        };
        let data1 = hex(0..8)? as u32;
        let data2 = hex(9..13)? as u16;
        let data3 = hex(14..18)? as u16;
        let mut data4 = [0u8; 8];
        data4[0] = hex(19..21)? as u8;
        data4[1] = hex(21..23)? as u8;
        for (k, slot) in data4.iter_mut().enumerate().skip(2) {
            let at = 24 + (k - 2) * 2;
            *slot = hex(at..at + 2)? as u8;
        }
        Ok(Guid {
            data1,
            data2,
            data3,
            data4,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "Processor Information" counterset of Microsoft's PerfLib consumer sample:
    /// `{ 0xb4fc721a, 0x378, 0x476f, 0x89, 0xba, 0xa5, 0xa7, 0x9f, 0x81, 0xb, 0x36 }`.
    const PROCESSOR_INFORMATION: Guid = Guid::new(
        0xb4fc721a,
        0x0378,
        0x476f,
        [0x89, 0xba, 0xa5, 0xa7, 0x9f, 0x81, 0x0b, 0x36],
    );

    #[test]
    fn displays_and_parses_canonical_form() {
        let text = "{b4fc721a-0378-476f-89ba-a5a79f810b36}";
        assert_eq!(PROCESSOR_INFORMATION.to_string(), text);
        assert_eq!(text.parse::<Guid>(), Ok(PROCESSOR_INFORMATION));
        assert_eq!(
            "B4FC721A-0378-476F-89BA-A5A79F810B36".parse::<Guid>(),
            Ok(PROCESSOR_INFORMATION)
        );
        for bad in [
            "",
            "{}",
            "{b4fc721a-0378-476f-89ba-a5a79f810b3}",
            "{b4fc721a-0378-476f-89ba-a5a79f810b366}",
            "{b4fc721a+0378-476f-89ba-a5a79f810b36}",
            "{b4fc721a-0378-476f-89ba-a5a79f810b3g}",
            "{b4fc721a-0378-476f-89ba-a5a79f810b36",
            "{+4fc721a-0378-476f-89ba-a5a79f810b36}",
        ] {
            assert_eq!(bad.parse::<Guid>(), Err(ParseGuidError), "{bad}");
        }
    }

    #[test]
    fn byte_order_is_mixed_endian() {
        let bytes = PROCESSOR_INFORMATION.to_bytes();
        assert_eq!(
            bytes,
            [
                0x1a, 0x72, 0xfc, 0xb4, 0x78, 0x03, 0x6f, 0x47, 0x89, 0xba, 0xa5, 0xa7, 0x9f, 0x81,
                0x0b, 0x36
            ]
        );
        assert_eq!(Guid::from_bytes(bytes), PROCESSOR_INFORMATION);
        assert_eq!(Guid::from_slice(&bytes[..15]), None);
    }
}
