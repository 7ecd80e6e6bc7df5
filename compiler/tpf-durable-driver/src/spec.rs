//! The per-release spec a durable driver function reads (`driver.durable.json`).

use serde::{Deserialize, Serialize};
use tpf_wire::Identity;

/// The spec's format; a function refuses a spec of another format.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DurableSpec {
    pub format: u32,
    /// The identity every action call carries; the function is one published version of it.
    pub identity: Identity,
    pub binding: Binding,
    /// The timeout of one gateway call: the function's own timeout is this plus a margin.
    pub action_timeout_seconds: u64,
    /// The contract's await steps, by `authoredName`, as the console names their callbacks.
    #[serde(default)]
    pub awaits: Vec<AwaitSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind",
    deny_unknown_fields
)]
pub enum Binding {
    /// TPF's action gateway: the function runs the gateway driver (`crate::gateway`) on
    /// `AwsDurableExecutionInput`, invoking this numbered version of the gateway.
    Gateway {
        function_arn: String,
        /// The contract's longest await timeout in seconds: a park times out a second after.
        longest_await_seconds: u64,
        /// The deployment sweeps TPF on a schedule (`sweeper.mode = "schedule"`); absent: no.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        scheduled_sweep: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AwaitSpec {
    pub step_name: String,
    pub step_index: u32,
}
