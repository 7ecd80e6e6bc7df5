//! TPF's contract hash and the fingerprints computed the same way.
//!
//! TPF serialises with Gson (`disableHtmlEscaping`, compact, nulls omitted) in document key
//! order and hashes that text. serde_json's compact output matches Gson's for strings except for
//! two code points Gson always escapes, U+2028 and U+2029, so a small [`Formatter`] adds those.
//! Numbers are another matter: Gson writes a decimal constraint as
//! `BigDecimal.stripTrailingZeros()` text (`1E+2`, `1.2345E+6`, `1E-7`) and hashes it verbatim,
//! while serde_json re-prints a parsed `1E+2` as `100.0`. So a contract file is hashed from its
//! own text ([`GsonText`]): whitespace dropped, strings re-encoded the Gson way, every number
//! kept exactly as written. (serde_json keeps number text only with its `arbitrary_precision`
//! feature, which the workspace cannot enable: it breaks `#[serde(flatten)]`, which the ASL model
//! uses throughout.) `mapping-tests/fixtures/tpf-vectors/contract-hash/` holds contracts written
//! by TPF's generator with the hashes TPF computed.

use std::io;
use std::ops::Range;

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

/// A JSON document re-emitted in Gson's compact form with every number's original text, plus
/// where its object members landed: what TPF hashed, recovered from the file TPF wrote.
#[derive(Debug, Clone, Default)]
pub struct GsonText {
    out: Vec<u8>,
    /// Top-level members in document order: key and the span of `"key":value`.
    members: Vec<(String, Range<usize>)>,
    /// Spans of object member values below the top level (not inside arrays), by key path, up to
    /// three keys deep: `canonicalTypes.<name>.definition` and its parents.
    nested: Vec<(Vec<String>, Range<usize>)>,
}

/// Object-member paths recorded below the top level.
const NESTED_DEPTH: usize = 3;

impl GsonText {
    /// Re-emits `bytes`; `None` if they are not one JSON value (the loader has parsed them with
    /// serde_json first, so this only guards against misuse).
    pub fn parse(bytes: &[u8]) -> Option<GsonText> {
        let mut p = Scanner {
            src: bytes,
            pos: 0,
            text: GsonText::default(),
            path: Vec::new(),
        };
        p.skip_ws();
        p.value(0)?;
        p.skip_ws();
        (p.pos == bytes.len()).then_some(p.text)
    }

    /// The compact text of the whole document.
    pub fn as_bytes(&self) -> &[u8] {
        &self.out
    }

    /// The compact text of the value at `path` (object keys from the top), if recorded.
    pub fn value(&self, path: &[&str]) -> Option<&[u8]> {
        if let [key] = path {
            let (_, span) = self.members.iter().find(|(k, _)| k == key)?;
            // The member span starts with the key and its colon.
            let key_len = serde_json::to_vec(key).ok()?.len() + 1;
            return self.out.get(span.start + key_len..span.end);
        }
        self.nested
            .iter()
            .find(|(p, _)| p.iter().map(String::as_str).eq(path.iter().copied()))
            .and_then(|(_, span)| self.out.get(span.clone()))
    }

    /// The text TPF hashes into `contractHash`: the top-level object without
    /// `contractVersion` and `contractHash`, the remaining members in document order.
    pub fn hash_input(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.out.len());
        out.push(b'{');
        for (i, span) in self.hashed_members().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(self.out.get(span).unwrap_or_default());
        }
        out.push(b'}');
        out
    }

    /// `contractHash`: lowercase hex sha256 of [`Self::hash_input`], streamed from the
    /// member spans rather than copied.
    pub fn contract_hash(&self) -> String {
        let mut digest = Sha256::new();
        digest.update(b"{");
        for (i, span) in self.hashed_members().enumerate() {
            if i > 0 {
                digest.update(b",");
            }
            digest.update(self.out.get(span).unwrap_or_default());
        }
        digest.update(b"}");
        hex::encode(digest.finalize())
    }

    fn hashed_members(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.members
            .iter()
            .filter(|(k, _)| k != "contractVersion" && k != "contractHash")
            .map(|(_, span)| span.clone())
    }
}

/// The re-emitter: one pass over the source, writing the compact text as it goes.
struct Scanner<'a> {
    src: &'a [u8],
    pos: usize,
    text: GsonText,
    /// Keys from the top to the current value; `None` once inside an array.
    path: Vec<Option<String>>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn emit(&mut self, bytes: &[u8]) {
        self.text.out.extend_from_slice(bytes);
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        // serde_json, which read the document first, refuses more than 128 levels.
        if depth > 256 {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string(false).map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number(),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.pos + word.len();
        (self.src.get(self.pos..end)? == word).then_some(())?;
        self.pos = end;
        self.emit(word);
        Some(())
    }

    /// Kept verbatim: Gson wrote `BigDecimal.toString()` text and hashed exactly that.
    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        while matches!(
            self.peek(),
            Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        ) {
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        let raw = &self.src[start..self.pos];
        self.text.out.extend_from_slice(raw);
        Some(())
    }

    /// Emits the string the Gson way; returns its decoded text when `keep` asks for it.
    fn string(&mut self, keep: bool) -> Option<Option<String>> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            // Jump to the next quote or backslash: most strings have neither inside.
            let rest = self.src.get(self.pos..)?;
            let at = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
            self.pos += at;
            if self.src[self.pos] == b'"' {
                break;
            }
            escaped = true;
            self.pos += 2;
        }
        self.pos += 1;
        let raw = self.src.get(start..self.pos)?;
        let inner = raw.get(1..raw.len() - 1)?;
        // U+2028 and U+2029 are E2 80 A8 / E2 80 A9 in UTF-8; Gson escapes both.
        let separators = inner.contains(&0xE2) && {
            let text = std::str::from_utf8(inner).ok()?;
            text.contains(['\u{2028}', '\u{2029}'])
        };
        if !escaped && !separators {
            // Already Gson's text: nothing in it needs escaping.
            self.emit(raw);
            return Some(if keep {
                Some(std::str::from_utf8(inner).ok()?.to_owned())
            } else {
                None
            });
        }
        let decoded: String = serde_json::from_slice(raw).ok()?;
        let mut ser = serde_json::Serializer::with_formatter(&mut self.text.out, GsonFormatter);
        decoded.serialize(&mut ser).ok()?;
        Some(keep.then_some(decoded))
    }

    /// Whether the members of the object being read are recorded (their keys are needed).
    fn recording(&self) -> bool {
        self.path.len() < NESTED_DEPTH && self.path.iter().all(Option::is_some)
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        self.pos += 1;
        self.emit(b"{");
        self.skip_ws();
        if self.peek()? == b'}' {
            self.pos += 1;
            self.emit(b"}");
            return Some(());
        }
        loop {
            self.skip_ws();
            let member_start = self.text.out.len();
            let recording = self.recording();
            let key = self.string(recording)?;
            self.skip_ws();
            (self.peek()? == b':').then_some(())?;
            self.pos += 1;
            self.emit(b":");
            self.skip_ws();
            let value_start = self.text.out.len();
            // An unrecorded member's key is not kept; a placeholder stops recording below it.
            self.path.push(key);
            self.value(depth + 1)?;
            let key = self.path.pop().flatten();
            let end = self.text.out.len();
            match key {
                Some(key) if self.path.is_empty() => {
                    self.text.members.push((key, member_start..end));
                }
                Some(key) => {
                    let mut path: Vec<String> = self.path.iter().flatten().cloned().collect();
                    path.push(key);
                    self.text.nested.push((path, value_start..end));
                }
                None => {}
            }
            self.skip_ws();
            match self.peek()? {
                b',' => {
                    self.pos += 1;
                    self.emit(b",");
                }
                b'}' => {
                    self.pos += 1;
                    self.emit(b"}");
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.pos += 1;
        self.emit(b"[");
        self.skip_ws();
        if self.peek()? == b']' {
            self.pos += 1;
            self.emit(b"]");
            return Some(());
        }
        self.path.push(None);
        loop {
            self.skip_ws();
            self.value(depth + 1)?;
            self.skip_ws();
            match self.peek()? {
                b',' => {
                    self.pos += 1;
                    self.emit(b",");
                }
                b']' => {
                    self.pos += 1;
                    self.emit(b"]");
                    self.path.pop();
                    return Some(());
                }
                _ => return None,
            }
        }
    }
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
    fn text_keeps_numbers_as_written_and_re_encodes_strings() {
        let src = b"{ \"a\" : 1E+2, \"b\": [1.50, -0, \"\\u00e9\\/\"], \"c\": {\"d\": {\"e\": 1.2345E+6}} }";
        let text = GsonText::parse(src).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(text.as_bytes()),
            "{\"a\":1E+2,\"b\":[1.50,-0,\"\u{e9}/\"],\"c\":{\"d\":{\"e\":1.2345E+6}}}"
        );
        assert_eq!(text.value(&["a"]), Some(&b"1E+2"[..]));
        assert_eq!(text.value(&["c", "d"]), Some(&b"{\"e\":1.2345E+6}"[..]));
        assert_eq!(text.value(&["c", "d", "e"]), Some(&b"1.2345E+6"[..]));
        let deep =
            GsonText::parse(br#"{"a":{"b":{"c":{"d":1}}},"l":[{"m":2}]}"#).unwrap_or_default();
        assert_eq!(
            deep.value(&["a", "b", "c", "d"]),
            None,
            "deeper than recorded"
        );
        assert_eq!(deep.value(&["l", "m"]), None, "inside an array");
        assert!(GsonText::parse(b"{\"a\":1} x").is_none());
    }

    #[test]
    fn text_hash_agrees_with_the_value_hash_on_integer_documents() {
        let src = br#"{"schemaVersion":1,"pipelineId":"p","contractVersion":"v","contractHash":"h","steps":[{"index":0}],"x":"\u2028"}"#;
        let value: Value = serde_json::from_slice(src).unwrap_or_default();
        let map = value.as_object().cloned().unwrap_or_default();
        let text = GsonText::parse(src).unwrap_or_default();
        assert_eq!(text.contract_hash(), contract_hash(&map));
    }

    #[test]
    fn keeps_document_key_order() {
        let v: Value = serde_json::from_str(r#"{"z":1,"a":[true,null,1.5]}"#).unwrap_or_default();
        assert_eq!(compact(&v), r#"{"z":1,"a":[true,null,1.5]}"#);
    }
}
