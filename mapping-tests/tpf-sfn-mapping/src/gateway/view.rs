//! `HostView` over the world: TPF's reads through the model's control plane (the calls behind
//! the gateway's `STATUS`, `READ_AWAIT_CHECKPOINT`, `READ_EXECUTION_AWAITS`), the binding
//! table's consistent reads, the provider-ARN index (which may lag), and a driver's start
//! input from its engine.

use std::cell::RefCell;

use tpf_model::gateway::{checkpoint_of, BindingStore, ControlPlane};
use tpf_sfn_wakeup::view::HostView;
use tpf_wire::gateway::binding::{attr, CallbackBinding, CallbackRegistration, RowType};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::AwaitCheckpoint;
use tpf_wire::gateway::AwaitIdentity;
use tpf_wire::java_error::JavaError;
use tpf_wire::records::{AttrValue, ExecutionStatus};

use super::engine::GatewayEngine;
use super::world::ModelGateway;

pub(super) struct ModelView<'a, E> {
    /// The control plane's reads take `&mut` (they are TPF's calls); the view is `&self`.
    pub gateway: RefCell<&'a mut ModelGateway>,
    pub engine: &'a E,
    pub now_ms: i64,
    /// How long a REGISTRATION stays invisible to the provider-ARN index.
    pub index_lag_ms: i64,
    /// A mutation for the generation-fence check's own test: the newest binding is not read.
    pub no_fence: bool,
}

impl<E: GatewayEngine> HostView for ModelView<'_, E> {
    type Error = JavaError;

    fn await_checkpoint(
        &self,
        identity: &AwaitIdentity,
    ) -> Result<Option<AwaitCheckpoint>, JavaError> {
        let found = self
            .gateway
            .borrow_mut()
            .plane
            .get_await_semantic_checkpoint(
                &identity.tenant_id,
                &identity.interaction_id,
                self.now_ms,
            )?;
        found.as_ref().map(checkpoint_of).transpose()
    }

    fn execution_awaits(
        &self,
        tenant_id: &str,
        execution_id: &str,
        _generation: i64,
    ) -> Result<Vec<AwaitCheckpoint>, JavaError> {
        let found = self
            .gateway
            .borrow_mut()
            .plane
            .get_await_semantic_checkpoints(
                tenant_id,
                execution_id,
                tpf_model::gateway::AWAIT_CHECKPOINT_LIMIT,
                self.now_ms,
            )?;
        found.iter().map(checkpoint_of).collect()
    }

    fn status(
        &self,
        tenant_id: &str,
        execution_id: &str,
        _generation: i64,
    ) -> Result<ExecutionStatus, JavaError> {
        self.gateway
            .borrow_mut()
            .plane
            .get_execution_status(tenant_id, execution_id, self.now_ms)
    }

    fn latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        self.gateway
            .borrow()
            .bindings
            .find_latest_registration(tenant_id, execution_id)
    }

    /// The `provider-execution-index` query: REGISTRATION rows only, and only those the index
    /// already shows.
    fn registration_by_provider_arn(
        &self,
        provider_execution_arn: &str,
    ) -> Result<Option<CallbackRegistration>, JavaError> {
        let gateway = self.gateway.borrow();
        let registration = AttrValue::S(RowType::Registration.as_str().to_owned());
        let arn = AttrValue::S(provider_execution_arn.to_owned());
        let found = gateway
            .bindings
            .items()
            .filter(|i| i.get(attr::RECORD_TYPE) == Some(&registration))
            .filter(|i| i.get(attr::PROVIDER_EXECUTION_ARN) == Some(&arn))
            .filter_map(|i| CallbackRegistration::from_item(i).ok())
            .find(|r| r.created_at_epoch_ms + self.index_lag_ms <= self.now_ms);
        Ok(found)
    }

    fn binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackBinding>, JavaError> {
        self.gateway
            .borrow()
            .bindings
            .find_binding(tenant_id, interaction_id, generation)
    }

    fn latest_binding_generation(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<i64>, JavaError> {
        if self.no_fence {
            return Ok(None);
        }
        Ok(self
            .gateway
            .borrow()
            .bindings
            .find_latest_binding(tenant_id, interaction_id)?
            .map(|b| b.await_identity.generation))
    }

    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, JavaError> {
        self.gateway.borrow().bindings.delivered(binding)
    }

    fn driver_input(
        &self,
        provider_execution_arn: &str,
    ) -> Result<Option<ExecutionInput>, JavaError> {
        Ok(self
            .engine
            .driver(provider_execution_arn)
            .and_then(|d| ExecutionInput::read(&d.input).ok()))
    }
}
