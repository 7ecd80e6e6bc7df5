//! The durable release stack as facts both flavours spell (`cloudformation.rs`,
//! `terraform.rs`): the release's driver function, its role, its log group, the published
//! version that is the release, its alarms, and (Action API v1's bindings) the release's
//! sweeper, a scheduled function of the same bootstrap with its own role. The gateway binding's stack is the gateway driver function
//! and its version alone: that driver sweeps TPF itself. Executions start on that version's ARN,
//! never on `$LATEST`, so a later change to the function cannot reach an execution already
//! pinned; the stack of release N+1 is a new function next to N's.
//!
//! The wake path (wakeup table, bridge, the gateway host) is the Step Functions export's shared
//! wake-path stack: the bridge and the gateway host tell the backends apart by the execution's
//! ARN.

use super::Compiled;
use crate::diagnostic::Diagnostics;
use tpf_durable_driver::spec::Binding;

/// The key of the sweeper's scheduled input that names the sweep.
pub const SWEEP_ID: &str = "sweepId";

/// Environment the deployed function reads (the `tpf-sfn-lambda` bootstrap).
pub mod env {
    /// Which handler the shared bootstrap runs.
    pub const HANDLER: &str = "TPF_SFN_HANDLER";
    pub const HANDLER_VALUE: &str = "durable-driver";
    /// The release's compact spec (`driver.durable.json`).
    pub const SPEC: &str = "TPF_SFN_DURABLE_SPEC";
    /// The name of the SSM SecureString parameter holding the Action API's bearer token (HTTP
    /// binding), read at run time.
    pub use crate::lowering::action_token::PARAMETER_ENV as ACTION_TOKEN_PARAMETER;
    /// The token itself: local runs only (a bootstrap started by hand or by the tests); no
    /// exported stack and no `deploy` sets it.
    pub const ACTION_TOKEN: &str = "TPF_SFN_ACTION_TOKEN";
    /// The release's sweeper function runs the same bootstrap with this handler.
    pub const SWEEPER_HANDLER_VALUE: &str = "durable-sweeper";
    /// The sweeper's: the release's published version (qualified ARN), where recoveries start.
    pub const FUNCTION: &str = "TPF_SFN_DURABLE_FUNCTION";
    /// The sweeper's: `limit` of each sweep-once call.
    pub const SWEEP_LIMIT: &str = "TPF_SFN_SWEEP_LIMIT";
}

/// A durable execution lives at most a year; the stack asks for that, the longest the
/// service allows, because a parked TPF execution may wait that long for its await.
pub const EXECUTION_TIMEOUT_SECONDS: u64 = 31_536_000;
/// Days the service keeps a finished execution's history (its console view).
pub const RETENTION_DAYS: u64 = 30;
/// Both functions' memory.
pub const MEMORY_MB: u64 = 256;
/// The AWS managed policies of the two roles: the durable runtime's checkpoints, execution
/// state and logs for the driver; logs for the sweeper.
pub const DRIVER_MANAGED_POLICY: &str = "AWSLambdaBasicDurableExecutionRolePolicy";
pub const SWEEPER_MANAGED_POLICY: &str = "AWSLambdaBasicExecutionRole";

/// A resource a statement names, resolved by each flavour to its own spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Res {
    /// The configuration's wakeup table, by its name.
    WakeupTable(String),
    /// Every version of the release's driver function, by its name (the hand-over starts the
    /// next generation on the same published version).
    Versions(String),
    /// An ARN the configuration names (the action function, the gateway's numbered version).
    Arn(String),
    /// The SSM SecureString parameter holding the Action API token (a stack parameter: the
    /// user creates and rotates it).
    ActionTokenParameter,
}

/// One IAM statement: Sid, actions, resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub sid: &'static str,
    pub actions: &'static [&'static str],
    pub resources: Vec<Res>,
}

impl Statement {
    /// The statement as IAM reads it, each resource as the flavour's `resolve` spells it.
    pub fn document<T: serde::Serialize>(&self, resolve: impl Fn(&Res) -> T) -> serde_json::Value {
        serde_json::json!({
            "Sid": self.sid,
            "Effect": "Allow",
            "Action": self.actions,
            "Resource": self.resources.iter().map(resolve).collect::<Vec<_>>()
        })
    }
}

/// An environment value, resolved by each flavour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    Text(String),
    /// The token parameter's name (a stack parameter).
    ActionTokenParameter,
    /// The release's published version (its qualified ARN).
    DriverVersion,
}

/// One function of the `tpf-sfn-lambda` zip (its handler is `bootstrap`; its environment names
/// what it runs), with its role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub description: String,
    pub timeout_seconds: u64,
    pub env: Vec<(&'static str, EnvValue)>,
    /// A durable function (its durable configuration), or a plain one.
    pub durable: bool,
    /// The role's AWS managed policy (`service-role/<name>`) and its inline policy.
    pub managed_policy: &'static str,
    pub policy_name: &'static str,
    pub statements: Vec<Statement>,
}

/// The sweeper and its schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sweeper {
    pub function: Function,
    pub schedule_description: String,
    pub schedule_expression: String,
}

/// The release stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub description: String,
    pub version_description: String,
    /// What the version's output says starts executions on it.
    pub version_output_description: &'static str,
    pub tags: Vec<(String, String)>,
    /// The Action API token's parameter (HTTP binding): the stack asks for its name and, when
    /// the customer managed key's ARN is given, grants decrypting it.
    pub action_token: bool,
    pub driver: Function,
    /// None for the gateway binding.
    pub sweeper: Option<Sweeper>,
}

impl Release {
    /// Who sends the Action API token, for the token parameter's description.
    pub fn token_senders(&self) -> &'static str {
        match self.sweeper {
            Some(_) => "the driver and the sweeper send",
            None => "the driver sends",
        }
    }
}

const INVOKE: &[&str] = &["lambda:InvokeFunction"];

/// The release stack; `EXPORT_ACTION_API_RETIRED` for an Action API v1 binding, or
/// `EXPORT_PLACEHOLDER` while the binding still names a placeholder.
pub fn release(c: &Compiled) -> Result<Release, Diagnostics> {
    crate::lowering::export::refuse_action_api(&c.manifest.binding)?;
    crate::lowering::export::refuse_placeholders(
        &c.manifest.binding,
        "a function that reaches nothing",
    )?;
    let m = &c.manifest;
    let f = &m.function;
    let id = &m.identity;
    let table = || Res::WakeupTable(m.wakeup_table.clone());
    let versions = || Res::Versions(f.name.clone());
    let read_token = Statement {
        sid: crate::lowering::action_token::READ_SID,
        actions: &["ssm:GetParameter"],
        resources: vec![Res::ActionTokenParameter],
    };
    // The gateway driver parks on TPF's callback binding (REGISTER_CALLBACK through the
    // gateway), never on the wakeup table, and sweeps TPF itself: no table rows, no sweeper.
    let (gateway, action_token) = match &c.durable.spec.binding {
        Binding::Gateway { function_arn, .. } => (Some(function_arn), false),
        Binding::Http { .. } => (None, true),
        Binding::Lambda { .. } => (None, false),
    };
    let mut statements = Vec::new();
    if gateway.is_none() {
        statements.push(Statement {
            sid: "WakeupRows",
            actions: &["dynamodb:PutItem"],
            resources: vec![table()],
        });
    }
    statements.push(Statement {
        sid: "HandOver",
        actions: INVOKE,
        resources: vec![versions()],
    });
    // The sweeper reads the pointer and token rows, looks at the pointed execution, and wakes
    // or starts drivers on this release's versions only.
    let mut sweeper_statements = vec![
        Statement {
            sid: "WakeupRows",
            actions: &["dynamodb:GetItem"],
            resources: vec![table()],
        },
        Statement {
            sid: "Drivers",
            actions: &[
                "lambda:GetDurableExecution",
                "lambda:SendDurableExecutionCallbackSuccess",
                "lambda:InvokeFunction",
            ],
            resources: vec![versions()],
        },
    ];
    let mut env = vec![
        (env::HANDLER, EnvValue::Text(env::HANDLER_VALUE.into())),
        (env::SPEC, EnvValue::Text(c.durable.spec_text.clone())),
    ];
    match &c.durable.spec.binding {
        Binding::Http { .. } => {
            env.push((env::ACTION_TOKEN_PARAMETER, EnvValue::ActionTokenParameter));
            statements.push(read_token.clone());
            sweeper_statements.push(read_token);
        }
        Binding::Lambda { function_arn } => {
            let call = Statement {
                sid: "ActionFunction",
                actions: INVOKE,
                resources: vec![Res::Arn(function_arn.clone())],
            };
            statements.push(call.clone());
            sweeper_statements.push(call);
        }
        // The gateway driver invokes TPF's action gateway, that numbered version only.
        Binding::Gateway { function_arn, .. } => statements.push(Statement {
            sid: "ActionGateway",
            actions: INVOKE,
            resources: vec![Res::Arn(function_arn.clone())],
        }),
    }
    let mut sweeper_env = env.clone();
    sweeper_env[0].1 = EnvValue::Text(env::SWEEPER_HANDLER_VALUE.into());
    sweeper_env.push((env::FUNCTION, EnvValue::DriverVersion));
    sweeper_env.push((
        env::SWEEP_LIMIT,
        EnvValue::Text(c.plan.sweeper.limit.to_string()),
    ));
    let description = format!(
        "tpf-sfn {} release {} of {}: Lambda durable functions driver",
        m.compiler.version, id.release_version, id.pipeline_id
    );
    let sweeper = gateway.is_none().then(|| Sweeper {
        function: Function {
            name: sweeper_name(c),
            description: format!("tpf-sfn sweeper of release {} of {}: applies await timeouts, wakes lost wakeups, recovers drivers", id.release_version, id.pipeline_id),
            // One sweep-once call, then a few short AWS calls per due execution.
            timeout_seconds: (c.plan.sweep_timeout_seconds + 120).min(900),
            env: sweeper_env,
            durable: false,
            managed_policy: SWEEPER_MANAGED_POLICY,
            policy_name: "sweeper",
            statements: sweeper_statements,
        },
        schedule_description: format!("sweeps release {} of {}", id.release_version, id.pipeline_id),
        schedule_expression: c.plan.sweeper.schedule.clone(),
    });
    Ok(Release {
        driver: Function {
            name: f.name.clone(),
            description: description.clone(),
            // One invocation runs one action call at most to its timeout, plus replay.
            timeout_seconds: c.plan.action_timeout_seconds + 30,
            env,
            durable: true,
            managed_policy: DRIVER_MANAGED_POLICY,
            policy_name: "driver",
            statements,
        },
        description,
        version_description: format!("release {}", id.release_version),
        version_output_description: match gateway {
            Some(_) => "Start this release's executions here (the wake-path stack's gateway starter and reconciler start them on it)",
            None => "Start this release's executions here (the bridge's target for this release)",
        },
        tags: f.tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        action_token,
        sweeper,
    })
}

/// What a release's alarm watches, spelled by each flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// The release's driver function (the durable executions' metrics are per function).
    Driver,
}

/// One CloudWatch alarm of the release stack.
pub type Alarm = crate::lowering::monitoring::Alarm<Watched>;

/// The release's alarms, on the durable execution metrics Lambda publishes per function
/// (namespace `AWS/Lambda`): a driver that failed, and one that ran out its execution timeout.
/// A TPF failure fails its driver with TPF's status, so the first also counts what TPF failed;
/// either way TPF's record says what happened (`tpf-sfn status`), and a driver that ended
/// while TPF still waits on it is replaced by the gateway host's reconciler.
pub fn release_alarms() -> Vec<Alarm> {
    let driver = |id, tf_name, description, metric| Alarm {
        id,
        tf_name,
        description,
        namespace: "AWS/Lambda",
        metric,
        dimension: "FunctionName",
        target: Watched::Driver,
        statistic: "Sum",
        period: 300,
        periods: 1,
        threshold: 1,
    };
    vec![
        driver(
            "DriverExecutionsFailedAlarm",
            "driver_executions_failed",
            "A durable execution of this release's driver failed: a TPF failure (its status is the error) or a driver error; read TPF's record with tpf-sfn status",
            "DurableExecutionFailed",
        ),
        driver(
            "DriverExecutionsTimedOutAlarm",
            "driver_executions_timed_out",
            "A durable execution of this release's driver ran out its execution timeout; TPF's record is untouched, read it with tpf-sfn status",
            "DurableExecutionTimedOut",
        ),
    ]
}

/// The log group Lambda writes a function's logs to, which the stack creates first so that
/// its retention applies.
pub fn log_group_name(function: &str) -> String {
    format!("/aws/lambda/{function}")
}

/// The sweeper function's name: the driver's recipe with the sweeper's role.
fn sweeper_name(c: &Compiled) -> String {
    let id = &c.plan.identity;
    crate::lowering::names::resource_name(
        &c.plan.name_prefix,
        &id.pipeline_id,
        &id.release_version,
        crate::lowering::names::role::SWEEPER,
    )
}

/// The sweeper's scheduled input: the invocation's id names the sweep to TPF, so a retried
/// delivery is the same sweep (a missed sweep is the next one's work: no retries).
pub fn schedule_input() -> String {
    format!("{{\"{SWEEP_ID}\":\"<aws.scheduler.execution-id>\"}}")
}
