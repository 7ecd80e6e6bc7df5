//! The Lambda durable functions runner's part: the replay engine's world with a release's
//! function version published, its budgets, what its executions say about a TPF execution's
//! drivers, the operator's acts on them, the metrics of a run, and the matrix on this backend.

use durable_interp::{Engine, ExecutionStatus};
use serde_json::Value;

use super::world::{DurableWorld, Local};
use super::{Driver, Subject};
use crate::invariants::Violation;
use crate::scenario::budget;
use crate::scenario::matrix;
use crate::scenario::model::Scenario;
use crate::scenario::run::{self, action_calls, item_children, RunError, Runner, START_MS, TENANT};
use crate::scenario::Metrics;
use crate::subject::NextRelease;
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;

/// One scenario's outcome on Lambda durable functions.
pub type DurableRun<'s> = run::Run<'s, Driver>;

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

impl Runner for Driver {
    type Engine = Engine;
    /// The spec's static verdict.
    type Verdict = Vec<Violation>;
    type Budget = DurableBudget;

    fn world(
        subject: &Subject,
        host: ActionHost<InMemoryStore>,
        scenario: &Scenario,
        _seed: u64,
    ) -> Result<DurableWorld, RunError> {
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
        Ok(world)
    }

    fn budget(subject: &Subject, scenario: &Scenario) -> DurableBudget {
        budget_for(subject, scenario)
    }

    fn fence(world: &mut DurableWorld, budget: &DurableBudget, _payloads: bool) {
        world.engine.set_budgets(
            Some(usize::try_from(budget.events).unwrap_or(usize::MAX)),
            Some(budget.invocations),
        );
    }

    /// A second release is a second published version of the driver function.
    fn deploy(world: &mut DurableWorld, next: &NextRelease<Driver>) -> Result<(), RunError> {
        world.publish(next.identity.clone(), &next.program);
        Ok(())
    }

    fn driver_failed(world: &DurableWorld, exec: &str) -> bool {
        driver_executions(world, exec)
            .last()
            .is_some_and(|x| x.status == ExecutionStatus::Failed)
    }

    fn driver_running(world: &DurableWorld, exec: &str) -> bool {
        driver_executions(world, exec)
            .iter()
            .any(|x| x.status == ExecutionStatus::Running)
    }

    fn abort_driver(world: &mut DurableWorld, exec: &str) -> String {
        let running = driver_executions(world, exec)
            .into_iter()
            .find(|x| x.status == ExecutionStatus::Running)
            .map(|x| (x.arn.clone(), x.name.clone()));
        match running {
            Some((arn, name)) => {
                match world
                    .engine
                    .stop_execution(&arn, "Operator.Abort", "stopped in the console")
                {
                    Ok(()) => format!("operator stops durable execution {name}"),
                    Err(e) => format!("stop failed: {e}"),
                }
            }
            None => "no running driver to stop".to_string(),
        }
    }

    fn start_extra_driver(world: &mut DurableWorld, exec: &str) -> String {
        let f = world
            .releases
            .first()
            .map(|r| r.function_arn.clone())
            .unwrap_or_default();
        let name = format!("{exec}-extra");
        let input = tpf_sfn_wakeup::bridge::BridgeAction::driver_input(TENANT, exec, &name);
        match world.engine.start_execution(&f, &name, input) {
            Ok(_) => "a faulty bridge starts a second driver".to_string(),
            Err(e) => format!("extra driver not started: {e}"),
        }
    }

    /// Durable executions have no redrive: a failed one stays failed, and starting its name
    /// again returns it (name idempotency). The sweeper recovers the TPF execution.
    fn console_redrive(_: &mut DurableWorld, _: &str) -> String {
        "durable executions cannot be redriven: the operator leaves recovery to the sweeper".into()
    }

    /// An engine that left a future pending, or a handler that returned past a suspension, is a
    /// bug of this harness, not a finding about the driver: the run has no verdict.
    fn harness_fault(world: &DurableWorld) -> Option<RunError> {
        world.engine.executions().iter().find_map(|x| {
            x.error
                .as_ref()
                .filter(|e| {
                    e.error == durable_interp::error::PENDING_POLL
                        || e.error == durable_interp::error::RETURNED_WHILE_PENDING
                })
                .map(|e| RunError::Engine {
                    engine: "durable",
                    execution: x.name.clone(),
                    error: e.error.clone(),
                    cause: e.cause.clone(),
                })
        })
    }

    fn measure(world: &DurableWorld, exec: &str) -> Metrics {
        measure(world, exec)
    }
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
    m.action_calls = action_calls(&world.trace, exec);
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
