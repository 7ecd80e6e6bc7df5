//! The context object (`$$`) and payload templates (`Parameters`, `ItemSelector`,
//! `ResultSelector`). The context object is only materialised when a `$$` path is read, which
//! most states never do.

use std::cell::OnceCell;

use serde_json::{json, Map, Value};

use super::clock::format_rfc3339;
use super::error::StateError;
use super::intrinsics;
use super::paths;
use super::rng::Rng;

/// What `$$` is built from.
#[derive(Debug, Clone)]
pub struct ContextData<'a> {
    pub execution_id: &'a str,
    pub execution_name: &'a str,
    pub execution_input: &'a Value,
    pub execution_start_ms: i64,
    pub redrive_count: u32,
    pub machine_id: &'a str,
    pub machine_name: &'a str,
    pub state_name: &'a str,
    pub entered_ms: i64,
    /// `$$.State.RetryCount`, which AWS shows only in states that can retry (a Pass state's
    /// `$$.State` has no RetryCount; recorded).
    pub retry_count: Option<u32>,
    pub task_token: Option<&'a str>,
    pub map_item: Option<(usize, &'a Value)>,
}

pub struct Context<'a> {
    data: ContextData<'a>,
    built: OnceCell<Value>,
}

impl<'a> Context<'a> {
    pub fn new(data: ContextData<'a>) -> Self {
        Context {
            data,
            built: OnceCell::new(),
        }
    }

    pub fn value(&self) -> &Value {
        self.built.get_or_init(|| {
            let d = &self.data;
            let mut v = json!({
                "Execution": {
                    "Id": d.execution_id,
                    "Input": d.execution_input,
                    "Name": d.execution_name,
                    "RoleArn": "arn:aws:iam::123456789012:role/StepFunctionsRole",
                    "StartTime": format_rfc3339(d.execution_start_ms),
                    "RedriveCount": d.redrive_count,
                },
                "State": {
                    "EnteredTime": format_rfc3339(d.entered_ms),
                    "Name": d.state_name,
                },
                "StateMachine": {"Id": d.machine_id, "Name": d.machine_name},
            });
            if let Value::Object(o) = &mut v {
                if let (Some(n), Some(Value::Object(st))) = (d.retry_count, o.get_mut("State")) {
                    st.insert("RetryCount".into(), json!(n));
                }
                if let Some(t) = d.task_token {
                    o.insert("Task".into(), json!({"Token": t}));
                }
                if let Some((i, item)) = d.map_item {
                    o.insert("Map".into(), json!({"Item": {"Index": i, "Value": item}}));
                }
            }
            v
        })
    }

    /// Reads `$...` from `input` or `$$...` from the context object; a miss is `States.Runtime`
    /// naming the path as written and the state input.
    pub fn read_path(&self, path: &str, input: &Value, field: &str) -> Result<Value, StateError> {
        self.read_optional(path, input)?
            .ok_or_else(|| paths::missing_in(path, field, input))
    }

    /// An InputPath/OutputPath: `$$` paths read the context object (AWS accepts them there;
    /// recorded), others the value; a miss names the first missing member.
    pub fn filter(&self, path: &str, value: &Value) -> Result<Value, StateError> {
        match path.strip_prefix("$$") {
            Some(rest) => {
                let p = format!("${rest}");
                paths::read(&p, self.value())?
                    .ok_or_else(|| paths::invalid_path(path, self.value()))
            }
            None => paths::read(path, value)?.ok_or_else(|| paths::invalid_path(path, value)),
        }
    }

    /// The `$$` leaves drivers read on every iteration, answered from the data without
    /// building the whole context object (which formats two timestamps and copies the
    /// execution input). `None` for any other path; the answer is the one `value()` gives.
    fn leaf(&self, path: &str) -> Option<Option<Value>> {
        let d = &self.data;
        let text = |s: &str| Some(Value::String(s.to_owned()));
        Some(match path {
            "$$.Execution.Id" => text(d.execution_id),
            "$$.Execution.Name" => text(d.execution_name),
            "$$.StateMachine.Id" => text(d.machine_id),
            "$$.StateMachine.Name" => text(d.machine_name),
            "$$.State.Name" => text(d.state_name),
            "$$.Task.Token" => d.task_token.and_then(text),
            "$$.Map.Item.Index" => d.map_item.map(|(i, _)| Value::from(i)),
            "$$.Map.Item.Value" => d.map_item.map(|(_, v)| v.clone()),
            _ => return None,
        })
    }

    /// Reads a path, telling a miss apart (for `IsPresent`).
    pub fn read_optional(&self, path: &str, input: &Value) -> Result<Option<Value>, StateError> {
        if let Some(leaf) = self.leaf(path) {
            return Ok(leaf);
        }
        if let Some(rest) = path.strip_prefix("$$") {
            paths::read(&format!("${rest}"), self.value())
        } else {
            paths::read(path, input)
        }
    }
}

/// Evaluates a payload template: keys ending in `.$` take a path, a `$$` context path or an
/// intrinsic function; everything else is copied, recursing into objects and arrays.
pub fn eval_template(
    tpl: &Value,
    input: &Value,
    ctx: &Context<'_>,
    rng: &mut Rng,
) -> Result<Value, StateError> {
    match tpl {
        Value::Object(o) => {
            let mut out = Map::with_capacity(o.len());
            for (k, v) in o {
                if let Some(key) = k.strip_suffix(".$") {
                    let Value::String(expr) = v else {
                        return Err(StateError::runtime(format!(
                            "the value of field '{k}' must be a path or intrinsic function string"
                        )));
                    };
                    out.insert(key.to_string(), eval_expr(expr, k, input, ctx, rng)?);
                } else {
                    out.insert(k.clone(), eval_template(v, input, ctx, rng)?);
                }
            }
            Ok(Value::Object(out))
        }
        Value::Array(a) => a
            .iter()
            .map(|v| eval_template(v, input, ctx, rng))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// One `.$` value: a path, a context path or an intrinsic.
pub fn eval_expr(
    expr: &str,
    field: &str,
    input: &Value,
    ctx: &Context<'_>,
    rng: &mut Rng,
) -> Result<Value, StateError> {
    let e = expr.trim();
    if e.starts_with('$') {
        ctx.read_path(e, input, field)
    } else if e.starts_with("States.") {
        intrinsics::evaluate(e, input, ctx, rng)
    } else {
        Err(StateError::runtime(format!(
            "the value of field '{field}' is neither a path nor an intrinsic function: '{expr}'"
        )))
    }
}
