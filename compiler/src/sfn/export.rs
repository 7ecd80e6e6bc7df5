//! Infrastructure-as-code exports of a compiled release: a CloudFormation template or Terraform
//! JSON holding the role, both machines and the sweeper's schedule. Pure: compile output in,
//! JSON out; the CLI writes the file next to the others.
//!
//! Both exports carry the same facts `deploy` applies (names, definition text, tags, logging,
//! tracing) plus what `deploy` leaves out: the IAM role with the compiled least-privilege
//! policies and the EventBridge Scheduler schedule that starts the sweeper — a sweeper that
//! nothing starts protects nothing.

use serde_json::{json, Map, Value};

use crate::compile::Output;
use crate::config::LogLevel;
use crate::sfn::files::{DRIVER_FILE, DRIVER_POLICY_FILE, SWEEPER_FILE, SWEEPER_POLICY_FILE};
use crate::sfn::manifest::MachineInfo;

pub const CLOUDFORMATION_FILE: &str = "cloudformation.json";
pub const TERRAFORM_FILE: &str = "main.tf.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    CloudFormation,
    Terraform,
}

impl Kind {
    pub fn file_name(self) -> &'static str {
        match self {
            Kind::CloudFormation => CLOUDFORMATION_FILE,
            Kind::Terraform => TERRAFORM_FILE,
        }
    }
}

/// `(file name, contents)` for the requested export.
pub fn file(out: &Output, kind: Kind) -> (String, String) {
    let value = match kind {
        Kind::CloudFormation => cloudformation(out),
        Kind::Terraform => terraform(out),
    };
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    (kind.file_name().to_string(), text)
}

fn text<'a>(out: &'a Output, name: &str) -> &'a str {
    out.files
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t.as_str())
        .unwrap_or("")
}

fn policy(out: &Output, name: &str) -> Value {
    serde_json::from_str(text(out, name)).unwrap_or(Value::Null)
}

fn trust(service: &str) -> Value {
    json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": service},
            "Action": "sts:AssumeRole"
        }]
    })
}

/// Step Functions' vended-logs permissions; only needed when logging is on.
fn logs_policy() -> Value {
    json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Sid": "DeliverExecutionLogs",
            "Effect": "Allow",
            "Action": [
                "logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery",
                "logs:DeleteLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy",
                "logs:DescribeResourcePolicies", "logs:DescribeLogGroups"
            ],
            "Resource": "*"
        }]
    })
}

fn logging_on(out: &Output) -> bool {
    out.manifest.logging.level != LogLevel::Off
}

fn level(out: &Output) -> Value {
    serde_json::to_value(out.manifest.logging.level).unwrap_or(Value::Null)
}

/// The sweeper schedule's name, shared with `deploy`. Scheduler names are at most 64
/// characters; machine names may be longer.
pub fn schedule_name(sweeper_machine: &str) -> String {
    let base = sweeper_machine
        .strip_suffix("-sweeper")
        .unwrap_or(sweeper_machine);
    let mut name: String = base.chars().take(64 - "-sweeper-schedule".len()).collect();
    name.push_str("-sweeper-schedule");
    name
}

fn schedule(out: &Output) -> &str {
    out.manifest
        .machines
        .sweeper
        .schedule
        .as_deref()
        .unwrap_or("rate(1 minute)")
}

pub fn cloudformation(out: &Output) -> Value {
    let m = &out.manifest;
    let mut policies = vec![
        json!({"PolicyName": "driver", "PolicyDocument": policy(out, DRIVER_POLICY_FILE)}),
        json!({"PolicyName": "sweeper", "PolicyDocument": policy(out, SWEEPER_POLICY_FILE)}),
    ];
    if logging_on(out) {
        policies.push(json!({"PolicyName": "logs", "PolicyDocument": logs_policy()}));
    }
    let machine = |info: &MachineInfo, file: &str| {
        let mut props = Map::new();
        props.insert("StateMachineName".into(), json!(info.name));
        props.insert("StateMachineType".into(), json!("STANDARD"));
        props.insert("DefinitionString".into(), json!(text(out, file)));
        props.insert(
            "RoleArn".into(),
            json!({"Fn::GetAtt": ["MachinesRole", "Arn"]}),
        );
        props.insert(
            "Tags".into(),
            Value::Array(
                info.tags
                    .iter()
                    .map(|(k, v)| json!({"Key": k, "Value": v}))
                    .collect(),
            ),
        );
        if logging_on(out) {
            props.insert(
                "LoggingConfiguration".into(),
                json!({
                    "Level": level(out),
                    "IncludeExecutionData": m.logging.include_execution_data,
                    "Destinations": [{"CloudWatchLogsLogGroup": {"LogGroupArn": m.logging.log_group_arn}}]
                }),
            );
        }
        props.insert("TracingConfiguration".into(), json!({"Enabled": m.tracing}));
        json!({"Type": "AWS::StepFunctions::StateMachine", "Properties": props})
    };
    json!({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": format!(
            "tpf-sfn {} release {} of {}: wakeup driver, sweeper and the sweeper's schedule",
            m.compiler.version, m.identity.release_version, m.identity.pipeline_id
        ),
        "Resources": {
            "MachinesRole": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": trust("states.amazonaws.com"),
                    "Policies": policies
                }
            },
            "Driver": machine(&m.machines.driver, DRIVER_FILE),
            "Sweeper": machine(&m.machines.sweeper, SWEEPER_FILE),
            "SweeperScheduleRole": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": trust("scheduler.amazonaws.com"),
                    "Policies": [{
                        "PolicyName": "start-sweeper",
                        "PolicyDocument": {
                            "Version": "2012-10-17",
                            "Statement": [{
                                "Effect": "Allow",
                                "Action": "states:StartExecution",
                                "Resource": {"Ref": "Sweeper"}
                            }]
                        }
                    }]
                }
            },
            "SweeperSchedule": {
                "Type": "AWS::Scheduler::Schedule",
                "Properties": {
                    "Name": schedule_name(&m.machines.sweeper.name),
                    "ScheduleExpression": schedule(out),
                    "FlexibleTimeWindow": {"Mode": "OFF"},
                    "Target": {
                        "Arn": {"Ref": "Sweeper"},
                        "RoleArn": {"Fn::GetAtt": ["SweeperScheduleRole", "Arn"]},
                        "Input": "{}"
                    }
                }
            }
        },
        "Outputs": {
            "DriverArn": {"Value": {"Ref": "Driver"}},
            "SweeperArn": {"Value": {"Ref": "Sweeper"}},
            "MachinesRoleArn": {"Value": {"Fn::GetAtt": ["MachinesRole", "Arn"]}}
        }
    })
}

/// Terraform interpolates `${...}` and `%{...}` in every string; compiled text must stay literal.
fn tf_literal(s: &str) -> String {
    s.replace("${", "$${").replace("%{", "%%{")
}

fn tf_json(v: &Value) -> String {
    tf_literal(&v.to_string())
}

pub fn terraform(out: &Output) -> Value {
    let m = &out.manifest;
    let machine = |info: &MachineInfo, file: &str| {
        let mut r = Map::new();
        r.insert("name".into(), json!(tf_literal(&info.name)));
        r.insert("type".into(), json!("STANDARD"));
        r.insert("role_arn".into(), json!("${aws_iam_role.machines.arn}"));
        r.insert("definition".into(), json!(tf_literal(text(out, file))));
        r.insert(
            "tags".into(),
            Value::Object(
                info.tags
                    .iter()
                    .map(|(k, v)| (tf_literal(k), json!(tf_literal(v))))
                    .collect(),
            ),
        );
        if logging_on(out) {
            r.insert(
                "logging_configuration".into(),
                json!({
                    "level": level(out),
                    "include_execution_data": m.logging.include_execution_data,
                    "log_destination": m.logging.log_group_arn.as_deref().map(tf_literal)
                }),
            );
        }
        r.insert(
            "tracing_configuration".into(),
            json!({"enabled": m.tracing}),
        );
        let mut depends = vec![
            json!("aws_iam_role_policy.driver"),
            json!("aws_iam_role_policy.sweeper"),
        ];
        if logging_on(out) {
            depends.push(json!("aws_iam_role_policy.logs"));
        }
        r.insert("depends_on".into(), Value::Array(depends));
        Value::Object(r)
    };
    let mut role_policies = Map::new();
    role_policies.insert(
        "driver".into(),
        json!({"name": "driver", "role": "${aws_iam_role.machines.id}", "policy": tf_json(&policy(out, DRIVER_POLICY_FILE))}),
    );
    role_policies.insert(
        "sweeper".into(),
        json!({"name": "sweeper", "role": "${aws_iam_role.machines.id}", "policy": tf_json(&policy(out, SWEEPER_POLICY_FILE))}),
    );
    if logging_on(out) {
        role_policies.insert(
            "logs".into(),
            json!({"name": "logs", "role": "${aws_iam_role.machines.id}", "policy": tf_json(&logs_policy())}),
        );
    }
    role_policies.insert(
        "sweeper_schedule".into(),
        json!({
            "name": "start-sweeper",
            "role": "${aws_iam_role.sweeper_schedule.id}",
            "policy": "${jsonencode({Version = \"2012-10-17\", Statement = [{Effect = \"Allow\", Action = \"states:StartExecution\", Resource = aws_sfn_state_machine.sweeper.arn}]})}"
        }),
    );
    json!({
        "//": format!(
            "tpf-sfn {} release {} of {}: wakeup driver, sweeper and the sweeper's schedule",
            m.compiler.version, tf_literal(&m.identity.release_version), tf_literal(&m.identity.pipeline_id)
        ),
        "resource": {
            "aws_iam_role": {
                "machines": {"assume_role_policy": tf_json(&trust("states.amazonaws.com"))},
                "sweeper_schedule": {"assume_role_policy": tf_json(&trust("scheduler.amazonaws.com"))}
            },
            "aws_iam_role_policy": role_policies,
            "aws_sfn_state_machine": {
                "driver": machine(&m.machines.driver, DRIVER_FILE),
                "sweeper": machine(&m.machines.sweeper, SWEEPER_FILE)
            },
            "aws_scheduler_schedule": {
                "sweeper": {
                    "name": tf_literal(&schedule_name(&m.machines.sweeper.name)),
                    "schedule_expression": schedule(out),
                    "flexible_time_window": {"mode": "OFF"},
                    "target": {
                        "arn": "${aws_sfn_state_machine.sweeper.arn}",
                        "role_arn": "${aws_iam_role.sweeper_schedule.arn}",
                        "input": "{}"
                    }
                }
            }
        },
        "output": {
            "driver_arn": {"value": "${aws_sfn_state_machine.driver.arn}"},
            "sweeper_arn": {"value": "${aws_sfn_state_machine.sweeper.arn}"},
            "machines_role_arn": {"value": "${aws_iam_role.machines.arn}"}
        }
    })
}

/// Every `Ref` / `Fn::GetAtt` target in a CloudFormation template that is not a resource.
pub fn unresolved_cloudformation_refs(template: &Value) -> Vec<String> {
    let resources = template
        .get("Resources")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut missing = Vec::new();
    walk(template, &mut |v| {
        if let Some(o) = v.as_object() {
            if let Some(Value::String(r)) = o.get("Ref") {
                if !resources.contains_key(r) {
                    missing.push(r.clone());
                }
            }
            if let Some(Value::Array(a)) = o.get("Fn::GetAtt") {
                if let Some(Value::String(r)) = a.first() {
                    if !resources.contains_key(r) {
                        missing.push(r.clone());
                    }
                }
            }
        }
    });
    missing
}

/// Every `${type.name...}` / `type.name.attr` reference in Terraform JSON that names no declared
/// resource, plus `depends_on` entries that name none.
pub fn unresolved_terraform_refs(config: &Value) -> Vec<String> {
    let declared = |ty: &str, name: &str| {
        config
            .get("resource")
            .and_then(|r| r.get(ty))
            .and_then(|t| t.get(name))
            .is_some()
    };
    let mut missing = Vec::new();
    walk(config, &mut |v| {
        if let Some(s) = v.as_str() {
            for r in references(s) {
                let mut parts = r.split('.');
                let (Some(ty), Some(name)) = (parts.next(), parts.next()) else {
                    continue;
                };
                if !declared(ty, name) {
                    missing.push(r);
                }
            }
        }
        if let Some(deps) = v.get("depends_on").and_then(Value::as_array) {
            for d in deps.iter().filter_map(Value::as_str) {
                let mut parts = d.split('.');
                if let (Some(ty), Some(name)) = (parts.next(), parts.next()) {
                    if !declared(ty, name) {
                        missing.push(d.to_string());
                    }
                }
            }
        }
    });
    missing
}

/// `aws_*.name` references inside `${...}` (escaped `$${` is literal and skipped).
fn references(s: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while let Some(pos) = s[i..].find("${") {
        let start = i + pos;
        i = start + 2;
        if start > 0 && bytes[start - 1] == b'$' {
            continue;
        }
        let Some(end) = s[i..].find('}') else { break };
        let expr = &s[i..i + end];
        for token in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
            if token.starts_with("aws_") && token.contains('.') {
                refs.push(token.to_string());
            }
        }
    }
    refs
}

fn walk(v: &Value, f: &mut dyn FnMut(&Value)) {
    f(v);
    match v {
        Value::Object(o) => o.values().for_each(|x| walk(x, f)),
        Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terraform_literals_are_escaped_and_references_found() {
        assert_eq!(tf_literal("a ${b} %{c}"), "a $${b} %%{c}");
        assert_eq!(
            references("x $${aws_a.b} ${aws_sfn_state_machine.sweeper.arn}"),
            vec!["aws_sfn_state_machine.sweeper.arn"]
        );
    }

    #[test]
    fn unresolved_refs_are_reported() {
        let cf =
            json!({"Resources": {"A": {}}, "X": {"Ref": "B"}, "Y": {"Fn::GetAtt": ["A", "Arn"]}});
        assert_eq!(unresolved_cloudformation_refs(&cf), vec!["B"]);
        let tf = json!({"resource": {"aws_x": {"a": {"r": "${aws_x.b.id}", "depends_on": ["aws_x.a"]}}}});
        assert_eq!(unresolved_terraform_refs(&tf), vec!["aws_x.b.id"]);
    }
}
