//! The Terraform (JSON) flavour of both stacks: each a root module of its own, so each has its
//! own state and retiring a release never plans the wake path's destruction.

use serde_json::{json, Map, Value};

use super::stack::{self, env, Alarm, Facts, Res, Statement};
use super::{description, logging_on, policy, wake_path_description};
use crate::lowering::iam::trust;
use crate::lowering::monitoring::terraform as monitoring;
use crate::lowering::runtime;
use crate::lowering::terraform::{
    self as tf, account_trust, json_literal as tf_json, literal as tf_literal,
};
use crate::sfn::files::{DRIVER_FILE, DRIVER_POLICY_FILE};
use crate::sfn::manifest::MachineInfo;
use crate::sfn::Compiled;
/// The providers' status-change event names the reconciler reads.
use tpf_sfn_wakeup::reconcile::event as tpf_sfn_wakeup_event;

/// The provider version that added `aws_scheduler_schedule`, the newest resource used here.
pub const AWS_PROVIDER: &str = ">= 4.41.0";

fn header() -> Value {
    tf::header(AWS_PROVIDER)
}

fn alarm(a: &Alarm, target: &str) -> Value {
    monitoring::alarm(a, target)
}

/// The release module: the gateway driver, its role, its alarms.
pub fn release(out: &Compiled) -> Value {
    let m = &out.manifest;
    let machine = |info: &MachineInfo, file: &str, role: &str| {
        let mut r = Map::new();
        r.insert("name".into(), json!(tf_literal(&info.name)));
        r.insert("type".into(), json!("STANDARD"));
        r.insert(
            "role_arn".into(),
            json!(format!("${{aws_iam_role.{role}.arn}}")),
        );
        r.insert(
            "definition".into(),
            json!(tf_literal(super::file_text(out, file))),
        );
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
                    "level": serde_json::to_value(m.logging.level).unwrap_or(Value::Null),
                    "include_execution_data": m.logging.include_execution_data,
                    "log_destination": m.logging.log_group_arn.as_deref().map(tf_literal)
                }),
            );
        }
        r.insert(
            "tracing_configuration".into(),
            json!({"enabled": m.tracing}),
        );
        r.insert(
            "depends_on".into(),
            json!([format!("aws_iam_role_policy.{role}")]),
        );
        Value::Object(r)
    };
    // No sweeper machine: the driver SWEEPs TPF itself, or the wake-path stack's schedule does.
    let mut resources = Map::new();
    let mut policies = Map::new();
    policies.insert(
        "driver".into(),
        json!({"name": "driver", "role": "${aws_iam_role.driver.id}", "policy": tf_json(&policy(out, DRIVER_POLICY_FILE))}),
    );
    let mut iam_roles = Map::new();
    iam_roles.insert(
        "driver".into(),
        json!({"assume_role_policy": account_trust("states.amazonaws.com")}),
    );
    let mut machines = Map::new();
    machines.insert(
        "driver".into(),
        machine(&m.machines.driver, DRIVER_FILE, "driver"),
    );
    let mut outputs = Map::new();
    outputs.insert(
        "driver_arn".into(),
        json!({"value": "${aws_sfn_state_machine.driver.arn}"}),
    );
    outputs.insert(
        "driver_role_arn".into(),
        json!({"value": "${aws_iam_role.driver.arn}"}),
    );
    let mut alarms = Map::new();
    for a in stack::release_alarms() {
        let mut v = alarm(&a, "aws_sfn_state_machine.driver.arn");
        v["alarm_name"] = json!(format!(
            "{}-{}",
            tf_literal(&m.machines.driver.name),
            a.metric.to_ascii_lowercase()
        ));
        alarms.insert(a.tf_name.into(), v);
    }
    resources.insert("aws_iam_role".into(), Value::Object(iam_roles));
    resources.insert("aws_iam_role_policy".into(), Value::Object(policies));
    resources.insert("aws_sfn_state_machine".into(), Value::Object(machines));
    resources.insert("aws_cloudwatch_metric_alarm".into(), Value::Object(alarms));
    json!({
        "//": tf_literal(&description(out, &super::release_contents("module"))),
        "terraform": header(),
        "variable": {"alarm_topic_arn": monitoring::topic_variable()},
        "data": {"aws_caller_identity": {"current": {}}},
        "resource": resources,
        "output": outputs
    })
}

fn resolve(f: &Facts, r: &Res) -> String {
    match r {
        Res::ActionQueue => "${aws_sqs_queue.action.arn}".into(),
        Res::DeadLetterQueue => "${aws_sqs_queue.action_dead_letters.arn}".into(),
        Res::FunctionLogs(which) if which.starts_with("gateway") => format!(
            "${{aws_cloudwatch_log_group.{}[0].arn}}:*",
            which.replace('-', "_")
        ),
        Res::FunctionLogs(which) => format!("${{aws_cloudwatch_log_group.{which}.arn}}:*"),
        Res::Machines(role) => format!(
            "${{local.machine_arn_prefix}}{}",
            tf_literal(&f.machine_pattern(role))
        ),
        Res::DurableFunctions => format!(
            "${{local.function_arn_prefix}}{}",
            tf_literal(&f.durable_function_pattern())
        ),
        Res::DriverExecutions => format!(
            "${{local.execution_arn_prefix}}{}:*",
            tf_literal(&f.machine_pattern("driver"))
        ),
        Res::AwaitInteractionStream => "${var.await_interaction_stream_arn}".into(),
        Res::BindingTable => "${aws_dynamodb_table.callback_binding[0].arn}".into(),
        Res::BindingTableIndexes => "${aws_dynamodb_table.callback_binding[0].arn}/index/*".into(),
        Res::BindingStream => "${aws_dynamodb_table.callback_binding[0].stream_arn}".into(),
        Res::GatewayFunction => "${var.gateway_function_arn}".into(),
        Res::RelayedGateway => tf_literal(f.relayed_gateway().unwrap_or_default()),
        Res::GatewayFailures => "${aws_sqs_queue.gateway_stream_failures[0].arn}".into(),
        Res::Everything => "*".into(),
    }
}

/// TPF's gateway host in the wake-path module, created when `gateway_function_arn` is set
/// (`count`): the same resources as the CloudFormation flavour's (`cloudformation.rs`).
fn gateway_host(
    f: &Facts,
    variables: &mut Map<String, Value>,
    put: &mut dyn FnMut(&str, &str, Value),
    outputs: &mut Map<String, Value>,
) {
    use tpf_wire::gateway::binding::{attr, PROVIDER_EXECUTION_INDEX};
    const COUNT: &str = "${local.gateway_host ? 1 : 0}";
    variables.insert(
        "gateway_function_arn".into(),
        json!({"type": "string", "default": tf_literal(f.gateway_default()), "description": stack::GATEWAY_FUNCTION_DESCRIPTION}),
    );
    variables.insert(
        "await_interaction_stream_arn".into(),
        json!({"type": "string", "default": "", "description": stack::AWAIT_STREAM_DESCRIPTION}),
    );
    let mut add = |ty: &str, name: &str, mut v: Value| {
        v["count"] = json!(COUNT);
        put(ty, name, v);
    };
    add(
        "aws_dynamodb_table",
        "callback_binding",
        json!({
            "name": tf_literal(&f.binding_table()),
            "billing_mode": "PAY_PER_REQUEST",
            "hash_key": attr::PK,
            "range_key": attr::SK,
            "attribute": [
                {"name": attr::PK, "type": "S"},
                {"name": attr::SK, "type": "S"},
                {"name": attr::PROVIDER_EXECUTION_ARN, "type": "S"}
            ],
            "global_secondary_index": [{
                "name": PROVIDER_EXECUTION_INDEX,
                "hash_key": attr::PROVIDER_EXECUTION_ARN,
                "projection_type": "ALL"
            }],
            "stream_enabled": true,
            "stream_view_type": "NEW_AND_OLD_IMAGES",
            "ttl": {"attribute_name": attr::EXPIRES_AT_EPOCH_S, "enabled": true},
            "point_in_time_recovery": {"enabled": true},
            "server_side_encryption": {"enabled": true},
            "lifecycle": {"prevent_destroy": true}
        }),
    );
    add(
        "aws_sqs_queue",
        "gateway_stream_failures",
        json!({"name": tf_literal(&f.gateway_failures_queue()), "message_retention_seconds": stack::DLQ_RETENTION_SECONDS, "sqs_managed_sse_enabled": true}),
    );
    for stack::HostFunction {
        which,
        handler,
        statements,
        timeout,
    } in stack::gateway_host_functions()
    {
        let id = which.replace('-', "_");
        let name = f.gateway_function(which.trim_start_matches("gateway-"));
        add(
            "aws_cloudwatch_log_group",
            &id,
            log_group(&format!("/aws/lambda/{name}")),
        );
        add(
            "aws_iam_role",
            &id,
            json!({"assume_role_policy": tf_json(&trust("lambda.amazonaws.com"))}),
        );
        let mut policy = role_policy(f, &id, &statements);
        policy["role"] = json!(format!("${{aws_iam_role.{id}[0].id}}"));
        add("aws_iam_role_policy", &id, policy);
        let mut vars = json!({
            env::MACHINE_ARN_PREFIX: "${local.machine_arn_prefix}",
            env::NAME_PREFIX: tf_literal(f.prefix),
            env::DURABLE_FUNCTIONS: "${var.durable_functions}"
        });
        // The starter reads only where the drivers are.
        if handler != stack::handler::STARTER {
            vars[env::GATEWAY_FUNCTION] = json!("${var.gateway_function_arn}");
            vars[env::BINDING_TABLE] = json!("${aws_dynamodb_table.callback_binding[0].name}");
        }
        let mut function = function(&name, &id, timeout, vars);
        function.insert("handler".into(), json!(handler));
        function.insert(
            "role".into(),
            json!(format!("${{aws_iam_role.{id}[0].arn}}")),
        );
        if handler == stack::handler::RECONCILER {
            function.insert(
                "reserved_concurrent_executions".into(),
                json!(stack::GATEWAY_RECONCILER_CONCURRENCY),
            );
        }
        add("aws_lambda_function", &id, Value::Object(function));
    }
    let mapping = |source: &str| {
        json!({
            "event_source_arn": source,
            "function_name": "${aws_lambda_function.gateway_wakeup[0].arn}",
            "starting_position": "TRIM_HORIZON",
            "batch_size": stack::GATEWAY_STREAM_BATCH_SIZE,
            "bisect_batch_on_function_error": true,
            "maximum_record_age_in_seconds": stack::STREAM_RECORD_MAX_AGE_SECONDS,
            "maximum_retry_attempts": stack::GATEWAY_STREAM_RETRIES,
            "function_response_types": ["ReportBatchItemFailures"],
            "destination_config": {"on_failure": {"destination_arn": "${aws_sqs_queue.gateway_stream_failures[0].arn}"}}
        })
    };
    add(
        "aws_lambda_event_source_mapping",
        "await_interaction_stream",
        mapping("${var.await_interaction_stream_arn}"),
    );
    add(
        "aws_lambda_event_source_mapping",
        "callback_binding_stream",
        mapping("${aws_dynamodb_table.callback_binding[0].stream_arn}"),
    );
    let rules = [
        (
            "driver_status_change",
            json!({
                "source": [stack::SFN_STATUS_SOURCE],
                "detail-type": [tpf_sfn_wakeup_event::SFN_DETAIL_TYPE],
                "detail": {
                    "status": stack::ENDED_DRIVER_STATUSES,
                    "stateMachineArn": [{"wildcard": format!("${{local.machine_arn_prefix}}{}", tf_literal(&f.machine_pattern("driver")))}]
                }
            }),
        ),
        (
            "durable_driver_status_change",
            json!({
                "source": [stack::DURABLE_STATUS_SOURCE],
                "detail-type": [tpf_sfn_wakeup_event::DURABLE_DETAIL_TYPE],
                "detail": {
                    "functionArn": [{"wildcard": format!("${{local.function_arn_prefix}}{}", tf_literal(&f.durable_function_pattern()))}]
                }
            }),
        ),
    ];
    for (rule, pattern) in rules {
        add(
            "aws_cloudwatch_event_rule",
            rule,
            json!({"event_pattern": pattern.to_string(), "state": "ENABLED"}),
        );
        add(
            "aws_cloudwatch_event_target",
            rule,
            json!({"rule": format!("${{aws_cloudwatch_event_rule.{rule}[0].name}}"), "arn": "${aws_lambda_function.gateway_reconciler[0].arn}"}),
        );
        add(
            "aws_lambda_permission",
            rule,
            json!({
                "action": "lambda:InvokeFunction",
                "function_name": "${aws_lambda_function.gateway_reconciler[0].function_name}",
                "principal": "events.amazonaws.com",
                "source_arn": format!("${{aws_cloudwatch_event_rule.{rule}[0].arn}}")
            }),
        );
    }
    if let Some(sweep) = f.scheduled_sweep() {
        add(
            "aws_iam_role",
            "gateway_sweep_schedule",
            json!({"assume_role_policy": account_trust("scheduler.amazonaws.com")}),
        );
        let mut policy = role_policy(f, "gateway_sweep", &stack::sweep_schedule_statements());
        policy["role"] = json!("${aws_iam_role.gateway_sweep_schedule[0].id}");
        add("aws_iam_role_policy", "gateway_sweep_schedule", policy);
        add(
            "aws_scheduler_schedule",
            "gateway_sweep",
            json!({
                "name": tf_literal(&f.sweep_schedule_name()),
                "description": tf_literal(stack::SWEEP_SCHEDULE_DESCRIPTION),
                "schedule_expression": tf_literal(&sweep.expression),
                "flexible_time_window": {"mode": "OFF"},
                "state": "ENABLED",
                "target": {
                    "arn": "${var.gateway_function_arn}",
                    "role_arn": "${aws_iam_role.gateway_sweep_schedule[0].arn}",
                    "input": tf_literal(&stack::sweep_schedule_input()),
                    "retry_policy": {
                        "maximum_retry_attempts": stack::SWEEP_SCHEDULE_RETRIES,
                        "maximum_event_age_in_seconds": stack::sweep_schedule_event_age(sweep)
                    }
                }
            }),
        );
    }
    for a in stack::gateway_alarms() {
        let target = match a.target {
            Res::GatewayFailures => "aws_sqs_queue.gateway_stream_failures[0].name",
            _ => "aws_lambda_function.gateway_wakeup[0].function_name",
        };
        add("aws_cloudwatch_metric_alarm", a.tf_name, alarm(&a, target));
    }
    for (id, value) in [
        (
            "callback_binding_table_name",
            "aws_dynamodb_table.callback_binding[0].name",
        ),
        (
            "callback_binding_table_stream_arn",
            "aws_dynamodb_table.callback_binding[0].stream_arn",
        ),
        (
            "gateway_starter_arn",
            "aws_lambda_function.gateway_starter[0].arn",
        ),
        (
            "gateway_stream_failures_queue_url",
            "aws_sqs_queue.gateway_stream_failures[0].url",
        ),
    ] {
        outputs.insert(
            id.into(),
            json!({"value": format!("${{local.gateway_host ? {value} : null}}")}),
        );
    }
}

fn role_policy(f: &Facts, name: &str, statements: &[Statement]) -> Value {
    let document = json!({
        "Version": "2012-10-17",
        "Statement": statements.iter().map(|s| json!({
            "Sid": s.sid,
            "Effect": "Allow",
            "Action": s.actions,
            "Resource": s.resources.iter().map(|r| resolve(f, r)).collect::<Vec<_>>()
        })).collect::<Vec<_>>()
    });
    // The resources are interpolations on purpose: the document is a template Terraform fills.
    json!({"name": name, "role": format!("${{aws_iam_role.{name}.id}}"), "policy": document.to_string()})
}

fn function(name: &str, handler: &str, timeout: u64, vars: Value) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("function_name".into(), json!(tf_literal(name)));
    r.insert(
        "role".into(),
        json!(format!("${{aws_iam_role.{handler}.arn}}")),
    );
    r.insert("runtime".into(), json!(runtime::LAMBDA_RUNTIME));
    r.insert(
        "architectures".into(),
        json!([runtime::LAMBDA_ARCHITECTURE]),
    );
    r.insert("handler".into(), json!(handler));
    r.insert("filename".into(), json!("${var.lambda_zip}"));
    r.insert(
        "source_code_hash".into(),
        json!("${filebase64sha256(var.lambda_zip)}"),
    );
    r.insert("memory_size".into(), json!(128));
    r.insert("timeout".into(), json!(timeout));
    r.insert("environment".into(), json!({ "variables": vars }));
    r.insert(
        "depends_on".into(),
        json!([
            format!("aws_cloudwatch_log_group.{handler}"),
            format!("aws_iam_role_policy.{handler}")
        ]),
    );
    r
}

fn log_group(name: &str) -> Value {
    monitoring::log_group(&tf_literal(name))
}

/// The wake-path module, shared by every release of the configuration.
pub fn wake_path(out: &Compiled) -> Value {
    let f = Facts::new(out);
    let mut locals = Map::new();
    locals.insert(
        "machine_arn_prefix".into(),
        json!(format!("{}stateMachine:", tf::arn_prefix("states"))),
    );
    locals.insert(
        "function_arn_prefix".into(),
        json!(format!("{}function:", tf::arn_prefix("lambda"))),
    );
    locals.insert(
        "execution_arn_prefix".into(),
        json!(format!("{}execution:", tf::arn_prefix("states"))),
    );
    locals.insert(
        "gateway_host".into(),
        json!("${var.gateway_function_arn != \"\"}"),
    );
    let mut variables = Map::new();
    variables.insert(
        "lambda_zip".into(),
        json!({"type": "string", "default": runtime::LAMBDA_ZIP, "description": "The functions' zip (scripts/lambda-package.sh builds it)"}),
    );
    variables.insert(
        "log_retention_in_days".into(),
        monitoring::retention_variable(),
    );
    variables.insert("alarm_topic_arn".into(), monitoring::topic_variable());
    variables.insert(
        "durable_functions".into(),
        json!({"type": "string", "default": "", "description": stack::DURABLE_FUNCTIONS_DESCRIPTION}),
    );

    let mut resources: Map<String, Value> = Map::new();
    let mut put = |ty: &str, name: &str, v: Value| {
        resources
            .entry(ty.to_string())
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .map(|o| o.insert(name.to_string(), v));
    };
    if let Some(group) = &f.machines_log_group {
        put("aws_cloudwatch_log_group", "machines", log_group(group));
    }
    let mut outputs = Map::new();
    if let (Some(queue), Some(dlq), Some(gateway)) =
        (&f.queue, f.dead_letter_queue(), f.relayed_gateway())
    {
        // The gateway's queue transport: the relay invokes the gateway with its role.
        variables.insert(
            "relay_subnet_ids".into(),
            json!({"type": "list(string)", "default": [], "description": "Subnets the relay runs in to reach TPF; empty for none (no VPC)"}),
        );
        variables.insert(
            "relay_security_group_ids".into(),
            json!({"type": "list(string)", "default": [], "description": "Security groups of the relay, with relay_subnet_ids"}),
        );
        put(
            "aws_sqs_queue",
            "action_dead_letters",
            json!({"name": tf_literal(&dlq), "message_retention_seconds": stack::DLQ_RETENTION_SECONDS, "sqs_managed_sse_enabled": true}),
        );
        put(
            "aws_sqs_queue",
            "action",
            json!({
                "name": tf_literal(queue),
                "visibility_timeout_seconds": stack::ACTION_QUEUE_VISIBILITY_SECONDS,
                "sqs_managed_sse_enabled": true,
                "redrive_policy": format!(
                    "${{jsonencode({{deadLetterTargetArn = aws_sqs_queue.action_dead_letters.arn, maxReceiveCount = {}}})}}",
                    stack::ACTION_QUEUE_MAX_RECEIVES
                )
            }),
        );
        put(
            "aws_cloudwatch_log_group",
            "relay",
            log_group(&format!("/aws/lambda/{}", f.relay_function())),
        );
        put(
            "aws_iam_role",
            "relay",
            json!({"assume_role_policy": tf_json(&trust("lambda.amazonaws.com"))}),
        );
        put(
            "aws_iam_role_policy",
            "relay",
            role_policy(&f, "relay", &stack::gateway_relay_statements()),
        );
        put(
            "aws_iam_role_policy_attachment",
            "relay_vpc",
            json!({
                "count": "${length(var.relay_subnet_ids) > 0 ? 1 : 0}",
                "role": "${aws_iam_role.relay.name}",
                "policy_arn": format!("arn:{}:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole", tf::PARTITION)
            }),
        );
        let mut relay = function(
            &f.relay_function(),
            "relay",
            stack::RELAY_TIMEOUT_SECONDS,
            json!({
                env::GATEWAY_FUNCTION_ARN: tf_literal(gateway),
                env::ACTION_TIMEOUT_SECONDS: stack::RELAY_ACTION_TIMEOUT_SECONDS.to_string()
            }),
        );
        relay.insert(
            "dynamic".into(),
            json!({"vpc_config": {
                "for_each": "${length(var.relay_subnet_ids) > 0 ? [1] : []}",
                "content": {"subnet_ids": "${var.relay_subnet_ids}", "security_group_ids": "${var.relay_security_group_ids}"}
            }}),
        );
        put("aws_lambda_function", "relay", Value::Object(relay));
        put(
            "aws_lambda_event_source_mapping",
            "action_queue",
            json!({
                "event_source_arn": "${aws_sqs_queue.action.arn}",
                "function_name": "${aws_lambda_function.relay.arn}",
                "batch_size": stack::QUEUE_BATCH_SIZE,
                "function_response_types": ["ReportBatchItemFailures"]
            }),
        );
        outputs.insert(
            "relay_function_arn".into(),
            json!({"value": "${aws_lambda_function.relay.arn}"}),
        );
        outputs.insert(
            "action_queue_url".into(),
            json!({"value": "${aws_sqs_queue.action.url}"}),
        );
        outputs.insert(
            "action_dead_letter_queue_url".into(),
            json!({"value": "${aws_sqs_queue.action_dead_letters.url}"}),
        );
    }
    gateway_host(&f, &mut variables, &mut put, &mut outputs);
    for a in stack::wake_path_alarms(f.queue.is_some()) {
        let target = match a.target {
            Res::DeadLetterQueue => "aws_sqs_queue.action_dead_letters.name",
            _ => "aws_lambda_function.relay.function_name",
        };
        put("aws_cloudwatch_metric_alarm", a.tf_name, alarm(&a, target));
    }
    json!({
        "//": tf_literal(&wake_path_description(out)),
        "terraform": header(),
        "variable": variables,
        "data": tf::account_data(),
        "locals": locals,
        "resource": resources,
        "output": outputs
    })
}
