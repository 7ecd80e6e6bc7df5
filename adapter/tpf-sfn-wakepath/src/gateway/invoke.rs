//! Calling TPF's action gateway: one request in, its response or its function error out.
//!
//! In production the gateway is a Lambda function invoked by its numbered version
//! ([`LambdaInvoker`]), never an unqualified name or an alias, so a host's reads are answered
//! by the gateway release it was deployed with. Locally, `serve` answers the same request on
//! `POST /tpf/gateway/v1/invoke` as Lambda's Invoke would ([`HttpInvoker`]).

use std::future::Future;
use std::time::Duration;

use aws_sdk_lambda::primitives::Blob;
use tpf_wire::gateway::response::FUNCTION_ERROR_UNHANDLED;
use tpf_wire::gateway::{ActionRequest, ActionResponse, FunctionError};

use crate::aws::errors::{self, Kind};
use crate::error::Error;
use crate::relay::http::HttpActionHost;

/// `serve`'s gateway route, and Lambda's response header naming a function error, which the
/// route sets too.
pub use tpf_wire::gateway::invoke::{FUNCTION_ERROR_HEADER, PATH as ROUTE};

/// What the gateway answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invoked {
    Response(Box<ActionResponse>),
    /// The operation threw: TPF's exception class and message.
    Failed(FunctionError),
}

/// Anything that can invoke the gateway; the tests and the local loop substitute their own.
pub trait Invoker {
    fn invoke(
        &self,
        request: &ActionRequest,
    ) -> impl Future<Output = Result<Invoked, Error>> + Send;
}

/// A Lambda function ARN qualified by a published version
/// (`arn:<partition>:lambda:<region>:<account>:function:<name>:<digits>`).
pub fn is_numbered_version(arn: &str) -> bool {
    arn.rsplit_once(':').is_some_and(|(head, version)| {
        head.starts_with("arn:")
            && head.contains(":lambda:")
            && head.contains(":function:")
            && !head.ends_with(":function")
            && !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The gateway as a Lambda function, by its numbered version.
#[derive(Debug, Clone)]
pub struct LambdaInvoker {
    client: aws_sdk_lambda::Client,
    function_arn: String,
}

impl LambdaInvoker {
    /// Refuses an unqualified ARN, `$LATEST` or an alias (`GATEWAY_HOST_UNQUALIFIED`).
    pub fn new(client: aws_sdk_lambda::Client, function_arn: &str) -> Result<Self, Error> {
        if !is_numbered_version(function_arn) {
            return Err(Error::new(
                "GATEWAY_HOST_UNQUALIFIED",
                format!("the gateway `{function_arn}` is not a published version's ARN"),
            )
            .with_hint(
                "give the gateway function's numbered version: arn:aws:lambda:<region>:<account>:function:<name>:<version>",
            ));
        }
        Ok(Self {
            client,
            function_arn: function_arn.to_owned(),
        })
    }
}

/// A payload the gateway answered: its response, or the function error Lambda reported.
fn answer(function_error: Option<&str>, payload: &str) -> Result<Invoked, Error> {
    if function_error.is_some() {
        return serde_json::from_str::<FunctionError>(payload)
            .map(Invoked::Failed)
            .map_err(|e| {
                Error::new(
                    "GATEWAY_HOST_RESPONSE",
                    format!(
                        "the gateway failed ({}) with a payload that is not a function error: {payload}",
                        function_error.unwrap_or(FUNCTION_ERROR_UNHANDLED)
                    ),
                )
                .with_source(e)
                .with_hint("check that the function is TPF's action gateway")
            });
    }
    ActionResponse::read(payload)
        .map(|r| Invoked::Response(Box::new(r)))
        .map_err(|e| {
            Error::new(
                "GATEWAY_HOST_RESPONSE",
                format!("the gateway answered something that is not its response: {payload}"),
            )
            .with_source(e)
            .with_hint("check that the function is TPF's action gateway, of the version the host was deployed with")
        })
}

impl Invoker for LambdaInvoker {
    async fn invoke(&self, request: &ActionRequest) -> Result<Invoked, Error> {
        let out = self
            .client
            .invoke()
            .function_name(&self.function_arn)
            .payload(Blob::new(request.to_json()))
            .send()
            .await
            .map_err(|e| {
                errors::from_sdk(super::SCOPE, "Invoke (gateway)", e, |e| {
                    if e.is_too_many_requests_exception() {
                        Some(Kind::Throttled)
                    } else if e.is_resource_not_found_exception() {
                        Some(Kind::NotFound)
                    } else {
                        None
                    }
                })
            })?;
        let payload = out
            .payload()
            .map(|p| String::from_utf8_lossy(p.as_ref()).into_owned())
            .unwrap_or_default();
        answer(out.function_error(), &payload)
    }
}

/// The gateway as `serve` answers it locally.
#[derive(Debug, Clone)]
pub struct HttpInvoker {
    host: HttpActionHost,
}

impl HttpInvoker {
    /// `url` is `serve`'s base URL (`http://host:port`).
    pub fn new(url: &str, timeout: Duration) -> Result<Self, Error> {
        Self::with_token(url, None, timeout)
    }

    /// The same, with `serve`'s bearer token: `serve` guards the gateway route as it guards
    /// the others, where Lambda's Invoke is guarded by IAM.
    pub fn with_token(url: &str, token: Option<String>, timeout: Duration) -> Result<Self, Error> {
        Ok(Self {
            host: HttpActionHost::new(url, token, timeout)?,
        })
    }
}

impl Invoker for HttpInvoker {
    async fn invoke(&self, request: &ActionRequest) -> Result<Invoked, Error> {
        let reply = self
            .host
            .exchange(ROUTE, &request.to_json(), FUNCTION_ERROR_HEADER)
            .await
            .map_err(|e| errors::failed(super::SCOPE, "POST gateway", Kind::Unreachable, e.0))?;
        if reply.status != 200 {
            return Err(Error::new(
                "GATEWAY_HOST_RESPONSE",
                format!(
                    "the local gateway answered HTTP {}: {}",
                    reply.status, reply.body
                ),
            )
            .with_hint("check that the URL is `tpf-sfn serve`'s"));
        }
        answer(reply.header.as_deref(), &reply.body)
    }
}

/// The gateway a deployed function was configured with: Lambda in production, `serve`'s
/// route for the local loop.
#[derive(Debug, Clone)]
pub enum Gateway {
    Lambda(LambdaInvoker),
    Http(HttpInvoker),
}

impl Invoker for Gateway {
    async fn invoke(&self, request: &ActionRequest) -> Result<Invoked, Error> {
        match self {
            Gateway::Lambda(g) => g.invoke(request).await,
            Gateway::Http(g) => g.invoke(request).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_numbered_version_is_a_gateway() {
        assert!(is_numbered_version(
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:7"
        ));
        for arn in [
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:$LATEST",
            "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:live",
            "arn:aws:lambda:us-east-1:123456789012:function:7",
            "tpf-action:7",
            "",
        ] {
            assert!(!is_numbered_version(arn), "{arn}");
        }
    }

    #[test]
    fn a_payload_is_a_response_or_a_function_error() {
        let ok = ActionResponse::status("RUNNING").unwrap();
        assert_eq!(
            answer(None, &ok.to_json()).unwrap(),
            Invoked::Response(Box::new(ok))
        );
        let failed = answer(
            Some("Unhandled"),
            r#"{"errorMessage":"Execution not found: e","errorType":"jakarta.ws.rs.NotFoundException"}"#,
        )
        .unwrap();
        assert!(
            matches!(failed, Invoked::Failed(f) if f.error_type == "jakarta.ws.rs.NotFoundException")
        );
        // A response with an unknown key is refused as TPF's caller refuses it.
        let e = answer(None, r#"{"awaitCheckpoints":[],"extra":1}"#).unwrap_err();
        assert_eq!(e.code(), "GATEWAY_HOST_RESPONSE");
        assert_eq!(
            answer(Some("Unhandled"), "not json").unwrap_err().code(),
            "GATEWAY_HOST_RESPONSE"
        );
    }
}
