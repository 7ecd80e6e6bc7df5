//! TPF's action gateway (`AwsDurableControlPlaneActions`): the ten operations over a
//! [`ControlPlane`] and the callback-binding table ([`BindingStore`]), with TPF's operation-level
//! rules and messages. The wire form is `tpf_wire::gateway`; this module holds the behaviour.
//!
//! [`Gateway::serve`] is the whole Lambda: it reads a request as the gateway's Quarkus mapper
//! does, dispatches it, and answers the response JSON or the function error TPF's handler
//! would raise.

mod bindings;
mod plane;

pub use bindings::{
    settle_taken_key, BindingRows, BindingStore, Delivery, InMemoryBindings, MemoryRows, Put, Table,
};
pub use plane::{
    Accepted, AwaitSemanticCheckpoint, ControlPlane, RedriveCall, RedriveIntent, RequestedRelease,
    AWAIT_CHECKPOINT_LIMIT,
};

use tpf_wire::gateway::binding::{
    registration_missing, CallbackRegistration, ProviderFields, DEFAULT_RETENTION_SECONDS,
};
use tpf_wire::gateway::key::request as request_key;
use tpf_wire::gateway::response::SWEEPED;
use tpf_wire::gateway::{
    ActionRequest, ActionResponse, AwaitCheckpoint, AwaitIdentity, DriverCheckpoint,
    ExecutionCheckpoint, FunctionError, Operation,
};
use tpf_wire::java_error::JavaError;
use tpf_wire::java_text::{is_java_blank, jackson_compact};

/// `required(optional, name)` of the gateway: present and not blank, else
/// `IllegalArgumentException("<name> is required")`.
fn required<'a>(value: Option<&'a str>, name: &str) -> Result<&'a str, JavaError> {
    value
        .filter(|v| !is_java_blank(v))
        .ok_or_else(|| JavaError::illegal_argument(format!("{name} is required")))
}

fn identity_required(request: &ActionRequest) -> Result<&AwaitIdentity, JavaError> {
    request
        .await_identity
        .as_ref()
        .ok_or_else(|| JavaError::illegal_argument("awaitIdentity is required"))
}

/// `AwaitSemanticCheckpoint` → `AwsDurableAwaitCheckpoint` (the status by name).
pub fn checkpoint_of(c: &AwaitSemanticCheckpoint) -> Result<AwaitCheckpoint, JavaError> {
    AwaitCheckpoint::new([
        Some(&c.tenant_id),
        Some(&c.execution_id),
        Some(&c.interaction_id),
        Some(&c.correlation_id),
        Some(&c.unit_id),
        Some(&c.step_id),
        Some(c.status.as_str()),
        Some(&c.pipeline_id),
        Some(&c.contract_version),
        Some(&c.release_version),
    ])
}

/// The action gateway over a control plane and a binding table.
pub struct Gateway<P, B> {
    pub plane: P,
    pub bindings: B,
    /// `TPF_AWS_DURABLE_CALLBACK_RETENTION_SECONDS`.
    pub retention_seconds: i64,
}

impl<P: ControlPlane, B: BindingStore> Gateway<P, B> {
    pub fn new(plane: P, bindings: B) -> Self {
        Self {
            plane,
            bindings,
            retention_seconds: DEFAULT_RETENTION_SECONDS,
        }
    }

    /// The Lambda: the request text in, the response JSON or the function error out.
    pub fn serve(&mut self, request_json: &str, now_ms: i64) -> Result<String, FunctionError> {
        ActionRequest::read(request_json)
            .and_then(|request| self.dispatch(&request, now_ms))
            .map(|response| response.to_json())
            .map_err(|e| FunctionError::from(&e))
    }

    /// `invoke(request)`: one operation.
    pub fn dispatch(
        &mut self,
        request: &ActionRequest,
        now_ms: i64,
    ) -> Result<ActionResponse, JavaError> {
        let tenant = request.tenant_id.as_str();
        let execution = || required(request.execution_id.as_deref(), "executionId");
        match request.operation {
            Operation::Submit => self.submit(request, now_ms),
            Operation::Status => {
                let status = self
                    .plane
                    .get_execution_status(tenant, execution()?, now_ms)?;
                ActionResponse::status(status.as_str())
            }
            Operation::Result => {
                let payload =
                    self.plane
                        .get_execution_result_payload(tenant, execution()?, now_ms)?;
                ActionResponse::result(&jackson_compact(&payload))
            }
            Operation::Redrive => {
                let execution_id = execution()?;
                let expected_version = request
                    .expected_version
                    .ok_or_else(|| JavaError::illegal_argument("expectedVersion is required"))?;
                let call = RedriveCall {
                    tenant_id: tenant,
                    execution_id,
                    expected_version,
                    allow_failed: true,
                    intent: RedriveIntent::Replay,
                    reason: required(request.reason.as_deref(), "reason")?,
                };
                let status = self.plane.redrive_execution(&call, now_ms)?;
                ActionResponse::status(status.as_str())
            }
            Operation::Sweep => {
                self.plane.sweep_once(now_ms)?;
                ActionResponse::status(SWEEPED)
            }
            Operation::QueryPendingAwait => {
                let checkpoints = self.execution_awaits(request, now_ms)?;
                match checkpoints.iter().find(|c| !c.status.terminal()) {
                    Some(c) => Ok(ActionResponse::pending_await(AwaitIdentity::new(
                        Some(&c.tenant_id),
                        Some(&c.execution_id),
                        Some(&c.interaction_id),
                        Some(&c.correlation_id),
                        request.generation,
                    )?)),
                    None => Ok(ActionResponse::empty()),
                }
            }
            Operation::ReadAwaitCheckpoint => {
                let identity = identity_required(request)?;
                let checkpoint = self
                    .plane
                    .get_await_semantic_checkpoint(
                        &identity.tenant_id,
                        &identity.interaction_id,
                        now_ms,
                    )?
                    .ok_or_else(|| {
                        JavaError::illegal_state("Await semantic checkpoint is not available")
                    })?;
                Ok(ActionResponse::await_checkpoint(checkpoint_of(
                    &checkpoint,
                )?))
            }
            Operation::ReadExecutionAwaits => {
                let checkpoints = self.execution_awaits(request, now_ms)?;
                Ok(ActionResponse::await_checkpoints(
                    checkpoints
                        .iter()
                        .map(checkpoint_of)
                        .collect::<Result<_, _>>()?,
                ))
            }
            Operation::RegisterCallback => self.register(request, now_ms),
            Operation::BindCallback => {
                let identity = identity_required(request)?;
                let registration = self
                    .bindings
                    .find_registration(
                        &identity.tenant_id,
                        &identity.execution_id,
                        identity.generation,
                    )?
                    .ok_or_else(registration_missing)?;
                let created = self.bindings.bind(&registration.bind(identity)?)?;
                Ok(ActionResponse::bound(created))
            }
        }
    }

    /// `getAwaitSemanticCheckpoints(tenant, executionId, 100)`.
    fn execution_awaits(
        &mut self,
        request: &ActionRequest,
        now_ms: i64,
    ) -> Result<Vec<AwaitSemanticCheckpoint>, JavaError> {
        self.plane.get_await_semantic_checkpoints(
            &request.tenant_id,
            required(request.execution_id.as_deref(), "executionId")?,
            AWAIT_CHECKPOINT_LIMIT,
            now_ms,
        )
    }

    fn submit(
        &mut self,
        request: &ActionRequest,
        now_ms: i64,
    ) -> Result<ActionResponse, JavaError> {
        let input = required(request.input_json.as_deref(), "inputJson")?;
        let tenant = request.tenant_id.as_str();
        let key = required(request.idempotency_key.as_deref(), "idempotencyKey")?;
        let release = RequestedRelease {
            pipeline_id: required(request.pipeline_id.as_deref(), "pipelineId")?,
            contract_version: required(request.contract_version.as_deref(), "contractVersion")?,
            release_version: required(request.release_version.as_deref(), "releaseVersion")?,
        };
        let accepted = self
            .plane
            .execute_pipeline_async(input, tenant, key, false, release, now_ms)?;
        let checkpoint = ExecutionCheckpoint::new(
            Some(tenant),
            Some(&accepted.execution_id),
            Some(release.pipeline_id),
            Some(release.contract_version),
            Some(release.release_version),
        )?;
        Ok(ActionResponse::submitted(checkpoint, accepted.duplicate))
    }

    fn register(
        &mut self,
        request: &ActionRequest,
        now_ms: i64,
    ) -> Result<ActionResponse, JavaError> {
        let execution = ExecutionCheckpoint::new(
            Some(&request.tenant_id),
            Some(required(request.execution_id.as_deref(), "executionId")?),
            Some(required(request.pipeline_id.as_deref(), "pipelineId")?),
            Some(required(
                request.contract_version.as_deref(),
                "contractVersion",
            )?),
            Some(required(
                request.release_version.as_deref(),
                "releaseVersion",
            )?),
        )?;
        let checkpoint = DriverCheckpoint::new(execution, request.generation)?;
        let provider = ProviderFields::new(
            Some(required(
                request.provider_execution_name.as_deref(),
                request_key::PROVIDER_EXECUTION_NAME,
            )?),
            Some(required(
                request.provider_execution_arn.as_deref(),
                request_key::PROVIDER_EXECUTION_ARN,
            )?),
            Some(required(
                request.provider_callback_id.as_deref(),
                request_key::PROVIDER_CALLBACK_ID,
            )?),
        )?;
        let registration = CallbackRegistration::new(
            checkpoint,
            provider,
            now_ms,
            CallbackRegistration::expiry_after(now_ms, self.retention_seconds),
        )?;
        Ok(ActionResponse::bound(
            self.bindings.register(&registration)?,
        ))
    }
}
