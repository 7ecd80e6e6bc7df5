//! JSONPath reads and reference-path writes, with ASL's rules on top of RFC 9535.
//!
//! Most ASL paths are "definite" (`$.a.b[0]['c']`); those are walked directly without building
//! a query, which keeps the hot path allocation-free. Anything else (wildcards, filters, slices,
//! descendants) goes through `serde_json_path` and, like AWS's JSONPath engine, yields an array
//! of every matched node.

use super::hashing::FastMap;
use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use super::error::{StateError, RESULT_PATH};

/// Payload quota (AWS "Step Functions service quotas": 256 KiB of UTF-8 per state input/output).
pub const MAX_PAYLOAD_BYTES: usize = 262_144;

enum Walk<'a> {
    Found(&'a Value),
    Missing,
    NotSimple,
}

/// Walks a definite path. Returns `NotSimple` for syntax it does not handle, so the caller
/// can fall back to a full JSONPath query.
fn walk<'a>(path: &str, root: &'a Value) -> Walk<'a> {
    let b = path.as_bytes();
    if b.first() != Some(&b'$') {
        return Walk::NotSimple;
    }
    let mut i = 1;
    let mut cur = Some(root);
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                let name = &path[start..j];
                if name.is_empty() || name == "*" {
                    return Walk::NotSimple;
                }
                cur = cur.and_then(|v| v.as_object()).and_then(|o| o.get(name));
                i = j;
            }
            b'[' => {
                let rest = &path[i + 1..];
                if let Some(q) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') {
                    let Some((name, used)) = quoted_name(&rest[1..], q) else {
                        return Walk::NotSimple;
                    };
                    if !rest[1 + used..].starts_with(']') {
                        return Walk::NotSimple;
                    }
                    cur = cur
                        .and_then(|v| v.as_object())
                        .and_then(|o| o.get(name.as_ref()));
                    i += 1 + 1 + used + 1;
                } else {
                    let Some(end) = rest.find(']') else {
                        return Walk::NotSimple;
                    };
                    let Ok(idx) = rest[..end].parse::<usize>() else {
                        return Walk::NotSimple;
                    };
                    cur = cur.and_then(|v| v.as_array()).and_then(|a| a.get(idx));
                    i += 1 + end + 1;
                }
            }
            _ => return Walk::NotSimple,
        }
    }
    match cur {
        Some(v) => Walk::Found(v),
        None => Walk::Missing,
    }
}

/// A bracket-quoted member name up to its closing quote: only an escaped quote of the same
/// kind is unescaped, every other backslash stays literal (AWS reads `$['Test\""Name"']` as
/// the key `Test\""Name"`; recorded). Returns the name and the bytes used, closing quote
/// included.
fn quoted_name(body: &str, quote: char) -> Option<(std::borrow::Cow<'_, str>, usize)> {
    let mut out: Option<String> = None;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\\' && chars.peek().map(|&(_, n)| n) == Some(quote) {
            let o = out.get_or_insert_with(|| body[..i].to_string());
            o.push(quote);
            chars.next();
            continue;
        }
        if c == quote {
            let name = match out {
                Some(o) => std::borrow::Cow::Owned(o),
                None => std::borrow::Cow::Borrowed(&body[..i]),
            };
            return Some((name, i + 1));
        }
        if let Some(o) = out.as_mut() {
            o.push(c);
        }
    }
    None
}

/// Queries past which this thread's cache starts over: a driver has a handful, and generated
/// inputs (the fuzz driver) must not grow memory without bound.
const COMPILED_CAPACITY: usize = 1024;

thread_local! {
    static COMPILED: RefCell<FastMap<String, Option<Rc<JsonPath>>>> = RefCell::new(FastMap::default());
}

fn compiled(path: &str) -> Option<Rc<JsonPath>> {
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(p) = c.get(path) {
            return p.clone();
        }
        let p = JsonPath::parse(path).ok().map(Rc::new);
        if c.len() >= COMPILED_CAPACITY {
            c.clear();
        }
        c.insert(path.to_string(), p.clone());
        p
    })
}

/// Reads a path. `Ok(None)` means the path is well-formed but selects nothing (a definite path
/// whose target is absent); callers decide whether that is an error.
pub fn read(path: &str, root: &Value) -> Result<Option<Value>, StateError> {
    match walk(path, root) {
        Walk::Found(v) => Ok(Some(v.clone())),
        Walk::Missing => Ok(None),
        Walk::NotSimple => {
            let Some(q) = compiled(path) else {
                return Err(StateError::runtime(format!("invalid JSONPath '{path}'")));
            };
            let nodes = q.query(root).all();
            Ok(Some(Value::Array(nodes.into_iter().cloned().collect())))
        }
    }
}

/// Like [`read`] but borrows when the path is definite, to avoid cloning large inputs.
pub fn read_ref<'a>(
    path: &str,
    root: &'a Value,
) -> Result<Option<std::borrow::Cow<'a, Value>>, StateError> {
    use std::borrow::Cow;
    match walk(path, root) {
        Walk::Found(v) => Ok(Some(Cow::Borrowed(v))),
        Walk::Missing => Ok(None),
        Walk::NotSimple => read(path, root).map(|o| o.map(Cow::Owned)),
    }
}

/// Reads a path that must resolve; a miss is `States.Runtime`, as on AWS for InputPath,
/// Parameters, ResultSelector, OutputPath, ItemsPath and the Wait/Choice paths.
pub fn read_required(path: &str, root: &Value, field: &str) -> Result<Value, StateError> {
    read(path, root)?.ok_or_else(|| missing_in(path, field, root))
}

/// A payload-template or Fail-state path that selects nothing (AWS's wording, recorded).
pub fn missing_in(path: &str, field: &str, input: &Value) -> StateError {
    StateError::runtime(format!(
        "The JSONPath '{path}' specified for the field '{field}' could not be found in the input '{}'",
        serde_json::to_string(input).unwrap_or_default()
    ))
}

/// An InputPath/OutputPath/...SecondsPath that selects nothing. AWS names the first missing
/// member: a missing leaf is "No results for path", a missing member on the way "Missing
/// property in path", both in bracket notation (recorded).
pub fn invalid_path(path: &str, root: &Value) -> StateError {
    let detail = match reference_segments(path) {
        Some(segs) => {
            let mut shown = String::from("$");
            let mut cur = Some(root);
            let mut detail = None;
            for (n, seg) in segs.iter().enumerate() {
                match seg {
                    Seg::Key(k) => shown.push_str(&format!("['{k}']")),
                    Seg::Index(i) => shown.push_str(&format!("[{i}]")),
                }
                cur = match (cur, seg) {
                    (Some(Value::Object(o)), Seg::Key(k)) => o.get(k.as_ref()),
                    (Some(Value::Array(a)), Seg::Index(i)) => a.get(*i),
                    _ => None,
                };
                if cur.is_none() {
                    detail = Some(if n + 1 == segs.len() {
                        let mut full = String::from("$");
                        for seg in &segs {
                            match seg {
                                Seg::Key(k) => full.push_str(&format!("['{k}']")),
                                Seg::Index(i) => full.push_str(&format!("[{i}]")),
                            }
                        }
                        format!("No results for path: {full}")
                    } else {
                        format!("Missing property in path {shown}")
                    });
                    break;
                }
            }
            detail.unwrap_or_else(|| format!("No results for path: {shown}"))
        }
        None => format!("No results for path: {path}"),
    };
    StateError::runtime(format!("Invalid path '{path}' : {detail}"))
}

enum Seg<'a> {
    Key(std::borrow::Cow<'a, str>),
    Index(usize),
}

/// Parses a reference path (`$`, `.name`, `['name']`, `[n]` only), as ResultPath requires.
fn reference_segments(path: &str) -> Option<Vec<Seg<'_>>> {
    let b = path.as_bytes();
    if b.first() != Some(&b'$') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                let name = &path[start..j];
                if name.is_empty() || name.contains('*') {
                    return None;
                }
                out.push(Seg::Key(std::borrow::Cow::Borrowed(name)));
                i = j;
            }
            b'[' => {
                let rest = &path[i + 1..];
                if let Some(q) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') {
                    let (name, used) = quoted_name(&rest[1..], q)?;
                    if !rest[1 + used..].starts_with(']') {
                        return None;
                    }
                    out.push(Seg::Key(name));
                    i += used + 3;
                } else {
                    let end = rest.find(']')?;
                    out.push(Seg::Index(rest[..end].parse().ok()?));
                    i += end + 2;
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Applies `ResultPath`: `None` (absent) replaces the input, JSON `null` discards the result,
/// a reference path writes the result into the input, creating missing objects on the way.
pub fn apply_result_path(
    result_path: Option<&Value>,
    input: Value,
    result: Value,
) -> Result<Value, StateError> {
    let path = match result_path {
        None => return Ok(result),
        Some(Value::Null) => return Ok(input),
        Some(Value::String(p)) => p.as_str(),
        Some(other) => {
            return Err(StateError::runtime(format!(
                "ResultPath must be a string or null, got {other}"
            )))
        }
    };
    let Some(segs) = reference_segments(path) else {
        return Err(StateError::runtime(format!(
            "ResultPath '{path}' is not a valid reference path"
        )));
    };
    if segs.is_empty() {
        return Ok(result);
    }
    let mut root = input;
    let fail = || {
        StateError::new(
            RESULT_PATH,
            format!("Unable to apply ResultPath '{path}' to input"),
        )
    };
    {
        let mut cur = &mut root;
        let last = segs.len() - 1;
        for (n, seg) in segs.iter().enumerate() {
            match seg {
                Seg::Key(k) => {
                    let Value::Object(o) = cur else {
                        return Err(fail());
                    };
                    if n == last {
                        o.insert(k.to_string(), result);
                        break;
                    }
                    cur = o
                        .entry(k.to_string())
                        .or_insert_with(|| Value::Object(Map::new()));
                }
                Seg::Index(i) => {
                    let Some(slot) = cur.as_array_mut().and_then(|a| a.get_mut(*i)) else {
                        return Err(fail());
                    };
                    if n == last {
                        *slot = result;
                        break;
                    }
                    cur = slot;
                }
            }
        }
    }
    Ok(root)
}

/// [`apply_result_path`] over a borrowed state input, as the state's input stays shared with
/// its history: for the common `$.field` only the members that stay are copied, not the one
/// the result replaces.
pub fn apply_result_path_to(
    result_path: Option<&Value>,
    input: &Value,
    result: Value,
) -> Result<Value, StateError> {
    if let (Some(Value::String(p)), Value::Object(o)) = (result_path, input) {
        if let Some([Seg::Key(k)]) = reference_segments(p).as_deref() {
            let mut out = Map::with_capacity(o.len() + 1);
            let mut result = Some(result);
            for (key, v) in o {
                let v = match (key == k, result.take()) {
                    (true, Some(r)) => r,
                    (_, r) => {
                        result = r;
                        v.clone()
                    }
                };
                out.insert(key.clone(), v);
            }
            if let Some(r) = result {
                out.insert(k.to_string(), r);
            }
            return Ok(Value::Object(out));
        }
    }
    let base = match result_path {
        None => Value::Null,
        Some(_) => input.clone(),
    };
    apply_result_path(result_path, base, result)
}

/// Applies `InputPath`/`OutputPath`: absent keeps the value, `null` gives `{}`.
pub fn apply_filter_path(
    path: Option<&Value>,
    value: Value,
    field: &str,
) -> Result<Value, StateError> {
    match path {
        None => Ok(value),
        Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::String(p)) if p == "$" => Ok(value),
        Some(Value::String(p)) => read(p, &value)?.ok_or_else(|| invalid_path(p, &value)),
        Some(other) => Err(StateError::runtime(format!(
            "{field} must be a string or null, got {other}"
        ))),
    }
}

/// Byte length of the compact JSON text of `v`, without building it.
pub fn json_size(v: &Value) -> usize {
    /// Quotes plus every byte, plus what escaping adds: one byte for the two-character escapes,
    /// five for `\u00XX`. Bytes of multi-byte characters are never below 0x80, so a byte scan
    /// counts what a character scan would.
    fn str_size(s: &str) -> usize {
        // Almost no payload string needs escaping, and a branch-free count of the bytes that
        // might is a scan the compiler vectorises; only strings with such bytes are counted
        // byte by byte (every state's output is measured, so this scan is a hot path).
        let special = s.bytes().fold(0usize, |n, b| {
            n + usize::from((b < 0x20) | (b == b'"') | (b == b'\\'))
        });
        if special == 0 {
            return 2 + s.len();
        }
        2 + s.len()
            + s.bytes()
                .map(|b| match b {
                    b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
                    0..=0x1f => 5,
                    _ => 0,
                })
                .sum::<usize>()
    }
    fn number_size(n: &serde_json::Number) -> usize {
        fn digits(mut u: u64) -> usize {
            let mut d = 1;
            while u >= 10 {
                u /= 10;
                d += 1;
            }
            d
        }
        if let Some(u) = n.as_u64() {
            digits(u)
        } else if let Some(i) = n.as_i64() {
            1 + digits(i.unsigned_abs())
        } else {
            n.to_string().len()
        }
    }
    match v {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => number_size(n),
        Value::String(s) => str_size(s),
        Value::Array(a) => 2 + a.iter().map(json_size).sum::<usize>() + a.len().saturating_sub(1),
        Value::Object(o) => {
            2 + o
                .iter()
                .map(|(k, v)| str_size(k) + 1 + json_size(v))
                .sum::<usize>()
                + o.len().saturating_sub(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_path_over_a_borrowed_input_is_the_owned_one() {
        let input = json!({"a": 1, "tpf": {"old": true}, "z": [1, 2]});
        let result = json!({"new": 2});
        for path in [
            None,
            Some(json!(null)),
            Some(json!("$")),
            Some(json!("$.tpf")),
            Some(json!("$.fresh")),
            Some(json!("$['tpf']")),
            Some(json!("$.tpf.inner")),
            Some(json!("$.z[1]")),
            Some(json!("$.a.b")),
            Some(json!(7)),
        ] {
            let owned = apply_result_path(path.as_ref(), input.clone(), result.clone());
            let borrowed = apply_result_path_to(path.as_ref(), &input, result.clone());
            assert_eq!(format!("{owned:?}"), format!("{borrowed:?}"), "{path:?}");
            // Member order too: the replaced member keeps its place.
            if let (Ok(a), Ok(b)) = (&owned, &borrowed) {
                assert_eq!(a.to_string(), b.to_string());
            }
        }
        let over_scalar = apply_result_path_to(Some(&json!("$.x")), &json!(3), json!(1));
        assert!(over_scalar.is_err());
    }
    use serde_json::json;

    #[test]
    fn reads() {
        let v = json!({"a": {"b": [1, {"c": 2}]}, "x y": 3, "items": [{"id": 1}, {"id": 2}]});
        assert_eq!(read("$", &v).unwrap(), Some(v.clone()));
        assert_eq!(read("$.a.b[1].c", &v).unwrap(), Some(json!(2)));
        assert_eq!(read("$['x y']", &v).unwrap(), Some(json!(3)));
        assert_eq!(read("$.a.zz", &v).unwrap(), None);
        assert_eq!(read("$.items[*].id", &v).unwrap(), Some(json!([1, 2])));
        assert!(read("$[?", &v).is_err());
    }

    #[test]
    fn result_paths() {
        let inp = json!({"a": 1});
        assert_eq!(
            apply_result_path(None, inp.clone(), json!(2)).unwrap(),
            json!(2)
        );
        assert_eq!(
            apply_result_path(Some(&Value::Null), inp.clone(), json!(2)).unwrap(),
            inp
        );
        assert_eq!(
            apply_result_path(Some(&json!("$.x.y")), inp.clone(), json!(2)).unwrap(),
            json!({"a": 1, "x": {"y": 2}})
        );
        let e = apply_result_path(Some(&json!("$.a.b")), inp, json!(2)).unwrap_err();
        assert_eq!(e.error, RESULT_PATH);
        assert_eq!(
            apply_result_path(Some(&json!("$.r")), json!("str"), json!(1))
                .unwrap_err()
                .error,
            RESULT_PATH
        );
    }

    #[test]
    fn sizes() {
        for v in [
            json!(null),
            json!({"a": [1, "x\"\n\u{1}", true, false, 1.5]}),
            json!("é"),
            json!([
                "\u{8}\u{c}\u{1f}\u{7f}\\/",
                "日本🚀",
                0,
                9,
                10,
                99,
                100,
                -1,
                -10,
                -9_223_372_036_854_775_808i64
            ]),
            json!([u64::MAX, i64::MAX, 1e300, -0.5, 12.0]),
            json!({"plain key": "a string long enough for a vectorised scan, without escapes", "k\"": "\\"}),
            json!("a string long enough for a vectorised scan whose escape comes late: \u{1e}"),
        ] {
            assert_eq!(json_size(&v), serde_json::to_string(&v).unwrap().len());
        }
    }
}
