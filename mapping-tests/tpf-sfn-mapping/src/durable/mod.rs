//! The mapping proof on Lambda durable functions: the driver program (`tpf_durable_driver`) on
//! the replay engine (`durable-interp`), against the same TPF model, wakeup table, bridge
//! decisions, faults and scenario matrix as every backend, with the same named invariants.
//!
//! - this module: the program ([`Driver`]) and the backend's part of the proof;
//! - `gateway`: the gateway driver's function version and its steps' effects over the gateway
//!   world's host;
//! - `gateway_engine`: the replay engine as the gateway world's engine;
//! - `program`: the engine's operations as the driver's `Ops`, and the function version's
//!   handler that runs the loop from the start on every invocation;
//! - `world`: engine, TPF, wakeup table, bridge and sweeper function on one clock, and the
//!   steps' effects (action calls with faults, the driver's rows, the hand-over), with the
//!   sweeper function acting on `tpf_sfn_wakeup::sweeper::decide`;
//! - `run`: the matrix on this backend, the runner and its metrics;
//! - `checks`: this backend's reading of every named invariant, and the spec's static checks.

pub mod checks;
pub mod gateway;
pub mod gateway_engine;
pub mod program;
pub mod run;
pub mod world;

use std::sync::Arc;

use serde_json::Value;
use tpf_durable_driver::DurableSpec;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::diagnostic::Diagnostics;
use tpf_sfn_compiler::durable::LambdaDurable;
use tpf_sfn_compiler::plan::AwaitPoint;

use crate::invariants::Violation;
use crate::proof::{Backend, BackendProof};
use crate::scenario::Scenario;
use crate::subject::{compile_next, NextRelease, Program};

pub use program::{Compiled, EngineOps, Variant};
pub use run::DurableRun;

/// One release's durable driver: the spec its function version reads, and the loop each
/// invocation runs.
#[derive(Clone)]
pub struct Driver {
    pub spec: DurableSpec,
    /// [`Compiled`] unless a test breaks the loop on purpose.
    pub variant: Arc<dyn Variant>,
    /// The release's driver function as `compile` names it, so that a simulated trace names
    /// the function a deployment creates.
    pub function: String,
}

impl Driver {
    /// The shipped loop over `spec`, run by the function `function`.
    pub fn compiled(spec: DurableSpec, function: String) -> Driver {
        Driver {
            spec,
            variant: Arc::new(Compiled),
            function,
        }
    }
}

/// A release under proof on Lambda durable functions.
pub type Subject = crate::subject::Subject<Driver>;

impl Subject {
    /// The same subject with every release's function running `variant`: a broken driver is
    /// broken in every version it publishes.
    pub fn with_variant(mut self, variant: Arc<dyn Variant>) -> Subject {
        self.program.variant = variant.clone();
        if let Some(next) = &mut self.next_release {
            next.program.variant = variant;
        }
        self
    }
}

impl Program for Driver {
    fn max_iterations(&self) -> u64 {
        self.spec.max_iterations
    }

    /// Nothing beyond the plan's facts: the loop is the same code for every await, and the
    /// spec names awaits only for the console.
    fn await_key(&self, _: usize, _: &AwaitPoint) -> Option<Value> {
        Some(Value::Null)
    }
}

impl BackendProof for Driver {
    const BACKEND: Backend = Backend::LambdaDurable;
    const STATIC_DESCRIPTION: &'static str =
        "the static checks' verdict on the durable driver's spec, before any scenario runs";
    type Replacement = DurableSpec;
    type Pins<'s> = ();

    /// Compiles with this backend's own lowering: no Step Functions machine is built to prove a
    /// durable driver.
    fn build(input: &Input, spec: Option<DurableSpec>) -> Result<Subject, Diagnostics> {
        let out = compile(input, LambdaDurable)?;
        if let tpf_durable_driver::spec::Binding::Gateway { .. } = out.durable.spec.binding {
            return Err(crate::subject::gateway_unproven());
        }
        let next = compile_next(input, &out.plan.identity, LambdaDurable)?;
        Ok(Subject::new(
            out.contract,
            out.plan,
            Driver::compiled(spec.unwrap_or(out.durable.spec), out.durable.function_name),
            Some(NextRelease {
                identity: next.plan.identity,
                program: Driver::compiled(next.durable.spec, next.durable.function_name),
            }),
        ))
    }

    fn matrix(subject: &Subject) -> Vec<Scenario> {
        run::scenarios(subject)
    }

    fn static_verdict(subject: &Subject) -> Vec<Violation> {
        checks::static_violations(subject)
    }

    fn rejected(verdict: &Vec<Violation>) -> Vec<Violation> {
        verdict.clone()
    }

    fn pin(_: &Subject) {}

    fn evaluate(run: &DurableRun<'_>) -> Vec<Violation> {
        checks::evaluate(run)
    }
}
