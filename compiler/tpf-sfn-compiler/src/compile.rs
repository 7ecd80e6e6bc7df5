//! The whole compile: inputs → backend-neutral plan → the chosen backend's lowering. Pure:
//! bytes in, file contents out. Writing them is the caller's job, which is how the CLI can
//! promise all-or-nothing output.

use crate::backend::Backend;
use crate::config::{BindingKind, DriverConfig};
use crate::contract::{check_pinnable, load_contract, Contract, ContractOptions, LoadedContract};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::lowering::export::Kind;
use crate::plan::{self, DriverPlan};
use crate::release::{load_release, resolve_identity};
use crate::{durable, sfn};

#[derive(Debug, Clone, Default)]
pub struct Input<'a> {
    pub contract_file: &'a str,
    pub contract: &'a [u8],
    pub release: Option<(&'a str, &'a [u8])>,
    pub config: Option<(&'a str, &'a str)>,
    /// `--binding`, which wins over the config file's `binding.kind`; an Action API v1 binding
    /// from either is refused (`ACTION_API_V1_RETIRED`).
    pub binding: Option<BindingKind>,
    pub allow_unverified_hash: bool,
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
    check_pinnable(input.contract_file, &loaded.contract)?;

    let release = match input.release {
        Some((file, bytes)) => Some((file, load_release(file, bytes)?)),
        None => None,
    };
    if let Some((_, r)) = &release {
        warnings.extend(r.warnings.iter().cloned());
    }
    let identity = resolve_identity(&loaded.contract, release.as_ref().map(|(f, r)| (*f, r)))?;

    let mut config = match input.config {
        Some((file, text)) => DriverConfig::from_toml(file, text)?,
        None => DriverConfig::default(),
    };
    let config_file = input
        .config
        .map(|(f, _)| f)
        .unwrap_or("<embedded default config>");
    config.refuse_action_api_v1(config_file, input.binding)?;
    if let Some(kind) = input.binding {
        config.binding.kind = kind;
    }
    let findings = config.check(config_file);
    if findings.iter().any(Diagnostic::is_error) {
        return Err(Diagnostics(findings));
    }
    warnings.extend(findings);
    warnings.extend(config.placeholder_warnings(config_file));

    let plan = plan::build(&loaded.contract, &loaded.hash, &identity, &config);
    Ok((loaded, plan, warnings))
}

/// The inputs, loaded and checked, as every backend's lowering receives them.
#[derive(Debug, Clone)]
pub struct Checked {
    pub contract: LoadedContract,
    pub plan: DriverPlan,
    pub warnings: Vec<Diagnostic>,
}

/// A backend's lowering of the checked inputs. [`Backend`] is one (its output says which backend
/// compiled it); each backend's own (`sfn::StepFunctions`, `durable::LambdaDurable`) gives its
/// typed output, for callers that read a backend's artefacts.
pub trait Lowering {
    type Output;
    fn lower(&self, checked: Checked) -> Result<Self::Output, Diagnostics>;
}

/// The compiler's one entry point: loads and checks the inputs, then lowers them for `backend`.
pub fn compile<L: Lowering>(input: &Input, backend: L) -> Result<L::Output, Diagnostics> {
    let (contract, plan, warnings) = load_inputs(input)?;
    backend.lower(Checked {
        contract,
        plan,
        warnings,
    })
}

/// A release compiled for the backend chosen at run time.
#[derive(Debug, Clone)]
pub enum Compiled {
    StepFunctions(Box<sfn::Compiled>),
    LambdaDurable(Box<durable::Compiled>),
}

impl Lowering for Backend {
    type Output = Compiled;
    fn lower(&self, checked: Checked) -> Result<Compiled, Diagnostics> {
        Ok(match self {
            Backend::StepFunctions => {
                Compiled::StepFunctions(Box::new(sfn::StepFunctions.lower(checked)?))
            }
            Backend::LambdaDurable => {
                Compiled::LambdaDurable(Box::new(durable::LambdaDurable.lower(checked)?))
            }
        })
    }
}

impl Compiled {
    pub fn backend(&self) -> Backend {
        match self {
            Compiled::StepFunctions(_) => Backend::StepFunctions,
            Compiled::LambdaDurable(_) => Backend::LambdaDurable,
        }
    }

    pub fn contract(&self) -> &Contract {
        match self {
            Compiled::StepFunctions(c) => &c.contract,
            Compiled::LambdaDurable(c) => &c.contract,
        }
    }

    pub fn plan(&self) -> &DriverPlan {
        match self {
            Compiled::StepFunctions(c) => &c.plan,
            Compiled::LambdaDurable(c) => &c.plan,
        }
    }

    /// `(file name, contents)` in a stable order, the exports asked for last.
    pub fn files(&self) -> &[(String, String)] {
        match self {
            Compiled::StepFunctions(c) => &c.files,
            Compiled::LambdaDurable(c) => &c.files,
        }
    }

    pub fn warnings(&self) -> &[Diagnostic] {
        match self {
            Compiled::StepFunctions(c) => &c.warnings,
            Compiled::LambdaDurable(c) => &c.warnings,
        }
    }

    /// The manifest as written to `manifest.json`.
    pub fn manifest_json(&self) -> serde_json::Value {
        match self {
            Compiled::StepFunctions(c) => serde_json::to_value(&c.manifest),
            Compiled::LambdaDurable(c) => serde_json::to_value(&c.manifest),
        }
        // Our own manifest types serialise to JSON without fail.
        .unwrap_or_default()
    }

    /// Adds the infrastructure-as-code export of flavour `kind` to the files (a file already
    /// there is kept), or the backend's refusal.
    pub fn emit(&mut self, kind: Kind) -> Result<(), Diagnostics> {
        let (files, exported) = match self {
            Compiled::StepFunctions(c) => {
                let exported = sfn::export::files(c, kind)?;
                (&mut c.files, exported)
            }
            Compiled::LambdaDurable(c) => {
                let exported = durable::export(c, kind)?;
                (&mut c.files, exported)
            }
        };
        for file in exported {
            if !files.iter().any(|(n, _)| n == &file.0) {
                files.push(file);
            }
        }
        Ok(())
    }
}
