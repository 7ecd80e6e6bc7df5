//! The mapping proof: runs compiled drivers in the ASL interpreter (`asl-interp`) against the
//! executable reference model of TPF's coordinator (`tpf-model`), with the wake path's own
//! decisions (`tpf-sfn-wakeup`) in between, and checks named invariants over every trace.
//!
//! - `harness`: where the engine and the model meet — bindings, wakeup table, faults, traces;
//! - `scenario`: the matrix derived from a contract, hand-written scenarios, the runner;
//! - `invariants`: the named checks;
//! - `proof`: the gate's entry points (compile or take a driver, run, verdict);
//! - `durable`: the same proof for the Lambda durable functions backend, on the replay engine
//!   (`durable-interp`).

pub mod durable;
pub mod harness;
pub mod invariants;
pub mod proof;
pub mod scenario;
