//! The driver's operations on AWS's durable execution SDK: the only module that names it.
//!
//! - `register` and `hand_over`: steps, retried by the SDK with suspended pauses; a write that
//!   still fails is the driver's `DRIVER_WRITE` verdict, not an engine failure.
//! - `call`: a step that never fails: its body classifies the delivery into a `CallOutcome`
//!   (stamped with the step's clock), and the driver does the retries, so every retry is its
//!   own named operation, as in the Step Functions driver.
//! - `wait`: a durable wait.
//! - `park`: `wait_for_callback`, whose submitter writes the token row with the callback id as
//!   `task_token`, so the bridge can complete it; its timeout is TPF's `wakeInSeconds`.
//!
//! An SDK error other than those verdicts is `Stop`: the handler fails, and the service retries
//! the invocation or fails the execution.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use aws_durable_execution_sdk::{
    CallbackErrorKind, DurableContext, OperationError, OperationErrorKind, RetryDecision,
    StepErrorKind,
};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::InvocationType;
use serde_json::Value;
use tpf_durable_driver::gateway::calls::{
    CallbackEnd, GatewayFailure, PollEnd, Registration, StatePoll,
};
use tpf_durable_driver::gateway::policy::StepRetry;
use tpf_durable_driver::ops::{ActionCall, GenerationRow, ParkRequest, WriteFailed};
use tpf_durable_driver::{CallOutcome, DriverInput, GatewayOps, Ops, Wake};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, ActionResponse};
use tpf_wire::wakeup::{self, attr};

use super::{gateway, Driver};

/// What an Action API v1 call answers in a function whose spec binds the gateway (never
/// reached: such a function runs the gateway driver, which makes no v1 call).
const NO_ACTION_CLIENT: &str =
    "this function's spec binds TPF's gateway: it has no Action API client";

/// What a gateway call answers in a function whose spec binds the Action API v1 (never
/// reached: such a function runs the v1 loop, which makes no gateway call).
fn no_gateway() -> GatewayFailure {
    GatewayFailure {
        error_type: "TPF_SFN.NoGateway".to_owned(),
        error_message: "this function's spec binds the Action API v1: it has no gateway client"
            .to_owned(),
    }
}

/// Attempts of a row write or a hand-over before the driver's verdict.
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

fn never_retry(_: &aws_durable_execution_sdk::StepError, _: u32) -> RetryDecision {
    RetryDecision::Stop
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

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// The live-generation row: the same attributes the Step Functions driver writes, with the
/// durable execution's ARN and the function version's ARN in place of the machine's.
pub fn driver_row(
    row: &GenerationRow,
    execution_arn: &str,
    function_arn: &str,
) -> HashMap<String, AttributeValue> {
    HashMap::from([
        (
            wakeup::PK.to_owned(),
            s(wakeup::pk(&row.tenant_id, &row.execution_id)),
        ),
        (wakeup::SK.to_owned(), s(wakeup::DRIVER_ROW)),
        (attr::EXECUTION_ARN.to_owned(), s(execution_arn)),
        (attr::STATE_MACHINE_ARN.to_owned(), s(function_arn)),
        (attr::LINEAGE.to_owned(), s(&row.lineage)),
        (attr::GENERATION.to_owned(), n(row.generation)),
        (attr::RELEASE_VERSION.to_owned(), s(&row.release_version)),
    ])
}

/// The parked-token row: the callback id is the token the bridge completes.
pub fn token_row(
    park: &ParkRequest,
    callback_id: &str,
    execution_arn: &str,
) -> HashMap<String, AttributeValue> {
    let mut item = HashMap::from([
        (
            wakeup::PK.to_owned(),
            s(wakeup::pk(&park.tenant_id, &park.execution_id)),
        ),
        (wakeup::SK.to_owned(), s(wakeup::WAKEUP_ROW)),
        (attr::TASK_TOKEN.to_owned(), s(callback_id)),
        (attr::EXECUTION_ARN.to_owned(), s(execution_arn)),
        (attr::UNIT_ID.to_owned(), s(&park.unit_id)),
        (attr::TPF_VERSION.to_owned(), n(park.tpf_version)),
        (
            attr::EXPIRES_AT.to_owned(),
            n(park.expires_at_epoch_seconds),
        ),
    ]);
    if let Some(step) = &park.step_name {
        item.insert(attr::STEP_NAME.to_owned(), s(step));
    }
    item
}

async fn put(
    ddb: &aws_sdk_dynamodb::Client,
    table: &str,
    item: HashMap<String, AttributeValue>,
) -> Result<(), aws_durable_execution_sdk::BoxError> {
    ddb.put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .map_err(|e| {
            format!(
                "PutItem on {table}: {}",
                aws_sdk_dynamodb::error::DisplayErrorContext(&e)
            )
        })?;
    Ok(())
}

impl Ops for SdkOps {
    type Stop = OperationError;

    async fn register(
        &self,
        name: &str,
        row: &GenerationRow,
    ) -> Result<Result<(), WriteFailed>, OperationError> {
        let driver = self.driver.clone();
        let item = driver_row(row, self.ctx.execution_arn(), &self.function_arn());
        let result =
            self.ctx
                .step(move |_| async move {
                    put(&driver.ddb, &driver.spec.wakeup.table_name, item).await
                })
                .name(name)
                .retry_strategy(write_retry)
                .await;
        match result {
            Ok(()) => Ok(Ok(())),
            Err(e) => step_verdict(e).map(Err),
        }
    }

    async fn call(&self, name: &str, call: &ActionCall) -> Result<CallOutcome, OperationError> {
        let driver = self.driver.clone();
        let call = call.clone();
        self.ctx
            .step(move |_| async move {
                Ok(match &driver.action {
                    Some(action) => action.call(&call).await,
                    None => CallOutcome::Transport {
                        message: NO_ACTION_CLIENT.to_owned(),
                    },
                })
            })
            .name(name)
            .retry_strategy(never_retry)
            .await
    }

    async fn wait(&self, name: &str, seconds: u64) -> Result<(), OperationError> {
        self.ctx
            .wait(Duration::from_secs(seconds.max(1)))
            .name(name)
            .await
    }

    async fn park(&self, name: &str, park: &ParkRequest) -> Result<Wake, OperationError> {
        let driver = self.driver.clone();
        let park_row = park.clone();
        let execution_arn = self.ctx.execution_arn().to_owned();
        let result = self
            .ctx
            .wait_for_callback::<Value, _, _>(move |_, callback_id| async move {
                let item = token_row(&park_row, &callback_id, &execution_arn);
                put(&driver.ddb, &driver.spec.wakeup.table_name, item).await
            })
            .name(name)
            .timeout(Duration::from_secs(park.timeout_seconds.max(1)))
            .submitter_retry(write_retry)
            .await;
        match result {
            Ok(payload) => Ok(Wake::Woken { payload }),
            Err(e) => match e.kind() {
                OperationErrorKind::Callback(c)
                    if matches!(
                        c.kind(),
                        CallbackErrorKind::TimedOut { .. }
                            | CallbackErrorKind::HeartbeatTimedOut { .. }
                    ) =>
                {
                    Ok(Wake::TimedOut)
                }
                // The submitter (the token row's write) failed after its retries.
                OperationErrorKind::ChildContext(_) => Ok(Wake::NotRegistered {
                    message: format!("{e:#}"),
                }),
                _ => Err(e),
            },
        }
    }

    async fn hand_over(
        &self,
        name: &str,
        next: &DriverInput,
    ) -> Result<Result<(), WriteFailed>, OperationError> {
        let payload = serde_json::to_string(next).unwrap_or_default();
        self.start_step(name, next.execution_name(), payload).await
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
        match &self.driver.gateway {
            Some(g) => gateway::call(&self.ctx, g, name, request, retry).await,
            None => Ok(Err(no_gateway())),
        }
    }

    async fn wait_for_state(
        &self,
        name: &str,
        poll: &StatePoll,
    ) -> Result<PollEnd, OperationError> {
        match &self.driver.gateway {
            Some(g) => gateway::wait_for_state(&self.ctx, g, name, poll).await,
            None => Ok(PollEnd::CheckFailed(no_gateway())),
        }
    }

    async fn await_callback(
        &self,
        name: &str,
        registration: &Registration,
        timeout_seconds: u64,
    ) -> Result<CallbackEnd, OperationError> {
        match &self.driver.gateway {
            Some(g) => {
                gateway::await_callback(&self.ctx, g, name, registration, timeout_seconds).await
            }
            None => Ok(CallbackEnd::NotRegistered(no_gateway())),
        }
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

    fn text(item: &HashMap<String, AttributeValue>, k: &str) -> String {
        match item.get(k) {
            Some(AttributeValue::S(v)) | Some(AttributeValue::N(v)) => v.clone(),
            other => panic!("{k}: {other:?}"),
        }
    }

    #[test]
    fn the_rows_carry_the_wire_attributes_the_bridge_reads() {
        let row = GenerationRow {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            lineage: "e-r4".into(),
            generation: 2,
            release_version: "r1".into(),
        };
        let d = driver_row(&row, "exec-arn", "fn-arn:3");
        assert_eq!(text(&d, wakeup::PK), "t#e");
        assert_eq!(text(&d, wakeup::SK), wakeup::DRIVER_ROW);
        assert_eq!(text(&d, attr::EXECUTION_ARN), "exec-arn");
        assert_eq!(text(&d, attr::STATE_MACHINE_ARN), "fn-arn:3");
        assert_eq!(text(&d, attr::GENERATION), "2");

        let park = ParkRequest {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            unit_id: "u1".into(),
            step_name: None,
            tpf_version: 5,
            expires_at_epoch_seconds: 99,
            timeout_seconds: 10,
        };
        let t = token_row(&park, "cb-1", "exec-arn");
        assert_eq!(text(&t, wakeup::SK), wakeup::WAKEUP_ROW);
        assert_eq!(text(&t, attr::TASK_TOKEN), "cb-1");
        assert_eq!(text(&t, attr::UNIT_ID), "u1");
        assert_eq!(text(&t, attr::TPF_VERSION), "5");
        assert!(!t.contains_key(attr::STEP_NAME));
        let t = token_row(
            &ParkRequest {
                step_name: Some("Await".into()),
                ..park
            },
            "cb-1",
            "exec-arn",
        );
        assert_eq!(text(&t, attr::STEP_NAME), "Await");
    }

    #[test]
    fn writes_are_retried_a_bounded_number_of_times() {
        let e = aws_durable_execution_sdk::OperationError::__test_error();
        let OperationErrorKind::Step(step) = e.kind() else {
            panic!("a step error");
        };
        assert!(matches!(write_retry(step, 1), RetryDecision::Retry { .. }));
        assert_eq!(write_retry(step, WRITE_ATTEMPTS), RetryDecision::Stop);
        assert_eq!(never_retry(step, 1), RetryDecision::Stop);
        assert!(step_verdict(e).is_ok());
    }
}
