//! Step Functions' own integrations, which the engine answers itself because it *is* Step
//! Functions: nested StartExecution, DescribeExecution and the task-token calls.
//!
//! Error names follow the integration flavour (AWS "Handling errors in service
//! integrations"): the optimized `states:` integration reports `StepFunctions.<Exception>`,
//! the `aws-sdk:sfn:` one `Sfn.<Exception>`.

use serde_json::{json, Map, Value};

use super::clock::format_rfc3339;
use super::engine::Engine;
use super::error::SfnError;
use super::handler::TaskOutcome;

const OPTIMIZED_START: &str = "arn:aws:states:::states:startExecution";
const SDK: &str = "arn:aws:states:::aws-sdk:sfn:";

pub(super) fn is_builtin(resource: &str) -> bool {
    resource.starts_with(OPTIMIZED_START) || resource.starts_with(SDK)
}

fn exception(e: &SfnError) -> &'static str {
    match e {
        SfnError::ExecutionAlreadyExists(_) => "ExecutionAlreadyExistsException",
        SfnError::ExecutionDoesNotExist(_) => "ExecutionDoesNotExistException",
        SfnError::ExecutionNotRedrivable(_) => "ExecutionNotRedrivableException",
        SfnError::StateMachineDoesNotExist(_) => "StateMachineDoesNotExistException",
        SfnError::StateMachineAlreadyExists(_) => "StateMachineAlreadyExistsException",
        SfnError::InvalidDefinition(_) => "InvalidDefinitionException",
        SfnError::InvalidName(_) => "InvalidNameException",
        SfnError::InvalidArn(_) => "InvalidArnException",
        SfnError::InvalidExecutionInput(_) => "InvalidExecutionInputException",
        SfnError::InvalidOutput(_) => "InvalidOutputException",
        SfnError::InvalidToken(_) => "InvalidTokenException",
        SfnError::TaskTimedOut(_) => "TaskTimedOutException",
    }
}

fn str_param<'v>(input: &'v Value, key: &str) -> Option<&'v str> {
    input.get(key).and_then(Value::as_str)
}

fn date(ms: i64) -> Value {
    // The SDK returns timestamps; in task output they appear as ISO-8601 text.
    Value::String(format_rfc3339(ms))
}

impl Engine {
    pub(super) fn builtin(&mut self, resource: &str, input: &Value) -> TaskOutcome {
        let (prefix, action) = if resource == OPTIMIZED_START {
            ("StepFunctions.", "startExecution")
        } else if let Some(a) = resource.strip_prefix(SDK) {
            ("Sfn.", a)
        } else {
            return TaskOutcome::failed(
                "States.Runtime",
                format!(
                    "the integration pattern of '{resource}' is not supported by this interpreter"
                ),
            );
        };
        let fail = |e: SfnError| {
            TaskOutcome::failed(
                format!("{prefix}{}", exception(&e)),
                e.message().to_string(),
            )
        };
        let validation =
            |msg: String| TaskOutcome::failed(format!("{prefix}ValidationException"), msg);
        match action {
            "startExecution" => {
                let Some(arn) = str_param(input, "StateMachineArn") else {
                    return validation("StateMachineArn is required".into());
                };
                let name = match input.get("Name") {
                    Some(Value::String(s)) => s.clone(),
                    None | Some(Value::Null) => self.rng.uuid_v4(),
                    Some(v) => return validation(format!("Name must be a string, got {v}")),
                };
                let child_input = match input.get("Input") {
                    None | Some(Value::Null) => json!({}),
                    Some(Value::String(s)) => match serde_json::from_str(s) {
                        Ok(v) => v,
                        Err(e) => return fail(SfnError::InvalidExecutionInput(e.to_string())),
                    },
                    Some(v) => v.clone(),
                };
                match self.start_execution(arn, &name, child_input) {
                    Ok(r) => TaskOutcome::Succeeded(json!({
                        "ExecutionArn": r.execution_arn,
                        "StartDate": date(r.start_ms),
                    })),
                    Err(e) => fail(e),
                }
            }
            "describeExecution" => {
                let Some(arn) = str_param(input, "ExecutionArn") else {
                    return validation("ExecutionArn is required".into());
                };
                match self.describe_execution(arn) {
                    Ok(d) => {
                        let mut o = Map::new();
                        o.insert("ExecutionArn".into(), json!(d.execution_arn));
                        o.insert("StateMachineArn".into(), json!(d.state_machine_arn));
                        o.insert("Name".into(), json!(d.name));
                        o.insert("Status".into(), json!(d.status.as_str()));
                        o.insert("StartDate".into(), date(d.start_ms));
                        if let Some(s) = d.stop_ms {
                            o.insert("StopDate".into(), date(s));
                        }
                        o.insert("Input".into(), json!(d.input.to_string()));
                        if let Some(out) = &d.output {
                            o.insert("Output".into(), json!(out.to_string()));
                        }
                        if let Some(er) = d.error {
                            o.insert("Error".into(), json!(er));
                        }
                        if let Some(c) = d.cause {
                            o.insert("Cause".into(), json!(c));
                        }
                        o.insert("RedriveCount".into(), json!(d.redrive_count));
                        TaskOutcome::Succeeded(Value::Object(o))
                    }
                    Err(e) => fail(e),
                }
            }
            "sendTaskSuccess" => {
                let Some(tok) = str_param(input, "TaskToken") else {
                    return validation("TaskToken is required".into());
                };
                let output = match input.get("Output") {
                    Some(Value::String(s)) => match serde_json::from_str(s) {
                        Ok(v) => v,
                        Err(e) => return fail(SfnError::InvalidOutput(e.to_string())),
                    },
                    Some(v) => v.clone(),
                    None => return validation("Output is required".into()),
                };
                let tok = tok.to_string();
                match self.send_task_success(&tok, output) {
                    Ok(()) => TaskOutcome::Succeeded(json!({})),
                    Err(e) => fail(e),
                }
            }
            "sendTaskFailure" => {
                let Some(tok) = str_param(input, "TaskToken") else {
                    return validation("TaskToken is required".into());
                };
                let (tok, error, cause) = (
                    tok.to_string(),
                    str_param(input, "Error").unwrap_or("").to_string(),
                    str_param(input, "Cause").unwrap_or("").to_string(),
                );
                match self.send_task_failure(&tok, &error, &cause) {
                    Ok(()) => TaskOutcome::Succeeded(json!({})),
                    Err(e) => fail(e),
                }
            }
            "sendTaskHeartbeat" => {
                let Some(tok) = str_param(input, "TaskToken") else {
                    return validation("TaskToken is required".into());
                };
                let tok = tok.to_string();
                match self.send_task_heartbeat(&tok) {
                    Ok(()) => TaskOutcome::Succeeded(json!({})),
                    Err(e) => fail(e),
                }
            }
            "stopExecution" => {
                let Some(arn) = str_param(input, "ExecutionArn") else {
                    return validation("ExecutionArn is required".into());
                };
                let arn = arn.to_string();
                let (error, cause) = (
                    str_param(input, "Error").map(str::to_string),
                    str_param(input, "Cause").map(str::to_string),
                );
                match self.stop_execution(&arn, error.as_deref(), cause.as_deref()) {
                    Ok(at) => TaskOutcome::Succeeded(json!({"StopDate": date(at)})),
                    Err(e) => fail(e),
                }
            }
            other => TaskOutcome::failed(
                "States.Runtime",
                format!("aws-sdk:sfn:{other} is not supported by this interpreter"),
            ),
        }
    }
}
