//! The compiler layer's one diagnostic type.
//!
//! Every problem the compiler or the validator finds — in a contract, a release descriptor, a
//! driver configuration or an ASL definition — is a [`Diagnostic`]: a stable code, a severity, a
//! location (file plus JSON pointer, or line and column for syntax errors), a message and a hint.
//! Codes are part of the public surface: tests and users' CI match on them, so they never change
//! meaning once released.

use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// Where a diagnostic points. `pointer` is an RFC 6901 JSON pointer into the document (or a
/// dotted TOML key path for configuration files); `line`/`column` are 1-based and set for syntax
/// errors, where no pointer exists yet.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Location {
    pub fn file(file: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            ..Default::default()
        }
    }

    pub fn pointer(file: impl Into<String>, pointer: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            pointer: Some(pointer.into()),
            ..Default::default()
        }
    }

    pub fn position(file: impl Into<String>, line: usize, column: usize) -> Self {
        Location {
            file: file.into(),
            pointer: None,
            line: Some(line),
            column: Some(column),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(pointer) = &self.pointer {
            write!(f, "#{}", if pointer.is_empty() { "/" } else { pointer })?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub location: Location,
    pub message: String,
    pub hint: String,
}

impl Diagnostic {
    pub fn error(code: &'static str, location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            location,
            message: message.into(),
            hint: String::new(),
        }
    }

    pub fn warning(code: &'static str, location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, location, message)
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{level}[{}]: {}\n  --> {}",
            self.code, self.message, self.location
        )?;
        if !self.hint.is_empty() {
            write!(f, "\n  = hint: {}", self.hint)?;
        }
        Ok(())
    }
}

/// A list of diagnostics that stops a stage. The stage's warnings travel with its errors so a
/// user sees everything at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

/// Escapes one reference token for an RFC 6901 JSON pointer.
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Builds a JSON pointer from tokens.
pub fn pointer<I, S>(tokens: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for t in tokens {
        out.push('/');
        out.push_str(&pointer_token(t.as_ref()));
    }
    out
}

/// Turns a `serde_json` syntax or data error into a positioned diagnostic. Truncated input is
/// reported at the end of the file, where the parser gave up.
pub fn json_syntax(code: &'static str, file: &str, err: &serde_json::Error) -> Diagnostic {
    let what = match err.classify() {
        serde_json::error::Category::Eof => {
            "the file ends before the JSON document does (truncated?)"
        }
        serde_json::error::Category::Syntax => "the file is not valid JSON",
        serde_json::error::Category::Data => "the JSON has an unexpected shape",
        serde_json::error::Category::Io => "the file could not be read",
    };
    Diagnostic::error(code, Location::position(file, err.line(), err.column()), format!("{what}: {err}"))
        .with_hint("fix the JSON at the reported line and column; `python3 -m json.tool FILE` shows the same position")
}
