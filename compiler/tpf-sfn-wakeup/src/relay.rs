//! The queue relay's answer to a driver's task token (the gateway transport's decision of it is
//! `gateway_relay.rs`).

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
    /// The error name sent, if the answer is a failure.
    pub fn error(&self) -> Option<&str> {
        match self {
            Answer::Success { .. } => None,
            Answer::Failure { error, .. } => Some(error),
        }
    }
}
