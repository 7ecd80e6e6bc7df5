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
    /// Reported by the task (a handler's failure or SendTaskFailure) rather than raised here.
    /// An empty error or cause there means none was given, which a Catch writes as `null`
    /// (recorded on AWS); an interpreter error with an empty cause (a timeout) writes `""`.
    pub reported: bool,
    /// The cause already names the state it happened in (see [`StateError::locate`]).
    pub located: bool,
}

impl StateError {
    pub fn new(error: impl Into<String>, cause: impl Into<String>) -> Self {
        StateError {
            error: error.into(),
            cause: cause.into(),
            heartbeat: false,
            reported: false,
            located: false,
        }
    }

    /// A failure a task reported (handler outcome or SendTaskFailure).
    pub fn reported(error: impl Into<String>, cause: impl Into<String>) -> Self {
        StateError {
            reported: true,
            located: true,
            ..StateError::new(error, cause)
        }
    }

    /// AWS prefixes the cause of a `States.Runtime` error raised while evaluating a state with
    /// where it happened: "An error occurred while executing the state 'X' (entered at the
    /// event id #N). ..." (recorded on AWS). Errors reported by tasks, or already located by
    /// a nested state, are left alone.
    pub fn locate(mut self, state: &str, entered_event_id: u32) -> Self {
        if self.error == RUNTIME && !self.located {
            self.cause = format!(
                "An error occurred while executing the state '{state}' (entered at the event id #{entered_event_id}). {}",
                self.cause
            );
        }
        self.located = true;
        self
    }

    /// `{"Error": ..., "Cause": ...}` as a Catch writes it into the state output.
    pub fn catch_output(&self) -> serde_json::Value {
        let field = |s: &str| {
            if self.reported && s.is_empty() {
                serde_json::Value::Null
            } else {
                serde_json::Value::String(s.to_string())
            }
        };
        serde_json::json!({"Error": field(&self.error), "Cause": field(&self.cause)})
    }

    /// `error`/`cause` of a history event's details; AWS leaves out the empty ones.
    pub fn event_details(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut d = serde_json::Map::new();
        if !self.error.is_empty() {
            d.insert("error".into(), self.error.clone().into());
        }
        if !self.cause.is_empty() {
            d.insert("cause".into(), self.cause.clone().into());
        }
        d
    }

    pub fn runtime(cause: impl Into<String>) -> Self {
        StateError::new(RUNTIME, cause)
    }

    pub fn intrinsic(cause: impl Into<String>) -> Self {
        StateError::new(INTRINSIC, cause)
    }

    /// `States.Runtime` ends the execution: no retrier or catcher sees it. AWS's error-handling
    /// page says the same of `States.DataLimitExceeded`, but a task's DataLimitExceeded is
    /// caught on AWS, by name and by `States.ALL` (recorded), so it is not terminal here.
    pub fn is_terminal(&self) -> bool {
        self.error == RUNTIME
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error, self.cause)
    }
}
