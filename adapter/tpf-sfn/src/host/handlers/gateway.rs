//! TPF's action gateway over HTTP, answered as Lambda's Invoke answers a synchronous call: the
//! function's response is a 200 with its bytes; an exception out of the handler is a 200 with
//! Lambda's error document (`{errorMessage, errorType}`, the type being the Java class name) and
//! `X-Amz-Function-Error: Unhandled`. A payload that is not JSON never reaches the function: Lambda
//! refuses it (`400 InvalidRequestContentException`), and so does this route.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tpf_wire::gateway::invoke::FUNCTION_ERROR_HEADER;
use tpf_wire::gateway::response::FUNCTION_ERROR_UNHANDLED;

use super::{locked, ApiError};
use crate::host::{HostState, HostStore};

/// `POST /tpf/gateway/v1/invoke`.
pub async fn invoke<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let request = std::str::from_utf8(&body)
        .ok()
        .filter(|text| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok())
        .ok_or_else(|| {
            ApiError::new(
                400,
                "INVALID_REQUEST_CONTENT",
                "could not parse the request body into JSON (Lambda's InvalidRequestContentException)",
            )
        })?
        .to_owned();
    let answer = locked(state, move |hosted, now| {
        hosted.gateway(|gateway| gateway.serve(&request, now))
    })
    .await?;
    let (body, function_error) = match answer {
        Ok(response) => (response, false),
        Err(error) => (error.to_json(), true),
    };
    let mut response = (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    if function_error {
        let name = HeaderName::try_from(FUNCTION_ERROR_HEADER)
            .map_err(|e| ApiError::new(500, "INTERNAL", format!("function error header: {e}")))?;
        response
            .headers_mut()
            .insert(name, HeaderValue::from_static(FUNCTION_ERROR_UNHANDLED));
    }
    Ok(response)
}
