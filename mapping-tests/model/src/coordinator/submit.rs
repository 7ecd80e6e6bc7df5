//! Submission (`QueueAsyncSubmissionFlow`).

use crate::store::{AwaitStore, CreateExecutionCommand, ExecutionStore, ReleaseRegistry};
use tpf_wire::ids;

use super::{Coordinator, CoordinatorError, CoordinatorResult, SubmitRequest, SubmitResult, DAY_S};

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    pub fn submit(&mut self, req: &SubmitRequest, now_ms: i64) -> CoordinatorResult<SubmitResult> {
        if req.tenant_id.trim().is_empty() {
            return Err(CoordinatorError::BadRequest("tenantId is required".into()));
        }
        // HostedPipelineControlPlaneResource.submitExecution: the active release is resolved
        // once, here, and its triple is pinned on the record for good.
        let release = self
            .store
            .active_release(&req.tenant_id, &req.pipeline_id)?
            .ok_or_else(|| CoordinatorError::NoActiveRelease {
                tenant_id: req.tenant_id.clone(),
                pipeline_id: req.pipeline_id.clone(),
            })?;
        let execution_key = match &req.execution_key {
            Some(key) if key.trim().is_empty() => {
                return Err(CoordinatorError::BadRequest(
                    "Idempotency-Key must not be blank".into(),
                ))
            }
            Some(key) => key.clone(),
            None => ids::derived_execution_key(&req.tenant_id, &req.input_payload.to_string()),
        };
        let cmd = CreateExecutionCommand {
            tenant_id: req.tenant_id.clone(),
            execution_id: ids::execution_id(&req.tenant_id, &execution_key),
            execution_key,
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
            &req.tenant_id,
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
