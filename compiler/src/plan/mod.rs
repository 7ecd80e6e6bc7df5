//! The driver plan: a backend-neutral description of one release's wakeup driver.
//!
//! Everything the templates need is decided here — identity, await points, budgets, bindings,
//! names — so the templates only lay it out. The plan knows nothing about ASL syntax.

pub mod names;

use std::collections::BTreeMap;

use crate::config::{BindingKind, DriverConfig, LogLevel};
use crate::contract::{Contract, HashCheck};
use crate::release::Identity;

/// The driver's fixed states. Await states must not take these names.
pub mod states {
    pub const START: &str = "Start driver generation";
    pub const REGISTER: &str = "Register driver generation";
    pub const PROCESS: &str = "Process work item";
    pub const ROUTE: &str = "Route on TPF status";
    pub const ROUTE_AWAIT: &str = "Route to the parked await step";
    pub const GENERIC_AWAIT: &str = "Await external completion";
    pub const WAIT_DUE: &str = "Wait until due";
    pub const WAIT_LEASE: &str = "Wait for lease";
    pub const RECHECK: &str = "Wait before re-checking TPF";
    pub const COUNT: &str = "Count loop iteration";
    pub const CHECK_BUDGET: &str = "Check history budget";
    pub const CONTINUE: &str = "Continue as new generation";
    pub const HANDED_OVER: &str = "Generation handed over";
    pub const SUCCEEDED: &str = "Execution succeeded";
    pub const FAILED: &str = "Execution failed in TPF";
    pub const MISMATCH: &str = "Release identity mismatch";
    pub const NOT_FOUND: &str = "Execution unknown to TPF";
    pub const UNEXPECTED: &str = "Unexpected TPF outcome";

    pub const ALL: &[&str] = &[
        START,
        REGISTER,
        PROCESS,
        ROUTE,
        ROUTE_AWAIT,
        GENERIC_AWAIT,
        WAIT_DUE,
        WAIT_LEASE,
        RECHECK,
        COUNT,
        CHECK_BUDGET,
        CONTINUE,
        HANDED_OVER,
        SUCCEEDED,
        FAILED,
        MISMATCH,
        NOT_FOUND,
        UNEXPECTED,
    ];
}

#[derive(Debug, Clone, PartialEq)]
pub struct DriverPlan {
    pub identity: Identity,
    pub contract: ContractFacts,
    pub machines: MachineNames,
    pub awaits: Vec<AwaitPoint>,
    pub binding: BindingPlan,
    pub budget: Budget,
    pub wakeup: WakeupPlan,
    pub action_timeout_seconds: u64,
    pub sweep_timeout_seconds: u64,
    pub transport_retry: TransportRetry,
    pub sweeper: SweeperPlan,
    pub tags: BTreeMap<String, String>,
    pub logging: LoggingPlan,
    pub tracing: bool,
    pub aws: ArnContext,
}

/// What the manifest and the console need to know about the contract.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractFacts {
    pub schema_version: u8,
    pub contract_hash: String,
    pub verified: bool,
    pub step_count: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MachineNames {
    pub driver: String,
    pub sweeper: String,
}

/// One contract await step, as the driver parks on it.
#[derive(Debug, Clone, PartialEq)]
pub struct AwaitPoint {
    pub step_index: u32,
    /// Verbatim `authoredName`: what TPF reports in `await.stepName` and the route compares.
    pub authored_name: String,
    /// The unique, readable state name.
    pub state_name: String,
    pub kind: String,
    pub cardinality: &'static str,
    pub cardinality_raw: String,
    pub transport: Option<String>,
    /// `callback` (human/API) or `broker` (Kafka/SQS) completion ingress.
    pub ingress: &'static str,
    /// Itemized: a ONE_TO_ONE await over a stream (its producer fans out).
    pub itemized: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BindingPlan {
    Http {
        api_base_url: String,
        connection_arn: String,
    },
    Lambda {
        function_arn: String,
    },
    Queue {
        queue_url: String,
    },
}

impl BindingPlan {
    pub fn kind(&self) -> BindingKind {
        match self {
            BindingPlan::Http { .. } => BindingKind::Http,
            BindingPlan::Lambda { .. } => BindingKind::Lambda,
            BindingPlan::Queue { .. } => BindingKind::Queue,
        }
    }

    /// Error names that mean "the call did not get through"; the only errors Step Functions
    /// retries. Everything TPF decided arrives as a 2xx outcome instead.
    pub fn transport_errors(&self) -> Vec<&'static str> {
        match self {
            BindingPlan::Http { .. } => vec![
                "States.Http.Socket",
                "States.Timeout",
                "States.Http.StatusCode.429",
                "States.Http.StatusCode.500",
                "States.Http.StatusCode.502",
                "States.Http.StatusCode.503",
                "States.Http.StatusCode.504",
            ],
            BindingPlan::Lambda { .. } => vec![
                "Lambda.ServiceException",
                "Lambda.AWSLambdaException",
                "Lambda.SdkClientException",
                "Lambda.TooManyRequestsException",
                "TPF.TransportError",
                "States.Timeout",
            ],
            BindingPlan::Queue { .. } => vec![
                "SQS.SdkClientException",
                "SQS.AmazonSQSException",
                "TPF.TransportError",
                "States.Timeout",
            ],
        }
    }

    pub fn identity_mismatch_error(&self) -> &'static str {
        match self {
            BindingPlan::Http { .. } => "States.Http.StatusCode.409",
            _ => "TPF.ReleaseIdentityMismatch",
        }
    }

    pub fn not_found_error(&self) -> &'static str {
        match self {
            BindingPlan::Http { .. } => "States.Http.StatusCode.404",
            _ => "TPF.ExecutionNotFound",
        }
    }
}

/// How long one generation may loop before it hands over to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Configured ceiling on history events per generation.
    pub event_budget: u32,
    /// Loop iterations after which the driver continues as a new generation. Computed from the
    /// rendered definition so that the validator's worst-case bound stays under `event_budget`.
    pub max_iterations: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WakeupPlan {
    pub table_name: String,
    pub lease_wait_seconds: u64,
    pub recheck_seconds: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransportRetry {
    pub interval_seconds: u64,
    pub max_attempts: u64,
    pub backoff_rate: f64,
    pub max_delay_seconds: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SweeperPlan {
    pub schedule: String,
    pub limit: u32,
    pub max_concurrency: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoggingPlan {
    pub level: LogLevel,
    pub include_execution_data: bool,
    pub log_group_arn: Option<String>,
}

/// Partition, region and account for ARNs in policies; `*` where the config leaves them open.
#[derive(Debug, Clone, PartialEq)]
pub struct ArnContext {
    pub partition: String,
    pub region: String,
    pub account_id: String,
}

impl ArnContext {
    pub fn state_machine_arn(&self, name: &str) -> String {
        format!(
            "arn:{}:states:{}:{}:stateMachine:{name}",
            self.partition, self.region, self.account_id
        )
    }

    pub fn executions_arn(&self, machine: &str) -> String {
        format!(
            "arn:{}:states:{}:{}:execution:{machine}:*",
            self.partition, self.region, self.account_id
        )
    }

    pub fn table_arn(&self, table: &str) -> String {
        format!(
            "arn:{}:dynamodb:{}:{}:table/{table}",
            self.partition, self.region, self.account_id
        )
    }
}

/// Builds the plan. `max_iterations` starts at a placeholder; the compiler sizes it after a
/// first render (see `compile`).
pub fn build(
    contract: &Contract,
    hash: &HashCheck,
    identity: &Identity,
    config: &DriverConfig,
) -> DriverPlan {
    let await_steps: Vec<&crate::contract::Step> =
        contract.steps.iter().filter(|s| s.is_await()).collect();
    let keyed: Vec<(u32, &str)> = await_steps
        .iter()
        .map(|s| (s.index, s.authored_name.as_str()))
        .collect();
    let state_names = names::assign_await_names(&keyed, states::ALL);
    let awaits = await_steps
        .iter()
        .zip(state_names)
        .map(|(step, state_name)| AwaitPoint {
            step_index: step.index,
            authored_name: step.authored_name.clone(),
            state_name,
            kind: step.kind.clone(),
            cardinality: step.cardinality.as_str(),
            cardinality_raw: step.cardinality_raw.clone(),
            transport: step
                .await_transport
                .as_ref()
                .map(|t| t.as_str().to_string()),
            ingress: step
                .await_transport
                .as_ref()
                .map(|t| t.ingress())
                .unwrap_or("unspecified"),
            itemized: is_itemized(contract, step),
        })
        .collect();

    let binding = match config.binding.kind {
        BindingKind::Http => BindingPlan::Http {
            api_base_url: config
                .binding
                .http
                .api_base_url
                .trim_end_matches('/')
                .to_string(),
            connection_arn: config.binding.http.connection_arn.clone(),
        },
        BindingKind::Lambda => BindingPlan::Lambda {
            function_arn: config.binding.lambda.function_arn.clone(),
        },
        BindingKind::Queue => BindingPlan::Queue {
            queue_url: config.binding.queue.queue_url.clone(),
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
        machines: MachineNames {
            driver: names::machine_name(
                &config.name_prefix,
                &identity.pipeline_id,
                &identity.release_version,
                "driver",
            ),
            sweeper: names::machine_name(
                &config.name_prefix,
                &identity.pipeline_id,
                &identity.release_version,
                "sweeper",
            ),
        },
        awaits,
        binding,
        budget: Budget {
            event_budget: config.history.event_budget,
            max_iterations: 1,
        },
        wakeup: WakeupPlan {
            table_name: config.wakeup.table_name.clone(),
            lease_wait_seconds: config.wakeup.lease_wait_seconds,
            recheck_seconds: config.wakeup.recheck_seconds,
        },
        action_timeout_seconds: config.timeouts.action_call_seconds,
        sweep_timeout_seconds: config.timeouts.sweep_call_seconds,
        transport_retry: TransportRetry {
            interval_seconds: config.transport_retry.interval_seconds,
            max_attempts: config.transport_retry.max_attempts,
            backoff_rate: config.transport_retry.backoff_rate,
            max_delay_seconds: config.transport_retry.max_delay_seconds,
        },
        sweeper: SweeperPlan {
            schedule: config.sweeper.schedule.clone(),
            limit: config.sweeper.limit,
            max_concurrency: config.sweeper.max_concurrency,
        },
        tags: config.tags.clone(),
        logging: LoggingPlan {
            level: config.logging.level,
            include_execution_data: config.logging.include_execution_data,
            log_group_arn: config.logging.log_group_arn.clone(),
        },
        tracing: config.tracing.enabled,
        aws: ArnContext {
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

/// An await is itemized when it is ONE_TO_ONE over a stream: some earlier step fanned out and
/// nothing reduced the stream again before it (tpf-domain §2, "Cardinality As Unit Shape").
fn is_itemized(contract: &Contract, step: &crate::contract::Step) -> bool {
    use crate::contract::Cardinality::*;
    if step.cardinality != OneToOne {
        return false;
    }
    let mut streaming = false;
    for s in contract.steps.iter().take_while(|s| s.index < step.index) {
        match s.cardinality {
            OneToMany | ManyToMany => streaming = true,
            ManyToOne => streaming = false,
            OneToOne => {}
        }
    }
    streaming
}
