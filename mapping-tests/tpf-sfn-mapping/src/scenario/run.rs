//! What every backend's runner shares: the instant and tenant every scenario starts with, TPF
//! as the scenario sets it up, the metrics a run reports, what TPF says about an execution, and
//! the scenario's expectations. Each backend's runner (`crate::sfn::run`,
//! `crate::durable::run`) drives its engine with these.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use tpf_model::actions::ActionHost;
use tpf_model::coordinator::{
    local_release, Coordinator, CoordinatorConfig, CoordinatorError, IdempotencyPolicy,
    ItemContinuations,
};
use tpf_model::store::InMemoryStore;
use tpf_model::worker::{PipelineDef, ScriptedWorker, StepOutcome};
use tpf_wire::records::ExecutionStatus as TpfStatus;

use super::matrix::AWAIT_TIMEOUT_S;
use super::model::{ItemContinuationMode, Scenario};
use crate::subject::{pipeline_of, Subject};

/// 2026-01-01T00:00:00Z: every scenario starts at the same virtual instant.
pub const START_MS: i64 = 1_767_225_600_000;
pub const TENANT: &str = "tenant-a";
pub(crate) const FIRST_KEY: &str = "order-1";

/// Why a scenario could not run at all: no verdict about the driver, a fault of the scenario or
/// of the harness.
#[derive(Debug)]
pub enum RunError {
    /// The scenario scripts a step the contract does not have.
    UnknownStep { scenario: String, step: String },
    /// TPF refused to register or activate the subject's release.
    Release(CoordinatorError),
    /// The engine refused the release's program.
    Deploy(Box<dyn std::error::Error + Send + Sync>),
    /// The engine failed an execution for a reason of its own: a bug of this harness.
    Engine {
        execution: String,
        error: String,
        cause: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::UnknownStep { scenario, step } => {
                write!(f, "scenario {scenario}: no step named {step:?}")
            }
            RunError::Release(e) => write!(f, "{e}"),
            RunError::Deploy(e) => write!(f, "{e}"),
            RunError::Engine {
                execution,
                error,
                cause,
            } => write!(f, "the durable engine failed {execution}: {error}: {cause}"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Release(e) => Some(e),
            RunError::Deploy(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// Driver state entries, all generations of the first execution.
    pub state_transitions: u64,
    pub history_events: u64,
    /// Action call deliveries made by drivers (process-work-item).
    pub action_calls: u64,
    pub generations: u32,
    pub lineages: u32,
    /// Most history events of any one generation.
    pub max_generation_events: u64,
    pub sweeper_transitions: u64,
    pub simulated_seconds: f64,
    /// Child executions that carried the execution's items through an itemized await.
    pub item_executions: u32,
    /// Driver state entries and history events of those children, all generations.
    pub item_state_transitions: u64,
    pub item_history_events: u64,
    /// Lambda durable functions only: operations as the service bills them (a step 1, a wait 1,
    /// a callback 3), all generations of the first execution.
    #[serde(skip_serializing_if = "is_zero")]
    pub operations: u64,
    /// Lambda durable functions only: invocations of the driver function (each replays the
    /// generation's checkpoints from its start).
    #[serde(skip_serializing_if = "is_zero")]
    pub invocations: u64,
    /// Lambda durable functions only: most operations of any one generation.
    #[serde(skip_serializing_if = "is_zero")]
    pub max_generation_operations: u64,
    /// Lambda durable functions only: checkpointed operations replayed instead of run.
    #[serde(skip_serializing_if = "is_zero")]
    pub replayed_operations: u64,
    /// Lambda durable functions only: operations of the item children's drivers.
    #[serde(skip_serializing_if = "is_zero")]
    pub item_operations: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub(crate) fn outcome(text: &str) -> StepOutcome {
    match text.split_once(':') {
        Some(("fail-retryable", code)) => StepOutcome::FailRetryable(code.to_string()),
        Some(("fail-non-retryable", code)) => StepOutcome::FailNonRetryable(code.to_string()),
        _ if text == "park" => StepOutcome::Park,
        _ => StepOutcome::Complete,
    }
}

pub(crate) fn pipeline<P>(subject: &Subject<P>, scenario: &Scenario) -> Arc<PipelineDef> {
    if scenario.await_timeout_seconds == AWAIT_TIMEOUT_S {
        subject.pipeline.clone()
    } else {
        Arc::new(pipeline_of(
            &subject.contract,
            scenario.await_timeout_seconds,
        ))
    }
}

/// TPF as the scenario sets it up, with the subject's release registered and active: the same
/// for every engine.
pub(crate) fn build_host<P>(
    subject: &Subject<P>,
    scenario: &Scenario,
) -> Result<ActionHost<InMemoryStore>, RunError> {
    let identity = subject.plan.identity.clone();
    let mut worker = ScriptedWorker::new(identity.clone());
    if let Some(next) = &subject.next_release {
        worker = worker.hosting(next.identity.clone());
    }
    for script in &scenario.worker {
        let index = subject
            .contract
            .steps
            .iter()
            .find(|s| s.authored_name == script.step)
            .map(|s| s.index)
            .ok_or_else(|| RunError::UnknownStep {
                scenario: scenario.name.clone(),
                step: script.step.clone(),
            })?;
        worker.set_script(index, script.outcomes.iter().map(|o| outcome(o)).collect());
    }
    let mut config = CoordinatorConfig {
        // Queue mode with strict startup needs an explicit policy; the actors always send a key.
        idempotency_policy: IdempotencyPolicy::ClientKeyRequired,
        item_continuations: match scenario.tpf.item_continuations {
            ItemContinuationMode::Durable => ItemContinuations::Durable,
            ItemContinuationMode::InProcess => ItemContinuations::InProcess,
        },
        process_applies_await_deadline: scenario.tpf.process_applies_await_deadline,
        ..CoordinatorConfig::default()
    };
    if let Some(r) = scenario.retries {
        config.max_retries = r.max_retries;
        config.retry_delay_ms = r.delay_seconds as i64 * 1000;
        config.retry_multiplier = r.multiplier;
    }
    let coordinator = Coordinator::with_config(
        InMemoryStore::new(),
        pipeline(subject, scenario),
        worker,
        config,
    );
    let mut host = ActionHost::new(coordinator);
    let c = host.coordinator_mut();
    c.register_release(&local_release(TENANT, &identity, START_MS))
        .map_err(RunError::Release)?;
    c.activate_release(
        TENANT,
        &identity.pipeline_id,
        &identity.release_version,
        START_MS,
    )
    .map_err(RunError::Release)?;
    Ok(host)
}

/// TPF's status of `exec` now, whatever engine drives it.
pub(crate) fn tpf_status(
    host: &ActionHost<InMemoryStore>,
    now_ms: i64,
    exec: &str,
) -> Option<TpfStatus> {
    host.coordinator()
        .status(TENANT, exec, now_ms)
        .ok()
        .map(|r| r.status)
}

/// The child executions that carried `exec`'s items, oldest first, read from TPF alone,
/// whatever engine drives them.
pub(crate) fn item_children(
    host: &ActionHost<InMemoryStore>,
    now_ms: i64,
    exec: &str,
) -> Vec<String> {
    host.coordinator()
        .item_children(TENANT, exec, now_ms)
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.execution_id)
        .collect()
}

/// What the scenario expected of TPF's record and the metrics, and did not get.
pub(crate) fn expectations(
    s: &Scenario,
    host: &ActionHost<InMemoryStore>,
    now_ms: i64,
    exec: &str,
    m: &Metrics,
) -> Vec<String> {
    let mut unmet = Vec::new();
    let record = host.coordinator().status(TENANT, exec, now_ms).ok();
    if let Some(want) = &s.expect.tpf_status {
        let got = record
            .as_ref()
            .map(|r| r.status.to_string())
            .unwrap_or_else(|| "missing".into());
        if &got != want {
            unmet.push(format!("expected TPF status {want}, got {got}"));
        }
    }
    if let Some(want) = &s.expect.error_code {
        let got = record
            .as_ref()
            .and_then(|r| r.error_code.clone())
            .unwrap_or_default();
        if &got != want {
            unmet.push(format!("expected TPF errorCode {want}, got {got:?}"));
        }
    }
    if let Some(min) = s.expect.min_generations {
        if m.generations < min {
            unmet.push(format!(
                "expected at least {min} driver generations, got {}",
                m.generations
            ));
        }
    }
    if let Some(max) = s.expect.max_action_calls {
        if m.action_calls > max {
            unmet.push(format!(
                "expected at most {max} process-work-item calls, got {}",
                m.action_calls
            ));
        }
    }
    if let Some(want) = s.expect.item_executions {
        if m.item_executions != want {
            unmet.push(format!(
                "expected {want} item child execution(s), got {}",
                m.item_executions
            ));
        }
    }
    if let Some(want) = s.expect.lineages {
        if m.lineages != want {
            unmet.push(format!(
                "expected {want} driver lineage(s), got {}",
                m.lineages
            ));
        }
    }
    unmet
}
