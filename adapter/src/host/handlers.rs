//! Route handlers. Bodies are parsed by hand so that any malformed input is a coded 400
//! (`{code, message}`), never a panic or an unstructured rejection.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use tpf_model::{ActionHost, AwaitCompletion, CoordinatorError, SubmitRequest};
use tpf_sfn_compiler::release::SUPPORTED_ARTIFACT_KINDS;
use tpf_wire::action::{ActionError, ProcessWorkItemRequest, SweepOnceRequest};
use tpf_wire::records::{
    AwaitInteractionRecord, ExecutionRecord, ExecutionStatus, PipelineReleaseRecord, ReleaseStatus,
};

use super::{auth, HostState, HostStore};

/// An error response: status plus `{code, message}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: Value,
}

impl ApiError {
    fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body: json!({ "code": code, "message": message.into() }),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BAD_REQUEST", message)
    }
}

impl From<CoordinatorError> for ApiError {
    fn from(e: CoordinatorError) -> Self {
        Self::new(e.http_status(), e.code(), e.to_string())
    }
}

impl From<ActionError> for ApiError {
    fn from(e: ActionError) -> Self {
        Self {
            status: StatusCode::from_u16(e.http_status())
                .unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            body: e.body(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

type ApiResult = Result<Json<Value>, ApiError>;

fn check_auth<S: HostStore>(state: &HostState<S>, headers: &HeaderMap) -> Result<(), ApiError> {
    if auth::authorized(headers, state.token()) {
        Ok(())
    } else {
        Err(ApiError::new(
            401,
            "UNAUTHORIZED",
            "missing or invalid bearer token",
        ))
    }
}

fn parse<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("invalid body: {e}")))
}

/// An empty body means "all defaults" (TPF's re-drive request).
fn parse_or_default<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        Ok(T::default())
    } else {
        parse(body)
    }
}

fn tenant(tenant_id: &str) -> Result<(), ApiError> {
    if tenant_id.trim().is_empty() {
        Err(ApiError::bad_request("tenantId must not be blank"))
    } else {
        Ok(())
    }
}

/// Runs `f` on the coordinator off the async workers, one request at a time.
async fn run<S, F>(state: Arc<HostState<S>>, f: F) -> ApiResult
where
    S: HostStore,
    F: FnOnce(&mut ActionHost<S>, i64) -> Result<Value, ApiError> + Send + 'static,
{
    tokio::task::spawn_blocking(move || {
        let now = state.now_ms();
        let mut host = state.lock();
        f(&mut host, now)
    })
    .await
    .map_err(|e| ApiError::new(500, "INTERNAL", format!("request handler failed: {e}")))?
    .map(Json)
}

pub async fn no_route() -> ApiError {
    ApiError::new(404, "NOT_FOUND", "no such route")
}

// --- Action API v1 ---

pub async fn process_work_item<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    Path((tenant_id, execution_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
    let req: ProcessWorkItemRequest = parse(&body)?;
    run(state, move |host, now| {
        Ok(host
            .process_work_item(&tenant_id, &execution_id, &req, now)?
            .to_json())
    })
    .await
}

pub async fn sweep_once<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    check_auth(&state, &headers)?;
    let req: SweepOnceRequest = parse(&body)?;
    run(state, move |host, now| {
        Ok(host.sweep_once(&req, now)?.to_json())
    })
    .await
}

// --- control plane ---

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubmitBody {
    pipeline_id: String,
    input_shape: String,
    input_payload: Value,
    #[serde(default)]
    idempotency_key: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    output_streaming: bool,
}

fn status_url(tenant_id: &str, execution_id: &str) -> String {
    format!("/tpf/control-plane/tenants/{tenant_id}/executions/{execution_id}")
}

pub async fn submit<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    Path(tenant_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
    let req: SubmitBody = parse(&body)?;
    if !matches!(req.input_shape.as_str(), "UNI" | "MULTI" | "RAW") {
        return Err(ApiError::bad_request(
            "inputShape must be UNI, MULTI or RAW",
        ));
    }
    if req.pipeline_id.trim().is_empty() {
        return Err(ApiError::bad_request("pipelineId is required"));
    }
    if req.input_payload.is_null() {
        return Err(ApiError::bad_request("inputPayload is required"));
    }
    run(state, move |host, now| {
        let submitted = host.coordinator_mut().submit(
            &SubmitRequest {
                tenant_id: tenant_id.clone(),
                pipeline_id: req.pipeline_id,
                execution_key: req.idempotency_key,
                input_payload: req.input_payload,
            },
            now,
        )?;
        Ok(json!({
            "executionId": submitted.execution_id,
            "duplicate": submitted.duplicate,
            "statusUrl": status_url(&tenant_id, &submitted.execution_id),
            "submittedAtEpochMs": submitted.submitted_at_epoch_ms,
        }))
    })
    .await
}

/// `ExecutionStatusDto`.
fn status_dto(record: &ExecutionRecord) -> Value {
    json!({
        "executionId": record.execution_id,
        "status": record.status,
        "stepIndex": record.current_step_index,
        "attempt": record.attempt,
        "version": record.version,
        "nextDueAtEpochMs": record.next_due_epoch_ms,
        "updatedAtEpochMs": record.updated_at_epoch_ms,
        "errorCode": record.error_code,
        "errorMessage": record.error_message,
    })
}

pub async fn status<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    Path((tenant_id, execution_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
    run(state, move |host, now| {
        let record = host.coordinator().status(&tenant_id, &execution_id, now)?;
        Ok(status_dto(&record))
    })
    .await
}

pub async fn result<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    Path((tenant_id, execution_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
    run(state, move |host, now| {
        let record = host.coordinator().status(&tenant_id, &execution_id, now)?;
        let payload = match record.status {
            ExecutionStatus::Succeeded => record.result_payload.clone().unwrap_or(Value::Null),
            _ => Value::Null,
        };
        Ok(json!({ "status": status_dto(&record), "resultPayload": payload }))
    })
    .await
}

/// `AwaitInteractionDto`.
fn interaction_dto(i: &AwaitInteractionRecord) -> Value {
    json!({
        "interactionId": i.interaction_id,
        "correlationId": i.correlation_id,
        "executionId": i.execution_id,
        "stepId": i.step_id,
        "stepIndex": i.step_index,
        "outputType": i.output_type,
        "status": i.status,
        "requestPayload": i.request_payload,
        "assignee": i.assignee,
        "group": i.group,
        "transportType": i.transport_type,
        "transportMetadata": i.transport_metadata,
        "deadlineEpochMs": i.deadline_epoch_ms,
        "createdAtEpochMs": i.created_at_epoch_ms,
        "updatedAtEpochMs": i.updated_at_epoch_ms,
    })
}

pub async fn pending<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    Path(tenant_id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
    let limit = match query.get("limit") {
        None => 100,
        Some(text) => text
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request("limit must be a non-negative integer"))?
            .clamp(1, 1000),
    };
    let wanted = |key: &str| query.get(key).filter(|v| !v.is_empty()).cloned();
    let (assignee, group, step_id) = (wanted("assignee"), wanted("group"), wanted("stepId"));
    run(state, move |host, _now| {
        let all = host
            .coordinator()
            .store()
            .pending_interactions(&tenant_id, usize::MAX)
            .map_err(CoordinatorError::from)?;
        // TPF picks one index (assignee > group > stepId > tenant); filtering the tenant's
        // pending list by the same precedence gives the same rows.
        let rows: Vec<Value> = all
            .iter()
            .filter(|i| match (&assignee, &group, &step_id) {
                (Some(a), _, _) => i.assignee.as_ref() == Some(a),
                (None, Some(g), _) => i.group.as_ref() == Some(g),
                (None, None, Some(s)) => &i.step_id == s,
                (None, None, None) => true,
            })
            .take(limit)
            .map(interaction_dto)
            .collect();
        Ok(Value::Array(rows))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CompleteBody {
    #[serde(default)]
    interaction_id: Option<String>,
    #[serde(default)]
    correlation_id: Option<String>,
    #[serde(default)]
    resume_token: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    idempotency_key: Option<String>,
    response_payload: Value,
    #[serde(default)]
    actor: Option<String>,
}

pub async fn complete<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    Path(tenant_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
    let req: CompleteBody = parse(&body)?;
    if req.interaction_id.is_none() && req.correlation_id.is_none() {
        return Err(ApiError::bad_request(if req.resume_token.is_some() {
            "resumeToken completion is not supported by this host; send interactionId or correlationId"
        } else {
            "interactionId, correlationId or resumeToken is required"
        }));
    }
    if req.response_payload.is_null() {
        return Err(ApiError::bad_request("responsePayload is required"));
    }
    run(state, move |host, now| {
        let done = host.coordinator_mut().complete_await(
            &AwaitCompletion {
                tenant_id,
                interaction_id: req.interaction_id,
                correlation_id: req.correlation_id,
                response_payload: req.response_payload,
                actor: req.actor,
            },
            now,
        )?;
        Ok(json!({
            "interactionId": done.interaction.interaction_id,
            "executionId": done.interaction.execution_id,
            "stepId": done.interaction.step_id,
            "status": done.interaction.status,
            "duplicate": done.duplicate,
        }))
    })
    .await
}

// --- admin ---

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
    Path((tenant_id, execution_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
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
        if !SUPPORTED_ARTIFACT_KINDS.contains(&kind.as_str()) {
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
    Path((tenant_id, pipeline_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
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
    Path((tenant_id, pipeline_id, release_version)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
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
    Path((tenant_id, pipeline_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
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
    Path((tenant_id, pipeline_id, release_version)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> ApiResult {
    check_auth(&state, &headers)?;
    tenant(&tenant_id)?;
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
