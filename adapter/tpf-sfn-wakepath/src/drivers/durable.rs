//! Starting drivers that run as Lambda durable functions: a start invokes the release's
//! function version with the lineage as the durable execution name; "already started" counts
//! as done. The gateway host's starter acts through it (the wake-up's callback send is the
//! gateway provider's, `gateway/provider.rs`).

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::InvocationType;
use serde_json::Value;

use crate::aws::errors;
use crate::error::Error;

/// What Lambda made of a start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acted {
    Done,
    /// A replay: the named execution exists.
    AlreadyDone,
    /// Refused for good (no such function, an invalid name): retrying cannot help.
    Refused(String),
}

/// Starts a durable driver: an asynchronous invoke of `function` (a qualified ARN, so the
/// pinned release's published version runs it) named `lineage`. A name that already has an
/// execution is a replay. `scope` is the calling command's error scope.
pub async fn start(
    lambda: &aws_sdk_lambda::Client,
    scope: &str,
    function: &str,
    lineage: &str,
    input: &Value,
) -> Result<Acted, Error> {
    let result = lambda
        .invoke()
        .function_name(function)
        .invocation_type(InvocationType::Event)
        .durable_execution_name(lineage)
        .payload(Blob::new(input.to_string()))
        .send()
        .await;
    match result {
        Ok(_) => Ok(Acted::Done),
        Err(e)
            if e.as_service_error()
                .is_some_and(|se| se.is_durable_execution_already_started_exception()) =>
        {
            Ok(Acted::AlreadyDone)
        }
        Err(e)
            if e.as_service_error().is_some_and(|se| {
                se.is_resource_not_found_exception()
                    || se.is_invalid_parameter_value_exception()
                    || se.is_invalid_request_content_exception()
            }) =>
        {
            Ok(Acted::Refused(format!(
                "{lineage} ({function}): {}",
                aws_sdk_lambda::error::DisplayErrorContext(&e)
            )))
        }
        Err(e) => Err(errors::from_sdk(scope, "Invoke", e, |_| None)),
    }
}
