//! TPF's SQS transition worker: remote steps on their own queue.
//!
//! With `pipeline.orchestrator.worker.sqs.request-queue-url` set, TPF's work function does not
//! run a segment itself. It claims the execution, sends the segment's transition command as a
//! signed request (a fresh request id and nonce) to the transition-request queue, and polls
//! the response queue for a response carrying that request id until its request timeout
//! (`SqsPipelineTransitionWorker`): a response for another request id is put back; the first
//! one for its own is taken, verified and committed; none in time fails the call with
//! `TransitionWorkerFailureException` ("Timed out waiting for SQS transition worker response
//! for execution …"), a retryable failure that schedules a retry (`WAIT_RETRY`), never
//! `REMOTE_OUTCOME_UNKNOWN` (only the REST worker's HTTP timeout raises
//! `RemoteTransitionOutcomeUnknownException`, modelled by the scripted worker's
//! `StepOutcome::OutcomeUnknown`).
//!
//! The transition worker function (`SqsTransitionWorkerAction`) reads one request, drops it
//! (acknowledged, nothing run) when its timestamp is outside the signature tolerance or its
//! nonce was already recorded by this instance, else runs the transition
//! (`executePortableTransition`: the steps, and an await step's own writes, each created or got
//! by its deterministic id), publishes the response, records the nonce and acknowledges. Nothing
//! on the worker's side writes the execution record: only the caller's commit does, fenced by the
//! version it claimed, so a request delivered twice runs its steps twice and commits once.
//!
//! Where the model is simpler: request ids and nonces are derived from the claim (execution,
//! version) instead of random; signatures always verify; an item continuation's child record
//! runs its segment in the work function; the waiting call does not renew its lease (TPF's
//! segment pipeline renews it every third of the lease while the transition runs), which the
//! default request timeout (30 s) does not outlast (the lease is 30 s).

use std::collections::BTreeMap;

use tpf_wire::ids;
use tpf_wire::records::ExecutionRecord;

use super::segment::Claim;
use super::{ClaimedSegment, Coordinator, CoordinatorResult};
use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};
use crate::worker::{TransitionCommand, TransitionResult};

/// `pipeline.orchestrator.worker.sqs.request-timeout` (PT30S): how long the work function waits
/// for its response, and how long the transition worker lets a transition run.
pub const SQS_REQUEST_TIMEOUT_MS: i64 = 30_000;
/// `pipeline.orchestrator.worker.sqs.signature-tolerance` (PT2M): a request older than this is
/// refused as unauthenticated.
pub const SQS_SIGNATURE_TOLERANCE_MS: i64 = 120_000;
/// The error code a timed-out wait records (`TransitionWorkerFailureException`'s simple name).
pub const TRANSITION_WORKER_FAILURE: &str = "TransitionWorkerFailureException";

/// `SqsTransitionWorkerRequest`, reduced to what the model reads: the request id the response
/// must carry, the nonce and timestamp the worker authenticates, and the command.
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionRequest {
    pub request_id: String,
    pub nonce: String,
    pub timestamp_ms: i64,
    pub command: TransitionCommand,
}

/// `SqsTransitionWorkerResponse`: the request id it answers and the result envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionResponse {
    pub request_id: String,
    pub result: TransitionResult,
}

/// A work function's call waiting for its response: the claim it commits under.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingTransition {
    pub request_id: String,
    /// The wait ends here without a response.
    pub deadline_ms: i64,
    claimed: ExecutionRecord,
    transition_key: String,
}

impl PendingTransition {
    pub fn execution_id(&self) -> &str {
        &self.claimed.execution_id
    }

    pub fn transition_key(&self) -> &str {
        &self.transition_key
    }

    /// Whether the caller takes `response` (its own request id); any other is put back.
    pub fn answered_by(&self, response: &TransitionResponse) -> bool {
        response.request_id == self.request_id
    }
}

/// What a work item became on a work function whose steps run on the transition worker.
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteStart {
    /// Not claimable, or committed without a worker call: the record it left.
    Done(Box<ExecutionRecord>),
    /// The request is sent; the call waits for its response.
    Sent(Box<(PendingTransition, TransitionRequest)>),
}

/// One transition worker function instance: its nonce guard (`TransitionWorkerNonceReplayGuard`)
/// lives as long as the instance.
#[derive(Debug, Clone, Default)]
pub struct TransitionWorkerInstance {
    /// nonce → the request's timestamp.
    seen: BTreeMap<String, i64>,
}

impl TransitionWorkerInstance {
    /// `authenticate`: the timestamp within the tolerance of `now_ms`, the nonce not recorded
    /// (a recorded nonce is forgotten once its request is past the tolerance).
    pub fn authenticates(&self, request: &TransitionRequest, now_ms: i64) -> bool {
        (now_ms - request.timestamp_ms).abs() <= SQS_SIGNATURE_TOLERANCE_MS
            && !self.seen.contains_key(&request.nonce)
    }

    /// `recordAuthenticatedNonce`, after the response is published.
    pub fn record(&mut self, request: &TransitionRequest, now_ms: i64) {
        self.seen
            .retain(|_, at| (now_ms - *at).abs() <= SQS_SIGNATURE_TOLERANCE_MS);
        self.seen
            .insert(request.nonce.clone(), request.timestamp_ms);
    }
}

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    /// The work function with a remote transition worker: claims and sends the segment's
    /// request, or, when there is nothing to send, answers the record it left.
    pub fn begin_remote_work_item(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<RemoteStart> {
        match self.claim_segment(tenant_id, execution_id, now_ms)? {
            Claim::NotClaimed(record) => Ok(RemoteStart::Done(Box::new(record))),
            Claim::Ready(segment) => Ok(RemoteStart::Done(Box::new(
                self.commit_segment(segment, now_ms)?,
            ))),
            Claim::Command {
                claimed,
                transition_key,
                item: Some(item),
                command,
            } => {
                // An item continuation's child runs in process (the model's simplification).
                let result = self.worker.execute(&self.pipeline, &command);
                let segment = ClaimedSegment {
                    record: claimed,
                    transition_key,
                    result,
                    await_unit_id: None,
                    item: Some(item),
                };
                Ok(RemoteStart::Done(Box::new(
                    self.commit_segment(segment, now_ms)?,
                )))
            }
            Claim::Command {
                claimed,
                transition_key,
                item: None,
                command,
            } => {
                let claim = format!("{}:{}", claimed.execution_id, claimed.version);
                let request = TransitionRequest {
                    request_id: ids::name_uuid_v3(&format!("transition-request:{claim}")),
                    nonce: ids::name_uuid_v3(&format!("transition-nonce:{claim}")),
                    timestamp_ms: now_ms,
                    command,
                };
                let pending = PendingTransition {
                    request_id: request.request_id.clone(),
                    deadline_ms: now_ms + SQS_REQUEST_TIMEOUT_MS,
                    claimed,
                    transition_key,
                };
                Ok(RemoteStart::Sent(Box::new((pending, request))))
            }
        }
    }

    /// The transition worker function on one delivered request (`SqsTransitionWorkerAction`):
    /// `None` when it drops the request unrun (stale or replayed), else the response it
    /// publishes. A failure of the transition is a FAILED result, never an error.
    pub fn run_transition_request(
        &mut self,
        instance: &mut TransitionWorkerInstance,
        request: &TransitionRequest,
        now_ms: i64,
    ) -> Option<TransitionResponse> {
        if !instance.authenticates(request, now_ms) {
            return None;
        }
        let command = &request.command;
        let mut result = self.worker.execute(&self.pipeline, command);
        if let TransitionResult::WaitingExternal { step_index } = result {
            // The await step's own writes, on the worker's side (`AwaitCoordinator`).
            if let Err(e) = self.write_suspension(
                &command.tenant_id,
                &command.execution_id,
                step_index,
                command.payload.clone(),
                now_ms,
            ) {
                result = TransitionResult::Failed {
                    failure_class: "java.lang.IllegalStateException".to_owned(),
                    message: e.to_string(),
                    retryable: true,
                };
            }
        }
        instance.record(request, now_ms);
        Some(TransitionResponse {
            request_id: request.request_id.clone(),
            result,
        })
    }

    /// The work function's call ends: with its response, the segment's commit (fenced by the
    /// claimed version); without one by its deadline, TPF's retryable timeout failure.
    pub fn finish_remote_work_item(
        &mut self,
        pending: PendingTransition,
        response: Option<TransitionResponse>,
        now_ms: i64,
    ) -> CoordinatorResult<ExecutionRecord> {
        let PendingTransition {
            claimed,
            transition_key,
            ..
        } = pending;
        match response {
            Some(response) => self.commit_segment(
                ClaimedSegment {
                    record: claimed,
                    transition_key,
                    result: response.result,
                    await_unit_id: None,
                    item: None,
                },
                now_ms,
            ),
            None => {
                let message = format!(
                    "Timed out waiting for SQS transition worker response for execution {}",
                    claimed.execution_id
                );
                self.handle_failure(
                    &claimed,
                    &transition_key,
                    TRANSITION_WORKER_FAILURE,
                    &message,
                    true,
                    now_ms,
                )?;
                self.status(&claimed.tenant_id, &claimed.execution_id, now_ms)
            }
        }
    }
}
