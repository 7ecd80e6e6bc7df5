//! What a proof is about, whatever the engine: one release's contract, plan and TPF pipeline,
//! the program a backend runs for it, and a second release of the same contract for "a new
//! release activated mid-flight". Each backend says what its program is (the Step Functions
//! machines, the durable driver program) and compiles it with its own lowering: no backend's
//! subject is built from another's.

use std::sync::Arc;

use serde_json::{json, Value};
use tpf_model::worker::PipelineDef;
use tpf_sfn_compiler::compile::{compile, Input, Lowering};
use tpf_sfn_compiler::contract::Contract;
use tpf_sfn_compiler::diagnostic::{Diagnostic, Diagnostics};
use tpf_sfn_compiler::plan::{AwaitPoint, DriverPlan};
use tpf_wire::Identity;

use crate::scenario::matrix::AWAIT_TIMEOUT_S;

/// What the backend-neutral parts of the proof (the matrix, the await classes) ask of a
/// backend's program.
pub trait Program: Clone {
    /// Calls one generation makes at most before it hands over to the next.
    fn max_iterations(&self) -> u64;

    /// This program's own part of the key that makes awaits interchangeable (see
    /// `scenario::classes`), for the `k`-th await of the plan: `None` when the await cannot
    /// share a class, `Value::Null` when the program adds nothing to the plan's facts.
    fn await_key(&self, k: usize, point: &AwaitPoint) -> Option<Value>;
}

/// One release under test on one backend.
#[derive(Debug, Clone)]
pub struct Subject<P> {
    pub contract: Contract,
    pub plan: DriverPlan,
    /// The TPF model's pipeline of `contract` at the matrix's await timeout, built once: every
    /// scenario's world runs on it, and building it per scenario was a visible part of a run.
    pub pipeline: Arc<PipelineDef>,
    /// What the engine runs for this release.
    pub program: P,
    pub next_release: Option<NextRelease<P>>,
}

/// A second release of the same contract, for "a new release activated mid-flight".
#[derive(Debug, Clone)]
pub struct NextRelease<P> {
    pub identity: Identity,
    pub program: P,
}

impl<P> Subject<P> {
    pub fn new(
        contract: Contract,
        plan: DriverPlan,
        program: P,
        next_release: Option<NextRelease<P>>,
    ) -> Subject<P> {
        let pipeline = Arc::new(pipeline_of(&contract, AWAIT_TIMEOUT_S));
        Subject {
            contract,
            plan,
            pipeline,
            program,
            next_release,
        }
    }
}

/// Items a fanned-out stream carries into an itemized await.
pub const ITEMS_PER_STREAM: u32 = 3;

/// The TPF model's pipeline of `contract` with every await timing out after
/// `await_timeout_seconds`.
pub fn pipeline_of(contract: &Contract, await_timeout_seconds: u64) -> PipelineDef {
    let steps: Vec<_> = contract.steps.iter().map(|s| s.facts()).collect();
    PipelineDef::from_contract(
        &steps,
        ITEMS_PER_STREAM,
        await_timeout_seconds as i64 * 1000,
    )
}

/// The pipeline-release.json of the second release the proof activates mid-flight; the
/// end-to-end tests deploy and register the same one.
pub fn next_release_descriptor(identity: &Identity) -> Value {
    json!({
        "schemaVersion": 1,
        "pipelineId": identity.pipeline_id,
        "contractVersion": identity.contract_version,
        "releaseVersion": format!("{}+next", identity.release_version),
        "artifacts": [{ "artifactId": "next", "kind": "container-image", "uri": "oci://next", "digest": "sha256:00" }]
    })
}

/// The same inputs compiled as the second release after `identity`, with `backend`'s lowering.
pub fn compile_next<L: Lowering>(
    input: &Input,
    identity: &Identity,
    backend: L,
) -> Result<L::Output, Diagnostics> {
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
        backend,
    )
}

/// Every backend's Action API v1 proof refuses the gateway binding: it runs the v1 drivers
/// against the v1 model; the gateway binding's drivers are proven in the gateway world.
pub fn gateway_unproven() -> Diagnostics {
    tpf_sfn_compiler::Diagnostic::error(
        "CONFIG_BINDING_UNPROVABLE",
        tpf_sfn_compiler::diagnostic::Location::pointer("tpf-sfn.toml", "binding.kind"),
        "the Action API v1 proof runs the http, lambda and queue bindings; the gateway binding's driver follows TPF's gateway protocol",
    )
    .with_hint("run the proof with binding.kind = \"http\", \"lambda\" or \"queue\"")
    .into()
}
