//! `deploy` call sequences and error classification against mocked Step Functions clients
//! (aws-smithy-mocks): no network, every path deterministic.

use crate::support;

use std::path::Path;

use aws_sdk_sfn::config::retry::RetryConfig;
use aws_sdk_sfn::operation::create_state_machine::{
    CreateStateMachineError, CreateStateMachineOutput,
};
use aws_sdk_sfn::operation::describe_state_machine::DescribeStateMachineOutput;
use aws_sdk_sfn::operation::list_executions::ListExecutionsOutput;
use aws_sdk_sfn::operation::list_state_machines::ListStateMachinesOutput;
use aws_sdk_sfn::operation::list_tags_for_resource::ListTagsForResourceOutput;
use aws_sdk_sfn::operation::tag_resource::TagResourceOutput;
use aws_sdk_sfn::operation::update_state_machine::UpdateStateMachineOutput;
use aws_sdk_sfn::primitives::DateTime;
use aws_sdk_sfn::types::error::{InvalidDefinition, StateMachineAlreadyExists};
use aws_sdk_sfn::types::{
    ExecutionListItem, ExecutionStatus, StateMachineListItem, StateMachineType, Tag,
};
use aws_sdk_sfn::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use tpf_sfn::aws::deploy::{deploy, Options, Report};
use tpf_sfn::aws::plan::Action;
use tpf_sfn::aws::release::Release;
use tpf_sfn::error::Error;

const ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn";

/// The restaurant sample on the gateway binding (`examples/aws/gateway.tpf-sfn.toml`): its
/// driver alone, which sweeps TPF itself.
fn compiled(dir: &Path) -> Release {
    compiled_with(dir, &["--config", &gateway_config()])
}

/// The restaurant sample compiled into `dir` with `extra` arguments, loaded as `deploy` loads it.
fn compiled_with(dir: &Path, extra: &[&str]) -> Release {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
    let mut args: Vec<std::ffi::OsString> = vec![
        "tpf-sfn".into(),
        "compile".into(),
        root.join("restaurant-approval.pipeline-contract.json")
            .into_os_string(),
        "--release".into(),
        root.join("restaurant-approval.pipeline-release.json")
            .into_os_string(),
        "--out".into(),
        dir.as_os_str().to_owned(),
    ];
    args.extend(extra.iter().map(Into::into));
    let code = tpf_sfn::run(args);
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    Release::load(dir).expect("load compiled release")
}

fn gateway_config() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/aws/gateway.tpf-sfn.toml")
        .display()
        .to_string()
}

fn arn(name: &str) -> String {
    format!("arn:aws:states:us-east-1:123456789012:stateMachine:{name}")
}

fn item(name: &str) -> StateMachineListItem {
    StateMachineListItem::builder()
        .name(name)
        .state_machine_arn(arn(name))
        .r#type(StateMachineType::Standard)
        .creation_date(DateTime::from_secs(0))
        .build()
        .unwrap()
}

/// ListStateMachines: one page per entry of `pages`, linked by tokens "p1", "p2", ...
fn list_pages(pages: Vec<Vec<String>>) -> Vec<Rule> {
    let n = pages.len();
    pages
        .into_iter()
        .enumerate()
        .map(|(i, names)| {
            let expected = (i > 0).then(|| format!("p{i}"));
            mock!(Client::list_state_machines)
                .match_requests(move |r| r.next_token().map(str::to_string) == expected)
                .then_output(move || {
                    ListStateMachinesOutput::builder()
                        .set_state_machines(Some(names.iter().map(|n| item(n)).collect()))
                        .set_next_token((i + 1 < n).then(|| format!("p{}", i + 1)))
                        .build()
                        .unwrap()
                })
        })
        .collect()
}

/// name, definition, tags.
type Known = (String, String, Vec<(String, String)>);

/// DescribeStateMachine and ListTagsForResource answering with `deployed(name)`'s definition
/// and the machine's manifest tags.
fn describe(
    release: &Release,
    definition: impl Fn(&str, &str) -> String + Send + Sync + 'static,
) -> Vec<Rule> {
    let machines: Vec<Known> = release
        .machines
        .iter()
        .map(|m| {
            (
                m.name.clone(),
                m.definition_text.clone(),
                m.tags.clone().into_iter().collect(),
            )
        })
        .collect();
    let by_arn = {
        let machines = machines.clone();
        move |a: &str| machines.iter().find(|m| arn(&m.0) == a).cloned()
    };
    let by_arn2 = by_arn.clone();
    vec![
        mock!(Client::describe_state_machine).then_compute_output(move |r| {
            let (name, def, _) = by_arn(r.state_machine_arn().unwrap_or("")).unwrap();
            DescribeStateMachineOutput::builder()
                .state_machine_arn(arn(&name))
                .name(&name)
                .definition(definition(&name, &def))
                .role_arn(ROLE)
                .r#type(StateMachineType::Standard)
                .creation_date(DateTime::from_secs(0))
                .build()
                .unwrap()
        }),
        mock!(Client::list_tags_for_resource).then_compute_output(move |r| {
            let (_, _, tags) = by_arn2(r.resource_arn().unwrap_or("")).unwrap();
            ListTagsForResourceOutput::builder()
                .set_tags(Some(
                    tags.iter()
                        .map(|(k, v)| Tag::builder().key(k).value(v).build())
                        .collect(),
                ))
                .build()
        }),
    ]
}

struct Writes {
    create: Rule,
    update: Rule,
    tag: Rule,
}

impl Writes {
    fn new() -> Self {
        Self {
            create: mock!(Client::create_state_machine).then_compute_output(|r| {
                CreateStateMachineOutput::builder()
                    .state_machine_arn(arn(r.name().unwrap_or("")))
                    .creation_date(DateTime::from_secs(0))
                    .build()
                    .unwrap()
            }),
            update: mock!(Client::update_state_machine).then_output(|| {
                UpdateStateMachineOutput::builder()
                    .update_date(DateTime::from_secs(0))
                    .build()
                    .unwrap()
            }),
            tag: mock!(Client::tag_resource).then_output(|| TagResourceOutput::builder().build()),
        }
    }

    fn total(&self) -> usize {
        self.create.num_calls() + self.update.num_calls() + self.tag.num_calls()
    }

    fn rules(&self) -> Vec<&Rule> {
        vec![&self.create, &self.update, &self.tag]
    }
}

fn client(rules: &[&Rule]) -> Client {
    mock_client!(aws_sdk_sfn, RuleMode::MatchAny, rules, |b| b
        .retry_config(RetryConfig::disabled()))
}

fn run(
    client: &Client,
    release: &Release,
    opts: Options<'_>,
) -> Result<(Report, Vec<String>), Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut lines = Vec::new();
    let report = rt.block_on(deploy(client, release, opts, &mut |l| lines.push(l)))?;
    Ok((report, lines))
}

fn forced() -> Options<'static> {
    Options {
        role_arn: Some(ROLE),
        dry_run: false,
        force_replace: true,
    }
}

fn normal() -> Options<'static> {
    Options {
        role_arn: Some(ROLE),
        ..Options::default()
    }
}

/// `release` deployed over an account that holds exactly its machines with their definitions:
/// the report and the write calls made.
fn against_itself(release: &Release, opts: Options<'static>) -> (Report, usize) {
    let list = list_pages(vec![names(release)]);
    let desc = describe(release, |_, def| def.to_owned());
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().chain(&desc).collect();
    rules.extend(w.rules());
    let (report, _) = run(&client(&rules), release, opts).unwrap();
    (report, w.total())
}

fn names(release: &Release) -> Vec<String> {
    release.machines.iter().map(|m| m.name.clone()).collect()
}

/// A gateway-binding release is its driver alone (the driver sweeps TPF itself): one machine
/// created, tagged with the release's identity as every release's machines are.
#[test]
fn a_gateway_release_deploys_its_driver_alone() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    assert_eq!(release.machines.len(), 1, "{:?}", names(&release));
    let driver = &release.machines[0];
    assert_eq!(driver.role, "driver");
    assert_eq!(driver.tags["tpf-sfn:role"], "driver");
    assert_eq!(
        driver.tags["tpf-sfn:pipeline-id"],
        release.manifest.identity.pipeline_id
    );
    assert_eq!(driver.tags["tpf-sfn:definition-sha256"], driver.sha256);
    let list = list_pages(vec![vec![]]);
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().collect();
    rules.extend(w.rules());
    let (report, lines) = run(&client(&rules), &release, normal()).unwrap();
    assert_eq!(w.create.num_calls(), 1);
    assert_eq!(report.write_calls, 1);
    assert!(
        lines[0].starts_with("[1/1] driver ") && lines[0].ends_with(": created"),
        "{lines:?}"
    );
    // Deployed again: the one machine is unchanged, nothing is written.
    let (report, writes) = against_itself(&release, normal());
    assert_eq!(writes, 0);
    assert_eq!(report.write_calls, 0);
}

#[test]
fn unchanged_release_makes_no_write_calls() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    // Same definitions, but re-serialised: a semantic comparison must not care.
    let list = list_pages(vec![names(&release)]);
    let desc = describe(&release, |_, def| {
        serde_json::to_string(&serde_json::from_str::<serde_json::Value>(def).unwrap()).unwrap()
    });
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().chain(&desc).collect();
    rules.extend(w.rules());
    let (report, _) = run(&client(&rules), &release, normal()).unwrap();
    assert!(report
        .machines
        .iter()
        .all(|m| m.action == Action::Unchanged));
    assert_eq!(w.total(), 0, "an unchanged release must not write");
    assert_eq!(report.write_calls, 0);
}

#[test]
fn changed_definition_is_refused_with_a_diff_and_no_writes() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let list = list_pages(vec![names(&release)]);
    let desc = describe(&release, |name, def| {
        assert!(name.ends_with("-driver"), "{name}");
        def.replace("\"Read TPF status\"", "\"Read the TPF status\"")
    });
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().chain(&desc).collect();
    rules.extend(w.rules());
    let (report, _) = run(&client(&rules), &release, normal()).unwrap();
    assert!(report.refused());
    let Action::Refuse { diff } = &report.machines[0].action else {
        panic!("driver not refused: {:?}", report.machines[0].action);
    };
    assert!(
        diff.iter().any(|l| l == "+ States.\"Read TPF status\""),
        "{diff:?}"
    );
    assert!(
        diff.iter().any(|l| l == "- States.\"Read the TPF status\""),
        "{diff:?}"
    );
    assert_eq!(w.total(), 0, "a refusal writes nothing");
}

#[test]
fn force_replace_updates_and_lists_running_executions_across_pages() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let list = list_pages(vec![names(&release)]);
    let desc = describe(&release, |_, def| {
        def.replace("\"Read TPF status\"", "\"Read the TPF status\"")
    });
    let exec = |name: &str| {
        ExecutionListItem::builder()
            .execution_arn(format!("arn:x:{name}"))
            .state_machine_arn("arn:m")
            .name(name)
            .status(ExecutionStatus::Running)
            .start_date(DateTime::from_secs(0))
            .build()
            .unwrap()
    };
    let page1 = mock!(Client::list_executions)
        .match_requests(|r| {
            r.next_token().is_none() && r.status_filter() == Some(&ExecutionStatus::Running)
        })
        .then_output(move || {
            ListExecutionsOutput::builder()
                .executions(exec("e1"))
                .executions(exec("e2-g1"))
                .next_token("n1")
                .build()
                .unwrap()
        });
    let page2 = mock!(Client::list_executions)
        .match_requests(|r| r.next_token() == Some("n1"))
        .then_output(move || {
            ListExecutionsOutput::builder()
                .executions(exec("e3"))
                .build()
                .unwrap()
        });
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().chain(&desc).collect();
    rules.extend([&page1, &page2]);
    rules.extend(w.rules());
    let (report, lines) = run(&client(&rules), &release, forced()).unwrap();
    assert_eq!(
        w.update.num_calls(),
        1,
        "UpdateStateMachine replaces the driver"
    );
    assert_eq!(w.create.num_calls(), 0);
    assert_eq!(
        report.machines[0].running_executions,
        vec!["e1", "e2-g1", "e3"]
    );
    assert!(matches!(report.machines[0].action, Action::Replace { .. }));
    assert!(lines[0].contains("definition replaced"), "{lines:?}");
    assert_eq!(page2.num_calls(), 1);
}

#[test]
fn dry_run_plans_without_writes() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let opts = || Options {
        role_arn: None,
        dry_run: true,
        force_replace: false,
    };
    // Nothing deployed: the plan creates the driver, and writes nothing.
    let list = list_pages(vec![vec![]]);
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().collect();
    rules.extend(w.rules());
    let (report, _) = run(&client(&rules), &release, opts()).unwrap();
    assert_eq!(report.machines[0].action, Action::Create);
    assert_eq!(w.total(), 0);
    // Deployed already: the plan leaves it, and writes nothing.
    let (report, writes) = against_itself(&release, opts());
    assert_eq!(report.machines[0].action, Action::Unchanged);
    assert_eq!(writes, 0);
}

#[test]
fn list_state_machines_is_paginated() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let n = names(&release);
    let list = list_pages(vec![
        vec!["someone-elses-machine".into()],
        vec![],
        vec![n[0].clone()],
    ]);
    let desc = describe(&release, |_, def| def.to_string());
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().chain(&desc).collect();
    rules.extend(w.rules());
    let (report, _) = run(&client(&rules), &release, normal()).unwrap();
    assert!(report
        .machines
        .iter()
        .all(|m| m.action == Action::Unchanged));
    assert_eq!(
        w.total(),
        0,
        "machines on the third page are found, not re-created"
    );
    assert_eq!(list[2].num_calls(), 1);
}

fn error_case(rules: &[&Rule], release: &Release) -> Error {
    run(&client(rules), release, normal()).expect_err("must fail")
}

#[test]
fn throttling_is_classified_from_the_error_code() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let throttled = mock!(Client::list_state_machines)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"ThrottlingException","message":"Rate exceeded"}"#.into()),
        )
        .repeatedly()
        .build();
    let e = error_case(&[&throttled], &release);
    assert_eq!(e.code(), "DEPLOY_THROTTLED");
    assert!(e.hint().is_some_and(|h| h.contains("re-run")), "{e}");
}

#[test]
fn access_denied_is_classified() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let denied = mock!(Client::list_state_machines)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"AccessDeniedException","message":"not authorized"}"#.into()),
        )
        .repeatedly()
        .build();
    let e = error_case(&[&denied], &release);
    assert_eq!(e.code(), "DEPLOY_ACCESS_DENIED");
    // The service's own words are the cause, shown after what failed.
    assert_eq!(
        e.report().to_string().lines().next(),
        Some("error[DEPLOY_ACCESS_DENIED]: ListStateMachines failed: AccessDeniedException: not authorized")
    );
}

#[test]
fn concurrent_create_is_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let list = list_pages(vec![vec![]]);
    let exists = mock!(Client::create_state_machine).then_error(|| {
        CreateStateMachineError::StateMachineAlreadyExists(
            StateMachineAlreadyExists::builder()
                .message("State Machine Already Exists")
                .build(),
        )
    });
    let mut rules: Vec<&Rule> = list.iter().collect();
    rules.push(&exists);
    let e = error_case(&rules, &release);
    assert_eq!(e.code(), "DEPLOY_CONFLICT");
    assert_eq!(e.to_string(), "CreateStateMachine failed");
    assert_eq!(
        exists.num_calls(),
        1,
        "the first failed write stops the deploy"
    );
}

#[test]
fn invalid_definition_is_classified_from_the_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let list = list_pages(vec![vec![]]);
    let invalid = mock!(Client::create_state_machine).then_error(|| {
        CreateStateMachineError::InvalidDefinition(
            InvalidDefinition::builder().message("bad").build(),
        )
    });
    let mut rules: Vec<&Rule> = list.iter().collect();
    rules.push(&invalid);
    let e = error_case(&rules, &release);
    assert_eq!(e.code(), "DEPLOY_INVALID_DEFINITION");
    assert!(
        e.hint().is_some_and(|h| h.contains("tpf-sfn validate")),
        "{e}"
    );
}

#[test]
fn throttling_then_success_is_retried_by_the_sdk() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let flaky = mock!(Client::list_state_machines)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"ThrottlingException","message":"Rate exceeded"}"#.into()),
        )
        .output(|| {
            ListStateMachinesOutput::builder()
                .set_state_machines(Some(vec![]))
                .build()
                .unwrap()
        })
        .repeatedly()
        .build();
    let w = Writes::new();
    let mut rules: Vec<&Rule> = vec![&flaky];
    rules.extend(w.rules());
    let sfn = mock_client!(aws_sdk_sfn, RuleMode::MatchAny, &rules, |b| b.retry_config(
        RetryConfig::standard()
            .with_max_attempts(3)
            .with_initial_backoff(std::time::Duration::from_millis(1))
    ));
    let (report, _) = run(&sfn, &release, normal()).unwrap();
    assert_eq!(report.write_calls, 1);
    // The throttled call, then the SDK's retry of it.
    assert!(flaky.num_calls() >= 2, "{}", flaky.num_calls());
}

#[test]
fn tag_drift_on_an_unchanged_definition_is_a_tag_update_only() {
    let dir = tempfile::tempdir().unwrap();
    let deployed = compiled(dir.path());
    let list = list_pages(vec![names(&deployed)]);
    let desc = describe(&deployed, |_, def| def.to_string());
    // A newer tpf-sfn compiled the same definitions.
    let mut ours = deployed.clone();
    for m in &mut ours.machines {
        m.tags
            .insert("tpf-sfn:compiler-version".into(), "9.9.9".into());
    }
    let w = Writes::new();
    let mut rules: Vec<&Rule> = list.iter().chain(&desc).collect();
    rules.extend(w.rules());
    let (report, lines) = run(&client(&rules), &ours, normal()).unwrap();
    assert_eq!(
        report.machines[0].action,
        Action::Update {
            tags: vec!["tpf-sfn:compiler-version".into()],
            settings: vec![]
        }
    );
    assert_eq!(w.tag.num_calls(), 1);
    assert_eq!(w.update.num_calls() + w.create.num_calls(), 0);
    assert!(
        lines[0].ends_with("updated tag tpf-sfn:compiler-version"),
        "{lines:?}"
    );
}

/// A refused definition comes back with the whole definition echoed in the message (moto and
/// AWS both do): the error stays one line plus the hint, the echo is behind `--verbose`.
#[test]
fn a_refused_definition_prints_one_line_and_keeps_the_echo_for_verbose() {
    let dir = tempfile::tempdir().unwrap();
    let release = compiled(dir.path());
    let list = list_pages(vec![vec![]]);
    let echo = format!("Invalid State Machine Definition: {}", "x".repeat(17_000));
    let invalid = mock!(Client::create_state_machine).then_error(move || {
        CreateStateMachineError::InvalidDefinition(
            InvalidDefinition::builder().message(echo.clone()).build(),
        )
    });
    let mut rules: Vec<&Rule> = list.iter().collect();
    rules.push(&invalid);
    let e = error_case(&rules, &release);
    let short = e.report().to_string();
    let lines: Vec<&str> = short.lines().collect();
    assert_eq!(lines.len(), 2, "{short}");
    assert!(
        lines[0].starts_with(
            "error[DEPLOY_INVALID_DEFINITION]: CreateStateMachine failed: InvalidDefinition: Invalid State Machine Definition"
        ),
        "{short}"
    );
    assert!(lines[0].len() < 500, "{} characters", lines[0].len());
    assert!(lines[1].starts_with("  = hint: "), "{short}");
    let verbose = e.verbose(true).report().to_string();
    assert!(verbose.len() > 17_000, "--verbose keeps everything");
    assert!(verbose.contains("  = detail: "), "{}", &verbose[..200]);
}

/// The restaurant sample with the embedded default: the gateway binding's placeholders (its
/// function and its starter), what `init` writes until the user sets them.
fn compile_default(out: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
    let o = support::cli()
        .arg("compile")
        .arg(root.join("restaurant-approval.pipeline-contract.json"))
        .arg("--out")
        .arg(out)
        .output()
        .expect("compile");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `tpf-sfn deploy --out OUT --role-arn ROLE EXTRA...`: exit code and stderr.
fn deploy_cli(out: &str, extra: &[&str]) -> (Option<i32>, String, Vec<u8>) {
    let o = support::cli()
        .args([
            "deploy",
            "--out",
            out,
            "--role-arn",
            "arn:aws:iam::123456789012:role/tpf",
        ])
        .args(extra)
        .output()
        .expect("deploy");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.stdout,
    )
}

/// `deploy` of a release compiled with the gateway binding's placeholders is refused against
/// AWS, before any call (no endpoint, no credentials, no network here), naming each
/// tpf-sfn.toml key to set and the `--config` flag. Against a local emulator it goes ahead.
#[test]
fn deploy_refuses_placeholders_outside_an_emulator() {
    let dir = tempfile::tempdir().unwrap();
    compile_default(dir.path());
    let out = dir.path().to_str().unwrap();
    let (code, err, stdout) = deploy_cli(out, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("error[DEPLOY_PLACEHOLDER]"), "{err}");
    assert!(
        err.contains("tpf-sfn.toml#binding.gateway.function-arn")
            && err.contains("tpf-sfn.toml#binding.gateway.starter-function-arn"),
        "{err}"
    );
    assert!(err.contains("`--config`"), "{err}");
    assert!(
        stdout.is_empty(),
        "no plan printed: {}",
        String::from_utf8_lossy(&stdout)
    );
    // An emulator endpoint takes placeholders; nothing listens on port 9, so the deploy then
    // fails on the connection: one readable line and a hint, no SDK debug structures.
    let emulator = ["--endpoint-url", "http://127.0.0.1:9"];
    let (code, err, _) = deploy_cli(out, &emulator);
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains("DEPLOY_PLACEHOLDER"), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("error[DEPLOY_UNREACHABLE]: ListStateMachines failed: "),
        "{err}"
    );
    assert!(
        !err.contains("DispatchFailure") && !err.contains(" { "),
        "{err}"
    );
    let (_, err, _) = deploy_cli(out, &[emulator[0], emulator[1], "--verbose"]);
    assert!(err.contains("\n  = detail: "), "{err}");
}

/// A release compiled for an Action API v1 binding (an older tpf-sfn's, on either backend) is
/// refused by `deploy` from its manifest, before any call and whatever the endpoint, with the
/// gateway binding as the way out; the same release on the gateway binding is not.
#[test]
fn deploy_refuses_an_action_api_v1_release() {
    let dir = tempfile::tempdir().unwrap();
    compiled(dir.path());
    let out = dir.path().to_str().unwrap();
    let manifest_path = dir.path().join("manifest.json");
    let gateway = std::fs::read_to_string(&manifest_path).unwrap();
    let emulator = ["--endpoint-url", "http://127.0.0.1:9"];
    // The gateway release goes on to the calls (nothing listens on port 9).
    let (code, err, _) = deploy_cli(out, &emulator);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("error[DEPLOY_UNREACHABLE]"), "{err}");
    for (backend, kind) in [
        (None, "queue"),
        (None, "http"),
        (Some("lambda-durable"), "lambda"),
    ] {
        let mut m: serde_json::Value = serde_json::from_str(&gateway).unwrap();
        m["binding"]["kind"] = kind.into();
        if let Some(b) = backend {
            m["backend"] = b.into();
        }
        std::fs::write(&manifest_path, m.to_string()).unwrap();
        for endpoint in [&[][..], &emulator[..]] {
            let (code, err, stdout) = deploy_cli(out, endpoint);
            assert_eq!(code, Some(2), "{kind}: {err}");
            assert!(
                err.starts_with("error[ACTION_API_V1_RETIRED]"),
                "{kind}: {err}"
            );
            assert!(
                err.contains(&format!("manifest.json#/binding/kind is `{kind}`")),
                "{err}"
            );
            assert!(
                err.contains("binding.kind = \"gateway\"") && err.contains("[binding.gateway]"),
                "{err}"
            );
            assert!(!err.contains("DEPLOY_"), "refused before any call: {err}");
            assert!(stdout.is_empty(), "{}", String::from_utf8_lossy(&stdout));
        }
    }
}

/// Answers every request with an empty `ListStateMachines` page: an account with no machines.
/// Listens on loopback; the deploy reaches it as `0.0.0.0`, an address that is not a loopback
/// name (so it stands for AWS, where placeholders are refused) yet connects to this host only.
fn empty_account() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 65536];
            let mut seen = Vec::new();
            // Read the head and the body it announces, then answer and close.
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen).to_ascii_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if seen.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let body = r#"{"stateMachines":[]}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://0.0.0.0:{port}")
}

/// `deploy --dry-run` of a release with placeholders shows the plan, then the refusal, as
/// `terraform plan` does; the exit is the refusal's.
#[test]
fn a_dry_run_with_placeholders_shows_the_plan_then_the_refusal() {
    let dir = tempfile::tempdir().unwrap();
    compile_default(dir.path());
    let endpoint = empty_account();
    let (code, err, stdout) = deploy_cli(
        dir.path().to_str().unwrap(),
        &["--dry-run", "--endpoint-url", &endpoint],
    );
    let stdout = String::from_utf8_lossy(&stdout);
    assert_eq!(code, Some(2), "{stdout}{err}");
    assert!(
        stdout.contains("  create: ") && stdout.contains("dry run: no write calls"),
        "the plan: {stdout}{err}"
    );
    assert!(err.contains("error[DEPLOY_PLACEHOLDER]"), "{err}");
}

/// The same dry run with `--format json` prints one JSON document: the plan, with the
/// placeholder refusal's diagnostics in it; the exit is still the refusal's. With the plan itself
/// failing (nothing listens), the one document is the refusal with the plan's failure.
#[test]
fn a_json_dry_run_with_placeholders_is_one_document_with_the_refusal_inside() {
    let dir = tempfile::tempdir().unwrap();
    compile_default(dir.path());
    let out = dir.path().to_str().unwrap();
    let endpoint = empty_account();
    let json = ["--dry-run", "--format", "json"];
    let (code, err, stdout) = deploy_cli(
        out,
        &[json[0], json[1], json[2], "--endpoint-url", &endpoint],
    );
    assert_eq!(code, Some(2), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "one JSON document ({e}): {}",
            String::from_utf8_lossy(&stdout)
        )
    });
    assert_eq!(doc["diagnostics"][0]["code"], "DEPLOY_PLACEHOLDER", "{doc}");
    assert!(doc["report"]["machines"].is_array(), "the plan: {doc}");
    assert!(err.is_empty(), "nothing on stderr: {err}");

    let (code, err, stdout) = deploy_cli(
        out,
        &[
            json[0],
            json[1],
            json[2],
            "--endpoint-url",
            "http://0.0.0.0:9",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "one JSON document ({e}): {}",
            String::from_utf8_lossy(&stdout)
        )
    });
    assert_eq!(doc["diagnostics"][0]["code"], "DEPLOY_PLACEHOLDER", "{doc}");
    assert_eq!(doc["planError"]["code"], "DEPLOY_UNREACHABLE", "{doc}");
}
