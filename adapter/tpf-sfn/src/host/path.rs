//! `TenantPath<T>`: a route's path parameters, with `{tenantId}` checked before any handler
//! runs. TPF refuses a blank tenant with a 400; every tenant-scoped route shares this check, and
//! the length limit every id shares. A parameter that does not decode (bad percent-encoding,
//! not UTF-8) is a coded 400 too, never the router's plain-text rejection.

use axum::extract::{FromRequestParts, Path, RawPathParams};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use super::handlers::ApiError;
use super::limits::check_key;

/// The path's parameters as `T` (a `String` or a tuple, in the route's order).
pub struct TenantPath<T>(pub T);

impl<S, T> FromRequestParts<S> for TenantPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let raw = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| invalid_path(&e.body_text()))?;
        for (key, value) in &raw {
            if key == "tenantId" && value.trim().is_empty() {
                return Err(ApiError::bad_request("tenantId must not be blank").into_response());
            }
            // TPF trims a submitted tenant but looks executions up by the tenant as given, so
            // ` t` would submit as `t` and then never be found: refused on every route alike.
            if key == "tenantId" && value.trim() != value {
                return Err(ApiError::bad_request(
                    "tenantId must not start or end with whitespace",
                )
                .into_response());
            }
            check_key(key, value).map_err(IntoResponse::into_response)?;
        }
        let Path(params) = Path::<T>::from_request_parts(parts, state)
            .await
            .map_err(|e| invalid_path(&e.body_text()))?;
        Ok(TenantPath(params))
    }
}

fn invalid_path(why: &str) -> Response {
    ApiError::bad_request(format!("invalid path: {why}")).into_response()
}
