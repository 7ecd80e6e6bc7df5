//! The checkpoint log's operations and the history events, with the service's names.

use serde::Serialize;
use serde_json::Value;

/// History event types, as the service names them.
pub mod event {
    pub const EXECUTION_STARTED: &str = "ExecutionStarted";
    pub const EXECUTION_SUCCEEDED: &str = "ExecutionSucceeded";
    pub const EXECUTION_FAILED: &str = "ExecutionFailed";
    pub const EXECUTION_STOPPED: &str = "ExecutionStopped";
    pub const STEP_STARTED: &str = "StepStarted";
    pub const STEP_SUCCEEDED: &str = "StepSucceeded";
    pub const STEP_FAILED: &str = "StepFailed";
    pub const WAIT_STARTED: &str = "WaitStarted";
    pub const WAIT_SUCCEEDED: &str = "WaitSucceeded";
    pub const CONTEXT_STARTED: &str = "ContextStarted";
    pub const CONTEXT_SUCCEEDED: &str = "ContextSucceeded";
    pub const CONTEXT_FAILED: &str = "ContextFailed";
    pub const CALLBACK_STARTED: &str = "CallbackStarted";
    pub const CALLBACK_SUCCEEDED: &str = "CallbackSucceeded";
    pub const CALLBACK_FAILED: &str = "CallbackFailed";
    pub const CALLBACK_TIMED_OUT: &str = "CallbackTimedOut";
    pub const INVOCATION_COMPLETED: &str = "InvocationCompleted";
}

/// Errors the engine itself fails an execution with (the handler's own failures carry the
/// handler's names).
pub mod error {
    /// The handler asked, at a checkpointed position, for another operation than the log holds.
    pub const NON_DETERMINISTIC: &str = "NonDeterministicExecution";
    /// The execution would checkpoint more operations than the service's cap.
    pub const OPERATION_LIMIT: &str = "OperationLimitExceeded";
    /// A condition's wait strategy gave up (the SDK's `MaxChecksExceeded`): the error type its
    /// failed checkpoint carries, so a replay tells it from a failed check.
    pub const CONDITION_EXHAUSTED: &str = "WaitForConditionMaxChecksExceeded";
    /// The execution wrote more state than the service's cap. No recorded execution shows the
    /// name the service fails it with, so the engine uses its own.
    pub const WRITTEN_STATE_LIMIT: &str = "DurableInterp.WrittenStateLimit";
    /// The handler's future was not ready after one poll: every operation resolves at once
    /// here, so this is a bug of the engine or of the program adapter, never a suspension.
    pub const PENDING_POLL: &str = "DurableInterp.PendingPoll";
    /// The handler returned although an operation it asked for is still pending.
    pub const RETURNED_WHILE_PENDING: &str = "DurableInterp.ReturnedWhilePending";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OpType {
    Step,
    Wait,
    /// A child context: `wait_for_callback` runs its callback and submitter inside one.
    Context,
    Callback,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OpStatus {
    Started,
    /// A retried step or a condition between attempts: its retry timer has not fired.
    Pending,
    /// A retried step or a condition whose retry timer fired: the next invocation runs its
    /// next attempt.
    Ready,
    Succeeded,
    Failed,
    TimedOut,
}

/// One checkpointed operation; its id is its position in the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Operation {
    pub id: usize,
    pub op_type: OpType,
    pub name: String,
    pub status: OpStatus,
    pub result: Option<Value>,
    pub error: Option<String>,
    /// When a started wait fires, or a started callback times out.
    pub fire_at_ms: Option<i64>,
    pub callback_id: Option<String>,
    /// Attempts run so far of a retried step or a condition (1 for a plain step's one run).
    pub attempt: u32,
    /// The error type of a failed operation, where it tells two failures apart
    /// ([`error::CONDITION_EXHAUSTED`]).
    pub error_type: Option<String>,
}

/// One history event. `operation` is the log position it is about; `name` that operation's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub timestamp_ms: i64,
    pub event_type: &'static str,
    pub operation: Option<usize>,
    pub name: Option<String>,
    /// The error of a failed operation or execution, a callback's id.
    pub detail: Option<String>,
}
