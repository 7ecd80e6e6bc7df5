//! The world a scenario runs in, whatever the engine: the engine with each release's program
//! deployed, the TPF model behind Action API v1, the wakeup table, the bridge and a scheduled
//! sweeper — all on one virtual clock. The loop that runs them (settle, advance the clock, feed
//! the bridge, carry out its decisions) is written once here; what an engine does its own way
//! (run its handlers, read its history into the trace, start and wake a driver, sweep) is its
//! [`WorldEngine`]: `crate::sfn::world` for the ASL interpreter.

use std::collections::BTreeMap;

use serde_json::Value;
use tpf_wire::Identity;

use super::bindings::Hooks;
use super::faults::{FaultPlan, FaultState};
use super::trace::{Entry, Trace};
use super::wakeup::WakeupTable;
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;
use tpf_sfn_wakeup::bridge::{decide, BridgeAction, BridgeEvent, RecordImage, TokenRow};

/// One release as an engine deployed it.
pub trait Deployed {
    fn identity(&self) -> &Identity;
}

/// What the world loop asks of an engine. The functions that run the engine's handlers take
/// the whole world, because the handlers borrow the world's other fields while the engine runs.
pub trait WorldEngine: Sized {
    /// One release's deployed program.
    type Release: Deployed + Clone;
    /// The world's state that only this engine's handlers read and write.
    type Local;
    /// What the bridge reports when no release of a record's pinned version is deployed.
    const NOT_DEPLOYED: &'static str;

    fn now_ms(&self) -> i64;
    /// The engine stopped at its budget: nothing runs any more.
    fn budget_spent(&self) -> bool;
    fn next_timer(&self) -> Option<i64>;
    /// Runs everything runnable at the current instant.
    fn run_until_idle(world: &mut World<Self>);
    /// Fires the earliest timer.
    fn step_timer(world: &mut World<Self>);
    /// Moves the engine's clock to `t`, firing what is due on the way.
    fn advance_to(world: &mut World<Self>, t: i64);
    /// Moves the clock to `at`, when the sweep is due, and runs the sweep.
    fn sweep_at(world: &mut World<Self>, at: i64);
    /// Moves new engine history into the trace.
    fn collect_events(world: &mut World<Self>);
    /// Starts the driver `lineage` on the `release`-th release; what the bridge reports.
    fn start_driver(world: &mut World<Self>, release: usize, lineage: &str, input: Value)
        -> String;
    /// Wakes the driver parked on `token`; what the bridge reports.
    fn wake(world: &mut World<Self>, token: &str, output: Value) -> String;
}

pub struct World<E: WorldEngine> {
    pub engine: E,
    pub host: ActionHost<InMemoryStore>,
    pub wakeup: WakeupTable,
    pub faults: FaultState,
    pub trace: Trace,
    pub hooks: Hooks,
    pub releases: Vec<E::Release>,
    pub tenant: String,
    /// Sweeper period; `None` runs no sweeper.
    pub sweep_every_ms: Option<i64>,
    /// The engine's own part of the world.
    pub local: E::Local,
    next_sweep_ms: Option<i64>,
    sweeps: u32,
    log_cursor: usize,
    /// How far the engine's events have been read into the trace.
    pub(crate) event_cursor: usize,
    images: BTreeMap<(String, String), RecordImage>,
    /// Wakeup tokens registered since the bridge last looked.
    pub(crate) tokens: Vec<TokenRow>,
}

impl<E: WorldEngine> World<E> {
    pub fn new(
        engine: E,
        host: ActionHost<InMemoryStore>,
        tenant: &str,
        faults: FaultPlan,
        local: E::Local,
    ) -> World<E> {
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
            local,
            next_sweep_ms: None,
            sweeps: 0,
            log_cursor: 0,
            event_cursor: 0,
            images: BTreeMap::new(),
            tokens: Vec::new(),
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.engine.now_ms()
    }

    pub fn schedule_sweeper(&mut self, every_ms: i64) {
        self.sweep_every_ms = Some(every_ms);
        self.next_sweep_ms = Some(self.now_ms() + every_ms);
    }

    /// The name of the sweep starting now, with the next one scheduled.
    pub(crate) fn next_sweep(&mut self) -> String {
        self.sweeps += 1;
        let now = self.now_ms();
        self.next_sweep_ms = self.sweep_every_ms.map(|p| now + p);
        format!("sweep-{}", self.sweeps)
    }

    pub fn push(&mut self, entries: Vec<Entry>) {
        self.trace.entries.extend(entries);
    }

    /// Runs everything runnable at the current instant: engine work, due timers, the bridge's
    /// reactions — until nothing changes.
    pub fn settle(&mut self) {
        for _ in 0..10_000 {
            E::run_until_idle(self);
            if self.engine.budget_spent() {
                // Nothing runs any more; what ran is in the trace for the checks.
                E::collect_events(self);
                return;
            }
            let now = self.engine.now_ms();
            let mut progressed = false;
            while self.engine.next_timer().is_some_and(|t| t <= now) && !self.engine.budget_spent()
            {
                E::step_timer(self);
                progressed = true;
            }
            E::collect_events(self);
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
                        E::sweep_at(self, next);
                    } else {
                        E::step_timer(self);
                    }
                }
                _ => {
                    E::advance_to(self, t);
                    self.settle();
                    return;
                }
            }
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
                let Some(release) = self.releases.iter().position(|r| {
                    r.identity().pipeline_id == pipeline_id
                        && r.identity().release_version == release_version
                }) else {
                    self.push(vec![Entry::Bridge {
                        at_ms: now,
                        what: format!("{} {release_version}", E::NOT_DEPLOYED),
                    }]);
                    return false;
                };
                let input = BridgeAction::driver_input(&tenant_id, &execution_id, &lineage);
                let what = E::start_driver(self, release, &lineage, input);
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
                let what = E::wake(self, &task_token, output);
                self.push(vec![Entry::Bridge { at_ms: now, what }]);
                true
            }
        }
    }
}
