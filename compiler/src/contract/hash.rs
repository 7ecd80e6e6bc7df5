//! TPF's contract hash and the fingerprints computed the same way.
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
        // Almost no text holds these two characters: skip the per-character scan then.
        if !fragment.contains(['\u{2028}', '\u{2029}']) {
            return writer.write_all(fragment.as_bytes());
        }
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

/// Feeds serialised bytes straight into the digest, so a large contract is hashed without
/// building its compact text (or a copy of the document) in memory first.
struct DigestWriter(Sha256);

impl io::Write for DigestWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn digest_of<T: Serialize>(value: &T) -> String {
    // The serializer writes many tiny pieces; batching them keeps the digest's per-call cost low.
    let mut w = io::BufWriter::with_capacity(16 * 1024, DigestWriter(Sha256::new()));
    let mut ser = serde_json::Serializer::with_formatter(&mut w, GsonFormatter);
    // Serialising JSON values into a digest cannot fail: keys are strings, numbers finite.
    let _ = value.serialize(&mut ser);
    match w.into_inner() {
        Ok(d) => hex::encode(d.0.finalize()),
        Err(_) => String::new(),
    }
}

/// Bare hex sha256 of the Gson-compact JSON of `value` (catalogue and definition fingerprints).
pub fn fingerprint(value: &Value) -> String {
    digest_of(value)
}

/// The document minus the two keys the hash does not cover, in document order.
struct WithoutHashKeys<'a>(&'a Map<String, Value>);

impl Serialize for WithoutHashKeys<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.0 {
            if k != "contractVersion" && k != "contractHash" {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

/// `contractHash` of a contract document: drop `contractVersion` and `contractHash`, keep the
/// remaining keys in document order, hash the compact JSON.
pub fn contract_hash(document: &Map<String, Value>) -> String {
    digest_of(&WithoutHashKeys(document))
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
