//! What the wake-up and the reconciler ask of the drivers' providers, for both backends: the
//! callback send, the callback's state after a send was refused as gone, a driver execution's
//! state and its start input. The classifications are `tpf_sfn_wakeup::provider`'s; this module
//! only reads the providers.

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_sfn::error::ProvideErrorMetadata;
use serde_json::Value;
use tpf_sfn_wakeup::provider::WakeEngine;
use tpf_sfn_wakeup::provider::{
    self as classify, callback_gone, driver_state, DriverState, DurableEvent, ProviderState,
};
use tpf_sfn_wakeup::wake::SendOutcome;
use tpf_wire::gateway::start::ExecutionInput;

use crate::aws::errors::{self, Kind};
use crate::error::Error;

/// The engine of a driver execution, by its ARN's service (`states` or `lambda`). An id that
/// is no ARN at all is a durable execution's: AWS's durable execution emulator names its
/// executions `<uuid>/<uuid>` (not a Step Functions ARN). An ARN of any
/// other service, or a blank id, is neither.
pub fn engine_of(execution_arn: &str) -> Option<WakeEngine> {
    if execution_arn.trim().is_empty() {
        return None;
    }
    if !execution_arn.starts_with("arn:") {
        return Some(WakeEngine::Durable);
    }
    match execution_arn.split(':').nth(2) {
        Some("states") => Some(WakeEngine::StepFunctions),
        Some("lambda") => Some(WakeEngine::Durable),
        _ => None,
    }
}

fn unknown_engine(execution_arn: &str) -> Error {
    Error::new(
        "GATEWAY_HOST_PROVIDER_ARN",
        format!("`{execution_arn}` is neither a Step Functions nor a Lambda durable execution"),
    )
    .with_hint("the registration's providerExecutionArn names the driver execution: look at who registered it")
}

/// The providers' clients.
#[derive(Debug, Clone)]
pub struct Providers {
    pub sfn: aws_sdk_sfn::Client,
    pub lambda: aws_sdk_lambda::Client,
}

/// A send's answer, before the callback's state is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    Accepted,
    Gone,
    /// Any other failure: the service's error code, for the log.
    Failed(String),
}

impl Providers {
    /// Sends the callback success: Step Functions `SendTaskSuccess(token, result)`, Lambda
    /// durable functions `SendDurableExecutionCallbackSuccess(callbackId, result)`.
    pub async fn send_success(
        &self,
        engine: WakeEngine,
        callback_id: &str,
        result_json: &str,
    ) -> Sent {
        let code = match engine {
            WakeEngine::StepFunctions => self
                .sfn
                .send_task_success()
                .task_token(callback_id)
                .output(result_json)
                .send()
                .await
                .err()
                .map(|e| sdk_code(e.code(), &e)),
            WakeEngine::Durable => self
                .lambda
                .send_durable_execution_callback_success()
                .callback_id(callback_id)
                .result(Blob::new(result_json))
                .send()
                .await
                .err()
                .map(|e| sdk_code(e.code(), &e)),
        };
        match code {
            None => Sent::Accepted,
            Some(code) if callback_gone(engine, &code) => Sent::Gone,
            Some(code) => Sent::Failed(code),
        }
    }

    /// The answer to the send in the wake-up's words: a gone callback is classified by the
    /// provider's history.
    pub async fn send_outcome(
        &self,
        engine: WakeEngine,
        execution_arn: &str,
        sent: &Sent,
        callback_id: &str,
    ) -> Result<SendOutcome, Error> {
        Ok(match sent {
            Sent::Accepted => SendOutcome::Accepted,
            Sent::Failed(_) => SendOutcome::Failed,
            Sent::Gone => SendOutcome::Gone(
                self.callback_state(engine, execution_arn, callback_id)
                    .await?,
            ),
        })
    }

    /// The callback's state from its execution's history (every page).
    pub async fn callback_state(
        &self,
        engine: WakeEngine,
        execution_arn: &str,
        callback_id: &str,
    ) -> Result<ProviderState, Error> {
        match engine {
            WakeEngine::StepFunctions => self.sfn_callback_state(execution_arn, callback_id).await,
            WakeEngine::Durable => {
                self.durable_callback_state(execution_arn, callback_id)
                    .await
            }
        }
    }

    async fn sfn_status(
        &self,
        execution_arn: &str,
    ) -> Result<Option<(String, Option<String>)>, Error> {
        match self
            .sfn
            .describe_execution()
            .execution_arn(execution_arn)
            .send()
            .await
        {
            Ok(out) => Ok(Some((
                out.status().as_str().to_owned(),
                out.input().map(str::to_owned),
            ))),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_execution_does_not_exist()) =>
            {
                Ok(None)
            }
            Err(e) => Err(errors::from_sdk(
                super::SCOPE,
                "DescribeExecution",
                e,
                errors::sfn::describe_execution,
            )),
        }
    }

    async fn sfn_callback_state(
        &self,
        execution_arn: &str,
        token: &str,
    ) -> Result<ProviderState, Error> {
        let Some((status, _)) = self.sfn_status(execution_arn).await? else {
            return Ok(classify::sfn_callback_state(None, None));
        };
        let mut types: Vec<String> = Vec::new();
        let mut from_callback = false;
        let mut pages = self
            .sfn
            .get_execution_history()
            .execution_arn(execution_arn)
            .include_execution_data(true)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| {
                errors::from_sdk(super::SCOPE, "GetExecutionHistory", e, errors::sfn::history)
            })?;
            for event in page.events() {
                let carries_token = event
                    .task_scheduled_event_details()
                    .is_some_and(|d| carries(d.parameters(), token));
                if carries_token {
                    // The latest task scheduled with the token is the callback's.
                    types.clear();
                    from_callback = true;
                }
                if from_callback {
                    types.push(event.r#type().as_str().to_owned());
                }
            }
        }
        let types: Vec<&str> = types.iter().map(String::as_str).collect();
        Ok(classify::sfn_callback_state(
            Some(&status),
            from_callback.then_some(types.as_slice()),
        ))
    }

    async fn durable_callback_state(
        &self,
        execution_arn: &str,
        callback_id: &str,
    ) -> Result<ProviderState, Error> {
        let mut events = Vec::new();
        let mut pages = self
            .lambda
            .get_durable_execution_history()
            .durable_execution_arn(execution_arn)
            .include_execution_data(true)
            .max_items(1000)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            match page {
                Ok(page) => events.extend(page.events().iter().cloned()),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|se| se.is_resource_not_found_exception()) =>
                {
                    return Ok(classify::durable_callback_state(None, callback_id));
                }
                Err(e) => {
                    return Err(errors::from_sdk(
                        super::SCOPE,
                        "GetDurableExecutionHistory",
                        e,
                        |_| None,
                    ))
                }
            }
        }
        let read: Vec<DurableEvent<'_>> = events
            .iter()
            .map(|e| DurableEvent {
                event_type: e.event_type().map_or("", |t| t.as_str()),
                id: e.id().unwrap_or_default(),
                callback_id: e.callback_started_details().map(|d| d.callback_id()),
            })
            .collect();
        Ok(classify::durable_callback_state(Some(&read), callback_id))
    }

    /// The provider's status of a driver execution (`None`: the provider does not have it),
    /// and the input it started with.
    async fn execution(
        &self,
        engine: WakeEngine,
        execution_arn: &str,
    ) -> Result<Option<(String, Option<String>)>, Error> {
        match engine {
            WakeEngine::StepFunctions => self.sfn_status(execution_arn).await,
            WakeEngine::Durable => match self
                .lambda
                .get_durable_execution()
                .durable_execution_arn(execution_arn)
                .send()
                .await
            {
                Ok(out) => Ok(Some((
                    out.status().as_str().to_owned(),
                    out.input_payload().map(str::to_owned),
                ))),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|se| se.is_resource_not_found_exception()) =>
                {
                    Ok(None)
                }
                Err(e) => Err(errors::from_sdk(
                    super::SCOPE,
                    "GetDurableExecution",
                    e,
                    |e| {
                        e.is_too_many_requests_exception()
                            .then_some(Kind::Throttled)
                    },
                )),
            },
        }
    }

    /// A driver execution's state, as the reconciler decides on it.
    pub async fn driver_state(&self, execution_arn: &str) -> Result<DriverState, Error> {
        let engine = engine_of(execution_arn).ok_or_else(|| unknown_engine(execution_arn))?;
        let status = self.execution(engine, execution_arn).await?;
        driver_state(engine, status.as_ref().map(|(s, _)| s.as_str())).map_err(|e| {
            Error::new(
                "GATEWAY_HOST_DRIVER_STATUS",
                format!("the driver execution {execution_arn} is in a status the reconciler does not know"),
            )
            .with_source(e)
            .with_hint("the event is retried; a newer provider status needs a newer tpf-sfn")
        })
    }

    /// The input a driver execution started with, read as the coordinator reads it.
    pub async fn driver_input(&self, execution_arn: &str) -> Result<Option<ExecutionInput>, Error> {
        let Some(engine) = engine_of(execution_arn) else {
            return Ok(None);
        };
        let execution = self.execution(engine, execution_arn).await?;
        Ok(execution
            .and_then(|(_, input)| input)
            .and_then(|input| ExecutionInput::read(&input).ok()))
    }

    pub fn engine(&self, execution_arn: &str) -> Result<WakeEngine, Error> {
        engine_of(execution_arn).ok_or_else(|| unknown_engine(execution_arn))
    }
}

/// The service's error code, or the SDK's own words when the service did not answer (a
/// timeout, a refused connection: not a gone callback).
fn sdk_code(code: Option<&str>, e: &dyn std::fmt::Display) -> String {
    code.map_or_else(|| format!("transport: {e}"), str::to_owned)
}

/// Whether a task's parameters (JSON text) carry `token` as a value, at any depth.
fn carries(parameters: &str, token: &str) -> bool {
    fn walk(v: &Value, token: &str) -> bool {
        match v {
            Value::String(s) => s == token,
            Value::Array(items) => items.iter().any(|i| walk(i, token)),
            Value::Object(map) => map.values().any(|i| walk(i, token)),
            _ => false,
        }
    }
    serde_json::from_str::<Value>(parameters).is_ok_and(|v| walk(&v, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_is_the_arns_service() {
        assert_eq!(
            engine_of("arn:aws:states:us-east-1:123456789012:execution:m:n"),
            Some(WakeEngine::StepFunctions)
        );
        assert_eq!(
            engine_of("arn:aws:lambda:us-east-1:123456789012:function:f:3/durable-execution/n/id"),
            Some(WakeEngine::Durable)
        );
        assert_eq!(engine_of("arn:aws:sqs:us-east-1:1:q"), None);
        assert_eq!(engine_of(" "), None);
        // The durable execution emulator's ids.
        assert_eq!(
            engine_of("6f1c2d9e-0d1b-4b8e-9c55-0c1e1a4c9f00/1d7e0c2a-5b3f-4c86-a0e1-2f9d8b7c6a54"),
            Some(WakeEngine::Durable)
        );
    }

    #[test]
    fn a_task_carries_the_token_as_a_value() {
        let p = r#"{"QueueUrl":"q","MessageBody":{"taskToken":"tok","n":[1,"x"]}}"#;
        assert!(carries(p, "tok"));
        assert!(!carries(p, "to"));
        assert!(!carries(p, "taskToken"));
        assert!(!carries("not json tok", "tok"));
    }
}
