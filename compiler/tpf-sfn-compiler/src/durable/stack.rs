//! The durable release stack as facts both flavours spell (`cloudformation.rs`,
//! `terraform.rs`): the release's driver function, its role, its log group, the published
//! version that is the release, and its alarms: the gateway driver function and its version
//! alone, since that driver sweeps TPF itself. Executions start on that version's ARN,
//! never on `$LATEST`, so a later change to the function cannot reach an execution already
//! pinned; the stack of release N+1 is a new function next to N's.
//!
//! The wake path (the gateway host) is the Step Functions export's shared wake-path stack: the
//! gateway host tells the backends apart by the execution's ARN.

use super::Compiled;
use crate::diagnostic::Diagnostics;

/// Environment the deployed function reads (the `tpf-sfn-lambda` bootstrap).
pub mod env {
    /// Which handler the shared bootstrap runs.
    pub const HANDLER: &str = "TPF_SFN_HANDLER";
    pub const HANDLER_VALUE: &str = "durable-driver";
    /// The release's compact spec (`driver.durable.json`).
    pub const SPEC: &str = "TPF_SFN_DURABLE_SPEC";
}

/// A durable execution lives at most a year; the stack asks for that, the longest the
/// service allows, because a parked TPF execution may wait that long for its await.
pub const EXECUTION_TIMEOUT_SECONDS: u64 = 31_536_000;
/// Days the service keeps a finished execution's history (its console view).
pub const RETENTION_DAYS: u64 = 30;
/// The function's memory.
pub const MEMORY_MB: u64 = 256;
/// The AWS managed policy of the driver's role: the durable runtime's checkpoints, execution
/// state and logs.
pub const DRIVER_MANAGED_POLICY: &str = "AWSLambdaBasicDurableExecutionRolePolicy";

/// A resource a statement names, resolved by each flavour to its own spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Res {
    /// Every version of the release's driver function, by its name (the hand-over starts the
    /// next generation on the same published version).
    Versions(String),
    /// An ARN the configuration names (the gateway's numbered version).
    Arn(String),
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

/// The release stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub description: String,
    pub version_description: String,
    /// What the version's output says starts executions on it.
    pub version_output_description: &'static str,
    pub tags: Vec<(String, String)>,
    pub driver: Function,
}

const INVOKE: &[&str] = &["lambda:InvokeFunction"];

/// The release stack, or `EXPORT_PLACEHOLDER` while the binding still names a placeholder.
pub fn release(c: &Compiled) -> Result<Release, Diagnostics> {
    crate::lowering::export::refuse_placeholders(
        &c.manifest.binding,
        "a function that reaches nothing",
    )?;
    let m = &c.manifest;
    let f = &m.function;
    let id = &m.identity;
    // The gateway driver parks on TPF's callback binding (REGISTER_CALLBACK through the
    // gateway) and sweeps TPF itself: it hands over on its own versions and invokes TPF's
    // action gateway, that numbered version only.
    let statements = vec![
        Statement {
            sid: "HandOver",
            actions: INVOKE,
            resources: vec![Res::Versions(f.name.clone())],
        },
        Statement {
            sid: "ActionGateway",
            actions: INVOKE,
            resources: vec![Res::Arn(c.plan.binding.function_arn.clone())],
        },
    ];
    let env = vec![
        (env::HANDLER, EnvValue::Text(env::HANDLER_VALUE.into())),
        (env::SPEC, EnvValue::Text(c.durable.spec_text.clone())),
    ];
    let description = format!(
        "tpf-sfn {} release {} of {}: Lambda durable functions driver",
        m.compiler.version, id.release_version, id.pipeline_id
    );
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
        version_output_description: "Start this release's executions here (the wake-path stack's gateway starter and reconciler start them on it)",
        tags: f.tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
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
