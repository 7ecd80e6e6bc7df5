//! `compile --emit cloudformation|terraform`: both stacks (the release's, the shared wake path's)
//! parse, hold what the wake path needs, every reference resolves, placeholders are refused,
//! and they match their snapshots for the restaurant sample. cfn-lint and moto's CloudFormation
//! check the same files again in the test command (scripts/iac-check.sh).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use tpf_sfn_compiler::sfn::export::{unresolved_cloudformation_refs, unresolved_terraform_refs};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn tpf_sfn(args: &[&str]) -> Output {
    support::cli().args(args).output().expect("run tpf-sfn")
}

/// Compiles the restaurant sample with `config` (an `examples/aws/` file, or none).
fn compile(out: &Path, config: Option<&str>, extra: &[&str]) -> Output {
    let c = examples().join("contracts/restaurant-approval.pipeline-contract.json");
    let r = examples().join("contracts/restaurant-approval.pipeline-release.json");
    let cfg = config.map(|c| examples().join("aws").join(c));
    let mut args = vec![
        "compile",
        c.to_str().unwrap(),
        "--release",
        r.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    if let Some(cfg) = &cfg {
        args.extend(["--config", cfg.to_str().unwrap()]);
    }
    args.extend(extra);
    tpf_sfn(&args)
}

/// Compiles the restaurant sample with the config file `config` and `extra`, emitting both
/// flavours.
fn compile_both(out: &Path, config: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--config",
        config.to_str().unwrap(),
        "--emit",
        "cloudformation",
        "--emit",
        "terraform",
    ];
    args.extend(extra);
    compile(out, None, &args)
}

fn read(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let value = serde_json::from_str(&text).expect("export is JSON");
    (text, value)
}

fn types(template: &Value) -> Vec<(String, String)> {
    template["Resources"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, r)| (k.clone(), r["Type"].as_str().unwrap().to_owned()))
        .collect()
}

fn has(template: &Value, logical: &str, ty: &str) -> bool {
    template["Resources"][logical]["Type"] == ty
}

/// An Action API v1 binding is neither compiled nor exported, on either backend: TPF does
/// not serve it and its wake path is retired. Refused with the compiler's code, nothing
/// written; the gateway binding on the same config is exported (the refusal is the binding's,
/// not the config's).
#[test]
fn an_action_api_v1_binding_is_not_exported() {
    for (binding, backend) in [
        ("http", "step-functions"),
        ("lambda", "step-functions"),
        ("queue", "step-functions"),
        ("http", "lambda-durable"),
        ("lambda", "lambda-durable"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = compile(
            &out,
            Some("gateway-queue.tpf-sfn.toml"),
            &[
                "--binding",
                binding,
                "--backend",
                backend,
                "--emit",
                "cloudformation",
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{binding} {backend}: {err}");
        assert!(
            err.contains("error[ACTION_API_V1_RETIRED]"),
            "{binding} {backend}: {err}"
        );
        assert!(err.contains("gateway"), "the hint names the way: {err}");
        assert!(!out.exists(), "nothing written: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway-queue.tpf-sfn.toml"),
        &["--emit", "cloudformation"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The gateway driver that invokes the gateway itself needs no relay; no wake-path stack holds
/// Action API v1's bridge or wakeup table any more.
#[test]
fn a_lambda_transport_wake_path_has_no_relay_and_no_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway.tpf-sfn.toml"),
        &["--emit", "cloudformation"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, cf) = read(&dir.path().join("wake-path/cloudformation.json"));
    for gone in ["Bridge", "WakeupTable", "BridgeFailures", "Relay"] {
        assert!(cf["Resources"][gone].is_null(), "{gone}");
    }
    assert!(cf["Parameters"]["ActionUrl"].is_null());
    assert!(cf["Parameters"]["ExecutionTableStreamArn"].is_null());
    assert!(has(&cf, "GatewayWakeup", "AWS::Lambda::Function"));
    assert!(unresolved_cloudformation_refs(&cf).is_empty());
}

#[test]
fn terraform_exports_pin_the_provider_and_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway-queue.tpf-sfn.toml"),
        &["--emit", "terraform"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, tf) = read(&dir.path().join("main.tf.json"));
    let (wake_text, wake) = read(&dir.path().join("wake-path/main.tf.json"));
    for module in [&tf, &wake] {
        let aws = &module["terraform"]["required_providers"]["aws"];
        assert_eq!(aws["source"], "hashicorp/aws");
        assert_eq!(
            aws["version"], ">= 4.41.0",
            "the provider that added aws_scheduler_schedule"
        );
        assert!(
            unresolved_terraform_refs(module).is_empty(),
            "{:?}",
            unresolved_terraform_refs(module)
        );
    }
    let kinds: Vec<&String> = tf["resource"].as_object().unwrap().keys().collect();
    assert_eq!(
        kinds,
        [
            "aws_iam_role",
            "aws_iam_role_policy",
            "aws_sfn_state_machine",
            "aws_cloudwatch_metric_alarm"
        ],
        "the gateway driver alone: no sweeper, no schedule"
    );
    let driver = &tf["resource"]["aws_sfn_state_machine"]["driver"];
    assert_eq!(driver["role_arn"], "${aws_iam_role.driver.arn}");
    let definition = driver["definition"].as_str().unwrap();
    assert!(!definition.contains("${") || definition.contains("$${"));
    // The same wake path as the CloudFormation flavour.
    let res = &wake["resource"];
    for (ty, name) in [
        ("aws_lambda_function", "relay"),
        ("aws_lambda_event_source_mapping", "action_queue"),
        ("aws_sqs_queue", "action"),
        ("aws_sqs_queue", "action_dead_letters"),
        ("aws_cloudwatch_log_group", "relay"),
        ("aws_cloudwatch_metric_alarm", "action_dead_letters"),
    ] {
        assert!(res[ty][name].is_object(), "{ty}.{name}");
    }
    // No Action API v1 piece: no wakeup table, no bridge, no token for the relay (it invokes
    // the gateway with its role).
    assert!(res["aws_dynamodb_table"]["wakeup"].is_null());
    assert!(res["aws_lambda_function"]["bridge"].is_null());
    let relay_vars = &res["aws_lambda_function"]["relay"]["environment"]["variables"];
    assert!(
        relay_vars.get("TPF_SFN_ACTION_TOKEN_PARAMETER").is_none(),
        "{relay_vars}"
    );
    assert!(wake["variable"]["action_token_parameter"].is_null());
    // Broken references are caught by the same check.
    let mut broken = tf.clone();
    broken["resource"]["aws_sfn_state_machine"]["driver"]["role_arn"] =
        Value::String("${aws_iam_role.nope.arn}".into());
    assert_eq!(
        unresolved_terraform_refs(&broken),
        vec!["aws_iam_role.nope.arn"]
    );
    insta::assert_snapshot!("restaurant_terraform", text);
    insta::assert_snapshot!("restaurant_wake_path_terraform", wake_text);
}

#[test]
fn exports_refuse_placeholders_and_compile_warns_about_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = compile(&out, None, &["--emit", "cloudformation"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("error[EXPORT_PLACEHOLDER]"), "{err}");
    // The embedded default is the gateway binding: its two ARNs, each named with `--config`.
    assert!(err.contains("binding.gateway.function-arn"), "{err}");
    assert!(
        err.contains("binding.gateway.starter-function-arn"),
        "{err}"
    );
    assert!(err.contains("--config"), "{err}");
    assert!(!out.exists(), "nothing written: {err}");

    // A plain compile still works on the embedded default, and says what it baked in.
    let o = compile(&out, None, &["--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<&Value> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["code"])
        .collect();
    assert_eq!(
        codes,
        // The example release is August's form, which today's TPF refuses: said first.
        [
            "RELEASE_AUGUST_FORM",
            "CONFIG_PLACEHOLDER",
            "CONFIG_PLACEHOLDER"
        ],
        "{report}"
    );
    // With real values: no placeholder warning, only the release's form.
    let o = compile(&out, Some("gateway.tpf-sfn.toml"), &["--format", "json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<&Value> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["code"])
        .collect();
    assert_eq!(codes, ["RELEASE_AUGUST_FORM"], "{report}");
}

#[test]
fn check_covers_the_exports_and_both_can_be_emitted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Some("gateway-queue.tpf-sfn.toml");
    let both = ["--emit", "cloudformation", "--emit", "terraform"];
    assert!(compile(dir.path(), cfg, &both).status.success());
    for f in [
        "cloudformation.json",
        "main.tf.json",
        "wake-path/cloudformation.json",
        "wake-path/main.tf.json",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let mut check = both.to_vec();
    check.push("--check");
    let o = compile(dir.path(), cfg, &check);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // Without --emit, the exports are no longer produced: --check names them as left over.
    let o = compile(dir.path(), cfg, &["--check"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("drift: cloudformation.json is left from an earlier compile"),
        "{out}"
    );
    std::fs::write(dir.path().join("wake-path/main.tf.json"), "{}\n").unwrap();
    let o = compile(dir.path(), cfg, &check);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("drift: wake-path/main.tf.json"));
}

/// An output directory holds exactly what the last compile produced: a queue build with its
/// CloudFormation export, then an http build into the same directory, leaves no export behind
/// (and --check on the http build is then up to date).
#[test]
fn a_recompile_removes_the_exports_it_no_longer_produces() {
    let dir = tempfile::tempdir().unwrap();
    let queue = Some("gateway-queue.tpf-sfn.toml");
    let o = compile(dir.path(), queue, &["--emit", "cloudformation"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("cloudformation.json").exists());
    let http = Some("gateway.tpf-sfn.toml");
    let o = compile(dir.path(), http, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for stale in [
        "cloudformation.json",
        "wake-path/cloudformation.json",
        "wake-path",
    ] {
        assert!(!dir.path().join(stale).exists(), "{stale} survived");
    }
    let check = compile(dir.path(), http, &["--check"]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

/// A reader that goes away early (`| head -1`) ends the command quietly: no panic, the shell's
/// closed-pipe status.
#[test]
fn a_closed_stdout_ends_compile_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let c = examples().join("contracts/restaurant-approval.pipeline-contract.json");
    let cfg = examples().join("aws/gateway-queue.tpf-sfn.toml");
    let mut child = support::cli()
        .arg("compile")
        .arg(&c)
        .arg("--config")
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path())
        .args(["--emit", "cloudformation"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Closed before the compile prints its summary (it reads and compiles first).
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    // Short commands take SIGPIPE's default (the kernel ends them, as it ends `cat`); the
    // long-running ones catch the failed print and exit with the status a shell would show.
    use std::os::unix::process::ExitStatusExt;
    assert!(
        matches!(o.status.code(), Some(0 | 141)) || o.status.signal() == Some(libc::SIGPIPE),
        "{:?}: {err}",
        o.status
    );
}

/// The gateway host in the wake-path stack, both flavours: TPF's binding table, the three
/// functions with one least-privilege role each, the wake-up's two stream mappings with TPF's
/// settings, the reconciler's rules, all created only with a gateway.
/// `sweeper.mode = "schedule"`: the wake-path stack sweeps TPF once a period, in both flavours
/// alike: an EventBridge Scheduler schedule invoking the gateway's numbered version with a
/// `SWEEP` TPF's gateway reads, no retry (the next period is the retry), through a role that
/// only the scheduler of this account assumes and that may invoke the gateway alone. The
/// driver's summary and manifest say who sweeps; without the mode there is no schedule.
#[test]
fn the_scheduled_sweep_is_the_wake_path_stacks_schedule_in_both_flavours() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway-scheduled-sweep.tpf-sfn.toml"),
        &["--emit", "cloudformation", "--emit", "terraform"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("TPF is swept on the wake-path stack's schedule"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let (_, manifest) = read(&dir.path().join("manifest.json"));
    assert_eq!(
        manifest["binding"]["parameters"]["sweepSchedule"],
        "rate(1 minute)"
    );

    let (_, cf) = read(&dir.path().join("wake-path/cloudformation.json"));
    let schedule = &cf["Resources"]["GatewaySweepSchedule"];
    assert_eq!(schedule["Type"], "AWS::Scheduler::Schedule");
    assert_eq!(schedule["Condition"], "HasGateway");
    let p = &schedule["Properties"];
    assert_eq!(p["ScheduleExpression"], "rate(1 minute)");
    assert_eq!(
        p["Target"]["Arn"],
        serde_json::json!({"Ref": "GatewayFunctionArn"})
    );
    assert_eq!(p["Target"]["RetryPolicy"]["MaximumRetryAttempts"], 0);
    let input = p["Target"]["Input"].as_str().unwrap();
    let request = tpf_wire::gateway::ActionRequest::read(input).expect("TPF's gateway reads it");
    assert_eq!(request.operation, tpf_wire::gateway::Operation::Sweep);
    let role = &cf["Resources"]["GatewaySweepScheduleRole"]["Properties"];
    let trust = &role["AssumeRolePolicyDocument"]["Statement"][0];
    assert_eq!(trust["Principal"]["Service"], "scheduler.amazonaws.com");
    assert!(trust["Condition"]["StringEquals"]["aws:SourceAccount"].is_object());
    let statements = role["Policies"][0]["PolicyDocument"]["Statement"]
        .as_array()
        .unwrap();
    assert_eq!(statements.len(), 1);
    assert_eq!(
        statements[0]["Action"],
        serde_json::json!(["lambda:InvokeFunction"])
    );
    assert_eq!(
        statements[0]["Resource"],
        serde_json::json!([{"Ref": "GatewayFunctionArn"}])
    );

    let (_, tf) = read(&dir.path().join("wake-path/main.tf.json"));
    let t = &tf["resource"]["aws_scheduler_schedule"]["gateway_sweep"];
    assert_eq!(t["schedule_expression"], "rate(1 minute)");
    assert_eq!(t["target"]["arn"], "${var.gateway_function_arn}");
    assert_eq!(t["target"]["input"], input);
    assert_eq!(t["target"]["retry_policy"]["maximum_retry_attempts"], 0);
    assert!(tf["resource"]["aws_iam_role_policy"]["gateway_sweep_schedule"].is_object());

    // The same configuration without the mode: every driver sweeps, and no schedule exists.
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway.tpf-sfn.toml"),
        &["--emit", "cloudformation", "--emit", "terraform"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, cf) = read(&dir.path().join("wake-path/cloudformation.json"));
    assert!(cf["Resources"].get("GatewaySweepSchedule").is_none());
    let (_, tf) = read(&dir.path().join("wake-path/main.tf.json"));
    assert!(tf["resource"].get("aws_scheduler_schedule").is_none());
}

#[test]
fn the_wake_path_declares_the_gateway_host() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway-queue.tpf-sfn.toml"),
        &["--emit", "cloudformation", "--emit", "terraform"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, cf) = read(&dir.path().join("wake-path/cloudformation.json"));
    let r = &cf["Resources"];
    for (logical, ty) in [
        ("CallbackBindingTable", "AWS::DynamoDB::Table"),
        ("GatewayStreamFailures", "AWS::SQS::Queue"),
        ("GatewayWakeup", "AWS::Lambda::Function"),
        ("GatewayReconciler", "AWS::Lambda::Function"),
        ("GatewayStarter", "AWS::Lambda::Function"),
        ("GatewayWakeupRole", "AWS::IAM::Role"),
        ("GatewayReconcilerRole", "AWS::IAM::Role"),
        ("GatewayStarterRole", "AWS::IAM::Role"),
        (
            "AwaitInteractionStreamMapping",
            "AWS::Lambda::EventSourceMapping",
        ),
        (
            "CallbackBindingStreamMapping",
            "AWS::Lambda::EventSourceMapping",
        ),
        ("DriverStatusChangeRule", "AWS::Events::Rule"),
        ("DurableDriverStatusChangeRule", "AWS::Events::Rule"),
        ("DriverStatusChangePermission", "AWS::Lambda::Permission"),
        ("GatewayStreamFailuresAlarm", "AWS::CloudWatch::Alarm"),
    ] {
        assert!(has(&cf, logical, ty), "{logical} ({ty}): {:?}", types(&cf));
        assert_eq!(r[logical]["Condition"], "HasGateway", "{logical}");
    }
    // A gateway configuration's wake path creates its host without being told: the
    // parameter's default is the binding's numbered version (empty still means no host).
    assert_eq!(
        cf["Parameters"]["GatewayFunctionArn"]["Default"],
        "arn:aws:lambda:eu-west-1:210987654321:function:tpf-action-gateway:3"
    );
    let pattern = cf["Parameters"]["GatewayFunctionArn"]["AllowedPattern"]
        .as_str()
        .unwrap();
    let re = |s: &str| {
        // The pattern's two alternatives, checked the way CloudFormation anchors them.
        s.is_empty()
            || (s.starts_with("arn:aws:lambda:")
                && s.rsplit(':')
                    .next()
                    .unwrap()
                    .bytes()
                    .all(|b| b.is_ascii_digit()))
    };
    assert!(
        pattern.contains(":function:[A-Za-z0-9_-]+:[0-9]+$"),
        "{pattern}"
    );
    assert!(re(
        "arn:aws:lambda:eu-west-1:210987654321:function:tpf-action:7"
    ));
    assert!(!re(
        "arn:aws:lambda:eu-west-1:210987654321:function:tpf-action:live"
    ));

    let table = &r["CallbackBindingTable"];
    assert_eq!(table["DeletionPolicy"], "Retain");
    assert_eq!(table["UpdateReplacePolicy"], "Retain");
    let t = &table["Properties"];
    assert_eq!(
        t["KeySchema"],
        serde_json::json!([{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}])
    );
    assert_eq!(
        t["GlobalSecondaryIndexes"][0]["IndexName"],
        "provider-execution-index"
    );
    assert_eq!(
        t["GlobalSecondaryIndexes"][0]["KeySchema"],
        serde_json::json!([{"AttributeName": "provider_execution_arn", "KeyType": "HASH"}])
    );
    assert_eq!(
        t["GlobalSecondaryIndexes"][0]["Projection"]["ProjectionType"],
        "ALL"
    );
    assert_eq!(
        t["StreamSpecification"]["StreamViewType"],
        "NEW_AND_OLD_IMAGES"
    );
    assert_eq!(
        t["TimeToLiveSpecification"]["AttributeName"],
        "expires_at_epoch_s"
    );
    assert_eq!(
        t["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"],
        true
    );
    assert_eq!(t["SSESpecification"]["SSEEnabled"], true);

    // `tpf-sfn tables create` makes the same table (for a wake path that names its own, and
    // for the local loop): keys, index, stream, TTL, point-in-time recovery and encryption.
    let names = tpf_sfn::aws::tables::TableNames::default();
    let specs = tpf_sfn::aws::tables::specs(&names);
    let made = specs
        .iter()
        .find(|spec| spec.name == names.callback_binding)
        .expect("tables create makes the binding table");
    let key = |k: &tpf_sfn::aws::tables::KeyAttr| k.name;
    assert_eq!(
        (key(&made.hash), made.range.as_ref().map(key)),
        (
            t["KeySchema"][0]["AttributeName"].as_str().unwrap(),
            t["KeySchema"][1]["AttributeName"].as_str()
        )
    );
    assert_eq!(made.gsis.len(), 1);
    assert_eq!(
        (
            made.gsis[0].name,
            key(&made.gsis[0].hash),
            made.gsis[0].range
        ),
        (
            t["GlobalSecondaryIndexes"][0]["IndexName"]
                .as_str()
                .unwrap(),
            t["GlobalSecondaryIndexes"][0]["KeySchema"][0]["AttributeName"]
                .as_str()
                .unwrap(),
            None
        )
    );
    assert!(made.stream);
    assert_eq!(
        made.ttl_attribute,
        t["TimeToLiveSpecification"]["AttributeName"].as_str()
    );
    assert!(made.point_in_time_recovery && made.kms_encryption);

    for (mapping, source) in [
        (
            "AwaitInteractionStreamMapping",
            serde_json::json!({"Ref": "AwaitInteractionStreamArn"}),
        ),
        (
            "CallbackBindingStreamMapping",
            serde_json::json!({"Fn::GetAtt": ["CallbackBindingTable", "StreamArn"]}),
        ),
    ] {
        let p = &r[mapping]["Properties"];
        assert_eq!(p["EventSourceArn"], source);
        assert_eq!(
            p["FunctionName"],
            serde_json::json!({"Ref": "GatewayWakeup"})
        );
        assert_eq!(p["StartingPosition"], "TRIM_HORIZON");
        assert_eq!(p["BatchSize"], 10);
        assert_eq!(p["BisectBatchOnFunctionError"], true);
        assert_eq!(p["MaximumRecordAgeInSeconds"], 3600);
        assert_eq!(p["MaximumRetryAttempts"], 5);
        assert_eq!(p["FunctionResponseTypes"][0], "ReportBatchItemFailures");
        assert_eq!(
            p["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0],
            "GatewayStreamFailures"
        );
    }
    let rule = &r["DriverStatusChangeRule"]["Properties"];
    assert_eq!(rule["EventPattern"]["source"][0], "aws.states");
    assert_eq!(
        rule["EventPattern"]["detail-type"][0],
        "Step Functions Execution Status Change"
    );
    assert_eq!(
        r["DurableDriverStatusChangeRule"]["Properties"]["EventPattern"]["detail-type"][0],
        "Durable Execution Status Change"
    );
    assert_eq!(
        rule["Targets"][0]["Arn"]["Fn::GetAtt"][0],
        "GatewayReconciler"
    );
    assert_eq!(
        r["GatewayReconciler"]["Properties"]["ReservedConcurrentExecutions"],
        2
    );

    // Least privilege: each role's actions, and nothing of the others'.
    let actions = |role: &str| -> Vec<String> {
        r[role]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["Action"].as_array().unwrap().clone())
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    let wakeup = actions("GatewayWakeupRole");
    for a in [
        "dynamodb:GetRecords",
        "dynamodb:PutItem",
        "lambda:InvokeFunction",
        "states:SendTaskSuccess",
        "lambda:SendDurableExecutionCallbackSuccess",
        "states:GetExecutionHistory",
        "lambda:GetDurableExecutionHistory",
        "states:StartExecution",
        "sqs:SendMessage",
    ] {
        assert!(
            wakeup.iter().any(|w| w == a),
            "wake-up lacks {a}: {wakeup:?}"
        );
    }
    let reconciler = actions("GatewayReconcilerRole");
    assert!(reconciler.iter().any(|a| a == "states:DescribeExecution"));
    assert!(!reconciler
        .iter()
        .any(|a| a == "dynamodb:GetRecords" || a == "states:SendTaskSuccess"));
    let starter = actions("GatewayStarterRole");
    assert!(
        starter.iter().all(|a| [
            "states:StartExecution",
            "lambda:InvokeFunction",
            "logs:CreateLogStream",
            "logs:PutLogEvents"
        ]
        .contains(&a.as_str())),
        "{starter:?}"
    );
    let starter_env = &r["GatewayStarter"]["Properties"]["Environment"]["Variables"];
    assert!(starter_env["TPF_SFN_GATEWAY_FUNCTION"].is_null());
    assert_eq!(
        r["GatewayWakeup"]["Properties"]["Environment"]["Variables"]["TPF_SFN_GATEWAY_FUNCTION"],
        serde_json::json!({"Ref": "GatewayFunctionArn"})
    );
    assert_eq!(
        r["GatewayWakeup"]["Properties"]["Environment"]["Variables"]
            ["TPF_AWS_DURABLE_BINDING_TABLE"],
        serde_json::json!({"Ref": "CallbackBindingTable"})
    );
    assert!(
        unresolved_cloudformation_refs(&cf).is_empty(),
        "{:?}",
        unresolved_cloudformation_refs(&cf)
    );
    // The reference check bites: without the table, its references are unresolved.
    let mut broken = cf.clone();
    broken["Resources"]
        .as_object_mut()
        .unwrap()
        .remove("CallbackBindingTable");
    assert!(unresolved_cloudformation_refs(&broken)
        .iter()
        .any(|m| m == "CallbackBindingTable"));

    let (_, tf) = read(&dir.path().join("wake-path/main.tf.json"));
    let res = &tf["resource"];
    let table = &res["aws_dynamodb_table"]["callback_binding"];
    assert_eq!(table["count"], "${local.gateway_host ? 1 : 0}");
    assert_eq!(
        table["global_secondary_index"][0]["name"],
        "provider-execution-index"
    );
    assert_eq!(table["ttl"]["attribute_name"], "expires_at_epoch_s");
    assert_eq!(table["point_in_time_recovery"]["enabled"], true);
    for name in ["gateway_wakeup", "gateway_reconciler", "gateway_starter"] {
        assert_eq!(
            res["aws_lambda_function"][name]["count"],
            "${local.gateway_host ? 1 : 0}"
        );
    }
    let m = &res["aws_lambda_event_source_mapping"]["await_interaction_stream"];
    assert_eq!(m["batch_size"], 10);
    assert_eq!(m["maximum_retry_attempts"], 5);
    assert_eq!(m["bisect_batch_on_function_error"], true);
    assert!(res["aws_cloudwatch_event_rule"]["driver_status_change"].is_object());
    assert!(
        unresolved_terraform_refs(&tf).is_empty(),
        "{:?}",
        unresolved_terraform_refs(&tf)
    );
}

/// Every action a policy document's statements grant, with the resources of each.
fn grants(statements: &Value) -> Vec<(String, Vec<Value>)> {
    statements
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            let resources = match &s["Resource"] {
                Value::Array(r) => r.clone(),
                other => vec![other.clone()],
            };
            let actions = match &s["Action"] {
                Value::Array(a) => a.iter().map(|a| a.as_str().unwrap().to_owned()).collect(),
                Value::String(a) => vec![a.clone()],
                _ => Vec::new(),
            };
            actions.into_iter().map(move |a| (a, resources.clone()))
        })
        .collect()
}

/// The actions of `statements` on anything but `allowed`: least privilege for a role whose
/// every action is known.
fn beyond(statements: &Value, allowed: &[(&str, &[&str])]) -> Vec<String> {
    grants(statements)
        .into_iter()
        .filter(|(a, r)| {
            !allowed.iter().any(|(action, resources)| {
                a == action
                    && r.iter()
                        .all(|r| resources.iter().any(|x| r.as_str() == Some(x)))
            })
        })
        .map(|(a, r)| format!("{a} on {r:?}"))
        .collect()
}

const GATEWAY: &str = "arn:aws:lambda:eu-west-1:210987654321:function:tpf-action-gateway:3";
const STARTER: &str = "arn:aws:lambda:eu-west-1:210987654321:function:tpf-gateway-starter";

/// The gateway binding's release stack, both flavours: its driver alone (the driver sweeps TPF
/// itself, so no sweeper, schedule or sweeper alarm), the driver's role with the compiled
/// policy, which invokes exactly the numbered gateway version and the starter and nothing
/// else, and every reference resolved.
#[test]
fn the_gateway_release_stack_is_the_driver_alone() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway.tpf-sfn.toml"),
        &["--emit", "cloudformation", "--emit", "terraform"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, cf) = read(&dir.path().join("cloudformation.json"));
    assert_eq!(
        types(&cf),
        [
            ("DriverRole".to_owned(), "AWS::IAM::Role".to_owned()),
            (
                "Driver".to_owned(),
                "AWS::StepFunctions::StateMachine".to_owned()
            ),
            (
                "DriverExecutionsFailedAlarm".to_owned(),
                "AWS::CloudWatch::Alarm".to_owned()
            ),
            (
                "DriverExecutionsTimedOutAlarm".to_owned(),
                "AWS::CloudWatch::Alarm".to_owned()
            ),
        ]
    );
    let driver = &cf["Resources"]["Driver"]["Properties"];
    assert_eq!(
        driver["DefinitionString"].as_str().unwrap(),
        std::fs::read_to_string(dir.path().join("driver.asl.json")).unwrap()
    );
    assert!(driver["Tags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["Key"] == "tpf-sfn:role" && t["Value"] == "driver"));
    assert_eq!(driver["TracingConfiguration"]["Enabled"], false);
    let policy = &cf["Resources"]["DriverRole"]["Properties"]["Policies"][0]["PolicyDocument"];
    let compiled: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("driver.iam-policy.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(*policy, compiled);
    let allowed: &[(&str, &[&str])] = &[("lambda:InvokeFunction", &[GATEWAY, STARTER])];
    assert_eq!(beyond(&policy["Statement"], allowed), Vec::<String>::new());
    // The check bites: the unqualified gateway, or any version of it, is beyond the grant.
    let wide = serde_json::json!([{"Effect": "Allow", "Action": ["lambda:InvokeFunction"],
        "Resource": [GATEWAY.rsplit_once(':').unwrap().0, format!("{}:*", GATEWAY.rsplit_once(':').unwrap().0)]}]);
    assert_eq!(beyond(&wide, allowed).len(), 1);
    assert!(cf["Outputs"]["SweeperArn"].is_null());
    assert!(
        unresolved_cloudformation_refs(&cf).is_empty(),
        "{:?}",
        unresolved_cloudformation_refs(&cf)
    );
    insta::assert_snapshot!("gateway_cloudformation", text);

    let (text, tf) = read(&dir.path().join("main.tf.json"));
    let r = &tf["resource"];
    let kinds: Vec<(&String, Vec<&String>)> = r
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k, v.as_object().unwrap().keys().collect()))
        .collect();
    assert_eq!(
        format!("{kinds:?}"),
        r#"[("aws_iam_role", ["driver"]), ("aws_iam_role_policy", ["driver"]), ("aws_sfn_state_machine", ["driver"]), ("aws_cloudwatch_metric_alarm", ["driver_executions_failed", "driver_executions_timed_out"])]"#
    );
    let policy: Value = serde_json::from_str(
        r["aws_iam_role_policy"]["driver"]["policy"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(policy, compiled);
    assert!(
        unresolved_terraform_refs(&tf).is_empty(),
        "{:?}",
        unresolved_terraform_refs(&tf)
    );
    insta::assert_snapshot!("gateway_terraform", text);
    // The wake path is the shared one, with the gateway host created by default for this
    // configuration's gateway.
    let (_, wake) = read(&dir.path().join("wake-path/cloudformation.json"));
    assert!(has(&wake, "GatewayStarter", "AWS::Lambda::Function"));
}

/// The gateway's queue transport: the driver sends its requests to the queue, and its role
/// may do that and start the next generation, nothing else (no gateway invoke of its own); the
/// wake path's relay invokes the gateway for it.
#[test]
fn the_gateway_queue_transport_release_sends_to_its_queue_only() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("gateway-queue.tpf-sfn.toml");
    let text = std::fs::read_to_string(examples().join("aws/gateway.tpf-sfn.toml"))
        .unwrap()
        .replace(
            "[binding.gateway]\n",
            "[binding.gateway]\ntransport = \"queue\"\nqueue-url = \"https://sqs.eu-west-1.amazonaws.com/210987654321/tpf-gateway\"\n",
        );
    std::fs::write(&cfg, text).unwrap();
    let out = dir.path().join("out");
    let o = compile_both(&out, &cfg, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, cf) = read(&out.join("cloudformation.json"));
    let policy = &cf["Resources"]["DriverRole"]["Properties"]["Policies"][0]["PolicyDocument"];
    let allowed: &[(&str, &[&str])] = &[
        (
            "sqs:SendMessage",
            &["arn:aws:sqs:eu-west-1:210987654321:tpf-gateway"],
        ),
        ("lambda:InvokeFunction", &[STARTER]),
    ];
    assert_eq!(beyond(&policy["Statement"], allowed), Vec::<String>::new());
    assert!(grants(&policy["Statement"])
        .iter()
        .any(|(a, _)| a == "sqs:SendMessage"));
    assert!(unresolved_cloudformation_refs(&cf).is_empty());

    // The wake path's relay carries the queue to the gateway's numbered version: it invokes
    // that version with its role, and needs neither TPF's Action API nor its token.
    let (_, wake) = read(&out.join("wake-path/cloudformation.json"));
    let r = &wake["Resources"];
    assert_eq!(r["ActionQueue"]["Properties"]["QueueName"], "tpf-gateway");
    let env = &r["Relay"]["Properties"]["Environment"]["Variables"];
    assert_eq!(env["TPF_SFN_GATEWAY_FUNCTION_ARN"], GATEWAY);
    assert!(env["TPF_SFN_ACTION_URL"].is_null(), "{env}");
    assert!(env["TPF_SFN_ACTION_TOKEN_PARAMETER"].is_null(), "{env}");
    for p in ["ActionUrl", "ActionTokenParameter"] {
        assert!(wake["Parameters"][p].is_null(), "{p}");
    }
    let relay = &r["RelayRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"];
    let actions: Vec<String> = grants(relay).into_iter().map(|(a, _)| a).collect();
    assert!(
        !actions
            .iter()
            .any(|a| a.starts_with("ssm:") || a.starts_with("kms:")),
        "{actions:?}"
    );
    let invoke: Vec<Vec<Value>> = grants(relay)
        .into_iter()
        .filter(|(a, _)| a == "lambda:InvokeFunction")
        .map(|(_, r)| r)
        .collect();
    assert_eq!(invoke, [vec![serde_json::json!(GATEWAY)]]);
    assert!(
        actions.contains(&"states:SendTaskFailure".to_owned()),
        "{actions:?}"
    );
    assert!(unresolved_cloudformation_refs(&wake).is_empty());
    let (_, tf) = read(&out.join("wake-path/main.tf.json"));
    let relay = &tf["resource"]["aws_lambda_function"]["relay"];
    assert_eq!(
        relay["environment"]["variables"]["TPF_SFN_GATEWAY_FUNCTION_ARN"],
        GATEWAY
    );
    assert!(tf["variable"]["action_url"].is_null());
    assert!(tf["resource"]["aws_iam_role_policy"]["relay_token_key"].is_null());
    let policy: Value = serde_json::from_str(
        tf["resource"]["aws_iam_role_policy"]["relay"]["policy"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(
        !grants(&policy["Statement"])
            .iter()
            .any(|(a, _)| a.starts_with("ssm:")),
        "{policy}"
    );
    assert!(
        unresolved_terraform_refs(&tf).is_empty(),
        "{:?}",
        unresolved_terraform_refs(&tf)
    );
}

/// The gateway binding on Lambda durable functions: the gateway driver function and its
/// published version; the role invokes exactly the numbered gateway version and the function's
/// own versions (the hand-over), writes no wakeup row, and there is no sweeper.
#[test]
fn the_durable_gateway_release_stack_is_the_function_and_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("gateway.tpf-sfn.toml"),
        &["--backend", "lambda-durable", "--emit", "cloudformation"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, cf) = read(&dir.path().join("cloudformation.json"));
    let kinds: Vec<String> = types(&cf).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [
            "DriverRole",
            "DriverLogGroup",
            "Driver",
            "DriverExecutionsFailedAlarm",
            "DriverExecutionsTimedOutAlarm",
            "DriverVersion"
        ]
    );
    // The driver's logs go to the group the stack made first, kept for the stack's days.
    let name = cf["Resources"]["Driver"]["Properties"]["FunctionName"]
        .as_str()
        .unwrap();
    let group = &cf["Resources"]["DriverLogGroup"]["Properties"];
    assert_eq!(group["LogGroupName"], format!("/aws/lambda/{name}"));
    assert_eq!(group["RetentionInDays"]["Ref"], "LogRetentionInDays");
    assert_eq!(cf["Resources"]["Driver"]["DependsOn"], "DriverLogGroup");
    // The durable execution metrics Lambda publishes for the driver function.
    for (alarm, metric) in [
        ("DriverExecutionsFailedAlarm", "DurableExecutionFailed"),
        ("DriverExecutionsTimedOutAlarm", "DurableExecutionTimedOut"),
    ] {
        let p = &cf["Resources"][alarm]["Properties"];
        assert_eq!(p["Namespace"], "AWS/Lambda", "{alarm}");
        assert_eq!(p["MetricName"], metric, "{alarm}");
        assert_eq!(
            p["Dimensions"],
            serde_json::json!([{"Name": "FunctionName", "Value": {"Ref": "Driver"}}])
        );
        assert_eq!(
            p["AlarmActions"]["Fn::If"][0], "HasAlarmTopic",
            "notifies the topic only when one is given"
        );
    }
    assert_eq!(
        cf["Outputs"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["DriverFunctionName", "DriverVersionArn"]
    );
    let statements =
        &cf["Resources"]["DriverRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"];
    let sids: Vec<&str> = statements
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["Sid"].as_str().unwrap())
        .collect();
    assert_eq!(sids, ["HandOver", "ActionGateway"]);
    assert_eq!(
        statements[1]["Action"],
        serde_json::json!(["lambda:InvokeFunction"])
    );
    assert_eq!(statements[1]["Resource"], serde_json::json!([GATEWAY]));
    let spec = std::fs::read_to_string(dir.path().join("driver.durable.json")).unwrap();
    let spec: Value = serde_json::from_str(&spec).unwrap();
    let env = &cf["Resources"]["Driver"]["Properties"]["Environment"]["Variables"];
    assert_eq!(
        serde_json::from_str::<Value>(env["TPF_SFN_DURABLE_SPEC"].as_str().unwrap()).unwrap(),
        spec
    );
    assert!(unresolved_cloudformation_refs(&cf).is_empty());
    insta::assert_snapshot!("gateway_durable_cloudformation", text);
}

/// A durable release compiled with `config` (an `examples/aws/` file's name, or a config's
/// text for a file of its own) in both flavours: the CloudFormation template and the Terraform
/// module.
fn durable_both(dir: &Path, config: &str) -> (Value, String, Value) {
    let file = if config.contains('\n') {
        let file = dir.join("durable.tpf-sfn.toml");
        std::fs::write(&file, config).unwrap();
        file
    } else {
        examples().join("aws").join(config)
    };
    let out = dir.join("out");
    let o = compile_both(&out, &file, &["--backend", "lambda-durable"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, cf) = read(&out.join("cloudformation.json"));
    let (text, tf) = read(&out.join("main.tf.json"));
    (cf, text, tf)
}

/// A value of either flavour in one spelling: CloudFormation's `Fn::Sub` and `Ref`s, and
/// Terraform's interpolations, become the same `<partition>`, `<region>`, `<account>` and
/// `<driver-version>` markers.
fn neutral(v: &Value) -> Value {
    const SAME: &[(&str, &str)] = &[
        ("${AWS::Partition}", "<partition>"),
        ("${AWS::Region}", "<region>"),
        ("${AWS::AccountId}", "<account>"),
        ("${data.aws_partition.current.partition}", "<partition>"),
        ("${data.aws_region.current.name}", "<region>"),
        (
            "${data.aws_caller_identity.current.account_id}",
            "<account>",
        ),
        (
            "${aws_lambda_function.driver.qualified_arn}",
            "<driver-version>",
        ),
        ("$${", "${"),
    ];
    let text = |s: &str| {
        let mut s = s.to_owned();
        for (from, to) in SAME {
            s = s.replace(from, to);
        }
        Value::String(s)
    };
    match v {
        Value::String(s) => text(s),
        Value::Object(o) if o.len() == 1 && o.contains_key("Fn::Sub") => {
            text(o["Fn::Sub"].as_str().unwrap())
        }
        Value::Object(o) if o.len() == 1 && o.contains_key("Ref") => Value::String(
            match o["Ref"].as_str().unwrap() {
                "DriverVersion" => "<driver-version>",
                other => panic!("unexpected Ref {other}"),
            }
            .to_owned(),
        ),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), neutral(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(neutral).collect()),
        other => other.clone(),
    }
}

/// Every statement a role grants: CloudFormation's inline policy (a conditional statement by its
/// granting branch).
fn cf_statements(cf: &Value, role: &str) -> Vec<Value> {
    let id = format!("{}{}Role", role[..1].to_uppercase(), &role[1..]);
    cf["Resources"][&id]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.get("Fn::If").map_or(s, |b| &b[1]).clone())
        .collect()
}

/// The same from Terraform: the role's policy.
fn tf_statements(tf: &Value, role: &str) -> Vec<Value> {
    let policy = &tf["resource"]["aws_iam_role_policy"][role]["policy"];
    let doc: Value = serde_json::from_str(policy.as_str().unwrap()).unwrap();
    doc["Statement"].as_array().unwrap().clone()
}

/// `CamelCase` → `snake_case`, how the Terraform flavour names CloudFormation's outputs.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The two flavours of one durable release stack hold the same facts: the same functions with
/// the same settings, environment, tags and durable configuration; the same roles with the same
/// managed policy and the same statements; the same outputs. Checked for
/// the gateway binding (the one exported), and seen to fail on a changed statement.
#[test]
fn the_durable_release_stack_is_the_same_in_terraform() {
    for config in ["gateway.tpf-sfn.toml"] {
        let dir = tempfile::tempdir().unwrap();
        let (cf, _, tf) = durable_both(dir.path(), config);
        let n = neutral;
        let r = &cf["Resources"];
        let t = &tf["resource"];
        let aws = &tf["terraform"]["required_providers"]["aws"];
        assert_eq!(
            aws["version"], ">= 6.25.0",
            "the provider that added durable_config"
        );
        assert!(
            unresolved_terraform_refs(&tf).is_empty(),
            "{config}: {:?}",
            unresolved_terraform_refs(&tf)
        );
        assert!(unresolved_cloudformation_refs(&cf).is_empty());
        assert!(
            r["Sweeper"].is_null(),
            "{config}: the gateway driver sweeps itself"
        );
        // Every CloudFormation resource has its Terraform counterparts, and nothing more.
        let mut expected: Vec<(&str, String)> = Vec::new();
        for (id, res) in r.as_object().unwrap() {
            let role = snake(id.trim_end_matches("Role"));
            match res["Type"].as_str().unwrap() {
                "AWS::IAM::Role" => {
                    expected.push(("aws_iam_role", role.clone()));
                    expected.push(("aws_iam_role_policy", role.clone()));
                    if res["Properties"]["ManagedPolicyArns"].is_array() {
                        expected.push(("aws_iam_role_policy_attachment", role.clone()));
                    }
                }
                "AWS::Lambda::Function" => expected.push(("aws_lambda_function", snake(id))),
                // Terraform publishes the function itself.
                "AWS::Lambda::Version" => {
                    assert_eq!(t["aws_lambda_function"]["driver"]["publish"], true)
                }
                "AWS::Logs::LogGroup" => {
                    let function = snake(id.trim_end_matches("LogGroup"));
                    let group = &t["aws_cloudwatch_log_group"][&function];
                    assert_eq!(
                        n(&res["Properties"]["LogGroupName"]),
                        n(&group["name"]),
                        "{config} {id}"
                    );
                    assert_eq!(group["retention_in_days"], "${var.log_retention_in_days}");
                    assert!(
                        t["aws_lambda_function"][&function]["depends_on"]
                            .as_array()
                            .unwrap()
                            .contains(&Value::String(format!(
                                "aws_cloudwatch_log_group.{function}"
                            ))),
                        "{config}: the function waits for its log group"
                    );
                    expected.push(("aws_cloudwatch_log_group", function));
                }
                "AWS::CloudWatch::Alarm" => {
                    let name = snake(id.trim_end_matches("Alarm"));
                    let (p, a) = (&res["Properties"], &t["aws_cloudwatch_metric_alarm"][&name]);
                    for (cf_key, tf_key) in [
                        ("AlarmDescription", "alarm_description"),
                        ("Namespace", "namespace"),
                        ("MetricName", "metric_name"),
                        ("Statistic", "statistic"),
                        ("Period", "period"),
                        ("EvaluationPeriods", "evaluation_periods"),
                        ("Threshold", "threshold"),
                    ] {
                        assert_eq!(p[cf_key], a[tf_key], "{config} {id} {cf_key}");
                    }
                    assert_eq!(
                        a["dimensions"]["FunctionName"],
                        "${aws_lambda_function.driver.function_name}"
                    );
                    expected.push(("aws_cloudwatch_metric_alarm", name));
                }
                other => panic!("{config}: no Terraform counterpart for {other}"),
            }
        }
        let mut have: Vec<(&str, String)> = t
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(ty, rs)| {
                rs.as_object()
                    .unwrap()
                    .keys()
                    .map(move |k| (ty.as_str(), k.clone()))
            })
            .collect();
        expected.sort();
        have.sort();
        assert_eq!(have, expected, "{config}");
        for role in &["driver"] {
            let cf_fn = &r[format!("{}{}", role[..1].to_uppercase(), &role[1..])]["Properties"];
            let tf_fn = &t["aws_lambda_function"][*role];
            for (c, f) in [
                ("FunctionName", "function_name"),
                ("Description", "description"),
                ("Runtime", "runtime"),
                ("Handler", "handler"),
                ("Architectures", "architectures"),
                ("MemorySize", "memory_size"),
                ("Timeout", "timeout"),
            ] {
                assert_eq!(n(&cf_fn[c]), n(&tf_fn[f]), "{config} {role} {c}");
            }
            assert_eq!(
                n(&cf_fn["Environment"]["Variables"]),
                n(&tf_fn["environment"]["variables"]),
                "{config} {role}"
            );
            let tags: serde_json::Map<String, Value> = cf_fn["Tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| (t["Key"].as_str().unwrap().to_owned(), t["Value"].clone()))
                .collect();
            assert_eq!(Value::Object(tags), tf_fn["tags"], "{config} {role}");
            assert_eq!(
                cf_fn["DurableConfig"]["ExecutionTimeout"],
                tf_fn["durable_config"]["execution_timeout"],
                "{config} {role}"
            );
            assert_eq!(
                cf_fn["DurableConfig"]["RetentionPeriodInDays"],
                tf_fn["durable_config"]["retention_period"],
                "{config} {role}"
            );
            assert_eq!(
                n(
                    &r[format!("{}{}Role", role[..1].to_uppercase(), &role[1..])]["Properties"]
                        ["ManagedPolicyArns"][0]
                ),
                n(&t["aws_iam_role_policy_attachment"][*role]["policy_arn"]),
                "{config} {role}"
            );
            let cf_st: Vec<Value> = cf_statements(&cf, role).iter().map(n).collect();
            let tf_st: Vec<Value> = tf_statements(&tf, role).iter().map(n).collect();
            assert_eq!(cf_st, tf_st, "{config} {role}");
            // The comparison bites: one more resource on one side is a difference.
            let mut wider = tf_st.clone();
            wider[0]["Resource"]
                .as_array_mut()
                .unwrap()
                .push(Value::String("*".into()));
            assert_ne!(cf_st, wider);
        }
        let cf_outputs: Vec<String> = cf["Outputs"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| snake(k))
            .collect();
        let tf_outputs: Vec<String> = tf["output"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(cf_outputs, tf_outputs, "{config}");
        assert_eq!(
            cf["Outputs"]["DriverVersionArn"]["Description"],
            tf["output"]["driver_version_arn"]["description"]
        );
    }
}

/// The gateway binding's durable release in Terraform: least privilege (exactly the numbered
/// gateway version and the function's own versions), snapshot.
#[test]
fn the_durable_gateway_release_module_invokes_the_gateway_version_only() {
    let dir = tempfile::tempdir().unwrap();
    let (_, text, tf) = durable_both(dir.path(), "gateway.tpf-sfn.toml");
    let statements = Value::Array(tf_statements(&tf, "driver"));
    let own = "arn:${data.aws_partition.current.partition}:lambda:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:function:tpf-restaurantapproval-9a71d4d252-durable:*";
    let allowed: &[(&str, &[&str])] = &[("lambda:InvokeFunction", &[GATEWAY, own])];
    assert_eq!(beyond(&statements, allowed), Vec::<String>::new());
    // The check bites: the unqualified gateway is beyond the grant.
    let mut wide = statements.clone();
    wide[1]["Resource"] = serde_json::json!([GATEWAY.rsplit_once(':').unwrap().0]);
    assert_eq!(beyond(&wide, allowed).len(), 1);
    assert!(tf["resource"]["aws_lambda_function"]["sweeper"].is_null());
    assert!(tf["variable"]["action_token_parameter"].is_null());
    insta::assert_snapshot!("gateway_durable_terraform", text);
}
