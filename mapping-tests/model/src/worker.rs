//! The pipeline's runtime steps and a scripted transition worker.
//!
//! A worker call runs a *segment*: from `currentStepIndex` through consecutive completing steps
//! until an await parks, a step fails, or the pipeline ends (`QueueAsyncSegmentPipeline`,
//! `stopBeforeStepIndex = -1`). The script decides, per step index and record attempt, what
//! each step does, so tests can stage retries, non-retryable failures and parks
//! deterministically.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tpf_wire::Identity;

use tpf_wire::records::ResultShape;

/// How an await step collects completions (`AU/index.md` "Cardinality As Unit Shape").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwaitShape {
    /// One primary interaction, scalar output.
    Scalar,
    /// ONE_TO_ONE over a stream: one unit owning `items` ordered item interactions.
    Itemized { items: u32 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwaitStep {
    /// YAML `timeout`; the interaction deadline is park time + timeout.
    pub timeout_ms: Option<i64>,
    pub shape: AwaitShape,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepKind {
    Internal,
    Await(AwaitStep),
}

/// One runtime step (an `order.json` entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepDef {
    /// The contract's `authoredName`.
    pub name: String,
    /// TPF's runtime step id, used in await records: `Process<Name>Service`.
    pub step_id: String,
    pub kind: StepKind,
}

impl StepDef {
    pub fn internal(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            step_id: runtime_step_id(name),
            kind: StepKind::Internal,
        }
    }

    pub fn await_scalar(name: &str, timeout_ms: Option<i64>) -> Self {
        Self {
            name: name.to_owned(),
            step_id: runtime_step_id(name),
            kind: StepKind::Await(AwaitStep {
                timeout_ms,
                shape: AwaitShape::Scalar,
            }),
        }
    }

    pub fn await_itemized(name: &str, items: u32, timeout_ms: Option<i64>) -> Self {
        Self {
            name: name.to_owned(),
            step_id: runtime_step_id(name),
            kind: StepKind::Await(AwaitStep {
                timeout_ms,
                shape: AwaitShape::Itemized { items },
            }),
        }
    }

    pub fn await_step(&self) -> Option<&AwaitStep> {
        match &self.kind {
            StepKind::Await(step) => Some(step),
            StepKind::Internal => None,
        }
    }
}

/// `"Process" + PascalCase(name without leading "Process") + "Service"`
/// (`ModelExtractionPhase.createAwaitStepModel`).
pub fn runtime_step_id(authored_name: &str) -> String {
    let pascal: String = authored_name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect();
    let bare = pascal.strip_prefix("Process").unwrap_or(&pascal);
    format!("Process{bare}Service")
}

/// The runtime step order of one pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineDef {
    pub steps: Vec<StepDef>,
    pub result_shape: ResultShape,
}

impl PipelineDef {
    pub fn new(steps: Vec<StepDef>) -> Self {
        Self {
            steps,
            result_shape: ResultShape::Single,
        }
    }

    pub fn step(&self, index: u32) -> Option<&StepDef> {
        self.steps.get(index as usize)
    }

    /// restaurant-approval (`examples/restaurant-approval/config/pipeline.yaml`): the await is
    /// step 2 with `timeout: PT30M`.
    pub fn restaurant() -> Self {
        Self::new(vec![
            StepDef::internal("Validate Order Request"),
            StepDef::internal("Create Pending Approval"),
            StepDef::await_scalar("Await Restaurant Decision", Some(30 * 60 * 1000)),
            StepDef::internal("Finalize Restaurant Decision"),
        ])
    }
}

/// What one step does on one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    /// The step finishes; on an await step this is a live completion that never parks.
    Complete,
    /// Fails with a retryable exception of this class (the envelope's `failureClass`).
    FailRetryable(String),
    /// Fails with this `NonRetryableException`-derived class.
    FailNonRetryable(String),
    /// Suspends at this await step (only meaningful on await steps).
    Park,
}

/// `TransitionCommandEnvelope`, reduced to what the model's worker reads.
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionCommand {
    pub tenant_id: String,
    pub execution_id: String,
    pub identity: Identity,
    pub current_step_index: u32,
    pub attempt: u32,
    pub execution_version: i64,
    pub transition_key: String,
    pub payload: Value,
}

/// `TransitionResultEnvelope`.
#[derive(Debug, Clone, PartialEq)]
pub enum TransitionResult {
    Completed {
        output: Value,
    },
    WaitingExternal {
        step_index: u32,
    },
    Failed {
        failure_class: String,
        message: String,
        retryable: bool,
    },
}

/// One step the worker ran: `(executionId, stepIndex, attempt)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct StepRun {
    pub execution_id: String,
    pub step_index: u32,
    pub attempt: u32,
}

/// A worker hosting one or more releases, driven by a per-step script.
#[derive(Debug, Clone)]
pub struct ScriptedWorker {
    hosted: Vec<Identity>,
    scripts: BTreeMap<u32, Vec<StepOutcome>>,
    runs: Vec<StepRun>,
}

impl ScriptedWorker {
    pub fn new(identity: Identity) -> Self {
        Self {
            hosted: vec![identity],
            scripts: BTreeMap::new(),
            runs: Vec::new(),
        }
    }

    /// Old-release workers keep running until their pinned executions drain
    /// (`docs/evolve/durable-coordinator/pipeline-contract-release-model.md`), so one worker may
    /// host several releases.
    pub fn hosting(mut self, identity: Identity) -> Self {
        self.hosted.push(identity);
        self
    }

    /// Outcomes for `step_index`, indexed by the record's attempt. Attempts past the list use
    /// the default: await steps park, other steps complete.
    pub fn script(mut self, step_index: u32, outcomes: Vec<StepOutcome>) -> Self {
        self.set_script(step_index, outcomes);
        self
    }

    pub fn set_script(&mut self, step_index: u32, outcomes: Vec<StepOutcome>) {
        self.scripts.insert(step_index, outcomes);
    }

    pub fn hosted(&self) -> &[Identity] {
        &self.hosted
    }

    pub fn runs(&self) -> &[StepRun] {
        &self.runs
    }

    fn outcome(&self, step: &StepDef, step_index: u32, attempt: u32) -> StepOutcome {
        self.scripts
            .get(&step_index)
            .and_then(|outcomes| outcomes.get(attempt as usize))
            .cloned()
            .unwrap_or(match step.kind {
                StepKind::Await(_) => StepOutcome::Park,
                StepKind::Internal => StepOutcome::Complete,
            })
    }

    /// Runs one segment. The identity check comes first, as in
    /// `PipelineExecutionService.executeTransition`: a mismatch is a FAILED envelope carrying
    /// `IllegalArgumentException`, which the coordinator treats as retryable
    /// (`TransitionFailureEnvelope.toException`).
    pub fn execute(&mut self, pipeline: &PipelineDef, cmd: &TransitionCommand) -> TransitionResult {
        if !self.hosted.contains(&cmd.identity) {
            return TransitionResult::Failed {
                failure_class: "java.lang.IllegalArgumentException".to_owned(),
                message: format!(
                    "Transition identity {}/{}/{} is not hosted by this worker",
                    cmd.identity.pipeline_id,
                    cmd.identity.contract_version,
                    cmd.identity.release_version
                ),
                retryable: true,
            };
        }
        let mut payload = cmd.payload.clone();
        for (offset, step) in pipeline
            .steps
            .iter()
            .enumerate()
            .skip(cmd.current_step_index as usize)
        {
            let step_index = offset as u32;
            self.runs.push(StepRun {
                execution_id: cmd.execution_id.clone(),
                step_index,
                attempt: cmd.attempt,
            });
            match self.outcome(step, step_index, cmd.attempt) {
                StepOutcome::Complete => {
                    payload = json!({ "step": step.name, "input": payload });
                }
                StepOutcome::Park if step.await_step().is_some() => {
                    return TransitionResult::WaitingExternal { step_index };
                }
                StepOutcome::Park => {
                    return TransitionResult::Failed {
                        failure_class: "java.lang.IllegalStateException".to_owned(),
                        message: format!("step {step_index} is not an await step"),
                        retryable: false,
                    };
                }
                StepOutcome::FailRetryable(code) => {
                    return TransitionResult::Failed {
                        message: format!("{code} at step {step_index}"),
                        failure_class: code,
                        retryable: true,
                    };
                }
                StepOutcome::FailNonRetryable(code) => {
                    return TransitionResult::Failed {
                        message: format!("{code} at step {step_index}"),
                        failure_class: code,
                        retryable: false,
                    };
                }
            }
        }
        TransitionResult::Completed { output: payload }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_step_ids_follow_tpf_naming() {
        assert_eq!(
            runtime_step_id("Await Restaurant Decision"),
            "ProcessAwaitRestaurantDecisionService"
        );
        assert_eq!(
            runtime_step_id("Process Csv Payments Input"),
            "ProcessCsvPaymentsInputService"
        );
    }
}
