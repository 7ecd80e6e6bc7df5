//! One delivery of `process-work-item` from inside a step, and what it came back with. The
//! classification is the Action API's table, the one the Step Functions driver's Catch and
//! Retry implement: a 2xx outcome is an answer; 409 and 404 (or the action function's
//! `TPF.ReleaseIdentityMismatch` / `TPF.ExecutionNotFound`) are TPF's refusals, never retried;
//! anything else is transport, retried with the same idempotency key.

use std::time::Duration;

use aws_sdk_lambda::primitives::Blob;
use serde_json::{json, Value};
use tpf_durable_driver::ops::ActionCall;
use tpf_durable_driver::spec::Binding;
use tpf_durable_driver::{CallOutcome, DurableSpec};
use tpf_sfn_wakepath::action_token::ActionToken;
use tpf_sfn_wakepath::relay::envelope::process_work_item_path;
use tpf_sfn_wakepath::relay::http::{ActionHost, HttpActionHost, Reply};
use tpf_sfn_wakepath::sweep;
use tpf_wire::action::{
    code, envelope, path, task_error, ProcessWorkItemResponse, SweepOnceRequest, SweepOnceResponse,
};

use super::https::HttpsActionHost;
use crate::config::ConfigError;

/// How this release reaches TPF.
pub enum ActionClient {
    /// Action API v1 over plain HTTP (a local action host), with the bearer token the
    /// function's environment points at.
    Http(HttpActionHost),
    /// Action API v1 over HTTPS, as the compiled spec names it.
    Https(Box<HttpsActionHost>),
    /// TPF's action function, invoked synchronously with the action envelope.
    Lambda {
        client: aws_sdk_lambda::Client,
        function_arn: String,
    },
}

impl ActionClient {
    pub fn new(
        spec: &DurableSpec,
        token: ActionToken,
        lambda: aws_sdk_lambda::Client,
    ) -> Result<ActionClient, ConfigError> {
        let timeout = Duration::from_secs(spec.action_timeout_seconds.max(1));
        Ok(match &spec.binding {
            Binding::Http { api_base_url } if api_base_url.starts_with("https://") => {
                ActionClient::Https(Box::new(
                    HttpsActionHost::new(api_base_url, token, timeout)
                        .map_err(|e| ConfigError(format!("the spec's apiBaseUrl: {e}")))?,
                ))
            }
            Binding::Http { api_base_url } => ActionClient::Http(
                HttpActionHost::new(api_base_url, token, timeout)
                    .map_err(|e| ConfigError(format!("the spec's apiBaseUrl: {}", e.report())))?,
            ),
            Binding::Lambda { function_arn } => ActionClient::Lambda {
                client: lambda,
                function_arn: function_arn.clone(),
            },
            Binding::Gateway { .. } => {
                return Err(ConfigError(
                    "the gateway binding has no Action API client: the function runs the gateway driver".to_owned(),
                ))
            }
        })
    }

    /// One delivery; never an error: what went wrong is a [`CallOutcome`] the driver routes.
    /// Bounded as every checkpoint is (`tpf_durable_driver::limits::bounded`), so a generation's
    /// written state stays under the service's cap.
    pub async fn call(&self, call: &ActionCall) -> CallOutcome {
        tpf_durable_driver::limits::bounded(self.deliver(call).await)
    }

    async fn deliver(&self, call: &ActionCall) -> CallOutcome {
        let body = match serde_json::to_string(&call.request) {
            Ok(b) => b,
            Err(e) => return transport(format!("the request could not be written: {e}")),
        };
        let path = process_work_item_path(&call.tenant_id, &call.execution_id);
        match self {
            ActionClient::Http(host) => over_http(host, &path, &body).await,
            ActionClient::Https(host) => over_http(host.as_ref(), &path, &body).await,
            ActionClient::Lambda {
                client,
                function_arn,
            } => {
                let payload = json!({
                    envelope::ACTION: path::PROCESS_WORK_ITEM,
                    envelope::TENANT_ID: call.tenant_id,
                    envelope::EXECUTION_ID: call.execution_id,
                    envelope::REQUEST: call.request,
                });
                match invoke(client, function_arn, &payload).await {
                    Err(e) => transport(format!(
                        "invoking {function_arn}: {}",
                        aws_sdk_lambda::error::DisplayErrorContext(&e)
                    )),
                    Ok(answer) => from_function(answer.error.as_deref(), &answer.payload, now_ms()),
                }
            }
        }
    }
}

impl ActionClient {
    /// This release's sweep-once: over the Action API, or through TPF's action function with
    /// the action envelope (no tenant or execution: a sweep is the release's).
    pub async fn sweep_once(
        &self,
        request: &SweepOnceRequest,
    ) -> Result<SweepOnceResponse, tpf_sfn_wakepath::error::Error> {
        match self {
            ActionClient::Http(host) => sweep::sweep_once_over(host, request).await,
            ActionClient::Https(host) => sweep::sweep_once_over(host.as_ref(), request).await,
            ActionClient::Lambda {
                client,
                function_arn,
            } => {
                let payload = json!({
                    envelope::ACTION: path::SWEEP_ONCE,
                    envelope::REQUEST: request,
                });
                let answer = invoke(client, function_arn, &payload).await.map_err(|e| {
                    tpf_sfn_wakepath::aws::errors::from_sdk(
                        sweep::SCOPE,
                        "Invoke (sweep-once)",
                        e,
                        |_| None,
                    )
                })?;
                match answer.error {
                    None => sweep::answer(&answer.payload),
                    Some(kind) => Err(tpf_sfn_wakepath::error::Error::new(
                        "SWEEP_ACTION",
                        format!(
                            "TPF's action function failed the sweep ({kind}): {}",
                            answer.payload
                        ),
                    )
                    .with_hint(
                        "the action function's logs say why; the next scheduled sweep tries again",
                    )),
                }
            }
        }
    }
}

/// What TPF's action function answered one synchronous invoke with.
pub(crate) struct Invoked {
    /// `FunctionError`, when the function failed.
    pub(crate) error: Option<String>,
    pub(crate) payload: String,
}

/// One synchronous invoke of TPF's action function with an action envelope.
/// A synchronous invoke: the function error Lambda reports and the payload's text.
pub(crate) async fn invoke(
    client: &aws_sdk_lambda::Client,
    function_arn: &str,
    payload: &Value,
) -> Result<Invoked, aws_sdk_lambda::error::SdkError<aws_sdk_lambda::operation::invoke::InvokeError>>
{
    invoke_text(client, function_arn, payload.to_string()).await
}

/// [`invoke`] with the payload's exact bytes.
pub(crate) async fn invoke_text(
    client: &aws_sdk_lambda::Client,
    function_arn: &str,
    payload: String,
) -> Result<Invoked, aws_sdk_lambda::error::SdkError<aws_sdk_lambda::operation::invoke::InvokeError>>
{
    let out = client
        .invoke()
        .function_name(function_arn)
        .payload(Blob::new(payload))
        .send()
        .await?;
    Ok(Invoked {
        error: out.function_error().map(str::to_owned),
        payload: out
            .payload()
            .map(|p| String::from_utf8_lossy(p.as_ref()).into_owned())
            .unwrap_or_default(),
    })
}

async fn over_http<H: ActionHost>(host: &H, path: &str, body: &str) -> CallOutcome {
    match host.post(path, body).await {
        Ok(reply) => from_reply(&reply, now_ms()),
        Err(e) => transport(e.0),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn transport(message: impl Into<String>) -> CallOutcome {
    CallOutcome::Transport {
        message: message.into(),
    }
}

fn answer(text: &str, at_ms: i64, what: &str) -> CallOutcome {
    match serde_json::from_str::<ProcessWorkItemResponse>(text) {
        Ok(response) => CallOutcome::Answer {
            at_ms,
            response: Box::new(response),
        },
        Err(e) => transport(format!(
            "{what} that is not a process-work-item outcome: {e}"
        )),
    }
}

/// An HTTP reply of the action host.
pub fn from_reply(reply: &Reply, at_ms: i64) -> CallOutcome {
    let refused = |default_code: &str| {
        let body: Value = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
        CallOutcome::Refused {
            code: body["code"].as_str().unwrap_or(default_code).to_owned(),
            message: body["message"]
                .as_str()
                .map_or_else(|| reply.body.clone(), str::to_owned),
        }
    };
    match reply.status {
        200..=299 => answer(
            &reply.body,
            at_ms,
            &format!("HTTP {} with a body", reply.status),
        ),
        409 => refused(code::RELEASE_IDENTITY_MISMATCH),
        404 => refused(code::EXECUTION_NOT_FOUND),
        status => transport(format!("HTTP {status}: {}", reply.body)),
    }
}

/// An action function's answer: its payload, and `FunctionError` when it failed.
pub fn from_function(function_error: Option<&str>, payload: &str, at_ms: i64) -> CallOutcome {
    if function_error.is_none() {
        return answer(payload, at_ms, "a payload");
    }
    let body: Value = serde_json::from_str(payload).unwrap_or(Value::Null);
    let message = body["errorMessage"]
        .as_str()
        .map_or_else(|| payload.to_owned(), str::to_owned);
    match body["errorType"].as_str() {
        Some(task_error::RELEASE_IDENTITY_MISMATCH) => CallOutcome::Refused {
            code: code::RELEASE_IDENTITY_MISMATCH.to_owned(),
            message,
        },
        Some(task_error::EXECUTION_NOT_FOUND) => CallOutcome::Refused {
            code: code::EXECUTION_NOT_FOUND.to_owned(),
            message,
        },
        other => transport(format!(
            "the action function failed ({}): {message}",
            other.unwrap_or("no errorType")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTCOME: &str = r#"{"tenantId":"t","executionId":"e","status":"WAITING_EXTERNAL","version":3,
        "currentStepIndex":2,"attempt":0,"nextDueAt":null,"await":null,"errorCode":null,
        "claimed":true,"driver":null}"#;

    fn reply(status: u16, body: &str) -> Reply {
        Reply {
            status,
            body: body.into(),
        }
    }

    #[test]
    fn an_http_outcome_is_an_answer_stamped_with_the_steps_clock() {
        match from_reply(&reply(200, OUTCOME), 42) {
            CallOutcome::Answer { at_ms, response } => {
                assert_eq!(at_ms, 42);
                assert_eq!(response.version, 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            from_reply(&reply(200, "<html>"), 0),
            CallOutcome::Transport { .. }
        ));
    }

    #[test]
    fn tpf_refusals_carry_its_code_and_everything_else_is_transport() {
        let r = from_reply(
            &reply(
                409,
                r#"{"code":"RELEASE_IDENTITY_MISMATCH","message":"pinned to r1"}"#,
            ),
            0,
        );
        assert_eq!(
            r,
            CallOutcome::Refused {
                code: code::RELEASE_IDENTITY_MISMATCH.into(),
                message: "pinned to r1".into()
            }
        );
        assert!(matches!(
            from_reply(&reply(404, "gone"), 0),
            CallOutcome::Refused { code, .. } if code == code::EXECUTION_NOT_FOUND
        ));
        for status in [400, 401, 429, 500, 503] {
            assert!(
                matches!(
                    from_reply(&reply(status, "{}"), 0),
                    CallOutcome::Transport { .. }
                ),
                "{status}"
            );
        }
    }

    #[test]
    fn an_action_functions_error_type_is_read_like_the_drivers_catch() {
        assert!(matches!(
            from_function(None, OUTCOME, 7),
            CallOutcome::Answer { at_ms: 7, .. }
        ));
        let refused = from_function(
            Some("Unhandled"),
            r#"{"errorType":"TPF.ExecutionNotFound","errorMessage":"no such execution"}"#,
            0,
        );
        assert_eq!(
            refused,
            CallOutcome::Refused {
                code: code::EXECUTION_NOT_FOUND.into(),
                message: "no such execution".into()
            }
        );
        assert!(matches!(
            from_function(
                Some("Unhandled"),
                r#"{"errorType":"TPF.TransportError"}"#,
                0
            ),
            CallOutcome::Transport { .. }
        ));
        assert!(matches!(
            from_function(Some("Unhandled"), "boom", 0),
            CallOutcome::Transport { .. }
        ));
    }
}
