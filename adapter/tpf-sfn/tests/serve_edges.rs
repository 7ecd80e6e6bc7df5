//! `tpf-sfn serve` at its edges: sizes, methods, encodings, tokens, a store that is down and a
//! client that never finishes its headers. Every refusal is coded JSON, the same on both
//! stores, and documented in `docs/openapi.json`.

use crate::support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use aws_config::{BehaviorVersion, Region};
use aws_sdk_sfn::config::Credentials;
use serde_json::{json, Value};
use support::host::{restaurant, restaurant_current};
use support::http::request;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tpf_model::{Coordinator, InMemoryStore};
use tpf_sfn::aws::dynamo_store::DynamoStore;
use tpf_sfn::aws::tables::{create_all, TableNames};
use tpf_sfn::host::limits::{MAX_BODY_BYTES, MAX_KEY_BYTES};
use tpf_sfn::host::routes::ROUTES;
use tpf_sfn::host::{router, system_clock, HostState, HostStore};

const TOKEN: &str = "test-token";
const TENANT: &str = "restaurant-demo";

fn state<S: HostStore>(store: S) -> Arc<HostState<S>> {
    let hosted = restaurant();
    let coordinator = Coordinator::new(store, hosted.pipeline, hosted.worker);
    Arc::new(HostState::new(coordinator, TOKEN.to_owned(), system_clock))
}

/// One request sent as raw bytes; the status and the body as JSON (`Null` if it is not JSON).
async fn raw(addr: std::net::SocketAddr, bytes: &[u8]) -> (u16, Value, String) {
    assert!(addr.ip().is_loopback(), "tests reach only 127.0.0.1");
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut read, mut write) = stream.into_split();
    // The server may answer before it has read everything (a refused body): write while
    // reading, and let the write fail once the server has closed.
    let bytes = bytes.to_vec();
    let writer = tokio::spawn(async move {
        let _ = write.write_all(&bytes).await;
        write
    });
    let mut out = Vec::new();
    let _ = read.read_to_end(&mut out).await;
    drop(writer.await);
    let r = support::http::parse(String::from_utf8_lossy(&out).into_owned());
    (r.status, r.body, r.raw)
}

fn head(method: &str, target: &str, extra: &str, body_len: usize) -> String {
    format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}Content-Length: {body_len}\r\n\r\n"
    )
}

fn assert_coded(what: &str, status: u16, body: &Value, raw: &str, want: u16, code: &str) {
    assert_eq!(status, want, "{what}: {raw}");
    assert_eq!(body["code"], code, "{what}: {raw}");
    assert!(body["message"].is_string(), "{what}: {raw}");
}

/// Registers and activates the restaurant release for `TENANT`.
async fn activate(addr: std::net::SocketAddr) -> String {
    let hosted = restaurant();
    let id = &hosted.identity;
    let admin = format!(
        "/tpf/admin/tenants/{TENANT}/pipelines/{}/releases",
        id.pipeline_id
    );
    let descriptor = json!({
        "schemaVersion": 1, "pipelineId": id.pipeline_id,
        "contractVersion": id.contract_version, "releaseVersion": id.release_version,
        "artifacts": [{"artifactId": "r", "kind": "container-image", "uri": "oci://r", "digest": "sha256:00"}]
    })
    .to_string();
    let r = request(
        addr,
        "POST",
        &format!("{admin}/register"),
        Some(TOKEN),
        Some(&descriptor),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = request(
        addr,
        "POST",
        &format!("{admin}/{}/activate", id.release_version),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    id.pipeline_id.clone()
}

fn submit_body(pipeline_id: &str, payload_bytes: usize, key: &str) -> String {
    json!({
        "pipelineId": pipeline_id, "inputShape": "UNI",
        "inputPayload": {"note": "x".repeat(payload_bytes)}, "idempotencyKey": key
    })
    .to_string()
}

/// The size limits, on one store: the largest accepted body and key go in; one byte more is
/// the coded 4xx.
async fn sizes_are_refused_up_front(addr: std::net::SocketAddr) {
    let pipeline_id = activate(addr).await;
    let submit = format!("/tpf/control-plane/tenants/{TENANT}/executions");
    let envelope = submit_body(&pipeline_id, 0, &"k".repeat(MAX_KEY_BYTES)).len();
    // Exactly at both limits: accepted, and stored (DynamoDB's item and key limits hold).
    let body = submit_body(
        &pipeline_id,
        MAX_BODY_BYTES - envelope,
        &"k".repeat(MAX_KEY_BYTES),
    );
    assert_eq!(body.len(), MAX_BODY_BYTES);
    let ok = request(addr, "POST", &submit, Some(TOKEN), Some(&body)).await;
    assert_eq!(ok.status, 200, "{}", &ok.raw[..ok.raw.len().min(400)]);
    let id = ok.body["executionId"].as_str().expect("id").to_owned();
    let status = request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/{TENANT}/executions/{id}"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(status.status, 200, "{}", status.raw);

    let body = submit_body(
        &pipeline_id,
        MAX_BODY_BYTES - envelope + 1,
        &"k".repeat(MAX_KEY_BYTES),
    );
    let r = request(addr, "POST", &submit, Some(TOKEN), Some(&body)).await;
    assert_coded("body", r.status, &r.body, "", 413, "PAYLOAD_TOO_LARGE");
    // DynamoDB's own item limit, the probe that found the 500.
    let body = submit_body(&pipeline_id, 400 * 1024, "k");
    let r = request(addr, "POST", &submit, Some(TOKEN), Some(&body)).await;
    assert_coded(
        "400 KB body",
        r.status,
        &r.body,
        "",
        413,
        "PAYLOAD_TOO_LARGE",
    );

    for len in [MAX_KEY_BYTES + 1, 2049] {
        let body = submit_body(&pipeline_id, 10, &"k".repeat(len));
        let r = request(addr, "POST", &submit, Some(TOKEN), Some(&body)).await;
        assert_coded("key", r.status, &r.body, &r.raw, 400, "KEY_TOO_LONG");
    }
    let long_tenant = "t".repeat(MAX_KEY_BYTES + 1);
    let r = request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/{long_tenant}/executions/{id}"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_coded("tenant", r.status, &r.body, &r.raw, 400, "KEY_TOO_LONG");
    let complete = json!({"interactionId": "i".repeat(MAX_KEY_BYTES + 1), "responsePayload": {}});
    let r = request(
        addr,
        "POST",
        &format!("/tpf/control-plane/tenants/{TENANT}/interactions/complete"),
        Some(TOKEN),
        Some(&complete.to_string()),
    )
    .await;
    assert_coded(
        "interaction",
        r.status,
        &r.body,
        &r.raw,
        400,
        "KEY_TOO_LONG",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sizes_are_the_same_coded_4xx_on_the_memory_store() {
    let addr = support::spawn_host(state(InMemoryStore::new())).await;
    sizes_are_refused_up_front(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sizes_are_the_same_coded_4xx_on_the_dynamodb_store() {
    let client = aws_sdk_dynamodb::Client::new(&support::moto_config().await);
    let names = TableNames::with_prefix(&format!("edges{}_", std::process::id()));
    create_all(&client, &names).await.expect("tables");
    let store = DynamoStore::new(client, names, tokio::runtime::Handle::current());
    let addr = support::spawn_host(state(store)).await;
    sizes_are_refused_up_front(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_edge_refusal_is_coded_json_and_auth_comes_first() {
    let addr = support::spawn_host(state(InMemoryStore::new())).await;
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let status_path = format!("/tpf/control-plane/tenants/{TENANT}/executions/e1");

    // Wrong method on a known route.
    let (s, b, r) = raw(addr, head("DELETE", &status_path, &auth, 0).as_bytes()).await;
    assert_coded("405", s, &b, &r, 405, "METHOD_NOT_ALLOWED");
    // No such route.
    let (s, b, r) = raw(addr, head("GET", "/nope", &auth, 0).as_bytes()).await;
    assert_coded("404", s, &b, &r, 404, "NOT_FOUND");
    // A long target, long headers.
    let long = format!("{status_path}?x={}", "a".repeat(9 * 1024));
    let (s, b, r) = raw(addr, head("GET", &long, &auth, 0).as_bytes()).await;
    assert_coded("414", s, &b, &r, 414, "URI_TOO_LONG");
    let big = format!("{auth}X-Big: {}\r\n", "b".repeat(20 * 1024));
    let (s, b, r) = raw(addr, head("GET", &status_path, &big, 0).as_bytes()).await;
    assert_coded("431", s, &b, &r, 431, "HEADERS_TOO_LARGE");
    // Percent-encoding that decodes to no UTF-8 text.
    let bad = "/tpf/control-plane/tenants/%FF%FE/executions/e1";
    let (s, b, r) = raw(addr, head("GET", bad, &auth, 0).as_bytes()).await;
    assert_coded("bad encoding", s, &b, &r, 400, "BAD_REQUEST");
    let pending = format!("/tpf/control-plane/tenants/{TENANT}/interactions/pending?limit=%FF");
    let (s, b, r) = raw(addr, head("GET", &pending, &auth, 0).as_bytes()).await;
    assert_coded("bad query", s, &b, &r, 400, "BAD_REQUEST");

    // A body over the limit: without the token the answer is 401, whatever its size.
    let submit = format!("/tpf/control-plane/tenants/{TENANT}/executions");
    let body = "x".repeat(MAX_BODY_BYTES + 1);
    let mut req = head("POST", &submit, "", body.len()).into_bytes();
    req.extend_from_slice(body.as_bytes());
    let (s, b, r) = raw(addr, &req).await;
    assert_coded("no token, big body", s, &b, &r, 401, "UNAUTHORIZED");
    let mut req = head("POST", &submit, &auth, body.len()).into_bytes();
    req.extend_from_slice(body.as_bytes());
    let (s, b, r) = raw(addr, &req).await;
    assert_coded("big body", s, &b, &r, 413, "PAYLOAD_TOO_LARGE");
    // The same body chunked, with no length announced.
    let mut req = format!(
        "POST {submit} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{auth}Transfer-Encoding: chunked\r\n\r\n{:x}\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body.as_bytes());
    req.extend_from_slice(b"\r\n0\r\n\r\n");
    let (s, b, r) = raw(addr, &req).await;
    assert_coded("big chunked body", s, &b, &r, 413, "PAYLOAD_TOO_LARGE");
    // Without the token, nothing else is revealed: not the route, not the method.
    for target in ["/nope", long.as_str()] {
        let (s, b, r) = raw(addr, head("GET", target, "", 0).as_bytes()).await;
        assert_coded("no token", s, &b, &r, 401, "UNAUTHORIZED");
    }

    // The token exactly: padded, it is another token.
    for header in [
        format!("Authorization: Bearer   {TOKEN}   \r\n"),
        format!("Authorization: Bearer {TOKEN} \r\nAuthorization: Bearer {TOKEN}\r\n"),
        format!("Authorization: Bearer\t{TOKEN}\r\n"),
    ] {
        let (s, b, r) = raw(addr, head("GET", &status_path, &header, 0).as_bytes()).await;
        assert_coded(&header, s, &b, &r, 401, "UNAUTHORIZED");
    }
    let (s, b, r) = raw(addr, head("GET", &status_path, &auth, 0).as_bytes()).await;
    assert_coded("exact token", s, &b, &r, 404, "NOT_FOUND");
}

/// A DynamoDB store on a port nothing listens on: the control-plane and admin routes answer a
/// 503 with the store's code and without the SDK's account of the failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_is_down_is_a_coded_503() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let config = aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "static"))
        .retry_config(aws_config::retry::RetryConfig::disabled())
        .load()
        .await;
    let store = DynamoStore::new(
        aws_sdk_dynamodb::Client::new(&config),
        TableNames::with_prefix("down_"),
        tokio::runtime::Handle::current(),
    );
    let addr = support::spawn_host(state(store)).await;
    let hosted = restaurant();
    let id = &hosted.identity;
    let cp = format!("/tpf/control-plane/tenants/{TENANT}");
    let admin = format!(
        "/tpf/admin/tenants/{TENANT}/pipelines/{}/releases",
        id.pipeline_id
    );
    let submit = json!({"pipelineId": id.pipeline_id, "inputShape": "UNI", "inputPayload": {}});
    let calls = [
        ("GET", format!("{cp}/executions/e1"), None),
        ("GET", format!("{cp}/executions/e1/result"), None),
        ("GET", format!("{cp}/interactions/pending"), None),
        ("POST", format!("{cp}/executions"), Some(submit.to_string())),
        ("GET", format!("{admin}/active"), None),
        ("GET", format!("{admin}/{}", id.release_version), None),
    ];
    for (method, path, body) in calls {
        let r = request(addr, method, &path, Some(TOKEN), body.as_deref()).await;
        assert_coded(&path, r.status, &r.body, &r.raw, 503, "STORE_UNAVAILABLE");
        let message = r.body["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("store unavailable") && !message.contains("Error {"),
            "{path}: {message}"
        );
    }
}

/// A client that opens a request and never finishes its headers loses its connection after
/// the header-read timeout (without one, `read_to_end` below would never return).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_headers_never_end_is_closed() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = router(state(InMemoryStore::new()));
    tokio::spawn(tpf_sfn::host::server::serve_with(
        listener,
        app,
        Duration::from_millis(200),
    ));
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"GET /tpf/gateway/v1/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .expect("write");
    let mut out = Vec::new();
    // A guard against hanging the suite, far above the timeout under test.
    let closed = tokio::time::timeout(Duration::from_secs(120), stream.read_to_end(&mut out)).await;
    assert!(
        matches!(closed, Ok(Ok(_)) | Ok(Err(_))),
        "the half-open request was never closed"
    );
}

/// `docs/openapi.json` documents every code the host answers with, and every route documents
/// the edge's refusals (and, on the routes that read the store, its 503).
#[test]
fn openapi_documents_every_code_and_every_edge_status() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc_text = std::fs::read_to_string(root.join("../../docs/openapi.json")).expect("openapi");
    let doc: Value = serde_json::from_str(&doc_text).expect("JSON");
    let mut codes = BTreeSet::new();
    let mut stack = vec![root.join("src/host")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).expect("host sources") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            // `ApiError::new(STATUS, "CODE", …)`: the code is the first literal after it.
            for part in text.split("ApiError::new(").skip(1) {
                if let Some(code) = part.split('"').nth(1) {
                    codes.insert(code.to_owned());
                }
            }
        }
    }
    codes.insert("BAD_REQUEST".to_owned());
    // The coordinator's codes (TPF's HTTP mapping), from its one `code()` table.
    let coordinator =
        std::fs::read_to_string(root.join("../../mapping-tests/tpf-model/src/coordinator/mod.rs"))
            .expect("coordinator source");
    let table = coordinator
        .split("pub fn code(&self)")
        .nth(1)
        .and_then(|rest| rest.split("\n    }\n").next())
        .expect("CoordinatorError::code");
    codes.extend(
        table
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|c| c.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'))
            .map(String::from),
    );
    assert!(
        codes.contains("KEY_TOO_LONG") && codes.contains("STORE_UNAVAILABLE"),
        "{codes:?}"
    );
    let missing: Vec<_> = codes
        .iter()
        .filter(|c| !doc_text.contains(&format!("`{c}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "codes not in docs/openapi.json: {missing:?}"
    );
    // docs/codes.md lists exactly these under the host's section.
    let md = std::fs::read_to_string(root.join("../../docs/codes.md")).expect("codes.md");
    let section = md
        .split("## Action host answers")
        .nth(1)
        .map(|s| s.split("\n## ").next().unwrap_or(s))
        .expect("codes.md has an `Action host answers` section");
    let listed: BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(String::from)
        .collect();
    assert_eq!(
        listed, codes,
        "docs/codes.md's host section vs the codes the host answers"
    );

    for (method, path, _) in ROUTES {
        let responses = &doc["paths"][path][method.to_ascii_lowercase()]["responses"];
        for status in ["401", "405", "413", "414", "431", "503"] {
            assert!(
                responses[status]["content"]["application/json"].is_object(),
                "{method} {path} does not document a JSON {status}"
            );
        }
    }
}

/// Release registration reads descriptors as the compiler does: today's form with TPF's
/// validator rules (its primary artifact is the one carrying the Compiled Truth), a breach of
/// them refused with TPF's message, and August's form still accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_takes_todays_release_descriptor_and_august_form() {
    let addr = support::spawn_host(state(InMemoryStore::new())).await;
    let today = include_str!(
        "../../../examples/contracts/restaurant-approval-current.pipeline-release.json"
    );
    let mut descriptor: Value = serde_json::from_str(today).unwrap();
    let pipeline = descriptor["pipelineId"].as_str().unwrap().to_owned();
    let admin = format!("/tpf/admin/tenants/{TENANT}/pipelines/{pipeline}/releases");
    let register = |body: String| {
        let path = format!("{admin}/register");
        async move { request(addr, "POST", &path, Some(TOKEN), Some(&body)).await }
    };

    let r = register(today.to_owned()).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body["primaryArtifactId"], "app-jar");
    assert_eq!(
        r.body["primaryArtifactUri"],
        "maven:org.pipelineframework.examples:restaurant-approval:2026.12.1"
    );

    // A kind today's TPF no longer knows, in today's form: refused with TPF's reason.
    descriptor["releaseVersion"] = json!("2026.12.2");
    descriptor["artifacts"][0]["kind"] = json!("local-file");
    let r = register(descriptor.to_string()).await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.body["code"], "BAD_REQUEST");
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(message.contains("local-file"), "{message}");

    // August's form: no compiledTruthArtifactId, August's kinds.
    let august = json!({
        "schemaVersion": 1, "pipelineId": pipeline,
        "contractVersion": "sha256:v1", "releaseVersion": "2026.08.1",
        "artifacts": [{"artifactId": "a", "kind": "local-file", "uri": "file:///a.jar", "digest": "sha256:00"}]
    });
    let r = register(august.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body["primaryArtifactId"], "a");
}

/// A release of today's form registered for the hosted contract is checked against it as TPF's
/// registrar does (every step on exactly one deployable artifact): one that leaves a step off
/// every artifact is refused with TPF's message and not stored; the complete one is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_checks_todays_release_against_the_hosted_contract() {
    let hosted = restaurant_current();
    let coordinator = Coordinator::new(InMemoryStore::new(), hosted.pipeline, hosted.worker);
    let state = Arc::new(
        HostState::new(coordinator, TOKEN.to_owned(), system_clock).with_contract(hosted.contract),
    );
    let addr = support::spawn_host(state).await;
    let today = include_str!(
        "../../../examples/contracts/restaurant-approval-current.pipeline-release.json"
    );
    let descriptor: Value = serde_json::from_str(today).unwrap();
    let pipeline = descriptor["pipelineId"].as_str().unwrap().to_owned();
    let admin = format!("/tpf/admin/tenants/{TENANT}/pipelines/{pipeline}/releases");
    let register = |body: String| {
        let path = format!("{admin}/register");
        async move { request(addr, "POST", &path, Some(TOKEN), Some(&body)).await }
    };

    // The last step on no artifact: valid on its own, refused against the contract.
    let mut unplaced = descriptor.clone();
    let steps = unplaced["artifacts"][0]["stepIds"].as_array_mut().unwrap();
    let dropped = steps.pop().and_then(|s| s.as_str().map(str::to_owned));
    let dropped = dropped.expect("the release places a step");
    let r = register(unplaced.to_string()).await;
    assert_eq!(r.status, 400, "{}", r.raw);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "Release step {dropped} must be associated with exactly one deployable artifact"
        )),
        "{message}"
    );
    let version = descriptor["releaseVersion"].as_str().unwrap();
    let r = request(
        addr,
        "GET",
        &format!("{admin}/{version}"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(r.status, 404, "a refused release is not stored: {}", r.raw);

    let r = register(today.to_owned()).await;
    assert_eq!(r.status, 200, "{}", r.raw);
}
