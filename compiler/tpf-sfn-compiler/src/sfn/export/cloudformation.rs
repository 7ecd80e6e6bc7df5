//! The CloudFormation flavour of both stacks.

use serde_json::{json, Map, Value};

use super::stack::{self, env, Alarm, Facts, Res, Statement};
use super::{description, logging_on, policy, wake_path_description, DRIVER_OUTPUT_DESCRIPTION};
use crate::lowering::iam::{trust, trust_in_account};
use crate::lowering::runtime;
use crate::sfn::files::{DRIVER_FILE, DRIVER_POLICY_FILE};
use crate::sfn::manifest::MachineInfo;
use crate::sfn::Compiled;
/// The providers' status-change event names the reconciler reads.
use tpf_sfn_wakeup::reconcile::event as tpf_sfn_wakeup_event;

fn sub(s: &str) -> Value {
    json!({ "Fn::Sub": s })
}

fn machines_arn(pattern: &str) -> Value {
    sub(&format!(
        "arn:${{AWS::Partition}}:states:${{AWS::Region}}:${{AWS::AccountId}}:stateMachine:{pattern}"
    ))
}

use crate::lowering::monitoring::cloudformation as monitoring;

fn alarm(a: &Alarm, target: Value) -> Value {
    monitoring::alarm(a, target)
}

/// The release stack: the gateway driver, its role, its alarms.
pub fn release(out: &Compiled) -> Value {
    let m = &out.manifest;
    // The compiled policy already grants log delivery when logging is on (`iam.rs`).
    let role = |policy_name: &str, file: &str| {
        let policies =
            vec![json!({"PolicyName": policy_name, "PolicyDocument": policy(out, file)})];
        json!({
            "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": trust_in_account("states.amazonaws.com", json!({"Ref": "AWS::AccountId"})),
                "Policies": policies
            }
        })
    };
    let machine = |info: &MachineInfo, file: &str, role: &str| {
        let mut props = Map::new();
        props.insert("StateMachineName".into(), json!(info.name));
        props.insert("StateMachineType".into(), json!("STANDARD"));
        props.insert(
            "DefinitionString".into(),
            json!(super::file_text(out, file)),
        );
        props.insert("RoleArn".into(), json!({"Fn::GetAtt": [role, "Arn"]}));
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
                    "Level": serde_json::to_value(m.logging.level).unwrap_or(Value::Null),
                    "IncludeExecutionData": m.logging.include_execution_data,
                    "Destinations": [{"CloudWatchLogsLogGroup": {"LogGroupArn": m.logging.log_group_arn}}]
                }),
            );
        }
        props.insert("TracingConfiguration".into(), json!({"Enabled": m.tracing}));
        json!({"Type": "AWS::StepFunctions::StateMachine", "Properties": props})
    };
    // No sweeper machine: the driver SWEEPs TPF itself between polls and when a park times
    // out, or the wake-path stack's schedule does (`sweeper.mode = "schedule"`).
    let mut resources = Map::new();
    resources.insert("DriverRole".into(), role("driver", DRIVER_POLICY_FILE));
    resources.insert(
        "Driver".into(),
        machine(&m.machines.driver, DRIVER_FILE, "DriverRole"),
    );
    let mut outputs = Map::new();
    outputs.insert(
        "DriverArn".into(),
        json!({"Description": DRIVER_OUTPUT_DESCRIPTION, "Value": {"Ref": "Driver"}}),
    );
    outputs.insert(
        "DriverRoleArn".into(),
        json!({"Value": {"Fn::GetAtt": ["DriverRole", "Arn"]}}),
    );
    for a in stack::release_alarms() {
        resources.insert(a.id.into(), alarm(&a, json!({"Ref": "Driver"})));
    }
    json!({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": description(out, &super::release_contents("stack")),
        "Parameters": {monitoring::TOPIC_PARAMETER: monitoring::topic_parameter()},
        "Conditions": {monitoring::TOPIC_CONDITION: monitoring::topic_condition()},
        "Resources": resources,
        "Outputs": outputs
    })
}

/// A [`Res`] as this template refers to it.
fn resolve(f: &Facts, r: &Res) -> Value {
    match r {
        Res::ActionQueue => json!({"Fn::GetAtt": ["ActionQueue", "Arn"]}),
        Res::DeadLetterQueue => json!({"Fn::GetAtt": ["ActionDeadLetterQueue", "Arn"]}),
        Res::FunctionLogs(which) => json!({"Fn::Sub": [
            "${Group}:*",
            {"Group": {"Fn::GetAtt": [log_group_id(which), "Arn"]}}
        ]}),
        Res::Machines(role) => machines_arn(&f.machine_pattern(role)),
        Res::DurableFunctions => sub(&format!(
            "arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{}",
            f.durable_function_pattern()
        )),
        Res::DriverExecutions => sub(&format!(
            "arn:${{AWS::Partition}}:states:${{AWS::Region}}:${{AWS::AccountId}}:execution:{}:*",
            f.machine_pattern("driver")
        )),
        Res::AwaitInteractionStream => json!({"Ref": "AwaitInteractionStreamArn"}),
        Res::BindingTable => json!({"Fn::GetAtt": ["CallbackBindingTable", "Arn"]}),
        Res::BindingTableIndexes => json!({"Fn::Sub": [
            "${Table}/index/*",
            {"Table": {"Fn::GetAtt": ["CallbackBindingTable", "Arn"]}}
        ]}),
        Res::BindingStream => json!({"Fn::GetAtt": ["CallbackBindingTable", "StreamArn"]}),
        Res::GatewayFunction => json!({"Ref": "GatewayFunctionArn"}),
        Res::RelayedGateway => json!(f.relayed_gateway().unwrap_or_default()),
        Res::GatewayFailures => json!({"Fn::GetAtt": ["GatewayStreamFailures", "Arn"]}),
        Res::Everything => json!("*"),
    }
    .clone()
}

fn log_group_id(which: &str) -> &'static str {
    match which {
        "relay" => "RelayLogGroup",
        "gateway-wakeup" => "GatewayWakeupLogGroup",
        "gateway-reconciler" => "GatewayReconcilerLogGroup",
        "gateway-starter" => "GatewayStarterLogGroup",
        _ => "RelayLogGroup",
    }
}

/// The gateway host's logical ids: function, role, log group.
fn gateway_ids(which: &str) -> (&'static str, &'static str, &'static str) {
    match which {
        "gateway-wakeup" => (
            "GatewayWakeup",
            "GatewayWakeupRole",
            "GatewayWakeupLogGroup",
        ),
        "gateway-reconciler" => (
            "GatewayReconciler",
            "GatewayReconcilerRole",
            "GatewayReconcilerLogGroup",
        ),
        _ => (
            "GatewayStarter",
            "GatewayStarterRole",
            "GatewayStarterLogGroup",
        ),
    }
}

/// TPF's gateway host in the wake-path stack, created when `GatewayFunctionArn` is set: TPF's
/// callback-binding table, the wake-up on TPF's await-interaction stream and the binding
/// table's, the reconciler on the drivers' status changes, and the starter.
fn gateway_host(
    f: &Facts,
    parameters: &mut Map<String, Value>,
    conditions: &mut Map<String, Value>,
    resources: &mut Map<String, Value>,
    outputs: &mut Map<String, Value>,
) {
    use tpf_wire::gateway::binding::{attr, PROVIDER_EXECUTION_INDEX};
    const IF: &str = "HasGateway";
    parameters.insert(
        "GatewayFunctionArn".into(),
        json!({
            "Type": "String",
            "Default": f.gateway_default(),
            "AllowedPattern": stack::GATEWAY_FUNCTION_PATTERN,
            "Description": stack::GATEWAY_FUNCTION_DESCRIPTION
        }),
    );
    parameters.insert(
        "AwaitInteractionStreamArn".into(),
        // No default: a default is what cfn-lint checks the stream's references with, and an
        // empty one is no ARN. Without the gateway, pass an empty value.
        json!({
            "Type": "String",
            "AllowedPattern": stack::AWAIT_STREAM_PATTERN,
            "Description": stack::AWAIT_STREAM_DESCRIPTION
        }),
    );
    conditions.insert(
        IF.into(),
        json!({"Fn::Not": [{"Fn::Equals": [{"Ref": "GatewayFunctionArn"}, ""]}]}),
    );
    let mut add = |id: &str, mut resource: Value| {
        resource["Condition"] = json!(IF);
        resources.insert(id.into(), resource);
    };
    add(
        "CallbackBindingTable",
        // TPF's template: the rows are the only record of which driver owns which callback, so
        // the table outlives the stack and is recoverable.
        json!({
            "Type": "AWS::DynamoDB::Table",
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": {
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [
                    {"AttributeName": attr::PK, "AttributeType": "S"},
                    {"AttributeName": attr::SK, "AttributeType": "S"},
                    {"AttributeName": attr::PROVIDER_EXECUTION_ARN, "AttributeType": "S"}
                ],
                "KeySchema": [
                    {"AttributeName": attr::PK, "KeyType": "HASH"},
                    {"AttributeName": attr::SK, "KeyType": "RANGE"}
                ],
                "GlobalSecondaryIndexes": [{
                    "IndexName": PROVIDER_EXECUTION_INDEX,
                    "KeySchema": [{"AttributeName": attr::PROVIDER_EXECUTION_ARN, "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"}
                }],
                "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
                "TimeToLiveSpecification": {"AttributeName": attr::EXPIRES_AT_EPOCH_S, "Enabled": true},
                "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true},
                "SSESpecification": {"SSEEnabled": true}
            }
        }),
    );
    add(
        "GatewayStreamFailures",
        json!({
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "QueueName": f.gateway_failures_queue(),
                "MessageRetentionPeriod": stack::DLQ_RETENTION_SECONDS,
                "SqsManagedSseEnabled": true
            }
        }),
    );
    let env = json!({
        env::GATEWAY_FUNCTION: {"Ref": "GatewayFunctionArn"},
        env::BINDING_TABLE: {"Ref": "CallbackBindingTable"},
        env::MACHINE_ARN_PREFIX: sub("arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:"),
        env::NAME_PREFIX: f.prefix,
        env::DURABLE_FUNCTIONS: {"Ref": "DurableFunctions"}
    });
    for stack::HostFunction {
        which,
        handler,
        statements,
        timeout,
    } in stack::gateway_host_functions()
    {
        let (function_id, role_id, log_id) = gateway_ids(which);
        let name = f.gateway_function(which.trim_start_matches("gateway-"));
        add(log_id, log_group(&format!("/aws/lambda/{name}")));
        add(
            role_id,
            json!({
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": trust("lambda.amazonaws.com"),
                    "Policies": [role_policy(f, which, &statements)]
                }
            }),
        );
        // The starter reads only where the drivers are.
        let vars = if handler == stack::handler::STARTER {
            json!({
                env::MACHINE_ARN_PREFIX: env[env::MACHINE_ARN_PREFIX],
                env::NAME_PREFIX: f.prefix,
                env::DURABLE_FUNCTIONS: {"Ref": "DurableFunctions"}
            })
        } else {
            env.clone()
        };
        let mut props = function(&name, handler, role_id, timeout, vars, log_id);
        if handler == stack::handler::RECONCILER {
            props.insert(
                "ReservedConcurrentExecutions".into(),
                json!(stack::GATEWAY_RECONCILER_CONCURRENCY),
            );
        }
        add(
            function_id,
            json!({"Type": "AWS::Lambda::Function", "DependsOn": [log_id], "Properties": props}),
        );
    }
    let stream_mapping = |source: Value| {
        json!({
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": source,
                "FunctionName": {"Ref": "GatewayWakeup"},
                "StartingPosition": "TRIM_HORIZON",
                "BatchSize": stack::GATEWAY_STREAM_BATCH_SIZE,
                "BisectBatchOnFunctionError": true,
                "MaximumRecordAgeInSeconds": stack::STREAM_RECORD_MAX_AGE_SECONDS,
                "MaximumRetryAttempts": stack::GATEWAY_STREAM_RETRIES,
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
                "DestinationConfig": {"OnFailure": {"Destination": {"Fn::GetAtt": ["GatewayStreamFailures", "Arn"]}}}
            }
        })
    };
    add(
        "AwaitInteractionStreamMapping",
        stream_mapping(json!({"Ref": "AwaitInteractionStreamArn"})),
    );
    add(
        "CallbackBindingStreamMapping",
        stream_mapping(json!({"Fn::GetAtt": ["CallbackBindingTable", "StreamArn"]})),
    );
    // The drivers' status changes: Step Functions' for this configuration's driver machines
    // (only the statuses of an ended driver, the only ones the reconciler acts on), Lambda
    // durable functions' for its durable drivers (TPF's rule, which filters no status).
    let rules = [
        (
            "DriverStatusChangeRule",
            "DriverStatusChangePermission",
            json!({
                "source": [stack::SFN_STATUS_SOURCE],
                "detail-type": [tpf_sfn_wakeup_event::SFN_DETAIL_TYPE],
                "detail": {
                    "status": stack::ENDED_DRIVER_STATUSES,
                    "stateMachineArn": [{"wildcard": sub(&format!(
                        "arn:${{AWS::Partition}}:states:${{AWS::Region}}:${{AWS::AccountId}}:stateMachine:{}",
                        f.machine_pattern("driver")
                    ))}]
                }
            }),
        ),
        (
            "DurableDriverStatusChangeRule",
            "DurableDriverStatusChangePermission",
            json!({
                "source": [stack::DURABLE_STATUS_SOURCE],
                "detail-type": [tpf_sfn_wakeup_event::DURABLE_DETAIL_TYPE],
                "detail": {
                    "functionArn": [{"wildcard": sub(&format!(
                        "arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:function:{}",
                        f.durable_function_pattern()
                    ))}]
                }
            }),
        ),
    ];
    for (rule, permission, pattern) in rules {
        add(
            rule,
            json!({
                "Type": "AWS::Events::Rule",
                "Properties": {
                    "EventPattern": pattern,
                    "State": "ENABLED",
                    "Targets": [{"Id": "reconciler", "Arn": {"Fn::GetAtt": ["GatewayReconciler", "Arn"]}}]
                }
            }),
        );
        add(
            permission,
            json!({
                "Type": "AWS::Lambda::Permission",
                "Properties": {
                    "Action": "lambda:InvokeFunction",
                    "FunctionName": {"Ref": "GatewayReconciler"},
                    "Principal": "events.amazonaws.com",
                    "SourceArn": {"Fn::GetAtt": [rule, "Arn"]}
                }
            }),
        );
    }
    if let Some(sweep) = f.scheduled_sweep() {
        add(
            "GatewaySweepScheduleRole",
            json!({
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": trust_in_account("scheduler.amazonaws.com", json!({"Ref": "AWS::AccountId"})),
                    "Policies": [role_policy(f, "gateway-sweep", &stack::sweep_schedule_statements())]
                }
            }),
        );
        add(
            "GatewaySweepSchedule",
            json!({
                "Type": "AWS::Scheduler::Schedule",
                "Properties": {
                    "Name": f.sweep_schedule_name(),
                    "Description": stack::SWEEP_SCHEDULE_DESCRIPTION,
                    "ScheduleExpression": sweep.expression,
                    "FlexibleTimeWindow": {"Mode": "OFF"},
                    "State": "ENABLED",
                    "Target": {
                        "Arn": {"Ref": "GatewayFunctionArn"},
                        "RoleArn": {"Fn::GetAtt": ["GatewaySweepScheduleRole", "Arn"]},
                        "Input": stack::sweep_schedule_input(),
                        "RetryPolicy": {
                            "MaximumRetryAttempts": stack::SWEEP_SCHEDULE_RETRIES,
                            "MaximumEventAgeInSeconds": stack::sweep_schedule_event_age(sweep)
                        }
                    }
                }
            }),
        );
    }
    for a in stack::gateway_alarms() {
        let target = match a.target {
            Res::GatewayFailures => json!({"Fn::GetAtt": ["GatewayStreamFailures", "QueueName"]}),
            _ => json!({"Ref": "GatewayWakeup"}),
        };
        add(a.id, alarm(&a, target));
    }
    for (id, value) in [
        (
            "CallbackBindingTableName",
            json!({"Ref": "CallbackBindingTable"}),
        ),
        (
            "CallbackBindingTableStreamArn",
            json!({"Fn::GetAtt": ["CallbackBindingTable", "StreamArn"]}),
        ),
        (
            "GatewayStarterArn",
            json!({"Fn::GetAtt": ["GatewayStarter", "Arn"]}),
        ),
        (
            "GatewayStreamFailuresQueueUrl",
            json!({"Ref": "GatewayStreamFailures"}),
        ),
    ] {
        outputs.insert(id.into(), json!({"Condition": IF, "Value": value}));
    }
}

fn role_policy(f: &Facts, name: &str, statements: &[Statement]) -> Value {
    json!({
        "PolicyName": name,
        "PolicyDocument": {
            "Version": "2012-10-17",
            "Statement": statements.iter().map(|s| json!({
                "Sid": s.sid,
                "Effect": "Allow",
                "Action": s.actions,
                "Resource": s.resources.iter().map(|r| resolve(f, r)).collect::<Vec<_>>()
            })).collect::<Vec<_>>()
        }
    })
}

fn log_group(name: &str) -> Value {
    json!({
        "Type": "AWS::Logs::LogGroup",
        "Properties": {"LogGroupName": name, "RetentionInDays": {"Ref": monitoring::RETENTION_PARAMETER}}
    })
}

fn function(
    name: &str,
    handler: &str,
    role: &str,
    timeout: u64,
    vars: Value,
    log: &str,
) -> Map<String, Value> {
    let mut props = Map::new();
    props.insert("FunctionName".into(), json!(name));
    props.insert("Runtime".into(), json!(runtime::LAMBDA_RUNTIME));
    props.insert(
        "Architectures".into(),
        json!([runtime::LAMBDA_ARCHITECTURE]),
    );
    props.insert("Handler".into(), json!(handler));
    props.insert(
        "Code".into(),
        json!({"S3Bucket": {"Ref": "CodeS3Bucket"}, "S3Key": {"Ref": "CodeS3Key"}}),
    );
    props.insert("Role".into(), json!({"Fn::GetAtt": [role, "Arn"]}));
    props.insert("MemorySize".into(), json!(128));
    props.insert("Timeout".into(), json!(timeout));
    props.insert("Environment".into(), json!({ "Variables": vars }));
    let _ = log;
    props
}

/// The wake-path stack, shared by every release of the configuration.
pub fn wake_path(out: &Compiled) -> Value {
    let f = Facts::new(out);
    let mut parameters = Map::new();
    parameters.insert(
        "DurableFunctions".into(),
        json!({
            "Type": "String",
            "Default": "",
            "Description": stack::DURABLE_FUNCTIONS_DESCRIPTION
        }),
    );
    parameters.insert(
        "CodeS3Bucket".into(),
        json!({"Type": "String", "MinLength": 3, "Description": format!("S3 bucket holding {} (scripts/lambda-package.sh builds it)", runtime::LAMBDA_ZIP)}),
    );
    parameters.insert(
        "CodeS3Key".into(),
        json!({"Type": "String", "Default": runtime::LAMBDA_ZIP, "Description": "Key of the functions' zip in CodeS3Bucket"}),
    );
    let mut conditions = Map::new();
    monitoring::declare(&mut parameters, &mut conditions);

    let mut resources = Map::new();
    if let Some(machines_log_group) = &f.machines_log_group {
        resources.insert("MachinesLogGroup".into(), log_group(machines_log_group));
    }

    let mut outputs = Map::new();
    if let (Some(queue), Some(dlq), Some(gateway)) =
        (&f.queue, f.dead_letter_queue(), f.relayed_gateway())
    {
        // The gateway's queue transport: the relay invokes the gateway with its role.
        parameters.insert(
            "RelaySubnetIds".into(),
            json!({"Type": "CommaDelimitedList", "Default": "", "Description": "Subnets the relay runs in to reach TPF; empty for none (no VPC)"}),
        );
        parameters.insert(
            "RelaySecurityGroupIds".into(),
            json!({"Type": "CommaDelimitedList", "Default": "", "Description": "Security groups of the relay, with RelaySubnetIds"}),
        );
        conditions.insert(
            "RelayInVpc".into(),
            json!({"Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": "RelaySubnetIds"}]}, ""]}]}),
        );
        resources.insert(
            "ActionDeadLetterQueue".into(),
            json!({
                "Type": "AWS::SQS::Queue",
                "Properties": {"QueueName": dlq, "MessageRetentionPeriod": stack::DLQ_RETENTION_SECONDS, "SqsManagedSseEnabled": true}
            }),
        );
        resources.insert(
            "ActionQueue".into(),
            json!({
                "Type": "AWS::SQS::Queue",
                "Properties": {
                    "QueueName": queue,
                    "VisibilityTimeout": stack::ACTION_QUEUE_VISIBILITY_SECONDS,
                    "SqsManagedSseEnabled": true,
                    "RedrivePolicy": {
                        "deadLetterTargetArn": {"Fn::GetAtt": ["ActionDeadLetterQueue", "Arn"]},
                        "maxReceiveCount": stack::ACTION_QUEUE_MAX_RECEIVES
                    }
                }
            }),
        );
        resources.insert(
            "RelayLogGroup".into(),
            log_group(&format!("/aws/lambda/{}", f.relay_function())),
        );
        let relay_policy = role_policy(&f, "relay", &stack::gateway_relay_statements());
        resources.insert(
            "RelayRole".into(),
            json!({
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": trust("lambda.amazonaws.com"),
                    "Policies": [relay_policy],
                    "ManagedPolicyArns": {"Fn::If": [
                        "RelayInVpc",
                        [sub("arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole")],
                        {"Ref": "AWS::NoValue"}
                    ]}
                }
            }),
        );
        let relay_env = json!({
            env::GATEWAY_FUNCTION_ARN: gateway,
            env::ACTION_TIMEOUT_SECONDS: stack::RELAY_ACTION_TIMEOUT_SECONDS.to_string()
        });
        let mut relay = function(
            &f.relay_function(),
            "relay",
            "RelayRole",
            stack::RELAY_TIMEOUT_SECONDS,
            relay_env,
            "RelayLogGroup",
        );
        relay.insert(
            "VpcConfig".into(),
            json!({"Fn::If": [
                "RelayInVpc",
                {"SubnetIds": {"Ref": "RelaySubnetIds"}, "SecurityGroupIds": {"Ref": "RelaySecurityGroupIds"}},
                {"Ref": "AWS::NoValue"}
            ]}),
        );
        resources.insert(
            "Relay".into(),
            json!({"Type": "AWS::Lambda::Function", "DependsOn": ["RelayLogGroup"], "Properties": relay}),
        );
        resources.insert(
            "ActionQueueMapping".into(),
            json!({
                "Type": "AWS::Lambda::EventSourceMapping",
                "Properties": {
                    "EventSourceArn": {"Fn::GetAtt": ["ActionQueue", "Arn"]},
                    "FunctionName": {"Ref": "Relay"},
                    "BatchSize": stack::QUEUE_BATCH_SIZE,
                    "FunctionResponseTypes": ["ReportBatchItemFailures"]
                }
            }),
        );
        outputs.insert(
            "RelayFunctionArn".into(),
            json!({"Value": {"Fn::GetAtt": ["Relay", "Arn"]}}),
        );
        outputs.insert(
            "ActionQueueUrl".into(),
            json!({"Description": "The gateway binding's queue-url (queue transport) the drivers send to", "Value": {"Ref": "ActionQueue"}}),
        );
        outputs.insert(
            "ActionDeadLetterQueueUrl".into(),
            json!({"Value": {"Ref": "ActionDeadLetterQueue"}}),
        );
    }
    gateway_host(
        &f,
        &mut parameters,
        &mut conditions,
        &mut resources,
        &mut outputs,
    );
    for a in stack::wake_path_alarms(f.queue.is_some()) {
        let target = match a.target {
            Res::DeadLetterQueue => json!({"Fn::GetAtt": ["ActionDeadLetterQueue", "QueueName"]}),
            _ => json!({"Ref": "Relay"}),
        };
        resources.insert(a.id.into(), alarm(&a, target));
    }
    json!({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": wake_path_description(out),
        "Parameters": parameters,
        "Conditions": conditions,
        "Resources": resources,
        "Outputs": outputs
    })
}
