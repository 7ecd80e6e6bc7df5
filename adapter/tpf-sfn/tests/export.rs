//! `compile --emit cloudformation|terraform`: both stacks (the release's, the shared wake path's)
//! parse, hold what the wake path needs, every reference resolves, placeholders are refused,
//! and they match their snapshots for the restaurant sample. cfn-lint and moto's CloudFormation
//! check the same files again in the test command (scripts/iac-check.sh).

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use tpf_sfn_compiler::lowering::action_token;
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

#[test]
fn cloudformation_release_stack_is_one_role_per_machine_and_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("http.tpf-sfn.toml"),
        &["--emit", "cloudformation"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, cf) = read(&dir.path().join("cloudformation.json"));
    assert_eq!(cf["AWSTemplateFormatVersion"], "2010-09-09");
    let kinds: Vec<String> = types(&cf).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        kinds,
        [
            "AWS::IAM::Role",
            "AWS::IAM::Role",
            "AWS::StepFunctions::StateMachine",
            "AWS::StepFunctions::StateMachine",
            "AWS::IAM::Role",
            "AWS::Scheduler::Schedule",
            "AWS::CloudWatch::Alarm",
            "AWS::CloudWatch::Alarm",
            "AWS::CloudWatch::Alarm",
        ]
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    let driver = &cf["Resources"]["Driver"]["Properties"];
    assert_eq!(
        driver["StateMachineName"],
        manifest["machines"]["driver"]["name"]
    );
    assert_eq!(
        driver["DefinitionString"].as_str().unwrap(),
        std::fs::read_to_string(dir.path().join("driver.asl.json")).unwrap()
    );
    // Each machine runs as its own role with its own compiled policy.
    assert_eq!(driver["RoleArn"]["Fn::GetAtt"][0], "DriverRole");
    assert_eq!(
        cf["Resources"]["Sweeper"]["Properties"]["RoleArn"]["Fn::GetAtt"][0],
        "SweeperRole"
    );
    let driver_policy: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("driver.iam-policy.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        cf["Resources"]["DriverRole"]["Properties"]["Policies"][0]["PolicyDocument"],
        driver_policy
    );
    assert_eq!(
        cf["Resources"]["SweeperSchedule"]["Properties"]["ScheduleExpression"],
        "rate(1 minute)"
    );
    let alarms: Vec<&Value> = cf["Resources"]
        .as_object()
        .unwrap()
        .values()
        .filter(|r| r["Type"] == "AWS::CloudWatch::Alarm")
        .map(|r| &r["Properties"]["MetricName"])
        .collect();
    assert_eq!(
        alarms,
        ["ExecutionsFailed", "ExecutionsTimedOut", "ExecutionsFailed"]
    );
    assert!(
        unresolved_cloudformation_refs(&cf).is_empty(),
        "{:?}",
        unresolved_cloudformation_refs(&cf)
    );
    insta::assert_snapshot!("restaurant_cloudformation", text);
}

#[test]
fn cloudformation_wake_path_stack_holds_everything_the_wake_path_needs() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("queue.tpf-sfn.toml"),
        &["--emit", "cloudformation"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, cf) = read(&dir.path().join("wake-path/cloudformation.json"));
    for (logical, ty) in [
        ("WakeupTable", "AWS::DynamoDB::Table"),
        ("Bridge", "AWS::Lambda::Function"),
        ("BridgeRole", "AWS::IAM::Role"),
        ("BridgeLogGroup", "AWS::Logs::LogGroup"),
        ("ExecutionStreamMapping", "AWS::Lambda::EventSourceMapping"),
        ("WakeupStreamMapping", "AWS::Lambda::EventSourceMapping"),
        ("BridgeFailures", "AWS::SQS::Queue"),
        ("Relay", "AWS::Lambda::Function"),
        ("RelayRole", "AWS::IAM::Role"),
        ("RelayLogGroup", "AWS::Logs::LogGroup"),
        ("ActionQueue", "AWS::SQS::Queue"),
        ("ActionDeadLetterQueue", "AWS::SQS::Queue"),
        ("ActionQueueMapping", "AWS::Lambda::EventSourceMapping"),
        ("BridgeErrorsAlarm", "AWS::CloudWatch::Alarm"),
        ("BridgeIteratorAgeAlarm", "AWS::CloudWatch::Alarm"),
        ("BridgeFailuresAlarm", "AWS::CloudWatch::Alarm"),
        ("RelayErrorsAlarm", "AWS::CloudWatch::Alarm"),
        ("ActionDeadLetterAlarm", "AWS::CloudWatch::Alarm"),
    ] {
        assert!(
            has(&cf, logical, ty),
            "{logical} ({ty}) missing: {:?}",
            types(&cf)
        );
    }
    let r = &cf["Resources"];
    let table = &r["WakeupTable"]["Properties"];
    assert_eq!(table["TableName"], "tpf_sfn_wakeup");
    assert_eq!(
        table["StreamSpecification"]["StreamViewType"],
        "NEW_AND_OLD_IMAGES"
    );
    assert_eq!(table["TimeToLiveSpecification"]["Enabled"], true);
    // Live task tokens outlive the stack and can be restored.
    assert_eq!(r["WakeupTable"]["DeletionPolicy"], "Retain");
    assert_eq!(r["WakeupTable"]["UpdateReplacePolicy"], "Retain");
    assert_eq!(
        table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"],
        true
    );
    // TPF owns its execution table: its stream is a parameter, mapped like the wakeup table's.
    assert_eq!(
        r["ExecutionStreamMapping"]["Properties"]["EventSourceArn"]["Ref"],
        "ExecutionTableStreamArn"
    );
    for mapping in [
        "ExecutionStreamMapping",
        "WakeupStreamMapping",
        "ActionQueueMapping",
    ] {
        assert_eq!(
            r[mapping]["Properties"]["FunctionResponseTypes"][0], "ReportBatchItemFailures",
            "{mapping}"
        );
    }
    assert_eq!(r["Bridge"]["Properties"]["Runtime"], "provided.al2023");
    assert_eq!(r["Relay"]["Properties"]["Handler"], "relay");
    // The queue the drivers send to is the one the configuration names.
    assert_eq!(r["ActionQueue"]["Properties"]["QueueName"], "tpf-actions");
    let dlq = &r["ActionQueue"]["Properties"]["RedrivePolicy"];
    assert_eq!(
        dlq["deadLetterTargetArn"]["Fn::GetAtt"][0],
        "ActionDeadLetterQueue"
    );
    for p in [
        "ExecutionTableStreamArn",
        "CodeS3Bucket",
        "ActionUrl",
        "ActionTokenParameter",
        "ActionTokenKmsKeyArn",
        "DurableFunctions",
    ] {
        assert!(cf["Parameters"][p].is_object(), "parameter {p}");
    }
    // Releases on the Lambda durable functions backend: the bridge learns which from its
    // setting, and may start and wake this configuration's durable functions' versions only.
    assert_eq!(
        r["Bridge"]["Properties"]["Environment"]["Variables"]["TPF_SFN_DURABLE_FUNCTIONS"],
        serde_json::json!({"Ref": "DurableFunctions"})
    );
    let statements = r["BridgeRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
        .as_array()
        .expect("bridge statements");
    for (sid, action) in [
        ("StartDurableDrivers", "lambda:InvokeFunction"),
        (
            "WakeDurableDrivers",
            "lambda:SendDurableExecutionCallbackSuccess",
        ),
    ] {
        let st = statements
            .iter()
            .find(|s| s["Sid"] == sid)
            .unwrap_or_else(|| panic!("no {sid} statement"));
        assert_eq!(st["Action"], serde_json::json!([action]));
        let resource = st["Resource"].to_string();
        assert!(resource.contains(":function:tpf-*-durable:*"), "{resource}");
    }
    // The relay reads the Action API token from SSM at run time: the stack holds the
    // parameter's name, never a token, and the relay may read that parameter only.
    assert!(cf["Parameters"].get("ActionToken").is_none());
    assert_eq!(
        cf["Parameters"]["ActionTokenParameter"]["AllowedPattern"],
        action_token::NAME_PATTERN
    );
    let relay_vars = &r["Relay"]["Properties"]["Environment"]["Variables"];
    assert_eq!(
        relay_vars["TPF_SFN_ACTION_TOKEN_PARAMETER"],
        serde_json::json!({"Ref": "ActionTokenParameter"})
    );
    assert!(relay_vars.get("TPF_SFN_TOKEN").is_none(), "{relay_vars}");
    let relay_statements = r["RelayRole"]["Properties"]["Policies"][0]["PolicyDocument"]
        ["Statement"]
        .as_array()
        .expect("relay statements");
    let arn = action_token::cloudformation::parameter_arn();
    assert_eq!(
        action_token::least_privilege_problems(relay_statements, &arn),
        Vec::<String>::new()
    );
    let mut wide = relay_statements.clone();
    for s in &mut wide {
        if s["Sid"] == action_token::READ_SID {
            s["Resource"] = serde_json::json!(["*"]);
        }
    }
    assert_eq!(
        action_token::least_privilege_problems(&wide, &arn).len(),
        1,
        "a wildcard read is reported"
    );
    assert!(cf["Outputs"]["ActionQueueUrl"].is_object());
    assert!(
        unresolved_cloudformation_refs(&cf).is_empty(),
        "{:?}",
        unresolved_cloudformation_refs(&cf)
    );
    insta::assert_snapshot!("restaurant_wake_path_cloudformation", text);

    // The wake path depends on the configuration only: another release, the same bytes.
    let other = tempfile::tempdir().unwrap();
    let release: Value = serde_json::from_str(
        &std::fs::read_to_string(
            examples().join("contracts/restaurant-approval.pipeline-release.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut next = release.clone();
    next["releaseVersion"] = Value::String("2026.12.1".into());
    let next_file = other.path().join("next.pipeline-release.json");
    std::fs::write(&next_file, next.to_string()).unwrap();
    let c = examples().join("contracts/restaurant-approval.pipeline-contract.json");
    let cfg = examples().join("aws/queue.tpf-sfn.toml");
    let out = other.path().join("out");
    let o = tpf_sfn(&[
        "compile",
        c.to_str().unwrap(),
        "--release",
        next_file.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--emit",
        "cloudformation",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(out.join("wake-path/cloudformation.json")).unwrap(),
        text,
        "the wake path is the same for every release"
    );
    let (_, next_stack) = read(&out.join("cloudformation.json"));
    let (_, this_stack) = read(&dir.path().join("cloudformation.json"));
    assert_ne!(
        next_stack["Resources"]["Driver"]["Properties"]["StateMachineName"],
        this_stack["Resources"]["Driver"]["Properties"]["StateMachineName"],
        "each release its own machines, side by side"
    );
}

#[test]
fn http_binding_wake_path_has_no_relay() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("http.tpf-sfn.toml"),
        &["--emit", "cloudformation"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, cf) = read(&dir.path().join("wake-path/cloudformation.json"));
    assert!(has(&cf, "Bridge", "AWS::Lambda::Function"));
    assert!(cf["Resources"]["Relay"].is_null());
    assert!(cf["Parameters"]["ActionUrl"].is_null());
    assert!(unresolved_cloudformation_refs(&cf).is_empty());
}

#[test]
fn terraform_exports_pin_the_provider_and_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("queue.tpf-sfn.toml"),
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
            "aws_scheduler_schedule",
            "aws_cloudwatch_metric_alarm"
        ]
    );
    let driver = &tf["resource"]["aws_sfn_state_machine"]["driver"];
    assert_eq!(driver["role_arn"], "${aws_iam_role.driver.arn}");
    let definition = driver["definition"].as_str().unwrap();
    assert!(!definition.contains("${") || definition.contains("$${"));
    // The same wake path as the CloudFormation flavour.
    let res = &wake["resource"];
    for (ty, name) in [
        ("aws_dynamodb_table", "wakeup"),
        ("aws_lambda_function", "bridge"),
        ("aws_lambda_function", "relay"),
        ("aws_lambda_event_source_mapping", "execution_stream"),
        ("aws_lambda_event_source_mapping", "wakeup_stream"),
        ("aws_lambda_event_source_mapping", "action_queue"),
        ("aws_sqs_queue", "action"),
        ("aws_sqs_queue", "action_dead_letters"),
        ("aws_sqs_queue", "bridge_failures"),
        ("aws_cloudwatch_log_group", "bridge"),
        ("aws_cloudwatch_log_group", "relay"),
        ("aws_cloudwatch_metric_alarm", "bridge_iterator_age"),
        ("aws_cloudwatch_metric_alarm", "action_dead_letters"),
    ] {
        assert!(res[ty][name].is_object(), "{ty}.{name}");
    }
    // The Terraform flavour: the parameter's name, checked by the variable's validation; the
    // relay's policy reads that parameter only; the key's grant only with a key.
    let relay_vars = &res["aws_lambda_function"]["relay"]["environment"]["variables"];
    assert_eq!(
        relay_vars["TPF_SFN_ACTION_TOKEN_PARAMETER"],
        "${var.action_token_parameter}"
    );
    assert!(relay_vars.get("TPF_SFN_TOKEN").is_none(), "{relay_vars}");
    assert!(
        wake["variable"]["action_token_parameter"]["validation"]["condition"]
            .as_str()
            .unwrap()
            .contains(action_token::NAME_PATTERN)
    );
    let policy: Value = serde_json::from_str(
        res["aws_iam_role_policy"]["relay"]["policy"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let arn = Value::String("${local.action_token_parameter_arn}".into());
    assert_eq!(
        action_token::least_privilege_problems(policy["Statement"].as_array().unwrap(), &arn),
        Vec::<String>::new()
    );
    let key_policy: Value = serde_json::from_str(
        res["aws_iam_role_policy"]["relay_token_key"]["policy"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        action_token::least_privilege_problems(
            &[
                policy["Statement"].as_array().unwrap().clone(),
                key_policy["Statement"].as_array().unwrap().clone()
            ]
            .concat(),
            &arn
        ),
        Vec::<String>::new()
    );
    let wakeup = &res["aws_dynamodb_table"]["wakeup"];
    assert_eq!(wakeup["stream_view_type"], "NEW_AND_OLD_IMAGES");
    assert_eq!(wakeup["point_in_time_recovery"]["enabled"], true);
    assert_eq!(wakeup["lifecycle"]["prevent_destroy"], true);
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
    let o = compile(&out, Some("http.tpf-sfn.toml"), &["--format", "json"]);
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
    let cfg = Some("queue.tpf-sfn.toml");
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
    let queue = Some("queue.tpf-sfn.toml");
    let o = compile(dir.path(), queue, &["--emit", "cloudformation"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("cloudformation.json").exists());
    let http = Some("http.tpf-sfn.toml");
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
    let cfg = examples().join("aws/queue.tpf-sfn.toml");
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
#[test]
fn the_wake_path_declares_the_gateway_host() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(
        dir.path(),
        Some("queue.tpf-sfn.toml"),
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
    // Without a gateway the stack is what it was: the bridge's resources carry no condition.
    assert!(r["Bridge"]["Condition"].is_null());
    assert_eq!(cf["Parameters"]["GatewayFunctionArn"]["Default"], "");
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
    let o = compile(
        &out,
        None,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--emit",
            "cloudformation",
            "--emit",
            "terraform",
        ],
    );
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
    assert!(env[action_token::PARAMETER_ENV].is_null(), "{env}");
    for p in ["ActionUrl", action_token::CLOUDFORMATION_PARAMETER] {
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
    assert_eq!(kinds, ["DriverRole", "Driver", "DriverVersion"]);
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
    // Terraform is refused for this backend, as for every binding.
    let o = compile(
        &dir.path().join("tf"),
        Some("gateway.tpf-sfn.toml"),
        &["--backend", "lambda-durable", "--emit", "terraform"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("DURABLE_EXPORT_UNSUPPORTED"));
}

/// The gateway binding's placeholders are refused by the exports, naming the keys and the flag
/// that points at the file with the real values.
#[test]
fn the_gateway_exports_refuse_its_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for backend in ["step-functions", "lambda-durable"] {
        let o = compile(
            &out,
            None,
            &[
                "--binding",
                "gateway",
                "--backend",
                backend,
                "--emit",
                "cloudformation",
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("error[EXPORT_PLACEHOLDER]"), "{err}");
        assert!(err.contains("binding.gateway.function-arn"), "{err}");
        assert!(
            err.contains("binding.gateway.starter-function-arn"),
            "{err}"
        );
        assert!(err.contains("--config"), "{err}");
        assert!(!out.exists(), "nothing written: {err}");
    }
}
