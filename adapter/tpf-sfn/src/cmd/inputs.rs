//! Reading the compiler's three inputs from files, shared by every command that compiles.

use std::path::{Path, PathBuf};

use tpf_sfn_compiler::compile::Input;

use crate::cli::Binding;
use crate::error::Error;
use crate::exit::Failure;
use crate::input::read;

/// The bytes of a contract, release and config, owned, so an `Input` can borrow them.
pub struct InputFiles {
    pub contract_file: String,
    pub contract: Vec<u8>,
    pub release: Option<(String, Vec<u8>)>,
    pub config: Option<(String, String)>,
}

impl InputFiles {
    pub fn read(
        contract: &Path,
        release: Option<&PathBuf>,
        config: Option<&PathBuf>,
    ) -> Result<InputFiles, Failure> {
        let release = match release {
            Some(p) => Some((p.display().to_string(), read(p)?)),
            None => None,
        };
        let config = match config_path(config) {
            Some(p) => Some(read_config(&p)?),
            None => None,
        };
        Ok(InputFiles {
            contract_file: contract.display().to_string(),
            contract: read(contract)?,
            release,
            config,
        })
    }

    /// The bundled restaurant-approval sample (today's TPF's contract and release), no config.
    pub fn bundled() -> InputFiles {
        use tpf_sfn_compiler::bundled::{
            RESTAURANT_CONTRACT, RESTAURANT_CONTRACT_FILE, RESTAURANT_RELEASE,
            RESTAURANT_RELEASE_FILE,
        };
        InputFiles {
            contract_file: format!("{RESTAURANT_CONTRACT_FILE} (bundled)"),
            contract: RESTAURANT_CONTRACT.to_vec(),
            release: Some((
                format!("{RESTAURANT_RELEASE_FILE} (bundled)"),
                RESTAURANT_RELEASE.to_vec(),
            )),
            config: None,
        }
    }

    pub fn input(&self, binding: Option<Binding>, allow_unverified_hash: bool) -> Input<'_> {
        Input {
            contract_file: &self.contract_file,
            contract: &self.contract,
            release: self
                .release
                .as_ref()
                .map(|(f, b)| (f.as_str(), b.as_slice())),
            config: self.config.as_ref().map(|(f, t)| (f.as_str(), t.as_str())),
            binding: binding.map(Into::into),
            allow_unverified_hash,
        }
    }
}

/// The file `tpf-sfn init` writes by default.
pub const DEFAULT_CONFIG: &str = "tpf-sfn.toml";

/// The configuration to compile with: `--config`, or else `./tpf-sfn.toml` when the working
/// directory has one, so that the file `init` wrote (and the placeholder hints point at) is the
/// one a plain `compile` reads.
pub fn config_path(explicit: Option<&PathBuf>) -> Option<PathBuf> {
    explicit.cloned().or_else(|| {
        let found = PathBuf::from(DEFAULT_CONFIG);
        found.symlink_metadata().is_ok().then_some(found)
    })
}

/// A config file as (name, text).
pub fn read_config(p: &Path) -> Result<(String, String), Failure> {
    let text = String::from_utf8(read(p)?).map_err(|e| {
        Error::new(
            "CONFIG_ENCODING",
            format!("{} is not UTF-8 text", p.display()),
        )
        .with_source(e)
        .with_hint("save the configuration as UTF-8")
    })?;
    Ok((p.display().to_string(), text))
}
