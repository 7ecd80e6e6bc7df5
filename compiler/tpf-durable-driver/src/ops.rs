//! The operations the gateway driver asks its engine for. Each is one checkpointed operation
//! (or, for a callback, the service's group of them), so a replay returns what the first run
//! saw.

use std::future::Future;

use serde_json::Value;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse};

use crate::gateway::calls::{CallbackEnd, GatewayFailure, PollEnd, Registration, StatePoll};
use crate::gateway::policy::StepRetry;

/// One of the driver's own writes (the next generation's start) failed
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

/// The engine the gateway driver (`crate::gateway`) runs on, asked for a gateway call as a
/// step, a condition poll, a callback with a submitter. `Stop` is the engine's own way out of
/// the handler (a suspension at a pending wait or callback, or a failure of the engine
/// itself): the driver passes it up untouched with `?`.
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

    /// A durable wait of `seconds`: checkpointed, nothing runs (or is billed) while it lasts.
    fn wait(&self, name: &str, seconds: u64) -> impl Future<Output = Result<(), Self::Stop>>;

    /// A step starting `next` on this function version under its durable execution name
    /// (TPF's recipe); a name that already started counts as started.
    fn start_generation(
        &self,
        name: &str,
        next: &ExecutionInput,
    ) -> impl Future<Output = Result<Result<(), WriteFailed>, Self::Stop>>;
}
