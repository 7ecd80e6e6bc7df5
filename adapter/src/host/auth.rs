//! Bearer-token authentication, compared in constant time as TPF's hosted resources do, as the
//! one layer in front of every route.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::handlers::ApiError;
use super::{HostState, HostStore};

/// The layer: a request without the host's token gets a coded 401 and reaches no handler.
pub async fn require_token<S: HostStore>(
    State(state): State<Arc<HostState<S>>>,
    request: Request,
    next: Next,
) -> Response {
    if authorized(request.headers(), state.token()) {
        next.run(request).await
    } else {
        ApiError::new(401, "UNAUTHORIZED", "missing or invalid bearer token").into_response()
    }
}

/// True when `Authorization: Bearer <token>` carries exactly `expected`.
pub fn authorized(headers: &HeaderMap, expected: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ") else {
        return false;
    };
    // `ct_eq` on slices of different lengths is false without comparing contents; the length
    // of the expected token is not a secret worth hiding.
    bool::from(given.trim().as_bytes().ct_eq(expected.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, value.parse().unwrap());
        h
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        assert!(authorized(&headers("Bearer s3cret"), "s3cret"));
        assert!(!authorized(&headers("Bearer s3cre"), "s3cret"));
        assert!(!authorized(&headers("Bearer s3cretX"), "s3cret"));
        assert!(!authorized(&headers("Basic s3cret"), "s3cret"));
        assert!(!authorized(&HeaderMap::new(), "s3cret"));
    }
}
