//! The one seam between the gateway world and a backend: [`GatewayEngine`] is what an engine
//! (Step Functions on the ASL interpreter, Lambda durable functions on the replay engine) does
//! for the world, and [`GatewayHost`] is what a driver running on it reaches outside its engine
//! (TPF's action gateway and the starter), on the world's virtual clock.
//!
//! The world owns the clock, TPF, the binding table, the streams, the wake-up and the
//! reconciler; an engine owns its driver executions, their timers and their history. Neither
//! knows the other's types: the world speaks in execution names, ARNs, callback ids and the
//! provider's own status words, which `tpf_sfn_wakeup::provider` turns into TPF's decisions.

use tpf_sfn_wakeup::provider::ProviderState;
use tpf_sfn_wakeup::provider::WakeEngine;
use tpf_wire::gateway::start::{ExecutionInput, StartResponse};
use tpf_wire::gateway::FunctionError;

/// Why an invoke of the gateway did not answer a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvokeError {
    /// The function ran and failed: Lambda's `{errorMessage, errorType}` with
    /// `X-Amz-Function-Error: Unhandled` (Step Functions' error name is `errorType`).
    Function(FunctionError),
    /// The invoke itself failed before or after the function ran: the Lambda service's error
    /// name as Step Functions reports it (`Lambda.ServiceException`,
    /// `Lambda.TooManyRequestsException`, …), retried by the driver as TPF's step is.
    Transport(String),
}

/// What a driver running on an engine reaches outside it. The world implements it; an engine
/// passes it to its drivers while it runs them.
pub trait GatewayHost {
    /// The world's virtual clock, in epoch milliseconds.
    fn now_ms(&self) -> i64;

    /// Invokes TPF's action gateway: `function_arn` as the driver addresses it (a numbered
    /// version, `…:function:<name>:<version>`), `request_json` the 15-key request as the
    /// driver wrote it. Answers the 8-key response text, or the invoke's failure.
    fn invoke(&mut self, function_arn: &str, request_json: &str) -> Result<String, InvokeError>;

    /// The ingress/starter: starts the driver generation `input` names, under TPF's durable
    /// execution name (`ExecutionInput::durable_execution_name`), and answers TPF's
    /// `AwsDurableStartResponse` (202 for a start and for a name that already started). The
    /// engine's start happens when the engine hands control back to the world (a start is an
    /// asynchronous invoke on both providers), so an engine never re-enters itself.
    fn start(&mut self, input: &ExecutionInput) -> Result<StartResponse, FunctionError>;
}

/// An engine's answer to a start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// A new execution, with its ARN.
    New(String),
    /// The name already started (Step Functions: `ExecutionAlreadyExists` for the same input;
    /// Lambda durable functions: `DurableExecutionAlreadyStartedException`), with its ARN.
    Existing(String),
}

impl Started {
    pub fn arn(&self) -> &str {
        match self {
            Self::New(a) | Self::Existing(a) => a,
        }
    }
}

/// A provider's refusal of a call the world made, with the provider's own error code
/// (`TaskDoesNotExist`, `ResourceNotFoundException`, `ThrottlingException`, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ProviderRefusal {
    pub code: String,
    pub message: String,
}

/// A driver execution's lifecycle, in neutral words (the provider's own word is
/// [`DriverView::provider_status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DriverStatus {
    Running,
    Succeeded,
    Failed,
    TimedOut,
    /// Stopped by an operator (Step Functions: `ABORTED`; Lambda durable functions:
    /// `STOPPED`).
    Stopped,
}

impl DriverStatus {
    pub fn ended(self) -> bool {
        self != Self::Running
    }
}

/// What the world reads of one driver execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverView {
    pub arn: String,
    /// The execution name it was started under.
    pub name: String,
    /// The start input's text, as the engine received it.
    pub input: String,
    pub status: DriverStatus,
    /// The provider's own status word (`DescribeExecution` / `GetDurableExecution`), as
    /// `tpf_sfn_wakeup::provider::driver_state` reads it.
    pub provider_status: String,
    /// The output on success (TPF's `AwsDurableExecutionOutput`, or the hand-over output).
    pub output: Option<String>,
    /// `(error, cause)` on failure.
    pub error: Option<(String, String)>,
    pub started_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    /// What the execution wrote against the provider's history limit: Step Functions' history
    /// events, Lambda durable functions' billed operations.
    pub history: HistorySize,
}

/// One driver execution's history against the most it may write: the bound its release was
/// proven to (the compiled driver's event budget, when the engine was told it) or else the
/// provider's own cap, and whether the provider failed it at that cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistorySize {
    /// History events (Step Functions) or billed operations (Lambda durable functions).
    pub written: u64,
    pub limit: u64,
    /// What `written` and `limit` count, for a violation's text.
    pub unit: &'static str,
    /// The provider failed the execution at its cap.
    pub capped: bool,
}

/// A failure of the engine itself (a budget it stopped at, a driver it cannot run): the
/// scenario fails with it rather than the world guessing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineError(pub String);

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EngineError {}

/// A backend's engine running gateway drivers, as the world drives it.
///
/// Time: the world calls [`GatewayEngine::advance_to`] with its clock, then
/// [`GatewayEngine::run_until_idle`], which runs every driver step due at that instant
/// (including the gateway calls those steps make through the host) until each driver waits
/// on a timer, a callback or nothing. [`GatewayEngine::next_timer`] tells the world when the
/// engine next has work of its own.
pub trait GatewayEngine {
    /// The provider whose vocabulary the engine speaks (callback error codes, statuses).
    fn kind(&self) -> WakeEngine;

    /// Starts a driver execution named `name` with the start input text `input_json` (TPF's
    /// `AwsDurableExecutionInput`). A name that exists is [`Started::Existing`].
    fn start(&mut self, name: &str, input_json: &str, now_ms: i64) -> Result<Started, EngineError>;

    /// Delivers a callback success (Step Functions: `SendTaskSuccess(token, output)`; Lambda
    /// durable functions: `SendDurableExecutionCallbackSuccess(callbackId, result)`). A
    /// callback that no longer waits is refused with the provider's code.
    fn send_callback_success(
        &mut self,
        callback_id: &str,
        result_json: &str,
        now_ms: i64,
    ) -> Result<(), ProviderRefusal>;

    /// Delivers a callback failure (`SendTaskFailure` / `SendDurableExecutionCallbackFailure`).
    fn send_callback_failure(
        &mut self,
        callback_id: &str,
        error: &str,
        cause: &str,
        now_ms: i64,
    ) -> Result<(), ProviderRefusal>;

    /// Stops a driver execution (`StopExecution` / `StopDurableExecution`).
    fn stop(&mut self, execution_arn: &str, now_ms: i64) -> Result<(), ProviderRefusal>;

    /// One driver execution, `None` when the provider does not have it.
    fn driver(&self, execution_arn: &str) -> Option<DriverView>;

    /// Every driver execution, in start order.
    fn drivers(&self) -> Vec<DriverView>;

    /// The provider's history classification of a callback whose send was refused as gone
    /// (`tpf_sfn_wakeup::provider::durable_callback_state` or `sfn_callback_state` over the
    /// execution's history).
    fn callback_state(&self, callback_id: &str) -> ProviderState;

    /// The ARNs of driver executions whose status changed since the last call, in order: the
    /// provider's status-change events (EventBridge).
    fn take_status_changes(&mut self) -> Vec<String>;

    /// Runs every driver step due at the engine's current time; the drivers reach the gateway
    /// and the starter through `host`.
    fn run_until_idle(&mut self, host: &mut dyn GatewayHost) -> Result<(), EngineError>;

    /// When the engine next has work of its own (a wait or a callback timeout ending).
    fn next_timer(&self) -> Option<i64>;

    /// Moves the engine's clock to `now_ms` (never backwards).
    fn advance_to(&mut self, now_ms: i64);

    /// The period of the scheduled `SWEEP` the release's deployment runs beside its drivers
    /// (`sweeper.mode = "schedule"`), or `None`: its drivers sweep on every poll.
    fn scheduled_sweep_ms(&self) -> Option<i64> {
        None
    }
}
