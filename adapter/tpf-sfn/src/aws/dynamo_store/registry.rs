//! `PipelineReleaseRegistry` over `tpf_release_registry`: immutable release rows plus
//! append-only activation events, both keyed by `registry_key`/`registry_sort`.

use aws_sdk_dynamodb::types::{ConditionCheck, TransactWriteItem};
use tpf_model::store::{RegistryError, ReleaseRegistry, StoreError, StoreResult};
use tpf_wire::ids;
use tpf_wire::records::attr;
use tpf_wire::records::{DynamoItem, PipelineReleaseRecord, ReleaseActivationEvent, ReleaseStatus};

use super::{decode, DynamoStore, KeyQuery};
use crate::aws::dynamo_item::{s, to_sdk};

fn with_activation(mut release: PipelineReleaseRecord, at_ms: i64) -> PipelineReleaseRecord {
    release.status = ReleaseStatus::Active;
    release.activated_at_epoch_ms = at_ms;
    release
}

impl DynamoStore {
    /// A pipeline's activation events, oldest first when `forward`.
    fn activations(&self, tenant_id: &str, pipeline_id: &str, forward: bool) -> KeyQuery<'_> {
        KeyQuery {
            table: &self.tables.release,
            index: None,
            condition: "#registry_key = :rk AND begins_with(#registry_sort, :prefix)",
            values: vec![
                (":rk", s(ids::registry_key(tenant_id, pipeline_id))),
                (":prefix", s("activation:")),
            ],
            forward,
        }
    }

    fn latest_activation(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Option<ReleaseActivationEvent>> {
        self.query_first(self.activations(tenant_id, pipeline_id, false))?
            .as_ref()
            .map(decode)
            .transpose()
    }

    fn release_row(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        self.get(
            &self.tables.release,
            vec![
                (
                    attr::REGISTRY_KEY,
                    s(ids::registry_key(tenant_id, pipeline_id)),
                ),
                (
                    attr::REGISTRY_SORT,
                    s(ids::release_sort_key(release_version)),
                ),
            ],
        )?
        .as_ref()
        .map(decode)
        .transpose()
    }
}

impl ReleaseRegistry for DynamoStore {
    fn register_release(
        &self,
        release: &PipelineReleaseRecord,
    ) -> Result<PipelineReleaseRecord, RegistryError> {
        let mut stored = release.clone();
        stored.status = ReleaseStatus::Registered;
        stored.activated_at_epoch_ms = 0;
        let created = self.put_if(
            &self.tables.release,
            to_sdk(&stored.to_item()),
            "attribute_not_exists(#registry_key) AND attribute_not_exists(#registry_sort)",
            Vec::new(),
        )?;
        if created {
            return Ok(stored);
        }
        let existing = self
            .release_row(
                &release.tenant_id,
                &release.pipeline_id,
                &release.release_version,
            )?
            .ok_or_else(|| {
                RegistryError::Store(StoreError::new("release row refused but unreadable"))
            })?;
        if existing.same_immutable_metadata(release) {
            Ok(existing)
        } else {
            Err(RegistryError::Conflict(format!(
                "release {} of {} is already registered with different metadata",
                release.release_version, release.pipeline_id
            )))
        }
    }

    /// `ConditionCheck(release exists)` + `Put(activation event, attribute_not_exists)` in one
    /// transaction; a cancelled transaction with the release present is the same activation
    /// at the same instant, a no-op.
    fn activate_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
        now_ms: i64,
    ) -> Result<PipelineReleaseRecord, RegistryError> {
        let not_found =
            || RegistryError::NotFound(format!("release {release_version} of {pipeline_id}"));
        let event = ReleaseActivationEvent {
            tenant_id: tenant_id.to_owned(),
            pipeline_id: pipeline_id.to_owned(),
            release_version: release_version.to_owned(),
            activated_at_epoch_ms: now_ms,
        };
        let check = ConditionCheck::builder()
            .table_name(&self.tables.release)
            .key(
                attr::REGISTRY_KEY,
                s(ids::registry_key(tenant_id, pipeline_id)),
            )
            .key(
                attr::REGISTRY_SORT,
                s(ids::release_sort_key(release_version)),
            )
            .condition_expression("attribute_exists(#registry_key)")
            .expression_attribute_names("#registry_key", attr::REGISTRY_KEY)
            .build()
            .map_err(|e| StoreError::caused_by("building the activation check", e))?;
        let items = vec![
            TransactWriteItem::builder().condition_check(check).build(),
            Self::conditional_put(
                &self.tables.release,
                to_sdk(&event.to_item()),
                "attribute_not_exists(#registry_key) AND attribute_not_exists(#registry_sort)",
                Vec::new(),
            )?,
        ];
        self.transact(items)?;
        let release = self
            .release_row(tenant_id, pipeline_id, release_version)?
            .ok_or_else(not_found)?;
        Ok(with_activation(release, now_ms))
    }

    fn active_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        let Some(event) = self.latest_activation(tenant_id, pipeline_id)? else {
            return Ok(None);
        };
        Ok(self
            .release_row(tenant_id, pipeline_id, &event.release_version)?
            .map(|release| with_activation(release, event.activated_at_epoch_ms)))
    }

    fn get_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>> {
        let Some(release) = self.release_row(tenant_id, pipeline_id, release_version)? else {
            return Ok(None);
        };
        match self.latest_activation(tenant_id, pipeline_id)? {
            Some(event) if event.release_version == release_version => {
                Ok(Some(with_activation(release, event.activated_at_epoch_ms)))
            }
            _ => Ok(Some(release)),
        }
    }

    fn activation_events(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Vec<ReleaseActivationEvent>> {
        self.query_all(self.activations(tenant_id, pipeline_id, true))?
            .iter()
            .map(decode)
            .collect()
    }
}
