//! The CloudFormation flavour of the durable release stack (`stack.rs`): `DriverVersion`, an
//! `AWS::Lambda::Version`, is the release.

use serde_json::{json, Map, Value};

use super::stack::{self, EnvValue, Function, Release, Res};
use crate::lowering::iam::trust;
use crate::lowering::monitoring::cloudformation as monitoring;
use crate::lowering::runtime::{LAMBDA_ARCHITECTURE, LAMBDA_RUNTIME};

pub use super::stack::{env, EXECUTION_TIMEOUT_SECONDS, RETENTION_DAYS};

fn sub(s: &str) -> Value {
    json!({ "Fn::Sub": s })
}

fn resolve(r: &Res) -> Value {
    match r {
        Res::Versions(function) => sub(&format!(
            "arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{function}:*"
        )),
        Res::Arn(arn) => json!(arn),
    }
}

fn env_value(v: &EnvValue) -> Value {
    match v {
        EnvValue::Text(t) => json!(t),
    }
}

/// The release stack, or `EXPORT_PLACEHOLDER` while the binding still names a placeholder.
pub fn release(c: &super::Compiled) -> Result<Value, crate::diagnostic::Diagnostics> {
    Ok(render_release(&stack::release(c)?))
}

/// The template of a release stack.
pub fn render_release(r: &Release) -> Value {
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
    monitoring::declare(&mut parameters, &mut conditions);
    let tags: Vec<Value> = r
        .tags
        .iter()
        .map(|(k, v)| json!({"Key": k, "Value": v}))
        .collect();
    let mut resources = Map::new();
    resources.insert("DriverRole".into(), lambda_role(&r.driver));
    resources.insert(
        "DriverLogGroup".into(),
        monitoring::log_group(json!(stack::log_group_name(&r.driver.name))),
    );
    resources.insert(
        "Driver".into(),
        json!({"Type": "AWS::Lambda::Function", "DependsOn": "DriverLogGroup", "Properties": function(&r.driver, "DriverRole", &tags)}),
    );
    for a in stack::release_alarms() {
        let target = match a.target {
            stack::Watched::Driver => json!({"Ref": "Driver"}),
        };
        resources.insert(a.id.into(), monitoring::alarm(&a, target));
    }
    resources.insert(
        "DriverVersion".into(),
        json!({
            "Type": "AWS::Lambda::Version",
            "Properties": {"FunctionName": {"Ref": "Driver"}, "Description": r.version_description}
        }),
    );
    let mut outputs = Map::new();
    outputs.insert(
        "DriverFunctionName".into(),
        json!({"Value": {"Ref": "Driver"}}),
    );
    outputs.insert(
        "DriverVersionArn".into(),
        json!({"Description": r.version_output_description, "Value": {"Ref": "DriverVersion"}}),
    );
    let mut stack = Map::new();
    stack.insert("AWSTemplateFormatVersion".into(), json!("2010-09-09"));
    stack.insert("Description".into(), json!(r.description));
    stack.insert("Parameters".into(), Value::Object(parameters));
    stack.insert("Conditions".into(), Value::Object(conditions));
    stack.insert("Resources".into(), Value::Object(resources));
    stack.insert("Outputs".into(), Value::Object(outputs));
    Value::Object(stack)
}

fn function(f: &Function, role: &str, tags: &[Value]) -> Value {
    let mut p = Map::new();
    p.insert("FunctionName".into(), json!(f.name));
    p.insert("Description".into(), json!(f.description));
    p.insert("Runtime".into(), json!(LAMBDA_RUNTIME));
    p.insert("Handler".into(), json!("bootstrap"));
    p.insert("Architectures".into(), json!([LAMBDA_ARCHITECTURE]));
    p.insert("MemorySize".into(), json!(stack::MEMORY_MB));
    p.insert("Timeout".into(), json!(f.timeout_seconds));
    p.insert(
        "Code".into(),
        json!({"S3Bucket": {"Ref": "CodeS3Bucket"}, "S3Key": {"Ref": "CodeS3Key"}}),
    );
    p.insert("Role".into(), json!({"Fn::GetAtt": [role, "Arn"]}));
    let vars: Map<String, Value> = f
        .env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), env_value(v)))
        .collect();
    p.insert("Environment".into(), json!({ "Variables": vars }));
    if f.durable {
        p.insert(
            "DurableConfig".into(),
            json!({
                "ExecutionTimeout": EXECUTION_TIMEOUT_SECONDS,
                "RetentionPeriodInDays": RETENTION_DAYS
            }),
        );
    }
    p.insert("Tags".into(), json!(tags));
    Value::Object(p)
}

/// A role Lambda assumes: its AWS managed policy and its inline policy.
fn lambda_role(f: &Function) -> Value {
    let statements: Vec<Value> = f.statements.iter().map(|s| s.document(resolve)).collect();
    json!({
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": trust("lambda.amazonaws.com"),
            "ManagedPolicyArns": [sub(&format!("arn:${{AWS::Partition}}:iam::aws:policy/service-role/{}", f.managed_policy))],
            "Policies": [{"PolicyName": f.policy_name, "PolicyDocument": {"Version": "2012-10-17", "Statement": statements}}]
        }
    })
}

pub fn render(stack: &Value) -> String {
    crate::lowering::json_file(stack)
}
