//! The gateway binding's queue transport on moto: a machine parks on
//! `sqs:sendMessage.waitForTaskToken` with `{"gatewayRequest", "taskToken", "park"}`, the relay
//! invokes `serve`'s gateway route (in process, on 127.0.0.1) and answers the token as Step
//! Functions' own invoke would have ended: the 8-key response as the output, a function error
//! as the task's error (the Java class name) and cause, nothing for a parking call that
//! succeeded.

use crate::support;

use std::time::Duration;

use aws_sdk_sfn::types::ExecutionStatus as SfnStatus;
use serde_json::{json, Value};
use support::host::restaurant;
use tpf_sfn::relay::gateway::GatewayRelay;
use tpf_sfn::relay::http::HttpActionHost;
use tpf_sfn::relay::{PassReport, Relay};
use tpf_wire::java_error::class;

const TOKEN: &str = "test-token";
const TENANT: &str = "tenant-a";

/// Sends the execution's input to the queue with its token and waits for the answer.
fn machine(queue_url: &str) -> String {
    json!({
        "StartAt": "Invoke",
        "States": {"Invoke": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
            "Parameters": {
                "QueueUrl": queue_url,
                "MessageBody": {
                    "gatewayRequest.$": "$.request",
                    "taskToken.$": "$$.Task.Token",
                    "park.$": "$.park"
                }
            },
            "End": true
        }}
    })
    .to_string()
}

struct World {
    sfn: aws_sdk_sfn::Client,
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
    machine_arn: String,
    serve: std::net::SocketAddr,
}

impl World {
    async fn new() -> World {
        let config = support::moto_config().await;
        let sfn = aws_sdk_sfn::Client::new(&config);
        let sqs = aws_sdk_sqs::Client::new(&config);
        let id = support::unique("relay-gateway");
        let queue_url = sqs
            .create_queue()
            .queue_name(&id)
            .send()
            .await
            .expect("queue")
            .queue_url()
            .expect("url")
            .to_owned();
        let machine_arn = sfn
            .create_state_machine()
            .name(&id)
            .definition(machine(&queue_url))
            .role_arn("arn:aws:iam::123456789012:role/tpf-sfn-test")
            .send()
            .await
            .expect("machine")
            .state_machine_arn()
            .to_owned();
        let state = support::host::activated(TENANT, TOKEN);
        let serve = support::spawn_host(state).await;
        World {
            sfn,
            sqs,
            queue_url,
            machine_arn,
            serve,
        }
    }

    fn relay(&self, url: &str) -> Relay<GatewayRelay<HttpActionHost>> {
        let host =
            HttpActionHost::new(url, Some(TOKEN.to_owned()), Duration::from_secs(5)).unwrap();
        let mut relay = Relay::with_handler(
            self.sqs.clone(),
            self.queue_url.clone(),
            GatewayRelay::new(self.sfn.clone(), host),
        );
        relay.wait_seconds = 1;
        relay
    }

    fn serve_url(&self) -> String {
        format!("http://{}", self.serve)
    }

    /// Starts an execution whose message carries `request` and `park`, and relays it once.
    async fn run(&self, relay_url: &str, request: Value, park: Value) -> (String, PassReport) {
        let execution = self
            .sfn
            .start_execution()
            .state_machine_arn(&self.machine_arn)
            .name(support::unique("x"))
            .input(json!({"request": request, "park": park}).to_string())
            .send()
            .await
            .expect("start")
            .execution_arn()
            .to_owned();
        let relay = self.relay(relay_url);
        for _ in 0..20 {
            let report = relay.poll_once().await.expect("relay pass");
            assert!(report.retained.is_empty(), "{report:?}");
            if report.received > 0 {
                assert_eq!(report.received, 1, "{report:?}");
                return (execution, report);
            }
        }
        panic!("the message never arrived");
    }

    /// The execution's status once it stops moving (or RUNNING after a while).
    async fn settled(
        &self,
        execution: &str,
    ) -> aws_sdk_sfn::operation::describe_execution::DescribeExecutionOutput {
        let mut last = None;
        for _ in 0..30 {
            let d = self
                .sfn
                .describe_execution()
                .execution_arn(execution)
                .send()
                .await
                .expect("describe");
            if d.status() != &SfnStatus::Running {
                return d;
            }
            last = Some(d);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        last.expect("described")
    }

    /// The task's error, as the execution's history records it. (moto keeps the error of a
    /// `SendTaskFailure` and drops its cause: the tests read the cause sent from the relay's
    /// report.)
    async fn failure(&self, execution: &str) -> Option<String> {
        let history = self
            .sfn
            .get_execution_history()
            .execution_arn(execution)
            .send()
            .await
            .expect("history");
        history
            .events()
            .iter()
            .find_map(|e| e.task_failed_event_details())
            .and_then(|d| d.error().map(String::from))
    }

    async fn queue_depth(&self) -> i64 {
        let attrs = self
            .sqs
            .get_queue_attributes()
            .queue_url(&self.queue_url)
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
            .send()
            .await
            .expect("attributes");
        let n = |k| {
            attrs
                .attributes()
                .and_then(|a| a.get(&k))
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0)
        };
        n(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
            + n(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
    }
}

fn submit(key: &str) -> Value {
    support::host::gateway_submit(TENANT, key)
}

fn register(execution_id: &str, callback: Option<&str>) -> Value {
    let identity = restaurant().identity;
    json!({
        "operation": "REGISTER_CALLBACK", "tenantId": TENANT, "executionId": execution_id,
        "idempotencyKey": null, "pipelineId": identity.pipeline_id,
        "contractVersion": identity.contract_version, "releaseVersion": identity.release_version,
        "inputJson": null, "awaitIdentity": null, "providerExecutionName": "tpf-0123",
        "providerExecutionArn": "arn:aws:states:us-east-1:123456789012:execution:m:tpf-0123",
        "providerCallbackId": callback, "expectedVersion": null, "reason": null, "generation": 1
    })
}

/// SUBMIT through the queue: the execution ends with the gateway's 8-key response as its
/// output, and the message is gone. Negative: a message without `park` is malformed, deleted
/// unanswered, and its execution keeps waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_is_the_task_s_output() {
    let w = World::new().await;
    let (execution, _) = w.run(&w.serve_url(), submit("order-1"), json!(false)).await;
    let d = w.settled(&execution).await;
    assert_eq!(d.status(), &SfnStatus::Succeeded, "{d:?}");
    let output: Value = serde_json::from_str(d.output().expect("output")).expect("JSON");
    let keys: Vec<_> = output.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys.len(),
        8,
        "the gateway's response, nothing added: {output}"
    );
    assert_eq!(output["duplicate"], false);
    assert!(output["checkpoint"]["executionId"].is_string(), "{output}");
    assert_eq!(w.queue_depth().await, 0, "deleted once answered");

    let (waiting, report) = w.run(&w.serve_url(), submit("order-2"), Value::Null).await;
    assert_eq!(report.malformed.len(), 1, "{report:?}");
    assert_eq!(w.settled(&waiting).await.status(), &SfnStatus::Running);
    assert_eq!(w.queue_depth().await, 0, "a malformed message is deleted");
}

/// STATUS of an execution TPF does not know: the gateway's exception fails the task with its
/// class name and message. Negative: the same request with the gateway unreachable fails it as
/// Step Functions names an invoke that got no answer, which the driver retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_function_error_fails_the_task_with_the_class_name() {
    let w = World::new().await;
    let status =
        json!({"operation": "STATUS", "tenantId": TENANT, "executionId": "nope", "generation": 1});
    let (execution, report) = w.run(&w.serve_url(), status.clone(), json!(false)).await;
    let d = w.settled(&execution).await;
    assert_eq!(d.status(), &SfnStatus::Failed, "{d:?}");
    assert_eq!(
        w.failure(&execution).await.as_deref(),
        Some(class::NOT_FOUND)
    );
    assert!(
        report.failures[0].ends_with(&format!(
            "STATUS {TENANT}/nope: answered {}: Execution not found: nope",
            class::NOT_FOUND
        )),
        "{report:?}"
    );

    // Nothing listens there: the port of a listener this test closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (execution, _) = w.run(&dead, status, json!(false)).await;
    let d = w.settled(&execution).await;
    assert_eq!(d.status(), &SfnStatus::Failed, "{d:?}");
    assert_eq!(
        w.failure(&execution).await.as_deref(),
        Some("Lambda.SdkClientException")
    );
}

/// REGISTER_CALLBACK with `park`: the registration is written and nothing is sent, so the
/// execution stays parked on its token (the wake-up answers it later). Negative: a parking call
/// the gateway refuses (no callback id) fails the task with TPF's exception.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parking_call_sends_nothing_unless_it_fails() {
    let w = World::new().await;
    let (execution, report) = w
        .run(
            &w.serve_url(),
            register("exec-1", Some("token-1")),
            json!(true),
        )
        .await;
    assert_eq!(report.succeeded, 1, "{report:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(w.settled(&execution).await.status(), &SfnStatus::Running);
    assert_eq!(
        w.queue_depth().await,
        0,
        "answered (by sending nothing) and deleted"
    );
    // The registration exists: the same call again creates nothing.
    let again = support::http::request(
        w.serve,
        "POST",
        tpf_wire::gateway::invoke::PATH,
        Some(TOKEN),
        Some(&register("exec-1", Some("token-1")).to_string()),
    )
    .await;
    assert_eq!(again.body["bindingCreated"], false, "{}", again.raw);

    let (refused, report) = w
        .run(&w.serve_url(), register("exec-2", None), json!(true))
        .await;
    let d = w.settled(&refused).await;
    assert_eq!(d.status(), &SfnStatus::Failed, "{d:?}");
    assert_eq!(
        w.failure(&refused).await.as_deref(),
        Some(class::ILLEGAL_ARGUMENT)
    );
    assert!(
        report.failures[0].ends_with("providerCallbackId is required"),
        "{report:?}"
    );
}
