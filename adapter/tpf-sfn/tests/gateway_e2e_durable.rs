//! The gateway driver on AWS's own durable execution emulator: today's Restaurant Approval
//! compiled with `[binding] kind = "gateway"` for Lambda durable functions, started by TPF's
//! ingress under TPF's durable execution names, calling TPF's action gateway (`serve`'s
//! gateway route over TPF's DynamoDB tables on moto, invoked as a numbered Lambda version
//! through the test shim), parked on callbacks that the gateway host's wake-up handler
//! completes with `SendDurableExecutionCallbackSuccess`.
//!
//! TPF's conformance scenarios each test runs are named on it (`docs/mapping.md`). Every test
//! asserts TPF's record, the binding table's rows, the emulator's history and operations, the
//! execution names, and that TPF's gateway refused no request the driver sent.

use crate::e2e_durable::harness;

use harness::gateway::{GatewayLoop, GatewayOptions};
use harness::TENANT;
use serde_json::{json, Value};
use tpf_sfn_wakepath::gateway::invoke::{Invoked, Invoker, LambdaInvoker};
use tpf_sfn_wakepath::gateway::provider::Sent;
use tpf_sfn_wakeup::provider::ProviderState;
use tpf_sfn_wakeup::wake::SendOutcome;
use tpf_wire::gateway::host::POLL_WAITS_SECONDS;
use tpf_wire::gateway::names::{delivered_sort_key, durable_execution_name, generation_sort_key};
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, DriverCheckpoint, ExecutionCheckpoint, Operation};

fn names(ops: &[(String, String)]) -> Vec<&str> {
    ops.iter().map(|(_, n)| n.as_str()).collect()
}

fn count(history: &[Value], kind: &str) -> usize {
    history.iter().filter(|e| e["EventType"] == kind).count()
}

/// TPF's durable execution name: `tpf-` and 48 lowercase hex digits.
fn assert_tpf_name(name: &str) {
    assert_eq!(name.len(), 52, "{name}");
    assert!(name.starts_with("tpf-"), "{name}");
    assert!(
        name[4..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{name}"
    );
}

/// Every request the driver, the wake-up and the test's operator sent TPF's gateway reads as
/// TPF's gateway reads it and is the exact bytes TPF's caller writes for it; none was refused.
fn assert_gateway_accepted_everything(lp: &GatewayLoop) -> Vec<Operation> {
    let exchanges = lp.shim.gateway_exchanges();
    assert!(!exchanges.is_empty());
    let mut ops = Vec::new();
    for x in &exchanges {
        let request = ActionRequest::read(&x.request)
            .unwrap_or_else(|e| panic!("TPF's gateway refuses {}: {e}", x.request));
        assert_eq!(request.to_json(), x.request, "TPF's caller's bytes");
        assert_eq!(
            x.function_error, None,
            "TPF's gateway refused {}: {}",
            x.request, x.response
        );
        ops.push(request.operation);
    }
    ops
}

/// tpf-11 (completion after binding), with tpf-01's repeated ingress and tpf-13's classification
/// of a send to a closed callback: generation 1 SUBMITs, polls, registers its callback, is
/// woken once by the wake-up and ends with TPF's output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_driver_parks_is_woken_by_the_wakeup_and_succeeds() {
    let lp = GatewayLoop::start(GatewayOptions {
        wakeup: true,
        ..GatewayOptions::default()
    })
    .await;
    assert_eq!(lp.longest_await_seconds, 1800, "today's contract: PT30M");
    let input = lp.input("order-1");
    let name = input.durable_execution_name();
    assert_tpf_name(&name);
    assert_eq!(
        name,
        durable_execution_name(Some(TENANT), Some("order-1"), 1).unwrap()
    );
    let arn = lp.start_generation(&input).await;
    // tpf-01: the ingress answer is lost and the caller starts again: the same name, started.
    let again = lp.starter.start(&input).await.expect("second start");
    assert_eq!(again.durable_execution_name, name);
    assert_eq!(lp.shim.started().len(), 1, "one generation-1 driver");

    let id = lp.execution_id().await;
    let registration = lp.wait_registered(&id, &arn, 1).await;
    assert_eq!(registration["provider_execution_name"], name);
    assert_eq!(registration["generation"], "1");
    assert_eq!(registration["release_version"], lp.release_version);
    let callback = registration["provider_callback_id"].clone();
    assert!(!callback.is_empty());

    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    // A duplicate completion is admitted once by TPF and must not wake the driver twice.
    let dup = lp.complete(&interaction).await;
    assert_eq!(dup["duplicate"], true, "{dup}");
    assert_eq!(lp.wait_ended(&arn).await, "SUCCEEDED", "{}", lp.logs());
    let record = lp.record(&id).await;
    assert_eq!(record["status"], "SUCCEEDED", "{record}");

    // TPF's AwsDurableExecutionOutput.
    let execution = lp.execution(&arn).await;
    let output: Value =
        serde_json::from_str(execution["Result"].as_str().expect("result")).expect("output");
    assert_eq!(output["tenantId"], TENANT);
    assert_eq!(output["executionId"], id.as_str());
    assert_eq!(output["pipelineId"], lp.pipeline_id.as_str());
    assert_eq!(output["releaseVersion"], lp.release_version.as_str());
    assert_eq!(output["generation"], 1);
    assert!(output["resultJson"].is_string(), "{output}");

    let rows = lp.binding_rows(&interaction).await;
    let binding = &rows[&generation_sort_key(1).unwrap()];
    assert_eq!(binding["record_type"], "BINDING");
    assert_eq!(binding["provider_callback_id"], callback);
    assert_eq!(binding["provider_execution_arn"], arn);
    let delivered = &rows[&delivered_sort_key(1)];
    assert_eq!(
        delivered["provider_outcome"], "CALLBACK_ACCEPTED",
        "{rows:?}"
    );
    assert_eq!(rows.len(), 2, "{rows:?}");

    let history = lp.history(&arn).await;
    assert_eq!(count(&history, "CallbackSucceeded"), 1, "woken once");
    assert_eq!(count(&history, "CallbackTimedOut"), 0);
    let ops = lp.operations(&arn).await;
    println!("happy path: {} operations: {:?}", ops.len(), names(&ops));
    assert_eq!(names(&ops)[0], "submit-tpf-execution");
    assert!(names(&ops).contains(&"await-completion-0"), "{ops:?}");
    assert_eq!(names(&ops).last(), Some(&"read-tpf-result"));

    let sent = assert_gateway_accepted_everything(&lp);
    assert_eq!(sent[0], Operation::Submit);
    assert_eq!(
        sent.iter()
            .filter(|o| **o == Operation::RegisterCallback)
            .count(),
        1,
        "{sent:?}"
    );

    // tpf-13's path on the emulator: a send to the callback that already succeeded is refused
    // as gone, and the history says it succeeded (the wake-up then writes the evidence).
    let (sent, outcome) = lp.send_again(&callback, &arn).await;
    assert_eq!(sent, Sent::Gone, "{sent:?}");
    assert_eq!(outcome, SendOutcome::Gone(ProviderState::Succeeded));
}

/// tpf-22 (the await deadline while parked): nobody completes the await; the park times out a
/// second after the deadline, the driver's SWEEP lets TPF time the await out, and both end
/// FAILED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_driver_applies_the_await_deadline_while_parked() {
    // Twice TPF's first poll wait: a driver whose first STATUS comes before TPF's work reaches
    // the await sees it at the next poll, with half the deadline left to park.
    let deadline = 2 * POLL_WAITS_SECONDS[0];
    let lp = GatewayLoop::start(GatewayOptions {
        deadline_seconds: Some(deadline),
        wakeup: true,
        ..GatewayOptions::default()
    })
    .await;
    assert_eq!(lp.longest_await_seconds, deadline);
    let input = lp.input("order-1");
    let arn = lp.start_generation(&input).await;
    let id = lp.execution_id().await;
    lp.wait_registered(&id, &arn, 1).await;

    assert_eq!(lp.wait_ended(&arn).await, "FAILED", "{}", lp.logs());
    let record = lp.record(&id).await;
    assert_eq!(record["status"], "FAILED", "{record}");
    let execution = lp.execution(&arn).await;
    assert_eq!(
        execution["Error"]["ErrorType"], "TPF.ExecutionEnded",
        "{execution}"
    );
    // The SDK writes a typed error's message as `<type>: <message>`.
    assert_eq!(
        execution["Error"]["ErrorMessage"],
        "TPF.ExecutionEnded: TPF execution ended with status FAILED",
        "{execution}"
    );
    let history = lp.history(&arn).await;
    assert_eq!(count(&history, "CallbackTimedOut"), 1, "the park's timeout");
    assert_eq!(count(&history, "CallbackSucceeded"), 0);
    let ops = lp.operations(&arn).await;
    println!(
        "await deadline: {} operations: {:?}",
        ops.len(),
        names(&ops)
    );
    assert!(names(&ops).contains(&"wait-for-tpf-state-1"), "{ops:?}");
    let sent = assert_gateway_accepted_everything(&lp);
    // The check after the timeout swept before it read the status (the wake-up's reads of
    // the same gateway never SWEEP).
    let after_park = sent
        .iter()
        .rposition(|o| *o == Operation::RegisterCallback)
        .unwrap();
    let check = sent[after_park..]
        .iter()
        .find(|o| matches!(o, Operation::Sweep | Operation::Status));
    assert_eq!(check, Some(&Operation::Sweep), "{sent:?}");
    assert_eq!(lp.shim.started().len(), 1, "no other generation");
}

/// tpf-19 (a lost wake-up): the wake-up never runs; the completion moves TPF's record on; the
/// park times out after the await's deadline, and the driver sees TPF's progress and ends
/// with TPF's output. The callback it left is closed: a late send is refused as gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_driver_whose_wakeup_is_lost_ends_as_tpfs_record() {
    let lp = GatewayLoop::start(GatewayOptions {
        deadline_seconds: Some(20),
        wakeup: false,
        ..GatewayOptions::default()
    })
    .await;
    let input = lp.input("order-1");
    let arn = lp.start_generation(&input).await;
    let id = lp.execution_id().await;
    let registration = lp.wait_registered(&id, &arn, 1).await;
    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;

    assert_eq!(lp.wait_ended(&arn).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");
    let history = lp.history(&arn).await;
    assert_eq!(count(&history, "CallbackSucceeded"), 0, "nobody woke it");
    assert_eq!(count(&history, "CallbackTimedOut"), 1, "its timeout did");
    assert!(
        lp.binding_rows(&interaction).await.is_empty(),
        "no wake-up, no binding"
    );
    let ops = lp.operations(&arn).await;
    println!("lost wake-up: {} operations: {:?}", ops.len(), names(&ops));
    assert_eq!(names(&ops).last(), Some(&"read-tpf-result"));
    assert_gateway_accepted_everything(&lp);
    assert_eq!(lp.shim.started().len(), 1, "one generation");

    // The emulator refuses a send to the timed-out callback; the wake-up counts it as gone and
    // the history as closed.
    let callback = &registration["provider_callback_id"];
    let (sent, outcome) = lp.send_again(callback, &arn).await;
    assert_eq!(sent, Sent::Gone);
    assert_eq!(outcome, SendOutcome::Gone(ProviderState::Closed));
}

/// `serve`'s script for TPF-21: the first step fails on each of TPF's four attempts, then
/// (re-driven) completes.
fn retries_exhausted() -> Value {
    json!({
        "step": "Validate Order Request",
        "outcomes": [
            "fail-retryable:java.io.IOException",
            "fail-retryable:java.io.IOException",
            "fail-retryable:java.io.IOException",
            "fail-retryable:java.io.IOException",
            "complete"
        ]
    })
}

/// `sweeper.mode = "schedule"` in the deployed function: its condition's checks sweep only at
/// the condition's start and after a STATUS that answered WAIT_RETRY, so TPF's retries are
/// still queued and generation 1 fails with TPF's text after the last one; no SWEEP follows a
/// STATUS that answered QUEUED or RUNNING.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_driver_with_the_scheduled_sweep_sweeps_only_when_tpf_waits_to_retry() {
    let lp = GatewayLoop::start(GatewayOptions {
        script: vec![retries_exhausted()],
        wakeup: true,
        extra_config: "[sweeper]\nmode = \"schedule\"\nschedule = \"rate(1 minute)\"\n",
        ..GatewayOptions::default()
    })
    .await;
    let first = lp.start_generation(&lp.input("order-1")).await;
    let id = lp.execution_id().await;
    assert_eq!(lp.wait_ended(&first).await, "FAILED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "FAILED");
    assert_gateway_accepted_everything(&lp);
    let exchanges = lp.shim.gateway_exchanges();
    let mut last_status: Option<String> = None;
    let mut swept_after_retry = 0;
    for x in &exchanges {
        let request = ActionRequest::read(&x.request).expect("TPF's gateway reads it");
        match request.operation {
            Operation::Status => {
                let answer: Value = serde_json::from_str(&x.response).expect("a response");
                last_status = answer["executionStatus"].as_str().map(str::to_owned);
            }
            Operation::Sweep => {
                let after = last_status.take();
                assert!(
                    !matches!(after.as_deref(), Some("QUEUED" | "RUNNING")),
                    "a SWEEP after STATUS {after:?}"
                );
                swept_after_retry += usize::from(after.as_deref() == Some("WAIT_RETRY"));
            }
            _ => last_status = None,
        }
    }
    assert!(
        swept_after_retry > 0,
        "the retries were swept: {exchanges:?}"
    );
}

/// tpf-21 (retry exhaustion, then re-drive): the first step fails on every attempt, TPF gives
/// up and generation 1 fails with TPF's text; the operator's REDRIVE (through the gateway)
/// answers QUEUED and generation 2, started with `resumeExecutionId` as TPF's host starts it,
/// runs the execution to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_driver_retry_exhaustion_then_redrive_runs_generation_2_to_the_end() {
    let lp = GatewayLoop::start(GatewayOptions {
        script: vec![retries_exhausted()],
        wakeup: true,
        ..GatewayOptions::default()
    })
    .await;
    let input = lp.input("order-1");
    let first = lp.start_generation(&input).await;
    let id = lp.execution_id().await;
    assert_eq!(lp.wait_ended(&first).await, "FAILED", "{}", lp.logs());
    let failed = lp.record(&id).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    let execution = lp.execution(&first).await;
    assert_eq!(execution["Error"]["ErrorType"], "TPF.ExecutionEnded");

    // The operator's REDRIVE(version), as TPF's proof sends it: through the gateway's numbered
    // version.
    let version = failed["version"].as_i64().expect("version");
    let checkpoint = DriverCheckpoint::new(
        ExecutionCheckpoint::new(
            Some(TENANT),
            Some(&id),
            Some(&lp.pipeline_id),
            Some(&lp.contract_version),
            Some(&lp.release_version),
        )
        .unwrap(),
        1,
    )
    .unwrap();
    let redrive = ActionRequest::redrive(&checkpoint, version, Some("operator re-drive")).unwrap();
    let gateway = LambdaInvoker::new(lp.providers.lambda.clone(), &lp.gateway_arn).unwrap();
    match gateway.invoke(&redrive).await.expect("REDRIVE") {
        Invoked::Response(r) => assert_eq!(r.execution_status.as_deref(), Some("QUEUED")),
        Invoked::Failed(f) => panic!("REDRIVE refused: {f:?}"),
    }

    let next = ExecutionInput::resume_execution(TENANT, &id, 1, lp.release()).unwrap();
    assert_eq!(next.generation, 2);
    assert_eq!(next.resume_execution_id.as_deref(), Some(id.as_str()));
    let name = next.durable_execution_name();
    assert_tpf_name(&name);
    assert_eq!(
        name,
        durable_execution_name(Some(TENANT), Some(&id), 2).unwrap()
    );
    assert_ne!(name, input.durable_execution_name());
    let second = lp.start_generation(&next).await;

    let registration = lp.wait_registered(&id, &second, 2).await;
    assert_eq!(registration["provider_execution_name"], name);
    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    assert_eq!(lp.wait_ended(&second).await, "SUCCEEDED", "{}", lp.logs());
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");
    let output: Value = serde_json::from_str(
        lp.execution(&second).await["Result"]
            .as_str()
            .expect("result"),
    )
    .unwrap();
    assert_eq!(output["generation"], 2);
    assert_eq!(output["executionId"], id.as_str());
    let rows = lp.binding_rows(&interaction).await;
    assert_eq!(
        rows[&delivered_sort_key(2)]["provider_outcome"],
        "CALLBACK_ACCEPTED",
        "{rows:?}"
    );

    let ops = lp.operations(&second).await;
    println!(
        "re-drive generation: {} operations: {:?}",
        ops.len(),
        names(&ops)
    );
    assert_eq!(names(&ops)[0], "resume-tpf-execution", "no second SUBMIT");
    let sent = assert_gateway_accepted_everything(&lp);
    assert_eq!(
        sent.iter().filter(|o| **o == Operation::Submit).count(),
        1,
        "{sent:?}"
    );
    assert_eq!(lp.shim.started().len(), 2, "two generations");
}

/// The production plan's sequential awaits (and a second await in one generation): a
/// contract with three awaits in a row. Each generation parks once; at the next await it
/// hands over to generation + 1 (TPF's replacement input, TPF's name) instead of registering
/// again; each generation registers once and is woken once; the last ends with TPF's output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_driver_hands_over_at_each_further_await() {
    let lp = GatewayLoop::start(GatewayOptions {
        contract: Some("multi-await.pipeline-contract.json"),
        wakeup: true,
        ..GatewayOptions::default()
    })
    .await;
    let input = lp.input("loan-1");
    let first = lp.start_generation(&input).await;
    let id = lp.execution_id().await;
    let mut arns = vec![first];
    for generation in 1..=3 {
        let arn = arns.last().unwrap().clone();
        let registration = lp.wait_registered(&id, &arn, generation).await;
        assert_eq!(registration["generation"], generation.to_string());
        let interaction = lp.pending(&id).await.expect("pending interaction");
        lp.complete(&interaction).await;
        if generation < 3 {
            assert_eq!(lp.wait_ended(&arn).await, "SUCCEEDED", "{}", lp.logs());
            let output: Value =
                serde_json::from_str(lp.execution(&arn).await["Result"].as_str().unwrap()).unwrap();
            let next = durable_execution_name(Some(TENANT), Some(&id), generation + 1).unwrap();
            assert_eq!(output["handedOverTo"], next.as_str(), "{output}");
            assert_eq!(output["nextGeneration"], generation + 1);
            arns.push(lp.wait_started(&next).await);
        }
        let delivered = lp.wait_delivered(&interaction, generation).await;
        assert_eq!(delivered["provider_outcome"], "CALLBACK_ACCEPTED");
    }
    assert_eq!(
        lp.wait_ended(arns.last().unwrap()).await,
        "SUCCEEDED",
        "{}",
        lp.logs()
    );
    assert_eq!(lp.record(&id).await["status"], "SUCCEEDED");
    let last = lp.execution(arns.last().unwrap()).await;
    let output: Value = serde_json::from_str(last["Result"].as_str().unwrap()).unwrap();
    assert_eq!(output["generation"], 3);
    for arn in &arns {
        let history = lp.history(arn).await;
        assert_eq!(count(&history, "CallbackSucceeded"), 1, "each woken once");
    }
    let ops = lp.operations(&arns[0]).await;
    println!("generation 1: {} operations: {:?}", ops.len(), names(&ops));
    assert_eq!(names(&ops).last(), Some(&"hand-over-tpf-execution"));
    let sent = assert_gateway_accepted_everything(&lp);
    assert_eq!(
        sent.iter()
            .filter(|o| **o == Operation::RegisterCallback)
            .count(),
        3,
        "one registration per generation: {sent:?}"
    );
    // Generations 2 and 3 started with TPF's replacement input, on the version that ran the
    // generation before (the emulator's runtime reports it as `function-arn`).
    let started = lp.shim.started();
    assert_eq!(started.len(), 3, "three generations");
    for (i, s) in started.iter().enumerate().skip(1) {
        assert_eq!(s.input["generation"], i as i64 + 1, "{:?}", s.input);
        assert_eq!(s.input["idempotencyKey"], id.as_str());
        assert_eq!(s.input["resumeExecutionId"], id.as_str());
        assert_eq!(s.input["inputJson"], "{}");
        assert_eq!(s.function, harness::shim::INVOKED_FUNCTION_ARN);
    }
}
