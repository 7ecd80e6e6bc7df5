//! The engine: registered machines, executions, the timer queue, the seeded generator and the
//! virtual clock, plus the public API a harness drives (reading an execution in `inspect.rs`,
//! driving virtual time in `drive.rs`). State stepping lives in `run/`,
//! Step Functions' own integrations in `builtins.rs`.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::hashing::FastMap;
use std::sync::Arc;

use asl_model::StateMachine;
use serde_json::{json, Value};

use super::clock::Clock;
use super::error::{SfnError, StateError};
use super::handler::{Callback, Deferred, TaskHandler};
use super::history::{HistoryEvent, Payload, MAX_HISTORY_EVENTS};
use super::paths::{json_size, MAX_PAYLOAD_BYTES};
use super::program::{Program, ScopeId};
use super::rng::Rng;

mod drive;
mod inspect;

pub const REGION: &str = "us-east-1";
pub const ACCOUNT: &str = "123456789012";
/// Redrive is allowed within 14 days of the execution closing (AWS RedriveExecution).
const REDRIVE_WINDOW_MS: i64 = 14 * 86_400_000;

pub fn state_machine_arn(name: &str) -> String {
    format!("arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{name}")
}

pub fn execution_arn(machine: &str, name: &str) -> String {
    format!("arn:aws:states:{REGION}:{ACCOUNT}:execution:{machine}:{name}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionStatus {
    Running,
    Succeeded,
    Failed,
    TimedOut,
    Aborted,
}

impl ExecutionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionStatus::Running => "RUNNING",
            ExecutionStatus::Succeeded => "SUCCEEDED",
            ExecutionStatus::Failed => "FAILED",
            ExecutionStatus::TimedOut => "TIMED_OUT",
            ExecutionStatus::Aborted => "ABORTED",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StartResult {
    pub execution_arn: String,
    pub start_ms: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionDescription {
    pub execution_arn: String,
    pub state_machine_arn: String,
    pub name: String,
    pub status: ExecutionStatus,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    pub input: Value,
    pub output: Option<Value>,
    pub error: Option<String>,
    pub cause: Option<String>,
    pub redrive_count: u32,
    pub redrive_ms: Option<i64>,
    pub metrics: ExecutionMetrics,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExecutionMetrics {
    /// State entries (each `...StateEntered`), redriven ones included.
    pub state_transitions: u64,
    pub history_events: usize,
}

/// Where one live thread of an execution is (the top level, a branch or an iteration).
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadPosition {
    pub state_name: String,
    pub waiting: Waiting,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Waiting {
    /// Will run at the current virtual time.
    Runnable,
    /// Sleeping in a Wait state or a retry backoff until this time.
    Timer(i64),
    /// A task in flight; the token completes it.
    Token(String),
    /// A Map or Parallel state waiting for its iterations/branches.
    Children,
}

// ---------------------------------------------------------------------------------------------
// Internal structures

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    Enter,
    Attempt,
    WaitDone,
    Sleeping(i64),
    Task,
    Joining(usize),
    Done,
}

#[derive(Debug)]
pub(super) struct Thread {
    pub scope: ScopeId,
    pub state: usize,
    /// Shared with the history events that record it (`HistoryEvent::payload`).
    pub input: Arc<Value>,
    pub entered_ms: i64,
    /// Id of this visit's `...StateEntered` event, which AWS quotes in runtime-error causes.
    pub entered_event: u32,
    pub retry_counts: Vec<u32>,
    pub retry_total: u32,
    pub step: Step,
    pub parent: Option<(usize, usize)>,
    pub epoch: u64,
    pub token: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JoinKind {
    Map,
    Parallel,
}

#[derive(Debug)]
pub(super) struct Join {
    pub kind: JoinKind,
    pub parent: usize,
    pub items: Vec<Value>,
    pub next_item: usize,
    pub results: Vec<Value>,
    pub done: usize,
    pub active: Vec<usize>,
    pub max_concurrency: usize,
    pub processor: ScopeId,
    /// The Map state's effective input, which ItemSelector reads.
    pub selector_input: Value,
    pub finished: bool,
}

#[derive(Debug)]
pub(super) struct Execution {
    pub arn: String,
    pub name: String,
    pub machine: usize,
    pub program: Arc<Program>,
    pub input: Value,
    pub status: ExecutionStatus,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    pub output: Option<Value>,
    pub error: Option<String>,
    pub cause: Option<String>,
    pub redrive_count: u32,
    pub redrive_ms: Option<i64>,
    pub history: Vec<HistoryEvent>,
    pub threads: Vec<Thread>,
    pub joins: Vec<Join>,
    pub transitions: u64,
    pub epoch: u64,
    /// Set when an event was refused because the history would pass its quota.
    pub overflow: bool,
}

#[derive(Debug)]
pub(super) struct Machine {
    pub name: String,
    pub arn: String,
    pub definition: Arc<StateMachine>,
    pub program: Arc<Program>,
    pub executions: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TokenState {
    Open,
    Closed,
}

#[derive(Debug)]
pub(super) struct TokenEntry {
    pub exec: usize,
    pub thread: usize,
    pub state: TokenState,
    pub heartbeat_ms: Option<i64>,
    pub heartbeat_epoch: u32,
}

#[derive(Debug)]
pub(super) enum TimerKind {
    Wake {
        exec: usize,
        thread: usize,
        epoch: u64,
        step: Step,
    },
    TaskTimeout {
        token: String,
    },
    Heartbeat {
        token: String,
        epoch: u32,
    },
    ExecTimeout {
        exec: usize,
        epoch: u64,
    },
    Callback(Callback),
}

#[derive(Debug)]
pub(super) struct Timer {
    pub at: i64,
    pub seq: u64,
    pub kind: TimerKind,
}

impl PartialEq for Timer {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timer {
    /// Reversed so `BinaryHeap` pops the earliest; ties go to the older timer.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// A deterministic, virtual-time Step Functions (Standard, JSONPath) interpreter.
pub struct Engine {
    pub(super) clock: Clock,
    pub(super) rng: Rng,
    pub(super) machines: Vec<Machine>,
    pub(super) machine_index: FastMap<String, usize>,
    pub(super) execs: Vec<Execution>,
    pub(super) exec_index: FastMap<String, usize>,
    pub(super) queue: VecDeque<(usize, usize, u64)>,
    pub(super) timers: BinaryHeap<Timer>,
    pub(super) seq: u64,
    pub(super) tokens: FastMap<String, TokenEntry>,
    pub(super) trace: Vec<(u32, u32)>,
    pub(super) rejected: Vec<(Callback, SfnError)>,
    pub(super) record_payloads: bool,
    pub(super) builtin_integrations: bool,
    /// Most history events, across every execution, the engine writes before it stops running
    /// anything (`None`: no limit).
    pub(super) event_budget: Option<usize>,
}

impl Engine {
    pub fn new(start_ms: i64, seed: u64) -> Self {
        Engine {
            clock: Clock::new(start_ms),
            rng: Rng::new(seed),
            machines: Vec::new(),
            machine_index: FastMap::default(),
            execs: Vec::new(),
            exec_index: FastMap::default(),
            queue: VecDeque::new(),
            timers: BinaryHeap::new(),
            seq: 0,
            tokens: FastMap::default(),
            trace: Vec::new(),
            rejected: Vec::new(),
            record_payloads: true,
            builtin_integrations: true,
            event_budget: None,
        }
    }

    /// Caps the history events the engine writes across all executions: once reached, nothing
    /// runs any more and [`Engine::budget_spent`] is true. A definition that loops without
    /// sleeping (or starts itself again at once) would otherwise keep the engine busy at one
    /// virtual instant for ever; each execution's own 25,000-event cap does not stop new ones.
    pub fn set_event_budget(&mut self, events: Option<usize>) {
        self.event_budget = events;
    }

    /// Whether the event budget is spent: runs stop where they are.
    pub fn budget_spent(&self) -> bool {
        self.event_budget.is_some_and(|b| self.trace.len() >= b)
    }

    /// Whether history events carry state inputs/outputs and task parameters (default on).
    /// Turning it off makes long runs cheaper; event types, names and errors are kept.
    pub fn set_record_payloads(&mut self, on: bool) {
        self.record_payloads = on;
    }

    /// Whether the engine answers Step Functions' own integrations (nested StartExecution, the
    /// `aws-sdk:sfn:` calls) itself (default on). Off, they go to the task handler like any
    /// other resource: a replay of a recorded execution feeds them what the recording holds.
    pub fn set_builtin_integrations(&mut self, on: bool) {
        self.builtin_integrations = on;
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    // --- state machines -----------------------------------------------------------------

    /// Registers a machine. Same name and same definition again is a no-op returning the same
    /// ARN (CreateStateMachine idempotency); a different definition is
    /// `StateMachineAlreadyExists`.
    pub fn create_state_machine(
        &mut self,
        name: &str,
        definition: StateMachine,
    ) -> Result<String, SfnError> {
        let arn = match self.new_machine_arn(name, &definition)? {
            MachineArn::New(arn) => arn,
            MachineArn::Registered(existing) => return Ok(existing),
        };
        let program = Arc::new(Program::compile(&definition)?);
        Ok(self.add_machine(name, arn, Arc::new(definition), program))
    }

    /// [`Engine::create_state_machine`] for a definition that many engines register (a harness
    /// deploying the same release into one fresh engine per scenario): the definition is copied
    /// and compiled once per thread, not once per engine. Same answers, same errors, in the
    /// same order.
    pub fn create_state_machine_shared(
        &mut self,
        name: &str,
        definition: &StateMachine,
    ) -> Result<String, SfnError> {
        let arn = match self.new_machine_arn(name, definition)? {
            MachineArn::New(arn) => arn,
            MachineArn::Registered(existing) => return Ok(existing),
        };
        let (program, definition) = super::program::shared(definition)?;
        Ok(self.add_machine(name, arn, definition, program))
    }

    /// The ARN a new machine gets, or that of the same machine registered before (the
    /// idempotent answer).
    fn new_machine_arn(
        &self,
        name: &str,
        definition: &StateMachine,
    ) -> Result<MachineArn, SfnError> {
        validate_name(name)?;
        let arn = state_machine_arn(name);
        match self.machine_index.get(&arn) {
            None => Ok(MachineArn::New(arn)),
            Some(&i) if *self.machines[i].definition == *definition => {
                Ok(MachineArn::Registered(arn))
            }
            Some(_) => Err(SfnError::StateMachineAlreadyExists(format!(
                "State Machine Already Exists: '{arn}'"
            ))),
        }
    }

    fn add_machine(
        &mut self,
        name: &str,
        arn: String,
        definition: Arc<StateMachine>,
        program: Arc<Program>,
    ) -> String {
        self.machine_index.insert(arn.clone(), self.machines.len());
        self.machines.push(Machine {
            name: name.to_string(),
            arn: arn.clone(),
            definition,
            program,
            executions: Vec::new(),
        });
        arn
    }

    /// Replaces a machine's definition; running executions keep the one they started with.
    pub fn update_state_machine(
        &mut self,
        arn: &str,
        definition: StateMachine,
    ) -> Result<(), SfnError> {
        let &i = self
            .machine_index
            .get(arn)
            .ok_or_else(|| SfnError::StateMachineDoesNotExist(arn.to_string()))?;
        self.machines[i].program = Arc::new(Program::compile(&definition)?);
        self.machines[i].definition = Arc::new(definition);
        Ok(())
    }

    // --- executions ----------------------------------------------------------------------

    /// StartExecution (Standard). Same name and same input while the first is RUNNING returns
    /// the first; otherwise a reused name is `ExecutionAlreadyExists` (AWS StartExecution).
    pub fn start_execution(
        &mut self,
        machine_arn: &str,
        name: &str,
        input: Value,
    ) -> Result<StartResult, SfnError> {
        let &m = self
            .machine_index
            .get(machine_arn)
            .ok_or_else(|| SfnError::StateMachineDoesNotExist(machine_arn.to_string()))?;
        validate_name(name)?;
        let arn = execution_arn(&self.machines[m].name, name);
        if let Some(&e) = self.exec_index.get(&arn) {
            let x = &self.execs[e];
            return if x.status == ExecutionStatus::Running && x.input == input {
                Ok(StartResult {
                    execution_arn: arn,
                    start_ms: x.start_ms,
                })
            } else {
                Err(SfnError::ExecutionAlreadyExists(format!(
                    "Execution Already Exists: '{arn}'"
                )))
            };
        }
        if json_size(&input) > MAX_PAYLOAD_BYTES {
            return Err(SfnError::InvalidExecutionInput(
                "input exceeds 262144 bytes".into(),
            ));
        }
        let now = self.now_ms();
        let program = self.machines[m].program.clone();
        let start = program.scopes[0].start;
        let e = self.execs.len();
        self.execs.push(Execution {
            arn: arn.clone(),
            name: name.to_string(),
            machine: m,
            program: program.clone(),
            input: input.clone(),
            status: ExecutionStatus::Running,
            start_ms: now,
            stop_ms: None,
            output: None,
            error: None,
            cause: None,
            redrive_count: 0,
            redrive_ms: None,
            history: Vec::new(),
            threads: vec![Thread {
                scope: 0,
                state: start,
                input: Arc::new(Value::Null),
                entered_ms: now,
                entered_event: 0,
                retry_counts: Vec::new(),
                retry_total: 0,
                step: Step::Enter,
                parent: None,
                epoch: 0,
                token: None,
            }],
            joins: Vec::new(),
            transitions: 0,
            epoch: 0,
            overflow: false,
        });
        self.exec_index.insert(arn.clone(), e);
        self.machines[m].executions.push(e);
        let details = json!({"stateMachineArn": &self.machines[m].arn});
        let input = Arc::new(input);
        let payload = self
            .record_payloads
            .then(|| Payload::new("input", 0, &input));
        self.execs[e].threads[0].input = input;
        self.emit_with(e, "ExecutionStarted", None, details, payload);
        self.arm_execution_timeout(e);
        self.enqueue(e, 0);
        Ok(StartResult {
            execution_arn: arn,
            start_ms: now,
        })
    }

    /// StopExecution: a RUNNING execution becomes ABORTED. Stopping a closed one changes nothing.
    pub fn stop_execution(
        &mut self,
        arn: &str,
        error: Option<&str>,
        cause: Option<&str>,
    ) -> Result<i64, SfnError> {
        let e = self.exec_idx(arn)?;
        if self.execs[e].status == ExecutionStatus::Running {
            let mut d = serde_json::Map::new();
            if let Some(er) = error {
                d.insert("error".into(), json!(er));
            }
            if let Some(c) = cause {
                d.insert("cause".into(), json!(c));
            }
            self.emit(e, "ExecutionAborted", None, Value::Object(d));
            self.close(
                e,
                ExecutionStatus::Aborted,
                error.map(str::to_string),
                cause.map(str::to_string),
                None,
            );
        }
        self.prune_timers();
        Ok(self.execs[e].stop_ms.unwrap_or(self.now_ms()))
    }

    /// RedriveExecution: a FAILED/ABORTED/TIMED_OUT execution resumes, under the same ARN, at
    /// the top-level state where it stopped, with that state's original input. States that
    /// succeeded are not rerun; the machine-level timeout restarts (AWS "Redriving executions").
    pub fn redrive_execution(&mut self, arn: &str) -> Result<i64, SfnError> {
        let e = self.exec_idx(arn)?;
        let now = self.now_ms();
        let x = &self.execs[e];
        match x.status {
            ExecutionStatus::Failed | ExecutionStatus::Aborted | ExecutionStatus::TimedOut => {}
            s => {
                return Err(SfnError::ExecutionNotRedrivable(format!(
                    "Execution is {}",
                    s.as_str()
                )))
            }
        }
        if x.history.len() >= MAX_HISTORY_EVENTS - 1 {
            return Err(SfnError::ExecutionNotRedrivable(
                "Execution history event limit exceeded".into(),
            ));
        }
        if x.stop_ms.is_some_and(|s| now - s > REDRIVE_WINDOW_MS) {
            return Err(SfnError::ExecutionNotRedrivable(
                "Execution redrivable period exceeded".into(),
            ));
        }
        let x = &mut self.execs[e];
        x.status = ExecutionStatus::Running;
        x.redrive_count += 1;
        x.redrive_ms = Some(now);
        x.stop_ms = None;
        x.output = None;
        x.error = None;
        x.cause = None;
        x.epoch += 1;
        let rc = x.redrive_count;
        let root = &mut x.threads[0];
        root.step = Step::Enter;
        root.epoch += 1;
        self.emit(e, "ExecutionRedriven", None, json!({"redriveCount": rc}));
        self.arm_execution_timeout(e);
        self.enqueue(e, 0);
        Ok(now)
    }

    pub fn send_task_success(&mut self, token: &str, output: Value) -> Result<(), SfnError> {
        if json_size(&output) > MAX_PAYLOAD_BYTES {
            return Err(SfnError::InvalidOutput(
                "output exceeds 262144 bytes".into(),
            ));
        }
        let (e, t) = self.take_token(token)?;
        self.complete_task(e, t, Ok(output));
        self.after_external(e);
        Ok(())
    }

    pub fn send_task_failure(
        &mut self,
        token: &str,
        error: &str,
        cause: &str,
    ) -> Result<(), SfnError> {
        let (e, t) = self.take_token(token)?;
        self.complete_task(e, t, Err(StateError::reported(error, cause)));
        self.after_external(e);
        Ok(())
    }

    /// SendTaskHeartbeat: restarts the heartbeat clock; writes no history event.
    pub fn send_task_heartbeat(&mut self, token: &str) -> Result<(), SfnError> {
        let now = self.now_ms();
        let entry = self.token_entry(token)?;
        if let Some(hb) = entry.heartbeat_ms {
            entry.heartbeat_epoch += 1;
            let epoch = entry.heartbeat_epoch;
            self.push_timer(
                now + hb,
                TimerKind::Heartbeat {
                    token: token.to_string(),
                    epoch,
                },
            );
        }
        self.prune_timers();
        Ok(())
    }

    /// Delivers a callback at `at_ms` of virtual time (or at the next run if that has passed).
    pub fn schedule_callback(&mut self, at_ms: i64, callback: Callback) {
        self.push_timer(at_ms, TimerKind::Callback(callback));
    }

    /// Callbacks (scheduled or deferred by the handler) that the engine refused, with why.
    pub fn rejected_callbacks(&self) -> &[(Callback, SfnError)] {
        &self.rejected
    }

    // --- internals shared with run/ and builtins.rs ----------------------------------------

    pub(super) fn exec_idx(&self, arn: &str) -> Result<usize, SfnError> {
        self.exec_index.get(arn).copied().ok_or_else(|| {
            SfnError::ExecutionDoesNotExist(format!("Execution Does Not Exist: '{arn}'"))
        })
    }

    fn token_entry(&mut self, token: &str) -> Result<&mut TokenEntry, SfnError> {
        match self.tokens.get_mut(token) {
            None => Err(SfnError::InvalidToken(format!("Invalid token: '{token}'"))),
            // AWS answers a token whose task already closed (completed, timed out, or its
            // execution ended) with TaskTimedOut ("Task Timed Out: 'Provided task does not
            // exist anymore'"); InvalidToken is for tokens it never issued.
            Some(t) if t.state == TokenState::Closed => Err(SfnError::TaskTimedOut(
                "Task Timed Out: 'Provided task does not exist anymore'".into(),
            )),
            Some(t) => Ok(t),
        }
    }

    /// Closes an open token and returns the thread it completes.
    pub(super) fn take_token(&mut self, token: &str) -> Result<(usize, usize), SfnError> {
        let entry = self.token_entry(token)?;
        entry.state = TokenState::Closed;
        Ok((entry.exec, entry.thread))
    }

    pub(super) fn enqueue(&mut self, e: usize, t: usize) {
        let epoch = self.execs[e].threads[t].epoch;
        self.queue.push_back((e, t, epoch));
    }

    pub(super) fn push_timer(&mut self, at: i64, kind: TimerKind) {
        self.seq += 1;
        self.timers.push(Timer {
            at,
            seq: self.seq,
            kind,
        });
    }

    fn timer_live(&self, kind: &TimerKind) -> bool {
        match kind {
            TimerKind::Wake {
                exec,
                thread,
                epoch,
                ..
            } => {
                let x = &self.execs[*exec];
                x.status == ExecutionStatus::Running && x.threads[*thread].epoch == *epoch
            }
            TimerKind::TaskTimeout { token } => self
                .tokens
                .get(token)
                .is_some_and(|t| t.state == TokenState::Open),
            TimerKind::Heartbeat { token, epoch } => self
                .tokens
                .get(token)
                .is_some_and(|t| t.state == TokenState::Open && t.heartbeat_epoch == *epoch),
            TimerKind::ExecTimeout { exec, epoch } => {
                let x = &self.execs[*exec];
                x.status == ExecutionStatus::Running && x.epoch == *epoch
            }
            TimerKind::Callback(_) => true,
        }
    }

    /// Drops dead timers from the top of the heap so `next_timer` only reports live ones.
    pub(super) fn prune_timers(&mut self) {
        while let Some(t) = self.timers.peek() {
            if self.timer_live(&t.kind) {
                break;
            }
            self.timers.pop();
        }
    }

    fn fire(&mut self, kind: TimerKind) {
        if !self.timer_live(&kind) {
            return;
        }
        match kind {
            TimerKind::Wake {
                exec, thread, step, ..
            } => {
                self.execs[exec].threads[thread].step = step;
                self.enqueue(exec, thread);
            }
            TimerKind::TaskTimeout { token } => self.time_out_task(&token, false),
            TimerKind::Heartbeat { token, .. } => self.time_out_task(&token, true),
            TimerKind::ExecTimeout { exec, .. } => {
                self.emit(
                    exec,
                    "ExecutionTimedOut",
                    None,
                    json!({"error": "States.Timeout"}),
                );
                // DescribeExecution of a timed-out execution has no error and no cause on
                // AWS (recorded); the status says it all.
                self.close(exec, ExecutionStatus::TimedOut, None, None, None);
            }
            TimerKind::Callback(cb) => {
                let r = match &cb {
                    Callback::Success { token, output } => {
                        self.send_task_success(token, output.clone())
                    }
                    Callback::Failure {
                        token,
                        error,
                        cause,
                    } => self.send_task_failure(token, error, cause),
                    Callback::Heartbeat { token } => self.send_task_heartbeat(token),
                };
                if let Err(err) = r {
                    self.rejected.push((cb, err));
                }
            }
        }
    }

    fn time_out_task(&mut self, token: &str, heartbeat: bool) {
        let Ok((e, t)) = self.take_token(token) else {
            return;
        };
        // AWS gives a timed-out task no cause: its events leave the field out and a Catch
        // writes "" (recorded), for a missed heartbeat too.
        let mut err = StateError::new(super::error::TIMEOUT, "");
        err.heartbeat = heartbeat;
        self.complete_task(e, t, Err(err));
        self.after_external(e);
    }

    fn arm_execution_timeout(&mut self, e: usize) {
        if let Some(s) = self.execs[e].program.timeout_seconds {
            let at = self
                .now_ms()
                .saturating_add((s as i64).saturating_mul(1000));
            let epoch = self.execs[e].epoch;
            self.push_timer(at, TimerKind::ExecTimeout { exec: e, epoch });
        }
    }

    /// Ends the execution after an event that overflowed the history quota was refused.
    pub(super) fn after_external(&mut self, e: usize) {
        let x = &self.execs[e];
        if x.overflow && x.status == ExecutionStatus::Running {
            self.fail_execution(
                e,
                StateError::runtime(
                    "The execution reached the maximum number of history events (25000).",
                ),
            );
        }
    }

    pub(super) fn fail_execution(&mut self, e: usize, err: StateError) {
        self.emit(
            e,
            "ExecutionFailed",
            None,
            Value::Object(err.event_details()),
        );
        // AWS leaves an empty error or cause out of DescribeExecution as well (recorded: a
        // Fail state without Error/Cause).
        let some = |s: String| (!s.is_empty()).then_some(s);
        self.close(
            e,
            ExecutionStatus::Failed,
            some(err.error),
            some(err.cause),
            None,
        );
    }

    /// Closes an execution: every live thread stops and every open token closes.
    pub(super) fn close(
        &mut self,
        e: usize,
        status: ExecutionStatus,
        error: Option<String>,
        cause: Option<String>,
        output: Option<Value>,
    ) {
        let now = self.now_ms();
        let x = &mut self.execs[e];
        x.status = status;
        x.stop_ms = Some(now);
        x.error = error;
        x.cause = cause;
        x.output = output;
        x.epoch += 1;
        // Threads and joins are kept (indices stay unique across a redrive), only stopped.
        for th in &mut x.threads {
            th.epoch += 1;
            th.step = Step::Done;
            if let Some(tok) = th.token.take() {
                if let Some(entry) = self.tokens.get_mut(&tok) {
                    entry.state = TokenState::Closed;
                }
            }
        }
        for j in &mut x.joins {
            j.finished = true;
        }
    }

    /// Appends a history event, enforcing the 25,000-event quota: only a terminal event may be
    /// number 25,000, so a non-terminal one that would land there is refused and the
    /// execution is failed by `after_external`.
    pub(super) fn emit(&mut self, e: usize, ty: &'static str, state: Option<&str>, details: Value) {
        self.emit_with(e, ty, state, details, None)
    }

    pub(super) fn emit_with(
        &mut self,
        e: usize,
        ty: &'static str,
        state: Option<&str>,
        details: Value,
        payload: Option<Payload>,
    ) {
        let now = self.clock.now_ms();
        let x = &mut self.execs[e];
        if x.overflow && !super::history::is_terminal(ty) {
            return;
        }
        if !super::history::is_terminal(ty) && x.history.len() >= MAX_HISTORY_EVENTS - 1 {
            x.overflow = true;
            return;
        }
        let id = x.history.len() as u32 + 1;
        x.history.push(HistoryEvent {
            id,
            previous_event_id: id - 1,
            timestamp_ms: now,
            event_type: ty,
            state_name: state.map(str::to_string),
            details,
            payload,
        });
        self.trace.push((e as u32, id - 1));
    }

    pub(super) fn drain_deferred(&mut self, handler: &mut dyn TaskHandler) {
        for Deferred { at_ms, callback } in handler.deferred() {
            self.schedule_callback(at_ms, callback);
        }
    }
}

/// What `CreateStateMachine` finds under a name.
enum MachineArn {
    /// Nothing: the machine gets this ARN.
    New(String),
    /// The same definition under this ARN: created before, answered again.
    Registered(String),
}

/// Execution and state machine names (AWS StartExecution "name"): 1–80 characters, none of
/// whitespace, `< > { } [ ] ? * " # % \ ^ | ~ ` $ & , ; : /` or control characters.
pub fn validate_name(name: &str) -> Result<(), SfnError> {
    let n = name.chars().count();
    let bad = name.chars().find(|&c| {
        c.is_whitespace()
            || "<>{}[]?*\"#%\\^|~`$&,;:/".contains(c)
            || (c as u32) < 0x20
            || (0x7f..=0x9f).contains(&(c as u32))
            || c == '\u{fffe}'
            || c == '\u{ffff}'
    });
    if n == 0 || n > 80 || bad.is_some() {
        return Err(SfnError::InvalidName(format!("Invalid Name: '{name}'")));
    }
    Ok(())
}
