//! The in-memory store: TPF's tables as ordered maps behind one mutex, with the same write
//! conditions as the DynamoDB stores. One file per store trait, like the DynamoDB store:
//! `execution.rs`, `awaits.rs`, `registry.rs`; the tables and what they share here.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use tpf_wire::records::{
    AwaitInteractionRecord, AwaitUnitRecord, ExecutionRecord, PipelineReleaseRecord,
    ReleaseActivationEvent,
};

use super::StoreResult;

mod awaits;
mod execution;
mod registry;

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

    /// Every execution record, expired or not, in key order (a scan): what a harness counts
    /// TPF's executions with.
    pub fn scan_executions(&self) -> Vec<ExecutionRecord> {
        self.tables().executions.values().cloned().collect()
    }

    /// Every await interaction, in key order (a scan): a harness derives the interaction
    /// table's stream from two scans.
    pub fn scan_interactions(&self) -> Vec<AwaitInteractionRecord> {
        self.tables().interactions.values().cloned().collect()
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
