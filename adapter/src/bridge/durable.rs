//! The bridge's actions for drivers that run as Lambda durable functions: a start invokes the
//! release's function version with the lineage as the durable execution name, a wake completes
//! the parked driver's callback. "Already done" answers count as done, as for Step Functions.

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::InvocationType;
use serde_json::Value;

use super::{failed, PassReport, RecordHandler};
use crate::error::Error;

impl RecordHandler {
    /// Starts a durable driver: an asynchronous invoke of `function` (a qualified ARN, so the
    /// pinned release's published version runs it) named `lineage`. A name that already has an
    /// execution is a replay.
    pub(super) async fn start_durable(
        &self,
        function: &str,
        lineage: &str,
        input: &Value,
        report: &mut PassReport,
    ) -> Result<(), Error> {
        let result = self
            .lambda
            .invoke()
            .function_name(function)
            .invocation_type(InvocationType::Event)
            .durable_execution_name(lineage)
            .payload(Blob::new(input.to_string()))
            .send()
            .await;
        match result {
            Ok(_) => report.started += 1,
            Err(e)
                if e.as_service_error()
                    .is_some_and(|se| se.is_durable_execution_already_started_exception()) =>
            {
                report.already_done += 1
            }
            Err(e)
                if e.as_service_error().is_some_and(|se| {
                    se.is_resource_not_found_exception()
                        || se.is_invalid_parameter_value_exception()
                        || se.is_invalid_request_content_exception()
                }) =>
            {
                report.refused.push(format!(
                    "{lineage} ({function}): {}",
                    aws_sdk_lambda::error::DisplayErrorContext(&e)
                ))
            }
            Err(e) => return Err(failed("Invoke", e)),
        }
        Ok(())
    }

    /// Completes a parked durable driver's callback (the token row's `task_token` is the
    /// callback id). A callback that already completed or timed out, or whose execution ended,
    /// needs no wake.
    pub(super) async fn wake_durable(
        &self,
        callback_id: &str,
        output: &Value,
        report: &mut PassReport,
    ) -> Result<(), Error> {
        let result = self
            .lambda
            .send_durable_execution_callback_success()
            .callback_id(callback_id)
            .result(Blob::new(output.to_string()))
            .send()
            .await;
        match result {
            Ok(_) => report.woken += 1,
            Err(e)
                if e.as_service_error().is_some_and(|se| {
                    se.is_callback_timeout_exception() || se.is_resource_not_found_exception()
                }) =>
            {
                report.already_done += 1
            }
            Err(e) => return Err(failed("SendDurableExecutionCallbackSuccess", e)),
        }
        Ok(())
    }
}
