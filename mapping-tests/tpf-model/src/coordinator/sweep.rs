//! Sweep (`QueueAsyncSweepFlow`, `AwaitTimeoutFlow`): await timeouts, then the due list.

use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitStatus, ExecutionRecord,
    ExecutionStatus,
};

use super::{Coordinator, CoordinatorResult, SweepResult, TimedOutAwait};

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    /// Await timeouts first, then the due list. Never claims or executes.
    pub fn sweep_once(&mut self, now_ms: i64, limit: usize) -> CoordinatorResult<SweepResult> {
        let timed_out = self.apply_await_timeouts(now_ms, limit)?;
        let due = self.store.find_due_executions(now_ms, limit)?;
        Ok(SweepResult { timed_out, due })
    }

    /// `AwaitTimeoutFlow.sweepTimedOut`.
    pub fn apply_await_timeouts(
        &mut self,
        now_ms: i64,
        limit: usize,
    ) -> CoordinatorResult<Vec<TimedOutAwait>> {
        let mut applied = Vec::new();
        for interaction in self.store.find_timed_out(now_ms, limit)? {
            if let Some(done) = self.time_out_interaction(&interaction, now_ms)? {
                applied.push(done);
            }
        }
        Ok(applied)
    }

    pub fn find_due_executions(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> CoordinatorResult<Vec<ExecutionRecord>> {
        Ok(self.store.find_due_executions(now_ms, limit)?)
    }

    /// `markTimedOut` (interaction, then unit), then the parent fails `AWAIT_TIMEOUT` only if
    /// it is still parked on that unit.
    pub(super) fn time_out_interaction(
        &mut self,
        interaction: &AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<Option<TimedOutAwait>> {
        let tenant_id = &interaction.tenant_id;
        if self
            .store
            .transition_interaction(
                tenant_id,
                &interaction.interaction_id,
                interaction.version,
                AwaitInteractionStatus::TimedOut,
                None,
                None,
                now_ms,
            )?
            .is_none()
        {
            return Ok(None);
        }
        let Some(unit_id) = interaction.unit_id.clone() else {
            return Ok(None);
        };
        self.store
            .mark_unit_terminal(tenant_id, &unit_id, AwaitUnitStatus::TimedOut, now_ms)?;
        let parent_failed = self.fail_parked_parent(
            tenant_id,
            &interaction.execution_id,
            &unit_id,
            &interaction.interaction_id,
            now_ms,
        )?;
        Ok(Some(TimedOutAwait {
            tenant_id: tenant_id.clone(),
            execution_id: interaction.execution_id.clone(),
            unit_id,
            interaction_id: interaction.interaction_id.clone(),
            parent_failed,
        }))
    }

    pub(super) fn fail_parked_parent(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        unit_id: &str,
        interaction_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<bool> {
        let Some(parent) = self.store.get_execution(tenant_id, execution_id, now_ms)? else {
            return Ok(false);
        };
        if parent.status != ExecutionStatus::WaitingExternal
            || parent.await_unit_id.as_deref() != Some(unit_id)
        {
            return Ok(false);
        }
        let transition_key = format!(
            "{}:{}:{}",
            parent.execution_id, parent.current_step_index, parent.attempt
        );
        let failed = self.store.mark_terminal_failure(
            tenant_id,
            execution_id,
            parent.version,
            ExecutionStatus::Failed,
            &transition_key,
            "AWAIT_TIMEOUT",
            &format!("Await interaction timed out: {interaction_id}"),
            now_ms,
        )?;
        match failed {
            Some(record) => {
                self.log.record(now_ms, &record, "await-timeout");
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The Action API's deadline check: a parked execution whose await deadline has passed gets
    /// its timeout applied, as the sweep would. It also covers an interaction a late completion
    /// already marked TIMED_OUT (the sweep's deadline index no longer lists it). Returns the
    /// interactions timed out (empty when the deadline has not passed).
    pub fn apply_parked_deadline(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Vec<TimedOutAwait>> {
        let record = self.status(tenant_id, execution_id, now_ms)?;
        let Some(unit_id) = record.await_unit_id.clone() else {
            return Ok(Vec::new());
        };
        if record.status != ExecutionStatus::WaitingExternal {
            return Ok(Vec::new());
        }
        let expired: Vec<AwaitInteractionRecord> = self
            .store
            .interactions_for_unit(tenant_id, &unit_id)?
            .into_iter()
            .filter(|i| {
                i.deadline_epoch_ms.is_some_and(|d| d <= now_ms)
                    && (!i.status.terminal() || i.status == AwaitInteractionStatus::TimedOut)
            })
            .collect();
        let mut applied = Vec::new();
        for interaction in &expired {
            if !interaction.status.terminal() {
                if let Some(done) = self.time_out_interaction(interaction, now_ms)? {
                    applied.push(done);
                }
            }
        }
        if let Some(first) = expired.first() {
            if self.fail_parked_parent(
                tenant_id,
                execution_id,
                &unit_id,
                &first.interaction_id,
                now_ms,
            )? {
                applied.push(TimedOutAwait {
                    tenant_id: tenant_id.to_owned(),
                    execution_id: execution_id.to_owned(),
                    unit_id: unit_id.clone(),
                    interaction_id: first.interaction_id.clone(),
                    parent_failed: true,
                });
            }
        }
        Ok(applied)
    }
}
