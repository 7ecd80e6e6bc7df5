//! The ASL interpreter as the gateway world's engine: a compiled gateway driver's executions,
//! started, woken, stopped and read as Step Functions does, their Task calls reaching the
//! world through [`GatewayTasks`].

use asl_interp::{execution_arn, Engine, ExecutionStatus, SfnError};
use serde_json::Value;
use tpf_sfn_compiler::sfn::asl::StateMachine;
use tpf_sfn_wakeup::provider::WakeEngine;
use tpf_sfn_wakeup::provider::{sfn_callback_state, ProviderState};

use super::gateway::{GatewayFunctions, GatewayTasks};
use crate::gateway::engine::{
    DriverStatus, DriverView, EngineError, GatewayEngine, GatewayHost, HistorySize,
    ProviderRefusal, Started,
};

/// History events one scenario may write across its executions before the engine stops: a
/// driver that never ends gets a verdict instead of running forever.
const EVENT_BUDGET: usize = 200_000;

/// The most history events Step Functions lets one Standard execution write: it fails the
/// execution at this count.
pub const HISTORY_CAP: u64 = 25_000;

pub struct SfnGatewayEngine {
    engine: Engine,
    machine_name: String,
    machine_arn: String,
    functions: GatewayFunctions,
    /// The world's clock, reached on the next run.
    target_ms: i64,
    /// Every execution, in start order, with the status last reported as a change.
    executions: Vec<(String, Option<ExecutionStatus>)>,
    /// The history events one generation was proven to stay under (the compiled driver's
    /// `history.event-budget`), else Step Functions' cap.
    history_limit: u64,
    /// The wake-path stack's scheduled sweep the driver was compiled for.
    scheduled_sweep_ms: Option<i64>,
}

impl SfnGatewayEngine {
    /// One machine, the compiled `driver`, named `machine_name`.
    pub fn new(
        machine_name: &str,
        driver: StateMachine,
        functions: GatewayFunctions,
        start_ms: i64,
    ) -> Result<Self, EngineError> {
        let mut engine = Engine::new(start_ms, 1);
        engine.set_event_budget(Some(EVENT_BUDGET));
        let machine_arn = engine
            .create_state_machine(machine_name, driver)
            .map_err(|e| EngineError(e.to_string()))?;
        Ok(Self {
            engine,
            machine_name: machine_name.to_owned(),
            machine_arn,
            functions,
            target_ms: start_ms,
            executions: Vec::new(),
            history_limit: HISTORY_CAP,
            scheduled_sweep_ms: None,
        })
    }

    /// The driver was compiled with `sweeper.mode = "schedule"`: the world sweeps TPF every
    /// `seconds`, as the wake-path stack's schedule does.
    pub fn with_scheduled_sweep(mut self, seconds: Option<u64>) -> Self {
        self.scheduled_sweep_ms =
            seconds.map(|s| i64::try_from(s.saturating_mul(1000)).unwrap_or(i64::MAX));
        self
    }

    /// Holds every generation to `events`, the bound the compiled driver was proven to (its
    /// `history.event-budget`), rather than to Step Functions' cap.
    pub fn with_proven_history(mut self, events: u64) -> Self {
        self.history_limit = events.min(HISTORY_CAP);
        self
    }
}

impl SfnGatewayEngine {
    /// State transitions across every execution the engine ran (what Step Functions Standard
    /// bills): one per state entered.
    pub fn state_transitions(&self) -> usize {
        self.executions
            .iter()
            .map(|(arn, _)| {
                self.engine
                    .history(arn)
                    .iter()
                    .filter(|e| e.event_type.ends_with("StateEntered"))
                    .count()
            })
            .sum()
    }
}

fn refusal(e: SfnError) -> ProviderRefusal {
    ProviderRefusal {
        code: e.code().to_owned(),
        message: e.to_string(),
    }
}

fn status_of(s: ExecutionStatus) -> DriverStatus {
    match s {
        ExecutionStatus::Running => DriverStatus::Running,
        ExecutionStatus::Succeeded => DriverStatus::Succeeded,
        ExecutionStatus::Failed => DriverStatus::Failed,
        ExecutionStatus::TimedOut => DriverStatus::TimedOut,
        ExecutionStatus::Aborted => DriverStatus::Stopped,
    }
}

/// Whether a history event's payload carries `token` (a `TaskScheduled` whose parameters hold
/// the task token, as REGISTER_CALLBACK's `providerCallbackId` or the queue's `taskToken`).
fn carries(value: &Value, token: &str) -> bool {
    match value {
        Value::String(s) => s == token,
        Value::Object(m) => m.values().any(|v| carries(v, token)),
        Value::Array(a) => a.iter().any(|v| carries(v, token)),
        _ => false,
    }
}

impl GatewayEngine for SfnGatewayEngine {
    fn kind(&self) -> WakeEngine {
        WakeEngine::StepFunctions
    }

    fn start(
        &mut self,
        name: &str,
        input_json: &str,
        _now_ms: i64,
    ) -> Result<Started, EngineError> {
        let input: Value =
            serde_json::from_str(input_json).map_err(|e| EngineError(e.to_string()))?;
        let arn = execution_arn(&self.machine_name, name);
        if self.engine.describe_execution(&arn).is_ok() {
            return Ok(Started::Existing(arn));
        }
        match self.engine.start_execution(&self.machine_arn, name, input) {
            Ok(r) => {
                self.executions.push((r.execution_arn.clone(), None));
                Ok(Started::New(r.execution_arn))
            }
            Err(SfnError::ExecutionAlreadyExists(_)) => Ok(Started::Existing(arn)),
            Err(e) => Err(EngineError(e.to_string())),
        }
    }

    fn send_callback_success(
        &mut self,
        callback_id: &str,
        result_json: &str,
        _now_ms: i64,
    ) -> Result<(), ProviderRefusal> {
        let output: Value = serde_json::from_str(result_json).map_err(|e| ProviderRefusal {
            code: "InvalidOutput".into(),
            message: e.to_string(),
        })?;
        self.engine
            .send_task_success(callback_id, output)
            .map_err(refusal)
    }

    fn send_callback_failure(
        &mut self,
        callback_id: &str,
        error: &str,
        cause: &str,
        _now_ms: i64,
    ) -> Result<(), ProviderRefusal> {
        self.engine
            .send_task_failure(callback_id, error, cause)
            .map_err(refusal)
    }

    fn stop(&mut self, execution_arn: &str, _now_ms: i64) -> Result<(), ProviderRefusal> {
        self.engine
            .stop_execution(execution_arn, None, None)
            .map(|_| ())
            .map_err(refusal)
    }

    fn driver(&self, execution_arn: &str) -> Option<DriverView> {
        let d = self.engine.describe_execution(execution_arn).ok()?;
        Some(DriverView {
            arn: d.execution_arn,
            name: d.name,
            input: d.input.to_string(),
            status: status_of(d.status),
            provider_status: d.status.as_str().to_owned(),
            output: d.output.map(|o| o.to_string()),
            error: d.error.map(|e| (e, d.cause.unwrap_or_default())),
            started_at_ms: d.start_ms,
            ended_at_ms: d.stop_ms,
            history: HistorySize {
                written: self.engine.history(execution_arn).len() as u64,
                limit: self.history_limit,
                unit: "history events",
                capped: false,
            },
        })
    }

    fn drivers(&self) -> Vec<DriverView> {
        self.executions
            .iter()
            .filter_map(|(arn, _)| self.driver(arn))
            .collect()
    }

    fn callback_state(&self, callback_id: &str) -> ProviderState {
        for (arn, _) in &self.executions {
            let history = self.engine.history(arn);
            let Some(at) = history.iter().position(|e| {
                e.event_type == "TaskScheduled"
                    && (carries(&e.details, callback_id)
                        || e.payload
                            .as_ref()
                            .is_some_and(|p| carries(&p.value, callback_id)))
            }) else {
                continue;
            };
            let types: Vec<&str> = history[at..].iter().map(|e| e.event_type).collect();
            let status = self.engine.status(arn).map(ExecutionStatus::as_str);
            return sfn_callback_state(status, Some(&types));
        }
        // No execution scheduled a task with this token: as for a lost history.
        sfn_callback_state(None, None)
    }

    fn take_status_changes(&mut self) -> Vec<String> {
        let mut changed = Vec::new();
        for (arn, last) in &mut self.executions {
            let now = self.engine.status(arn);
            if now != *last {
                *last = now;
                changed.push(arn.clone());
            }
        }
        changed
    }

    fn run_until_idle(&mut self, host: &mut dyn GatewayHost) -> Result<(), EngineError> {
        let mut tasks = GatewayTasks::new(host, &self.functions);
        self.engine.advance_to(self.target_ms, &mut tasks);
        self.engine.run_until_idle(&mut tasks);
        if self.engine.budget_spent() {
            return Err(EngineError(format!(
                "the drivers wrote {EVENT_BUDGET} history events: the engine stopped"
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
