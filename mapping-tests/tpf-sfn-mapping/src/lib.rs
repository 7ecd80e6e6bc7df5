//! The mapping proof: runs a release's gateway driver on a deterministic, virtual-time engine
//! in the gateway world (TPF's action gateway over the executable reference model of TPF's
//! coordinator, `tpf-model`, with the wake path's own decisions, `tpf-sfn-wakeup`), and checks
//! named invariants over every run.
//!
//! - `gateway`: TPF's own AWS coordination host (the action gateway over the model, the
//!   binding table, the wake-up, the reconciler, the starter, TPF's fault points) as one world
//!   any backend's gateway driver runs in, through the `GatewayEngine` trait, its scenarios
//!   and its checks;
//! - `sfn`: AWS Step Functions, the compiled gateway driver on the ASL interpreter
//!   (`asl-interp`), and the proof's entry points for both backends (`sfn::gateway_proof`);
//! - `durable`: Lambda durable functions, the gateway driver program on the replay engine
//!   (`durable-interp`).
//!
//! Action API v1's world, retired from `mapping-test` and `simulate` and kept only for the
//! adapter's v1 end-to-end tests until they are retired (then deleted with it):
//! - `subject`: what a proof is about (contract, plan, TPF pipeline, next release) and the
//!   program a backend runs for it;
//! - `proof`: the gate's entry points for any backend (build the subject, static checks, run,
//!   verdict) and the [`proof::BackendProof`] each backend implements;
//! - `scenario`: the scenario model, the matrix derived from a contract, budgets, await classes
//!   and what every runner shares;
//! - `invariants`: the one table of named checks, and the checks every backend shares;
//! - `harness`: actors, faults, the wakeup table, traces, and where the ASL engine and the
//!   model meet (bindings, world loop);
//! - `sfn`'s `world`, `run`, `checks`, `pacing` and [`sfn::Machines`]: the v1 machines on the
//!   ASL interpreter.

pub mod durable;
pub mod gateway;
pub mod harness;
pub mod invariants;
pub mod proof;
pub mod scenario;
pub mod sfn;
pub mod subject;
