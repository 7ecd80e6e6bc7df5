//! Scenarios as data. The matrix derived from a contract and the hand-written files in
//! `mapping-tests/scenarios/*.toml` use the same types and run the same way.

use serde::Deserialize;

use crate::harness::faults::FaultPlan;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub faults: FaultPlan,
    /// Scripted worker outcomes per step (by authored name), attempt by attempt.
    #[serde(default)]
    pub worker: Vec<WorkerScript>,
    #[serde(default)]
    pub retries: Option<RetryOverride>,
    #[serde(default)]
    pub actions: Vec<Action>,
    #[serde(default)]
    pub expect: Expect,
    /// Virtual time after which the scenario stops, whatever state it is in.
    #[serde(default = "default_horizon")]
    pub horizon_seconds: u64,
    /// Run the sweeper machine on this period. `None`: no sweeper.
    #[serde(default)]
    pub sweeper_every_seconds: Option<u64>,
    /// Await deadline applied to every await step (the contract does not carry timeouts).
    #[serde(default = "default_await_timeout")]
    pub await_timeout_seconds: u64,
}

fn default_horizon() -> u64 {
    6 * 3600
}

fn default_await_timeout() -> u64 {
    1800
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkerScript {
    pub step: String,
    /// `complete`, `park`, `fail-retryable:<Code>`, `fail-non-retryable:<Code>`; attempt 0 first.
    pub outcomes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RetryOverride {
    pub max_retries: u32,
    pub delay_seconds: u64,
    pub multiplier: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Action {
    pub when: When,
    /// For `parked`: which await step (authored name); any when absent.
    #[serde(default)]
    pub step: Option<String>,
    /// For `parked`: the n-th park of the execution (1-based).
    #[serde(default)]
    pub nth: Option<u32>,
    #[serde(default)]
    pub after_seconds: u64,
    #[serde(rename = "do")]
    pub act: Do,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum When {
    Start,
    Parked,
    TpfFailed,
    TpfWaitRetry,
    DriverFailed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Do {
    CompleteAwait,
    CompleteAwaitTwice,
    CompleteBeforePark,
    SubmitDuplicate,
    Redrive,
    ActivateNewRelease,
    AbortDriver,
    ConsoleRedrive,
    /// Fault injection: a second driver for the same TPF execution, under another name, as a
    /// buggy bridge would start it.
    StartExtraDriver,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Expect {
    /// TPF's final status of the first execution.
    pub tpf_status: Option<String>,
    pub error_code: Option<String>,
    pub min_generations: Option<u32>,
    /// Distinct driver lineages of the first execution.
    pub lineages: Option<u32>,
}

impl Scenario {
    pub fn from_toml(text: &str) -> Result<Scenario, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}
