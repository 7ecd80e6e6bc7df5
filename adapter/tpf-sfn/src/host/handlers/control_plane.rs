//! TPF's control plane: submit an execution, read its status and result, list and complete
//! pending await interactions.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::Uri;
use serde::Deserialize;
use serde_json::{json, Value};
use tpf_model::{AwaitCompletion, CoordinatorError, SubmitRequest};
use tpf_wire::records::{AwaitInteractionRecord, ExecutionRecord, ExecutionStatus};

use super::{parse, run, ApiError, ApiResult};
use crate::host::limits::check_key;
use crate::host::path::TenantPath;
use crate::host::{HostState, HostStore};

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

/// The status route of an execution, each id percent-encoded as one path segment (a tenant
/// may hold `/`, `?` or spaces; the URL must lead back to the same execution).
fn status_url(tenant_id: &str, execution_id: &str) -> String {
    use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
    // RFC 3986's unreserved characters stay as they are; everything else is encoded.
    const SEGMENT: &percent_encoding::AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    format!(
        "/tpf/control-plane/tenants/{}/executions/{}",
        utf8_percent_encode(tenant_id, SEGMENT),
        utf8_percent_encode(execution_id, SEGMENT)
    )
}

pub async fn submit<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath(tenant_id): TenantPath<String>,
    body: Bytes,
) -> ApiResult {
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
    if let Some(key) = &req.idempotency_key {
        check_key("idempotencyKey", key)?;
    }
    check_key("pipelineId", &req.pipeline_id)?;
    run(state, move |host, now| {
        let submitted = host.submit(
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
    TenantPath((tenant_id, execution_id)): TenantPath<(String, String)>,
) -> ApiResult {
    run(state, move |host, now| {
        let record = host.status(&tenant_id, &execution_id, now)?;
        Ok(status_dto(&record))
    })
    .await
}

pub async fn result<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    TenantPath((tenant_id, execution_id)): TenantPath<(String, String)>,
) -> ApiResult {
    run(state, move |host, now| {
        let record = host.status(&tenant_id, &execution_id, now)?;
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
    TenantPath(tenant_id): TenantPath<String>,
    uri: Uri,
) -> ApiResult {
    let Query(query) = Query::<HashMap<String, String>>::try_from_uri(&uri)
        .map_err(|e| ApiError::bad_request(format!("invalid query: {}", e.body_text())))?;
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
    TenantPath(tenant_id): TenantPath<String>,
    body: Bytes,
) -> ApiResult {
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
    for (field, value) in [
        ("interactionId", &req.interaction_id),
        ("correlationId", &req.correlation_id),
        ("idempotencyKey", &req.idempotency_key),
    ] {
        if let Some(value) = value {
            check_key(field, value)?;
        }
    }
    run(state, move |host, now| {
        let done = host.complete_await(
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
