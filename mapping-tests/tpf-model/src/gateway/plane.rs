//! `PipelineControlPlane`, reduced to the calls TPF's action gateway makes. Each method is the
//! TPF call of the same name; failures are the Java exceptions TPF's control plane throws
//! (`JavaError`), which the gateway lets through to its caller unchanged.
//!
//! `at_ms` is the model's virtual clock: TPF's control plane reads its own clock, so the time is
//! not part of the call TPF makes (except `sweepOnce`, whose `now` is TPF's argument).

use serde_json::Value;
use tpf_wire::java_error::JavaError;
use tpf_wire::records::{AwaitInteractionStatus, ExecutionStatus};

/// `RunAsyncAcceptedDto`, the two fields the gateway reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub execution_id: String,
    pub duplicate: bool,
}

/// `AwaitSemanticCheckpoint`: one await interaction with its parent execution's release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwaitSemanticCheckpoint {
    pub tenant_id: String,
    pub execution_id: String,
    pub interaction_id: String,
    pub correlation_id: String,
    pub unit_id: String,
    pub step_id: String,
    pub status: AwaitInteractionStatus,
    pub pipeline_id: String,
    pub contract_version: String,
    pub release_version: String,
}

/// The release a submission asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedRelease<'a> {
    pub pipeline_id: &'a str,
    pub contract_version: &'a str,
    pub release_version: &'a str,
}

/// TPF's `ExecutionRedriveIntent`; the gateway only ever asks for `REPLAY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedriveIntent {
    Replay,
}

/// What the gateway passes to `redriveExecution`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedriveCall<'a> {
    pub tenant_id: &'a str,
    pub execution_id: &'a str,
    pub expected_version: i64,
    pub allow_failed: bool,
    pub intent: RedriveIntent,
    pub reason: &'a str,
}

/// The page size the gateway asks `getAwaitSemanticCheckpoints` for.
pub const AWAIT_CHECKPOINT_LIMIT: usize = 100;

pub trait ControlPlane {
    /// `executePipelineAsync(decode(inputJson), tenantId, idempotencyKey, outputStreaming,
    /// pipelineId, contractVersion, releaseVersion)`; the input is the request's exact text
    /// (TPF's generated decoder reads it).
    #[allow(clippy::too_many_arguments)]
    fn execute_pipeline_async(
        &mut self,
        input_json: &str,
        tenant_id: &str,
        idempotency_key: &str,
        output_streaming: bool,
        release: RequestedRelease<'_>,
        at_ms: i64,
    ) -> Result<Accepted, JavaError>;

    /// `getExecutionStatus(tenantId, executionId).status()`.
    fn get_execution_status(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        at_ms: i64,
    ) -> Result<ExecutionStatus, JavaError>;

    /// `getExecutionResultPayload(tenantId, executionId)`: the single item for a SINGLE
    /// result, the list otherwise; `Value::Null` for an empty `Optional`.
    fn get_execution_result_payload(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        at_ms: i64,
    ) -> Result<Value, JavaError>;

    /// `redriveExecution(…)`: the status of the re-driven record.
    fn redrive_execution(
        &mut self,
        call: &RedriveCall<'_>,
        at_ms: i64,
    ) -> Result<ExecutionStatus, JavaError>;

    /// `sweepOnce(now)`; the gateway discards the counts.
    fn sweep_once(&mut self, now_epoch_ms: i64) -> Result<(), JavaError>;

    /// `getAwaitSemanticCheckpoints(tenantId, executionId, limit)`: empty for an unknown
    /// execution.
    fn get_await_semantic_checkpoints(
        &mut self,
        tenant_id: &str,
        execution_id: &str,
        limit: usize,
        at_ms: i64,
    ) -> Result<Vec<AwaitSemanticCheckpoint>, JavaError>;

    /// `getAwaitSemanticCheckpoint(tenantId, interactionId)`.
    fn get_await_semantic_checkpoint(
        &mut self,
        tenant_id: &str,
        interaction_id: &str,
        at_ms: i64,
    ) -> Result<Option<AwaitSemanticCheckpoint>, JavaError>;
}
