//! TPF's durable coordinator flows (`QueueAsyncCoordinator` and `QueueAsyncSubmissionFlow`,
//! `QueueAsyncSegmentPipeline`, `ExecutionFailureHandler`, `AwaitBoundaryAdmission`,
//! `QueueAsyncRedriveFlow`, `QueueAsyncSweepFlow`): submit, process work item, retry/backoff and
//! DLQ, await completion, re-drive, sweep, release registration and activation.
//!
//! Every operation takes `now_ms` (virtual time). Each flow is written against the store traits
//! only, so the same code runs over the in-memory store and a DynamoDB store.

pub mod admission;
mod awaits;
mod control_plane;
mod items;
mod redrive;
mod releases;
pub mod remote;
mod segment;
mod submit;
mod sweep;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use serde_json::{json, Value};
use tpf_wire::Identity;

use super::store::{AwaitStore, ExecutionStore, RegistryError, ReleaseRegistry, StoreError};
use super::transitions::{ActionCall, TransitionLog};
use super::worker::{PipelineDef, ScriptedWorker, TransitionResult};
pub use control_plane::{LocalControlPlane, WorkItem, WorkQueue};
pub use items::ItemChild;
pub use items::{
    AWAIT_ITEM_CONTINUATION_FAILED, AWAIT_PARENT_NOT_WAITING, ITEM_CONTINUATION_MAX_ATTEMPTS,
};
pub use submit::{normalize_tenant, plan_submission, resolve_execution_key, SubmissionPlan};
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, DeadLetterEnvelope, ExecutionRecord,
    ExecutionStatus, PipelineReleaseRecord, ReleaseStatus,
};

const DAY_S: i64 = 86_400;

/// `pipeline.orchestrator.idempotency-policy` (`OrchestratorIdempotencyPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdempotencyPolicy {
    /// The client's key when it sends one, else a key derived from the input.
    OptionalClientKey,
    /// Submissions without a key are refused.
    ClientKeyRequired,
    /// The client's key is ignored; the key is always derived from the input.
    ServerKeyOnly,
}

impl IdempotencyPolicy {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "OPTIONAL_CLIENT_KEY" => Some(Self::OptionalClientKey),
            "CLIENT_KEY_REQUIRED" => Some(Self::ClientKeyRequired),
            "SERVER_KEY_ONLY" => Some(Self::ServerKeyOnly),
            _ => None,
        }
    }
}

/// How the steps after an itemized await run for each item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemContinuations {
    /// The design the Action API assumes (`docs/runtime.md`): a completed item's continuation is
    /// a durable work item, its child execution record, created QUEUED and driven like any
    /// execution by its own driver through `process-work-item`; each retry is a scheduled
    /// wakeup (`WAIT_RETRY`), not an in-process timer.
    Durable,
    /// TPF today (`ItemizedAwaitContinuationFlow`): the completion call runs the continuation
    /// in process, with up to three attempts on a scheduler, then writes the child record
    /// already SUCCEEDED.
    InProcess,
}

/// `pipeline.orchestrator.*` (`PipelineOrchestratorConfig`), TPF's defaults unless noted.
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinatorConfig {
    /// The lease owner this coordinator writes (`"worker-<uuid>"` in TPF).
    pub instance_id: String,
    pub lease_ms: i64,
    pub max_retries: u32,
    pub retry_delay_ms: i64,
    pub retry_multiplier: f64,
    pub sweep_limit: usize,
    pub execution_ttl_days: i64,
    /// `default-tenant`: a submission without a tenant runs in it.
    pub default_tenant: String,
    pub idempotency_policy: IdempotencyPolicy,
    /// `strict-startup`: queue mode refuses to start on a risky configuration.
    pub strict_startup: bool,
    pub item_continuations: ItemContinuations,
    /// Whether `process-work-item` applies a passed await deadline (the Action API's rule). A
    /// TPF without that change leaves a parked execution parked; the drivers must stay safe
    /// against it (`docs/runtime.md`).
    pub process_applies_await_deadline: bool,
    /// For the DLQ envelope.
    pub transport: String,
    pub platform: String,
    /// The work function's admission before it claims (`admission.rs`).
    pub admission: admission::AdmissionPolicy,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        Self {
            instance_id: "worker-reference-model".to_owned(),
            lease_ms: 30_000,
            max_retries: 3,
            retry_delay_ms: 10_000,
            retry_multiplier: 2.0,
            sweep_limit: 100,
            execution_ttl_days: 7,
            default_tenant: "default".to_owned(),
            idempotency_policy: IdempotencyPolicy::OptionalClientKey,
            strict_startup: true,
            item_continuations: ItemContinuations::Durable,
            process_applies_await_deadline: true,
            transport: "REST".to_owned(),
            platform: "UNKNOWN".to_owned(),
            admission: admission::AdmissionPolicy::default(),
        }
    }
}

/// `ExecutionFailureHandler`'s cap on a retry delay; hard-coded in TPF.
pub const RETRY_CAP_MS: i64 = 30 * 60 * 1000;

impl CoordinatorConfig {
    /// `ExecutionFailureHandler.retryDelayMillis`, with Java's arithmetic:
    /// `min((long)(max(0, delay) × pow(max(1.0, multiplier), max(0, nextAttempt − 1))), 30 min)`.
    /// `Math.max(1.0, NaN)` is NaN, `pow(NaN, 0)` is 1 and `(long) NaN` is 0, so a NaN multiplier
    /// gives the base delay on the first attempt and 0 after it; a negative base gives 0.
    pub fn retry_delay_for(&self, next_attempt: i64) -> i64 {
        let base = self.retry_delay_ms.max(0) as f64;
        let multiplier = if self.retry_multiplier.is_nan() {
            f64::NAN
        } else {
            self.retry_multiplier.max(1.0)
        };
        let exponent = next_attempt.saturating_sub(1).max(0) as f64;
        // `as` saturates and maps NaN to 0, exactly Java's double-to-long narrowing.
        ((base * multiplier.powf(exponent)) as i64).min(RETRY_CAP_MS)
    }

    /// `QueueAsyncCoordinator`'s startup guard: with strict startup, queue mode refuses the
    /// default `OPTIONAL_CLIENT_KEY` policy.
    pub fn startup_check(&self) -> Result<(), StartupError> {
        if self.strict_startup && self.idempotency_policy == IdempotencyPolicy::OptionalClientKey {
            return Err(StartupError::IdempotencyPolicyUnset);
        }
        Ok(())
    }
}

/// Why TPF refuses to start with a configuration, in TPF's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupError {
    /// Queue mode with strict startup and the default `OPTIONAL_CLIENT_KEY` policy.
    IdempotencyPolicyUnset,
}

impl std::fmt::Display for StartupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::IdempotencyPolicyUnset => f.write_str("pipeline.orchestrator.idempotency-policy must be explicitly configured for queue mode when strict startup is enabled."),
        }
    }
}

impl std::error::Error for StartupError {}

/// Why a coordinator operation was refused, with TPF's HTTP mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum CoordinatorError {
    /// Submit without an active release (409).
    NoActiveRelease {
        tenant_id: String,
        pipeline_id: String,
    },
    NotFound(String),
    /// Wrong status, version mismatch or a lost race (409).
    Conflict(String),
    BadRequest(String),
    /// Completion of an interaction that is FAILED/TIMED_OUT/CANCELLED/EXPIRED (400).
    InteractionTerminal {
        interaction_id: String,
        status: AwaitInteractionStatus,
    },
    /// Completion after the deadline: the interaction is now TIMED_OUT (400).
    AwaitDeadlinePassed {
        interaction_id: String,
    },
    Registry(RegistryError),
    Store(StoreError),
}

impl CoordinatorError {
    pub fn http_status(&self) -> u16 {
        match self {
            Self::NoActiveRelease { .. } | Self::Conflict(_) => 409,
            Self::NotFound(_) => 404,
            Self::BadRequest(_)
            | Self::InteractionTerminal { .. }
            | Self::AwaitDeadlinePassed { .. } => 400,
            Self::Registry(RegistryError::Conflict(_)) => 409,
            Self::Registry(RegistryError::NotFound(_)) => 404,
            Self::Registry(RegistryError::Store(_)) | Self::Store(_) => 500,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Self::NoActiveRelease { .. } => "NO_ACTIVE_RELEASE",
            Self::NotFound(_) => "NOT_FOUND",
            Self::Conflict(_) => "CONFLICT",
            Self::BadRequest(_) => "BAD_REQUEST",
            Self::InteractionTerminal { .. } => "AWAIT_INTERACTION_TERMINAL",
            Self::AwaitDeadlinePassed { .. } => "AWAIT_TIMEOUT",
            Self::Registry(RegistryError::Conflict(_)) => "RELEASE_CONFLICT",
            Self::Registry(RegistryError::NotFound(_)) => "RELEASE_NOT_FOUND",
            Self::Registry(RegistryError::Store(_)) | Self::Store(_) => "STORE_UNAVAILABLE",
        }
    }
}

impl fmt::Display for CoordinatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoActiveRelease {
                tenant_id,
                pipeline_id,
            } => write!(
                f,
                "no active release for pipeline {pipeline_id} in tenant {tenant_id}"
            ),
            Self::NotFound(m) | Self::Conflict(m) | Self::BadRequest(m) => f.write_str(m),
            Self::InteractionTerminal {
                interaction_id,
                status,
            } => write!(f, "await interaction {interaction_id} is {status}"),
            Self::AwaitDeadlinePassed { interaction_id } => {
                write!(f, "await interaction {interaction_id} passed its deadline")
            }
            Self::Registry(e) => e.fmt(f),
            Self::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CoordinatorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Store(e) | Self::Registry(RegistryError::Store(e)) => e.source(),
            _ => None,
        }
    }
}

impl From<StoreError> for CoordinatorError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<RegistryError> for CoordinatorError {
    fn from(e: RegistryError) -> Self {
        Self::Registry(e)
    }
}

pub type CoordinatorResult<T> = Result<T, CoordinatorError>;

/// `HostedExecutionSubmitRequest`, reduced.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitRequest {
    /// Blank means the configured default tenant.
    pub tenant_id: String,
    pub pipeline_id: String,
    /// The client's `Idempotency-Key`; trimmed, and blank counts as absent.
    pub execution_key: Option<String>,
    /// The input snapshot's payload: the item, or the item list of a `MULTI` input.
    pub input_payload: Value,
}

/// `RunAsyncAcceptedDto` plus the record.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitResult {
    pub execution_id: String,
    pub duplicate: bool,
    pub status_url: String,
    pub submitted_at_epoch_ms: i64,
    pub record: ExecutionRecord,
}

/// The post-call state of one `process_work_item`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkItemOutcome {
    /// Whether this call claimed the lease and ran a segment.
    pub claimed: bool,
    pub record: ExecutionRecord,
}

/// A claimed segment whose worker call has run but whose outcome is not committed yet. Tests use
/// the gap to stage races (a completion before the parent parks, a second claim under a lease).
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedSegment {
    pub record: ExecutionRecord,
    pub transition_key: String,
    pub result: TransitionResult,
    /// Set when the worker parked: the unit it created.
    pub await_unit_id: Option<String>,
    /// Set when the record is the child execution of an item continuation.
    pub item: Option<ItemChild>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WorkItemStart {
    NotClaimed(ExecutionRecord),
    Claimed(ClaimedSegment),
}

/// `AwaitCompletionCommand`: interaction by id or by correlation id.
#[derive(Debug, Clone, PartialEq)]
pub struct AwaitCompletion {
    pub tenant_id: String,
    pub interaction_id: Option<String>,
    pub correlation_id: Option<String>,
    pub response_payload: Value,
    pub actor: Option<String>,
}

/// `AwaitCompletionResult`, plus whether this call released the parent.
#[derive(Debug, Clone, PartialEq)]
pub struct AwaitCompletionResult {
    pub interaction: AwaitInteractionRecord,
    pub duplicate: bool,
    pub released: bool,
}

/// `ExecutionRedriveResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct RedriveResult {
    pub tenant_id: String,
    pub execution_id: String,
    pub previous_status: ExecutionStatus,
    pub status: ExecutionStatus,
    pub version: i64,
    pub current_step_index: u32,
    pub attempt: u32,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
    pub updated_at_epoch_ms: i64,
}

/// One interaction the sweep timed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedOutAwait {
    pub tenant_id: String,
    pub execution_id: String,
    pub unit_id: String,
    pub interaction_id: String,
    /// Whether the parent was still parked on the unit and was failed with `AWAIT_TIMEOUT`.
    pub parent_failed: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SweepResult {
    pub timed_out: Vec<TimedOutAwait>,
    /// Due executions, sorted by (nextDue, tenant, executionId). The sweep never claims them.
    pub due: Vec<ExecutionRecord>,
}

/// The release a local runtime registers for its generated contract
/// (`LocalPipelineReleaseActivation`): no artifacts in the descriptor. TPF writes that record
/// with an empty artifact URI, but only to its in-memory registry; TPF's DynamoDB reader refuses
/// a row whose `primary_artifact_uri` is blank, and one such row breaks `active()` and `list()`
/// for the whole pipeline. So the model names the artifact TPF's comment names, the generated
/// contract resource, and the row stays readable wherever it is written.
pub fn local_release(tenant_id: &str, identity: &Identity, now_ms: i64) -> PipelineReleaseRecord {
    PipelineReleaseRecord {
        tenant_id: tenant_id.to_owned(),
        pipeline_id: identity.pipeline_id.clone(),
        contract_version: identity.contract_version.clone(),
        release_version: identity.release_version.clone(),
        status: ReleaseStatus::Registered,
        descriptor: json!({
            "schemaVersion": 1,
            "pipelineId": identity.pipeline_id,
            "contractVersion": identity.contract_version,
            "releaseVersion": identity.release_version,
            "artifacts": [],
        }),
        primary_artifact_id: LOCAL_CONTRACT_ARTIFACT.to_owned(),
        primary_artifact_digest: String::new(),
        primary_artifact_uri: LOCAL_CONTRACT_URI.to_owned(),
        primary_artifact_size_bytes: 0,
        primary_artifact_checksum: String::new(),
        contract: None,
        created_at_epoch_ms: now_ms,
        updated_at_epoch_ms: now_ms,
        activated_at_epoch_ms: 0,
    }
}

/// The artifact of a [`local_release`]: the contract resource on the runtime's class path
/// (`PipelineContractDescriptor.RESOURCE_PATH`).
pub const LOCAL_CONTRACT_ARTIFACT: &str = "pipeline-contract";
pub const LOCAL_CONTRACT_URI: &str = "classpath:META-INF/pipeline/pipeline-contract.json";

pub fn record_identity(record: &ExecutionRecord) -> Identity {
    Identity {
        pipeline_id: record.pipeline_id.clone(),
        contract_version: record.contract_version.clone(),
        release_version: record.release_version.clone(),
    }
}

/// The reference coordinator.
pub struct Coordinator<S> {
    store: S,
    /// Shared: a matrix runs every scenario of a contract on the same pipeline, and building
    /// it per scenario was a visible part of a short run.
    pipeline: Arc<PipelineDef>,
    worker: ScriptedWorker,
    config: CoordinatorConfig,
    log: TransitionLog,
    dead_letters: Vec<DeadLetterEnvelope>,
    /// `ItemContinuationClaims`: in-process dispatch claims (only [`ItemContinuations::InProcess`]).
    claims: BTreeSet<String>,
}

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    pub fn new(store: S, pipeline: impl Into<Arc<PipelineDef>>, worker: ScriptedWorker) -> Self {
        Self::with_config(store, pipeline, worker, CoordinatorConfig::default())
    }

    pub fn with_config(
        store: S,
        pipeline: impl Into<Arc<PipelineDef>>,
        worker: ScriptedWorker,
        config: CoordinatorConfig,
    ) -> Self {
        Self {
            store,
            pipeline: pipeline.into(),
            worker,
            config,
            log: TransitionLog::new(),
            dead_letters: Vec::new(),
            claims: BTreeSet::new(),
        }
    }

    pub fn store(&self) -> &S {
        &self.store
    }
    pub fn pipeline(&self) -> &PipelineDef {
        &self.pipeline
    }
    pub fn worker(&self) -> &ScriptedWorker {
        &self.worker
    }
    pub fn worker_mut(&mut self) -> &mut ScriptedWorker {
        &mut self.worker
    }
    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }
    /// Changes TPF's configuration in flight (tests stage TPF variants this way).
    pub fn config_mut(&mut self) -> &mut CoordinatorConfig {
        &mut self.config
    }
    pub fn log(&self) -> &TransitionLog {
        &self.log
    }
    /// DLQ envelopes, in publication order.
    pub fn dead_letters(&self) -> &[DeadLetterEnvelope] {
        &self.dead_letters
    }

    pub(super) fn call(
        &mut self,
        at_ms: i64,
        action: &'static str,
        tenant_id: &str,
        execution_id: Option<&str>,
        outcome: String,
    ) {
        self.log.call(ActionCall {
            at_ms,
            action,
            tenant_id: Some(tenant_id.to_owned()),
            execution_id: execution_id.map(str::to_owned),
            idempotency_key: None,
            outcome,
            replayed: false,
        });
    }

    pub fn status(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<ExecutionRecord> {
        self.store
            .get_execution(tenant_id, execution_id, now_ms)?
            .ok_or_else(|| {
                CoordinatorError::NotFound(format!("execution {tenant_id}/{execution_id}"))
            })
    }
}
