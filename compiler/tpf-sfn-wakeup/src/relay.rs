//! The queue relay's decision: how a reply from the Action API answers the driver's task token.
//!
//! The table is the Action API's (`tpf_wire::action`): a 2xx JSON body is the outcome the driver
//! routes on; 409 and 404 fail the driver loudly with the error names its Catch matches; anything
//! else (no answer, 5xx, a body that is not JSON) is a transport error the driver's Retry covers.

use tpf_wire::action::task_error;

/// What the action host answered, as the relay received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

/// The action host could not be reached or did not answer (a transport error for the driver):
/// why, as the driver's Fail cause will say it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(pub String);

/// How the relay answers a task token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `SendTaskSuccess` with this JSON output.
    Success { output: String },
    /// `SendTaskFailure` with this error name and cause.
    Failure { error: String, cause: String },
}

impl Answer {
    fn failure(error: &str, cause: String) -> Answer {
        Answer::Failure {
            error: error.to_owned(),
            cause,
        }
    }

    /// The error name sent, if the answer is a failure.
    pub fn error(&self) -> Option<&str> {
        match self {
            Answer::Success { .. } => None,
            Answer::Failure { error, .. } => Some(error),
        }
    }
}

/// The answer for a reply, or for a call that got none.
pub fn answer(reply: Result<Reply, Unreachable>) -> Answer {
    match reply {
        Err(Unreachable(why)) => Answer::failure(task_error::TRANSPORT, why),
        Ok(Reply { status, body }) => match status {
            200..=299 => match serde_json::from_str::<serde_json::Value>(&body) {
                Ok(_) => Answer::Success { output: body },
                Err(e) => Answer::failure(
                    task_error::TRANSPORT,
                    format!("HTTP {status} with a body that is not JSON: {e}"),
                ),
            },
            409 => Answer::failure(task_error::RELEASE_IDENTITY_MISMATCH, body),
            404 => Answer::failure(task_error::EXECUTION_NOT_FOUND, body),
            _ => Answer::failure(task_error::TRANSPORT, format!("HTTP {status}: {body}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Result<Reply, Unreachable> {
        Ok(Reply {
            status,
            body: body.to_owned(),
        })
    }

    #[test]
    fn success_needs_a_json_body() {
        assert_eq!(
            answer(reply(200, r#"{"status":"SUCCEEDED"}"#)),
            Answer::Success {
                output: r#"{"status":"SUCCEEDED"}"#.to_owned()
            }
        );
        assert_eq!(
            answer(reply(200, "<html>")).error(),
            Some(task_error::TRANSPORT)
        );
    }

    #[test]
    fn conflicts_and_unknown_executions_fail_loudly_everything_else_is_transport() {
        assert_eq!(
            answer(reply(409, "{}")).error(),
            Some(task_error::RELEASE_IDENTITY_MISMATCH)
        );
        assert_eq!(
            answer(reply(404, "{}")).error(),
            Some(task_error::EXECUTION_NOT_FOUND)
        );
        for status in [400, 401, 429, 500, 503] {
            assert_eq!(
                answer(reply(status, "{}")).error(),
                Some(task_error::TRANSPORT)
            );
        }
        assert_eq!(
            answer(Err(Unreachable("refused".into()))).error(),
            Some(task_error::TRANSPORT)
        );
    }
}
