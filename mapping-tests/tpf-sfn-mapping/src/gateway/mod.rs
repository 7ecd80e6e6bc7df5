//! The gateway world: TPF's AWS coordination host as the drivers of the gateway protocol meet
//! it (`docs/gateway.md`), the same for every backend.
//!
//! - `engine`: the seam a backend's engine implements ([`engine::GatewayEngine`]) and what its
//!   drivers reach outside it ([`engine::GatewayHost`]).
pub mod engine;
