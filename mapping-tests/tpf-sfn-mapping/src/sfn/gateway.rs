//! The gateway driver's Task resources on the ASL interpreter: each call reaches TPF's action
//! gateway and the starter through the gateway world's [`GatewayHost`], as Step Functions
//! makes it on the binding's transport.
//!
//! - `lambda:invoke`: the gateway's response is the result's `Payload`; a function error
//!   fails the task under its `errorType` with Lambda's error document as the cause, as Step
//!   Functions reports a Lambda function error; a transport failure under its Lambda error
//!   name. The starter is invoked the same way and answers `AwsDurableStartResponse`.
//! - `lambda:invoke.waitForTaskToken` (REGISTER_CALLBACK): the invoke's answer is dropped and
//!   the task waits for its token, which the wake-up answers; a failed invoke fails the task.
//! - `sqs:sendMessage.waitForTaskToken`: the message is sent, and the relay answers the token
//!   (`{gatewayRequest, taskToken, park}`): the response with SendTaskSuccess, a function
//!   error with SendTaskFailure(errorType, errorMessage); a parked request's success sends
//!   nothing.

use asl_interp::{Callback, Deferred, TaskCall, TaskHandler, TaskOutcome};
use serde_json::{json, Value};
use tpf_wire::gateway::key::relay;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::FunctionError;

use crate::gateway::engine::{GatewayHost, InvokeError};

const LAMBDA_INVOKE: &str = "arn:aws:states:::lambda:invoke";
const LAMBDA_PARK: &str = "arn:aws:states:::lambda:invoke.waitForTaskToken";
const SQS_SEND: &str = "arn:aws:states:::sqs:sendMessage.waitForTaskToken";

/// The functions a compiled gateway driver names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayFunctions {
    /// The gateway's numbered version (the queue relay invokes it for the queue transport).
    pub gateway_arn: String,
    pub starter_arn: String,
}

/// The Task handler of a gateway driver's executions.
pub struct GatewayTasks<'h> {
    pub host: &'h mut dyn GatewayHost,
    pub functions: &'h GatewayFunctions,
    deferred: Vec<Deferred>,
}

impl<'h> GatewayTasks<'h> {
    pub fn new(host: &'h mut dyn GatewayHost, functions: &'h GatewayFunctions) -> Self {
        Self {
            host,
            functions,
            deferred: Vec::new(),
        }
    }

    fn invoke_gateway(&mut self, function_arn: &str, request: &Value) -> Result<Value, Failure> {
        let text = self
            .host
            .invoke(function_arn, &request.to_string())
            .map_err(Failure::from)?;
        serde_json::from_str(&text).map_err(|e| Failure {
            error: "Lambda.Unknown".into(),
            cause: format!("the gateway answered no JSON: {e}"),
            message: e.to_string(),
        })
    }

    fn start(&mut self, payload: &Value) -> Result<Value, Failure> {
        let input = ExecutionInput::read_value(payload, tpf_wire::gateway::Mapper::Durable)
            .map_err(|e| Failure::from(InvokeError::Function(FunctionError::from(&e))))?;
        let started = self
            .host
            .start(&input)
            .map_err(|e| Failure::from(InvokeError::Function(e)))?;
        Ok(serde_json::to_value(started).unwrap_or(Value::Null))
    }

    fn lambda(&mut self, call: &TaskCall<'_>, park: bool) -> TaskOutcome {
        let function = call.input["FunctionName"].as_str().unwrap_or_default();
        let payload = &call.input["Payload"];
        let answer = if !park && function == self.functions.starter_arn {
            self.start(payload)
        } else {
            self.invoke_gateway(function, payload)
        };
        match (answer, park) {
            (Ok(_), true) => TaskOutcome::Pending,
            (Ok(payload), false) => TaskOutcome::Succeeded(json!({
                "ExecutedVersion": function.rsplit(':').next().unwrap_or_default(),
                "Payload": payload,
                "StatusCode": 200,
            })),
            (Err(f), _) => TaskOutcome::failed(f.error, f.cause),
        }
    }

    fn queue(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        let body = &call.input["MessageBody"];
        let token = body[relay::TASK_TOKEN]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let park = body[relay::PARK].as_bool().unwrap_or(false);
        let gateway = self.functions.gateway_arn.clone();
        let callback = match self.invoke_gateway(&gateway, &body[relay::GATEWAY_REQUEST]) {
            Ok(_) if park => None,
            Ok(output) => Some(Callback::Success { token, output }),
            Err(f) => Some(Callback::Failure {
                token,
                error: f.error,
                cause: f.message,
            }),
        };
        if let Some(callback) = callback {
            self.deferred.push(Deferred {
                at_ms: call.now_ms,
                callback,
            });
        }
        TaskOutcome::Succeeded(json!({ "MessageId": call.token }))
    }
}

/// A failed call: the task error, its cause as Step Functions reports it, and the bare
/// message (what the queue relay sends as the cause).
struct Failure {
    error: String,
    cause: String,
    message: String,
}

impl From<InvokeError> for Failure {
    fn from(e: InvokeError) -> Self {
        match e {
            InvokeError::Function(f) => Failure {
                cause: f.to_json(),
                error: f.error_type,
                message: f.error_message,
            },
            InvokeError::Transport(name) => Failure {
                cause: format!("{name}: the invoke did not reach the function"),
                message: name.clone(),
                error: name,
            },
        }
    }
}

impl TaskHandler for GatewayTasks<'_> {
    fn invoke(&mut self, call: &TaskCall<'_>) -> TaskOutcome {
        match call.resource {
            LAMBDA_INVOKE => self.lambda(call, false),
            LAMBDA_PARK => self.lambda(call, true),
            SQS_SEND => self.queue(call),
            other => TaskOutcome::failed(
                "States.TaskFailed",
                format!("a gateway driver has no Task resource {other}"),
            ),
        }
    }

    fn deferred(&mut self) -> Vec<Deferred> {
        std::mem::take(&mut self.deferred)
    }
}
