//! Least-privilege IAM policies, derived from the Task states a definition actually contains.
//!
//! Nothing is granted for a state that is not emitted: a driver compiled for the `lambda`
//! binding gets no HTTP or SQS permissions. Literal parameters (table names, function and queue
//! ARNs) scope each statement; dynamic ones (`.$`) are scoped by what the plan knows they can
//! be (this release's machines).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::config::LogLevel;
use crate::plan::{BindingPlan, DriverPlan};
use crate::sfn::asl::{State, StateMachine};
use crate::sfn::SfnPlan;

/// Which machine a policy is for: it decides what `$$.StateMachine.Id` and dynamic
/// `StateMachineArn`s can point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Driver,
    Sweeper,
}

/// Builds the policy document for one machine of `plan`. The second value lists Task resources
/// this module has no rule for; the compiler refuses to emit a policy that silently lacks them.
pub fn policy(
    plan: &DriverPlan,
    sfn: &SfnPlan,
    role: Role,
    machine: &StateMachine,
) -> (Value, Vec<String>) {
    let mut g = Grants::default();
    let mut unrecognised = Vec::new();
    let aws = &sfn.arns;
    let driver_arn = aws.state_machine_arn(&sfn.machines.driver);
    for state in all_states(machine) {
        let State::Task(task) = state else { continue };
        let params = task.parameters.clone().unwrap_or(Value::Null);
        let resource = task.resource.trim_end_matches(".waitForTaskToken");
        match resource {
            "arn:aws:states:::http:invoke" => {
                let own = match role {
                    Role::Driver => driver_arn.clone(),
                    Role::Sweeper => aws.state_machine_arn(&sfn.machines.sweeper),
                };
                let endpoint = match &plan.binding {
                    BindingPlan::Http { api_base_url, .. } => {
                        format!("{api_base_url}/tpf/actions/v1/*")
                    }
                    _ => "*".to_string(),
                };
                let condition = json!({
                    "StringEquals": { "states:HTTPMethod": "POST" },
                    "StringLike": { "states:HTTPEndpoint": endpoint }
                });
                g.grant(
                    "InvokeTpfActionsOverHttp",
                    &["states:InvokeHTTPEndpoint"],
                    vec![own],
                    Some(condition),
                );
                if let Some(conn) = params
                    .pointer("/Authentication/ConnectionArn")
                    .and_then(Value::as_str)
                {
                    g.grant(
                        "UseEventBridgeConnection",
                        &["events:RetrieveConnectionCredentials"],
                        vec![conn.to_string()],
                        None,
                    );
                    g.grant(
                        "ReadConnectionSecret",
                        &[
                            "secretsmanager:GetSecretValue",
                            "secretsmanager:DescribeSecret",
                        ],
                        vec![connection_secret_arn(conn, &aws.partition)],
                        None,
                    );
                }
            }
            "arn:aws:states:::lambda:invoke" => {
                let f = params
                    .get("FunctionName")
                    .and_then(Value::as_str)
                    .unwrap_or("*")
                    .to_string();
                match &plan.binding {
                    // Exactly the numbered version the release was compiled for, and the
                    // starter: no other version, alias or the unqualified name.
                    BindingPlan::Gateway(gw) if f == gw.starter_function_arn => g.grant(
                        "StartNextGeneration",
                        &["lambda:InvokeFunction"],
                        vec![f],
                        None,
                    ),
                    BindingPlan::Gateway(_) => g.grant(
                        "InvokeTpfActionGateway",
                        &["lambda:InvokeFunction"],
                        vec![f],
                        None,
                    ),
                    _ => g.grant(
                        "InvokeTpfActionFunction",
                        &["lambda:InvokeFunction"],
                        vec![f.clone(), format!("{f}:*")],
                        None,
                    ),
                }
            }
            "arn:aws:states:::sqs:sendMessage" => {
                let url = params.get("QueueUrl").and_then(Value::as_str).unwrap_or("");
                g.grant(
                    "SendTpfActionRequests",
                    &["sqs:SendMessage"],
                    vec![queue_arn(url, &aws.partition)],
                    None,
                );
            }
            "arn:aws:states:::dynamodb:putItem" | "arn:aws:states:::aws-sdk:dynamodb:putItem" => {
                let t = params
                    .get("TableName")
                    .and_then(Value::as_str)
                    .unwrap_or("*");
                g.grant(
                    "WriteWakeupTable",
                    &["dynamodb:PutItem"],
                    vec![aws.table_arn(t)],
                    None,
                );
            }
            "arn:aws:states:::dynamodb:getItem" | "arn:aws:states:::aws-sdk:dynamodb:getItem" => {
                let t = params
                    .get("TableName")
                    .and_then(Value::as_str)
                    .unwrap_or("*");
                g.grant(
                    "ReadWakeupTable",
                    &["dynamodb:GetItem"],
                    vec![aws.table_arn(t)],
                    None,
                );
            }
            "arn:aws:states:::states:startExecution"
            | "arn:aws:states:::aws-sdk:sfn:startExecution" => {
                // Drivers start only their own next generation; sweepers only this release's driver.
                g.grant(
                    "StartThisReleasesDriver",
                    &["states:StartExecution"],
                    vec![driver_arn.clone()],
                    None,
                );
            }
            "arn:aws:states:::aws-sdk:sfn:describeExecution" => {
                g.grant(
                    "DescribeThisReleasesDrivers",
                    &["states:DescribeExecution"],
                    vec![aws.executions_arn(&sfn.machines.driver)],
                    None,
                );
            }
            "arn:aws:states:::aws-sdk:sfn:sendTaskSuccess" => {
                g.grant(
                    "WakeThisReleasesDrivers",
                    &["states:SendTaskSuccess"],
                    vec![driver_arn.clone()],
                    None,
                );
            }
            other => unrecognised.push(other.to_string()),
        }
    }
    if plan.logging.level != LogLevel::Off {
        // CloudWatch Logs delivery for Step Functions only works with these on "*" (AWS docs,
        // "IAM policies for logging to CloudWatch Logs").
        g.grant(
            "DeliverExecutionLogs",
            &[
                "logs:CreateLogDelivery",
                "logs:GetLogDelivery",
                "logs:UpdateLogDelivery",
                "logs:DeleteLogDelivery",
                "logs:ListLogDeliveries",
                "logs:PutResourcePolicy",
                "logs:DescribeResourcePolicies",
                "logs:DescribeLogGroups",
            ],
            vec!["*".to_string()],
            None,
        );
    }
    if plan.tracing {
        g.grant(
            "WriteXRayTraces",
            &[
                "xray:PutTraceSegments",
                "xray:PutTelemetryRecords",
                "xray:GetSamplingRules",
                "xray:GetSamplingTargets",
            ],
            vec!["*".to_string()],
            None,
        );
    }

    (
        json!({ "Version": "2012-10-17", "Statement": g.statements() }),
        unrecognised,
    )
}

/// Statements keyed by Sid, merged as states are visited, emitted in Sid order.
#[derive(Default)]
struct Grants {
    by_sid: BTreeMap<String, Grant>,
}

#[derive(Default)]
struct Grant {
    actions: Vec<String>,
    resources: Vec<String>,
    condition: Option<Value>,
}

impl Grants {
    fn grant(
        &mut self,
        sid: &str,
        actions: &[&str],
        resources: Vec<String>,
        condition: Option<Value>,
    ) {
        let g = self.by_sid.entry(sid.to_string()).or_default();
        for a in actions {
            if !g.actions.iter().any(|x| x == a) {
                g.actions.push((*a).to_string());
            }
        }
        for r in resources {
            if !g.resources.contains(&r) {
                g.resources.push(r);
            }
        }
        if g.condition.is_none() {
            g.condition = condition;
        }
    }

    fn statements(self) -> Vec<Value> {
        self.by_sid
            .into_iter()
            .map(|(sid, g)| {
                let mut st = json!({ "Sid": sid, "Effect": "Allow", "Action": g.actions, "Resource": g.resources });
                if let (Some(c), Some(obj)) = (g.condition, st.as_object_mut()) {
                    obj.insert("Condition".to_string(), c);
                }
                st
            })
            .collect()
    }
}

/// Every state of a machine, including those nested in Map processors and Parallel branches.
pub fn all_states(machine: &StateMachine) -> Vec<&State> {
    fn walk<'a>(states: impl Iterator<Item = &'a State>, out: &mut Vec<&'a State>) {
        for s in states {
            out.push(s);
            match s {
                State::Map(m) => {
                    if let Some(p) = m.processor() {
                        walk(p.states.values(), out);
                    }
                }
                State::Parallel(p) => {
                    for b in &p.branches {
                        walk(b.states.values(), out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(machine.states.values(), &mut out);
    out
}

/// The secrets EventBridge keeps for one connection: `arn:<p>:events:<r>:<a>:connection/<name>/<id>`
/// stores its credentials in `arn:<p>:secretsmanager:<r>:<a>:secret:events!connection/<name>/…`.
/// A connection ARN of another shape keeps the documented wildcard for all connections.
fn connection_secret_arn(connection_arn: &str, partition: &str) -> String {
    let parts: Vec<&str> = connection_arn.splitn(6, ':').collect();
    if let [_, p, "events", region, account, resource] = parts.as_slice() {
        if let Some(name) = resource
            .strip_prefix("connection/")
            .and_then(|r| r.split('/').next())
            .filter(|n| !n.is_empty())
        {
            return format!(
                "arn:{p}:secretsmanager:{region}:{account}:secret:events!connection/{name}/*"
            );
        }
    }
    format!("arn:{partition}:secretsmanager:*:*:secret:events!connection/*")
}

/// `https://sqs.<region>.amazonaws.com/<account>/<name>` → `arn:<p>:sqs:<region>:<account>:<name>`.
fn queue_arn(url: &str, partition: &str) -> String {
    let rest = url.split("://").nth(1).unwrap_or("");
    let mut parts = rest.split('/');
    let host = parts.next().unwrap_or("");
    let account = parts.next().unwrap_or("*");
    let name = parts.next().unwrap_or("*");
    let region = host
        .strip_prefix("sqs.")
        .and_then(|h| h.split('.').next())
        .unwrap_or("*");
    format!("arn:{partition}:sqs:{region}:{account}:{name}")
}

#[cfg(test)]
mod tests {
    use super::queue_arn;

    #[test]
    fn queue_urls_become_arns() {
        assert_eq!(
            queue_arn("https://sqs.eu-west-1.amazonaws.com/123456789012/q", "aws"),
            "arn:aws:sqs:eu-west-1:123456789012:q"
        );
        assert_eq!(
            queue_arn("http://127.0.0.1:5000/000000000000/q", "aws"),
            "arn:aws:sqs:*:000000000000:q"
        );
    }
}
