//! The durable release stack (CloudFormation): the release's driver function, its role, the
//! published version that is the release, and (Action API v1's bindings) the release's sweeper
//! (a scheduled function of the same bootstrap, with its own role). The gateway binding's stack
//! is the gateway driver function and its version alone: that driver sweeps TPF itself. Executions start on that version's ARN, never on
//! `$LATEST`, so a later change to the function cannot reach an execution already pinned; the
//! stack of release N+1 is a new function next to N's.
//!
//! The wake path (wakeup table, bridge) is the Step Functions export's shared wake-path stack:
//! the bridge tells the backends apart by the execution ARN in the token row.

use serde_json::{json, Map, Value};

use super::Compiled;
use crate::diagnostic::Diagnostics;
use crate::lowering::action_token;
use crate::lowering::iam::{trust, trust_in_account};
use crate::lowering::runtime::{LAMBDA_ARCHITECTURE, LAMBDA_RUNTIME};
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

fn sub(s: &str) -> Value {
    json!({ "Fn::Sub": s })
}

/// The release stack, or `EXPORT_PLACEHOLDER` while the binding still names a placeholder.
pub fn release(c: &Compiled) -> Result<Value, Diagnostics> {
    crate::lowering::export::refuse_placeholders(
        &c.manifest.binding,
        "a function that reaches nothing",
    )?;
    let m = &c.manifest;
    let f = &m.function;
    let table_arn = sub(&format!(
        "arn:${{AWS::Partition}}:dynamodb:${{AWS::Region}}:${{AWS::AccountId}}:table/{}",
        m.wakeup_table
    ));
    // Hand-over starts the next generation on the same published version.
    let own_versions = sub(&format!(
        "arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{}:*",
        f.name
    ));
    // The gateway driver parks on TPF's callback binding (REGISTER_CALLBACK through the
    // gateway), never on the wakeup table, and sweeps TPF itself: no table rows, no sweeper.
    let gateway = matches!(c.durable.spec.binding, Binding::Gateway { .. });
    let mut statements = Vec::new();
    if !gateway {
        statements.push(json!({"Sid": "WakeupRows", "Effect": "Allow", "Action": ["dynamodb:PutItem"], "Resource": [table_arn]}));
    }
    statements.push(json!({"Sid": "HandOver", "Effect": "Allow", "Action": ["lambda:InvokeFunction"], "Resource": [own_versions]}));
    // The sweeper reads the pointer and token rows, looks at the pointed execution, and wakes
    // or starts drivers on this release's versions only.
    let mut sweeper_statements = vec![
        json!({"Sid": "WakeupRows", "Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": [table_arn]}),
        json!({"Sid": "Drivers", "Effect": "Allow", "Action": ["lambda:GetDurableExecution", "lambda:SendDurableExecutionCallbackSuccess", "lambda:InvokeFunction"], "Resource": [own_versions]}),
    ];
    let mut env = Map::new();
    env.insert(env::HANDLER.into(), json!(env::HANDLER_VALUE));
    env.insert(env::SPEC.into(), json!(c.durable.spec_text));
    let mut sweeper_env = env.clone();
    sweeper_env.insert(env::HANDLER.into(), json!(env::SWEEPER_HANDLER_VALUE));
    sweeper_env.insert(env::FUNCTION.into(), json!({"Ref": "DriverVersion"}));
    sweeper_env.insert(
        env::SWEEP_LIMIT.into(),
        json!(c.plan.sweeper.limit.to_string()),
    );
    let mut parameters = Map::new();
    let mut conditions = Map::new();
    parameters.insert(
        "CodeS3Bucket".into(),
        json!({"Type": "String", "Description": "Bucket holding the tpf-sfn-lambda zip (scripts/lambda-package.sh)"}),
    );
    parameters.insert(
        "CodeS3Key".into(),
        json!({"Type": "String", "Description": "Key of the tpf-sfn-lambda zip"}),
    );
    match &c.durable.spec.binding {
        Binding::Http { .. } => {
            for (name, p) in
                action_token::cloudformation::parameters("the driver and the sweeper send")
            {
                parameters.insert(name.into(), p);
            }
            let (name, condition) = action_token::cloudformation::key_condition();
            conditions.insert(name.into(), condition);
            let name = json!({"Ref": action_token::CLOUDFORMATION_PARAMETER});
            env.insert(env::ACTION_TOKEN_PARAMETER.into(), name.clone());
            sweeper_env.insert(env::ACTION_TOKEN_PARAMETER.into(), name);
            for s in [&mut statements, &mut sweeper_statements] {
                s.push(action_token::cloudformation::read_statement());
                s.push(action_token::cloudformation::decrypt_statement_if_keyed());
            }
        }
        Binding::Lambda { function_arn } => {
            let call = json!({
                "Sid": "ActionFunction", "Effect": "Allow", "Action": ["lambda:InvokeFunction"], "Resource": [function_arn]
            });
            statements.push(call.clone());
            sweeper_statements.push(call);
        }
        // The gateway driver invokes TPF's action gateway, that numbered version only.
        Binding::Gateway { function_arn, .. } => statements.push(json!({
            "Sid": "ActionGateway", "Effect": "Allow", "Action": ["lambda:InvokeFunction"], "Resource": [function_arn]
        })),
    }
    let tags: Vec<Value> = f
        .tags
        .iter()
        .map(|(k, v)| json!({"Key": k, "Value": v}))
        .collect();
    let description = format!(
        "tpf-sfn {} release {} of {}: Lambda durable functions driver",
        m.compiler.version, m.identity.release_version, m.identity.pipeline_id
    );
    let mut stack = json!({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": description,
        "Parameters": parameters,
        "Conditions": conditions,
        "Resources": {
            // Checkpoints, execution state and logs: what the durable runtime needs.
            "DriverRole": lambda_role("AWSLambdaBasicDurableExecutionRolePolicy", "driver", statements),
            "Driver": {
                "Type": "AWS::Lambda::Function",
                "Properties": bootstrap_function(Function {
                    name: Some(&f.name),
                    description: &description,
                    // One invocation runs one action call at most to its timeout, plus replay.
                    timeout_seconds: c.plan.action_timeout_seconds + 30,
                    role: "DriverRole",
                    env,
                    durable: true,
                    tags: &tags,
                })
            },
            "DriverVersion": {
                "Type": "AWS::Lambda::Version",
                "Properties": {
                    "FunctionName": {"Ref": "Driver"},
                    "Description": format!("release {}", m.identity.release_version)
                }
            },
            "SweeperRole": lambda_role("AWSLambdaBasicExecutionRole", "sweeper", sweeper_statements),
            "Sweeper": {
                "Type": "AWS::Lambda::Function",
                "Properties": bootstrap_function(Function {
                    name: None,
                    description: &format!("tpf-sfn sweeper of release {} of {}: applies await timeouts, wakes lost wakeups, recovers drivers", m.identity.release_version, m.identity.pipeline_id),
                    // One sweep-once call, then a few short AWS calls per due execution.
                    timeout_seconds: (c.plan.sweep_timeout_seconds + 120).min(900),
                    role: "SweeperRole",
                    env: sweeper_env,
                    durable: false,
                    tags: &tags,
                })
            },
            "SweeperScheduleRole": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": trust_in_account("scheduler.amazonaws.com", json!({"Ref": "AWS::AccountId"})),
                    "Policies": [{"PolicyName": "start-sweeper", "PolicyDocument": {"Version": "2012-10-17", "Statement": [{
                        "Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": {"Fn::GetAtt": ["Sweeper", "Arn"]}
                    }]}}]
                }
            },
            "SweeperSchedule": {
                "Type": "AWS::Scheduler::Schedule",
                "Properties": {
                    "Description": format!("sweeps release {} of {}", m.identity.release_version, m.identity.pipeline_id),
                    "ScheduleExpression": c.plan.sweeper.schedule,
                    "FlexibleTimeWindow": {"Mode": "OFF"},
                    "Target": {
                        "Arn": {"Fn::GetAtt": ["Sweeper", "Arn"]},
                        "RoleArn": {"Fn::GetAtt": ["SweeperScheduleRole", "Arn"]},
                        // The invocation's id names the sweep to TPF, so a retried delivery
                        // is the same sweep.
                        "Input": format!("{{\"{}\":\"<aws.scheduler.execution-id>\"}}", SWEEP_ID),
                        // A missed sweep is the next one's work.
                        "RetryPolicy": {"MaximumRetryAttempts": 0}
                    }
                }
            }
        },
        "Outputs": {
            "DriverFunctionName": {"Value": {"Ref": "Driver"}},
            "SweeperFunctionName": {"Value": {"Ref": "Sweeper"}},
            "DriverVersionArn": {
                "Description": "Start this release's executions here (the bridge's target for this release)",
                "Value": {"Ref": "DriverVersion"}
            }
        }
    });
    if conditions.is_empty() {
        if let Some(o) = stack.as_object_mut() {
            o.remove("Conditions");
        }
    }
    if gateway {
        // Action API v1's sweeper applies await timeouts and recovers lost wakeups and drivers
        // from outside; the gateway driver SWEEPs TPF before every STATUS it polls and when its
        // park's deadline passes, and the wake-path stack's reconciler replaces a driver that
        // ended without TPF's outcome. Its release is the driver function and its version.
        for part in ["Resources", "Outputs"] {
            if let Some(o) = stack[part].as_object_mut() {
                o.retain(|id, _| !id.starts_with("Sweeper"));
            }
        }
        stack["Outputs"]["DriverVersionArn"]["Description"] = json!(
            "Start this release's executions here (the wake-path stack's gateway starter and reconciler start them on it)"
        );
    }
    Ok(stack)
}

/// A function of the `tpf-sfn-lambda` zip: its `Handler` is `bootstrap`, its environment names
/// the handler it runs.
struct Function<'a> {
    /// None: CloudFormation names it after the stack.
    name: Option<&'a str>,
    description: &'a str,
    timeout_seconds: u64,
    /// The logical id of its role.
    role: &'a str,
    env: Map<String, Value>,
    /// A durable function (`DurableConfig`), or a plain one.
    durable: bool,
    tags: &'a [Value],
}

fn bootstrap_function(f: Function<'_>) -> Value {
    let mut p = Map::new();
    if let Some(name) = f.name {
        p.insert("FunctionName".into(), json!(name));
    }
    p.insert("Description".into(), json!(f.description));
    p.insert("Runtime".into(), json!(LAMBDA_RUNTIME));
    p.insert("Handler".into(), json!("bootstrap"));
    p.insert("Architectures".into(), json!([LAMBDA_ARCHITECTURE]));
    p.insert("MemorySize".into(), json!(256));
    p.insert("Timeout".into(), json!(f.timeout_seconds));
    p.insert(
        "Code".into(),
        json!({"S3Bucket": {"Ref": "CodeS3Bucket"}, "S3Key": {"Ref": "CodeS3Key"}}),
    );
    p.insert("Role".into(), json!({"Fn::GetAtt": [f.role, "Arn"]}));
    p.insert("Environment".into(), json!({"Variables": f.env}));
    if f.durable {
        p.insert(
            "DurableConfig".into(),
            json!({
                "ExecutionTimeout": EXECUTION_TIMEOUT_SECONDS,
                "RetentionPeriodInDays": RETENTION_DAYS
            }),
        );
    }
    p.insert("Tags".into(), json!(f.tags));
    Value::Object(p)
}

/// A role Lambda assumes: one AWS managed policy (`service-role/<managed>`) and one inline
/// policy of `statements`.
fn lambda_role(managed: &str, policy: &str, statements: Vec<Value>) -> Value {
    json!({
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": trust("lambda.amazonaws.com"),
            "ManagedPolicyArns": [sub(&format!("arn:${{AWS::Partition}}:iam::aws:policy/service-role/{managed}"))],
            "Policies": [{"PolicyName": policy, "PolicyDocument": {"Version": "2012-10-17", "Statement": statements}}]
        }
    })
}

pub fn render(stack: &Value) -> String {
    crate::lowering::json_file(stack)
}
