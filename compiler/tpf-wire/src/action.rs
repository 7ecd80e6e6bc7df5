//! TPF Action API v1 (`docs/action-api.md`): `process-work-item` and `sweep-once`, the two
//! single-shot actions the compiled drivers call.
//!
//! Responses are plain serde structs whose `Option`s serialise as `null`, so every documented
//! key is always present: the driver's `ResultSelector` reads fixed keys and a missing one would
//! be an uncatchable `States.Runtime` failure.

use std::fmt;

use chrono::{DateTime, SecondsFormat};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::identity::Identity;
use crate::records::ExecutionStatus;

/// Where the actions live, below the action host's base URL.
pub mod path {
    /// Common prefix of every action.
    pub const PREFIX: &str = "/tpf/actions/v1";
    /// Per-execution action: `{PREFIX}/tenants/{t}/executions/{id}/process-work-item`.
    pub const PROCESS_WORK_ITEM: &str = "process-work-item";
    /// `{PREFIX}/sweep-once`.
    pub const SWEEP_ONCE: &str = "sweep-once";
}

/// The envelope a driver sends when the call does not go over HTTP: a TPF action Lambda's
/// payload, and the queue binding's message body (which adds the task token the relay answers).
pub mod envelope {
    pub const ACTION: &str = "action";
    pub const TENANT_ID: &str = "tenantId";
    pub const EXECUTION_ID: &str = "executionId";
    pub const TASK_TOKEN: &str = "taskToken";
    pub const REQUEST: &str = "request";
}

/// The keys of a process-work-item outcome, in the order the response writes them. A driver
/// selects exactly these (and reads its counter from [`ECHO`]), so its view of TPF's answer has
/// one shape whatever the binding.
pub const PROCESS_RESULT_FIELDS: &[&str] = &[
    field::STATUS,
    field::VERSION,
    field::CURRENT_STEP_INDEX,
    field::ATTEMPT,
    field::NEXT_DUE_AT,
    field::AWAIT,
    field::ERROR_CODE,
    field::CLAIMED,
];

/// The outcome's field names.
pub mod field {
    pub const STATUS: &str = "status";
    pub const VERSION: &str = "version";
    pub const CURRENT_STEP_INDEX: &str = "currentStepIndex";
    pub const ATTEMPT: &str = "attempt";
    pub const NEXT_DUE_AT: &str = "nextDueAt";
    pub const AWAIT: &str = "await";
    pub const ERROR_CODE: &str = "errorCode";
    pub const CLAIMED: &str = "claimed";
    /// sweep-once: the awaits it timed out, and the due executions.
    pub const TIMED_OUT_AWAITS: &str = "timedOutAwaits";
    pub const DUE: &str = "due";
}

/// The response key that echoes the request's `driver` object.
pub const ECHO: &str = "driver";

/// Field names of a process-work-item request and of its `driver` object.
pub mod request {
    pub const PIPELINE_ID: &str = "pipelineId";
    pub const CONTRACT_VERSION: &str = "contractVersion";
    pub const RELEASE_VERSION: &str = "releaseVersion";
    pub const IDEMPOTENCY_KEY: &str = "idempotencyKey";
    pub const DRIVER: &str = super::ECHO;
    pub const LIMIT: &str = "limit";
    /// Fields of the `driver` object.
    pub mod driver {
        pub const EXECUTION_ARN: &str = "executionArn";
        pub const LINEAGE: &str = "lineage";
        pub const GENERATION: &str = "generation";
        pub const ITERATION: &str = "iteration";
    }
}

/// Field names of an outcome's `await` object.
pub mod await_field {
    pub const UNIT_ID: &str = "unitId";
    pub const STEP_INDEX: &str = "stepIndex";
    pub const STEP_NAME: &str = "stepName";
    pub const DEADLINE_AT: &str = "deadlineAt";
    pub const WAKE_IN_SECONDS: &str = "wakeInSeconds";
    pub const EXPIRES_AT_EPOCH_SECONDS: &str = "expiresAtEpochSeconds";
}

/// Field names of a sweep-once outcome's `due` entries.
pub mod due_field {
    pub const TENANT_ID: &str = "tenantId";
    pub const EXECUTION_ID: &str = "executionId";
    pub const PIPELINE_ID: &str = "pipelineId";
    pub const RELEASE_VERSION: &str = "releaseVersion";
    pub const VERSION: &str = "version";
}

/// The keys of a sweep-once outcome.
pub const SWEEP_RESULT_FIELDS: &[&str] = &[field::TIMED_OUT_AWAITS, field::DUE];

/// Error codes in an error response's `code`.
pub mod code {
    pub const RELEASE_IDENTITY_MISMATCH: &str = "RELEASE_IDENTITY_MISMATCH";
    pub const EXECUTION_NOT_FOUND: &str = "EXECUTION_NOT_FOUND";
    pub const TRANSPORT_ERROR: &str = "TRANSPORT_ERROR";
}

/// Error names a driver's Task sees when the call does not go over HTTP: a TPF action Lambda's
/// `errorType`, and the queue relay's `SendTaskFailure` error. The driver's Catch and Retry match
/// them.
pub mod task_error {
    pub const RELEASE_IDENTITY_MISMATCH: &str = "TPF.ReleaseIdentityMismatch";
    pub const EXECUTION_NOT_FOUND: &str = "TPF.ExecutionNotFound";
    pub const TRANSPORT: &str = "TPF.TransportError";
}

/// Errors both drivers (the state machine and the durable function) end an execution with when
/// TPF's record says to stop: what the console lists and alarms match, the same on both backends.
pub mod driver_error {
    /// TPF recorded FAILED or DLQ.
    pub const EXECUTION_FAILED: &str = "TPF.ExecutionFailed";
    /// TPF recorded REMOTE_OUTCOME_UNKNOWN: a remote transition passed its caller deadline
    /// without a confirmed outcome, and only an operator's re-drive (with `allowFailed`) moves it.
    pub const REMOTE_OUTCOME_UNKNOWN: &str = "TPF.RemoteOutcomeUnknown";
    /// An answer the driver does not route.
    pub const UNEXPECTED_OUTCOME: &str = "TPF.UnexpectedOutcome";
}

/// RFC 3339, UTC, `Z`, milliseconds.
pub fn rfc3339(epoch_ms: i64) -> Option<String> {
    DateTime::from_timestamp_millis(epoch_ms)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// `nextDueAt`: RFC 3339, UTC, `Z`, whole seconds rounded up. The driver hands it to a Choice's
/// `IsTimestamp` and a Wait's `TimestampPath`; whole seconds is the one shape every engine
/// takes (AWS's documented form; moto's `IsTimestamp` refuses fractions), and rounding up
/// means the driver never calls before TPF's due time.
pub fn due_at(epoch_ms: i64) -> Option<String> {
    let secs = epoch_ms.div_euclid(1000) + i64::from(epoch_ms.rem_euclid(1000) != 0);
    DateTime::from_timestamp(secs, 0).map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// An RFC 3339 instant as epoch milliseconds (`nextDueAt`, `deadlineAt`).
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// The driver execution that makes the call (informational).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DriverInfo {
    pub execution_arn: Option<String>,
    pub lineage: Option<String>,
    pub generation: Option<u32>,
    pub iteration: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessWorkItemRequest {
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    /// `<lineage>:g<generation>:i<iteration>`.
    #[serde(default)]
    pub idempotency_key: Option<String>,
    #[serde(default)]
    pub driver: Option<DriverInfo>,
}

impl ProcessWorkItemRequest {
    pub fn new(identity: &Identity, idempotency_key: Option<&str>) -> Self {
        Self {
            pipeline_id: identity.pipeline_id.clone(),
            contract_version: identity.contract_version.clone(),
            release_version: identity.release_version.clone(),
            idempotency_key: idempotency_key.map(str::to_owned),
            driver: None,
        }
    }

    pub fn identity(&self) -> Identity {
        Identity {
            pipeline_id: self.pipeline_id.clone(),
            contract_version: self.contract_version.clone(),
            release_version: self.release_version.clone(),
        }
    }
}

/// `await` in a process-work-item response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AwaitView {
    pub unit_id: String,
    pub step_index: u32,
    /// The contract step's `authoredName`.
    pub step_name: Option<String>,
    pub deadline_at: Option<String>,
    pub wake_in_seconds: i64,
    pub expires_at_epoch_seconds: i64,
}

/// The post-commit outcome of `process-work-item`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessWorkItemResponse {
    pub tenant_id: String,
    pub execution_id: String,
    pub status: ExecutionStatus,
    pub version: i64,
    pub current_step_index: u32,
    pub attempt: u32,
    pub next_due_at: Option<String>,
    #[serde(rename = "await")]
    pub await_: Option<AwaitView>,
    pub error_code: Option<String>,
    pub claimed: bool,
    /// The request's `driver` object, echoed verbatim (`null` when the request had none). The
    /// driver reads its loop counter back from here, which keeps its loop free of extra
    /// states; TPF never interprets it.
    pub driver: Option<DriverInfo>,
}

/// The process-work-item response under the name the proof's docs use for it.
pub type ActionResponse = ProcessWorkItemResponse;

impl ProcessWorkItemResponse {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepOnceRequest {
    pub limit: usize,
    #[serde(default)]
    pub pipeline_id: Option<String>,
    #[serde(default)]
    pub contract_version: Option<String>,
    #[serde(default)]
    pub release_version: Option<String>,
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimedOutAwaitView {
    pub tenant_id: String,
    pub execution_id: String,
    pub unit_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DueExecution {
    pub tenant_id: String,
    pub execution_id: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub status: ExecutionStatus,
    pub version: i64,
    pub next_due_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepOnceResponse {
    pub timed_out_awaits: Vec<TimedOutAwaitView>,
    pub due: Vec<DueExecution>,
}

impl SweepOnceResponse {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Action errors and their three bindings (HTTP status + code, lambda `errorType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionError {
    ReleaseIdentityMismatch {
        pinned: Box<Identity>,
        requested: Box<Identity>,
    },
    NotFound {
        tenant_id: String,
        execution_id: String,
    },
    /// The action could not run (store unavailable, ...): 5xx, the driver retries the call.
    Transport(String),
}

impl ActionError {
    pub fn http_status(&self) -> u16 {
        match self {
            Self::ReleaseIdentityMismatch { .. } => 409,
            Self::NotFound { .. } => 404,
            Self::Transport(_) => 503,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Self::ReleaseIdentityMismatch { .. } => code::RELEASE_IDENTITY_MISMATCH,
            Self::NotFound { .. } => code::EXECUTION_NOT_FOUND,
            Self::Transport(_) => code::TRANSPORT_ERROR,
        }
    }

    /// Lambda `errorType` / relay `error`.
    pub fn error_type(&self) -> &'static str {
        match self {
            Self::ReleaseIdentityMismatch { .. } => task_error::RELEASE_IDENTITY_MISMATCH,
            Self::NotFound { .. } => task_error::EXECUTION_NOT_FOUND,
            Self::Transport(_) => task_error::TRANSPORT,
        }
    }

    /// The HTTP error body.
    pub fn body(&self) -> Value {
        json!({ "code": self.code(), "message": self.to_string() })
    }
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReleaseIdentityMismatch { pinned, requested } => write!(
                f,
                "execution is pinned to {}/{}/{}, the call carries {}/{}/{}",
                pinned.pipeline_id,
                pinned.contract_version,
                pinned.release_version,
                requested.pipeline_id,
                requested.contract_version,
                requested.release_version
            ),
            Self::NotFound {
                tenant_id,
                execution_id,
            } => write!(f, "execution {tenant_id}/{execution_id} not found"),
            Self::Transport(m) => write!(f, "action failed: {m}"),
        }
    }
}

impl std::error::Error for ActionError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_fields_are_the_response_keys_in_order() {
        let response = ProcessWorkItemResponse {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            status: ExecutionStatus::Queued,
            version: 1,
            current_step_index: 0,
            attempt: 0,
            next_due_at: None,
            await_: None,
            error_code: None,
            claimed: false,
            driver: None,
        };
        let value = response.to_json();
        let keys: Vec<&str> = value
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .map(String::as_str)
            .filter(|k| !matches!(*k, "tenantId" | "executionId"))
            .collect();
        let mut expected = PROCESS_RESULT_FIELDS.to_vec();
        expected.push(ECHO);
        assert_eq!(keys, expected);
        let sweep = SweepOnceResponse {
            timed_out_awaits: vec![],
            due: vec![],
        }
        .to_json();
        let keys: Vec<&str> = sweep
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .map(String::as_str)
            .collect();
        assert_eq!(keys, SWEEP_RESULT_FIELDS);
    }
}

#[cfg(test)]
mod field_names {
    use super::*;

    /// The named fields are the serialised names of the structs, so a rename in one place fails.
    #[test]
    fn named_fields_match_the_wire_structs() {
        let view = AwaitView {
            unit_id: "u".into(),
            step_index: 1,
            step_name: None,
            deadline_at: None,
            wake_in_seconds: 1,
            expires_at_epoch_seconds: 1,
        };
        let keys: Vec<String> = serde_json::to_value(view)
            .ok()
            .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                await_field::UNIT_ID,
                await_field::STEP_INDEX,
                await_field::STEP_NAME,
                await_field::DEADLINE_AT,
                await_field::WAKE_IN_SECONDS,
                await_field::EXPIRES_AT_EPOCH_SECONDS
            ]
        );
        let req = ProcessWorkItemRequest {
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
            idempotency_key: None,
            driver: Some(DriverInfo {
                execution_arn: None,
                lineage: None,
                generation: None,
                iteration: None,
            }),
        };
        let v = serde_json::to_value(req).unwrap_or_default();
        for k in [
            request::PIPELINE_ID,
            request::CONTRACT_VERSION,
            request::RELEASE_VERSION,
            request::IDEMPOTENCY_KEY,
            request::DRIVER,
        ] {
            assert!(v.get(k).is_some(), "{k}");
        }
        for k in [
            request::driver::EXECUTION_ARN,
            request::driver::LINEAGE,
            request::driver::GENERATION,
            request::driver::ITERATION,
        ] {
            assert!(v[request::DRIVER].get(k).is_some(), "{k}");
        }
        let due = DueExecution {
            tenant_id: "t".into(),
            execution_id: "e".into(),
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
            status: ExecutionStatus::Queued,
            version: 0,
            next_due_at: None,
        };
        let v = serde_json::to_value(due).unwrap_or_default();
        for k in [
            due_field::TENANT_ID,
            due_field::EXECUTION_ID,
            due_field::PIPELINE_ID,
            due_field::RELEASE_VERSION,
            due_field::VERSION,
        ] {
            assert!(v.get(k).is_some(), "{k}");
        }
        let sweep = serde_json::to_value(SweepOnceRequest {
            limit: 1,
            pipeline_id: None,
            contract_version: None,
            release_version: None,
            idempotency_key: None,
        })
        .unwrap_or_default();
        assert!(sweep.get(request::LIMIT).is_some());
    }
}
