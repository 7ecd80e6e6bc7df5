//! Itemized awaits (`ItemizedAwaitContinuationFlow`, `AwaitContinuationPlanner`,
//! `PipelineExecutionService.continueAwaitItem`): each completed item carries the steps after the
//! await through a child execution record keyed by `ItemContinuationKey`, up to the first
//! aggregate step; when every item's child has SUCCEEDED the parent is released to that step
//! with the children's outputs, in item order, as a `MULTI` input. With no aggregate step that is
//! the step count, and the parent then finishes without running a step. A continuation that
//! fails three times fails the parent with `AWAIT_ITEM_CONTINUATION_FAILED`.
//!
//! How the continuation runs is [`ItemContinuations`]: in process inside the completion call, as
//! TPF does today, or as a durable work item the child's own driver runs, as the Action API
//! design has it.

use serde_json::{json, Value};

use crate::store::{AwaitStore, CreateExecutionCommand, ExecutionStore, ReleaseRegistry};
use crate::worker::{TransitionCommand, TransitionResult};
use tpf_wire::ids::{self, ItemContinuationKey};
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
    ExecutionRecord, ExecutionStatus, ResultShape,
};

use super::{record_identity, Coordinator, CoordinatorResult, ItemContinuations};

/// `ItemizedAwaitContinuationFlow.MAX_ATTEMPTS`.
pub const ITEM_CONTINUATION_MAX_ATTEMPTS: u32 = 3;

/// The error code of a parent whose item continuation failed for good.
pub const AWAIT_ITEM_CONTINUATION_FAILED: &str = "AWAIT_ITEM_CONTINUATION_FAILED";

/// The error code of a child execution whose parent no longer waits on its unit (failed, timed
/// out or already released): TPF's planner does not run such a continuation
/// (`itemContinuationReady`), and a durable child must still end.
pub const AWAIT_PARENT_NOT_WAITING: &str = "AWAIT_PARENT_NOT_WAITING";

/// `ItemizedAwaitContinuationFlow.retryDelayMs`: 100 ms, then 200 ms, after the failed
/// 1-based attempt.
pub fn item_retry_delay_ms(failed_attempt: u32) -> i64 {
    let bounded = failed_attempt.clamp(1, ITEM_CONTINUATION_MAX_ATTEMPTS);
    100_i64 << (bounded - 1)
}

/// What a claimed child execution continues: its parent's unit, item and where it stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemChild {
    pub parent_execution_id: String,
    pub unit_id: String,
    pub item_index: u32,
    /// The child runs the steps before this one.
    pub aggregate_step_index: u32,
    /// `AwaitContinuationPlanner.itemContinuationReady` when the child was claimed.
    pub parent_waiting: bool,
}

/// `itemContinuationReady`: the parent is parked on this unit and dispatch is complete.
fn continuation_ready(parent: Option<&ExecutionRecord>, unit: &AwaitUnitRecord) -> bool {
    parent.is_some_and(|p| {
        p.status == ExecutionStatus::WaitingExternal
            && p.await_unit_id.as_deref() == Some(unit.unit_id.as_str())
    }) && unit.dispatch_complete
}

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    fn live_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Option<AwaitUnitRecord>> {
        Ok(self
            .store
            .get_unit(tenant_id, unit_id)?
            .filter(|u| u.live_at(now_ms)))
    }

    /// The child this record continues, if it is one (its key names unit and item).
    pub(super) fn item_child(
        &self,
        record: &ExecutionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<Option<ItemChild>> {
        let Some((unit_id, item_index)) = ids::parse_child_execution_key(&record.execution_key)
        else {
            return Ok(None);
        };
        let Some(unit) = self.live_unit(&record.tenant_id, &unit_id, now_ms)? else {
            return Ok(None);
        };
        let parent = self
            .store
            .get_execution(&record.tenant_id, &unit.execution_id, now_ms)?;
        let parent_waiting = continuation_ready(parent.as_ref(), &unit)
            && matches!(
                unit.status,
                AwaitUnitStatus::WaitingExternal | AwaitUnitStatus::Completed
            );
        Ok(Some(ItemChild {
            parent_execution_id: unit.execution_id.clone(),
            aggregate_step_index: self
                .pipeline
                .first_aggregate_step_index(record.current_step_index),
            unit_id,
            item_index,
            parent_waiting,
        }))
    }

    /// `afterRecordedCompletion` / `afterParentWaiting` for an itemized unit: every COMPLETED
    /// item gets its continuation once the parent is parked on the unit and dispatch is
    /// complete; held otherwise (the park's own call dispatches them).
    pub(super) fn dispatch_item_continuations(
        &mut self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        let Some(unit) = self.live_unit(tenant_id, unit_id, now_ms)? else {
            return Ok(());
        };
        let parent = self
            .store
            .get_execution(tenant_id, &unit.execution_id, now_ms)?;
        let Some(parent) = parent.filter(|p| continuation_ready(Some(p), &unit)) else {
            return Ok(());
        };
        let completed: Vec<AwaitInteractionRecord> = self
            .store
            .interactions_for_unit(tenant_id, unit_id)?
            .into_iter()
            .filter(|i| i.item_index.is_some() && i.status == AwaitInteractionStatus::Completed)
            .collect();
        for interaction in &completed {
            // `dispatchItemContinuationAttempt` re-reads the parent: once an earlier item released
            // (or failed) it, the rest do not run.
            let current = self
                .store
                .get_execution(tenant_id, &unit.execution_id, now_ms)?;
            if !continuation_ready(current.as_ref(), &unit) {
                break;
            }
            match self.config.item_continuations {
                ItemContinuations::Durable => {
                    self.create_item_child(&parent, &unit, interaction, now_ms)?;
                }
                ItemContinuations::InProcess => {
                    self.run_item_in_process(&parent, &unit, interaction, now_ms)?;
                }
            }
        }
        if unit.status == AwaitUnitStatus::Completed {
            let aggregate = self
                .pipeline
                .first_aggregate_step_index(unit.step_index + 1);
            self.release_itemized_parent_if_ready(tenant_id, unit_id, aggregate, now_ms)?;
        }
        Ok(())
    }

    fn continuation_key(
        parent: &ExecutionRecord,
        unit: &AwaitUnitRecord,
        item_index: u32,
    ) -> Option<ItemContinuationKey> {
        ItemContinuationKey::new(
            &parent.tenant_id,
            &parent.execution_id,
            &parent.execution_key,
            &unit.unit_id,
            i64::from(item_index),
        )
        .ok()
    }

    /// `captureOutput`'s create: the child record, QUEUED at the step after the await, with the
    /// item's response as its input, pinned to the parent's release, living as long as the
    /// parent. Creating it is idempotent (the key is the item's).
    fn create_item_child(
        &mut self,
        parent: &ExecutionRecord,
        unit: &AwaitUnitRecord,
        interaction: &AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<Option<ExecutionRecord>> {
        let Some(key) = interaction
            .item_index
            .and_then(|i| Self::continuation_key(parent, unit, i))
        else {
            return Ok(None);
        };
        let execution_key = key.child_execution_key();
        let cmd = CreateExecutionCommand {
            tenant_id: parent.tenant_id.clone(),
            execution_id: ids::execution_id(&parent.tenant_id, &execution_key, now_ms),
            execution_key,
            pipeline_id: parent.pipeline_id.clone(),
            contract_version: parent.contract_version.clone(),
            release_version: parent.release_version.clone(),
            result_shape: ResultShape::MaterializedMulti,
            input_payload: interaction.response_payload.clone().unwrap_or(Value::Null),
            initial_step_index: unit.step_index + 1,
            now_ms,
            ttl_epoch_s: parent.ttl_epoch_s,
        };
        let created = self.store.create_or_get_execution(&cmd)?;
        if !created.duplicate {
            self.log.record(now_ms, &created.record, "item-child");
        }
        Ok(Some(created.record))
    }

    /// TPF today: the continuation runs inside this call, up to three attempts (TPF spaces them
    /// 100 ms and 200 ms apart on its scheduler; the model runs them at once), then the child
    /// record is written already SUCCEEDED, or the parent is failed.
    fn run_item_in_process(
        &mut self,
        parent: &ExecutionRecord,
        unit: &AwaitUnitRecord,
        interaction: &AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        let Some(item_index) = interaction.item_index else {
            return Ok(());
        };
        let Some(key) = Self::continuation_key(parent, unit, item_index) else {
            return Ok(());
        };
        if !self.claims.insert(key.dispatch_claim_key()) {
            return Ok(());
        }
        let from = unit.step_index + 1;
        let stop = self.pipeline.first_aggregate_step_index(from);
        let input = interaction.response_payload.clone().unwrap_or(Value::Null);
        let mut last_failure = String::new();
        for attempt in 0..ITEM_CONTINUATION_MAX_ATTEMPTS {
            let cmd = TransitionCommand {
                tenant_id: parent.tenant_id.clone(),
                execution_id: parent.execution_id.clone(),
                identity: record_identity(parent),
                current_step_index: from,
                stop_before_step_index: stop,
                // The script stages attempts by number; TPF passes the parent's attempt.
                attempt,
                execution_version: parent.version,
                transition_key: key.transition_key(),
                payload: input.clone(),
            };
            match self.worker.execute(&self.pipeline, &cmd) {
                TransitionResult::Completed { output } => {
                    let Some(child) = self.create_item_child(parent, unit, interaction, now_ms)?
                    else {
                        return Ok(());
                    };
                    if child.status == ExecutionStatus::Succeeded {
                        // `handleCreatedChild`: already materialised, only the facts remain.
                        self.store.record_item_continuation_completed(
                            &parent.tenant_id,
                            &unit.unit_id,
                            &AwaitUnitRecord::continuation_key(item_index),
                            now_ms,
                        )?;
                        self.release_itemized_parent_if_ready(
                            &parent.tenant_id,
                            &unit.unit_id,
                            stop,
                            now_ms,
                        )?;
                        return Ok(());
                    }
                    let item = ItemChild {
                        parent_execution_id: parent.execution_id.clone(),
                        unit_id: unit.unit_id.clone(),
                        item_index,
                        aggregate_step_index: stop,
                        parent_waiting: true,
                    };
                    return self.commit_item_success(&child, &item, output, now_ms);
                }
                other => last_failure = continuation_failure(&other),
            }
        }
        self.fail_parent_after_continuation_error(
            &parent.tenant_id,
            &parent.execution_id,
            &unit.unit_id,
            item_index,
            &last_failure,
            now_ms,
        )
    }

    /// The child's continuation succeeded: the child SUCCEEDED with its outputs, the unit gets the
    /// continuation fact, and the parent is released once every child has SUCCEEDED.
    pub(super) fn commit_item_success(
        &mut self,
        child: &ExecutionRecord,
        item: &ItemChild,
        output: Value,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        let outputs = Value::Array(vec![output]);
        let transition_key = ids::item_continuation_transition_key(&item.unit_id, item.item_index);
        if let Some(done) = self.store.mark_succeeded(
            &child.tenant_id,
            &child.execution_id,
            child.version,
            &transition_key,
            &outputs,
            now_ms,
        )? {
            self.log.record(now_ms, &done, "succeed");
        }
        self.store.record_item_continuation_completed(
            &child.tenant_id,
            &item.unit_id,
            &AwaitUnitRecord::continuation_key(item.item_index),
            now_ms,
        )?;
        self.release_itemized_parent_if_ready(
            &child.tenant_id,
            &item.unit_id,
            item.aggregate_step_index,
            now_ms,
        )?;
        Ok(())
    }

    /// A durable continuation attempt failed: retried as a scheduled wakeup (`WAIT_RETRY`) with
    /// TPF's item delays until the third attempt, then the child and its parent fail.
    pub(super) fn commit_item_failure(
        &mut self,
        child: &ExecutionRecord,
        item: &ItemChild,
        transition_key: &str,
        result: &TransitionResult,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        let message = continuation_failure(result);
        let failed_attempt = child.attempt + 1;
        if failed_attempt < ITEM_CONTINUATION_MAX_ATTEMPTS {
            if let Some(waiting) = self.store.schedule_retry(
                &child.tenant_id,
                &child.execution_id,
                child.version,
                failed_attempt,
                now_ms + item_retry_delay_ms(failed_attempt),
                transition_key,
                AWAIT_ITEM_CONTINUATION_FAILED,
                &message,
                now_ms,
            )? {
                self.log.record(now_ms, &waiting, "retry");
            }
            return Ok(());
        }
        self.fail_child(
            child,
            transition_key,
            AWAIT_ITEM_CONTINUATION_FAILED,
            &message,
            now_ms,
        )?;
        self.fail_parent_after_continuation_error(
            &child.tenant_id,
            &item.parent_execution_id,
            &item.unit_id,
            item.item_index,
            &message,
            now_ms,
        )
    }

    /// A child whose parent no longer waits on its unit ends FAILED without running.
    pub(super) fn abandon_item_child(
        &mut self,
        child: &ExecutionRecord,
        transition_key: &str,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        self.fail_child(
            child,
            transition_key,
            AWAIT_PARENT_NOT_WAITING,
            "The parent execution no longer waits on this await unit",
            now_ms,
        )
    }

    fn fail_child(
        &mut self,
        child: &ExecutionRecord,
        transition_key: &str,
        code: &str,
        message: &str,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        if let Some(failed) = self.store.mark_terminal_failure(
            &child.tenant_id,
            &child.execution_id,
            child.version,
            ExecutionStatus::Failed,
            transition_key,
            code,
            message,
            now_ms,
        )? {
            self.log.record(now_ms, &failed, "fail");
        }
        Ok(())
    }

    /// `failParentAfterContinuationError`: the parent FAILED unless it already is terminal.
    fn fail_parent_after_continuation_error(
        &mut self,
        tenant_id: &str,
        parent_execution_id: &str,
        unit_id: &str,
        item_index: u32,
        message: &str,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        let Some(parent) = self
            .store
            .get_execution(tenant_id, parent_execution_id, now_ms)?
        else {
            return Ok(());
        };
        if parent.status.terminal() {
            return Ok(());
        }
        if let Some(failed) = self.store.mark_terminal_failure(
            tenant_id,
            parent_execution_id,
            parent.version,
            ExecutionStatus::Failed,
            &format!("await-item-continuation-failed:{unit_id}:{item_index}"),
            AWAIT_ITEM_CONTINUATION_FAILED,
            &format!(
                "Await item continuation failed after {ITEM_CONTINUATION_MAX_ATTEMPTS} attempts: {message}"
            ),
            now_ms,
        )? {
            self.log.record(now_ms, &failed, "fail");
        }
        Ok(())
    }

    /// `releaseParentIfReady`: every item admitted and every child SUCCEEDED (missing
    /// continuation facts are reconciled from the children) → the parent QUEUED at the aggregate
    /// step with the children's outputs in item order.
    pub(super) fn release_itemized_parent_if_ready(
        &mut self,
        tenant_id: &str,
        unit_id: &str,
        aggregate_step_index: u32,
        now_ms: i64,
    ) -> CoordinatorResult<bool> {
        let Some(unit) = self.live_unit(tenant_id, unit_id, now_ms)? else {
            return Ok(false);
        };
        let Some(expected) = unit.expected_item_count else {
            return Ok(false);
        };
        if !unit.uses_item_continuations()
            || !unit.dispatch_complete
            || unit.completed_item_count < expected
        {
            return Ok(false);
        }
        let Some(parent) = self
            .store
            .get_execution(tenant_id, &unit.execution_id, now_ms)?
        else {
            return Ok(false);
        };
        let mut outputs = Vec::new();
        for index in 0..u32::try_from(expected).unwrap_or(0) {
            let Some(key) = Self::continuation_key(&parent, &unit, index) else {
                return Ok(false);
            };
            let child =
                self.store
                    .get_execution_by_key(tenant_id, &key.child_execution_key(), now_ms)?;
            let Some(child) = child.filter(|c| c.status == ExecutionStatus::Succeeded) else {
                return Ok(false);
            };
            if !unit.has_continuation_fact(index) {
                self.store.record_item_continuation_completed(
                    tenant_id,
                    unit_id,
                    &AwaitUnitRecord::continuation_key(index),
                    now_ms,
                )?;
            }
            match child.result_payload {
                Some(Value::Array(items)) => outputs.extend(items),
                Some(Value::Null) | None => {}
                Some(other) => outputs.push(other),
            }
        }
        let input = json!({ "shape": "MULTI", "items": outputs });
        let released = self.store.mark_await_item_continuations_completed(
            tenant_id,
            &unit.execution_id,
            unit_id,
            aggregate_step_index,
            &input,
            now_ms,
        )?;
        match released {
            Some(record) => {
                self.claims.retain(|k| {
                    !k.starts_with(&format!("{tenant_id}::{}::{unit_id}::", unit.execution_id))
                });
                self.log.record(now_ms, &record, "await-items-completed");
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The child executions that carried the items of `parent`'s itemized awaits, oldest first.
    pub fn item_children(
        &self,
        tenant_id: &str,
        parent_execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Vec<ExecutionRecord>> {
        let mut out = Vec::new();
        for t in self.log.transitions() {
            if t.cause != "item-child" || t.tenant_id != tenant_id {
                continue;
            }
            let Some(child) = self
                .store
                .get_execution(tenant_id, &t.execution_id, now_ms)?
            else {
                continue;
            };
            let Some((unit_id, _)) = ids::parse_child_execution_key(&child.execution_key) else {
                continue;
            };
            if self
                .store
                .get_unit(tenant_id, &unit_id)?
                .is_some_and(|u| u.execution_id == parent_execution_id)
            {
                out.push(child);
            }
        }
        Ok(out)
    }
}

/// The message a failed continuation attempt leaves (`continueAwaitItem`: anything but a
/// COMPLETED transition is a failure).
fn continuation_failure(result: &TransitionResult) -> String {
    match result {
        TransitionResult::Completed { .. } => String::new(),
        TransitionResult::WaitingExternal { .. } => {
            "Await item continuation transition did not complete: WAITING_EXTERNAL".to_owned()
        }
        TransitionResult::OutcomeUnknown {
            error_code,
            message,
        } => format!("{error_code}: {message}"),
        TransitionResult::Failed {
            failure_class,
            message,
            ..
        } => {
            if message.is_empty() {
                failure_class.clone()
            } else {
                format!("{failure_class}: {message}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_retry_delays_are_tpfs() {
        assert_eq!(item_retry_delay_ms(1), 100);
        assert_eq!(item_retry_delay_ms(2), 200);
        assert_eq!(item_retry_delay_ms(9), 400);
    }
}
