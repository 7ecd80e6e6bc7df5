//! The mapping proof on AWS Step Functions: the compiled driver and sweeper machines in the ASL
//! interpreter (`asl-interp`), against the TPF model.
//!
//! - this module: the program ([`Machines`]) and the backend's part of the proof;
//! - `run`: the runner and its metrics on the interpreter's executions;
//! - `world`: the interpreter as the world's engine (deployed machines, the Task handler of
//!   `crate::harness::bindings`, the sweeper machine on its schedule, history into the trace);
//! - `checks`, `pacing`: this backend's reading of every named invariant, and the validator's
//!   static verdict.

pub mod checks;
pub mod gateway;
pub mod gateway_engine;
pub mod gateway_proof;
mod pacing;
pub mod run;
pub mod world;

use serde_json::Value;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::diagnostic::Diagnostics;
use tpf_sfn_compiler::plan::AwaitPoint;
use tpf_sfn_compiler::sfn::asl::{self, State, StateMachine, WaitState};
use tpf_sfn_compiler::sfn::{SfnPlan, StepFunctions};

use crate::invariants::Violation;
use crate::proof::{Backend, BackendProof};
use crate::scenario::classes::anonymise;
use crate::scenario::{matrix, Scenario};
use crate::subject::{compile_next, NextRelease, Program};

pub use checks::{static_violations, Proven};
pub use run::{run, Run};

/// One release's Step Functions program: its two machines and the lowering's names and loop
/// budget for them.
#[derive(Debug, Clone)]
pub struct Machines {
    /// Machine and state names, and the loop budget, of this release.
    pub sfn: SfnPlan,
    pub driver: StateMachine,
    pub sweeper: StateMachine,
}

/// A release under proof on Step Functions.
pub type Subject = crate::subject::Subject<Machines>;

/// A driver definition the user brings instead of the compiled one: its file name (for
/// diagnostics) and bytes.
#[derive(Debug, Clone)]
pub struct DriverFile {
    pub file: String,
    pub bytes: Vec<u8>,
}

impl Program for Machines {
    fn max_iterations(&self) -> u64 {
        u64::from(self.sfn.budget.max_iterations)
    }

    /// The driver's state for the await, without its comment (which names the step and its
    /// index) and with its names replaced; `None` when the driver has no state for it.
    fn await_key(&self, k: usize, a: &AwaitPoint) -> Option<Value> {
        let state_name = self.sfn.await_states.get(k)?;
        let state = self.driver.states.get(state_name)?;
        let mut v = serde_json::to_value(state).ok()?;
        if let Value::Object(o) = &mut v {
            o.remove("Comment");
        }
        anonymise(&mut v, &[state_name, &a.authored_name]);
        Some(v)
    }
}

impl BackendProof for Machines {
    const BACKEND: Backend = Backend::StepFunctions;
    const STATIC_DESCRIPTION: &'static str =
        "the validator's verdict on the driver, before any scenario runs";
    type Replacement = DriverFile;
    type Pins<'s> = Vec<asl_interp::Pinned<'s>>;

    fn build(input: &Input, driver: Option<DriverFile>) -> Result<Subject, Diagnostics> {
        let out = compile(input, StepFunctions)?;
        let Some(sweeper) = out.sweeper else {
            return Err(crate::subject::gateway_unproven());
        };
        let driver = match driver {
            Some(d) => asl::parse(&d.file, &d.bytes)?,
            None => out.driver,
        };
        let next = compile_next(input, &out.plan.identity, StepFunctions)?;
        Ok(Subject::new(
            out.contract,
            out.plan,
            Machines {
                sfn: out.sfn,
                driver,
                sweeper,
            },
            Some(NextRelease {
                identity: next.plan.identity,
                program: Machines {
                    sfn: next.sfn,
                    driver: next.driver,
                    sweeper: next.sweeper.ok_or_else(crate::subject::gateway_unproven)?,
                },
            }),
        ))
    }

    fn matrix(subject: &Subject) -> Vec<Scenario> {
        matrix::derive(subject)
    }

    fn static_verdict(subject: &Subject) -> Proven {
        Proven::of(subject)
    }

    fn rejected(verdict: &Proven) -> Vec<Violation> {
        verdict.static_violations.clone()
    }

    fn pin(subject: &Subject) -> Vec<asl_interp::Pinned<'_>> {
        pin(subject)
    }

    fn evaluate(run: &Run<'_>) -> Vec<Violation> {
        checks::evaluate(run)
    }
}

/// Pins the subject's machines (both releases) on this thread while the guards live, so every
/// scenario's deploy finds their compiled programs by address instead of comparing the
/// definitions again (see [`asl_interp::Pinned`]). Only a speed-up: runs are the same without.
pub fn pin(subject: &Subject) -> Vec<asl_interp::Pinned<'_>> {
    let mut pins = vec![
        asl_interp::pin(&subject.program.driver),
        asl_interp::pin(&subject.program.sweeper),
    ];
    if let Some(next) = &subject.next_release {
        pins.push(asl_interp::pin(&next.program.driver));
        pins.push(asl_interp::pin(&next.program.sweeper));
    }
    pins
}

/// The same driver with every await state replaced by a fixed-interval poll (`Wait` then ask TPF
/// again): what a driver without callback tokens would do. Used to put the parked driver's cost
/// next to a polling one's, measured by the same interpreter on the same scenario.
pub fn polling_variant(subject: &Subject, interval_seconds: u64) -> Subject {
    let mut s = subject.clone();
    let driver = &mut s.program.driver;
    let awaits: Vec<String> = driver
        .states
        .iter()
        .filter(|(_, st)| matches!(st, State::Task(t) if t.resource.ends_with(".waitForTaskToken") && t.resource.contains("dynamodb")))
        .map(|(n, _)| n.clone())
        .collect();
    for name in awaits {
        let next = tpf_sfn_compiler::sfn::states::driver::PROCESS.to_string();
        driver.states.insert(
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
