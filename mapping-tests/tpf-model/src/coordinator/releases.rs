//! Release registration and activation (`PipelineReleaseRegistry`, `HostedReleaseAdminResource`).

use crate::store::{AwaitStore, ExecutionStore, ReleaseRegistry};
use tpf_wire::records::PipelineReleaseRecord;

use super::{Coordinator, CoordinatorResult};

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    pub fn register_release(
        &mut self,
        release: &PipelineReleaseRecord,
    ) -> CoordinatorResult<PipelineReleaseRecord> {
        Ok(self.store.register_release(release)?)
    }

    /// Appends an activation event. Only new submissions see it: pinned executions keep theirs.
    pub fn activate_release(
        &mut self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
        now_ms: i64,
    ) -> CoordinatorResult<PipelineReleaseRecord> {
        Ok(self
            .store
            .activate_release(tenant_id, pipeline_id, release_version, now_ms)?)
    }

    pub fn active_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> CoordinatorResult<Option<PipelineReleaseRecord>> {
        Ok(self.store.active_release(tenant_id, pipeline_id)?)
    }
}
