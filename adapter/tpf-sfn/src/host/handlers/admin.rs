//! TPF's admin routes: re-drive a failed execution, register and activate releases.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{json, Value};
use tpf_model::CoordinatorError;
use tpf_sfn_compiler::release::AUGUST_ARTIFACT_KINDS;
use tpf_wire::records::{PipelineReleaseRecord, ReleaseStatus};

use super::{parse, parse_or_default, run, ApiError, ApiResult};
use crate::host::limits::check_key;
use crate::host::path::TenantPath;
use crate::host::{HostState, HostStore};

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
        let r = host.coordinator_mut().redrive(
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

/// `PipelineReleaseRegistrar.validate`, minus the artifact-file checks: this host takes the
/// descriptor JSON itself (TPF takes an absolute path) and verifies no artifacts.
fn release_from_descriptor(
    tenant_id: &str,
    pipeline_id: &str,
    descriptor: &Value,
    now_ms: i64,
) -> Result<PipelineReleaseRecord, ApiError> {
    let text = |key: &str| {
        descriptor
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| ApiError::bad_request(format!("descriptor `{key}` is required")))
    };
    if descriptor.get("schemaVersion").and_then(Value::as_i64) != Some(1) {
        return Err(ApiError::bad_request("descriptor schemaVersion must be 1"));
    }
    if text("pipelineId")? != pipeline_id {
        return Err(ApiError::bad_request(
            "descriptor pipelineId does not match the URL",
        ));
    }
    let contract_version = text("contractVersion")?;
    let release_version = text("releaseVersion")?;
    check_key("releaseVersion", &release_version)?;
    check_key("contractVersion", &contract_version)?;
    let artifacts = descriptor
        .get("artifacts")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| ApiError::bad_request("descriptor needs at least one artifact"))?;
    for artifact in artifacts {
        let field = |key: &str| {
            artifact
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| ApiError::bad_request(format!("artifact `{key}` is required")))
        };
        field("artifactId")?;
        field("uri")?;
        let kind = field("kind")?.to_ascii_lowercase();
        if !AUGUST_ARTIFACT_KINDS.contains(&kind.as_str()) {
            return Err(ApiError::bad_request(format!(
                "unsupported artifact kind `{kind}`"
            )));
        }
        if !field("digest")?.starts_with("sha256:") {
            return Err(ApiError::bad_request(
                "artifact digest must start with sha256:",
            ));
        }
    }
    let primary = &artifacts[0];
    let primary_text = |key: &str| {
        primary
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let digest = primary_text("digest");
    Ok(PipelineReleaseRecord {
        tenant_id: tenant_id.to_owned(),
        pipeline_id: pipeline_id.to_owned(),
        contract_version,
        release_version,
        status: ReleaseStatus::Registered,
        descriptor: descriptor.clone(),
        primary_artifact_id: primary_text("artifactId"),
        primary_artifact_checksum: digest
            .strip_prefix("sha256:")
            .unwrap_or_default()
            .to_owned(),
        primary_artifact_digest: digest,
        primary_artifact_uri: primary_text("uri"),
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
    let descriptor: Value = parse(&body)?;
    run(state, move |host, now| {
        let release = release_from_descriptor(&tenant_id, &pipeline_id, &descriptor, now)?;
        let stored = host.coordinator_mut().register_release(&release)?;
        release_json(&stored)
    })
    .await
}

pub async fn activate_release<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, pipeline_id, release_version)): TenantPath<(String, String, String)>,
) -> ApiResult {
    run(state, move |host, now| {
        let active = host.coordinator_mut().activate_release(
            &tenant_id,
            &pipeline_id,
            &release_version,
            now,
        )?;
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
            .coordinator()
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
            .coordinator()
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
