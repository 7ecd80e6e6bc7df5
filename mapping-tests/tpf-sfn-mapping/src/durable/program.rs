//! The gateway driver's operations on the replay engine: `tpf_durable_driver::GatewayOps` over
//! the engine's steps, waits and callbacks, each step's payload what its effect needs
//! (`super::gateway::gateway_step`).

use durable_interp::{CallbackOutcome, ConditionOutcome, Context, Decision, StepError, Stop};
use serde_json::{json, Value};
use tpf_durable_driver::gateway::calls::{
    read_reply, CallbackEnd, GatewayFailure, PollEnd, PollState, Registration, StatePoll,
};
use tpf_durable_driver::gateway::policy::{self, PollDecision, StepRetry};
use tpf_durable_driver::ops::{GatewayOps, WriteFailed};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse};

/// The payload keys the harness's step handler reads.
pub(crate) mod payload {
    /// The gateway driver's steps: a value to checkpoint, a request to send, a poll's two
    /// requests, a registration to send with the callback id, a generation to start.
    pub const NOTE: &str = "note";
    pub const GATEWAY: &str = "gateway";
    pub const POLL: &str = "poll";
    pub const REGISTER: &str = "register";
    pub const START: &str = "start";
    /// The gateway function version a gateway step invokes.
    pub const FUNCTION: &str = "function";
}

/// A failed gateway step as its checkpoint holds it: the function error's JSON, or, for a
/// checkpoint that is not one, the text itself under the engine's own type.
pub(crate) fn failure(StepError(text): StepError) -> GatewayFailure {
    serde_json::from_str(&text).unwrap_or_else(|_| GatewayFailure {
        error_type: STEP_ERROR.to_owned(),
        error_message: text,
    })
}

/// The error type of a step failure that is not a gateway's function error.
pub const STEP_ERROR: &str = "DurableInterp.StepError";

/// A check's carried state; one that does not decode is an unknown status, which the driver
/// routes to a failure rather than poll forever.
fn poll_state(state: &Value) -> PollState {
    serde_json::from_value(state.clone()).unwrap_or(PollState {
        status: state.to_string(),
        await_pending: false,
    })
}

fn reply(result: Result<Value, StepError>) -> Result<ActionResponse, GatewayFailure> {
    match result {
        Ok(Value::String(text)) => read_reply(&text),
        Ok(other) => read_reply(&other.to_string()),
        Err(e) => Err(failure(e)),
    }
}

/// The engine's operations as the driver asks for them. Each step's payload carries what its
/// effect needs; each result is what the driver reads back, so a replay reads the same.
pub struct EngineOps<'c, 'a> {
    pub ctx: &'c Context<'a>,
    /// The gateway function version the gateway driver's steps invoke.
    pub gateway_arn: String,
}

fn retry_decision(retry: &StepRetry, attempt: u32) -> Decision {
    match retry.delay_after(attempt) {
        Some(delay_seconds) => Decision::Again { delay_seconds },
        None => Decision::Stop,
    }
}

impl EngineOps<'_, '_> {
    /// The driver's condition on TPF's state with `decide` as its wait strategy (the shipped
    /// driver's is `policy::decide`, TPF's ladder; a test's broken driver passes its own).
    pub fn wait_for_state_by(
        &self,
        name: &str,
        poll: &StatePoll,
        decide: &dyn Fn(&PollState, u32) -> PollDecision,
    ) -> Result<PollEnd, Stop> {
        let p = json!({
            payload::POLL: {
                "sweep": poll.sweep, "status": poll.status, "pending": poll.pending,
                "scheduledSweep": poll.scheduled_sweep,
            },
            payload::FUNCTION: self.gateway_arn,
        });
        let outcome =
            self.ctx
                .wait_for_condition(name, &p, Value::Null, &|state, n| match decide(
                    &poll_state(state),
                    n,
                ) {
                    PollDecision::Settled => Decision::Stop,
                    PollDecision::Again(delay_seconds) => Decision::Again { delay_seconds },
                    PollDecision::Exhausted => Decision::Exhausted {
                        reason: format!("{n} checks of TPF's status"),
                    },
                })?;
        Ok(match outcome {
            ConditionOutcome::Met(state) => PollEnd::Settled(poll_state(&state).status),
            ConditionOutcome::Exhausted { .. } => PollEnd::Exhausted,
            ConditionOutcome::CheckFailed(e) => PollEnd::CheckFailed(failure(StepError(e))),
        })
    }
}

impl GatewayOps for EngineOps<'_, '_> {
    type Stop = Stop;

    async fn checkpoint(&self, name: &str, value: &Value) -> Result<Value, Stop> {
        let p = json!({ payload::NOTE: value });
        Ok(self.ctx.step(name, &p)?.unwrap_or(Value::Null))
    }

    async fn gateway(
        &self,
        name: &str,
        request: &ActionRequest,
        retry: &StepRetry,
    ) -> Result<Result<ActionResponse, GatewayFailure>, Stop> {
        let p = json!({ payload::GATEWAY: request, payload::FUNCTION: self.gateway_arn });
        let result = self
            .ctx
            .step_with_retry(name, &p, &|_, n| retry_decision(retry, n))?;
        Ok(reply(result))
    }

    async fn wait_for_state(&self, name: &str, poll: &StatePoll) -> Result<PollEnd, Stop> {
        self.wait_for_state_by(name, poll, &policy::decide)
    }

    async fn await_callback(
        &self,
        name: &str,
        registration: &Registration,
        timeout_seconds: u64,
    ) -> Result<CallbackEnd, Stop> {
        let p = json!({ payload::REGISTER: registration, payload::FUNCTION: self.gateway_arn });
        // The submitter is retried as TPF's step is (the deployed function's
        // `submitter_retry_config`), under the same callback id.
        let retry = |_: &StepError, n| retry_decision(&policy::TPF_STEP, n);
        Ok(
            match self
                .ctx
                .wait_for_callback_retrying(name, timeout_seconds, &p, &retry)?
            {
                CallbackOutcome::Succeeded(v) => CallbackEnd::Signal(v),
                CallbackOutcome::Failed { error } => CallbackEnd::Failed { error },
                CallbackOutcome::TimedOut => CallbackEnd::TimedOut,
                CallbackOutcome::SubmitterFailed(e) => {
                    CallbackEnd::NotRegistered(failure(StepError(e)))
                }
            },
        )
    }

    async fn wait(&self, name: &str, seconds: u64) -> Result<(), Stop> {
        self.ctx.wait(name, seconds)
    }

    async fn start_generation(
        &self,
        name: &str,
        next: &ExecutionInput,
    ) -> Result<Result<(), WriteFailed>, Stop> {
        let p = json!({ payload::START: next });
        Ok(self
            .ctx
            .step(name, &p)?
            .map(|_| ())
            .map_err(|e| WriteFailed::new(e.0)))
    }
}
