//! TPF's durable records, field for field, with their DynamoDB attribute names.
//!
//! Shapes follow `RT/orchestrator/ExecutionRecord.java`, `RT/awaitable/AwaitUnitRecord.java`,
//! `AwaitInteractionRecord`, `RT/orchestrator/release/PipelineReleaseRecord.java` and
//! `RT/orchestrator/DeadLetterEnvelope.java`. Attribute names are those of TPF's Dynamo stores
//! (`DynamoExecutionStateStore`, `DynamoAwaitUnitStore`, ...), so a DynamoDB-backed store reads
//! and writes rows TPF itself can read.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids;
use crate::java_text::jackson_compact;

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

/// `ExecutionRecord`. Payloads are modelled inline (`input_payload_json`); TPF's chunked payload
/// table only matters above 256 KiB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionRecord {
    pub tenant_id: String,
    pub execution_id: String,
    pub execution_key: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub result_shape: ResultShape,
    pub status: ExecutionStatus,
    pub version: i64,
    pub current_step_index: u32,
    pub attempt: u32,
    pub lease_owner: Option<String>,
    pub lease_expires_epoch_ms: i64,
    /// `i64::MAX` (Java `Long.MAX_VALUE`) while `WAITING_EXTERNAL`.
    pub next_due_epoch_ms: i64,
    pub last_transition_key: Option<String>,
    pub input_payload: Value,
    pub await_unit_id: Option<String>,
    pub result_payload: Option<Value>,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub created_at_epoch_ms: i64,
    pub updated_at_epoch_ms: i64,
    pub ttl_epoch_s: i64,
    /// `redriveIntent`: what the last re-drive asked for; [`execution_attr::REPLAY`] on a new
    /// record and on every re-drive the model makes. Records August 2026's TPF wrote lack the
    /// attribute and read as `REPLAY`, TPF's default.
    #[serde(default = "replay")]
    pub redrive_intent: String,
    /// `failedStepIndex`: the step a command failed at, `-1` for none (every new record).
    #[serde(default = "no_failed_step")]
    pub failed_step_index: i64,
    /// The attributes of today's TPF this project does not interpret (circuit deferral, payload
    /// references, the initial input, command ids; [`execution_attr::CARRIED`]), kept as read so
    /// a record TPF wrote is written back with them.
    #[serde(skip)]
    pub carried: BTreeMap<String, AttrValue>,
}

fn replay() -> String {
    execution_attr::REPLAY.to_owned()
}

fn no_failed_step() -> i64 {
    execution_attr::NO_FAILED_STEP
}

/// The `tpf_execution` attributes today's TPF added (`DynamoExecutionStateStore`) to the
/// long-standing set, and their defaults.
pub mod execution_attr {
    pub const REDRIVE_INTENT: &str = "redrive_intent";
    pub const FAILED_STEP_INDEX: &str = "failed_step_index";
    pub const FAILED_COMMAND_ID: &str = "failed_command_id";
    pub const REDRIVE_TARGET_COMMAND_ID: &str = "redrive_target_command_id";
    pub const REDRIVE_REASON: &str = "redrive_reason";
    pub const FIRST_CIRCUIT_DEFERRED_AT_EPOCH_MS: &str = "first_circuit_deferred_at_epoch_ms";
    pub const CIRCUIT_DEFERRAL_COUNT: &str = "circuit_deferral_count";
    pub const CIRCUIT_IDENTITY: &str = "circuit_identity";
    pub const INPUT_SHAPE: &str = "input_shape";
    pub const INPUT_PAYLOAD_REFERENCE: &str = "input_payload_reference";
    pub const INPUT_PAYLOAD_DIGEST: &str = "input_payload_digest";
    pub const INPUT_PAYLOAD_TYPE_ID: &str = "input_payload_type_id";
    pub const INPUT_PAYLOAD_ENCODING: &str = "input_payload_encoding";
    pub const INPUT_PIPELINE_VERSION: &str = "input_pipeline_version";
    pub const INPUT_PIPELINE_REPLAY_MODE: &str = "input_pipeline_replay_mode";
    pub const INPUT_PIPELINE_CACHE_POLICY: &str = "input_pipeline_cache_policy";
    pub const INITIAL_INPUT_SHAPE: &str = "initial_input_shape";
    pub const INITIAL_INPUT_PAYLOAD_JSON: &str = "initial_input_payload_json";
    pub const INITIAL_INPUT_PAYLOAD_REFERENCE: &str = "initial_input_payload_reference";
    pub const INITIAL_INPUT_PAYLOAD_DIGEST: &str = "initial_input_payload_digest";
    pub const INITIAL_INPUT_PAYLOAD_TYPE_ID: &str = "initial_input_payload_type_id";
    pub const INITIAL_INPUT_PAYLOAD_ENCODING: &str = "initial_input_payload_encoding";
    pub const INITIAL_INPUT_PIPELINE_VERSION: &str = "initial_input_pipeline_version";
    pub const INITIAL_INPUT_PIPELINE_REPLAY_MODE: &str = "initial_input_pipeline_replay_mode";
    pub const INITIAL_INPUT_PIPELINE_CACHE_POLICY: &str = "initial_input_pipeline_cache_policy";
    pub const RESULT_PAYLOAD_REFERENCE: &str = "result_payload_reference";
    pub const RESULT_PAYLOAD_DIGEST: &str = "result_payload_digest";

    /// `ExecutionRedriveIntent.REPLAY`, the default intent (re-run from the current step).
    pub const REPLAY: &str = "REPLAY";
    /// `failedStepIndex` when no command failed.
    pub const NO_FAILED_STEP: i64 = -1;

    /// The new attributes a record keeps as read, uninterpreted.
    pub const CARRIED: &[&str] = &[
        FAILED_COMMAND_ID,
        REDRIVE_TARGET_COMMAND_ID,
        REDRIVE_REASON,
        FIRST_CIRCUIT_DEFERRED_AT_EPOCH_MS,
        CIRCUIT_DEFERRAL_COUNT,
        CIRCUIT_IDENTITY,
        INPUT_SHAPE,
        INPUT_PAYLOAD_REFERENCE,
        INPUT_PAYLOAD_DIGEST,
        INPUT_PAYLOAD_TYPE_ID,
        INPUT_PAYLOAD_ENCODING,
        INPUT_PIPELINE_VERSION,
        INPUT_PIPELINE_REPLAY_MODE,
        INPUT_PIPELINE_CACHE_POLICY,
        INITIAL_INPUT_SHAPE,
        INITIAL_INPUT_PAYLOAD_JSON,
        INITIAL_INPUT_PAYLOAD_REFERENCE,
        INITIAL_INPUT_PAYLOAD_DIGEST,
        INITIAL_INPUT_PAYLOAD_TYPE_ID,
        INITIAL_INPUT_PAYLOAD_ENCODING,
        INITIAL_INPUT_PIPELINE_VERSION,
        INITIAL_INPUT_PIPELINE_REPLAY_MODE,
        INITIAL_INPUT_PIPELINE_CACHE_POLICY,
        RESULT_PAYLOAD_REFERENCE,
        RESULT_PAYLOAD_DIGEST,
    ];
}

/// Keys of today's TPF tables and indexes that August 2026's TPF did not have.
pub mod table_key {
    /// `tpf_execution_payload`: an execution's payload stored in parts, keyed by payload id
    /// (hash, S) and part (range, S: `CHUNK#<n>` or `MANIFEST`).
    pub const PAYLOAD_ID: &str = "payload_id";
    pub const PAYLOAD_PART: &str = "payload_part";
    /// `tpf_await_admission`: fixed capacity slots for live awaits, keyed by scope (hash, S) and
    /// slot number (range, N), expiring by `expires_at` (epoch seconds).
    pub const SCOPE_KEY: &str = "scope_key";
    pub const SLOT: &str = "slot";
    pub const ADMISSION_EXPIRES_AT: &str = "expires_at";
    /// The interaction table's `await-interaction-continuation-work` index: hash S, range N.
    pub const QUERY_CONTINUATION_KEY: &str = "query_continuation_key";
    pub const QUERY_CONTINUATION_DUE_EPOCH_MS: &str = "query_continuation_due_epoch_ms";
    /// The interaction table's `await-interaction-by-execution` index: hash S, range S.
    pub const QUERY_EXECUTION_KEY: &str = "query_execution_key";
    pub const QUERY_EXECUTION_SORT: &str = "query_execution_sort";
}

impl ExecutionRecord {
    /// Expired rows are treated as absent (`ttl_epoch_s > now` in every condition).
    pub fn live_at(&self, now_ms: i64) -> bool {
        self.ttl_epoch_s > now_ms.div_euclid(1000)
    }
}

/// `AwaitUnitRecord` (table `tpf_await_unit`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AwaitUnitRecord {
    pub tenant_id: String,
    pub unit_id: String,
    pub execution_id: String,
    pub step_id: String,
    pub step_index: u32,
    /// Raw string, compared with `equalsIgnoreCase("ONE_TO_ONE")` by the continuation planner.
    pub cardinality: String,
    pub version: i64,
    pub status: AwaitUnitStatus,
    pub primary_interaction_id: Option<String>,
    pub expected_item_count: Option<i64>,
    pub completed_item_count: i64,
    /// `item:<i>` / interaction ids, plus `continuation:<i>` keys.
    pub completed_item_keys: BTreeSet<String>,
    pub dispatch_complete: bool,
    pub created_at_epoch_ms: i64,
    pub updated_at_epoch_ms: i64,
    pub ttl_epoch_s: i64,
}

impl AwaitUnitRecord {
    /// `AwaitContinuationPlanner.usesItemContinuations`.
    pub fn uses_item_continuations(&self) -> bool {
        self.primary_interaction_id.is_none() && self.cardinality.eq_ignore_ascii_case("ONE_TO_ONE")
    }

    /// Expired rows are treated as absent on read.
    pub fn live_at(&self, now_ms: i64) -> bool {
        self.ttl_epoch_s > now_ms.div_euclid(1000)
    }

    /// `AwaitUnitRecord.continuationCompletionKey`: the fact that item `i`'s continuation
    /// succeeded, kept beside the `item:<i>` completion keys.
    pub fn continuation_key(item_index: u32) -> String {
        format!("{CONTINUATION_KEY_PREFIX}{item_index}")
    }

    pub fn has_continuation_fact(&self, item_index: u32) -> bool {
        self.completed_item_keys
            .contains(&Self::continuation_key(item_index))
    }

    pub fn completed_continuation_count(&self) -> i64 {
        self.completed_item_keys
            .iter()
            .filter(|k| k.starts_with(CONTINUATION_KEY_PREFIX))
            .count() as i64
    }
}

/// `AwaitUnitRecord.CONTINUATION_COMPLETION_KEY_PREFIX`.
pub const CONTINUATION_KEY_PREFIX: &str = "continuation:";

/// The attributes of an await-interaction row that TPF's await wake-up reads from the table's
/// stream images (`AwsDurableAwaitStreamProcessor`): each a non-blank text, or the row is not
/// an await row.
pub mod interaction_attr {
    pub const TENANT_ID: &str = "tenant_id";
    pub const EXECUTION_ID: &str = "execution_id";
    pub const INTERACTION_ID: &str = "interaction_id";
    pub const CORRELATION_ID: &str = "correlation_id";
    /// An `AwaitInteractionStatus` name.
    pub const STATUS: &str = "status";
}

/// `AwaitInteractionRecord` (table `tpf_await_interaction`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AwaitInteractionRecord {
    pub tenant_id: String,
    pub execution_id: String,
    pub step_id: String,
    pub step_index: u32,
    pub output_type: Option<String>,
    pub interaction_id: String,
    pub correlation_id: String,
    pub causation_id: Option<String>,
    pub idempotency_key: String,
    pub version: i64,
    pub status: AwaitInteractionStatus,
    pub request_payload: Option<Value>,
    pub response_payload: Option<Value>,
    pub unit_id: Option<String>,
    /// `None` for a scalar interaction.
    pub item_index: Option<u32>,
    pub actor: Option<String>,
    pub assignee: Option<String>,
    pub group: Option<String>,
    pub transport_type: Option<String>,
    pub transport_metadata: BTreeMap<String, String>,
    pub deadline_epoch_ms: Option<i64>,
    pub created_at_epoch_ms: i64,
    pub updated_at_epoch_ms: i64,
    pub ttl_epoch_s: i64,
    pub transport_output_type: Option<String>,
}

impl AwaitInteractionRecord {
    /// Expired rows are treated as absent on read.
    pub fn live_at(&self, now_ms: i64) -> bool {
        self.ttl_epoch_s > now_ms.div_euclid(1000)
    }
}

/// `PipelineReleaseRecord`, field for field: TPF's record constructor turns a null artifact string
/// into `""`, a release that was never activated has `activatedAtEpochMs` 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineReleaseRecord {
    pub tenant_id: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub status: ReleaseStatus,
    /// The `pipeline-release.json`; rows carry it as TPF's `PipelineReleaseDescriptor`
    /// ([`release_descriptor_form`]).
    pub descriptor: Value,
    pub primary_artifact_id: String,
    pub primary_artifact_digest: String,
    pub primary_artifact_uri: String,
    pub primary_artifact_size_bytes: i64,
    pub primary_artifact_checksum: String,
    /// TPF's `PipelineContractDescriptor` of the release's contract ([`contract_descriptor_form`]),
    /// when the registration read one from the artifact.
    pub contract: Option<Value>,
    pub created_at_epoch_ms: i64,
    pub updated_at_epoch_ms: i64,
    /// 0 unless this is the active release.
    pub activated_at_epoch_ms: i64,
}

impl PipelineReleaseRecord {
    /// The metadata that must match on an idempotent re-register (`PipelineReleaseRegistry`).
    pub fn same_immutable_metadata(&self, other: &Self) -> bool {
        self.contract_version == other.contract_version
            && release_descriptor_form(&self.descriptor)
                == release_descriptor_form(&other.descriptor)
            && self.primary_artifact_id == other.primary_artifact_id
            && self.primary_artifact_digest == other.primary_artifact_digest
            && self.primary_artifact_uri == other.primary_artifact_uri
            && self.contract == other.contract
    }

    /// The record as the registry returns it when `event` is the latest activation of its
    /// pipeline (`toReleaseRecord`): ACTIVE with the event's time if the event names this
    /// release, REGISTERED with 0 otherwise.
    pub fn with_latest_activation(mut self, event: Option<&ReleaseActivationEvent>) -> Self {
        match event.filter(|e| e.release_version == self.release_version) {
            Some(e) => {
                self.status = ReleaseStatus::Active;
                self.activated_at_epoch_ms = e.activated_at_epoch_ms;
            }
            None => {
                self.status = ReleaseStatus::Registered;
                self.activated_at_epoch_ms = 0;
            }
        }
        self
    }
}

fn string_field<'a>(obj: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// A `pipeline-release.json` as TPF's `PipelineReleaseDescriptor` record reads and writes it:
/// its components in record order (`schemaVersion`, `pipelineId`, `contractVersion`,
/// `releaseVersion`, today's `compiledTruthArtifactId`, `artifacts`), each artifact's `stepIds`
/// and `capabilities` defaulting to `[]`, nothing else. A descriptor that carries
/// `compiledTruthArtifactId` is today's and keeps it (a release row written for it must not
/// lose the key); one without is August 2026's record, which has no such component. `None`
/// when TPF's constructor would refuse it (schema version other than 1, a missing id, a
/// `compiledTruthArtifactId` that is not text, an artifact without
/// `artifactId`/`kind`/`uri`/`digest`).
pub fn release_descriptor_form(descriptor: &Value) -> Option<Value> {
    let d = descriptor.as_object()?;
    if d.get("schemaVersion").and_then(Value::as_i64) != Some(1) {
        return None;
    }
    let mut out = serde_json::Map::new();
    out.insert("schemaVersion".into(), Value::from(1));
    for key in ["pipelineId", "contractVersion", "releaseVersion"] {
        out.insert(key.into(), Value::from(string_field(d, key)?));
    }
    const COMPILED_TRUTH: &str = "compiledTruthArtifactId";
    if d.contains_key(COMPILED_TRUTH) {
        // Today's record requires it non-null; August's has no such component at all.
        out.insert(
            COMPILED_TRUTH.into(),
            Value::from(string_field(d, COMPILED_TRUTH)?),
        );
    }
    let artifacts = match d.get("artifacts") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| {
                let a = a.as_object()?;
                let mut art = serde_json::Map::new();
                for key in ["artifactId", "kind", "uri", "digest"] {
                    art.insert(key.into(), Value::from(string_field(a, key)?));
                }
                for key in ["stepIds", "capabilities"] {
                    let list = match a.get(key) {
                        None | Some(Value::Null) => Value::Array(Vec::new()),
                        Some(v @ Value::Array(_)) => v.clone(),
                        Some(_) => return None,
                    };
                    art.insert(key.into(), list);
                }
                Some(Value::Object(art))
            })
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    out.insert("artifacts".into(), Value::Array(artifacts));
    Some(Value::Object(out))
}

/// A `pipeline-contract.json` document as August 2026 TPF's `PipelineContractDescriptor` record
/// renders it through Jackson (`contract_json`; today's record has more components, which this
/// form does not write yet): record component order, absent values written as `null`,
/// `capabilities` before `canonicalTypes`, the empty composition
/// `{"rootDefinitionId":"","definitions":[]}` when there is none. `None` when the descriptor's
/// constructor would refuse the document (schema version outside 1..=3, a missing id or hash).
pub fn contract_descriptor_form(document: &Value) -> Option<Value> {
    let d = document.as_object()?;
    let schema = d.get("schemaVersion").and_then(Value::as_i64)?;
    if !(1..=3).contains(&schema) {
        return None;
    }
    let text_or_null = |key: &str| {
        d.get(key)
            .filter(|v| v.is_string())
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut out = serde_json::Map::new();
    out.insert("schemaVersion".into(), Value::from(schema));
    for key in ["pipelineId", "contractVersion", "contractHash"] {
        out.insert(key.into(), Value::from(string_field(d, key)?));
    }
    for key in ["platform", "transport", "module"] {
        out.insert(key.into(), text_or_null(key));
    }
    out.insert(
        "pluginHost".into(),
        Value::Bool(
            d.get("pluginHost")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    );
    out.insert("runtimeLayout".into(), text_or_null("runtimeLayout"));
    let steps: Vec<Value> = d
        .get("steps")
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(Value::as_object)
                .map(|s| {
                    let mut step = serde_json::Map::new();
                    step.insert(
                        "index".into(),
                        s.get("index").cloned().unwrap_or(Value::from(0)),
                    );
                    for &key in &crate::step::AUGUST_DESCRIPTOR_STEP_COMPONENTS[1..] {
                        step.insert(
                            key.into(),
                            s.get(key)
                                .filter(|v| v.is_string())
                                .cloned()
                                .unwrap_or(Value::Null),
                        );
                    }
                    Value::Object(step)
                })
                .collect()
        })
        .unwrap_or_default();
    out.insert("steps".into(), Value::Array(steps));
    let capabilities = d.get("capabilities").and_then(Value::as_object);
    let mut caps = serde_json::Map::new();
    caps.insert(
        "localTransitionExecution".into(),
        Value::Bool(
            capabilities
                .and_then(|c| c.get("localTransitionExecution"))
                .and_then(Value::as_bool)
                .unwrap_or(true),
        ),
    );
    caps.insert(
        "transitionWorkerProtocols".into(),
        capabilities
            .and_then(|c| c.get("transitionWorkerProtocols"))
            .filter(|v| v.is_array())
            .cloned()
            .unwrap_or_else(|| serde_json::json!(["local", "rest", "grpc", "sqs"])),
    );
    out.insert("capabilities".into(), Value::Object(caps));
    out.insert(
        "canonicalTypes".into(),
        d.get("canonicalTypes")
            .filter(|v| v.is_object())
            .cloned()
            .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
    );
    out.insert(
        "canonicalCatalogFingerprint".into(),
        Value::from(string_field(d, "canonicalCatalogFingerprint").unwrap_or("")),
    );
    out.insert(
        "composition".into(),
        d.get("composition")
            .filter(|v| v.is_object())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"rootDefinitionId": "", "definitions": []})),
    );
    Some(Value::Object(out))
}

/// One append-only activation event; the latest one names the active release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseActivationEvent {
    pub tenant_id: String,
    pub pipeline_id: String,
    pub release_version: String,
    pub activated_at_epoch_ms: i64,
}

impl ReleaseActivationEvent {
    /// `ActivationEvent`'s checks: a non-blank release version, a positive activation time.
    pub fn check(&self) -> Result<(), String> {
        if self.release_version.trim().is_empty() {
            return Err("releaseVersion must not be blank".to_owned());
        }
        if self.activated_at_epoch_ms <= 0 {
            return Err("activatedAtEpochMs must be positive".to_owned());
        }
        Ok(())
    }
}

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

// ---------------------------------------------------------------------------------------------
// DynamoDB item mapping

/// The subset of DynamoDB `AttributeValue` TPF's tables use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    S(String),
    /// Numbers travel as decimal strings, as in DynamoDB.
    N(String),
    Bool(bool),
    Ss(BTreeSet<String>),
    Null,
}

pub type Item = BTreeMap<String, AttrValue>;

/// An item that does not decode into a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemError {
    pub attribute: String,
    pub problem: &'static str,
}

impl fmt::Display for ItemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attribute `{}`: {}", self.attribute, self.problem)
    }
}

impl std::error::Error for ItemError {}

/// A record with a DynamoDB row shape. Absent optional fields are absent attributes (TPF writes
/// `REMOVE`, not NULL), so conditions like `attribute_not_exists(lease_owner)` keep working.
pub trait DynamoItem: Sized {
    const TABLE: &'static str;
    fn attribute_names() -> &'static [&'static str];
    fn to_item(&self) -> Item;
    fn from_item(item: &Item) -> Result<Self, ItemError>;
}

#[derive(Default)]
struct Writer(Item);

impl Writer {
    fn s(&mut self, name: &str, value: &str) -> &mut Self {
        self.0
            .insert(name.to_owned(), AttrValue::S(value.to_owned()));
        self
    }
    fn opt_s(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        if let Some(value) = value {
            self.s(name, value);
        }
        self
    }
    fn n(&mut self, name: &str, value: i64) -> &mut Self {
        self.0
            .insert(name.to_owned(), AttrValue::N(value.to_string()));
        self
    }
    fn opt_n(&mut self, name: &str, value: Option<i64>) -> &mut Self {
        if let Some(value) = value {
            self.n(name, value);
        }
        self
    }
    fn b(&mut self, name: &str, value: bool) -> &mut Self {
        self.0.insert(name.to_owned(), AttrValue::Bool(value));
        self
    }
    fn ss(&mut self, name: &str, value: &BTreeSet<String>) -> &mut Self {
        // DynamoDB rejects empty sets; TPF's `ADD` creates the set on first use.
        if !value.is_empty() {
            self.0.insert(name.to_owned(), AttrValue::Ss(value.clone()));
        }
        self
    }
    fn json(&mut self, name: &str, value: &Value) -> &mut Self {
        self.s(name, &value.to_string())
    }
    fn opt_json(&mut self, name: &str, value: Option<&Value>) -> &mut Self {
        if let Some(value) = value {
            self.json(name, value);
        }
        self
    }
    fn done(&mut self) -> Item {
        std::mem::take(&mut self.0)
    }
}

/// [`ItemError::problem`] of a release-registry attribute TPF's reader requires.
pub const MISSING_STRING: &str = "missing string attribute";
pub const MISSING_NUMBER: &str = "missing numeric attribute";

struct Reader<'a>(&'a Item);

impl Reader<'_> {
    fn err(name: &str, problem: &'static str) -> ItemError {
        ItemError {
            attribute: name.to_owned(),
            problem,
        }
    }
    fn opt_s(&self, name: &str) -> Result<Option<String>, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(None),
            Some(AttrValue::S(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Self::err(name, "expected S")),
        }
    }
    fn s(&self, name: &str) -> Result<String, ItemError> {
        self.opt_s(name)?
            .ok_or_else(|| Self::err(name, "missing required attribute"))
    }
    fn opt_n(&self, name: &str) -> Result<Option<i64>, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(None),
            Some(AttrValue::N(n)) => n
                .parse()
                .map(Some)
                .map_err(|_| Self::err(name, "not an integer")),
            Some(_) => Err(Self::err(name, "expected N")),
        }
    }
    fn n(&self, name: &str) -> Result<i64, ItemError> {
        self.opt_n(name)?
            .ok_or_else(|| Self::err(name, "missing required attribute"))
    }
    fn n_or(&self, name: &str, default: i64) -> Result<i64, ItemError> {
        Ok(self.opt_n(name)?.unwrap_or(default))
    }
    fn u32(&self, name: &str) -> Result<u32, ItemError> {
        u32::try_from(self.n(name)?).map_err(|_| Self::err(name, "out of range"))
    }
    fn opt_u32(&self, name: &str) -> Result<Option<u32>, ItemError> {
        self.opt_n(name)?
            .map(|n| u32::try_from(n).map_err(|_| Self::err(name, "out of range")))
            .transpose()
    }
    fn b(&self, name: &str) -> Result<bool, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(false),
            Some(AttrValue::Bool(b)) => Ok(*b),
            Some(_) => Err(Self::err(name, "expected BOOL")),
        }
    }
    fn ss(&self, name: &str) -> Result<BTreeSet<String>, ItemError> {
        match self.0.get(name) {
            None | Some(AttrValue::Null) => Ok(BTreeSet::new()),
            Some(AttrValue::Ss(set)) => Ok(set.clone()),
            Some(_) => Err(Self::err(name, "expected SS")),
        }
    }
    fn opt_json(&self, name: &str) -> Result<Option<Value>, ItemError> {
        self.opt_s(name)?
            .map(|text| serde_json::from_str(&text).map_err(|_| Self::err(name, "invalid JSON")))
            .transpose()
    }
    fn json(&self, name: &str) -> Result<Value, ItemError> {
        Ok(self.opt_json(name)?.unwrap_or(Value::Null))
    }
    /// `DynamoPipelineReleaseRegistry.stringValue`: present and of type S.
    fn tpf_s(&self, name: &str) -> Result<String, ItemError> {
        match self.0.get(name) {
            Some(AttrValue::S(s)) => Ok(s.clone()),
            _ => Err(Self::err(name, MISSING_STRING)),
        }
    }
    /// `longValue`: present, of type N, a Java long.
    fn tpf_n(&self, name: &str) -> Result<i64, ItemError> {
        match self.0.get(name) {
            Some(AttrValue::N(n)) => n.parse().map_err(|_| Self::err(name, "not an integer")),
            _ => Err(Self::err(name, MISSING_NUMBER)),
        }
    }
    /// `artifactUriValue`: a non-blank `primary_artifact_uri`, else the legacy
    /// `primary_artifact_path`, else the row is unreadable.
    fn artifact_uri(&self) -> Result<String, ItemError> {
        ["primary_artifact_uri", "primary_artifact_path"]
            .iter()
            .find_map(|name| match self.0.get(*name) {
                Some(AttrValue::S(s)) if !s.trim().is_empty() => Some(s.clone()),
                _ => None,
            })
            .ok_or_else(|| Self::err("primary_artifact_uri", MISSING_STRING))
    }
    fn parsed<T>(&self, name: &str, parse: fn(&str) -> Option<T>) -> Result<T, ItemError> {
        parse(&self.s(name)?).ok_or_else(|| Self::err(name, "unknown enum value"))
    }
}

impl DynamoItem for ExecutionRecord {
    const TABLE: &'static str = "tpf_execution";

    fn attribute_names() -> &'static [&'static str] {
        &[
            "tenant_id",
            "execution_id",
            "execution_key",
            "pipeline_id",
            "contract_version",
            "release_version",
            "result_shape",
            "status",
            "version",
            "current_step_index",
            "attempt",
            "lease_owner",
            "lease_expires_epoch_ms",
            "next_due_epoch_ms",
            "last_transition_key",
            "input_payload_json",
            "await_unit_id",
            "result_payload_json",
            "error_code",
            "error_message",
            "created_at_epoch_ms",
            "updated_at_epoch_ms",
            "ttl_epoch_s",
            execution_attr::REDRIVE_INTENT,
            execution_attr::FAILED_STEP_INDEX,
            execution_attr::FAILED_COMMAND_ID,
            execution_attr::REDRIVE_TARGET_COMMAND_ID,
            execution_attr::REDRIVE_REASON,
            execution_attr::FIRST_CIRCUIT_DEFERRED_AT_EPOCH_MS,
            execution_attr::CIRCUIT_DEFERRAL_COUNT,
            execution_attr::CIRCUIT_IDENTITY,
            execution_attr::INPUT_SHAPE,
            execution_attr::INPUT_PAYLOAD_REFERENCE,
            execution_attr::INPUT_PAYLOAD_DIGEST,
            execution_attr::INPUT_PAYLOAD_TYPE_ID,
            execution_attr::INPUT_PAYLOAD_ENCODING,
            execution_attr::INPUT_PIPELINE_VERSION,
            execution_attr::INPUT_PIPELINE_REPLAY_MODE,
            execution_attr::INPUT_PIPELINE_CACHE_POLICY,
            execution_attr::INITIAL_INPUT_SHAPE,
            execution_attr::INITIAL_INPUT_PAYLOAD_JSON,
            execution_attr::INITIAL_INPUT_PAYLOAD_REFERENCE,
            execution_attr::INITIAL_INPUT_PAYLOAD_DIGEST,
            execution_attr::INITIAL_INPUT_PAYLOAD_TYPE_ID,
            execution_attr::INITIAL_INPUT_PAYLOAD_ENCODING,
            execution_attr::INITIAL_INPUT_PIPELINE_VERSION,
            execution_attr::INITIAL_INPUT_PIPELINE_REPLAY_MODE,
            execution_attr::INITIAL_INPUT_PIPELINE_CACHE_POLICY,
            execution_attr::RESULT_PAYLOAD_REFERENCE,
            execution_attr::RESULT_PAYLOAD_DIGEST,
        ]
    }

    fn to_item(&self) -> Item {
        let mut w = Writer(self.carried.clone());
        w.s("tenant_id", &self.tenant_id)
            .s("execution_id", &self.execution_id)
            .s("execution_key", &self.execution_key)
            .s("pipeline_id", &self.pipeline_id)
            .s("contract_version", &self.contract_version)
            .s("release_version", &self.release_version)
            .s("result_shape", self.result_shape.as_str())
            .s("status", self.status.as_str())
            .n("version", self.version)
            .n("current_step_index", i64::from(self.current_step_index))
            .n("attempt", i64::from(self.attempt))
            .opt_s("lease_owner", self.lease_owner.as_deref())
            .n("lease_expires_epoch_ms", self.lease_expires_epoch_ms)
            .n("next_due_epoch_ms", self.next_due_epoch_ms)
            .opt_s("last_transition_key", self.last_transition_key.as_deref())
            .json("input_payload_json", &self.input_payload)
            .opt_s("await_unit_id", self.await_unit_id.as_deref())
            .opt_json("result_payload_json", self.result_payload.as_ref())
            .opt_s("error_code", self.error_code.as_deref())
            .opt_s("error_message", self.error_message.as_deref())
            .n("created_at_epoch_ms", self.created_at_epoch_ms)
            .n("updated_at_epoch_ms", self.updated_at_epoch_ms)
            .n("ttl_epoch_s", self.ttl_epoch_s)
            .s(execution_attr::REDRIVE_INTENT, &self.redrive_intent)
            .n(execution_attr::FAILED_STEP_INDEX, self.failed_step_index)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        Ok(Self {
            redrive_intent: r
                .opt_s(execution_attr::REDRIVE_INTENT)?
                .unwrap_or_else(replay),
            failed_step_index: r.n_or(
                execution_attr::FAILED_STEP_INDEX,
                execution_attr::NO_FAILED_STEP,
            )?,
            carried: execution_attr::CARRIED
                .iter()
                .filter_map(|name| Some(((*name).to_owned(), item.get(*name)?.clone())))
                .collect(),
            tenant_id: r.s("tenant_id")?,
            execution_id: r.s("execution_id")?,
            execution_key: r.s("execution_key")?,
            pipeline_id: r.s("pipeline_id")?,
            contract_version: r.s("contract_version")?,
            release_version: r.s("release_version")?,
            result_shape: r.parsed("result_shape", ResultShape::parse)?,
            status: r.parsed("status", ExecutionStatus::parse)?,
            version: r.n("version")?,
            current_step_index: r.u32("current_step_index")?,
            attempt: r.u32("attempt")?,
            lease_owner: r.opt_s("lease_owner")?,
            lease_expires_epoch_ms: r.n_or("lease_expires_epoch_ms", 0)?,
            next_due_epoch_ms: r.n("next_due_epoch_ms")?,
            last_transition_key: r.opt_s("last_transition_key")?,
            input_payload: r.json("input_payload_json")?,
            await_unit_id: r.opt_s("await_unit_id")?,
            result_payload: r.opt_json("result_payload_json")?,
            error_code: r.opt_s("error_code")?,
            error_message: r.opt_s("error_message")?,
            created_at_epoch_ms: r.n("created_at_epoch_ms")?,
            updated_at_epoch_ms: r.n("updated_at_epoch_ms")?,
            ttl_epoch_s: r.n("ttl_epoch_s")?,
        })
    }
}

impl DynamoItem for AwaitUnitRecord {
    const TABLE: &'static str = "tpf_await_unit";

    fn attribute_names() -> &'static [&'static str] {
        &[
            "tenant_id",
            "unit_id",
            "execution_id",
            "step_id",
            "step_index",
            "cardinality",
            "version",
            "status",
            "primary_interaction_id",
            "expected_item_count",
            "completed_item_count",
            "completed_item_keys",
            "dispatch_complete",
            "created_at_epoch_ms",
            "updated_at_epoch_ms",
            "ttl_epoch_s",
        ]
    }

    fn to_item(&self) -> Item {
        Writer::default()
            .s("tenant_id", &self.tenant_id)
            .s("unit_id", &self.unit_id)
            .s("execution_id", &self.execution_id)
            .s("step_id", &self.step_id)
            .n("step_index", i64::from(self.step_index))
            .s("cardinality", &self.cardinality)
            .n("version", self.version)
            .s("status", self.status.as_str())
            .opt_s(
                "primary_interaction_id",
                self.primary_interaction_id.as_deref(),
            )
            .opt_n("expected_item_count", self.expected_item_count)
            .n("completed_item_count", self.completed_item_count)
            .ss("completed_item_keys", &self.completed_item_keys)
            .b("dispatch_complete", self.dispatch_complete)
            .n("created_at_epoch_ms", self.created_at_epoch_ms)
            .n("updated_at_epoch_ms", self.updated_at_epoch_ms)
            .n("ttl_epoch_s", self.ttl_epoch_s)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        Ok(Self {
            tenant_id: r.s("tenant_id")?,
            unit_id: r.s("unit_id")?,
            execution_id: r.s("execution_id")?,
            step_id: r.s("step_id")?,
            step_index: r.u32("step_index")?,
            cardinality: r.s("cardinality")?,
            version: r.n("version")?,
            status: r.parsed("status", AwaitUnitStatus::parse)?,
            primary_interaction_id: r.opt_s("primary_interaction_id")?,
            expected_item_count: r.opt_n("expected_item_count")?,
            completed_item_count: r.n_or("completed_item_count", 0)?,
            completed_item_keys: r.ss("completed_item_keys")?,
            dispatch_complete: r.b("dispatch_complete")?,
            created_at_epoch_ms: r.n("created_at_epoch_ms")?,
            updated_at_epoch_ms: r.n("updated_at_epoch_ms")?,
            ttl_epoch_s: r.n("ttl_epoch_s")?,
        })
    }
}

impl DynamoItem for AwaitInteractionRecord {
    const TABLE: &'static str = "tpf_await_interaction";

    fn attribute_names() -> &'static [&'static str] {
        &[
            interaction_attr::TENANT_ID,
            interaction_attr::INTERACTION_ID,
            interaction_attr::EXECUTION_ID,
            "step_id",
            "step_index",
            "output_type",
            "transport_output_type",
            interaction_attr::CORRELATION_ID,
            "causation_id",
            "idempotency_key",
            "version",
            interaction_attr::STATUS,
            "request_payload_json",
            "response_payload_json",
            "unit_id",
            "item_index",
            "actor",
            "assignee",
            "group_name",
            "transport_type",
            "transport_metadata_json",
            "deadline_epoch_ms",
            "created_at_epoch_ms",
            "updated_at_epoch_ms",
            "ttl_epoch_s",
        ]
    }

    fn to_item(&self) -> Item {
        let metadata = serde_json::to_value(&self.transport_metadata).unwrap_or(Value::Null);
        Writer::default()
            .s(interaction_attr::TENANT_ID, &self.tenant_id)
            .s(interaction_attr::INTERACTION_ID, &self.interaction_id)
            .s(interaction_attr::EXECUTION_ID, &self.execution_id)
            .s("step_id", &self.step_id)
            .n("step_index", i64::from(self.step_index))
            .opt_s("output_type", self.output_type.as_deref())
            .opt_s(
                "transport_output_type",
                self.transport_output_type.as_deref(),
            )
            .s(interaction_attr::CORRELATION_ID, &self.correlation_id)
            .opt_s("causation_id", self.causation_id.as_deref())
            .s("idempotency_key", &self.idempotency_key)
            .n("version", self.version)
            .s(interaction_attr::STATUS, self.status.as_str())
            .opt_json("request_payload_json", self.request_payload.as_ref())
            .opt_json("response_payload_json", self.response_payload.as_ref())
            .opt_s("unit_id", self.unit_id.as_deref())
            .opt_n("item_index", self.item_index.map(i64::from))
            .opt_s("actor", self.actor.as_deref())
            .opt_s("assignee", self.assignee.as_deref())
            .opt_s("group_name", self.group.as_deref())
            .opt_s("transport_type", self.transport_type.as_deref())
            .json("transport_metadata_json", &metadata)
            .opt_n("deadline_epoch_ms", self.deadline_epoch_ms)
            .n("created_at_epoch_ms", self.created_at_epoch_ms)
            .n("updated_at_epoch_ms", self.updated_at_epoch_ms)
            .n("ttl_epoch_s", self.ttl_epoch_s)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        let transport_metadata = match r.opt_json("transport_metadata_json")? {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(value) => serde_json::from_value(value)
                .map_err(|_| Reader::err("transport_metadata_json", "expected string map"))?,
        };
        Ok(Self {
            tenant_id: r.s(interaction_attr::TENANT_ID)?,
            execution_id: r.s(interaction_attr::EXECUTION_ID)?,
            step_id: r.s("step_id")?,
            step_index: r.u32("step_index")?,
            output_type: r.opt_s("output_type")?,
            interaction_id: r.s(interaction_attr::INTERACTION_ID)?,
            correlation_id: r.s(interaction_attr::CORRELATION_ID)?,
            causation_id: r.opt_s("causation_id")?,
            idempotency_key: r.s("idempotency_key")?,
            version: r.n("version")?,
            status: r.parsed(interaction_attr::STATUS, AwaitInteractionStatus::parse)?,
            request_payload: r.opt_json("request_payload_json")?,
            response_payload: r.opt_json("response_payload_json")?,
            unit_id: r.opt_s("unit_id")?,
            item_index: r.opt_u32("item_index")?,
            actor: r.opt_s("actor")?,
            assignee: r.opt_s("assignee")?,
            group: r.opt_s("group_name")?,
            transport_type: r.opt_s("transport_type")?,
            transport_metadata,
            deadline_epoch_ms: r.opt_n("deadline_epoch_ms")?,
            created_at_epoch_ms: r.n("created_at_epoch_ms")?,
            updated_at_epoch_ms: r.n("updated_at_epoch_ms")?,
            ttl_epoch_s: r.n("ttl_epoch_s")?,
            transport_output_type: r.opt_s("transport_output_type")?,
        })
    }
}

/// Release rows live in `tpf_release_registry` under `registry_key = tenant#pipelineId`,
/// `registry_sort = release:<releaseVersion>`, `record_type = RELEASE`, exactly as
/// `DynamoPipelineReleaseRegistry.toReleaseItem` writes them: all 17 attributes, artifact
/// strings `""` when empty, `contract_json` the text `null` without a contract. The status is not
/// stored (`activated_at_epoch_ms` is written but never read): it is folded from activation
/// events on read ([`PipelineReleaseRecord::with_latest_activation`]). The reader requires what
/// `toReleaseRecord` requires, so a row it accepts is one TPF can read: one unreadable row
/// breaks TPF's `active()` and `list()` for its whole pipeline.
impl DynamoItem for PipelineReleaseRecord {
    const TABLE: &'static str = "tpf_release_registry";

    fn attribute_names() -> &'static [&'static str] {
        &[
            "registry_key",
            "registry_sort",
            "record_type",
            "tenant_id",
            "pipeline_id",
            "contract_version",
            "release_version",
            "primary_artifact_id",
            "primary_artifact_digest",
            "primary_artifact_uri",
            "primary_artifact_size_bytes",
            "primary_artifact_checksum",
            "descriptor_json",
            "contract_json",
            "created_at_epoch_ms",
            "updated_at_epoch_ms",
            "activated_at_epoch_ms",
        ]
    }

    fn to_item(&self) -> Item {
        let descriptor = release_descriptor_form(&self.descriptor).unwrap_or(Value::Null);
        let contract = self
            .contract
            .as_ref()
            .map_or_else(|| "null".to_owned(), jackson_compact);
        Writer::default()
            .s(
                "registry_key",
                &ids::registry_key(&self.tenant_id, &self.pipeline_id),
            )
            .s(
                "registry_sort",
                &ids::release_sort_key(&self.release_version),
            )
            .s("record_type", RELEASE_RECORD)
            .s("tenant_id", &self.tenant_id)
            .s("pipeline_id", &self.pipeline_id)
            .s("contract_version", &self.contract_version)
            .s("release_version", &self.release_version)
            .s("primary_artifact_id", &self.primary_artifact_id)
            .s("primary_artifact_digest", &self.primary_artifact_digest)
            .s("primary_artifact_uri", &self.primary_artifact_uri)
            .n(
                "primary_artifact_size_bytes",
                self.primary_artifact_size_bytes,
            )
            .s("primary_artifact_checksum", &self.primary_artifact_checksum)
            .s("descriptor_json", &jackson_compact(&descriptor))
            .s("contract_json", &contract)
            .n("created_at_epoch_ms", self.created_at_epoch_ms)
            .n("updated_at_epoch_ms", self.updated_at_epoch_ms)
            .n("activated_at_epoch_ms", self.activated_at_epoch_ms)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        let release_version = r.tpf_s("release_version")?;
        let descriptor_text = r.tpf_s("descriptor_json")?;
        let descriptor = serde_json::from_str(&descriptor_text)
            .ok()
            .and_then(|d| release_descriptor_form(&d))
            .ok_or_else(|| Reader::err("descriptor_json", "not a release descriptor"))?;
        let contract_text = r.tpf_s("contract_json")?;
        let contract = match serde_json::from_str::<Value>(&contract_text) {
            Ok(Value::Null) => None,
            Ok(document) => Some(
                contract_descriptor_form(&document)
                    .ok_or_else(|| Reader::err("contract_json", "not a contract descriptor"))?,
            ),
            Err(_) => return Err(Reader::err("contract_json", "not JSON")),
        };
        Ok(Self {
            tenant_id: r.tpf_s("tenant_id")?,
            pipeline_id: r.tpf_s("pipeline_id")?,
            contract_version: r.tpf_s("contract_version")?,
            release_version,
            status: ReleaseStatus::Registered,
            descriptor,
            primary_artifact_id: r.tpf_s("primary_artifact_id")?,
            primary_artifact_digest: r.tpf_s("primary_artifact_digest")?,
            primary_artifact_uri: r.artifact_uri()?,
            primary_artifact_size_bytes: r.tpf_n("primary_artifact_size_bytes")?,
            primary_artifact_checksum: r.tpf_s("primary_artifact_checksum")?,
            contract,
            created_at_epoch_ms: r.tpf_n("created_at_epoch_ms")?,
            updated_at_epoch_ms: r.tpf_n("updated_at_epoch_ms")?,
            activated_at_epoch_ms: 0,
        })
    }
}

/// `record_type` of a release row and of an activation row.
pub const RELEASE_RECORD: &str = "RELEASE";
pub const ACTIVATION_RECORD: &str = "ACTIVATION";

/// An activation row as `toActivationItem` writes it (7 attributes); `latestActivation` reads
/// back only its release version and time.
impl DynamoItem for ReleaseActivationEvent {
    const TABLE: &'static str = "tpf_release_registry";

    fn attribute_names() -> &'static [&'static str] {
        &[
            "registry_key",
            "registry_sort",
            "record_type",
            "tenant_id",
            "pipeline_id",
            "release_version",
            "activated_at_epoch_ms",
        ]
    }

    fn to_item(&self) -> Item {
        Writer::default()
            .s(
                "registry_key",
                &ids::registry_key(&self.tenant_id, &self.pipeline_id),
            )
            .s(
                "registry_sort",
                &ids::activation_sort_key(self.activated_at_epoch_ms, &self.release_version),
            )
            .s("record_type", ACTIVATION_RECORD)
            .s("tenant_id", &self.tenant_id)
            .s("pipeline_id", &self.pipeline_id)
            .s("release_version", &self.release_version)
            .n("activated_at_epoch_ms", self.activated_at_epoch_ms)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        let event = Self {
            tenant_id: r.opt_s("tenant_id")?.unwrap_or_default(),
            pipeline_id: r.opt_s("pipeline_id")?.unwrap_or_default(),
            release_version: r.tpf_s("release_version")?,
            activated_at_epoch_ms: r.tpf_n("activated_at_epoch_ms")?,
        };
        event
            .check()
            .map_err(|_| Reader::err("activated_at_epoch_ms", "not a valid activation"))?;
        Ok(event)
    }
}
