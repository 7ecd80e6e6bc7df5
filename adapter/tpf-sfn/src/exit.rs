//! How a command ends beyond success, and the exit code for it.

use std::process::ExitCode;

use tpf_sfn_compiler::Diagnostics;

use crate::cli::Format;
use crate::error::Error;
use crate::stdio::{self, errln, outln, Outcome};

/// What a command ends with, beyond success.
#[derive(Debug)]
pub enum Failure {
    /// Findings (validation errors) or drift (`--check`): exit 1. Already reported.
    Findings,
    /// Bad input: coded diagnostics, exit 2.
    Input(Diagnostics),
    /// A file, a socket or a service failed: a coded error, exit 2.
    Error(Error),
    /// A coded error already said inside the command's own JSON document (one document per
    /// run): exit 2, nothing more printed.
    SaidInOutput,
}

impl Failure {
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.status())
    }

    pub fn status(&self) -> u8 {
        match self {
            Failure::Findings => 1,
            Failure::Input(_) | Failure::Error(_) | Failure::SaidInOutput => 2,
        }
    }

    /// Says what is left to say, in the format the user asked for: JSON on stdout
    /// (`{"error": …}`, `{"diagnostics": […]}`) for `--format json` while stdout takes writes,
    /// the text report on stderr otherwise.
    fn print(&self, format: Format) {
        match self.to_json() {
            Some(json) if format == Format::Json && stdio::stdout_works() => outln!("{json}"),
            _ => {
                if let Some(text) = self.report() {
                    errln!("{text}");
                }
            }
        }
    }

    /// The failure as `--format json` says it: `{"error": …}` or `{"diagnostics": […]}`.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        match self {
            Failure::Input(d) if !d.0.is_empty() => Some(serde_json::json!({ "diagnostics": d.0 })),
            Failure::Error(e) => Some(e.to_json()),
            _ => None,
        }
    }

    /// What the user reads on stderr, if anything is left to say.
    pub fn report(&self) -> Option<String> {
        match self {
            Failure::Findings | Failure::SaidInOutput => None,
            Failure::Input(d) if d.0.is_empty() => None,
            Failure::Input(d) => Some(d.to_string()),
            Failure::Error(e) => Some(e.report().to_string()),
        }
    }
}

impl From<Diagnostics> for Failure {
    fn from(d: Diagnostics) -> Self {
        Failure::Input(d)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Error(e)
    }
}

pub type CmdResult = Result<(), Failure>;

/// The end of every command: its failure said in `format`, then what printing itself came to.
/// A reader that went away ends quietly (the command's own failure status, or the shell's
/// SIGPIPE status 141); a failed write (a full disk) is `STDOUT_WRITE` / `STDERR_WRITE`,
/// reported on stderr while stderr works, exit 2.
pub fn end(format: Format, result: CmdResult) -> ExitCode {
    let status = match &result {
        Ok(()) => 0,
        Err(failure) => {
            failure.print(format);
            failure.status()
        }
    };
    match stdio::finish() {
        Outcome::Written => ExitCode::from(status),
        Outcome::Closed if status == 0 => ExitCode::from(stdio::CLOSED_PIPE),
        Outcome::Closed => ExitCode::from(status),
        Outcome::Failed(e) => {
            if stdio::stderr_works() {
                errln!("{}", e.report());
            }
            ExitCode::from(2)
        }
    }
}
