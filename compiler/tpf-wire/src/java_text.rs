//! How TPF's Java renders values into the text its keys are built from.
//!
//! TPF hashes and concatenates Java strings: a length prefix is `String.length()` (UTF-16 code
//! units), a derived execution key hashes Jackson's `writeValueAsBytes` output, an await
//! idempotency key appends `JsonNode.asText()` of payload fields. These functions reproduce that
//! text from a `serde_json::Value`, so the keys the model, the adapter and the bridge compute are
//! the keys TPF computes (`mapping-tests/fixtures/tpf-vectors/keys.json` checks them).
//!
//! Numbers follow Jackson's untyped reading: an integer stays an integer, anything with a
//! fraction or an exponent is a `double` (`12.50` → `12.5`, `1e2` → `100.0`). An integer beyond
//! `u64` is a `BigInteger` in Jackson but a lossy `f64` in serde_json; no TPF key in practice
//! carries one.

use serde_json::Value;

/// Java's `Character.isWhitespace`: the Unicode space, line and paragraph separators except the
/// no-break ones (U+00A0, U+2007, U+202F), plus U+0009–U+000D and the information separators
/// U+001C–U+001F. Unlike Rust's `char::is_whitespace`, U+0085 (NEXT LINE) is not whitespace.
pub fn is_java_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{1680}'
            | '\u{2000}'..='\u{2006}'
            | '\u{2008}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Java's `String.isBlank()`: empty, or whitespace ([`is_java_whitespace`]) only.
pub fn is_java_blank(text: &str) -> bool {
    text.chars().all(is_java_whitespace)
}

/// Java's `String.length()`: UTF-16 code units.
pub fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// Java's `Double.toString(double)` (JDK 19 and later: the shortest decimal that reads back as
/// the same double), e.g. `12.5`, `100.0`, `1.0E-7`, `1.2345E7`, `NaN`, `-Infinity`.
pub fn double_to_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .to_owned();
    }
    // Rust's `{:e}` gives the same shortest digits; only the layout differs.
    let sci = format!("{:e}", value.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if value < 0.0 { "-" } else { "" };
    if (-3..7).contains(&exponent) {
        let point = exponent + 1;
        let text = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else {
            let point = point as usize;
            let int_part = if digits.len() >= point {
                digits[..point].to_owned()
            } else {
                format!("{digits}{}", "0".repeat(point - digits.len()))
            };
            let frac = digits.get(point..).filter(|f| !f.is_empty()).unwrap_or("0");
            format!("{int_part}.{frac}")
        };
        format!("{sign}{text}")
    } else {
        let frac = digits.get(1..).filter(|f| !f.is_empty()).unwrap_or("0");
        format!("{sign}{}.{frac}E{exponent}", &digits[..1])
    }
}

fn number_text(n: &serde_json::Number) -> String {
    if n.is_f64() {
        n.as_f64().map(double_to_string).unwrap_or_default()
    } else {
        n.to_string()
    }
}

/// Jackson's compact serialisation (`ObjectMapper.writeValueAsBytes`, default features) of an
/// untyped value: document key order, doubles as [`double_to_string`], control characters as
/// `\u00XX` with upper-case hex (`\b \t \n \f \r` short), characters outside the BMP as escaped
/// surrogate pairs, everything else raw (no HTML or `/` escaping).
pub fn jackson_compact(value: &Value) -> String {
    let mut out = String::new();
    write_jackson(&mut out, value);
    out
}

fn write_jackson(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => write_jackson_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_jackson(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_jackson_string(out, k);
                out.push(':');
                write_jackson(out, v);
            }
            out.push('}');
        }
    }
}

fn write_jackson_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let unit = |out: &mut String, u: u16| {
        out.push_str("\\u");
        for shift in [12, 8, 4, 0] {
            out.push(char::from(HEX[usize::from((u >> shift) & 0xf)]));
        }
    };
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => unit(out, c as u16),
            c if (c as u32) > 0xffff => {
                let mut pair = [0u16; 2];
                for u in c.encode_utf16(&mut pair) {
                    unit(out, *u);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Jackson's `JsonNode.asText()`: a string's own text, a number's Java text, `true`/`false`,
/// `null` for null, and the empty string for objects and arrays.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => number_text(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        Value::Array(_) | Value::Object(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn doubles_print_like_java() {
        for (v, want) in [
            (12.5, "12.5"),
            (100.0, "100.0"),
            (1e-7, "1.0E-7"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1234567.0, "1234567.0"),
            (12345678.0, "1.2345678E7"),
            (1e21, "1.0E21"),
            (-2.5, "-2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(double_to_string(v), want, "{v}");
        }
    }

    #[test]
    fn jackson_escapes_controls_upper_case_and_astral_as_pairs() {
        let v = json!({"s": "a\u{1f}\u{1}\n\u{e9}\u{2028}</>\u{1f600}", "n": [1, 12.5, 1e2]});
        assert_eq!(
            jackson_compact(&v),
            "{\"s\":\"a\\u001F\\u0001\\n\u{e9}\u{2028}</>\\uD83D\\uDE00\",\"n\":[1,12.5,100.0]}"
        );
    }

    #[test]
    fn java_whitespace_is_not_rusts() {
        for c in [
            ' ', '\t', '\u{b}', '\u{1c}', '\u{1f}', '\u{2028}', '\u{3000}', '\u{2001}',
        ] {
            assert!(is_java_whitespace(c), "{c:?}");
        }
        for c in [
            '\u{a0}', '\u{2007}', '\u{202f}', '\u{85}', '\u{200b}', 'x', '\0',
        ] {
            assert!(!is_java_whitespace(c), "{c:?}");
        }
        assert!(is_java_blank("") && is_java_blank(" \u{1f}\u{3000}"));
        assert!(!is_java_blank("\u{85}") && !is_java_blank(" a "));
    }

    #[test]
    fn utf16_counts_code_units() {
        assert_eq!(utf16_len("t\u{e9}nant-\u{1f600}"), 9);
    }
}
