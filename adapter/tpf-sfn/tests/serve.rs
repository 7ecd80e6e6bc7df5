//! `tpf-sfn serve` in process: a restaurant execution driven over real HTTP on 127.0.0.1 (TPF's
//! gateway runs it, TPF's work function in process, the control plane completes and reads it),
//! auth, error codes, tenant isolation, and the OpenAPI document against the route table.

use crate::support;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};
use support::host::restaurant;
use support::http::{request, Exchange, RECORDED};
use tpf_model::{Coordinator, InMemoryStore};
use tpf_sfn::aws::dynamo_store::DynamoStore;
use tpf_sfn::aws::tables::{create_all, TableNames};
use tpf_sfn::host::pipeline::{self, HostedPipeline};
use tpf_sfn::host::routes::ROUTES;
use tpf_sfn::host::{system_clock, work, HostState, HostStore};
use tpf_wire::gateway::invoke;

const TOKEN: &str = "test-token";
const TENANT: &str = "restaurant-demo";

/// A served host and its state (the tests run its work function by hand).
struct Host<S: HostStore> {
    addr: std::net::SocketAddr,
    state: Arc<HostState<S>>,
}

async fn start() -> (Host<InMemoryStore>, HostedPipeline) {
    start_with(InMemoryStore::new()).await
}

async fn start_with<S: HostStore>(store: S) -> (Host<S>, HostedPipeline) {
    let hosted = restaurant();
    let again = restaurant();
    let coordinator = Coordinator::new(store, hosted.pipeline, hosted.worker);
    let state = Arc::new(HostState::new(coordinator, TOKEN.to_owned(), system_clock));
    let addr = support::spawn_host(state.clone()).await;
    (Host { addr, state }, again)
}

/// A gateway SUBMIT of order `key` (TPF's ingress): the execution's id and whether it was a
/// duplicate.
async fn gateway_submit(addr: std::net::SocketAddr, key: &str) -> (String, bool) {
    let body = support::host::gateway_submit(TENANT, key).to_string();
    let r = request(addr, "POST", invoke::PATH, Some(TOKEN), Some(&body)).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert!(!function_error(&r), "{}", r.raw);
    let id = r.body["checkpoint"]["executionId"]
        .as_str()
        .expect("checkpoint")
        .to_owned();
    (id, r.body["duplicate"] == true)
}

/// Whether Lambda's Invoke would have said the function threw (`X-Amz-Function-Error`).
fn function_error(r: &support::http::Response) -> bool {
    let head = r.raw.split("\r\n\r\n").next().unwrap_or_default();
    head.to_ascii_lowercase()
        .contains(&invoke::FUNCTION_ERROR_HEADER.to_ascii_lowercase())
}

/// A driver's SWEEP of execution `id`, as it makes one before each STATUS: TPF's sweep queues
/// its due work for the work function.
async fn sweep(addr: std::net::SocketAddr, id: &str) {
    let mut body = support::host::gateway_submit(TENANT, "unused");
    body["operation"] = json!("SWEEP");
    body["executionId"] = json!(id);
    body["idempotencyKey"] = Value::Null;
    body["inputJson"] = Value::Null;
    let r = request(
        addr,
        "POST",
        invoke::PATH,
        Some(TOKEN),
        Some(&body.to_string()),
    )
    .await;
    assert!(r.status == 200 && !function_error(&r), "{}", r.raw);
}

/// Sweeps and runs TPF's work function until execution `id` is in `status` (the control
/// plane's view).
async fn work_until<S: HostStore>(host: &Host<S>, id: &str, status: &str) -> Value {
    let path = format!("/tpf/control-plane/tenants/{TENANT}/executions/{id}");
    let mut last = Value::Null;
    for _ in 0..50 {
        sweep(host.addr, id).await;
        let _ = work::run_once(host.state.clone()).await;
        last = request(host.addr, "GET", &path, Some(TOKEN), None)
            .await
            .body;
        if last["status"] == status {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("{id} never reached {status}: {last}");
}

fn descriptor(hosted: &HostedPipeline) -> String {
    json!({
        "schemaVersion": 1,
        "pipelineId": hosted.identity.pipeline_id,
        "contractVersion": hosted.identity.contract_version,
        "releaseVersion": hosted.identity.release_version,
        "artifacts": [{
            "artifactId": "restaurant", "kind": "container-image",
            "uri": "oci://restaurant", "digest": "sha256:00"
        }]
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restaurant_execution_over_http_parks_completes_and_succeeds() {
    let (host, hosted) = start().await;
    drive_restaurant(host, hosted).await;
}

/// `--store dynamodb`: the same flow with every coordinator call blocking on DynamoDB (moto)
/// from the request's `spawn_blocking` thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restaurant_execution_over_http_on_the_dynamodb_store() {
    let client = aws_sdk_dynamodb::Client::new(&support::moto_config().await);
    let names = TableNames::with_prefix(&format!("serve{}_", std::process::id()));
    create_all(&client, &names).await.expect("tables");
    let store = DynamoStore::new(client, names, tokio::runtime::Handle::current());
    let (host, hosted) = start_with(store).await;
    drive_restaurant(host, hosted).await;
}

async fn drive_restaurant<S: HostStore>(host: Host<S>, hosted: HostedPipeline) {
    let addr = host.addr;
    let pipeline_id = hosted.identity.pipeline_id.clone();
    let release = hosted.identity.release_version.clone();
    let admin = format!("/tpf/admin/tenants/{TENANT}/pipelines/{pipeline_id}/releases");
    let cp = format!("/tpf/control-plane/tenants/{TENANT}");

    let registered = request(
        addr,
        "POST",
        &format!("{admin}/register"),
        Some(TOKEN),
        Some(&descriptor(&hosted)),
    )
    .await;
    assert_eq!(registered.status, 200, "{}", registered.raw);
    assert_eq!(registered.body["status"], "REGISTERED");
    let activated = request(
        addr,
        "POST",
        &format!("{admin}/{release}/activate"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(activated.status, 200, "{}", activated.raw);
    assert_eq!(activated.body["status"], "ACTIVE");
    let active = request(addr, "GET", &format!("{admin}/active"), Some(TOKEN), None).await;
    assert_eq!(active.status, 200, "{}", active.raw);
    assert_eq!(active.body["releaseVersion"], release.as_str());
    let one = request(
        addr,
        "GET",
        &format!("{admin}/{release}"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(one.body["status"], "ACTIVE");
    let none = request(addr, "GET", &format!("{admin}/v404"), Some(TOKEN), None).await;
    assert_eq!(none.status, 404);

    let submit = json!({
        "pipelineId": pipeline_id, "inputShape": "UNI",
        "inputPayload": {"orderId": "order-1"}, "idempotencyKey": "order-1", "outputStreaming": false
    })
    .to_string();
    let accepted = request(
        addr,
        "POST",
        &format!("{cp}/executions"),
        Some(TOKEN),
        Some(&submit),
    )
    .await;
    assert_eq!(accepted.status, 200, "{}", accepted.raw);
    assert_eq!(accepted.body["duplicate"], false);
    let id = accepted.body["executionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let again = request(
        addr,
        "POST",
        &format!("{cp}/executions"),
        Some(TOKEN),
        Some(&submit),
    )
    .await;
    assert_eq!(again.body["executionId"], id.as_str());
    assert_eq!(again.body["duplicate"], true);

    // TPF's ingress starts a driver, whose SUBMIT through the gateway TPF's work function runs.
    let (id, duplicate) = gateway_submit(addr, "order-2").await;
    assert!(!duplicate);
    assert_eq!(gateway_submit(addr, "order-2").await, (id.clone(), true));
    let parked = work_until(&host, &id, "WAITING_EXTERNAL").await;
    assert_eq!(parked["executionId"], id.as_str());

    let pending = request(
        addr,
        "GET",
        &format!("{cp}/interactions/pending?limit=10"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(pending.status, 200, "{}", pending.raw);
    // TPF's sweep queued both orders' due work: the control plane's submission parks too.
    let rows = pending.body.as_array().expect("array").clone();
    assert_eq!(rows.len(), 2, "{}", pending.raw);
    let row = rows
        .iter()
        .find(|r| r["executionId"] == id.as_str())
        .expect("the gateway's execution is pending");
    let interaction_id = row["interactionId"]
        .as_str()
        .expect("interaction")
        .to_owned();
    let bad_limit = request(
        addr,
        "GET",
        &format!("{cp}/interactions/pending?limit=x"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(bad_limit.status, 400);

    let complete = json!({
        "interactionId": interaction_id, "responsePayload": {"decision": "accepted"}, "actor": "chef"
    })
    .to_string();
    let done = request(
        addr,
        "POST",
        &format!("{cp}/interactions/complete"),
        Some(TOKEN),
        Some(&complete),
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.raw);
    assert_eq!(done.body["status"], "COMPLETED");
    assert_eq!(done.body["duplicate"], false);
    let dup = request(
        addr,
        "POST",
        &format!("{cp}/interactions/complete"),
        Some(TOKEN),
        Some(&complete),
    )
    .await;
    assert_eq!(dup.body["duplicate"], true);

    work_until(&host, &id, "SUCCEEDED").await;

    let status = request(
        addr,
        "GET",
        &format!("{cp}/executions/{id}"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(status.status, 200);
    assert_eq!(status.body["status"], "SUCCEEDED");
    let result = request(
        addr,
        "GET",
        &format!("{cp}/executions/{id}/result"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(result.body["status"]["status"], "SUCCEEDED");
    assert!(!result.body["resultPayload"].is_null());

    let redrive = request(
        addr,
        "POST",
        &format!("/tpf/admin/tenants/{TENANT}/executions/{id}/redrive"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(
        redrive.status, 409,
        "SUCCEEDED cannot be re-driven: {}",
        redrive.raw
    );
    assert_eq!(redrive.body["code"], "CONFLICT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_identity_not_found_tenant_isolation_and_bad_input_are_coded() {
    auth_identity_not_found_tenant_isolation_and_bad_input_are_coded_flow().await;
}

async fn auth_identity_not_found_tenant_isolation_and_bad_input_are_coded_flow() {
    let (host, hosted) = start().await;
    let addr = host.addr;
    let pipeline_id = hosted.identity.pipeline_id.clone();
    let release = hosted.identity.release_version.clone();
    let admin = format!("/tpf/admin/tenants/{TENANT}/pipelines/{pipeline_id}/releases");
    request(
        addr,
        "POST",
        &format!("{admin}/register"),
        Some(TOKEN),
        Some(&descriptor(&hosted)),
    )
    .await;
    request(
        addr,
        "POST",
        &format!("{admin}/{release}/activate"),
        Some(TOKEN),
        None,
    )
    .await;
    let submit = json!({
        "pipelineId": pipeline_id, "inputShape": "UNI", "inputPayload": {"orderId": "o"}
    })
    .to_string();
    let cp = format!("/tpf/control-plane/tenants/{TENANT}");
    let id = request(
        addr,
        "POST",
        &format!("{cp}/executions"),
        Some(TOKEN),
        Some(&submit),
    )
    .await
    .body["executionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let status_of = |tenant: &str, execution: &str| {
        json!({"operation": "STATUS", "tenantId": tenant, "executionId": execution, "generation": 1})
            .to_string()
    };
    let body = status_of(TENANT, &id);

    for token in [None, Some("wrong"), Some("test-token-longer")] {
        let denied = request(addr, "POST", invoke::PATH, token, Some(&body)).await;
        assert_eq!(denied.status, 401, "{token:?}");
        assert_eq!(denied.body["code"], "UNAUTHORIZED");
    }
    let denied = request(addr, "GET", &format!("{cp}/executions/{id}"), None, None).await;
    assert_eq!(denied.status, 401);
    // One layer guards every route, and the tenant check runs before any handler.
    for (method, path, _) in ROUTES {
        let with = |tenant: &str| {
            path.replace("{tenantId}", tenant)
                .replace("{executionId}", &id)
                .replace("{pipelineId}", "p")
                .replace("{releaseVersion}", "v1")
        };
        let denied = request(addr, method, &with(TENANT), None, Some("{}")).await;
        assert_eq!(denied.status, 401, "{method} {path}");
        assert_eq!(denied.body["code"], "UNAUTHORIZED", "{method} {path}");
        if path.contains("{tenantId}") {
            let blank = request(addr, method, &with("%20"), Some(TOKEN), Some("{}")).await;
            assert_eq!(blank.status, 400, "{method} {path}: {}", blank.raw);
            assert_eq!(
                blank.body["message"], "tenantId must not be blank",
                "{method} {path}"
            );
        }
    }

    // With the token, the gateway answers; an execution it does not have is TPF's not-found
    // exception, as Lambda's Invoke reports a function error.
    let answered = request(addr, "POST", invoke::PATH, Some(TOKEN), Some(&body)).await;
    assert_eq!(answered.status, 200, "{}", answered.raw);
    assert!(!function_error(&answered), "{}", answered.raw);
    let not_found = request(
        addr,
        "POST",
        invoke::PATH,
        Some(TOKEN),
        Some(&status_of(TENANT, "nope")),
    )
    .await;
    assert!(function_error(&not_found), "{}", not_found.raw);
    assert_eq!(
        not_found.body["errorType"], "jakarta.ws.rs.NotFoundException",
        "{}",
        not_found.raw
    );

    // Another tenant sees nothing of this one's execution, nor its release.
    let other = request(
        addr,
        "POST",
        invoke::PATH,
        Some(TOKEN),
        Some(&status_of("other-tenant", &id)),
    )
    .await;
    assert!(function_error(&other), "{}", other.raw);
    assert_eq!(other.body["errorType"], "jakarta.ws.rs.NotFoundException");
    let other_status = request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/other-tenant/executions/{id}"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(other_status.status, 404);
    let other_submit = request(
        addr,
        "POST",
        "/tpf/control-plane/tenants/other-tenant/executions",
        Some(TOKEN),
        Some(&submit),
    )
    .await;
    assert_eq!(other_submit.status, 409);
    assert_eq!(other_submit.body["code"], "NO_ACTIVE_RELEASE");
    let other_pending = request(
        addr,
        "GET",
        "/tpf/control-plane/tenants/other-tenant/interactions/pending",
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(other_pending.body, json!([]));

    // A body that is not JSON never reaches the gateway function, as Lambda refuses it.
    let not_json = request(addr, "POST", invoke::PATH, Some(TOKEN), Some("{not json")).await;
    assert_eq!(not_json.status, 400, "{}", not_json.raw);
    assert_eq!(not_json.body["code"], "INVALID_REQUEST_CONTENT");
    for (method, path, bad) in [
        (
            "POST",
            &format!("{cp}/executions") as &str,
            r#"{"pipelineId":"p","inputShape":"BAD","inputPayload":{}}"#,
        ),
        (
            "POST",
            &format!("{cp}/interactions/complete") as &str,
            r#"{"responsePayload":{}}"#,
        ),
        (
            "POST",
            &format!("{admin}/register") as &str,
            r#"{"schemaVersion":2}"#,
        ),
    ] {
        let r = request(addr, method, path, Some(TOKEN), Some(bad)).await;
        assert_eq!(r.status, 400, "{path} {bad}: {}", r.raw);
        assert_eq!(r.body["code"], "BAD_REQUEST", "{path} {bad}");
    }
    let unknown = request(addr, "GET", "/nowhere", Some(TOKEN), None).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["code"], "NOT_FOUND");
    let activate_unknown = request(
        addr,
        "POST",
        &format!("{admin}/v404/activate"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(activate_unknown.status, 404);
    assert_eq!(activate_unknown.body["code"], "RELEASE_NOT_FOUND");
}

/// `--script`: a non-retryable failure at the first step ends FAILED with its error code; the
/// admin re-drive with `allowFailed` makes it runnable again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_failure_then_admin_redrive() {
    scripted_failure_then_admin_redrive_flow().await;
}

async fn scripted_failure_then_admin_redrive_flow() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/contracts/restaurant-approval.pipeline-contract.json"
    );
    let bytes = std::fs::read(path).expect("contract");
    let first_step = restaurant().pipeline.steps[0].name.clone();
    let script = format!(
        "[[steps]]\nstep = {first_step:?}\noutcomes = [\"fail-non-retryable:com.example.Rejected\"]\n"
    );
    let hosted = pipeline::load(path, &bytes, &[], Some(&script), 60_000).expect("pipeline");
    assert!(pipeline::load(
        path,
        &bytes,
        &[],
        Some("[[steps]]\nstep = \"nope\"\noutcomes = []\n"),
        60_000
    )
    .is_err());
    assert!(pipeline::load(
        path,
        &bytes,
        &[],
        Some("[[steps]]\nstep = \"x\"\noutcomes = [\"explode\"]\n"),
        60_000
    )
    .is_err());
    let identity = hosted.identity.clone();
    let coordinator = Coordinator::new(InMemoryStore::new(), hosted.pipeline, hosted.worker);
    let state = Arc::new(HostState::new(coordinator, TOKEN.to_owned(), system_clock));
    let addr = support::spawn_host(state.clone()).await;
    let host = Host { addr, state };
    let again = restaurant();
    let admin = format!(
        "/tpf/admin/tenants/{TENANT}/pipelines/{}/releases",
        identity.pipeline_id
    );
    request(
        addr,
        "POST",
        &format!("{admin}/register"),
        Some(TOKEN),
        Some(&descriptor(&again)),
    )
    .await;
    request(
        addr,
        "POST",
        &format!("{admin}/{}/activate", identity.release_version),
        Some(TOKEN),
        None,
    )
    .await;
    let (id, _) = gateway_submit(addr, "order-failing").await;
    let failed = work_until(&host, &id, "FAILED").await;
    assert!(failed["errorCode"].is_string(), "{failed}");
    let redrive = format!("/tpf/admin/tenants/{TENANT}/executions/{id}/redrive");
    let refused = request(addr, "POST", &redrive, Some(TOKEN), None).await;
    assert_eq!(
        refused.status, 409,
        "FAILED needs allowFailed: {}",
        refused.raw
    );
    let redriven = request(
        addr,
        "POST",
        &redrive,
        Some(TOKEN),
        Some(r#"{"allowFailed": true, "reason": "test"}"#),
    )
    .await;
    assert_eq!(redriven.status, 200, "{}", redriven.raw);
    assert_eq!(redriven.body["previousStatus"], "FAILED");
    assert_eq!(redriven.body["status"], "QUEUED");
    assert_eq!(redriven.body["attempt"], 1);
}

#[test]
fn openapi_document_lists_exactly_the_routes_the_router_serves() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(path).expect("openapi.json")).expect("JSON");
    assert_eq!(doc["openapi"].as_str().map(|v| &v[..2]), Some("3."));
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            if ["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                documented.insert((method.to_ascii_uppercase(), path.clone()));
            }
        }
    }
    let served: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p, _)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(documented, served);
}

/// The route template of `ROUTES` a concrete path matches: `{x}` stands for one segment.
fn route_of<'a>(method: &str, path: &str) -> Option<&'a str> {
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path.split('/').collect();
    ROUTES.iter().find_map(|(m, template, _)| {
        let parts: Vec<&str> = template.split('/').collect();
        (*m == method
            && parts.len() == segments.len()
            && parts
                .iter()
                .zip(&segments)
                .all(|(t, s)| t.starts_with('{') || t == s))
        .then_some(*template)
    })
}

/// Follows `$ref`s into `components`.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.trim_start_matches("#/components/schemas/");
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// Where `body` and the documented `schema` disagree on fields: a field served but not
/// documented, a required field not served, or a JSON type the schema does not allow.
fn field_drift(doc: &Value, schema: &Value, body: &Value, at: &str, out: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    if body.is_null() && schema["nullable"] == true {
        return;
    }
    let kind = schema["type"].as_str();
    let allowed = match (kind, body) {
        (None, _) => true,
        (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_))
        | (Some("string"), Value::String(_))
        | (Some("boolean"), Value::Bool(_)) => true,
        (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
        (Some("number"), Value::Number(_)) => true,
        _ => false,
    };
    if !allowed {
        out.push(format!("{at}: served {body}, documented type {kind:?}"));
        return;
    }
    if let Some(values) = schema["enum"].as_array() {
        if !values.contains(body) {
            out.push(format!("{at}: {body} is not one of the documented values"));
        }
    }
    match body {
        Value::Object(fields) => {
            // An object documented without `properties` is free-form (a pipeline's payload).
            let documented = schema["properties"].as_object();
            let open = documented.is_none()
                || schema["additionalProperties"] == true
                || schema["additionalProperties"].is_object();
            for (name, value) in fields {
                match documented.and_then(|d| d.get(name)) {
                    Some(field) => field_drift(doc, field, value, &format!("{at}.{name}"), out),
                    None if open => {}
                    None => out.push(format!("{at}.{name}: served but not documented")),
                }
            }
            for name in schema["required"].as_array().into_iter().flatten() {
                let name = name.as_str().unwrap_or_default();
                if !fields.contains_key(name) {
                    out.push(format!("{at}.{name}: documented as required, not served"));
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                field_drift(doc, &schema["items"], item, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Every answer of a whole lifecycle (parks, completes, succeeds; releases; auth and coded
/// errors; a failure re-driven) against the response schema `docs/openapi.json` documents for
/// its route and status.
async fn openapi_drift(doc: &Value) -> (Vec<String>, usize) {
    let log = Arc::new(std::sync::Mutex::new(Vec::<Exchange>::new()));
    RECORDED
        .scope(log.clone(), async {
            let (host, hosted) = start().await;
            drive_restaurant(host, hosted).await;
            auth_identity_not_found_tenant_isolation_and_bad_input_are_coded_flow().await;
            scripted_failure_then_admin_redrive_flow().await;
        })
        .await;
    let exchanges = log.lock().expect("recorder").clone();
    let mut drift = Vec::new();
    let mut checked = 0;
    for exchange in &exchanges {
        let Some(template) = route_of(&exchange.method, &exchange.path) else {
            continue;
        };
        let method = exchange.method.to_ascii_lowercase();
        let response = &doc["paths"][template][&method]["responses"][exchange.status.to_string()];
        let at = format!("{} {template} {}", exchange.method, exchange.status);
        if response.is_null() {
            drift.push(format!("{at}: status served but not documented"));
            continue;
        }
        let schema = &response["content"]["application/json"]["schema"];
        if schema.is_null() {
            if !exchange.body.is_null() {
                drift.push(format!("{at}: a body served, none documented"));
            }
            continue;
        }
        checked += 1;
        field_drift(doc, schema, &exchange.body, &at, &mut drift);
    }
    (drift, checked)
}

fn openapi_document() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    serde_json::from_slice(&std::fs::read(path).expect("openapi.json")).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_response_schemas_name_exactly_the_fields_served() {
    let doc = openapi_document();
    let (drift, checked) = openapi_drift(&doc).await;
    assert!(checked >= 20, "only {checked} answers were checked");
    assert!(
        drift.is_empty(),
        "docs/openapi.json drifted from the answers: {drift:#?}"
    );
}

/// The check sees a documented field the host stopped serving, and a served field the
/// document lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_response_check_sees_a_missing_and_an_undocumented_field() {
    let mut doc = openapi_document();
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("schemas");
    let status = schemas.get_mut("ExecutionStatus").expect("ExecutionStatus");
    if status["required"].is_null() {
        status["required"] = json!([]);
    }
    status["required"]
        .as_array_mut()
        .expect("required")
        .push(json!("notServed"));
    status["properties"]
        .as_object_mut()
        .expect("properties")
        .remove("status");
    let (drift, _) = openapi_drift(&doc).await;
    assert!(
        drift
            .iter()
            .any(|d| d.contains(".notServed: documented as required")),
        "{drift:#?}"
    );
    assert!(
        drift
            .iter()
            .any(|d| d.contains(".status: served but not documented")),
        "{drift:#?}"
    );
}
