//! `tpf-sfn serve`'s gateway route over real HTTP on 127.0.0.1: TPF's vectors (the
//! `action-gateway` family: the request bytes TPF's caller sends in, the response bytes TPF's
//! gateway writes out, its exceptions as Lambda's function errors), and TPF's work function run
//! in process (a SUBMIT runs without any further call).

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use support::host::restaurant;
use support::http::{request, Response};
use tpf_model::store::CreateExecutionCommand;
use tpf_model::{Coordinator, ExecutionStore, InMemoryStore};
use tpf_sfn::host::work;
use tpf_sfn::host::{system_clock, HostState};
use tpf_wire::gateway::invoke::{FUNCTION_ERROR_HEADER, PATH};
use tpf_wire::java_error::class;
use tpf_wire::records::{ExecutionStatus, ResultShape};

const TOKEN: &str = "test-token";

fn vectors() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../mapping-tests/fixtures/tpf-vectors-current/action-gateway.json"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(path).expect("vectors")).expect("JSON");
    assert_eq!(doc["family"], "action-gateway");
    doc["cases"].as_array().expect("cases").clone()
}

fn case(id: &str) -> Value {
    vectors()
        .into_iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no vector {id}"))
}

/// A host on `store` with the restaurant pipeline; its binding table in memory.
async fn host(store: InMemoryStore) -> (std::net::SocketAddr, Arc<HostState<InMemoryStore>>) {
    let hosted = restaurant();
    let coordinator = Coordinator::new(store, hosted.pipeline, hosted.worker);
    let state = Arc::new(HostState::new(coordinator, TOKEN.to_owned(), system_clock));
    (support::spawn_host(state.clone()).await, state)
}

/// What Lambda's Invoke answered: the body bytes and whether it is a function error.
struct Invoked {
    status: u16,
    body: String,
    function_error: Option<String>,
    raw: String,
}

fn invoked(response: Response) -> Invoked {
    let (head, body) = response
        .raw
        .split_once("\r\n\r\n")
        .unwrap_or((response.raw.as_str(), ""));
    let wanted = format!("{}:", FUNCTION_ERROR_HEADER.to_ascii_lowercase());
    let function_error = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with(&wanted))
        .map(|l| l[wanted.len()..].trim().to_owned());
    Invoked {
        status: response.status,
        body: body.to_owned(),
        function_error,
        raw: response.raw.clone(),
    }
}

async fn invoke(addr: std::net::SocketAddr, body: &str) -> Invoked {
    invoked(request(addr, "POST", PATH, Some(TOKEN), Some(body)).await)
}

/// `{"error": "SimpleClass: message…", "errorClass": …}`: the function error must carry the
/// class, and the message TPF's exception has up to the first `[`: what follows names positions
/// in TPF's own stream and the order of Jackson's enum table, which the vectors say not to
/// compare.
fn assert_function_error(got: &Invoked, expected: &Value, id: &str) {
    assert_eq!(
        got.status, 200,
        "{id}: a function error is a 200: {}",
        got.raw
    );
    assert_eq!(
        got.function_error.as_deref(),
        Some("Unhandled"),
        "{id}: {}",
        got.raw
    );
    let document: Value = serde_json::from_str(&got.body).expect("error document");
    let keys: Vec<_> = document.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["errorMessage", "errorType"], "{id}");
    assert_eq!(document["errorType"], expected["errorClass"], "{id}");
    let text = expected["error"].as_str().expect("error text");
    let message = text.split_once(": ").map_or(text, |(_, m)| m);
    let message = message.split('[').next().unwrap_or(message);
    let message = message.strip_suffix("\n at ").unwrap_or(message);
    let got_message = document["errorMessage"].as_str().expect("errorMessage");
    assert!(
        got_message.starts_with(message.trim_end()),
        "{id}: `{got_message}` vs TPF's `{message}`"
    );
}

fn assert_answered(got: &Invoked, expected_json: &str, id: &str) {
    assert_eq!(got.status, 200, "{id}: {}", got.raw);
    assert_eq!(got.function_error, None, "{id}: {}", got.raw);
    assert_eq!(
        got.body, expected_json,
        "{id}: the bytes TPF's gateway writes"
    );
}

/// Every request document: refused ones are function errors with TPF's class, accepted ones
/// whose dispatch throws likewise; the two that dispatch (a STATUS) answer TPF's bytes against an
/// execution `exec-0001` that is RUNNING.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_documents_answer_as_tpf_s_gateway() {
    let store = InMemoryStore::new();
    seed(&store, ExecutionStatus::Running);
    let (addr, _) = host(store).await;
    let mut seen = 0;
    for case in vectors()
        .into_iter()
        .filter(|c| c["kind"] == "requestDocument")
    {
        let id = case["id"].as_str().expect("id");
        let expected = &case["expected"];
        let got = invoke(addr, case["input"]["requestJson"].as_str().expect("json")).await;
        if expected["accepted"] == false {
            assert_function_error(&got, expected, id);
        } else if let Some(response) = expected["dispatch"]["responseJson"].as_str() {
            assert_answered(&got, response, id);
        } else {
            assert_function_error(&got, &expected["dispatch"], id);
        }
        seen += 1;
    }
    assert!(seen >= 10, "the family holds the request documents: {seen}");
}

/// The round trips that need nothing of the execution's past: SWEEP, an execution without
/// awaits, a missing await checkpoint, REGISTER_CALLBACK and BIND_CALLBACK (and each replayed:
/// `bindingCreated` false, TPF's answer for an identical row), byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_answer_tpf_s_bytes() {
    let (addr, _) = host(InMemoryStore::new()).await;
    for id in ["sweep", "query-pending-await-none", "register-callback"] {
        let case = case(id);
        let expected = &case["expected"];
        let got = invoke(addr, expected["requestJson"].as_str().expect("request")).await;
        assert_answered(
            &got,
            expected["responseJson"].as_str().expect("response"),
            id,
        );
    }
    // The vector's BIND_CALLBACK finds its row bound already (`bindingCreated` false): the
    // first call binds, the vector's is its replay. A replayed REGISTER_CALLBACK likewise.
    let created = |id: &str, created: bool| {
        let case = case(id);
        let response = case["expected"]["responseJson"]
            .as_str()
            .unwrap()
            .to_owned();
        let (from, to) = if created {
            ("false", "true")
        } else {
            ("true", "false")
        };
        response.replace(
            &format!("\"bindingCreated\":{from}"),
            &format!("\"bindingCreated\":{to}"),
        )
    };
    let bind = case("bind-callback");
    let bind_request = bind["expected"]["requestJson"].as_str().unwrap();
    assert_answered(
        &invoke(addr, bind_request).await,
        &created("bind-callback", true),
        "bind",
    );
    let replay = invoke(addr, bind_request).await;
    assert_answered(
        &replay,
        bind["expected"]["responseJson"].as_str().unwrap(),
        "bind-callback",
    );
    let register = case("register-callback");
    let again = invoke(addr, register["expected"]["requestJson"].as_str().unwrap()).await;
    assert_answered(
        &again,
        &created("register-callback", false),
        "register replayed",
    );
    let missing = case("read-await-checkpoint-missing");
    let got = invoke(addr, missing["expected"]["requestJson"].as_str().unwrap()).await;
    assert_function_error(&got, &missing["expected"]["serverError"], "missing");
}

/// The round trips over an execution's record, `exec-0001` seeded in the status the vector's
/// control plane answered: STATUS (WAITING_EXTERNAL, REMOTE_OUTCOME_UNKNOWN) and RESULT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_over_an_execution_answer_tpf_s_bytes() {
    for (id, status) in [
        ("status-waiting-external", ExecutionStatus::WaitingExternal),
        (
            "status-remote-outcome-unknown",
            ExecutionStatus::RemoteOutcomeUnknown,
        ),
        ("result", ExecutionStatus::Succeeded),
    ] {
        let case = case(id);
        let store = InMemoryStore::new();
        let payload = &case["input"]["planeAnswers"]["resultPayload"];
        seed_with(&store, status, payload);
        let (addr, _) = host(store).await;
        let expected = &case["expected"];
        let got = invoke(addr, expected["requestJson"].as_str().unwrap()).await;
        assert_answered(&got, expected["responseJson"].as_str().unwrap(), id);
    }
}

/// Negative: the same STATUS bytes against a host that has no such execution are TPF's
/// not-found exception, not an answer; a body that is not JSON never reaches the gateway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_execution_is_a_function_error_and_non_json_is_refused() {
    let (addr, _) = host(InMemoryStore::new()).await;
    let case = case("status-waiting-external");
    let got = invoke(addr, case["expected"]["requestJson"].as_str().unwrap()).await;
    assert_eq!(
        got.function_error.as_deref(),
        Some("Unhandled"),
        "{}",
        got.raw
    );
    let document: Value = serde_json::from_str(&got.body).unwrap();
    assert_eq!(document["errorMessage"], "Execution not found: exec-0001");

    let refused = request(addr, "POST", PATH, Some(TOKEN), Some("{\"operation\":")).await;
    assert_eq!(refused.status, 400, "{}", refused.raw);
    assert_eq!(refused.body["code"], "INVALID_REQUEST_CONTENT");
    let unauthorized = request(addr, "POST", PATH, None, Some("{}")).await;
    assert_eq!(unauthorized.status, 401);
}

const TENANT: &str = "tenant-a";
const EXECUTION: &str = "exec-0001";

fn seed(store: &InMemoryStore, status: ExecutionStatus) {
    seed_with(store, status, &Value::Null)
}

/// `exec-0001` of the vectors' release, driven through the store's own transitions into
/// `status`.
fn seed_with(store: &InMemoryStore, status: ExecutionStatus, result: &Value) {
    let submit = &case("submit")["expected"]["requestJson"];
    let request: Value = serde_json::from_str(submit.as_str().unwrap()).unwrap();
    let now = system_clock();
    let created = store
        .create_or_get_execution(&CreateExecutionCommand {
            tenant_id: TENANT.into(),
            execution_id: EXECUTION.into(),
            execution_key: "order-42:submit".into(),
            pipeline_id: request["pipelineId"].as_str().unwrap().into(),
            contract_version: request["contractVersion"].as_str().unwrap().into(),
            release_version: request["releaseVersion"].as_str().unwrap().into(),
            result_shape: ResultShape::Single,
            input_payload: serde_json::json!({}),
            initial_step_index: 0,
            now_ms: now,
            ttl_epoch_s: now / 1000 + 86_400,
        })
        .unwrap()
        .record;
    let claimed = store
        .claim_lease(TENANT, EXECUTION, "seed", now, 60_000)
        .unwrap()
        .expect("claimed");
    assert_eq!(claimed.version, created.version + 1);
    let v = claimed.version;
    let record = match status {
        ExecutionStatus::Running => Some(claimed),
        ExecutionStatus::WaitingExternal => store
            .mark_waiting_external(TENANT, EXECUTION, v, "t1", "unit-1", 0, now)
            .unwrap(),
        ExecutionStatus::RemoteOutcomeUnknown => store
            .mark_remote_outcome_unknown(TENANT, EXECUTION, v, "E", "lost", now)
            .unwrap(),
        ExecutionStatus::Succeeded => store
            .mark_succeeded(TENANT, EXECUTION, v, "t1", result, now)
            .unwrap(),
        other => panic!("no seed for {other:?}"),
    };
    assert_eq!(record.expect("seeded").status, status);
}

/// TPF's work function runs in `serve`: after a SUBMIT through the gateway, the execution
/// leaves QUEUED with no further call (its STATUS is read, which runs nothing). Negative: a host
/// whose work function is not running keeps it QUEUED, and one run of it moves it on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_runs_without_any_further_call() {
    let (idle_addr, idle) = activated_host().await;
    let idle_id = submit(idle_addr, "order-idle").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(status(idle_addr, &idle_id).await, "QUEUED");
    let ran = work::run_once(idle.clone()).await.expect("work ran");
    assert_eq!(ran.len(), 1, "the one queued item");
    assert_ne!(status(idle_addr, &idle_id).await, "QUEUED");
    assert!(
        work::run_once(idle).await.expect("idle tick").is_empty(),
        "an empty queue runs nothing"
    );

    let (addr, state) = activated_host().await;
    let worker = work::spawn(state, Duration::from_millis(50));
    let id = submit(addr, "order-1").await;
    let mut seen = Vec::new();
    for _ in 0..100 {
        let s = status(addr, &id).await;
        if s != "QUEUED" {
            seen.push(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    worker.abort();
    let reached = seen.pop().expect("the execution never left QUEUED");
    assert!(
        ["RUNNING", "WAITING_EXTERNAL", "SUCCEEDED"].contains(&reached.as_str()),
        "{reached}"
    );
}

async fn activated_host() -> (std::net::SocketAddr, Arc<HostState<InMemoryStore>>) {
    let state = support::host::activated(TENANT, TOKEN);
    (support::spawn_host(state.clone()).await, state)
}

async fn submit(addr: std::net::SocketAddr, key: &str) -> String {
    let body = support::host::gateway_submit(TENANT, key).to_string();
    let got = invoke(addr, &body).await;
    assert_eq!(got.function_error, None, "{}", got.raw);
    let response: Value = serde_json::from_str(&got.body).unwrap();
    assert_eq!(response["duplicate"], false);
    response["checkpoint"]["executionId"]
        .as_str()
        .expect("checkpoint")
        .to_owned()
}

async fn status(addr: std::net::SocketAddr, execution_id: &str) -> String {
    let body = serde_json::json!({
        "operation": "STATUS", "tenantId": TENANT, "executionId": execution_id, "generation": 1
    })
    .to_string();
    let got = invoke(addr, &body).await;
    assert_eq!(got.function_error, None, "{}", got.raw);
    let response: Value = serde_json::from_str(&got.body).unwrap();
    response["executionStatus"].as_str().unwrap().to_owned()
}

/// `--store dynamodb`: REGISTER_CALLBACK and BIND_CALLBACK write TPF's rows into the
/// callback-binding table on DynamoDB (moto), answer TPF's bytes, and a replay creates nothing.
/// Negative: the same generation registered for another callback is TPF's conflict, a function
/// error, and the row keeps the first callback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bindings_on_dynamodb_answer_tpf_s_bytes_and_conflict_as_tpf_does() {
    use tpf_model::gateway::Table;
    use tpf_sfn::aws::dynamo_store::{DynamoRows, DynamoStore};
    use tpf_sfn::aws::tables::{create_all, TableNames};
    use tpf_wire::gateway::binding::attr;

    let client = aws_sdk_dynamodb::Client::new(&support::moto_config().await);
    let prefix = format!("gw{}_", std::process::id());
    let names = TableNames::with_prefix(&prefix);
    // `tables create` makes TPF's callback-binding table with the others.
    create_all(&client, &names).await.expect("tables");
    let table = names.callback_binding.clone();
    let store = DynamoStore::new(client.clone(), names, tokio::runtime::Handle::current());
    let hosted = restaurant();
    let coordinator = Coordinator::new(store.clone(), hosted.pipeline, hosted.worker);
    let state = Arc::new(HostState::with_bindings(
        coordinator,
        Box::new(Table(DynamoRows::new(store, &table))),
        TOKEN.to_owned(),
        system_clock,
    ));
    let addr = support::spawn_host(state).await;

    let register = case("register-callback");
    let request = register["expected"]["requestJson"].as_str().unwrap();
    let response = register["expected"]["responseJson"].as_str().unwrap();
    assert_answered(&invoke(addr, request).await, response, "register");
    let replay = response.replace("\"bindingCreated\":true", "\"bindingCreated\":false");
    assert_answered(&invoke(addr, request).await, &replay, "register replayed");
    let bind = case("bind-callback");
    let bind_request = bind["expected"]["requestJson"].as_str().unwrap();
    invoke(addr, bind_request).await;
    assert_answered(
        &invoke(addr, bind_request).await,
        bind["expected"]["responseJson"].as_str().unwrap(),
        "bind-callback",
    );
    let expected = &register["expected"]["registeredBinding"];
    let text = |v: &Value| aws_sdk_dynamodb::types::AttributeValue::S(v.as_str().unwrap().into());
    let row = client
        .get_item()
        .table_name(&table)
        .key(attr::PK, text(&expected["partitionKey"]))
        .key(attr::SK, text(&expected["sortKey"]))
        .send()
        .await
        .expect("get")
        .item()
        .cloned()
        .expect("the REGISTRATION row, under TPF's keys");
    let request_doc: Value = serde_json::from_str(request).unwrap();
    assert_eq!(
        row.get(attr::PROVIDER_CALLBACK_ID)
            .and_then(|v| v.as_s().ok()),
        request_doc["providerCallbackId"]
            .as_str()
            .map(String::from)
            .as_ref()
    );

    let other = request.replace(
        "\"providerCallbackId\":\"callback-",
        "\"providerCallbackId\":\"other-",
    );
    assert_ne!(other, request, "the vector names a callback-… id");
    let conflict = invoke(addr, &other).await;
    assert_function_error(
        &conflict,
        &json_error(
            class::ILLEGAL_STATE,
            "callback registration generation is already owned by another callback",
        ),
        "conflict",
    );
}

fn json_error(class: &str, message: &str) -> Value {
    let simple = class.rsplit('.').next().unwrap_or(class);
    serde_json::json!({"error": format!("{simple}: {message}"), "errorClass": class})
}
