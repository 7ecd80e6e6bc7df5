//! The Terraform (JSON) flavour of the durable release stack (`stack.rs`): a root module of its
//! own, like the Step Functions release module. The driver function is published
//! (`publish = true`): its `qualified_arn` is the release, what CloudFormation's
//! `DriverVersion` is.

use serde_json::{json, Map, Value};

use super::stack::{self, EnvValue, Function, Release, Res};
use crate::lowering::iam::trust;
use crate::lowering::monitoring::terraform as monitoring;
use crate::lowering::runtime::{LAMBDA_ARCHITECTURE, LAMBDA_RUNTIME, LAMBDA_ZIP};
use crate::lowering::terraform::{self as tf, json_literal, literal};

/// The provider version that added `durable_config` to `aws_lambda_function`.
pub const AWS_PROVIDER: &str = ">= 6.25.0";

fn resolve(r: &Res) -> String {
    match r {
        Res::Versions(function) => {
            format!(
                "{}function:{}:*",
                tf::arn_prefix("lambda"),
                literal(function)
            )
        }
        Res::Arn(arn) => literal(arn),
    }
}

fn env_value(v: &EnvValue) -> String {
    match v {
        EnvValue::Text(t) => literal(t),
    }
}

/// The module of a release stack.
pub fn render_release(r: &Release) -> Value {
    let mut variables = Map::new();
    variables.insert(
        "lambda_zip".into(),
        json!({"type": "string", "default": LAMBDA_ZIP, "description": "The tpf-sfn-lambda zip (scripts/lambda-package.sh builds it)"}),
    );
    variables.insert(
        "log_retention_in_days".into(),
        monitoring::retention_variable(),
    );
    variables.insert("alarm_topic_arn".into(), monitoring::topic_variable());
    let mut resources: Map<String, Value> = Map::new();
    let mut put = |ty: &str, name: &str, v: Value| {
        if let Some(o) = resources
            .entry(ty.to_string())
            .or_insert_with(|| json!({}))
            .as_object_mut()
        {
            o.insert(name.to_string(), v);
        }
    };
    let tags: Map<String, Value> = r
        .tags
        .iter()
        .map(|(k, v)| (literal(k), json!(literal(v))))
        .collect();
    {
        let (id, f) = ("driver", &r.driver);
        put(
            "aws_iam_role",
            id,
            json!({"assume_role_policy": json_literal(&trust("lambda.amazonaws.com"))}),
        );
        let document = json!({
            "Version": "2012-10-17",
            "Statement": f.statements.iter().map(|s| s.document(resolve)).collect::<Vec<_>>()
        });
        // The resources are interpolations on purpose: the document is a template Terraform
        // fills.
        put(
            "aws_iam_role_policy",
            id,
            json!({"name": f.policy_name, "role": format!("${{aws_iam_role.{id}.id}}"), "policy": document.to_string()}),
        );
        put(
            "aws_iam_role_policy_attachment",
            id,
            json!({
                "role": format!("${{aws_iam_role.{id}.name}}"),
                "policy_arn": format!("arn:{}:iam::aws:policy/service-role/{}", tf::PARTITION, f.managed_policy)
            }),
        );
        put(
            "aws_cloudwatch_log_group",
            id,
            monitoring::log_group(&literal(&stack::log_group_name(&f.name))),
        );
        put("aws_lambda_function", id, function(id, f, &tags));
    }
    for a in stack::release_alarms() {
        let target = match a.target {
            stack::Watched::Driver => "aws_lambda_function.driver.function_name",
        };
        put(
            "aws_cloudwatch_metric_alarm",
            a.tf_name,
            monitoring::alarm(&a, target),
        );
    }
    let mut outputs = Map::new();
    outputs.insert(
        "driver_function_name".into(),
        json!({"value": "${aws_lambda_function.driver.function_name}"}),
    );
    outputs.insert(
        "driver_version_arn".into(),
        json!({"description": r.version_output_description, "value": "${aws_lambda_function.driver.qualified_arn}"}),
    );
    let mut module = Map::new();
    module.insert("//".into(), json!(literal(&r.description)));
    module.insert("terraform".into(), tf::header(AWS_PROVIDER));
    module.insert("variable".into(), Value::Object(variables));
    module.insert("data".into(), tf::account_data());
    module.insert("resource".into(), Value::Object(resources));
    module.insert("output".into(), Value::Object(outputs));
    Value::Object(module)
}

fn function(id: &str, f: &Function, tags: &Map<String, Value>) -> Value {
    let mut p = Map::new();
    p.insert("function_name".into(), json!(literal(&f.name)));
    p.insert("description".into(), json!(literal(&f.description)));
    p.insert("runtime".into(), json!(LAMBDA_RUNTIME));
    p.insert("handler".into(), json!("bootstrap"));
    p.insert("architectures".into(), json!([LAMBDA_ARCHITECTURE]));
    p.insert("memory_size".into(), json!(stack::MEMORY_MB));
    p.insert("timeout".into(), json!(f.timeout_seconds));
    p.insert("filename".into(), json!("${var.lambda_zip}"));
    p.insert(
        "source_code_hash".into(),
        json!("${filebase64sha256(var.lambda_zip)}"),
    );
    p.insert("role".into(), json!(format!("${{aws_iam_role.{id}.arn}}")));
    let vars: Map<String, Value> = f
        .env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(env_value(v))))
        .collect();
    p.insert("environment".into(), json!({ "variables": vars }));
    if f.durable {
        p.insert(
            "durable_config".into(),
            json!({
                "execution_timeout": stack::EXECUTION_TIMEOUT_SECONDS,
                "retention_period": stack::RETENTION_DAYS
            }),
        );
        // The published version is the release: executions start on it, never on $LATEST.
        p.insert("publish".into(), json!(true));
    }
    p.insert("tags".into(), Value::Object(tags.clone()));
    p.insert(
        "depends_on".into(),
        json!([
            format!("aws_iam_role_policy.{id}"),
            format!("aws_iam_role_policy_attachment.{id}"),
            format!("aws_cloudwatch_log_group.{id}")
        ]),
    );
    Value::Object(p)
}
