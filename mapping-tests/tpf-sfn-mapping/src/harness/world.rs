//! The world a scenario runs in: the ASL engine with the release machines deployed, the TPF
//! model behind Action API v1, the wakeup table, the bridge and a scheduled sweeper — all in
//! one virtual clock.

use std::collections::BTreeMap;

use serde_json::json;
use tpf_sfn_compiler::sfn::asl::StateMachine;
use tpf_wire::Identity;

use super::bindings::{Bindings, CallRecord, Hooks};
use super::faults::{FaultPlan, FaultState};
use super::trace::{Entry, Trace};
use super::wakeup::WakeupTable;
use asl_interp::engine::Engine;
use asl_interp::SfnError;
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;
use tpf_sfn_wakeup::bridge::{decide, BridgeAction, BridgeEvent, RecordImage, TokenRow};

/// One release's deployed machines.
#[derive(Debug, Clone)]
pub struct ReleaseMachines {
    pub identity: Identity,
    pub driver_arn: String,
    pub sweeper_arn: String,
}

/// The handler over the world's fields, borrowed apart from the engine that calls it.
macro_rules! bindings {
    ($w:ident) => {
        Bindings {
            host: &mut $w.host,
            wakeup: &mut $w.wakeup,
            faults: &mut $w.faults,
            calls: &mut $w.calls,
            tokens: &mut $w.tokens,
            hooks: &mut $w.hooks,
            deferred: Vec::new(),
        }
    };
}

pub struct World {
    pub engine: Engine,
    pub host: ActionHost<InMemoryStore>,
    pub wakeup: WakeupTable,
    pub faults: FaultState,
    pub trace: Trace,
    pub hooks: Hooks,
    pub releases: Vec<ReleaseMachines>,
    pub tenant: String,
    /// Sweeper period; `None` runs no sweeper.
    pub sweep_every_ms: Option<i64>,
    next_sweep_ms: Option<i64>,
    sweeps: u32,
    log_cursor: usize,
    event_cursor: usize,
    images: BTreeMap<(String, String), RecordImage>,
    calls: Vec<CallRecord>,
    tokens: Vec<TokenRow>,
}

impl World {
    pub fn new(
        engine: Engine,
        host: ActionHost<InMemoryStore>,
        tenant: &str,
        faults: FaultPlan,
    ) -> World {
        let start = engine.now_ms();
        World {
            engine,
            host,
            wakeup: WakeupTable::default(),
            faults: FaultState::new(faults),
            trace: Trace {
                start_ms: start,
                entries: Vec::new(),
            },
            hooks: Hooks::default(),
            releases: Vec::new(),
            tenant: tenant.to_string(),
            sweep_every_ms: None,
            next_sweep_ms: None,
            sweeps: 0,
            log_cursor: 0,
            event_cursor: 0,
            images: BTreeMap::new(),
            calls: Vec::new(),
            tokens: Vec::new(),
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.engine.now_ms()
    }

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

    pub fn schedule_sweeper(&mut self, every_ms: i64) {
        self.sweep_every_ms = Some(every_ms);
        self.next_sweep_ms = Some(self.now_ms() + every_ms);
    }

    pub fn push(&mut self, entries: Vec<Entry>) {
        self.trace.entries.extend(entries);
    }

    /// Runs everything runnable at the current instant: engine work, due callbacks, the bridge's
    /// reactions — until nothing changes.
    pub fn settle(&mut self) {
        for _ in 0..10_000 {
            let mut b = bindings!(self);
            self.engine.run_until_idle(&mut b);
            if self.engine.budget_spent() {
                // Nothing runs any more; what ran is in the trace for the checks.
                self.collect_events();
                return;
            }
            let now = self.engine.now_ms();
            let mut progressed = false;
            while self.engine.next_timer().is_some_and(|t| t <= now) && !self.engine.budget_spent()
            {
                let mut b = bindings!(self);
                self.engine.step_timer(&mut b);
                progressed = true;
            }
            self.collect_events();
            progressed |= self.run_bridge();
            if !progressed {
                return;
            }
        }
    }

    /// The earliest instant something is scheduled: an engine timer or the next sweep.
    pub fn next_event_ms(&self) -> Option<i64> {
        [self.engine.next_timer(), self.next_sweep_ms]
            .into_iter()
            .flatten()
            .min()
    }

    /// Moves the clock to `t` (not past it), firing what is due on the way and settling after
    /// each step.
    pub fn advance_to(&mut self, t: i64) {
        loop {
            self.settle();
            if self.engine.budget_spent() {
                return;
            }
            match self.next_event_ms() {
                Some(next) if next <= t => {
                    if self.next_sweep_ms == Some(next)
                        && self.engine.next_timer().is_none_or(|e| e >= next)
                    {
                        let mut b = bindings!(self);
                        self.engine.advance_to(next, &mut b);
                        self.start_sweep();
                    } else {
                        let mut b = bindings!(self);
                        self.engine.step_timer(&mut b);
                    }
                }
                _ => {
                    let mut b = bindings!(self);
                    self.engine.advance_to(t, &mut b);
                    self.settle();
                    return;
                }
            }
        }
    }

    fn start_sweep(&mut self) {
        self.sweeps += 1;
        let now = self.now_ms();
        self.next_sweep_ms = self.sweep_every_ms.map(|p| now + p);
        let arns: Vec<String> = self
            .releases
            .iter()
            .map(|r| r.sweeper_arn.clone())
            .collect();
        for arn in arns {
            let _ = self
                .engine
                .start_execution(&arn, &format!("sweep-{}", self.sweeps), json!({}));
        }
    }

    /// Moves new engine history into the trace, placing each call's entries right after the
    /// `TaskStarted` event of the task that made it.
    fn collect_events(&mut self) {
        let sweeper_marks: Vec<String> = self
            .releases
            .iter()
            .map(|r| {
                format!(
                    ":execution:{}:",
                    r.sweeper_arn.rsplit(':').next().unwrap_or("")
                )
            })
            .collect();
        let (events, cursor) = self.engine.events_since(self.event_cursor);
        let entries = &mut self.trace.entries;
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
                if let Some(i) = self
                    .calls
                    .iter()
                    .position(|c| c.execution_arn == arn && c.state_name == state)
                {
                    entries.extend(self.calls.remove(i).entries);
                }
            }
        }
        self.event_cursor = cursor;
        for c in self.calls.drain(..) {
            entries.extend(c.entries);
        }
    }

    fn image(&self, tenant: &str, execution_id: &str) -> Option<RecordImage> {
        // The store's own row, read in place: `status` would copy its payloads every time.
        self.host
            .coordinator()
            .store()
            .read_execution(tenant, execution_id, self.now_ms(), |r| RecordImage {
                tenant_id: r.tenant_id.clone(),
                execution_id: r.execution_id.clone(),
                pipeline_id: r.pipeline_id.clone(),
                release_version: r.release_version.clone(),
                status: r.status.to_string(),
                version: r.version,
                await_unit_id: r.await_unit_id.clone(),
                last_transition_key: r.last_transition_key.clone(),
            })
    }

    /// Feeds the bridge every record change and token registration since last time, in order,
    /// and carries out its decisions. Returns whether it did anything.
    fn run_bridge(&mut self) -> bool {
        let mut acted = false;
        let transitions: Vec<_> =
            self.host.coordinator().log().transitions()[self.log_cursor..].to_vec();
        self.log_cursor += transitions.len();
        for t in transitions {
            let key = (t.tenant_id.clone(), t.execution_id.clone());
            let Some(current) = self.image(&t.tenant_id, &t.execution_id) else {
                continue;
            };
            // A stream record's new image: the committed values of this write, plus fields the
            // log does not carry, read from the record.
            let new = RecordImage {
                status: t.status.to_string(),
                version: t.version,
                await_unit_id: t.await_unit_id.clone().or(current.await_unit_id.clone()),
                ..current
            };
            let old = self.images.insert(key, new.clone());
            let token = self.wakeup.token(&t.tenant_id, &t.execution_id);
            for action in decide(&BridgeEvent::RecordChanged { old, new }, token.as_ref()) {
                acted |= self.execute(action);
            }
        }
        let tokens: Vec<TokenRow> = std::mem::take(&mut self.tokens);
        for token in tokens {
            let record = self.image(&token.tenant_id, &token.execution_id);
            for action in decide(&BridgeEvent::TokenRegistered { token, record }, None) {
                acted |= self.execute(action);
            }
        }
        acted
    }

    fn execute(&mut self, action: BridgeAction) -> bool {
        let now = self.now_ms();
        match action {
            BridgeAction::StartDriver {
                tenant_id,
                execution_id,
                pipeline_id,
                release_version,
                lineage,
            } => {
                if self.faults.plan.lose_redrive_starts && lineage != execution_id {
                    self.push(vec![Entry::Bridge {
                        at_ms: now,
                        what: format!("start of {lineage} lost (injected fault)"),
                    }]);
                    return false;
                }
                let Some(m) = self.releases.iter().find(|r| {
                    r.identity.pipeline_id == pipeline_id
                        && r.identity.release_version == release_version
                }) else {
                    self.push(vec![Entry::Bridge {
                        at_ms: now,
                        what: format!("no driver deployed for release {release_version}"),
                    }]);
                    return false;
                };
                let input = BridgeAction::driver_input(&tenant_id, &execution_id, &lineage);
                let what = match self
                    .engine
                    .start_execution(&m.driver_arn.clone(), &lineage, input)
                {
                    Ok(_) => format!("start driver {lineage}"),
                    Err(e) => format!("start driver {lineage}: {e} (already started: done)"),
                };
                self.push(vec![Entry::Bridge { at_ms: now, what }]);
                true
            }
            BridgeAction::Wake { task_token, output } => {
                if self.faults.plan.lose_wakeups {
                    self.push(vec![Entry::Bridge {
                        at_ms: now,
                        what: "wakeup lost (injected fault)".to_string(),
                    }]);
                    return false;
                }
                let what = match self.engine.send_task_success(&task_token, output) {
                    Ok(()) => "wake parked driver".to_string(),
                    Err(e) => format!("wake: {e} (token already closed: done)"),
                };
                self.push(vec![Entry::Bridge { at_ms: now, what }]);
                true
            }
        }
    }
}
