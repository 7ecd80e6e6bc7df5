//! The queue transport's decision: how the gateway's answer to a relayed invoke answers the
//! driver's task token (`docs/runtime.md`, "The queue transport").
//!
//! The driver parks on the token where Step Functions would have invoked the gateway itself, so
//! the token must end the way that invoke would have ended: the gateway's response as the
//! task's output, its function error as the task's error (`errorType`, the Java class name) and
//! cause (`errorMessage`), and an invoke that got no answer as the error Step Functions names
//! it (`Lambda.ServiceException`, …), which the driver retries. A parking call (REGISTER_CALLBACK)
//! is different: the token *is* the callback id the wake-up answers later, so its success sends
//! nothing; only its failure ends the token.

use serde_json::Value;
use tpf_wire::gateway::invoke::lambda_error;

use crate::relay::Answer;

/// What came back from invoking the gateway, as the relay received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// The function answered: its response's bytes.
    Response(String),
    /// The function threw: Lambda's error document's bytes.
    FunctionError(String),
    /// The function was not reached or did not answer: the error Step Functions would name and
    /// why.
    Transport { error: String, cause: String },
}

impl Invocation {
    /// An HTTP answer of `serve`'s gateway route, which answers as Lambda's Invoke: a 200 is the
    /// function's (a function error when the header names one); any other status is the
    /// service's refusal, named as Step Functions names Lambda's.
    pub fn from_http(status: u16, function_error: bool, body: String) -> Invocation {
        match status {
            200 if function_error => Invocation::FunctionError(body),
            200 => Invocation::Response(body),
            429 => Self::transport(lambda_error::TOO_MANY_REQUESTS, status, body),
            500..=599 => Self::transport(lambda_error::SERVICE, status, body),
            _ => Self::transport(lambda_error::AWS_LAMBDA, status, body),
        }
    }

    /// No answer at all (connection refused, timed out).
    pub fn unreachable(cause: String) -> Invocation {
        Invocation::Transport {
            error: lambda_error::SDK_CLIENT.to_owned(),
            cause,
        }
    }

    fn transport(error: &'static str, status: u16, body: String) -> Invocation {
        Invocation::Transport {
            error: error.to_owned(),
            cause: format!("HTTP {status}: {body}"),
        }
    }
}

/// The answer for the token, or `None` when nothing is sent (a parking call that succeeded).
pub fn answer(invocation: Invocation, park: bool) -> Option<Answer> {
    match invocation {
        Invocation::Response(body) => match serde_json::from_str::<Value>(&body) {
            Ok(_) if park => None,
            Ok(_) => Some(Answer::Success { output: body }),
            Err(e) => Some(Answer::Failure {
                error: lambda_error::UNKNOWN.to_owned(),
                cause: format!("the gateway answered a body that is not JSON: {e}"),
            }),
        },
        Invocation::FunctionError(document) => Some(function_error(&document)),
        Invocation::Transport { error, cause } => Some(Answer::Failure { error, cause }),
    }
}

/// Lambda's error document `{errorMessage, errorType}` as the task's error and cause; one that
/// names no type is `Lambda.Unknown`, as Step Functions reports it.
fn function_error(document: &str) -> Answer {
    let parsed: Option<Value> = serde_json::from_str(document).ok();
    let field = |key: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    match field("errorType") {
        Some(error) => Answer::Failure {
            error,
            cause: field("errorMessage").unwrap_or_default(),
        },
        None => Answer::Failure {
            error: lambda_error::UNKNOWN.to_owned(),
            cause: document.to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESPONSE: &str = r#"{"checkpoint":null,"duplicate":false,"executionStatus":"RUNNING","resultJson":null,"awaitIdentity":null,"awaitCheckpoint":null,"awaitCheckpoints":[],"bindingCreated":false}"#;
    const NOT_FOUND: &str = r#"{"errorMessage":"Execution not found: e","errorType":"jakarta.ws.rs.NotFoundException"}"#;

    fn failure(error: &str, cause: &str) -> Option<Answer> {
        Some(Answer::Failure {
            error: error.into(),
            cause: cause.into(),
        })
    }

    #[test]
    fn a_response_is_the_output_unless_the_call_parks() {
        let ok = Invocation::from_http(200, false, RESPONSE.into());
        assert_eq!(
            answer(ok.clone(), false),
            Some(Answer::Success {
                output: RESPONSE.into()
            })
        );
        assert_eq!(answer(ok, true), None, "a park's success sends nothing");
    }

    #[test]
    fn a_function_error_fails_the_token_with_the_class_name_parked_or_not() {
        for park in [false, true] {
            let e = Invocation::from_http(200, true, NOT_FOUND.into());
            assert_eq!(
                answer(e, park),
                failure("jakarta.ws.rs.NotFoundException", "Execution not found: e")
            );
        }
        // The header decides: the same bytes without it are a response.
        assert!(matches!(
            answer(Invocation::from_http(200, false, NOT_FOUND.into()), false),
            Some(Answer::Success { .. })
        ));
        assert_eq!(
            answer(Invocation::FunctionError("oops".into()), false),
            failure("Lambda.Unknown", "oops")
        );
    }

    #[test]
    fn no_answer_is_named_as_step_functions_names_lambda_s_failures() {
        let named = |status| match Invocation::from_http(status, false, "x".into()) {
            Invocation::Transport { error, .. } => error,
            other => panic!("{other:?}"),
        };
        assert_eq!(named(429), "Lambda.TooManyRequestsException");
        assert_eq!(named(503), "Lambda.ServiceException");
        assert_eq!(named(400), "Lambda.AWSLambdaException");
        assert_eq!(
            answer(Invocation::unreachable("refused".into()), true),
            failure("Lambda.SdkClientException", "refused")
        );
        assert_eq!(
            answer(Invocation::Response("not json".into()), false)
                .and_then(|a| a.error().map(str::to_owned)),
            Some("Lambda.Unknown".to_owned())
        );
    }
}
