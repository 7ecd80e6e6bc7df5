//! The relay against mocked SQS and Step Functions and a canned gateway: the token is answered
//! before the message is deleted, closed tokens count as done, an unanswered token keeps its
//! message, and a malformed message is deleted without a call.

use std::sync::{Arc, Mutex};

use aws_sdk_sfn::error::ErrorMetadata;
use aws_sdk_sfn::operation::send_task_failure::{SendTaskFailureError, SendTaskFailureOutput};
use aws_sdk_sfn::operation::send_task_success::{SendTaskSuccessError, SendTaskSuccessOutput};
use aws_sdk_sfn::types::error::{InvalidToken, TaskTimedOut};
use aws_sdk_sqs::operation::delete_message::DeleteMessageOutput;
use aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput;
use aws_sdk_sqs::types::Message;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use tpf_sfn::relay::gateway::Invocation;
use tpf_sfn::relay::{PassReport, Relay};

type Log = Arc<Mutex<Vec<String>>>;

fn receive(bodies: &[&str]) -> Rule {
    let bodies: Vec<String> = bodies.iter().map(|b| b.to_string()).collect();
    mock!(aws_sdk_sqs::Client::receive_message).then_output(move || {
        ReceiveMessageOutput::builder()
            .set_messages(Some(
                bodies
                    .iter()
                    .enumerate()
                    .map(|(i, b)| {
                        Message::builder()
                            .message_id(format!("m{i}"))
                            .receipt_handle(format!("r{i}"))
                            .body(b)
                            .build()
                    })
                    .collect(),
            ))
            .build()
    })
}

fn delete(log: &Log) -> Rule {
    let log = log.clone();
    mock!(aws_sdk_sqs::Client::delete_message).then_compute_output(move |r| {
        log.lock()
            .unwrap()
            .push(format!("delete {}", r.receipt_handle().unwrap_or("")));
        DeleteMessageOutput::builder().build()
    })
}

fn success(log: &Log) -> Rule {
    let log = log.clone();
    mock!(aws_sdk_sfn::Client::send_task_success).then_compute_output(move |r| {
        log.lock().unwrap().push(format!(
            "success {} {}",
            r.task_token().unwrap_or(""),
            r.output().unwrap_or("")
        ));
        SendTaskSuccessOutput::builder().build()
    })
}

fn failure(log: &Log) -> Rule {
    let log = log.clone();
    mock!(aws_sdk_sfn::Client::send_task_failure).then_compute_output(move |r| {
        log.lock().unwrap().push(format!(
            "failure {} {}",
            r.task_token().unwrap_or(""),
            r.error().unwrap_or("")
        ));
        SendTaskFailureOutput::builder().build()
    })
}

/// The gateway's answer, canned; each invoke is logged.
struct Gateway {
    answer: Invocation,
    log: Log,
}

impl tpf_sfn::relay::gateway::GatewayInvoker for Gateway {
    async fn invoke(&self, request: &str) -> Invocation {
        self.log.lock().unwrap().push(format!("invoke {request}"));
        self.answer.clone()
    }
}

fn gateway_pass(bodies: &[&str], answer: Invocation, sfn_rules: &[&Rule], log: &Log) -> PassReport {
    let receive = receive(bodies);
    let delete = delete(log);
    let sqs = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, &[&receive, &delete]);
    let sfn = mock_client!(aws_sdk_sfn, RuleMode::MatchAny, sfn_rules, |b| b
        .retry_config(aws_sdk_sfn::config::retry::RetryConfig::disabled()));
    let handler = tpf_sfn::relay::gateway::GatewayRelay::new(
        sfn,
        Gateway {
            answer,
            log: log.clone(),
        },
    );
    let relay = Relay::with_handler(sqs, "http://queue", handler);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(relay.poll_once())
        .unwrap()
}

fn lines(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// Only what reached SQS and Step Functions, not the invokes.
fn answers(log: &Log) -> Vec<String> {
    lines(log)
        .into_iter()
        .filter(|l| !l.starts_with("invoke "))
        .collect()
}

const GATEWAY: &str = r#"{"gatewayRequest":{"operation":"STATUS","tenantId":"t1","executionId":"e1","generation":1},"taskToken":"tok-g","park":false}"#;
const PARKED: &str = r#"{"gatewayRequest":{"operation":"REGISTER_CALLBACK","tenantId":"t1","executionId":"e1","generation":1},"taskToken":"tok-p","park":true}"#;
const RESPONSE: &str = r#"{"executionStatus":"RUNNING"}"#;
const FAILED: &str = r#"{"errorMessage":"m","errorType":"java.lang.IllegalStateException"}"#;

/// The gateway transport: the token is answered, then the message deleted; a parked call's
/// success deletes without an answer. Negative: an answer that does not go through keeps the
/// message for redelivery.
#[test]
fn gateway_messages_are_deleted_only_after_their_answer() {
    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    let report = gateway_pass(
        &[GATEWAY],
        Invocation::Response(RESPONSE.into()),
        &[&s, &f],
        &log,
    );
    assert_eq!(report.succeeded, 1);
    assert_eq!(
        answers(&log),
        [format!("success tok-g {RESPONSE}"), "delete r0".to_owned()]
    );

    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    let report = gateway_pass(
        &[PARKED],
        Invocation::Response(RESPONSE.into()),
        &[&s, &f],
        &log,
    );
    assert_eq!(report.succeeded, 1);
    assert_eq!(
        answers(&log),
        ["delete r0"],
        "a park's success sends nothing"
    );

    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    gateway_pass(
        &[PARKED],
        Invocation::FunctionError(FAILED.into()),
        &[&s, &f],
        &log,
    );
    assert_eq!(
        answers(&log),
        ["failure tok-p java.lang.IllegalStateException", "delete r0"]
    );

    let log = Log::default();
    let throttled = mock!(aws_sdk_sfn::Client::send_task_success).then_error(|| {
        SendTaskSuccessError::generic(ErrorMetadata::builder().code("ThrottlingException").build())
    });
    let report = gateway_pass(
        &[GATEWAY],
        Invocation::Response(RESPONSE.into()),
        &[&throttled],
        &log,
    );
    assert_eq!(report.retained.len(), 1, "{report:?}");
    assert!(answers(&log).is_empty(), "not deleted: {:?}", lines(&log));
}

/// A token Step Functions already closed (timed out, or invalid) is done: the message is
/// deleted, not retried.
#[test]
fn closed_tokens_count_as_done_and_are_deleted() {
    let log = Log::default();
    let timed_out = mock!(aws_sdk_sfn::Client::send_task_success).then_error(|| {
        SendTaskSuccessError::TaskTimedOut(
            TaskTimedOut::builder()
                .meta(ErrorMetadata::builder().code("TaskTimedOut").build())
                .build(),
        )
    });
    let report = gateway_pass(
        &[GATEWAY],
        Invocation::Response(RESPONSE.into()),
        &[&timed_out],
        &log,
    );
    assert_eq!(report.already_done, 1);
    assert_eq!(lines(&log).last().unwrap(), "delete r0");

    let log = Log::default();
    let invalid = mock!(aws_sdk_sfn::Client::send_task_failure).then_error(|| {
        SendTaskFailureError::InvalidToken(
            InvalidToken::builder()
                .meta(ErrorMetadata::builder().code("InvalidToken").build())
                .build(),
        )
    });
    let report = gateway_pass(
        &[GATEWAY],
        Invocation::FunctionError(FAILED.into()),
        &[&invalid],
        &log,
    );
    assert_eq!(report.already_done, 1);
    assert_eq!(lines(&log).last().unwrap(), "delete r0");
}

/// A message no redelivery can fix is deleted without invoking the gateway; the good one in
/// the same batch is still relayed.
#[test]
fn malformed_messages_are_deleted_without_a_call() {
    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    let report = gateway_pass(
        &[
            "not json",
            r#"{"gatewayRequest":{"operation":"STATUS"},"park":false}"#,
            GATEWAY,
        ],
        Invocation::Response(RESPONSE.into()),
        &[&s, &f],
        &log,
    );
    assert_eq!(report.malformed.len(), 2);
    assert_eq!(report.succeeded, 1);
    let log = lines(&log);
    assert_eq!(log.iter().filter(|l| l.starts_with("invoke ")).count(), 1);
    let deletes: Vec<&String> = log.iter().filter(|l| l.starts_with("delete")).collect();
    assert_eq!(deletes.len(), 3, "{log:?}");
}
