//! The Lambda durable functions driver: the program one published function version runs for one
//! release, written once and run by two engines.
//!
//! - [`spec`] is what `tpf-sfn compile --backend lambda-durable` emits per release (the pinned
//!   identity, the gateway binding, the call timeout) and what the function reads.
//! - [`gateway`] is the program: TPF's own coordinator driver over TPF's action gateway
//!   (`drive_gateway`), with the gaps TPF lists for it closed; it asks its engine for a gateway
//!   call as a step, a condition poll and a callback with a submitter.
//! - [`ops::GatewayOps`] is the engine underneath. AWS's durable execution SDK implements it in
//!   the deployed function (`tpf-sfn-lambda`); the mapping proof's virtual-time replay engine
//!   implements it in tests.
//!
//! Nothing here does I/O: every effect is an operation the engine checkpoints, so a replay of
//! the same checkpoints takes the same path.

pub mod gateway;
pub mod ops;
pub mod spec;

pub use gateway::{drive_gateway, GatewayEnd, GatewayFailed, GatewayRun};
pub use ops::GatewayOps;
pub use spec::DurableSpec;
