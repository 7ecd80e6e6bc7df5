//! TPF's execution table and its key table: `ExecutionStore` with `DynamoExecutionStateStore`'s
//! conditions.

use serde_json::Value;

use tpf_wire::ids;
use tpf_wire::records::{execution_attr, ExecutionRecord, ExecutionStatus};

use super::{claimable, key, release_lease_and_outcome, truncate_error, ttl_ok, InMemoryStore};
use crate::store::{CreateExecutionCommand, CreateOrGet, ExecutionStore, StoreResult};

impl ExecutionStore for InMemoryStore {
    fn create_or_get_execution(
        &self,
        cmd: &CreateExecutionCommand,
    ) -> StoreResult<CreateOrGet<ExecutionRecord>> {
        let mut tables = self.tables();
        let scoped = ids::scoped_execution_key(&cmd.tenant_id, &cmd.execution_key);
        if let Some(existing) = tables.execution_keys.get(&scoped).cloned() {
            if let Some(record) = tables.executions.get(&existing) {
                if ttl_ok(record.ttl_epoch_s, cmd.now_ms) {
                    return Ok(CreateOrGet {
                        record: record.clone(),
                        duplicate: true,
                    });
                }
            }
        }
        let record = cmd.new_record();
        let row = key(&cmd.tenant_id, &cmd.execution_id);
        tables.execution_keys.insert(scoped, row.clone());
        tables.executions.insert(row, record.clone());
        Ok(CreateOrGet {
            record,
            duplicate: false,
        })
    }

    fn get_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        Ok(self
            .tables()
            .executions
            .get(&key(tenant_id, execution_id))
            .filter(|r| r.live_at(now_ms))
            .cloned())
    }

    fn claim_lease(
        &self,
        tenant_id: &str,
        execution_id: &str,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| claimable(r, now_ms),
            |r| {
                r.status = ExecutionStatus::Running;
                r.lease_owner = Some(owner.to_owned());
                r.lease_expires_epoch_ms = now_ms + lease_ms;
            },
        )
    }

    fn mark_succeeded(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        result: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::Succeeded;
                r.last_transition_key = Some(transition_key.to_owned());
                r.result_payload = Some(result.clone());
                r.lease_expires_epoch_ms = 0;
                r.next_due_epoch_ms = now_ms;
                r.error_code = None;
                r.error_message = None;
                r.lease_owner = None;
                r.await_unit_id = None;
            },
        )
    }

    fn mark_waiting_external(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        await_unit_id: &str,
        await_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::WaitingExternal;
                r.last_transition_key = Some(transition_key.to_owned());
                r.current_step_index = await_step_index;
                r.next_due_epoch_ms = i64::MAX;
                r.await_unit_id = Some(await_unit_id.to_owned());
                r.lease_expires_epoch_ms = 0;
                r.result_payload = None;
                r.error_code = None;
                r.error_message = None;
                r.lease_owner = None;
            },
        )
    }

    fn mark_await_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| {
                r.status == ExecutionStatus::WaitingExternal
                    && r.await_unit_id
                        .as_deref()
                        .is_none_or(|unit| unit == await_unit_id)
            },
            |r| {
                r.status = ExecutionStatus::Queued;
                r.current_step_index = next_step_index;
                r.next_due_epoch_ms = now_ms;
                // The unit id stays: the resumed segment loads its input from the unit.
                r.await_unit_id = Some(await_unit_id.to_owned());
                release_lease_and_outcome(r);
            },
        )
    }

    fn mark_await_item_continuations_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        input_payload: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| {
                r.status == ExecutionStatus::WaitingExternal
                    && r.await_unit_id.as_deref() == Some(await_unit_id)
            },
            |r| {
                r.status = ExecutionStatus::Queued;
                r.current_step_index = next_step_index;
                r.next_due_epoch_ms = now_ms;
                r.input_payload = input_payload.clone();
                r.await_unit_id = None;
                release_lease_and_outcome(r);
            },
        )
    }

    fn schedule_retry(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        next_attempt: u32,
        next_due_epoch_ms: i64,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::WaitRetry;
                r.attempt = next_attempt;
                r.next_due_epoch_ms = next_due_epoch_ms;
                r.last_transition_key = Some(transition_key.to_owned());
                r.error_code = Some(error_code.to_owned());
                r.error_message = Some(truncate_error(error_message));
                r.result_payload = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn mark_terminal_failure(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        status: ExecutionStatus,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        if !matches!(status, ExecutionStatus::Failed | ExecutionStatus::Dlq) {
            return Ok(None);
        }
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = status;
                r.next_due_epoch_ms = now_ms;
                r.last_transition_key = Some(transition_key.to_owned());
                r.error_code = Some(error_code.to_owned());
                r.error_message = Some(truncate_error(error_message));
                r.result_payload = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn mark_remote_outcome_unknown(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::RemoteOutcomeUnknown;
                r.next_due_epoch_ms = i64::MAX;
                r.error_code = Some(error_code.to_owned());
                r.error_message = Some(truncate_error(error_message));
                r.result_payload = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn redrive_terminal_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        allow_failed: bool,
        transition_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version && r.status.redrivable(allow_failed),
            |r| {
                r.status = ExecutionStatus::Queued;
                r.attempt += 1;
                r.next_due_epoch_ms = now_ms;
                r.last_transition_key = Some(transition_key.to_owned());
                execution_attr::REPLAY.clone_into(&mut r.redrive_intent);
                r.result_payload = None;
                r.error_code = None;
                r.error_message = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn find_due_executions(&self, now_ms: i64, limit: usize) -> StoreResult<Vec<ExecutionRecord>> {
        // Key order stands in for DynamoDB's scan order; ties on the due time go by tenant and
        // id (TPF leaves them in scan order) so runs are reproducible.
        let candidates = limit.saturating_mul(3);
        let mut due: Vec<ExecutionRecord> = self
            .tables()
            .executions
            .values()
            .filter(|r| claimable(r, now_ms))
            .take(candidates)
            .cloned()
            .collect();
        due.sort_by(|a, b| {
            (a.next_due_epoch_ms, &a.tenant_id, &a.execution_id).cmp(&(
                b.next_due_epoch_ms,
                &b.tenant_id,
                &b.execution_id,
            ))
        });
        due.truncate(limit);
        Ok(due)
    }

    fn get_execution_by_key(
        &self,
        tenant_id: &str,
        execution_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        let tables = self.tables();
        Ok(tables
            .execution_keys
            .get(&ids::scoped_execution_key(tenant_id, execution_key))
            .and_then(|row| tables.executions.get(row))
            .filter(|r| r.live_at(now_ms))
            .cloned())
    }
}
