//! The Step Functions backend's `manifest.json`: the neutral parts (`crate::lowering::manifest`)
//! and the two machines, their logging and tracing — the record `deploy` tags machines with and
//! `compile --check` compares. It holds no timestamps, so the same inputs always give the same
//! bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::lowering::manifest::{BindingInfo, CompilerInfo, ContractInfo, IdentityInfo};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub manifest_version: u32,
    pub compiler: CompilerInfo,
    pub identity: IdentityInfo,
    pub contract: ContractInfo,
    pub binding: BindingInfo,
    pub machines: Machines,
    pub logging: LoggingInfo,
    pub tracing: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Machines {
    pub driver: MachineInfo,
    /// Who sweeps TPF, since a release deploys no sweeper machine.
    pub without_sweeper: &'static str,
}

/// Who sweeps TPF under `sweeper.mode = "driver"`.
pub const GATEWAY_SWEEPS_ITSELF: &str = "the gateway driver sweeps TPF itself: SWEEP before every STATUS poll, and after a park's deadline";
/// Who sweeps TPF under `sweeper.mode = "schedule"`.
pub const GATEWAY_SWEEP_SCHEDULED: &str = "TPF is swept on the wake-path stack's schedule (sweepSchedule); the driver sweeps only at its start, while TPF waits to retry, and after a park";

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
