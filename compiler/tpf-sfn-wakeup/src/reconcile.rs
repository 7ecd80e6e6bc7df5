//! TPF's reconciler (`AwsDurableReconciliationHandler`, `AwsDurableTerminalReconciler`) as a
//! decision both backends run: a driver execution changed status, and if it ended while TPF's
//! execution still needs a driver, the next generation starts.
//!
//! TPF's host: the driver ran, succeeded or is gone for another reason than an end → nothing;
//! ended or no longer known → its REGISTRATION by provider ARN, TPF's `STATUS` must be
//! `WAITING_EXTERNAL`, the first of `READ_EXECUTION_AWAITS` is bound to the registration's
//! generation, and the replacement starts from the semantic checkpoint. A missing piece fails
//! the event so it is delivered again, as TPF's later reconciler does (its first one dropped
//! the event).
//!
//! Where the project goes beyond TPF's host, which lists these as its own gaps ("recovery
//! before the first registration, and of a non-await execution whose driver is gone"):
//!
//! - a driver that ended before it registered any callback is found by its own start input
//!   (a replacement names its execution in `resumeExecutionId`; generation 1 re-sends its
//!   SUBMIT, which TPF answers with the execution it already admitted for the key);
//! - an execution that is `QUEUED`, `RUNNING` or `WAIT_RETRY` has no await to bind but still
//!   needs a driver: its replacement starts from the execution and the release it ran under.
//!
//! An execution TPF's driver stops on (`SUCCEEDED`, `FAILED`, `DLQ`,
//! `REMOTE_OUTCOME_UNKNOWN`) gets no driver: a re-drive is an operator's.

use serde_json::Value;
use tpf_wire::gateway::binding::{CallbackBinding, CallbackRegistration};
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};
use tpf_wire::gateway::{AwaitIdentity, ExecutionCheckpoint};
use tpf_wire::records::ExecutionStatus;

use crate::provider::DriverState;
use crate::provider::WakeEngine;
use crate::replacement::{replacement, Unresolved};
use crate::view::HostView;

/// The providers' status-change events.
pub mod event {
    /// Lambda durable functions (`source: aws.lambda`).
    pub const DURABLE_DETAIL_TYPE: &str = "Durable Execution Status Change";
    pub const DURABLE_ARN: &str = "durableExecutionArn";
    /// Step Functions (`source: aws.states`).
    pub const SFN_DETAIL_TYPE: &str = "Step Functions Execution Status Change";
    pub const SFN_ARN: &str = "executionArn";
    pub const SFN_STATUS: &str = "status";
    pub const DETAIL: &str = "detail";
    pub const DETAIL_TYPE: &str = "detail-type";
}

/// A driver execution whose status changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    pub engine: WakeEngine,
    pub execution_arn: String,
    /// The status the event reported (Step Functions' events carry it). TPF's reconciler asks
    /// the provider again rather than trusting the event; the adapter does the same and passes
    /// [`reconcile`] the [`DriverState`] it read.
    pub reported_status: Option<String>,
}

/// Reads a status-change event: the ARN of its driver execution, non-blank, or `None` (TPF's
/// handler answers `false` to an event without one).
pub fn status_change(event: &Value) -> Option<StatusChange> {
    let detail = event.get(event::DETAIL)?;
    let text = |key: &str| {
        detail
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !tpf_wire::java_text::is_java_blank(s))
            .map(str::to_owned)
    };
    let kind = event.get(event::DETAIL_TYPE).and_then(Value::as_str);
    if kind == Some(event::SFN_DETAIL_TYPE) {
        return Some(StatusChange {
            engine: WakeEngine::StepFunctions,
            execution_arn: text(event::SFN_ARN)?,
            reported_status: text(event::SFN_STATUS),
        });
    }
    Some(StatusChange {
        engine: WakeEngine::Durable,
        execution_arn: text(event::DURABLE_ARN)?,
        reported_status: None,
    })
}

/// TPF's decision on one ended driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconcile {
    Nothing(Quiet),
    /// Re-send this generation-1 input's SUBMIT (TPF answers a key it admitted with that
    /// execution's checkpoint), then call [`after_resubmit`].
    Resubmit(ExecutionInput),
    /// Put `bind` if there is one (conditioned on its key; an identical row counts as written,
    /// another authority fails the event), then start `start`: a start the provider accepted
    /// or a name that already started ends the event, any other answer retries it.
    Replace {
        bind: Option<CallbackBinding>,
        start: ExecutionInput,
    },
    /// Fail the event so it is delivered again.
    Retry(Missing),
}

/// Why nothing is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quiet {
    DriverRunning,
    DriverSucceeded,
    /// TPF's execution is in a status no driver acts on.
    ExecutionSettled(ExecutionStatus),
}

/// What is not visible yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Missing {
    /// No registration by the provider ARN, and no start input to find the execution by.
    Registration,
    /// The execution waits, and lists no await.
    Await,
    /// The await does not bind to the registration.
    NotBindable,
    /// The replacement cannot start yet.
    Replacement(Unresolved),
}

/// The driver that ended: which TPF execution it drove, in which generation, under which
/// release, and its registration if it made one.
struct Ended<'a> {
    tenant_id: &'a str,
    execution_id: &'a str,
    generation: i64,
    release: ReleaseIdentity<'a>,
    registration: Option<&'a CallbackRegistration>,
}

/// Decides on a driver execution after its status changed; `state` is what the adapter read
/// from the provider.
pub fn reconcile<V: HostView>(
    execution_arn: &str,
    state: DriverState,
    view: &V,
) -> Result<Reconcile, V::Error> {
    match state {
        DriverState::Running => return Ok(Reconcile::Nothing(Quiet::DriverRunning)),
        DriverState::Succeeded => return Ok(Reconcile::Nothing(Quiet::DriverSucceeded)),
        DriverState::Ended | DriverState::NotFound => {}
    }
    if let Some(registration) = view.registration_by_provider_arn(execution_arn)? {
        let e = &registration.checkpoint.execution;
        return decide(
            Ended {
                tenant_id: &e.tenant_id,
                execution_id: &e.execution_id,
                generation: registration.checkpoint.generation,
                release: release_of(e),
                registration: Some(&registration),
            },
            view,
        );
    }
    // Beyond TPF's host: the driver never registered a callback.
    let Some(input) = view.driver_input(execution_arn)? else {
        return Ok(Reconcile::Retry(Missing::Registration));
    };
    let Some(execution_id) = input.resume_execution_id.as_deref() else {
        return Ok(Reconcile::Resubmit(input));
    };
    decide(
        Ended {
            tenant_id: &input.tenant_id,
            execution_id,
            generation: input.generation,
            release: ReleaseIdentity {
                pipeline_id: Some(&input.pipeline_id),
                contract_version: Some(&input.contract_version),
                release_version: Some(&input.release_version),
            },
            registration: None,
        },
        view,
    )
}

/// Continues [`Reconcile::Resubmit`] with the checkpoint SUBMIT answered.
pub fn after_resubmit<V: HostView>(
    checkpoint: &ExecutionCheckpoint,
    input: &ExecutionInput,
    view: &V,
) -> Result<Reconcile, V::Error> {
    decide(
        Ended {
            tenant_id: &checkpoint.tenant_id,
            execution_id: &checkpoint.execution_id,
            generation: input.generation,
            release: release_of(checkpoint),
            registration: None,
        },
        view,
    )
}

fn release_of(e: &ExecutionCheckpoint) -> ReleaseIdentity<'_> {
    ReleaseIdentity {
        pipeline_id: Some(&e.pipeline_id),
        contract_version: Some(&e.contract_version),
        release_version: Some(&e.release_version),
    }
}

fn decide<V: HostView>(ended: Ended<'_>, view: &V) -> Result<Reconcile, V::Error> {
    let status = view.status(ended.tenant_id, ended.execution_id, ended.generation)?;
    match status {
        ExecutionStatus::WaitingExternal => replace_awaiting(ended, view),
        // Beyond TPF's host: no await to bind, but the execution still needs its driver.
        ExecutionStatus::Queued | ExecutionStatus::Running | ExecutionStatus::WaitRetry => {
            Ok(start(
                None,
                ExecutionInput::resume_execution(
                    ended.tenant_id,
                    ended.execution_id,
                    ended.generation,
                    ended.release,
                ),
            ))
        }
        settled => Ok(Reconcile::Nothing(Quiet::ExecutionSettled(settled))),
    }
}

fn start(bind: Option<CallbackBinding>, input: Result<ExecutionInput, impl Sized>) -> Reconcile {
    match input {
        Ok(start) => Reconcile::Replace { bind, start },
        Err(_) => Reconcile::Retry(Missing::Replacement(Unresolved::InputRefused)),
    }
}

fn replace_awaiting<V: HostView>(ended: Ended<'_>, view: &V) -> Result<Reconcile, V::Error> {
    let awaits = view.execution_awaits(ended.tenant_id, ended.execution_id, ended.generation)?;
    let Some(first) = awaits.first() else {
        return Ok(Reconcile::Retry(Missing::Await));
    };
    let Ok(identity) = AwaitIdentity::new(
        Some(&first.tenant_id),
        Some(&first.execution_id),
        Some(&first.interaction_id),
        Some(&first.correlation_id),
        ended.generation,
    ) else {
        return Ok(Reconcile::Retry(Missing::NotBindable));
    };
    let Some(registration) = ended.registration else {
        // Beyond TPF's host: nothing to bind before a registration; the replacement registers
        // and binds its own generation when it parks.
        let release = ReleaseIdentity {
            pipeline_id: Some(&first.pipeline_id),
            contract_version: Some(&first.contract_version),
            release_version: Some(&first.release_version),
        };
        return Ok(start(None, ExecutionInput::resume(&identity, release)));
    };
    let Ok(binding) = registration.bind(&identity) else {
        return Ok(Reconcile::Retry(Missing::NotBindable));
    };
    Ok(match replacement(&binding, view)? {
        Ok(input) => Reconcile::Replace {
            bind: Some(binding),
            start: input,
        },
        Err(why) => Reconcile::Retry(Missing::Replacement(why)),
    })
}
