//! The operations a durable driver asks its engine for. Each is one checkpointed operation (or,
//! for a callback, the service's group of them), so a replay returns what the first run saw.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tpf_wire::action::{ProcessWorkItemRequest, ProcessWorkItemResponse};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse};

use crate::gateway::calls::{CallbackEnd, GatewayFailure, PollEnd, Registration, StatePoll};
use crate::gateway::policy::StepRetry;

/// One delivery of `process-work-item`, made inside a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionCall {
    pub tenant_id: String,
    pub execution_id: String,
    pub request: ProcessWorkItemRequest,
}

/// What one delivery came back with, as the step checkpoints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "outcome"
)]
pub enum CallOutcome {
    /// TPF's committed answer, and the engine's clock when it arrived (the step records it, so a
    /// replay computes the same waits).
    Answer {
        at_ms: i64,
        response: Box<ProcessWorkItemResponse>,
    },
    /// TPF refused the call with one of its codes (`tpf_wire::action::code`): a verdict, never
    /// retried.
    Refused { code: String, message: String },
    /// The call did not reach TPF or its answer was lost: retried with the same key.
    Transport { message: String },
}

/// The parked-token row the driver writes while parking, so the bridge can wake it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParkRequest {
    pub tenant_id: String,
    pub execution_id: String,
    pub unit_id: String,
    pub step_name: Option<String>,
    pub tpf_version: i64,
    pub expires_at_epoch_seconds: i64,
    /// Seconds until the callback times out on its own (TPF's `wakeInSeconds`, or a back-off).
    pub timeout_seconds: u64,
}

/// How a park ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "wake"
)]
pub enum Wake {
    /// The bridge (or the sweeper) completed the callback; the payload is only a wakeup handle.
    Woken { payload: Value },
    /// The callback's timeout passed first.
    TimedOut,
    /// The token row could not be written: nobody can wake this park.
    NotRegistered { message: String },
}

/// One of the driver's own writes (its generation row, the next generation's start) failed
/// for good, after the engine's retries: what the engine said, which the driver's Fail state
/// carries as its cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WriteFailed {
    pub message: String,
}

impl WriteFailed {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// The live-generation row the driver writes first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationRow {
    pub tenant_id: String,
    pub execution_id: String,
    pub lineage: String,
    pub generation: u32,
    pub release_version: String,
}

/// The engine a driver runs on. `Stop` is the engine's own way out of the handler (a
/// suspension at a pending wait or callback, or a failure of the engine itself): the driver
/// passes it up untouched with `?`.
pub trait Ops {
    type Stop;

    /// Registers this generation as the execution's live driver (a step).
    fn register(
        &self,
        name: &str,
        row: &GenerationRow,
    ) -> impl Future<Output = Result<Result<(), WriteFailed>, Self::Stop>>;

    /// One delivery of an action call (a step).
    fn call(
        &self,
        name: &str,
        call: &ActionCall,
    ) -> impl Future<Output = Result<CallOutcome, Self::Stop>>;

    /// A durable wait.
    fn wait(&self, name: &str, seconds: u64) -> impl Future<Output = Result<(), Self::Stop>>;

    /// Parks on a callback: writes the token row with the callback's id, then waits for the
    /// callback to complete or time out.
    fn park(
        &self,
        name: &str,
        park: &ParkRequest,
    ) -> impl Future<Output = Result<Wake, Self::Stop>>;

    /// Starts the next generation on this same function version, named so that a repeated
    /// hand-over finds the one that exists (a step).
    fn hand_over(
        &self,
        name: &str,
        next: &crate::spec::DriverInput,
    ) -> impl Future<Output = Result<Result<(), WriteFailed>, Self::Stop>>;
}

/// The engine the gateway driver (`crate::gateway`) runs on: the same engine as [`Ops`], asked
/// for a gateway call as a step, a condition poll, a callback with a submitter. A trait of its
/// own, so an engine of the Action API v1 loop alone need not speak TPF's gateway.
pub trait GatewayOps {
    type Stop;

    /// A step that checkpoints `value` and returns it (a replay returns the checkpoint): TPF's
    /// resume step, which makes no call.
    fn checkpoint(
        &self,
        name: &str,
        value: &Value,
    ) -> impl Future<Output = Result<Value, Self::Stop>>;

    /// A step invoking the gateway's numbered version with `request`, retried by the engine
    /// on any error as `retry` says; its checkpoint is the response's JSON, read back as TPF's
    /// caller reads it (`gateway::calls::read_reply`).
    fn gateway(
        &self,
        name: &str,
        request: &ActionRequest,
        retry: &StepRetry,
    ) -> impl Future<Output = Result<Result<ActionResponse, GatewayFailure>, Self::Stop>>;

    /// A condition: each check sends `poll.sweep` then `poll.status` and carries the status;
    /// `gateway::policy::decide` is its wait strategy.
    fn wait_for_state(
        &self,
        name: &str,
        poll: &StatePoll,
    ) -> impl Future<Output = Result<PollEnd, Self::Stop>>;

    /// A callback with a timeout whose submitter sends `registration`'s REGISTER_CALLBACK with
    /// the callback id and this execution's ARN, retried as TPF's step is.
    fn await_callback(
        &self,
        name: &str,
        registration: &Registration,
        timeout_seconds: u64,
    ) -> impl Future<Output = Result<CallbackEnd, Self::Stop>>;

    /// A step starting `next` on this function version under its durable execution name
    /// (TPF's recipe); a name that already started counts as started.
    fn start_generation(
        &self,
        name: &str,
        next: &ExecutionInput,
    ) -> impl Future<Output = Result<Result<(), WriteFailed>, Self::Stop>>;
}
