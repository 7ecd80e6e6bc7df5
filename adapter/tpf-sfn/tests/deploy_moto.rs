//! `deploy` and `status` as a user runs them: the real binary against moto on 127.0.0.1.
//! Every machine, table and queue name is unique to the test, so tests share one moto.

use crate::support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use serde_json::Value;
use support::{moto_config, moto_endpoint, unique};
use tpf_wire::records::{AttrValue, DynamoItem, ExecutionRecord, ExecutionStatus, ResultShape};

const ROLE: &str = "arn:aws:iam::123456789012:role/tpf-sfn-test";

fn tpf(args: &[&str]) -> Output {
    support::cli().args(args).output().expect("run tpf-sfn")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Compiles the restaurant sample on the gateway binding with `config`, whose
/// `[binding.gateway]` lines (`gateway`) get the queue transport the local loop runs (moto runs
/// no Lambda function; the relay carries the calls).
fn compile(out: &Path, config: &str, gateway: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
    let cfg = out.with_extension("toml");
    std::fs::write(
        &cfg,
        format!("{config}[binding.gateway]\ntransport = \"queue\"\n{gateway}"),
    )
    .unwrap();
    let o = tpf(&[
        "compile",
        root.join("restaurant-approval.pipeline-contract.json")
            .to_str()
            .unwrap(),
        "--release",
        root.join("restaurant-approval.pipeline-release.json")
            .to_str()
            .unwrap(),
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", show(&o));
}

fn deploy(out: &Path, extra: &[&str]) -> Output {
    let endpoint = moto_endpoint();
    let mut args = vec![
        "deploy",
        "--out",
        out.to_str().unwrap(),
        "--endpoint-url",
        &endpoint,
        "--role-arn",
        ROLE,
    ];
    args.extend(extra);
    tpf(&args)
}

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap()
}

/// The deployed driver machine's tags, as moto lists them.
async fn driver_tags(m: &Value) -> std::collections::BTreeMap<String, String> {
    let sfn = aws_sdk_sfn::Client::new(&moto_config().await);
    let driver = m["machines"]["driver"]["name"].as_str().unwrap();
    let arn = format!("arn:aws:states:us-east-1:123456789012:stateMachine:{driver}");
    let tags = sfn
        .list_tags_for_resource()
        .resource_arn(&arn)
        .send()
        .await
        .unwrap();
    tags.tags()
        .iter()
        .filter_map(|t| Some((t.key()?.to_owned(), t.value()?.to_owned())))
        .collect()
}

#[tokio::test]
async fn deploy_creates_then_is_idempotent_then_refuses_a_change_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    let prefix = unique("d");
    compile(&out, &format!("name-prefix = \"{prefix}\"\n"), "");

    let o = deploy(&out, &["--dry-run"]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(stdout(&o).contains("  create: driver "), "{}", show(&o));

    let o = deploy(&out, &[]);
    assert!(o.status.success(), "{}", show(&o));
    let s = stdout(&o);
    assert!(
        s.contains("[1/1] driver ") && s.contains(": created"),
        "{s}"
    );

    let o = deploy(&out, &[]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(stdout(&o).contains("(no write calls)"), "{}", show(&o));
    assert!(
        stdout(&o).lines().any(|l| l.starts_with("unchanged: ")),
        "{}",
        show(&o)
    );

    // Tags carry the pinned identity and the definition hash.
    let m = manifest(&out);
    let tags = driver_tags(&m).await;
    assert_eq!(
        tags.get("tpf-sfn:definition-sha256").map(String::as_str),
        m["machines"]["driver"]["definitionSha256"].as_str()
    );

    // A different definition for the same release is refused, naming the change.
    compile(
        &out,
        &format!("name-prefix = \"{prefix}\"\n"),
        "await-timeout-seconds = 600\n",
    );
    let o = deploy(&out, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let s = stdout(&o);
    assert!(s.contains("refuse: driver"), "{s}");
    assert!(
        s.contains("~ States.\"Park until TPF's await completes\".TimeoutSeconds: 1801 → 601"),
        "{s}"
    );
    assert!(s.contains("DEPLOY_DEFINITION_CHANGED"), "{s}");

    let o = deploy(&out, &["--dry-run", "--format", "json"]);
    assert!(o.status.code() == Some(1), "{}", show(&o));
    let plan: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(plan["report"]["machines"][0]["action"], "refuse");

    let o = deploy(&out, &["--force-replace"]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        stdout(&o).contains("definition replaced (forced)"),
        "{}",
        show(&o)
    );
    assert!(stdout(&o).contains("no RUNNING executions"), "{}", show(&o));

    let o = deploy(&out, &[]);
    assert!(stdout(&o).contains("(no write calls)"), "{}", show(&o));
}

#[test]
fn deploy_reports_a_modified_definition_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    compile(&out, &format!("name-prefix = \"{}\"\n", unique("m")), "");
    let path = out.join("driver.asl.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replace("\"TimeoutSeconds\": 1801", "\"TimeoutSeconds\": 1");
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();
    let o = deploy(&out, &["--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("RELEASE_DEFINITION_MODIFIED"),
        "{}",
        show(&o)
    );
}

/// Creates an SQS queue in moto over plain HTTP (the Query protocol), returning its URL.
fn create_queue(endpoint: &str, name: &str) -> String {
    let authority = endpoint.trim_start_matches("http://").trim_end_matches('/');
    let body = format!("Action=CreateQueue&QueueName={name}&Version=2012-11-05");
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=testing/20240101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = std::net::TcpStream::connect(authority).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let start = response.find("<QueueUrl>").expect(&response) + "<QueueUrl>".len();
    let end = response.find("</QueueUrl>").expect(&response);
    response[start..end].to_string()
}

async fn create_table(ddb: &aws_sdk_dynamodb::Client, name: &str, hash: &str, range: &str) {
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    let key = |n: &str, t| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(t)
            .build()
            .unwrap()
    };
    ddb.create_table()
        .table_name(name)
        .attribute_definitions(attr(hash))
        .attribute_definitions(attr(range))
        .key_schema(key(hash, KeyType::Hash))
        .key_schema(key(range, KeyType::Range))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
}

/// TPF's record of the root execution `id`, submitted under the client key `key-<id>` (stored
/// scoped to its pipeline and release, as TPF stores it).
fn record(id: &str, status: ExecutionStatus, m: &Value, release: &str) -> ExecutionRecord {
    let pipeline = m["identity"]["pipelineId"].as_str().unwrap();
    ExecutionRecord {
        tenant_id: "t1".into(),
        execution_id: id.into(),
        execution_key: tpf_wire::ids::scoped_root_execution_key(
            pipeline,
            release,
            &format!("key-{id}"),
        )
        .unwrap(),
        pipeline_id: pipeline.into(),
        contract_version: m["identity"]["contractVersion"].as_str().unwrap().into(),
        release_version: release.into(),
        result_shape: ResultShape::Single,
        status,
        version: 4,
        current_step_index: 2,
        attempt: 1,
        lease_owner: None,
        lease_expires_epoch_ms: 0,
        next_due_epoch_ms: i64::MAX,
        last_transition_key: None,
        input_payload: serde_json::json!({"order": 1}),
        await_unit_id: Some(format!("unit-{id}")),
        result_payload: None,
        error_code: None,
        error_message: None,
        created_at_epoch_ms: 1,
        updated_at_epoch_ms: 1,
        ttl_epoch_s: 4_000_000_000,
        redrive_intent: tpf_wire::records::execution_attr::REPLAY.into(),
        failed_step_index: tpf_wire::records::execution_attr::NO_FAILED_STEP,
        carried: Default::default(),
    }
}

async fn put(ddb: &aws_sdk_dynamodb::Client, table: &str, r: &ExecutionRecord) {
    let item = r
        .to_item()
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                AttrValue::S(s) => AttributeValue::S(s),
                AttrValue::N(n) => AttributeValue::N(n),
                AttrValue::Bool(b) => AttributeValue::Bool(b),
                AttrValue::Ss(s) => AttributeValue::Ss(s.into_iter().collect()),
                AttrValue::Null => AttributeValue::Null(true),
            };
            (k, v)
        })
        .collect();
    ddb.put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

struct StatusEnv {
    out: std::path::PathBuf,
    table: String,
}

impl StatusEnv {
    fn status(&self, execution: &str) -> (Output, Value) {
        let endpoint = moto_endpoint();
        let o = tpf(&[
            "status",
            "--out",
            self.out.to_str().unwrap(),
            "--tenant",
            "t1",
            "--execution",
            execution,
            "--table",
            &format!("execution-table={}", self.table),
            "--endpoint-url",
            &endpoint,
            "--format",
            "json",
        ]);
        let v = serde_json::from_str(&stdout(&o)).unwrap_or_else(|_| panic!("{}", show(&o)));
        (o, v)
    }

    /// Polls until `ready` holds for the status report (drivers start asynchronously).
    fn status_until(&self, execution: &str, ready: impl Fn(&Value) -> bool) -> (Output, Value) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let (o, v) = self.status(execution);
            if ready(&v) || Instant::now() > deadline {
                return (o, v);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// The task token of the SUBMIT a driver sent to `queue` for the client key `key`.
async fn submit_token(conf: &aws_config::SdkConfig, queue: &str, key: &str) -> String {
    let sqs = aws_sdk_sqs::Client::new(conf);
    for _ in 0..60 {
        let got = sqs
            .receive_message()
            .queue_url(queue)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        for m in got.messages() {
            let body: Value = serde_json::from_str(m.body().unwrap_or("{}")).unwrap();
            if body["gatewayRequest"]["idempotencyKey"] == key {
                return body["taskToken"].as_str().unwrap().to_owned();
            }
        }
    }
    panic!("no SUBMIT for {key} reached {queue}");
}

/// `n` generations, each running and parked at SUBMIT's queue (nothing relays it here).
fn parked(v: &Value, n: usize) -> bool {
    let gens = v["generations"].as_array().cloned().unwrap_or_default();
    gens.len() == n
        && gens
            .iter()
            .all(|g| g["status"] == "RUNNING" && g["currentState"] == SUBMIT)
}

/// The gateway driver's SUBMIT state, where a generation waits for the relay.
const SUBMIT: &str = "Submit TPF execution";

#[tokio::test]
async fn status_joins_tpf_records_with_driver_generations() {
    let endpoint = moto_endpoint();
    let conf = moto_config().await;
    let sfn = aws_sdk_sfn::Client::new(&conf);
    let ddb = aws_sdk_dynamodb::Client::new(&conf);
    let prefix = unique("s");
    let table = format!("{prefix}_execution");
    let queue = create_queue(&endpoint, &format!("{prefix}-gateway"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    let config = format!("name-prefix = \"{prefix}\"\n");
    let gateway = format!("queue-url = \"{queue}\"\n");
    compile(&out, &config, &gateway);
    let o = deploy(&out, &[]);
    assert!(o.status.success(), "{}", show(&o));
    create_table(&ddb, &table, "tenant_id", "execution_id").await;
    let m = manifest(&out);
    let release = m["identity"]["releaseVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let env = StatusEnv {
        out: out.clone(),
        table: table.clone(),
    };
    let driver_arn = format!(
        "arn:aws:states:us-east-1:123456789012:stateMachine:{}",
        m["machines"]["driver"]["name"].as_str().unwrap()
    );
    // Generation `generation` of the execution `id` (key `key-<id>`, as `record` writes it),
    // started under TPF's name for it, as the starter and the reconciler start them.
    let name = |id: &str, generation: i64| {
        tpf_wire::gateway::names::durable_execution_name(
            Some("t1"),
            Some(&format!("key-{id}")),
            generation,
        )
        .unwrap()
    };
    let start = |id: &str, generation: i64| {
        let sfn = sfn.clone();
        let arn = driver_arn.clone();
        let pinned = tpf_wire::gateway::start::ReleaseIdentity {
            pipeline_id: m["identity"]["pipelineId"].as_str(),
            contract_version: m["identity"]["contractVersion"].as_str(),
            release_version: m["identity"]["releaseVersion"].as_str(),
        };
        let key = format!("key-{id}");
        let input = tpf_wire::gateway::start::ExecutionInput::new(
            Some("t1"),
            Some(&key),
            pinned,
            Some("{\"order\":1}"),
            None,
            generation,
        )
        .unwrap()
        .to_json();
        let name = name(id, generation);
        async move {
            sfn.start_execution()
                .state_machine_arn(arn)
                .name(name)
                .input(input)
                .send()
                .await
                .unwrap()
                .execution_arn()
                .to_string()
        }
    };

    // Unknown execution.
    let (o, v) = env.status("nobody");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(v["verdict"]["code"], "STATUS_NO_TPF_RECORD");

    // TPF waits, but no driver was ever started.
    put(
        &ddb,
        &table,
        &record("e1", ExecutionStatus::WaitingExternal, &m, &release),
    )
    .await;
    let (o, v) = env.status("e1");
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["verdict"]["code"], "STATUS_NO_LIVE_DRIVER");
    assert_eq!(v["record"]["status"], "WAITING_EXTERNAL");
    assert_eq!(v["record"]["awaitUnitId"], "unit-e1");

    // Two generations waiting on their SUBMIT: two live drivers.
    start("e1", 1).await;
    start("e1", 2).await;
    let (o, v) = env.status_until("e1", |v| parked(v, 2));
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["verdict"]["code"], "STATUS_TWO_LIVE_GENERATIONS", "{v}");
    // moto's executions are in no AWS console: no link to one.
    assert!(v["generations"][0]["consoleUrl"].is_null(), "{v}");
    // A gateway driver writes no wakeup-table pointer.
    assert!(v["wakeupPointer"].is_null(), "{v}");

    // One live generation: consistent.
    put(
        &ddb,
        &table,
        &record("e4", ExecutionStatus::WaitingExternal, &m, &release),
    )
    .await;
    start("e4", 1).await;
    let (o, v) = env.status_until("e4", |v| parked(v, 1));
    assert!(o.status.success(), "{v}");
    assert_eq!(v["verdict"]["code"], "STATUS_OK", "{v}");
    let text = tpf(&[
        "status",
        "--out",
        out.to_str().unwrap(),
        "--tenant",
        "t1",
        "--execution",
        "e4",
        "--table",
        &format!("execution-table={table}"),
        "--endpoint-url",
        &endpoint,
    ]);
    let s = stdout(&text);
    assert!(
        s.contains(&format!(
            "consistent: TPF is WAITING_EXTERNAL; driver {} is running at \"{SUBMIT}\"",
            name("e4", 1)
        )),
        "{s}"
    );
    assert!(
        !s.contains("console.aws.amazon.com")
            && s.contains("(a local emulator's execution: in no AWS console)"),
        "{s}"
    );
    assert!(s.contains("await     unit unit-e4"), "{s}");

    // The only driver ended while TPF still waits.
    put(
        &ddb,
        &table,
        &record("e5", ExecutionStatus::WaitingExternal, &m, &release),
    )
    .await;
    // Its SUBMIT is answered with no checkpoint (as a gateway that lost it would): the
    // driver fails at once. (moto stops no execution parked on a task token.)
    start("e5", 1).await;
    let token = submit_token(&conf, &queue, "key-e5").await;
    sfn.send_task_success()
        .task_token(token)
        .output(r#"{"checkpoint": null}"#)
        .send()
        .await
        .unwrap();
    let (o, v) = env.status_until("e5", |v| v["generations"][0]["status"] == "FAILED");
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["verdict"]["code"], "STATUS_NO_LIVE_DRIVER", "{v}");
    assert!(
        v["verdict"]["summary"]
            .as_str()
            .unwrap()
            .contains("ended FAILED"),
        "{v}"
    );

    // TPF finished but a driver still runs.
    put(
        &ddb,
        &table,
        &record("e2", ExecutionStatus::Failed, &m, &release),
    )
    .await;
    start("e2", 1).await;
    let (o, v) = env.status_until("e2", |v| parked(v, 1));
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["verdict"]["code"], "STATUS_DRIVER_AFTER_TERMINAL", "{v}");

    // The record is pinned to another release than --out.
    put(
        &ddb,
        &table,
        &record("e3", ExecutionStatus::WaitingExternal, &m, "other-release"),
    )
    .await;
    let (o, v) = env.status("e3");
    assert_eq!(o.status.code(), Some(1), "{v}");
    assert_eq!(v["verdict"]["code"], "STATUS_RELEASE_MISMATCH", "{v}");

    // Forcing a new definition onto this release warns about every running driver.
    compile(
        &out,
        &config,
        &format!("{gateway}await-timeout-seconds = 600\n"),
    );
    let o = deploy(&out, &["--force-replace"]);
    assert!(o.status.success(), "{}", show(&o));
    let s = stdout(&o);
    assert!(
        s.contains("warning: 4 RUNNING execution(s) keep the old definition"),
        "{s}"
    );
    for (id, generation) in [("e1", 1), ("e1", 2), ("e4", 1), ("e2", 1)] {
        let name = name(id, generation);
        assert!(s.contains(&name), "{name} missing from {s}");
    }
}

#[tokio::test]
async fn releases_lists_tagged_machines_and_prune_keeps_active_releases() {
    let endpoint = moto_endpoint();
    let conf = moto_config().await;
    let ddb = aws_sdk_dynamodb::Client::new(&conf);
    let prefix = unique("r");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    compile(&out, &format!("name-prefix = \"{prefix}\"\n"), "");
    assert!(deploy(&out, &[]).status.success());
    let m = manifest(&out);
    let conn = ["--name-prefix", &prefix, "--endpoint-url", &endpoint];

    let mut args = vec!["releases", "--format", "json"];
    args.extend(conn);
    let o = tpf(&args);
    assert!(o.status.success(), "{}", show(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let machines = v["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 1, "the gateway driver alone: {v}");
    let driver = machines.iter().find(|x| x["role"] == "driver").unwrap();
    assert_eq!(driver["identity"], m["identity"]);
    assert_eq!(
        driver["definitionSha256"],
        m["machines"]["driver"]["definitionSha256"]
    );
    assert_eq!(driver["runningExecutions"], 0);

    // Active in TPF's registry: kept.
    let registry = format!("{prefix}_registry");
    create_table(&ddb, &registry, "registry_key", "registry_sort").await;
    let event = tpf_wire::records::ReleaseActivationEvent {
        tenant_id: "t1".into(),
        pipeline_id: m["identity"]["pipelineId"].as_str().unwrap().into(),
        release_version: m["identity"]["releaseVersion"].as_str().unwrap().into(),
        activated_at_epoch_ms: 5,
    };
    let item = event
        .to_item()
        .into_iter()
        .map(|(k, v)| match v {
            AttrValue::N(n) => (k, AttributeValue::N(n)),
            AttrValue::S(s) => (k, AttributeValue::S(s)),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    ddb.put_item()
        .table_name(&registry)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
    let registry_flag = format!("release-table={registry}");
    let mut args = vec!["prune", "--table", &registry_flag];
    args.extend(conn);
    let o = tpf(&args);
    assert!(o.status.success(), "{}", show(&o));
    let s = stdout(&o);
    assert_eq!(
        s.matches("(active in TPF's release registry)").count(),
        1,
        "{s}"
    );

    // No registry: nothing active, dry run by default, then deleted with --yes.
    let missing = format!("{prefix}_no_registry");
    let missing_flag = format!("release-table={missing}");
    let mut args = vec!["prune", "--table", &missing_flag];
    args.extend(conn);
    let s = stdout(&tpf(&args));
    assert!(s.contains("warning: release registry table"), "{s}");
    assert_eq!(s.matches("would delete: ").count(), 1, "{s}");
    args.push("--yes");
    let s = stdout(&tpf(&args));
    assert_eq!(s.matches("deleted: ").count(), 1, "{s}");
    assert!(
        !s.contains("schedule"),
        "a gateway release has no schedule: {s}"
    );
    let mut args = vec!["releases"];
    args.extend(conn);
    assert!(stdout(&tpf(&args)).contains("no tpf-sfn release machines"));
}

#[test]
fn deploy_errors_are_coded_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let o = tpf(&["deploy", "--out", missing.to_str().unwrap(), "--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("error[RELEASE_MANIFEST_MISSING]"),
        "{}",
        show(&o)
    );

    // Nothing listens on port 9 of loopback: classified from the SDK's dispatch failure.
    let out = dir.path().join("release");
    compile(&out, &format!("name-prefix = \"{}\"\n", unique("u")), "");
    let o = tpf(&[
        "deploy",
        "--out",
        out.to_str().unwrap(),
        "--dry-run",
        "--endpoint-url",
        "http://127.0.0.1:9",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("error[DEPLOY_UNREACHABLE]"),
        "{}",
        show(&o)
    );

    let o = tpf(&["deploy", "--out", out.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--role-arn is required without --dry-run"
    );
}

/// A gateway-binding release (the queue transport, as the local loop runs it) deploys as its
/// driver alone, tagged with the release's identity, and says nothing about a sweeper or a
/// schedule; deployed again it writes nothing.
#[tokio::test]
async fn a_gateway_release_deploys_its_driver_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    let prefix = unique("g");
    compile(&out, &format!("name-prefix = \"{prefix}\"\n"), "");
    let m = manifest(&out);
    assert!(m["machines"]["sweeper"].is_null(), "{m}");
    let o = deploy(&out, &[]);
    assert!(o.status.success(), "{}", show(&o));
    let s = stdout(&o);
    assert!(
        s.contains("[1/1] driver ") && s.contains(": created"),
        "{s}"
    );
    assert!(!s.contains("sweeper") && !s.contains("schedule"), "{s}");

    let tags = driver_tags(&m).await;
    assert_eq!(tags.get("tpf-sfn:role").map(String::as_str), Some("driver"));
    assert_eq!(
        tags.get("tpf-sfn:definition-sha256").map(String::as_str),
        m["machines"]["driver"]["definitionSha256"].as_str()
    );
    let conf = moto_config().await;
    let sfn = aws_sdk_sfn::Client::new(&conf);
    let listed = sfn
        .list_state_machines()
        .send()
        .await
        .unwrap()
        .state_machines()
        .iter()
        .filter(|sm| sm.name().starts_with(&prefix))
        .count();
    assert_eq!(listed, 1, "one machine for the release");

    let o = deploy(&out, &[]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(stdout(&o).contains("(no write calls)"), "{}", show(&o));
}

/// Creates an IAM role Lambda may assume, in moto over plain HTTP (moto checks a function's
/// role exists), returning its ARN.
fn create_lambda_role(endpoint: &str, name: &str) -> String {
    let authority = endpoint.trim_start_matches("http://").trim_end_matches('/');
    let policy = "%7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%7B%22Effect%22%3A%22Allow%22%2C%22Principal%22%3A%7B%22Service%22%3A%22lambda.amazonaws.com%22%7D%2C%22Action%22%3A%22sts%3AAssumeRole%22%7D%5D%7D";
    let body = format!(
        "Action=CreateRole&RoleName={name}&AssumeRolePolicyDocument={policy}&Version=2010-05-08"
    );
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=testing/20240101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = std::net::TcpStream::connect(authority).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let start = response.find("<Arn>").expect(&response) + "<Arn>".len();
    let end = response.find("</Arn>").expect(&response);
    response[start..end].to_string()
}

/// Compiles the restaurant sample for the Lambda durable functions backend.
fn compile_durable(out: &Path, config: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
    let cfg = out.with_extension("toml");
    std::fs::write(&cfg, config).unwrap();
    let o = tpf(&[
        "compile",
        root.join("restaurant-approval.pipeline-contract.json")
            .to_str()
            .unwrap(),
        "--release",
        root.join("restaurant-approval.pipeline-release.json")
            .to_str()
            .unwrap(),
        "--backend",
        "lambda-durable",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", show(&o));
}

/// A zip moto stores without running: any zip stands in for the real package here.
fn stand_in_zip(dir: &Path) -> String {
    let zip = dir.join("code.zip");
    std::fs::write(&zip, b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0").unwrap();
    zip.display().to_string()
}

/// `tpf-sfn deploy` of the durable release in `out` on moto with `role` and `extra` arguments.
fn deploy_durable(out: &Path, role: &str, extra: &[&str]) -> Output {
    let endpoint = moto_endpoint();
    let mut args = vec![
        "deploy",
        "--out",
        out.to_str().unwrap(),
        "--endpoint-url",
        &endpoint,
        "--role-arn",
        role,
    ];
    args.extend(extra);
    support::cli().args(&args).output().expect("run tpf-sfn")
}

/// The function `name` as moto's Lambda describes it.
async fn deployed_function(
    name: &str,
) -> aws_sdk_lambda::operation::get_function::GetFunctionOutput {
    let lambda = aws_sdk_lambda::Client::new(&moto_config().await);
    lambda
        .get_function()
        .function_name(name)
        .send()
        .await
        .unwrap()
}

/// The published versions (not `$LATEST`) of the function `name` on moto.
async fn published_versions(name: &str) -> Vec<String> {
    let lambda = aws_sdk_lambda::Client::new(&moto_config().await);
    let versions = lambda
        .list_versions_by_function()
        .function_name(name)
        .send()
        .await
        .unwrap();
    versions
        .versions()
        .iter()
        .filter_map(|v| v.version())
        .filter(|v| *v != "$LATEST")
        .map(str::to_owned)
        .collect()
}

/// A gateway-binding release on Lambda durable functions deploys as its driver function and one
/// published version, its environment the handler and the spec alone (the function invokes the
/// gateway with its role: no Action API token); deployed again it writes nothing; another spec
/// under the same release is refused unless forced, which publishes a new version; a spec
/// edited after compiling is refused before any call.
#[tokio::test]
async fn durable_deploy_publishes_a_version_then_is_idempotent_then_refuses_a_change_unless_forced()
{
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("durable");
    let zip_s = stand_in_zip(dir.path());
    let prefix = unique("dd");
    let gateway = "arn:aws:lambda:us-east-1:123456789012:function:tpf-action-gateway:3";
    let config = format!(
        "name-prefix = \"{prefix}\"\n[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{gateway}\"\nstarter-function-arn = \"arn:aws:lambda:us-east-1:123456789012:function:{prefix}-gateway-starter\"\n"
    );
    compile_durable(&out, &config);
    let role = create_lambda_role(&moto_endpoint(), &prefix);
    let run = |extra: &[&str]| deploy_durable(&out, &role, extra);

    let o = run(&["--dry-run"]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        stdout(&o).contains("  create: driver function "),
        "{}",
        show(&o)
    );

    let o = run(&["--code-zip", &zip_s]);
    assert!(o.status.success(), "{}", show(&o));
    let m = manifest(&out);
    let name = m["function"]["name"].as_str().unwrap();
    let f = deployed_function(name).await;
    let vars = f
        .configuration()
        .and_then(|c| c.environment())
        .and_then(|e| e.variables())
        .unwrap();
    let spec: Value = serde_json::from_str(&vars["TPF_SFN_DURABLE_SPEC"]).unwrap();
    let compiled: Value =
        serde_json::from_slice(&std::fs::read(out.join("driver.durable.json")).unwrap()).unwrap();
    assert_eq!(spec, compiled);
    assert_eq!(spec["binding"]["kind"], "gateway", "{spec}");
    assert_eq!(spec["binding"]["functionArn"], gateway, "{spec}");
    let mut keys: Vec<&String> = vars.keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        ["TPF_SFN_DURABLE_SPEC", "TPF_SFN_HANDLER"],
        "{vars:?}"
    );
    assert_eq!(
        f.tags().unwrap()["tpf-sfn:definition-sha256"],
        m["function"]["specSha256"].as_str().unwrap()
    );
    let published = published_versions(name).await;
    assert_eq!(published.len(), 1, "{published:?}");
    assert!(
        stdout(&o).contains(&format!(":function:{name}:{}", published[0])),
        "{}",
        show(&o)
    );

    let o = run(&[]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(stdout(&o).contains("(no write calls)"), "{}", show(&o));
    assert_eq!(published_versions(name).await.len(), 1);

    // Another spec under the same release is refused; forced, it is a new version.
    compile_durable(&out, &format!("{config}await-timeout-seconds = 600\n"));
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        stdout(&o).contains("DEPLOY_DEFINITION_CHANGED"),
        "{}",
        show(&o)
    );
    let o = run(&["--force-replace"]);
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(published_versions(name).await.len(), 2);
    let o = run(&[]);
    assert!(stdout(&o).contains("(no write calls)"), "{}", show(&o));

    // A spec edited after compiling is refused before any call.
    let path = out.join("driver.durable.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replace("\"longestAwaitSeconds\": 600", "\"longestAwaitSeconds\": 1");
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();
    let o = run(&["--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("RELEASE_DEFINITION_MODIFIED"),
        "{}",
        show(&o)
    );
}
