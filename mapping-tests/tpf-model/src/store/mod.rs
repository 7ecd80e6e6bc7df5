//! TPF's storage SPIs (`ExecutionStateStore`, `AwaitUnitStore`/`AwaitInteractionStore`,
//! `PipelineReleaseRegistry`) with the exact write conditions of the Dynamo stores
//! (`DynamoExecutionStateStore`, `DynamoAwaitInteractionStore`, the await unit and release
//! registry stores), and an in-memory implementation.
//!
//! Every conditional write answers `Ok(None)` when its condition fails: TPF returns
//! `Optional.empty()` there, and callers decide what a lost race means. `Err` is reserved for the
//! store itself failing (a DynamoDB-backed store's throttling or transport errors). The traits
//! are synchronous and object-safe so an async DynamoDB client can sit behind them.

#[cfg(feature = "conformance")]
pub mod conformance;
mod memory;

pub use memory::InMemoryStore;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
    ExecutionRecord, ExecutionStatus, PipelineReleaseRecord, ReleaseActivationEvent, ResultShape,
};

/// The store could not answer (never a failed condition): what it was doing, and the error of
/// the backend underneath when there is one.
#[derive(Debug, Clone)]
pub struct StoreError {
    context: String,
    // Shared, so that the coordinator's errors stay `Clone`; `source()` hands out the backend's
    // error itself, not the `Arc`, so callers can downcast it.
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "store unavailable: {}", self.context)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl StoreError {
    pub fn new(context: impl Into<String>) -> Self {
        Self {
            context: context.into(),
            cause: None,
        }
    }

    pub fn caused_by(
        context: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            context: context.into(),
            cause: Some(Arc::new(source)),
        }
    }
}

/// Equal when they say the same: the backend's error types need not be comparable.
impl PartialEq for StoreError {
    fn eq(&self, other: &Self) -> bool {
        self.context == other.context
            && self.cause.as_ref().map(ToString::to_string)
                == other.cause.as_ref().map(ToString::to_string)
    }
}

impl Eq for StoreError {}

pub type StoreResult<T> = Result<T, StoreError>;

/// A record plus whether it already existed.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateOrGet<T> {
    pub record: T,
    pub duplicate: bool,
}

/// `ExecutionCreateCommand`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateExecutionCommand {
    pub tenant_id: String,
    pub execution_id: String,
    pub execution_key: String,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub result_shape: ResultShape,
    pub input_payload: Value,
    pub initial_step_index: u32,
    pub now_ms: i64,
    pub ttl_epoch_s: i64,
}

impl CreateExecutionCommand {
    /// The record `createOrGetExecution` writes when the key is new: QUEUED, version 0, due now.
    pub fn new_record(&self) -> ExecutionRecord {
        let cmd = self;
        ExecutionRecord {
            tenant_id: cmd.tenant_id.clone(),
            execution_id: cmd.execution_id.clone(),
            execution_key: cmd.execution_key.clone(),
            pipeline_id: cmd.pipeline_id.clone(),
            contract_version: cmd.contract_version.clone(),
            release_version: cmd.release_version.clone(),
            result_shape: cmd.result_shape,
            status: ExecutionStatus::Queued,
            version: 0,
            current_step_index: cmd.initial_step_index,
            attempt: 0,
            lease_owner: None,
            lease_expires_epoch_ms: 0,
            next_due_epoch_ms: cmd.now_ms,
            last_transition_key: None,
            input_payload: cmd.input_payload.clone(),
            await_unit_id: None,
            result_payload: None,
            error_code: None,
            error_message: None,
            created_at_epoch_ms: cmd.now_ms,
            updated_at_epoch_ms: cmd.now_ms,
            ttl_epoch_s: cmd.ttl_epoch_s,
            redrive_intent: tpf_wire::records::execution_attr::REPLAY.into(),
            failed_step_index: tpf_wire::records::execution_attr::NO_FAILED_STEP,
            carried: Default::default(),
        }
    }
}

/// `ExecutionStateStore`.
pub trait ExecutionStore {
    /// Looks the scoped key up first; creates QUEUED v0 `nextDue=now` when absent.
    fn create_or_get_execution(
        &self,
        cmd: &CreateExecutionCommand,
    ) -> StoreResult<CreateOrGet<ExecutionRecord>>;

    /// Expired rows read as absent.
    fn get_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    /// `next_due<=now AND (no lease_owner OR lease_expires<=now) AND
    /// status∉{SUCCEEDED,WAITING_EXTERNAL,FAILED,DLQ} AND ttl ok`.
    fn claim_lease(
        &self,
        tenant_id: &str,
        execution_id: &str,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    fn mark_succeeded(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        result: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    #[allow(clippy::too_many_arguments)]
    fn mark_waiting_external(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        transition_key: &str,
        await_unit_id: &str,
        await_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    /// No version check: `status=WAITING_EXTERNAL AND (no await_unit_id OR await_unit_id=:unit)`.
    fn mark_await_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    /// `status=WAITING_EXTERNAL AND await_unit_id=:unit`; replaces the input, removes the unit.
    fn mark_await_item_continuations_completed(
        &self,
        tenant_id: &str,
        execution_id: &str,
        await_unit_id: &str,
        next_step_index: u32,
        input_payload: &Value,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    #[allow(clippy::too_many_arguments)]
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
    ) -> StoreResult<Option<ExecutionRecord>>;

    /// `status` is FAILED or DLQ; keeps the await unit and step index.
    #[allow(clippy::too_many_arguments)]
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
    ) -> StoreResult<Option<ExecutionRecord>>;

    /// `markRemoteOutcomeUnknown`: a remote transition passed its caller deadline without a
    /// confirmed worker disposition. `version=:expected`; sets `REMOTE_OUTCOME_UNKNOWN`, the
    /// error, `next_due` = never, no lease, no result. Nothing claims or sweeps it afterwards;
    /// only an operator's re-drive with `allow_failed` moves it on.
    fn mark_remote_outcome_unknown(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        error_code: &str,
        error_message: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    /// `version=:expected AND (status=DLQ [OR status IN (FAILED, REMOTE_OUTCOME_UNKNOWN) if
    /// allow_failed])`.
    fn redrive_terminal_execution(
        &self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: i64,
        allow_failed: bool,
        transition_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;

    /// `findDueExecutions`: the first `3 × limit` claimable rows in scan order (not a full
    /// scan when more are due), sorted by next due time, at most `limit`.
    fn find_due_executions(&self, now_ms: i64, limit: usize) -> StoreResult<Vec<ExecutionRecord>>;

    /// `getExecutionByKey`: the live record stored under an execution key (a child execution of
    /// an item continuation is found by the key `ItemContinuationKey` names).
    fn get_execution_by_key(
        &self,
        tenant_id: &str,
        execution_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<ExecutionRecord>>;
}

/// `AwaitUnitStore` + `AwaitInteractionStore`.
pub trait AwaitStore {
    /// Put `(attribute_not_exists(tenant) AND attribute_not_exists(unit)) OR ttl < now`.
    fn create_or_get_unit(
        &self,
        unit: &AwaitUnitRecord,
        now_ms: i64,
    ) -> StoreResult<CreateOrGet<AwaitUnitRecord>>;

    fn get_unit(&self, tenant_id: &str, unit_id: &str) -> StoreResult<Option<AwaitUnitRecord>>;

    /// Non-terminal AND `NOT contains(completed_item_keys, :key)`: count +1, version +1.
    fn record_item_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        item_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>>;

    /// `recordItemContinuationCompleted`: the unit is WAITING_EXTERNAL or COMPLETED and does not
    /// hold `continuation_key` yet: adds it (the admitted-completion count does not change),
    /// version +1. `None` when the condition fails.
    fn record_item_continuation_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        continuation_key: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>>;

    /// Non-terminal: sets the expected count and the dispatch flag. (TPF's store then runs
    /// `completeIfReady` itself; the coordinator calls [`Self::complete_if_ready`] right after.)
    fn mark_dispatch_complete(
        &self,
        tenant_id: &str,
        unit_id: &str,
        expected_item_count: i64,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>>;

    /// Non-terminal AND dispatch complete AND completed >= expected: COMPLETED.
    fn complete_if_ready(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>>;

    /// Existence only.
    fn mark_unit_completed(
        &self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>>;

    /// Existence only.
    fn mark_unit_terminal(
        &self,
        tenant_id: &str,
        unit_id: &str,
        status: AwaitUnitStatus,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitUnitRecord>>;

    /// Dedup by `(tenant, stepId, idempotencyKey)` and `(tenant, correlationId)`; a duplicate
    /// returns the existing record found through the idempotency lookup.
    fn create_or_get_interaction(
        &self,
        interaction: &AwaitInteractionRecord,
    ) -> StoreResult<CreateOrGet<AwaitInteractionRecord>>;

    fn get_interaction(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>>;

    fn find_interaction_by_correlation(
        &self,
        tenant_id: &str,
        correlation_id: &str,
    ) -> StoreResult<Option<AwaitInteractionRecord>>;

    /// Version-conditioned status change (`AwaitInteractionStore.transition`); sets the response
    /// payload and actor when given.
    #[allow(clippy::too_many_arguments)]
    fn transition_interaction(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        expected_version: i64,
        status: AwaitInteractionStatus,
        response_payload: Option<&Value>,
        actor: Option<&str>,
        now_ms: i64,
    ) -> StoreResult<Option<AwaitInteractionRecord>>;

    /// `await-interaction-by-unit`: ordered by item index (scalar last), then interaction id.
    fn interactions_for_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
    ) -> StoreResult<Vec<AwaitInteractionRecord>>;

    /// Non-terminal interactions with `deadline <= now`, sorted by (deadline, tenant, id).
    fn find_timed_out(&self, now_ms: i64, limit: usize)
        -> StoreResult<Vec<AwaitInteractionRecord>>;

    /// `await-interaction-pending-by-tenant`: non-terminal interactions of one tenant, sorted by
    /// (deadline, interaction id), at most `limit` (the control plane's pending list).
    fn pending_interactions(
        &self,
        tenant_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<AwaitInteractionRecord>>;
}

/// Why a registry call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    /// Same (tenant, pipeline, releaseVersion) with different immutable metadata (HTTP 409).
    Conflict(String),
    /// Activation of an unregistered release (HTTP 404).
    NotFound(String),
    Store(StoreError),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Conflict(m) => write!(f, "release conflict: {m}"),
            Self::NotFound(m) => write!(f, "release not found: {m}"),
            Self::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Store(e) => e.source(),
            _ => None,
        }
    }
}

impl From<StoreError> for RegistryError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// `PipelineReleaseRegistry`: immutable release rows plus append-only activation events.
pub trait ReleaseRegistry {
    fn register_release(
        &self,
        release: &PipelineReleaseRecord,
    ) -> Result<PipelineReleaseRecord, RegistryError>;

    fn activate_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
        now_ms: i64,
    ) -> Result<PipelineReleaseRecord, RegistryError>;

    /// The release named by the latest activation event, with status ACTIVE.
    fn active_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>>;

    fn get_release(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
        release_version: &str,
    ) -> StoreResult<Option<PipelineReleaseRecord>>;

    fn activation_events(
        &self,
        tenant_id: &str,
        pipeline_id: &str,
    ) -> StoreResult<Vec<ReleaseActivationEvent>>;
}
