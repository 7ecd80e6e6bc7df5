//! A minimal HTTP/1.1 client for in-process server tests (loopback only): one request per
//! connection, `Connection: close`, read to EOF.

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct Response {
    pub status: u16,
    pub body: Value,
    pub raw: String,
}

/// One exchange as a test saw it: method, path as sent, status and body as answered.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub method: String,
    pub path: String,
    pub status: u16,
    pub body: Value,
}

tokio::task_local! {
    /// When set, every [`request`] made inside the scope is appended to it (the OpenAPI
    /// response check replays a whole lifecycle and reads what was answered).
    pub static RECORDED: std::sync::Arc<std::sync::Mutex<Vec<Exchange>>>;
}

pub async fn request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Response {
    assert!(addr.ip().is_loopback(), "tests reach only 127.0.0.1");
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let body = body.unwrap_or("");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body.as_bytes()).await.expect("write body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let response = parse(String::from_utf8_lossy(&raw).into_owned());
    let head = response.raw.split("\r\n\r\n").next().unwrap_or("");
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "this client reads only content-length bodies: {head}"
    );
    let _ = RECORDED.try_with(|log| {
        log.lock().expect("recorder").push(Exchange {
            method: method.to_owned(),
            path: path.to_owned(),
            status: response.status,
            body: response.body.clone(),
        })
    });
    response
}

/// A whole answer read off the wire: its status (0 if there is none) and its body as JSON
/// (`Null` if it is not JSON).
pub fn parse(raw: String) -> Response {
    let (head, payload) = raw.split_once("\r\n\r\n").unwrap_or((raw.as_str(), ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = serde_json::from_str(payload).unwrap_or(Value::Null);
    Response { status, body, raw }
}

/// Submits order `key` (TPF's `RunAsyncRequest`, the key also its idempotency key).
pub async fn submit(
    addr: std::net::SocketAddr,
    token: &str,
    tenant: &str,
    pipeline_id: &str,
    key: &str,
) -> Response {
    let body = serde_json::json!({
        "pipelineId": pipeline_id, "inputShape": "UNI",
        "inputPayload": {"orderId": key}, "idempotencyKey": key, "outputStreaming": false
    })
    .to_string();
    request(
        addr,
        "POST",
        &format!("/tpf/control-plane/tenants/{tenant}/executions"),
        Some(token),
        Some(&body),
    )
    .await
}

/// TPF's `ExecutionStatusDto` for execution `id`.
pub async fn execution_record(
    addr: std::net::SocketAddr,
    token: &str,
    tenant: &str,
    id: &str,
) -> Value {
    request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/{tenant}/executions/{id}"),
        Some(token),
        None,
    )
    .await
    .body
}

/// The pending interaction of execution `id`, if TPF has one.
pub async fn pending_interaction(
    addr: std::net::SocketAddr,
    token: &str,
    tenant: &str,
    id: &str,
) -> Option<String> {
    let r = request(
        addr,
        "GET",
        &format!("/tpf/control-plane/tenants/{tenant}/interactions/pending"),
        Some(token),
        None,
    )
    .await;
    r.body
        .as_array()?
        .iter()
        .find(|i| i["executionId"] == id)
        .and_then(|i| i["interactionId"].as_str())
        .map(str::to_owned)
}

/// Completes `interaction` with the chef's acceptance; returns the response body (a refusal
/// fails the test).
pub async fn complete_interaction(
    addr: std::net::SocketAddr,
    token: &str,
    tenant: &str,
    interaction: &str,
) -> Value {
    let body = serde_json::json!({
        "interactionId": interaction, "responsePayload": {"decision": "accepted"}, "actor": "chef"
    })
    .to_string();
    let r = request(
        addr,
        "POST",
        &format!("/tpf/control-plane/tenants/{tenant}/interactions/complete"),
        Some(token),
        Some(&body),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.body
}
