//! `compile --emit cloudformation|terraform`: the IaC exports parse, have the expected shape,
//! every reference resolves, and they match their snapshots for the restaurant sample.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use tpf_sfn_compiler::sfn::export::{unresolved_cloudformation_refs, unresolved_terraform_refs};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/contracts")
}

fn tpf_sfn(args: &[&str]) -> Output {
    support::cli().args(args).output().expect("run tpf-sfn")
}

fn compile(out: &Path, extra: &[&str]) -> Output {
    let c = examples().join("restaurant-approval.pipeline-contract.json");
    let r = examples().join("restaurant-approval.pipeline-release.json");
    let mut args = vec![
        "compile",
        c.to_str().unwrap(),
        "--release",
        r.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    tpf_sfn(&args)
}

fn read(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let value = serde_json::from_str(&text).expect("export is JSON");
    (text, value)
}

#[test]
fn cloudformation_export_is_complete_and_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(dir.path(), &["--emit", "cloudformation"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, cf) = read(&dir.path().join("cloudformation.json"));
    assert_eq!(cf["AWSTemplateFormatVersion"], "2010-09-09");
    let types: Vec<&str> = cf["Resources"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["Type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "AWS::IAM::Role",
            "AWS::StepFunctions::StateMachine",
            "AWS::StepFunctions::StateMachine",
            "AWS::IAM::Role",
            "AWS::Scheduler::Schedule"
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
    assert_eq!(
        cf["Resources"]["MachinesRole"]["Properties"]["Policies"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        cf["Resources"]["SweeperSchedule"]["Properties"]["ScheduleExpression"],
        "rate(1 minute)"
    );
    assert!(unresolved_cloudformation_refs(&cf).is_empty());
    insta::assert_snapshot!("restaurant_cloudformation", text);
}

#[test]
fn terraform_export_is_complete_and_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let o = compile(dir.path(), &["--emit", "terraform"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (text, tf) = read(&dir.path().join("main.tf.json"));
    let resource = tf["resource"].as_object().unwrap();
    let kinds: Vec<&String> = resource.keys().collect();
    assert_eq!(
        kinds,
        [
            "aws_iam_role",
            "aws_iam_role_policy",
            "aws_sfn_state_machine",
            "aws_scheduler_schedule"
        ]
    );
    let driver = &tf["resource"]["aws_sfn_state_machine"]["driver"];
    let definition = driver["definition"].as_str().unwrap();
    assert!(!definition.contains("${") || definition.contains("$${"));
    assert!(unresolved_terraform_refs(&tf).is_empty());
    // Broken references are caught by the same check.
    let mut broken = tf.clone();
    broken["resource"]["aws_sfn_state_machine"]["driver"]["role_arn"] =
        Value::String("${aws_iam_role.nope.arn}".into());
    assert_eq!(
        unresolved_terraform_refs(&broken),
        vec!["aws_iam_role.nope.arn"]
    );
    insta::assert_snapshot!("restaurant_terraform", text);
}

#[test]
fn check_covers_the_exports_and_both_can_be_emitted() {
    let dir = tempfile::tempdir().unwrap();
    let both = ["--emit", "cloudformation", "--emit", "terraform"];
    assert!(compile(dir.path(), &both).status.success());
    assert!(dir.path().join("cloudformation.json").exists());
    assert!(dir.path().join("main.tf.json").exists());
    let mut check = both.to_vec();
    check.push("--check");
    let o = compile(dir.path(), &check);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // Without --emit, --check ignores the extra files.
    assert!(compile(dir.path(), &["--check"]).status.success());
    std::fs::write(dir.path().join("main.tf.json"), "{}\n").unwrap();
    let o = compile(dir.path(), &check);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("drift: main.tf.json"));
}
