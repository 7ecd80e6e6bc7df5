//! TPF's durable records, field for field, with their DynamoDB attribute names.
//!
//! Shapes follow `RT/orchestrator/ExecutionRecord.java`, `RT/awaitable/AwaitUnitRecord.java`,
//! `AwaitInteractionRecord`, `RT/orchestrator/release/PipelineReleaseRecord.java` and
//! `RT/orchestrator/DeadLetterEnvelope.java`. Attribute names are those of TPF's Dynamo stores
//! (`DynamoExecutionStateStore`, `DynamoAwaitUnitStore`, ...), so a DynamoDB-backed store reads
//! and writes rows TPF itself can read.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The long-standing attribute names TPF's tables share (`DynamoExecutionStateStore`,
/// `DynamoAwaitUnitStore`, `DynamoPipelineReleaseRegistry`): keys, release identity, times.
/// Every shipped reader and writer of TPF's rows takes them from here.
pub mod attr {
    pub const TENANT_ID: &str = "tenant_id";
    pub const EXECUTION_ID: &str = "execution_id";
    pub const UNIT_ID: &str = "unit_id";
    pub const INTERACTION_ID: &str = "interaction_id";
    pub const PIPELINE_ID: &str = "pipeline_id";
    pub const CONTRACT_VERSION: &str = "contract_version";
    pub const RELEASE_VERSION: &str = "release_version";
    pub const AWAIT_UNIT_ID: &str = "await_unit_id";
    pub const LAST_TRANSITION_KEY: &str = "last_transition_key";
    pub const CREATED_AT_EPOCH_MS: &str = "created_at_epoch_ms";
    pub const UPDATED_AT_EPOCH_MS: &str = "updated_at_epoch_ms";
    pub const TTL_EPOCH_S: &str = "ttl_epoch_s";
    pub const REGISTRY_KEY: &str = "registry_key";
    pub const REGISTRY_SORT: &str = "registry_sort";
}

mod awaits;
mod execution;
mod item;
mod release;

pub use awaits::*;
pub use execution::*;
pub use item::*;
pub use release::*;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name {
            $( #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $( Self::$variant => $text ),+ }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text { $( $text => Some(Self::$variant), )+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// `ExecutionStatus` (today's TPF), in TPF's declaration order.
    ExecutionStatus {
        Queued => "QUEUED",
        Running => "RUNNING",
        WaitingExternal => "WAITING_EXTERNAL",
        WaitRetry => "WAIT_RETRY",
        RemoteOutcomeUnknown => "REMOTE_OUTCOME_UNKNOWN",
        Succeeded => "SUCCEEDED",
        Failed => "FAILED",
        Dlq => "DLQ",
    }
);

impl ExecutionStatus {
    /// Every status, in TPF's declaration order (the index is TPF's `ordinal()`).
    pub const ALL: [ExecutionStatus; 8] = [
        Self::Queued,
        Self::Running,
        Self::WaitingExternal,
        Self::WaitRetry,
        Self::RemoteOutcomeUnknown,
        Self::Succeeded,
        Self::Failed,
        Self::Dlq,
    ];

    /// TPF's `terminal()`. `REMOTE_OUTCOME_UNKNOWN` is not terminal for TPF: a remote transition
    /// passed its caller deadline without a confirmed outcome, and the execution waits for an
    /// operator's re-drive (with `allowFailed`) after reconciliation.
    pub fn terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Dlq)
    }

    /// Where a driver stops asking: TPF's terminal statuses and `REMOTE_OUTCOME_UNKNOWN`, which
    /// nothing but an operator moves on (TPF's own AWS durable driver stops on the same four).
    pub fn driver_stops(self) -> bool {
        self.terminal() || self == Self::RemoteOutcomeUnknown
    }

    /// Statuses TPF's re-drive leaves (`ExecutionRedrivePlan.from`): DLQ, and with `allowFailed`
    /// also FAILED and REMOTE_OUTCOME_UNKNOWN.
    pub fn redrivable(self, allow_failed: bool) -> bool {
        self == Self::Dlq
            || (allow_failed && matches!(self, Self::Failed | Self::RemoteOutcomeUnknown))
    }

    /// Statuses a worker may never claim and a sweep never returns as due.
    pub fn unclaimable(self) -> bool {
        matches!(
            self,
            Self::Succeeded
                | Self::WaitingExternal
                | Self::Failed
                | Self::Dlq
                | Self::RemoteOutcomeUnknown
        )
    }
}

string_enum!(
    /// `RT/orchestrator/ExecutionResultShapeResolver` output.
    ResultShape {
        Single => "SINGLE",
        MaterializedMulti => "MATERIALIZED_MULTI",
    }
);

string_enum!(
    /// `RT/awaitable/AwaitUnitStatus`: every value but `WAITING_EXTERNAL` is terminal.
    AwaitUnitStatus {
        WaitingExternal => "WAITING_EXTERNAL",
        Completed => "COMPLETED",
        Failed => "FAILED",
        TimedOut => "TIMED_OUT",
        Cancelled => "CANCELLED",
        Expired => "EXPIRED",
    }
);

impl AwaitUnitStatus {
    pub fn terminal(self) -> bool {
        self != Self::WaitingExternal
    }
}

string_enum!(
    /// `AwaitInteractionStatus`: the last five are terminal.
    AwaitInteractionStatus {
        Waiting => "WAITING",
        Dispatching => "DISPATCHING",
        Dispatched => "DISPATCHED",
        Completed => "COMPLETED",
        Failed => "FAILED",
        TimedOut => "TIMED_OUT",
        Cancelled => "CANCELLED",
        Expired => "EXPIRED",
    }
);

impl AwaitInteractionStatus {
    pub fn terminal(self) -> bool {
        !matches!(self, Self::Waiting | Self::Dispatching | Self::Dispatched)
    }
}

string_enum!(
    /// Release status. `ACTIVE` is derived from the latest activation event, never stored.
    ReleaseStatus {
        Registered => "REGISTERED",
        Active => "ACTIVE",
    }
);

/// `DeadLetterEnvelope`, published only after the terminal FAILED commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetterEnvelope {
    pub tenant_id: String,
    pub execution_id: String,
    pub execution_key: String,
    pub correlation_id: String,
    pub transition_key: String,
    pub resource_type: String,
    pub resource_name: String,
    pub transport: String,
    pub platform: String,
    pub terminal_status: String,
    /// `retry_exhausted` | `non_retryable` | `circuit_deferral_exhausted`.
    pub terminal_reason: String,
    pub error_code: String,
    pub error_message: String,
    pub retryable: bool,
    pub retries_observed: u32,
    pub created_at_epoch_ms: i64,
}
