//! State stepping: entering states, task attempts, input/output processing, Retry/Catch, and
//! the Map/Parallel fan-out and join.

use std::borrow::Cow;
use std::sync::Arc;

use asl_model::{State, Transition};
use serde_json::{json, Value};

use super::choice;
use super::clock::parse_rfc3339;
use super::context::{eval_expr, eval_template, Context, ContextData};
use super::engine::{Engine, Execution, JoinKind, Machine, Step, Thread, TimerKind};
use super::error::{StateError, DATA_LIMIT, NO_CHOICE};
use super::handler::TaskHandler;
use super::history::{entered, exited, Payload};
use super::intrinsics::java_text;
use super::paths::{self, apply_filter_path, apply_result_path_to, json_size, MAX_PAYLOAD_BYTES};
use super::program::Program;
use super::retry;

mod fanout;
mod task;

fn ctx<'a>(
    x: &'a Execution,
    th: &'a Thread,
    m: &'a Machine,
    name: &'a str,
    token: Option<&'a str>,
    map_item: Option<(usize, &'a Value)>,
) -> Context<'a> {
    Context::new(ContextData {
        execution_id: &x.arn,
        execution_name: &x.name,
        execution_input: &x.input,
        execution_start_ms: x.start_ms,
        redrive_count: x.redrive_count,
        machine_id: &m.arn,
        machine_name: &m.name,
        state_name: name,
        entered_ms: th.entered_ms,
        retry_count: matches!(
            x.program.scopes[th.scope].states[th.state],
            State::Task(_) | State::Map(_) | State::Parallel(_)
        )
        .then_some(th.retry_total),
        task_token: token,
        map_item,
    })
}

/// `InputPath` without cloning when it is absent or definite. A `$$` path reads the context
/// object.
fn filter_input<'a>(
    path: Option<&Value>,
    input: &'a Value,
    cx: &Context<'_>,
) -> Result<Cow<'a, Value>, StateError> {
    match path {
        None => Ok(Cow::Borrowed(input)),
        Some(Value::String(p)) if p.starts_with("$$") => cx.filter(p, input).map(Cow::Owned),
        Some(Value::String(p)) => {
            paths::read_ref(p, input)?.ok_or_else(|| paths::invalid_path(p, input))
        }
        Some(other) => apply_filter_path(Some(other), input.clone(), "InputPath").map(Cow::Owned),
    }
}

/// `OutputPath`; a `$$` path reads the context object.
fn filter_output(
    path: Option<&Value>,
    value: Value,
    cx: &Context<'_>,
) -> Result<Value, StateError> {
    match path {
        Some(Value::String(p)) if p.starts_with("$$") => cx.filter(p, &value),
        _ => apply_filter_path(path, value, "OutputPath"),
    }
}

/// How AWS names a task in a DataLimitExceeded cause: the service of an integration
/// (`lambda` for `arn:aws:states:::lambda:invoke`), else the resource ARN (recorded).
fn task_label(resource: &str) -> &str {
    if resource.starts_with("arn:aws:states:::") {
        split_resource(resource).0
    } else {
        resource
    }
}

fn data_limit(who: &str) -> StateError {
    StateError::new(
        DATA_LIMIT,
        format!(
            "The state/task '{who}' returned a result with a size exceeding the maximum number of bytes service limit."
        ),
    )
}

/// AWS refuses a wait that ends more than 2^31-1 seconds from now (recorded: 24,855 days is
/// accepted, 24,856 days is not).
const MAX_WAIT_MS: i64 = i32::MAX as i64 * 1000;

/// `SecondsPath`: a non-negative whole number, in AWS's words when it is not (recorded).
fn wait_seconds_at(p: &str, inp: &Value) -> Result<u64, StateError> {
    let Some(v) = paths::read(p, inp)? else {
        return Err(StateError::runtime(format!(
            "The SecondsPath parameter does not reference an input value: {p}"
        )));
    };
    match v.as_i64() {
        Some(n) if n >= 0 => Ok(n as u64),
        Some(_) => Err(StateError::runtime(format!(
            "The SecondsPath parameter references a negative value: {p} == {v}"
        ))),
        None => match v.as_u64() {
            Some(n) => Ok(n),
            None => Err(StateError::runtime(format!(
                "The SecondsPath parameter cannot be parsed as a long value: {p} == {}",
                java_text(&v)
            ))),
        },
    }
}

/// `TimestampPath`: an RFC 3339 timestamp with `T` and an offset (recorded).
fn wait_timestamp_at(p: &str, inp: &Value) -> Result<i64, StateError> {
    let Some(v) = paths::read(p, inp)? else {
        return Err(StateError::runtime(format!(
            "The TimestampPath parameter does not reference an input value: {p}"
        )));
    };
    v.as_str().and_then(parse_rfc3339).ok_or_else(|| {
        StateError::runtime(format!(
            "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: {p} == {}",
            java_text(&v)
        ))
    })
}

fn next_of(st: &State) -> Option<&str> {
    match st.transition() {
        Some(Transition::Next(n)) => Some(n),
        _ => None,
    }
}

fn result_selector(st: &State) -> Option<&Value> {
    match st {
        State::Task(s) => s.result_selector.as_ref(),
        State::Map(s) => s.result_selector.as_ref(),
        State::Parallel(s) => s.result_selector.as_ref(),
        _ => None,
    }
}

fn result_path(st: &State) -> Option<&Value> {
    match st {
        State::Task(s) => s.result_path.as_ref(),
        State::Map(s) => s.result_path.as_ref(),
        State::Parallel(s) => s.result_path.as_ref(),
        State::Pass(s) => s.result_path.as_ref(),
        _ => None,
    }
}

fn output_path(st: &State) -> Option<&Value> {
    match st {
        State::Task(s) => s.output_path.as_ref(),
        State::Map(s) => s.output_path.as_ref(),
        State::Parallel(s) => s.output_path.as_ref(),
        State::Pass(s) => s.output_path.as_ref(),
        State::Choice(s) => s.output_path.as_ref(),
        State::Wait(s) => s.output_path.as_ref(),
        State::Succeed(s) => s.output_path.as_ref(),
        State::Fail(_) => None,
    }
}

fn input_path(st: &State) -> Option<&Value> {
    match st {
        State::Task(s) => s.input_path.as_ref(),
        State::Map(s) => s.input_path.as_ref(),
        State::Parallel(s) => s.input_path.as_ref(),
        State::Pass(s) => s.input_path.as_ref(),
        State::Choice(s) => s.input_path.as_ref(),
        State::Wait(s) => s.input_path.as_ref(),
        State::Succeed(s) => s.input_path.as_ref(),
        State::Fail(_) => None,
    }
}

/// `MaxConcurrencyPath`: a non-negative integer; anything else fails the state in AWS's words
/// (recorded; AWS documents the field but not this check).
fn max_concurrency_at(p: &str, inp: &Value) -> Result<u64, StateError> {
    let v = paths::read(p, inp)?.ok_or_else(|| paths::invalid_path(p, inp))?;
    v.as_u64().ok_or_else(|| {
        StateError::runtime(format!(
            "The MaxConcurrencyPath field refers to value \"{}\" which is not a valid integer: {p}",
            java_text(&v)
        ))
    })
}

/// Reads a positive whole number of seconds from a `...SecondsPath`.
fn seconds_at(path: &str, input: &Value, field: &str) -> Result<u64, StateError> {
    let v = paths::read(path, input)?.ok_or_else(|| paths::invalid_path(path, input))?;
    v.as_u64().ok_or_else(|| {
        StateError::runtime(format!(
            "The value at '{path}' for {field} must be a non-negative integer, got {v}"
        ))
    })
}

impl Engine {
    pub(super) fn run_thread(&mut self, e: usize, t: usize, handler: &mut dyn TaskHandler) {
        let prog = self.execs[e].program.clone();
        match self.execs[e].threads[t].step {
            Step::Enter => self.enter(e, t, &prog, handler),
            Step::Attempt => self.attempt(e, t, &prog, handler),
            Step::WaitDone => self.wait_done(e, t, &prog),
            _ => {}
        }
    }

    fn names(&self, e: usize, t: usize) -> (usize, usize) {
        let th = &self.execs[e].threads[t];
        (th.scope, th.state)
    }

    fn enter(&mut self, e: usize, t: usize, prog: &Arc<Program>, handler: &mut dyn TaskHandler) {
        let now = self.now_ms();
        let (scope, idx) = self.names(e, t);
        let st = &prog.scopes[scope].states[idx];
        let name = prog.scopes[scope].names[idx].as_str();
        let record = self.record_payloads;
        let th = &mut self.execs[e].threads[t];
        th.entered_ms = now;
        th.retry_counts.clear();
        th.retry_counts.resize(st.retriers().len(), 0);
        th.retry_total = 0;
        let payload = record.then(|| Payload::new("input", 1, &th.input));
        self.emit_with(e, entered(st.type_name()), Some(name), Value::Null, payload);
        if self.execs[e].overflow {
            return;
        }
        let entered_event = self.execs[e].history.len() as u32;
        self.execs[e].threads[t].entered_event = entered_event;
        self.execs[e].transitions += 1;
        match st {
            State::Task(_) | State::Map(_) | State::Parallel(_) => {
                self.attempt(e, t, prog, handler)
            }
            State::Pass(p) => {
                let r = self.effective_input(
                    e,
                    t,
                    name,
                    p.input_path.as_ref(),
                    p.parameters.as_ref(),
                    None,
                );
                let r = r.and_then(|eff| {
                    let result = match &p.result {
                        Some(v) => v.clone(),
                        None => eff,
                    };
                    self.post_process(e, t, st, name, result, false)
                });
                self.finish_state(e, t, prog, r, next_of(st));
            }
            State::Choice(c) => {
                let x = &self.execs[e];
                let th = &x.threads[t];
                let m = &self.machines[x.machine];
                let cx = ctx(x, th, m, name, None, None);
                let r = filter_input(c.input_path.as_ref(), &th.input, &cx).and_then(|inp| {
                    let next = match choice::first_match(&c.choices, &inp, &cx)? {
                        Some(i) => c.choices[i].next.clone(),
                        None => c.default.clone(),
                    };
                    let Some(next) = next else {
                        return Err(StateError::new(
                            NO_CHOICE,
                            format!(
                            "No Matches! (state '{name}' matched no choice rule and has no Default)"
                        ),
                        ));
                    };
                    Ok((
                        filter_output(c.output_path.as_ref(), inp.into_owned(), &cx)?,
                        next,
                    ))
                });
                match r {
                    Ok((out, next)) => self.exit_to(e, t, prog, out, Some(&next)),
                    Err(err) => self.state_failed(e, t, prog, err),
                }
            }
            State::Wait(w) => {
                let x = &self.execs[e];
                let th = &x.threads[t];
                let m = &self.machines[x.machine];
                let cx = ctx(x, th, m, name, None, None);
                let target = filter_input(w.input_path.as_ref(), &th.input, &cx).and_then(|inp| {
                    let secs = |s: u64| now.saturating_add((s.min(i64::MAX as u64 / 1000) as i64) * 1000);
                    let ts = |s: &str| {
                        parse_rfc3339(s).ok_or_else(|| {
                            StateError::runtime(format!("The Timestamp parameter is not a valid ISO-8601 extended offset date-time format string: {s}"))
                        })
                    };
                    let at = match (w.seconds, &w.seconds_path, &w.timestamp, &w.timestamp_path) {
                        (Some(s), None, None, None) => secs(s),
                        (None, Some(p), None, None) => secs(wait_seconds_at(p, &inp)?),
                        (None, None, Some(s), None) => ts(s)?,
                        (None, None, None, Some(p)) => wait_timestamp_at(p, &inp)?,
                        _ => return Err(StateError::runtime(format!(
                            "Wait state '{name}' needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath"
                        ))),
                    };
                    if at.saturating_sub(now) > MAX_WAIT_MS {
                        return Err(StateError::runtime("Wait state delay is too long."));
                    }
                    Ok(at)
                });
                match target {
                    // A timestamp in the past proceeds at once.
                    Ok(at) if at <= now => self.wait_done(e, t, prog),
                    Ok(at) => self.sleep(e, t, at, Step::WaitDone),
                    Err(err) => self.state_failed(e, t, prog, err),
                }
            }
            State::Succeed(s) => {
                let x = &self.execs[e];
                let th = &x.threads[t];
                let cx = ctx(x, th, &self.machines[x.machine], name, None, None);
                let r = filter_input(s.input_path.as_ref(), &th.input, &cx)
                    .and_then(|inp| filter_output(s.output_path.as_ref(), inp.into_owned(), &cx));
                self.finish_state(e, t, prog, r, None);
            }
            State::Fail(f) => {
                let x = &self.execs[e];
                let th = &x.threads[t];
                let m = &self.machines[x.machine];
                let cx = ctx(x, th, m, name, None, None);
                let rng = &mut self.rng;
                let mut text = |lit: &Option<String>,
                                path: &Option<String>,
                                field: &str|
                 -> Result<String, StateError> {
                    match (lit, path) {
                        (Some(l), _) => Ok(l.clone()),
                        (None, Some(p)) => match eval_expr(p, field, &th.input, &cx, rng)? {
                            Value::String(s) => Ok(s),
                            v => Err(StateError::runtime(format!(
                                "{field} must select a string, got {v}"
                            ))),
                        },
                        (None, None) => Ok(String::new()),
                    }
                };
                let err = text(&f.error, &f.error_path, "ErrorPath").and_then(|error| {
                    Ok(StateError::new(
                        error,
                        text(&f.cause, &f.cause_path, "CausePath")?,
                    ))
                });
                match err {
                    Ok(err) => self.fail_thread(e, t, prog, err),
                    Err(err) => self.fail_thread(e, t, prog, err),
                }
            }
        }
    }

    /// InputPath then a payload template (`Parameters`) over the thread's state input.
    fn effective_input(
        &mut self,
        e: usize,
        t: usize,
        name: &str,
        input_path: Option<&Value>,
        template: Option<&Value>,
        token: Option<&str>,
    ) -> Result<Value, StateError> {
        let x = &self.execs[e];
        let th = &x.threads[t];
        let m = &self.machines[x.machine];
        let cx = ctx(x, th, m, name, token, None);
        let inp = filter_input(input_path, &th.input, &cx)?;
        match template {
            Some(tpl) => eval_template(tpl, &inp, &cx, &mut self.rng),
            None => Ok(inp.into_owned()),
        }
    }

    /// ResultSelector, ResultPath (over the state input), OutputPath.
    fn post_process(
        &mut self,
        e: usize,
        t: usize,
        st: &State,
        name: &str,
        result: Value,
        selector: bool,
    ) -> Result<Value, StateError> {
        let x = &self.execs[e];
        let th = &x.threads[t];
        let m = &self.machines[x.machine];
        let result = match result_selector(st).filter(|_| selector) {
            Some(sel) => {
                let cx = ctx(x, th, m, name, None, None);
                eval_template(sel, &result, &cx, &mut self.rng)?
            }
            None => result,
        };
        let merged = apply_result_path_to(result_path(st), &th.input, result)?;
        let cx = ctx(x, th, m, name, None, None);
        filter_output(output_path(st), merged, &cx)
    }

    fn finish_state(
        &mut self,
        e: usize,
        t: usize,
        prog: &Arc<Program>,
        r: Result<Value, StateError>,
        next: Option<&str>,
    ) {
        match r {
            Ok(out) => self.exit_to(e, t, prog, out, next),
            Err(err) => self.state_failed(e, t, prog, err),
        }
    }

    /// Emits `...StateExited` and moves to `next`, or ends the thread when `next` is `None`.
    fn exit_to(
        &mut self,
        e: usize,
        t: usize,
        prog: &Arc<Program>,
        output: Value,
        next: Option<&str>,
    ) {
        let (scope, idx) = self.names(e, t);
        let st = &prog.scopes[scope].states[idx];
        let name = prog.scopes[scope].names[idx].as_str();
        if json_size(&output) > MAX_PAYLOAD_BYTES {
            return self.fail_thread(e, t, prog, data_limit(name));
        }
        let output = Arc::new(output);
        let payload = self
            .record_payloads
            .then(|| Payload::new("output", 1, &output));
        self.emit_with(e, exited(st.type_name()), Some(name), Value::Null, payload);
        match next {
            Some(n) => {
                let Some(&ni) = prog.scopes[scope].index.get(n) else {
                    return self.fail_thread(
                        e,
                        t,
                        prog,
                        StateError::runtime(format!("unknown state '{n}'")),
                    );
                };
                let th = &mut self.execs[e].threads[t];
                th.state = ni;
                th.input = output;
                th.step = Step::Enter;
                self.enqueue(e, t);
            }
            // The last state's output is the thread's result; the history keeps its own copy
            // only while payloads are recorded.
            None => {
                let output = Arc::try_unwrap(output).unwrap_or_else(|shared| (*shared).clone());
                self.finish_thread(e, t, prog, Ok(output))
            }
        }
    }

    fn sleep(&mut self, e: usize, t: usize, at: i64, then: Step) {
        let th = &mut self.execs[e].threads[t];
        th.epoch += 1;
        th.step = Step::Sleeping(at);
        let epoch = th.epoch;
        self.push_timer(
            at,
            TimerKind::Wake {
                exec: e,
                thread: t,
                epoch,
                step: then,
            },
        );
    }

    fn wait_done(&mut self, e: usize, t: usize, prog: &Arc<Program>) {
        let (scope, idx) = self.names(e, t);
        let st = &prog.scopes[scope].states[idx];
        let name = prog.scopes[scope].names[idx].as_str();
        let x = &self.execs[e];
        let th = &x.threads[t];
        let cx = ctx(x, th, &self.machines[x.machine], name, None, None);
        let r = filter_input(input_path(st), &th.input, &cx)
            .and_then(|inp| filter_output(output_path(st), inp.into_owned(), &cx));
        self.finish_state(e, t, prog, r, next_of(st));
    }

    /// One attempt of a Task, Map or Parallel state (the first, or a retry).
    fn attempt(&mut self, e: usize, t: usize, prog: &Arc<Program>, handler: &mut dyn TaskHandler) {
        let (scope, idx) = self.names(e, t);
        let st = &prog.scopes[scope].states[idx];
        let name = prog.scopes[scope].names[idx].as_str();
        match st {
            State::Task(ts) => self.attempt_task(e, t, prog, ts, name, handler),
            State::Map(ms) => {
                let x = &self.execs[e];
                let th = &x.threads[t];
                let cx = ctx(x, th, &self.machines[x.machine], name, None, None);
                let r = filter_input(ms.input_path.as_ref(), &th.input, &cx).and_then(|inp| {
                    let inp = inp.into_owned();
                    let items = match &ms.items_path {
                        Some(p) => paths::read_required(p, &inp, "ItemsPath")?,
                        None => inp.clone(),
                    };
                    let max = match ms.extra.get("MaxConcurrencyPath") {
                        Some(Value::String(p)) => Some(max_concurrency_at(p, &inp)?),
                        _ => ms.max_concurrency,
                    };
                    match items {
                        Value::Array(a) => Ok((inp, a, max)),
                        v => Err(StateError::runtime(format!(
                            "Map state '{name}': ItemsPath must select an array, got {}",
                            json_type(&v)
                        ))),
                    }
                });
                let (inp, items, max_concurrency) = match r {
                    Ok(v) => v,
                    Err(err) => return self.state_failed(e, t, prog, err),
                };
                self.emit(
                    e,
                    "MapStateStarted",
                    Some(name),
                    json!({"length": items.len()}),
                );
                let n = items.len();
                let max = match max_concurrency {
                    None | Some(0) => usize::MAX,
                    Some(m) => usize::try_from(m).unwrap_or(usize::MAX),
                };
                let processor = prog.scopes[scope]
                    .children
                    .get(&idx)
                    .and_then(|c| c.first().copied());
                let Some(processor) = processor else {
                    return self.state_failed(
                        e,
                        t,
                        prog,
                        StateError::runtime("Map state has no ItemProcessor"),
                    );
                };
                let j = self.new_join(e, t, JoinKind::Map, items, n, max, processor, inp);
                if n == 0 {
                    self.join_succeeded(e, j, prog);
                } else {
                    self.launch_items(e, j, prog);
                }
            }
            State::Parallel(ps) => {
                let r = self.effective_input(
                    e,
                    t,
                    name,
                    ps.input_path.as_ref(),
                    ps.parameters.as_ref(),
                    None,
                );
                let inp = match r {
                    Ok(v) => v,
                    Err(err) => return self.state_failed(e, t, prog, err),
                };
                self.emit(e, "ParallelStateStarted", Some(name), json!({}));
                let branches = prog.scopes[scope]
                    .children
                    .get(&idx)
                    .cloned()
                    .unwrap_or_default();
                let n = branches.len();
                let j = self.new_join(
                    e,
                    t,
                    JoinKind::Parallel,
                    Vec::new(),
                    n,
                    usize::MAX,
                    0,
                    Value::Null,
                );
                if n == 0 {
                    return self.join_succeeded(e, j, prog);
                }
                for (b, sid) in branches.into_iter().enumerate() {
                    let c = self.spawn(e, sid, prog, inp.clone(), (j, b));
                    self.execs[e].joins[j].active.push(c);
                }
            }
            _ => {}
        }
    }

    /// Retry, then Catch, then fail the thread.
    fn state_failed(&mut self, e: usize, t: usize, prog: &Arc<Program>, err: StateError) {
        let err = self.locate(e, t, prog, err);
        if err.is_terminal() {
            return self.fail_thread(e, t, prog, err);
        }
        let (scope, idx) = self.names(e, t);
        let st = &prog.scopes[scope].states[idx];
        let now = self.now_ms();
        // The first retrier whose ErrorEquals matches decides; once its attempts are used up
        // the error goes to Catch, not to a later retrier.
        if let Some((i, r)) = st
            .retriers()
            .iter()
            .enumerate()
            .find(|(_, r)| retry::matches(&r.error_equals, &err))
        {
            let th = &self.execs[e].threads[t];
            let used = th.retry_counts.get(i).copied().unwrap_or(0);
            if u64::from(used) < r.attempts() {
                let delay = retry::delay_ms(r, used, &mut self.rng);
                let th = &mut self.execs[e].threads[t];
                if let Some(c) = th.retry_counts.get_mut(i) {
                    *c += 1;
                }
                th.retry_total += 1;
                return self.sleep(e, t, now.saturating_add(delay), Step::Attempt);
            }
        }
        if let Some(c) = st
            .catchers()
            .iter()
            .find(|c| retry::matches(&c.error_equals, &err))
        {
            let out = err.catch_output();
            let th = &self.execs[e].threads[t];
            return match apply_result_path_to(c.result_path.as_ref(), &th.input, out) {
                Ok(v) => self.exit_to(e, t, prog, v, Some(&c.next)),
                Err(err2) => self.fail_thread(e, t, prog, err2),
            };
        }
        self.fail_thread(e, t, prog, err)
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Splits a Task resource the way history events report it: `arn:aws:states:::sqs:sendMessage`
/// → (`sqs`, `sendMessage`), `...:::aws-sdk:dynamodb:getItem` → (`aws-sdk:dynamodb`,
/// `getItem`), a Lambda function ARN → (`lambda`, the ARN).
pub(super) fn split_resource(resource: &str) -> (&str, &str) {
    if let Some(rest) = resource.strip_prefix("arn:aws:states:::") {
        if let Some(sdk) = rest.strip_prefix("aws-sdk:") {
            if let Some(pos) = sdk.find(':') {
                return (&rest[..8 + pos], &sdk[pos + 1..]);
            }
        }
        if let Some(pos) = rest.find(':') {
            return (&rest[..pos], &rest[pos + 1..]);
        }
        return (rest, rest);
    }
    let service = resource.split(':').nth(2).unwrap_or("");
    (service, resource)
}
