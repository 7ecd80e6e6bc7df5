//! The contract's identity as a deployed release pins it.
//!
//! TPF's `PipelineContractDescriptor` refuses only a null `pipelineId` or `contractVersion`; a
//! blank one loads, so `load_contract` accepts it too. A driver built from it cannot run: every
//! Action API request it sends carries the pinned identity, and TPF's AWS host refuses a present
//! `pipelineId` or `contractVersion` that is blank ("must not be blank"), as its release
//! registrar refuses a blank pipeline in the release's path. Compile refuses it here, before
//! anything is rendered, instead of deploying a release whose every call fails.

use super::model::Contract;
use crate::diagnostic::{Diagnostic, Diagnostics, Location};

/// Refuses a contract whose `pipelineId` or `contractVersion` is blank, for a release that pins
/// them. `file` labels the diagnostics.
pub fn check_pinnable(file: &str, contract: &Contract) -> Result<(), Diagnostics> {
    let diags: Vec<Diagnostic> = [
        ("pipelineId", contract.pipeline_id.as_str()),
        ("contractVersion", contract.contract_version.as_str()),
    ]
    .into_iter()
    .filter(|(_, value)| value.trim().is_empty())
    .map(|(key, _)| {
        Diagnostic::error(
            "CONTRACT_BLANK_IDENTITY",
            Location::pointer(file, format!("/{key}")),
            format!(
                "`{key}` is blank: TPF loads such a contract, but a release cannot pin it, since TPF's host \
                 refuses every Action API request whose `{key}` is blank"
            ),
        )
        .with_hint(format!(
            "give the pipeline a non-blank `{key}` (TPF takes pipelineId from the pipeline YAML's basePackage) \
             and rebuild the contract"
        ))
    })
    .collect();
    if diags.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics(diags))
    }
}
