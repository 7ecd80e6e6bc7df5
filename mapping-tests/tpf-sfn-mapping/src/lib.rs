//! The mapping proof: runs a release's driver on a deterministic, virtual-time engine against
//! the executable reference model of TPF's coordinator (`tpf-model`), with the wake path's own
//! decisions (`tpf-sfn-wakeup`) in between, and checks named invariants over every trace.
//!
//! Backend-neutral:
//! - `subject`: what a proof is about (contract, plan, TPF pipeline, next release) and the
//!   program a backend runs for it;
//! - `proof`: the gate's entry points for any backend (build the subject, static checks, run,
//!   verdict) and the [`proof::BackendProof`] each backend implements;
//! - `scenario`: the scenario model, the matrix derived from a contract, budgets, await classes
//!   and what every runner shares;
//! - `invariants`: the one table of named checks, and the checks every backend shares;
//! - `gateway`: TPF's own AWS coordination host (the action gateway over the model, the
//!   binding table, the wake-up, the reconciler, the starter, TPF's fault points) as one world
//!   any backend's gateway driver runs in, through the `GatewayEngine` trait;
//! - `harness`: actors, faults, the wakeup table, traces, and where the ASL engine and the
//!   model meet (bindings, world loop).
//!
//! One folder per backend:
//! - `sfn`: AWS Step Functions, the compiled machines on the ASL interpreter (`asl-interp`);
//! - `durable`: Lambda durable functions, the driver program on the replay engine
//!   (`durable-interp`).

pub mod durable;
pub mod gateway;
pub mod harness;
pub mod invariants;
pub mod proof;
pub mod scenario;
pub mod sfn;
pub mod subject;
