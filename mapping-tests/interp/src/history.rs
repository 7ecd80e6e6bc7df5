//! Execution history events, named exactly as the Step Functions `GetExecutionHistory` API
//! names them.

use serde::Serialize;
use serde_json::Value;

/// Hard quota on events per Standard execution (AWS "Step Functions service quotas").
pub const MAX_HISTORY_EVENTS: usize = 25_000;

/// One history event. `event_type` is the AWS event type (`TaskStateEntered`, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEvent {
    pub id: u32,
    pub previous_event_id: u32,
    pub timestamp_ms: i64,
    pub event_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_name: Option<String>,
    pub details: Value,
}

/// An event's details from owned values: `json!` would re-serialise a borrowed payload member by
/// member, which costs several times a clone on every state entry and exit.
pub(crate) fn details<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// Events that close an execution; the only kind allowed to be event number 25,000.
pub fn is_terminal(event_type: &str) -> bool {
    matches!(
        event_type,
        "ExecutionSucceeded" | "ExecutionFailed" | "ExecutionAborted" | "ExecutionTimedOut"
    )
}

/// `<Type>StateEntered` / `<Type>StateExited` event names per state type.
pub fn entered(type_name: &str) -> &'static str {
    match type_name {
        "Task" => "TaskStateEntered",
        "Choice" => "ChoiceStateEntered",
        "Wait" => "WaitStateEntered",
        "Pass" => "PassStateEntered",
        "Succeed" => "SucceedStateEntered",
        "Fail" => "FailStateEntered",
        "Map" => "MapStateEntered",
        _ => "ParallelStateEntered",
    }
}

pub fn exited(type_name: &str) -> &'static str {
    match type_name {
        "Task" => "TaskStateExited",
        "Choice" => "ChoiceStateExited",
        "Wait" => "WaitStateExited",
        "Pass" => "PassStateExited",
        "Succeed" => "SucceedStateExited",
        "Fail" => "FailStateExited",
        "Map" => "MapStateExited",
        _ => "ParallelStateExited",
    }
}
