//! Intrinsic functions (`States.Format(...)` and friends), parsed into a small AST and
//! evaluated against the effective input and the context object. Every failure is
//! `States.IntrinsicFailure`, except a path argument that selects nothing, which is
//! `States.Runtime` like any other missing path.

use super::hashing::FastMap;
use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Map, Number, Value};

use super::context::Context;
use super::error::StateError;
use super::rng::Rng;

#[derive(Debug, Clone, PartialEq)]
enum Arg {
    /// A string literal: its value with escapes applied, and its raw text, which `Format`
    /// needs to tell an escaped `\{` from a placeholder brace.
    Str {
        value: String,
        raw: String,
    },
    Lit(Value),
    Path(String),
    Call(Call),
}

#[derive(Debug, Clone, PartialEq)]
struct Call {
    name: String,
    args: Vec<Arg>,
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

fn fail(msg: impl Into<String>) -> StateError {
    StateError::intrinsic(msg)
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<char> {
        self.s[self.i..].chars().next()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.i += c.len_utf8();
            } else {
                break;
            }
        }
    }

    fn call(&mut self) -> Result<Call, StateError> {
        self.skip_ws();
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                self.i += 1;
            } else {
                break;
            }
        }
        let name = self.s[start..self.i].to_string();
        if !name.starts_with("States.") {
            return Err(fail(format!("not an intrinsic function: '{}'", self.s)));
        }
        self.skip_ws();
        if self.peek() != Some('(') {
            return Err(fail(format!("expected '(' after {name}")));
        }
        self.i += 1;
        let mut args = Vec::new();
        self.skip_ws();
        if self.peek() == Some(')') {
            self.i += 1;
            return Ok(Call { name, args });
        }
        loop {
            args.push(self.arg()?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.i += 1,
                Some(')') => {
                    self.i += 1;
                    return Ok(Call { name, args });
                }
                _ => return Err(fail(format!("expected ',' or ')' in '{}'", self.s))),
            }
        }
    }

    fn arg(&mut self) -> Result<Arg, StateError> {
        self.skip_ws();
        match self.peek() {
            Some('\'') => self.string(),
            Some('$') => Ok(Arg::Path(self.path())),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
            Some(_) => {
                let rest = &self.s[self.i..];
                for (word, v) in [
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("null", Value::Null),
                ] {
                    if rest.starts_with(word)
                        && !rest[word.len()..]
                            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.')
                    {
                        self.i += word.len();
                        return Ok(Arg::Lit(v));
                    }
                }
                Ok(Arg::Call(self.call()?))
            }
            None => Err(fail(format!("unexpected end of '{}'", self.s))),
        }
    }

    fn string(&mut self) -> Result<Arg, StateError> {
        self.i += 1;
        let start = self.i;
        let mut value = String::new();
        let mut chars = self.s[self.i..].char_indices();
        while let Some((off, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, e)) => value.push(e),
                    None => break,
                },
                '\'' => {
                    let raw = self.s[start..start + off].to_string();
                    self.i = start + off + 1;
                    return Ok(Arg::Str { value, raw });
                }
                c => value.push(c),
            }
        }
        Err(fail(format!("unterminated string in '{}'", self.s)))
    }

    /// A path runs to the next `,` or `)` outside brackets and quotes.
    fn path(&mut self) -> String {
        let start = self.i;
        let mut depth = 0i32;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '[' | '(') => depth += 1,
                (None, ']') => depth -= 1,
                (None, ')') if depth == 0 => break,
                (None, ')') => depth -= 1,
                (None, ',') if depth == 0 => break,
                _ => {}
            }
            self.i += c.len_utf8();
        }
        self.s[start..self.i].trim_end().to_string()
    }

    fn number(&mut self) -> Result<Arg, StateError> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
                self.i += 1;
            } else {
                break;
            }
        }
        let text = &self.s[start..self.i];
        serde_json::from_str::<Number>(text)
            .map(|n| Arg::Lit(Value::Number(n)))
            .map_err(|_| fail(format!("bad number '{text}'")))
    }
}

fn parse(expr: &str) -> Result<Call, StateError> {
    let mut p = Parser { s: expr, i: 0 };
    let call = p.call()?;
    p.skip_ws();
    if p.i != expr.len() {
        return Err(fail(format!("trailing text in '{expr}'")));
    }
    Ok(call)
}

/// Parsed expressions past which this thread's cache starts over: a driver has a handful, and
/// generated inputs (the fuzz driver) must not grow memory without bound.
const PARSED_CAPACITY: usize = 1024;

thread_local! {
    static PARSED: RefCell<FastMap<String, Rc<Call>>> = RefCell::new(FastMap::default());
}

/// `parse`, once per expression and thread: a driver evaluates the same few intrinsics on
/// every loop iteration. Failures are not kept, so each one is reported afresh.
fn parsed(expr: &str) -> Result<Rc<Call>, StateError> {
    if let Some(hit) = PARSED.with(|c| c.borrow().get(expr).cloned()) {
        return Ok(hit);
    }
    let call = Rc::new(parse(expr)?);
    PARSED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= PARSED_CAPACITY {
            c.clear();
        }
        c.insert(expr.to_owned(), call.clone());
    });
    Ok(call)
}

/// Evaluates an intrinsic expression such as `States.Format('{}', $.a)`.
pub fn evaluate(
    expr: &str,
    input: &Value,
    ctx: &Context<'_>,
    rng: &mut Rng,
) -> Result<Value, StateError> {
    let call = parsed(expr)?;
    eval_call(&call, input, ctx, rng)
}

fn eval_arg(a: &Arg, input: &Value, ctx: &Context<'_>, rng: &mut Rng) -> Result<Value, StateError> {
    match a {
        Arg::Str { value, .. } => Ok(Value::String(value.clone())),
        Arg::Lit(v) => Ok(v.clone()),
        Arg::Path(p) => ctx.read_path(p, input, "intrinsic argument"),
        Arg::Call(c) => eval_call(c, input, ctx, rng),
    }
}

fn int(v: &Value, what: &str) -> Result<i64, StateError> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| fail(format!("{what} must be an integer, got {n}"))),
        other => Err(fail(format!("{what} must be an integer, got {other}"))),
    }
}

/// A number rounded to the nearest integer, halves towards positive infinity: AWS accepts
/// non-integers in MathAdd and MathRandom and rounds them this way (recorded: 1.49 + 1.5 = 3,
/// -1.5 + 0 = -1, 2.5 + 0 = 3).
fn rounded(v: &Value, what: &str) -> Result<i64, StateError> {
    match v {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Ok(i),
            None => n
                .as_f64()
                .map(|f| (f + 0.5).floor())
                .filter(|f| f.is_finite() && f.abs() < 9.0e18)
                .map(|f| f as i64)
                .ok_or_else(|| fail(format!("{what} must be a number in range, got {n}"))),
        },
        other => Err(fail(format!("{what} must be a number, got {other}"))),
    }
}

/// `-0` parses as a float negative zero; AWS's reader keeps it an integer 0.
fn normalise_negative_zero(v: Value) -> Value {
    match v {
        Value::Number(n) if n.as_f64() == Some(0.0) && n.is_f64() && n.to_string() == "-0.0" => {
            Value::from(0)
        }
        other => other,
    }
}

/// How `States.Format` prints an argument: strings bare, numbers, booleans and null as JSON,
/// objects and arrays the way AWS's runtime prints its maps and lists (`{a=1, b=[x, y]}`;
/// recorded on AWS, which documents scalar arguments only).
fn format_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                format_text(x, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push('=');
                format_text(x, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The text of a value as AWS quotes it in error causes (see [`format_text`]).
pub fn java_text(v: &Value) -> String {
    let mut s = String::new();
    format_text(v, &mut s);
    s
}

fn string<'v>(v: &'v Value, what: &str) -> Result<&'v str, StateError> {
    v.as_str()
        .ok_or_else(|| fail(format!("{what} must be a string, got {v}")))
}

fn array<'v>(v: &'v Value, what: &str) -> Result<&'v Vec<Value>, StateError> {
    v.as_array()
        .ok_or_else(|| fail(format!("{what} must be an array, got {v}")))
}

fn arity(c: &Call, n: std::ops::RangeInclusive<usize>) -> Result<(), StateError> {
    if n.contains(&c.args.len()) {
        Ok(())
    } else {
        Err(fail(format!(
            "{} takes {} argument(s), got {}",
            c.name,
            if n.start() == n.end() {
                n.start().to_string()
            } else {
                format!("{}..{}", n.start(), n.end())
            },
            c.args.len()
        )))
    }
}

/// AWS caps the string arguments of Base64Encode/Decode and Hash at 10,000 characters.
const MAX_STRING_ARG: usize = 10_000;

fn eval_call(
    c: &Call,
    input: &Value,
    ctx: &Context<'_>,
    rng: &mut Rng,
) -> Result<Value, StateError> {
    if c.name == "States.Format" {
        return format(c, input, ctx, rng);
    }
    let mut args = Vec::with_capacity(c.args.len());
    for a in &c.args {
        args.push(eval_arg(a, input, ctx, rng)?);
    }
    let name = c.name.as_str();
    match name {
        "States.StringToJson" => {
            arity(c, 1..=1)?;
            let s = string(&args[0], "StringToJson argument")?;
            // AWS answers blank text with null rather than a parse error, and reads "-0" as
            // the integer 0 (both recorded on AWS).
            if s.trim().is_empty() {
                return Ok(Value::Null);
            }
            serde_json::from_str(s)
                .map(normalise_negative_zero)
                .map_err(|e| fail(format!("StringToJson: {e}")))
        }
        "States.JsonToString" => {
            arity(c, 1..=1)?;
            serde_json::to_string(&args[0])
                .map(Value::String)
                .map_err(|e| fail(e.to_string()))
        }
        "States.Array" => Ok(Value::Array(args)),
        "States.ArrayPartition" => {
            arity(c, 2..=2)?;
            let a = array(&args[0], "ArrayPartition array")?;
            let n = int(&args[1], "ArrayPartition chunk size")?;
            if n <= 0 {
                return Err(fail("ArrayPartition chunk size must be positive"));
            }
            Ok(Value::Array(
                a.chunks(n as usize)
                    .map(|ch| Value::Array(ch.to_vec()))
                    .collect(),
            ))
        }
        "States.ArrayContains" => {
            arity(c, 2..=2)?;
            let a = array(&args[0], "ArrayContains array")?;
            Ok(Value::Bool(a.contains(&args[1])))
        }
        "States.ArrayRange" => {
            arity(c, 3..=3)?;
            let (start, end, step) = (
                int(&args[0], "ArrayRange start")?,
                int(&args[1], "ArrayRange end")?,
                int(&args[2], "ArrayRange step")?,
            );
            if step == 0 {
                return Err(fail("ArrayRange step must not be 0"));
            }
            let mut out = Vec::new();
            let mut x = start;
            while (step > 0 && x <= end) || (step < 0 && x >= end) {
                // AWS limits the generated array to 1,000 items.
                if out.len() == 1000 {
                    return Err(fail("ArrayRange would produce more than 1000 items"));
                }
                out.push(Value::from(x));
                x = match x.checked_add(step) {
                    Some(v) => v,
                    None => break,
                };
            }
            Ok(Value::Array(out))
        }
        "States.ArrayGetItem" => {
            arity(c, 2..=2)?;
            let a = array(&args[0], "ArrayGetItem array")?;
            let i = int(&args[1], "ArrayGetItem index")?;
            usize::try_from(i)
                .ok()
                .and_then(|i| a.get(i))
                .cloned()
                .ok_or_else(|| fail(format!("ArrayGetItem index {i} out of bounds")))
        }
        "States.ArrayLength" => {
            arity(c, 1..=1)?;
            Ok(Value::from(array(&args[0], "ArrayLength argument")?.len()))
        }
        "States.ArrayUnique" => {
            arity(c, 1..=1)?;
            let a = array(&args[0], "ArrayUnique argument")?;
            let mut out: Vec<Value> = Vec::new();
            for v in a {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
            Ok(Value::Array(out))
        }
        "States.Base64Encode" => {
            arity(c, 1..=1)?;
            let s = string(&args[0], "Base64Encode argument")?;
            if s.chars().count() > MAX_STRING_ARG {
                return Err(fail("Base64Encode input exceeds 10000 characters"));
            }
            Ok(Value::String(base64_encode(s.as_bytes())))
        }
        "States.Base64Decode" => {
            arity(c, 1..=1)?;
            let s = string(&args[0], "Base64Decode argument")?;
            if s.chars().count() > MAX_STRING_ARG {
                return Err(fail("Base64Decode input exceeds 10000 characters"));
            }
            let bytes = base64_decode(s).ok_or_else(|| fail("Base64Decode: invalid base64"))?;
            String::from_utf8(bytes)
                .map(Value::String)
                .map_err(|_| fail("Base64Decode: result is not UTF-8"))
        }
        "States.Hash" => {
            arity(c, 2..=2)?;
            let data = string(&args[0], "Hash data")?;
            if data.chars().count() > MAX_STRING_ARG {
                return Err(fail("Hash input exceeds 10000 characters"));
            }
            let algo = string(&args[1], "Hash algorithm")?;
            hash(data.as_bytes(), algo).map(Value::String)
        }
        "States.JsonMerge" => {
            arity(c, 3..=3)?;
            if args[2] != Value::Bool(false) {
                // AWS supports only shallow merge; `true` is rejected.
                return Err(fail("JsonMerge supports only shallow merging (false)"));
            }
            let (Value::Object(a), Value::Object(b)) = (&args[0], &args[1]) else {
                return Err(fail("JsonMerge arguments must be objects"));
            };
            let mut out: Map<String, Value> = a.clone();
            for (k, v) in b {
                out.insert(k.clone(), v.clone());
            }
            Ok(Value::Object(out))
        }
        "States.MathRandom" => {
            arity(c, 2..=3)?;
            let lo = rounded(&args[0], "MathRandom start")?;
            let hi = rounded(&args[1], "MathRandom end")?;
            if hi <= lo {
                return Err(fail("MathRandom end must be greater than start"));
            }
            // An explicit seed argument gives a value that depends on that seed only; without
            // one, draw from the engine's seeded generator. Range is [start, end).
            let v = match args.get(2) {
                Some(seed) => {
                    let s = int(seed, "MathRandom seed")?;
                    Rng::new(s as u64).range_i64(lo, hi)
                }
                None => rng.range_i64(lo, hi),
            };
            Ok(Value::from(v))
        }
        "States.MathAdd" => {
            arity(c, 2..=2)?;
            let a = rounded(&args[0], "MathAdd first argument")?;
            let b = rounded(&args[1], "MathAdd second argument")?;
            a.checked_add(b)
                .map(Value::from)
                .ok_or_else(|| fail("MathAdd overflow"))
        }
        "States.StringSplit" => {
            arity(c, 2..=2)?;
            let s = string(&args[0], "StringSplit string")?;
            let d = string(&args[1], "StringSplit delimiter")?;
            // Each character of the delimiter string splits, and empty pieces are dropped
            // (the AWS example splits "This.is+a,test=string" on ".+,=" into five words).
            Ok(Value::Array(
                s.split(|ch: char| d.contains(ch))
                    .filter(|p| !p.is_empty())
                    .map(|p| Value::String(p.to_string()))
                    .collect(),
            ))
        }
        "States.UUID" => {
            arity(c, 0..=0)?;
            Ok(Value::String(rng.uuid_v4()))
        }
        other => Err(fail(format!("unknown intrinsic function {other}"))),
    }
}

fn format(c: &Call, input: &Value, ctx: &Context<'_>, rng: &mut Rng) -> Result<Value, StateError> {
    let Some(first) = c.args.first() else {
        return Err(fail("States.Format needs a template"));
    };
    // Pieces of the template: literal text between unescaped `{}` placeholders.
    let pieces: Vec<String> = match first {
        Arg::Str { raw, .. } => {
            let mut pieces = vec![String::new()];
            let mut chars = raw.chars().peekable();
            while let Some(ch) = chars.next() {
                match ch {
                    '\\' => {
                        if let (Some(e), Some(p)) = (chars.next(), pieces.last_mut()) {
                            p.push(e);
                        }
                    }
                    '{' if chars.peek() == Some(&'}') => {
                        chars.next();
                        pieces.push(String::new());
                    }
                    ch => {
                        if let Some(p) = pieces.last_mut() {
                            p.push(ch);
                        }
                    }
                }
            }
            pieces
        }
        other => {
            let v = eval_arg(other, input, ctx, rng)?;
            let s = string(&v, "States.Format template")?;
            s.split("{}").map(str::to_string).collect()
        }
    };
    let rest = &c.args[1..];
    if pieces.len() - 1 != rest.len() {
        return Err(fail(format!(
            "States.Format has {} placeholder(s) but {} argument(s)",
            pieces.len() - 1,
            rest.len()
        )));
    }
    let mut out = pieces[0].clone();
    for (a, piece) in rest.iter().zip(&pieces[1..]) {
        format_text(&eval_arg(a, input, ctx, rng)?, &mut out);
        out.push_str(piece);
    }
    Ok(Value::String(out))
}

fn hash(data: &[u8], algo: &str) -> Result<String, StateError> {
    use sha2::Digest;
    Ok(match algo {
        "MD5" => hex::encode(md5::Md5::digest(data)),
        "SHA-1" => hex::encode(sha1::Sha1::digest(data)),
        "SHA-256" => hex::encode(sha2::Sha256::digest(data)),
        "SHA-384" => hex::encode(sha2::Sha384::digest(data)),
        "SHA-512" => hex::encode(sha2::Sha512::digest(data)),
        other => return Err(fail(format!("unsupported hash algorithm '{other}'"))),
    })
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for ch in data.chunks(3) {
        let b = [ch[0], *ch.get(1).unwrap_or(&0), *ch.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= ch.len() {
                out.push(B64[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_and_escapes() {
        let c = parse(r"States.Format('a\'b\{\}{}', States.Array(1, -2.5, true, null, $.x[0]))")
            .unwrap();
        assert_eq!(c.args.len(), 2);
        assert!(matches!(&c.args[0], Arg::Str { value, .. } if value == "a'b{}{}"));
        assert!(parse("States.Format('x'").is_err());
        assert!(parse("Foo.Bar()").is_err());
        assert!(parse("States.UUID() extra").is_err());
    }

    #[test]
    fn base64_round_trip() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            let e = base64_encode(s.as_bytes());
            assert_eq!(base64_decode(&e).unwrap(), s.as_bytes());
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert!(base64_decode("%%").is_none());
    }
}
