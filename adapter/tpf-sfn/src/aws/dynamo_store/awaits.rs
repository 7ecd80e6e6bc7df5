//! `AwaitUnitStore` and `AwaitInteractionStore` over `tpf_await_unit`, `tpf_await_interaction`
//! (with TPF's GSIs) and `tpf_await_interaction_key`.

use std::collections::HashMap;
use tpf_wire::records::attr;

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::Value;
use tpf_model::store::{AwaitStore, CreateOrGet, StoreError, StoreResult};
use tpf_wire::ids;
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus, DynamoItem,
};

use super::expression::Write;
use super::{decode, DynamoStore, KeyQuery};
use crate::aws::dynamo_item::{
    deadline_sort, interaction_item, n, s, to_sdk, unit_query_key, SdkItem,
    PENDING_INDEX_ATTRIBUTES,
};
use crate::aws::tables::{GSI_BY_UNIT, GSI_PENDING_BY_DEADLINE, GSI_PENDING_BY_TENANT};

impl DynamoStore {
    fn update_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
        condition: &str,
        update: &str,
        mut values: Vec<(&'static str, AttributeValue)>,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        values.extend([
            (":now", n(now_ms)),
            (":one", n(1)),
            (":waiting", s(AwaitUnitStatus::WaitingExternal.as_str())),
        ]);
        self.update(
            &self.tables.await_unit,
            vec![(attr::TENANT_ID, s(tenant_id)), (attr::UNIT_ID, s(unit_id))],
            Write {
                update: update.to_owned(),
                condition: format!("attribute_exists(#tenant_id) AND ({condition})"),
                values,
            },
        )
    }

    fn interaction_by_lookup(
        &self,
        lookup_key: String,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        let Some(row) = self.get(
            &self.tables.await_interaction_key,
            vec![("lookup_key", s(lookup_key))],
        )?
        else {
            return Ok(None);
        };
        match (row.get(attr::TENANT_ID), row.get(attr::INTERACTION_ID)) {
            (Some(AttributeValue::S(tenant)), Some(AttributeValue::S(id))) => {
                self.get_interaction(tenant, id)
            }
            _ => Ok(None),
        }
    }

    fn lookup_item(kind: &str, key: String, record: &AwaitInteractionRecord) -> SdkItem {
        HashMap::from([
            ("lookup_key".to_owned(), s(key)),
            ("lookup_kind".to_owned(), s(kind)),
            (attr::TENANT_ID.to_owned(), s(record.tenant_id.clone())),
            (
                attr::INTERACTION_ID.to_owned(),
                s(record.interaction_id.clone()),
            ),
            (attr::TTL_EPOCH_S.to_owned(), n(record.ttl_epoch_s)),
        ])
    }
}

impl AwaitStore for DynamoStore {
    fn create_or_get_unit(
        &self,
        unit: &AwaitUnitRecord,
        now_ms: i64,
    ) -> StoreResult<CreateOrGet<AwaitUnitRecord>> {
        let created = self.put_if(
            &self.tables.await_unit,
            to_sdk(&unit.to_item()),
            "(attribute_not_exists(#tenant_id) AND attribute_not_exists(#unit_id)) OR #ttl_epoch_s < :now_s",
            vec![(":now_s", n(now_ms.div_euclid(1000)))],
        )?;
        if created {
            return Ok(CreateOrGet {
                record: unit.clone(),
                duplicate: false,
            });
        }
        match self.get_unit(&unit.tenant_id, &unit.unit_id)? {
            Some(record) => Ok(CreateOrGet {
                record,
                duplicate: true,
            }),
            None => Err(StoreError::new(format!(
                "await unit {} was refused but cannot be read",
                unit.unit_id
            ))),
        }
    }

    fn get_unit(&self, tenant_id: &str, unit_id: &str) -> StoreResult<Option<AwaitUnitRecord>> {
        self.get(
            &self.tables.await_unit,
            vec![(attr::TENANT_ID, s(tenant_id)), (attr::UNIT_ID, s(unit_id))],
        )?
        .as_ref()
        .map(decode)
        .transpose()
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
            "#status = :waiting AND NOT contains(#completed_item_keys, :key)",
            "SET #updated_at_epoch_ms = :now ADD #completed_item_count :one, #version :one, #completed_item_keys :keys",
            vec![
                (":key", s(item_key)),
                (":keys", AttributeValue::Ss(vec![item_key.to_owned()])),
            ],
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
            "(#status = :waiting OR #status = :completed) AND NOT contains(#completed_item_keys, :key)",
            "SET #updated_at_epoch_ms = :now ADD #version :one, #completed_item_keys :keys",
            vec![
                (":key", s(continuation_key)),
                (":keys", AttributeValue::Ss(vec![continuation_key.to_owned()])),
                (":completed", s(AwaitUnitStatus::Completed.as_str())),
            ],
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
            "#status = :waiting",
            "SET #expected_item_count = :expected, #dispatch_complete = :true, \
             #updated_at_epoch_ms = :now, #version = #version + :one",
            vec![
                (":expected", n(expected_item_count)),
                (":true", AttributeValue::Bool(true)),
            ],
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
            "#status = :waiting AND #dispatch_complete = :true AND #completed_item_count >= #expected_item_count",
            "SET #status = :completed, #updated_at_epoch_ms = :now, #version = #version + :one",
            vec![
                (":true", AttributeValue::Bool(true)),
                (":completed", s(AwaitUnitStatus::Completed.as_str())),
            ],
        )
    }

    fn mark_unit_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.mark_unit_terminal(tenant_id, unit_id, AwaitUnitStatus::Completed, now_ms)
    }

    fn mark_unit_terminal(
        &self,
        tenant_id: &str,
        unit_id: &str,
        status: AwaitUnitStatus,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        self.update_unit(
            tenant_id,
            unit_id,
            now_ms,
            "attribute_exists(#unit_id)",
            "SET #status = :status, #updated_at_epoch_ms = :now, #version = #version + :one",
            vec![(":status", s(status.as_str()))],
        )
    }

    fn create_or_get_interaction(
        &self,
        interaction: &AwaitInteractionRecord,
    ) -> StoreResult<CreateOrGet<AwaitInteractionRecord>> {
        let idempotency = ids::idempotency_lookup_key(
            &interaction.tenant_id,
            &interaction.step_id,
            &interaction.idempotency_key,
        );
        let correlation =
            ids::correlation_lookup_key(&interaction.tenant_id, &interaction.correlation_id);
        let items = vec![
            Self::conditional_put(
                &self.tables.await_interaction,
                interaction_item(interaction),
                "attribute_not_exists(#tenant_id) AND attribute_not_exists(#interaction_id)",
                Vec::new(),
            )?,
            Self::conditional_put(
                &self.tables.await_interaction_key,
                Self::lookup_item("idempotency", idempotency.clone(), interaction),
                "attribute_not_exists(#lookup_key)",
                Vec::new(),
            )?,
            Self::conditional_put(
                &self.tables.await_interaction_key,
                Self::lookup_item("correlation", correlation.clone(), interaction),
                "attribute_not_exists(#lookup_key)",
                Vec::new(),
            )?,
        ];
        if self.transact(items)? {
            return Ok(CreateOrGet {
                record: interaction.clone(),
                duplicate: false,
            });
        }
        let existing = match self.interaction_by_lookup(idempotency)? {
            Some(found) => Some(found),
            None => self.interaction_by_lookup(correlation)?,
        };
        existing
            .map(|record| CreateOrGet {
                record,
                duplicate: true,
            })
            .ok_or_else(|| {
                StoreError::new(format!(
                    "await interaction {} was refused but no duplicate is visible",
                    interaction.interaction_id
                ))
            })
    }

    fn get_interaction(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        self.get(
            &self.tables.await_interaction,
            vec![
                (attr::TENANT_ID, s(tenant_id)),
                (attr::INTERACTION_ID, s(interaction_id)),
            ],
        )?
        .as_ref()
        .map(decode)
        .transpose()
    }

    fn find_interaction_by_correlation(
        &self,
        tenant_id: &str,
        correlation_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>> {
        self.interaction_by_lookup(ids::correlation_lookup_key(tenant_id, correlation_id))
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
        let mut update = String::from(
            "SET #status = :status, #version = #version + :one, #updated_at_epoch_ms = :now",
        );
        let mut values = vec![
            (":status", s(status.as_str())),
            (":one", n(1)),
            (":now", n(now_ms)),
            (":expected", n(expected_version)),
        ];
        if let Some(payload) = response_payload {
            update.push_str(", #response_payload_json = :response");
            values.push((":response", s(payload.to_string())));
        }
        if let Some(actor) = actor {
            update.push_str(", #actor = :actor");
            values.push((":actor", s(actor)));
        }
        if status.terminal() {
            let removed: Vec<String> = PENDING_INDEX_ATTRIBUTES
                .iter()
                .map(|a| format!("#{a}"))
                .collect();
            update.push_str(" REMOVE ");
            update.push_str(&removed.join(", "));
        }
        self.update(
            &self.tables.await_interaction,
            vec![
                (attr::TENANT_ID, s(tenant_id)),
                (attr::INTERACTION_ID, s(interaction_id)),
            ],
            Write {
                update,
                condition: "attribute_exists(#tenant_id) AND #version = :expected".to_owned(),
                values,
            },
        )
    }

    fn interactions_for_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let rows = self.query_all(KeyQuery {
            table: &self.tables.await_interaction,
            index: Some(GSI_BY_UNIT),
            condition: "#query_unit_key = :key",
            values: vec![(":key", s(unit_query_key(tenant_id, unit_id)))],
            forward: true,
        })?;
        let mut found: Vec<AwaitInteractionRecord> =
            rows.iter().map(decode).collect::<StoreResult<_>>()?;
        // The index sorts by item index, causation, id; the SPI promises item index, then id.
        found.sort_by(|a, b| {
            (a.item_index.unwrap_or(u32::MAX), &a.interaction_id)
                .cmp(&(b.item_index.unwrap_or(u32::MAX), &b.interaction_id))
        });
        Ok(found)
    }

    /// The deadline index: `query_deadline_key = "active" AND query_deadline_sort <= "%019d(now)~"`,
    /// then TPF's non-terminal / TTL filter.
    fn find_timed_out(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<AwaitInteractionRecord>> {
        let rows = self.query_all(KeyQuery {
            table: &self.tables.await_interaction,
            index: Some(GSI_PENDING_BY_DEADLINE),
            condition: "#query_deadline_key = :active AND #query_deadline_sort <= :upper",
            values: vec![
                (":active", s("active")),
                (":upper", s(format!("{now_ms:019}~"))),
            ],
            forward: true,
        })?;
        let now_s = now_ms.div_euclid(1000);
        let mut found = Vec::new();
        for row in &rows {
            let record: AwaitInteractionRecord = decode(row)?;
            if !record.status.terminal()
                && record.deadline_epoch_ms.is_some_and(|d| d <= now_ms)
                && record.ttl_epoch_s > now_s
            {
                found.push(record);
            }
        }
        found.sort_by(|a, b| {
            deadline_sort(
                a.deadline_epoch_ms.unwrap_or(0),
                &a.tenant_id,
                &a.interaction_id,
            )
            .cmp(&deadline_sort(
                b.deadline_epoch_ms.unwrap_or(0),
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
        let rows = self.query_all(KeyQuery {
            table: &self.tables.await_interaction,
            index: Some(GSI_PENDING_BY_TENANT),
            condition: "#query_pending_tenant_key = :tenant",
            values: vec![(":tenant", s(tenant_id))],
            forward: true,
        })?;
        let mut found = Vec::new();
        for row in &rows {
            let record: AwaitInteractionRecord = decode(row)?;
            if !record.status.terminal() {
                found.push(record);
            }
            if found.len() >= limit {
                break;
            }
        }
        Ok(found)
    }
}
