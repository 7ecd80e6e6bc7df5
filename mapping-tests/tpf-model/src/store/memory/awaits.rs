//! TPF's await unit and interaction tables with their key lookups: `AwaitStore` with the
//! Dynamo await store's conditions.

use serde_json::Value;

use tpf_wire::ids;
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
};

use super::{key, ttl_ok, InMemoryStore};
use crate::store::{AwaitStore, CreateOrGet, StoreResult};

impl AwaitStore for InMemoryStore {
    fn create_or_get_unit(
        &self,
        unit: &AwaitUnitRecord,
        now_ms: i64,
    ) -> StoreResult<CreateOrGet<AwaitUnitRecord>> {
        let mut tables = self.tables();
        let row = key(&unit.tenant_id, &unit.unit_id);
        if let Some(existing) = tables.units.get(&row) {
            if ttl_ok(existing.ttl_epoch_s, now_ms) {
                return Ok(CreateOrGet {
                    record: existing.clone(),
                    duplicate: true,
                });
            }
        }
        tables.units.insert(row, unit.clone());
        Ok(CreateOrGet {
            record: unit.clone(),
            duplicate: false,
        })
    }

    fn get_unit(&self, tenant_id: &str, unit_id: &str) -> StoreResult<Option<AwaitUnitRecord>> {
        Ok(self.tables().units.get(&key(tenant_id, unit_id)).cloned())
    }

    fn record_item_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        item_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            |u| !u.status.terminal() && !u.completed_item_keys.contains(item_key),
            |u| {
                u.completed_item_count += 1;
                u.completed_item_keys.insert(item_key.to_owned());
            },
        )
    }

    fn record_item_continuation_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        continuation_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            |u| {
                matches!(
                    u.status,
                    AwaitUnitStatus::WaitingExternal | AwaitUnitStatus::Completed
                ) && !u.completed_item_keys.contains(continuation_key)
            },
            |u| {
                u.completed_item_keys.insert(continuation_key.to_owned());
            },
        )
    }

    fn mark_dispatch_complete(
        &self,
        tenant_id: &str,
        unit_id: &str,
        expected_item_count: i64,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            |u| !u.status.terminal(),
            |u| {
                u.expected_item_count = Some(expected_item_count);
                u.dispatch_complete = true;
            },
        )
    }

    fn complete_if_ready(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            |u| {
                !u.status.terminal()
                    && u.dispatch_complete
                    && u.completed_item_count >= u.expected_item_count.unwrap_or(i64::MAX)
            },
            |u| u.status = AwaitUnitStatus::Completed,
        )
    }

    fn mark_unit_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            |_| true,
            |u| u.status = AwaitUnitStatus::Completed,
        )
    }

    fn mark_unit_terminal(
        &self,
        tenant_id: &str,
        unit_id: &str,
        status: AwaitUnitStatus,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(tenant_id, unit_id, now_ms, |_| true, |u| u.status = status)
    }

    fn create_or_get_interaction(
        &self,
        interaction: &AwaitInteractionRecord,
    ) -> StoreResult<CreateOrGet<AwaitInteractionRecord>> {
        let mut tables = self.tables();
        let idempotency = ids::idempotency_lookup_key(
            &interaction.tenant_id,
            &interaction.step_id,
            &interaction.idempotency_key,
        );
        let correlation =
            ids::correlation_lookup_key(&interaction.tenant_id, &interaction.correlation_id);
        let existing = tables
            .interaction_keys
            .get(&idempotency)
            .or_else(|| tables.interaction_keys.get(&correlation))
            .and_then(|row| tables.interactions.get(row))
            .cloned();
        if let Some(record) = existing {
            return Ok(CreateOrGet {
                record,
                duplicate: true,
            });
        }
        let row = key(&interaction.tenant_id, &interaction.interaction_id);
        tables.interaction_keys.insert(idempotency, row.clone());
        tables.interaction_keys.insert(correlation, row.clone());
        tables.interactions.insert(row, interaction.clone());
        Ok(CreateOrGet {
            record: interaction.clone(),
            duplicate: false,
        })
    }

    fn get_interaction(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        Ok(self
            .tables()
            .interactions
            .get(&key(tenant_id, interaction_id))
            .cloned())
    }

    fn find_interaction_by_correlation(
        &self,
        tenant_id: &str,
        correlation_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        let tables = self.tables();
        Ok(tables
            .interaction_keys
            .get(&ids::correlation_lookup_key(tenant_id, correlation_id))
            .and_then(|row| tables.interactions.get(row))
            .cloned())
    }

    fn transition_interaction(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        expected_version: i64,
        status: AwaitInteractionStatus,
        response_payload: Option<&Value>,
        actor: Option<&str>,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        let mut tables = self.tables();
        let Some(record) = tables.interactions.get_mut(&key(tenant_id, interaction_id)) else {
            return Ok(None);
        };
        if record.version != expected_version {
            return Ok(None);
        }
        record.status = status;
        if let Some(payload) = response_payload {
            record.response_payload = Some(payload.clone());
        }
        if let Some(actor) = actor {
            record.actor = Some(actor.to_owned());
        }
        record.version += 1;
        record.updated_at_epoch_ms = now_ms;
        Ok(Some(record.clone()))
    }

    fn interactions_for_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let mut found: Vec<AwaitInteractionRecord> = self
            .tables()
            .interactions
            .values()
            .filter(|i| i.tenant_id == tenant_id && i.unit_id.as_deref() == Some(unit_id))
            .cloned()
            .collect();
        found.sort_by(|a, b| {
            (a.item_index.unwrap_or(u32::MAX), &a.interaction_id)
                .cmp(&(b.item_index.unwrap_or(u32::MAX), &b.interaction_id))
        });
        Ok(found)
    }

    fn find_timed_out(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let mut found: Vec<AwaitInteractionRecord> = self
            .tables()
            .interactions
            .values()
            .filter(|i| {
                !i.status.terminal()
                    && i.deadline_epoch_ms.is_some_and(|d| d <= now_ms)
                    && ttl_ok(i.ttl_epoch_s, now_ms)
            })
            .cloned()
            .collect();
        found.sort_by(|a, b| {
            (a.deadline_epoch_ms, &a.tenant_id, &a.interaction_id).cmp(&(
                b.deadline_epoch_ms,
                &b.tenant_id,
                &b.interaction_id,
            ))
        });
        found.truncate(limit);
        Ok(found)
    }

    fn pending_interactions(
        &self,
        tenant_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let mut found: Vec<AwaitInteractionRecord> = self
            .tables()
            .interactions
            .values()
            .filter(|i| i.tenant_id == tenant_id && !i.status.terminal())
            .cloned()
            .collect();
        found.sort_by(|a, b| {
            (a.deadline_epoch_ms.unwrap_or(i64::MAX), &a.interaction_id)
                .cmp(&(b.deadline_epoch_ms.unwrap_or(i64::MAX), &b.interaction_id))
        });
        found.truncate(limit);
        Ok(found)
    }
}
