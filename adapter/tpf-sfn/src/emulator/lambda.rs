//! The local Lambda endpoint in front of AWS's durable execution emulator (`dex-local-runner`):
//! what the gateway host, TPF's ingress and the durable driver function call as Lambda when the
//! loop runs locally (`tpf-sfn dev --backend lambda-durable`, and the durable end-to-end tests).
//! It is never deployed and fakes no result: it fills five gaps of the emulator, each a declared
//! deviation (`docs/runtime.md`, "Lambda durable functions"):
//!
//! 1. The emulator has no `Invoke` route. An `Invoke` with a durable execution name becomes the
//!    emulator's own start call, for the function version deployed under that name (its
//!    runtime endpoint).
//! 2. The emulator does not refuse a second execution of the same name. The endpoint remembers
//!    the names it started and answers a repeat with `DurableExecutionAlreadyStartedException`,
//!    as Lambda does.
//! 3. The emulator's error answers name their type in the body only. The endpoint copies it into
//!    `x-amzn-ErrorType`, where the SDK reads it, so "already done" answers classify as on AWS.
//! 4. The emulator runs no function but the durable ones. A synchronous `Invoke` of TPF's
//!    action gateway (the numbered version the driver's spec names) is answered by `serve`'s
//!    gateway route, which answers as Lambda's Invoke does: the response bytes, or the
//!    function error's document with `X-Amz-Function-Error`. Lambda authorizes the caller
//!    by IAM; `serve` by its bearer token, which the endpoint adds.
//! 5. The emulator knows every function it runs as `_` (the one function a `cargo lambda
//!    watch` runtime serves): a `ListDurableExecutionsByFunction` of a deployed function lists
//!    `_`'s executions (one function per emulator here).
//!
//! Everything else (checkpoints, state, callbacks, history) is passed through untouched.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpStream;

use super::AbortOnDrop;
use crate::error::Error;

/// The invoked function ARN `cargo lambda watch` hands the function (`function-arn`, a
/// literal): a test that lets a function start executions on its own version lists it with
/// that version's runtime.
pub const INVOKED_FUNCTION_ARN: &str = "function-arn";

/// One function version this test deployed: where the emulator invokes it.
#[derive(Clone, Debug)]
pub struct Deployed {
    /// The `cargo lambda watch` runtime endpoint that serves this version.
    pub lambda_endpoint: String,
}

/// TPF's action gateway as the shim answers its invokes: the function version's ARN and the
/// `serve` that answers for it.
#[derive(Clone, Debug)]
pub struct GatewayRoute {
    pub function_arn: String,
    pub serve: SocketAddr,
    pub token: String,
}

/// One invoke of TPF's gateway: the request's bytes, the response's, and the function error
/// Lambda's Invoke reported (`X-Amz-Function-Error`).
#[derive(Clone, Debug)]
pub struct Exchange {
    pub request: String,
    pub response: String,
    pub function_error: Option<String>,
}

/// A start the shim passed on.
#[derive(Clone, Debug)]
pub struct Started {
    pub function: String,
    pub name: String,
    pub arn: String,
    pub input: Value,
}

#[derive(Default)]
struct Inner {
    started: Vec<Started>,
    by_name: HashMap<(String, String), String>,
    /// Every gateway invoke answered, in order.
    gateway: Vec<Exchange>,
}

#[derive(Clone)]
struct Shared {
    dex: SocketAddr,
    functions: Arc<BTreeMap<String, Deployed>>,
    gateway: Option<GatewayRoute>,
    inner: Arc<Mutex<Inner>>,
}

impl Shared {
    /// What the endpoint remembers; a handler that panicked left it consistent (each update is
    /// one push or insert), so a poisoned lock is still read.
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The endpoint, serving until dropped.
pub struct Shim {
    pub url: String,
    shared: Shared,
    _task: AbortOnDrop,
}

impl Shim {
    /// Serves on `listen` (port 0: any free port; `url` says which), in front of the emulator
    /// at `dex`, for the durable `functions` by name and TPF's `gateway`. Runs on the calling
    /// runtime.
    pub async fn start(
        listen: SocketAddr,
        dex: SocketAddr,
        functions: BTreeMap<String, Deployed>,
        gateway: Option<GatewayRoute>,
    ) -> Result<Shim, Error> {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .and_then(|l| Ok((l.local_addr()?, l)))
            .map_err(|e| {
                Error::new(
                    "LAMBDA_ENDPOINT_LISTEN",
                    format!("the local Lambda endpoint cannot listen on {listen}"),
                )
                .with_source(e)
                .with_hint("pick another --lambda-listen, or stop what listens there")
            });
        let (addr, listener) = listener?;
        let shared = Shared {
            dex,
            functions: Arc::new(functions),
            gateway,
            inner: Arc::default(),
        };
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Shim {
            url: format!("http://{addr}"),
            shared,
            _task: AbortOnDrop(task),
        })
    }

    /// Every start passed on, in order.
    pub fn started(&self) -> Vec<Started> {
        self.shared.lock().started.clone()
    }

    /// Every invoke of TPF's gateway, in order.
    pub fn gateway_exchanges(&self) -> Vec<Exchange> {
        self.shared.lock().gateway.clone()
    }

    /// The durable execution ARN of execution `name`, once started.
    pub fn arn(&self, name: &str) -> Option<String> {
        self.started()
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.arn)
    }
}

fn error(status: StatusCode, kind: &str, message: &str) -> Response<Body> {
    let mut out = Response::new(Body::from(
        json!({ "Type": kind, "message": message }).to_string(),
    ));
    *out.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(kind) {
        out.headers_mut().insert("x-amzn-ErrorType", v);
    }
    out.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    out
}

/// A built response, or a service error saying why it could not be built (a header value the
/// emulator or the gateway route sent that HTTP cannot carry).
fn built(response: Result<Response<Body>, axum::http::Error>) -> Response<Body> {
    response.unwrap_or_else(|e| {
        error(
            StatusCode::BAD_GATEWAY,
            "ServiceException",
            &format!("the answer cannot be passed on: {e}"),
        )
    })
}

/// A body's bytes; a body cut short reads as empty, which every caller answers as such.
async fn all_of<B: hyper::body::Body>(body: B) -> Bytes {
    body.collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default()
}

async fn handle(State(shared): State<Shared>, request: Request<Body>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let body = all_of(body).await;
    let segments: Vec<String> = parts
        .uri
        .path()
        .trim_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    match (&parts.method, segments.as_slice()) {
        (&Method::POST, [version, functions, function, invocations])
            if version == "2015-03-31"
                && functions == "functions"
                && invocations == "invocations" =>
        {
            match &shared.gateway {
                Some(g) if g.function_arn == *function => invoke_gateway(&shared, g, body).await,
                _ => start(&shared, function, &parts.headers, &body).await,
            }
        }
        (&Method::GET, [version, functions, function, executions])
            if version == "2025-12-01"
                && functions == "functions"
                && executions == "durable-executions"
                && shared.functions.contains_key(function) =>
        {
            // The emulator knows every function it runs as `_` (see `start`).
            let query = parts.uri.query().map_or(String::new(), |q| format!("?{q}"));
            let uri = format!("/2025-12-01/functions/_/durable-executions{query}")
                .parse::<Uri>()
                .unwrap_or_else(|_| Uri::from_static("/2025-12-01/functions/_/durable-executions"));
            proxy(shared.dex, &parts.method, &uri, &parts.headers, body).await
        }
        _ => proxy(shared.dex, &parts.method, &parts.uri, &parts.headers, body).await,
    }
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

async fn start(
    shared: &Shared,
    function: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Response<Body> {
    let Some(deployed) = shared.functions.get(function) else {
        return error(
            StatusCode::NOT_FOUND,
            "ResourceNotFoundException",
            &format!("Function not found: {function}"),
        );
    };
    let Some(name) = headers
        .get("x-amz-durable-execution-name")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "InvalidParameterValueException",
            "this test shim starts durable executions only: DurableExecutionName is required",
        );
    };
    let key = (function.to_owned(), name.clone());
    if let Some(arn) = shared.lock().by_name.get(&key) {
        return error(
            StatusCode::CONFLICT,
            "DurableExecutionAlreadyStartedException",
            &format!("an execution named {name} exists: {arn}"),
        );
    }
    let input = String::from_utf8_lossy(body).into_owned();
    // The emulator invokes `_`, the one function its `cargo lambda watch` runtime serves.
    let request = json!({
        "AccountId": "123456789012",
        "FunctionName": "_",
        "FunctionQualifier": "$LATEST",
        "ExecutionName": name,
        "ExecutionTimeoutSeconds": 900,
        "ExecutionRetentionPeriodDays": 1,
        "Input": input,
        "LambdaEndpoint": deployed.lambda_endpoint,
    });
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    let uri = Uri::from_static("/start-durable-execution");
    let answer = proxy(
        shared.dex,
        &Method::POST,
        &uri,
        &headers,
        Bytes::from(request.to_string()),
    )
    .await;
    let status = answer.status();
    let bytes = all_of(answer.into_body()).await;
    let started: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    // The emulator's own start call answers `ExecutionArn`.
    let Some(arn) = started["ExecutionArn"]
        .as_str()
        .or(started["DurableExecutionArn"].as_str())
        .map(str::to_owned)
    else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "ServiceException",
            &format!(
                "the emulator did not start {name}: {status} {}",
                String::from_utf8_lossy(&bytes)
            ),
        );
    };
    {
        let mut inner = shared.lock();
        inner.by_name.insert(key, arn.clone());
        inner.started.push(Started {
            function: function.to_owned(),
            name,
            arn: arn.clone(),
            input: serde_json::from_str(&input).unwrap_or(Value::Null),
        });
    }
    built(
        Response::builder()
            .status(StatusCode::ACCEPTED)
            .header("X-Amz-Durable-Execution-Arn", arn)
            .header("X-Amz-Executed-Version", "$LATEST")
            .body(Body::empty()),
    )
}

/// A synchronous invoke of TPF's gateway, answered by `serve`'s gateway route as Lambda
/// answers it: 200 with the payload, `X-Amz-Function-Error` copied when the function failed.
async fn invoke_gateway(shared: &Shared, route: &GatewayRoute, body: Bytes) -> Response<Body> {
    let request = String::from_utf8_lossy(&body).into_owned();
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    if let Ok(v) = HeaderValue::from_str(&format!("Bearer {}", route.token)) {
        headers.insert("authorization", v);
    }
    let uri = Uri::from_static(tpf_wire::gateway::invoke::PATH);
    let answer = proxy(route.serve, &Method::POST, &uri, &headers, body).await;
    let status = answer.status();
    let (parts, body) = answer.into_parts();
    let bytes = all_of(body).await;
    let function_error = parts
        .headers
        .get(tpf_wire::gateway::invoke::FUNCTION_ERROR_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    shared.lock().gateway.push(Exchange {
        request,
        response: String::from_utf8_lossy(&bytes).into_owned(),
        function_error: function_error.clone(),
    });
    if status != StatusCode::OK {
        // Lambda's Invoke answers a function that could not run as a service error.
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "ServiceException",
            &format!(
                "the gateway route answered HTTP {status}: {}",
                String::from_utf8_lossy(&bytes)
            ),
        );
    }
    let mut out = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .header("X-Amz-Executed-Version", "1");
    if let Some(v) = function_error {
        out = out.header(tpf_wire::gateway::invoke::FUNCTION_ERROR_HEADER, v);
    }
    built(out.body(Body::from(bytes)))
}

/// Passes a request to the emulator; an error answer gets its type in `x-amzn-ErrorType`.
async fn proxy(
    dex: SocketAddr,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let fail = |e: String| error(StatusCode::BAD_GATEWAY, "ServiceException", &e);
    let stream = match TcpStream::connect(dex).await {
        Ok(s) => s,
        Err(e) => return fail(format!("emulator unreachable: {e}")),
    };
    let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    {
        Ok(x) => x,
        Err(e) => return fail(format!("handshake: {e}")),
    };
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = hyper::Request::builder().method(method.clone()).uri(path);
    for (k, v) in headers {
        if k != "host" && k != "content-length" && k != "transfer-encoding" {
            request = request.header(k, v);
        }
    }
    let request = match request
        .header("host", dex.to_string())
        .header("content-length", body.len())
        .body(Full::new(body))
    {
        Ok(r) => r,
        Err(e) => return fail(format!("request: {e}")),
    };
    let response = match sender.send_request(request).await {
        Ok(r) => r,
        Err(e) => return fail(format!("request: {e}")),
    };
    let (parts, body) = response.into_parts();
    let bytes = all_of(body).await;
    let mut out = Response::builder().status(parts.status);
    for (k, v) in &parts.headers {
        if k != "content-length" && k != "transfer-encoding" && k != "connection" {
            out = out.header(k, v);
        }
    }
    if parts.status.as_u16() >= 400 && !parts.headers.contains_key("x-amzn-errortype") {
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if let Some(kind) = body["Type"].as_str().or(body["__type"].as_str()) {
            out = out.header("x-amzn-ErrorType", kind);
        }
    }
    built(out.body(Body::from(bytes)))
}
