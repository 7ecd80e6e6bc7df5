//! `status` call sequences against mocked clients: a gateway release's generations found by
//! TPF's names, the latest state picked by event id across history pages, and errors
//! classified.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::get_item::GetItemOutput;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_sfn::operation::describe_execution::DescribeExecutionOutput;
use aws_sdk_sfn::operation::get_execution_history::GetExecutionHistoryOutput;
use aws_sdk_sfn::operation::list_state_machines::ListStateMachinesOutput;
use aws_sdk_sfn::primitives::DateTime;
use aws_sdk_sfn::types::{
    ExecutionStatus, HistoryEvent, HistoryEventType, StateEnteredEventDetails,
    StateMachineListItem, StateMachineType,
};
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use tpf_sfn::aws::release::Identity;
use tpf_sfn::aws::status::{status, Host, Query, Report, Target};

const MACHINE: &str = "tpf-x-driver";
const FUNCTION: &str = "tpf-x-durable";

fn target(host: Host) -> Target {
    Target {
        identity: Identity {
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
        },
        driver: match host {
            Host::StateMachine => MACHINE.into(),
            Host::DurableFunction => FUNCTION.into(),
        },
        host,
    }
}

fn record_item(status: &str) -> HashMap<String, AttributeValue> {
    let s = |v: &str| AttributeValue::S(v.into());
    let n = |v: &str| AttributeValue::N(v.into());
    HashMap::from([
        ("tenant_id".into(), s("t1")),
        ("execution_id".into(), s("e1")),
        // The application's key `order-7`, scoped as TPF stores it: the generations' names
        // are TPF's from it.
        (
            "execution_key".into(),
            s(&tpf_wire::ids::scoped_root_execution_key("p", "r", "order-7").unwrap()),
        ),
        ("pipeline_id".into(), s("p")),
        ("contract_version".into(), s("c")),
        ("release_version".into(), s("r")),
        ("result_shape".into(), s("SINGLE")),
        ("status".into(), s(status)),
        ("version".into(), n("3")),
        ("current_step_index".into(), n("2")),
        ("attempt".into(), n("0")),
        ("next_due_epoch_ms".into(), n("1700000000000")),
        ("input_payload_json".into(), s("{}")),
        ("created_at_epoch_ms".into(), n("1")),
        ("updated_at_epoch_ms".into(), n("1")),
        ("ttl_epoch_s".into(), n("4000000000")),
    ])
}

fn entered(id: i64, name: &str) -> HistoryEvent {
    HistoryEvent::builder()
        .id(id)
        .r#type(HistoryEventType::TaskStateEntered)
        .timestamp(DateTime::from_secs(id))
        .state_entered_event_details(
            StateEnteredEventDetails::builder()
                .name(name)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// ListStateMachines answering the driver machine under `arn`.
fn machine_listed(arn: &'static str) -> Rule {
    mock!(aws_sdk_sfn::Client::list_state_machines).then_output(move || {
        ListStateMachinesOutput::builder()
            .state_machines(
                StateMachineListItem::builder()
                    .name(MACHINE)
                    .state_machine_arn(arn)
                    .r#type(StateMachineType::Standard)
                    .creation_date(DateTime::from_secs(0))
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap()
    })
}

const MACHINE_ARN: &str = "arn:aws:states:eu-west-1:1:stateMachine:tpf-x-driver";

fn gateway_name(generation: i64) -> String {
    tpf_wire::gateway::names::durable_execution_name(Some("t1"), Some("order-7"), generation)
        .unwrap()
}

/// The machine with generation 1 (ended) and 2 (running) of the execution; no generation 3.
/// No ListExecutions rule: listing every execution the machine ran would fail the test.
fn sfn_rules() -> Vec<Rule> {
    use aws_sdk_sfn::operation::describe_execution::DescribeExecutionError;
    use aws_sdk_sfn::types::error::ExecutionDoesNotExist;
    let (g1, g2) = (gateway_name(1), gateway_name(2));
    vec![
        machine_listed(MACHINE_ARN),
        mock!(aws_sdk_sfn::Client::describe_execution)
            .match_requests(move |r| {
                let arn = r.execution_arn().unwrap_or_default();
                arn.ends_with(&g1) || arn.ends_with(&g2)
            })
            .then_compute_output(|r| {
                let arn = r.execution_arn().unwrap_or_default().to_string();
                DescribeExecutionOutput::builder()
                    .execution_arn(&arn)
                    .state_machine_arn(MACHINE_ARN)
                    .status(if arn.ends_with(&gateway_name(2)) {
                        ExecutionStatus::Running
                    } else {
                        ExecutionStatus::Succeeded
                    })
                    .start_date(DateTime::from_secs(0))
                    .build()
                    .unwrap()
            }),
        mock!(aws_sdk_sfn::Client::describe_execution).then_error(|| {
            DescribeExecutionError::ExecutionDoesNotExist(ExecutionDoesNotExist::builder().build())
        }),
        // Oldest first, as moto returns it regardless of reverseOrder, over two pages: the
        // latest state is on the last one.
        mock!(aws_sdk_sfn::Client::get_execution_history)
            .match_requests(|r| r.next_token().is_none())
            .then_output(|| {
                GetExecutionHistoryOutput::builder()
                    .events(entered(2, "Submit TPF execution"))
                    .events(entered(5, "Read TPF status"))
                    .next_token("h2")
                    .build()
                    .unwrap()
            }),
        mock!(aws_sdk_sfn::Client::get_execution_history)
            .match_requests(|r| r.next_token() == Some("h2"))
            .then_output(|| {
                GetExecutionHistoryOutput::builder()
                    .events(entered(9, "Park until TPF's await completes"))
                    .build()
                    .unwrap()
            }),
    ]
}

fn run(ddb_rules: &[&Rule]) -> Result<Report, tpf_sfn::error::Error> {
    run_with(&target(Host::StateMachine), &sfn_rules(), &[], ddb_rules)
}

fn run_with(
    t: &Target,
    sfn_rules: &[Rule],
    lambda_rules: &[Rule],
    ddb_rules: &[&Rule],
) -> Result<Report, tpf_sfn::error::Error> {
    let sfn = mock_client!(aws_sdk_sfn, RuleMode::MatchAny, sfn_rules);
    let lambda = mock_client!(aws_sdk_lambda, RuleMode::MatchAny, lambda_rules);
    let ddb = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, ddb_rules, |b| b
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled()));
    let q = Query {
        target: t,
        tenant: "t1",
        execution: "e1",
        execution_table: "tpf_execution",
        console_region: Some("eu-west-1"),
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(status(&sfn, &lambda, &ddb, &q))
}

#[test]
fn generations_are_found_by_tpfs_names_with_their_latest_state() {
    let get = mock!(aws_sdk_dynamodb::Client::get_item)
        .match_requests(|r| r.table_name() == Some("tpf_execution"))
        .then_output(|| {
            GetItemOutput::builder()
                .set_item(Some(record_item("WAITING_EXTERNAL")))
                .build()
        });
    let report = run(&[&get]).unwrap();
    let names: Vec<String> = report.generations.iter().map(|g| g.name.clone()).collect();
    assert_eq!(names, [gateway_name(1), gateway_name(2)]);
    assert!(report.generations[0]
        .arn
        .starts_with("arn:aws:states:eu-west-1:1:execution:tpf-x-driver:tpf-"));
    assert_eq!(
        report.generations[1].current_state.as_deref(),
        Some("Park until TPF's await completes")
    );
    assert_eq!(
        report.generations[1].console_url.as_deref(),
        Some(
            format!(
                "https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1#/v2/executions/details/arn:aws:states:eu-west-1:1:execution:tpf-x-driver:{}",
                gateway_name(2)
            )
            .as_str()
        )
    );
    let record = report.record.as_ref().unwrap();
    assert_eq!(record.status, "WAITING_EXTERNAL");
    assert!(record
        .next_due
        .as_deref()
        .unwrap()
        .starts_with("2023-11-14T"));
    assert!(!report.verdict.diverged, "{:?}", report.verdict);
    // The report carries no v1 wakeup-table pointer.
    let json = serde_json::to_value(&report).unwrap();
    assert!(json.get("wakeupPointer").is_none(), "{json}");
}

#[test]
fn terminal_record_with_a_live_driver_diverges() {
    let get = mock!(aws_sdk_dynamodb::Client::get_item)
        .match_requests(|r| r.table_name() == Some("tpf_execution"))
        .then_output(|| {
            GetItemOutput::builder()
                .set_item(Some(record_item("SUCCEEDED")))
                .build()
        });
    let report = run(&[&get]).unwrap();
    assert_eq!(report.verdict.code, "STATUS_DRIVER_AFTER_TERMINAL");
    assert!(report
        .verdict
        .fix
        .as_deref()
        .unwrap()
        .contains(&gateway_name(2)));
    // The row still holds its last due time; a finished execution is due for nothing.
    let record = report.record.as_ref().unwrap();
    assert!(record.terminal);
    assert_eq!(record.next_due, None);
}

#[test]
fn remote_outcome_unknown_asks_the_operator_for_a_redrive_with_allow_failed() {
    let get = mock!(aws_sdk_dynamodb::Client::get_item)
        .match_requests(|r| r.table_name() == Some("tpf_execution"))
        .then_output(|| {
            let mut item = record_item("REMOTE_OUTCOME_UNKNOWN");
            item.insert(
                "error_code".into(),
                AttributeValue::S("RemoteDeadlineExceeded".into()),
            );
            GetItemOutput::builder().set_item(Some(item)).build()
        });
    let report = run(&[&get]).unwrap();
    assert_eq!(report.verdict.code, "STATUS_REMOTE_OUTCOME_UNKNOWN");
    assert!(report.verdict.diverged);
    assert!(report.verdict.summary.contains("RemoteDeadlineExceeded"));
    let fix = report.verdict.fix.as_deref().unwrap();
    assert!(
        fix.contains("\"allowFailed\":true") && fix.contains("\"expectedVersion\":3"),
        "{fix}"
    );
    // TPF does not call it terminal; the record view says so too.
    assert!(!report.record.as_ref().unwrap().terminal);
}

#[test]
fn access_denied_on_the_execution_table_is_classified() {
    let denied = mock!(aws_sdk_dynamodb::Client::get_item)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"com.amazonaws.dynamodb.v20120810#AccessDeniedException","message":"no"}"#.into()),
        )
        .repeatedly()
        .build();
    let e = run(&[&denied]).unwrap_err();
    assert_eq!(e.code(), "STATUS_ACCESS_DENIED", "{e}");
}

#[test]
fn a_row_that_is_not_an_execution_record_is_reported() {
    let get = mock!(aws_sdk_dynamodb::Client::get_item).then_output(|| {
        let mut item = record_item("WAITING_EXTERNAL");
        item.insert("status".into(), AttributeValue::S("SLEEPING".into()));
        GetItemOutput::builder().set_item(Some(item)).build()
    });
    let e = run(&[&get]).unwrap_err();
    assert_eq!(e.code(), "STATUS_VALIDATION");
    assert!(e.report().to_string().contains("status"), "{}", e.report());
}

/// TPF's record of the execution in `status`.
fn gateway_record(status: &str) -> Rule {
    let status = status.to_string();
    mock!(aws_sdk_dynamodb::Client::get_item)
        .match_requests(|r| r.table_name() == Some("tpf_execution"))
        .then_output(move || {
            GetItemOutput::builder()
                .set_item(Some(record_item(&status)))
                .build()
        })
}

fn durable_rules(statuses: &'static [(i64, &'static str)]) -> Vec<Rule> {
    use aws_sdk_lambda::operation::get_durable_execution::GetDurableExecutionOutput;
    use aws_sdk_lambda::operation::get_function::GetFunctionOutput;
    use aws_sdk_lambda::operation::list_durable_executions_by_function::ListDurableExecutionsByFunctionOutput;
    use aws_sdk_lambda::types::{
        ErrorObject, Execution, ExecutionStatus as X, FunctionConfiguration,
    };
    let status = |s: &str| X::from(s);
    vec![
        mock!(aws_sdk_lambda::Client::get_function).then_output(|| {
            GetFunctionOutput::builder()
                .configuration(
                    FunctionConfiguration::builder()
                        .function_arn(format!("arn:aws:lambda:eu-west-1:1:function:{FUNCTION}"))
                        .build(),
                )
                .build()
        }),
        mock!(aws_sdk_lambda::Client::list_durable_executions_by_function).then_compute_output(
            move |r| {
                let mut out = ListDurableExecutionsByFunctionOutput::builder();
                for (g, s) in statuses {
                    let name = gateway_name(*g);
                    if r.durable_execution_name() == Some(name.as_str()) {
                        out = out.durable_executions(
                            Execution::builder()
                                .durable_execution_arn(format!("arn:aws:lambda:eu-west-1:1:function:{FUNCTION}:1/durable-execution/{name}/id{g}"))
                                .durable_execution_name(&name)
                                .function_arn("arn:f")
                                .status(status(s))
                                .start_timestamp(DateTime::from_secs(*g))
                                .build()
                                .unwrap(),
                        );
                    }
                }
                out.build()
            },
        ),
        mock!(aws_sdk_lambda::Client::get_durable_execution).then_compute_output(move |r| {
            let arn = r.durable_execution_arn().unwrap_or_default().to_string();
            let (g, s) = statuses
                .iter()
                .find(|(g, _)| arn.ends_with(&format!("/id{g}")))
                .copied()
                .unwrap();
            let mut out = GetDurableExecutionOutput::builder()
                .durable_execution_arn(&arn)
                .durable_execution_name(gateway_name(g))
                .function_arn("arn:f")
                .status(status(s))
                .start_timestamp(DateTime::from_secs(g));
            if s == "FAILED" {
                out = out.error(ErrorObject::builder().error_type("TPF.TransportError").build());
            }
            out.build().unwrap()
        }),
    ]
}

#[test]
fn a_durable_gateway_drivers_ended_generation_names_the_next_one_to_start() {
    let record = gateway_record("WAIT_RETRY");
    let report = run_with(
        &target(Host::DurableFunction),
        &[],
        &durable_rules(&[(1, "SUCCEEDED"), (2, "FAILED")]),
        &[&record],
    )
    .unwrap();
    let names: Vec<&str> = report.generations.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, [gateway_name(1), gateway_name(2)]);
    assert_eq!(
        report.generations[1].error.as_deref(),
        Some("TPF.TransportError")
    );
    assert_eq!(
        report.generations[1].console_url.as_deref(),
        Some("https://eu-west-1.console.aws.amazon.com/lambda/home?region=eu-west-1#/functions/tpf-x-durable")
    );
    assert_eq!(report.verdict.code, "STATUS_NO_LIVE_DRIVER");
    let fix = report.verdict.fix.as_deref().unwrap();
    assert!(
        fix.contains(&gateway_name(3)) && fix.contains("generation 3"),
        "{fix}"
    );
}

#[test]
fn a_durable_driver_after_tpfs_end_is_stopped_with_stop_durable_execution() {
    let record = gateway_record("SUCCEEDED");
    let report = run_with(
        &target(Host::DurableFunction),
        &[],
        &durable_rules(&[(1, "RUNNING")]),
        &[&record],
    )
    .unwrap();
    assert_eq!(report.verdict.code, "STATUS_DRIVER_AFTER_TERMINAL");
    assert!(report
        .verdict
        .fix
        .as_deref()
        .unwrap()
        .contains("StopDurableExecution"));
}

#[test]
fn a_durable_driver_function_that_is_not_deployed_is_named() {
    use aws_sdk_lambda::operation::get_function::GetFunctionError;
    use aws_sdk_lambda::types::error::ResourceNotFoundException;
    let missing = mock!(aws_sdk_lambda::Client::get_function).then_error(|| {
        GetFunctionError::ResourceNotFoundException(ResourceNotFoundException::builder().build())
    });
    let record = gateway_record("RUNNING");
    let report = run_with(&target(Host::DurableFunction), &[], &[missing], &[&record]).unwrap();
    assert_eq!(report.verdict.code, "STATUS_MACHINE_MISSING");
    assert!(
        report
            .verdict
            .summary
            .contains("durable driver function tpf-x-durable"),
        "{}",
        report.verdict.summary
    );
    assert!(report.driver_arn.is_none());
}
