//! The runner every backend shares: TPF as the scenario sets it up, the first submission, the
//! scenario's actions fired when their conditions hold, the clock advanced to the horizon or to
//! quiescence, and the expectations checked. What an engine answers its own way (its world, its
//! budgets, whether a driver failed or still runs, the operator's acts on drivers, the metrics)
//! is its [`Runner`]: `crate::sfn::run`.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use tpf_model::actions::ActionHost;
use tpf_model::coordinator::{
    local_release, Coordinator, CoordinatorConfig, CoordinatorError, IdempotencyPolicy,
    ItemContinuations,
};
use tpf_model::store::InMemoryStore;
use tpf_model::worker::{PipelineDef, ScriptedWorker, StepOutcome};
use tpf_wire::records::ExecutionStatus as TpfStatus;

use super::matrix::AWAIT_TIMEOUT_S;
use super::model::{Do, ItemContinuationMode, Scenario, When};
use crate::harness::actors;
use crate::harness::trace::{Entry, Trace};
use crate::harness::world::{World, WorldEngine};
use crate::subject::{pipeline_of, NextRelease, Program, Subject};
use tpf_wire::Identity;

/// 2026-01-01T00:00:00Z: every scenario starts at the same virtual instant.
pub const START_MS: i64 = 1_767_225_600_000;
pub const TENANT: &str = "tenant-a";
pub(crate) const FIRST_KEY: &str = "order-1";

/// Why a scenario could not run at all: no verdict about the driver, a fault of the scenario or
/// of the harness.
#[derive(Debug)]
pub enum RunError {
    /// The scenario scripts a step the contract does not have.
    UnknownStep { scenario: String, step: String },
    /// TPF refused to register or activate the subject's release.
    Release(CoordinatorError),
    /// The engine refused the release's program.
    Deploy(Box<dyn std::error::Error + Send + Sync>),
    /// The engine failed an execution for a reason of its own: a bug of this harness.
    Engine {
        /// Which engine, as the message names it.
        engine: &'static str,
        execution: String,
        error: String,
        cause: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::UnknownStep { scenario, step } => {
                write!(f, "scenario {scenario}: no step named {step:?}")
            }
            RunError::Release(e) => write!(f, "{e}"),
            RunError::Deploy(e) => write!(f, "{e}"),
            RunError::Engine {
                engine,
                execution,
                error,
                cause,
            } => write!(
                f,
                "the {engine} engine failed {execution}: {error}: {cause}"
            ),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Release(e) => Some(e),
            RunError::Deploy(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// Driver state entries, all generations of the first execution.
    pub state_transitions: u64,
    pub history_events: u64,
    /// Action call deliveries made by drivers (process-work-item).
    pub action_calls: u64,
    pub generations: u32,
    pub lineages: u32,
    /// Most history events of any one generation.
    pub max_generation_events: u64,
    pub sweeper_transitions: u64,
    pub simulated_seconds: f64,
    /// Child executions that carried the execution's items through an itemized await.
    pub item_executions: u32,
    /// Driver state entries and history events of those children, all generations.
    pub item_state_transitions: u64,
    pub item_history_events: u64,
    /// Lambda durable functions only: operations as the service bills them (a step 1, a wait 1,
    /// a callback 3), all generations of the first execution.
    #[serde(skip_serializing_if = "is_zero")]
    pub operations: u64,
    /// Lambda durable functions only: invocations of the driver function (each replays the
    /// generation's checkpoints from its start).
    #[serde(skip_serializing_if = "is_zero")]
    pub invocations: u64,
    /// Lambda durable functions only: most operations of any one generation.
    #[serde(skip_serializing_if = "is_zero")]
    pub max_generation_operations: u64,
    /// Lambda durable functions only: checkpointed operations replayed instead of run.
    #[serde(skip_serializing_if = "is_zero")]
    pub replayed_operations: u64,
    /// Lambda durable functions only: operations of the item children's drivers.
    #[serde(skip_serializing_if = "is_zero")]
    pub item_operations: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub(crate) fn outcome(text: &str) -> StepOutcome {
    match text.split_once(':') {
        Some(("fail-retryable", code)) => StepOutcome::FailRetryable(code.to_string()),
        Some(("fail-non-retryable", code)) => StepOutcome::FailNonRetryable(code.to_string()),
        Some(("remote-outcome-unknown", code)) => StepOutcome::OutcomeUnknown(code.to_string()),
        _ if text == "park" => StepOutcome::Park,
        _ => StepOutcome::Complete,
    }
}

pub(crate) fn pipeline<P>(subject: &Subject<P>, scenario: &Scenario) -> Arc<PipelineDef> {
    if scenario.await_timeout_seconds == AWAIT_TIMEOUT_S {
        subject.pipeline.clone()
    } else {
        Arc::new(pipeline_of(
            &subject.contract,
            scenario.await_timeout_seconds,
        ))
    }
}

/// TPF as the scenario sets it up, with the subject's release registered and active: the same
/// for every engine.
pub(crate) fn build_host<P>(
    subject: &Subject<P>,
    scenario: &Scenario,
) -> Result<ActionHost<InMemoryStore>, RunError> {
    let identity = subject.plan.identity.clone();
    let mut worker = ScriptedWorker::new(identity.clone());
    if let Some(next) = &subject.next_release {
        worker = worker.hosting(next.identity.clone());
    }
    for script in &scenario.worker {
        let index = subject
            .contract
            .steps
            .iter()
            .find(|s| s.authored_name == script.step)
            .map(|s| s.index)
            .ok_or_else(|| RunError::UnknownStep {
                scenario: scenario.name.clone(),
                step: script.step.clone(),
            })?;
        worker.set_script(index, script.outcomes.iter().map(|o| outcome(o)).collect());
    }
    let mut config = CoordinatorConfig {
        // Queue mode with strict startup needs an explicit policy; the actors always send a key.
        idempotency_policy: IdempotencyPolicy::ClientKeyRequired,
        item_continuations: match scenario.tpf.item_continuations {
            ItemContinuationMode::Durable => ItemContinuations::Durable,
            ItemContinuationMode::InProcess => ItemContinuations::InProcess,
        },
        process_applies_await_deadline: scenario.tpf.process_applies_await_deadline,
        ..CoordinatorConfig::default()
    };
    if let Some(r) = scenario.retries {
        config.max_retries = r.max_retries;
        config.retry_delay_ms = r.delay_seconds as i64 * 1000;
        config.retry_multiplier = r.multiplier;
    }
    let coordinator = Coordinator::with_config(
        InMemoryStore::new(),
        pipeline(subject, scenario),
        worker,
        config,
    );
    let mut host = ActionHost::new(coordinator);
    let c = host.coordinator_mut();
    c.register_release(&local_release(TENANT, &identity, START_MS))
        .map_err(RunError::Release)?;
    c.activate_release(
        TENANT,
        &identity.pipeline_id,
        &identity.release_version,
        START_MS,
    )
    .map_err(RunError::Release)?;
    Ok(host)
}

/// TPF's status of `exec` now, whatever engine drives it.
pub(crate) fn tpf_status(
    host: &ActionHost<InMemoryStore>,
    now_ms: i64,
    exec: &str,
) -> Option<TpfStatus> {
    host.coordinator()
        .status(TENANT, exec, now_ms)
        .ok()
        .map(|r| r.status)
}

/// The child executions that carried `exec`'s items, oldest first, read from TPF alone,
/// whatever engine drives them.
pub(crate) fn item_children(
    host: &ActionHost<InMemoryStore>,
    now_ms: i64,
    exec: &str,
) -> Vec<String> {
    host.coordinator()
        .item_children(TENANT, exec, now_ms)
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.execution_id)
        .collect()
}

/// The process-work-item deliveries the drivers of `exec` (its generations and lineages) made.
pub(crate) fn action_calls(trace: &Trace, exec: &str) -> u64 {
    trace
        .entries
        .iter()
        .filter(|e| matches!(e, Entry::Call { action, execution, .. } if action == "process-work-item" && execution.starts_with(exec)))
        .count() as u64
}

/// What the scenario expected of TPF's record and the metrics, and did not get.
pub(crate) fn expectations(
    s: &Scenario,
    host: &ActionHost<InMemoryStore>,
    now_ms: i64,
    exec: &str,
    m: &Metrics,
) -> Vec<String> {
    let mut unmet = Vec::new();
    let record = host.coordinator().status(TENANT, exec, now_ms).ok();
    if let Some(want) = &s.expect.tpf_status {
        let got = record
            .as_ref()
            .map(|r| r.status.to_string())
            .unwrap_or_else(|| "missing".into());
        if &got != want {
            unmet.push(format!("expected TPF status {want}, got {got}"));
        }
    }
    if let Some(want) = &s.expect.error_code {
        let got = record
            .as_ref()
            .and_then(|r| r.error_code.clone())
            .unwrap_or_default();
        if &got != want {
            unmet.push(format!("expected TPF errorCode {want}, got {got:?}"));
        }
    }
    if let Some(min) = s.expect.min_generations {
        if m.generations < min {
            unmet.push(format!(
                "expected at least {min} driver generations, got {}",
                m.generations
            ));
        }
    }
    if let Some(max) = s.expect.max_action_calls {
        if m.action_calls > max {
            unmet.push(format!(
                "expected at most {max} process-work-item calls, got {}",
                m.action_calls
            ));
        }
    }
    if let Some(want) = s.expect.item_executions {
        if m.item_executions != want {
            unmet.push(format!(
                "expected {want} item child execution(s), got {}",
                m.item_executions
            ));
        }
    }
    if let Some(want) = s.expect.lineages {
        if m.lineages != want {
            unmet.push(format!(
                "expected {want} driver lineage(s), got {}",
                m.lineages
            ));
        }
    }
    unmet
}

/// A backend's part of running a scenario, implemented by its program type.
pub trait Runner: Program + Sized {
    /// The engine the program runs on.
    type Engine: WorldEngine;
    /// The static checks' verdict on the program, shared by every scenario of a matrix.
    type Verdict: Clone;
    /// The hard budgets of one run on this engine.
    type Budget;

    /// A fresh engine with `host` and the subject's release deployed.
    fn world(
        subject: &Subject<Self>,
        host: ActionHost<InMemoryStore>,
        scenario: &Scenario,
        seed: u64,
    ) -> Result<World<Self::Engine>, RunError>;

    fn budget(subject: &Subject<Self>, scenario: &Scenario) -> Self::Budget;

    /// Sets the engine's fences from the budget; `payloads` keeps state payloads in histories
    /// where the engine has them.
    fn fence(world: &mut World<Self::Engine>, budget: &Self::Budget, payloads: bool);

    /// Deploys the second release's program next to the first.
    fn deploy(world: &mut World<Self::Engine>, next: &NextRelease<Self>) -> Result<(), RunError>;

    /// Whether the newest driver of `exec` failed.
    fn driver_failed(world: &World<Self::Engine>, exec: &str) -> bool;

    /// Whether a driver of `exec` still runs (asleep, or parked).
    fn driver_running(world: &World<Self::Engine>, exec: &str) -> bool;

    /// An operator stops the running driver of `exec`; what the trace says.
    fn abort_driver(world: &mut World<Self::Engine>, exec: &str) -> String;

    /// A faulty bridge starts a second driver for `exec`; what the trace says.
    fn start_extra_driver(world: &mut World<Self::Engine>, exec: &str) -> String;

    /// An operator redrives the failed driver of `exec` in the console; what the trace says.
    fn console_redrive(world: &mut World<Self::Engine>, exec: &str) -> String;

    /// A failure of the harness itself, after which the run has no verdict.
    fn harness_fault(world: &World<Self::Engine>) -> Option<RunError>;

    fn measure(world: &World<Self::Engine>, exec: &str) -> Metrics;
}

/// One scenario's outcome. It borrows the subject it ran: a matrix runs every scenario on the
/// same subject, and a copy of its program and contract per run cost as much as the run.
pub struct Run<'s, P: Runner> {
    pub scenario: Scenario,
    pub subject: &'s Subject<P>,
    pub world: World<P::Engine>,
    pub identity: Identity,
    pub execution_id: Option<String>,
    pub metrics: Metrics,
    /// Scenario expectations that did not hold (separate from invariant violations).
    pub unmet: Vec<String>,
    pub budget: P::Budget,
    /// The engine stopped at its budget: the trace ends where the budget ran out.
    pub budget_spent: bool,
    /// The static checks' verdict on the program, shared by every scenario of a matrix.
    pub verdict: P::Verdict,
}

/// TPF as the scenario sets it up, and the engine with the subject's release deployed and the
/// sweeper scheduled.
pub fn build_world<P: Runner>(
    subject: &Subject<P>,
    scenario: &Scenario,
    seed: u64,
) -> Result<World<P::Engine>, RunError> {
    let host = build_host(subject, scenario)?;
    let mut world = P::world(subject, host, scenario, seed)?;
    if let Some(every) = scenario.sweeper_every_seconds {
        world.schedule_sweeper(every as i64 * 1000);
    }
    Ok(world)
}

/// Runs `scenario` to quiescence or its horizon, with the program's verdict taken once for the
/// whole matrix.
pub fn run<'s, P: Runner>(
    subject: &'s Subject<P>,
    verdict: &P::Verdict,
    scenario: &Scenario,
    seed: u64,
    payloads: bool,
) -> Result<Run<'s, P>, RunError> {
    let mut world = build_world(subject, scenario, seed)?;
    let budget = P::budget(subject, scenario);
    P::fence(&mut world, &budget, payloads);
    let identity = subject.plan.identity.clone();
    let horizon = START_MS + scenario.horizon_seconds as i64 * 1000;

    for a in scenario
        .actions
        .iter()
        .filter(|a| a.act == Do::CompleteBeforePark)
    {
        world.hooks.complete_before_park = a
            .step
            .clone()
            .or_else(|| subject.plan.awaits.first().map(|p| p.authored_name.clone()));
    }
    world.hooks.lease_taken_first = scenario.actions.iter().any(|a| a.act == Do::TakeLeaseFirst);
    let (execution_id, entries) = actors::submit(
        &mut world.host,
        TENANT,
        &identity.pipeline_id,
        FIRST_KEY,
        START_MS,
    );
    world.push(entries);
    world.settle();

    // Each action fires once: when its condition first holds, after its delay.
    let mut due: Vec<Option<i64>> = vec![None; scenario.actions.len()];
    let mut done: Vec<bool> = scenario
        .actions
        .iter()
        .map(|a| matches!(a.act, Do::CompleteBeforePark | Do::TakeLeaseFirst))
        .collect();
    let exec = execution_id.clone().unwrap_or_default();
    let mut parks = ParkCount::default();
    loop {
        if world.engine.budget_spent() {
            break;
        }
        let now = world.now_ms();
        if due.iter().zip(&done).any(|(t, d)| !d && t.is_none()) {
            let facts = Facts {
                status: tpf_status(&world.host, now, &exec),
                parks: parks.update(&world.host, &exec),
            };
            for (i, a) in scenario.actions.iter().enumerate() {
                if done[i] || due[i].is_some() {
                    continue;
                }
                if condition::<P>(
                    &world,
                    &exec,
                    &facts,
                    a.when,
                    a.step.as_deref(),
                    a.nth.unwrap_or(1),
                ) {
                    due[i] = Some(now + a.after_seconds as i64 * 1000);
                }
            }
        }
        let mut fired = false;
        for (i, a) in scenario.actions.iter().enumerate() {
            if !done[i] && due[i].is_some_and(|t| t <= now) {
                done[i] = true;
                fired = true;
                perform(&mut world, subject, &exec, a.act);
            }
        }
        if fired {
            world.settle();
            continue;
        }
        let pending_action = due
            .iter()
            .zip(&done)
            .filter(|(_, d)| !**d)
            .filter_map(|(t, _)| *t)
            .min();
        if done.iter().all(|d| *d) && finished::<P>(&world, &exec) {
            break;
        }
        let next = [world.next_event_ms(), pending_action]
            .into_iter()
            .flatten()
            .min();
        match next {
            Some(t) if t <= horizon => world.advance_to(t.max(now)),
            _ => break,
        }
        if world.now_ms() == now && next.is_some_and(|t| t <= now) {
            // Nothing moved at this instant (a timer that did nothing): step past it.
            world.advance_to(now + 1);
        }
    }
    if let Some(e) = P::harness_fault(&world) {
        return Err(e);
    }
    let metrics = P::measure(&world, &exec);
    let budget_spent = world.engine.budget_spent();
    let unmet = expectations(scenario, &world.host, world.now_ms(), &exec, &metrics);
    Ok(Run {
        scenario: scenario.clone(),
        subject,
        world,
        identity,
        execution_id,
        metrics,
        unmet,
        budget,
        budget_spent,
        verdict: verdict.clone(),
    })
}

/// Parks of the execution so far, counted as the log grows: a scan of the whole log per
/// action per step made big contracts quadratic in their awaits.
#[derive(Default)]
struct ParkCount {
    cursor: usize,
    parks: u32,
}

impl ParkCount {
    fn update(&mut self, host: &ActionHost<InMemoryStore>, exec: &str) -> u32 {
        let log = host.coordinator().log().transitions();
        let fresh = log.get(self.cursor..).unwrap_or_default();
        self.parks += fresh
            .iter()
            .filter(|t| t.execution_id == exec && t.cause == "park")
            .count() as u32;
        self.cursor = log.len();
        self.parks
    }
}

/// What the actions' conditions read, taken once per step rather than once per action.
struct Facts {
    status: Option<TpfStatus>,
    parks: u32,
}

fn condition<P: Runner>(
    world: &World<P::Engine>,
    exec: &str,
    facts: &Facts,
    when: When,
    step: Option<&str>,
    nth: u32,
) -> bool {
    let status = facts.status;
    match when {
        When::Start => true,
        When::TpfFailed => status == Some(TpfStatus::Failed),
        When::TpfRemoteOutcomeUnknown => status == Some(TpfStatus::RemoteOutcomeUnknown),
        When::TpfWaitRetry => status == Some(TpfStatus::WaitRetry),
        When::DriverFailed => P::driver_failed(world, exec),
        When::Parked => {
            if status != Some(TpfStatus::WaitingExternal) {
                return false;
            }
            let c = world.host.coordinator();
            let at_step = step.is_none_or(|s| {
                c.status(TENANT, exec, world.now_ms())
                    .ok()
                    .and_then(|r| c.pipeline().step(r.current_step_index).map(|d| d.name == s))
                    .unwrap_or(false)
            });
            facts.parks >= nth && at_step
        }
    }
}

fn perform<P: Runner>(world: &mut World<P::Engine>, subject: &Subject<P>, exec: &str, act: Do) {
    let now = world.now_ms();
    let actor = |what: String| vec![Entry::Actor { at_ms: now, what }];
    match act {
        Do::CompleteAwait => {
            let e = actors::complete_await(&mut world.host, TENANT, exec, now, "reviewer");
            world.push(e);
        }
        Do::CompleteAwaitTwice => {
            let mut e = actors::complete_await(&mut world.host, TENANT, exec, now, "reviewer");
            e.extend(actors::complete_await(
                &mut world.host,
                TENANT,
                exec,
                now,
                "reviewer-retry",
            ));
            world.push(e);
        }
        Do::CompleteBeforePark | Do::TakeLeaseFirst => {}
        Do::SubmitDuplicate => {
            let (_, e) = actors::submit(
                &mut world.host,
                TENANT,
                &subject.plan.identity.pipeline_id,
                FIRST_KEY,
                now,
            );
            world.push(e);
        }
        Do::Redrive => {
            let e = actors::redrive(&mut world.host, TENANT, exec, now);
            world.push(e);
        }
        Do::ActivateNewRelease => {
            let Some(next) = &subject.next_release else {
                world.push(actor("no second release to activate".into()));
                return;
            };
            if let Err(e) = P::deploy(world, next) {
                world.push(actor(format!("deploy of the new release failed: {e}")));
                return;
            }
            let mut e = actors::activate(&mut world.host, TENANT, &next.identity, now);
            let (_, s) = actors::submit(
                &mut world.host,
                TENANT,
                &next.identity.pipeline_id,
                "order-2",
                now,
            );
            e.extend(s);
            world.push(e);
        }
        Do::AbortDriver => {
            let what = P::abort_driver(world, exec);
            world.push(actor(what));
        }
        Do::StartExtraDriver => {
            let what = P::start_extra_driver(world, exec);
            world.push(actor(what));
        }
        Do::ConsoleRedrive => {
            let what = P::console_redrive(world, exec);
            world.push(actor(what));
        }
    }
}

/// TPF is terminal and no driver of the execution, or of its item children, still runs.
fn finished<P: Runner>(world: &World<P::Engine>, exec: &str) -> bool {
    let now = world.now_ms();
    tpf_status(&world.host, now, exec).is_some_and(|s| s.terminal())
        && std::iter::once(exec.to_owned())
            .chain(item_children(&world.host, now, exec))
            .all(|e| !P::driver_running(world, &e))
}
