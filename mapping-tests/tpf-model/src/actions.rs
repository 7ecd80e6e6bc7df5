//! Serves TPF Action API v1 (`process-work-item`, `sweep-once`) over the reference
//! [`Coordinator`]; the request and response types are TPF wire facts (`tpf_wire::action`).

use std::collections::{BTreeMap, VecDeque};

use tpf_wire::action::{
    due_at, rfc3339, ActionError, AwaitView, DueExecution, ProcessWorkItemRequest,
    ProcessWorkItemResponse, SweepOnceRequest, SweepOnceResponse, TimedOutAwaitView,
};
use tpf_wire::records::{AwaitInteractionStatus, ExecutionRecord, ExecutionStatus};

use crate::coordinator::{record_identity, Coordinator, CoordinatorError};
use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};
use crate::transitions::ActionCall;

const DAY_S: i64 = 86_400;

fn lost(fault: Option<Fault>) -> ActionError {
    ActionError::Transport(format!("injected fault: {fault:?}"))
}

fn transport(e: CoordinatorError) -> ActionError {
    ActionError::Transport(e.to_string())
}

/// A transport fault the harness injects into the next action call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The request never reaches TPF: nothing runs, the caller sees a transport error.
    LostRequest,
    /// TPF runs the action and commits, but the response is lost on the way back.
    LostResponse,
}

/// Serves Action API v1 over a [`Coordinator`].
pub struct ActionHost<S> {
    coordinator: Coordinator<S>,
    /// (tenant, execution, idempotency key) → the response given.
    replies: BTreeMap<(String, String, String), ProcessWorkItemResponse>,
    faults: VecDeque<Fault>,
}

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> ActionHost<S> {
    pub fn new(coordinator: Coordinator<S>) -> Self {
        Self {
            coordinator,
            replies: BTreeMap::new(),
            faults: VecDeque::new(),
        }
    }

    /// Queues a fault for the next action call (either action), in order.
    pub fn inject_fault(&mut self, fault: Fault) {
        self.faults.push_back(fault);
    }

    pub fn coordinator(&self) -> &Coordinator<S> {
        &self.coordinator
    }

    pub fn coordinator_mut(&mut self) -> &mut Coordinator<S> {
        &mut self.coordinator
    }

    pub fn into_coordinator(self) -> Coordinator<S> {
        self.coordinator
    }

    /// `POST /tpf/actions/v1/tenants/{t}/executions/{id}/process-work-item`.
    pub fn process_work_item(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        req: &ProcessWorkItemRequest,
        now_ms: i64,
    ) -> Result<ProcessWorkItemResponse, ActionError> {
        let fault = self.faults.pop_front();
        let result = match fault {
            Some(Fault::LostRequest) => Err(lost(fault)),
            _ => self.process_inner(tenant_id, execution_id, req, now_ms),
        };
        let result = match (fault, result) {
            (Some(Fault::LostResponse), Ok(_)) => Err(lost(fault)),
            (_, result) => result,
        };
        let (outcome, replayed) = match &result {
            Ok((response, replayed)) => (response.status.to_string(), *replayed),
            Err(e) => (e.code().to_owned(), false),
        };
        self.coordinator.log_call(ActionCall {
            at_ms: now_ms,
            action: "process-work-item",
            tenant_id: Some(tenant_id.to_owned()),
            execution_id: Some(execution_id.to_owned()),
            idempotency_key: req.idempotency_key.clone(),
            outcome,
            replayed,
        });
        result.map(|(response, _)| response)
    }

    fn process_inner(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        req: &ProcessWorkItemRequest,
        now_ms: i64,
    ) -> Result<(ProcessWorkItemResponse, bool), ActionError> {
        let record = match self.coordinator.status(tenant_id, execution_id, now_ms) {
            Ok(record) => record,
            Err(CoordinatorError::NotFound(_)) => {
                return Err(ActionError::NotFound {
                    tenant_id: tenant_id.to_owned(),
                    execution_id: execution_id.to_owned(),
                })
            }
            Err(e) => return Err(transport(e)),
        };
        let pinned = record_identity(&record);
        let requested = req.identity();
        if pinned != requested {
            return Err(ActionError::ReleaseIdentityMismatch {
                pinned: Box::new(pinned),
                requested: Box::new(requested),
            });
        }
        let reply_key = req
            .idempotency_key
            .as_ref()
            .map(|key| (tenant_id.to_owned(), execution_id.to_owned(), key.clone()));
        if let Some(previous) = reply_key.as_ref().and_then(|k| self.replies.get(k)) {
            if previous.version == record.version {
                let mut replay = previous.clone();
                replay.driver = req.driver.clone();
                return Ok((replay, true));
            }
        }
        let applies_deadline = self.coordinator.config().process_applies_await_deadline;
        let (claimed, record) = if applies_deadline
            && record.status == ExecutionStatus::WaitingExternal
            && !self
                .coordinator
                .apply_parked_deadline(tenant_id, execution_id, now_ms)
                .map_err(transport)?
                .is_empty()
        {
            let current = self
                .coordinator
                .status(tenant_id, execution_id, now_ms)
                .map_err(transport)?;
            (false, current)
        } else {
            let outcome = self
                .coordinator
                .process_work_item(tenant_id, execution_id, now_ms)
                .map_err(transport)?;
            (outcome.claimed, outcome.record)
        };
        let mut response = self.response(&record, claimed, now_ms)?;
        response.driver = req.driver.clone();
        if let Some(key) = reply_key {
            self.replies.insert(key, response.clone());
        }
        Ok((response, false))
    }

    /// Builds the response for a record as it stands.
    pub fn response(
        &self,
        record: &ExecutionRecord,
        claimed: bool,
        now_ms: i64,
    ) -> Result<ProcessWorkItemResponse, ActionError> {
        let next_due_at = match record.status {
            ExecutionStatus::Queued | ExecutionStatus::WaitRetry => {
                due_at(record.next_due_epoch_ms)
            }
            ExecutionStatus::Running => due_at(record.lease_expires_epoch_ms),
            _ => None,
        };
        let await_ = if record.status == ExecutionStatus::WaitingExternal {
            Some(self.await_view(record, now_ms)?)
        } else {
            None
        };
        Ok(ProcessWorkItemResponse {
            tenant_id: record.tenant_id.clone(),
            execution_id: record.execution_id.clone(),
            status: record.status,
            version: record.version,
            current_step_index: record.current_step_index,
            attempt: record.attempt,
            next_due_at,
            await_,
            error_code: match record.status {
                // Always a string where a driver stops, even if a store row lost its code.
                ExecutionStatus::Failed
                | ExecutionStatus::Dlq
                | ExecutionStatus::RemoteOutcomeUnknown => Some(
                    record
                        .error_code
                        .clone()
                        .unwrap_or_else(|| "UNKNOWN".to_owned()),
                ),
                _ => record.error_code.clone(),
            },
            claimed,
            driver: None,
        })
    }

    fn await_view(&self, record: &ExecutionRecord, now_ms: i64) -> Result<AwaitView, ActionError> {
        let unit_id = record.await_unit_id.clone().unwrap_or_default();
        let interactions = self
            .coordinator
            .store()
            .interactions_for_unit(&record.tenant_id, &unit_id)
            .map_err(|e| ActionError::Transport(e.to_string()))?;
        let pending: Vec<_> = interactions
            .iter()
            .filter(|i| i.status != AwaitInteractionStatus::Completed)
            .collect();
        let relevant = if pending.is_empty() {
            interactions.iter().collect()
        } else {
            pending
        };
        let deadline = relevant.iter().filter_map(|i| i.deadline_epoch_ms).min();
        let ttl = relevant
            .iter()
            .filter(|i| i.deadline_epoch_ms.is_some())
            .map(|i| i.ttl_epoch_s)
            .min();
        let wake_in_seconds = match deadline {
            Some(deadline) => {
                let until_ms = deadline - now_ms;
                let until_s = until_ms.div_euclid(1000) + i64::from(until_ms.rem_euclid(1000) != 0);
                (until_s + 1).clamp(1, DAY_S)
            }
            None => DAY_S,
        };
        let step_index = record.current_step_index;
        Ok(AwaitView {
            unit_id,
            step_index,
            step_name: self
                .coordinator
                .pipeline()
                .step(step_index)
                .map(|s| s.name.clone()),
            deadline_at: deadline.and_then(rfc3339),
            wake_in_seconds,
            expires_at_epoch_seconds: match (deadline, ttl) {
                (Some(_), Some(ttl)) => ttl,
                _ => now_ms.div_euclid(1000) + 8 * DAY_S,
            },
        })
    }

    /// `POST /tpf/actions/v1/sweep-once`. The identity filter narrows only the due list.
    pub fn sweep_once(
        &mut self,
        req: &SweepOnceRequest,
        now_ms: i64,
    ) -> Result<SweepOnceResponse, ActionError> {
        let fault = self.faults.pop_front();
        let result = match fault {
            Some(Fault::LostRequest) => Err(lost(fault)),
            _ => self.sweep_inner(req, now_ms),
        };
        let result = match (fault, result) {
            (Some(Fault::LostResponse), Ok(_)) => Err(lost(fault)),
            (_, result) => result,
        };
        self.coordinator.log_call(ActionCall {
            at_ms: now_ms,
            action: "sweep-once",
            tenant_id: None,
            execution_id: None,
            idempotency_key: req.idempotency_key.clone(),
            outcome: match &result {
                Ok(r) => format!("timedOut={} due={}", r.timed_out_awaits.len(), r.due.len()),
                Err(e) => e.code().to_owned(),
            },
            replayed: false,
        });
        result
    }

    fn sweep_inner(
        &mut self,
        req: &SweepOnceRequest,
        now_ms: i64,
    ) -> Result<SweepOnceResponse, ActionError> {
        let timed_out = self
            .coordinator
            .apply_await_timeouts(now_ms, req.limit)
            .map_err(transport)?;
        let mut timed_out_awaits: Vec<TimedOutAwaitView> = Vec::new();
        for t in timed_out {
            let view = TimedOutAwaitView {
                tenant_id: t.tenant_id,
                execution_id: t.execution_id,
                unit_id: t.unit_id,
            };
            // Item interactions of one unit time out together; the driver needs the unit once.
            if !timed_out_awaits.contains(&view) {
                timed_out_awaits.push(view);
            }
        }
        let matches = |wanted: &Option<String>, actual: &str| {
            wanted.as_deref().is_none_or(|wanted| wanted == actual)
        };
        // TPF reads at most 3 × limit candidates; the identity filter narrows what it read.
        let due = self
            .coordinator
            .find_due_executions(now_ms, req.limit)
            .map_err(transport)?
            .into_iter()
            .filter(|r| {
                matches(&req.pipeline_id, &r.pipeline_id)
                    && matches(&req.contract_version, &r.contract_version)
                    && matches(&req.release_version, &r.release_version)
            })
            .take(req.limit)
            .map(|r| DueExecution {
                next_due_at: due_at(r.next_due_epoch_ms),
                tenant_id: r.tenant_id,
                execution_id: r.execution_id,
                pipeline_id: r.pipeline_id,
                contract_version: r.contract_version,
                release_version: r.release_version,
                status: r.status,
                version: r.version,
            })
            .collect();
        Ok(SweepOnceResponse {
            timed_out_awaits,
            due,
        })
    }
}
