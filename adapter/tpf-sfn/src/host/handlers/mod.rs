//! Route handlers, one module per API: TPF's action gateway (the drivers' calls), TPF's control
//! plane and its admin routes. (Action API v1's `process-work-item` and `sweep-once`, which TPF
//! does not serve, are retired.) Bodies are parsed by hand so that any malformed input is a coded 400
//! (`{code, message}`), never a panic or an unstructured rejection.

use crate::stdio::errln;
mod admin;
mod control_plane;
mod gateway;

pub use admin::{activate_release, active_release, get_release, redrive, register_release};
pub use control_plane::{complete, pending, result, status, submit};
pub use gateway::invoke;

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tpf_model::store::RegistryError;
use tpf_model::{Coordinator, CoordinatorError};

use super::{HostState, HostStore, Hosted};

/// An error response: status plus `{code, message}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: Value,
}

impl ApiError {
    pub(crate) fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body: json!({ "code": code, "message": message.into() }),
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BAD_REQUEST", message)
    }
}

impl From<CoordinatorError> for ApiError {
    fn from(e: CoordinatorError) -> Self {
        match &e {
            // The store's failure is the host's, not the caller's: a 503 to retry, with what
            // failed; the SDK's whole account goes to the host's log, not to the caller.
            CoordinatorError::Store(_) | CoordinatorError::Registry(RegistryError::Store(_)) => {
                errln!("tpf-sfn serve: {}", crate::error::chain(&e));
                Self::new(503, e.code(), e.to_string())
            }
            _ => Self::new(e.http_status(), e.code(), crate::error::chain(&e)),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

pub(crate) type ApiResult = Result<Json<Value>, ApiError>;

pub(crate) fn parse<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("invalid body: {e}")))
}

/// An empty body means "all defaults" (TPF's re-drive request).
pub(crate) fn parse_or_default<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        Ok(T::default())
    } else {
        parse(body)
    }
}

/// Runs `f` on the coordinator off the async workers, one request at a time; `503 HOST_BUSY`
/// when another request has held the coordinator for longer than the host's lock wait (a store
/// that stalls, each of whose calls is bounded too).
pub(crate) async fn run<S, F>(state: Arc<HostState<S>>, f: F) -> ApiResult
where
    S: HostStore,
    F: FnOnce(&mut Coordinator<S>, i64) -> Result<Value, ApiError> + Send + 'static,
{
    locked(state, move |hosted, now| f(&mut hosted.coordinator, now))
        .await?
        .map(Json)
}

/// Runs `f` on everything the host's lock guards, off the async workers, one request at a
/// time; `503 HOST_BUSY` after the host's lock wait.
pub(crate) async fn locked<S, R, F>(state: Arc<HostState<S>>, f: F) -> Result<R, ApiError>
where
    S: HostStore,
    R: Send + 'static,
    F: FnOnce(&mut Hosted<S>, i64) -> R + Send + 'static,
{
    let Some(mut host) = state.lock().await else {
        return Err(ApiError::new(
            503,
            "HOST_BUSY",
            "another request has held the coordinator too long (the store may be stalled); retry later",
        ));
    };
    let now = state.now_ms();
    tokio::task::spawn_blocking(move || f(&mut host, now))
        .await
        .map_err(|e| ApiError::new(500, "INTERNAL", format!("request handler failed: {e}")))
}
