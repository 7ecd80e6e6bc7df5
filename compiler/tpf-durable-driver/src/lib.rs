//! The Lambda durable functions driver: the program one published function version runs for one
//! release, written once and run by two engines.
//!
//! - [`spec`] is what `tpf-sfn compile --backend lambda-durable` emits per release (the pinned
//!   identity, the binding, the wakeup timing, the operation budget) and what the function reads.
//! - [`driver::drive`] is the loop: ask TPF, follow its answer, wait until due or park on a
//!   callback until the bridge wakes it, hand over before the operation budget runs out. It
//!   decides nothing TPF has not answered.
//! - [`ops::Ops`] is the engine underneath: a checkpointed step per action call, a durable wait,
//!   a callback, a hand-over. AWS's durable execution SDK implements it in the deployed function
//!   (`tpf-sfn-lambda`); the mapping proof's virtual-time replay engine implements it in tests.
//!
//! - [`gateway`] is the second program: TPF's own coordinator driver over TPF's action gateway
//!   (`drive_gateway`), with the gaps TPF lists for it closed; it asks the same engine for a
//!   gateway call as a step, a condition poll and a callback with a submitter.
//!
//! - [`limits`] holds the service's operation and written-state caps and bounds what one
//!   checkpoint may write, so the compiler can prove a generation stays under both.
//!
//! Nothing here does I/O: every effect is an operation the engine checkpoints, so a replay of
//! the same checkpoints takes the same path.

pub mod driver;
pub mod gateway;
pub mod limits;
pub mod names;
pub mod ops;
pub mod spec;

pub use driver::{drive, End};
pub use gateway::{drive_gateway, GatewayEnd, GatewayFailed, GatewayRun};
pub use ops::{CallOutcome, GatewayOps, Ops, Wake};
pub use spec::{DriverInput, DurableSpec};
