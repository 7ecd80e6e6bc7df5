//! A deterministic, virtual-time engine for Lambda durable function executions, faithful to how
//! the service runs them: every invocation runs the handler from its start, and the operations
//! it asks for are answered from the execution's checkpoint log until the first one the log
//! does not hold, which is then executed and checkpointed. A wait or a pending callback ends the
//! invocation (it suspends); a timer or a callback completion starts the next one.
//!
//! - [`engine::Engine`]: published function versions, executions by (version, name) with name
//!   idempotency, timers, callbacks, stops, the hard budgets, history across executions.
//! - [`context::Context`]: the operations a handler asks for (step, wait, callback), the replay
//!   and its non-determinism check, the operation count and its cap.
//! - [`history`]: operations, history events with the service's names, the errors the engine
//!   fails an execution with.
//! - [`poll`]: runs a handler's future, which always resolves at once, to its end.
//!
//! Nothing here knows what the handler does: a step's effect is the caller's [`StepHandler`].

pub mod context;
pub mod engine;
pub mod history;
pub mod poll;

pub use context::{
    state_bytes, submitter, CallbackOutcome, ConditionOutcome, Context, Decision, Stop, StopKind,
    SUBMITTER_SUFFIX,
};
pub use engine::{
    ApiError, Effects, Engine, Execution, ExecutionStatus, Program, Started, StepCall, StepError,
    StepHandler, CALLBACK_CLOSED,
};
pub use history::{error, event, Event, OpStatus, OpType, Operation};

/// The most operations one execution may checkpoint: the service's cap.
pub const OPERATION_CAP: u64 = 3_000;

/// The most state one execution may write (checkpointed results, errors and callback results):
/// the service's cap, 100 MiB.
pub const WRITTEN_STATE_CAP: u64 = 100 * 1024 * 1024;
