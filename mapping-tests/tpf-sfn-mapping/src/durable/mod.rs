//! The gateway world's engine on Lambda durable functions: the gateway driver program
//! (`tpf_durable_driver::gateway`) on the replay engine (`durable-interp`).
//!
//! - `gateway`: the gateway driver's function version and its steps' effects over the gateway
//!   world's host;
//! - `gateway_engine`: the replay engine as the gateway world's engine;
//! - `program`: the engine's operations as the gateway driver's `GatewayOps`.

pub mod gateway;
pub mod gateway_engine;
pub mod program;

pub use program::EngineOps;
