//! The relay against mocked SQS and Step Functions and a scripted action host: the token is
//! answered before the message is deleted, HTTP outcomes map to the Action API's error names,
//! closed tokens count as done, and an unanswered token keeps its message.

use std::sync::{Arc, Mutex};

use aws_sdk_sfn::error::ErrorMetadata;
use aws_sdk_sfn::operation::send_task_failure::{SendTaskFailureError, SendTaskFailureOutput};
use aws_sdk_sfn::operation::send_task_success::{SendTaskSuccessError, SendTaskSuccessOutput};
use aws_sdk_sfn::types::error::{InvalidToken, TaskTimedOut};
use aws_sdk_sqs::operation::delete_message::DeleteMessageOutput;
use aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput;
use aws_sdk_sqs::types::Message;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use tpf_sfn::relay::http::{ActionHost, Reply, Unreachable};
use tpf_sfn::relay::{answer_for, Answer, PassReport, Relay};

type Log = Arc<Mutex<Vec<String>>>;

/// Answers every call with one canned reply and logs the path.
struct Scripted {
    reply: Result<Reply, Unreachable>,
    log: Log,
}

impl ActionHost for Scripted {
    async fn post(&self, path: &str, body: &str) -> Result<Reply, Unreachable> {
        self.log.lock().unwrap().push(format!("POST {path} {body}"));
        self.reply.clone()
    }
}

fn ok(status: u16, body: &str) -> Result<Reply, Unreachable> {
    Ok(Reply {
        status,
        body: body.into(),
    })
}

const PWI: &str = r#"{"action":"process-work-item","tenantId":"t1","executionId":"e1","request":{"k":1},"taskToken":"tok-1"}"#;

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

fn pass(
    bodies: &[&str],
    reply: Result<Reply, Unreachable>,
    sfn_rules: &[&Rule],
    log: &Log,
) -> PassReport {
    let receive = receive(bodies);
    let delete = delete(log);
    let sqs = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, &[&receive, &delete]);
    let sfn = mock_client!(aws_sdk_sfn, RuleMode::MatchAny, sfn_rules, |b| b
        .retry_config(aws_sdk_sfn::config::retry::RetryConfig::disabled()));
    let relay = Relay::new(
        sqs,
        sfn,
        "http://queue",
        Scripted {
            reply,
            log: log.clone(),
        },
    );
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

#[test]
fn success_is_answered_then_deleted() {
    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    let report = pass(
        &[PWI],
        ok(200, r#"{"status":"SUCCEEDED"}"#),
        &[&s, &f],
        &log,
    );
    assert_eq!(report.succeeded, 1);
    assert_eq!(
        lines(&log),
        [
            r#"POST /tpf/actions/v1/tenants/t1/executions/e1/process-work-item {"k":1}"#,
            r#"success tok-1 {"status":"SUCCEEDED"}"#,
            "delete r0",
        ]
    );
}

#[test]
fn http_outcomes_map_to_the_action_api_error_names() {
    for (status, name) in [
        (409, "TPF.ReleaseIdentityMismatch"),
        (404, "TPF.ExecutionNotFound"),
        (500, "TPF.TransportError"),
        (503, "TPF.TransportError"),
        (429, "TPF.TransportError"),
    ] {
        let log = Log::default();
        let (s, f) = (success(&log), failure(&log));
        let report = pass(&[PWI], ok(status, "{}"), &[&s, &f], &log);
        assert_eq!(report.failed, 1, "{status}");
        // The log names the message, the execution and the reason, not only a count.
        assert_eq!(report.failures.len(), 1, "{status}");
        let line = &report.failures[0];
        assert!(
            line.starts_with("message m0: execution t1/e1: answered ") && line.contains(name),
            "{status}: {line}"
        );
        assert_eq!(
            lines(&log)[1..],
            [format!("failure tok-1 {name}"), "delete r0".to_owned()],
            "{status}"
        );
    }
    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    pass(
        &[PWI],
        Err(Unreachable("connection refused".into())),
        &[&s, &f],
        &log,
    );
    assert_eq!(lines(&log)[1], "failure tok-1 TPF.TransportError");
    assert!(matches!(
        answer_for(ok(200, "not json")),
        Answer::Failure { error, .. } if error == "TPF.TransportError"
    ));
}

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
    let report = pass(&[PWI], ok(200, "{}"), &[&timed_out], &log);
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
    let report = pass(&[PWI], ok(404, "{}"), &[&invalid], &log);
    assert_eq!(report.already_done, 1);
    assert_eq!(lines(&log).last().unwrap(), "delete r0");
}

#[test]
fn an_unanswered_token_keeps_its_message() {
    let log = Log::default();
    let throttled = mock!(aws_sdk_sfn::Client::send_task_success).then_error(|| {
        SendTaskSuccessError::generic(ErrorMetadata::builder().code("ThrottlingException").build())
    });
    let report = pass(&[PWI], ok(200, "{}"), &[&throttled], &log);
    assert_eq!(report.retained.len(), 1);
    assert!(lines(&log).iter().all(|l| !l.starts_with("delete")));
}

#[test]
fn malformed_messages_are_deleted_without_a_call() {
    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    let report = pass(
        &[
            "not json",
            r#"{"action":"dance","request":{},"taskToken":"t"}"#,
            PWI,
        ],
        ok(200, "{}"),
        &[&s, &f],
        &log,
    );
    assert_eq!(report.malformed.len(), 2);
    assert_eq!(report.succeeded, 1);
    let log = lines(&log);
    assert_eq!(log[..2], ["delete r0", "delete r1"]);
    assert_eq!(log.iter().filter(|l| l.starts_with("POST")).count(), 1);
}

/// The gateway's answer, canned.
struct Gateway(tpf_sfn::relay::gateway::Invocation);

impl tpf_sfn::relay::gateway::GatewayInvoker for Gateway {
    async fn invoke(&self, _request: &str) -> tpf_sfn::relay::gateway::Invocation {
        self.0.clone()
    }
}

fn gateway_pass(
    body: &str,
    answer: tpf_sfn::relay::gateway::Invocation,
    sfn_rules: &[&Rule],
    log: &Log,
) -> PassReport {
    let receive = receive(&[body]);
    let delete = delete(log);
    let sqs = mock_client!(aws_sdk_sqs, RuleMode::MatchAny, &[&receive, &delete]);
    let sfn = mock_client!(aws_sdk_sfn, RuleMode::MatchAny, sfn_rules, |b| b
        .retry_config(aws_sdk_sfn::config::retry::RetryConfig::disabled()));
    let handler = tpf_sfn::relay::gateway::GatewayRelay::new(sfn, Gateway(answer));
    let relay = Relay::with_handler(sqs, "http://queue", handler);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(relay.poll_once())
        .unwrap()
}

const GATEWAY: &str = r#"{"gatewayRequest":{"operation":"STATUS","tenantId":"t1","executionId":"e1","generation":1},"taskToken":"tok-g","park":false}"#;
const PARKED: &str = r#"{"gatewayRequest":{"operation":"REGISTER_CALLBACK","tenantId":"t1","executionId":"e1","generation":1},"taskToken":"tok-p","park":true}"#;

/// The gateway transport: the token is answered, then the message deleted; a parked call's
/// success deletes without an answer. Negative: an answer that does not go through keeps the
/// message for redelivery.
#[test]
fn gateway_messages_are_deleted_only_after_their_answer() {
    use tpf_sfn::relay::gateway::Invocation;
    let response = r#"{"executionStatus":"RUNNING"}"#;
    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    let report = gateway_pass(
        GATEWAY,
        Invocation::Response(response.into()),
        &[&s, &f],
        &log,
    );
    assert_eq!(report.succeeded, 1);
    assert_eq!(
        lines(&log),
        [format!("success tok-g {response}"), "delete r0".to_owned()]
    );

    let log = Log::default();
    let (s, f) = (success(&log), failure(&log));
    let report = gateway_pass(
        PARKED,
        Invocation::Response(response.into()),
        &[&s, &f],
        &log,
    );
    assert_eq!(report.succeeded, 1);
    assert_eq!(lines(&log), ["delete r0"], "a park's success sends nothing");

    let log = Log::default();
    let failed = r#"{"errorMessage":"m","errorType":"java.lang.IllegalStateException"}"#;
    let (s, f) = (success(&log), failure(&log));
    gateway_pass(
        PARKED,
        Invocation::FunctionError(failed.into()),
        &[&s, &f],
        &log,
    );
    assert_eq!(
        lines(&log),
        ["failure tok-p java.lang.IllegalStateException", "delete r0"]
    );

    let log = Log::default();
    let throttled = mock!(aws_sdk_sfn::Client::send_task_success).then_error(|| {
        SendTaskSuccessError::generic(ErrorMetadata::builder().code("ThrottlingException").build())
    });
    let report = gateway_pass(
        GATEWAY,
        Invocation::Response(response.into()),
        &[&throttled],
        &log,
    );
    assert_eq!(report.retained.len(), 1, "{report:?}");
    assert!(lines(&log).is_empty(), "not deleted: {:?}", lines(&log));
}
