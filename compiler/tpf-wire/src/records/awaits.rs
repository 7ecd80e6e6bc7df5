//! `AwaitUnitRecord` and `AwaitInteractionRecord` and their DynamoDB rows.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::item::{DynamoItem, Item, ItemError, Reader, Writer};
use super::*;

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
    pub use super::super::attr::{EXECUTION_ID, INTERACTION_ID, TENANT_ID};
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

impl DynamoItem for AwaitUnitRecord {
    const TABLE: &'static str = "tpf_await_unit";

    fn attribute_names() -> &'static [&'static str] {
        &[
            attr::TENANT_ID,
            attr::UNIT_ID,
            attr::EXECUTION_ID,
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
            attr::CREATED_AT_EPOCH_MS,
            attr::UPDATED_AT_EPOCH_MS,
            attr::TTL_EPOCH_S,
        ]
    }

    fn to_item(&self) -> Item {
        Writer::default()
            .s(attr::TENANT_ID, &self.tenant_id)
            .s(attr::UNIT_ID, &self.unit_id)
            .s(attr::EXECUTION_ID, &self.execution_id)
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
            .n(attr::CREATED_AT_EPOCH_MS, self.created_at_epoch_ms)
            .n(attr::UPDATED_AT_EPOCH_MS, self.updated_at_epoch_ms)
            .n(attr::TTL_EPOCH_S, self.ttl_epoch_s)
            .done()
    }

    fn from_item(item: &Item) -> Result<Self, ItemError> {
        let r = Reader(item);
        Ok(Self {
            tenant_id: r.s(attr::TENANT_ID)?,
            unit_id: r.s(attr::UNIT_ID)?,
            execution_id: r.s(attr::EXECUTION_ID)?,
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
            created_at_epoch_ms: r.n(attr::CREATED_AT_EPOCH_MS)?,
            updated_at_epoch_ms: r.n(attr::UPDATED_AT_EPOCH_MS)?,
            ttl_epoch_s: r.n(attr::TTL_EPOCH_S)?,
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
            attr::UNIT_ID,
            "item_index",
            "actor",
            "assignee",
            "group_name",
            "transport_type",
            "transport_metadata_json",
            "deadline_epoch_ms",
            attr::CREATED_AT_EPOCH_MS,
            attr::UPDATED_AT_EPOCH_MS,
            attr::TTL_EPOCH_S,
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
            .opt_s(attr::UNIT_ID, self.unit_id.as_deref())
            .opt_n("item_index", self.item_index.map(i64::from))
            .opt_s("actor", self.actor.as_deref())
            .opt_s("assignee", self.assignee.as_deref())
            .opt_s("group_name", self.group.as_deref())
            .opt_s("transport_type", self.transport_type.as_deref())
            .json("transport_metadata_json", &metadata)
            .opt_n("deadline_epoch_ms", self.deadline_epoch_ms)
            .n(attr::CREATED_AT_EPOCH_MS, self.created_at_epoch_ms)
            .n(attr::UPDATED_AT_EPOCH_MS, self.updated_at_epoch_ms)
            .n(attr::TTL_EPOCH_S, self.ttl_epoch_s)
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
            unit_id: r.opt_s(attr::UNIT_ID)?,
            item_index: r.opt_u32("item_index")?,
            actor: r.opt_s("actor")?,
            assignee: r.opt_s("assignee")?,
            group: r.opt_s("group_name")?,
            transport_type: r.opt_s("transport_type")?,
            transport_metadata,
            deadline_epoch_ms: r.opt_n("deadline_epoch_ms")?,
            created_at_epoch_ms: r.n(attr::CREATED_AT_EPOCH_MS)?,
            updated_at_epoch_ms: r.n(attr::UPDATED_AT_EPOCH_MS)?,
            ttl_epoch_s: r.n(attr::TTL_EPOCH_S)?,
            transport_output_type: r.opt_s("transport_output_type")?,
        })
    }
}
