//! The argument parser's refusals as coded errors, like every other error tpf-sfn prints
//! (`error[USAGE_UNKNOWN_ARGUMENT]: …` and a hint), and the output format a user asked for
//! even when the arguments did not parse.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::Format;
use crate::error::Error;
use crate::exit::Failure;
use crate::stdio::{self, Stream};

/// What a parse failure ends with: `--help` and `--version` print to stdout and succeed; a
/// usage error is a coded [`Error`] (exit 2).
pub fn failure(e: &clap::Error) -> Result<(), Failure> {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            stdio::write(Stream::Out, format_args!("{}", e.render()));
            Ok(())
        }
        _ => Err(Failure::Error(error(e))),
    }
}

/// A usage error as a coded error: clap's first line is the message, its tips and the usage
/// line the hint, and the argument it is about the location.
pub fn error(e: &clap::Error) -> Error {
    let rendered = e.render().to_string();
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    let mut tips = Vec::new();
    let mut usage = None;
    for line in lines {
        if let Some(tip) = line.strip_prefix("tip: ") {
            tips.push(tip.to_owned());
        } else if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u.to_owned());
        }
    }
    let command = usage.as_deref().map(command_of).unwrap_or("tpf-sfn");
    if let Some(u) = &usage {
        tips.push(format!("usage: {u}"));
    }
    tips.push(format!("see `{command} --help`"));
    let hint = tips.join("; ");
    let error = match e.kind() {
        ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand => {
            Error::new("USAGE_UNKNOWN_ARGUMENT", message).with_hint(hint)
        }
        ErrorKind::InvalidValue
        | ErrorKind::ValueValidation
        | ErrorKind::InvalidUtf8
        | ErrorKind::NoEquals
        | ErrorKind::TooManyValues
        | ErrorKind::TooFewValues
        | ErrorKind::WrongNumberOfValues => {
            Error::new("USAGE_INVALID_VALUE", message).with_hint(hint)
        }
        ErrorKind::MissingRequiredArgument
        | ErrorKind::MissingSubcommand
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let message = if first.starts_with("error: ") {
                message
            } else {
                // clap prints the whole help here; the first line is not an error message.
                format!("`{command}` needs a command")
            };
            Error::new("USAGE_MISSING_ARGUMENT", message).with_hint(hint)
        }
        ErrorKind::ArgumentConflict => Error::new("USAGE_CONFLICT", message).with_hint(hint),
        _ => Error::new("USAGE", message).with_hint(hint),
    };
    match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => error.with_location(arg.clone()),
        Some(ContextValue::Strings(args)) => error.with_location(args.join(", ")),
        _ => error,
    }
}

/// `tpf-sfn simulate` out of `tpf-sfn simulate [OPTIONS] [CONTRACT]`.
fn command_of(usage: &str) -> &str {
    let end = usage
        .char_indices()
        .find(|&(i, c)| {
            c == ' '
                && !usage[i + 1..].split(' ').next().is_some_and(|w| {
                    w.starts_with(|c: char| c.is_ascii_lowercase())
                        && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                })
        })
        .map_or(usage.len(), |(i, _)| i);
    &usage[..end]
}

/// The format the arguments ask for (`--format json` or `--format=json`), read from the raw
/// arguments so that an error before the command ran is JSON too when the user asked for it.
pub fn format_asked(args: &[OsString]) -> Format {
    let mut asked = Format::Text;
    let mut args = args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = args.next() {
        let value = match arg.strip_prefix("--format") {
            Some("") => args.next().map(|v| v.into_owned()),
            Some(rest) => rest.strip_prefix('=').map(str::to_owned),
            None => None,
        };
        match value.as_deref() {
            Some("json") => asked = Format::Json,
            Some("text") => asked = Format::Text,
            _ => {}
        }
    }
    asked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_read_off_the_usage_line() {
        assert_eq!(
            command_of("tpf-sfn simulate [OPTIONS] [CONTRACT]"),
            "tpf-sfn simulate"
        );
        assert_eq!(
            command_of("tpf-sfn tables create [OPTIONS]"),
            "tpf-sfn tables create"
        );
        assert_eq!(command_of("tpf-sfn <COMMAND>"), "tpf-sfn");
        assert_eq!(
            command_of("tpf-sfn simulate --format <FORMAT> [CONTRACT]"),
            "tpf-sfn simulate"
        );
        assert_eq!(
            command_of("tpf-sfn completions <SHELL>"),
            "tpf-sfn completions"
        );
    }

    #[test]
    fn the_asked_format_is_found_in_either_spelling() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            format_asked(&args(&["x", "--format", "json"])),
            Format::Json
        );
        assert_eq!(
            format_asked(&args(&["x", "--format=json", "--bad"])),
            Format::Json
        );
        assert_eq!(
            format_asked(&args(&["x", "--formats", "json"])),
            Format::Text
        );
        assert_eq!(format_asked(&args(&["x", "--format"])), Format::Text);
    }
}
