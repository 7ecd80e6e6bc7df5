//! The gateway driver (`tpf_durable_driver::gateway`) on the replay engine: the function
//! version's program, and its steps' effects over what a driver reaches outside its engine
//! (`crate::gateway::engine::GatewayHost`: TPF's action gateway on the world's clock).

use durable_interp::engine::Failed;
use durable_interp::{poll, Context, Effects, Program, StepCall, StepError, Stop};
use serde_json::Value;
use tpf_durable_driver::gateway::calls::{
    read_reply, sweeps_first, GatewayFailure, PollState, Registration,
};
use tpf_durable_driver::{drive_gateway, GatewayRun};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::Mapper;
use tpf_wire::records::ExecutionStatus;

use super::program::{payload, EngineOps};
use crate::gateway::engine::{GatewayHost, InvokeError};

/// One published function version running the gateway driver: the gateway version its steps
/// invoke and the release's await timing.
pub struct GatewayProgram {
    pub gateway_arn: String,
    pub run: GatewayRun,
}

impl Program for GatewayProgram {
    fn invoke(&self, ctx: &Context<'_>, input: &Value) -> Result<Result<Value, Failed>, Stop> {
        // The coordinator function's SerDes: exact keys, unknown ones ignored.
        let input = match ExecutionInput::read_value(input, Mapper::Durable) {
            Ok(i) => i,
            Err(e) => {
                return Ok(Err(Failed {
                    error: e.class.to_owned(),
                    cause: e.root_cause().message.clone(),
                }))
            }
        };
        let ops = EngineOps {
            ctx,
            gateway_arn: self.gateway_arn.clone(),
        };
        Ok(
            match poll::ready(drive_gateway(&ops, &self.run, &input))?? {
                Ok(end) => Ok(serde_json::to_value(end).unwrap_or(Value::Null)),
                Err(f) => Err(Failed {
                    error: f.error,
                    cause: f.cause,
                }),
            },
        )
    }
}

/// A failed invoke as the step checkpoints it: the function error, or the Lambda service's
/// error name with what the transport said.
fn invoke_failure(e: InvokeError) -> StepError {
    let f = match e {
        InvokeError::Function(f) => f,
        InvokeError::Transport(name) => GatewayFailure {
            error_message: format!("the invoke failed with {name}"),
            error_type: name,
        },
    };
    StepError(f.to_json())
}

fn invoke(
    host: &mut dyn GatewayHost,
    function: &str,
    request: &Value,
) -> Result<String, StepError> {
    host.invoke(function, &request.to_string())
        .map_err(invoke_failure)
}

/// The effect of one of the gateway driver's steps, or `None` for a step that is not one.
pub fn gateway_step(
    call: &StepCall<'_>,
    effects: &mut Effects,
    host: &mut dyn GatewayHost,
) -> Option<Result<Value, StepError>> {
    let p = call.payload;
    let function = p
        .get(payload::FUNCTION)
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Some(v) = p.get(payload::NOTE) {
        return Some(Ok(v.clone()));
    }
    if let Some(request) = p.get(payload::GATEWAY) {
        return Some(invoke(host, function, request).map(Value::String));
    }
    if let Some(poll) = p.get(payload::POLL) {
        let mut check = || -> Result<Value, StepError> {
            let scheduled = poll["scheduledSweep"].as_bool().unwrap_or(false);
            let last = call
                .state
                .and_then(|s| s.get("status"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if sweeps_first(scheduled, last) {
                invoke(host, function, &poll["sweep"])?;
            }
            let text = invoke(host, function, &poll["status"])?;
            let read = |text: &str| read_reply(text).map_err(|f| StepError(f.to_json()));
            let status = read(&text)?.execution_status.unwrap_or_default();
            let await_pending = status == ExecutionStatus::WaitingExternal.as_str()
                && read(&invoke(host, function, &poll["pending"])?)?
                    .await_identity
                    .is_some();
            let state = PollState {
                status,
                await_pending,
            };
            serde_json::to_value(state).map_err(|e| StepError(e.to_string()))
        };
        return Some(check());
    }
    if let Some(r) = p.get(payload::REGISTER) {
        let mut registered = || -> Result<Value, StepError> {
            let r: Registration = serde_json::from_value(r.clone())
                .map_err(|e| StepError(format!("the registration does not decode: {e}")))?;
            let request = r
                .request(call.execution_arn, call.callback_id.unwrap_or_default())
                .map_err(|e| StepError(GatewayFailure::from(&e).to_json()))?;
            let text = host
                .invoke(function, &request.to_json())
                .map_err(invoke_failure)?;
            Ok(Value::String(text))
        };
        return Some(registered());
    }
    if let Some(next) = p.get(payload::START) {
        let started = match ExecutionInput::read_value(next, Mapper::Durable) {
            Ok(input) => {
                // Invoke(Event, DurableExecutionName) on this same version: the engine starts
                // it when the invocation ends; a name that exists is the one started.
                effects.start_execution(
                    call.function_arn,
                    &input.durable_execution_name(),
                    next.clone(),
                );
                Ok(Value::Null)
            }
            Err(e) => Err(StepError(GatewayFailure::from(&e).to_json())),
        };
        return Some(started);
    }
    None
}
