//! The replay engine as the gateway world's engine (`crate::gateway::engine::GatewayEngine`):
//! gateway drivers (`GatewayProgram`) as durable executions of one published function version,
//! their steps reaching TPF's gateway through the world's host, callbacks completed and failed
//! as `SendDurableExecutionCallback{Success,Failure}`, stops, and the callback's history state
//! as TPF's host reads it (`tpf_sfn_wakeup::provider::durable_callback_state`).

use std::collections::HashMap;
use std::rc::Rc;

use durable_interp::{
    error, ApiError, Effects, Engine, Execution, ExecutionStatus, StepCall, StepError, StepHandler,
    OPERATION_CAP,
};
use serde_json::Value;
use tpf_durable_driver::GatewayRun;
use tpf_sfn_wakeup::provider::WakeEngine;
use tpf_sfn_wakeup::provider::{durable_callback_state, DurableEvent, ProviderState};

use super::gateway::{gateway_step, GatewayProgram};
use crate::gateway::engine::{
    DriverStatus, DriverView, EngineError, GatewayEngine, GatewayHost, HistorySize,
    ProviderRefusal, Started,
};

/// History events (all drivers) and invocations after which the engine stops: far above any
/// catalogue scenario, low enough that a driver that never stops gets a verdict.
const EVENT_BUDGET: usize = 200_000;
const INVOCATION_BUDGET: u64 = 50_000;

/// The gateway driver's steps, reaching TPF through the world's host.
struct HostSteps<'h>(&'h mut dyn GatewayHost);

impl StepHandler for HostSteps<'_> {
    fn step(&mut self, call: &StepCall<'_>, effects: &mut Effects) -> Result<Value, StepError> {
        gateway_step(call, effects, self.0)
            .unwrap_or_else(|| Err(StepError(format!("not a gateway step: {}", call.payload))))
    }
}

pub struct DurableGatewayEngine {
    engine: Engine,
    function_arn: String,
    target_ms: i64,
    last: HashMap<String, ExecutionStatus>,
    /// The deployment's scheduled sweep the driver runs beside (its period).
    scheduled_sweep_ms: Option<i64>,
}

impl DurableGatewayEngine {
    /// One published version running the gateway driver against `gateway_arn`.
    pub fn new(gateway_arn: &str, run: GatewayRun, start_ms: i64) -> Self {
        Self::with_program(
            Rc::new(GatewayProgram {
                gateway_arn: gateway_arn.to_owned(),
                run,
            }),
            start_ms,
        )
    }

    /// One published version running `program` (a test's driver with one of TPF's host's
    /// gaps, on the same engine and host).
    pub fn with_program(program: Rc<dyn durable_interp::Program>, start_ms: i64) -> Self {
        let mut engine = Engine::new(start_ms);
        engine.set_budgets(Some(EVENT_BUDGET), Some(INVOCATION_BUDGET));
        let function_arn = engine.publish_version("tpf-gateway-driver", program);
        Self {
            engine,
            function_arn,
            target_ms: start_ms,
            last: HashMap::new(),
            scheduled_sweep_ms: None,
        }
    }

    /// The deployment sweeps TPF every `seconds` (the wake-path stack's schedule), which the
    /// world then runs; the driver's `GatewayRun::scheduled_sweep` says whether it was compiled
    /// for it.
    pub fn with_scheduled_sweep(mut self, seconds: Option<u64>) -> Self {
        self.scheduled_sweep_ms =
            seconds.map(|s| i64::try_from(s.saturating_mul(1000)).unwrap_or(i64::MAX));
        self
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }
}

fn refusal(e: ApiError) -> ProviderRefusal {
    ProviderRefusal {
        code: e.code.to_owned(),
        message: e.message,
    }
}

/// `GetDurableExecution`'s status word.
fn provider_status(s: ExecutionStatus) -> (DriverStatus, &'static str) {
    match s {
        ExecutionStatus::Running => (DriverStatus::Running, "RUNNING"),
        ExecutionStatus::Succeeded => (DriverStatus::Succeeded, "SUCCEEDED"),
        ExecutionStatus::Failed => (DriverStatus::Failed, "FAILED"),
        ExecutionStatus::Stopped => (DriverStatus::Stopped, "STOPPED"),
    }
}

fn view(x: &Execution) -> DriverView {
    let (status, word) = provider_status(x.status);
    DriverView {
        arn: x.arn.clone(),
        name: x.name.clone(),
        input: x.input.to_string(),
        status,
        provider_status: word.to_owned(),
        output: x.result.as_ref().map(Value::to_string),
        error: x.error.as_ref().map(|f| (f.error.clone(), f.cause.clone())),
        started_at_ms: x.start_ms,
        ended_at_ms: x.end_ms,
        history: HistorySize {
            written: x.operations_billed,
            limit: OPERATION_CAP,
            unit: "operations",
            capped: x.status == ExecutionStatus::Failed
                && x.error
                    .as_ref()
                    .is_some_and(|e| e.error == error::OPERATION_LIMIT),
        },
    }
}

impl GatewayEngine for DurableGatewayEngine {
    fn kind(&self) -> WakeEngine {
        WakeEngine::Durable
    }

    fn start(&mut self, name: &str, input_json: &str, _: i64) -> Result<Started, EngineError> {
        let input: Value =
            serde_json::from_str(input_json).map_err(|e| EngineError(e.to_string()))?;
        let started = self
            .engine
            .start_execution(&self.function_arn, name, input)
            .map_err(|e| EngineError(e.to_string()))?;
        Ok(if started.existing {
            Started::Existing(started.arn)
        } else {
            Started::New(started.arn)
        })
    }

    fn send_callback_success(
        &mut self,
        callback_id: &str,
        result_json: &str,
        _: i64,
    ) -> Result<(), ProviderRefusal> {
        let result: Value = serde_json::from_str(result_json).map_err(|e| ProviderRefusal {
            code: "InvalidParameterValueException".into(),
            message: e.to_string(),
        })?;
        self.engine
            .send_callback_success(callback_id, result)
            .map_err(refusal)
    }

    fn send_callback_failure(
        &mut self,
        callback_id: &str,
        error: &str,
        _: &str,
        _: i64,
    ) -> Result<(), ProviderRefusal> {
        self.engine
            .send_callback_failure(callback_id, error)
            .map_err(refusal)
    }

    fn stop(&mut self, execution_arn: &str, _: i64) -> Result<(), ProviderRefusal> {
        self.engine
            .stop_execution(execution_arn, "Stopped", "stopped by the operator")
            .map_err(refusal)
    }

    fn driver(&self, execution_arn: &str) -> Option<DriverView> {
        self.engine.execution(execution_arn).map(view)
    }

    fn drivers(&self) -> Vec<DriverView> {
        self.engine.executions().iter().map(view).collect()
    }

    fn callback_state(&self, callback_id: &str) -> ProviderState {
        let owner = self.engine.executions().iter().find(|x| {
            x.ops
                .iter()
                .any(|o| o.callback_id.as_deref() == Some(callback_id))
        });
        let Some(x) = owner else {
            return durable_callback_state(None, callback_id);
        };
        let ids: Vec<String> = x
            .history
            .iter()
            .map(|e| e.operation.map(|o| o.to_string()).unwrap_or_default())
            .collect();
        let events: Vec<DurableEvent<'_>> = x
            .history
            .iter()
            .zip(&ids)
            .map(|(e, id)| DurableEvent {
                event_type: e.event_type,
                id,
                callback_id: (e.event_type == durable_interp::event::CALLBACK_STARTED)
                    .then_some(e.detail.as_deref())
                    .flatten(),
            })
            .collect();
        durable_callback_state(Some(&events), callback_id)
    }

    fn take_status_changes(&mut self) -> Vec<String> {
        let mut changed = Vec::new();
        for x in self.engine.executions() {
            if self.last.get(&x.arn) != Some(&x.status) {
                self.last.insert(x.arn.clone(), x.status);
                changed.push(x.arn.clone());
            }
        }
        changed
    }

    fn run_until_idle(&mut self, host: &mut dyn GatewayHost) -> Result<(), EngineError> {
        let mut steps = HostSteps(host);
        self.engine.advance_to(self.target_ms, &mut steps);
        self.engine.run_until_idle(&mut steps);
        if self.engine.budget_spent() {
            return Err(EngineError(format!(
                "the drivers wrote {EVENT_BUDGET} history events or ran {INVOCATION_BUDGET} invocations: the engine stopped"
            )));
        }
        Ok(())
    }

    fn next_timer(&self) -> Option<i64> {
        self.engine.next_timer()
    }

    fn advance_to(&mut self, now_ms: i64) {
        self.target_ms = self.target_ms.max(now_ms);
    }

    fn scheduled_sweep_ms(&self) -> Option<i64> {
        self.scheduled_sweep_ms
    }
}
