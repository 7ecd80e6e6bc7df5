//! The mapping proof for the Lambda durable functions backend: the driver program
//! (`tpf_durable_driver`) on the replay engine (`durable-interp`), against the same TPF model,
//! wakeup table, bridge decisions, faults and scenario matrix as the Step Functions proof, with
//! the same named invariants.
//!
//! - `program`: the engine's operations as the driver's `Ops`, and the function version's
//!   handler that runs the loop from the start on every invocation;
//! - `world`: engine, TPF, wakeup table, bridge and sweeper function on one clock, and the
//!   steps' effects (action calls with faults, the driver's rows, the hand-over), with the
//!   sweeper function acting on `tpf_sfn_wakeup::sweeper::decide`;
//! - `run`: the subject, the matrix on this backend, the runner and its metrics;
//! - `checks`: the invariants over durable runs.

pub mod checks;
pub mod program;
pub mod run;
pub mod world;

pub use program::{Compiled, EngineOps, Variant};
pub use run::{DurableRun, DurableSubject};
