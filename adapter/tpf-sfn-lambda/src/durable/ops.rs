//! The gateway driver's operations on AWS's durable execution SDK: the only module that names
//! it, besides the gateway calls (`gateway.rs`).
//!
//! - `start_generation`: a step, retried by the SDK with suspended pauses; a start that still
//!   fails is the driver's verdict, not an engine failure.
//! - `wait`: the SDK's timer.
//! - `checkpoint`, `gateway`, `wait_for_state`, `await_callback`: `gateway.rs`.
//!
//! An SDK error other than those verdicts is `Stop`: the handler fails, and the service retries
//! the invocation or fails the execution.

use std::sync::Arc;
use std::time::Duration;

use aws_durable_execution_sdk::{
    DurableContext, OperationError, OperationErrorKind, RetryDecision, StepErrorKind,
};
use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::InvocationType;
use serde_json::Value;
use tpf_durable_driver::gateway::calls::{
    CallbackEnd, GatewayFailure, PollEnd, Registration, StatePoll,
};
use tpf_durable_driver::gateway::policy::StepRetry;
use tpf_durable_driver::ops::WriteFailed;
use tpf_durable_driver::GatewayOps;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse};

use super::{gateway, Driver};

/// Attempts of a hand-over before the driver's verdict.
const WRITE_ATTEMPTS: u32 = 4;

/// The SDK's context for one invocation, and what the function version shares.
pub struct SdkOps {
    ctx: DurableContext,
    driver: Arc<Driver>,
}

impl SdkOps {
    pub fn new(ctx: DurableContext, driver: Arc<Driver>) -> SdkOps {
        SdkOps { ctx, driver }
    }

    /// A step starting the execution `durable_name` with `payload` on this version, its writes
    /// retried; a start that still fails is the driver's verdict.
    async fn start_step(
        &self,
        name: &str,
        durable_name: String,
        payload: String,
    ) -> Result<Result<(), WriteFailed>, OperationError> {
        let driver = self.driver.clone();
        let function = self.function_arn();
        let result = self
            .ctx
            .step(move |_| async move {
                start_named(&driver.lambda, &function, &durable_name, payload).await
            })
            .name(name)
            .retry_strategy(write_retry)
            .await;
        match result {
            Ok(()) => Ok(Ok(())),
            Err(e) => step_verdict(e).map(Err),
        }
    }

    /// This version's qualified ARN, as Lambda invoked it.
    fn function_arn(&self) -> String {
        self.ctx.lambda_context().invoked_function_arn.clone()
    }
}

/// Pauses between write attempts: 1, 2, 4 s.
fn write_retry(_: &aws_durable_execution_sdk::StepError, attempt: u32) -> RetryDecision {
    if attempt >= WRITE_ATTEMPTS {
        RetryDecision::Stop
    } else {
        RetryDecision::Retry {
            delay: Duration::from_secs(1 << (attempt - 1).min(4)),
        }
    }
}

/// A step's own failure after its retries (the verdict), or `Stop` for anything else.
fn step_verdict(e: OperationError) -> Result<WriteFailed, OperationError> {
    match e.kind() {
        OperationErrorKind::Step(s)
            if matches!(
                s.kind(),
                StepErrorKind::ExecutionFailed { .. } | StepErrorKind::RetriesExhausted(_)
            ) =>
        {
            Ok(WriteFailed::new(format!("{e:#}")))
        }
        _ => Err(e),
    }
}

impl GatewayOps for SdkOps {
    type Stop = OperationError;

    async fn checkpoint(&self, name: &str, value: &Value) -> Result<Value, OperationError> {
        gateway::checkpoint(&self.ctx, name, value).await
    }

    async fn gateway(
        &self,
        name: &str,
        request: &ActionRequest,
        retry: &StepRetry,
    ) -> Result<Result<ActionResponse, GatewayFailure>, OperationError> {
        gateway::call(&self.ctx, &self.driver.gateway, name, request, retry).await
    }

    async fn wait_for_state(
        &self,
        name: &str,
        poll: &StatePoll,
    ) -> Result<PollEnd, OperationError> {
        gateway::wait_for_state(&self.ctx, &self.driver.gateway, name, poll).await
    }

    async fn await_callback(
        &self,
        name: &str,
        registration: &Registration,
        timeout_seconds: u64,
    ) -> Result<CallbackEnd, OperationError> {
        gateway::await_callback(
            &self.ctx,
            &self.driver.gateway,
            name,
            registration,
            timeout_seconds,
        )
        .await
    }

    async fn wait(&self, name: &str, seconds: u64) -> Result<(), OperationError> {
        self.ctx.wait(Duration::from_secs(seconds)).name(name).await
    }

    async fn start_generation(
        &self,
        name: &str,
        next: &ExecutionInput,
    ) -> Result<Result<(), WriteFailed>, OperationError> {
        self.start_step(name, next.durable_execution_name(), next.to_json())
            .await
    }
}

/// `Invoke(Event, DurableExecutionName)` on `function`; a name that already started is the
/// execution started.
async fn start_named(
    lambda: &aws_sdk_lambda::Client,
    function: &str,
    name: &str,
    payload: String,
) -> Result<(), aws_durable_execution_sdk::BoxError> {
    match lambda
        .invoke()
        .function_name(function)
        .invocation_type(InvocationType::Event)
        .durable_execution_name(name)
        .payload(Blob::new(payload))
        .send()
        .await
    {
        Ok(_) => Ok(()),
        Err(e)
            if e.as_service_error()
                .is_some_and(|se| se.is_durable_execution_already_started_exception()) =>
        {
            Ok(())
        }
        Err(e) => Err(format!(
            "starting {name} on {function}: {}",
            aws_sdk_lambda::error::DisplayErrorContext(&e)
        )
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_retried_a_bounded_number_of_times() {
        let e = aws_durable_execution_sdk::OperationError::__test_error();
        let OperationErrorKind::Step(step) = e.kind() else {
            panic!("a step error");
        };
        assert!(matches!(write_retry(step, 1), RetryDecision::Retry { .. }));
        assert_eq!(write_retry(step, WRITE_ATTEMPTS), RetryDecision::Stop);
        assert!(step_verdict(e).is_ok());
    }
}
