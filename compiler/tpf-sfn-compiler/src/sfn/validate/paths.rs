//! JSONPath references and intrinsic-function calls as the JSONPath dialect of ASL allows them
//! in `*Path` fields and in the values of `.$` keys.
//!
//! The checker is deliberately lenient about what may appear inside brackets (filters, slices,
//! unions) and strict about the shape around it: a root (`$`, `$$`), then `.name`, `..name` or
//! `[...]` segments, nothing empty and nothing unbalanced. A root followed directly by a name
//! (`$count`) is a workflow-variable reference, which is reported by the query-language rule,
//! not as a syntax error.

/// Why a path, an intrinsic call or a dynamic value is not well formed: the message the
/// validator's diagnostic carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PathSyntaxError(pub String);

impl From<String> for PathSyntaxError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for PathSyntaxError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// What a syntactically valid path starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathRoot {
    /// `$`: the state input.
    Input,
    /// `$$`: the context object.
    Context,
    /// `$name`: a workflow variable (JSONPath + `Assign`).
    Variable,
}

/// Checks a JSONPath reference.
pub(crate) fn check_path(s: &str) -> Result<PathRoot, PathSyntaxError> {
    let (root, rest) = if let Some(rest) = s.strip_prefix("$$") {
        (PathRoot::Context, rest)
    } else if let Some(rest) = s.strip_prefix('$') {
        match rest.chars().next() {
            Some(c) if c.is_alphabetic() || c == '_' => {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                let (name, tail) = rest.split_at(end);
                if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Err(format!("`${name}` is not a valid variable name").into());
                }
                check_segments(tail)?;
                return Ok(PathRoot::Variable);
            }
            _ => (PathRoot::Input, rest),
        }
    } else {
        return Err(
            "a path must start with `$` (state input) or `$$` (context object)"
                .to_string()
                .into(),
        );
    };
    check_segments(rest)?;
    Ok(root)
}

fn check_segments(mut rest: &str) -> Result<(), PathSyntaxError> {
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("..") {
            rest = take_segment(after, true)?;
        } else if let Some(after) = rest.strip_prefix('.') {
            rest = take_segment(after, false)?;
        } else if rest.starts_with('[') {
            rest = take_bracket(rest)?;
        } else {
            return Err(format!(
                "unexpected `{}` (expected `.name` or `[...]`)",
                first_char(rest)
            )
            .into());
        }
    }
    Ok(())
}

fn first_char(s: &str) -> String {
    s.chars().next().map(String::from).unwrap_or_default()
}

/// After `.` or `..`: a member name (or `*`), or for `..` also a bracket.
fn take_segment(s: &str, deep: bool) -> Result<&str, PathSyntaxError> {
    if deep && s.starts_with('[') {
        return take_bracket(s);
    }
    let end = s.find(['.', '[']).unwrap_or(s.len());
    let (name, tail) = s.split_at(end);
    if name.is_empty() {
        return Err("empty member name after `.`".to_string().into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_whitespace() || matches!(c, ']' | '(' | ')' | '\'' | '"' | ','))
    {
        return Err(format!(
            "member name `{name}` contains `{c}`; use bracket notation ['...'] for such names"
        )
        .into());
    }
    Ok(tail)
}

/// A `[...]` segment, balanced over nested brackets, parentheses and quotes.
fn take_bracket(s: &str) -> Result<&str, PathSyntaxError> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '(' => depth += 1,
            ']' | ')' => {
                depth = depth.checked_sub(1).ok_or("unbalanced `]` or `)`")?;
                if depth == 0 {
                    if c != ']' {
                        return Err("`(` closed before its `[`".to_string().into());
                    }
                    let inner = s.get(1..i).unwrap_or("");
                    if inner.trim().is_empty() {
                        return Err("empty `[]`".to_string().into());
                    }
                    return Ok(s.get(i + 1..).unwrap_or(""));
                }
            }
            _ => {}
        }
    }
    Err("unterminated `[` or quote".to_string().into())
}

/// The member names of a simple path (`$.a.b`, `$['a'].b`), or `None` when the path has
/// wildcards, indexes, filters or another root and so names no single fixed location.
pub(crate) fn simple_segments(path: &str) -> Option<Vec<String>> {
    let mut rest = path.strip_prefix('$')?;
    if rest.starts_with('$') {
        return None;
    }
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']")?;
            let name = after.get(..end)?;
            if name.contains(['\\', '\'']) {
                return None;
            }
            out.push(name.to_string());
            rest = after.get(end + 2..)?;
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = after.get(..end)?;
            if name.is_empty() || name == "*" {
                return None;
            }
            out.push(name.to_string());
            rest = after.get(end..)?;
        } else {
            return None;
        }
    }
    Some(out)
}

/// The intrinsic functions of the JSONPath dialect.
pub(crate) const INTRINSICS: &[&str] = &[
    "Array",
    "ArrayContains",
    "ArrayGetItem",
    "ArrayLength",
    "ArrayPartition",
    "ArrayRange",
    "ArrayUnique",
    "Base64Decode",
    "Base64Encode",
    "Format",
    "Hash",
    "JsonMerge",
    "JsonToString",
    "MathAdd",
    "MathRandom",
    "StringSplit",
    "StringToJson",
    "UUID",
];

/// Nesting beyond this is surely a mistake, and refusing it bounds the parser's recursion.
const MAX_INTRINSIC_DEPTH: usize = 16;

/// A parsed intrinsic call such as `States.MathAdd($.n, 1)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Intrinsic {
    /// The name after `States.`.
    pub name: String,
    pub args: Vec<IntrinsicArg>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum IntrinsicArg {
    /// A single-quoted string, unescaped.
    String(String),
    Number(f64),
    Bool(bool),
    Null,
    /// A JSONPath (`$...`, `$$...`).
    Path(String),
    Call(Intrinsic),
}

/// Parses an intrinsic call. Strings are single-quoted with `\'`, `\{`, `\}` and `\\` as the
/// only escapes; arguments are strings, numbers, booleans, `null`, paths or nested calls.
pub fn parse_intrinsic(s: &str) -> Result<Intrinsic, PathSyntaxError> {
    let mut p = Parser {
        chars: s.chars().collect(),
        pos: 0,
    };
    let call = p.call(0)?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(format!(
            "unexpected text after the closing `)` at character {}",
            p.pos + 1
        )
        .into());
    }
    Ok(call)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, text: &str) -> bool {
        let n = text.chars().count();
        let matches = self
            .chars
            .get(self.pos..self.pos + n)
            .is_some_and(|w| w.iter().copied().eq(text.chars()));
        if matches {
            self.pos += n;
        }
        matches
    }

    fn call(&mut self, depth: usize) -> Result<Intrinsic, PathSyntaxError> {
        if depth > MAX_INTRINSIC_DEPTH {
            return Err(
                format!("intrinsic calls nested more than {MAX_INTRINSIC_DEPTH} deep").into(),
            );
        }
        if !self.eat("States.") {
            return Err("an intrinsic call starts with `States.`".to_string().into());
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        let name: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or(&[])
            .iter()
            .collect();
        if !INTRINSICS.contains(&name.as_str()) {
            return Err(format!("`States.{name}` is not an intrinsic function").into());
        }
        if !self.eat("(") {
            return Err(format!("`States.{name}` must be followed by `(`").into());
        }
        let mut args = Vec::new();
        self.skip_ws();
        if self.eat(")") {
            return Ok(Intrinsic { name, args });
        }
        loop {
            self.skip_ws();
            args.push(self.arg(depth)?);
            self.skip_ws();
            if self.eat(")") {
                return Ok(Intrinsic { name, args });
            }
            if !self.eat(",") {
                return Err(match self.peek() {
                    Some(c) => format!(
                        "expected `,` or `)` at character {}, found `{c}`",
                        self.pos + 1
                    ),
                    None => "missing closing `)`".to_string(),
                }
                .into());
            }
        }
    }

    fn arg(&mut self, depth: usize) -> Result<IntrinsicArg, PathSyntaxError> {
        match self.peek() {
            Some('\'') => self.string().map(IntrinsicArg::String),
            Some('$') => self.path().map(IntrinsicArg::Path),
            Some('S') => self.call(depth + 1).map(IntrinsicArg::Call),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number().map(IntrinsicArg::Number),
            Some(_) if self.eat("true") => Ok(IntrinsicArg::Bool(true)),
            Some(_) if self.eat("false") => Ok(IntrinsicArg::Bool(false)),
            Some(_) if self.eat("null") => Ok(IntrinsicArg::Null),
            Some(c) => Err(format!(
                "unexpected `{c}` at character {}: arguments are 'strings', numbers, paths or intrinsic calls",
                self.pos + 1
            ).into()),
            None => Err("missing argument and closing `)`".to_string().into()),
        }
    }

    fn string(&mut self) -> Result<String, PathSyntaxError> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\'' => return Ok(out),
                '\\' => match self.peek() {
                    Some(e @ ('\'' | '{' | '}' | '\\')) => {
                        self.pos += 1;
                        if matches!(e, '{' | '}') {
                            out.push('\\');
                        }
                        out.push(e);
                    }
                    Some(e) => {
                        return Err(format!(
                            "invalid escape `\\{e}` in a string (allowed: \\' \\{{ \\}} \\\\)"
                        )
                        .into())
                    }
                    None => break,
                },
                _ => out.push(c),
            }
        }
        Err(format!("string opened at character {} is not closed", open + 1).into())
    }

    fn number(&mut self) -> Result<f64, PathSyntaxError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.pos += 1;
        }
        let text: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or(&[])
            .iter()
            .collect();
        text.parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .ok_or_else(|| PathSyntaxError(format!("`{text}` is not a number")))
    }

    /// A path argument runs to the next top-level `,` or `)`.
    fn path(&mut self) -> Result<String, PathSyntaxError> {
        let start = self.pos;
        let mut depth = 0usize;
        let mut quote = false;
        while let Some(c) = self.peek() {
            match c {
                '\'' | '"' => quote = !quote,
                '[' | '(' if !quote => depth += 1,
                ']' if !quote => depth = depth.saturating_sub(1),
                ')' if !quote && depth == 0 => break,
                ')' if !quote => depth -= 1,
                ',' if !quote && depth == 0 => break,
                _ => {}
            }
            self.pos += 1;
        }
        let text: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or(&[])
            .iter()
            .collect();
        let text = text.trim_end().to_string();
        check_path(&text).map_err(|e| format!("argument `{text}`: {e}"))?;
        Ok(text)
    }
}

/// Every path an intrinsic call reads, nested calls included.
pub(crate) fn intrinsic_paths(call: &Intrinsic) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![call];
    while let Some(c) = stack.pop() {
        for a in &c.args {
            match a {
                IntrinsicArg::Path(p) => out.push(p.as_str()),
                IntrinsicArg::Call(inner) => stack.push(inner),
                _ => {}
            }
        }
    }
    out
}

/// The value of a `.$` key: a path or an intrinsic call. Returns the paths it reads.
pub(crate) fn check_dynamic_value(s: &str) -> Result<Vec<String>, PathSyntaxError> {
    if s.starts_with("States.") {
        let call = parse_intrinsic(s)?;
        Ok(intrinsic_paths(&call)
            .into_iter()
            .map(str::to_string)
            .collect())
    } else {
        check_path(s)?;
        Ok(vec![s.to_string()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(check_path("$"), Ok(PathRoot::Input));
        assert_eq!(check_path("$.a.b[0]['c d']"), Ok(PathRoot::Input));
        assert_eq!(check_path("$$.Task.Token"), Ok(PathRoot::Context));
        assert_eq!(check_path("$count.x"), Ok(PathRoot::Variable));
        assert_eq!(check_path("$..a[?(@.x > 1)]"), Ok(PathRoot::Input));
        for bad in [
            "", "a", "$.", "$.a.", "$a b", "$.a[", "$.a[]", "$..", "$.a b", "$ x",
        ] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn segments() {
        assert_eq!(simple_segments("$"), Some(vec![]));
        assert_eq!(
            simple_segments("$.driver.iteration"),
            Some(vec!["driver".into(), "iteration".into()])
        );
        assert_eq!(
            simple_segments("$['driver'].iteration"),
            Some(vec!["driver".into(), "iteration".into()])
        );
        assert_eq!(simple_segments("$.a[0]"), None);
        assert_eq!(simple_segments("$$.a"), None);
    }

    #[test]
    fn intrinsics() {
        let c = parse_intrinsic("States.MathAdd($.driver.iteration, 1)").unwrap();
        assert_eq!(c.name, "MathAdd");
        assert_eq!(
            c.args,
            vec![
                IntrinsicArg::Path("$.driver.iteration".into()),
                IntrinsicArg::Number(1.0)
            ]
        );
        let c = parse_intrinsic(
            r"States.Format('it\'s {} \{x\}', States.JsonToString($.a[0]), -1.5, true, null)",
        )
        .unwrap();
        assert_eq!(c.args.len(), 5);
        assert_eq!(c.args[0], IntrinsicArg::String(r"it's {} \{x\}".into()));
        for bad in [
            "States.MathAdd($.a, 1",
            "States.Nope()",
            "States.Format('x)",
            "States.Format('\\n')",
            "States.MathAdd($.a 1)",
            "States.MathAdd($.a, 1) x",
            "States.MathAdd(,)",
            "States.Format(foo)",
        ] {
            assert!(parse_intrinsic(bad).is_err(), "{bad}");
        }
    }
}
