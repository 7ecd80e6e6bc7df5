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
    /// Which TPF the drivers face: the one the Action API specifies, or TPF as it is today.
    #[serde(default)]
    pub tpf: TpfVariant,
}

/// The TPF a scenario runs against. The default is the TPF the Action API specifies; the other
/// settings are TPF as it is today, against which the drivers must stay safe
/// (`docs/runtime.md`, "Changes TPF must make").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct TpfVariant {
    /// `durable` (each item continuation a work item its own driver runs) or `in-process`.
    pub item_continuations: ItemContinuationMode,
    /// `process-work-item` applies a passed await deadline (the Action API's rule).
    pub process_applies_await_deadline: bool,
}

impl Default for TpfVariant {
    fn default() -> Self {
        Self {
            item_continuations: ItemContinuationMode::Durable,
            process_applies_await_deadline: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemContinuationMode {
    Durable,
    InProcess,
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
    /// `complete`, `park`, `fail-retryable:<Code>`, `fail-non-retryable:<Code>`,
    /// `remote-outcome-unknown:<Code>` (no answer within the caller's deadline: TPF marks the
    /// execution REMOTE_OUTCOME_UNKNOWN with that code); attempt 0 first.
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
    /// TPF's record is REMOTE_OUTCOME_UNKNOWN.
    TpfRemoteOutcomeUnknown,
    TpfWaitRetry,
    DriverFailed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Do {
    CompleteAwait,
    CompleteAwaitTwice,
    CompleteBeforePark,
    /// Another TPF worker claims the lease just before the driver's first call and dies
    /// holding it (set up at the start, like `complete-before-park`).
    TakeLeaseFirst,
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
    /// At most this many process-work-item calls on the first execution (bounded re-asks).
    pub max_action_calls: Option<u64>,
    /// Child executions that carried the first execution's items.
    pub item_executions: Option<u32>,
}

impl Scenario {
    pub fn from_toml(text: &str) -> Result<Scenario, toml::de::Error> {
        toml::from_str(text)
    }
}
