//! Runs one scenario against one release's durable driver and measures it, with the same
//! actors, the same TPF and the same scenario model as every backend.

use durable_interp::{Engine, ExecutionStatus};
use serde_json::Value;
use tpf_wire::records::ExecutionStatus as TpfStatus;
use tpf_wire::Identity;

use super::world::{DurableWorld, Local};
use crate::harness::actors;
use crate::harness::trace::Entry;
use crate::invariants::Violation;
use crate::scenario::budget;
use crate::scenario::matrix;
use crate::scenario::model::{Do, Scenario, When};
use crate::scenario::run::{
    build_host, expectations, item_children, tpf_status, RunError, FIRST_KEY, START_MS, TENANT,
};
use crate::scenario::Metrics;
use super::Subject;

/// Hard budgets of one durable run: the Step Functions run's call and event budgets (the same
/// scenario justifies the same calls), and operations and invocations in their stead of state
/// transitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DurableBudget {
    pub action_calls: u64,
    /// Billed operations of the first execution's drivers.
    pub operations: u64,
    /// History events of every execution; the engine stops at this many.
    pub events: u64,
    /// Invocations of every execution; the engine stops at this many.
    pub invocations: u64,
}

/// Operations per action call, with room: the worst iteration is a call, three retries with
/// their pauses and a park (11).
const OPERATIONS_PER_CALL: u64 = 12;
/// Invocations per action call, with room: a retry's pause and the wait or park after it each
/// end one.
const INVOCATIONS_PER_CALL: u64 = 6;

pub fn budget_for(subject: &Subject, scenario: &Scenario) -> DurableBudget {
    let b = budget::for_scenario(&subject.plan, scenario);
    DurableBudget {
        action_calls: b.action_calls,
        operations: b.action_calls.saturating_mul(OPERATIONS_PER_CALL),
        events: b.events,
        invocations: b.action_calls.saturating_mul(INVOCATIONS_PER_CALL),
    }
}

/// The derived matrix on this backend: the rollover scenario sized by the durable driver's
/// calls per generation, the console re-drive, which durable executions do not have, run as the
/// recovery this backend has instead (the sweeper starts a new lineage), and one scenario of its
/// own: a function that dies between a step's effect and its checkpoint.
pub fn scenarios(subject: &Subject) -> Vec<Scenario> {
    let mut all = matrix::derive(subject);
    for s in &mut all {
        if s.name == "console-redrive" {
            s.description = "the action endpoint is down long enough to exhaust the driver's transport retries; durable executions have no console redrive, so the sweeper starts a recovery lineage".to_string();
            s.sweeper_every_seconds = Some(60);
            // One lineage if the outage misses the driver, two when the sweeper recovers it.
            s.expect.lineages = None;
        }
    }
    // Durable steps are at least once: a function that dies after TPF applied a call delivers
    // it again (same key) from its next invocation. Step Functions has no such failure.
    if let Some(happy) = all.iter().find(|s| s.name == "happy-path") {
        let mut s = happy.clone();
        s.name = "function-crashes-after-calls".to_string();
        s.description = "the driver function dies right after each of its first three action calls reached TPF, before the step's checkpoint: each next invocation delivers the call again with the same key".to_string();
        s.faults.crash_after_calls = 3;
        all.push(s);
    }
    all
}

pub struct DurableRun<'s> {
    pub scenario: Scenario,
    pub subject: &'s Subject,
    pub world: DurableWorld,
    pub identity: Identity,
    pub execution_id: Option<String>,
    pub metrics: Metrics,
    pub unmet: Vec<String>,
    pub budget: DurableBudget,
    pub budget_spent: bool,
    /// The spec's static verdict, shared by every scenario of a matrix.
    pub static_violations: Vec<Violation>,
}

pub fn build_world(
    subject: &Subject,
    scenario: &Scenario,
) -> Result<DurableWorld, RunError> {
    let host = build_host(subject, scenario)?;
    let mut world = DurableWorld::new(
        Engine::new(START_MS),
        host,
        TENANT,
        scenario.faults.clone(),
        Local::new(
            &subject.plan.wakeup.table_name,
            subject.plan.sweeper.limit as usize,
        ),
    );
    world.publish(subject.plan.identity.clone(), &subject.program);
    if let Some(every) = scenario.sweeper_every_seconds {
        world.schedule_sweeper(every as i64 * 1000);
    }
    Ok(world)
}

/// Runs `scenario` to quiescence or its horizon.
pub fn run<'s>(
    subject: &'s Subject,
    static_violations: &[Violation],
    scenario: &Scenario,
) -> Result<DurableRun<'s>, RunError> {
    let mut world = build_world(subject, scenario)?;
    let budget = budget_for(subject, scenario);
    world.engine.set_budgets(
        Some(usize::try_from(budget.events).unwrap_or(usize::MAX)),
        Some(budget.invocations),
    );
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

    let mut due: Vec<Option<i64>> = vec![None; scenario.actions.len()];
    let mut done: Vec<bool> = scenario
        .actions
        .iter()
        .map(|a| matches!(a.act, Do::CompleteBeforePark | Do::TakeLeaseFirst))
        .collect();
    let exec = execution_id.clone().unwrap_or_default();
    let mut parks = 0u32;
    let mut cursor = 0usize;
    loop {
        if world.engine.budget_spent() {
            break;
        }
        let now = world.now_ms();
        if due.iter().zip(&done).any(|(t, d)| !d && t.is_none()) {
            let log = world.host.coordinator().log().transitions();
            parks += log[cursor..]
                .iter()
                .filter(|t| t.execution_id == exec && t.cause == "park")
                .count() as u32;
            cursor = log.len();
            let status = tpf_status(&world.host, now, &exec);
            for (i, a) in scenario.actions.iter().enumerate() {
                if done[i] || due[i].is_some() {
                    continue;
                }
                if condition(
                    &world,
                    &exec,
                    status,
                    parks,
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
        if done.iter().all(|d| *d) && finished(&world, &exec) {
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
            world.advance_to(now + 1);
        }
    }
    // An engine that left a future pending, or a handler that returned past a suspension, is a
    // bug of this harness, not a finding about the driver: the run has no verdict.
    let harness_bug = world.engine.executions().iter().find_map(|x| {
        x.error
            .as_ref()
            .filter(|e| {
                e.error == durable_interp::error::PENDING_POLL
                    || e.error == durable_interp::error::RETURNED_WHILE_PENDING
            })
            .map(|e| RunError::Engine {
                execution: x.name.clone(),
                error: e.error.clone(),
                cause: e.cause.clone(),
            })
    });
    if let Some(e) = harness_bug {
        return Err(e);
    }
    let metrics = measure(&world, &exec);
    let budget_spent = world.engine.budget_spent();
    let unmet = expectations(scenario, &world.host, world.now_ms(), &exec, &metrics);
    Ok(DurableRun {
        scenario: scenario.clone(),
        subject,
        world,
        identity,
        execution_id,
        metrics,
        unmet,
        budget,
        budget_spent,
        static_violations: static_violations.to_vec(),
    })
}

/// Durable executions (every release) whose input names this TPF execution, oldest first.
pub fn driver_executions<'w>(
    world: &'w DurableWorld,
    exec: &str,
) -> Vec<&'w durable_interp::Execution> {
    world
        .engine
        .executions()
        .iter()
        .filter(|x| x.input.get("executionId").and_then(Value::as_str) == Some(exec))
        .collect()
}

fn condition(
    world: &DurableWorld,
    exec: &str,
    status: Option<TpfStatus>,
    parks: u32,
    when: When,
    step: Option<&str>,
    nth: u32,
) -> bool {
    match when {
        When::Start => true,
        When::TpfFailed => status == Some(TpfStatus::Failed),
        When::TpfWaitRetry => status == Some(TpfStatus::WaitRetry),
        When::DriverFailed => driver_executions(world, exec)
            .last()
            .is_some_and(|x| x.status == ExecutionStatus::Failed),
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
            parks >= nth && at_step
        }
    }
}

fn perform(world: &mut DurableWorld, subject: &Subject, exec: &str, act: Do) {
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
            let pipeline = subject.plan.identity.pipeline_id.clone();
            let (_, e) = actors::submit(&mut world.host, TENANT, &pipeline, FIRST_KEY, now);
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
            let identity = next.identity.clone();
            // A second release is a second published version of the driver function.
            world.publish(identity.clone(), &next.program);
            let mut e = actors::activate(&mut world.host, TENANT, &identity, now);
            let (_, s) = actors::submit(
                &mut world.host,
                TENANT,
                &identity.pipeline_id,
                "order-2",
                now,
            );
            e.extend(s);
            world.push(e);
        }
        Do::AbortDriver => {
            let running = driver_executions(world, exec)
                .into_iter()
                .find(|x| x.status == ExecutionStatus::Running)
                .map(|x| (x.arn.clone(), x.name.clone()));
            let what = match running {
                Some((arn, name)) => {
                    match world.engine.stop_execution(
                        &arn,
                        "Operator.Abort",
                        "stopped in the console",
                    ) {
                        Ok(()) => format!("operator stops durable execution {name}"),
                        Err(e) => format!("stop failed: {e}"),
                    }
                }
                None => "no running driver to stop".to_string(),
            };
            world.push(actor(what));
        }
        Do::StartExtraDriver => {
            let f = world
                .releases
                .first()
                .map(|r| r.function_arn.clone())
                .unwrap_or_default();
            let name = format!("{exec}-extra");
            let input = tpf_sfn_wakeup::bridge::BridgeAction::driver_input(TENANT, exec, &name);
            let what = match world.engine.start_execution(&f, &name, input) {
                Ok(_) => "a faulty bridge starts a second driver".to_string(),
                Err(e) => format!("extra driver not started: {e}"),
            };
            world.push(actor(what));
        }
        Do::ConsoleRedrive => {
            // Durable executions have no redrive: a failed one stays failed, and starting its
            // name again returns it (name idempotency). The sweeper recovers the TPF execution.
            world.push(actor(
                "durable executions cannot be redriven: the operator leaves recovery to the sweeper".into(),
            ));
        }
    }
}

/// TPF is terminal and no driver of the execution, or of its item children, still runs.
fn finished(world: &DurableWorld, exec: &str) -> bool {
    let now = world.now_ms();
    tpf_status(&world.host, now, exec).is_some_and(|s| s.terminal())
        && std::iter::once(exec.to_owned())
            .chain(item_children(&world.host, now, exec))
            .all(|e| {
                driver_executions(world, &e)
                    .iter()
                    .all(|x| x.status != ExecutionStatus::Running)
            })
}

pub fn measure(world: &DurableWorld, exec: &str) -> Metrics {
    let mut m = Metrics::default();
    let mut lineages = std::collections::BTreeSet::new();
    for x in driver_executions(world, exec) {
        m.operations += x.operations_billed;
        m.history_events += x.history.len() as u64;
        m.invocations += x.invocations;
        m.replayed_operations += x.replayed;
        m.max_generation_operations = m.max_generation_operations.max(x.operations_billed);
        m.max_generation_events = m.max_generation_events.max(x.history.len() as u64);
        m.generations += 1;
        if let Some(l) = x.input.get("lineage").and_then(Value::as_str) {
            lineages.insert(l.to_string());
        }
    }
    m.lineages = lineages.len() as u32;
    m.action_calls = world
        .trace
        .entries
        .iter()
        .filter(|e| matches!(e, Entry::Call { action, execution, .. } if action == "process-work-item" && execution.starts_with(exec)))
        .count() as u64;
    m.simulated_seconds = (world.now_ms() - START_MS) as f64 / 1000.0;
    let children = item_children(&world.host, world.now_ms(), exec);
    m.item_executions = children.len() as u32;
    for child in &children {
        for x in driver_executions(world, child) {
            m.item_operations += x.operations_billed;
            m.item_history_events += x.history.len() as u64;
        }
    }
    m
}
