//! The gateway driver: TPF's own coordinator driver (`AwsDurableCoordinatorHandler`), durable
//! operation for durable operation, with the gaps TPF lists for it closed (`docs/gateway.md`).
//!
//! 1. `resume-tpf-execution` (a replacement generation: the checkpoint from the input, no call)
//!    or `submit-tpf-execution` (SUBMIT, retried as TPF's step is).
//! 2. `wait-for-tpf-state-<n>`: a condition whose every check SWEEPs then reads STATUS (with
//!    the deployment's scheduled sweep, only its first check and one after a `WAIT_RETRY`
//!    does: [`calls::sweeps_first`]), waiting
//!    [`policy::POLL_WAITS_SECONDS`] between checks, until a terminal status or
//!    WAITING_EXTERNAL with an open await (QUERY_PENDING_AWAIT; a completed await TPF has not
//!    resumed yet is polled on, never parked on again).
//! 3. WAITING_EXTERNAL: `await-completion-<n>`, a callback whose submitter is
//!    REGISTER_CALLBACK, with a timeout of the contract's longest await + 1 s, so TPF's await
//!    deadline is applied while parked (the next check SWEEPs). The signal must name the
//!    checkpoint's tenant, execution and generation. Then n + 1, back to 2. A second
//!    WAITING_EXTERNAL in one generation hands over to generation + 1 instead of parking again
//!    (TPF keys a registration by generation, so a second park would collide). A submitter
//!    whose REGISTER_CALLBACK still fails after its retries waits [`REFUSED_WAIT`] (TPF's
//!    ladder at the generation: `host::refused_registration_wait_seconds`), then hands over.
//! 4. SUCCEEDED: `read-tpf-result` (RESULT) → TPF's `AwsDurableExecutionOutput`. FAILED, DLQ,
//!    REMOTE_OUTCOME_UNKNOWN: the driver fails with TPF's text.

pub mod calls;
pub mod policy;

use serde::Serialize;
use serde_json::Value;
use tpf_wire::gateway::host::{
    driver_error, execution_ended_cause, refused_registration_wait_seconds, ExecutionOutput,
    CALLBACK_IDENTITY_MISMATCH_CAUSE, NO_CHECKPOINT_CAUSE, NO_RESULT_CAUSE,
};
use tpf_wire::gateway::names::coordinator;
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{
    ActionRequest, CallbackSignal, DriverCheckpoint, ExecutionCheckpoint, Mapper, Operation,
};
use tpf_wire::records::ExecutionStatus;

use crate::ops::GatewayOps as Ops;
use calls::{CallbackEnd, GatewayFailure, PollEnd, Registration, StatePoll};

/// The errors a gateway driver fails with beyond TPF's driver's own
/// (`tpf_wire::gateway::host::driver_error`).
pub mod fail_error {
    /// The next generation could not be started after every retry.
    pub const HAND_OVER: &str = "TPF.HandOverFailed";
    /// Someone failed the park's callback instead of completing it.
    pub const CALLBACK_FAILED: &str = "TPF.CallbackFailed";
}

/// The durable operation that starts the next generation (TPF's driver never hands over).
pub const HAND_OVER_STEP: &str = "hand-over-tpf-execution";

/// The wait before a generation whose registration failed for good hands over.
pub const REFUSED_WAIT: &str = "wait-before-hand-over";

/// What a gateway driver needs of its release beyond its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayRun {
    /// The contract's longest await timeout, in seconds: a park times out a second after it.
    pub longest_await_seconds: u64,
    /// The deployment sweeps TPF on a schedule (`sweeper.mode = "schedule"`): a condition's
    /// check sweeps only at its first check and after one that read `WAIT_RETRY`
    /// ([`calls::sweeps_first`]).
    pub scheduled_sweep: bool,
}

/// How one generation ended without failing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum GatewayEnd {
    /// TPF's `AwsDurableExecutionOutput`.
    Succeeded(ExecutionOutput),
    /// The execution goes on in the next generation, started under TPF's name.
    HandedOver(HandedOver),
}

/// A generation that handed over: the execution, and the next generation's name and number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedOver {
    pub tenant_id: String,
    pub execution_id: String,
    pub handed_over_to: String,
    pub next_generation: i64,
}

/// A failed generation: the durable execution fails with this error and cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayFailed {
    pub error: String,
    pub cause: String,
}

fn failed(error: &str, cause: impl Into<String>) -> Result<GatewayEnd, GatewayFailed> {
    Err(GatewayFailed {
        error: error.to_owned(),
        cause: cause.into(),
    })
}

/// A gateway failure fails the driver as TPF's driver's exception does: its class, its message.
fn from_gateway(f: GatewayFailure) -> GatewayFailed {
    GatewayFailed {
        error: f.error_type,
        cause: f.error_message,
    }
}

/// Runs one generation, or until the engine stops it (a suspension): the engine runs it again
/// from the start and replays what is checkpointed.
pub async fn drive_gateway<O: Ops>(
    ops: &O,
    run: &GatewayRun,
    input: &ExecutionInput,
) -> Result<Result<GatewayEnd, GatewayFailed>, O::Stop> {
    let checkpoint = match checkpoint(ops, input).await? {
        Ok(c) => c,
        Err(f) => return Ok(Err(f)),
    };
    let driver = match DriverCheckpoint::new(checkpoint.clone(), input.generation) {
        Ok(d) => d,
        Err(e) => return Ok(failed(e.class, e.message)),
    };
    let request = |op| ActionRequest::for_execution(op, &driver);
    let requests = (
        request(Operation::Sweep),
        request(Operation::Status),
        request(Operation::QueryPendingAwait),
    );
    let poll = match requests {
        (Ok(sweep), Ok(status), Ok(pending)) => StatePoll {
            sweep,
            status,
            pending,
            scheduled_sweep: run.scheduled_sweep,
        },
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Ok(failed(e.class, e.message)),
    };
    let registration = Registration::new(&driver, &input.durable_execution_name());
    let mut parked = false;
    let mut round: u64 = 0;
    loop {
        let status = match ops
            .wait_for_state(&coordinator::wait_for_condition(round), &poll)
            .await?
        {
            PollEnd::Settled(s) => s,
            PollEnd::Exhausted => return hand_over(ops, &checkpoint, input).await,
            PollEnd::CheckFailed(f) => return Ok(Err(from_gateway(f))),
        };
        match ExecutionStatus::parse(&status) {
            Some(ExecutionStatus::Succeeded) => return result(ops, &driver).await,
            Some(ExecutionStatus::WaitingExternal) if parked => {
                return hand_over(ops, &checkpoint, input).await
            }
            Some(ExecutionStatus::WaitingExternal) => {}
            _ => {
                return Ok(failed(
                    driver_error::EXECUTION_ENDED,
                    execution_ended_cause(&status),
                ))
            }
        }
        parked = true;
        let timeout = run.longest_await_seconds.saturating_add(1);
        let end = ops
            .await_callback(
                &coordinator::wait_for_callback(round),
                &registration,
                timeout,
            )
            .await?;
        match end {
            CallbackEnd::Signal(v) => {
                if let Err(f) = check_signal(&v, &driver) {
                    return Ok(Err(f));
                }
            }
            // TPF's await deadline passed while parked: the next check SWEEPs, so TPF applies
            // it, then reads the status it left.
            CallbackEnd::TimedOut => {}
            CallbackEnd::Failed { error } => {
                return Ok(failed(fail_error::CALLBACK_FAILED, error));
            }
            // TPF refused the registration after every retry of the submitter (TPF's driver
            // fails here, and nothing replaces it). The next generation registers under its
            // own key, after TPF's ladder's wait at this one, so a registration TPF keeps
            // refusing costs one generation per 300 s at most until TPF's await deadline,
            // applied by the next generation's SWEEP, changes TPF's status.
            CallbackEnd::NotRegistered(_) => {
                let seconds = refused_registration_wait_seconds(input.generation);
                ops.wait(REFUSED_WAIT, seconds).await?;
                return hand_over(ops, &checkpoint, input).await;
            }
        }
        round += 1;
    }
}

/// Step 1: the checkpoint, from the input (a replacement generation) or from SUBMIT.
async fn checkpoint<O: Ops>(
    ops: &O,
    input: &ExecutionInput,
) -> Result<Result<ExecutionCheckpoint, GatewayFailed>, O::Stop> {
    if let Some(id) = &input.resume_execution_id {
        let built = ExecutionCheckpoint::new(
            Some(&input.tenant_id),
            Some(id),
            Some(&input.pipeline_id),
            Some(&input.contract_version),
            Some(&input.release_version),
        );
        let built = match built {
            Ok(c) => c,
            Err(e) => {
                return Ok(Err(GatewayFailed {
                    error: e.class.to_owned(),
                    cause: e.message,
                }))
            }
        };
        let value = serde_json::to_value(&built).unwrap_or(Value::Null);
        let kept = ops.checkpoint(coordinator::RESUME_STEP, &value).await?;
        return Ok(calls::read_checkpoint(&kept).map_err(|e| GatewayFailed {
            error: e.class.to_owned(),
            cause: e.message,
        }));
    }
    let request = match ActionRequest::submit(input) {
        Ok(r) => r,
        Err(e) => {
            return Ok(Err(GatewayFailed {
                error: e.class.to_owned(),
                cause: e.message,
            }))
        }
    };
    Ok(
        match ops
            .gateway(coordinator::SUBMIT_STEP, &request, &policy::TPF_STEP)
            .await?
        {
            Ok(r) => r.checkpoint.ok_or_else(|| GatewayFailed {
                error: driver_error::NO_CHECKPOINT.to_owned(),
                cause: NO_CHECKPOINT_CAUSE.to_owned(),
            }),
            Err(f) => Err(from_gateway(f)),
        },
    )
}

/// The signal must be TPF's `AwsDurableCallbackSignal` for this checkpoint's tenant, execution
/// and generation.
fn check_signal(v: &Value, driver: &DriverCheckpoint) -> Result<(), GatewayFailed> {
    let signal = CallbackSignal::read(v, Mapper::Durable).map_err(|e| GatewayFailed {
        error: e.class.to_owned(),
        cause: e.message,
    })?;
    let e = &driver.execution;
    if signal.tenant_id != e.tenant_id
        || signal.execution_id != e.execution_id
        || signal.generation != driver.generation
    {
        return Err(GatewayFailed {
            error: driver_error::CALLBACK_IDENTITY_MISMATCH.to_owned(),
            cause: CALLBACK_IDENTITY_MISMATCH_CAUSE.to_owned(),
        });
    }
    Ok(())
}

/// Step 4: RESULT, then TPF's output.
async fn result<O: Ops>(
    ops: &O,
    driver: &DriverCheckpoint,
) -> Result<Result<GatewayEnd, GatewayFailed>, O::Stop> {
    let request = match ActionRequest::for_execution(Operation::Result, driver) {
        Ok(r) => r,
        Err(e) => return Ok(failed(e.class, e.message)),
    };
    let reply = ops
        .gateway(coordinator::RESULT_STEP, &request, &policy::TPF_STEP)
        .await?;
    Ok(match reply {
        Ok(r) => match r.result_json {
            Some(result_json) => Ok(GatewayEnd::Succeeded(ExecutionOutput::new(
                &driver.execution,
                driver.generation,
                &result_json,
            ))),
            None => failed(driver_error::NO_RESULT, NO_RESULT_CAUSE),
        },
        Err(f) => Err(from_gateway(f)),
    })
}

/// Starts generation + 1 with TPF's replacement input, under TPF's name, and ends.
async fn hand_over<O: Ops>(
    ops: &O,
    checkpoint: &ExecutionCheckpoint,
    input: &ExecutionInput,
) -> Result<Result<GatewayEnd, GatewayFailed>, O::Stop> {
    let next = ExecutionInput::resume_execution(
        &checkpoint.tenant_id,
        &checkpoint.execution_id,
        input.generation,
        ReleaseIdentity {
            pipeline_id: Some(&checkpoint.pipeline_id),
            contract_version: Some(&checkpoint.contract_version),
            release_version: Some(&checkpoint.release_version),
        },
    );
    let next = match next {
        Ok(n) => n,
        Err(e) => return Ok(failed(e.class, e.message)),
    };
    Ok(match ops.start_generation(HAND_OVER_STEP, &next).await? {
        Ok(()) => Ok(GatewayEnd::HandedOver(HandedOver {
            tenant_id: checkpoint.tenant_id.clone(),
            execution_id: checkpoint.execution_id.clone(),
            handed_over_to: next.durable_execution_name(),
            next_generation: next.generation,
        })),
        Err(e) => failed(fail_error::HAND_OVER, e.message),
    })
}
