//! What TPF's wake-up and reconciler read, as one read-only view both backends implement: the
//! gateway's reads of TPF (`STATUS`, `READ_AWAIT_CHECKPOINT`, `READ_EXECUTION_AWAITS`), the
//! callback-binding table's reads (consistent, as TPF's repository reads them), and the one
//! provider read the reconciler needs before a driver registered.
//!
//! A read that fails (a throttled table, a gateway error) is the view's `Error`: the decisions
//! hand it back untouched, and the caller fails the record or event so it is retried, which is
//! what TPF's handlers do with an exception.

use tpf_wire::gateway::binding::{CallbackBinding, CallbackRegistration};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{AwaitCheckpoint, AwaitIdentity};
use tpf_wire::records::ExecutionStatus;

pub trait HostView {
    type Error;

    /// `READ_AWAIT_CHECKPOINT`: TPF's semantic checkpoint of the identity's interaction, if TPF
    /// has it. TPF looks it up by tenant and interaction only; the whole identity is what the
    /// gateway's request carries (`awaitIdentity`).
    fn await_checkpoint(
        &self,
        identity: &AwaitIdentity,
    ) -> Result<Option<AwaitCheckpoint>, Self::Error>;

    /// `READ_EXECUTION_AWAITS`: every await checkpoint of the execution, in TPF's store order.
    /// `generation` is the driver generation the question is about (a registration's, an
    /// ended driver's): the gateway's request carries one, and TPF answers the same whatever it
    /// is.
    fn execution_awaits(
        &self,
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
    ) -> Result<Vec<AwaitCheckpoint>, Self::Error>;

    /// `STATUS` of a TPF execution, asked for the driver `generation` (as above).
    fn status(
        &self,
        tenant_id: &str,
        execution_id: &str,
        generation: i64,
    ) -> Result<ExecutionStatus, Self::Error>;

    /// The newest REGISTRATION of (tenant, execution): the highest generation.
    fn latest_registration(
        &self,
        tenant_id: &str,
        execution_id: &str,
    ) -> Result<Option<CallbackRegistration>, Self::Error>;

    /// The REGISTRATION whose `provider_execution_arn` is this driver execution's.
    fn registration_by_provider_arn(
        &self,
        provider_execution_arn: &str,
    ) -> Result<Option<CallbackRegistration>, Self::Error>;

    /// The BINDING of (tenant, interaction, generation).
    fn binding(
        &self,
        tenant_id: &str,
        interaction_id: &str,
        generation: i64,
    ) -> Result<Option<CallbackBinding>, Self::Error>;

    /// The generation of the newest BINDING of (tenant, interaction).
    fn latest_binding_generation(
        &self,
        tenant_id: &str,
        interaction_id: &str,
    ) -> Result<Option<i64>, Self::Error>;

    /// Whether the binding's generation has its `DELIVERED#<generation>` row.
    fn delivered(&self, binding: &CallbackBinding) -> Result<bool, Self::Error>;

    /// The input a driver execution was started with (Step Functions: the execution's input;
    /// Lambda durable functions: the durable execution's input payload), read as the
    /// coordinator reads it; `None` when the provider no longer has the execution or its input
    /// is not a coordinator input. Only the reconciler asks, and only when the driver never
    /// registered a callback.
    fn driver_input(
        &self,
        provider_execution_arn: &str,
    ) -> Result<Option<ExecutionInput>, Self::Error>;
}
