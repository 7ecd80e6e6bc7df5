//! TPF's release registry and its activation log: `ReleaseRegistry` as TPF's Dynamo
//! registry writes and reads them.

use tpf_wire::ids;
use tpf_wire::records::{PipelineReleaseRecord, ReleaseActivationEvent, ReleaseStatus};

use super::InMemoryStore;
use crate::store::{RegistryError, ReleaseRegistry, StoreResult};

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
