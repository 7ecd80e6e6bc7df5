//! Least-privilege IAM policies, derived from the Task states a definition actually contains.
//!
//! Nothing is granted for a state that is not emitted: a driver on the gateway's lambda
//! transport gets no SQS permission. Literal parameters (function ARNs, queue URLs) scope each
//! statement.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::config::LogLevel;
use crate::plan::DriverPlan;
use crate::sfn::asl::{State, StateMachine};
use crate::sfn::SfnPlan;

/// Builds the policy document for the driver of `plan`. The second value lists Task resources
/// this module has no rule for; the compiler refuses to emit a policy that silently lacks them.
pub fn policy(plan: &DriverPlan, sfn: &SfnPlan, machine: &StateMachine) -> (Value, Vec<String>) {
    let mut g = Grants::default();
    let mut unrecognised = Vec::new();
    let aws = &sfn.arns;
    for state in all_states(machine) {
        let State::Task(task) = state else { continue };
        let params = task.parameters.clone().unwrap_or(Value::Null);
        let resource = task.resource.trim_end_matches(".waitForTaskToken");
        match resource {
            "arn:aws:states:::lambda:invoke" => {
                let f = params
                    .get("FunctionName")
                    .and_then(Value::as_str)
                    .unwrap_or("*")
                    .to_string();
                // Exactly the numbered version the release was compiled for, and the starter:
                // no other version, alias or the unqualified name.
                let sid = if f == plan.binding.starter_function_arn {
                    "StartNextGeneration"
                } else {
                    "InvokeTpfActionGateway"
                };
                g.grant(sid, &["lambda:InvokeFunction"], vec![f], None);
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
