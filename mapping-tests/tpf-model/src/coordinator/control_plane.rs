//! The model as TPF's `PipelineControlPlane` (`LocalPipelineControlPlane` over
//! `QueueAsyncCoordinator`), so TPF's action gateway ([`crate::gateway::Gateway`]) runs on it.
//!
//! TPF's control plane hands work to its `WorkDispatcher` (SQS) and an SQS-triggered work
//! function claims and runs it. [`LocalControlPlane`] keeps that split: submit, re-drive and
//! sweep enqueue `(tenant, execution)` work items, and [`LocalControlPlane::run_work`] is the
//! work function, which claims and runs each one (a non-claimable item is dropped, as TPF's
//! claim refuses it). Nothing runs inside a gateway call.
//!
//! The plane owns its coordinator, or borrows one a longer-lived host owns (`tpf-sfn serve`
//! serves the Action API over the same coordinator); a borrowing plane takes the work queue in
//! and hands it back ([`WorkQueue`]), so queued work outlives the call.
//!
//! Where the model is simpler: `getAwaitSemanticCheckpoints` lists the interactions of the await
//! unit the execution is (or was last) parked on, not every unit of its history; the re-drive
//! reason is not stored; submission decodes the input as plain JSON.

use std::borrow::BorrowMut;
use std::collections::VecDeque;
use std::marker::PhantomData;

use serde_json::Value;
use tpf_wire::java_error::{class, JavaError};
use tpf_wire::records::{AwaitInteractionRecord, ExecutionRecord, ExecutionStatus};

use super::remote::{PendingTransition, RemoteStart, TransitionResponse};
use super::{Coordinator, CoordinatorError, SubmitRequest};
use crate::gateway::{
    Accepted, AwaitSemanticCheckpoint, ControlPlane, RedriveCall, RequestedRelease,
};
use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};

/// A work item on TPF's dispatch queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkItem {
    pub tenant_id: String,
    pub execution_id: String,
}

/// TPF's work queue: the items waiting for the work function, oldest first, each once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkQueue(VecDeque<WorkItem>);

impl WorkQueue {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The model's coordinator behind TPF's control-plane calls, with TPF's work queue. `C` is the
/// coordinator itself, or a `&mut` to one another host owns.
pub struct LocalControlPlane<S, C = Coordinator<S>> {
    pub coordinator: C,
    queue: WorkQueue,
    store: PhantomData<fn() -> S>,
}

/// The model's refusal as the exception TPF's control plane throws for it.
fn java(e: CoordinatorError, execution_id: &str) -> JavaError {
    match e {
        CoordinatorError::NotFound(_) => JavaError::new(
            class::NOT_FOUND,
            format!("Execution not found: {execution_id}"),
        ),
        CoordinatorError::BadRequest(m) => JavaError::illegal_argument(m),
        other => JavaError::illegal_state(other.to_string()),
    }
}

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> LocalControlPlane<S> {
    pub fn new(coordinator: Coordinator<S>) -> Self {
        Self::with_queue(coordinator, WorkQueue::default())
    }
}

impl<S, C> LocalControlPlane<S, C>
where
    S: ExecutionStore + AwaitStore + ReleaseRegistry,
    C: BorrowMut<Coordinator<S>>,
{
    /// A plane over `coordinator` whose queue starts as `queue` (what an earlier plane over the
    /// same coordinator handed back with [`Self::into_queue`]).
    pub fn with_queue(coordinator: C, queue: WorkQueue) -> Self {
        Self {
            coordinator,
            queue,
            store: PhantomData,
        }
    }

    /// The work queue, for the next plane over the same coordinator.
    pub fn into_queue(self) -> WorkQueue {
        self.queue
    }

    /// The work items waiting for the work function, oldest first.
    pub fn queued(&self) -> impl Iterator<Item = &WorkItem> {
        self.queue.0.iter()
    }

    fn coordinator(&self) -> &Coordinator<S> {
        self.coordinator.borrow()
    }

    fn coordinator_mut(&mut self) -> &mut Coordinator<S> {
        self.coordinator.borrow_mut()
    }

    fn enqueue(&mut self, tenant_id: &str, execution_id: &str) {
        let item = WorkItem {
            tenant_id: tenant_id.to_owned(),
            execution_id: execution_id.to_owned(),
        };
        if !self.queue.0.contains(&item) {
            self.queue.0.push_back(item);
        }
    }

    /// TPF's work function: claims and runs every queued item at `now_ms`; answers the records
    /// it left behind (a refused claim leaves the record unchanged).
    pub fn run_work(&mut self, now_ms: i64) -> Result<Vec<ExecutionRecord>, JavaError> {
        let mut out = Vec::new();
        while let Some(item) = self.queue.0.pop_front() {
            out.push(self.run_work_item(&item, now_ms)?);
        }
        Ok(out)
    }

    /// Hands every queued item to a caller that delivers them itself, oldest first: a world
    /// that runs TPF's SQS work function on its own clock (a delay before the claim, a
    /// redelivery after a failure) takes the items off the dispatch queue here.
    pub fn take_queued(&mut self) -> Vec<WorkItem> {
        self.queue.0.drain(..).collect()
    }

    /// TPF's work function on one delivered item: claim and run it at `now_ms`, answering the
    /// record it left behind (a refused claim leaves the record unchanged).
    pub fn run_work_item(
        &mut self,
        item: &WorkItem,
        now_ms: i64,
    ) -> Result<ExecutionRecord, JavaError> {
        self.coordinator_mut()
            .process_work_item(&item.tenant_id, &item.execution_id, now_ms)
            .map(|outcome| outcome.record)
            .map_err(|e| java(e, &item.execution_id))
    }

    /// TPF's work function with its steps on the SQS transition worker (`remote.rs`), on one
    /// delivered item: the record it left, or the request it sent and the call waiting for it.
    pub fn begin_remote_work_item(
        &mut self,
        item: &WorkItem,
        now_ms: i64,
    ) -> Result<RemoteStart, JavaError> {
        self.coordinator_mut()
            .begin_remote_work_item(&item.tenant_id, &item.execution_id, now_ms)
            .map_err(|e| java(e, &item.execution_id))
    }

    /// The waiting work function's call ends, with its response or at its deadline without.
    pub fn finish_remote_work_item(
        &mut self,
        pending: PendingTransition,
        response: Option<TransitionResponse>,
        now_ms: i64,
    ) -> Result<ExecutionRecord, JavaError> {
        let execution_id = pending.execution_id().to_owned();
        self.coordinator_mut()
            .finish_remote_work_item(pending, response, now_ms)
            .map_err(|e| java(e, &execution_id))
    }

    fn semantic(
        &self,
        interaction: &AwaitInteractionRecord,
        at_ms: i64,
    ) -> Result<Option<AwaitSemanticCheckpoint>, JavaError> {
        let Some(unit_id) = interaction.unit_id.clone() else {
            return Ok(None);
        };
        let parent = match self.coordinator().status(
            &interaction.tenant_id,
            &interaction.execution_id,
            at_ms,
        ) {
            Ok(p) => p,
            Err(CoordinatorError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(java(e, &interaction.execution_id)),
        };
        Ok(Some(AwaitSemanticCheckpoint {
            tenant_id: interaction.tenant_id.clone(),
            execution_id: interaction.execution_id.clone(),
            interaction_id: interaction.interaction_id.clone(),
            correlation_id: interaction.correlation_id.clone(),
            unit_id,
            step_id: interaction.step_id.clone(),
            status: interaction.status,
            pipeline_id: parent.pipeline_id,
            contract_version: parent.contract_version,
            release_version: parent.release_version,
        }))
    }
}

impl<S, C> ControlPlane for LocalControlPlane<S, C>
where
    S: ExecutionStore + AwaitStore + ReleaseRegistry,
    C: BorrowMut<Coordinator<S>>,
{
    /// Submits under the active release, which must be the one the caller pinned (the model's
    /// reading of TPF's release pin on submission).
    fn execute_pipeline_async(
        &mut self,
        input_json: &str,
        tenant_id: &str,
        idempotency_key: &str,
        _output_streaming: bool,
        release: RequestedRelease<'_>,
        at_ms: i64,
    ) -> Result<Accepted, JavaError> {
        let input_payload: Value = serde_json::from_str(input_json).map_err(|e| {
            JavaError::illegal_argument(format!("inputJson is not valid JSON: {e}"))
        })?;
        let active = self
            .coordinator_mut()
            .active_release(tenant_id, release.pipeline_id)
            .map_err(|e| java(e, ""))?;
        let pinned = active.as_ref().is_some_and(|a| {
            a.contract_version == release.contract_version
                && a.release_version == release.release_version
        });
        if !pinned {
            return Err(JavaError::illegal_state(format!(
                "Release {} of pipeline {} is not the active release of tenant {tenant_id}",
                release.release_version, release.pipeline_id
            )));
        }
        let submitted = self
            .coordinator_mut()
            .submit(
                &SubmitRequest {
                    tenant_id: tenant_id.to_owned(),
                    pipeline_id: release.pipeline_id.to_owned(),
                    execution_key: Some(idempotency_key.to_owned()),
                    input_payload,
                },
                at_ms,
            )
            .map_err(|e| java(e, ""))?;
        if !submitted.duplicate {
            self.enqueue(tenant_id, &submitted.execution_id);
        }
        Ok(Accepted {
            execution_id: submitted.execution_id,
            duplicate: submitted.duplicate,
        })
    }

    fn get_execution_status(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        at_ms: i64,
    ) -> Result<ExecutionStatus, JavaError> {
        self.coordinator_mut()
            .status(tenant_id, execution_id, at_ms)
            .map(|r| r.status)
            .map_err(|e| java(e, execution_id))
    }

    /// `ExecutionResultView`: only a SUCCEEDED execution has a result.
    fn get_execution_result_payload(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        at_ms: i64,
    ) -> Result<Value, JavaError> {
        let record = self
            .coordinator_mut()
            .status(tenant_id, execution_id, at_ms)
            .map_err(|e| java(e, execution_id))?;
        match record.status {
            ExecutionStatus::Succeeded => Ok(record.result_payload.unwrap_or(Value::Null)),
            s if s.terminal() => Err(JavaError::illegal_state(format!(
                "Execution finished without a successful result: {s}"
            ))),
            s => Err(JavaError::illegal_state(format!(
                "Execution is not complete yet: {s}"
            ))),
        }
    }

    fn redrive_execution(
        &mut self,
        call: &RedriveCall<'_>,
        at_ms: i64,
    ) -> Result<ExecutionStatus, JavaError> {
        let result = self
            .coordinator_mut()
            .redrive(
                call.tenant_id,
                call.execution_id,
                Some(call.expected_version),
                call.allow_failed,
                at_ms,
            )
            .map_err(|e| java(e, call.execution_id))?;
        // QueueAsyncRedriveFlow enqueues the re-driven execution.
        self.enqueue(call.tenant_id, call.execution_id);
        Ok(result.status)
    }

    /// Await timeouts, then every due execution onto the work queue.
    fn sweep_once(&mut self, now_epoch_ms: i64) -> Result<(), JavaError> {
        let limit = self.coordinator().config().sweep_limit;
        let swept = self
            .coordinator_mut()
            .sweep_once(now_epoch_ms, limit)
            .map_err(|e| java(e, ""))?;
        for due in swept.due {
            self.enqueue(&due.tenant_id, &due.execution_id);
        }
        Ok(())
    }

    fn get_await_semantic_checkpoints(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        limit: usize,
        at_ms: i64,
    ) -> Result<Vec<AwaitSemanticCheckpoint>, JavaError> {
        let interactions =
            match self
                .coordinator_mut()
                .await_interactions(tenant_id, execution_id, at_ms)
            {
                Ok(i) => i,
                Err(CoordinatorError::NotFound(_)) => Vec::new(),
                Err(e) => return Err(java(e, execution_id)),
            };
        // TPF: a limit of zero or less reads the default page.
        let limit = if limit == 0 { 100 } else { limit };
        let mut out = Vec::new();
        for interaction in interactions.iter().take(limit) {
            out.extend(self.semantic(interaction, at_ms)?);
        }
        Ok(out)
    }

    fn get_await_semantic_checkpoint(
        &mut self,
        tenant_id: &str,
        interaction_id: &str,
        at_ms: i64,
    ) -> Result<Option<AwaitSemanticCheckpoint>, JavaError> {
        let found = self
            .coordinator_mut()
            .store()
            .get_interaction(tenant_id, interaction_id)
            .map_err(|e| java(CoordinatorError::Store(e), ""))?;
        match found {
            Some(interaction) => self.semantic(&interaction, at_ms),
            None => Ok(None),
        }
    }
}
