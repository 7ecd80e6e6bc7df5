//! The reconciler function's work on one status-change event of a driver execution (Step
//! Functions' `Step Functions Execution Status Change`, Lambda durable functions' `Durable
//! Execution Status Change`): the provider's state of the driver, the decision of
//! `tpf_sfn_wakeup::reconcile`, then the BINDING and the replacement generation through the
//! starter. A piece not visible yet fails the event, so EventBridge's asynchronous invoke
//! delivers it again (TPF's later reconciler throws the same way).

use serde_json::Value;
use tpf_sfn_wakeup::reconcile::{self, Missing, Quiet, Reconcile};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::ActionRequest;

use super::invoke::{Invoked, Invoker};
use super::reads::AwsHost;
use super::starter::Starter;
use crate::error::Error;

/// What the event came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciled {
    /// No driver execution ARN in the event (TPF's handler answers `false`).
    NotAStatusChange,
    Nothing(Quiet),
    /// The next generation started (or had started) under this name.
    Started(String),
}

pub struct Reconciler<I> {
    pub host: AwsHost<I>,
    pub starter: Starter,
}

fn retry(missing: Missing, arn: &str) -> Error {
    Error::new(
        "GATEWAY_HOST_RECONCILE_RETRY",
        format!("the driver {arn} ended and its replacement cannot start yet: {missing:?}"),
    )
    .with_hint("the event fails so it is delivered again; a piece TPF writes is not visible yet")
}

impl<I: Invoker> Reconciler<I> {
    pub async fn on_event(&self, event: &Value) -> Result<Reconciled, Error> {
        let Some(change) = reconcile::status_change(event) else {
            return Ok(Reconciled::NotAStatusChange);
        };
        let arn = change.execution_arn.as_str();
        let state = self.host.providers.driver_state(arn).await?;
        let mut decision = self
            .host
            .decide(|view| reconcile::reconcile(arn, state, view))
            .await?;
        if let Reconcile::Resubmit(input) = &decision {
            let checkpoint = self.resubmit(input).await?;
            decision = self
                .host
                .decide(|view| reconcile::after_resubmit(&checkpoint, input, view))
                .await?;
        }
        match decision {
            Reconcile::Nothing(quiet) => Ok(Reconciled::Nothing(quiet)),
            Reconcile::Replace { bind, start } => {
                if let Some(binding) = &bind {
                    self.host.bindings.put_binding(binding).await?;
                }
                let started = self.starter.start(&start).await?;
                Ok(Reconciled::Started(started.durable_execution_name))
            }
            Reconcile::Retry(missing) => Err(retry(missing, arn)),
            // `after_resubmit` never asks to resubmit again.
            Reconcile::Resubmit(_) => Err(retry(Missing::Registration, arn)),
        }
    }

    /// Generation 1's SUBMIT again: TPF answers a key it admitted with that execution.
    async fn resubmit(
        &self,
        input: &ExecutionInput,
    ) -> Result<tpf_wire::gateway::ExecutionCheckpoint, Error> {
        let request = ActionRequest::submit(input).map_err(|e| {
            Error::new(
                "GATEWAY_HOST_REQUEST",
                "the ended driver's input is no SUBMIT TPF's rules accept",
            )
            .with_source(e)
            .with_hint("the driver was started with an input TPF's ingress would refuse")
        })?;
        let refused = |why: String| {
            Error::new(
                "GATEWAY_HOST_FUNCTION_ERROR",
                format!("the gateway failed SUBMIT of the ended driver's input: {why}"),
            )
            .with_hint("the event is retried; if it persists, look at the gateway's logs")
        };
        match self.host.gateway.invoke(&request).await? {
            Invoked::Response(r) => r
                .checkpoint
                .ok_or_else(|| refused("SUBMIT answered no checkpoint".to_owned())),
            Invoked::Failed(f) => Err(refused(format!("{}: {}", f.error_type, f.error_message))),
        }
    }
}
