//! The parts of `manifest.json` every backend writes: which compiler compiled which pinned
//! release from which contract, under which binding, and the tags each deployed resource of the
//! release carries. Each backend's manifest adds what it deployed (machines, a function) around
//! these. No timestamps: the same inputs give the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::contract::Contract;
use crate::plan::DriverPlan;

/// File name of the manifest in a release's output directory, whichever the backend.
pub const MANIFEST_FILE: &str = "manifest.json";

pub const COMPILER_NAME: &str = "tpf-sfn";
pub const COMPILER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Tag keys the compiler owns; user tags may not use the prefix.
pub const TAG_PREFIX: &str = "tpf-sfn:";

#[derive(Debug, Clone, Serialize)]
pub struct CompilerInfo {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityInfo {
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractInfo {
    pub schema_version: u8,
    pub contract_hash: String,
    /// False when the hash did not match and `--allow-unverified-hash` let it through.
    pub verified: bool,
    pub steps: usize,
    pub await_steps: Vec<AwaitInfo>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AwaitInfo {
    pub step_index: u32,
    pub authored_name: String,
    /// The state a Step Functions driver parks in while TPF awaits this step (one park state
    /// serves every await). Absent on a backend with no state machine: a durable driver's
    /// callback is named by its round in the generation, not by the step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_name: Option<String>,
    pub transport: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingInfo {
    pub kind: &'static str,
    pub parameters: BTreeMap<String, String>,
}

pub fn compiler_info() -> CompilerInfo {
    CompilerInfo {
        name: COMPILER_NAME,
        version: COMPILER_VERSION,
    }
}

pub fn identity_info(plan: &DriverPlan) -> IdentityInfo {
    let id = &plan.identity;
    IdentityInfo {
        pipeline_id: id.pipeline_id.clone(),
        contract_version: id.contract_version.clone(),
        release_version: id.release_version.clone(),
    }
}

/// The contract's part; `park_state` is the state the backend's driver parks in on every
/// await, if it has states.
pub fn contract_info(
    plan: &DriverPlan,
    contract: &Contract,
    park_state: Option<&str>,
) -> ContractInfo {
    ContractInfo {
        schema_version: plan.contract.schema_version,
        contract_hash: plan.contract.contract_hash.clone(),
        verified: plan.contract.verified,
        steps: contract.steps.len(),
        await_steps: plan
            .awaits
            .iter()
            .map(|a| AwaitInfo {
                step_index: a.step_index,
                authored_name: a.authored_name.clone(),
                state_name: park_state.map(str::to_owned),
                transport: a.transport.clone(),
            })
            .collect(),
    }
}

/// The tags every deployed resource of a release carries: the pinned identity, the compiler and
/// the hash of what it runs, so the console and `deploy` can tell releases and drift apart.
pub fn release_tags(
    plan: &DriverPlan,
    role: &str,
    definition_sha256: &str,
) -> BTreeMap<String, String> {
    let mut tags = plan.tags.clone();
    let id = &plan.identity;
    tags.insert(format!("{TAG_PREFIX}pipeline-id"), id.pipeline_id.clone());
    tags.insert(
        format!("{TAG_PREFIX}contract-version"),
        id.contract_version.clone(),
    );
    tags.insert(
        format!("{TAG_PREFIX}release-version"),
        id.release_version.clone(),
    );
    tags.insert(
        format!("{TAG_PREFIX}compiler-version"),
        COMPILER_VERSION.to_string(),
    );
    tags.insert(
        format!("{TAG_PREFIX}definition-sha256"),
        definition_sha256.to_string(),
    );
    tags.insert(format!("{TAG_PREFIX}role"), role.to_string());
    tags
}

/// Every parameter of the gateway binding; a backend that does not use one removes it.
pub fn binding_info(plan: &DriverPlan) -> BindingInfo {
    let g = &plan.binding;
    let mut parameters = BTreeMap::new();
    parameters.insert("gatewayFunctionArn".to_string(), g.function_arn.clone());
    parameters.insert(
        "starterFunctionArn".to_string(),
        g.starter_function_arn.clone(),
    );
    let transport = match &g.queue_url {
        None => crate::config::GatewayTransport::Lambda,
        Some(queue_url) => {
            parameters.insert("gatewayQueueUrl".to_string(), queue_url.clone());
            crate::config::GatewayTransport::Queue
        }
    };
    parameters.insert("transport".to_string(), transport.as_str().to_string());
    parameters.insert(
        "longestAwaitSeconds".to_string(),
        g.longest_await_seconds.to_string(),
    );
    if let Some(sweep) = &g.scheduled_sweep {
        parameters.insert("sweepSchedule".to_string(), sweep.expression.clone());
    }
    BindingInfo {
        kind: crate::config::BindingKind::Gateway.as_str(),
        parameters,
    }
}
