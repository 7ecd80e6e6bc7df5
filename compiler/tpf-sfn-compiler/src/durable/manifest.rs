//! The durable backend's `manifest.json`: what was compiled, for which function, under which
//! budget. No timestamps: the same inputs give the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{budget, DurableOutput, BACKEND};
use crate::contract::Contract;
use crate::plan::DriverPlan;
use crate::sfn::manifest::{
    binding_info, machine_tags, AwaitInfo, BindingInfo, CompilerInfo, ContractInfo, IdentityInfo,
    COMPILER_NAME, COMPILER_VERSION,
};

pub const MANIFEST_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DurableManifest {
    pub manifest_version: u32,
    pub backend: &'static str,
    pub compiler: CompilerInfo,
    pub identity: IdentityInfo,
    pub contract: ContractInfo,
    pub binding: BindingInfo,
    pub function: FunctionInfo,
    pub wakeup_table: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionInfo {
    pub name: String,
    pub spec: String,
    /// sha256 of the compact spec the function runs: the tag `deploy` compares to refuse a
    /// changed spec under a pinned release.
    pub spec_sha256: String,
    /// Operations one generation checkpoints at most, and the calls that leaves room for.
    pub operation_budget: u32,
    pub max_iterations: u64,
    pub iteration_operations: u64,
    pub tags: BTreeMap<String, String>,
}

pub fn build(plan: &DriverPlan, contract: &Contract, out: &DurableOutput) -> DurableManifest {
    let id = &plan.identity;
    let spec_sha256 = crate::sfn::sha256_hex(&out.spec_text);
    DurableManifest {
        manifest_version: MANIFEST_VERSION,
        backend: BACKEND,
        compiler: CompilerInfo {
            name: COMPILER_NAME,
            version: COMPILER_VERSION,
        },
        identity: IdentityInfo {
            pipeline_id: id.pipeline_id.clone(),
            contract_version: id.contract_version.clone(),
            release_version: id.release_version.clone(),
        },
        contract: ContractInfo {
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
                    state_name: tpf_durable_driver::names::park(Some(&a.authored_name)),
                    transport: a.transport.clone(),
                })
                .collect(),
        },
        binding: durable_binding(plan),
        function: FunctionInfo {
            name: out.function_name.clone(),
            spec: super::SPEC_FILE.to_string(),
            tags: machine_tags(plan, "durable-driver", &spec_sha256),
            spec_sha256,
            operation_budget: out.spec.operation_budget,
            max_iterations: out.spec.max_iterations,
            iteration_operations: budget::iteration_cost(&out.spec.transport_retry),
        },
        wakeup_table: plan.wakeup.table_name.clone(),
    }
}

/// The binding's parameters this backend uses: the HTTP binding's connection is Step
/// Functions' way to hold the token, and this function does not use it.
fn durable_binding(plan: &DriverPlan) -> BindingInfo {
    let mut info = binding_info(plan);
    info.parameters.remove("connectionArn");
    info
}

pub fn render(m: &DurableManifest) -> String {
    let mut text = serde_json::to_string_pretty(m).unwrap_or_default();
    text.push('\n');
    text
}
