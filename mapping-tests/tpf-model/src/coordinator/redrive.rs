//! Re-drive (`QueueAsyncRedriveFlow`, `ExecutionRedrivePlan`).

use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};

use super::{Coordinator, CoordinatorError, CoordinatorResult, RedriveResult};

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    pub fn redrive(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: Option<i64>,
        allow_failed: bool,
        now_ms: i64,
    ) -> CoordinatorResult<RedriveResult> {
        let result = self.redrive_inner(
            tenant_id,
            execution_id,
            expected_version,
            allow_failed,
            now_ms,
        );
        let outcome = match &result {
            Ok(r) => r.status.to_string(),
            Err(e) => e.code().to_owned(),
        };
        self.call(now_ms, "redrive", tenant_id, Some(execution_id), outcome);
        result
    }

    pub(super) fn redrive_inner(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: Option<i64>,
        allow_failed: bool,
        now_ms: i64,
    ) -> CoordinatorResult<RedriveResult> {
        let record = self.status(tenant_id, execution_id, now_ms)?;
        // ExecutionRedrivePlan.from: DLQ, or FAILED or REMOTE_OUTCOME_UNKNOWN with allowFailed;
        // expectedVersion defaults to the current version and must equal it.
        let eligible = record.status.redrivable(allow_failed);
        if !eligible {
            return Err(CoordinatorError::Conflict(format!(
                "Execution {execution_id} cannot be re-driven from status {}",
                record.status
            )));
        }
        let expected = expected_version.unwrap_or(record.version);
        if expected != record.version {
            return Err(CoordinatorError::Conflict(format!(
                "Execution {execution_id} version mismatch: expected {expected} \
                 but current version is {}",
                record.version
            )));
        }
        let transition_key = format!("redrive:{execution_id}:{expected}");
        let redriven = self
            .store
            .redrive_terminal_execution(
                tenant_id,
                execution_id,
                expected,
                allow_failed,
                &transition_key,
                now_ms,
            )?
            .ok_or_else(|| {
                CoordinatorError::Conflict(format!(
                    "execution {execution_id} changed before re-drive could be admitted"
                ))
            })?;
        self.log.record(now_ms, &redriven, "redrive");
        Ok(RedriveResult {
            tenant_id: redriven.tenant_id.clone(),
            execution_id: redriven.execution_id.clone(),
            previous_status: record.status,
            status: redriven.status,
            version: redriven.version,
            current_step_index: redriven.current_step_index,
            attempt: redriven.attempt,
            pipeline_id: redriven.pipeline_id.clone(),
            contract_version: redriven.contract_version.clone(),
            release_version: redriven.release_version.clone(),
            updated_at_epoch_ms: redriven.updated_at_epoch_ms,
        })
    }
}
