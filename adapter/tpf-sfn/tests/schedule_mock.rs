//! The sweeper's schedule against mocked EventBridge Scheduler clients: created when missing,
//! no write call when unchanged, updated when it differs, errors classified.

use aws_sdk_scheduler::operation::create_schedule::CreateScheduleOutput;
use aws_sdk_scheduler::operation::get_schedule::{GetScheduleError, GetScheduleOutput};
use aws_sdk_scheduler::operation::update_schedule::UpdateScheduleOutput;
use aws_sdk_scheduler::types::error::{ResourceNotFoundException, ThrottlingException};
use aws_sdk_scheduler::types::{ScheduleState, Target};
use aws_sdk_scheduler::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use tpf_sfn::aws::schedule::{deploy, Action, Desired, Report};
use tpf_sfn::error::Error;

fn desired() -> Desired {
    Desired {
        name: "tpf-x-sweeper-schedule".into(),
        expression: "rate(1 minute)".into(),
        sweeper_arn: Some("arn:aws:states:us-east-1:1:stateMachine:tpf-x-sweeper".into()),
        role_arn: "arn:aws:iam::1:role/scheduler".into(),
    }
}

fn existing(expression: &'static str) -> Rule {
    mock!(Client::get_schedule).then_output(move || {
        let d = desired();
        GetScheduleOutput::builder()
            .name(&d.name)
            .schedule_expression(expression)
            .state(ScheduleState::Enabled)
            .target(
                Target::builder()
                    .arn(d.sweeper_arn.unwrap())
                    .role_arn(d.role_arn)
                    .input("{}")
                    .build()
                    .unwrap(),
            )
            .build()
    })
}

struct Writes {
    create: Rule,
    update: Rule,
}

impl Writes {
    fn new() -> Self {
        Self {
            create: mock!(Client::create_schedule).then_output(|| {
                CreateScheduleOutput::builder()
                    .schedule_arn("arn:s")
                    .build()
                    .unwrap()
            }),
            update: mock!(Client::update_schedule).then_output(|| {
                UpdateScheduleOutput::builder()
                    .schedule_arn("arn:s")
                    .build()
                    .unwrap()
            }),
        }
    }
}

fn run(get: &Rule, w: &Writes, dry_run: bool) -> Result<Report, Error> {
    let sch = mock_client!(
        aws_sdk_scheduler,
        RuleMode::MatchAny,
        [get, &w.create, &w.update],
        |b| b.retry_config(aws_sdk_scheduler::config::retry::RetryConfig::disabled())
    );
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(deploy(&sch, &desired(), dry_run))
}

#[test]
fn missing_schedule_is_created_once() {
    let get = mock!(Client::get_schedule).then_error(|| {
        GetScheduleError::ResourceNotFoundException(
            ResourceNotFoundException::builder()
                .message("no")
                .build()
                .unwrap(),
        )
    });
    let w = Writes::new();
    let r = run(&get, &w, false).unwrap();
    assert_eq!(r.action, Action::Create);
    assert_eq!((w.create.num_calls(), w.update.num_calls()), (1, 0));
    let w = Writes::new();
    run(&get, &w, true).unwrap();
    assert_eq!(w.create.num_calls(), 0, "a dry run writes nothing");
}

#[test]
fn unchanged_schedule_makes_no_write_calls() {
    let get = existing("rate(1 minute)");
    let w = Writes::new();
    let r = run(&get, &w, false).unwrap();
    assert_eq!(r.action, Action::Unchanged);
    assert_eq!(r.write_calls, 0);
    assert_eq!(w.create.num_calls() + w.update.num_calls(), 0);
}

#[test]
fn a_different_expression_is_updated() {
    let get = existing("rate(5 minutes)");
    let w = Writes::new();
    let r = run(&get, &w, false).unwrap();
    assert_eq!(
        r.action,
        Action::Update {
            changes: vec!["expression rate(5 minutes) → rate(1 minute)".into()]
        }
    );
    assert_eq!(w.update.num_calls(), 1);
}

#[test]
fn throttling_is_classified_from_the_modeled_error() {
    let get = mock!(Client::get_schedule).then_error(|| {
        GetScheduleError::ThrottlingException(
            ThrottlingException::builder()
                .message("slow down")
                .build()
                .unwrap(),
        )
    });
    let e = run(&get, &Writes::new(), false).unwrap_err();
    assert_eq!(e.code(), "DEPLOY_THROTTLED");
}
