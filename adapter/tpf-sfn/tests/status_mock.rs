//! `status` call sequences against mocked clients: generations found across ListExecutions
//! pages by name, the latest state picked by event id, and errors classified.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::get_item::GetItemOutput;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_sfn::operation::describe_execution::DescribeExecutionOutput;
use aws_sdk_sfn::operation::get_execution_history::GetExecutionHistoryOutput;
use aws_sdk_sfn::operation::list_executions::ListExecutionsOutput;
use aws_sdk_sfn::operation::list_state_machines::ListStateMachinesOutput;
use aws_sdk_sfn::primitives::DateTime;
use aws_sdk_sfn::types::{
    ExecutionListItem, ExecutionStatus, HistoryEvent, HistoryEventType, StateEnteredEventDetails,
    StateMachineListItem, StateMachineType,
};
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use tpf_sfn::aws::release::{
    CompilerView, Identity, LoggingView, MachineView, MachinesView, ManifestView,
};
use tpf_sfn::aws::status::{status, Query, Report};

const MACHINE: &str = "tpf-x-driver";

fn manifest() -> ManifestView {
    let machine = |name: &str| MachineView {
        name: name.into(),
        definition: "driver.asl.json".into(),
        definition_sha256: String::new(),
        schedule: None,
        tags: Default::default(),
    };
    ManifestView {
        compiler: CompilerView {
            version: "0".into(),
        },
        identity: Identity {
            pipeline_id: "p".into(),
            contract_version: "c".into(),
            release_version: "r".into(),
        },
        machines: MachinesView {
            driver: machine(MACHINE),
            sweeper: Some(machine("tpf-x-sweeper")),
        },
        wakeup_table: "tpf_sfn_wakeup".into(),
        logging: LoggingView {
            level: "OFF".into(),
            include_execution_data: false,
            log_group_arn: None,
        },
        tracing: false,
        binding: Default::default(),
    }
}

fn record_item(status: &str) -> HashMap<String, AttributeValue> {
    let s = |v: &str| AttributeValue::S(v.into());
    let n = |v: &str| AttributeValue::N(v.into());
    HashMap::from([
        ("tenant_id".into(), s("t1")),
        ("execution_id".into(), s("e1")),
        ("execution_key".into(), s("k")),
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

fn exec(name: &str, status: ExecutionStatus, at: i64) -> ExecutionListItem {
    ExecutionListItem::builder()
        .execution_arn(format!("arn:exec:{name}"))
        .state_machine_arn("arn:sm")
        .name(name)
        .status(status)
        .start_date(DateTime::from_secs(at))
        .build()
        .unwrap()
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

fn sfn_rules() -> Vec<Rule> {
    vec![
        mock!(aws_sdk_sfn::Client::list_state_machines).then_output(|| {
            ListStateMachinesOutput::builder()
                .state_machines(
                    StateMachineListItem::builder()
                        .name(MACHINE)
                        .state_machine_arn("arn:sm")
                        .r#type(StateMachineType::Standard)
                        .creation_date(DateTime::from_secs(0))
                        .build()
                        .unwrap(),
                )
                .build()
                .unwrap()
        }),
        mock!(aws_sdk_sfn::Client::list_executions)
            .match_requests(|r| r.next_token().is_none())
            .then_output(|| {
                ListExecutionsOutput::builder()
                    .executions(exec("e1-g1", ExecutionStatus::Running, 20))
                    .executions(exec("e10", ExecutionStatus::Running, 15))
                    .next_token("more")
                    .build()
                    .unwrap()
            }),
        mock!(aws_sdk_sfn::Client::list_executions)
            .match_requests(|r| r.next_token() == Some("more"))
            .then_output(|| {
                ListExecutionsOutput::builder()
                    .executions(exec("e1", ExecutionStatus::Succeeded, 10))
                    .executions(exec("e1-x", ExecutionStatus::Running, 11))
                    .build()
                    .unwrap()
            }),
        mock!(aws_sdk_sfn::Client::describe_execution).then_compute_output(|r| {
            let arn = r.execution_arn().unwrap_or_default().to_string();
            let running = arn.ends_with("-g1");
            DescribeExecutionOutput::builder()
                .execution_arn(&arn)
                .state_machine_arn("arn:sm")
                .status(if running {
                    ExecutionStatus::Running
                } else {
                    ExecutionStatus::Succeeded
                })
                .start_date(DateTime::from_secs(0))
                .build()
                .unwrap()
        }),
        // Oldest first, as moto returns it regardless of reverseOrder, over two pages: the
        // latest state is on the last one.
        mock!(aws_sdk_sfn::Client::get_execution_history)
            .match_requests(|r| r.next_token().is_none())
            .then_output(|| {
                GetExecutionHistoryOutput::builder()
                    .events(entered(2, "Start driver generation"))
                    .events(entered(5, "Process work item"))
                    .next_token("h2")
                    .build()
                    .unwrap()
            }),
        mock!(aws_sdk_sfn::Client::get_execution_history)
            .match_requests(|r| r.next_token() == Some("h2"))
            .then_output(|| {
                GetExecutionHistoryOutput::builder()
                    .events(entered(9, "Await Restaurant Decision"))
                    .build()
                    .unwrap()
            }),
    ]
}

fn run(ddb_rules: &[&Rule]) -> Result<Report, tpf_sfn::error::Error> {
    let sfn_rules = sfn_rules();
    let sfn = mock_client!(aws_sdk_sfn, RuleMode::MatchAny, &sfn_rules);
    let ddb = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, ddb_rules, |b| b
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled()));
    let m = manifest();
    let q = Query {
        manifest: &m,
        tenant: "t1",
        execution: "e1",
        execution_table: "tpf_execution",
        wakeup_table: "tpf_sfn_wakeup",
        console_region: Some("eu-west-1"),
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(status(&sfn, &ddb, &q))
}

#[test]
fn generations_are_found_across_pages_and_only_by_their_names() {
    let get = mock!(aws_sdk_dynamodb::Client::get_item)
        .match_requests(|r| r.table_name() == Some("tpf_execution"))
        .then_output(|| {
            GetItemOutput::builder()
                .set_item(Some(record_item("WAITING_EXTERNAL")))
                .build()
        });
    let pointer = mock!(aws_sdk_dynamodb::Client::get_item)
        .match_requests(|r| r.table_name() == Some("tpf_sfn_wakeup"))
        .then_output(|| GetItemOutput::builder().build());
    let report = run(&[&get, &pointer]).unwrap();
    let names: Vec<&str> = report.generations.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        names,
        ["e1", "e1-g1"],
        "e10 and e1-x belong to other executions"
    );
    assert_eq!(
        report.generations[1].current_state.as_deref(),
        Some("Await Restaurant Decision")
    );
    assert_eq!(
        report.generations[1].console_url.as_deref(),
        Some("https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1#/v2/executions/details/arn:exec:e1-g1")
    );
    let record = report.record.as_ref().unwrap();
    assert_eq!(record.status, "WAITING_EXTERNAL");
    assert!(record
        .next_due
        .as_deref()
        .unwrap()
        .starts_with("2023-11-14T"));
    assert!(!report.verdict.diverged, "{:?}", report.verdict);
    assert!(report.wakeup_pointer.is_none());
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
    let pointer =
        mock!(aws_sdk_dynamodb::Client::get_item).then_output(|| GetItemOutput::builder().build());
    let report = run(&[&get, &pointer]).unwrap();
    assert_eq!(report.verdict.code, "STATUS_DRIVER_AFTER_TERMINAL");
    assert!(report.verdict.fix.as_deref().unwrap().contains("e1-g1"));
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
    let pointer =
        mock!(aws_sdk_dynamodb::Client::get_item).then_output(|| GetItemOutput::builder().build());
    let report = run(&[&get, &pointer]).unwrap();
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
