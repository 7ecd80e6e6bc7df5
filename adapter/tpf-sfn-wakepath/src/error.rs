//! The adapter's one error type: a stable code users' scripts match on (`IO_READ`,
//! `DEPLOY_ACCESS_DENIED`, …), what failed, a hint when there is something to do about it, and
//! the error underneath. AWS failures get their codes and hints from [`crate::aws::errors`].
//!
//! People see [`Error::report`]: `error[CODE]: what failed: cause: cause…` and the hint, the
//! same layout as the compiler's diagnostics.

use std::borrow::Cow;
use std::fmt;

type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    code: Cow<'static, str>,
    message: String,
    hint: Option<Cow<'static, str>>,
    #[source]
    source: Option<Source>,
    /// Where and what underneath, which few errors have: boxed, so that every `Result` carrying
    /// an error stays small.
    context: Option<Box<Context>>,
    show_detail: bool,
}

#[derive(Debug, Default)]
struct Context {
    /// What the error is about when the message does not say it in a form a program can use:
    /// the file of an I/O error, the argument of a usage error.
    location: Option<String>,
    /// Everything underneath in full (an AWS SDK error's whole context), shown only on request:
    /// it can be a 17 KB echoed definition.
    detail: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            hint: None,
            source: None,
            context: None,
            show_detail: false,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<Cow<'static, str>>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.context.get_or_insert_default().location = Some(location.into());
        self
    }

    pub fn with_source(mut self, source: impl Into<Source>) -> Self {
        self.source = Some(source.into());
        self
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.context.get_or_insert_default().detail = Some(detail.into());
        self
    }

    /// The same error, reported with its detail (`--verbose`).
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.show_detail = verbose;
        self
    }

    /// `cannot read PATH`, with the I/O error as its cause.
    pub fn read(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::new("IO_READ", format!("cannot read {}", path.display()))
            .with_source(source)
            .with_location(path.display().to_string())
            .with_hint("check that the path exists and is readable")
    }

    /// `cannot WHAT PATH` (write, create, rename…), with the I/O error as its cause.
    pub fn write(what: &str, path: &std::path::Path, source: std::io::Error) -> Self {
        Self::new("IO_WRITE", format!("cannot {what} {}", path.display()))
            .with_source(source)
            .with_location(path.display().to_string())
            .with_hint("check that the directory exists and is writable and the disk has room")
    }

    /// The same error, said by `who` (one part of a larger command).
    pub fn within(mut self, who: &str) -> Self {
        self.message = format!("{who}: {}", self.message);
        self
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    pub fn location(&self) -> Option<&str> {
        self.context.as_ref()?.location.as_deref()
    }

    /// The error for `--format json`: `{"error": {code, message, hint, location}}`, the message
    /// with its causes as in the text report.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"error": {
            "code": self.code,
            "message": chain(self),
            "hint": self.hint,
            "location": self.location(),
        }})
    }

    /// The error as people read it.
    pub fn report(&self) -> Report<'_> {
        Report(self)
    }
}

/// `error[CODE]: message: cause: …` and `  = hint: …`.
pub struct Report<'a>(&'a Error);

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        let causes = chain(e);
        write!(f, "error[{}]: {causes}", e.code)?;
        if let Some(hint) = &e.hint {
            write!(f, "\n  = hint: {hint}")?;
        }
        match e.context.as_ref().and_then(|c| c.detail.as_ref()) {
            Some(detail) if e.show_detail && !causes.ends_with(detail.as_str()) => {
                write!(f, "\n  = detail: {detail}")
            }
            _ => Ok(()),
        }
    }
}

/// An error and every cause below it, joined with `: `.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let next = c.to_string();
        // Some errors repeat their cause in their own message; say it once.
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_the_code_the_causes_and_the_hint() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = Error::read(std::path::Path::new("x.json"), io).with_hint("check the path");
        assert_eq!(e.code(), "IO_READ");
        assert_eq!(
            e.report().to_string(),
            "error[IO_READ]: cannot read x.json: no such file\n  = hint: check the path"
        );
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(
            Error::new("X", "plain").report().to_string(),
            "error[X]: plain"
        );
    }

    #[test]
    fn the_json_form_has_the_code_message_hint_and_location() {
        let e = Error::new("USAGE_UNKNOWN_ARGUMENT", "unexpected argument '--x' found")
            .with_hint("see `tpf-sfn --help`")
            .with_location("--x");
        assert_eq!(
            e.to_json(),
            serde_json::json!({"error": {
                "code": "USAGE_UNKNOWN_ARGUMENT",
                "message": "unexpected argument '--x' found",
                "hint": "see `tpf-sfn --help`",
                "location": "--x",
            }})
        );
        assert_eq!(
            Error::new("X", "m").to_json()["error"]["hint"],
            serde_json::Value::Null
        );
    }
}
