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
    /// Everything underneath in full (an AWS SDK error's whole context), shown only on request:
    /// it can be a 17 KB echoed definition.
    detail: Option<String>,
    show_detail: bool,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            hint: None,
            source: None,
            detail: None,
            show_detail: false,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<Cow<'static, str>>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_source(mut self, source: impl Into<Source>) -> Self {
        self.source = Some(source.into());
        self
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
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
            .with_hint("check that the path exists and is readable")
    }

    /// `cannot WHAT PATH` (write, create, rename…), with the I/O error as its cause.
    pub fn write(what: &str, path: &std::path::Path, source: std::io::Error) -> Self {
        Self::new("IO_WRITE", format!("cannot {what} {}", path.display()))
            .with_source(source)
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
        match &e.detail {
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
}
