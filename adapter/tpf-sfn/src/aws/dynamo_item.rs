//! The model's [`Item`] ↔ the SDK's attribute maps, plus the index attributes TPF's
//! interaction store writes next to the record (its GSIs are sparse: terminal interactions lose
//! their pending and deadline keys).

use aws_sdk_dynamodb::types::AttributeValue;
use tpf_wire::records::{AwaitInteractionRecord, DynamoItem};

pub use tpf_sfn_wakepath::aws::item::{from_sdk, to_sdk, to_sdk_value, SdkItem};

pub fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

pub fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// `len:a:len:b`, TPF's scoped index keys.
fn scoped(tenant_id: &str, value: &str) -> String {
    format!(
        "{}:{}:{}:{}",
        tenant_id.len(),
        tenant_id,
        value.len(),
        value
    )
}

/// Pending and deadline index attributes, removed on a terminal transition.
pub const PENDING_INDEX_ATTRIBUTES: &[&str] = &[
    "query_pending_tenant_key",
    "query_pending_assignee_key",
    "query_pending_group_key",
    "query_pending_step_key",
    "query_pending_deadline_sort",
    "query_deadline_key",
    "query_deadline_sort",
];

/// `%019d(deadline)#tenant#interactionId`: the deadline index sorts by (deadline, tenant, id).
pub fn deadline_sort(deadline_ms: i64, tenant_id: &str, interaction_id: &str) -> String {
    format!("{deadline_ms:019}#{tenant_id}#{interaction_id}")
}

/// The interaction row as TPF writes it: the record plus its GSI keys.
pub fn interaction_item(record: &AwaitInteractionRecord) -> SdkItem {
    let mut item = to_sdk(&record.to_item());
    let tenant = &record.tenant_id;
    let id = &record.interaction_id;
    if let Some(unit) = &record.unit_id {
        let index = record.item_index.map_or(i64::from(i32::MAX), i64::from);
        let causation = record.causation_id.as_deref().unwrap_or("");
        item.insert("query_unit_key".into(), s(scoped(tenant, unit)));
        item.insert(
            "query_unit_sort".into(),
            s(format!("{index:010}#{causation}#{id}")),
        );
    }
    if !record.status.terminal() {
        let deadline = record.deadline_epoch_ms.unwrap_or(i64::MAX);
        item.insert("query_pending_tenant_key".into(), s(tenant.clone()));
        item.insert(
            "query_pending_deadline_sort".into(),
            s(format!("{deadline:019}#{id}")),
        );
        if let Some(assignee) = &record.assignee {
            item.insert(
                "query_pending_assignee_key".into(),
                s(scoped(tenant, assignee)),
            );
        }
        if let Some(group) = &record.group {
            item.insert("query_pending_group_key".into(), s(scoped(tenant, group)));
        }
        item.insert(
            "query_pending_step_key".into(),
            s(scoped(tenant, &record.step_id)),
        );
        // Without a deadline an interaction never times out: it stays out of the index.
        if let Some(deadline) = record.deadline_epoch_ms {
            item.insert("query_deadline_key".into(), s("active"));
            item.insert(
                "query_deadline_sort".into(),
                s(deadline_sort(deadline, tenant, id)),
            );
        }
    }
    item
}

pub fn unit_query_key(tenant_id: &str, unit_id: &str) -> String {
    scoped(tenant_id, unit_id)
}
