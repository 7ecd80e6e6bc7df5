//! Runs one scenario against one compiled release and measures it.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};
use tpf_sfn_compiler::contract::Contract;
use tpf_sfn_compiler::plan::DriverPlan;
use tpf_sfn_compiler::sfn::asl::StateMachine;
use tpf_sfn_compiler::sfn::SfnPlan;
use tpf_wire::Identity;

use super::budget::{self, Budget};
use super::matrix::AWAIT_TIMEOUT_S;
use super::model::{Do, ItemContinuationMode, Scenario, When};
use crate::harness::actors;
use crate::harness::trace::Entry;
use crate::harness::world::World;
use crate::invariants::Proven;
use asl_interp::engine::{Engine, ExecutionStatus};
use tpf_model::actions::ActionHost;
use tpf_model::coordinator::{
    local_release, Coordinator, CoordinatorConfig, IdempotencyPolicy, ItemContinuations,
};
use tpf_model::store::InMemoryStore;
use tpf_model::worker::{PipelineDef, ScriptedWorker, StepOutcome};
use tpf_wire::records::ExecutionStatus as TpfStatus;

/// 2026-01-01T00:00:00Z: every scenario starts at the same virtual instant.
pub const START_MS: i64 = 1_767_225_600_000;
pub const TENANT: &str = "tenant-a";
pub(crate) const FIRST_KEY: &str = "order-1";

/// One compiled release under test, plus a second release for "activated mid-flight".
#[derive(Debug, Clone)]
pub struct Subject {
    pub contract: Contract,
    pub plan: DriverPlan,
    /// The Step Functions lowering's names and budget for this release.
    pub sfn: SfnPlan,
    pub driver: StateMachine,
    pub sweeper: StateMachine,
    pub next_release: Option<NextRelease>,
    /// The TPF model's pipeline of `contract` at the matrix's await timeout, built once: every
    /// scenario's world runs on it, and building it per scenario was a visible part of a run.
    pub pipeline: Arc<PipelineDef>,
}

#[derive(Debug, Clone)]
pub struct NextRelease {
    pub identity: Identity,
    pub driver_name: String,
    pub driver: StateMachine,
    pub sweeper_name: String,
    pub sweeper: StateMachine,
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

/// One scenario's outcome. It borrows the subject it ran: a matrix runs every scenario on the
/// same subject, and a copy of its machines and contract per run cost as much as the run.
pub struct Run<'s> {
    pub scenario: Scenario,
    pub subject: &'s Subject,
    pub world: World,
    pub identity: Identity,
    pub execution_id: Option<String>,
    pub metrics: Metrics,
    /// Scenario expectations that did not hold (separate from invariant violations).
    pub unmet: Vec<String>,
    pub budget: Budget,
    /// The engine stopped at the event budget: the trace ends where the budget ran out.
    pub budget_spent: bool,
    /// The validator's verdict on the driver, shared by every scenario of a matrix.
    pub proven: Proven,
}

pub(crate) fn outcome(text: &str) -> StepOutcome {
    match text.split_once(':') {
        Some(("fail-retryable", code)) => StepOutcome::FailRetryable(code.to_string()),
        Some(("fail-non-retryable", code)) => StepOutcome::FailNonRetryable(code.to_string()),
        _ if text == "park" => StepOutcome::Park,
        _ => StepOutcome::Complete,
    }
}

/// Items a fanned-out stream carries into an itemized await.
pub const ITEMS_PER_STREAM: u32 = 3;

/// The TPF model's pipeline of `contract` with every await timing out after
/// `await_timeout_seconds`.
pub fn pipeline_of(contract: &Contract, await_timeout_seconds: u64) -> PipelineDef {
    let steps: Vec<_> = contract.steps.iter().map(|s| s.facts()).collect();
    PipelineDef::from_contract(
        &steps,
        ITEMS_PER_STREAM,
        await_timeout_seconds as i64 * 1000,
    )
}

pub(crate) fn pipeline(subject: &Subject, scenario: &Scenario) -> Arc<PipelineDef> {
    if scenario.await_timeout_seconds == AWAIT_TIMEOUT_S {
        subject.pipeline.clone()
    } else {
        Arc::new(pipeline_of(
            &subject.contract,
            scenario.await_timeout_seconds,
        ))
    }
}

pub fn build_world(subject: &Subject, scenario: &Scenario, seed: u64) -> Result<World, String> {
    let identity = subject.plan.identity.clone();
    let host = build_host(subject, scenario)?;
    let mut world = World::new(
        Engine::new(START_MS, seed),
        host,
        TENANT,
        scenario.faults.clone(),
    );
    world.deploy(
        identity,
        &subject.sfn.machines.driver,
        &subject.driver,
        &subject.sfn.machines.sweeper,
        &subject.sweeper,
    )?;
    if let Some(every) = scenario.sweeper_every_seconds {
        world.schedule_sweeper(every as i64 * 1000);
    }
    Ok(world)
}

/// TPF as the scenario sets it up, with the subject's release registered and active: the same
/// for every engine.
pub(crate) fn build_host(
    subject: &Subject,
    scenario: &Scenario,
) -> Result<ActionHost<InMemoryStore>, String> {
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
            .ok_or_else(|| {
                format!(
                    "scenario {}: no step named {:?}",
                    scenario.name, script.step
                )
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
        .map_err(|e| e.to_string())?;
    c.activate_release(
        TENANT,
        &identity.pipeline_id,
        &identity.release_version,
        START_MS,
    )
    .map_err(|e| e.to_string())?;
    Ok(host)
}

/// Runs `scenario` to quiescence or its horizon.
pub fn run<'s>(subject: &'s Subject, scenario: &Scenario, seed: u64) -> Result<Run<'s>, String> {
    run_proven(subject, &Proven::of(subject), scenario, seed, true)
}

/// [`run`] with the driver's verdict taken once for the whole matrix, and with or without state
/// inputs, outputs and task parameters in the driver histories (`Engine::set_record_payloads`).
/// The proof reads event types, state names and errors only, which are kept either way, so it
/// runs without: the same trace at a fraction of the copies.
pub fn run_proven<'s>(
    subject: &'s Subject,
    proven: &Proven,
    scenario: &Scenario,
    seed: u64,
    payloads: bool,
) -> Result<Run<'s>, String> {
    let mut world = build_world(subject, scenario, seed)?;
    let budget = budget::for_scenario(subject, scenario);
    world
        .engine
        .set_event_budget(Some(usize::try_from(budget.events).unwrap_or(usize::MAX)));
    world.engine.set_record_payloads(payloads);
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
    let mut done = vec![false; scenario.actions.len()];
    for (i, a) in scenario.actions.iter().enumerate() {
        if matches!(a.act, Do::CompleteBeforePark | Do::TakeLeaseFirst) {
            done[i] = true;
        }
    }
    let exec = execution_id.clone().unwrap_or_default();
    let mut parks = ParkCount::default();
    loop {
        if world.engine.budget_spent() {
            break;
        }
        let now = world.now_ms();
        if due.iter().zip(&done).any(|(t, d)| !d && t.is_none()) {
            let facts = Facts {
                status: record_status(&world, &exec),
                parks: parks.update(&world, &exec),
            };
            for (i, a) in scenario.actions.iter().enumerate() {
                if done[i] || due[i].is_some() {
                    continue;
                }
                if condition(
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
        let unfired = done.iter().any(|d| !d);
        if !unfired && finished(&world, &exec) {
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
        if world.now_ms() == now && next.is_some_and(|t| t <= now) && !fired {
            // Nothing moved at this instant (a timer that did nothing): step past it.
            world.advance_to(now + 1);
        }
    }
    let metrics = measure(&world, &exec);
    let budget_spent = world.engine.budget_spent();
    let unmet = check_expectations(scenario, &world, &exec, &metrics);
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
        proven: proven.clone(),
    })
}

fn record_status(world: &World, exec: &str) -> Option<TpfStatus> {
    tpf_status(&world.host, world.now_ms(), exec)
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

/// Driver executions (all releases) whose input names this TPF execution, oldest first.
pub fn driver_executions(world: &World, exec: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in &world.releases {
        for arn in world.engine.list_executions(&r.driver_arn) {
            if let Some((start_ms, input)) = world.engine.started(arn) {
                if input.get("executionId").and_then(Value::as_str) == Some(exec) {
                    out.push((start_ms, arn.to_string()));
                }
            }
        }
    }
    out.sort();
    out.into_iter().map(|(_, a)| a).collect()
}

/// Parks of the execution so far, counted as the log grows: a scan of the whole log per
/// action per step made big contracts quadratic in their awaits.
#[derive(Default)]
struct ParkCount {
    cursor: usize,
    parks: u32,
}

impl ParkCount {
    fn update(&mut self, world: &World, exec: &str) -> u32 {
        let log = world.host.coordinator().log().transitions();
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

fn condition(
    world: &World,
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
        When::TpfWaitRetry => status == Some(TpfStatus::WaitRetry),
        When::DriverFailed => driver_executions(world, exec)
            .last()
            .is_some_and(|arn| world.engine.status(arn) == Some(ExecutionStatus::Failed)),
        When::Parked => {
            if status != Some(TpfStatus::WaitingExternal) {
                return false;
            }
            let parks = facts.parks;
            let at_step = step.is_none_or(|s| {
                world
                    .host
                    .coordinator()
                    .status(TENANT, exec, world.now_ms())
                    .ok()
                    .and_then(|r| {
                        world
                            .host
                            .coordinator()
                            .pipeline()
                            .step(r.current_step_index)
                            .map(|d| d.name == s)
                    })
                    .unwrap_or(false)
            });
            parks >= nth && at_step
        }
    }
}

fn perform(world: &mut World, subject: &Subject, exec: &str, act: Do) {
    let now = world.now_ms();
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
                world.push(vec![Entry::Actor {
                    at_ms: now,
                    what: "no second release to activate".into(),
                }]);
                return;
            };
            if let Err(e) = world.deploy(
                next.identity.clone(),
                &next.driver_name,
                &next.driver,
                &next.sweeper_name,
                &next.sweeper,
            ) {
                world.push(vec![Entry::Actor {
                    at_ms: now,
                    what: format!("deploy of the new release failed: {e}"),
                }]);
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
            let running = driver_executions(world, exec)
                .into_iter()
                .find(|arn| world.engine.status(arn) == Some(ExecutionStatus::Running));
            let what = match running {
                Some(arn) => match world.engine.stop_execution(
                    &arn,
                    Some("Operator.Abort"),
                    Some("stopped in the console"),
                ) {
                    Ok(_) => format!(
                        "operator aborts driver {}",
                        arn.rsplit(':').next().unwrap_or("")
                    ),
                    Err(e) => format!("abort failed: {e}"),
                },
                None => "no running driver to abort".to_string(),
            };
            world.push(vec![Entry::Actor { at_ms: now, what }]);
        }
        Do::StartExtraDriver => {
            let arn = world
                .releases
                .first()
                .map(|r| r.driver_arn.clone())
                .unwrap_or_default();
            let input = tpf_sfn_wakeup::bridge::BridgeAction::driver_input(
                TENANT,
                exec,
                &format!("{exec}-extra"),
            );
            let what = match world
                .engine
                .start_execution(&arn, &format!("{exec}-extra"), input)
            {
                Ok(_) => "a faulty bridge starts a second driver".to_string(),
                Err(e) => format!("extra driver not started: {e}"),
            };
            world.push(vec![Entry::Actor { at_ms: now, what }]);
        }
        Do::ConsoleRedrive => {
            let failed = driver_executions(world, exec)
                .into_iter()
                .rev()
                .find(|arn| world.engine.status(arn) == Some(ExecutionStatus::Failed));
            let what = match failed {
                Some(arn) => match world.engine.redrive_execution(&arn) {
                    Ok(_) => format!(
                        "operator redrives driver {} in the console",
                        arn.rsplit(':').next().unwrap_or("")
                    ),
                    Err(e) => format!("console redrive refused: {e}"),
                },
                None => "no failed driver to redrive".to_string(),
            };
            world.push(vec![Entry::Actor { at_ms: now, what }]);
        }
    }
}

/// The child executions that carried `exec`'s items, oldest first.
pub fn item_executions(world: &World, exec: &str) -> Vec<String> {
    item_children(&world.host, world.now_ms(), exec)
}

/// [`item_executions`] read from TPF alone, whatever engine drives them.
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

/// TPF is terminal and no driver generation of the execution, or of its item children, is
/// still running.
fn finished(world: &World, exec: &str) -> bool {
    let terminal = record_status(world, exec).is_some_and(|s| s.terminal());
    terminal
        && std::iter::once(exec.to_owned())
            .chain(item_executions(world, exec))
            .flat_map(|e| driver_executions(world, &e))
            .all(|arn| world.engine.status(&arn) != Some(ExecutionStatus::Running))
}

pub fn measure(world: &World, exec: &str) -> Metrics {
    let mut m = Metrics::default();
    let mut lineages = std::collections::BTreeSet::new();
    for arn in driver_executions(world, exec) {
        if let Some(x) = world.engine.metrics(&arn) {
            m.state_transitions += x.state_transitions;
            m.history_events += x.history_events as u64;
            m.max_generation_events = m.max_generation_events.max(x.history_events as u64);
        }
        m.generations += 1;
        if let Some((_, input)) = world.engine.started(&arn) {
            if let Some(l) = input.get("lineage").and_then(Value::as_str) {
                lineages.insert(l.to_string());
            }
        }
    }
    m.lineages = lineages.len() as u32;
    m.action_calls = world
        .trace
        .entries
        .iter()
        .filter(|e| matches!(e, Entry::Call { action, execution, .. } if action == "process-work-item" && execution.starts_with(exec)))
        .count() as u64;
    for r in &world.releases {
        for arn in world.engine.list_executions(&r.sweeper_arn) {
            if let Some(x) = world.engine.metrics(arn) {
                m.sweeper_transitions += x.state_transitions;
            }
        }
    }
    m.simulated_seconds = (world.now_ms() - START_MS) as f64 / 1000.0;
    let children = item_executions(world, exec);
    m.item_executions = children.len() as u32;
    for child in &children {
        for arn in driver_executions(world, child) {
            if let Some(x) = world.engine.metrics(&arn) {
                m.item_state_transitions += x.state_transitions;
                m.item_history_events += x.history_events as u64;
            }
        }
    }
    m
}

fn check_expectations(s: &Scenario, world: &World, exec: &str, m: &Metrics) -> Vec<String> {
    expectations(s, &world.host, world.now_ms(), exec, m)
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

/// A JSON summary of a run for `--format json`.
pub fn summary_json(run: &Run<'_>) -> Value {
    json!({
        "scenario": run.scenario.name,
        "executionId": run.execution_id,
        "metrics": run.metrics,
        "unmetExpectations": run.unmet,
    })
}
