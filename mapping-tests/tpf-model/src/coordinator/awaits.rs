//! Await completion (`AwaitBoundaryAdmission`, `AwaitContinuations`) and the await queries.

use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
};

use super::{
    AwaitCompletion, AwaitCompletionResult, Coordinator, CoordinatorError, CoordinatorResult,
};

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    /// First writer wins; a duplicate re-runs the idempotent continuation.
    pub fn complete_await(
        &mut self,
        cmd: &AwaitCompletion,
        now_ms: i64,
    ) -> CoordinatorResult<AwaitCompletionResult> {
        let result = self.complete_await_inner(cmd, now_ms);
        let outcome = match &result {
            Ok(r) if r.duplicate => "DUPLICATE".to_owned(),
            Ok(r) => r.interaction.status.to_string(),
            Err(e) => e.code().to_owned(),
        };
        let execution_id = result
            .as_ref()
            .ok()
            .map(|r| r.interaction.execution_id.clone());
        self.call(
            now_ms,
            "complete-await",
            &cmd.tenant_id,
            execution_id.as_deref(),
            outcome,
        );
        result
    }

    pub(super) fn complete_await_inner(
        &mut self,
        cmd: &AwaitCompletion,
        now_ms: i64,
    ) -> CoordinatorResult<AwaitCompletionResult> {
        let found = match (&cmd.interaction_id, &cmd.correlation_id) {
            (Some(id), _) => self.store.get_interaction(&cmd.tenant_id, id)?,
            (None, Some(correlation)) => self
                .store
                .find_interaction_by_correlation(&cmd.tenant_id, correlation)?,
            (None, None) => {
                return Err(CoordinatorError::BadRequest(
                    "interactionId or correlationId is required".into(),
                ))
            }
        };
        // Expired rows read as absent, as TPF's stores treat them.
        let interaction = found
            .filter(|i| i.live_at(now_ms))
            .ok_or_else(|| CoordinatorError::NotFound("await interaction".into()))?;
        if interaction.tenant_id != cmd.tenant_id {
            return Err(CoordinatorError::BadRequest("tenant mismatch".into()));
        }
        if interaction.status == AwaitInteractionStatus::Completed {
            return self.duplicate_completion(interaction, now_ms);
        }
        if interaction.status.terminal() {
            return Err(CoordinatorError::InteractionTerminal {
                interaction_id: interaction.interaction_id,
                status: interaction.status,
            });
        }
        if interaction.deadline_epoch_ms.is_some_and(|d| d <= now_ms) {
            // `completeResolvedBlocking`: rejected and marked TIMED_OUT, unit and parent left as
            // they are. TPF's sweep skips terminal interactions, so unless the Action API's
            // deadline rule applies the timeout the parent stays parked for good.
            let timed_out = self.store.transition_interaction(
                &interaction.tenant_id,
                &interaction.interaction_id,
                interaction.version,
                AwaitInteractionStatus::TimedOut,
                None,
                None,
                now_ms,
            )?;
            if timed_out.is_none() {
                if let Some(current) = self
                    .store
                    .get_interaction(&interaction.tenant_id, &interaction.interaction_id)?
                {
                    if current.status == AwaitInteractionStatus::Completed {
                        return self.duplicate_completion(current, now_ms);
                    }
                }
            }
            return Err(CoordinatorError::AwaitDeadlinePassed {
                interaction_id: interaction.interaction_id,
            });
        }
        let completed = self.store.transition_interaction(
            &interaction.tenant_id,
            &interaction.interaction_id,
            interaction.version,
            AwaitInteractionStatus::Completed,
            Some(&cmd.response_payload),
            cmd.actor.as_deref(),
            now_ms,
        )?;
        let Some(completed) = completed else {
            let current = self
                .store
                .get_interaction(&interaction.tenant_id, &interaction.interaction_id)?
                .ok_or_else(|| CoordinatorError::NotFound("await interaction".into()))?;
            if current.status == AwaitInteractionStatus::Completed {
                return self.duplicate_completion(current, now_ms);
            }
            return Err(CoordinatorError::Conflict(format!(
                "await interaction {} changed during completion",
                current.interaction_id
            )));
        };
        let released = self.record_completion(&completed, now_ms)?;
        Ok(AwaitCompletionResult {
            interaction: completed,
            duplicate: false,
            released,
        })
    }

    pub(super) fn duplicate_completion(
        &mut self,
        interaction: AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<AwaitCompletionResult> {
        let released = self.record_completion(&interaction, now_ms)?;
        Ok(AwaitCompletionResult {
            interaction,
            duplicate: true,
            released,
        })
    }

    /// `recordCompletion` + `afterRecordedCompletion`; both idempotent, so duplicates re-run them.
    pub(super) fn record_completion(
        &mut self,
        interaction: &AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<bool> {
        let Some(unit_id) = interaction.unit_id.as_deref() else {
            return Ok(false);
        };
        let tenant_id = &interaction.tenant_id;
        match interaction.item_index {
            None => {
                let unit = self.store.get_unit(tenant_id, unit_id)?;
                if unit.is_some_and(|u| u.status != AwaitUnitStatus::Completed) {
                    self.store.mark_unit_completed(tenant_id, unit_id, now_ms)?;
                }
            }
            Some(index) => {
                // recordItemCompleted runs completeIfReady in TPF's store.
                self.store.record_item_completed(
                    tenant_id,
                    unit_id,
                    &format!("item:{index}"),
                    now_ms,
                )?;
                self.store.complete_if_ready(tenant_id, unit_id, now_ms)?;
            }
        }
        self.release_parent(tenant_id, unit_id, now_ms)
    }

    /// `afterRecordedCompletion` / `afterParentWaiting`. Scalar: once the unit is COMPLETED,
    /// `markAwaitCompleted(stepIndex + 1)` if the parent is parked on it, otherwise held.
    /// Itemized: every completed item's continuation is dispatched (`items`); the parent is
    /// released to the first aggregate step once all of them have succeeded. Returns whether this
    /// call released the parent.
    pub(super) fn release_parent(
        &mut self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<bool> {
        let Some(unit) = self
            .store
            .get_unit(tenant_id, unit_id)?
            .filter(|u| u.live_at(now_ms))
        else {
            return Ok(false);
        };
        if unit.uses_item_continuations() {
            let before = self.log.transitions().len();
            self.dispatch_item_continuations(tenant_id, unit_id, now_ms)?;
            return Ok(self.log.transitions()[before..].iter().any(|t| {
                t.execution_id == unit.execution_id && t.cause == "await-items-completed"
            }));
        }
        if unit.status != AwaitUnitStatus::Completed {
            return Ok(false);
        }
        let released = self.store.mark_await_completed(
            tenant_id,
            &unit.execution_id,
            unit_id,
            unit.step_index + 1,
            now_ms,
        )?;
        match released {
            Some(record) => {
                self.log.record(now_ms, &record, "await-completed");
                Ok(true)
            }
            // Parent not parked yet (held), or already released (TPF re-enqueues; the model
            // has no queue, the driver's next call finds it QUEUED).
            None => Ok(false),
        }
    }

    /// Interactions of the unit the execution is parked on (or last parked on).
    pub fn await_interactions(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Vec<AwaitInteractionRecord>> {
        let record = self.status(tenant_id, execution_id, now_ms)?;
        match record.await_unit_id {
            Some(unit_id) => Ok(self.store.interactions_for_unit(tenant_id, &unit_id)?),
            None => Ok(Vec::new()),
        }
    }

    pub fn await_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
    ) -> CoordinatorResult<Option<AwaitUnitRecord>> {
        Ok(self.store.get_unit(tenant_id, unit_id)?)
    }
}
