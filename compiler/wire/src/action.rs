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

/// The keys of a process-work-item outcome, in the order the response writes them. A driver
/// selects exactly these, so its view of TPF's answer has one shape whatever the binding.
pub const PROCESS_RESULT_FIELDS: &[&str] = &[
    "status",
    "version",
    "currentStepIndex",
    "attempt",
    "nextDueAt",
    "await",
    "errorCode",
    "claimed",
];

/// The keys of a sweep-once outcome.
pub const SWEEP_RESULT_FIELDS: &[&str] = &["timedOutAwaits", "due"];

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
}

/// The name the brief uses for the process-work-item response.
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
        };
        let value = response.to_json();
        let keys: Vec<&str> = value
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .map(String::as_str)
            .filter(|k| !matches!(*k, "tenantId" | "executionId"))
            .collect();
        assert_eq!(keys, PROCESS_RESULT_FIELDS);
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
