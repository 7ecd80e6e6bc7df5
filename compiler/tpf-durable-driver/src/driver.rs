//! The driver loop. It mirrors the Step Functions driver state for state: what differs is only
//! how the engine sleeps, parks and hands over.

use serde::{Deserialize, Serialize};
use tpf_wire::action::{
    code, task_error, DriverInfo, ProcessWorkItemRequest, ProcessWorkItemResponse,
};
use tpf_wire::records::ExecutionStatus;

use crate::names;
use crate::ops::{ActionCall, CallOutcome, GenerationRow, Ops, ParkRequest, Wake};
use crate::spec::{DriverInput, DurableSpec};

/// The errors a durable driver execution fails with: the same names the Step Functions
/// driver's Fail states use, so alarms and runbooks match either backend.
pub mod fail_error {
    use tpf_wire::action::{driver_error, task_error};

    pub const EXECUTION_FAILED: &str = driver_error::EXECUTION_FAILED;
    pub const REMOTE_OUTCOME_UNKNOWN: &str = driver_error::REMOTE_OUTCOME_UNKNOWN;
    pub const RELEASE_IDENTITY_MISMATCH: &str = task_error::RELEASE_IDENTITY_MISMATCH;
    pub const EXECUTION_NOT_FOUND: &str = task_error::EXECUTION_NOT_FOUND;
    pub const UNEXPECTED_OUTCOME: &str = driver_error::UNEXPECTED_OUTCOME;
    pub const TRANSPORT: &str = task_error::TRANSPORT;
    /// The live-generation row or the hand-over could not be written after every retry.
    pub const DRIVER_WRITE: &str = "TPF.DriverWriteFailed";
}

/// How one generation ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "end")]
pub enum End {
    /// TPF recorded the execution as SUCCEEDED.
    Succeeded,
    /// The execution's work goes on in the next generation.
    HandedOver { next: String },
    /// A Fail: TPF's FAILED/DLQ, a refusal, or an outcome this driver does not route.
    Failed { error: String, cause: String },
}

fn failed(error: &str, cause: impl Into<String>) -> End {
    End::Failed {
        error: error.to_string(),
        cause: cause.into(),
    }
}

/// Seconds from `at_ms` until an RFC 3339 instant, at least one (a durable wait's minimum).
fn seconds_until(at_ms: i64, due: &str) -> Option<u64> {
    let due_ms = tpf_wire::action::parse_rfc3339_ms(due)?;
    let ms = (due_ms - at_ms).max(0);
    Some(((ms + 999) / 1000).max(1) as u64)
}

/// A late-park back-off: the unit it is for and its current wait.
#[derive(Debug, Clone, PartialEq)]
struct Backoff {
    unit_id: String,
    seconds: u64,
}

/// Runs one generation to its end, or until the engine stops it (a suspension): the engine runs
/// it again from the start and replays what is checkpointed.
pub async fn drive<O: Ops>(
    ops: &O,
    spec: &DurableSpec,
    input: &DriverInput,
) -> Result<End, O::Stop> {
    let row = GenerationRow {
        tenant_id: input.tenant_id.clone(),
        execution_id: input.execution_id.clone(),
        lineage: input.lineage.clone(),
        generation: input.generation,
        release_version: spec.identity.release_version.clone(),
    };
    if let Err(e) = ops.register(names::REGISTER, &row).await? {
        return Ok(failed(fail_error::DRIVER_WRITE, e.message));
    }
    let mut backoff: Option<Backoff> = None;
    let mut iteration: u64 = 0;
    loop {
        let (at_ms, answer) = match ask(ops, spec, input, iteration).await? {
            Ok(a) => a,
            Err(end) => return Ok(end),
        };
        iteration += 1;
        let status = answer.status;
        let parked = answer.await_.as_ref();
        match status {
            ExecutionStatus::Succeeded => return Ok(End::Succeeded),
            ExecutionStatus::Failed | ExecutionStatus::Dlq => {
                return Ok(failed(
                    fail_error::EXECUTION_FAILED,
                    answer.error_code.clone().unwrap_or_default(),
                ))
            }
            // As TPF's own AWS durable driver does: stop. Nothing retries this status; the
            // operator's re-drive with allowFailed queues it again, and the sweeper starts a
            // new driver for it.
            ExecutionStatus::RemoteOutcomeUnknown => {
                return Ok(failed(
                    fail_error::REMOTE_OUTCOME_UNKNOWN,
                    answer.error_code.clone().unwrap_or_default(),
                ))
            }
            _ => {}
        }
        if iteration >= spec.max_iterations {
            // This generation spent its budget: make the next generation's first call due.
            match status {
                ExecutionStatus::WaitRetry | ExecutionStatus::Queued => {
                    if let Some(s) = answer
                        .next_due_at
                        .as_deref()
                        .and_then(|d| seconds_until(at_ms, d))
                    {
                        ops.wait(names::WAIT_DUE, s).await?;
                    }
                }
                ExecutionStatus::Running => {
                    ops.wait(names::WAIT_LEASE, spec.wakeup.lease_wait_seconds)
                        .await?
                }
                _ => {}
            }
            return hand_over(ops, input).await;
        }
        match (status, parked) {
            (ExecutionStatus::WaitingExternal, Some(aw)) if aw.wake_in_seconds <= 1 => {
                // TPF still parks this execution although its deadline passed: re-ask at a
                // doubling pace, never in a tight loop; a new await unit starts over.
                let seconds = match &backoff {
                    Some(b)
                        if b.unit_id == aw.unit_id
                            && b.seconds <= spec.wakeup.late_recheck_max_seconds / 2 =>
                    {
                        b.seconds * 2
                    }
                    Some(b) if b.unit_id == aw.unit_id => spec.wakeup.late_recheck_max_seconds,
                    _ => spec.wakeup.late_recheck_seconds,
                };
                backoff = Some(Backoff {
                    unit_id: aw.unit_id.clone(),
                    seconds,
                });
                let park = park_request(input, &answer, seconds);
                if let Wake::NotRegistered { .. } = ops.park(names::LATE, &park).await? {
                    ops.wait(names::RECHECK, spec.wakeup.recheck_seconds)
                        .await?;
                }
            }
            (ExecutionStatus::WaitingExternal, Some(aw)) => {
                let timeout = u64::try_from(aw.wake_in_seconds).unwrap_or(1).max(1);
                let park = park_request(input, &answer, timeout);
                let name = names::park(aw.step_name.as_deref());
                if let Wake::NotRegistered { .. } = ops.park(&name, &park).await? {
                    ops.wait(names::RECHECK, spec.wakeup.recheck_seconds)
                        .await?;
                }
            }
            (ExecutionStatus::Running, _) => {
                ops.wait(names::WAIT_LEASE, spec.wakeup.lease_wait_seconds)
                    .await?
            }
            (ExecutionStatus::WaitRetry | ExecutionStatus::Queued, _) => {
                match answer.next_due_at.as_deref().and_then(|d| seconds_until(at_ms, d)) {
                    Some(s) => ops.wait(names::WAIT_DUE, s).await?,
                    None => {
                        return Ok(failed(
                            fail_error::UNEXPECTED_OUTCOME,
                            format!("process-work-item returned {status} without a nextDueAt this driver can wait for"),
                        ))
                    }
                }
            }
            _ => {
                return Ok(failed(
                    fail_error::UNEXPECTED_OUTCOME,
                    format!(
                        "process-work-item returned {status}, which this driver does not route"
                    ),
                ))
            }
        }
    }
}

/// One call with its transport retries: the same key on every delivery.
async fn ask<O: Ops>(
    ops: &O,
    spec: &DurableSpec,
    input: &DriverInput,
    iteration: u64,
) -> Result<Result<(i64, ProcessWorkItemResponse), End>, O::Stop> {
    let key = input.idempotency_key(iteration);
    let mut request = ProcessWorkItemRequest::new(&spec.identity, Some(&key));
    request.driver = Some(DriverInfo {
        execution_arn: None,
        lineage: Some(input.lineage.clone()),
        generation: Some(input.generation),
        iteration: Some(iteration),
    });
    let call = ActionCall {
        tenant_id: input.tenant_id.clone(),
        execution_id: input.execution_id.clone(),
        request,
    };
    let mut attempt = 0;
    loop {
        let name = if attempt == 0 {
            names::ask(iteration)
        } else {
            names::transport_retry(iteration, attempt)
        };
        match ops.call(&name, &call).await? {
            CallOutcome::Answer { at_ms, response } => return Ok(Ok((at_ms, *response))),
            CallOutcome::Refused { code: c, message } => {
                let error = match c.as_str() {
                    code::RELEASE_IDENTITY_MISMATCH => task_error::RELEASE_IDENTITY_MISMATCH,
                    code::EXECUTION_NOT_FOUND => task_error::EXECUTION_NOT_FOUND,
                    _ => fail_error::UNEXPECTED_OUTCOME,
                };
                return Ok(Err(failed(error, message)));
            }
            CallOutcome::Transport { message } => {
                if attempt >= spec.transport_retry.max_attempts {
                    return Ok(Err(failed(fail_error::TRANSPORT, message)));
                }
                attempt += 1;
                ops.wait(
                    &format!("{} (pause)", names::transport_retry(iteration, attempt)),
                    spec.transport_retry.delay_seconds(attempt),
                )
                .await?;
            }
        }
    }
}

fn park_request(
    input: &DriverInput,
    answer: &ProcessWorkItemResponse,
    timeout_seconds: u64,
) -> ParkRequest {
    let aw = answer.await_.as_ref();
    ParkRequest {
        tenant_id: input.tenant_id.clone(),
        execution_id: input.execution_id.clone(),
        unit_id: aw.map(|a| a.unit_id.clone()).unwrap_or_default(),
        step_name: aw.and_then(|a| a.step_name.clone()),
        tpf_version: answer.version,
        expires_at_epoch_seconds: aw.map_or(0, |a| a.expires_at_epoch_seconds),
        timeout_seconds,
    }
}

async fn hand_over<O: Ops>(ops: &O, input: &DriverInput) -> Result<End, O::Stop> {
    let next = input.next();
    Ok(match ops.hand_over(names::HAND_OVER, &next).await? {
        Ok(()) => End::HandedOver {
            next: next.execution_name(),
        },
        Err(e) => failed(fail_error::DRIVER_WRITE, e.message),
    })
}
