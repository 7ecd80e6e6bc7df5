//! Per-type field rules: Choice rules, Wait durations, Fail error/cause, Map processors,
//! Parallel branches, Task resources, unknown fields, and every path and `.$` template value.

use serde_json::{Map, Value};

use super::{query_language, templates};
use crate::diagnostic::pointer_token;
use crate::sfn::asl::{ChoiceRule, State, StateMachine, COMPARISON_OPERATORS};
use crate::sfn::validate::paths::{check_dynamic_value, check_path, PathRoot};
use crate::sfn::validate::scope::Scope;
use crate::sfn::validate::Ctx;

/// Fields AWS defines that the typed model does not carry (distributed Map, cross-account
/// Task credentials). Not wrong, just outside what this toolchain understands.
/// The largest Wait `Seconds` Step Functions accepts.
const MAX_WAIT_SECONDS: u64 = 99_999_999;

const UNMODELLED_FIELDS: &[&str] = &[
    "Credentials",
    "ItemBatcher",
    "ItemReader",
    "Label",
    "MaxConcurrencyPath",
    "ResultWriter",
    "ToleratedFailureCount",
    "ToleratedFailureCountPath",
    "ToleratedFailurePercentage",
    "ToleratedFailurePercentagePath",
];

pub(crate) fn check(ctx: &mut Ctx<'_>, machine: &StateMachine, scopes: &[Scope<'_>]) {
    unknown_fields(ctx, "", &machine.extra, false);
    for scope in scopes {
        for (name, state) in scope.states {
            let ptr = scope.state_pointer(name);
            misplaced_transition(ctx, &ptr, state);
            unknown_fields(ctx, &ptr, state.extra(), true);
            for (i, r) in state.retriers().iter().enumerate() {
                unknown_fields(ctx, &format!("{ptr}/Retry/{i}"), &r.extra, false);
            }
            for (i, c) in state.catchers().iter().enumerate() {
                let cp = format!("{ptr}/Catch/{i}");
                unknown_fields(ctx, &cp, &c.extra, false);
                result_path(ctx, &format!("{cp}/ResultPath"), c.result_path.as_ref());
            }
            for (field, value, dynamic) in templates(state) {
                if dynamic {
                    template(ctx, &format!("{ptr}/{field}"), value);
                }
            }
            paths(ctx, &ptr, state);
            by_type(ctx, &ptr, state);
        }
    }
}

/// `Next`/`End` on a Choice, Succeed or Fail state land among the unknown fields; say why
/// they are wrong rather than just "unknown".
fn misplaced_transition(ctx: &mut Ctx<'_>, ptr: &str, state: &State) {
    if state.transition().is_some() {
        return;
    }
    for key in ["Next", "End"] {
        if state.extra().contains_key(key) {
            let why = match state {
                State::Choice(_) => "a Choice state moves on through its rules and `Default`",
                _ => "Succeed and Fail states always end their (sub-)machine",
            };
            ctx.error(
                "ASL_UNKNOWN_FIELD",
                format!("{ptr}/{key}"),
                format!("a {} state cannot have `{key}`: {why}", state.type_name()),
                format!("remove `{key}`"),
            );
        }
    }
}

fn unknown_fields(ctx: &mut Ctx<'_>, ptr: &str, extra: &Map<String, Value>, is_state: bool) {
    for (key, value) in extra {
        let at = format!("{ptr}/{}", pointer_token(key));
        if is_state && (key == "Next" || key == "End") {
            // Reported by `misplaced_transition`.
        } else if is_state && key == "QueryLanguage" {
            query_language::query_language(ctx, at, value.as_str().unwrap_or("(not a string)"));
        } else if query_language::JSONATA_FIELDS.contains(&key.as_str()) {
            query_language::field(ctx, at, key);
        } else if is_state && UNMODELLED_FIELDS.contains(&key.as_str()) {
            ctx.warning(
                "ASL_UNMODELLED_FIELD",
                at,
                format!("`{key}` is valid ASL but this toolchain does not model it; it is not validated"),
                "review this field by hand, or check the definition with AWS ValidateStateMachineDefinition",
            );
        } else {
            ctx.error(
                "ASL_UNKNOWN_FIELD",
                at,
                format!("unknown field `{key}` here"),
                "remove it or fix its spelling (field names are case-sensitive PascalCase)",
            );
        }
    }
}

fn invalid_path(ctx: &mut Ctx<'_>, ptr: String, value: &str, why: &str) {
    ctx.error(
        "ASL_INVALID_PATH",
        ptr,
        format!("{value:?} is not valid here: {why}"),
        "use `$` or `$.field…` (state input), `$$.…` (context object), or an intrinsic such as `States.Format('{}', $.x)`",
    );
}

/// A path field (`InputPath`, `ItemsPath`, `Variable`, ...). `None` is fine; `null` is only
/// allowed where `nullable`.
fn path(ctx: &mut Ctx<'_>, ptr: String, value: Option<&str>) {
    let Some(value) = value else { return };
    match check_path(value) {
        Ok(PathRoot::Variable) => query_language::variable(ctx, ptr, value),
        Ok(_) => {}
        Err(why) => invalid_path(ctx, ptr, value, &why.0),
    }
}

fn path_value(ctx: &mut Ctx<'_>, ptr: String, value: Option<&Value>) {
    match value {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => path(ctx, ptr, Some(s)),
        Some(other) => invalid_path(
            ctx,
            ptr,
            &other.to_string(),
            "a path must be a string or null",
        ),
    }
}

/// `ResultPath` writes into the state input, so it cannot be the context object, a variable or
/// match several nodes.
fn result_path(ctx: &mut Ctx<'_>, ptr: &str, value: Option<&Value>) {
    match value {
        Some(Value::String(s)) => match check_path(s) {
            Ok(PathRoot::Input) if !s.contains('*') && !s.contains("..") && !s.contains("?(") => {}
            Ok(_) => invalid_path(
                ctx,
                ptr.to_string(),
                s,
                "ResultPath must name one location in the state input (`$` or `$.a.b`)",
            ),
            Err(why) => invalid_path(ctx, ptr.to_string(), s, &why.0),
        },
        other => path_value(ctx, ptr.to_string(), other),
    }
}

/// A path field that also accepts intrinsic calls (Fail `ErrorPath`/`CausePath`).
fn dynamic(ctx: &mut Ctx<'_>, ptr: String, value: &str) {
    match check_dynamic_value(value) {
        Ok(read) => {
            for p in read {
                if check_path(&p) == Ok(PathRoot::Variable) {
                    query_language::variable(ctx, ptr.clone(), &p);
                }
            }
        }
        Err(why) => invalid_path(ctx, ptr, value, &why.0),
    }
}

/// Every `.$` key of a payload template holds a path or an intrinsic call.
fn template(ctx: &mut Ctx<'_>, ptr: &str, value: &Value) {
    let mut stack = vec![(ptr.to_string(), value)];
    while let Some((at, v)) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let child_ptr = format!("{at}/{}", pointer_token(k));
                    if k.ends_with(".$") {
                        match child {
                            Value::String(s) => dynamic(ctx, child_ptr, s),
                            other => invalid_path(
                                ctx,
                                child_ptr,
                                &other.to_string(),
                                "the value of a `.$` key must be a string",
                            ),
                        }
                    } else {
                        stack.push((child_ptr, child));
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    stack.push((format!("{at}/{i}"), child));
                }
            }
            _ => {}
        }
    }
}

fn paths(ctx: &mut Ctx<'_>, ptr: &str, state: &State) {
    let at = |field: &str| format!("{ptr}/{field}");
    match state {
        State::Task(s) => {
            path_value(ctx, at("InputPath"), s.input_path.as_ref());
            result_path(ctx, &at("ResultPath"), s.result_path.as_ref());
            path_value(ctx, at("OutputPath"), s.output_path.as_ref());
            path(
                ctx,
                at("TimeoutSecondsPath"),
                s.timeout_seconds_path.as_deref(),
            );
            path(
                ctx,
                at("HeartbeatSecondsPath"),
                s.heartbeat_seconds_path.as_deref(),
            );
        }
        State::Pass(s) => {
            path_value(ctx, at("InputPath"), s.input_path.as_ref());
            result_path(ctx, &at("ResultPath"), s.result_path.as_ref());
            path_value(ctx, at("OutputPath"), s.output_path.as_ref());
        }
        State::Map(s) => {
            path_value(ctx, at("InputPath"), s.input_path.as_ref());
            path(ctx, at("ItemsPath"), s.items_path.as_deref());
            result_path(ctx, &at("ResultPath"), s.result_path.as_ref());
            path_value(ctx, at("OutputPath"), s.output_path.as_ref());
        }
        State::Parallel(s) => {
            path_value(ctx, at("InputPath"), s.input_path.as_ref());
            result_path(ctx, &at("ResultPath"), s.result_path.as_ref());
            path_value(ctx, at("OutputPath"), s.output_path.as_ref());
        }
        State::Choice(s) => {
            path_value(ctx, at("InputPath"), s.input_path.as_ref());
            path_value(ctx, at("OutputPath"), s.output_path.as_ref());
        }
        State::Wait(s) => {
            path_value(ctx, at("InputPath"), s.input_path.as_ref());
            path_value(ctx, at("OutputPath"), s.output_path.as_ref());
            path(ctx, at("SecondsPath"), s.seconds_path.as_deref());
            path(ctx, at("TimestampPath"), s.timestamp_path.as_deref());
        }
        State::Succeed(s) => {
            path_value(ctx, at("InputPath"), s.input_path.as_ref());
            path_value(ctx, at("OutputPath"), s.output_path.as_ref());
        }
        State::Fail(s) => {
            if let Some(p) = &s.error_path {
                dynamic(ctx, at("ErrorPath"), p);
            }
            if let Some(p) = &s.cause_path {
                dynamic(ctx, at("CausePath"), p);
            }
        }
    }
}

fn by_type(ctx: &mut Ctx<'_>, ptr: &str, state: &State) {
    match state {
        State::Task(t) => resource(ctx, ptr, &t.resource),
        State::Choice(c) => {
            if c.choices.is_empty() {
                ctx.error(
                    "ASL_CHOICE_NO_RULES",
                    format!("{ptr}/Choices"),
                    "a Choice state needs at least one rule",
                    "add a rule, or replace the Choice with a Pass when there is nothing to decide",
                );
            }
            for (i, rule) in c.choices.iter().enumerate() {
                choice_rules(ctx, format!("{ptr}/Choices/{i}"), rule);
            }
        }
        State::Wait(w) => {
            let set = [
                w.seconds.is_some(),
                w.seconds_path.is_some(),
                w.timestamp.is_some(),
                w.timestamp_path.is_some(),
            ];
            let n = set.iter().filter(|b| **b).count();
            if n != 1 {
                ctx.error(
                    "ASL_WAIT_DURATION",
                    ptr.to_string(),
                    format!("a Wait state needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath; it has {n}"),
                    "keep exactly one duration field",
                );
            }
            // Step Functions takes Seconds from 0 to 99,999,999 and refuses the definition
            // otherwise.
            if let Some(seconds) = w.seconds.filter(|s| *s > MAX_WAIT_SECONDS) {
                ctx.error(
                    "ASL_WAIT_RANGE",
                    format!("{ptr}/Seconds"),
                    format!("Seconds {seconds} must be 0..={MAX_WAIT_SECONDS}"),
                    "wait at most 99,999,999 seconds; for a longer wait use Timestamp",
                );
            }
        }
        State::Fail(f) => {
            for (both, field, a, b) in [
                (
                    f.error.is_some() && f.error_path.is_some(),
                    "ErrorPath",
                    "Error",
                    "ErrorPath",
                ),
                (
                    f.cause.is_some() && f.cause_path.is_some(),
                    "CausePath",
                    "Cause",
                    "CausePath",
                ),
            ] {
                if both {
                    ctx.error(
                        "ASL_FAIL_BOTH_FORMS",
                        format!("{ptr}/{field}"),
                        format!("a Fail state may have {a} or {b}, not both"),
                        format!("keep {a} for a fixed value or {b} to read it from the input"),
                    );
                }
            }
        }
        State::Map(m) => match (&m.item_processor, &m.iterator) {
            (None, None) => ctx.error(
                "ASL_MAP_PROCESSOR",
                ptr.to_string(),
                "a Map state needs an ItemProcessor",
                "add `\"ItemProcessor\": {\"StartAt\": …, \"States\": {…}}`",
            ),
            (Some(_), Some(_)) => ctx.error(
                "ASL_MAP_PROCESSOR",
                format!("{ptr}/Iterator"),
                "a Map state has both ItemProcessor and the legacy Iterator",
                "keep only ItemProcessor",
            ),
            _ => {}
        },
        State::Parallel(p) => {
            if p.branches.is_empty() {
                ctx.error(
                    "ASL_PARALLEL_NO_BRANCHES",
                    format!("{ptr}/Branches"),
                    "a Parallel state needs at least one branch",
                    "add a branch, or replace the Parallel with its only work",
                );
            }
        }
        State::Pass(_) | State::Succeed(_) => {}
    }
}

/// `arn:partition:service:region:account:resource…` with partition, service and resource
/// present (optimised integrations leave region and account empty).
fn resource(ctx: &mut Ctx<'_>, ptr: &str, resource: &str) {
    let parts: Vec<&str> = resource.split(':').collect();
    let ok = parts.len() >= 6
        && parts.first() == Some(&"arn")
        && parts.get(1).is_some_and(|p| !p.is_empty())
        && parts.get(2).is_some_and(|s| !s.is_empty())
        && parts
            .get(5..)
            .is_some_and(|r| r.iter().any(|s| !s.is_empty()));
    if !ok {
        ctx.error(
            "ASL_RESOURCE_NOT_ARN",
            format!("{ptr}/Resource"),
            format!("Resource {resource:?} is not an ARN"),
            "use an ARN such as `arn:aws:states:::lambda:invoke` or `arn:aws:lambda:REGION:ACCOUNT:function:NAME`",
        );
    }
}

fn operand_ok(op: &str, v: &Value) -> bool {
    if op.ends_with("Path") {
        return v.is_string();
    }
    if op.starts_with("Is") || op == "BooleanEquals" {
        return v.is_boolean();
    }
    if op.starts_with("Numeric") {
        return v.is_number();
    }
    v.is_string()
}

fn choice_rules(ctx: &mut Ctx<'_>, ptr: String, rule: &ChoiceRule) {
    let mut stack = vec![(ptr, rule, true)];
    while let Some((ptr, rule, top)) = stack.pop() {
        if top && rule.next.is_none() {
            ctx.error(
                "ASL_CHOICE_RULE_NEXT",
                ptr.clone(),
                "a top-level Choice rule needs `Next`",
                "add `\"Next\": \"<state>\"` to the rule",
            );
        } else if !top && rule.next.is_some() {
            ctx.error(
                "ASL_CHOICE_RULE_NEXT",
                format!("{ptr}/Next"),
                "a rule nested in And/Or/Not must not have `Next`",
                "move `Next` to the enclosing top-level rule",
            );
        }
        let mut operators = Vec::new();
        let mut jsonata = false;
        for (key, value) in &rule.comparison {
            let at = format!("{ptr}/{}", pointer_token(key));
            if COMPARISON_OPERATORS.contains(&key.as_str()) {
                operators.push(key.as_str());
                if !operand_ok(key, value) {
                    ctx.error(
                        "ASL_CHOICE_RULE_OPERATOR",
                        at.clone(),
                        format!("{key} has an operand of the wrong type: {value}"),
                        "Numeric* take numbers, Is*/BooleanEquals take booleans, String*/Timestamp* take strings, *Path take paths",
                    );
                } else if let (true, Some(p)) = (key.ends_with("Path"), value.as_str()) {
                    path(ctx, at, Some(p));
                }
            } else if query_language::JSONATA_FIELDS.contains(&key.as_str()) {
                jsonata = true;
                query_language::field(ctx, at, key);
            } else {
                ctx.error(
                    "ASL_UNKNOWN_FIELD",
                    at,
                    format!("`{key}` is not a comparison operator or Choice rule field"),
                    "use one of the States Language comparison operators (NumericEquals, StringMatches, IsPresent, ...)",
                );
            }
        }
        let compound = [rule.and.is_some(), rule.or.is_some(), rule.not.is_some()]
            .iter()
            .filter(|b| **b)
            .count();
        if compound > 0 {
            if compound > 1 || rule.variable.is_some() || !operators.is_empty() {
                ctx.error(
                    "ASL_CHOICE_RULE_OPERATOR",
                    ptr.clone(),
                    "a rule is either one And/Or/Not or one Variable comparison, not a mix",
                    "split the rule, nesting comparisons inside And/Or",
                );
            }
            for (field, list) in [("And", &rule.and), ("Or", &rule.or)] {
                if let Some(list) = list {
                    if list.is_empty() {
                        ctx.error(
                            "ASL_CHOICE_RULE_OPERATOR",
                            format!("{ptr}/{field}"),
                            format!("{field} has no rules"),
                            format!("give {field} at least one nested rule"),
                        );
                    }
                    for (i, r) in list.iter().enumerate() {
                        stack.push((format!("{ptr}/{field}/{i}"), r, false));
                    }
                }
            }
            if let Some(n) = &rule.not {
                stack.push((format!("{ptr}/Not"), n, false));
            }
            continue;
        }
        if jsonata {
            continue;
        }
        match &rule.variable {
            None => ctx.error(
                "ASL_CHOICE_RULE_VARIABLE",
                ptr.clone(),
                "a comparison rule needs `Variable`",
                "add `\"Variable\": \"$.field\"` naming the value to compare",
            ),
            Some(v) => path(ctx, format!("{ptr}/Variable"), Some(v)),
        }
        if operators.len() != 1 {
            ctx.error(
                "ASL_CHOICE_RULE_OPERATOR",
                ptr.clone(),
                format!(
                    "a comparison rule needs exactly one comparison operator; it has {}",
                    operators.len()
                ),
                "keep one operator per rule and combine several with And/Or",
            );
        }
    }
}
