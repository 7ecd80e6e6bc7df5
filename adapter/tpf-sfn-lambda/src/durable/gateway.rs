//! The gateway driver's operations on AWS's durable execution SDK: TPF's action gateway invoked
//! by its numbered version from inside steps (retried with the SDK's default step retry, full
//! jitter, as TPF's driver is), the condition polling SWEEP + STATUS, the callback whose
//! submitter is REGISTER_CALLBACK, the hand-over's named invoke. `ops.rs`'s `GatewayOps` impl
//! calls these; this module and `ops.rs` are the only ones that name the SDK.

use std::sync::Arc;
use std::time::Duration;

use aws_durable_execution_sdk::builders::wait_for_condition::WaitDecision;
use aws_durable_execution_sdk::builders::{JitterStrategy, RetryStrategyConfig};
use aws_durable_execution_sdk::{
    CallbackErrorKind, DurableContext, OperationError, OperationErrorKind, TypedError,
    WaitForConditionErrorKind,
};
use aws_sdk_lambda::error::ProvideErrorMetadata;
use serde_json::Value;
use tpf_durable_driver::gateway::calls::{
    self, read_reply, CallbackEnd, GatewayFailure, PollEnd, PollState, Registration, StatePoll,
};
use tpf_durable_driver::gateway::policy::{self, PollDecision, StepRetry};
use tpf_sfn_wakepath::relay::gateway::{invoke_sync, Invoked};
use tpf_wire::gateway::response::FUNCTION_ERROR_UNHANDLED;
use tpf_wire::gateway::{ActionRequest, ActionResponse, FunctionError};
use tpf_wire::records::ExecutionStatus;

/// TPF's action gateway, one numbered version of it.
#[derive(Clone)]
pub struct GatewayClient {
    pub client: aws_sdk_lambda::Client,
    pub function_arn: String,
}

impl GatewayClient {
    /// One synchronous invoke with the request's exact bytes: the response text, the function
    /// error (`errorType` = the Java class), or the Lambda service's error as
    /// `Lambda.<code>` (as Step Functions names it), which the step's retry retries.
    pub async fn invoke(&self, request_json: String) -> Result<String, GatewayFailure> {
        match invoke_sync(&self.client, &self.function_arn, &request_json).await {
            Ok(Invoked {
                function_error: None,
                payload,
            }) => Ok(payload),
            Ok(Invoked {
                function_error: Some(kind),
                payload,
            }) => Err(
                serde_json::from_str::<FunctionError>(&payload).unwrap_or(FunctionError {
                    error_message: payload,
                    error_type: if kind.is_empty() {
                        FUNCTION_ERROR_UNHANDLED.to_owned()
                    } else {
                        kind
                    },
                }),
            ),
            Err(e) => Err(FunctionError {
                error_type: format!("Lambda.{}", e.code().unwrap_or("SdkClientException")),
                error_message: format!(
                    "invoking {}: {}",
                    self.function_arn,
                    aws_sdk_lambda::error::DisplayErrorContext(&e)
                ),
            }),
        }
    }

    async fn send(&self, request: &Value) -> Result<ActionResponse, GatewayFailure> {
        read_reply(&self.invoke(request.to_string()).await?)
    }
}

/// A failure as the step records it: the function error's class as the wire `ErrorType`.
fn typed(f: GatewayFailure) -> aws_durable_execution_sdk::BoxError {
    Box::new(TypedError::with_type(f.error_type, f.error_message))
}

/// The driver's retry as the SDK's configuration: its attempts, delays, full jitter.
pub fn retry_config(retry: &StepRetry) -> RetryStrategyConfig {
    RetryStrategyConfig::builder()
        .max_attempts(retry.retries + 1)
        .initial_delay(Duration::from_secs(retry.first_delay_seconds))
        .max_delay(Duration::from_secs(retry.max_delay_seconds))
        .backoff_rate(retry.backoff_rate)
        .jitter(JitterStrategy::Full)
        .build()
}

/// A failed gateway operation's recorded error, or `Err` for an engine failure (a suspension,
/// a replay mismatch), which goes up untouched.
fn recorded(e: OperationError) -> Result<GatewayFailure, OperationError> {
    let from_step = matches!(
        e.kind(),
        OperationErrorKind::Step(_)
            | OperationErrorKind::WaitForCondition(_)
            | OperationErrorKind::ChildContext(_)
    );
    match e.wire() {
        Some(w) if from_step => Ok(FunctionError {
            error_type: w.error_type().unwrap_or("StepError").to_owned(),
            error_message: w.error_message().unwrap_or_default().to_owned(),
        }),
        _ => Err(e),
    }
}

pub async fn checkpoint(
    ctx: &DurableContext,
    name: &str,
    value: &Value,
) -> Result<Value, OperationError> {
    let value = value.clone();
    ctx.step(move |_| async move { Ok(value) }).name(name).await
}

pub async fn call(
    ctx: &DurableContext,
    gateway: &GatewayClient,
    name: &str,
    request: &ActionRequest,
    retry: &StepRetry,
) -> Result<Result<ActionResponse, GatewayFailure>, OperationError> {
    let (gateway, text) = (gateway.clone(), request.to_json());
    let result = ctx
        .step(move |_| async move { gateway.invoke(text).await.map_err(typed) })
        .name(name)
        .retry_strategy_config(retry_config(retry))
        .await;
    match result {
        Ok(text) => Ok(read_reply(&text)),
        Err(e) => recorded(e).map(Err),
    }
}

pub async fn wait_for_state(
    ctx: &DurableContext,
    gateway: &GatewayClient,
    name: &str,
    poll: &StatePoll,
) -> Result<PollEnd, OperationError> {
    let gateway = Arc::new(gateway.clone());
    let requests = Arc::new([
        serde_json::to_value(&poll.sweep).unwrap_or(Value::Null),
        serde_json::to_value(&poll.status).unwrap_or(Value::Null),
        serde_json::to_value(&poll.pending).unwrap_or(Value::Null),
    ]);
    let initial = PollState {
        status: String::new(),
        await_pending: false,
    };
    let scheduled = poll.scheduled_sweep;
    let result = ctx
        .wait_for_condition(
            move |_, last: PollState| {
                let (gateway, requests) = (gateway.clone(), requests.clone());
                async move {
                    if calls::sweeps_first(scheduled, &last.status) {
                        gateway.send(&requests[0]).await.map_err(typed)?;
                    }
                    let status = gateway
                        .send(&requests[1])
                        .await
                        .map_err(typed)?
                        .execution_status
                        .unwrap_or_default();
                    let await_pending = status == ExecutionStatus::WaitingExternal.as_str()
                        && gateway
                            .send(&requests[2])
                            .await
                            .map_err(typed)?
                            .await_identity
                            .is_some();
                    Ok(PollState {
                        status,
                        await_pending,
                    })
                }
            },
            initial,
        )
        .name(name)
        // The ladder without jitter (the delay is checkpointed with the retry, so a jittered
        // one would replay too; the fixed ladder is what both backends share).
        .wait_strategy_fn(
            |state: PollState, attempt| match policy::decide(&state, attempt) {
                PollDecision::Settled => WaitDecision::complete(),
                PollDecision::Again(s) => WaitDecision::continue_with(Duration::from_secs(s)),
                PollDecision::Exhausted => {
                    WaitDecision::exhausted(format!("{attempt} checks of TPF's status"))
                }
            },
        )
        .await;
    match result {
        Ok(state) => Ok(PollEnd::Settled(state.status)),
        Err(e) if is_exhausted(&e) => Ok(PollEnd::Exhausted),
        Err(e) => recorded(e).map(PollEnd::CheckFailed),
    }
}

fn is_exhausted(e: &OperationError) -> bool {
    matches!(
        e.kind(),
        OperationErrorKind::WaitForCondition(w)
            if matches!(w.kind(), WaitForConditionErrorKind::MaxChecksExceeded(_))
    )
}

pub async fn await_callback(
    ctx: &DurableContext,
    gateway: &GatewayClient,
    name: &str,
    registration: &Registration,
    timeout_seconds: u64,
) -> Result<CallbackEnd, OperationError> {
    let (gateway, registration) = (gateway.clone(), registration.clone());
    let execution_arn = ctx.execution_arn().to_owned();
    let result = ctx
        .wait_for_callback::<Value, _, _>(move |_, callback_id| async move {
            let request = registration
                .request(&execution_arn, &callback_id)
                .map_err(|e| typed(FunctionError::from(&e)))?;
            gateway.invoke(request.to_json()).await.map_err(typed)?;
            Ok(())
        })
        .name(name)
        .timeout(Duration::from_secs(timeout_seconds.max(1)))
        .submitter_retry_config(retry_config(&policy::TPF_STEP))
        .await;
    match result {
        Ok(signal) => Ok(CallbackEnd::Signal(signal)),
        Err(e) => match e.kind() {
            OperationErrorKind::Callback(c) => match c.kind() {
                CallbackErrorKind::TimedOut { .. }
                | CallbackErrorKind::HeartbeatTimedOut { .. } => Ok(CallbackEnd::TimedOut),
                CallbackErrorKind::ExternalFailure { .. } => Ok(CallbackEnd::Failed {
                    error: e
                        .wire()
                        .and_then(|w| w.error_type())
                        .unwrap_or_default()
                        .to_owned(),
                }),
                _ => Err(e),
            },
            // The submitter (REGISTER_CALLBACK) failed after its retries.
            OperationErrorKind::ChildContext(_) => recorded(e).map(CallbackEnd::NotRegistered),
            _ => Err(e),
        },
    }
}
