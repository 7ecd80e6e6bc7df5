//! TPF's admin routes: re-drive a failed execution, register and activate releases.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{json, Value};
use tpf_model::CoordinatorError;
use tpf_sfn_compiler::contract::Contract;
use tpf_sfn_compiler::release::{load_release, resolve_identity};
use tpf_sfn_compiler::Diagnostics;
use tpf_wire::records::{PipelineReleaseRecord, ReleaseStatus};

use super::{parse, parse_or_default, run, ApiError, ApiResult};
use crate::host::limits::check_key;
use crate::host::path::TenantPath;
use crate::host::{HostState, HostStore};
use crate::stdio::errln;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RedriveBody {
    #[serde(default)]
    expected_version: Option<i64>,
    #[serde(default)]
    #[allow(dead_code)]
    reason: Option<String>,
    #[serde(default)]
    allow_failed: bool,
}

pub async fn redrive<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, execution_id)): TenantPath<(String, String)>,
    body: Bytes,
) -> ApiResult {
    let req: RedriveBody = parse_or_default(&body)?;
    run(state, move |host, now| {
        let r = host.redrive(
            &tenant_id,
            &execution_id,
            req.expected_version,
            req.allow_failed,
            now,
        )?;
        Ok(json!({
            "tenantId": r.tenant_id,
            "executionId": r.execution_id,
            "previousStatus": r.previous_status,
            "status": r.status,
            "version": r.version,
            "stepIndex": r.current_step_index,
            "attempt": r.attempt,
            "pipelineId": r.pipeline_id,
            "contractVersion": r.contract_version,
            "releaseVersion": r.release_version,
            "updatedAtEpochMs": r.updated_at_epoch_ms,
        }))
    })
    .await
}

/// The name the registration's descriptor goes by in its diagnostics.
const DESCRIPTOR_FILE: &str = "pipeline-release.json";

/// `PipelineReleaseRegistrar`'s checks, minus the artifact resolution: this host takes the
/// descriptor JSON itself (TPF takes a path and fetches the artifacts) and verifies no artifact.
/// The descriptor is read as the compiler reads it: today's form with TPF's validator rules and
/// messages, August 2026's form with that TPF's rules and a warning. The primary artifact is the
/// one carrying the Compiled Truth (today's form), else the first (August's).
///
/// A release of today's form that pins the hosted contract's version is also checked against
/// that contract (`validate(descriptor, contract)`: every step on exactly one deployable
/// artifact, the contract's capabilities covered), refused with TPF's message. A release pinning
/// another contract version is not: TPF checks it against the contract in its own artifact,
/// which this host does not fetch.
fn release_from_descriptor(
    tenant_id: &str,
    pipeline_id: &str,
    body: &Bytes,
    now_ms: i64,
    contract: Option<&Contract>,
) -> Result<PipelineReleaseRecord, ApiError> {
    let descriptor: Value = parse(body)?;
    let refused = |d: Diagnostics| {
        let errors: Vec<String> =
            d.0.iter()
                .filter(|x| x.is_error())
                .map(|x| format!("{}: {}", x.code, x.message))
                .collect();
        ApiError::bad_request(errors.join("; "))
    };
    let release = load_release(DESCRIPTOR_FILE, body).map_err(refused)?;
    if let Some(contract) = contract.filter(|c| {
        release.compiled_truth_artifact_id.is_some()
            && c.contract_version == release.contract_version
    }) {
        resolve_identity(contract, Some((DESCRIPTOR_FILE, &release))).map_err(refused)?;
    }
    for warning in &release.warnings {
        errln!(
            "tpf-sfn serve: release {} of {pipeline_id}: warning[{}]: {}",
            release.release_version,
            warning.code,
            warning.message
        );
    }
    if release.pipeline_id != pipeline_id {
        return Err(ApiError::bad_request(
            "descriptor pipelineId does not match the URL",
        ));
    }
    check_key("releaseVersion", &release.release_version)?;
    check_key("contractVersion", &release.contract_version)?;
    let primary = release
        .compiled_truth_artifact_id
        .as_ref()
        .and_then(|id| release.artifacts.iter().find(|a| &a.artifact_id == id))
        .or_else(|| release.artifacts.first())
        .ok_or_else(|| ApiError::bad_request("descriptor needs at least one artifact"))?;
    Ok(PipelineReleaseRecord {
        tenant_id: tenant_id.to_owned(),
        pipeline_id: pipeline_id.to_owned(),
        contract_version: release.contract_version.clone(),
        release_version: release.release_version.clone(),
        status: ReleaseStatus::Registered,
        descriptor,
        primary_artifact_id: primary.artifact_id.clone(),
        primary_artifact_checksum: primary
            .digest
            .strip_prefix("sha256:")
            .unwrap_or_default()
            .to_owned(),
        primary_artifact_digest: primary.digest.clone(),
        primary_artifact_uri: primary.uri.clone(),
        primary_artifact_size_bytes: 0,
        contract: None,
        created_at_epoch_ms: now_ms,
        updated_at_epoch_ms: now_ms,
        activated_at_epoch_ms: 0,
    })
}

fn release_json(record: &PipelineReleaseRecord) -> Result<Value, ApiError> {
    serde_json::to_value(record).map_err(|e| ApiError::new(500, "INTERNAL", e.to_string()))
}

pub async fn register_release<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, pipeline_id)): TenantPath<(String, String)>,
    body: Bytes,
) -> ApiResult {
    let contract = state.contract();
    run(state, move |host, now| {
        let release =
            release_from_descriptor(&tenant_id, &pipeline_id, &body, now, contract.as_deref())?;
        let stored = host.register_release(&release)?;
        release_json(&stored)
    })
    .await
}

pub async fn activate_release<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, pipeline_id, release_version)): TenantPath<(String, String, String)>,
) -> ApiResult {
    run(state, move |host, now| {
        let active = host.activate_release(&tenant_id, &pipeline_id, &release_version, now)?;
        release_json(&active)
    })
    .await
}

pub async fn active_release<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, pipeline_id)): TenantPath<(String, String)>,
) -> ApiResult {
    run(state, move |host, _now| {
        let active = host
            .active_release(&tenant_id, &pipeline_id)?
            .ok_or_else(|| {
                ApiError::new(
                    404,
                    "RELEASE_NOT_FOUND",
                    format!("no active release of {pipeline_id}"),
                )
            })?;
        release_json(&active)
    })
    .await
}

pub async fn get_release<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, pipeline_id, release_version)): TenantPath<(String, String, String)>,
) -> ApiResult {
    run(state, move |host, _now| {
        let release = host
            .store()
            .get_release(&tenant_id, &pipeline_id, &release_version)
            .map_err(CoordinatorError::from)?
            .ok_or_else(|| {
                ApiError::new(
                    404,
                    "RELEASE_NOT_FOUND",
                    format!("release {release_version} of {pipeline_id}"),
                )
            })?;
        release_json(&release)
    })
    .await
}
