//! The mapping proof as one call: compile (or take) a driver, derive the scenario matrix, run
//! every scenario, evaluate every invariant, and report.

use serde::Serialize;
use serde_json::json;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::diagnostic::{Diagnostic, Diagnostics};
use tpf_sfn_compiler::sfn::asl;
use tpf_sfn_compiler::sfn::{self, StepFunctions};
use tpf_wire::Identity;

use crate::durable::{self, DurableSubject};
use crate::invariants::{self, Violation};
use crate::scenario::run::NextRelease;
use crate::scenario::{matrix, run, Metrics, Scenario, Subject};
use tpf_durable_driver::DurableSpec;

pub use tpf_sfn_compiler::bundled::restaurant_input;

/// Seed for jitter and ids: the same seed gives the same traces.
pub const SEED: u64 = 7;

/// Builds the subject: compiles the contract; `driver` replaces the compiled driver with a
/// definition the user compiled or edited themselves (e.g. post-processed by CDK).
pub fn subject(input: &Input, driver: Option<(&str, &[u8])>) -> Result<Subject, Diagnostics> {
    let out = compile(input, StepFunctions)?;
    let driver_def = match driver {
        Some((file, bytes)) => asl::parse(file, bytes)?,
        None => out.driver.clone(),
    };
    let next = next_release(input, &out.plan.identity)?;
    let pipeline = std::sync::Arc::new(crate::scenario::run::pipeline_of(
        &out.contract,
        crate::scenario::matrix::AWAIT_TIMEOUT_S,
    ));
    Ok(Subject {
        pipeline,
        contract: out.contract,
        plan: out.plan,
        sfn: out.sfn,
        driver: driver_def,
        sweeper: out.sweeper,
        next_release: Some(next),
    })
}

/// The pipeline-release.json of the second release the proof activates mid-flight; the
/// end-to-end tests deploy and register the same one.
pub fn next_release_descriptor(identity: &Identity) -> serde_json::Value {
    json!({
        "schemaVersion": 1,
        "pipelineId": identity.pipeline_id,
        "contractVersion": identity.contract_version,
        "releaseVersion": format!("{}+next", identity.release_version),
        "artifacts": [{ "artifactId": "next", "kind": "container-image", "uri": "oci://next", "digest": "sha256:00" }]
    })
}

/// A second release of the same contract, for "a new release activated mid-flight".
fn next_release(input: &Input, identity: &Identity) -> Result<NextRelease, Diagnostics> {
    let out = next_output(input, identity)?;
    Ok(NextRelease {
        identity: out.plan.identity.clone(),
        driver_name: out.sfn.machines.driver.clone(),
        driver: out.driver,
        sweeper_name: out.sfn.machines.sweeper.clone(),
        sweeper: out.sweeper,
    })
}

/// The compiled second release of the same contract.
fn next_output(input: &Input, identity: &Identity) -> Result<sfn::Compiled, Diagnostics> {
    let release = next_release_descriptor(identity);
    let bytes = serde_json::to_vec(&release).map_err(|e| {
        Diagnostics(vec![Diagnostic::error(
            "INTERNAL",
            Default::default(),
            e.to_string(),
        )])
    })?;
    compile(
        &Input {
            release: Some(("next-release.json", &bytes)),
            ..input.clone()
        },
        StepFunctions,
    )
}

/// The engine a proof runs the driver on: the compiler's one list of backends.
pub use tpf_sfn_compiler::backend::Backend;

/// The Lambda durable functions subject: the release's durable spec (and the second
/// release's), next to the same inputs' Step Functions subject, whose contract, plan and matrix
/// it shares. `spec` replaces the compiled spec with one the user edited.
pub fn durable_subject(
    input: &Input,
    spec: Option<DurableSpec>,
) -> Result<DurableSubject, Diagnostics> {
    let base = subject(input, None)?;
    let compiled = tpf_sfn_compiler::durable::lower(&base.plan)?.spec;
    let next = next_output(input, &base.plan.identity)?;
    let next_spec = tpf_sfn_compiler::durable::lower(&next.plan)?.spec;
    Ok(DurableSubject::new(
        base,
        spec.unwrap_or(compiled),
        Some((next.plan.identity.clone(), next_spec)),
    ))
}

/// The Lambda durable functions matrix: the derived scenarios on this backend plus `extra`.
pub fn durable_scenarios(subject: &DurableSubject, extra: Vec<Scenario>) -> Vec<Scenario> {
    crate::durable::run::scenarios(subject, extra)
}

/// Runs one scenario on the durable backend and evaluates every invariant over it.
pub fn run_one_durable(subject: &DurableSubject, scenario: &Scenario) -> ScenarioReport {
    run_one_durable_proven(
        subject,
        &durable::checks::static_violations(subject),
        scenario,
    )
}

fn run_one_durable_proven(
    subject: &DurableSubject,
    rejected: &[Violation],
    scenario: &Scenario,
) -> ScenarioReport {
    match durable::run::run(subject, rejected, scenario) {
        Ok(r) => ScenarioReport {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            metrics: r.metrics.clone(),
            violations: durable::checks::evaluate(&r),
            unmet_expectations: r.unmet.clone(),
            error: None,
            trace: r.world.trace.render(),
            backend: Backend::LambdaDurable,
        },
        Err(e) => ScenarioReport {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            metrics: Metrics::default(),
            violations: Vec::new(),
            unmet_expectations: Vec::new(),
            error: Some(e),
            trace: String::new(),
            backend: Backend::LambdaDurable,
        },
    }
}

/// [`prove`] on the Lambda durable functions backend: the spec's static checks first, stopping
/// at their verdict; then every scenario with every invariant. `_seed` is accepted for the same
/// call shape: this engine draws no random numbers.
pub fn prove_durable(
    subject: &DurableSubject,
    scenarios: &[Scenario],
    _seed: u64,
) -> Vec<ScenarioReport> {
    let rejected = durable::checks::static_violations(subject);
    if !rejected.is_empty() {
        return vec![ScenarioReport {
            name: STATIC_CHECKS.to_string(),
            description:
                "the static checks' verdict on the durable driver's spec, before any scenario runs"
                    .to_string(),
            metrics: Metrics::default(),
            violations: rejected,
            unmet_expectations: Vec::new(),
            error: None,
            trace: String::new(),
            backend: Backend::LambdaDurable,
        }];
    }
    scenarios
        .iter()
        .map(|s| run_one_durable_proven(subject, &rejected, s))
        .collect()
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioReport {
    pub name: String,
    pub description: String,
    pub metrics: Metrics,
    pub violations: Vec<Violation>,
    pub unmet_expectations: Vec<String>,
    /// Set when the scenario could not run at all.
    pub error: Option<String>,
    #[serde(skip)]
    pub trace: String,
    #[serde(skip)]
    pub backend: Backend,
}

impl ScenarioReport {
    pub fn passed(&self) -> bool {
        self.violations.is_empty() && self.unmet_expectations.is_empty() && self.error.is_none()
    }

    /// The snapshot text: the trace and the metrics.
    pub fn snapshot(&self) -> String {
        let m = &self.metrics;
        let items = if m.item_executions > 0 {
            format!(
                ", {} item execution(s) with {} state transitions and {} history events",
                m.item_executions, m.item_state_transitions, m.item_history_events
            )
        } else {
            String::new()
        };
        if self.backend == Backend::LambdaDurable {
            let items = if m.item_executions > 0 {
                format!(
                    ", {} item execution(s) with {} operations and {} history events",
                    m.item_executions, m.item_operations, m.item_history_events
                )
            } else {
                String::new()
            };
            return format!(
                "# {}\n# {}\n{}# metrics: {} operations, {} invocations ({} replayed operations), {} history events, {} action calls, {} generation(s), {} lineage(s), {}s simulated{items}\n",
                self.name, self.description, self.trace, m.operations, m.invocations, m.replayed_operations, m.history_events, m.action_calls, m.generations, m.lineages, m.simulated_seconds
            );
        }
        format!(
            "# {}\n# {}\n{}# metrics: {} state transitions, {} history events, {} action calls, {} generation(s), {} lineage(s), {}s simulated{items}\n",
            self.name, self.description, self.trace, m.state_transitions, m.history_events, m.action_calls, m.generations, m.lineages, m.simulated_seconds
        )
    }
}

/// Runs one scenario and evaluates every invariant over it.
pub fn run_one(subject: &Subject, scenario: &Scenario, seed: u64) -> ScenarioReport {
    run_one_proven(subject, &invariants::Proven::of(subject), scenario, seed)
}

fn run_one_proven(
    subject: &Subject,
    proven: &invariants::Proven,
    scenario: &Scenario,
    seed: u64,
) -> ScenarioReport {
    match run::run_proven(subject, proven, scenario, seed, false) {
        Ok(r) => ScenarioReport {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            metrics: r.metrics.clone(),
            violations: invariants::evaluate(&r),
            unmet_expectations: r.unmet.clone(),
            error: None,
            trace: r.world.trace.render(),
            backend: Backend::StepFunctions,
        },
        Err(e) => ScenarioReport {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            metrics: Metrics::default(),
            violations: Vec::new(),
            unmet_expectations: Vec::new(),
            error: Some(e),
            trace: String::new(),
            backend: Backend::StepFunctions,
        },
    }
}

/// The derived matrix plus `extra` hand-written scenarios.
pub fn scenarios(subject: &Subject, extra: Vec<Scenario>) -> Vec<Scenario> {
    let mut all = matrix::derive(subject);
    all.extend(extra);
    all
}

/// Name of the report that carries the static verdict when it stops the proof.
pub const STATIC_CHECKS: &str = "static-checks";

/// Runs every scenario, after the static checks: a driver the validator rejects (under the TPF
/// driver profile, with the release's event budget) gets that verdict alone, as one report, in
/// the time validation takes; running it could only cost time and repeat the finding.
pub fn prove(subject: &Subject, scenarios: &[Scenario], seed: u64) -> Vec<ScenarioReport> {
    let rejected = invariants::static_violations(subject);
    if !rejected.is_empty() {
        return vec![ScenarioReport {
            name: STATIC_CHECKS.to_string(),
            description: "the validator's verdict on the driver, before any scenario runs"
                .to_string(),
            metrics: Metrics::default(),
            violations: rejected,
            unmet_expectations: Vec::new(),
            error: None,
            trace: String::new(),
            backend: Backend::StepFunctions,
        }];
    }
    let proven = invariants::Proven::of(subject);
    let _pinned = pin(subject);
    scenarios
        .iter()
        .map(|s| run_one_proven(subject, &proven, s, seed))
        .collect()
}

/// Pins the subject's machines (both releases) on this thread while the guards live, so every
/// scenario's deploy finds their compiled programs by address instead of comparing the
/// definitions again (see [`asl_interp::Pinned`]). Only a speed-up: runs are the same without.
pub fn pin(subject: &Subject) -> Vec<asl_interp::Pinned<'_>> {
    let mut pins = vec![
        asl_interp::pin(&subject.driver),
        asl_interp::pin(&subject.sweeper),
    ];
    if let Some(next) = &subject.next_release {
        pins.push(asl_interp::pin(&next.driver));
        pins.push(asl_interp::pin(&next.sweeper));
    }
    pins
}

/// File name for a scenario's trace snapshot.
pub fn snapshot_file(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.trace")
}

/// The same driver with every await state replaced by a fixed-interval poll (`Wait` then ask TPF
/// again): what a driver without callback tokens would do. Used to put the parked driver's cost
/// next to a polling one's, measured by the same interpreter on the same scenario.
pub fn polling_variant(subject: &Subject, interval_seconds: u64) -> Subject {
    use tpf_sfn_compiler::sfn::asl::{State, WaitState};
    let mut s = subject.clone();
    let awaits: Vec<String> = s
        .driver
        .states
        .iter()
        .filter(|(_, st)| matches!(st, State::Task(t) if t.resource.ends_with(".waitForTaskToken") && t.resource.contains("dynamodb")))
        .map(|(n, _)| n.clone())
        .collect();
    for name in awaits {
        let next = tpf_sfn_compiler::sfn::states::driver::PROCESS.to_string();
        s.driver.states.insert(
            name,
            State::Wait(WaitState {
                comment: Some(format!("polls TPF every {interval_seconds} s")),
                input_path: None,
                output_path: None,
                seconds: Some(interval_seconds),
                seconds_path: None,
                timestamp: None,
                timestamp_path: None,
                next: Some(next),
                end: None,
                extra: Default::default(),
            }),
        );
    }
    s
}
