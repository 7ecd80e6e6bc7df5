//! Submission (`QueueAsyncSubmissionFlow`, `ExecutionInputPolicy`, `PipelineRunSubmissionPlan`).

use serde_json::Value;

use crate::store::{AwaitStore, CreateExecutionCommand, ExecutionStore, ReleaseRegistry};
use tpf_wire::ids;

use super::{
    Coordinator, CoordinatorConfig, CoordinatorError, CoordinatorResult, IdempotencyPolicy,
    SubmitRequest, SubmitResult, DAY_S,
};

/// `ExecutionInputPolicy.normalizeTenant`: a blank tenant is the default tenant; otherwise
/// trimmed.
pub fn normalize_tenant(config: &CoordinatorConfig, tenant_id: &str) -> String {
    match tenant_id.trim() {
        "" => config.default_tenant.clone(),
        tenant => tenant.to_owned(),
    }
}

/// `ExecutionInputPolicy.resolveExecutionKey`: the client key trimmed (blank counts as absent)
/// under `OPTIONAL_CLIENT_KEY` and `CLIENT_KEY_REQUIRED` (which refuses none), else derived from
/// the tenant and the input payload (`ids::derive_server_execution_key`).
pub fn resolve_execution_key(
    policy: IdempotencyPolicy,
    tenant_id: &str,
    payload: &Value,
    client_key: Option<&str>,
) -> Result<String, CoordinatorError> {
    let client_key = client_key.map(str::trim).filter(|k| !k.is_empty());
    match (policy, client_key) {
        (IdempotencyPolicy::ClientKeyRequired, None) => Err(CoordinatorError::BadRequest(
            "Idempotency-Key header is required.".into(),
        )),
        (
            IdempotencyPolicy::ClientKeyRequired | IdempotencyPolicy::OptionalClientKey,
            Some(key),
        ) => Ok(key.to_owned()),
        _ => Ok(ids::derive_server_execution_key(tenant_id, payload)),
    }
}

/// What a submission resolves to before anything is written (`createPlan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionPlan {
    pub tenant_id: String,
    /// The key the policy chose (the client's, or the derived one).
    pub resolved_key: String,
    /// The key stored on the record and scoped in `tpf_execution_key`: the resolved key scoped
    /// by the pinned pipeline and release, so one client key names one execution per release.
    pub execution_key: String,
}

/// `createPlan`: resolve the key, then scope it by the release the submission pins.
pub fn plan_submission(
    config: &CoordinatorConfig,
    tenant_id: &str,
    pipeline_id: &str,
    release_version: &str,
    payload: &Value,
    client_key: Option<&str>,
) -> Result<SubmissionPlan, CoordinatorError> {
    let tenant_id = normalize_tenant(config, tenant_id);
    let resolved_key =
        resolve_execution_key(config.idempotency_policy, &tenant_id, payload, client_key)?;
    let execution_key = ids::scoped_root_execution_key(pipeline_id, release_version, &resolved_key)
        .map_err(|e| CoordinatorError::BadRequest(e.0))?;
    Ok(SubmissionPlan {
        tenant_id,
        resolved_key,
        execution_key,
    })
}

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    pub fn submit(&mut self, req: &SubmitRequest, now_ms: i64) -> CoordinatorResult<SubmitResult> {
        let tenant_id = normalize_tenant(&self.config, &req.tenant_id);
        // HostedPipelineControlPlaneResource.submitExecution: the active release is resolved
        // once, here, and its triple is pinned on the record for good.
        let release = self
            .store
            .active_release(&tenant_id, &req.pipeline_id)?
            .ok_or_else(|| CoordinatorError::NoActiveRelease {
                tenant_id: tenant_id.clone(),
                pipeline_id: req.pipeline_id.clone(),
            })?;
        let plan = plan_submission(
            &self.config,
            &tenant_id,
            &release.pipeline_id,
            &release.release_version,
            &req.input_payload,
            req.execution_key.as_deref(),
        )?;
        let cmd = CreateExecutionCommand {
            execution_id: ids::execution_id(&tenant_id, &plan.execution_key, now_ms),
            tenant_id: tenant_id.clone(),
            execution_key: plan.execution_key,
            pipeline_id: release.pipeline_id,
            contract_version: release.contract_version,
            release_version: release.release_version,
            result_shape: self.pipeline.result_shape,
            input_payload: req.input_payload.clone(),
            initial_step_index: 0,
            now_ms,
            ttl_epoch_s: now_ms.div_euclid(1000) + self.config.execution_ttl_days.max(1) * DAY_S,
        };
        let created = self.store.create_or_get_execution(&cmd)?;
        if !created.duplicate {
            self.log.record(now_ms, &created.record, "create");
        }
        let record = created.record;
        self.call(
            now_ms,
            "submit",
            &tenant_id,
            Some(&record.execution_id),
            if created.duplicate {
                "DUPLICATE".to_owned()
            } else {
                record.status.to_string()
            },
        );
        Ok(SubmitResult {
            execution_id: record.execution_id.clone(),
            duplicate: created.duplicate,
            status_url: format!("/pipeline/executions/{}", record.execution_id),
            submitted_at_epoch_ms: now_ms,
            record,
        })
    }
}
