//! Two kinds of error: the ones the Step Functions API returns to a caller (`SfnError`), and
//! the ones a state raises inside an execution (`StateError`), which Retry/Catch see.

use std::fmt;

/// API errors, named like the AWS exceptions they stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SfnError {
    ExecutionAlreadyExists(String),
    ExecutionDoesNotExist(String),
    ExecutionNotRedrivable(String),
    StateMachineDoesNotExist(String),
    StateMachineAlreadyExists(String),
    InvalidDefinition(String),
    InvalidName(String),
    InvalidArn(String),
    InvalidExecutionInput(String),
    InvalidOutput(String),
    InvalidToken(String),
    TaskTimedOut(String),
}

impl SfnError {
    /// The AWS exception name (`ExecutionAlreadyExists`, `InvalidToken`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            SfnError::ExecutionAlreadyExists(_) => "ExecutionAlreadyExists",
            SfnError::ExecutionDoesNotExist(_) => "ExecutionDoesNotExist",
            SfnError::ExecutionNotRedrivable(_) => "ExecutionNotRedrivable",
            SfnError::StateMachineDoesNotExist(_) => "StateMachineDoesNotExist",
            SfnError::StateMachineAlreadyExists(_) => "StateMachineAlreadyExists",
            SfnError::InvalidDefinition(_) => "InvalidDefinition",
            SfnError::InvalidName(_) => "InvalidName",
            SfnError::InvalidArn(_) => "InvalidArn",
            SfnError::InvalidExecutionInput(_) => "InvalidExecutionInput",
            SfnError::InvalidOutput(_) => "InvalidOutput",
            SfnError::InvalidToken(_) => "InvalidToken",
            SfnError::TaskTimedOut(_) => "TaskTimedOut",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            SfnError::ExecutionAlreadyExists(m)
            | SfnError::ExecutionDoesNotExist(m)
            | SfnError::ExecutionNotRedrivable(m)
            | SfnError::StateMachineDoesNotExist(m)
            | SfnError::StateMachineAlreadyExists(m)
            | SfnError::InvalidDefinition(m)
            | SfnError::InvalidName(m)
            | SfnError::InvalidArn(m)
            | SfnError::InvalidExecutionInput(m)
            | SfnError::InvalidOutput(m)
            | SfnError::InvalidToken(m)
            | SfnError::TaskTimedOut(m) => m,
        }
    }
}

impl fmt::Display for SfnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())
    }
}

impl std::error::Error for SfnError {}

pub const RUNTIME: &str = "States.Runtime";
pub const DATA_LIMIT: &str = "States.DataLimitExceeded";
pub const TIMEOUT: &str = "States.Timeout";
pub const HEARTBEAT_TIMEOUT: &str = "States.HeartbeatTimeout";
pub const INTRINSIC: &str = "States.IntrinsicFailure";
pub const NO_CHOICE: &str = "States.NoChoiceMatched";
pub const RESULT_PATH: &str = "States.ResultPathMatchFailure";
pub const TASK_FAILED: &str = "States.TaskFailed";
pub const ALL: &str = "States.ALL";

/// An error raised by a state, as Retry/Catch and `ExecutionFailed` see it.
#[derive(Debug, Clone, PartialEq)]
pub struct StateError {
    pub error: String,
    pub cause: String,
    /// A missed heartbeat: reported as `States.Timeout` but also matched by
    /// `States.HeartbeatTimeout` (AWS "Error names": HeartbeatTimeout exists only in Retry/Catch).
    pub heartbeat: bool,
}

impl StateError {
    pub fn new(error: impl Into<String>, cause: impl Into<String>) -> Self {
        StateError {
            error: error.into(),
            cause: cause.into(),
            heartbeat: false,
        }
    }

    pub fn runtime(cause: impl Into<String>) -> Self {
        StateError::new(RUNTIME, cause)
    }

    pub fn intrinsic(cause: impl Into<String>) -> Self {
        StateError::new(INTRINSIC, cause)
    }

    /// `States.Runtime` and `States.DataLimitExceeded` end the execution: no retrier or catcher
    /// sees them (AWS "Error handling": States.ALL does not match these two).
    pub fn is_terminal(&self) -> bool {
        self.error == RUNTIME || self.error == DATA_LIMIT
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error, self.cause)
    }
}
