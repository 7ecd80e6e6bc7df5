//! A typed model of Amazon States Language (JSONPath dialect).
//!
//! The model is the boundary type of the compiler: rendered templates are parsed into it, the
//! validator and the mapping-test interpreter read it, and it serialises back to canonical JSON.
//! Field order in each struct is the order fields are written, so serialisation is stable.
//! Fields this model does not know are kept in `extra` rather than dropped, so a foreign
//! definition survives a round trip and the validator can name what it did not understand.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StateMachine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_language: Option<String>,
    pub start_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub states: IndexMap<String, State>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

// States are parsed once per definition and then only read; boxing the large variants would
// add an indirection to every match in the validator and the interpreter for no measurable gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "Type")]
pub enum State {
    Task(TaskState),
    Choice(ChoiceState),
    Wait(WaitState),
    Pass(PassState),
    Succeed(SucceedState),
    Fail(FailState),
    Map(MapState),
    Parallel(ParallelState),
}

/// The transition a non-Choice, non-terminal-type state makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition<'a> {
    Next(&'a str),
    End,
    /// Neither `Next` nor `End` (or both): invalid, reported by the validator.
    Missing,
}

/// `InputPath`, `ResultPath` and `OutputPath` distinguish "absent" (`None`, the default `$`)
/// from an explicit `null` (`Some(Value::Null)`: discard the input/result/output). Plain
/// `Option` deserialisation would fold the two together.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn transition<'a>(next: &'a Option<String>, end: Option<bool>) -> Transition<'a> {
    match (next, end.unwrap_or(false)) {
        (Some(n), false) => Transition::Next(n),
        (None, true) => Transition::End,
        _ => Transition::Missing,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TaskState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    pub resource: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_selector: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_path: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_seconds_path: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry: Vec<Retrier>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub catch: Vec<Catcher>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Retrier {
    pub error_equals: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_strategy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Retrier {
    /// ASL defaults (States Language spec, "Retrying after error").
    pub fn interval(&self) -> u64 {
        self.interval_seconds.unwrap_or(1)
    }
    pub fn attempts(&self) -> u64 {
        self.max_attempts.unwrap_or(3)
    }
    pub fn backoff(&self) -> f64 {
        self.backoff_rate.unwrap_or(2.0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Catcher {
    pub error_equals: Vec<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_path: Option<Value>,
    pub next: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ChoiceState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_path: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_path: Option<Value>,
    pub choices: Vec<ChoiceRule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One Choice rule. Top-level rules carry `Next`; nested ones (inside `And`/`Or`/`Not`) must
/// not. A data-test rule has `Variable` plus exactly one comparison operator, which lands in
/// `comparison` (operator name → operand) because the operator set is large and open-ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ChoiceRule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    #[serde(flatten)]
    pub comparison: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub and: Option<Vec<ChoiceRule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub or: Option<Vec<ChoiceRule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<ChoiceRule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// Every JSONPath comparison operator the States Language defines.
pub const COMPARISON_OPERATORS: &[&str] = &[
    "BooleanEquals",
    "BooleanEqualsPath",
    "IsBoolean",
    "IsNull",
    "IsNumeric",
    "IsPresent",
    "IsString",
    "IsTimestamp",
    "NumericEquals",
    "NumericEqualsPath",
    "NumericGreaterThan",
    "NumericGreaterThanPath",
    "NumericGreaterThanEquals",
    "NumericGreaterThanEqualsPath",
    "NumericLessThan",
    "NumericLessThanPath",
    "NumericLessThanEquals",
    "NumericLessThanEqualsPath",
    "StringEquals",
    "StringEqualsPath",
    "StringGreaterThan",
    "StringGreaterThanPath",
    "StringGreaterThanEquals",
    "StringGreaterThanEqualsPath",
    "StringLessThan",
    "StringLessThanPath",
    "StringLessThanEquals",
    "StringLessThanEqualsPath",
    "StringMatches",
    "TimestampEquals",
    "TimestampEqualsPath",
    "TimestampGreaterThan",
    "TimestampGreaterThanPath",
    "TimestampGreaterThanEquals",
    "TimestampGreaterThanEqualsPath",
    "TimestampLessThan",
    "TimestampLessThanPath",
    "TimestampLessThanEquals",
    "TimestampLessThanEqualsPath",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WaitState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_path: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PassState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_path: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SucceedState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_path: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_path: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FailState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_path: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Inline Map. `ItemProcessor` (current) and `Iterator` (legacy) are both accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MapState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_selector: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_processor: Option<SubMachine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterator: Option<SubMachine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_selector: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_path: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry: Vec<Retrier>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub catch: Vec<Catcher>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MapState {
    pub fn processor(&self) -> Option<&SubMachine> {
        self.item_processor.as_ref().or(self.iterator.as_ref())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ParallelState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    pub branches: Vec<SubMachine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_selector: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_path: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry: Vec<Retrier>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub catch: Vec<Catcher>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A nested state machine: a Parallel branch or a Map item processor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SubMachine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor_config: Option<Value>,
    pub start_at: String,
    pub states: IndexMap<String, State>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl State {
    pub fn type_name(&self) -> &'static str {
        match self {
            State::Task(_) => "Task",
            State::Choice(_) => "Choice",
            State::Wait(_) => "Wait",
            State::Pass(_) => "Pass",
            State::Succeed(_) => "Succeed",
            State::Fail(_) => "Fail",
            State::Map(_) => "Map",
            State::Parallel(_) => "Parallel",
        }
    }

    pub fn comment(&self) -> Option<&str> {
        match self {
            State::Task(s) => s.comment.as_deref(),
            State::Choice(s) => s.comment.as_deref(),
            State::Wait(s) => s.comment.as_deref(),
            State::Pass(s) => s.comment.as_deref(),
            State::Succeed(s) => s.comment.as_deref(),
            State::Fail(s) => s.comment.as_deref(),
            State::Map(s) => s.comment.as_deref(),
            State::Parallel(s) => s.comment.as_deref(),
        }
    }

    /// `Next`/`End` of states that have them; `None` for Choice, Succeed and Fail.
    pub fn transition(&self) -> Option<Transition<'_>> {
        match self {
            State::Task(s) => Some(transition(&s.next, s.end)),
            State::Wait(s) => Some(transition(&s.next, s.end)),
            State::Pass(s) => Some(transition(&s.next, s.end)),
            State::Map(s) => Some(transition(&s.next, s.end)),
            State::Parallel(s) => Some(transition(&s.next, s.end)),
            State::Choice(_) | State::Succeed(_) | State::Fail(_) => None,
        }
    }

    pub fn retriers(&self) -> &[Retrier] {
        match self {
            State::Task(s) => &s.retry,
            State::Map(s) => &s.retry,
            State::Parallel(s) => &s.retry,
            _ => &[],
        }
    }

    pub fn catchers(&self) -> &[Catcher] {
        match self {
            State::Task(s) => &s.catch,
            State::Map(s) => &s.catch,
            State::Parallel(s) => &s.catch,
            _ => &[],
        }
    }

    /// Every state name this state can transition to, in a stable order, with the JSON-pointer
    /// suffix (relative to the state) of the field that names it.
    pub fn successors(&self) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        if let Some(Transition::Next(n)) = self.transition() {
            out.push(("/Next".to_string(), n));
        }
        if let State::Choice(c) = self {
            for (i, rule) in c.choices.iter().enumerate() {
                if let Some(n) = &rule.next {
                    out.push((format!("/Choices/{i}/Next"), n.as_str()));
                }
            }
            if let Some(d) = &c.default {
                out.push(("/Default".to_string(), d.as_str()));
            }
        }
        for (i, c) in self.catchers().iter().enumerate() {
            out.push((format!("/Catch/{i}/Next"), c.next.as_str()));
        }
        out
    }

    /// Whether reaching this state can end the (sub-)machine.
    pub fn is_terminal(&self) -> bool {
        matches!(self, State::Succeed(_) | State::Fail(_))
            || matches!(self.transition(), Some(Transition::End))
    }

    /// Fields this model did not recognise, for the validator to report.
    pub fn extra(&self) -> &Map<String, Value> {
        match self {
            State::Task(s) => &s.extra,
            State::Choice(s) => &s.extra,
            State::Wait(s) => &s.extra,
            State::Pass(s) => &s.extra,
            State::Succeed(s) => &s.extra,
            State::Fail(s) => &s.extra,
            State::Map(s) => &s.extra,
            State::Parallel(s) => &s.extra,
        }
    }
}
