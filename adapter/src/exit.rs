//! Exit codes and the adapter's error type.

use std::fmt;
use std::process::ExitCode;

use tpf_sfn_compiler::Diagnostics;

/// What a command ends with, beyond success.
#[derive(Debug)]
pub enum Failure {
    /// Findings (validation errors) or drift (`--check`): exit 1. Already reported.
    Findings,
    /// Bad input: coded diagnostics, exit 2.
    Input(Diagnostics),
    /// Files that could not be read or written: exit 2.
    Io(String),
    /// An AWS call failed (classified, coded message): exit 2.
    Aws(String),
}

impl Failure {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Failure::Findings => ExitCode::from(1),
            Failure::Input(_) | Failure::Io(_) | Failure::Aws(_) => ExitCode::from(2),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Findings => f.write_str("findings reported"),
            Failure::Input(d) => write!(f, "{d}"),
            Failure::Io(m) | Failure::Aws(m) => f.write_str(m),
        }
    }
}

impl From<Diagnostics> for Failure {
    fn from(d: Diagnostics) -> Self {
        Failure::Input(d)
    }
}

pub type CmdResult = Result<(), Failure>;

/// Reads a file, naming it in the error.
pub fn read(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| {
        Failure::Io(format!(
            "error[IO_READ]: cannot read {}: {e}",
            path.display()
        ))
    })
}
