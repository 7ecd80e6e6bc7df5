//! The mapping proof: runs compiled drivers in a deterministic, virtual-time ASL interpreter
//! against an executable reference model of TPF's coordinator, and checks named invariants over
//! every trace.
//!
//! - `interp`: the ASL interpreter (knows nothing about TPF);
//! - `tpf`: the TPF reference model and Action API v1 (knows nothing about ASL);
//! - `bridge`: the wakeup bridge's decisions, shared with the adapter's real bridge;
//! - `harness`: where the two meet — bindings, wakeup table, faults, traces;
//! - `scenario`: the matrix derived from a contract, hand-written scenarios, the runner;
//! - `invariants`: the named checks.

pub mod bridge;
pub mod harness;
pub mod interp;
pub mod invariants;
pub mod proof;
pub mod scenario;
pub mod tpf;
