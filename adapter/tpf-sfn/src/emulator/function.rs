//! A release's durable driver function, run as Lambda runs it: the `tpf-sfn-lambda` bootstrap
//! (`TPF_SFN_HANDLER=durable-driver`, the release's compiled spec in its environment) polling
//! the Lambda runtime API the emulator invokes, with Lambda's and DynamoDB's endpoints local.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;

/// The variable naming the bootstrap to run.
pub const BOOTSTRAP_VARIABLE: &str = "TPF_SFN_LAMBDA_BOOTSTRAP";

/// The bootstrap's name as cargo builds it.
const BINARY: &str = "tpf-sfn-lambda";

/// The bootstrap [`BOOTSTRAP_VARIABLE`] names, else the one cargo built next to this program
/// (`cargo build -p tpf-sfn-lambda` puts both in one folder).
pub fn bootstrap() -> Result<PathBuf, Error> {
    bootstrap_from(
        std::env::var_os(BOOTSTRAP_VARIABLE)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        std::env::current_exe().ok(),
    )
}

/// The bootstrap `given`, else the one next to `exe`.
fn bootstrap_from(given: Option<PathBuf>, exe: Option<PathBuf>) -> Result<PathBuf, Error> {
    let path = match given {
        Some(given) => given,
        None => exe
            .and_then(|exe| Some(exe.parent()?.join(BINARY)))
            .unwrap_or_else(|| PathBuf::from(BINARY)),
    };
    if path.is_file() {
        return Ok(path);
    }
    Err(Error::new(
        "EMULATOR_FUNCTION_MISSING",
        format!(
            "the durable driver function's bootstrap is not built: no {}",
            path.display()
        ),
    )
    .with_location(path.display().to_string())
    .with_hint(format!(
        "run `cargo build -p tpf-sfn-lambda` (with the profile that built tpf-sfn), or set \
         {BOOTSTRAP_VARIABLE} to the tpf-sfn-lambda binary"
    )))
}

/// One durable driver function as the emulator runs it.
pub struct DriverFunction<'a> {
    /// The function's name (Lambda's `AWS_LAMBDA_FUNCTION_NAME`).
    pub name: &'a str,
    /// The release's compiled spec (`durable.spec_text` of the compile).
    pub spec: &'a str,
    /// The `cargo lambda watch` runtime API it polls.
    pub runtime_port: u16,
    /// The local Lambda endpoint (checkpoints, TPF's gateway, the next generation's start).
    pub lambda_endpoint: &'a str,
    /// DynamoDB's endpoint (the emulator of TPF's tables).
    pub dynamodb_endpoint: &'a str,
    pub region: &'a str,
}

impl DriverFunction<'_> {
    /// The bootstrap's command: only this environment, as Lambda gives a function its own
    /// (static credentials, which the local endpoints do not check; no profile or instance
    /// metadata to look for).
    pub fn command(&self, bootstrap: &Path) -> Command {
        let mut c = Command::new(bootstrap);
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("_HANDLER", "bootstrap")
            .env("TPF_SFN_HANDLER", "durable-driver")
            .env("TPF_SFN_DURABLE_SPEC", self.spec)
            .env(
                "AWS_LAMBDA_RUNTIME_API",
                format!("http://127.0.0.1:{}/.rt", self.runtime_port),
            )
            .env("AWS_LAMBDA_FUNCTION_NAME", self.name)
            .env("AWS_LAMBDA_FUNCTION_VERSION", "1")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
            .env("AWS_ENDPOINT_URL_LAMBDA", self.lambda_endpoint)
            .env("AWS_ENDPOINT_URL_DYNAMODB", self.dynamodb_endpoint)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", self.region)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null");
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bootstrap_is_the_one_named_else_the_one_next_to_tpf_sfn_else_a_coded_error() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tpf-sfn");
        let e = bootstrap_from(None, Some(exe.clone())).unwrap_err();
        assert_eq!(e.code(), "EMULATOR_FUNCTION_MISSING");
        assert!(
            e.hint()
                .unwrap_or_default()
                .contains("cargo build -p tpf-sfn-lambda"),
            "{e}"
        );
        std::fs::write(dir.path().join(BINARY), "").unwrap();
        assert_eq!(
            bootstrap_from(None, Some(exe.clone())).unwrap(),
            dir.path().join(BINARY)
        );
        // A named one wins, and must exist.
        let named = dir.path().join("elsewhere");
        let e = bootstrap_from(Some(named.clone()), Some(exe.clone())).unwrap_err();
        assert_eq!(e.location(), Some(named.display().to_string().as_str()));
        std::fs::write(&named, "").unwrap();
        assert_eq!(
            bootstrap_from(Some(named.clone()), Some(exe)).unwrap(),
            named
        );
    }
}
