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
use crate::support;

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
    let mut sweeps = 0;
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
                sweeps += 1;
            }
            _ => last_status = None,
        }
    }
    // The condition's first check sweeps; how many checks read WAIT_RETRY depends on when
    // each one runs against TPF's retries.
    assert!(
        sweeps > 0,
        "the condition's first check sweeps: {exchanges:?}"
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

/// A printed command's words, as a POSIX shell splits them: single quotes kept literal, a
/// backslash before a newline joining the lines, `VAR=value` prefixes dropped.
fn words(command: &str) -> Vec<String> {
    let command = command.replace("\\\n", " ");
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => out.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    assert!(!quoted, "an unclosed quote in {command}");
    out.into_iter()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .collect()
}

/// The value after `flag` in `words`.
fn flag<'a>(words: &'a [String], flag: &str) -> &'a str {
    let at = words
        .iter()
        .position(|w| w == flag)
        .unwrap_or_else(|| panic!("no {flag} in {words:?}"));
    &words[at + 1]
}

/// A printed `curl` line run as curl runs it: its `Authorization` header's token, its `-d`
/// body (then a POST), its URL; the answer's body.
async fn curl(line: &str, replace: (&str, &str)) -> Value {
    let w = words(&line.replace(replace.0, replace.1));
    assert_eq!(w[0], "curl", "{line}");
    let token = w
        .iter()
        .find_map(|h| h.strip_prefix("Authorization: Bearer "))
        .unwrap_or_else(|| panic!("no token in {line}"));
    let body = w.iter().position(|x| x == "-d").map(|i| w[i + 1].as_str());
    let url = w.last().expect("url");
    let rest = url.strip_prefix("http://").expect("http URL");
    let (addr, path) = rest.split_at(rest.find('/').expect("path"));
    let r = support::http::request(
        addr.parse().expect("host address"),
        if body.is_some() { "POST" } else { "GET" },
        path,
        Some(token),
        body,
    )
    .await;
    assert_eq!(r.status, 200, "{line}: {}", r.raw);
    r.body
}

/// `tpf-sfn dev --backend lambda-durable` as a user runs it: it provisions TPF's tables on
/// moto, runs the durable driver function on the emulator behind its Lambda endpoint, and
/// prints the start TPF's ingress makes and the control-plane calls. The printed start (an
/// `Invoke` of the printed function under the printed name, with the printed payload, at the
/// printed endpoint), the printed pending and complete calls and the printed record call run
/// an order to SUCCEEDED: the durable execution ends with TPF's output, woken by the wake-up
/// (DELIVERED#1), and TPF's record is SUCCEEDED. When dev stops, the emulator stops with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_runs_the_durable_loop_in_one_command_as_printed() {
    use std::io::BufRead;

    let tools = harness::tools();
    let bootstrap = harness::bootstrap();
    let endpoint = support::moto_endpoint();
    let config = support::moto_config().await;
    let id = support::unique("durdev");
    let prefix = format!("{}_", id.replace('-', "_"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let listen = format!("127.0.0.1:{}", support::free_port());
    let lambda_listen = format!("127.0.0.1:{}", support::free_port());
    let log = dir.path().join("dev.log");
    let mut dev = support::cli();
    dev.arg("dev")
        .args(["--backend", "lambda-durable"])
        .args(["--endpoint-url", &endpoint, "--region", "us-east-1"])
        .args(["--prefix", &prefix, "--name-prefix", &id])
        .args(["--listen", &listen, "--lambda-listen", &lambda_listen])
        .args(["--tenant", TENANT, "--out", out.to_str().expect("utf-8")])
        .env("TPF_SFN_DEX_TOOLS", tools.dir())
        .env("TPF_SFN_LAMBDA_BOOTSTRAP", bootstrap)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("log"));
    let mut child = dev.spawn().expect("spawn tpf-sfn dev");
    let stdout = child.stdout.take().expect("stdout");
    let dev = support::Reaped(child);
    let logs = || {
        let mut all = std::fs::read_to_string(&log).unwrap_or_default();
        for f in ["dex", "watch", "function"] {
            let text = std::fs::read_to_string(out.join(format!("logs/{f}.log")));
            all.push_str(&format!("\n--- {f}\n{}", text.unwrap_or_default()));
        }
        all
    };
    // The summary, to its last line.
    let mut printed = String::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.expect("dev's output");
        printed.push_str(&line);
        printed.push('\n');
        if line.starts_with("Ctrl-C") {
            break;
        }
    }
    assert!(
        printed.contains("Ctrl-C stops"),
        "dev printed no summary:\n{printed}\n{}",
        logs()
    );
    assert!(printed.contains("(9 created, 0 existed)"), "{printed}");
    let line = |needle: &str| -> String {
        printed
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}:\n{printed}"))
            .to_owned()
    };
    // A token dev generated is printed, and every printed call carries it.
    let token = line("  token    ")
        .split_whitespace()
        .nth(1)
        .expect("token")
        .to_owned();
    assert!(token.len() >= 32, "{printed}");
    assert_eq!(printed.matches(&format!("Bearer {token}")).count(), 3);

    // The printed start, as printed: TPF's name for a fresh key, TPF's input.
    let start = &printed[printed.find("aws lambda invoke").expect("the start")..];
    let start = words(&start[..start.find("\n  #").expect("the start's end")]);
    let name = flag(&start, "--durable-execution-name").to_owned();
    let function = flag(&start, "--function-name").to_owned();
    assert_eq!(
        flag(&start, "--endpoint-url"),
        format!("http://{lambda_listen}")
    );
    assert_eq!(flag(&start, "--invocation-type"), "Event");
    let payload_file = flag(&start, "--payload")
        .strip_prefix("fileb://")
        .expect("a payload file");
    let payload = std::fs::read_to_string(payload_file).expect("the printed payload");
    let input = ExecutionInput::read(&payload).expect("TPF's input");
    assert_eq!(input.durable_execution_name(), name);
    assert_eq!((input.tenant_id.as_str(), input.generation), (TENANT, 1));
    assert!(function.contains(&id), "{function}");
    let lambda = aws_sdk_lambda::Client::from_conf(
        aws_sdk_lambda::config::Builder::from(&config)
            .endpoint_url(flag(&start, "--endpoint-url"))
            .build(),
    );
    let invoked = lambda
        .invoke()
        .function_name(&function)
        .durable_execution_name(&name)
        .invocation_type(aws_sdk_lambda::types::InvocationType::Event)
        .payload(aws_sdk_lambda::primitives::Blob::new(payload.clone()))
        .send()
        .await
        .unwrap_or_else(|e| {
            panic!(
                "{}\n{}",
                aws_sdk_lambda::error::DisplayErrorContext(&e),
                logs()
            )
        });
    assert_eq!(invoked.status_code(), 202);

    // The printed pending call, until the driver parked on the await.
    let pending = line("/interactions/pending");
    let interaction = support::gateway_loop::poll(120, || async {
        let listed = curl(&pending, ("", "")).await;
        listed.as_array()?.first()?["interactionId"]
            .as_str()
            .map(str::to_owned)
    })
    .await
    .unwrap_or_else(|| panic!("the driver never parked\n{}", logs()));
    // Parked: the driver registered its callback (completing before that is a completion the
    // driver's next poll sees, with no wake-up to make).
    let listed = curl(&pending, ("", "")).await;
    let execution_id = listed[0]["executionId"].as_str().expect("id").to_owned();
    support::gateway_loop::poll(120, || {
        support::binding_row(
            &config,
            &prefix,
            tpf_wire::gateway::names::registration_partition_key(TENANT, &execution_id),
            tpf_wire::gateway::names::registration_sort_key(1).expect("sort key"),
        )
    })
    .await
    .unwrap_or_else(|| panic!("the driver never registered its callback\n{}", logs()));
    let complete_at = printed
        .find("  curl -s -H 'Authorization: Bearer")
        .expect("curl");
    // The second of the three calls, over its three lines.
    let complete = printed[complete_at..]
        .split("\n  curl")
        .nth(1)
        .map(|c| format!("curl{c}"))
        .expect("the complete call");
    assert!(complete.contains("/interactions/complete"), "{complete}");
    let admitted = curl(&complete, ("<interactionId>", &interaction)).await;
    assert_eq!(admitted["status"], "COMPLETED", "{admitted}");
    assert_eq!(admitted["executionId"], execution_id.as_str(), "{admitted}");

    // The printed record call, until TPF's record ended.
    let record_line = line("/executions/<executionId>");
    let record = support::gateway_loop::poll(120, || async {
        let r = curl(&record_line, ("<executionId>", &execution_id)).await;
        (r["status"] == "SUCCEEDED").then_some(r)
    })
    .await;
    assert!(
        record.is_some(),
        "TPF's record never succeeded: {}\n{}",
        curl(&record_line, ("<executionId>", &execution_id)).await,
        logs()
    );

    // The durable execution on the emulator printed: SUCCEEDED with TPF's output.
    let emulator = line("run by the emulator at http://");
    let emulator = emulator
        .split("http://")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .expect("the emulator's address");
    let emulator: std::net::SocketAddr = emulator.parse().expect("address");
    let ended = support::gateway_loop::poll(120, || async {
        let r = support::http::request(
            emulator,
            "GET",
            "/2025-12-01/durable-executions",
            None,
            None,
        )
        .await;
        let e = r.body["DurableExecutions"]
            .as_array()?
            .iter()
            .find(|e| e["DurableExecutionName"] == name.as_str())?
            .clone();
        (e["Status"] != "RUNNING").then_some(e)
    })
    .await
    .unwrap_or_else(|| panic!("the durable execution never ended\n{}", logs()));
    assert_eq!(ended["Status"], "SUCCEEDED", "{ended}\n{}", logs());
    let arn = ended["DurableExecutionArn"].as_str().expect("arn");
    let encoded: String = arn
        .bytes()
        .map(|b| match b {
            b'/' | b':' | b'$' => format!("%{b:02X}"),
            _ => (b as char).to_string(),
        })
        .collect();
    let execution = support::http::request(
        emulator,
        "GET",
        &format!("/2025-12-01/durable-executions/{encoded}"),
        None,
        None,
    )
    .await
    .body;
    let output: Value =
        serde_json::from_str(execution["Result"].as_str().expect("result")).expect("output");
    assert_eq!(output["executionId"], execution_id.as_str(), "{output}");
    assert_eq!(output["tenantId"], TENANT, "{output}");
    assert_eq!(output["generation"], 1, "{output}");
    assert!(output["resultJson"].is_string(), "{output}");

    // The wake-up woke it (not the park's 30-minute timeout): its delivery evidence.
    // The wake-up writes it after its send, which the driver may outrun to its end.
    let row = support::gateway_loop::poll(60, || {
        support::delivered_row(&config, &prefix, TENANT, &interaction, 1)
    })
    .await
    .unwrap_or_else(|| panic!("no DELIVERED#1\n{}", logs()));
    assert_eq!(
        row.get("provider_outcome")
            .and_then(|v| v.as_s().ok())
            .map(String::as_str),
        Some("CALLBACK_ACCEPTED")
    );

    // The reconciler: a second order's driver, stopped while parked, is replaced by
    // generation 2 under TPF's name, which the completion then wakes to TPF's end.
    let second = ExecutionInput::new(
        Some(TENANT),
        Some("order-2"),
        tpf_wire::gateway::start::ReleaseIdentity {
            pipeline_id: Some(&input.pipeline_id),
            contract_version: Some(&input.contract_version),
            release_version: Some(&input.release_version),
        },
        Some(r#"{"orderId":"o-2"}"#),
        None,
        1,
    )
    .expect("TPF's input");
    lambda
        .invoke()
        .function_name(&function)
        .durable_execution_name(second.durable_execution_name())
        .invocation_type(aws_sdk_lambda::types::InvocationType::Event)
        .payload(aws_sdk_lambda::primitives::Blob::new(second.to_json()))
        .send()
        .await
        .expect("start order-2");
    let (second_id, interaction) = support::gateway_loop::poll(120, || async {
        let listed = curl(&pending, ("", "")).await;
        let i = listed.as_array()?.first()?.clone();
        Some((
            i["executionId"].as_str()?.to_owned(),
            i["interactionId"].as_str()?.to_owned(),
        ))
    })
    .await
    .unwrap_or_else(|| panic!("order-2 never reached its await\n{}", logs()));
    let registered = |generation| {
        support::binding_row(
            &config,
            &prefix,
            tpf_wire::gateway::names::registration_partition_key(TENANT, &second_id),
            tpf_wire::gateway::names::registration_sort_key(generation).expect("sort key"),
        )
    };
    let first_generation = support::gateway_loop::poll(120, || registered(1))
        .await
        .unwrap_or_else(|| panic!("order-2 never registered\n{}", logs()));
    let arn = first_generation["provider_execution_arn"]
        .as_s()
        .expect("the driver's execution")
        .clone();
    lambda
        .stop_durable_execution()
        .durable_execution_arn(&arn)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{}", aws_sdk_lambda::error::DisplayErrorContext(&e)));
    support::gateway_loop::poll(120, || registered(2))
        .await
        .unwrap_or_else(|| panic!("the reconciler started no generation 2\n{}", logs()));
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let next = durable_execution_name(Some(TENANT), Some(&second_id), 2).expect("name");
    assert!(
        log.contains(&format!("reconciler: {arn} ended; started {next}")),
        "{log}"
    );
    curl(&complete, ("<interactionId>", &interaction)).await;
    let ended = support::gateway_loop::poll(120, || async {
        let r = curl(&record_line, ("<executionId>", &second_id)).await;
        (r["status"] == "SUCCEEDED").then_some(())
    })
    .await;
    assert!(ended.is_some(), "order-2 never succeeded\n{}", logs());
    support::gateway_loop::poll(60, || {
        support::delivered_row(&config, &prefix, TENANT, &interaction, 2)
    })
    .await
    .unwrap_or_else(|| panic!("no DELIVERED#2\n{}", logs()));

    // dev stops, and its emulator with it.
    drop(dev);
    let stopped = support::gateway_loop::poll(20, || async {
        std::net::TcpStream::connect(emulator)
            .is_err()
            .then_some(())
    })
    .await;
    assert!(stopped.is_some(), "the emulator outlived dev");
}
