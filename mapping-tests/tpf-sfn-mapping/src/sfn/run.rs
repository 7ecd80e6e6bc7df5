//! Runs one scenario against one compiled release's machines and measures it.

use serde_json::{json, Value};

use crate::harness::actors;
use crate::harness::trace::Entry;
use super::world::{Calls, World};
use crate::scenario::budget::{self, Budget};
use crate::scenario::model::{Do, Scenario, When};
use crate::scenario::run::{
    build_host, expectations, item_children, tpf_status, RunError, FIRST_KEY, START_MS, TENANT,
};
use crate::scenario::Metrics;
use crate::sfn::Proven;
use super::Subject;
use asl_interp::engine::{Engine, ExecutionStatus};
use tpf_wire::records::ExecutionStatus as TpfStatus;
use tpf_wire::Identity;

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

pub fn build_world(
    subject: &Subject,
    scenario: &Scenario,
    seed: u64,
) -> Result<World, RunError> {
    let identity = subject.plan.identity.clone();
    let host = build_host(subject, scenario)?;
    let mut world = World::new(
        Engine::new(START_MS, seed),
        host,
        TENANT,
        scenario.faults.clone(),
        Calls::default(),
    );
    let m = &subject.program;
    world
        .deploy(
            identity,
            &m.sfn.machines.driver,
            &m.driver,
            &m.sfn.machines.sweeper,
            &m.sweeper,
        )
        .map_err(|e| RunError::Deploy(Box::new(e)))?;
    if let Some(every) = scenario.sweeper_every_seconds {
        world.schedule_sweeper(every as i64 * 1000);
    }
    Ok(world)
}

/// Runs `scenario` to quiescence or its horizon.
pub fn run<'s>(
    subject: &'s Subject,
    scenario: &Scenario,
    seed: u64,
) -> Result<Run<'s>, RunError> {
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
) -> Result<Run<'s>, RunError> {
    let mut world = build_world(subject, scenario, seed)?;
    let budget = budget::for_scenario(&subject.plan, scenario);
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
            let m = &next.program;
            if let Err(e) = world.deploy(
                next.identity.clone(),
                &m.sfn.machines.driver,
                &m.driver,
                &m.sfn.machines.sweeper,
                &m.sweeper,
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

/// A JSON summary of a run for `--format json`.
pub fn summary_json(run: &Run<'_>) -> Value {
    json!({
        "scenario": run.scenario.name,
        "executionId": run.execution_id,
        "metrics": run.metrics,
        "unmetExpectations": run.unmet,
    })
}
