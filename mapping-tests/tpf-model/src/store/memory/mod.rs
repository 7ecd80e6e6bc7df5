//! The in-memory store: TPF's tables as ordered maps behind one mutex, with the same write
//! conditions as the DynamoDB stores.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use tpf_wire::ids;
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
    ExecutionRecord, ExecutionStatus, PipelineReleaseRecord, ReleaseActivationEvent, ReleaseStatus,
};

use super::{
    AwaitStore, CreateExecutionCommand, CreateOrGet, ExecutionStore, RegistryError,
    ReleaseRegistry, StoreResult,
};

type Key = (String, String);

#[derive(Debug, Default)]
struct Tables {
    executions: BTreeMap<Key, ExecutionRecord>,
    /// scoped execution key → (tenant, execution id)
    execution_keys: BTreeMap<String, Key>,
    units: BTreeMap<Key, AwaitUnitRecord>,
    interactions: BTreeMap<Key, AwaitInteractionRecord>,
    /// idempotency / correlation lookup key → (tenant, interaction id)
    interaction_keys: BTreeMap<String, Key>,
    releases: BTreeMap<(String, String, String), PipelineReleaseRecord>,
    /// (registry key, activation sort key) → event; the sort key orders activations.
    activations: BTreeMap<(String, String), ReleaseActivationEvent>,
}

/// Every store trait over process memory, with the same conditions as TPF's Dynamo stores.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    tables: Mutex<Tables>,
}

fn ttl_ok(ttl_epoch_s: i64, now_ms: i64) -> bool {
    ttl_epoch_s > now_ms.div_euclid(1000)
}

/// `DynamoExecutionStateStore.truncate`: error messages are cut at 512 characters.
fn truncate_error(message: &str) -> String {
    message.chars().take(512).collect()
}

/// The `REMOVE #result, #errorCode, #errorMessage, #leaseOwner` + `#leaseExpires = 0` tail
/// shared by the await releases.
fn release_lease_and_outcome(record: &mut ExecutionRecord) {
    record.result_payload = None;
    record.error_code = None;
    record.error_message = None;
    record.lease_owner = None;
    record.lease_expires_epoch_ms = 0;
}

fn key(tenant_id: &str, id: &str) -> Key {
    (tenant_id.to_owned(), id.to_owned())
}

fn claimable(record: &ExecutionRecord, now_ms: i64) -> bool {
    record.next_due_epoch_ms <= now_ms
        && (record.lease_owner.is_none() || record.lease_expires_epoch_ms <= now_ms)
        && !record.status.unclaimable()
        && ttl_ok(record.ttl_epoch_s, now_ms)
}

impl InMemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// [`ExecutionStore::get_execution`] read in place: a harness that looks at a few fields of
    /// the record after every change need not copy its payloads each time.
    pub fn read_execution<R>(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
        read: impl FnOnce(&ExecutionRecord) -> R,
    ) -> Option<R> {
        self.tables()
            .executions
            .get(&key(tenant_id, execution_id))
            .filter(|r| r.live_at(now_ms))
            .map(read)
    }

    fn tables(&self) -> MutexGuard<'_, Tables> {
        // A poisoned lock only means another test thread panicked; the data is still coherent
        // because every write below is a single in-place update.
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `update` when `condition` and the TTL condition hold, bumping version and
    /// `updated_at`: the shape of every conditional `UpdateItem` in `DynamoExecutionStateStore`.
    fn update_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
        condition: impl FnOnce(&ExecutionRecord) -> bool,
        update: impl FnOnce(&mut ExecutionRecord),
    ) -> StoreResult<Option<ExecutionRecord>> {
        let mut tables = self.tables();
        let Some(record) = tables.executions.get_mut(&key(tenant_id, execution_id)) else {
            return Ok(None);
        };
        if !ttl_ok(record.ttl_epoch_s, now_ms) || !condition(record) {
            return Ok(None);
        }
        update(record);
        record.version += 1;
        record.updated_at_epoch_ms = now_ms;
        Ok(Some(record.clone()))
    }

    fn update_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
        condition: impl FnOnce(&AwaitUnitRecord) -> bool,
        update: impl FnOnce(&mut AwaitUnitRecord),
    ) -> StoreResult<Option<AwaitUnitRecord>> {
        let mut tables = self.tables();
        let Some(unit) = tables.units.get_mut(&key(tenant_id, unit_id)) else {
            return Ok(None);
        };
        if !condition(unit) {
            return Ok(None);
        }
        update(unit);
        unit.version += 1;
        unit.updated_at_epoch_ms = now_ms;
        Ok(Some(unit.clone()))
    }
}

impl ExecutionStore for InMemoryStore {
    fn create_or_get_execution(
        &self,
        cmd: &CreateExecutionCommand,
    ) -> StoreResult<CreateOrGet<ExecutionRecord>> {
        let mut tables = self.tables();
        let scoped = ids::scoped_execution_key(&cmd.tenant_id, &cmd.execution_key);
        if let Some(existing) = tables.execution_keys.get(&scoped).cloned() {
            if let Some(record) = tables.executions.get(&existing) {
                if ttl_ok(record.ttl_epoch_s, cmd.now_ms) {
                    return Ok(CreateOrGet {
                        record: record.clone(),
                        duplicate: true,
                    });
                }
            }
        }
        let record = cmd.new_record();
        let row = key(&cmd.tenant_id, &cmd.execution_id);
        tables.execution_keys.insert(scoped, row.clone());
        tables.executions.insert(row, record.clone());
        Ok(CreateOrGet {
            record,
            duplicate: false,
        })
    }

    fn get_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        Ok(self
            .tables()
            .executions
            .get(&key(tenant_id, execution_id))
            .filter(|r| r.live_at(now_ms))
            .cloned())
    }

    fn claim_lease(
        &self,
        tenant_id: &str,
        execution_id: &str,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| claimable(r, now_ms),
            |r| {
                r.status = ExecutionStatus::Running;
                r.lease_owner = Some(owner.to_owned());
                r.lease_expires_epoch_ms = now_ms + lease_ms;
            },
        )
    }

    fn mark_succeeded(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        result: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::Succeeded;
                r.last_transition_key = Some(transition_key.to_owned());
                r.result_payload = Some(result.clone());
                r.lease_expires_epoch_ms = 0;
                r.next_due_epoch_ms = now_ms;
                r.error_code = None;
                r.error_message = None;
                r.lease_owner = None;
                r.await_unit_id = None;
            },
        )
    }

    fn mark_waiting_external(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        await_unit_id: &str,
        await_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::WaitingExternal;
                r.last_transition_key = Some(transition_key.to_owned());
                r.current_step_index = await_step_index;
                r.next_due_epoch_ms = i64::MAX;
                r.await_unit_id = Some(await_unit_id.to_owned());
                r.lease_expires_epoch_ms = 0;
                r.result_payload = None;
                r.error_code = None;
                r.error_message = None;
                r.lease_owner = None;
            },
        )
    }

    fn mark_await_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| {
                r.status == ExecutionStatus::WaitingExternal
                    && r.await_unit_id
                        .as_deref()
                        .is_none_or(|unit| unit == await_unit_id)
            },
            |r| {
                r.status = ExecutionStatus::Queued;
                r.current_step_index = next_step_index;
                r.next_due_epoch_ms = now_ms;
                // The unit id stays: the resumed segment loads its input from the unit.
                r.await_unit_id = Some(await_unit_id.to_owned());
                release_lease_and_outcome(r);
            },
        )
    }

    fn mark_await_item_continuations_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        input_payload: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| {
                r.status == ExecutionStatus::WaitingExternal
                    && r.await_unit_id.as_deref() == Some(await_unit_id)
            },
            |r| {
                r.status = ExecutionStatus::Queued;
                r.current_step_index = next_step_index;
                r.next_due_epoch_ms = now_ms;
                r.input_payload = input_payload.clone();
                r.await_unit_id = None;
                release_lease_and_outcome(r);
            },
        )
    }

    fn schedule_retry(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        next_attempt: u32,
        next_due_epoch_ms: i64,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::WaitRetry;
                r.attempt = next_attempt;
                r.next_due_epoch_ms = next_due_epoch_ms;
                r.last_transition_key = Some(transition_key.to_owned());
                r.error_code = Some(error_code.to_owned());
                r.error_message = Some(truncate_error(error_message));
                r.result_payload = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn mark_terminal_failure(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        status: ExecutionStatus,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        if !matches!(status, ExecutionStatus::Failed | ExecutionStatus::Dlq) {
            return Ok(None);
        }
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = status;
                r.next_due_epoch_ms = now_ms;
                r.last_transition_key = Some(transition_key.to_owned());
                r.error_code = Some(error_code.to_owned());
                r.error_message = Some(truncate_error(error_message));
                r.result_payload = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn mark_remote_outcome_unknown(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version,
            |r| {
                r.status = ExecutionStatus::RemoteOutcomeUnknown;
                r.next_due_epoch_ms = i64::MAX;
                r.error_code = Some(error_code.to_owned());
                r.error_message = Some(truncate_error(error_message));
                r.result_payload = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn redrive_terminal_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        allow_failed: bool,
        transition_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        self.update_execution(
            tenant_id,
            execution_id,
            now_ms,
            |r| r.version == expected_version && r.status.redrivable(allow_failed),
            |r| {
                r.status = ExecutionStatus::Queued;
                r.attempt += 1;
                r.next_due_epoch_ms = now_ms;
                r.last_transition_key = Some(transition_key.to_owned());
                r.result_payload = None;
                r.error_code = None;
                r.error_message = None;
                r.lease_owner = None;
                r.lease_expires_epoch_ms = 0;
            },
        )
    }

    fn find_due_executions(&self, now_ms: i64, limit: usize) -> StoreResult<Vec<ExecutionRecord>> {
        // Key order stands in for DynamoDB's scan order; ties on the due time go by tenant and
        // id (TPF leaves them in scan order) so runs are reproducible.
        let candidates = limit.saturating_mul(3);
        let mut due: Vec<ExecutionRecord> = self
            .tables()
            .executions
            .values()
            .filter(|r| claimable(r, now_ms))
            .take(candidates)
            .cloned()
            .collect();
        due.sort_by(|a, b| {
            (a.next_due_epoch_ms, &a.tenant_id, &a.execution_id).cmp(&(
                b.next_due_epoch_ms,
                &b.tenant_id,
                &b.execution_id,
            ))
        });
        due.truncate(limit);
        Ok(due)
    }

    fn get_execution_by_key(
        &self,
        tenant_id: &str,
        execution_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>> {
        let tables = self.tables();
        Ok(tables
            .execution_keys
            .get(&ids::scoped_execution_key(tenant_id, execution_key))
            .and_then(|row| tables.executions.get(row))
            .filter(|r| r.live_at(now_ms))
            .cloned())
    }
}

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

impl ReleaseRegistry for InMemoryStore {
    fn register_release(
        &self,
        release: &PipelineReleaseRecord,
    ) -> Result<PipelineReleaseRecord, RegistryError> {
        let mut tables = self.tables();
        let row = (
            release.tenant_id.clone(),
            release.pipeline_id.clone(),
            release.release_version.clone(),
        );
        if let Some(existing) = tables.releases.get(&row) {
            if existing.same_immutable_metadata(release) {
                return Ok(existing.clone());
            }
            return Err(RegistryError::Conflict(format!(
                "release {} of {} is already registered with different metadata",
                release.release_version, release.pipeline_id
            )));
        }
        let mut stored = release.clone();
        stored.status = ReleaseStatus::Registered;
        stored.activated_at_epoch_ms = 0;
        tables.releases.insert(row, stored.clone());
        Ok(stored)
    }

    fn activate_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
        now_ms: i64,
    ) -> Result<PipelineReleaseRecord, RegistryError> {
        let mut tables = self.tables();
        let row = (
            tenant_id.to_owned(),
            pipeline_id.to_owned(),
            release_version.to_owned(),
        );
        let Some(release) = tables.releases.get(&row).cloned() else {
            return Err(RegistryError::NotFound(format!(
                "release {release_version} of {pipeline_id}"
            )));
        };
        let event_key = (
            ids::registry_key(tenant_id, pipeline_id),
            ids::activation_sort_key(now_ms, release_version),
        );
        if tables.activations.contains_key(&event_key) {
            // Put with attribute_not_exists: the same activation at the same instant is a no-op.
            return Ok(with_activation(release, now_ms));
        }
        tables.activations.insert(
            event_key,
            ReleaseActivationEvent {
                tenant_id: tenant_id.to_owned(),
                pipeline_id: pipeline_id.to_owned(),
                release_version: release_version.to_owned(),
                activated_at_epoch_ms: now_ms,
            },
        );
        Ok(with_activation(release, now_ms))
    }

    fn active_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        let tables = self.tables();
        let registry = ids::registry_key(tenant_id, pipeline_id);
        let latest = tables
            .activations
            .iter()
            .rev()
            .find(|((reg, _), _)| *reg == registry)
            .map(|(_, event)| event.clone());
        Ok(latest.and_then(|event| {
            tables
                .releases
                .get(&(
                    tenant_id.to_owned(),
                    pipeline_id.to_owned(),
                    event.release_version.clone(),
                ))
                .cloned()
                .map(|release| with_activation(release, event.activated_at_epoch_ms))
        }))
    }

    fn get_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        let active = self.active_release(tenant_id, pipeline_id)?;
        let tables = self.tables();
        Ok(tables
            .releases
            .get(&(
                tenant_id.to_owned(),
                pipeline_id.to_owned(),
                release_version.to_owned(),
            ))
            .cloned()
            .map(|release| match active {
                Some(active) if active.release_version == release.release_version => active,
                _ => release,
            }))
    }

    fn activation_events(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Vec<ReleaseActivationEvent>> {
        let registry = ids::registry_key(tenant_id, pipeline_id);
        Ok(self
            .tables()
            .activations
            .iter()
            .filter(|((reg, _), _)| *reg == registry)
            .map(|(_, event)| event.clone())
            .collect())
    }
}

fn with_activation(mut release: PipelineReleaseRecord, at_ms: i64) -> PipelineReleaseRecord {
    release.status = ReleaseStatus::Active;
    release.activated_at_epoch_ms = at_ms;
    release
}
