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
    pub wakeup: Wakeup,
    pub transport_retry: TransportRetry,
    pub action_timeout_seconds: u64,
    /// Operations one execution (a generation) may checkpoint before it hands over. Below the
    /// service's 25,000, and low enough that a replay stays cheap (each invocation replays every
    /// checkpoint before it).
    pub operation_budget: u32,
    /// Calls one generation makes at most: solved by the compiler so that the worst iteration
    /// (every transport retry, then a park) still fits the operation budget.
    pub max_iterations: u64,
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
pub struct Wakeup {
    pub table_name: String,
    pub lease_wait_seconds: u64,
    pub recheck_seconds: u64,
    pub late_recheck_seconds: u64,
    pub late_recheck_max_seconds: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransportRetry {
    pub interval_seconds: u64,
    /// Retries after the first delivery (Step Functions' `MaxAttempts` meaning).
    pub max_attempts: u64,
    pub backoff_rate: f64,
    pub max_delay_seconds: u64,
}

impl TransportRetry {
    /// The pause before retry `n` (1-based): interval × rate^(n-1), capped.
    pub fn delay_seconds(&self, n: u64) -> u64 {
        let exp = i32::try_from(n.saturating_sub(1)).unwrap_or(i32::MAX);
        let d = self.interval_seconds as f64 * self.backoff_rate.powi(exp);
        let capped = if self.max_delay_seconds > 0 {
            d.min(self.max_delay_seconds as f64)
        } else {
            d
        };
        // A durable wait lasts at least a second.
        (capped.ceil() as u64).max(1)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AwaitSpec {
    pub step_name: String,
    pub step_index: u32,
}
