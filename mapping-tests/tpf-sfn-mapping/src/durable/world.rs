//! The replay engine as the world's engine: one published function version per release, the
//! steps' effects over the world's TPF and wakeup table, the sweeper function run on its
//! schedule, and the engine's history read into the trace.

use durable_interp::{Effects, Engine, ExecutionStatus, StepCall, StepError, StepHandler};
use serde_json::{json, Value};
use tpf_durable_driver::ops::{ActionCall, CallOutcome, GenerationRow, ParkRequest};
use tpf_durable_driver::DriverInput;
use tpf_model::actions::ActionHost;
use tpf_model::store::InMemoryStore;
use tpf_sfn_compiler::sfn::states::sweeper as sweeper_states;
use tpf_sfn_wakeup::bridge::{BridgeAction, TokenRow};
use tpf_sfn_wakeup::sweeper::{self, SweepAction};
use tpf_wire::action::{
    await_field, field, ActionError, ProcessWorkItemResponse, SweepOnceRequest,
};
use tpf_wire::wakeup::{self, attr};
use tpf_wire::Identity;

use super::program::{payload, DriverProgram};
use super::Driver;
use crate::harness::bindings::{process_work_item, summary, take_lease_first, Hooks};
use crate::harness::faults::{Fault, FaultState};
use crate::harness::trace::Entry;
use crate::harness::wakeup::WakeupTable;
use crate::harness::world::{self, Deployed, WorldEngine};

/// The world on the replay engine.
pub type DurableWorld = world::World<Engine>;

/// The fault a call's trace entry names when the function died after delivering it.
pub const CRASH: &str = "crash";

/// One release's published function version.
#[derive(Debug, Clone)]
pub struct Release {
    pub identity: Identity,
    pub function_arn: String,
}

impl Deployed for Release {
    fn identity(&self) -> &Identity {
        &self.identity
    }
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

/// The world's state only this engine's steps read and write.
pub struct Local {
    /// Every driver row the steps wrote, wherever to.
    pub writes: Vec<TableWrite>,
    /// The wakeup table's name: the one table the driver may write.
    pub table: String,
    /// How many due executions one sweep asks TPF for.
    pub sweep_limit: usize,
    pending: Vec<StepEntries>,
}

impl Local {
    pub fn new(table: &str, sweep_limit: usize) -> Local {
        Local {
            writes: Vec::new(),
            table: table.to_string(),
            sweep_limit,
            pending: Vec::new(),
        }
    }
}

/// The handler over the world's fields, borrowed apart from the engine that calls it.
macro_rules! steps {
    ($w:ident) => {
        Steps {
            host: &mut $w.host,
            wakeup: &mut $w.wakeup,
            faults: &mut $w.faults,
            hooks: &mut $w.hooks,
            pending: &mut $w.local.pending,
            tokens: &mut $w.tokens,
            writes: &mut $w.local.writes,
            table: &$w.local.table,
        }
    };
}

impl WorldEngine for Engine {
    type Release = Release;
    type Local = Local;
    const NOT_DEPLOYED: &'static str = "no driver version published for release";

    fn now_ms(&self) -> i64 {
        Engine::now_ms(self)
    }

    fn budget_spent(&self) -> bool {
        Engine::budget_spent(self)
    }

    fn next_timer(&self) -> Option<i64> {
        Engine::next_timer(self)
    }

    fn run_until_idle(w: &mut DurableWorld) {
        let mut s = steps!(w);
        w.engine.run_until_idle(&mut s);
    }

    fn step_timer(w: &mut DurableWorld) {
        let mut s = steps!(w);
        w.engine.step_timer(&mut s);
    }

    fn advance_to(w: &mut DurableWorld, t: i64) {
        let mut s = steps!(w);
        w.engine.advance_to(t, &mut s);
    }

    fn sweep_at(w: &mut DurableWorld, at: i64) {
        let mut s = steps!(w);
        w.engine.advance_to(at, &mut s);
        <Engine as WorldEngine>::collect_events(w);
        sweep(w);
    }

    /// Moves new engine history into the trace, placing each step's entries right after its
    /// `StepStarted` event.
    fn collect_events(w: &mut DurableWorld) {
        let (events, cursor) = w.engine.events_since(w.event_cursor);
        let entries = &mut w.trace.entries;
        let pending = &mut w.local.pending;
        let mut last: Option<(&str, &str)> = None;
        for (arn, ev) in events {
            let name = match last {
                Some((a, n)) if a == arn => n,
                _ => {
                    let n = w.engine.execution(arn).map_or(arn, |x| x.name.as_str());
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
                if let Some(i) = pending
                    .iter()
                    .position(|p| p.execution_arn == arn && Some(p.operation) == ev.operation)
                {
                    entries.extend(pending.remove(i).entries);
                }
            }
        }
        w.event_cursor = cursor;
        for p in pending.drain(..) {
            entries.extend(p.entries);
        }
    }

    fn start_driver(w: &mut DurableWorld, release: usize, lineage: &str, input: Value) -> String {
        let f = w.releases[release].function_arn.clone();
        match w.engine.start_execution(&f, lineage, input) {
            Ok(s) if s.existing => {
                format!("start driver {lineage} (already started: done)")
            }
            Ok(_) => format!("start driver {lineage}"),
            Err(e) => format!("start driver {lineage}: {e}"),
        }
    }

    fn wake(w: &mut DurableWorld, token: &str, output: Value) -> String {
        match w.engine.send_callback_success(token, output) {
            Ok(()) => "wake parked driver".to_string(),
            Err(e) => format!("wake: {e} (callback already closed: done)"),
        }
    }
}

impl DurableWorld {
    /// Publishes one release's driver as a new version of the driver function.
    pub fn publish(&mut self, identity: Identity, driver: &Driver) {
        let program = DriverProgram {
            spec: driver.spec.clone(),
            variant: driver.variant.clone(),
        };
        let function_arn = self
            .engine
            .publish_version(&driver.function, std::rc::Rc::new(program));
        self.releases.push(Release {
            identity,
            function_arn,
        });
    }
}

/// One run of each release's sweeper function.
fn sweep(w: &mut DurableWorld) {
    let name = w.next_sweep();
    let now = w.now_ms();
    for r in w.releases.clone() {
        let req = SweepOnceRequest {
            limit: w.local.sweep_limit,
            pipeline_id: Some(r.identity.pipeline_id.clone()),
            contract_version: Some(r.identity.contract_version.clone()),
            release_version: Some(r.identity.release_version.clone()),
            idempotency_key: Some(name.clone()),
        };
        let before = w.host.coordinator().log().transitions().len();
        let result = w.host.sweep_once(&req, now);
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
        entries.extend(crate::harness::actors::records_since(&w.host, before));
        w.push(entries);
        let Ok(answer) = result else { continue };
        for due in answer.due {
            let pointer = w.wakeup.driver(&due.tenant_id, &due.execution_id);
            let running = pointer.as_deref().is_some_and(|p| {
                w.engine
                    .execution(p)
                    .is_some_and(|x| x.status == ExecutionStatus::Running)
            });
            let token = w.wakeup.token(&due.tenant_id, &due.execution_id);
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
                    let r = w.engine.send_callback_success(
                        &callback_id,
                        tpf_sfn_wakeup::bridge::woken_by("sweeper"),
                    );
                    (sweeper_states::WAKE, r.err().map(|e| e.to_string()))
                }
                SweepAction::Recover { lineage } => {
                    let input =
                        BridgeAction::driver_input(&due.tenant_id, &due.execution_id, &lineage);
                    let r = w.engine.start_execution(&r.function_arn, &lineage, input);
                    (
                        sweeper_states::START_RECOVERY,
                        r.err().map(|e| e.to_string()),
                    )
                }
            };
            w.push(vec![Entry::Driver {
                at_ms: now,
                execution: name.clone(),
                sweeper: true,
                event: durable_interp::event::STEP_STARTED,
                state: Some(state.to_string()),
                detail: what,
            }]);
        }
    }
    w.settle();
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
    ) -> Result<Value, StepError> {
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
    ) -> Result<Value, StepError> {
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
    ) -> Result<Value, StepError> {
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
        // The deployed function bounds its checkpoints the same way.
        serde_json::to_value(tpf_durable_driver::limits::bounded(outcome))
            .map_err(|e| StepError(e.to_string()))
    }
}

fn take<T: serde::de::DeserializeOwned>(p: &Value, key: &str) -> Option<T> {
    serde_json::from_value(p.get(key)?.clone()).ok()
}

impl StepHandler for Steps<'_> {
    fn step(&mut self, call: &StepCall<'_>, effects: &mut Effects) -> Result<Value, StepError> {
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
        Err(StepError(format!(
            "step {:?} asks for no effect this world knows",
            call.name
        )))
    }
}
