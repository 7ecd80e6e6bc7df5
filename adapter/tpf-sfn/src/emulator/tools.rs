//! The emulator's tools: AWS's durable execution emulator (`dex-local-runner`, from its Python
//! testing SDK) and cargo-lambda (`cargo lambda watch` serves the Lambda runtime API the
//! emulator invokes), as `scripts/dex.sh install` lays them out in `.tools/dex`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;

/// Where `scripts/dex.sh install` puts the tools, under the repository's root.
pub const DIR: &str = ".tools/dex";

/// The variable naming another folder laid out as [`DIR`].
pub const DIR_VARIABLE: &str = "TPF_SFN_DEX_TOOLS";

/// The script that installs them, and how.
pub const INSTALL: &str = "scripts/dex.sh install";

/// An installed set of tools.
#[derive(Debug, Clone)]
pub struct Tools {
    dir: PathBuf,
}

impl Tools {
    /// The folder [`DIR_VARIABLE`] names, else the nearest `.tools/dex` in the current folder
    /// or one above it (the repository's root, from any folder of a checkout).
    pub fn find() -> Result<Tools, Error> {
        if let Some(dir) = std::env::var_os(DIR_VARIABLE).filter(|d| !d.is_empty()) {
            return Tools::at(Path::new(&dir));
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        let found = cwd
            .ancestors()
            .map(|a| a.join(DIR))
            .find(|d| d.is_dir())
            .unwrap_or_else(|| cwd.join(DIR));
        Tools::at(&found)
    }

    /// The tools in `dir`, both present.
    pub fn at(dir: &Path) -> Result<Tools, Error> {
        let tools = Tools {
            dir: dir.to_path_buf(),
        };
        for (tool, path) in [
            (
                "the durable execution emulator (dex-local-runner)",
                tools.runner(),
            ),
            ("cargo-lambda", tools.cargo_lambda()),
        ] {
            if !path.is_file() {
                return Err(Error::new(
                    "EMULATOR_MISSING",
                    format!("{tool} is not installed: no {}", path.display()),
                )
                .with_location(dir.display().to_string())
                .with_hint(format!(
                    "run `{INSTALL}` in the repository (it installs the emulator and cargo-lambda \
                     into {DIR}), or set {DIR_VARIABLE} to the folder it installed them in"
                )));
            }
        }
        Ok(tools)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn runner(&self) -> PathBuf {
        self.dir.join("bin/dex-local-runner")
    }

    fn cargo_lambda(&self) -> PathBuf {
        self.dir.join("bin/cargo-lambda")
    }

    /// The emulator serving its API on `127.0.0.1:port`, its executions in memory. It needs no
    /// AWS account: its own SDK client gets static credentials and no profile.
    pub fn emulator(&self, port: u16) -> Command {
        let mut c = Command::new("python3");
        c.arg(self.runner())
            .args(["start-server", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--log-level", "WARNING"])
            .args(["--execution-timeout", "900"])
            // In memory, whatever AWS_DEX_STORE_TYPE says: nothing written where it runs.
            .args(["--store-type", "memory"])
            .env("PYTHONPATH", &self.dir)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null");
        c
    }

    /// A Lambda runtime API (`cargo lambda watch`, which starts no function of its own) on
    /// `127.0.0.1:port`, run in `manifest_dir` (see [`write_runtime_manifest`]).
    pub fn runtime_api(&self, port: u16, manifest_dir: &Path) -> Command {
        let mut c = Command::new(self.cargo_lambda());
        c.args(["lambda", "watch", "--only-lambda-apis", "--ignore-changes"])
            .args(["-A", "127.0.0.1", "-P", &port.to_string()])
            .current_dir(manifest_dir);
        c
    }
}

/// `cargo lambda watch` reads a package's metadata before it serves, even when it builds
/// nothing: a package of its own (its own workspace, so a checkout around it is not read) with
/// no code, in `dir`.
pub fn write_runtime_manifest(dir: &Path) -> Result<(), Error> {
    const MANIFEST: &str =
        "# Read by `cargo lambda watch` for its metadata; nothing is built from it.\n\
        [package]\nname = \"tpf-sfn-durable-function\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
        [[bin]]\nname = \"bootstrap\"\npath = \"bootstrap.rs\"\n[workspace]\n";
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(dir.join("Cargo.toml"), MANIFEST))
        .map_err(|e| {
            Error::new(
                "EMULATOR_MANIFEST",
                "cannot write the manifest `cargo lambda watch` reads",
            )
            .with_location(dir.display().to_string())
            .with_source(e)
            .with_hint("the folder must be writable (it is under dev's --out)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_the_tools_names_the_script_that_installs_them() {
        let dir = tempfile::tempdir().unwrap();
        let e = Tools::at(dir.path()).unwrap_err();
        assert_eq!(e.code(), "EMULATOR_MISSING");
        assert!(e.to_string().contains("dex-local-runner"), "{e}");
        let hint = e.hint().unwrap_or_default();
        assert!(hint.contains("scripts/dex.sh install"), "{hint}");
        // One of the two present is still missing the other.
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/dex-local-runner"), "").unwrap();
        let e = Tools::at(dir.path()).unwrap_err();
        assert!(e.to_string().contains("cargo-lambda"), "{e}");
        std::fs::write(dir.path().join("bin/cargo-lambda"), "").unwrap();
        assert!(Tools::at(dir.path()).is_ok());
    }
}
