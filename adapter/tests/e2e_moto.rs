//! The whole runtime loop on moto, as a user runs it: `tables create`, `compile --binding queue`,
//! `deploy`, then `serve` (DynamoDB store), `bridge` and `relay` as child processes. A submitted
//! execution starts its driver (bridge), runs its first segment through SQS (relay), parks at the
//! await, and a completed interaction wakes the driver to SUCCEEDED, in TPF's record and in moto's
//! own Step Functions interpreter.

mod support;

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_sfn::types::ExecutionStatus;
use serde_json::{json, Value};
use support::http::request;
use tpf_sfn_compiler::compile::Input;
use tpf_sfn_compiler::config::BindingKind;
use tpf_sfn_mapping::proof;
use tpf_sfn_mapping::scenario::{self, matrix, run::driver_executions};

const TOKEN: &str = "e2e-token";
const TENANT: &str = "t1";
const ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn-e2e";

fn tpf_sfn() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tpf-sfn"));
    // Static credentials, explicit region, never instance metadata or the user's profiles.
    c.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", "/dev/null")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
        .env("TPF_SFN_TOKEN", TOKEN);
    c
}

fn run(args: &[&str]) -> Output {
    let o = tpf_sfn().args(args).output().expect("run tpf-sfn");
    assert!(
        o.status.success(),
        "tpf-sfn {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Kills the runtime processes when the test ends, also on panic.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn spawn(args: &[&str], log: &Path) -> Child {
    let file = std::fs::File::create(log).expect("log file");
    tpf_sfn()
        .args(args)
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .expect("spawn tpf-sfn")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("ephemeral port")
        .port()
}

/// Polls `probe` every 100 ms, at most `tries` times; `None` when it never answered.
async fn poll<T, F, Fut>(tries: u32, mut probe: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..tries {
        if let Some(v) = probe().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

async fn record_status(addr: SocketAddr, id: &str) -> String {
    let r = request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/{TENANT}/executions/{id}"),
        Some(TOKEN),
        None,
    )
    .await;
    r.body["status"].as_str().unwrap_or("").to_owned()
}

/// TPF's record status read straight from DynamoDB, as `tpf-sfn status` reports it.
fn stored_status(out: &Path, execution: &str, execution_table: &str, endpoint: &str) -> String {
    let o = tpf_sfn()
        .args(["status", "--out", out.to_str().expect("utf-8 path")])
        .args(["--tenant", TENANT, "--execution", execution])
        .args(["--execution-table", execution_table, "--format", "json"])
        .args(["--endpoint-url", endpoint, "--region", "us-east-1"])
        .output()
        .expect("run tpf-sfn status");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    report["record"]["status"].as_str().unwrap_or("").to_owned()
}

/// Names of the states the driver entered, in order; empty until the bridge has started it.
async fn entered_states(sfn: &aws_sdk_sfn::Client, arn: &str) -> Vec<String> {
    let Ok(history) = sfn
        .get_execution_history()
        .execution_arn(arn)
        .max_results(1000)
        .send()
        .await
    else {
        return Vec::new();
    };
    history
        .events()
        .iter()
        .filter_map(|e| e.state_entered_event_details())
        .map(|d| d.name().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_parks_completes_and_succeeds_through_bridge_and_relay() {
    drive(None).await;
}

/// The first step fails non-retryably: TPF's record and the driver are FAILED; a TPF re-drive
/// (attempt 1 completes) makes the bridge start generation `<id>-r<version>` on the same machine,
/// which then runs the happy path to SUCCEEDED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_step_then_tpf_redrive_starts_a_new_generation_that_succeeds() {
    drive(Some(
        "[[steps]]\nstep = \"Validate Order Request\"\noutcomes = [\"fail-non-retryable:java.lang.IllegalStateException\", \"complete\"]\n",
    ))
    .await;
}

async fn drive(script: Option<&str>) {
    let endpoint = support::moto_endpoint();
    let config = support::moto_config().await;
    let sfn = aws_sdk_sfn::Client::new(&config);
    let sqs = aws_sdk_sqs::Client::new(&config);
    let conn = ["--endpoint-url", endpoint.as_str(), "--region", "us-east-1"];
    let id = support::unique("e2e");
    let prefix = format!("{}_", id.replace('-', "_"));
    let name_prefix = id.clone();

    let mut args = vec!["tables", "create", "--prefix", &prefix];
    args.extend(conn);
    run(&args);
    let queue_url = sqs
        .create_queue()
        .queue_name(&id)
        .send()
        .await
        .expect("queue")
        .queue_url()
        .expect("queue url")
        .to_owned();

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("release");
    let cfg = dir.path().join("tpf-sfn.toml");
    std::fs::write(
        &cfg,
        format!(
            "name-prefix = \"{name_prefix}\"\n[binding]\nkind = \"queue\"\n[binding.queue]\nqueue-url = \"{queue_url}\"\n\
             [wakeup]\ntable-name = \"{prefix}tpf_sfn_wakeup\"\n[history]\nevent-budget = 20000\n"
        ),
    )
    .expect("config");
    let contracts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/contracts");
    let contract = contracts.join("restaurant-approval.pipeline-contract.json");
    let contract = contract.to_str().expect("utf-8 path");
    let release = contracts.join("restaurant-approval.pipeline-release.json");
    run(&[
        "compile",
        contract,
        "--release",
        release.to_str().expect("utf-8 path"),
        "--binding",
        "queue",
        "--config",
        cfg.to_str().expect("utf-8 path"),
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let mut args = vec![
        "deploy",
        "--out",
        out.to_str().expect("utf-8"),
        "--role-arn",
        ROLE,
    ];
    args.extend(conn);
    run(&args);
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("manifest.json")).expect("manifest"),
    )
    .expect("manifest json");
    let pipeline_id = manifest["identity"]["pipelineId"]
        .as_str()
        .expect("pipelineId")
        .to_owned();

    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    let listen = addr.to_string();
    let action_url = format!("http://{addr}");
    let arn_prefix = "arn:aws:states:us-east-1:123456789012:stateMachine:";
    let logs = dir.path();
    let mut serve = vec![
        "serve",
        "--pipeline-contract",
        contract,
        "--listen",
        &listen,
        "--store",
        "dynamodb",
        "--prefix",
        &prefix,
        "--activate-tenant",
        TENANT,
    ];
    let script_path = dir.path().join("script.toml");
    if let Some(text) = script {
        std::fs::write(&script_path, text).expect("script");
        serve.extend(["--script", script_path.to_str().expect("utf-8 path")]);
    }
    serve.extend(conn);
    let mut bridge = vec![
        "bridge",
        "--machine-arn-prefix",
        arn_prefix,
        "--name-prefix",
        &name_prefix,
        "--interval-ms",
        "100",
        "--prefix",
        &prefix,
    ];
    bridge.extend(conn);
    let mut relay = vec![
        "relay",
        "--queue-url",
        &queue_url,
        "--action-url",
        &action_url,
        "--wait-seconds",
        "1",
    ];
    relay.extend(conn);
    let _children = Children(vec![
        spawn(&serve, &logs.join("serve.log")),
        spawn(&bridge, &logs.join("bridge.log")),
        spawn(&relay, &logs.join("relay.log")),
    ]);
    let logs_text = || {
        ["serve.log", "bridge.log", "relay.log"]
            .iter()
            .map(|f| {
                format!(
                    "--- {f}\n{}",
                    std::fs::read_to_string(logs.join(f)).unwrap_or_default()
                )
            })
            .collect::<String>()
    };
    let up = poll(200, || async {
        std::net::TcpStream::connect(addr).ok().map(|_| ())
    })
    .await;
    assert!(up.is_some(), "serve never listened\n{}", logs_text());

    // Submit: the bridge starts the driver, the driver's first call goes through SQS and the relay.
    let submit = json!({
        "pipelineId": pipeline_id, "inputShape": "UNI",
        "inputPayload": {"orderId": "order-1"}, "idempotencyKey": "order-1", "outputStreaming": false
    })
    .to_string();
    let accepted = request(
        addr,
        "POST",
        &format!("/tpf/control-plane/tenants/{TENANT}/executions"),
        Some(TOKEN),
        Some(&submit),
    )
    .await;
    assert_eq!(accepted.status, 200, "{}", accepted.raw);
    let execution = accepted.body["executionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let driver = manifest["machines"]["driver"]["name"]
        .as_str()
        .expect("driver machine")
        .to_owned();
    let mut execution_arn =
        format!("arn:aws:states:us-east-1:123456789012:execution:{driver}:{execution}");
    if script.is_some() {
        let failed = poll(200, || async {
            let d = sfn
                .describe_execution()
                .execution_arn(&execution_arn)
                .send()
                .await
                .ok()?;
            (d.status() == &ExecutionStatus::Failed
                && record_status(addr, &execution).await == "FAILED")
                .then_some(())
        })
        .await;
        assert!(failed.is_some(), "never FAILED in both\n{}", logs_text());
        let redrive = request(
            addr,
            "POST",
            &format!("/tpf/admin/tenants/{TENANT}/executions/{execution}/redrive"),
            Some(TOKEN),
            Some(r#"{"allowFailed": true}"#),
        )
        .await;
        assert_eq!(redrive.status, 200, "{}", redrive.raw);
        let version = redrive.body["version"].as_i64().expect("version");
        // The bridge names the re-drive's generation `<id>-r<version>` on the same machine.
        execution_arn = format!("{execution_arn}-r{version}");
    }

    let parked = poll(200, || async {
        let entered = entered_states(&sfn, &execution_arn).await;
        (record_status(addr, &execution).await == "WAITING_EXTERNAL"
            && entered.last().map(String::as_str) == Some("Await Restaurant Decision"))
        .then_some(entered.len())
    })
    .await;
    let Some(parked_len) = parked else {
        panic!("driver never parked\n{}", logs_text());
    };
    let execution_table = format!("{prefix}tpf_execution");
    assert_eq!(
        stored_status(&out, &execution, &execution_table, &endpoint),
        "WAITING_EXTERNAL"
    );

    // Complete the interaction: the bridge sees the record leave WAITING_EXTERNAL and wakes the driver.
    let pending = request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/{TENANT}/interactions/pending"),
        Some(TOKEN),
        None,
    )
    .await;
    let interaction = pending.body[0]["interactionId"]
        .as_str()
        .expect("interaction")
        .to_owned();
    let complete = json!({
        "interactionId": interaction, "responsePayload": {"decision": "accepted"}, "actor": "chef"
    })
    .to_string();
    let woken_at = Instant::now();
    let done = request(
        addr,
        "POST",
        &format!("/tpf/control-plane/tenants/{TENANT}/interactions/complete"),
        Some(TOKEN),
        Some(&complete),
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.raw);
    // A duplicate completion is admitted once by TPF and must not resume the driver twice.
    let dup = request(
        addr,
        "POST",
        &format!("/tpf/control-plane/tenants/{TENANT}/interactions/complete"),
        Some(TOKEN),
        Some(&complete),
    )
    .await;
    assert_eq!(dup.body["duplicate"], true, "{}", dup.raw);
    // Resumed: the driver entered a state after the await it parked in.
    let resumed = poll(200, || async {
        (entered_states(&sfn, &execution_arn).await.len() > parked_len).then_some(())
    })
    .await;
    let wake = woken_at.elapsed();
    assert!(resumed.is_some(), "driver never resumed\n{}", logs_text());
    println!(
        "wake latency (interaction completed -> driver resumed on moto): {} ms",
        wake.as_millis()
    );

    let succeeded = poll(200, || async {
        let d = sfn
            .describe_execution()
            .execution_arn(&execution_arn)
            .send()
            .await
            .ok()?;
        (d.status() == &ExecutionStatus::Succeeded
            && record_status(addr, &execution).await == "SUCCEEDED")
            .then_some(())
    })
    .await;
    assert!(
        succeeded.is_some(),
        "never SUCCEEDED in both\n{}",
        logs_text()
    );

    assert_eq!(
        stored_status(&out, &execution, &execution_table, &endpoint),
        "SUCCEEDED"
    );

    // Cross-check: our interpreter runs the same scenario on the same compiled driver and must
    // enter the same driver states in the same order as moto's interpreter did.
    let on_moto = entered_states(&sfn, &execution_arn).await;
    let config_text = std::fs::read_to_string(&cfg).expect("config");
    let contract_bytes = std::fs::read(contract).expect("contract");
    let release_bytes = std::fs::read(&release).expect("release");
    let input = Input {
        contract_file: "restaurant-approval.pipeline-contract.json",
        contract: &contract_bytes,
        release: Some(("restaurant-approval.pipeline-release.json", &release_bytes)),
        config: Some(("tpf-sfn.toml", &config_text)),
        binding: Some(BindingKind::Queue),
        allow_unverified_hash: false,
    };
    let subject = proof::subject(&input, None).expect("subject");
    let scenario = matrix::derive(&subject)
        .into_iter()
        .find(|s| s.name == "happy-path")
        .expect("happy-path scenario");
    let simulated = scenario::run(&subject, &scenario, proof::SEED).expect("simulate");
    let exec = simulated.execution_id.clone().expect("simulated execution");
    let generations = driver_executions(&simulated.world, &exec);
    assert_eq!(
        generations.len(),
        1,
        "one driver generation in the interpreter"
    );
    let in_interpreter: Vec<String> = simulated
        .world
        .engine
        .history(&generations[0])
        .iter()
        .filter(|e| e.event_type.ends_with("StateEntered"))
        .filter_map(|e| e.state_name.clone())
        .collect();
    assert_eq!(
        on_moto, in_interpreter,
        "driver states entered: moto (left) vs our interpreter (right)"
    );
    let history = sfn
        .get_execution_history()
        .execution_arn(&execution_arn)
        .max_results(1000)
        .send()
        .await
        .expect("history");
    let await_exits = history
        .events()
        .iter()
        .filter_map(|e| e.state_exited_event_details())
        .filter(|d| d.name() == "Await Restaurant Decision")
        .count();
    assert_eq!(await_exits, 1, "exactly one resume of the await");
    println!(
        "driver states entered (moto = interpreter): {}",
        on_moto.join(" -> ")
    );
}
