//! What both exports hold, written once: names, the wake path's least-privilege statements and
//! the alarms. `cloudformation.rs` and `terraform.rs` only spell these in their own syntax, each
//! [`Res`] as a reference of its own kind, so the two flavours cannot drift apart.

use crate::config::LogLevel;
use crate::sfn::Compiled;

/// What the wake path's durable-functions setting holds (CloudFormation `DurableFunctions`,
/// Terraform `durable_functions`, the gateway host's `TPF_SFN_DURABLE_FUNCTIONS`).
pub const DURABLE_FUNCTIONS_DESCRIPTION: &str = "Releases that run as Lambda durable functions: {\"<pipelineId>@<releaseVersion>\": \"<their release stack's DriverVersionArn>\"}; empty for none";

/// Seconds one action call may take in the relay, and the function's timeout around it.
pub const RELAY_ACTION_TIMEOUT_SECONDS: u64 = 30;
pub const RELAY_TIMEOUT_SECONDS: u64 = 60;
/// Lambda's guidance: a queue's visibility timeout at least six times the function's timeout,
/// so a message is not redelivered while a retried batch still holds it.
pub const ACTION_QUEUE_VISIBILITY_SECONDS: u64 = 6 * RELAY_TIMEOUT_SECONDS;
/// Receives before a message moves to the dead-letter queue.
pub const ACTION_QUEUE_MAX_RECEIVES: u64 = 5;
/// Fourteen days, SQS's longest retention: time to look at what failed.
pub const DLQ_RETENTION_SECONDS: u64 = 1_209_600;
/// A stream record older than this is given up to the failure queue.
pub const STREAM_RECORD_MAX_AGE_SECONDS: u64 = 3600;

/// The gateway host's wake-up mappings, as TPF's template sets them: batches of 10, a failing
/// batch bisected until the failing record is alone, 5 retries, records older than an hour
/// given up to the failure queue.
pub const GATEWAY_STREAM_BATCH_SIZE: u64 = 10;
pub const GATEWAY_STREAM_RETRIES: u64 = 5;
pub const GATEWAY_TIMEOUT_SECONDS: u64 = 60;
pub const GATEWAY_STARTER_TIMEOUT_SECONDS: u64 = 30;
/// TPF's reconciler runs at most two at once.
pub const GATEWAY_RECONCILER_CONCURRENCY: u64 = 2;
/// The Step Functions statuses of an ended driver, the only ones the reconciler acts on.
pub const ENDED_DRIVER_STATUSES: &[&str] = &["FAILED", "TIMED_OUT", "ABORTED"];
pub const SFN_STATUS_SOURCE: &str = "aws.states";
pub const DURABLE_STATUS_SOURCE: &str = "aws.lambda";

/// What the gateway host's parameters say (CloudFormation `GatewayFunctionArn`, Terraform
/// `gateway_function_arn`).
pub const GATEWAY_FUNCTION_DESCRIPTION: &str = "TPF's action gateway by its numbered version (arn:aws:lambda:<region>:<account>:function:<name>:<version>); empty: no gateway host (the binding table, the wake-up, reconciler and starter functions are not created)";
pub const AWAIT_STREAM_DESCRIPTION: &str = "The stream (NEW_AND_OLD_IMAGES) of TPF's await-interaction table, which the gateway host's wake-up reads; empty without the gateway";
/// A numbered version ARN, or empty.
pub const GATEWAY_FUNCTION_PATTERN: &str =
    "^$|^arn:aws[a-z-]*:lambda:[a-z0-9-]+:[0-9]{12}:function:[A-Za-z0-9_-]+:[0-9]+$";
pub const AWAIT_STREAM_PATTERN: &str =
    "^$|^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]+/stream/.+$";
pub const QUEUE_BATCH_SIZE: u64 = 10;
pub use crate::lowering::monitoring::{DEFAULT_LOG_RETENTION_DAYS, LOG_RETENTION_DAYS};

/// The facts of one compiled release both stacks are made of.
pub struct Facts<'a> {
    pub out: &'a Compiled,
    pub prefix: &'a str,
    /// The relay's queue's name, for the gateway's queue transport.
    pub queue: Option<String>,
    /// The machines' log group name, when logging is on.
    pub machines_log_group: Option<String>,
}

impl<'a> Facts<'a> {
    pub fn new(out: &'a Compiled) -> Self {
        let queue = out.plan.binding.queue_url.as_deref().and_then(|u| {
            u.trim_end_matches('/')
                .rsplit('/')
                .next()
                .map(str::to_owned)
        });
        let machines_log_group = match (
            &out.manifest.logging.log_group_arn,
            out.manifest.logging.level,
        ) {
            (Some(arn), level) if level != LogLevel::Off => log_group_name(arn),
            _ => None,
        };
        Facts {
            out,
            prefix: &out.plan.name_prefix,
            queue,
            machines_log_group,
        }
    }

    pub fn relay_function(&self) -> String {
        format!("{}-relay", self.prefix)
    }

    /// The gateway host's parameter's default: the gateway binding's numbered version, so the
    /// wake path of a gateway configuration creates its host without being told.
    pub fn gateway_default(&self) -> &'a str {
        &self.out.plan.binding.function_arn
    }

    /// The gateway the relay invokes on the gateway binding's queue transport (the binding's
    /// numbered version); `None` on the lambda transport, which has no relay.
    pub fn relayed_gateway(&self) -> Option<&'a str> {
        let g = &self.out.plan.binding;
        g.queue_url.as_ref().map(|_| g.function_arn.as_str())
    }

    /// The gateway host's functions: `wakeup`, `reconciler`, `starter`.
    pub fn gateway_function(&self, which: &str) -> String {
        format!("{}-gateway-{which}", self.prefix)
    }

    /// TPF's callback-binding table, where the module names it (CloudFormation names it
    /// itself, as TPF's template lets it).
    pub fn binding_table(&self) -> String {
        format!("{}-callback-binding", self.prefix)
    }

    /// The scheduled sweep (`sweeper.mode = "schedule"`), when the release was compiled for it.
    pub fn scheduled_sweep(&self) -> Option<&'a crate::plan::ScheduledSweep> {
        self.out.plan.binding.scheduled_sweep.as_ref()
    }

    /// The schedule's name (EventBridge Scheduler: at most 64 characters; the prefix is at
    /// most 20).
    pub fn sweep_schedule_name(&self) -> String {
        format!("{}-gateway-sweep", self.prefix)
    }

    /// Where the wake-up gives up stream records (TPF's `StreamFailureDlq`).
    pub fn gateway_failures_queue(&self) -> String {
        format!("{}-gateway-stream-failures", self.prefix)
    }

    pub fn dead_letter_queue(&self) -> Option<String> {
        self.queue.as_ref().map(|q| {
            let base: String = q.chars().take(80 - "-dlq".len()).collect();
            format!("{base}-dlq")
        })
    }

    /// Names of this configuration's machines, for IAM resource patterns: the gateway host
    /// starts and wakes drivers of every release, the relay answers them.
    pub fn machine_pattern(&self, role: &str) -> String {
        format!("{}-*-{role}", self.prefix)
    }

    /// Names of this configuration's durable driver functions with any version qualifier: the
    /// gateway host starts and wakes them on published versions only.
    pub fn durable_function_pattern(&self) -> String {
        format!(
            "{}-*-{}:*",
            self.prefix,
            crate::lowering::names::role::DURABLE
        )
    }
}

/// `arn:<p>:logs:<r>:<a>:log-group:<name>:*` → `<name>`.
fn log_group_name(arn: &str) -> Option<String> {
    let rest = arn.split(":log-group:").nth(1)?;
    let name = rest.strip_suffix(":*").unwrap_or(rest);
    (!name.is_empty()).then(|| name.to_owned())
}

/// A resource a statement or an alarm points at, resolved by each flavour to its own reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Res {
    ActionQueue,
    DeadLetterQueue,
    /// A function's log group (`relay`, the gateway host's), every stream in it.
    FunctionLogs(&'static str),
    /// This configuration's state machines of one role (`driver`).
    Machines(&'static str),
    /// This configuration's durable driver functions (the Lambda durable functions backend),
    /// every published version.
    DurableFunctions,
    /// Executions of this configuration's driver machines.
    DriverExecutions,
    /// TPF's await-interaction table stream (a parameter).
    AwaitInteractionStream,
    /// TPF's callback-binding table, its indexes and its stream.
    BindingTable,
    BindingTableIndexes,
    BindingStream,
    /// TPF's action gateway, its numbered version (a parameter).
    GatewayFunction,
    /// The gateway the relay invokes: the gateway binding's numbered version, compiled in.
    RelayedGateway,
    /// The wake-up's given-up records.
    GatewayFailures,
    Everything,
}

/// One IAM statement: Sid, actions, resources.
pub struct Statement {
    pub sid: &'static str,
    pub actions: &'static [&'static str],
    pub resources: Vec<Res>,
}

/// What an event-source mapping's function needs to read `streams` (the mapping polls with
/// the function's role): the records, and the listing the SDK does first.
fn stream_reader_statements(streams: Vec<Res>) -> [Statement; 2] {
    [
        Statement {
            sid: "ReadStreams",
            actions: &[
                "dynamodb:DescribeStream",
                "dynamodb:GetRecords",
                "dynamodb:GetShardIterator",
            ],
            resources: streams,
        },
        Statement {
            sid: "ListStreams",
            actions: &["dynamodb:ListStreams"],
            resources: vec![Res::Everything],
        },
    ]
}

/// The scheduled sweep's role (`sweeper.mode = "schedule"`): EventBridge Scheduler invokes
/// the gateway's numbered version, nothing else.
pub fn sweep_schedule_statements() -> Vec<Statement> {
    vec![Statement {
        sid: "InvokeGateway",
        actions: &["lambda:InvokeFunction"],
        resources: vec![Res::GatewayFunction],
    }]
}

/// The scheduled sweep's target input: TPF's `SWEEP` request (tenant ignored by TPF).
pub fn sweep_schedule_input() -> String {
    tpf_wire::gateway::ActionRequest::scheduled_sweep().to_json()
}

/// A missed scheduled sweep is the next period's: no retry, and no event older than a period.
pub const SWEEP_SCHEDULE_RETRIES: u32 = 0;

/// The schedule's `MaximumEventAgeInSeconds`: one period, within what EventBridge Scheduler
/// accepts (60 s to a day).
pub fn sweep_schedule_event_age(sweep: &crate::plan::ScheduledSweep) -> u64 {
    sweep.period_seconds.clamp(60, 86_400)
}
pub const SWEEP_SCHEDULE_DESCRIPTION: &str = "TPF's SWEEP for every driver of this configuration (sweeper.mode = \"schedule\"): await timeouts, due work, item continuations. The drivers sweep only at their start, while TPF waits to retry and after a park.";

/// The relay of the gateway binding's queue transport: consume the queue, invoke the gateway's
/// numbered version, answer the drivers' tokens, write its
/// logs. No Action API token: the gateway is invoked with the role.
pub fn gateway_relay_statements() -> Vec<Statement> {
    vec![
        Statement {
            sid: "ConsumeActionQueue",
            actions: &[
                "sqs:ReceiveMessage",
                "sqs:DeleteMessage",
                "sqs:GetQueueAttributes",
                "sqs:ChangeMessageVisibility",
            ],
            resources: vec![Res::ActionQueue],
        },
        Statement {
            sid: "InvokeGateway",
            actions: &["lambda:InvokeFunction"],
            resources: vec![Res::RelayedGateway],
        },
        Statement {
            sid: "AnswerTaskTokens",
            actions: &["states:SendTaskSuccess", "states:SendTaskFailure"],
            resources: vec![Res::Machines("driver")],
        },
        Statement {
            sid: "WriteLogs",
            actions: &["logs:CreateLogStream", "logs:PutLogEvents"],
            resources: vec![Res::FunctionLogs("relay")],
        },
    ]
}

/// Reading and writing TPF's callback-binding table, as TPF's wake-up role does: consistent
/// gets, the conditional puts, and queries of the table and its provider-ARN index.
fn binding_table_statement() -> Statement {
    Statement {
        sid: "ReadAndWriteBindings",
        actions: &["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"],
        resources: vec![Res::BindingTable, Res::BindingTableIndexes],
    }
}

fn invoke_gateway_statement() -> Statement {
    Statement {
        sid: "InvokeGateway",
        actions: &["lambda:InvokeFunction"],
        resources: vec![Res::GatewayFunction],
    }
}

/// Starting a driver generation: a machine's execution, or a durable function's version.
fn start_driver_statements() -> [Statement; 2] {
    [
        Statement {
            sid: "StartDrivers",
            actions: &["states:StartExecution"],
            resources: vec![Res::Machines("driver")],
        },
        Statement {
            sid: "StartDurableDrivers",
            actions: &["lambda:InvokeFunction"],
            resources: vec![Res::DurableFunctions],
        },
    ]
}

/// Reading a driver's state, history and input (the reconciler and a gone callback's
/// classification).
fn read_driver_statements() -> [Statement; 2] {
    [
        Statement {
            sid: "ReadDriverExecutions",
            actions: &["states:DescribeExecution", "states:GetExecutionHistory"],
            resources: vec![Res::DriverExecutions],
        },
        Statement {
            sid: "ReadDurableExecutions",
            actions: &[
                "lambda:GetDurableExecution",
                "lambda:GetDurableExecutionHistory",
            ],
            resources: vec![Res::DurableFunctions],
        },
    ]
}

fn gateway_logs(which: &'static str) -> Statement {
    Statement {
        sid: "WriteLogs",
        actions: &["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: vec![Res::FunctionLogs(which)],
    }
}

/// The gateway host's wake-up: read both streams, TPF's reads through the gateway, the binding
/// table, answer the drivers' callbacks (and read their history when a callback is gone),
/// start a replacement generation, record given-up records, write its logs.
pub fn gateway_wakeup_statements() -> Vec<Statement> {
    let [read, list] =
        stream_reader_statements(vec![Res::AwaitInteractionStream, Res::BindingStream]);
    let mut statements = vec![
        read,
        list,
        binding_table_statement(),
        invoke_gateway_statement(),
        Statement {
            sid: "WakeDrivers",
            actions: &["states:SendTaskSuccess"],
            resources: vec![Res::Machines("driver")],
        },
        Statement {
            sid: "WakeDurableDrivers",
            actions: &["lambda:SendDurableExecutionCallbackSuccess"],
            resources: vec![Res::DurableFunctions],
        },
        Statement {
            sid: "RecordGivenUpRecords",
            actions: &["sqs:SendMessage"],
            resources: vec![Res::GatewayFailures],
        },
    ];
    statements.extend(read_driver_statements());
    statements.extend(start_driver_statements());
    statements.push(gateway_logs("gateway-wakeup"));
    statements
}

/// The gateway host's reconciler: the ended driver's state and input, TPF's reads, the
/// binding table, the replacement's start, its logs.
pub fn gateway_reconciler_statements() -> Vec<Statement> {
    let mut statements = vec![binding_table_statement(), invoke_gateway_statement()];
    statements.extend(read_driver_statements());
    statements.extend(start_driver_statements());
    statements.push(gateway_logs("gateway-reconciler"));
    statements
}

/// The gateway host's starter (TPF's ingress): starts drivers, writes its logs.
pub fn gateway_starter_statements() -> Vec<Statement> {
    let mut statements = Vec::from(start_driver_statements());
    statements.push(gateway_logs("gateway-starter"));
    statements
}

/// The gateway host's functions, by the name their log groups and roles go by.
pub const GATEWAY_FUNCTIONS: [&str; 3] =
    ["gateway-wakeup", "gateway-reconciler", "gateway-starter"];

/// One gateway host function as both flavours declare it.
pub struct HostFunction {
    pub which: &'static str,
    pub handler: &'static str,
    pub statements: Vec<Statement>,
    pub timeout: u64,
}

/// The wake-up, the reconciler and the starter.
pub fn gateway_host_functions() -> [HostFunction; 3] {
    let f = |i: usize, handler, statements, timeout| HostFunction {
        which: GATEWAY_FUNCTIONS[i],
        handler,
        statements,
        timeout,
    };
    [
        f(
            0,
            handler::WAKEUP,
            gateway_wakeup_statements(),
            GATEWAY_TIMEOUT_SECONDS,
        ),
        f(
            1,
            handler::RECONCILER,
            gateway_reconciler_statements(),
            GATEWAY_TIMEOUT_SECONDS,
        ),
        f(
            2,
            handler::STARTER,
            gateway_starter_statements(),
            GATEWAY_STARTER_TIMEOUT_SECONDS,
        ),
    ]
}

/// One CloudWatch alarm on a resource of these stacks.
pub type Alarm = crate::lowering::monitoring::Alarm<Res>;

/// The relay's alarms (with the gateway's queue transport): its errors, and anything in its
/// dead-letter queue.
pub fn wake_path_alarms(queue_binding: bool) -> Vec<Alarm> {
    let mut alarms = Vec::new();
    if queue_binding {
        alarms.push(Alarm {
            id: "RelayErrorsAlarm",
            tf_name: "relay_errors",
            description: "The relay function failed: action calls wait for redelivery",
            namespace: "AWS/Lambda",
            metric: "Errors",
            dimension: "FunctionName",
            target: Res::FunctionLogs("relay"),
            statistic: "Sum",
            period: 300,
            periods: 1,
            threshold: 1,
        });
        alarms.push(Alarm {
            id: "ActionDeadLetterAlarm",
            tf_name: "action_dead_letters",
            description: "Action messages could not be relayed and were dead-lettered; their drivers retry after the call's timeout",
            namespace: "AWS/SQS",
            metric: "ApproximateNumberOfMessagesVisible",
            dimension: "QueueName",
            target: Res::DeadLetterQueue,
            statistic: "Maximum",
            period: 300,
            periods: 1,
            threshold: 1,
        });
    }
    alarms
}

/// The gateway host's alarms: its wake-up failing, and records it gave up.
pub fn gateway_alarms() -> Vec<Alarm> {
    vec![
        Alarm {
            id: "GatewayWakeupErrorsAlarm",
            tf_name: "gateway_wakeup_errors",
            description: "The gateway host's wake-up failed: parked drivers wake late until its retries succeed",
            namespace: "AWS/Lambda",
            metric: "Errors",
            dimension: "FunctionName",
            target: Res::FunctionLogs("gateway-wakeup"),
            statistic: "Sum",
            period: 300,
            periods: 1,
            threshold: 1,
        },
        Alarm {
            id: "GatewayStreamFailuresAlarm",
            tf_name: "gateway_stream_failures",
            description: "The gateway host gave up stream records (TPF's stream-failure queue): look at why; the reconciler and the park deadline recover their drivers",
            namespace: "AWS/SQS",
            metric: "ApproximateNumberOfMessagesVisible",
            dimension: "QueueName",
            target: Res::GatewayFailures,
            statistic: "Maximum",
            period: 300,
            periods: 1,
            threshold: 1,
        },
    ]
}

/// The release's alarms: its drivers failed or timed out (a TPF failure fails its driver by
/// design, so the first counts TPF-failed executions too).
pub fn release_alarms() -> Vec<Alarm> {
    let machine = |id, tf_name, description, metric| Alarm {
        id,
        tf_name,
        description,
        namespace: "AWS/States",
        metric,
        dimension: "StateMachineArn",
        target: Res::Machines("driver"),
        statistic: "Sum",
        period: 300,
        periods: 1,
        threshold: 1,
    };
    vec![
        machine(
            "DriverExecutionsFailedAlarm",
            "driver_executions_failed",
            "Driver executions failed: TPF failed them (their cause is TPF's errorCode), or an action call failed for good",
            "ExecutionsFailed",
        ),
        machine(
            "DriverExecutionsTimedOutAlarm",
            "driver_executions_timed_out",
            "Driver executions timed out",
            "ExecutionsTimedOut",
        ),
    ]
}

/// The relay's and the gateway host's environment (`tpf_sfn_lambda::config::var`), values as
/// the flavour resolves them.
pub mod env {
    pub const MACHINE_ARN_PREFIX: &str = "TPF_SFN_MACHINE_ARN_PREFIX";
    pub const NAME_PREFIX: &str = "TPF_SFN_NAME_PREFIX";
    pub const ACTION_TIMEOUT_SECONDS: &str = "TPF_SFN_ACTION_TIMEOUT_SECONDS";
    /// The relay of the gateway binding's queue transport: the gateway function's numbered
    /// version, which it invokes (unset: the relay refuses to start).
    pub const GATEWAY_FUNCTION_ARN: &str = "TPF_SFN_GATEWAY_FUNCTION_ARN";
    /// The gateway host's map of the releases that run as durable functions.
    pub const DURABLE_FUNCTIONS: &str = "TPF_SFN_DURABLE_FUNCTIONS";
    /// The gateway host's functions: TPF's action gateway by its numbered version ARN.
    pub const GATEWAY_FUNCTION: &str = "TPF_SFN_GATEWAY_FUNCTION";
    /// Instead, `serve`'s base URL (the local loop's gateway).
    pub const GATEWAY_URL: &str = "TPF_SFN_GATEWAY_URL";
    /// TPF's callback-binding table, under TPF's own variable.
    pub const BINDING_TABLE: &str = tpf_wire::gateway::binding::TABLE_ENV;
}

/// The gateway host's handlers (the functions' `Handler` setting).
pub mod handler {
    pub const WAKEUP: &str = "gateway-wakeup";
    pub const RECONCILER: &str = "gateway-reconciler";
    pub const STARTER: &str = "gateway-starter";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_group_names_come_from_their_arns() {
        assert_eq!(
            log_group_name("arn:aws:logs:eu-west-1:210987654321:log-group:/tpf/drivers:*")
                .as_deref(),
            Some("/tpf/drivers")
        );
        assert_eq!(
            log_group_name("arn:aws:logs:eu-west-1:210987654321:bucket"),
            None
        );
    }
}
