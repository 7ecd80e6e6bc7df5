//! The mapping proof as one call, for any backend: build the subject (compile, or take the
//! user's program), derive the scenario matrix, run the static checks and stop at their verdict,
//! else run every scenario and evaluate every invariant, and report. What differs per engine is
//! a [`BackendProof`]: `crate::sfn::Machines` for Step Functions (Action API v1's world, kept
//! only for the adapter's v1 end-to-end tests until they are retired).

use serde::Serialize;
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::diagnostic::Diagnostics;

use crate::invariants::Violation;
use crate::scenario::run::{self, Run, Runner};
use crate::scenario::{Metrics, Scenario};
use crate::subject::Subject;

pub use crate::subject::next_release_descriptor;
pub use tpf_sfn_compiler::bundled::{august_restaurant_input, restaurant_input};
use tpf_sfn_compiler::config::BindingKind;

/// August 2026's restaurant-approval on Action API v1's `http` binding, named explicitly: the
/// subject of the v1 proof's own tests. The embedded default is the gateway binding, whose
/// drivers are proven in the gateway world.
pub fn august_restaurant_v1_input() -> Input<'static> {
    Input {
        binding: Some(BindingKind::Http),
        ..august_restaurant_input()
    }
}

/// The engine a proof runs the driver on: the compiler's one list of backends.
pub use tpf_sfn_compiler::backend::Backend;

/// Seed for jitter and ids: the same seed gives the same traces.
pub const SEED: u64 = 7;

/// Name of the report that carries the static verdict when it stops the proof.
pub const STATIC_CHECKS: &str = "static-checks";

/// One backend's part of the proof, implemented by its program type; how it runs a scenario
/// is its [`Runner`].
pub trait BackendProof: Runner {
    const BACKEND: Backend;
    /// What the static-checks report says it is, when their verdict stops the proof.
    const STATIC_DESCRIPTION: &'static str;
    /// A program the user brings instead of the compiled one (an edited or post-processed
    /// definition or spec), in the form the command line reads it.
    type Replacement;
    /// Whatever must stay alive while a matrix runs (the Step Functions machines pinned).
    type Pins<'s>
    where
        Self: 's;

    /// Compiles the inputs with this backend's lowering (and the second release with them);
    /// `replacement` takes the compiled program's place.
    fn build(
        input: &Input,
        replacement: Option<Self::Replacement>,
    ) -> Result<Subject<Self>, Diagnostics>;

    /// The matrix derived for this backend, before any hand-written scenario.
    fn matrix(subject: &Subject<Self>) -> Vec<Scenario>;

    /// The static checks' verdict on a subject's program, taken once per matrix.
    fn static_verdict(subject: &Subject<Self>) -> Self::Verdict;

    /// The verdict's findings: the proof stops at them.
    fn rejected(verdict: &Self::Verdict) -> Vec<Violation>;

    fn pin(subject: &Subject<Self>) -> Self::Pins<'_>;

    /// Every invariant of the table, read on this engine.
    fn evaluate(run: &Run<'_, Self>) -> Vec<Violation>;
}

/// Builds the subject: compiles the contract for backend `P`; `replacement` takes the place of
/// the compiled program (e.g. a definition post-processed by CDK, or an edited spec).
pub fn subject<P: BackendProof>(
    input: &Input,
    replacement: Option<P::Replacement>,
) -> Result<Subject<P>, Diagnostics> {
    P::build(input, replacement)
}

/// The derived matrix plus `extra` hand-written scenarios.
pub fn scenarios<P: BackendProof>(subject: &Subject<P>, extra: Vec<Scenario>) -> Vec<Scenario> {
    let mut all = P::matrix(subject);
    all.extend(extra);
    all
}

/// Runs one scenario and evaluates every invariant over it.
pub fn run_one<P: BackendProof>(
    subject: &Subject<P>,
    scenario: &Scenario,
    seed: u64,
) -> ScenarioReport {
    run_one_proven(subject, &P::static_verdict(subject), scenario, seed)
}

fn run_one_proven<P: BackendProof>(
    subject: &Subject<P>,
    verdict: &P::Verdict,
    scenario: &Scenario,
    seed: u64,
) -> ScenarioReport {
    let (metrics, violations, unmet_expectations, error, trace) =
        // Without state payloads in the histories: the checks read event types, state names
        // and errors only, which are kept either way.
        match run::run(subject, verdict, scenario, seed, false) {
            Ok(run) => {
                let violations = P::evaluate(&run);
                let trace = run.world.trace.render();
                (run.metrics, violations, run.unmet, None, trace)
            }
            Err(e) => (
                Metrics::default(),
                Vec::new(),
                Vec::new(),
                Some(e.to_string()),
                String::new(),
            ),
        };
    ScenarioReport {
        name: scenario.name.clone(),
        description: scenario.description.clone(),
        metrics,
        violations,
        unmet_expectations,
        error,
        trace,
        backend: P::BACKEND,
    }
}

/// Runs every scenario, after the static checks: a driver they reject gets that verdict alone,
/// as one report, in the time the checks take; running it could only cost time and repeat the
/// finding.
pub fn prove<P: BackendProof>(
    subject: &Subject<P>,
    scenarios: &[Scenario],
    seed: u64,
) -> Vec<ScenarioReport> {
    let verdict = P::static_verdict(subject);
    let rejected = P::rejected(&verdict);
    if !rejected.is_empty() {
        return vec![ScenarioReport {
            name: STATIC_CHECKS.to_string(),
            description: P::STATIC_DESCRIPTION.to_string(),
            metrics: Metrics::default(),
            violations: rejected,
            unmet_expectations: Vec::new(),
            error: None,
            trace: String::new(),
            backend: P::BACKEND,
        }];
    }
    let _pinned = P::pin(subject);
    scenarios
        .iter()
        .map(|s| run_one_proven(subject, &verdict, s, seed))
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
