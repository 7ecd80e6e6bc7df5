//! What people and other systems do to TPF during a scenario: submit, complete awaits,
//! re-drive, activate releases. Each returns the trace entries it caused.

use serde_json::json;

use super::trace::Entry;
use tpf_model::actions::ActionHost;
use tpf_model::coordinator::{AwaitCompletion, SubmitRequest};
use tpf_model::store::InMemoryStore;

/// TPF record changes committed since log position `from`, as trace entries.
pub(crate) fn records_since(host: &ActionHost<InMemoryStore>, from: usize) -> Vec<Entry> {
    host.coordinator().log().transitions()[from..]
        .iter()
        .map(|t| Entry::Record {
            at_ms: t.at_ms,
            execution_id: t.execution_id.clone(),
            version: t.version,
            status: t.status.to_string(),
            step: t.step_index,
            attempt: t.attempt,
            cause: t.cause.to_string(),
        })
        .collect()
}

fn actor(at_ms: i64, what: String) -> Entry {
    Entry::Actor { at_ms, what }
}

pub fn submit(
    host: &mut ActionHost<InMemoryStore>,
    tenant: &str,
    pipeline_id: &str,
    key: &str,
    now_ms: i64,
) -> (Option<String>, Vec<Entry>) {
    let before = host.coordinator().log().transitions().len();
    let req = SubmitRequest {
        tenant_id: tenant.to_string(),
        pipeline_id: pipeline_id.to_string(),
        execution_key: Some(key.to_string()),
        input_payload: json!({ "order": key }),
    };
    match host.coordinator_mut().submit(&req, now_ms) {
        Ok(r) => {
            let mut entries = vec![actor(
                now_ms,
                format!(
                    "submit key {key} → {}{}",
                    r.execution_id,
                    if r.duplicate {
                        " (duplicate: same execution, nothing new)"
                    } else {
                        ""
                    }
                ),
            )];
            entries.extend(records_since(host, before));
            (Some(r.execution_id), entries)
        }
        Err(e) => (
            None,
            vec![actor(now_ms, format!("submit key {key} rejected: {e}"))],
        ),
    }
}

/// Completes every open interaction of the unit the execution is parked on (one for a scalar
/// await, one per item for an itemized one).
pub fn complete_await(
    host: &mut ActionHost<InMemoryStore>,
    tenant: &str,
    execution_id: &str,
    now_ms: i64,
    label: &str,
) -> Vec<Entry> {
    let before = host.coordinator().log().transitions().len();
    let interactions = host
        .coordinator()
        .await_interactions(tenant, execution_id, now_ms)
        .unwrap_or_default();
    let mut entries = Vec::new();
    if interactions.is_empty() {
        entries.push(actor(
            now_ms,
            format!("complete await of {execution_id} ({label}): nothing to complete"),
        ));
    }
    for i in interactions {
        let cmd = AwaitCompletion {
            tenant_id: tenant.to_string(),
            interaction_id: Some(i.interaction_id.clone()),
            correlation_id: None,
            response_payload: json!({ "decision": "accepted", "by": label }),
            actor: Some(label.to_string()),
        };
        let what = match host.coordinator_mut().complete_await(&cmd, now_ms) {
            Ok(r) if r.duplicate => format!(
                "complete await {} ({label}) → duplicate, ignored",
                i.step_id
            ),
            Ok(r) => format!(
                "complete await {} ({label}) → {}{}",
                i.step_id,
                r.interaction.status,
                if r.released { ", parent released" } else { "" }
            ),
            Err(e) => format!("complete await {} ({label}) rejected: {e}", i.step_id),
        };
        entries.push(actor(now_ms, what));
    }
    entries.extend(records_since(host, before));
    entries
}

pub fn redrive(
    host: &mut ActionHost<InMemoryStore>,
    tenant: &str,
    execution_id: &str,
    now_ms: i64,
) -> Vec<Entry> {
    let before = host.coordinator().log().transitions().len();
    let what = match host
        .coordinator_mut()
        .redrive(tenant, execution_id, None, true, now_ms)
    {
        Ok(r) => format!(
            "TPF re-drive (allowFailed) of {execution_id} → {} v{} attempt {}",
            r.status, r.version, r.attempt
        ),
        Err(e) => format!("TPF re-drive of {execution_id} rejected: {e}"),
    };
    let mut entries = vec![actor(now_ms, what)];
    entries.extend(records_since(host, before));
    entries
}

pub fn activate(
    host: &mut ActionHost<InMemoryStore>,
    tenant: &str,
    identity: &tpf_wire::Identity,
    now_ms: i64,
) -> Vec<Entry> {
    let release = tpf_model::coordinator::local_release(tenant, identity, now_ms);
    let c = host.coordinator_mut();
    let what = match c.register_release(&release).and_then(|_| {
        c.activate_release(
            tenant,
            &identity.pipeline_id,
            &identity.release_version,
            now_ms,
        )
    }) {
        Ok(_) => format!("activate release {}", identity.release_version),
        Err(e) => format!("activate release {} failed: {e}", identity.release_version),
    };
    vec![actor(now_ms, what)]
}
