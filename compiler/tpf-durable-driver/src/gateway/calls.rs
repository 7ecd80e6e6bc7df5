//! What the gateway driver asks its engine for, as values both engines checkpoint: a gateway
//! reply, the poll's two requests, the registration a callback's submitter sends, how a park
//! ended.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, DriverCheckpoint, ExecutionCheckpoint, FunctionError, Mapper,
    ProviderCallback,
};
use tpf_wire::java_error::JavaError;

/// A gateway call that did not answer a response: the function error Lambda's Invoke reports
/// (`errorType` = the Java class), or the transport's error (`errorType` = the AWS error code).
pub type GatewayFailure = FunctionError;

/// The gateway's answer as a step checkpoints it (the response's JSON text, as the gateway
/// wrote it), read back as TPF's caller reads it: a response TPF's caller would refuse is a
/// failure of the call.
pub fn read_reply(checkpointed: &str) -> Result<ActionResponse, GatewayFailure> {
    ActionResponse::read(checkpointed).map_err(|e| FunctionError::from(&e))
}

/// The requests of one check of TPF's condition: SWEEP, then STATUS, and, when the status is
/// WAITING_EXTERNAL, QUERY_PENDING_AWAIT (is an await still open, or was it completed and the
/// execution not yet resumed?).
#[derive(Debug, Clone, PartialEq)]
pub struct StatePoll {
    pub sweep: ActionRequest,
    pub status: ActionRequest,
    pub pending: ActionRequest,
    /// The deployment sweeps TPF on a schedule: see [`sweeps_first`].
    pub scheduled_sweep: bool,
}

/// Whether a check sends SWEEP before STATUS, given the status the condition's last check read
/// (empty at its first check). TPF's driver always sweeps. With the deployment's scheduled
/// sweep (`scheduled`), a check sweeps only at the condition's start (the generation's, or
/// after a park) and while TPF's record waits to retry, so a retry is queued when due, as
/// TPF's driver queues it; the schedule sweeps for everything else.
pub fn sweeps_first(scheduled: bool, last_status: &str) -> bool {
    !scheduled
        || last_status.is_empty()
        || last_status == tpf_wire::records::ExecutionStatus::WaitRetry.as_str()
}

/// What one check read, the condition's carried state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PollState {
    pub status: String,
    /// WAITING_EXTERNAL only: QUERY_PENDING_AWAIT named an open await.
    #[serde(default)]
    pub await_pending: bool,
}

/// How a condition ended.
#[derive(Debug, Clone, PartialEq)]
pub enum PollEnd {
    /// A status the driver routes (terminal, or WAITING_EXTERNAL).
    Settled(String),
    /// The wait strategy's checks ran out while TPF's execution stayed in progress.
    Exhausted,
    /// A check's SWEEP or STATUS failed (a condition does not retry its check).
    CheckFailed(GatewayFailure),
}

/// What a callback's submitter registers with REGISTER_CALLBACK: the driver's checkpoint and
/// the driver execution's name; the engine adds the execution's ARN and the callback id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    pub tenant_id: String,
    pub execution_id: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub generation: i64,
    pub provider_execution_name: String,
}

impl Registration {
    pub fn new(checkpoint: &DriverCheckpoint, provider_execution_name: &str) -> Self {
        let e = &checkpoint.execution;
        Self {
            tenant_id: e.tenant_id.clone(),
            execution_id: e.execution_id.clone(),
            pipeline_id: e.pipeline_id.clone(),
            contract_version: e.contract_version.clone(),
            release_version: e.release_version.clone(),
            generation: checkpoint.generation,
            provider_execution_name: provider_execution_name.to_owned(),
        }
    }

    /// TPF's `register(checkpoint, name, arn, callbackId)` request.
    pub fn request(
        &self,
        execution_arn: &str,
        callback_id: &str,
    ) -> Result<ActionRequest, JavaError> {
        let execution = ExecutionCheckpoint::new(
            Some(&self.tenant_id),
            Some(&self.execution_id),
            Some(&self.pipeline_id),
            Some(&self.contract_version),
            Some(&self.release_version),
        )?;
        ActionRequest::register(
            &DriverCheckpoint::new(execution, self.generation)?,
            ProviderCallback {
                execution_name: Some(&self.provider_execution_name),
                execution_arn: Some(execution_arn),
                callback_id: Some(callback_id),
            },
        )
    }
}

/// How a park on TPF's callback ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CallbackEnd {
    /// The wake-up completed it with this result (TPF's `AwsDurableCallbackSignal`).
    Signal(Value),
    /// Someone failed the callback (`SendDurableExecutionCallbackFailure`).
    Failed { error: String },
    /// The park's timeout passed first.
    TimedOut,
    /// The submitter's REGISTER_CALLBACK failed after its retries: nobody can wake this park.
    NotRegistered(GatewayFailure),
}

/// The Java class a failure of the driver's own reading reports (a checkpoint that does not
/// read back as TPF's record).
pub fn unreadable(what: &str, e: &JavaError) -> GatewayFailure {
    FunctionError {
        error_message: format!("{what}: {e}"),
        error_type: e.class.to_owned(),
    }
}

/// `AwsDurableExecutionCheckpoint`'s JSON, read back from the resume step's checkpoint.
pub fn read_checkpoint(value: &Value) -> Result<ExecutionCheckpoint, JavaError> {
    ExecutionCheckpoint::read(value, Mapper::Durable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registration_builds_tpfs_request_and_refuses_a_blank_callback() {
        let c = DriverCheckpoint::new(
            ExecutionCheckpoint::new(Some("t"), Some("e"), Some("p"), Some("c"), Some("r"))
                .unwrap(),
            2,
        )
        .unwrap();
        let r = Registration::new(&c, "tpf-x");
        let request = r.request("arn:x", "cb-1").unwrap();
        assert_eq!(
            request.to_json(),
            r#"{"operation":"REGISTER_CALLBACK","tenantId":"t","executionId":"e","idempotencyKey":null,"pipelineId":"p","contractVersion":"c","releaseVersion":"r","inputJson":null,"awaitIdentity":null,"providerExecutionName":"tpf-x","providerExecutionArn":"arn:x","providerCallbackId":"cb-1","expectedVersion":null,"reason":null,"generation":2}"#
        );
        assert_eq!(ActionRequest::read(&request.to_json()).unwrap(), request);
        assert_eq!(
            r.request("arn:x", " ").unwrap_err().message,
            "providerCallbackId must not be blank"
        );
    }

    #[test]
    fn a_scheduled_sweep_leaves_only_the_first_check_and_retries_sweeping() {
        for status in ["", "QUEUED", "RUNNING", "WAIT_RETRY", "WAITING_EXTERNAL"] {
            assert!(
                sweeps_first(false, status),
                "TPF's driver sweeps at {status:?}"
            );
        }
        assert!(sweeps_first(true, ""));
        assert!(sweeps_first(true, "WAIT_RETRY"));
        for status in ["QUEUED", "RUNNING", "WAITING_EXTERNAL"] {
            assert!(!sweeps_first(true, status), "{status}");
        }
    }

    #[test]
    fn a_reply_tpfs_caller_refuses_is_a_failure() {
        let ok = r#"{"checkpoint":null,"duplicate":false,"executionStatus":"RUNNING","resultJson":null,"awaitIdentity":null,"awaitCheckpoint":null,"awaitCheckpoints":[],"bindingCreated":false}"#;
        assert_eq!(
            read_reply(ok).unwrap().execution_status.as_deref(),
            Some("RUNNING")
        );
        assert_eq!(
            read_reply(r#"{"awaitCheckpoints":[],"extra":1}"#)
                .unwrap_err()
                .error_type,
            tpf_wire::java_error::class::UNRECOGNIZED_PROPERTY
        );
    }
}
