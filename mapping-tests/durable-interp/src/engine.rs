//! Published function versions, their durable executions, timers and callbacks, on one virtual
//! clock.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;

use crate::context::{Context, Invocation, Stop, StopKind};
use crate::history::{error, event, Event, OpStatus, OpType};

/// The detail of an invocation that ended with the function's crash.
pub const CRASHED: &str = "the function crashed before its step was checkpointed";

/// A handler's failure: the execution fails with this error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failed {
    pub error: String,
    pub cause: String,
}

/// The code a published function version runs: from the start on every invocation.
pub trait Program {
    fn invoke(&self, ctx: &Context<'_>, input: &Value) -> Result<Result<Value, Failed>, Stop>;
}

/// One step's effect, as the handler's step asks for it.
pub struct StepCall<'a> {
    pub execution_arn: &'a str,
    pub execution_name: &'a str,
    pub function_arn: &'a str,
    /// The step's log position.
    pub operation: usize,
    pub name: &'a str,
    pub payload: &'a Value,
    pub now_ms: i64,
    /// The callback a `wait_for_callback`'s submitter step hands out.
    pub callback_id: Option<&'a str>,
    /// The 1-based attempt of a retried step or a condition's check (1 for a plain step).
    pub attempt: u32,
    /// The state a condition's check runs on: the last attempt's, or the initial state.
    pub state: Option<&'a Value>,
}

/// A step's effect failed: the error the service checkpoints for the step, which a replay
/// returns again instead of running the effect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StepError(pub String);

impl From<String> for StepError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for StepError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// Runs steps' effects: the only place a handler touches the world.
pub trait StepHandler {
    fn step(&mut self, call: &StepCall<'_>, effects: &mut Effects) -> Result<Value, StepError>;
}

/// What a step asks the engine to do once it is checkpointed: start executions (by name, so a
/// repeated start finds the one that exists).
#[derive(Debug, Default)]
pub struct Effects {
    starts: Vec<(String, String, Value)>,
    pub(crate) crashed: bool,
}

impl Effects {
    /// The function dies right after this step's effect, before the step is checkpointed: the
    /// invocation ends, and the next one (started at once, as the service retries a failed
    /// invocation) runs the step again. Steps are at least once.
    pub fn crash_after(&mut self) {
        self.crashed = true;
    }

    pub fn start_execution(&mut self, function_arn: &str, name: &str, input: Value) {
        self.starts
            .push((function_arn.to_string(), name.to_string(), input));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ExecutionStatus {
    Running,
    Succeeded,
    Failed,
    Stopped,
}

#[derive(Debug, Clone, Serialize)]
pub struct Execution {
    pub arn: String,
    pub name: String,
    pub function_arn: String,
    pub input: Value,
    pub status: ExecutionStatus,
    pub start_ms: i64,
    pub end_ms: Option<i64>,
    pub ops: Vec<crate::history::Operation>,
    pub history: Vec<Event>,
    /// Operations as the service bills them: a step 1, a wait 1, a `wait_for_callback` 3.
    pub operations_billed: u64,
    /// Bytes of checkpointed step results, errors and callback results: what the service counts
    /// against its written-state cap.
    pub state_bytes_written: u64,
    pub invocations: u64,
    /// Checkpointed operations returned from the log instead of run, over every invocation.
    pub replayed: u64,
    pub result: Option<Value>,
    pub error: Option<Failed>,
}

/// The code `SendDurableExecutionCallbackSuccess` and `…Failure` answer for a callback that
/// is no longer open: completed, failed, timed out, or its execution ended.
pub const CALLBACK_CLOSED: &str = "CallbackTimeoutException";

/// A refused API call, with the service's error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: &'static str,
    pub message: String,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// What a start found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub arn: String,
    /// An execution of that name existed: it is returned, nothing new starts.
    pub existing: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Timer {
    at: i64,
    seq: u64,
    exec: usize,
    op: usize,
}

struct Function {
    arn: String,
    program: Rc<dyn Program>,
}

pub struct Engine {
    now_ms: i64,
    functions: Vec<Function>,
    executions: Vec<Execution>,
    by_name: HashMap<(String, String), usize>,
    by_arn: HashMap<String, usize>,
    callbacks: HashMap<String, (usize, usize)>,
    timers: BTreeSet<Timer>,
    ready: VecDeque<usize>,
    /// Every history event in the order written: (execution, index in its history).
    log: Vec<(usize, usize)>,
    seq: u64,
    next_callback: u64,
    event_budget: Option<usize>,
    invocation_budget: Option<u64>,
    invocations: u64,
    spent: bool,
}

impl Engine {
    pub fn new(start_ms: i64) -> Engine {
        Engine {
            now_ms: start_ms,
            functions: Vec::new(),
            executions: Vec::new(),
            by_name: HashMap::new(),
            by_arn: HashMap::new(),
            callbacks: HashMap::new(),
            timers: BTreeSet::new(),
            ready: VecDeque::new(),
            log: Vec::new(),
            seq: 0,
            next_callback: 0,
            event_budget: None,
            invocation_budget: None,
            invocations: 0,
            spent: false,
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// History events (all executions) and invocations after which nothing runs any more: the
    /// fence that gives a handler that never stops a verdict in bounded time and memory.
    pub fn set_budgets(&mut self, events: Option<usize>, invocations: Option<u64>) {
        self.event_budget = events;
        self.invocation_budget = invocations;
    }

    pub fn budget_spent(&self) -> bool {
        self.spent
            || self.event_budget.is_some_and(|b| self.log.len() >= b)
            || self
                .invocation_budget
                .is_some_and(|b| self.invocations >= b)
    }

    pub fn invocations(&self) -> u64 {
        self.invocations
    }

    /// Publishes a new version of `function_name` running `program`; returns its version ARN.
    pub fn publish_version(&mut self, function_name: &str, program: Rc<dyn Program>) -> String {
        let prefix = format!("arn:aws:lambda:us-east-1:123456789012:function:{function_name}:");
        let version = self
            .functions
            .iter()
            .filter(|f| f.arn.starts_with(&prefix))
            .count()
            + 1;
        let arn = format!("{prefix}{version}");
        self.functions.push(Function {
            arn: arn.clone(),
            program,
        });
        arn
    }

    /// Starts a durable execution, or returns the one of that name on that version.
    pub fn start_execution(
        &mut self,
        function_arn: &str,
        name: &str,
        input: Value,
    ) -> Result<Started, ApiError> {
        if !self.functions.iter().any(|f| f.arn == function_arn) {
            return Err(ApiError {
                code: "ResourceNotFoundException",
                message: format!("function version {function_arn} not found"),
            });
        }
        if name.is_empty() || name.len() > 64 {
            return Err(ApiError {
                code: "InvalidParameterValueException",
                message: format!("durable execution name {name:?} is not 1 to 64 characters"),
            });
        }
        let key = (function_arn.to_string(), name.to_string());
        if let Some(&i) = self.by_name.get(&key) {
            return Ok(Started {
                arn: self.executions[i].arn.clone(),
                existing: true,
            });
        }
        let idx = self.executions.len();
        let arn = format!("{function_arn}/durable-execution/{name}/{:08x}", idx + 1);
        self.executions.push(Execution {
            arn: arn.clone(),
            name: name.to_string(),
            function_arn: function_arn.to_string(),
            input,
            status: ExecutionStatus::Running,
            start_ms: self.now_ms,
            end_ms: None,
            ops: Vec::new(),
            history: Vec::new(),
            operations_billed: 0,
            state_bytes_written: 0,
            invocations: 0,
            replayed: 0,
            result: None,
            error: None,
        });
        self.by_name.insert(key, idx);
        self.by_arn.insert(arn.clone(), idx);
        self.record(idx, event::EXECUTION_STARTED, None, None);
        self.ready.push_back(idx);
        Ok(Started {
            arn,
            existing: false,
        })
    }

    /// `StopDurableExecution`.
    pub fn stop_execution(&mut self, arn: &str, error: &str, cause: &str) -> Result<(), ApiError> {
        let idx = self.index(arn)?;
        if self.executions[idx].status != ExecutionStatus::Running {
            return Err(ApiError {
                code: "ConflictException",
                message: format!("durable execution {arn} is not running"),
            });
        }
        self.finish(
            idx,
            ExecutionStatus::Stopped,
            Some(Failed {
                error: error.to_string(),
                cause: cause.to_string(),
            }),
        );
        Ok(())
    }

    /// `SendDurableExecutionCallbackSuccess`.
    pub fn send_callback_success(
        &mut self,
        callback_id: &str,
        result: Value,
    ) -> Result<(), ApiError> {
        let (exec, op) = self.open_callback(callback_id)?;
        self.executions[exec].state_bytes_written += crate::context::state_bytes(&result);
        let o = &mut self.executions[exec].ops[op];
        o.status = OpStatus::Succeeded;
        o.result = Some(result);
        self.record(exec, event::CALLBACK_SUCCEEDED, Some(op), None);
        self.resume(exec);
        Ok(())
    }

    /// `SendDurableExecutionCallbackFailure`.
    pub fn send_callback_failure(
        &mut self,
        callback_id: &str,
        error: &str,
    ) -> Result<(), ApiError> {
        let (exec, op) = self.open_callback(callback_id)?;
        let o = &mut self.executions[exec].ops[op];
        o.status = OpStatus::Failed;
        o.error = Some(error.to_string());
        self.record(
            exec,
            event::CALLBACK_FAILED,
            Some(op),
            Some(error.to_string()),
        );
        self.resume(exec);
        Ok(())
    }

    fn open_callback(&self, callback_id: &str) -> Result<(usize, usize), ApiError> {
        let Some(&(exec, op)) = self.callbacks.get(callback_id) else {
            return Err(ApiError {
                code: "ResourceNotFoundException",
                message: format!("no callback {callback_id}"),
            });
        };
        let open = self.executions[exec].status == ExecutionStatus::Running
            && self.executions[exec].ops[op].status == OpStatus::Started;
        if !open {
            // AWS's API reference: "The callback ID token has either expired or the callback
            // associated with the token has already been closed" (HTTP 400), whether it
            // succeeded, failed, timed out or its execution ended.
            return Err(ApiError {
                code: CALLBACK_CLOSED,
                message: format!("callback {callback_id} has already been closed"),
            });
        }
        Ok((exec, op))
    }

    fn index(&self, arn: &str) -> Result<usize, ApiError> {
        self.by_arn.get(arn).copied().ok_or_else(|| ApiError {
            code: "ResourceNotFoundException",
            message: format!("no durable execution {arn}"),
        })
    }

    pub fn execution(&self, arn: &str) -> Option<&Execution> {
        self.by_arn.get(arn).map(|&i| &self.executions[i])
    }

    /// Every execution, in start order.
    pub fn executions(&self) -> &[Execution] {
        &self.executions
    }

    /// History events written since `cursor`, with their execution's ARN, and the new cursor.
    pub fn events_since(&self, cursor: usize) -> (Vec<(&str, &Event)>, usize) {
        let from = cursor.min(self.log.len());
        let out = self.log[from..]
            .iter()
            .map(|&(e, i)| {
                let x = &self.executions[e];
                (x.arn.as_str(), &x.history[i])
            })
            .collect();
        (out, self.log.len())
    }

    /// When the next timer fires (a wait, a callback's timeout), if one is set.
    pub fn next_timer(&self) -> Option<i64> {
        if !self.ready.is_empty() {
            return Some(self.now_ms);
        }
        self.timers.first().map(|t| t.at)
    }

    /// Runs every invocation that is due now.
    pub fn run_until_idle(&mut self, handler: &mut dyn StepHandler) {
        while !self.budget_spent() {
            let Some(idx) = self.ready.pop_front() else {
                return;
            };
            self.invoke(idx, handler);
        }
    }

    /// Moves the clock to the next timer, fires it and runs what it resumes.
    pub fn step_timer(&mut self, handler: &mut dyn StepHandler) -> Option<i64> {
        self.run_until_idle(handler);
        if self.budget_spent() {
            return None;
        }
        let t = self.timers.pop_first()?;
        self.now_ms = self.now_ms.max(t.at);
        self.fire(t);
        self.run_until_idle(handler);
        Some(t.at)
    }

    /// Fires every timer up to `t`, in order, then sets the clock to `t`.
    pub fn advance_to(&mut self, t: i64, handler: &mut dyn StepHandler) {
        self.run_until_idle(handler);
        while self.timers.first().is_some_and(|x| x.at <= t) && !self.budget_spent() {
            self.step_timer(handler);
        }
        self.now_ms = self.now_ms.max(t);
    }

    fn fire(&mut self, t: Timer) {
        let x = &mut self.executions[t.exec];
        let armed = matches!(x.ops[t.op].status, OpStatus::Started | OpStatus::Pending);
        if x.status != ExecutionStatus::Running || !armed {
            return;
        }
        let ev = match x.ops[t.op].op_type {
            OpType::Wait => {
                x.ops[t.op].status = OpStatus::Succeeded;
                event::WAIT_SUCCEEDED
            }
            OpType::Step => {
                // A retry timer: the next invocation runs the next attempt.
                x.ops[t.op].status = OpStatus::Ready;
                self.resume(t.exec);
                return;
            }
            _ => {
                x.ops[t.op].status = OpStatus::TimedOut;
                event::CALLBACK_TIMED_OUT
            }
        };
        self.record(t.exec, ev, Some(t.op), None);
        self.resume(t.exec);
    }

    fn resume(&mut self, exec: usize) {
        if !self.ready.contains(&exec) {
            self.ready.push_back(exec);
        }
    }

    fn record(
        &mut self,
        exec: usize,
        event_type: &'static str,
        op: Option<usize>,
        detail: Option<String>,
    ) {
        let x = &mut self.executions[exec];
        let name = op.and_then(|i| x.ops.get(i)).map(|o| o.name.clone());
        x.history.push(Event {
            timestamp_ms: self.now_ms,
            event_type,
            operation: op,
            name,
            detail,
        });
        self.log.push((exec, x.history.len() - 1));
    }

    fn finish(&mut self, exec: usize, status: ExecutionStatus, failure: Option<Failed>) {
        let ev = match status {
            ExecutionStatus::Succeeded => event::EXECUTION_SUCCEEDED,
            ExecutionStatus::Failed => event::EXECUTION_FAILED,
            ExecutionStatus::Stopped => event::EXECUTION_STOPPED,
            ExecutionStatus::Running => return,
        };
        let detail = failure.as_ref().map(|f| f.error.clone());
        let x = &mut self.executions[exec];
        x.status = status;
        x.end_ms = Some(self.now_ms);
        x.error = failure;
        self.record(exec, ev, None, detail);
    }

    /// One invocation: the program from its start, over a context on the execution's log.
    fn invoke(&mut self, idx: usize, handler: &mut dyn StepHandler) {
        if self.executions[idx].status != ExecutionStatus::Running {
            return;
        }
        self.invocations += 1;
        let Some(program) = self
            .functions
            .iter()
            .find(|f| f.arn == self.executions[idx].function_arn)
            .map(|f| f.program.clone())
        else {
            return;
        };
        let history_before = self.executions[idx].history.len();
        let events_left = self.event_budget.map(|b| b.saturating_sub(self.log.len()));
        let input = self.executions[idx].input.clone();
        let now_ms = self.now_ms;
        let exec = &mut self.executions[idx];
        exec.invocations += 1;
        let ctx = Context {
            inv: RefCell::new(Invocation {
                exec,
                handler,
                now_ms,
                cursor: 0,
                effects: Effects::default(),
                stop: None,
                events_left,
                timers: Vec::new(),
                callbacks: Vec::new(),
                next_callback: &mut self.next_callback,
            }),
        };
        let result = program.invoke(&ctx, &input);
        let inv = ctx.inv.into_inner();
        let (stop, timers, callbacks, effects) = (inv.stop, inv.timers, inv.callbacks, inv.effects);
        // The context's events go to the global log in the order written.
        let written = self.executions[idx].history.len();
        self.log.extend((history_before..written).map(|i| (idx, i)));
        for (at, op) in timers {
            self.seq += 1;
            self.timers.insert(Timer {
                at,
                seq: self.seq,
                exec: idx,
                op,
            });
        }
        for (id, op) in callbacks {
            self.callbacks.insert(id, (idx, op));
        }
        for (function, name, input) in effects.starts {
            // A start the step asked for of a function that does not exist leaves nothing to
            // run; the handler's step saw its own request succeed, as a fire-and-forget start.
            let _ = self.start_execution(&function, &name, input);
        }
        let completed = |e: &mut Engine| e.record(idx, event::INVOCATION_COMPLETED, None, None);
        let outcome = match (stop, result) {
            (Some(StopKind::Budget), _) | (_, Err(Stop(StopKind::Budget))) => {
                self.spent = true;
                return;
            }
            (Some(StopKind::Failed { error, cause }), _)
            | (_, Err(Stop(StopKind::Failed { error, cause }))) => Err(Failed { error, cause }),
            (Some(StopKind::Suspended), Err(_)) | (None, Err(Stop(StopKind::Suspended))) => {
                completed(self);
                return;
            }
            (Some(StopKind::Crashed), _) | (_, Err(Stop(StopKind::Crashed))) => {
                self.record(
                    idx,
                    event::INVOCATION_COMPLETED,
                    None,
                    Some(CRASHED.to_string()),
                );
                self.resume(idx);
                return;
            }
            (Some(StopKind::Suspended), Ok(_)) => Err(Failed {
                error: error::RETURNED_WHILE_PENDING.to_string(),
                cause: "the handler returned past an operation that suspended it".to_string(),
            }),
            (None, Ok(r)) => r,
        };
        completed(self);
        match outcome {
            Ok(v) => {
                self.executions[idx].result = Some(v);
                self.finish(idx, ExecutionStatus::Succeeded, None);
            }
            Err(f) => self.finish(idx, ExecutionStatus::Failed, Some(f)),
        }
    }
}
