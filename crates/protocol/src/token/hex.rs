//! Bytes as lowercase hex: how keys and tokens travel in fairloom's JSON.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not hex: {0}")]
pub struct HexError(String);

pub fn to_hex(bytes: &[u8]) -> String {
    // Every allocated container carries a token: no formatter per byte.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

pub fn from_hex(text: &str) -> Result<Vec<u8>, HexError> {
    // from_str_radix alone would take "+1".
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(HexError("an odd number of digits, or not a hex digit".to_string()));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|e| HexError(format!("'{}': {e}", &text[i..i + 2]))))
        .collect()
}

/// `#[serde(with = ...)]` for byte fields written as hex strings.
pub mod serde_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::to_hex(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        super::from_hex(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        assert_eq!(to_hex(&[0, 1, 254, 255]), "0001feff");
        assert_eq!(from_hex("0001feff").unwrap(), vec![0, 1, 254, 255]);
        assert_eq!(from_hex("").unwrap(), Vec::<u8>::new());
        for bad in ["abc", "zz", "é0", "+1"] {
            assert!(from_hex(bad).is_err(), "{bad}");
        }
    }
}
