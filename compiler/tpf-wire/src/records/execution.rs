//! `ExecutionRecord` and its DynamoDB row (`tpf_execution`), with today's attribute names and
//! the keys of the payload, admission and index tables.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::item::{AttrValue, DynamoItem, Item, ItemError, Reader, Writer};
use super::*;

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

impl DynamoItem for ExecutionRecord {
    const TABLE: &'static str = "tpf_execution";

    fn attribute_names() -> &'static [&'static str] {
        &[
            attr::TENANT_ID,
            attr::EXECUTION_ID,
            "execution_key",
            attr::PIPELINE_ID,
            attr::CONTRACT_VERSION,
            attr::RELEASE_VERSION,
            "result_shape",
            "status",
            "version",
            "current_step_index",
            "attempt",
            "lease_owner",
            "lease_expires_epoch_ms",
            "next_due_epoch_ms",
            attr::LAST_TRANSITION_KEY,
            "input_payload_json",
            attr::AWAIT_UNIT_ID,
            "result_payload_json",
            "error_code",
            "error_message",
            attr::CREATED_AT_EPOCH_MS,
            attr::UPDATED_AT_EPOCH_MS,
            attr::TTL_EPOCH_S,
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
        w.s(attr::TENANT_ID, &self.tenant_id)
            .s(attr::EXECUTION_ID, &self.execution_id)
            .s("execution_key", &self.execution_key)
            .s(attr::PIPELINE_ID, &self.pipeline_id)
            .s(attr::CONTRACT_VERSION, &self.contract_version)
            .s(attr::RELEASE_VERSION, &self.release_version)
            .s("result_shape", self.result_shape.as_str())
            .s("status", self.status.as_str())
            .n("version", self.version)
            .n("current_step_index", i64::from(self.current_step_index))
            .n("attempt", i64::from(self.attempt))
            .opt_s("lease_owner", self.lease_owner.as_deref())
            .n("lease_expires_epoch_ms", self.lease_expires_epoch_ms)
            .n("next_due_epoch_ms", self.next_due_epoch_ms)
            .opt_s(
                attr::LAST_TRANSITION_KEY,
                self.last_transition_key.as_deref(),
            )
            .json("input_payload_json", &self.input_payload)
            .opt_s(attr::AWAIT_UNIT_ID, self.await_unit_id.as_deref())
            .opt_json("result_payload_json", self.result_payload.as_ref())
            .opt_s("error_code", self.error_code.as_deref())
            .opt_s("error_message", self.error_message.as_deref())
            .n(attr::CREATED_AT_EPOCH_MS, self.created_at_epoch_ms)
            .n(attr::UPDATED_AT_EPOCH_MS, self.updated_at_epoch_ms)
            .n(attr::TTL_EPOCH_S, self.ttl_epoch_s)
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
            tenant_id: r.s(attr::TENANT_ID)?,
            execution_id: r.s(attr::EXECUTION_ID)?,
            execution_key: r.s("execution_key")?,
            pipeline_id: r.s(attr::PIPELINE_ID)?,
            contract_version: r.s(attr::CONTRACT_VERSION)?,
            release_version: r.s(attr::RELEASE_VERSION)?,
            result_shape: r.parsed("result_shape", ResultShape::parse)?,
            status: r.parsed("status", ExecutionStatus::parse)?,
            version: r.n("version")?,
            current_step_index: r.u32("current_step_index")?,
            attempt: r.u32("attempt")?,
            lease_owner: r.opt_s("lease_owner")?,
            lease_expires_epoch_ms: r.n_or("lease_expires_epoch_ms", 0)?,
            next_due_epoch_ms: r.n("next_due_epoch_ms")?,
            last_transition_key: r.opt_s(attr::LAST_TRANSITION_KEY)?,
            input_payload: r.json("input_payload_json")?,
            await_unit_id: r.opt_s(attr::AWAIT_UNIT_ID)?,
            result_payload: r.opt_json("result_payload_json")?,
            error_code: r.opt_s("error_code")?,
            error_message: r.opt_s("error_message")?,
            created_at_epoch_ms: r.n(attr::CREATED_AT_EPOCH_MS)?,
            updated_at_epoch_ms: r.n(attr::UPDATED_AT_EPOCH_MS)?,
            ttl_epoch_s: r.n(attr::TTL_EPOCH_S)?,
        })
    }
}
