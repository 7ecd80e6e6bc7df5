//! TPF's contract hash (tpf-domain §1.6) and the fingerprints computed the same way.
//!
//! TPF serialises with Gson (`disableHtmlEscaping`, compact, nulls omitted) in document key
//! order. serde_json's compact output already matches Gson byte for byte except for two code
//! points Gson always escapes, U+2028 and U+2029, so a small [`Formatter`] adds those.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Compact serialiser that escapes U+2028/U+2029 like Gson's `JsonWriter`; every other method
/// keeps `Formatter`'s compact defaults, which already are Gson's.
#[derive(Debug, Clone, Copy, Default)]
pub struct GsonFormatter;

impl Formatter for GsonFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let escape = match c {
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(fragment.get(start..i).unwrap_or_default().as_bytes())?;
            writer.write_all(escape.as_bytes())?;
            start = i + c.len_utf8();
        }
        writer.write_all(fragment.get(start..).unwrap_or_default().as_bytes())
    }
}

/// Gson-compatible compact JSON of `value`.
pub fn gson_compact(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GsonFormatter);
    // Writing a `Value` into a Vec cannot fail: keys are strings and numbers are finite.
    if value.serialize(&mut ser).is_err() {
        out.clear();
    }
    out
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Bare hex sha256 of the Gson-compact JSON of `value` (catalogue and definition fingerprints).
pub fn fingerprint(value: &Value) -> String {
    sha256_hex(&gson_compact(value))
}

/// `contractHash` of a contract document: drop `contractVersion` and `contractHash`, keep the
/// remaining keys in document order, hash the compact JSON.
pub fn contract_hash(document: &Map<String, Value>) -> String {
    let without: Map<String, Value> = document
        .iter()
        .filter(|(k, _)| k.as_str() != "contractVersion" && k.as_str() != "contractHash")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    fingerprint(&Value::Object(without))
}

/// The `contractVersion` TPF derives from a hash.
pub fn contract_version(hash: &str) -> String {
    format!("sha256:{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compact(v: &Value) -> String {
        String::from_utf8(gson_compact(v)).unwrap_or_default()
    }

    #[test]
    fn escapes_like_gson_without_html_escaping() {
        let v = json!({"a": "<b>&'=\u{e9}\u{4e2d}\u{1f600}", "c": "\u{2028}x\u{2029}", "d": "\u{1}\t\n\"\\\u{7f}"});
        assert_eq!(
            compact(&v),
            "{\"a\":\"<b>&'=\u{e9}\u{4e2d}\u{1f600}\",\"c\":\"\\u2028x\\u2029\",\"d\":\"\\u0001\\t\\n\\\"\\\\\u{7f}\"}"
        );
    }

    #[test]
    fn empty_catalogue_fingerprint_matches_tpf() {
        assert_eq!(
            fingerprint(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn keeps_document_key_order() {
        let v: Value = serde_json::from_str(r#"{"z":1,"a":[true,null,1.5]}"#).unwrap_or_default();
        assert_eq!(compact(&v), r#"{"z":1,"a":[true,null,1.5]}"#);
    }
}
