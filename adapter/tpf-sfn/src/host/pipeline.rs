//! The host's pipeline: runtime steps from a contract (await steps park, others complete) and an
//! optional failure script.

use crate::error::Error;
use std::collections::BTreeMap;

use serde::Deserialize;
use tpf_model::{PipelineDef, ScriptedWorker, StepOutcome};
use tpf_sfn_compiler::compile::{load_inputs, Input};
use tpf_sfn_compiler::contract::Contract;
use tpf_sfn_compiler::release::{load_release, resolve_identity, Identity};

/// `--script FILE.toml`:
///
/// ```toml
/// [[steps]]
/// step = "Finalize Restaurant Decision"        # the contract's authoredName
/// outcomes = ["fail-retryable:java.io.IOException", "complete"]   # by attempt
/// ```
///
/// Outcomes: `complete`, `park`, `fail-retryable:<class>`, `fail-non-retryable:<class>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub steps: Vec<ScriptedStep>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedStep {
    pub step: String,
    pub outcomes: Vec<String>,
}

/// A script outcome that is none of the four forms.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown outcome `{0}` (complete, park, fail-retryable:<class>, fail-non-retryable:<class>)"
)]
struct UnknownOutcome(String);

fn outcome(text: &str) -> Result<StepOutcome, UnknownOutcome> {
    match text.split_once(':') {
        Some(("fail-retryable", class)) if !class.is_empty() => {
            Ok(StepOutcome::FailRetryable(class.to_owned()))
        }
        Some(("fail-non-retryable", class)) if !class.is_empty() => {
            Ok(StepOutcome::FailNonRetryable(class.to_owned()))
        }
        None if text == "complete" => Ok(StepOutcome::Complete),
        None if text == "park" => Ok(StepOutcome::Park),
        _ => Err(UnknownOutcome(text.to_owned())),
    }
}

/// What the host runs: the contract's identity, its runtime steps and the worker.
pub struct HostedPipeline {
    pub identity: Identity,
    pub pipeline: PipelineDef,
    pub worker: ScriptedWorker,
    /// The contract, for checking releases registered while the host runs against it.
    pub contract: Contract,
}

/// Builds the pipeline from a contract's bytes; awaits time out after `await_timeout_ms`.
///
/// `releases` are the release files (name, bytes) whose executions this host runs: TPF keeps an
/// old release's workers until its pinned executions drain, so one host may serve several. The
/// first is the host's own identity; without any, the contract's (release = contract version).
pub fn load(
    contract_file: &str,
    contract: &[u8],
    releases: &[(&str, &[u8])],
    script: Option<&str>,
    await_timeout_ms: i64,
) -> Result<HostedPipeline, Error> {
    let unhostable = |d: tpf_sfn_compiler::Diagnostics| {
        Error::new("PIPELINE", "the pipeline cannot be hosted")
            .with_source(d)
            .with_hint("fix what the diagnostics name; `tpf-sfn compile` reports the same")
    };
    let input = Input {
        contract_file,
        contract,
        ..Input::default()
    };
    // The contract says which steps await and the plan names the release; nothing is rendered.
    let (loaded, plan, _) = load_inputs(&input).map_err(unhostable)?;
    let steps: Vec<_> = loaded.contract.steps.iter().map(|s| s.facts()).collect();
    // One item per stream: the host's scripted producer emits a single item.
    let pipeline = PipelineDef::from_contract(&steps, 1, await_timeout_ms);
    let mut identities = Vec::new();
    for (file, bytes) in releases {
        let release = load_release(file, bytes).map_err(unhostable)?;
        let identity =
            resolve_identity(&loaded.contract, Some((file, &release))).map_err(unhostable)?;
        identities.push(identity);
    }
    let identity = identities
        .first()
        .cloned()
        .unwrap_or_else(|| plan.identity.clone());
    let mut worker = ScriptedWorker::new(identity.clone());
    for also in identities.into_iter().skip(1) {
        worker = worker.hosting(also);
    }
    if let Some(text) = script {
        let bad_script = |message: String| {
            Error::new("SCRIPT_INVALID", message)
                .with_hint("see `tpf-sfn serve --help` for the script's format")
        };
        let script: Script = toml::from_str(text).map_err(|e| {
            Error::new("SCRIPT_INVALID", "the failure script is not valid TOML")
                .with_source(e)
                .with_hint("see `tpf-sfn serve --help` for the script's format")
        })?;
        let by_name: BTreeMap<&str, u32> = pipeline
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i as u32))
            .collect();
        for scripted in script.steps {
            let index = by_name
                .get(scripted.step.as_str())
                .ok_or_else(|| bad_script(format!("no step named `{}`", scripted.step)))?;
            let outcomes = scripted
                .outcomes
                .iter()
                .map(|o| outcome(o))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad_script(e.to_string()))?;
            worker.set_script(*index, outcomes);
        }
    }
    Ok(HostedPipeline {
        identity,
        pipeline,
        worker,
        contract: loaded.contract,
    })
}
