//! The one layer in front of every request, route or not: the bearer token first (nothing
//! about a request is answered to a caller without the token, not even its size), then the
//! request's size (target, headers, body), then the route. Every refusal is a coded JSON
//! error, and so are the router's own (no such route, wrong method).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::auth::authorized;
use super::handlers::ApiError;
use super::limits::{MAX_BODY_BYTES, MAX_HEADER_BYTES, MAX_URI_BYTES};
use super::{HostState, HostStore};

pub async fn guard<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    request: Request,
    next: Next,
) -> Response {
    if !authorized(request.headers(), state.token()) {
        return ApiError::new(401, "UNAUTHORIZED", "missing or invalid bearer token")
            .into_response();
    }
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |pq| pq.as_str().len());
    if target > MAX_URI_BYTES {
        return ApiError::new(
            414,
            "URI_TOO_LONG",
            format!("the request target is {target} bytes; at most {MAX_URI_BYTES} are accepted"),
        )
        .into_response();
    }
    let headers = header_bytes(request.headers());
    if headers > MAX_HEADER_BYTES {
        return ApiError::new(
            431,
            "HEADERS_TOO_LARGE",
            format!("the headers are {headers} bytes; at most {MAX_HEADER_BYTES} are accepted"),
        )
        .into_response();
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return too_large().into_response();
    }
    // Bodies are small: read the whole body here, under the limit, so a chunked body over it is
    // refused the same way and handlers never see an unread or oversize one.
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        state.body_read_timeout(),
        axum::body::to_bytes(body, MAX_BODY_BYTES),
    );
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        Err(_) => {
            return ApiError::new(
                408,
                "BODY_TIMEOUT",
                format!(
                    "the request body was not received within {} s",
                    state.body_read_timeout().as_secs_f64()
                ),
            )
            .into_response()
        }
        Ok(Err(e)) => {
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            return if over {
                too_large().into_response()
            } else {
                ApiError::bad_request(format!("cannot read the request body: {e}")).into_response()
            };
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn too_large() -> ApiError {
    ApiError::new(
        413,
        "PAYLOAD_TOO_LARGE",
        format!("the request body is over {MAX_BODY_BYTES} bytes, the most this host accepts"),
    )
}

/// The header section's size as sent: `name: value\r\n` per header.
fn header_bytes(headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}

pub async fn no_route() -> ApiError {
    ApiError::new(404, "NOT_FOUND", "no such route")
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        405,
        "METHOD_NOT_ALLOWED",
        "this route does not answer that method",
    )
}
