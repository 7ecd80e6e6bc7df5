//! Execution history events, named exactly as the Step Functions `GetExecutionHistory` API
//! names them.

use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::Serialize;
use serde_json::Value;

/// Hard quota on events per Standard execution (AWS "Step Functions service quotas").
pub const MAX_HISTORY_EVENTS: usize = 25_000;

/// One history event. `event_type` is the AWS event type (`TaskStateEntered`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEvent {
    pub id: u32,
    pub previous_event_id: u32,
    pub timestamp_ms: i64,
    pub event_type: &'static str,
    pub state_name: Option<String>,
    /// The event's members but its payload; `Null` for a state's entry and exit, whose only
    /// other member is the state's name (`state_name`): one map fewer per event.
    pub details: Value,
    /// The payload member (`input`, `output`, `parameters`) when payloads are recorded: shared
    /// with the state data that carries it on, because a state's output is the next state's
    /// input and copying it into two events per state was a large part of every run.
    pub payload: Option<Payload>,
}

/// A history event's payload member and where AWS lists it among the others.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    pub key: &'static str,
    pub at: usize,
    pub value: Arc<Value>,
}

impl Payload {
    pub(crate) fn new(key: &'static str, at: usize, value: &Arc<Value>) -> Payload {
        Payload {
            key,
            at,
            value: Arc::clone(value),
        }
    }
}

impl HistoryEvent {
    /// A member of the event's details, the payload included.
    pub fn detail(&self, key: &str) -> Option<&Value> {
        match &self.payload {
            Some(p) if p.key == key => Some(&p.value),
            _ => self.details.get(key),
        }
    }

    /// The details as AWS lists them: the state's name and the payload among the other members.
    pub fn all_details(&self) -> Value {
        let mut d = match &self.details {
            Value::Null => {
                let mut o = serde_json::Map::new();
                if let Some(n) = &self.state_name {
                    o.insert("name".to_string(), Value::String(n.clone()));
                }
                Value::Object(o)
            }
            d => d.clone(),
        };
        if let (Some(p), Value::Object(o)) = (&self.payload, &mut d) {
            o.shift_insert(p.at.min(o.len()), p.key.to_string(), (*p.value).clone());
        }
        d
    }
}

impl Serialize for HistoryEvent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("HistoryEvent", 6)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("previous_event_id", &self.previous_event_id)?;
        st.serialize_field("timestamp_ms", &self.timestamp_ms)?;
        st.serialize_field("event_type", self.event_type)?;
        if let Some(n) = &self.state_name {
            st.serialize_field("state_name", n)?;
        }
        st.serialize_field("details", &self.all_details())?;
        st.end()
    }
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
