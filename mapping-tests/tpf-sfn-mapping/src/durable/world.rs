//! The world a durable scenario runs in: the replay engine with one published function version
//! per release, the TPF model behind Action API v1, the wakeup table, the bridge and a scheduled
//! sweeper function — all on one virtual clock.

use std::collections::BTreeMap;

use durable_interp::{Effects, Engine, ExecutionStatus, StepCall, StepHandler};
use serde_json::{json, Value};
use tpf_durable_driver::ops::{ActionCall, CallOutcome, GenerationRow, ParkRequest};
use tpf_durable_driver::DriverInput;
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;
use tpf_sfn_compiler::sfn::states::sweeper as sweeper_states;
use tpf_sfn_wakeup::bridge::{decide, BridgeAction, BridgeEvent, RecordImage, TokenRow};
use tpf_sfn_wakeup::sweeper::{self, SweepAction};
use tpf_wire::action::{
    await_field, field, ActionError, ProcessWorkItemResponse, SweepOnceRequest,
};
use tpf_wire::wakeup::{self, attr};
use tpf_wire::Identity;

use super::program::{payload, DriverProgram};
use super::Driver;
use crate::harness::bindings::{process_work_item, summary, take_lease_first, Hooks};
use crate::harness::faults::{Fault, FaultPlan, FaultState};
use crate::harness::trace::{Entry, Trace};
use crate::harness::wakeup::WakeupTable;

/// The fault a call's trace entry names when the function died after delivering it.
pub const CRASH: &str = "crash";

/// The driver function's name; each release is one published version of it.
pub const FUNCTION: &str = "tpf-durable-driver";

/// One release's published function version.
#[derive(Debug, Clone)]
pub struct Release {
    pub identity: Identity,
    pub function_arn: String,
}

/// A write of a driver row: the table it went to. The checks read these to see the driver
/// touches nothing but the wakeup table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableWrite {
    pub at_ms: i64,
    pub execution: String,
    pub table: String,
    pub row: &'static str,
}

/// Trace entries one step produced, to be placed after its `StepStarted` event.
struct StepEntries {
    execution_arn: String,
    operation: usize,
    entries: Vec<Entry>,
}

/// The handler over the world's fields, borrowed apart from the engine that calls it.
macro_rules! steps {
    ($w:ident) => {
        Steps {
            host: &mut $w.host,
            wakeup: &mut $w.wakeup,
            faults: &mut $w.faults,
            hooks: &mut $w.hooks,
            pending: &mut $w.pending,
            tokens: &mut $w.tokens,
            writes: &mut $w.writes,
            table: &$w.table,
        }
    };
}

pub struct DurableWorld {
    pub engine: Engine,
    pub host: ActionHost<InMemoryStore>,
    pub wakeup: WakeupTable,
    pub faults: FaultState,
    pub trace: Trace,
    pub hooks: Hooks,
    pub releases: Vec<Release>,
    pub tenant: String,
    pub writes: Vec<TableWrite>,
    /// The wakeup table's name: the one table the driver may write.
    pub table: String,
    pub sweep_limit: usize,
    pub sweep_every_ms: Option<i64>,
    next_sweep_ms: Option<i64>,
    sweeps: u32,
    log_cursor: usize,
    event_cursor: usize,
    images: BTreeMap<(String, String), RecordImage>,
    pending: Vec<StepEntries>,
    tokens: Vec<TokenRow>,
}

impl DurableWorld {
    pub fn new(
        engine: Engine,
        host: ActionHost<InMemoryStore>,
        tenant: &str,
        faults: FaultPlan,
        table: &str,
        sweep_limit: usize,
    ) -> DurableWorld {
        let start = engine.now_ms();
        DurableWorld {
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
            writes: Vec::new(),
            table: table.to_string(),
            sweep_limit,
            sweep_every_ms: None,
            next_sweep_ms: None,
            sweeps: 0,
            log_cursor: 0,
            event_cursor: 0,
            images: BTreeMap::new(),
            pending: Vec::new(),
            tokens: Vec::new(),
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.engine.now_ms()
    }

    /// Publishes one release's driver as a new version of the driver function.
    pub fn publish(&mut self, identity: Identity, driver: &Driver) {
        let program = DriverProgram {
            spec: driver.spec.clone(),
            variant: driver.variant.clone(),
        };
        let function_arn = self
            .engine
            .publish_version(FUNCTION, std::rc::Rc::new(program));
        self.releases.push(Release {
            identity,
            function_arn,
        });
    }

    pub fn schedule_sweeper(&mut self, every_ms: i64) {
        self.sweep_every_ms = Some(every_ms);
        self.next_sweep_ms = Some(self.now_ms() + every_ms);
    }

    pub fn push(&mut self, entries: Vec<Entry>) {
        self.trace.entries.extend(entries);
    }

    /// Runs everything runnable at the current instant: invocations, due timers, the bridge's
    /// reactions — until nothing changes.
    pub fn settle(&mut self) {
        for _ in 0..10_000 {
            let mut s = steps!(self);
            self.engine.run_until_idle(&mut s);
            if self.engine.budget_spent() {
                self.collect_events();
                return;
            }
            let now = self.engine.now_ms();
            let mut progressed = false;
            while self.engine.next_timer().is_some_and(|t| t <= now) && !self.engine.budget_spent()
            {
                let mut s = steps!(self);
                self.engine.step_timer(&mut s);
                progressed = true;
            }
            self.collect_events();
            progressed |= self.run_bridge();
            if !progressed {
                return;
            }
        }
    }

    pub fn next_event_ms(&self) -> Option<i64> {
        [self.engine.next_timer(), self.next_sweep_ms]
            .into_iter()
            .flatten()
            .min()
    }

    /// Moves the clock to `t`, firing what is due on the way and settling after each step.
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
                        let mut s = steps!(self);
                        self.engine.advance_to(next, &mut s);
                        self.collect_events();
                        self.sweep();
                    } else {
                        let mut s = steps!(self);
                        self.engine.step_timer(&mut s);
                    }
                }
                _ => {
                    let mut s = steps!(self);
                    self.engine.advance_to(t, &mut s);
                    self.settle();
                    return;
                }
            }
        }
    }

    /// One run of each release's sweeper function.
    fn sweep(&mut self) {
        self.sweeps += 1;
        let now = self.now_ms();
        self.next_sweep_ms = self.sweep_every_ms.map(|p| now + p);
        let name = format!("sweep-{}", self.sweeps);
        for r in self.releases.clone() {
            let req = SweepOnceRequest {
                limit: self.sweep_limit,
                pipeline_id: Some(r.identity.pipeline_id.clone()),
                contract_version: Some(r.identity.contract_version.clone()),
                release_version: Some(r.identity.release_version.clone()),
                idempotency_key: Some(name.clone()),
            };
            let before = self.host.coordinator().log().transitions().len();
            let result = self.host.sweep_once(&req, now);
            let shown = summary(&result.as_ref().map(|r| r.to_json()).map_err(Clone::clone));
            let mut entries = vec![Entry::Call {
                at_ms: now,
                execution: name.clone(),
                action: "sweep-once".into(),
                key: Some(name.clone()),
                identity: Some([
                    r.identity.pipeline_id.clone(),
                    r.identity.contract_version.clone(),
                    r.identity.release_version.clone(),
                ]),
                status: None,
                next_due_ms: None,
                wake_in_s: None,
                outcome: shown,
                fault: None,
            }];
            entries.extend(crate::harness::actors::records_since(&self.host, before));
            self.push(entries);
            let Ok(answer) = result else { continue };
            for due in answer.due {
                let pointer = self.wakeup.driver(&due.tenant_id, &due.execution_id);
                let running = pointer.as_deref().is_some_and(|p| {
                    self.engine
                        .execution(p)
                        .is_some_and(|x| x.status == ExecutionStatus::Running)
                });
                let token = self.wakeup.token(&due.tenant_id, &due.execution_id);
                let action = sweeper::decide(
                    &r.identity,
                    &due,
                    pointer.as_deref(),
                    running,
                    token.as_ref(),
                );
                let (state, what) = match action {
                    SweepAction::OtherRelease | SweepAction::Live => continue,
                    SweepAction::Wake { callback_id } => {
                        let r = self.engine.send_callback_success(
                            &callback_id,
                            tpf_sfn_wakeup::bridge::woken_by("sweeper"),
                        );
                        (sweeper_states::WAKE, r.err().map(|e| e.to_string()))
                    }
                    SweepAction::Recover { lineage } => {
                        let input =
                            BridgeAction::driver_input(&due.tenant_id, &due.execution_id, &lineage);
                        let r = self
                            .engine
                            .start_execution(&r.function_arn, &lineage, input);
                        (
                            sweeper_states::START_RECOVERY,
                            r.err().map(|e| e.to_string()),
                        )
                    }
                };
                self.push(vec![Entry::Driver {
                    at_ms: now,
                    execution: name.clone(),
                    sweeper: true,
                    event: durable_interp::event::STEP_STARTED,
                    state: Some(state.to_string()),
                    detail: what,
                }]);
            }
        }
        self.settle();
    }

    /// Moves new engine history into the trace, placing each step's entries right after its
    /// `StepStarted` event.
    fn collect_events(&mut self) {
        let (events, cursor) = self.engine.events_since(self.event_cursor);
        let entries = &mut self.trace.entries;
        let mut last: Option<(&str, &str)> = None;
        for (arn, ev) in events {
            let name = match last {
                Some((a, n)) if a == arn => n,
                _ => {
                    let n = self.engine.execution(arn).map_or(arn, |x| x.name.as_str());
                    last = Some((arn, n));
                    n
                }
            };
            use durable_interp::event as e;
            let detail = match ev.event_type {
                e::STEP_FAILED
                | e::EXECUTION_FAILED
                | e::EXECUTION_STOPPED
                | e::CALLBACK_FAILED
                | e::CONTEXT_FAILED
                | e::INVOCATION_COMPLETED => ev.detail.clone(),
                _ => None,
            };
            entries.push(Entry::Driver {
                at_ms: ev.timestamp_ms,
                execution: name.to_string(),
                sweeper: false,
                event: ev.event_type,
                state: ev.name.clone(),
                detail,
            });
            if ev.event_type == e::STEP_STARTED {
                if let Some(i) = self
                    .pending
                    .iter()
                    .position(|p| p.execution_arn == arn && Some(p.operation) == ev.operation)
                {
                    entries.extend(self.pending.remove(i).entries);
                }
            }
        }
        self.event_cursor = cursor;
        for p in self.pending.drain(..) {
            entries.extend(p.entries);
        }
    }

    fn image(&self, tenant: &str, execution_id: &str) -> Option<RecordImage> {
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

    /// Feeds the bridge every record change and token registration since last time, as the
    /// Step Functions world does, and carries out its decisions on this engine.
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
                let Some(f) = self
                    .releases
                    .iter()
                    .find(|r| {
                        r.identity.pipeline_id == pipeline_id
                            && r.identity.release_version == release_version
                    })
                    .map(|r| r.function_arn.clone())
                else {
                    self.push(vec![Entry::Bridge {
                        at_ms: now,
                        what: format!("no driver version published for release {release_version}"),
                    }]);
                    return false;
                };
                let input = BridgeAction::driver_input(&tenant_id, &execution_id, &lineage);
                let what = match self.engine.start_execution(&f, &lineage, input) {
                    Ok(s) if s.existing => {
                        format!("start driver {lineage} (already started: done)")
                    }
                    Ok(_) => format!("start driver {lineage}"),
                    Err(e) => format!("start driver {lineage}: {e}"),
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
                let what = match self.engine.send_callback_success(&task_token, output) {
                    Ok(()) => "wake parked driver".to_string(),
                    Err(e) => format!("wake: {e} (callback already closed: done)"),
                };
                self.push(vec![Entry::Bridge { at_ms: now, what }]);
                true
            }
        }
    }
}

/// Steps' effects: action calls over the binding (with injected faults), the driver's rows in
/// the wakeup table, the hand-over's start.
struct Steps<'a> {
    host: &'a mut ActionHost<InMemoryStore>,
    wakeup: &'a mut WakeupTable,
    faults: &'a mut FaultState,
    hooks: &'a mut Hooks,
    pending: &'a mut Vec<StepEntries>,
    tokens: &'a mut Vec<TokenRow>,
    writes: &'a mut Vec<TableWrite>,
    table: &'a str,
}

fn s(v: impl Into<String>) -> Value {
    json!({ "S": v.into() })
}

fn n(v: impl ToString) -> Value {
    json!({ "N": v.to_string() })
}

impl Steps<'_> {
    /// Writes a driver row where the step says; only the wakeup table holds rows the world
    /// reads, any other table is recorded for the checks and otherwise ignored.
    fn write(
        &mut self,
        call: &StepCall<'_>,
        table: &str,
        row: &'static str,
        item: Value,
    ) -> Option<(String, String)> {
        self.writes.push(TableWrite {
            at_ms: call.now_ms,
            execution: call.execution_name.to_string(),
            table: table.to_string(),
            row,
        });
        (table == self.table)
            .then(|| self.wakeup.put(&item))
            .flatten()
    }

    fn register(
        &mut self,
        call: &StepCall<'_>,
        table: &str,
        row: GenerationRow,
    ) -> Result<Value, String> {
        let item = json!({
            wakeup::PK: s(wakeup::pk(&row.tenant_id, &row.execution_id)),
            wakeup::SK: s(wakeup::DRIVER_ROW),
            attr::EXECUTION_ARN: s(call.execution_arn),
            attr::STATE_MACHINE_ARN: s(call.function_arn),
            attr::LINEAGE: s(row.lineage),
            attr::GENERATION: n(row.generation),
            attr::RELEASE_VERSION: s(row.release_version),
        });
        self.write(call, table, wakeup::DRIVER_ROW, item);
        Ok(Value::Null)
    }

    fn park(
        &mut self,
        call: &StepCall<'_>,
        table: &str,
        park: ParkRequest,
    ) -> Result<Value, String> {
        if self.faults.next_registration_fails() {
            return Err(
                "ResourceNotFoundException: Requested resource not found (injected fault)".into(),
            );
        }
        let mut item = json!({
            wakeup::PK: s(wakeup::pk(&park.tenant_id, &park.execution_id)),
            wakeup::SK: s(wakeup::WAKEUP_ROW),
            attr::TASK_TOKEN: s(call.callback_id.unwrap_or_default()),
            attr::UNIT_ID: s(park.unit_id),
            attr::EXECUTION_ARN: s(call.execution_arn),
            attr::TPF_VERSION: n(park.tpf_version),
            attr::EXPIRES_AT: n(park.expires_at_epoch_seconds),
        });
        if let Some(step) = park.step_name {
            item[attr::STEP_NAME] = s(step);
        }
        if self.write(call, table, wakeup::WAKEUP_ROW, item).is_some() {
            if let Some(row) = self.wakeup.token(&park.tenant_id, &park.execution_id) {
                self.tokens.push(row);
            }
        }
        Ok(Value::Null)
    }

    /// One delivery of process-work-item, with this call's injected fault.
    fn action_call(
        &mut self,
        call: &StepCall<'_>,
        a: ActionCall,
        effects: &mut Effects,
    ) -> Result<Value, String> {
        let key = a.request.idempotency_key.clone().unwrap_or_default();
        let body = serde_json::to_value(&a.request).unwrap_or(Value::Null);
        let mut entries = take_lease_first(
            self.host,
            self.hooks,
            &a.tenant_id,
            &a.execution_id,
            call.now_ms,
        );
        let fault = self.faults.next(&format!("process-work-item|{key}"));
        let before = self.host.coordinator().log().transitions().len();
        let deliver = |host: &mut ActionHost<InMemoryStore>, hooks: &mut Hooks| {
            process_work_item(
                host,
                hooks,
                &a.tenant_id,
                &a.execution_id,
                body.clone(),
                call.now_ms,
            )
        };
        let (result, shown) = match fault {
            Some(Fault::Unavailable) => (None, "unavailable".to_string()),
            Some(Fault::LostReply) => {
                let applied = deliver(self.host, self.hooks);
                (None, summary(&applied))
            }
            Some(Fault::Duplicate) => {
                let first = deliver(self.host, self.hooks);
                let second = deliver(self.host, self.hooks);
                let shown = format!("{} / {}", summary(&first), summary(&second));
                (Some(second), shown)
            }
            None => {
                let r = deliver(self.host, self.hooks);
                let shown = summary(&r);
                (Some(r), shown)
            }
        };
        // The function dies after a clean delivery: TPF applied the call, the step's checkpoint
        // is lost, and the next invocation delivers it again with the same key.
        let crashed = fault.is_none() && self.faults.next_call_crashes();
        if crashed {
            effects.crash_after();
        }
        let answered = result.as_ref().and_then(|r| r.as_ref().ok());
        entries.push(Entry::Call {
            at_ms: call.now_ms,
            execution: call.execution_name.to_string(),
            action: "process-work-item".into(),
            key: (!key.is_empty()).then_some(key),
            identity: Some([
                a.request.pipeline_id.clone(),
                a.request.contract_version.clone(),
                a.request.release_version.clone(),
            ]),
            status: answered
                .and_then(|v| v.get(field::STATUS))
                .and_then(Value::as_str)
                .map(str::to_string),
            next_due_ms: answered
                .and_then(|v| v.get(field::NEXT_DUE_AT))
                .and_then(Value::as_str)
                .and_then(tpf_wire::action::parse_rfc3339_ms),
            wake_in_s: answered
                .and_then(|v| v.get(field::AWAIT)?.get(await_field::WAKE_IN_SECONDS))
                .and_then(Value::as_i64),
            outcome: shown,
            fault: if crashed {
                Some(CRASH.to_string())
            } else {
                fault.map(|f| format!("{f:?}").to_lowercase())
            },
        });
        entries.extend(crate::harness::actors::records_since(self.host, before));
        self.pending.push(StepEntries {
            execution_arn: call.execution_arn.to_string(),
            operation: call.operation,
            entries,
        });
        let outcome = match result {
            None => CallOutcome::Transport {
                message: match fault {
                    Some(Fault::LostReply) => "the action's reply was lost".into(),
                    _ => "503 Service Unavailable".into(),
                },
            },
            Some(Ok(v)) => match serde_json::from_value::<ProcessWorkItemResponse>(v) {
                Ok(response) => CallOutcome::Answer {
                    at_ms: call.now_ms,
                    response: Box::new(response),
                },
                Err(e) => CallOutcome::Transport {
                    message: format!("TPF's answer does not decode: {e}"),
                },
            },
            Some(Err(ActionError::Transport(message))) => CallOutcome::Transport { message },
            Some(Err(e)) => CallOutcome::Refused {
                code: e.code().to_string(),
                message: e.body().to_string(),
            },
        };
        serde_json::to_value(outcome).map_err(|e| e.to_string())
    }
}

fn take<T: serde::de::DeserializeOwned>(p: &Value, key: &str) -> Option<T> {
    serde_json::from_value(p.get(key)?.clone()).ok()
}

impl StepHandler for Steps<'_> {
    fn step(&mut self, call: &StepCall<'_>, effects: &mut Effects) -> Result<Value, String> {
        let p = call.payload;
        let table = p
            .get(payload::TABLE)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(a) = take::<ActionCall>(p, payload::CALL) {
            return self.action_call(call, a, effects);
        }
        if let Some(row) = take::<GenerationRow>(p, payload::ROW) {
            return self.register(call, &table, row);
        }
        if let Some(park) = take::<ParkRequest>(p, payload::PARK) {
            return self.park(call, &table, park);
        }
        if let Some(next) = take::<DriverInput>(p, payload::NEXT) {
            let name = next.execution_name();
            let input = serde_json::to_value(&next).map_err(|e| e.to_string())?;
            effects.start_execution(call.function_arn, &name, input);
            return Ok(json!({ "started": name }));
        }
        Err(format!(
            "step {:?} asks for no effect this world knows",
            call.name
        ))
    }
}
