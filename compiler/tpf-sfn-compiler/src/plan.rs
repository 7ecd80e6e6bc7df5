//! The driver plan: a backend-neutral description of one release's gateway driver — identity,
//! await points, the gateway binding, the call timeout, the scheduled sweep, tags.
//!
//! A backend lowers it into its own artefacts (`crate::sfn` for Step Functions). The plan holds
//! no engine vocabulary: no state names, no engine error names, no ARNs, no history limits.

use std::collections::BTreeMap;

use crate::config::{rate_period_seconds, DriverConfig, GatewayTransport, LogLevel, SweepMode};
use crate::contract::{Contract, HashCheck};
use crate::release::Identity;

#[derive(Debug, Clone, PartialEq)]
pub struct DriverPlan {
    pub identity: Identity,
    pub contract: ContractFacts,
    /// Prefix of every deployed resource's name.
    pub name_prefix: String,
    pub awaits: Vec<AwaitPoint>,
    /// TPF's action gateway, the one binding (Action API v1's are refused before a plan).
    pub binding: GatewayPlan,
    /// Ceiling on engine events (Step Functions history events, durable-function operations)
    /// per driver generation; a generation hands over to the next before it is reached.
    pub generation_event_budget: u32,
    /// Timeout of one gateway call.
    pub action_timeout_seconds: u64,
    pub tags: BTreeMap<String, String>,
    pub logging: LoggingPlan,
    pub tracing: bool,
    pub aws: AwsAccount,
}

/// What the manifest and the console need to know about the contract.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractFacts {
    pub schema_version: u8,
    pub contract_hash: String,
    pub verified: bool,
    pub step_count: usize,
}

/// One contract await step, as the driver parks on it.
#[derive(Debug, Clone, PartialEq)]
pub struct AwaitPoint {
    pub step_index: u32,
    /// Verbatim `authoredName`: what TPF reports in `await.stepName` and the route compares.
    pub authored_name: String,
    pub kind: String,
    pub cardinality: &'static str,
    pub cardinality_raw: String,
    pub transport: Option<String>,
    /// `callback` (human/API) or `broker` (Kafka/SQS) completion ingress.
    pub ingress: &'static str,
    /// Itemized: a ONE_TO_ONE await over a stream (its producer fans out).
    pub itemized: bool,
}

/// The gateway binding: what the driver calls, through what, and how long it may park.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayPlan {
    /// The gateway function's numbered version.
    pub function_arn: String,
    /// `None`: the engine invokes the function; `Some`: it sends to this queue, and a relay
    /// invokes the function.
    pub queue_url: Option<String>,
    /// The function that starts the next generation under TPF's name.
    pub starter_function_arn: String,
    /// The longest await timeout among the contract's awaits (each its own, else the
    /// configured one), in whole seconds rounded up: a park lasts at most this plus a second.
    pub longest_await_seconds: u64,
    /// The wake-path stack's scheduled sweep (`sweeper.mode = "schedule"`), or `None`: every
    /// poll sweeps, as TPF's own driver does.
    pub scheduled_sweep: Option<ScheduledSweep>,
}

impl GatewayPlan {
    /// The scheduled sweep's period in seconds, when the release sweeps on a schedule.
    pub fn scheduled_sweep_seconds(&self) -> Option<u64> {
        self.scheduled_sweep.as_ref().map(|s| s.period_seconds)
    }
}

/// TPF's `SWEEP` on an EventBridge Scheduler schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledSweep {
    /// The `rate(...)` expression.
    pub expression: String,
    /// Its period, in seconds.
    pub period_seconds: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoggingPlan {
    pub level: LogLevel,
    pub include_execution_data: bool,
    pub log_group_arn: Option<String>,
}

/// Partition, region and account the release deploys to; `*` where the config leaves them open.
#[derive(Debug, Clone, PartialEq)]
pub struct AwsAccount {
    pub partition: String,
    pub region: String,
    pub account_id: String,
}

/// Builds the plan.
pub fn build(
    contract: &Contract,
    hash: &HashCheck,
    identity: &Identity,
    config: &DriverConfig,
) -> DriverPlan {
    let await_steps: Vec<&crate::contract::Step> =
        contract.steps.iter().filter(|s| s.is_await()).collect();
    let awaits = await_steps
        .iter()
        .map(|step| AwaitPoint {
            step_index: step.index,
            authored_name: step.authored_name.clone(),
            kind: step.kind.clone(),
            cardinality: step.cardinality.as_str(),
            cardinality_raw: step.cardinality_raw.clone(),
            transport: step
                .await_transport
                .as_ref()
                .map(|t| t.as_str().to_string()),
            ingress: step.ingress(),
            itemized: is_itemized(contract, step),
        })
        .collect();

    let g = &config.binding.gateway;
    let longest_await_seconds = await_steps
        .iter()
        .map(|s| {
            s.deferred_completion
                .as_ref()
                .map_or(g.await_timeout_seconds, |d| {
                    u64::try_from(d.timeout_ms).unwrap_or(0).div_ceil(1000)
                })
        })
        .max()
        .unwrap_or(g.await_timeout_seconds);
    let binding = GatewayPlan {
        function_arn: g.function_arn.clone(),
        queue_url: (g.transport == GatewayTransport::Queue).then(|| g.queue_url.clone()),
        starter_function_arn: g.starter_function_arn.clone(),
        longest_await_seconds,
        scheduled_sweep: match config.sweeper.mode {
            SweepMode::Driver => None,
            SweepMode::Schedule => {
                rate_period_seconds(&config.sweeper.schedule).map(|period_seconds| ScheduledSweep {
                    expression: config.sweeper.schedule.trim().to_owned(),
                    period_seconds,
                })
            }
        },
    };

    let opt = |v: &Option<String>| {
        v.clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "*".to_string())
    };
    DriverPlan {
        identity: identity.clone(),
        contract: ContractFacts {
            schema_version: contract.schema_version,
            contract_hash: contract.contract_hash.clone(),
            verified: matches!(hash, HashCheck::Verified),
            step_count: contract.steps.len(),
        },
        name_prefix: config.name_prefix.clone(),
        awaits,
        binding,
        generation_event_budget: config.history.event_budget,
        action_timeout_seconds: config.timeouts.action_call_seconds,
        tags: config.tags.clone(),
        logging: LoggingPlan {
            level: config.logging.level,
            include_execution_data: config.logging.include_execution_data,
            log_group_arn: config.logging.log_group_arn.clone(),
        },
        tracing: config.tracing.enabled,
        aws: AwsAccount {
            partition: config
                .aws
                .partition
                .clone()
                .unwrap_or_else(|| "aws".to_string()),
            region: opt(&config.aws.region),
            account_id: opt(&config.aws.account_id),
        },
    }
}

/// An await is itemized when it is ONE_TO_ONE over a stream (`tpf_wire::cardinality`).
fn is_itemized(contract: &Contract, step: &crate::contract::Step) -> bool {
    let cardinalities: Vec<_> = contract.steps.iter().map(|s| s.cardinality).collect();
    step.cardinality == crate::contract::Cardinality::OneToOne
        && tpf_wire::cardinality::streams_into(&cardinalities, step.index as usize)
}
