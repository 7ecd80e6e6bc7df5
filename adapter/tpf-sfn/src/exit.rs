//! How a command ends beyond success, and the exit code for it.

use std::process::ExitCode;

use tpf_sfn_compiler::Diagnostics;

use crate::error::Error;

/// What a command ends with, beyond success.
#[derive(Debug)]
pub enum Failure {
    /// Findings (validation errors) or drift (`--check`): exit 1. Already reported.
    Findings,
    /// Bad input: coded diagnostics, exit 2.
    Input(Diagnostics),
    /// A file, a socket or a service failed: a coded error, exit 2.
    Error(Error),
}

impl Failure {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Failure::Findings => ExitCode::from(1),
            Failure::Input(_) | Failure::Error(_) => ExitCode::from(2),
        }
    }

    /// What the user reads on stderr, if anything is left to say.
    pub fn report(&self) -> Option<String> {
        match self {
            Failure::Findings => None,
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
