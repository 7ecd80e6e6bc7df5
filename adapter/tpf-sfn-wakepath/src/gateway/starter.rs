//! TPF's ingress (`AwsDurableIngressHandler`, its starter `AwsDurableExecutionStarter`): a
//! coordinator input in, a driver generation started under TPF's durable execution name
//! out. The release's driver is a Step Functions machine (`StartExecution`) or, for a release
//! deployed as Lambda durable functions, its function's numbered version (`Invoke`, `Event`,
//! with the durable execution name). A name that already started is a start: TPF's starter
//! answers 202 for it, and a repeated start (a retried wake-up, a second reconcile) finds the
//! generation that runs.

use serde_json::Value;
use tpf_wire::gateway::start::{ExecutionInput, StartResponse, STARTED_STATUS};

use crate::aws::errors::{self, Kind};
use crate::drivers::durable::{self, Acted};
use crate::drivers::{DurableFunctions, Machines};
use crate::error::Error;

/// Where each release's driver runs.
#[derive(Debug, Clone)]
pub struct Starter {
    pub sfn: aws_sdk_sfn::Client,
    pub lambda: aws_sdk_lambda::Client,
    pub machines: Machines,
    pub durable: DurableFunctions,
}

fn refused(name: &str, driver: &str, why: impl std::fmt::Display) -> Error {
    Error::new(
        "GATEWAY_HOST_START_REFUSED",
        format!("the driver {driver} refused the start of {name}: {why}"),
    )
    .with_hint("deploy the release's driver (its release stack), or list its durable function in the wake path's durable functions")
}

impl Starter {
    /// Starts the input's generation; `Ok` for a start and for a name that already started.
    pub async fn start(&self, input: &ExecutionInput) -> Result<StartResponse, Error> {
        let name = input.durable_execution_name();
        let payload = input.to_json();
        if let Some(function) = self
            .durable
            .function(&input.pipeline_id, &input.release_version)
        {
            let value: Value = serde_json::from_str(&payload).unwrap_or(Value::Null);
            return match durable::start(&self.lambda, super::SCOPE, function, &name, &value).await?
            {
                Acted::Done | Acted::AlreadyDone => Ok(started(name)),
                Acted::Refused(why) => Err(refused(&name, function, why)),
            };
        }
        let machine = self
            .machines
            .driver_arn(&input.pipeline_id, &input.release_version);
        let result = self
            .sfn
            .start_execution()
            .state_machine_arn(&machine)
            .name(&name)
            .input(payload)
            .send()
            .await;
        match result {
            Ok(_) => Ok(started(name)),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_execution_already_exists()) =>
            {
                Ok(started(name))
            }
            Err(e)
                if e.as_service_error().is_some_and(|se| {
                    se.is_state_machine_does_not_exist()
                        || se.is_state_machine_deleting()
                        || se.is_invalid_arn()
                        || se.is_invalid_name()
                        || se.is_invalid_execution_input()
                }) =>
            {
                Err(refused(
                    &name,
                    &machine,
                    aws_sdk_sfn::error::DisplayErrorContext(&e),
                ))
            }
            Err(e) => Err(errors::from_sdk(super::SCOPE, "StartExecution", e, |e| {
                if e.is_execution_limit_exceeded() {
                    Some(Kind::LimitExceeded)
                } else {
                    None
                }
            })),
        }
    }
}

fn started(name: String) -> StartResponse {
    StartResponse {
        durable_execution_name: name,
        status_code: STARTED_STATUS,
    }
}
