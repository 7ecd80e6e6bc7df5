//! The queue transport of the gateway binding: the driver sends
//! `{gatewayRequest, taskToken, park}` with `sqs:sendMessage.waitForTaskToken` where it
//! would otherwise invoke the gateway itself; the relay invokes the gateway with the request
//! ([`GatewayInvoker`]: `serve`'s route locally) and answers the token as that invoke would have
//! ended (`tpf_sfn_wakeup::gateway_relay`). A parking call's success sends nothing: its token is
//! the callback id TPF's wake-up answers.

use aws_sdk_lambda::error::SdkError;
use aws_sdk_lambda::primitives::Blob;
use serde_json::Value;
use tpf_wire::gateway::invoke::{lambda_error, FUNCTION_ERROR_HEADER, PATH};
use tpf_wire::gateway::key::relay as field;
use tpf_wire::gateway::ActionRequest;

pub use tpf_sfn_wakeup::gateway_relay::Invocation;

use super::envelope::Malformed;
use super::http::HttpActionHost;
use super::{Handled, MessageHandler, Tokens};
use crate::error::Error;

/// One parsed message.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayEnvelope {
    /// The request's JSON text, as the driver wrote it: the relay forwards it unchanged, as
    /// Step Functions would have sent it as the invoke's payload.
    pub request: String,
    pub task_token: String,
    pub park: bool,
    /// What the request is about, for the relay's log.
    subject: String,
}

impl GatewayEnvelope {
    pub fn parse(body: &str) -> Result<GatewayEnvelope, Malformed> {
        let value: Value =
            serde_json::from_str(body).map_err(|e| Malformed(format!("not JSON: {e}")))?;
        let task_token = match value.get(field::TASK_TOKEN) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return Err(Malformed(format!(
                    "`{}` must be a non-empty string",
                    field::TASK_TOKEN
                )))
            }
        };
        let park = match value.get(field::PARK) {
            Some(Value::Bool(b)) => *b,
            _ => {
                return Err(Malformed(format!(
                    "`{}` must be true or false",
                    field::PARK
                )))
            }
        };
        let request = match value.get(field::GATEWAY_REQUEST) {
            Some(r @ Value::Object(_)) => r.to_string(),
            _ => {
                return Err(Malformed(format!(
                    "`{}` must be a JSON object",
                    field::GATEWAY_REQUEST
                )))
            }
        };
        // The subject only names the call in the log; a request the gateway refuses is still
        // relayed, and its function error answers the token.
        let subject = match ActionRequest::read(&request) {
            Ok(r) => match &r.execution_id {
                Some(id) => format!("{} {}/{id}", r.operation.as_str(), r.tenant_id),
                None => format!("{} {}", r.operation.as_str(), r.tenant_id),
            },
            Err(_) => "a request the gateway refuses".to_owned(),
        };
        Ok(GatewayEnvelope {
            request,
            task_token,
            park,
            subject,
        })
    }
}

/// Anything that can invoke the gateway with a request's JSON text; the tests substitute
/// their own.
pub trait GatewayInvoker {
    fn invoke(&self, request: &str) -> impl std::future::Future<Output = Invocation> + Send;
}

/// `serve`'s gateway route, which answers as Lambda's Invoke does.
impl GatewayInvoker for HttpActionHost {
    async fn invoke(&self, request: &str) -> Invocation {
        match self.exchange(PATH, request, FUNCTION_ERROR_HEADER).await {
            Ok(reply) => Invocation::from_http(reply.status, reply.header.is_some(), reply.body),
            Err(unreachable) => Invocation::unreachable(unreachable.0),
        }
    }
}

/// The gateway as a Lambda function, invoked synchronously by the ARN of its numbered version
/// (the binding's `function-arn`, which the compiler refuses unqualified or by alias).
#[derive(Debug, Clone)]
pub struct LambdaGateway {
    client: aws_sdk_lambda::Client,
    function_arn: String,
}

impl LambdaGateway {
    pub fn new(client: aws_sdk_lambda::Client, function_arn: impl Into<String>) -> Self {
        Self {
            client,
            function_arn: function_arn.into(),
        }
    }
}

/// What one synchronous invoke answered: the function error Lambda reports (`FunctionError`,
/// when the function failed) and the payload's text.
pub struct Invoked {
    pub function_error: Option<String>,
    pub payload: String,
}

/// One synchronous invoke of `function_arn` with the request's exact bytes. Shared by the relay
/// and the durable gateway driver, which read the answer each their own way.
pub async fn invoke_sync(
    client: &aws_sdk_lambda::Client,
    function_arn: &str,
    request: &str,
) -> Result<Invoked, SdkError<aws_sdk_lambda::operation::invoke::InvokeError>> {
    let out = client
        .invoke()
        .function_name(function_arn)
        .payload(Blob::new(request.as_bytes().to_vec()))
        .send()
        .await?;
    Ok(Invoked {
        function_error: out.function_error().map(str::to_owned),
        payload: out
            .payload()
            .map(|p| String::from_utf8_lossy(p.as_ref()).into_owned())
            .unwrap_or_default(),
    })
}

impl GatewayInvoker for LambdaGateway {
    async fn invoke(&self, request: &str) -> Invocation {
        match invoke_sync(&self.client, &self.function_arn, request).await {
            Ok(Invoked {
                function_error: Some(_),
                payload,
            }) => Invocation::FunctionError(payload),
            Ok(Invoked { payload, .. }) => Invocation::Response(payload),
            Err(e) => {
                let cause = aws_sdk_lambda::error::DisplayErrorContext(&e).to_string();
                let error = match &e {
                    SdkError::ServiceError(se) if se.err().is_too_many_requests_exception() => {
                        lambda_error::TOO_MANY_REQUESTS
                    }
                    SdkError::ServiceError(se) if se.raw().status().as_u16() >= 500 => {
                        lambda_error::SERVICE
                    }
                    SdkError::ServiceError(_) => lambda_error::AWS_LAMBDA,
                    // Not sent, timed out, or no readable answer: the client's failure.
                    _ => lambda_error::SDK_CLIENT,
                };
                Invocation::Transport {
                    error: error.to_owned(),
                    cause,
                }
            }
        }
    }
}

/// One message's work for the gateway transport, shared by the polling relay and the Lambda
/// handler.
pub struct GatewayRelay<G> {
    tokens: Tokens,
    gateway: G,
}

impl<G: GatewayInvoker + Sync> GatewayRelay<G> {
    pub fn new(sfn: aws_sdk_sfn::Client, gateway: G) -> Self {
        GatewayRelay {
            tokens: Tokens { sfn },
            gateway,
        }
    }
}

impl<G: GatewayInvoker + Sync> MessageHandler for GatewayRelay<G> {
    async fn relay(&self, body: &str) -> Result<Handled, Error> {
        let envelope = match GatewayEnvelope::parse(body) {
            Ok(e) => e,
            Err(m) => return Ok(Handled::Malformed(m.to_string())),
        };
        let invocation = self.gateway.invoke(&envelope.request).await;
        let subject = envelope.subject;
        let Some(answer) = tpf_sfn_wakeup::gateway_relay::answer(invocation, envelope.park) else {
            return Ok(Handled::Answered {
                error: None,
                subject,
                cause: String::new(),
            });
        };
        let closed = self.tokens.answer(&envelope.task_token, &answer).await?;
        Ok(Handled::of(answer, subject, closed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(request: &str, park: &str) -> String {
        format!(r#"{{"gatewayRequest":{request},"taskToken":"tok","park":{park}}}"#)
    }

    #[test]
    fn the_request_is_forwarded_as_written_and_park_is_required() {
        let request = r#"{"operation":"STATUS","tenantId":"t","executionId":"e","generation":1}"#;
        let e = GatewayEnvelope::parse(&body(request, "false")).unwrap();
        assert_eq!(e.request, request);
        assert_eq!((e.task_token.as_str(), e.park), ("tok", false));
        assert_eq!(e.subject, "STATUS t/e");
        assert!(GatewayEnvelope::parse(&body(request, "true")).unwrap().park);
        for bad in [
            body(request, "\"yes\""),
            body("\"STATUS\"", "false"),
            format!(r#"{{"gatewayRequest":{request},"park":false}}"#),
            "[]".to_owned(),
        ] {
            assert!(GatewayEnvelope::parse(&bad).is_err(), "{bad}");
        }
        // A request the gateway will refuse is still relayed: its function error answers.
        let refused = GatewayEnvelope::parse(&body(r#"{"operation":"NOPE"}"#, "false")).unwrap();
        assert_eq!(refused.subject, "a request the gateway refuses");
    }
}
