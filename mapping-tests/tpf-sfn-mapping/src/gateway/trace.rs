//! What the gateway world records while it runs, for the scenarios' assertions and the checks.

use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::Operation;
use tpf_wire::records::ExecutionStatus;

use super::engine::{EngineError, InvokeError, Started};

/// One invoke of the gateway by a driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub at_ms: i64,
    /// The function ARN the driver addressed.
    pub function_arn: String,
    /// The request text as the driver wrote it.
    pub request: String,
    /// The operation, when TPF's gateway read the request.
    pub operation: Option<Operation>,
    /// TPF's gateway's refusal to read the request (`errorType: errorMessage`).
    pub read_error: Option<String>,
    pub answer: Result<String, InvokeError>,
}

/// Who started a driver generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StartVia {
    /// The application's ingress call.
    Ingress,
    /// A driver handing over to its next generation.
    Driver,
    /// The wake-up, after a closed callback.
    WakeUp,
    /// The reconciler, after a driver ended.
    Reconciler,
    /// A scenario acting as TPF's operator or TPF's proof.
    Operator,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartEvent {
    pub at_ms: i64,
    pub via: StartVia,
    pub name: String,
    pub input: ExecutionInput,
    pub outcome: Result<Started, EngineError>,
}

/// What became of one callback send the wake-up decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendResult {
    /// The provider accepted it.
    Accepted,
    /// The provider accepted it and the answer was lost (`wakeup-after-provider-callback`).
    AcceptedAnswerLost,
    /// Refused with the provider's code.
    Refused(String),
    /// Not sent: a fault fired before the send.
    NotSent(&'static str),
}

impl SendResult {
    /// Whether the driver received the signal.
    pub fn received(&self) -> bool {
        matches!(self, Self::Accepted | Self::AcceptedAnswerLost)
    }
}

/// One send the wake-up made (or was about to make) to a generation's callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendEvent {
    pub at_ms: i64,
    pub tenant_id: String,
    pub execution_id: String,
    pub interaction_id: String,
    pub generation: i64,
    pub callback_id: String,
    /// The newest BINDING generation of the interaction when the send was decided.
    pub newest_bound_generation: Option<i64>,
    pub result: SendResult,
}

/// The two streams the wake-up reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// TPF's await-interaction table.
    Interactions,
    /// The callback-binding table.
    Bindings,
}

/// One stream record the wake-up handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEvent {
    pub at_ms: i64,
    pub stream: Stream,
    pub attempt: u32,
    /// `ack`, or `retry:<reason>`.
    pub disposition: String,
}

/// One status-change event the reconciler handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconcileEvent {
    pub at_ms: i64,
    pub execution_arn: String,
    pub decision: String,
}

/// One step of a remote transition: its request's id and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionEvent {
    pub at_ms: i64,
    pub request_id: String,
    /// `sent`, `ran`, `dropped`, `failed before the action`, `redelivered`, `committed` or
    /// `timed out`.
    pub what: &'static str,
}

/// One `SWEEP` the wake-path stack's schedule made (`sweeper.mode = "schedule"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledSweepEvent {
    pub at_ms: i64,
    /// TPF's response text, or its failure.
    pub answer: Result<String, String>,
}

#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The drivers' invokes of the gateway.
    pub invocations: Vec<Invocation>,
    /// The schedule's sweeps, which no driver made.
    pub scheduled_sweeps: Vec<ScheduledSweepEvent>,
    pub starts: Vec<StartEvent>,
    pub sends: Vec<SendEvent>,
    pub stream: Vec<StreamEvent>,
    pub reconciles: Vec<ReconcileEvent>,
    /// The transition worker's requests, where the steps run remotely.
    pub transitions: Vec<TransitionEvent>,
    /// The idempotency keys the application submitted through the ingress.
    pub submissions: Vec<String>,
    /// Each work item TPF's sweep put on the work queue, with the record it was for.
    pub dispatches: Vec<Dispatch>,
    /// Each delivery TPF's work function declined before its claim.
    pub declines: Vec<Decline>,
    /// Callbacks the provider closed with a failure (a scenario's close, e.g. a task timeout):
    /// when, and the callback id.
    pub closed_callbacks: Vec<(i64, String)>,
}

/// A delivery TPF's work function's admission declined: the record's version before and after
/// must be the same (a decline claims and writes nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decline {
    pub at_ms: i64,
    pub execution_id: String,
    /// TPF's denial name.
    pub denial: &'static str,
    /// Sent again after the saturated delay (else dropped).
    pub requeued: bool,
    pub version_before: Option<i64>,
    pub version_after: Option<i64>,
}

/// A work item entering TPF's work queue: when, and what TPF's record said was due. A retry's
/// lateness is `at_ms - next_due_ms`: how long after TPF's `nextDue` the host's sweep ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    pub at_ms: i64,
    pub execution_id: String,
    /// The record's status when the item was queued (`WAIT_RETRY` for a retry).
    pub status: ExecutionStatus,
    pub next_due_ms: i64,
}

impl Trace {
    /// The invocations of one operation.
    pub fn calls(&self, operation: Operation) -> impl Iterator<Item = &Invocation> {
        self.invocations
            .iter()
            .filter(move |i| i.operation == Some(operation))
    }
}

/// `+HH:MM:SS.mmm` since the scenario started.
pub fn clock(ms: i64) -> String {
    Clock(ms).to_string()
}

/// [`clock`] written in place, so a rendered line costs no string of its own.
pub(crate) struct Clock(pub(crate) i64);

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.0.max(0);
        write!(
            f,
            "+{:02}:{:02}:{:02}.{:03}",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        )
    }
}
