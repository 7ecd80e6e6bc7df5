//! The gateway world: TPF's AWS coordination host as the drivers of the gateway protocol meet
//! it (`docs/gateway.md`), the same for every backend.
//!
//! - `engine`: the seam a backend's engine implements ([`engine::GatewayEngine`]) and what its
//!   drivers reach outside it ([`engine::GatewayHost`]);
//! - `world`: TPF's gateway over the model, TPF's work function on the virtual clock, the two
//!   streams derived from the model's writes, the wake-up, the reconciler and the starter
//!   (`tpf_sfn_wakeup`'s decisions), around one engine;
//! - `view`: the wake-up's and reconciler's reads (`HostView`) over the world;
//! - `faults`: TPF's fault points, armed once or persistent;
//! - `trace`: what the world records;
//! - `catalogue`: the scenarios by TPF's conformance ids and the plan's cases, with what each
//!   injects and asserts, and which of TPF's 22 each covers;
//! - `scenarios`: their runs, and the runner;
//! - `failure`: why a scenario's own assertions failed;
//! - `checks`: the invariants every run is held to.

pub mod catalogue;
pub mod checks;
pub mod engine;
pub mod failure;
pub mod faults;
pub mod scenarios;
pub mod trace;
mod view;
pub mod world;
