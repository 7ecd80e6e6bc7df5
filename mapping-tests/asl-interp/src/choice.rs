//! Choice rule evaluation (JSONPath dialect).
//!
//! Type mismatches make a comparison false rather than an error (States Language spec,
//! "Choice Rules"). A `Variable` that selects nothing is `States.Runtime` on AWS except under
//! `IsPresent`, which exists to test for exactly that.

use std::cmp::Ordering;

use asl_model::ChoiceRule;
use serde_json::Value;

use super::clock::parse_rfc3339;
use super::context::Context;
use super::error::StateError;

/// Index of the first matching top-level rule.
pub fn first_match(
    rules: &[ChoiceRule],
    input: &Value,
    ctx: &Context<'_>,
) -> Result<Option<usize>, StateError> {
    for (i, r) in rules.iter().enumerate() {
        if eval(r, input, ctx)? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

pub fn eval(rule: &ChoiceRule, input: &Value, ctx: &Context<'_>) -> Result<bool, StateError> {
    if let Some(all) = &rule.and {
        for r in all {
            if !eval(r, input, ctx)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Some(any) = &rule.or {
        for r in any {
            if eval(r, input, ctx)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    if let Some(not) = &rule.not {
        return Ok(!eval(not, input, ctx)?);
    }
    let Some(var) = &rule.variable else {
        return Err(StateError::runtime(
            "Choice rule has no Variable, And, Or or Not",
        ));
    };
    let mut ops = rule
        .comparison
        .iter()
        .filter(|(k, _)| k.as_str() != "Comment" && k.as_str() != "Next");
    let (Some((op, operand)), None) = (ops.next(), ops.next()) else {
        return Err(StateError::runtime(format!(
            "Choice rule on '{var}' must have exactly one comparison operator"
        )));
    };
    let value = ctx.read_optional(var, input)?;
    if op == "IsPresent" {
        return Ok(value.is_some() == (operand == &Value::Bool(true)));
    }
    let Some(value) = value else {
        return Err(StateError::runtime(format!(
            "Invalid path '{var}': The choice state's condition path references an invalid value."
        )));
    };
    let (base, operand) = match op.strip_suffix("Path") {
        Some(base) => {
            let Value::String(p) = operand else {
                return Err(StateError::runtime(format!("{op} needs a path string")));
            };
            (base, ctx.read_path(p, input, op)?)
        }
        None => (op.as_str(), operand.clone()),
    };
    compare(base, &value, &operand)
}

fn compare(op: &str, v: &Value, rhs: &Value) -> Result<bool, StateError> {
    let want = |b: &Value| b == &Value::Bool(true);
    Ok(match op {
        "IsNull" => v.is_null() == want(rhs),
        "IsBoolean" => v.is_boolean() == want(rhs),
        "IsNumeric" => v.is_number() == want(rhs),
        "IsString" => v.is_string() == want(rhs),
        "IsTimestamp" => v.as_str().and_then(parse_rfc3339).is_some() == want(rhs),
        "BooleanEquals" => matches!((v, rhs), (Value::Bool(a), Value::Bool(b)) if a == b),
        "StringMatches" => match (v, rhs) {
            (Value::String(s), Value::String(p)) => wildcard(p, s),
            _ => false,
        },
        _ => {
            let ord = if let Some(kind) = op.strip_prefix("Numeric") {
                numeric(v, rhs).map(|o| (kind, o))
            } else if let Some(kind) = op.strip_prefix("String") {
                match (v, rhs) {
                    (Value::String(a), Value::String(b)) => Some((kind, a.cmp(b))),
                    _ => None,
                }
            } else if let Some(kind) = op.strip_prefix("Timestamp") {
                match (
                    v.as_str().and_then(parse_rfc3339),
                    rhs.as_str().and_then(parse_rfc3339),
                ) {
                    (Some(a), Some(b)) => Some((kind, a.cmp(&b))),
                    _ => None,
                }
            } else {
                return Err(StateError::runtime(format!(
                    "unknown Choice operator '{op}'"
                )));
            };
            let Some((kind, o)) = ord else {
                return Ok(false);
            };
            match kind {
                "Equals" => o == Ordering::Equal,
                "LessThan" => o == Ordering::Less,
                "GreaterThan" => o == Ordering::Greater,
                "LessThanEquals" => o != Ordering::Greater,
                "GreaterThanEquals" => o != Ordering::Less,
                _ => {
                    return Err(StateError::runtime(format!(
                        "unknown Choice operator '{op}'"
                    )))
                }
            }
        }
    })
}

fn numeric(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                Some(x.cmp(&y))
            } else {
                x.as_f64()?.partial_cmp(&y.as_f64()?)
            }
        }
        _ => None,
    }
}

/// `StringMatches`: `*` matches any run of characters; `\*` and `\\` are literal.
fn wildcard(pattern: &str, s: &str) -> bool {
    enum Tok {
        Star,
        Ch(char),
    }
    let mut toks = Vec::new();
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some(e) => toks.push(Tok::Ch(e)),
                None => toks.push(Tok::Ch('\\')),
            },
            '*' => toks.push(Tok::Star),
            c => toks.push(Tok::Ch(c)),
        }
    }
    let chars: Vec<char> = s.chars().collect();
    // Classic greedy match with backtracking to the last star.
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < chars.len() {
        match toks.get(p) {
            Some(Tok::Ch(c)) if *c == chars[i] => {
                p += 1;
                i += 1;
            }
            Some(Tok::Star) => {
                star = Some((p, i));
                p += 1;
            }
            _ => match star {
                Some((sp, si)) => {
                    p = sp + 1;
                    i = si + 1;
                    star = Some((sp, si + 1));
                }
                None => return false,
            },
        }
    }
    while let Some(Tok::Star) = toks.get(p) {
        p += 1;
    }
    p == toks.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard("log-*.txt", "log-2026.txt"));
        assert!(wildcard("*", ""));
        assert!(!wildcard("a*b", "acd"));
        assert!(wildcard(r"a\*b", "a*b"));
        assert!(!wildcard(r"a\*b", "axb"));
        assert!(wildcard("*a*a", "banana"));
    }
}
