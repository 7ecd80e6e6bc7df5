//! The ASL interpreter as the world's engine: each release's driver and sweeper machines
//! deployed, the Task handler (`crate::harness::bindings`) over the world's TPF and wakeup
//! table, the sweeper machine started on its schedule, and the interpreter's history read into
//! the trace.

use serde_json::{json, Value};
use tpf_sfn_compiler::sfn::asl::StateMachine;
use tpf_wire::Identity;

use crate::harness::bindings::{Bindings, CallRecord};
use crate::harness::trace::Entry;
use crate::harness::world::{self, Deployed, WorldEngine};
use asl_interp::engine::Engine;
use asl_interp::SfnError;

/// The world on the ASL interpreter.
pub type World = world::World<Engine>;

/// One release's deployed machines.
#[derive(Debug, Clone)]
pub struct ReleaseMachines {
    pub identity: Identity,
    pub driver_arn: String,
    pub sweeper_arn: String,
}

impl Deployed for ReleaseMachines {
    fn identity(&self) -> &Identity {
        &self.identity
    }
}

/// What the Task handler leaves for the trace: each call's entries, until its `TaskStarted`
/// event is read.
#[derive(Default)]
pub struct Calls(Vec<CallRecord>);

/// The handler over the world's fields, borrowed apart from the engine that calls it.
macro_rules! bindings {
    ($w:ident) => {
        Bindings {
            host: &mut $w.host,
            wakeup: &mut $w.wakeup,
            faults: &mut $w.faults,
            calls: &mut $w.local.0,
            tokens: &mut $w.tokens,
            hooks: &mut $w.hooks,
            deferred: Vec::new(),
        }
    };
}

impl WorldEngine for Engine {
    type Release = ReleaseMachines;
    type Local = Calls;
    const NOT_DEPLOYED: &'static str = "no driver deployed for release";

    fn now_ms(&self) -> i64 {
        Engine::now_ms(self)
    }

    fn budget_spent(&self) -> bool {
        Engine::budget_spent(self)
    }

    fn next_timer(&self) -> Option<i64> {
        Engine::next_timer(self)
    }

    fn run_until_idle(w: &mut World) {
        let mut b = bindings!(w);
        w.engine.run_until_idle(&mut b);
    }

    fn step_timer(w: &mut World) {
        let mut b = bindings!(w);
        w.engine.step_timer(&mut b);
    }

    fn advance_to(w: &mut World, t: i64) {
        let mut b = bindings!(w);
        w.engine.advance_to(t, &mut b);
    }

    /// Starts every release's sweeper machine.
    fn sweep_at(w: &mut World, at: i64) {
        let mut b = bindings!(w);
        w.engine.advance_to(at, &mut b);
        let name = w.next_sweep();
        let arns: Vec<String> = w.releases.iter().map(|r| r.sweeper_arn.clone()).collect();
        for arn in arns {
            let _ = w.engine.start_execution(&arn, &name, json!({}));
        }
    }

    /// Moves new engine history into the trace, placing each call's entries right after the
    /// `TaskStarted` event of the task that made it.
    fn collect_events(w: &mut World) {
        let sweeper_marks: Vec<String> = w
            .releases
            .iter()
            .map(|r| {
                format!(
                    ":execution:{}:",
                    r.sweeper_arn.rsplit(':').next().unwrap_or("")
                )
            })
            .collect();
        let (events, cursor) = w.engine.events_since(w.event_cursor);
        let entries = &mut w.trace.entries;
        let calls = &mut w.local.0;
        entries.reserve(events.len());
        // Events come in runs of one execution: classify its ARN once per run, not per event
        // (a substring search per sweeper per event was a tenth of a long scenario).
        let mut last: Option<(&str, bool, &str)> = None;
        for (arn, ev) in events {
            let (sweeper, name) = match last {
                Some((a, sweeper, name)) if a == arn => (sweeper, name),
                _ => {
                    let sweeper = sweeper_marks.iter().any(|m| arn.contains(m.as_str()));
                    let name = arn.rsplit(':').next().unwrap_or(arn);
                    last = Some((arn, sweeper, name));
                    (sweeper, name)
                }
            };
            let detail = match ev.event_type {
                "TaskFailed" | "ExecutionFailed" => {
                    let e = ev
                        .details
                        .get("error")
                        .and_then(|v| v.as_str())
                        .unwrap_or("");
                    Some(e.to_string())
                }
                _ => None,
            };
            entries.push(Entry::Driver {
                at_ms: ev.timestamp_ms,
                execution: name.to_string(),
                sweeper,
                event: ev.event_type,
                state: ev.state_name.clone(),
                detail,
            });
            if ev.event_type == "TaskStarted" {
                let state = ev.state_name.as_deref().unwrap_or_default();
                if let Some(i) = calls
                    .iter()
                    .position(|c| c.execution_arn == arn && c.state_name == state)
                {
                    entries.extend(calls.remove(i).entries);
                }
            }
        }
        w.event_cursor = cursor;
        for c in calls.drain(..) {
            entries.extend(c.entries);
        }
    }

    fn start_driver(w: &mut World, release: usize, lineage: &str, input: Value) -> String {
        let arn = w.releases[release].driver_arn.clone();
        match w.engine.start_execution(&arn, lineage, input) {
            Ok(_) => format!("start driver {lineage}"),
            Err(e) => format!("start driver {lineage}: {e} (already started: done)"),
        }
    }

    fn wake(w: &mut World, token: &str, output: Value) -> String {
        match w.engine.send_task_success(token, output) {
            Ok(()) => "wake parked driver".to_string(),
            Err(e) => format!("wake: {e} (token already closed: done)"),
        }
    }
}

impl World {
    /// Deploys one release's machines (names as the compiler's manifest gives them). Every
    /// scenario deploys the same definitions into a fresh engine, so they are compiled once.
    pub fn deploy(
        &mut self,
        identity: Identity,
        driver_name: &str,
        driver: &StateMachine,
        sweeper_name: &str,
        sweeper: &StateMachine,
    ) -> Result<(), SfnError> {
        let driver_arn = self
            .engine
            .create_state_machine_shared(driver_name, driver)?;
        let sweeper_arn = self
            .engine
            .create_state_machine_shared(sweeper_name, sweeper)?;
        self.releases.push(ReleaseMachines {
            identity,
            driver_arn,
            sweeper_arn,
        });
        Ok(())
    }
}
