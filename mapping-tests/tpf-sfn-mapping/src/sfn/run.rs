//! The Step Functions runner's part: the interpreter's world with a release's machines
//! deployed, its budgets, what its executions say about a TPF execution's drivers, the
//! operator's acts on them, and the metrics of a run.

use serde_json::Value;

use super::world::{Calls, World};
use super::{Machines, Proven, Subject};
use crate::scenario::budget::{self, Budget};
use crate::scenario::model::Scenario;
use crate::scenario::run::{self, action_calls, item_children, RunError, Runner, START_MS, TENANT};
use crate::scenario::Metrics;
use crate::subject::NextRelease;
use asl_interp::engine::{Engine, ExecutionStatus};
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;

/// One scenario's outcome on Step Functions.
pub type Run<'s> = run::Run<'s, Machines>;

/// Runs `scenario` to quiescence or its horizon, with state inputs, outputs and task parameters
/// in the driver histories, for callers that read them. The proof reads event types, state
/// names and errors only, which are kept either way, so it runs without
/// (`Engine::set_record_payloads`): the same trace at a fraction of the copies.
pub fn run<'s>(subject: &'s Subject, scenario: &Scenario, seed: u64) -> Result<Run<'s>, RunError> {
    run::run(subject, &Proven::of(subject), scenario, seed, true)
}

fn deploy(world: &mut World, identity: tpf_wire::Identity, m: &Machines) -> Result<(), RunError> {
    world
        .deploy(
            identity,
            &m.sfn.machines.driver,
            &m.driver,
            &m.sfn.machines.sweeper,
            &m.sweeper,
        )
        .map_err(|e| RunError::Deploy(Box::new(e)))
}

impl Runner for Machines {
    type Engine = Engine;
    type Verdict = Proven;
    type Budget = Budget;

    fn world(
        subject: &Subject,
        host: ActionHost<InMemoryStore>,
        scenario: &Scenario,
        seed: u64,
    ) -> Result<World, RunError> {
        let mut world = World::new(
            Engine::new(START_MS, seed),
            host,
            TENANT,
            scenario.faults.clone(),
            Calls::default(),
        );
        deploy(&mut world, subject.plan.identity.clone(), &subject.program)?;
        Ok(world)
    }

    fn budget(subject: &Subject, scenario: &Scenario) -> Budget {
        budget::for_scenario(&subject.plan, scenario)
    }

    fn fence(world: &mut World, budget: &Budget, payloads: bool) {
        world
            .engine
            .set_event_budget(Some(usize::try_from(budget.events).unwrap_or(usize::MAX)));
        world.engine.set_record_payloads(payloads);
    }

    fn deploy(world: &mut World, next: &NextRelease<Machines>) -> Result<(), RunError> {
        deploy(world, next.identity.clone(), &next.program)
    }

    fn driver_failed(world: &World, exec: &str) -> bool {
        driver_executions(world, exec)
            .last()
            .is_some_and(|arn| world.engine.status(arn) == Some(ExecutionStatus::Failed))
    }

    fn driver_running(world: &World, exec: &str) -> bool {
        driver_executions(world, exec)
            .iter()
            .any(|arn| world.engine.status(arn) == Some(ExecutionStatus::Running))
    }

    fn abort_driver(world: &mut World, exec: &str) -> String {
        let running = driver_executions(world, exec)
            .into_iter()
            .find(|arn| world.engine.status(arn) == Some(ExecutionStatus::Running));
        match running {
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
        }
    }

    fn start_extra_driver(world: &mut World, exec: &str) -> String {
        let arn = world
            .releases
            .first()
            .map(|r| r.driver_arn.clone())
            .unwrap_or_default();
        let name = format!("{exec}-extra");
        let input = tpf_sfn_wakeup::bridge::BridgeAction::driver_input(TENANT, exec, &name);
        match world.engine.start_execution(&arn, &name, input) {
            Ok(_) => "a faulty bridge starts a second driver".to_string(),
            Err(e) => format!("extra driver not started: {e}"),
        }
    }

    fn console_redrive(world: &mut World, exec: &str) -> String {
        let failed = driver_executions(world, exec)
            .into_iter()
            .rev()
            .find(|arn| world.engine.status(arn) == Some(ExecutionStatus::Failed));
        match failed {
            Some(arn) => match world.engine.redrive_execution(&arn) {
                Ok(_) => format!(
                    "operator redrives driver {} in the console",
                    arn.rsplit(':').next().unwrap_or("")
                ),
                Err(e) => format!("console redrive refused: {e}"),
            },
            None => "no failed driver to redrive".to_string(),
        }
    }

    /// The interpreter fails nothing of its own accord.
    fn harness_fault(_: &World) -> Option<RunError> {
        None
    }

    fn measure(world: &World, exec: &str) -> Metrics {
        measure(world, exec)
    }
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

/// The child executions that carried `exec`'s items, oldest first.
pub fn item_executions(world: &World, exec: &str) -> Vec<String> {
    item_children(&world.host, world.now_ms(), exec)
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
    m.action_calls = action_calls(&world.trace, exec);
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
