//! What a handler asks the engine for, answered from the checkpoint log while the log holds the
//! position, executed and checkpointed past its end.

use std::cell::RefCell;

use serde_json::Value;

use crate::engine::{Effects, Execution, StepCall, StepError, StepHandler};
use crate::history::{error, event, Event, OpStatus, OpType, Operation};
use crate::{OPERATION_CAP, WRITTEN_STATE_CAP};

/// The engine's way out of a handler: passed up untouched (`?`) by the handler's code.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop(pub(crate) StopKind);

#[derive(Debug, Clone, PartialEq)]
pub enum StopKind {
    /// A wait or a callback is pending: the invocation ends, a timer or the callback resumes
    /// the execution with a new one.
    Suspended,
    /// The engine fails the execution (non-determinism, the operation cap, a pending poll).
    Failed { error: String, cause: String },
    /// The engine's hard budget ran out: nothing runs any more.
    Budget,
    /// The function died after a step's effect, before its checkpoint (`Effects::crash_after`):
    /// the engine invokes it again at once.
    Crashed,
}

impl Stop {
    pub fn kind(&self) -> &StopKind {
        &self.0
    }
}

/// How a `wait_for_callback` ended, as its replay returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallbackOutcome {
    /// `SendDurableExecutionCallbackSuccess` with this result.
    Succeeded(Value),
    /// `SendDurableExecutionCallbackFailure`.
    Failed { error: String },
    /// The callback's timeout passed first.
    TimedOut,
    /// The submitter step (which hands the callback id to whoever completes it) failed: nobody
    /// knows the id, so the callback is not waited for.
    SubmitterFailed(String),
}

/// What a retry strategy or a condition's wait strategy decides after an attempt, as the
/// SDK's `RetryDecision` and `WaitDecision` do.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Done: the step fails with its error, or the condition completes with its state.
    Stop,
    /// Another attempt after this many seconds (at least one, as the service rounds up).
    Again { delay_seconds: u64 },
    /// A condition's strategy gives up (the SDK's `MaxChecksExceeded`).
    Exhausted { reason: String },
}

/// How a `wait_for_condition` ended, as its replay returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum ConditionOutcome {
    /// The strategy completed on this state.
    Met(Value),
    /// The strategy gave up after this many checks.
    Exhausted { reason: String },
    /// A check failed: a condition does not retry its check.
    CheckFailed(String),
}

/// What one attempt of a retried step or a condition ended with.
enum Attempt {
    Done(Result<Value, StepError>),
    Suspended,
}

/// Name of the step inside a `wait_for_callback` that hands the callback id out.
pub fn submitter(callback: &str) -> String {
    format!("{callback} {SUBMITTER_SUFFIX}")
}

/// How a submitter step's name ends.
pub const SUBMITTER_SUFFIX: &str = "(submitter)";

pub(crate) struct Invocation<'a> {
    pub exec: &'a mut Execution,
    pub handler: &'a mut dyn StepHandler,
    pub now_ms: i64,
    pub cursor: usize,
    pub effects: Effects,
    pub stop: Option<StopKind>,
    /// History events this invocation may still write before the engine's budget is spent.
    pub events_left: Option<usize>,
    /// (fire time, log position) of waits and callbacks started by this invocation.
    pub timers: Vec<(i64, usize)>,
    pub callbacks: Vec<(String, usize)>,
    pub next_callback: &'a mut u64,
}

/// The handler's view of one invocation. Its methods take `&self` because the handler's code
/// holds it across every operation; the state they change sits behind a `RefCell`.
pub struct Context<'a> {
    pub(crate) inv: RefCell<Invocation<'a>>,
}

impl Invocation<'_> {
    fn closed(&self) -> Result<(), Stop> {
        match &self.stop {
            Some(k) => Err(Stop(k.clone())),
            None => Ok(()),
        }
    }

    fn halt(&mut self, kind: StopKind) -> Stop {
        self.stop = Some(kind.clone());
        Stop(kind)
    }

    fn fail(&mut self, error: &str, cause: String) -> Stop {
        self.halt(StopKind::Failed {
            error: error.to_string(),
            cause,
        })
    }

    fn event(&mut self, event_type: &'static str, op: Option<usize>, detail: Option<String>) {
        let name = op
            .and_then(|i| self.exec.ops.get(i))
            .map(|o| o.name.clone());
        self.exec.history.push(Event {
            timestamp_ms: self.now_ms,
            event_type,
            operation: op,
            name,
            detail,
        });
        if let Some(n) = &mut self.events_left {
            *n = n.saturating_sub(1);
        }
    }

    /// The log position the handler asks about, if the log holds it: checked against what the
    /// handler asks for, as the SDK checks a replay.
    fn replay(&mut self, op_type: OpType, name: &str) -> Result<Option<usize>, Stop> {
        self.closed()?;
        let pos = self.cursor;
        match self.exec.ops.get(pos) {
            Some(op) if op.op_type == op_type && op.name == name => {
                self.cursor += 1;
                self.exec.replayed += 1;
                Ok(Some(pos))
            }
            Some(op) => {
                let cause = format!(
                    "operation {pos} is {:?} {:?} in the checkpoint log, but the handler asked for {op_type:?} {name:?}",
                    op.op_type, op.name
                );
                Err(self.fail(error::NON_DETERMINISTIC, cause))
            }
            None => Ok(None),
        }
    }

    /// Room for `n` new operations: the service's cap, then the engine's budget.
    fn bill(&mut self, n: u64) -> Result<(), Stop> {
        if self.exec.operations_billed + n > OPERATION_CAP {
            let cause = format!(
                "{} operations checkpointed; {n} more would pass the cap of {OPERATION_CAP}",
                self.exec.operations_billed
            );
            return Err(self.fail(error::OPERATION_LIMIT, cause));
        }
        if self.events_left == Some(0) {
            return Err(self.halt(StopKind::Budget));
        }
        self.exec.operations_billed += n;
        Ok(())
    }

    fn push(&mut self, op_type: OpType, name: &str) -> usize {
        let id = self.exec.ops.len();
        self.exec.ops.push(Operation {
            id,
            op_type,
            name: name.to_string(),
            status: OpStatus::Started,
            result: None,
            error: None,
            fire_at_ms: None,
            callback_id: None,
            attempt: 1,
            error_type: None,
        });
        self.cursor = id + 1;
        id
    }

    /// Counts `bytes` of written state; past the service's cap the execution fails.
    fn written(&mut self, bytes: u64) -> Result<(), Stop> {
        self.exec.state_bytes_written += bytes;
        if self.exec.state_bytes_written > WRITTEN_STATE_CAP {
            let cause = format!(
                "{} bytes of state written; the cap is {WRITTEN_STATE_CAP}",
                self.exec.state_bytes_written
            );
            return Err(self.fail(error::WRITTEN_STATE_LIMIT, cause));
        }
        Ok(())
    }

    /// Runs a new step's effect and checkpoints its result.
    fn run_step(
        &mut self,
        id: usize,
        payload: &Value,
        callback_id: Option<&str>,
    ) -> Result<Result<Value, StepError>, Stop> {
        self.event(event::STEP_STARTED, Some(id), None);
        let call = StepCall {
            execution_arn: &self.exec.arn,
            execution_name: &self.exec.name,
            function_arn: &self.exec.function_arn,
            operation: id,
            name: &self.exec.ops[id].name,
            payload,
            now_ms: self.now_ms,
            callback_id,
            attempt: 1,
            state: None,
        };
        let result = self.handler.step(&call, &mut self.effects);
        if std::mem::take(&mut self.effects.crashed) {
            // Nothing of the step reached the log but its start: a replay runs it again.
            self.exec.ops.truncate(id);
            self.exec.operations_billed -= 1;
            return Err(self.halt(StopKind::Crashed));
        }
        let op = &mut self.exec.ops[id];
        let written = match &result {
            Ok(v) => {
                op.status = OpStatus::Succeeded;
                op.result = Some(v.clone());
                self.event(event::STEP_SUCCEEDED, Some(id), None);
                state_bytes(v)
            }
            Err(e) => {
                op.status = OpStatus::Failed;
                op.error = Some(e.0.clone());
                self.event(event::STEP_FAILED, Some(id), Some(e.0.clone()));
                e.0.len() as u64
            }
        };
        self.written(written)?;
        Ok(result)
    }
}

impl Context<'_> {
    /// The durable execution's name (what the handler was started under).
    pub fn execution_name(&self) -> String {
        self.inv.borrow().exec.name.clone()
    }

    /// A step: its effect runs once, through the [`StepHandler`]; a replay returns what it
    /// returned then.
    pub fn step(&self, name: &str, payload: &Value) -> Result<Result<Value, StepError>, Stop> {
        let mut inv = self.inv.borrow_mut();
        if let Some(pos) = inv.replay(OpType::Step, name)? {
            let op = &inv.exec.ops[pos];
            return match op.status {
                OpStatus::Succeeded => Ok(Ok(op.result.clone().unwrap_or(Value::Null))),
                _ => Ok(Err(StepError(op.error.clone().unwrap_or_default()))),
            };
        }
        inv.bill(1)?;
        let id = inv.push(OpType::Step, name);
        inv.run_step(id, payload, None)
    }

    /// A durable wait: checkpointed with its fire time, then the invocation suspends.
    pub fn wait(&self, name: &str, seconds: u64) -> Result<(), Stop> {
        let mut inv = self.inv.borrow_mut();
        if let Some(pos) = inv.replay(OpType::Wait, name)? {
            return match inv.exec.ops[pos].status {
                OpStatus::Started => Err(inv.halt(StopKind::Suspended)),
                _ => Ok(()),
            };
        }
        inv.bill(1)?;
        let id = inv.push(OpType::Wait, name);
        let at = inv
            .now_ms
            .saturating_add(i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX));
        inv.exec.ops[id].fire_at_ms = Some(at);
        inv.event(event::WAIT_STARTED, Some(id), None);
        inv.timers.push((at, id));
        Err(inv.halt(StopKind::Suspended))
    }

    /// `wait_for_callback`: a child context holding a callback and the submitter step that
    /// hands its id out (three operations), then the invocation suspends until the callback is
    /// completed or times out. The submitter runs once.
    pub fn wait_for_callback(
        &self,
        name: &str,
        timeout_seconds: u64,
        payload: &Value,
    ) -> Result<CallbackOutcome, Stop> {
        self.wait_for_callback_retrying(name, timeout_seconds, payload, &|_, _| Decision::Stop)
    }

    /// [`Context::wait_for_callback`] whose submitter is retried as `retry` says (the SDK's
    /// `submitter_retry`): each attempt hands out the same callback id; between attempts the
    /// submitter is pending its retry timer and the invocation suspends.
    pub fn wait_for_callback_retrying(
        &self,
        name: &str,
        timeout_seconds: u64,
        payload: &Value,
        retry: &dyn Fn(&StepError, u32) -> Decision,
    ) -> Result<CallbackOutcome, Stop> {
        let mut inv = self.inv.borrow_mut();
        if let Some(ctx) = inv.replay(OpType::Context, name)? {
            let (Some(cb), Some(sub)) = (
                inv.replay(OpType::Callback, name)?,
                inv.replay(OpType::Step, &submitter(name))?,
            ) else {
                let cause = format!(
                    "the callback context {name:?} at {ctx} is incomplete in the checkpoint log"
                );
                return Err(inv.fail(error::NON_DETERMINISTIC, cause));
            };
            match inv.exec.ops[sub].status {
                OpStatus::Failed | OpStatus::TimedOut => {
                    let e = inv.exec.ops[sub].error.clone().unwrap_or_default();
                    return Ok(CallbackOutcome::SubmitterFailed(e));
                }
                OpStatus::Pending => return Err(inv.halt(StopKind::Suspended)),
                OpStatus::Started | OpStatus::Ready => {
                    return inv.submit(ctx, cb, sub, payload, retry)
                }
                OpStatus::Succeeded => {}
            }
            let op = inv.exec.ops[cb].clone();
            let outcome = match op.status {
                // A callback is never pending a retry: it is open until completed or timed out.
                OpStatus::Started | OpStatus::Pending | OpStatus::Ready => {
                    return Err(inv.halt(StopKind::Suspended))
                }
                OpStatus::Succeeded => CallbackOutcome::Succeeded(op.result.unwrap_or(Value::Null)),
                OpStatus::Failed => CallbackOutcome::Failed {
                    error: op.error.unwrap_or_default(),
                },
                OpStatus::TimedOut => CallbackOutcome::TimedOut,
            };
            // The context ends in the first invocation that sees its callback done.
            if inv.exec.ops[ctx].status == OpStatus::Started {
                let (status, ev) = match outcome {
                    CallbackOutcome::Succeeded(_) => {
                        (OpStatus::Succeeded, event::CONTEXT_SUCCEEDED)
                    }
                    _ => (OpStatus::Failed, event::CONTEXT_FAILED),
                };
                inv.exec.ops[ctx].status = status;
                inv.event(ev, Some(ctx), None);
            }
            return Ok(outcome);
        }
        inv.bill(3)?;
        let ctx = inv.push(OpType::Context, name);
        inv.event(event::CONTEXT_STARTED, Some(ctx), None);
        let cb = inv.push(OpType::Callback, name);
        let id = {
            *inv.next_callback += 1;
            format!("callback-{:06}", *inv.next_callback)
        };
        let at = inv.now_ms.saturating_add(
            i64::try_from(timeout_seconds.saturating_mul(1000)).unwrap_or(i64::MAX),
        );
        inv.exec.ops[cb].callback_id = Some(id.clone());
        inv.exec.ops[cb].fire_at_ms = Some(at);
        inv.event(event::CALLBACK_STARTED, Some(cb), Some(id));
        let sub = inv.push(OpType::Step, &submitter(name));
        inv.exec.ops[sub].attempt = 0;
        inv.submit(ctx, cb, sub, payload, retry)
    }
}

impl Invocation<'_> {
    /// The next attempt of a step with a retry strategy: a success ends it, a failure is
    /// retried as `retry` says (a step has no state to exhaust: giving up is failing).
    fn retry_attempt(
        &mut self,
        id: usize,
        payload: &Value,
        retry: &dyn Fn(&StepError, u32) -> Decision,
        callback_id: Option<&str>,
    ) -> Result<Attempt, Stop> {
        self.attempt(
            id,
            payload,
            &mut |r, n| match r {
                Ok(_) => Decision::Stop,
                Err(e) => match retry(e, n) {
                    Decision::Exhausted { .. } => Decision::Stop,
                    d => d,
                },
            },
            false,
            callback_id,
        )
    }

    /// The submitter's next attempt, with the callback's id: once it succeeds the callback
    /// waits (its timeout timer armed, its id completable) and the invocation suspends; a
    /// submitter that fails for good fails the callback and its context; a crash leaves it
    /// ready for the next invocation.
    fn submit(
        &mut self,
        ctx: usize,
        cb: usize,
        sub: usize,
        payload: &Value,
        retry: &dyn Fn(&StepError, u32) -> Decision,
    ) -> Result<CallbackOutcome, Stop> {
        let id = self.exec.ops[cb].callback_id.clone().unwrap_or_default();
        let attempt = self.retry_attempt(sub, payload, retry, Some(&id))?;
        match attempt {
            Attempt::Done(Ok(_)) => {
                let at = self.exec.ops[cb].fire_at_ms.unwrap_or(self.now_ms);
                self.timers.push((at, cb));
                self.callbacks.push((id, cb));
                Err(self.halt(StopKind::Suspended))
            }
            Attempt::Done(Err(StepError(e))) => {
                self.exec.ops[cb].status = OpStatus::Failed;
                self.exec.ops[cb].error = Some(e.clone());
                self.exec.ops[ctx].status = OpStatus::Failed;
                self.event(event::CONTEXT_FAILED, Some(ctx), Some(e.clone()));
                Ok(CallbackOutcome::SubmitterFailed(e))
            }
            Attempt::Suspended => Err(self.halt(StopKind::Suspended)),
        }
    }
}

impl Invocation<'_> {
    /// The log position of a retried step or a condition, and whether it is done: replayed
    /// from the log (a result, a failure, a pending retry that suspends, or a ready one that
    /// runs its next attempt), or started and billed as one operation.
    fn retried(&mut self, name: &str) -> Result<(usize, Option<Attempt>), Stop> {
        if let Some(pos) = self.replay(OpType::Step, name)? {
            let op = &self.exec.ops[pos];
            return Ok(match op.status {
                OpStatus::Succeeded => (
                    pos,
                    Some(Attempt::Done(Ok(op.result.clone().unwrap_or(Value::Null)))),
                ),
                OpStatus::Failed | OpStatus::TimedOut => (
                    pos,
                    Some(Attempt::Done(Err(StepError(
                        op.error.clone().unwrap_or_default(),
                    )))),
                ),
                OpStatus::Pending => (pos, Some(Attempt::Suspended)),
                OpStatus::Started | OpStatus::Ready => (pos, None),
            });
        }
        self.bill(1)?;
        let id = self.push(OpType::Step, name);
        self.exec.ops[id].attempt = 0;
        Ok((id, None))
    }

    /// Runs the next attempt of the retried step or condition at `id`: its effect with the
    /// carried state, then `decide` on what it returned. Every attempt's outcome is
    /// checkpointed; a retry leaves the operation pending with its timer and suspends.
    fn attempt(
        &mut self,
        id: usize,
        payload: &Value,
        decide: &mut dyn FnMut(&Result<Value, StepError>, u32) -> Decision,
        carries_state: bool,
        callback_id: Option<&str>,
    ) -> Result<Attempt, Stop> {
        let attempt = self.exec.ops[id].attempt + 1;
        let state = if carries_state {
            self.exec.ops[id].result.clone()
        } else {
            None
        };
        self.event(event::STEP_STARTED, Some(id), None);
        let call = StepCall {
            execution_arn: &self.exec.arn,
            execution_name: &self.exec.name,
            function_arn: &self.exec.function_arn,
            operation: id,
            name: &self.exec.ops[id].name,
            payload,
            now_ms: self.now_ms,
            callback_id,
            attempt,
            state: state.as_ref(),
        };
        let result = self.handler.step(&call, &mut self.effects);
        if std::mem::take(&mut self.effects.crashed) {
            // Nothing of this attempt reached the log: the next invocation runs it again.
            self.exec.ops[id].status = OpStatus::Ready;
            return Err(self.halt(StopKind::Crashed));
        }
        let decision = decide(&result, attempt);
        let op = &mut self.exec.ops[id];
        op.attempt = attempt;
        let (written, ev, detail, outcome) = match (decision, result) {
            (Decision::Again { delay_seconds }, result) => {
                let delay = delay_seconds.max(1);
                let at = self
                    .now_ms
                    .saturating_add(i64::try_from(delay.saturating_mul(1000)).unwrap_or(i64::MAX));
                op.status = OpStatus::Pending;
                op.fire_at_ms = Some(at);
                let (bytes, detail) = match result {
                    Ok(v) => {
                        let b = state_bytes(&v);
                        op.result = Some(v);
                        (b, format!("attempt {attempt}: check again in {delay}s"))
                    }
                    Err(StepError(e)) => {
                        let detail = format!("attempt {attempt}: {e}; retry in {delay}s");
                        let b = e.len() as u64;
                        op.error = Some(e);
                        (b, detail)
                    }
                };
                self.timers.push((at, id));
                (bytes, event::STEP_FAILED, Some(detail), Attempt::Suspended)
            }
            (Decision::Exhausted { reason }, _) => {
                op.status = OpStatus::Failed;
                op.error = Some(reason.clone());
                op.error_type = Some(error::CONDITION_EXHAUSTED.to_owned());
                let b = reason.len() as u64;
                (
                    b,
                    event::STEP_FAILED,
                    Some(reason.clone()),
                    Attempt::Done(Err(StepError(reason))),
                )
            }
            (Decision::Stop, Ok(v)) => {
                op.status = OpStatus::Succeeded;
                op.result = Some(v.clone());
                (
                    state_bytes(&v),
                    event::STEP_SUCCEEDED,
                    None,
                    Attempt::Done(Ok(v)),
                )
            }
            (Decision::Stop, Err(StepError(e))) => {
                op.status = OpStatus::Failed;
                op.error = Some(e.clone());
                (
                    e.len() as u64,
                    event::STEP_FAILED,
                    Some(e.clone()),
                    Attempt::Done(Err(StepError(e))),
                )
            }
        };
        self.event(ev, Some(id), detail);
        self.written(written)?;
        Ok(outcome)
    }
}

impl Context<'_> {
    /// A step with a retry strategy (the SDK's `step().retry_strategy(..)`): its effect runs;
    /// on failure `retry` (the error and the 1-based attempt) decides another attempt after a
    /// delay (the step is checkpointed pending with its timer and the invocation suspends; the
    /// timer makes it ready and the next invocation runs the next attempt) or the step fails
    /// with the error. A replay returns the final result, or suspends while a retry is due.
    pub fn step_with_retry(
        &self,
        name: &str,
        payload: &Value,
        retry: &dyn Fn(&StepError, u32) -> Decision,
    ) -> Result<Result<Value, StepError>, Stop> {
        let mut inv = self.inv.borrow_mut();
        let (id, done) = inv.retried(name)?;
        let outcome = match done {
            Some(a) => a,
            None => inv.retry_attempt(id, payload, retry, None)?,
        };
        match outcome {
            Attempt::Done(r) => Ok(r),
            Attempt::Suspended => Err(inv.halt(StopKind::Suspended)),
        }
    }

    /// `wait_for_condition`: one step operation whose check (the [`StepHandler`]'s effect, with
    /// the carried state as [`StepCall::state`]) runs once per attempt. After a check,
    /// `strategy` (the new state, the 1-based attempt) decides: complete with that state,
    /// check again after a delay (the state is checkpointed with the retry and the invocation
    /// suspends until the timer makes it ready), or give up. A check that fails fails the
    /// condition at once: the SDK does not retry a check.
    pub fn wait_for_condition(
        &self,
        name: &str,
        payload: &Value,
        initial_state: Value,
        strategy: &dyn Fn(&Value, u32) -> Decision,
    ) -> Result<ConditionOutcome, Stop> {
        let mut inv = self.inv.borrow_mut();
        let (id, done) = inv.retried(name)?;
        let outcome = match done {
            Some(a) => a,
            None => {
                if inv.exec.ops[id].result.is_none() {
                    inv.exec.ops[id].result = Some(initial_state);
                }
                inv.attempt(
                    id,
                    payload,
                    &mut |r, n| match r {
                        Ok(state) => strategy(state, n),
                        Err(_) => Decision::Stop,
                    },
                    true,
                    None,
                )?
            }
        };
        let exhausted = inv.exec.ops[id].error_type.as_deref() == Some(error::CONDITION_EXHAUSTED);
        match outcome {
            Attempt::Done(Ok(state)) => Ok(ConditionOutcome::Met(state)),
            Attempt::Done(Err(StepError(reason))) if exhausted => {
                Ok(ConditionOutcome::Exhausted { reason })
            }
            Attempt::Done(Err(StepError(e))) => Ok(ConditionOutcome::CheckFailed(e)),
            Attempt::Suspended => Err(inv.halt(StopKind::Suspended)),
        }
    }
}

/// The bytes a checkpointed value takes: its compact JSON.
pub fn state_bytes(value: &Value) -> u64 {
    serde_json::to_vec(value).map_or(0, |b| b.len() as u64)
}
