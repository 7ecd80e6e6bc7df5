//! The gateway driver end to end on moto's Step Functions interpreter: today's Restaurant
//! Approval compiled with the gateway binding and the queue transport, deployed, started by
//! TPF's ingress under TPF's execution names; the relay carries every request to `serve`'s
//! gateway route (TPF's gateway over the model, TPF's records in DynamoDB, TPF's work function
//! in process); the gateway wake-up answers the parked driver with `SendTaskSuccess` from the
//! real stream records of TPF's await-interaction table; the reconciler sees every driver that
//! ended. Each test is one of TPF's conformance scenarios (`docs/mapping.md`) and asserts on
//! TPF's record, the binding table's rows, moto's execution history, and that TPF's gateway
//! reader accepts every request the driver sent.

use crate::support;

use aws_sdk_sfn::types::ExecutionStatus;
use serde_json::Value;
use support::gateway_loop::{collapse, states, text, GatewayLoop, GatewayOptions, TENANT};
use tpf_wire::gateway::host::POLL_WAITS_SECONDS;
use tpf_wire::gateway::start::ExecutionInput;
use tpf_wire::gateway::{ActionRequest, Operation};

fn operations(requests: &[ActionRequest]) -> Vec<Operation> {
    requests.iter().map(|r| r.operation).collect()
}

/// TPF's durable execution name: `tpf-` and 48 lowercase hex digits.
fn assert_tpf_name(arn: &str) {
    let name = arn.rsplit(':').next().unwrap_or_default();
    assert!(
        name.len() == 52
            && name.starts_with("tpf-")
            && name[4..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{name}"
    );
}

/// The history's events of one type, by its name (`TaskTimedOut`, `TaskFailed`, …).
async fn count(lp: &GatewayLoop, arn: &str, kind: &str) -> usize {
    lp.history(arn)
        .await
        .iter()
        .filter(|e| e.r#type().as_str() == kind)
        .count()
}

/// TPF-11 (completion after binding): the driver submits, parks on its registration, the
/// completion's stream record wakes it through the wake-up, and it ends with TPF's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn happy_path_parks_is_woken_from_the_stream_and_ends_with_tpfs_result() {
    let lp = GatewayLoop::start(GatewayOptions::default()).await;
    let input = lp.input("order-1");
    let arn = lp.start_driver(&input).await;
    assert_tpf_name(&arn);
    // TPF's ingress started again is the same generation (TPF-01's rule).
    assert_eq!(lp.start_driver(&input).await, arn);

    let id = lp.execution_id(&arn).await;
    lp.wait_parked(&arn, &id).await;
    let registration = lp.registration(&id, 1).await.expect("REGISTRATION#…01");
    assert_eq!(text(&registration, "record_type"), "REGISTRATION");
    assert_eq!(text(&registration, "provider_execution_arn"), arn);
    assert_eq!(
        text(&registration, "provider_execution_name"),
        input.durable_execution_name()
    );
    assert_eq!(text(&registration, "generation"), "1");

    let interaction = lp.pending(&id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    let (status, ended) = lp.wait_ended(&arn).await;
    assert_eq!(status, ExecutionStatus::Succeeded, "{ended}\n{}", lp.logs());
    let record = lp.wait_record(&id, "SUCCEEDED").await;

    // TPF's AwsDurableExecutionOutput.
    let output = &ended["output"];
    assert_eq!(output["tenantId"], TENANT, "{output}");
    assert_eq!(output["executionId"], id.as_str(), "{output}");
    assert_eq!(output["generation"], 1, "{output}");
    assert_eq!(output["releaseVersion"], lp.release_version.as_str());
    assert!(output["resultJson"].is_string(), "{output}");
    assert!(record["status"] == "SUCCEEDED", "{record}");

    // The wake-up's rows: the BINDING of generation 1, then its delivery evidence.
    let binding = lp.binding(&interaction, 1).await.expect("BINDING GEN#…01");
    assert_eq!(text(&binding, "binding_status"), "OPEN");
    assert_eq!(text(&binding, "execution_id"), id);
    let delivery = lp.delivery(&interaction, 1).await.expect("DELIVERED#1");
    assert_eq!(text(&delivery, "provider_outcome"), "CALLBACK_ACCEPTED");
    assert_eq!(
        text(&delivery, "provider_callback_id"),
        text(&registration, "provider_callback_id")
    );
    let rows = lp.binding_rows().await;
    assert_eq!(
        rows.len(),
        3,
        "one registration, binding, delivery: {rows:?}"
    );

    // moto's history: parked once, woken once (no timeout), never a failed task.
    let entered = lp.entered(&arn).await;
    assert_eq!(entered.iter().filter(|s| *s == states::PARK).count(), 1);
    assert_eq!(entered.iter().filter(|s| *s == states::WOKEN).count(), 1);
    assert!(!entered.iter().any(|s| s == states::DEADLINE_PASSED));
    assert_eq!(count(&lp, &arn, "TaskFailed").await, 0);
    assert_eq!(count(&lp, &arn, "TaskTimedOut").await, 0);

    // Every request TPF's gateway reader accepts, in the driver's order.
    let ops = operations(&lp.requests(&arn).await);
    assert_eq!(ops.first(), Some(&Operation::Submit), "{ops:?}");
    assert_eq!(
        ops.iter()
            .filter(|o| **o == Operation::RegisterCallback)
            .count(),
        1,
        "{ops:?}"
    );
    assert_eq!(ops.last(), Some(&Operation::Result), "{ops:?}");
    assert_eq!(ops.iter().filter(|o| **o == Operation::Submit).count(), 1);
    // Our interpreter's run of the same scenario on the same driver makes the same calls;
    // its run of another scenario (the deadline passing) does not.
    assert_eq!(
        collapse(ops.clone()),
        lp.interpreter_operations("tpf-11-completion-after-binding")
    );
    assert_ne!(
        collapse(ops),
        lp.interpreter_operations("tpf-22-await-deadline")
    );
    // The reconciler had nothing to do.
    assert!(lp.reconciled.lock().unwrap().is_empty());
}

/// TPF-22 (AWS schedules the await deadline, TPF admits the timeout): nobody completes the
/// await; the park times out at the deadline + 1 s, the driver sweeps, TPF times the await out
/// and the driver fails with TPF's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn await_timeout_park_times_out_sweeps_and_fails_with_tpfs_status() {
    // Twice TPF's first poll wait: a driver whose first STATUS comes before TPF's work reaches
    // the await sees it at the next poll, with half the deadline left to park. A shorter
    // deadline lets that driver's second SWEEP time the await out before it ever parks.
    let lp = GatewayLoop::start(GatewayOptions {
        await_seconds: Some(2 * POLL_WAITS_SECONDS[0]),
        ..GatewayOptions::default()
    })
    .await;
    let arn = lp.start_driver(&lp.input("order-1")).await;
    let id = lp.execution_id(&arn).await;
    let (status, ended) = lp.wait_ended(&arn).await;
    assert_eq!(status, ExecutionStatus::Failed, "{ended}\n{}", lp.logs());
    assert_eq!(ended["error"], "TPF.ExecutionEnded", "{ended}");
    assert_eq!(
        ended["cause"], "TPF execution ended with status FAILED",
        "{ended}"
    );
    let record = lp.wait_record(&id, "FAILED").await;
    assert_eq!(record["errorCode"], "AWAIT_TIMEOUT", "{record}");

    // Registered once; the registration's record bound the pending await (TPF's wake-up
    // binds the first checkpoint to the registration's generation); nothing was delivered.
    assert!(lp.registration(&id, 1).await.is_some());
    let mut kinds: Vec<String> = lp.binding_rows().await.into_iter().map(|r| r.2).collect();
    kinds.sort();
    assert_eq!(kinds, ["BINDING", "REGISTRATION"]);

    // The park's timeout, then the sweep that let TPF apply its deadline.
    assert_eq!(count(&lp, &arn, "TaskTimedOut").await, 1);
    let entered = lp.entered(&arn).await;
    let after = entered
        .iter()
        .position(|s| s == states::DEADLINE_PASSED)
        .expect("the deadline route");
    assert_eq!(entered[after + 1], states::SWEEP, "{entered:?}");
    assert_eq!(
        entered.last().map(String::as_str),
        Some(states::ENDED_FAILED)
    );
    let ops = operations(&lp.requests(&arn).await);
    assert!(!ops.contains(&Operation::Result), "{ops:?}");
    assert_eq!(
        collapse(ops),
        lp.interpreter_operations("tpf-22-await-deadline")
    );

    // The ended driver reaches the reconciler, which leaves a FAILED execution alone.
    let seen = support::gateway_loop::poll(30, || async {
        let r = lp.reconciled.lock().unwrap().clone();
        (!r.is_empty()).then_some(r)
    })
    .await
    .expect("the reconciler saw the failed driver");
    assert_eq!(seen[0].0, arn);
    assert!(seen[0].1.starts_with("nothing"), "{seen:?}");
}

/// The driver `arn` parks on TPF's await of `id`, TPF's pending interaction is completed, and
/// the driver ends SUCCEEDED: the interaction and the ended execution's description.
async fn completed_after_its_park(lp: &GatewayLoop, arn: &str, id: &str) -> (String, Value) {
    lp.wait_parked(arn, id).await;
    let interaction = lp.pending(id).await.expect("pending interaction");
    lp.complete(&interaction).await;
    let (status, ended) = lp.wait_ended(arn).await;
    assert_eq!(status, ExecutionStatus::Succeeded, "{ended}\n{}", lp.logs());
    (interaction, ended)
}

/// `serve`'s script for TPF-21: the first step fails on each of TPF's four attempts, then
/// (re-driven) completes.
const RETRIES_EXHAUSTED: &str = "[[steps]]\nstep = \"Validate Order Request\"\noutcomes = [\
     \"fail-retryable:TransientError\", \"fail-retryable:TransientError\", \
     \"fail-retryable:TransientError\", \"fail-retryable:TransientError\", \"complete\"]\n";

/// TPF-21 (retry exhaustion keeps TPF's DLQ and re-drive authority): the first step fails on
/// every attempt; TPF gives up, generation 1 fails with TPF's text; an operator re-drives in
/// TPF and generation 2 starts from TPF's replacement input, named by TPF's recipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_exhaustion_then_redrive_ends_in_generation_2() {
    let lp = GatewayLoop::start(GatewayOptions {
        script: Some(RETRIES_EXHAUSTED),
        ..GatewayOptions::default()
    })
    .await;
    let first = lp.start_driver(&lp.input("order-1")).await;
    let id = lp.execution_id(&first).await;
    let (status, ended) = lp.wait_ended(&first).await;
    assert_eq!(status, ExecutionStatus::Failed, "{ended}\n{}", lp.logs());
    assert_eq!(ended["error"], "TPF.ExecutionEnded", "{ended}");
    assert_eq!(ended["cause"], "TPF execution ended with status FAILED");
    let failed = lp.wait_record(&id, "FAILED").await;
    assert!(
        failed["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("TransientError")),
        "{failed}"
    );
    // The driver polled through TPF's retries without parking.
    assert!(lp.registration(&id, 1).await.is_none());
    assert!(!lp.entered(&first).await.iter().any(|s| s == states::PARK));

    let redrive = lp.redrive(&id).await;
    assert_eq!(redrive["status"], "QUEUED", "{redrive}");
    let version = redrive["version"].as_i64().expect("version");
    let next = ExecutionInput::resume_execution(TENANT, &id, 1, lp.release()).expect("resume");
    assert_eq!(next.generation, 2);
    let second = lp.start_driver(&next).await;
    assert_tpf_name(&second);
    assert_ne!(second, first);

    let (interaction, ended) = completed_after_its_park(&lp, &second, &id).await;
    assert_eq!(ended["output"]["generation"], 2, "{ended}");
    assert_eq!(ended["output"]["executionId"], id.as_str());
    let done = lp.wait_record(&id, "SUCCEEDED").await;
    assert!(done["version"].as_i64().unwrap_or(0) > version, "{done}");

    // Generation 2 resumed (no SUBMIT) and registered and was delivered under its generation.
    let ops = operations(&lp.requests(&second).await);
    assert!(!ops.contains(&Operation::Submit), "{ops:?}");
    assert_eq!(
        lp.entered(&second).await.first().map(String::as_str),
        Some(states::START)
    );
    assert!(lp
        .entered(&second)
        .await
        .iter()
        .any(|s| s == states::RESUME));
    assert!(lp.registration(&id, 1).await.is_none());
    assert!(lp.registration(&id, 2).await.is_some());
    assert!(lp.binding(&interaction, 2).await.is_some());
    let delivery = lp.delivery(&interaction, 2).await.expect("DELIVERED#2");
    assert_eq!(text(&delivery, "provider_outcome"), "CALLBACK_ACCEPTED");
    for arn in [&first, &second] {
        lp.requests(arn).await;
        assert_eq!(count(&lp, arn, "TaskFailed").await, 0);
    }
    // Both generations' calls, in order, as our interpreter's run of the same scenario.
    let mut both = operations(&lp.requests(&first).await);
    both.extend(ops);
    assert_eq!(
        collapse(both),
        lp.interpreter_operations("tpf-21-retry-exhaustion-redrive")
    );
}

/// A scheduled-sweep driver's SWEEPs: each follows the generation's start, the retry lane's
/// wait, a wake or a passed deadline; the queued-or-running lane's wait leads to STATUS.
fn sweeps_only_at_start_on_retry_or_after_a_park(entered: &[String]) {
    for pair in entered.windows(2) {
        let (before, state) = (pair[0].as_str(), pair[1].as_str());
        if state == states::SWEEP {
            assert!(
                [
                    states::START_POLLING,
                    states::WAIT_TO_SWEEP,
                    states::WOKEN,
                    states::DEADLINE_PASSED
                ]
                .contains(&before),
                "a sweep after {before}: {entered:?}"
            );
        }
        if before == states::WAIT {
            assert_eq!(state, states::STATUS, "{entered:?}");
        }
    }
}

/// `sweeper.mode = "schedule"` on moto's interpreter: the driver polls STATUS alone while TPF's
/// work is queued or running, and sweeps only at its start, while TPF waits to retry and after
/// its park, so TPF-21's retries are still queued (the wake-path stack's schedule is not needed
/// for them) and the execution fails after its last retry; re-driven, generation 2 parks and is
/// woken. Its calls are our interpreter's for the same release.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_sweep_release_sweeps_only_while_tpf_waits_to_retry() {
    let lp = GatewayLoop::start(GatewayOptions {
        script: Some(RETRIES_EXHAUSTED),
        extra_config: "[sweeper]\nmode = \"schedule\"\nschedule = \"rate(1 minute)\"\n",
        ..GatewayOptions::default()
    })
    .await;
    let first = lp.start_driver(&lp.input("order-1")).await;
    let id = lp.execution_id(&first).await;
    let (status, ended) = lp.wait_ended(&first).await;
    assert_eq!(status, ExecutionStatus::Failed, "{ended}\n{}", lp.logs());
    assert_eq!(ended["cause"], "TPF execution ended with status FAILED");
    let entered = lp.entered(&first).await;
    assert!(
        entered.iter().any(|s| s == states::WAIT_TO_SWEEP),
        "{entered:?}"
    );
    sweeps_only_at_start_on_retry_or_after_a_park(&entered);
    let ops = operations(&lp.requests(&first).await);

    lp.redrive(&id).await;
    let next = ExecutionInput::resume_execution(TENANT, &id, 1, lp.release()).expect("resume");
    let second = lp.start_driver(&next).await;
    completed_after_its_park(&lp, &second, &id).await;
    lp.wait_record(&id, "SUCCEEDED").await;
    sweeps_only_at_start_on_retry_or_after_a_park(&lp.entered(&second).await);
    let mut both = ops;
    both.extend(operations(&lp.requests(&second).await));
    assert_eq!(
        collapse(both),
        lp.interpreter_operations("tpf-21-retry-exhaustion-redrive")
    );
}

/// TPF-19 (missed stream record): the wake-up is off for the whole run, so no signal is ever
/// sent; the completion still ends the driver as TPF's record ends, through the park's timeout
/// (the await's deadline + 1 s) and the polls after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_wakeup_the_park_timeout_sweeps_and_the_driver_ends_as_tpf_does() {
    let lp = GatewayLoop::start(GatewayOptions {
        await_seconds: Some(12),
        no_wakeup: true,
        ..GatewayOptions::default()
    })
    .await;
    let arn = lp.start_driver(&lp.input("order-1")).await;
    let id = lp.execution_id(&arn).await;
    lp.wait_parked(&arn, &id).await;
    let interaction = lp.pending(&id).await.expect("pending interaction");
    let admitted = lp.complete(&interaction).await;
    assert_ne!(admitted["duplicate"], Value::Bool(true), "{admitted}");

    let (status, ended) = lp.wait_ended(&arn).await;
    assert_eq!(status, ExecutionStatus::Succeeded, "{ended}\n{}", lp.logs());
    let record = lp.wait_record(&id, "SUCCEEDED").await;
    assert_eq!(ended["output"]["executionId"], id.as_str(), "{record}");

    // No wake-up: no BINDING, no DELIVERY; the park ended by its timeout, not a signal.
    let rows = lp.binding_rows().await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].2, "REGISTRATION");
    assert_eq!(count(&lp, &arn, "TaskTimedOut").await, 1);
    let entered = lp.entered(&arn).await;
    assert!(entered.iter().any(|s| s == states::DEADLINE_PASSED));
    assert!(!entered.iter().any(|s| s == states::WOKEN));
    let ops = operations(&lp.requests(&arn).await);
    assert_eq!(ops.last(), Some(&Operation::Result), "{ops:?}");
    assert_eq!(
        collapse(ops),
        lp.interpreter_operations("tpf-19-missed-stream-record")
    );
}

/// `tpf-sfn dev` provisions everything and wires the gateway loop: the gateway driver deployed
/// alone (the config's gateway settings kept, its transport the queue), the gateway
/// relay, the wake-up and the reconciler. The start it prints (TPF's ingress: StartExecution
/// under TPF's name) runs an order through the printed control-plane calls to SUCCEEDED. A
/// second start finds everything in place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_runs_the_gateway_loop_in_one_command() {
    use support::gateway_loop::{cli, free_port, poll, TOKEN};

    let endpoint = support::moto_endpoint();
    let config = support::moto_config().await;
    let sfn = aws_sdk_sfn::Client::new(&config);
    let id = support::unique("gwdev");
    let prefix = format!("{}_", id.replace('-', "_"));
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("tpf-sfn.toml");
    std::fs::write(
        &cfg,
        "[binding]\nkind = \"gateway\"\n[binding.gateway]\n\
         function-arn = \"arn:aws:lambda:us-east-1:123456789012:function:tpf-action:3\"\n",
    )
    .expect("config");
    let out = dir.path().join("out");
    let listen = format!("127.0.0.1:{}", free_port());
    let log = dir.path().join("dev.log");
    let mut dev = cli();
    dev.arg("dev")
        .args(["--config", cfg.to_str().expect("utf-8")])
        .args(["--endpoint-url", &endpoint, "--region", "us-east-1"])
        .args([
            "--prefix",
            &prefix,
            "--name-prefix",
            &id,
            "--listen",
            &listen,
        ])
        .args(["--tenant", TENANT, "--out", out.to_str().expect("utf-8")])
        .args(["--format", "json"]);
    let args: Vec<std::ffi::OsString> = dev.get_args().map(ToOwned::to_owned).collect();
    let (dev, summary) = support::start_dev(dev, &log);
    let logs = || std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(summary["protocol"], "gateway", "{summary}");
    let tables = summary["tables"].as_array().expect("tables");
    assert_eq!(tables.len(), 9, "{summary}");
    assert!(tables.iter().all(|t| t["created"] == true), "{summary}");
    assert_eq!(summary["token"]["from"], "TPF_SFN_TOKEN");
    assert!(
        summary["token"]["value"].is_null(),
        "a chosen token is never printed"
    );
    let roles: Vec<&str> = summary["machines"]
        .as_array()
        .expect("machines")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        ["driver"],
        "the gateway driver sweeps itself: {summary}"
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("manifest.json")).expect("manifest"),
    )
    .expect("manifest json");
    assert_eq!(manifest["binding"]["kind"], "gateway", "{manifest}");
    assert_eq!(
        manifest["binding"]["parameters"]["gatewayFunctionArn"],
        "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:3",
        "the config's gateway settings are kept: {manifest}"
    );

    // The printed start, as printed.
    let start = &summary["start"];
    let name = start["name"].as_str().expect("name");
    let input = ExecutionInput::read(start["input"].as_str().expect("input")).expect("TPF's input");
    assert_eq!(input.durable_execution_name(), name);
    assert_eq!(input.generation, 1);
    let arn = sfn
        .start_execution()
        .state_machine_arn(start["stateMachineArn"].as_str().expect("machine"))
        .name(name)
        .input(start["input"].as_str().expect("input"))
        .send()
        .await
        .expect("start the driver")
        .execution_arn()
        .to_owned();
    assert_tpf_name(&arn);

    // The printed control-plane calls: the pending interaction, its completion.
    let addr: std::net::SocketAddr = listen.parse().expect("addr");
    let pending = |addr| async move {
        let r = support::http::request(
            addr,
            "GET",
            &format!("/tpf/control-plane/tenants/{TENANT}/interactions/pending"),
            Some(TOKEN),
            None,
        )
        .await;
        r.body.as_array()?.first()?["interactionId"]
            .as_str()
            .map(str::to_owned)
    };
    let interaction = poll(120, || async {
        let history = sfn
            .get_execution_history()
            .execution_arn(&arn)
            .max_results(1000)
            .send()
            .await
            .ok()?;
        let parked = history
            .events()
            .iter()
            .rev()
            .find_map(|e| e.state_entered_event_details())
            .is_some_and(|d| d.name() == states::PARK);
        if parked {
            pending(addr).await
        } else {
            None
        }
    })
    .await
    .unwrap_or_else(|| panic!("the driver never parked\n{}", logs()));
    support::http::complete_interaction(addr, TOKEN, TENANT, &interaction).await;
    let done = poll(120, || async {
        let d = sfn
            .describe_execution()
            .execution_arn(&arn)
            .send()
            .await
            .ok()?;
        (d.status() != &ExecutionStatus::Running)
            .then(|| (d.status().clone(), d.output().map(str::to_owned)))
    })
    .await
    .unwrap_or_else(|| panic!("the driver never ended\n{}", logs()));
    assert_eq!(
        done.0,
        ExecutionStatus::Succeeded,
        "{:?}\n{}",
        done.1,
        logs()
    );
    let output: Value = serde_json::from_str(&done.1.unwrap_or_default()).expect("output");
    assert_eq!(output["generation"], 1, "{output}");
    // The wake-up, not the park's 30-minute timeout, resumed it: its delivery evidence.
    let row = support::delivered_row(&config, &prefix, TENANT, &interaction, 1)
        .await
        .unwrap_or_else(|| panic!("no DELIVERED#1\n{}", logs()));
    assert_eq!(text(&row, "provider_outcome"), "CALLBACK_ACCEPTED");
    // TPF's record ended too.
    let id = output["executionId"].as_str().expect("executionId");
    let record = support::http::execution_record(addr, TOKEN, TENANT, id).await;
    assert_eq!(record["status"], "SUCCEEDED", "{record}");
    drop(dev);

    // Idempotent: the second start creates nothing and leaves the machine unchanged.
    let mut again = cli();
    again.arg("dev").args(&args[1..]);
    let (_dev, again) = support::start_dev(again, &log);
    let tables = again["tables"].as_array().expect("tables");
    assert!(tables.iter().all(|t| t["created"] == false), "{again}");
    for m in again["machines"].as_array().expect("machines") {
        assert_eq!(m["action"], "unchanged", "{again}");
    }
}

/// Runs `tpf-sfn dev` with `args` (plus `--out` in a fresh directory) where it must refuse:
/// exit 2, nothing written. Returns its stderr.
fn dev_refusal(args: &[&str], endpoint: Option<&str>) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let mut cmd = support::gateway_loop::cli();
    cmd.arg("dev")
        .args(args)
        .args(["--out", out.to_str().expect("utf-8")]);
    match endpoint {
        Some(url) => cmd.args(["--endpoint-url", url, "--region", "us-east-1"]),
        None => cmd.env_remove("AWS_ENDPOINT_URL"),
    };
    let o = cmd.output().expect("run");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!out.exists(), "nothing written: {err}");
    err
}

/// A bad contract stops dev with the compiler's coded diagnostic before any AWS call: the
/// endpoint here refuses every connection, and the error is still the contract's.
#[test]
fn dev_with_a_bad_contract_fails_before_creating_anything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let contract = dir.path().join("bad.pipeline-contract.json");
    std::fs::write(&contract, "{\"schemaVersion\": 1}").expect("contract");
    let err = dev_refusal(
        &[contract.to_str().expect("utf-8")],
        Some("http://127.0.0.1:9"),
    );
    assert!(err.contains("error[CONTRACT_"), "{err}");
    assert!(!err.contains("DYNAMODB"), "no AWS call was made: {err}");
}

/// An address someone else listens on is refused up front, not mistaken for the host.
#[test]
fn dev_refuses_a_listen_address_in_use() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let listen = taken.local_addr().expect("addr").to_string();
    let err = dev_refusal(&["--listen", &listen], Some("http://127.0.0.1:9"));
    assert!(err.contains("error[LISTEN]"), "{err}");
}

/// Without an emulator endpoint, dev needs a real role; it says so before touching anything.
#[test]
fn dev_without_endpoint_or_role_is_refused_with_a_code() {
    let err = dev_refusal(&[], None);
    assert!(err.contains("DEV_ROLE"), "{err}");
}

/// TPF refuses generation 1's REGISTER_CALLBACK (its REGISTRATION row already holds another
/// callback id: TPF's "already owned by another callback", a function error no transport retry
/// covers). The park's catch-all waits TPF's ladder at generation 1, 5 s, then enters the
/// hand-over. moto runs no Lambda function, so the starter cannot start generation 2 here; the
/// test stops the driver at its hand-over (the gateway world's
/// `registration-refused-until-deadline` runs the hand-overs on both engines).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_registration_waits_tpfs_ladder_before_its_hand_over() {
    use tpf_sfn_wakepath::gateway::invoke::{Invoked, Invoker};
    use tpf_wire::gateway::binding::{CallbackRegistration, ProviderFields};
    use tpf_wire::gateway::host::refused_registration_wait_seconds;
    use tpf_wire::gateway::DriverCheckpoint;

    let lp = GatewayLoop::start(GatewayOptions::default()).await;
    let input = lp.input("order-refused");
    // Another callback owns generation 1 before the driver exists: the test submits
    // generation 1's input to TPF itself, and the driver's own SUBMIT of the same idempotency
    // key is answered with the same execution. Nothing races the driver to its park.
    let submit = ActionRequest::submit(&input).expect("SUBMIT");
    let Ok(Invoked::Response(submitted)) = lp.host().gateway.invoke(&submit).await else {
        panic!("TPF answers the test's SUBMIT\n{}", lp.logs());
    };
    let execution = submitted.checkpoint.expect("SUBMIT's checkpoint");
    let id = execution.execution_id.clone();
    let foreign = CallbackRegistration::new(
        DriverCheckpoint::new(execution, 1).expect("driver checkpoint"),
        ProviderFields::new(
            Some("another-driver"),
            Some("arn:aws:states:us-east-1:123456789012:execution:other:another-driver"),
            Some("another-callback"),
        )
        .expect("provider fields"),
        1,
        4_102_444_800,
    )
    .expect("registration");
    lp.ddb
        .put_item()
        .table_name(&lp.names.callback_binding)
        .set_item(Some(tpf_sfn_wakepath::aws::item::to_sdk(
            &foreign.to_item(),
        )))
        .send()
        .await
        .expect("put the other callback's REGISTRATION");
    let arn = lp.start_driver(&input).await;
    assert_eq!(
        lp.execution_id(&arn).await,
        id,
        "the driver's SUBMIT is the test's"
    );

    let handed = support::gateway_loop::poll(120, || async {
        lp.entered(&arn)
            .await
            .iter()
            .any(|s| s == states::HAND_OVER)
            .then_some(())
    })
    .await;
    assert!(
        handed.is_some(),
        "never reached the hand-over\n{}",
        lp.logs()
    );
    let history = lp.history(&arn).await;
    let _ = lp.sfn.stop_execution().execution_arn(&arn).send().await;

    // The refused park, the wait's choice and rung, the wait, then the hand-over.
    let entered = lp.entered(&arn).await;
    let from = entered
        .iter()
        .position(|s| s == states::PARK)
        .expect("parked");
    assert_eq!(
        entered[from..from + 5],
        [
            states::PARK,
            states::REFUSED,
            states::REFUSED_NEXT,
            states::WAIT_TO_HAND_OVER,
            states::HAND_OVER,
        ],
        "{entered:?}"
    );
    // The park failed with TPF's exception (the relay's SendTaskFailure), not a transport's.
    let refused = history
        .iter()
        .find_map(|e| e.task_failed_event_details())
        .expect("the park's failure");
    assert!(
        refused
            .error()
            .is_some_and(|e| e.contains("IllegalStateException")),
        "{:?}",
        refused.error()
    );
    // The Wait's input holds the ladder's rung at generation 1, and it lasted that long.
    let wait = refused_registration_wait_seconds(1);
    let entered_wait = history
        .iter()
        .find(|e| {
            e.state_entered_event_details()
                .is_some_and(|d| d.name() == states::WAIT_TO_HAND_OVER)
        })
        .expect("the wait entered");
    let waited: Value = serde_json::from_str(
        entered_wait
            .state_entered_event_details()
            .and_then(|d| d.input())
            .expect("the wait's input"),
    )
    .expect("json");
    assert_eq!(waited["loop"]["seconds"], wait, "{waited}");
    let exited_wait = history
        .iter()
        .find(|e| {
            e.state_exited_event_details()
                .is_some_and(|d| d.name() == states::WAIT_TO_HAND_OVER)
        })
        .expect("the wait exited");
    let lasted = exited_wait.timestamp().secs() - entered_wait.timestamp().secs();
    assert!(
        lasted >= i64::try_from(wait).unwrap() - 1,
        "the wait lasted {lasted} s"
    );
    // TPF kept the other callback's registration.
    let row = lp.registration(&id, 1).await.expect("REGISTRATION#…01");
    assert_eq!(text(&row, "provider_callback_id"), "another-callback");
}
