//! `manifest.json`: what was compiled, from what, by which compiler — the record `deploy`
//! tags machines with and `compile --check` compares. It holds no timestamps, so the same inputs
//! always give the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::plan::DriverPlan;

pub const COMPILER_NAME: &str = "tpf-sfn";
pub const COMPILER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Tag keys the compiler owns; user tags may not use the prefix.
pub const TAG_PREFIX: &str = "tpf-sfn:";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub manifest_version: u32,
    pub compiler: CompilerInfo,
    pub identity: IdentityInfo,
    pub contract: ContractInfo,
    pub binding: BindingInfo,
    pub machines: Machines,
    pub wakeup_table: String,
    pub logging: LoggingInfo,
    pub tracing: bool,
}

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
    pub state_name: String,
    pub transport: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingInfo {
    pub kind: &'static str,
    pub parameters: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Machines {
    pub driver: MachineInfo,
    pub sweeper: MachineInfo,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineInfo {
    pub name: String,
    #[serde(rename = "type")]
    pub machine_type: &'static str,
    pub definition: String,
    pub definition_sha256: String,
    pub policy: String,
    pub states: usize,
    /// Proven worst-case history events of one execution.
    pub max_history_events: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_loop_iterations: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    pub tags: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingInfo {
    pub level: crate::config::LogLevel,
    pub include_execution_data: bool,
    pub log_group_arn: Option<String>,
}

/// The tags every machine of a release carries: the pinned identity, the compiler and the
/// definition hash, so the console and `deploy` can tell releases and drift apart.
pub fn machine_tags(
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

pub fn binding_info(plan: &DriverPlan) -> BindingInfo {
    use crate::plan::BindingPlan::*;
    let mut parameters = BTreeMap::new();
    match &plan.binding {
        Http {
            api_base_url,
            connection_arn,
        } => {
            parameters.insert("apiBaseUrl".to_string(), api_base_url.clone());
            parameters.insert("connectionArn".to_string(), connection_arn.clone());
        }
        Lambda { function_arn } => {
            parameters.insert("functionArn".to_string(), function_arn.clone());
        }
        Queue { queue_url } => {
            parameters.insert("queueUrl".to_string(), queue_url.clone());
        }
    }
    BindingInfo {
        kind: plan.binding.kind().as_str(),
        parameters,
    }
}
