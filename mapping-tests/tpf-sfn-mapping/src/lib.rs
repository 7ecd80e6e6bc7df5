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

pub mod durable;
pub mod gateway;
pub mod sfn;
