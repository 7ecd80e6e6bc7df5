//! The whole compile: inputs → backend-neutral plan → a backend's lowering (Step Functions:
//! `crate::sfn`). Pure: bytes in, file contents out. Writing them is the caller's job, which is
//! how the CLI can promise all-or-nothing output.

use crate::config::{BindingKind, DriverConfig};
use crate::contract::{load_contract, Contract, ContractOptions, LoadedContract};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::plan::{self, DriverPlan};
use crate::release::{load_release, resolve_identity};
use crate::sfn::asl::StateMachine;
use crate::sfn::manifest::Manifest;
use crate::sfn::{self, SfnPlan};

#[derive(Debug, Clone, Default)]
pub struct Input<'a> {
    pub contract_file: &'a str,
    pub contract: &'a [u8],
    pub release: Option<(&'a str, &'a [u8])>,
    pub config: Option<(&'a str, &'a str)>,
    /// `--binding`, which wins over the config file's `binding.kind`.
    pub binding: Option<BindingKind>,
    pub allow_unverified_hash: bool,
}

#[derive(Debug, Clone)]
pub struct Output {
    /// The contract as loaded (and hash-checked).
    pub contract: Contract,
    pub plan: DriverPlan,
    /// The Step Functions lowering's own decisions: machine and state names, loop budget, ARNs.
    pub sfn: SfnPlan,
    pub driver: StateMachine,
    pub sweeper: StateMachine,
    pub manifest: Manifest,
    /// `(file name, contents)` in a stable order.
    pub files: Vec<(String, String)>,
    pub warnings: Vec<Diagnostic>,
}

/// Loads and checks the three inputs without rendering anything.
pub fn load_inputs(
    input: &Input,
) -> Result<(LoadedContract, DriverPlan, Vec<Diagnostic>), Diagnostics> {
    let mut warnings = Vec::new();
    let loaded = load_contract(
        input.contract_file,
        input.contract,
        ContractOptions {
            allow_unverified_hash: input.allow_unverified_hash,
        },
    )?;
    warnings.extend(loaded.warnings.iter().cloned());

    let release = match input.release {
        Some((file, bytes)) => Some((file, load_release(file, bytes)?)),
        None => None,
    };
    let identity = resolve_identity(&loaded.contract, release.as_ref().map(|(f, r)| (*f, r)))?;

    let mut config = match input.config {
        Some((file, text)) => DriverConfig::from_toml(file, text)?,
        None => DriverConfig::default(),
    };
    if let Some(kind) = input.binding {
        config.binding.kind = kind;
    }
    let config_file = input
        .config
        .map(|(f, _)| f)
        .unwrap_or("<embedded default config>");
    let findings = config.check(config_file);
    if findings.iter().any(Diagnostic::is_error) {
        return Err(Diagnostics(findings));
    }
    warnings.extend(findings);
    warnings.extend(config.placeholder_warnings(config_file));

    let plan = plan::build(&loaded.contract, &loaded.hash, &identity, &config);
    Ok((loaded, plan, warnings))
}

pub fn compile(input: &Input) -> Result<Output, Diagnostics> {
    let (loaded, plan, mut warnings) = load_inputs(input)?;
    let lowered = sfn::lower(&plan, &loaded.contract)?;
    warnings.extend(lowered.warnings);
    Ok(Output {
        contract: loaded.contract,
        plan,
        sfn: lowered.sfn,
        driver: lowered.driver,
        sweeper: lowered.sweeper,
        manifest: lowered.manifest,
        files: lowered.files,
        warnings,
    })
}
