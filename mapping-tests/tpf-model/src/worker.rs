//! The pipeline's runtime steps and a scripted transition worker.
//!
//! A worker call runs a *segment*: from `currentStepIndex` through consecutive completing steps
//! until an await parks, a step fails, or it reaches `stopBeforeStepIndex` (the pipeline's end
//! for an execution's own segment, the first aggregate step for an item continuation;
//! `QueueAsyncSegmentPipeline`). The script decides, per step index and record attempt, what
//! each step does, so tests can stage retries, non-retryable failures and parks
//! deterministically.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use tpf_wire::cardinality::{self, Cardinality};
use tpf_wire::ids;
use tpf_wire::records::ResultShape;
use tpf_wire::step::StepFacts;
use tpf_wire::Identity;

/// How an await step collects completions (`AU/index.md` "Cardinality As Unit Shape").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwaitShape {
    /// One primary interaction, scalar output.
    Scalar,
    /// ONE_TO_ONE over a stream: one unit owning `items` ordered item interactions.
    Itemized { items: u32 },
}

/// `AwaitStepDescriptor`: what TPF's await runtime knows about one await step. The contract
/// carries the transport and the output type; the timeout, correlation strategy and
/// idempotency-key fields come from the pipeline YAML, which today's TPF copies into the
/// contract's `deferredCompletion` (August 2026's contracts did not carry them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwaitStep {
    /// YAML `timeout`, positive (the descriptor refuses anything else); the interaction
    /// deadline is park time + timeout.
    pub timeout_ms: i64,
    pub shape: AwaitShape,
    /// The descriptor's cardinality, written on the await unit (`ONE_TO_ONE` when blank).
    pub cardinality: String,
    /// `await.transport.type` (`interaction-api`, `webhook`, `kafka`, `sqs`, ...).
    pub transport_type: String,
    /// `await.correlation`; blank means `interactionId`.
    pub correlation_strategy: Option<String>,
    /// `await.idempotencyKeyFields`.
    pub idempotency_key_fields: Vec<String>,
    /// The step's output type, written on every interaction.
    pub output_type: String,
}

impl AwaitStep {
    fn new(timeout_ms: i64, shape: AwaitShape) -> Self {
        Self {
            timeout_ms: timeout_ms.max(1),
            shape,
            cardinality: "ONE_TO_ONE".to_owned(),
            transport_type: "interaction-api".to_owned(),
            correlation_strategy: None,
            idempotency_key_fields: Vec::new(),
            output_type: OBJECT_TYPE.to_owned(),
        }
    }
}

/// The output type of an await whose contract names none (`java.lang.Object`, what TPF's
/// planner uses for a synthetic scalar interaction).
pub const OBJECT_TYPE: &str = "java.lang.Object";

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
    /// TPF's runtime step id, used in await records (`tpf_wire::ids::step_id`).
    pub step_id: String,
    /// Normalised cardinality: an aggregating step ends an item continuation.
    pub cardinality: Cardinality,
    pub kind: StepKind,
}

impl StepDef {
    fn with_kind(name: &str, kind: StepKind) -> Self {
        Self {
            name: name.to_owned(),
            step_id: ids::step_id(name),
            cardinality: Cardinality::OneToOne,
            kind,
        }
    }

    pub fn internal(name: &str) -> Self {
        Self::with_kind(name, StepKind::Internal)
    }

    pub fn await_scalar(name: &str, timeout_ms: i64) -> Self {
        Self::with_kind(
            name,
            StepKind::Await(AwaitStep::new(timeout_ms, AwaitShape::Scalar)),
        )
    }

    pub fn await_itemized(name: &str, items: u32, timeout_ms: i64) -> Self {
        Self::with_kind(
            name,
            StepKind::Await(AwaitStep::new(timeout_ms, AwaitShape::Itemized { items })),
        )
    }

    pub fn with_cardinality(mut self, cardinality: Cardinality) -> Self {
        self.cardinality = cardinality;
        self
    }

    /// Changes the await descriptor (no effect on an internal step).
    pub fn with_await(mut self, change: impl FnOnce(&mut AwaitStep)) -> Self {
        if let StepKind::Await(step) = &mut self.kind {
            change(step);
        }
        self
    }

    pub fn await_step(&self) -> Option<&AwaitStep> {
        match &self.kind {
            StepKind::Await(step) => Some(step),
            StepKind::Internal => None,
        }
    }
}

/// The runtime step order of one pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineDef {
    pub steps: Vec<StepDef>,
    /// `ExecutionResultShapeResolver`'s fold over the step cardinalities.
    pub result_shape: ResultShape,
}

impl PipelineDef {
    pub fn new(steps: Vec<StepDef>) -> Self {
        let cardinalities: Vec<Cardinality> = steps.iter().map(|s| s.cardinality).collect();
        Self {
            result_shape: cardinality::result_shape(&cardinalities),
            steps,
        }
    }

    /// The runtime steps of a contract: an await over a stream is itemized with
    /// `items_per_stream` items; an await times out after the contract's own timeout (today's
    /// TPF writes it in `deferredCompletion`), else after `await_timeout_ms` (August's contracts
    /// left it to the YAML); an await without a transport in the contract uses
    /// `interaction-api`; correlation strategy and idempotency-key fields come from the contract
    /// when it carries them.
    pub fn from_contract(
        steps: &[StepFacts<'_>],
        items_per_stream: u32,
        await_timeout_ms: i64,
    ) -> Self {
        let cardinalities: Vec<Cardinality> = steps.iter().map(|s| s.cardinality).collect();
        Self::new(
            steps
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    // Only an await can be itemized; asking for the others made a long
                    // contract's pipeline quadratic to build.
                    let itemized = s.is_await
                        && s.cardinality == Cardinality::OneToOne
                        && cardinality::streams_into(&cardinalities, i);
                    let timeout_ms = s.await_timeout_ms.unwrap_or(await_timeout_ms);
                    let step = match (s.is_await, itemized) {
                        (false, _) => StepDef::internal(s.authored_name),
                        (true, false) => StepDef::await_scalar(s.authored_name, timeout_ms),
                        (true, true) => {
                            StepDef::await_itemized(s.authored_name, items_per_stream, timeout_ms)
                        }
                    };
                    step.with_cardinality(s.cardinality).with_await(|a| {
                        if !s.cardinality_raw.trim().is_empty() {
                            a.cardinality = s.cardinality_raw.trim().to_owned();
                        }
                        if let Some(t) = s.await_transport.filter(|t| !t.trim().is_empty()) {
                            t.clone_into(&mut a.transport_type);
                        }
                        if !s.output_type_id.is_empty() {
                            s.output_type_id.clone_into(&mut a.output_type);
                        }
                        if let Some(c) = s.correlation_strategy.filter(|c| !c.trim().is_empty()) {
                            a.correlation_strategy = Some(c.to_owned());
                        }
                        if let Some(fields) = s.idempotency_key_fields {
                            fields.clone_into(&mut a.idempotency_key_fields);
                        }
                    })
                })
                .collect(),
        )
    }

    pub fn step(&self, index: u32) -> Option<&StepDef> {
        self.steps.get(index as usize)
    }

    pub fn len(&self) -> u32 {
        u32::try_from(self.steps.len()).unwrap_or(u32::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// `PipelineExecutionService.firstAggregateStepIndex`: the first MANY_TO_ONE or MANY_TO_MANY
    /// step at or after `from`, else the step count. Item continuations run up to it; the
    /// itemized parent resumes there.
    pub fn first_aggregate_step_index(&self, from: u32) -> u32 {
        self.steps
            .iter()
            .enumerate()
            .skip(from as usize)
            .find(|(_, s)| s.cardinality.aggregates())
            .map_or(self.len(), |(i, _)| i as u32)
    }

    /// restaurant-approval (`examples/restaurant-approval/config/pipeline.yaml`): the await is
    /// step 2 with `timeout: PT30M`.
    pub fn restaurant() -> Self {
        Self::new(vec![
            StepDef::internal("Validate Order Request"),
            StepDef::internal("Create Pending Approval"),
            StepDef::await_scalar("Await Restaurant Decision", 30 * 60 * 1000),
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
    /// The step's remote worker gives no answer within the caller's deadline, so nobody knows
    /// whether it applied the transition; the coordinator records this error code.
    OutcomeUnknown(String),
}

/// `TransitionCommandEnvelope`, reduced to what the model's worker reads.
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionCommand {
    pub tenant_id: String,
    pub execution_id: String,
    pub identity: Identity,
    pub current_step_index: u32,
    /// The segment ends before this step (`stopBeforeStepIndex`).
    pub stop_before_step_index: u32,
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
    /// No envelope came back before the caller's deadline: the transition may or may not have
    /// been applied (TPF's coordinator marks the execution `REMOTE_OUTCOME_UNKNOWN`).
    OutcomeUnknown {
        error_code: String,
        message: String,
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
            .take(cmd.stop_before_step_index as usize)
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
                    // Moved in, not `json!`'s re-serialised copy: the payload nests one level per
                    // step, so a copy per step made long segments quadratic.
                    let mut wrapped = Map::with_capacity(2);
                    wrapped.insert("step".to_owned(), Value::String(step.name.clone()));
                    wrapped.insert("input".to_owned(), payload);
                    payload = Value::Object(wrapped);
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
                StepOutcome::OutcomeUnknown(code) => {
                    return TransitionResult::OutcomeUnknown {
                        message: format!(
                            "step {step_index} passed its caller deadline without a confirmed worker disposition"
                        ),
                        error_code: code,
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
    fn the_first_aggregate_step_ends_an_item_continuation() {
        let p = PipelineDef::new(vec![
            StepDef::internal("a").with_cardinality(Cardinality::OneToMany),
            StepDef::await_itemized("b", 2, 1000),
            StepDef::internal("c"),
            StepDef::internal("d").with_cardinality(Cardinality::ManyToOne),
        ]);
        assert_eq!(p.first_aggregate_step_index(2), 3);
        assert_eq!(p.first_aggregate_step_index(4), 4);
        assert_eq!(p.result_shape, ResultShape::Single);
        let no_reduce = PipelineDef::new(p.steps[..3].to_vec());
        assert_eq!(no_reduce.first_aggregate_step_index(2), 3);
        assert_eq!(no_reduce.result_shape, ResultShape::MaterializedMulti);
    }
}
