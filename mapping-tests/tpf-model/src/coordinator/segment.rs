//! Process work item: claim, run one segment, commit (`QueueAsyncSegmentPipeline`), and the
//! failure path (`ExecutionFailureHandler`).

use serde_json::Value;

use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};
use crate::worker::{AwaitShape, TransitionCommand, TransitionResult};
use tpf_wire::ids;
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
    DeadLetterEnvelope, ExecutionRecord, ExecutionStatus,
};

use super::{
    record_identity, ClaimedSegment, Coordinator, CoordinatorError, CoordinatorResult, ItemChild,
    WorkItemOutcome, WorkItemStart, DAY_S,
};

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    /// Claim, run one segment, commit. A non-claimable execution is returned unchanged.
    pub fn process_work_item(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<WorkItemOutcome> {
        match self.begin_work_item(tenant_id, execution_id, now_ms)? {
            WorkItemStart::NotClaimed(record) => Ok(WorkItemOutcome {
                claimed: false,
                record,
            }),
            WorkItemStart::Claimed(segment) => Ok(WorkItemOutcome {
                claimed: true,
                record: self.commit_segment(segment, now_ms)?,
            }),
        }
    }

    /// Another TPF worker (`owner`) claims the lease, if the execution is claimable, and runs
    /// nothing: the record stays RUNNING under that lease until it expires, as when a claimant
    /// dies between its claim and its commit.
    pub fn claim_lease_as(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        owner: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Option<ExecutionRecord>> {
        let claimed =
            self.store
                .claim_lease(tenant_id, execution_id, owner, now_ms, self.config.lease_ms)?;
        if let Some(record) = &claimed {
            self.log.record(now_ms, record, "claim");
        }
        Ok(claimed)
    }

    /// Claims the lease and runs the worker; the outcome is committed by [`Self::commit_segment`].
    pub fn begin_work_item(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<WorkItemStart> {
        match self.claim_segment(tenant_id, execution_id, now_ms)? {
            Claim::NotClaimed(record) => Ok(WorkItemStart::NotClaimed(record)),
            Claim::Ready(segment) => Ok(WorkItemStart::Claimed(segment)),
            Claim::Command {
                claimed,
                transition_key,
                item,
                command,
            } => {
                let result = self.worker.execute(&self.pipeline, &command);
                let await_unit_id = match (&result, &item) {
                    (TransitionResult::WaitingExternal { step_index }, None) => {
                        Some(self.import_suspension(&claimed, *step_index, now_ms)?)
                    }
                    _ => None,
                };
                Ok(WorkItemStart::Claimed(ClaimedSegment {
                    record: claimed,
                    transition_key,
                    result,
                    await_unit_id,
                    item,
                }))
            }
        }
    }

    /// Claims the lease and builds the segment's transition command, without running it: the
    /// work function runs it in process ([`Self::begin_work_item`]) or hands it to a transition
    /// worker (`remote.rs`). A segment that needs no worker call comes back ready to commit.
    pub(super) fn claim_segment(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Claim> {
        let current = self.status(tenant_id, execution_id, now_ms)?;
        let Some(claimed) = self.store.claim_lease(
            tenant_id,
            execution_id,
            &self.config.instance_id,
            now_ms,
            self.config.lease_ms,
        )?
        else {
            // Not due, leased elsewhere, parked or terminal: the work item is simply handled.
            return Ok(Claim::NotClaimed(current));
        };
        self.log.record(now_ms, &claimed, "claim");
        let transition_key = format!(
            "{}:{}:{}",
            claimed.execution_id, claimed.current_step_index, claimed.attempt
        );
        let item = self.item_child(&claimed, now_ms)?;
        let stop = match &item {
            Some(child) => child.aggregate_step_index,
            None => self.pipeline.len(),
        };
        let ready = |result| {
            Ok(Claim::Ready(ClaimedSegment {
                record: claimed.clone(),
                transition_key: transition_key.clone(),
                result,
                await_unit_id: None,
                item: item.clone(),
            }))
        };
        if item.as_ref().is_some_and(|c| !c.parent_waiting) {
            // Not run: `commit_segment` ends the child (`abandon_item_child`).
            return ready(TransitionResult::Completed {
                output: Value::Null,
            });
        }
        if item.is_none() && claimed.current_step_index >= self.pipeline.len() {
            // Released at the step count by its itemized await: the items are the result; TPF's
            // coordinator publishes them itself, without a worker call.
            return ready(TransitionResult::Completed {
                output: multi_items(&claimed.input_payload),
            });
        }
        let payload = self.segment_input(&claimed)?;
        let command = TransitionCommand {
            tenant_id: claimed.tenant_id.clone(),
            execution_id: claimed.execution_id.clone(),
            identity: record_identity(&claimed),
            current_step_index: claimed.current_step_index,
            stop_before_step_index: stop,
            attempt: claimed.attempt,
            execution_version: claimed.version,
            transition_key: transition_key.clone(),
            payload,
        };
        Ok(Claim::Command {
            claimed,
            transition_key,
            item,
            command,
        })
    }

    /// `SegmentCommitEffects.commit`; returns the record after the commit and its follow-ups.
    pub fn commit_segment(
        &mut self,
        segment: ClaimedSegment,
        now_ms: i64,
    ) -> CoordinatorResult<ExecutionRecord> {
        let claimed = &segment.record;
        let (tenant_id, execution_id) = (&claimed.tenant_id, &claimed.execution_id);
        if let Some(item) = &segment.item {
            match &segment.result {
                _ if !item.parent_waiting => {
                    self.abandon_item_child(claimed, &segment.transition_key, now_ms)?
                }
                TransitionResult::Completed { output } => {
                    self.commit_item_success(claimed, item, output.clone(), now_ms)?
                }
                failed => self.commit_item_failure(
                    claimed,
                    item,
                    &segment.transition_key,
                    failed,
                    now_ms,
                )?,
            }
            return self.status(tenant_id, execution_id, now_ms);
        }
        match &segment.result {
            TransitionResult::Completed { output } => {
                // An empty answer means the claimed version went stale: a later owner took over
                // and only one commit can win, so there is nothing to do.
                if let Some(done) = self.store.mark_succeeded(
                    tenant_id,
                    execution_id,
                    claimed.version,
                    &segment.transition_key,
                    output,
                    now_ms,
                )? {
                    self.log.record(now_ms, &done, "succeed");
                }
            }
            TransitionResult::WaitingExternal { step_index } => {
                let unit_id = segment.await_unit_id.clone().unwrap_or_else(|| {
                    self.unit_id_for(tenant_id, execution_id, *step_index)
                        .unwrap_or_default()
                });
                if let Some(parked) = self.store.mark_waiting_external(
                    tenant_id,
                    execution_id,
                    claimed.version,
                    &segment.transition_key,
                    &unit_id,
                    *step_index,
                    now_ms,
                )? {
                    self.log.record(now_ms, &parked, "park");
                    // afterParentWaiting: a completion that beat the park is released now.
                    self.release_parent(tenant_id, &unit_id, now_ms)?;
                }
            }
            TransitionResult::Failed {
                failure_class,
                message,
                retryable,
            } => {
                // TransitionFailureEnvelope.toException: the coordinator sees a
                // TransitionWorkerFailureException("<class>: <message>"), or a
                // NonRetryableException, and records that class's simple name as the code.
                let (error_code, error_message) = if *retryable {
                    let suffix = if message.is_empty() {
                        String::new()
                    } else {
                        format!(": {message}")
                    };
                    (
                        "TransitionWorkerFailureException",
                        format!("{failure_class}{suffix}"),
                    )
                } else if message.is_empty() {
                    ("NonRetryableException", failure_class.clone())
                } else {
                    ("NonRetryableException", message.clone())
                };
                self.handle_failure(
                    claimed,
                    &segment.transition_key,
                    error_code,
                    &error_message,
                    *retryable,
                    now_ms,
                )?;
            }
            TransitionResult::OutcomeUnknown {
                error_code,
                message,
            } => {
                // No automatic retry: the transition may have been applied, so only an
                // operator's re-drive (allowFailed) after reconciling moves the record on.
                if let Some(unknown) = self.store.mark_remote_outcome_unknown(
                    tenant_id,
                    execution_id,
                    claimed.version,
                    error_code,
                    message,
                    now_ms,
                )? {
                    self.log.record(now_ms, &unknown, "remote-outcome-unknown");
                }
            }
        }
        self.status(tenant_id, execution_id, now_ms)
    }

    /// `resumesFromAwait` (step > 0 with an await unit) reads the unit's responses; otherwise the
    /// record's input.
    pub(super) fn segment_input(&self, record: &ExecutionRecord) -> CoordinatorResult<Value> {
        match &record.await_unit_id {
            Some(unit_id) if record.current_step_index > 0 => {
                let interactions = self
                    .store
                    .interactions_for_unit(&record.tenant_id, unit_id)?;
                let responses: Vec<Value> = interactions
                    .iter()
                    .filter_map(|i| i.response_payload.clone())
                    .collect();
                Ok(match interactions.first() {
                    Some(first) if first.item_index.is_none() => {
                        responses.into_iter().next().unwrap_or(Value::Null)
                    }
                    _ => Value::Array(responses),
                })
            }
            _ => Ok(record.input_payload.clone()),
        }
    }

    pub(super) fn unit_id_for(
        &self,
        tenant_id: &str,
        execution_id: &str,
        step_index: u32,
    ) -> Option<String> {
        self.pipeline
            .step(step_index)
            .map(|step| ids::await_unit_id(tenant_id, execution_id, &step.step_id, step_index))
    }

    /// What an in-process `AwaitCoordinator` writes while the await step runs: the unit and its
    /// interactions, before the parent's suspension is committed. Deterministic ids make a
    /// retried segment re-find the same records.
    pub(super) fn import_suspension(
        &mut self,
        record: &ExecutionRecord,
        step_index: u32,
        now_ms: i64,
    ) -> CoordinatorResult<String> {
        let request = self.segment_input(record)?;
        self.write_suspension(
            &record.tenant_id,
            &record.execution_id,
            step_index,
            request,
            now_ms,
        )
    }

    /// The await step's writes (`AwaitCoordinator` while the step runs, wherever it runs): the
    /// unit and its interactions, each created or got by its deterministic id, so a step that
    /// runs again (a retried segment, a duplicate transition request) re-finds them.
    pub(super) fn write_suspension(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        step_index: u32,
        request: Value,
        now_ms: i64,
    ) -> CoordinatorResult<String> {
        let step = self
            .pipeline
            .step(step_index)
            .cloned()
            .ok_or_else(|| CoordinatorError::BadRequest(format!("no step {step_index}")))?;
        let await_step = step.await_step().cloned().ok_or_else(|| {
            CoordinatorError::BadRequest(format!("step {step_index} is not an await"))
        })?;
        let unit_id = ids::await_unit_id(tenant_id, execution_id, &step.step_id, step_index);
        // createInteraction: the deadline is always now + the (positive) timeout, the row lives
        // a day past it.
        let deadline = now_ms + await_step.timeout_ms;
        let ttl_epoch_s = deadline.div_euclid(1000) + DAY_S;
        let items: Vec<Option<u32>> = match await_step.shape {
            AwaitShape::Scalar => vec![None],
            AwaitShape::Itemized { items } => (0..items).map(Some).collect(),
        };
        let interactions: Vec<AwaitInteractionRecord> = items
            .into_iter()
            .map(|item_index| {
                let idempotency_key = ids::await_idempotency_key(
                    execution_id,
                    &step.step_id,
                    &await_step.idempotency_key_fields,
                    &request,
                    item_index,
                );
                let correlation_id = ids::correlation_id(
                    await_step.correlation_strategy.as_deref(),
                    tenant_id,
                    execution_id,
                    &step.step_id,
                    &idempotency_key,
                );
                AwaitInteractionRecord {
                    tenant_id: tenant_id.to_owned(),
                    execution_id: execution_id.to_owned(),
                    step_id: step.step_id.clone(),
                    step_index,
                    output_type: Some(await_step.output_type.clone()),
                    interaction_id: ids::interaction_id(&correlation_id),
                    correlation_id,
                    causation_id: None,
                    idempotency_key,
                    version: 0,
                    status: AwaitInteractionStatus::Waiting,
                    request_payload: Some(request.clone()),
                    response_payload: None,
                    unit_id: Some(unit_id.clone()),
                    item_index,
                    actor: None,
                    assignee: None,
                    group: None,
                    transport_type: Some(await_step.transport_type.clone()),
                    transport_metadata: Default::default(),
                    deadline_epoch_ms: Some(deadline),
                    created_at_epoch_ms: now_ms,
                    updated_at_epoch_ms: now_ms,
                    ttl_epoch_s,
                    transport_output_type: Some(await_step.output_type.clone()),
                }
            })
            .collect();
        let primary_interaction_id = match await_step.shape {
            AwaitShape::Scalar => interactions.first().map(|i| i.interaction_id.clone()),
            AwaitShape::Itemized { .. } => None,
        };
        let unit = AwaitUnitRecord {
            tenant_id: tenant_id.to_owned(),
            unit_id: unit_id.clone(),
            execution_id: execution_id.to_owned(),
            step_id: step.step_id.clone(),
            step_index,
            cardinality: await_step.cardinality.clone(),
            version: 0,
            status: AwaitUnitStatus::WaitingExternal,
            primary_interaction_id,
            expected_item_count: None,
            completed_item_count: 0,
            completed_item_keys: Default::default(),
            dispatch_complete: false,
            created_at_epoch_ms: now_ms,
            updated_at_epoch_ms: now_ms,
            ttl_epoch_s,
        };
        let unit = self.store.create_or_get_unit(&unit, now_ms)?.record;
        for interaction in &interactions {
            self.store.create_or_get_interaction(interaction)?;
        }
        if let AwaitShape::Itemized { items } = await_step.shape {
            if !unit.dispatch_complete && !unit.status.terminal() {
                self.store
                    .mark_dispatch_complete(tenant_id, &unit_id, i64::from(items), now_ms)?;
                // markDispatchComplete completes the unit when every item already completed.
                self.store.complete_if_ready(tenant_id, &unit_id, now_ms)?;
            }
        }
        Ok(unit_id)
    }

    /// `ExecutionFailureHandler.handleExecutionFailure` (no circuit deferral in the model).
    pub(super) fn handle_failure(
        &mut self,
        claimed: &ExecutionRecord,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        retryable: bool,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        let next_attempt = claimed.attempt + 1;
        if retryable && next_attempt <= self.config.max_retries {
            let next_due = now_ms + self.config.retry_delay_for(i64::from(next_attempt));
            if let Some(waiting) = self.store.schedule_retry(
                &claimed.tenant_id,
                &claimed.execution_id,
                claimed.version,
                next_attempt,
                next_due,
                transition_key,
                error_code,
                error_message,
                now_ms,
            )? {
                self.log.record(now_ms, &waiting, "retry");
            }
            return Ok(());
        }
        let Some(failed) = self.store.mark_terminal_failure(
            &claimed.tenant_id,
            &claimed.execution_id,
            claimed.version,
            ExecutionStatus::Failed,
            transition_key,
            error_code,
            error_message,
            now_ms,
        )?
        else {
            return Ok(());
        };
        self.log.record(now_ms, &failed, "fail");
        // Published only after the terminal commit won; evidence, not the replay source.
        self.dead_letters.push(DeadLetterEnvelope {
            tenant_id: failed.tenant_id.clone(),
            execution_id: failed.execution_id.clone(),
            execution_key: failed.execution_key.clone(),
            correlation_id: failed.execution_key.clone(),
            transition_key: transition_key.to_owned(),
            resource_type: "tpf.orchestrator.execution".to_owned(),
            resource_name: "OrchestratorService/Run".to_owned(),
            transport: self.config.transport.clone(),
            platform: self.config.platform.clone(),
            terminal_status: ExecutionStatus::Failed.to_string(),
            terminal_reason: if retryable {
                "retry_exhausted"
            } else {
                "non_retryable"
            }
            .to_owned(),
            error_code: error_code.to_owned(),
            error_message: error_message.to_owned(),
            retryable,
            retries_observed: claimed.attempt,
            created_at_epoch_ms: now_ms,
        });
        Ok(())
    }
}

/// A claimed segment before its worker call.
pub(super) enum Claim {
    NotClaimed(ExecutionRecord),
    /// Needs no worker call: commit it as it is.
    Ready(ClaimedSegment),
    /// The transition a worker runs.
    Command {
        claimed: ExecutionRecord,
        transition_key: String,
        item: Option<ItemChild>,
        command: TransitionCommand,
    },
}

/// The items of a `MULTI` input snapshot (`{"shape":"MULTI","items":[…]}`), or the payload.
fn multi_items(input: &Value) -> Value {
    match input.get("items") {
        Some(items @ Value::Array(_)) if input.get("shape") == Some(&Value::from("MULTI")) => {
            items.clone()
        }
        _ => input.clone(),
    }
}
