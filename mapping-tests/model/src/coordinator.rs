//! TPF's durable coordinator flows (`QueueAsyncCoordinator` and `QueueAsyncSubmissionFlow`,
//! `QueueAsyncSegmentPipeline`, `ExecutionFailureHandler`, `AwaitBoundaryAdmission`,
//! `QueueAsyncRedriveFlow`, `QueueAsyncSweepFlow`): submit, process work item, retry/backoff and
//! DLQ, await completion, re-drive, sweep, release registration and activation.
//!
//! Every operation takes `now_ms` (virtual time). Each flow is written against the store traits
//! only, so the same code runs over the in-memory store and a DynamoDB store.

use std::fmt;

use serde_json::{json, Value};
use tpf_wire::Identity;

use super::store::{
    AwaitStore, CreateExecutionCommand, ExecutionStore, RegistryError, ReleaseRegistry, StoreError,
};
use super::transitions::{ActionCall, TransitionLog};
use super::worker::{AwaitShape, PipelineDef, ScriptedWorker, TransitionCommand, TransitionResult};
use tpf_wire::ids;
use tpf_wire::records::{
    AwaitInteractionRecord, AwaitInteractionStatus, AwaitUnitRecord, AwaitUnitStatus,
    DeadLetterEnvelope, ExecutionRecord, ExecutionStatus, PipelineReleaseRecord, ReleaseStatus,
};

const DAY_S: i64 = 86_400;

/// `pipeline.orchestrator.*` defaults (`PipelineOrchestratorConfig`).
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinatorConfig {
    /// The lease owner this coordinator writes (`"worker-<uuid>"` in TPF).
    pub instance_id: String,
    pub lease_ms: i64,
    pub max_retries: u32,
    pub retry_delay_ms: i64,
    pub retry_multiplier: f64,
    pub retry_cap_ms: i64,
    pub sweep_limit: usize,
    pub execution_ttl_days: i64,
    /// For the DLQ envelope.
    pub transport: String,
    pub platform: String,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        Self {
            instance_id: "worker-reference-model".to_owned(),
            lease_ms: 30_000,
            max_retries: 3,
            retry_delay_ms: 10_000,
            retry_multiplier: 2.0,
            retry_cap_ms: 30 * 60 * 1000,
            sweep_limit: 100,
            execution_ttl_days: 7,
            transport: "REST".to_owned(),
            platform: "UNKNOWN".to_owned(),
        }
    }
}

impl CoordinatorConfig {
    /// `ExecutionFailureHandler`: `min(retryDelay × multiplier^(nextAttempt−1), 30 min)`, the
    /// multiplier floored at 1.0.
    pub fn retry_delay_for(&self, next_attempt: u32) -> i64 {
        let exponent = i32::try_from(next_attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let delay = self.retry_delay_ms as f64 * self.retry_multiplier.max(1.0).powi(exponent);
        if delay >= self.retry_cap_ms as f64 {
            self.retry_cap_ms
        } else {
            delay as i64
        }
    }
}

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

impl std::error::Error for CoordinatorError {}

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
    pub tenant_id: String,
    pub pipeline_id: String,
    /// `None` derives the key from the input (`OPTIONAL_CLIENT_KEY`).
    pub execution_key: Option<String>,
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

/// A release row for an identity with no artifacts (what `LocalPipelineReleaseActivation`
/// registers for the generated contract).
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
        primary_artifact_id: None,
        primary_artifact_digest: None,
        primary_artifact_uri: None,
        primary_artifact_size_bytes: None,
        primary_artifact_checksum: None,
        contract: None,
        created_at_epoch_ms: now_ms,
        updated_at_epoch_ms: now_ms,
        activated_at_epoch_ms: None,
    }
}

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
    pipeline: PipelineDef,
    worker: ScriptedWorker,
    config: CoordinatorConfig,
    log: TransitionLog,
    dead_letters: Vec<DeadLetterEnvelope>,
}

impl<S: ExecutionStore + AwaitStore + ReleaseRegistry> Coordinator<S> {
    pub fn new(store: S, pipeline: PipelineDef, worker: ScriptedWorker) -> Self {
        Self::with_config(store, pipeline, worker, CoordinatorConfig::default())
    }

    pub fn with_config(
        store: S,
        pipeline: PipelineDef,
        worker: ScriptedWorker,
        config: CoordinatorConfig,
    ) -> Self {
        Self {
            store,
            pipeline,
            worker,
            config,
            log: TransitionLog::new(),
            dead_letters: Vec::new(),
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
    pub fn log(&self) -> &TransitionLog {
        &self.log
    }
    pub fn log_call(&mut self, call: ActionCall) {
        self.log.call(call);
    }
    /// DLQ envelopes, in publication order.
    pub fn dead_letters(&self) -> &[DeadLetterEnvelope] {
        &self.dead_letters
    }

    fn call(
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

    // --- releases (PipelineReleaseRegistry, HostedReleaseAdminResource) ---

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

    // --- submit (QueueAsyncSubmissionFlow) ---

    pub fn submit(&mut self, req: &SubmitRequest, now_ms: i64) -> CoordinatorResult<SubmitResult> {
        if req.tenant_id.trim().is_empty() {
            return Err(CoordinatorError::BadRequest("tenantId is required".into()));
        }
        // HostedPipelineControlPlaneResource.submitExecution: the active release is resolved
        // once, here, and its triple is pinned on the record for good.
        let release = self
            .store
            .active_release(&req.tenant_id, &req.pipeline_id)?
            .ok_or_else(|| CoordinatorError::NoActiveRelease {
                tenant_id: req.tenant_id.clone(),
                pipeline_id: req.pipeline_id.clone(),
            })?;
        let execution_key = match &req.execution_key {
            Some(key) if key.trim().is_empty() => {
                return Err(CoordinatorError::BadRequest(
                    "Idempotency-Key must not be blank".into(),
                ))
            }
            Some(key) => key.clone(),
            None => ids::derived_execution_key(&req.tenant_id, &req.input_payload.to_string()),
        };
        let cmd = CreateExecutionCommand {
            tenant_id: req.tenant_id.clone(),
            execution_id: ids::execution_id(&req.tenant_id, &execution_key),
            execution_key,
            pipeline_id: release.pipeline_id,
            contract_version: release.contract_version,
            release_version: release.release_version,
            result_shape: self.pipeline.result_shape,
            input_payload: req.input_payload.clone(),
            initial_step_index: 0,
            now_ms,
            ttl_epoch_s: now_ms.div_euclid(1000) + self.config.execution_ttl_days.max(1) * DAY_S,
        };
        let created = self.store.create_or_get_execution(&cmd)?;
        if !created.duplicate {
            self.log.record(now_ms, &created.record, "create");
        }
        let record = created.record;
        self.call(
            now_ms,
            "submit",
            &req.tenant_id,
            Some(&record.execution_id),
            if created.duplicate {
                "DUPLICATE".to_owned()
            } else {
                record.status.to_string()
            },
        );
        Ok(SubmitResult {
            execution_id: record.execution_id.clone(),
            duplicate: created.duplicate,
            status_url: format!("/pipeline/executions/{}", record.execution_id),
            submitted_at_epoch_ms: now_ms,
            record,
        })
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

    // --- process work item (QueueAsyncSegmentPipeline, ExecutionFailureHandler) ---

    /// Claim, run one segment, commit. A non-claimable execution is returned unchanged.
    pub fn process_work_item(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<WorkItemOutcome> {
        match self.begin_work_item(tenant_id, execution_id, now_ms)? {
            WorkItemStart::NotClaimed(record) => Ok(WorkItemOutcome {
                claimed: false,
                record,
            }),
            WorkItemStart::Claimed(segment) => Ok(WorkItemOutcome {
                claimed: true,
                record: self.commit_segment(segment, now_ms)?,
            }),
        }
    }

    /// Claims the lease and runs the worker; the outcome is committed by [`Self::commit_segment`].
    pub fn begin_work_item(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<WorkItemStart> {
        let current = self.status(tenant_id, execution_id, now_ms)?;
        let Some(claimed) = self.store.claim_lease(
            tenant_id,
            execution_id,
            &self.config.instance_id,
            now_ms,
            self.config.lease_ms,
        )?
        else {
            // Not due, leased elsewhere, parked or terminal: the work item is simply handled.
            return Ok(WorkItemStart::NotClaimed(current));
        };
        self.log.record(now_ms, &claimed, "claim");
        let transition_key = format!(
            "{}:{}:{}",
            claimed.execution_id, claimed.current_step_index, claimed.attempt
        );
        let payload = self.segment_input(&claimed)?;
        let cmd = TransitionCommand {
            tenant_id: claimed.tenant_id.clone(),
            execution_id: claimed.execution_id.clone(),
            identity: record_identity(&claimed),
            current_step_index: claimed.current_step_index,
            attempt: claimed.attempt,
            execution_version: claimed.version,
            transition_key: transition_key.clone(),
            payload,
        };
        let result = self.worker.execute(&self.pipeline, &cmd);
        let await_unit_id = match result {
            TransitionResult::WaitingExternal { step_index } => {
                Some(self.import_suspension(&claimed, step_index, now_ms)?)
            }
            _ => None,
        };
        Ok(WorkItemStart::Claimed(ClaimedSegment {
            record: claimed,
            transition_key,
            result,
            await_unit_id,
        }))
    }

    /// `SegmentCommitEffects.commit`; returns the record after the commit and its follow-ups.
    pub fn commit_segment(
        &mut self,
        segment: ClaimedSegment,
        now_ms: i64,
    ) -> CoordinatorResult<ExecutionRecord> {
        let claimed = &segment.record;
        let (tenant_id, execution_id) = (&claimed.tenant_id, &claimed.execution_id);
        match &segment.result {
            TransitionResult::Completed { output } => {
                // An empty answer means the claimed version went stale: a later owner took over
                // and only one commit can win, so there is nothing to do.
                if let Some(done) = self.store.mark_succeeded(
                    tenant_id,
                    execution_id,
                    claimed.version,
                    &segment.transition_key,
                    output,
                    now_ms,
                )? {
                    self.log.record(now_ms, &done, "succeed");
                }
            }
            TransitionResult::WaitingExternal { step_index } => {
                let unit_id = segment.await_unit_id.clone().unwrap_or_else(|| {
                    self.unit_id_for(tenant_id, execution_id, *step_index)
                        .unwrap_or_default()
                });
                if let Some(parked) = self.store.mark_waiting_external(
                    tenant_id,
                    execution_id,
                    claimed.version,
                    &segment.transition_key,
                    &unit_id,
                    *step_index,
                    now_ms,
                )? {
                    self.log.record(now_ms, &parked, "park");
                    // afterParentWaiting: a completion that beat the park is released now.
                    self.release_parent(tenant_id, &unit_id, now_ms)?;
                }
            }
            TransitionResult::Failed {
                failure_class,
                message,
                retryable,
            } => {
                // TransitionFailureEnvelope.toException: the coordinator sees a
                // TransitionWorkerFailureException("<class>: <message>"), or a
                // NonRetryableException, and records that class's simple name as the code.
                let (error_code, error_message) = if *retryable {
                    let suffix = if message.is_empty() {
                        String::new()
                    } else {
                        format!(": {message}")
                    };
                    (
                        "TransitionWorkerFailureException",
                        format!("{failure_class}{suffix}"),
                    )
                } else if message.is_empty() {
                    ("NonRetryableException", failure_class.clone())
                } else {
                    ("NonRetryableException", message.clone())
                };
                self.handle_failure(
                    claimed,
                    &segment.transition_key,
                    error_code,
                    &error_message,
                    *retryable,
                    now_ms,
                )?;
            }
        }
        self.status(tenant_id, execution_id, now_ms)
    }

    /// `resumesFromAwait` (step > 0 with an await unit) reads the unit's responses; otherwise the
    /// record's input.
    fn segment_input(&self, record: &ExecutionRecord) -> CoordinatorResult<Value> {
        match &record.await_unit_id {
            Some(unit_id) if record.current_step_index > 0 => {
                let interactions = self
                    .store
                    .interactions_for_unit(&record.tenant_id, unit_id)?;
                let responses: Vec<Value> = interactions
                    .iter()
                    .filter_map(|i| i.response_payload.clone())
                    .collect();
                Ok(match interactions.first() {
                    Some(first) if first.item_index.is_none() => {
                        responses.into_iter().next().unwrap_or(Value::Null)
                    }
                    _ => Value::Array(responses),
                })
            }
            _ => Ok(record.input_payload.clone()),
        }
    }

    fn unit_id_for(&self, tenant_id: &str, execution_id: &str, step_index: u32) -> Option<String> {
        self.pipeline
            .step(step_index)
            .map(|step| ids::await_unit_id(tenant_id, execution_id, &step.step_id, step_index))
    }

    /// What an in-process `AwaitCoordinator` writes while the await step runs: the unit and its
    /// interactions, before the parent's suspension is committed. Deterministic ids make a
    /// retried segment re-find the same records.
    fn import_suspension(
        &mut self,
        record: &ExecutionRecord,
        step_index: u32,
        now_ms: i64,
    ) -> CoordinatorResult<String> {
        let step = self
            .pipeline
            .step(step_index)
            .cloned()
            .ok_or_else(|| CoordinatorError::BadRequest(format!("no step {step_index}")))?;
        let await_step = step.await_step().cloned().ok_or_else(|| {
            CoordinatorError::BadRequest(format!("step {step_index} is not an await"))
        })?;
        let tenant_id = &record.tenant_id;
        let execution_id = &record.execution_id;
        let unit_id = ids::await_unit_id(tenant_id, execution_id, &step.step_id, step_index);
        let deadline = await_step.timeout_ms.map(|t| now_ms + t);
        let ttl_epoch_s = match deadline {
            Some(d) => d.div_euclid(1000) + DAY_S,
            None => now_ms.div_euclid(1000) + self.config.execution_ttl_days.max(1) * DAY_S,
        };
        let items: Vec<Option<u32>> = match await_step.shape {
            AwaitShape::Scalar => vec![None],
            AwaitShape::Itemized { items } => (0..items).map(Some).collect(),
        };
        let interactions: Vec<AwaitInteractionRecord> = items
            .into_iter()
            .map(|item_index| {
                let base = format!("{execution_id}:{}", step.step_id);
                let idempotency_key = match item_index {
                    Some(i) => format!("{base}:item={i}"),
                    None => base,
                };
                let correlation_id =
                    ids::correlation_id(tenant_id, execution_id, &step.step_id, &idempotency_key);
                AwaitInteractionRecord {
                    tenant_id: tenant_id.clone(),
                    execution_id: execution_id.clone(),
                    step_id: step.step_id.clone(),
                    step_index,
                    output_type: None,
                    interaction_id: ids::interaction_id(&correlation_id),
                    correlation_id,
                    causation_id: None,
                    idempotency_key,
                    version: 0,
                    status: AwaitInteractionStatus::Waiting,
                    request_payload: Some(record.input_payload.clone()),
                    response_payload: None,
                    unit_id: Some(unit_id.clone()),
                    item_index,
                    actor: None,
                    assignee: None,
                    group: None,
                    transport_type: Some("interaction-api".to_owned()),
                    transport_metadata: Default::default(),
                    deadline_epoch_ms: deadline,
                    created_at_epoch_ms: now_ms,
                    updated_at_epoch_ms: now_ms,
                    ttl_epoch_s,
                    transport_output_type: None,
                }
            })
            .collect();
        let primary_interaction_id = match await_step.shape {
            AwaitShape::Scalar => interactions.first().map(|i| i.interaction_id.clone()),
            AwaitShape::Itemized { .. } => None,
        };
        let unit = AwaitUnitRecord {
            tenant_id: tenant_id.clone(),
            unit_id: unit_id.clone(),
            execution_id: execution_id.clone(),
            step_id: step.step_id.clone(),
            step_index,
            cardinality: "ONE_TO_ONE".to_owned(),
            version: 0,
            status: AwaitUnitStatus::WaitingExternal,
            primary_interaction_id,
            expected_item_count: None,
            completed_item_count: 0,
            completed_item_keys: Default::default(),
            dispatch_complete: false,
            created_at_epoch_ms: now_ms,
            updated_at_epoch_ms: now_ms,
            ttl_epoch_s,
        };
        let unit = self.store.create_or_get_unit(&unit, now_ms)?.record;
        for interaction in &interactions {
            self.store.create_or_get_interaction(interaction)?;
        }
        if let AwaitShape::Itemized { items } = await_step.shape {
            if !unit.dispatch_complete && !unit.status.terminal() {
                self.store
                    .mark_dispatch_complete(tenant_id, &unit_id, i64::from(items), now_ms)?;
            }
        }
        Ok(unit_id)
    }

    /// `ExecutionFailureHandler.handleExecutionFailure` (no circuit deferral in the model).
    fn handle_failure(
        &mut self,
        claimed: &ExecutionRecord,
        transition_key: &str,
        error_code: &str,
        error_message: &str,
        retryable: bool,
        now_ms: i64,
    ) -> CoordinatorResult<()> {
        let next_attempt = claimed.attempt + 1;
        if retryable && next_attempt <= self.config.max_retries {
            let next_due = now_ms + self.config.retry_delay_for(next_attempt);
            if let Some(waiting) = self.store.schedule_retry(
                &claimed.tenant_id,
                &claimed.execution_id,
                claimed.version,
                next_attempt,
                next_due,
                transition_key,
                error_code,
                error_message,
                now_ms,
            )? {
                self.log.record(now_ms, &waiting, "retry");
            }
            return Ok(());
        }
        let Some(failed) = self.store.mark_terminal_failure(
            &claimed.tenant_id,
            &claimed.execution_id,
            claimed.version,
            ExecutionStatus::Failed,
            transition_key,
            error_code,
            error_message,
            now_ms,
        )?
        else {
            return Ok(());
        };
        self.log.record(now_ms, &failed, "fail");
        // Published only after the terminal commit won; evidence, not the replay source.
        self.dead_letters.push(DeadLetterEnvelope {
            tenant_id: failed.tenant_id.clone(),
            execution_id: failed.execution_id.clone(),
            execution_key: failed.execution_key.clone(),
            correlation_id: failed.execution_key.clone(),
            transition_key: transition_key.to_owned(),
            resource_type: "tpf.orchestrator.execution".to_owned(),
            resource_name: "OrchestratorService/Run".to_owned(),
            transport: self.config.transport.clone(),
            platform: self.config.platform.clone(),
            terminal_status: ExecutionStatus::Failed.to_string(),
            terminal_reason: if retryable {
                "retry_exhausted"
            } else {
                "non_retryable"
            }
            .to_owned(),
            error_code: error_code.to_owned(),
            error_message: error_message.to_owned(),
            retryable,
            retries_observed: claimed.attempt,
            created_at_epoch_ms: now_ms,
        });
        Ok(())
    }

    // --- await completion (AwaitBoundaryAdmission, AwaitContinuations) ---

    /// First writer wins; a duplicate re-runs the idempotent continuation.
    pub fn complete_await(
        &mut self,
        cmd: &AwaitCompletion,
        now_ms: i64,
    ) -> CoordinatorResult<AwaitCompletionResult> {
        let result = self.complete_await_inner(cmd, now_ms);
        let outcome = match &result {
            Ok(r) if r.duplicate => "DUPLICATE".to_owned(),
            Ok(r) => r.interaction.status.to_string(),
            Err(e) => e.code().to_owned(),
        };
        let execution_id = result
            .as_ref()
            .ok()
            .map(|r| r.interaction.execution_id.clone());
        self.call(
            now_ms,
            "complete-await",
            &cmd.tenant_id,
            execution_id.as_deref(),
            outcome,
        );
        result
    }

    fn complete_await_inner(
        &mut self,
        cmd: &AwaitCompletion,
        now_ms: i64,
    ) -> CoordinatorResult<AwaitCompletionResult> {
        let found = match (&cmd.interaction_id, &cmd.correlation_id) {
            (Some(id), _) => self.store.get_interaction(&cmd.tenant_id, id)?,
            (None, Some(correlation)) => self
                .store
                .find_interaction_by_correlation(&cmd.tenant_id, correlation)?,
            (None, None) => {
                return Err(CoordinatorError::BadRequest(
                    "interactionId or correlationId is required".into(),
                ))
            }
        };
        let interaction =
            found.ok_or_else(|| CoordinatorError::NotFound("await interaction".into()))?;
        if interaction.tenant_id != cmd.tenant_id {
            return Err(CoordinatorError::BadRequest("tenant mismatch".into()));
        }
        if interaction.status == AwaitInteractionStatus::Completed {
            return self.duplicate_completion(interaction, now_ms);
        }
        if interaction.status.terminal() {
            return Err(CoordinatorError::InteractionTerminal {
                interaction_id: interaction.interaction_id,
                status: interaction.status,
            });
        }
        if interaction.deadline_epoch_ms.is_some_and(|d| d <= now_ms) {
            // Rejected and marked TIMED_OUT; the parent is failed only by the sweep (or by the
            // process-work-item deadline check), never by the late completion itself.
            let timed_out = self.store.transition_interaction(
                &interaction.tenant_id,
                &interaction.interaction_id,
                interaction.version,
                AwaitInteractionStatus::TimedOut,
                None,
                None,
                now_ms,
            )?;
            if timed_out.is_none() {
                if let Some(current) = self
                    .store
                    .get_interaction(&interaction.tenant_id, &interaction.interaction_id)?
                {
                    if current.status == AwaitInteractionStatus::Completed {
                        return self.duplicate_completion(current, now_ms);
                    }
                }
            }
            return Err(CoordinatorError::AwaitDeadlinePassed {
                interaction_id: interaction.interaction_id,
            });
        }
        let completed = self.store.transition_interaction(
            &interaction.tenant_id,
            &interaction.interaction_id,
            interaction.version,
            AwaitInteractionStatus::Completed,
            Some(&cmd.response_payload),
            cmd.actor.as_deref(),
            now_ms,
        )?;
        let Some(completed) = completed else {
            let current = self
                .store
                .get_interaction(&interaction.tenant_id, &interaction.interaction_id)?
                .ok_or_else(|| CoordinatorError::NotFound("await interaction".into()))?;
            if current.status == AwaitInteractionStatus::Completed {
                return self.duplicate_completion(current, now_ms);
            }
            return Err(CoordinatorError::Conflict(format!(
                "await interaction {} changed during completion",
                current.interaction_id
            )));
        };
        let released = self.record_completion(&completed, now_ms)?;
        Ok(AwaitCompletionResult {
            interaction: completed,
            duplicate: false,
            released,
        })
    }

    fn duplicate_completion(
        &mut self,
        interaction: AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<AwaitCompletionResult> {
        let released = self.record_completion(&interaction, now_ms)?;
        Ok(AwaitCompletionResult {
            interaction,
            duplicate: true,
            released,
        })
    }

    /// `recordCompletion` + `afterRecordedCompletion`; both idempotent, so duplicates re-run them.
    fn record_completion(
        &mut self,
        interaction: &AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<bool> {
        let Some(unit_id) = interaction.unit_id.as_deref() else {
            return Ok(false);
        };
        let tenant_id = &interaction.tenant_id;
        match interaction.item_index {
            None => {
                let unit = self.store.get_unit(tenant_id, unit_id)?;
                if unit.is_some_and(|u| u.status != AwaitUnitStatus::Completed) {
                    self.store.mark_unit_completed(tenant_id, unit_id, now_ms)?;
                }
            }
            Some(index) => {
                self.store.record_item_completed(
                    tenant_id,
                    unit_id,
                    &format!("item:{index}"),
                    now_ms,
                )?;
                self.store.complete_if_ready(tenant_id, unit_id, now_ms)?;
            }
        }
        self.release_parent(tenant_id, unit_id, now_ms)
    }

    /// Releases the parent of a COMPLETED unit if it is parked on it; otherwise holds.
    ///
    /// Scalar: `markAwaitCompleted(stepIndex+1)`. Itemized (simplified): TPF runs each item's
    /// suffix in a child execution and releases the parent to the first aggregate step; the
    /// model releases the parent to `stepIndex+1` with the ordered item responses as its input
    /// once every item has completed and dispatch is complete.
    fn release_parent(
        &mut self,
        tenant_id: &str,
        unit_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<bool> {
        let Some(unit) = self.store.get_unit(tenant_id, unit_id)? else {
            return Ok(false);
        };
        if unit.status != AwaitUnitStatus::Completed {
            return Ok(false);
        }
        let next_step = unit.step_index + 1;
        let released = if unit.uses_item_continuations() {
            if !unit.dispatch_complete {
                return Ok(false);
            }
            let responses: Vec<Value> = self
                .store
                .interactions_for_unit(tenant_id, unit_id)?
                .into_iter()
                .map(|i| i.response_payload.unwrap_or(Value::Null))
                .collect();
            let input = json!({ "shape": "MULTI", "items": responses });
            self.store
                .mark_await_item_continuations_completed(
                    tenant_id,
                    &unit.execution_id,
                    unit_id,
                    next_step,
                    &input,
                    now_ms,
                )?
                .map(|r| (r, "await-items-completed"))
        } else {
            self.store
                .mark_await_completed(tenant_id, &unit.execution_id, unit_id, next_step, now_ms)?
                .map(|r| (r, "await-completed"))
        };
        match released {
            Some((record, cause)) => {
                self.log.record(now_ms, &record, cause);
                Ok(true)
            }
            // Parent not parked yet (held), or already released (TPF re-enqueues; the model
            // has no queue, the driver's next call finds it QUEUED).
            None => Ok(false),
        }
    }

    // --- re-drive (QueueAsyncRedriveFlow, ExecutionRedrivePlan) ---

    pub fn redrive(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: Option<i64>,
        allow_failed: bool,
        now_ms: i64,
    ) -> CoordinatorResult<RedriveResult> {
        let result = self.redrive_inner(
            tenant_id,
            execution_id,
            expected_version,
            allow_failed,
            now_ms,
        );
        let outcome = match &result {
            Ok(r) => r.status.to_string(),
            Err(e) => e.code().to_owned(),
        };
        self.call(now_ms, "redrive", tenant_id, Some(execution_id), outcome);
        result
    }

    fn redrive_inner(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        expected_version: Option<i64>,
        allow_failed: bool,
        now_ms: i64,
    ) -> CoordinatorResult<RedriveResult> {
        let record = self.status(tenant_id, execution_id, now_ms)?;
        // ExecutionRedrivePlan.from: DLQ, or FAILED with allowFailed; expectedVersion defaults
        // to the current version and must equal it.
        let eligible = record.status == ExecutionStatus::Dlq
            || (allow_failed && record.status == ExecutionStatus::Failed);
        if !eligible {
            return Err(CoordinatorError::Conflict(format!(
                "Execution {execution_id} cannot be re-driven from status {}",
                record.status
            )));
        }
        let expected = expected_version.unwrap_or(record.version);
        if expected != record.version {
            return Err(CoordinatorError::Conflict(format!(
                "Execution {execution_id} version mismatch: expected {expected} \
                 but current version is {}",
                record.version
            )));
        }
        let transition_key = format!("redrive:{execution_id}:{expected}");
        let redriven = self
            .store
            .redrive_terminal_execution(
                tenant_id,
                execution_id,
                expected,
                allow_failed,
                &transition_key,
                now_ms,
            )?
            .ok_or_else(|| {
                CoordinatorError::Conflict(format!(
                    "execution {execution_id} changed before re-drive could be admitted"
                ))
            })?;
        self.log.record(now_ms, &redriven, "redrive");
        Ok(RedriveResult {
            tenant_id: redriven.tenant_id.clone(),
            execution_id: redriven.execution_id.clone(),
            previous_status: record.status,
            status: redriven.status,
            version: redriven.version,
            current_step_index: redriven.current_step_index,
            attempt: redriven.attempt,
            pipeline_id: redriven.pipeline_id.clone(),
            contract_version: redriven.contract_version.clone(),
            release_version: redriven.release_version.clone(),
            updated_at_epoch_ms: redriven.updated_at_epoch_ms,
        })
    }

    // --- sweep (QueueAsyncSweepFlow, AwaitTimeoutFlow) ---

    /// Await timeouts first, then the due list. Never claims or executes.
    pub fn sweep_once(&mut self, now_ms: i64, limit: usize) -> CoordinatorResult<SweepResult> {
        let timed_out = self.apply_await_timeouts(now_ms, limit)?;
        let due = self.store.find_due_executions(now_ms, limit)?;
        Ok(SweepResult { timed_out, due })
    }

    /// `AwaitTimeoutFlow.sweepTimedOut`.
    pub fn apply_await_timeouts(
        &mut self,
        now_ms: i64,
        limit: usize,
    ) -> CoordinatorResult<Vec<TimedOutAwait>> {
        let mut applied = Vec::new();
        for interaction in self.store.find_timed_out(now_ms, limit)? {
            if let Some(done) = self.time_out_interaction(&interaction, now_ms)? {
                applied.push(done);
            }
        }
        Ok(applied)
    }

    pub fn find_due_executions(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> CoordinatorResult<Vec<ExecutionRecord>> {
        Ok(self.store.find_due_executions(now_ms, limit)?)
    }

    /// `markTimedOut` (interaction, then unit), then the parent fails `AWAIT_TIMEOUT` only if
    /// it is still parked on that unit.
    fn time_out_interaction(
        &mut self,
        interaction: &AwaitInteractionRecord,
        now_ms: i64,
    ) -> CoordinatorResult<Option<TimedOutAwait>> {
        let tenant_id = &interaction.tenant_id;
        if self
            .store
            .transition_interaction(
                tenant_id,
                &interaction.interaction_id,
                interaction.version,
                AwaitInteractionStatus::TimedOut,
                None,
                None,
                now_ms,
            )?
            .is_none()
        {
            return Ok(None);
        }
        let Some(unit_id) = interaction.unit_id.clone() else {
            return Ok(None);
        };
        self.store
            .mark_unit_terminal(tenant_id, &unit_id, AwaitUnitStatus::TimedOut, now_ms)?;
        let parent_failed = self.fail_parked_parent(
            tenant_id,
            &interaction.execution_id,
            &unit_id,
            &interaction.interaction_id,
            now_ms,
        )?;
        Ok(Some(TimedOutAwait {
            tenant_id: tenant_id.clone(),
            execution_id: interaction.execution_id.clone(),
            unit_id,
            interaction_id: interaction.interaction_id.clone(),
            parent_failed,
        }))
    }

    fn fail_parked_parent(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        unit_id: &str,
        interaction_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<bool> {
        let Some(parent) = self.store.get_execution(tenant_id, execution_id, now_ms)? else {
            return Ok(false);
        };
        if parent.status != ExecutionStatus::WaitingExternal
            || parent.await_unit_id.as_deref() != Some(unit_id)
        {
            return Ok(false);
        }
        let transition_key = format!(
            "{}:{}:{}",
            parent.execution_id, parent.current_step_index, parent.attempt
        );
        let failed = self.store.mark_terminal_failure(
            tenant_id,
            execution_id,
            parent.version,
            ExecutionStatus::Failed,
            &transition_key,
            "AWAIT_TIMEOUT",
            &format!("Await interaction timed out: {interaction_id}"),
            now_ms,
        )?;
        match failed {
            Some(record) => {
                self.log.record(now_ms, &record, "await-timeout");
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The Action API's deadline check: a parked execution whose await deadline has passed gets
    /// its timeout applied, as the sweep would. It also covers an interaction a late completion
    /// already marked TIMED_OUT (the sweep's deadline index no longer lists it). Returns the
    /// interactions timed out (empty when the deadline has not passed).
    pub fn apply_parked_deadline(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Vec<TimedOutAwait>> {
        let record = self.status(tenant_id, execution_id, now_ms)?;
        let Some(unit_id) = record.await_unit_id.clone() else {
            return Ok(Vec::new());
        };
        if record.status != ExecutionStatus::WaitingExternal {
            return Ok(Vec::new());
        }
        let expired: Vec<AwaitInteractionRecord> = self
            .store
            .interactions_for_unit(tenant_id, &unit_id)?
            .into_iter()
            .filter(|i| {
                i.deadline_epoch_ms.is_some_and(|d| d <= now_ms)
                    && (!i.status.terminal() || i.status == AwaitInteractionStatus::TimedOut)
            })
            .collect();
        let mut applied = Vec::new();
        for interaction in &expired {
            if !interaction.status.terminal() {
                if let Some(done) = self.time_out_interaction(interaction, now_ms)? {
                    applied.push(done);
                }
            }
        }
        if let Some(first) = expired.first() {
            if self.fail_parked_parent(
                tenant_id,
                execution_id,
                &unit_id,
                &first.interaction_id,
                now_ms,
            )? {
                applied.push(TimedOutAwait {
                    tenant_id: tenant_id.to_owned(),
                    execution_id: execution_id.to_owned(),
                    unit_id: unit_id.clone(),
                    interaction_id: first.interaction_id.clone(),
                    parent_failed: true,
                });
            }
        }
        Ok(applied)
    }

    /// Interactions of the unit the execution is parked on (or last parked on).
    pub fn await_interactions(
        &self,
        tenant_id: &str,
        execution_id: &str,
        now_ms: i64,
    ) -> CoordinatorResult<Vec<AwaitInteractionRecord>> {
        let record = self.status(tenant_id, execution_id, now_ms)?;
        match record.await_unit_id {
            Some(unit_id) => Ok(self.store.interactions_for_unit(tenant_id, &unit_id)?),
            None => Ok(Vec::new()),
        }
    }

    pub fn await_unit(
        &self,
        tenant_id: &str,
        unit_id: &str,
    ) -> CoordinatorResult<Option<AwaitUnitRecord>> {
        Ok(self.store.get_unit(tenant_id, unit_id)?)
    }
}
